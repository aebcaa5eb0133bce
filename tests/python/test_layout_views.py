"""Layout views: nodes that only move bytes (Reshape, Squeeze, Unsqueeze, Flatten, Identity,
Transpose) or read shapes (Shape) run on channels-last data without a layout change before them
when their output, channels-last or in its logical order, holds the same bytes (the planner tracks
each value's physical axis order). The idioms of PP-OCR rec: SVTR's flatten-then-transpose
(Shape -> Slice -> Concat computes Reshape's target, so the check is at bind) and back
(Reshape -> Transpose(0,3,1,2) -> conv), CRNN's Squeeze(H=1) -> Transpose(0,2,1). Every model is
compared byte for byte with ONNX Runtime (no optimizations) with the default backend and with
--backend reference; --explain must show no LayoutTranspose but the ones at the graph's edges.
Shapes that break the view at bind (a reshape mixing the channels in) go through a gather and
stay exact; hostile targets give a status."""

import os
from pathlib import Path

import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper

import q8rt_harness as h
from test_layouts import conv
from test_tables import model_of, ort_noopt, scalars

REPO = Path(__file__).resolve().parents[2]
MODELS = Path(os.environ.get("Q8RT_MODELS", REPO / "build" / "models"))


def run_both(model, feeds, tmp_path):
    """q8rt (auto and reference) against ORT; returns the auto run's --explain text."""
    path = h.save_model(model, tmp_path / "model.onnx")
    paths = {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in feeds.items()}
    ref = ort_noopt(model, feeds)
    auto = None
    for backend in ("auto", "reference"):
        res = h.run_q8rt(path, paths, tmp_path / backend, extra=["--explain", "--backend", backend]).assert_ok()
        if backend == "auto":
            auto = res.stdout
        for o in model.graph.output:
            h.assert_same_bytes(res.output(o.name), ref[o.name], f"{o.name} ({backend})")
    return auto


def transposes(explain):
    return [ln for ln in explain.splitlines() if "LayoutTranspose" in ln]


def base(rng, c, hw, symbolic):
    inits = [h.tensor("xs", np.float32(0.02)), h.tensor("xz", np.array(128, dtype=np.uint8))]
    x = rng.integers(0, 256, size=(1, c, *hw)).astype(np.uint8)
    shape = ["N", c, "H", "W"] if symbolic else list(x.shape)
    return inits, x, helper.make_tensor_value_info("x", TensorProto.UINT8, shape)


def flatten_by_shape(src, dst, inits, prefix, tail):
    """SVTR's Reshape to [N, C, -1] whose target comes from Shape -> Slice -> Concat."""
    inits += [h.tensor(f"{prefix}_s0", np.array([0], dtype=np.int64)),
              h.tensor(f"{prefix}_s2", np.array([2], dtype=np.int64)),
              h.tensor(f"{prefix}_tail", np.array(tail, dtype=np.int64))]
    return [helper.make_node("Shape", [src], [f"{prefix}_shape"], name=f"{prefix}_shape"),
            helper.make_node("Slice", [f"{prefix}_shape", f"{prefix}_s0", f"{prefix}_s2"], [f"{prefix}_nc"],
                             name=f"{prefix}_slice"),
            helper.make_node("Concat", [f"{prefix}_nc", f"{prefix}_tail"], [f"{prefix}_target"], axis=0,
                             name=f"{prefix}_concat"),
            helper.make_node("Reshape", [src, f"{prefix}_target"], [dst], name=f"{prefix}_reshape")]


@pytest.mark.parametrize("symbolic", [False, True], ids=["fixed", "symbolic"])
def test_svtr_flatten_transpose_and_back(symbolic, tmp_path):
    """conv -> Reshape [N,C,HW] (target from Shape) -> Transpose(0,2,1) -> DequantizeLinear ->
    Softmax over C (runs in the logical order [N,HW,C]) -> QuantizeLinear -> Reshape [N,H,W,C] ->
    Transpose(0,3,1,2) -> conv: both transposes and reshapes are copies, no layout change inside."""
    rng = np.random.default_rng(21)
    c, hw = 16, (3, 10)
    inits, x, xin = base(rng, c, hw, symbolic)
    inits += scalars(np.uint8, sq=1.0 / 256, zq=0) + [h.tensor("back", np.array([0, hw[0], hw[1], c], np.int64))]
    nodes = [conv(rng, "c1", "x", "a", c, c, inits)]
    nodes += flatten_by_shape("a", "flat", inits, "f", [-1])
    nodes += [helper.make_node("Transpose", ["flat"], ["seq"], perm=[0, 2, 1], name="to_seq"),
              helper.make_node("DequantizeLinear", ["seq", "c1_ys", "c1_yz"], ["seqf"], name="dq"),
              helper.make_node("Softmax", ["seqf"], ["sm"], axis=-1, name="softmax"),
              helper.make_node("QuantizeLinear", ["sm", "sq", "zq"], ["smq"], name="q"),
              helper.make_node("Reshape", ["smq", "back"], ["img"], name="unflatten"),
              helper.make_node("Transpose", ["img"], ["nchw"], perm=[0, 3, 1, 2], name="to_nchw"),
              conv(rng, "c2", "nchw", "y", c, c, inits)]
    nodes[-1].input[1], nodes[-1].input[2] = "sq", "zq"
    m = model_of(nodes, [xin], [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    out = run_both(m, {"x": x}, tmp_path)
    lts = transposes(out)
    assert len(lts) == 2, out  # the graph's input and output only
    assert "for QLinearConv 'c1'" in lts[0] and "graph outputs are NCHW" in lts[1], out
    for name in ("f_reshape", "to_seq", "to_nchw"):
        line = [ln for ln in out.splitlines() if f" {name} " in ln]
        assert len(line) == 1 and "a copy" in line[0], out
    assert "checked at bind" in [ln for ln in out.splitlines() if " f_reshape " in ln][0] or not symbolic, out


def test_squeeze_then_transpose(tmp_path):
    """CRNN's head: conv to H = 1 -> Squeeze(axis 2) -> Transpose(0,2,1) -> [N,W,C] graph output:
    the squeezed channels-last data is the output's bytes; one layout change (the input)."""
    rng = np.random.default_rng(23)
    c = 8
    inits, x, xin = base(rng, c, (1, 17), False)
    inits += [h.tensor("ax", np.array([2], dtype=np.int64))]
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             helper.make_node("Squeeze", ["a", "ax"], ["sq"], name="squeeze"),
             helper.make_node("Transpose", ["sq"], ["y"], perm=[0, 2, 1], name="to_seq")]
    m = model_of(nodes, [xin], [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    out = run_both(m, {"x": x}, tmp_path)
    assert len(transposes(out)) == 1, out


def test_unsqueeze_identity_flatten_keep_channels_last(tmp_path):
    """Identity, Unsqueeze of a spatial axis and Squeeze back keep channels-last between convs."""
    rng = np.random.default_rng(29)
    c = 8
    inits, x, xin = base(rng, c, (5, 6), False)
    inits += [h.tensor("ax", np.array([3], dtype=np.int64))]
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             helper.make_node("Identity", ["a"], ["b"], name="ident"),
             helper.make_node("Unsqueeze", ["b", "ax"], ["u"], name="unsq"),
             helper.make_node("Squeeze", ["u", "ax"], ["s"], name="sq"),
             conv(rng, "c2", "s", "y", c, c, inits)]
    nodes[-1].input[1], nodes[-1].input[2] = "c1_ys", "c1_yz"
    m = model_of(nodes, [xin], [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    out = run_both(m, {"x": x}, tmp_path)
    assert len(transposes(out)) == 2, out


@pytest.mark.parametrize("symbolic", [False, True], ids=["fixed", "symbolic"])
def test_reshape_mixing_channels(symbolic, tmp_path):
    """Reshape [N,C,H,W] -> [N, C*H, W] is no view of channels-last data. Known dims: the planner
    moves the data to NCHW first. Target known only at bind: planned as a view, the bound shapes
    break it and the step gathers. Exact either way."""
    rng = np.random.default_rng(31)
    c = 8
    inits, x, xin = base(rng, c, (3, 7), symbolic)
    inits += [h.tensor("s0", np.array([0], dtype=np.int64)), h.tensor("s1", np.array([1], dtype=np.int64)),
              h.tensor("s3", np.array([3], dtype=np.int64)), h.tensor("s4", np.array([4], dtype=np.int64)),
              h.tensor("m1", np.array([-1], dtype=np.int64))]
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             helper.make_node("Shape", ["a"], ["sh"], name="shape"),
             helper.make_node("Slice", ["sh", "s0", "s1"], ["n"], name="n"),
             helper.make_node("Slice", ["sh", "s3", "s4"], ["w"], name="w"),
             helper.make_node("Concat", ["n", "m1", "w"], ["t"], axis=0, name="target"),
             helper.make_node("Reshape", ["a", "t"], ["y"], name="mix")]
    m = model_of(nodes, [xin], [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    out = run_both(m, {"x": x}, tmp_path)
    line = [ln for ln in out.splitlines() if " mix " in ln]
    assert len(line) == 1, out
    if symbolic:
        assert "else a gather" in line[0], out


@pytest.mark.parametrize("perm", [[3, 0, 1, 2], [0, 2, 3, 1], [2, 3, 0, 1]])
def test_transpose_of_channels_last_any_perm(perm, tmp_path):
    """Any Transpose of channels-last data is one step: a copy when the result is in a canonical
    order, else one strided copy from the physical order (CRNN's Transpose(3,0,1,2))."""
    rng = np.random.default_rng(37)
    c = 8
    inits, x, xin = base(rng, c, (4, 9), False)
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             helper.make_node("Transpose", ["a"], ["y"], perm=perm, name="tr")]
    m = model_of(nodes, [xin], [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    out = run_both(m, {"x": x}, tmp_path)
    assert not any("(to NCHW)" in ln and "Transpose 'tr'" in ln for ln in transposes(out)), out


def test_float_stretch_unary_pool_concat_channels_last(tmp_path):
    """rec qop_u8s8_pc_conv's stretches: DequantizeLinear -> Clip, Sigmoid, HardSigmoid, Mul ->
    float AveragePool and a float Concat -> QuantizeLinear run channels-last between convs."""
    rng = np.random.default_rng(41)
    c = 8
    inits, x, xin = base(rng, c, (6, 10), False)
    inits += scalars(np.uint8, sq=0.01, zq=3) + [h.tensor("lo", np.float32(0.0)), h.tensor("hi", np.float32(2.0))]
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             helper.make_node("DequantizeLinear", ["a", "c1_ys", "c1_yz"], ["af"], name="dq"),
             helper.make_node("Clip", ["af", "lo", "hi"], ["cl"], name="clip"),
             helper.make_node("Sigmoid", ["af"], ["sg"], name="sig"),
             helper.make_node("HardSigmoid", ["cl"], ["hs"], name="hsig"),
             helper.make_node("Mul", ["sg", "hs"], ["m"], name="mul"),
             helper.make_node("AveragePool", ["m"], ["p"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
                              name="apool"),
             helper.make_node("Concat", ["p", "sg"], ["cat"], axis=1, name="cat"),
             helper.make_node("QuantizeLinear", ["cat", "sq", "zq"], ["q"], name="q"),
             conv(rng, "c2", "q", "y", 2 * c, c, inits)]
    nodes[-1].input[1], nodes[-1].input[2] = "sq", "zq"
    m = model_of(nodes, [xin], [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    out = run_both(m, {"x": x}, tmp_path)
    assert len(transposes(out)) == 2, out
    for name in ("dq", "clip", "sig", "hsig", "mul", "apool", "cat", "q"):
        line = [ln for ln in out.splitlines() if f" {name} " in ln]
        assert len(line) == 1 and "channels-last" in line[0], out


@pytest.mark.parametrize("tail", [[7], [-1, 0, 5]], ids=["count", "rank"])
def test_hostile_reshape_target_on_channels_last(tail, tmp_path):
    """A computed target that does not fit the element count (or asks for an impossible rank)
    on channels-last data: one error line naming the node, no crash."""
    rng = np.random.default_rng(43)
    c = 8
    inits, x, xin = base(rng, c, (3, 5), True)
    nodes = [conv(rng, "c1", "x", "a", c, c, inits)]
    nodes += flatten_by_shape("a", "flat", inits, "f", tail)
    nodes += [helper.make_node("Transpose", ["flat"], ["y"], name="tr")]
    m = model_of(nodes, [xin], [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    path = h.save_model(m, tmp_path / "model.onnx")
    res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / "x.npy", x)}, tmp_path / "o")
    h.assert_clean_error(res, ["f_reshape"])


def layout_changes(explain):
    """LayoutTranspose and LayoutCopy steps (the planner's layout changes)."""
    return [ln for ln in explain.splitlines() if "LayoutTranspose" in ln or "LayoutCopy" in ln]


@pytest.mark.parametrize("c_out", [1, 8], ids=["one_channel", "pooled"])
def test_layout_change_of_size_one_axes_is_a_copy(c_out, tmp_path):
    """A layout change that moves only axes of size 1 is a copy: a conv with one output channel
    ([N,1,H,W]) or a global pool's [N,C,1,1] as NCHW graph outputs. --explain says why; bytes as
    ORT's on auto and reference."""
    rng = np.random.default_rng(47)
    c = 8
    inits, x, xin = base(rng, c, (5, 7), False)
    inits += scalars(np.uint8, sp=0.1, zp=7)
    nodes = [conv(rng, "c1", "x", "a", c, c_out, inits)]
    if c_out > 1:
        nodes.append(helper.make_node("QLinearGlobalAveragePool", ["a", "c1_ys", "c1_yz", "sp", "zp"], ["y"],
                                      name="gap", domain="com.microsoft"))
    else:
        nodes[-1].output[0] = "y"
    m = model_of(nodes, [xin], [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    out = run_both(m, {"x": x}, tmp_path)
    assert len(transposes(out)) == 1, out  # the input's
    copies = [ln for ln in out.splitlines() if "LayoutCopy" in ln]
    assert len(copies) == 1 and "graph outputs are NCHW" in copies[0], out
    assert "only axes of size 1 move" in copies[0] and "copy__scalar" in copies[0], out


def test_layout_change_size_one_at_bind(tmp_path):
    """Dims known only at bind: the planned transpose copies when the bound shapes move only
    axes of size 1 (an input of one pixel), and transposes otherwise; the same bytes as ORT."""
    rng = np.random.default_rng(53)
    c = 8
    inits, _, xin = base(rng, c, (1, 1), True)
    nodes = [conv(rng, "c1", "x", "a", c, c, inits), conv(rng, "c2", "a", "y", c, c, inits)]
    nodes[-1].input[1], nodes[-1].input[2] = "c1_ys", "c1_yz"
    m = model_of(nodes, [xin], [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    for hw in [(1, 1), (3, 4)]:
        x = rng.integers(0, 256, size=(1, c, *hw)).astype(np.uint8)
        out = run_both(m, {"x": x}, tmp_path / f"{hw[0]}x{hw[1]}")
        lts = transposes(out)
        assert len(lts) == 2 and all("a copy if the bound shapes" in ln for ln in lts), out


# Real PP-OCR models: every setting changes layout only at the graph's edges (det's head runs
# channels-last to its one-channel output, which leaves through a copy).
def edge_values(path):
    """A graph input's own values: the input and its QuantizeLinear / DynamicQuantizeLinear output."""
    g = onnx.load(path, load_external_data=False).graph
    init = {i.name for i in g.initializer}
    ins = {i.name for i in g.input if i.name not in init}
    edge = set(ins)
    for n in g.node:
        if n.op_type in ("QuantizeLinear", "DynamicQuantizeLinear") and n.input and n.input[0] in ins:
            edge.add(n.output[0])
    return sorted(ins)[0], edge


PPOCR = sorted(f for kind in ("det", "rec", "cls") for f in (MODELS / kind).glob("*.onnx"))


@pytest.mark.skipif(not PPOCR, reason="no models under build/models (make models)")
def test_ppocr_models_change_layout_only_at_graph_edges():
    """Every PP-OCR model under build/models/{det,rec,cls} (every setting, float and dyn
    included): a LayoutTranspose only at the graph's edges (a graph input's value going
    channels-last for the first conv, or an NCHW graph output); each says why."""
    bad = []
    for f in PPOCR:
        name, edge = edge_values(f)
        res = h.run_q8rt(f, {name: f.parent / "input.npy"}, extra=["--explain"]).assert_ok()
        for ln in transposes(res.stdout):
            value = ln.split()[2].removesuffix("#nhwc")
            at_input = "NCHW -> NHWC for " in ln and value in edge
            if not (at_input or "graph outputs are NCHW" in ln):
                bad.append(f"{f.relative_to(MODELS)}: {ln.strip()[:200]}")
        for ln in layout_changes(res.stdout):  # each says why
            assert "NCHW -> NHWC" in ln or "NHWC -> NCHW" in ln, f"{f.name}: {ln}"
    assert not bad, "layout changes inside the graph:\n" + "\n".join(bad)


@pytest.mark.parametrize("m", [16, 3], ids=["nhwc_kernel", "channel_major_copy"])
def test_float_conv_transpose_channels_last(m, tmp_path):
    """conv -> DequantizeLinear -> ConvTranspose (k2 s2, bias) -> QuantizeLinear -> conv: the float
    ConvTranspose runs channels-last (f32-deconv-nhwc from 8 output channels per group, else
    f32-deconv on a channel-major copy of its input), no layout change inside. Same bytes as the
    reference backend (NCHW, the scalar twin) and at 1 and 3 threads; ONNX Runtime's ConvTranspose
    sums in another order, so its bytes may differ by one quantization step."""
    rng = np.random.default_rng(59)
    c = 16
    inits, x, xin = base(rng, c, (6, 9), False)
    inits += scalars(np.uint8, sq=0.05, zq=128)
    inits += [h.tensor("wt", rng.uniform(-0.5, 0.5, size=(c, m, 2, 2)).astype(np.float32)),
              h.tensor("bt", rng.uniform(-1, 1, size=m).astype(np.float32))]
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             helper.make_node("DequantizeLinear", ["a", "c1_ys", "c1_yz"], ["af"], name="dq"),
             helper.make_node("ConvTranspose", ["af", "wt", "bt"], ["up"], kernel_shape=[2, 2], strides=[2, 2],
                              name="deconv"),
             helper.make_node("QuantizeLinear", ["up", "sq", "zq"], ["q"], name="q"),
             conv(rng, "c2", "q", "y", m, 8, inits)]
    nodes[-1].input[1], nodes[-1].input[2] = "sq", "zq"
    model = model_of(nodes, [xin], [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    path = h.save_model(model, tmp_path / "model.onnx")
    xp = h.save_npy(tmp_path / "x.npy", x)
    outs = {}
    for cfg in (["--backend", "reference"], ["--threads", "1"], ["--threads", "3"], ["--backend", "avx2"]):
        d = tmp_path / "_".join(cfg).strip("-")
        res = h.run_q8rt(path, {"x": xp}, d, extra=["--explain"] + cfg).assert_ok()
        outs[" ".join(cfg)] = res.output("y")
        if cfg[0] == "--threads":
            line = [ln for ln in res.stdout.splitlines() if " deconv " in ln]
            assert len(line) == 1 and "channels-last like its input" in line[0], res.stdout
            assert ("f32_deconv_nhwc" in line[0]) == (m >= 8), line[0]
            assert len(transposes(res.stdout)) == 2, res.stdout  # the input's and the output's
    ref = outs["--backend reference"]
    for k, v in outs.items():
        h.assert_same_bytes(v, ref, k)
    ort = ort_noopt(model, {"x": x})["y"]
    assert np.abs(ort.astype(np.int32) - ref.astype(np.int32)).max() <= 1


@pytest.mark.parametrize("pc_first", [False, True], ids=["const_b", "const_a"])
def test_det_head_channels_last(pc_first, tmp_path):
    """PP-OCR det's head: conv -> DequantizeLinear -> ConvTranspose -> QuantizeLinear -> QLinearAdd
    of a per-channel constant -> DequantizeLinear -> BatchNormalization -> Relu -> ConvTranspose to
    one channel (its input copied channel-major by bands of rows) -> QuantizeLinear -> QLinearAdd ->
    QLinearSigmoid -> DequantizeLinear. All of it runs channels-last: the only layout changes are
    the input's and the one-channel output's copy. The per-channel QLinearAdd (as input B, and as
    input A where ORT's operand order flips) keeps ORT's order; the bytes equal the reference
    backend's (NCHW, scalar twins) at 1 and 3 threads and on AVX2."""
    rng = np.random.default_rng(61)
    c, m = 16, 8
    inits, x, xin = base(rng, c, (30, 40), False)
    inits += scalars(np.uint8, sq=0.05, zq=120, sa=0.03, za=5, so=1.0 / 256, zo=0, sp=0.02, zp=100)
    inits += [h.tensor("w1", rng.uniform(-0.3, 0.3, size=(c, m, 2, 2)).astype(np.float32)),
              h.tensor("b1", rng.uniform(-1, 1, size=m).astype(np.float32)),
              h.tensor("w2", rng.uniform(-0.3, 0.3, size=(m, 1, 2, 2)).astype(np.float32)),
              h.tensor("b2", rng.uniform(-1, 1, size=1).astype(np.float32)),
              h.tensor("pc", rng.integers(0, 256, size=(1, m, 1, 1)).astype(np.uint8)),
              h.tensor("one", np.array(77, dtype=np.uint8).reshape(1, 1, 1, 1)),
              h.tensor("bn_s", rng.uniform(0.5, 2, size=m).astype(np.float32)),
              h.tensor("bn_b", rng.uniform(-1, 1, size=m).astype(np.float32)),
              h.tensor("bn_m", rng.uniform(-1, 1, size=m).astype(np.float32)),
              h.tensor("bn_v", rng.uniform(0.1, 2, size=m).astype(np.float32))]
    add_in = ["pc", "sq", "zq", "q1", "sq", "zq"] if pc_first else ["q1", "sq", "zq", "pc", "sq", "zq"]
    ms = "com.microsoft"
    nodes = [conv(rng, "c1", "x", "a", c, c, inits),
             helper.make_node("DequantizeLinear", ["a", "c1_ys", "c1_yz"], ["af"], name="dq1"),
             helper.make_node("ConvTranspose", ["af", "w1", "b1"], ["up1"], kernel_shape=[2, 2], strides=[2, 2],
                              name="deconv1"),
             helper.make_node("QuantizeLinear", ["up1", "sq", "zq"], ["q1"], name="q1"),
             helper.make_node("QLinearAdd", add_in + ["sa", "za"], ["s1"], name="pc_add", domain=ms),
             helper.make_node("DequantizeLinear", ["s1", "sa", "za"], ["s1f"], name="dq2"),
             helper.make_node("BatchNormalization", ["s1f", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"], name="bn"),
             helper.make_node("Relu", ["bn"], ["r"], name="relu"),
             helper.make_node("ConvTranspose", ["r", "w2", "b2"], ["up2"], kernel_shape=[2, 2], strides=[2, 2],
                              name="deconv2"),
             helper.make_node("QuantizeLinear", ["up2", "sq", "zq"], ["q2"], name="q2"),
             helper.make_node("QLinearAdd", ["q2", "sq", "zq", "one", "sq", "zq", "sp", "zp"], ["s2"], name="add2",
                              domain=ms),
             helper.make_node("QLinearSigmoid", ["s2", "sp", "zp", "so", "zo"], ["sg"], name="sig", domain=ms),
             helper.make_node("DequantizeLinear", ["sg", "so", "zo"], ["y"], name="dq3")]
    model = model_of(nodes, [xin], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    path = h.save_model(model, tmp_path / "model.onnx")
    xp = h.save_npy(tmp_path / "x.npy", x)
    outs = {}
    for cfg in (["--backend", "reference"], ["--threads", "1"], ["--threads", "3"], ["--backend", "avx2"]):
        d = tmp_path / "_".join(cfg).strip("-")
        res = h.run_q8rt(path, {"x": xp}, d, extra=["--explain"] + cfg).assert_ok()
        outs[" ".join(cfg)] = res.output("y")
        if cfg[0] == "--threads":
            out = res.stdout
            assert len(transposes(out)) == 1, out  # the input's
            copies = [ln for ln in out.splitlines() if "LayoutCopy" in ln]
            assert len(copies) == 1 and "only axes of size 1 move" in copies[0], out
            for name in ("deconv1", "q1", "pc_add", "bn", "relu", "deconv2", "q2"):
                line = [ln for ln in out.splitlines() if f" {name} " in ln]
                assert len(line) == 1 and "channels-last" in line[0], out
            assert "per-channel constant repeated" in [ln for ln in out.splitlines() if " pc_add " in ln][0], out
            assert "channel-major copy" in [ln for ln in out.splitlines() if " deconv2 " in ln][0], out
    ref = outs["--backend reference"]
    for k, v in outs.items():
        h.assert_same_bytes(v, ref, k)

