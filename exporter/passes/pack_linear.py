"""linear_q with int8 activations -> pocket::linear_q_packed, its weight stored in the int8
dot-product kernels' layout (exporter/quant/ops.py pack_linear_weight), so the runtime maps it
from the file and reads it as it is: 16 output channels across vector lanes, scales contiguous.

Weights are matched by content, as the program stores them (one copy of equal bytes): a weight
is packed when every op that reads it can read the packed layout, i.e. it is used only by
linear_q ops the layout takes (4- or 8-bit, act_mode 1 or 2, output channels a multiple of
16, columns and group size multiples of 8) and by embedding_q ops of the same format (tied embeddings: they
become embedding_q_packed). Otherwise it stays as it is, so no file holds a weight twice.
Scales and mins keep their dtype: float16 ones (GGUF's Q4_0, Q4_1, Q8_0) stay float16 in the
packed layout, which the kernels read in place as they do unpacked ones.
"""

from __future__ import annotations

from collections import defaultdict

import torch

pocket = torch.ops.pocket


def pack_linear_q(mg) -> int:
    """Rewrites the linear_q (and tied embedding_q) nodes whose weights can be packed; returns
    how many linear_q nodes were packed."""
    from pocket.exporter.quant import ops

    def key(node):
        t = mg.constant(node)
        if t is None:
            return None
        return tuple(t.shape), t.dtype, mg.shared.digest(t)  # hashed once per program

    users = defaultdict(list)  # (qweight, scales, mins) content -> [linear_q / embedding_q nodes]
    for node in mg.graph.nodes:
        if node.op == "call_function" and node.target in (pocket.linear_q.default, pocket.embedding_q.default):
            q, s, m = node.args[1:4] if node.target is pocket.linear_q.default else node.args[0:3]
            if key(q) is not None and key(s) is not None and (m is None or key(m) is not None):
                users[(key(q), key(s), key(m) if m is not None else None)].append(node)

    packed = 0
    for nodes in users.values():
        linears = [n for n in nodes if n.target is pocket.linear_q.default]
        if not linears or not all(_packable(n, mg, ops) for n in nodes) or len({_bits(n) for n in nodes}) != 1:
            continue
        tensors = {a for n in nodes for a in _weight_args(n) if a is not None}
        if any(set(t.users) - set(nodes) for t in tensors):
            continue  # another op reads the unpacked tensors
        q, s, m = _weight_args(linears[0])
        bits = _bits(linears[0])
        pq, ps, pm = mg.shared.derived(  # once per program: the other methods share the packed tensors
            ("pack_linear_q", key(q), key(s), key(m), bits),
            lambda: ops.pack_linear_weight(mg.constants[q.name], mg.constants[s.name],
                                           mg.constants[m.name] if m is not None else None, bits))
        w = (mg.add_constant(f"{q.name}_packed", pq), mg.add_constant(f"{s.name}_packed", ps),
             mg.add_constant(f"{m.name}_packed", pm) if m is not None else None)
        for n in nodes:
            if n.target is pocket.linear_q.default:
                n.target, n.args = pocket.linear_q_packed.default, (n.args[0], *w, *n.args[4:])
                packed += 1
            else:
                n.target, n.args = pocket.embedding_q_packed.default, (*w, *n.args[3:])
    return packed


def _weight_args(node) -> tuple:
    return node.args[1:4] if node.target is pocket.linear_q.default else node.args[0:3]


def _bits(node) -> int:
    return node.args[4] if node.target is pocket.embedding_q.default else node.args[5]


def _packable(node, mg, ops) -> bool:
    q = mg.constants[_weight_args(node)[0].name]
    if node.target is pocket.embedding_q.default:
        bits, group_size = node.args[4:6]
        act_mode = ops.ACT_INT8_TOKEN  # a gather: any layout the linear ops take
    else:
        bits, group_size, act_mode = node.args[5:8]
    return q.dim() == 2 and ops.linear_packable(q.shape[0], q.shape[1] * 8 // bits, bits, group_size, act_mode)
