"""Running .pocket files from Python: pocket.load() and Module. Imports no torch.

Inputs may be numpy arrays, Python numbers, or torch tensors (when the caller already
uses torch); outputs come back as numpy arrays, or as torch tensors when torch tensors
went in, in the same structure (tensor, tuple, list, dict) as the eager model returned.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import numpy as np

from pocket import _native
from pocket._errors import PocketError


def _error(status: str, message: str) -> PocketError:
    """A PocketError with the runtime's number for `status` (e.g. "INVALID_ARGUMENT")."""
    return PocketError(_native.STATUS[status], status, message)


def load(path: str | os.PathLike | int, mmap: bool = True, *, offset: int = 0, length: int | None = None) -> "Module":
    """Loads and verifies a .pocket file.

    Args:
        path: the file, or an open file descriptor (int; borrowed, not closed). With mmap=True
            (the default) constants are used in place.
        offset, length: where the program lies inside the file (e.g. an entry stored, not
            deflated, in a zip; a model inside an APK); length None: to the end of the file.
            The region is mapped in place when offset is a multiple of 16, read otherwise
            (Module.mapped tells which).
    Raises:
        PocketError: missing file (NOT_FOUND), malformed file (INVALID_PROGRAM), unsupported
            format version or op (UNSUPPORTED); a region beyond the end of the file
            (OUT_OF_RANGE) or without a .pocket header at `offset` (INVALID_PROGRAM).
    """
    if isinstance(path, int) or offset or length is not None:
        return Module(file_region(path, offset, length, lambda *region: _native.Module.from_fd(*region, mmap)))
    return Module(_native.Module.from_file(os.fspath(path), mmap))


def file_region(source: str | os.PathLike | int, offset: int, length: int | None, load: Any) -> Any:
    """Calls load(fd, offset, length) for a region of `source` (a path, opened and closed
    here, or a descriptor); errors about a path name the path."""
    if isinstance(source, bool) or not isinstance(offset, int) or offset < 0 or \
            (length is not None and (not isinstance(length, int) or length < 0)):
        name = f"fd {source}" if isinstance(source, int) else f"'{os.fspath(source)}'"
        raise _error("INVALID_ARGUMENT", f"{name}: offset {offset!r} and length {length!r} must be integers >= 0")
    if isinstance(source, int):
        return load(source, offset, os.fstat(source).st_size - offset if length is None else length)
    path = os.fspath(source)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise _error("NOT_FOUND", f"cannot open '{path}': no such file") from None
    try:
        if length is None:
            length = max(os.fstat(fd).st_size - offset, 0)
        return load(fd, offset, length)
    except PocketError as e:
        raise PocketError(e.code, e.status, f"'{path}', {e.message.replace(f'fd {fd}, ', '', 1)}") from None
    finally:
        os.close(fd)


class Module:
    """A loaded program. `m.forward(x)` runs the "forward" method; `m.run(name, *args)` any.

    Threads: a module may be shared between threads. Calls on one module run one at a time
    (its planned memory is shared; a second caller waits), with the GIL released while the
    model runs, so separate modules on separate threads run in parallel.
    """

    def __init__(self, native: "_native.Module"):
        self._native = native
        self.method_names: list[str] = native.method_names()
        self.metadata: dict[str, str] = native.metadata()
        self._info: dict[str, dict] = {}

    @classmethod
    def from_bytes(cls, data: bytes) -> "Module":
        """Loads a program from memory (the bytes are copied)."""
        return cls(_native.Module.from_bytes(bytes(data)))

    @property
    def mapped(self) -> bool:
        """True when the program is used in place from a file mapping (no copy)."""
        return self._native.mapped

    def method_info(self, method: str = "forward") -> dict:
        """Inputs and outputs (dtype, min_shape, max_shape) and arena sizes of a method."""
        if method not in self._info:
            self._info[method] = self._native.method_info(method)
        return self._info[method]

    def forward(self, *args: Any) -> Any:
        return self.run("forward", *args)

    __call__ = forward

    def run(self, method: str, *args: Any) -> Any:
        """Runs `method` on args laid out like the eager model's (nested tuples/lists/dicts ok):
        numpy arrays in, numpy arrays out; with any torch tensor among the inputs, torch tensors
        out. numpy has no bfloat16: bfloat16 values travel as numpy uint16 words (their bits)."""
        info = self.method_info(method)
        leaves = _flatten(args)
        torch_in = any(_is_torch(x) for x in leaves)
        arrays = [_to_numpy(x, i, info) for i, x in enumerate(leaves)]
        outputs = self._native.run(method, arrays)
        if torch_in:
            import torch

            outputs = [_to_torch(torch, o) if isinstance(o, np.ndarray) else o for o in outputs]
        spec = info.get("output_spec")
        if not spec:
            return tuple(outputs)
        try:
            return _unflatten(json.loads(spec), iter(outputs))
        except (ValueError, KeyError, TypeError, StopIteration) as e:
            raise _error("INVALID_PROGRAM", f"method '{method}': malformed output_spec metadata ({e})") from e

    def set_num_threads(self, n: int) -> None:
        """Threads kernels may use; 0 = the default (the performance cores)."""
        self._native.set_num_threads(n)

    @property
    def num_threads(self) -> int:
        return self._native.num_threads

    def set_memory_limit(self, nbytes: int) -> None:
        """Bytes the module may allocate for arenas, buffers and scratch space (default: the
        machine's physical memory). A program that needs more fails with PocketError
        OUT_OF_MEMORY, naming the limit, before anything is allocated."""
        self._native.set_memory_limit(nbytes)

    @property
    def memory_limit(self) -> int:
        return self._native.memory_limit

    def reset_buffers(self) -> None:
        """Restores mutable buffers (e.g. a KV cache) to their initial values."""
        self._native.reset_buffers()

    def set_profiling(self, on: bool) -> None:
        """From now on (True) every run times each instruction, counts cleared; False stops."""
        self._native.set_profiling(bool(on))

    def profile(self, method: str = "forward") -> list[dict]:
        """Per instruction of `method`, in the order they run, since profiling was turned on:
        {"op", "layer" (the model's submodule, "features.3.conv.0 (Conv2d)"), "source" (the
        model's source line), "calls", "ms"}; layer and source are "" when unknown.

            m.set_profiling(True)
            m.forward(x)
            print(pocket.profile.format_profile(m.profile()))

        Raises PocketError INVALID_ARGUMENT while profiling is off."""
        return [dict(op=op, layer=layer, source=source, calls=calls, ms=ns / 1e6)
                for op, source, layer, calls, ns in self._native.profile(method)]

    def __repr__(self) -> str:
        return f"pocket.Module(methods={self.method_names})"


def _is_torch(x: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _to_numpy(x: Any, i: int, info: dict) -> np.ndarray:
    specs = info["inputs"]
    spec = specs[i] if i < len(specs) else None  # None past the inputs: the runtime counts them
    if _is_torch(x):
        x = x.detach().cpu().contiguous()
        import torch

        if x.dtype == torch.bfloat16:
            return x.view(torch.int16).numpy().view(np.uint16)
        return x.numpy()
    if isinstance(x, np.ndarray):
        if x.dtype == np.uint16 and spec and spec["dtype"] != "bfloat16":
            raise _error("INVALID_ARGUMENT", f"input {i}: a uint16 array carries bfloat16 words (numpy has "
                         f"no bfloat16), but this input is {spec['dtype']}")
        return np.ascontiguousarray(x)
    if isinstance(x, (bool, int, float, np.generic)):
        dtype = spec["dtype"] if spec else "float32"
        if dtype == "bfloat16":
            return _bfloat16_words(np.asarray(x, dtype=np.float32))
        return np.asarray(x, dtype=dtype)
    raise _error("INVALID_ARGUMENT", f"input {i}: expected a tensor or array, got {type(x).__name__}")


def _bfloat16_words(a: np.ndarray) -> np.ndarray:
    """float32 values rounded to nearest-even bfloat16, as uint16 words (NaN stays NaN)."""
    bits = a.astype(np.float32).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(a), np.uint16(0x7FC0), rounded)


def _to_torch(torch, a: np.ndarray):
    if a.dtype == np.uint16:  # bfloat16 words (Pocket has no uint16)
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _flatten(tree: Any) -> list:
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _flatten(item)]
    if isinstance(tree, dict):
        return [leaf for key in tree for leaf in _flatten(tree[key])]
    return [tree]


def _unflatten(spec: dict, leaves) -> Any:
    kind = spec["type"]
    if kind == "leaf":
        return next(leaves)
    children = [_unflatten(c, leaves) for c in spec["children"]]
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return list(children)
    if kind == "dict":
        return dict(zip(spec["keys"], children))
    raise _error("INVALID_PROGRAM", f"unknown output structure {kind!r}")
