"""Summaries of a Module's profile by op, by model layer (submodule) and by model source line
(what `pocket run --profile` prints).

    m = pocket.load("net.pocket")
    m.set_profiling(True)
    for _ in range(10):
        m.forward(x)
    print(pocket.profile.format_profile(m.profile()))
"""

from __future__ import annotations


UNKNOWN = {"op": "(unknown op)", "layer": "(top level or unknown)", "source": "(source line unknown)"}


def summarize(entries: list[dict], by: str = "op") -> list[dict]:
    """Entries of Module.profile() added up by "op", "layer" or "source", slowest first:
    [{"key", "calls", "ms", "share"}], share being the fraction of all the time."""
    if by not in UNKNOWN:
        raise ValueError(f"by must be one of {sorted(UNKNOWN)}, not {by!r}")
    total = sum(e["ms"] for e in entries) or 1.0
    groups: dict[str, dict] = {}
    for e in entries:
        key = e[by] or UNKNOWN[by]
        g = groups.setdefault(key, {"key": key, "calls": 0, "ms": 0.0})
        g["calls"] += e["calls"]
        g["ms"] += e["ms"]
    rows = sorted(groups.values(), key=lambda g: g["ms"], reverse=True)
    for g in rows:
        g["share"] = g["ms"] / total
    return rows


def format_profile(entries: list[dict], runs: int = 1, top: int = 15) -> str:
    """Three tables, by op, by model layer and by model source line: ms per run, share and
    calls per run, the `top` slowest rows of each."""
    runs = max(runs, 1)
    total = sum(e["ms"] for e in entries) / runs
    lines = [f"profile: {total:.3f} ms per run in {len(entries)} instructions, {runs} run(s)"]
    for by, title in (("op", "op"), ("layer", "model layer"), ("source", "model source line")):
        rows = summarize(entries, by)
        lines.append(f"\n  {'ms/run':>9} {'share':>6} {'calls':>6}  {title}")
        for r in rows[:top]:
            key = r["key"] if len(r["key"]) <= 100 else r["key"][:97] + "..."
            lines.append(f"  {r['ms'] / runs:9.3f} {r['share']:6.1%} {r['calls'] // runs:6d}  {key}")
        if len(rows) > top:
            rest = sum(r["ms"] for r in rows[top:]) / runs
            lines.append(f"  {rest:9.3f} {'':6} {'':6}  ({len(rows) - top} more)")
    return "\n".join(lines)
