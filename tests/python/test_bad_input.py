"""Bad input: every case must end with exit status > 0 (no signal, no crash), exactly one stderr line
starting "q8rt-run: error:", a message naming what is at fault (node, attribute, initializer,
input), and — under ASan/UBSan — no sanitizer report.

Models are built with onnx.helper and written with SerializeToString() (no checker: most are
intentionally invalid).
"""

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h

NODE = "conv_main"
QNODE = "quant_main"
IN = "image_in"
X_SHAPE = [1, 3, 8, 8]


# ---- a valid base model, with knobs to break it ---------------------------------------------------

def conv_model(*, w=None, w_dims=None, x_shape=None, attrs=None, inits_override=None, drop_init=None,
               rename_input=None, opset=13, extra_nodes=(), x_type=TensorProto.UINT8,
               scale_inputs=()) -> "onnx.ModelProto":  # noqa: F821
    """QLinearConv u8 x s8 per-channel: image_in [1,3,8,8] -> conv 3x3 pad 1, 4 channels -> y."""
    rng = np.random.default_rng(7)
    wt = w if w is not None else rng.integers(-128, 128, size=(4, 3, 3, 3)).astype(np.int8)
    inits = {
        "xq_scale": h.tensor("xq_scale", np.float32(0.02)),
        "xq_zero": h.tensor("xq_zero", np.uint8(128)),
        "W_filter": h.tensor("W_filter", wt),
        "W_filter_scale": h.tensor("W_filter_scale", np.array([0.01, 0.02, 0.03, 0.04], np.float32)),
        "W_filter_zero": h.tensor("W_filter_zero", np.zeros(4, np.int8)),
        "yq_scale": h.tensor("yq_scale", np.float32(0.5)),
        "yq_zero": h.tensor("yq_zero", np.uint8(100)),
        "B_bias": h.tensor("B_bias", np.array([1, -2, 3, -4], np.int32)),
    }
    for name, t in (inits_override or {}).items():
        t.name = name
        inits[name] = t
    if drop_init:
        del inits[drop_init]
    node_inputs = [IN, "xq_scale", "xq_zero", "W_filter", "W_filter_scale", "W_filter_zero", "yq_scale",
                   "yq_zero", "B_bias"]
    if rename_input:
        node_inputs = [rename_input.get(n, n) for n in node_inputs]
    a = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    a.update(attrs or {})
    a = {k: v for k, v in a.items() if v is not None}
    node = helper.make_node("QLinearConv", node_inputs, ["y"], name=NODE, **a)
    graph_inputs = [helper.make_tensor_value_info(IN, x_type, x_shape or X_SHAPE)]
    for name in scale_inputs:  # constants demoted to graph inputs
        t = inits.pop(name)
        graph_inputs.append(helper.make_tensor_value_info(name, t.data_type, list(t.dims)))
    return h.make_model([node, *extra_nodes], graph_inputs,
                        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], list(inits.values()),
                        opset=opset)


def quant_model(*, scale=np.float32(0.05), zp=np.uint8(10), x_shape=None, attrs=None, op="QuantizeLinear",
                opset=13):
    node = helper.make_node(op, [IN, "q_scale", "q_zero"], ["y"], name=QNODE, **(attrs or {}))
    return h.make_model([node], [helper.make_tensor_value_info(IN, TensorProto.FLOAT, x_shape or [2, 3, 4])],
                        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
                        [h.tensor("q_scale", np.asarray(scale)), h.tensor("q_zero", np.asarray(zp))],
                        opset=opset)


def raw_tensor(name, data_type, dims, raw: bytes) -> TensorProto:
    t = TensorProto()
    t.name = name
    t.data_type = data_type
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def valid_bytes() -> bytes:
    return conv_model().SerializeToString()


def run_bytes(tmp_path: Path, data: bytes, inputs=None, extra=()):
    p = tmp_path / "bad.onnx"
    p.write_bytes(data)
    return h.run_q8rt(p, inputs, tmp_path / "out", extra=extra)


# ---- the valid base model really is valid ----------------------------------------------------------

def test_base_model_runs(tmp_path):
    """Guards the cases below: the unbroken model loads and runs, so every refusal is caused by the
    one thing each case breaks."""
    x = np.random.default_rng(1).integers(0, 256, size=X_SHAPE).astype(np.uint8)
    m = conv_model()
    xp = h.save_npy(tmp_path / "x.npy", x)
    res = run_bytes(tmp_path, m.SerializeToString(), {IN: xp}).assert_ok()
    h.assert_same_bytes(res.output("y"), h.run_ort(m, {IN: x})[0], "base model vs ORT")
    res = run_bytes(tmp_path, quant_model().SerializeToString()).assert_ok()
    assert res.output("y").shape == (2, 3, 4)


# ---- garbage bytes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fraction", [0.0005, 0.01, 0.25, 0.5, 0.75, 0.999])
def test_truncated_model(tmp_path, fraction):
    data = valid_bytes()
    cut = max(1, min(len(data) - 1, int(len(data) * fraction)))
    h.assert_clean_error(run_bytes(tmp_path, data[:cut]))


def test_truncated_model_every_prefix_of_header(tmp_path):
    """The first bytes (ir_version, producer, the start of the graph) cut at every position."""
    data = valid_bytes()
    for cut in range(0, 40, 3):
        h.assert_clean_error(run_bytes(tmp_path, data[:cut]))


@pytest.mark.parametrize("seed,size", [(1, 1), (2, 64), (3, 1000), (4, 65536)])
def test_random_bytes(tmp_path, seed, size):
    data = np.random.default_rng(seed).integers(0, 256, size=size).astype(np.uint8).tobytes()
    h.assert_clean_error(run_bytes(tmp_path, data))


def test_protobuf_that_is_not_a_model(tmp_path):
    t = h.tensor("some_tensor", np.arange(100, dtype=np.float32).reshape(10, 10))
    h.assert_clean_error(run_bytes(tmp_path, t.SerializeToString()))


def test_model_without_graph(tmp_path):
    m = conv_model()
    m.ClearField("graph")
    h.assert_clean_error(run_bytes(tmp_path, m.SerializeToString()), ["graph"])


# ---- broken graphs ---------------------------------------------------------------------------------

def bad_model_cases():
    nan, inf = np.float32("nan"), np.float32("inf")
    c = {}
    c["missing_initializer"] = (conv_model(rename_input={"W_filter": "W_nowhere"}), ["W_nowhere", NODE])
    c["float_weights"] = (conv_model(w=np.ones((4, 3, 3, 3), np.float32)), ["W_filter", NODE])
    c["int32_x_zero_point"] = (conv_model(inits_override={"xq_zero": h.tensor("", np.int32(128))}),
                               ["xq_zero", NODE])
    c["float_bias"] = (conv_model(inits_override={"B_bias": h.tensor("", np.zeros(4, np.float32))}),
                       ["B_bias", NODE])
    c["float_input_to_conv"] = (conv_model(x_type=TensorProto.FLOAT), [IN, NODE])
    for what, val in (("zero", 0.0), ("negative", -0.5), ("nan", nan), ("inf", inf)):
        c[f"{what}_x_scale"] = (conv_model(inits_override={"xq_scale": h.tensor("", np.float32(val))}),
                                ["xq_scale", NODE])
        c[f"{what}_y_scale"] = (conv_model(inits_override={"yq_scale": h.tensor("", np.float32(val))}),
                                ["yq_scale", NODE])
        c[f"{what}_w_scale"] = (conv_model(inits_override={"W_filter_scale": h.tensor(
            "", np.array([0.01, val, 0.03, 0.04], np.float32))}), ["W_filter_scale", NODE])
        c[f"{what}_quantize_scale"] = (quant_model(scale=np.float32(val)), ["q_scale", QNODE])
        c[f"{what}_dequantize_scale"] = (dequant_model(np.float32(val)), ["q_scale", "dequant_main"])
    c["zero_stride"] = (conv_model(attrs={"strides": [0, 1]}), ["strides", NODE])
    c["negative_stride"] = (conv_model(attrs={"strides": [1, -2]}), ["strides", NODE])
    c["zero_dilation"] = (conv_model(attrs={"dilations": [1, 0]}), ["dilations", NODE])
    c["negative_pads"] = (conv_model(attrs={"pads": [-1, 0, 0, 0]}), ["pads", NODE])
    c["pads_wrong_length"] = (conv_model(attrs={"pads": [1, 1]}), ["pads", NODE])
    c["kernel_shape_mismatch"] = (conv_model(attrs={"kernel_shape": [5, 5]}), ["kernel_shape", NODE])
    c["unknown_auto_pad"] = (conv_model(attrs={"auto_pad": "SAME_MIDDLE", "pads": None}), ["auto_pad", NODE])
    c["group_not_dividing"] = (conv_model(attrs={"group": 2}, w=np.ones((4, 1, 3, 3), np.int8)),
                               ["group", NODE])
    c["group_zero"] = (conv_model(attrs={"group": 0}), ["group", NODE])
    c["weight_channels_mismatch"] = (conv_model(w=np.ones((4, 5, 3, 3), np.int8)), ["W_filter", NODE])
    c["w_scale_wrong_length"] = (conv_model(inits_override={"W_filter_scale": h.tensor(
        "", np.full(5, 0.01, np.float32))}), ["W_filter_scale", NODE])
    c["bias_wrong_length"] = (conv_model(inits_override={"B_bias": h.tensor("", np.zeros(3, np.int32))}),
                              ["B_bias", NODE])
    c["kernel_larger_than_input_valid"] = (conv_model(x_shape=[1, 3, 2, 2],
                                                      attrs={"auto_pad": "VALID", "pads": None}), [NODE])
    c["kernel_larger_than_padded_input"] = (conv_model(x_shape=[1, 3, 1, 1], attrs={"pads": [0, 0, 0, 0]}),
                                            [NODE])
    c["input_dims_overflow_size_t"] = (quant_model(x_shape=[2**40, 2**40]), [IN, QNODE])
    c["conv_input_dims_overflow"] = (conv_model(x_shape=[2**32, 3, 2**32, 2**32]), [IN, NODE])
    # found by fuzz_struct: the dim reached the window arithmetic and overflowed int64 there
    c["conv_input_dim_int64_max"] = (conv_model(x_shape=[1, 3, 2**63 - 1, 8]), [IN])
    c["negative_input_dim"] = (conv_model(x_shape=[1, 3, -8, 8]), [IN, NODE])
    c["weight_dims_huge_tiny_raw_data"] = (conv_model(inits_override={"W_filter": raw_tensor(
        "", TensorProto.INT8, [2**31, 2**31, 3, 3], b"\x01" * 9)}), ["W_filter", NODE])
    c["weight_dims_overflow_int64_product"] = (conv_model(inits_override={"W_filter": raw_tensor(
        "", TensorProto.INT8, [2**62, 2**62, 3, 3], b"\x01" * 9)}), ["W_filter", NODE])
    c["weight_negative_dim"] = (conv_model(inits_override={"W_filter": raw_tensor(
        "", TensorProto.INT8, [-4, 3, 3, 3], b"\x01" * 108)}), ["W_filter", NODE])
    c["weight_raw_data_short"] = (conv_model(inits_override={"W_filter": raw_tensor(
        "", TensorProto.INT8, [4, 3, 3, 3], b"\x01" * 107)}), ["W_filter", NODE])
    c["weight_external_data_escape"] = (conv_model(inits_override={"W_filter": external_tensor(
        "../../../../../../etc/passwd")}), ["W_filter", "external", NODE])
    c["weight_external_data_absolute"] = (conv_model(inits_override={"W_filter": external_tensor(
        "/etc/passwd")}), ["W_filter", "external", NODE])
    c["scale_is_graph_input"] = (conv_model(scale_inputs=["xq_scale"]), ["xq_scale", NODE])
    c["weight_is_graph_input"] = (conv_model(scale_inputs=["W_filter"]), ["W_filter", NODE])
    c["rank_too_high"] = (quant_model(x_shape=[1] * 9), [IN, QNODE])
    c["quantize_axis_out_of_range"] = (quant_model(scale=np.full(3, 0.05, np.float32), zp=np.zeros(3, np.uint8),
                                                   attrs={"axis": 5}), ["axis", QNODE])
    c["quantize_per_axis_length_mismatch"] = (quant_model(scale=np.full(5, 0.05, np.float32),
                                                          zp=np.zeros(5, np.uint8), attrs={"axis": 1}),
                                              ["q_scale", "axis", QNODE])
    c["unknown_op"] = (unknown_op_model(), ["FrobnicateQ", "mystery_node"])
    c["unknown_domain"] = (unknown_op_model(domain="com.example.secret"), ["com.example.secret", "mystery_node"])
    c["opset_6"] = (quant_model(opset=6), ["opset 6"])
    c["quantize_linear_at_opset_9"] = (quant_model(opset=9), ["QuantizeLinear", "opset 9"])
    c["cycle"] = (cycle_model(), ["cyc_a", "cyc_b", "cycle"])
    c["undefined_graph_output"] = (undefined_output_model(), ["y_nothing"])
    c["duplicate_output_name"] = (duplicate_output_model(), ["t_dup"])
    return c


def dequant_model(scale):
    node = helper.make_node("DequantizeLinear", [IN, "q_scale", "q_zero"], ["y"], name="dequant_main")
    return h.make_model([node], [helper.make_tensor_value_info(IN, TensorProto.UINT8, [2, 3])],
                        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                        [h.tensor("q_scale", np.asarray(scale, np.float32)), h.tensor("q_zero", np.uint8(3))])


def external_tensor(location: str) -> TensorProto:
    t = TensorProto()
    t.data_type = TensorProto.INT8
    t.dims.extend([4, 3, 3, 3])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", "108")):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def unknown_op_model(domain=""):
    node = helper.make_node("FrobnicateQ", [IN], ["y"], name="mystery_node", domain=domain or None)
    m = h.make_model([node], [helper.make_tensor_value_info(IN, TensorProto.UINT8, [2, 3])],
                     [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], [])
    if domain:
        m.opset_import.append(helper.make_opsetid(domain, 1))
    return m


def _q_node(name, src, dst):
    return helper.make_node("QuantizeLinear", [src, "q_scale", "q_zero"], [dst], name=name)


def cycle_model():
    # cyc_a reads cyc_b's output and vice versa (types are nonsense too; the cycle must be found).
    nodes = [helper.make_node("DequantizeLinear", ["t_b", "q_scale", "q_zero"], ["t_a"], name="cyc_a"),
             _q_node("cyc_b", "t_a", "t_b"),
             helper.make_node("DequantizeLinear", ["t_b", "q_scale", "q_zero"], ["y"], name="cyc_out")]
    return h.make_model(nodes, [helper.make_tensor_value_info(IN, TensorProto.FLOAT, [2, 3])],
                        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                        [h.tensor("q_scale", np.float32(0.1)), h.tensor("q_zero", np.uint8(3))])


def undefined_output_model():
    m = quant_model()
    m.graph.output.append(helper.make_tensor_value_info("y_nothing", TensorProto.UINT8, None))
    return m


def duplicate_output_model():
    nodes = [_q_node("dup_1", IN, "t_dup"), _q_node("dup_2", IN, "t_dup"),
             helper.make_node("DequantizeLinear", ["t_dup", "q_scale", "q_zero"], ["y"], name="dq")]
    return h.make_model(nodes, [helper.make_tensor_value_info(IN, TensorProto.FLOAT, [2, 3])],
                        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                        [h.tensor("q_scale", np.float32(0.1)), h.tensor("q_zero", np.uint8(3))])


BAD_MODELS = bad_model_cases()


@pytest.mark.parametrize("name", sorted(BAD_MODELS))
def test_bad_model(tmp_path, name):
    model, any_of = BAD_MODELS[name]
    h.assert_clean_error(run_bytes(tmp_path, model.SerializeToString()), any_of)


# ---- bad inputs at run time -----------------------------------------------------------------------

def _run_with_input(tmp_path, array_or_bytes, suffix=".npy", name=IN):
    p = tmp_path / f"in{suffix}"
    if isinstance(array_or_bytes, bytes):
        p.write_bytes(array_or_bytes)
    elif suffix == ".pb":
        h.save_pb(p, array_or_bytes)
    else:
        h.save_npy(p, array_or_bytes)
    return run_bytes(tmp_path, valid_bytes(), {name: p})


@pytest.mark.parametrize("shape", [(1, 3, 5, 5), (1, 3, 8), (1, 4, 8, 8), (2, 3, 8, 8, 1), (0, 3, 8, 8)])
def test_input_wrong_shape(tmp_path, shape):
    h.assert_clean_error(_run_with_input(tmp_path, np.zeros(shape, np.uint8)), [IN])


@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.float64, np.uint16, np.int64])
def test_input_wrong_dtype(tmp_path, dtype):
    h.assert_clean_error(_run_with_input(tmp_path, np.zeros(X_SHAPE, dtype)), [IN])


def test_input_wrong_shape_pb(tmp_path):
    h.assert_clean_error(_run_with_input(tmp_path, np.zeros((1, 3, 4, 4), np.uint8), ".pb"), [IN])


def test_input_wrong_dtype_pb(tmp_path):
    h.assert_clean_error(_run_with_input(tmp_path, np.zeros(X_SHAPE, np.float32), ".pb"), [IN])


@pytest.mark.parametrize("kind", ["random", "truncated", "header_lies", "empty"])
def test_input_corrupt_npy(tmp_path, kind):
    good = tmp_path / "good.npy"
    h.save_npy(good, np.zeros(X_SHAPE, np.uint8))
    data = good.read_bytes()
    if kind == "random":
        data = np.random.default_rng(5).integers(0, 256, 300).astype(np.uint8).tobytes()
    elif kind == "truncated":
        data = data[:-10]
    elif kind == "header_lies":
        data = data.replace(b"(1, 3, 8, 8)", b"(1, 3, 9, 9)")
    else:
        data = b""
    h.assert_clean_error(_run_with_input(tmp_path, data), [IN, "in.npy"])


def test_input_corrupt_pb(tmp_path):
    t = h.tensor("", np.zeros(X_SHAPE, np.uint8))
    data = t.SerializeToString()[:-20]
    h.assert_clean_error(_run_with_input(tmp_path, data, ".pb"), [IN, "in.pb"])


def test_input_unknown_name(tmp_path):
    h.assert_clean_error(_run_with_input(tmp_path, np.zeros(X_SHAPE, np.uint8), name="nosuch_in"), ["nosuch_in"])


def test_input_missing_file(tmp_path):
    res = run_bytes(tmp_path, valid_bytes(), {IN: tmp_path / "does_not_exist.npy"})
    h.assert_clean_error(res, ["does_not_exist.npy"])


# ---- hostile attributes and shape inputs of Split, SpaceToDepth/DepthToSpace, Tile, Expand, Range,
# ConstantOfShape, Where, TopK, ArgMax/ArgMin, the normalizations, LSTM/GRU, the reductions, casts,
# data movement and window ops: one error line naming the node and the cause; no crash, no hang,
# no allocation of the absurd size asked for -----------------------------------------------------

def hostile_cases():
    from op_check import node_model

    f = np.zeros((2, 6), np.float32)
    img = np.zeros((1, 4, 6, 6), np.float32)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    c = {}

    def add(name, op, inputs, words, **kw):
        c[name] = (*node_model(op, inputs, **kw), words)

    add("split_sizes_not_summing", "Split", [("x", f), ("s", i64(2, 3))], ["sum"], n_out=2,
        attrs={"axis": 1}, inits=["s"], opset=13)
    add("split_negative_size", "Split", [("x", f), ("s", i64(7, -1))], ["split[1]"], n_out=2,
        attrs={"axis": 1}, inits=["s"], opset=13)
    add("split_attr_huge_sizes", "Split", [("x", f)], ["sum"], n_out=2,
        attrs={"axis": 1, "split": [2**62, 2**62]}, opset=11)
    add("split_count_mismatch", "Split", [("x", f), ("s", i64(1, 2, 3))], ["3 sizes"], n_out=2,
        attrs={"axis": 1}, inits=["s"], opset=13)
    add("split_num_outputs_too_many", "Split", [("x", f)], ["num_outputs"], n_out=5,
        attrs={"axis": 0, "num_outputs": 5}, opset=18)
    add("split_num_outputs_and_split", "Split", [("x", f), ("s", i64(3, 3))], ["num_outputs"], n_out=2,
        attrs={"axis": 1, "num_outputs": 2}, inits=["s"], opset=18)
    add("split_equal_not_dividing", "Split", [("x", np.zeros((5, 2), np.float32))], ["equal"], n_out=2, opset=13)
    add("split_axis_out_of_range", "Split", [("x", f)], ["axis"], n_out=2, attrs={"axis": 2}, opset=13)
    add("split_sizes_runtime", "Split", [("x", f), ("s", i64(3, 3))], ["run time"], n_out=2,
        attrs={"axis": 1}, opset=13)
    for b in (0, -2, 2**40):
        add(f"space_to_depth_blocksize_{b}", "SpaceToDepth", [("x", img)], ["blocksize"], attrs={"blocksize": b})
        add(f"depth_to_space_blocksize_{b}", "DepthToSpace", [("x", img)], ["blocksize"], attrs={"blocksize": b})
    add("space_to_depth_not_divisible", "SpaceToDepth", [("x", img)], ["multiple"], attrs={"blocksize": 4})
    add("space_to_depth_rank3", "SpaceToDepth", [("x", img[0])], ["rank"], attrs={"blocksize": 2})
    add("depth_to_space_channels", "DepthToSpace", [("x", img)], ["channels"], attrs={"blocksize": 3})
    add("depth_to_space_mode", "DepthToSpace", [("x", img)], ["mode"], attrs={"blocksize": 2, "mode": "XYZ"})
    add("tile_negative_repeats", "Tile", [("x", f), ("r", i64(1, -2))], ["repeats"], inits=["r"])
    add("tile_huge_repeats", "Tile", [("x", f), ("r", i64(10**12, 10**12))], ["large"], inits=["r"])
    add("tile_repeats_length", "Tile", [("x", f), ("r", i64(2))], ["repeats"], inits=["r"])
    add("tile_repeats_runtime", "Tile", [("x", f), ("r", i64(2, 2))], ["run time"])
    add("expand_negative_shape", "Expand", [("x", f), ("s", i64(2, -6))], ["negative"], inits=["s"])
    add("expand_not_broadcastable", "Expand", [("x", f), ("s", i64(2, 5))], ["broadcast"], inits=["s"])
    add("expand_huge", "Expand", [("x", f), ("s", i64(10**9, 10**9, 1, 6))], ["elements"], inits=["s"])
    add("range_zero_delta", "Range", [("a", i64(0)[0]), ("b", i64(5)[0]), ("d", i64(0)[0])], ["delta"],
        inits=["a", "b", "d"], opset=13)
    add("range_zero_delta_float", "Range", [("a", np.float32(0)), ("b", np.float32(5)), ("d", np.float32(0))],
        ["delta"], inits=["a", "b", "d"], opset=13)
    add("range_10e12_elements", "Range", [("a", i64(0)[0]), ("b", i64(10**12)[0]), ("d", i64(1)[0])],
        ["elements"], inits=["a", "b", "d"], opset=13)
    add("range_nan_limit", "Range", [("a", np.float32(0)), ("b", np.float32("nan")), ("d", np.float32(1))],
        ["elements"], inits=["a", "b", "d"], opset=13)
    add("range_inputs_runtime", "Range", [("a", i64(0)[0]), ("b", i64(10**12)[0]), ("d", i64(1)[0])],
        ["run time"], inits=["a", "d"], opset=13)
    add("constant_of_shape_negative", "ConstantOfShape", [("s", i64(3, -1))], ["negative"], inits=["s"])
    add("constant_of_shape_huge", "ConstantOfShape", [("s", i64(10**6, 10**6, 10**6))], ["elements"],
        inits=["s"])
    add("constant_of_shape_2gb", "ConstantOfShape", [("s", i64(2**29))], ["bytes"], inits=["s"])
    add("where_condition_float", "Where", [("c", f), ("x", f), ("y", f)], ["bool"])
    add("topk_k_larger_than_axis", "TopK", [("x", f), ("k", i64(7))], ["larger"], n_out=2, inits=["k"])
    add("topk_k_negative", "TopK", [("x", f), ("k", i64(-1))], ["k is"], n_out=2, inits=["k"])
    add("topk_k_huge", "TopK", [("x", f), ("k", i64(2**62))], ["larger"], n_out=2, inits=["k"])
    add("topk_k_runtime", "TopK", [("x", f), ("k", i64(2))], ["run time"], n_out=2)
    add("argmax_axis_out_of_range", "ArgMax", [("x", f)], ["axis"], attrs={"axis": 2})
    add("argmin_empty_axis", "ArgMin", [("x", np.zeros((3, 0), np.float32))], ["empty"], attrs={"axis": 1})
    add("layernorm_scale_mismatch", "LayerNormalization", [("x", f), ("s", np.ones(5, np.float32))], ["Scale"],
        inits=["s"], opset=17)
    add("groupnorm_groups_not_dividing", "GroupNormalization", [("x", img), ("s", np.ones(3, np.float32)),
                                                                ("b", np.ones(3, np.float32))], ["groups"],
        attrs={"num_groups": 3}, inits=["s", "b"], opset=18)
    add("groupnorm_zero_groups", "GroupNormalization", [("x", img), ("s", np.ones(4, np.float32)),
                                                        ("b", np.ones(4, np.float32))], ["num_groups"],
        attrs={"num_groups": 0}, inits=["s", "b"], opset=21)

    # the recurrent ops (LSTM, GRU): sizes, directions, activations, clip, layout
    t, i, hs = 3, 4, 5
    x = np.zeros((t, 1, i), np.float32)
    lstm = [("x", x), ("W", np.zeros((1, 4 * hs, i), np.float32)), ("R", np.zeros((1, 4 * hs, hs), np.float32))]
    gru = [("x", x), ("W", np.zeros((1, 3 * hs, i), np.float32)), ("R", np.zeros((1, 3 * hs, hs), np.float32))]
    wr = dict(inits=["W", "R"], opset=14)
    add("lstm_hidden_size_mismatch", "LSTM", lstm, ["W", "dimension"], attrs={"hidden_size": 7}, **wr)
    add("lstm_hidden_size_negative", "LSTM", lstm, ["hidden_size"], attrs={"hidden_size": -5}, **wr)
    add("lstm_hidden_size_huge", "LSTM", lstm, ["hidden_size"], attrs={"hidden_size": 2**40}, **wr)
    add("lstm_direction_unknown", "LSTM", lstm, ["direction"], attrs={"hidden_size": hs, "direction": "sideways"},
        **wr)
    add("lstm_activation_unknown", "LSTM", lstm, ["Frobnicate"],
        attrs={"hidden_size": hs, "activations": ["Sigmoid", "Frobnicate", "Tanh"]}, **wr)
    add("lstm_activations_count", "LSTM", lstm, ["activations"], attrs={"hidden_size": hs, "activations": ["Sigmoid"]},
        **wr)
    add("lstm_clip_negative", "LSTM", lstm, ["clip"], attrs={"hidden_size": hs, "clip": -1.0}, **wr)
    add("lstm_clip_nan", "LSTM", lstm, ["clip"], attrs={"hidden_size": hs, "clip": float("nan")}, **wr)
    add("lstm_layout_2", "LSTM", lstm, ["layout"], attrs={"hidden_size": hs, "layout": 2}, **wr)
    add("gru_hidden_size_mismatch", "GRU", gru, ["W", "dimension"], attrs={"hidden_size": 4}, **wr)
    add("gru_direction_unknown", "GRU", gru, ["direction"], attrs={"hidden_size": hs, "direction": ""}, **wr)

    # reductions, normalizations, element-wise ops with attributes, casts
    add("reducemin_axis_out_of_range", "ReduceMin", [("x", f), ("a", i64(5))], ["axis 5"], inits=["a"], opset=18)
    add("reduceprod_axis_repeated", "ReduceProd", [("x", f), ("a", i64(1, -1))], ["repeated"], inits=["a"],
        opset=18)
    add("reducel2_axes_runtime", "ReduceL2", [("x", f), ("a", i64(1))], ["axes"], opset=18)
    add("instancenorm_scale_length", "InstanceNormalization", [("x", img), ("s", np.ones(3, np.float32)),
                                                               ("b", np.ones(4, np.float32))], ["scale"],
        inits=["s", "b"])
    add("gelu_approximate_unknown", "Gelu", [("x", f)], ["approximate"], attrs={"approximate": "cubic"}, opset=20)
    add("prelu_slope_not_broadcastable", "PRelu", [("x", f), ("s", np.ones(5, np.float32))], ["broadcast"],
        inits=["s"])
    add("cast_to_unknown", "Cast", [("x", f)], ["'to'"], attrs={"to": 999})
    add("cast_to_string", "Cast", [("x", f)], ["'to'", "string"], attrs={"to": 8})
    add("softmax_axis_out_of_range", "Softmax", [("x", f)], ["axis"], attrs={"axis": 3})
    add("batchnorm_mean_length", "BatchNormalization",
        [("x", img), ("s", np.ones(4, np.float32)), ("b", np.zeros(4, np.float32)), ("m", np.zeros(3, np.float32)),
         ("v", np.ones(4, np.float32))], ["mean"], inits=["s", "b", "m", "v"], opset=15)
    add("batchnorm_training_mode", "BatchNormalization",
        [("x", img), ("s", np.ones(4, np.float32)), ("b", np.zeros(4, np.float32)), ("m", np.zeros(4, np.float32)),
         ("v", np.ones(4, np.float32))], ["training_mode"], inits=["s", "b", "m", "v"], opset=15,
        attrs={"training_mode": 1})

    # data movement and windows
    add("transpose_perm_repeated", "Transpose", [("x", f)], ["perm"], attrs={"perm": [0, 0]})
    add("transpose_perm_huge", "Transpose", [("x", f)], ["perm"], attrs={"perm": [0, 2**40]})
    add("gather_axis_out_of_range", "Gather", [("x", f), ("i", i64(0))], ["axis"], attrs={"axis": -3}, inits=["i"])
    add("gather_index_out_of_range", "Gather", [("x", f), ("i", i64(0, 9))], ["index 9"], attrs={"axis": 1},
        inits=["i"])
    add("concat_axis_2_pow_33", "Concat", [("x", f), ("z", f)], ["axis"], attrs={"axis": 2**33})
    add("flatten_axis_out_of_range", "Flatten", [("x", f)], ["axis"], attrs={"axis": 3})
    add("pad_mode_unknown", "Pad", [("x", f), ("p", i64(0, 1, 0, 1))], ["mode"], attrs={"mode": "mirror"},
        inits=["p"], opset=13)
    add("pad_2_pow_40", "Pad", [("x", f), ("p", i64(0, 2**40, 0, 2**40))], ["large"], inits=["p"], opset=13)
    add("pad_wrap_cropped_to_nothing", "Pad", [("x", f), ("p", i64(0, -7, 0, 2))], ["wrap", "axis 1"],
        attrs={"mode": "wrap"}, inits=["p"], opset=19)
    add("resize_mode_unknown", "Resize", [("x", img), ("", None), ("sc", np.array([1, 1, 2, 2], np.float32))],
        ["mode"], attrs={"mode": "bicubic_plus"}, inits=["sc"], opset=13)
    add("resize_scale_1e9", "Resize", [("x", img), ("", None), ("sc", np.array([1, 1, 1e9, 1e9], np.float32))],
        ["large"], inits=["sc"], opset=13)
    add("resize_scale_nan", "Resize", [("x", img), ("", None), ("sc", np.array([1, 1, np.nan, 2], np.float32))],
        ["scales"], inits=["sc"], opset=13)
    add("resize_scales_and_sizes", "Resize",
        [("x", img), ("", None), ("sc", np.array([1, 1, 2, 2], np.float32)), ("sz", i64(1, 1, 8, 8))],
        ["exactly one"], inits=["sc", "sz"], opset=13)
    add("resize_scalar_no_scales_or_sizes", "Resize", [("x", np.float32(1.0))], ["exactly one"], opset=13)
    add("upsample_scales_empty", "Upsample", [("x", np.float32(1.0)), ("sc", np.zeros(0, np.float32))],
        ["scales", "empty"], inits=["sc"], opset=9)
    add("squeeze_axis_not_one", "Squeeze", [("x", f), ("a", i64(1))], ["not 1"], inits=["a"], opset=13)
    add("unsqueeze_axis_repeated", "Unsqueeze", [("x", f), ("a", i64(0, 0))], ["repeated"], inits=["a"], opset=13)
    add("slice_step_zero", "Slice", [("x", f), ("s", i64(0)), ("e", i64(2)), ("a", i64(1)), ("st", i64(0))],
        ["steps"], inits=["s", "e", "a", "st"], opset=13)
    add("reshape_two_minus_one", "Reshape", [("x", f), ("s", i64(-1, -1))], ["-1"], inits=["s"], opset=13)
    add("maxpool_kernel_2_pow_30", "MaxPool", [("x", img)], ["kernel_shape"], attrs={"kernel_shape": [2**30, 2]})
    add("maxpool_storage_order_2", "MaxPool", [("x", img)], ["storage_order"],
        attrs={"kernel_shape": [2, 2], "storage_order": 2})
    add("averagepool_no_kernel_shape", "AveragePool", [("x", img)], ["kernel_shape"])
    add("conv_group_2_pow_40", "Conv", [("x", img), ("w", np.zeros((4, 1, 3, 3), np.float32))], ["group"],
        attrs={"group": 2**40}, inits=["w"])
    add("gemm_transA_inner_mismatch", "Gemm", [("a", f), ("b", np.zeros((5, 3), np.float32))], ["inner"],
        attrs={"transA": 1}, inits=["b"])
    return c


HOSTILE = hostile_cases()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_attributes(tmp_path, name):
    model, feeds, words = HOSTILE[name]
    from op_check import save_input
    inputs = {n: save_input(tmp_path, n, v) for n, v in feeds.items()}
    res = h.run_q8rt(h.save_model(model, tmp_path / "m.onnx"), inputs, tmp_path / "out", timeout=60)
    msg = h.assert_clean_error(res, words)
    node = model.graph.node[0].name
    assert node in msg, f"error does not name node {node!r}: {msg}"


@pytest.mark.parametrize("raw", [b"a\nb\xf2c", b"\x01\xed\xa0\x80", b"\xe2\x82\xac\tZ"])
def test_error_message_one_clean_line(raw, tmp_path, q8rt_run):
    """Messages quote names from the model: control characters and bytes that are not UTF-8 in them
    (a bit-flipped node name) become '?', so the message stays one line of valid UTF-8 (a newline
    split it; an invalid byte reached the caller as is). Valid UTF-8 passes through unchanged."""
    node = helper.make_node("NoSuchOp", ["x"], ["y"], name="N" * len(raw))
    m = h.make_model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [])
    data = m.SerializeToString()
    assert data.count(b"N" * len(raw)) == 1
    path = tmp_path / "m.onnx"
    path.write_bytes(data.replace(b"N" * len(raw), raw))
    res = h.run_q8rt(path, {}, tmp_path / "out")
    msg = h.assert_clean_error(res, ["NoSuchOp"])
    assert "\ufffd" not in res.stderr, res.describe()
    if raw.startswith(b"\xe2\x82\xac"):
        assert "\u20ac?Z" in msg, msg
    else:
        assert "'a?b?c'" in msg or "'????'" in msg, msg
