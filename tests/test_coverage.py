"""Core ATen coverage (exporter/coverage.py): every op PyTorch tags core is supported, excepted
with a reason or listed as still to do; the README's op section and `pocket ops` agree with
the kernel tables."""

import subprocess
import sys

from pocket.cli import main
from pocket.exporter import coverage
from pocket.exporter.supported_ops import SUPPORTED_OPS


def test_every_core_op_is_accounted_for():
    c = coverage.coverage()
    assert not c["unlisted"], f"core ops neither supported, excepted nor to do: {c['unlisted']}"
    stale = sorted(set(coverage.TODO) & set(SUPPORTED_OPS))
    assert not stale, f"supported now, drop from coverage.TODO: {stale}"
    assert len(c["supported"]) + len(c["excepted"]) + len(c["todo"]) == len(c["core"])


def test_readme_section_is_current():
    r = subprocess.run([sys.executable, "-P", "-m", "pocket.exporter.coverage", "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_pocket_ops_lists_the_runtime_kernels(capsys):
    assert main(["ops"]) == 0
    out = capsys.readouterr().out
    listed = {line.split()[0] for line in out.splitlines()[:-1]}
    assert listed == set(SUPPORTED_OPS)
    assert out.splitlines()[-1] == f"{len(SUPPORTED_OPS)} ops"


def test_ops_pocket_will_not_run_say_what_to_do_instead():
    """nonzero (data-dependent size) and the FFTs (complex outputs) stop the export with the op,
    the model's line and a way around it."""
    import pytest
    import torch

    import pocket

    class NonZero(torch.nn.Module):
        def forward(self, x):
            return torch.nonzero(x > 0)  # the line the error must show

    class Spectrum(torch.nn.Module):
        def forward(self, x):
            return torch.fft.rfft(x).abs()  # the line the error must show

    for model, op, hint in [(NonZero(), "aten::nonzero", "torch.where(mask, x, fill)"),
                            (Spectrum(), "aten::_fft_r2c", "precomputed cos/sin matrices")]:
        with pytest.raises(pocket.exporter.ExportError) as e:
            pocket.export(model, (torch.randn(2, 8),))
        text = str(e.value)
        assert op in text and hint in text, text
        assert "test_coverage.py" in text and "# the line the error must show" in text, text
