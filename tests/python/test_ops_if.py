"""If (src/ops/if.c, the loader's inlining in src/loader/loader.c, guards in src/plan/plan.c and
src/runtime/session.c) against ONNX Runtime, exact, on models built here with onnx.helper:

- the condition a graph input (decided at run), an initializer (folded at load: the untaken branch
  holds an op q8rt does not have), or computed from a symbolic shape (folded at bind: the branches
  give different ranks, which q8rt could not run if it had to plan both);
- nested Ifs, branches reading main-graph and enclosing-branch values, both branches defining the
  same local names;
- an untaken branch that cannot bind runs; taken, it fails at run naming its node;
- hostile subgraphs: a missing branch, output counts that differ, branch inputs, a bool-less
  condition, a main-graph node reading a branch's value, nesting beyond q8rt's limit (8) built
  with onnx.helper and as 100000 levels of raw protobuf (scanned before protobuf-c recurses).
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import q8rt_harness as h
from op_check import run_ort, save_input

F = TensorProto.FLOAT
B = TensorProto.BOOL
I64 = TensorProto.INT64


def model(nodes, inputs, outputs, inits=(), opset=16):
    g = helper.make_graph(nodes, "if_test", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def branch(name, nodes, outputs, inits=()):
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(o, F, None) for o in outputs],
                             list(inits))


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def run_both(m, feeds, tmp_path, tag="0"):
    want = run_ort(m, feeds)
    path = h.save_model(m, tmp_path / f"model{tag}.onnx")
    inputs = {n: save_input(tmp_path, f"{tag}_{n}", v) for n, v in feeds.items()}
    res = h.run_q8rt(path, inputs, tmp_path / f"out{tag}").assert_ok()
    for i, o in enumerate(m.graph.output):
        got, w = res.output(o.name), np.asarray(want[i])
        assert got.shape == w.shape, f"{o.name}: {got.shape} vs ORT {w.shape}"
        h.assert_same_bytes(got, w, o.name)


def run_refused(m, feeds, tmp_path, words, tag="0"):
    path = h.save_model(m, tmp_path / f"model{tag}.onnx")
    inputs = {n: save_input(tmp_path, f"{tag}_{n}", v) for n, v in feeds.items()}
    return h.assert_clean_error(h.run_q8rt(path, inputs, tmp_path / f"out{tag}"), words)


def simple_if(cond_name="c", then_nodes=None, else_nodes=None):
    """y = x + 1 (then) or x * 3 (else); both branches call their result 't' (prefixed apart)."""
    then_g = branch("then", then_nodes or [helper.make_node("Add", ["x", "one"], ["t"], name="then_add")], ["t"],
                    [const("one", np.float32(1.0))])
    else_g = branch("else", else_nodes or [helper.make_node("Mul", ["x", "three"], ["t"], name="else_mul")], ["t"],
                    [const("three", np.float32(3.0))])
    return helper.make_node("If", [cond_name], ["y"], name="if0", then_branch=then_g, else_branch=else_g)


X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5


@pytest.mark.parametrize("cond", [True, False])
def test_if_cond_from_input(cond, tmp_path, q8rt_run):
    m = model([helper.make_node("Relu", ["x0"], ["x"], name="relu"), simple_if()],
              [helper.make_tensor_value_info("x0", F, [2, 3]), helper.make_tensor_value_info("c", B, [])],
              [helper.make_tensor_value_info("y", F, [2, 3])])
    run_both(m, {"x0": X, "c": np.array(cond)}, tmp_path)


@pytest.mark.parametrize("cond", [True, False])
def test_if_constant_cond_folds_at_load(cond, tmp_path, q8rt_run):
    # the untaken branch holds CumSum, which q8rt does not have: it must never be planned
    cum = [helper.make_node("CumSum", ["x", "ax"], ["t"], name="cumsum")]
    cum_init = [const("ax", np.int64(1))]
    then_g = branch("then", [helper.make_node("Add", ["x", "one"], ["t"], name="then_add")], ["t"],
                    [const("one", np.float32(1.0))])
    dead = branch("dead", cum, ["t"], cum_init)
    node = helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then_g if cond else dead,
                            else_branch=dead if cond else then_g)
    m = model([node], [helper.make_tensor_value_info("x", F, [2, 3])], [helper.make_tensor_value_info("y", F, [2, 3])],
              [const("c", np.array(cond))])
    run_both(m, {"x": X}, tmp_path)
    explain = h.run_q8rt(h.save_model(m, tmp_path / "m.onnx"), {"x": save_input(tmp_path, "x", X)},
                         extra=["--explain"]).assert_ok().stdout
    assert "cumsum" not in explain.lower()


@pytest.mark.parametrize("rows", [1, 2])
def test_if_shape_cond_folds_at_bind(rows, tmp_path, q8rt_run):
    # cond = (x.shape[0] == 1), known once the shape is bound: then squeezes (rank 1), else keeps
    # rank 2. Planning both at run time would need one shape; the bind drops the untaken one.
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["d0"], name="gather", axis=0),
        helper.make_node("Equal", ["d0", "one_i"], ["c"], name="eq"),
        helper.make_node("If", ["c"], ["y"], name="if_rank",
                         then_branch=branch("then", [helper.make_node("Squeeze", ["x", "ax0"], ["t"], name="sq")], ["t"],
                                            [const("ax0", np.array([0], np.int64))]),
                         else_branch=branch("else", [helper.make_node("Identity", ["x"], ["t"], name="id")], ["t"])),
        helper.make_node("Neg", ["y"], ["z"], name="neg"),
    ]
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["n", 3])], [helper.make_tensor_value_info("z", F, None)],
              [const("zero", np.int64(0)), const("one_i", np.int64(1))])
    run_both(m, {"x": np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)}, tmp_path)


@pytest.mark.parametrize("a,b", [(True, True), (True, False), (False, True), (False, False)])
def test_if_nested_outer_scope(a, b, tmp_path, q8rt_run):
    # outer then: u = x * 2 (a local), inner If reads u (enclosing branch), x and k (main graph);
    # outer else: a copy of the main-graph value x (ORT refuses an outer value as a branch output)
    inner = helper.make_node(
        "If", ["cb"], ["t"], name="inner",
        then_branch=branch("ithen", [helper.make_node("Add", ["u", "k"], ["r"], name="ithen_add")], ["r"]),
        else_branch=branch("ielse", [helper.make_node("Sub", ["u", "x"], ["r"], name="ielse_sub")], ["r"]))
    outer_then = branch("othen", [helper.make_node("Mul", ["x", "two"], ["u"], name="othen_mul"), inner], ["t"],
                        [const("two", np.float32(2.0))])
    outer_else = branch("oelse", [helper.make_node("Identity", ["x"], ["t"], name="oelse_id")], ["t"])
    nodes = [helper.make_node("Abs", ["x0"], ["x"], name="abs"),
             helper.make_node("If", ["ca"], ["y"], name="outer", then_branch=outer_then, else_branch=outer_else)]
    m = model(nodes, [helper.make_tensor_value_info("x0", F, [2, 3]), helper.make_tensor_value_info("ca", B, []),
                      helper.make_tensor_value_info("cb", B, [])],
              [helper.make_tensor_value_info("y", F, [2, 3])], [const("k", np.full((2, 3), 0.25, np.float32))])
    run_both(m, {"x0": X, "ca": np.array(a), "cb": np.array(b)}, tmp_path)


def test_if_depth_8_runs(tmp_path, q8rt_run):
    m = nested_model(8)
    for cond in (True, False):
        run_both(m, {"x": X, "c": np.array(cond)}, tmp_path, tag=str(cond))


def nested_model(depth):
    g = branch("leaf", [helper.make_node("Neg", ["x"], ["t0"], name="leaf_neg")], ["t0"])
    for d in range(depth - 1, -1, -1):
        node = helper.make_node("If", ["c"], [f"t{d}" if d else "y"], name=f"if_d{d}", then_branch=g,
                                else_branch=branch(f"e{d}", [helper.make_node("Relu", ["x"], [f"t{d}"],
                                                                              name=f"relu_d{d}")], [f"t{d}"]))
        if d:
            g = branch(f"b{d}", [node], [f"t{d}"])
    return model([node], [helper.make_tensor_value_info("x", F, [2, 3]), helper.make_tensor_value_info("c", B, [])],
                 [helper.make_tensor_value_info("y", F, [2, 3])])


def test_if_untaken_branch_that_cannot_bind(tmp_path, q8rt_run):
    # then reshapes 6 elements to [4]: it cannot bind; not taken, the model runs as ORT does
    then_g = branch("then", [helper.make_node("Reshape", ["x", "four"], ["t"], name="bad_reshape")], ["t"],
                    [const("four", np.array([4], np.int64))])
    else_g = branch("else", [helper.make_node("Reshape", ["x", "six"], ["t"], name="good_reshape")], ["t"],
                    [const("six", np.array([6], np.int64))])
    m = model([helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then_g, else_branch=else_g)],
              [helper.make_tensor_value_info("x", F, [2, 3]), helper.make_tensor_value_info("c", B, [])],
              [helper.make_tensor_value_info("y", F, None)])
    run_both(m, {"x": X, "c": np.array(False)}, tmp_path)
    msg = run_refused(m, {"x": X, "c": np.array(True)}, tmp_path, ["bad_reshape"], tag="t")
    assert "bad_reshape" in msg


def test_if_runtime_branches_must_agree_on_shape(tmp_path, q8rt_run):
    then_g = branch("then", [helper.make_node("Reshape", ["x", "s1"], ["t"], name="r1")], ["t"],
                    [const("s1", np.array([6], np.int64))])
    else_g = branch("else", [helper.make_node("Identity", ["x"], ["t"], name="id")], ["t"])
    m = model([helper.make_node("If", ["c"], ["y"], name="if_shapes", then_branch=then_g, else_branch=else_g)],
              [helper.make_tensor_value_info("x", F, [2, 3]), helper.make_tensor_value_info("c", B, [])],
              [helper.make_tensor_value_info("y", F, None)])
    run_refused(m, {"x": X, "c": np.array(True)}, tmp_path, ["if_shapes"])


def hostile_cases():
    xin = [helper.make_tensor_value_info("x", F, [2, 3]), helper.make_tensor_value_info("c", B, [])]
    yout = [helper.make_tensor_value_info("y", F, [2, 3])]
    ok_then = branch("then", [helper.make_node("Neg", ["x"], ["t"], name="n")], ["t"])
    two_out = branch("else", [helper.make_node("Neg", ["x"], ["t"], name="n2"),
                              helper.make_node("Abs", ["x"], ["u"], name="a2")], ["t", "u"])
    with_input = helper.make_graph([helper.make_node("Neg", ["x"], ["t"], name="n3")], "else",
                                   [helper.make_tensor_value_info("q", F, [1])],
                                   [helper.make_tensor_value_info("t", F, None)])
    c = {}
    c["missing_else"] = (model([helper.make_node("If", ["c"], ["y"], name="if_bad", then_branch=ok_then)], xin, yout),
                         ["if_bad", "else_branch"])
    c["output_count"] = (model([helper.make_node("If", ["c"], ["y"], name="if_bad", then_branch=ok_then,
                                                 else_branch=two_out)], xin, yout), ["if_bad", "outputs"])
    c["branch_inputs"] = (model([helper.make_node("If", ["c"], ["y"], name="if_bad", then_branch=ok_then,
                                                  else_branch=with_input)], xin, yout), ["if_bad", "inputs"])
    c["float_cond"] = (model([helper.make_node("If", ["x"], ["y"], name="if_bad", then_branch=ok_then,
                                               else_branch=ok_then)], xin, yout), ["if_bad", "cond"])
    c["too_deep"] = (nested_model(9), ["if_d", "deep"])
    c["empty_cond"] = (model([helper.make_node("If", ["e"], ["y"], name="if_bad", then_branch=ok_then,
                                               else_branch=ok_then)], xin, yout, [const("e", np.zeros(0, np.bool_))]),
                       ["if_bad", "elements"])
    # a main-graph node naming a branch's value (by its prefixed name): refused, never read
    peek = model([helper.make_node("If", ["c"], ["y"], name="if_bad", then_branch=ok_then, else_branch=ok_then),
                  helper.make_node("Abs", ["if_bad/then_branch/t"], ["z"], name="peek")], xin,
                 yout + [helper.make_tensor_value_info("z", F, [2, 3])])
    c["reads_branch_value"] = (peek, ["peek", "branch"])
    undefined = branch("else", [helper.make_node("Neg", ["nowhere"], ["t"], name="n4")], ["t"])
    c["undefined_name"] = (model([helper.make_node("If", ["c"], ["y"], name="if_bad", then_branch=ok_then,
                                                   else_branch=undefined)], xin, yout), ["nowhere"])
    return c


HOSTILE = hostile_cases()


@pytest.mark.parametrize("name", list(HOSTILE))
def test_if_hostile(name, tmp_path, q8rt_run):
    m, words = HOSTILE[name]
    msg = run_refused(m, {"x": X, "c": np.array(True)}, tmp_path, words)
    if name == "too_deep":
        assert "8" in msg


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def ld(field, payload):
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def test_if_nesting_100000_levels_raw(tmp_path, q8rt_run):
    # Node{name, op_type If, attribute{name, type GRAPH, g: Graph{node: ...}}} 100000 times (4 MB):
    # a decoder that recursed per level would overflow its stack; q8rt refuses before decoding.
    # Each level's nested part comes last in its bytes, so the file is the levels' prefixes,
    # outermost first, then the leaf (lengths computed inside out).
    leaf = ld(3, b"leaf") + ld(4, b"Neg")
    head = ld(3, b"lvl") + ld(4, b"If")
    attr_head = ld(1, b"then_branch") + varint(20 << 3) + varint(5)
    prefixes, size = [], len(leaf)
    for _ in range(100000):
        graph_len = 1 + len(varint(size)) + size
        attr_len = len(attr_head) + 1 + len(varint(graph_len)) + graph_len
        prefixes.append(head + b"\x2a" + varint(attr_len) + attr_head + b"\x32" + varint(graph_len) + b"\x0a"
                        + varint(size))
        size = len(head) + 1 + len(varint(attr_len)) + attr_len
    graph = b"\x0a" + varint(size) + b"".join(reversed(prefixes)) + leaf + ld(2, b"g")
    raw = varint(1 << 3) + varint(8) + ld(8, varint(2 << 3) + varint(16)) + ld(7, graph)
    path = tmp_path / "deep.onnx"
    path.write_bytes(raw)
    h.assert_clean_error(h.run_q8rt(path), ["'lvl'"])


def test_vad_8khz_branch(tmp_path, q8rt_run):
    # the shipped Silero VAD (tests/models/make_families.py) takes its else_branch at sr=8000
    # (256 samples); the family suite runs it at 16000
    import os
    from pathlib import Path
    root = Path(os.environ.get("Q8RT_FAMILIES", Path(__file__).resolve().parents[2] / "build" / "model-families"))
    path = root / "vad" / "float.onnx"
    if not path.is_file():
        pytest.skip(f"{path} not built (make models)")
    rng = np.random.default_rng(8000)
    feeds = {"input": (0.3 * np.sin(np.arange(256) / 5.0) + rng.normal(0, 0.02, 256)).astype(np.float32)[None],
             "state": rng.normal(0, 0.3, (2, 1, 128)).astype(np.float32), "sr": np.array(8000, np.int64)}
    m = onnx.load(str(path))
    want = run_ort(m, feeds)
    inputs = {n: save_input(tmp_path, n, v) for n, v in feeds.items()}
    res = h.run_q8rt(path, inputs, tmp_path / "out").assert_ok()
    for i, o in enumerate(m.graph.output):
        got = res.output(o.name)
        assert got.shape == want[i].shape
        # float convolutions and the LSTM sum in another order than ORT's: a few ulps
        assert np.abs(got - want[i]).max() <= 1e-5, f"{o.name}: max |diff| {np.abs(got - want[i]).max()}"


def test_if_one_session_rebinds_and_reruns(tmp_path, q8rt_run):
    # Through the Python module (libq8rt.so): one session, the bind-time fold changing branch as
    # the input shape changes (rank 1 <-> rank 2 outputs), and a run-time If whose taken branch
    # cannot bind failing, then running again when the other branch is taken.
    import os
    import sys
    from pathlib import Path
    if h.is_sanitized_build():
        pytest.skip("ctypes loads libq8rt.so into Python")
    os.environ["Q8RT_LIBRARY"] = str(h.build_dir() / "libq8rt.so")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))
    import q8rt
    shape_m = HOSTILE_FREE["shape"]
    path = h.save_model(shape_m, tmp_path / "shape.onnx")
    with q8rt.Session(str(path)) as s:
        for rows in (1, 2, 1, 3):
            x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
            got = s.run(None, {"x": x})[0]
            want = run_ort(shape_m, {"x": x})[0]
            assert got.shape == want.shape
            h.assert_same_bytes(got, want, f"rows={rows}")
    bind_m = HOSTILE_FREE["cannot_bind"]
    path = h.save_model(bind_m, tmp_path / "bind.onnx")
    with q8rt.Session(str(path)) as s:
        for cond in (False, True, False):
            feeds = {"x": X, "c": np.array(cond)}
            if cond:
                with pytest.raises(q8rt.Error, match="bad_reshape"):
                    s.run(None, feeds)
            else:
                h.assert_same_bytes(s.run(None, feeds)[0], run_ort(bind_m, feeds)[0], f"cond={cond}")


def _free_models():
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["d0"], name="gather", axis=0),
        helper.make_node("Equal", ["d0", "one_i"], ["c"], name="eq"),
        helper.make_node("If", ["c"], ["y"], name="if_rank",
                         then_branch=branch("then", [helper.make_node("Squeeze", ["x", "ax0"], ["t"], name="sq")], ["t"],
                                            [const("ax0", np.array([0], np.int64))]),
                         else_branch=branch("else", [helper.make_node("Identity", ["x"], ["t"], name="id")], ["t"])),
    ]
    shape_m = model(nodes, [helper.make_tensor_value_info("x", F, ["n", 3])],
                    [helper.make_tensor_value_info("y", F, None)],
                    [const("zero", np.int64(0)), const("one_i", np.int64(1))])
    then_g = branch("then", [helper.make_node("Reshape", ["x", "four"], ["t"], name="bad_reshape")], ["t"],
                    [const("four", np.array([4], np.int64))])
    else_g = branch("else", [helper.make_node("Reshape", ["x", "six"], ["t"], name="good_reshape")], ["t"],
                    [const("six", np.array([6], np.int64))])
    bind_m = model([helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then_g, else_branch=else_g)],
                   [helper.make_tensor_value_info("x", F, [2, 3]), helper.make_tensor_value_info("c", B, [])],
                   [helper.make_tensor_value_info("y", F, None)])
    return {"shape": shape_m, "cannot_bind": bind_m}


HOSTILE_FREE = _free_models()
