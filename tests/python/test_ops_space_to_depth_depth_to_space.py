"""SpaceToDepth and DepthToSpace (DCR, CRD) (src/ops/space_to_depth_depth_to_space.c) against ONNX
Runtime, exact, float32 and the 8-bit types (ORT runs DepthToSpace on uint8 since opset 13; for the
other types the numpy reference of the ONNX spec is the expectation)."""

import numpy as np
import pytest

from op_check import check, case, rng_for, node_model, save_input
import q8rt_harness as h


def s2d_ref(x, b):
    n, c, hh, ww = x.shape
    t = x.reshape(n, c, hh // b, b, ww // b, b).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * b * b, hh // b, ww // b)


def d2s_ref(x, b, mode):
    n, c, hh, ww = x.shape
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), hh, ww).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, hh, ww).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), hh * b, ww * b)


def cases():
    r = rng_for("s2d")
    f = lambda *s: r.standard_normal(s).astype(np.float32)  # noqa: E731
    return [
        case("s2d_b2_focus", "SpaceToDepth", [("x", f(1, 3, 8, 12))], attrs={"blocksize": 2}, opset=13),
        case("s2d_b3", "SpaceToDepth", [("x", f(2, 2, 9, 6))], attrs={"blocksize": 3}, opset=13),
        case("s2d_b1", "SpaceToDepth", [("x", f(1, 2, 3, 3))], attrs={"blocksize": 1}, opset=13),
        case("d2s_dcr_b2", "DepthToSpace", [("x", f(2, 8, 3, 5))], attrs={"blocksize": 2}, opset=13),
        case("d2s_crd_b2", "DepthToSpace", [("x", f(1, 12, 4, 3))], attrs={"blocksize": 2, "mode": "CRD"}, opset=13),
        case("d2s_dcr_b3_opset11", "DepthToSpace", [("x", f(1, 18, 2, 2))], attrs={"blocksize": 3, "mode": "DCR"},
             opset=11),
        case("d2s_u8_dcr", "DepthToSpace", [("x", r.integers(0, 256, (1, 16, 3, 4)).astype(np.uint8))],
             attrs={"blocksize": 2}, opset=13),
    ]


CASES = cases()


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_space_depth(c, tmp_path, q8rt_run):
    check(c, tmp_path)


@pytest.mark.parametrize("op,mode", [("SpaceToDepth", None), ("DepthToSpace", "DCR"), ("DepthToSpace", "CRD")])
@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int64, np.bool_])
def test_space_depth_other_types_vs_spec(op, mode, dt, tmp_path, q8rt_run):
    r = rng_for(f"{op}{mode}{dt}")
    x = r.integers(-100, 100, (2, 8, 4, 6)).astype(dt)
    attrs = {"blocksize": 2}
    if mode:
        attrs["mode"] = mode
    m, feeds = node_model(op, [("x", x)], attrs=attrs, opset=13)
    want = s2d_ref(x, 2) if op == "SpaceToDepth" else d2s_ref(x, 2, mode)
    res = h.run_q8rt(h.save_model(m, tmp_path / "m.onnx"), {"x": save_input(tmp_path, "x", x)},
                     tmp_path / "out").assert_ok()
    h.assert_same_bytes(res.output("y0"), np.ascontiguousarray(want), f"{op} {mode} {dt}")
