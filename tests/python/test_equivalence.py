"""QOperator vs QDQ: the two formats of the same model, from the same calibration run, must give
the same int8 activations in q8rt at every fused convolution output.

For each conv of the QOperator model (QLinearConv 'X_quant') the QDQ model has the Conv 'X',
which q8rt fuses with its QuantizeLinear into a QLinearConv. Both models get those tensors as
extra graph outputs and run on the same input. A conv's outputs may differ only where the QDQ
graph computes something upstream of it in float that the QOperator graph computes with an int8
op (e.g. QLinearMul vs DequantizeLinear -> Mul -> QuantizeLinear): the two round differently near
ties. The test asserts that every differing conv has such an op upstream, that every conv with
only convolutions and Q/DQ upstream matches exactly, and writes the per-conv table to
build/equivalence-summary.txt.
"""

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

import q8rt_harness as h

MODELS_DIR = Path(os.environ.get("Q8RT_MODELS", Path(__file__).resolve().parents[2] / "build" / "models"))
PAIRS = [("cls", "u8s8_pc"), ("cls", "u8s8_pt"), ("cls", "s8s8_pc"), ("cls", "s8s8_pt"),
         ("det", "u8s8_pc"), ("rec", "u8s8_pc")]
INT_OPS = {"Conv", "QuantizeLinear", "DequantizeLinear"}
SUMMARY = []


def conv_map(qop: onnx.ModelProto, qdq: onnx.ModelProto):
    """[(conv name, qop tensor, qdq tensor)] for convs present in both."""
    qdq_convs = {n.name: n for n in qdq.graph.node if n.op_type == "Conv"}
    consumers = {}
    for n in qdq.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    out = []
    for n in qop.graph.node:
        if n.op_type != "QLinearConv" or not n.name.endswith("_quant"):
            continue
        c = qdq_convs.get(n.name[: -len("_quant")])
        if c is None:
            continue
        qs = [q for q in consumers.get(c.output[0], []) if q.op_type == "QuantizeLinear"]
        if len(qs) == 1:
            out.append((c.name, n.output[0], qs[0].output[0]))
    return out


def float_ancestors(qdq: onnx.ModelProto, tensor: str):
    """Op types upstream of `tensor` in the QDQ graph that are not Conv/Q/DQ (run in float)."""
    prod = {o: n for n in qdq.graph.node for o in n.output}
    seen, stack, found = set(), [tensor], set()
    while stack:
        t = stack.pop()
        n = prod.get(t)
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if n.op_type not in INT_OPS:
            found.add(n.op_type)
        stack.extend(n.input)
    return found


def with_outputs(model: onnx.ModelProto, names, path: Path) -> Path:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for nm in names:
        if nm not in have:
            m.graph.output.append(helper.make_tensor_value_info(nm, onnx.TensorProto.UNDEFINED, None))
    return h.save_model(m, path)


def safe(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


@pytest.mark.parametrize("model,kind", PAIRS, ids=[f"{m}-{k}" for m, k in PAIRS])
def test_qop_qdq_equivalence(model, kind, tmp_path, q8rt_run):
    d = MODELS_DIR / model
    qop_path, qdq_path = d / f"qop_{kind}.onnx", d / f"qdq_{kind}.onnx"
    assert qop_path.exists() and qdq_path.exists(), f"missing models under {d}: run `make models`"
    qop, qdq = onnx.load(str(qop_path)), onnx.load(str(qdq_path))
    pairs = conv_map(qop, qdq)
    assert pairs, "no convolution could be matched between the two formats"
    a = with_outputs(qop, [p[1] for p in pairs], tmp_path / "qop.onnx")
    b = with_outputs(qdq, [p[2] for p in pairs], tmp_path / "qdq.onnx")
    feeds = {qop.graph.input[0].name: d / "input.npy"}
    ra = h.run_q8rt(a, feeds, tmp_path / "a")
    rb = h.run_q8rt(b, {qdq.graph.input[0].name: d / "input.npy"}, tmp_path / "b")
    if ra.returncode != 0 or rb.returncode != 0:
        msg = h.assert_clean_error(ra if ra.returncode != 0 else rb)
        SUMMARY.append(f"{model}/{kind}: not run yet ({msg[:120]})")
        pytest.skip(f"q8rt does not run both formats yet: {msg[:150]}")
    rows, bad = [], []
    for name, ta, tb in pairs:
        xa, xb = ra.output(safe(ta)), rb.output(safe(tb))
        assert xa.shape == xb.shape and xa.dtype == xb.dtype, f"{name}: {xa.dtype}{xa.shape} vs {xb.dtype}{xb.shape}"
        n = int(np.count_nonzero(xa != xb))
        why = sorted(float_ancestors(qdq, tb))
        rows.append(f"  {name}: {'equal' if n == 0 else f'{n} of {xa.size} differ'}"
                    + (f" (float upstream in QDQ: {', '.join(why)})" if n and why else ""))
        if n and not why:
            bad.append(name)
    SUMMARY.append(f"{model}/{kind}: {sum(r.endswith('equal') for r in rows)} of {len(rows)} conv outputs equal\n"
                   + "\n".join(rows))
    (h.build_dir() / "equivalence-summary.txt").write_text("\n".join(SUMMARY) + "\n")
    assert not bad, f"conv outputs differ with only int8 ops upstream: {bad}\n" + "\n".join(rows)
    assert rows[0].endswith("equal"), "the first convolution must match exactly\n" + "\n".join(rows)
