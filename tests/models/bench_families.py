#!/usr/bin/env python3
"""Latency of the model families (tests/models/make_families.py) in q8rt and ONNX Runtime, one
thread each, measured side by side: for every family x setting, rounds alternate q8rt-run
(--repeat, its own median) and an ORT session (the median of the same number of runs), and the
medians over the rounds are reported with their ratio.

    python tests/models/bench_families.py [--families build/model-families] [--runner build/q8rt-run]
                                          [--rounds 3] [--repeat 5] [--only yolox,lcnet]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

HERE = Path(__file__).resolve().parent


def inputs(d: Path, m: onnx.ModelProto) -> dict:
    inits = {i.name for i in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    return {n: d / ("input.npy" if k == 0 else f"input.{n}.npy") for k, n in enumerate(names)}


def q8rt_ms(runner: Path, model: Path, feeds: dict, repeat: int) -> float | None:
    args = [str(runner), str(model), "--threads", "1", "--repeat", str(repeat)]
    for k, v in feeds.items():
        args += ["--input", f"{k}={v}"]
    r = subprocess.run(args, capture_output=True, text=True)
    m = re.search(r"latency_ms median=([0-9.]+)", r.stdout + r.stderr)
    return float(m.group(1)) if r.returncode == 0 and m else None


def ort_ms(model: Path, feeds: dict, repeat: int) -> float:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    s = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    f = {k: np.load(v) for k, v in feeds.items()}
    s.run(None, f)
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        s.run(None, f)
        t.append(time.perf_counter() - t0)
    return 1000 * float(np.median(t))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--families", type=Path, default=HERE.parents[1] / "build" / "model-families")
    ap.add_argument("--runner", type=Path, default=HERE.parents[1] / "build" / "q8rt-run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="yolox,lcnet,crnn,vad")
    a = ap.parse_args()
    print("| family | setting | q8rt ms | ORT ms | q8rt / ORT |")
    print("|---|---|---:|---:|---:|")
    for fam in a.only.split(","):
        d = a.families / fam
        for path in sorted(d.glob("*.onnx")):
            if path.stem == "float13":
                continue
            m = onnx.load(str(path), load_external_data=False)
            feeds = inputs(d, m)
            qs, os_ = [], []
            # slow cases (q8rt's reference kernels take seconds): one round of one run
            probe = q8rt_ms(a.runner, path, feeds, 1)
            slow = probe is not None and probe > 1000
            for _ in range(1 if slow else a.rounds):
                q = probe if slow else q8rt_ms(a.runner, path, feeds, a.repeat)
                if q is None:
                    break
                qs.append(q)
                os_.append(ort_ms(path, feeds, 1 if slow else a.repeat))
            if not qs:
                print(f"| {fam} | {path.stem} | refused | {ort_ms(path, feeds, a.repeat):.2f} | |", flush=True)
                continue
            q, o = float(np.median(qs)), float(np.median(os_))
            print(f"| {fam} | {path.stem} | {q:.2f} | {o:.2f} | {q / o:.2f} |", flush=True)


if __name__ == "__main__":
    main()
