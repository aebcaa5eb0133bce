"""The Focus prelude of YOLO-style detectors (Slice rows/columns -> QuantizeLinear per block offset ->
Concat or a copying QLinearConcat) runs as one QuantizeSpaceToDepth step (src/passes/quantize_s2d_fuse.c,
src/ops/quantize_space_to_depth.c) that writes channels-last. Each graph here runs in q8rt (auto, the
reference backend that runs the graph as written, 3 threads) and in ONNX Runtime: byte-identical
outputs everywhere; --explain says whether the step was fused. Near misses (different quantizer
scales, a slice read elsewhere, a step of 3) stay unfused and exact. Hand-written QuantizeSpaceToDepth
nodes with bad attributes or shapes end in one error line naming the node."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h
from single_node import const, run_ort, save_input

END = np.iinfo(np.int64).max


def focus_model(shape, dt, order, kind="qlinear", scales=None, consumer="conv", step=2, extra_reader=False,
                b=2):
    """x -> Slice rows r::b -> Slice cols c::b -> QuantizeLinear per (r, c) in `order` -> concat."""
    n_, c_, hh, ww = shape
    nodes, inits = [], []
    inits += [const("ax_h", [2], np.int64), const("ax_w", [3], np.int64), const("end", [END], np.int64),
              const("step", [step], np.int64)]
    for r in range(b):
        inits.append(const(f"s{r}", [r], np.int64))
        nodes.append(helper.make_node("Slice", ["x", f"s{r}", "end", "ax_h", "step"], [f"rows{r}"], name=f"sr{r}"))
    scales = scales or [0.05] * len(order)
    zp = 7 if dt == np.uint8 else -3
    cat_in = []
    for k, (r, c) in enumerate(order):
        nodes.append(helper.make_node("Slice", [f"rows{r}", f"s{c}", "end", "ax_w", "step"], [f"blk{k}"],
                                      name=f"sc{k}"))
        inits += [const(f"qs{k}", np.float32(scales[k])), const(f"qz{k}", np.asarray(zp, dt))]
        nodes.append(helper.make_node("QuantizeLinear", [f"blk{k}", f"qs{k}", f"qz{k}"], [f"q{k}"], name=f"q{k}"))
        cat_in.append(f"q{k}")
    if kind == "qlinear":
        inits += [const("ys", np.float32(scales[0])), const("yz", np.asarray(zp, dt))]
        args = ["ys", "yz"]
        for k in range(len(order)):
            args += [f"q{k}", f"qs{k}", f"qz{k}"]
        nodes.append(helper.make_node("QLinearConcat", args, ["cat"], name="cat", domain="com.microsoft", axis=1))
    else:
        nodes.append(helper.make_node("Concat", cat_in, ["cat"], name="cat", axis=1))
    outs = []
    if consumer == "conv":
        rng = np.random.default_rng(5)
        cin = c_ * b * b
        inits += [const("w", rng.integers(-60, 61, (8, cin, 3, 3)).astype(np.int8)), const("ws", np.float32(0.01)),
                  const("wz", np.asarray(0, np.int8)), const("os", np.float32(0.2)), const("oz", np.asarray(zp, dt))]
        nodes.append(helper.make_node("QLinearConv", ["cat", "ys" if kind == "qlinear" else "qs0",
                                                      "yz" if kind == "qlinear" else "qz0", "w", "ws", "wz", "os", "oz"],
                                      ["y"], name="conv", pads=[1, 1, 1, 1]))
        outs.append("y")
    else:
        outs.append("cat")
    if extra_reader:
        outs.append("blk0")
    g = helper.make_graph(nodes, "focus", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [onnx.ValueInfoProto(name=o) for o in outs], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


FOCUS = [
    # (shape, type, block order (row, col), concat kind, consumer)
    ((1, 3, 16, 20), np.uint8, [(0, 0), (1, 0), (0, 1), (1, 1)], "qlinear", "conv"),   # YOLOX's order
    ((1, 3, 16, 20), np.int8, [(0, 0), (1, 0), (0, 1), (1, 1)], "concat", "conv"),
    ((2, 4, 10, 6), np.uint8, [(1, 1), (0, 0), (1, 0), (0, 1)], "concat", "none"),     # NCHW output: a layout change back
    ((1, 3, 200, 180), np.uint8, [(0, 0), (0, 1), (1, 0), (1, 1)], "qlinear", "conv"),  # several chunks per row, 3 threads
    ((1, 100, 6, 8), np.int8, [(0, 0), (1, 0), (0, 1), (1, 1)], "concat", "none"),     # 400 channels: 2 pixels a chunk
    # YOLOX's order (the x8-transpose route) with several chunks per row and a partial last one
    ((1, 3, 4, 1500), np.uint8, [(0, 0), (1, 0), (0, 1), (1, 1)], "qlinear", "conv"),
    ((2, 20, 6, 10), np.int8, [(0, 0), (1, 0), (0, 1), (1, 1)], "concat", "none"),     # 80 channels
]


def run_all(tmp_path, case, m, x):
    path = h.save_model(m, tmp_path / f"{case}.onnx")
    inp = {"x": save_input(tmp_path / f"{case}_x", x)}
    want = run_ort(m, {"x": x}, optimize=False)
    for extra in ([], ["--backend", "reference"], ["--threads", "3"]):
        res = h.run_q8rt(path, inp, tmp_path / f"{case}_out{len(extra)}", extra=extra).assert_ok()
        for o, w in zip(m.graph.output, want):
            h.assert_same_bytes(res.output(o.name), w, f"{case} {extra}: {o.name} vs ORT")
    return h.run_q8rt(path, inp, None, extra=["--explain"]).assert_ok().stdout


@pytest.mark.parametrize("case", FOCUS, ids=[f"{c[0]}-{np.dtype(c[1]).name}-{c[3]}-{c[4]}-{i}"
                                             for i, c in enumerate(FOCUS)])
def test_focus_fused(case, tmp_path):
    shape, dt, order, kind, consumer = case
    rng = np.random.default_rng(11)
    # values around the quantizer's range, its saturation both ways and exact .5 ties (x / 0.05)
    x = (rng.integers(-300, 300, shape) * 0.025).astype(np.float32)
    x.flat[:7] = [1e6, -1e6, 0.025, -0.075, 0.0, 6.375, -6.425]
    out = run_all(tmp_path, "focus", focus_model(shape, dt, order, kind, consumer=consumer), x)
    steps = [ln.split()[1] for ln in out.splitlines() if ln[:4].strip().isdigit()]
    assert steps[0] == "QuantizeSpaceToDepth", out
    assert "Slice" not in steps and "QuantizeLinear" not in steps and "QLinearConcat" not in steps, out
    if consumer == "conv":
        assert steps[1] == "QLinearConv", out  # reads the step's channels-last output: no layout change


@pytest.mark.parametrize("near", ["scales", "extra_reader", "step3"])
def test_focus_near_misses_stay_unfused(near, tmp_path):
    x = (np.random.default_rng(3).integers(-300, 300, (1, 3, 12, 12)) * 0.025).astype(np.float32)
    order = [(0, 0), (1, 0), (0, 1), (1, 1)]
    if near == "scales":
        m = focus_model(x.shape, np.uint8, order, "concat", scales=[0.05, 0.05, 0.04, 0.05], consumer="none")
    elif near == "extra_reader":
        m = focus_model(x.shape, np.uint8, order, "qlinear", extra_reader=True)
    else:
        m = focus_model(x.shape, np.uint8, [(0, 0), (1, 0), (0, 1), (1, 1)], "concat", consumer="none", step=3)
    out = run_all(tmp_path, near, m, x)
    assert "QuantizeSpaceToDepth" not in out, out


def s2d_node_model(shape, attrs, zp_dtype=np.uint8):
    node = helper.make_node("QuantizeSpaceToDepth", ["x", "s", "z"], ["y"], name="qs2d", domain="q8rt", **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [onnx.ValueInfoProto(name="y")],
                          [const("s", np.float32(0.1)), const("z", np.asarray(3, zp_dtype))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("q8rt", 1)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("bad", [
    ((1, 3, 8, 8), {"blocksize": 2, "blocks": [0, 1, 1, 3]}, "permutation"),
    ((1, 3, 8, 8), {"blocksize": 2, "blocks": [0, 1, 2]}, "blocks"),
    ((1, 3, 8, 8), {"blocksize": 0, "blocks": [0]}, "blocksize"),
    ((1, 3, 8, 8), {"blocksize": 9, "blocks": list(range(81))}, "blocksize"),
    ((1, 3, 9, 8), {"blocksize": 2, "blocks": [0, 1, 2, 3]}, "multiple"),
    ((1, 300, 8, 8), {"blocksize": 2, "blocks": [0, 1, 2, 3]}, "channels"),
    ((1, 3, 8), {"blocksize": 2, "blocks": [0, 1, 2, 3]}, "rank"),
], ids=["dup", "count", "zero", "big", "odd", "wide", "rank3"])
def test_quantize_space_to_depth_node_checked(bad, tmp_path):
    shape, attrs, word = bad
    path = h.save_model(s2d_node_model(shape, attrs), tmp_path / "b.onnx")
    x = np.zeros(shape, np.float32)
    res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / "x.npy", x)}, tmp_path / "o")
    msg = h.assert_clean_error(res, [word])
    assert "qs2d" in msg, msg


@pytest.mark.parametrize("blocks", [[4, 0, 8, 2, 6, 1, 3, 7, 5],    # b = 3, any permutation
                                    [0, 3, 6, 1, 4, 7, 2, 5, 8]])   # column-major: the transpose route
def test_quantize_space_to_depth_node_runs(blocks, tmp_path):
    """A hand-written node (the fused form) equals the slices it stands for, quantized with numpy."""
    rng = np.random.default_rng(2)
    x = (rng.integers(-100, 100, (2, 3, 6, 9)) * 0.05).astype(np.float32)
    path = h.save_model(s2d_node_model(x.shape, {"blocksize": 3, "blocks": blocks}, np.int8), tmp_path / "n.onnx")
    got = h.run_q8rt(path, {"x": h.save_npy(tmp_path / "x.npy", x)}, tmp_path / "o").assert_ok().output("y")
    parts = [h.quantize_ref(x[:, :, g // 3::3, g % 3::3], np.float32(0.1), np.int8(3), np.int8) for g in blocks]
    h.assert_same_bytes(got, np.concatenate(parts, axis=1), "QuantizeSpaceToDepth vs numpy")
