"""q8rt-bench (examples/bench/q8rt-bench.c): the C conv benchmark that needs no Python.

- on data given with --data (random u8 activations, full-range s8 weights, per-channel scales,
  int32 bias), every implementation's output (q8rt on each backend the CPU and the node allow,
  XNNPACK called directly) must equal the int64 NumPy reference of q8rt_harness byte for byte;
  shapes: dense 3x3 stride 2, depthwise 5x5, grouped 3x3 (XNNPACK only among the fast routes);
- a run of two shapes of the built-in suite writes valid JSON with every output exact, a row per
  backend (n/a with q8rt's reason where the CPU lacks it) and the XNNPACK row;
- bad command lines: one error line, exit status 1.
Short timings (--min-ms 5 --max-ms 20): about 3 s, more under the sanitizers.
"""

import json
import subprocess

import numpy as np
import pytest

import q8rt_harness as h

SHAPES = [  # cin, cout, k, stride, hw, group
    (16, 24, 3, 2, 13, 1),
    (32, 32, 5, 1, 11, 32),
    (16, 32, 3, 1, 9, 4),
]
FAST = ["--min-ms", "5", "--max-ms", "20", "--min-runs", "3"]


def bench_exe():
    exe = h.build_dir() / "q8rt-bench"
    if not exe.exists():
        pytest.fail(f"{exe} missing: run make", pytrace=False)
    return exe


def run(args):
    return subprocess.run([str(bench_exe())] + [str(a) for a in args], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "c{}-{}_k{}s{}_hw{}_g{}".format(*s))
def test_outputs_equal_numpy_reference(shape, tmp_path):
    cin, cout, k, stride, hw, group = shape
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(0, 256, size=(1, cin, hw, hw)).astype(np.uint8)
    w = rng.integers(-127, 128, size=(cout, cin // group, k, k)).astype(np.int8)
    w_scale = rng.uniform(0.002, 0.008, size=cout).astype(np.float32)
    bias = rng.integers(-20000, 20001, size=cout).astype(np.int32)
    x_scale = np.float32(0.02)
    y_scale = np.float32(0.02 * 0.005 * 74 * 73 * np.sqrt(cin // group * k * k) / 40)
    p = h.ConvParams(w=w, w_scale=w_scale, w_zp=np.zeros(cout, np.int8), x_scale=x_scale, x_zp=np.array(128, np.uint8),
                     y_scale=y_scale, y_zp=np.array(128, np.uint8), bias=bias, strides=[stride] * 2,
                     pads=[k // 2] * 4, group=group)
    want = p.reference(x)
    assert len(np.unique(want)) > 50  # the outputs spread over the u8 range: a wrong kernel shows
    for name, a in (("x", x), ("w", w), ("w_scale", w_scale), ("bias", bias)):
        np.save(tmp_path / f"{name}.npy", a)
    (tmp_path / "params.txt").write_text(f"{float(x_scale).hex()} 128 {float(y_scale).hex()} 128\n")
    out = tmp_path / "out"
    r = run(["--conv", ",".join(map(str, shape)), "--data", tmp_path, "--output-dir", out, "--json", tmp_path / "b.json"]
            + FAST)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not any(m in r.stderr for m in h.SANITIZER_MARKERS), r.stderr
    res = json.loads((tmp_path / "b.json").read_text())["shapes"][0]
    ok = [row for row in res["results"] if row["status"] == "ok"]
    names = {row["impl"] for row in ok}
    assert {"q8rt-reference", "q8rt-auto", "xnnpack-direct"} <= names, res["results"]
    if group == 1 or group == cin == cout:  # q8rt's own fast kernels take dense and depthwise convs
        assert "q8rt-avx2" in names or "q8rt-neon" in names, res["results"]
    for row in ok:
        got = np.load(out / res["name"] / f"{row['impl']}.npy")
        assert got.shape == want.shape and np.array_equal(got, want), f"{row['impl']}: " \
            f"{np.count_nonzero(got != want)} of {want.size} outputs differ"
        assert row["mismatches"] == 0 and row["runs"] >= 3 and row["median_ms"] > 0
    for row in res["results"]:
        assert row["status"] in ("ok", "n/a"), row
        if row["status"] == "n/a":
            assert row["reason"], row


def test_builtin_suite_json():
    r = run(["dw3x3s2_144_56", "1x1_144-32_28", "--json", "-"] + FAST)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "q8rt-bench: 2 shapes, every output exact" in r.stderr
    doc = json.loads(r.stdout)
    assert doc["failures"] == 0 and [s["name"] for s in doc["shapes"]] == ["dw3x3s2_144_56", "1x1_144-32_28"]
    for s in doc["shapes"]:
        impls = [row["impl"] for row in s["results"]]
        assert impls == ["q8rt-reference", "q8rt-auto", "q8rt-avx2", "q8rt-avx512", "q8rt-neon", "q8rt-xnnpack",
                         "xnnpack-direct"]
        for row in s["results"]:
            assert row["status"] in ("ok", "n/a") and (row["status"] == "n/a") == (row["mismatches"] < 0)
            if row["status"] == "n/a":
                assert "cannot run" in row["reason"] or "lacks" in row["reason"], row


@pytest.mark.parametrize("args, message", [
    (["no_such_shape"], "unknown shape 'no_such_shape'"),
    (["--conv", "3,4"], "--conv expects CIN,COUT,K,STRIDE,HW[,GROUP]"),
    (["--conv", "6,4,3,1,8,4"], "channels not divisible by the group"),
    (["--threads", "0"], "--threads: expected an integer"),
    (["--bogus", "1"], "unknown option --bogus"),
])
def test_bad_command_lines(args, message):
    r = run(args)
    assert r.returncode == 1 and r.stderr.startswith("q8rt-bench: error: ") and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_bench_py_keeps_each_implementations_best_round():
    """bench.py's whole-model rounds: the lowest median wins, a failed or inexact round is the one
    reported, and every round's median is kept."""
    import importlib.util
    import sys
    from pathlib import Path
    spec = importlib.util.spec_from_file_location(
        "q8rt_bench_py", Path(__file__).resolve().parents[2] / "examples" / "bench" / "bench.py")
    b = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = b  # dataclasses look their module up there
    spec.loader.exec_module(b)

    def meas(impl, ms, status="ok", mismatches=0):
        return b.Meas(impl, impl, status=status, median_ms=ms, mismatches=mismatches)

    r1 = [meas("q8rt-2t", 5.9), meas("ort-1t", 10.0), meas("ov-1t", None, status="n/a")]
    r2 = [meas("q8rt-2t", 3.4), meas("ort-1t", 11.0, mismatches=3), meas("ov-1t", None, status="n/a")]
    got = {m.impl: m for m in b.merge_rounds([r1, r2])}
    assert list(got) == ["q8rt-2t", "ort-1t", "ov-1t"]
    assert got["q8rt-2t"].median_ms == 3.4 and got["q8rt-2t"].round_medians_ms == [5.9, 3.4]
    assert got["ort-1t"].mismatches == 3 and got["ort-1t"].round_medians_ms == [10.0, 11.0]
    assert got["ov-1t"].status == "n/a" and got["ov-1t"].round_medians_ms == []
    # q8rt-run's run_stats line (2+ threads) is parsed and kept per round
    out = "latency_ms median=3.400 min=3.1 runs=9\nrun_stats shared=7 alone=2 contended=0 regions=350 " \
          "solo_regions=3 unhelped_regions=12 solo_stretches=1 wait_ms=0.512\n"
    st = b.parse_run_stats(out)
    assert st == {"shared": 7, "alone": 2, "contended": 0, "regions": 350, "solo_regions": 3,
                  "unhelped_regions": 12, "solo_stretches": 1, "wait_ms": 0.512}
    assert b.parse_run_stats("latency_ms median=3.4 min=3.1 runs=9\n") is None
    r1[0].run_stats, r2[0].run_stats = {"shared": 1, "alone": 8}, st
    got = {m.impl: m for m in b.merge_rounds([r1, r2])}
    assert got["q8rt-2t"].round_run_stats == [{"shared": 1, "alone": 8}, st] and got["q8rt-2t"].run_stats == st
    assert b.fmt_modes(got["q8rt-2t"]) == "1/8 7/2"


def test_bench_py_rounds_are_passes_over_the_models(capsys):
    """bench.py's whole-model rounds run as passes over the model list (round 1 of every model,
    then round 2 of every model), so that a spell of host load lasting minutes slows one round of
    the models measured during it, not all of them; each implementation still keeps its best round,
    a model whose files are missing is skipped once, and a core latency probe runs before each
    model's round."""
    import importlib.util
    import sys
    from pathlib import Path
    spec = importlib.util.spec_from_file_location(
        "q8rt_bench_py", Path(__file__).resolve().parents[2] / "examples" / "bench" / "bench.py")
    b = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = b
    spec.loader.exec_module(b)

    ems = [b.E2EModel(name, name, lambda d: (d, {})) for name in ("det-a", "gone", "rec-b")]
    calls, done = [], []
    times = {("det-a", 1): 5.0, ("det-a", 2): 3.0, ("rec-b", 1): 4.0, ("rec-b", 2): 6.0}

    def once(em):
        calls.append(em.name)
        if em.name == "gone":
            raise FileNotFoundError("no model")
        r = sum(1 for c in calls if c == em.name)
        return [b.Meas("q8rt-2t", "q8rt-2t", median_ms=times[(em.name, r)])]

    probes = iter([60.0, None, 300.0, 61.0, 62.0])
    rtts = {}
    got = b.bench_models(ems, Path("/nonexistent"), b.QUICK, 2, once=once,
                         done=lambda em, res: done.append((em.name, res[0].median_ms)),
                         rtt=lambda: next(probes), rtts=rtts)
    assert calls == ["det-a", "gone", "rec-b", "det-a", "rec-b"]
    assert rtts == {"det-a": [60.0, 61.0], "rec-b": [300.0, 62.0]}
    assert done == [("det-a", 3.0), ("rec-b", 4.0)]
    assert list(got) == ["det-a", "rec-b"]
    assert got["det-a"][0].round_medians_ms == [5.0, 3.0] and got["rec-b"][0].round_medians_ms == [4.0, 6.0]
    out = capsys.readouterr().out
    assert out.count("gone: skipped") == 1 and "model det-a: round 1/2" in out and "round trip 300 ns" in out


def test_q8rt_bench_core_latency():
    """q8rt-bench --core-latency: one 'core_rtt_ns min=.. median=.. cpus=a,b' line on two CPUs, a
    one-line error on one CPU."""
    import os
    import re
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs")
    r = subprocess.run([str(bench_exe()), "--core-latency"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    m = re.fullmatch(r"core_rtt_ns min=(\d+) median=(\d+) cpus=(\d+),(\d+)\n", r.stdout)
    assert m and 0 < int(m.group(1)) <= int(m.group(2)), r.stdout
    assert [int(m.group(3)), int(m.group(4))] == cpus[:2]
    r = subprocess.run(["taskset", "-c", str(cpus[0]), str(bench_exe()), "--core-latency"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.startswith("q8rt-bench: error: core latency: needs two CPUs"), r.stderr
