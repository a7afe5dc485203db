"""Unpack a .pocket file into its flatbuffers object tree and segments, and pack it back
(for tests that corrupt one field on purpose)."""

import struct

from pocket.exporter.serialize import serialize
from pocket.fb.api import Program, ProgramT


def unpack(data: bytes):
    _, _, header, fb_size, base = struct.unpack_from("<8sIIQQ", data)
    program = ProgramT.InitFromObj(Program.GetRootAs(bytearray(data[header:header + fb_size]), 0))
    segments = [data[base + s.offset: base + s.offset + s.size] for s in program.segments or []]
    return program, segments


def pack(program, segments) -> bytes:
    return serialize(program, segments)
