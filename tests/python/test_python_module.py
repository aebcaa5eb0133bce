"""The Python module (examples/python, ctypes over libq8rt.so) against q8rt-run, byte for byte.

- every data-movement op case of test_ops_data.py (all element types) and QLinearConv chains
  (u8/s8, per-tensor/per-channel, depthwise, strides) run through q8rt.Session and through
  q8rt-run on the same inputs: identical bytes;
- the real PP-OCR models (det, rec, cls; QOperator and QDQ) on every backend the CPU takes and 1
  or 2 threads: identical bytes to q8rt-run; their inputs/outputs as NodeArgs; the recognizer's
  metadata; explain() and profile();
- zero-copy: input_buffer() writes land in the arena, copy_outputs=False returns views of it;
- errors: q8rt.Error subclasses carrying q8rt's message (missing file, garbage bytes, unknown
  backend, wrong dtype/shape, unknown names);
- `pip install examples/python` into a fresh venv (build/test-pyvenv), then the module runs a model
  there (the in-tree build backend needs nothing from PyPI; pip fetches numpy; 15-60 s, mostly
  creating the venv and installing numpy).
Skipped in the sanitizer build: ctypes loads the library into an uninstrumented Python.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import q8rt_harness as h

REPO = Path(__file__).resolve().parents[2]
MODELS = Path(os.environ.get("Q8RT_MODELS", REPO / "build" / "models"))
pytestmark = pytest.mark.skipif(h.is_sanitized_build(), reason="ctypes loads libq8rt.so into Python")


@pytest.fixture(scope="module")
def q8rt():
    os.environ["Q8RT_LIBRARY"] = str(h.build_dir() / "libq8rt.so")
    sys.path.insert(0, str(REPO / "examples" / "python"))
    import q8rt as mod
    assert mod.version() == mod.__version__
    return mod


def via_runner(model_path, feeds, tmp_path, extra=()):
    inputs = {k: h.save_npy(tmp_path / f"in_{i}.npy", v) for i, (k, v) in enumerate(feeds.items())}
    return h.run_q8rt(model_path, inputs, tmp_path / "out", extra=list(extra)).assert_ok()


def npy_name(name: str) -> str:
    """q8rt-run's file name for an output (characters outside [A-Za-z0-9._-] become _)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def check_same(q8rt, model_path, feeds, tmp_path, backend="auto", threads=1):
    res = via_runner(model_path, feeds, tmp_path, ["--backend", backend, "--threads", str(threads)])
    with q8rt.Session(model_path, threads=threads, backend=backend) as s:
        outs = s.run(None, feeds)
        for arg, got in zip(s.get_outputs(), outs):
            h.assert_same_bytes(got, res.output(npy_name(arg.name)), f"{model_path.name}/{arg.name}")
    return outs


def test_data_ops_same_bytes(q8rt, tmp_path):
    import test_ops_data as D
    n = 0
    for case in D.CASES:
        model = D._fill_output_types(case.model)
        path = h.save_model(model, tmp_path / f"{case.name}.onnx")
        check_same(q8rt, path, case.feeds, tmp_path / case.name)
        n += 1
    assert n > 50


def test_float16_io_same_bytes(q8rt, tmp_path):
    """float16 inputs and outputs through the module: NumPy float16 arrays in and out."""
    from onnx import TensorProto, helper
    rng = np.random.default_rng(10)
    w = h.tensor("w", rng.standard_normal((5, 6)).astype(np.float16))
    model = h.make_model([helper.make_node("MatMul", ["x", "w"], ["y"])],
                         [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [3, 5])],
                         [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [3, 6])], [w], opset=17)
    path = h.save_model(model, tmp_path / "f16.onnx")
    x = rng.standard_normal((3, 5)).astype(np.float16)
    (y,) = check_same(q8rt, path, {"x": x}, tmp_path)
    assert y.dtype == np.float16
    h.assert_same_bytes(y, h.run_ort(model, {"x": x})[0], "float16 MatMul vs ORT")


@pytest.mark.parametrize("act", [np.uint8, np.int8])
def test_conv_chains_same_bytes(q8rt, act, tmp_path):
    rng = np.random.default_rng(5 if act == np.uint8 else 6)
    for i, (cin, cout, k, stride, group, pc) in enumerate([(3, 8, 3, 1, 1, True), (8, 8, 3, 2, 8, True),
                                                          (8, 16, 1, 1, 1, False), (16, 16, 5, 1, 16, False)]):
        w = rng.integers(-127, 128, size=(cout, cin // group, k, k)).astype(np.int8)
        zp = np.array(128 if act == np.uint8 else 0, act)
        p = h.ConvParams(w=w, w_scale=(rng.uniform(0.002, 0.01, cout) if pc else rng.uniform(0.002, 0.01, 1)).astype(np.float32),
                         w_zp=np.zeros(cout if pc else 1, np.int8), x_scale=np.float32(0.02), x_zp=zp,
                         y_scale=np.float32(0.05), y_zp=zp, bias=rng.integers(-500, 500, cout).astype(np.int32),
                         strides=[stride] * 2, pads=[k // 2] * 4, group=group)
        xs = [2, cin, 9, 11]
        model = h.conv_chain_model([p], xs, act)
        path = h.save_model(model, tmp_path / f"conv{i}.onnx")
        x = rng.integers(np.iinfo(act).min, np.iinfo(act).max + 1, size=xs).astype(act)
        for backend in ("auto", "reference"):
            check_same(q8rt, path, {model.graph.input[0].name: x}, tmp_path / f"c{i}{backend}", backend=backend)


@pytest.mark.parametrize("kind", ["det", "rec", "cls"])
@pytest.mark.parametrize("setting", ["qop_u8s8_pc", "qdq_u8s8_pc"])
def test_real_models_same_bytes(q8rt, kind, setting, tmp_path):
    path = MODELS / kind / f"{setting}.onnx"
    if not path.is_file():
        pytest.fail(f"{path} missing: run make models", pytrace=False)
    x = np.load(MODELS / kind / "input.npy")
    with q8rt.Session(path) as s:
        (inp,) = s.get_inputs()
        assert inp.type == "tensor(float)" and inp.shape[1] == 3 and inp.dtype == np.float32
    check_same(q8rt, path, {inp.name: x}, tmp_path / "t1")
    check_same(q8rt, path, {inp.name: x}, tmp_path / "t2", threads=2)
    if kind == "cls":
        check_same(q8rt, path, {inp.name: x}, tmp_path / "ref", backend="reference")


def test_explain_profile_metadata(q8rt):
    path = MODELS / "rec" / "qop_u8s8_pc.onnx"
    x = np.load(MODELS / "rec" / "input.npy")
    s = q8rt.Session(path, profile=True)
    assert all(p["ms"] == 0 for p in s.profile())  # nothing ran yet
    (y,) = s.run(["softmax_11.tmp_0"], {"x": x})
    prof = s.profile()
    plan = s.explain().splitlines()
    assert len(prof) == len(plan) > 100
    assert all(p["ms"] >= 0 and p["op_type"] and p["kernel"] for p in prof)
    assert any("QLinearConv" in ln for ln in plan)
    meta = s.get_modelmeta().custom_metadata_map
    want = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
    assert meta == want and len(meta["character"].split("\n")) == y.shape[-1] - 2
    assert s.arena_size > 0
    s.close()
    with pytest.raises(q8rt.StateError):
        s.run(None, {"x": x})


def test_zero_copy(q8rt, tmp_path):
    path = MODELS / "cls" / "qop_u8s8_pc.onnx"
    x = np.load(MODELS / "cls" / "input.npy")
    s = q8rt.Session(path)
    (want,) = s.run(None, {"x": x})
    s2 = q8rt.Session(path)
    s2.set_input_shape("x", x.shape)
    buf = s2.input_buffer("x")
    assert buf.shape == x.shape and buf.dtype == np.float32
    buf[...] = x
    (v1,) = s2.run(None, {}, copy_outputs=False)
    h.assert_same_bytes(v1, want, "zero-copy output")
    assert not v1.flags.writeable and not v1.flags.owndata
    (v2,) = s2.run(None, {}, copy_outputs=False)
    assert np.shares_memory(v1, v2)  # the same arena bytes, no copy


def test_errors_carry_q8rt_message(q8rt, tmp_path):
    with pytest.raises(q8rt.IOError_, match="cannot open model"):
        q8rt.Session(tmp_path / "missing.onnx")
    with pytest.raises(q8rt.InvalidModel) as e:
        q8rt.Session(b"\x08\x07garbage")
    assert str(e.value)
    with pytest.raises(q8rt.InvalidArgument, match="unknown backend"):
        q8rt.Session(MODELS / "cls" / "qop_u8s8_pc.onnx", backend="tpu")
    s = q8rt.Session(MODELS / "cls" / "qop_u8s8_pc.onnx")
    x = np.load(MODELS / "cls" / "input.npy")
    with pytest.raises(q8rt.InvalidArgument, match="float32"):
        s.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(q8rt.ShapeError, match="input 'x'"):
        s.run(None, {"x": x[:, :2]})
    with pytest.raises(q8rt.InvalidArgument, match="no input named 'y'"):
        s.run(None, {"y": x})
    with pytest.raises(q8rt.InvalidArgument, match="no output named"):
        s.run(["nope"], {"x": x})
    if "avx512" not in h.run_q8rt(MODELS / "cls" / "qop_u8s8_pc.onnx", extra=["--explain"]).stdout:
        with pytest.raises(q8rt.Unsupported, match="cannot run"):
            q8rt.Session(MODELS / "cls" / "qop_u8s8_pc.onnx", backend="avx512")


def test_loop_iteration_cap(q8rt, tmp_path):
    """max_loop_iterations reaches the session; a Loop past it raises LimitError naming the node."""
    from onnx import TensorProto as T, helper

    def vi(name, t, shape):
        return helper.make_tensor_value_info(name, t, shape)

    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["co"]), helper.make_node("Add", ["v", "one"], ["vo"])], "body",
        [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("v", T.FLOAT, [2])],
        [vi("co", T.BOOL, []), vi("vo", T.FLOAT, [2])], [onnx.numpy_helper.from_array(np.float32(1), "one")])
    g = helper.make_graph([helper.make_node("Loop", ["M", "", "x"], ["y"], name="counted", body=body)], "g",
                          [vi("M", T.INT64, []), vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
    m.ir_version = 8
    data = m.SerializeToString()
    x = np.array([0.5, -1.0], np.float32)
    (y,) = q8rt.Session(data, max_loop_iterations=5).run(None, {"M": np.array(5, np.int64), "x": x})
    h.assert_same_bytes(y, x + 5, "y")
    with pytest.raises(q8rt.LimitError, match="counted.*max_loop_iterations"):
        q8rt.Session(data, max_loop_iterations=5).run(None, {"M": np.array(6, np.int64), "x": x})


def test_names_that_are_not_utf8(q8rt):
    """ONNX names should be UTF-8, but a model may hold any bytes (a bit-flipped or hand-written
    model): the module decodes names with surrogateescape, so get_inputs/get_outputs do not raise
    UnicodeDecodeError, two names that differ only in such bytes stay two keys (errors="replace"
    would fold both to one), and a name encodes back to the model's bytes."""
    from onnx import TensorProto as T, helper

    raw = {"IA": b"a\xff", "IB": b"a\xfe", "OS": b"\xe2\x82", "OD": b"\xc0\xaf", "NN": b"n\x80"}
    nodes = [helper.make_node("Add", ["IA", "IB"], ["OS"], name="NN"), helper.make_node("Sub", ["IA", "IB"], ["OD"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, T.FLOAT, [3]) for n in ("IA", "IB")],
                          [helper.make_tensor_value_info(n, T.FLOAT, [3]) for n in ("OS", "OD")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    data = m.SerializeToString()
    for k, v in raw.items():  # same-length stand-ins, so no protobuf length changes
        assert len(k) == len(v) and data.count(k.encode()) >= 1
        data = data.replace(k.encode(), v)
    s = q8rt.Session(data, profile=True)
    names = [a.name for a in s.get_inputs()] + [a.name for a in s.get_outputs()]
    assert [n.encode("utf-8", "surrogateescape") for n in names] == [raw[k] for k in ("IA", "IB", "OS", "OD")]
    a, b = np.array([1, 2, 3], np.float32), np.array([0.5, -4, 8], np.float32)
    ia, ib, osum, odiff = names
    got_sum, got_diff = s.run(None, {ia: a, ib: b})
    h.assert_same_bytes(got_sum, a + b, "sum")
    h.assert_same_bytes(got_diff, a - b, "diff")
    (only,) = s.run([odiff], {ia: b, ib: a})
    h.assert_same_bytes(only, b - a, "diff by name")
    with pytest.raises(q8rt.InvalidArgument, match="no input named"):
        s.run(None, {"a\ufffd": a, ib: b})
    assert b"n\x80" in [p["node"].encode("utf-8", "surrogateescape") for p in s.profile()]


def test_loop_scan_outputs_under_max_arena_bytes(q8rt, tmp_path):
    """A Loop's scan outputs count against max_arena_bytes: sized from M at bind (in the arena), and
    of a length found at run (buffers of the Loop's, grown as the run goes): past the limit both
    fail naming the node; under it both give the scan values."""
    from onnx import TensorProto as T, helper

    def vi(name, t, shape):
        return helper.make_tensor_value_info(name, t, shape)

    one = onnx.numpy_helper.from_array(np.float32(1), "one")
    lim = onnx.numpy_helper.from_array(np.float32(1000), "lim")
    body = helper.make_graph(
        [helper.make_node("Add", ["v", "one"], ["vo"]), helper.make_node("Identity", ["vo"], ["s"]),
         helper.make_node("ReduceMax", ["vo"], ["mx"], keepdims=0),
         helper.make_node("Less", ["mx", "lim"], ["co"])], "body",
        [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("v", T.FLOAT, [256])],
        [vi("co", T.BOOL, []), vi("vo", T.FLOAT, [256]), vi("s", T.FLOAT, [256])], [one, lim])
    x = np.zeros(256, np.float32)
    want = np.arange(1, 201, dtype=np.float32)[:, None] + x  # 200 iterations of 1 KiB each
    for late in (0, 1):
        ins = ["M", "c"] if late else ["M", ""]
        g = helper.make_graph([helper.make_node("Loop", [*ins, "x"], ["y", "ys"], name="scanned", body=body)], "g",
                              [vi("x", T.FLOAT, [256])], [vi("y", T.FLOAT, [256]), vi("ys", T.FLOAT, None)],
                              [onnx.numpy_helper.from_array(np.int64(1000 if late else 200), "M"),
                               onnx.numpy_helper.from_array(np.bool_(True), "c")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
        m.ir_version = 8
        feeds = {"x": x + (800 if late else 0)}
        data = m.SerializeToString()
        _, ys = q8rt.Session(data, max_arena_bytes=1 << 20).run(None, feeds)
        h.assert_same_bytes(ys, want + (800 if late else 0), "ys")
        with pytest.raises(q8rt.OutOfMemory) as e:
            q8rt.Session(data, max_arena_bytes=150_000).run(None, feeds)
        if late:
            assert "scanned" in str(e.value) and "max_arena_bytes" in str(e.value), str(e.value)
        else:
            assert "arena" in str(e.value), str(e.value)


def test_pip_install_fresh_venv(tmp_path):
    venv = REPO / "build" / "test-pyvenv"
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        str(REPO / "examples" / "python")], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    model = MODELS / "cls" / "qop_u8s8_pc.onnx"
    x = np.load(MODELS / "cls" / "input.npy")
    np.save(tmp_path / "x.npy", x)
    code = ("import sys, numpy as np, q8rt; s = q8rt.Session(sys.argv[1]); "
            "y, = s.run(None, {'x': np.load(sys.argv[2])}); np.save(sys.argv[3], y); "
            "print(q8rt.version(), q8rt.get_library_path())")
    env = {k: v for k, v in os.environ.items() if k != "Q8RT_LIBRARY"}
    r = subprocess.run([str(py), "-c", code, str(model), str(tmp_path / "x.npy"), str(tmp_path / "y.npy")],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert str(venv) in r.stdout  # the library packaged into the venv, not the build tree's
    res = via_runner(model, {"x": x}, tmp_path)
    h.assert_same_bytes(np.load(tmp_path / "y.npy"), res.output(npy_name("save_infer_model/scale_0.tmp_1")), "pip-installed module")
