"""Single-node quantized models run in q8rt-run and in ONNX Runtime (CPU, one thread, graph
optimizations off and on), compared byte for byte; used by test_ops_com_microsoft.py and
test_ops_quantized.py."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

import q8rt_harness as h

MS = "com.microsoft"


def const(name: str, value, dtype=None) -> onnx.TensorProto:
    a = np.asarray(value, dtype=dtype) if dtype is not None else np.asarray(value)
    return numpy_helper.from_array(a, name)


def single_node_model(op: str, inputs: Sequence[str], graph_inputs: Dict[str, np.ndarray],
                      initializers: Dict[str, np.ndarray], attrs: Optional[dict] = None, domain: str = "",
                      opset: int = 13, n_outputs: int = 1, name: str = "node0") -> onnx.ModelProto:
    outs = ["y"] if n_outputs == 1 else [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op, list(inputs), outs, name=name, domain=domain, **(attrs or {}))
    gin = [helper.make_tensor_value_info(k, h.NP_TO_ONNX[v.dtype], list(v.shape)) for k, v in graph_inputs.items()]
    gout = [onnx.ValueInfoProto(name=o) for o in outs]
    inits = [const(k, v) for k, v in initializers.items()]
    graph = helper.make_graph([node], "qlinear_test", gin, gout, initializer=inits)
    imports = [helper.make_opsetid("", opset)]
    if domain:
        imports.append(helper.make_opsetid(domain, 1))
    m = helper.make_model(graph, opset_imports=imports, producer_name="q8rt-tests")
    m.ir_version = 8
    return m


def run_ort(model: onnx.ModelProto, feeds: Dict[str, np.ndarray], optimize: bool) -> List[np.ndarray]:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def save_input(stem: Path, v: np.ndarray) -> Path:
    """0-d inputs go as TensorProto files written here (the harness' savers use
    np.ascontiguousarray, which turns 0-d arrays into 1-d ones)."""
    if v.ndim == 0:
        path = stem.with_suffix(".pb")
        path.write_bytes(numpy_helper.from_array(np.asarray(v)).SerializeToString())
        return path
    return h.save_npy(stem.with_suffix(".npy"), v)


def check(tmp_path: Path, case: str, model: onnx.ModelProto, feeds: Dict[str, np.ndarray],
          extra: Sequence[str] = ()) -> List[np.ndarray]:
    """Runs q8rt and ORT (unoptimized and optimized); asserts q8rt == ORT unoptimized byte for byte."""
    path = h.save_model(model, tmp_path / f"{case}.onnx")
    inputs = {k: save_input(tmp_path / f"{case}_{k}", v) for k, v in feeds.items()}
    want = run_ort(model, feeds, optimize=False)
    want_opt = run_ort(model, feeds, optimize=True)
    res = h.run_q8rt(path, inputs, tmp_path / f"{case}_out", extra=extra).assert_ok()
    rec = h.SUMMARY.parity_record(f"qlinear:{tmp_path.name}:{case}", f"qlinear ops {model.graph.node[0].op_type}")
    rec.elements = int(sum(w.size for w in want))
    got = [res.output(o.name) for o in model.graph.output]
    mism = sum(h.count_mismatches(a, b) for a, b in zip(want_opt, want))
    rec.ort = "equal" if mism == 0 else "differs"
    rec.ort_mismatches = mism
    rec.ort_detail = "ORT optimized vs ORT unoptimized" if mism else ""
    for g, w, o in zip(got, want, model.graph.output):
        try:
            h.assert_same_bytes(g, w, f"{case}: output {o.name} vs ORT")
        except AssertionError as e:
            rec.q8rt = "differs"
            rec.q8rt_detail = str(e)[:200]
            raise
    rec.q8rt = "equal"
    return got


def rand8(rng, shape, dt, lo=None, hi=None):
    return h.rand_int(rng, shape, dt, lo, hi)


def zp_of(dt, v):
    return np.asarray(v, dtype=dt)



def refuse(tmp_path, model, feeds, any_of=("node0",)):
    path = h.save_model(model, tmp_path / "bad.onnx")
    inputs = {k: save_input(tmp_path / f"bad_{k}", v) for k, v in feeds.items()}
    res = h.run_q8rt(path, inputs, tmp_path / "bad_out")
    msg = h.assert_clean_error(res, any_of)
    assert "node0" in msg, msg
    return msg
