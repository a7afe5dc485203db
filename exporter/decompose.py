"""Stage 2: decompose to core ATen, keeping the ops Pocket runs whole."""

import torch
from torch.export import ExportedProgram

# Ops core ATen would split up that Pocket has faster whole kernels for.
KEEP = (
    torch.ops.aten.linear.default,
    # MobileNetV3's activations: one pass over the tensor instead of four, and channels-last
    torch.ops.aten.hardswish.default,
    torch.ops.aten.hardsigmoid.default,
    # EfficientNet's and YOLO's: one pass instead of sigmoid then mul
    torch.ops.aten.silu.default,
    # F.pad's reflect/replicate modes: one copy instead of an arange/clamp/index chain
    *(getattr(torch.ops.aten, f"{mode}_pad{d}d").default for mode in ("reflection", "replication")
      for d in (1, 2, 3)),
)


def decompose(ep: ExportedProgram) -> ExportedProgram:
    table = torch.export.default_decompositions()
    for op in KEEP:
        table.pop(op, None)
    _views_as_reshapes(ep)
    return ep.run_decompositions(table)


def _views_as_reshapes(ep: ExportedProgram) -> None:
    """aten.view -> aten.reshape before decomposing. Decompositions may give an op's result other
    strides than eager did (GPT-2: the attention output, then its Conv1D's x.view(-1, n)), and
    re-tracing a view of it then fails in torch. The captured graph is functional and each view
    was valid in eager, so reshape gives the same values; it re-traces to a view where it can."""
    changed = False
    for node in ep.graph_module.graph.nodes:
        if node.op == "call_function" and node.target is torch.ops.aten.view.default:
            node.target = torch.ops.aten.reshape.default
            changed = True
    if changed:
        ep.graph_module.recompile()
