"""The fixed header at the start of every .pocket file, for Python (the C++ reader is
check_header in runtime_core/core/program.cpp). Little-endian:

    offset  bytes  field
         0      8  magic, b"POCKETPG"
         8      4  format version (which ones a runtime accepts: schema/COMPATIBILITY.md)
        12      4  header size, 32: the flatbuffer (schema/program.fbs) starts here
        16      8  flatbuffer size in bytes
        24      8  segment_base: where the segments start, a multiple of SEGMENT_ALIGN; each
                   segment's offset (Segment.offset) counts from here, also SEGMENT_ALIGN-aligned

This file is the one definition: schema/generate.py copies it to pocket.fb.header, which the
exporter (serialize.py), `pocket inspect` (describe.py) and the tests import.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

MAGIC = b"POCKETPG"
FORMAT_VERSION = 2  # what the exporter writes
HEADER = struct.Struct("<8sIIQQ")
HEADER_SIZE = HEADER.size
SEGMENT_ALIGN = 64


class Header(NamedTuple):
    magic: bytes
    version: int
    header_size: int
    flatbuffer_size: int
    segment_base: int


def pack_header(flatbuffer_size: int, segment_base: int, version: int = FORMAT_VERSION) -> bytes:
    return HEADER.pack(MAGIC, version, HEADER_SIZE, flatbuffer_size, segment_base)


def unpack_header(data: bytes) -> Header:
    """The header fields as stored (unchecked: the runtime verifies them when it loads a file)."""
    return Header(*HEADER.unpack_from(data))
