"""ONNX backend node tests for the ops q8rt implements (QuantizeLinear, DequantizeLinear,
QLinearConv), compared exactly: same dtype, same shape, identical bytes.

The node tests feed scales, zero points and weights as graph inputs; q8rt requires those to be
constants (initializers). Each model is therefore "frozen": every graph input but the first
becomes an initializer holding the test's input_K.pb value, and the first input is given to
q8rt-run as the test's own .pb file. (test_bad_input.py checks that the unfrozen form is refused.)

Tests for types outside q8rt's scope are listed in OUT_OF_SCOPE; for those the test asserts that
q8rt refuses the model with a clear error naming the type, then reports a skip with the reason.
"""

import glob
import os
from pathlib import Path

import numpy as np
import onnx
import pytest

import q8rt_harness as h

NODE_DIR = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data" / "node"
PREFIXES = ("test_quantizelinear", "test_dequantizelinear", "test_qlinearconv")

F8 = "float8 types (e4m3fn/e5m2) are out of scope"
I4 = "4-bit integer types (int4/uint4) are out of scope"
OUT_OF_SCOPE = {
    "test_dequantizelinear_e4m3fn": (F8, ["float8", "e4m3"]),
    "test_dequantizelinear_e4m3fn_float16": (F8, ["float8", "e4m3"]),
    "test_dequantizelinear_e4m3fn_zero_point": (F8, ["float8", "e4m3"]),
    "test_dequantizelinear_e5m2": (F8, ["float8", "e5m2"]),
    "test_quantizelinear_e4m3fn": (F8, ["float8", "e4m3"]),
    "test_quantizelinear_e5m2": (F8, ["float8", "e5m2"]),
    "test_dequantizelinear_int4": (I4, ["int4"]),
    "test_dequantizelinear_uint4": (I4, ["int4"]),
    "test_quantizelinear_int4": (I4, ["int4"]),
    "test_quantizelinear_uint4": (I4, ["int4"]),
}

NAMES = sorted(d.name for d in NODE_DIR.iterdir() if d.is_dir() and d.name.startswith(PREFIXES))


def test_node_tests_found():
    """The onnx package ships the node tests this module depends on."""
    for required in ("test_qlinearconv", "test_quantizelinear", "test_dequantizelinear",
                     "test_quantizelinear_axis", "test_dequantizelinear_axis"):
        assert required in NAMES, f"{required} missing from {NODE_DIR}"
    stale = set(OUT_OF_SCOPE) - set(NAMES)
    assert not stale, f"OUT_OF_SCOPE names tests that do not exist: {stale}"
    # Anything new in a future onnx with an out-of-scope type must be classified, not run blindly.
    for n in NAMES:
        if any(t in n for t in ("e4m3", "e5m2", "int4", "uint4", "e2m1")):
            assert n in OUT_OF_SCOPE, f"{n} looks out of scope but is not listed"


def load_tensor_proto(path) -> onnx.TensorProto:
    t = onnx.TensorProto()
    t.ParseFromString(Path(path).read_bytes())
    return t


def freeze(model: onnx.ModelProto, tensors, keep: int = 1) -> onnx.ModelProto:
    """Every graph input but the first `keep` becomes an initializer: the test's TensorProto as it
    is (exact type and encoding kept, e.g. packed int4 or float8), renamed to the input's name."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    graph_inputs = list(m.graph.input)
    del m.graph.input[keep:]
    for vi, t in zip(graph_inputs[keep:], tensors[keep:]):
        init = m.graph.initializer.add()
        init.CopyFrom(t)
        init.name = vi.name
    return m


@pytest.mark.parametrize("name", NAMES)
def test_onnx_node(name, tmp_path, q8rt_run):
    d = NODE_DIR / name
    model = onnx.load(str(d / "model.onnx"))
    input_names = [vi.name for vi in model.graph.input]
    output_names = [vi.name for vi in model.graph.output]
    sets = sorted(glob.glob(str(d / "test_data_set_*")))
    assert sets, f"{name}: no test data sets"
    for k, ds in enumerate(sets):
        ds = Path(ds)
        n_in = len(glob.glob(str(ds / "input_*.pb")))
        tensors = [load_tensor_proto(ds / f"input_{i}.pb") for i in range(n_in)]
        assert n_in == len(input_names), f"{name}: {n_in} input files for {len(input_names)} graph inputs"
        frozen = h.save_model(freeze(model, tensors), tmp_path / f"model{k}.onnx")
        res = h.run_q8rt(frozen, {input_names[0]: ds / "input_0.pb"}, tmp_path / f"out{k}")
        if name in OUT_OF_SCOPE:
            reason, words = OUT_OF_SCOPE[name]
            try:
                msg = h.assert_clean_error(res, words)
            except AssertionError:
                h.SUMMARY.conformance[name] = ("failed", "out of scope but not refused cleanly")
                raise
            h.SUMMARY.conformance[name] = ("out of scope", f"{reason}; q8rt: {msg[:120]}")
            pytest.skip(f"{reason} (q8rt refuses it: {msg[:100]})")
        try:
            res.assert_ok()
            for i, oname in enumerate(output_names):
                want = h.load_pb(ds / f"output_{i}.pb")
                h.assert_same_bytes(res.output(oname), want, f"{name}/{ds.name}/{oname}")
        except AssertionError as e:
            h.SUMMARY.conformance[name] = ("failed", str(e).splitlines()[0][:160])
            raise
    h.SUMMARY.conformance[name] = ("passed", "")
