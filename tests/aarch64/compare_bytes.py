"""Same bytes on aarch64 as on x86-64: every parity model (tests/python/gen_parity_models.py) and
every real model under build/models runs in the x86 q8rt-run and in the aarch64 one under
qemu-aarch64, and each output file must be identical byte for byte.

The emulated CPU rotates over cortex-a53 (NEON only), cortex-a76 (dot product) and max (i8mm), one
per model, so every ARM kernel variant meets real data while the emulated time stays bounded.
Two runs go at a time (the machine has 2 cores).

usage: compare_bytes.py X86_RUN ARM_RUN SYSROOT_LIBDIRS [--models DIR] [--quick] [--full]
  ARM_RUN          the aarch64 q8rt-run; run as qemu-aarch64 -cpu CPU -L /usr/aarch64-linux-gnu
                   -E LD_LIBRARY_PATH=SYSROOT_LIBDIRS ARM_RUN ...
Prints one line per model and closes with 'N passed, N failed'; exit status 1 on any failure.
"""

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from gen_parity_models import build, cases  # noqa: E402

CPUS = ("cortex-a53", "cortex-a76", "max")


def graph_inputs(model_path: Path):
    g = onnx.load(str(model_path), load_external_data=False).graph
    init = {i.name for i in g.initializer}
    return [i.name for i in g.input if i.name not in init]


def math_models(d: Path):
    """Float ops whose formulas use exp/log/log1p/erf/tanh (q8rt's own src/common/fmath.c, where libm
    differs between x86-64 and aarch64), on a float input spanning every magnitude, and the same ops
    as 8-bit islands (DequantizeLinear -> op -> QuantizeLinear, which q8rt turns into tables at load)."""
    from onnx import TensorProto, helper

    rng = np.random.default_rng(20261123)
    bits = rng.integers(0, 2**32, 30000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([np.linspace(-12, 12, 24001, dtype=np.float32), bits[np.isfinite(bits)],
                        np.array([0.0, -0.0, np.inf, -np.inf, 1e-30, -1e-30, 88.7, -103.9], np.float32)])
    ops = [("Exp", {}), ("Log", {}), ("Erf", {}), ("Gelu", {}), ("Gelu", {"approximate": "tanh"}),
           ("Softplus", {}), ("Elu", {"alpha": 0.7}), ("Selu", {}), ("Tanh", {}), ("Sigmoid", {})]
    nodes, outs = [], []
    for i, (op, attrs) in enumerate(ops):
        nodes.append(helper.make_node(op, ["x"], [f"y{i}"], **attrs))
        outs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [len(x)]))
    g = helper.make_graph(nodes, "math_float", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(x)])], outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    (d / "math_float").mkdir(parents=True)
    onnx.save(m, str(d / "math_float" / "model.onnx"))
    np.save(d / "math_float" / "x.npy", x)
    jobs = [("math/float", d / "math_float" / "model.onnx", {"x": d / "math_float" / "x.npy"})]

    init = [helper.make_tensor("s", TensorProto.FLOAT, [], [0.05]), helper.make_tensor("z", TensorProto.UINT8, [], [128]),
            helper.make_tensor("so", TensorProto.FLOAT, [], [0.02]), helper.make_tensor("zo", TensorProto.UINT8, [], [100])]
    nodes, outs = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["f"])], []
    for i, (op, attrs) in enumerate(ops):
        nodes.append(helper.make_node(op, ["f"], [f"t{i}"], **attrs))
        nodes.append(helper.make_node("QuantizeLinear", [f"t{i}", "so", "zo"], [f"y{i}"]))
        outs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.UINT8, [256]))
    g = helper.make_graph(nodes, "math_table", [helper.make_tensor_value_info("q", TensorProto.UINT8, [256])], outs,
                          initializer=init)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    (d / "math_table").mkdir(parents=True)
    onnx.save(m, str(d / "math_table" / "model.onnx"))
    np.save(d / "math_table" / "q.npy", np.arange(256, dtype=np.uint8))
    jobs.append(("math/table", d / "math_table" / "model.onnx", {"q": d / "math_table" / "q.npy"}))
    return jobs


def run(cmd, out_dir: Path, timeout: float):
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    p = subprocess.run(cmd + ["--output-dir", str(out_dir)], capture_output=True, text=True, timeout=timeout,
                       errors="replace")
    return p.returncode, p.stderr.strip().splitlines()[-1:] if p.stderr.strip() else [], time.monotonic() - t0


def same_outputs(a: Path, b: Path):
    fa = sorted(p.name for p in a.glob("*.npy"))
    fb = sorted(p.name for p in b.glob("*.npy"))
    if fa != fb:
        return False, f"output files differ: {fa} vs {fb}"
    if not fa:
        return False, "no outputs"
    notes = []
    for name in fa:
        ba, bb = (a / name).read_bytes(), (b / name).read_bytes()
        if ba == bb:
            continue
        xa, xb = np.load(a / name), np.load(b / name)
        if xa.dtype == xb.dtype and xa.shape == xb.shape and xa.dtype.kind == "f":
            # NaN payload/sign bits differ between the architectures' float units (e.g. -inf * 0):
            # the same values otherwise are equal for this comparison, and said so.
            na, nb = np.isnan(xa), np.isnan(xb)
            if np.array_equal(na, nb) and np.array_equal(xa[~na].view(np.uint8), xb[~nb].view(np.uint8)):
                notes.append(f"{name}: NaN bits differ only")
                continue
        diff = int(np.count_nonzero(xa != xb)) if xa.shape == xb.shape else -1
        return False, f"{name}: {diff} of {xa.size} values differ"
    return True, "; ".join(notes)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("x86_run")
    ap.add_argument("arm_run")
    ap.add_argument("libdirs")
    ap.add_argument("--models", default=str(HERE.parents[1] / "build" / "models"))
    ap.add_argument("--quick", action="store_true", help="parity models only")
    ap.add_argument("--full", action="store_true", help="also the dynamic det/rec models (~10 min more)")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="q8rt-aarch64-"))
    jobs = []  # (label, model path, {input: npy path})
    try:
        for c in cases():
            b = build(c)
            d = tmp / "parity" / c.name
            d.mkdir(parents=True)
            onnx.save(b.model, str(d / "model.onnx"))
            np.save(d / "x.npy", b.x)
            jobs.append((f"parity/{c.name}", d / "model.onnx", {"x": d / "x.npy"}))
        jobs += math_models(tmp / "math")
        models = Path(args.models)
        if not args.quick and models.is_dir():
            for m in sorted(models.glob("*/*.onnx")):
                if m.stem == "float13":  # the float network again at opset 13 (skipped as in test_models.py)
                    continue
                if not args.full and m.parent.name != "cls" and m.stem.startswith("dyn_"):
                    # ConvInteger/MatMulInteger run portable C under emulation (~1-3 min each for det/rec);
                    # the classifier's dynamic models cover the same code paths. The float det/rec
                    # models stay (float Conv on the NEON f32-gemm: ~7-10 s each under qemu).
                    continue
                inp = m.parent / "input.npy"
                if not inp.exists():
                    continue
                names = graph_inputs(m)
                if len(names) != 1:
                    continue
                jobs.append((f"{m.parent.name}/{m.stem}", m, {names[0]: inp}))

        def one(i_job):
            i, (label, model, inputs) = i_job
            cpu = CPUS[i % len(CPUS)]
            feed = []
            for k, v in inputs.items():
                feed += ["--input", f"{k}={v}"]
            work = tmp / "out" / str(i)
            rx, ex, _ = run([args.x86_run, str(model)] + feed, work / "x86", 120)
            emu = ["qemu-aarch64", "-cpu", cpu, "-L", "/usr/aarch64-linux-gnu", "-E", f"LD_LIBRARY_PATH={args.libdirs}"]
            ra, ea, t = run(emu + [args.arm_run, str(model)] + feed, work / "arm", 600)
            if rx != 0 or ra != 0:
                # a model refused on both sides with the same status is consistent, not a difference
                ok = rx == ra and rx != 0
                msg = f"x86 status {rx} {ex}, aarch64 status {ra} {ea}"
            else:
                ok, msg = same_outputs(work / "x86", work / "arm")
            shutil.rmtree(work, ignore_errors=True)
            return label, cpu, ok, msg, t

        passed = failed = 0
        # --explain under each emulated CPU must name the kernel chosen for its instruction set
        # (u8s8_mobilenet-style chain: a pointwise GEMM and a depthwise conv).
        chain = next((j for j in jobs if j[0] == "parity/chain_u8s8_mobilenet_block"), None)
        expect = {"cortex-a53": ("qc8w_gemm_minmax_fp32_ukernel_4x8c4__neon", "dwconv_minmax_fp32_ukernel_16c__neon"),
                  "cortex-a76": ("qc8w_gemm_minmax_fp32_ukernel_8x8c4__neondot", "dwconv_minmax_fp32_ukernel_16c__neon"),
                  "max": ("qc8w_gemm_minmax_fp32_ukernel_8x8c4__neoni8mm", "dwconv_minmax_fp32_ukernel_16c__neon")}
        for cpu, kernels in expect.items():
            ok = False
            if chain is not None:
                emu = ["qemu-aarch64", "-cpu", cpu, "-L", "/usr/aarch64-linux-gnu", "-E",
                       f"LD_LIBRARY_PATH={args.libdirs}"]
                p = subprocess.run(emu + [args.arm_run, str(chain[1]), "--explain"], capture_output=True, text=True,
                                   timeout=300, errors="replace")
                ok = p.returncode == 0 and all(k in p.stdout + p.stderr for k in kernels)
            passed, failed = passed + ok, failed + (not ok)
            print(f"{'ok  ' if ok else 'FAIL'}  --explain under -cpu {cpu}: {', '.join(kernels)}", flush=True)
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
            for label, cpu, ok, msg, t in ex.map(one, enumerate(jobs)):
                if ok:
                    passed += 1
                else:
                    failed += 1
                if not ok or msg or not label.startswith("parity/"):
                    print(f"{'same' if ok else 'DIFF'}  {label:40s} {cpu:11s} {t:6.1f} s  {msg}", flush=True)
        print(f"aarch64 vs x86-64 bytes: {len(jobs)} models, {time.monotonic() - t0:.0f} s")
        print(f"{passed} passed, {failed} failed")
        return 1 if failed else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
