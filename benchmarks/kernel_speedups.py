"""Speed of the optimized CPU kernels against the portable ones (not a test).

    PYTHONPATH=build/dev/python python benchmarks/kernel_speedups.py [--threads 1 2] [--repeat 20]

For each case, the fastest of `repeat` calls of the portable kernel, then of each optimized
kernel set this CPU can run (e.g. avx2, avxvnni, avx512, avx512vnni), on 1 and 2 threads; the
speedup column is portable time / optimized time at the same thread count.
"""

import argparse
import sys

import numpy as np
import torch

import pocket.exporter.custom_ops  # noqa: F401  (registers torch.ops.pocket.*)
from pocket import _native

try:
    from pocket._native_testing import time_kernel
except ImportError:
    sys.exit("pocket._native_testing is not built: scripts/setup.sh --test, or scripts/dev_build.sh")
from pocket.exporter.quant.formats import WeightFormat, quantize


def native(a):
    if isinstance(a, torch.Tensor):
        return a.detach().numpy()
    if isinstance(a, list):
        return [native(v) for v in a]
    return a


def linear(m, k, n):
    return "aten::linear", [torch.randn(m, k), torch.randn(n, k), torch.randn(n)], (m, n)


def linear_q(m, k, n, act_mode, bits=4, group=32):
    q, s, mins = quantize(torch.randn(n, k), WeightFormat(bits, group, True))
    return "pocket::linear_q", [torch.randn(m, k), q, s, mins, None, bits, group, act_mode], (m, n)


def conv(n, c_in, c_out, hw, k, stride, groups):
    x, w = torch.randn(n, c_in, hw, hw), torch.randn(c_out, c_in // groups, k, k)
    pad = k // 2
    out = torch.nn.functional.conv2d(x, w, None, stride, pad, 1, groups)
    return ("aten::convolution", [x, w, torch.randn(c_out), [stride, stride], [pad, pad], [1, 1], False, [0, 0], groups],
            tuple(out.shape))


def sdpa(heads, kv_heads, t, start, d):
    q = torch.randn(1, heads, t, d)
    k, v = torch.randn(1, kv_heads, start + t, d), torch.randn(1, kv_heads, start + t, d)
    return "pocket::sdpa", [q, k, v, torch.tensor([start]), d ** -0.5], (1, heads, t, d)


CASES = {
    "linear fp32 M=1 K=N=768": lambda: linear(1, 768, 768),
    "linear fp32 M=32 K=N=768": lambda: linear(32, 768, 768),
    "linear_q 4-bit g32 fp32-act M=1 K=576 N=1536": lambda: linear_q(1, 576, 1536, 0),
    "linear_q 4-bit g32 int8-act M=1 K=576 N=1536": lambda: linear_q(1, 576, 1536, 1),
    "linear_q 4-bit g32 fp32-act M=1 K=N=768": lambda: linear_q(1, 768, 768, 0),
    "linear_q 4-bit g32 int8-act M=1 K=N=768": lambda: linear_q(1, 768, 768, 1),
    "linear_q 4-bit g32 int8/32-act M=1 K=N=768": lambda: linear_q(1, 768, 768, 2),
    "linear_q 4-bit g32 fp32-act M=32 K=N=768": lambda: linear_q(32, 768, 768, 0),
    "linear_q 4-bit g32 int8-act M=32 K=N=768": lambda: linear_q(32, 768, 768, 1),
    "linear_q 8-bit g32 int8-act M=1 K=N=768": lambda: linear_q(1, 768, 768, 1, bits=8),
    "conv 1x1 64->128 56x56": lambda: conv(1, 64, 128, 56, 1, 1, 1),
    "conv 1x1 256->256 14x14": lambda: conv(1, 256, 256, 14, 1, 1, 1),
    "conv dw3x3 s1 128ch 56x56": lambda: conv(1, 128, 128, 56, 3, 1, 128),
    "conv dw3x3 s2 128ch 56x56": lambda: conv(1, 128, 128, 56, 3, 2, 128),
    "sdpa decode 9 heads (3 kv) ctx 512 D=64": lambda: sdpa(9, 3, 1, 511, 64),
}


def tables():
    """The optimized kernel sets this CPU can run, cheapest first (feature lists)."""
    f = _native.cpu_features()
    out = []
    for features in (["avx2_fma"], ["avx2_fma", "avx_vnni"], ["avx2_fma", "avx512"],
                     ["avx2_fma", "avx512", "avx512_vnni"], ["neon"], ["neon", "dotprod"]):
        if all(f.get(x) for x in features):
            out.append(",".join(features))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    args = ap.parse_args()
    torch.manual_seed(0)
    sets = tables()
    print(f"CPU features: {_native.cpu_features()}")
    header = f"{'case':48s} {'thr':>3s} {'portable us':>12s} " + " ".join(
        f"{_native.kernel_set(t) + ' us':>14s} {'x':>6s}" for t in sets)
    print(header)
    for name, make in CASES.items():
        if args.only not in name:
            continue
        op, inputs, out_shape = make()
        nat = [native(a) for a in inputs]
        for threads in args.threads:
            def t(table):
                out = np.zeros(out_shape, dtype=np.float32)
                return time_kernel(op, nat, [out], table, threads, args.repeat) * 1e6
            base = t("portable")
            row = f"{name:48s} {threads:3d} {base:12.1f} "
            row += " ".join(f"{ms:14.1f} {base / ms:6.1f}" for ms in (t(s) for s in sets))
            print(row, flush=True)


if __name__ == "__main__":
    main()
