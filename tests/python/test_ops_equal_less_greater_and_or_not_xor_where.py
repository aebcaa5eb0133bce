"""Comparisons and logic on bool (src/ops/equal_less_greater_and_or_not_xor.c), Where
(src/ops/where.c) and Cast to and from bool (src/ops/cast_cast_like.c) against ONNX Runtime,
exact, with broadcasting, NaN and the type limits."""

import numpy as np
import pytest

from op_check import check, case, rng_for

CMP = ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]


def operands(dt, r):
    if dt == np.float32:
        a = r.integers(-3, 4, (2, 3, 4)).astype(np.float32)
        a.flat[[0, 5]] = [np.nan, -0.0]
        b = r.integers(-3, 4, (3, 1)).astype(np.float32)
        b.flat[0] = 0.0
        return a, b
    info = np.iinfo(dt)
    a = r.integers(info.min, int(info.max) + 1, (2, 3, 4), dtype=np.int64).astype(dt)
    a.flat[:3] = [info.min, info.max, 0]
    b = r.integers(info.min, int(info.max) + 1, (3, 1), dtype=np.int64).astype(dt)
    b.flat[0] = info.min
    return a, b


def cases():
    c = []
    for op in CMP:
        for dt in (np.float32, np.int64, np.int32, np.int8, np.uint8):
            if op in ("LessOrEqual", "GreaterOrEqual") and dt in (np.int8, np.uint8):
                continue  # ORT's CPU kernels for these two: float, double, int32, int64 only
            r = rng_for(f"{op}{dt}")
            a, b = operands(dt, r)
            c.append(case(f"{op}_{np.dtype(dt).name}", op, [("a", a), ("b", b)], opset=16))
        r = rng_for(op)
        c.append(case(f"{op}_scalar_rhs", op, [("a", r.standard_normal((5, 4)).astype(np.float32)),
                                               ("b", np.array(0.25, np.float32))], inits=["b"], opset=16))
    r = rng_for("bool")
    p, q = r.integers(0, 2, (3, 4)).astype(np.bool_), r.integers(0, 2, (4,)).astype(np.bool_)
    c.append(case("Equal_bool", "Equal", [("a", p), ("b", q)], opset=13))
    for op in ("And", "Or", "Xor"):
        c.append(case(f"{op}_bcast", op, [("a", p), ("b", q)], opset=13))
    c.append(case("Not", "Not", [("a", p)], opset=13))
    for dt in (np.float32, np.uint8, np.int64, np.int32):
        x = r.integers(0, 100, (2, 1, 5)).astype(dt)
        y = r.integers(0, 100, (3, 1)).astype(dt)
        cond = r.integers(0, 2, (3, 5)).astype(np.bool_)
        c.append(case(f"Where_{np.dtype(dt).name}", "Where", [("c", cond), ("x", x), ("y", y)], opset=16))
        same = r.integers(0, 100, (3, 37)).astype(dt)  # contiguous rows: the blocked blend and its tail
        c.append(case(f"Where_{np.dtype(dt).name}_same_shape", "Where",
                      [("c", r.integers(0, 2, (3, 37)).astype(np.bool_)), ("x", same), ("y", same[::-1].copy())],
                      opset=16))
    cond = r.integers(0, 2, (1, 40, 1)).astype(np.bool_)
    c.append(case("Where_cond_bcast_const_y", "Where", [("c", cond), ("x", r.standard_normal((2, 40, 8)).astype(
        np.float32)), ("y", np.array(-1e4, np.float32))], inits=["y"], opset=13))
    fx = np.array([0.0, -0.0, 0.5, -3.0, np.nan, np.inf, 1e-40], np.float32)
    c.append(case("Cast_float_to_bool", "Cast", [("x", fx)], attrs={"to": 9}, opset=13))
    c.append(case("Cast_int64_to_bool", "Cast", [("x", np.array([0, 1, -1, 2**40], np.int64))], attrs={"to": 9},
                  opset=13))
    bx = np.array([True, False, True], np.bool_)
    for to, name in ((1, "float"), (7, "int64"), (2, "uint8"), (9, "bool")):
        c.append(case(f"Cast_bool_to_{name}", "Cast", [("x", bx)], attrs={"to": to}, opset=13))
    return c


CASES = cases()


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_compare_logic_where(c, tmp_path, q8rt_run):
    check(c, tmp_path)
