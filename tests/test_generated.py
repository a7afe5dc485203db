"""Generated code and golden programs are up to date with their sources."""

import pathlib
import subprocess
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(*args):
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True)


def test_flatbuffers_code_is_fresh():
    r = run("schema/generate.py", "--check")
    assert r.returncode == 0, r.stderr


def test_kernel_registry_is_fresh():
    r = run("runtime_core/kernels/gen_registry.py", "--check")
    assert r.returncode == 0, r.stderr


def test_golden_programs_are_byte_identical():
    """A re-export of the golden models gives the committed bytes: exporter changes that
    alter programs show up here (regenerate with tests/golden/make_golden.py on purpose).
    Eager PyTorch's outputs in the .io files need only agree within make_golden.IO_RTOL."""
    r = run("tests/golden/make_golden.py", "--check")
    assert r.returncode == 0, r.stderr + r.stdout


def test_golden_io_check_allows_rounding_only_in_float_outputs():
    """The .io comparison behind --check: the CPU's rounding of eager outputs passes; a changed
    input, a changed integer output or a float output off by more than IO_RTOL does not."""
    sys.path.insert(0, str(ROOT / "tests" / "golden"))
    import make_golden as mg

    x, idx = torch.randn(2, 3), torch.tensor([1, 2])
    y = torch.randn(4) * 100
    old = mg.io_bytes((x, idx), (y, idx * 2))
    n_in, tensors = mg.io_tensors(old)
    assert n_in == 2 and all(torch.equal(a, b) for a, b in zip(tensors, (x, idx, y, idx * 2)))

    assert mg.same_io(old, mg.io_bytes((x, idx), (torch.nextafter(y, y + 1), idx * 2)))
    assert not mg.same_io(old, mg.io_bytes((x, idx), (y * (1 + 10 * mg.IO_RTOL), idx * 2)))
    assert not mg.same_io(old, mg.io_bytes((torch.nextafter(x, x + 1), idx), (y, idx * 2)))
    assert not mg.same_io(old, mg.io_bytes((x, idx), (y, idx * 2 + 1)))
    assert not mg.same_io(old, mg.io_bytes((x, idx), (y[:3], idx * 2)))
