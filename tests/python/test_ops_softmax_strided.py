"""Softmax and QLinearSoftmax along an axis that is not the last (src/ops/softmax.c,
src/ops/qlinear_softmax.c on the f32-softmax-strided and q8-softmax-strided kernels): the columns of
[outer][d][inner] computed side by side in vector lanes.

- QLinearSoftmax: byte-identical to ONNX Runtime (which transposes the axis last), over YOLOv8's DFL
  shape [1,16,4,2100] axis 1, column counts that leave a partial vector, d beyond the kernels'
  kept-entries buffer (32), several outer slices, trailing dims of 1 (the contiguous kernel).
- Softmax: bit-identical to q8rt's own contiguous kernel on the transposed input (Transpose ->
  Softmax(-1) -> Transpose in one model: the strided kernels promise the row kernel's bits per
  column), and within 8 float eps of ONNX Runtime.
- Both: the same bytes at threads 1, 2, 3 and with --backend reference (the scalar twins).
"""

import numpy as np
import onnx
import pytest
from onnx import helper

import q8rt_harness as h
from single_node import MS, check, rand8, run_ort, save_input, single_node_model, zp_of

QSM_CASES = [
    # (shape, axis)
    ((1, 16, 4, 2100), 1),   # YOLOv8 DFL
    ((1, 16, 4, 37), 1),     # 148 columns: a partial vector at the end
    ((2, 40, 3, 5), 1),      # d = 40 > 32, two outer slices, 15 columns
    ((2, 3, 17, 9), 2),      # outer 6, inner 9
    ((3, 17, 1, 1), 1),      # trailing 1s: contiguous rows
    ((1, 5, 130), 1),        # 130 columns: two work items and a tail
]


def _threads_and_reference(tmp_path, case, path, inputs, want):
    for extra in (["--threads", "2"], ["--threads", "3"], ["--backend", "reference"]):
        res = h.run_q8rt(path, inputs, tmp_path / f"{case}_out_{'_'.join(extra)}", extra=extra).assert_ok()
        h.assert_same_bytes(res.output("y"), want, f"{case} {' '.join(extra)}")


@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
@pytest.mark.parametrize("case", QSM_CASES, ids=[f"{c[0]}a{c[1]}" for c in QSM_CASES])
def test_qlinear_softmax_strided(dt, case, tmp_path):
    shape, axis = case
    rng = np.random.default_rng(29)
    lo, hi = h.qrange(dt)
    for k in range(2):
        xs = np.float32(rng.uniform(0.02, 0.3))
        ys, yz = (np.float32(1 / 256), lo) if k == 0 else (np.float32(1 / 200), lo + 10)
        m = single_node_model("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], {"x": np.zeros(shape, dt)},
                              {"xs": xs, "xz": zp_of(dt, int(rng.integers(lo, hi + 1))), "ys": ys, "yz": zp_of(dt, yz)},
                              attrs={"opset": 13, "axis": axis}, domain=MS)
        x = rand8(rng, shape, dt)
        got = check(tmp_path, f"qsm{k}", m, {"x": x})[0]
        _threads_and_reference(tmp_path, f"qsm{k}", tmp_path / f"qsm{k}.onnx",
                               {"x": tmp_path / f"qsm{k}_x.npy"}, got)


def _float_model(shape, axis, via_transpose):
    rank = len(shape)
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)
    if not via_transpose:
        nodes = [helper.make_node("Softmax", ["x"], ["y"], axis=axis, name="node0")]
    else:
        perm = [i for i in range(rank) if i != axis] + [axis]
        inv = [perm.index(i) for i in range(rank)]
        nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=perm, name="t0"),
                 helper.make_node("Softmax", ["t"], ["s"], axis=-1, name="node0"),
                 helper.make_node("Transpose", ["s"], ["y"], perm=inv, name="t1")]
    g = helper.make_graph(nodes, "softmax_strided", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="q8rt-tests")
    m.ir_version = 8
    return m


FSM_CASES = QSM_CASES + [((1, 3, 33, 2), 1), ((4, 2, 8), 0)]


@pytest.mark.parametrize("case", FSM_CASES, ids=[f"{c[0]}a{c[1]}" for c in FSM_CASES])
def test_softmax_strided_float(case, tmp_path):
    shape, axis = case
    rng = np.random.default_rng(31)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    x.flat[rng.integers(0, x.size, 3)] = [np.inf, -np.inf, np.nan]  # a few columns of NaN
    x.flat[0] = 80.0
    inputs = {"x": save_input(tmp_path / "x", x)}
    got = {}
    for via in (False, True):
        p = h.save_model(_float_model(shape, axis, via), tmp_path / f"m{int(via)}.onnx")
        got[via] = h.run_q8rt(p, inputs, tmp_path / f"out{int(via)}").assert_ok().output("y")
    h.assert_same_bytes(got[False], got[True], "strided Softmax vs Transpose + contiguous Softmax")
    want = run_ort(_float_model(shape, axis, False), {"x": x}, optimize=False)[0]
    nan = np.isnan(want)
    assert np.array_equal(nan, np.isnan(got[False])), "NaN positions differ from ORT"
    assert np.allclose(got[False][~nan], want[~nan], rtol=8 * np.finfo(np.float32).eps, atol=1e-37)
    _threads_and_reference(tmp_path, "fsm", tmp_path / "m0.onnx", inputs, got[False])
