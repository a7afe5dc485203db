"""export(repeated=...): a stack of layers traced once per kind gives, byte for byte, the
program a trace of every layer gives; stacks it cannot repeat are traced layer by layer."""

import importlib
import logging
import os
import sys

import pytest
import torch
from torch import nn

import pocket
from pocket.exporter import ExportError
from pocket.llm.models import LlmConfig, Transformer, export_llm

export_module = importlib.import_module("pocket.exporter.export")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "llm"))  # gguf_fixtures


def both(monkeypatch, caplog, make):
    """(program with repetition, program traced layer by layer, how many layers were traced)."""
    caplog.set_level(logging.INFO, logger="pocket")
    caplog.clear()
    fast = make()
    traced = [r.getMessage() for r in caplog.records if "tracing (" in r.getMessage()]
    with monkeypatch.context() as m:
        m.setattr(export_module, "plan_stack", lambda root, path: None)
        full = make()
    return fast, full, traced


def tiny_llm(n_layers=4, **config):
    torch.manual_seed(0)
    c = LlmConfig(vocab_size=96, dim=32, n_layers=n_layers, n_heads=4, n_kv_heads=2, hidden_dim=64,
                  head_dim=8, **config)
    model = Transformer(c, max_seq_len=48).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.3)
    return model


@pytest.mark.parametrize("variant", ["fp32", "8da4w", "int8w", "kv-fp16", "qwen3", "qwen2"])
def test_llm_stack_is_byte_identical(monkeypatch, caplog, variant):
    config = {"qwen3": {"qk_norm": True, "family": "qwen3"},
              "qwen2": {"attention_bias": True, "family": "qwen2"}}.get(variant, {})
    model = tiny_llm(**config)
    kwargs = {"8da4w": {"quantize": "8da4w", "group_size": 32}, "int8w": {"quantize": "int8w", "group_size": 32},
              "kv-fp16": {"kv_cache": "fp16"}}.get(variant, {})
    fast, full, traced = both(monkeypatch, caplog, lambda: export_llm(model, **kwargs).data)
    assert traced and all("(2 of 4 layers" in line for line in traced), traced
    assert fast == full


def test_layers_of_two_kinds_are_each_traced_once(monkeypatch, caplog):
    """Layer 2 has a wider MLP and layer 4 another norm epsilon: three kinds after layer 0."""
    model = tiny_llm(n_layers=6)
    wide = tiny_llm(n_layers=1)
    wide.config.hidden_dim = 80
    layers = model.model.layers
    layers[2].mlp = type(layers[2].mlp)(wide.config)
    layers[4].input_layernorm.eps = 1e-3
    fast, full, traced = both(monkeypatch, caplog, lambda: export_llm(model).data)
    assert traced and all("(4 of 6 layers" in line for line in traced), traced
    assert fast == full
    module = pocket.Module.from_bytes(fast)
    tokens, pos = torch.tensor([[3, 14, 15, 92, 65]]), torch.tensor([0])
    model.set_kv_cache_dtype(torch.float32)
    with torch.no_grad():
        want = model(tokens, pos)
    torch.testing.assert_close(module.run("prefill", tokens, pos), want, atol=1e-4, rtol=1e-4)


class Block(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.norm, self.fc = nn.LayerNorm(width), nn.Linear(width, width)
        self.register_buffer("seen", torch.zeros(()))

    def forward(self, x):
        self.seen.add_(x.mean())  # a mutated buffer per layer
        return x + torch.relu(self.fc(self.norm(x)))


class Net(nn.Module):
    def __init__(self, n=5, collect=False):
        super().__init__()
        self.inp, self.out = nn.Linear(8, 16), nn.Linear(16, 4)
        self.blocks = nn.ModuleList(Block() for _ in range(n))
        self.collect = collect

    def forward(self, x):
        x = self.inp(x)
        total = torch.zeros_like(x)
        for block in self.blocks:
            x = block(x)
            if self.collect:
                total = total + x
        return self.out(total if self.collect else x)


def export_net(model, repeated="blocks"):
    x = torch.randn(3, 8)
    batch = torch.export.Dim("batch", max=16)
    return pocket.export(model, (x,), dynamic_shapes=({0: batch},), repeated=repeated).data


def test_any_module_stack_with_mutated_buffers(monkeypatch, caplog):
    torch.manual_seed(1)
    model = Net().eval()
    fast, full, traced = both(monkeypatch, caplog, lambda: export_net(model))
    assert traced == ["method 'forward': tracing (2 of 5 layers, the rest repeated)"]
    assert fast == full
    x = torch.randn(7, 8)
    with torch.no_grad():
        want = Net.forward(model, x)
    torch.testing.assert_close(pocket.Module.from_bytes(fast).run("forward", x), want, atol=1e-5, rtol=1e-5)


def test_a_graph_that_is_not_a_chain_is_traced_layer_by_layer(monkeypatch, caplog):
    """Every layer's output also feeds a running sum: copying one layer would drop the sum's
    terms, so the export traces every layer."""
    model = Net(collect=True).eval()
    fast, full, _ = both(monkeypatch, caplog, lambda: export_net(model))
    assert any("do not form a stack" in r.getMessage() for r in caplog.records)
    assert fast == full


@pytest.mark.parametrize("change", ["hook", "shared weight", "layer index", "two layers"])
def test_layers_that_cannot_be_repeated_are_traced_one_by_one(monkeypatch, caplog, change):
    model = Net(n=2 if change == "two layers" else 5).eval()
    if change == "hook":
        model.blocks[3].register_forward_hook(lambda m, i, o: o * 2)
    elif change == "shared weight":
        model.blocks[3].fc.weight = model.blocks[1].fc.weight
    elif change == "layer index":
        model.blocks[3].index = object()  # an attribute the export cannot compare
    fast, full, traced = both(monkeypatch, caplog, lambda: export_net(model))
    assert not traced
    assert fast == full


@pytest.mark.parametrize("path, message", [
    ("layers", "has no submodule 'layers'"),
    ("out", "expected an nn.ModuleList, found Linear"),
])
def test_a_wrong_path_is_named(path, message):
    with pytest.raises(ExportError, match=message):
        export_net(Net(), repeated=path)


def test_repeated_needs_a_module():
    model = Net()
    with pytest.raises(ExportError, match="needs the method to be an nn.Module"):
        pocket.export(None, methods={"forward": (model.forward, (torch.randn(2, 8),))}, repeated="blocks")


def test_gguf_with_quant_types_mixed_per_layer(monkeypatch, caplog, tmp_path):
    """As in llama.cpp's Q4_K_M files, some layers keep a matrix in 8 bits: each kind of layer
    is traced once, and the program is the layer-by-layer one."""
    from gguf import GGMLQuantizationType as Q
    from gguf_fixtures import write_tiny_gguf
    from pocket.llm.models.gguf_model import load_gguf_model

    def quant(layer, part):
        return Q.Q8_0 if part == "ffn_down" and layer % 2 == 0 else Q.Q4_0

    write_tiny_gguf(tmp_path / "mixed.gguf", dim=64, n_layers=5, n_heads=2, vocab=32, quant=quant)
    model, _, _ = load_gguf_model(tmp_path / "mixed.gguf", 32, activations="int8")
    fast, full, traced = both(monkeypatch, caplog, lambda: export_llm(model).data)
    assert traced and all("(3 of 5 layers" in line for line in traced), traced  # 0; 1, 3; 2, 4
    assert fast == full


def test_cli_export_repeated(tmp_path):
    """`pocket export --repeated blocks` writes the file pocket.export(..., repeated=) writes."""
    import subprocess

    factory = tmp_path / "net.py"
    factory.write_text(
        "import sys, torch\n"
        f"sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
        "from test_repeat import Net\n"
        "def make():\n"
        "    torch.manual_seed(3)\n"
        "    return Net().eval(), (torch.randn(3, 8),)\n")
    out = tmp_path / "net.pocket"
    run = subprocess.run([sys.executable, "-m", "pocket", "export", f"{factory}:make", "-o", str(out),
                          "--repeated", "blocks"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "tracing (2 of 5 layers, the rest repeated)" in run.stderr
    torch.manual_seed(3)
    model, x = Net().eval(), torch.randn(3, 8)
    assert out.read_bytes() == pocket.export(model, (x,), repeated="blocks").data
    bad = subprocess.run([sys.executable, "-m", "pocket", "export", f"{factory}:make", "-o", str(tmp_path / "b.pocket"),
                          "--repeated", "nope"], capture_output=True, text=True)
    assert bad.returncode == 1 and "repeated='nope': the model has no submodule 'nope'" in bad.stderr
