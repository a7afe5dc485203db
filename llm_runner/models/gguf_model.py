"""Building a Pocket model from a GGUF file (llama, qwen2, qwen3 architectures).

Quantized weights are kept as they are (see gguf_blocks.py); F32/F16/BF16 tensors load as
float32. llama.cpp stores the Q and K projections of the llama architecture with rows
permuted for its rotary embedding; they are permuted back (rows only, so quantized rows move
whole and stay exact).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import torch
from torch import nn

from pocket.exporter.quant.formats import WeightFormat
from pocket.exporter.quant.modules import QuantizedEmbedding, QuantizedLinear
from pocket.exporter.quant.ops import ACT_FP32, ACT_INT8_BLOCK32, ACT_INT8_TOKEN
from pocket.llm.models.config import LlmConfig
from pocket.llm.models.gguf_blocks import DECODERS
from pocket.llm.models.gguf_file import GgufError, GgufReader
from pocket.llm.models.model import Transformer

ARCHITECTURES = {"llama": ("llama", False, False), "qwen2": ("qwen2", True, False), "qwen3": ("qwen3", False, True)}
FLOAT_TYPES = ("F32", "F16", "BF16")

LAYER_NAMES = {
    "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
    "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm", "attn_k_norm": "self_attn.k_norm",
    "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
}


def open_gguf(path: str | os.PathLike) -> GgufReader:
    """The file's metadata and tensors (gguf_file.GgufReader); GgufError names what is wrong."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such GGUF file: {path}")
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise GgufError(f"{path}: not a GGUF file (wrong magic)")
    return GgufReader(path)


def field(reader, key, default=None):
    f = reader.fields.get(key)
    if f is None:
        return default
    try:
        return f.contents()
    except UnicodeDecodeError as e:
        raise GgufError(f"{key}: a string is not valid UTF-8 ({e})") from e


def _int(reader, key, default=None, low=1, high=1 << 24):
    """An integer metadata value in [low, high]; GgufError naming the key otherwise."""
    value = field(reader, key, default)
    if value is None:
        raise GgufError(f"{key} is missing")
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise GgufError(f"{key} = {value!r} is not an integer in [{low}, {high}]")
    return int(value)


def _float(reader, key, default):
    value = field(reader, key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not np.isfinite(value) or value <= 0:
        raise GgufError(f"{key} = {value!r} is not a positive number")
    return float(value)


def config_from_gguf(reader) -> LlmConfig:
    arch = field(reader, "general.architecture")
    if not isinstance(arch, str) or arch not in ARCHITECTURES:
        raise GgufError(f"unsupported architecture {arch!r}; Pocket imports {sorted(ARCHITECTURES)}")
    family, bias, qk_norm = ARCHITECTURES[arch]
    get = lambda key, default=None: field(reader, f"{arch}.{key}", default)  # noqa: E731
    n_heads = _int(reader, f"{arch}.attention.head_count", high=4096)
    dim = _int(reader, f"{arch}.embedding_length")
    tokens = field(reader, "tokenizer.ggml.tokens")
    vocab = _int(reader, f"{arch}.vocab_size", len(tokens) if isinstance(tokens, list) else None, high=1 << 22)
    n_kv_heads = _int(reader, f"{arch}.attention.head_count_kv", n_heads, high=n_heads)
    head_dim = _int(reader, f"{arch}.attention.key_length", max(dim // n_heads, 1), high=1 << 16)
    if n_heads % n_kv_heads or head_dim % 2:
        raise GgufError(f"{arch}.attention.head_count {n_heads}, head_count_kv {n_kv_heads} and key_length "
                        f"{head_dim} do not fit (heads must split evenly over KV heads, key_length must be even)")
    if get("rope.scaling.type") not in (None, "none", "linear") or get("rope.scaling.factor", 1.0) not in (None, 1.0):
        raise GgufError(f"unsupported rope scaling {get('rope.scaling.type')!r}")
    names = {t.name for t in reader.tensors}
    bos = field(reader, "tokenizer.ggml.bos_token_id")
    eos = field(reader, "tokenizer.ggml.eos_token_id")
    for key, token in (("bos", bos), ("eos", eos)):
        if token is not None and (not isinstance(token, (int, np.integer)) or not 0 <= token < vocab):
            raise GgufError(f"tokenizer.ggml.{key}_token_id = {token!r} is not a token id (vocabulary of {vocab})")
    return LlmConfig(
        vocab_size=vocab, dim=dim, n_layers=_int(reader, f"{arch}.block_count", high=4096), n_heads=n_heads,
        n_kv_heads=n_kv_heads, hidden_dim=_int(reader, f"{arch}.feed_forward_length"), head_dim=head_dim,
        norm_eps=_float(reader, f"{arch}.attention.layer_norm_rms_epsilon", 1e-5),
        rope_theta=_float(reader, f"{arch}.rope.freq_base", 10000.0),
        tie_embeddings="output.weight" not in names, attention_bias=bias, qk_norm=qk_norm, family=family,
        max_position_embeddings=_int(reader, f"{arch}.context_length", 2048, high=1 << 24),
        bos_id=None if bos is None else int(bos), eos_ids=() if eos is None else (int(eos),))


def check_tensors_fit(reader, config: LlmConfig) -> None:
    """The model the metadata describes must be the one whose tensors the file holds: checked before
    the model is built, so a header that declares a huge model fails here, not in an allocation."""
    shapes = {t.name: [int(s) for s in reversed(t.shape)] for t in reader.tensors}
    embd = shapes.get("token_embd.weight")
    if embd != [config.vocab_size, config.dim]:
        raise GgufError(f"token_embd.weight has shape {embd}, the metadata implies [{config.vocab_size}, {config.dim}] "
                        f"(vocab_size, embedding_length)")
    layers = {int(n.split(".")[1]) for n in shapes if n.startswith("blk.") and n.split(".")[1].isdigit()}
    if layers != set(range(config.n_layers)):
        raise GgufError(f"block_count is {config.n_layers} but the file has tensors for {len(layers)} blocks "
                        f"({sorted(layers)[:8]}...)")
    gate = shapes.get("blk.0.ffn_gate.weight")
    if gate is not None and gate != [config.hidden_dim, config.dim]:
        raise GgufError(f"blk.0.ffn_gate.weight has shape {gate}, the metadata implies [{config.hidden_dim}, "
                        f"{config.dim}] (feed_forward_length, embedding_length)")


def _unpermute(rows: np.ndarray, n_heads: int) -> np.ndarray:
    """Inverse of llama.cpp's Q/K row permutation (per head: interleaved pairs -> two halves)."""
    shape = rows.shape
    return rows.reshape(n_heads, shape[0] // n_heads // 2, 2, *shape[1:]).swapaxes(1, 2).reshape(shape)


class GgufTensor:
    """One weight as Pocket stores it: float32, or packed integers with scales/mins."""

    def __init__(self, t, n_heads_for_rows: int | None):
        self.name, self.type = t.name, t.tensor_type.name
        shape = [int(s) for s in reversed(t.shape)]  # GGUF lists the fastest dim first
        data = np.asarray(t.data)
        if self.type in FLOAT_TYPES:
            w = data.astype(np.float32) if self.type != "BF16" else (data.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
            self.weight = w.reshape(shape)
            self.fmt = None
        elif self.type in DECODERS:
            if len(shape) != 2:
                raise GgufError(f"tensor {t.name}: quantized tensors must be 2-d, got shape {shape}")
            n, k = shape
            blocks = data.reshape(-1, data.shape[-1]) if data.ndim > 1 else data
            from gguf import GGML_QUANT_SIZES

            block_elems, block_bytes = GGML_QUANT_SIZES[t.tensor_type]
            if k % block_elems or data.size != n * k // block_elems * block_bytes:
                raise GgufError(f"tensor {t.name}: {data.size} bytes do not hold a {self.type} tensor of shape {shape}")
            q, scales, mins, fmt = DECODERS[self.type](data.reshape(-1, block_bytes))
            self.q = q.reshape(n, k)
            self.scales = scales.reshape(n, -1)  # float32, or float16 as the file has them (gguf_blocks.py)
            self.mins = None if mins is None else mins.reshape(n, -1)
            self.fmt = fmt
        else:
            from gguf.quants import dequantize

            warnings.warn(f"tensor {t.name}: {self.type} has no lossless Pocket format; de-quantized to float32")
            try:
                self.weight = dequantize(data, t.tensor_type).astype(np.float32).reshape(shape)
            except NotImplementedError as e:
                raise GgufError(f"tensor {t.name}: unsupported tensor type {self.type}") from e
            self.fmt = None
        if n_heads_for_rows:
            self._apply_rows(lambda rows: _unpermute(rows, n_heads_for_rows))

    def _apply_rows(self, fn):
        if self.fmt is None:
            self.weight = fn(self.weight)
        else:
            self.q, self.scales = fn(self.q), fn(self.scales)
            self.mins = None if self.mins is None else fn(self.mins)

    @property
    def shape(self):
        return tuple(self.weight.shape) if self.fmt is None else tuple(self.q.shape)

    def float_weight(self) -> torch.Tensor:
        if self.fmt is None:
            return torch.from_numpy(np.ascontiguousarray(self.weight))
        w = torch.from_numpy(self.q).float()  # a new tensor: scaled in place (the same float32 math)
        n, k = w.shape
        groups = w.view(n, k // self.fmt.group_size, self.fmt.group_size)
        groups.mul_(torch.from_numpy(self.scales)[..., None])
        if self.mins is not None:
            groups.add_(torch.from_numpy(self.mins)[..., None])
        return w

    def packed(self):
        """(qweight, scales, mins) in Pocket's layout (formats.py), packed with numpy on bytes."""
        if self.fmt.bits == 8:
            q = self.q.astype(np.int8 if self.fmt.symmetric else np.uint8)
        else:
            u = (self.q + 8 if self.fmt.symmetric else self.q).astype(np.uint8)
            q = u[:, 0::2] | (u[:, 1::2] << 4)
        return (torch.from_numpy(np.ascontiguousarray(q)), torch.from_numpy(np.ascontiguousarray(self.scales)),
                None if self.mins is None else torch.from_numpy(np.ascontiguousarray(self.mins)))


def load_gguf_model(path_or_reader, max_seq_len: int, activations: str = "fp32", requantize: bool = False):
    """(Transformer, config, reader). Quantized GGUF weights stay quantized unless `requantize`
    (then every weight is float32, to be quantized again by the exporter).

    activations: "fp32" (exact to the de-quantized model) or "int8" (int8 dynamic activations:
    per block of 32 where the group size allows, else per token)."""
    reader = open_gguf(path_or_reader) if isinstance(path_or_reader, (str, os.PathLike)) else path_or_reader
    config = config_from_gguf(reader)
    check_tensors_fit(reader, config)
    model = Transformer(config, max_seq_len, init_weights=False).eval()
    expected = model.state_dict()
    permute = {"attn_q": config.n_heads, "attn_k": config.n_kv_heads} if config.family == "llama" else {}
    seen, embd = set(), None
    for t in reader.tensors:
        target = _target_name(t.name)
        if target is None:
            if t.name != "rope_freqs.weight":
                warnings.warn(f"ignoring GGUF tensor {t.name}")
            continue
        part = t.name.split(".")[-2] if t.name.startswith("blk.") else None
        shape = tuple(int(s) for s in reversed(t.shape))
        want = tuple(expected[target].shape) if target in expected else None
        if want is None or shape != want:
            raise GgufError(f"tensor {t.name} has shape {list(shape)}, the metadata implies {list(want or [])}")
        w = GgufTensor(t, permute.get(part) if t.name.endswith(".weight") else None)
        _install(model, target, w, activations, requantize)
        seen.add(target)
        if t.name == "token_embd.weight":
            embd = w
    if config.tie_embeddings:
        if embd.fmt is not None and not requantize:  # float: lm_head.weight is embed_tokens.weight, set above
            embd.scales = embd.scales.copy()  # the Linear's own tensors, as a second decode would give
            embd.mins = None if embd.mins is None else embd.mins.copy()
            _install(model, "lm_head.weight", embd, activations, requantize)
        seen.add("lm_head.weight")
    missing = sorted(k for k in expected if k not in seen and not k.endswith(("_cache", "rope_cos", "rope_sin")))
    if missing:
        raise GgufError(f"GGUF has no tensors for {missing[:5]}")
    return model, config, reader


def _target_name(name: str) -> str | None:
    top = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
           "output.weight": "lm_head.weight"}
    if name in top:
        return top[name]
    parts = name.split(".")
    if parts[0] == "blk" and len(parts) == 4 and parts[2] in LAYER_NAMES:
        return f"model.layers.{parts[1]}.{LAYER_NAMES[parts[2]]}.{parts[3]}"
    return None


def _install(model: Transformer, target: str, w: GgufTensor, activations: str, requantize: bool) -> None:
    module_name, _, param = target.rpartition(".")
    parent_name, _, child_name = module_name.rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    module = getattr(parent, child_name)
    if w.fmt is None or requantize or param != "weight":
        with torch.no_grad():
            if w.fmt is None:  # may be a view of the file's (read-only) memory: copied
                getattr(module, param).copy_(w.float_weight())
            else:  # de-quantized into a new tensor: taken as it is
                getattr(module, param).data = w.float_weight()
        return
    qweight, scales, mins = w.packed()
    if isinstance(module, nn.Embedding):
        setattr(parent, child_name, QuantizedEmbedding.from_packed(qweight, scales, mins, w.fmt))
    elif isinstance(module, nn.Linear):
        setattr(parent, child_name, QuantizedLinear.from_packed(qweight, scales, mins, module.bias, w.fmt,
                                                                 _act_mode(activations, w.fmt)))
    else:
        raise GgufError(f"{target}: a quantized tensor where Pocket expects a {type(module).__name__}")


def _act_mode(activations: str, fmt: WeightFormat) -> int:
    if activations == "fp32":
        return ACT_FP32
    if activations != "int8":
        raise ValueError(f"activations must be 'fp32' or 'int8', got {activations!r}")
    return ACT_INT8_BLOCK32 if fmt.group_size % 32 == 0 else ACT_INT8_TOKEN
