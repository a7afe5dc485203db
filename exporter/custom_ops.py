"""Pocket's own ops (`pocket::...`), defined with torch.library. Their eager implementations
are the reference semantics the C++ kernels are tested against.

Quantized ops are in quant/ops.py. LLM ops:
    update_cache(cache, value, start_pos) -> cache with value written at start_pos
    sdpa(q, k_cache, v_cache, start_pos, scale) -> causal attention over the cache
"""

import torch
from torch import Tensor

from pocket.exporter.quant import ops as quant_ops  # noqa: F401  (pocket::linear_q, embedding_q, conv2d_q8)


@torch.library.custom_op("pocket::update_cache", mutates_args=())
def update_cache(cache: Tensor, value: Tensor, start_pos: Tensor) -> Tensor:
    """Writes value [B, H, T, D] into cache [B, H, S, D] at positions start_pos .. start_pos+T-1.

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
    attention). Returns [B, Hq, T, D]."""
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
