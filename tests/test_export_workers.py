"""Methods exported in worker processes (exporter/workers.py) give the file a sequential export
gives, byte for byte, and the same errors and warnings."""

import sys
import warnings

import pytest
import torch

from pocket.exporter import ExportError, export

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers fork (Linux only)")


class Shared(torch.nn.Module):
    """Methods that share weights and mutable buffers, and own constants and buffers of their own."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.register_buffer("state", torch.arange(8.0))           # mutated, non-zero start
        self.register_buffer("count", torch.zeros(8))              # mutated, zero start
        self.register_buffer("table", torch.randn(8))              # a constant only `second` reads
        self.register_buffer("late", torch.full((8,), 3.0))        # mutated only by `third`

    def forward(self, x):
        self.state.add_(x.sum(0))
        return self.lin(x) + self.state

    def second(self, x):
        self.count.add_(1)
        return self.lin(x) * self.table + self.count

    def third(self, x):
        self.late.mul_(2)
        return x + self.late + 2.5

    def warns(self, x):
        warnings.warn("a warning from the traced code", UserWarning)
        return x * 2

    def unsupported(self, x):
        return torch.special.bessel_j0(x)


class Method(torch.nn.Module):
    """One method of `shared` as a module's forward: every method's buffers are `shared.*`."""

    def __init__(self, shared, name):
        super().__init__()
        self.shared, self.name = shared, name

    def forward(self, x):
        return getattr(self.shared, self.name)(x)


def _export(monkeypatch, jobs, *names):
    monkeypatch.setenv("POCKET_EXPORT_JOBS", str(jobs))
    torch.manual_seed(0)
    m = Shared().eval()
    x = torch.randn(2, 8)
    return export(None, methods={name: (Method(m, name), (x,)) for name in names})


@pytest.mark.parametrize("jobs", [2, 3])
def test_workers_write_the_sequential_file(monkeypatch, caplog, jobs):
    names = ("forward", "second", "third")
    sequential = _export(monkeypatch, 1, *names)
    parallel = _export(monkeypatch, jobs, *names)
    assert not [r for r in caplog.records if "worker" in r.getMessage()]  # no worker fell back to the parent
    assert parallel.summary == sequential.summary
    assert parallel.data == sequential.data


def test_a_workers_error_is_raised_as_sequentially(monkeypatch):
    with pytest.raises(ExportError) as sequential:
        _export(monkeypatch, 1, "forward", "unsupported")
    with pytest.raises(ExportError) as parallel:
        _export(monkeypatch, 2, "forward", "unsupported")
    assert str(parallel.value) == str(sequential.value)
    assert "bessel_j0" in str(parallel.value)


def test_a_workers_warnings_reach_the_caller(monkeypatch):
    with pytest.warns(UserWarning, match="a warning from the traced code"):
        _export(monkeypatch, 2, "forward", "warns")


def test_bad_job_count_is_named(monkeypatch):
    with pytest.raises(ExportError, match="POCKET_EXPORT_JOBS='two'"):
        monkeypatch.setenv("POCKET_EXPORT_JOBS", "two")
        export(None, methods={"a": (torch.nn.ReLU(), (torch.randn(2),)), "b": (torch.nn.ReLU(), (torch.randn(2),))})
