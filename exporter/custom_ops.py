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
    conv2d_packed(x, weight, bias, residual, out_channels, stride, padding, dilation, groups,
                  out_min, out_max) -> channels-last convolution, weight packed in the kernels' layout,
        bias + residual + clamp fused (passes/channels_last.py)
    conv2d_winograd(x, weight, bias, residual, out_channels, stride, padding, dilation, groups,
                    out_min, out_max) -> conv2d_packed of a 3x3 kernel, stride 1, by Winograd
        F(2x2, 3x3): the weight stored transformed (pack_winograd_weight)
    conv2d_packed.act, conv2d_winograd.act(the same arguments, activation) -> the op's result
        through an activation: sigmoid, silu, hardsigmoid or hardswish (CONV_ACTIVATIONS)
    max_pool2d_channels_last(x, kernel_size, stride, padding, dilation, ceil_mode)
        -> max_pool2d of a channels-last x (the pooling inside such a chain)
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


# ---- pocket::conv2d_packed: channels-last fp32 convolution, weights in the kernels' layout
CONV_PACK_LANES = 16  # output channels per block of a packed groups-1 weight


def pack_conv_weight(w: Tensor, groups: int) -> Tensor:
    """An OIHW float32 weight in conv2d_packed's layout. groups 1: (blocks, kh, kw, in, 16),
    element [b, i, j, c, l] = w[16 b + l, c, i, j], zero past the output channels (per block of
    16 output channels, a panel with one row of 16 weights per tap and input channel);
    depthwise (groups = in = out channels, w (C, 1, kh, kw)): (kh, kw, C)."""
    out, _, kh, kw = w.shape
    if groups != 1:
        return w[:, 0].permute(1, 2, 0).contiguous()
    blocks = -(-out // CONV_PACK_LANES)
    padded = torch.zeros(blocks * CONV_PACK_LANES, *w.shape[1:], dtype=w.dtype)
    padded[:out] = w
    return padded.reshape(blocks, CONV_PACK_LANES, w.shape[1], kh, kw).permute(0, 3, 4, 2, 1).contiguous()


def unpack_conv_weight(w: Tensor, out_channels: int, groups: int) -> Tensor:
    """The inverse of pack_conv_weight: the OIHW weight."""
    if groups != 1:
        return w.permute(2, 0, 1).unsqueeze(1).contiguous()
    blocks, kh, kw, cin, lanes = w.shape
    return w.permute(0, 4, 3, 1, 2).reshape(blocks * lanes, cin, kh, kw)[:out_channels].contiguous()


def _check_conv2d_packed(x, weight, bias, residual, out_channels, groups, out_shape) -> None:
    op = "conv2d_packed"
    _check_float32(op, x=x, weight=weight)
    if x.dim() != 4:
        raise ValueError(f"{op}: x must be 4-d (N, H, W, C: channels last), got {list(x.shape)}")
    cin = x.shape[3]
    if groups != 1 and not (groups == cin == out_channels):
        raise ValueError(f"{op}: groups {groups} with {cin} input and {out_channels} output channels: expected 1 "
                         "or (depthwise) groups = input channels = output channels")
    want = ([weight.shape[0], weight.shape[1], cin] if groups != 1 else
            [-(-out_channels // CONV_PACK_LANES), weight.shape[1] if weight.dim() == 5 else -1,
             weight.shape[2] if weight.dim() == 5 else -1, cin, CONV_PACK_LANES])
    if weight.dim() != len(want) or list(weight.shape) != want:
        raise ValueError(f"{op}: weight has shape {list(weight.shape)}, expected {want} for {cin} input and "
                         f"{out_channels} output channels, groups {groups}")
    if bias is not None and (bias.dtype != torch.float32 or list(bias.shape) != [out_channels]):
        raise ValueError(f"{op}: bias must be float32 [{out_channels}], got {bias.dtype} {list(bias.shape)}")
    if residual is not None and (residual.dtype != torch.float32 or list(residual.shape) != list(out_shape)):
        raise ValueError(f"{op}: residual must be float32 {list(out_shape)} (the output's shape), got "
                         f"{residual.dtype} {list(residual.shape)}")


def _conv2d_packed_shape(x, weight, out_channels, stride, padding, dilation, groups) -> list:
    k = weight.shape[:2] if groups != 1 else weight.shape[1:3]
    s, p, d = ([v[0], v[0]] if len(v) == 1 else list(v) for v in (stride, padding, dilation))
    out = [(x.shape[1 + a] + 2 * p[a] - d[a] * (k[a] - 1) - 1) // s[a] + 1 for a in range(2)]
    return [x.shape[0], *out, out_channels]


@torch.library.custom_op("pocket::conv2d_packed", mutates_args=())
def conv2d_packed(x: Tensor, weight: Tensor, bias: Optional[Tensor], residual: Optional[Tensor], out_channels: int,
                  stride: list[int], padding: list[int], dilation: list[int], groups: int, out_min: Optional[float],
                  out_max: Optional[float]) -> Tensor:
    """2d convolution of channels-last x [N, H, W, C] float32 with a weight packed by
    pack_conv_weight; y [N, OH, OW, out_channels] = clamp(conv + bias + residual, out_min,
    out_max), residual (optional) channels-last like y. groups is 1 or depthwise."""
    shape = _conv2d_packed_shape(x, weight, out_channels, stride, padding, dilation, groups)
    _check_conv2d_packed(x, weight, bias, residual, out_channels, groups, shape)
    w = unpack_conv_weight(weight, out_channels, groups)
    y = torch.ops.aten.convolution(x.permute(0, 3, 1, 2), w, bias, stride, padding, dilation, False, [0, 0], groups)
    if residual is not None:
        y = y + residual.permute(0, 3, 1, 2)
    if out_min is not None or out_max is not None:
        y = torch.clamp(y, out_min, out_max)
    return y.permute(0, 2, 3, 1).contiguous()


@conv2d_packed.register_fake
def _(x, weight, bias, residual, out_channels, stride, padding, dilation, groups, out_min, out_max):
    shape = _conv2d_packed_shape(x, weight, out_channels, stride, padding, dilation, groups)
    _check_conv2d_packed(x, weight, bias, residual, out_channels, groups, shape)
    return x.new_empty(shape)


# ---- pocket::conv2d_winograd: conv2d_packed of a 3x3 kernel, stride 1, by Winograd F(2x2, 3x3)
# Each 2x2 block of outputs is A^T [(G g G^T) * (B^T d B)] A of its 4x4 input pixels d, a sum
# over input channels of 16 products per (input, output) channel pair where the direct
# convolution takes 36 (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks").
# The weight is stored transformed: U = G g G^T, a 4x4 "kernel" packed as conv2d_packed packs
# one. Its entries are g's values, halves of sums of three and quarters of sums of nine: a
# float32 rounding or two from the exact ones.
WINOGRAD_G = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
# A left inverse of G: H G = I (rows 0 and 3 of G pick g0 and g2; rows 1 - 2 give g1).
_WINOGRAD_H = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, -1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])


def pack_winograd_weight(w: Tensor) -> Tensor:
    """An OIHW float32 3x3 weight, transformed (G w G^T per channel pair) and packed as
    pack_conv_weight packs a 4x4 kernel: (blocks, 4, 4, in, 16)."""
    if w.dim() != 4 or tuple(w.shape[2:]) != (3, 3):
        raise ValueError(f"pack_winograd_weight: expected an OIHW weight of a 3x3 kernel, got {list(w.shape)}")
    g = WINOGRAD_G.to(w.dtype)
    return pack_conv_weight(g @ w @ g.T, 1)


def unpack_winograd_weight(w: Tensor, out_channels: int) -> Tensor:
    """The OIHW 3x3 weight of a pack_winograd_weight result (to float32 rounding)."""
    h = _WINOGRAD_H.to(w.dtype)
    return h @ unpack_conv_weight(w, out_channels, 1) @ h.T


def _check_conv2d_winograd(x, weight, stride, dilation, groups) -> None:
    op = "conv2d_winograd"
    for name, v in (("stride", stride), ("dilation", dilation)):
        if any(int(e) != 1 for e in v):
            raise ValueError(f"{op}: {name} {list(v)}: expected 1 (Winograd F(2x2, 3x3) runs stride 1, dilation 1)")
    if groups != 1:
        raise ValueError(f"{op}: groups {groups}: expected 1")
    if weight.dim() != 5 or tuple(weight.shape[1:3]) != (4, 4):
        raise ValueError(f"{op}: weight has shape {list(weight.shape)}, expected (blocks, 4, 4, in channels, "
                         f"{CONV_PACK_LANES}): a 3x3 kernel transformed by pack_winograd_weight")


@torch.library.custom_op("pocket::conv2d_winograd", mutates_args=())
def conv2d_winograd(x: Tensor, weight: Tensor, bias: Optional[Tensor], residual: Optional[Tensor], out_channels: int,
                    stride: list[int], padding: list[int], dilation: list[int], groups: int,
                    out_min: Optional[float], out_max: Optional[float]) -> Tensor:
    """conv2d_packed of a 3x3 kernel, stride 1, dilation 1, groups 1, with the weight
    transformed by pack_winograd_weight (the same arguments otherwise)."""
    _check_conv2d_winograd(x, weight, stride, dilation, groups)
    w = pack_conv_weight(unpack_winograd_weight(weight, out_channels), 1)
    return conv2d_packed(x, w, bias, residual, out_channels, stride, padding, dilation, groups, out_min, out_max)


@conv2d_winograd.register_fake
def _(x, weight, bias, residual, out_channels, stride, padding, dilation, groups, out_min, out_max):
    _check_conv2d_winograd(x, weight, stride, dilation, groups)
    w = weight.new_empty((weight.shape[0], 3, 3, *weight.shape[3:]))
    shape = _conv2d_packed_shape(x, w, out_channels, stride, padding, dilation, groups)
    _check_conv2d_packed(x, w, bias, residual, out_channels, groups, shape)
    return x.new_empty(shape)


# ---- pocket::conv2d_packed.act, conv2d_winograd.act: the convolution's result (clamped, when
# bounded) through an activation, which the kernels apply to each block of output while it is in
# cache (EfficientNet's and YOLO's conv-BN-SiLU, MobileNetV3's hardswish).
CONV_ACTIVATIONS = {"sigmoid": torch.sigmoid, "silu": torch.nn.functional.silu,
                    "hardsigmoid": torch.nn.functional.hardsigmoid, "hardswish": torch.nn.functional.hardswish}


def _conv_activation(op: str, activation: str):
    if activation not in CONV_ACTIVATIONS:
        raise ValueError(f"{op}.act: activation is {activation!r}, expected one of {', '.join(CONV_ACTIVATIONS)}")
    return CONV_ACTIVATIONS[activation]


def _with_activation(plain, name: str):
    """Defines pocket::<name>.act: `plain`'s arguments, then an activation's name."""

    @torch.library.custom_op(f"pocket::{name}.act", mutates_args=())
    def op(x: Tensor, weight: Tensor, bias: Optional[Tensor], residual: Optional[Tensor], out_channels: int,
           stride: list[int], padding: list[int], dilation: list[int], groups: int, out_min: Optional[float],
           out_max: Optional[float], activation: str) -> Tensor:
        f = _conv_activation(name, activation)
        return f(plain(x, weight, bias, residual, out_channels, stride, padding, dilation, groups, out_min, out_max))

    @op.register_fake
    def _(*args):
        _conv_activation(name, args[-1])
        return plain(*args[:-1])  # the plain op's fake

    return op


conv2d_packed_act = _with_activation(conv2d_packed, "conv2d_packed")
conv2d_winograd_act = _with_activation(conv2d_winograd, "conv2d_winograd")


@torch.library.custom_op("pocket::max_pool2d_channels_last", mutates_args=())
def max_pool2d_channels_last(x: Tensor, kernel_size: list[int], stride: list[int], padding: list[int],
                             dilation: list[int], ceil_mode: bool) -> Tensor:
    """torch max_pool2d of channels-last x [N, H, W, C] float32 -> [N, OH, OW, C] (the pooling
    inside a channels-last chain, passes/channels_last.py)."""
    _check_max_pool2d_channels_last(x)
    y = torch.nn.functional.max_pool2d(x.permute(0, 3, 1, 2), kernel_size, stride or None, padding, dilation,
                                       ceil_mode)
    return y.permute(0, 2, 3, 1).contiguous()


def _check_max_pool2d_channels_last(x: Tensor) -> None:
    _check_float32("max_pool2d_channels_last", x=x)
    if x.dim() != 4:
        raise ValueError(f"max_pool2d_channels_last: x must be 4-d (N, H, W, C), got {list(x.shape)}")


@max_pool2d_channels_last.register_fake
def _(x, kernel_size, stride, padding, dilation, ceil_mode):
    _check_max_pool2d_channels_last(x)
    y = torch.nn.functional.max_pool2d(x.permute(0, 3, 1, 2), kernel_size, stride or None, padding, dilation,
                                       ceil_mode)
    return y.permute(0, 2, 3, 1).contiguous()
