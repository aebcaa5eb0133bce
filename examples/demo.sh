#!/usr/bin/env bash
# q8rt demo: PP-OCR end to end in C (examples/ocr): text detection, direction classification and
# recognition of a rendered page, through q8rt, then the same pipeline through ONNX Runtime.
#   bash examples/demo.sh [BUILD_DIR]          (make demo runs it with BUILD_DIR=build)
#   make demo IMAGE=photo.png                  (your own PNG instead of the rendered page)
#   DEMO_DET=qdq_u8s8_pc make demo             (another quantization setting of build/models/det;
#                                               DEMO_CLS, DEMO_REC likewise)
# Writes build/demo/page.png (the input, with page.txt: its text), build/demo/<image>-ocr.png
# (boxes and text), build/demo/q8rt.json (ocr-demo), q8rt-py.json and ort.json (the side-by-side
# run); prints the lines, the latency per stage of both engines and, for the rendered page, the
# character accuracy.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${1:-build}
py=build/venv/bin/python
demo=build/demo
det=build/models/det/${DEMO_DET:-qop_u8s8_pc}.onnx
cls=build/models/cls/${DEMO_CLS:-qop_u8s8_pc}.onnx
rec=build/models/rec/${DEMO_REC:-qop_u8s8_pc_conv}.onnx
repeat=${DEMO_REPEAT:-5}
mkdir -p "$demo"

for f in "$build/examples/ocr-demo" build/examples/libocr.so "$py" "$det" "$cls" "$rec"; do
  [ -e "$f" ] || { echo "demo: $f missing: run 'make demo' (it builds the library, the venv and the models)" >&2; exit 1; }
done

image=${IMAGE:-}
truth=()
if [ -z "$image" ]; then
  image=$demo/page.png
  "$py" examples/ocr/render_page.py "$image" --seed 0
  truth=("$demo/page.txt")
fi

out=$demo/$(basename "${image%.*}")-ocr.png
echo "+ $build/examples/ocr-demo $det $cls $rec $image $out --repeat $repeat"
"$build/examples/ocr-demo" "$det" "$cls" "$rec" "$image" "$out" --repeat "$repeat" --json "$demo/q8rt.json"
echo
echo "+ examples/ocr/ocr_ort.py: the same C pipeline (libocr.so) over ONNX Runtime and over q8rt (its Python"
echo "  module), in one process, alternating run by run so that both see the same machine load"
"$py" examples/ocr/ocr_ort.py build/examples/libocr.so "$det" "$cls" "$rec" "$image" --repeat "$repeat" \
  --json "$demo/ort.json" --q8rt-json "$demo/q8rt-py.json" >/dev/null
"$py" - "$demo/q8rt.json" "$demo/q8rt-py.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
same = [ln["text"] for ln in a["lines"]] == [ln["text"] for ln in b["lines"]]
print(f"ocr-demo (C) and the Python-driven q8rt run read the same text: {'yes' if same else 'NO'}")
PY
"$py" examples/ocr/compare.py "$demo/q8rt-py.json" "$demo/ort.json" "${truth[@]}"
echo "demo: open $out to see the boxes and the text read in them"
