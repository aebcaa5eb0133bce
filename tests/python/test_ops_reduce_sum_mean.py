"""ReduceSum and ReduceMean (src/ops/reduce.c) against ONNX Runtime, byte for byte.

Over innermost axes (each output's elements one contiguous row, dims of extent 1 aside) ORT sums
each row with Eigen's vectorized reduction: 4-float packets from the row's first 16-byte-aligned
element, two packet accumulators, folded (p0 + p2) + (p1 + p3), then the elements before and
after in order. q8rt adds in that order there (red_sum_row), so a LayerNorm's mean over 120
channels (PP-OCR recognizers), an SE block's mean over a plane (PP-OCRv6's ReduceMean where v4
has GlobalAveragePool) or magika's ReduceSum gives ORT's bits; a last-bit difference there moved
quantized outputs a step after the next QuantizeLinear (PP-OCRv5 rec qop_s8s8_pc: 5 outputs) and
every output of dynamically quantized models (a DynamicQuantizeLinear's scale). Over other axes
both add in memory order, but for reduced axes between kept ones (ORT's K-R-K form, a GEMM with a
ones vector: not matched, not tested). Rows of every length 1-70 and every start offset mod 4 are
covered."""

import numpy as np
import pytest

from op_check import check, case, rng_for


def cases():
    r = rng_for("reduce_sum_mean")
    c = []

    def rnd(*shape):
        return (r.standard_normal(shape) * 8).astype(np.float32)

    for op in ("ReduceSum", "ReduceMean"):
        att = 12 if op == "ReduceSum" else 13  # the last opset with axes as an attribute
        for n in list(range(1, 71)) + [120, 127, 1000, 4099]:
            # 3 rows: starts at offsets 0, n, 2n (mod 4 all four when n is odd)
            c.append(case(f"{op}_rows_{n}", op, [("x", rnd(3, n))], attrs={"axes": [1]}, opset=att))
        c.append(case(f"{op}_layernorm", op, [("x", rnd(1, 40, 120))], attrs={"axes": [-1]}, opset=att))
        c.append(case(f"{op}_se_plane", op, [("x", rnd(1, 32, 31, 47))], attrs={"axes": [2, 3]}, opset=att))
        c.append(case(f"{op}_se_plane_nokeep", op, [("x", rnd(2, 8, 5, 13))], attrs={"axes": [2, 3], "keepdims": 0},
                      opset=att))
        c.append(case(f"{op}_all", op, [("x", rnd(5, 7, 11))], attrs={"keepdims": 0}, opset=att))
        c.append(case(f"{op}_unit_dims_trailing", op, [("x", rnd(3, 1, 37, 1))], attrs={"axes": [2, 3]}, opset=att))
        c.append(case(f"{op}_input_axes", op, [("x", rnd(6, 29)), ("a", np.array([-1], np.int64))], inits=["a"],
                      opset=18 if op == "ReduceMean" else 13))
        # not innermost: memory order in both (ORT keeps dims of extent 1: 3x1x5x1x9 over 2 and 4 is
        # not a row for it either)
        c.append(case(f"{op}_leading", op, [("x", rnd(9, 6, 7))], attrs={"axes": [0]}, opset=att))
        c.append(case(f"{op}_unit_dims_between", op, [("x", rnd(3, 1, 5, 1, 9))], attrs={"axes": [2, 4]}, opset=att))
    return c


CASES = cases()


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_reduce_sum_mean(c, tmp_path, q8rt_run):
    check(c, tmp_path)
