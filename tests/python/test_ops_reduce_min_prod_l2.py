"""ReduceMin, ReduceProd, ReduceL2 (src/ops/reduce.c) against ONNX Runtime: ReduceMin exact;
ReduceProd and ReduceL2 within tol:1e-6 (|diff| <= 1e-6 * (|ORT| + 1e-6): products and sums of
squares whose order differs from ORT's vector lanes). Axes as attribute (opset 13) and as input
(opset 18), keepdims, noop_with_empty_axes (where ORT still squares: x^2, sqrt(x^2), overflow
included; ReduceSumSquare too), empty reductions."""

import numpy as np
import pytest

from op_check import check, case, rng_for


def cases():
    r = rng_for("reduce3")
    x = r.uniform(-2, 2, (3, 4, 5)).astype(np.float32)
    p = r.uniform(0.5, 1.5, (3, 4, 5)).astype(np.float32)
    c = []
    for op, v, cmp in (("ReduceMin", x, "exact"), ("ReduceProd", p, "tol:1e-6"), ("ReduceL2", x, "tol:1e-6")):
        c.append(case(f"{op}_attr_axis1", op, [("x", v)], attrs={"axes": [1]}, compare=cmp, opset=13))
        c.append(case(f"{op}_attr_all_nokeep", op, [("x", v)], attrs={"keepdims": 0}, compare=cmp, opset=13))
        c.append(case(f"{op}_input_axes", op, [("x", v), ("a", np.array([0, -1], np.int64))], inits=["a"],
                      compare=cmp, opset=18))
        c.append(case(f"{op}_noop_empty", op, [("x", v * 1e19 if op == "ReduceL2" else v)], attrs={"noop_with_empty_axes": 1}, compare=cmp, opset=18))
        c.append(case(f"{op}_empty_set", op, [("x", np.zeros((2, 0, 3), np.float32)),
                                              ("a", np.array([1], np.int64))], inits=["a"], compare=cmp, opset=18))
    c.append(case("ReduceSumSquare_noop_empty", "ReduceSumSquare", [("x", x * 1e19)],
                  attrs={"noop_with_empty_axes": 1}, opset=18))
    return c


CASES = cases()


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_reduce_min_prod_l2(c, tmp_path, q8rt_run):
    check(c, tmp_path)
