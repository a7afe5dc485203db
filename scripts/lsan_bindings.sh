#!/usr/bin/env bash
# LeakSanitizer over the bindings (the C path is scripts/check_native.sh asan). Builds the
# `lsan-bindings` preset (pocket._native and libpocket_jni with -fsanitize=address, into
# build/lsan-bindings) and runs, with GCC's libasan preloaded and leak detection on:
#   python  pytest on the tests that drive pocket._native and pocket.llm.Runner (load, run,
#           errors and malformed files, threads, generation, file regions); the leak check runs
#           at the end of the session, before CPython finalizes (scripts/lsan/pytest_lsan.py);
#   java    the JUnit tests of bindings/java (bindings/java/test.sh) in a JVM; the leak check
#           runs when the JVM exits.
# Suppressions, each with its reason: scripts/lsan/python.supp and scripts/lsan/jvm.supp. They
# name only functions of CPython's neighbours (torch, tokenizers) and of the JVM, zlib and glibc;
# a leak that Pocket's code allocated fails the step.
#
#   scripts/lsan_bindings.sh               # both
#   scripts/lsan_bindings.sh python        # one
#
# What a run needs, found out on Debian 12 (GCC 12, OpenJDK 17, CPython 3.11):
#  - LD_PRELOAD of libasan.so and libstdc++.so: neither `python` nor `java` links libasan, and
#    without libstdc++ loaded first ASan's __cxa_throw interceptor fails a CHECK at the first
#    C++ exception;
#  - the real interpreter (sys.executable), not a pyenv shim: the preload must not reach bash;
#  - PYTHONMALLOC=malloc: pymalloc's arenas are mmap'd, which LeakSanitizer does not scan, so
#    everything a live Python object owns would look leaked;
#  - ASAN_OPTIONS intercept_tls_get_addr=0, in both parts: GCC 12's libasan (LLVM's up to 16)
#    takes a dynamic TLS block whose address is 16 bytes past a page boundary for one with a
#    glibc 2.19 header, and reads its range from the 16 bytes before it. The leak check then
#    crashes ("Tracer caught signal 11", "LeakSanitizer has encountered a fatal error") when it
#    scans that thread. Whether a block lands there depends on malloc's addresses: every JVM run
#    here; most likely also the Python part that failed once in CI (2026-11-28; 30 runs here
#    passed, and that run's output is gone). Without the interceptor, a dynamic TLS block is
#    still scanned, as the heap block it is, reached from the thread's DTV;
#  - JVM: ASAN_OPTIONS handle_segv=0 and allow_user_segv_handler=1 (HotSpot uses SIGSEGV for
#    null checks and safepoints).
#
# A missing tool (cmake, ninja, libasan, pybind11; the JDK, kotlinc, JUnit for java) skips
# that part with a message, except under CI=true, where it is a failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=$root/build/lsan-bindings
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(python java)
for part in "${parts[@]}"; do
  case $part in
    python | java) ;;
    *) echo "unknown part '$part' (python, java)" >&2; exit 2 ;;
  esac
done

failed=()
skipped=()
ran=()
logs=()  # the output of each part that failed, repeated at the end of the run
missing() {  # what part
  if [ "${CI:-}" = true ]; then
    echo "FAIL: $2: $1 is required under CI=true but was not found" >&2
    failed+=("$2 ($1 missing)")
  else
    echo "SKIP: $2: $1 not found (under CI=true this is a failure)" >&2
    skipped+=("$2")
  fi
}
have() { command -v "$1" >/dev/null 2>&1; }
wants() { [[ " ${parts[*]} " == *" $1 "* ]]; }
drop() {  # part
  local kept=() p
  for p in "${parts[@]}"; do [ "$p" = "$1" ] || kept+=("$p"); done
  parts=("${kept[@]}")
}
summary() {  # exits
  [ ${#skipped[@]} -gt 0 ] && echo "lsan-bindings skipped: ${skipped[*]}"
  if [ ${#failed[@]} -gt 0 ]; then
    # The test runner's log may keep only the end of a long run: what failed comes last.
    local log
    for log in "${logs[@]}"; do
      echo "--- the last 80 lines of $log" >&2
      tail -n 80 "$log" >&2
    done
    echo "lsan-bindings FAILED: ${failed[*]}" >&2
    exit 1
  fi
  [ ${#ran[@]} -gt 0 ] && echo "lsan-bindings: ${ran[*]} clean"
  exit 0
}

# ---- toolchain ---------------------------------------------------------------------------
for tool in cmake ninja gcc; do
  have "$tool" || { missing "$tool" "${parts[*]}"; summary; }
done
asan_lib=$(gcc -print-file-name=libasan.so)
stdcxx_lib=$(gcc -print-file-name=libstdc++.so)
if [ ! -f "$asan_lib" ]; then
  missing "libasan.so (Debian package libgcc-12-dev)" "${parts[*]}"
  summary
fi
preload="$asan_lib:$stdcxx_lib"  # ld.so splits LD_PRELOAD on colons (or spaces)

cmake_args=()
if wants python; then
  python=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
  # pybind11 is a build requirement (pip builds the wheel in an isolated environment), so a
  # fresh machine has it only here: the same pin as pyproject's build-system.
  if [ -n "$python" ] && ! "$python" -c "import pybind11" 2>/dev/null; then
    "$python" -m pip install -q --disable-pip-version-check pybind11==3.1.0 || true
  fi
  if [ -z "$python" ] || ! "$python" -c "import pybind11, numpy, pytest" 2>/dev/null; then
    missing "python3 with pybind11, numpy and pytest" python
    drop python
  else
    cmake_args+=(-Dpybind11_DIR="$("$python" -m pybind11 --cmakedir)")
  fi
fi
if wants java && ! have javac; then
  missing "javac (Debian package default-jdk-headless)" java
  drop java
fi
if wants java; then
  cmake_args+=(-DJAVA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")")
else
  cmake_args+=(-DPOCKET_BUILD_JAVA=OFF)
fi
wants python || cmake_args+=(-DPOCKET_BUILD_PYTHON=OFF)
[ ${#parts[@]} -gt 0 ] || summary

# ---- build -------------------------------------------------------------------------------
echo "==> build: lsan-bindings preset in $build"
mkdir -p build
log=$build.build.log
targets=()
wants python && targets+=(_native)
wants java && targets+=(pocket_jni)
if ! { cmake --preset lsan-bindings "${cmake_args[@]}" &&
  { [ ${#targets[@]} -eq 0 ] || cmake --build --preset lsan-bindings --target "${targets[@]}"; }; } >"$log" 2>&1; then
  tail -40 "$log"
  failed+=(build)
  summary
fi

# ---- python ------------------------------------------------------------------------------
if wants python; then
  echo "==> python: pytest under LeakSanitizer"
  start=$SECONDS
  if ! scripts/dev_build.sh --package-only "$build" >/dev/null; then
    failed+=(python)
  elif env LD_PRELOAD="$preload" PYTHONMALLOC=malloc \
    ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 LSAN_OPTIONS="suppressions=$root/scripts/lsan/python.supp:print_suppressions=0" \
    PYTHONPATH="$build/python:$root/scripts/lsan" \
    "$python" -m pytest -q -p no:cacheprovider -p pytest_lsan \
    tests/test_bad_inputs.py tests/test_threads.py tests/test_load_region.py tests/llm/test_runner.py \
    2>&1 | tee "$build.python.log"; then
    echo "--- python ok ($((SECONDS - start)) s)"
    ran+=(python)
  else
    echo "--- python FAILED ($((SECONDS - start)) s): a LeakSanitizer report (exit 23) or a test failure above" >&2
    failed+=(python)
    logs+=("$build.python.log")
  fi
fi

# ---- java --------------------------------------------------------------------------------
if wants java; then
  echo "==> java: JUnit under LeakSanitizer"
  start=$SECONDS
  # The launcher's words are split on spaces: the paths above have none on these machines.
  if POCKET_JAVA_LAUNCHER="env LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0:handle_segv=0:allow_user_segv_handler=1 LSAN_OPTIONS=print_suppressions=0:suppressions=$root/scripts/lsan/jvm.supp" \
    bindings/java/test.sh "$build" 2>&1 | tee "$build.java.log"; then
    echo "--- java ok ($((SECONDS - start)) s)"
    ran+=(java)
  else
    echo "--- java FAILED ($((SECONDS - start)) s): a LeakSanitizer report or a test failure above" >&2
    failed+=(java)
    logs+=("$build.java.log")
  fi
fi

summary
