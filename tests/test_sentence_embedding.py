"""A sentence-transformers-style embedding model, exported as a new user would: a BERT-like
encoder, mean pooling over the attention mask, F.normalize (aten::linalg_vector_norm), with a
dynamic batch and sequence length. Runtime vs eager at 1e-4. Also: inputs as users hold them
(transposed, sliced, expanded tensors and arrays) are accepted and give eager's result.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

import pocket

TOL = dict(atol=1e-4, rtol=1e-4)


class Layer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.ln2 = nn.LayerNorm(dim)

    def forward(self, x, bias):  # x (batch, seq, dim), bias (batch, 1, 1, seq)
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        x = self.ln1(x + self.out(a.transpose(1, 2).reshape(b, s, d)))
        return self.ln2(x + self.ffn(x))


class SentenceEncoder(nn.Module):
    """BERT-style post-norm encoder + mean pooling + L2 normalization (all-MiniLM's recipe)."""

    def __init__(self, vocab=120, dim=48, heads=4, layers=2, max_len=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.ln = nn.LayerNorm(dim)
        self.layers = nn.ModuleList(Layer(dim, heads) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        x = self.ln(self.tok(input_ids) + self.pos(torch.arange(s, device=input_ids.device)))
        bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -1e4
        for layer in self.layers:
            x = layer(x, bias)
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return F.normalize(pooled, p=2, dim=1)


def batch(b, s, vocab=120):
    ids = torch.randint(0, vocab, (b, s))
    mask = torch.ones(b, s, dtype=torch.int64)
    for i in range(b):  # ragged sentences: padding at the end of all but the first
        if i:
            mask[i, torch.randint(1, s + 1, ()).item():] = 0
    return ids, mask


@pytest.fixture(scope="module")
def exported():
    torch.manual_seed(0)
    model = SentenceEncoder().eval()
    b, s = Dim("batch", min=1, max=8), Dim("seq", min=2, max=64)
    program = pocket.export(model, batch(2, 8), dynamic_shapes=({0: b, 1: s}, {0: b, 1: s}))
    assert "aten::linalg_vector_norm" in program.summary["methods"]["forward"]["ops"]
    return model, pocket.Module.from_bytes(program.data)


@pytest.mark.parametrize("b,s", [(1, 2), (3, 17), (8, 64)])
def test_embeddings_match_eager(exported, b, s):
    model, m = exported
    ids, mask = batch(b, s)
    with torch.no_grad():
        want = model(ids, mask)
    got = m.forward(ids, mask)
    torch.testing.assert_close(got, want, **TOL)
    torch.testing.assert_close(got.norm(dim=1), torch.ones(b), **TOL)


def test_non_contiguous_inputs(exported):
    """A transposed, a sliced and an expanded input: copied only because they must be."""
    model, m = exported
    ids, mask = batch(4, 10)
    cases = {
        "transposed": (ids.t().contiguous().t(), mask.t().contiguous().t()),
        "sliced": (torch.cat([ids, ids], 1)[:, ::2], torch.cat([mask, mask], 1)[:, ::2]),
        "expanded": (ids[:1].expand(3, 10), mask[:1].expand(3, 10)),
    }
    for name, (i, k) in cases.items():
        assert not i.is_contiguous(), name
        with torch.no_grad():
            want = model(i, k)
        torch.testing.assert_close(m.forward(i, k), want, **TOL, msg=lambda e: f"{name}: {e}")
        got_np = m.forward(i.numpy(), k.numpy())  # numpy views keep the strides
        np.testing.assert_allclose(got_np, want.numpy(), **TOL, err_msg=name)
