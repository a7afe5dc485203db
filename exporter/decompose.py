"""Stage 2: decompose to core ATen, keeping the ops Pocket runs whole."""

import torch
from torch.export import ExportedProgram

# Ops core ATen would split up that Pocket has faster whole kernels for.
KEEP = (
    torch.ops.aten.linear.default,
    # F.pad's reflect/replicate modes: one copy instead of an arange/clamp/index chain
    *(getattr(torch.ops.aten, f"{mode}_pad{d}d").default for mode in ("reflection", "replication")
      for d in (1, 2, 3)),
)


def decompose(ep: ExportedProgram) -> ExportedProgram:
    table = torch.export.default_decompositions()
    for op in KEEP:
        table.pop(op, None)
    return ep.run_decompositions(table)
