"""Pocket's own ops (`pocket::...`), defined with torch.library. Their eager implementations
are the reference semantics the C++ kernels are tested against.

Quantized ops are in quant/ops.py. LLM ops:
    update_cache(cache, value, start_pos) -> cache with value written at start_pos
    sdpa(q, k_cache, v_cache, start_pos, scale) -> causal attention over the cache
    rms_norm(x, weight, eps) -> x / sqrt(mean(x², last dim) + eps) * weight
    rope(x, cos, sin) -> rotary position embedding, half-rotation (Hugging Face) layout
    swiglu(gate, up) -> silu(gate) * up
The last three are fusions of the Llama-family model code (pocket.llm.models.model): one
kernel each instead of the pow/mean/rsqrt/mul, slice/neg/cat/mul and sigmoid/mul chains
core ATen decomposes them into. Their eager implementations are that unfused code.
CNN op:
    convolution_clamp(x, w, b, stride, padding, dilation, groups, out_min, out_max)
        -> clamp(convolution(x, w, b, ...), out_min, out_max): a convolution and the ReLU,
        ReLU6 or clamp after it, fused by passes/fuse_activation.py
"""

from typing import Optional

import torch
from torch import Tensor

from pocket.exporter.quant import ops as quant_ops  # noqa: F401  (pocket::linear_q, embedding_q, conv2d_q8)


@torch.library.custom_op("pocket::update_cache", mutates_args=())
def update_cache(cache: Tensor, value: Tensor, start_pos: Tensor) -> Tensor:
    """Writes value [B, H, T, D] into cache [B, H, S, D] at positions start_pos .. start_pos+T-1,
    converted to the cache's dtype (a float16 cache takes float32 values, rounded to nearest).

    start_pos is an int64 tensor of one element. In an exported program whose cache is a
    mutable buffer this runs in place (see passes/reinplace.py); eagerly it returns a copy.
    """
    start = int(start_pos.reshape(-1)[0])
    if start < 0 or start + value.shape[2] > cache.shape[2]:
        raise IndexError(f"update_cache: positions {start}..{start + value.shape[2] - 1} outside a cache of "
                         f"{cache.shape[2]}")
    out = cache.clone()
    out[:, :, start:start + value.shape[2]] = value
    return out


@update_cache.register_fake
def _(cache, value, start_pos):
    return torch.empty_like(cache)


@torch.library.custom_op("pocket::sdpa", mutates_args=())
def sdpa(q: Tensor, k_cache: Tensor, v_cache: Tensor, start_pos: Tensor, scale: float) -> Tensor:
    """Causal attention of q [B, Hq, T, D] (positions start_pos ..) over the first
    start_pos + T positions of the caches [B, Hkv, S, D]; Hq is a multiple of Hkv (grouped-query
    attention); the caches may be float16 (read as float32). Returns [B, Hq, T, D]."""
    start = int(start_pos.reshape(-1)[0])
    t = q.shape[2]
    length = start + t
    group = q.shape[1] // k_cache.shape[1]
    k = k_cache[:, :, :length].repeat_interleave(group, dim=1).float()
    v = v_cache[:, :, :length].repeat_interleave(group, dim=1).float()
    scores = (q.float() @ k.transpose(-1, -2)) * scale
    query_pos = start + torch.arange(t).unsqueeze(1)
    mask = torch.arange(length).unsqueeze(0) > query_pos
    scores = scores.masked_fill(mask, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v).to(q.dtype)


@sdpa.register_fake
def _(q, k_cache, v_cache, start_pos, scale):
    return torch.empty_like(q)


def _check_float32(op: str, **tensors: Tensor) -> None:
    for name, t in tensors.items():
        if t.dtype != torch.float32:
            raise TypeError(f"{op}: {name} must be float32, got {t.dtype}")


@torch.library.custom_op("pocket::rms_norm", mutates_args=())
def rms_norm(x: Tensor, weight: Tensor, eps: float) -> Tensor:
    """RMSNorm over the last dim of x [..., D] with weight [D], float32:
    x * rsqrt(mean(x², -1) + eps) * weight (in that order, as the model code computes it)."""
    _check_rms_norm(x, weight)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def _check_rms_norm(x: Tensor, weight: Tensor) -> None:
    _check_float32("rms_norm", x=x, weight=weight)
    if x.dim() < 1 or weight.dim() != 1 or weight.shape[0] != x.shape[-1]:
        raise ValueError(f"rms_norm: weight {list(weight.shape)} does not match the last dim of x {list(x.shape)}")


@rms_norm.register_fake
def _(x, weight, eps):
    _check_rms_norm(x, weight)
    return torch.empty_like(x)


@torch.library.custom_op("pocket::rope", mutates_args=())
def rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotary embedding of x [B, T, H, D] with cos, sin [T, D] (the rows of positions
    start .. start+T-1), float32, in the half-rotation layout of Hugging Face's rotate_half:
    with h = D / 2, out[..., i] = x[i]·cos[i] - x[i+h]·sin[i] and
    out[..., i+h] = x[i+h]·cos[i+h] + x[i]·sin[i+h] for i < h."""
    _check_rope(x, cos, sin)
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos[:, None, :] + rotated * sin[:, None, :]


def _check_rope(x: Tensor, cos: Tensor, sin: Tensor) -> None:
    _check_float32("rope", x=x, cos=cos, sin=sin)
    if x.dim() != 4 or x.shape[-1] % 2:
        raise ValueError(f"rope: x must be [B, T, H, D] with D even, got {list(x.shape)}")
    want = [x.shape[1], x.shape[3]]
    if list(cos.shape) != want or list(sin.shape) != want:
        raise ValueError(f"rope: cos {list(cos.shape)} and sin {list(sin.shape)} must be [T, D] = {want} "
                         f"for x {list(x.shape)}")


@rope.register_fake
def _(x, cos, sin):
    _check_rope(x, cos, sin)
    return torch.empty_like(x)


@torch.library.custom_op("pocket::swiglu", mutates_args=())
def swiglu(gate: Tensor, up: Tensor) -> Tensor:
    """silu(gate) * up, float32, gate and up of one shape (the Llama MLP's gating)."""
    _check_swiglu(gate, up)
    return torch.nn.functional.silu(gate) * up


def _check_swiglu(gate: Tensor, up: Tensor) -> None:
    _check_float32("swiglu", gate=gate, up=up)
    if gate.shape != up.shape:
        raise ValueError(f"swiglu: gate {list(gate.shape)} and up {list(up.shape)} must have one shape")


@swiglu.register_fake
def _(gate, up):
    _check_swiglu(gate, up)
    return torch.empty_like(gate)


@torch.library.custom_op("pocket::convolution_clamp", mutates_args=())
def convolution_clamp(x: Tensor, weight: Tensor, bias: Optional[Tensor], stride: list[int], padding: list[int],
                      dilation: list[int], groups: int, out_min: Optional[float], out_max: Optional[float]) -> Tensor:
    """aten::convolution (not transposed) of x [N, C, ...] (1d, 2d or 3d), then torch.clamp
    to [out_min, out_max] (either may be None)."""
    spatial = x.dim() - 2
    y = torch.ops.aten.convolution(x, weight, bias, stride, padding, dilation, False, [0] * spatial, groups)
    return torch.clamp(y, out_min, out_max)


@convolution_clamp.register_fake
def _(x, weight, bias, stride, padding, dilation, groups, out_min, out_max):
    spatial = x.dim() - 2
    return torch.ops.aten.convolution(x, weight, bias, stride, padding, dilation, False, [0] * spatial, groups)
