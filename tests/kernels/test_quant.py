"""Quantized kernels (tables/quant.txt) against the eager reference ops (exporter/quant/ops.py).

Tolerances:
- int8 activations (act_mode 1, 2): the integer sums are exact and the kernel applies the
  scales with the same double operations as the reference; only the order in which the
  per-group doubles are summed may differ, which can move the float32 result by at most one
  ulp in rare cases. rtol = atol = 1e-5 covers that; test_linear_q_int8_bit_exact shows
  that on fixed inputs the results are in fact identical.
- fp32 activations (act_mode 0): the kernel dequantizes exactly like the reference but sums
  K float32 products in a different order than ATen's GEMM: differences of a few ulp of the
  partial sums (~1e-6 for these shapes) -> rtol 1e-5, atol 1e-5 (1e-4 for K = 512).
- embedding_q, conv2d_q8, conv2d_q8_packed and conv2d_q8_channels_last are exact (same float32 / double operations,
  exact integer sums).
- float16 scales and mins (GGUF's d and m): the same tolerances; the kernels and the references
  give exactly what float32 scales of the same values give.
"""

import pytest
import torch
from harness import check

import pocket.exporter.custom_ops  # noqa: F401  (registers torch.ops.pocket.*)
from pocket import PocketError
from pocket.exporter.quant.formats import WeightFormat, quantize
from pocket.exporter.quant.ops import (pack_conv_weight, pack_linear_weight, quantize_per_tensor, unpack_conv_weight,
                                       unpack_linear_weight)

torch.manual_seed(0)

FORMATS = [(4, True), (4, False), (8, True), (8, False)]  # (bits, symmetric)
# (act_mode, group_size, K): odd group counts and K that are not multiples of 8/16/32/64; for
# fp32 activations also the optimized gemv's runs of x (16, 32 + 16, four of 32 per group).
MODES = [
    (0, 2, 14), (0, 6, 30), (0, 10, 50), (0, 32, 96), (0, 16, 48), (0, 48, 144), (0, 128, 256),
    (1, 2, 14), (1, 6, 30), (1, 10, 50), (1, 32, 96),
    (2, 32, 32), (2, 32, 96), (2, 64, 192),
]
LEADING = [(1,), (3,), (17,), (2, 3)]


def quantized(n, k, bits, symmetric, group_size):
    return quantize(torch.randn(n, k), WeightFormat(bits, group_size, symmetric))


def halved(q, s, m):
    """A weight with float16 scales and mins (the float32 ones rounded)."""
    return q, s.half(), None if m is None else m.half()


def widened(args, at):
    """args with the scales and mins at args[at], args[at + 1] widened to float32."""
    out = list(args)
    out[at], out[at + 1] = out[at].float(), None if out[at + 1] is None else out[at + 1].float()
    return out


def reference(op, args):
    return getattr(torch.ops.pocket, op)(*args)


def check_linear_q(args, rtol=1e-5, atol=1e-5):
    return check("pocket::linear_q", args, rtol=rtol, atol=atol, expected=reference("linear_q", args))


# ---- linear_q


@pytest.mark.parametrize("bits,symmetric", FORMATS)
@pytest.mark.parametrize("act_mode,group_size,k", MODES)
@pytest.mark.parametrize("leading", LEADING)
def test_linear_q(bits, symmetric, act_mode, group_size, k, leading):
    n = 7 if len(leading) == 1 else 13
    q, s, m = quantized(n, k, bits, symmetric, group_size)
    bias = torch.randn(n) if leading[0] != 3 else None
    check_linear_q([torch.randn(*leading, k), q, s, m, bias, bits, group_size, act_mode])


@pytest.mark.parametrize("bits,symmetric", FORMATS)
@pytest.mark.parametrize("act_mode", [1, 2])
def test_linear_q_int8_bit_exact(bits, symmetric, act_mode):
    g = 32 if act_mode == 2 else 16
    q, s, m = quantized(33, 256, bits, symmetric, g)
    args = [torch.randn(5, 256) * 3, q, s, m, torch.randn(33), bits, g, act_mode]
    check_linear_q(args, rtol=0, atol=0)


@pytest.mark.parametrize("act_mode,group_size", [(0, 8), (1, 8), (2, 32)])
def test_linear_q_single_row_and_one_output(act_mode, group_size):
    q, s, m = quantized(1, 64, 4, False, group_size)
    check_linear_q([torch.randn(64), q, s, m, None, 4, group_size, act_mode])


@pytest.mark.parametrize("act_mode", [1, 2])
def test_linear_q_zero_rows_and_blocks(act_mode):
    x = torch.randn(4, 96)
    x[1] = 0           # a zero row: scale 0, contributes nothing
    x[2, 32:64] = 0    # a zero block (act_mode 2 scale 0)
    for bits, symmetric in FORMATS:
        q, s, m = quantized(5, 96, bits, symmetric, 32)
        check_linear_q([x, q, s, m, torch.randn(5), bits, 32, act_mode], rtol=0, atol=0)


@pytest.mark.parametrize("act_mode", [1, 2])
def test_linear_q_rounding_ties(act_mode):
    # amax 127 -> activation scale 1: x * inv lands exactly on .5 ties, which round to even.
    x = torch.tensor([127.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5] * 4).reshape(1, 32)
    x = torch.cat([x, -x, x * 0.25])
    q, s, m = quantized(3, 32, 8, True, 32)
    check_linear_q([x, q, s, m, None, 8, 32, act_mode], rtol=0, atol=0)


def test_linear_q_strided_inputs():
    q, s, m = quantized(9, 64, 4, False, 16)
    x = torch.randn(64, 6).t()                      # non-contiguous x
    s_strided = torch.empty(9, 8)[:, ::2].copy_(s)  # strided scales
    bias = torch.randn(18)[::2]
    for act_mode in (0, 1):
        check_linear_q([x, q, s_strided, m, bias, 4, 16, act_mode])


def test_linear_q_large_groups_per_channel():
    # group_size = K: one scale per output row (int8 weight-only / per-channel formats).
    for bits, symmetric in FORMATS:
        q, s, m = quantized(6, 512, bits, symmetric, 512)
        for act_mode in (0, 1, 2):
            check_linear_q([torch.randn(3, 512), q, s, m, torch.randn(6), bits, 512, act_mode], atol=1e-4)


def test_linear_q_group_longer_than_int32_chunk():
    # One group of 70000 columns, all activations 127 and weights 255: the dot product
    # (2.27e9) overflows int32; the kernel sums int32 chunks of 65536 columns in int64.
    k = 70000
    q = torch.full((2, k), 255, dtype=torch.uint8)
    q[1, ::3] = 7
    s, m = torch.full((2, 1), 1e-3), torch.full((2, 1), -0.5)
    check_linear_q([torch.ones(2, k), q, s, m, None, 8, k, 1], rtol=1e-6, atol=0)


def test_linear_q_many_rows_blocks():
    # More weight rows than one block of unpacked rows (8), with a partial last block.
    for bits, symmetric in FORMATS:
        q, s, m = quantized(21, 64, bits, symmetric, 32)
        for act_mode in (0, 1, 2):
            check_linear_q([torch.randn(5, 64), q, s, m, torch.randn(21), bits, 32, act_mode])


def linear_q_error(args, out_shape, pattern):
    with pytest.raises(PocketError, match=pattern):
        check("pocket::linear_q", args, expected=torch.empty(out_shape))


def test_linear_q_errors():
    q4, s4, m4 = quantized(3, 32, 4, True, 8)
    q8, s8, _ = quantized(3, 32, 8, True, 8)
    qa, sa, ma = quantized(3, 32, 8, False, 8)
    x = torch.randn(2, 32)
    linear_q_error([x.double(), q4, s4, None, None, 4, 8, 0], (2, 3),
                   r"linear_q: x has dtype float64, expected float32")
    linear_q_error([x, q4, s4, None, None, 3, 8, 0], (2, 3), r"linear_q: bits is 3, expected 4 or 8")
    linear_q_error([x, q4, s4, None, None, 4, 8, 3], (2, 3), r"linear_q: act_mode is 3, expected 0")
    linear_q_error([x, q4, s4, None, None, 4, 0, 0], (2, 3),
                   r"linear_q: group_size is 0, expected a positive even number")
    linear_q_error([torch.randn(2, 30), q4, s4, None, None, 4, 8, 0], (2, 3),
                   r"linear_q: 30 columns are not a multiple of group_size 8")
    linear_q_error([torch.randn(2, 40), q4, s4, None, None, 4, 8, 0], (2, 3),
                   r"linear_q: qweight has shape \[3, 16\], expected \[3, 20\] \(two 4-bit columns per byte\)")
    linear_q_error([x, q4.view(torch.int8), s4, None, None, 4, 8, 0], (2, 3),
                   r"linear_q: 4-bit symmetric qweight has dtype int8, expected uint8")
    linear_q_error([x, q8.view(torch.uint8), s8, None, None, 8, 8, 0], (2, 3),
                   r"linear_q: 8-bit symmetric qweight has dtype uint8, expected int8")
    linear_q_error([x, qa.view(torch.int8), sa, ma, None, 8, 8, 1], (2, 3),
                   r"linear_q: 8-bit asymmetric qweight has dtype int8, expected uint8")
    linear_q_error([x, q4, s4[:, :2], None, None, 4, 8, 0], (2, 3),
                   r"linear_q: scales has shape \[3, 2\], expected \[3, 4\]")
    linear_q_error([x, q4, s4.double(), None, None, 4, 8, 0], (2, 3),
                   r"linear_q: scales has dtype float64, expected float32")
    linear_q_error([x, qa, sa, ma[:2], None, 8, 8, 0], (2, 3),
                   r"linear_q: mins has shape \[2, 4\], expected \[3, 4\]")
    linear_q_error([x, q4, s4, None, torch.randn(4), 4, 8, 0], (2, 3),
                   r"linear_q: bias has shape \[4\], expected \[3\]")
    linear_q_error([x, q4, s4, None, None, 4, 8, 2], (2, 3),
                   r"linear_q: act_mode 2 \(int8 per block of 32\) needs a group_size that is a multiple of 32, "
                   r"got 8")
    linear_q_error([torch.randn(()), q4, s4, None, None, 4, 8, 0], (3,), r"linear_q: x is 0-d")
    linear_q_error([x, q4[0], s4, None, None, 4, 8, 0], (2, 3),
                   r"linear_q: qweight has shape \[16\], expected 2 dims")


HALF_MODES = [(0, 6, 30), (0, 32, 96), (1, 10, 50), (1, 32, 96), (2, 32, 96), (2, 64, 192)]


@pytest.mark.parametrize("bits,symmetric", FORMATS)
@pytest.mark.parametrize("act_mode,group_size,k", HALF_MODES)
@pytest.mark.parametrize("leading", [(1,), (5,), (2, 3)])
def test_linear_q_half_scales(bits, symmetric, act_mode, group_size, k, leading):
    """float16 scales and mins: the kernel matches the reference, and both give exactly what
    float32 scales of the same values give."""
    n = 7 if len(leading) == 1 else 13
    q, s, m = halved(*quantized(n, k, bits, symmetric, group_size))
    s[0, 0] = 3e-6  # a float16 subnormal
    bias = torch.randn(n) if leading[0] != 5 else None
    args = [torch.randn(*leading, k), q, s, m, bias, bits, group_size, act_mode]
    want = reference("linear_q", args)
    assert torch.equal(want, reference("linear_q", widened(args, 2)))
    assert torch.equal(check_linear_q(args)[0], check_linear_q(widened(args, 2))[0])


def test_linear_q_scale_dtype_errors():
    q, s, m = quantized(3, 32, 4, False, 8)
    x = torch.randn(2, 32)
    linear_q_error([x, q, s.half(), m, None, 4, 8, 0], (2, 3),
                   r"linear_q: scales and mins must have the same dtype \(float16 vs float32\)")
    linear_q_error([x, q, s, m.half(), None, 4, 8, 1], (2, 3),
                   r"linear_q: scales and mins must have the same dtype \(float32 vs float16\)")
    linear_q_error([x, q, s.to(torch.int32), m.to(torch.int32), None, 4, 8, 0], (2, 3),
                   r"linear_q: scales has dtype int32, expected float32 or float16")
    linear_q_error([x, q, s.to(torch.bfloat16), m.to(torch.bfloat16), None, 4, 8, 0], (2, 3),
                   r"linear_q: scales has dtype bfloat16, expected float32 or float16")
    with pytest.raises(ValueError, match=r"linear_q: scales and mins must have the same dtype \(float16 vs float32\)"):
        reference("linear_q", [x, q, s.half(), m, None, 4, 8, 0])
    with pytest.raises(ValueError, match=r"linear_q: scales has dtype int32, expected float32 or float16"):
        reference("linear_q", [x, q, s.to(torch.int32), None, None, 4, 8, 0])


# ---- linear_q_packed: 4-bit weights in the int8 kernels' layout, int8 activations

# (act_mode, group_size, K): groups of one step of 8, groups spanning odd step counts, act_mode 2.
PACKED_MODES = [(1, 8, 24), (1, 24, 72), (1, 32, 96), (1, 64, 576), (2, 32, 96), (2, 64, 128)]


@pytest.mark.parametrize("bits,symmetric", FORMATS)
@pytest.mark.parametrize("act_mode,group_size,k", PACKED_MODES)
@pytest.mark.parametrize("leading", [(1,), (5,), (2, 3)])
def test_linear_q_packed(bits, symmetric, act_mode, group_size, k, leading):
    """The same numbers as linear_q on the unpacked weight."""
    n = 16 if leading == (1,) else 48
    q, s, m = quantized(n, k, bits, symmetric, group_size)
    bias = torch.randn(n) if leading[0] != 5 else None
    x = torch.randn(*leading, k) * 2
    args = [x, *pack_linear_weight(q, s, m, bits), bias, bits, group_size, act_mode]
    want = reference("linear_q", [x, q, s, m, bias, bits, group_size, act_mode])
    check("pocket::linear_q_packed", args, rtol=1e-5, atol=1e-5, expected=want)


@pytest.mark.parametrize("bits,symmetric", FORMATS)
@pytest.mark.parametrize("act_mode,group_size,k", [(1, 8, 40), (1, 32, 96), (2, 64, 128)])
@pytest.mark.parametrize("leading", [(1,), (5,)])
def test_linear_q_packed_half_scales(bits, symmetric, act_mode, group_size, k, leading):
    """float16 scales and mins stay float16 in the packed layout; the same numbers as linear_q."""
    n = 32
    q, s, m = halved(*quantized(n, k, bits, symmetric, group_size))
    x = torch.randn(*leading, k) * 2
    bias = torch.randn(n)
    pq, ps, pm = pack_linear_weight(q, s, m, bits)
    assert ps.dtype == torch.float16 and (pm is None or pm.dtype == torch.float16)
    args = [x, pq, ps, pm, bias, bits, group_size, act_mode]
    want = reference("linear_q", [x, q, s, m, bias, bits, group_size, act_mode])
    assert torch.equal(reference("linear_q_packed", args), want)
    got = check("pocket::linear_q_packed", args, rtol=1e-5, atol=1e-5, expected=want)[0]
    assert torch.equal(got, check("pocket::linear_q_packed", widened(args, 2), rtol=1e-5, atol=1e-5,
                                  expected=want)[0])


@pytest.mark.parametrize("bits,symmetric", FORMATS)
def test_pack_linear_weight_round_trip(bits, symmetric):
    q, s, m = quantized(32, 40, bits, symmetric, 8)
    pq, ps, pm = pack_linear_weight(q, s, m, bits)
    assert pq.shape == (2, 5 if bits == 4 else 10, 64) and ps.shape == (2, 5, 16) and pq.dtype == q.dtype
    back = unpack_linear_weight(pq, ps, pm, bits)
    assert torch.equal(back[0], q) and torch.equal(back[1], s)
    assert (m is None and back[2] is None) or torch.equal(back[2], m)
    if bits == 4:  # byte [b, t, 4c + i]: column 8t + i of row 16b + c (low nibble), 8t + 4 + i (high)
        nib = torch.stack([q & 0x0F, q >> 4], -1).reshape(32, 40)
        assert pq[1, 3, 4 * 5 + 2] == nib[21, 26] | (nib[21, 30] << 4)
    else:  # byte [b, t, 4c + i]: column 4t + i of row 16b + c
        assert pq[1, 3, 4 * 5 + 2] == q[21, 14]


def test_linear_q_packed_errors():
    q, s, m = quantized(16, 32, 4, True, 8)
    pq, ps, _ = pack_linear_weight(q, s, None)
    x = torch.randn(2, 32)

    def fails(args, pattern, out_shape=(2, 16)):
        with pytest.raises(PocketError, match=pattern):
            check("pocket::linear_q_packed", args, expected=torch.empty(out_shape))

    fails([x, pq, ps, None, None, 4, 8, 0], r"linear_q_packed: act_mode is 0, expected 1 .*use linear_q")
    fails([x, pq, ps, None, None, 5, 8, 1], r"linear_q_packed: bits is 5, expected 4 or 8")
    fails([x, pq, ps, None, None, 8, 8, 1], r"linear_q_packed: 8-bit symmetric qweight has dtype uint8, expected int8")
    fails([x, pq, ps, None, None, 4, 12, 1], r"linear_q_packed: group_size is 12, expected a positive multiple of 8")
    fails([torch.randn(2, 40), pq, ps, None, None, 4, 8, 1],
          r"linear_q_packed: qweight has shape \[1, 4, 64\], expected \[rows / 16, 5, 64\]")
    fails([x, q, s, None, None, 4, 8, 1], r"linear_q_packed: qweight has shape \[16, 16\], expected")
    fails([x, pq.view(torch.int8), ps, None, None, 4, 8, 1], r"linear_q_packed: 4-bit symmetric qweight has dtype int8, expected uint8")
    fails([x, pq, s, None, None, 4, 8, 1], r"linear_q_packed: scales has shape \[16, 4\], expected \[1, 4, 16\]")
    fails([x, pq, ps, ps[:, :2], None, 4, 8, 1], r"linear_q_packed: mins has shape \[1, 2, 16\]")
    fails([x, pq, ps, None, None, 4, 8, 2], r"linear_q_packed: act_mode 2 .* multiple of 32, got 8")
    qa, sa, ma = quantized(16, 32, 4, False, 8)
    pqa, psa, pma = pack_linear_weight(qa, sa, ma)
    fails([x, pqa, psa.half(), pma, None, 4, 8, 1],
          r"linear_q_packed: scales and mins must have the same dtype \(float16 vs float32\)")
    fails([x, pq, ps.to(torch.int32), None, None, 4, 8, 1],
          r"linear_q_packed: scales has dtype int32, expected float32 or float16")
    with pytest.raises(ValueError, match=r"linear_q_packed: scales and mins must have the same dtype"):
        reference("linear_q_packed", [x, pqa, psa, pma.half(), None, 4, 8, 1])


# ---- embedding_q


@pytest.mark.parametrize("bits,symmetric", FORMATS)
@pytest.mark.parametrize("group_size,dim", [(2, 6), (6, 30), (32, 96)])
@pytest.mark.parametrize("index_shape", [(), (5,), (2, 3)])
def test_embedding_q(bits, symmetric, group_size, dim, index_shape):
    q, s, m = quantized(11, dim, bits, symmetric, group_size)
    indices = torch.randint(0, 11, index_shape)
    args = [q, s, m, indices, bits, group_size]
    check("pocket::embedding_q", args, rtol=0, atol=0, expected=reference("embedding_q", args))


@pytest.mark.parametrize("bits,symmetric", FORMATS)
@pytest.mark.parametrize("group_size,dim", [(6, 30), (32, 96)])
def test_embedding_q_half_scales(bits, symmetric, group_size, dim):
    """Rows dequantized with float16 scales and mins: exactly those of float32 ones of the same values."""
    q, s, m = halved(*quantized(11, dim, bits, symmetric, group_size))
    indices = torch.randint(0, 11, (2, 3))
    args = [q, s, m, indices, bits, group_size]
    want = reference("embedding_q", widened(args, 1))
    assert torch.equal(reference("embedding_q", args), want)
    check("pocket::embedding_q", args, rtol=0, atol=0, expected=want)


def test_embedding_q_int32_and_strided_indices():
    q, s, m = quantized(8, 64, 4, False, 16)
    for indices in (torch.tensor([[7, 0], [3, 3]], dtype=torch.int32), torch.randint(0, 8, (4, 6)).t()):
        args = [q, s, m, indices, 4, 16]
        check("pocket::embedding_q", args, rtol=0, atol=0, expected=reference("embedding_q", args.copy()))


@pytest.mark.parametrize("bits,symmetric", FORMATS)
@pytest.mark.parametrize("group_size,dim", [(8, 24), (32, 64), (64, 576)])
def test_embedding_q_packed(bits, symmetric, group_size, dim):
    """The rows of a table in linear_q_packed's layout: identical to embedding_q's."""
    q, s, m = quantized(48, dim, bits, symmetric, group_size)
    indices = torch.tensor([[0, 47, 16], [15, 17, 31]], dtype=torch.int64)
    args = [*pack_linear_weight(q, s, m, bits), indices, bits, group_size]
    want = reference("embedding_q", [q, s, m, indices, bits, group_size])
    check("pocket::embedding_q_packed", args, rtol=0, atol=0, expected=want)


@pytest.mark.parametrize("bits,symmetric", FORMATS)
def test_embedding_q_packed_half_scales(bits, symmetric):
    q, s, m = halved(*quantized(32, 64, bits, symmetric, 32))
    indices = torch.tensor([[0, 31, 16], [15, 17, 3]], dtype=torch.int64)
    args = [*pack_linear_weight(q, s, m, bits), indices, bits, 32]
    want = reference("embedding_q", [q, s.float(), None if m is None else m.float(), indices, bits, 32])
    assert torch.equal(reference("embedding_q_packed", args), want)
    check("pocket::embedding_q_packed", args, rtol=0, atol=0, expected=want)


def test_embedding_q_scale_dtype_errors():
    q, s, m = quantized(16, 32, 4, False, 8)
    pq, ps, pm = pack_linear_weight(q, s, m)
    for op, w in (("embedding_q", (q, s, m)), ("embedding_q_packed", (pq, ps, pm))):
        def fails(args, pattern):
            with pytest.raises(PocketError, match=pattern):
                check(f"pocket::{op}", args, expected=torch.empty(2, 32))

        fails([w[0], w[1], w[2].half(), torch.tensor([1, 2]), 4, 8],
              rf"{op}: scales and mins must have the same dtype \(float32 vs float16\)")
        fails([w[0], w[1].to(torch.int32), w[2].to(torch.int32), torch.tensor([1, 2]), 4, 8],
              rf"{op}: scales has dtype int32, expected float32 or float16")
        with pytest.raises(ValueError, match=rf"{op}: scales and mins must have the same dtype"):
            reference(op, [w[0], w[1].half(), w[2], torch.tensor([1, 2]), 4, 8])


def test_embedding_q_packed_errors():
    q, s, _ = quantized(16, 32, 4, True, 8)
    pq, ps, _ = pack_linear_weight(q, s, None)

    def fails(args, pattern, out_shape=(2, 32)):
        with pytest.raises(PocketError, match=pattern):
            check("pocket::embedding_q_packed", args, expected=torch.empty(out_shape))

    fails([pq, ps, None, torch.tensor([1, 16]), 4, 8], r"embedding_q_packed: index 16 is out of range for a table of 16")
    fails([q, s, None, torch.tensor([1, 2]), 4, 8], r"embedding_q_packed: qweight has shape \[16, 16\], expected "
                                                    r"\[rows / 16, columns / 8, 64\]")
    fails([pq, ps, None, torch.tensor([1, 2]), 4, 16], r"embedding_q_packed: scales has shape \[1, 4, 16\], expected "
                                                       r"\[1, 2, 16\]")
    fails([pq, ps, None, torch.tensor([1, 2]), 3, 8], r"embedding_q_packed: bits is 3, expected 4 or 8")


def test_embedding_q_errors():
    q, s, m = quantized(8, 32, 4, True, 8)

    def fails(args, pattern, out_shape=(2, 32)):
        with pytest.raises(PocketError, match=pattern):
            check("pocket::embedding_q", args, expected=torch.empty(out_shape))

    fails([q, s, m, torch.tensor([1, 8]), 4, 8], r"embedding_q: index 8 is out of range for a table of 8 rows")
    fails([q, s, m, torch.tensor([-1, 0]), 4, 8], r"embedding_q: index -1 is out of range")
    fails([q, s, m, torch.tensor([1.0, 2.0]), 4, 8],
          r"embedding_q: indices have dtype float32, expected int64 or int32")
    fails([q, s, m, torch.tensor([1, 2]), 5, 8], r"embedding_q: bits is 5, expected 4 or 8")
    fails([q, s, m, torch.tensor([1, 2]), 4, 7], r"embedding_q: group_size is 7, expected a positive even number")
    fails([q, s, m, torch.tensor([1, 2]), 4, 12], r"embedding_q: 32 columns are not a multiple of group_size 12")
    fails([q, s[:, :3], m, torch.tensor([1, 2]), 4, 8], r"embedding_q: scales has shape \[8, 3\], expected \[8, 4\]")


# ---- conv2d_q8


CONV2D_CASES = [
    # (n, c_in, h, w), c_out, kernel, stride, padding, dilation, groups
    ((1, 3, 8, 8), 4, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 3, 9, 7), 5, (3, 3), (2, 2), (1, 1), (1, 1), 1),
    ((1, 4, 10, 11), 6, (3, 2), (2, 1), (0, 1), (2, 1), 2),
    ((2, 6, 7, 7), 6, (3, 3), (1, 1), (1, 1), (1, 1), 6),  # depthwise
    ((1, 4, 9, 9), 8, (3, 3), (2, 2), (1, 1), (1, 1), 4),  # depthwise, channel multiplier 2
    ((1, 8, 5, 6), 3, (1, 1), (1, 1), (0, 0), (1, 1), 1),  # pointwise
    ((1, 2, 13, 13), 3, (5, 5), (3, 2), (2, 0), (1, 2), 1),
    ((1, 3, 3, 5), 2, (3, 3), (1, 1), (3, 3), (1, 1), 1),  # padding wider than the kernel
]


def conv_args(shape, c_out, k, stride, padding, dilation, groups, bias, zero_point, x_scale_factor=1.0):
    x = torch.randn(shape) + 0.3
    w = torch.randn(c_out, shape[1] // groups, *k)
    w_scales = w.abs().amax(dim=(1, 2, 3)) / 127
    qweight = torch.clamp(torch.round(w / w_scales[:, None, None, None]), -127, 127).to(torch.int8)
    x_scale = float(x.abs().max()) / 127 * x_scale_factor
    b = torch.randn(c_out) if bias else None
    return [x, qweight, w_scales, b, x_scale, zero_point, list(stride), list(padding), list(dilation), groups]


@pytest.mark.parametrize("shape,c_out,k,stride,padding,dilation,groups", CONV2D_CASES)
@pytest.mark.parametrize("bias,zero_point", [(False, 0), (True, 0), (True, 7), (False, -20)])
def test_conv2d_q8(shape, c_out, k, stride, padding, dilation, groups, bias, zero_point):
    args = conv_args(shape, c_out, k, stride, padding, dilation, groups, bias, zero_point)
    check("pocket::conv2d_q8", args, rtol=0, atol=0, expected=reference("conv2d_q8", args))


def test_conv2d_q8_saturation_and_strided_x():
    # A small x_scale saturates most of x at -128 / 127 (around the zero point).
    args = conv_args((1, 4, 6, 6), 3, (3, 3), (1, 1), (1, 1), (1, 1), 1, True, 5, x_scale_factor=0.05)
    check("pocket::conv2d_q8", args, rtol=0, atol=0, expected=reference("conv2d_q8", args))
    args[0] = torch.randn(1, 4, 6, 6).transpose(2, 3)
    check("pocket::conv2d_q8", args, rtol=0, atol=0, expected=reference("conv2d_q8", args))


def failing(op, args, out_shape):
    """fails(changes, pattern): `op` on args with the changes {index: value} raises a
    PocketError matching pattern."""
    def fails(changes, pattern):
        a = list(args)
        for i, v in changes.items():
            a[i] = v
        with pytest.raises(PocketError, match=pattern):
            check(op, a, expected=torch.empty(out_shape))
    return fails


def test_conv2d_q8_errors():
    args = conv_args((1, 4, 6, 6), 2, (3, 3), (1, 1), (0, 0), (1, 1), 1, True, 0)
    fails = failing("pocket::conv2d_q8", args, (1, 2, 4, 4))

    fails({0: args[0].double()}, r"conv2d_q8: x has dtype float64, expected float32")
    fails({1: args[1].float()}, r"conv2d_q8: qweight has dtype float32, expected int8")
    fails({0: args[0][0]}, r"conv2d_q8: x \[4, 6, 6\] and qweight \[2, 4, 3, 3\] must be 4-d \(NCHW\) and 4-d \(OIHW\)")
    fails({9: 2}, r"conv2d_q8: x has 4 channels and qweight \[2, 4, \.\.\.\]; with groups 2")
    fails({5: 200}, r"conv2d_q8: x_zero_point is 200, expected -128 to 127")
    fails({4: 0.0}, r"conv2d_q8: x_scale is 0, expected a positive finite float32")
    fails({2: args[2][:1]}, r"conv2d_q8: w_scales has shape \[1\], expected \[2\]")
    fails({3: torch.randn(3)}, r"conv2d_q8: bias has shape \[3\], expected \[2\]")
    fails({6: [0, 1]}, r"conv2d_q8: stride\[0\] is 0")
    fails({0: torch.randn(1, 4, 2, 2)}, r"conv2d_q8: height: input size 2, kernel size 3")


# ---- conv2d_q8_packed: conv2d_q8 with the weight in the int8 kernels' layout, and a clamp


def packed_args(args, out_min=None, out_max=None):
    x, qweight, w_scales, bias, x_scale, zp, stride, padding, dilation, groups = args
    return [x, pack_conv_weight(qweight, groups), w_scales, bias, x_scale, zp, list(qweight.shape[2:]), stride,
            padding, dilation, groups, out_min, out_max]


def test_pack_conv_weight_round_trip():
    for c_out, cin_g, k, groups in [(40, 6, (3, 2), 1), (34, 3, (1, 1), 2), (6, 1, (5, 5), 3), (16, 4, (3, 3), 1)]:
        w = torch.randint(-128, 128, (c_out, cin_g, *k), dtype=torch.int8)
        packed = pack_conv_weight(w, groups)
        assert packed.shape == (groups, -(-(c_out // groups) // 16), k[0] * k[1], -(-cin_g // 4), 16, 4)
        assert torch.equal(unpack_conv_weight(packed, c_out, cin_g, list(k)), w)
        # element [g, b, t, q, j, u] = w[g * cout_g + 16 b + j, 4 q + u, t]
        cout_g = c_out // groups
        g, oc, c, t = groups - 1, cout_g - 1, cin_g - 1, k[0] * k[1] - 1
        got = packed[g, oc // 16, t, c // 4, oc % 16, c % 4]
        assert got == w[g * cout_g + oc, c].flatten()[t]


@pytest.mark.parametrize("shape,c_out,k,stride,padding,dilation,groups", CONV2D_CASES)
@pytest.mark.parametrize("bounds", [(None, None), (0.0, None), (0.0, 6.0), (-0.25, 0.5)])
def test_conv2d_q8_packed(shape, c_out, k, stride, padding, dilation, groups, bounds):
    plain_args = conv_args(shape, c_out, k, stride, padding, dilation, groups, True, -3)
    args = packed_args(plain_args, *bounds)
    expected = reference("conv2d_q8_packed", args)
    check("pocket::conv2d_q8_packed", args, rtol=0, atol=0, expected=expected)
    plain = reference("conv2d_q8", plain_args)
    assert torch.equal(expected, plain.clamp(*bounds) if bounds != (None, None) else plain)


def test_conv2d_q8_packed_errors():
    args = packed_args(conv_args((1, 4, 6, 6), 2, (3, 3), (1, 1), (0, 0), (1, 1), 1, True, 0))
    fails = failing("pocket::conv2d_q8_packed", args, (1, 2, 4, 4))

    fails({1: args[1].float()}, r"conv2d_q8_packed: weight has dtype float32, expected int8")
    fails({1: args[1][0]}, r"conv2d_q8_packed: x \[1, 4, 6, 6\] and weight \[1, 9, 1, 16, 4\] must be 4-d "
                           r"\(NCHW\) and 6-d \(packed\)")
    fails({6: [3, 2]}, r"conv2d_q8_packed: weight has shape \[1, 1, 9, 1, 16, 4\], expected \[1, 1, 6, 1, 16, 4\] "
                       r"for 4 input and 2 output channels, groups 1 and a 3x2 kernel")
    fails({10: 2, 2: args[2][:1], 3: None}, r"conv2d_q8_packed: x has 4 channels and w_scales 1 values; with groups 2")
    fails({6: [0, 3]}, r"conv2d_q8_packed: kernel_size\[0\] is 0, expected 1 to")
    fails({11: float("nan")}, r"conv2d_q8_packed: out_min is NaN, expected a number or None")
    fails({5: -129}, r"conv2d_q8_packed: x_zero_point is -129, expected -128 to 127")


# ---- conv2d_q8_channels_last: conv2d_q8_packed on NHWC tensors, a residual before the clamp


def channels_last_args(packed, residual, out_scale=None, out_zero_point=None):
    x, *rest = packed
    return [x.permute(0, 2, 3, 1).contiguous(), *rest[:3], residual, *rest[3:], out_scale, out_zero_point]


@pytest.mark.parametrize("shape,c_out,k,stride,padding,dilation,groups", CONV2D_CASES)
@pytest.mark.parametrize("bounds,with_residual", [((None, None), False), ((0.0, None), True), ((0.0, 6.0), False),
                                                  ((-0.25, 0.5), True)])
def test_conv2d_q8_channels_last(shape, c_out, k, stride, padding, dilation, groups, bounds, with_residual):
    packed = packed_args(conv_args(shape, c_out, k, stride, padding, dilation, groups, True, 9))
    y = reference("conv2d_q8_packed", packed).permute(0, 2, 3, 1)  # unclamped: packed has no bounds
    residual = torch.randn(y.shape) if with_residual else None
    args = channels_last_args(packed, residual)
    args[12:14] = bounds
    expected = reference("conv2d_q8_channels_last", args)
    check("pocket::conv2d_q8_channels_last", args, rtol=0, atol=0, expected=expected)
    want = y + residual if with_residual else y
    assert torch.equal(expected, want.clamp(*bounds) if bounds != (None, None) else want)


@pytest.mark.parametrize("shape,c_out,k,stride,padding,dilation,groups", CONV2D_CASES)
@pytest.mark.parametrize("int8_x,int8_y,with_residual", [(True, False, False), (False, True, False),
                                                         (True, True, False), (True, True, True)])
@pytest.mark.parametrize("bounds", [(-0.5, 3.0), (1.0, -0.25)])  # out_min > out_max: out_max wins
def test_conv2d_q8_channels_last_int8(shape, c_out, k, stride, padding, dilation, groups, int8_x, int8_y,
                                      with_residual, bounds):
    """An int8 x is the float32 x quantized with x_scale and x_zero_point: the results are those
    of the float32 x, exactly. An int8 y is the float32 y quantized with out_scale and
    out_zero_point: exactly with a residual, else (requantized from the sums in float32) within
    one step, nearly always equal."""
    packed = packed_args(conv_args(shape, c_out, k, stride, padding, dilation, groups, True, -9))
    out_shape = reference("conv2d_q8_packed", packed).permute(0, 2, 3, 1).shape
    args = channels_last_args(packed, torch.randn(out_shape) * 0.5 if with_residual else None)
    args[12:14] = bounds
    y = reference("conv2d_q8_channels_last", args)
    x_scale, x_zp = args[5], args[6]
    out_scale, out_zp = 3.0 / 110, 20  # 3 saturates at 127
    xq = quantize_per_tensor(args[0], x_scale, x_zp).to(torch.int8)
    yq = quantize_per_tensor(y, out_scale, out_zp).to(torch.int8)
    if bounds[0] < bounds[1]:
        assert yq.max() == 127 and yq.min() > -128
    else:
        assert torch.equal(yq, torch.full_like(yq, round(-0.25 / out_scale) + out_zp))
    if int8_x:
        args[0] = xq
    if int8_y:
        args[14:16] = (out_scale, out_zp)
    expected = reference("conv2d_q8_channels_last", args)
    if int8_y and not with_residual:
        steps = (expected.int() - yq.int()).abs()
        assert steps.max() <= 1 and (steps == 0).float().mean() > 0.95
    else:
        assert torch.equal(expected, yq if int8_y else y)
    check("pocket::conv2d_q8_channels_last", args, rtol=0, atol=0, expected=expected)


def test_conv2d_q8_channels_last_errors():
    args = channels_last_args(packed_args(conv_args((1, 4, 6, 6), 2, (3, 3), (1, 1), (0, 0), (1, 1), 1, True, 0)),
                              None)
    fails = failing("pocket::conv2d_q8_channels_last", args, (1, 4, 4, 2))

    fails({0: args[0][0]}, r"conv2d_q8_channels_last: x \[6, 6, 4\] and weight \[1, 1, 9, 1, 16, 4\] must be 4-d "
                           r"\(NHWC\) and 6-d \(packed\)")
    fails({0: args[0].permute(0, 3, 1, 2).contiguous()},
          r"conv2d_q8_channels_last: weight has shape \[1, 1, 9, 1, 16, 4\], expected \[1, 1, 9, 2, 16, 4\] for 6 "
          r"input and 2 output channels")
    fails({4: torch.randn(1, 2, 4, 4)}, r"conv2d_q8_channels_last: residual has shape \[1, 2, 4, 4\], expected "
                                        r"the output's \[1, 4, 4, 2\]")
    fails({4: torch.randn(1, 4, 4, 2).double()}, r"conv2d_q8_channels_last: residual has dtype float64")
    fails({12: float("nan")}, r"conv2d_q8_channels_last: out_min is NaN, expected a number or None")
    fails({6: -129}, r"conv2d_q8_channels_last: x_zero_point is -129, expected -128 to 127")
    fails({5: -1.0}, r"conv2d_q8_channels_last: x_scale is -1, expected a positive finite float32")
    fails({0: args[0].to(torch.int16)}, r"conv2d_q8_channels_last: x has dtype int16, expected float32")
    fails({0: args[0].to(torch.uint8)}, r"conv2d_q8_channels_last: x has dtype uint8, expected float32")
    fails({14: 0.1}, r"conv2d_q8_channels_last: out_scale is given and out_zero_point None; expected both \(an int8 "
                     r"output\) or neither")
    fails({15: 3}, r"conv2d_q8_channels_last: out_scale is None and out_zero_point given")
    fails({14: 0.0, 15: 0}, r"conv2d_q8_channels_last: out_scale is 0, expected a positive finite float32")
    fails({14: float("inf"), 15: 0}, r"conv2d_q8_channels_last: out_scale is inf, expected a positive finite")
    fails({14: 0.1, 15: 128}, r"conv2d_q8_channels_last: out_zero_point is 128, expected -128 to 127")
    # the output's dtype follows out_scale: float32 without, int8 with
    with pytest.raises(PocketError, match=r"conv2d_q8_channels_last: output has dtype float32, expected int8"):
        check("pocket::conv2d_q8_channels_last", args[:14] + [0.1, 0], expected=torch.empty(1, 4, 4, 2))
    with pytest.raises(PocketError, match=r"conv2d_q8_channels_last: output has dtype int8, expected float32"):
        check("pocket::conv2d_q8_channels_last", args, expected=torch.empty(1, 4, 4, 2, dtype=torch.int8))
