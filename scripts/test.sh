#!/usr/bin/env bash
# The whole test suite: installs what it needs, then runs the native checks (host ctest,
# strict core build and its size budget, linux-aarch64 under qemu) and the Python tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh --test
echo "==> native checks"
scripts/check_native.sh
echo "==> swift"
POCKET_LIB_DIR="$root/build/host" bindings/swift/test.sh
echo "==> pytest"
python3 -m pytest -q -p no:cacheprovider tests
