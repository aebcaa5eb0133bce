"""q8rt-run's command line: --explain, --repeat, --profile, --backend, --threads, deterministic
pseudo-random inputs, .pb and .npy inputs, several outputs, usage errors."""

import re

import numpy as np
import pytest
from onnx import TensorProto, helper

import q8rt_harness as h
from gen_parity_models import ConvSpec, Case, build

NODES = [("QuantizeLinear", "quantize_in"), ("QLinearConv", "conv0"), ("QLinearConv", "conv1"),
         ("QLinearConv", "conv2"), ("DequantizeLinear", "dequantize_out")]


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """float x -> QuantizeLinear -> conv s2 -> depthwise -> pointwise -> DequantizeLinear -> y."""
    case = Case("cli_chain", [
        ConvSpec(3, 8, xt="u8", wt="s8", per_channel=True, strides=[2, 2], pads=[1, 1, 1, 1]),
        ConvSpec(8, 8, xt="u8", wt="s8", per_channel=True, group=8, pads=[1, 1, 1, 1]),
        ConvSpec(8, 16, (1, 1), xt="u8", wt="s8", per_channel=True)], (1, 3, 16, 16),
        quantize_input=True, dequantize_output=True)
    b = build(case)
    d = tmp_path_factory.mktemp("cli")
    b.model_path = h.save_model(b.model, d / "chain.onnx")
    b.x_npy = h.save_npy(d / "x.npy", b.x)
    b.x_pb = h.save_pb(d / "x.pb", b.x, "x")
    return b


def _lines_naming(text, name):
    """Plan lines whose node column is `name` (a layout change's reason may name the node it serves)."""
    plan = [ln for ln in text.splitlines() if re.match(r"^ *\d+ ", ln)]
    if plan:
        return [ln for ln in plan if len(ln.split()) > 2 and ln.split()[2] == name]
    return [ln for ln in text.splitlines() if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", ln)]


def test_runs_and_matches_reference(chain, tmp_path):
    res = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, tmp_path / "o").assert_ok()
    h.assert_same_bytes(res.output("y"), chain.y_ref)


@pytest.mark.parametrize("backend", ["auto", "reference"])
def test_explain_one_line_per_node(chain, tmp_path, backend):
    res = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, tmp_path / "o",
                     extra=["--explain", "--backend", backend]).assert_ok()
    for op, name in NODES:
        lines = _lines_naming(res.stdout, name)
        assert len(lines) == 1, f"--explain: expected one line naming {name}, got {lines}\n{res.stdout}"
        line = lines[0]
        assert op in line, f"--explain line for {name} does not name the op {op}: {line!r}"
        rest = line.split(name, 1)[1].strip()
        assert len(rest) >= 3, f"--explain line for {name} names no kernel / reason: {line!r}"
        if backend == "reference":
            assert re.search(r"scalar|ref", rest, re.I), f"reference backend but kernel is {rest!r}"
    # the run still happens and is still exact
    h.assert_same_bytes(res.output("y"), chain.y_ref)


def test_explain_lines_in_plan_order(chain, tmp_path):
    res = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, tmp_path / "o", extra=["--explain"]).assert_ok()
    out = res.stdout
    pos = [out.find(name) for _, name in NODES]
    assert all(p >= 0 for p in pos) and pos == sorted(pos), f"plan not in topological order:\n{out}"


@pytest.mark.parametrize("n", [1, 5])
def test_repeat_prints_latency(chain, tmp_path, n):
    res = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, tmp_path / "o", extra=["--repeat", str(n)]).assert_ok()
    m = [re.fullmatch(r"latency_ms median=([0-9.]+) min=([0-9.]+) runs=(\d+)", ln.strip())
         for ln in res.stdout.splitlines()]
    m = [x for x in m if x]
    assert len(m) == 1, f"expected one latency line:\n{res.stdout}"
    median, mn, runs = float(m[0].group(1)), float(m[0].group(2)), int(m[0].group(3))
    assert runs == n
    assert 0 <= mn <= median, (mn, median)
    h.assert_same_bytes(res.output("y"), chain.y_ref)


@pytest.mark.parametrize("threads", [1, 2])
def test_repeat_prints_run_stats_with_threads(chain, tmp_path, threads):
    """--repeat with --threads 2 adds one run_stats line: the timed runs (not the warm-up) split
    into shared and alone ones (q8rt_session_run_stats); one thread prints none."""
    res = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, tmp_path / "o",
                     extra=["--repeat", "9", "--threads", str(threads)]).assert_ok()
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("run_stats")]
    if threads == 1:
        assert lines == [], res.stdout
        return
    assert len(lines) == 1, res.stdout
    kv = dict(f.split("=") for f in lines[0].split()[1:])
    assert set(kv) == {"shared", "alone", "contended", "regions", "solo_regions", "unhelped_regions",
                       "solo_stretches", "wait_ms"}, lines[0]
    assert int(kv["shared"]) + int(kv["alone"]) == 9 and int(kv["alone"]) >= 3 and int(kv["shared"]) >= 3, lines[0]
    assert int(kv["solo_regions"]) <= int(kv["regions"]) and float(kv["wait_ms"]) >= 0.0, lines[0]
    h.assert_same_bytes(res.output("y"), chain.y_ref)


def test_profile_prints_per_step_times(chain, tmp_path):
    res = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, tmp_path / "o", extra=["--profile"]).assert_ok()
    for op, name in NODES:
        lines = _lines_naming(res.stdout, name)
        assert lines, f"--profile printed no line for {name}:\n{res.stdout}"
        assert any(re.search(r"\d+\.\d+|\d+\s*(ms|us)", ln.split(name, 1)[1]) for ln in lines), \
            f"--profile line for {name} has no time: {lines}"


@pytest.mark.parametrize("backend", ["tpu", "AVX2x", ""])
def test_unknown_backend_refused(chain, tmp_path, backend):
    res = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, tmp_path / "o", extra=["--backend", backend])
    h.assert_clean_error(res, [backend] if backend else ["backend"])
    assert not (tmp_path / "o" / "y.npy").exists()


@pytest.mark.parametrize("backend", ["avx2", "neon", "xnnpack"])
def test_optional_backend_refused_or_exact(chain, tmp_path, backend):
    """Backends not built into this q8rt are refused with a clear error; once built, they must give
    the same bytes as the reference."""
    res = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, tmp_path / "o", extra=["--backend", backend])
    if res.returncode == 0:
        h.assert_no_sanitizer_report(res)
        h.assert_same_bytes(res.output("y"), chain.y_ref, f"--backend {backend}")
    else:
        h.assert_clean_error(res, [backend])


def test_avx2_backend_plans_only_avx2_kernels(chain, tmp_path):
    """--backend avx2 is what a CPU with AVX2 but no AVX-512 gets: no step of its plan names an
    AVX-512 kernel (the layout transposes and packing helpers included), and the bytes are the
    reference's."""
    res = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, tmp_path / "o", extra=["--explain", "--backend", "avx2"])
    if res.returncode != 0:
        h.assert_clean_error(res, ["avx2"])
        pytest.skip("this q8rt or CPU has no avx2 backend")
    plan = [ln for ln in res.stdout.splitlines() if re.match(r"^ *\d+ ", ln)]
    assert plan, res.stdout
    assert any("avx2" in ln for ln in plan), res.stdout
    wide = [ln for ln in plan if "avx512" in ln]
    assert not wide, f"--backend avx2 planned AVX-512 kernels: {wide}"
    h.assert_same_bytes(res.output("y"), chain.y_ref, "--backend avx2")


def test_threads_same_output(chain, tmp_path):
    outs = []
    for t in ("1", "2", "3"):
        res = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, tmp_path / f"o{t}", extra=["--threads", t]).assert_ok()
        outs.append(res.output("y"))
    for o in outs:
        h.assert_same_bytes(o, chain.y_ref)


def test_pseudo_random_inputs_deterministic(chain, tmp_path):
    a = h.run_q8rt(chain.model_path, None, tmp_path / "a").assert_ok().output("y")
    b = h.run_q8rt(chain.model_path, None, tmp_path / "b", extra=["--threads", "2"]).assert_ok().output("y")
    h.assert_same_bytes(a, b, "two runs without --input")
    assert a.shape == chain.y_ref.shape
    assert np.unique(a).size > 10, "pseudo-random input gave a near-constant output"


def test_pseudo_random_u8_input_deterministic(tmp_path):
    """Integer graph input (no QuantizeLinear in front)."""
    b = build(Case("cli_u8", [ConvSpec(4, 4, xt="u8", wt="s8", pads=[1, 1, 1, 1])], (1, 4, 6, 6)))
    p = h.save_model(b.model, tmp_path / "m.onnx")
    a = h.run_q8rt(p, None, tmp_path / "a").assert_ok().output("y")
    c = h.run_q8rt(p, None, tmp_path / "c").assert_ok().output("y")
    h.assert_same_bytes(a, c)
    assert np.unique(a).size > 5


def test_pb_input_same_as_npy(chain, tmp_path):
    a = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, tmp_path / "a").assert_ok().output("y")
    b = h.run_q8rt(chain.model_path, {"x": chain.x_pb}, tmp_path / "b").assert_ok().output("y")
    h.assert_same_bytes(b, a, ".pb vs .npy input")
    h.assert_same_bytes(b, chain.y_ref)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_fortran_order_npy_input(tmp_path, dtype):
    """numpy writes an F-contiguous array (a transpose, some fancy-index results) in Fortran order:
    q8rt-run reads it as the same array (an Identity returns it in C order)."""
    shape = (2, 3, 4, 5)
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)],
                          [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)])
    p = h.save_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "m.onnx")
    x = np.arange(np.prod(shape)).reshape(shape[::-1]).astype(dtype).T  # F-contiguous
    assert x.flags.f_contiguous and not x.flags.c_contiguous
    path = tmp_path / "x.npy"
    np.save(path, x, allow_pickle=False)
    assert b"'fortran_order': True" in path.read_bytes()[:128]
    h.assert_same_bytes(h.run_q8rt(p, {"x": path}, tmp_path / "o").assert_ok().output("y"), np.ascontiguousarray(x))


def test_several_outputs_written(tmp_path):
    """Each graph output goes to DIR/<name>.npy, including an intermediate that is also consumed."""
    rng = np.random.default_rng(3)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q_out"], name="q"),
             helper.make_node("DequantizeLinear", ["q_out", "s", "z"], ["dq_out"], name="dq")]
    m = h.make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
                     [helper.make_tensor_value_info("q_out", TensorProto.INT8, None),
                      helper.make_tensor_value_info("dq_out", TensorProto.FLOAT, None)],
                     [h.tensor("s", np.float32(0.037)), h.tensor("z", np.int8(-3))])
    x = (rng.standard_normal((2, 5)) * 3).astype(np.float32)
    p = h.save_model(m, tmp_path / "m.onnx")
    res = h.run_q8rt(p, {"x": h.save_npy(tmp_path / "x.npy", x)}, tmp_path / "o").assert_ok()
    q = h.quantize_ref(x, np.float32(0.037), np.int8(-3), np.int8)
    h.assert_same_bytes(res.output("q_out"), q)
    h.assert_same_bytes(res.output("dq_out"), h.dequantize_ref(q, np.float32(0.037), np.int8(-3)))


def test_no_output_dir_prints_summary(chain):
    res = h.run_q8rt(chain.model_path, {"x": chain.x_npy}).assert_ok()
    assert _lines_naming(res.stdout, "y"), f"no summary line for output y:\n{res.stdout}"


def test_missing_model_file(tmp_path):
    res = h.run_q8rt(tmp_path / "no_such_model.onnx", None, tmp_path / "o")
    h.assert_clean_error(res, ["no_such_model.onnx"])


def test_model_path_is_directory(tmp_path):
    h.assert_clean_error(h.run_q8rt(tmp_path, None, tmp_path / "o"))


@pytest.mark.parametrize("args", [
    [],
    ["--no-such-option"],
    ["MODEL", "--repeat", "-1"],
    ["MODEL", "--repeat", "abc"],
    ["MODEL", "--threads", "x"],
    ["MODEL", "--input", "novalue"],
    ["MODEL", "--input"],
    ["MODEL", "--output-dir"],
    ["MODEL", "MODEL"],
    ["MODEL", "--max-memory", "-5"],
    ["MODEL", "--max-memory", "1e3"],
], ids=["no-args", "unknown-option", "negative-repeat", "repeat-not-int", "threads-not-int",
        "input-without-equals", "input-without-value", "output-dir-without-value", "two-models",
        "negative-max-memory", "max-memory-not-int"])
def test_usage_errors(chain, tmp_path, args):
    import subprocess
    argv = [str(h.runner_path())] + [str(chain.model_path) if a == "MODEL" else a for a in args]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    res = h.RunResult(argv, p.returncode, p.stdout, p.stderr, None)
    h.assert_clean_error(res)


def test_max_memory_caps_model_and_session(chain, tmp_path):
    """--max-memory MIB caps the model's and the session's bytes: too small a cap is one error line
    naming the limit; the default (physical memory) and 0 (no cap) run."""
    import subprocess
    base = [str(h.runner_path()), str(chain.model_path), "--input", f"x={chain.x_npy}"]
    p = subprocess.run(base + ["--max-memory", "0"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    p = subprocess.run(base, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    # the chain's model is a few KiB, its session well under 1 MiB: a 1 MiB cap refuses a model
    # padded with a 2 MiB initializer (the load counts every byte it holds)
    import onnx
    m = onnx.load(str(chain.model_path))
    m.graph.initializer.append(onnx.numpy_helper.from_array(np.zeros(2 << 20, np.uint8), "padding"))
    big = h.save_model(m, tmp_path / "padded.onnx")
    p = subprocess.run([str(h.runner_path()), str(big), "--max-memory", "1"], capture_output=True, text=True,
                       timeout=60)
    res = h.RunResult([], p.returncode, p.stdout, p.stderr, None)
    h.assert_clean_error(res)
    assert "1048576" in p.stderr, p.stderr


def test_metadata_lines(chain, tmp_path):
    """--metadata: one line per metadata_props entry in file order, with the value's byte count
    and at most 60 bytes of it, cut between UTF-8 characters; control characters as '.'."""
    import onnx
    m = onnx.ModelProto()
    m.CopyFrom(chain.model)
    long_value = "字" * 30  # 90 bytes: cut at 60 = 20 whole characters
    for k, v in (("character", "a\nb\nc"), ("empty", ""), ("long", long_value)):
        m.metadata_props.add(key=k, value=v)
    path = h.save_model(m, tmp_path / "meta.onnx")
    res = h.run_q8rt(path, {"x": chain.x_npy}, extra=["--metadata"]).assert_ok()
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("metadata ")]
    assert lines == ["metadata character bytes=5: a.b.c", "metadata empty bytes=0: ",
                     "metadata long bytes=90: " + "字" * 20 + "..."]
    plain = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, extra=["--metadata"]).assert_ok()
    assert not any(ln.startswith("metadata ") for ln in plain.stdout.splitlines())


def test_memory_line(chain, tmp_path):
    """--memory: one line with what the model and the session hold, the process's peak RSS
    after load and at the end (the end's is at least the load's: a high-water mark) and its RSS
    at the end (at most the peak)."""
    res = h.run_q8rt(chain.model_path, {"x": chain.x_npy}, tmp_path / "o", extra=["--memory"]).assert_ok()
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("memory ")]
    assert len(lines) == 1, res.stdout
    m = re.fullmatch(r"memory model_bytes=(\d+) session_bytes=(\d+) load_peak_rss_kib=(\d+) peak_rss_kib=(\d+)"
                     r" rss_kib=(\d+)", lines[0])
    assert m, lines[0]
    model, session, load_rss, rss, now = map(int, m.groups())
    # the chain's packed weights and its arena are held, and the process needs more than them
    assert model > 0 and session > 0 and 0 < load_rss <= rss and rss * 1024 > model + session
    assert 0 < now <= rss and now * 1024 > model + session
    h.assert_same_bytes(res.output("y"), chain.y_ref)
    plain = h.run_q8rt(chain.model_path, {"x": chain.x_npy}).assert_ok()
    assert not any(ln.startswith("memory ") for ln in plain.stdout.splitlines())
