"""The LLM export recipe: one program with `prefill` (prompt length 1..max_seq_len) and
`decode` (one token), sharing weights and the KV cache, plus the metadata the runner needs."""

from __future__ import annotations

import json
import logging
import os

import torch
from torch.export import Dim

from pocket.exporter import Program, export
from pocket.llm.models.checkpoint import load_checkpoint, read_config, read_json
from pocket.llm.models.config import LlmConfig
from pocket.llm.models.model import Transformer

log = logging.getLogger("pocket.llm")

# model family -> chat template family the runner formats prompts with
CHAT_TEMPLATES = {"llama3": "llama3", "chatml": "chatml", "llama2": "llama2", "phi3": "phi3", "gemma": "gemma"}
# chat format -> the token that ends a turn (a stop token even where the config does not name it)
END_OF_TURN = {"llama3": "<|eot_id|>", "chatml": "<|im_end|>", "phi3": "<|end|>", "gemma": "<end_of_turn>"}
# --kv-cache choices -> the dtype the KV cache buffers are stored in
KV_CACHE_DTYPES = {"fp32": torch.float32, "fp16": torch.float16}


def export_llm(model: Transformer, chat_template: str = "none", bos_id: int | None = None,
               eos_ids: tuple[int, ...] | None = None, metadata: dict | None = None, quantize=None,
               group_size: int | None = None, tokenizer: bytes | None = None,
               system_prompt: str = "", kv_cache: str = "fp32") -> Program:
    """Exports `model` for the runner.

    chat_template: 'llama3', 'chatml', 'llama2', 'phi3', 'gemma' or 'none'; quantize: None, '8da4w', 'int8w' or
    a QuantConfig (see pocket.export); tokenizer: tokenizer file bytes to embed;
    system_prompt: the default system prompt of chats (the checkpoint template's);
    kv_cache: 'fp32' or 'fp16' (half the KV memory; sets the model's cache dtype, see
    Transformer.set_kv_cache_dtype), recorded in the metadata under "kv_cache"."""
    c = model.config
    n = model.max_seq_len
    if chat_template not in (*CHAT_TEMPLATES, "none"):
        raise ValueError(f"unknown chat template {chat_template!r}; choose llama3, chatml, llama2 or none")
    if kv_cache not in KV_CACHE_DTYPES:
        raise ValueError(f"unknown KV cache type {kv_cache!r}; choose {' or '.join(KV_CACHE_DTYPES)}")
    model.set_kv_cache_dtype(KV_CACHE_DTYPES[kv_cache])
    prompt = torch.zeros(1, min(4, n), dtype=torch.long)
    one = torch.zeros(1, 1, dtype=torch.long)
    pos = torch.zeros(1, dtype=torch.long)
    seq = Dim("seq", min=1, max=n)
    bos = c.bos_id if bos_id is None else bos_id
    eos = c.eos_ids if eos_ids is None else eos_ids
    meta = {
        "pocket_llm": 1, "model_family": c.family, "max_seq_len": n, "vocab_size": c.vocab_size,
        "n_layers": c.n_layers, "dim": c.dim, "chat_template": chat_template,
        "bos_id": -1 if bos is None else bos, "eos_ids": ",".join(str(e) for e in eos),
        "default_system_prompt": system_prompt, "kv_cache": kv_cache, **(metadata or {}),
    }
    log.info("exporting %s: %d layers, dim %d, vocab %d, max_seq_len %d", c.family, c.n_layers, c.dim,
             c.vocab_size, n)
    return export(None, methods={
        "prefill": (model, (prompt, pos), ({1: seq}, None)),
        "decode": (model, (one, pos)),
    }, metadata=meta, quantize=quantize, group_size=group_size, tokenizer=tokenizer, repeated="model.layers")


def export_checkpoint(folder: str, max_seq_len: int | None = None, chat_template: str = "auto", quantize=None,
                      group_size: int | None = None, kv_cache: str = "fp32") -> Program:
    """Exports a local Hugging Face folder (config.json, *.safetensors, tokenizer files)."""
    config = read_config(folder)
    n = max_seq_len or min(config.max_position_embeddings, 1024)
    model = load_checkpoint(folder, n)
    template = checkpoint_chat_template(folder)
    if chat_template == "auto":
        chat_template = chat_format_of(template)
    tokenizer = None
    tokenizer_path = os.path.join(folder, "tokenizer.json")
    if os.path.isfile(tokenizer_path):
        with open(tokenizer_path, "rb") as f:
            tokenizer = f.read()
    eos = stop_ids(config, tokenizer, chat_template, generation_eos_ids(folder))
    return export_llm(model, chat_template=chat_template, eos_ids=eos,
                      quantize=quantize, group_size=group_size, tokenizer=tokenizer,
                      system_prompt=default_system_prompt(template), kv_cache=kv_cache)


def stop_ids(config: LlmConfig, tokenizer: bytes | None, chat_template: str,
             extra: tuple[int, ...] = ()) -> tuple[int, ...]:
    """The ids that end generation: the config's, then `extra` (generation_config.json's), then
    the chat format's end-of-turn token, each once."""
    return tuple(dict.fromkeys(config.eos_ids + extra + end_of_turn_ids(tokenizer, chat_template)))


def end_of_turn_ids(tokenizer: bytes | None, chat_template: str) -> tuple[int, ...]:
    """The id of the chat format's end-of-turn token in a tokenizer.json's added tokens (a chat
    stops there even when the checkpoint's configs name only <eos>, as Gemma 1's do)."""
    marker = END_OF_TURN.get(chat_template)
    if tokenizer is None or marker is None:
        return ()
    added = json.loads(tokenizer).get("added_tokens") or []
    return tuple(t["id"] for t in added if t.get("content") == marker and isinstance(t.get("id"), int))[:1]


def generation_eos_ids(folder: str) -> tuple[int, ...]:
    """generation_config.json's end-of-sequence ids: chat models often name their end-of-turn
    token only there (Llama 3.0 Instruct's <|eot_id|>, Phi-3's <|end|>)."""
    ids = (read_json(folder, "generation_config.json") or {}).get("eos_token_id")
    ids = ids if isinstance(ids, list) else [] if ids is None else [ids]
    return tuple(e for e in ids if isinstance(e, int))


def export_gguf(path: str, max_seq_len: int | None = None, chat_template: str = "auto", activations: str = "fp32",
                quantize=None, group_size: int | None = None, kv_cache: str = "fp32") -> Program:
    """Exports a GGUF file, keeping its quantization (unless `quantize` re-quantizes on purpose)
    and embedding its tokenizer and chat template."""
    from pocket.llm.models.gguf_model import config_from_gguf, field, load_gguf_model, open_gguf
    from pocket.llm.models.gguf_tokenizer import tokenizer_json_from_gguf

    log.info("reading GGUF %s", path)
    reader = open_gguf(path)
    config = config_from_gguf(reader)
    n = max_seq_len or min(config.max_position_embeddings, 1024)
    log.info("loading %d tensors%s", len(reader.tensors), " (de-quantized to float32)" if quantize is not None else "")
    model, config, reader = load_gguf_model(reader, n, activations, requantize=quantize is not None)
    template = field(reader, "tokenizer.chat_template") or ""
    if chat_template == "auto":
        chat_template = chat_format_of(template)
    log.info("converting the tokenizer")
    tokenizer = tokenizer_json_from_gguf(reader)
    return export_llm(model, chat_template=chat_template, eos_ids=stop_ids(config, tokenizer, chat_template), quantize=quantize, group_size=group_size,
                      tokenizer=tokenizer, system_prompt=default_system_prompt(template),
                      metadata={"source": os.path.basename(path), "activations": activations if quantize is None else "-"},
                      kv_cache=kv_cache)


def export_random(config_path: str, seed: int = 0, max_seq_len: int | None = None, chat_template: str = "none",
                  quantize=None, group_size: int | None = None, kv_cache: str = "fp32") -> Program:
    """Exports the model of a config.json with random weights (for tests and benchmarks)."""
    config = LlmConfig.from_json(config_path)
    torch.manual_seed(seed)
    model = Transformer(config, max_seq_len or min(config.max_position_embeddings, 1024))
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0, 0.02)
    return export_llm(model.eval(), chat_template=chat_template, quantize=quantize, group_size=group_size,
                      kv_cache=kv_cache)


def checkpoint_chat_template(folder: str) -> str:
    """The Jinja chat template of a checkpoint (tokenizer_config.json or chat_template.jinja), or ""."""
    text = ""
    cfg = read_json(folder, "tokenizer_config.json") or {}
    if isinstance(cfg.get("chat_template"), str):
        text = cfg["chat_template"]
    jinja = os.path.join(folder, "chat_template.jinja")
    if not text and os.path.isfile(jinja):
        with open(jinja) as f:
            text = f.read()
    return text


def default_system_prompt(template: str) -> str:
    """The system prompt a chat template adds when a conversation has none (SmolLM2's names
    itself), found by rendering the template with jinja2 for one user message."""
    import re

    if not template:
        return ""
    try:
        import jinja2

        def fail(message):
            raise jinja2.exceptions.TemplateError(message)

        env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
        env.globals.update(raise_exception=fail, strftime_now=lambda fmt: "")
        text = env.from_string(template).render(messages=[{"role": "user", "content": "\x00"}],
                                                add_generation_prompt=True, bos_token="", eos_token="")
    except Exception:  # an unusual template: no default rather than a failed export
        return ""
    for pattern in (r"<\|im_start\|>system\n(.*?)<\|im_end\|>",
                    r"<\|start_header_id\|>system<\|end_header_id\|>\n\n(.*?)<\|eot_id\|>",
                    r"<<SYS>>\n(.*?)\n<</SYS>>"):
        m = re.search(pattern, text.split("\x00")[0], re.S)
        if m:
            return m.group(1)
    return ""


def chat_format_of(template: str) -> str:
    """Which known family a Jinja chat template belongs to, by its markers."""
    if "<|start_header_id|>" in template:
        return "llama3"
    if "<|im_start|>" in template:
        return "chatml"
    if "[INST]" in template:
        return "llama2"
    if "<|user|>" in template and "<|end|>" in template:
        return "phi3"
    if "<start_of_turn>" in template:
        return "gemma"
    return "none"
