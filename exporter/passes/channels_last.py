"""Runs the 2d convolutions channels-last, with weights packed at export.

Every 2d fp32 convolution (aten::convolution or pocket::convolution_clamp, constant weight,
groups 1 or depthwise) becomes `pocket::conv2d_packed` on an (N, H, W, C) input, its weight
stored in the kernels' layout (custom_ops.pack_conv_weight: loading stays an mmap, no copy).
A 3x3 one of stride 1 where Winograd pays (_winograd_pays) becomes `pocket::conv2d_winograd`
instead, its weight stored transformed (custom_ops.pack_winograd_weight).
A static int8 convolution of groups 1 or depthwise (pocket::conv2d_q8_packed) becomes
`pocket::conv2d_q8_channels_last` the same way, its weight kept as the int8 pass stored it.
Values stay channels-last between convolutions: ReLU, hardtanh, clamp, hardswish,
hardsigmoid, SiLU and sigmoid of a channels-last value, its sum, difference, product or
quotient with a number or another 4-d value, its max pooling (pocket::max_pool2d_channels_last)
and its spatial mean are computed channels-last too, and an aten::permute converts only where a
value enters the chain (the graph's input) or leaves it (an op that needs NCHW, a method
output).

Then the epilogues fuse: a residual add whose one operand is a conv2d_packed or
conv2d_q8_channels_last (its only user, no clamp yet) becomes that convolution's `residual`
argument, and a ReLU / ReLU6 / clamp that is the sum's only user becomes its out_min /
out_max (ResNet's relu(conv(y) + x)). A SiLU, sigmoid, hardswish or hardsigmoid whose input is
a conv2d_packed or conv2d_winograd that nothing else reads becomes the activation of that
convolution's `.act` overload (conv-BN-SiLU of EfficientNet and YOLO, MobileNetV3's hardswish),
which the kernels apply to each block of output while it is in cache.

Last, int8 between int8 convolutions: a conv2d_q8_channels_last whose every user is a
conv2d_q8_channels_last reading it as x, all with the same x_scale and x_zero_point, gives them
int8 (its out_scale / out_zero_point set to theirs; not a method output). Each user skips its
quantization and the tensor between them is a quarter of the bytes (MobileNetV2's expand ->
depthwise -> project chain). The producer requantizes from its integer sums in float32, at
most one step from what the user would have made of the float32 output (equal nearly
everywhere; with a residual, exactly that). An activation between int8 convolutions (a SiLU
or hardswish whose input is an int8 convolution that nothing else reads, and whose readers
are all int8 convolutions) gives int8 the same way, through a table: the convolution gives
int8 quantized by its calibrated output range (static_int8.OUTPUT_RANGE), and the activation
becomes `pocket::lookup_int8` of that, a table of its 256 values quantized as the readers
take their input (quant/ops.py activation_table). One more rounding than computing the
activation in float32; a quarter of the bytes, and no float32 pass at all (EfficientNet's
expand -> SiLU -> depthwise, MobileNetV3's expand -> hardswish -> depthwise).
"""

from __future__ import annotations

import operator

import torch

from pocket.exporter.passes.fuse_activation import activation_bounds

aten = torch.ops.aten
TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]
UNARY = (aten.relu.default, aten.hardtanh.default, aten.clamp.default, aten.hardswish.default,
         aten.hardsigmoid.default, aten.silu.default, aten.sigmoid.default)
BINARY = (aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor, aten.div.Tensor)
# activations a convolution's .act overload applies, by the name it takes
ACTIVATIONS = {aten.silu.default: "silu", aten.sigmoid.default: "sigmoid", aten.hardswish.default: "hardswish",
               aten.hardsigmoid.default: "hardsigmoid"}


def channels_last(mg) -> int:
    """Rewrites mg's convertible convolutions; returns how many."""
    import pocket.exporter.custom_ops as ops

    graph = mg.graph
    twin: dict = {}      # NCHW node -> its channels-last node (same values, dims permuted)
    to_nhwc: dict = {}   # NCHW node outside the chain -> its permute
    packed: dict = {}    # weight name -> packed weight node
    pools: list = []     # max_pool2d_with_indices nodes whose values went channels-last
    converted = 0

    def nhwc(x):
        if x in twin:
            return twin[x]
        if x not in to_nhwc:
            # after x, or after every placeholder when x is one (placeholders stay first)
            after = x if x.op != "placeholder" else [n for n in graph.nodes if n.op == "placeholder"][-1]
            with graph.inserting_after(after):
                to_nhwc[x] = mg.call(aten.permute.default, (x, TO_NHWC), x.meta, _permuted(x, TO_NHWC))
        return to_nhwc[x]

    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        conv = _conv_args(node, mg)
        if conv is not None:
            x, w, b, stride, padding, dilation, groups, lo, hi = conv
            wt = mg.constants[w.name]
            wino = _winograd_pays(node, wt, stride, dilation, groups)
            key = (w.name, wino)
            if key not in packed:
                packed[key] = (mg.add_constant(f"{w.name}_winograd", ops.pack_winograd_weight(wt)) if wino else
                               mg.add_constant(f"{w.name}_packed", ops.pack_conv_weight(wt, groups)))
            op = torch.ops.pocket.conv2d_winograd if wino else torch.ops.pocket.conv2d_packed
            xn = nhwc(x)
            with graph.inserting_before(node):
                twin[node] = mg.call(op.default,
                                   (xn, packed[key], b, None, wt.shape[0], list(stride), list(padding), list(dilation),
                                    groups, lo, hi), node.meta, _permuted(node, TO_NHWC))
            converted += 1
        elif _q8_convertible(node, mg):
            args = (nhwc(node.args[0]), *node.args[1:4], None, *node.args[4:])  # residual None
            with graph.inserting_before(node):
                twin[node] = mg.call(torch.ops.pocket.conv2d_q8_channels_last.default, args, node.meta,
                                   _permuted(node, TO_NHWC))
            converted += 1
        elif node.target in UNARY and node.args[0] in twin and not node.kwargs:
            with graph.inserting_before(node):
                twin[node] = mg.call(node.target, (twin[node.args[0]], *node.args[1:]), node.meta,
                                   _permuted(node, TO_NHWC))
        elif _elementwise(node) and any(a in twin for a in node.args):
            # a value from outside the chain joins it; numbers stay as they are
            a, b = (nhwc(v) if isinstance(v, torch.fx.Node) else v for v in node.args)
            with graph.inserting_before(node):
                twin[node] = mg.call(node.target, (a, b), node.meta, _permuted(node, TO_NHWC))
        elif node.target is aten.mean.dim and node.args[0] in twin and _spatial_mean(node):
            keep = len(node.args) > 2 and node.args[2]
            with graph.inserting_before(node):
                new = mg.call(node.target, (twin[node.args[0]], [1, 2], keep), node.meta,
                            _permuted(node, TO_NHWC) if keep else node.meta["val"])
            if keep:
                twin[node] = new
            else:
                mg.replace_uses(node, new)
        elif node.target is aten.max_pool2d_with_indices.default and node.args[0] in twin and _values_only(node):
            values = next(iter(node.users))
            k, stride, padding, dilation, ceil = (list(node.args[1:]) + [[], [0], [1], False][len(node.args) - 2:])[:5]
            with graph.inserting_before(node):
                twin[values] = mg.call(torch.ops.pocket.max_pool2d_channels_last.default,
                                     (twin[node.args[0]], list(k), list(stride), list(padding), list(dilation), ceil),
                                     values.meta, _permuted(values, TO_NHWC))
            pools.append(node)
    if not converted:
        return 0
    _leave_chain(mg, twin)
    for node in pools:
        graph.erase_node(node)
    _fuse_residuals(mg)
    _fuse_activations(mg)
    _int8_edges(mg)
    _int8_activations(mg)
    return converted


def _permuted(node, dims):
    return node.meta["val"].permute(*dims).contiguous()


def _conv_args(node, mg):
    """(x, w, b, stride, padding, dilation, groups, out_min, out_max) of a convolution this pass
    converts, else None."""
    if node.target is aten.convolution.default:
        x, w, b, stride, padding, dilation, transposed, _, groups = node.args
        lo = hi = None
        if transposed:
            return None
    elif node.target is torch.ops.pocket.convolution_clamp.default:
        x, w, b, stride, padding, dilation, groups, lo, hi = node.args
    else:
        return None
    val, xval = node.meta.get("val"), getattr(x, "meta", {}).get("val")
    if not isinstance(val, torch.Tensor) or val.dtype != torch.float32 or val.dim() != 4:
        return None
    if not isinstance(xval, torch.Tensor) or xval.dim() != 4:
        return None
    wt = mg.constant(w)
    if wt is None or (b is not None and mg.constant(b) is None):
        return None
    cout, cin_g = wt.shape[:2]
    if not (groups == 1 or (cin_g == 1 and groups == cout == xval.shape[1])):
        return None
    return x, w, b, stride, padding, dilation, groups, lo, hi


# Winograd F(2x2, 3x3) (pocket::conv2d_winograd) multiplies 16 times per 2x2 outputs and
# channel pair where the direct convolution multiplies 36 times, and adds two transforms per
# 2x2 outputs and channel. It pays where the products outweigh the transforms: with 32 or
# more input and output channels at any image size (measured, AVX-512, 1 / 2 threads: 2x2
# outputs 1.03-1.26x, 4x4 1.5-2.0x, 14x14 and 56x56 1.7-2.0x), with 16 to 31 from 16 2x2
# tiles on (8x8 outputs 1.07 / 1.63x, 16x16 1.3-1.5x; 6x6 0.94x at 1 thread); not below 16.
WINOGRAD_CHANNELS = 32
WINOGRAD_FEW_CHANNELS, WINOGRAD_FEW_CHANNELS_TILES = 16, 16


def _winograd_pays(node, w, stride, dilation, groups) -> bool:
    if groups != 1 or tuple(w.shape[2:]) != (3, 3) or any(int(v) != 1 for v in (*stride, *dilation)):
        return False
    channels = min(w.shape[0], w.shape[1])
    if channels >= WINOGRAD_CHANNELS:
        return True
    if channels < WINOGRAD_FEW_CHANNELS:
        return False
    h, wd = node.meta["val"].shape[2:]
    if not (isinstance(h, int) and isinstance(wd, int)):
        return True  # a dynamic image size: its bound is usually large
    return ((h + 1) // 2) * ((wd + 1) // 2) >= WINOGRAD_FEW_CHANNELS_TILES


def _q8_convertible(node, mg) -> bool:
    """A static int8 convolution on a 4-d float32 input: groups 1 (its weight packed) or
    depthwise (an OIHW weight, one output channel per input channel)."""
    if node.target is not torch.ops.pocket.conv2d_q8_packed.default:
        return False
    xval, w, groups = getattr(node.args[0], "meta", {}).get("val"), node.args[1], node.args[10]
    wt = mg.constant(w)
    if not (isinstance(xval, torch.Tensor) and xval.dim() == 4 and xval.dtype == torch.float32 and wt is not None):
        return False
    return (groups == 1 and wt.dim() == 6) or (wt.dim() == 4 and groups == xval.shape[1] == wt.shape[0])


def _same_shape_add(node) -> bool:
    if node.target is not aten.add.Tensor or len(node.args) != 2 or node.kwargs.get("alpha", 1) != 1:
        return False
    a, b = (getattr(v, "meta", {}).get("val") for v in node.args)
    return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and a.dim() == 4


def _elementwise(node) -> bool:
    """An add, sub, mul or div of 4-d tensors and numbers: permuting every tensor operand the
    same way permutes the result (broadcasting included: MobileNetV3's squeeze-excitation
    scale, (N, C, 1, 1) times (N, C, H, W))."""
    plain = set(node.kwargs) <= {"alpha"} and node.kwargs.get("alpha", 1) == 1
    if node.target not in BINARY or len(node.args) != 2 or not plain:
        return False
    vals = [v.meta.get("val") if isinstance(v, torch.fx.Node) else v for v in node.args]
    return all(isinstance(v, (int, float)) or isinstance(v, torch.Tensor) and v.dim() == 4 for v in vals)


def _values_only(node) -> bool:
    """Only the values (getitem 0) of a max_pool2d_with_indices are read, not the indices."""
    users = list(node.users)
    return len(users) == 1 and users[0].target is operator.getitem and users[0].args[1] == 0


def _spatial_mean(node) -> bool:
    dims = node.args[1] if len(node.args) > 1 else None
    if node.kwargs or len(node.args) > 3 or not dims:
        return False
    return sorted(d % 4 for d in dims) == [2, 3]


def _leave_chain(mg, twin) -> None:
    """Users outside the chain read an NCHW permute of the twin; the NCHW nodes go."""
    graph = mg.graph
    for node, new in twin.items():
        outside = [u for u in node.users if u not in twin]
        if not outside and node not in mg.outputs:
            continue
        with graph.inserting_after(new):
            back = mg.call(aten.permute.default, (new, TO_NCHW), node.meta, node.meta["val"])
        mg.replace_uses(node, back, keep=lambda u: u in twin)
    for node in reversed(list(twin)):
        graph.erase_node(node)


def _fuse_residuals(mg) -> None:
    graph = mg.graph
    # where each fusable convolution has its residual and its out_min (out_max follows)
    slots = {torch.ops.pocket.conv2d_packed.default: (3, 9), torch.ops.pocket.conv2d_winograd.default: (3, 9),
             torch.ops.pocket.conv2d_q8_channels_last.default: (4, 12)}
    for add in list(graph.nodes):
        if add.op != "call_function" or not _same_shape_add(add) or add in mg.outputs:
            continue
        if any(v.meta["val"].dtype != torch.float32 for v in (add, *add.args[:2])):
            continue  # the kernel adds a float32 residual into a float32 output
        for i in (0, 1):
            conv, res = add.args[i], add.args[1 - i]
            if not isinstance(conv, torch.fx.Node) or conv.target not in slots:
                continue
            r, b = slots[conv.target]
            if (len(conv.users) == 1 and conv not in mg.outputs and conv.args[r] is None
                    and tuple(conv.args[b:b + 2]) == (None, None)):
                break
        else:
            continue
        act, (lo, hi) = activation_bounds(add)
        if act in mg.outputs and act is not add:
            act, lo, hi = add, None, None
        with graph.inserting_before(add):
            new = mg.call(conv.target, (*conv.args[:r], res, *conv.args[r + 1:b], lo, hi), conv.meta,
                        act.meta["val"])
        mg.replace_uses(act, new)
        if act is not add:
            graph.erase_node(act)
        graph.erase_node(add)
        graph.erase_node(conv)


def _fuse_activations(mg) -> None:
    graph = mg.graph
    act_overload = {torch.ops.pocket.conv2d_packed.default: torch.ops.pocket.conv2d_packed.act,
                    torch.ops.pocket.conv2d_winograd.default: torch.ops.pocket.conv2d_winograd.act}
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in ACTIVATIONS or node.kwargs:
            continue
        conv = node.args[0]
        if conv.target not in act_overload or len(conv.users) != 1 or conv in mg.outputs:
            continue
        with graph.inserting_before(node):
            new = mg.call(act_overload[conv.target], (*conv.args, ACTIVATIONS[node.target]), conv.meta,
                        node.meta["val"])
        mg.replace_uses(node, new)
        graph.erase_node(node)
        graph.erase_node(conv)


def _int8_readers(node):
    """(x_scale, x_zero_point) when every reader of `node` is an int8 convolution reading it
    as x alone, all with that quantization; else None."""
    q8 = torch.ops.pocket.conv2d_q8_channels_last.default
    users = list(node.users)
    if not users or any(u.target is not q8 or u.args[0] is not node or node in u.args[1:] for u in users):
        return None
    params = {(float(u.args[5]), int(u.args[6])) for u in users}
    return params.pop() if len(params) == 1 else None


def _int8_edges(mg) -> int:
    """Gives int8 outputs to the int8 convolutions whose users all quantize them alike (see the
    top); returns how many."""
    q8 = torch.ops.pocket.conv2d_q8_channels_last.default
    count = 0
    for node in mg.graph.nodes:
        if node.op != "call_function" or node.target is not q8 or node in mg.outputs or any(node.args[14:]):
            continue
        params = _int8_readers(node)
        if params is None:
            continue
        node.args = (*node.args[:14], *params)  # out_scale, out_zero_point
        node.meta["val"] = node.meta["val"].to(torch.int8)
        count += 1
    return count


def _int8_activations(mg) -> int:
    """Gives int8 to an activation between int8 convolutions (see the top); returns how many."""
    from pocket.exporter.quant.ops import activation_table
    from pocket.exporter.quant.static_int8 import OUTPUT_RANGE, activation_params

    graph, q8 = mg.graph, torch.ops.pocket.conv2d_q8_channels_last.default
    count = 0
    for act in list(graph.nodes):
        if act.op != "call_function" or act.target not in UNARY or act.kwargs or act in mg.outputs:
            continue
        conv = act.args[0]
        if (conv.target is not q8 or len(conv.users) != 1 or conv in mg.outputs or any(conv.args[14:])
                or conv.args[4] is not None or OUTPUT_RANGE not in conv.meta):
            continue  # the range is the convolution's own: not with a residual added
        params = _int8_readers(act)
        if params is None:
            continue
        in_scale, in_zero_point = activation_params(*conv.meta[OUTPUT_RANGE])
        table = activation_table(lambda v: act.target(v, *act.args[1:]), in_scale, in_zero_point, *params)
        conv.args = (*conv.args[:14], in_scale, in_zero_point)
        conv.meta["val"] = conv.meta["val"].to(torch.int8)
        with graph.inserting_before(act):
            new = mg.call(torch.ops.pocket.lookup_int8.default, (conv, mg.add_constant(f"{act.name}_table", table)),
                        act.meta, act.meta["val"].to(torch.int8))
        mg.replace_uses(act, new)
        graph.erase_node(act)
        count += 1
    return count
