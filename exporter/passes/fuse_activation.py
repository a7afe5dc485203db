"""Fuses a ReLU, ReLU6 (hardtanh) or constant clamp into the convolution that feeds it.

`relu(convolution(x, w, b, ...))` becomes `pocket::convolution_clamp(x, w, b, ..., 0, None)`:
one kernel that clamps its output while writing it, instead of a second pass over the tensor
(MobileNetV2 spends a third of its fp32 time in separate ReLU6 ops). Only an activation that
is the convolution's only user is fused, so no other op sees the unclamped values. The static
int8 pass fuses into its own op the same way (activation_bounds).
"""

from __future__ import annotations

import torch

aten = torch.ops.aten


def activation_bounds(conv) -> tuple:
    """(the node a fused convolution replaces, (out_min, out_max)): the activation when it is
    `conv`'s only user and a ReLU, hardtanh or clamp with constant bounds, else `conv` and
    (None, None)."""
    users = list(conv.users)
    if len(users) != 1 or users[0].op != "call_function" or users[0].args[0] is not conv:
        return conv, (None, None)
    act, rest = users[0], tuple(users[0].args[1:])
    if act.kwargs:
        return conv, (None, None)
    if act.target is aten.relu.default:
        return act, (0.0, None)
    if act.target is aten.hardtanh.default:
        bounds = (rest + (-1.0, 1.0)[len(rest):])[:2]
    elif act.target is aten.clamp.default:
        bounds = (rest + (None, None)[len(rest):])[:2]
    else:
        return conv, (None, None)
    if not all(b is None or isinstance(b, (int, float)) for b in bounds) or bounds == (None, None):
        return conv, (None, None)
    return act, tuple(None if b is None else float(b) for b in bounds)


def fuse_conv_activation(mg) -> int:
    """Rewrites the fusable convolution + activation pairs of `mg`; returns how many."""
    import pocket.exporter.custom_ops  # noqa: F401  (registers pocket::convolution_clamp)

    fused = 0
    for conv in list(mg.graph.nodes):
        if conv.op != "call_function" or conv.target is not aten.convolution.default:
            continue
        x, w, b, stride, padding, dilation, transposed, _, groups = conv.args
        val = conv.meta.get("val")
        if transposed or not isinstance(val, torch.Tensor) or val.dtype != torch.float32:
            continue
        act, (lo, hi) = activation_bounds(conv)
        if act is conv:
            continue
        with mg.graph.inserting_after(act):
            new = mg.call(torch.ops.pocket.convolution_clamp.default,
                          (x, w, b, list(stride), list(padding), list(dilation), groups, lo, hi),
                          conv.meta, act.meta.get("val"))
        mg.replace_uses(act, new)
        mg.graph.erase_node(act)
        mg.graph.erase_node(conv)
        fused += 1
    return fused
