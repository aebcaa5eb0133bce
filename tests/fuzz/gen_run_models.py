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


def bind_time_models():
    """Inputs whose values q8rt takes when shapes are bound (a Shape chain), with every graph input
    symbolic, so the fuzzer's dims decide them: OneHot's depth, Resize's sizes, Slice's ends and
    steps; and ScatterElements with its reductions over fuzzed indices (out of range, repeated)."""
    from onnx import TensorProto, helper, numpy_helper
    import numpy as np

    def t(name, v):
        return numpy_helper.from_array(np.asarray(v), name)

    def vi(name, ty, dims):
        return helper.make_tensor_value_info(name, ty, dims)

    def model(nodes, inputs, inits, opset):
        g = helper.make_graph(nodes, "g", inputs, [helper.make_empty_tensor_value_info("y")], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        return m

    F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
    shape = helper.make_node("Shape", ["ref"], ["rs"], name="shape")
    ref = vi("ref", F, ["r0", "r1"])
    yield "onehot_depth", model(
        [shape, helper.make_node("Gather", ["rs", "one"], ["d"], name="gather", axis=0),
         helper.make_node("OneHot", ["x", "d", "v"], ["y"], name="onehot", axis=-2)],
        [vi("x", I64, ["a", "b"]), ref],
        [t("one", np.array(1, np.int64)), t("v", np.array([-1.5, 2.0], np.float32))], 11)
    for mode in ("nearest", "linear", "cubic"):
        yield f"resize_sizes_{mode}", model(
            [shape, helper.make_node("Shape", ["x"], ["xs"], name="shape_x"),
             helper.make_node("Slice", ["xs", "s0", "s2"], ["nc"], name="slice_nc"),
             helper.make_node("Concat", ["nc", "rs"], ["sz"], name="concat", axis=0),
             helper.make_node("Resize", ["x", "", "", "sz"], ["y"], name="resize", mode=mode)],
            [vi("x", F, ["n", "c", "h", "w"]), ref],
            [t("s0", np.array([0], np.int64)), t("s2", np.array([2], np.int64))], 13)
    yield "slice_ends_steps", model(
        [shape, helper.make_node("Min", ["rs", "three"], ["e"], name="min"),
         helper.make_node("Sub", ["rs", "two"], ["st"], name="sub"),
         helper.make_node("Slice", ["x", "z", "e", "ax", "st"], ["y"], name="slice")],
        [vi("x", F, ["a", "b"]), ref],
        [t("three", np.array([3, 3], np.int64)), t("two", np.array([2, 2], np.int64)),
         t("z", np.array([-1, 0], np.int64)), t("ax", np.array([0, -1], np.int64))], 13)
    # Loop (src/ops/loop.c): trip counts and limits from the fuzzer's dims (bind-time values), so
    # they reach the fuzz targets' iteration cap; carried values of fuzzed shapes; a scan output
    # (M known at bind); a body bound again each iteration (a Slice by a carried counter, SLANet's
    # form); a Loop in a Loop (their iterations count for the outer one's cap).
    B = TensorProto.BOOL
    def body(nodes, ins, outs, inits=()):
        return helper.make_graph(nodes, "body", ins, outs, list(inits))
    gather = [helper.make_node("Gather", ["rs", "zero"], ["r0v"], name="gather_r0", axis=0),
              helper.make_node("Gather", ["rs", "one"], ["r1v"], name="gather_r1", axis=0)]
    bin_ = [vi("i", I64, []), vi("c_in", B, [])]
    cond = helper.make_node("Identity", ["c_in"], ["c_out"], name="b_cond")
    idx = [t("zero", np.array(0, np.int64)), t("one", np.array(1, np.int64))]
    acc = body([cond, helper.make_node("Add", ["x_in", "w"], ["x_out"], name="b_add"),
                helper.make_node("Mul", ["x_out", "x_out"], ["s_out"], name="b_scan")],
               bin_ + [vi("x_in", F, None)], [vi("c_out", B, []), vi("x_out", F, None), vi("s_out", F, None)])
    yield "loop_scan", model(
        [shape] + gather + [helper.make_node("Loop", ["r0v", "", "x"], ["yl", "s"], name="loop", body=acc),
                            helper.make_node("ReduceSum", ["s"], ["ss"], name="scan_sum", keepdims=0),
                            helper.make_node("Add", ["yl", "ss"], ["y"], name="add_scan")],
        [vi("x", F, ["a", "b"]), vi("w", F, ["a", "b"]), ref], idx, 16)
    stop = body([helper.make_node("Add", ["k_in", "one"], ["k_out"], name="b_inc"),
                 helper.make_node("Less", ["k_out", "r0v"], ["c_out"], name="b_less"),
                 helper.make_node("Unsqueeze", ["k_out", "zero1"], ["k1"], name="b_unsq"),
                 helper.make_node("Slice", ["x", "zero1", "k1", "zero1"], ["sl"], name="b_slice"),
                 helper.make_node("ReduceSum", ["sl"], ["rsum"], name="b_sum", keepdims=0),
                 helper.make_node("Add", ["a_in", "rsum"], ["a_out"], name="b_acc")],
                bin_ + [vi("k_in", I64, []), vi("a_in", F, None)],
                [vi("c_out", B, []), vi("k_out", I64, []), vi("a_out", F, None)],
                [t("zero1", np.array([0], np.int64))])
    yield "loop_cond_slice", model(
        [shape] + gather + [helper.make_node("Loop", ["", "c0", "k0", "a0"], ["yk", "y"], name="loop", body=stop)],
        [vi("x", F, ["n", "m"]), vi("a0", F, ["m"]), ref],
        idx + [t("c0", np.array(True)), t("k0", np.array(0, np.int64))], 13)
    inner = helper.make_node(
        "Loop", ["r1v", "", "x_in"], ["x_out"], name="inner",
        body=body([helper.make_node("Identity", ["ic_in"], ["ic_out"], name="i_cond"),
                   helper.make_node("Add", ["ix_in", "w"], ["ix_out"], name="i_add")],
                  [vi("ii", I64, []), vi("ic_in", B, []), vi("ix_in", F, None)],
                  [vi("ic_out", B, []), vi("ix_out", F, None)]))
    outer = body([helper.make_node("Identity", ["c_in"], ["c_out"], name="o_cond"), inner],
                 bin_ + [vi("x_in", F, None)], [vi("c_out", B, []), vi("x_out", F, None)])
    yield "loop_nested", model(
        [shape] + gather + [helper.make_node("Loop", ["r0v", "", "x"], ["y"], name="outer", body=outer)],
        [vi("x", F, ["a", "b"]), vi("w", F, ["a", "b"]), ref], idx, 16)
    # Scan (src/ops/scan.c): scan inputs on different axes and directions whose lengths come from
    # the fuzzer's dims (equal or not), a state of a fuzzed shape, a reverse scan output on the last
    # axis; and a Scan in a Loop's body (its iterations count for the Loop's cap).
    sbody = body([helper.make_node("Add", ["s_in", "xa"], ["s_out"], name="b_add"),
                  helper.make_node("Mul", ["s_out", "xb"], ["v"], name="b_mul")],
                 [vi("s_in", F, None), vi("xa", F, None), vi("xb", F, None)], [vi("s_out", F, None), vi("v", F, None)])
    yield "scan_axes", model(
        [helper.make_node("Scan", ["s0", "x", "x2"], ["sf", "y"], name="scan", body=sbody, num_scan_inputs=2,
                          scan_input_axes=[1, 0], scan_input_directions=[1, 0], scan_output_axes=[-1],
                          scan_output_directions=[1])],
        [vi("s0", F, ["a"]), vi("x", F, ["a", "b"]), vi("x2", F, ["b", "a"])], [], 16)
    ibody = body([helper.make_node("Add", ["s_in", "xa"], ["s_out"], name="i_add"),
                  helper.make_node("Identity", ["s_out"], ["v"], name="i_v")],
                 [vi("s_in", F, None), vi("xa", F, None)], [vi("s_out", F, None), vi("v", F, None)])
    lscan = helper.make_node("Scan", ["x_in", "xs"], ["x_out", "sv"], name="inner_scan", body=ibody,
                             num_scan_inputs=1)
    yield "scan_in_loop", model(
        [shape] + gather + [helper.make_node("Loop", ["r0v", "", "x"], ["y"], name="outer", body=body(
            [helper.make_node("Identity", ["c_in"], ["c_out"], name="o_cond"), lscan],
            bin_ + [vi("x_in", F, None)], [vi("c_out", B, []), vi("x_out", F, None)]))],
        [vi("x", F, ["b"]), vi("xs", F, ["a", "b"]), ref], idx, 16)
    # QDQ MatMul with a per-column weight (src/passes/qdq_fuse.c: QLinearMatMul with one b_scale /
    # b_zero_point per column): u8 x s8, u8 x u8 with zero points, s8 x s8; K fixed (the weight's),
    # the fuzzer's rows and batch; N = 40 (a 32-wide block and 8 channels of the next)
    K, N = 16, 40
    for name, at, wt, azp, wzp in (("u8s8", np.uint8, np.int8, 131, 0), ("u8u8", np.uint8, np.uint8, 3, 128),
                                   ("s8s8", np.int8, np.int8, -7, 0)):
        r = np.random.default_rng(len(name) + azp + 128)
        ws = (0.002 * 2.0 ** -r.integers(0, 4, size=N)).astype(np.float32)
        lo, hi = (-128, 128) if wt == np.int8 else (0, 256)
        ty = TensorProto.UINT8 if at == np.uint8 else TensorProto.INT8
        yield f"qdq_matmul_per_column_{name}", model(
            [helper.make_node("DequantizeLinear", ["a", "a_s", "a_zp"], ["a_f"], name="dq_a"),
             helper.make_node("DequantizeLinear", ["w_q", "w_s", "w_zp"], ["w_f"], name="dq_w", axis=1),
             helper.make_node("MatMul", ["a_f", "w_f"], ["m"], name="matmul"),
             helper.make_node("QuantizeLinear", ["m", "y_s", "y_zp"], ["y"], name="q_y")],
            [vi("a", ty, ["b", "m", K])],
            [t("a_s", np.array(0.02, np.float32)), t("a_zp", np.array(azp, at)),
             t("w_q", r.integers(lo, hi, size=(K, N)).astype(wt)), t("w_s", ws),
             t("w_zp", (wzp + r.integers(-3, 4, size=N) * (wt == np.uint8)).astype(wt)),
             t("y_s", np.array(0.05, np.float32)), t("y_zp", np.array(azp // 2, at))], 13)
    for red, opset, ity in (("none", 13, I32), ("add", 16, I64), ("max", 18, I64)):
        yield f"scatter_{red}", model(
            [helper.make_node("ScatterElements", ["data", "i", "u"], ["y"], name="scatter", axis=1, reduction=red)],
            [vi("data", F, ["a", "b", "c"]), vi("i", ity, ["d", "e", "f"]), vi("u", F, ["d", "e", "f"])], [], opset)


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
    for name, model in bind_time_models():
        p = out / f"bind_{name}.onnx"
        p.write_bytes(model.SerializeToString())
        paths.append(p)
    lines = sorted(str(p.resolve()) for p in paths)
    (out / "list.txt").write_text("\n".join(lines) + "\n")
    print(f"gen_run_models: {len(lines)} models in {out / 'list.txt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
