"""Methods that compute in float16 or bfloat16 are computed in float32.

Pocket's kernels compute in float32 (and float64); they move and convert half tensors but do
no arithmetic on them. A model in .half(), or loaded in bfloat16, would export and then fail on
its first instruction. When a method does arithmetic in half, this pass makes its half
constants and buffers float32, widens its half inputs where they enter, turns its half dtype
arguments (casts, factories) into float32, and rounds its half outputs back where they leave:
the method keeps its signature and computes what the model computes in float32, which is
closer to the exact result than computing in half (a model that relies on half rounding, as
Falcon's bfloat16 ALiBi slopes do, differs from eager by that rounding).

Quantized layers (pocket::linear_q) compute in float32 too: a half activation they read makes
the method compute in float32 as well. A method whose half tensors only move (a float16 weight
cast to float32 in forward, an fp16 KV cache that pocket:: ops read, GGUF's float16 scales) is
left as it is.
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_map

aten = torch.ops.aten
HALF = (torch.float16, torch.bfloat16)

# Ops whose kernels take half tensors: they move or convert values, with no arithmetic.
_MOVES = {
    aten._to_copy.default, aten.clone.default, aten.alias.default, aten.view.default, aten._unsafe_view.default,
    aten.permute.default, aten.expand.default, aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims,
    aten.slice.Tensor, aten.select.int, aten.cat.default, aten.index.Tensor, aten.index_select.default,
    aten.split_with_sizes.default, aten.unbind.int,
}

# The operands of pocket:: ops that are activations, by position: their kernels take float32
# there. Their other operands may be half as they are: a GGUF weight's float16 scales, an fp16
# KV cache.
_POCKET_ACTIVATIONS = {
    "pocket::linear_q": (0,), "pocket::rms_norm": (0, 1), "pocket::rope": (0, 1, 2), "pocket::swiglu": (0, 1),
    "pocket::sdpa": (0,),
}


def compute_in_float32(mg) -> bool:
    """Rewrites `mg` (a MethodGraph) when it does arithmetic in half; returns whether it did."""
    if not any(_half_arithmetic(node) for node in mg.graph.nodes):
        return False
    outputs = {i: v.meta["val"].dtype for i, v in enumerate(mg.outputs)
               if isinstance(v, torch.fx.Node) and _is_half(v.meta.get("val"))}
    placeholders = [n for n in mg.graph.nodes if n.op == "placeholder"]
    for node in list(mg.graph.nodes):
        val = node.meta.get("val")
        if node.op == "placeholder":
            if not _is_half(val):
                continue
            if node.name in mg.constants:
                mg.constants[node.name] = mg.constants[node.name].float()
            elif node.name in mg.buffers:
                fqn = mg.buffers[node.name]
                mg.buffer_values[fqn] = mg.buffer_values[fqn].float()
            else:  # a user input: widened where it enters
                with mg.graph.inserting_after(placeholders[-1]):
                    cast = _cast(mg, node, torch.float32)
                mg.replace_uses(node, cast, keep=lambda user: user is cast)
                continue
            node.meta["val"] = _as_float(val)
        elif node.op == "call_function":
            node.args, node.kwargs = tree_map(_float_dtype, node.args), tree_map(_float_dtype, node.kwargs)
            if node.target in (aten._softmax.default, aten._log_softmax.default):
                node.args = (*node.args[:2], False)  # half_to_float: the input is float32 now
            node.meta["val"] = tree_map(_as_float, val)
    output = next(n for n in mg.graph.nodes if n.op == "output")
    for i, dtype in outputs.items():  # rounded back where they leave
        with mg.graph.inserting_before(output):
            mg.outputs[i] = _cast(mg, mg.outputs[i], dtype)
    output.args = ((*(v for _, v in mg.mutations), *mg.outputs),)
    return True


def _cast(mg, node, dtype):
    """A new aten._to_copy of `node` to `dtype`, at the graph's insertion point."""
    return mg.call(aten._to_copy.default, (node,), node.meta, node.meta["val"].to(dtype), {"dtype": dtype})


def _is_half(val) -> bool:
    return isinstance(val, torch.Tensor) and val.dtype in HALF


def _half_arithmetic(node) -> bool:
    """Whether `node` is an ATen op other than a move with a half tensor among its operands or
    results (a float16 weight times a float32 activation computes in float32, but the kernel
    still reads a half operand), or a pocket:: op with a half activation."""
    if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
        return False
    if node.target.namespace == "pocket":
        activations = _POCKET_ACTIVATIONS.get(node.target.name(), ())
        return any(i < len(node.args) and isinstance(node.args[i], torch.fx.Node)
                   and _is_half(node.args[i].meta.get("val")) for i in activations)
    if node.target.namespace != "aten" or node.target in _MOVES:
        return False
    vals = [n.meta.get("val") for n in node.all_input_nodes] + [node.meta.get("val")]
    return any(_is_half(v) for val in vals for v in (val if isinstance(val, (list, tuple)) else [val]))


def _float_dtype(a):
    return torch.float32 if isinstance(a, torch.dtype) and a in HALF else a


def _as_float(val):
    return val.to(torch.float32) if _is_half(val) else val
