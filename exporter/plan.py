"""Stage 5: memory planning, over the method emit.py built. Every planned tensor gets an
offset in arena 0.

Lifetimes run from the step that first writes a tensor to the last step that reads it
(method outputs live to the end). Tensors are placed largest first, each into the smallest
gap among the already placed tensors whose lifetimes overlap (greedy best-fit), so memory
is shared by tensors that are never alive at the same time.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from pocket.fb.api import Instruction, MethodT, TensorListT, TensorT, OptionalTensorListT

ALIGN = 64


@dataclasses.dataclass
class PlanReport:
    arena_bytes: int      # planned arena size
    unplanned_bytes: int  # what one buffer per tensor would take


def plan(method: MethodT, planned: list[int]) -> PlanReport:
    first, last = _lifetimes(method, set(planned))
    end = len(method.steps)
    items = []
    for v in planned:
        t: TensorT = method.values[v].kind
        start = first.get(v, 0)
        stop = end if v in method.outputs else last.get(v, start)
        items.append((_align(t.nbytes), start, stop, v))
    items.sort(key=lambda it: (-it[0], it[1], it[3]))
    # the placed tensors, in placing order: offset, size, lifetime
    offsets, sizes, starts, stops = (np.zeros(len(items), np.int64) for _ in range(4))
    arena = 0
    for i, (size, start, stop, v) in enumerate(items):
        live = (starts[:i] <= stop) & (start <= stops[:i])
        offset = _best_fit(size, offsets[:i][live], sizes[:i][live])
        offsets[i], sizes[i], starts[i], stops[i] = offset, size, start, stop
        method.values[v].kind.offset = offset
        arena = max(arena, offset + size)
    method.arenas = [arena] if planned else []
    for v in planned:
        method.values[v].kind.index = 0
    return PlanReport(arena, sum(it[0] for it in items))


def _best_fit(size: int, offsets: np.ndarray, lengths: np.ndarray) -> int:
    """The start of the smallest gap of at least `size` bytes between the busy ranges (the first
    such gap on a tie), or the end of the last one."""
    if not len(offsets):
        return 0
    order = np.lexsort((lengths, offsets))
    starts = offsets[order]
    ends = np.maximum.accumulate(starts + lengths[order])  # the end of everything up to here
    free_from = np.concatenate(([0], ends[:-1]))
    gaps = starts - free_from
    fits = np.flatnonzero(gaps >= size)
    if not len(fits):
        return int(ends[-1])
    return int(free_from[fits[np.argmin(gaps[fits])]])


def _lifetimes(method: MethodT, planned: set[int]):
    first: dict[int, int] = {}
    last: dict[int, int] = {}

    def touch(v: int, pc: int) -> None:
        for t in _tensors_in(method, v):
            if t in planned:
                first.setdefault(t, pc)
                last[t] = pc

    for pc, step in enumerate(method.steps):
        ins = step.instruction
        if step.instructionType == Instruction.KernelCall:
            for v in ins.args:
                touch(v, pc)
        elif step.instructionType == Instruction.Move:
            touch(ins.from_, pc)
            touch(ins.to, pc)
    return first, last


def _tensors_in(method: MethodT, v: int) -> list[int]:
    kind = method.values[v].kind
    if isinstance(kind, TensorT):
        return [v]
    if isinstance(kind, (TensorListT, OptionalTensorListT)):
        return [i for i in kind.items if i >= 0]
    return []


def _align(n: int) -> int:
    return (max(n, 1) + ALIGN - 1) // ALIGN * ALIGN
