"""Exporter fusion of a ReLU, ReLU6 or clamp into the convolution before it
(passes/fuse_activation.py -> pocket::convolution_clamp), end to end: the exported program
against eager PyTorch, and which activations may not be fused."""

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
