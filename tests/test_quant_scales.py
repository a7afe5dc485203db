"""Symmetric group scales are chosen to minimize each group's squared error (formats.symmetric_scales):
never worse than amax / qmax, clearly better at 4 bits, and the runtime runs the result exactly
as the eager reference does (the -8 level included)."""

import numpy as np
import torch

import pocket
from pocket.exporter.quant.formats import WeightFormat, dequantize, quantize, unpack


def plain_error(g, bits):
    """Per-group squared error of the former choice, scale = amax / qmax."""
    qmax = 7 if bits == 4 else 127
    s = g.abs().amax(-1) / qmax
    s = torch.where(s == 0, torch.ones_like(s), s)
    q = torch.clamp(torch.round(g / s[..., None]), -qmax - (bits == 4), qmax)
    return ((q * s[..., None] - g) ** 2).sum(-1)


def test_no_group_is_worse_and_int4_error_drops_by_a_sixth():
    torch.manual_seed(0)
    w = torch.randn(128, 256) * torch.rand(128, 1)  # rows of different ranges
    w[3, :32] = 0  # an all-zero group
    w[5, 40] = 9.0  # an outlier
    for bits, most in ((4, 0.84), (8, 0.98)):
        fmt = WeightFormat(bits, 32, True)
        q, s, mins = quantize(w, fmt)
        new = ((dequantize(q, s, mins, fmt) - w) ** 2).reshape(128, 8, 32).sum(-1)
        old = plain_error(w.reshape(128, 8, 32), bits)
        assert (new <= old * (1 + 1e-4) + 1e-12).all()  # float32 sums: equal groups may differ in the last bits
        assert new.sum() < most * old.sum(), (bits, float(new.sum() / old.sum()))
        assert float(new[3, 0]) == 0.0 and float(s[3, 0]) == 1.0
    assert (unpack(quantize(w, WeightFormat(4, 32, True))[0], WeightFormat(4, 32, True)) == -8).any()


def test_runtime_matches_the_reference_with_the_new_scales(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.ReLU(), torch.nn.Linear(96, 32)).eval()
    x = torch.randn(5, 64)
    program = pocket.export(model, (x,), quantize="8da4w", group_size=32)
    program.save(str(tmp_path / "m.pocket"))
    from pocket.exporter.quant.config import resolve
    from pocket.exporter.quant.transform import quantize_modules

    reference, _ = quantize_modules(model, resolve("8da4w", 32))
    with torch.no_grad():
        want = reference(x).numpy()
    got = pocket.load(str(tmp_path / "m.pocket")).forward(x.numpy())
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
