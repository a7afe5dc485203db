"""Whole models through pocket.export -> save -> load -> forward, against eager PyTorch.

Tolerance: fp32, atol = rtol = 1e-4 (kernels accumulate in a different order than ATen).
"""

import collections
import copy
import gc

import numpy as np
import pytest
import torch
from torch.export import Dim

import pocket
from examples import models

TOL = dict(atol=1e-4, rtol=1e-4)


def roundtrip(tmp_path, model, inputs, **kwargs):
    program = pocket.export(model, inputs, **kwargs)
    path = tmp_path / "model.pocket"
    program.save(path)
    return pocket.load(path)


@pytest.mark.parametrize("factory", ["mlp", "resnet", "mobilenet_v2", "mobilenet_v3", "efficientnet", "encoder"])
def test_model_matches_eager(tmp_path, factory):
    model, inputs = getattr(models, factory)()
    m = roundtrip(tmp_path, model, inputs)
    with torch.no_grad():
        want = model(*inputs)
    got = m.forward(*inputs)
    assert isinstance(got, torch.Tensor)
    torch.testing.assert_close(got, want, **TOL)
    # numpy in, numpy out
    got_np = m.forward(*[x.numpy() for x in inputs])
    assert isinstance(got_np, np.ndarray)
    np.testing.assert_allclose(got_np, want.numpy(), **TOL)


def test_batchnorm_is_folded_into_convolutions():
    model, inputs = models.resnet()
    program = pocket.export(model, inputs)
    assert "aten::_native_batch_norm_legit_no_training" not in program.summary["methods"]["forward"]["ops"]


@pytest.mark.parametrize("batch,seq", [(1, 2), (3, 17), (8, 32)])
def test_dynamic_batch_and_sequence(tmp_path, batch, seq):
    model, inputs, shapes = models.dynamic_encoder()
    m = roundtrip(tmp_path, model, inputs, dynamic_shapes=shapes)
    tokens = torch.randint(0, 100, (batch, seq))
    with torch.no_grad():
        want = model(tokens)
    torch.testing.assert_close(m.forward(tokens), want, **TOL)


def test_dynamic_mlp_three_sizes(tmp_path):
    model, (x,) = models.mlp()
    m = roundtrip(tmp_path, model, (x,), dynamic_shapes=({0: Dim("batch", min=1, max=64)},))
    for n in (1, 7, 64):
        x = torch.randn(n, 32)
        with torch.no_grad():
            torch.testing.assert_close(m.forward(x), model(x), **TOL)


def test_memory_plan_shares_memory():
    model, inputs = models.mobilenet_v2()
    s = pocket.export(model, inputs).summary["methods"]["forward"]
    assert s["arena_bytes"] < s["unplanned_bytes"] / 4, s


class TwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(8, 16)
        self.a = torch.nn.Linear(16, 4)
        self.b = torch.nn.Linear(16, 2)

    def forward(self, x):
        return self.a(torch.relu(self.body(x)))

    def second(self, x):
        return torch.tanh(self.b(torch.relu(self.body(x))))


def test_two_method_program(tmp_path):
    model = TwoHeads().eval()
    x = torch.randn(3, 8)
    program = pocket.export(model, (x,), methods={"second": (model.second, (x,))}, metadata={"task": "demo", "n": 2})
    program.save(tmp_path / "two.pocket")
    m = pocket.load(tmp_path / "two.pocket")
    assert sorted(m.method_names) == ["forward", "second"]
    assert m.metadata == {"n": "2", "task": "demo"}
    with torch.no_grad():
        torch.testing.assert_close(m.forward(x), model(x), **TOL)
        torch.testing.assert_close(m.run("second", x), model.second(x), **TOL)
    # the shared Linear is stored once
    assert program.summary["constant_bytes"] < 2 * sum(p.numel() * 4 for p in model.parameters())


class Structured(torch.nn.Module):
    def forward(self, x, y):
        return {"sum": x + y, "parts": (torch.relu(x), [y * 2])}


def test_output_structure_is_kept(tmp_path):
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    m = roundtrip(tmp_path, Structured(), (x, y))
    got = m.forward(x, y)
    want = Structured()(x, y)
    assert set(got) == {"sum", "parts"} and isinstance(got["parts"], tuple) and isinstance(got["parts"][1], list)
    torch.testing.assert_close(got["sum"], want["sum"])
    torch.testing.assert_close(got["parts"][1][0], want["parts"][1][0])


class OrderedOutputs(torch.nn.Module):
    """torchvision's segmentation models return an OrderedDict ("out", "aux")."""

    def forward(self, x):
        return collections.OrderedDict(out=x * 2, aux=torch.relu(x))


def test_ordered_dict_output_is_a_dict_in_its_order(tmp_path):
    x = torch.randn(2, 3)
    got = roundtrip(tmp_path, OrderedOutputs(), (x,)).forward(x)
    assert list(got) == ["out", "aux"]
    torch.testing.assert_close(got["out"], x * 2)
    torch.testing.assert_close(got["aux"], torch.relu(x))


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x):
        self.total.add_(x)
        return self.total * 1.0


def test_mutable_buffer_persists_across_calls(tmp_path):
    m = roundtrip(tmp_path, Counter(), (torch.ones(3),))
    m.forward(torch.ones(3))
    got = m.forward(torch.full((3,), 2.0))
    torch.testing.assert_close(got, torch.full((3,), 3.0))
    m.reset_buffers()
    torch.testing.assert_close(m.forward(torch.ones(3)), torch.ones(3))


def test_identity_output_is_a_copy(tmp_path):
    class Identity(torch.nn.Module):
        def forward(self, x):
            return x

    x = torch.randn(4)
    m = roundtrip(tmp_path, Identity(), (x,))
    torch.testing.assert_close(m.forward(x), x)


def test_symbolic_int_used_as_a_tensor(tmp_path):
    class HalfScale(torch.nn.Module):
        def forward(self, x):
            return x * (x.shape[1] // 2)

    x = torch.randn(2, 6)
    m = roundtrip(tmp_path, HalfScale(), (x,), dynamic_shapes=({1: Dim("n", min=2, max=16)},))
    for n in (2, 9, 16):
        x = torch.randn(2, n)
        torch.testing.assert_close(m.forward(x), x * (n // 2))


@pytest.mark.parametrize("enabled", [True, False])
def test_export_leaves_cycle_collection_as_it_found_it(enabled):
    """export() pauses automatic cycle collection while it traces (exporter/export.py) and gives
    the caller's setting back, also when the export fails."""

    seen = []  # outside the module: export works on a copy of it

    class Probe(torch.nn.Module):
        def __init__(self, fail=False):
            super().__init__()
            self.fail = fail

        def forward(self, x):
            seen.append(gc.isenabled())
            if self.fail:
                raise ValueError("the model failed")
            return x + 1

    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        pocket.export(Probe(), (torch.randn(2),))
        assert seen and not any(seen)
        assert gc.isenabled() == enabled
        with pytest.raises(ValueError, match="the model failed"):
            pocket.export(Probe(fail=True), (torch.randn(2),))
        assert gc.isenabled() == enabled
    finally:
        (gc.enable if was else gc.disable)()


class HalfInHalfOut(torch.nn.Module):
    """float16 and bfloat16 in and out; the arithmetic in float32 (what the kernels compute in)."""

    def forward(self, h, b):
        return (h.float() * 2).half(), (b.float() + h.float()).bfloat16(), b.float() * 3


def test_float16_and_bfloat16_inputs_and_outputs(tmp_path):
    """torch in, torch out of the same dtypes; numpy has no bfloat16, so with numpy its values
    travel as uint16 words, in and out alike (an output fed back as an input)."""
    model = HalfInHalfOut()
    h, b = torch.randn(2, 5).half(), torch.randn(2, 5).bfloat16()
    m = roundtrip(tmp_path, model, (h, b))
    want = model(h, b)
    got = m.forward(h, b)
    assert [g.dtype for g in got] == [torch.float16, torch.bfloat16, torch.float32]
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=0, atol=0)  # casts and one rounding: exact
    b_words = b.view(torch.int16).numpy().view(np.uint16)
    got_np = m.forward(h.numpy(), b_words)
    assert [g.dtype for g in got_np] == [np.float16, np.uint16, np.float32]
    np.testing.assert_array_equal(got_np[1], want[1].view(torch.int16).numpy().view(np.uint16))
    again = m.forward(h.numpy(), got_np[1])  # a bfloat16 output is a valid bfloat16 input
    np.testing.assert_array_equal(again[2], (want[1].float() * 3).numpy())
    with pytest.raises(pocket.PocketError, match=r"input 0: a uint16 array carries bfloat16 words .* float16"):
        m.forward(got_np[1], b_words)  # bfloat16 words where float16 is expected


class Scale(torch.nn.Module):
    def forward(self, x):
        return x * 2


def test_python_scalar_for_a_bfloat16_input(tmp_path):
    """A Python number given for a 0-d bfloat16 input is rounded to bfloat16 as torch rounds it
    (nearest even; inf and NaN kept)."""
    m = roundtrip(tmp_path, Scale(), (torch.tensor(1.0, dtype=torch.bfloat16),))
    for v in [1.5, -3.0078125, 1.00390625, 1.01171875, 3.4e38, float("inf"), -float("inf"), 1e-40, 7]:
        want = (torch.tensor(v, dtype=torch.float32).bfloat16() * 2).view(torch.int16).numpy().view(np.uint16)
        np.testing.assert_array_equal(m.forward(v), want, err_msg=f"value {v}")
    nan = m.forward(float("nan"))
    assert nan.dtype == np.uint16 and torch.from_numpy(nan.view(np.int16)).view(torch.bfloat16).isnan()


class HalfNet(torch.nn.Module):
    """Convolution, batch norm, embedding, linear, softmax and a half state buffer."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8)
        self.emb, self.fc = torch.nn.Embedding(10, 8), torch.nn.Linear(8, 4)
        self.register_buffer("total", torch.zeros(4))

    def forward(self, image, ids):
        h = torch.relu(self.bn(self.conv(image))).mean((2, 3)) + self.emb(ids).sum(1)
        y = torch.softmax(self.fc(h), -1) + torch.full((1, 4), 0.5, dtype=h.dtype)
        self.total.add_(y.sum(0))
        return y, self.total.clone()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_model_computes_in_float32(tmp_path, dtype):
    """A model in float16 / bfloat16 exports and runs: the arithmetic in float32 on its half
    weights and inputs, its outputs (and state) in its dtype. Against the same model in float32
    on the same half values, one rounding to half apart."""
    model = HalfNet().eval()
    torch.nn.init.normal_(model.bn.running_mean)
    model = model.to(dtype)
    g = torch.Generator().manual_seed(0)
    image, ids = torch.randn(2, 3, 6, 6, generator=g).to(dtype), torch.randint(0, 10, (2, 3), generator=g)
    m = roundtrip(tmp_path, copy.deepcopy(model), (image, ids))
    assert m.method_info("forward")["inputs"][0]["dtype"] == str(dtype).removeprefix("torch.")
    reference = copy.deepcopy(model).float()
    for step in range(2):  # the buffer carries over
        with torch.no_grad():
            want = reference(image.float(), ids)
        got = m.forward(image, ids)
        assert [t.dtype for t in got] == [dtype, dtype]
        eps = torch.finfo(dtype).eps
        for g_, w in zip(got, want):
            torch.testing.assert_close(g_.float(), w, rtol=eps, atol=eps * float(w.abs().max()), msg=f"step {step}")
    assert model.total.abs().max() == 0  # export left the user's model as it was


def test_half_weights_cast_in_forward_stay_half():
    """A model that only moves and casts half tensors (float16 weights widened in forward) keeps
    them float16 in the file: nothing computes in half."""
    class CastWeights(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("w", torch.randn(64, 64).half())

        def forward(self, x):
            return x @ self.w.float().t()

    program = pocket.export(CastWeights(), (torch.randn(2, 64),))
    assert program.summary["constant_bytes"] < 64 * 64 * 4 - 1024, program.summary["constant_bytes"]


class HalfText(torch.nn.Module):
    """Embedding, RMSNorm (its weight times the activations) and linear."""

    def __init__(self):
        super().__init__()
        self.emb, self.fc = torch.nn.Embedding(50, 32), torch.nn.Linear(32, 8)
        self.norm = torch.nn.Parameter(torch.rand(32) + 0.5)

    def forward(self, ids):
        x = self.emb(ids)
        return self.fc(self.norm * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)))


class HalfMlp(torch.nn.Module):
    """Quantized linears that read the method's half input itself."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(64, 64), torch.nn.Linear(64, 32)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("quantize", ["int8w", "8da4w"])
@pytest.mark.parametrize("make", [HalfText, HalfMlp])
def test_quantized_half_model_computes_in_float32(dtype, quantize, make):
    """Quantized layers compute in float32 whatever the model's dtype and return its dtype, as
    the layers they replace do. Their kernels read float32 activations, and the norm multiplies
    its half weight by float32 ones, so the method computes in float32 (a half input widened
    where it enters) and rounds its output to half. Against its float32 copy's program, up to
    one rounding to half."""
    model = make().eval().to(dtype)
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 50, (2, 5), generator=g) if make is HalfText else torch.randn(2, 64, generator=g).to(dtype)
    half = pocket.Module.from_bytes(pocket.export(copy.deepcopy(model), (x,), quantize=quantize).data)
    full = pocket.Module.from_bytes(pocket.export(copy.deepcopy(model).float(), (x.float() if make is HalfMlp else x,),
                                                  quantize=quantize).data)
    got, want = half.forward(x), full.forward(x.float() if make is HalfMlp else x)
    assert got.dtype == dtype == model(x).dtype
    eps = torch.finfo(dtype).eps
    torch.testing.assert_close(got.float(), want, rtol=eps, atol=eps * float(want.abs().max()))
