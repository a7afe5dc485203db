"""Quantizes the linears a module swap (transform.py) cannot reach: aten.linear nodes whose
weight is a constant of the graph, such as nn.MultiheadAttention's projections (the attention
computes with its own weight tensors), and matrix products by a constant on the right
(`x @ w.t()`, `torch.matmul(x, w)`: aten.mm, or aten.addmm with a constant bias, whose
constant (in, out) operand is the transposed weight of a linear). A weight may also be computed
from constants in the graph (evaluated here), or be a quantized Embedding's table read whole
(an output layer tied to it: a linear_q of the table's own constants and format). Runs after
constant folding and before packing; each gets the scheme's weight format and activation
mode, as a swapped nn.Linear does. A weight that several of them read is quantized once.

Lookups in a constant table the swap left (an nn.Embedding subclass with a forward of its own,
such as BART's scaled token embedding) are quantized here too, in the scheme's embedding
format: aten.embedding -> pocket::embedding_q."""

from __future__ import annotations

import torch

from pocket.exporter.quant.config import QuantConfig
from pocket.exporter.quant.formats import WeightFormat, quantize
from pocket.exporter.quant.ops import ACT_MODES

aten = torch.ops.aten


def quantize_graph_linears(mg, config: QuantConfig) -> int:
    """Rewrites the eligible linears of `mg` (_as_linear) to pocket::linear_q; returns how many."""
    if not config.linear_bits:
        return 0
    quantized: dict[str, tuple] = {}  # weight constant -> its (qweight, scales, mins) nodes
    constant_value = _ConstantValues(mg)
    n = 0
    for node in list(mg.graph.nodes):
        matched = _as_linear(mg, node, constant_value)
        if matched is None:
            continue
        x, w, weight, bias = matched
        if isinstance(weight, tuple):  # a stored table: its own constants and format
            *parts, fmt = weight
            qweight, scales, mins = parts
        else:
            k = weight.shape[-1]
            if weight.dim() != 2 or weight.dtype != torch.float32 or not config.linear_fits(k):
                continue  # (a width the group size does not divide stays fp32, as in the module swap)
            fmt = config.linear_format(k)
            qweight, scales, mins = _quantized_constants(mg, quantized, w, weight, fmt)
        _replace(mg, node, torch.ops.pocket.linear_q.default,
                 (x, qweight, scales, mins, bias, fmt.bits, fmt.group_size, ACT_MODES[config.activations]))
        n += 1
    return n


def quantize_graph_embeddings(mg, config: QuantConfig) -> int:
    """Rewrites aten.embedding of a constant fp32 table (dim a multiple of the group size) to
    pocket::embedding_q of that table quantized; returns how many. A table that several
    lookups read is quantized once."""
    if not config.embedding_bits:
        return 0
    fmt = WeightFormat(config.embedding_bits, config.embedding_group_size, True)
    quantized: dict[str, tuple] = {}  # table constant -> its (qweight, scales, mins) nodes
    n = 0
    for node in list(mg.graph.nodes):
        if node.op != "call_function" or node.target is not aten.embedding.default:
            continue
        w, indices = node.args[:2]
        table = mg.constant(w)
        if table is None or table.dim() != 2 or table.dtype != torch.float32 or table.shape[1] % fmt.group_size:
            continue
        _replace(mg, node, torch.ops.pocket.embedding_q.default,
                 (*_quantized_constants(mg, quantized, w.name, table, fmt), indices, fmt.bits, fmt.group_size))
        n += 1
    return n


def _quantized_constants(mg, quantized: dict, key: str, weight: torch.Tensor, fmt: WeightFormat) -> tuple:
    """The (qweight, scales, mins) constant nodes of `weight` in `fmt`, added to the graph the
    first time `key` (the weight's constant) is asked for; mins is None when symmetric."""
    if key not in quantized:
        quantized[key] = tuple(None if t is None else mg.add_constant(f"{key}_{suffix}", t)
                               for suffix, t in zip(("q", "scales", "mins"), quantize(weight, fmt)))
    return quantized[key]


def _replace(mg, node, target, args) -> None:
    """`node` becomes a call of `target` on `args`, with its metadata, in every use."""
    with mg.graph.inserting_before(node):
        new = mg.graph.call_function(target, args)
    new.meta = dict(node.meta)
    mg.replace_uses(node, new)
    mg.graph.erase_node(node)


def _as_linear(mg, node, constant_value):
    """(x, weight key, weight, bias node or None) when `node` computes a linear of x by
    constants: aten.linear(x, W[, b]), aten.mm(x, B) and aten.addmm(b, x, B) with B = W.t()
    (addmm with the default beta and alpha); else None. The weight is W (out, in) as a tensor,
    computed from constants alone where it is not one (constant_value: _ConstantValues), or, where W is a
    quantized table read whole (_stored_table), that table's (qweight, scales, mins, format)."""
    if node.op != "call_function":
        return None
    if node.target is aten.linear.default:
        x, w, *rest = node.args
        bias, table, key = rest[0] if rest else None, _stored_table(mg, w), getattr(w, "name", None)
        weight = table or constant_value(w)
    elif node.target is aten.mm.default or (node.target is aten.addmm.default and len(node.args) == 3 and
                                            node.kwargs.get("beta", 1) == 1 and node.kwargs.get("alpha", 1) == 1):
        bias, (x, w) = (node.args[0], node.args[1:]) if node.target is aten.addmm.default else (None, node.args)
        key = f"{getattr(w, 'name', '')}_t"
        transposed = isinstance(w, torch.fx.Node) and w.target is aten.permute.default and list(w.args[1]) == [1, 0]
        weight = _stored_table(mg, w.args[0]) if transposed else None
        if weight is None:
            weight = constant_value(w)
            if weight is not None and weight.dim() == 2:
                weight = weight.t().contiguous()
    else:
        return None
    out = mg.constant(weight[0]).shape[0] if isinstance(weight, tuple) else None if weight is None else weight.shape[0]
    b = None if bias is None else mg.constant(bias)
    if weight is None or (bias is not None and (b is None or tuple(b.shape) != (out,))):
        return None  # (addmm's bias may broadcast over rows too: not a linear's)
    return x, key, weight, bias


def _stored_table(mg, node):
    """(qweight, scales, mins nodes, WeightFormat) when `node` is a stored quantized table read
    whole: pocket::embedding_q of constants at arange(rows), as QuantizedEmbedding.weight reads
    it. A linear by it is a linear_q of the same constants, exact and with no second copy."""
    if not (isinstance(node, torch.fx.Node) and node.target is torch.ops.pocket.embedding_q.default):
        return None
    qweight, scales, mins, rows, bits, group_size = node.args
    q = mg.constant(qweight)
    if q is None or mg.constant(scales) is None or (mins is not None and mg.constant(mins) is None):
        return None
    every_row = isinstance(rows, torch.fx.Node) and rows.target in (aten.arange.default, aten.arange.start_step) \
        and isinstance(rows.meta.get("val"), torch.Tensor) and rows.meta["val"].shape == (q.shape[0],) \
        and tuple(rows.args) in ((q.shape[0],), (0, q.shape[0]), (0, q.shape[0], 1))
    if not every_row:
        return None
    return qweight, scales, mins, WeightFormat(bits, group_size, mins is None)


class _ConstantValues:
    """The values of the graph's nodes computed by ATen ops from constants alone (not random
    ones), as a function of the node (None for any other node). Constant folding leaves such
    expressions where the result is larger than its inputs (float16 parameters cast to float32
    in forward): a weight computed so would otherwise stay fp32 and be recomputed on every
    forward. Which nodes qualify is found in one pass in graph order; a value is evaluated when
    first asked for, so only the weights used are, each once."""

    def __init__(self, mg):
        self.mg, self.values = mg, {}
        self.computed = set()
        for node in mg.graph.nodes:
            op = node.target
            if node.op == "call_function" and isinstance(op, torch._ops.OpOverload) and node.all_input_nodes \
                    and not op._schema.is_mutable and torch.Tag.nondeterministic_seeded not in op.tags \
                    and all(n.name in self.computed or mg.constant(n) is not None for n in node.all_input_nodes):
                self.computed.add(node.name)

    def __call__(self, node) -> torch.Tensor | None:
        value = self.mg.constant(node)  # (None for an argument that is not a node)
        if value is not None or not isinstance(node, torch.fx.Node) or node.name not in self.computed:
            return value
        stack = [node]  # its computed ancestors not yet evaluated go first: no recursion per op
        while stack:
            top = stack[-1]
            if top.name in self.values:
                stack.pop()
                continue
            pending = [n for n in top.all_input_nodes if self._pending(n)]
            if pending:
                stack += pending
                continue
            stack.pop()
            self.values[top.name] = self._evaluate(top)
        return self.values[node.name]

    def _pending(self, node) -> bool:
        return node.name in self.computed and node.name not in self.values and self.mg.constant(node) is None

    def _known(self, node) -> torch.Tensor | None:
        value = self.mg.constant(node)
        return value if value is not None else self.values.get(node.name)

    def _evaluate(self, node) -> torch.Tensor | None:
        """The value of `node`, whose inputs are constants or evaluated (None when one of them
        has no value: an input rewritten since the pass)."""
        inputs = {n.name: self._known(n) for n in node.all_input_nodes}
        if any(v is None for v in inputs.values()):
            return None
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: inputs[n.name])
        with torch.no_grad():
            value = node.target(*args, **kwargs)
        return value if isinstance(value, torch.Tensor) else None
