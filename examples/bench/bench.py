#!/usr/bin/env python3
"""q8rt benchmark: quantized convolutions and whole models, side by side in one run.

    build/venv/bin/python examples/bench/bench.py        (make bench runs it)

For every conv shape of the peer comparison (SHAPES below, plus depthwise 5x5 and 7x7) it builds a
QLinearConv model (u8 activations, full-range s8 per-channel weights, int32 bias) and its s8s8
twin, then times and checks:
  - q8rt on each backend (auto, reference, avx2, avx512, neon, xnnpack; a backend q8rt or the CPU
    refuses for the node is shown as n/a with its reason) and XNNPACK called directly (qc8 NHWC
    convolution, one thread), both timed by build/q8rt-bench (C, examples/bench/q8rt-bench.c) on
    this script's data; q8rt-run for the s8s8 model on auto and auto with 2 threads on the large
    shapes;
  - ONNX Runtime (CPU EP, 1 thread, all graph optimizations), u8s8 and s8s8 models;
Every output is compared element by element with an exact NumPy reference. Then whole models
(E2E_MODELS: the demo and every PP-OCR setting in build/models) run in q8rt, ONNX Runtime and
OpenVINO with 1 and 2 threads, then q8rt and ONNX Runtime again with a busy loop pinned to the last
CPU (another process loading the machine). The rounds of whole models are passes over the model
list (bench_models), each model's round preceded by a core-to-core latency probe (`q8rt-bench
--core-latency`, bench.json round_core_rtt_ns): on this VM the two vCPUs sit close or far apart
for spells of seconds to minutes, and the 2-thread figures follow it.

Writes a table to the terminal, build/bench/bench.json (all raw numbers, machine, versions) and
build/bench/bench.png (GMAC/s per shape and implementation).

Environment:
  BENCH_SHAPES=name1,name2   only these conv shapes (names as printed; `--list` shows them)
  BENCH_QUICK=1              fewer and shorter timings, reference backend on small shapes only
  BENCH_E2E=0                skip the whole-model part
  BENCH_CONVS=0              skip the conv shapes
  BENCH_MODELS=a,b           only these whole models (det-qdq_u8s8_pc, ...; "rec-" = every rec setting)
  BENCH_ROUNDS=N             whole models: every implementation N times (default 2), the best round kept;
                             round r of every model runs before round r + 1 of any (bench_models)
  BENCH_BASE_RUN=PATH        also time this (older) q8rt-run on the whole models, side by side
  Q8RT_RUN=PATH              q8rt-run to use (default build/q8rt-run)
  Q8RT_BENCH=PATH            q8rt-bench to use (default build/q8rt-bench)
  BENCH_OUT=DIR              where the files go (default build/bench)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "examples"))

import q8rt_harness as H  # noqa: E402  (exact QLinearConv reference, model builders)

Q8RT_BACKENDS = ["auto", "reference", "avx2", "avx512", "neon", "xnnpack"]
THREADS_MIN_MMAC = 50.0          # 2-thread runs on shapes at least this large
LATENCY_RE = re.compile(r"latency_ms median=([0-9.eE+-]+) min=([0-9.eE+-]+) runs=(\d+)")
RUN_STATS_RE = re.compile(r"^run_stats ((?:\w+=[0-9.eE+-]+ ?)+)$", re.M)
ERROR_PREFIX = "q8rt-run: error:"


# ---- timing policy -------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Policy:
    min_runs: int = 5        # at least this many timed runs ...
    target_s: float = 0.5    # ... and at least this much timed time ...
    cap_s: float = 2.0       # ... but stop growing at this much; slow cases drop to slow_min_runs
    slow_min_runs: int = 3

    def runs_for(self, t_s: float) -> int:
        t_s = max(t_s, 1e-6)
        n = max(self.min_runs, math.ceil(self.target_s / t_s))
        if n * t_s > self.cap_s:
            n = max(self.slow_min_runs, min(n, int(self.cap_s / t_s)))
        return min(n, 100000)


FULL = Policy()
QUICK = Policy(min_runs=3, target_s=0.1, cap_s=0.4, slow_min_runs=2)


# ---- conv shapes ---------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Shape:
    name: str
    cin: int
    cout: int
    k: int
    stride: int
    hw: int          # input height = width
    group: int = 1

    @property
    def pad(self) -> int:
        return self.k // 2

    @property
    def out_hw(self) -> int:
        return (self.hw + 2 * self.pad - self.k) // self.stride + 1

    @property
    def macs(self) -> int:
        return self.cout * self.out_hw ** 2 * (self.cin // self.group) * self.k * self.k

    @property
    def mmac(self) -> float:
        return self.macs / 1e6

    @property
    def depthwise(self) -> bool:
        return self.group == self.cin == self.cout and self.group > 1

    def describe(self) -> str:
        kind = "depthwise " if self.depthwise else ""
        s = f" s{self.stride}" if self.stride != 1 else ""
        ch = f"{self.cin}ch" if self.depthwise else f"{self.cin}->{self.cout}"
        return f"{kind}{self.k}x{self.k}{s}, {ch}, {self.hw}x{self.hw} -> {self.out_hw}x{self.out_hw}"


SHAPES = [
    Shape("7x7s2_3-64_224", 3, 64, 7, 2, 224),           # ResNet stem
    Shape("3x3_64-64_56", 64, 64, 3, 1, 56),
    Shape("1x1_256-64_56", 256, 64, 1, 1, 56),
    Shape("3x3_256-256_14", 256, 256, 3, 1, 14),
    Shape("1x1_24-144_56", 24, 144, 1, 1, 56),
    Shape("dw3x3_144_56", 144, 144, 3, 1, 56, 144),
    Shape("dw3x3s2_144_56", 144, 144, 3, 2, 56, 144),
    Shape("1x1_144-32_28", 144, 32, 1, 1, 28),
    Shape("dw5x5_144_56", 144, 144, 5, 1, 56, 144),
    Shape("dw7x7_144_56", 144, 144, 7, 1, 56, 144),
]


@dataclasses.dataclass
class ConvCase:
    """Files and reference outputs for one shape (u8s8 model and its s8s8 twin)."""
    shape: Shape
    dir: Path
    params_u8: H.ConvParams
    params_s8: H.ConvParams
    model_u8: Path
    model_s8: Path
    x_u8: Path
    x_s8: Path
    ref_u8: np.ndarray
    ref_s8: np.ndarray
    w: Path
    w_scale: Path
    bias: Path


def make_case(shape: Shape, root: Path) -> ConvCase:
    """Random u8 activations, weights uniform over [-127, 127], per-channel scales, int32 bias.
    y_scale is picked from the accumulator spread so the outputs use the u8 range. The s8s8 twin
    takes x ^ 0x80 with zero points shifted by -128: it computes the same function, so its exact
    output is the u8s8 one ^ 0x80."""
    rng = np.random.default_rng(zlib.crc32(shape.name.encode()))
    cg = shape.cin // shape.group
    kk = shape.k * shape.k
    x = rng.integers(0, 256, size=(1, shape.cin, shape.hw, shape.hw), dtype=np.int64).astype(np.uint8)
    w = rng.integers(-127, 128, size=(shape.cout, cg, shape.k, shape.k), dtype=np.int64).astype(np.int8)
    w_scale = rng.uniform(0.002, 0.008, size=shape.cout).astype(np.float32)
    x_scale = np.float32(0.02)
    acc_std = math.sqrt(cg * kk) * 73.9 * 73.3
    y_scale = np.float32(float(x_scale) * float(np.mean(w_scale)) * acc_std / 40.0)
    bias = rng.integers(-int(acc_std), int(acc_std) + 1, size=shape.cout, dtype=np.int64).astype(np.int32)
    common = dict(w=w, w_scale=w_scale, w_zp=np.zeros(shape.cout, np.int8), x_scale=x_scale, y_scale=y_scale,
                  bias=bias, strides=[shape.stride] * 2, pads=[shape.pad] * 4, group=shape.group)
    p_u8 = H.ConvParams(x_zp=np.array(128, np.uint8), y_zp=np.array(128, np.uint8), **common)
    p_s8 = H.ConvParams(x_zp=np.array(0, np.int8), y_zp=np.array(0, np.int8), **common)
    x_s8 = (x ^ 0x80).view(np.int8)
    d = root / "shapes" / shape.name
    d.mkdir(parents=True, exist_ok=True)
    xs = [1, shape.cin, shape.hw, shape.hw]
    H.save_model(H.conv_chain_model([p_u8], xs, np.uint8), d / "u8s8.onnx")
    H.save_model(H.conv_chain_model([p_s8], xs, np.int8), d / "s8s8.onnx")
    H.save_npy(d / "x_u8.npy", x)
    H.save_npy(d / "x_s8.npy", x_s8)
    H.save_npy(d / "w.npy", w)
    H.save_npy(d / "w_scale.npy", w_scale)
    H.save_npy(d / "bias.npy", bias)
    ref_u8 = p_u8.reference(x)
    ref_s8 = (ref_u8 ^ 0x80).view(np.int8)
    return ConvCase(shape, d, p_u8, p_s8, d / "u8s8.onnx", d / "s8s8.onnx", d / "x_u8.npy", d / "x_s8.npy",
                    ref_u8, ref_s8, d / "w.npy", d / "w_scale.npy", d / "bias.npy")


# ---- measurements --------------------------------------------------------------------------------

@dataclasses.dataclass
class Meas:
    impl: str                          # key, e.g. "q8rt-auto", "ort-u8s8", "xnnpack"
    label: str                         # for people
    status: str = "ok"                 # ok | n/a | skipped | error
    reason: str = ""
    median_ms: Optional[float] = None
    min_ms: Optional[float] = None
    runs: int = 0
    threads: int = 1
    mismatches: Optional[int] = None   # vs the exact reference; None = not checked
    elements: int = 0
    max_abs_diff: Optional[int] = None
    kernel: str = ""                   # q8rt: the kernel --explain named for the conv node
    gmacs: Optional[float] = None
    conv_ms: Optional[float] = None    # q8rt: median time of the QLinearConv step alone (--profile),
                                       # (NHWC in and out unless the conv runs NCHW end to end)
    conv_gmacs: Optional[float] = None
    round_medians_ms: Optional[List[float]] = None  # whole models: each round's median (the kept one is the lowest)
    # q8rt with 2+ threads: how the timed runs used them (q8rt-run's run_stats line, q8rt_session_run_stats):
    # runs shared / alone / contended, regions, solo_regions, unhelped_regions, solo_stretches, wait_ms
    run_stats: Optional[Dict[str, float]] = None
    round_run_stats: Optional[List[Dict[str, float]]] = None  # whole models: each round's run_stats

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.median_ms is not None


def compare(got: Optional[np.ndarray], want: np.ndarray, m: Meas) -> None:
    m.elements = int(want.size)
    if got is None:
        return
    if got.dtype != want.dtype or got.shape != want.shape:
        m.mismatches = int(want.size)
        m.reason = (m.reason + "; " if m.reason else "") + f"output {got.dtype}{list(got.shape)}, expected " \
            f"{want.dtype}{list(want.shape)}"
        return
    if got.dtype.kind == "f":
        bad = got.view(np.uint32) != want.view(np.uint32)
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    else:
        bad = got != want
        diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    m.mismatches = int(np.count_nonzero(bad))
    m.max_abs_diff = float(diff.max()) if got.dtype.kind == "f" else int(diff.max())


def q8rt_exe() -> Path:
    return Path(os.environ.get("Q8RT_RUN", REPO / "build" / "q8rt-run")).resolve()


def base_exe() -> Optional[Path]:
    """BENCH_BASE_RUN: an older q8rt-run measured side by side (whole models), for before/after."""
    v = os.environ.get("BENCH_BASE_RUN", "").strip()
    return Path(v).resolve() if v else None


def bench_exe() -> Path:
    return Path(os.environ.get("Q8RT_BENCH", REPO / "build" / "q8rt-bench")).resolve()


def _run(args: List[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=timeout)


def _error_line(p: subprocess.CompletedProcess, prefix: str) -> str:
    for ln in p.stderr.splitlines():
        if ln.startswith(prefix):
            return ln[len(prefix):].strip()
    tail = (p.stderr.strip().splitlines() or p.stdout.strip().splitlines() or [""])[-1]
    return f"exit status {p.returncode}: {tail[:200]}"


def run_q8rt(model: Path, inputs: Dict[str, Path], outdir: Path, backend: str, threads: int,
             policy: Policy, want: Dict[str, np.ndarray], impl: str, label: str, exe: Optional[Path] = None,
             profile: bool = True) -> Meas:
    """A short first run (--repeat 1 --explain, outputs written: exactness, kernel name, a time
    estimate), then the timed run with as many repeats as the policy asks for. With `profile` the
    timed run also prints per-step times (the conv shapes' conv_ms); whole models are timed without
    it, as an application runs them (a session with a pool then also picks shared or alone per run,
    which profiling turns off)."""
    m = Meas(impl, label, threads=threads)
    base = [str(exe or q8rt_exe()), str(model), "--backend", backend, "--threads", str(threads)]
    for name, path in inputs.items():
        base += ["--input", f"{name}={path}"]
    outdir.mkdir(parents=True, exist_ok=True)
    for f in outdir.glob("*.npy"):
        f.unlink()
    try:
        p = _run(base + ["--repeat", "1", "--explain", "--output-dir", str(outdir)], timeout=600)
    except (subprocess.TimeoutExpired, OSError) as e:
        m.status, m.reason = "error", "timed out (600 s)" if isinstance(e, subprocess.TimeoutExpired) else str(e)
        return m
    if p.returncode != 0:
        reason = _error_line(p, ERROR_PREFIX)
        # A clean refusal is one "q8rt-run: error:" line and a small exit status; anything else is a failure.
        refused = 0 < p.returncode < 128 and any(ln.startswith(ERROR_PREFIX) for ln in p.stderr.splitlines())
        m.status, m.reason = ("n/a" if refused else "error"), reason
        return m
    kernels = [ln.split(None, 3)[3] for ln in p.stdout.splitlines()
               if re.match(r"\s*\d+\s+QLinearConv\s", ln) and len(ln.split(None, 3)) == 4]
    m.kernel = "; ".join(dict.fromkeys(k.split(":")[0] for k in kernels))
    lat = LATENCY_RE.search(p.stdout)
    if not lat:
        m.status, m.reason = "error", "no latency_ms line in q8rt-run's output"
        return m
    for name, ref in want.items():
        path = outdir / ("".join(c if c.isalnum() or c in "._-" else "_" for c in name) + ".npy")
        got = np.load(path, allow_pickle=False) if path.exists() else None
        if got is None:
            m.reason = f"no output {name}.npy"
        compare(got, ref, m)
    t_est = float(lat.group(1)) / 1e3
    runs = policy.runs_for(t_est)
    try:
        p = _run(base + ["--repeat", str(runs)] + (["--profile"] if profile else []), timeout=600)
    except (subprocess.TimeoutExpired, OSError) as e:
        m.status, m.reason = "error", "timed out (600 s)" if isinstance(e, subprocess.TimeoutExpired) else str(e)
        return m
    lat = LATENCY_RE.search(p.stdout)
    if p.returncode != 0 or not lat:
        m.status, m.reason = "error", _error_line(p, ERROR_PREFIX)
        return m
    m.median_ms, m.min_ms, m.runs = float(lat.group(1)), float(lat.group(2)), int(lat.group(3))
    m.run_stats = parse_run_stats(p.stdout)
    conv = [float(ln.split()[-1]) for ln in p.stdout.splitlines() if ln.startswith("profile QLinearConv ")]
    if conv:
        m.conv_ms = sum(conv)
    return m


def parse_run_stats(out: str) -> Optional[Dict[str, float]]:
    """q8rt-run's 'run_stats k=v ...' line (printed with --repeat and --threads > 1), or None."""
    m = RUN_STATS_RE.search(out)
    if not m:
        return None
    kv = dict(f.split("=", 1) for f in m.group(1).split())
    return {k: (float(v) if "." in v or "e" in v.lower() else int(v)) for k, v in kv.items()}


def fmt_modes(m: Optional[Meas]) -> str:
    """'shared/alone' runs of each round of a q8rt measurement, e.g. '58/4 60/2'."""
    if m is None:
        return "-"
    stats = m.round_run_stats or ([m.run_stats] if m.run_stats else [])
    return " ".join(f"{r.get('shared', '?')}/{r.get('alone', '?')}" if r else "?" for r in stats) or "-"


def ort_session(model: Path, threads: int):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    return ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])


def run_ort(model: Path, feeds: Dict[str, np.ndarray], threads: int, policy: Policy,
            want: Dict[str, np.ndarray], impl: str, label: str) -> Meas:
    m = Meas(impl, label, threads=threads)
    try:
        sess = ort_session(model, threads)
        outs = sess.run(None, feeds)  # warm-up; its outputs are the ones checked
    except Exception as e:  # onnxruntime raises several exception types
        m.status, m.reason = "n/a", f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}"
        return m
    names = [o.name for o in sess.get_outputs()]
    for name, ref in want.items():
        compare(outs[names.index(name)] if name in names else None, ref, m)
    t0 = time.perf_counter()
    sess.run(None, feeds)
    runs = policy.runs_for(time.perf_counter() - t0)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - t0)
    m.median_ms, m.min_ms, m.runs = statistics.median(times) * 1e3, min(times) * 1e3, runs
    return m


def run_q8rt_bench(case: ConvCase, policy: Policy, quick: bool) -> List[Meas]:
    """q8rt on every backend and XNNPACK called directly, on this case's data, timed by q8rt-bench
    (C, no Python in the loop; examples/bench/q8rt-bench.c); every output is checked here against
    the int64 NumPy reference as well (q8rt-bench itself checks against q8rt's scalar backend)."""
    s, p = case.shape, case.params_u8
    (case.dir / "params.txt").write_text(f"{float(p.x_scale).hex()} {int(p.x_zp)} {float(p.y_scale).hex()} {int(p.y_zp)}\n")
    (case.dir / "x.npy").write_bytes(case.x_u8.read_bytes())
    outdir = case.dir / "q8rt-bench"
    shutil.rmtree(outdir, ignore_errors=True)
    jpath = case.dir / "q8rt-bench.json"
    args = [str(bench_exe()), "--conv", f"{s.cin},{s.cout},{s.k},{s.stride},{s.hw},{s.group}", "--data", str(case.dir),
            "--output-dir", str(outdir), "--json", str(jpath), "--min-runs", str(policy.min_runs),
            "--min-ms", str(int(policy.target_s * 1e3)), "--max-ms", str(int(policy.cap_s * 1e3))]
    labels = {f"q8rt-{b}": f"q8rt {b}" for b in Q8RT_BACKENDS}
    labels["xnnpack-direct"] = "XNNPACK qc8 (direct)"
    try:
        r = _run(args, timeout=1800)
        data = json.loads(jpath.read_text())
    except (subprocess.TimeoutExpired, OSError, ValueError) as e:
        return [Meas(k.replace("-direct", ""), v, status="error", reason=f"q8rt-bench: {e}") for k, v in labels.items()]
    res = []
    for row in data["shapes"][0]["results"]:
        if row["impl"] not in labels:
            continue
        m = Meas(row["impl"].replace("-direct", ""), labels[row["impl"]], kernel=row["kernel"], reason=row["reason"])
        if row["status"] != "ok":
            m.status = row["status"]
        elif row["runs"] == 0:
            m.status = "skipped"
        else:
            m.median_ms, m.min_ms, m.runs = row["median_ms"], row["min_ms"], row["runs"]
            if row["conv_ms"] > 0:
                m.conv_ms = row["conv_ms"]
        out = outdir / data["shapes"][0]["name"] / f"{row['impl']}.npy"
        if row["status"] == "ok":
            compare(np.load(out) if out.exists() else None, case.ref_u8, m)
        res.append(m)
    if r.returncode != 0 and not res:
        res.append(Meas("q8rt-bench", "q8rt-bench", status="error", reason=_error_line(r, "q8rt-bench: error:")))
    return res


# ---- the conv suite ------------------------------------------------------------------------------

def bench_shape(case: ConvCase, policy: Policy, quick: bool) -> List[Meas]:
    s = case.shape
    res: List[Meas] = []
    want_u8, want_s8 = {"y": case.ref_u8}, {"y": case.ref_s8}
    in_u8, in_s8 = {"x": case.x_u8}, {"x": case.x_s8}
    res.extend(run_q8rt_bench(case, policy, quick))
    res.append(run_q8rt(case.model_s8, in_s8, case.dir / "out_auto_s8", "auto", 1, policy, want_s8,
                        "q8rt-auto-s8s8", "q8rt auto, s8s8 model"))
    if s.mmac >= THREADS_MIN_MMAC:
        res.append(run_q8rt(case.model_u8, in_u8, case.dir / "out_auto_t2", "auto", 2, policy, want_u8,
                            "q8rt-auto-2t", "q8rt auto, 2 threads"))
    x_u8, x_s8 = np.load(case.x_u8), np.load(case.x_s8)
    res.append(run_ort(case.model_u8, {"x": x_u8}, 1, policy, want_u8, "ort-u8s8", "ORT u8s8"))
    res.append(run_ort(case.model_s8, {"x": x_s8}, 1, policy, want_s8, "ort-s8s8", "ORT s8s8"))
    for m in res:
        if m.ok:
            m.gmacs = s.macs / (m.median_ms * 1e-3) / 1e9
        if m.ok and m.conv_ms:
            m.conv_gmacs = s.macs / (m.conv_ms * 1e-3) / 1e9
    return res


def by_impl(res: List[Meas]) -> Dict[str, Meas]:
    return {m.impl: m for m in res}


def speed_ratio(other: Optional[Meas], q8rt: Optional[Meas], use_min: bool = False) -> Optional[float]:
    """other time / q8rt time (medians, or minimums with use_min): > 1 means q8rt is faster."""
    if other is None or q8rt is None or not other.ok or not q8rt.ok:
        return None
    return other.min_ms / q8rt.min_ms if use_min else other.median_ms / q8rt.median_ms


def ratios(res: List[Meas], use_min: bool = False) -> Dict[str, Optional[float]]:
    d = by_impl(res)
    q = d.get("q8rt-auto")
    out = {
        "ort_u8s8_over_q8rt": speed_ratio(d.get("ort-u8s8"), q, use_min),
        "ort_s8s8_over_q8rt": speed_ratio(d.get("ort-s8s8"), q, use_min),
        "xnnpack_over_q8rt": speed_ratio(d.get("xnnpack"), q, use_min),
        "two_thread_speedup": speed_ratio(q, d.get("q8rt-auto-2t"), use_min),
    }
    best = [m for m in (d.get("ort-u8s8"), d.get("xnnpack")) if m is not None and m.ok]
    out["best_peer_over_q8rt"] = speed_ratio(min(best, key=lambda m: m.median_ms), q, use_min) if best else None
    return out


# ---- text output ---------------------------------------------------------------------------------

def fmt_ms(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return f"{v:.3f}" if v < 100 else f"{v:.1f}"


def fmt_ns(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.0f} ns"


def fmt_x(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return f"{v:.2f}x" if v >= 0.095 else f"{v:.2g}x"


def fmt_exact(m: Meas) -> str:
    if m.mismatches is None:
        return "-"
    if m.mismatches == 0:
        return "yes"
    return f"NO {m.mismatches}/{m.elements} (max|d| {m.max_abs_diff})"


def print_shape(i: int, n: int, case: ConvCase, res: List[Meas]) -> None:
    s = case.shape
    print(f"\n[{i}/{n}] {s.name}: {s.describe()}  |  {s.mmac:.1f} MMAC")
    print(f"  {'implementation':<24} {'median ms':>10} {'min ms':>10} {'runs':>5} {'GMAC/s':>8}  {'exact':<10} note")
    for m in res:
        if m.ok:
            note = m.kernel or ""
            if m.reason:
                note = (note + "; " if note else "") + m.reason
            print(f"  {m.label:<24} {fmt_ms(m.median_ms):>10} {fmt_ms(m.min_ms):>10} {m.runs:>5} "
                  f"{m.gmacs:>8.2f}  {fmt_exact(m):<10} {note}")
        else:
            print(f"  {m.label:<24} {m.status:>10} {'':>10} {'':>5} {'':>8}  {fmt_exact(m):<10} {m.reason}")
    r = ratios(res)
    print(f"  speed ratios (other time / q8rt auto time, >1 = q8rt faster): ORT u8s8 {fmt_x(r['ort_u8s8_over_q8rt'])}"
          f"  ORT s8s8 {fmt_x(r['ort_s8s8_over_q8rt'])}  XNNPACK {fmt_x(r['xnnpack_over_q8rt'])}"
          + (f"  |  q8rt 2-thread speedup {fmt_x(r['two_thread_speedup'])} (by min times "
             f"{fmt_x(ratios(res, True)['two_thread_speedup'])})" if r["two_thread_speedup"] else ""))
    sys.stdout.flush()


def print_summary(cases: List[ConvCase], results: Dict[str, List[Meas]]) -> None:
    cols = [("q8rt-auto", "q8rt"), ("q8rt-auto-2t", "q8rt 2T"), ("ort-u8s8", "ORT u8s8"),
            ("ort-s8s8", "ORT s8s8"), ("xnnpack", "XNNPACK")]
    print("\nSummary, GMAC/s (single thread unless 2T); ratios = other time / q8rt auto time (>1: q8rt faster);"
          "\nexact = mismatching outputs vs the exact reference for q8rt auto / ORT u8s8 / ORT s8s8 / XNNPACK")
    print("q8rt conv = the QLinearConv step alone (the model-level columns also pay q8rt's NCHW<->NHWC"
          "\ntransposes where the conv runs NHWC; where it runs NCHW end to end, the step is the model)")
    hdr = f"{'shape':<16} {'MMAC':>6} " + " ".join(f"{c[1]:>9}" for c in cols) + \
        f" {'q8rt conv':>9} {'ORTu8/q8':>9} {'XNN/q8':>8} {'ORTu8/conv':>10} {'2T spd':>7}  exact"
    print(hdr)
    print("-" * len(hdr))
    for case in cases:
        res = results[case.shape.name]
        d = by_impl(res)
        r = ratios(res)
        g = []
        for key, _ in cols:
            m = d.get(key)
            g.append(f"{m.gmacs:9.2f}" if m is not None and m.ok else f"{'n/a' if m is not None else '':>9}")
        ex = "/".join("-" if d.get(k) is None or d[k].mismatches is None else str(d[k].mismatches)
                      for k in ("q8rt-auto", "ort-u8s8", "ort-s8s8", "xnnpack"))
        qa = d.get("q8rt-auto")
        conv_g = f"{qa.conv_gmacs:9.2f}" if qa is not None and qa.conv_gmacs else f"{'-':>9}"
        ou = d.get("ort-u8s8")
        conv_ratio = ou.median_ms / qa.conv_ms if qa is not None and qa.conv_ms and ou is not None and ou.ok else None
        print(f"{case.shape.name:<16} {case.shape.mmac:6.1f} " + " ".join(g) + f" {conv_g}" +
              f" {fmt_x(r['ort_u8s8_over_q8rt']):>9} {fmt_x(r['xnnpack_over_q8rt']):>8} {fmt_x(conv_ratio):>10}"
              f" {fmt_x(r['two_thread_speedup']):>7}  {ex}")


# ---- whole models --------------------------------------------------------------------------------

@dataclasses.dataclass
class E2EModel:
    """A whole model for the end-to-end part. prepare(dir) writes the model and its inputs and
    returns (model path, {input name: .npy path})."""
    name: str
    description: str
    prepare: Callable[[Path], Tuple[Path, Dict[str, Path]]]


def _prepare_demo(d: Path) -> Tuple[Path, Dict[str, Path]]:
    import make_demo_model as demo
    d.mkdir(parents=True, exist_ok=True)
    H.save_model(demo.build_model(), d / "demo.onnx")
    H.save_npy(d / "input.npy", demo.make_input())
    return d / "demo.onnx", {demo.INPUT: d / "input.npy"}


def _real_model(model: str, setting: str):
    """A quantized PP-OCR model built by `make models` (tests/models/make_models.py)."""
    def prepare(d: Path) -> Tuple[Path, Dict[str, Path]]:
        src = REPO / "build" / "models" / model
        path = src / f"{setting}.onnx"
        if not path.exists():
            raise FileNotFoundError(f"{path} missing: run `make models`")
        import onnx
        name = onnx.load(str(path), load_external_data=False).graph.input[0].name
        return path, {name: src / "input.npy"}
    return prepare


_SIZES = {"det": "1x3x256x384", "rec": "1x3x48x320", "cls": "1x3x48x192"}


def _describe_setting(family: str, setting: str) -> str:
    if setting.startswith("float"):
        return f"PP-OCR {family} float32 ({setting}), input {_SIZES[family]}"
    if setting.startswith("dyn"):
        return f"PP-OCR {family} dynamically quantized ({setting}), input {_SIZES[family]}"
    fmt = "QOperator" if setting.startswith("qop") else "QDQ"
    return f"PP-OCR {family} {fmt} {setting}, input {_SIZES[family]}"


def _all_real_models() -> List[E2EModel]:
    """Every PP-OCR setting `make models` built (build/models/<family>/<setting>.onnx)."""
    out = []
    for fam in ("det", "rec", "cls"):
        for f in sorted((REPO / "build" / "models" / fam).glob("*.onnx")):
            out.append(E2EModel(f"{fam}-{f.stem}", _describe_setting(fam, f.stem), _real_model(fam, f.stem)))
    return out


_FAMILY_TEXT = {"yolox": "YOLOX-style detector, 1x3x416x416", "lcnet": "PP-LCNet-style classifier, 1x3x224x224",
                "crnn": "CRNN text recognizer (conv + bidirectional LSTM), 1x1x64x232",
                "vad": "Silero-style VAD (If on the sample rate, LSTM), one 512-sample chunk",
                "vad16k": "Silero-style VAD, 16 kHz branch only (no If), one 512-sample chunk",
                "yolov8": "YOLOv8n detector (nudenet 320n.onnx), 1x3x320x320"}


def _family_model(family: str, setting: str):
    """A model family built by `make families` (tests/models/make_families.py): the first graph
    input reads input.npy, every other input NAME reads input.NAME.npy beside it."""
    def prepare(d: Path) -> Tuple[Path, Dict[str, Path]]:
        src = REPO / "build" / "model-families" / family
        path = src / f"{setting}.onnx"
        if not path.exists():
            raise FileNotFoundError(f"{path} missing: run `make families`")
        import onnx
        g = onnx.load(str(path), load_external_data=False).graph
        init = {i.name for i in g.initializer}
        names = [i.name for i in g.input if i.name not in init]
        return path, {n: src / ("input.npy" if k == 0 else f"input.{n}.npy") for k, n in enumerate(names)}
    return prepare


def _all_family_models() -> List[E2EModel]:
    """Every setting of every model family `make families` built (build/model-families/<family>/)."""
    out = []
    for fam, text in _FAMILY_TEXT.items():
        for f in sorted((REPO / "build" / "model-families" / fam).glob("*.onnx")):
            if f.stem == "float13":  # the opset-13 twin of float: the same graph
                continue
            out.append(E2EModel(f"{fam}-{f.stem}", f"{text}, {f.stem}", _family_model(fam, f.stem)))
    return out


# Add real models here (name, description, prepare function).
E2E_MODELS: List[E2EModel] = [
    E2EModel("demo", "examples/make_demo_model.py: Q -> 3x3 s2 conv -> dw 3x3 -> 1x1 -> DQ, 64x64 input",
             _prepare_demo),
] + _all_real_models() + _all_family_models()


def run_openvino(model: Path, feeds: Dict[str, np.ndarray], threads: int, policy: Policy,
                 want: Dict[str, np.ndarray], impl: str, label: str) -> Meas:
    """OpenVINO's CPU plugin, latency hint, one stream, `threads` inference threads, float32
    inference precision (its default on CPUs with AVX-512 BF16, such as Zen 4, is bf16: float
    models then differ from ORT by up to ~0.3 and are not comparable). It reads the ONNX file
    itself; QDQ models run in int8, QOperator models are refused (shown as n/a)."""
    m = Meas(impl, label, threads=threads)
    try:
        import openvino as ov
    except ImportError as e:
        m.status, m.reason = "n/a", f"openvino not installed ({e}); pip install -r examples/bench/requirements.txt"
        return m
    try:
        core = ov.Core()
        cm = core.compile_model(str(model), "CPU", {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": "1",
                                                    "INFERENCE_NUM_THREADS": str(threads),
                                                    "INFERENCE_PRECISION_HINT": "f32"})
        req = cm.create_infer_request()
        res = req.infer(feeds)
    except Exception as e:  # OpenVINO raises RuntimeError and others for unsupported models
        m.status, m.reason = "n/a", f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[-1][:160]}"
        return m
    outs = {o.get_any_name(): res[o] for o in cm.outputs}
    for name, ref in want.items():
        got = outs.get(name)
        compare(np.asarray(got) if got is not None else None, ref, m)
    t0 = time.perf_counter()
    req.infer(feeds)
    runs = policy.runs_for(time.perf_counter() - t0)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        req.infer(feeds)
        times.append(time.perf_counter() - t0)
    m.median_ms, m.min_ms, m.runs = statistics.median(times) * 1e3, min(times) * 1e3, runs
    del req, cm, core
    return m


class BusyCore:
    """A busy loop pinned to the last CPU (`taskset -c N sh -c 'while :; do :; done'`), as another
    process would load the machine. Context manager; the loop is killed on exit."""

    def __init__(self) -> None:
        self.proc: Optional[subprocess.Popen] = None

    def __enter__(self) -> "BusyCore":
        cpu = (os.cpu_count() or 2) - 1
        self.proc = subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c", "while :; do :; done"])
        time.sleep(0.2)
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()


# Keys of the whole-model measurements, in table order.
MODEL_IMPLS = ["q8rt-1t", "base-1t", "ort-1t", "ov-1t", "q8rt-2t", "base-2t", "ort-2t", "ov-2t",
               "q8rt-busy-1t", "q8rt-busy-2t", "base-busy-1t", "base-busy-2t", "ort-busy-1t", "ort-busy-2t"]


def merge_rounds(rounds: List[List[Meas]]) -> List[Meas]:
    """One Meas per implementation from several rounds: a failed or inexact round wins (it is
    reported), else the round with the lowest median; every round's median is kept."""
    out: Dict[str, Meas] = {}
    for res in rounds:
        for m in res:
            k = out.get(m.impl)
            if k is None:
                out[m.impl] = m
                m.round_medians_ms = []
                m.round_run_stats = []
            else:
                m.round_medians_ms = k.round_medians_ms
                m.round_run_stats = k.round_run_stats
                bad_k = not k.ok or bool(k.mismatches)
                bad_m = not m.ok or bool(m.mismatches)
                if (bad_m and not bad_k) or (bad_m == bad_k and m.ok and k.ok and m.median_ms < k.median_ms):
                    out[m.impl] = m
            if m.median_ms is not None:
                m.round_medians_ms.append(round(m.median_ms, 4))
            if m.run_stats is not None:
                m.round_run_stats.append(m.run_stats)
    return list(out.values())


CORE_RTT_RE = re.compile(r"^core_rtt_ns min=([0-9.]+) median=([0-9.]+)", re.M)


def core_rtt_ns() -> Optional[float]:
    """How long a cache line takes from one CPU to another and back now (`q8rt-bench
    --core-latency`: the fastest of 500 batches of round trips, ns), or None. On this VM ~55-90 ns
    while the host keeps the two vCPUs close and ~290-380 ns while it keeps them apart (spells of
    seconds to minutes); q8rt's 2T/1T on det then fell from 1.7-1.9x to 1.0-1.3x (alternating
    1T/2T runs of det qop_u8s8_pc_rr and float next to this probe, 2026-11-24)."""
    try:
        p = _run([str(bench_exe()), "--core-latency"], timeout=30)
    except (subprocess.TimeoutExpired, OSError):
        return None
    m = CORE_RTT_RE.search(p.stdout) if p.returncode == 0 else None
    return float(m.group(1)) if m else None


def bench_models(ems: List[E2EModel], root: Path, policy: Policy, rounds: int,
                 once=None, done=None, rtt=None, rtts: Optional[Dict[str, List[Optional[float]]]] = None
                 ) -> Dict[str, List[Meas]]:
    """Whole models in `rounds` passes over the list: round r of every model before round r + 1 of
    any, each implementation keeping its best round (merge_rounds). A model's rounds then lie a
    whole pass apart (~10 min on the full list) instead of back to back (~10 s): on this VM the
    2-thread times drift with the host over minutes, and back-to-back rounds let one such spell
    slow every round of the models measured during it (session 13's final bench: det
    qop_u8s8_pc/_pc_rr/_pt, measured one after another, 2T/1T 1.62/1.51/1.62x, while the
    qop_s8s8 twins of the same graph just before them got 1.82/1.89x), where it should slow one
    round. 1-thread and 2-thread runs, q8rt and its peers are treated alike. `once(em)` measures
    one round of a model (bench_model_once by default); `done(em, res)` is called with a model's
    merged results after its last round. A model whose files are missing is skipped from then on.
    `rtt()` (core_rtt_ns by default) runs before each round of each model; its values go to
    rtts[model name], one per round."""
    once = once or (lambda em: bench_model_once(em, root, policy))
    rtt = rtt or core_rtt_ns
    rtts = rtts if rtts is not None else {}
    per: Dict[str, List[List[Meas]]] = {}
    skipped = set()
    n = max(1, rounds)
    for r in range(n):
        for em in ems:
            if em.name in skipped:
                continue
            ns = rtt()
            try:
                res = once(em)
            except FileNotFoundError as e:
                print(f"\nmodel {em.name}: skipped ({e})")
                skipped.add(em.name)
                continue
            per.setdefault(em.name, []).append(res)
            rtts.setdefault(em.name, []).append(ns)
            if r == n - 1:
                if done is not None:
                    done(em, merge_rounds(per[em.name]))
            elif done is not None:
                q = {k: m.median_ms for k, m in by_impl(res).items()}
                print(f"model {em.name}: round {r + 1}/{n} (q8rt 1T {fmt_ms(q.get('q8rt-1t'))}, "
                      f"2T {fmt_ms(q.get('q8rt-2t'))} ms; core round trip {fmt_ns(ns)})", flush=True)
    return {em.name: merge_rounds(per[em.name]) for em in ems if em.name in per}


def bench_model_once(em: E2EModel, root: Path, policy: Policy) -> List[Meas]:
    d = root / "models" / em.name
    model, inputs = em.prepare(d)
    feeds = {k: np.load(v) for k, v in inputs.items()}
    # ONNX Runtime's single-thread output is the reference for whole models (the conv suite checks
    # each node against the exact NumPy reference).
    ref = ort_session(model, 1)
    want = {o.name: v for o, v in zip(ref.get_outputs(), ref.run(None, feeds))}
    del ref
    res = []
    bexe = base_exe()
    for t in (1, 2):
        res.append(run_q8rt(model, inputs, d / f"out_t{t}", "auto", t, policy, want, f"q8rt-{t}t",
                            f"q8rt, {t} thread{'s' if t > 1 else ''}", profile=False))
        if bexe is not None:
            res.append(run_q8rt(model, inputs, d / f"out_base_t{t}", "auto", t, policy, want, f"base-{t}t",
                                f"q8rt base, {t} thread{'s' if t > 1 else ''}", exe=bexe, profile=False))
        res.append(run_ort(model, feeds, t, policy, want, f"ort-{t}t", f"ORT, {t} thread{'s' if t > 1 else ''}"))
        res.append(run_openvino(model, feeds, t, policy, want, f"ov-{t}t",
                                f"OpenVINO, {t} thread{'s' if t > 1 else ''}"))
    with BusyCore():
        for t in (1, 2):
            res.append(run_q8rt(model, inputs, d / f"out_busy_t{t}", "auto", t, policy, want, f"q8rt-busy-{t}t",
                                f"q8rt, {t} thread{'s' if t > 1 else ''}, busy core", profile=False))
            if bexe is not None:
                res.append(run_q8rt(model, inputs, d / f"out_base_busy_t{t}", "auto", t, policy, want,
                                    f"base-busy-{t}t", f"q8rt base, {t} thread{'s' if t > 1 else ''}, busy core",
                                    exe=bexe, profile=False))
            res.append(run_ort(model, feeds, t, policy, want, f"ort-busy-{t}t",
                               f"ORT, {t} thread{'s' if t > 1 else ''}, busy core"))
    order = {k: i for i, k in enumerate(MODEL_IMPLS)}
    return sorted(res, key=lambda m: order.get(m.impl, 99))


def best_peer(d: Dict[str, Meas], t: int) -> Optional[Meas]:
    peers = [d.get(f"ort-{t}t"), d.get(f"ov-{t}t")]
    peers = [p for p in peers if p is not None and p.ok]
    return min(peers, key=lambda p: p.median_ms) if peers else None


def model_ratios(res: List[Meas]) -> Dict[str, Optional[float]]:
    """Time ratios for one model: > 1 means q8rt is faster (or, for the thread rows, that the
    second thread helps / a busy core does not hurt)."""
    d = by_impl(res)
    return {
        "ort_1t": speed_ratio(d.get("ort-1t"), d.get("q8rt-1t")),
        "ort_2t": speed_ratio(d.get("ort-2t"), d.get("q8rt-2t")),
        "ov_1t": speed_ratio(d.get("ov-1t"), d.get("q8rt-1t")),
        "ov_2t": speed_ratio(d.get("ov-2t"), d.get("q8rt-2t")),
        "best_1t": speed_ratio(best_peer(d, 1), d.get("q8rt-1t")),
        "best_2t": speed_ratio(best_peer(d, 2), d.get("q8rt-2t")),
        "q8rt_2t_speedup": speed_ratio(d.get("q8rt-1t"), d.get("q8rt-2t")),
        "ort_2t_speedup": speed_ratio(d.get("ort-1t"), d.get("ort-2t")),
        "q8rt_busy_2t_vs_1t": speed_ratio(d.get("q8rt-busy-1t"), d.get("q8rt-busy-2t")),
        "q8rt_busy_2t_vs_quiet_1t": speed_ratio(d.get("q8rt-1t"), d.get("q8rt-busy-2t")),
        "ort_busy_2t_vs_1t": speed_ratio(d.get("ort-busy-1t"), d.get("ort-busy-2t")),
        "base_1t": speed_ratio(d.get("base-1t"), d.get("q8rt-1t")),
        "base_2t": speed_ratio(d.get("base-2t"), d.get("q8rt-2t")),
        "base_2t_speedup": speed_ratio(d.get("base-1t"), d.get("base-2t")),
        "base_busy_2t_vs_1t": speed_ratio(d.get("base-busy-1t"), d.get("base-busy-2t")),
    }


def print_model(em: E2EModel, res: List[Meas]) -> None:
    print(f"\nmodel {em.name}: {em.description}")
    print(f"  {'implementation':<30} {'median ms':>10} {'min ms':>10} {'runs':>5}  {'same as ORT 1T':<16} note")
    for m in res:
        if m.ok:
            modes = f"runs shared/alone {fmt_modes(m)}; " if m.run_stats else ""
            print(f"  {m.label:<30} {fmt_ms(m.median_ms):>10} {fmt_ms(m.min_ms):>10} {m.runs:>5}  "
                  f"{fmt_exact(m):<16} {modes}{m.kernel}")
        else:
            print(f"  {m.label:<30} {m.status:>10} {'':>10} {'':>5}  {'':<16} {m.reason}")
    r = model_ratios(res)
    print(f"  other time / q8rt time: ORT {fmt_x(r['ort_1t'])} / {fmt_x(r['ort_2t'])}, OpenVINO {fmt_x(r['ov_1t'])}"
          f" / {fmt_x(r['ov_2t'])} (1T / 2T)  |  q8rt 2T speedup {fmt_x(r['q8rt_2t_speedup'])}, busy core "
          f"2T vs 1T {fmt_x(r['q8rt_busy_2t_vs_1t'])}")
    sys.stdout.flush()


def print_models_summary(names: List[str], models: Dict[str, List[Meas]]) -> None:
    print("\nwhole models, median ms (ratios: other time / q8rt time, > 1 = q8rt faster; 2T/1T: q8rt 1T time / "
          "2T time; busy: q8rt 1T / 2T time with a busy loop on the other core)")
    hdr = (f"  {'model':<22} {'q8rt 1T':>8} {'ORT 1T':>8} {'OV 1T':>8} {'q8rt 2T':>8} {'ORT 2T':>8} {'OV 2T':>8}"
           f" {'/ORT 1T':>8} {'/ORT 2T':>8} {'/best1T':>8} {'/best2T':>8} {'2T/1T':>6} {'busy':>6} {'ORTbusy':>7}")
    have_base = any("base-1t" in by_impl(models[n]) for n in names)
    if have_base:
        hdr += f" {'base/q8rt 1T':>12} {'2T':>6} {'base 2T/1T':>10} {'base busy':>9}"
    print(hdr)
    for n in names:
        d = by_impl(models[n])
        r = model_ratios(models[n])
        ms = [fmt_ms(d[k].median_ms) if k in d and d[k].ok else d[k].status if k in d else "-"
              for k in ("q8rt-1t", "ort-1t", "ov-1t", "q8rt-2t", "ort-2t", "ov-2t")]
        print(f"  {n:<22} " + " ".join(f"{v:>8}" for v in ms) + " " +
              " ".join(f"{fmt_x(r[k]):>8}" for k in ("ort_1t", "ort_2t", "best_1t", "best_2t")) +
              f" {fmt_x(r['q8rt_2t_speedup']):>6} {fmt_x(r['q8rt_busy_2t_vs_1t']):>6}"
              f" {fmt_x(r['ort_busy_2t_vs_1t']):>7}" +
              (f" {fmt_x(r['base_1t']):>12} {fmt_x(r['base_2t']):>6} {fmt_x(r['base_2t_speedup']):>10}"
               f" {fmt_x(r['base_busy_2t_vs_1t']):>9}" if have_base else ""))


def plot_models(names: List[str], models: Dict[str, List[Meas]], path: Path, title: str) -> Optional[str]:
    """Per model: q8rt's speed relative to each peer (other time / q8rt time, log scale)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"no chart: {e}"
    series = [("ort_1t", "vs ORT, 1 thread", "#ff7f0e"), ("ort_2t", "vs ORT, 2 threads", "#ffbb78"),
              ("ov_1t", "vs OpenVINO, 1 thread", "#2ca02c"), ("ov_2t", "vs OpenVINO, 2 threads", "#98df8a"),
              ("q8rt_2t_speedup", "q8rt 2 threads vs 1", "#1f77b4"),
              ("q8rt_busy_2t_vs_1t", "q8rt 2T vs 1T, busy core", "#9467bd")]
    ratios = {n: model_ratios(models[n]) for n in names}
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(names) * len(series) / 3 + 2))
    h = 0.8 / len(series)
    for k, (key, label, color) in enumerate(series):
        ys = [i + k * h for i in range(len(names))]
        vals = [ratios[n][key] or 0.0 for n in names]
        ax.barh(ys, vals, height=h, color=color, label=label)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(1.5, color="gray", linewidth=0.8, linestyle="--")
    ax.set_xscale("log")
    ax.set_yticks([i + 0.4 - h / 2 for i in range(len(names))])
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("other time / q8rt time (> 1: q8rt faster); dashed: the 1.5x target")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


# ---- machine, versions, JSON, chart --------------------------------------------------------------

def loadavg() -> List[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return [0.0, 0.0, 0.0]


def machine_info() -> dict:
    info: dict = {"platform": platform.platform(), "machine": platform.machine(), "cpus": os.cpu_count()}
    try:
        text = Path("/proc/cpuinfo").read_text()
        first = text.split("\n\n")[0]
        fields = dict((k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in first.splitlines()) if k)
        flags = set(fields.get("flags", "").split())
        info.update({"cpu_model": fields.get("model name", "?"), "cpu_family": fields.get("cpu family"),
                     "cpu_model_number": fields.get("model"), "cpu_mhz": fields.get("cpu MHz"),
                     "flags": {f: f in flags for f in ("avx2", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                                                       "avx_vnni", "fma")}})
    except OSError:
        info["cpu_model"] = "?"
    return info


def versions() -> dict:
    import onnx
    import onnxruntime
    v = {"python": platform.python_version(), "numpy": np.__version__, "onnx": onnx.__version__,
         "onnxruntime": onnxruntime.__version__}
    try:
        import matplotlib
        v["matplotlib"] = matplotlib.__version__
    except ImportError:
        pass
    try:
        import openvino
        v["openvino"] = openvino.__version__.split("-")[0]
    except ImportError:
        pass
    m = re.search(r'#define Q8RT_VERSION_STRING "([^"]*)"', (REPO / "include" / "q8rt.h").read_text())
    v["q8rt"] = m.group(1) if m else "?"
    try:
        # The tree q8rt-run was built from (Q8RT_RUN may point into another clone).
        v["q8rt_git"] = subprocess.run(["git", "-C", str(q8rt_exe().parent), "describe", "--always", "--dirty"],
                                       capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        v["xnnpack"] = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libxnnpack-dev"],
                                      capture_output=True, text=True, timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.TimeoutExpired):
        v["xnnpack"] = "?"
    return v


PLOT_IMPLS = [("q8rt-auto", "q8rt auto", "#1f77b4"), ("q8rt-avx512", "q8rt avx512", "#6baed6"),
              ("q8rt-avx2", "q8rt avx2", "#9ecae1"), ("q8rt-xnnpack", "q8rt xnnpack", "#c6dbef"),
              ("q8rt-reference", "q8rt reference", "#bdbdbd"), ("ort-u8s8", "ORT u8s8", "#d62728"),
              ("ort-s8s8", "ORT s8s8", "#ff9896"), ("xnnpack", "XNNPACK qc8", "#2ca02c")]


def plot(cases: List[ConvCase], results: Dict[str, List[Meas]], path: Path, title: str) -> Optional[str]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError as e:
        return f"no chart: {e}"
    impls = [p for p in PLOT_IMPLS if any(by_impl(results[c.shape.name]).get(p[0]) is not None and
                                          by_impl(results[c.shape.name])[p[0]].ok for c in cases)]
    if not impls:
        return "no chart: nothing measured"
    n, k = len(cases), len(impls)
    width = 0.8 / k
    fig, ax = plt.subplots(figsize=(max(10.0, 1.6 * n + 3), 7.0), dpi=110)
    any_inexact = False
    for j, (key, label, color) in enumerate(impls):
        xs, ys, hatches = [], [], []
        for i, c in enumerate(cases):
            m = by_impl(results[c.shape.name]).get(key)
            if m is not None and m.ok:
                xs.append(i - 0.4 + width * (j + 0.5))
                ys.append(m.gmacs)
                bad = bool(m.mismatches)
                any_inexact |= bad
                hatches.append("///" if bad else "")
        bars = ax.bar(xs, ys, width=width, color=color, label=label, edgecolor="black", linewidth=0.4)
        for b, h, y in zip(bars, hatches, ys):
            b.set_hatch(h)
            ax.annotate(f"{y:.3g}", (b.get_x() + b.get_width() / 2, y), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", rotation=90, fontsize=7)
    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi * 4)  # room for the value labels and the legend
    ax.set_ylabel("GMAC/s (log scale, higher is better)")
    ax.set_xticks(range(n))
    ax.set_xticklabels([f"{c.shape.name}\n{c.shape.mmac:.1f} MMAC" for c in cases], rotation=30, ha="right",
                       fontsize=9)
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.set_axisbelow(True)
    handles, labels = ax.get_legend_handles_labels()
    if any_inexact:
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="///"))
        labels.append("hatched: wrong outputs")
    ax.legend(handles, labels, fontsize=9, ncol=2, loc="upper right")
    ax.set_title(title, fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return None


# ---- main ----------------------------------------------------------------------------------------

def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "no", "false", "off")


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--shapes", default=os.environ.get("BENCH_SHAPES", ""),
                    help="comma-separated shape names (default: all; env BENCH_SHAPES)")
    ap.add_argument("--quick", action="store_true", default=env_flag("BENCH_QUICK"), help="env BENCH_QUICK=1")
    ap.add_argument("--no-e2e", action="store_true", default=os.environ.get("BENCH_E2E", "1") == "0")
    ap.add_argument("--no-convs", action="store_true", default=os.environ.get("BENCH_CONVS", "1") == "0",
                    help="skip the conv shapes (env BENCH_CONVS=0)")
    ap.add_argument("--out", default=os.environ.get("BENCH_OUT", str(REPO / "build" / "bench")))
    ap.add_argument("--models", default=os.environ.get("BENCH_MODELS", ""),
                    help="comma-separated model names, or prefixes ending in '-' (default: all; env BENCH_MODELS)")
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "2")),
                    help="whole models: measure every implementation this many times, keep each one's best "
                         "round (env BENCH_ROUNDS, default 2)")
    ap.add_argument("--list", action="store_true", help="list the shapes and exit")
    args = ap.parse_args(argv)
    if args.list:
        for s in SHAPES:
            print(f"{s.name:<16} {s.mmac:7.1f} MMAC  {s.describe()}")
        return 0
    shapes = [] if args.no_convs else SHAPES
    if args.shapes.strip():
        wanted = [w.strip() for w in args.shapes.split(",") if w.strip()]
        unknown = [w for w in wanted if w not in {s.name for s in SHAPES}]
        if unknown:
            print(f"bench: unknown shape(s) {', '.join(unknown)}; known: {', '.join(s.name for s in SHAPES)}",
                  file=sys.stderr)
            return 2
        shapes = [s for s in SHAPES if s.name in wanted]
    if not q8rt_exe().exists():
        print(f"bench: {q8rt_exe()} not found (build with make, or set Q8RT_RUN)", file=sys.stderr)
        return 1
    policy = QUICK if args.quick else FULL
    root = Path(args.out)
    root.mkdir(parents=True, exist_ok=True)
    t_start = time.time()
    load_start = loadavg()
    mach, vers = machine_info(), versions()
    flags = mach.get("flags", {})
    print(f"q8rt bench: {mach.get('cpu_model')} ({mach.get('cpus')} CPUs; "
          + ", ".join(f"{f} {'yes' if flags.get(f) else 'no'}" for f in ("avx2", "avx512f", "avx512_vnni"))
          + f"); onnxruntime {vers['onnxruntime']}, XNNPACK {vers.get('xnnpack')}, q8rt {vers['q8rt']} "
          f"({vers.get('q8rt_git', '?')})")
    print(f"q8rt-run: {q8rt_exe()}; timing: >= {policy.min_runs} runs and >= {policy.target_s:g} s per "
          f"implementation, capped at {policy.cap_s:g} s{' (BENCH_QUICK)' if args.quick else ''}; "
          f"whole models: {args.rounds} round(s), a pass over the models each, each implementation's best kept; "
          f"single thread unless stated; load average {load_start}")

    cases: List[ConvCase] = []
    results: Dict[str, List[Meas]] = {}
    for i, s in enumerate(shapes, 1):
        case = make_case(s, root)
        cases.append(case)
        results[s.name] = bench_shape(case, policy, args.quick)
        print_shape(i, len(shapes), case, results[s.name])
    if cases:
        print_summary(cases, results)

    models: Dict[str, List[Meas]] = {}
    rtts: Dict[str, List[Optional[float]]] = {}
    if not args.no_e2e:
        wanted_models = [w.strip() for w in args.models.split(",") if w.strip()]
        ems = [em for em in E2E_MODELS
               if not wanted_models or any(em.name == w or (w.endswith("-") and em.name.startswith(w))
                                           for w in wanted_models)]
        def done(em: E2EModel, res: List[Meas]) -> None:
            print_model(em, res)
            print(f"  core round trip before each round (q8rt-bench --core-latency): "
                  f"{', '.join(fmt_ns(v) for v in rtts.get(em.name, []))}", flush=True)

        models = bench_models(ems, root, policy, args.rounds, done=done, rtts=rtts)
        if models:
            print_models_summary(list(models), models)

    elapsed = time.time() - t_start
    load_end = loadavg()
    report = {
        "machine": mach, "versions": vers, "quick": args.quick, "policy": dataclasses.asdict(policy),
        "model_rounds": args.rounds,
        "q8rt_run": str(q8rt_exe()), "q8rt_bench": str(bench_exe()),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "elapsed_s": round(elapsed, 1),
        "loadavg_start": load_start, "loadavg_end": load_end,
        "ratio_convention": "other_time / q8rt_time (> 1: q8rt faster)",
        "convs": [{"shape": dataclasses.asdict(c.shape), "mmac": c.shape.mmac, "macs": c.shape.macs,
                   "description": c.shape.describe(), "elements": int(c.ref_u8.size),
                   "results": [dataclasses.asdict(m) for m in results[c.shape.name]],
                   "ratios": ratios(results[c.shape.name]),
                   "ratios_by_min": ratios(results[c.shape.name], True)} for c in cases],
        "models": [{"name": em.name, "description": em.description,
                    "results": [dataclasses.asdict(m) for m in models[em.name]],
                    "ratios": model_ratios(models[em.name]),
                    "round_core_rtt_ns": rtts.get(em.name, [])}
                   for em in E2E_MODELS if em.name in models],
    }
    (root / "bench.json").write_text(json.dumps(report, indent=1) + "\n")
    msg = None
    if cases:
        title = (f"q8rt vs ONNX Runtime {vers['onnxruntime']} vs XNNPACK: quantized conv, N=1, 1 thread\n"
                 f"{mach.get('cpu_model')}, AVX-512 {'yes' if flags.get('avx512f') else 'no'}, "
                 f"VNNI {'yes' if flags.get('avx512_vnni') else 'no'}")
        msg = plot(cases, results, root / "bench.png", title)
    if models:
        vers_ov = vers.get("openvino", "?")
        mmsg = plot_models(list(models), models, root / "bench-models.png",
                           f"q8rt vs ONNX Runtime {vers['onnxruntime']} vs OpenVINO {vers_ov}: whole models\n"
                           f"{mach.get('cpu_model')}, {mach.get('cpus')} CPUs")
        msg = msg or mmsg
    pngs = [str(root / f) for f, have in (("bench.png", cases), ("bench-models.png", models)) if have]
    print(f"\nwrote {root / 'bench.json'}" + (f" and {', '.join(pngs)}" if pngs and not msg else "")
          + (f" ({msg})" if msg else "") + f"; {elapsed:.0f} s; load average now {load_end}"
          + (" (busy machine: other processes share the cores, 2-thread numbers suffer most)"
             if max(load_start[0], load_end[0]) > 0.5 * (os.cpu_count() or 1) else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
