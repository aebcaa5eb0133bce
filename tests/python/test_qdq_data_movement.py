"""8-bit data movement inside QDQ groups (src/passes/qdq_fuse.c): DequantizeLinear -> Split /
SpaceToDepth / DepthToSpace / Expand / Tile -> QuantizeLinear with equal scale and zero point
on every side runs on the 8-bit tensor (no float round trip): --explain must say so, and the
bytes must equal ONNX Runtime's literal run. Unequal parameters
keep the float path (and still match)."""

import re

import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper

import q8rt_harness as h
from op_check import rng_for, run_ort

NOTE = "runs on 8-bit data"


def qdq_model(op, dt, attrs, x_shape, extra_inits=(), n_out=1, q_scale=0.05):
    zt = np.uint8(128) if dt == np.uint8 else np.int8(-3)
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"], name="dq")]
    op_inputs = ["xf"] + [n for n, _ in extra_inits]
    mids = [f"m{i}" for i in range(n_out)]
    nodes.append(helper.make_node(op, op_inputs, mids, name="data_node", **attrs))
    for i, m in enumerate(mids):
        nodes.append(helper.make_node("QuantizeLinear", [m, "qs", "z"], [f"y{i}"], name=f"q{i}"))
    inits = [h.tensor("s", np.float32(0.05)), h.tensor("qs", np.float32(q_scale)), h.tensor("z", zt)]
    inits += [h.tensor(n, v) for n, v in extra_inits]
    elem = TensorProto.UINT8 if dt == np.uint8 else TensorProto.INT8
    return h.make_model(nodes, [helper.make_tensor_value_info("x", elem, list(x_shape))],
                        [helper.make_empty_tensor_value_info(f"y{i}") for i in range(n_out)], inits, opset=13)


CASES = [
    ("Split", {"axis": 1}, (1, 6, 5, 4), [("sp", np.array([1, 2, 3], np.int64))], 3),
    ("Split", {"axis": 3}, (1, 4, 3, 8), [], 2),
    ("SpaceToDepth", {"blocksize": 2}, (1, 3, 8, 6), [], 1),
    ("DepthToSpace", {"blocksize": 2, "mode": "CRD"}, (1, 8, 3, 5), [], 1),
    ("DepthToSpace", {"blocksize": 2}, (1, 8, 3, 5), [], 1),
    ("Expand", {}, (1, 3, 1, 4), [("shape", np.array([2, 3, 5, 4], np.int64))], 1),
    ("Tile", {}, (1, 3, 2, 4), [("rep", np.array([1, 2, 3, 1], np.int64))], 1),
]


@pytest.mark.parametrize("dt", [np.uint8, np.int8])
@pytest.mark.parametrize("op,attrs,x_shape,inits,n_out", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_qdq_data_movement_stays_8bit(op, attrs, x_shape, inits, n_out, dt, tmp_path, q8rt_run):
    m = qdq_model(op, dt, attrs, x_shape, inits, n_out)
    r = rng_for(f"{op}{x_shape}{dt}")
    x = r.integers(np.iinfo(dt).min, int(np.iinfo(dt).max) + 1, x_shape).astype(dt)
    path = h.save_model(m, tmp_path / "m.onnx")
    res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / "x.npy", x)}, tmp_path / "out",
                     extra=["--explain"]).assert_ok()
    steps = [ln for ln in res.stdout.splitlines() if re.match(r"\s*\d+ ", ln)]
    assert len(steps) == 1 and "data_node" in steps[0] and NOTE in steps[0], res.stdout
    want = run_ort(m, {"x": x})
    for i in range(n_out):
        h.assert_same_bytes(res.output(f"y{i}"), want[i], f"{op}/y{i}")


def test_qdq_split_unequal_scale_stays_float(tmp_path, q8rt_run):
    """A Q with another scale: the group is not rewritten (float Split, then QuantizeLinear)."""
    m = qdq_model("Split", np.uint8, {"axis": 1}, (1, 4, 2, 2), [], 2, q_scale=0.1)
    x = rng_for("unequal").integers(0, 256, (1, 4, 2, 2)).astype(np.uint8)
    res = h.run_q8rt(h.save_model(m, tmp_path / "m.onnx"), {"x": h.save_npy(tmp_path / "x.npy", x)},
                     tmp_path / "out", extra=["--explain"]).assert_ok()
    assert NOTE not in res.stdout, res.stdout
    want = run_ort(m, {"x": x})
    for i in range(2):
        h.assert_same_bytes(res.output(f"y{i}"), want[i], f"y{i}")


def yolo_style_float_model():
    """Focus-like SpaceToDepth, Conv, a YOLOv8-style Split into two halves (one gates the other
    through Sigmoid/Mul), Conv, DepthToSpace (CRD), Conv."""
    r = rng_for("yolo_style")
    inits = []

    def w(name, *shape):
        inits.append(h.tensor(name, (r.standard_normal(shape) * 0.3).astype(np.float32)))
        return name

    nodes = [
        helper.make_node("SpaceToDepth", ["x"], ["s2d"], blocksize=2, name="s2d"),
        helper.make_node("Conv", ["s2d", w("w1", 16, 12, 3, 3), w("b1", 16)], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Split", ["c1", "split"], ["sa", "sb"], axis=1, name="split"),
        helper.make_node("Sigmoid", ["sa"], ["sg"], name="sig"),
        helper.make_node("Mul", ["sb", "sg"], ["m"], name="mul"),
        helper.make_node("Conv", ["m", w("w2", 16, 8, 1, 1), w("b2", 16)], ["c2"], name="conv2"),
        helper.make_node("DepthToSpace", ["c2"], ["d2s"], blocksize=2, mode="CRD", name="d2s"),
        helper.make_node("Conv", ["d2s", w("w3", 4, 4, 3, 3), w("b3", 4)], ["y"], pads=[1, 1, 1, 1], name="conv3"),
    ]
    inits.append(h.tensor("split", np.array([8, 8], np.int64)))
    return h.make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 48])],
                        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits, opset=13)


@pytest.mark.parametrize("setting", ["qdq_u8s8", "qdq_s8s8", "qop_u8s8"])
def test_ort_quantized_yolo_style_model(setting, tmp_path, q8rt_run):
    """The same ops as ONNX Runtime's own quantizer emits them (per-channel weights, 4 calibration
    inputs): q8rt's output equals ORT's (optimized and literal runs agree here) byte for byte, and
    Split and DepthToSpace run on 8-bit data."""
    pytest.importorskip("ml_dtypes")  # onnxruntime.quantization needs it (tests/models/requirements.txt)
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    r = rng_for(f"yolo_style_{setting}")
    xs = [r.standard_normal((1, 3, 32, 48)).astype(np.float32) for _ in range(4)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": x} for x in xs])

        def get_next(self):
            return next(self.it, None)

    src = h.save_model(yolo_style_float_model(), tmp_path / "float.onnx")
    dst = tmp_path / f"{setting}.onnx"
    quantize_static(str(src), str(dst), Reader(), per_channel=True, weight_type=QuantType.QInt8,
                    quant_format=QuantFormat.QOperator if setting.startswith("qop") else QuantFormat.QDQ,
                    activation_type=QuantType.QInt8 if setting == "qdq_s8s8" else QuantType.QUInt8)
    res = h.run_q8rt(dst, {"x": h.save_npy(tmp_path / "x.npy", xs[0])}, tmp_path / "out",
                     extra=["--explain"]).assert_ok()
    for op in ("Split", "DepthToSpace"):
        line = [ln for ln in res.stdout.splitlines() if re.match(rf"\s*\d+ {op} ", ln)]
        assert line and (NOTE in line[0] or setting.startswith("qop")), res.stdout
    want = run_ort(onnx.load(str(dst)), {"x": xs[0]})[0]
    h.assert_same_bytes(res.output("y"), want, setting)


MP_NOTE = "on the 8-bit data of the DequantizeLinear before it"


def dq_maxpool_model(dt, pools, dq_scale=0.05, out_float=False):
    """One DequantizeLinear feeding several MaxPools (YOLO's SPP), each quantized again with its own
    scale and zero point (ONNX Runtime's QOperator format leaves MaxPool so); out_float: the first
    MaxPool's float output is a graph output too."""
    lo = 0 if dt == np.uint8 else -128
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"], name="dq")]
    inits = [h.tensor("s", np.float32(dq_scale)), h.tensor("z", dt(lo + 100))]
    outs = []
    for i, attrs in enumerate(pools):
        nodes.append(helper.make_node("MaxPool", ["xf"], [f"m{i}"], name=f"pool{i}", **attrs))
        nodes.append(helper.make_node("QuantizeLinear", [f"m{i}", f"qs{i}", f"qz{i}"], [f"y{i}"], name=f"q{i}"))
        inits += [h.tensor(f"qs{i}", np.float32(0.031 + 0.013 * i)), h.tensor(f"qz{i}", dt(lo + 90 + 7 * i))]
        outs.append(f"y{i}")
    if out_float:
        outs.append("m0")
    elem = TensorProto.UINT8 if dt == np.uint8 else TensorProto.INT8
    return h.make_model(nodes, [helper.make_tensor_value_info("x", elem, [2, 5, 11, 9])],
                        [helper.make_empty_tensor_value_info(o) for o in outs], inits, opset=13)


SPP = [{"kernel_shape": [5, 5], "pads": [2, 2, 2, 2]},
       {"kernel_shape": [9, 9], "pads": [4, 4, 4, 4]},
       {"kernel_shape": [3, 2], "pads": [2, 0, 0, 1], "strides": [2, 3]},
       {"kernel_shape": [2, 2], "strides": [2, 2], "auto_pad": "VALID"}]


def check_dq_maxpool(m, dt, tmp_path, name):
    x = rng_for(name).integers(np.iinfo(dt).min, int(np.iinfo(dt).max) + 1, (2, 5, 11, 9)).astype(dt)
    path = h.save_model(m, tmp_path / f"{name}.onnx")
    inp = {"x": h.save_npy(tmp_path / f"{name}_x.npy", x)}
    want = run_ort(m, {"x": x})
    for extra in ([], ["--threads", "2"], ["--backend", "reference"]):
        res = h.run_q8rt(path, inp, tmp_path / f"{name}_o{len(extra)}", extra=extra).assert_ok()
        for o, w in zip(m.graph.output, want):
            h.assert_same_bytes(res.output(o.name), w, f"{name} {extra}: {o.name} vs ORT")
    return h.run_q8rt(path, inp, None, extra=["--explain"]).assert_ok().stdout


@pytest.mark.parametrize("dt", [np.uint8, np.int8])
@pytest.mark.parametrize("out_float", [False, True])
def test_dq_maxpool_runs_on_8bit_data(dt, out_float, tmp_path, q8rt_run):
    """DequantizeLinear -> MaxPool -> QuantizeLinear with other parameters: the MaxPools run on the
    8-bit data (the DequantizeLinear moved after them), the bytes still ONNX Runtime's."""
    m = dq_maxpool_model(dt, SPP, out_float=out_float)
    out = check_dq_maxpool(m, dt, tmp_path, f"spp{np.dtype(dt).name}{out_float}")
    pools = [ln for ln in out.splitlines() if re.match(r"\s*\d+ +MaxPool ", ln)]
    assert len(pools) == len(SPP) and all(MP_NOTE in ln and "8_maxpool" in ln for ln in pools), out


@pytest.mark.parametrize("near", ["ceil_mode", "dilations", "pads_summing_to_kernel"])
def test_dq_maxpool_near_misses_stay_float(near, tmp_path, q8rt_run):
    """Where a window could hold padding only (ceil_mode, dilations), the MaxPool stays on float
    data, exactly as written."""
    attrs = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    if near == "ceil_mode":
        attrs = {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}
    elif near == "dilations":
        attrs["dilations"] = [2, 2]
    elif near == "pads_summing_to_kernel":  # each pad < kernel, together not: an empty axis pads to windows
        attrs = {"kernel_shape": [3, 3], "pads": [1, 2, 1, 1]}
    m = dq_maxpool_model(np.uint8, [attrs])
    out = check_dq_maxpool(m, np.uint8, tmp_path, near)
    assert MP_NOTE not in out and "f32_maxpool" in out, out


def test_dq_maxpool_empty_axis_padded_to_windows(tmp_path, q8rt_run):
    """An empty input axis whose pads make whole windows (pads 2 + 2 >= kernel 3): those windows hold
    padding only, so the MaxPool must give the float route's values, not a dequantized byte."""
    mp = {"kernel_shape": [3, 3], "pads": [2, 2, 2, 2]}
    q = h.make_model([helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"], name="dq"),
                      helper.make_node("MaxPool", ["xf"], ["y"], name="pool", **mp)],
                     [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 2, 0, 4])],
                     [helper.make_empty_tensor_value_info("y")],
                     [h.tensor("s", np.float32(0.05)), h.tensor("z", np.uint8(100))], opset=13)
    f = h.make_model([helper.make_node("MaxPool", ["xf"], ["y"], name="pool", **mp)],
                     [helper.make_tensor_value_info("xf", TensorProto.FLOAT, [1, 2, 0, 4])],
                     [helper.make_empty_tensor_value_info("y")], [], opset=13)
    qp, fp = h.save_model(q, tmp_path / "q.onnx"), h.save_model(f, tmp_path / "f.onnx")
    want = h.run_q8rt(fp, {"xf": h.save_npy(tmp_path / "xf.npy", np.zeros((1, 2, 0, 4), np.float32))},
                      tmp_path / "of").assert_ok().output("y")
    assert want.shape == (1, 2, 2, 6)
    inp = {"x": h.save_npy(tmp_path / "x.npy", np.zeros((1, 2, 0, 4), np.uint8))}
    for extra in ([], ["--threads", "2"], ["--backend", "reference"]):
        res = h.run_q8rt(qp, inp, tmp_path / f"oq{len(extra)}", extra=extra).assert_ok()
        h.assert_same_bytes(res.output("y"), want, f"empty axis {extra}")
