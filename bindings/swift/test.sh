#!/usr/bin/env bash
# The Swift package's checks, in order:
#   1. libpocket: CMake builds the shared library into build/swift (the folder Package.swift
#      links by default; its own build dir, so other presets are untouched). With
#      POCKET_LIB_DIR set, the libpocket already built there is linked instead (e.g. build/host
#      after scripts/check_native.sh) and CMake is not run;
#   2. swift build: the Pocket module, CPocket and the pocket-chat demo (warnings in our own
#      sources fail the step);
#   3. pocket-chat: a scripted chat on the golden tiny LLM (two turns, /reset, /exit);
#   4. swift test --disable-swift-testing: the XCTest suite (golden programs, LLM, errors, CLI),
#      last, so the final line of a run is XCTest's summary.
#
#   bindings/swift/test.sh
#   POCKET_GOLDEN_DIR=/tmp/g bindings/swift/test.sh    # other golden programs
#   POCKET_LIB_DIR=$PWD/build/host bindings/swift/test.sh  # reuse a libpocket (absolute path)
#
# A missing tool (swift, cmake) skips everything with a message, except under CI=true, where it
# is a failure. swift build artefacts stay in bindings/swift/.build (gitignored).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$root/build/swift"
export POCKET_GOLDEN_DIR=${POCKET_GOLDEN_DIR:-$root/tests/golden}
golden=$POCKET_GOLDEN_DIR

say() { printf '\n==> %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# The toolchain's usual home, for shells that did not read /etc/profile.d.
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
  export PATH="$PATH:/opt/swift/usr/bin"
fi
tools=(swift)
[ -n "${POCKET_LIB_DIR:-}" ] || tools+=(cmake)
for tool in "${tools[@]}"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    if [ "${CI:-}" = true ]; then
      fail "$tool is required under CI=true but was not found"
    fi
    echo "SKIP: Swift checks: $tool not found (under CI=true this is a failure)" >&2
    exit 0
  fi
done
for f in tiny_llm.pocket tiny_llm.tokenizer.json tiny_llm.greedy.txt mlp.pocket mlp.forward.io; do
  [ -f "$golden/$f" ] || fail "no $golden/$f: run python tests/golden/make_golden.py"
done

if [ -n "${POCKET_LIB_DIR:-}" ]; then
  say "libpocket: using $POCKET_LIB_DIR"
  case $POCKET_LIB_DIR in /*) ;; *) fail "POCKET_LIB_DIR must be an absolute path" ;; esac
  ls "$POCKET_LIB_DIR"/libpocket.* >/dev/null 2>&1 || fail "no libpocket in $POCKET_LIB_DIR"
else
  say "libpocket (CMake, $build)"
  command -v ninja >/dev/null 2>&1 || fail "ninja not found (the CMake presets use it: apt-get install ninja-build, brew install ninja)"
  mkdir -p "$root/build"
  if [ ! -f "$build/CMakeCache.txt" ]; then
    (cd "$root" && cmake --preset swift -B "$build") >"$root/build/swift.configure.log" 2>&1 ||
      { cat "$root/build/swift.configure.log"; fail "cmake configure"; }
  fi
  cmake --build "$build" --target pocket || fail "building libpocket"
fi

cd "$here"
# SwiftPM leaves empty TemporaryDirectory.* folders in $TMPDIR at every build and test: they
# go to the package's (gitignored) build folder, emptied here, instead of piling up in /tmp.
export TMPDIR="$here/.build/tmp"
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR" || fail "cannot make $TMPDIR"
say "swift build"
log=$(mktemp)
trap 'rm -f "$log" "$log.out"' EXIT
swift build 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "swift build"
if grep -E "^($here/Sources|$root/demo_apps)/.*warning:" "$log" >/dev/null; then
  grep -E "^($here/Sources|$root/demo_apps)/.*warning:" "$log" | sort -u >&2
  fail "warnings in the Swift sources"
fi

say "pocket-chat (scripted stdin, golden tiny LLM)"
out="$log.out"
printf 'Hi\n/reset\nHi\n/exit\nnot read\n' |
  .build/debug/pocket-chat "$golden/tiny_llm.pocket" --tokenizer "$golden/tiny_llm.tokenizer.json" \
    --max-new-tokens 8 >"$out" 2>"$log"
rc=$?
cat "$log"
[ "$rc" -eq 0 ] || fail "pocket-chat exited with $rc"
grep -q "(conversation reset)" "$log" || fail "pocket-chat did not reset"
# stdout is reply + newline, twice: the same first turn before and after /reset (greedy).
size=$(wc -c <"$out")
[ "$size" -gt 2 ] && [ $((size % 2)) -eq 0 ] &&
  cmp -s <(head -c $((size / 2)) "$out") <(tail -c $((size / 2)) "$out") ||
  fail "pocket-chat replies differ before and after /reset: $(od -c "$out" | head -5)"
echo "pocket-chat ok"

say "swift test"
swift test --disable-swift-testing
