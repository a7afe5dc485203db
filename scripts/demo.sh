#!/usr/bin/env bash
# The built-in example: installs Pocket, exports a MobileNetV2-style CNN, inspects and runs it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh
mkdir -p out
python3 -m pocket export examples/models.py:mobilenet_v2 -o out/mobilenet_v2.pocket
python3 -m pocket inspect out/mobilenet_v2.pocket
python3 -m pocket run out/mobilenet_v2.pocket --repeat 10
