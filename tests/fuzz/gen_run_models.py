"""Models for the run-path fuzz target (fuzz_run.c): valid models q8rt runs, in two forms.

    build/venv/bin/python tests/fuzz/gen_run_models.py OUT_DIR

For every ONNX node test the conformance lists (tests/python/conformance/*.txt) run — so every
op q8rt claims, including ops added later — it writes OUT_DIR/<test>.onnx (frozen like the
conformance test does) and OUT_DIR/<test>.sym.onnx, where every dimension of every graph input
is symbolic and the shapes of outputs and value_info are dropped: the fuzzer then binds shapes
of its choosing. The QLinearConv parity cases (gen_parity_models.py) and the real PP-OCR models
(build/models/{cls,det,rec}) get a .sym variant only if they are not symbolic already.
OUT_DIR/list.txt lists every model to use, one absolute path a line, sorted: the fuzz input's
first bytes index it, so the order is part of what a kept regression input means.
"""

import glob
import os
import sys
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))
from test_conformance import freeze, load_tensor_proto  # noqa: E402
from test_conformance_ops import CASES, NODE_DIR  # noqa: E402

MAX_BYTES = 4 << 20


def symbolic(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    init = {t.name for t in m.graph.initializer}
    k = 0
    for vi in m.graph.input:
        if vi.name in init or not vi.type.HasField("tensor_type"):
            continue
        for d in vi.type.tensor_type.shape.dim:
            d.Clear()
            d.dim_param = f"fz{k}"
            k += 1
    for vi in m.graph.output:
        if vi.type.HasField("tensor_type"):
            vi.type.tensor_type.ClearField("shape")
    del m.graph.value_info[:]
    return m


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build" / "fuzz" / "run-models")
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, mode, _reason, _family in CASES:
        if mode == "refused":
            continue
        d = NODE_DIR / name
        model = onnx.load(str(d / "model.onnx"))
        if mode == "frozen":
            ds = sorted(glob.glob(str(d / "test_data_set_*")))[0]
            n_in = len(glob.glob(os.path.join(ds, "input_*.pb")))
            model = freeze(model, [load_tensor_proto(Path(ds) / f"input_{i}.pb") for i in range(n_in)])
        for suffix, m in ((".onnx", model), (".sym.onnx", symbolic(model))):
            p = out / f"{name}{suffix}"
            p.write_bytes(m.SerializeToString())
            paths.append(p)
    others = sorted(glob.glob(str(ROOT / "build" / "test-models" / "parity" / "*" / "model.onnx")))
    for d in ("cls", "det", "rec"):
        others += sorted(glob.glob(str(ROOT / "build" / "models" / d / "*.onnx")))
    for f in others:
        f = Path(f)
        if f.stat().st_size > MAX_BYTES or f.name.endswith(".sym.onnx"):
            continue
        paths.append(f.resolve())
        model = onnx.load(str(f), load_external_data=False)
        static = all(d.HasField("dim_value") for vi in model.graph.input
                     for d in vi.type.tensor_type.shape.dim)
        if static:
            tag = f.parent.name if f.name == "model.onnx" else f"{f.parent.name}_{f.stem}"
            p = out / f"{tag}.sym.onnx"
            p.write_bytes(symbolic(model).SerializeToString())
            paths.append(p)
    lines = sorted(str(p.resolve()) for p in paths)
    (out / "list.txt").write_text("\n".join(lines) + "\n")
    print(f"gen_run_models: {len(lines)} models in {out / 'list.txt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
