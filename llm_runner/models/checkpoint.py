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
    config_path = os.path.join(folder, "config.json")
    if not os.path.isfile(config_path):
        raise FileNotFoundError(f"{folder}: no config.json (expected a Hugging Face checkpoint folder)")
    config = LlmConfig.from_json(config_path)
    return build_model(config, read_safetensors(folder), max_seq_len)


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
    model = Transformer(config, max_seq_len, init_weights=False)
    state = {k: v.float() for k, v in state.items() if not k.endswith(IGNORED_SUFFIXES)}
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


def read_json(folder: str, name: str) -> dict | None:
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return json.load(f)
