#!/usr/bin/env python3
"""The OCR pipeline of ocr.c over ONNX Runtime, for comparison with ocr-demo (q8rt).

    python examples/ocr/ocr_ort.py LIBOCR DET.onnx CLS.onnx REC.onnx IN.png
           [--repeat N] [--threads N] [--no-opt] [--json FILE]

LIBOCR is build/examples/libocr.so: the same pre/post-processing code ocr-demo links, called
through ctypes with ONNX Runtime as its inference callback, so the only difference between the two
runs is the engine. The character list is read from the recognizer's metadata through ORT's
modelmeta.custom_metadata_map, as rapidocr does. --no-opt disables ORT's graph optimizations
(every node runs as written, which is what q8rt's QOperator outputs are bit-identical to).
Prints and writes the same lines and per-stage medians as ocr-demo."""

from __future__ import annotations

import argparse
import ctypes as C
import json
import statistics
import sys

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


def run(lib_path: str, models: list[str], image: str, repeat: int = 1, threads: int = 1, no_opt: bool = False) -> dict:
    lib = load_lib(lib_path)
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    if no_opt:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sessions = [ort.InferenceSession(m, so, providers=["CPUExecutionProvider"]) for m in models]
    names = [(s.get_inputs()[0].name, s.get_outputs()[0].name) for s in sessions]
    keep: list = [None] * 3  # each stage's last output stays alive until its next call

    def infer(_ctx, stage, x, shape, out, out_shape, out_rank, err, err_size):
        try:
            dims = tuple(shape[i] for i in range(4))
            arr = np.ctypeslib.as_array(x, shape=dims)  # zero-copy view of ocr.c's buffer
            y = np.ascontiguousarray(sessions[stage].run([names[stage][1]], {names[stage][0]: arr})[0], np.float32)
            keep[stage] = y
            out[0] = y.ctypes.data_as(C.POINTER(C.c_float))
            out_rank[0] = y.ndim
            for i, d in enumerate(y.shape):
                out_shape[i] = d
            return 0
        except Exception as e:  # noqa: BLE001 - reported through the pipeline's error
            C.memmove(err, (str(e)[: err_size - 1]).encode() + b"\0", min(len(str(e)) + 1, err_size))
            return 1

    cb = INFER(infer)
    chars = sessions[2].get_modelmeta().custom_metadata_map["character"].encode()
    err = C.create_string_buffer(640)
    pipe = lib.ocr_pipeline_create(cb, None, chars, len(chars), None, err, len(err))
    if not pipe:
        raise RuntimeError(err.value.decode())
    img = Image.open(image).convert("RGB")
    rgb = img.tobytes()
    times = {s: ([], []) for s in STAGES}
    calls = {}
    try:
        for r in range(-1, repeat):
            if lib.ocr_pipeline_run(pipe, rgb, img.width, img.height, err, len(err)) != 0:
                raise RuntimeError(err.value.decode())
            for i, s in enumerate(STAGES):
                n, a, b = C.c_int(), C.c_double(), C.c_double()
                lib.ocr_stage_time(pipe, i, C.byref(n), C.byref(a), C.byref(b))
                calls[s] = n.value
                if r >= 0:
                    times[s][0].append(a.value)
                    times[s][1].append(b.value)
        lines = []
        for i in range(lib.ocr_line_count(pipe)):
            box = (C.c_float * 8)()
            lib.ocr_line_box(pipe, i, box)
            lines.append({"text": lib.ocr_line_text(pipe, i).decode(), "score": float(lib.ocr_line_score(pipe, i)),
                          "flipped": lib.ocr_line_flipped(pipe, i), "box": [float(v) for v in box]})
        dw, dh = C.c_int(), C.c_int()
        lib.ocr_det_size(pipe, C.byref(dw), C.byref(dh))
    finally:
        lib.ocr_pipeline_free(pipe)
    return {"engine": f"onnxruntime {ort.__version__}" + (" (no graph optimizations)" if no_opt else ""),
            "threads": threads, "runs": repeat, "det_input": [dw.value, dh.value], "lines": lines,
            "stages": {s: {"calls": calls[s], "model_ms": statistics.median(times[s][0]),
                           "stage_ms": statistics.median(times[s][1])} for s in STAGES}}


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
    a = ap.parse_args()
    res = run(a.lib, [a.det, a.cls, a.rec], a.image, max(a.repeat, 1), a.threads, a.no_opt)
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
