"""Reading a GGUF file, with its layout checked first.

A GGUF file declares counts, lengths, types and offsets that a naive reader trusts: a corrupt
header makes it loop over billions of declared entries, allocate what a length claims, or fail
deep inside numpy with an IndexError. GgufReader walks the structure once, with every count
bounded by the bytes that remain, and raises GgufError naming the field that is wrong:

    header      "GGUF", u32 version (2 or 3), u64 tensor count, u64 metadata count
    metadata    per entry: string key, u32 value type, value
                (strings: u64 length + bytes; arrays: u32 item type, u64 count, items)
    tensors     per tensor: string name, u32 n_dims (1-4), u64 dims[n_dims] (fastest first),
                u32 ggml type, u64 offset (from the data start, a multiple of the alignment)
    data        starts at the next multiple of general.alignment (default 32)

The walk records where each value lies; values are decoded when asked for (field.contents(),
as gguf.GGUFReader's fields give them) and tensors are numpy views of the memory-mapped file
(as GGUFReader's: typed for float and integer tensors, rows of bytes for block types), so
reading a file costs one pass over its header, not one numpy object per token.

It needs no torch (the tokenizer import uses it too).
"""

from __future__ import annotations

import mmap
import os
import struct
from typing import Any, NamedTuple

import numpy as np

MAX_DIMS = 4
MAX_ELEMENTS = 1 << 40
MAX_ARRAY_DEPTH = 4

# value type: (name, bytes) for fixed-size values; 8 = string, 9 = array
_SCALARS = {0: ("uint8", 1), 1: ("int8", 1), 2: ("uint16", 2), 3: ("int16", 2), 4: ("uint32", 4), 5: ("int32", 4),
            6: ("float32", 4), 7: ("bool", 1), 10: ("uint64", 8), 11: ("int64", 8), 12: ("float64", 8)}
_NUMPY = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "?", 10: "<u8", 11: "<i8", 12: "<f8"}
_STRING, _ARRAY = 8, 9
# ggml types GGUFReader gives as typed arrays (every other type: rows of bytes)
_TYPED = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I8": np.int8, "I16": np.int16, "I32": np.int32,
          "I64": np.int64}


class GgufError(ValueError):
    """A GGUF file Pocket cannot import; the message names the problem."""


def check_gguf_layout(path: str | os.PathLike) -> None:
    """Raises GgufError when the file's structure is inconsistent (see the module docstring)."""
    GgufReader(path)


class GgufField:
    """One metadata value. contents() decodes it (once) as gguf.ReaderField.contents() does:
    numbers as Python numbers, strings as str (UnicodeDecodeError when not UTF-8), arrays as lists."""

    __slots__ = ("name", "types", "_decode", "_value")
    _UNSET = object()

    def __init__(self, name: str, types: list[int], decode):
        self.name, self.types, self._decode, self._value = name, types, decode, self._UNSET

    def contents(self) -> Any:
        if self._value is self._UNSET:
            self._value = self._decode()
        return self._value


class GgufTensorInfo(NamedTuple):
    """One tensor, as gguf.ReaderTensor: shape fastest dim first; data a view of the file."""
    name: str
    tensor_type: Any          # gguf.GGMLQuantizationType
    shape: np.ndarray         # uint64 dims, fastest first
    n_elements: int
    n_bytes: int
    data_offset: int
    data: np.ndarray


class GgufReader:
    """A GGUF file: .fields (key -> GgufField), .tensors (GgufTensorInfo, in file order).

    Raises GgufError for a file that is too short, not GGUF, or inconsistent (the module
    docstring); the tensors' data stays memory-mapped while any of their arrays lives."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        size = os.path.getsize(self.path)
        if size < 24:
            raise GgufError(f"{self.path}: cannot read GGUF: {size} bytes is too short for a GGUF header (truncated?)")
        with open(self.path, "rb") as f:
            self.data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self.fields: dict[str, GgufField] = {}
        self.tensors: list[GgufTensorInfo] = []
        _Scanner(self.data, self.path, self).check()


class _Scanner:
    def __init__(self, data, path, out: GgufReader):
        self.data, self.path, self.pos, self.out = data, path, 0, out

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
        """The string's (start, length); its text when `decode` (GgufError if not UTF-8)."""
        n = self.u64(f"length of {what}")
        start = self.take(n, f"{what} ({n} bytes)")
        if not decode:
            return start, n
        try:
            return bytes(self.data[start:start + n]).decode("utf-8")
        except UnicodeDecodeError as e:
            self.fail(f"{what} is not valid UTF-8 ({e})")

    def value(self, vtype, what, depth=0):
        """Walks one value; returns (types, decode): its GGUF types and a function that decodes it."""
        data = self.data
        if vtype in _SCALARS:
            at = self.take(_SCALARS[vtype][1], what)
            return [vtype], lambda: np.frombuffer(data, _NUMPY[vtype], 1, at)[0].item()
        if vtype == _STRING:
            start, n = self.string(what)
            return [vtype], lambda: bytes(data[start:start + n]).decode("utf-8")
        if vtype != _ARRAY:
            self.fail(f"{what}: unknown value type {vtype}")
        if depth >= MAX_ARRAY_DEPTH:
            self.fail(f"{what}: arrays nested deeper than {MAX_ARRAY_DEPTH}")
        item = self.u32(f"item type of {what}")
        count = self.u64(f"item count of {what}")
        if item in _SCALARS:
            at = self.take(count * _SCALARS[item][1], f"{what} ({count} items of {_SCALARS[item][0]})")
            return [vtype, item], lambda: np.frombuffer(data, _NUMPY[item], count, at).tolist()
        if item not in (_STRING, _ARRAY):
            self.fail(f"{what}: unknown array item type {item}")
        least = 8 if item == _STRING else 12  # a string's length, an array's type and count
        if count > (len(self.data) - self.pos) // least:
            self.fail(f"{what} declares {count} items, more than the {len(self.data) - self.pos} bytes left can hold "
                      f"(truncated or corrupt)")
        if item == _STRING:
            spans = self.strings(count, what, depth)
            return [vtype, item], lambda: [bytes(data[s:s + n]).decode("utf-8") for s, n in spans]
        items = [self.value(item, f"{what}[{i}]", depth + 1) for i in range(count)]
        types = [vtype] + (items[0][0] if items else [item])
        return types, lambda: [decode() for _, decode in items]

    def strings(self, count, what, depth):
        """(start, length) of `count` strings from here: a tight loop; a string that does not fit
        is walked again by value(), whose message names it."""
        data, end, pos, spans = self.data, len(self.data), self.pos, []
        unpack = struct.Struct("<Q").unpack_from
        for i in range(count):
            n = unpack(data, pos)[0] if pos + 8 <= end else None
            if n is None or n > end - pos - 8:
                self.pos = pos
                self.value(_STRING, f"{what}[{i}]", depth + 1)  # raises, naming the item
            spans.append((pos + 8, n))
            pos += 8 + n
        self.pos = pos
        return spans

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
        for name, vtype, value in (("GGUF.version", 4, version), ("GGUF.tensor_count", 10, n_tensors),
                                   ("GGUF.kv_count", 10, n_kv)):
            self.out.fields[name] = GgufField(name, [vtype], lambda value=value: value)
        alignment = self.metadata(n_kv)
        tensors = [self.tensor_info(i, alignment) for i in range(n_tensors)]
        names = set()
        data_start = -(-self.pos // alignment) * alignment
        for name, offset, nbytes, _, _ in tensors:
            if name in names:
                self.fail(f"tensor {name!r} is listed twice")
            names.add(name)
            if data_start + offset + nbytes > len(self.data):
                self.fail(f"tensor {name!r}: {nbytes} bytes at offset {offset} lie beyond the end of the file "
                          f"({len(self.data)} bytes; truncated or corrupt)")
        self.out.alignment, self.out.data_offset = alignment, data_start
        self.out.tensors = [self.tensor(data_start, *t) for t in tensors]

    def metadata(self, n_kv) -> int:
        """Walks the metadata entries into out.fields; returns general.alignment."""
        alignment = 32
        fields = self.out.fields
        for i in range(n_kv):
            key = self.string(f"key of metadata entry {i}", decode=True)
            if key in fields:
                self.fail(f"metadata key {key!r} is listed twice")
            vtype = self.u32(f"value type of {key!r}")
            at = self.pos
            types, decode = self.value(vtype, f"metadata {key!r}")
            fields[key] = GgufField(key, types, decode)
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
        raw_type = self.u32(f"tensor {name!r}: type")
        try:
            ggml_type = GGMLQuantizationType(raw_type)
            block_elems, block_bytes = GGML_QUANT_SIZES[ggml_type]
        except (ValueError, KeyError):
            self.fail(f"tensor {name!r}: unknown tensor type {raw_type}")
        if dims[0] % block_elems:
            self.fail(f"tensor {name!r}: its rows of {dims[0]} elements are not whole blocks of {block_elems} "
                      f"({ggml_type.name})")
        offset = self.u64(f"tensor {name!r}: data offset")
        if offset % alignment:
            self.fail(f"tensor {name!r}: data offset {offset} is not a multiple of the alignment {alignment}")
        return name, offset, elements // block_elems * block_bytes, dims, ggml_type

    def tensor(self, data_start, name, offset, nbytes, dims, ggml_type) -> GgufTensorInfo:
        """The tensor's data as GGUFReader gives it: typed (slowest dim first) for float and
        integer types, else bytes with rows of whole blocks."""
        from gguf import GGML_QUANT_SIZES

        at = data_start + offset
        shape = tuple(reversed(dims))
        dtype = _TYPED.get(ggml_type.name)
        if dtype is None:
            block_elems, block_bytes = GGML_QUANT_SIZES[ggml_type]
            dtype, shape = np.uint8, (*shape[:-1], shape[-1] // block_elems * block_bytes)
        data = np.frombuffer(self.data, dtype, nbytes // np.dtype(dtype).itemsize, at).reshape(shape)
        elements = 1
        for d in dims:
            elements *= d
        return GgufTensorInfo(name, ggml_type, np.array(dims, dtype=np.uint64), elements, nbytes, at, data)
