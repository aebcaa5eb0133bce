"""LayerNormalization (src/ops/layer_normalization.c), InstanceNormalization and
GroupNormalization (src/ops/instance_normalization_group_normalization.c) against ONNX Runtime:
within mix:1e-5 (|diff| <= 1e-5 * max(|ORT|, 1); outputs are normalized, of order 1): the mean
and variance are sums whose order differs from ORT's vector lanes; bit-identity is not claimed."""

import numpy as np
import pytest

from op_check import check, case, rng_for


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
    ]
    return c


CASES = cases()


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_normalization(c, tmp_path, q8rt_run):
    check(c, tmp_path)
