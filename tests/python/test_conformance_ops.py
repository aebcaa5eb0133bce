"""ONNX backend node tests for the ops beyond Q/DQ/QLinearConv, listed per op family in
tests/python/conformance/<family>.txt. A line is

    test_name                 run the node test as it is (every graph input fed from its .pb)
    test_name frozen          turn every graph input but the first into an initializer first
                              (quantized ops whose scales/zero points q8rt requires constant)
    test_name constant        turn every graph input into an initializer (ops whose inputs all
                              decide the output's shape: ConstantOfShape, Range)
    test_name refused: why    out of scope: q8rt must refuse the model with one clean error line

Integer outputs must match byte for byte. Float outputs must match within rtol 1e-5 / atol 1e-6
(the node tests' expected values come from NumPy, whose exp/tanh/division order may differ from
q8rt's float32 reference kernels by an ulp); the largest difference is recorded in the summary.
"""

import glob
import os
from pathlib import Path

import numpy as np
import onnx
import pytest

import q8rt_harness as h
from test_conformance import freeze, load_tensor_proto

NODE_DIR = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data" / "node"
LIST_DIR = Path(__file__).parent / "conformance"


def read_lists():
    cases = []
    for f in sorted(LIST_DIR.glob("*.txt")):
        for raw in f.read_text().splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            name, _, rest = line.partition(" ")
            rest = rest.strip()
            if rest.startswith("refused:"):
                cases.append((name, "refused", rest[len("refused:"):].strip(), f.stem))
            elif rest in ("frozen", "constant"):
                cases.append((name, rest, "", f.stem))
            else:
                cases.append((name, "plain", "", f.stem))
    return cases


CASES = read_lists()


def test_lists_name_real_tests():
    missing = [c[0] for c in CASES if not (NODE_DIR / c[0]).is_dir()]
    assert not missing, f"conformance lists name node tests that onnx does not ship: {missing}"


@pytest.mark.parametrize("name,mode,reason,family", CASES, ids=[c[0] for c in CASES])
def test_onnx_node_op(name, mode, reason, family, tmp_path, q8rt_run):
    d = NODE_DIR / name
    model = onnx.load(str(d / "model.onnx"))
    input_names = [vi.name for vi in model.graph.input]
    output_names = [vi.name for vi in model.graph.output]
    sets = sorted(glob.glob(str(d / "test_data_set_*")))
    assert sets, f"{name}: no test data sets"
    worst = 0.0
    for k, ds in enumerate(sets):
        ds = Path(ds)
        n_in = len(glob.glob(str(ds / "input_*.pb")))
        if mode in ("frozen", "constant"):
            tensors = [load_tensor_proto(ds / f"input_{i}.pb") for i in range(n_in)]
            path = h.save_model(freeze(model, tensors, keep=int(mode == "frozen")), tmp_path / f"model{k}.onnx")
            inputs = {input_names[0]: ds / "input_0.pb"} if mode == "frozen" else {}
        else:
            path = d / "model.onnx"
            inputs = {input_names[i]: ds / f"input_{i}.pb" for i in range(n_in)}
        res = h.run_q8rt(path, inputs, tmp_path / f"out{k}")
        if mode == "refused":
            msg = h.assert_clean_error(res)
            h.SUMMARY.conformance[name] = ("out of scope", f"{reason}; q8rt: {msg[:120]}")
            pytest.skip(f"{reason} (q8rt refuses it: {msg[:100]})")
        try:
            res.assert_ok()
            for i, oname in enumerate(output_names):
                want = h.load_pb(ds / f"output_{i}.pb")
                got = res.output(oname)
                assert got.dtype == want.dtype and got.shape == want.shape, \
                    f"{name}/{oname}: {got.dtype}{got.shape} vs expected {want.dtype}{want.shape}"
                if want.dtype.kind == "f":
                    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{name}/{oname}")
                    if want.size:
                        worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want))))
                else:
                    h.assert_same_bytes(got, want, f"{name}/{ds.name}/{oname}")
        except AssertionError as e:
            h.SUMMARY.conformance[name] = ("failed", str(e).splitlines()[0][:160])
            raise
    h.SUMMARY.conformance[name] = ("passed", f"max abs diff {worst:.3g}" if worst else "")
