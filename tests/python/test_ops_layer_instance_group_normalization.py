"""LayerNormalization (src/ops/layer_normalization.c), InstanceNormalization and
GroupNormalization (src/ops/instance_normalization_group_normalization.c) against ONNX Runtime:
within mix:1e-5 (|diff| <= 1e-5 * max(|ORT|, 1); outputs are normalized, of order 1): the mean
and variance are sums whose order differs from ORT's vector lanes; bit-identity is not claimed."""

import numpy as np
import pytest

import q8rt_harness as h
from op_check import check, case, node_model, rng_for, save_input


def cases():
    r = rng_for("norm")
    f = lambda *s: r.standard_normal(s).astype(np.float32)  # noqa: E731
    c = [
        case("LayerNorm_last", "LayerNormalization", [("x", f(2, 40, 96)), ("s", f(96)), ("b", f(96))],
             inits=["s", "b"], compare="mix:1e-5", opset=17),
        case("LayerNorm_axis1_no_bias", "LayerNormalization", [("x", f(3, 4, 5)), ("s", f(4, 5))],
             inits=["s"], attrs={"axis": 1}, compare="mix:1e-5", opset=17),
        case("LayerNorm_mean_invstd", "LayerNormalization", [("x", f(2, 3, 16) * 3 + 1), ("s", f(16)),
                                                              ("b", f(16))],
             n_out=3, attrs={"epsilon": 1e-3}, compare="mix:1e-5", opset=17),
        case("InstanceNorm", "InstanceNormalization", [("x", f(2, 3, 5, 7) * 2 + 5), ("s", f(3)), ("b", f(3))],
             inits=["s", "b"], compare="mix:1e-5", opset=13),
        case("InstanceNorm_3d", "InstanceNormalization", [("x", f(1, 4, 33)), ("s", f(4)), ("b", f(4))],
             attrs={"epsilon": 1e-2}, compare="mix:1e-5", opset=13),
        case("GroupNorm_opset18", "GroupNormalization", [("x", f(2, 6, 4, 3)), ("s", f(3)), ("b", f(3))],
             inits=["s", "b"], attrs={"num_groups": 3}, compare="mix:1e-5", opset=18),
        case("GroupNorm_opset21", "GroupNormalization", [("x", f(2, 8, 5)), ("s", f(8)), ("b", f(8))],
             inits=["s", "b"], attrs={"num_groups": 2, "epsilon": 1e-3}, compare="mix:1e-5", opset=21),
        case("InstanceNorm_zero_channels", "InstanceNormalization", [("x", f(2, 0, 3)), ("s", f(0)), ("b", f(0))],
             compare="mix:1e-5", opset=13),
    ]
    return c


CASES = cases()


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_normalization(c, tmp_path, q8rt_run):
    check(c, tmp_path)


def test_group_normalization_empty_spatial(tmp_path, q8rt_run):
    """X with no spatial elements: an empty Y (ORT 1.30 fails inside its function body's Reshape)."""
    m, feeds = node_model("GroupNormalization", [("x", np.zeros((2, 4, 0), np.float32)),
                                                 ("s", np.ones(4, np.float32)), ("b", np.ones(4, np.float32))],
                          attrs={"num_groups": 2}, opset=21)
    inputs = {n: save_input(tmp_path, n, v) for n, v in feeds.items()}
    res = h.run_q8rt(h.save_model(m, tmp_path / "m.onnx"), inputs, tmp_path / "out").assert_ok()
    assert res.output("y0").shape == (2, 4, 0)
