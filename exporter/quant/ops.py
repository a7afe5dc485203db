"""Quantized ops (`pocket::`), defined with torch.library. Their eager implementations are the
exact semantics the C++ kernels implement (integer paths bit for bit, float accumulation
within 1e-5 relative).

    linear_q(x, qweight, scales, mins, bias, bits, group_size, act_mode) -> y
        act_mode 0: fp32 activations   y = x @ dequantize(w).T + bias
        act_mode 1: int8 per token     x ~ sx * xq, sx = amax|x_row| / 127, xq = round(x / sx)
        act_mode 2: int8 per block of 32 columns (llama.cpp's Q8_0 activations)
        with int8 activations each (row, group) contributes
            sx * (scale * sum(xq * q) + min * sum(xq))    (exact integer sums)
    embedding_q(qweight, scales, mins, indices, bits, group_size) -> rows of dequantize(w)
    linear_q_packed(x, qweight, scales, mins, bias, bits, group_size, act_mode) -> y
        linear_q with a 4- or 8-bit weight stored in the int8 dot-product kernels' layout
        (pack_linear_weight: 16 output channels across vector lanes, their scales contiguous),
        int8 activations only (act_mode 1 or 2)
    embedding_q_packed(qweight, scales, mins, indices, bits, group_size)
        embedding_q on a table in linear_q_packed's layout (tied embeddings: one table serves the
        embedding and the packed output projection)
    conv2d_q8(x, qweight, w_scales, bias, x_scale, x_zero_point, stride, padding, dilation, groups)
        xq = clamp(round(x / x_scale) + zp, -128, 127) (the division in float32, as torch divides
        a float32 tensor by a Python float); integer convolution of (xq - zp) with the int8
        weight; y = acc * x_scale * w_scales[c] + bias[c]
    conv2d_q8_packed(x, weight, w_scales, bias, x_scale, x_zero_point, kernel_size, stride, padding,
                     dilation, groups, out_min, out_max)
        conv2d_q8 with the weight stored packed (pack_conv_weight: the layout the int8 dot-product
        kernels read, so loading needs no copy) or, for groups of fewer than 4 output channels,
        as OIHW; then y clamped to [out_min, out_max] (either may be None): a ReLU or ReLU6 that
        followed the convolution
    conv2d_q8_channels_last(x, weight, w_scales, bias, residual, x_scale, x_zero_point, kernel_size,
                            stride, padding, dilation, groups, out_min, out_max, out_scale,
                            out_zero_point)
        conv2d_q8_packed on a channels-last x (N, H, W, C) -> (N, OH, OW, Cout); a residual
        shaped as the output (or None) is added after the bias, before the clamp (ResNet's
        relu(conv(x) + skip) as one op). x may be int8: the values xq above, already quantized
        with x_scale and x_zero_point. With out_scale and out_zero_point (both or neither) y is
        int8 for the next convolution, requantized from the integer sums in float32 (as
        XNNPACK does; at most one step from quantizing the float32 y):
            yq = clamp(round(float(acc) * m[c] + b[c]) + out_zero_point, q_lo, q_hi)
            m = float32(x_scale * w_scales / out_scale), b = float32(bias / out_scale)
            q_lo, q_hi = out_min, out_max quantized (round, + zp, within -128..127), else
            -128, 127
        With a residual the float32 y (residual added, clamped) is quantized instead,
        clamp(round(y / out_scale) + out_zero_point, -128, 127).
    x must be float32 (but for conv2d_q8_channels_last's int8 x). NaN/inf activations are
    outside the contract (the kernels give finite garbage where these references give NaN).
    lookup_int8(x, table) -> table[x + 128]
        an int8 tensor through a table of 256 int8 values (activation_table: an activation
        between two int8 convolutions, from the first one's quantization to the next one's)

Scales and mins of linear_q, linear_q_packed, embedding_q and embedding_q_packed are float32 or
float16 (both the same dtype; GGUF's Q4_0, Q4_1 and Q8_0 keep their float16 d and m). A float16
value means exactly its float32 widening: results equal those of float32 scales of the same
values.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from pocket.exporter.quant.formats import WeightFormat, dequantize, unpack

ACT_FP32, ACT_INT8_TOKEN, ACT_INT8_BLOCK32 = 0, 1, 2
ACT_MODES = {"fp32": ACT_FP32, "int8": ACT_INT8_TOKEN, "int8_token": ACT_INT8_TOKEN, "int8_block32": ACT_INT8_BLOCK32}


def quantize_activations(x2: Tensor, block: int) -> tuple[Tensor, Tensor]:
    """x2 (M, K) float -> (xq (M, K) float64 holding integers in [-127, 127], scales (M, K/block))."""
    m, k = x2.shape
    xb = x2.float().reshape(m, k // block, block)
    scale = xb.abs().amax(-1) / 127.0
    inv = torch.where(scale > 0, 1.0 / scale, torch.zeros_like(scale))
    xq = torch.clamp(torch.round(xb * inv[..., None]), -127, 127)
    return xq.reshape(m, k).double(), scale


SCALE_DTYPES = (torch.float32, torch.float16)


def check_scales(op: str, scales: Tensor, mins: Optional[Tensor]) -> None:
    """scales float32 or float16, mins (if any) of the same dtype; the runtime's messages."""
    name = {torch.float32: "float32", torch.float16: "float16"}
    if scales.dtype not in SCALE_DTYPES:
        raise ValueError(f"{op}: scales has dtype {str(scales.dtype).replace('torch.', '')}, "
                         f"expected float32 or float16")
    if mins is not None and mins.dtype != scales.dtype:
        raise ValueError(f"{op}: scales and mins must have the same dtype ({name[scales.dtype]} vs "
                         f"{str(mins.dtype).replace('torch.', '')})")


@torch.library.custom_op("pocket::linear_q", mutates_args=())
def linear_q(x: Tensor, qweight: Tensor, scales: Tensor, mins: Optional[Tensor], bias: Optional[Tensor],
             bits: int, group_size: int, act_mode: int) -> Tensor:
    fmt = WeightFormat(bits, group_size, mins is None)
    if act_mode not in (ACT_FP32, ACT_INT8_TOKEN, ACT_INT8_BLOCK32):
        raise ValueError(f"linear_q: act_mode must be 0, 1 or 2, got {act_mode}")
    check_scales("linear_q", scales, mins)
    scales, mins = scales.float(), None if mins is None else mins.float()  # float16: exact widening
    if act_mode == ACT_FP32:
        y = torch.nn.functional.linear(x.float(), dequantize(qweight, scales, mins, fmt))
    else:
        k = x.shape[-1]
        block = k if act_mode == ACT_INT8_TOKEN else 32
        if act_mode == ACT_INT8_BLOCK32 and group_size % 32:
            raise ValueError("int8 per-block activations need a group size that is a multiple of 32")
        x2 = x.reshape(-1, k)
        xq, sx = quantize_activations(x2, block)
        q = unpack(qweight, fmt).double()                                   # (N, K)
        n, g = q.shape[0], group_size
        # Integer sums per (row of x, row of w, group), then the float scales.
        dots = torch.einsum("mgc,ngc->mng", xq.reshape(-1, k // g, g), q.reshape(n, k // g, g))
        scaled = dots * scales.double()[None]
        if mins is not None:
            scaled = scaled + xq.reshape(-1, k // g, g).sum(-1)[:, None, :] * mins.double()[None]
        if act_mode == ACT_INT8_TOKEN:
            y = (scaled.sum(-1) * sx.double()).float()                      # sx (M, 1)
        else:  # one activation scale per 32 columns: split groups into blocks of 32
            per_block = torch.einsum("mbc,nbc->mnb", xq.reshape(-1, k // 32, 32), q.reshape(n, k // 32, 32))
            ws = scales.double().repeat_interleave(g // 32, dim=1)          # (N, K/32)
            acc = per_block * ws[None]
            if mins is not None:
                wm = mins.double().repeat_interleave(g // 32, dim=1)
                acc = acc + xq.reshape(-1, k // 32, 32).sum(-1)[:, None, :] * wm[None]
            y = (acc * sx.double()[:, None, :]).sum(-1).float()
        y = y.reshape(*x.shape[:-1], -1)
    return y + bias if bias is not None else y


@linear_q.register_fake
def _(x, qweight, scales, mins, bias, bits, group_size, act_mode):
    check_scales("linear_q", scales, mins)
    return x.new_empty((*x.shape[:-1], qweight.shape[0]), dtype=torch.float32)


@torch.library.custom_op("pocket::embedding_q", mutates_args=())
def embedding_q(qweight: Tensor, scales: Tensor, mins: Optional[Tensor], indices: Tensor, bits: int,
                group_size: int) -> Tensor:
    check_scales("embedding_q", scales, mins)
    scales, mins = scales.float(), None if mins is None else mins.float()
    w = dequantize(qweight, scales, mins, WeightFormat(bits, group_size, mins is None))
    return torch.nn.functional.embedding(indices, w)


@embedding_q.register_fake
def _(qweight, scales, mins, indices, bits, group_size):
    check_scales("embedding_q", scales, mins)
    return qweight.new_empty((*indices.shape, scales.shape[1] * group_size), dtype=torch.float32)


def quantize_per_tensor(x: Tensor, scale: float, zero_point: int) -> Tensor:
    """clamp(round(x / scale) + zero_point, -128, 127) as float32 (the division in float32,
    ties to even), or an int8 x as it is (already quantized)."""
    if x.dtype == torch.int8:
        return x.float()
    return torch.clamp(torch.round(x.float() / scale) + zero_point, -128, 127)


@torch.library.custom_op("pocket::lookup_int8", mutates_args=())
def lookup_int8(x: Tensor, table: Tensor) -> Tensor:
    _check_lookup(x, table)
    return table[x.long() + 128].reshape(x.shape)


@lookup_int8.register_fake
def _(x, table):
    _check_lookup(x, table)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _check_lookup(x: Tensor, table: Tensor) -> None:
    if x.dtype != torch.int8 or table.dtype != torch.int8:
        raise ValueError(f"lookup_int8: x and table must be int8, got {x.dtype} and {table.dtype}")
    if table.shape != (256,):
        raise ValueError(f"lookup_int8: table has shape {list(table.shape)}, expected 256 contiguous values")


def activation_table(fn, in_scale: float, in_zero_point: int, out_scale: float, out_zero_point: int) -> Tensor:
    """lookup_int8's table for fn (an elementwise float32 function) from int8 values quantized
    with (in_scale, in_zero_point) to int8 values quantized with (out_scale, out_zero_point):
    entry i is fn of the value i - 128 stands for, quantized as quantize_per_tensor does."""
    q = torch.arange(-128, 128, dtype=torch.float32)
    x = (q - in_zero_point) * torch.tensor(in_scale, dtype=torch.float32)
    return quantize_per_tensor(fn(x).float(), out_scale, out_zero_point).to(torch.int8)


@torch.library.custom_op("pocket::conv2d_q8", mutates_args=())
def conv2d_q8(x: Tensor, qweight: Tensor, w_scales: Tensor, bias: Optional[Tensor], x_scale: float,
              x_zero_point: int, stride: list[int], padding: list[int], dilation: list[int], groups: int) -> Tensor:
    acc = _conv_q8_sums(x, qweight, x_scale, x_zero_point, stride, padding, dilation, groups)
    y = (acc * (x_scale * w_scales.double())[None, :, None, None]).float()
    return y + bias[None, :, None, None] if bias is not None else y


def _conv_q8_sums(x, qweight, x_scale, x_zero_point, stride, padding, dilation, groups) -> Tensor:
    """The exact integer sums of conv2d_q8 (NCHW, float64)."""
    xq = quantize_per_tensor(x, x_scale, x_zero_point) - x_zero_point
    return torch.nn.functional.conv2d(xq.double(), qweight.double(), None, stride, padding, dilation, groups)


def _conv_output(x, c_out, kernel_size, stride, padding, dilation):
    stride, padding, dilation = ([v[0], v[-1]] for v in (stride, padding, dilation))  # 1 or 2 values
    n, _, h, w = x.shape
    kh, kw = kernel_size
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    return x.new_empty((n, c_out, oh, ow), dtype=torch.float32)


@conv2d_q8.register_fake
def _(x, qweight, w_scales, bias, x_scale, x_zero_point, stride, padding, dilation, groups):
    return _conv_output(x, qweight.shape[0], qweight.shape[2:], stride, padding, dilation)


# pocket::conv2d_q8_packed's weight: (groups, blocks, taps, quads, 16, 4) int8, element
# [g, b, t, q, j, u] = w[g * cout_g + 16 * b + j, 4 * q + u, t] (zero past cout_g or cin_g),
# t = kh * kw_size + kw: per tap and quad of input channels, 16 output channels' 4 weights in
# a row (a 512-bit VPDPBUSD operand, four 128-bit SDOT ones).
PACK_LANES, PACK_QUAD = 16, 4


def pack_conv_weight(qweight: Tensor, groups: int) -> Tensor:
    """OIHW int8 (c_out, cin_g, kh, kw) -> the packed layout above."""
    c_out, cin_g, kh, kw = qweight.shape
    cout_g = c_out // groups
    blocks, quads = -(-cout_g // PACK_LANES), -(-cin_g // PACK_QUAD)
    w = torch.zeros(groups, blocks * PACK_LANES, quads * PACK_QUAD, kh * kw, dtype=torch.int8)
    w[:, :cout_g, :cin_g] = qweight.reshape(groups, cout_g, cin_g, kh * kw)
    w = w.reshape(groups, blocks, PACK_LANES, quads, PACK_QUAD, kh * kw)
    return w.permute(0, 1, 5, 3, 2, 4).contiguous()


def unpack_conv_weight(packed: Tensor, c_out: int, cin_g: int, kernel_size: list[int]) -> Tensor:
    """The inverse of pack_conv_weight (an OIHW weight, 4-d, is returned as it is)."""
    if packed.dim() == 4:
        return packed
    groups, blocks, taps, quads, lanes, quad = packed.shape
    w = packed.permute(0, 1, 4, 3, 5, 2).reshape(groups, blocks * lanes, quads * quad, taps)
    return w[:, :c_out // groups, :cin_g].reshape(c_out, cin_g, *kernel_size)


@torch.library.custom_op("pocket::conv2d_q8_packed", mutates_args=())
def conv2d_q8_packed(x: Tensor, weight: Tensor, w_scales: Tensor, bias: Optional[Tensor], x_scale: float,
                     x_zero_point: int, kernel_size: list[int], stride: list[int], padding: list[int],
                     dilation: list[int], groups: int, out_min: Optional[float],
                     out_max: Optional[float]) -> Tensor:
    qweight = unpack_conv_weight(weight, w_scales.shape[0], x.shape[1] // groups, kernel_size)
    y = conv2d_q8(x, qweight, w_scales, bias, x_scale, x_zero_point, stride, padding, dilation, groups)
    return torch.clamp(y, out_min, out_max) if out_min is not None or out_max is not None else y


@conv2d_q8_packed.register_fake
def _(x, weight, w_scales, bias, x_scale, x_zero_point, kernel_size, stride, padding, dilation, groups, out_min,
      out_max):
    return _conv_output(x, w_scales.shape[0], kernel_size, stride, padding, dilation)


@torch.library.custom_op("pocket::conv2d_q8_channels_last", mutates_args=())
def conv2d_q8_channels_last(x: Tensor, weight: Tensor, w_scales: Tensor, bias: Optional[Tensor],
                            residual: Optional[Tensor], x_scale: float, x_zero_point: int, kernel_size: list[int],
                            stride: list[int], padding: list[int], dilation: list[int], groups: int,
                            out_min: Optional[float], out_max: Optional[float], out_scale: Optional[float] = None,
                            out_zero_point: Optional[int] = None) -> Tensor:
    _check_channels_last(x, out_scale, out_zero_point)
    if out_scale is not None and residual is None:
        qweight = unpack_conv_weight(weight, w_scales.shape[0], x.shape[3] // groups, kernel_size)
        acc = _conv_q8_sums(x.permute(0, 3, 1, 2), qweight, x_scale, x_zero_point, stride, padding, dilation,
                            groups).permute(0, 2, 3, 1)
        m = (x_scale * w_scales.double() / out_scale).float()
        b = (bias.double() / out_scale).float() if bias is not None else torch.zeros_like(m)
        bound = lambda v, none: none if v is None else min(127, max(-128, round(v / out_scale) + out_zero_point))
        q = torch.round(acc.float() * m + b) + out_zero_point
        return torch.clamp(q, bound(out_min, -128), bound(out_max, 127)).to(torch.int8).contiguous()
    y = conv2d_q8_packed(x.permute(0, 3, 1, 2), weight, w_scales, bias, x_scale, x_zero_point, kernel_size, stride,
                         padding, dilation, groups, None, None).permute(0, 2, 3, 1)
    if residual is not None:
        y = y + residual
    y = torch.clamp(y, out_min, out_max) if out_min is not None or out_max is not None else y
    if out_scale is not None:
        y = quantize_per_tensor(y, out_scale, out_zero_point).to(torch.int8)
    return y.contiguous()


def _check_channels_last(x: Tensor, out_scale, out_zero_point) -> None:
    if x.dim() != 4:
        raise ValueError(f"conv2d_q8_channels_last: x must be 4-d (N, H, W, C), got {list(x.shape)}")
    if x.dtype not in (torch.float32, torch.int8):
        raise ValueError(f"conv2d_q8_channels_last: x has dtype {x.dtype}, expected float32 or int8")
    if (out_scale is None) != (out_zero_point is None):
        raise ValueError("conv2d_q8_channels_last: out_scale and out_zero_point go together (an int8 output)")


@conv2d_q8_channels_last.register_fake
def _(x, weight, w_scales, bias, residual, x_scale, x_zero_point, kernel_size, stride, padding, dilation, groups,
      out_min, out_max, out_scale=None, out_zero_point=None):
    _check_channels_last(x, out_scale, out_zero_point)
    y = _conv_output(x.permute(0, 3, 1, 2), w_scales.shape[0], kernel_size, stride, padding, dilation)
    y = y.permute(0, 2, 3, 1).contiguous()
    return y.to(torch.int8) if out_scale is not None else y


# pocket::linear_q_packed's weight: a 4- or 8-bit linear_q weight stored as (N/16, K/step, 64)
# (dtype as unpacked): per block of 16 output channels, 64 bytes hold `step` columns of each
# channel, 4 per channel in a row (one 512-bit VPDPBUSD operand, four 128-bit SDOT ones):
#   4-bit (step 8): byte [b, t, 4c + i] = u[16b+c, 8t+i] | u[16b+c, 8t+4+i] << 4 (u the stored
#                   nibbles, as in linear_q)
#   8-bit (step 4): byte [b, t, 4c + i] = q[16b+c, 4t+i]
# Scales and mins (N, G) become (N/16, G, 16), dtype kept (float32 or float16). Needs
# N % 16 == 0 and group_size % 8 == 0.
LINEAR_LANES, LINEAR_GROUP = 16, 8


def linear_step(bits: int) -> int:
    """Columns per 64 bytes of a block of linear_q_packed's weight."""
    return 8 if bits == 4 else 4


def linear_packable(n: int, k: int, bits: int, group_size: int, act_mode: int) -> bool:
    """Whether pack_linear_weight takes this weight (and the packed op this act_mode)."""
    return (bits in (4, 8) and act_mode in (ACT_INT8_TOKEN, ACT_INT8_BLOCK32) and n % LINEAR_LANES == 0
            and k % LINEAR_GROUP == 0 and group_size % LINEAR_GROUP == 0)


def pack_linear_weight(qweight: Tensor, scales: Tensor, mins: Optional[Tensor], bits: int = 4):
    """linear_q tensors (4- or 8-bit) -> (qweight, scales, mins) in linear_q_packed's layout."""
    n, cols = qweight.shape
    blocks = n // LINEAR_LANES
    if bits == 4:
        u = torch.stack([qweight & 0x0F, qweight >> 4], dim=-1).reshape(n, 2 * cols)  # nibbles (N, K)
        u = u.reshape(blocks, LINEAR_LANES, cols // 4, 2, 4)                       # [b, c, t, half, i]
        packed = (u[:, :, :, 0] | (u[:, :, :, 1] << 4)).permute(0, 2, 1, 3)          # [b, t, c, i]
    else:
        packed = qweight.reshape(blocks, LINEAR_LANES, cols // 4, 4).permute(0, 2, 1, 3)
    packed = packed.reshape(blocks, -1, 4 * LINEAR_LANES).contiguous()

    def lanes(v):
        return None if v is None else v.reshape(blocks, LINEAR_LANES, -1).transpose(1, 2).contiguous()

    return packed, lanes(scales), lanes(mins)


def unpack_linear_weight(packed: Tensor, scales: Tensor, mins: Optional[Tensor], bits: int = 4):
    """The inverse of pack_linear_weight."""
    blocks, steps, _ = packed.shape
    b = packed.reshape(blocks, steps, LINEAR_LANES, 4)
    if bits == 4:
        u = torch.stack([b & 0x0F, b >> 4], dim=3).permute(0, 2, 1, 3, 4)        # [b, c, t, half, i]
        u = u.reshape(blocks * LINEAR_LANES, steps * 8)
        qweight = (u[:, 0::2] | (u[:, 1::2] << 4)).contiguous()
    else:
        qweight = b.permute(0, 2, 1, 3).reshape(blocks * LINEAR_LANES, steps * 4).contiguous()

    def rows(v):
        return None if v is None else v.transpose(1, 2).reshape(blocks * LINEAR_LANES, -1).contiguous()

    return qweight, rows(scales), rows(mins)


@torch.library.custom_op("pocket::linear_q_packed", mutates_args=())
def linear_q_packed(x: Tensor, qweight: Tensor, scales: Tensor, mins: Optional[Tensor], bias: Optional[Tensor],
                    bits: int, group_size: int, act_mode: int) -> Tensor:
    if act_mode not in (ACT_INT8_TOKEN, ACT_INT8_BLOCK32):
        raise ValueError(f"linear_q_packed: takes act_mode 1 or 2, got {act_mode}")
    check_scales("linear_q_packed", scales, mins)
    q, s, m = unpack_linear_weight(qweight, scales, mins, bits)
    return linear_q(x, q, s, m, bias, bits, group_size, act_mode)


@linear_q_packed.register_fake
def _(x, qweight, scales, mins, bias, bits, group_size, act_mode):
    check_scales("linear_q_packed", scales, mins)
    return x.new_empty((*x.shape[:-1], qweight.shape[0] * LINEAR_LANES), dtype=torch.float32)


@torch.library.custom_op("pocket::embedding_q_packed", mutates_args=())
def embedding_q_packed(qweight: Tensor, scales: Tensor, mins: Optional[Tensor], indices: Tensor, bits: int,
                       group_size: int) -> Tensor:
    check_scales("embedding_q_packed", scales, mins)
    q, s, m = unpack_linear_weight(qweight, scales, mins, bits)
    return embedding_q(q, s, m, indices, bits, group_size)


@embedding_q_packed.register_fake
def _(qweight, scales, mins, indices, bits, group_size):
    check_scales("embedding_q_packed", scales, mins)
    return qweight.new_empty((*indices.shape, qweight.shape[1] * linear_step(bits)), dtype=torch.float32)
