"""Every kind of bad input gets a clear PocketError that names the problem; none crashes."""

import struct

import numpy as np
import pytest
import torch

import pocket
from pocket import PocketError
from pocket.fb.api import Location, TensorT
from program_tools import pack, unpack


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))


@pytest.fixture(scope="module")
def good_bytes():
    return pocket.export(Net().eval(), (torch.randn(2, 4),),
                         dynamic_shapes=({0: torch.export.Dim("b", min=1, max=8)},)).data


def load_bytes(data):
    return pocket.Module.from_bytes(data)


def test_missing_file(tmp_path):
    with pytest.raises(PocketError, match="No such file") as e:
        pocket.load(tmp_path / "missing.pocket")
    assert e.value.status == "NOT_FOUND"


@pytest.mark.parametrize("cut", [0, 10, 31, 40, 200, -1])
def test_truncated_file(tmp_path, good_bytes, cut):
    path = tmp_path / "t.pocket"
    path.write_bytes(good_bytes[:cut] if cut >= 0 else good_bytes[:-8])
    with pytest.raises(PocketError, match="truncated|verification|outside the file|segment"):
        pocket.load(path)


def test_wrong_magic(good_bytes):
    with pytest.raises(PocketError, match="wrong magic"):
        load_bytes(b"NOTPOCKT" + good_bytes[8:])


def test_unsupported_version(good_bytes):
    data = good_bytes[:8] + struct.pack("<I", 99) + good_bytes[12:]
    with pytest.raises(PocketError, match="format version 99 is not supported") as e:
        load_bytes(data)
    assert e.value.status == "UNSUPPORTED"


def test_reads_format_version_1(good_bytes):
    """Version 2 only dropped two instructions no exporter wrote: a version-1 file still runs."""
    program, segments = unpack(good_bytes)
    data = pack(program, segments, version=1)
    assert struct.unpack_from("<I", data, 8)[0] == 1
    x = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(load_bytes(data).forward(x), load_bytes(good_bytes).forward(x))


@pytest.mark.parametrize("kind", [3, 4, 200], ids=["old_JumpFalse", "old_Free", "unknown"])
def test_unknown_instruction_type(good_bytes, kind):
    def edit(p):
        p.methods[0].steps[0].instructionType = kind
    with pytest.raises(PocketError, match=f"instruction 0: unknown instruction type {kind}") as e:
        load_bytes(tampered(good_bytes, edit)).method_info()
    assert e.value.status == "INVALID_PROGRAM"


def test_corrupted_flatbuffer_never_crashes(good_bytes):
    fb_end = 32 + struct.unpack_from("<Q", good_bytes, 16)[0]
    failures = 0
    for offset in range(32, fb_end):
        data = bytearray(good_bytes)
        data[offset] ^= 0xFF
        try:
            m = load_bytes(bytes(data))
            m.forward(np.ones((2, 4), np.float32))
        except PocketError:
            failures += 1
    assert failures > 0


def tampered(good_bytes, edit):
    program, segments = unpack(good_bytes)
    edit(program)
    return pack(program, segments)


def first_tensor(program, location):
    return next(v.kind for v in program.methods[0].values if isinstance(v.kind, TensorT) and v.kind.location == location)


def test_out_of_range_value_index(good_bytes):
    def edit(p):
        p.methods[0].steps[0].instruction.args[0] = 9999
    with pytest.raises(PocketError, match="value 9999|out of range"):
        load_bytes(tampered(good_bytes, edit)).method_info()


def test_out_of_range_segment_offset(good_bytes):
    def edit(p):
        first_tensor(p, Location.Constant).offset = 1 << 40
    with pytest.raises(PocketError, match="constant at segment .* out of range"):
        load_bytes(tampered(good_bytes, edit)).method_info()


def test_out_of_range_arena_offset(good_bytes):
    def edit(p):
        first_tensor(p, Location.Arena).offset = p.methods[0].arenas[0]
    with pytest.raises(PocketError, match="arena 0 offset .* out of range"):
        load_bytes(tampered(good_bytes, edit)).method_info()


@pytest.mark.parametrize("sizes", [[1 << 30, 1 << 34], [0, 1 << 35, 1 << 34]], ids=["wraps_to_zero", "empty_dim"])
def test_shape_whose_strides_overflow(good_bytes, sizes):
    """Found by fuzz/program.cpp: sizes whose product wraps uint64 to 0, or that an empty dim hides
    while the strides of the others overflow int64, are refused by name."""
    def edit(p):
        first_tensor(p, Location.Arena).sizes = np.array(sizes, dtype=np.int64)
    with pytest.raises(PocketError, match="too many elements"):
        load_bytes(tampered(good_bytes, edit)).method_info()


def test_unknown_op(good_bytes):
    def edit(p):
        p.methods[0].operators[0].name = "aten::frobnicate"
    with pytest.raises(PocketError, match="unknown op 'aten::frobnicate") as e:
        load_bytes(tampered(good_bytes, edit)).method_info()
    assert e.value.status == "UNSUPPORTED"


def test_wrong_number_of_inputs(good_bytes):
    m = load_bytes(good_bytes)
    with pytest.raises(PocketError, match="takes 1 inputs, got 2"):
        m.forward(np.ones((2, 4), np.float32), np.ones((2, 4), np.float32))


def test_wrong_dtype(good_bytes):
    with pytest.raises(PocketError, match="expected dtype float32, got int64"):
        load_bytes(good_bytes).forward(np.ones((2, 4), np.int64))


def test_wrong_rank(good_bytes):
    with pytest.raises(PocketError, match="expected 2 dims"):
        load_bytes(good_bytes).forward(np.ones((2, 4, 1), np.float32))


@pytest.mark.parametrize("shape,match", [((9, 4), "dim 0 must be between 1 and 8"), ((2, 5), "dim 1 must be 4")])
def test_shape_out_of_bounds(good_bytes, shape, match):
    with pytest.raises(PocketError, match=match):
        load_bytes(good_bytes).forward(np.ones(shape, np.float32))


class Related(torch.nn.Module):
    """x and y get one Dim and z a derived one. Nothing in the graph needs x's and y's lengths
    to agree, so without a check other lengths would give a result for shapes never exported."""

    def forward(self, x, y, z):
        return (x @ y.transpose(0, 1)).sum(1) + z[:-1:2]


@pytest.fixture(scope="module")
def related():
    s = torch.export.Dim("s", min=2, max=16)
    example = (torch.randn(5, 4), torch.randn(5, 4), torch.randn(11))
    program = pocket.export(Related(), example, dynamic_shapes=({0: s}, {0: s}, {0: 2 * s + 1}))
    return load_bytes(program.data)


@pytest.mark.parametrize("lengths,match", [
    ((3, 5, 7), r"input 1 \(y\) dim 0 is 5, but the model was exported with it equal to input 0 \(x\) dim 0, "
                r"which is 3"),
    ((4, 4, 8), r"input 2 \(z\) dim 0 is 8, but the model was exported with it equal to "
                r"2 \* input 0 \(x\) dim 0 \+ 1, which is 9"),
])
def test_sizes_exported_as_equal_must_agree(related, lengths, match):
    inputs = [np.ones((n, 4) if i < 2 else (n,), np.float32) for i, n in enumerate(lengths)]
    with pytest.raises(PocketError, match=match):
        related.forward(*inputs)
    x, y, z = torch.randn(3, 4), torch.randn(3, 4), torch.randn(7)  # agreeing sizes still run
    np.testing.assert_allclose(related.forward(x.numpy(), y.numpy(), z.numpy()), Related()(x, y, z).numpy(),
                               rtol=1e-5, atol=1e-5)


def test_unknown_method(good_bytes):
    with pytest.raises(PocketError, match="no method named 'decode'"):
        load_bytes(good_bytes).run("decode", np.ones((2, 4), np.float32))


def test_unsupported_op_at_export_names_op_and_line():
    class Odd(torch.nn.Module):
        def forward(self, x):
            return torch.special.bessel_j0(x)  # the line the error must show

    with pytest.raises(pocket.exporter.ExportError) as e:
        pocket.export(Odd(), (torch.randn(3),))
    text = str(e.value)
    assert "aten::special_bessel_j0" in text
    assert "test_bad_inputs.py" in text and "torch.special.bessel_j0(x)" in text


def test_dynamic_dim_without_bound_is_rejected():
    with pytest.raises(pocket.exporter.ExportError, match="no upper bound"):
        pocket.export(Net().eval(), (torch.randn(2, 4),), dynamic_shapes=({0: torch.export.Dim("b")},))


class WritesInput(torch.nn.Module):
    def forward(self, x):
        x.mul_(2)
        return x + 1


class RenormalizedEmbedding(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4, max_norm=1.0)

    def forward(self, ids):
        return self.emb(ids)


@pytest.mark.parametrize("model,inputs,match", [
    (WritesInput(), (torch.randn(3),), r"writes to its input 'x' in place"),
    (RenormalizedEmbedding(), (torch.tensor([[1, 2]]),), r"writes to the parameter 'emb.weight' in place"),
])
def test_in_place_writes_to_inputs_and_parameters_are_named(model, inputs, match):
    with pytest.raises(pocket.exporter.ExportError, match=match):
        pocket.export(model, inputs)
