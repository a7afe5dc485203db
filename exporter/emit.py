"""Stage 4: emit a method's value table and instruction list (flatbuffers object API).

Every graph value becomes an entry of the value table: tensors (inputs, constants, mutable
buffers, planned activations), ints (constants and symbolic sizes), lists and so on. Each op
becomes a KernelCall whose args are value indices in ATen schema order, then its outputs; each
argument's kind (tensor, int or None, scalar, ...) is the one the kernel table's signature gives
(ops.kernel_signature), and the torch schema only matches the call's arguments to positions and
defaults.
Planned tensors get their arena offsets afterwards from plan.py.
"""

from __future__ import annotations

import json
import operator

import torch
from torch.utils._sympy.value_ranges import bound_sympy

from pocket.exporter.capture import MethodGraph
from pocket.exporter.errors import ExportError, layer_name, source_line
from pocket.exporter.ops import SYM_OPS, kernel_signature, op_name, split_name
from pocket.exporter.supported_ops import SUPPORTED_OPS
from pocket.fb.api import (BoolT, DoubleListT, DoubleT, Instruction, IntListT, IntT, KernelCallT,
                       KeyValueT, Location, MethodT, MoveT, NullT, OperatorT, OptionalTensorListT, StepT,
                       StringT, TensorListT, TensorT, ValueKind, ValueT)
from pocket.fb.api import ScalarType as FbScalarType

DTYPES = {
    torch.float32: FbScalarType.Float32, torch.float16: FbScalarType.Float16,
    torch.bfloat16: FbScalarType.BFloat16, torch.float64: FbScalarType.Float64,
    torch.int8: FbScalarType.Int8, torch.uint8: FbScalarType.UInt8, torch.int16: FbScalarType.Int16,
    torch.int32: FbScalarType.Int32, torch.int64: FbScalarType.Int64, torch.bool: FbScalarType.Bool,
}

# Arguments that only matter to eager PyTorch (where a tensor lives, its layout). The kernel
# tables give them as 'j' (int or None) with no mark of their own, so they are known by name
# here and always sent as None.
IGNORED_ARGS = {"layout", "device", "pin_memory", "memory_format", "generator", "non_blocking"}


def pocket_dtype(dtype: torch.dtype, what: str) -> int:
    if dtype not in DTYPES:
        raise ExportError(f"{what}: dtype {dtype} is not supported by Pocket")
    return DTYPES[dtype]


class MethodEmitter:
    """Builds one MethodT. `segments` and `buffers` are the program-wide tables (shared)."""

    def __init__(self, mg: MethodGraph, add_segment, buffer_index):
        self.mg = mg
        self.add_segment = add_segment      # (tensor) -> segment index
        self.buffer_index = buffer_index    # (fqn, tensor) -> buffer index
        self.values: list[ValueT] = []
        self.node_value: dict[torch.fx.Node, object] = {}  # int index, or list for multi-output
        self.int_cache: dict[tuple, int] = {}
        self.operators: dict[str, int] = {}
        self.steps: list[StepT] = []
        self.sources: dict[str, int] = {}   # source line -> index in Method.sources
        self.layers: dict[str, int] = {}    # submodule -> index in Method.layers
        self.planned: list[int] = []        # value indices of arena tensors

    # ---- values -----------------------------------------------------------------------------

    def add_value(self, kind: int, obj) -> int:
        v = ValueT()
        v.kindType, v.kind = kind, obj
        self.values.append(v)
        return len(self.values) - 1

    def scalar(self, kind: int, cls, value) -> int:
        key = (kind, type(value), value)
        if key not in self.int_cache:
            obj = cls()
            if obj is not None and value is not None:
                obj.value = value
            self.int_cache[key] = self.add_value(kind, obj)
        return self.int_cache[key]

    def wrapped_number(self, value) -> int:
        """A 0-d constant tensor for a number passed as a Tensor argument (as torch wraps it)."""
        t = torch.tensor(value, dtype=torch.bool if isinstance(value, bool) else
                         torch.int64 if isinstance(value, int) else torch.float32)
        return self.tensor(t, f"number {value!r}", Location.Constant, self.add_segment(t))

    def symint_tensor(self, node) -> int:
        """A 0-d int64 tensor holding a symbolic int computed at run time."""
        out = self.tensor(torch.empty((), dtype=torch.int64), f"tensor of {node.name}", Location.Arena)
        dtype = self.int_value(int(DTYPES[torch.int64]))
        self.kernel("aten::scalar_tensor", [self.node_value[node], dtype, self.none(), self.none(), self.none(), out], node)
        return out

    def none(self) -> int:
        return self.scalar(ValueKind.Null, NullT, None)

    def int_value(self, v) -> int:
        if isinstance(v, torch.fx.Node):
            return self.node_value[v]
        if isinstance(v, bool) or not isinstance(v, int):
            raise ExportError(f"method '{self.mg.name}': expected an int, got {v!r}")
        return self.scalar(ValueKind.Int, IntT, int(v))

    def tensor(self, fake: torch.Tensor, what: str, location=Location.None_, index=0) -> int:
        t = TensorT()
        t.dtype = pocket_dtype(fake.dtype, what)
        bounds = [self.dim_bounds(s, what, d) for d, s in enumerate(fake.shape)]
        t.sizes = [hi for _, hi in bounds]
        if any(lo != hi for lo, hi in bounds):
            t.minSizes = [lo for lo, _ in bounds]
        numel = 1
        for s in t.sizes:
            numel *= s
        t.nbytes = numel * fake.element_size()
        t.location, t.index, t.offset = location, index, 0
        idx = self.add_value(ValueKind.Tensor, t)
        if location == Location.Arena:
            self.planned.append(idx)
        return idx

    def dim_bounds(self, s, what: str, d: int) -> tuple[int, int]:
        if isinstance(s, int):
            return s, s
        r = bound_sympy(s.node.expr, self.mg.ranges)
        hi, lo = _finite_int(r.upper), _finite_int(r.lower)
        if hi is None:
            raise ExportError(f"{what}: dim {d} ({s}) has no upper bound; give the dynamic dim a max, "
                              "e.g. torch.export.Dim('batch', max=64)")
        return max(lo or 0, 0), hi

    # ---- graph walk ---------------------------------------------------------------------------

    def emit(self) -> MethodT:
        mg = self.mg
        for node in mg.graph.nodes:
            if node.op == "placeholder":
                self.node_value[node] = self.placeholder(node)
        self.check_related_sizes()
        for node in mg.graph.nodes:
            if node.op == "call_function":
                self.call(node)
            elif node.op not in ("placeholder", "output"):
                raise ExportError(f"method '{mg.name}': unexpected graph node {node.op} '{node.name}'")
        outputs = [self.output_value(i, v) for i, v in enumerate(mg.outputs)]
        buffer_nodes = {mg.buffers[n.name]: n for n in mg.graph.nodes if n.name in mg.buffers}
        for fqn, node in mg.mutations:  # write each mutated buffer's new value back
            src, dst = self.node_value[node], self.node_value[buffer_nodes[fqn]]
            if src != dst:
                self.move(src, dst)
        m = MethodT()
        m.name = mg.name
        m.values = self.values
        m.inputs = [self.node_value[n] for n in mg.inputs]
        m.outputs = outputs
        m.steps = self.steps
        m.sources = list(self.sources)
        m.layers = list(self.layers)
        m.operators = []
        for full in self.operators:
            op = OperatorT()
            op.name, op.overload = split_name(full)
            m.operators.append(op)
        m.metadata = [_kv("input_spec", json.dumps(mg.input_spec)), _kv("output_spec", json.dumps(mg.output_spec))]
        return m

    def check_related_sizes(self) -> None:
        """Checks, first thing at run time, the input sizes torch.export found related.

        One Dim given to several inputs (or twice to one), or a Dim derived from another
        (`2 * s + 1`), becomes one symbol in the graph, and the graph computes with it as
        though the sizes agreed. Each input's bounds are checked on their own (set_input), so a
        caller who passes sizes that disagree would otherwise get a result for shapes the model
        never had. Each symbol is defined by the first input dim that is the symbol alone; every
        other dim that is the symbol, or an integer a * symbol + b, is checked against it.
        """
        dims = []  # (input index, dim, name, sympy expression)
        for i, node in enumerate(self.mg.inputs):
            for d, size in enumerate(node.meta["val"].shape):
                if isinstance(size, torch.SymInt):
                    dims.append((i, d, f"input {i} ({node.name}) dim {d}", size.node.expr))
        defined = {}  # symbol -> (input index, dim, name)
        for i, d, name, expr in dims:
            if expr.is_Symbol and expr not in defined:
                defined[expr] = (i, d, name)
        sizes = {}  # symbol -> value index of its size, read once
        for i, d, name, expr in dims:
            if len(expr.free_symbols) != 1:
                continue
            (symbol,) = expr.free_symbols
            if symbol not in defined or defined[symbol][2] == name:
                continue
            a, b = expr.coeff(symbol), expr.subs(symbol, 0)
            if not (a.is_Integer and b.is_Integer and (a * symbol + b - expr).expand() == 0):
                continue  # not linear: the bounds are all the runtime checks
            if symbol not in sizes:
                sizes[symbol] = self.input_size(*defined[symbol][:2])
            want, want_name = sizes[symbol], defined[symbol][2]
            if a != 1:
                want = self.sym_op("sym::mul", want, self.int_value(int(a)))
                want_name = f"{a} * {want_name}"
            if b != 0:
                want = self.sym_op("sym::add", want, self.int_value(int(b)))
                want_name = f"{want_name} {'+' if b > 0 else '-'} {abs(b)}"
            self.kernel("pocket::check_size", [self.input_size(i, d), want, self.string(name),
                                               self.string(want_name)])

    def input_size(self, i: int, d: int) -> int:
        """An int value holding dim d of input i at run time."""
        return self.sym_op("aten::sym_size.int", self.node_value[self.mg.inputs[i]], self.int_value(d))

    def sym_op(self, name: str, a: int, b: int) -> int:
        out = self.add_value(ValueKind.Int, IntT())
        self.kernel(name, [a, b, out])
        return out

    def string(self, text: str) -> int:
        return self.scalar(ValueKind.String, StringT, text)

    def placeholder(self, node) -> int:
        mg = self.mg
        if node.name in mg.constants:
            value = mg.constants[node.name]
            return self.tensor(value, f"constant '{node.name}'", Location.Constant, self.add_segment(value))
        if node.name in mg.buffers:
            fqn = mg.buffers[node.name]
            index = self.buffer_index(fqn, mg.buffer_values[fqn])
            return self.tensor(node.meta["val"], f"buffer '{fqn}'", Location.Buffer, index)
        return self.tensor(node.meta["val"], f"input '{node.name}'", Location.None_)

    def output_value(self, i: int, v) -> int:
        if not isinstance(v, torch.fx.Node) or not isinstance(self.node_value.get(v), int):
            raise ExportError(f"method '{self.mg.name}': output {i} is {v!r}, not a tensor; return tensors")
        idx = self.node_value[v]
        t = self.values[idx].kind
        if not isinstance(t, TensorT):
            raise ExportError(f"method '{self.mg.name}': output {i} is not a tensor")
        if t.location != Location.Arena:  # an input, constant or buffer: copy it out
            dst = self.tensor(v.meta["val"], f"output {i}", Location.Arena)
            self.move(idx, dst)
            return dst
        return idx

    def move(self, src: int, dst: int) -> None:
        mv = MoveT()
        mv.from_, mv.to = src, dst
        self.step(Instruction.Move, mv)

    def step(self, kind: int, obj, node=None) -> None:
        s = StepT()
        s.instructionType, s.instruction = kind, obj
        if node is not None:  # moves the emitter adds come from no node: -1, unknown
            s.source = _index_of(self.sources, source_line(node, default=""))
            s.layer = _index_of(self.layers, layer_name(node))
        self.steps.append(s)

    def call(self, node) -> None:
        if node.target is operator.getitem:
            parent, k = node.args
            self.node_value[node] = self.node_value[parent][k]
            return
        name = op_name(node.target)
        if name not in SUPPORTED_OPS:  # check_support ran before; this guards direct callers
            raise ExportError(f"unsupported op {name} at {source_line(node)}")
        in_kinds, out_kinds = kernel_signature(name)
        if node.target in SYM_OPS:  # Python operators: positional args, no torch schema
            named = [(f"argument {i}", a) for i, a in enumerate(node.args)]
        else:
            arguments = node.target._schema.arguments
            named = [(spec.name, self.arg_of(node, i, spec)) for i, spec in enumerate(arguments)]
        nreturns = len(node.target._schema.returns) if node.target not in SYM_OPS else 1
        if len(named) != len(in_kinds) or nreturns != len(out_kinds):
            raise ExportError(f"{name}: the kernel table's signature {in_kinds}>{out_kinds} has "
                              f"{len(in_kinds)} arguments and {len(out_kinds)} outputs, the call has "
                              f"{len(named)} and {nreturns} ({source_line(node)})")
        args = [self.encode(name, k, arg, value, node) for k, (arg, value) in zip(in_kinds, named)]
        outs = self.outputs_for(node, name, out_kinds)
        flat_outs = []
        for o in outs:
            flat_outs.append(o[0] if isinstance(o, tuple) else o)
        self.kernel(name, args + flat_outs, node)
        if len(out_kinds) == 1:
            o = outs[0]
            self.node_value[node] = o[1] if isinstance(o, tuple) else o
        else:
            self.node_value[node] = outs

    def arg_of(self, node, i: int, spec):
        """The call's value for schema argument `spec` (position i): given or default."""
        if i < len(node.args):
            return node.args[i]
        if spec.name in node.kwargs:
            return node.kwargs[spec.name]
        return spec.default_value if spec.has_default_value() else None

    def outputs_for(self, node, name: str, kinds: str) -> list:
        """Values for each output kind: a tensor index, an int or bool index, or (list index, item indices)."""
        val = node.meta.get("val")
        vals = list(val) if len(kinds) > 1 else [val]
        outs = []
        for i, (kind, v) in enumerate(zip(kinds, vals)):
            what = f"{name} output {i} ({source_line(node)})"
            if kind == "T" and isinstance(v, torch.Tensor):
                if "pocket_inplace_buffer" in node.meta:
                    outs.append(self.node_value[node.meta["pocket_inplace_buffer"]])
                else:
                    outs.append(self.tensor(v, what, Location.Arena))
            elif kind == "L" and isinstance(v, (list, tuple)):
                items = [self.tensor(t, what, Location.Arena) for t in v]
                lst = TensorListT()
                lst.items = items
                outs.append((self.add_value(ValueKind.TensorList, lst), items))
            elif kind in "ib" and not isinstance(v, (torch.Tensor, list, tuple)):
                outs.append(self.scalar_output(kind, node))
            else:
                raise ExportError(f"{what}: the kernel table's kind '{kind}' does not fit {type(v).__name__}")
        return outs

    def scalar_output(self, kind: str, node) -> int:
        if kind == "b":
            obj = BoolT()
            return self.add_value(ValueKind.Bool, obj)
        obj = IntT()
        return self.add_value(ValueKind.Int, obj)

    def kernel(self, name: str, args: list[int], node=None) -> None:
        call = KernelCallT()
        call.op = self.operators.setdefault(name, len(self.operators))
        call.args = args
        self.step(Instruction.KernelCall, call, node)

    # ---- argument encoding by the kernel table's kind ------------------------------------------

    def encode(self, name: str, kind: str, arg: str, value, node) -> int:
        """The value index of one argument, as kernel signature character `kind` wants it."""
        if kind in "tjgJG" and arg in IGNORED_ARGS:
            return self.none()
        if value is None:
            if kind == "S":  # str? arguments are strings, "" for None
                return self.string("")
            if kind not in "tjgJG":
                raise ExportError(f"{name}: argument '{arg}' is None ({source_line(node)})")
            return self.none()
        if not _fits(kind, value):
            raise ExportError(f"{name}: argument '{arg}' is {value!r}, which does not fit the kernel "
                              f"table's kind '{kind}' ({KIND_NAMES[kind]}) ({source_line(node)})")
        if kind in "Tt":
            if isinstance(value, (bool, int, float)):  # a Python number where ATen wants a tensor
                return self.wrapped_number(value)
            if isinstance(value.meta.get("val"), torch.SymInt):  # e.g. t * (s // 2), s dynamic
                return self.symint_tensor(value)
            return self.node_value[value]
        if kind in "ij":
            if isinstance(value, torch.dtype):
                return self.int_value(int(pocket_dtype(value, f"{name} dtype")))
            return self.int_value(value)
        if kind in "IJ":
            lst = IntListT()
            lst.items = [self.int_value(v) for v in value]
            return self.add_value(ValueKind.IntList, lst)
        if kind in "fg":  # Scalar? arguments are doubles too ('g')
            return self.scalar(ValueKind.Double, DoubleT, float(value))
        if kind == "b":
            return self.scalar(ValueKind.Bool, BoolT, bool(value))
        if kind == "s":
            if isinstance(value, bool):
                return self.scalar(ValueKind.Bool, BoolT, value)
            if isinstance(value, int):
                return self.scalar(ValueKind.Int, IntT, value)
            if isinstance(value, torch.fx.Node):
                return self.int_value(value)
            return self.scalar(ValueKind.Double, DoubleT, float(value))
        if kind == "S":
            return self.string(str(value))
        if kind == "L":
            lst = TensorListT()
            lst.items = [self.node_value[v] for v in value]
            return self.add_value(ValueKind.TensorList, lst)
        if kind == "M":
            lst = OptionalTensorListT()
            lst.items = [-1 if v is None else self.node_value[v] for v in value]
            return self.add_value(ValueKind.OptionalTensorList, lst)
        lst = DoubleListT()  # F, G
        lst.items = [float(v) for v in value]
        return self.add_value(ValueKind.DoubleList, lst)


# Signature characters (include/pocket/kernel.h), for error messages.
KIND_NAMES = {
    "T": "tensor", "t": "tensor or None", "i": "int", "j": "int or None", "f": "double",
    "g": "double or None", "s": "scalar", "b": "bool", "I": "int list", "J": "int list or None",
    "F": "double list", "G": "double list or None", "L": "tensor list",
    "M": "list of optional tensors", "S": "string",
}


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float))


def _node_val(v):
    return v.meta.get("val") if isinstance(v, torch.fx.Node) else None


def _is_sym(v) -> bool:
    """A graph value that is a symbolic number (a size computed at run time)."""
    return isinstance(_node_val(v), (torch.SymInt, torch.SymFloat, torch.SymBool, int, float, bool))


def _is_int(v) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or isinstance(_node_val(v), (torch.SymInt, int))


def _is_tensor(v) -> bool:
    return isinstance(v, torch.fx.Node) and not _is_sym(v)


def _fits(kind: str, v) -> bool:
    """Whether a call's (non-None) argument can be encoded as signature character `kind`."""
    if kind in "Tt":
        return _is_number(v) or isinstance(v, torch.fx.Node)
    if kind in "ij":
        return _is_int(v) or isinstance(v, torch.dtype)
    if kind in "IJ":
        return isinstance(v, (list, tuple)) and all(_is_int(x) for x in v)
    if kind in "fg":
        return _is_number(v) and not isinstance(v, bool)
    if kind in "FG":
        return isinstance(v, (list, tuple)) and all(_is_number(x) for x in v)
    if kind == "b":
        return isinstance(v, bool)
    if kind == "s":
        return _is_number(v) or _is_sym(v)
    if kind == "S":
        return isinstance(v, str)
    if kind == "L":
        return isinstance(v, (list, tuple)) and all(_is_tensor(x) for x in v)
    if kind == "M":
        return isinstance(v, (list, tuple)) and all(x is None or _is_tensor(x) for x in v)
    return False


def _finite_int(x) -> int | None:
    """int(x) for a finite sympy bound, None for +-infinity (torch's int_oo included)."""
    try:
        return int(x) if x.is_finite is not False else None
    except (TypeError, AttributeError, OverflowError):
        return None


def _index_of(names: dict[str, int], name: str) -> int:
    """name's index in `names` (added when new); -1 for "" (unknown)."""
    return names.setdefault(name, len(names)) if name else -1


def _kv(key: str, value: str) -> KeyValueT:
    kv = KeyValueT()
    kv.key, kv.value = key, value
    return kv
