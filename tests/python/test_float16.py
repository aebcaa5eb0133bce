"""float16 models: q8rt computes them in float32, as ONNX Runtime's CPU provider does.

ORT has float32 kernels for every op and float16 kernels for a few (data movement, Max/Min/Clip,
LayerNormalization). Around a node without a float16 kernel it inserts Cast float16 -> float32 and
float32 -> float16, then removes every float32 -> float16 -> float32 pair, so values between such
nodes stay float32 and are rounded to float16 only at the graph's outputs and where a node with a
float16 kernel reads them. q8rt widens float16 constants at load (exact), converts float16 graph
inputs to float32 and float32 results to float16 graph outputs (round half to even), and makes a
model's Cast to float16 round (to float16 precision, kept as float32) exactly where a node that
reads it has a float16 kernel in ORT. These tests compare with ORT byte for byte and check the op
list against the installed ORT.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP, helper, numpy_helper

import q8rt_harness as h


def f16_model(nodes, inputs, outputs, inits=(), opset=17):
    return h.make_model(nodes, inputs, outputs, list(inits), opset=opset)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def run(tmp_path, model, feeds, tag="m"):
    path = h.save_model(model, tmp_path / f"{tag}.onnx")
    inputs = {k: h.save_npy(tmp_path / f"{tag}_{k}.npy", v) for k, v in feeds.items()}
    return h.run_q8rt(path, inputs, tmp_path / f"out_{tag}")


def check_vs_ort(tmp_path, model, feeds, tag="m", extra=()):
    want = h.run_ort(model, feeds)
    res = run(tmp_path, model, feeds, tag)
    res.assert_ok()
    for i, o in enumerate(model.graph.output):
        h.assert_same_bytes(res.output(o.name), want[i], f"{tag}/{o.name}")
    for ex in extra:
        path = tmp_path / f"{tag}.onnx"
        inputs = {k: tmp_path / f"{tag}_{k}.npy" for k in feeds}
        r = h.run_q8rt(path, inputs, tmp_path / f"out_{tag}_{ex[-1]}", extra=ex).assert_ok()
        for i, o in enumerate(model.graph.output):
            h.assert_same_bytes(r.output(o.name), want[i], f"{tag}/{o.name} {' '.join(ex)}")
    return want


# ---- ORT's float16 kernels (the loader's ort_float16_kernel list) --------------------------------

I64 = lambda n, v: numpy_helper.from_array(np.array(v, np.int64), n)  # noqa: E731
# op -> (extra inputs, attributes, initializers); the loader's list first, then ops without one
ROUNDING = {
    "Identity": ([], {}, []), "Reshape": (["s"], {}, [I64("s", [2, 12])]), "Flatten": ([], {}, []),
    "Transpose": ([], {"perm": [0, 2, 3, 1]}, []), "Squeeze": (["a"], {}, [I64("a", [0])]),
    "Unsqueeze": (["a"], {}, [I64("a", [0])]), "Concat": (["h"], {"axis": 1}, []),
    "Slice": (["st", "en"], {}, [I64("st", [0]), I64("en", [1])]),
    "Gather": (["i"], {"axis": 1}, [I64("i", [1, 0])]), "Split": ([], {"axis": 1}, []),
    "Expand": (["s"], {}, [I64("s", [2, 2, 3, 4])]),
    "GatherElements": (["i"], {"axis": 3}, [I64("i", np.zeros((1, 2, 3, 4)))]),
    "Clip": ([], {}, []), "Max": (["h"], {}, []), "Min": (["h"], {}, []),
    "LayerNormalization": (["g"], {"axis": -1}, [numpy_helper.from_array(np.ones(4, np.float16), "g")]),
}
NOT_ROUNDING = {
    "Relu": ([], {}, []), "Add": (["h"], {}, []), "Sigmoid": ([], {}, []), "Softmax": ([], {"axis": -1}, []),
    "Tile": (["s"], {}, [I64("s", [1, 1, 1, 2])]), "Pad": (["p"], {}, [I64("p", [0, 0, 1, 1, 0, 0, 1, 1])]),
    "MaxPool": ([], {"kernel_shape": [2, 2]}, []), "ReduceMean": ([], {"axes": [3]}, []),
}
X = (np.arange(1, 25, dtype=np.float32).reshape(1, 2, 3, 4) * np.float32(1.0001)).astype(np.float32)


def cast_op_cast(op, extra_in, attrs, inits):
    """x (float32) -> Cast(float16) -> op -> Cast(float32) -> y: y is rounded to float16 where ORT
    runs op on float16 data (x is not float16-exact)."""
    nodes = [helper.make_node("Cast", ["x"], ["h"], to=TP.FLOAT16),
             helper.make_node(op, ["h", *extra_in], ["o"], **attrs),
             helper.make_node("Cast", ["o"], ["y"], to=TP.FLOAT)]
    return f16_model(nodes, [vi("x", TP.FLOAT, [1, 2, 3, 4])], [vi("y", TP.FLOAT, None)], inits)


@pytest.mark.parametrize("op", list(ROUNDING) + list(NOT_ROUNDING))
def test_cast_to_float16_rounds_where_ort_does(op, tmp_path):
    rounding = op in ROUNDING
    extra_in, attrs, inits = (ROUNDING if rounding else NOT_ROUNDING)[op]
    m = cast_op_cast(op, extra_in, attrs, inits)
    (y,) = h.run_ort(m, {"x": X})
    # the list matches the installed ONNX Runtime
    assert np.array_equal(y, y.astype(np.float16).astype(np.float32)) == rounding, \
        f"ORT {'no longer' if rounding else 'now'} runs {op} on float16: update ort_float16_kernel in loader.c"
    res = run(tmp_path, m, {"x": X})
    if op == "GatherElements":  # in ORT's list, not an op q8rt runs
        h.assert_clean_error(res, ["GatherElements"])
        return
    got = res.assert_ok().output("y")
    if op in ("LayerNormalization", "Add", "Relu", "Max", "Min", "Clip", "Identity", "Reshape", "Flatten", "Transpose", "Squeeze",
              "Unsqueeze", "Concat", "Slice", "Gather", "Split", "Expand", "GatherElements", "Tile", "Pad", "MaxPool"):
        h.assert_same_bytes(got, y, op)  # exact ops: the bytes tell whether q8rt rounded where ORT does
    else:
        np.testing.assert_allclose(got, y, rtol=1e-6, atol=1e-7)


# ---- float16 graphs vs ORT -----------------------------------------------------------------------

def test_float16_conv_chain_vs_ort(tmp_path):
    """float16 input, initializers and output: Conv -> Relu -> Mul -> Sigmoid in float32, one
    rounding at the output; at 1 and 3 threads and on the reference backend."""
    rng = np.random.default_rng(16)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float16), "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float16), "b")
    c = numpy_helper.from_array(np.array([0.37], np.float16), "c")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["t"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["t"], ["r"]), helper.make_node("Mul", ["r", "c"], ["m"]),
             helper.make_node("Sigmoid", ["m"], ["y"])]
    m = f16_model(nodes, [vi("x", TP.FLOAT16, [1, 3, 11, 13])], [vi("y", TP.FLOAT16, [1, 8, 11, 13])], [w, b, c])
    x = rng.standard_normal((1, 3, 11, 13)).astype(np.float16)
    check_vs_ort(tmp_path, m, {"x": x}, extra=(["--threads", "3"], ["--backend", "reference"]))


def test_float16_cast_chains_vs_ort(tmp_path):
    """float32 I/O with a float16 region: Cast(float16) -> Unsqueeze (ORT keeps the float16 result:
    rounded) and Cast(float16) -> Mul (ORT drops the Cast pair: not rounded); float16 -> int32 and
    float16 -> float16 Casts."""
    nodes = [helper.make_node("Cast", ["x"], ["h"], to=TP.FLOAT16),
             helper.make_node("Unsqueeze", ["h", "a"], ["u"]),
             helper.make_node("Mul", ["u", "k"], ["um"]),
             helper.make_node("Cast", ["um"], ["y1"], to=TP.FLOAT),
             helper.make_node("Cast", ["x"], ["g"], to=TP.FLOAT16),
             helper.make_node("Mul", ["g", "k"], ["gm"]),
             helper.make_node("Cast", ["gm"], ["y2"], to=TP.FLOAT),
             helper.make_node("Cast", ["gm"], ["y3"], to=TP.INT32),
             helper.make_node("Cast", ["gm"], ["y4"], to=TP.FLOAT16)]
    inits = [I64("a", [0]), numpy_helper.from_array(np.array([3.0], np.float16), "k")]
    m = f16_model(nodes, [vi("x", TP.FLOAT, [2, 5])],
                  [vi("y1", TP.FLOAT, None), vi("y2", TP.FLOAT, None), vi("y3", TP.INT32, None),
                   vi("y4", TP.FLOAT16, None)], inits)
    x = (np.linspace(-40, 40, 10, dtype=np.float32).reshape(2, 5) * np.float32(1.0007)).astype(np.float32)
    want = check_vs_ort(tmp_path, m, {"x": x})
    assert not np.array_equal(want[0] / 3, want[1] / 3), "the two chains should differ (one rounds)"


def test_float16_io_passthrough_and_constant_output(tmp_path):
    """A float16 input that is also an output, a float16 initializer as an output, an output also
    read by another node, and special values (inf, -0, NaN, subnormals, 65504) in both."""
    special = np.array([0, -0.0, 1, -2, 65504, -65504, np.inf, -np.inf, np.nan, 6e-8, -6e-8, 3e-5],
                       np.float16)
    c = numpy_helper.from_array(special[::-1].copy(), "c")
    nodes = [helper.make_node("Add", ["x", "c"], ["s"]), helper.make_node("Neg", ["s"], ["n"])]
    m = f16_model(nodes, [vi("x", TP.FLOAT16, [12])],
                  [vi("x", TP.FLOAT16, [12]), vi("c", TP.FLOAT16, [12]), vi("s", TP.FLOAT16, [12]),
                   vi("n", TP.FLOAT16, [12])], [c])
    check_vs_ort(tmp_path, m, {"x": special})


def test_float16_initializer_in_int32_data(tmp_path):
    """TensorProto float16 data in int32_data (one bit pattern per element, what onnx.helper
    writes), in a Constant node and an initializer."""
    vals = np.array([1.5, -0.25, 1e-7, 300, -0.0, 65504], np.float16)
    t = helper.make_tensor("c", TP.FLOAT16, [6], vals.view(np.uint16).astype(np.int32).tolist())
    assert len(t.int32_data) == 6 and not t.raw_data
    k = helper.make_tensor("kv", TP.FLOAT16, [1], [int(np.array([0.1], np.float16).view(np.uint16)[0])])
    nodes = [helper.make_node("Constant", [], ["k"], value=k),
             helper.make_node("Mul", ["x", "c"], ["m"]), helper.make_node("Add", ["m", "k"], ["y"])]
    m = f16_model(nodes, [vi("x", TP.FLOAT16, [6])], [vi("y", TP.FLOAT16, [6])], [t])
    check_vs_ort(tmp_path, m, {"x": np.linspace(-3, 3, 6).astype(np.float16)})


def test_float16_conversions_match_numpy(tmp_path):
    """Every float16 bit pattern widened, and float32 values at and around every float16 midpoint
    (ties, one float32 ulp either side), the overflow edge and the subnormal range rounded: the
    bytes NumPy's conversions give (round half to even)."""
    halves = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    m1 = f16_model([helper.make_node("Cast", ["x"], ["y"], to=TP.FLOAT)], [vi("x", TP.FLOAT16, [65536])],
                   [vi("y", TP.FLOAT, [65536])])
    res = run(tmp_path, m1, {"x": halves}, "widen").assert_ok()
    h.assert_same_bytes(res.output("y"), halves.astype(np.float32), "widen")

    finite = halves[np.isfinite(halves)].astype(np.float32)
    finite = np.unique(finite)
    mids = ((finite[:-1].astype(np.float64) + finite[1:]) / 2).astype(np.float32)  # exact in float32
    assert np.array_equal(mids.astype(np.float64), (finite[:-1].astype(np.float64) + finite[1:]) / 2)
    around = np.concatenate([mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))])
    edge = np.array([65504, 65519.996, 65520, 65535, 65536, 1e30, np.inf, -np.inf, np.nan, -np.nan, 2 ** -25,
                     2 ** -24, 1.5 * 2 ** -25, 2 ** -26, 1e-30, -1e-30], np.float32)
    xs = np.concatenate([finite, around, edge, -around]).astype(np.float32)
    m2 = f16_model([helper.make_node("Cast", ["x"], ["y"], to=TP.FLOAT16)], [vi("x", TP.FLOAT, [xs.size])],
                   [vi("y", TP.FLOAT16, [xs.size])])
    res = run(tmp_path, m2, {"x": xs}, "narrow").assert_ok()
    with np.errstate(over="ignore"):
        want = xs.astype(np.float16)
    got = res.output("y")
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    h.assert_same_bytes(got[~nan], want[~nan], "narrow")


def test_float16_input_wrong_dtype_refused(tmp_path):
    m = f16_model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", TP.FLOAT16, [4])], [vi("y", TP.FLOAT16, [4])])
    res = run(tmp_path, m, {"x": np.zeros(4, np.float32)})
    h.assert_clean_error(res, ["float16"])


def test_float16_output_declared_for_integer_value_refused(tmp_path):
    m = f16_model([helper.make_node("Shape", ["x"], ["y"])], [vi("x", TP.FLOAT, [4])], [vi("y", TP.FLOAT16, [1])])
    res = run(tmp_path, m, {"x": np.zeros(4, np.float32)})
    h.assert_clean_error(res, ["y"])


# ---- ORT's float16 nodes next to computed values (its InsertCastTransformer replayed) -------------
# A node with a float16 kernel stays on float16 data unless ORT finds it "isolated" (every node
# feeding its float16 input and every node reading its float16 output runs in float32, and it
# makes no graph output); then the float16 value a float32 node computed is rounded for it.

RNG = np.random.default_rng(19)
XH = (RNG.standard_normal((4, 64)) * 3).astype(np.float16)
K1 = numpy_helper.from_array(np.array([1.37], np.float16), "k1")
K2 = numpy_helper.from_array(np.array([0.71], np.float16), "k2")


def f16_graph(nodes, outputs, inits, tmp_path, tag, x=XH, extra=()):
    m = f16_model(nodes, [vi("x", TP.FLOAT16, list(x.shape))], [vi(o, TP.FLOAT16, None) for o in outputs], inits)
    return check_vs_ort(tmp_path, m, {"x": x}, tag, extra=extra)


def test_float16_node_making_a_graph_output_reads_rounded(tmp_path):
    """Mul -> m -> Reshape -> r (a graph output) -> Mul: the Reshape is not isolated (it makes a graph
    output), so ORT rounds m for it and the second Mul reads the rounded r."""
    s = I64("s", [256])
    nodes = [helper.make_node("Mul", ["x", "k1"], ["m"]), helper.make_node("Reshape", ["m", "s"], ["r"]),
             helper.make_node("Mul", ["r", "k2"], ["y"])]
    want = f16_graph(nodes, ["y", "r"], [K1, K2, s], tmp_path, "reshape_out", extra=(["--threads", "2"],))
    m32 = XH.astype(np.float32) * np.float32(np.float16(1.37))
    unrounded = (m32.reshape(-1) * np.float32(np.float16(0.71))).astype(np.float16)
    assert not np.array_equal(want[0], unrounded), "the case should tell rounded from unrounded"


def test_float16_isolated_nodes_stay_float32(tmp_path):
    """Between float32 nodes a float16-kernel node is isolated and runs in float32 (no rounding):
    Reshape, Concat of two computed values, Concat with a float16 initializer (ORT 1.30 looks only at
    the first of Concat's inputs). A Transpose -> Unsqueeze chain is not: the Transpose's reader runs
    in float16, so ORT rounds m for the Transpose."""
    c = numpy_helper.from_array(RNG.standard_normal((4, 8)).astype(np.float16), "c")
    nodes = [helper.make_node("Mul", ["x", "k1"], ["m"]), helper.make_node("Mul", ["x", "k2"], ["m2"]),
             helper.make_node("Reshape", ["m", "s"], ["r"]), helper.make_node("Mul", ["r", "k2"], ["y1"]),
             helper.make_node("Concat", ["m", "m2"], ["cc"], axis=1), helper.make_node("Mul", ["cc", "k2"], ["y2"]),
             helper.make_node("Concat", ["m2", "c"], ["ci"], axis=1), helper.make_node("Mul", ["ci", "k1"], ["y3"]),
             helper.make_node("Transpose", ["m"], ["t"]), helper.make_node("Unsqueeze", ["t", "a"], ["u"]),
             helper.make_node("Mul", ["u", "k1"], ["y4"])]
    f16_graph(nodes, ["y1", "y2", "y3", "y4"], [K1, K2, c, I64("s", [256]), I64("a", [0])], tmp_path, "isolated")


def test_float16_layernorm_rounds_its_output(tmp_path):
    """A LayerNormalization ORT keeps in float16 (its input a graph input; its output a graph output)
    reads and writes float16: its input and result are rounded, the Mul after it reads the rounded
    result. The isolated one between two Muls runs in float32. (Distinct attributes: ORT's common
    subexpression elimination would merge two equal nodes.)"""
    g = numpy_helper.from_array((1 + RNG.standard_normal(64) * 0.1).astype(np.float16), "g")
    b = numpy_helper.from_array((RNG.standard_normal(64) * 0.1).astype(np.float16), "b")
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["ln"], axis=-1),
             helper.make_node("Mul", ["ln", "k2"], ["y1"]),
             helper.make_node("Mul", ["x", "k1"], ["m"]),
             helper.make_node("LayerNormalization", ["m", "g"], ["ln2"], axis=-1),
             helper.make_node("Mul", ["ln2", "k2"], ["y2"]),
             helper.make_node("LayerNormalization", ["m", "g"], ["ln3"], axis=-1, epsilon=2e-5),
             helper.make_node("Mul", ["ln3", "k2"], ["y3"])]
    f16_graph(nodes, ["y1", "y2", "y3", "ln3"], [K1, K2, g, b], tmp_path, "layernorm")


def test_float16_cast_read_by_kernel_and_float32_nodes(tmp_path):
    """A model's Cast to float16 read by an Unsqueeze (float16: rounded) and a Mul (float32: ORT drops
    the Cast pair, unrounded) in one graph; and one read by a Relu and a model Cast back to float32,
    which ORT deems unsafe to undo, so it keeps every Cast and the Relu reads the rounded value too."""
    nodes = [helper.make_node("Cast", ["x"], ["h"], to=TP.FLOAT16),
             helper.make_node("Unsqueeze", ["h", "a"], ["u"]), helper.make_node("Mul", ["u", "k1"], ["um"]),
             helper.make_node("Mul", ["h", "k1"], ["hm"]),
             helper.make_node("Cast", ["um"], ["y1"], to=TP.FLOAT), helper.make_node("Cast", ["hm"], ["y2"], to=TP.FLOAT),
             helper.make_node("Cast", ["w"], ["g"], to=TP.FLOAT16),
             helper.make_node("Relu", ["g"], ["gr"]), helper.make_node("Mul", ["gr", "k1"], ["gm"]),
             helper.make_node("Cast", ["gm"], ["y3"], to=TP.FLOAT), helper.make_node("Cast", ["g"], ["y4"], to=TP.FLOAT)]
    m = f16_model(nodes, [vi("x", TP.FLOAT, [2, 5]), vi("w", TP.FLOAT, [2, 5])],
                  [vi(f"y{i}", TP.FLOAT, None) for i in range(1, 5)], [I64("a", [0]), K1])
    x = (np.linspace(-40, 40, 10, dtype=np.float32).reshape(2, 5) * np.float32(1.0007)).astype(np.float32)
    w = x[::-1].copy()  # a second input: ORT's common subexpression elimination would merge two Casts of x
    want = check_vs_ort(tmp_path, m, {"x": x, "w": w}, "mixed")
    k = np.float32(np.float16(1.37))
    assert np.array_equal(want[1], x * k), "Mul reads the unrounded value"
    assert np.array_equal(want[2], np.maximum(w.astype(np.float16).astype(np.float32), 0) * k)


def _scan_model(body_nodes, body_out_types):
    body = helper.make_graph(body_nodes, "body",
                             [vi("s_in", TP.FLOAT, [4]), vi("x_t", TP.FLOAT, [4])],
                             [vi("s_out", TP.FLOAT, [4])] + [vi(n, t, [4]) for n, t in body_out_types],
                             [numpy_helper.from_array(np.array([1.37], np.float32), "kb")])
    n_scan = len(body_out_types)
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s_fin"] + [f"scan{i}" for i in range(n_scan)],
                              num_scan_inputs=1, body=body)]
    nodes += [helper.make_node("Cast", [f"scan{i}"], [f"y{i}"], to=TP.FLOAT) for i in range(n_scan)]
    return f16_model(nodes, [vi("s0", TP.FLOAT, [4]), vi("x", TP.FLOAT, [3, 4])],
                     [vi("s_fin", TP.FLOAT, [4])] + [vi(f"y{i}", TP.FLOAT, None) for i in range(n_scan)])


def test_float16_scan_body_rounds_as_ort(tmp_path):
    """A Scan body with a Cast to float16 read by an Identity (float16: rounded), a Cast to float16
    of a constant (ORT folds it: rounded), and float16 body outputs (read by the Scan: rounded)."""
    body_nodes = [helper.make_node("Cast", ["x_t"], ["h"], to=TP.FLOAT16),
                  helper.make_node("Identity", ["h"], ["hi"]), helper.make_node("Cast", ["hi"], ["hf"], to=TP.FLOAT),
                  helper.make_node("Cast", ["kb"], ["kh"], to=TP.FLOAT16),
                  helper.make_node("Add", ["s_in", "hf"], ["s_out"]),
                  helper.make_node("Mul", ["x_t", "kb"], ["o32"]), helper.make_node("Cast", ["o32"], ["o16"], to=TP.FLOAT16),
                  helper.make_node("Mul", ["hi", "kh"], ["m16"])]
    m = _scan_model(body_nodes, [("o16", TP.FLOAT16), ("m16", TP.FLOAT16)])
    x = (np.linspace(-9, 9, 12, dtype=np.float32).reshape(3, 4) * np.float32(1.0007)).astype(np.float32)
    s0 = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    want = h.run_ort(m, {"s0": s0, "x": x})
    res = run(tmp_path, m, {"s0": s0, "x": x}, "scan").assert_ok()
    for i, o in enumerate(m.graph.output):
        h.assert_same_bytes(res.output(o.name), want[i], f"scan/{o.name}")


def test_float16_loop_and_if_outputs_rounded(tmp_path):
    """Float16 values a float32 node computes and a Loop body or an If branch gives out: the Loop and
    the If read float16 (ORT's kernels for every type), so they are rounded; the outer Mul reads them."""
    k = numpy_helper.from_array(np.array([1.37], np.float16), "kl")
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Mul", ["v_in", "kl"], ["v_out"])],
        "lbody", [vi("i", TP.INT64, []), vi("cond_in", TP.BOOL, []), vi("v_in", TP.FLOAT16, [4, 64])],
        [vi("cond_out", TP.BOOL, []), vi("v_out", TP.FLOAT16, [4, 64])], [k])
    then_b = helper.make_graph([helper.make_node("Mul", ["x", "k1"], ["tb"])], "then", [], [vi("tb", TP.FLOAT16, None)])
    else_b = helper.make_graph([helper.make_node("Mul", ["x", "k2"], ["eb"])], "else", [], [vi("eb", TP.FLOAT16, None)])
    trip = I64("trip", 3)
    nodes = [helper.make_node("Loop", ["trip", "", "x"], ["lv"], body=loop_body),
             helper.make_node("Mul", ["lv", "k2"], ["y1"]),
             helper.make_node("If", ["cnd"], ["iv"], then_branch=then_b, else_branch=else_b),
             helper.make_node("Mul", ["iv", "k2"], ["y2"])]
    # the condition a graph input: ORT's constant folding inlines an If on a constant condition
    m = f16_model(nodes, [vi("x", TP.FLOAT16, list(XH.shape)), vi("cnd", TP.BOOL, [1])],
                  [vi("y1", TP.FLOAT16, None), vi("y2", TP.FLOAT16, None)], [K1, K2, trip])
    for c in (True, False):
        check_vs_ort(tmp_path, m, {"x": XH, "cnd": np.array([c])}, f"loop_if_{c}")


def test_float16_identity_eliminated_as_ort(tmp_path):
    """ORT removes an Identity before placing nodes: Cast(float16) -> Identity -> Cast(float) makes
    the model's two Casts adjacent (unsafe to undo: every reader of the first, the Mul too, reads the
    rounded value); Cast(float16) -> Identity -> Relu is a Cast pair ORT drops (unrounded)."""
    nodes = [helper.make_node("Cast", ["x"], ["h"], to=TP.FLOAT16), helper.make_node("Identity", ["h"], ["hi"]),
             helper.make_node("Cast", ["hi"], ["y1"], to=TP.FLOAT),
             helper.make_node("Mul", ["h", "k1"], ["hm"]), helper.make_node("Cast", ["hm"], ["y2"], to=TP.FLOAT),
             helper.make_node("Cast", ["w"], ["g"], to=TP.FLOAT16), helper.make_node("Identity", ["g"], ["gi"]),
             helper.make_node("Relu", ["gi"], ["gr"]), helper.make_node("Cast", ["gr"], ["y3"], to=TP.FLOAT)]
    m = f16_model(nodes, [vi("x", TP.FLOAT, [2, 5]), vi("w", TP.FLOAT, [2, 5])],
                  [vi(f"y{i}", TP.FLOAT, None) for i in range(1, 4)], [K1])
    x = (np.linspace(-40, 40, 10, dtype=np.float32).reshape(2, 5) * np.float32(1.0007)).astype(np.float32)
    w = x[::-1].copy()
    want = check_vs_ort(tmp_path, m, {"x": x, "w": w}, "identity")
    k = np.float32(np.float16(1.37))
    assert np.array_equal(want[1], x.astype(np.float16).astype(np.float32) * k)
    assert np.array_equal(want[2], np.maximum(w, 0))
