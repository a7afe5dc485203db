"""Kernels added for core-op coverage (issue 15) against ATen on strided inputs, edge values
and dtypes beyond OpInfo's capped samples, and their bad inputs (an error naming the op)."""

import pytest
import torch
from harness import call_aten, check, floats, run

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


# ---- pools of 1 and 3 spatial dims, instance norm, diagonal (the rest of the core ops)

@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("include_pad", [False, True])
def test_avg_pool_1d_3d(ceil_mode, include_pad):
    x = torch.randn(2, 3, 11)
    check("aten::avg_pool1d", [x, [3], [2], [1], ceil_mode, include_pad])
    check("aten::avg_pool1d", [x[0].t().contiguous().t(), [4], [], [2], ceil_mode, include_pad])
    v = torch.randn(2, 2, 5, 6, 7)
    check("aten::avg_pool3d", [v, [2, 3, 2], [2, 2, 3], [1, 1, 0], ceil_mode, include_pad, None])
    check("aten::avg_pool3d", [v[0].transpose(1, 3), [3], [], [1], ceil_mode, include_pad, None])
    check("aten::avg_pool3d", [v.double(), [2, 2, 2], [1], [0], ceil_mode, include_pad, 3])


@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool3d_with_indices(ceil_mode):
    v = torch.randn(2, 3, 5, 6, 7)
    v[0, 1, 2, 3, 4] = float("nan")
    check("aten::max_pool3d_with_indices", [v, [2, 3, 2], [2, 1, 2], [1, 1, 0], [1, 1, 1], ceil_mode])
    check("aten::max_pool3d_with_indices", [v[1].transpose(1, 2), [2], [], [0], [2, 1, 1], ceil_mode])
    check("aten::max_pool3d_with_indices", [v.double(), [3, 1, 2], [1], [1, 0, 1], [1], ceil_mode])


@pytest.mark.parametrize("out", [1, 3, 4, 7, 9])
def test_adaptive_avg_pool_1d_3d(out):
    check("aten::adaptive_avg_pool1d", [torch.randn(2, 3, 7), [out]])
    check("aten::adaptive_avg_pool1d", [torch.randn(7, 3).t(), [out]])
    check("aten::_adaptive_avg_pool3d", [torch.randn(1, 2, 5, 7, 4), [out, 2, out]])
    check("aten::_adaptive_avg_pool3d", [torch.randn(2, 3, 4, 6).double().transpose(0, 1), [1, out, 3]])


@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_no_stats(affine):
    for shape in [(2, 3, 5, 4), (6, 4), (1, 5, 3, 2, 2)]:
        x = torch.randn(shape) * 3 + 10  # a large mean: the variance must not cancel
        w, b = (torch.randn(shape[1]), torch.randn(shape[1])) if affine else (None, None)
        check("aten::_native_batch_norm_legit.no_stats", [x, w, b, True, 0.1, 1e-5], rtol=1e-4, atol=1e-5)
    check("aten::_native_batch_norm_legit.no_stats", [torch.randn(3, 2, 4).transpose(0, 2), None, None, True,
                                                      0.1, 1e-3], rtol=1e-4, atol=1e-5)


def test_diagonal():
    x = torch.randn(3, 4, 5)
    for offset in (0, 1, 3, -1, -2, 5, -3, -7):
        for d1, d2 in ((0, 1), (1, 0), (2, 0), (-1, -2)):
            check("aten::diagonal", [x, offset, d1, d2])
    check("aten::diagonal", [x.transpose(0, 2), 1, 0, 1])
    check("aten::diagonal", [torch.arange(12).view(3, 4) > 5, 0, 0, 1])


BAD_MORE = [
    ("aten::avg_pool1d", [torch.randn(2, 3, 4, 5), [2], [], [0], False, True], torch.empty(2, 3, 2),
     r"avg_pool1d: input has shape \[2, 3, 4, 5\], expected \(C, L\) or \(N, C, L\)"),
    ("aten::avg_pool3d", [torch.randn(1, 2, 3, 3, 3), [2, 2], [], [0], False, True, None],
     torch.empty(1, 2, 1, 1, 1), r"avg_pool3d: kernel_size has 2 items, expected 1 or 3"),
    ("aten::avg_pool3d", [torch.randn(1, 2, 3, 3, 3), [2], [], [0], False, True, 0],
     torch.empty(1, 2, 1, 1, 1), r"avg_pool3d: divisor_override must be non-zero"),
    ("aten::max_pool3d_with_indices", [torch.randn(1, 2, 3, 3, 3), [4], [], [0], [1], False],
     (torch.empty(1, 2, 1, 1, 1), torch.empty(1, 2, 1, 1, 1, dtype=torch.int64)),
     r"max_pool3d_with_indices: input \[1, 2, 3, 3, 3\] is too small for kernel size 4"),
    ("aten::max_pool3d_with_indices", [torch.randn(1, 2, 3, 3, 3), [2], [], [2], [1], False],
     (torch.empty(1, 2, 1, 1, 1), torch.empty(1, 2, 1, 1, 1, dtype=torch.int64)),
     r"max_pool3d_with_indices: padding 2 is more than half the kernel extent 2"),
    ("aten::_adaptive_avg_pool3d", [torch.randn(2, 3, 4), [1, 1, 1]], torch.empty(2, 1, 1, 1),
     r"_adaptive_avg_pool3d: input has shape \[2, 3, 4\], expected \(C, D, H, W\)"),
    ("aten::adaptive_avg_pool1d", [torch.randn(2, 3, 4), [0]], torch.empty(2, 3, 1),
     r"adaptive_avg_pool1d: output_size\[0\] is 0, expected 1"),
    ("aten::_native_batch_norm_legit.no_stats", [torch.randn(2, 3, 4), torch.randn(4), None, True, 0.1, 1e-5],
     (torch.empty(2, 3, 4), torch.empty(3), torch.empty(3)),
     r"_native_batch_norm_legit.no_stats: weight has shape \[4\], expected \[3\]"),
    ("aten::_native_batch_norm_legit.no_stats", [torch.randn(2, 3, 4), None, None, False, 0.1, 1e-5],
     (torch.empty(2, 3, 4), torch.empty(3), torch.empty(3)),
     r"_native_batch_norm_legit.no_stats: training=False needs running statistics"),
    ("aten::diagonal", [torch.randn(3, 4), 0, 1, -1], torch.empty(3),
     r"diagonal: dim1 and dim2 are both 1, expected two different dims"),
    ("aten::diagonal", [torch.randn(3), 0, 0, 1], torch.empty(3), r"diagonal: input has 1 dims, expected at least 2"),
]


@pytest.mark.parametrize("op,args,out,message", BAD_MORE, ids=[b[0][6:] for b in BAD_MORE])
def test_more_bad_inputs_name_the_op(op, args, out, message):
    with pytest.raises(PocketError, match=message):
        check(op, args, expected=out)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("include_last", [False, True])
@pytest.mark.parametrize("padding_idx", [-1, 3])
def test_embedding_bag(mode, include_last, padding_idx):
    w = torch.randn(10, 4)
    idx = torch.tensor([1, 3, 4, 5, 3, 3, 2, 9, 0])
    offsets = torch.tensor([0, 3, 3, 7, 9])  # an empty bag, and one of padding rows only
    for op in ("aten::_embedding_bag_forward_only", "aten::_embedding_bag"):
        args = [w, idx, offsets, False, mode, False, None, include_last, padding_idx]
        want = call_aten(op, args)[0]
        out = run(op, args, (want, torch.empty(9, dtype=torch.int64), torch.empty(5, dtype=torch.int64),
                             torch.empty(5, 4, dtype=torch.int64)))[0]
        torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
    psw = torch.randn(9)
    if mode == 0:
        args = [w.double(), idx.int(), offsets.int(), False, 0, False, psw.double(), include_last, padding_idx]
        want = call_aten("aten::_embedding_bag", args)[0]
        out = run("aten::_embedding_bag", args, (want, *(torch.empty(9, dtype=torch.int64),) * 3))[0]
        torch.testing.assert_close(out, want)


def test_embedding_bag_bad_inputs():
    w, idx = torch.randn(10, 4), torch.tensor([1, 2, 3])
    outs = (torch.empty(2, 4), *(torch.empty(3, dtype=torch.int64),) * 3)
    for offsets, message in [(torch.tensor([1, 2]), r"offsets\[0\] is 1; offsets must start at 0"),
                             (torch.tensor([0, 4]), r"offsets\[1\] is 4; .* pass 3 \(the number of indices\)")]:
        with pytest.raises(PocketError, match=r"_embedding_bag: " + message):
            run("aten::_embedding_bag", [w, idx, offsets, False, 0, False, None, False, -1], outs)
    with pytest.raises(PocketError, match=r"_embedding_bag: index 10 is out of range for a weight of 10 rows"):
        run("aten::_embedding_bag", [w, torch.tensor([1, 10, 3]), torch.tensor([0, 1]), False, 0, False, None,
                                     False, -1], outs)
    with pytest.raises(PocketError, match=r"_embedding_bag: per_sample_weights need mode 0 \(sum\), got mode 1"):
        run("aten::_embedding_bag", [w, idx, torch.tensor([0, 1]), False, 1, False, torch.ones(3), False, -1], outs)
    with pytest.raises(PocketError, match=r"_embedding_bag: indices has shape \[1, 3\], expected 1 dim"):
        run("aten::_embedding_bag", [w, idx[None], torch.tensor([0, 1]), False, 0, False, None, False, -1], outs)


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.0, 0.5, float("inf")])
def test_cdist_pdist(p):
    # compute_mode 2: ATen computes p = 2 directly too (no matmul), as this kernel does
    check("aten::_cdist_forward", [torch.randn(3, 5), torch.randn(4, 5), p, 2], rtol=1e-5, atol=1e-5)
    check("aten::_cdist_forward", [torch.randn(2, 1, 3, 4), torch.randn(3, 6, 4).transpose(1, 2).contiguous()
                                   .transpose(1, 2), p, 2], rtol=1e-5, atol=1e-5)
    check("aten::_cdist_forward", [torch.randn(2, 3, 2).double(), torch.randn(1, 0, 2).double(), p, None])
    x = torch.randn(6, 4)
    x[4] = x[1]  # a zero distance
    check("aten::_pdist_forward", [x, p], rtol=1e-5, atol=1e-5)
    xt = x.double().t()  # ATen's pdist takes contiguous inputs only; Pocket's any strides
    check("aten::_pdist_forward", [xt, p], expected=torch.ops.aten._pdist_forward(xt.contiguous(), p))
    check("aten::_pdist_forward", [torch.randn(1, 3), p])


def test_cdist_pdist_bad_inputs():
    with pytest.raises(PocketError, match=r"_cdist_forward: x1 \[3, 5\] and x2 \[4, 6\] must be \(\.\.\., P, M\)"):
        run("aten::_cdist_forward", [torch.randn(3, 5), torch.randn(4, 6), 2.0, None], torch.empty(3, 4))
    with pytest.raises(PocketError, match=r"_cdist_forward: batch dims of x1 \[2, 3, 5\] and x2 \[3, 4, 5\] do not"):
        run("aten::_cdist_forward", [torch.randn(2, 3, 5), torch.randn(3, 4, 5), 2.0, None], torch.empty(2, 3, 4))
    with pytest.raises(PocketError, match=r"_pdist_forward: p is -1, expected a non-negative value"):
        run("aten::_pdist_forward", [torch.randn(3, 5), -1.0], torch.empty(3))
    with pytest.raises(PocketError, match=r"_pdist_forward: input has shape \[3\], expected \(N, M\)"):
        run("aten::_pdist_forward", [torch.randn(3), 2.0], torch.empty(3))


def test_masked_scatter():
    x = torch.randn(3, 4)
    mask = torch.rand(3, 4) > 0.5
    check("aten::masked_scatter", [x, mask, torch.randn(12)])
    check("aten::masked_scatter", [x.t(), mask.t(), torch.randn(4, 5).t()])  # strided source, extra elements
    check("aten::masked_scatter", [x, torch.tensor([True, False, False, True]), torch.randn(2, 3)])  # mask broadcast
    check("aten::masked_scatter", [torch.randn(4, 1), mask.t(), torch.randn(12)])  # self broadcast
    check("aten::masked_scatter", [torch.arange(6), torch.arange(6) % 2 == 0, torch.arange(10, 13)])
    check("aten::masked_scatter", [x, torch.zeros(3, 4, dtype=torch.bool), torch.randn(0)])
    with pytest.raises(PocketError, match=r"masked_scatter: mask has 3 true elements but source only 2"):
        run("aten::masked_scatter", [torch.randn(3), torch.ones(3, dtype=torch.bool), torch.randn(2)], torch.empty(3))
    with pytest.raises(PocketError, match=r"masked_scatter: mask has dtype int64, expected bool"):
        run("aten::masked_scatter", [torch.randn(3), torch.ones(3, dtype=torch.long), torch.randn(3)], torch.empty(3))


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sampler_2d(mode, padding, align):
    x = torch.randn(2, 3, 5, 7)
    grid = torch.rand(2, 4, 6, 2) * 3 - 1.5  # a third of the points outside [-1, 1]
    check("aten::grid_sampler_2d", [x, grid, mode, padding, align], rtol=1e-5, atol=1e-5)
    check("aten::grid_sampler_2d", [x.transpose(2, 3), grid.transpose(1, 2), mode, padding, align], rtol=1e-5, atol=1e-5)
    check("aten::grid_sampler_2d", [torch.randn(1, 2, 1, 1).double(), grid[:1].double(), mode, padding, align])


def test_grid_sampler_2d_bad_inputs():
    x, grid = torch.randn(1, 2, 4, 4), torch.rand(1, 3, 3, 2)
    for args, message in [([x, grid, 3, 0, False], r"interpolation_mode is 3, expected 0 \(bilinear\)"),
                          ([x, grid, 0, 3, False], r"padding_mode is 3, expected 0 \(zeros\)"),
                          ([x[0], grid, 0, 0, False], r"input \[2, 4, 4\] and grid \[1, 3, 3, 2\] must be"),
                          ([x, grid[..., :1], 0, 0, False], r"input \[1, 2, 4, 4\] and grid \[1, 3, 3, 1\] must be")]:
        with pytest.raises(PocketError, match="grid_sampler_2d: " + message):
            run("aten::grid_sampler_2d", args, torch.empty(1, 2, 3, 3))


def test_col2im():
    # (output_size, kernel, dilation, padding, stride): overlapping, strided, dilated, padded blocks
    for size, k, dil, pad, stride in [([5, 6], [2, 3], [1, 1], [0, 0], [1, 1]), ([7, 5], [3, 2], [2, 1], [1, 0], [2, 1]),
                                      ([4, 4], [2, 2], [1, 1], [1, 1], [3, 3]), ([3, 1], [1, 1], [1, 1], [0, 0], [1, 1])]:
        blocks = [(size[a] + 2 * pad[a] - dil[a] * (k[a] - 1) - 1) // stride[a] + 1 for a in range(2)]
        x = torch.randn(2, 3 * k[0] * k[1], blocks[0] * blocks[1])
        check("aten::col2im", [x, size, k, dil, pad, stride])
        check("aten::col2im", [x[1].t().contiguous().t(), size, k, dil, pad, stride])
    with pytest.raises(PocketError, match=r"col2im: input has 7 blocks, but output_size, .* give 4 x 4"):
        run("aten::col2im", [torch.randn(1, 6, 7), [5, 6], [2, 3], [1, 1], [0, 0], [1, 1]], torch.empty(1, 1, 5, 6))
    with pytest.raises(PocketError, match=r"col2im: input has shape \[1, 5, 16\], expected \(N, C \* 6, L\)"):
        run("aten::col2im", [torch.randn(1, 5, 16), [5, 6], [2, 3], [1, 1], [0, 0], [1, 1]], torch.empty(1, 1, 5, 6))


def test_as_strided_empty_strided():
    x = torch.randn(4, 6)
    for size, stride, offset in [([3, 3], [6, 1], 0), ([2, 2], [1, 2], 5), ([5], [4], 2), ([2, 0], [0, 1], 23),
                                 ([3, 2, 2], [0, 6, 1], 1), ([], [], 7)]:
        check("aten::as_strided", [x, size, stride, offset])
    check("aten::as_strided", [torch.arange(8) > 3, [2, 3], [3, 1], None])
    xt = x.t()  # Pocket's storage of a strided input is its row-major copy
    check("aten::as_strided", [xt, [2, 3], [1, 2], 4],
          expected=torch.as_strided(xt.contiguous(), [2, 3], [1, 2], 4))
    out = run("aten::empty_strided", [[3, 4], [1, 3], None, None, None, None], torch.empty(3, 4))[0]
    assert out.shape == (3, 4) and out.dtype == torch.float32
    with pytest.raises(PocketError, match=r"as_strided: the view reaches element 24 of an input of 24 elements"):
        run("aten::as_strided", [x, [3, 3], [6, 2], 8], torch.empty(3, 3))
    with pytest.raises(PocketError, match=r"as_strided: stride has 1 items, size has 2"):
        run("aten::as_strided", [x, [3, 3], [6], 0], torch.empty(3, 3))
    with pytest.raises(PocketError, match=r"empty_strided: stride\[1\] is -1, expected >= 0"):
        run("aten::empty_strided", [[3, 4], [4, -1], None, None, None, None], torch.empty(3, 4))
