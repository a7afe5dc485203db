"""The channels-last pass (passes/channels_last.py) end to end: which ops the example CNNs
export to (pocket::conv2d_packed with residual adds and activations fused, permutes only at
the chain's edges), and exported programs against eager PyTorch on graphs whose chains end
in every way (an output, an op that needs NCHW, a value used twice, grouped and transposed
convolutions that stay aten::convolution), with 1 and 2 threads."""

import copy
import importlib

import pytest
import torch

import pocket
from examples import models


def ops_of(program):
    return program.summary["methods"]["forward"]["ops"]


def op_calls(program, op):
    """How many of forward's instructions run `op` (from one profiled run)."""
    m = pocket.Module.from_bytes(program.data)
    m.set_profiling(True)
    m.forward(*(torch.zeros(s["max_shape"]).numpy() for s in m.method_info("forward")["inputs"]))
    return sum(e["calls"] for e in m.profile() if e["op"] == op)


def run(program, *inputs, threads=1):
    module = pocket.Module.from_bytes(program.data)
    module.set_num_threads(threads)
    return module.forward(*inputs)


def assert_matches(program, model, inputs, tol=1e-4):
    with torch.no_grad():
        want = model(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    for threads in (1, 2):
        got = run(program, *inputs, threads=threads)
        got = got if isinstance(got, (tuple, list)) else (got,)
        for g, w in zip(got, want):
            torch.testing.assert_close(torch.as_tensor(g), w, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["resnet", "mobilenet_v2", "mobilenet_v3", "efficientnet"])
def test_example_cnns_run_channels_last_with_fused_epilogues(name):
    model, inputs = getattr(models, name)()
    program = pocket.export(model, inputs)
    ops = set(ops_of(program))
    assert "pocket::conv2d_packed" in ops
    # every convolution, ReLU / ReLU6 and residual add went into conv2d_packed
    assert not ops & {"aten::convolution", "pocket::convolution_clamp", "aten::relu", "aten::hardtanh",
                      "aten::add.Tensor", "aten::max_pool2d_with_indices"}
    if name == "resnet":  # the stem's pooling stays in the chain
        assert "pocket::max_pool2d_channels_last" in ops
    if name in ("mobilenet_v3", "efficientnet"):  # activations, excitation gate and product too: one
        assert op_calls(program, "aten::permute") == 1     # permute, the input's
    assert_matches(program, model, inputs)


class ThreeByThree(torch.nn.Module):
    """3x3 stride-1 convolutions where Winograd pays and where it does not: 3 channels, 16
    channels on few 2x2 tiles, stride 2; 40 channels on few tiles (it pays); a residual block
    (conv + residual + ReLU fused into the Winograd op)."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 24, 3, padding=1)          # 3 input channels: direct
        self.a = torch.nn.Conv2d(24, 24, 3, padding=1)            # Winograd
        self.b = torch.nn.Conv2d(24, 40, 3, padding=1, bias=False)  # Winograd, into the residual sum
        self.skip = torch.nn.Conv2d(24, 40, 1)
        self.down = torch.nn.Conv2d(40, 40, 3, stride=2, padding=1)  # stride 2: direct
        self.small = torch.nn.Conv2d(40, 40, 3, padding=1)        # 3x3 outputs, 4 tiles, 40 channels: Winograd
        self.few = torch.nn.Conv2d(40, 16, 3, padding=1)          # 16 channels on 4 tiles: direct
        self.pool = torch.nn.AdaptiveAvgPool2d(6)

    def forward(self, x):
        y = torch.relu(self.a(torch.relu(self.stem(x))))
        y = torch.relu(self.b(y) + self.skip(y))
        return self.few(self.small(self.down(self.pool(y))))


def test_winograd_where_it_pays():
    torch.manual_seed(0)
    model, x = ThreeByThree().eval(), torch.randn(2, 3, 13, 11)
    program = pocket.export(model, (x,))
    assert op_calls(program, "pocket::conv2d_winograd") == 3 and op_calls(program, "pocket::conv2d_packed") == 4
    assert not set(ops_of(program)) & {"aten::relu", "aten::add.Tensor"}  # b's sum and ReLU went into its epilogue
    assert_matches(program, model, (x,))
    assert_matches(program, model, (torch.randn(2, 3, 13, 11) * 3,))


def test_winograd_with_a_dynamic_image_size():
    # the image size is known only at run time: 16 channels take Winograd (its bound is large),
    # then odd and even sizes, the smallest one output pixel
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(16, 16, 3, padding=1)).eval()
    h, w = torch.export.Dim("h", min=1, max=40), torch.export.Dim("w", min=1, max=40)
    program = pocket.export(model, (torch.randn(1, 3, 20, 24),), dynamic_shapes=({2: h, 3: w},))
    assert "pocket::conv2d_winograd" in ops_of(program)
    for size in ((40, 40), (13, 7), (1, 1), (2, 5)):
        assert_matches(program, model, (torch.randn(1, 3, *size),))


@pytest.mark.parametrize("name,count", [("resnet", 10), ("mobilenet_v2", 0)])
def test_example_cnns_winograd(name, count):
    # resnet: the 3x3 stride-1 convolutions at 16x16 (16 channels), 8x8 (32) and 4x4 (64).
    # mobilenet_v2's 3x3 convolutions are depthwise or strided.
    model, inputs = getattr(models, name)()
    assert op_calls(pocket.export(model, inputs), "pocket::conv2d_winograd") == count


class Edges(torch.nn.Module):
    """Chains that end at a method output, at an op that needs NCHW (sigmoid, a slice), at a
    grouped or transposed convolution; a convolution read twice; a sum with a value from
    outside the chain; a clamp after a sum that is also an output."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.dw = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
        self.g = torch.nn.Conv2d(8, 8, 1, groups=2)
        self.up = torch.nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.b = torch.nn.Conv2d(8, 8, 1)

    def forward(self, x):
        y = torch.relu(self.a(x))
        z = self.dw(y)
        s = self.b(z) + z  # residual with a convolution read twice
        t = torch.clamp(s, -0.5, 0.5)
        u = self.up(self.g(t)) + torch.sigmoid(x[:, :1])  # grouped, transposed: NCHW
        return s, u, y[:, :2].mean([2, 3])


def test_chain_edges_match_eager():
    torch.manual_seed(0)
    model, x = Edges().eval(), torch.randn(2, 3, 12, 10)
    program = pocket.export(model, (x,))
    assert {"pocket::conv2d_packed", "aten::convolution", "aten::permute"} <= set(ops_of(program))
    assert_matches(program, model, (x,))


class KeepsLast(torch.nn.Module):
    """A buffer set from a channels-last chain's value: forward returns the previous call's."""

    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.register_buffer("last", torch.zeros(1, 16, 8, 8))

    def forward(self, x):
        y = torch.relu(self.c(x))
        previous = self.last * 1.0
        self.last.copy_(y)
        return previous, y.sum()


def test_a_buffer_takes_the_chain_value_in_nchw():
    """The chain's edge serves buffer mutations as it serves outputs (export failed with a
    KeyError on the NHWC node before)."""
    torch.manual_seed(0)
    model, x1, x2 = KeepsLast().eval(), torch.randn(1, 16, 8, 8), torch.randn(1, 16, 8, 8)
    program = pocket.export(copy.deepcopy(model), (x1,))
    assert "pocket::conv2d_winograd" in ops_of(program)
    module = pocket.Module.from_bytes(program.data)
    with torch.no_grad():
        for x in (x1, x2):
            got, want = module.forward(x.numpy()), model(x)
            for g, w in zip(got, want):
                torch.testing.assert_close(torch.as_tensor(g), w, rtol=1e-4, atol=1e-4)


class Residual(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.b = torch.nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.a(x))
        return torch.nn.functional.relu6(self.b(y) + y)


def test_residual_add_and_activation_fuse():
    torch.manual_seed(0)
    model, x = Residual().eval(), torch.randn(1, 4, 9, 7) * 4
    program = pocket.export(model, (x,))
    ops = ops_of(program)
    assert "aten::add.Tensor" not in ops and "aten::hardtanh" not in ops and "aten::relu" not in ops
    assert_matches(program, model, (x,))


class ExcitedBlock(torch.nn.Module):
    """An inverted residual: the activation after the expansion and the depthwise convolution, a
    squeeze-excitation scale ((N, C, 1, 1) times (N, C, H, W)), the residual sum; and arithmetic
    with numbers on a channels-last value. MobileNetV3's activations are hardswish, and ReLU and
    hardsigmoid in the excitation; EfficientNet's (and YOLO's conv-BN-SiLU) SiLU, and SiLU and
    sigmoid."""

    def __init__(self, act, squeeze_act, gate):
        super().__init__()
        self.act, self.squeeze_act, self.gate = act, squeeze_act, gate
        self.expand, self.bn = torch.nn.Conv2d(8, 16, 1), torch.nn.BatchNorm2d(16)
        self.dw = torch.nn.Conv2d(16, 16, 5, padding=2, groups=16)
        self.fc1, self.fc2 = torch.nn.Conv2d(16, 4, 1), torch.nn.Conv2d(4, 16, 1)
        self.project = torch.nn.Conv2d(16, 8, 1)

    def forward(self, x):
        y = self.act(self.bn(self.expand(x)))
        y = self.act(self.dw(y))
        scale = self.gate(self.fc2(self.squeeze_act(self.fc1(y.mean((2, 3), keepdim=True)))))
        y = self.project(scale * y) + x
        return (y - 0.5) * 2 / 3 + 1


@pytest.mark.parametrize("acts,fused", [
    ((torch.nn.functional.hardswish, torch.relu, torch.nn.functional.hardsigmoid), 3),
    ((torch.nn.functional.silu, torch.nn.functional.silu, torch.sigmoid), 4),
], ids=["mobilenet_v3", "efficientnet"])
def test_activation_blocks_stay_channels_last(acts, fused):
    """hardswish and hardsigmoid (not four ops each), and SiLU (not sigmoid and mul), stay whole
    ops; each of this block's follows a convolution and becomes its activation
    (conv2d_packed.act; MobileNetV3's ReLU its clamp). The broadcast product and the arithmetic
    with numbers run on the channels-last values: the only permutes are the chain's entry and
    exit. Before, every activation left the chain (10 permutes with EfficientNet's)."""
    torch.manual_seed(0)
    model = ExcitedBlock(*acts).eval()
    torch.nn.init.normal_(model.bn.running_mean)
    x = torch.randn(2, 8, 11, 9) * 3
    program = pocket.export(model, (x,))
    ops = set(ops_of(program))
    assert op_calls(program, "pocket::conv2d_packed.act") == fused
    assert not ops & {"aten::clamp", "aten::convolution", "aten::hardswish", "aten::hardsigmoid", "aten::silu",
                      "aten::sigmoid"}
    assert op_calls(program, "aten::permute") == 2
    assert_matches(program, model, (x,))


class Activations(torch.nn.Module):
    """Activations that fuse into the convolution before them (its only reader: also a Winograd
    one, and one with a residual sum fused first) and activations that cannot: of a convolution
    read twice, of a product, and of a convolution whose result is also a method output."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 24, 3, padding=1)
        self.wino = torch.nn.Conv2d(24, 24, 3, padding=1)  # enough channels for Winograd
        self.b = torch.nn.Conv2d(24, 24, 1)
        self.c = torch.nn.Conv2d(24, 24, 1)

    def forward(self, x):
        y = torch.nn.functional.hardswish(self.a(x))
        y = torch.nn.functional.silu(self.wino(y))
        y = torch.sigmoid(self.b(y) + y)  # the residual, then the activation
        z = self.c(y)
        u = torch.nn.functional.silu(z) + z  # z read twice
        v = torch.nn.functional.hardsigmoid(u * 2)
        w = self.c(v)
        return torch.nn.functional.silu(w), w


def test_activations_fuse_into_the_convolution_before_them():
    torch.manual_seed(0)
    model, x = Activations().eval(), torch.randn(2, 3, 13, 10)
    program = pocket.export(model, (x,))
    assert op_calls(program, "pocket::conv2d_packed.act") == 2
    assert op_calls(program, "pocket::conv2d_winograd.act") == 1
    assert op_calls(program, "aten::silu") == 2 and op_calls(program, "aten::hardsigmoid") == 1
    assert "aten::sigmoid" not in ops_of(program) and "aten::hardswish" not in ops_of(program)
    assert_matches(program, model, (x,))


class Pools(torch.nn.Module):
    """A pooling inside the chain (ceil mode, dilation) and one whose indices are read (stays
    aten::max_pool2d_with_indices, on an NCHW permute)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.b = torch.nn.Conv2d(6, 6, 1)

    def forward(self, x):
        y = torch.nn.functional.max_pool2d(torch.relu(self.a(x)), 3, 2, 1, 2, ceil_mode=True)
        z, idx = torch.nn.functional.max_pool2d(self.b(y), 2, return_indices=True)
        return z, idx


def test_pooling_in_and_out_of_the_chain():
    torch.manual_seed(0)
    model, x = Pools().eval(), torch.randn(1, 3, 13, 11)
    program = pocket.export(model, (x,))
    ops = set(ops_of(program))
    assert {"pocket::max_pool2d_channels_last", "aten::max_pool2d_with_indices"} <= ops
    assert_matches(program, model, (x,))


class TwoInputs(torch.nn.Module):
    """The chain's input is the first of two graph inputs; a float64 value added to a
    convolution (type promotion: the sum is not fused as a residual)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x, d):
        return self.a(x) + d, self.a(x * 2)


def test_first_of_two_inputs_and_a_float64_sum():
    torch.manual_seed(0)
    model, x, d = TwoInputs().eval(), torch.randn(1, 3, 6, 5), torch.randn(1, 4, 6, 5, dtype=torch.float64)
    program = pocket.export(model, (x, d))
    assert "pocket::conv2d_packed" in ops_of(program) and "aten::add.Tensor" in ops_of(program)
    assert_matches(program, model, (x, d))


def int8_activations(program) -> int:
    """How many of forward's planned activations are int8 (the int8 edges between
    convolutions)."""
    from pocket.fb.api import Location, Program, ScalarType, Tensor, ValueKind
    from pocket.fb.header import unpack_header

    data = program.data
    root = Program.GetRootAs(data, unpack_header(data).header_size)
    method = next(m for m in (root.Methods(i) for i in range(root.MethodsLength())) if m.Name() == b"forward")
    count = 0
    for k in range(method.ValuesLength()):
        v = method.Values(k)
        if v.KindType() == ValueKind.Tensor:
            t = Tensor()
            t.Init(v.Kind().Bytes, v.Kind().Pos)
            count += t.Dtype() == ScalarType.Int8 and t.Location() == Location.Arena
    return count


def assert_same_outputs(program, reference, x, rtol, atol):
    """Every output of `program` on x, 1 and 2 threads, against `reference`'s."""
    want = run(reference, x)
    want = want if isinstance(want, (tuple, list)) else (want,)
    for threads in (1, 2):
        got = run(program, x, threads=threads)
        got = got if isinstance(got, (tuple, list)) else (got,)
        for g, w in zip(got, want):
            torch.testing.assert_close(torch.as_tensor(g), torch.as_tensor(w), rtol=rtol, atol=atol)


def assert_int8_edges_close(program, plain, x, want_range):
    """`program` (int8 edges) against `plain` (the same program without them): an int8 edge's
    values are requantized from the sums in float32, at most one step from quantizing the
    float32 output, which moves the model's output by well under 1% of its range (int8's own
    error against fp32 is about 10x that)."""
    assert_same_outputs(program, plain, x, 0, 0.01 * want_range)


@pytest.mark.parametrize("name", ["resnet", "mobilenet_v2"])
def test_static_int8_convolutions_join_the_chain(monkeypatch, name):
    """Static int8 convolutions (groups 1 and depthwise) run channels-last
    (pocket::conv2d_q8_channels_last, residual adds and ReLUs fused, ResNet's stem pool
    channels-last too). Without the int8 edges they give what the int8 program that runs them
    NCHW gives: the same integer sums and float steps, so equal up to the order of the final
    spatial mean's sum; with them (a convolution feeding only int8 convolutions gives int8)
    within one requantization step; 1 and 2 threads."""
    cl = importlib.import_module("pocket.exporter.passes.channels_last")  # the module, not its function
    model, inputs = getattr(models, name)()
    g = torch.Generator().manual_seed(0)
    calib = [(torch.randn(inputs[0].shape, generator=g),) for _ in range(4)]
    program = pocket.export(model, inputs, quantize="int8", calibration=calib)
    ops = set(ops_of(program))
    assert "pocket::conv2d_q8_channels_last" in ops
    assert ("pocket::max_pool2d_channels_last" in ops) == (name == "resnet")
    assert not ops & {"pocket::conv2d_q8_packed", "aten::relu", "aten::hardtanh", "aten::add.Tensor",
                      "aten::max_pool2d_with_indices"}
    # resnet: each of 6 blocks' first convolution feeds its second, and 2 block outputs feed a
    # downsampling block's conv1 and 1x1 shortcut; mobilenet_v2 (52 convolutions, 17 blocks):
    # 33 inside the blocks (expand -> depthwise -> project), the stem, and the 7 block outputs
    # that the next layer does not also read as a residual
    assert int8_activations(program) == {"resnet": 8, "mobilenet_v2": 41}[name]
    monkeypatch.setattr(cl, "_int8_edges", lambda mg: 0)
    plain = pocket.export(model, inputs, quantize="int8", calibration=calib)
    assert int8_activations(plain) == 0
    monkeypatch.setattr(cl, "_q8_convertible", lambda node, mg: False)
    nchw = pocket.export(model, inputs, quantize="int8", calibration=calib)
    assert "pocket::conv2d_q8_packed" in set(ops_of(nchw)) and "pocket::conv2d_q8_channels_last" not in ops_of(nchw)
    for x in (inputs[0], torch.randn(inputs[0].shape, generator=g) * 2):
        want = torch.as_tensor(run(nchw, x))
        for threads in (1, 2):
            torch.testing.assert_close(torch.as_tensor(run(plain, x, threads=threads)), want, rtol=1e-5, atol=1e-6)
        with torch.no_grad():  # and int8 stays near fp32 (loose: 8-bit activations)
            assert (want - model(x)).abs().max() <= 0.1 * model(x).abs().max() + 0.02
        assert_int8_edges_close(program, plain, x, float(want.abs().max()))


@pytest.mark.parametrize("name", ["Edges", "Residual"])
def test_static_int8_chain_edges_match_the_nchw_program(monkeypatch, name):
    """The int8 chain ends as the fp32 one does (method outputs, NCHW-only ops, a grouped and a
    transposed convolution that stay NCHW, a convolution read twice, ReLU6 after a residual
    sum): the same outputs as the int8 program without the channels-last pass, 1 and 2
    threads, batch 2."""
    cl = importlib.import_module("pocket.exporter.passes.channels_last")
    torch.manual_seed(0)
    model = globals()[name]().eval()
    shape = (2, 3, 12, 10) if name == "Edges" else (2, 4, 9, 7)
    x = torch.randn(shape) * 2
    calib = [(torch.randn(shape) * 2,) for _ in range(3)]
    program = pocket.export(model, (x,), quantize="int8", calibration=calib)
    assert "pocket::conv2d_q8_channels_last" in ops_of(program)
    monkeypatch.setattr(cl, "_q8_convertible", lambda node, mg: False)
    monkeypatch.setattr(cl, "_conv_args", lambda node, mg: None)  # the fp32 transposed one stays anyway
    nchw = pocket.export(model, (x,), quantize="int8", calibration=calib)
    assert "pocket::conv2d_q8_channels_last" not in ops_of(nchw)
    assert_same_outputs(program, nchw, x, 1e-5, 1e-6)


class Int8Edges(torch.nn.Module):
    """A convolution read by two others (int8 for both), a depthwise one with ReLU6 between int8
    edges, a sum fused as a residual (its other operand stays float32), a ReLU after it, and
    a convolution read by another and returned (float32: a method output)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.dw = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.c = torch.nn.Conv2d(16, 8, 1)
        self.d = torch.nn.Conv2d(16, 8, 1)
        self.e = torch.nn.Conv2d(8, 12, 3, padding=1)
        self.f = torch.nn.Conv2d(12, 4, 1)

    def forward(self, x):
        y = self.a(x)
        z = torch.nn.functional.relu6(self.dw(y))
        s = torch.relu(self.c(y) + self.d(z))
        t = self.e(s)
        return self.f(t), t


def test_static_int8_edges_between_convolutions(monkeypatch):
    """Int8 edges where every reader is an int8 convolution (a -> dw and c, dw -> d, the fused
    sum -> e), float32 elsewhere (the residual operand, the method output t); within one
    requantization step of the program without them, 1 and 2 threads, batch 2."""
    cl = importlib.import_module("pocket.exporter.passes.channels_last")
    torch.manual_seed(0)
    model, shape = Int8Edges().eval(), (2, 3, 14, 11)
    calib = [(torch.randn(shape) * 2,) for _ in range(3)]
    x = torch.randn(shape) * 2
    program = pocket.export(model, (x,), quantize="int8", calibration=calib)
    assert int8_activations(program) == 3
    monkeypatch.setattr(cl, "_int8_edges", lambda mg: 0)
    plain = pocket.export(model, (x,), quantize="int8", calibration=calib)
    assert int8_activations(plain) == 0
    with torch.no_grad():
        want_range = max(float(v.abs().max()) for v in model(x))
    assert_int8_edges_close(program, plain, x, want_range)


class Int8Activations(torch.nn.Module):
    """Activations between int8 convolutions: a SiLU (a -> b), a hardswish after a depthwise
    one (dw -> c); and ones that stay float32: a sigmoid also read by a product, a SiLU after a
    fused residual sum (the range calibrated is the convolution's own, not the sum's), and a
    hardswish returned."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.b = torch.nn.Conv2d(16, 16, 1)
        self.dw = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.c = torch.nn.Conv2d(16, 16, 1)
        self.d = torch.nn.Conv2d(16, 8, 1)
        self.e = torch.nn.Conv2d(8, 8, 1)

    def forward(self, x):
        y = self.b(torch.nn.functional.silu(self.a(x)))
        y = self.c(torch.nn.functional.hardswish(self.dw(y)))
        g = torch.sigmoid(self.d(y))
        z = self.e(g) * g
        return torch.nn.functional.silu(self.e(z) + z), torch.nn.functional.hardswish(self.d(y))


def test_static_int8_activations_between_convolutions(monkeypatch):
    """An activation whose input is an int8 convolution read by it alone, and whose readers are
    all int8 convolutions, becomes a table of 256 int8 values (pocket::lookup_int8): the
    convolution gives int8 quantized by its calibrated output range, the table maps each value
    to the activation quantized as the readers take their input. Two here; the others stay
    float32. Against the program without the tables: one more rounding (a step of the
    convolution's output quantization, times the activation's slope of at most 1.2), within 3%
    of the output range, 1 and 2 threads; and against eager within int8's loose bound."""
    cl = importlib.import_module("pocket.exporter.passes.channels_last")
    torch.manual_seed(0)
    model, shape = Int8Activations().eval(), (2, 3, 13, 11)
    calib = [(torch.randn(shape) * 2,) for _ in range(4)]
    x = torch.randn(shape) * 2
    program = pocket.export(model, (x,), quantize="int8", calibration=calib)
    assert op_calls(program, "pocket::lookup_int8") == 2
    assert {"aten::silu", "aten::sigmoid", "aten::hardswish"} <= set(ops_of(program))
    monkeypatch.setattr(cl, "_int8_activations", lambda mg: 0)
    plain = pocket.export(model, (x,), quantize="int8", calibration=calib)
    assert "pocket::lookup_int8" not in ops_of(plain)
    with torch.no_grad():
        want = model(x)
    want_range = max(float(v.abs().max()) for v in want)
    assert_same_outputs(program, plain, x, 0, 0.03 * want_range)
    for got, w in zip(run(program, x), want):
        assert (torch.as_tensor(got) - w).abs().max() <= 0.1 * want_range + 0.02
