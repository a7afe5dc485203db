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

_INVALID_ARGUMENT = (1, "INVALID_ARGUMENT")


def load(path: str | os.PathLike, mmap: bool = True) -> "Module":
    """Loads and verifies a .pocket file.

    Args:
        path: the file. With mmap=True (the default) constants are used in place.
    Raises:
        PocketError: missing file (NOT_FOUND), malformed file (INVALID_PROGRAM), unsupported
            format version or op (UNSUPPORTED).
    """
    return Module(_native.Module.from_file(os.fspath(path), mmap))


class Module:
    """A loaded program. `m.forward(x)` runs the "forward" method; `m.run(name, *args)` any."""

    def __init__(self, native: "_native.Module"):
        self._native = native
        self.method_names: list[str] = native.method_names()
        self.metadata: dict[str, str] = native.metadata()
        self._info: dict[str, dict] = {}

    @classmethod
    def from_bytes(cls, data: bytes) -> "Module":
        """Loads a program from memory (the bytes are copied)."""
        return cls(_native.Module.from_bytes(bytes(data)))

    def method_info(self, method: str = "forward") -> dict:
        """Inputs and outputs (dtype, min_shape, max_shape) and arena sizes of a method."""
        if method not in self._info:
            self._info[method] = self._native.method_info(method)
        return self._info[method]

    def forward(self, *args: Any) -> Any:
        return self.run("forward", *args)

    __call__ = forward

    def run(self, method: str, *args: Any) -> Any:
        """Runs `method` on args laid out like the eager model's (nested tuples/lists/dicts ok)."""
        info = self.method_info(method)
        leaves = _flatten(args)
        torch_in = any(_is_torch(x) for x in leaves)
        arrays = [_to_numpy(x, i, info) for i, x in enumerate(leaves)]
        outputs = self._native.run(method, arrays)
        if torch_in:
            import torch

            outputs = [torch.from_numpy(o) if isinstance(o, np.ndarray) else o for o in outputs]
        spec = info.get("output_spec")
        if not spec:
            return tuple(outputs)
        try:
            return _unflatten(json.loads(spec), iter(outputs))
        except (ValueError, KeyError, TypeError, StopIteration) as e:
            raise PocketError(2, "INVALID_PROGRAM", f"method '{method}': malformed output_spec metadata ({e})") from e

    def set_num_threads(self, n: int) -> None:
        """Threads kernels may use; 0 = the default (the performance cores)."""
        self._native.set_num_threads(n)

    @property
    def num_threads(self) -> int:
        return self._native.num_threads

    def reset_buffers(self) -> None:
        """Restores mutable buffers (e.g. a KV cache) to their initial values."""
        self._native.reset_buffers()

    def __repr__(self) -> str:
        return f"pocket.Module(methods={self.method_names})"


def _is_torch(x: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _to_numpy(x: Any, i: int, info: dict) -> np.ndarray:
    if _is_torch(x):
        x = x.detach().cpu().contiguous()
        import torch

        if x.dtype == torch.bfloat16:
            return x.view(torch.int16).numpy().view(np.uint16)
        return x.numpy()
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(x)
    if isinstance(x, (bool, int, float, np.generic)):
        specs = info["inputs"]
        dtype = specs[i]["dtype"] if i < len(specs) and specs[i] else "float32"
        return np.asarray(x, dtype=dtype)
    raise PocketError(*_INVALID_ARGUMENT, f"input {i}: expected a tensor or array, got {type(x).__name__}")


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
    raise PocketError(2, "INVALID_PROGRAM", f"unknown output structure {kind!r}")
