"""GGUF block types decoded into Pocket's weight formats without loss.

Each decoder takes a row-major array of blocks (uint8, one block per row) and returns the
integer values (int8: every format's values fit), one scale (and min) per group, and the
WeightFormat they fit:

    Q4_0  32 x 4-bit, w = (q - 8) d              -> 4-bit symmetric, group 32
    Q4_1  32 x 4-bit, w = q d + m                -> 4-bit asymmetric, group 32
    Q8_0  32 x int8,  w = q d                    -> 8-bit symmetric, group 32
    Q4_K  256 = 8 x 32 x 4-bit, per-32 6-bit scale/min: w = q (d sc) - (dmin m)
                                                 -> 4-bit asymmetric, group 32
    Q5_K  as Q4_K with a fifth bit               -> 8-bit asymmetric (values 0..31), group 32
    Q6_K  256 = 16 x 16 x 6-bit, int8 scales: w = (q - 32) (d sc)
                                                 -> 8-bit symmetric (values -32..31), group 16

Scales and mins are the values the gguf package's own de-quantization computes, so
q * scale + min reproduces its values bit for bit: Q4_0, Q4_1 and Q8_0 keep the file's float16
d and m (half the bytes of float32); the K-quants' products d sc and dmin m are float32 unless
every one of a tensor's values is exactly a float16 (checked, not assumed).
"""

from __future__ import annotations

import numpy as np

from pocket.exporter.quant.formats import WeightFormat


def _f16(b: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(b).view(np.float16).astype(np.float32)


def _half(b: np.ndarray) -> np.ndarray:
    """The file's float16 values as they are."""
    return np.ascontiguousarray(b).view(np.float16)


def _narrow(scales: np.ndarray, mins):
    """float32 scales (and mins) as float16 when every value is exactly a float16, else as they are."""
    parts = [scales] if mins is None else [scales, mins]
    with np.errstate(over="ignore"):  # values past float16's range become inf: not equal, kept float32
        exact = all(np.array_equal(p.astype(np.float16).astype(np.float32), p) for p in parts)
    if exact:
        parts = [p.astype(np.float16) for p in parts]
    return parts[0], None if mins is None else parts[1]


def _nibbles(qs: np.ndarray, chunk: int) -> np.ndarray:
    """Bytes in chunks of `chunk`: each chunk gives its low nibbles, then its high nibbles."""
    n = qs.shape[0]
    q = qs.reshape(n, -1, 1, chunk) >> np.array([0, 4], dtype=np.uint8).reshape(1, 1, 2, 1)
    return (q & 0x0F).reshape(n, -1)


def _k_scales(s: np.ndarray):
    """The 8 six-bit scales and mins packed in 12 bytes (Q4_K, Q5_K)."""
    n = s.shape[0]
    s = s.reshape(n, 3, 4)
    lo, hi, mixed = s[:, 0], s[:, 1], s[:, 2]
    sc = np.concatenate([lo & 0x3F, (mixed & 0x0F) | ((lo >> 2) & 0x30)], axis=1)
    mn = np.concatenate([hi & 0x3F, (mixed >> 4) | ((hi >> 2) & 0x30)], axis=1)
    return sc.astype(np.float32), mn.astype(np.float32)


def q4_0(b):
    q = _nibbles(b[:, 2:], 16).view(np.int8) - np.int8(8)
    return q, _half(b[:, :2]), None, WeightFormat(4, 32, True)


def q4_1(b):
    q = _nibbles(b[:, 4:], 16).view(np.int8)
    return q, _half(b[:, :2]), _half(b[:, 2:4]), WeightFormat(4, 32, False)


def q8_0(b):
    q = np.ascontiguousarray(b[:, 2:]).view(np.int8)
    return q, _half(b[:, :2]), None, WeightFormat(8, 32, True)


def q4_k(b):
    d, dmin = _f16(b[:, 0:2]), _f16(b[:, 2:4])
    sc, mn = _k_scales(b[:, 4:16])
    q = _nibbles(b[:, 16:], 32).view(np.int8)
    return q, *_narrow(d * sc, -(dmin * mn)), WeightFormat(4, 32, False)


def q5_k(b):
    d, dmin = _f16(b[:, 0:2]), _f16(b[:, 2:4])
    sc, mn = _k_scales(b[:, 4:16])
    qh, qs = b[:, 16:48], b[:, 48:]
    n = b.shape[0]
    high = (qh.reshape(n, 1, 32) >> np.arange(8, dtype=np.uint8).reshape(1, 8, 1)) & 1
    q = (_nibbles(qs, 32) | (high.reshape(n, -1) << 4)).view(np.int8)
    return q, *_narrow(d * sc, -(dmin * mn)), WeightFormat(8, 32, False)


def q6_k(b):
    n = b.shape[0]
    ql, qh, scales, d = b[:, :128], b[:, 128:192], b[:, 192:208], b[:, 208:210]
    low = _nibbles(ql, 64).reshape(n, -1)
    high = (qh.reshape(n, 2, 1, 32) >> np.array([0, 2, 4, 6], dtype=np.uint8).reshape(1, 1, 4, 1)) & 3
    q = (low | (high.reshape(n, -1) << 4)).view(np.int8) - np.int8(32)
    sc = np.ascontiguousarray(scales).view(np.int8).astype(np.float32)
    return q, _narrow(_f16(d) * sc, None)[0], None, WeightFormat(8, 16, True)


DECODERS = {"Q4_0": q4_0, "Q4_1": q4_1, "Q8_0": q8_0, "Q4_K": q4_k, "Q5_K": q5_k, "Q6_K": q6_k}
