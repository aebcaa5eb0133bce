"""ai.onnx.ml ops (src/ops/oplist-ai-onnx-ml.inc) against ONNX Runtime, exact.

Scaler: y = (x - offset) * scale in float32, as the feature-scaling step scikit-learn converters
write in front of a model (skl2onnx's StandardScaler; the surrogate MLPs of the surfaces-onnx-files
wheel begin with one). Per-feature and single-value attributes, float32 / int32 / int64 inputs
(int64 values past 2^24, whose conversion to float32 rounds), 1-D X (features along dim 0), X of
rank 3 (ORT's feature index is the flat index mod dim 1, kept), a batch dimension bound at run,
and Scaler feeding the float MatMul -> Add -> Relu of a small tabular MLP. Bad attributes and
shapes are refused with one clean error line naming the node.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h
from op_check import Case, case, check, check_refused, node_model, rng_for

ML = "ai.onnx.ml"


def scaler(name, x, offset, scale, **kw):
    return case(name, "Scaler", [("x", x)], attrs={"offset": list(offset), "scale": list(scale)}, domain=ML, **kw)


def _f(shape, tag, mul=3.0):
    return (rng_for(tag).standard_normal(shape) * mul).astype(np.float32)


def _off_sc(n, tag):
    r = rng_for(tag)
    return (r.standard_normal(n) * 2).astype(np.float32).tolist(), (r.random(n) * 3 + 0.01).astype(np.float32).tolist()


def mlp_model():
    """x [n, 4] -> Scaler -> MatMul [4, 8] -> Add -> Relu -> MatMul [8, 1] (the surrogate MLPs'
    shape), the batch n bound at run."""
    r = rng_for("scaler_mlp")
    w1 = (r.standard_normal((4, 8)) * 0.5).astype(np.float32)
    b1 = (r.standard_normal(8) * 0.1).astype(np.float32)
    w2 = (r.standard_normal((8, 1)) * 0.5).astype(np.float32)
    off, sc = _off_sc(4, "scaler_mlp_attrs")
    nodes = [helper.make_node("Scaler", ["x"], ["s"], name="scaler_node", domain=ML, offset=off, scale=sc),
             helper.make_node("MatMul", ["s", "w1"], ["m1"], name="mm1"),
             helper.make_node("Add", ["m1", "b1"], ["a1"], name="add1"),
             helper.make_node("Relu", ["a1"], ["r1"], name="relu1"),
             helper.make_node("MatMul", ["r1", "w2"], ["y0"], name="mm2")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                              [helper.make_tensor_value_info("y0", TensorProto.FLOAT, ["n", 1])],
                              [h.tensor("w1", w1), h.tensor("b1", b1), h.tensor("w2", w2)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 1)])
    m.ir_version = 8
    return m


def symbolic_model():
    off, sc = _off_sc(5, "scaler_sym_attrs")
    node = helper.make_node("Scaler", ["x"], ["y0"], name="scaler_node", domain=ML, offset=off, scale=sc)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 5])],
                              [helper.make_empty_tensor_value_info("y0")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 1)])
    m.ir_version = 8
    return m


_big = rng_for("scaler_i64").integers(-(1 << 40), 1 << 40, (6, 3)).astype(np.int64)
_big[0, :] = [(1 << 24) + 1, -(1 << 24) - 3, (1 << 53) + 7]

CASES = [
    scaler("per_feature", _f((9, 4), "s_pf"), *_off_sc(4, "s_pf_a")),
    scaler("single_value", _f((3, 7), "s_sv"), [1.5], [0.25]),
    scaler("int32", rng_for("s_i32").integers(-(1 << 30), 1 << 30, (5, 3)).astype(np.int32), *_off_sc(3, "s_i32_a")),
    scaler("int64", _big, *_off_sc(3, "s_i64_a")),
    scaler("rank1", _f((6,), "s_r1"), *_off_sc(6, "s_r1_a")),
    scaler("rank3_dim1", _f((2, 3, 5), "s_r3"), *_off_sc(3, "s_r3_a")),
    scaler("inf_nan", np.array([[np.inf, -np.inf], [np.nan, 0.0]], np.float32), [np.inf, 1.0], [2.0, 0.0]),
    scaler("empty_batch", np.zeros((0, 4), np.float32), *_off_sc(4, "s_empty_a")),
    Case("batch_bound_at_run", symbolic_model(), {"x": _f((11, 5), "s_sym")}),
]


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_scaler(c, tmp_path, q8rt_run):
    check(c, tmp_path)


def test_scaler_mlp(tmp_path, q8rt_run):
    # the float MatMuls sum in q8rt's order: within the float tolerance of the other float tests
    check(Case("mlp", mlp_model(), {"x": _f((33, 4), "s_mlp")}, "tol:1e-5"), tmp_path)


def _refused(tmp_path, x, attrs, words):
    m, feeds = node_model("Scaler", [("x", x)], attrs=attrs, domain=ML)
    check_refused(m, feeds, tmp_path, words)


def test_scaler_refuses_feature_count(tmp_path, q8rt_run):
    _refused(tmp_path, _f((4, 5), "s_bad1"), {"offset": [0.0, 1.0, 2.0], "scale": [1.0, 1.0, 1.0]}, ["features"])


def test_scaler_refuses_lengths_differ(tmp_path, q8rt_run):
    _refused(tmp_path, _f((4, 2), "s_bad2"), {"offset": [0.0, 1.0], "scale": [1.0]}, ["one length"])


def test_scaler_refuses_missing_scale(tmp_path, q8rt_run):
    _refused(tmp_path, _f((4, 2), "s_bad3"), {"offset": [0.0, 1.0]}, ["scale"])


def test_scaler_refuses_scalar(tmp_path, q8rt_run):
    _refused(tmp_path, np.array(2.0, np.float32), {"offset": [0.0], "scale": [1.0]}, ["scalar"])


def test_scaler_refuses_uint8(tmp_path, q8rt_run):
    _refused(tmp_path, np.zeros((2, 2), np.uint8), {"offset": [0.0], "scale": [1.0]}, ["uint8"])
