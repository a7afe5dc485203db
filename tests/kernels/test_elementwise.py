"""Elementwise kernels (tables/elementwise.txt) against their ATen ops.

Each family is checked on broadcast shapes, non-contiguous (transposed, sliced) inputs, 0-d and
empty tensors, the integer and bool dtypes the op accepts, mixed dtypes (torch's type promotion)
and at least one bad input that must fail with a message naming the op.
"""

import pytest
import torch
from harness import check, run

from pocket import PocketError

torch.manual_seed(0)

FLOAT = [torch.float32, torch.float64]
INT = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]

SHAPES = [((3, 4), (4,)), ((2, 1, 5), (3, 1)), ((), (2, 2)), ((4,), ()), ((), ()), ((0, 3), (3,))]


def rand(shape, dtype, low=-5, high=6, nonzero=False):
    """Random values of `dtype`: normal floats, small integers (never 0 when `nonzero`)."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape).bool()
    if dtype.is_floating_point:
        x = torch.randn(shape, dtype=dtype)
        return torch.where(x.abs() < 0.1, torch.ones_like(x), x) if nonzero else x
    if dtype == torch.uint8:
        low = max(low, 0)
    x = torch.randint(low, high, shape).to(dtype)
    return torch.where(x == 0, torch.ones_like(x), x) if nonzero else x


def layouts(dtype, nonzero=False):
    """(a, b) pairs: broadcast shapes, then transposed and sliced (non-contiguous) inputs."""
    for sa, sb in SHAPES:
        yield rand(sa, dtype), rand(sb, dtype, nonzero=nonzero)
    a = rand((5, 3), dtype).t()                    # (3, 5), transposed
    b = rand((6, 5), dtype, nonzero=nonzero)[::2]  # (3, 5), every other row
    yield a, b
    yield a, b[:, 1:2]                             # (3, 1) slice, broadcast


# ---------------------------------------------------------------- binary Tensor-Tensor ops

# op -> (dtypes it accepts, extra args after self/other, divisor must be nonzero for ints)
BINARY = {
    "aten::add.Tensor": (FLOAT + INT + [torch.bool], [1], False),
    "aten::sub.Tensor": (FLOAT + INT, [1], False),
    "aten::mul.Tensor": (FLOAT + INT + [torch.bool], [], False),
    "aten::div.Tensor": (FLOAT + INT + [torch.bool], [], True),
    "aten::maximum": (FLOAT + INT + [torch.bool], [], False),
    "aten::minimum": (FLOAT + INT + [torch.bool], [], False),
    "aten::atan2": (FLOAT + [torch.int64], [], False),
    "aten::remainder.Tensor": (FLOAT + INT, [], True),
    "aten::fmod.Tensor": (FLOAT + INT, [], True),
    "aten::pow.Tensor_Tensor": (FLOAT, [], False),
    "aten::bitwise_and.Tensor": (INT + [torch.bool], [], False),
    "aten::bitwise_or.Tensor": (INT + [torch.bool], [], False),
    "aten::bitwise_xor.Tensor": (INT + [torch.bool], [], False),
    "aten::logical_and": (FLOAT + INT + [torch.bool], [], False),
    "aten::logical_or": (FLOAT + INT + [torch.bool], [], False),
    "aten::logical_xor": (FLOAT + INT + [torch.bool], [], False),
}
for _cmp in ["eq", "ne", "lt", "le", "gt", "ge"]:
    BINARY[f"aten::{_cmp}.Tensor"] = (FLOAT + INT + [torch.bool], [], False)

BINARY_CASES = [(op, dt) for op, (dts, _, _) in BINARY.items() for dt in dts]


@pytest.mark.parametrize("op,dtype", BINARY_CASES, ids=[f"{o[6:]}-{str(d)[6:]}" for o, d in BINARY_CASES])
def test_binary(op, dtype):
    _, extra, nonzero = BINARY[op]
    for a, b in layouts(dtype, nonzero):
        if op == "aten::pow.Tensor_Tensor":
            a = a.abs() + 0.5
        check(op, [a, b, *extra])


@pytest.mark.parametrize("op", ["aten::add.Tensor", "aten::mul.Tensor", "aten::maximum",
                                "aten::eq.Tensor", "aten::lt.Tensor", "aten::logical_and",
                                "aten::where.self"])
def test_binary_mixed_dtypes(op):
    # torch promotes: int + float -> float, int8 + uint8 -> int16, bool + int -> int, and a 0-d
    # tensor only counts when it is of a higher category (int32 [n] + float64 0-d -> float64).
    pairs = [(rand((3, 4), torch.int32), rand((4,), torch.float32)),
             (rand((2, 3), torch.int8), rand((2, 3), torch.uint8)),
             (rand((2, 3), torch.bool), rand((3,), torch.int64)),
             (rand((4,), torch.int32), rand((), torch.float64)),
             (rand((4,), torch.float32), rand((), torch.float64)),
             (rand((4,), torch.int16), rand((), torch.int64))]
    extra = [1] if op == "aten::add.Tensor" else []
    for a, b in pairs:
        if op == "aten::where.self":
            check(op, [rand(a.shape, torch.bool), a, b])
        else:
            check(op, [a, b, *extra])


def test_add_sub_alpha():
    a, b = torch.randn(3, 4), torch.randn(4)
    check("aten::add.Tensor", [a, b, 2.5])
    check("aten::sub.Tensor", [a, b, -0.5])
    i, j = rand((3, 4), torch.int64), rand((4,), torch.int64)
    check("aten::add.Tensor", [i, j, 3])
    check("aten::sub.Tensor", [i, j, 2])
    check("aten::add.Tensor", [rand((5,), torch.bool), rand((5,), torch.bool), True])


def test_integer_wraparound():
    u = torch.tensor([2, 250, 0], dtype=torch.uint8)
    v = torch.tensor([3, 10, 1], dtype=torch.uint8)
    check("aten::sub.Tensor", [u, v, 1])
    check("aten::add.Tensor", [u, v, 1])
    check("aten::mul.Tensor", [u, v])


def test_float_special_values():
    nan, inf = float("nan"), float("inf")
    a = torch.tensor([nan, 1.0, -inf, inf, 0.0, -0.0, 2.0])
    b = torch.tensor([1.0, nan, 3.0, inf, -0.0, 0.0, -inf])
    for op in ["aten::maximum", "aten::minimum", "aten::eq.Tensor", "aten::ne.Tensor",
               "aten::lt.Tensor", "aten::ge.Tensor", "aten::logical_xor", "aten::atan2",
               "aten::div.Tensor", "aten::remainder.Tensor", "aten::fmod.Tensor"]:
        check(op, [a, b])


# ---------------------------------------------------------------- division and remainder

@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32, torch.int8,
                                   torch.uint8])
def test_div_mode(mode, dtype):
    for a, b in layouts(dtype, nonzero=True):
        want = torch.ops.aten.div.Tensor_mode(a, b, rounding_mode=mode)
        check("aten::div.Tensor_mode", [a, b, mode or ""], expected=want)
    for s in [3, -2, 2.5]:
        a = rand((3, 4), dtype)
        want = torch.ops.aten.div.Scalar_mode(a, s, rounding_mode=mode)
        check("aten::div.Scalar_mode", [a, s, mode or ""], expected=want)


def test_div_floor_and_remainder_signs():
    a = torch.tensor([7, -7, 7, -7, 0, 6, -6], dtype=torch.int64)
    b = torch.tensor([2, 2, -2, -2, 3, -3, 3], dtype=torch.int64)
    for x, y in [(a, b), (a.double() + 0.5, b.double()), (a.float(), b.float() * 0.75)]:
        check("aten::div.Tensor_mode", [x, y, "floor"],
              expected=torch.ops.aten.div.Tensor_mode(x, y, rounding_mode="floor"))
        check("aten::div.Tensor_mode", [x, y, "trunc"],
              expected=torch.ops.aten.div.Tensor_mode(x, y, rounding_mode="trunc"))
        check("aten::remainder.Tensor", [x, y])
        check("aten::fmod.Tensor", [x, y])
    zf = torch.tensor([1.0, -1.0, 0.0])
    check("aten::div.Tensor_mode", [zf, torch.zeros(3), "floor"],
          expected=torch.ops.aten.div.Tensor_mode(zf, torch.zeros(3), rounding_mode="floor"))


def test_integer_min_divided_by_minus_one_does_not_trap():
    # torch itself traps (SIGFPE) here; the kernels wrap like two's complement instead.
    lo = torch.iinfo(torch.int64).min
    a, m1 = torch.tensor([lo, 7]), torch.tensor([-1, -1])
    check("aten::div.Tensor_mode", [a, m1, "trunc"], expected=torch.tensor([lo, -7]))
    check("aten::div.Tensor_mode", [a, m1, "floor"], expected=torch.tensor([lo, -7]))
    check("aten::remainder.Tensor", [a, m1], expected=torch.tensor([0, 0]))
    check("aten::fmod.Tensor", [a, m1], expected=torch.tensor([0, 0]))


@pytest.mark.parametrize("op,args", [
    ("aten::div.Tensor_mode", ["floor"]), ("aten::div.Tensor_mode", ["trunc"]),
    ("aten::remainder.Tensor", []), ("aten::fmod.Tensor", [])])
def test_integer_division_by_zero_is_an_error(op, args):
    a, b = torch.tensor([5, -5]), torch.tensor([2, 0])
    name = op.split("::")[1].split(".")[0]
    with pytest.raises(PocketError, match=rf"{name}: integer division by zero"):
        check(op, [a, b, *args], expected=torch.empty(2, dtype=torch.int64))


def test_div_bad_rounding_mode():
    with pytest.raises(PocketError, match=r"div: rounding_mode 'round' is not supported"):
        check("aten::div.Tensor_mode", [torch.randn(3), torch.randn(3), "round"], expected=torch.empty(3))


# ---------------------------------------------------------------- pow

def test_pow():
    x = torch.rand(3, 4) + 0.5
    for e in [2, 3, 0.5, -1.5, 0]:
        check("aten::pow.Tensor_Scalar", [x, e])
        check("aten::pow.Tensor_Scalar", [x.t(), e])
    check("aten::pow.Tensor_Scalar", [torch.tensor(2.0), 3])
    check("aten::pow.Tensor_Scalar", [torch.empty(0, 3), 2])
    for dtype in INT:
        i = rand((3, 4), dtype, low=-3, high=4)
        check("aten::pow.Tensor_Scalar", [i, 3])
        check("aten::pow.Tensor_Scalar", [i, 0.5])  # float result
        check("aten::pow.Tensor_Tensor", [i, rand((4,), dtype, low=0, high=4)])
    check("aten::pow.Tensor_Scalar", [rand((5,), torch.bool), 2])
    big = torch.tensor([3, -3, 7], dtype=torch.int64)
    check("aten::pow.Tensor_Scalar", [big, 41])  # wraps, like torch
    neg = torch.tensor([2, 3, 1, -1, -1, 0])
    check("aten::pow.Tensor_Tensor", [neg, torch.tensor([-1, -2, -3, -3, -2, 2])])
    check("aten::pow.Scalar", [2, rand((3, 4), torch.int64, low=0, high=5)])
    check("aten::pow.Scalar", [2.5, torch.randn(3, 4)])
    check("aten::pow.Scalar", [1.5, rand((4,), torch.int32, low=0, high=5)])
    check("aten::pow.Tensor_Tensor", [torch.rand(2, 1, 3) + 0.5, torch.randn(4, 1)])


def test_pow_negative_integer_exponent_is_an_error():
    with pytest.raises(PocketError, match=r"pow: integers to negative integer powers are not allowed"):
        check("aten::pow.Tensor_Scalar", [torch.tensor([2, 3]), -1], expected=torch.empty(2, dtype=torch.int64))


# ---------------------------------------------------------------- Scalar overloads

SCALAR_OPS = {
    "aten::add.Scalar": [1], "aten::sub.Scalar": [2], "aten::mul.Scalar": [], "aten::div.Scalar": [],
    "aten::remainder.Scalar": [], "aten::fmod.Scalar": [],
    "aten::eq.Scalar": [], "aten::ne.Scalar": [], "aten::lt.Scalar": [], "aten::le.Scalar": [],
    "aten::gt.Scalar": [], "aten::ge.Scalar": [],
}


@pytest.mark.parametrize("op", list(SCALAR_OPS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8])
@pytest.mark.parametrize("scalar", [2, -3, 2.5])
def test_scalar_overloads(op, dtype, scalar):
    if dtype == torch.uint8 and op.startswith("aten::sub"):
        scalar = abs(scalar)
    extra = SCALAR_OPS[op]
    for a in [rand((3, 4), dtype), rand((5, 3), dtype).t(), rand((), dtype), rand((0, 2), dtype)]:
        check(op, [a, scalar, *extra])


def test_scalar_overloads_bool():
    b = rand((6,), torch.bool)
    check("aten::add.Scalar", [b, True, 1])
    check("aten::add.Scalar", [b, 2, 1])       # bool + int -> int64
    check("aten::mul.Scalar", [b, 1.5])        # bool * float -> float32
    check("aten::eq.Scalar", [b, True])
    check("aten::lt.Scalar", [b, 0.5])


def test_comparisons_use_promoted_dtype():
    # 0.1 rounded to float32 equals the float32 tensor's 0.1 (a double compare would not).
    f = torch.tensor([0.1, 0.2], dtype=torch.float32)
    check("aten::eq.Scalar", [f, 0.1])
    check("aten::eq.Tensor", [f, torch.tensor(0.1, dtype=torch.float64)])
    # int64 values above 2**53 compare exactly.
    big = torch.tensor([2**53 + 1, 2**53], dtype=torch.int64)
    check("aten::eq.Scalar", [big, 2**53])
    check("aten::gt.Tensor", [big, torch.tensor([2**53], dtype=torch.int64)])
    check("aten::gt.Scalar", [torch.tensor([1, 2, 3]), 2.5])


def test_comparison_output_must_be_bool():
    with pytest.raises(PocketError, match=r"eq: out has dtype float32, expected bool"):
        check("aten::eq.Tensor", [torch.randn(3), torch.randn(3)], expected=torch.empty(3))


# ---------------------------------------------------------------- where

def test_where():
    for dtype in FLOAT + INT + [torch.bool]:
        for a, b in layouts(dtype):
            cond = rand(torch.broadcast_shapes(a.shape, b.shape), torch.bool)
            check("aten::where.self", [cond, a, b])
    cond = rand((3, 1), torch.bool)
    check("aten::where.self", [cond, torch.randn(4), torch.tensor(float("-inf"))])
    check("aten::where.self", [cond.t(), torch.randn(3, 1), torch.randn(6, 3)[::2, :1]])
    check("aten::where.self", [rand((2, 1, 3), torch.bool), rand((4, 1), torch.int32), torch.randn(3)])


def test_where_errors():
    with pytest.raises(PocketError, match=r"where: condition has dtype int64, expected bool"):
        check("aten::where.self", [torch.tensor([1, 0]), torch.randn(2), torch.randn(2)],
              expected=torch.empty(2))
    with pytest.raises(PocketError, match=r"where: shapes \[2\] and \[3\] cannot be broadcast"):
        check("aten::where.self", [torch.tensor([True, False]), torch.randn(3), torch.randn(3)],
              expected=torch.empty(3))


# ---------------------------------------------------------------- unary ops

# op -> (dtypes, extra args, atol)
UNARY = {
    "aten::sigmoid": (FLOAT + INT + [torch.bool], [], 1e-5),
    "aten::tanh": (FLOAT + INT, [], 1e-5),
    "aten::exp": (FLOAT + INT + [torch.bool], [], 1e-5),
    "aten::log": (FLOAT + INT, [], 1e-5),
    "aten::log1p": (FLOAT + INT, [], 1e-5),
    "aten::sqrt": (FLOAT + INT, [], 1e-5),
    "aten::rsqrt": (FLOAT + INT, [], 1e-5),
    "aten::sin": (FLOAT + INT, [], 1e-5),
    "aten::cos": (FLOAT + INT, [], 1e-5),
    # erf and exact gelu: torch vectorizes erf with its own polynomial, which differs from
    # libm's erf by up to ~1e-6 absolute; rtol stays 1e-5.
    "aten::erf": (FLOAT + INT, [], 1e-6),
    "aten::reciprocal": (FLOAT + INT, [], 1e-5),
    "aten::neg": (FLOAT + INT, [], 1e-5),
    "aten::abs": (FLOAT + INT, [], 1e-5),
    "aten::sign": (FLOAT + INT + [torch.bool], [], 1e-5),
    "aten::floor": (FLOAT + INT, [], 1e-5),
    "aten::ceil": (FLOAT + INT, [], 1e-5),
    "aten::round": (FLOAT + INT, [], 1e-5),
    "aten::isnan": (FLOAT + INT + [torch.bool], [], 1e-5),
    "aten::logical_not": (FLOAT + INT + [torch.bool], [], 1e-5),
    "aten::bitwise_not": (INT + [torch.bool], [], 1e-5),
    "aten::hardtanh": (FLOAT + INT[:-1], [-2, 3], 1e-5),  # torch rejects uint8 with min < 0
    "aten::silu": (FLOAT, [], 1e-5),
    "aten::hardswish": (FLOAT, [], 1e-5),
    "aten::hardsigmoid": (FLOAT, [], 1e-5),
    "aten::leaky_relu": (FLOAT, [0.2], 1e-5),
    "aten::elu": (FLOAT, [1.5, 1.0507, 0.8], 1e-5),
    "aten::softplus": (FLOAT, [2, 1.5], 1e-5),
    "aten::gelu": (FLOAT, ["none"], 1e-6),
}

UNARY_CASES = [(op, dt) for op, (dts, _, _) in UNARY.items() for dt in dts]


def unary_inputs(dtype):
    scale = 4 if dtype.is_floating_point else 1
    yield rand((3, 4), dtype) * scale if dtype.is_floating_point else rand((3, 4), dtype)
    yield rand((5, 3), dtype).t()
    yield rand((4, 6), dtype)[1::2, ::3]
    yield rand((), dtype)
    yield rand((0, 3), dtype)


@pytest.mark.parametrize("op,dtype", UNARY_CASES, ids=[f"{o[6:]}-{str(d)[6:]}" for o, d in UNARY_CASES])
def test_unary(op, dtype):
    _, extra, atol = UNARY[op]
    for x in unary_inputs(dtype):
        check(op, [x, *extra], atol=atol)


def test_unary_special_values():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 0.5, 1.5, 2.5, -2.5, -1.0, 25.0])
    for op, (dts, extra, atol) in UNARY.items():
        if torch.float32 in dts:
            # torch's vectorized gelu gives nan at +inf; the kernel gives the limit, inf.
            check(op, [x[3:] if op == "aten::gelu" else x, *extra], atol=atol)
    check("aten::abs", [torch.tensor([-128, 127], dtype=torch.int8)])
    check("aten::neg", [torch.tensor([0, 3, 255], dtype=torch.uint8)])


def test_gelu_tanh():
    # The tanh approximation: float32 tanh/pow rounding differs slightly from torch's.
    x = torch.randn(4, 5) * 3
    check("aten::gelu", [x, "tanh"], atol=1e-6)
    check("aten::gelu", [x.t().double(), "tanh"])


def test_activation_parameters():
    x = torch.randn(4, 5) * 4
    check("aten::leaky_relu", [x, 0.01])
    check("aten::leaky_relu", [x, 1])
    check("aten::elu", [x, 1, 1, 1])
    check("aten::softplus", [x, 1, 20])
    check("aten::softplus", [x, 0.5, 1])
    check("aten::hardtanh", [x, -1, 1])
    check("aten::hardtanh", [x, -1.5, 0.25])


# ---------------------------------------------------------------- clamp

def test_clamp():
    x = torch.randn(3, 4) * 3
    for lo, hi in [(-1.0, 1.0), (None, 0.5), (-0.5, None), (2.0, -2.0)]:
        check("aten::clamp", [x, lo, hi])
        check("aten::clamp", [x.t(), lo, hi])
    check("aten::clamp", [torch.tensor([1.0, float("nan"), 3.0]), 2.0, None])
    check("aten::clamp", [torch.tensor([1.0, 3.0]), float("nan"), None])
    check("aten::clamp", [torch.empty(0, 3), 0.0, 1.0])
    check("aten::clamp", [torch.tensor(5.0), 0.0, 1.0])
    for dtype in INT:
        i = rand((3, 4), dtype)
        # The exporter passes Scalar? bounds as doubles; torch computed the int output.
        check("aten::clamp", [i, 0.0, 3.0], expected=torch.clamp(i, 0, 3))
        check("aten::clamp", [i, None, 2.0], expected=torch.clamp(i, None, 2))
    i = rand((3, 4), torch.int64)
    check("aten::clamp", [i, 0.5, None])  # float output


def test_clamp_tensor():
    x = torch.randn(3, 4) * 3
    lo, hi = torch.randn(4) - 1, torch.randn(3, 1) + 1
    check("aten::clamp.Tensor", [x, lo, hi])
    check("aten::clamp.Tensor", [x, lo, None])
    check("aten::clamp.Tensor", [x, None, hi])
    check("aten::clamp.Tensor", [x.t(), hi.t(), None])
    check("aten::clamp.Tensor", [torch.tensor([1.0, 3.0]), torch.tensor([float("nan"), 2.0]), None])
    i = rand((3, 4), torch.int32)
    check("aten::clamp.Tensor", [i, rand((4,), torch.int32), rand((3, 1), torch.int32)])
    check("aten::clamp.Tensor", [i, torch.tensor([0.5]), None])  # float output
    check("aten::clamp.Tensor", [torch.randn(2, 1, 3), torch.randn(4, 1), torch.tensor(1.0)])


def test_clamp_errors():
    with pytest.raises(PocketError, match=r"clamp: at least one of min and max must not be None"):
        check("aten::clamp", [torch.randn(3), None, None], expected=torch.empty(3))
    with pytest.raises(PocketError, match=r"clamp: at least one of min and max must not be None"):
        check("aten::clamp.Tensor", [torch.randn(3), None, None], expected=torch.empty(3))
    with pytest.raises(PocketError, match=r"clamp: shapes \[3\] and \[4\] cannot be broadcast"):
        check("aten::clamp.Tensor", [torch.randn(3), torch.randn(4), None], expected=torch.empty(3))


# ---------------------------------------------------------------- bad inputs

@pytest.mark.parametrize("op,args,out,message", [
    ("aten::add.Tensor", [torch.randn(3), torch.randn(4), 1], torch.empty(4),
     r"add: shapes \[3\] and \[4\] cannot be broadcast"),
    ("aten::mul.Tensor", [torch.randn(3, 4), torch.randn(4)], torch.empty(2),
     r"mul: output shape \[3, 4\] does not fit its planned 8 bytes"),
    ("aten::sub.Tensor", [torch.tensor([True]), torch.tensor([True]), 1], torch.empty(1, dtype=torch.bool),
     r"sub: dtype bool is not supported"),
    ("aten::div.Tensor", [torch.tensor([4]), torch.tensor([2])], torch.empty(1, dtype=torch.int64),
     r"div: dtype int64 is not supported \(float32 or float64 expected\)"),
    ("aten::add.Tensor", [torch.randn(3).half(), torch.randn(3), 1], torch.empty(3),
     r"add: dtype float16 is not supported"),
    ("aten::bitwise_and.Tensor", [torch.randn(3), torch.randn(3)], torch.empty(3),
     r"bitwise_and: dtype float32 is not supported \(an integer or bool dtype expected\)"),
    ("aten::bitwise_not", [torch.randn(3)], torch.empty(3), r"bitwise_not: dtype float32 is not supported"),
    ("aten::logical_and", [torch.randn(3), torch.randn(3)], torch.empty(3),
     r"logical_and: out has dtype float32, expected bool"),
    ("aten::neg", [torch.tensor([True])], torch.empty(1, dtype=torch.bool), r"neg: dtype bool is not supported"),
    ("aten::exp", [torch.tensor([1, 2])], torch.empty(2, dtype=torch.int64),
     r"exp: dtype int64 is not supported \(float32 or float64 expected\)"),
    ("aten::sigmoid", [torch.randn(3).half()], torch.empty(3), r"sigmoid: dtype float16 is not supported"),
    ("aten::silu", [torch.tensor([1, 2])], torch.empty(2), r"silu: input dtype int64 differs from output dtype float32"),
    ("aten::gelu", [torch.randn(3), "erf"], torch.empty(3),
     r"gelu: approximate 'erf' is not supported \(expected 'none' or 'tanh'\)"),
    ("aten::isnan", [torch.randn(3)], torch.empty(3), r"isnan: out has dtype float32, expected bool"),
    ("aten::lt.Scalar", [torch.randn(3, 4), 0.5], torch.empty(3, dtype=torch.bool),
     r"lt: output shape \[3, 4\] does not fit its planned 3 bytes"),
    ("aten::hardtanh", [torch.tensor([True]), -1, 1], torch.empty(1, dtype=torch.bool),
     r"hardtanh: dtype bool is not supported"),
])
def test_bad_inputs(op, args, out, message):
    with pytest.raises(PocketError, match=message):
        run(op, args, out)
