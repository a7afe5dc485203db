"""pocket::conv2d_packed: channels-last fp32 convolution with the weight in the kernels'
layout, bias + residual + clamp fused. The portable kernel and every optimized kernel set
against the eager reference (exporter/custom_ops.py, itself checked against
torch.nn.functional.conv2d) on odd shapes, strides, padding, dilation, depthwise, 1 and 2
threads; the pack/unpack helpers; the named errors. pocket::conv2d_winograd (3x3, stride 1,
by Winograd F(2x2, 3x3)) the same way against torch.nn.functional.conv2d. Their .act overloads
(an activation after the clamp) against the eager reference through torch's activation."""

import pytest
import torch
from harness import check, op_of, run
from test_optimized import SETS
from test_optimized import run as run_table

from pocket import PocketError
from pocket.exporter.custom_ops import (CONV_ACTIVATIONS, pack_conv_weight, pack_winograd_weight,
                                        unpack_conv_weight, unpack_winograd_weight)
from pocket.exporter.quant.ops import activation_table

OP = "pocket::conv2d_packed"
CONV_ATOL = 1e-4

CASES = [
    # (n, c_in, h, w), c_out, kernel, stride, padding, dilation, depthwise
    ((1, 3, 8, 8), 4, (3, 3), (1, 1), (1, 1), (1, 1), False),
    ((2, 3, 9, 7), 21, (3, 3), (2, 2), (1, 1), (1, 1), False),
    ((1, 4, 10, 11), 33, (3, 2), (2, 1), (0, 1), (2, 1), False),
    ((1, 17, 5, 6), 40, (1, 1), (1, 1), (0, 0), (1, 1), False),  # pointwise: 3 blocks, the last partial
    ((2, 5, 13, 13), 16, (5, 5), (3, 2), (2, 0), (1, 2), False),
    ((1, 3, 4, 4), 2, (4, 4), (1, 1), (0, 0), (1, 1), False),  # kernel covers the input
    ((1, 3, 3, 5), 2, (3, 3), (1, 1), (3, 3), (1, 1), False),  # padding wider than the kernel
    ((1, 8, 11, 9), 64, (1, 1), (2, 2), (0, 0), (1, 1), False),  # strided 1x1
    ((1, 3, 23, 19), 16, (7, 7), (2, 2), (3, 3), (1, 1), False),  # a stem
    # AVX-512 runs a tile's 2-3 blocks of 16 channels together:
    ((1, 50, 5, 7), 40, (1, 1), (1, 1), (0, 0), (1, 1), False),  # a partial third block
    ((1, 6, 9, 8), 33, (3, 3), (1, 1), (1, 1), (1, 1), False),  # 3x3: a third block of one channel
    ((1, 64, 7, 7), 20, (1, 1), (1, 1), (0, 0), (1, 1), False),  # a partial second block; 7-row tiles
    ((2, 6, 7, 7), 6, (3, 3), (1, 1), (1, 1), (1, 1), True),
    ((1, 72, 9, 10), 72, (3, 3), (2, 2), (1, 1), (1, 1), True),  # AVX-512: 4 vectors + a tail
    ((1, 19, 12, 13), 19, (3, 3), (1, 1), (1, 1), (1, 1), True),
    ((1, 5, 9, 9), 5, (5, 3), (1, 2), (2, 1), (2, 1), True),  # dilated, odd kernel
    ((1, 40, 3, 17), 40, (3, 3), (1, 1), (0, 4), (1, 1), True),  # padding wider than the kernel
]


def case_args(shape, c_out, k, stride, padding, dilation, dw, bias=True, residual=False, bounds=(None, None),
              pack=pack_conv_weight):
    n, c_in, h, w = shape
    groups = c_in if dw else 1
    x = torch.randn(shape)
    wt = torch.randn(c_out, c_in // groups, *k)
    b = torch.randn(c_out) if bias else None
    y = torch.nn.functional.conv2d(x, wt, b, stride, padding, dilation, groups)
    r = torch.randn(y.shape) if residual else None
    args = [x.permute(0, 2, 3, 1).contiguous(), pack(wt, groups), b,
            r.permute(0, 2, 3, 1).contiguous() if r is not None else None, c_out, list(stride), list(padding),
            list(dilation), groups, *bounds]
    y = y + r if r is not None else y
    want = (torch.clamp(y, *bounds) if bounds != (None, None) else y).permute(0, 2, 3, 1).contiguous()
    return args, want


def variants(cases=CASES, shift=0):
    """Each case with bias, residual and bounds varied (shift: a different mix)."""
    bounds = [(None, None), (0.0, None), (0.0, 6.0), (-0.5, 0.25)]
    for i, case in enumerate(cases):
        yield case, dict(bias=(i + shift) % 3 != 0, residual=(i + shift) % 2 == 1, bounds=bounds[i % 4])


@pytest.mark.parametrize("case,opts", list(variants()))
def test_portable_matches_eager(case, opts):
    torch.manual_seed(0)
    args, want = case_args(*case, **opts)
    assert torch.allclose(torch.ops.pocket.conv2d_packed(*args), want, rtol=1e-5, atol=CONV_ATOL)
    check(OP, args, atol=CONV_ATOL, expected=want)


@pytest.mark.parametrize("table", SETS)
@pytest.mark.parametrize("case,opts", list(variants()))
def test_optimized_matches_portable_and_eager(case, opts, table):
    torch.manual_seed(1)
    args, want = case_args(*case, **opts)
    portable = run_table(OP, args, want)
    for threads in (1, 2):
        got = run_table(OP, args, want, table, threads)
        torch.testing.assert_close(got, portable, rtol=1e-5, atol=CONV_ATOL)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=CONV_ATOL)


@pytest.mark.parametrize("table", ["portable"] + SETS)
def test_nan_stays_nan_through_the_clamp(table):
    args, want = case_args((1, 4, 6, 6), 20, (3, 3), (1, 1), (1, 1), (1, 1), False, bounds=(0.0, 6.0))
    args[0][0, 2, 2, 1] = float("nan")
    got = run_table(OP, args, want, table)
    assert torch.isnan(got).any() and not torch.isnan(got[0, 0, 0]).any()


@pytest.mark.parametrize("groups", [1, 7])
def test_pack_and_unpack_are_inverse(groups):
    w = torch.randn(7 if groups > 1 else 37, 1 if groups > 1 else 5, 3, 2)
    packed = pack_conv_weight(w, groups)
    assert packed.shape == ((3, 2, 7) if groups > 1 else (3, 3, 2, 5, 16))
    assert torch.equal(unpack_conv_weight(packed, w.shape[0], groups), w)
    if groups == 1:
        assert packed[2, 1, 0, 3, 4] == w[36, 3, 1, 0] and not packed[2, ..., 5:].any()


def failing(args, like, match):
    with pytest.raises(PocketError, match=match):
        run(OP, args, like)


def test_bad_inputs_give_named_errors():
    args, want = case_args((1, 3, 8, 8), 20, (3, 3), (1, 1), (1, 1), (1, 1), False, residual=True)
    x, w, b, r = args[:4]
    rest = args[4:]
    failing([x.double(), w, b, r, *rest], want, r"conv2d_packed: x has dtype float64, expected float32")
    failing([x[0], w, b, r, *rest], want, r"conv2d_packed: x has shape \[8, 8, 3\], expected 4-d")
    failing([x, w[:, :, :, :2], b, r, *rest], want,
            r"conv2d_packed: weight has shape \[2, 3, 3, 2, 16\], expected \[2, 3, 3, 3, 16\]")
    failing([x, w[0], b, r, *rest], want, r"conv2d_packed: weight has shape \[3, 3, 3, 16\], expected 5-d")
    failing([x, w, b, r, 40, *rest[1:]], want, r"weight has shape \[2, 3, 3, 3, 16\], expected \[3, 3, 3, 3, 16\]")
    failing([x, w, b[:5], r, *rest], want, r"conv2d_packed: bias has shape \[5\], expected \[20\]")
    failing([x, w, b, r[:, :3], *rest], want, r"conv2d_packed: residual has shape \[1, 3, 8, 20\], expected")
    failing([x, w, b, r, 20, [1, 1], [1, 1], [1, 1], 2, None, None], want,
            r"conv2d_packed: groups is 2 with 3 input and 20 output channels")
    failing([x, w, b, r, 0, *rest[1:]], want, r"conv2d_packed: out_channels is 0")
    failing([x, w, b, r, 20, [0, 1], *rest[2:]], want, r"conv2d_packed: stride")
    failing([x, w, b, None, 20, [1, 1], [0, 0], [9, 9], 1, None, None], want, r"give an empty output")
    failing([x, w, b, r, *rest[:5], float("nan"), None], want, r"conv2d_packed: out_min is NaN")
    failing([x, torch.randn(3, 3, 4), None, None, 3, [1, 1], [1, 1], [1, 1], 3, None, None], want[..., :3],
            r"conv2d_packed: weight has shape \[3, 3, 4\], expected \[3, 3, 3\]")
    failing([x, w, None, None, 3, [1, 1], [1, 1], [1, 1], 3, None, None], want[..., :3],
            r"conv2d_packed: weight has shape \[2, 3, 3, 3, 16\], expected 3-d")


WINO = "pocket::conv2d_winograd"
WINO_CASES = [  # (n, c_in, h, w), c_out, padding
    ((1, 16, 16, 16), 16, (1, 1)),
    ((2, 3, 7, 9), 5, (1, 1)),      # odd sizes: the last tile row and column half outside
    ((1, 17, 9, 8), 20, (0, 1)),    # a partial block of output channels
    ((1, 8, 5, 11), 33, (2, 0)),
    ((1, 24, 40, 37), 40, (1, 1)),  # many chunks and slices
    ((3, 32, 6, 5), 16, (2, 2)),    # padding wider than the tile's overlap
    ((1, 1, 1, 1), 1, (1, 1)),      # one output
    ((1, 40, 3, 5), 72, (1, 1)),    # few tiles: the few-rows tile; channel blocks split over threads
    ((2, 33, 2, 2), 100, (1, 1)),
]


def wino_args(shape, c_out, padding, **opts):
    return case_args(shape, c_out, (3, 3), (1, 1), padding, (1, 1), False,
                     pack=lambda w, groups: pack_winograd_weight(w), **opts)


@pytest.mark.parametrize("table", ["portable"] + SETS)
@pytest.mark.parametrize("case,opts", list(variants(WINO_CASES, shift=1)))
def test_winograd_matches_conv2d(case, opts, table):
    # Winograd's transforms add and subtract up to 16 products per output where the direct
    # convolution sums 9: its rounding error is a few times the direct one's.
    torch.manual_seed(2)
    args, want = wino_args(*case, **opts)
    assert torch.allclose(torch.ops.pocket.conv2d_winograd(*args), want, rtol=1e-5, atol=CONV_ATOL)
    for threads in (1, 2):
        got = run_table(WINO, args, want, table, threads)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=CONV_ATOL)


ACTIVATIONS = list(CONV_ACTIVATIONS)  # sigmoid, silu, hardsigmoid, hardswish


def activation_cases(cases, shift):
    """variants() with one activation per case in turn."""
    for i, (case, opts) in enumerate(variants(cases, shift)):
        yield case, opts, ACTIVATIONS[i % len(ACTIVATIONS)]


@pytest.mark.parametrize("table", ["portable"] + SETS)
@pytest.mark.parametrize("case,opts,act", list(activation_cases(CASES, 0)) + list(activation_cases(WINO_CASES, 2)))
def test_activation_overloads_match_eager(case, opts, act, table):
    """conv2d_packed.act and conv2d_winograd.act: the activation after bias, residual and clamp,
    on dense, depthwise and Winograd cases, 1 and 2 threads. The optimized kernels apply it to
    each tile they store; their activation is a few ulp from torch's."""
    torch.manual_seed(3)
    wino = len(case) == 3
    args, want = wino_args(*case, **opts) if wino else case_args(*case, **opts)
    op = (WINO if wino else OP) + ".act"
    args, want = [*args, act], CONV_ACTIVATIONS[act](want)
    torch.testing.assert_close(op_of(op)(*args), want, rtol=1e-5, atol=CONV_ATOL)
    for threads in (1, 2):
        got = run_table(op, args, want, table, threads)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=CONV_ATOL)


@pytest.mark.parametrize("table", ["portable"] + SETS)
@pytest.mark.parametrize("act", ACTIVATIONS)
def test_activation_keeps_nan(table, act):
    args, want = case_args((1, 4, 6, 6), 20, (1, 1), (1, 1), (0, 0), (1, 1), False)
    args[0][0, 2, 2, 1] = float("nan")
    got = run_table(OP + ".act", [*args, act], want, table)
    assert torch.isnan(got[0, 2, 2]).all() and not torch.isnan(got[0, 0, 0]).any()


def test_activation_bad_name_gives_named_errors():
    args, want = case_args((1, 3, 8, 8), 20, (3, 3), (1, 1), (1, 1), (1, 1), False)
    for op, a in ((OP, args), (WINO, wino_args((1, 3, 8, 8), 20, (1, 1))[0])):
        with pytest.raises(PocketError, match=op.split("::")[1] + r"\.act: activation is 'gelu', expected sigmoid, "
                           "silu, hardsigmoid or hardswish"):
            run(op + ".act", [*a, "gelu"], want)
        with pytest.raises(ValueError, match=r"\.act: activation is 'gelu', expected one of sigmoid, silu"):
            op_of(op + ".act")(*a, "gelu")


def test_winograd_weight_round_trips():
    w = torch.randn(37, 5, 3, 3)
    packed = pack_winograd_weight(w)
    assert packed.shape == (3, 4, 4, 5, 16) and not packed[2, ..., 5:].any()
    torch.testing.assert_close(unpack_winograd_weight(packed, 37), w, rtol=0, atol=1e-6)
    # term (0, 0) is g[0][0]; (3, 3) is g[2][2]: no arithmetic
    assert packed[2, 0, 0, 3, 4] == w[36, 3, 0, 0] and packed[2, 3, 3, 3, 4] == w[36, 3, 2, 2]
    with pytest.raises(ValueError, match="3x3 kernel"):
        pack_winograd_weight(torch.randn(4, 4, 5, 5))


def test_winograd_bad_inputs_give_named_errors():
    args, want = wino_args((1, 3, 8, 8), 20, (1, 1), residual=True)
    x, w, b, r = args[:4]

    def wino_failing(a, match):
        with pytest.raises(PocketError, match=match):
            run(WINO, a, want)

    wino_failing([x.double(), w, b, r, *args[4:]], r"conv2d_winograd: x has dtype float64, expected float32")
    wino_failing([x, w[:, :3, :3], b, r, *args[4:]],
                 r"conv2d_winograd: weight has shape \[2, 3, 3, 3, 16\], expected \[2, 4, 4, 3, 16\]")
    wino_failing([x, w, b, r, 20, [2, 2], *args[6:]], r"conv2d_winograd: stride \(2, 2\).*stride 1, dilation 1")
    wino_failing([x, w, b, r, 20, [1, 1], [1, 1], [2, 2], *args[8:]], r"conv2d_winograd: .*dilation \(2, 2\)")
    wino_failing([x, w, b[:5], r, *args[4:]], r"conv2d_winograd: bias has shape \[5\], expected \[20\]")
    wino_failing([x, w, b, r, 20, [1, 1], [1, 1], [1, 1], 3, None, None], r"conv2d_winograd: groups is 3, expected 1")
    wino_failing([x, w, b, r[:, :3], *args[4:]], r"conv2d_winograd: residual has shape")
    with pytest.raises(ValueError, match="conv2d_winograd: stride"):
        torch.ops.pocket.conv2d_winograd(x, w, b, r, 20, [2, 2], *args[6:])


def test_eager_reference_checks_shapes():
    args, _ = case_args((1, 3, 8, 8), 20, (3, 3), (1, 1), (1, 1), (1, 1), False)
    with pytest.raises(ValueError, match="conv2d_packed: weight has shape"):
        torch.ops.pocket.conv2d_packed(args[0], args[1][:, :, :, :2], *args[2:])
    with pytest.raises(TypeError, match="conv2d_packed: x must be float32"):
        torch.ops.pocket.conv2d_packed(args[0].double(), *args[1:])


@pytest.mark.parametrize("shape", [(1, 3, 7, 9), (2, 16, 5, 6), (2, 20, 9, 3), (1, 1, 1, 5),
                                   (2, 3, 50, 45), (1, 6, 40, 64)])  # few channels, > 2048 pixels a chunk
@pytest.mark.parametrize("dims", [[0, 2, 3, 1], [0, 3, 1, 2]])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float64])
def test_channel_permutes_at_chain_edges(shape, dims, dtype):
    """aten::permute's transpose path for the layout changes the pass inserts (4-byte
    elements, contiguous), the general path for others, on 1 and 2 threads."""
    x = (torch.randn(shape) * 100).to(dtype)
    want = x.permute(dims).contiguous()
    check("aten::permute", [x, dims], expected=want)
    for table in SETS[:1]:
        for threads in (1, 2):
            got = run_table("aten::permute", [x, dims], want, table, threads)
            assert torch.equal(got, want)
    check("aten::permute", [x.transpose(2, 3).contiguous().transpose(2, 3), dims], expected=want)  # strided


POOLS = [
    # (n, h, w, c), kernel, stride, padding, dilation, ceil_mode
    ((1, 32, 32, 16), [3, 3], [2, 2], [1, 1], [1, 1], False),  # ResNet's stem pool
    ((2, 9, 7, 5), [2, 3], [2, 1], [1, 0], [1, 2], False),
    ((1, 10, 11, 19), [3, 3], [], [1, 1], [1, 1], True),  # stride = kernel, ceil
    ((1, 5, 5, 3), [5, 5], [1, 1], [2, 2], [1, 1], False),
    ((1, 6, 7, 37), [3, 3], [2, 2], [1, 1], [1, 1], False),  # runs of 16 channels and a tail
]


@pytest.mark.parametrize("shape,k,s,p,d,ceil", POOLS)
def test_max_pool2d_channels_last_matches_eager(shape, k, s, p, d, ceil):
    torch.manual_seed(0)
    x = torch.randn(shape)
    x[0, 1, 1, 0] = float("nan")
    x[0, 2, 2, -1] = float("nan")
    want = torch.nn.functional.max_pool2d(x.permute(0, 3, 1, 2), k, s or None, p, d, ceil).permute(0, 2, 3, 1)
    want = want.contiguous()
    exact = dict(rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(torch.ops.pocket.max_pool2d_channels_last(x, k, s, p, d, ceil), want, **exact)
    got = check("pocket::max_pool2d_channels_last", [x, k, s, p, d, ceil], expected=want)
    assert torch.isnan(got[0]).any()
    for table in SETS:
        for threads in (1, 2):
            got = run_table("pocket::max_pool2d_channels_last", [x, k, s, p, d, ceil], want, table, threads)
            torch.testing.assert_close(got, want, **exact, msg=lambda m: f"[{table}, {threads} threads]: {m}")


def test_max_pool2d_channels_last_keeps_the_first_of_equal_values():
    """ATen takes a value only when it is larger: of -0.0 and 0.0 in a window, the first one
    read stays (its sign included), in every kernel set."""
    g = torch.Generator().manual_seed(1)
    signs = torch.randint(0, 2, (1, 6, 6, 21), generator=g).bool()
    x = torch.where(signs, torch.tensor(-0.0), torch.tensor(0.0))
    want = torch.nn.functional.max_pool2d(x.permute(0, 3, 1, 2), 3, 2, 1).permute(0, 2, 3, 1).contiguous()
    assert want.signbit().any() and not want.signbit().all()
    for table in SETS:
        got = run_table("pocket::max_pool2d_channels_last", [x, [3, 3], [2, 2], [1, 1], [1, 1], False], want, table)
        assert torch.equal(got.signbit(), want.signbit()), table


def test_max_pool2d_channels_last_errors():
    x = torch.randn(1, 6, 6, 4)
    like = torch.empty(1, 3, 3, 4)
    with pytest.raises(PocketError, match="max_pool2d_channels_last: x has dtype float64, expected float32"):
        run("pocket::max_pool2d_channels_last", [x.double(), [2, 2], [2, 2], [0, 0], [1, 1], False], like)
    with pytest.raises(PocketError, match=r"max_pool2d_channels_last: x has shape \[6, 6, 4\], expected 4-d"):
        run("pocket::max_pool2d_channels_last", [x[0], [2, 2], [2, 2], [0, 0], [1, 1], False], like)
    with pytest.raises(PocketError, match="max_pool2d_channels_last: .*pad"):
        run("pocket::max_pool2d_channels_last", [x, [2, 2], [2, 2], [3, 3], [1, 1], False], like)


@pytest.mark.parametrize("shape,strided", [((7,), False), ((2, 5, 4, 33), False), ((70001,), False), ((3, 40), True)])
def test_lookup_int8_matches_eager(shape, strided):
    """table[x + 128] over every int8 value (the first 256 elements) and random ones: the
    portable kernel and each optimized set against the eager op, 1 and 2 threads; a strided x
    (the portable loop). Exact."""
    g = torch.Generator().manual_seed(0)
    table = torch.randint(-128, 128, (256,), generator=g, dtype=torch.int8)
    x = torch.randint(-128, 128, (*shape[:-1], shape[-1] * (2 if strided else 1)), generator=g, dtype=torch.int8)
    x.view(-1)[:256] = torch.arange(-128, 128, dtype=torch.int8)[: x.numel()]
    if strided:
        x = x[..., ::2]
    want = torch.ops.pocket.lookup_int8(x, table)
    assert torch.equal(want, table[x.long() + 128])
    check("pocket::lookup_int8", [x, table], rtol=0, atol=0, expected=want)
    for table_set in SETS:
        for threads in (1, 2):
            assert torch.equal(run_table("pocket::lookup_int8", [x, table], want, table_set, threads), want)


def test_lookup_int8_errors():
    x, table = torch.zeros(4, dtype=torch.int8), torch.zeros(256, dtype=torch.int8)
    like = torch.empty(4, dtype=torch.int8)
    with pytest.raises(PocketError, match="lookup_int8: x has dtype float32, expected int8"):
        run("pocket::lookup_int8", [x.float(), table], like)
    with pytest.raises(PocketError, match=r"lookup_int8: table has shape \[255\], expected 256 contiguous values"):
        run("pocket::lookup_int8", [x, table[:255]], like)
    with pytest.raises(PocketError, match="lookup_int8: table has dtype uint8, expected int8"):
        run("pocket::lookup_int8", [x, table.to(torch.uint8)], like)
    with pytest.raises(ValueError, match=r"lookup_int8: table has shape \[255\]"):
        torch.ops.pocket.lookup_int8(x, table[:255])


@pytest.mark.parametrize("fn", [torch.nn.functional.silu, torch.nn.functional.hardswish, torch.sigmoid])
@pytest.mark.parametrize("params", [(0.05, -20, 0.03, -128), (0.2, 100, 0.01, 5)])
def test_activation_table(fn, params):
    """Each entry, dequantized, is fn of the value its index stands for within half an output
    step, or the end of the output range where fn's value lies past it."""
    in_scale, in_zp, out_scale, out_zp = params
    table = activation_table(fn, in_scale, in_zp, out_scale, out_zp).long()
    x = (torch.arange(-128, 128, dtype=torch.float64) - in_zp) * in_scale
    exact = fn(x.float()).double()
    got = (table - out_zp) * out_scale
    lo, hi = (-128 - out_zp) * out_scale, (127 - out_zp) * out_scale
    inside = (exact >= lo) & (exact <= hi)
    assert ((got - exact).abs()[inside] <= out_scale / 2 + 1e-6).all()
    assert (got[exact < lo] == lo).all() and (got[exact > hi] == hi).all()
