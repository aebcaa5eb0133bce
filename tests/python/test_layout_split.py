"""Split on channels-last data (src/ops/split.c's nhwc_params, the planner writing every output
channels-last) and the reshape gathers of layout views (src/ops/layout_view.c: one strided copy
over the common refinement of the two shapes, element by element when there is none).

YOLOv8's C2f block: conv -> Split along the channels -> convs on the parts: the Split runs
channels-last with no layout change around it. A Split whose output goes to a graph output or an
NCHW-only op stays NCHW (the layout change would only move). Every model is compared byte for byte
with ONNX Runtime (no optimizations), with --backend reference and at 2 and 3 threads."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h
from test_layouts import check, conv
from test_layout_views import base, flatten_by_shape
from test_tables import model_of

SPLITS = [
    # (channels, split sizes or None for equal parts, axis, opset)
    (16, [8, 8], 1, 13),      # C2f: two halves
    (24, [3, 5, 16], 1, 13),  # uneven, three parts
    (16, None, 1, 11),        # equal parts, split attribute absent
    (16, None, 1, 18),        # num_outputs
    (8, [1, 2], 2, 13),       # along H of channels-last data
    (8, [4, 3], 3, 13),       # along W
]


@pytest.mark.parametrize("case", SPLITS, ids=[f"c{c[0]}s{c[1]}a{c[2]}o{c[3]}" for c in SPLITS])
def test_split_channels_last(case, tmp_path):
    c, sizes, axis, opset = case
    rng = np.random.default_rng(41)
    inits, x, xin = base(rng, c, (3, 7), False)
    n_out = len(sizes) if sizes is not None else 2
    parts = [f"p{k}" for k in range(n_out)]
    nodes = [conv(rng, "c0", "x", "a", c, c, inits)]
    if sizes is not None and opset >= 13:
        inits.append(h.tensor("sizes", np.array(sizes, dtype=np.int64)))
        nodes.append(helper.make_node("Split", ["a", "sizes"], parts, axis=axis, name="split"))
    elif opset >= 18:
        nodes.append(helper.make_node("Split", ["a"], parts, axis=axis, num_outputs=n_out, name="split"))
    else:
        nodes.append(helper.make_node("Split", ["a"], parts, axis=axis, name="split"))
    outs = []
    for k in range(n_out):
        ck = (sizes[k] if sizes is not None else c // n_out) if axis == 1 else c
        nodes.append(conv(rng, f"c{k + 1}", parts[k], f"y{k}", ck, 4, inits))
        outs.append(helper.make_tensor_value_info(f"y{k}", TensorProto.UINT8, None))
    m = model_of(nodes, [xin], outs, inits, opset=opset)
    out = check(m, x, tmp_path, max_transposes=1 + n_out, threads=(2, 3))
    line = [ln for ln in out.splitlines() if " split " in ln]
    assert len(line) == 1 and "channels-last like its input" in line[0], out
    # the input's change to NHWC and the outputs' to NCHW, nothing around the Split
    assert all("split" not in ln.split()[2] for ln in out.splitlines() if "LayoutTranspose" in ln), out


def test_split_to_graph_output_stays_nchw(tmp_path):
    rng = np.random.default_rng(43)
    inits, x, xin = base(rng, 8, (3, 5), False)
    inits.append(h.tensor("sizes", np.array([4, 4], dtype=np.int64)))
    nodes = [conv(rng, "c0", "x", "a", 8, 8, inits),
             helper.make_node("Split", ["a", "sizes"], ["p0", "p1"], axis=1, name="split"),
             conv(rng, "c1", "p1", "y1", 4, 4, inits)]
    outs = [helper.make_tensor_value_info(n, TensorProto.UINT8, None) for n in ("p0", "y1")]
    out = check(model_of(nodes, [xin], outs, inits), x, tmp_path, max_transposes=4, threads=(2,))
    line = [ln for ln in out.splitlines() if " split " in ln]
    assert len(line) == 1 and "channels-last" not in line[0], out


@pytest.mark.parametrize("c,target", [(64, [1, 4, 16, -1]), (6, [1, 4, -1])],
                         ids=["dfl_refined", "no_common_refinement"])
def test_reshape_gather_at_bind(c, target, tmp_path):
    """YOLOv8's DFL: channels-last [1, 64, H*W] (a flatten whose target is known at bind) reshaped
    to [1, 4, 16, H*W]: planned as a view, broken at bind, gathered as one strided copy (a 2-D
    transpose). [1, 6, 4] -> [1, 4, 6] has no common refinement: element by element."""
    rng = np.random.default_rng(47)
    inits, x, xin = base(rng, c, (2, 2) if c == 6 else (3, 5), True)
    inits.append(h.tensor("t2", np.array(target, dtype=np.int64)))
    nodes = [conv(rng, "c0", "x", "a", c, c, inits)]
    nodes += flatten_by_shape("a", "f", inits, "fl", [-1])
    nodes += [helper.make_node("Reshape", ["f", "t2"], ["y"], name="r2")]
    m = model_of(nodes, [xin], [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    check(m, x, tmp_path, max_transposes=3, threads=(2,))
