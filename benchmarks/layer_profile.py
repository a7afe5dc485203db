"""Pocket's time per instruction next to ExecuTorch+XNNPACK's time per delegate op, for one of
the example CNNs (not a test): where a model's gap to XNNPACK lies, layer by layer.

    python benchmarks/layer_profile.py mobilenet_v2 [--threads 1] [--runs 2000] [--work DIR]

Pocket: Module.set_profiling (per instruction, its model layer). ExecuTorch: an ETDump of the
XNNPACK delegate's own per-op events (the PyPI build records them, in whole microseconds), read
with executorch.devtools.Inspector; its median per op. Both programs come from benchmarks/run.py's
export (fp32, or static int8 for "-int8" names; reused from --work when there). Rows are paired
by position: that pairs op for op when both engines fuse alike (convolution + bias + clamp, as
for the example CNNs), and says nothing when they do not; the sums at the end hold either way.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # noqa: E402
import run  # noqa: E402

# ETDump events that are not one delegate op: the program's load and its whole calls.
NOT_OPS = {"Method::init", "Program::load_method", "DELEGATE_CALL", "OPERATOR_CALL", "Method::execute"}


def pocket_profile(path: str, arrays: list, threads: int, runs: int) -> list[tuple[str, float]]:
    import pocket

    module = pocket.load(path)
    module.set_num_threads(threads)
    common.warm_up(lambda: module.forward(*arrays))
    module.set_profiling(True)
    for _ in range(runs):
        module.forward(*arrays)
    method = module.method_names[0]
    return [(f"{r['op'].split('::')[-1]} {r['layer'].split(' ')[0]}".strip(), r["ms"] / r["calls"] * 1e3)
            for r in module.profile(method)]


def executorch_profile(path: str, inputs: tuple, threads: int, runs: int, work: str) -> list[tuple[str, float]]:
    from executorch.devtools import Inspector
    from executorch.extension.pybindings import portable_lib

    portable_lib._unsafe_reset_threadpool(threads)
    module = portable_lib._load_for_executorch(path, enable_etdump=True, debug_buffer_size=0)
    common.warm_up(lambda: module.forward(inputs))
    for _ in range(runs):
        module.forward(inputs)
    etdump = os.path.join(work, "layer_profile.etdp")
    module.write_etdump_result_to_file(etdump)
    frame = Inspector(etdump_path=etdump).to_dataframe()
    return [(row.event_name, row["p50 (ms)"] * 1e3) for _, row in frame.iterrows() if row.event_name not in NOT_OPS]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", choices=[m for m in run.CNN_MODELS if m not in ("mlp", "encoder")])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=2000, help="profiled forwards per engine")
    ap.add_argument("--work", default=None, help="where the programs are kept (default: a temporary folder)")
    args = ap.parse_args()
    with common.work_dir(args) as work:
        profile(args, work)


def profile(args, work: str) -> None:
    import numpy as np
    import torch

    pocket_path = os.path.join(work, f"{args.model}.pocket")
    et_path = os.path.join(work, f"{args.model}.pte")
    if not common.reuse(args, pocket_path):
        print(f"exporting {args.model} for Pocket ...", file=sys.stderr)
        run.export_pocket(args.model, pocket_path)
    if not common.reuse(args, et_path):
        print(f"exporting {args.model} for ExecuTorch ...", file=sys.stderr)
        run.export_executorch(args.model, et_path)
    with np.load(pocket_path + ".npz") as npz:
        arrays = [npz[k] for k in npz.files]
    inputs = tuple(torch.from_numpy(a) for a in arrays)
    ours = pocket_profile(pocket_path, arrays, args.threads, args.runs)
    theirs = executorch_profile(et_path, inputs, args.threads, args.runs, work)
    print(f"{args.model}, {args.threads} thread(s), {common.cpu_model()}: us per call (Pocket: mean per "
          f"instruction over {args.runs} forwards; XNNPACK: median per op); rows paired by position")
    rows = []
    for i in range(max(len(ours), len(theirs))):
        a = ours[i] if i < len(ours) else ("", float("nan"))
        b = theirs[i] if i < len(theirs) else ("", float("nan"))
        rows.append([a[0], f"{a[1]:.1f}", b[0], f"{b[1]:.1f}", f"{a[1] - b[1]:+.1f}"])
    total_ours, total_theirs = sum(t for _, t in ours), sum(t for _, t in theirs)
    rows.append(["sum", f"{total_ours:.1f}", "sum", f"{total_theirs:.1f}", f"{total_ours - total_theirs:+.1f}"])
    print(common.table(["Pocket instruction", "us", "XNNPACK op", "us", "Pocket - XNNPACK"], rows))


if __name__ == "__main__":
    main()
