"""Which of PyTorch's core ATen ops Pocket runs, and why the others are not there.

    python -m pocket.exporter.coverage              # print the coverage report
    python -m pocket.exporter.coverage --readme     # rewrite README.md's op section from it
    python -m pocket.exporter.coverage --check      # exit 1 when that section is stale

"Core" is PyTorch's own definition: the overloads tagged torch.Tag.core, the opset
torch.export's default decompositions end in. Every one is supported (a line in
runtime_core/kernels/tables/*.txt), excepted (EXCEPTED: never met by inference), or still to do
(TODO). A core op in none of the three is an error of this table (tests/test_coverage.py).
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

import torch

from pocket.exporter.supported_ops import SUPPORTED_OPS

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLES = ROOT / "runtime_core" / "kernels" / "tables"
README = ROOT / "README.md"
BEGIN, END = "<!-- ops:begin (python -m pocket.exporter.coverage --readme) -->", "<!-- ops:end -->"

_BACKWARD = "a backward (training) op"
_RANDOM = "random sampling: no deterministic inference use; generate on the host and pass as an input"
EXCEPTED = {
    "aten::_adaptive_avg_pool2d_backward": _BACKWARD,
    "aten::avg_pool2d_backward": _BACKWARD,
    "aten::convolution_backward": _BACKWARD,
    "aten::embedding_dense_backward": _BACKWARD,
    "aten::max_pool2d_with_indices_backward": _BACKWARD,
    "aten::native_group_norm_backward": _BACKWARD,
    "aten::native_layer_norm_backward": _BACKWARD,
    "aten::rand": _RANDOM,
    "aten::randn": _RANDOM,
    "aten::randperm": _RANDOM,
    "aten::native_dropout": "training-mode dropout (eval graphs have none)",
    "aten::_native_batch_norm_legit": "training-mode batch norm updating running stats (eval graphs use "
                                      "_native_batch_norm_legit_no_training)",
    "aten::atan2.out": "an out= variant: exported graphs use the functional aten::atan2",
    "aten::_local_scalar_dense": "Tensor.item(): a data-dependent Python scalar; torch.export needs it "
                                 "guarded, and Pocket programs keep values in tensors",
    "aten::sym_storage_offset": "strided views are copies in Pocket (planned contiguous memory)",
    "aten::sym_stride.int": "strided views are copies in Pocket (planned contiguous memory)",
    "aten::sym_is_contiguous": "strided views are copies in Pocket (planned contiguous memory)",
    "aten::resize_": "in-place resize: torch.export's functional graphs have none",
}

# Core inference ops without a kernel yet (export names them in a clear error).
TODO = {
    "aten::_fft_r2c": "complex outputs: Pocket has no complex dtype (the export error suggests cos/sin matmuls)",
    "aten::_fft_c2r": "complex inputs: Pocket has no complex dtype (the export error suggests cos/sin matmuls)",
    "aten::nonzero": "data-dependent output shape (the export error suggests fixed-shape alternatives)",
}


def core_ops() -> set[str]:
    """Every overload PyTorch tags core, as 'aten::name[.overload]'."""
    out = set()
    # every registered aten op (dir(torch.ops.aten) lists only the ones looked up so far)
    names = {n.split("::", 1)[1].split(".", 1)[0] for n in torch._C._dispatch_get_all_op_names()
             if n.startswith("aten::")}
    for name in sorted(names):
        packet = getattr(torch.ops.aten, name, None)
        if not isinstance(packet, torch._ops.OpOverloadPacket):
            continue
        for overload in packet.overloads():
            if torch.Tag.core in getattr(packet, overload).tags:
                out.add(f"aten::{name}" + ("" if overload == "default" else f".{overload}"))
    return out


def coverage() -> dict:
    core = core_ops()
    return {
        "core": core,
        "supported": core & set(SUPPORTED_OPS),
        "excepted": {op: EXCEPTED[op] for op in sorted(core & set(EXCEPTED))},
        "todo": {op: TODO[op] for op in sorted(core & set(TODO) - set(SUPPORTED_OPS))},
        "unlisted": sorted(core - set(SUPPORTED_OPS) - set(EXCEPTED) - set(TODO)),
        "extra": sorted(set(SUPPORTED_OPS) - core),
    }


def _table_ops() -> dict[str, list[str]]:
    """Op names per kernel table file (elementwise, nn, reduce, ...), in table order."""
    out = {}
    for path in sorted(TABLES.glob("*.txt")):
        names = [line.split("#", 1)[0].split()[0] for line in path.read_text().splitlines()
                 if line.split("#", 1)[0].strip()]
        out[path.stem] = names
    return out


def readme_section() -> str:
    c = coverage()
    n_inference = len(c["core"]) - len(c["excepted"])
    lines = [
        BEGIN,
        f"Pocket runs **{len(c['supported'])} of PyTorch's {len(c['core'])} core ATen ops** "
        f"({len(c['supported'])} of the {n_inference} that inference can meet), plus "
        f"{sum(op.startswith('aten::') for op in c['extra'])} ATen ops outside the core set that exported "
        "models keep (`linear`, "
        "`linalg_vector_norm`, ...) and Pocket's own quantized and LLM ops. `pocket ops` prints the table of "
        "the runtime you have; `pocket ops --core` this report. Each op is tested against ATen "
        "(`tests/kernels/`) and on PyTorch's OpInfo samples (`tests/test_opinfo.py`).",
        "",
    ]
    for table, names in _table_ops().items():
        lines.append(f"- **{table}**: " + ", ".join(f"`{n.removeprefix('aten::')}`" for n in names))
    lines += ["", "Not supported, by design:", ""]
    lines += [f"- `{op.removeprefix('aten::')}`: {why}" for op, why in c["excepted"].items()]
    lines += ["", "Not yet (export stops with an error naming the op and the model line):", ""]
    lines += [f"- `{op.removeprefix('aten::')}`: {c['todo'][op]}" for op in c["todo"]]
    lines.append(END)
    return "\n".join(lines)


def update_readme(check: bool) -> bool:
    """Rewrites the section between the markers; returns whether it was up to date."""
    text = README.read_text()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        sys.exit(f"README.md has no '{BEGIN}' ... '{END}' section")
    new = pattern.sub(lambda _: readme_section(), text)
    if new == text:
        return True
    if not check:
        README.write_text(new)
    return False


def report() -> str:
    c = coverage()
    out = [f"core ATen ops: {len(c['supported'])} of {len(c['core'])} supported, "
           f"{len(c['excepted'])} excepted, {len(c['todo'])} to do"]
    out += [f"  excepted  {op:44} {why}" for op, why in c["excepted"].items()]
    out += [f"  to do     {op:44} {why}" for op, why in c["todo"].items()]
    out += [f"  UNLISTED  {op}" for op in c["unlisted"]]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--readme", action="store_true", help="rewrite README.md's op section")
    ap.add_argument("--check", action="store_true", help="exit 1 when README.md's op section is stale")
    args = ap.parse_args(argv)
    if args.check:
        if not update_readme(check=True):
            print("README.md's op section is stale: run python -m pocket.exporter.coverage --readme")
            return 1
        return 0
    if args.readme:
        update_readme(check=False)
        return 0
    print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
