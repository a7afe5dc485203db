#!/usr/bin/env bash
# Runs Pocket's libFuzzer targets (fuzz/, built with the `fuzz` preset: clang, ASan + UBSan).
#
#   scripts/fuzz.sh --minutes 30                    # every target, 30 minutes each
#   scripts/fuzz.sh --seconds 20 program chat_template
#   scripts/fuzz.sh --replay                        # only the committed regression inputs and seeds
#   scripts/fuzz.sh --jobs 2 --minutes 60           # two targets at a time
#
# Each target starts from its committed seeds (fuzz/corpus/<target>/, read-only) and a work
# corpus in the build dir that keeps what earlier runs found; it first replays its regression
# inputs (fuzz/regressions/<target>/). A finding stops that target: the input is written to
# <build>/artifacts/<target>/ (commit it under fuzz/regressions/<target>/ with the fix). At
# the end a table gives executions and libFuzzer's coverage (cov: edges, ft: features) per
# target; the script exits non-zero when any target found something.
#
# Options: --build-dir DIR (default build/fuzz), --jobs N, --no-build.
# Environment: POCKET_FUZZ_ARGS adds libFuzzer flags (e.g. "-rss_limit_mb=4096").
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

ALL_TARGETS=(program tokenizer_json tokenizer_tiktoken tokenizer_llama2c embedded_tokenizer chat_template generation_config)
seconds=60
replay_only=0
jobs=1
build=build/fuzz
do_build=1
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) seconds=$(($2 * 60)); shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --replay) replay_only=1; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=("${ALL_TARGETS[@]}")
for t in "${targets[@]}"; do
  [ -f "fuzz/$t.cpp" ] || { echo "unknown fuzz target '$t' (${ALL_TARGETS[*]})" >&2; exit 2; }
done

if ! command -v clang++-14 >/dev/null 2>&1; then
  echo "clang++-14 not found: apt-get install clang-14 libclang-rt-14-dev (scripts/setup.sh --test)" >&2
  exit 3
fi
if [ "$do_build" = 1 ]; then
  cmake --preset fuzz -B "$build" >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
  cmake --build "$build" -j "${POCKET_BUILD_JOBS:-2}" --target "${targets[@]/#/fuzz_}" || exit 1
fi

# Sanitizer settings: leaks are findings; UBSan stops at the first report, except the known
# kernel findings listed (with their fixes) in runtime_core/tests/ubsan.supp.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$root/runtime_core/tests/ubsan.supp}

# Longest input libFuzzer makes, per target (default: the largest seed).
max_len() {
  case $1 in
    chat_template) echo 4096 ;;
    generation_config) echo 1024 ;;
    *) echo 0 ;;
  esac
}

# Runs one target; writes <build>/logs/<target>.log and one summary line to <build>/logs/<target>.row.
run_target() {
  local t=$1 bin=$build/fuzz/fuzz_$t log=$build/logs/$t.log regressions=fuzz/regressions/$t
  local work=$build/corpus/$t art=$build/artifacts/$t/ status=ok
  mkdir -p "$work" "$art" "$build/logs"
  : >"$log"
  local inputs=()
  [ -d "$regressions" ] && inputs+=("$regressions"/*)
  inputs+=(fuzz/corpus/"$t"/*)
  if ! "$bin" -timeout=25 "${inputs[@]}" >>"$log" 2>&1; then
    status=FAILED
  elif [ "$replay_only" = 0 ]; then
    local args=(-max_total_time="$seconds" -timeout=25 -print_final_stats=1 -artifact_prefix="$art")
    [ -f "fuzz/dict/$t.dict" ] && args+=(-dict="fuzz/dict/$t.dict")
    [ "$(max_len "$t")" != 0 ] && args+=(-max_len="$(max_len "$t")")
    # shellcheck disable=SC2086
    "$bin" "${args[@]}" ${POCKET_FUZZ_ARGS:-} "$work" "fuzz/corpus/$t" >>"$log" 2>&1 || status=FAILED
  fi
  local execs cov ft
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [ -n "$execs" ] || execs=$(grep -c '^Executed ' "$log")  # replay only: the inputs replayed
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  ft=${cov##* }
  cov=$(echo "$cov" | awk '{print $2}')
  printf '%-20s %-7s %12s %8s %8s\n' "$t" "$status" "${execs:-0}" "${cov:--}" "${ft:--}" >"$build/logs/$t.row"
  if [ "$status" != ok ]; then
    echo "--- $t: FINDING (log $log, input in $art or the replayed file named in the log)" >&2
    # The report first (a replay prints a "Running:" line per input: the last one is the input
    # that failed), the seed of the run, and the input itself, so a finding on a CI machine can
    # be replayed elsewhere: `base64 -d | gunzip > input` of the line below.
    grep -E -m5 'ERROR|FUZZ CHECK|runtime error|SUMMARY|Test unit written' "$log" >&2 ||
      grep -E 'Running: ' "$log" | tail -1 >&2
    grep -E -m1 'INFO: Seed: ' "$log" >&2
    local found
    for found in "$art"*; do
      [ -f "$found" ] && [ "$(stat -c %s "$found")" -le 262144 ] || continue
      echo "$found (gzip | base64): $(gzip -9c "$found" | base64 -w0)" >&2
    done
    return 1
  fi
}

echo "==> fuzzing ${targets[*]} ($([ "$replay_only" = 1 ] && echo replay only || echo "$seconds s each"), $jobs at a time)"
for t in "${targets[@]}"; do
  rm -f "$build/logs/$t.row"
  run_target "$t" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
done
wait
failed=0

printf '\n%-20s %-7s %12s %8s %8s\n' target status executions cov ft
total=0
for t in "${targets[@]}"; do
  [ -f "$build/logs/$t.row" ] || printf '%-20s %-7s %12s\n' "$t" FAILED 0 >"$build/logs/$t.row"
  cat "$build/logs/$t.row"
  grep -q FAILED "$build/logs/$t.row" && failed=1
  total=$((total + $(awk '{print $3}' "$build/logs/$t.row")))
done
echo "total executions: $total ($(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
exit $failed
