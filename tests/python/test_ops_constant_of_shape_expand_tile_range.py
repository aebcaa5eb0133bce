"""ConstantOfShape (src/ops/constant_of_shape.c), Expand and Tile (src/ops/expand_tile.c) and Range
(src/ops/range.c) against ONNX Runtime, exact. The shape-like inputs are initializers, or computed
from a graph input's shape (Shape -> ... chains, known when shapes are bound)."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h
from op_check import Case, check, case, rng_for


def shape_chain_model(consumer, attrs=None, x_shape=(2, 3, 5), extra_inputs=(), inits=()):
    """x -> Shape -> consumer(shape_value, ...): the consumer's shape input comes from x's shape."""
    nodes = [helper.make_node("Shape", ["x"], ["sh"], name="shape_node"),
             helper.make_node(consumer, ["sh", *extra_inputs] if consumer == "ConstantOfShape" else
                              [*extra_inputs, "sh"], ["y0"], name=f"{consumer.lower()}_node", **(attrs or {}))]
    m = h.make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
                     [helper.make_empty_tensor_value_info("y0")], [h.tensor(k, v) for k, v in inits], opset=17)
    return m


def cases():
    r = rng_for("cos_expand_tile_range")
    c = [
        case("cos_default_f32", "ConstantOfShape", [("s", np.array([2, 3], np.int64))], inits=["s"], opset=17),
        case("cos_i64_value", "ConstantOfShape", [("s", np.array([4], np.int64))], inits=["s"],
             attrs={"value": helper.make_tensor("v", TensorProto.INT64, [1], [-7])}),
        case("cos_bool", "ConstantOfShape", [("s", np.array([3, 1, 2], np.int64))], inits=["s"],
             attrs={"value": helper.make_tensor("v", TensorProto.BOOL, [1], [True])}),
        case("cos_u8_empty_dim", "ConstantOfShape", [("s", np.array([0, 5], np.int64))], inits=["s"],
             attrs={"value": helper.make_tensor("v", TensorProto.UINT8, [1], [200])}),
        case("cos_scalar", "ConstantOfShape", [("s", np.zeros((0,), np.int64))], inits=["s"],
             attrs={"value": helper.make_tensor("v", TensorProto.FLOAT, [1], [2.5])}),
        case("expand_f32", "Expand", [("x", r.standard_normal((3, 1)).astype(np.float32)),
                                      ("s", np.array([2, 3, 4], np.int64))], inits=["s"], opset=13),
        case("expand_bidirectional", "Expand", [("x", r.standard_normal((1, 4, 1)).astype(np.float32)),
                                                ("s", np.array([3, 1, 5], np.int64))], inits=["s"], opset=13),
        case("expand_i8_scalar", "Expand", [("x", np.array(-3, np.int8)), ("s", np.array([2, 2], np.int64))],
             inits=["s"], opset=13),
        case("expand_u8_same", "Expand", [("x", r.integers(0, 256, (2, 3)).astype(np.uint8)),
                                          ("s", np.array([1], np.int64))], inits=["s"], opset=13),
        case("tile_f32", "Tile", [("x", r.standard_normal((2, 3)).astype(np.float32)),
                                  ("t", np.array([2, 3], np.int64))], inits=["t"], opset=13),
        case("tile_i64_3d", "Tile", [("x", r.integers(-5, 5, (2, 1, 3)).astype(np.int64)),
                                     ("t", np.array([1, 4, 2], np.int64))], inits=["t"], opset=13),
        case("tile_u8_zero", "Tile", [("x", r.integers(0, 256, (2, 3)).astype(np.uint8)),
                                      ("t", np.array([0, 2], np.int64))], inits=["t"], opset=13),
        case("tile_bool", "Tile", [("x", r.integers(0, 2, (3,)).astype(np.bool_)),
                                   ("t", np.array([3], np.int64))], inits=["t"], opset=13),
        case("range_i64", "Range", [("a", np.array(2, np.int64)), ("b", np.array(17, np.int64)),
                                    ("d", np.array(3, np.int64))], inits=["a", "b", "d"], opset=11),
        case("range_i32_negative", "Range", [("a", np.array(10, np.int32)), ("b", np.array(-4, np.int32)),
                                             ("d", np.array(-3, np.int32))], inits=["a", "b", "d"], opset=11),
        case("range_f32", "Range", [("a", np.array(0.1, np.float32)), ("b", np.array(7.3, np.float32)),
                                    ("d", np.array(0.7, np.float32))], inits=["a", "b", "d"], opset=11),
        case("range_f32_empty", "Range", [("a", np.array(1.0, np.float32)), ("b", np.array(0.0, np.float32)),
                                          ("d", np.array(0.5, np.float32))], inits=["a", "b", "d"], opset=11),
        case("range_i16", "Range", [("a", np.array(-5, np.int16)), ("b", np.array(5, np.int16)),
                                    ("d", np.array(4, np.int16))], inits=["a", "b", "d"], opset=11),
    ]
    c.append(Case("cos_from_shape", shape_chain_model(
        "ConstantOfShape", {"value": helper.make_tensor("v", TensorProto.FLOAT, [1], [1.5])}),
        {"x": r.standard_normal((2, 3, 5)).astype(np.float32)}))
    c.append(Case("expand_to_shape", shape_chain_model("Expand", extra_inputs=["one"],
                                                       inits=[("one", np.array([[4.0]], np.float32))]),
                  {"x": r.standard_normal((2, 3, 5)).astype(np.float32)}))
    return c


CASES = cases()


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_constant_of_shape_expand_tile_range(c, tmp_path, q8rt_run):
    check(c, tmp_path)


def test_range_from_shape(tmp_path, q8rt_run):
    """Shape -> Gather -> Range -> Mul: the count comes from the bound input shape (--shape)."""
    nodes = [helper.make_node("Shape", ["x"], ["sh"], name="shape_node"),
             helper.make_node("Gather", ["sh", "i1"], ["n"], name="gather_node", axis=0),
             helper.make_node("Range", ["zero", "n", "one"], ["r"], name="range_node"),
             helper.make_node("Cast", ["r"], ["rf"], name="cast_node", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["x", "rf"], ["y0"], name="mul_node")]
    inits = [h.tensor("i1", np.array(1, np.int64)), h.tensor("zero", np.array(0, np.int64)),
             h.tensor("one", np.array(1, np.int64))]
    m = h.make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "n"])],
                     [helper.make_empty_tensor_value_info("y0")], inits, opset=17)
    x = rng_for("range_from_shape").standard_normal((1, 9)).astype(np.float32)
    check(Case("range_from_shape", m, {"x": x}), tmp_path)
