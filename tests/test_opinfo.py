"""PyTorch's own OpInfo samples through Pocket: export a one-op module per sample, run it in the
runtime, compare with eager.

For every OpInfo (torch.testing._internal.common_methods_invocations.op_db) whose op Pocket
runs (its ATen name is in the kernel tables, or it is listed in EXTRA), each sample input in
float32 and the integer/bool dtypes the op accepts becomes a module whose forward calls the op
with the sample's tensors as inputs and its other arguments as constants. The module goes
through pocket.export (decomposition, op check, memory plan, serialization), is loaded from
bytes and run; outputs must match eager (same shape and dtype; floats to TOL, others exactly).

Skips, each with its reason: samples torch.export itself cannot capture (PyTorch's error is the
reason), samples whose eager call raises, and the entries of SKIP (dtypes and features Pocket
does not have). Everything else that fails is a failure.

The default run caps the samples per op and dtype (SAMPLES) to stay within CI's budget; the full
sweep is
    POCKET_OPINFO_SAMPLES=all python -m pytest tests/test_opinfo.py
The optimized kernels (linear, mm, bmm, addmm, convolution, sdpa) are what Module runs on this
CPU; test_capped_kernel_sets repeats their samples with POCKET_KERNELS=portable (and =avx2 on
an AVX-512 CPU).
"""

import os
import subprocess
import sys

import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils import _pytree as pytree

import pocket
from pocket.exporter import ExportError
from pocket.exporter.supported_ops import SUPPORTED_OPS

SAMPLES = os.environ.get("POCKET_OPINFO_SAMPLES", "2")
TOL = dict(rtol=1e-5, atol=1e-5)  # as tests/kernels (harness.check)
# Looser tolerances, with the reason.
OP_TOL = {
    # float32 reductions accumulate in double here, in float (pairwise) in ATen
    "linalg.vector_norm": dict(rtol=1e-4, atol=1e-5),
    "nn.functional.normalize": dict(rtol=1e-4, atol=1e-5),
    "var": dict(rtol=1e-4, atol=1e-5),
    "prod": dict(rtol=1e-4, atol=1e-5),
    # GEMM/conv accumulation order differs from ATen's (blocked, SIMD)
    "mm": dict(rtol=1e-4, atol=1e-4),
    "bmm": dict(rtol=1e-4, atol=1e-4),
    "addmm": dict(rtol=1e-4, atol=1e-4),
    "nn.functional.linear": dict(rtol=1e-4, atol=1e-4),
    "nn.functional.conv1d": dict(rtol=1e-4, atol=1e-4),
    "nn.functional.conv2d": dict(rtol=1e-4, atol=1e-4),
    "nn.functional.conv3d": dict(rtol=1e-4, atol=1e-4),
    "nn.functional.scaled_dot_product_attention": dict(rtol=1e-4, atol=1e-4),
}

# OpInfos (name or name.variant) that reach supported ATen ops under another name.
EXTRA = {
    "nn.functional.normalize", "softmax", "log_softmax", "nn.functional.conv1d",
    "nn.functional.conv2d", "nn.functional.conv3d", "nn.functional.elu", "nn.functional.silu",
    "nn.functional.softplus", "nn.functional.hardsigmoid", "nn.functional.embedding",
    "nn.functional.layer_norm", "nn.functional.group_norm", "nn.functional.max_pool2d",
    "nn.functional.adaptive_avg_pool2d", "nn.functional.relu6", "nn.functional.mish",
    "nn.functional.scaled_dot_product_attention", "nn.functional.glu", "floor_divide",
    "nn.functional.interpolate.nearest", "nn.functional.interpolate.bilinear",
    "nn.functional.upsample_nearest", "nn.functional.upsample_bilinear", "scatter_add",
    "scatter_reduce.sum", "scatter_reduce.prod", "scatter_reduce.mean", "scatter_reduce.amax",
    "scatter_reduce.amin", "nn.functional.pad.reflect", "nn.functional.pad.replicate",
    "nn.functional.max_pool1d", "nn.functional.max_pool3d", "nn.functional.adaptive_avg_pool1d",
    "nn.functional.adaptive_avg_pool3d", "nn.functional.instance_norm", "diag", "linalg.diagonal",
    "nn.functional.embedding_bag", "cdist", "nn.functional.pdist", "nn.functional.grid_sample",
}

# (name, variant) -> reason the whole OpInfo is not swept.
SKIP_OPS = {
    ("bmm", "triton_optimized"): "a CUDA (triton) variant",
    ("empty", ""): "uninitialized memory: nothing to compare",
    ("empty_strided", ""): "uninitialized memory: nothing to compare",
    ("as_strided", "partial_views"): "inputs are views of a larger storage that as_strided reads past; "
                                     "an exported input is its own storage",
    ("arange", ""): "samples are Python scalars, no tensor input",
    ("full", ""): "samples are Python scalars, no tensor input",
    ("scalar_tensor", ""): "samples are Python scalars, no tensor input",
}

# Pocket's kernels for these are float-only (integer convolutions, GEMMs and pools do not occur
# in the models Pocket runs); their integer samples are skipped.
FLOAT_ONLY = {
    "addmm", "bmm", "mm", "nn.functional.linear", "nn.functional.conv1d", "nn.functional.conv2d",
    "nn.functional.conv3d", "nn.functional.avg_pool2d", "nn.functional.max_pool2d",
    "nn.functional.relu", "nn.functional.relu6", "nn.functional.adaptive_avg_pool2d",
    "nn.functional.interpolate", "nn.functional.upsample_nearest", "nn.functional.upsample_bilinear",
    "nn.functional.avg_pool1d", "nn.functional.avg_pool3d", "nn.functional.max_pool1d",
    "nn.functional.max_pool3d",
}


def skip_reason(op, sample):
    """Why Pocket does not run this sample (a feature it does not have), or None."""
    if sample.kwargs.get("dropout_p", 0.0) > 0:
        return "random dropout (training only)"
    if op.name == "index_put" and any(i.dtype == torch.bool for i in sample.args[0] if i is not None):
        return "boolean mask indices (data-dependent count; use torch.where)"
    if (op.name == "nn.functional.instance_norm" and sample.kwargs.get("use_input_stats", True)
            and sample.kwargs.get("running_mean") is not None):
        return "updates the running stats passed as inputs (input mutation)"
    if op.name == "_native_batch_norm_legit" and len(sample.args) >= 3 and sample.args[2] is not None:
        # The overload with running stats declares them mutated (Tensor(a!)), training or not;
        # models in eval mode export _native_batch_norm_legit_no_training instead.
        return "running stats are in-place arguments of this overload (input mutation)"
    if op.name == "nn.functional.embedding_bag" and sample.kwargs.get("max_norm") is not None:
        return "max_norm renormalizes the weight in place (input mutation)"
    if op.name == "nn.functional.grid_sample" and sample.input.dim() == 5:
        return "grid_sampler_3d (volumetric grid_sample) is not a core op Pocket runs"
    return None


# float32, then one integer dtype and bool (fewer samples in the capped run).
DTYPES = [torch.float32, torch.int64, torch.bool]
OTHER_DTYPE_SAMPLES = 1

SUPPORTED_NAMES = {k.split("::")[1].split(".")[0] for k in SUPPORTED_OPS}


def _id(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _swept(op):
    if (op.name, op.variant_test_name) in SKIP_OPS:
        return False
    return (op.aten_name or op.name) in SUPPORTED_NAMES or op.name in EXTRA or _id(op) in EXTRA


OPS = [op for op in op_db if _swept(op)]


class OneOp(torch.nn.Module):
    """Calls `fn` on the sample's arguments: tensors from forward's inputs, the rest constant."""

    def __init__(self, fn, leaves, spec):
        super().__init__()
        self.fn, self.leaves, self.spec = fn, leaves, spec

    def forward(self, *tensors):
        it = iter(tensors)
        leaves = [next(it) if isinstance(v, torch.Tensor) else v for v in self.leaves]
        x, args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        return self.fn(x, *args, **kwargs)


def _samples(op, dtype):
    try:
        samples = op.sample_inputs("cpu", dtype, requires_grad=False)
    except Exception:  # some sample generators reject a dtype outright
        return []
    n = None if SAMPLES == "all" else int(SAMPLES) if dtype == torch.float32 else OTHER_DTYPE_SAMPLES
    out = []
    for s in samples:
        if n is not None and len(out) >= n:
            break
        out.append(s)
    return out


# Ops whose (values, indices) result may order equal values either way (ATen does not define
# it): indices are checked by gathering the input at them.
TIES = {"sort", "topk", "argsort", "msort"}


def _compare(name, got, want, sample=None):
    got_l, want_l = pytree.tree_leaves(got), pytree.tree_leaves(want)
    if name in TIES and len(want_l) == 2:
        x, pos = sample.input, list(sample.args[1:] if name == "topk" else sample.args)
        dim = sample.kwargs.get("dim", pos[0] if pos else -1)
        if x.dim() > 0:
            got_l[1] = torch.gather(x, dim, torch.as_tensor(got_l[1]))
            want_l[1] = torch.gather(x, dim, want_l[1])
    assert len(got_l) == len(want_l), f"{len(got_l)} outputs, expected {len(want_l)}"
    tol = OP_TOL.get(name, TOL)
    for k, (g, w) in enumerate(zip(got_l, want_l)):
        if not isinstance(w, torch.Tensor):
            w = torch.tensor(w)
        g = torch.as_tensor(g)
        assert tuple(g.shape) == tuple(w.shape), f"output {k}: shape {tuple(g.shape)} != {tuple(w.shape)}"
        assert g.dtype == w.dtype, f"output {k}: dtype {g.dtype} != {w.dtype}"
        if w.dtype.is_floating_point:
            torch.testing.assert_close(g, w, equal_nan=True, **tol, msg=lambda m: f"output {k}: {m}")
        else:
            assert torch.equal(g, w), f"output {k}: {g} != {w}"


def run_sample(op, sample):
    """Exports, runs and compares one sample; returns None or the reason it was skipped."""
    leaves, spec = pytree.tree_flatten((sample.input, sample.args, sample.kwargs))
    tensors = tuple(v for v in leaves if isinstance(v, torch.Tensor))
    if not tensors:
        return "no tensor argument"
    unsupported = [t.dtype for t in tensors if t.dtype in (torch.float16, torch.bfloat16) or t.is_complex()]
    if unsupported:
        return f"dtype {unsupported[0]} is not supported by Pocket"
    reason = skip_reason(op, sample)
    if reason:
        return reason
    try:
        with torch.no_grad():
            want = op.op(sample.input, *sample.args, **sample.kwargs)
    except Exception as e:
        return f"eager raises {type(e).__name__}"
    if any(not isinstance(w, (torch.Tensor, int, float, bool)) for w in pytree.tree_leaves(want)):
        return "non-tensor output"
    try:
        program = pocket.export(OneOp(op.op, leaves, spec), tensors)
    except ExportError as e:
        if str(e).startswith("torch.export failed"):
            return f"torch.export cannot capture it: {str(e).splitlines()[0][:160]}"
        raise
    got = pocket.Module.from_bytes(program.data).forward(*tensors)
    _compare(op.name, got, want, sample)
    return None


@pytest.mark.parametrize("op", OPS, ids=[_id(op) for op in OPS])
def test_opinfo(op):
    ran, skipped = 0, {}
    for dtype in DTYPES:
        if dtype not in op.supported_dtypes("cpu") or (dtype != torch.float32 and op.name in FLOAT_ONLY):
            continue
        for i, sample in enumerate(_samples(op, dtype)):
            try:
                reason = run_sample(op, sample)
            except Exception as e:
                raise AssertionError(f"{_id(op)} {dtype} sample {i} ({sample.summary()}): {e}") from e
            if reason is None:
                ran += 1
            else:
                skipped[reason] = skipped.get(reason, 0) + 1
    if ran == 0:
        pytest.skip(f"no sample ran: {skipped}")


# OpInfos whose exported op has an optimized kernel (runtime_core/kernels/optimized). The sweep
# above runs them through Module, i.e. best_kernels(): the optimized kernel on this CPU.
OPTIMIZED = ["mm", "bmm", "addmm", "addmm.decomposed", "nn.functional.linear",
             "nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.conv3d"]


def _capped_sets():
    """POCKET_KERNELS values that change this CPU's kernels: portable, and the smaller SIMD
    sets of a CPU without AVX-512 (with and without AVX-VNNI; or without SDOT) when this one
    has them."""
    from pocket import _native

    have = _native.cpu_features()
    return (["portable"] + (["avx2"] if have.get("avx512") else []) +
            (["avxvnni"] if have.get("avx512") and have.get("avx_vnni") else []) +
            (["neon"] if have.get("dotprod") else []))


def _kernel_set_in_child(cap):
    """The kernel set a fresh process picks with POCKET_KERNELS=cap (the table is chosen once per
    process). -P: the working directory stays off sys.path (the repo root's packaging/ folder
    would shadow the `packaging` library pytest imports)."""
    return subprocess.run([sys.executable, "-P", "-c", "from pocket import _native; print(_native.kernel_set())"],
                          env={**os.environ, "POCKET_KERNELS": cap}, capture_output=True, text=True)


@pytest.mark.skipif("POCKET_KERNELS" in os.environ, reason="this is a capped run")
def test_unknown_kernel_cap_is_reported():
    """A POCKET_KERNELS value that is no kernel set (a typo) caps nothing and says so on stderr;
    a known one and an empty one say nothing."""
    from pocket import _native

    r = _kernel_set_in_child("avx-2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == _native.kernel_set()
    assert ("POCKET_KERNELS=avx-2 is not a kernel set (portable, avx2, avxvnni, avx512, neon, neondot); ignored"
            in r.stderr)
    for value in ("portable", ""):
        r = _kernel_set_in_child(value)
        assert r.returncode == 0 and "POCKET_KERNELS" not in r.stderr, r.stderr
        assert r.stdout.strip() == ("portable" if value else _native.kernel_set())


@pytest.mark.skipif("POCKET_KERNELS" in os.environ, reason="this is a capped run")
@pytest.mark.parametrize("cap", _capped_sets())
def test_capped_kernel_sets(cap):
    """The same samples of OPTIMIZED ops with POCKET_KERNELS=cap: the portable kernels, or an
    AVX2-only (NEON-only) CPU's kernels on this one (the table is chosen once per process,
    hence the child process, which also checks that the cap took)."""
    ids = [f"{os.path.abspath(__file__)}::test_opinfo[{n}]" for n in OPTIMIZED]
    r = _kernel_set_in_child(cap)
    assert r.stdout.strip() == cap, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", *ids],
                       env={**os.environ, "POCKET_KERNELS": cap}, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert f"{len(OPTIMIZED)} passed" in r.stdout, r.stdout[-2000:]
