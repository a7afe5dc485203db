"""Loading a local Hugging Face checkpoint folder: config.json and *.safetensors (no downloads)."""

from __future__ import annotations

import json
import os

import torch

from pocket.llm.models.config import LlmConfig
from pocket.llm.models.model import Transformer

# Keys some checkpoints carry that the model recomputes.
IGNORED_SUFFIXES = ("rotary_emb.inv_freq",)


def load_checkpoint(folder: str | os.PathLike, max_seq_len: int) -> Transformer:
    """Builds the model of `folder` (config.json + safetensors) with its weights, in float32."""
    folder = os.fspath(folder)
    return build_model(read_config(folder), read_safetensors(folder), max_seq_len)


def read_config(folder: str) -> LlmConfig:
    """The LlmConfig of a checkpoint folder's config.json; a folder without one is named."""
    config_path = os.path.join(folder, "config.json")
    if not os.path.isfile(config_path):
        raise FileNotFoundError(f"{folder!r}: no config.json (expected a Hugging Face checkpoint folder)")
    return LlmConfig.from_json(config_path)


def read_safetensors(folder: str) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    files = sorted(f for f in os.listdir(folder) if f.endswith(".safetensors"))
    if not files:
        raise FileNotFoundError(f"{folder}: no *.safetensors weights")
    state = {}
    for name in files:
        state.update(load_file(os.path.join(folder, name)))
    return state


def build_model(config: LlmConfig, state: dict[str, torch.Tensor], max_seq_len: int) -> Transformer:
    """A Transformer with `state` loaded strictly (float32); names what is missing or extra."""
    if config.sliding_window is not None and max_seq_len > config.sliding_window:
        raise ValueError(f"max_seq_len {max_seq_len} is longer than the model's sliding window "
                         f"({config.sliding_window} tokens); Pocket's attention sees the whole context, "
                         f"so choose max_seq_len <= {config.sliding_window}")
    model = Transformer(config, max_seq_len, init_weights=False)
    state = {k: v.float() for k, v in state.items() if not k.endswith(IGNORED_SUFFIXES)}
    state = gemma_norms(split_fused(state, config), config)
    if config.tie_embeddings:
        state.pop("lm_head.weight", None)
    expected = {k for k in model.state_dict()} - ({"lm_head.weight"} if config.tie_embeddings else set())
    missing, extra = sorted(expected - state.keys()), sorted(state.keys() - expected)
    if missing or extra:
        raise ValueError(f"checkpoint does not match a {config.family} model: missing {missing[:5]}, "
                         f"unexpected {extra[:5]}")
    for key, value in state.items():
        have = model.state_dict()[key].shape
        if value.shape != have:
            raise ValueError(f"checkpoint tensor {key} has shape {tuple(value.shape)}, config implies {tuple(have)}")
    model.load_state_dict(state, strict=False)
    return model.eval()


def gemma_norms(state: dict[str, torch.Tensor], config: LlmConfig) -> dict[str, torch.Tensor]:
    """Gemma's RMSNorms scale by 1 + weight (in float32): stored here as that sum, which
    pocket::rms_norm multiplies by as Llama's weight."""
    if config.family != "gemma":
        return state
    return {k: v + 1.0 if k.endswith("layernorm.weight") or k == "model.norm.weight" else v for k, v in state.items()}


def split_fused(state: dict[str, torch.Tensor], config: LlmConfig) -> dict[str, torch.Tensor]:
    """Phi-3's fused weights as Llama's: qkv_proj rows are q, then k, then v; gate_up_proj rows
    are the gate, then up."""
    q_rows, kv_rows = config.n_heads * config.head_dim, config.n_kv_heads * config.head_dim
    out = {}
    for key, value in state.items():
        if key.endswith("self_attn.qkv_proj.weight") and value.shape[0] == q_rows + 2 * kv_rows:
            prefix = key[: -len("qkv_proj.weight")]
            q, k, v = value.split([q_rows, kv_rows, kv_rows])
            out |= {f"{prefix}q_proj.weight": q, f"{prefix}k_proj.weight": k, f"{prefix}v_proj.weight": v}
        elif key.endswith("mlp.gate_up_proj.weight") and value.shape[0] == 2 * config.hidden_dim:
            prefix = key[: -len("gate_up_proj.weight")]
            gate, up = value.split([config.hidden_dim, config.hidden_dim])
            out |= {f"{prefix}gate_proj.weight": gate, f"{prefix}up_proj.weight": up}
        else:
            out[key] = value
    return out


def read_json(folder: str, name: str) -> dict | None:
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return json.load(f)
