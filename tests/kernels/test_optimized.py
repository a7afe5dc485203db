"""Optimized kernels against the portable ones (ggml test-backend-ops style), driven by the
native kernel tables: for every optimized kernel set this CPU can run (e.g. avx2, avxvnni,
avx512, avx512vnni; on arm64 neon, neondot, neoni8mm) and every op whose kernel in that set differs from the
portable one (`_native.optimized_ops`), random inputs go through both kernels, on 1 and 2
threads. The C++ twin of this test, runtime_core/tests/kernel_diff_test.cpp, also runs in
the arm64 cross build under qemu.

Tolerances:
- float results: |optimized - portable| <= 1e-5 * (|portable| + Σ|terms|), Σ|terms| being
  the portable kernel's output on absolute values (linear, mm/bmm/addmm, convolution; for
  sdpa the output for |v|, softmax weights being positive) or, for linear_q, Σ|x|·max|w|:
  the optimized kernels sum in another order (vectors, FMA) and nothing else. rms_norm,
  rope and swiglu use the same bound, Σ|terms| being the portable kernel on absolute inputs
  (for rope with sin signed so that both terms of each output add; swiglu's vectorized exp
  is within 2 ulp).
- conv2d_q8, conv2d_q8_packed, conv2d_q8_channels_last: integer sums are exact and scaled as the portable kernel
  does: identical.
- linear_q with int8 activations: integer sums are exact and scaled in double, so
  |difference| <= 1e-6 * (|portable| + Σ|terms|); on inputs whose scales are all 1 the
  results are integers and must be identical.
- linear_q_packed: exact integer sums per group (or block of 32), scaled and summed in float32
  (the portable kernel: double): |difference| <= 1e-5 * (|portable| + Σ|terms|); integers on
  unit scales, identical.
- linear_q and linear_q_packed with float16 scales and mins (some cases of each): the same
  bounds, and every kernel set gives exactly what it gives for float32 scales of the same values.
- Module outputs with 1 and 2 threads: the kernels split work without changing any
  output's arithmetic except where a tile boundary moves: rtol = atol = 1e-5.
"""

import numpy as np
import pytest
import torch
from harness import output_buffer, to_native

import pocket
import pocket.exporter.custom_ops  # noqa: F401  (registers torch.ops.pocket.*)
from examples import models
from native_testing import run_kernel
from pocket import _native
from pocket.exporter.quant.formats import WeightFormat, quantize
from pocket.exporter.quant.ops import pack_conv_weight, pack_linear_weight, quantize_per_tensor, unpack_linear_weight
from random_models import tiny_llm

CANDIDATES = ["avx2_fma", "avx2_fma,avx_vnni", "avx2_fma,avx512", "avx2_fma,avx512,avx512_vnni", "neon", "neon,dotprod",
              "neon,dotprod,i8mm"]


def kernel_sets():
    """Feature lists naming each distinct optimized kernel set this CPU runs."""
    have = _native.cpu_features()
    out, seen = [], set()
    for features in CANDIDATES:
        name = _native.kernel_set(features)
        if all(have[f] for f in features.split(",")) and name != "portable" and name not in seen:
            seen.add(name)
            out.append(features)
    return out


SETS = kernel_sets()


def run(name, args, like, table="portable", threads=1):
    out = run_kernel(name, [to_native(a) for a in args], [output_buffer(like)], table, threads)[0]
    return torch.from_numpy(np.array(out))


def check(name, args, like, table, magnitude, tol):
    """Portable vs the kernel in `table`, on 1 and 2 threads."""
    want = run(name, args, like)
    assert want.dtype == like.dtype
    if not want.dtype.is_floating_point:  # int8 outputs: no wrap-around in the difference
        want = want.double()
    for threads in (1, 2):
        got = run(name, args, like, table, threads)
        assert got.shape == want.shape and got.dtype == like.dtype
        got = got.to(want.dtype)
        bound = tol * (want.abs() + magnitude)
        bad = ~((got - want).abs() <= bound)
        if bad.any():
            i = int(bad.flatten().nonzero()[0])
            raise AssertionError(f"{name} [{_native.kernel_set(table)}] threads={threads}: output {i} is "
                                 f"{got.flatten()[i].item()!r}, portable {want.flatten()[i].item()!r} "
                                 f"(bound {bound.flatten()[i].item():.3g})")


def absolute(args):
    return [a.abs() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]


def check_float(name, args, like, table):
    check(name, args, like, table, run(name, absolute(args), like), 1e-5)


# ---- cases per op: each yields (args, output-like tensor)


def linear_cases():
    for m in (1, 2, 7, 33):
        for k in (1, 3, 8, 17, 70):
            for n in (1, 5, 17):
                x, w = torch.randn(m, k), torch.randn(n, k)
                yield [x, w, torch.randn(n) if (m + k) % 2 else None], torch.empty(m, n)
    # strided: a transposed input, a weight that is a slice, leading dims
    x = torch.randn(19, 3).t()
    yield [x, torch.randn(11, 38)[:, ::2], torch.randn(11)], torch.empty(3, 11)
    yield [torch.randn(2, 3, 33), torch.randn(9, 33), None], torch.empty(2, 3, 9)


def matmul_views(m, k, n, batch=None):
    """Operands in all four orientations (transposed views, no copies)."""
    lead = () if batch is None else (batch,)
    for ta in (False, True):
        for tb in (False, True):
            a = torch.randn(*lead, k, m).transpose(-1, -2) if ta else torch.randn(*lead, m, k)
            b = torch.randn(*lead, n, k).transpose(-1, -2) if tb else torch.randn(*lead, k, n)
            yield a, b


def mm_cases():
    for m, k, n in [(1, 9, 35), (2, 40, 6), (7, 1, 17), (33, 9, 1), (33, 40, 35)]:
        for a, b in matmul_views(m, k, n):
            yield [a, b], torch.empty(m, n)
    yield [torch.randn(6, 20)[:, ::2], torch.randn(10, 30)[:, ::3]], torch.empty(6, 10)  # no unit stride


def bmm_cases():
    for m, k, n in [(1, 9, 35), (7, 16, 7), (33, 5, 2)]:
        for a, b in matmul_views(m, k, n, batch=3):
            yield [a, b], torch.empty(3, m, n)


def addmm_cases():
    for m, k, n in [(1, 9, 35), (7, 40, 6), (33, 3, 17)]:
        for a, b in matmul_views(m, k, n):
            yield [torch.randn(n), a, b, 1.0, 1.0], torch.empty(m, n)
    yield [torch.randn(5, 1), torch.randn(5, 7), torch.randn(7, 4), 0.5, 2.0], torch.empty(5, 4)


# (batch, c_in, c_out, h, w, kernel, stride, padding, dilation, groups)
CONVS = [
    (1, 5, 7, 3, 9, 1, 1, 0, 1, 1), (2, 13, 17, 9, 11, 1, 1, 0, 1, 1), (1, 3, 33, 1, 1, 1, 1, 0, 1, 1),  # 1x1
    (1, 6, 6, 11, 23, 3, 1, 1, 1, 6), (2, 4, 4, 7, 5, 3, 2, 1, 1, 4), (1, 3, 3, 12, 37, 3, 2, 1, 1, 3),  # dw 3x3
    (1, 2, 2, 9, 19, 3, 1, 0, 1, 2), (1, 2, 2, 4, 4, 3, 2, 2, 1, 2), (1, 8, 8, 2, 2, 3, 1, 1, 1, 8),
    # im2col + GEMM: 7x7 stem, batch 2, stride 2, dilation 2, groups 2 and 4, 1x1 stride 2,
    # more output positions than one chunk (K = 576: 224 positions a chunk; K = 2304: 64,
    # few column tiles; K = 27 and 48 x 50 positions), rows entirely in the padding, a
    # kernel covering the input, c_out not a multiple of the tile
    (1, 3, 8, 23, 29, 7, 2, 3, 1, 1), (2, 8, 16, 13, 11, 3, 1, 1, 1, 1), (1, 8, 12, 9, 10, 3, 2, 1, 1, 1),
    (1, 6, 8, 11, 12, 3, 1, 2, 2, 1), (2, 8, 8, 7, 9, 3, 1, 1, 1, 2), (1, 16, 16, 10, 10, 3, 2, 1, 1, 4),
    (1, 4, 8, 9, 9, 1, 2, 0, 1, 1), (1, 64, 16, 19, 17, 3, 1, 1, 1, 1), (1, 64, 8, 23, 25, 3, 1, 1, 1, 1),
    (1, 256, 4, 9, 9, 3, 1, 1, 1, 1), (1, 3, 5, 48, 50, 3, 1, 1, 1, 1),
    (1, 4, 4, 3, 5, 3, 1, 3, 1, 1), (1, 3, 9, 4, 4, 4, 1, 0, 1, 1), (2, 4, 6, 8, 8, 3, 1, 1, 1, 1),
    # portable fallback: depthwise 5x5 and dilated, 2 output channels per group
    (1, 6, 6, 9, 9, 5, 1, 2, 1, 6), (1, 4, 4, 9, 9, 3, 1, 2, 2, 4), (1, 4, 4, 6, 7, 3, 1, 1, 1, 2),
]


def convolution_cases():
    for n, cin, cout, h, w, k, s, p, d, g in CONVS:
        x, wt = torch.randn(n, cin, h, w), torch.randn(cout, cin // g, k, k)
        out = torch.nn.functional.conv2d(x, wt, None, s, p, d, g)
        yield [x, wt, torch.randn(cout), [s, s], [p, p], [d, d], False, [0, 0], g], out
    x = torch.randn(1, 9, 10, 6).permute(0, 3, 1, 2)  # channels-last storage: strided
    yield [x, torch.randn(6, 1, 3, 3), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 6], torch.empty(1, 6, 9, 10)
    yield [x, torch.randn(5, 6, 1, 1), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1], torch.empty(1, 5, 9, 10)
    yield [x, torch.randn(8, 6, 3, 2), None, [2, 1], [1, 0], [1, 2], False, [0, 0], 1], torch.empty(1, 8, 5, 8)
    # 1d and 3d through im2col
    x = torch.randn(2, 4, 37)
    yield [x, torch.randn(8, 4, 5), torch.randn(8), [2], [2], [2], False, [0], 1], torch.empty(2, 8, 17)
    yield [x, torch.randn(8, 2, 3), None, [1], [1], [1], False, [0], 2], torch.empty(2, 8, 37)
    x = torch.randn(1, 4, 5, 6, 7)
    yield ([x, torch.randn(8, 4, 3, 3, 3), torch.randn(8), [1, 2, 1], [1, 0, 1], [1, 1, 1], False, [0, 0, 0], 1],
           torch.empty(1, 8, 5, 2, 7))
    yield ([x, torch.randn(8, 2, 2, 3, 1), None, [2, 1, 1], [1, 1, 0], [2, 1, 1], False, [0, 0, 0], 2],
           torch.empty(1, 8, 3, 6, 7))


def convolution_clamp_cases():
    """The convolution cases (not transposed) with the aten::convolution-only arguments
    dropped and clamp bounds added."""
    bounds = [(0.0, None), (0.0, 6.0), (None, 0.5), (-1.0, 1.0)]
    for i, (args, like) in enumerate(convolution_cases()):
        x, w, b, stride, padding, dilation, _, _, g = args
        yield [x, w, b, stride, padding, dilation, g, *bounds[i % len(bounds)]], like


def conv2d_packed_cases():
    """Channels-last convolutions with packed weights (more in test_conv_packed.py): dense
    with 1 to 3 blocks of 16 channels, depthwise with a vector tail, a residual."""
    from pocket.exporter.custom_ops import pack_conv_weight

    for n, cin, cout, h, w, k, s, p, d, g in [(1, 3, 21, 9, 7, 3, 2, 1, 1, 1), (2, 17, 40, 5, 6, 1, 1, 0, 1, 1),
                                              (1, 19, 19, 12, 13, 3, 1, 1, 1, 19), (1, 6, 6, 9, 9, 5, 1, 2, 2, 6)]:
        x, wt = torch.randn(n, cin, h, w), torch.randn(cout, cin // g, k, k)
        y = torch.nn.functional.conv2d(x, wt, None, s, p, d, g).permute(0, 2, 3, 1).contiguous()
        yield ([x.permute(0, 2, 3, 1).contiguous(), pack_conv_weight(wt, g), torch.randn(cout),
                torch.randn(y.shape) if g == 1 else None, cout, [s, s], [p, p], [d, d], g, None, None], y)


def conv2d_winograd_cases():
    """Winograd F(2x2, 3x3) convolutions (more in test_conv_packed.py): odd sizes and channel
    counts, padding 0 and 2, few tiles (the few-rows tile, a channel split), a residual."""
    from pocket.exporter.custom_ops import pack_winograd_weight

    for n, cin, cout, h, w, p in [(1, 16, 16, 16, 16, 1), (2, 5, 21, 7, 9, 1), (1, 33, 40, 4, 5, 0),
                                  (1, 64, 72, 3, 3, 2)]:
        x, wt = torch.randn(n, cin, h, w), torch.randn(cout, cin, 3, 3)
        y = torch.nn.functional.conv2d(x, wt, None, 1, p).permute(0, 2, 3, 1).contiguous()
        yield ([x.permute(0, 2, 3, 1).contiguous(), pack_winograd_weight(wt), torch.randn(cout),
                torch.randn(y.shape) if p != 0 else None, cout, [1, 1], [p, p], [1, 1], 1, None, None], y)


def conv_activation_cases(cases):
    """The .act overloads: each case of the plain op with one activation in turn."""
    from pocket.exporter.custom_ops import CONV_ACTIVATIONS

    names = list(CONV_ACTIVATIONS)
    for i, (args, like) in enumerate(cases()):
        yield [*args, names[i % len(names)]], like


def winograd_magnitude(args):
    """What bounds conv2d_winograd's rounding, per output: |A^T| (sum over input channels of
    |U| |B^T| |d| |B|) |A| + |bias| + |residual| (d: each 2x2 tile's 4x4 input pixels)."""
    from pocket.exporter.custom_ops import unpack_conv_weight

    x, u, b, r, cout, _, (ph, pw) = args[:7]
    n, h, w, _ = x.shape
    oh, ow = h + 2 * ph - 2, w + 2 * pw - 2
    th, tw = (oh + 1) // 2, (ow + 1) // 2
    xp = torch.nn.functional.pad(x.abs().permute(0, 3, 1, 2), (pw, 2 * tw + 2 - w - pw, ph, 2 * th + 2 - h - ph))
    d = torch.nn.functional.unfold(xp, 4, stride=2).reshape(n, -1, 4, 4, th * tw)  # (n, c, 4, 4, tiles)
    bt = torch.tensor([[1.0, 0, 1, 0], [0, 1, 1, 0], [0, 1, 1, 0], [0, 1, 0, 1]])  # |B^T|
    at = torch.tensor([[1.0, 1, 1, 0], [0, 1, 1, 1]])  # |A^T|
    v = torch.einsum("ik,nckls,jl->ncijs", bt, d, bt)
    m = torch.einsum("ocij,ncijs->noijs", unpack_conv_weight(u.abs(), cout, 1), v)
    y = torch.einsum("ai,noijs,bj->nosab", at, m, at).reshape(n, cout, th, tw, 2, 2)
    y = y.permute(0, 2, 4, 3, 5, 1).reshape(n, 2 * th, 2 * tw, cout)[:, :oh, :ow]
    return y + (b.abs() if b is not None else 0) + (r.abs() if r is not None else 0)


def max_pool_channels_last_cases():
    """Channels-last max pooling (NaN and signed zeros: test_conv_packed.py): vector runs and
    tails of channels, padding, stride, dilation, ceil mode."""
    for shape, k, s, p, d, ceil in [((1, 12, 12, 16), 3, 2, 1, 1, False), ((2, 7, 9, 37), 2, 1, 1, 2, True),
                                    ((1, 5, 5, 3), 5, 1, 2, 1, False)]:
        x = torch.randn(shape)
        y = torch.nn.functional.max_pool2d(x.permute(0, 3, 1, 2), k, s, p, d, ceil).permute(0, 2, 3, 1)
        yield [x, [k, k], [s, s], [p, p], [d, d], ceil], y.contiguous()


def sdpa_cases():
    for hq, hkv, t, start, d in [(1, 1, 1, 0, 8), (4, 2, 1, 20, 64), (3, 1, 5, 7, 13), (2, 2, 3, 30, 40),
                                 (6, 3, 1, 50, 37), (2, 1, 33, 0, 16)]:
        s = start + t + 3
        args = [torch.randn(1, hq, t, d) * 2, torch.randn(1, hkv, s, d) * 2, torch.randn(1, hkv, s, d),
                torch.tensor([start]), d ** -0.5]
        yield args, torch.empty(1, hq, t, d)


def rms_norm_cases():
    for rows, d in [(1, 1), (3, 3), (2, 17), (5, 63), (1, 576), (7, 64), (33, 9)]:
        yield [torch.randn(rows, d) * 3, torch.randn(d), 1e-5], torch.empty(rows, d)


def rope_cases():
    for b, t, h, d in [(1, 1, 1, 2), (1, 1, 9, 64), (1, 3, 5, 6), (2, 5, 3, 34), (1, 17, 2, 16), (1, 2, 3, 18)]:
        yield [torch.randn(b, t, h, d), torch.randn(t, d), torch.randn(t, d)], torch.empty(b, t, h, d)


def rope_magnitude(args):
    """Σ|terms| of each output: the kernel on |x|, |cos| and a sin whose first half is -|sin|
    (y[i] = x[i]·cos[i] - x[i+h]·sin[i]) and second half |sin| (y[i+h] = ... + x[i]·sin[i+h])."""
    x, cos, sin = args
    h = x.shape[-1] // 2
    signed = torch.cat([-sin[:, :h].abs(), sin[:, h:].abs()], dim=-1)
    return run("pocket::rope", [x.abs(), cos.abs(), signed], x)


def swiglu_cases():
    for shape in [(1,), (3,), (17,), (2, 63), (1, 1536), (3, 7, 65), (200,)]:
        gate = torch.randn(shape) * 4
        gate.view(-1)[0] = -100.0
        yield [gate, torch.randn(shape)], torch.empty(shape)


def layer_norm_cases():
    """Rows of 1 to 1000 columns (vector tails), weight and bias each optional, a 2-d
    normalized shape; a transposed input takes the portable path."""
    for rows, cols in [(1, 1), (3, 7), (2, 8), (5, 64), (33, 17), (4, 1000)]:
        x, w, b = torch.randn(rows, cols) * 3 + 1, torch.randn(cols), torch.randn(cols)
        for i, (wi, bi) in enumerate([(w, b), (None, b), (w, None), (None, None)]):
            if i == 0 or cols in (7, 64):
                yield [x, [cols], wi, bi, 1e-5], (torch.empty(rows, cols), torch.empty(rows, 1), torch.empty(rows, 1))
    yield ([torch.randn(2, 3, 4, 5), [4, 5], torch.randn(4, 5), torch.randn(4, 5), 1e-3],
           (torch.empty(2, 3, 4, 5), torch.empty(2, 3, 1, 1), torch.empty(2, 3, 1, 1)))
    yield ([torch.randn(9, 6).t(), [9], torch.randn(9), None, 1e-5],
           (torch.empty(6, 9), torch.empty(6, 1), torch.empty(6, 1)))


def softmax_cases():
    """Along the last dim (vector tails, -1 and its number), and along another (portable);
    a row far below its maximum (exponents under -87)."""
    for shape, dim in [((1,), 0), ((3, 7), 1), ((2, 8), -1), ((5, 4, 33), 2), ((2, 1000), -1), ((4, 6, 5), 1)]:
        x = torch.randn(shape) * 5
        x.view(-1)[0] = -200.0
        yield [x, dim, False], torch.empty(shape)


def gelu_cases():
    """Both approximations on vector tails and tails of the distribution (-30 .. 30)."""
    for shape in [(1,), (7,), (8,), (2, 9), (3, 1000), (2, 3, 65)]:
        x = torch.randn(shape) * 4
        x.view(-1)[:6] = torch.tensor([-30.0, -10.0, -5.0, 0.0, 10.0, 30.0])[: x.numel()]
        for approximate in ("none", "tanh"):
            yield [x, approximate], torch.empty(shape)
    yield [torch.randn(5, 9).t(), "none"], torch.empty(9, 5)  # strided: the portable path


def hard_activation_cases():
    """Vector bodies and tails, the corners of relu6(x + 3) (-3, 3, +-inf, NaN, -0), and a
    strided input (the portable path)."""
    corners = torch.tensor([-3.0, 3.0, -float("inf"), float("inf"), float("nan"), -0.0, -3.0000002, 2.9999998])
    for shape in [(1,), (7,), (8,), (2, 9), (3, 1000), (2, 3, 65)]:
        x = torch.randn(shape) * 4
        x.view(-1)[:8] = corners[: x.numel()]
        yield [x], torch.empty(shape)
    yield [torch.randn(5, 9).t()], torch.empty(9, 5)


def logistic_cases():
    """Vector bodies and tails, both signs far out (where exp(-x) overflows, and where the
    optimized exp stops at -87), +-inf, -0, NaN, and a strided input (the portable path)."""
    inf, nan = float("inf"), float("nan")
    corners = torch.tensor([-inf, inf, nan, -0.0, -87.5, -100.0, 88.0, -20.0, 20.0, 1e-8])
    for shape in [(1,), (7,), (8,), (2, 9), (3, 1000), (2, 3, 65)]:
        x = torch.randn(shape) * 10
        x.view(-1)[:10] = corners[: x.numel()]
        yield [x], torch.empty(shape)
    yield [torch.randn(5, 9).t()], torch.empty(9, 5)


def permute_cases():
    """NCHW -> NHWC of 3 channels (the optimized interleave: vector bodies, tails, chunks of
    4096 pixels, batch items; float32 and int32 bits), and what the portable kernel keeps."""
    for shape in [(1, 3, 1, 1), (2, 3, 3, 5), (1, 3, 64, 65), (2, 3, 100, 90)]:
        x = torch.randn(shape)
        yield [x, [0, 2, 3, 1]], x.permute(0, 2, 3, 1)
    i = torch.randint(-2**31, 2**31 - 1, (1, 3, 7, 9), dtype=torch.int32)
    yield [i, [0, 2, 3, 1]], i.permute(0, 2, 3, 1)
    for x, dims in [(torch.randn(1, 4, 5, 6), [0, 2, 3, 1]), (torch.randn(1, 5, 6, 3), [0, 3, 1, 2]),
                    (torch.randn(1, 3, 5, 12)[..., ::2], [0, 2, 3, 1]), (torch.randn(2, 3, 4), [2, 0, 1])]:
        yield [x, dims], x.permute(*dims)


def run_outputs(name, args, likes, table="portable", threads=1):
    outs = run_kernel(name, [to_native(a) for a in args], [output_buffer(l) for l in likes], table, threads)
    return [torch.from_numpy(np.array(o)) for o in outs]


def check_layer_norm(args, likes, table):
    """All three outputs (y, mean, rstd): the statistics are summed in double by both kernels;
    y differs by the optimized kernel's float32 multiply-add of w and b: 1e-5 * (|y| + 1)."""
    want = run_outputs("aten::native_layer_norm", args, likes)
    for threads in (1, 2):
        got = run_outputs("aten::native_layer_norm", args, likes, table, threads)
        for name, g, w in zip(("y", "mean", "rstd"), got, want):
            assert g.shape == w.shape
            assert torch.all((g - w).abs() <= 1e-5 * (w.abs() + 1)), \
                f"native_layer_norm [{_native.kernel_set(table)}] threads={threads}: {name} differs"


FORMATS = [(4, True), (4, False), (8, True), (8, False)]
# (act_mode, group size, K): group sizes the microkernels take (multiples of 16 / 32) and
# others (the portable fallback), K with tails.
QMODES = [(0, 16, 48), (0, 32, 96), (0, 6, 30), (1, 32, 64), (1, 64, 192), (1, 10, 50), (1, 96, 192), (2, 32, 96),
          (2, 64, 128)]


def linear_q_cases():
    for bits, sym in FORMATS:
        for act_mode, g, k in QMODES:
            for m in (1, 2, 7, 33):
                n = (1, 3, 5, 9, 18)[(m + k) % 5]
                q, s, mins = quantize(torch.randn(n, k), WeightFormat(bits, g, sym))
                if m in (2, 33):  # float16 scales and mins: the gemv and the GEMM path
                    s, mins = s.half(), None if mins is None else mins.half()
                x = torch.randn(m, k) * 3
                if m == 7:
                    x = torch.randn(k, m).t() * 3  # strided
                yield [x, q, s, mins, torch.randn(n) if m % 2 else None, bits, g, act_mode], torch.empty(m, n)


# (act_mode, group size, K) for linear_q_packed: one step per group, odd step counts, groups
# of several blocks of 32 in act_mode 2, a group past the 4-bit span limit (8192: the portable
# fallback; 8-bit weights use groups of 2048, past their limit of 1024).
QP_MODES = [(1, 8, 40), (1, 24, 72), (1, 32, 576), (1, 128, 384), (2, 32, 96), (2, 64, 192), (1, 16384, 16384)]


def linear_q_packed_cases():
    for bits, sym in FORMATS:
        for act_mode, g, k in QP_MODES:
            if bits == 8 and g > 1024:
                g = 2048  # past the 8-bit span limit: the portable fallback
            # m = 48 (a prefill): the activation rows are quantized on both threads
            for m in ((1, 2, 3, 5, 9) + ((48,) if k >= 192 else ())) if k < 16384 else (1, 3):
                n = (16, 32, 48)[(m + k) % 3]
                q, s, mins = quantize(torch.randn(n, k), WeightFormat(bits, g, sym))
                if m in (3, 5):  # float16 scales and mins
                    s, mins = s.half(), None if mins is None else mins.half()
                x = torch.randn(m, k) * 3
                if m == 5:
                    x = torch.randn(k, m).t() * 3  # strided
                bias = torch.randn(n) if m % 2 else None
                yield [x, *pack_linear_weight(q, s, mins, bits), bias, bits, g, act_mode], torch.empty(m, n)


def lookup_int8_cases():
    table = torch.randint(-128, 128, (256,), dtype=torch.int8)
    for n in (1, 31, 32, 33, 1000, 40001):
        x = torch.randint(-128, 128, (n,), dtype=torch.int8)
        x[:256] = torch.arange(-128, 128, dtype=torch.int8)[:n]
        yield [x, table], torch.empty(n, dtype=torch.int8)
    yield [torch.randint(-128, 128, (5, 40), dtype=torch.int8)[:, ::2], table], torch.empty(5, 20, dtype=torch.int8)


def linear_q_magnitude(args):
    """Σ|x| · max|dequantized w| per output (plus |bias|)."""
    x, q, s, mins, bias, bits, g, _ = args
    qmax = {(4, True): 8, (4, False): 15, (8, True): 128, (8, False): 255}[(bits, mins is None)]
    wmax = (s.float().abs() * qmax + (mins.float().abs() if mins is not None else 0)).max()
    mag = x.abs().sum(-1, keepdim=True) * wmax
    return mag + (bias.abs() if bias is not None else 0)


# (batch, c_in, c_out, h, w, kernel (h, w), stride, padding, dilation, groups, zero point):
# channels per group that are not a multiple of any step (3, 5, 7) or tile (17, 33, 40),
# positions not a multiple of a tile, the extreme zero points, padding wider than the
# kernel, a kernel covering the input, K = 2304; groups of fewer than 4 output channels run
# the portable kernel in every set.
CONV_Q8 = [
    (1, 3, 16, 23, 29, (7, 7), 2, 3, 1, 1, 0), (2, 5, 17, 9, 11, (3, 3), 1, 1, 1, 1, -128),
    (1, 8, 33, 13, 10, (3, 3), 2, 1, 1, 1, 127), (1, 7, 40, 6, 9, (1, 1), 1, 0, 1, 1, 37),
    (1, 16, 24, 11, 12, (3, 2), (2, 1), (2, 0), (2, 1), 1, -5), (2, 12, 8, 7, 9, (3, 3), 1, 1, 1, 2, 3),
    (1, 32, 64, 10, 10, (3, 3), 2, 1, 1, 4, -20), (1, 256, 8, 5, 6, (3, 3), 1, 1, 1, 1, 11),
    (1, 4, 4, 3, 5, (3, 3), 1, 3, 1, 1, 0), (1, 3, 9, 4, 4, (4, 4), 1, 0, 1, 1, 100),
    (1, 6, 6, 9, 9, (3, 3), 1, 1, 1, 6, 2), (1, 4, 8, 9, 9, (3, 3), 2, 1, 1, 4, -1),
    # depthwise 3x3 (the fp32 microkernel on exact integers): stride 2 on odd and even sizes,
    # no padding, a plane smaller than the kernel's vectors, one wider than several
    (2, 8, 8, 17, 13, (3, 3), 2, 1, 1, 8, -7), (1, 5, 5, 2, 3, (3, 3), 1, 1, 1, 5, 0),
    (1, 16, 16, 33, 35, (3, 3), 1, 0, 1, 16, 50), (1, 3, 3, 12, 37, (3, 3), 2, 1, 1, 3, -128),
]


def conv2d_q8_cases():
    for n, cin, cout, h, w, k, s, p, d, g, zp in CONV_Q8:
        x = torch.randn(n, cin, h, w) * 2 + 0.3
        x.view(-1)[::7] *= 40  # saturates both ends
        qweight = torch.randint(-128, 128, (cout, cin // g, *k), dtype=torch.int8)
        scales = torch.rand(cout) * 0.02 + 1e-3
        pair = lambda v: list(v) if isinstance(v, tuple) else [v, v]  # noqa: E731
        args = [x, qweight, scales, torch.randn(cout) if (cin + zp) % 2 else None, 0.031, zp, pair(s), pair(p),
                pair(d), g]
        oh = (h + 2 * pair(p)[0] - pair(d)[0] * (k[0] - 1) - 1) // pair(s)[0] + 1
        ow = (w + 2 * pair(p)[1] - pair(d)[1] * (k[1] - 1) - 1) // pair(s)[1] + 1
        yield args, torch.empty(n, cout, oh, ow)
    x = torch.randn(1, 9, 10, 6).permute(0, 3, 1, 2)  # channels-last storage: strided
    yield [x, torch.randint(-127, 128, (8, 6, 3, 3), dtype=torch.int8), torch.rand(8) * 0.01 + 1e-3, None, 0.02, 0,
           [1, 1], [1, 1], [1, 1], 1], torch.empty(1, 8, 9, 10)


def conv2d_q8_packed_cases():
    """The conv2d_q8 cases with the weight packed (and, for groups of fewer than 4 output
    channels, also in OIHW as the exporter stores it) and output clamps (none, ReLU, ReLU6, one
    bound inverted: torch gives out_max everywhere)."""
    bounds = [(None, None), (0.0, None), (0.0, 6.0), (None, -0.5), (1.0, -1.0)]
    for i, (args, like) in enumerate(conv2d_q8_cases()):
        x, qweight, scales, bias, x_scale, zp, stride, padding, dilation, g = args
        weights = [pack_conv_weight(qweight, g)] + ([qweight] if qweight.shape[0] // g < 4 else [])
        for w in weights:
            yield [x, w, scales * 20, bias, x_scale, zp, list(qweight.shape[2:]), stride, padding, dilation, g,
                   *bounds[i % len(bounds)]], like


def conv2d_q8_channels_last_cases():
    """The packed cases on channels-last tensors, every other one with a residual; of every
    three, one has an int8 x (quantized with its x_scale and x_zero_point) and one an int8 y."""
    for i, (args, like) in enumerate(conv2d_q8_packed_cases()):
        x, *rest = args
        x, y = x.permute(0, 2, 3, 1).contiguous(), like.permute(0, 2, 3, 1).contiguous()
        residual = torch.randn(y.shape) * 3 if i % 2 else None
        if i % 3 == 1:
            x = quantize_per_tensor(x, rest[3], rest[4]).to(torch.int8)
        out_quant = (0.05, -3) if i % 3 == 2 else (None, None)
        yield [x, *rest[:3], residual, *rest[3:], *out_quant], y.to(torch.int8) if i % 3 == 2 else y


CASES = {
    "aten::linear": linear_cases,
    "aten::mm": mm_cases,
    "aten::bmm": bmm_cases,
    "aten::addmm": addmm_cases,
    "aten::convolution": convolution_cases,
    "pocket::conv2d_q8": conv2d_q8_cases,
    "pocket::conv2d_packed": conv2d_packed_cases,
    "pocket::conv2d_packed.act": lambda: conv_activation_cases(conv2d_packed_cases),
    "pocket::conv2d_winograd": conv2d_winograd_cases,
    "pocket::conv2d_winograd.act": lambda: conv_activation_cases(conv2d_winograd_cases),
    "pocket::max_pool2d_channels_last": max_pool_channels_last_cases,
    "pocket::convolution_clamp": convolution_clamp_cases,
    "pocket::conv2d_q8_packed": conv2d_q8_packed_cases,
    "pocket::conv2d_q8_channels_last": conv2d_q8_channels_last_cases,
    "pocket::lookup_int8": lookup_int8_cases,
    "pocket::linear_q": linear_q_cases,
    "pocket::linear_q_packed": linear_q_packed_cases,
    "pocket::sdpa": sdpa_cases,
    "pocket::rms_norm": rms_norm_cases,
    "pocket::rope": rope_cases,
    "pocket::swiglu": swiglu_cases,
    "aten::native_layer_norm": layer_norm_cases,
    "aten::_softmax": softmax_cases,
    "aten::gelu": gelu_cases,
    "aten::hardswish": hard_activation_cases,
    "aten::hardsigmoid": hard_activation_cases,
    "aten::sigmoid": logistic_cases,
    "aten::silu": logistic_cases,
    "aten::permute": permute_cases,
}


def test_every_optimized_op_has_cases():
    assert SETS or not any(_native.cpu_features().values()), "this CPU has features but no optimized kernel set"
    for table in SETS:
        missing = set(_native.optimized_ops(table)) - set(CASES)
        assert not missing, f"ops optimized in {_native.kernel_set(table)} without differential cases: {missing}"


@pytest.mark.parametrize("table", SETS)
@pytest.mark.parametrize("op", sorted(CASES))
def test_optimized_matches_portable(op, table):
    if op not in _native.optimized_ops(table):
        pytest.skip(f"{op} has no optimized kernel in {_native.kernel_set(table)}")
    torch.manual_seed(0)
    for args, like in CASES[op]():
        if op == "pocket::linear_q":
            tol = 1e-5 if args[7] == 0 else 1e-6
            check(op, args, like, table, linear_q_magnitude(args), tol)
        elif op == "pocket::linear_q_packed":
            unpacked = unpack_linear_weight(*args[1:4], args[5])
            check(op, args, like, table, linear_q_magnitude([args[0], *unpacked, *args[4:]]), 1e-5)
        elif op == "pocket::sdpa":
            check(op, args, like, table, run(op, args[:2] + [args[2].abs()] + args[3:], like), 1e-5)
        elif op == "pocket::rope":
            check(op, args, like, table, rope_magnitude(args), 1e-5)
        elif op == "pocket::convolution_clamp":  # the unclamped convolution on |x|, |w|, |b| bounds it
            conv_args = absolute(args[:6]) + [False, [0] * (args[0].dim() - 2), args[6]]
            check(op, args, like, table, run("aten::convolution", conv_args, like), 1e-5)
        elif op in ("pocket::conv2d_q8", "pocket::conv2d_q8_packed", "pocket::conv2d_q8_channels_last",
                    "pocket::max_pool2d_channels_last", "pocket::lookup_int8"):
            check(op, args, like, table, 0, 0)
        elif op in ("aten::hardswish", "aten::hardsigmoid"):  # the portable kernel's operations: its bits
            want = run(op, args, like)
            for threads in (1, 2):
                torch.testing.assert_close(run(op, args, like, table, threads), want, rtol=0, atol=0, equal_nan=True)
        elif op in ("aten::sigmoid", "aten::silu"):  # a few ulp of exp and divide, from both
            eager = torch.sigmoid(args[0]) if op == "aten::sigmoid" else torch.nn.functional.silu(args[0])
            for threads in (1, 2):
                got = run(op, args, like, table, threads)
                for want in (run(op, args, like), eager):
                    torch.testing.assert_close(got, want, rtol=2e-6, atol=1e-30, equal_nan=True)
        elif op == "aten::permute":  # moves bits: equal to torch's
            for threads in (1, 2):
                assert torch.equal(run(op, args, like, table, threads), like)
        elif op == "pocket::conv2d_winograd":
            check(op, args, like, table, winograd_magnitude(args), 1e-5)
        elif op in ("pocket::conv2d_packed.act", "pocket::conv2d_winograd.act"):
            # the plain op's bound through the activations' steepest slope (1.5, hardswish's at 3),
            # twice: the sum's own error is within tol · (|sum| + magnitude) <= 2 tol · magnitude
            plain = op.removesuffix(".act")
            mag = (winograd_magnitude(args) if plain == "pocket::conv2d_winograd"
                   else run(plain, absolute(args[:-1]), like))
            check(op, args, like, table, 3 * mag, 1e-5)
        elif op == "aten::native_layer_norm":
            check_layer_norm(args, like, table)
        elif op == "aten::_softmax":  # exp within 2 ulp, float sums; 1e-38 where portable has ~0
            check(op, args, like, table, 1e-30, 1e-5)
        else:
            check_float(op, args, like, table)


@pytest.mark.parametrize("table", ["portable"] + SETS)
@pytest.mark.parametrize("op", ["pocket::linear_q", "pocket::linear_q_packed"])
def test_half_scales_give_float_scales_results(op, table):
    """float16 scales and mins are read in place and widened exactly: every kernel set gives
    bit for bit what it gives for float32 scales of the same values, on 1 and 2 threads."""
    torch.manual_seed(1)
    for args, like in CASES[op]():
        if args[2].dtype != torch.float16:
            continue
        wide = args[:2] + [args[2].float(), None if args[3] is None else args[3].float()] + args[4:]
        for threads in (1, 2):
            got, want = run(op, args, like, table, threads), run(op, wide, like, table, threads)
            assert torch.equal(got, want), f"{op} [{_native.kernel_set(table)}] threads={threads}"


@pytest.mark.parametrize("table", SETS)
def test_nn_rows_special_values(table):
    """NaN and infinities: softmax rows holding one take the portable arithmetic (NaN rows);
    gelu gives NaN for NaN and -inf, inf for inf, as the portable kernel."""
    x = torch.randn(6, 11)
    x[1, 3], x[2, 0], x[3, 10], x[4, :] = float("nan"), float("inf"), float("-inf"), float("-inf")
    like = torch.empty(6, 11)
    want = run("aten::_softmax", [x, -1, False], like)
    g = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e-30, -1e-30, 88.0, -88.0])
    for threads in (1, 2):
        got = run("aten::_softmax", [x, -1, False], like, table, threads)
        assert torch.equal(got.isnan(), want.isnan()) and torch.allclose(got[5], want[5], rtol=1e-5, atol=1e-30)
        for approximate in ("none", "tanh"):
            pg = run("aten::gelu", [g, approximate], g)
            og = run("aten::gelu", [g, approximate], g, table, threads)
            assert torch.equal(og.isnan(), pg.isnan()), (approximate, og, pg)
            ok = ~pg.isnan()
            assert torch.allclose(og[ok], pg[ok], rtol=1e-5, atol=1e-30), (approximate, og, pg)


def unit_scale_linear_q(bits, sym, m, k, n, g, act_mode, gen):
    """linear_q inputs whose every scale is 1 (weights' and activations'): integer results."""
    lo, hi = {(4, True): (-8, 7), (4, False): (0, 15), (8, True): (-128, 127), (8, False): (0, 255)}[(bits, sym)]
    qv = torch.randint(lo, hi + 1, (n, k), generator=gen)
    if bits == 4:
        u = (qv + (8 if sym else 0)).to(torch.uint8)
        qweight = u[:, 0::2] | (u[:, 1::2] << 4)
    else:
        qweight = qv.to(torch.int8 if sym else torch.uint8)
    scales = torch.ones(n, k // g)
    mins = None if sym else torch.randint(-3, 4, (n, k // g), generator=gen).float()
    x = torch.randint(-127, 128, (m, k), generator=gen).float()
    x[:, 5::32] = 127.0  # every row and block of 32 has max |x| 127: activation scale exactly 1
    return [x, qweight, scales, mins, None, bits, g, act_mode]


@pytest.mark.parametrize("table", SETS)
@pytest.mark.parametrize("bits,sym", FORMATS)
@pytest.mark.parametrize("act_mode", [1, 2])
def test_linear_q_int8_paths_are_exact(table, bits, sym, act_mode):
    gen = torch.Generator().manual_seed(bits * 10 + act_mode)
    for m in (1, 2, 7, 33):
        args = unit_scale_linear_q(bits, sym, m, 128, 11, 32 if act_mode == 2 else 64, act_mode, gen)
        want = run("pocket::linear_q", args, torch.empty(m, 11))
        assert torch.equal(want, want.round()), "unit scales give integers"
        for threads in (1, 2):
            got = run("pocket::linear_q", args, torch.empty(m, 11), table, threads)
            assert torch.equal(got, want), f"{_native.kernel_set(table)} m={m} threads={threads}"


@pytest.mark.parametrize("table", SETS)
@pytest.mark.parametrize("bits,sym", FORMATS)
@pytest.mark.parametrize("act_mode", [1, 2])
def test_linear_q_packed_is_exact_on_unit_scales(table, bits, sym, act_mode):
    gen = torch.Generator().manual_seed(7 + act_mode + 2 * sym + bits)
    for m in (1, 2, 7):
        x, q, s, mins, _, _, g, _ = unit_scale_linear_q(bits, sym, m, 256, 32, 32 if act_mode == 2 else 64, act_mode,
                                                        gen)
        bias = torch.randint(-9, 9, (32,)).float()
        args = [x, *pack_linear_weight(q, s, mins, bits), bias, bits, g, act_mode]
        want = run("pocket::linear_q", [x, q, s, mins, bias, bits, g, act_mode], torch.empty(m, 32))
        assert torch.equal(want, want.round()), "unit scales give integers"
        for threads in (1, 2):
            got = run("pocket::linear_q_packed", args, torch.empty(m, 32), table, threads)
            assert torch.equal(got, want), f"{_native.kernel_set(table)} m={m} threads={threads}"


def test_portable_kernels_do_not_depend_on_threads():
    """The parallel portable kernels (the fallback everywhere) split work, not arithmetic."""
    torch.manual_seed(0)
    for op in sorted(CASES):
        for args, like in list(CASES[op]())[:12]:
            likes = like if isinstance(like, tuple) else (like,)  # native_layer_norm: three outputs
            one, two = run_outputs(op, args, likes, "portable", 1), run_outputs(op, args, likes, "portable", 2)
            assert all(torch.equal(a, b) or a.is_floating_point() and torch.equal(a.isnan(), b.isnan())
                       and torch.equal(a.nan_to_num(), b.nan_to_num()) for a, b in zip(one, two)), op


def test_parallel_max_pool_matches_aten():
    """max_pool2d_with_indices splits planes over threads: values and indices stay ATen's,
    with padding, dilation and ceil_mode at the window edges."""
    torch.manual_seed(0)
    x = torch.randn(2, 24, 29, 31)
    for k, stride, pad, dil, ceil in [(3, 2, 1, 1, False), (3, 2, 1, 2, True), (2, 2, 0, 1, True)]:
        want = torch.ops.aten.max_pool2d_with_indices(x, [k, k], [stride, stride], [pad, pad], [dil, dil], ceil)
        args = [x, [k, k], [stride, stride], [pad, pad], [dil, dil], ceil]
        for threads in (1, 2):
            got = run_kernel("aten::max_pool2d_with_indices", [to_native(a) for a in args],
                                     [output_buffer(w) for w in want], "portable", threads)
            for g, w in zip(got, want):
                assert torch.equal(torch.from_numpy(np.array(g)), w), (k, stride, pad, dil, ceil, threads)


def test_parallel_elementwise_matches_aten():
    """Elementwise ops computing in floating point split their rows (broadcast or strided
    inputs: a squeeze-excitation product) or elements (contiguous ones) over the threads, and so
    do the unary ops defined for float dtypes only (relu, silu, gelu, ...);
    integer ones stay on one thread (they may report a division by zero, below). Shapes above
    the split's grain, results equal to ATen's on 1 and 2 threads."""
    torch.manual_seed(0)
    x, y = torch.randn(2, 28, 28, 96), torch.randn(2, 28, 28, 96)
    scale, strided = torch.randn(2, 1, 1, 96), torch.randn(2, 96, 28, 28).permute(0, 2, 3, 1)
    i, j = torch.randint(-1000, 1000, (2, 28, 28, 96)), torch.randint(1, 50, (96,))
    cases = [
        ("aten::mul.Tensor", [x, scale], x * scale),
        ("aten::mul.Tensor", [x, scale[:, :, :, :1]], x * scale[:, :, :, :1]),  # a number per row
        ("aten::sub.Tensor", [scale[:, :, :, :1], x, 1], scale[:, :, :, :1] - x),  # the number first
        ("aten::add.Tensor", [x, strided, 1], x + strided),
        ("aten::sub.Tensor", [x, y, 1], x - y),
        ("aten::div.Tensor", [x, y], x / y),
        ("aten::lt.Tensor", [x, scale], x < scale),
        ("aten::neg", [strided], -strided),
        ("aten::neg", [x], -x),
        ("aten::relu", [strided], torch.relu(strided)),  # the float-only unary ops (unary_float)
        ("aten::leaky_relu", [x.double(), 0.25], torch.nn.functional.leaky_relu(x.double(), 0.25)),
        ("aten::remainder.Tensor", [i, j], torch.remainder(i, j)),
    ]
    for op, args, want in cases:
        for threads in (1, 2):
            got = run(op, args, want, "portable", threads)
            assert torch.equal(got, want), (op, threads)
    with pytest.raises(Exception, match="integer division by zero"):
        run("aten::remainder.Tensor", [i, j * 0], i, "portable", 2)


# ---- whole programs: results do not depend on the thread count


def outputs_with_threads(module, threads, calls):
    module.set_num_threads(threads)
    module.reset_buffers()
    return [module.run(method, *args) for method, args in calls]


PROGRAMS = ["mobilenet", "encoder", "llm_fp32", "llm_8da4w", "llm_q8_block32"]


def program_and_calls(name):
    if name == "mobilenet":
        model, _ = models.mobilenet_v2()
        x = torch.randn(1, 3, 64, 64)
        return pocket.export(model, (x,)), [("forward", (x,))]
    if name == "encoder":
        model, (x,) = models.encoder()
        return pocket.export(model, (x,)), [("forward", (x,))]
    from pocket.exporter import QuantConfig
    from pocket.llm.models import export_llm

    quant = {"llm_fp32": None, "llm_8da4w": "8da4w",
             "llm_q8_block32": QuantConfig("q8b", 8, 32, True, "int8_block32", None)}[name]
    program = export_llm(tiny_llm(), quantize=quant)
    prompt = torch.tensor([[5, 17, 42, 7, 1, 88, 3, 9, 60, 2, 11]])
    calls = [("prefill", (prompt, torch.tensor([0])))]
    calls += [("decode", (torch.tensor([[t]]), torch.tensor([prompt.shape[1] + i]))) for i, t in enumerate([4, 8, 15])]
    return program, calls


@pytest.mark.parametrize("name", PROGRAMS)
def test_module_results_do_not_depend_on_thread_count(name):
    program, calls = program_and_calls(name)
    ops = set(program.summary["methods"][calls[0][0]]["ops"])
    assert ops & set(_native.optimized_ops("best")) or not SETS, f"{name} uses no optimized op: {sorted(ops)}"
    module = pocket.Module.from_bytes(program.data)
    one = outputs_with_threads(module, 1, calls)
    two = outputs_with_threads(module, 2, calls)
    for a, b in zip(one, two):
        torch.testing.assert_close(torch.as_tensor(b), torch.as_tensor(a), rtol=1e-5, atol=1e-5)
