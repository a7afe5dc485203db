#!/usr/bin/env bash
# The whole test suite (what CI runs): installs what it needs, then
#   native  host ctest, the strict core build and its size budget, linux-aarch64 under qemu
#   swift   the Swift package (swift build, XCTest, the pocket-chat demo)
#   java    the Java/Kotlin API (JUnit on this JVM, then on an arm64 JVM under qemu)
#   lsan-bindings  LeakSanitizer over the Python and JNI bindings (scripts/lsan_bindings.sh:
#           pytest on the binding tests and the JUnit suite, ASan build, libasan preloaded)
#   pytest  kernels vs ATen, models vs eager PyTorch, LLMs vs transformers, bad input
# Every step runs; the script fails at the end if any step failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh --test || exit 1
# Every native build of the suite through ccache (one cache for all presets and checkouts:
# paths below the checkout are hashed relative to it, and the builds with debug info (asan,
# fuzz) do not hash the working directory either, so a second checkout hits as well; their
# debug info may then name the first checkout's build folder).
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$root" \
    CCACHE_NOHASHDIR=true
fi

failed=()
step() {  # name command...
  local name=$1 start=$SECONDS
  shift
  echo "==> $name"
  if "$@"; then
    echo "--- $name ok ($((SECONDS - start)) s)"
  else
    failed+=("$name")
    echo "--- $name FAILED ($((SECONDS - start)) s)" >&2
  fi
}

step native scripts/check_native.sh
step swift env POCKET_LIB_DIR="$root/build/host" bindings/swift/test.sh
# The bindings reuse the native step's builds (same flags), so the runtime is not rebuilt.
step java bindings/java/test.sh "$root/build/host"
step chat-core-android demo_apps/android/chat-core/test.sh "$root/build/host"
step java-arm64 bindings/java/test.sh --arm64 "$root/build/linux-aarch64"
step lsan-bindings scripts/lsan_bindings.sh
step pytest python3 -m pytest -q -p no:cacheprovider --durations=25 tests

if [ ${#failed[@]} -gt 0 ]; then
  echo "failed steps: ${failed[*]}"
  exit 1
fi
