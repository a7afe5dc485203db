"""Thread-safety contract (pocket.h, pocket_llm.h) from Python, on the golden programs.

A Module shared by threads serializes its calls: every result equals the single-threaded
one. A Runner runs one call at a time: a concurrent generation either gives the
single-threaded tokens or raises PocketError BUSY (or CANCELLED for a step-wise generation
that a later one replaced); stop() works from another thread and the runner stays usable.
A program that declares more memory than the module's limit is refused before allocating.
"""

import os
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import pocket
import pocket.llm
from pocket import PocketError

sys.path.insert(0, os.path.dirname(__file__))
from program_tools import pack, unpack  # noqa: E402

GOLDEN = Path(__file__).parent / "golden"
MLP = GOLDEN / "mlp.pocket"
LLM = GOLDEN / "tiny_llm.pocket"
LLM_TOKENIZER = GOLDEN / "tiny_llm.tokenizer.json"


def run_threads(n, body):
    """Runs body(i) on n threads at once; re-raises the first exception of any."""
    errors = []
    start = threading.Barrier(n)

    def target(i):
        try:
            start.wait()
            body(i)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def mlp_inputs(module, count):
    shape = module.method_info()["inputs"][0]["max_shape"]
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(count)]


@pytest.mark.parametrize("num_threads", [1, 2])
def test_module_shared_by_threads_gives_single_threaded_results(num_threads):
    m = pocket.load(MLP)
    m.set_num_threads(num_threads)
    inputs = mlp_inputs(m, 4)
    expected = [m.forward(x) for x in inputs]
    wrong = []

    def body(i):
        for k in range(200):
            x = inputs[(i + k) % len(inputs)]  # different inputs at once: a shared arena would mix them
            if not np.array_equal(m.forward(x), expected[(i + k) % len(inputs)]):
                wrong.append((i, k))

    run_threads(4, body)
    assert wrong == []


def test_set_num_threads_while_other_threads_execute():
    m = pocket.load(MLP)
    inputs = mlp_inputs(m, 3)
    expected = [m.forward(x) for x in inputs]
    wrong = []

    def body(i):
        for k in range(150):
            if i == 3:
                m.set_num_threads(1 + k % 2)  # waits for a running execute, applies after it
                m.reset_buffers()
            elif not np.array_equal(m.forward(inputs[i]), expected[i]):
                wrong.append((i, k))

    run_threads(4, body)
    assert wrong == []


def test_separate_modules_on_separate_threads():
    modules = [pocket.load(MLP) for _ in range(3)]
    inputs = mlp_inputs(modules[0], 3)
    expected = [modules[0].forward(x) for x in inputs]
    wrong = []

    def body(i):
        for _ in range(100):
            if not np.array_equal(modules[i].forward(inputs[i]), expected[i]):
                wrong.append(i)

    run_threads(3, body)
    assert wrong == []


def golden_llm():
    fields = dict(line.split(" ", 1) for line in (GOLDEN / "tiny_llm.greedy.txt").read_text().splitlines())
    return [int(t) for t in fields["prompt_ids"].split()], [int(t) for t in fields["greedy_ids"].split()]


def test_runner_shared_by_threads_gives_golden_tokens_or_busy():
    prompt, greedy = golden_llm()
    runner = pocket.llm.Runner(LLM, LLM_TOKENIZER, num_threads=1)
    outcomes = []

    def body(i):
        for _ in range(8):
            try:
                ids = runner.generate_ids(prompt, max_new_tokens=len(greedy))
                outcomes.append("ok" if ids == greedy else f"wrong {ids}")
            except PocketError as e:
                assert e.status in ("BUSY", "CANCELLED"), e
                outcomes.append(e.status)

    run_threads(3, body)
    assert not [o for o in outcomes if o.startswith("wrong")], outcomes
    assert "ok" in outcomes
    # Usable afterwards, with the single-threaded result.
    assert runner.generate_ids(prompt, max_new_tokens=len(greedy)) == greedy


def test_runner_text_generation_from_threads():
    runner = pocket.llm.Runner(LLM, LLM_TOKENIZER, num_threads=1)
    expected = "".join(runner.generate("Once upon a time", max_new_tokens=12))
    outcomes = []

    def body(i):
        for _ in range(6):
            try:
                outcomes.append("".join(runner.generate("Once upon a time", max_new_tokens=12)) == expected)
            except PocketError as e:
                assert e.status in ("BUSY", "CANCELLED"), e
                outcomes.append(e.status)

    run_threads(3, body)
    assert False not in outcomes and True in outcomes, outcomes


def test_superseded_generation_raises_cancelled():
    runner = pocket.llm.Runner(LLM, LLM_TOKENIZER)
    first = runner.generate("Once upon a time", max_new_tokens=8)
    second = runner.generate("Once upon a time", max_new_tokens=8)
    with pytest.raises(PocketError) as e:
        list(first)
    assert e.value.status == "CANCELLED" and "superseded" in e.value.message
    assert "".join(second)  # the later one is intact


def test_stop_from_another_thread_then_generate_again():
    prompt, greedy = golden_llm()
    runner = pocket.llm.Runner(LLM, LLM_TOKENIZER, num_threads=1)
    max_len = runner.max_seq_len - len(prompt)
    started = threading.Event()
    pieces = []

    def generate():
        for piece in runner.generate("Once upon a time", max_new_tokens=max_len):
            pieces.append(piece)
            started.set()
        started.set()

    worker = threading.Thread(target=generate)
    worker.start()
    assert started.wait(60)
    runner.stop()
    worker.join(60)
    assert not worker.is_alive()
    stats = runner.stats
    assert stats["stop_reason"] in ("cancelled", "eos"), stats
    if stats["stop_reason"] == "cancelled":
        assert stats["generated_tokens"] < max_len
    assert runner.generate_ids(prompt, max_new_tokens=len(greedy)) == greedy


def test_stats_and_stop_while_generating():
    runner = pocket.llm.Runner(LLM, LLM_TOKENIZER, num_threads=1)
    done = threading.Event()
    seen = []

    def reader(_):
        while not done.is_set():
            s = runner.stats  # a consistent snapshot, never BUSY
            seen.append(s["generated_tokens"])
            runner.position
            runner.stop() if len(seen) % 50 == 0 else None

    t = threading.Thread(target=reader, args=(0,))
    t.start()
    try:
        for _ in range(5):
            try:
                "".join(runner.generate("Once upon a time", max_new_tokens=40))
            except PocketError as e:
                assert e.status == "BUSY", e
    finally:
        done.set()
        t.join()
    assert seen and min(seen) >= 0


# ---- memory limit ------------------------------------------------------------------------

def mlp_with_arena_at(offset):
    """mlp.pocket with one intermediate tensor moved to byte `offset` of a grown arena 0."""
    program, segments = unpack(MLP.read_bytes())
    method = program.methods[0]
    moved = [v.kind for v in method.values if getattr(v.kind, "location", None) == 2 and v.kind.offset == 2048]
    assert len(moved) == 1
    moved[0].offset = offset
    method.arenas[0] = offset + moved[0].nbytes
    return pack(program, segments)


def test_program_declaring_more_than_physical_memory_is_refused(tmp_path):
    path = tmp_path / "huge_arena.pocket"
    path.write_bytes(mlp_with_arena_at(1 << 39))  # 512 GiB: consistent, but no phone or CI runner has it
    x = mlp_inputs(pocket.load(MLP), 1)[0]
    m = pocket.load(path)  # loading maps and checks; nothing big is allocated yet
    assert m.memory_limit < 1 << 39
    with pytest.raises(PocketError) as e:
        m.forward(x)
    assert e.value.status == "OUT_OF_MEMORY"
    assert "memory limit" in e.value.message and "arena 0" in e.value.message


def test_memory_limit_can_be_lowered_and_raised(tmp_path):
    path = tmp_path / "big_arena.pocket"
    path.write_bytes(mlp_with_arena_at(64 << 20))
    reference = pocket.load(MLP)
    x = mlp_inputs(reference, 1)[0]
    m = pocket.load(path)
    m.set_memory_limit(16 << 20)
    assert m.memory_limit == 16 << 20
    with pytest.raises(PocketError) as e:
        m.forward(x)
    assert e.value.status == "OUT_OF_MEMORY" and str(16 << 20) in e.value.message
    m.set_memory_limit(256 << 20)
    np.testing.assert_array_equal(m.forward(x), reference.forward(x))


def test_runner_memory_limit():
    prompt_ids, greedy_ids = golden_llm()
    runner = pocket.llm.Runner(LLM, LLM_TOKENIZER)
    runner.set_memory_limit(4096)  # less than the KV cache: refused before allocating
    with pytest.raises(PocketError) as e:
        runner.generate_ids(prompt_ids, max_new_tokens=len(greedy_ids))
    assert e.value.status == "OUT_OF_MEMORY" and "4096" in e.value.message
    runner.set_memory_limit(1 << 30)
    assert runner.generate_ids(prompt_ids, max_new_tokens=len(greedy_ids)) == greedy_ids
