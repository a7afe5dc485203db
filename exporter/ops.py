"""Naming of graph ops as the runtime's kernel registry knows them."""

import operator

import torch

from pocket.exporter.errors import ExportError
from pocket.exporter.supported_ops import SUPPORTED_OPS

# Python operators on symbolic ints (dynamic shapes) -> runtime ops.
SYM_OPS = {
    operator.add: "sym::add", operator.sub: "sym::sub", operator.mul: "sym::mul",
    operator.floordiv: "sym::floordiv", operator.mod: "sym::mod", operator.neg: "sym::neg",
    operator.eq: "sym::eq", operator.ne: "sym::ne", operator.lt: "sym::lt", operator.le: "sym::le",
    operator.gt: "sym::gt", operator.ge: "sym::ge", torch.sym_max: "sym::max", torch.sym_min: "sym::min",
}

# Checks torch.export leaves in the graph; the runtime checks input bounds itself.
DROPPED = {
    torch.ops.aten._assert_scalar.default,
    torch.ops.aten.sym_constrain_range_for_size.default,
    torch.ops.aten.sym_constrain_range.default,
    torch.ops.aten._assert_tensor_metadata.default,
}


def op_name(target) -> str:
    """'aten::add.Tensor' for torch.ops.aten.add.Tensor, 'aten::relu' for a default overload."""
    if target in SYM_OPS:
        return SYM_OPS[target]
    if isinstance(target, torch._ops.OpOverload):
        ns, name = target._schema.name.split("::")
        overload = target._overloadname
        return f"{ns}::{name}" + ("" if overload == "default" else f".{overload}")
    return getattr(target, "__name__", repr(target))


def split_name(full: str) -> tuple[str, str]:
    """('aten::add', 'Tensor') for 'aten::add.Tensor'."""
    ns, rest = full.split("::", 1)
    name, _, overload = rest.partition(".")
    return f"{ns}::{name}", overload


def kernel_signature(name: str) -> tuple[str, str]:
    """The kernel table's argument kinds of op `name`: ('TTs', 'T') for 'aten::add.Tensor'.

    The tables (runtime_core/kernels/tables/*.txt, via supported_ops.py) are the one source of
    each argument's kind; the kind characters are listed in include/pocket/kernel.h.
    """
    if name not in SUPPORTED_OPS:
        raise ExportError(f"unsupported op {name}: no kernel table lists it")
    inputs, outputs = SUPPORTED_OPS[name].split(">")
    return inputs, outputs
