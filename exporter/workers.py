"""Methods exported side by side.

Tracing dominates the export of a model with several methods (an LLM's prefill and decode:
torch.export and its decomposition run one Python thread per method, seconds each). On Linux
with more than one core, export() forks worker processes that export the methods after the
first while it exports the first itself. A worker sends back its MethodT, the segment and
buffer calls it made (_ProgramBuilder.events) and the bytes of the segments the program does
not hold yet; the parent merges the methods in order, so the file is byte for byte the one a
sequential export writes.

A worker runs torch single-threaded: the parent uses the other core, and OpenMP's thread pool
does not survive fork (a parallel region in the child hangs). Warnings a worker's method
raises are raised again in the parent; an exception is raised in the parent as the sequential
export would raise it; a worker that dies is replaced by the parent exporting its methods
itself. POCKET_EXPORT_JOBS=1 exports sequentially (POCKET_EXPORT_JOBS=n: at most n processes).
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import sys
import traceback
import warnings
from multiprocessing import Pipe

from pocket.exporter.errors import ExportError

log = logging.getLogger("pocket.export")


def jobs(n_methods: int) -> int:
    """How many processes export `n_methods` methods (1: sequentially, in this process)."""
    value = os.environ.get("POCKET_EXPORT_JOBS", "")
    if value:
        if not value.isdigit() or int(value) < 1:
            raise ExportError(f"POCKET_EXPORT_JOBS={value!r}: expected a positive number of processes")
        return min(int(value), n_methods) if hasattr(os, "fork") else 1
    if n_methods < 2 or not sys.platform.startswith("linux"):
        return 1  # fork is not safe with macOS system frameworks, and missing on Windows
    import torch

    if torch.cuda.is_initialized():
        return 1  # CUDA does not survive fork either
    return min(n_methods, len(os.sched_getaffinity(0)))


def export_methods(items: list[tuple[str, tuple]], export_one, builder, new_builder, n_jobs: int) -> list:
    """[(MethodT, summary)] for `items` [(name, spec)], in order, all merged into `builder`.
    export_one(name, spec, builder) exports one method into a builder; new_builder() makes an
    empty one for a worker."""
    if n_jobs < 2:
        return [export_one(name, spec, builder) for name, spec in items]
    import torch._dynamo  # noqa: F401  (torch.export imports these on first use: once, before forking)
    import torch._functorch.aot_autograd  # noqa: F401

    rest = items[1:]
    workers = [_Worker(rest[i::n_jobs - 1], export_one, new_builder) for i in range(min(n_jobs - 1, len(rest)))]
    done = False
    try:
        results = [export_one(*items[0], builder)]
        for i, (name, spec) in enumerate(rest):
            results.append(workers[i % len(workers)].receive(name, spec, export_one, builder))
        done = True
        return results
    finally:
        for w in workers:
            w.close(stop=not done)


class _Worker:
    """A forked process exporting `items` one after the other, each into a builder of its own."""

    def __init__(self, items, export_one, new_builder):
        sys.stdout.flush()
        sys.stderr.flush()
        mine, theirs = Pipe()
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            code = 1
            try:
                mine.close()
                _serve(theirs, items, export_one, new_builder)
                code = 0
            except BaseException:  # noqa: BLE001 (the parent learns of it through the pipe or EOF)
                pass
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        theirs.close()
        self.pid, self.conn, self.alive = pid, mine, True

    def receive(self, name, spec, export_one, builder):
        """The worker's (MethodT, summary) for method `name`, merged into `builder`; exported
        here when the worker has died."""
        message = None
        if self.alive:
            try:
                message = self.conn.recv()
                if message[0] == "method":
                    _, method, summary, events, keys, buffers, caught = message
                    wanted = builder.new_keys(events)
                    self.conn.send(wanted)
                    data = dict(zip(wanted, self.conn.recv()))
            except (EOFError, OSError, pickle.UnpicklingError) as e:
                self.alive, message = False, None
                log.warning("the export worker for method '%s' stopped (%s); exporting it here", name,
                            type(e).__name__)
        if message is None:
            return export_one(name, spec, builder)
        if message[0] == "method":
            _warn_again(caught)
            return builder.merge(method, events, keys, buffers, data), summary
        _, error, trace, caught = message
        _warn_again(caught)
        if hasattr(error, "add_note"):  # Python 3.11
            error.add_note(f"(raised in the export worker for method '{name}'; its traceback:\n{trace})")
        raise error

    def close(self, stop: bool):
        """Reaps the worker; `stop`: the export failed, the worker may still be working."""
        self.conn.close()
        try:
            if stop and os.waitpid(self.pid, os.WNOHANG)[0] == 0:
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except ChildProcessError:  # reaped already (SIGCHLD ignored by the application)
            pass


def _serve(conn, items, export_one, new_builder):
    import torch

    torch.set_num_threads(1)
    for name, spec in items:
        builder = new_builder()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # the parent's filters decide when it raises them again
            try:
                method, summary = export_one(name, spec, builder)
                error = None
            except Exception as e:  # noqa: BLE001 (sent to the parent, which raises it)
                error, trace = e, traceback.format_exc()
        caught = [(w.category, str(w.message), w.filename, w.lineno) for w in caught]
        if error is not None:
            conn.send(("error", _picklable(error, name), trace, _picklable_warnings(caught)))
            return
        conn.send(("method", method, summary, builder.events, list(builder.segment_by_hash), builder.buffers,
                   _picklable_warnings(caught)))
        wanted = conn.recv()
        conn.send([builder.segments[builder.segment_by_hash[key]] for key in wanted])


def _picklable(error: Exception, name: str) -> Exception:
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # noqa: BLE001 (torch raises types that do not pickle)
        return ExportError(f"method '{name}': {type(error).__name__}: {error}")


def _picklable_warnings(caught: list) -> list:
    out = []
    for category, message, filename, lineno in caught:
        try:
            pickle.loads(pickle.dumps(category))
        except Exception:  # noqa: BLE001
            category = UserWarning
        out.append((category, message, filename, lineno))
    return out


def _warn_again(caught: list) -> None:
    for category, message, filename, lineno in caught:
        warnings.warn_explicit(message, category, filename, lineno)
