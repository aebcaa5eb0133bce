"""One-node op cases run in q8rt-run and ONNX Runtime (CPU, one thread, graph optimizations off so
ORT runs the node as written), compared

  exact   same dtype, shape and bytes (floats as bit patterns): data movement, integer and bool
          ops, Floor/Ceil/Round, PRelu, and float ops whose arithmetic q8rt does in ORT's order;
  ulp:N   float outputs at most N units in the last place apart, NaN in the same places: ops where
          ORT uses its own approximations (MLAS erf/exp/tanh, Eigen) and q8rt libm's;
  tol:R   |q8rt - ORT| <= R * (|ORT| + 1e-6): sums whose order differs (normalizations, L2);
  mix:R   |q8rt - ORT| <= R * max(|ORT|, 1): functions of the form 1 + erf, exp - 1 whose result
          cancels near 0, where ORT's approximations (MLAS) are the less accurate ones.

Used by the test_ops_*.py modules of the ops added for issue 10 (float-valued ops need the
tolerances; single_node.py is the exact quantized counterpart, whose ORT runner and input writer
are reused here).
"""

from __future__ import annotations

import dataclasses
import zlib
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper

import q8rt_harness as h
import single_node

F = TensorProto.FLOAT
U8 = TensorProto.UINT8
I8 = TensorProto.INT8
I16 = TensorProto.INT16
I32 = TensorProto.INT32
I64 = TensorProto.INT64
B = TensorProto.BOOL
ONNX_OF = {np.dtype(k): v for k, v in ((np.float32, F), (np.uint8, U8), (np.int8, I8), (np.int16, I16),
                                       (np.int32, I32), (np.int64, I64), (np.bool_, B))}


@dataclasses.dataclass
class Case:
    name: str
    model: onnx.ModelProto
    feeds: Dict[str, np.ndarray]
    compare: str = "exact"


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def node_model(op: str, inputs: Sequence[Tuple[str, np.ndarray]], n_out: int = 1, attrs: Optional[dict] = None,
               inits: Sequence[str] = (), opset: int = 17, domain: str = "",
               out_types: Optional[Sequence[int]] = None) -> Tuple[onnx.ModelProto, Dict[str, np.ndarray]]:
    """A one-node model; `inputs` are (name, value) pairs ("" for an omitted input), those named in
    `inits` become initializers, the others graph inputs fed with their value."""
    inits = set(inits)
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, [n for n, _ in inputs], outs, name=f"{op.lower()}_node", domain=domain,
                            **(attrs or {}))
    graph_inputs, initializers, feeds = [], [], {}
    for n, v in inputs:
        if not n:
            continue
        if n in inits:
            initializers.append(h.tensor(n, v))
        else:
            graph_inputs.append(helper.make_tensor_value_info(n, ONNX_OF[v.dtype], list(v.shape)))
            feeds[n] = v
    outputs = [helper.make_tensor_value_info(o, out_types[i], None) if out_types else
               helper.make_empty_tensor_value_info(o) for i, o in enumerate(outs)]
    opsets = [("", opset)] + ([(domain, 1)] if domain else [])
    graph = helper.make_graph([node], "g", graph_inputs, outputs, initializers)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 8
    return m, feeds


def case(name: str, op: str, inputs, compare: str = "exact", **kw) -> Case:
    m, feeds = node_model(op, inputs, **kw)
    return Case(name, m, feeds, compare)


def run_ort(model: onnx.ModelProto, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
    return single_node.run_ort(model, feeds, optimize=False)


def save_input(tmp_path: Path, name: str, v: np.ndarray) -> Path:
    return single_node.save_input(tmp_path / name, v)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ai = a.astype(np.float32).view(np.int32).astype(np.int64)
    bi = b.astype(np.float32).view(np.int32).astype(np.int64)
    ai = np.where(ai < 0, -(ai & 0x7FFFFFFF), ai)
    bi = np.where(bi < 0, -(bi & 0x7FFFFFFF), bi)
    return np.abs(ai - bi)


def check(c: Case, tmp_path: Path, extra: Sequence[str] = ()) -> None:
    want = run_ort(c.model, c.feeds)
    model_path = h.save_model(c.model, tmp_path / "model.onnx")
    inputs = {n: save_input(tmp_path, n, v) for n, v in c.feeds.items()}
    res = h.run_q8rt(model_path, inputs, tmp_path / "out", extra=extra).assert_ok()
    kind, _, arg = c.compare.partition(":")
    for i, out in enumerate(c.model.graph.output):
        got, w = res.output(out.name), np.asarray(want[i])
        assert got.dtype == w.dtype and got.shape == w.shape, \
            f"{c.name}/{out.name}: {got.dtype}{got.shape} vs ORT {w.dtype}{w.shape}"
        if kind == "exact" or w.dtype.kind != "f":
            h.assert_same_bytes(got, w, f"{c.name}/{out.name}")
            continue
        assert np.array_equal(np.isnan(got), np.isnan(w)), f"{c.name}: NaN positions differ"
        fin = np.isfinite(w)
        assert np.array_equal(got[~fin & ~np.isnan(w)], w[~fin & ~np.isnan(w)]), f"{c.name}: infinities differ"
        if kind == "ulp":
            d = ulp_distance(got[fin], w[fin])
            assert int(d.max(initial=0)) <= int(arg), f"{c.name}: max {int(d.max())} ulp apart (allowed {arg})"
        else:
            r = float(arg)
            diff = np.abs(got[fin].astype(np.float64) - w[fin])
            mag = np.abs(w[fin].astype(np.float64))
            bound = r * (np.maximum(mag, 1.0) if kind == "mix" else mag + 1e-6)
            assert np.all(diff <= bound), f"{c.name}: max |diff| {diff.max():.3g} beyond {arg} relative"


def check_refused(model: onnx.ModelProto, feeds: Dict[str, np.ndarray], tmp_path: Path, words: Sequence[str]) -> str:
    """q8rt refuses the model with one clean error line naming the node and one of `words`."""
    model_path = h.save_model(model, tmp_path / "model.onnx")
    inputs = {n: save_input(tmp_path, n, v) for n, v in feeds.items()}
    res = h.run_q8rt(model_path, inputs, tmp_path / "out")
    msg = h.assert_clean_error(res)
    node = model.graph.node[0].name
    assert node in msg, f"error does not name node {node!r}: {msg}"
    if words:
        assert any(w.lower() in msg.lower() for w in words), f"error names none of {list(words)}: {msg}"
    return msg
