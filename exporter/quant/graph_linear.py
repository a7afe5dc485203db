"""Quantizes the linears a module swap (transform.py) cannot reach: aten.linear nodes whose
weight is a constant of the graph, such as nn.MultiheadAttention's projections (the attention
computes with its own weight tensors). Runs after constant folding and before packing; each
gets the scheme's weight format and activation mode, as a swapped nn.Linear does. A weight
that several linears read is quantized once."""

from __future__ import annotations

import torch

from pocket.exporter.quant.config import QuantConfig
from pocket.exporter.quant.formats import quantize
from pocket.exporter.quant.ops import ACT_MODES

aten = torch.ops.aten


def quantize_graph_linears(mg, config: QuantConfig) -> int:
    """Rewrites the eligible aten.linear nodes of `mg` to pocket::linear_q; returns how many."""
    if not config.linear_bits:
        return 0
    quantized: dict[str, tuple] = {}  # weight constant -> its (qweight, scales, mins) nodes
    n = 0
    for node in list(mg.graph.nodes):
        if node.op != "call_function" or node.target is not aten.linear.default:
            continue
        x, w, *rest = node.args
        bias = rest[0] if rest else None
        weight = mg.constant(w)
        if weight is None or (bias is not None and mg.constant(bias) is None):
            continue
        k = weight.shape[-1]
        if weight.dim() != 2 or weight.dtype != torch.float32 or not config.linear_fits(k):
            continue  # (a width the group size does not divide stays fp32, as in the module swap)
        fmt = config.linear_format(k)
        if w.name not in quantized:
            parts = quantize(weight, fmt)
            quantized[w.name] = tuple(None if t is None else mg.add_constant(f"{w.name}_{suffix}", t)
                                      for suffix, t in zip(("q", "scales", "mins"), parts))
        qweight, scales, mins = quantized[w.name]
        args = (x, qweight, scales, mins, bias, fmt.bits, fmt.group_size, ACT_MODES[config.activations])
        with mg.graph.inserting_before(node):
            new = mg.graph.call_function(torch.ops.pocket.linear_q.default, args)
        new.meta = dict(node.meta)
        mg.replace_uses(node, new)
        mg.graph.erase_node(node)
        n += 1
    return n
