"""The benchmark harness (benchmarks/) measures what it says: on a tiny model made here, the token
counts and thread settings it reports are the ones the engines used. Pocket always; llama.cpp and
ExecuTorch only when installed (benchmarks/requirements.txt)."""

import importlib.util
import json
import os
import struct
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)
import common  # noqa: E402
import engines  # noqa: E402

PROMPT = [1, 5, 9, 14, 3, 22, 7, 30, 11]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(eager model, .pocket path) of a 2-layer Llama with random weights."""
    from pocket.llm.models import LlmConfig, Transformer, export_llm

    c = LlmConfig(vocab_size=64, dim=64, n_layers=2, n_heads=4, n_kv_heads=2, hidden_dim=128, head_dim=16)
    torch.manual_seed(0)
    model = Transformer(c, 128).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0, 0.5)
    path = str(tmp_path_factory.mktemp("bench") / "tiny.pocket")
    export_llm(model).save(path)
    return model, path


def test_pocket_counts_and_threads_are_the_engines(tiny):
    model, path = tiny
    r = engines.greedy(engines.PocketLLM(path, 1), PROMPT, 40)
    assert r["prompt_tokens"] == len(PROMPT) and r["decode_tokens"] == 40
    assert r["threads"] == {"prefill": 1, "decode": 1}
    # one thread asked: no phase kept more than one core busy
    assert r["cores"]["decode"] < 1.3, r["cores"]
    # the tokens the loop fed are the ones eager greedy generation produces from the same prompt
    # (a wrong position or a skipped token changes them)
    assert r["output"] == model.generate_greedy(PROMPT, 16)
    assert engines.greedy(engines.PocketLLM(path, 2), PROMPT, 8)["threads"] == {"prefill": 2, "decode": 2}


def write_llama2c_tokenizer(path, vocab=64):
    """A llama2.c tokenizer.bin: max token length, then (score, length, bytes) per token."""
    tokens = [b"<unk>", b"<s>", b"</s>"] + [bytes([ord("a") + i % 26]) * (1 + i // 26) for i in range(vocab - 3)]
    with open(path, "wb") as f:
        f.write(struct.pack("<i", max(map(len, tokens))))
        for i, t in enumerate(tokens):
            f.write(struct.pack("<fi", -float(i), len(t)) + t)


def test_pocket_runner_counts_the_same_prompt(tiny, tmp_path):
    """Pocket's own runner, given the same ids, counts the prompt the harness reports."""
    from pocket.llm import Runner

    _, path = tiny
    write_llama2c_tokenizer(tmp_path / "tokenizer.bin")
    runner = Runner(path, tmp_path / "tokenizer.bin", num_threads=1)
    out = runner.generate_ids(PROMPT, 8)
    r = engines.greedy(engines.PocketLLM(path, 1), PROMPT, 8)
    assert runner.stats["prompt_tokens"] == r["prompt_tokens"]
    assert out == r["output"][:len(out)]


def test_child_process_reports_what_it_ran(tiny, tmp_path):
    """The path the tables take: a fresh process per cell, its JSON on the last stdout line."""
    _, path = tiny
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps(PROMPT))
    argv = [os.path.join(BENCH, "smollm2_bench.py"), "--child", "pocket", path, "2", str(ids), "12"]
    guard = common.LoadGuard(wait=False)
    results = common.run_cells([0, 1], lambda cell: argv, 1, guard)
    for runs in results.values():
        (r,) = runs
        assert (r["prompt_tokens"], r["decode_tokens"], r["threads"]) == (len(PROMPT), 12, {"prefill": 2, "decode": 2})
        assert r["rss_mb"] > 0 and r["load_ms"] > 0
    assert len(guard.samples) == 2 and "load seen before the 2 measurements" in guard.summary()


def test_idle_wait_gives_up_at_its_timeout():
    guard = common.LoadGuard(max_load=-1, timeout_s=0)  # never idle
    guard.before_run()
    assert guard.gave_up and "NOT idle" in guard.summary()


def test_idle_wait_is_a_budget_not_a_deadline():
    """The timeout is time spent waiting, in all: a run longer than it still waits (a deadline
    counted from the start stopped guarding a 40-minute run after its first 15)."""
    guard = common.LoadGuard(max_load=-1, timeout_s=3)  # never idle
    time.sleep(3.5)
    t0 = time.monotonic()
    guard.before_run()
    assert time.monotonic() - t0 >= 2.5
    t0 = time.monotonic()
    guard.before_run()  # the budget is spent: measures at once
    assert time.monotonic() - t0 < 2 and "2 of 2 started on a busy machine" in guard.summary()


def test_core_round_trip_is_measured_and_guarded():
    """The 2-thread rows follow how fast cores 0 and 1 pass a cache line back and forth (on a VM
    the host may move the virtual CPUs): the guard records it, and waits for it when asked."""
    from pocket._native_testing import core_round_trip_ns

    trip = common.core_round_trip_ns()
    assert trip is not None and 1 < trip < 100_000, trip
    with pytest.raises(ValueError, match="cores 0 and 0 are not two distinct cores"):
        core_round_trip_ns(0, 0)
    with pytest.raises(ValueError, match=f"cores 0 and {os.cpu_count()} are not two distinct"):
        core_round_trip_ns(0, os.cpu_count())
    guard = common.LoadGuard(max_load=100, max_busy=1.1, wait=False)
    guard.before_run()
    assert len(guard.round_trips) == 1 and "passed a cache line back and forth in" in guard.summary()
    # A limit no machine meets: the guard waits out its budget, then measures and says why.
    guard = common.LoadGuard(max_load=100, max_busy=1.1, timeout_s=0, max_round_trip_ns=0.001)
    guard.before_run()
    assert guard.gave_up and "core round trip <= 0 ns" in guard.summary()
    # Checked again after each measurement: run_cells measures once more when the cores moved.
    assert not guard.still_near() and "1 measurements taken again" in guard.summary()
    assert common.LoadGuard(wait=False).still_near()  # no limit: nothing to check


def test_cores_busy_counts_the_threads_that_ran():
    """The `cores` column: one busy Python thread reads about 1; Pocket at 2 threads on a model
    big enough to split reads more than 1 (its worker ran too)."""
    assert 0.7 < common.cores_busy(lambda: sum(range(1000)), 0.3) < 1.3
    if (os.cpu_count() or 1) >= 2:
        import pocket

        net = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.ReLU(),
                                  torch.nn.Conv2d(64, 64, 3, padding=1)).eval()
        x = torch.randn(1, 3, 64, 64)
        m = pocket.Module.from_bytes(pocket.export(net, (x,)).data)
        m.set_num_threads(2)
        assert common.cores_busy(lambda: m.forward(x.numpy()), 0.3) > 1.3


def test_machine_line_and_results_name():
    line = common.machine_line([1, 2])
    assert common.cpu_model() in line and "threads 1, 2" in line and f"{os.cpu_count()} logical cores" in line
    name = os.path.basename(common.results_path("-smollm2"))
    assert name.endswith(f"-{common.cpu_kind()}-smollm2.md") and common.cpu_kind()


def test_memory_bandwidth_read_and_copy():
    if subprocess.run(["sh", "-c", "command -v cc"], capture_output=True).returncode:
        pytest.skip("no C compiler")
    bw = common.memory_bandwidth([1], mib=32)
    assert bw[1]["read_gbs"] > 0 and bw[1]["copy_gbs"] > 0


def write_llama_gguf(path, dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab=64):
    """A float llama GGUF with a minimal sentencepiece-style vocabulary (llama.cpp needs one)."""
    import gguf

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(n_layers)
    w.add_embedding_length(dim)
    w.add_feed_forward_length(2 * dim)
    w.add_head_count(n_heads)
    w.add_head_count_kv(n_kv_heads)
    w.add_context_length(128)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(dim // n_heads)
    w.add_tokenizer_model("llama")
    w.add_token_list(["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(vocab - 3)])
    w.add_token_scores([0.0] * vocab)
    w.add_token_types([2, 3, 3] + [6] * (vocab - 3))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    rng = np.random.default_rng(0)
    kv = dim // n_heads * n_kv_heads

    def add(name, shape, scale=0.5):
        w.add_tensor(name, (rng.standard_normal(shape) * scale).astype(np.float32))

    add("token_embd.weight", (vocab, dim))
    add("output.weight", (vocab, dim))
    add("output_norm.weight", (dim,), 1.0)
    for i in range(n_layers):
        for part, shape in (("attn_norm", (dim,)), ("ffn_norm", (dim,)), ("attn_q", (dim, dim)), ("attn_k", (kv, dim)),
                            ("attn_v", (kv, dim)), ("attn_output", (dim, dim)), ("ffn_gate", (2 * dim, dim)),
                            ("ffn_up", (2 * dim, dim)), ("ffn_down", (dim, 2 * dim))):
            add(f"blk.{i}.{part}.weight", shape)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_llama_cpp_threads_apply_to_both_phases_and_counts_match(tmp_path):
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (benchmarks/requirements.txt)")
    path = tmp_path / "tiny.gguf"
    write_llama_gguf(path)
    for threads in (1, 2):
        e = engines.LlamaCpp(str(path), threads, n_ctx=128)
        r = engines.greedy(e, PROMPT, 20)
        # llama.cpp's own counts: n_threads_batch (prompts) and n_threads (single tokens), and
        # the tokens in its context
        assert r["threads"] == {"prefill": threads, "decode": threads}
        assert r["engine_tokens"] == len(PROMPT) + 20 == r["prompt_tokens"] + r["decode_tokens"]
        if threads == 1:
            assert r["cores"]["decode"] < 1.3, r["cores"]


def test_executorch_threadpool_is_sized_before_loading(tmp_path):
    if importlib.util.find_spec("executorch") is None:
        pytest.skip("executorch is not installed (benchmarks/requirements.txt)")
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    class Lm(torch.nn.Module):  # forward(tokens, input_pos) -> logits of the last token
        def __init__(self):
            super().__init__()
            self.emb, self.out = torch.nn.Embedding(64, 32), torch.nn.Linear(32, 64)

        def forward(self, tokens, input_pos):
            return self.out(self.emb(tokens)[:, -1] + input_pos.float()[:, None])

    seq = torch.export.Dim("seq", min=1, max=32)
    ep = torch.export.export(Lm().eval(), (torch.zeros(1, 4, dtype=torch.long), torch.tensor([0])),
                             dynamic_shapes=({1: seq}, None))
    pte = tmp_path / "lm.pte"
    pte.write_bytes(to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch().buffer)
    for threads in (1, 2):
        r = engines.greedy(engines.ExecuTorchLLM(str(pte), threads), PROMPT, 10)
        assert r["threads"] == {"prefill": threads, "decode": threads}
        assert (r["prompt_tokens"], r["decode_tokens"]) == (len(PROMPT), 10)


def test_warm_up_lasts_its_minimum_calls_and_time():
    """Every engine's timed part starts after >= `runs` calls and >= `seconds` of them."""
    calls = []
    t0 = time.perf_counter()
    n = common.warm_up(lambda: calls.append(1), runs=3, seconds=0.05)
    elapsed = time.perf_counter() - t0
    assert n == len(calls) > 3 and elapsed >= 0.05  # a fast call: time decides
    slow = []
    assert common.warm_up(lambda: (slow.append(1), time.sleep(0.03)), runs=2, seconds=0.01) == 2 == len(slow)


@pytest.mark.skipif("avx512f" not in common.isa_features(), reason="--isa avx2 caps an AVX-512 CPU")
def test_isa_cap_reaches_the_engines_processes(monkeypatch):
    """--isa avx2: the children that run the engines see AVX2 kernels in Pocket and in ATen,
    and the machine line says the run was capped."""
    import argparse

    for key in common.ISA_CAPS["avx2"]:
        # setenv records the value to restore after the test, absence included (delenv of an
        # absent key records nothing, and the cap would leak into the later tests' processes)
        monkeypatch.setenv(key, "")
        monkeypatch.delenv(key)
    assert common.apply_isa(argparse.Namespace(isa="avx2")) == "-avx2"
    probe = ("import json, torch; from pocket import _native; "
             "print(json.dumps([_native.kernel_set(), torch.backends.cpu.get_cpu_capability()]))")
    assert common.run_child(["-c", probe]) == ["avx2", "AVX2"]
    assert "capped at avx2" in common.machine_line([1])
    assert common.apply_isa(argparse.Namespace(isa=None)) == ""


CAP_ENV_AT_IMPORT = {key: os.environ.get(key) for key in common.ISA_CAPS["avx2"]}


def test_isa_cap_does_not_outlive_its_test():
    """The test above restores the environment: later tests' processes run as before it."""
    assert {key: os.environ.get(key) for key in common.ISA_CAPS["avx2"]} == CAP_ENV_AT_IMPORT


def test_layer_profile_lists_each_engines_layers(tmp_path):
    """benchmarks/layer_profile.py: Pocket's instructions with their model layers, and (when
    ExecuTorch is installed) the XNNPACK delegate's own ops from an ETDump, in order."""
    import layer_profile

    import pocket

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(16, 8, 3, padding=1)).eval()
    x = torch.randn(1, 3, 12, 12)
    path = str(tmp_path / "cnn.pocket")
    pocket.export(model, (x,)).save(path)
    ours = layer_profile.pocket_profile(path, [x.numpy()], 1, 5)
    convs = [name for name, _ in ours if name.startswith("conv2d")]  # conv2d_packed or _winograd
    assert [name.split()[1] for name in convs] == ["0", "2"], ours
    assert all(us > 0 for _, us in ours)
    if importlib.util.find_spec("executorch") is None:
        return
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    pte = tmp_path / "cnn.pte"
    ep = torch.export.export(model, (x,))
    pte.write_bytes(to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch().buffer)
    theirs = layer_profile.executorch_profile(str(pte), (x,), 1, 5, str(tmp_path))
    names = [name for name, _ in theirs]
    assert sum(name.startswith("Convolution") for name in names) == 2, names
    assert not set(names) & layer_profile.NOT_OPS
