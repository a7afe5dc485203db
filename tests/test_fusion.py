"""Exporter fusion of a ReLU, ReLU6 or clamp into the convolution before it
(passes/fuse_activation.py -> pocket::convolution_clamp), end to end: the exported program
against eager PyTorch, and which activations may not be fused."""

import pytest
import torch

import pocket
from examples import models


def ops_of(program):
    return program.summary["methods"]["forward"]["ops"]


def run(program, *inputs):
    return pocket.Module.from_bytes(program.data).forward(*inputs)


def test_mobilenet_v2_fuses_every_relu6_and_matches_eager():
    model, (x,) = models.mobilenet_v2()
    program = pocket.export(model, (x,))
    ops = ops_of(program)
    # ReLU6 fused, then the convolutions went channels-last (test_channels_last.py)
    assert "pocket::conv2d_packed" in ops and "aten::hardtanh" not in ops
    with torch.no_grad():
        torch.testing.assert_close(torch.as_tensor(run(program, x)), model(x), rtol=1e-4, atol=1e-4)


class Net(torch.nn.Module):
    """Fusable: conv -> relu (1d), conv -> clamp(min) as the output. Not fusable: a
    convolution used twice, a transposed convolution, a clamp with a tensor bound."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv1d(3, 6, 3, padding=1)
        self.c2 = torch.nn.Conv1d(6, 6, 1)
        self.c3 = torch.nn.Conv1d(6, 4, 3)
        self.up = torch.nn.ConvTranspose1d(4, 4, 2, stride=2)
        self.c4 = torch.nn.Conv1d(4, 4, 3)

    def forward(self, x, bound):
        y = torch.relu(self.c1(x))
        z = self.c2(y)
        y = torch.nn.functional.relu6(z) + z
        y = torch.relu(self.up(self.c3(y)))
        return torch.clamp(y, min=bound), torch.clamp(self.c4(y), min=-0.1)


def test_only_a_single_user_activation_is_fused():
    torch.manual_seed(0)
    model = Net().eval()
    x, bound = torch.randn(2, 3, 16), torch.tensor(0.05)
    program = pocket.export(model, (x, bound))
    ops = ops_of(program)
    assert "pocket::convolution_clamp" in ops
    assert {"aten::hardtanh", "aten::relu", "aten::convolution"} <= set(ops)  # relu6(z) + z; the transposed one
    with torch.no_grad():
        want = model(x, bound)
    for got, w in zip(run(program, x, bound), want):
        torch.testing.assert_close(torch.as_tensor(got), w, rtol=1e-5, atol=1e-5)


class ConstantOutput(torch.nn.Module):
    """An output the exporter folds to a constant, next to one it does not."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4))

    def forward(self, x):
        return x + 1, self.w * 2


def conv_bn():
    return models._init_batchnorm(torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.BatchNorm2d(16)))


@pytest.mark.parametrize("make, quantize", [(conv_bn, None), (conv_bn, "int8"), (ConstantOutput, None)],
                         ids=["batchnorm-folded", "batchnorm-folded-int8", "constant-folded"])
def test_a_rewritten_node_that_is_the_output(make, quantize):
    """A pass that replaces the method's output node (BatchNorm folded into the convolution, a
    constant folded, a convolution quantized) hands the output over to the new node."""
    model = make().eval()
    x = torch.randn(1, 3, 8, 8)
    options = {"quantize": "int8", "calibration": [(torch.randn(1, 3, 8, 8),) for _ in range(4)]} if quantize else {}
    program = pocket.export(model, (x,), **options)
    got = run(program, x)
    with torch.no_grad():
        want = model(x)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    tol = 0.1 if quantize else 1e-5  # int8: a few quantization steps of outputs of magnitude ~3
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(torch.as_tensor(g), w, rtol=tol, atol=tol)
    if make is conv_bn:
        assert "aten::_native_batch_norm_legit_no_training" not in ops_of(program)
