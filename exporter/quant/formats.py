"""Quantized weight formats: quantize, pack and unpack (the layout is in schema/QUANTIZATION.md).

A format is (bits, group_size, symmetric):
    symmetric:  w = q * scale              q signed: int4 in [-8, 7] (stored q + 8), int8 in [-127, 127]
    asymmetric: w = q * scale + min        q unsigned: [0, 15] or [0, 255]
Scales and mins are one per (row, group of `group_size` consecutive columns): float32 from
quantize(), float32 or float16 in general (GGUF's d and m; see ops.check_scales).
4-bit values are packed two per byte along a row: column 2j in the low nibble, 2j+1 in the high.
"""

from __future__ import annotations

import dataclasses

import torch


@dataclasses.dataclass(frozen=True)
class WeightFormat:
    bits: int          # 4 or 8
    group_size: int    # columns per scale
    symmetric: bool

    def __post_init__(self):
        if self.bits not in (4, 8):
            raise ValueError(f"weight bits must be 4 or 8, got {self.bits}")
        if self.group_size <= 0 or self.group_size % 2:
            raise ValueError(f"group size must be a positive even number, got {self.group_size}")


def quantize(w: torch.Tensor, fmt: WeightFormat):
    """w (N, K) float -> (qweight uint8/int8, scales (N, K/g) float32, mins (N, K/g) float32 or None)."""
    n, k = w.shape
    if k % fmt.group_size:
        raise ValueError(f"{k} columns are not a multiple of the group size {fmt.group_size}")
    g = w.detach().float().reshape(n, k // fmt.group_size, fmt.group_size)
    if fmt.symmetric:
        rows = max(1, (1 << 18) // k)  # the search holds a few copies of its rows: 1 MB each, in cache
        parts = [symmetric_scales(g[i:i + rows], fmt.bits) for i in range(0, n, rows)]
        scales, q = torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
        mins = None
    else:
        qmax = 15 if fmt.bits == 4 else 255
        lo, hi = g.amin(-1), g.amax(-1)
        scales = (hi - lo) / qmax
        scales = torch.where(scales == 0, torch.ones_like(scales), scales)
        q = torch.clamp(torch.round((g - lo[..., None]) / scales[..., None]), 0, qmax)
        mins = lo.contiguous()
    return pack(q.reshape(n, k).to(torch.int32), fmt), scales.contiguous(), mins


def symmetric_scales(g: torch.Tensor, bits: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Scales and integers for groups g (..., group) that minimize the squared error per group.

    The plain choice, scale = amax / 7 for int4, never uses -8 and rounds every other weight on
    a grid fitted to the one largest; at 4 bits that costs accuracy (measured on SmolLM2:
    teacher-forced top-1 agreement with fp32, benchmarks/smollm2_bench.py). Instead each group
    tries scales amax / d for d from qmax to qmax + 1 (d > qmax clips the largest weight
    to use the -8 level or a finer grid), refits each scale to its rounded integers by least
    squares (s = <w, q> / <q, q>), rounds again and keeps the candidate with the smallest error.
    amax / qmax is among the candidates and neither step can raise its error, so no group is
    worse than with the plain choice."""
    qmax = 7 if bits == 4 else 127
    qmin = -8 if bits == 4 else -127
    amax = g.abs().amax(-1)
    safe = torch.where(amax == 0, torch.ones_like(amax), amax)
    q, t = torch.empty_like(g), torch.empty_like(g)  # the group-sized work, in place (same values)
    best_err = best_s = best_q = None
    for d in (qmax, qmax + 0.25, qmax + 0.5, qmax + 0.75, qmax + 1.0):
        s = safe / d
        torch.div(g, s[..., None], out=q).round_().clamp_(qmin, qmax)
        qq = torch.mul(q, q, out=t).sum(-1)
        s = torch.where(qq > 0, torch.mul(g, q, out=t).sum(-1) / qq.clamp_min(1), s)
        s = s.clamp_min(torch.finfo(torch.float32).tiny)
        torch.div(g, s[..., None], out=q).round_().clamp_(qmin, qmax)
        err = torch.pow(torch.sub(g, torch.mul(q, s[..., None], out=t), out=t), 2, out=t).sum(-1)
        if best_err is None:
            best_err, best_s, best_q = err, s, q.clone()
        else:
            better = err < best_err
            best_err = torch.where(better, err, best_err)
            best_s = torch.where(better, s, best_s)
            torch.where(better[..., None], q, best_q, out=best_q)
    best_s = torch.where(amax == 0, torch.ones_like(best_s), best_s)
    return best_s.contiguous(), best_q


def pack(q: torch.Tensor, fmt: WeightFormat) -> torch.Tensor:
    """Integer values (N, K) -> stored bytes: 4-bit (N, K/2) uint8, 8-bit (N, K) int8 or uint8."""
    if fmt.bits == 8:
        return q.to(torch.int8 if fmt.symmetric else torch.uint8).contiguous()
    u = (q + 8 if fmt.symmetric else q).to(torch.uint8)
    return (u[:, 0::2] | (u[:, 1::2] << 4)).contiguous()


def unpack(packed: torch.Tensor, fmt: WeightFormat) -> torch.Tensor:
    """Stored bytes -> integer values (N, K) int32 (signed for symmetric formats)."""
    if fmt.bits == 8:
        return packed.to(torch.int32)
    lo = (packed & 0x0F).to(torch.int32)
    hi = (packed >> 4).to(torch.int32)
    q = torch.stack([lo, hi], dim=-1).reshape(packed.shape[0], -1)
    return q - 8 if fmt.symmetric else q


def dequantize(packed, scales, mins, fmt: WeightFormat) -> torch.Tensor:
    q = unpack(packed, fmt).float()
    n, k = q.shape
    w = q.reshape(n, k // fmt.group_size, fmt.group_size) * scales.float()[..., None]
    if mins is not None:
        w = w + mins.float()[..., None]
    return w.reshape(n, k)
