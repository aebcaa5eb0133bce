"""Loop (src/ops/loop.c, the loader's read_loop in src/loader/loader.c, the body sessions in
src/runtime/session.c) against ONNX Runtime, exact, on models built here with onnx.helper:

- fixed trip count (M a constant, a graph input, computed from a shape), condition-terminated
  (M absent or larger than the run), both, zero iterations (M = 0, M < 0, cond false);
- carried values of several types, one passed through unchanged, two swapped each iteration;
- scan outputs (M known at bind, or the trip count the condition gives at bind: tf2onnx's map_fn
  with M = INT64_MAX or absent), the iteration number as a carried/scan value;
- shapes inside the body from the iteration number (Range / Slice: the body is bound again each
  iteration), outer values read by the body (graph inputs, initializers, values of an If branch);
- nested If inside Loop, Loop inside Loop;
- at 1 and 2 threads;
- hostile models and inputs: a loop that never ends (M and cond absent; M = 2^62) stops at
  max_loop_iterations naming the node; carried shapes that change; scan outputs with M from data
  or a condition that stops early; mismatched body signatures; a cond of several elements.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import q8rt_harness as h
from op_check import run_ort, save_input

F = TensorProto.FLOAT
B = TensorProto.BOOL
I64 = TensorProto.INT64
I32 = TensorProto.INT32


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def model(nodes, inputs, outputs, inits=(), opset=16):
    g = helper.make_graph(nodes, "loop_test", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def body(nodes, inputs, outputs, inits=()):
    return helper.make_graph(nodes, "body", inputs, outputs, list(inits))


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


def acc_body(scan=False):
    """acc = acc * 0.5 + x + i (as float); cond_out = cond_in; scan: acc each iteration."""
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="b_cond"),
        helper.make_node("Cast", ["i"], ["i_f"], to=F, name="b_cast"),
        helper.make_node("Mul", ["acc_in", "half"], ["h"], name="b_mul"),
        helper.make_node("Add", ["h", "x"], ["hx"], name="b_add"),
        helper.make_node("Add", ["hx", "i_f"], ["acc_out"], name="b_add_i"),
    ]
    outs = [vi("cond_out", B, []), vi("acc_out", F, [2, 3])]
    if scan:
        nodes.append(helper.make_node("Identity", ["acc_out"], ["scan_out"], name="b_scan"))
        outs.append(vi("scan_out", F, [2, 3]))
    return body(nodes, [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [2, 3])], outs,
                [const("half", np.float32(0.5))])


X = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5) / 3


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("trip", [0, 1, 5, -3])
def test_loop_fixed_trip_count_input(trip, threads, tmp_path):
    loop = helper.make_node("Loop", ["M", "", "a0"], ["acc"], name="loop0", body=acc_body())
    m = model([loop], [vi("M", I64, []), vi("a0", F, [2, 3]), vi("x", F, [2, 3])], [vi("acc", F, [2, 3])])
    run_both(m, {"M": np.array(trip, np.int64), "a0": X * 2, "x": X}, tmp_path, threads=threads)


@pytest.mark.parametrize("trip", [0, 4])
def test_loop_scan_outputs_constant_trip(trip, tmp_path):
    loop = helper.make_node("Loop", ["M", "c", "a0"], ["acc", "scan"], name="loop0", body=acc_body(scan=True))
    m = model([loop], [vi("a0", F, [2, 3]), vi("x", F, [2, 3])], [vi("acc", F, [2, 3]), vi("scan", F, None)],
              [const("M", np.int64(trip)), const("c", np.bool_(True))])
    run_both(m, {"a0": X, "x": X}, tmp_path)


def test_loop_trip_count_from_shape(tmp_path):
    """M = Shape(s)[0]: known when shapes are bound, so the scan output is sized then."""
    nodes = [
        helper.make_node("Shape", ["s"], ["sh"], name="shape"),
        helper.make_node("Gather", ["sh", "zero"], ["M"], axis=0, name="gather"),
        helper.make_node("Loop", ["M", "", "a0"], ["acc", "scan"], name="loop0", body=acc_body(scan=True)),
    ]
    m = model(nodes, [vi("s", F, ["n", 2]), vi("a0", F, [2, 3]), vi("x", F, [2, 3])],
              [vi("acc", F, [2, 3]), vi("scan", F, None)], [const("zero", np.int64(0))])
    run_both(m, {"s": np.zeros((3, 2), np.float32), "a0": X, "x": X}, tmp_path)


def cond_body():
    """while (acc < limit): acc = acc + 1.5 (a scalar); cond_out = acc < limit; k = k + i."""
    nodes = [
        helper.make_node("Add", ["acc_in", "step"], ["acc_out"], name="b_add"),
        helper.make_node("Less", ["acc_out", "limit"], ["cond_out"], name="b_less"),
        helper.make_node("Add", ["k_in", "i"], ["k_out"], name="b_k"),
    ]
    return body(nodes, [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, []), vi("k_in", I64, [])],
                [vi("cond_out", B, []), vi("acc_out", F, []), vi("k_out", I64, [])],
                [const("step", np.float32(1.5))])


@pytest.mark.parametrize("limit,start,trip", [(10.0, 0.0, None), (10.0, 0.0, 3), (10.0, 20.0, None),
                                             (10.0, 0.0, 1 << 62)])
def test_loop_condition_terminated(limit, start, trip, tmp_path):
    ins = ["M" if trip is not None else "", "c0", "a0", "k0"]
    loop = helper.make_node("Loop", ins, ["acc", "k"], name="loop0", body=cond_body())
    inputs = [vi("c0", B, []), vi("a0", F, []), vi("k0", I64, []), vi("limit", F, [])]
    feeds = {"c0": np.array(start < limit), "a0": np.array(start, np.float32), "k0": np.array(7, np.int64),
             "limit": np.array(limit, np.float32)}
    if trip is not None:
        inputs.append(vi("M", I64, []))
        feeds["M"] = np.array(trip, np.int64)
    m = model([loop], inputs, [vi("acc", F, []), vi("k", I64, [])])
    run_both(m, feeds, tmp_path)


def test_loop_cond_input_false_runs_nothing(tmp_path):
    loop = helper.make_node("Loop", ["", "c0", "a0", "k0"], ["acc", "k"], name="loop0", body=cond_body())
    m = model([loop], [vi("c0", B, []), vi("a0", F, []), vi("k0", I64, []), vi("limit", F, [])],
              [vi("acc", F, []), vi("k", I64, [])])
    run_both(m, {"c0": np.array(False), "a0": np.array(1.0, np.float32), "k0": np.array(3, np.int64),
                 "limit": np.array(100.0, np.float32)}, tmp_path)


def test_loop_passthrough_and_swap(tmp_path):
    """w passes through unchanged (SLANet's weights), a and b swap every iteration, n counts."""
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="b_cond"),
        helper.make_node("Identity", ["w_in"], ["w_out"], name="b_w"),
        helper.make_node("Add", ["b_in", "w_in"], ["a_out"], name="b_a"),
        helper.make_node("Identity", ["a_in"], ["b_out"], name="b_b"),
        helper.make_node("Add", ["n_in", "one"], ["n_out"], name="b_n"),
    ]
    b = body(nodes, [vi("i", I64, []), vi("cond_in", B, []), vi("w_in", F, [4]), vi("a_in", F, [4]),
                     vi("b_in", F, [4]), vi("n_in", I32, [])],
             [vi("cond_out", B, []), vi("w_out", F, [4]), vi("a_out", F, [4]), vi("b_out", F, [4]),
              vi("n_out", I32, [])], [const("one", np.int32(1))])
    loop = helper.make_node("Loop", ["M", "", "w", "a", "b", "n"], ["w_f", "a_f", "b_f", "n_f"], name="loop0",
                            body=b)
    m = model([loop], [vi("M", I64, []), vi("w", F, [4]), vi("a", F, [4]), vi("b", F, [4]), vi("n", I32, [])],
              [vi("w_f", F, [4]), vi("a_f", F, [4]), vi("b_f", F, [4]), vi("n_f", I32, [])])
    for t in (0, 1, 2, 5):
        run_both(m, {"M": np.array(t, np.int64), "w": np.arange(4, dtype=np.float32),
                     "a": np.full(4, 0.25, np.float32), "b": np.full(4, -3.0, np.float32),
                     "n": np.array(0, np.int32)}, tmp_path, tag=str(t))


def slice_body():
    """SLANet's pattern: row = buf[:, i:min(len, i+1)] (shape from the iteration number), a
    Range(0, i + 1) summed; acc += row + sum; scan: i as float."""
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="b_cond"),
        helper.make_node("Add", ["i", "one"], ["i1"], name="b_i1"),
        helper.make_node("Shape", ["buf"], ["bsh"], name="b_shape"),
        helper.make_node("Gather", ["bsh", "one"], ["blen"], axis=0, name="b_len"),
        helper.make_node("Min", ["blen", "i1"], ["end"], name="b_min"),
        helper.make_node("Unsqueeze", ["i", "zero1"], ["st"], name="b_st"),
        helper.make_node("Unsqueeze", ["end", "zero1"], ["en"], name="b_en"),
        helper.make_node("Slice", ["buf", "st", "en", "one1"], ["row"], name="b_slice"),
        helper.make_node("Range", ["zero", "i1", "one"], ["r"], name="b_range"),
        helper.make_node("Cast", ["r"], ["rf"], to=F, name="b_rcast"),
        helper.make_node("ReduceSum", ["rf"], ["rsf"], keepdims=0, name="b_rsum"),
        helper.make_node("Add", ["acc_in", "row"], ["a1"], name="b_add"),
        helper.make_node("Add", ["a1", "rsf"], ["acc_out"], name="b_add2"),
        helper.make_node("Cast", ["i"], ["scan_out"], to=F, name="b_scan"),
    ]
    return body(nodes, [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [1, 1, 3])],
                [vi("cond_out", B, []), vi("acc_out", F, [1, 1, 3]), vi("scan_out", F, [])],
                [const("one", np.int64(1)), const("zero", np.int64(0)), const("zero1", np.array([0], np.int64)),
                 const("one1", np.array([1], np.int64))])


@pytest.mark.parametrize("threads", [1, 2])
def test_loop_counter_dependent_shapes(threads, tmp_path):
    """Slice bounds and a Range length from the iteration number: bound again per iteration; buf is
    an outer value the body reads (not a carried one)."""
    loop = helper.make_node("Loop", ["M", "", "a0"], ["acc", "scan"], name="loop0", body=slice_body())
    m = model([loop], [vi("buf", F, [1, 5, 3]), vi("a0", F, [1, 1, 3])], [vi("acc", F, [1, 1, 3]),
                                                                          vi("scan", F, None)],
              [const("M", np.int64(5))])
    buf = np.arange(15, dtype=np.float32).reshape(1, 5, 3) * 0.25
    run_both(m, {"buf": buf, "a0": np.zeros((1, 1, 3), np.float32)}, tmp_path, threads=threads)


def test_loop_outer_values_initializer_and_branch(tmp_path):
    """The body reads an outer initializer (a weight: copied in as a constant), a graph input and a
    value computed before the Loop."""
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="b_cond"),
        helper.make_node("MatMul", ["v_in", "W"], ["mv"], name="b_mm"),
        helper.make_node("Add", ["mv", "pre"], ["p"], name="b_add"),
        helper.make_node("Tanh", ["p"], ["v_out"], name="b_tanh"),
    ]
    b = body(nodes, [vi("i", I64, []), vi("cond_in", B, []), vi("v_in", F, [1, 4])],
             [vi("cond_out", B, []), vi("v_out", F, [1, 4])])
    W = (np.arange(16, dtype=np.float32).reshape(4, 4) - 8) / 10
    outer = [helper.make_node("Mul", ["x", "x"], ["pre"], name="pre_mul"),
             helper.make_node("Loop", ["M", "", "v0"], ["v"], name="loop0", body=b)]
    m = model(outer, [vi("x", F, [1, 4]), vi("v0", F, [1, 4])], [vi("v", F, [1, 4])],
              [const("M", np.int64(6)), const("W", W)])
    run_both(m, {"x": np.array([[0.5, -0.25, 1.0, 0.1]], np.float32),
                 "v0": np.array([[1, 2, 3, 4]], np.float32) / 4}, tmp_path)


def test_loop_nested_if(tmp_path):
    """An If on the iteration number's parity inside the body: even adds, odd multiplies."""
    then_g = helper.make_graph([helper.make_node("Add", ["acc_in", "x"], ["t"], name="then_add")], "then", [],
                               [vi("t", F, [3])])
    else_g = helper.make_graph([helper.make_node("Mul", ["acc_in", "x"], ["t"], name="else_mul")], "else", [],
                               [vi("t", F, [3])])
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="b_cond"),
        helper.make_node("Cast", ["i"], ["i_f"], to=F, name="b_cast"),
        helper.make_node("Mul", ["i_f", "halff"], ["ih"], name="b_half"),
        helper.make_node("Floor", ["ih"], ["fl"], name="b_floor"),
        helper.make_node("Mul", ["fl", "twof"], ["f2"], name="b_two"),
        helper.make_node("Equal", ["f2", "i_f"], ["even"], name="b_eq"),
        helper.make_node("If", ["even"], ["acc_out"], name="b_if", then_branch=then_g, else_branch=else_g),
    ]
    b = body(nodes, [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [3])],
             [vi("cond_out", B, []), vi("acc_out", F, [3])],
             [const("twof", np.float32(2)), const("halff", np.float32(0.5))])
    loop = helper.make_node("Loop", ["M", "", "a0"], ["acc"], name="loop0", body=b)
    m = model([loop], [vi("x", F, [3]), vi("a0", F, [3])], [vi("acc", F, [3])], [const("M", np.int64(5))])
    run_both(m, {"x": np.array([0.5, 2.0, -1.0], np.float32), "a0": np.array([1, 2, 3], np.float32)}, tmp_path)


def test_loop_inside_loop(tmp_path):
    inner = helper.make_node("Loop", ["M2", "", "acc_in"], ["acc_out"], name="inner", body=acc_body())
    inner = helper.make_node("Loop", ["M2", "", "oacc_in"], ["oacc_out"], name="inner", body=acc_body())
    nodes = [helper.make_node("Identity", ["ocond_in"], ["ocond_out"], name="o_cond"), inner]
    b = body(nodes, [vi("j", I64, []), vi("ocond_in", B, []), vi("oacc_in", F, [2, 3])],
             [vi("ocond_out", B, []), vi("oacc_out", F, [2, 3])])
    loop = helper.make_node("Loop", ["M", "", "a0"], ["acc"], name="outer", body=b)
    m = model([loop], [vi("x", F, [2, 3]), vi("a0", F, [2, 3]), vi("M2", I64, [])], [vi("acc", F, [2, 3])],
              [const("M", np.int64(3))])
    run_both(m, {"x": X, "a0": X, "M2": np.array(2, np.int64)}, tmp_path)


# ---- hostile models and inputs ------------------------------------------------------------------


def test_loop_never_ending_stops_at_cap(tmp_path):
    """M and cond absent: ONNX's infinite loop. ORT would hang; q8rt stops at the cap."""
    loop = helper.make_node("Loop", ["", "", "a0"], ["acc"], name="forever", body=acc_body())
    m = model([loop], [vi("a0", F, [2, 3]), vi("x", F, [2, 3])], [vi("acc", F, [2, 3])])
    msg = run_refused(m, {"a0": X, "x": X}, tmp_path, ["forever"], extra=["--max-loop-iterations", "1000"])
    assert "max_loop_iterations" in msg and "1000" in msg


def test_loop_huge_trip_count_stops_at_cap(tmp_path):
    loop = helper.make_node("Loop", ["M", "", "a0"], ["acc"], name="huge", body=acc_body())
    m = model([loop], [vi("M", I64, []), vi("a0", F, [2, 3]), vi("x", F, [2, 3])], [vi("acc", F, [2, 3])])
    run_refused(m, {"M": np.array(1 << 62, np.int64), "a0": X, "x": X}, tmp_path, ["huge", "max_loop_iterations"],
                extra=["--max-loop-iterations", "50"])
    # at the cap exactly: runs
    run_both(m, {"M": np.array(50, np.int64), "a0": X, "x": X}, tmp_path, tag="1",
             extra=["--max-loop-iterations", "50"])



def nested_loops(m_outer, m_inner):
    """outer (M = m_outer) runs inner (M = m_inner, from a graph input) in its body."""
    inner = helper.make_node("Loop", ["M2", "", "oacc_in"], ["oacc_out"], name="inner", body=acc_body())
    nodes = [helper.make_node("Identity", ["ocond_in"], ["ocond_out"], name="o_cond"), inner]
    b = body(nodes, [vi("j", I64, []), vi("ocond_in", B, []), vi("oacc_in", F, [2, 3])],
             [vi("ocond_out", B, []), vi("oacc_out", F, [2, 3])])
    loop = helper.make_node("Loop", ["M", "", "a0"], ["acc"], name="outer", body=b)
    return model([loop], [vi("x", F, [2, 3]), vi("a0", F, [2, 3]), vi("M2", I64, [])], [vi("acc", F, [2, 3])],
                 [const("M", np.int64(m_outer))])


def test_loop_nested_iterations_count_for_the_outer_loop(tmp_path):
    """A Loop in another's body counts its iterations for the outer Loop too: nested Loops cannot
    multiply the cap (8 levels of 1000 iterations each were 1000^8 body runs, each level under a
    cap of 10^6). 20 x 30 = 600 inner iterations + 20 outer ones pass a cap of 620 and fail one
    of 619, each Loop under it on its own."""
    m = nested_loops(20, 30)
    feeds = {"x": X, "a0": X, "M2": np.array(30, np.int64)}
    run_both(m, feeds, tmp_path, extra=["--max-loop-iterations", "620"])
    msg = run_refused(m, feeds, tmp_path, ["inner", "outer", "max_loop_iterations", "619"], tag="1",
                      extra=["--max-loop-iterations", "619"])
    assert "nested" in msg


def test_loop_carried_shape_change_refused(tmp_path):
    nodes = [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="b_cond"),
             helper.make_node("Concat", ["v_in", "v_in"], ["v_out"], axis=0, name="b_grow")]
    b = body(nodes, [vi("i", I64, []), vi("cond_in", B, []), vi("v_in", F, None)],
             [vi("cond_out", B, []), vi("v_out", F, None)])
    loop = helper.make_node("Loop", ["M", "", "v0"], ["v"], name="grow", body=b)
    m = model([loop], [vi("v0", F, [2])], [vi("v", F, None)], [const("M", np.int64(3))])
    run_refused(m, {"v0": np.ones(2, np.float32)}, tmp_path, ["grow", "shape"])


def test_loop_scan_with_trip_count_at_run_refused(tmp_path):
    """M from data and a scan output another node reads: its shape would be known only at run."""
    loop = helper.make_node("Loop", ["M", "", "a0"], ["acc", "scan"], name="scanrun", body=acc_body(scan=True))
    m = model([loop, helper.make_node("Relu", ["scan"], ["r"], name="reader")],
              [vi("M", I64, []), vi("a0", F, [2, 3]), vi("x", F, [2, 3])], [vi("acc", F, [2, 3]), vi("r", F, None)])
    run_refused(m, {"M": np.array(3, np.int64), "a0": X, "x": X}, tmp_path, ["scanrun", "trip count"])


def early_model(reader=False):
    b = cond_body()
    b.node.append(helper.make_node("Identity", ["acc_out"], ["scan_out"], name="b_scan"))
    b.output.append(vi("scan_out", F, []))
    loop = helper.make_node("Loop", ["M", "c0", "a0", "k0"], ["acc", "k", "scan"], name="early", body=b)
    nodes, outs = [loop], [vi("acc", F, []), vi("k", I64, []), vi("scan", F, None)]
    if reader:
        nodes.append(helper.make_node("Relu", ["scan"], ["r"], name="reader"))
        outs[2] = vi("r", F, None)
    return model(nodes, [vi("c0", B, []), vi("a0", F, []), vi("k0", I64, []), vi("limit", F, [])], outs,
                 [const("M", np.int64(100))])


def early_feeds(limit=5.0, start=0.0):
    return {"c0": np.array(start < limit), "a0": np.array(start, np.float32), "k0": np.array(0, np.int64),
            "limit": np.array(limit, np.float32)}


def test_loop_scan_stopped_early_refused(tmp_path):
    """A scan output another node reads, sized at bind from M: the condition stops the loop first."""
    run_refused(early_model(reader=True), early_feeds(), tmp_path, ["early", "stopped after 4"])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("limit,start", [(5.0, 0.0), (200.0, 0.0), (5.0, 9.0)])
def test_loop_scan_length_at_run(limit, start, threads, tmp_path):
    """Scan outputs that are graph outputs only take the length the run finds: stopped by the
    condition (4 of M = 100), all of M, none (cond false at entry)."""
    run_both(early_model(), early_feeds(limit, start), tmp_path, threads=threads)


@pytest.mark.parametrize("trip", [0, 3, 17])
def test_loop_scan_trip_count_from_input(trip, tmp_path):
    """ONNX's test_loop11 form: M a graph input, the scan output a graph output."""
    loop = helper.make_node("Loop", ["M", "", "a0"], ["acc", "scan"], name="loop0", body=acc_body(scan=True))
    m = model([loop], [vi("M", I64, []), vi("a0", F, [2, 3]), vi("x", F, [2, 3])],
              [vi("acc", F, [2, 3]), vi("scan", F, None)])
    run_both(m, {"M": np.array(trip, np.int64), "a0": X, "x": X}, tmp_path)


def test_loop_scan_length_at_run_repeated_and_capped(tmp_path):
    """Repeated runs publish the same outputs; a run stopped by the cap fails naming the node."""
    m = early_model()
    path = h.save_model(m, tmp_path / "model.onnx")
    feeds = early_feeds(30.0)
    files = {n: save_input(tmp_path, n, v) for n, v in feeds.items()}
    want = run_ort(m, feeds)
    res = h.run_q8rt(path, files, tmp_path / "out", extra=["--repeat", "3"]).assert_ok()
    h.assert_same_bytes(res.output("scan"), np.asarray(want[2]), "scan")
    h.assert_clean_error(h.run_q8rt(path, files, tmp_path / "out2", extra=["--max-loop-iterations", "10"]),
                         ["early", "max_loop_iterations"])


@pytest.mark.parametrize("case", ["body_inputs", "body_outputs", "cond_type", "m_type", "no_body"])
def test_loop_bad_signatures_refused(case, tmp_path):
    b = acc_body()
    ins, outs = ["M", "", "a0"], ["acc"]
    inputs = [vi("M", I64, []), vi("a0", F, [2, 3]), vi("x", F, [2, 3])]
    if case == "body_inputs":
        ins = ["M", "", "a0", "x"]
    elif case == "body_outputs":
        outs = ["acc", "extra"]
    elif case == "cond_type":
        b.input[1].type.tensor_type.elem_type = F
    elif case == "m_type":
        inputs[0] = vi("M", I32, [])
    attrs = {} if case == "no_body" else {"body": b}
    loop = helper.make_node("Loop", ins, outs, name="badloop", **attrs)
    m = model([loop], inputs, [vi(o, F, None) for o in outs])
    path = h.save_model(m, tmp_path / "model.onnx")
    feeds = {"M": np.array(2, np.int32 if case == "m_type" else np.int64), "a0": X, "x": X}
    files = {n: save_input(tmp_path, n, v) for n, v in feeds.items()}
    h.assert_clean_error(h.run_q8rt(path, files, tmp_path / "out"), ["badloop"])


def test_loop_cond_of_several_elements_refused(tmp_path):
    loop = helper.make_node("Loop", ["M", "c", "a0"], ["acc"], name="cond2", body=acc_body())
    m = model([loop], [vi("M", I64, []), vi("c", B, [2]), vi("a0", F, [2, 3]), vi("x", F, [2, 3])],
              [vi("acc", F, [2, 3])])
    run_refused(m, {"M": np.array(2, np.int64), "c": np.array([True, True]), "a0": X, "x": X}, tmp_path,
                ["cond2", "elements"])


def test_loop_shapes_from_carried_counter(tmp_path):
    """SLANet's form: the Slice starts are a small carried counter (int64 [1]) the body increments,
    not the iteration number: the body is bound each iteration with the counter's value."""
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="b_cond"),
        helper.make_node("Add", ["cnt_in", "one1"], ["cnt_out"], name="b_inc"),
        helper.make_node("Shape", ["buf"], ["bsh"], name="b_shape"),
        helper.make_node("Gather", ["bsh", "one1"], ["blen"], axis=0, name="b_len"),
        helper.make_node("Min", ["blen", "cnt_out"], ["en"], name="b_min"),
        helper.make_node("Slice", ["buf", "cnt_in", "en", "one1"], ["row"], name="b_slice"),
        helper.make_node("Add", ["acc_in", "row"], ["acc_out"], name="b_add"),
    ]
    b = body(nodes, [vi("i", I64, [1]), vi("cond_in", B, [1]), vi("cnt_in", I64, [1]), vi("acc_in", F, [1, 1, 3])],
             [vi("cond_out", B, [1]), vi("cnt_out", I64, [1]), vi("acc_out", F, [1, 1, 3])],
             [const("one1", np.array([1], np.int64))])
    loop = helper.make_node("Loop", ["M", "c", "cnt0", "a0"], ["cnt", "acc"], name="loop0", body=b)
    m = model([loop], [vi("buf", F, [1, 6, 3]), vi("a0", F, [1, 1, 3])], [vi("cnt", I64, [1]), vi("acc", F, [1, 1, 3])],
              [const("M", np.array([4], np.int64)), const("c", np.array([True])),
               const("cnt0", np.array([1], np.int64))])
    buf = np.arange(18, dtype=np.float32).reshape(1, 6, 3) * 0.5
    run_both(m, {"buf": buf, "a0": np.ones((1, 1, 3), np.float32)}, tmp_path)


@pytest.mark.parametrize("threads", [1, 2])
def test_loop_constant_weights_carried(threads, tmp_path):
    """SLANet passes its weights as carried values the body returns unchanged: with a constant
    initial value they become constants of the body (packed at load); one carried weight is a
    graph input instead (read in place), and a carried value that changes sits between them."""
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="b_cond"),
        helper.make_node("MatMul", ["h_in", "w_in"], ["hw"], name="b_mm"),
        helper.make_node("MatMul", ["hw", "u_in"], ["hu"], name="b_mm2"),
        helper.make_node("Add", ["hu", "bias_in"], ["hb"], name="b_bias"),
        helper.make_node("Tanh", ["hb"], ["h_out"], name="b_tanh"),
        helper.make_node("Identity", ["h_out"], ["scan_out"], name="b_scan"),
    ]
    b = body(nodes, [vi("i", I64, []), vi("cond_in", B, []), vi("w_in", F, [8, 8]), vi("h_in", F, [2, 8]),
                     vi("u_in", F, [8, 8]), vi("bias_in", F, [8])],
             [vi("cond_out", B, []), vi("w_in", F, [8, 8]), vi("h_out", F, [2, 8]), vi("u_in", F, [8, 8]),
              vi("bias_in", F, [8]), vi("scan_out", F, [2, 8])])
    loop = helper.make_node("Loop", ["M", "", "W", "h0", "U", "bias"], ["W_f", "h", "U_f", "bias_f", "hs"],
                            name="loop0", body=b)
    rng = np.random.default_rng(3)
    W = rng.standard_normal((8, 8)).astype(np.float32) * 0.4
    bias = rng.standard_normal(8).astype(np.float32) * 0.1
    m = model([loop], [vi("h0", F, [2, 8]), vi("U", F, [8, 8])],
              [vi("W_f", F, [8, 8]), vi("h", F, [2, 8]), vi("U_f", F, [8, 8]), vi("bias_f", F, [8]),
               vi("hs", F, None)], [const("M", np.int64(7)), const("W", W), const("bias", bias)])
    run_both(m, {"h0": rng.standard_normal((2, 8)).astype(np.float32),
                 "U": rng.standard_normal((8, 8)).astype(np.float32) * 0.4}, tmp_path, threads=threads)
    res = h.run_q8rt(tmp_path / "model0.onnx", {n: tmp_path / f"0_{n}.npy" for n in ("h0", "U")},
                     extra=["--explain"]).assert_ok()
    assert "2 constant carried values fixed in the body" in res.stdout, res.stdout
    # the body's plan under the Loop's line, its constant weights packed at load
    body_lines = [ln for ln in res.stdout.splitlines() if ln.startswith("    | ")]
    assert any("b_mm " in ln and "packed at load" in ln for ln in body_lines), res.stdout


# ---- limits and session options reach the body ----------------------------------------------------


def test_loop_scan_trip_past_cap_refused_at_bind(tmp_path):
    """Scan outputs sized from M = 3 * 10^8 (7.2 GB) under a cap of 1000 iterations: refused when shapes
    are bound, naming the node, before their memory is taken (under a 64 MiB memory cap the bind
    would otherwise fail for memory, not for the cap). At the cap exactly it runs."""
    def m_of(trip):
        loop = helper.make_node("Loop", ["M", "", "a0"], ["acc", "scan"], name="bigscan", body=acc_body(scan=True))
        return model([loop], [vi("a0", F, [2, 3]), vi("x", F, [2, 3])], [vi("acc", F, [2, 3]), vi("scan", F, None)],
                     [const("M", np.int64(trip))])
    extra = ["--max-loop-iterations", "1000", "--max-memory", "64"]
    msg = run_refused(m_of(3 * 10 ** 8), {"a0": X, "x": X}, tmp_path, ["bigscan"], extra=extra)
    assert "max_loop_iterations" in msg and "1000" in msg and "bound" in msg, msg
    run_both(m_of(1000), {"a0": X, "x": X}, tmp_path, tag="1", extra=extra)


def table_body():
    """x (uint8) -> DequantizeLinear -> Mul -> Add -> Relu -> QuantizeLinear: an island q8rt runs as
    one table."""
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="b_cond"),
        helper.make_node("DequantizeLinear", ["x_in", "s", "z"], ["xf"], name="b_dq"),
        helper.make_node("Mul", ["xf", "c1"], ["a"], name="b_mul"),
        helper.make_node("Add", ["a", "c2"], ["b"], name="b_add"),
        helper.make_node("Relu", ["b"], ["r"], name="b_relu"),
        helper.make_node("QuantizeLinear", ["r", "s2", "z2"], ["x_out"], name="b_q"),
    ]
    return body(nodes, [vi("i", I64, []), vi("cond_in", B, []), vi("x_in", TensorProto.UINT8, [4, 64])],
                [vi("cond_out", B, []), vi("x_out", TensorProto.UINT8, [4, 64])],
                [const("s", np.float32(0.05)), const("z", np.uint8(128)), const("c1", np.float32(1.7)),
                 const("c2", np.float32(-0.3)), const("s2", np.float32(0.04)), const("z2", np.uint8(3))])


def test_loop_body_takes_no_tables(tmp_path):
    """--no-tables reaches the body's plan: the body's island is one table by default, node by node
    with --no-tables; the same bytes either way."""
    loop = helper.make_node("Loop", ["M", "", "x0"], ["x"], name="tloop", body=table_body())
    m = model([loop], [vi("x0", TensorProto.UINT8, [4, 64])], [vi("x", TensorProto.UINT8, [4, 64])],
              [const("M", np.int64(3))])
    path = h.save_model(m, tmp_path / "model.onnx")
    x0 = {"x0": save_input(tmp_path, "x0", (np.arange(256) * 7 % 256).astype(np.uint8).reshape(4, 64))}
    got = {}
    for tag, extra in (("t", []), ("n", ["--no-tables"])):
        res = h.run_q8rt(path, x0, tmp_path / f"out{tag}", extra=["--explain", *extra]).assert_ok()
        body_lines = [ln for ln in res.stdout.splitlines() if ln.startswith("    | ")]
        tabled = [ln for ln in body_lines if "replaces b_dq, b_mul, b_add, b_relu, b_q" in ln]
        assert len(tabled) == (1 if tag == "t" else 0), res.stdout
        assert any(" b_relu " in ln for ln in body_lines) == (tag == "n"), res.stdout
        got[tag] = res.output("x")
    h.assert_same_bytes(got["n"], got["t"], "x")


def map_fn_model(m_const=np.iinfo(np.int64).max, with_m=True):
    """tf2onnx's tf.map_fn over the batch: M = INT64_MAX (or absent), the condition 0 < n with n
    from x's shape, the body's j + 1 < n, a scan output of x[j] * 2 that another node reads: the
    trip count follows from the condition when shapes are bound (n), which sizes the scan output."""
    b = body([helper.make_node("Add", ["j_in", "one"], ["j_out"], name="b_inc"),
              helper.make_node("Less", ["j_out", "n"], ["cond_out"], name="b_less"),
              helper.make_node("Gather", ["x", "j_in"], ["row"], axis=0, name="b_row"),
              helper.make_node("Mul", ["row", "two"], ["scan_out"], name="b_scan")],
             [vi("i", I64, []), vi("cond_in", B, []), vi("j_in", I64, [])],
             [vi("cond_out", B, []), vi("j_out", I64, []), vi("scan_out", F, [3])],
             [const("one", np.int64(1)), const("two", np.float32(2.0))])
    nodes = [helper.make_node("Shape", ["x"], ["sh"], name="shape"),
             helper.make_node("Gather", ["sh", "zero"], ["n"], axis=0, name="gather"),
             helper.make_node("Less", ["zero", "n"], ["c0"], name="less0"),
             helper.make_node("Loop", ["M" if with_m else "", "c0", "zero"], ["j", "scan"], name="mapfn", body=b),
             helper.make_node("Relu", ["scan"], ["r"], name="reader")]
    inits = [const("zero", np.int64(0))] + ([const("M", np.int64(m_const))] if with_m else [])
    return model(nodes, [vi("x", F, ["n", 3])], [vi("j", I64, []), vi("r", F, None)], inits)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", [1, 4])
@pytest.mark.parametrize("m_const,with_m", [(np.iinfo(np.int64).max, True), (2, True), (0, False)])
def test_loop_scan_trip_from_condition_at_bind(n, m_const, with_m, threads, tmp_path):
    x = (np.arange(3 * n, dtype=np.float32).reshape(n, 3) - 4) / 3
    want = run_both(map_fn_model(m_const, with_m), {"x": x}, tmp_path, threads=threads)
    assert want[1].shape[0] == (min(n, m_const) if with_m else n)


def test_loop_scan_condition_from_data_refused(tmp_path):
    """M absent, a condition input known at bind, the body's condition from data (limit), the scan
    output read by another node: its length is known only at run, refused naming the node."""
    m = early_model(reader=True)
    m.graph.node[0].input[0] = ""
    m.graph.node[0].input[1] = "ctrue"
    m.graph.initializer.append(const("ctrue", np.bool_(True)))
    run_refused(m, early_feeds(), tmp_path, ["early", "not known when shapes are bound"])
