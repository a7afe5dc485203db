"""pytest plugin for scripts/lsan_bindings.sh (-p pytest_lsan): LeakSanitizer over pocket._native.

The leak check runs when the session ends, while the interpreter is still alive. With
PYTHONMALLOC=malloc every Python object lives in malloc's heap, so what a live object owns (the
pocket Module behind a pocket.load() result, a Runner) is reachable and not a leak; what
LeakSanitizer reports is memory that nothing points to any more. A check at process exit would
also report what CPython leaves unreclaimed when it finalizes, which is noise.
__lsan_do_leak_check() prints the report and exits with ASAN_OPTIONS' exitcode (23 by default)
when it finds a leak, and turns the exit-time check off when it finds none.

torch is imported before any test with LeakSanitizer off for this thread (__lsan_disable): its
import leaks a few frame objects (CPython 3.11, under torch::tensors::initialize_python_bindings),
and none of that is Pocket's. Everything after it, the import of pocket._native included, is
checked.
"""

import ctypes
import sys

import pytest

_lsan = ctypes.CDLL(None)


def _require(name):
    try:
        return getattr(_lsan, name)
    except AttributeError:
        raise pytest.UsageError(f"pytest_lsan: no {name} in this process (LD_PRELOAD libasan.so)") from None


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    _require("__lsan_disable")()
    try:
        import torch  # noqa: F401 - the tests' conftest imports it anyway
    except ImportError:
        pass
    finally:
        _require("__lsan_enable")()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    check = _require("__lsan_do_leak_check")
    sys.stdout.flush()
    sys.stderr.flush()
    check()
