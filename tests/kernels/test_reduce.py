"""Reduction and scan kernels (tables/reduce.txt) against ATen."""

import pytest
import torch
from harness import call_aten, check, dtype, run

from pocket import PocketError

torch.manual_seed(0)

SHAPES_DIMS = [
    ((7,), [0]),
    ((3, 5), [-1]),
    ((3, 5), [0]),
    ((2, 3, 4), [0, 2]),
    ((2, 3, 4), [-1, -2]),
    ((2, 3, 4, 5), [1, 3]),
    ((4, 1, 3), [1]),
    ((), [0]),
    ((3, 0, 2), [2]),
]


def strided(t):
    """A non-contiguous view holding t's values: every other column of a wider tensor."""
    big = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype)
    big[..., ::2] = t
    return big[..., ::2]


# ---- sum / mean


@pytest.mark.parametrize("shape,dims", SHAPES_DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_mean_dims(shape, dims, keepdim):
    x = torch.randn(shape)
    check("aten::sum.dim_IntList", [x, dims, keepdim, None])
    check("aten::mean.dim", [x, dims, keepdim, None])


@pytest.mark.parametrize("dims", [None, []])
def test_sum_mean_all(dims):
    x = torch.randn(3, 4, 5)
    check("aten::sum.dim_IntList", [x, dims, False, None])
    check("aten::mean.dim", [x, dims, True, None])
    check("aten::mean", [x, None])


def test_sum_mean_non_contiguous():
    x = torch.randn(4, 6, 5).permute(2, 0, 1)
    check("aten::sum.dim_IntList", [x, [1], False, None])
    check("aten::sum.dim_IntList", [x, [0, 2], True, None])
    check("aten::mean.dim", [strided(torch.randn(3, 7)), [-1], False, None])
    check("aten::mean.dim", [torch.randn(8, 6)[::3, 1:], [0], False, None])


def test_sum_mean_over_middle_dims():
    # The last dim kept and contiguous, the reduced dims one block (a global average pool of
    # NHWC): runs of adjacent outputs summed together, 300 channels being two runs.
    x = torch.randn(2, 7, 5, 300)
    check("aten::mean.dim", [x, [1, 2], False, None])
    check("aten::sum.dim_IntList", [x, [1, 2], True, None])
    check("aten::mean.dim", [x.permute(0, 3, 1, 2).contiguous().permute(0, 2, 3, 1), [1, 2], False, None])
    check("aten::sum.dim_IntList", [torch.randint(-9, 9, (3, 4, 6)), [1], False, None])
    check("aten::mean.dim", [torch.randn(3, 0, 6), [1], False, None])  # nothing to add: NaN


@pytest.mark.parametrize("threads", [2, 3])
def test_sum_mean_over_middle_dims_threads(threads):
    # The columns of a global pool are shared among the threads in runs of 16: each output
    # adds the same elements in the same order as on one thread (1300 channels: a short last
    # run; two batch items: one split each; integers: exact sums).
    x = torch.randn(2, 7, 7, 1300)
    for op, args in [
        ("aten::mean.dim", [x, [1, 2], False, None]),
        ("aten::sum.dim_IntList", [torch.randint(-9, 9, (2, 49, 1300)), [1], True, None]),
    ]:
        aten = call_aten(op, args)
        want = run(op, args, aten)[0]
        got = run(op, args, aten, num_threads=threads)[0]
        assert torch.equal(got, want), op
        check(op, args, expected=aten)


def test_sum_large_is_accurate():
    # Accumulating in double keeps long float32 sums close to ATen's pairwise sum.
    x = torch.rand(1 << 18) + 100.0
    check("aten::sum.dim_IntList", [x, [0], False, None], rtol=1e-6)
    check("aten::mean.dim", [x.view(64, -1), [1], False, None], rtol=1e-6)


def test_sum_dtypes():
    i = torch.randint(-100, 100, (4, 5), dtype=torch.int32)
    check("aten::sum.dim_IntList", [i, [1], False, None])  # int32 -> int64
    check("aten::sum.dim_IntList", [i > 0, [0], False, None])  # bool -> int64
    check("aten::sum.dim_IntList", [i, [1], False, dtype(torch.float32)])
    check("aten::sum.dim_IntList", [torch.randn(3, 4), [1], True, dtype(torch.float64)])
    check("aten::sum.dim_IntList", [torch.randn(3, 4).double(), [0], False, None])
    big = torch.full((3,), 2**62, dtype=torch.int64)
    check("aten::sum.dim_IntList", [big, [0], False, None])  # wraps like ATen
    check("aten::mean.dim", [i, [1], False, dtype(torch.float64)])


def test_sum_errors():
    x = torch.randn(3, 4)
    with pytest.raises(PocketError, match=r"sum: dim 2 out of range for a 2-d tensor"):
        check("aten::sum.dim_IntList", [x, [2], False, None], expected=torch.empty(3))
    with pytest.raises(PocketError, match=r"sum: dim 1 appears more than once"):
        check("aten::sum.dim_IntList", [x, [1, -1], False, None], expected=torch.empty(3))
    with pytest.raises(PocketError, match=r"sum: output has dtype float32, expected int64"):
        check("aten::sum.dim_IntList", [x.int(), [1], False, None], expected=torch.empty(3))
    with pytest.raises(PocketError, match=r"sum: dtype 42 is not a valid dtype number"):
        check("aten::sum.dim_IntList", [x, [1], False, 42], expected=torch.empty(3))
    with pytest.raises(PocketError, match=r"sum: output shape \[3\] does not fit"):
        check("aten::sum.dim_IntList", [x, [1], False, None], expected=torch.empty(2))


def test_mean_errors():
    with pytest.raises(PocketError, match=r"mean: result dtype would be int64; mean needs a float"):
        check("aten::mean.dim", [torch.arange(6), [0], False, None],
              expected=torch.empty((), dtype=torch.int64))


# ---- amax / amin / argmax / argmin / max.dim / min.dim


@pytest.mark.parametrize("shape,dims", [s for s in SHAPES_DIMS if 0 not in s[0]])
@pytest.mark.parametrize("keepdim", [False, True])
def test_amax_amin(shape, dims, keepdim):
    x = torch.randn(shape)
    check("aten::amax", [x, dims, keepdim])
    check("aten::amin", [x, dims, keepdim])


def test_amax_all_ints_nan_and_strides():
    check("aten::amax", [torch.randn(3, 4), [], False])
    check("aten::amin", [torch.randint(-9, 9, (5, 6), dtype=torch.int16), [0], True])
    check("aten::amax", [torch.randn(5, 6) > 0, [1], False])
    x = torch.randn(4, 5)
    x[1, 2] = float("nan")
    check("aten::amax", [x, [1], False])
    check("aten::amin", [x, [0], False])
    check("aten::amax", [torch.randn(6, 4).t(), [-1], False])


def test_amax_errors():
    with pytest.raises(PocketError, match=r"amax: cannot reduce over a dim of size 0"):
        check("aten::amax", [torch.randn(3, 0), [1], False], expected=torch.empty(3))
    with pytest.raises(PocketError, match=r"amin: dim -3 out of range"):
        check("aten::amin", [torch.randn(3, 2), [-3], False], expected=torch.empty(3))


@pytest.mark.parametrize("op", ["aten::argmax", "aten::argmin"])
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin(op, shape, dim, keepdim):
    x = torch.randn(shape)
    check(op, [x, dim, keepdim])
    check(op, [x, None, keepdim])


def test_argmax_ties_nan_and_strides():
    t = torch.tensor([[1, 3, 3, 0], [2, 2, 1, 2]])
    for op in ["aten::argmax", "aten::argmin"]:
        check(op, [t, 1, False])  # ties keep the first
        check(op, [t.t(), 0, False])
    n = torch.tensor([[1.0, float("nan"), 3.0, float("nan")]])
    check("aten::argmax", [n, 1, False])  # NaN is the extreme
    check("aten::argmin", [n, 1, False])
    check("aten::argmax", [torch.randn(4, 6)[:, ::2], None, False])


def test_argmax_errors():
    with pytest.raises(PocketError, match=r"argmax: cannot reduce over a dim of size 0"):
        check("aten::argmax", [torch.randn(0, 3), 0, False],
              expected=torch.empty(3, dtype=torch.int64))
    with pytest.raises(PocketError, match=r"argmin: output has dtype float32, expected int64"):
        check("aten::argmin", [torch.randn(3), 0, False], expected=torch.empty(()))


@pytest.mark.parametrize("op", ["aten::max.dim", "aten::min.dim"])
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), -1), ((2, 3, 4), 1), ((2, 3, 4), -3)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim(op, shape, dim, keepdim):
    check(op, [torch.randn(shape), dim, keepdim])


def test_max_min_dim_ints_nan_strides():
    t = torch.tensor([[1, 3, 3, 0], [2, 2, 1, 2]], dtype=torch.int32)
    check("aten::max.dim", [t, 1, False])
    check("aten::min.dim", [t, 1, True])
    n = torch.tensor([[1.0, float("nan"), 3.0, float("nan")]])
    check("aten::max.dim", [n, 1, False])
    check("aten::min.dim", [torch.randn(5, 4).t(), 1, False])


def test_max_dim_errors():
    with pytest.raises(PocketError, match=r"max.dim: dim 2 out of range"):
        check("aten::max.dim", [torch.randn(3, 4), 2, False],
              expected=(torch.empty(3), torch.empty(3, dtype=torch.int64)))
    with pytest.raises(PocketError, match=r"min.dim: indices has dtype int32, expected int64"):
        check("aten::min.dim", [torch.randn(3, 4), 1, False],
              expected=(torch.empty(3), torch.empty(3, dtype=torch.int32)))


# ---- var


@pytest.mark.parametrize("shape,dims", [s for s in SHAPES_DIMS if s[0] != ()] + [((3, 4), None)])
@pytest.mark.parametrize("correction", [None, 0.0, 1.0, 2.5])
@pytest.mark.parametrize("keepdim", [False, True])
def test_var(shape, dims, correction, keepdim):
    check("aten::var.correction", [torch.randn(shape), dims, correction, keepdim])


def test_var_non_contiguous_float64_and_small():
    check("aten::var.correction", [torch.randn(5, 7).t(), [0], 1.0, False])
    check("aten::var.correction", [torch.randn(4, 3, dtype=torch.float64), [1], None, True])
    # n - correction <= 0: inf or nan like ATen
    check("aten::var.correction", [torch.randn(1, 3), [0], 1.0, False])


def test_var_errors():
    with pytest.raises(PocketError, match=r"var: dtype int64 is not supported"):
        check("aten::var.correction", [torch.arange(4), [0], None, False], expected=torch.empty(()))


# ---- any


def test_any():
    x = torch.randn(3, 4, 5) > 1.0
    for keepdim in (False, True):
        check("aten::any.dim", [x, 1, keepdim])
        check("aten::any.dims", [x, [0, -1], keepdim])
        check("aten::any.dims", [x, None, keepdim])
    check("aten::any.dims", [x, [], False])  # an empty list reduces nothing here
    check("aten::any", [x])
    check("aten::any", [torch.zeros(3, 4)])
    check("aten::any.dim", [torch.tensor([[0.0, float("nan")], [0.0, 0.0]]), 1, False])
    check("aten::any.dim", [torch.randint(0, 2, (4, 3), dtype=torch.uint8), 0, False])  # uint8 out
    check("aten::any.dim", [torch.randint(0, 2, (4, 6))[:, ::2], 1, False])
    check("aten::any", [torch.zeros(0)])


def test_any_errors():
    with pytest.raises(PocketError, match=r"any: output has dtype int64, expected bool"):
        check("aten::any.dim", [torch.randn(3, 4), 1, False], expected=torch.empty(3, dtype=torch.int64))


# ---- cumsum / prod


@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((), 0), ((0, 3), 1)])
def test_cumsum(shape, dim):
    check("aten::cumsum", [torch.randn(shape), dim, None])


def test_cumsum_dtypes_and_strides():
    i = torch.randint(-50, 50, (4, 6), dtype=torch.int32)
    check("aten::cumsum", [i, 1, None])  # int32 -> int64
    check("aten::cumsum", [i > 0, 0, None])
    check("aten::cumsum", [i, 0, dtype(torch.float32)])
    check("aten::cumsum", [torch.randn(5, 6).t(), -1, dtype(torch.float64)])
    check("aten::cumsum", [torch.randn(4, 9)[:, ::3], 0, None])


def test_cumsum_errors():
    with pytest.raises(PocketError, match=r"cumsum: dim 2 out of range"):
        check("aten::cumsum", [torch.randn(3, 4), 2, None], expected=torch.empty(3, 4))


@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), -1), ((2, 3, 4), 1), ((2, 0), 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_prod(shape, dim, keepdim):
    check("aten::prod.dim_int", [torch.rand(shape) + 0.5, dim, keepdim, None])


def test_prod_dtypes_and_strides():
    check("aten::prod.dim_int", [torch.randint(-4, 4, (3, 5), dtype=torch.int8), 1, False, None])
    check("aten::prod.dim_int", [torch.randn(4, 3).t(), 0, True, dtype(torch.float64)])
    with pytest.raises(PocketError, match=r"prod: output has dtype int8, expected int64"):
        check("aten::prod.dim_int", [torch.ones(3, dtype=torch.int8), 0, False, None],
              expected=torch.empty((), dtype=torch.int8))
