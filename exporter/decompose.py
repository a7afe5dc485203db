"""Stage 2: decompose to core ATen, keeping the ops Pocket runs whole."""

import torch
from torch.export import ExportedProgram

# Ops core ATen would split up that Pocket has faster whole kernels for.
KEEP = (torch.ops.aten.linear.default,)


def decompose(ep: ExportedProgram) -> ExportedProgram:
    table = torch.export.default_decompositions()
    for op in KEEP:
        table.pop(op, None)
    return ep.run_decompositions(table)
