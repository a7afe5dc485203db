"""The `pocket` command line.

    pocket export path/to/model.py:factory -o model.pocket     # needs torch
    pocket run model.pocket [--inputs inputs.npz] [--repeat 20]
    pocket inspect model.pocket
    pocket ops [--core]                                         # supported ops (--core: needs torch)
    pocket package [programs...] --out dist/ [--targets android,ios --standin]
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
import time

from pocket._errors import PocketError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pocket", description="Export and run PyTorch models with Pocket.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("export", help="export a model to a .pocket file (needs torch)")
    p.add_argument("factory", help="FILE.py:FUNCTION; the function returns (model, example_inputs[, dynamic_shapes])")
    p.add_argument("-o", "--output", required=True, help="the .pocket file to write")
    p.add_argument("--metadata", action="append", default=[], metavar="KEY=VALUE", help="store a metadata entry")
    p.add_argument("--force", action="store_true", help="overwrite an existing file that is not a .pocket file")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    p.add_argument("--repeated", metavar="PATH",
                   help="an nn.ModuleList of blocks in the model (e.g. layers): each kind of block is traced "
                        "once and copied (faster export, the same file)")
    _quant_args(p, static=True)
    p.set_defaults(run=_export)

    p = sub.add_parser("run", help="run a method on given or random inputs; print output shapes and latency")
    p.add_argument("model")
    p.add_argument("--method", default="forward")
    p.add_argument("--inputs", help=".npz with one array per input, in order (arr_0, arr_1, ... or any names)")
    p.add_argument("--repeat", type=int, default=1, help="runs to time (median is reported)")
    p.add_argument("--threads", type=int, default=0, help="kernel threads (0 = default)")
    p.add_argument("--profile", action="store_true",
                   help="time every instruction; print the time by op, by model layer and by source line")
    p.set_defaults(run=_run)

    llm = sub.add_parser("llm", help="LLM tools").add_subparsers(dest="llm_command", required=True)
    p = llm.add_parser("export", help="export a chat model (needs torch)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--checkpoint", help="a local Hugging Face folder (config.json, *.safetensors)")
    src.add_argument("--config", help="a config.json: random weights (tests, benchmarks)")
    src.add_argument("--gguf", help="a GGUF file (llama, qwen2, qwen3); its quantization is kept")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--max-seq-len", type=int, help="context length (default: min(model's, 1024))")
    p.add_argument("--chat-template", default="auto", choices=["auto", "llama3", "chatml", "llama2", "phi3", "gemma", "none"])
    p.add_argument("--seed", type=int, default=0, help="with --config: the random weights' seed")
    p.add_argument("--activations", choices=["fp32", "int8"], default="fp32",
                   help="with --gguf: activations of the kept quantized layers (fp32: exact to the file's "
                   "de-quantized model; int8: faster on int8 dot-product hardware)")
    p.add_argument("--kv-cache", choices=["fp32", "fp16"], default="fp32",
                   help="KV cache storage: fp16 halves its memory and the bytes attention reads (it still "
                   "computes in fp32)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file that is not a .pocket file")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    _quant_args(p, static=False)
    p.set_defaults(run=_llm_export)

    p = sub.add_parser("chat", help="chat with an LLM program (streams the reply)")
    p.add_argument("model")
    p.add_argument("--tokenizer", help="tokenizer.json / tiktoken / tokenizer.bin (default: the embedded one)")
    p.add_argument("--prompt", help="ask once, print the reply and exit (else an interactive loop)")
    p.add_argument("--system", help="system prompt")
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--top-p", type=float, default=0.9)
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--min-p", type=float, default=0.0)
    p.add_argument("--repetition-penalty", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--raw", action="store_true", help="no chat template: continue the text as given")
    p.add_argument("--stats", action="store_true", help="print speed after each reply")
    p.add_argument("--threads", type=int, default=0, help="kernel threads (0 = the performance cores)")
    p.set_defaults(run=_chat)

    p = sub.add_parser("inspect", help="show methods, inputs/outputs, ops, memory and metadata")
    p.add_argument("model")
    p.set_defaults(run=_inspect)

    p = sub.add_parser("ops", help="list the ops this runtime supports (--core: coverage of PyTorch's core "
                       "ATen ops, needs torch)")
    p.add_argument("--core", action="store_true", help="report core ATen coverage and the excepted ops")
    p.set_defaults(run=_ops)

    p = sub.add_parser("package", help="build the AAR, the XCFramework + Swift package, the wheel and a "
                       "manifest (from a source checkout)")
    p.add_argument("programs", nargs="*", help=".pocket files: a selective build with only their ops")
    p.add_argument("--out", default="dist", help="output folder (default dist/)")
    p.add_argument("--targets", help="comma-separated: android, ios, macos, apple, linux, wheel or target "
                   "names such as android-arm64-v8a (default: everything this machine can build)")
    p.add_argument("--ndk", help="Android NDK folder (default: $ANDROID_NDK or $ANDROID_NDK_HOME)")
    p.add_argument("--standin", action="store_true", help="where a toolchain is missing, build test-only "
                   "stand-ins (Linux ELF for Android, zig for Apple), marked as such and never published")
    p.add_argument("--release", action="store_true", help="release mode: every target with its real toolchain")
    p.add_argument("--swift-url", help="URL the released XCFramework zip will have (Package.swift uses it with "
                   "the checksum instead of the local path)")
    p.add_argument("--app", choices=["android", "ios"], help="write a chat app project (Gradle or Xcode) with "
                   "the one program given bundled and Pocket's artifacts wired in")
    p.add_argument("--app-name", help="with --app: the app's display name (default Pocket Chat)")
    p.add_argument("--app-id", help="with --app: application / bundle id (default dev.pocket.demo.chat)")
    p.set_defaults(run=_package)

    args = parser.parse_args(argv)
    try:
        return args.run(args) or 0
    except PocketError as e:
        print(f"error: {e.message}", file=sys.stderr)
        return 1
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def run() -> None:
    """The `pocket` script: main(), then an exit without Python's teardown. After an export the
    interpreter would spend seconds (2 s after `pocket llm export` on a 2.4 GHz core) collecting
    the cycles of torch's FX graphs and modules, object by object; by now every file the command
    wrote is closed, so only the standard streams and logging need flushing."""
    code = main()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing left to say
            pass
    os._exit(code)


def _ops(args) -> int:
    if args.core:
        from pocket.exporter.coverage import report

        print(report())
        return 0
    from pocket import _native

    optimized = set(_native.optimized_ops("best"))
    kernels = _native.kernel_names()
    width = max(len(name) for name, _ in kernels)
    for name, signature in kernels:
        note = f"  optimized ({_native.kernel_set('best')})" if name in optimized else ""
        print(f"{name:{width}}  {signature}{note}")
    print(f"{len(kernels)} ops")
    return 0


def _package(args) -> int:
    from pocket.packaging import PackageError, package, package_app

    say = lambda m: print(m, flush=True)  # noqa: E731
    try:
        if args.app:
            if len(args.programs) != 1:
                raise PackageError(f"--app takes exactly one model (.pocket), got {len(args.programs)}")
            package_app(args.app, args.programs[0], args.out, args.app_name, args.app_id, args.targets, args.ndk,
                        args.standin, say)
            return 0
        package(args.programs, out=args.out, target_spec=args.targets, ndk=args.ndk, standin=args.standin,
                release=args.release, swift_url=args.swift_url, say=say)
    except PackageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def _quant_args(p, static: bool) -> None:
    schemes = ["8da4w", "int8w", "int8"] if static else ["8da4w", "int8w"]
    p.add_argument("--quantize", choices=schemes, help="8da4w: int4 weights, int8 dynamic activations; int8w: int8 "
                   "weight-only" + ("; int8: static int8 convolutions (needs --calibration)" if static else ""))
    p.add_argument("--group-size", type=int, choices=[32, 64, 128, 256], help="weights per scale (default 32)")
    if static:
        p.add_argument("--calibration", help=".npz with one array per input, each [samples, *input shape]")


def _calibration(path: str | None) -> list | None:
    if path is None:
        return None
    import numpy as np
    import torch

    with np.load(path) as npz:
        arrays = [npz[k] for k in npz.files]
    if not arrays or any(len(a) != len(arrays[0]) for a in arrays):
        raise ValueError(f"{path}: expected one array per input, all with the same number of samples")
    return [tuple(torch.from_numpy(np.ascontiguousarray(a[i])) for a in arrays) for i in range(len(arrays[0]))]


def _export(args) -> int:
    _export_process()
    from pocket.exporter import ExportError, export

    path, _, func = args.factory.rpartition(":")
    if not path or not func:
        raise ValueError(f"expected FILE.py:FUNCTION, got {args.factory!r}")
    factory = _load_function(path, func)
    made = factory()
    if not isinstance(made, tuple) or len(made) not in (2, 3):
        raise ValueError(f"{func}() must return (model, example_inputs) or (model, example_inputs, dynamic_shapes)")
    model, inputs, shapes = (*made, None) if len(made) == 2 else made
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    metadata = dict(_key_value(kv) for kv in args.metadata)
    _check_overwrite(args.output, args.force)
    _note(args, f"exporting {type(model).__name__} from {path} ...")
    start = time.perf_counter()
    _show_progress(args, time.time())
    try:
        program = export(model, inputs, dynamic_shapes=shapes, metadata=metadata, quantize=args.quantize,
                         group_size=args.group_size, calibration=_calibration(args.calibration),
                         repeated=args.repeated)
    except ExportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    replaced = os.path.exists(args.output)
    program.save(args.output)
    s = program.summary
    print(f"{'replaced' if replaced else 'wrote'} {args.output}: {s['file_bytes']:,} bytes "
          f"({s['constant_bytes']:,} constants) in {time.perf_counter() - start:.1f} s")
    for name, m in s["methods"].items():
        print(f"  method {name}: {m['instructions']} instructions, {len(m['ops'])} ops, arena "
              f"{m['arena_bytes']:,} bytes (unplanned {m['unplanned_bytes']:,})")
    return 0


def _show_progress(args, start: float) -> None:
    """Export stages (the exporter's and pocket.llm's INFO log lines) on stderr, each with the
    seconds since the command started, unless --quiet."""
    import logging

    if args.quiet:
        return

    class Elapsed(logging.Formatter):
        def format(self, record):
            return f"[{record.created - start:6.1f} s] {record.getMessage()}"

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(Elapsed())
    logger = logging.getLogger("pocket")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def _export_process() -> None:
    """Sets up this process, which exports once and exits, before torch loads.
    - Idle OpenMP threads sleep instead of spinning (unless the user chose). On a busy machine a
      spinning thread holds the core its partner waits for: the export's tensor work
      (quantization, packing) ran 10x slower on a loaded 2-core machine.
    - No automatic cycle collection: each full pass walks every object torch holds (a quarter
      million once it is imported), over half a second of a SmolLM2 export before export()
      itself (which pauses collection too) begins."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    gc.disable()


def _note(args, text: str) -> None:
    """A progress message on stderr, unless --quiet."""
    if not args.quiet:
        print(text, file=sys.stderr)


def _llm_export(args) -> int:
    start = time.time()
    _export_process()
    _show_progress(args, start)
    from pocket.llm.models import recipe

    _check_overwrite(args.output, args.force)
    if args.gguf is not None:
        what = f"re-quantized to {args.quantize}" if args.quantize else f"keeping its quantization, {args.activations} activations"
        _note(args, f"exporting {args.gguf} ({what}) ...")
        program = recipe.export_gguf(args.gguf, args.max_seq_len, args.chat_template, args.activations, args.quantize,
                                     args.group_size, kv_cache=args.kv_cache)
    elif args.checkpoint is not None:
        _note(args, f"exporting {args.checkpoint} ...")
        program = recipe.export_checkpoint(args.checkpoint, args.max_seq_len, args.chat_template, args.quantize,
                                           args.group_size, kv_cache=args.kv_cache)
    else:
        template = "none" if args.chat_template == "auto" else args.chat_template
        _note(args, f"exporting {args.config} with random weights (seed {args.seed}) ...")
        program = recipe.export_random(args.config, args.seed, args.max_seq_len, template, args.quantize,
                                       args.group_size, kv_cache=args.kv_cache)
    replaced = os.path.exists(args.output)
    if not args.quiet:
        print(f"[{time.time() - start:6.1f} s] writing {args.output}", file=sys.stderr)
    program.save(args.output)
    md = program.summary
    print(f"{'replaced' if replaced else 'wrote'} {args.output}: {md['file_bytes']:,} bytes in "
          f"{time.time() - start:.1f} s")
    return 0


def _chat(args) -> int:
    from pocket.llm import Runner

    runner = Runner(args.model, args.tokenizer, num_threads=args.threads)
    sampling = dict(temperature=args.temperature, top_p=args.top_p, top_k=args.top_k, min_p=args.min_p,
                    repetition_penalty=args.repetition_penalty, seed=args.seed)
    chat = runner.chat(system=args.system)

    def reply(message: str) -> None:
        if args.raw:
            pieces = runner.generate(message, args.max_new_tokens, **sampling)
        else:
            pieces = chat.send(message, args.max_new_tokens, **sampling)
        try:
            for piece in pieces:
                print(piece, end="", flush=True)
        except KeyboardInterrupt:
            runner.stop()
        print()
        s = runner.stats
        if args.stats:
            print(f"[{s['prompt_tokens']} prompt tokens, {s['generated_tokens']} generated; first token "
                  f"{s['ttft_ms']:.0f} ms; prefill {s['prefill_tok_s']:.1f} tok/s, decode {s['decode_tok_s']:.1f} "
                  f"tok/s; stop: {s['stop_reason']}]", file=sys.stderr)
        if s["stop_reason"] == "context_full":
            print("[the context is full: /reset to start a new conversation]", file=sys.stderr)

    if args.prompt is not None:
        reply(args.prompt)
        return 0
    interactive = sys.stdin.isatty()
    if interactive:
        print(f"chatting with {args.model} ({runner.chat_template} template, context {runner.max_seq_len} tokens); "
              "/reset starts over, /exit or Ctrl-D quits", file=sys.stderr)
    while True:
        try:
            line = input("> " if interactive else "")
        except (EOFError, KeyboardInterrupt):
            print(file=sys.stderr)
            return 0
        line = line.strip()
        if not line:
            continue
        if line in ("/exit", "/quit"):
            return 0
        if line == "/reset":
            chat = runner.chat(system=args.system)
            print("[new conversation]", file=sys.stderr)
            continue
        try:
            reply(line)
        except PocketError as e:  # e.g. the context overflowed: say so and keep the loop
            print(f"error: {e.message}", file=sys.stderr)


def _load_function(path: str, func: str):
    import importlib.util

    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    if not hasattr(module, func):
        raise ValueError(f"{path} has no function {func!r}")
    return getattr(module, func)


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"--metadata takes KEY=VALUE, got {text!r}")
    return key, value


def _check_overwrite(path: str, force: bool) -> None:
    """Never silently replace something that is not a .pocket file."""
    if not os.path.exists(path) or force:
        return
    with open(path, "rb") as f:
        if f.read(8) != b"POCKETPG":
            raise ValueError(f"{path} exists and is not a .pocket file; use --force to overwrite it")


def _run(args) -> int:
    import numpy as np

    from pocket.runtime import load

    start = time.perf_counter()
    module = load(args.model)
    module.set_num_threads(args.threads)
    info = module.method_info(args.method)
    load_ms = (time.perf_counter() - start) * 1e3
    inputs = _read_inputs(args.inputs) if args.inputs else [_random_input(s) for s in info["inputs"]]
    arrays = module._native.run(args.method, inputs)  # warm-up, not timed
    module.set_profiling(args.profile)  # after the warm-up: its first-run costs stay out
    times = []
    for _ in range(max(args.repeat, 1)):
        t0 = time.perf_counter()
        arrays = module._native.run(args.method, inputs)
        times.append((time.perf_counter() - t0) * 1e3)
    print(f"loaded {args.model} in {load_ms:.1f} ms")
    for i, a in enumerate(inputs):
        print(f"  input {i}: {a.dtype}{list(a.shape)}")
    for i, a in enumerate(arrays):
        desc = f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a)
        print(f"  output {i}: {desc}")
    times.sort()
    print(f"latency: {times[len(times) // 2]:.3f} ms median, {times[0]:.3f} ms min, of {len(times)} runs")
    if args.profile:
        from pocket.profile import format_profile

        print(format_profile(module.profile(args.method), runs=len(times)))
    return 0


def _read_inputs(path: str) -> list:
    import numpy as np

    with np.load(path) as npz:
        return [np.ascontiguousarray(npz[k]) for k in npz.files]


def _random_input(spec):
    import numpy as np

    if spec is None:
        raise ValueError("the method takes a non-tensor input; pass --inputs")
    rng = np.random.default_rng(0)
    shape = spec["max_shape"]
    dtype = np.dtype(spec["dtype"]) if spec["dtype"] != "bfloat16" else np.uint16
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(0, 8, shape).astype(dtype)


def _inspect(args) -> int:
    from pocket.describe import describe, format_description

    print(format_description(describe(args.model)))
    return 0


if __name__ == "__main__":
    run()
