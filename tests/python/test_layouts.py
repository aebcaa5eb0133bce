"""Layouts: ops between channels-last (NHWC) convolutions run channels-last too, with no layout
change around them (QLinearAdd/QLinearMul of two activations or an activation and a broadcast one,
QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat on any axis). Each model runs with the
default backend (NHWC convolutions) and with --backend reference (everything NCHW) and must give
ONNX Runtime's bytes (no graph optimizations) both ways; --explain must show no LayoutTranspose
between the convolutions.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h
from test_tables import MS, model_of, ort_noopt, qadd, qmul, scalars


def conv(rng, name, x, y, c_in, c_out, inits, zp=128, ys=0.25, yz=120, depthwise=False):
    w = rng.integers(-127, 128, size=(c_out, 1 if depthwise else c_in, 3, 3)).astype(np.int8)
    inits += [h.tensor(f"{name}_w", w), h.tensor(f"{name}_ws", rng.uniform(0.001, 0.004, size=c_out).astype(np.float32)),
              h.tensor(f"{name}_wz", np.zeros(c_out, dtype=np.int8)), h.tensor(f"{name}_ys", np.float32(ys)),
              h.tensor(f"{name}_yz", np.array(yz, dtype=np.uint8))]
    return helper.make_node("QLinearConv", [x, "xs", "xz", f"{name}_w", f"{name}_ws", f"{name}_wz", f"{name}_ys",
                                            f"{name}_yz"], [y], name=name, pads=[1, 1, 1, 1],
                            group=c_out if depthwise else 1)


def check(model, x, tmp_path, max_transposes):
    path = h.save_model(model, tmp_path / "model.onnx")
    xp = h.save_npy(tmp_path / "x.npy", x)
    ref = ort_noopt(model, {"x": x})
    for backend in ("auto", "reference"):
        res = h.run_q8rt(path, {"x": xp}, tmp_path / backend, extra=["--explain", "--backend", backend]).assert_ok()
        if backend == "auto":
            n = res.stdout.count("LayoutTranspose")
            assert n <= max_transposes, res.stdout
        for o in model.graph.output:
            h.assert_same_bytes(res.output(o.name), ref[o.name], f"{o.name} ({backend})")


def base(rng, c):
    inits = [h.tensor("xs", np.float32(0.02)), h.tensor("xz", np.array(128, dtype=np.uint8))]
    x = rng.integers(0, 256, size=(1, c, 11, 13)).astype(np.uint8)
    return inits, x


def test_residual_add_and_se_multiply(tmp_path):
    """conv -> conv, added back (residual); global pool -> conv gives [1,C,1,1] that scales the
    activation (squeeze-excite), then a final conv: all channels-last."""
    rng = np.random.default_rng(3)
    c = 16
    inits, x = base(rng, c)
    inits += scalars(np.uint8, s1=0.25, z1=120, s2=0.3, z2=110, s3=0.05, z3=3, s4=0.2, z4=125)
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             conv(rng, "c2", "a", "b", c, c, inits, depthwise=True),
             qadd("a", "b", "residual", "c1_ys", "c1_yz", "c2_ys", "c2_yz", "s2", "z2", "r"),
             helper.make_node("QLinearGlobalAveragePool", ["r", "s2", "z2", "s3", "z3"], ["g"], name="gap", domain=MS),
             conv(rng, "c3", "g", "e", c, c, inits, ys=0.1, yz=128),
             qmul("r", "e", "se_scale", "s2", "z2", "c3_ys", "c3_yz", "s4", "z4", "m"),
             conv(rng, "c4", "m", "y", c, c, inits)]
    for n in nodes:  # the convs after the first read the previous output's scale
        if n.op_type == "QLinearConv" and n.name != "c1":
            src = {"c2": ("c1_ys", "c1_yz"), "c3": ("s3", "z3"), "c4": ("s4", "z4")}[n.name]
            n.input[1], n.input[2] = src
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    check(m, x, tmp_path, max_transposes=2)


@pytest.mark.parametrize("axis", [1, -1, 2])
def test_concat_channels_last(axis, tmp_path):
    rng = np.random.default_rng(5)
    c = 8
    inits, x = base(rng, c)
    inits += scalars(np.uint8, so=0.27, zo=118)
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             conv(rng, "c2", "x", "b", c, c, inits, ys=0.3, yz=100),
             helper.make_node("QLinearConcat", ["so", "zo", "a", "c1_ys", "c1_yz", "b", "c2_ys", "c2_yz"], ["cat"],
                              name="cat", domain=MS, axis=axis),
             conv(rng, "c3", "cat", "y", 2 * c if axis == 1 else c, c, inits)]
    nodes[-1].input[1], nodes[-1].input[2] = "so", "zo"
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    check(m, x, tmp_path, max_transposes=2)


def test_average_pool_channels_last(tmp_path):
    rng = np.random.default_rng(9)
    c = 8
    inits, x = base(rng, c)
    inits += scalars(np.uint8, so=0.21, zo=119)
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             helper.make_node("QLinearAveragePool", ["a", "c1_ys", "c1_yz", "so", "zo"], ["p"], name="pool",
                              domain=MS, kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1]),
             conv(rng, "c2", "p", "y", c, c, inits)]
    nodes[-1].input[1], nodes[-1].input[2] = "so", "zo"
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    check(m, x, tmp_path, max_transposes=2)


@pytest.mark.parametrize("how", ["scales", "sizes", "half_pixel_down"])
def test_resize_nearest_channels_last(how, tmp_path):
    rng = np.random.default_rng(11)
    c = 8
    inits, x = base(rng, c)
    attrs = {"mode": "nearest"}
    if how == "scales":
        inits += [h.tensor("roi", np.zeros(0, np.float32)), h.tensor("sc", np.array([1, 1, 2, 2], np.float32))]
        ins = ["a", "roi", "sc"]
        attrs["coordinate_transformation_mode"] = "asymmetric"
        attrs["nearest_mode"] = "floor"
    elif how == "sizes":
        inits += [h.tensor("roi", np.zeros(0, np.float32)), h.tensor("sc", np.zeros(0, np.float32)),
                  h.tensor("sz", np.array([1, c, 17, 29], np.int64))]
        ins = ["a", "roi", "sc", "sz"]
    else:
        inits += [h.tensor("roi", np.zeros(0, np.float32)), h.tensor("sc", np.array([1, 1, 0.6, 0.5], np.float32))]
        ins = ["a", "roi", "sc"]
        attrs["coordinate_transformation_mode"] = "half_pixel"
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             helper.make_node("Resize", ins, ["r"], name="resize", **attrs),
             conv(rng, "c2", "r", "y", c, c, inits)]
    nodes[-1].input[1], nodes[-1].input[2] = "c1_ys", "c1_yz"
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    check(m, x, tmp_path, max_transposes=2)
