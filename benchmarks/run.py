"""Pocket next to eager PyTorch (and ExecuTorch+XNNPACK when `executorch` is installed) on
the example models and on stories15M/110M-shaped LLMs, with 1 and 2 threads. ExecuTorch's LLM
programs come from its llama recipe (see executorch_llama.py).

    python benchmarks/run.py                       # everything; prints a markdown table
    python benchmarks/run.py --models mobilenet_v2 encoder --threads 1 --out table.md

Each (model, engine, threads) runs in its own process, so peak RSS is that engine's alone.
Latency is the median of --repeat runs after 3 warm-up runs; LLM rows report decode tokens/s
(greedy, 64 tokens after a 32-token prompt) and the decode bound of this machine's memory
bandwidth (bandwidth / weight bytes read per token).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import executorch_llama  # noqa: E402
from common import machine_line, median_ms, peak_rss_mb, table  # noqa: E402

CNN_MODELS = ["mlp", "resnet", "mobilenet_v2", "encoder"]
LLM_MODELS = ["stories15M", "stories15M-8da4w", "stories110M", "stories110M-8da4w"]
ENGINES = ["pocket", "eager", "executorch"]


def build(name: str):
    """(model, example inputs) for a model name; LLMs also return their shape."""
    if name in CNN_MODELS:
        from examples import models

        return getattr(models, name)()[:2]
    from llm_bench import make_model

    return make_model(name.split("-")[0]), None


def export_pocket(name: str, path: str) -> None:
    """Writes the program and, for non-LLMs, its example inputs as .npz (the Pocket child
    process then needs neither torch nor the model code)."""
    import numpy as np

    import pocket

    model, inputs = build(name)
    if inputs is None:
        from pocket.llm.models import export_llm

        export_llm(model, quantize="8da4w" if name.endswith("8da4w") else None).save(path)
    else:
        pocket.export(model, inputs).save(path)
        np.savez(path + ".npz", *[x.numpy() for x in inputs])


def export_executorch(name: str, path: str) -> None:
    if name in LLM_MODELS:
        model, _ = build(name)
        return executorch_llama.export(model, "8da4w" if name.endswith("8da4w") else None, path)
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    model, inputs = build(name)
    ep = torch.export.export(model, inputs)
    program = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch()
    with open(path, "wb") as f:
        f.write(program.buffer)


# ---- one measurement, in a child process ----------------------------------------------------

def measure(name: str, engine: str, threads: int, repeat: int, path: str) -> dict:
    if engine == "pocket":  # numpy only: no torch in this process
        import numpy as np

        import pocket

        t0 = time.perf_counter()
        runner = pocket.load(path)
        runner.set_num_threads(threads)
        load_ms = (time.perf_counter() - t0) * 1e3
        if name not in CNN_MODELS:
            return {**llm_pocket(runner), "load_ms": load_ms, "rss_mb": peak_rss_mb()}
        with np.load(path + ".npz") as npz:
            arrays = [npz[k] for k in npz.files]
        run = lambda: runner.forward(*arrays)  # noqa: E731
        for _ in range(3):
            run()
        return {"ms": median_ms(run, repeat), "load_ms": load_ms, "rss_mb": peak_rss_mb()}
    import torch

    torch.set_num_threads(threads)
    t0 = time.perf_counter()
    if engine == "eager":
        model, inputs = build(name)
        load_ms = 0.0
        if inputs is None:
            return {**llm_eager(model, name), "load_ms": 0.0, "rss_mb": peak_rss_mb()}

        def run():
            with torch.no_grad():
                model(*inputs)
    else:
        from executorch.extension.pybindings import portable_lib
        from executorch.runtime import Runtime

        # XNNPACK and ExecuTorch's own parallel kernels share this pool (default: one thread a core)
        portable_lib._unsafe_reset_threadpool(threads)
        if name not in CNN_MODELS:
            import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  registers llama:: kernels
            import executorch.kernels.quantized  # noqa: F401  registers the 4-bit embedding kernel
        t0 = time.perf_counter()
        method = Runtime.get().load_program(path).load_method("forward")
        load_ms = (time.perf_counter() - t0) * 1e3
        if name not in CNN_MODELS:
            return {**llm_executorch(method), "load_ms": load_ms, "rss_mb": peak_rss_mb()}
        _, inputs = build(name)
        run = lambda: method.execute(list(inputs))  # noqa: E731
    for _ in range(3):
        run()
    return {"ms": median_ms(run, repeat), "load_ms": load_ms, "rss_mb": peak_rss_mb()}


def llm_pocket(module) -> dict:
    import numpy as np

    from common import DECODE, PROMPT

    prompt = np.random.default_rng(0).integers(0, 32000, (1, PROMPT))

    def run():
        module.reset_buffers()
        t0 = time.perf_counter()
        logits = module.run("prefill", prompt, np.array([0]))
        prefill = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        for i in range(DECODE):
            logits = module.run("decode", np.array([[int(logits.argmax())]]), np.array([PROMPT + i]))
        return prefill, (time.perf_counter() - t0) * 1e3 / DECODE

    run()  # warm-up
    prefill, decode = min(run() for _ in range(3))
    return {"ms": decode, "prefill_ms": prefill, "tok_s": 1e3 / decode, "prefill_tok_s": PROMPT / prefill * 1e3,
            "decode_tokens": DECODE}


def llm_executorch(method) -> dict:
    """llm_pocket's measurement for the single `forward` of export_llama's programs. The KV cache
    is not cleared between runs: each overwrites it from position 0 and attends up to input_pos."""
    import torch

    from common import DECODE, PROMPT

    prompt = torch.randint(0, 32000, (1, PROMPT), generator=torch.Generator().manual_seed(0))

    def run():
        t0 = time.perf_counter()
        logits = method.execute([prompt, torch.tensor([0])])[0]
        prefill = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        for i in range(DECODE):
            logits = method.execute([torch.tensor([[int(logits.argmax())]]), torch.tensor([PROMPT + i])])[0]
        return prefill, (time.perf_counter() - t0) * 1e3 / DECODE

    run()  # warm-up
    prefill, decode = min(run() for _ in range(3))
    return {"ms": decode, "prefill_ms": prefill, "tok_s": 1e3 / decode, "prefill_tok_s": PROMPT / prefill * 1e3}


def llm_eager(model, name) -> dict:
    import torch

    from llm_bench import PROMPT, run_eager

    # 8da4w rows compare with eager fp32: eager PyTorch has no fast 8da4w kernels (Pocket's eager
    # references are exact, not fast), and fp32 is what a PyTorch user would run.
    prompt = torch.randint(0, 32000, (1, PROMPT), generator=torch.Generator().manual_seed(0))
    run_eager(model, prompt)
    prefill, decode = min(run_eager(model, prompt) for _ in range(3))
    return {"ms": decode, "prefill_ms": prefill, "tok_s": 1e3 / decode, "prefill_tok_s": PROMPT / prefill * 1e3}


def memory_bandwidth_gbs() -> float:
    """Memory bandwidth of one thread copying 256 MiB (bytes read + written per second, GB/s),
    best of 5 — the rate a single-threaded decode can stream weights at."""
    import numpy as np

    a = np.ones(32 * 2**20, dtype=np.float64)
    b = np.empty_like(a)
    best = 0.0
    for _ in range(5):
        t0 = time.perf_counter()
        np.copyto(b, a)
        best = max(best, 2 * a.nbytes / (time.perf_counter() - t0) / 1e9)
    return best


def weight_bytes_per_token(path: str) -> int:
    """Bytes of constants a decode step reads: all of them but the embedding table (one row)."""
    from pocket.describe import describe

    d = describe(path)
    vocab, dim = int(d["metadata"]["vocab_size"]), int(d["metadata"]["dim"])
    embedding = vocab * dim * (4 if "quantization" not in d["metadata"] else 0.5 + 4 * 2 / 32)
    return int(d["constant_bytes"] - embedding)


# ---- orchestration ----------------------------------------------------------------------------

def child(args) -> None:
    print(json.dumps(measure(args.child[0], args.child[1], int(args.child[2]), args.repeat, args.child[3])))


def available(engine: str) -> bool:
    if engine != "executorch":
        return True
    try:
        import executorch.runtime  # noqa: F401
        return True
    except ImportError:
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=CNN_MODELS + LLM_MODELS)
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--out", help="also write the markdown table here")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    engines = [e for e in ENGINES if available(e)]
    bandwidth = memory_bandwidth_gbs()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            files = {}
            for engine in engines:
                path = os.path.join(tmp, f"{name}.{engine}")
                print(f"{name}: exporting for {engine} ...", file=sys.stderr)
                try:
                    {"pocket": export_pocket, "executorch": export_executorch}.get(engine, lambda *_: None)(name, path)
                except Exception as e:  # report, keep going
                    print(f"  {engine} export failed: {e}", file=sys.stderr)
                    continue
                files[engine] = path
            for threads in args.threads:
                results = {}
                for engine, path in files.items():
                    out = subprocess.run([sys.executable, __file__, "--repeat", str(args.repeat), "--child", name,
                                          engine, str(threads), path], capture_output=True, text=True)
                    if out.returncode != 0:
                        print(f"  {name}/{engine}/{threads}: failed\n{out.stderr[-2000:]}", file=sys.stderr)
                        continue
                    results[engine] = json.loads(out.stdout.strip().splitlines()[-1])
                if "eager" not in results and "pocket" not in results:
                    continue
                rows.append(row(name, threads, results, files, bandwidth))
                print(table(HEADERS, rows[-1:]), file=sys.stderr)
    et_quant = " ".join(executorch_llama.quant_flags("8da4w"))
    text = (f"Pocket benchmark · {machine_line()} · memory read bandwidth {bandwidth:.1f} GB/s\n"
            "CNN/encoder rows: latency of one forward (ms, median of runs). LLM rows: decode ms/token "
            "(tok/s in parentheses) after a 32-token prompt; bound = bandwidth / weight bytes per token.\n"
            "vs eager = eager PyTorch time / Pocket time (>1: Pocket is faster), vs ExecuTorch likewise; "
            "ExecuTorch: XNNPACK delegate, "
            "threads set with its Python bindings' _unsafe_reset_threadpool; its RSS includes the torch "
            "libraries those bindings load. ExecuTorch LLM rows: export_llama (KV cache, sdpa_with_kv_cache, "
            f"XNNPACK; -8da4w rows: {et_quant}). -8da4w rows: eager is the fp32 model.\n\n"
            + table(HEADERS, rows))
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


HEADERS = ["model", "threads", "Pocket ms", "eager ms", "vs eager", "ExecuTorch ms", "vs ExecuTorch",
           "Pocket load ms", "Pocket RSS MB", "eager RSS MB", "ExecuTorch RSS MB", "file MB", "decode bound"]


def row(name, threads, r, files, bandwidth):
    p, e, x = r.get("pocket"), r.get("eager"), r.get("executorch")
    fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    cell = lambda res: "-" if res is None else (  # noqa: E731
        f"{res['ms']:.2f} ({res['tok_s']:.0f} tok/s)" if "tok_s" in res else f"{res['ms']:.2f}")
    size = os.path.getsize(files["pocket"]) / 2**20 if "pocket" in files else None
    bound = "-"
    if p is not None and "tok_s" in p:
        bound_tok_s = bandwidth * 1e9 / weight_bytes_per_token(files["pocket"])
        bound = f"{bound_tok_s:.0f} tok/s ({p['tok_s'] / bound_tok_s:.0%})"
    return [name, threads, cell(p), cell(e), fmt(e["ms"] / p["ms"]) if p and e else "-", cell(x),
            fmt(x["ms"] / p["ms"]) if p and x else "-", fmt(p and p["load_ms"]), fmt(p and p["rss_mb"]),
            fmt(e and e["rss_mb"]), fmt(x and x["rss_mb"]), fmt(size), bound]


if __name__ == "__main__":
    main()
