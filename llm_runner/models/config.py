"""Model hyperparameters, read from a Hugging Face config.json (Llama 2/3, Mistral, SmolLM,
Qwen2/2.5, Qwen3, Phi-3, Gemma)."""

from __future__ import annotations

import dataclasses
import json
import os

# model_type -> (family, attention bias, q/k norm)
FAMILIES = {
    "llama": ("llama", False, False),
    "mistral": ("llama", False, False),
    "qwen2": ("qwen2", True, False),
    "qwen3": ("qwen3", False, True),
    "phi3": ("llama", False, False),  # Llama's layers with fused q/k/v and gate/up weights (checkpoint.py)
    "gemma": ("gemma", False, False),  # GELU-tanh MLP, embeddings times sqrt(dim), norms of 1 + weight
}


@dataclasses.dataclass
class LlmConfig:
    vocab_size: int
    dim: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    hidden_dim: int
    head_dim: int
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    rope_scaling: dict | None = None   # Llama 3.x: {"rope_type": "llama3", "factor": ..., ...}
    tie_embeddings: bool = False
    attention_bias: bool = False       # Qwen2: q/k/v projections have biases
    qk_norm: bool = False              # Qwen3: RMSNorm on each head's q and k
    family: str = "llama"
    max_position_embeddings: int = 2048
    bos_id: int | None = None
    eos_ids: tuple[int, ...] = ()
    sliding_window: int | None = None  # Mistral v0.1, Phi-3: attention reaches this far back
    mlp_act: str = "silu"              # the gate's activation: "silu" (SwiGLU) or "gelu_tanh" (Gemma)
    embed_scale: float = 1.0           # Gemma: token embeddings times sqrt(dim)

    @classmethod
    def from_hf(cls, cfg: dict) -> "LlmConfig":
        model_type = cfg.get("model_type", "llama")
        if model_type not in FAMILIES:
            raise ValueError(f"unsupported model_type {model_type!r}; Pocket exports {sorted(FAMILIES)}")
        family, bias, qk_norm = FAMILIES[model_type]
        n_heads = cfg["num_attention_heads"]
        eos = cfg.get("eos_token_id")
        act = cfg.get("hidden_activation") or cfg.get("hidden_act", "silu")
        if family == "gemma" and act in ("gelu", "gelu_pytorch_tanh"):  # "gelu": Gemma's legacy name for tanh
            act = "gelu_tanh"
        if act not in ("silu", "gelu_tanh") or cfg.get("mlp_bias"):
            raise ValueError(f"unsupported MLP (hidden_act {act!r}, mlp_bias {cfg.get('mlp_bias')}); Pocket's "
                             "decoders gate with SiLU (Gemma: tanh GELU), without bias")
        rope = cfg.get("rope_parameters") or {}  # transformers 5 keeps rope_theta in here
        rotary = cfg.get("partial_rotary_factor", rope.get("partial_rotary_factor", 1.0))
        if rotary != 1.0:
            raise ValueError(f"unsupported partial_rotary_factor {rotary} ({model_type}); Pocket rotates whole heads")
        return cls(
            vocab_size=cfg["vocab_size"], dim=cfg["hidden_size"], n_layers=cfg["num_hidden_layers"],
            n_heads=n_heads, n_kv_heads=cfg.get("num_key_value_heads") or n_heads,
            hidden_dim=cfg["intermediate_size"],
            head_dim=cfg.get("head_dim") or cfg["hidden_size"] // n_heads,
            norm_eps=cfg.get("rms_norm_eps", 1e-5), rope_theta=cfg.get("rope_theta") or rope.get("rope_theta", 10000.0),
            rope_scaling=_rope_scaling(cfg), tie_embeddings=cfg.get("tie_word_embeddings", False),
            attention_bias=cfg.get("attention_bias", bias), qk_norm=qk_norm, family=family,
            max_position_embeddings=cfg.get("max_position_embeddings", 2048),
            bos_id=cfg.get("bos_token_id"),
            eos_ids=tuple(eos) if isinstance(eos, list) else ((eos,) if eos is not None else ()),
            sliding_window=cfg.get("sliding_window") if cfg.get("use_sliding_window", True) else None,  # Qwen: off
            mlp_act=act, embed_scale=cfg["hidden_size"] ** 0.5 if family == "gemma" else 1.0,
        )

    @classmethod
    def from_json(cls, path: str | os.PathLike) -> "LlmConfig":
        with open(path) as f:
            return cls.from_hf(json.load(f))


def _rope_scaling(cfg: dict) -> dict | None:
    scaling = cfg.get("rope_scaling") or (cfg.get("rope_parameters") or None)
    if not scaling:
        return None
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind in (None, "default"):
        return None
    if kind != "llama3":
        raise ValueError(f"unsupported rope scaling {kind!r} (Pocket supports llama3)")
    return dict(scaling)
