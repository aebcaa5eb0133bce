"""Demo model for q8rt: a small quantized conv stack, and the comparison with ONNX Runtime.

    python examples/make_demo_model.py generate DIR   # writes DIR/demo.onnx and DIR/input.npy
    python examples/make_demo_model.py compare DIR    # runs ONNX Runtime on DIR/input.npy and
                                                      # compares with DIR/out/<output>.npy from q8rt-run

The model (opset 13):
    image float32 [1,3,64,64]
      -> QuantizeLinear (uint8)
      -> QLinearConv 3x3 stride 2, 16 channels (u8 activations, s8 per-channel weights)
      -> QLinearConv depthwise 3x3, 16 channels
      -> QLinearConv pointwise 1x1, 32 channels
      -> DequantizeLinear -> features float32 [1,32,32,32]
Weights, biases and the input are pseudo-random with fixed seeds, so every run builds the same bytes.
(A real model replaces this one later.)
"""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

INPUT, OUTPUT = "image", "features"
SEED = 20240611


def _t(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def _conv_layer(rng, idx, cin, cout, k, group, stride, x_scale, x_zp, act_std):
    """Float weights quantized per output channel to s8 (symmetric); y_scale picked from an estimate
    of the accumulator spread so the u8 output uses its range."""
    cg = cin // group
    wf = rng.standard_normal((cout, cg, k, k)).astype(np.float32) * np.sqrt(2.0 / (cg * k * k))
    w_scale = (np.abs(wf).reshape(cout, -1).max(axis=1) / 127.0).astype(np.float32)
    w = np.clip(np.rint(wf / w_scale.reshape(-1, 1, 1, 1)), -128, 127).astype(np.int8)
    acc_std = np.sqrt(cg * k * k) * act_std * float(np.std(w))
    y_scale = np.float32(acc_std * float(x_scale) * float(np.mean(w_scale)) / 40.0)
    y_zp = np.uint8(128)
    bias = rng.integers(-int(acc_std), int(acc_std) + 1, size=cout).astype(np.int32)
    p = f"l{idx}_"
    inits = [_t(p + "x_scale", np.float32(x_scale)), _t(p + "x_zero_point", np.uint8(x_zp)), _t(p + "w", w),
             _t(p + "w_scale", w_scale), _t(p + "w_zero_point", np.zeros(cout, np.int8)),
             _t(p + "y_scale", y_scale), _t(p + "y_zero_point", y_zp), _t(p + "bias", bias)]
    names = [t.name for t in inits]
    return names, inits, y_scale, y_zp, dict(kernel_shape=[k, k], strides=[stride, stride],
                                              pads=[k // 2] * 4, group=group)


def build_model():
    rng = np.random.default_rng(SEED)
    in_scale, in_zp = np.float32(1.0 / 255.0), np.uint8(0)
    nodes = [helper.make_node("QuantizeLinear", [INPUT, "in_scale", "in_zero_point"], ["q0"], name="quantize_input")]
    inits = [_t("in_scale", in_scale), _t("in_zero_point", in_zp)]
    layers = [("conv_s2", 3, 16, 3, 1, 2), ("conv_dw", 16, 16, 3, 16, 1), ("conv_pw", 16, 32, 1, 1, 1)]
    x_scale, x_zp, cur, act_std = in_scale, in_zp, "q0", 70.0
    for i, (name, cin, cout, k, group, stride) in enumerate(layers):
        names, ii, y_scale, y_zp, attrs = _conv_layer(rng, i, cin, cout, k, group, stride, x_scale, x_zp, act_std)
        nodes.append(helper.make_node("QLinearConv", [cur] + names[:7] + [names[7]], [f"q{i + 1}"], name=name,
                                      **attrs))
        inits += ii
        x_scale, x_zp, cur, act_std = y_scale, y_zp, f"q{i + 1}", 40.0
    inits += [_t("out_scale", np.float32(x_scale)), _t("out_zero_point", np.uint8(x_zp))]
    nodes.append(helper.make_node("DequantizeLinear", [cur, "out_scale", "out_zero_point"], [OUTPUT],
                                  name="dequantize_output"))
    graph = helper.make_graph(nodes, "q8rt_demo", [helper.make_tensor_value_info(INPUT, TensorProto.FLOAT,
                                                                                 [1, 3, 64, 64])],
                              [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, [1, 32, 32, 32])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="q8rt-demo")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def make_input():
    """A smooth image-like pattern with some noise, in [0, 1]."""
    rng = np.random.default_rng(SEED + 1)
    yy, xx = np.meshgrid(np.linspace(0, 1, 64), np.linspace(0, 1, 64), indexing="ij")
    chans = [0.5 + 0.5 * np.sin(6 * xx + 2 * c) * np.cos(5 * yy - c) for c in range(3)]
    img = np.stack(chans)[None] + rng.normal(0, 0.05, size=(1, 3, 64, 64))
    return np.clip(img, 0, 1).astype(np.float32)


def generate(d: Path) -> int:
    d.mkdir(parents=True, exist_ok=True)
    (d / "demo.onnx").write_bytes(build_model().SerializeToString())
    np.save(d / "input.npy", make_input())
    print(f"demo: wrote {d / 'demo.onnx'} (QuantizeLinear -> 3x QLinearConv -> DequantizeLinear) "
          f"and {d / 'input.npy'} [1,3,64,64] float32")
    return 0


def compare(d: Path) -> int:
    import onnxruntime as ort
    x = np.load(d / "input.npy")
    path = d / "out" / f"{OUTPUT}.npy"
    if not path.exists():
        print(f"demo: {path} missing: q8rt-run wrote no output", file=sys.stderr)
        return 1
    got = np.load(path)
    print(f"q8rt output '{OUTPUT}': shape {list(got.shape)} dtype {got.dtype} "
          f"min {got.min():.6g} max {got.max():.6g} mean {got.mean():.6g}")
    print("  first values: " + " ".join(f"{v:.6g}" for v in got.reshape(-1)[:8]))
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(d / "demo.onnx"), so, providers=["CPUExecutionProvider"])
    want = sess.run([OUTPUT], {INPUT: x})[0]
    if got.dtype != want.dtype or got.shape != want.shape:
        print(f"q8rt output does not match ONNX Runtime: {got.dtype}{list(got.shape)} vs "
              f"{want.dtype}{list(want.shape)}")
        return 1
    bad = int(np.count_nonzero(got.view(np.uint32) != want.view(np.uint32)))
    if bad == 0:
        print("q8rt output matches ONNX Runtime byte for byte")
        return 0
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    print(f"q8rt output differs from ONNX Runtime in {bad} of {got.size} elements "
          f"(max abs difference {diff.max():.6g})")
    return 1


def main(argv):
    if len(argv) != 3 or argv[1] not in ("generate", "compare"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        print("usage: make_demo_model.py generate|compare DIR", file=sys.stderr)
        return 2
    return generate(Path(argv[2])) if argv[1] == "generate" else compare(Path(argv[2]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
