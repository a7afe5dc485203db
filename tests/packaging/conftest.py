"""One `pocket package` run shared by the packaging tests.

Here (no NDK, no Xcode) it builds linux-x86_64 for real and Android arm64 and iOS as stand-ins.
The release workflow sets POCKET_DIST to its real output and runs the same checks on it.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "golden")
CI = os.environ.get("CI") == "true"


def need(tool: str, why: str = "") -> None:
    """Skips without `tool` on a laptop; under CI=true a missing toolchain fails."""
    if shutil.which(tool):
        return
    message = f"{tool} not found{': ' + why if why else ''}"
    if CI:
        pytest.fail(message + " (required under CI=true; scripts/setup.sh --test installs it)")
    pytest.skip(message)


def need_module(name: str) -> None:
    try:
        __import__(name)
    except ImportError:
        if CI:
            pytest.fail(f"Python package {name} missing (required under CI=true)")
        pytest.skip(f"Python package {name} missing")


@pytest.fixture(scope="session")
def dist(tmp_path_factory):
    """(folder, manifest dict) of a full stand-in package run (or of $POCKET_DIST)."""
    given = os.environ.get("POCKET_DIST")
    if given:
        out = os.path.abspath(given)
    else:
        for tool in ("cmake", "ninja", "javac", "aarch64-linux-gnu-g++"):
            need(tool)
        need_module("ziglang")
        need_module("lief")
        out = str(tmp_path_factory.mktemp("dist"))
        r = subprocess.run([sys.executable, "-m", "pocket", "package", "--standin", "--out", out,
                            "--targets", "linux-x86_64,android-arm64-v8a,ios-arm64"], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    with open(os.path.join(out, "manifest.json")) as f:
        return out, json.load(f)


def artifacts(manifest, kind):
    return [a for a in manifest["artifacts"] if a["kind"] == kind]
