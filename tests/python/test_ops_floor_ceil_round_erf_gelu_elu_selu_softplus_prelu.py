"""Float32 elementwise math (src/ops/floor_ceil_round_erf_gelu_elu_selu_softplus.c) and PRelu
(src/ops/prelu.c) against ONNX Runtime. Floor, Ceil, Round and PRelu are exact; Erf, Gelu, Elu,
Selu and Softplus within the ulp bound listed per case (ORT uses MLAS's erf/exp/tanh and Eigen,
q8rt libm's erff/expf/logf/tanhf)."""

import numpy as np
import pytest

from op_check import check, case, rng_for


def x_values(name, shape=(3, 7, 11)):
    r = rng_for(name)
    x = (r.standard_normal(shape) * 4).astype(np.float32)
    special = np.array([0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-30, -1e-30, 30.0, -30.0, 100.0, -100.0,
                        np.inf, -np.inf, np.nan, 8388609.0, -4194305.5], np.float32)
    x.flat[:special.size] = special
    return x


def cases():
    c = []
    for op, opset, cmp in (("Floor", 13, "exact"), ("Ceil", 13, "exact"), ("Round", 11, "exact"),
                           ("Erf", 13, "ulp:2"), ("Elu", 13, "mix:1e-6"), ("Selu", 13, "mix:1e-6"),
                           ("Softplus", 13, "ulp:4")):
        c.append(case(op, op, [("x", x_values(op))], compare=cmp, opset=opset))
    c.append(case("Elu_alpha", "Elu", [("x", x_values("elu2"))], attrs={"alpha": 0.3}, compare="mix:1e-6"))
    c.append(case("Selu_attrs", "Selu", [("x", x_values("selu2"))], attrs={"alpha": 2.0, "gamma": 0.7},
                  compare="mix:1e-6"))
    c.append(case("Gelu", "Gelu", [("x", x_values("gelu"))], compare="mix:1e-6", opset=20))
    c.append(case("Gelu_tanh", "Gelu", [("x", x_values("gelut"))], attrs={"approximate": "tanh"},
                  compare="mix:1e-6", opset=20))
    r = rng_for("prelu")
    x = x_values("prelu", (2, 16, 5, 7))
    c.append(case("PRelu_channel", "PRelu", [("x", x), ("s", r.standard_normal((16, 1, 1)).astype(np.float32))],
                  inits=["s"], opset=13))
    c.append(case("PRelu_scalar", "PRelu", [("x", x), ("s", np.array([0.25], np.float32))], inits=["s"], opset=13))
    c.append(case("PRelu_full", "PRelu", [("x", x), ("s", r.standard_normal(x.shape).astype(np.float32))],
                  opset=16))
    c.append(case("PRelu_last_axis", "PRelu", [("x", x), ("s", r.standard_normal((7,)).astype(np.float32))],
                  inits=["s"], opset=16))
    return c


CASES = cases()


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_float_math(c, tmp_path, q8rt_run):
    check(c, tmp_path)
