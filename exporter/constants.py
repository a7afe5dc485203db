"""Program-wide memo of constant tensors: each constant's bytes are read and hashed once, however
many methods and passes ask for them, and tensors derived from constants (packed weights) are
computed once per content.

A tensor is known by where its data lives (storage, offset, shape, strides, dtype) and its
version counter (bumped by in-place writes); the memo keeps a reference to it, so that memory
cannot be reused by another tensor while the memo lives (one export call).
"""

from __future__ import annotations

import hashlib

import numpy as np
import torch


class Constants:
    def __init__(self):
        self._seen: dict[tuple, tuple[torch.Tensor, np.ndarray, bytes]] = {}
        self._derived: dict[tuple, object] = {}

    def _entry(self, t: torch.Tensor):
        key = (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), t.stride(), t.dtype, t._version)
        entry = self._seen.get(key)
        if entry is None:
            data = tensor_bytes(t)
            entry = self._seen[key] = (t, data, hashlib.sha256(data).digest())
        return entry

    def data(self, t: torch.Tensor) -> np.ndarray:
        """The tensor's bytes (row-major, no copy when it is contiguous) as a uint8 array."""
        return self._entry(t)[1]

    def digest(self, t: torch.Tensor) -> bytes:
        """sha256 of the tensor's bytes (dtype and shape are not part of it)."""
        return self._entry(t)[2]

    def derived(self, key: tuple, make):
        """make(), computed once per `key` (build keys from digests, so equal contents share)."""
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]


def tensor_bytes(t: torch.Tensor) -> np.ndarray:
    """A tensor's bytes, row-major, as a flat uint8 numpy array over its memory (a copy only
    when the tensor is not contiguous or not on the CPU)."""
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16
        t = t.view(torch.int16)
    return t.numpy().reshape(-1).view(np.uint8)


def all_zero(t: torch.Tensor) -> bool:
    """not t.any(), without starting torch's thread pool for it (numpy; -0.0 counts as zero)."""
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return not (t.view(torch.int16).numpy() & 0x7FFF).any()
    return not t.numpy().any()
