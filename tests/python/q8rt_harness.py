"""Shared helpers for q8rt's Python tests and the demo.

- locating and running q8rt-run (``run_q8rt``), with checks for clean errors;
- .npy / TensorProto input and output files;
- exact reference implementations of QuantizeLinear, DequantizeLinear and QLinearConv that follow
  the numerics contract of README.md ("Numerics contract") bit for bit (int64 accumulation,
  then float32 arithmetic, round half to even);
- small ONNX model builders (onnx.helper) for QLinearConv and Q/DQ chains;
- running the same model in ONNX Runtime (single thread).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parents[2]
ERROR_PREFIX = "q8rt-run: error:"
SANITIZER_MARKERS = ("AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer", "runtime error:")

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint16): TensorProto.UINT16,
    np.dtype(np.int16): TensorProto.INT16,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.bool_): TensorProto.BOOL,
    np.dtype(np.float16): TensorProto.FLOAT16,
}


# ---- locating the build --------------------------------------------------------------------------

def build_dir() -> Path:
    return Path(os.environ.get("Q8RT_BUILD", REPO / "build")).resolve()


def runner_path() -> Path:
    return Path(os.environ.get("Q8RT_RUN", build_dir() / "q8rt-run")).resolve()


def is_sanitized_build() -> bool:
    p = str(runner_path())
    return "/san/" in p or os.environ.get("Q8RT_SAN") == "1"


def shared_build_dir() -> Path:
    """build/ at the top of the tree (not build/san): summaries and shared test models go here."""
    return REPO / "build"


# ---- running q8rt-run ----------------------------------------------------------------------------

@dataclasses.dataclass
class RunResult:
    args: List[str]
    returncode: int
    stdout: str
    stderr: str
    output_dir: Optional[Path]

    def output(self, name: str) -> np.ndarray:
        assert self.output_dir is not None
        # q8rt-run's file name for an output: characters outside [A-Za-z0-9._-] become '_'
        safe = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in name) or "_"
        path = self.output_dir / f"{safe}.npy"
        assert path.exists(), f"q8rt-run wrote no {path.name}; files: {sorted(os.listdir(self.output_dir))}\n{self.describe()}"
        return np.load(path, allow_pickle=False)

    def describe(self) -> str:
        return (f"command: {' '.join(self.args)}\nexit status: {self.returncode}\n"
                f"stdout:\n{self.stdout[-4000:]}\nstderr:\n{self.stderr[-4000:]}")

    def assert_ok(self) -> "RunResult":
        assert self.returncode == 0, "q8rt-run failed\n" + self.describe()
        assert_no_sanitizer_report(self)
        return self


def run_q8rt(model: Path | str, inputs: Optional[Dict[str, Path | str]] = None,
             output_dir: Optional[Path | str] = None, extra: Sequence[str] = (),
             timeout: float = 120.0) -> RunResult:
    exe = runner_path()
    if not exe.exists():
        raise AssertionError(f"q8rt-run not found at {exe} (build it with `make`, or set Q8RT_RUN)")
    args = [str(exe), str(model)]
    for name, path in (inputs or {}).items():
        args += ["--input", f"{name}={path}"]
    if output_dir is not None:
        output_dir = Path(output_dir)
        output_dir.mkdir(parents=True, exist_ok=True)
        args += ["--output-dir", str(output_dir)]
    args += list(extra)
    env = dict(os.environ)
    # Sanitizer runs: report everything, fail loudly. Harmless for the optimized build.
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env,
                       errors="replace")
    return RunResult(args, p.returncode, p.stdout, p.stderr, output_dir)


def assert_no_sanitizer_report(res: RunResult) -> None:
    for marker in SANITIZER_MARKERS:
        assert marker not in res.stderr, f"sanitizer report ({marker})\n" + res.describe()


def assert_clean_error(res: RunResult, any_of: Iterable[str] = ()) -> str:
    """q8rt-run failed the way the contract says: exit status > 0 (no signal), exactly one line on
    stderr that starts with 'q8rt-run: error:', no sanitizer report. When any_of is given, the
    message must contain at least one of those strings (case-insensitive). Returns the message."""
    assert res.returncode != 0, "q8rt-run accepted input it should refuse\n" + res.describe()
    assert res.returncode > 0, f"q8rt-run died from signal {-res.returncode}\n" + res.describe()
    assert res.returncode < 128, f"q8rt-run exit status {res.returncode} looks like a crash\n" + res.describe()
    assert_no_sanitizer_report(res)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected exactly one stderr line, got {len(lines)}\n" + res.describe()
    assert lines[0].startswith(ERROR_PREFIX), f"stderr does not start with {ERROR_PREFIX!r}\n" + res.describe()
    msg = lines[0][len(ERROR_PREFIX):].strip()
    assert msg, "empty error message\n" + res.describe()
    wanted = list(any_of)
    if wanted:
        low = msg.lower()
        assert any(w.lower() in low for w in wanted), \
            f"error message names none of {wanted}: {msg!r}\n" + res.describe()
    return msg


# ---- files ---------------------------------------------------------------------------------------

def save_npy(path: Path | str, array: np.ndarray) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, np.ascontiguousarray(array), allow_pickle=False)
    return path


def save_pb(path: Path | str, array: np.ndarray, name: str = "") -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(numpy_helper.from_array(np.ascontiguousarray(array), name).SerializeToString())
    return path


def load_pb(path: Path | str) -> np.ndarray:
    t = TensorProto()
    t.ParseFromString(Path(path).read_bytes())
    return numpy_helper.to_array(t)


def save_model(model: onnx.ModelProto, path: Path | str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.SerializeToString())
    return path


def assert_same_bytes(got: np.ndarray, want: np.ndarray, what: str = "output") -> None:
    """Exact comparison: dtype, shape and bytes (floats compared as their bit patterns)."""
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    g, w = np.ascontiguousarray(got), np.ascontiguousarray(want)
    if g.dtype.kind == "f":
        g, w = g.view(np.uint32 if g.itemsize == 4 else np.uint8), w.view(np.uint32 if w.itemsize == 4 else np.uint8)
    if not np.array_equal(g, w):
        bad = np.argwhere(g != w)
        first = [tuple(int(i) for i in b) for b in bad[:5]]
        detail = ", ".join(f"{ix}: got {got[ix]!r} want {want[ix]!r}" for ix in first)
        raise AssertionError(f"{what}: {len(bad)} of {g.size} elements differ; first: {detail}")


def count_mismatches(a: np.ndarray, b: np.ndarray) -> int:
    if a.dtype != b.dtype or a.shape != b.shape:
        return -1
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if a.dtype.kind == "f":
        a, b = a.view(np.uint32), b.view(np.uint32)
    return int(np.count_nonzero(a != b))


# ---- exact references ----------------------------------------------------------------------------

def qrange(dtype) -> tuple:
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def _per_axis(param: np.ndarray, ndim: int, axis: int, shape, block_size: int = 0) -> np.ndarray:
    """Broadcast a per-tensor / per-axis / blocked parameter to the data shape."""
    param = np.asarray(param)
    if param.ndim == 0 or param.size == 1 and param.ndim <= 1 and not block_size:
        return param.reshape(())
    axis = axis % ndim
    if block_size:
        param = np.repeat(param, block_size, axis=axis)
        param = np.take(param, np.arange(shape[axis]), axis=axis)
        return param
    newshape = [1] * ndim
    newshape[axis] = param.size
    return param.reshape(newshape)


def quantize_ref(x: np.ndarray, scale, zero_point, out_dtype=np.uint8, axis: int = 1,
                 block_size: int = 0) -> np.ndarray:
    """y = saturate(round_half_even(float32 x / float32 scale) + zp)."""
    x = np.asarray(x, dtype=np.float32)
    s = _per_axis(np.asarray(scale, dtype=np.float32), x.ndim, axis, x.shape, block_size)
    if zero_point is None:
        zp = np.zeros((), dtype=np.int64)
    else:
        zp = _per_axis(np.asarray(zero_point).astype(np.int64), x.ndim, axis, x.shape, block_size)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.rint(np.divide(x, s, dtype=np.float32))
    lo, hi = qrange(out_dtype)
    # Clip in float first (NaN goes to 0 like ORT's saturating conversion would be arbitrary: avoid NaN in tests).
    q = np.clip(np.nan_to_num(q, nan=0.0), -2.0**40, 2.0**40).astype(np.int64) + zp
    return np.clip(q, lo, hi).astype(out_dtype)


def dequantize_ref(x: np.ndarray, scale, zero_point, axis: int = 1, block_size: int = 0) -> np.ndarray:
    """y = float32(x - zp) * float32 scale."""
    x = np.asarray(x)
    s = _per_axis(np.asarray(scale, dtype=np.float32), x.ndim, axis, x.shape, block_size)
    if zero_point is None:
        zp = np.zeros((), dtype=np.int64)
    else:
        zp = _per_axis(np.asarray(zero_point).astype(np.int64), x.ndim, axis, x.shape, block_size)
    d = (x.astype(np.int64) - zp).astype(np.float32)
    return np.multiply(d, s, dtype=np.float32)


def conv_geometry(in_spatial: Sequence[int], kernel: Sequence[int], strides, dilations, pads, auto_pad):
    """Returns (pads_begin, pads_end, out_spatial) following the ONNX Conv rules."""
    nd = len(in_spatial)
    pb, pe, out = [], [], []
    for i in range(nd):
        n, k, s, d = in_spatial[i], kernel[i], strides[i], dilations[i]
        ek = (k - 1) * d + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-n // s)
            total = max(0, (o - 1) * s + ek - n)
            small, big = total // 2, total - total // 2
            b, e = (small, big) if auto_pad == "SAME_UPPER" else (big, small)
        elif auto_pad == "VALID":
            b = e = 0
            o = (n - ek) // s + 1
        else:
            b, e = pads[i], pads[i + nd]
            o = (n + b + e - ek) // s + 1
        pb.append(b)
        pe.append(e)
        out.append(o)
    return pb, pe, out


def qlinearconv_ref(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias=None, *,
                    strides=None, pads=None, dilations=None, group=1, auto_pad="NOTSET") -> np.ndarray:
    """Exact QLinearConv per the numerics contract. x: N,C,spatial...; w: M,C/group,kernel...
    Accumulation in int64 (asserted to fit int32), requantization in float32."""
    x = np.asarray(x)
    w = np.asarray(w)
    nd = x.ndim - 2
    assert nd in (1, 2), "reference handles 1-D and 2-D convolutions"
    strides = list(strides or [1] * nd)
    dilations = list(dilations or [1] * nd)
    pads = list(pads or [0] * (2 * nd))
    ydt = np.asarray(y_zp).dtype
    pb, pe, out = conv_geometry(x.shape[2:], w.shape[2:], strides, dilations, pads, auto_pad)
    if nd == 1:  # treat as 2-D with height 1
        x = x[:, :, None, :]
        w = w[:, :, None, :]
        strides, dilations = [1] + strides, [1] + dilations
        pb, pe, out = [0] + pb, [0] + pe, [1] + out
    N, C, H, W = x.shape
    M, Cg, KH, KW = w.shape
    assert C == Cg * group and M % group == 0, "bad group"
    OH, OW = out
    assert OH > 0 and OW > 0
    xz = x.astype(np.int64) - int(np.asarray(x_zp).reshape(()))
    xp = np.zeros((N, C, H + pb[0] + pe[0], W + pb[1] + pe[1]), dtype=np.int64)
    xp[:, :, pb[0]:pb[0] + H, pb[1]:pb[1] + W] = xz
    wzp = np.asarray(w_zp).astype(np.int64).reshape(-1)
    wz = w.astype(np.int64) - (wzp.reshape(-1, 1, 1, 1) if wzp.size > 1 else wzp[0])
    Mg = M // group
    acc = np.zeros((N, M, OH, OW), dtype=np.int64)
    sh, sw = strides
    dh, dw = dilations
    for kh in range(KH):
        for kw in range(KW):
            h0, w0 = kh * dh, kw * dw
            patch = xp[:, :, h0:h0 + (OH - 1) * sh + 1:sh, w0:w0 + (OW - 1) * sw + 1:sw]  # N,C,OH,OW
            for g in range(group):
                pg = patch[:, g * Cg:(g + 1) * Cg]
                wg = wz[g * Mg:(g + 1) * Mg, :, kh, kw]  # Mg,Cg
                acc[:, g * Mg:(g + 1) * Mg] += np.einsum("nchw,mc->nmhw", pg, wg)
    if bias is not None:
        acc += np.asarray(bias).astype(np.int64).reshape(1, M, 1, 1)
    assert acc.min() >= -2**31 and acc.max() < 2**31, "accumulator exceeds int32: pick smaller test data"
    xs = np.float32(np.asarray(x_scale, dtype=np.float32).reshape(()))
    ys = np.float32(np.asarray(y_scale, dtype=np.float32).reshape(()))
    ws = np.asarray(w_scale, dtype=np.float32).reshape(-1)
    ws = np.broadcast_to(ws, (M,))
    scale = np.divide(np.multiply(xs, ws, dtype=np.float32), ys, dtype=np.float32)  # float32 per channel
    v = np.multiply(acc.astype(np.float32), scale.reshape(1, M, 1, 1), dtype=np.float32)
    v = np.rint(v)  # round half to even, in float32
    lo, hi = qrange(ydt)
    q = np.clip(v, -2.0**40, 2.0**40).astype(np.int64) + int(np.asarray(y_zp).reshape(()))
    y = np.clip(q, lo, hi).astype(ydt)
    if nd == 1:
        y = y[:, :, 0, :]
    return y


# ---- model builders ------------------------------------------------------------------------------

def tensor(name: str, array) -> TensorProto:
    return numpy_helper.from_array(np.asarray(array), name)


def make_model(nodes, inputs, outputs, initializers, opset: int = 13, ir_version: int = 8,
               name: str = "q8rt_test") -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="q8rt-tests")
    model.ir_version = ir_version
    return model


@dataclasses.dataclass
class ConvParams:
    """One QLinearConv layer: all constants plus attributes."""
    w: np.ndarray
    w_scale: np.ndarray
    w_zp: np.ndarray
    x_scale: np.float32
    x_zp: np.ndarray  # 0-d, activation dtype
    y_scale: np.float32
    y_zp: np.ndarray  # 0-d, output dtype
    bias: Optional[np.ndarray] = None
    strides: Optional[List[int]] = None
    pads: Optional[List[int]] = None
    dilations: Optional[List[int]] = None
    group: int = 1
    auto_pad: str = "NOTSET"

    def attrs(self) -> dict:
        a = {}
        if self.strides is not None:
            a["strides"] = list(self.strides)
        if self.pads is not None and self.auto_pad == "NOTSET":
            a["pads"] = list(self.pads)
        if self.dilations is not None:
            a["dilations"] = list(self.dilations)
        if self.group != 1:
            a["group"] = self.group
        if self.auto_pad != "NOTSET":
            a["auto_pad"] = self.auto_pad
        a["kernel_shape"] = list(self.w.shape[2:])
        return a

    def reference(self, x: np.ndarray) -> np.ndarray:
        return qlinearconv_ref(x, self.x_scale, self.x_zp, self.w, self.w_scale, self.w_zp,
                               self.y_scale, self.y_zp, self.bias, strides=self.strides, pads=self.pads,
                               dilations=self.dilations, group=self.group, auto_pad=self.auto_pad)


def qlinearconv_node(p: ConvParams, x_name: str, y_name: str, prefix: str, node_name: str):
    """Returns (node, initializers)."""
    inits = [
        tensor(f"{prefix}x_scale", np.asarray(p.x_scale, dtype=np.float32)),
        tensor(f"{prefix}x_zero_point", p.x_zp),
        tensor(f"{prefix}w", p.w),
        tensor(f"{prefix}w_scale", p.w_scale.astype(np.float32)),
        tensor(f"{prefix}w_zero_point", p.w_zp),
        tensor(f"{prefix}y_scale", np.asarray(p.y_scale, dtype=np.float32)),
        tensor(f"{prefix}y_zero_point", p.y_zp),
    ]
    ins = [x_name, f"{prefix}x_scale", f"{prefix}x_zero_point", f"{prefix}w", f"{prefix}w_scale",
           f"{prefix}w_zero_point", f"{prefix}y_scale", f"{prefix}y_zero_point"]
    if p.bias is not None:
        inits.append(tensor(f"{prefix}B", p.bias.astype(np.int32)))
        ins.append(f"{prefix}B")
    node = helper.make_node("QLinearConv", ins, [y_name], name=node_name, **p.attrs())
    return node, inits


def conv_chain_model(layers: Sequence[ConvParams], x_shape: Sequence[int], x_dtype,
                     quantize_input: Optional[tuple] = None, dequantize_output: Optional[tuple] = None,
                     opset: int = 13) -> onnx.ModelProto:
    """x (float32 if quantize_input else x_dtype) -> [QuantizeLinear] -> QLinearConv* -> [DequantizeLinear] -> y.
    quantize_input / dequantize_output: (scale, zero_point) pairs (zero point as a 0-d numpy array)."""
    nodes, inits = [], []
    cur = "x"
    if quantize_input is not None:
        s, zp = quantize_input
        inits += [tensor("in_scale", np.asarray(s, dtype=np.float32)), tensor("in_zero_point", zp)]
        nodes.append(helper.make_node("QuantizeLinear", ["x", "in_scale", "in_zero_point"], ["xq"],
                                      name="quantize_in"))
        cur = "xq"
        in_type = TensorProto.FLOAT
    else:
        in_type = NP_TO_ONNX[np.dtype(x_dtype)]
    for i, p in enumerate(layers):
        last = i == len(layers) - 1 and dequantize_output is None
        out = "y" if last else f"t{i}"
        node, ii = qlinearconv_node(p, cur, out, f"conv{i}_", f"conv{i}")
        nodes.append(node)
        inits += ii
        cur = out
    if dequantize_output is not None:
        s, zp = dequantize_output
        inits += [tensor("out_scale", np.asarray(s, dtype=np.float32)), tensor("out_zero_point", zp)]
        nodes.append(helper.make_node("DequantizeLinear", [cur, "out_scale", "out_zero_point"], ["y"],
                                      name="dequantize_out"))
        out_type = TensorProto.FLOAT
    else:
        out_type = NP_TO_ONNX[np.dtype(layers[-1].y_zp.dtype)]
    inputs = [helper.make_tensor_value_info("x", in_type, list(x_shape))]
    outputs = [helper.make_tensor_value_info("y", out_type, None)]
    return make_model(nodes, inputs, outputs, inits, opset=opset)


def conv_chain_reference(layers: Sequence[ConvParams], x: np.ndarray, quantize_input=None,
                         dequantize_output=None) -> np.ndarray:
    cur = x
    if quantize_input is not None:
        s, zp = quantize_input
        cur = quantize_ref(cur, s, zp, np.asarray(zp).dtype)
    for p in layers:
        cur = p.reference(cur)
    if dequantize_output is not None:
        s, zp = dequantize_output
        cur = dequantize_ref(cur, s, zp)
    return cur


# ---- ONNX Runtime --------------------------------------------------------------------------------

class OrtRefused(Exception):
    pass


def run_ort(model: onnx.ModelProto | bytes, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
    """Runs in ONNX Runtime on the CPU with one intra-op thread. Raises OrtRefused if ORT cannot
    create a session for the model (e.g. a type combination it has no kernel for) or fails to run it."""
    import onnxruntime as ort
    data = model if isinstance(model, bytes) else model.SerializeToString()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    try:
        sess = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        return sess.run(None, feeds)
    except Exception as e:  # onnxruntime raises several exception types
        raise OrtRefused(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e


# ---- random data ---------------------------------------------------------------------------------

def rand_int(rng: np.random.Generator, shape, dtype, lo=None, hi=None) -> np.ndarray:
    qlo, qhi = qrange(dtype)
    lo = qlo if lo is None else lo
    hi = qhi if hi is None else hi
    return rng.integers(lo, hi + 1, size=shape, dtype=np.int64).astype(dtype)


# ---- summary of parity / conformance results (written by conftest.py at session end) ------------

@dataclasses.dataclass
class ParityRecord:
    case: str
    combo: str
    q8rt: str = "not run"       # equal | differs | error | not run
    q8rt_detail: str = ""
    ort: str = "not run"        # equal | differs | refused | not run
    ort_mismatches: int = 0
    elements: int = 0
    ort_detail: str = ""


class Summary:
    def __init__(self) -> None:
        self.parity: Dict[str, ParityRecord] = {}
        self.conformance: Dict[str, tuple] = {}  # name -> (status, detail)

    def parity_record(self, case: str, combo: str) -> ParityRecord:
        rec = self.parity.get(case)
        if rec is None:
            rec = self.parity[case] = ParityRecord(case, combo)
        return rec

    def render(self) -> str:
        import onnxruntime
        lines = [f"q8rt parity / conformance summary (onnx {onnx.__version__}, onnxruntime "
                 f"{onnxruntime.__version__}, numpy {np.__version__}, q8rt-run {runner_path()})", ""]
        recs = list(self.parity.values())
        if recs:
            by = lambda attr, v: [r for r in recs if getattr(r, attr) == v]  # noqa: E731
            lines.append(f"parity cases: {len(recs)}")
            lines.append(f"  q8rt vs exact reference: equal {len(by('q8rt', 'equal'))}, "
                         f"differ {len(by('q8rt', 'differs'))}, q8rt-run failed {len(by('q8rt', 'error'))}, "
                         f"not run {len(by('q8rt', 'not run'))}")
            diff = by("ort", "differs")
            lines.append(f"  ORT vs exact reference: equal {len(by('ort', 'equal'))}, "
                         f"differ {len(diff)} (elements {sum(r.ort_mismatches for r in diff)} of "
                         f"{sum(r.elements for r in diff)}), ORT refused {len(by('ort', 'refused'))}")
            combos = sorted({r.combo for r in recs})
            for c in combos:
                rc = [r for r in recs if r.combo == c]
                lines.append(f"    {c}: {len(rc)} cases; ORT equal {sum(r.ort == 'equal' for r in rc)}, "
                             f"differs {sum(r.ort == 'differs' for r in rc)} "
                             f"({sum(r.ort_mismatches for r in rc if r.ort == 'differs')} elements), "
                             f"refused {sum(r.ort == 'refused' for r in rc)}; "
                             f"q8rt equal {sum(r.q8rt == 'equal' for r in rc)}")
            if diff:
                lines.append("  cases where ORT differs from the exact reference (not a q8rt failure):")
                for r in diff:
                    lines.append(f"    {r.case}: {r.ort_mismatches} of {r.elements} elements {r.ort_detail}")
            refused = by("ort", "refused")
            if refused:
                reasons = sorted({r.ort_detail for r in refused})
                lines.append(f"  ORT refused (compared with the exact reference only): "
                             f"{', '.join(r.case for r in refused)}")
                for reason in reasons:
                    lines.append(f"    reason: {reason}")
            bad = [r for r in recs if r.q8rt in ("differs", "error")]
            if bad:
                lines.append("  q8rt FAILURES:")
                for r in bad:
                    lines.append(f"    {r.case}: {r.q8rt}: {r.q8rt_detail}")
            lines.append("")
        if self.conformance:
            st = [s for s, _ in self.conformance.values()]
            lines.append(f"ONNX backend node tests: {len(st)}; passed {st.count('passed')}, "
                         f"failed {st.count('failed')}, out of scope (refused as required) "
                         f"{st.count('out of scope')}")
            for name, (s, detail) in sorted(self.conformance.items()):
                lines.append(f"    {name}: {s}{(': ' + detail) if detail else ''}")
        return "\n".join(lines) + "\n"


SUMMARY = Summary()
