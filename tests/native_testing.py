"""run_kernel and time_kernel from pocket._native_testing, the kernel test harness module:
development builds only (POCKET_PYTHON_TESTING), never in the shipped wheel."""

try:
    from pocket._native_testing import run_kernel, time_kernel  # noqa: F401
except ImportError as e:
    raise ImportError("pocket._native_testing (the kernel test harness) is not built: run scripts/setup.sh --test, "
                      "or configure with -DPOCKET_PYTHON_TESTING=ON (scripts/dev_build.sh does)") from e
