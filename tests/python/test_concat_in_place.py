"""Concat in place (src/runtime/session.c, plan_in_place): a QLinearConv whose output only a
QLinearConcat reads, with the Concat's scale and zero point, writes its pixels straight into its slice
of the Concat's output (rows out_c wide, the Concat's row apart) and the Concat skips that input.
With another scale, the Concat's requantization table moves into the conv's output stage first
(src/plan/plan.c, concat_tables; composed with a fused activation's table).
Every graph here runs in q8rt (auto; 2 and 3 threads, whose tiles split the rows; the reference
backend, whose convolutions write densely, so nothing is in place there) and in ONNX Runtime: the
same bytes everywhere. The cases where the alias would be wrong must keep the copy: the conv output
is also a graph output, also read by another node, listed twice in the Concat; the Concat along a
non-channel axis with a batch of 2 (its slice is not rows of the conv's channels); symbolic
dimensions bound at run time, and empty tensors. tests/unit/test_runtime.c checks which values the
session puts in place for these graphs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h
from single_node import const, run_ort, save_input

ZP = 9


def conv(nodes, inits, name, x, cin, cout, k, y_scale, rng, table=False):
    """A u8 QLinearConv (per-channel s8 weights, bias, pads k // 2) x -> name; table: QLinearSigmoid after it
    (fused into the conv's output stage as a table)."""
    inits += [const(f"{name}_w", rng.integers(-127, 128, (cout, cin, k, k)).astype(np.int8)),
              const(f"{name}_ws", (0.004 + 0.001 * rng.random(cout)).astype(np.float32)),
              const(f"{name}_wz", np.zeros(cout, np.int8)),
              const(f"{name}_b", rng.integers(-3000, 3000, cout).astype(np.int32)),
              const(f"{name}_ys", np.float32(y_scale)), const(f"{name}_yz", np.uint8(ZP))]
    out = f"{name}_pre" if table else name
    p = k // 2
    nodes.append(helper.make_node("QLinearConv", [x, "xs", "xz", f"{name}_w", f"{name}_ws", f"{name}_wz",
                                                  f"{name}_ys", f"{name}_yz", f"{name}_b"], [out], name=name,
                                  pads=[p, p, p, p]))
    if table:
        nodes.append(helper.make_node("QLinearSigmoid", [out, f"{name}_ys", f"{name}_yz", f"{name}_ys",
                                                         f"{name}_yz"], [name], name=f"{name}_sig",
                                      domain="com.microsoft"))


def model(shape, variant, axis=1):
    """x -> conv a (3x3) and conv b (1x1) -> QLinearConcat(a, b[, extra]) -> conv c (1x1) -> y.
    a and b have the Concat's scale unless the variant says otherwise."""
    rng = np.random.default_rng(7)
    n, c, hh, ww = shape
    nodes, inits = [], [const("xs", np.float32(0.05)), const("xz", np.uint8(ZP)), const("cs", np.float32(0.3)),
                        const("cz", np.uint8(ZP))]
    # heads: a detector's few-channel heads (1 and 4 channels; 3 and 2), the few-channel kernel
    # writing rows 5 apart (b) and through a table (a)
    ca, cb = (1, 4) if variant == "heads" else (3, 2) if variant == "heads3" else (24, 40)
    a_scale = 0.2 if variant in ("table_rescale", "rescale_graph_output", "rescale_second_reader") else 0.3
    conv(nodes, inits, "a", "x", c, ca, 3, a_scale, rng,
         table=variant in ("table", "table_rescale", "heads", "heads3"))
    conv(nodes, inits, "b", "x", c, cb if axis == 1 else ca, 1, 0.2 if variant == "rescale" else 0.3, rng)
    cat = ["cs", "cz", "a", "a_ys", "a_yz", "b", "b_ys", "b_yz"]
    outs = ["y"]
    if variant == "twice":
        cat += ["a", "a_ys", "a_yz"]
    if variant == "graph_input":
        cat += ["x", "xs", "xz"]
    nodes.append(helper.make_node("QLinearConcat", cat, ["cat"], name="cat", domain="com.microsoft", axis=axis))
    cc = (ca + cb + (ca if variant == "twice" else 0) + (c if variant == "graph_input" else 0)) if axis == 1 else ca
    conv(nodes, inits, "y", "cat", cc, 16, 1, 0.5, rng)
    if variant in ("graph_output", "rescale_graph_output"):
        outs.append("a")
    if variant == "cat_output":
        outs.append("cat")
    if variant in ("second_reader", "rescale_second_reader"):
        conv(nodes, inits, "d", "a", ca, 8, 1, 0.4, rng)
        outs.append("d")
    dims = ["N" if variant == "symbolic" else n, c, hh, ww]
    g = helper.make_graph(nodes, "cat_in_place", [helper.make_tensor_value_info("x", TensorProto.UINT8, dims)],
                          [onnx.ValueInfoProto(name=o) for o in outs], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


CASES = [
    # (input shape, variant, concat axis)
    ((1, 16, 20, 24), "plain", 1),         # a: the seg route (interior in place, borders gathered); b: 1x1 direct
    ((1, 16, 13, 13), "plain", 1),         # a: im2col tiles (rows too short for the seg route)
    ((2, 8, 30, 34), "plain", 1),          # a batch of 2, several tiles per thread
    ((1, 16, 20, 24), "table", 1),         # a's Sigmoid table applied row by row in the slice
    ((1, 16, 20, 24), "rescale", 1),       # b requantized by the Concat: its table moves into conv b
    ((1, 16, 20, 24), "table_rescale", 1),  # a's Sigmoid table and the Concat's table composed in conv a
    ((1, 16, 20, 24), "rescale", 3),       # along W: b's table composed, the copy kept
    ((1, 16, 20, 24), "twice", 1),         # a read twice by the Concat: no alias for a
    ((1, 16, 20, 24), "graph_input", 1),   # a graph input among the Concat's inputs: copied
    ((1, 16, 20, 24), "graph_output", 1),  # a is also a graph output: keeps its own dense block
    ((1, 16, 20, 24), "cat_output", 1),    # the Concat's output is a graph output too
    ((1, 16, 20, 24), "second_reader", 1),  # a is read by another conv: keeps its own block
    ((1, 16, 20, 24), "rescale_graph_output", 1),   # a requantized and a graph output: no table moves
    ((1, 16, 20, 24), "rescale_second_reader", 1),  # a requantized and read by another conv: idem
    ((1, 16, 20, 24), "plain", 2),         # along H, batch 1: a and b are one block each
    ((2, 16, 10, 12), "plain", 2),         # along H, batch 2: slices are not rows of channels: copied
    ((1, 16, 20, 24), "plain", 3),         # along W
    ((3, 16, 11, 17), "symbolic", 1),      # symbolic batch, bound to 3 at run
    ((1, 16, 20, 24), "heads", 1),         # 1-channel 3x3 + table and 4-channel 1x1 convs into a Concat
    ((2, 8, 30, 34), "heads3", 1),         # 3 + 2 channels (a group of 3 in a 4-lane pattern), batch 2
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[1]}-axis{c[2]}-{'x'.join(map(str, c[0]))}" for c in CASES])
def test_concat_in_place_same_bytes(case, tmp_path):
    shape, variant, axis = case
    m = model(shape, variant, axis)
    x = np.random.default_rng(3).integers(0, 256, shape).astype(np.uint8)
    path = h.save_model(m, tmp_path / "m.onnx")
    inp = {"x": save_input(tmp_path / "x", x)}
    want = run_ort(m, {"x": x}, optimize=False)
    for extra in ([], ["--threads", "2"], ["--threads", "3"], ["--backend", "reference"]):
        res = h.run_q8rt(path, inp, tmp_path / f"out{len(extra)}{''.join(extra[1:])}", extra=extra).assert_ok()
        for o, w in zip(m.graph.output, want):
            h.assert_same_bytes(res.output(o.name), w, f"{variant} axis {axis} {extra}: {o.name} vs ORT")


def test_concat_in_place_empty_batch(tmp_path):
    """A symbolic batch bound to 0: nothing to write, nothing put in place; runs and gives empty outputs."""
    m = model((0, 16, 9, 10), "symbolic", 1)
    x = np.zeros((0, 16, 9, 10), np.uint8)
    path = h.save_model(m, tmp_path / "m.onnx")
    res = h.run_q8rt(path, {"x": save_input(tmp_path / "x", x)}, tmp_path / "o", extra=["--threads", "2"])
    res.assert_ok()
    assert res.output("y").shape == (0, 16, 9, 10)
