"""The layout of a GGUF file, checked before gguf.GGUFReader reads it.

GGUFReader trusts the counts, lengths, types and offsets in a file: a corrupt header makes it
loop over billions of declared entries, allocate what a length claims, or fail deep inside numpy
with an IndexError. check_gguf_layout() walks the same structure first, with every count bounded
by the bytes that remain, and raises GgufError naming the field that is wrong:

    header      "GGUF", u32 version (2 or 3), u64 tensor count, u64 metadata count
    metadata    per entry: string key, u32 value type, value
                (strings: u64 length + bytes; arrays: u32 item type, u64 count, items)
    tensors     per tensor: string name, u32 n_dims (1-4), u64 dims[n_dims] (fastest first),
                u32 ggml type, u64 offset (from the data start, a multiple of the alignment)
    data        starts at the next multiple of general.alignment (default 32)

It needs no torch (the tokenizer import uses it too).
"""

from __future__ import annotations

import mmap
import os
import struct

MAX_DIMS = 4
MAX_ELEMENTS = 1 << 40
MAX_ARRAY_DEPTH = 4

# value type: (name, bytes) for fixed-size values; 8 = string, 9 = array
_SCALARS = {0: ("uint8", 1), 1: ("int8", 1), 2: ("uint16", 2), 3: ("int16", 2), 4: ("uint32", 4), 5: ("int32", 4),
            6: ("float32", 4), 7: ("bool", 1), 10: ("uint64", 8), 11: ("int64", 8), 12: ("float64", 8)}
_STRING, _ARRAY = 8, 9


class GgufError(ValueError):
    """A GGUF file Pocket cannot import; the message names the problem."""


def check_gguf_layout(path: str | os.PathLike) -> None:
    """Raises GgufError when the file's structure is inconsistent (see the module docstring)."""
    path = os.fspath(path)
    size = os.path.getsize(path)
    if size < 24:
        raise GgufError(f"{path}: cannot read GGUF: {size} bytes is too short for a GGUF header (truncated?)")
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        _Scanner(data, path).check()


class _Scanner:
    def __init__(self, data, path):
        self.data, self.path, self.pos = data, path, 0

    def fail(self, what):
        raise GgufError(f"{self.path}: cannot read GGUF: {what}")

    def take(self, n, what):
        if n > len(self.data) - self.pos:
            self.fail(f"{what} at byte {self.pos} needs {n} bytes, but the file ends at byte {len(self.data)} "
                      f"(truncated or corrupt)")
        start = self.pos
        self.pos += n
        return start

    def u32(self, what):
        return struct.unpack_from("<I", self.data, self.take(4, what))[0]

    def u64(self, what):
        return struct.unpack_from("<Q", self.data, self.take(8, what))[0]

    def string(self, what, decode=False):
        n = self.u64(f"length of {what}")
        start = self.take(n, f"{what} ({n} bytes)")
        if not decode:
            return None
        try:
            return bytes(self.data[start:start + n]).decode("utf-8")
        except UnicodeDecodeError as e:
            self.fail(f"{what} is not valid UTF-8 ({e})")

    def value(self, vtype, what, depth=0):
        if vtype in _SCALARS:
            return self.take(_SCALARS[vtype][1], what)
        if vtype == _STRING:
            return self.string(what)
        if vtype != _ARRAY:
            self.fail(f"{what}: unknown value type {vtype}")
        if depth >= MAX_ARRAY_DEPTH:
            self.fail(f"{what}: arrays nested deeper than {MAX_ARRAY_DEPTH}")
        item = self.u32(f"item type of {what}")
        count = self.u64(f"item count of {what}")
        if item in _SCALARS:
            return self.take(count * _SCALARS[item][1], f"{what} ({count} items of {_SCALARS[item][0]})")
        if item not in (_STRING, _ARRAY):
            self.fail(f"{what}: unknown array item type {item}")
        least = 8 if item == _STRING else 12  # a string's length, an array's type and count
        if count > (len(self.data) - self.pos) // least:
            self.fail(f"{what} declares {count} items, more than the {len(self.data) - self.pos} bytes left can hold "
                      f"(truncated or corrupt)")
        for i in range(count):
            self.value(item, f"{what}[{i}]", depth + 1)

    def check(self):
        if bytes(self.data[:4]) != b"GGUF":
            self.fail("not a GGUF file (wrong magic)")
        self.pos = 4
        version = self.u32("version")
        if version not in (2, 3):
            self.fail(f"format version {version} is not supported (2 or 3)")
        n_tensors = self.u64("tensor count")
        n_kv = self.u64("metadata count")
        left = len(self.data) - self.pos
        if n_kv > left // 12 or n_tensors > left // 24:  # the smallest entry and tensor info
            self.fail(f"the header declares {n_kv} metadata entries and {n_tensors} tensors, more than the "
                      f"{left} bytes after it can hold (truncated or corrupt)")
        alignment = self.metadata(n_kv)
        tensors = [self.tensor_info(i, alignment) for i in range(n_tensors)]
        names = set()
        data_start = -(-self.pos // alignment) * alignment
        for name, offset, nbytes in tensors:
            if name in names:
                self.fail(f"tensor {name!r} is listed twice")
            names.add(name)
            if data_start + offset + nbytes > len(self.data):
                self.fail(f"tensor {name!r}: {nbytes} bytes at offset {offset} lie beyond the end of the file "
                          f"({len(self.data)} bytes; truncated or corrupt)")

    def metadata(self, n_kv) -> int:
        """Walks the metadata entries; returns general.alignment."""
        keys, alignment = set(), 32
        for i in range(n_kv):
            key = self.string(f"key of metadata entry {i}", decode=True)
            if key in keys:
                self.fail(f"metadata key {key!r} is listed twice")
            keys.add(key)
            vtype = self.u32(f"value type of {key!r}")
            at = self.value(vtype, f"metadata {key!r}")
            if key == "general.alignment":
                if vtype != 4:
                    self.fail(f"general.alignment must be a uint32, got value type {vtype}")
                alignment = struct.unpack_from("<I", self.data, at)[0]
                if alignment == 0 or alignment & (alignment - 1) or alignment > 1 << 16:
                    self.fail(f"general.alignment {alignment} is not a power of two up to 65536")
        return alignment

    def tensor_info(self, i, alignment):
        from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

        name = self.string(f"name of tensor {i}", decode=True)
        n_dims = self.u32(f"tensor {name!r}: number of dims")
        if not 1 <= n_dims <= MAX_DIMS:
            self.fail(f"tensor {name!r}: {n_dims} dims (1 to {MAX_DIMS} allowed)")
        dims = [self.u64(f"tensor {name!r}: dim {d}") for d in range(n_dims)]
        elements = 1
        for d in dims:
            elements *= d
        if 0 in dims or elements > MAX_ELEMENTS:
            self.fail(f"tensor {name!r}: shape {dims} is empty or larger than 2^40 elements")
        ggml_type = self.u32(f"tensor {name!r}: type")
        try:
            block_elems, block_bytes = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
        except (ValueError, KeyError):
            self.fail(f"tensor {name!r}: unknown tensor type {ggml_type}")
        if dims[0] % block_elems:
            self.fail(f"tensor {name!r}: its rows of {dims[0]} elements are not whole blocks of {block_elems} "
                      f"({GGMLQuantizationType(ggml_type).name})")
        offset = self.u64(f"tensor {name!r}: data offset")
        if offset % alignment:
            self.fail(f"tensor {name!r}: data offset {offset} is not a multiple of the alignment {alignment}")
        return name, offset, elements // block_elems * block_bytes
