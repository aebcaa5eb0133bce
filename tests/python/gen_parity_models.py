"""QLinearConv parity cases: models built with onnx.helper, deterministic inputs, exact references.

Used by test_parity.py. Run directly to write every case to a folder for debugging the C side:

    build/venv/bin/python tests/python/gen_parity_models.py [OUT_DIR]     # default build/test-models/parity

Each case folder then holds model.onnx, x.npy (the input) and y_ref.npy (the exact expected output).

Coverage (at least what ONNX Runtime's own QLinearConv tests cover): activation/weight type pairs
u8s8, s8s8, u8u8, s8u8; per-tensor and per-channel weight scales; weight zero points zero, nonzero
per-tensor and per-channel differing; groups (2, depthwise C, depthwise with multiplier); 1x1,
3x3, 5x5, 7x7 kernels; strides; dilations; asymmetric explicit pads; auto_pad SAME_UPPER /
SAME_LOWER / VALID; 1-D convolutions; batch > 1; with and without bias; channel counts 1..300;
weights covering the full 8-bit range (both extremes always present); scales that are powers of
two and scales that are not; chains of layers with QuantizeLinear / DequantizeLinear at the ends.
"""

from __future__ import annotations

import dataclasses
import sys
import zlib
from pathlib import Path
from typing import List, Optional, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from q8rt_harness import (ConvParams, conv_chain_model, conv_chain_reference, qrange,  # noqa: E402
                          rand_int, save_model, save_npy, shared_build_dir)

DT = {"u8": np.uint8, "s8": np.int8}


@dataclasses.dataclass
class ConvSpec:
    """One QLinearConv layer, described compactly; materialized by make_layer()."""
    cin: int
    cout: int
    kernel: Sequence[int] = (3, 3)
    xt: str = "u8"            # activation (and output) type
    wt: str = "s8"            # weight type
    per_channel: bool = False
    wzp: str = "zero"         # zero | const | per_channel (differing per output channel)
    bias: bool = True
    group: int = 1
    strides: Optional[List[int]] = None
    pads: Optional[List[int]] = None
    dilations: Optional[List[int]] = None
    auto_pad: str = "NOTSET"
    scales: str = "odd"       # odd | pow2
    wrange: Optional[tuple] = None  # restrict the weight values (lo, hi); extremes of it are forced
    sign_per_channel: bool = False  # weights of output channel c all have the sign (-1)^c
    acc_std: Optional[float] = None  # override the accumulator magnitude used to pick y_scale


@dataclasses.dataclass
class Case:
    name: str
    layers: List[ConvSpec]
    x_shape: Sequence[int]
    quantize_input: bool = False
    dequantize_output: bool = False
    x_range: Optional[tuple] = None  # restrict the (integer) input values

    @property
    def combo(self) -> str:
        return self.layers[0].xt + self.layers[0].wt


def _seed(name: str) -> int:
    return zlib.crc32(name.encode())


def make_layer(spec: ConvSpec, rng: np.random.Generator, x_zp_value: int) -> ConvParams:
    xt, wt = DT[spec.xt], DT[spec.wt]
    nd = len(spec.kernel)
    cg = spec.cin // spec.group
    wshape = (spec.cout, cg, *spec.kernel)
    wlo, whi = spec.wrange or qrange(wt)
    w = rand_int(rng, wshape, wt, wlo, whi)
    flat = w.reshape(-1)
    flat[0] = wlo  # the extremes of the range are always present (-128 and 127 for s8)
    if flat.size > 1:
        flat[-1] = whi
    if flat.size > 3:
        flat[flat.size // 2] = wlo
        flat[1] = whi
    if spec.sign_per_channel:
        sign = np.where(np.arange(spec.cout) % 2 == 0, 1, -1).reshape(-1, *([1] * (w.ndim - 1)))
        w = (w.astype(np.int64) * sign).astype(wt)
    m = spec.cout
    # weight zero points
    if spec.wzp == "zero":
        wzp = np.zeros((m,) if spec.per_channel else (), dtype=wt)
    elif spec.wzp == "const":
        v = 128 if wt == np.uint8 else 3
        wzp = np.full((m,) if spec.per_channel else (), v, dtype=wt)
    else:  # differing per channel
        lo, hi = (100, 156) if wt == np.uint8 else (-20, 20)
        wzp = rand_int(rng, (m,), wt, lo, hi)
        if m > 1:
            wzp[0], wzp[-1] = lo, hi
    # scales
    if spec.scales == "pow2":
        x_scale = np.float32(2.0 ** -7)
        w_base = 2.0 ** -8
        w_scale = (w_base * 2.0 ** rng.integers(-2, 3, size=m)).astype(np.float32) if spec.per_channel \
            else np.float32(w_base)
    else:
        x_scale = np.float32(0.0173)
        w_base = 0.00391
        w_scale = (w_base * rng.uniform(0.5, 2.0, size=m)).astype(np.float32) if spec.per_channel \
            else np.float32(w_base)
    # y_scale so the output spreads over the output range without saturating everything
    k = cg * int(np.prod(spec.kernel))
    acc_std = spec.acc_std or np.sqrt(k) * 74.0 * 74.0
    ratio = acc_std / 45.0 * float(x_scale) * w_base
    if spec.scales == "pow2":
        y_scale = np.float32(2.0 ** np.round(np.log2(ratio)))
    else:
        y_scale = np.float32(ratio * 1.0731)
    bias = None
    if spec.bias:
        b = int(min(2**20, acc_std * 2))
        bias = rng.integers(-b, b + 1, size=m).astype(np.int32)
        bias[0] = -b
    if xt == np.uint8:
        y_zp = np.asarray(int(rng.integers(100, 156)), dtype=xt)
    else:
        y_zp = np.asarray(int(rng.integers(-20, 21)), dtype=xt)
    return ConvParams(w=w, w_scale=np.asarray(w_scale, dtype=np.float32), w_zp=wzp,
                      x_scale=x_scale, x_zp=np.asarray(x_zp_value, dtype=xt), y_scale=y_scale, y_zp=y_zp,
                      bias=bias, strides=spec.strides, pads=spec.pads, dilations=spec.dilations,
                      group=spec.group, auto_pad=spec.auto_pad)


@dataclasses.dataclass
class Built:
    case: Case
    model: object
    x: np.ndarray
    y_ref: np.ndarray
    layers: List[ConvParams]


def build(case: Case) -> Built:
    rng = np.random.default_rng(_seed(case.name))
    layers: List[ConvParams] = []
    first_xt = DT[case.layers[0].xt]
    x_zp_value = int(rng.integers(100, 156)) if first_xt == np.uint8 else int(rng.integers(-20, 21))
    for spec in case.layers:
        p = make_layer(spec, rng, x_zp_value)
        if layers:  # chain: this layer's input quantization is the previous layer's output quantization
            p.x_scale, p.x_zp = layers[-1].y_scale, layers[-1].y_zp
        layers.append(p)
    qin = dqout = None
    if case.quantize_input:
        qin = (layers[0].x_scale, layers[0].x_zp)
        x = (rng.standard_normal(case.x_shape) * 40 * float(layers[0].x_scale)).astype(np.float32)
    else:
        lo, hi = case.x_range or qrange(first_xt)
        x = rand_int(rng, case.x_shape, first_xt, lo, hi)
        x.reshape(-1)[0] = lo
        x.reshape(-1)[-1] = hi
    if case.dequantize_output:
        dqout = (layers[-1].y_scale, layers[-1].y_zp)
    model = conv_chain_model(layers, case.x_shape, first_xt if qin is None else np.float32, qin, dqout)
    y_ref = conv_chain_reference(layers, x, qin, dqout)
    return Built(case, model, x, y_ref, layers)


def cases() -> List[Case]:
    out: List[Case] = []

    def add(name, layers, x_shape, **kw):
        out.append(Case(name, layers if isinstance(layers, list) else [layers], list(x_shape), **kw))

    # Every activation/weight type pair on the basic shapes.
    for xt, wt in (("u8", "s8"), ("s8", "s8"), ("u8", "u8"), ("s8", "u8")):
        c = xt + wt
        wzp = "const" if wt == "u8" else "zero"
        add(f"{c}_3x3_pad1_pertensor", ConvSpec(8, 16, xt=xt, wt=wt, pads=[1, 1, 1, 1], wzp=wzp), (1, 8, 10, 10))
        add(f"{c}_3x3_perchannel", ConvSpec(8, 16, xt=xt, wt=wt, per_channel=True, wzp=wzp), (1, 8, 9, 11))
        add(f"{c}_depthwise3x3", ConvSpec(16, 16, xt=xt, wt=wt, group=16, per_channel=True, pads=[1, 1, 1, 1],
                                          wzp=wzp), (1, 16, 8, 8))
        add(f"{c}_pointwise", ConvSpec(64, 32, (1, 1), xt=xt, wt=wt, per_channel=True, wzp=wzp), (1, 64, 6, 6))
        add(f"{c}_pow2_scales", ConvSpec(8, 8, xt=xt, wt=wt, scales="pow2", per_channel=True, pads=[1, 1, 1, 1],
                                         wzp=wzp), (1, 8, 7, 7))
        add(f"{c}_nonzero_wzp", ConvSpec(6, 10, xt=xt, wt=wt, wzp="const"), (1, 6, 7, 7))
        add(f"{c}_perchannel_wzp_differ", ConvSpec(6, 10, xt=xt, wt=wt, per_channel=True, wzp="per_channel"),
            (1, 6, 7, 7))
        add(f"{c}_1d", ConvSpec(8, 12, (3,), xt=xt, wt=wt, per_channel=True, pads=[1, 2], wzp=wzp), (2, 8, 20))

    # Main ORT paths (u8s8, s8s8): geometry and group variants.
    for xt, wt in (("u8", "s8"), ("s8", "s8")):
        c = xt + wt
        add(f"{c}_group2", ConvSpec(8, 12, xt=xt, wt=wt, group=2, per_channel=True, pads=[1, 1, 1, 1]), (1, 8, 9, 9))
        add(f"{c}_group4_1x1", ConvSpec(16, 8, (1, 1), xt=xt, wt=wt, group=4), (1, 16, 5, 5))
        add(f"{c}_depthwise_mult2", ConvSpec(8, 16, xt=xt, wt=wt, group=8, per_channel=True), (1, 8, 8, 8))
        add(f"{c}_depthwise5x5_s2", ConvSpec(24, 24, (5, 5), xt=xt, wt=wt, group=24, per_channel=True,
                                             strides=[2, 2], pads=[2, 2, 2, 2]), (1, 24, 11, 11))
        add(f"{c}_depthwise3x3_s2_asym", ConvSpec(32, 32, xt=xt, wt=wt, group=32, strides=[2, 2],
                                                  pads=[0, 0, 1, 1]), (1, 32, 10, 10))
        add(f"{c}_dilation2", ConvSpec(4, 8, xt=xt, wt=wt, dilations=[2, 2], pads=[2, 2, 2, 2]), (1, 4, 11, 11))
        add(f"{c}_dilation_2x3", ConvSpec(4, 8, xt=xt, wt=wt, dilations=[2, 3], per_channel=True), (1, 4, 12, 13))
        add(f"{c}_stride2", ConvSpec(8, 16, xt=xt, wt=wt, strides=[2, 2], pads=[1, 1, 1, 1]), (1, 8, 12, 12))
        add(f"{c}_stride_2x1", ConvSpec(8, 8, xt=xt, wt=wt, strides=[2, 1], per_channel=True), (1, 8, 9, 9))
        add(f"{c}_stride3_k2", ConvSpec(3, 5, (2, 2), xt=xt, wt=wt, strides=[3, 3]), (1, 3, 11, 10))
        add(f"{c}_asym_pads", ConvSpec(5, 7, xt=xt, wt=wt, pads=[0, 1, 2, 1], per_channel=True), (1, 5, 8, 9))
        add(f"{c}_pads_larger", ConvSpec(3, 4, xt=xt, wt=wt, pads=[3, 0, 1, 2]), (1, 3, 5, 5))
        add(f"{c}_same_upper_k4", ConvSpec(4, 6, (4, 4), xt=xt, wt=wt, auto_pad="SAME_UPPER"), (1, 4, 9, 9))
        add(f"{c}_same_lower_k4", ConvSpec(4, 6, (4, 4), xt=xt, wt=wt, auto_pad="SAME_LOWER"), (1, 4, 9, 9))
        add(f"{c}_same_upper_s2", ConvSpec(4, 6, xt=xt, wt=wt, auto_pad="SAME_UPPER", strides=[2, 2],
                                           per_channel=True), (1, 4, 10, 10))
        add(f"{c}_same_lower_s2", ConvSpec(4, 6, xt=xt, wt=wt, auto_pad="SAME_LOWER", strides=[2, 2]),
            (1, 4, 10, 10))
        add(f"{c}_valid", ConvSpec(4, 6, (3, 2), xt=xt, wt=wt, auto_pad="VALID", strides=[1, 2]), (1, 4, 9, 9))
        add(f"{c}_1d_stride2_dil2", ConvSpec(6, 10, (5,), xt=xt, wt=wt, strides=[2], dilations=[2], pads=[3, 1]),
            (1, 6, 31))
        add(f"{c}_1d_depthwise", ConvSpec(12, 12, (3,), xt=xt, wt=wt, group=12, pads=[1, 1], per_channel=True),
            (1, 12, 16))
        add(f"{c}_1d_same_upper", ConvSpec(3, 4, (4,), xt=xt, wt=wt, auto_pad="SAME_UPPER"), (1, 3, 10))
        add(f"{c}_batch3", ConvSpec(5, 8, xt=xt, wt=wt, per_channel=True, pads=[1, 1, 1, 1]), (3, 5, 6, 6))
        add(f"{c}_batch2_depthwise", ConvSpec(8, 8, xt=xt, wt=wt, group=8, pads=[1, 1, 1, 1]), (2, 8, 5, 5))
        add(f"{c}_nobias", ConvSpec(8, 8, xt=xt, wt=wt, bias=False, pads=[1, 1, 1, 1]), (1, 8, 6, 6))
        add(f"{c}_nobias_perchannel_pow2", ConvSpec(8, 8, (1, 1), xt=xt, wt=wt, bias=False, per_channel=True,
                                                    scales="pow2"), (1, 8, 6, 6))
        add(f"{c}_stem7x7_s2", ConvSpec(3, 16, (7, 7), xt=xt, wt=wt, strides=[2, 2], pads=[3, 3, 3, 3],
                                        per_channel=True), (1, 3, 16, 16))
        add(f"{c}_small_weights", ConvSpec(16, 16, xt=xt, wt=wt, per_channel=True, wrange=(-63, 63),
                                           pads=[1, 1, 1, 1]), (1, 16, 6, 6))
        add(f"{c}_kernel_eq_input", ConvSpec(4, 4, xt=xt, wt=wt), (1, 4, 3, 3))
        # im2col kernel rows of <= 8 bytes moved as 4 or 8 (a 1-channel stem as CRNN's; 5-byte and
        # 6-byte rows; the last image's last rows, where the input holds fewer bytes, copy exactly)
        add(f"{c}_ch1_3x3_s2", ConvSpec(1, 8, xt=xt, wt=wt, per_channel=True, strides=[2, 2], pads=[1, 1, 1, 1]),
            (1, 1, 17, 23))
        add(f"{c}_ch1_5x5_batch2", ConvSpec(1, 4, (5, 5), xt=xt, wt=wt, pads=[2, 1, 2, 2]), (2, 1, 9, 11))
        add(f"{c}_ch2_3x3_nopad", ConvSpec(2, 6, xt=xt, wt=wt, per_channel=True), (1, 2, 7, 8))
        # seg route with more left padding than a stride: a tile whose part of an output row ends
        # before the first interior column (ox_lo) gathers only up to its end (the fuzzer's model)
        add(f"{c}_wide_left_pad", ConvSpec(16, 16, xt=xt, wt=wt, per_channel=True, pads=[1, 49, 1, 1]), (1, 16, 6, 6))
        add(f"{c}_left_pad_5", ConvSpec(16, 8, xt=xt, wt=wt, pads=[0, 5, 0, 0]), (1, 16, 4, 4))
        for ch in (1, 3, 17, 64, 256, 300):
            add(f"{c}_ch{ch}_1x1", ConvSpec(ch, ch, (1, 1), xt=xt, wt=wt, per_channel=True), (1, ch, 4, 4))
            add(f"{c}_ch{ch}_3x3", ConvSpec(ch, max(1, ch // 2), xt=xt, wt=wt, per_channel=ch % 2 == 0,
                                            pads=[1, 1, 1, 1]), (1, ch, 4, 3))
            add(f"{c}_ch{ch}_dw", ConvSpec(ch, ch, xt=xt, wt=wt, group=ch, per_channel=True, pads=[1, 1, 1, 1]),
                (1, ch, 5, 5))

    # Saturation probes: large activations times large same-signed weights. The pair sums of
    # adjacent u8*s8 products exceed int16 (what AVX2 vpmaddubsw saturates); exact kernels must not care.
    add("u8s8_sat_probe_3x3", ConvSpec(8, 8, xt="u8", wt="s8", wrange=(100, 127), sign_per_channel=True,
                                       per_channel=True, acc_std=72 * 110 * 113), (1, 8, 6, 6),
        x_range=(230, 255))
    add("u8s8_sat_probe_1x1", ConvSpec(64, 16, (1, 1), xt="u8", wt="s8", wrange=(110, 127), sign_per_channel=True,
                                       acc_std=64 * 110 * 118), (1, 64, 4, 4), x_range=(230, 255))
    add("u8s8_sat_probe_dw", ConvSpec(16, 16, xt="u8", wt="s8", wrange=(110, 127), sign_per_channel=True,
                                      group=16, acc_std=9 * 110 * 118), (1, 16, 6, 6), x_range=(230, 255))
    add("s8s8_sat_probe_3x3", ConvSpec(8, 8, xt="s8", wt="s8", wrange=(100, 127), sign_per_channel=True,
                                       acc_std=72 * 110 * 113), (1, 8, 6, 6), x_range=(100, 127))
    add("u8u8_sat_probe_3x3", ConvSpec(8, 8, xt="u8", wt="u8", wrange=(230, 255), wzp="zero",
                                       acc_std=72 * 110 * 240), (1, 8, 6, 6), x_range=(230, 255))

    # Chains: several layers, Q / DQ at the ends.
    for xt, wt in (("u8", "s8"), ("s8", "s8"), ("u8", "u8")):
        c = xt + wt
        add(f"chain_{c}_q_conv_dq", [ConvSpec(3, 8, xt=xt, wt=wt, per_channel=True, pads=[1, 1, 1, 1])],
            (1, 3, 8, 8), quantize_input=True, dequantize_output=True)
        add(f"chain_{c}_conv_conv", [ConvSpec(4, 8, xt=xt, wt=wt, pads=[1, 1, 1, 1]),
                                     ConvSpec(8, 8, xt=xt, wt=wt, group=8, per_channel=True, pads=[1, 1, 1, 1])],
            (1, 4, 7, 7))
    add("chain_u8s8_mobilenet_block", [
        ConvSpec(3, 16, xt="u8", wt="s8", per_channel=True, strides=[2, 2], pads=[1, 1, 1, 1]),
        ConvSpec(16, 16, xt="u8", wt="s8", per_channel=True, group=16, pads=[1, 1, 1, 1]),
        ConvSpec(16, 32, (1, 1), xt="u8", wt="s8", per_channel=True)], (1, 3, 32, 32),
        quantize_input=True, dequantize_output=True)
    add("chain_s8s8_q_conv_conv_dq_batch2", [
        ConvSpec(4, 8, xt="s8", wt="s8", per_channel=True, auto_pad="SAME_UPPER", strides=[2, 2]),
        ConvSpec(8, 4, (1, 1), xt="s8", wt="s8", scales="pow2")], (2, 4, 9, 9),
        quantize_input=True, dequantize_output=True)
    # The GEMM route's interior pixels read in place (rows >= 16 wide, channels-last between two
    # convs), the borders and a row's last interior pixels that do not fill a kernel call gathered:
    # 24 channels of 12x3x3 (4 leftovers), 48 at stride 2 over two images (6), 96 channels (2);
    # tiles end inside rows.
    add("chain_u8s8_seg_leftovers", [ConvSpec(12, 24, xt="u8", wt="s8", per_channel=True, pads=[1, 1, 1, 1]),
                                     ConvSpec(24, 8, (1, 1), xt="u8", wt="s8")], (1, 12, 20, 30))
    add("chain_s8s8_seg_stride2_batch2", [ConvSpec(24, 48, xt="s8", wt="s8", strides=[2, 2], pads=[1, 1, 1, 1]),
                                          ConvSpec(48, 8, (1, 1), xt="s8", wt="s8")], (2, 24, 22, 46))
    add("chain_u8s8_seg_gathered", [ConvSpec(16, 96, xt="u8", wt="s8", per_channel=True, pads=[1, 1, 1, 1]),
                                    ConvSpec(96, 8, (1, 1), xt="u8", wt="s8")], (1, 16, 9, 20))
    names = [c.name for c in out]
    assert len(names) == len(set(names)), "duplicate case names"
    return out


def main(argv: List[str]) -> int:
    dest = Path(argv[1]) if len(argv) > 1 else shared_build_dir() / "test-models" / "parity"
    for case in cases():
        b = build(case)
        d = dest / case.name
        save_model(b.model, d / "model.onnx")
        save_npy(d / "x.npy", b.x)
        save_npy(d / "y_ref.npy", b.y_ref)
    print(f"wrote {len(cases())} cases to {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
