"""Folds inference BatchNorm into the convolution before it.

    y = bn(conv(x, w, b))  ->  y = conv(x, w * s, (b - mean) * s + beta),  s = gamma / sqrt(var + eps)

Applies when the convolution's only user is the BatchNorm and every parameter is a constant.
"""

import operator

import torch

aten = torch.ops.aten


def fold_batchnorm(mg) -> None:
    for bn in list(mg.graph.nodes):
        if bn.op != "call_function" or bn.target != aten._native_batch_norm_legit_no_training.default:
            continue
        conv, gamma, beta, mean, var, _momentum, eps = bn.args
        if not (isinstance(conv, torch.fx.Node) and conv.target == aten.convolution.default and len(conv.users) == 1):
            continue
        if conv.args[6]:  # transposed convolution: weight layout differs; leave it
            continue
        w, b = conv.args[1], conv.args[2]
        params = [w, b, gamma, beta, mean, var]
        if any(p is not None and p.name not in mg.constants for p in params if isinstance(p, torch.fx.Node)):
            continue
        const = lambda n: mg.constants[n.name] if n is not None else None  # noqa: E731
        wt, bt, gt, btb, mt, vt = (const(p) for p in params)
        scale = torch.rsqrt(vt.double() + eps) * (gt.double() if gt is not None else 1.0)
        new_w = (wt.double() * scale.reshape(-1, *([1] * (wt.dim() - 1)))).to(wt.dtype)
        bias0 = bt.double() if bt is not None else torch.zeros_like(mt, dtype=torch.float64)
        new_b = ((bias0 - mt.double()) * scale + (btb.double() if btb is not None else 0.0)).to(wt.dtype)
        w_node = mg.add_constant(f"{conv.name}_folded_weight", new_w)
        b_node = mg.add_constant(f"{conv.name}_folded_bias", new_b)
        conv.args = (conv.args[0], w_node, b_node, *conv.args[3:])
        for user in list(bn.users):  # getitem(bn, 0) -> conv; other outputs are unused at inference
            if user.target is operator.getitem and user.args[1] == 0:
                mg.replace_uses(user, conv)
                mg.graph.erase_node(user)
        if not bn.users:
            mg.graph.erase_node(bn)
