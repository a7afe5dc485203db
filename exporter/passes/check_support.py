"""Checks that the runtime has a kernel for every op, before anything is written.

The error lists every unsupported op once, with the model source line of each use.
"""

import operator

import torch

from pocket.exporter.errors import ExportError, source_line
from pocket.exporter.ops import SYM_OPS, op_name
from pocket.exporter.supported_ops import SUPPORTED_OPS


_COMPLEX = ("complex tensors are not supported by Pocket; compute the transform as real matmuls "
            "with precomputed cos/sin matrices (e.g. torch.stft's frames @ cos and @ sin) instead")
# What to do instead, for ops Pocket will not run as they are.
HINTS = {
    "aten::nonzero": "its output size depends on the input's values, and Pocket plans every tensor's "
                     "size ahead; keep a fixed shape instead: torch.where(mask, x, fill), a mask "
                     "multiplied in, or a top-k over the mask",
    "aten::_fft_r2c": _COMPLEX,
    "aten::_fft_c2r": _COMPLEX,
    "aten::_fft_c2c": _COMPLEX,
}


def check_support(mg) -> None:
    missing: dict[str, list[str]] = {}
    for node in mg.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        if isinstance(node.target, torch._ops.HigherOrderOperator):
            name = f"higher-order op {node.target.name()} (control flow is not supported yet)"
        else:
            name = op_name(node.target)
            if name in SUPPORTED_OPS:
                continue
            if node.target in SYM_OPS:
                name = f"{name} (symbolic shape arithmetic)"
        missing.setdefault(name, []).append(source_line(node))
    if missing:
        lines = [f"method '{mg.name}' uses ops the Pocket runtime does not support:"]
        for name, uses in sorted(missing.items()):
            lines.append(f"  {name}" + (f": {HINTS[name]}" if name in HINTS else ""))
            lines += [f"      at {u}" for u in sorted(set(uses))[:5]]
        raise ExportError("\n".join(lines))
