"""Generated code and golden programs are up to date with their sources."""

import pathlib
import subprocess
import sys

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
    alter programs show up here (regenerate with tests/golden/make_golden.py on purpose)."""
    r = run("tests/golden/make_golden.py", "--check")
    assert r.returncode == 0, r.stderr + r.stdout
