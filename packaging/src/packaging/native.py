"""Native builds per target through the CMake presets, and the libraries they produce.

Every build goes through `cmake --preset <preset>` (CMakePresets.json is the one place flags
live); a selective build adds POCKET_KERNEL_TABLE and its own build folder. ELF libraries are
stripped into the output; Apple static libraries are not (Xcode strips the app).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field

from .errors import PackageError


@dataclass
class NativeBuild:
    target: str
    preset: str
    standin: bool
    build_dir: str
    libs: dict = field(default_factory=dict)   # file name -> path (stripped copy for ELF)


def _run(cmd, log, cwd):
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        rc = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        with open(log) as f:
            tail = "".join(f.readlines()[-30:])
        raise PackageError(f"{' '.join(cmd[:3])} failed (exit {rc}); log {log}:\n{tail}")


def _cache_value(build_dir: str, var: str) -> str:
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(var + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""


def build(root: str, target, preset: str, standin: bool, kernel_table: str | None, work: str,
          say=print) -> NativeBuild:
    """Configures and builds `preset` (with the selective `kernel_table`, if any) under `work`."""
    tag = ""
    if kernel_table:
        with open(kernel_table, "rb") as f:
            tag = "-sel-" + hashlib.sha256(f.read()).hexdigest()[:10]
    build_dir = os.path.join(work, preset + tag)
    os.makedirs(build_dir, exist_ok=True)
    log = os.path.join(build_dir, "package.log")
    args = ["cmake", "--preset", preset, "-B", build_dir, f"-DPOCKET_KERNEL_TABLE={kernel_table or ''}"]
    if shutil.which("ccache"):
        # zig's wrapper compilers (stand-in Apple slices) are rewritten by every configure: ccache
        # would miss on their mtime each time, so it checks their content (zig-apple.cmake)
        launcher = "env;CCACHE_COMPILERCHECK=content;ccache" if standin and target.family == "apple" else "ccache"
        args += [f"-DCMAKE_C_COMPILER_LAUNCHER={launcher}", f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}"]
    start = time.monotonic()
    say(f"  {target.name}: cmake --preset {preset}" + (" (stand-in)" if standin else "")
        + (" selective" if kernel_table else ""))
    _run(args, log, root)
    wanted = ["pocket_static"] if target.family == "apple" else ["pocket", "pocket_jni", "pocket_static"]
    jobs = str(os.cpu_count() or 2)
    _run(["cmake", "--build", build_dir, "-j", jobs, "--target", *wanted], log, root)
    result = NativeBuild(target.name, preset, standin, build_dir)
    out = os.path.join(build_dir, "ship")
    os.makedirs(out, exist_ok=True)
    if target.family == "apple":
        result.libs["libpocket.a"] = os.path.join(build_dir, "libpocket.a")
    else:
        strip = _cache_value(build_dir, "CMAKE_STRIP") or "strip"
        for name in ("libpocket.so", "libpocket_jni.so", "libpocket.a"):
            src = os.path.join(build_dir, name)
            dst = os.path.join(out, name)
            if name.endswith(".so"):
                _run([strip, "--strip-unneeded", "-o", dst, src], log, root)
            else:
                shutil.copyfile(src, dst)
            result.libs[name] = dst
    say(f"  {target.name}: built in {time.monotonic() - start:.0f} s")
    return result
