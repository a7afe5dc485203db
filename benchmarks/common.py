"""Shared pieces of the benchmarks: the machine line, waiting for an idle machine, running each
measurement in fresh processes (engines interleaved), memory bandwidth, table output.

Peers are benchmark-only dependencies: `pip install -r benchmarks/requirements.txt`.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
PROMPT, DECODE = 32, 256  # run.py's LLM rows: prompt tokens (prefill), then greedy decode steps
ISA_FLAGS = ("avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_int8",
             "asimd", "asimddp", "i8mm", "sve")


# ---- the machine ------------------------------------------------------------------------------

def _cpuinfo() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return f.read()
    except OSError:
        return ""


def cpu_model() -> str:
    m = re.search(r"^model name\s*:\s*(.+)$", _cpuinfo(), re.M)
    return m.group(1).strip() if m else (platform.processor() or platform.machine())


def isa_features() -> list[str]:
    m = re.search(r"^(?:flags|Features)\s*:\s*(.+)$", _cpuinfo(), re.M)
    have = set(m.group(1).split()) if m else set()
    return [f for f in ISA_FLAGS if f in have]


def physical_cores() -> int:
    """Distinct (package, core) pairs; the logical count where /proc/cpuinfo does not say."""
    pairs, package = set(), "0"
    for line in _cpuinfo().splitlines():
        if line.startswith("physical id"):
            package = line.split(":")[1].strip()
        elif line.startswith("core id"):
            pairs.add((package, line.split(":")[1].strip()))
    return len(pairs) or (os.cpu_count() or 1)


def cpu_kind() -> str:
    """A file-name slug for the kind of CPU, e.g. amd-epyc, intel-xeon-platinum-8375c."""
    words = re.sub(r"\((r|tm)\)|cpu|processor|@.*|\d+-core", " ", cpu_model().lower())
    return "-".join(re.findall(r"[a-z0-9]+", words)[:4]) or platform.machine()


def machine_line(threads: list[int]) -> str:
    cap = os.environ.get("POCKET_KERNELS")
    capped = (f" · **capped at {cap}**: Pocket (POCKET_KERNELS) and eager PyTorch (ATen, oneDNN, MKL) use "
              f"only {cap} code; ExecuTorch (XNNPACK) and llama.cpp have no such switch") if cap else ""
    return (f"{datetime.date.today().isoformat()} · {cpu_model()} · ISA: {' '.join(isa_features()) or '-'} · "
            f"{os.cpu_count()} logical cores, {physical_cores()} physical · threads "
            f"{', '.join(map(str, threads))} · Python {platform.python_version()}{capped}")


# What --isa sets, for this process and the children: Pocket's kernel cap and the switches of
# eager PyTorch's CPU libraries (ATen's dispatch, oneDNN, MKL).
ISA_CAPS = {
    "avx2": {"POCKET_KERNELS": "avx2", "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
             "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    # AVX2 + AVX-VNNI (Alder Lake and later client cores): ATen has no such level, oneDNN has
    "avxvnni": {"POCKET_KERNELS": "avxvnni", "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2_VNNI",
                "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
}


def apply_isa(args) -> str:
    """Caps the engines at --isa (before anything imports torch); returns the file-name suffix."""
    if not args.isa:
        return ""
    if "avx512f" not in isa_features():
        sys.exit(f"--isa {args.isa} caps an AVX-512 CPU; this one runs AVX2 code already")
    if args.isa == "avxvnni" and "avx_vnni" not in isa_features():
        sys.exit("--isa avxvnni needs a CPU with AVX-VNNI")
    os.environ.update(ISA_CAPS[args.isa])
    return f"-{args.isa}"


def engine_versions() -> str:
    """Pocket's commit and the installed peers' versions."""
    from importlib import metadata

    try:
        commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip() or "?"
    except OSError:
        commit = "?"
    parts = [f"Pocket {commit}"]
    for dist in ("torch", "executorch", "llama-cpp-python", "transformers"):
        try:
            parts.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist} not installed")
    return ", ".join(parts)


def results_path(suffix: str = "") -> str:
    """benchmarks/results/<date>-<cpu kind><suffix>.md"""
    return os.path.join(RESULTS, f"{datetime.date.today().isoformat()}-{cpu_kind()}{suffix}.md")


# ---- load: wait for an idle machine and record what was seen ----------------------------------

def _cpu_busy_fraction(window_s: float) -> float:
    """Share of all CPUs busy over `window_s` seconds (this process sleeps meanwhile, so the
    busy time is other processes')."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        idle = v[3] + (v[4] if len(v) > 4 else 0)
        return sum(v) - idle, sum(v)

    b0, t0 = sample()
    time.sleep(window_s)
    b1, t1 = sample()
    return (b1 - b0) / max(t1 - t0, 1)


class LoadGuard:
    """Waits before each measurement until the 1-minute load is below `max_load` and other
    processes use under `max_busy` of the CPUs (and, with `max_round_trip_ns`, until cores 0 and
    1 pass a cache line back and forth that fast), at most `timeout_s` in all (then measures
    anyway and says so); `wait=False` only records. Every sample is kept for the table's
    header."""

    def __init__(self, max_load: float = 0.5, max_busy: float = 0.1, timeout_s: float = 600, wait: bool = True,
                 max_round_trip_ns: float | None = None):
        self.max_load, self.max_busy, self.wait = max_load, max_busy, wait
        self.max_round_trip_ns = max_round_trip_ns
        self.round_trips: list[float] = []
        self.retried = 0
        # A budget of waiting, spent only while waiting: a run longer than timeout_s keeps its
        # guard (a deadline from the start stopped guarding after the first timeout_s).
        self.budget_s = timeout_s
        self.samples: list[tuple[float, float]] = []
        self.gave_up = False

    def before_run(self) -> None:
        start = time.monotonic()
        while True:
            busy = _cpu_busy_fraction(0.5)
            load = os.getloadavg()[0]
            trip = core_round_trip_ns()
            near = self.max_round_trip_ns is None or trip is None or trip <= self.max_round_trip_ns
            quiet = load < self.max_load and busy < self.max_busy and near
            out_of_time = time.monotonic() - start > self.budget_s
            if quiet or not self.wait or out_of_time:
                self.budget_s = max(self.budget_s - (time.monotonic() - start), 0.0)
                if not quiet and self.wait and not self.gave_up:
                    self.gave_up = True
                    print(f"machine still busy (load {load:.2f}, others {busy:.0%} CPU, core round trip "
                          f"{trip or 0:.0f} ns) after the idle timeout: measuring anyway", file=sys.stderr)
                self.samples.append((load, busy))
                if trip is not None:
                    self.round_trips.append(trip)
                return
            time.sleep(2)

    def still_near(self) -> bool:
        """After a measurement: False when --max-round-trip is set and the cores moved apart
        during it (the caller measures again; `retried` counts those)."""
        if self.max_round_trip_ns is None:
            return True
        trip = core_round_trip_ns()
        near = trip is None or trip <= self.max_round_trip_ns
        self.retried += not near
        return near

    def summary(self) -> str:
        if not self.samples:
            return "load not sampled"
        loads, busy = [s[0] for s in self.samples], [s[1] for s in self.samples]
        n_busy = sum(not (lo < self.max_load and b < self.max_busy) for lo, b in self.samples)
        verdict = "idle" if n_busy == 0 else f"NOT idle: {n_busy} of {len(self.samples)} started on a busy machine"
        return (f"load seen before the {len(self.samples)} measurements: 1-min load {min(loads):.2f}–{max(loads):.2f}, "
                f"other processes' CPU {min(busy):.0%}–{max(busy):.0%} "
                f"({verdict}; limits load < {self.max_load}, CPU < {self.max_busy:.0%}"
                f"{'' if self.max_round_trip_ns is None else f', core round trip <= {self.max_round_trip_ns:.0f} ns'}"
                f"{'' if self.wait else ', --no-wait'})" + self._round_trip_summary())

    def _round_trip_summary(self) -> str:
        if not self.round_trips:
            return ""
        far = sum(t > 2 * min(self.round_trips) for t in self.round_trips)
        moved = f" ({far} of {len(self.round_trips)} over twice the fastest: the host moved the virtual CPUs)"
        again = f"; {self.retried} measurements taken again (the cores moved apart during them)"
        return (f" · cores 0 and 1 passed a cache line back and forth in {min(self.round_trips):.0f}–"
                f"{max(self.round_trips):.0f} ns before the measurements"
                f"{moved if far else ''}{again if self.retried else ''}")


def core_round_trip_ns() -> float | None:
    """How long a cache line takes from core 0 to core 1 and back (what a thread pool's hand-off
    costs), or None where it cannot be measured (one core, a wheel without the test harness).
    On a VM it jumps when the host moves the virtual CPUs between cores that share a cache
    (~80 ns on the Zen 5 EPYC here) and cores that do not (~400 ns): 2-thread times follow."""
    if (os.cpu_count() or 1) < 2:
        return None
    try:
        from pocket._native_testing import core_round_trip_ns as measure
        return measure(0, 1, 20)
    except (ImportError, ValueError):
        return None


def add_run_options(ap) -> None:
    """Options shared by run.py and smollm2_bench.py."""
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--runs", type=int, default=5, help="fresh processes per cell (median and min reported)")
    ap.add_argument("--max-load", type=float, default=0.5, help="wait until the 1-min load is below this")
    ap.add_argument("--idle-timeout", type=float, default=900, help="seconds to wait for idle in all, then run")
    ap.add_argument("--no-wait", action="store_true", help="do not wait for an idle machine (load is still recorded)")
    ap.add_argument("--max-round-trip", type=float, metavar="NS", help="also wait until cores 0 and 1 pass a cache "
                    "line back and forth within NS ns (a VM whose host moves its virtual CPUs: see core_round_trip_ns)")
    ap.add_argument("--out", help="markdown file to write (default: benchmarks/results/<date>-<cpu kind>...md)")
    ap.add_argument("--no-save", action="store_true", help="print the table only")
    ap.add_argument("--isa", choices=sorted(ISA_CAPS), help="run an AVX2-only CPU's code (avx2; avxvnni: with "
                    "AVX-VNNI) on an AVX-512 one (Pocket and eager PyTorch; ExecuTorch and llama.cpp keep theirs): "
                    "see ISA_CAPS")
    ap.add_argument("--work", metavar="DIR", help="keep exported programs in DIR and reuse the ones already there "
                    "(default: a temporary folder; empty DIR after changing an exporter)")


def work_dir(args):
    """The folder exports go to: --work (kept, reused) or a temporary one (a context manager)."""
    if args.work:
        os.makedirs(args.work, exist_ok=True)
        return contextlib.nullcontext(args.work)
    return tempfile.TemporaryDirectory()


def reuse(args, path: str) -> bool:
    """True (and says so) when --work already holds the export at `path`."""
    if args.work and os.path.isfile(path):
        print(f"reusing {path}", file=sys.stderr)
        return True
    return False


def guard_from(args) -> LoadGuard:
    return LoadGuard(args.max_load, 0.1, args.idle_timeout, not args.no_wait, args.max_round_trip)


# ---- fresh processes, engines interleaved -----------------------------------------------------

# numpy's OpenBLAS starts a thread per core at import, and it spins for a while after: at 1
# thread it competed with the engine for the second core (Pocket's 1-thread cells showed 1.3-2.6
# cores busy). No engine uses numpy's BLAS in a timed part, so every child gets one BLAS thread.
CHILD_ENV = {"OPENBLAS_NUM_THREADS": "1"}


def run_child(argv: list[str], timeout_s: float = 1800) -> dict | None:
    """Runs `python argv...`; the last stdout line is the JSON result. None on failure."""
    try:
        out = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=timeout_s,
                             env={**os.environ, **CHILD_ENV})
    except subprocess.TimeoutExpired:
        print(f"  timed out: {' '.join(argv[-4:])}", file=sys.stderr)
        return None
    if out.returncode != 0 or not out.stdout.strip():
        print(f"  failed: {' '.join(argv[-4:])}\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_cells(cells: list, argv_of, runs: int, guard: LoadGuard) -> dict:
    """Runs every cell `runs` times, each in a fresh process, the cells interleaved (run r goes
    through all of them, in an order rotated by r) so slow drifts of the machine hit every
    engine alike. Returns {cell: [result dict, ...]}."""
    results = {c: [] for c in cells}
    for r in range(runs):
        order = cells[r % len(cells):] + cells[:r % len(cells)]
        for cell in order:
            for _ in range(3):  # again while the cores moved apart during it (--max-round-trip)
                guard.before_run()
                res = run_child(argv_of(cell))
                if guard.still_near():
                    break
            if res is not None:
                results[cell].append(res)
        print(f"  run {r + 1}/{runs} done", file=sys.stderr)
    return results


def med_min(values: list[float]) -> tuple[float, float] | None:
    return (statistics.median(values), min(values)) if values else None


def fmt_med_min(values: list[float], digits: int = 1) -> str:
    """'median (min)' of values, or '-'. For rates, pass the rates: min is then the slowest run."""
    m = med_min(values)
    return "-" if m is None else f"{m[0]:.{digits}f} ({m[1]:.{digits}f})"


def fmt_med_max(values: list[float], digits: int = 1) -> str:
    """'median (best)' of a rate (higher is better)."""
    return "-" if not values else f"{statistics.median(values):.{digits}f} ({max(values):.{digits}f})"


# ---- inside a measuring child -----------------------------------------------------------------

def cpu_seconds() -> float:
    """User + system CPU time of this process, all threads."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Phase:
    """Times a phase: wall ms and how many cores it kept busy (CPU time / wall time), the
    engine-independent check of the thread count it really ran with."""

    def __enter__(self):
        self.c0, self.t0 = cpu_seconds(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        wall = time.perf_counter() - self.t0
        self.ms, self.cores = wall * 1e3, (cpu_seconds() - self.c0) / max(wall, 1e-9)


# Warm-up before any timed part: at least WARM_RUNS calls and WARM_SECONDS of them. A core
# that was idle runs slowly for tens of ms after it wakes (seen on these VMs: the first ~20
# forwards of a 2-thread MobileNetV2 at 1.7-2.4 ms, then 1.37), which a fixed 3 calls left in
# the timing of whichever engine starts fastest. Same rule for every engine.
WARM_RUNS, WARM_SECONDS = 3, 0.3


def warm_up(fn, runs: int = WARM_RUNS, seconds: float = WARM_SECONDS) -> int:
    """Calls fn() until both `runs` calls and `seconds` have passed; returns the calls made."""
    n, t0 = 0, time.perf_counter()
    while n < runs or time.perf_counter() - t0 < seconds:
        fn()
        n += 1
    return n


def cores_busy(fn, seconds: float = 0.2) -> float:
    """CPU time / wall time of calling fn for at least `seconds`. Not of a short timed part:
    Linux adds a thread's CPU time running on another core to the process's total at its
    scheduler ticks (every few ms), so over a millisecond it can read 6 cores on a 2-core VM."""
    with Phase() as phase:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            fn()
    return phase.cores


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


# ---- memory bandwidth -------------------------------------------------------------------------

def memory_bandwidth(threads: list[int], mib: int = 512) -> dict:
    """{threads: {"read_gbs", "copy_gbs"}} from membw.c (compiled here with the system C compiler
    and OpenMP). read is a read-only stream (the decode bound's rate); copy counts bytes read +
    written. Empty when no compiler is found."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        print("no C compiler: memory bandwidth not measured", file=sys.stderr)
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "membw")
        subprocess.run([cc, "-O3", "-march=native", "-fopenmp", os.path.join(HERE, "membw.c"), "-o", exe], check=True)
        return {t: json.loads(subprocess.run([exe, str(t), str(mib)], capture_output=True, text=True,
                                             check=True).stdout) for t in threads}


def bandwidth_line(bw: dict) -> str:
    if not bw:
        return "memory bandwidth: not measured"
    return "memory bandwidth (best of 7, 512 MiB): " + "; ".join(
        f"{t} thread{'s' if t > 1 else ''}: read {v['read_gbs']:.1f} GB/s, copy {v['copy_gbs']:.1f} GB/s (read+write)"
        for t, v in sorted(bw.items()))


def table(headers: list[str], rows: list[list]) -> str:
    cells = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, cells)])


def write_results(text: str, args, suffix: str) -> None:
    print(text)
    if args.no_save:
        return
    path = args.out or results_path(suffix)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")
    print(f"wrote {path}", file=sys.stderr)
