"""Quantized export: the runtime matches the same quantized model run eagerly, files shrink,
and bad settings are clear errors or warnings."""

import copy
import importlib
import warnings

import pytest
import torch

import pocket
from examples import models
from pocket.exporter import ExportError, QuantConfig
from pocket.exporter.quant.config import resolve
from pocket.exporter.quant.formats import WeightFormat, dequantize, quantize
from pocket.exporter.quant.transform import QuantizationWarning, quantize_modules
from pocket.llm.models import LlmConfig, Transformer, export_llm
from random_models import tiny_llm


@pytest.mark.parametrize("scheme,group", [("8da4w", 32), ("8da4w", 64), ("int8w", None)])
def test_mlp_matches_its_eager_quantized_model(scheme, group):
    model = models.MLP((64, 128, 64, 10)).eval()
    x = torch.randn(16, 64)
    program = pocket.export(model, (x,), quantize=scheme, group_size=group)
    qmodel, report = quantize_modules(model, resolve(scheme, group))
    assert report["linear"] == 3
    with torch.no_grad():
        want = qmodel(x)
    torch.testing.assert_close(pocket.Module.from_bytes(program.data).forward(x), want, rtol=1e-5, atol=1e-5)
    assert "quantization" in pocket.Module.from_bytes(program.data).metadata


def test_asymmetric_and_block32_configs():
    model, (x,) = models.mlp()
    for config in (QuantConfig("asym4", 4, 32, False, "fp32", None), QuantConfig("q8b", 8, 32, True, "int8_block32", None)):
        program = pocket.export(model, (x,), quantize=config)
        with torch.no_grad():
            want = quantize_modules(model, config)[0](x)
        torch.testing.assert_close(pocket.Module.from_bytes(program.data).forward(x), want, rtol=1e-5, atol=1e-5)


def greedy(module, prompt, n):
    module.reset_buffers()
    logits = module.run("prefill", torch.tensor([prompt]), torch.tensor([0]))
    out = []
    for i in range(n):
        out.append(int(logits.argmax()))
        logits = module.run("decode", torch.tensor([[out[-1]]]), torch.tensor([len(prompt) + i]))
    return out


def test_quantized_llm_generates_what_the_eager_quantized_model_does():
    model = tiny_llm()
    program = export_llm(model, quantize="8da4w")
    qmodel = quantize_modules(model, resolve("8da4w"))[0]
    prompt = [5, 17, 42, 7, 1]
    want = qmodel.generate_greedy(prompt, 32)
    assert greedy(pocket.Module.from_bytes(program.data), prompt, 32) == want
    assert len(set(want)) >= 3


def ops_of(program, method):
    return set(program.summary["methods"][method]["ops"])


@pytest.mark.parametrize("tied", [False, True])
def test_8da4w_weights_are_packed_once(tied):
    """Every 4-bit int8-activation weight is stored in the kernels' layout: a tied embedding
    reads the same packed table (embedding_q_packed), and the file holds no unpacked copy."""
    c = LlmConfig(vocab_size=96, dim=64, n_layers=2, n_heads=4, n_kv_heads=2, hidden_dim=128, head_dim=16,
                  tie_embeddings=tied)
    torch.manual_seed(0)
    model = Transformer(c, 64).eval()
    program = export_llm(model, quantize="8da4w")
    for method in ("prefill", "decode"):
        ops = ops_of(program, method)
        assert "pocket::linear_q_packed" in ops and "pocket::linear_q" not in ops, ops
        assert ("pocket::embedding_q_packed" in ops) == tied and ("pocket::embedding_q" in ops) != tied, ops
    # 4-bit weights (half a byte each) + one float32 scale per 32: the 4-bit embedding once
    weights = sum(p.numel() for n, p in model.named_parameters() if "norm" not in n and p.dim() == 2)
    assert program.summary["constant_bytes"] <= weights * (0.5 + 4 / 32) * 1.02 + 64 * 1024
    qmodel = quantize_modules(model, resolve("8da4w"))[0]
    prompt = [5, 17, 42, 7, 1]
    assert greedy(pocket.Module.from_bytes(program.data), prompt, 24) == qmodel.generate_greedy(prompt, 24)


def test_weights_the_packed_layout_cannot_take_stay_linear_q():
    """48 outputs are packed; 24 (not a multiple of 16) and fp32 activations stay linear_q."""
    model = models.MLP((64, 48, 24)).eval()
    x = torch.randn(3, 64)
    for activations, want_ops in (("int8", {"pocket::linear_q_packed", "pocket::linear_q"}),
                                  ("fp32", {"pocket::linear_q"})):
        config = QuantConfig("q", 4, 16, True, activations, None)
        program = pocket.export(model, (x,), quantize=config)
        assert ops_of(program, "forward") & {"pocket::linear_q", "pocket::linear_q_packed"} == want_ops
        with torch.no_grad():
            want = quantize_modules(model, config)[0](x)
        torch.testing.assert_close(pocket.Module.from_bytes(program.data).forward(x), want, rtol=1e-5, atol=1e-5)


def test_8da4w_file_is_at_most_a_fifth_of_fp32():
    """stories110M-shaped: dim 768, 12 layers, 12 heads, vocab 32000."""
    c = LlmConfig(vocab_size=32000, dim=768, n_layers=12, n_heads=12, n_kv_heads=12, hidden_dim=2048, head_dim=64)
    torch.manual_seed(0)
    model = Transformer(c, 128).eval()
    fp32 = sum(p.numel() * 4 for p in model.parameters())  # the constants of an fp32 export
    q = export_llm(model, quantize="8da4w")
    assert len(q) <= fp32 / 5, f"8da4w {len(q) / 2**20:.1f} MiB vs fp32 weights {fp32 / 2**20:.1f} MiB"


def test_int8_static_cnn_agrees_with_fp32():
    """MobileNetV2-style, random-but-fixed inputs: top-1 agreement of the int8 program with
    the fp32 model (reported; the bound is loose because random weights give flat logits)."""
    model, (x,) = models.mobilenet_v2()
    g = torch.Generator().manual_seed(0)
    calib = [(torch.randn(1, 3, 224, 224, generator=g),) for _ in range(8)]
    tests = [torch.randn(1, 3, 224, 224, generator=g) for _ in range(16)]
    program = pocket.export(model, (x,), quantize="int8", calibration=calib)
    ops = program.summary["methods"]["forward"]["ops"]
    # every convolution (depthwise too) runs int8 channels-last
    assert "pocket::conv2d_q8_channels_last" in ops and not {"aten::convolution", "pocket::conv2d_q8_packed"} & set(ops)
    assert "aten::hardtanh" not in ops, "every ReLU6 follows a convolution: all are fused"
    m = pocket.Module.from_bytes(program.data)
    with torch.no_grad():
        agree = sum(int(m.forward(t).argmax()) == int(model(t).argmax()) for t in tests) / len(tests)
    print(f"\nMobileNetV2-style int8 static: top-1 agreement with fp32 = {agree:.2f} on {len(tests)} inputs")
    assert agree >= 0.5



def test_int8_static_subnormal_activations_export_and_run():
    """A convolution whose input is subnormal at calibration (a randomly initialized model's
    collapsed layer): its activation scale cannot be 0 in float32, and the program runs."""
    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.Conv2d(8, 4, 3, padding=1)

        def forward(self, x):
            return self.b(self.a(x) * 1e-44)

    model, g = Tiny().eval(), torch.Generator().manual_seed(0)
    x = torch.randn(1, 3, 8, 8, generator=g)
    program, m = _int8(model, x, [(torch.randn(1, 3, 8, 8, generator=g),) for _ in range(2)])
    assert "pocket::conv2d_q8_channels_last" in ops_of(program, "forward")
    with torch.no_grad():
        want = model(x)
    torch.testing.assert_close(torch.as_tensor(m.forward(x)), want, rtol=0, atol=1e-6)  # b's bias alone

class _ConvNet(torch.nn.Module):
    """conv -> ReLU -> depthwise -> ReLU6 -> pointwise -> clamp, then a convolution as the
    output (nothing to fuse) and one whose output is used by an activation and an add (not
    fused)."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, 2, 1)
        self.dw = torch.nn.Conv2d(8, 8, 3, 1, 1, groups=8)
        self.pw = torch.nn.Conv2d(8, 20, 1)
        self.head = torch.nn.Conv2d(20, 5, 3)
        self.side = torch.nn.Conv2d(20, 4, 1)

    def forward(self, x):
        y = torch.relu(self.stem(x))
        y = torch.nn.functional.relu6(self.dw(y))
        y = torch.clamp(self.pw(y), -1.0, 2.0)
        side = self.side(y)
        return self.head(y), torch.relu(side) + side


def _int8(model, x, calib):
    program = pocket.export(model, (x,), quantize="int8", calibration=calib)
    return program, pocket.Module.from_bytes(program.data)


def test_int8_fuses_activations_into_convolutions_exactly(monkeypatch):
    """The fused clamp gives the same floats as the activation op after the unfused
    convolution (both clamp float32 values), and the program keeps no activation ops."""
    from pocket.exporter.quant import static_int8

    torch.manual_seed(0)
    model, x = _ConvNet().eval(), torch.randn(1, 3, 17, 19)
    calib = [(torch.randn(1, 3, 17, 19),) for _ in range(4)]
    fused, m = _int8(model, x, calib)
    ops = fused.summary["methods"]["forward"]["ops"]
    assert set(ops) & {"aten::relu", "aten::hardtanh", "aten::clamp"} == {"aten::relu"}, ops  # side's
    assert "pocket::conv2d_q8_channels_last" in ops and "aten::convolution" not in ops
    monkeypatch.setattr(static_int8, "activation_bounds", lambda conv: (conv, (None, None)))
    # the activations as float32 ops, not as int8 tables between the convolutions
    monkeypatch.setattr(importlib.import_module("pocket.exporter.passes.channels_last"), "_int8_activations",
                        lambda mg: 0)
    plain, m_plain = _int8(model, x, calib)
    assert {"aten::hardtanh", "aten::clamp"} <= set(plain.summary["methods"]["forward"]["ops"])
    for i, t in enumerate([x] + [torch.randn(1, 3, 17, 19) * (3 if i % 2 else 1) for i in range(1, 5)]):
        got, want = m.forward(t), m_plain.forward(t)
        for g, w in zip(got, want):
            assert torch.equal(torch.as_tensor(g), torch.as_tensor(w))
        if i % 2:
            continue  # x 3 saturates past the calibrated range: only the exact comparison
        with torch.no_grad():
            eager = model(t)
        for g, e in zip(got, eager):  # int8 against fp32: loose, scaled to the output's range
            assert (torch.as_tensor(g) - e).abs().max() <= 0.1 * e.abs().max() + 0.02


class _Conv1dNet(torch.nn.Module):
    """Conv1d layers (audio-style: strided, depthwise dilated, pointwise), or the same as Conv2d
    layers of height 1 with the same weights (two_d)."""

    def __init__(self, two_d=False, source=None):
        super().__init__()
        conv = torch.nn.Conv2d if two_d else torch.nn.Conv1d
        geometry = [(8, 16, 5, 2, 2, 1, 1), (16, 16, 3, 1, 2, 2, 16), (16, 12, 1, 1, 0, 1, 1)]
        self.convs = torch.nn.ModuleList()
        for cin, cout, k, stride, pad, dil, groups in geometry:
            if two_d:
                self.convs.append(conv(cin, cout, (1, k), (1, stride), (0, pad), (1, dil), groups))
            else:
                self.convs.append(conv(cin, cout, k, stride, pad, dil, groups))
        self.two_d = two_d
        if source is not None:
            with torch.no_grad():
                for mine, theirs in zip(self.convs, source.convs):
                    mine.weight.copy_(theirs.weight.unsqueeze(2))
                    mine.bias.copy_(theirs.bias)

    def forward(self, x):
        x = x.unsqueeze(2) if self.two_d else x
        x = torch.nn.functional.relu6(self.convs[1](torch.relu(self.convs[0](x))))
        x = self.convs[2](x)
        return x.squeeze(2) if self.two_d else x


def test_int8_conv1d_is_the_conv2d_of_height_one():
    """A 1-d convolution is quantized as the 2-d one of height 1 with the same weights: the same
    int8 kernels, bit for bit; and no squeeze / unsqueeze between consecutive ones."""
    torch.manual_seed(0)
    model = _Conv1dNet().eval()
    model2 = _Conv1dNet(two_d=True, source=model).eval()
    x = torch.randn(2, 8, 50)
    calib = [(torch.randn(2, 8, 50),) for _ in range(4)]
    program, m = _int8(model, x, calib)
    program2, m2 = _int8(model2, x, calib)
    ops = program.summary["methods"]["forward"]["ops"]
    assert "pocket::conv2d_q8_channels_last" in ops and "aten::convolution" not in ops, ops
    # unsqueeze, permute to channels-last, the 3 convolutions, permute back, squeeze
    assert program.summary["methods"]["forward"]["instructions"] == 7
    for t in (x, torch.randn(2, 8, 50)):
        got = torch.as_tensor(m.forward(t))
        assert torch.equal(got, torch.as_tensor(m2.forward(t)))
        with torch.no_grad():
            eager = model(t)
        assert (got - eager).abs().max() <= 0.1 * eager.abs().max() + 0.02  # int8 against fp32


def _weights_as_stored(model, config):
    """A copy of `model` whose Linear, attention projection and embedding weights are the ones
    the scheme stores, dequantized: with fp32 activations (int8w) what the program computes."""
    model = copy.deepcopy(model)

    def as_stored(w, fmt):
        w.copy_(dequantize(*quantize(w, fmt), fmt))

    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.Linear):
                as_stored(m.weight, config.linear_format(m.in_features))
            elif isinstance(m, torch.nn.MultiheadAttention):
                as_stored(m.in_proj_weight, config.linear_format(m.embed_dim))
            elif isinstance(m, torch.nn.RNNBase):
                for name, w in m.named_parameters():
                    if name.startswith("weight_"):
                        as_stored(w, config.linear_format(w.shape[1]))
            elif isinstance(m, torch.nn.Embedding):
                as_stored(m.weight, WeightFormat(config.embedding_bits, config.embedding_group_size, True))
    return model


@pytest.mark.parametrize("scheme", ["8da4w", "int8w"])
def test_transformer_encoder_is_quantized_attention_included(scheme):
    """nn.MultiheadAttention computes with its projection weights itself: the module swap leaves
    them (out_proj too) and the exported graph's linears of them are quantized instead;
    nn.TransformerEncoderLayer reads its feed-forward layers' weights for its fast-path checks,
    which the swapped layers answer with their dequantized weights."""
    model = models.Encoder().eval()
    tokens = torch.randint(0, 100, (2, 16), generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", QuantizationWarning)  # nothing left in fp32
        program = pocket.export(model, (tokens,), quantize=scheme)
    ops = ops_of(program, "forward")
    assert "aten::linear" not in ops and "pocket::linear_q" in ops, ops
    assert program.summary["constant_bytes"] < 0.4 * pocket.export(model, (tokens,)).summary["constant_bytes"]
    got = torch.as_tensor(pocket.Module.from_bytes(program.data).forward(tokens))
    with torch.no_grad():
        eager = model(tokens)
        if scheme == "int8w":  # fp32 activations: the stored weights give the same result
            torch.testing.assert_close(got, _weights_as_stored(model, resolve(scheme))(tokens), rtol=1e-5, atol=1e-5)
    assert (got - eager).abs().max() <= 0.25 * eager.abs().max()  # int4 weights, int8 activations


def test_recurrent_layers_are_quantized():
    """nn.LSTM computes with its own weight tensors (no Linear to swap); its exported graph's
    linears of them are quantized."""
    class Tagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn, self.head = torch.nn.LSTM(16, 32, batch_first=True), torch.nn.Linear(32, 5)

        def forward(self, x):
            return self.head(self.rnn(x)[0])

    model, x = Tagger().eval(), torch.randn(2, 7, 16)
    program = pocket.export(model, (x,), quantize="int8w")
    assert "aten::linear" not in ops_of(program, "forward")
    assert program.summary["constant_bytes"] < 0.4 * pocket.export(model, (x,)).summary["constant_bytes"]
    with torch.no_grad():
        want = _weights_as_stored(model, resolve("int8w"))(x)
    torch.testing.assert_close(pocket.Module.from_bytes(program.data).forward(x), want, rtol=1e-5, atol=1e-5)


def test_weight_read_directly_is_the_dequantized_weight():
    class ReadsWeight(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.out = torch.nn.Linear(32, 32), torch.nn.Linear(32, 4)

        def forward(self, x):
            return self.out(torch.nn.functional.linear(x, self.fc.weight))  # not self.fc(x)

    model, x = ReadsWeight().eval(), torch.randn(3, 32)
    program = pocket.export(model, (x,), quantize="int8w")
    qmodel = quantize_modules(model, resolve("int8w"))[0]
    assert not torch.equal(qmodel.fc.weight, model.fc.weight)  # what the layer computes with
    torch.testing.assert_close(qmodel.fc.weight, model.fc.weight, rtol=0, atol=float(model.fc.weight.abs().max()) / 127)
    with torch.no_grad():
        want = qmodel(x)
    torch.testing.assert_close(pocket.Module.from_bytes(program.data).forward(x), want, rtol=1e-5, atol=1e-5)
    assert "pocket::linear_q" in ops_of(program, "forward")


def test_matrix_products_by_constant_weights_are_quantized():
    """x @ w.t() and torch.matmul(x, w) on parameters export as aten.mm (3-d x: between views)
    and addmm; each is quantized as the linear it is, its weight being the constant operand
    transposed."""
    class Products(torch.nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(0)
            self.w1 = torch.nn.Parameter(torch.randn(64, 32, generator=g))  # (out, in)
            self.w2 = torch.nn.Parameter(torch.randn(64, 48, generator=g))  # (in, out)
            self.b1, self.b2 = torch.nn.Parameter(torch.randn(48, generator=g)), torch.nn.Parameter(torch.randn(8))
            self.w3 = torch.nn.Parameter(torch.randn(48, 8, generator=g))

        def forward(self, x):
            h = torch.relu(x @ self.w1.t())
            h = torch.matmul(h, self.w2) + self.b1
            return torch.addmm(self.b2, h.reshape(-1, 48), self.w3)

    model = Products().eval()
    for x in (torch.randn(4, 32), torch.randn(2, 5, 32)):
        program = pocket.export(model, (x,), quantize="int8w")
        ops = ops_of(program, "forward")
        assert "aten::mm" not in ops and "aten::addmm" not in ops and "pocket::linear_q" in ops, ops
        assert program.summary["constant_bytes"] < 0.4 * pocket.export(model, (x,)).summary["constant_bytes"]
        config = resolve("int8w")
        linear = {"w1": model.w1, "w2": model.w2.t(), "w3": model.w3.t()}  # (out, in) weights
        stored = {k: dequantize(*quantize(w.detach().contiguous(), config.linear_format(w.shape[1])),
                                config.linear_format(w.shape[1])) for k, w in linear.items()}
        with torch.no_grad():
            h = torch.relu(x @ stored["w1"].t())
            want = torch.addmm(model.b2, (h @ stored["w2"].t() + model.b1).reshape(-1, 48), stored["w3"].t())
        got = torch.as_tensor(pocket.Module.from_bytes(program.data).forward(x))  # fp32 sums in another order:
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5 * float(want.abs().max()))  # 1e-5 of the scale


def test_weights_computed_from_constants_are_quantized():
    """A weight the model computes from constants alone in forward (here float16 parameters
    cast to float32, which constant folding leaves because the result is larger) is evaluated
    at export and quantized like a constant one, in a linear and in a matrix product."""
    class HalfWeights(torch.nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(0)
            self.w1 = torch.nn.Parameter(torch.randn(64, 64, generator=g).half(), requires_grad=False)
            self.w2 = torch.nn.Parameter(torch.randn(48, 64, generator=g).half(), requires_grad=False)

        def forward(self, x):
            return torch.nn.functional.linear(x, self.w1.float()) @ self.w2.float().t()

    model, x = HalfWeights().eval(), torch.randn(3, 64)
    program = pocket.export(model, (x,), quantize="int8w")
    assert set(ops_of(program, "forward")) == {"pocket::linear_q"}, ops_of(program, "forward")
    config = resolve("int8w")
    w1, w2 = (dequantize(*quantize(w.float(), config.linear_format(64)), config.linear_format(64))
              for w in (model.w1, model.w2))
    want = x @ w1.t() @ w2.t()
    got = torch.as_tensor(pocket.Module.from_bytes(program.data).forward(x))
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5 * float(want.abs().max()))


def test_weight_computed_by_a_long_chain_of_constant_ops_is_quantized():
    """A weight computed from a float16 parameter by a chain of hundreds of ops (left unfolded:
    the cast makes the result larger than the parameter) is evaluated at export without
    recursing once per op (which reached Python's recursion limit), and quantized."""
    class ChainedWeight(torch.nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(0)
            self.w = torch.nn.Parameter(torch.randn(32, 64, generator=g).half(), requires_grad=False)

        def forward(self, x):
            w = self.w.float()
            for i in range(600):
                w = w * 1.001 if i % 2 else w - 0.001
            return torch.nn.functional.linear(x, w)

    model, x = ChainedWeight().eval(), torch.randn(3, 64)
    program = pocket.export(model, (x,), quantize="int8w")
    assert set(ops_of(program, "forward")) == {"pocket::linear_q"}, ops_of(program, "forward")
    with torch.no_grad():
        w = model.w.float()
        for i in range(600):
            w = w * 1.001 if i % 2 else w - 0.001
    config = resolve("int8w")
    want = x @ dequantize(*quantize(w, config.linear_format(64)), config.linear_format(64)).t()
    got = torch.as_tensor(pocket.Module.from_bytes(program.data).forward(x))
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5 * float(want.abs().max()))


def test_matrix_product_of_activations_deep_in_the_graph_exports():
    """A matrix product whose right operand is an activation computed by a long chain of ops is
    not a linear by a constant: the search for constant weights must not walk that chain
    recursively (it once raised RecursionError at a few hundred ops) and leaves it an aten.mm."""
    class Deep(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(16, 16)

        def forward(self, x):
            h = x
            for _ in range(300):
                h = torch.tanh(h) + 1
            return self.fc(x @ h.t())

    model, x = Deep().eval(), torch.randn(16, 16)
    program = pocket.export(model, (x,), quantize="int8w")
    ops = ops_of(program, "forward")
    assert "aten::mm" in ops and "pocket::linear_q" in ops, ops
    with torch.no_grad():
        want = model(x)
    got = torch.as_tensor(pocket.Module.from_bytes(program.data).forward(x))
    assert (got - want).abs().max() <= 0.05 * want.abs().max()  # fc in 8 bits



class OffsetPositions(torch.nn.Embedding):
    """A learned position table whose row for position p is p + 2 (BART's and OPT's)."""

    def forward(self, positions):
        return super().forward(positions + 2)


class HalfLinear(torch.nn.Linear):
    def forward(self, x):
        return super().forward(x) * 0.5


class OwnForwards(torch.nn.Module):
    """Layers of subclasses with a forward of their own, and a table whose length is read
    (Whisper's encoder looks up every row of its position table: arange(num_embeddings))."""

    def __init__(self):
        super().__init__()
        self.tok, self.pos, self.table = torch.nn.Embedding(64, 32), OffsetPositions(18, 32), torch.nn.Embedding(16, 32)
        self.fc, self.out = HalfLinear(32, 32), torch.nn.Linear(32, 8)

    def forward(self, ids):
        t = ids.shape[1]
        h = self.tok(ids) + self.pos(torch.arange(t)) + self.table(torch.arange(self.table.num_embeddings))[:t]
        return self.out(torch.relu(self.fc(h)))


@pytest.mark.parametrize("scheme", ["8da4w", "int8w"])
def test_layers_with_their_own_forward_keep_it(scheme):
    """A stand-in computes what nn.Embedding / nn.Linear compute, so it must not replace a
    subclass's own forward: the graph's lookups and linears of such a layer's weight are
    quantized instead. A swapped Embedding still answers num_embeddings."""
    model, ids = OwnForwards().eval(), torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", QuantizationWarning)  # nothing left in fp32
        program = pocket.export(model, (ids,), quantize=scheme)
    ops = ops_of(program, "forward")
    assert not {"aten::linear", "aten::embedding"} & ops and "pocket::embedding_q" in ops, ops
    table_bytes = (64 + 18 + 16) * 32 * (0.5 if scheme == "8da4w" else 1)
    assert program.summary["constant_bytes"] < 1.5 * table_bytes + 2 * 32 * 32 + 4096  # no fp32 table
    got = torch.as_tensor(pocket.Module.from_bytes(program.data).forward(ids))
    with torch.no_grad():
        eager = model(ids)
        if scheme == "int8w":  # fp32 activations: the stored weights give the same result
            torch.testing.assert_close(got, _weights_as_stored(model, resolve(scheme))(ids), rtol=1e-5, atol=1e-5)
    assert (got - eager).abs().max() <= (0.05 if scheme == "int8w" else 0.25) * eager.abs().max()  # 8- / 4-bit


@pytest.mark.parametrize("name", ["opt", "whisper_encoder"])
def test_transformers_models_with_their_own_embeddings_quantize(name):
    """OPT's learned positions take an attention mask and an offset; Whisper's encoder reads its
    position table's length. Both exported with int8 weights, against the fp32 eager model; the
    file holds no fp32 table."""
    import transformers

    torch.manual_seed(0)
    if name == "opt":
        config = transformers.OPTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, ffn_dim=128,
                                        word_embed_proj_dim=64, vocab_size=100)
        model, inputs = transformers.OPTModel(config).eval(), (torch.randint(0, 100, (2, 7)),)
    else:
        config = transformers.WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=4, decoder_layers=1,
                                            decoder_attention_heads=4, decoder_ffn_dim=128, encoder_ffn_dim=128,
                                            num_mel_bins=16, max_source_positions=30)
        model, inputs = transformers.WhisperModel(config).encoder.eval(), (torch.randn(1, 16, 60),)

    class Hidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, x):
            return self.m(x).last_hidden_state

    with warnings.catch_warnings():
        warnings.simplefilter("error", QuantizationWarning)  # nothing left in fp32
        program = pocket.export(Hidden().eval(), inputs, quantize="int8w")
    assert "pocket::linear_q" in ops_of(program, "forward") and "aten::embedding" not in ops_of(program, "forward")
    got = torch.as_tensor(pocket.Module.from_bytes(program.data).forward(*inputs))
    with torch.no_grad():
        eager = model(*inputs).last_hidden_state
    assert (got - eager).abs().max() <= 0.05 * eager.abs().max()  # 8-bit weights

@pytest.mark.parametrize("tie", ["matmul", "linear"])
@pytest.mark.parametrize("scheme", ["8da4w", "int8w"])
def test_embedding_read_as_output_layer(scheme, tie):
    """An output layer tied by hand to the embedding table (x @ emb.weight.t(), or
    F.linear(x, emb.weight)) reads the quantized Embedding's .weight: the table it looks rows up
    in, dequantized. The program computes it as a linear_q of the stored table itself: no fp32
    table rebuilt per forward, no second copy of the table in the file."""
    class TiedLM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.fc = torch.nn.Embedding(256, 64), torch.nn.Linear(64, 64)

        def forward(self, ids):
            h = torch.relu(self.fc(self.emb(ids)))
            return h @ self.emb.weight.t() if tie == "matmul" else torch.nn.functional.linear(h, self.emb.weight)

    model, ids = TiedLM().eval(), torch.randint(0, 256, (2, 5), generator=torch.Generator().manual_seed(0))
    program = pocket.export(model, (ids,), quantize=scheme)
    ops = ops_of(program, "forward")
    assert {"pocket::embedding_q", "pocket::linear_q"} <= set(ops) or "pocket::linear_q_packed" in ops, ops
    assert not {"aten::mm", "aten::linear", "aten::arange.start_step"} & set(ops), ops
    table_bytes = 256 * 64 * (0.5 if scheme == "8da4w" else 1)
    assert program.summary["constant_bytes"] < 1.5 * table_bytes + 64 * 64 * 4 + 4096  # the table once, fc in fp32
    got = torch.as_tensor(pocket.Module.from_bytes(program.data).forward(ids))
    with torch.no_grad():
        stored = _weights_as_stored(model, resolve(scheme))  # (copies: model keeps its weights)
        if scheme == "int8w":  # fp32 activations: the stored weights give the same result
            torch.testing.assert_close(got, stored(ids), rtol=1e-5, atol=1e-5)
        eager = model(ids)
    assert (got - eager).abs().max() <= (0.05 if scheme == "int8w" else 0.25) * eager.abs().max()  # 8- / 4-bit


def test_unknown_scheme_is_an_error():
    model, (x,) = models.mlp()
    with pytest.raises(ExportError, match="unknown quantization scheme 'int3'"):
        pocket.export(model, (x,), quantize="int3")


def test_unsupported_group_size_is_an_error():
    model, (x,) = models.mlp()
    with pytest.raises(ExportError, match="group size 48 is not supported"):
        pocket.export(model, (x,), quantize="8da4w", group_size=48)


def test_group_size_that_does_not_divide_warns_and_keeps_fp32():
    model = torch.nn.Sequential(torch.nn.Linear(48, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4)).eval()
    with pytest.warns(QuantizationWarning, match=r"left in fp32: 0 \(in_features 48 % group 32\)"):
        program = pocket.export(model, (torch.randn(2, 48),), quantize="8da4w")
    assert "aten::linear" in program.summary["methods"]["forward"]["ops"]


def test_model_without_linear_layers_warns():
    with pytest.warns(QuantizationWarning, match=r"'8da4w' found nothing it quantizes \(Linear or Embedding "
                      r"layers, linear weights\); the model stays fp32"):
        pocket.export(torch.nn.ReLU(), (torch.randn(3),), quantize="8da4w")


def test_static_int8_without_calibration_is_an_error():
    model, (x,) = models.resnet()
    with pytest.raises(ExportError, match="needs calibration data"):
        pocket.export(model, (x,), quantize="int8")


@pytest.mark.parametrize("calibration,message", [
    (torch.randn(1, 3, 64, 64), r"calibration must be a list of samples \(each a tuple of inputs\), not a Tensor"),
    ([(torch.randn(1, 3, 64, 64),), (torch.randint(0, 5, (1, 3, 64, 64)),)],
     r"calibration sample 1, input 0: int64\[1, 3, 64, 64\], but the model takes float32 with 4 dims"),
    ([(torch.randn(3, 64, 64),)], r"sample 0, input 0: float32\[3, 64, 64\], but the model takes float32 with 4 dims"),
    ([("abc",)], r"calibration sample 0, input 0: not a tensor \(str\)"),
    ([(torch.randn(1, 4, 64, 64),)], r"calibration sample 0 does not run through the model: .*4 channels"),
    ([(torch.randn(1, 3, 64, 64), torch.randn(1))], r"calibration sample 0 has 2 inputs, the model takes 1"),
])
def test_bad_calibration_data_is_a_clear_error(calibration, message):
    model, (x,) = models.resnet()
    with pytest.raises(ExportError, match=message):
        pocket.export(model, (x,), quantize="int8", calibration=calibration)


def test_inspect_shows_quantization(tmp_path):
    from pocket.describe import describe, format_description

    model, (x,) = models.mlp()
    pocket.export(model, (x,), quantize="8da4w").save(tmp_path / "q.pocket")
    text = format_description(describe(str(tmp_path / "q.pocket")))
    assert "quantization = 8da4w: linear int4 sym group 32, int8 activations" in text


def conv_q8_weights(data: bytes, replace=None):
    """The conv2d_q8_channels_last weights of a program as they are in the file, and the program
    with them turned into method inputs after the image (replace=None), or with each weight's
    bytes replaced by replace[i] (a constant still)."""
    import numpy as np

    from program_tools import pack, unpack

    program, segments = unpack(data)
    segments = [bytearray(s) for s in segments]
    method = program.methods[0]
    names = [op.name.decode() for op in method.operators]
    weights = []
    for step in method.steps:
        call = step.instruction
        if names[call.op] == "pocket::conv2d_q8_channels_last":
            index = int(call.args[1])
            t = method.values[index].kind
            raw = bytes(segments[t.index][t.offset:t.offset + t.nbytes])
            weights.append(np.frombuffer(raw, np.int8).reshape([int(n) for n in t.sizes]).copy())
            if replace is not None:
                segments[t.index][t.offset:t.offset + t.nbytes] = replace[len(weights) - 1].tobytes()
                continue
            t.location, t.index, t.offset = 0, 0, 0  # fb Location.None: bound by set_input
            method.inputs = list(method.inputs) + [index]
    return weights, pack(program, [bytes(s) for s in segments])


def test_conv_q8_keeps_per_channel_sums_only_for_constant_weights():
    """The int8 convolutions keep what they derive from their weight (the weight's sums per
    channel, the depthwise weight's quads) with the instruction after the first call, which is
    only right while the weight cannot change: with the weights as method inputs, each call
    must follow the weights it is given (here against the program holding those weights as
    constants)."""
    import numpy as np

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(8, 32, 1), torch.nn.ReLU6(),
                                torch.nn.Conv2d(32, 32, 3, padding=1, groups=32), torch.nn.ReLU6(),
                                torch.nn.Conv2d(32, 8, 1)).eval()
    x = torch.randn(1, 8, 10, 10)
    data = pocket.export(model, (x,), quantize="int8", calibration=[(torch.randn(1, 8, 10, 10),)]).data
    weights, variable = conv_q8_weights(data)
    assert len(weights) == 3
    rng = np.random.default_rng(0)
    others = [rng.integers(-127, 128, w.shape, dtype=np.int8) for w in weights]
    _, other_data = conv_q8_weights(data, replace=others)
    want = {}
    for name, program in (("file's", data), ("other", other_data)):
        constant = pocket.Module.from_bytes(program)
        want[name] = constant.forward(x)  # derives and keeps; the next calls read what it kept
        for threads in (2, 1):
            constant.set_num_threads(threads)
            torch.testing.assert_close(constant.forward(x), want[name], rtol=0, atol=0)
    assert not torch.equal(want["file's"], want["other"])
    module = pocket.Module.from_bytes(variable)
    inputs = [torch.from_numpy(w.copy()) for w in weights]  # the same memory each call, new values
    for threads in (1, 2):
        module.set_num_threads(threads)
        for name, ws in (("file's", weights), ("other", others), ("file's", weights)):
            for t, w in zip(inputs, ws):
                t.copy_(torch.from_numpy(w))
            got = module.forward(x, *inputs)
            torch.testing.assert_close(got, want[name], rtol=0, atol=0, msg=f"{threads} threads, the {name} weights")
