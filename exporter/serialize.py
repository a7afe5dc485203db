"""Stage 6: write a ProgramT and its segments as .pocket bytes.

Layout (see schema/header.py and schema/program.fbs): the fixed header, the flatbuffer, then
the segments, each at a 64-byte aligned offset from segment_base (itself 64-byte aligned in the
file).
"""

from __future__ import annotations

import flatbuffers

from pocket.fb.api import ProgramT, SegmentT
from pocket.fb.header import FORMAT_VERSION, HEADER_SIZE, SEGMENT_ALIGN, pack_header


def serialize(program: ProgramT, segments: list[bytes], version: int = FORMAT_VERSION) -> bytes:
    """The file bytes; `version` (header and Program.version) is for tests of older readers."""
    program.version = version
    program.segments = []
    offset = 0
    for data in segments:
        seg = SegmentT()
        seg.offset, seg.size = offset, len(data)
        program.segments.append(seg)
        offset = _align(offset + len(data))
    builder = flatbuffers.Builder(1 << 16)
    builder.Finish(program.Pack(builder), file_identifier=b"PKPG")
    fb = bytes(builder.Output())
    segment_base = _align(HEADER_SIZE + len(fb))
    out = bytearray(pack_header(len(fb), segment_base, version))
    out += fb
    out += b"\0" * (segment_base - len(out))
    for seg, data in zip(program.segments, segments):
        out += b"\0" * (segment_base + seg.offset - len(out))
        out += data
    return bytes(out)


def _align(n: int) -> int:
    return (n + SEGMENT_ALIGN - 1) // SEGMENT_ALIGN * SEGMENT_ALIGN
