"""The fp16 KV cache (`pocket llm export --kv-cache fp16`): caches stored as float16 (half
the memory), attention in float32. The kernels against the eager references with float16
caches; a tiny model's greedy generation through the runtime equals the fp32-cache program's
token for token and the eager fp16-cache model's; logits stay within a stated tolerance of
the fp32 cache's."""

import numpy as np
import pytest
import torch

import pocket
from native_testing import run_kernel as native_run_kernel
from pocket import PocketError
from pocket.describe import describe
from pocket.llm.models import export_llm
from pocket.llm.models.config import LlmConfig
from pocket.llm.models.model import Transformer

MAX_SEQ = 64
# fp16 keys/values carry 11 significant bits: relative rounding 2^-11 ~ 4.9e-4 per element.
# Through the attention of 2 layers every logit stays within 0.3% of the largest logit
# magnitude of the fp32-cache program (measured: about 0.1%); greedy choices stay the same.
LOGIT_TOL = 3e-3


def run_kernel(name, args, like, table="portable", threads=1):
    out = native_run_kernel(name, [a.numpy() if isinstance(a, torch.Tensor) else a for a in args],
                            [np.zeros(like.shape, dtype=like.numpy().dtype)], table, threads)[0]
    return torch.from_numpy(np.array(out))


@pytest.mark.parametrize("table", ["portable", "best"])
@pytest.mark.parametrize("hq,hkv,t,start,d", [(1, 1, 1, 0, 8), (4, 2, 1, 20, 64), (3, 1, 5, 7, 13), (6, 3, 17, 0, 3)])
def test_sdpa_reads_float16_caches(table, hq, hkv, t, start, d):
    s = start + t + 3
    q = torch.randn(1, hq, t, d)
    k, v = torch.randn(1, hkv, s, d).half(), torch.randn(1, hkv, s, d).half()
    pos = torch.tensor([start])
    want = torch.ops.pocket.sdpa(q, k, v, pos, d ** -0.5)
    assert torch.equal(want, torch.ops.pocket.sdpa(q, k.float(), v.float(), pos, d ** -0.5))
    for threads in (1, 2):
        got = run_kernel("pocket::sdpa", [q, k, v, pos, d ** -0.5], want, table, threads)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("start,t", [(0, 1), (5, 3), (9, 1)])
def test_update_cache_rounds_float32_into_a_float16_cache(start, t):
    cache = torch.randn(1, 2, 10, 7).half()
    value = torch.randn(1, 2, t, 7) * 100
    value[0, 0, 0, 0] = 1 + 2 ** -11  # a tie: rounds to even (1.0)
    want = torch.ops.pocket.update_cache(cache, value, torch.tensor([start]))
    assert want.dtype == torch.float16 and want[0, 0, start, 0] == 1.0
    got = run_kernel("pocket::update_cache", [cache, value, torch.tensor([start])], cache)
    assert torch.equal(got.view(torch.int16), want.view(torch.int16))


def test_update_cache_refuses_other_dtype_pairs():
    with pytest.raises(PocketError, match=r"update_cache: expected 4-d cache and value of one dtype \(or a float16 "
                                          r"cache and float32 value\), got float32 cache, float16 value"):
        run_kernel("pocket::update_cache", [torch.zeros(1, 1, 4, 2), torch.zeros(1, 1, 1, 2).half(),
                                            torch.tensor([0])], torch.zeros(1, 1, 4, 2))


def test_sdpa_refuses_mixed_cache_dtypes():
    q, k = torch.randn(1, 1, 1, 4), torch.randn(1, 1, 3, 4)
    with pytest.raises(PocketError, match=r"sdpa: v_cache has dtype float16, expected float32"):
        run_kernel("pocket::sdpa", [q, k, k.half(), torch.tensor([0]), 0.5], q)


def tiny_model(seed=0):
    config = LlmConfig(vocab_size=96, dim=64, n_layers=2, n_heads=4, n_kv_heads=2, hidden_dim=128, head_dim=16,
                       bos_id=1, eos_ids=(2,))
    torch.manual_seed(seed)
    model = Transformer(config, MAX_SEQ).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0, 0.25)
    return model


def greedy(module, prompt, n):
    module.reset_buffers()
    logits = module.run("prefill", torch.tensor([prompt]), torch.tensor([0]))
    out, all_logits, pos = [], [logits], len(prompt)
    for _ in range(n):
        out.append(int(logits.argmax()))
        logits = module.run("decode", torch.tensor([[out[-1]]]), torch.tensor([pos]))
        all_logits.append(logits)
        pos += 1
    return out, torch.cat(all_logits)


@pytest.fixture(scope="module")
def programs():
    model = tiny_model()
    fp32 = pocket.Module.from_bytes(export_llm(model, kv_cache="fp32").data)
    fp16 = pocket.Module.from_bytes(export_llm(model, kv_cache="fp16").data)
    return model, fp32, fp16


@pytest.mark.parametrize("prompt_len", [1, 6, 19])
def test_fp16_cache_generates_what_the_fp32_cache_generates(programs, prompt_len):
    model, fp32, fp16 = programs
    prompt = torch.randint(3, 96, (prompt_len,), generator=torch.Generator().manual_seed(prompt_len)).tolist()
    want, want_logits = greedy(fp32, prompt, 24)
    got, got_logits = greedy(fp16, prompt, 24)
    assert got == want
    assert len(set(want)) >= 3, "degenerate model output makes this test weak"
    scale = float(want_logits.abs().max())
    torch.testing.assert_close(got_logits, want_logits, rtol=0, atol=LOGIT_TOL * scale)
    model.set_kv_cache_dtype(torch.float16)  # the eager reference of the fp16 program
    assert model.generate_greedy(prompt, 24) == got


def test_fp16_cache_halves_the_buffers_and_is_recorded(programs, tmp_path):
    _, fp32, fp16 = programs
    assert fp16.metadata["kv_cache"] == "fp16" and fp32.metadata["kv_cache"] == "fp32"
    sizes = {}
    for kind in ("fp32", "fp16"):
        path = tmp_path / f"{kind}.pocket"
        export_llm(tiny_model(), kv_cache=kind).save(path)
        sizes[kind] = describe(str(path))["mutable_buffers"]
    per_cache = 2 * MAX_SEQ * 16 * 4  # kv heads * positions * head dim * float32 bytes
    assert len(sizes["fp32"]) == 4 and set(sizes["fp32"].values()) == {per_cache}
    assert {k: 2 * v for k, v in sizes["fp16"].items()} == sizes["fp32"]


def test_unknown_kv_cache_type_is_named():
    with pytest.raises(ValueError, match=r"unknown KV cache type 'int8'; choose fp32 or fp16"):
        export_llm(tiny_model(), kv_cache="int8")
