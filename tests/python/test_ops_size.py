"""Size (src/ops/size.c) against ONNX Runtime, exact: from a static shape, from dimensions bound
at run time (symbolic in the model), and an empty tensor."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h
from op_check import Case, check, case, rng_for


def symbolic_model():
    """x [1, n] -> Size -> Cast -> Mul with x: the count is known only when n is bound."""
    nodes = [helper.make_node("Size", ["x"], ["n"], name="size_node"),
             helper.make_node("Cast", ["n"], ["nf"], name="cast_node", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["x", "nf"], ["y0"], name="mul_node")]
    return h.make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "n"])],
                        [helper.make_empty_tensor_value_info("y0")], [], opset=17)


CASES = [
    case("static", "Size", [("x", rng_for("size").standard_normal((2, 3, 5)).astype(np.float32))], opset=13),
    case("uint8_empty", "Size", [("x", np.zeros((4, 0), np.uint8))], opset=19),
    Case("symbolic", symbolic_model(), {"x": rng_for("size_sym").standard_normal((1, 7)).astype(np.float32)}),
]


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_size(c, tmp_path, q8rt_run):
    check(c, tmp_path)
