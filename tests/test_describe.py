"""`pocket inspect`'s mutable-buffer lines: numbered per-layer buffers fold into one line per
name pattern; anything else keeps one line per buffer."""

from pocket.describe import _buffer_lines


def test_numbered_buffers_of_one_size_fold_into_a_line():
    buffers = {f"layers.{i}.k_cache": 2048 for i in range(12)} | {f"layers.{i}.v_cache": 2048 for i in range(12)}
    assert _buffer_lines(buffers) == [
        "mutable buffers layers.{0..11}.k_cache: 12 x 2.0 KiB",
        "mutable buffers layers.{0..11}.v_cache: 12 x 2.0 KiB",
        "mutable buffers in all: 24, 48.0 KiB",
    ]


def test_few_or_unequal_buffers_keep_their_own_lines():
    assert _buffer_lines({"cache": 100}) == ["mutable buffer cache: 100 B"]
    two = {"l.0.k": 8, "l.1.k": 8}
    assert _buffer_lines(two) == ["mutable buffer l.0.k: 8 B", "mutable buffer l.1.k: 8 B", "mutable buffers in all: 2, 16 B"]
    unequal = {f"l.{i}.k": 8 * (i + 1) for i in range(3)}
    assert _buffer_lines(unequal)[:3] == [f"mutable buffer l.{i}.k: {8 * (i + 1)} B" for i in range(3)]


def test_names_with_several_numbers_fold_without_a_range():
    buffers = {f"block.{b}.layer.{i}.state": 4 for b in range(2) for i in range(2)}
    assert _buffer_lines(buffers)[0] == "mutable buffers block.{N}.layer.{N}.state: 4 x 4 B"


def test_a_range_is_shown_only_when_the_numbers_run_without_gaps():
    gaps = {f"l.{i}.k": 4 for i in (0, 2, 5)}
    assert _buffer_lines(gaps)[0] == "mutable buffers l.{N}.k: 3 x 4 B"
