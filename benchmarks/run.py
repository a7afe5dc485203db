"""Pocket next to eager PyTorch and ExecuTorch+XNNPACK on the example models (fp32, and the CNNs
static int8) and on stories15M/110M-shaped LLMs, with 1 and 2 threads. ExecuTorch's LLM programs
come from its llama recipe (see executorch_llama.py). Peers: `pip install -r
benchmarks/requirements.txt`; an engine that is not installed is left out (the header says so).

    python benchmarks/run.py       # the whole table -> benchmarks/results/<date>-<cpu kind>.md
    python benchmarks/run.py --models mobilenet_v2 stories15M-8da4w --threads 1 --runs 2 --no-save  # shorter

Each (model, engine, threads) cell runs --runs times, each in a fresh process (peak RSS is that
engine's alone), the cells of a model interleaved, after waiting for an idle machine (the header
records the load seen, and how fast cores 0 and 1 pass a cache line back and forth: on a VM the
host may move the virtual CPUs apart, which slows every 2-thread cell; --max-round-trip NS waits
for near ones). CNN/encoder cells: the median of --repeat forwards per process, after
a warm-up of at least 3 forwards and 0.3 s (common.warm_up); LLM cells: a 32-token prompt, then
256 greedy decode steps (engines.py, the same loop for every engine). The table gives the
median over processes and the best in parentheses.

Decode bound: this machine's read-only memory bandwidth at that thread count (membw.c) divided
by the bytes a decode step reads: every weight but the embedding table (one row of it) plus the
KV cache up to the mean position of the decode.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import executorch_llama  # noqa: E402
import common  # noqa: E402
from common import DECODE, PROMPT, fmt_med_min, median_ms, peak_rss_mb, table  # noqa: E402

# "-int8": static int8 (Pocket's quantize="int8"; ExecuTorch's XNNPACKQuantizer through pt2e),
# both calibrated on the same CALIBRATION random inputs; eager runs the fp32 model.
CNN_MODELS = ["mlp", "resnet", "mobilenet_v2", "mobilenet_v3", "efficientnet", "encoder", "resnet-int8", "mobilenet_v2-int8",
              "mobilenet_v3-int8", "efficientnet-int8"]
CALIBRATION = 8
LLM_MODELS = ["stories15M", "stories15M-8da4w", "stories110M", "stories110M-8da4w"]
ENGINES = ["pocket", "eager", "executorch"]


def build(name: str):
    """(model, example inputs) for a model name; LLMs also return their shape."""
    if name in CNN_MODELS:
        from examples import models

        return getattr(models, name.removesuffix("-int8"))()[:2]
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
        quantized = {"quantize": "int8", "calibration": calibration(inputs)} if name.endswith("-int8") else {}
        pocket.export(model, inputs, **quantized).save(path)
        np.savez(path + ".npz", *[x.numpy() for x in inputs])


def calibration(inputs) -> list:
    """CALIBRATION random batches shaped like the example inputs (seeded: both engines get the same)."""
    import torch

    g = torch.Generator().manual_seed(0)
    return [tuple(torch.randn(x.shape, generator=g, dtype=x.dtype) for x in inputs) for _ in range(CALIBRATION)]


def export_executorch(name: str, path: str) -> None:
    if name in LLM_MODELS:
        model, _ = build(name)
        return executorch_llama.export(model, "8da4w" if name.endswith("8da4w") else None, path)
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    model, inputs = build(name)
    ep = torch.export.export(model, inputs)
    if name.endswith("-int8"):  # ExecuTorch's static int8 recipe: pt2e with the XNNPACK quantizer
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (XNNPACKQuantizer,
                                                                             get_symmetric_quantization_config)
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

        quantizer = XNNPACKQuantizer()
        quantizer.set_global(get_symmetric_quantization_config())
        prepared = prepare_pt2e(ep.module(), quantizer)
        for batch in calibration(inputs):
            prepared(*batch)
        ep = torch.export.export(convert_pt2e(prepared), inputs)
    program = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch()
    with open(path, "wb") as f:
        f.write(program.buffer)


# ---- one measurement, in a child process ----------------------------------------------------

def measure(name: str, engine: str, threads: int, repeat: int, path: str) -> dict:
    if name not in CNN_MODELS:
        return measure_llm(name, engine, threads, path)
    if engine == "pocket":  # numpy only: no torch in this process
        import numpy as np

        import pocket

        t0 = time.perf_counter()
        module = pocket.load(path)
        module.set_num_threads(threads)
        load_ms = (time.perf_counter() - t0) * 1e3
        with np.load(path + ".npz") as npz:
            arrays = [npz[k] for k in npz.files]
        run = lambda: module.forward(*arrays)  # noqa: E731
        used = module.num_threads
    else:
        import torch

        torch.set_num_threads(threads)
        _, inputs = build(name)
        if engine == "eager":
            model, _ = build(name)
            load_ms = 0.0

            def run():
                with torch.no_grad():
                    model(*inputs)
            used = torch.get_num_threads()
        else:
            from executorch.extension.pybindings import portable_lib
            from executorch.runtime import Runtime

            # XNNPACK and ExecuTorch's own parallel kernels share this pool (default: one thread a
            # core); sized before loading.
            portable_lib._unsafe_reset_threadpool(threads)
            t0 = time.perf_counter()
            method = Runtime.get().load_program(path).load_method("forward")
            load_ms = (time.perf_counter() - t0) * 1e3
            run = lambda: method.execute(list(inputs))  # noqa: E731
            used = int(portable_lib._threadpool_get_thread_count())
    common.warm_up(run)
    ms = median_ms(run, repeat)
    return {"ms": ms, "load_ms": load_ms, "rss_mb": peak_rss_mb(), "threads": {"forward": used},
            "cores": {"forward": common.cores_busy(run)}}


def measure_llm(name: str, engine: str, threads: int, path: str) -> dict:
    """engines.greedy on a fixed random 32-token prompt."""
    import numpy as np

    import engines

    prompt = [int(t) for t in np.random.default_rng(0).integers(0, 32000, PROMPT)]
    if engine == "pocket":
        e, load_ms = engines.timed_load(lambda: engines.PocketLLM(path, threads))
    elif engine == "executorch":
        e, load_ms = engines.timed_load(lambda: engines.ExecuTorchLLM(path, threads))
    else:
        # 8da4w rows compare with eager fp32: eager PyTorch has no fast 8da4w kernels (Pocket's
        # eager references are exact, not fast), and fp32 is what a PyTorch user would run.
        model, _ = build(name)
        e, load_ms = engines.TorchLLM(model, threads), 0.0
    r = engines.greedy(e, prompt, DECODE)
    return {**r, "ms": r["decode_ms"], "load_ms": load_ms, "rss_mb": peak_rss_mb()}


# ---- the decode bound ---------------------------------------------------------------------------

def decode_bytes_per_token(path: str) -> int:
    """Bytes a decode step of the Pocket program at `path` reads: its constants but the embedding
    table (one row of it) and the tokenizer, plus the KV cache up to the mean decode position.
    ExecuTorch's programs use the same scheme on the same shapes (int4 + one fp32 scale per 32
    weights, or fp32; an fp32 KV cache), so the same count stands for them."""
    from pocket.describe import describe

    d = describe(path)
    meta = d["metadata"]
    vocab, dim, max_seq = int(meta["vocab_size"]), int(meta["dim"]), int(meta["max_seq_len"])
    quantized = "8da4w" in os.path.basename(path)
    embedding = vocab * dim * (0.5 + 4 / 32 if quantized else 4)
    cache = sum(b for n, b in d["mutable_buffers"].items() if "cache" in n)
    return int(d["constant_bytes"] - d["tokenizer_bytes"] - embedding + cache / max_seq * (PROMPT + DECODE / 2))


# ---- orchestration ----------------------------------------------------------------------------

def available(engine: str) -> bool:
    if engine != "executorch":
        return True
    try:
        import executorch.runtime  # noqa: F401
        return True
    except ImportError:
        return False


def export_all(args, name: str, engines: list[str], tmp: str) -> dict:
    files = {}
    for engine in engines:
        path = os.path.join(tmp, f"{name}.{engine}")
        export = {"pocket": export_pocket, "executorch": export_executorch}.get(engine)
        if export is not None and not common.reuse(args, path):
            print(f"{name}: exporting for {engine} ...", file=sys.stderr)
            try:
                export(name, path + ".part")
            except Exception as e:  # report, keep going
                print(f"  {engine} export failed: {e}", file=sys.stderr)
                continue
            if os.path.exists(path + ".part.npz"):  # export_pocket's example inputs
                os.replace(path + ".part.npz", path + ".npz")
            os.replace(path + ".part", path)  # last: a kept --work folder never holds half an export
        files[engine] = path
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_run_options(ap)
    ap.add_argument("--models", nargs="+", default=CNN_MODELS + LLM_MODELS, choices=CNN_MODELS + LLM_MODELS)
    ap.add_argument("--engines", nargs="+", default=ENGINES, choices=ENGINES)
    ap.add_argument("--repeat", type=int, default=20, help="CNN/encoder forwards per process")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    isa = common.apply_isa(args)
    if args.child:
        name, engine, threads, path = args.child
        print(json.dumps(measure(name, engine, int(threads), args.repeat, path)))
        return
    engines = [e for e in args.engines if available(e)]
    missing = [e for e in args.engines if e not in engines]
    guard = common.guard_from(args)
    guard.before_run()
    bandwidth = common.memory_bandwidth(args.threads)
    rows = []
    with common.work_dir(args) as tmp:
        for name in args.models:
            files = export_all(args, name, engines, tmp)
            cells = [(e, t) for t in args.threads for e in engines if e in files or e == "eager"]
            results = common.run_cells(cells, lambda c: [__file__, "--repeat", str(args.repeat), "--child", name, c[0],
                                                         str(c[1]), files.get(c[0], "-")], args.runs, guard)
            for threads in args.threads:
                r = {e: results[(e, t)] for e, t in cells if t == threads and results[(e, t)]}
                if r:
                    rows.append(row(name, threads, r, files, bandwidth))
                    print(table(HEADERS, rows[-1:]), file=sys.stderr)
    et_quant = " ".join(executorch_llama.quant_flags("8da4w"))
    note = "".join(f"\n{e}: not installed (pip install -r benchmarks/requirements.txt)." for e in missing)
    text = (f"## Pocket benchmark\n\n{common.machine_line(args.threads)}\n{guard.summary()}\n"
            f"{common.bandwidth_line(bandwidth)}\nversions: {common.engine_versions()}{note}\n\n"
            f"CNN/encoder rows: ms of one forward (median of {args.repeat} per process). LLM rows: decode ms/token "
            f"(tok/s) over {DECODE} greedy steps after a {PROMPT}-token prompt. Each cell: median over {args.runs} "
            "fresh processes, best in parentheses. vs eager / vs ExecuTorch = their median time / Pocket's "
            "(>1: Pocket is faster). threads: what each engine reports it uses (Pocket/eager/ExecuTorch); "
            "cores: CPU time / wall time of forwards for 0.2 s after the timed ones (max over runs; a thread "
            "spinning between jobs counts). Bound: read bandwidth at that thread count / bytes a decode step reads "
            "(weights + KV cache); % = median tok/s / bound. "
            "ExecuTorch: XNNPACK delegate, its threadpool sized before loading; its RSS includes the torch libraries "
            "its bindings load. ExecuTorch LLM rows: export_llama (KV cache, sdpa_with_kv_cache, XNNPACK; -8da4w rows: "
            f"{et_quant}). -8da4w rows: eager is the fp32 model. -int8 rows: static int8 (Pocket quantize=\"int8\"; "
            "ExecuTorch pt2e with XNNPACKQuantizer's symmetric config), both calibrated on the same "
            f"{CALIBRATION} random batches; eager is the fp32 model.\n\n" + table(HEADERS, rows))
    common.write_results(text, args, isa)


HEADERS = ["model", "threads", "Pocket ms", "eager ms", "vs eager", "ExecuTorch ms", "vs ExecuTorch",
           "threads used P/e/X", "cores P/e/X", "Pocket load ms", "RSS MB P/e/X", "file MB", "decode bound (P / X %)"]


def row(name, threads, r, files, bandwidth):
    import statistics

    med = {e: statistics.median(x["ms"] for x in runs) for e, runs in r.items()}
    llm = name not in CNN_MODELS

    def cell(e):
        if e not in r:
            return "-"
        ms = [x["ms"] for x in r[e]]
        text = fmt_med_min(ms, 2)
        return f"{text} {1e3 / med[e]:.0f} tok/s" if llm else text

    ratio = lambda e: f"{med[e] / med['pocket']:.2f}" if e in med and "pocket" in med else "-"  # noqa: E731
    per = lambda f: "/".join(f(r[e]) if e in r else "-" for e in ENGINES)  # noqa: E731
    phases = lambda x: list(x.values())  # noqa: E731
    threads_used = per(lambda runs: ",".join(str(v) for v in dict.fromkeys(phases(runs[0]["threads"]))))
    cores = per(lambda runs: f"{max(max(phases(x['cores'])) for x in runs):.1f}")
    rss = per(lambda runs: f"{max(x['rss_mb'] for x in runs):.0f}")
    size = f"{os.path.getsize(files['pocket']) / 2**20:.1f}" if "pocket" in files else "-"
    bound = "-"
    if llm and "pocket" in files and threads in bandwidth:
        bound_tok_s = bandwidth[threads]["read_gbs"] * 1e9 / decode_bytes_per_token(files["pocket"])
        pct = lambda e: f"{1e3 / med[e] / bound_tok_s:.0%}" if e in med else "-"  # noqa: E731
        bound = f"{bound_tok_s:.0f} tok/s ({pct('pocket')} / {pct('executorch')})"
    load = fmt_med_min([x["load_ms"] for x in r["pocket"]], 1) if "pocket" in r else "-"
    return [name, threads, cell("pocket"), cell("eager"), ratio("eager"), cell("executorch"), ratio("executorch"),
            threads_used, cores, load, rss, size, bound]

if __name__ == "__main__":
    main()
