"""Layouts: ops between channels-last (NHWC) convolutions run channels-last too, with no layout
change around them (QLinearAdd/QLinearMul of two activations or an activation and a broadcast one,
QLinearGlobalAveragePool, QLinearAveragePool, MaxPool and GlobalMaxPool (8-bit and float), QLinearConcat
on any axis, float stretches
DequantizeLinear -> Div/Mul/Add/Sub by a scalar, GlobalAveragePool -> QuantizeLinear). Each model runs with the
default backend (NHWC convolutions) and with --backend reference (everything NCHW) and must give
ONNX Runtime's bytes (no graph optimizations) both ways; --explain must show no LayoutTranspose
between the convolutions.
"""

import numpy as np
import pytest
import onnx
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


def check(model, x, tmp_path, max_transposes, feeds=None, threads=()):
    feeds = {"x": x, **(feeds or {})}
    path = h.save_model(model, tmp_path / "model.onnx")
    paths = {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in feeds.items()}
    ref = ort_noopt(model, feeds)
    for backend in ("auto", "reference") + tuple(f"threads{t}" for t in threads):
        extra = ["--threads", backend[7:]] if backend.startswith("threads") else ["--backend", backend]
        res = h.run_q8rt(path, paths, tmp_path / backend, extra=["--explain"] + extra).assert_ok()
        if backend == "auto":
            n = res.stdout.count("LayoutTranspose")
            assert n <= max_transposes, res.stdout
            auto = res.stdout
        for o in model.graph.output:
            h.assert_same_bytes(res.output(o.name), ref[o.name], f"{o.name} ({backend})")
    return auto


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


def test_concat_and_squeeze_excite_channels_last_threads(tmp_path):
    """det's neck and SE blocks at a plane large enough to split: QLinearConcat by pixel rows and
    QLinearGlobalAveragePool by 16-channel chunks over the pool; the same bytes as ORT at 1, 2 and 3
    threads."""
    rng = np.random.default_rng(13)
    c = 40
    inits = [h.tensor("xs", np.float32(0.02)), h.tensor("xz", np.array(128, dtype=np.uint8))]
    x = rng.integers(0, 256, size=(1, c, 48, 64)).astype(np.uint8)
    inits += scalars(np.uint8, so=0.27, zo=118, s3=0.05, z3=3, s4=0.2, z4=125)
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             conv(rng, "c2", "x", "b", c, c, inits, ys=0.3, yz=100),
             helper.make_node("QLinearConcat", ["so", "zo", "a", "c1_ys", "c1_yz", "b", "c2_ys", "c2_yz"], ["cat"],
                              name="cat", domain=MS, axis=1),
             helper.make_node("QLinearGlobalAveragePool", ["cat", "so", "zo", "s3", "z3"], ["g"], name="gap",
                              domain=MS),
             conv(rng, "c3", "g", "e", 2 * c, 2 * c, inits, ys=0.1, yz=128),
             qmul("cat", "e", "se_scale", "so", "zo", "c3_ys", "c3_yz", "s4", "z4", "m"),
             conv(rng, "c4", "m", "y", 2 * c, c, inits)]
    nodes[4].input[1], nodes[4].input[2] = "s3", "z3"
    nodes[6].input[1], nodes[6].input[2] = "s4", "z4"
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    check(m, x, tmp_path, max_transposes=2, threads=(2, 3))
    res = h.run_q8rt(h.save_model(m, tmp_path / "split.onnx"), {"x": h.save_npy(tmp_path / "xs.npy", x)},
                     tmp_path / "split", extra=["--threads", "2", "--profile-split"]).assert_ok()
    items = {ln.split()[2]: ln for ln in res.stdout.splitlines() if ln.startswith("threads ")}
    for name in ("cat", "gap"):
        assert "regions=1 " in items[name], items[name]


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


@pytest.mark.parametrize("how", ["scales", "sizes", "half_pixel_down", "scales_4x2_threads"])
def test_resize_nearest_channels_last(how, tmp_path):
    """8-channel pixels: image rows that repeat the one before are one copy of it; with threads the
    rows split mid image row (scales_4x2_threads: 16000 pixels, several ranges per thread)."""
    rng = np.random.default_rng(11)
    c = 8
    inits, x = base(rng, c)
    attrs = {"mode": "nearest"}
    threads = ()
    if how == "scales_4x2_threads":
        x = rng.integers(0, 256, size=(1, c, 40, 50)).astype(np.uint8)
        inits += [h.tensor("roi", np.zeros(0, np.float32)), h.tensor("sc", np.array([1, 1, 4, 2], np.float32))]
        ins = ["a", "roi", "sc"]
        threads = (2, 3)
    elif how == "scales":
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
    check(m, x, tmp_path, max_transposes=2, threads=threads)


MAXPOOL_CASES = {
    "3x3_s1_same": dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    "5x5_spp": dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
    "2x2_s2": dict(kernel_shape=[2, 2], strides=[2, 2]),
    "3x2_s2x1_asym_pads": dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 0, 1]),
    "dilated_ceil": dict(kernel_shape=[2, 3], strides=[2, 2], dilations=[2, 1], ceil_mode=1),
    "global": None,
}


@pytest.mark.parametrize("dtype", ["u8", "float"])
@pytest.mark.parametrize("case", list(MAXPOOL_CASES))
def test_max_pool_channels_last(case, dtype, tmp_path):
    """MaxPool / GlobalMaxPool between channels-last convolutions runs channels-last (the window
    rows over the channels): ORT's bytes, no layout change around it. The float case pools a float
    stretch (DequantizeLinear -> MaxPool -> QuantizeLinear kept unfused by a Div in between)."""
    rng = np.random.default_rng(23)
    c = 72  # one full 64-byte vector and a masked tail
    inits, x = base(rng, c)
    attrs = MAXPOOL_CASES[case]
    op = "GlobalMaxPool" if attrs is None else "MaxPool"
    if op == "GlobalMaxPool" and dtype == "u8":
        pytest.skip("ONNX's GlobalMaxPool takes float tensors only (ORT refuses uint8)")
    pool = lambda i, o: helper.make_node(op, [i], [o], name="mpool", **(attrs or {}))  # noqa: E731
    if dtype == "u8":
        body = [pool("a", "p")]
        tail_s, tail_z = "c1_ys", "c1_yz"
    else:
        inits += scalars(np.uint8, sp=0.03, zp=9) + [h.tensor("three", np.float32(3.0))]
        body = [helper.make_node("DequantizeLinear", ["a", "c1_ys", "c1_yz"], ["af"], name="dq"),
                helper.make_node("Div", ["af", "three"], ["d"], name="div"),
                pool("d", "pf"),
                helper.make_node("QuantizeLinear", ["pf", "sp", "zp"], ["p"], name="q")]
        tail_s, tail_z = "sp", "zp"
    nodes = [conv(rng, "c1", "x", "a", c, c, inits)] + body + [conv(rng, "c2", "p", "y", c, c, inits)]
    nodes[-1].input[1], nodes[-1].input[2] = tail_s, tail_z
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    out = check(m, x, tmp_path, max_transposes=2)
    line = [ln for ln in out.splitlines() if " mpool " in ln]
    assert len(line) == 1 and "channels-last" in line[0], out


def float_se(rng, c, inits, tail):
    """conv -> DequantizeLinear -> Div by 6 -> {GlobalAveragePool -> QuantizeLinear -> conv,
    QuantizeLinear} -> QLinearMul -> `tail` (PP-LCNet's squeeze-excite, as the QOperator cls has it)."""
    inits += scalars(np.uint8, sd=0.04, zd=10, sg=0.02, zg=5, sm=0.1, zm=7) + [h.tensor("six", np.float32(6.0))]
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             helper.make_node("DequantizeLinear", ["a", "c1_ys", "c1_yz"], ["af"], name="dq"),
             helper.make_node("Div", ["af", "six"], ["d"], name="div"),
             helper.make_node("GlobalAveragePool", ["d"], ["gp"], name="gap"),
             helper.make_node("QuantizeLinear", ["gp", "sg", "zg"], ["gq"], name="qg"),
             helper.make_node("QuantizeLinear", ["d", "sd", "zd"], ["dq8"], name="qd"),
             conv(rng, "c2", "gq", "e", c, c, inits, ys=0.05, yz=128),
             qmul("dq8", "e", "se", "sd", "zd", "c2_ys", "c2_yz", "sm", "zm", "m")]
    nodes[6].input[1], nodes[6].input[2] = "sg", "zg"
    return nodes + tail


def test_float_stretch_channels_last(tmp_path):
    """The float stretch of a squeeze-excite between channels-last convs runs channels-last: no
    layout change inside (cls QOperator had 3 per block)."""
    rng = np.random.default_rng(13)
    c = 16
    inits, x = base(rng, c)
    nodes = float_se(rng, c, inits, [])
    nodes.append(conv(rng, "c3", "m", "y", c, c, inits))
    nodes[-1].input[1], nodes[-1].input[2] = "sm", "zm"
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    out = check(m, x, tmp_path, max_transposes=2)
    for name in ("dq", "div", "gap", "qg", "qd"):
        line = [ln for ln in out.splitlines() if f" {name} " in ln]
        assert len(line) == 1 and "channels-last" in line[0], out


def test_float_stretch_to_nchw_op_stays_nchw(tmp_path):
    """A float stretch that reaches an op with no channels-last form (ReduceMean) stays NCHW
    from its DequantizeLinear on: one 8-bit layout change, never a float one."""
    rng = np.random.default_rng(17)
    c = 8
    inits, x = base(rng, c)
    inits += scalars(np.uint8, sp=0.03, zp=9) + [h.tensor("six", np.float32(6.0))]
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             helper.make_node("DequantizeLinear", ["a", "c1_ys", "c1_yz"], ["af"], name="dq"),
             helper.make_node("Div", ["af", "six"], ["d"], name="div"),
             helper.make_node("ReduceMean", ["d"], ["mp"], name="rmean", axes=[3], keepdims=1),
             helper.make_node("QuantizeLinear", ["mp", "sp", "zp"], ["q"], name="q"),
             conv(rng, "c2", "q", "y", c, c, inits)]
    nodes[-1].input[1], nodes[-1].input[2] = "sp", "zp"
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    out = check(m, x, tmp_path, max_transposes=4)
    assert "its float output reaches an op that runs NCHW" in out, out
    assert not any("LayoutTranspose" in ln and ("af" in ln or " d " in ln) for ln in out.splitlines()), out


def test_float_transpose_of_second_input(tmp_path):
    """A float graph input added to a channels-last float stretch is moved to NHWC (4-byte layout
    change) and the sum is exact."""
    rng = np.random.default_rng(19)
    c = 8
    inits, x = base(rng, c)
    inits += scalars(np.uint8, sq=0.05, zq=100)
    f = rng.standard_normal(size=x.shape).astype(np.float32)
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             helper.make_node("DequantizeLinear", ["a", "c1_ys", "c1_yz"], ["af"], name="dq"),
             helper.make_node("Add", ["af", "f"], ["s"], name="add"),
             helper.make_node("QuantizeLinear", ["s", "sq", "zq"], ["q"], name="q"),
             conv(rng, "c2", "q", "y", c, c, inits)]
    nodes[-1].input[1], nodes[-1].input[2] = "sq", "zq"
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape)),
                         helper.make_tensor_value_info("f", TensorProto.FLOAT, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    out = check(m, x, tmp_path, max_transposes=3, feeds={"f": f})
    assert any("LayoutTranspose" in ln and "f#nhwc" in ln for ln in out.splitlines()), out


# (c_in, c_out, kernel, stride, dilation, pads, group, hw): single-conv NCHW models, the shapes
# people benchmark convolutions with; odd sizes put vector tails and padding at both edges.
EDGE_CONVS = [
    (24, 24, 3, 1, 1, 1, 24, (19, 37)),     # depthwise 3x3
    (16, 16, 3, 2, 1, 1, 16, (20, 33)),     # depthwise 3x3 stride 2
    (8, 8, 5, 1, 1, 2, 8, (9, 70)),         # depthwise 5x5, rows wider than one vector
    (8, 8, 7, 1, 2, 3, 8, (15, 17)),        # depthwise 7x7 dilation 2
    (5, 5, (1, 9), 1, 1, 0, 5, (4, 30)),    # depthwise 1x9: the generic kernel loop
    (32, 20, 1, 1, 1, 0, 1, (17, 19)),      # 1x1: the GEMM reads the input planes as they are
    (13, 9, 1, 1, 1, 1, 1, (6, 40)),        # 1x1 with padding: a padded copy, border outputs
    (3, 16, 3, 1, 1, 1, 1, (20, 48), 2),    # 3x3, K = 27 (not a multiple of 4), batch 2
    (24, 37, 3, 1, 1, 1, 1, (9, 64)),       # 3x3, 37 channels: a partial channel block
    (8, 8, 5, 1, 1, 0, 1, (12, 90)),        # 5x5 without padding: 4 columns dropped per row
]


def edge_conv(rng, c_in, c_out, k, s, d, pads, group, hw, batch=1, dt=np.uint8):
    kh, kw = (k, k) if isinstance(k, int) else k
    zp = 128 if dt == np.uint8 else 3
    w = rng.integers(-127, 128, size=(c_out, c_in // group, kh, kw)).astype(np.int8)
    inits = [h.tensor("xs", np.float32(0.02)), h.tensor("xz", np.array(zp, dtype=dt)), h.tensor("w", w),
             h.tensor("ws", rng.uniform(0.001, 0.004, size=c_out).astype(np.float32)),
             h.tensor("wz", np.zeros(c_out, dtype=np.int8)), h.tensor("ys", np.float32(0.3)),
             h.tensor("yz", np.array(zp - 5, dtype=dt)),
             h.tensor("b", rng.integers(-5000, 5000, size=c_out).astype(np.int32))]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], name="conv", pads=[pads] * 4, strides=[s, s], dilations=[d, d], group=group)
    et = TensorProto.UINT8 if dt == np.uint8 else TensorProto.INT8
    model = model_of([node], [helper.make_tensor_value_info("x", et, [batch, c_in, *hw])],
                     [helper.make_tensor_value_info("y", et, None)], inits)
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max + 1, size=(batch, c_in, *hw)).astype(dt)
    return model, x


@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
@pytest.mark.parametrize("shape", EDGE_CONVS, ids=[f"{c[0]}-{c[1]}_k{c[2]}s{c[3]}d{c[4]}g{c[6]}" for c in EDGE_CONVS])
def test_single_conv_edges_need_no_transpose(shape, dt, tmp_path):
    """A QLinearConv with an NCHW graph input and an NCHW graph output runs NCHW end to end where
    q8rt has an NCHW kernel for it (depthwise: AVX-512 VBMI+VNNI; stride-1 GEMM: AVX-512 VNNI):
    --explain shows no LayoutTranspose and says so; bytes equal ONNX Runtime's on auto, reference
    and --threads 3."""
    model, x = edge_conv(np.random.default_rng(sum(shape[:2]) + (dt == np.int8)), *shape, dt=dt)
    auto = check(model, x, tmp_path, 2)
    flags = open("/proc/cpuinfo").read().split()
    if all(f in flags for f in ("avx512_vnni", "avx512vbmi")):
        assert "LayoutTranspose" not in auto, auto
        assert "no layout change" in auto, auto
    path = tmp_path / "model.onnx"
    t3 = h.run_q8rt(path, {"x": tmp_path / "x.npy"}, tmp_path / "t3", extra=["--threads", "3"]).assert_ok()
    h.assert_same_bytes(t3.output("y"), ort_noopt(model, {"x": x})["y"], "y (--threads 3)")


def test_edge_conv_feeding_another_op_stays_nhwc(tmp_path):
    """A depthwise conv whose output feeds another node (not only a graph output) is not at the
    model's edge: it keeps the NHWC kernels and the planner's layout changes."""
    rng = np.random.default_rng(11)
    model, x = edge_conv(rng, 16, 16, 3, 1, 1, 1, 16, (12, 20))
    model.graph.node.append(helper.make_node("QLinearConv", ["y", "ys", "yz", "w", "ws", "wz", "ys", "yz", "b"], ["z"], name="conv2", pads=[1] * 4, group=16))
    del model.graph.output[:]
    model.graph.output.extend([helper.make_tensor_value_info("z", TensorProto.UINT8, None)])
    auto = check(model, x, tmp_path, 2)
    assert "qc8w_dwconv2d_chw" not in auto, auto


def model_bytes(res):
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("memory ")][0]
    return int(line.split("model_bytes=")[1].split()[0])


@pytest.mark.parametrize("backend", ["auto", "reference"])
def test_packed_weights_stored_once(backend, tmp_path):
    """Weights stored once: a QLinearConv's packed weights replace the IR's copy (freed at load), unless
    something else still needs it: the same weight initializer also a graph output must be kept and
    give its bytes. model_bytes (q8rt-run --memory) of that model exceeds the plain one by at least
    the weight's size (they are equal when nothing is freed); outputs equal ONNX Runtime's."""
    rng = np.random.default_rng(5)
    model, x = edge_conv(rng, 64, 96, 3, 1, 1, 1, 1, (20, 40))  # 55 KiB of int8 weights
    shared = onnx.ModelProto()
    shared.CopyFrom(model)
    shared.graph.output.extend([helper.make_tensor_value_info("w", TensorProto.INT8, None)])
    sizes = {}
    for name, m in (("plain", model), ("shared", shared)):
        path = h.save_model(m, tmp_path / f"{name}.onnx")
        xp = h.save_npy(tmp_path / "x.npy", x)
        res = h.run_q8rt(path, {"x": xp}, tmp_path / name, extra=["--memory", "--backend", backend]).assert_ok()
        ref = ort_noopt(m, {"x": x})
        for o in m.graph.output:
            h.assert_same_bytes(res.output(o.name), ref[o.name], f"{name} {o.name}")
        sizes[name] = model_bytes(res)
    assert sizes["shared"] - sizes["plain"] >= 64 * 96 * 9, sizes
