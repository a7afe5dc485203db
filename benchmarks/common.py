"""Shared pieces of the benchmarks: machine description, timing, table output."""

from __future__ import annotations

import datetime
import os
import platform
import resource
import statistics
import time

PROMPT, DECODE = 32, 64  # LLM rows: prompt tokens (prefill), then greedy decode steps


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_line() -> str:
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        have = [x for x in ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni") if f" {x}" in text]
        flags = f", {' '.join(have)}"
    except OSError:
        pass
    return (f"{datetime.date.today().isoformat()} · {cpu_model()} · {os.cpu_count()} cores{flags} · "
            f"Python {platform.python_version()}")


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def peak_rss_mb() -> float:
    """Peak resident memory of this process (MB). VmHWM, because ru_maxrss keeps the peak of
    the process image before exec (a benchmark child would report its parent's)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def table(headers: list[str], rows: list[list]) -> str:
    cells = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, cells)])
