"""Quantizes the linears a module swap (transform.py) cannot reach: aten.linear nodes whose
weight is a constant of the graph, such as nn.MultiheadAttention's projections (the attention
computes with its own weight tensors), and matrix products by a constant on the right
(`x @ w.t()`, `torch.matmul(x, w)`: aten.mm, or aten.addmm with a constant bias, whose
constant (in, out) operand is the transposed weight of a linear). Runs after constant folding
and before packing; each gets the scheme's weight format and activation mode, as a swapped
nn.Linear does. A weight that several of them read is quantized once."""

from __future__ import annotations

import torch

from pocket.exporter.quant.config import QuantConfig
from pocket.exporter.quant.formats import quantize
from pocket.exporter.quant.ops import ACT_MODES

aten = torch.ops.aten


def quantize_graph_linears(mg, config: QuantConfig) -> int:
    """Rewrites the eligible linears of `mg` (_as_linear) to pocket::linear_q; returns how many."""
    if not config.linear_bits:
        return 0
    quantized: dict[str, tuple] = {}  # weight constant -> its (qweight, scales, mins) nodes
    n = 0
    for node in list(mg.graph.nodes):
        matched = _as_linear(mg, node)
        if matched is None:
            continue
        x, w, weight, bias = matched
        k = weight.shape[-1]
        if weight.dim() != 2 or weight.dtype != torch.float32 or not config.linear_fits(k):
            continue  # (a width the group size does not divide stays fp32, as in the module swap)
        fmt = config.linear_format(k)
        if w not in quantized:
            parts = quantize(weight, fmt)
            quantized[w] = tuple(None if t is None else mg.add_constant(f"{w}_{suffix}", t)
                                 for suffix, t in zip(("q", "scales", "mins"), parts))
        qweight, scales, mins = quantized[w]
        args = (x, qweight, scales, mins, bias, fmt.bits, fmt.group_size, ACT_MODES[config.activations])
        with mg.graph.inserting_before(node):
            new = mg.graph.call_function(torch.ops.pocket.linear_q.default, args)
        new.meta = dict(node.meta)
        mg.replace_uses(node, new)
        mg.graph.erase_node(node)
        n += 1
    return n


def _as_linear(mg, node):
    """(x, weight key, (out, in) weight, bias node or None) when `node` computes a linear of x by
    constants: aten.linear(x, W[, b]), aten.mm(x, B) and aten.addmm(b, x, B) with B = W.t()
    (addmm with the default beta and alpha); else None."""
    if node.op != "call_function":
        return None
    if node.target is aten.linear.default:
        x, w, *rest = node.args
        bias, weight, key = rest[0] if rest else None, mg.constant(w), getattr(w, "name", None)
    elif node.target is aten.mm.default or (node.target is aten.addmm.default and len(node.args) == 3 and
                                            node.kwargs.get("beta", 1) == 1 and node.kwargs.get("alpha", 1) == 1):
        bias, (x, w) = (node.args[0], node.args[1:]) if node.target is aten.addmm.default else (None, node.args)
        weight, key = mg.constant(w), f"{getattr(w, 'name', '')}_t"
        if weight is not None and weight.dim() == 2:
            weight = weight.t().contiguous()
    else:
        return None
    b = None if bias is None else mg.constant(bias)
    if weight is None or (bias is not None and (b is None or tuple(b.shape) != (weight.shape[0],))):
        return None  # (addmm's bias may broadcast over rows too: not a linear's)
    return x, key, weight, bias
