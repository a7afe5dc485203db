"""pocket.export(): the whole pipeline, capture -> decompose -> passes -> emit -> plan -> serialize."""

from __future__ import annotations

import functools
import gc
import logging
import os
import tempfile
import time
import warnings
from typing import Any, Callable

import torch

from pocket.exporter.capture import MethodGraph, capture, lift
from pocket.exporter.constants import Constants, all_zero
from pocket.exporter.decompose import decompose
from pocket.exporter.emit import MethodEmitter, _kv, pocket_dtype
from pocket.exporter.errors import ExportError
from pocket.exporter.passes import run_passes
from pocket.exporter.plan import plan
from pocket.exporter.quant.config import QuantConfig, resolve
from pocket.exporter.quant.transform import QuantizationWarning, quantize_modules
from pocket.exporter.repeat import Stack, plan_stack, repeat_layers, traced_layers
from pocket.exporter.serialize import serialize
from pocket.exporter.workers import export_methods, jobs
from pocket.fb.api import Location, MethodT, MutableBufferT, ProgramT, TensorT

log = logging.getLogger("pocket.export")


class Program:
    """An exported program: the bytes of a .pocket file plus a summary of what is in it."""

    def __init__(self, data: bytes, summary: dict):
        self.data = data
        self.summary = summary

    @property
    def method_names(self) -> list[str]:
        return list(self.summary["methods"])

    def save(self, path: str | os.PathLike) -> None:
        """Writes the program to `path` (atomically: a crash never leaves half a file)."""
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".pocket-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self.data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        return f"pocket.Program({len(self.data)} bytes, methods={self.method_names})"


class _ProgramBuilder:
    """Program-wide tables shared by all methods: constant segments (deduplicated by
    content) and mutable buffers (by fully qualified name). Segments are uint8 arrays over the
    constants' memory (not copies); `constants` hashes each tensor once for all methods.

    `events` lists the calls in order, so that a method exported into a builder of its own (in a
    worker process, workers.py) can be merged as if it had been exported into this one."""

    def __init__(self, constants: Constants | None = None):
        self.constants = constants if constants is not None else Constants()
        self.segments: list = []  # bytes-like: uint8 arrays, the tokenizer's bytes
        self.segment_by_hash: dict[bytes, int] = {}
        self.buffers: list[MutableBufferT] = []
        self.buffer_by_name: dict[str, int] = {}
        self.events: list[tuple] = []  # ("segment", key) | ("buffer", fqn, initial value's key or None)

    def _key(self, t: torch.Tensor) -> bytes:
        return self.constants.digest(t) + str(t.dtype).encode()

    def _segment(self, key: bytes, data) -> int:
        """The index of the segment holding `key`, added (data() its bytes) when new."""
        if key not in self.segment_by_hash:
            self.segment_by_hash[key] = len(self.segments)
            self.segments.append(data())
        return self.segment_by_hash[key]

    def add_segment(self, t: torch.Tensor) -> int:
        key = self._key(t)
        self.events.append(("segment", key))
        return self._segment(key, lambda: self.constants.data(t))

    def buffer_index(self, fqn: str, value: torch.Tensor) -> int:
        if fqn not in self.buffer_by_name:
            b = MutableBufferT()
            b.name, b.dtype, b.sizes = fqn, pocket_dtype(value.dtype, f"buffer '{fqn}'"), list(value.shape)
            b.nbytes = value.numel() * value.element_size()
            key = None if all_zero(value) else self._key(value)
            self.events.append(("buffer", fqn, key))
            b.initSegment = -1 if key is None else self._segment(key, lambda: self.constants.data(value))
            self.buffer_by_name[fqn] = len(self.buffers)
            self.buffers.append(b)
        return self.buffer_by_name[fqn]

    def new_keys(self, events: list[tuple]) -> list[bytes]:
        """The segments merge(events, ...) would add, in order."""
        keys, known, buffers = [], set(self.segment_by_hash), set(self.buffer_by_name)
        for event in events:
            if event[0] == "buffer":
                if event[1] in buffers:
                    continue  # a buffer already here keeps its initial value
                buffers.add(event[1])
            key = event[-1]
            if key is not None and key not in known:
                known.add(key)
                keys.append(key)
        return keys

    def merge(self, method: MethodT, events: list[tuple], keys: list[bytes], buffers: list[MutableBufferT],
              data: dict[bytes, Any]) -> MethodT:
        """Adds a method exported into another builder (its events, segment keys by index and
        buffers) as the calls in `events` would have added it here: same segments and buffers in
        the same order; then renumbers the method's constant and buffer indices. `data`: the
        bytes of the segments new_keys(events) named."""
        local = {b.name: b for b in buffers}
        for event in events:
            if event[0] == "segment":
                self._segment(event[1], lambda: data[event[1]])
            elif event[1] not in self.buffer_by_name:
                b, key = local[event[1]], event[2]
                b.initSegment = -1 if key is None else self._segment(key, lambda: data[key])
                self.buffer_by_name[b.name] = len(self.buffers)
                self.buffers.append(b)
        for v in method.values:
            if isinstance(v.kind, TensorT) and v.kind.location == Location.Constant:
                v.kind.index = self.segment_by_hash[keys[v.kind.index]]
            elif isinstance(v.kind, TensorT) and v.kind.location == Location.Buffer:
                v.kind.index = self.buffer_by_name[buffers[v.kind.index].name]
        return method


def _cycle_collection_paused(fn):
    """`fn` with Python's automatic cycle collection off while it runs. An export allocates
    millions of small objects (FX nodes, fake tensors, sympy expressions), and each of the
    collector's full passes they trigger walks every object torch and the model hold: about a
    second of a SmolLM2 export. The cycles an export leaves (tens of MB) are freed by the first
    collection after it."""

    @functools.wraps(fn)
    def paused(*args, **kwargs):
        enabled = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()

    return paused


@_cycle_collection_paused
def export(model: torch.nn.Module | Callable | None, example_inputs: tuple = (), dynamic_shapes=None,
           methods: dict[str, tuple] | None = None, metadata: dict[str, Any] | None = None,
           quantize: "str | QuantConfig | None" = None, group_size: int | None = None,
           calibration: list | None = None, tokenizer: bytes | None = None,
           repeated: str | None = None) -> Program:
    """Exports `model` to a Pocket program.

    Args:
        model: an nn.Module (its forward becomes method "forward") or a callable; may be None
            when `methods` names every method.
        example_inputs: a tuple of example tensors for forward.
        dynamic_shapes: as in torch.export, e.g. ({0: torch.export.Dim("batch", max=64)},);
            every dynamic dim needs an upper bound (memory is planned for it).
        methods: more methods, name -> (module_or_callable, example_inputs[, dynamic_shapes]).
            Methods of one module share its parameters and mutable buffers (e.g. a KV cache).
        metadata: str -> str/int/float, stored in the file (pocket.load(...).metadata).
        quantize: "8da4w" (int4 weights, int8 dynamic activations), "int8w" (int8 weight-only),
            "int8" (static int8 CNN, needs `calibration`) or a QuantConfig. Recorded in the
            metadata under "quantization".
        group_size: weights per scale for 8da4w/int8w: 32, 64, 128 or 256.
        calibration: for "int8", a list of example inputs (tuples) to calibrate activations on.
        tokenizer: the bytes of a tokenizer file (tokenizer.json, tiktoken, llama2.c) to embed,
            so an LLM program is the only file an app ships.
        repeated: the path of an nn.ModuleList of blocks of one kind in each method's module
            (e.g. "model.layers" of a decoder): each kind of block is traced once and repeated,
            which exports deep models several times faster. The program computes the same.
            Blocks that differ in structure are traced one by one, as without it.
    Returns:
        A Program; .save(path) writes it; pocket.Module.from_bytes(program.data) runs it
            (the exporter does not import the runtime).
    Raises:
        ExportError: unsupported op (named, with the model's source line), unbounded dynamic
            dim, unsupported dtype or input/output structure.

    Example:
        >>> program = pocket.export(torch.nn.Linear(4, 2), (torch.randn(1, 4),))
        >>> program.save("linear.pocket")
    """
    specs: dict[str, tuple] = {}
    if model is not None:
        specs["forward"] = (model, example_inputs, dynamic_shapes)
    for name, spec in (methods or {}).items():
        if not isinstance(spec, tuple) or len(spec) not in (2, 3):
            raise ExportError(f"methods['{name}'] must be (module_or_callable, example_inputs[, dynamic_shapes])")
        specs[name] = spec if len(spec) == 3 else (*spec, None)
    if not specs:
        raise ExportError("nothing to export: pass a model or methods")

    config = resolve(quantize, group_size)
    if config is not None:
        specs = _quantize_specs(specs, config)
    builder = _ProgramBuilder()
    program = ProgramT()
    program.methods, summary_methods = [], {}
    if calibration is not None and not isinstance(calibration, (list, tuple)):
        raise ExportError(f"calibration must be a list of samples (each a tuple of inputs), not a "
                          f"{type(calibration).__name__}")
    calibration = (calibration or []) if config is not None and config.static_int8_conv else None
    exported = export_methods(list(specs.items()),
                              lambda name, spec, b: _export_method(name, *spec, calibration, b, repeated, config),
                              builder, lambda: _ProgramBuilder(builder.constants), jobs(len(specs)))
    for name, (method, summary_methods[name]) in zip(specs, exported):
        program.methods.append(method)
    if config is not None and not any(op.startswith(QUANTIZED_OPS) for s in summary_methods.values()
                                      for op in s["ops"]):
        kinds = "Linear or Embedding layers, linear weights" + (", convolutions" if config.static_int8_conv else "")
        warnings.warn(f"'{config.name}' found nothing it quantizes ({kinds}); the model stays fp32",
                      QuantizationWarning, stacklevel=2)
    program.methods.sort(key=lambda m: m.name)  # the schema keys methods by name
    if config is not None:
        metadata = {**(metadata or {}), "quantization": config.describe()}
    program.buffers = builder.buffers
    program.tokenizerSegment = -1
    if tokenizer is not None:
        program.tokenizerSegment = len(builder.segments)
        builder.segments.append(bytes(tokenizer))
    program.metadata = sorted((_kv(str(k), _metadata_text(k, v)) for k, v in (metadata or {}).items()),
                              key=lambda kv: kv.key)
    log.info("serializing: %d constant segments, %.1f MB", len(builder.segments),
             sum(len(s) for s in builder.segments) / 2**20)
    data = serialize(program, builder.segments)
    summary = {"methods": summary_methods, "constant_bytes": sum(len(s) for s in builder.segments),
               "tokenizer_bytes": len(tokenizer or b""), "file_bytes": len(data)}
    return Program(data, summary)


# What a quantized program runs (any of them: something was quantized).
QUANTIZED_OPS = ("pocket::linear_q", "pocket::embedding_q", "pocket::conv2d_q8")


def _export_method(name: str, fn, inputs: tuple, shapes, calibration: list | None, builder: _ProgramBuilder,
                   repeated: str | None = None, quant: QuantConfig | None = None):
    """One method through capture -> decompose -> passes -> emit -> plan: (MethodT, summary).
    `calibration` (a list, maybe empty) also quantizes its convolutions to static int8;
    `repeated`: see export(); `quant`: the linears left after the module swap are quantized."""
    start = time.perf_counter()
    stack = None
    if repeated is not None:
        if not isinstance(fn, torch.nn.Module):
            raise ExportError(f"method '{name}': repeated={repeated!r} needs the method to be an nn.Module")
        stack = plan_stack(fn, repeated)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch's internal pytree deprecations
        mg = _capture(name, fn, inputs, shapes, builder, stack)
        if stack is not None and not repeat_layers(mg, stack):
            mg = _capture(name, fn, inputs, shapes, builder, None)
    log.info("method '%s': passes", name)
    n = run_passes(mg, calibration, quant)
    if calibration is not None:
        log.info("method '%s': %d convolutions quantized to int8", name, n)
    log.info("method '%s': emitting and planning", name)
    emitter = MethodEmitter(mg, builder.add_segment, builder.buffer_index)
    method = emitter.emit()
    report = plan(method, emitter.planned)
    log.info("method '%s': %d instructions, arena %d bytes (unplanned %d), %.1f s", name, len(method.steps),
             report.arena_bytes, report.unplanned_bytes, time.perf_counter() - start)
    return method, {
        "arena_bytes": report.arena_bytes, "unplanned_bytes": report.unplanned_bytes,
        "ops": sorted({f"{o.name}{'.' + o.overload if o.overload else ''}" for o in method.operators}),
        "instructions": len(method.steps),
    }


def _capture(name: str, fn, inputs: tuple, shapes, builder: _ProgramBuilder, stack: Stack | None) -> MethodGraph:
    traced = "" if stack is None else f" ({len(stack.traced)} of {stack.n_layers} layers, the rest repeated)"
    log.info("method '%s': tracing%s", name, traced)
    with traced_layers(stack):
        ep = capture(name, fn, inputs, shapes)
        log.info("method '%s': decomposing to core ATen", name)
        return lift(name, decompose(ep), builder.constants)


def _quantize_specs(specs: dict, config: QuantConfig) -> dict:
    """Swaps each method's module for its quantized copy (one copy per module, so methods of
    one model keep sharing weights); bound methods are re-bound to the copy."""
    if not (config.linear_bits or config.embedding_bits):
        return specs
    copies: dict[int, torch.nn.Module] = {}

    def quantized(module):
        if id(module) not in copies:
            log.info("quantizing the model's weights (%s)", config.name)
            copies[id(module)] = quantize_modules(module, config)[0]
        return copies[id(module)]

    out = {}
    for name, (fn, inputs, shapes) in specs.items():
        if isinstance(fn, torch.nn.Module):
            fn = quantized(fn)
        elif isinstance(getattr(fn, "__self__", None), torch.nn.Module):
            fn = getattr(quantized(fn.__self__), fn.__name__)
        out[name] = (fn, inputs, shapes)
    return out


def _metadata_text(key, value) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ExportError(f"metadata['{key}'] must be a str, int or float, got {type(value).__name__}")
    return str(value)
