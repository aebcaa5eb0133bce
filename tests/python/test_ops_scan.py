"""Scan (src/ops/scan.c, the loader's read_loop in src/loader/loader.c, the body sessions in
src/runtime/session.c) against ONNX Runtime, exact, on models built here with onnx.helper:

- scan inputs along axes 0, 1, 2 and -1, forward and reverse, two scan inputs on different axes and
  directions; scan outputs stacked along axes 0, 1, -1, forward and reverse;
- states carried (float and int64), none, two swapped each iteration; outer values the body reads
  (a graph input and an initializer); a zero-length scan; opset 8's batch form;
- at 1 and 2 threads;
- hostile models and inputs: scan inputs of different lengths, attribute lists of the wrong length
  or with values out of range, a scan axis past the rank, a scan longer than max_loop_iterations,
  num_scan_inputs out of range, a body of the wrong signature, a state that changes shape, opset
  8's sequence_lens: each a status and a message naming the node.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import q8rt_harness as h
from op_check import run_ort, save_input

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def model(nodes, inputs, outputs, inits=(), opset=16):
    g = helper.make_graph(nodes, "scan_test", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def run_both(m, feeds, tmp_path, tag="0", threads=1, extra=()):
    want = run_ort(m, feeds)
    path = h.save_model(m, tmp_path / f"model{tag}.onnx")
    inputs = {n: save_input(tmp_path, f"{tag}_{n}", v) for n, v in feeds.items()}
    res = h.run_q8rt(path, inputs, tmp_path / f"out{tag}", extra=["--threads", str(threads), *extra]).assert_ok()
    for i, o in enumerate(m.graph.output):
        got, w = res.output(o.name), np.asarray(want[i])
        assert got.shape == w.shape, f"{o.name}: {got.shape} vs ORT {w.shape}"
        h.assert_same_bytes(got, w, o.name)
    return want


def run_refused(m, feeds, tmp_path, words, tag="0", extra=()):
    path = h.save_model(m, tmp_path / f"model{tag}.onnx")
    inputs = {n: save_input(tmp_path, f"{tag}_{n}", v) for n, v in feeds.items()}
    return h.assert_clean_error(h.run_q8rt(path, inputs, tmp_path / f"out{tag}", extra=list(extra)), words)


def two_input_body():
    """acc = acc * 0.5 + x + w * y (a [4, 3] slice each); n = n + 1; scan values: acc (after) and
    x - acc_in (before the update); w is an outer value (a graph input)."""
    nodes = [
        helper.make_node("Mul", ["acc_in", "half"], ["h"], name="b_half"),
        helper.make_node("Add", ["h", "x"], ["hx"], name="b_addx"),
        helper.make_node("Mul", ["w", "y"], ["wy"], name="b_wy"),
        helper.make_node("Add", ["hx", "wy"], ["acc_out"], name="b_acc"),
        helper.make_node("Add", ["n_in", "one"], ["n_out"], name="b_n"),
        helper.make_node("Sub", ["x", "acc_in"], ["d"], name="b_d"),
        helper.make_node("Identity", ["acc_out"], ["s_acc"], name="b_sacc"),
    ]
    return helper.make_graph(
        nodes, "body",
        [vi("acc_in", F, [4, 3]), vi("n_in", I64, []), vi("x", F, [4, 3]), vi("y", F, [4, 3])],
        [vi("acc_out", F, [4, 3]), vi("n_out", I64, []), vi("s_acc", F, [4, 3]), vi("d", F, [4, 3])],
        [const("half", np.float32(0.5)), const("one", np.int64(1))])


L = 5
RNG = np.random.default_rng(7)
BASE_X = RNG.standard_normal((L, 4, 3)).astype(np.float32)
BASE_Y = RNG.standard_normal((L, 4, 3)).astype(np.float32)


def place(base, axis):
    """base [L, 4, 3] with its scan axis moved to `axis`."""
    return np.ascontiguousarray(np.moveaxis(base, 0, axis))


def two_input_model(in_axes, in_dirs, out_axes, out_dirs, opset=16):
    attrs = {"num_scan_inputs": 2, "scan_input_axes": in_axes, "scan_input_directions": in_dirs,
             "scan_output_axes": out_axes, "scan_output_directions": out_dirs}
    scan = helper.make_node("Scan", ["acc0", "n0", "xs", "ys"], ["acc", "n", "sa", "sd"], name="scan0",
                            body=two_input_body(), **attrs)
    xs, ys = place(BASE_X, in_axes[0]), place(BASE_Y, in_axes[1])
    m = model([scan], [vi("acc0", F, [4, 3]), vi("xs", F, list(xs.shape)), vi("ys", F, list(ys.shape)),
                       vi("w", F, [4, 3])],
              [vi("acc", F, [4, 3]), vi("n", I64, []), vi("sa", F, None), vi("sd", F, None)],
              [const("n0", np.int64(10))], opset=opset)
    feeds = {"acc0": RNG.standard_normal((4, 3)).astype(np.float32), "xs": xs, "ys": ys,
             "w": RNG.standard_normal((4, 3)).astype(np.float32)}
    return m, feeds


CASES = [  # (in_axes, in_dirs, out_axes, out_dirs)
    ([0, 0], [0, 0], [0, 0], [0, 0]),
    ([0, 0], [1, 0], [0, 0], [0, 1]),
    ([1, 2], [0, 1], [1, 2], [1, 0]),
    ([-1, 1], [1, 1], [-1, 0], [0, 0]),
    ([2, -3], [0, 1], [-3, -1], [1, 1]),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_scan_axes_and_directions(case, threads, tmp_path):
    m, feeds = two_input_model(*CASES[case])
    run_both(m, feeds, tmp_path, threads=threads)


def test_scan_opset9_axes_default(tmp_path):
    """Opset 9 without axes or directions: every scan input and output on axis 0, forward."""
    scan = helper.make_node("Scan", ["acc0", "n0", "xs", "ys"], ["acc", "n", "sa", "sd"], name="scan0",
                            body=two_input_body(), num_scan_inputs=2)
    m = model([scan], [vi("acc0", F, [4, 3]), vi("xs", F, [L, 4, 3]), vi("ys", F, [L, 4, 3]), vi("w", F, [4, 3])],
              [vi("acc", F, [4, 3]), vi("n", I64, []), vi("sa", F, None), vi("sd", F, None)],
              [const("n0", np.int64(0))], opset=9)
    run_both(m, {"acc0": BASE_X[0] * 0, "xs": BASE_X, "ys": BASE_Y, "w": BASE_Y[1]}, tmp_path)


@pytest.mark.parametrize("threads", [1, 2])
def test_scan_no_state_initializer_outer(threads, tmp_path):
    """No state: each slice mapped on its own (y = x * k + 1, k an initializer the body reads)."""
    b = helper.make_graph([helper.make_node("Mul", ["x", "k"], ["xk"], name="b_mul"),
                           helper.make_node("Add", ["xk", "one"], ["y"], name="b_add")], "body",
                          [vi("x", F, [3])], [vi("y", F, [3])], [const("one", np.float32(1))])
    scan = helper.make_node("Scan", ["xs"], ["ys"], name="map", body=b, num_scan_inputs=1,
                            scan_input_axes=[1], scan_output_axes=[0], scan_input_directions=[1])
    m = model([scan], [vi("xs", F, [3, 7])], [vi("ys", F, None)], [const("k", np.float32(-1.25))])
    run_both(m, {"xs": RNG.standard_normal((3, 7)).astype(np.float32)}, tmp_path, threads=threads)


def test_scan_swapped_states(tmp_path):
    """a, b = b, a + x: the new values swap between the states (staged before written back)."""
    b = helper.make_graph([helper.make_node("Add", ["a_in", "x"], ["ax"], name="b_add"),
                           helper.make_node("Identity", ["b_in"], ["a_out"], name="b_id"),
                           helper.make_node("Identity", ["ax"], ["s"], name="b_s")], "body",
                          [vi("a_in", F, [2]), vi("b_in", F, [2]), vi("x", F, [2])],
                          [vi("a_out", F, [2]), vi("ax", F, [2]), vi("s", F, [2])])
    scan = helper.make_node("Scan", ["a0", "b0", "xs"], ["a", "b", "ss"], name="swap", body=b, num_scan_inputs=1)
    m = model([scan], [vi("a0", F, [2]), vi("b0", F, [2]), vi("xs", F, [6, 2])],
              [vi("a", F, [2]), vi("b", F, [2]), vi("ss", F, None)])
    run_both(m, {"a0": np.array([1, 2], np.float32), "b0": np.array([-3, 0.5], np.float32),
                 "xs": RNG.standard_normal((6, 2)).astype(np.float32)}, tmp_path)


def test_scan_zero_length(tmp_path):
    """No positions: the states are their initial values, the scan outputs empty (ONNX Runtime
    dies of a floating-point exception on this model: the expected values are written here)."""
    m, _ = two_input_model([1, 1], [0, 0], [1, 0], [0, 0])
    for i in m.graph.input:
        if i.name in ("xs", "ys"):
            i.type.tensor_type.shape.dim[1].dim_value = 0
    feeds = {"acc0": BASE_X[0], "xs": np.zeros((4, 0, 3), np.float32), "ys": np.zeros((4, 0, 3), np.float32),
             "w": BASE_Y[0]}
    path = h.save_model(m, tmp_path / "model.onnx")
    inputs = {n: save_input(tmp_path, n, v) for n, v in feeds.items()}
    res = h.run_q8rt(path, inputs, tmp_path / "out").assert_ok()
    h.assert_same_bytes(res.output("acc"), BASE_X[0], "acc")
    h.assert_same_bytes(res.output("n"), np.array(10, np.int64), "n")
    assert res.output("sa").shape == (4, 0, 3) and res.output("sd").shape == (0, 4, 3)


@pytest.mark.parametrize("threads", [1, 2])
def test_scan_opset8_batch(threads, tmp_path):
    """Opset 8: a batch axis 0 on states, scan inputs and outputs, each entry scanned on its own;
    `directions` reverses the second scan input."""
    b = helper.make_graph([helper.make_node("Add", ["s_in", "x"], ["sx"], name="b_add"),
                           helper.make_node("Mul", ["sx", "y"], ["s_out"], name="b_mul"),
                           helper.make_node("Identity", ["s_out"], ["o"], name="b_o")], "body",
                          [vi("s_in", F, [2]), vi("x", F, [2]), vi("y", F, [2])],
                          [vi("s_out", F, [2]), vi("o", F, [2])])
    scan = helper.make_node("Scan", ["", "s0", "xs", "ys"], ["s", "os"], name="batched", body=b,
                            num_scan_inputs=2, directions=[0, 1])
    m = model([scan], [vi("s0", F, [3, 2]), vi("xs", F, [3, 4, 2]), vi("ys", F, [3, 4, 2])],
              [vi("s", F, [3, 2]), vi("os", F, None)], opset=8)
    m.ir_version = 3
    run_both(m, {"s0": RNG.standard_normal((3, 2)).astype(np.float32),
                 "xs": RNG.standard_normal((3, 4, 2)).astype(np.float32),
                 "ys": (RNG.standard_normal((3, 4, 2)) * 0.5).astype(np.float32)}, tmp_path, threads=threads)


def test_scan_explain_shows_body(tmp_path):
    m, feeds = two_input_model([0, 0], [0, 0], [0, 0], [0, 0])
    path = h.save_model(m, tmp_path / "model.onnx")
    inputs = {n: save_input(tmp_path, n, v) for n, v in feeds.items()}
    res = h.run_q8rt(path, inputs, extra=["--explain"]).assert_ok()
    assert "scan: runs its body's plan" in res.stdout, res.stdout
    assert any(ln.startswith("    | ") and "b_acc" in ln for ln in res.stdout.splitlines()), res.stdout


# ---- hostile models and inputs ------------------------------------------------------------------


def test_scan_lengths_differ_refused(tmp_path):
    m, feeds = two_input_model([0, 0], [0, 0], [0, 0], [0, 0])
    m.graph.input[2].type.tensor_type.shape.dim[0].dim_param = "n"
    feeds["ys"] = BASE_Y[:3]
    m.graph.input[2].type.tensor_type.shape.dim[0].dim_param = "ny"
    for i in m.graph.input:
        if i.name == "ys":
            i.type.tensor_type.shape.dim[0].dim_param = "ny"
    msg = run_refused(m, feeds, tmp_path, ["scan0"])
    assert "positions" in msg and "5" in msg and "3" in msg, msg


@pytest.mark.parametrize("attr,value,words", [
    ("scan_input_axes", [0], "entries"),
    ("scan_input_directions", [0, 0, 0], "entries"),
    ("scan_output_axes", [0], "entries"),
    ("scan_output_directions", [0, 2], "scan_output_directions[1]"),
    ("scan_input_directions", [0, -1], "scan_input_directions[1]"),
    ("scan_input_axes", [0, 3], "scan axis"),
    ("scan_input_axes", [-4, 0], "scan axis"),
    ("scan_output_axes", [0, 3], "scan_output_axes[1]"),
    ("num_scan_inputs", 0, "num_scan_inputs"),
    ("num_scan_inputs", 5, "num_scan_inputs"),
])
def test_scan_bad_attributes_refused(attr, value, words, tmp_path):
    m, feeds = two_input_model([0, 0], [0, 0], [0, 0], [0, 0])
    node = m.graph.node[0]
    for a in list(node.attribute):
        if a.name == attr:
            node.attribute.remove(a)
    node.attribute.append(helper.make_attribute(attr, value))
    msg = run_refused(m, feeds, tmp_path, ["scan0"])
    assert words in msg, msg


def test_scan_past_iteration_cap_refused(tmp_path):
    """A scan of 1000 positions x 2 under a cap of 100 iterations: refused when shapes are bound."""
    b = helper.make_graph([helper.make_node("Add", ["s_in", "x"], ["s_out"], name="b_add")], "body",
                          [vi("s_in", F, [2]), vi("x", F, [2])], [vi("s_out", F, [2])])
    scan = helper.make_node("Scan", ["s0", "xs"], ["s"], name="long", body=b, num_scan_inputs=1)
    m = model([scan], [vi("s0", F, [2]), vi("xs", F, [1000, 2])], [vi("s", F, [2])])
    feeds = {"s0": np.zeros(2, np.float32), "xs": np.ones((1000, 2), np.float32)}
    msg = run_refused(m, feeds, tmp_path, ["long"], extra=["--max-loop-iterations", "100"])
    assert "max_loop_iterations" in msg and "1000" in msg, msg
    run_both(m, feeds, tmp_path, tag="1", extra=["--max-loop-iterations", "1000"])


def test_scan_body_signature_refused(tmp_path):
    m, feeds = two_input_model([0, 0], [0, 0], [0, 0], [0, 0])
    m.graph.node[0].attribute[0].g.output.pop()  # the body gives one scan value, the node wants two
    run_refused(m, feeds, tmp_path, ["scan0"])


def test_scan_state_shape_change_refused(tmp_path):
    b = helper.make_graph([helper.make_node("Concat", ["s_in", "x"], ["s_out"], axis=0, name="b_grow")], "body",
                          [vi("s_in", F, None), vi("x", F, [2])], [vi("s_out", F, None)])
    scan = helper.make_node("Scan", ["s0", "xs"], ["s"], name="grow", body=b, num_scan_inputs=1)
    m = model([scan], [vi("s0", F, [2]), vi("xs", F, [3, 2])], [vi("s", F, None)])
    run_refused(m, {"s0": np.zeros(2, np.float32), "xs": np.ones((3, 2), np.float32)}, tmp_path, ["grow"])


def test_scan_opset8_sequence_lens_refused(tmp_path):
    b = helper.make_graph([helper.make_node("Add", ["s_in", "x"], ["s_out"], name="b_add")], "body",
                          [vi("s_in", F, [2]), vi("x", F, [2])], [vi("s_out", F, [2])])
    scan = helper.make_node("Scan", ["lens", "s0", "xs"], ["s"], name="lens8", body=b, num_scan_inputs=1)
    m = model([scan], [vi("lens", TensorProto.INT32, [1]), vi("s0", F, [1, 2]), vi("xs", F, [1, 3, 2])],
              [vi("s", F, [1, 2])], opset=8)
    m.ir_version = 3
    msg = run_refused(m, {"lens": np.array([3], np.int32), "s0": np.zeros((1, 2), np.float32),
                          "xs": np.ones((1, 3, 2), np.float32)}, tmp_path, ["lens8"])
    assert "sequence_lens" in msg, msg


def test_scan_huge_shape_refused(tmp_path):
    """A scan output of 2^20 positions x a [2^12] value (2^32 elements): refused, naming the node."""
    b = helper.make_graph([helper.make_node("Expand", ["x", "shp"], ["big"], name="b_big")], "body",
                          [vi("x", F, [1])], [vi("big", F, None)], [const("shp", np.array([1 << 12], np.int64))])
    scan = helper.make_node("Scan", ["xs"], ["ys"], name="huge", body=b, num_scan_inputs=1)
    m = model([scan], [vi("xs", F, ["n", 1])], [vi("ys", F, None)])
    path = h.save_model(m, tmp_path / "model.onnx")
    xs = save_input(tmp_path, "xs", np.ones((1 << 20, 1), np.float32))
    msg = h.assert_clean_error(h.run_q8rt(path, {"xs": xs}, tmp_path / "out",
                                          extra=["--max-memory", "256", "--max-loop-iterations", str(1 << 21)]),
                               ["huge"])
    assert "too large" in msg, msg
