"""Real models end to end: the PP-OCR detector, recognizer and direction classifier, quantized by
tests/models/make_models.py (onnxruntime.quantization, QOperator and QDQ, per-tensor and
per-channel, u8 and s8 activations, reduce_range, dynamic), run in q8rt-run on the rendered
sample input and compared with ONNX Runtime's outputs on the same input.

Tolerance (float outputs): the graph's output is a DequantizeLinear or a float op after one, so
an off-by-one quantum anywhere upstream can move it; we require the largest difference to stay
within TOL_QUANTA quanta of the output's scale when the model's last quantized tensor has a
known scale, else within TOL_ABS. Integer outputs must match byte for byte. The reference is
ORT without graph optimizations (every node as written) for QOperator models and ORT with its
default optimizations for QDQ models (ORT fuses DQ -> op -> Q groups into QLinear kernels, as
q8rt fuses DQ -> Conv -> Q); both numbers are reported in build/models-summary.txt.

Settings q8rt does not run yet must be refused cleanly at load (one error line naming the node
and op); REQUIRED lists those that must run and match, so a regression cannot hide as a refusal.
"""

import json
import os
from pathlib import Path

import numpy as np
import onnx
import pytest

import q8rt_harness as h

MODELS_DIR = Path(os.environ.get("Q8RT_MODELS", Path(__file__).resolve().parents[2] / "build" / "models"))
TOL_QUANTA = 2.0
TOL_ABS = 1e-2
# (model, setting) pairs that must run and match; grows as ops land.
REQUIRED = set()

RESULTS = {}


def cases():
    out = []
    for model in ("cls", "det", "rec"):
        d = MODELS_DIR / model
        if not d.is_dir():
            continue
        for f in sorted(d.glob("*.onnx")):
            if f.stem in ("float13",):
                continue
            out.append((model, f.stem))
    return out


CASES = cases()


def test_models_were_built():
    assert CASES, f"no models under {MODELS_DIR}: run `make models` (tests/models/make_models.py)"
    for model in ("cls", "det", "rec"):
        assert any(c[0] == model for c in CASES), f"{model} models missing under {MODELS_DIR}"


def output_scale(model: onnx.ModelProto, output_name: str):
    """Scale of the DequantizeLinear producing the output, or feeding the op that does."""
    producers = {o: n for n in model.graph.node for o in n.output}
    inits = {i.name: i for i in model.graph.initializer}
    n = producers.get(output_name)
    for _ in range(3):
        if n is None:
            return None
        if n.op_type == "DequantizeLinear" and n.input[1] in inits:
            return float(np.asarray(onnx.numpy_helper.to_array(inits[n.input[1]])).max())
        n = producers.get(n.input[0]) if n.input else None
    return None


@pytest.mark.parametrize("model,setting", CASES, ids=[f"{m}-{s}" for m, s in CASES])
def test_model(model, setting, tmp_path, q8rt_run):
    d = MODELS_DIR / model
    path = d / f"{setting}.onnx"
    m = onnx.load(str(path), load_external_data=False)
    in_name = m.graph.input[0].name
    res = h.run_q8rt(path, {in_name: d / "input.npy"}, tmp_path / "out", extra=["--explain"])
    if res.returncode != 0:
        msg = h.assert_clean_error(res)
        RESULTS[(model, setting)] = ("refused", msg)
        assert (model, setting) not in REQUIRED, f"{model}/{setting} must run: {msg}"
        pytest.skip(f"not supported yet: {msg[:150]}")
    fmt = "qdq" if setting.startswith("qdq") else "other"
    ref_file = d / (f"{setting}.ort.npz" if fmt == "qdq" else f"{setting}.ort_noopt.npz")
    alt_file = d / (f"{setting}.ort_noopt.npz" if fmt == "qdq" else f"{setting}.ort.npz")
    ref, alt = np.load(ref_file), np.load(alt_file)
    notes = []
    for out in m.graph.output:
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in out.name)
        got = res.output(safe)
        want = ref[out.name]
        assert got.shape == want.shape and got.dtype == want.dtype, f"{out.name}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
        if want.dtype.kind != "f":
            n = h.count_mismatches(got, want)
            notes.append(f"{out.name}: {n} of {want.size} differ")
            h.assert_same_bytes(got, want, f"{model}/{setting}/{out.name}")
            continue
        diff = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
        diff_alt = float(np.max(np.abs(got.astype(np.float64) - alt[out.name]))) if want.size else 0.0
        scale = output_scale(m, out.name)
        tol = TOL_QUANTA * scale if scale else TOL_ABS
        exact = int(np.count_nonzero(got.view(np.uint32) != want.view(np.uint32)))
        notes.append(f"{out.name}: max |diff| {diff:.3g} vs {ref_file.name} ({exact} of {want.size} not bit-identical), "
                     f"{diff_alt:.3g} vs {alt_file.name}; tolerance {tol:.3g}")
        assert diff <= tol, f"{model}/{setting}/{out.name}: max |diff| {diff} > {tol} ({notes[-1]})"
    RESULTS[(model, setting)] = ("matches", "; ".join(notes))


def test_models_summary():
    if not RESULTS:
        pytest.skip("no model case ran")
    lines = [f"{m}/{s}: {status}: {note}" for (m, s), (status, note) in sorted(RESULTS.items())]
    ran = sum(1 for v in RESULTS.values() if v[0] == "matches")
    text = f"real models: {ran} of {len(RESULTS)} run and match ONNX Runtime\n" + "\n".join(lines) + "\n"
    out = h.build_dir() / "models-summary.txt"
    out.write_text(text)
    print(text)
