"""Static int8 for CNNs: every 1-d and 2-d convolution (not transposed) becomes an int8
convolution with per-channel int8 weights and a per-tensor int8 quantization of its input,
calibrated on user data: pocket::conv2d_q8_packed, with a ReLU or ReLU6 that follows fused as
an output clamp (a 1-d one runs as a 2-d one of height 1, between an unsqueeze and a squeeze).
The weight is stored in the int8 kernels' layout where a group has at least 4 output channels,
else (depthwise) as OIHW, which those kernels read directly (a packed block of 16 channels
would be mostly zeros).

Why our own pass rather than PT2E's quantizer: the PT2E quantizers now live in torchao, whose
releases pin their own torch versions, and their output (quantize/dequantize pairs around
every op) would need a fusion pass to reach the same fused kernel. Here calibration runs the
exported graph itself (after BatchNorm folding, so the folded weights are what get quantized),
and each convolution becomes one op: quantize input -> int8 convolution -> scale to float.
Activations between ops stay float32 here; other ops are unchanged. The range of each
convolution's output is recorded too (OUTPUT_RANGE), for the channels-last pass, which gives
int8 to the values between int8 convolutions (passes/channels_last.py).
"""

from __future__ import annotations

import torch

from pocket.exporter.errors import ExportError
from pocket.exporter.passes.fuse_activation import activation_bounds

aten = torch.ops.aten


def quantize_convolutions(mg, calibration: list[tuple]) -> int:
    """Rewrites the eligible convolutions of `mg`; returns how many were quantized."""
    from pocket.exporter.quant import ops  # noqa: F401  (registers pocket::conv2d_q8)

    convs = [n for n in mg.graph.nodes if _eligible(n, mg)]
    if not convs:
        return 0
    if not calibration:
        raise ExportError("static int8 quantization needs calibration data (calibration=[inputs, ...] or "
                          "--calibration data.npz)")
    fused = {conv: activation_bounds(conv) for conv in convs}  # (the node it replaces, its clamp)
    ranges, out_ranges = _calibrate(mg, convs, [replaced for replaced, _ in fused.values()], calibration)
    for conv in convs:
        lo, hi = ranges[conv]
        x_scale, zero_point = activation_params(lo, hi)
        w = mg.constants[conv.args[1].name].float()
        x, _, bias, stride, padding, dilation, _, _, groups = conv.args
        one_d = w.dim() == 3
        if one_d:  # (N, C, L) as (N, C, 1, L)
            w = w.unsqueeze(2)
            stride, padding, dilation = [1, *stride], [0, *padding], [1, *dilation]
            if x.target is aten.squeeze.dims and list(x.args[1]) == [2] and x.args[0].meta["val"].shape[2] == 1:
                x = x.args[0]  # the 2-d output of the 1-d convolution before: no squeeze and unsqueeze between
            else:
                with mg.graph.inserting_before(conv):
                    x = mg.call(aten.unsqueeze.default, (x, 2), conv.meta, x.meta["val"].unsqueeze(2))
        w_scale = w.abs().flatten(1).amax(1) / 127.0
        w_scale = torch.where(w_scale == 0, torch.ones_like(w_scale), w_scale)
        qweight = torch.clamp(torch.round(w / w_scale[:, None, None, None]), -127, 127).to(torch.int8)
        s_node = mg.add_constant(f"{conv.name}_wscale", w_scale.contiguous())
        geometry = (list(stride), list(padding), list(dilation), groups)
        if qweight.shape[0] // groups < MIN_PACKED_CHANNELS:
            w_node = mg.add_constant(f"{conv.name}_qweight", qweight.contiguous())
        else:
            w_node = mg.add_constant(f"{conv.name}_qpacked", ops.pack_conv_weight(qweight, groups))
        replaced, (lo, hi) = fused[conv]
        args = (x, w_node, s_node, bias, x_scale, zero_point, list(qweight.shape[2:]), *geometry, lo, hi)
        val = replaced.meta.get("val")
        with mg.graph.inserting_after(replaced):
            new = mg.call(torch.ops.pocket.conv2d_q8_packed.default, args, conv.meta,
                        val.unsqueeze(2) if one_d else val)
        # The range of its float32 output (clamped) over the calibration: what an int8 output
        # of it would be quantized to (channels_last._int8_activations).
        new.meta[OUTPUT_RANGE] = tuple(out_ranges[replaced])
        if one_d:
            with mg.graph.inserting_after(new):
                new = mg.call(aten.squeeze.dims, (new, [2]), conv.meta, val)
        mg.replace_uses(replaced, new)
        for node in ([replaced, conv] if replaced is not conv else [conv]):
            mg.graph.erase_node(node)
    return len(convs)


# Output channels per group from which the packed layout pays (as conv_q8.cpp's driver).
MIN_PACKED_CHANNELS = 4
# The meta key of an int8 convolution's calibrated output range, (lo, hi).
OUTPUT_RANGE = "pocket_output_range"


def _eligible(node, mg) -> bool:
    if node.op != "call_function" or node.target is not aten.convolution.default:
        return False
    x, w, b, *_rest = node.args
    transposed = node.args[6]
    weight = mg.constant(w)
    return (not transposed and weight is not None and weight.dim() in (3, 4)
            and (b is None or mg.constant(b) is not None))


def _calibrate(mg, convs, outputs, calibration) -> dict:
    """The ranges over the samples of each convolution's input and of each node of `outputs`:
    ({conv: [lo, hi]}, {node: [lo, hi]})."""
    inputs, outputs = set(convs), set(outputs)
    ranges = {n: [float("inf"), float("-inf")] for n in inputs}
    outs = {n: [float("inf"), float("-inf")] for n in outputs}

    def widen(r, t):
        r[0], r[1] = min(r[0], float(t.min())), max(r[1], float(t.max()))

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            if n in inputs:
                widen(ranges[n], self.env[n.args[0]])
            result = super().run_node(n)
            if n in outputs:
                widen(outs[n], result)
            return result

    gm = torch.fx.GraphModule(torch.nn.Module(), mg.graph)
    for i, sample in enumerate(calibration):
        sample = sample if isinstance(sample, (tuple, list)) else (sample,)
        if len(sample) != len(mg.inputs):
            raise ExportError(f"calibration sample {i} has {len(sample)} inputs, the model takes {len(mg.inputs)}")
        args = []
        user = enumerate(sample)
        for p in (n for n in mg.graph.nodes if n.op == "placeholder"):
            if p.name in mg.constants:
                args.append(mg.constants[p.name])
            elif p.name in mg.buffers:
                args.append(mg.buffer_values[mg.buffers[p.name]].clone())
            else:
                j, value = next(user)
                args.append(_calibration_input(i, j, value, p.meta.get("val")))
        try:
            with torch.no_grad():
                Recorder(gm).run(*args)
        except Exception as e:
            raise ExportError(f"calibration sample {i} does not run through the model: {str(e).splitlines()[0]}") from e
    return ranges, outs


def _calibration_input(i: int, j: int, value, example) -> torch.Tensor:
    """Input j of calibration sample i as a tensor of the example input's dtype and rank."""
    try:
        t = torch.as_tensor(value)
    except Exception as e:
        raise ExportError(f"calibration sample {i}, input {j}: not a tensor ({type(value).__name__})") from e
    if isinstance(example, torch.Tensor) and (t.dtype != example.dtype or t.dim() != example.dim()):
        raise ExportError(f"calibration sample {i}, input {j}: {str(t.dtype).removeprefix('torch.')}"
                          f"{list(t.shape)}, but the model takes {str(example.dtype).removeprefix('torch.')} "
                          f"with {example.dim()} dims (example input {list(example.shape)})")
    return t


def activation_params(lo: float, hi: float) -> tuple[float, int]:
    """Asymmetric per-tensor int8: the range always holds 0 (zero padding stays exact)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    # At least float32's epsilon: a range of subnormal activations (a layer of a randomly
    # initialized model) would give a scale that is 0 in float32, which the kernel rejects.
    scale = max((hi - lo) / 255.0, float(torch.finfo(torch.float32).eps)) if hi > lo else 1.0
    zero_point = int(max(-128, min(127, round(-128 - lo / scale))))
    return float(scale), zero_point
