"""Weights reached through shape ops (pass_fold_qdq_weights).

A Transpose / Reshape / Squeeze between a constant int8 weight and its DequantizeLinear, or between
that DequantizeLinear and the Conv, is folded into the constant at load with the per-channel axis
moved along, so DQ -> Conv -> Q still fuses into QLinearConv: the output must equal, byte for byte,
the exact QLinearConv reference with the weights as the Conv sees them. When a Reshape splits the
per-channel axis, nothing is folded: the group runs in float exactly as written (checked against
ONNX Runtime within one quantum) and --explain says why.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h

M, C, KH, KW = 10, 6, 3, 3
XS, YS = np.float32(0.02), np.float32(0.15)


def weights(rng, per_channel=True):
    w = rng.integers(-127, 128, size=(M, C, KH, KW)).astype(np.int8)
    ws = rng.uniform(0.001, 0.01, size=M).astype(np.float32)
    return w, ws


def build(tmp_path, w_inits, w_nodes, w_value, extra_inits=()):
    """x -> DQ -> Conv(w_value) -> Q -> y, with the weight subgraph given by the caller."""
    x_zp, y_zp = np.array(128, np.uint8), np.array(120, np.uint8)
    inits = [h.tensor("xs", XS), h.tensor("x_zp", x_zp), h.tensor("ys", YS), h.tensor("y_zp", y_zp)]
    inits += list(w_inits) + list(extra_inits)
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "x_zp"], ["x_f"], name="dq_x")] + list(w_nodes)
    nodes.append(helper.make_node("Conv", ["x_f", w_value], ["y_f"], name="conv", pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("QuantizeLinear", ["y_f", "ys", "y_zp"], ["y"], name="q_y"))
    model = h.make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, C, 9, 11])],
                         [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    return model, h.save_model(model, tmp_path / "model.onnx"), x_zp, y_zp


def case_transpose_after_dq(rng):
    w, ws = weights(rng)
    stored = np.ascontiguousarray(w.transpose(2, 3, 1, 0))  # [kh, kw, C, M]
    inits = [h.tensor("w_q", stored), h.tensor("ws", ws)]
    nodes = [helper.make_node("DequantizeLinear", ["w_q", "ws"], ["w_d"], name="dq_w", axis=3),
             helper.make_node("Transpose", ["w_d"], ["w_f"], name="tr_w", perm=[3, 2, 0, 1])]
    return w, ws, inits, nodes


def case_reshape_after_dq(rng):
    w, ws = weights(rng)
    inits = [h.tensor("w_q", w.reshape(M, C * KH * KW)), h.tensor("ws", ws),
             h.tensor("shape", np.array([M, C, KH, KW], np.int64))]
    nodes = [helper.make_node("DequantizeLinear", ["w_q", "ws"], ["w_d"], name="dq_w", axis=0),
             helper.make_node("Reshape", ["w_d", "shape"], ["w_f"], name="rs_w")]
    return w, ws, inits, nodes


def case_squeeze_after_dq(rng):
    w, ws = weights(rng)
    inits = [h.tensor("w_q", w.reshape(M, C, KH, KW, 1)), h.tensor("ws", ws),
             h.tensor("axes", np.array([4], np.int64))]
    nodes = [helper.make_node("DequantizeLinear", ["w_q", "ws"], ["w_d"], name="dq_w", axis=0),
             helper.make_node("Squeeze", ["w_d", "axes"], ["w_f"], name="sq_w")]
    return w, ws, inits, nodes


def case_transpose_before_dq(rng):
    w, ws = weights(rng)
    stored = np.ascontiguousarray(w.transpose(2, 3, 1, 0))  # [kh, kw, C, M]
    inits = [h.tensor("w_q", stored), h.tensor("ws", ws)]
    nodes = [helper.make_node("Transpose", ["w_q"], ["w_t"], name="tr_w", perm=[3, 2, 0, 1]),
             helper.make_node("DequantizeLinear", ["w_t", "ws"], ["w_f"], name="dq_w", axis=0)]
    return w, ws, inits, nodes


def case_chain_after_dq(rng):
    """Unsqueeze then Transpose then Flatten-free Reshape: [C,kh,kw,M] -> [1,C,kh,kw,M] -> ... -> Conv."""
    w, ws = weights(rng)
    stored = np.ascontiguousarray(w.transpose(1, 2, 3, 0))  # [C, kh, kw, M], channel axis 3
    inits = [h.tensor("w_q", stored), h.tensor("ws", ws), h.tensor("axes", np.array([0], np.int64)),
             h.tensor("shape", np.array([M, C, KH, KW], np.int64))]
    nodes = [helper.make_node("DequantizeLinear", ["w_q", "ws"], ["w_d"], name="dq_w", axis=3),
             helper.make_node("Unsqueeze", ["w_d", "axes"], ["w_u"], name="us_w"),       # [1,C,kh,kw,M], axis 4
             helper.make_node("Transpose", ["w_u"], ["w_t"], name="tr_w", perm=[4, 0, 1, 2, 3]),  # [M,1,C,kh,kw]
             helper.make_node("Reshape", ["w_t", "shape"], ["w_f"], name="rs_w")]        # [M,C,kh,kw]
    return w, ws, inits, nodes


def case_per_tensor_merge(rng):
    """Per-tensor weights fold through any reshape, even one that merges dims."""
    w, _ = weights(rng)
    ws = np.float32(0.004)
    inits = [h.tensor("w_q", w.reshape(M * C, KH * KW)), h.tensor("ws", ws),
             h.tensor("shape", np.array([M, C, KH, KW], np.int64))]
    nodes = [helper.make_node("DequantizeLinear", ["w_q", "ws"], ["w_d"], name="dq_w"),
             helper.make_node("Reshape", ["w_d", "shape"], ["w_f"], name="rs_w")]
    return w, ws, inits, nodes


FUSING = {
    "transpose_after_dq": case_transpose_after_dq,
    "reshape_after_dq": case_reshape_after_dq,
    "squeeze_after_dq": case_squeeze_after_dq,
    "transpose_before_dq": case_transpose_before_dq,
    "chain_after_dq": case_chain_after_dq,
    "per_tensor_merge": case_per_tensor_merge,
}


@pytest.mark.parametrize("name", list(FUSING))
def test_weight_shape_ops_fold_and_fuse(name, tmp_path, q8rt_run):
    rng = np.random.default_rng(sum(map(ord, name)))
    w, ws, w_inits, w_nodes = FUSING[name](rng)
    _, path, x_zp, y_zp = build(tmp_path, w_inits, w_nodes, "w_f")
    x = h.rand_int(rng, (1, C, 9, 11), np.uint8)
    xp = h.save_npy(tmp_path / "x.npy", x)
    want = h.qlinearconv_ref(x, XS, x_zp, w, ws, np.int8(0), YS, y_zp, None, pads=[1, 1, 1, 1])
    for backend in ("auto", "reference"):
        res = h.run_q8rt(path, {"x": xp}, tmp_path / f"out-{backend}", extra=["--explain", "--backend", backend])
        res.assert_ok()
        assert "QLinearConv" in res.stdout and "fused from DequantizeLinear" in res.stdout, res.stdout
        h.assert_same_bytes(res.output("y"), want, f"{name} ({backend})")


def test_split_channel_axis_stays_float(tmp_path, q8rt_run):
    """Per-channel axis 0 of [M*C, kh, kw] split by Reshape into [M, C, kh, kw]: not folded."""
    rng = np.random.default_rng(5)
    w, _ = weights(rng)
    ws = rng.uniform(0.001, 0.01, size=M * C).astype(np.float32)
    inits = [h.tensor("w_q", w.reshape(M * C, KH, KW)), h.tensor("ws", ws),
             h.tensor("shape", np.array([M, C, KH, KW], np.int64))]
    nodes = [helper.make_node("DequantizeLinear", ["w_q", "ws"], ["w_d"], name="dq_w", axis=0),
             helper.make_node("Reshape", ["w_d", "shape"], ["w_f"], name="rs_w")]
    model, path, _, _ = build(tmp_path, inits, nodes, "w_f")
    x = h.rand_int(rng, (1, C, 9, 11), np.uint8)
    xp = h.save_npy(tmp_path / "x.npy", x)
    want = h.run_ort(model, {"x": x})[0]
    for backend in ("auto", "reference"):
        res = h.run_q8rt(path, {"x": xp}, tmp_path / f"out-{backend}", extra=["--explain", "--backend", backend])
        res.assert_ok()
        assert "QLinearConv" not in res.stdout, res.stdout
        conv_lines = [l for l in res.stdout.splitlines() if " conv " in l or l.split()[1:3] == ["Conv", "conv"]]
        assert conv_lines and "merges or splits the per-channel axis" in conv_lines[0], res.stdout
        assert "runs in float" in conv_lines[0], res.stdout
        got = res.output("y")
        assert got.shape == want.shape
        diff = np.abs(got.astype(np.int32) - want.astype(np.int32))
        assert diff.max() <= 1, f"max diff {diff.max()}"
        assert h.count_mismatches(got, want) <= got.size // 100 + 1
