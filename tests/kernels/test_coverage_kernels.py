"""Kernels added for core-op coverage (issue 15) against ATen on strided inputs, edge values
and dtypes beyond OpInfo's capped samples, and their bad inputs (an error naming the op)."""

import pytest
import torch
from harness import check, floats

from pocket import PocketError

torch.manual_seed(0)


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, float("inf"), -float("inf"), -1.5])
def test_linalg_vector_norm(ord):
    x = torch.randn(4, 5)
    check("aten::linalg_vector_norm", [x.t(), ord, [0], False, None], rtol=1e-5)
    check("aten::linalg_vector_norm", [x, ord, None, True, None], rtol=1e-5)
    check("aten::linalg_vector_norm", [x.double(), ord, [-1], False, None])


def test_unary_float_family():
    x = torch.randn(3, 7)
    u = x.clamp(-0.99, 0.99)
    for op, arg in [("tan", x), ("asin", u), ("acos", u), ("atan", x), ("sinh", x), ("cosh", x),
                    ("asinh", x), ("acosh", x.abs() + 1), ("atanh", u), ("expm1", x),
                    ("log2", x.abs()), ("log10", x.abs()), ("trunc", x * 4), ("isinf", x / 0)]:
        check(f"aten::{op}", [arg.t()])
    check("aten::log2", [torch.arange(1, 9)], expected=torch.log2(torch.arange(1, 9)))
    check("aten::trunc", [torch.arange(-3, 3)])
    check("aten::isinf", [torch.arange(3)])


def test_round_decimals_bitwise_scalar_reductions():
    x = torch.randn(6, 5) * 100
    for d in (-2, 0, 3):
        check("aten::round.decimals", [x, d])
    for op in ("and", "or", "xor"):
        check(f"aten::bitwise_{op}.Scalar", [torch.randint(-50, 50, (4, 3)), 13])
        check(f"aten::bitwise_{op}.Scalar", [torch.tensor([True, False]), True])
    check("aten::var.dim", [x, [0, 1], False, True], rtol=1e-5)
    check("aten::prod", [torch.randn(3, 4).t(), None])
    check("aten::prod", [torch.arange(1, 8), None])
    check("aten::max", [x.t()])
    check("aten::min", [torch.tensor([1.0, float("nan"), -3.0])])
    check("aten::fill.Scalar", [x, 2.5])


@pytest.mark.parametrize("size,scale", [([10, 14], None), ([7, 9], None), ([3, 4], None),
                                        (None, floats([2.0, 2.0])), (None, floats([1.5, 0.7]))])
def test_upsample(size, scale):
    x = torch.randn(2, 3, 5, 7)
    check("aten::upsample_nearest2d.vec", [x.transpose(2, 3), size, scale])
    check("aten::upsample_bilinear2d.vec", [x, size, False, scale])
    if scale is None:
        check("aten::upsample_bilinear2d.vec", [x, size, True, scale])


@pytest.mark.parametrize("mode", ["reflection", "replication"])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_pads(mode, d):
    x = torch.randn((2, 3) + (4, 5, 6)[3 - d:])
    pad = [1, 2, 3, 0, 2, 1][: 2 * d]
    check(f"aten::{mode}_pad{d}d", [x, pad])
    check(f"aten::{mode}_pad{d}d", [x[0].transpose(-1, -2) if d > 1 else x[0], pad])
    check(f"aten::{mode}_pad{d}d", [torch.randint(0, 9, x.shape[1:]), pad])


def test_sort_topk_with_nan():
    x = torch.randn(4, 7)
    x[1, 2] = float("nan")
    for desc in (False, True):
        check("aten::sort", [x, -1, desc])
        check("aten::sort", [x.t(), 0, desc])
    for k in (0, 1, 3, 7):
        for largest in (True, False):
            check("aten::topk", [x, k, 1, largest, True])


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    idx = torch.randint(0, 5, (3, 4))
    check("aten::scatter_reduce.two", [torch.randn(5, 4), 0, idx, torch.randn(3, 4), reduce, include_self])
    check("aten::scatter_reduce.two", [torch.randint(-9, 9, (4, 5)), 1, idx.clamp(max=4).t()[:, :3],
                                       torch.randint(-9, 9, (4, 3)), reduce, include_self])
    check("aten::scatter_add", [torch.randn(5, 4), 0, idx, torch.randn(3, 4)])


BAD = [
    ("aten::topk", [torch.randn(3, 4), 5, 1, True, True], (torch.empty(3, 5), torch.empty(3, 5, dtype=torch.int64)),
     r"topk: k 5 is out of range for dim 1 of size 4"),
    ("aten::reflection_pad1d", [torch.randn(2, 3), [3, 0]], torch.empty(2, 6),
     r"reflection_pad1d: padding \(3, 0\) does not fit dim 1 of size 3"),
    ("aten::replication_pad2d", [torch.randn(3, 4), [1, 1]], torch.empty(3, 6),
     r"replication_pad2d: padding has 2 items, expected 4"),
    ("aten::upsample_nearest2d.vec", [torch.randn(3, 4, 4), [8, 8], None], torch.empty(3, 8, 8),
     r"upsample_nearest2d: input has shape \[3, 4, 4\], expected \(N, C, H, W\)"),
    ("aten::upsample_bilinear2d.vec", [torch.randn(1, 1, 4, 4), None, False, floats([-1.0, 2.0])],
     torch.empty(1, 1, 8, 8), r"upsample_bilinear2d: scale factor -1 must be positive"),
    ("aten::scatter_reduce.two", [torch.randn(3), 0, torch.tensor([5]), torch.randn(1), "sum", True],
     torch.empty(3), r"scatter_reduce: index 5 is out of bounds for dim 0 with size 3"),
    ("aten::scatter_reduce.two", [torch.randn(3), 0, torch.tensor([1]), torch.randn(1), "median", True],
     torch.empty(3), r"scatter_reduce: reduce must be sum, prod, mean, amax or amin"),
    ("aten::linalg_vector_norm", [torch.arange(4), 2, None, False, None], torch.empty(()),
     r"linalg_vector_norm: dtype int64 -> float32 is not supported"),
    ("aten::acos", [torch.randn(3)], torch.empty(3, dtype=torch.int64), r"acos: dtype int64 is not supported"),
]


@pytest.mark.parametrize("op,args,out,message", BAD, ids=[b[0][6:] for b in BAD])
def test_bad_inputs_name_the_op(op, args, out, message):
    with pytest.raises(PocketError, match=message):
        check(op, args, expected=out)
