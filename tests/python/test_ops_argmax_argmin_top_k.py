"""ArgMax/ArgMin (src/ops/argmax_argmin.c) and TopK (src/ops/top_k.c) against ONNX Runtime, exact:
ties (first / last index, TopK's smaller index first), every axis, keepdims, largest/smallest,
k = 0, 1, all; float32 and integer inputs."""

import numpy as np
import pytest

from op_check import check, case, rng_for


def ties(dt, shape, r):
    return r.integers(-3, 4, shape).astype(dt)


def cases():
    c = []
    r = rng_for("arg")
    for op in ("ArgMax", "ArgMin"):
        for dt in (np.float32, np.int64, np.int32, np.uint8, np.int8):
            x = ties(dt, (3, 5, 7), r)
            for axis in (0, 1, -1):
                c.append(case(f"{op}_{np.dtype(dt).name}_axis{axis}", op, [("x", x)], attrs={"axis": axis},
                              opset=13))
            c.append(case(f"{op}_{np.dtype(dt).name}_last_nokeep", op, [("x", x)],
                          attrs={"axis": 1, "keepdims": 0, "select_last_index": 1}, opset=13))
        c.append(case(f"{op}_ocr_row", op, [("x", r.standard_normal((1, 40, 6625)).astype(np.float32))],
                      attrs={"axis": 2, "keepdims": 0}, opset=13))
    for n in (1, 7, 8, 9, 17, 40):  # contiguous float rows: the two-pass path, its lanes and tail
        x = ties(np.float32, (3, n), r)
        x[0, n // 2] = -0.0  # -0 ties with +0
        x[1, :] = x[1, 0]  # all equal
        for op in ("ArgMax", "ArgMin"):
            for last in (0, 1):
                c.append(case(f"{op}_row{n}_last{last}", op, [("x", x)], attrs={"axis": 1, "select_last_index": last},
                              opset=13))
    x = np.array([[np.nan, 1, 2], [1, np.nan, 2], [3, 2, np.nan], [np.nan, np.nan, 0]], np.float32)
    for op in ("ArgMax", "ArgMin"):
        c.append(case(f"{op}_nan", op, [("x", x)], attrs={"axis": 1}, opset=13))
    for dt in (np.float32, np.int64, np.int32, np.uint8):
        x = ties(dt, (4, 6, 9), r)
        for axis, k, largest in ((-1, 3, 1), (-1, 9, 0), (1, 1, 1), (0, 4, 0), (1, 0, 1)):
            c.append(case(f"TopK_{np.dtype(dt).name}_a{axis}_k{k}_l{largest}", "TopK",
                          [("x", x), ("k", np.array([k], np.int64))], n_out=2, inits=["k"],
                          attrs={"axis": axis, "largest": largest}, opset=11))
    x = r.standard_normal((2, 8400)).astype(np.float32)
    c.append(case("TopK_detector_scores", "TopK", [("x", x), ("k", np.array([100], np.int64))], n_out=2,
                  inits=["k"], opset=11))
    c.append(case("TopK_opset10", "TopK", [("x", ties(np.float32, (3, 10), r)), ("k", np.array([4], np.int64))],
                  n_out=2, inits=["k"], opset=10))
    return c


CASES = cases()


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_arg_topk(c, tmp_path, q8rt_run):
    check(c, tmp_path)
