#!/usr/bin/env bash
# q8rt demo: build a small quantized conv model, run it with q8rt-run, compare with ONNX Runtime.
#   bash examples/demo.sh [BUILD_DIR]        (make demo runs it with BUILD_DIR=build)
# Writes build/demo/demo.onnx, build/demo/input.npy and build/demo/out/features.npy.
# Exits non-zero if q8rt-run fails or its output differs from ONNX Runtime's.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${1:-build}
runner=$build/q8rt-run
py=build/venv/bin/python
demo=build/demo

if [ ! -x "$runner" ]; then
  echo "demo: $runner not found; build it first (make)" >&2
  exit 1
fi
if [ ! -x "$py" ]; then
  bash tests/python/setup-venv.sh build/venv
fi

"$py" examples/make_demo_model.py generate "$demo"
rm -rf "$demo/out"
echo "+ $runner $demo/demo.onnx --input image=$demo/input.npy --explain --repeat 20 --output-dir $demo/out"
"$runner" "$demo/demo.onnx" --input "image=$demo/input.npy" --explain --repeat 20 --output-dir "$demo/out"
"$py" examples/make_demo_model.py compare "$demo"
