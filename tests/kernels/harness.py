"""Runs one portable kernel on torch values and compares it with the ATen op.

    check("aten::add.Tensor", [a, b, 2.0])                 # calls torch.ops.aten.add.Tensor
    check("aten::gelu", [x, "tanh"], rtol=1e-5, atol=1e-6)

Arguments are passed positionally in ATen schema order (defaults included). Tensors may be
non-contiguous (transposed, sliced): the kernel sees their strides. Lists of floats or bools
must be wrapped as floats([...]) / bools([...]); dtypes as dtype(torch.float32).
"""

import numpy as np
import torch

from native_testing import run_kernel
from pocket.exporter.emit import DTYPES as POCKET_DTYPES  # torch dtype -> program.fbs ScalarType


class floats(list):
    pass


class bools(list):
    pass


class dtype:
    def __init__(self, t):
        self.t = t


def to_native(x):
    if isinstance(x, torch.Tensor):
        if x.dtype == torch.bfloat16:  # numpy has none: raw 16-bit words ("V2"), strides kept
            return x.detach().view(torch.int16).numpy().view(np.dtype("V2"))
        return x.detach().numpy()  # keeps strides
    if isinstance(x, floats):
        return ("floats", [float(v) for v in x])
    if isinstance(x, bools):
        return ("bools", [bool(v) for v in x])
    if isinstance(x, dtype):
        return POCKET_DTYPES[x.t]
    if isinstance(x, (list, tuple)):
        return [to_native(v) for v in x]
    return x


def to_torch(x):
    if isinstance(x, (floats, bools)):
        return list(x)
    if isinstance(x, dtype):
        return x.t
    if isinstance(x, (list, tuple)) and not isinstance(x, torch.Tensor):
        return [to_torch(v) for v in x]
    return x


def op_of(name):
    ns, rest = name.split("::")
    op, _, overload = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, ns), op), overload or "default")


def call_aten(name, args):
    """Calls the ATen op with args in schema order (keyword-only ones passed by keyword)."""
    op = op_of(name)
    pos, kw = [], {}
    for spec, a in zip(op._schema.arguments, args):
        if spec.kwarg_only:
            kw[spec.name] = to_torch(a)
        else:
            pos.append(to_torch(a))
    return op(*pos, **kw)


def returns_list(name):
    """Whether ATen op `name` returns one Tensor[] (split, unbind, ...)."""
    try:
        returns = op_of(name)._schema.returns
    except (AttributeError, RuntimeError):
        return False
    return len(returns) == 1 and str(returns[0].type) == "List[Tensor]"


def output_buffer(o):
    """A zeroed array for the kernel to write output `o` into (its size is the capacity)."""
    if o.dtype == torch.bfloat16:
        return np.zeros(o.shape, dtype="V2")
    return np.zeros(o.shape, dtype=o.detach().numpy().dtype)


def from_native(g, like):
    t = torch.from_numpy(np.asarray(g))
    return t.view(torch.bfloat16) if like.dtype == torch.bfloat16 else t


def run(name, args, expected, num_threads=1):
    """Runs kernel `name` (the portable table, on a pool of num_threads) with outputs shaped
    like `expected`: a tensor, a tuple of tensors (several outputs, or the items of one
    Tensor[] output), or a Python int or bool (the result of a symbolic-int op, returned as
    such)."""
    native_args = [to_native(a) for a in args]
    if isinstance(expected, (bool, int)):
        return run_kernel(name, native_args, [type(expected)()], num_threads=num_threads)[0]
    outs = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    buffers = [output_buffer(o) for o in outs]
    if returns_list(name):
        got = run_kernel(name, native_args, [buffers], num_threads=num_threads)[0]
    else:
        got = run_kernel(name, native_args, buffers, num_threads=num_threads)
    assert len(got) == len(outs), f"{name}: {len(got)} outputs, expected {len(outs)}"
    return [from_native(g, o) for g, o in zip(got, outs)]


def check(name, args, rtol=1e-5, atol=1e-5, expected=None):
    """Asserts the kernel matches the ATen op (or `expected`) on `args`."""
    if expected is None:
        expected = call_aten(name, args)
    got = run(name, args, expected)
    if isinstance(expected, (bool, int)):
        assert type(got) is type(expected) and got == expected, f"{name}: {got!r} != {expected!r}"
        return got
    want = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape), f"{name}: shape {tuple(g.shape)} != {tuple(w.shape)}"
        assert g.dtype == w.dtype, f"{name}: dtype {g.dtype} != {w.dtype}"
        if w.dtype.is_floating_point:
            torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            assert torch.equal(g, w), f"{name}: {g} != {w}"
    return got
