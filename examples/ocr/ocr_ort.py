#!/usr/bin/env python3
"""The OCR pipeline of ocr.c over ONNX Runtime, for comparison with ocr-demo (q8rt).

    python examples/ocr/ocr_ort.py LIBOCR DET.onnx CLS.onnx REC.onnx IN.png
           [--repeat N] [--threads N] [--no-opt] [--json FILE]

LIBOCR is build/examples/libocr.so: the same pre/post-processing code ocr-demo links, called
through ctypes with ONNX Runtime as its inference callback, so the only difference between the two
runs is the engine. The character list is read from the recognizer's metadata through ORT's
modelmeta.custom_metadata_map, as rapidocr does. --no-opt disables ORT's graph optimizations
(every node runs as written, which is what q8rt's QOperator outputs are bit-identical to).
Prints and writes the same lines and per-stage medians as ocr-demo. --q8rt-json FILE also runs the
pipeline over q8rt (through its Python module, examples/python) in the same process, alternating
with ONNX Runtime run by run, so the latency comparison sees the same machine load."""

from __future__ import annotations

import argparse
import ctypes as C
import json
import statistics
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
from PIL import Image

STAGES = ("det", "cls", "rec")
INFER = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_int, C.POINTER(C.c_float), C.POINTER(C.c_int64),
                    C.POINTER(C.POINTER(C.c_float)), C.POINTER(C.c_int64), C.POINTER(C.c_int), C.c_char_p, C.c_size_t)


def load_lib(path: str) -> C.CDLL:
    lib = C.CDLL(path)
    lib.ocr_pipeline_create.restype = C.c_void_p
    lib.ocr_pipeline_create.argtypes = [INFER, C.c_void_p, C.c_char_p, C.c_size_t, C.c_void_p, C.c_char_p, C.c_size_t]
    lib.ocr_pipeline_free.argtypes = [C.c_void_p]
    lib.ocr_pipeline_run.argtypes = [C.c_void_p, C.c_char_p, C.c_int, C.c_int, C.c_char_p, C.c_size_t]
    lib.ocr_line_count.argtypes = [C.c_void_p]
    lib.ocr_line_text.restype = C.c_char_p
    lib.ocr_line_text.argtypes = [C.c_void_p, C.c_int]
    lib.ocr_line_score.restype = C.c_float
    lib.ocr_line_score.argtypes = [C.c_void_p, C.c_int]
    lib.ocr_line_flipped.argtypes = [C.c_void_p, C.c_int]
    lib.ocr_line_box.argtypes = [C.c_void_p, C.c_int, C.POINTER(C.c_float)]
    lib.ocr_stage_time.argtypes = [C.c_void_p, C.c_int, C.POINTER(C.c_int), C.POINTER(C.c_double),
                                   C.POINTER(C.c_double)]
    lib.ocr_det_size.argtypes = [C.c_void_p, C.POINTER(C.c_int), C.POINTER(C.c_int)]
    return lib


def ort_engine(models: list[str], threads: int, no_opt: bool):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    if no_opt:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sessions = [ort.InferenceSession(m, so, providers=["CPUExecutionProvider"]) for m in models]
    names = [(s.get_inputs()[0].name, s.get_outputs()[0].name) for s in sessions]
    chars = sessions[2].get_modelmeta().custom_metadata_map["character"]
    engine = f"onnxruntime {ort.__version__}" + (" (no graph optimizations)" if no_opt else "")
    return (lambda stage, x: sessions[stage].run([names[stage][1]], {names[stage][0]: x})[0]), chars, engine


def q8rt_engine(models: list[str], threads: int):
    """q8rt through its Python module (examples/python), so both engines can run in one process."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
    import q8rt
    sessions = [q8rt.Session(m, threads=threads) for m in models]
    names = [(s.get_inputs()[0].name, s.get_outputs()[0].name) for s in sessions]
    chars = sessions[2].get_modelmeta().custom_metadata_map["character"]
    return (lambda stage, x: sessions[stage].run([names[stage][1]], {names[stage][0]: x}, copy_outputs=False)[0],
            chars, f"q8rt {q8rt.version()} (Python module)")


def _median(v: list) -> float:
    return statistics.median(v) if v else 0.0


class Pipeline:
    """ocr.c's pipeline (libocr.so) with `infer(stage, x) -> y` as its engine."""

    def __init__(self, lib, infer, chars: str):
        self.lib = lib
        self.keep: list = [None] * 3  # each stage's last output stays alive until its next call

        def cb(_ctx, stage, x, shape, out, out_shape, out_rank, err, err_size):
            try:
                dims = tuple(shape[i] for i in range(4))
                arr = np.ctypeslib.as_array(x, shape=dims)  # zero-copy view of ocr.c's buffer
                y = np.ascontiguousarray(infer(stage, arr), np.float32)
                self.keep[stage] = y
                out[0] = y.ctypes.data_as(C.POINTER(C.c_float))
                out_rank[0] = y.ndim
                for i, d in enumerate(y.shape):
                    out_shape[i] = d
                return 0
            except Exception as e:  # noqa: BLE001 - reported through the pipeline's error
                msg = str(e).encode()[: err_size - 1] + b"\0"
                C.memmove(err, msg, len(msg))
                return 1

        self.cb = INFER(cb)
        self.err = C.create_string_buffer(640)
        data = chars.encode()
        self.p = lib.ocr_pipeline_create(self.cb, None, data, len(data), None, self.err, len(self.err))
        if not self.p:
            raise RuntimeError(self.err.value.decode())
        self.times = {s: ([], []) for s in STAGES}
        self.calls = {}

    def run(self, rgb: bytes, w: int, h: int, record: bool) -> None:
        if self.lib.ocr_pipeline_run(self.p, rgb, w, h, self.err, len(self.err)) != 0:
            raise RuntimeError(self.err.value.decode())
        for i, s in enumerate(STAGES):
            n, a, b = C.c_int(), C.c_double(), C.c_double()
            self.lib.ocr_stage_time(self.p, i, C.byref(n), C.byref(a), C.byref(b))
            self.calls[s] = n.value
            if record:
                self.times[s][0].append(a.value)
                self.times[s][1].append(b.value)

    def result(self, engine: str, threads: int) -> dict:
        lib, lines = self.lib, []
        for i in range(lib.ocr_line_count(self.p)):
            box = (C.c_float * 8)()
            lib.ocr_line_box(self.p, i, box)
            lines.append({"text": lib.ocr_line_text(self.p, i).decode(), "score": float(lib.ocr_line_score(self.p, i)),
                          "flipped": lib.ocr_line_flipped(self.p, i), "box": [float(v) for v in box]})
        dw, dh = C.c_int(), C.c_int()
        lib.ocr_det_size(self.p, C.byref(dw), C.byref(dh))
        return {"engine": engine, "threads": threads, "runs": len(self.times["det"][0]), "det_input": [dw.value, dh.value],
                "lines": lines, "stages": {s: {"calls": self.calls[s], "model_ms": _median(self.times[s][0]),
                                               "stage_ms": _median(self.times[s][1])} for s in STAGES}}

    def close(self) -> None:
        if self.p:
            self.lib.ocr_pipeline_free(self.p)
            self.p = None


def run(lib_path: str, models: list[str], image: str, repeat: int = 1, threads: int = 1, no_opt: bool = False,
        with_q8rt: bool = False) -> dict:
    """The pipeline over ONNX Runtime; with_q8rt: also over q8rt (Python module) in the same
    process, the two alternating run by run so both see the same machine load. Returns ORT's
    result, or {"ort": ..., "q8rt": ...} with with_q8rt."""
    lib = load_lib(lib_path)
    img = Image.open(image).convert("RGB")
    rgb = img.tobytes()
    engines = [("ort",) + ort_engine(models, threads, no_opt)]
    if with_q8rt:
        engines.append(("q8rt",) + q8rt_engine(models, threads))
    pipes = [(key, name, Pipeline(lib, infer, chars)) for key, infer, chars, name in engines]
    try:
        for r in range(-1, repeat):
            for _, _, p in pipes:
                p.run(rgb, img.width, img.height, record=r >= 0)
        res = {key: p.result(name, threads) for key, name, p in pipes}
    finally:
        for _, _, p in pipes:
            p.close()
    return res if with_q8rt else res["ort"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lib")
    ap.add_argument("det")
    ap.add_argument("cls")
    ap.add_argument("rec")
    ap.add_argument("image")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-opt", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--q8rt-json", help="also run q8rt (Python module) in this process, alternating with ORT "
                    "run by run, and write its results here")
    a = ap.parse_args()
    both = run(a.lib, [a.det, a.cls, a.rec], a.image, max(a.repeat, 1), a.threads, a.no_opt, bool(a.q8rt_json))
    res = both["ort"] if a.q8rt_json else both
    if a.q8rt_json:
        with open(a.q8rt_json, "w") as f:
            json.dump(both["q8rt"], f, indent=1)
    print(f"ocr_ort: {a.image}: {len(res['lines'])} lines")
    for i, ln in enumerate(res["lines"]):
        print(f"{i + 1:3d}  {ln['score']:.3f}  {ln['text']}{'   (turned 180)' if ln['flipped'] else ''}")
    print(f"{res['engine']}, {a.threads} thread{'s' if a.threads != 1 else ''}, median of {a.repeat} runs:")
    print("  stage  calls  model_ms  stage_ms")
    for s in STAGES:
        t = res["stages"][s]
        print(f"  {s:<5}  {t['calls']:5d}  {t['model_ms']:8.2f}  {t['stage_ms']:8.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
