"""Module profiling (`Module.set_profiling`/`profile`, `pocket run --profile`): every instruction
is counted once per run, named by its op and by the model source line it came from."""

import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

import pocket
from pocket import PocketError
from pocket.profile import format_profile, summarize
from program_tools import pack, unpack


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):  # conv + relu: one pocket::conv2d_packed (channels-last)
        y = torch.relu(self.conv(x))  # PROFILE-LINE-CONV
        return self.fc(y.mean(dim=(2, 3)))  # PROFILE-LINE-FC


def line_of(tag: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith(f"# {tag}"))


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    path = tmp_path_factory.mktemp("profile") / "net.pocket"
    pocket.export(Net().eval(), (torch.randn(1, 3, 8, 8),)).save(path)
    return path


def test_profile_counts_every_instruction_once_per_run(program):
    m = pocket.load(program)
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    m.forward(x)  # before profiling: not counted
    m.set_profiling(True)
    for _ in range(3):
        m.forward(x)
    entries = m.profile()
    ops = [e["op"] for e in entries]
    assert len(entries) > 0 and all(e["calls"] == 3 for e in entries), entries
    assert all(e["ms"] > 0 for e in entries), entries
    assert any(op.startswith("pocket::conv2d_packed") for op in ops), ops
    # The conv and the linear layer are named by this file's lines.
    sources = {e["source"] for e in entries}
    assert any(f"test_profile.py:{line_of('PROFILE-LINE-CONV')} in forward" in s for s in sources), sources
    assert any(f"test_profile.py:{line_of('PROFILE-LINE-FC')} in forward" in s for s in sources), sources
    conv = [e for e in entries if e["op"].startswith("pocket::conv2d_packed")]
    assert all(f"test_profile.py:{line_of('PROFILE-LINE-CONV')}" in e["source"] for e in conv)
    # ... and by their submodules.
    assert {e["layer"] for e in conv} == {"conv (Conv2d)"}, conv
    assert "fc (Linear)" in {e["layer"] for e in entries}


def test_summaries_add_up(program):
    m = pocket.load(program)
    m.set_profiling(True)
    m.forward(np.ones((1, 3, 8, 8), np.float32))
    entries = m.profile()
    total = sum(e["ms"] for e in entries)
    for by in ("op", "layer", "source"):
        rows = summarize(entries, by)
        assert sum(r["ms"] for r in rows) == pytest.approx(total)
        assert sum(r["calls"] for r in rows) == len(entries)
        assert [r["ms"] for r in rows] == sorted((r["ms"] for r in rows), reverse=True)
        assert sum(r["share"] for r in rows) == pytest.approx(1.0)
    text = format_profile(entries)
    assert "pocket::conv2d_packed" in text and f"test_profile.py:{line_of('PROFILE-LINE-CONV')}" in text
    assert "conv (Conv2d)" in text
    with pytest.raises(ValueError, match="by must be one of"):
        summarize(entries, "module")


def test_profiling_off_is_an_error_and_on_again_clears(program):
    m = pocket.load(program)
    x = np.ones((1, 3, 8, 8), np.float32)
    with pytest.raises(PocketError, match="profiling is off") as e:
        m.profile()
    assert e.value.status == "INVALID_ARGUMENT"
    m.set_profiling(True)
    m.forward(x)
    m.forward(x)
    m.set_profiling(True)  # clears
    assert all(e["calls"] == 0 and e["ms"] == 0 for e in m.profile())
    m.forward(x)
    assert all(e["calls"] == 1 for e in m.profile())
    m.set_profiling(False)
    with pytest.raises(PocketError, match="profiling is off"):
        m.profile()
    m.set_profiling(True)
    with pytest.raises(PocketError, match="no_such") as e:
        m.profile("no_such")
    assert e.value.status == "NOT_FOUND"


def test_profile_from_several_threads(program):
    """Runs from 4 threads on one module are all counted (the module runs them one at a time)."""
    m = pocket.load(program)
    m.set_profiling(True)
    x = np.ones((1, 3, 8, 8), np.float32)
    want = m.forward(x)
    threads = [threading.Thread(target=lambda: [np.testing.assert_array_equal(m.forward(x), want) for _ in range(5)])
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(e["calls"] == 21 for e in m.profile())


@pytest.mark.parametrize("field", ["source", "layer"])
def test_name_index_out_of_range_is_refused(program, field):
    program_t, segments = unpack(program.read_bytes())
    setattr(program_t.methods[0].steps[0], field, 1000)
    with pytest.raises(PocketError, match=f"instruction 0: {field} 1000 out of range") as e:
        pocket.Module.from_bytes(pack(program_t, segments)).method_info()
    assert e.value.status == "INVALID_PROGRAM"


def test_program_without_sources_profiles_with_empty_sources(program):
    """Files from before source lines were recorded (or stripped of them) still profile."""
    program_t, segments = unpack(program.read_bytes())
    for step in program_t.methods[0].steps:
        step.source = step.layer = -1
    program_t.methods[0].sources = program_t.methods[0].layers = []
    m = pocket.Module.from_bytes(pack(program_t, segments))
    m.set_profiling(True)
    m.forward(np.ones((1, 3, 8, 8), np.float32))
    assert {(e["source"], e["layer"]) for e in m.profile()} == {("", "")}
    assert "(source line unknown)" in format_profile(m.profile())


def test_cli_run_profile(program):
    r = subprocess.run([sys.executable, "-m", "pocket", "run", str(program), "--repeat", "4", "--profile"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "4 run(s)" in out and "pocket::conv2d_packed" in out, out
    assert f"test_profile.py:{line_of('PROFILE-LINE-CONV')} in forward" in out, out
    assert "model source line" in out and "conv (Conv2d)" in out, out
