"""Unpack a .pocket file into its flatbuffers object tree and segments, and pack it back
(for tests that corrupt one field on purpose)."""

from pocket.exporter.serialize import serialize
from pocket.fb.api import Program, ProgramT
from pocket.fb.header import unpack_header


def unpack(data: bytes):
    h = unpack_header(data)
    fb = bytearray(data[h.header_size:h.header_size + h.flatbuffer_size])
    program = ProgramT.InitFromObj(Program.GetRootAs(fb, 0))
    base = h.segment_base
    segments = [data[base + s.offset: base + s.offset + s.size] for s in program.segments or []]
    return program, segments


def pack(program, segments, **kwargs) -> bytes:
    return serialize(program, segments, **kwargs)
