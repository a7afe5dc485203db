#!/usr/bin/env bash
# Builds the native code into BUILD_DIR (default build/dev) and assembles an importable
# `pocket` package there from symlinks to the sources, for parallel development without
# `pip install`:
#   scripts/dev_build.sh build/mine && PYTHONPATH=build/mine/python python -m pytest tests/kernels
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${1:-$root/build/dev}")
cmake -S "$root" -B "$build" -G Ninja -DPOCKET_BUILD_PYTHON=ON -DPOCKET_BUILD_TESTS=ON \
  -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" >/dev/null
ninja -C "$build" > "$build/ninja.log" || { tail -30 "$build/ninja.log"; exit 1; }
pkg="$build/python/pocket"
rm -rf "$build/python"  # rebuilt from scratch: never write through an old symlink
mkdir -p "$pkg"
for f in "$root"/bindings/python/pocket/*; do
  [ "$(basename "$f")" = llm ] || ln -sfn "$f" "$pkg/$(basename "$f")"
done
mkdir -p "$pkg/llm"  # pocket.llm joins two folders: the run side and the model code
for f in "$root"/bindings/python/pocket/llm/*; do ln -sfn "$f" "$pkg/llm/$(basename "$f")"; done
ln -sfn "$root/llm_runner/models" "$pkg/llm/models"
ln -sfn "$root/exporter" "$pkg/exporter"
ln -sfn "$root/schema/generated/python/pocket/fb" "$pkg/fb"
ln -sfn "$build"/_native*.so "$pkg/"
echo "PYTHONPATH=$build/python"
