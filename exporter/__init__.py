"""pocket.exporter: PyTorch model -> .pocket program.

Stages, in pipeline order (one file each):
    capture.py     torch.export with dynamic shapes, lifted into a MethodGraph
    repeat.py      a stack of identical layers traced once and copied (export(repeated=...))
    decompose.py   core ATen (keeping ops Pocket runs whole, e.g. linear)
    passes/        BatchNorm folding, constant folding, op-support check
    emit.py        values and instructions of each method
    plan.py        memory planning (lifetimes -> arena offsets) of the emitted method
    serialize.py   flatbuffer + aligned segments -> bytes
"""

from pocket.exporter.export import ExportError, Program, export
from pocket.exporter.quant.config import QuantConfig

__all__ = ["export", "Program", "ExportError", "QuantConfig"]
