"""What is inside a .pocket file: methods, their inputs/outputs, ops, memory and metadata.

Reads the file with the runtime first (so it is verified), then walks the flatbuffer with the
generated reader. Imports no torch.
"""

from __future__ import annotations

import re

from pocket.fb.api import Program
from pocket.fb.header import unpack_header


def describe(path: str) -> dict:
    """A dict describing the program at `path` (raises PocketError for a bad file)."""
    from pocket.runtime import load

    module = load(path)  # verifies everything
    with open(path, "rb") as f:
        data = f.read()
    header = unpack_header(data)
    root = Program.GetRootAs(data, header.header_size)
    methods = {}
    for i in range(root.MethodsLength()):
        m = root.Methods(i)
        name = m.Name().decode()
        info = module.method_info(name)
        ops = sorted({_op(m.Operators(k)) for k in range(m.OperatorsLength())})
        methods[name] = {
            "inputs": info["inputs"], "outputs": info["outputs"], "ops": ops,
            "instructions": m.StepsLength(), "arena_bytes": sum(info["arenas"]),
        }
    return {
        "format_version": header.version,
        "file_bytes": len(data),
        "constant_bytes": sum(root.Segments(i).Size() for i in range(root.SegmentsLength())),
        "mutable_buffers": {root.Buffers(i).Name().decode(): root.Buffers(i).Nbytes() for i in range(root.BuffersLength())},
        "tokenizer_bytes": root.Segments(root.TokenizerSegment()).Size() if root.TokenizerSegment() >= 0 else 0,
        "methods": methods,
        "metadata": module.metadata,
    }


def _op(op) -> str:
    name, overload = op.Name().decode(), (op.Overload() or b"").decode()
    return name + (f".{overload}" if overload and overload != "default" else "")


def format_description(d: dict) -> str:
    lines = [f"format version {d['format_version']}, {_size(d['file_bytes'])} "
             f"({_size(d['constant_bytes'])} constants)"]
    lines += _buffer_lines(d["mutable_buffers"])
    if d["tokenizer_bytes"]:
        lines.append(f"embedded tokenizer: {_size(d['tokenizer_bytes'])}")
    for name, m in d["methods"].items():
        lines.append(f"\nmethod {name}: {m['instructions']} instructions, arena {_size(m['arena_bytes'])}")
        for kind in ("inputs", "outputs"):
            for i, spec in enumerate(m[kind]):
                lines.append(f"  {kind[:-1]} {i}: {_spec(spec)}")
        lines.append(f"  ops ({len(m['ops'])}): {', '.join(m['ops'])}")
    if d["metadata"]:
        lines.append("\nmetadata:")
        for k, v in sorted(d["metadata"].items()):
            v = v if len(v) <= 80 else v[:77] + "..."
            lines.append(f"  {k} = {v}")
    return "\n".join(lines)


def _buffer_lines(buffers: dict) -> list:
    """One line per buffer, or for a model with numbered layers (a KV cache per layer), one line
    per name pattern: `mutable buffers model.layers.{0..29}.self_attn.k_cache: 30 x 384.0 KiB`."""
    groups: dict = {}
    for name, nbytes in buffers.items():
        groups.setdefault(re.sub(r"\d+", "{N}", name), []).append((name, nbytes))
    lines = []
    for pattern, members in groups.items():
        sizes = {n for _, n in members}
        if len(members) < 3 or len(sizes) > 1:
            lines += [f"mutable buffer {name}: {_size(n)}" for name, n in members]
            continue
        numbers = {int(re.search(r"\d+", name).group()) for name, _ in members}
        if pattern.count("{N}") == 1 and len(numbers) == len(members) == max(numbers) - min(numbers) + 1:
            pattern = pattern.replace("{N}", f"{{{min(numbers)}..{max(numbers)}}}")
        lines.append(f"mutable buffers {pattern}: {len(members)} x {_size(members[0][1])}")
    if len(buffers) > 1:
        lines.append(f"mutable buffers in all: {len(buffers)}, {_size(sum(buffers.values()))}")
    return lines


def _spec(spec) -> str:
    if spec is None:
        return "(not a tensor)"
    dims = [str(hi) if lo == hi else f"{lo}..{hi}" for lo, hi in zip(spec["min_shape"], spec["max_shape"])]
    return f"{spec['dtype']}[{', '.join(dims)}]"


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


