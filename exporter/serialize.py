"""Stage 6: write a ProgramT and its segments as .pocket bytes.

Layout (see schema/header.py and schema/program.fbs): the fixed header, the flatbuffer, then
the segments, each at a 64-byte aligned offset from segment_base (itself 64-byte aligned in the
file).
"""

from __future__ import annotations

import flatbuffers

from pocket.fb.api import ProgramT, SegmentT
from pocket.fb.header import FORMAT_VERSION, HEADER_SIZE, SEGMENT_ALIGN, pack_header


def serialize(program: ProgramT, segments: list, version: int = FORMAT_VERSION) -> bytes:
    """The file bytes; `segments` are bytes-like (bytes, uint8 arrays); `version` (header and
    Program.version) is for tests of older readers."""
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
    fb = builder.Output()
    segment_base = _align(HEADER_SIZE + len(fb))
    header = pack_header(len(fb), segment_base, version)
    end = segment_base + (program.segments[-1].offset + program.segments[-1].size if segments else 0)
    out = bytearray(end)  # zeros: the padding; each part is copied in once
    view = memoryview(out)
    view[:len(header)] = header
    view[len(header):len(header) + len(fb)] = fb
    for seg, data in zip(program.segments, segments):
        view[segment_base + seg.offset:segment_base + seg.offset + seg.size] = data
    view.release()
    return bytes(out)


def _align(n: int) -> int:
    return (n + SEGMENT_ALIGN - 1) // SEGMENT_ALIGN * SEGMENT_ALIGN
