"""Models that import ai.onnx opsets 7, 8 and 9 (PyTorch 1.x exported opset 9 by default; old
TensorFlow and Keras converters 7 and 8): q8rt against ONNX Runtime (one thread, no graph
optimizations). What differs from opset 10 and is checked here:
  - Upsample (opsets 7-9, deprecated in 10; `scales` an attribute before 9, input 1 in 9): Resize-10's
    semantics (asymmetric coordinates, ORT's nearest rule, bilinear on the last two axes), any
    element type for nearest; refused when it would shrink, lacks its scales or computes them;
  - Slice with starts/ends/axes attributes and TopK with its `k` attribute (before 10);
  - BatchNormalization-7's `spatial` (1 runs, 0 refused);
  - an op newer than the imported opset (Resize at 9, QuantizeLinear at 9) is refused, naming it;
    opset 6 is refused naming the opset.
Floats are compared exactly where the ops are exact (data movement, nearest, BatchNormalization,
Relu, MaxPool, Concat) and within 1e-5 relative elsewhere (Conv and Gemm sums, bilinear weights).
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h
import single_node

F = TensorProto.FLOAT
rng = np.random.default_rng(907)


def model(nodes, inputs, outputs, inits, opset):
    ins = [helper.make_tensor_value_info(k, t, s) for k, t, s in inputs]
    outs = [helper.make_tensor_value_info(k, t, None) for k, t in outputs]
    return h.make_model(nodes, ins, outs, [h.tensor(k, v) for k, v in inits.items()], opset=opset, ir_version=7)


def run_both(tmp_path, case, m, feeds, extra=()):
    path = h.save_model(m, tmp_path / f"{case}.onnx")
    inputs = {k: single_node.save_input(tmp_path / f"{case}_{k}", v) for k, v in feeds.items()}
    want = single_node.run_ort(m, feeds, optimize=False)
    res = h.run_q8rt(path, inputs, tmp_path / f"{case}_out", extra=extra).assert_ok()
    return [res.output(o.name) for o in m.graph.output], want


def close(got, want, rtol=0.0):
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    if rtol == 0.0:
        h.assert_same_bytes(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max())))


def upsample(opset, mode, scales, dtype=np.float32, shape=(1, 3, 5, 7)):
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    if opset < 9:
        node = helper.make_node("Upsample", ["x"], ["y"], name="up", mode=mode, scales=[float(s) for s in scales])
        inits = {}
    else:
        node = helper.make_node("Upsample", ["x", "s"], ["y"], name="up", mode=mode)
        inits = {"s": np.asarray(scales, np.float32)}
    return model([node], [("x", t, list(shape))], [("y", t)], inits, opset)


UPSAMPLE = [
    (7, "nearest", [1, 1, 2, 3], np.float32),
    (8, "linear", [1, 1, 2, 2], np.float32),
    (9, "nearest", [1, 1, 2, 2], np.float32),
    (9, "nearest", [1, 1, 1.5, 2.5], np.float32),   # fractional: ORT's opset-10 nearest rule
    (9, "linear", [1, 1, 2, 2], np.float32),
    (9, "linear", [1, 1, 1.5, 3], np.float32),
    (9, "nearest", [1, 2, 2, 1], np.uint8),           # channels too, any element type
    (9, "nearest", [1, 1, 3, 3], np.int8),
    (9, "linear", [1, 1, 2, 4], np.float32),
]


@pytest.mark.parametrize("opset,mode,scales,dtype", UPSAMPLE,
                         ids=[f"op{o}-{m}-{'x'.join(str(s) for s in sc)}-{np.dtype(d).name}" for o, m, sc, d in UPSAMPLE])
def test_upsample(tmp_path, opset, mode, scales, dtype):
    m = upsample(opset, mode, scales, dtype)
    if dtype == np.float32:
        x = rng.uniform(-3, 3, (1, 3, 5, 7)).astype(np.float32)
    else:
        x = h.rand_int(rng, (1, 3, 5, 7), dtype)
    for extra in ((), ("--backend", "reference"), ("--threads", "2")):
        got, want = run_both(tmp_path, "up", m, {"x": x}, extra)
        close(got[0], want[0], 0.0 if mode == "nearest" else 1e-6)


@pytest.mark.parametrize("case", ["shrinks", "no_scales", "computed_scales", "opset10"])
def test_upsample_refused(tmp_path, case):
    x = np.zeros((1, 2, 4, 4), np.float32)
    if case == "shrinks":
        m = upsample(9, "nearest", [1, 1, 0.5, 0.5], shape=x.shape)
        want = ["must be >= 1"]
    elif case == "no_scales":
        node = helper.make_node("Upsample", ["x"], ["y"], name="up", mode="nearest")
        m = model([node], [("x", F, list(x.shape))], [("y", F)], {}, 8)
        want = ["scales"]
    elif case == "opset10":  # deprecated in 10 (ORT refuses it too)
        m = upsample(10, "nearest", [1, 1, 2, 2], shape=x.shape)
        want = ["deprecated"]
    else:
        nodes = [helper.make_node("Shape", ["x"], ["sh"], name="sh"),
                 helper.make_node("Cast", ["sh"], ["s"], name="cast", to=F),
                 helper.make_node("Upsample", ["x", "s"], ["y"], name="up", mode="nearest")]
        m = model(nodes, [("x", F, list(x.shape))], [("y", F)], {}, 9)
        want = ["run time"]
    path = h.save_model(m, tmp_path / "bad.onnx")
    res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / "x.npy", x)}, tmp_path / "out")
    msg = h.assert_clean_error(res, want)
    assert "'up'" in msg, msg


def small_net(opset):
    """Conv -> BatchNormalization -> Relu -> MaxPool -> Upsample -> Slice (attributes) -> Concat ->
    Pad (attributes) -> Clip (attributes) -> Flatten -> Gemm -> Softmax and TopK (k attribute): the
    old forms of a 2019-era PyTorch export."""
    w = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
    bn = [rng.uniform(0.5, 1.5, 8), rng.uniform(-0.2, 0.2, 8), rng.uniform(-0.1, 0.1, 8), rng.uniform(0.5, 2, 8)]
    gw = (rng.standard_normal((10, 8 * 6 * 6)) * 0.05).astype(np.float32)
    up = ([helper.make_node("Upsample", ["p"], ["u"], name="up", mode="nearest", scales=[1.0, 1.0, 2.0, 2.0])]
          if opset < 9 else [helper.make_node("Upsample", ["p", "us"], ["u"], name="up", mode="nearest")])
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "g", "be", "mu", "var"], ["n"], name="bn", epsilon=1e-5,
                         **({"spatial": 1} if opset < 9 else {})),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        *up,
        helper.make_node("Slice", ["u"], ["s1"], name="slice1", starts=[0, 0], ends=[4, 12], axes=[1, 2]),
        helper.make_node("Slice", ["u"], ["s2"], name="slice2", starts=[4, 0], ends=[100, 12], axes=[1, 2]),
        helper.make_node("Concat", ["s1", "s2"], ["cat"], name="cat", axis=1),
        helper.make_node("Pad", ["cat"], ["pd"], name="pad", pads=[0, 0, 0, 0, 0, 0, 0, 0], mode="constant",
                         value=0.0),
        helper.make_node("Clip", ["pd"], ["cl"], name="clip", min=0.0, max=4.0),
        helper.make_node("MaxPool", ["cl"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["f"], name="flat", axis=1),
        helper.make_node("Gemm", ["f", "gw", "gb"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=1),
        helper.make_node("TopK", ["prob"], ["topv", "topi"], name="topk", axis=1, k=3),
    ]
    inits = {"w": w, "b": rng.uniform(-0.1, 0.1, 8).astype(np.float32),
             "g": bn[0].astype(np.float32), "be": bn[1].astype(np.float32), "mu": bn[2].astype(np.float32),
             "var": bn[3].astype(np.float32), "gw": gw, "gb": rng.uniform(-0.1, 0.1, 10).astype(np.float32)}
    if opset >= 9:
        inits["us"] = np.array([1, 1, 2, 2], np.float32)
    return model(nodes, [("x", F, [1, 3, 12, 12])], [("prob", F), ("topv", F), ("topi", TensorProto.INT64),
                                                      ("u", F)], inits, opset)


@pytest.mark.parametrize("opset", [7, 8, 9])
def test_small_net(tmp_path, opset):
    m = small_net(opset)
    x = rng.uniform(-1, 1, (1, 3, 12, 12)).astype(np.float32)
    for extra in ((), ("--threads", "2"), ("--backend", "reference")):
        got, want = run_both(tmp_path, f"net{opset}", m, {"x": x}, extra)
        close(got[0], want[0], 1e-5)
        close(got[1], want[1], 1e-5)
        h.assert_same_bytes(got[2], want[2], "topk indices")
        close(got[3], want[3], 1e-5)


def test_batch_normalization_spatial0_refused(tmp_path):
    x = np.zeros((1, 2, 3, 3), np.float32)
    inits = {k: np.ones((2, 3, 3), np.float32) for k in ("g", "be", "mu", "var")}
    node = helper.make_node("BatchNormalization", ["x", "g", "be", "mu", "var"], ["y"], name="bn7", spatial=0)
    m = model([node], [("x", F, list(x.shape))], [("y", F)], inits, 7)
    res = h.run_q8rt(h.save_model(m, tmp_path / "bn.onnx"), {"x": h.save_npy(tmp_path / "x.npy", x)})
    msg = h.assert_clean_error(res, ["spatial"])
    assert "bn7" in msg, msg


@pytest.mark.parametrize("op,opset", [("Resize", 9), ("QuantizeLinear", 9), ("Where", 8)])
def test_op_newer_than_opset_refused(tmp_path, op, opset):
    x = np.zeros((1, 2, 4, 4), np.float32)
    if op == "Resize":
        node = helper.make_node("Resize", ["x", "s"], ["y"], name="newer")
        inits = {"s": np.array([1, 1, 2, 2], np.float32)}
    elif op == "QuantizeLinear":
        node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="newer")
        inits = {"s": np.array(0.1, np.float32)}
    else:
        node = helper.make_node("Where", ["c", "x", "x"], ["y"], name="newer")
        inits = {"c": np.ones((1, 2, 4, 4), bool)}
    m = model([node], [("x", F, list(x.shape))], [("y", F)], inits, opset)
    res = h.run_q8rt(h.save_model(m, tmp_path / "m.onnx"), {"x": h.save_npy(tmp_path / "x.npy", x)})
    msg = h.assert_clean_error(res, [op])
    assert "newer" in msg and f"opset {opset}" in msg, msg


def test_opset6_refused(tmp_path):
    node = helper.make_node("Relu", ["x"], ["y"], name="relu6")
    m = model([node], [("x", F, [2, 3])], [("y", F)], {}, 6)
    res = h.run_q8rt(h.save_model(m, tmp_path / "m.onnx"), {"x": h.save_npy(tmp_path / "x.npy",
                                                                              np.zeros((2, 3), np.float32))})
    msg = h.assert_clean_error(res, ["opset 6"])
    assert "7 to 22" in msg, msg
