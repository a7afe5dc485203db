"""The Python wheel for this platform (`pip wheel`), repaired by auditwheel when installed."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile

from .errors import PackageError


def build_wheel(root: str, out: str, say=print) -> str:
    tmp = tempfile.mkdtemp(prefix="pocket-wheel-")
    try:
        say("  wheel: pip wheel (builds the runtime and the pybind11 module)")
        r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp, root],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise PackageError(f"pip wheel failed:\n{(r.stderr or r.stdout)[-3000:]}")
        wheels = glob.glob(os.path.join(tmp, "pocket-*.whl"))
        if len(wheels) != 1:
            raise PackageError(f"pip wheel wrote {wheels}, expected one pocket wheel")
        wheel = wheels[0]
        if shutil.which("auditwheel"):
            repaired = os.path.join(tmp, "repaired")
            r = subprocess.run(["auditwheel", "repair", "-w", repaired, wheel], capture_output=True, text=True)
            if r.returncode != 0:
                raise PackageError(f"auditwheel repair failed:\n{r.stderr[-3000:]}")
            wheel = glob.glob(os.path.join(repaired, "*.whl"))[0]
            say(f"  wheel: repaired by auditwheel ({os.path.basename(wheel)})")
        dest = os.path.join(out, os.path.basename(wheel))
        shutil.copyfile(wheel, dest)
        return dest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
