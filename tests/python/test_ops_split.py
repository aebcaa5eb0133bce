"""Split (src/ops/split.c) against ONNX Runtime, exact: every opset form (attribute, input,
num_outputs, equal parts), several element types, empty chunks; the split sizes given by a
graph input are refused (their value is not known before the run)."""

import numpy as np
import pytest

from op_check import check, check_refused, case, rng_for


def cases():
    r = rng_for("split")
    x = r.standard_normal((2, 6, 5)).astype(np.float32)
    c = [
        case("attr_opset11", "Split", [("x", x)], n_out=3, attrs={"axis": 1, "split": [1, 3, 2]}, opset=11),
        case("attr_equal_opset11", "Split", [("x", x)], n_out=2, attrs={"axis": 1}, opset=11),
        case("input_opset13_i8", "Split", [("x", r.integers(-128, 128, (3, 4, 7)).astype(np.int8)),
                                           ("s", np.array([2, 0, 5], np.int64))], n_out=3, attrs={"axis": -1},
             inits=["s"], opset=13),
        case("input_opset13_u8_axis0", "Split", [("x", r.integers(0, 256, (5, 3)).astype(np.uint8)),
                                                 ("s", np.array([4, 1], np.int64))], n_out=2, inits=["s"], opset=13),
        case("equal_opset13_i64", "Split", [("x", r.integers(-9, 9, (4, 9)).astype(np.int64))], n_out=3,
             attrs={"axis": 1}, opset=13),
        case("num_outputs_opset18", "Split", [("x", r.standard_normal((2, 7, 3)).astype(np.float32))], n_out=3,
             attrs={"axis": 1, "num_outputs": 3}, opset=18),
        case("num_outputs_even_opset18", "Split", [("x", r.standard_normal((8, 2)).astype(np.float32))], n_out=4,
             attrs={"num_outputs": 4}, opset=18),
        case("input_opset18_bool", "Split", [("x", r.integers(0, 2, (2, 5)).astype(np.bool_)),
                                             ("s", np.array([3, 2], np.int64))], n_out=2, attrs={"axis": 1},
             inits=["s"], opset=18),
        case("yolo_head_opset13", "Split", [("x", r.standard_normal((1, 84, 40)).astype(np.float32)),
                                            ("s", np.array([4, 80], np.int64))], n_out=2, attrs={"axis": 1},
             inits=["s"], opset=13),
    ]
    return c


CASES = cases()


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_split(c, tmp_path, q8rt_run):
    check(c, tmp_path)


def test_split_sizes_from_graph_input_refused(tmp_path, q8rt_run):
    c = case("dyn", "Split", [("x", np.zeros((2, 4), np.float32)), ("s", np.array([1, 3], np.int64))], n_out=2,
             attrs={"axis": 1}, opset=13)
    check_refused(c.model, c.feeds, tmp_path, ["split", "run time"])
