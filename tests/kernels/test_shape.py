"""Shape, copy, indexing, creation and symbolic-int kernels (tables/shape.txt, tables/sym.txt).

View-like ops copy into a contiguous output, so each is checked on every dtype and on
non-contiguous (transposed, sliced, expanded) inputs; indexing on negative, int32 and broadcast
indices; creation ops on every output dtype; dtype conversion bit for bit (float16/bfloat16
rounding). Every op also gets at least one bad input that must fail with a message naming it.
"""

import operator

import pytest
import torch
from harness import check, dtype, run

from pocket import PocketError

torch.manual_seed(0)

ALL = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.uint8,
       torch.int16, torch.int32, torch.int64, torch.bool]
INT64_MAX = 2**63 - 1


def rand(shape, dt):
    if dt == torch.bool:
        return torch.randint(0, 2, shape).bool()
    if dt.is_floating_point:
        return torch.randn(shape).to(dt)
    low = 0 if dt == torch.uint8 else -100
    return torch.randint(low, 100, shape).to(dt)


def layouts(shape, dt):
    """The same shape contiguous, transposed (permuted back) and sliced with a step."""
    yield rand(shape, dt)
    rev = tuple(reversed(range(len(shape))))
    yield rand(tuple(reversed(shape)), dt).permute(rev)
    yield rand((*shape[:-1], 2 * shape[-1]), dt)[..., ::2]


def fails(name, args, expected, match):
    with pytest.raises(PocketError, match=match):
        run(name, args, expected)


# ---------------------------------------------------------------- copies of views, every dtype

@pytest.mark.parametrize("dt", ALL, ids=str)
def test_view_like_ops_every_dtype_and_layout(dt):
    for x in layouts((2, 3, 4), dt):
        check("aten::clone", [x, None])
        check("aten::alias", [x])
        check("aten::view", [x.contiguous(), [4, -1]], expected=x.reshape(4, 6))
        check("aten::view", [x, [6, 4]], expected=x.reshape(6, 4))  # reads x in row-major order
        check("aten::_unsafe_view", [x.contiguous(), [24]])
        check("aten::permute", [x, [2, 0, 1]])
        check("aten::transpose.int", [x, 0, -1])
        check("aten::expand", [x[:, :1], [5, 2, 3, 4], False])
        check("aten::slice.Tensor", [x, 2, 1, INT64_MAX, 2])
        check("aten::select.int", [x, 1, -1])
        check("aten::unsqueeze", [x, -2])
        check("aten::squeeze.dims", [x[:, :1], [1, -1]])
        check("aten::flip", [x, [0, -1]])
        check("aten::repeat", [x, [2, 1, 1, 2]])
        check("aten::cat", [[x, x[:, :2]], 1])
        check("aten::t", [x[0]])
        check("aten::roll", [x, [1, -5], [0, 2]])


def test_view_shapes_and_errors():
    x = torch.randn(4, 4)
    check("aten::view", [x, [2, -1, 2]])
    check("aten::view", [torch.randn(1, 1), []])
    check("aten::view", [torch.randn(0, 3), [3, 0]])
    fails("aten::view", [x, [3, 5]], torch.empty(3, 5), r"view: shape \[3, 5\] is invalid for 16 elements")
    fails("aten::view", [x, [-1, -1]], torch.empty(16), r"view: only one dimension can be inferred")
    fails("aten::view", [x, [-1, 3]], torch.empty(16), r"view: shape \[-1, 3\] is invalid")
    fails("aten::_unsafe_view", [x, [-2, 8]], torch.empty(16), r"_unsafe_view: invalid size -2")
    fails("aten::view", [x, [16]], torch.empty(8), r"view: output shape \[16\] does not fit")


def test_permute_transpose_t():
    x = torch.randn(2, 3, 4, 5)
    check("aten::permute", [x, [-1, 0, -2, 1]])
    check("aten::permute", [torch.tensor(3.0), []])
    check("aten::transpose.int", [x.transpose(1, 2), 1, 3])
    check("aten::t", [torch.randn(5)])
    fails("aten::permute", [x, [0, 1, 1, 2]], torch.empty(2, 3, 3, 4), r"permute: dim 1 is repeated")
    fails("aten::permute", [x, [0, 1]], torch.empty(2, 3), r"permute: 2 dims given for a 4-d tensor")
    fails("aten::permute", [x, [0, 1, 2, 4]], x, r"permute: dim 4 out of range")
    fails("aten::t", [x], x, r"t: expected a tensor with at most 2 dims")


def test_expand():
    x = torch.randn(3, 1)
    check("aten::expand", [x, [3, 4], False])
    check("aten::expand", [x, [2, -1, 4], True])
    check("aten::expand", [torch.tensor(1.5), [2, 2], False])
    check("aten::expand", [x.t(), [0, 3], False])
    fails("aten::expand", [x, [4, 4], False], torch.empty(4, 4), r"expand: size 4 at dim 0 does not match")
    fails("aten::expand", [x, [4], False], torch.empty(4), r"expand: 1 sizes given for a 2-d tensor")
    fails("aten::expand", [x, [-1, 3, 1], False], torch.empty(1, 3, 1), r"expand: size -1 at dim 0")


@pytest.mark.parametrize("start,end,step", [
    (None, None, 1), (1, INT64_MAX, 1), (-3, None, 1), (0, -1, 2), (2, 100, 3), (-100, 3, 1),
    (5, 2, 1), (7, 9, 1), (None, -100, 1), (1, 6, 10)])
def test_slice_clamps_like_python(start, end, step):
    x = torch.randn(3, 7)
    check("aten::slice.Tensor", [x, 1, start, end, step])
    check("aten::slice.Tensor", [x.t(), 0, start, end, step])


def test_slice_errors():
    x = torch.randn(3, 7)
    # A huge step keeps the first element (torch's own length arithmetic overflows here).
    check("aten::slice.Tensor", [x, 1, 0, INT64_MAX, INT64_MAX], expected=x[:, :1])
    fails("aten::slice.Tensor", [x, 1, 0, 5, 0], x, r"slice: step must be positive, got 0")
    fails("aten::slice.Tensor", [x, 2, 0, 5, 1], x, r"slice: dim 2 out of range for a 2-d tensor")
    fails("aten::slice.Tensor", [torch.tensor(1.0), 0, 0, 1, 1], x,
          r"slice: expected a tensor with at least 1 dim")


def test_select():
    x = torch.randn(3, 4, 5)
    check("aten::select.int", [x, 0, 2])
    check("aten::select.int", [x.permute(2, 0, 1), -1, -4])
    check("aten::select.int", [torch.randn(4), 0, 3])
    fails("aten::select.int", [x, 1, 4], x[:, 0], r"select: index 4 is out of bounds for dim 1 with size 4")
    fails("aten::select.int", [x, 1, -5], x[:, 0], r"select: index -5 is out of bounds")


def test_unsqueeze_squeeze():
    x = torch.randn(3, 1, 4, 1)
    for d in [0, 2, 4, -1, -5]:
        check("aten::unsqueeze", [x, d])
    check("aten::unsqueeze", [torch.tensor(2.0), -1])
    check("aten::squeeze", [x])
    check("aten::squeeze", [x.transpose(0, 2)])
    check("aten::squeeze.dim", [x, -1])
    check("aten::squeeze.dim", [x, 0])  # size 3: kept
    check("aten::squeeze.dims", [x, [0, 1, -1]])
    check("aten::squeeze.dims", [torch.tensor(2.0), [0]])
    fails("aten::unsqueeze", [x, 5], x, r"unsqueeze: dim 5 out of range for a 5-d tensor")
    fails("aten::squeeze.dims", [x, [4]], x, r"squeeze: dim 4 out of range for a 4-d tensor")
    fails("aten::unsqueeze", [torch.randn([1] * 8), 0], torch.empty([1] * 8), r"unsqueeze: a 8-d tensor")


def test_copy_slice_scatter_select_scatter():
    x = torch.randn(4, 6)
    check("aten::copy", [x, torch.randn(6)[::1], None])
    check("aten::copy", [x, torch.randn(6, 4).t(), None])
    check("aten::copy", [x, torch.randint(0, 9, (4, 1)), None])  # int src into float self
    check("aten::slice_scatter", [x, torch.randn(6, 2).t(), 0, 1, None, 2])
    check("aten::slice_scatter", [x, torch.randn(4, 2), -1, -2, INT64_MAX, 1])
    check("aten::select_scatter", [x, torch.randn(6), 0, -1])
    check("aten::select_scatter", [x.t(), torch.randn(6), 1, 2])
    fails("aten::copy", [x, torch.randn(5), None], x,
          r"copy: src of shape \[5\] cannot be broadcast to \[4, 6\]")
    fails("aten::slice_scatter", [x, torch.randn(4, 3), 1, 0, 2, 1], x,
          r"slice_scatter: src has shape \[4, 3\], expected \[4, 2\]")
    fails("aten::select_scatter", [x, torch.randn(6), 0, 4], x, r"select_scatter: index 4 is out of bounds")


# ---------------------------------------------------------------- cat, split

def test_cat():
    a, b = torch.randn(2, 3), torch.randn(4, 3)
    check("aten::cat", [[a, b], 0])
    check("aten::cat", [[a.t(), b.t(), a.t()], -1])
    check("aten::cat", [[a, torch.randn(0), b], 0])  # legacy empty 1-d tensors are skipped
    check("aten::cat", [[torch.randn(0, 3), a], 0])
    check("aten::cat", [[a, torch.randint(0, 5, (1, 3))], 0])  # type promotion: int into float
    check("aten::cat", [[torch.randn(5)], 0])
    fails("aten::cat", [[a, torch.randn(2, 4)], 0], torch.empty(4, 3),
          r"cat: tensor 1 has shape \[2, 4\], incompatible")
    fails("aten::cat", [[a, b], 2], torch.empty(6, 3), r"cat: dim 2 out of range")
    fails("aten::cat", [[torch.tensor(1.0)], 0], torch.empty(1), r"cat: 0-d tensors cannot be concatenated")


def test_split():
    x = torch.randn(7, 4)
    check("aten::split_with_sizes", [x, [2, 0, 5], 0])
    check("aten::split_with_sizes", [x.t(), [1, 3], 0])
    check("aten::split_with_sizes", [x, [4], -1])
    check("aten::split.Tensor", [x, 3, 0])
    check("aten::split.Tensor", [x.t(), 2, 1])
    check("aten::split.Tensor", [x, 10, 0])
    fails("aten::split_with_sizes", [x, [2, 2], 0], [torch.empty(2, 4)] * 2,
          r"split_with_sizes: split sizes sum to 4 but dim 0 has size 7")
    fails("aten::split_with_sizes", [x, [3, -1, 5], 0], [torch.empty(7, 4)] * 3,
          r"split_with_sizes: invalid split size -1")
    fails("aten::split.Tensor", [x, 3, 0], [torch.empty(3, 4)] * 2, r"split: 3 chunks but 2 outputs")
    fails("aten::split.Tensor", [x, 0, 0], [torch.empty(3, 4)], r"split: split size 0 is invalid")


# ---------------------------------------------------------------- indexing

def test_index_tensor():
    x = torch.randn(5, 6, 7)
    i = torch.tensor([4, -1, 0, 2])
    check("aten::index.Tensor", [x, [i]])
    check("aten::index.Tensor", [x, [None, i]])
    check("aten::index.Tensor", [x, [None, None, i.to(torch.int32)]])
    check("aten::index.Tensor", [x.permute(2, 0, 1), [i, torch.tensor([[1], [2]])]])  # broadcast (2, 4)
    check("aten::index.Tensor", [x, [i, None, torch.tensor(3)]])  # non-adjacent: index dims first
    three = [torch.tensor([0, 1]), torch.tensor([[2], [0]]), torch.tensor([6, 0])]
    check("aten::index.Tensor", [x[:, ::2], three])
    check("aten::index.Tensor", [x, [torch.tensor(2)]])
    check("aten::index.Tensor", [x, [torch.zeros(0, dtype=torch.long)]])
    check("aten::index.Tensor", [torch.randint(0, 9, (5, 3)).t(), [None, i]])
    fails("aten::index.Tensor", [x, [torch.tensor([7])]], x[:1],
          r"index.Tensor: index 7 is out of bounds for dim 0 with size 5")
    fails("aten::index.Tensor", [x, [torch.ones(5, dtype=torch.bool)]], x,
          r"index.Tensor: boolean mask indices are not supported")
    fails("aten::index.Tensor", [x, [i, torch.tensor([1, 2])]], x,
          r"index.Tensor: shapes \[4\] and \[2\] cannot be broadcast")
    fails("aten::index.Tensor", [x, [i.float()]], x, r"index.Tensor: index tensors must be int64 or int32")
    fails("aten::index.Tensor", [x, [i, i, i, i]], x, r"index.Tensor: too many indices for a 3-d tensor")


def test_index_put_kv_cache_update():
    cache = torch.randn(1, 2, 8, 4)  # (batch, heads, max_seq, head_dim)
    pos = torch.tensor([3, 4, 5])
    check("aten::index_put", [cache, [None, None, pos], torch.randn(1, 2, 3, 4), False])
    check("aten::index_put", [cache, [None, None, pos], torch.randn(1, 3, 2, 4).transpose(1, 2), False])
    check("aten::index_put", [cache, [None, None, torch.tensor([-1])], torch.randn(1, 2, 1, 4), False])


def test_index_put():
    x = torch.randn(5, 6)
    i = torch.tensor([0, 2, 2, -1])
    check("aten::index_put", [x, [i], torch.randn(4, 6), True])  # duplicates accumulate
    check("aten::index_put", [x, [i], torch.tensor(1.5), False])  # broadcast value
    check("aten::index_put", [x.t(), [None, i], torch.randn(6, 1), True])
    check("aten::index_put", [x, [i, torch.tensor([1, 3, 5, 0])], torch.randn(4), False])
    check("aten::index_put", [torch.randint(0, 5, (5, 3)), [i], torch.randint(0, 5, (1, 3)), True])
    check("aten::index_put", [x.half(), [i], torch.randn(4, 6).half(), True], rtol=1e-3, atol=1e-3)
    check("aten::index_put", [x.bool(), [i], torch.ones(6, dtype=torch.bool), False])
    fails("aten::index_put", [x, [torch.tensor([5])], torch.randn(6), False], x,
          r"index_put: index 5 is out of bounds for dim 0 with size 5")
    fails("aten::index_put", [x, [i], torch.randn(3, 6), False], x,
          r"index_put: values of shape \[3, 6\] cannot be broadcast to \[4, 6\]")
    fails("aten::index_put", [x, [i], torch.randn(4, 6).double(), False], x,
          r"index_put: input dtype float64 differs from output dtype float32")


def test_index_select():
    x = torch.randn(4, 5, 3)
    check("aten::index_select", [x, 1, torch.tensor([4, 0, 0, 3])])
    check("aten::index_select", [x.transpose(0, 2), -1, torch.tensor([3, 1], dtype=torch.int32)])
    check("aten::index_select", [x, 0, torch.tensor(2)])
    check("aten::index_select", [x, 2, torch.zeros(0, dtype=torch.long)])
    check("aten::index_select", [torch.tensor(5.0), 0, torch.tensor([0])])
    fails("aten::index_select", [x, 1, torch.tensor([5])], x,
          r"index_select: index 5 is out of bounds for dim 1 with size 5")
    fails("aten::index_select", [x, 1, torch.tensor([-1])], x, r"index_select: index -1 is out of bounds")
    fails("aten::index_select", [x, 1, torch.zeros(2, 2, dtype=torch.long)], x,
          r"index_select: index must be 0-d or 1-d")


def test_gather_scatter():
    x = torch.randn(4, 5)
    idx = torch.randint(0, 4, (3, 5))
    check("aten::gather", [x, 0, idx, False])
    check("aten::gather", [x.t(), -1, torch.randint(0, 4, (5, 2)), False])
    check("aten::gather", [torch.randint(0, 9, (4, 5)), 1, torch.randint(0, 5, (2, 3)), False])
    fails("aten::gather", [x, 0, torch.tensor([[4]]), False], x,
          r"gather: index 4 is out of bounds for dim 0 with size 4")
    fails("aten::gather", [x, 0, torch.tensor([[-1]]), False], x, r"gather: index -1 is out of bounds")
    fails("aten::gather", [x, 0, torch.zeros(3, 6, dtype=torch.long), False], x,
          r"gather: index of shape \[3, 6\] does not fit")
    perm = torch.stack([torch.randperm(4)[:3] for _ in range(5)], 1)  # distinct targets per column
    check("aten::scatter.src", [x, 0, perm, torch.randn(3, 5)])
    check("aten::scatter.src", [x.t(), 1, perm.t(), torch.randn(4, 6).t()])
    check("aten::scatter.value", [x, 1, torch.tensor([[0, 4], [3, 2]]), 2.5])
    check("aten::scatter.value", [torch.zeros(3, 3, dtype=torch.int32), 0, torch.tensor([[2, 1, 0]]), 7])
    fails("aten::scatter.src", [x, 0, torch.tensor([[9]]), torch.randn(1, 1)], x,
          r"scatter: index 9 is out of bounds")
    fails("aten::scatter.value", [x, 0, torch.tensor([[-1]]), 1.0], x, r"scatter: index -1 is out of bounds")
    fails("aten::scatter.value", [x, 0, torch.zeros(1, 6, dtype=torch.long), 1.0], x,
          r"scatter: index of shape \[1, 6\]")


# ---------------------------------------------------------------- creation

@pytest.mark.parametrize("dt", ALL, ids=str)
def test_creation_every_dtype(dt):
    value = True if dt == torch.bool else 3
    check("aten::full", [[2, 3], value, dtype(dt), None, None, None])
    check("aten::full", [[], value, None, None, None, None], expected=torch.full([], value, dtype=dt))
    check("aten::full_like", [rand((3, 2), torch.float32).t(), value, dtype(dt), None, None, None, None])
    check("aten::full_like", [rand((3, 2), dt), value, None, None, None, None, None])
    check("aten::scalar_tensor", [value, dtype(dt), None, None, None])
    args = [[2, 5], dtype(dt), None, None, None, None]
    got = run("aten::empty.memory_format", args, torch.empty(2, 5, dtype=dt))[0]
    assert got.shape == (2, 5) and got.dtype == dt and not got.to(torch.float32).any()
    if dt != torch.bool:
        check("aten::arange.start_step", [1, 11, 3, dtype(dt), None, None, None])
        check("aten::arange", [5, dtype(dt), None, None, None])


def test_full_values_and_errors():
    check("aten::full", [[4], 1.7, dtype(torch.int64), None, None, None])  # truncates like torch
    check("aten::full", [[0, 3], 2.5, dtype(torch.float32), None, None, None])
    check("aten::full", [[3], float("-inf"), dtype(torch.float16), None, None, None])
    check("aten::full", [[2], 2**62 + 1, dtype(torch.int64), None, None, None])
    check("aten::full", [[2], 0.1, dtype(torch.bfloat16), None, None, None])
    check("aten::scalar_tensor", [-0.0, dtype(torch.float64), None, None, None])
    fails("aten::full", [[2], 1e10, dtype(torch.int32), None, None, None], torch.empty(2, dtype=torch.int32),
          r"full: value 1e\+10 cannot be converted to int32 without overflow")
    fails("aten::full", [[2], 70000, dtype(torch.float16), None, None, None], torch.empty(2, dtype=torch.float16),
          r"full: value 70000 cannot be converted to float16 without overflow")
    fails("aten::full", [[2], 1.0, dtype(torch.int64), None, None, None], torch.empty(2),
          r"full: dtype int64 does not match the output dtype float32")
    fails("aten::full", [[2, -1], 1.0, None, None, None, None], torch.empty(2),
          r"full: negative size -1 at dim 1")
    fails("aten::full_like", [torch.randn(2), 1, None, None, None, None, None], torch.empty(2, dtype=torch.int64),
          r"full_like: dtype float32 does not match the output dtype int64")
    fails("aten::full", [[100], 0.0, None, None, None, None], torch.empty(10),
          r"full: output shape \[100\] does not fit")


@pytest.mark.parametrize("args,dt", [
    ((0, 10, 1), torch.int64), ((0.5, 3, 0.7), torch.float32), ((10, 0, -3), torch.int32),
    ((-1.5, 1.5, 0.25), torch.float64), ((0, 1, 0.1), torch.float32), ((3, 3, 1), torch.int64),
    ((0, 64, 0.5), torch.float16), ((0, 300, 7), torch.bfloat16), ((-2**40, 2**40, 2**38), torch.int64)])
def test_arange(args, dt):
    check("aten::arange.start_step", [*args, dtype(dt), None, None, None])


def test_arange_overloads_and_errors():
    check("aten::arange", [7, dtype(torch.int64), None, None, None])
    check("aten::arange", [4.5, dtype(torch.float32), None, None, None])
    check("aten::arange.start", [-3, 4, dtype(torch.int32), None, None, None])
    i64 = torch.empty(10, dtype=torch.int64)
    fails("aten::arange.start_step", [0, 10, 0, dtype(torch.int64), None, None, None], i64,
          r"arange: step must be nonzero")
    fails("aten::arange.start_step", [0, 10, -1, dtype(torch.int64), None, None, None], i64,
          r"arange: upper bound and lower bound are inconsistent with step sign")
    fails("aten::arange.start_step", [0, float("nan"), 1.0, None, None, None, None], torch.empty(3),
          r"arange: start, end and step must be finite")
    fails("aten::arange.start_step", [0, 100, 1, dtype(torch.int64), None, None, None], i64,
          r"arange: output shape \[100\] does not fit")
    fails("aten::arange.start_step", [0, 2**62, 1, dtype(torch.int64), None, None, None], i64,
          r"arange: .* elements are too many")


# ---------------------------------------------------------------- dtype conversion

def conversion_source(dt):
    """Values every target dtype holds without overflow (so torch's result is well defined)."""
    x = torch.tensor([0.0, 1.0, -1.0, 2.5, -2.5, 7.9, -7.9, 100.0, 0.5, -0.0, 126.0, 3.0])
    if dt == torch.uint8:
        x = x.abs()
    return x.to(dt).reshape(3, 4).t()  # transposed: non-contiguous


@pytest.mark.parametrize("src", ALL, ids=str)
@pytest.mark.parametrize("dst", ALL, ids=str)
def test_to_copy_every_dtype_pair(src, dst):
    x = conversion_source(src)
    if dst == torch.uint8 and not src == torch.bool:
        x = x.abs() if src != torch.int8 else x.abs().clamp(max=127)
    check("aten::_to_copy", [x, dtype(dst), None, None, None, None, None], rtol=0, atol=0)


def test_to_copy_default_dtype_and_error():
    x = torch.randn(3, 4)[:, ::2]
    check("aten::_to_copy", [x, None, None, None, None, None, None])
    fails("aten::_to_copy", [x, None, None, None, None, None, None], torch.empty(3, 2, dtype=torch.float16),
          r"_to_copy: dtype float32 does not match the output dtype float16")


@pytest.mark.parametrize("dst", [torch.float16, torch.bfloat16], ids=str)
def test_float_to_half_rounds_to_nearest_even(dst):
    bits = torch.randint(-2**31, 2**31, (200000,), dtype=torch.int64).to(torch.int32)
    x = bits.view(torch.float32)
    # Ties, the overflow and subnormal edges, infinities and NaN.
    special = [65504.0, 65519.99, 65520.0, 65536.0, 2.0**-24, 2.0**-25, 1.5 * 2.0**-25, 2.0**-26, 2.0**-14,
               1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 3.3895314e38, 3.4e38,
               float("inf"), float("nan"), 1e-45, -0.0, 6.0e-8, 1e-40]
    x = torch.cat([x, torch.tensor(special), -torch.tensor(special)])
    got = run("aten::_to_copy", [x, dtype(dst), None, None, None, None, None], x.to(dst))[0]
    want = x.to(dst)
    nan = want.isnan()
    assert torch.equal(got.isnan(), nan)
    assert torch.equal(got[~nan].view(torch.int16), want[~nan].view(torch.int16))


@pytest.mark.parametrize("src", [torch.float16, torch.bfloat16], ids=str)
def test_half_to_float_every_bit_pattern(src):
    x = torch.arange(-2**15, 2**15, dtype=torch.int32).to(torch.int16).view(src)
    check("aten::_to_copy", [x, dtype(torch.float32), None, None, None, None, None], rtol=0, atol=0)
    check("aten::_to_copy", [x, dtype(torch.float64), None, None, None, None, None], rtol=0, atol=0)


def test_to_copy_from_double_and_int64_rounding():
    x = torch.tensor([1 + 2**-30, 65519.0, 1e-8, 2**53 + 1.0], dtype=torch.float64)
    for dt in [torch.float32, torch.float16, torch.bfloat16]:
        check("aten::_to_copy", [x, dtype(dt), None, None, None, None, None], rtol=0, atol=0)
    i = torch.tensor([2**53 + 1, 2**24 + 1, -(2**62) - 1, 65519, 3], dtype=torch.int64)
    for dt in [torch.float32, torch.float64, torch.bfloat16]:
        check("aten::_to_copy", [i, dtype(dt), None, None, None, None, None], rtol=0, atol=0)


# ---------------------------------------------------------------- repeat, flip, roll, tril, masked_fill

def test_repeat_flip_roll():
    x = torch.randn(2, 3)
    check("aten::repeat", [x, [2, 3]])
    check("aten::repeat", [x.t(), [1, 2, 1]])
    check("aten::repeat", [x, [0, 2]])
    check("aten::repeat", [torch.tensor(4.0), [3]])
    check("aten::repeat", [torch.tensor(4.0), []])
    fails("aten::repeat", [x, [2]], x, r"repeat: 1 repeats given for a 2-d tensor")
    fails("aten::repeat", [x, [2, -1]], x, r"repeat: invalid repeat count -1 at dim 1")
    check("aten::flip", [x, [-1]])
    check("aten::flip", [x.t(), [0, 1]])
    check("aten::flip", [torch.randn(0, 2), [0]])
    fails("aten::flip", [x, [1, -1]], x, r"flip: dim 1 appears more than once")
    check("aten::roll", [x, [1], []])
    check("aten::roll", [x.t(), [-4], []])
    check("aten::roll", [x, [1, 2], [0, -1]])
    check("aten::roll", [x, [1, 1], [1, 1]])
    check("aten::roll", [torch.randn(3, 4, 5).permute(2, 0, 1), [7, -1, 2], [0, 1, 2]])
    fails("aten::roll", [x, [1, 2], [0]], x, r"roll: 2 shifts given for 1 dims")


@pytest.mark.parametrize("diagonal", [0, 1, -1, 5, -5, INT64_MAX, -INT64_MAX])
def test_tril_triu(diagonal):
    for x in [torch.randn(4, 6), torch.randn(2, 6, 4).transpose(1, 2), torch.randint(0, 2, (3, 5)).bool()]:
        check("aten::tril", [x, diagonal])
        check("aten::triu", [x, diagonal])


def test_tril_error():
    fails("aten::tril", [torch.randn(4), 0], torch.empty(4),
          r"tril: expected a tensor with at least 2 dims, got 1")
    fails("aten::triu", [torch.randn(4), 0], torch.empty(4),
          r"triu: expected a tensor with at least 2 dims, got 1")


def test_masked_fill():
    x = torch.randn(3, 4)
    check("aten::masked_fill.Scalar", [x, torch.rand(3, 4) > 0.5, -1e9])
    check("aten::masked_fill.Scalar", [x.t(), torch.rand(4, 1) > 0.5, float("-inf")])
    check("aten::masked_fill.Scalar", [torch.randn(4), torch.rand(2, 4) > 0.5, 0.0])  # result broadcasts
    check("aten::masked_fill.Scalar", [torch.randint(0, 9, (3, 4)), torch.tensor(True), 5])
    fails("aten::masked_fill.Scalar", [x, torch.ones(3, 4), 0.0], x,
          r"masked_fill: mask has dtype float32, expected bool")


# ---------------------------------------------------------------- symbolic ints

def test_sym_size_and_numel():
    x = torch.randn(3, 5, 2).transpose(0, 2)
    check("aten::sym_size.int", [x, 0])
    check("aten::sym_size.int", [x, -1])
    check("aten::sym_numel", [x])
    assert run("aten::sym_numel", [torch.tensor(2.0)], 0) == 1
    fails("aten::sym_size.int", [x, 3], 0, r"sym_size: dim 3 out of range for a 3-d tensor")
    fails("aten::sym_size.int", [torch.tensor(1.0), 0], 0, r"sym_size: expected a tensor with at least 1 dim")


SYM_INT = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": operator.floordiv,
           "mod": operator.mod, "max": max, "min": min}
SYM_BOOL = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
            "ge": operator.ge}
PAIRS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (0, 5), (-1, 1), (2**62, 3), (-2**63, 1), (5, 5)]


@pytest.mark.parametrize("name", list(SYM_INT) + list(SYM_BOOL))
def test_sym_python_operators(name):
    f = SYM_INT.get(name) or SYM_BOOL[name]
    for a, b in PAIRS:
        want = f(a, b)
        if not -2**63 <= want < 2**63:
            continue
        assert run(f"sym::{name}", [a, b], want) == want, (name, a, b)
        assert type(run(f"sym::{name}", [a, b], want)) is type(want)


def test_sym_neg_and_errors():
    assert run("sym::neg", [5], 0) == -5
    assert run("sym::neg", [-2**63 + 1], 0) == 2**63 - 1
    assert run("sym::floordiv", [-2**63, 2], 0) == -2**62
    assert run("sym::mod", [-2**63, -1], 0) == 0
    assert run("sym::floordiv", [-2**63, 2**63 - 1], 0) == -2
    fails("sym::neg", [-2**63], 0, r"sym::neg: -\(-9223372036854775808\) overflows int64")
    fails("sym::add", [2**63 - 1, 1], 0, r"sym::add: 9223372036854775807 \+ 1 overflows int64")
    fails("sym::sub", [-2**63, 1], 0, r"sym::sub: .* overflows int64")
    fails("sym::mul", [2**32, 2**31], 0, r"sym::mul: 4294967296 \* 2147483648 overflows int64")
    fails("sym::floordiv", [5, 0], 0, r"sym::floordiv: 5 // 0 divides by zero")
    fails("sym::floordiv", [-2**63, -1], 0, r"sym::floordiv: .* overflows int64")
    fails("sym::mod", [5, 0], 0, r"sym::mod: 5 % 0 divides by zero")


@pytest.mark.parametrize("seed", range(20))
def test_index_and_index_put_random_patterns(seed):
    g = torch.Generator().manual_seed(seed)
    shape = [int(s) for s in torch.randint(1, 5, (int(torch.randint(1, 5, (1,), generator=g)),), generator=g)]
    x = torch.randn(shape, generator=g)
    if seed % 2:
        x = x.transpose(0, -1)
    indices = []
    for size in x.shape:
        if torch.rand(1, generator=g) < 0.5:
            indices.append(None)
        else:
            n = int(torch.randint(1, 4, (1,), generator=g))
            one_d = torch.rand(1, generator=g) < 0.7
            indices.append(torch.randint(-size, size, (n,), generator=g) if one_d else torch.tensor(size - 1))
    while indices and indices[-1] is None:
        indices.pop()
    if all(i is None for i in indices):
        indices = [torch.tensor([0])]
    # Index tensors broadcast together: give them all the same length (or 0-d).
    n = max((i.numel() for i in indices if i is not None and i.dim() == 1), default=1)
    indices = [i if i is None or i.dim() == 0 else i[:1].expand(n).clone() if i.numel() < n else i[:n]
               for i in indices]
    want = torch.ops.aten.index.Tensor(x, indices)
    check("aten::index.Tensor", [x, indices])
    check("aten::index_put", [x, indices, torch.randn(want.shape, generator=g), False])
    check("aten::index_put", [x, indices, torch.randn(want.shape[-1:], generator=g), True])
