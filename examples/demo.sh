#!/usr/bin/env bash
# q8rt demo: the quantized PP-OCRv4 text detector on an image, text regions drawn over it.
#   bash examples/demo.sh [BUILD_DIR]          (make demo runs it with BUILD_DIR=build)
#   IMAGE=photo.png make demo                  (your own PNG instead of the rendered page)
#   DEMO_MODEL=qdq_u8s8_pc make demo           (another quantization setting of build/models/det)
# Writes build/demo/text.png (the input), build/demo/text-boxes.png (the result) and prints the
# latency of q8rt and of ONNX Runtime on the same model and input size, one thread each.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${1:-build}
py=build/venv/bin/python
demo=build/demo
setting=${DEMO_MODEL:-qop_u8s8_pc}
model=build/models/det/$setting.onnx
mkdir -p "$demo"

for f in "$build/examples/ocr-det-demo" "$py" "$model"; do
  [ -e "$f" ] || { echo "demo: $f missing: run 'make demo' (it builds the library, the venv and the models)" >&2; exit 1; }
done

image=${IMAGE:-}
if [ -z "$image" ]; then
  image=$demo/text.png
  "$py" - "$image" <<'PY'
import sys
sys.path.insert(0, "tests/models")
from PIL import Image
import render
img = render.raw_image("det", 0)            # BGR, rendered text on a textured background
Image.fromarray(img[..., ::-1]).save(sys.argv[1])
print(f"demo: rendered {sys.argv[1]} ({img.shape[1]}x{img.shape[0]})")
PY
fi

out=$demo/$(basename "${image%.*}")-boxes.png
echo "+ $build/examples/ocr-det-demo $model $image $out --repeat 10"
"$build/examples/ocr-det-demo" "$model" "$image" "$out" --repeat 10 | tee "$demo/q8rt.txt"

# ONNX Runtime on the same model and input size, one thread, for comparison.
"$py" - "$model" "$image" "$demo/q8rt.txt" <<'PY'
import re, statistics, sys, time
import numpy as np, onnxruntime as ort
from PIL import Image
model, image, q8 = sys.argv[1:4]
m = re.search(r"latency_ms median=([0-9.]+).*input (\d+)x(\d+)", open(q8).read())
q8ms, w, h = float(m.group(1)), int(m.group(2)), int(m.group(3))
img = np.asarray(Image.open(image).convert("RGB").resize((w, h), Image.BILINEAR), dtype=np.float32)
x = ((img[..., ::-1] / 255.0 - 0.5) / 0.5).transpose(2, 0, 1)[None].astype(np.float32)
so = ort.SessionOptions(); so.intra_op_num_threads = 1; so.inter_op_num_threads = 1
s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
name = s.get_inputs()[0].name
s.run(None, {name: x})
t = []
for _ in range(10):
    t0 = time.perf_counter(); s.run(None, {name: x}); t.append((time.perf_counter() - t0) * 1e3)
ortms = statistics.median(t)
print(f"ONNX Runtime {ort.__version__}: latency_ms median={ortms:.3f} (1 thread, same model and input size)")
print(f"q8rt / ONNX Runtime latency: {q8ms / ortms:.2f}x  ({'q8rt faster' if q8ms < ortms else 'ONNX Runtime faster'})")
PY
echo "demo: open $out to see the detected text regions"
