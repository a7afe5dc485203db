#!/usr/bin/env bash
# Builds the native code into BUILD_DIR (default build/dev) and assembles an importable
# `pocket` package there from symlinks to the sources, for parallel development without
# `pip install`:
#   scripts/dev_build.sh build/mine && PYTHONPATH=build/mine/python python -m pytest tests/kernels
#
# An editable install (`pip install -e .`) puts an import hook in front of PYTHONPATH; the
# sitecustomize.py written here removes that hook, so PYTHONPATH=BUILD_DIR/python wins in this
# process and in every child process it starts. ccache is used when installed.
#
#   scripts/dev_build.sh --package-only build/lsan-bindings   # only the package, around the
#                                                           # _native*.so a preset already built
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
package_only=0
if [ "${1:-}" = --package-only ]; then
  package_only=1
  shift
fi
build=$(realpath -m "${1:-$root/build/dev}")
if [ $package_only = 0 ]; then
  python3 -c "import pybind11" 2>/dev/null ||
    python3 -m pip install -q --disable-pip-version-check pybind11==3.1.0  # pyproject's build pin
  launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  (cd "$root" && cmake --preset dev -B "$build" "${launcher[@]}" \
    -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" >/dev/null)
  ninja -C "$build" > "$build/ninja.log" || { tail -30 "$build/ninja.log"; exit 1; }
fi
ls "$build"/_native*.so >/dev/null 2>&1 || { echo "no _native*.so in $build" >&2; exit 1; }
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
[ -d "$root/packaging/src/packaging" ] && ln -sfn "$root/packaging/src/packaging" "$pkg/packaging"
ln -sfn "$build"/_native*.so "$pkg/"
cat > "$build/python/sitecustomize.py" <<'PY'
# Written by scripts/dev_build.sh: drop an editable install's import hook so this dev build wins.
import sys

sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "ScikitBuildRedirectingFinder"]
PY
echo "PYTHONPATH=$build/python"
