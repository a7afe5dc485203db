"""LLM benchmark: load time, time to first token, prefill and decode tokens/s for
stories15M- and stories110M-shaped Llama models with random weights, Pocket next to eager
PyTorch on the same machine.

    python benchmarks/llm_bench.py [--models stories15M stories110M] [--out benchmarks/results/llm.md]

Each engine runs a prompt of PROMPT tokens (prefill), then DECODE tokens one at a time,
greedy, with fresh caches. Numbers are medians of REPEAT runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
from common import DECODE, PROMPT, machine_line, median_ms, table  # noqa: E402

import pocket  # noqa: E402
from pocket.llm.models import LlmConfig, Transformer, export_llm  # noqa: E402

SHAPES = {
    "stories15M": dict(dim=288, n_layers=6, n_heads=6, hidden_dim=768),
    "stories110M": dict(dim=768, n_layers=12, n_heads=12, hidden_dim=2048),
}
REPEAT, MAX_SEQ = 3, 512  # run.py decodes 256 tokens after a 32-token prompt


def make_model(name: str) -> Transformer:
    s = SHAPES[name]
    c = LlmConfig(vocab_size=32000, dim=s["dim"], n_layers=s["n_layers"], n_heads=s["n_heads"],
                  n_kv_heads=s["n_heads"], hidden_dim=s["hidden_dim"], head_dim=s["dim"] // s["n_heads"])
    torch.manual_seed(0)
    model = Transformer(c, MAX_SEQ).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0, 0.02)
    return model


def run_pocket(module, prompt) -> tuple[float, float]:
    """(prefill ms, decode ms per token)."""
    module.reset_buffers()
    t0 = time.perf_counter()
    logits = module.run("prefill", prompt, torch.tensor([0]))
    prefill = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    for i in range(DECODE):
        token = int(logits.argmax())
        logits = module.run("decode", torch.tensor([[token]]), torch.tensor([PROMPT + i]))
    return prefill, (time.perf_counter() - t0) * 1e3 / DECODE


@torch.no_grad()
def run_eager(model, prompt) -> tuple[float, float]:
    for layer in model.model.layers:
        layer.self_attn.k_cache.zero_()
        layer.self_attn.v_cache.zero_()
    t0 = time.perf_counter()
    logits = model(prompt, torch.tensor([0]))
    prefill = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    for i in range(DECODE):
        token = int(logits.argmax())
        logits = model(torch.tensor([[token]]), torch.tensor([PROMPT + i]))
    return prefill, (time.perf_counter() - t0) * 1e3 / DECODE


def measure(run, *args) -> tuple[float, float]:
    runs = [run(*args) for _ in range(REPEAT)]
    runs.sort()
    return runs[len(runs) // 2]


def row(model_name, engine, threads, load_ms, prefill_ms, decode_ms, file_mb):
    return [model_name, engine, threads, f"{load_ms:.1f}", f"{prefill_ms:.1f}", f"{PROMPT / prefill_ms * 1e3:.0f}",
            f"{1e3 / decode_ms:.1f}", file_mb]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--out", help="also write the table (markdown) to this file")
    args = ap.parse_args()
    rows = []
    prompt = torch.randint(0, 32000, (1, PROMPT), generator=torch.Generator().manual_seed(0))
    for name in args.models:
        model = make_model(name)
        print(f"{name}: exporting ...", file=sys.stderr)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, f"{name}.pocket")
            export_llm(model).save(path)
            size = f"{os.path.getsize(path) / 2**20:.1f}"
            load_ms = median_ms(lambda: pocket.load(path), 5)
            module = pocket.load(path)
            prefill, decode = measure(run_pocket, module, prompt)
            rows.append(row(name, "Pocket (portable kernels)", 1, load_ms, prefill, decode, size))
        for threads in (1, 2):
            torch.set_num_threads(threads)
            prefill, decode = measure(run_eager, model, prompt)
            rows.append(row(name, "eager PyTorch", threads, 0.0, prefill, decode, "-"))
        print(table(HEADERS, rows[-3:]), file=sys.stderr)
    text = (f"LLM benchmark · {machine_line([1, 2])}\nprompt {PROMPT} tokens, decode {DECODE} tokens, greedy, "
            f"fp32, median of {REPEAT}; load = pocket.load of the file (eager PyTorch: model already in memory)\n\n"
            + table(HEADERS, rows))
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


HEADERS = ["model", "engine", "threads", "load ms", "TTFT ms", "prefill tok/s", "decode tok/s", "file MB"]

if __name__ == "__main__":
    main()
