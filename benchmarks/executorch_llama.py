"""The ExecuTorch side of the LLM rows: the same model (shape and weights; the fp32 program's
logits match eager PyTorch's) exported with ExecuTorch's own llama recipe, through its command line

    python -m executorch.examples.models.llama.export_llama --model stories110m -c CKPT.pth -p PARAMS.json
        -kv --use_sdpa_with_kv_cache -X --xnnpack-extended-ops -d fp32
        --max_seq_length 256 --max_context_length 256 -n OUT.pte
        [-qmode 8da4w -G 32 -E 4,32]            # -8da4w rows: Pocket's group sizes

KV cache with its sdpa_with_kv_cache/update_cache custom ops, dynamic prompt length, linear
layers (fp32 or dynamically quantized) delegated to XNNPACK. The program has one method,
forward(tokens (1, T) int64, input_pos (1,) int64) -> logits (1, vocab) of the last token.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys


def write_checkpoint(model, ckpt_path: str, params_path: str) -> None:
    """Writes `model` (a pocket.llm.models.Transformer, Hugging Face layout) as a .pth checkpoint
    in ExecuTorch's llama naming, and its params.json."""
    import torch

    c = model.config
    sd = model.state_dict()

    def interleaved(w, heads):  # rope: Hugging Face rotates two halves, the llama layout pairs
        return w.view(heads, 2, c.head_dim // 2, w.shape[1]).transpose(1, 2).reshape(w.shape)

    ckpt = {"tok_embeddings.weight": sd["model.embed_tokens.weight"], "norm.weight": sd["model.norm.weight"],
            "output.weight": sd["lm_head.weight"]}
    names = {"self_attn.v_proj": "attention.wv", "self_attn.o_proj": "attention.wo", "mlp.gate_proj": "feed_forward.w1",
             "mlp.down_proj": "feed_forward.w2", "mlp.up_proj": "feed_forward.w3",
             "input_layernorm": "attention_norm", "post_attention_layernorm": "ffn_norm"}
    for i in range(c.n_layers):
        ours, theirs = f"model.layers.{i}.", f"layers.{i}."
        ckpt[theirs + "attention.wq.weight"] = interleaved(sd[ours + "self_attn.q_proj.weight"], c.n_heads)
        ckpt[theirs + "attention.wk.weight"] = interleaved(sd[ours + "self_attn.k_proj.weight"], c.n_kv_heads)
        for a, b in names.items():
            ckpt[f"{theirs}{b}.weight"] = sd[f"{ours}{a}.weight"]
    params = {"dim": c.dim, "n_layers": c.n_layers, "n_heads": c.n_heads, "n_kv_heads": c.n_kv_heads,
              "vocab_size": c.vocab_size, "hidden_dim": c.hidden_dim, "norm_eps": c.norm_eps,
              "rope_theta": c.rope_theta}
    torch.save({k: v.contiguous() for k, v in ckpt.items()}, ckpt_path)
    with open(params_path, "w") as f:
        json.dump(params, f)


def llama_flags(max_seq_len: int) -> list[str]:
    """export_llama flags shared by the fp32 and the quantized programs."""
    return ["--model", "stories110m", "-kv", "--use_sdpa_with_kv_cache", "-X", "--xnnpack-extended-ops",
            "-d", "fp32", "--max_seq_length", str(max_seq_len), "--max_context_length", str(max_seq_len)]


def quant_flags(quantize: str | None) -> list[str]:
    """export_llama flags for Pocket's `quantize` scheme (None: fp32) with Pocket's group sizes."""
    if quantize is None:
        return []
    from pocket.exporter.quant.config import resolve

    q = resolve(quantize)  # 8da4w: int4 linear and embedding weights, both group 32
    return ["-qmode", quantize, "-G", str(q.linear_group_size), "-E", f"{q.embedding_bits},{q.embedding_group_size}"]


def export(model, quantize: str | None, path: str) -> None:
    """Exports `model` with export_llama to `path`, its log lines on stderr; raises
    RuntimeError with the end of its output when it fails."""
    folder = os.path.join(os.path.dirname(os.path.abspath(path)), "executorch-llama")
    os.makedirs(folder, exist_ok=True)
    stem = f"d{model.config.dim}-l{model.config.n_layers}"
    ckpt, params = os.path.join(folder, stem + ".pth"), os.path.join(folder, stem + ".json")
    if "8da4w" in ckpt or "int8" in ckpt:  # export_llama reads such names as pre-quantized checkpoints
        raise RuntimeError(f"checkpoint path {ckpt} would be taken for a pre-quantized checkpoint")
    if not os.path.exists(ckpt):  # the fp32 and the 8da4w row share one checkpoint
        write_checkpoint(model, ckpt, params)
    cmd = [sys.executable, "-m", "executorch.examples.models.llama.export_llama", "-c", ckpt, "-p", params,
           *llama_flags(model.max_seq_len), *quant_flags(quantize), "-n", path + ".pte"]
    print("  " + " ".join(cmd), file=sys.stderr)
    tail = collections.deque(maxlen=40)
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:
            tail.append(line)
            if line.startswith("[INFO"):  # progress; the many warnings only go to `tail`
                print("  executorch: " + line.split("] ", 1)[-1].rstrip()[:160], file=sys.stderr)
    if proc.returncode != 0 or not os.path.exists(path + ".pte"):
        raise RuntimeError(f"export_llama exited with {proc.returncode}:\n" + "".join(tail))
    os.replace(path + ".pte", path)
