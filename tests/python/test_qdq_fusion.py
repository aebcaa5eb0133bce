"""QDQ fusion: DequantizeLinear -> Conv -> QuantizeLinear runs as one QLinearConv.

Each case builds the QDQ graph with onnx.helper and checks, byte for byte, that q8rt's output
equals the exact QLinearConv reference with the bias q8rt must derive: the int32 bias as it is
when its DequantizeLinear scale is exactly x_scale * w_scale[c]; otherwise (another scale, or a
float bias as PyTorch keeps it) the bias quantized at load with scale x_scale * w_scale[c], round
half to even. --explain must show the node as a fused QLinearConv.
"""

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
    rng = np.random.default_rng(abs(hash(name)) % (2**32))
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
