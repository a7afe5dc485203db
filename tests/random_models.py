"""Tiny Llama-family models with seeded random weights, for tests that need an LLM but not a
checkpoint (tests/llm/tiny_models.py makes Hugging Face checkpoints)."""

import torch

from pocket.llm.models import LlmConfig, Transformer


def random_llm(config: LlmConfig, max_seq_len: int, seed: int = 0) -> Transformer:
    """A Transformer whose weight matrices are N(0, 0.3) (norm weights stay 1): far enough from
    zero that greedy decoding does not settle on one token."""
    torch.manual_seed(seed)
    model = Transformer(config, max_seq_len).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0, 0.3)
    return model


def tiny_llm(vocab: int = 96) -> Transformer:
    """2 layers, dim 64, grouped-query attention (4 heads, 2 KV heads), 64 positions."""
    config = LlmConfig(vocab_size=vocab, dim=64, n_layers=2, n_heads=4, n_kv_heads=2, hidden_dim=128, head_dim=16)
    return random_llm(config, 64)
