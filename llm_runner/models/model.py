"""A Llama-family transformer with its KV cache in buffers, written for export.

Module and parameter names follow Hugging Face checkpoints (model.layers.N.self_attn.q_proj,
...), so a safetensors state dict loads as it is. forward(tokens, input_pos) runs T new
tokens at positions input_pos .. input_pos+T-1 and returns the logits of the last one.

RMSNorm, rotary embeddings and the SwiGLU gate run as the fused ops pocket::rms_norm,
pocket::rope and pocket::swiglu (one kernel each in the exported graph; their eager
implementations are the same math). Transformer.use_fused_ops(False) switches back to the
plain torch code, e.g. to export for a runtime without those ops.
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from pocket.exporter import custom_ops  # noqa: F401  (torch.ops.pocket.*)
from pocket.llm.models.config import LlmConfig
from pocket.llm.models.rope import apply_rope, rope_tables


@contextlib.contextmanager
def _no_init(active: bool):
    """Skips the random initialization of Linear and Embedding layers (slow for large models)."""
    saved = nn.Linear.reset_parameters, nn.Embedding.reset_parameters
    if active:
        nn.Linear.reset_parameters = nn.Embedding.reset_parameters = lambda self: None
    try:
        yield
    finally:
        nn.Linear.reset_parameters, nn.Embedding.reset_parameters = saved


class RMSNorm(nn.Module):
    fused = True  # pocket::rms_norm; see Transformer.use_fused_ops

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        if self.fused:
            return torch.ops.pocket.rms_norm(x, self.weight, self.eps)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    fused = True  # pocket::rope; see Transformer.use_fused_ops

    def __init__(self, c: LlmConfig, max_seq_len: int):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = c.n_heads, c.n_kv_heads, c.head_dim
        self.q_proj = nn.Linear(c.dim, c.n_heads * c.head_dim, bias=c.attention_bias)
        self.k_proj = nn.Linear(c.dim, c.n_kv_heads * c.head_dim, bias=c.attention_bias)
        self.v_proj = nn.Linear(c.dim, c.n_kv_heads * c.head_dim, bias=c.attention_bias)
        self.o_proj = nn.Linear(c.n_heads * c.head_dim, c.dim, bias=False)
        if c.qk_norm:
            self.q_norm = RMSNorm(c.head_dim, c.norm_eps)
            self.k_norm = RMSNorm(c.head_dim, c.norm_eps)
        cache = (1, c.n_kv_heads, max_seq_len, c.head_dim)  # (batch, kv head, position, head dim)
        self.register_buffer("k_cache", torch.zeros(cache), persistent=False)
        self.register_buffer("v_cache", torch.zeros(cache), persistent=False)

    def forward(self, x, cos, sin, input_pos):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.n_heads, self.head_dim)
        k = self.k_proj(x).view(b, t, self.n_kv_heads, self.head_dim)
        v = self.v_proj(x).view(b, t, self.n_kv_heads, self.head_dim)
        if hasattr(self, "q_norm"):
            q, k = self.q_norm(q), self.k_norm(k)
        if self.fused:
            q, k = torch.ops.pocket.rope(q, cos, sin), torch.ops.pocket.rope(k, cos, sin)
        else:
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # (B, H, T, D)
        k_all = torch.ops.pocket.update_cache(self.k_cache, k, input_pos)
        v_all = torch.ops.pocket.update_cache(self.v_cache, v, input_pos)
        self.k_cache.copy_(k_all)
        self.v_cache.copy_(v_all)
        y = torch.ops.pocket.sdpa(q, k_all, v_all, input_pos, self.head_dim ** -0.5)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, self.n_heads * self.head_dim))


class MLP(nn.Module):
    fused = True  # pocket::swiglu; see Transformer.use_fused_ops

    def __init__(self, c: LlmConfig):
        super().__init__()
        self.act = c.mlp_act
        self.gate_proj = nn.Linear(c.dim, c.hidden_dim, bias=False)
        self.up_proj = nn.Linear(c.dim, c.hidden_dim, bias=False)
        self.down_proj = nn.Linear(c.hidden_dim, c.dim, bias=False)

    def forward(self, x):
        if self.act == "gelu_tanh":  # Gemma (GeGLU)
            return self.down_proj(nn.functional.gelu(self.gate_proj(x), approximate="tanh") * self.up_proj(x))
        if self.fused:
            return self.down_proj(torch.ops.pocket.swiglu(self.gate_proj(x), self.up_proj(x)))
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, c: LlmConfig, max_seq_len: int):
        super().__init__()
        self.input_layernorm = RMSNorm(c.dim, c.norm_eps)
        self.self_attn = Attention(c, max_seq_len)
        self.post_attention_layernorm = RMSNorm(c.dim, c.norm_eps)
        self.mlp = MLP(c)

    def forward(self, x, cos, sin, input_pos):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, input_pos)
        return x + self.mlp(self.post_attention_layernorm(x))


class Decoder(nn.Module):
    def __init__(self, c: LlmConfig, max_seq_len: int):
        super().__init__()
        self.embed_tokens = nn.Embedding(c.vocab_size, c.dim)
        self.layers = nn.ModuleList(Block(c, max_seq_len) for _ in range(c.n_layers))
        self.norm = RMSNorm(c.dim, c.norm_eps)


class Transformer(nn.Module):
    def __init__(self, config: LlmConfig, max_seq_len: int, init_weights: bool = True):
        """init_weights=False skips random initialization (the weights are loaded after)."""
        super().__init__()
        self.config, self.max_seq_len = config, max_seq_len
        with _no_init(not init_weights):
            self.model = Decoder(config, max_seq_len)
        with _no_init(not init_weights):
            self.lm_head = nn.Linear(config.dim, config.vocab_size, bias=False)
        if config.tie_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        cos, sin = rope_tables(config.head_dim, config.rope_theta, config.rope_scaling, max_seq_len)
        self.register_buffer("rope_cos", cos, persistent=False)  # (max_seq_len, head_dim)
        self.register_buffer("rope_sin", sin, persistent=False)

    def set_kv_cache_dtype(self, dtype: torch.dtype) -> "Transformer":
        """Stores the KV cache as float32 (the default) or float16 (half the memory; keys and
        values are rounded to float16 when written, attention computes in float32). Empties
        the caches. Returns self."""
        if dtype not in (torch.float32, torch.float16):
            raise ValueError(f"KV cache dtype must be torch.float32 or torch.float16, got {dtype}")
        for layer in self.model.layers:
            a = layer.self_attn
            a.k_cache = torch.zeros_like(a.k_cache, dtype=dtype)
            a.v_cache = torch.zeros_like(a.v_cache, dtype=dtype)
        return self

    def use_fused_ops(self, fused: bool = True) -> "Transformer":
        """Whether RMSNorm, RoPE and SwiGLU run as pocket:: fused ops (the default) or as plain
        torch code (exports then need no pocket::rms_norm/rope/swiglu kernel). Returns self."""
        for m in self.modules():
            if isinstance(m, (RMSNorm, Attention, MLP)):
                m.fused = fused
        return self

    def forward(self, tokens: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        """tokens (1, T) int64, input_pos (1,) int64 -> logits (1, vocab) of the last token."""
        t = tokens.shape[1]
        positions = torch.arange(t) + input_pos
        cos, sin = self.rope_cos[positions], self.rope_sin[positions]  # (T, head_dim)
        x = self.model.embed_tokens(tokens)
        if self.config.embed_scale != 1.0:  # Gemma: as its scaled embedding, a float32 scalar
            x = x * torch.tensor(self.config.embed_scale, dtype=torch.float32).to(x.dtype)
        for layer in self.model.layers:
            x = layer(x, cos, sin, input_pos)
        return self.lm_head(self.model.norm(x[:, -1, :]))

    @torch.no_grad()
    def generate_greedy(self, prompt: list[int], max_new_tokens: int, eos_ids=()) -> list[int]:
        """Eager greedy generation (the reference the runtime is tested against)."""
        for layer in self.model.layers:
            layer.self_attn.k_cache.zero_()
            layer.self_attn.v_cache.zero_()
        logits = self(torch.tensor([prompt]), torch.tensor([0]))
        out, pos = [], len(prompt)
        for _ in range(max_new_tokens):
            token = int(logits.argmax(-1))
            out.append(token)
            if token in eos_ids or pos >= self.max_seq_len:
                break
            logits = self(torch.tensor([[token]]), torch.tensor([pos]))
            pos += 1
        return out
