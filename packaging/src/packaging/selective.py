"""Selective builds: the kernel table of a set of programs.

The runtime resolves ops by name against an explicit table (no static registration), so a
library that serves given programs only needs a table with their ops: the linker then drops
every other kernel. A program that uses an op left out is refused at load with an error naming
the op, like any unsupported op.
"""

from __future__ import annotations

import os
import subprocess
import sys

from .errors import PackageError


def program_ops(paths: list[str]) -> list[str]:
    """Sorted ops ("aten::add.Tensor", ...) used by any method of the programs (verified loads)."""
    from pocket.describe import describe

    ops: set[str] = set()
    for path in paths:
        if not os.path.isfile(path):
            raise PackageError(f"no program file {path}")
        try:
            info = describe(path)
        except Exception as e:  # PocketError from the loader: name the file
            raise PackageError(f"{path} is not a valid .pocket program: {e}") from e
        for method in info["methods"].values():
            ops.update(method["ops"])
    return sorted(ops)


def write_kernel_table(root: str, ops: list[str], out_dir: str) -> str:
    """Writes ops.txt and the selective registry table into out_dir; returns the table's path."""
    os.makedirs(out_dir, exist_ok=True)
    ops_file = os.path.join(out_dir, "ops.txt")
    table = os.path.join(out_dir, "registry_table.inc")
    with open(ops_file, "w") as f:
        f.write("\n".join(ops) + "\n")
    gen = os.path.join(root, "runtime_core", "kernels", "gen_registry.py")
    r = subprocess.run([sys.executable, gen, "--select", ops_file, "--out", table], capture_output=True, text=True)
    if r.returncode != 0:
        raise PackageError(f"selective kernel table: {r.stderr.strip() or r.stdout.strip()}")
    return table
