"""A .pocket inside another file (a zip entry stored without deflate, as in an APK): loaded
through pocket.load(path or fd, offset=, length=) and pocket.llm.Runner(..., offset=, length=),
mapped in place at a 16-aligned offset and read otherwise, it runs exactly like the file
itself; a wrong offset or length is a PocketError naming it."""

import os
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

import pocket
import pocket.llm
from pocket import PocketError

GOLDEN = Path(__file__).parent / "golden"


def stored_zip(path: Path, program: Path, skew: int) -> tuple[int, int]:
    """Writes a zip holding a text file and `program` stored at an offset ≡ skew (mod 64),
    padded through the local header's extra field as zipalign does; returns (offset, length)."""
    data = program.read_bytes()
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("readme.txt"), b"x" * 5000, compress_type=zipfile.ZIP_DEFLATED)
        info = zipfile.ZipInfo("assets/model.pocket")
        info.compress_type = zipfile.ZIP_STORED
        header_end = z.fp.tell() + 30 + len(info.filename.encode()) + 4  # 4: the extra field's id and size
        pad = (skew - header_end) % 64
        info.extra = struct.pack("<HH", 0xD935, pad) + b"\0" * pad
        z.writestr(info, data)
    with zipfile.ZipFile(path) as z:  # where the entry's bytes really start, from its local header
        entry = z.getinfo("assets/model.pocket")
        assert entry.compress_type == zipfile.ZIP_STORED
        with open(path, "rb") as f:
            f.seek(entry.header_offset)
            name_len, extra_len = struct.unpack("<HH", f.read(30)[26:30])
        offset = entry.header_offset + 30 + name_len + extra_len
        assert z.read(entry) == data
    assert Path(path).read_bytes()[offset:offset + len(data)] == data
    return offset, len(data)


def mlp_inputs(m: pocket.Module) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(i["max_shape"]).astype(np.float32) for i in m.method_info()["inputs"]]


@pytest.mark.parametrize("skew", [0, 4])
def test_program_in_a_zip_runs_like_the_file(tmp_path, skew):
    zip_path = tmp_path / "app.zip"
    offset, length = stored_zip(zip_path, GOLDEN / "mlp.pocket", skew)
    reference = pocket.load(GOLDEN / "mlp.pocket")
    x = mlp_inputs(reference)
    want = reference.forward(*x)

    by_path = pocket.load(zip_path, offset=offset, length=length)
    assert by_path.mapped == (skew == 0)  # 4-byte aligned entries (Android's default) are read
    fd = os.open(zip_path, os.O_RDONLY)
    try:
        by_fd = pocket.load(fd, offset=offset, length=length)
        to_end = pocket.load(fd, offset=offset)  # the entry is followed by the zip's directory
        os.lseek(fd, 0, os.SEEK_SET)
    finally:
        os.close(fd)  # the module does not need the descriptor any more
    read = pocket.load(zip_path, mmap=False, offset=offset, length=length)
    assert not read.mapped
    for m in (by_path, by_fd, to_end, read):
        got = m.forward(*x)
        assert np.array_equal(np.asarray(got[0] if isinstance(got, tuple) else got),
                              np.asarray(want[0] if isinstance(want, tuple) else want))
    assert pocket.load(GOLDEN / "mlp.pocket").mapped


def test_wrong_offset_or_length_is_a_clear_error(tmp_path):
    zip_path = tmp_path / "app.zip"
    offset, length = stored_zip(zip_path, GOLDEN / "mlp.pocket", 0)
    size = zip_path.stat().st_size
    cases = [
        (offset - 16, length, "INVALID_PROGRAM", "wrong magic"),
        (offset + 1, length, "INVALID_PROGRAM", f"offset {offset + 1}"),
        (offset, length - 100, "INVALID_PROGRAM", f"length {length - 100}"),
        (offset, 8, "INVALID_PROGRAM", "truncated"),
        (offset, size, "OUT_OF_RANGE", "beyond the end of the file"),
        (size + 64, 10, "OUT_OF_RANGE", "beyond the end of the file"),
        (-1, 10, "INVALID_ARGUMENT", "offset -1"),
    ]
    for off, n, status, needle in cases:
        with pytest.raises(PocketError) as e:
            pocket.load(zip_path, offset=off, length=n)
        assert e.value.status == status, (off, n, e.value)
        assert needle in e.value.message and str(zip_path) in e.value.message, e.value.message
    with pytest.raises(PocketError) as e:
        pocket.load(tmp_path / "missing.zip", offset=64)
    assert e.value.status == "NOT_FOUND"
    with pytest.raises(PocketError) as e:
        pocket.load(987654, offset=0, length=64)  # not an open descriptor
    assert e.value.status == "INVALID_ARGUMENT" and "fd 987654" in e.value.message


def test_llm_runner_from_a_zip_generates_like_the_file(tmp_path):
    zip_path = tmp_path / "app.zip"
    offset, length = stored_zip(zip_path, GOLDEN / "tiny_llm.pocket", 0)
    tokenizer = GOLDEN / "tiny_llm.tokenizer.json"
    from_file = pocket.llm.Runner(GOLDEN / "tiny_llm.pocket", tokenizer)
    from_zip = pocket.llm.Runner(zip_path, tokenizer, offset=offset, length=length)
    prompt = [1, 17, 42, 7, 99, 3]
    assert from_zip.generate_ids(prompt, 16) == from_file.generate_ids(prompt, 16)
    assert "".join(from_zip.generate("Hello", 12)) == "".join(from_file.generate("Hello", 12))
    with open(zip_path, "rb") as f:
        by_fd = pocket.llm.Runner(f.fileno(), tokenizer, offset=offset, length=length)
    assert by_fd.generate_ids(prompt, 16) == from_file.generate_ids(prompt, 16)
    with pytest.raises(PocketError) as e:
        pocket.llm.Runner(zip_path, tokenizer, offset=offset + 4, length=length)
    assert e.value.status == "INVALID_PROGRAM" and str(zip_path) in e.value.message
    with pytest.raises(PocketError) as e:
        pocket.llm.Runner(zip_path, None, offset=offset, length=length)
    assert e.value.status == "NOT_FOUND" and "no embedded tokenizer" in e.value.message
