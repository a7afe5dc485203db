"""Stage 5: memory planning, over the method emit.py built. Every planned tensor gets an
offset in arena 0.

Lifetimes run from the step that first writes a tensor to the last step that reads it
(method outputs live to the end). Tensors are placed largest first, each into the smallest
gap among the already placed tensors whose lifetimes overlap (greedy best-fit), so memory
is shared by tensors that are never alive at the same time.
"""

from __future__ import annotations

import dataclasses

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
    placed: list[tuple[int, int, int, int]] = []  # (offset, size, start, stop)
    arena = 0
    for size, start, stop, v in items:
        offset = _best_fit(size, [(o, s) for o, s, b, e in placed if b <= stop and start <= e])
        placed.append((offset, size, start, stop))
        method.values[v].kind.offset = offset
        arena = max(arena, offset + size)
    method.arenas = [arena] if planned else []
    for v in planned:
        method.values[v].kind.index = 0
    return PlanReport(arena, sum(it[0] for it in items))


def _best_fit(size: int, busy: list[tuple[int, int]]) -> int:
    best, best_gap, cursor = None, None, 0
    for offset, length in sorted(busy):
        gap = offset - cursor
        if gap >= size and (best_gap is None or gap < best_gap):
            best, best_gap = cursor, gap
        cursor = max(cursor, offset + length)
    return cursor if best is None else best


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
