"""The fused LLM kernels pocket::rms_norm, pocket::rope and pocket::swiglu: the C++ kernels
(portable, and the best kernel set of this CPU) against their eager references
(exporter/custom_ops.py) and against the unfused ATen math the model code used before, on
odd shapes, with 1 and 2 threads; bad inputs fail naming the problem, in the kernels and in
the eager references.

Tolerances (float32): rms_norm 2e-6 relative + 1e-6 absolute (the kernel sums squares in
double, torch in float32: the row scale may differ by an ulp or two); rope 1e-6 (two
products and one sum per output, identical formula); swiglu 2e-6 relative (libm exp vs
ATen's vectorized sigmoid) + 1e-6 absolute.
"""

import numpy as np
import pytest
import torch
from harness import output_buffer, to_native

import pocket.exporter.custom_ops  # noqa: F401  (registers torch.ops.pocket.*)
from native_testing import run_kernel
from pocket import PocketError
from pocket.llm.models.rope import apply_rope, rope_tables

TABLES = ["portable", "best"]
DIMS = [1, 3, 17, 63, 64, 576]


def run(name, args, like, table="portable", threads=1):
    out = run_kernel(name, [to_native(a) for a in args], [output_buffer(like)], table, threads)[0]
    return torch.from_numpy(np.array(out))


def check_all(name, args, want, rtol, atol):
    for table in TABLES:
        for threads in (1, 2):
            got = run(name, args, want, table, threads)
            torch.testing.assert_close(got, want, rtol=rtol, atol=atol,
                                       msg=lambda m: f"{name} [{table}, {threads} threads]: {m}")


def unfused_rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("lead", [(1,), (5,), (2, 3, 7)])
def test_rms_norm(d, lead):
    x = torch.randn(*lead, d) * 3
    w = torch.randn(d)
    ref = torch.ops.pocket.rms_norm(x, w, 1e-6)
    assert torch.equal(ref, unfused_rms_norm(x, w, 1e-6))
    want64 = unfused_rms_norm(x.double(), w.double(), 1e-6).float()
    torch.testing.assert_close(ref, want64, rtol=2e-6, atol=1e-6)
    check_all("pocket::rms_norm", [x, w, 1e-6], ref, 2e-6, 1e-6)


def test_rms_norm_of_zeros_is_zero_and_eps_is_used():
    x = torch.zeros(2, 17)
    assert torch.equal(run("pocket::rms_norm", [x, torch.ones(17), 1e-5], x), x)
    x = torch.full((1, 4), 1e-3)
    got = run("pocket::rms_norm", [x, torch.ones(4), 1.0], x)  # eps dominates: 1e-3 / sqrt(1 + 1e-6)
    torch.testing.assert_close(got, x / (1 + 1e-6) ** 0.5, rtol=1e-6, atol=0)


def rope_inputs(b, t, h, d, start):
    cos, sin = rope_tables(d, 10000.0, None, start + t)
    return torch.randn(b, t, h, d), cos[start:], sin[start:]


@pytest.mark.parametrize("b,t,h,d,start", [(1, 1, 1, 2, 0), (1, 1, 3, 64, 40), (1, 3, 17, 6, 5), (2, 5, 3, 34, 1),
                                           (1, 63, 2, 16, 0), (1, 7, 9, 128, 100)])
def test_rope(b, t, h, d, start):
    x, cos, sin = rope_inputs(b, t, h, d, start)
    ref = torch.ops.pocket.rope(x, cos, sin)
    assert torch.equal(ref, apply_rope(x, cos, sin))
    check_all("pocket::rope", [x, cos, sin], ref, 1e-6, 1e-6)


def test_rope_rotates_pairs_of_halves():
    """Position p rotates (x[i], x[i + D/2]) by angle p·θ_i: norms of the pairs are kept and
    position 0 is the identity."""
    x, cos, sin = rope_inputs(1, 4, 2, 8, 0)
    y = run("pocket::rope", [x, cos, sin], x)
    assert torch.equal(y[:, 0], x[:, 0])
    pair_norm = lambda v: v[..., :4] ** 2 + v[..., 4:] ** 2  # noqa: E731
    torch.testing.assert_close(pair_norm(y), pair_norm(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(1,), (3,), (17,), (1, 63), (2, 3, 65), (1, 1536), (4, 1000)])
def test_swiglu(shape):
    gate, up = torch.randn(shape) * 4, torch.randn(shape)
    gate.view(-1)[0] = -100.0  # exp overflow side: silu -> -0
    ref = torch.ops.pocket.swiglu(gate, up)
    assert torch.equal(ref, torch.nn.functional.silu(gate) * up)
    torch.testing.assert_close(ref, (gate.double() * torch.sigmoid(gate.double()) * up.double()).float(),
                               rtol=2e-6, atol=1e-6)
    check_all("pocket::swiglu", [gate, up], ref, 2e-6, 1e-6)


BAD = [
    ("pocket::rms_norm", [torch.randn(2, 5), torch.randn(4), 1e-5], torch.empty(2, 5),
     r"rms_norm: weight \[4\] does not match the last dim of x \[2, 5\]"),
    ("pocket::rms_norm", [torch.randn(2, 5), torch.randn(1, 5), 1e-5], torch.empty(2, 5),
     r"rms_norm: weight \[1, 5\] does not match"),
    ("pocket::rms_norm", [torch.randn(2, 5).double(), torch.randn(5).double(), 1e-5], torch.empty(2, 5).double(),
     r"rms_norm: x has dtype float64, expected float32"),
    ("pocket::rms_norm", [torch.randn(5, 2).t(), torch.randn(5), 1e-5], torch.empty(2, 5),
     r"rms_norm: x and weight must be contiguous"),
    ("pocket::rope", [torch.randn(1, 2, 3, 4), torch.randn(2, 4), torch.randn(3, 4)], torch.empty(1, 2, 3, 4),
     r"rope: cos \[2, 4\] and sin \[3, 4\] must be \[T, D\] = \[2, 4\] for x \[1, 2, 3, 4\]"),
    ("pocket::rope", [torch.randn(2, 3, 4), torch.randn(3, 4), torch.randn(3, 4)], torch.empty(2, 3, 4),
     r"rope: x must be \[B, T, H, D\] with D even, got \[2, 3, 4\]"),
    ("pocket::rope", [torch.randn(1, 1, 2, 5), torch.randn(1, 5), torch.randn(1, 5)], torch.empty(1, 1, 2, 5),
     r"rope: x must be \[B, T, H, D\] with D even, got \[1, 1, 2, 5\]"),
    ("pocket::rope", [torch.randn(1, 1, 2, 4), torch.randn(1, 4).double(), torch.randn(1, 4)], torch.empty(1, 1, 2, 4),
     r"rope: cos has dtype float64, expected float32"),
    ("pocket::swiglu", [torch.randn(2, 6), torch.randn(2, 5)], torch.empty(2, 6),
     r"swiglu: gate \[2, 6\] and up \[2, 5\] must have one shape"),
    ("pocket::swiglu", [torch.randn(6), torch.randint(0, 3, (6,))], torch.empty(6),
     r"swiglu: up has dtype int64, expected float32"),
]


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_inputs_are_named(case, table):
    name, args, like, message = BAD[case]
    with pytest.raises(PocketError, match=message):
        run(name, args, like, table)


EAGER_BAD = [
    (lambda: torch.ops.pocket.rms_norm(torch.randn(2, 5), torch.randn(4), 1e-5), ValueError,
     r"weight \[4\] does not match the last dim of x \[2, 5\]"),
    (lambda: torch.ops.pocket.rms_norm(torch.randn(5).half(), torch.randn(5).half(), 1e-5), TypeError,
     r"rms_norm: x must be float32, got torch.float16"),
    (lambda: torch.ops.pocket.rope(torch.randn(1, 2, 3, 4), torch.randn(1, 4), torch.randn(2, 4)), ValueError,
     r"rope: cos \[1, 4\] and sin \[2, 4\] must be \[T, D\] = \[2, 4\]"),
    (lambda: torch.ops.pocket.rope(torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 4)), ValueError,
     r"rope: x must be \[B, T, H, D\]"),
    (lambda: torch.ops.pocket.swiglu(torch.randn(3), torch.randn(4)), ValueError,
     r"swiglu: gate \[3\] and up \[4\] must have one shape"),
]


@pytest.mark.parametrize("case", range(len(EAGER_BAD)))
def test_eager_references_name_bad_inputs(case):
    fn, error, message = EAGER_BAD[case]
    with pytest.raises(error, match=message):
        fn()
