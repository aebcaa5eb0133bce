"""QDQ fusion: DequantizeLinear -> Conv -> QuantizeLinear runs as one QLinearConv.

Each case builds the QDQ graph with onnx.helper and checks, byte for byte, that q8rt's output
equals the exact QLinearConv reference with the bias q8rt must derive: the int32 bias as it is
when its DequantizeLinear scale is exactly x_scale * w_scale[c]; otherwise (another scale, or a
float bias as PyTorch keeps it) the bias quantized at load with scale x_scale * w_scale[c], round
half to even. --explain must show the node as a fused QLinearConv.
"""

import zlib

import numpy as np
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h

CASES = [
    # name, x dtype, per-channel, bias kind ("none", "exact", "other_scale", "float"), depthwise
    ("u8s8_pc_exact_bias", np.uint8, True, "exact", False),
    ("u8s8_pt_no_bias", np.uint8, False, "none", False),
    ("s8s8_pc_exact_bias", np.int8, True, "exact", False),
    ("u8s8_pc_bias_other_scale", np.uint8, True, "other_scale", False),
    ("u8s8_pc_float_bias", np.uint8, True, "float", False),
    ("u8s8_pc_depthwise", np.uint8, True, "exact", True),
]


def rhe(v):
    return np.rint(v)  # round half to even (float64 here; inputs are exact float32 quotients)


@pytest.mark.parametrize("name,xdt,per_channel,bias_kind,depthwise", CASES, ids=[c[0] for c in CASES])
def test_qdq_conv_fuses(name, xdt, per_channel, bias_kind, depthwise, tmp_path, q8rt_run):
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # hash() is salted per process
    c_in, m = (8, 8) if depthwise else (6, 10)
    group = c_in if depthwise else 1
    x = h.rand_int(rng, (1, c_in, 9, 11), xdt)
    w = rng.integers(-127, 128, size=(m, c_in // group, 3, 3)).astype(np.int8)
    w[0, 0, 0, 0], w[-1, 0, 0, 0] = -127, 127
    xs, ys = np.float32(0.02), np.float32(0.15)
    x_zp = np.array(128 if xdt == np.uint8 else 3, dtype=xdt)
    y_zp = np.array(120 if xdt == np.uint8 else -5, dtype=xdt)
    ws = (rng.uniform(0.001, 0.01, size=m) if per_channel else np.full(1, 0.004)).astype(np.float32)
    wsc = np.broadcast_to(ws, (m,)).astype(np.float32)
    s = (np.float32(xs) * wsc).astype(np.float32)  # the fused bias scale, float32 product

    inits = [h.tensor("xs", xs), h.tensor("x_zp", x_zp), h.tensor("w_q", w),
             h.tensor("ws", ws if per_channel else ws.reshape(())), h.tensor("ys", ys), h.tensor("y_zp", y_zp)]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "x_zp"], ["x_f"], name="dq_x"),
             helper.make_node("DequantizeLinear", ["w_q", "ws"], ["w_f"], name="dq_w", axis=0)]
    conv_in = ["x_f", "w_f"]
    bias_q = None
    if bias_kind in ("exact", "other_scale"):
        bq = rng.integers(-20000, 20000, size=m).astype(np.int32)
        bs = s if bias_kind == "exact" else (s * np.float32(0.75)).astype(np.float32)
        inits += [h.tensor("b_q", bq), h.tensor("bs", bs)]
        nodes.append(helper.make_node("DequantizeLinear", ["b_q", "bs"], ["b_f"], name="dq_b", axis=0))
        conv_in.append("b_f")
        real = (bq.astype(np.float32) * bs).astype(np.float32)
        bias_q = bq if bias_kind == "exact" else rhe((real / s).astype(np.float32)).astype(np.int32)
    elif bias_kind == "float":
        bf = rng.uniform(-2, 2, size=m).astype(np.float32)
        inits.append(h.tensor("b", bf))
        conv_in.append("b")
        bias_q = rhe((bf / s).astype(np.float32)).astype(np.int32)
    nodes.append(helper.make_node("Conv", conv_in, ["y_f"], name="conv", pads=[1, 1, 1, 1], group=group))
    nodes.append(helper.make_node("QuantizeLinear", ["y_f", "ys", "y_zp"], ["y"], name="q_y"))
    xt = TensorProto.UINT8 if xdt == np.uint8 else TensorProto.INT8
    model = h.make_model(nodes, [helper.make_tensor_value_info("x", xt, list(x.shape))],
                         [helper.make_tensor_value_info("y", xt, None)], inits)
    path = h.save_model(model, tmp_path / "model.onnx")
    xp = h.save_npy(tmp_path / "x.npy", x)

    want = h.qlinearconv_ref(x, xs, x_zp, w, ws if per_channel else ws[0], np.int8(0), ys, y_zp, bias_q,
                             pads=[1, 1, 1, 1], group=group)
    for backend in ("auto", "reference"):
        res = h.run_q8rt(path, {"x": xp}, tmp_path / f"out-{backend}", extra=["--explain", "--backend", backend])
        res.assert_ok()
        assert "QLinearConv" in res.stdout and "fused from DequantizeLinear" in res.stdout, res.stdout
        if bias_kind in ("other_scale", "float"):
            assert "bias" in res.stdout, res.stdout
        h.assert_same_bytes(res.output("y"), want, f"{name} ({backend})")


ACTS = [("relu", None, None), ("clip_0_6", 0.0, 6.0), ("clip_neg1_2", -1.0, 2.0)]


@pytest.mark.parametrize("act,lo,hi", ACTS, ids=[a[0] for a in ACTS])
@pytest.mark.parametrize("xdt", [np.uint8, np.int8], ids=["u8", "s8"])
def test_qdq_conv_relu_clip_fuses(act, lo, hi, xdt, tmp_path, q8rt_run):
    """DQ -> Conv -> Relu/Clip -> Q: the activation becomes the requantization clamp, exactly
    (QuantizeLinear is monotonic: Q(clip(v, lo, hi)) = clamp(Q(v), Q(lo), Q(hi)))."""
    rng = np.random.default_rng(7 if xdt == np.uint8 else 8)
    x = h.rand_int(rng, (1, 5, 8, 9), xdt)
    w = rng.integers(-127, 128, size=(7, 5, 3, 3)).astype(np.int8)
    xs, ys = np.float32(0.03), np.float32(0.05)
    x_zp = np.array(120 if xdt == np.uint8 else -4, dtype=xdt)
    y_zp = np.array(100 if xdt == np.uint8 else -10, dtype=xdt)
    ws = rng.uniform(0.002, 0.01, size=7).astype(np.float32)
    inits = [h.tensor("xs", xs), h.tensor("x_zp", x_zp), h.tensor("w_q", w), h.tensor("ws", ws),
             h.tensor("ys", ys), h.tensor("y_zp", y_zp)]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "x_zp"], ["x_f"], name="dq_x"),
             helper.make_node("DequantizeLinear", ["w_q", "ws"], ["w_f"], name="dq_w", axis=0),
             helper.make_node("Conv", ["x_f", "w_f"], ["c"], name="conv", pads=[1, 1, 1, 1])]
    if act == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["a"], name="act"))
        lo_f, hi_f = 0.0, np.inf
    else:
        inits += [h.tensor("lo", np.float32(lo)), h.tensor("hi", np.float32(hi))]
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["a"], name="act"))
        lo_f, hi_f = lo, hi
    nodes.append(helper.make_node("QuantizeLinear", ["a", "ys", "y_zp"], ["y"], name="q_y"))
    xt = TensorProto.UINT8 if xdt == np.uint8 else TensorProto.INT8
    model = h.make_model(nodes, [helper.make_tensor_value_info("x", xt, list(x.shape))],
                         [helper.make_tensor_value_info("y", xt, None)], inits)
    path = h.save_model(model, tmp_path / "model.onnx")
    xp = h.save_npy(tmp_path / "x.npy", x)
    want = h.qlinearconv_ref(x, xs, x_zp, w, ws, np.int8(0), ys, y_zp, None, pads=[1, 1, 1, 1])
    qmin, qmax = h.qrange(xdt)
    qlo = qmin if np.isinf(lo_f) else int(np.clip(np.rint(np.float32(lo_f) / ys) + int(y_zp), qmin, qmax))
    qhi = qmax if np.isinf(hi_f) else int(np.clip(np.rint(np.float32(hi_f) / ys) + int(y_zp), qmin, qmax))
    want = np.clip(want.astype(np.int32), qlo, qhi).astype(xdt)
    assert qlo > qmin or qhi < qmax  # the clamp really narrows the range
    for backend in ("auto", "reference"):
        res = h.run_q8rt(path, {"x": xp}, tmp_path / f"out-{backend}", extra=["--explain", "--backend", backend])
        res.assert_ok()
        assert "as the clamp" in res.stdout, res.stdout
        h.assert_same_bytes(res.output("y"), want, f"{act} ({backend})")


@pytest.mark.parametrize("trans_b", [0, 1])
def test_qdq_gemm_fuses_to_qgemm(trans_b, tmp_path, q8rt_run):
    """DQ(A) x DQ(constant B, per column) + DQ(int32 bias) -> Gemm -> Q runs as QGemm, exactly:
    acc = (A - a_zp) @ B + bias; y = clamp(round_half_even(acc * (a_scale*b_scale[n]/y_scale)) + y_zp)."""
    rng = np.random.default_rng(11 + trans_b)
    M, K, N = 5, 37, 11
    a = h.rand_int(rng, (M, K), np.uint8)
    b = rng.integers(-127, 128, size=(K, N)).astype(np.int8)
    a_s, y_s = np.float32(0.02), np.float32(0.4)
    a_zp, y_zp = np.uint8(131), np.uint8(97)
    b_s = rng.uniform(0.002, 0.01, size=N).astype(np.float32)
    bias = rng.integers(-3000, 3000, size=N).astype(np.int32)
    bias_s = (a_s * b_s).astype(np.float32)
    b_stored = b.T.copy() if trans_b else b
    inits = [h.tensor("a_s", a_s), h.tensor("a_zp", np.array(a_zp)), h.tensor("b_q", b_stored), h.tensor("b_s", b_s),
             h.tensor("c_q", bias), h.tensor("c_s", bias_s), h.tensor("y_s", y_s), h.tensor("y_zp", np.array(y_zp))]
    nodes = [helper.make_node("DequantizeLinear", ["a", "a_s", "a_zp"], ["a_f"], name="dq_a"),
             helper.make_node("DequantizeLinear", ["b_q", "b_s"], ["b_f"], name="dq_b", axis=0 if trans_b else 1),
             helper.make_node("DequantizeLinear", ["c_q", "c_s"], ["c_f"], name="dq_c", axis=0),
             helper.make_node("Gemm", ["a_f", "b_f", "c_f"], ["g"], name="gemm", transB=trans_b),
             helper.make_node("QuantizeLinear", ["g", "y_s", "y_zp"], ["y"], name="q_y")]
    model = h.make_model(nodes, [helper.make_tensor_value_info("a", TensorProto.UINT8, [M, K])],
                         [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    path = h.save_model(model, tmp_path / "model.onnx")
    ap = h.save_npy(tmp_path / "a.npy", a)
    acc = (a.astype(np.int64) - int(a_zp)) @ b.astype(np.int64) + bias
    scale = ((a_s * b_s).astype(np.float32) / y_s).astype(np.float32)
    want = np.clip(np.rint((acc.astype(np.float32) * scale).astype(np.float32)) + int(y_zp), 0, 255).astype(np.uint8)
    res = h.run_q8rt(path, {"a": ap}, tmp_path / "out", extra=["--explain"])
    res.assert_ok()
    assert "QGemm" in res.stdout and "fused from DequantizeLinear -> Gemm" in res.stdout, res.stdout
    h.assert_same_bytes(res.output("y"), want, "QDQ Gemm")


def _qdq_add_model(xdt, za, zb, zc, shape_b):
    # a YOLOv8 C2f residual Add's parameters (nudenet 320n, qdq_s8s8_pc), where the formulas differ
    sa, sb, sc = np.float32(0.02019385), np.float32(0.024803573), np.float32(0.024870738)
    xt = TensorProto.UINT8 if xdt == np.uint8 else TensorProto.INT8
    inits = [h.tensor("sa", sa), h.tensor("za", np.array(za, xdt)), h.tensor("sb", sb),
             h.tensor("zb", np.array(zb, xdt)), h.tensor("sc", sc), h.tensor("zc", np.array(zc, xdt))]
    nodes = [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["a_f"], name="dq_a"),
             helper.make_node("DequantizeLinear", ["b", "sb", "zb"], ["b_f"], name="dq_b"),
             helper.make_node("Add", ["a_f", "b_f"], ["y_f"], name="add"),
             helper.make_node("QuantizeLinear", ["y_f", "sc", "zc"], ["y"], name="q_y")]
    return h.make_model(nodes, [helper.make_tensor_value_info("a", xt, [256, 256]),
                                helper.make_tensor_value_info("b", xt, list(shape_b))],
                        [helper.make_tensor_value_info("y", xt, None)], inits)


@pytest.mark.parametrize("shape_b", [(256, 256), (1, 256), (256, 1)], ids=["full", "row_bcast", "col_bcast"])
def test_qdq_add_int8_is_its_uint8_twin(shape_b, tmp_path, q8rt_run):
    """DQ -> Add -> Q with int8 data gives exactly the bytes of the same group with uint8 data
    (values ^ 0x80, zero points + 128) ^ 0x80. ORT's QLinearAdd formula reads raw values, so its
    int8 kernel rounds differently from its uint8 one; q8rt defines an int8 QDQ group as the fused
    uint8 run (ORT fuses QDQ only for uint8 on x86), which keeps whole int8 QDQ models equal to their
    uint8 twins. Every (a, b) byte pair is covered."""
    a = np.arange(256, dtype=np.uint8)[:, None].repeat(256, 1)
    b = np.arange(256, dtype=np.uint8)[None, :].repeat(256, 0)
    b = b[: shape_b[0], : shape_b[1]] if shape_b != (256, 256) else b
    if shape_b == (256, 1):
        b = np.arange(256, dtype=np.uint8)[:, None][::-1].copy()
    outs = {}
    for xdt, z in ((np.uint8, (28, 11, 34)), (np.int8, (-100, -117, -94))):
        model = _qdq_add_model(xdt, *z, shape_b)
        path = h.save_model(model, tmp_path / f"{xdt.__name__}.onnx")
        conv = (lambda v: v) if xdt == np.uint8 else (lambda v: (v ^ 0x80).view(np.int8))
        ap = h.save_npy(tmp_path / f"a_{xdt.__name__}.npy", conv(a))
        bp = h.save_npy(tmp_path / f"b_{xdt.__name__}.npy", conv(np.ascontiguousarray(b)))
        for backend in ("auto", "reference"):
            res = h.run_q8rt(path, {"a": ap, "b": bp}, tmp_path / f"out-{xdt.__name__}-{backend}",
                             extra=["--explain", "--backend", backend, "--no-tables"])
            res.assert_ok()
            assert "QLinearAdd" in res.stdout, res.stdout
            if xdt == np.int8:
                assert "uint8 twin" in res.stdout, res.stdout
            outs[(xdt, backend)] = res.output("y")
    want = outs[(np.uint8, "reference")]
    assert np.array_equal(outs[(np.uint8, "auto")], want)
    for backend in ("auto", "reference"):
        h.assert_same_bytes(outs[(np.int8, backend)].view(np.uint8) ^ 0x80, want, f"int8 QDQ Add ({backend})")


def _ort(model, feeds, optimize):
    import single_node

    return single_node.run_ort(model, feeds, optimize=optimize)


def test_qdq_matmul_uint8_by_int8_weight_fuses(tmp_path, q8rt_run):
    """DQ(uint8 A) x DQ(constant int8 B, per tensor) -> MatMul -> Q runs as QLinearMatMul (u8 x s8 ->
    u8), as ORT's optimizer fuses it: the bytes of ORT's optimized run. Before, the differing types
    of the two DequantizeLinear kept the group in float (the attention-pooling score of atspm-detector
    1.1.0's funcnet and PP-OCR rec's constant-weight MatMuls in the QDQ per-tensor settings)."""
    rng = np.random.default_rng(5)
    B, M, K, N = 2, 7, 37, 5
    a = h.rand_int(rng, (B, M, K), np.uint8)
    w = rng.integers(-127, 128, size=(K, N)).astype(np.int8)
    inits = [h.tensor("a_s", np.float32(0.021)), h.tensor("a_zp", np.array(np.uint8(119))), h.tensor("w_q", w),
             h.tensor("w_s", np.float32(0.0042)), h.tensor("w_zp", np.array(np.int8(0))),
             h.tensor("y_s", np.float32(0.37)), h.tensor("y_zp", np.array(np.uint8(131)))]
    nodes = [helper.make_node("DequantizeLinear", ["a", "a_s", "a_zp"], ["a_f"], name="dq_a"),
             helper.make_node("DequantizeLinear", ["w_q", "w_s", "w_zp"], ["w_f"], name="dq_w"),
             helper.make_node("MatMul", ["a_f", "w_f"], ["m"], name="matmul"),
             helper.make_node("QuantizeLinear", ["m", "y_s", "y_zp"], ["y"], name="q_y")]
    model = h.make_model(nodes, [helper.make_tensor_value_info("a", TensorProto.UINT8, [B, M, K])],
                         [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    path = h.save_model(model, tmp_path / "model.onnx")
    res = h.run_q8rt(path, {"a": h.save_npy(tmp_path / "a.npy", a)}, tmp_path / "out", extra=["--explain"])
    res.assert_ok()
    assert "QLinearMatMul" in res.stdout and "fused from DequantizeLinear -> op -> QuantizeLinear" in res.stdout, res.stdout
    h.assert_same_bytes(res.output("y"), _ort(model, {"a": a}, True)[0], "QDQ MatMul u8 x s8 vs ORT optimized")


@pytest.mark.parametrize("opset,axis", [(13, -1), (13, 1), (11, 1)], ids=["opset13_last", "opset13_inner", "opset11"])
@pytest.mark.parametrize("xdt", [np.uint8, np.int8], ids=["u8", "s8"])
def test_qdq_softmax_fuses(opset, axis, xdt, tmp_path, q8rt_run):
    """DQ -> Softmax -> Q runs as QLinearSoftmax (attribute opset: the Softmax's), as ORT's optimizer
    fuses it (uint8: the bytes of ORT's optimized QDQ run; both types: the bytes of ORT's
    QLinearSoftmax node). Before, the Softmax ran in float between the two (the classifiers' last
    Softmax, YOLOv8's DFL head, PP-OCR rec's attention)."""
    rng = np.random.default_rng(opset + axis + (xdt == np.int8))
    shape = [2, 6, 4, 19]
    x = h.rand_int(rng, shape, xdt)
    t = TensorProto.UINT8 if xdt == np.uint8 else TensorProto.INT8
    y_zp = 0 if xdt == np.uint8 else -128
    inits = [h.tensor("x_s", np.float32(0.083)), h.tensor("x_zp", np.array(xdt(3))),
             h.tensor("y_s", np.float32(1 / 256)), h.tensor("y_zp", np.array(xdt(y_zp)))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "x_s", "x_zp"], ["x_f"], name="dq_x"),
             helper.make_node("Softmax", ["x_f"], ["s"], name="softmax", axis=axis),
             helper.make_node("QuantizeLinear", ["s", "y_s", "y_zp"], ["y"], name="q_y")]
    model = h.make_model(nodes, [helper.make_tensor_value_info("x", t, shape)],
                         [helper.make_tensor_value_info("y", t, None)], inits, opset=opset)
    path = h.save_model(model, tmp_path / "model.onnx")
    res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / "x.npy", x)}, tmp_path / "out", extra=["--explain"])
    res.assert_ok()
    assert "QLinearSoftmax" in res.stdout, res.stdout
    got = res.output("y")
    qop = h.make_model([helper.make_node("QLinearSoftmax", ["x", "x_s", "x_zp", "y_s", "y_zp"], ["y"], name="qsoftmax",
                                         domain="com.microsoft", axis=axis, opset=opset)],
                       [helper.make_tensor_value_info("x", t, shape)], [helper.make_tensor_value_info("y", t, None)],
                       inits, opset=opset)
    qop.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    h.assert_same_bytes(got, _ort(qop, {"x": x}, False)[0], "QDQ Softmax vs ORT's QLinearSoftmax")
    if xdt == np.uint8:
        h.assert_same_bytes(got, _ort(model, {"x": x}, True)[0], "QDQ Softmax vs ORT optimized")


# A scale, and the y scale that makes a_scale * (PC_W_BASE * 2^-j) / y_scale exactly 2^-j: the fused
# requantization then meets exact ties (acc * 2^-j = n + 0.5, rounded half to even), which the float
# route (DQ -> float MatMul -> Q) computes a few ulps off and rounds either way
PC_A_SCALE, PC_W_BASE = np.float32(0.0173), np.float32(0.0021)
PC_Y_SCALE = np.float32(PC_A_SCALE * PC_W_BASE)


def _qdq_matmul_pc_model(adt, wdt, a_zp, y_zp, w, ws, w_zp, a_shape, opset, axis=1):
    """DQ(A) x DQ(constant W, one scale / zero point per DequantizeLinear axis) -> MatMul -> Q, as
    onnxruntime.quantization's QDQ per-channel settings write a MatMul (w_zp None: no zero point)."""
    t = TensorProto.UINT8 if adt == np.uint8 else TensorProto.INT8
    inits = [h.tensor("a_s", PC_A_SCALE), h.tensor("a_zp", np.array(adt(a_zp))), h.tensor("w_q", w),
             h.tensor("w_s", ws), h.tensor("y_s", PC_Y_SCALE), h.tensor("y_zp", np.array(adt(y_zp)))]
    dq_w = ["w_q", "w_s"]
    if w_zp is not None:
        inits.append(h.tensor("w_zp", w_zp))
        dq_w.append("w_zp")
    nodes = [helper.make_node("DequantizeLinear", ["a", "a_s", "a_zp"], ["a_f"], name="dq_a"),
             helper.make_node("DequantizeLinear", dq_w, ["w_f"], name="dq_w", axis=axis),
             helper.make_node("MatMul", ["a_f", "w_f"], ["m"], name="matmul"),
             helper.make_node("QuantizeLinear", ["m", "y_s", "y_zp"], ["y"], name="q_y")]
    return h.make_model(nodes, [helper.make_tensor_value_info("a", t, list(a_shape))],
                        [helper.make_tensor_value_info("y", t, None)], inits, opset=opset,
                        ir_version=10 if opset >= 21 else 8)


PC_CASES = [
    # name, activation type, weight type, A shape, weight zero points ("zero", "nonzero", "none"), opset
    ("u8s8_2d", np.uint8, np.int8, (37, 32), "zero", 13),
    ("u8s8_3d_batch", np.uint8, np.int8, (3, 29, 32), "zero", 13),
    ("u8s8_2d_opset21", np.uint8, np.int8, (37, 32), "zero", 21),
    ("u8s8_3d_no_zero_point", np.uint8, np.int8, (2, 17, 32), "none", 19),
    ("u8u8_2d", np.uint8, np.uint8, (37, 32), "nonzero", 13),
    ("s8s8_2d", np.int8, np.int8, (37, 32), "zero", 13),
    ("s8s8_3d_batch", np.int8, np.int8, (3, 29, 32), "zero", 13),
    ("s8s8_3d_nonzero_zero_points", np.int8, np.int8, (2, 17, 32), "nonzero", 13),
]


@pytest.mark.parametrize("name,adt,wdt,a_shape,zp_kind,opset", PC_CASES, ids=[c[0] for c in PC_CASES])
def test_qdq_matmul_per_column_weight_fuses(name, adt, wdt, a_shape, zp_kind, opset, tmp_path, q8rt_run):
    """DQ(A) x DQ(constant [K, N] weight, one scale and zero point per column: axis 1) -> MatMul -> Q,
    onnxruntime.quantization's QDQ per-channel MatMul, runs as QLinearMatMul with a per-column
    b_scale / b_zero_point, as ORT's optimizer fuses it. uint8 activations: the bytes of ORT's
    optimized run. int8 activations (which ORT on x86 leaves in float): the bytes of ORT's optimized
    run of the uint8 twin (A ^ 0x80, zero points + 128) ^ 0x80, as the other int8 QDQ groups. The
    case is checked to be one where ORT's fused and unfused runs differ, so the float route (DQ ->
    float MatMul -> Q, what q8rt ran before) cannot pass it."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    K, N = a_shape[-1], 70
    ws = (PC_W_BASE * np.float32(2.0) ** -rng.integers(3, 6, size=N)).astype(np.float32)
    if zp_kind == "none":
        w_zp = None
    elif wdt == np.uint8:
        w_zp = rng.integers(120, 136, size=N).astype(np.uint8)
    else:
        w_zp = (rng.integers(-3, 4, size=N) if zp_kind == "nonzero" else np.zeros(N)).astype(np.int8)
    zw = np.zeros(N, np.int32) if w_zp is None else w_zp.astype(np.int32)
    w = (zw[None, :] + rng.integers(-20, 21, size=(K, N))).astype(wdt)
    a_zp, y_zp = (117, 131) if adt == np.uint8 else (-11, 3)
    a = (a_zp + rng.integers(-20, 21, size=a_shape)).astype(adt)
    model = _qdq_matmul_pc_model(adt, wdt, a_zp, y_zp, w, ws, w_zp, a_shape, opset)
    if adt == np.uint8:
        twin, a_ref, back = model, a, (lambda v: v)
    else:
        twin = _qdq_matmul_pc_model(np.uint8, wdt, a_zp + 128, y_zp + 128, w, ws, w_zp, a_shape, opset)
        a_ref, back = a.view(np.uint8) ^ 0x80, (lambda v: (v ^ 0x80).view(np.int8))
    want = back(_ort(twin, {"a": a_ref}, True)[0])
    unfused = back(_ort(twin, {"a": a_ref}, False)[0])
    assert h.count_mismatches(want, unfused) > 0, "case does not tell the fused run from the unfused one"
    path = h.save_model(model, tmp_path / "model.onnx")
    ap = h.save_npy(tmp_path / "a.npy", a)
    for backend in ("auto", "reference"):
        res = h.run_q8rt(path, {"a": ap}, tmp_path / f"out-{backend}", extra=["--explain", "--backend", backend])
        res.assert_ok()
        assert "QLinearMatMul" in res.stdout and "B per column" in res.stdout, res.stdout
        h.assert_same_bytes(res.output("y"), want, f"QDQ per-column MatMul {name} ({backend})")


NOT_FUSED = [
    # name, activation type, weight type, weight shape, DequantizeLinear axis
    ("s8u8", np.int8, np.uint8, (48, 40), 1),    # ORT: int8 A takes an int8 B only
    ("axis0_per_row", np.uint8, np.int8, (48, 40), 0),  # ORT fuses, then its QLinearMatMul refuses it
    ("batched_b", np.uint8, np.int8, (2, 48, 40), 2),   # ORT fuses, then its QLinearMatMul refuses it
]


@pytest.mark.parametrize("name,adt,wdt,w_shape,axis", NOT_FUSED, ids=[c[0] for c in NOT_FUSED])
def test_qdq_matmul_per_axis_weight_not_fused(name, adt, wdt, w_shape, axis, tmp_path, q8rt_run):
    """Per-axis weights QLinearMatMul cannot take stay DequantizeLinear -> MatMul -> QuantizeLinear:
    int8 A by uint8 B (ORT does not fuse it either), and a per-row (axis 0) scale or a batched B,
    which ORT's optimizer fuses into a QLinearMatMul that then fails at run ("weight zero point must
    be a scalar, 1D tensor of size 1, or last to second dimension is 1"). The values are those of
    ORT's unoptimized run, within one output quantum (float MatMul accumulation order)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    w = (rng.integers(-127, 128, size=w_shape) if wdt == np.int8 else rng.integers(0, 256, size=w_shape)).astype(wdt)
    n_s = w_shape[axis]
    ws = rng.uniform(0.0005, 0.004, size=n_s).astype(np.float32)
    w_zp = np.full(n_s, 128 if wdt == np.uint8 else 0, dtype=wdt)
    a_shape = (2, 9, w_shape[-2]) if len(w_shape) == 3 else (9, w_shape[0])
    a_zp, y_zp = (117, 131) if adt == np.uint8 else (-11, 3)
    a = h.rand_int(rng, a_shape, adt)
    model = _qdq_matmul_pc_model(adt, wdt, a_zp, y_zp, w, ws, w_zp, a_shape, 13, axis=axis)
    path = h.save_model(model, tmp_path / "model.onnx")
    res = h.run_q8rt(path, {"a": h.save_npy(tmp_path / "a.npy", a)}, tmp_path / "out", extra=["--explain"])
    res.assert_ok()
    assert "QLinearMatMul" not in res.stdout and "MatMul" in res.stdout, res.stdout
    want = _ort(model, {"a": a}, False)[0]
    got = res.output("y")
    assert got.shape == want.shape and got.dtype == want.dtype
    assert int(np.max(np.abs(got.astype(np.int32) - want.astype(np.int32)))) <= 1


@pytest.mark.parametrize("bad", [0.0, -0.02, float("nan"), float("inf")], ids=["zero", "negative", "nan", "inf"])
def test_qdq_conv_weight_scale_not_positive_finite_is_refused(bad, tmp_path, q8rt_run):
    """A fused DQ -> Conv -> Q group whose per-channel weight scale is zero, negative, NaN or
    infinite is refused with a message naming the node, the field and the element, and why (ORT
    runs them: zero gives the channel's zero point, negative its negation, NaN the low end,
    infinity differs between ORT's optimized and unoptimized runs; onnxruntime.quantization never
    writes them). A subnormal positive scale runs, with the bytes of ORT's optimized run."""
    rng = np.random.default_rng(17)
    x = rng.uniform(-2, 2, size=(1, 4, 5, 7)).astype(np.float32)
    w = rng.integers(-127, 128, size=(3, 4, 3, 3)).astype(np.int8)

    def model(ws1):
        ws = np.array([0.01, ws1, 0.03], np.float32)
        inits = [h.tensor("xs", np.float32(0.02)), h.tensor("x_zp", np.array(np.uint8(128))), h.tensor("w_q", w),
                 h.tensor("ws", ws), h.tensor("w_zp", np.zeros(3, np.int8)), h.tensor("ys", np.float32(0.05)),
                 h.tensor("y_zp", np.array(np.uint8(120)))]
        nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "x_zp"], ["x_q"], name="q_x"),
                 helper.make_node("DequantizeLinear", ["x_q", "xs", "x_zp"], ["x_f"], name="dq_x"),
                 helper.make_node("DequantizeLinear", ["w_q", "ws", "w_zp"], ["w_f"], name="dq_w", axis=0),
                 helper.make_node("Conv", ["x_f", "w_f"], ["c"], name="conv_ws", pads=[1, 1, 1, 1]),
                 helper.make_node("QuantizeLinear", ["c", "ys", "y_zp"], ["y"], name="q_y")]
        return h.make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                            [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)

    xp = h.save_npy(tmp_path / "x.npy", x)
    bad_path = h.save_model(model(bad), tmp_path / "bad.onnx")
    msg = h.assert_clean_error(h.run_q8rt(bad_path, {"x": xp}, tmp_path / "out-bad"))
    assert "conv_ws" in msg and "w_scale[1]" in msg and "positive finite" in msg, msg

    good = model(1e-40)  # subnormal: accepted, and exact
    res = h.run_q8rt(h.save_model(good, tmp_path / "good.onnx"), {"x": xp}, tmp_path / "out-good", extra=["--explain"])
    res.assert_ok()
    assert "QLinearConv" in res.stdout and "fused from DequantizeLinear" in res.stdout, res.stdout
    h.assert_same_bytes(res.output("y"), _ort(good, {"x": x}, True)[0], "subnormal weight scale vs ORT optimized")
