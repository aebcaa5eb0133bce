"""QLinearConv parity: q8rt against an exact numpy reference (always byte for byte) and against
ONNX Runtime (byte for byte, except where ORT itself differs from the exact reference: those
cases are counted in build/parity-summary.txt and do not fail the test).

Cases come from gen_parity_models.py; each runs q8rt-run with the default backend (auto) and with
--backend reference; chains also run with --threads 2 and with --repeat 2 (the output of the last
of several runs in one session must be the same).
"""

import os

import numpy as np
import onnx
import pytest

import q8rt_harness as h
from gen_parity_models import build, cases

CASES = cases()


FORCED_BACKENDS = ("avx512", "avx2", "xnnpack")
FORCED_COUNTS: dict = {}  # backend -> [cases run exactly, cases refused]

def test_reference_matches_onnx_test_data():
    """The numpy reference reproduces the expected output of ONNX's own test_qlinearconv."""
    d = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node", "test_qlinearconv",
                     "test_data_set_0")
    ins = [h.load_pb(os.path.join(d, f"input_{i}.pb")) for i in range(8)]
    h.assert_same_bytes(h.qlinearconv_ref(*ins), h.load_pb(os.path.join(d, "output_0.pb")), "reference")


def test_reference_rounds_half_to_even():
    """acc * scale landing exactly on .5 rounds to even, and float32 (not float64) math is used."""
    x = np.array([[[[1, 3, 5, 7]]]], dtype=np.uint8)  # 1x1x1x4
    w = np.array([[[[1]]]], dtype=np.int8)
    y = h.qlinearconv_ref(x, np.float32(0.5), np.uint8(0), w, np.float32(1.0), np.int8(0), np.float32(1.0),
                          np.uint8(10))
    # 0.5, 1.5, 2.5, 3.5 -> 0, 2, 2, 4 (+10)
    assert y.reshape(-1).tolist() == [10, 12, 12, 14]
    # saturation at both ends
    y = h.qlinearconv_ref(np.array([[[[0, 255]]]], np.uint8), np.float32(1.0), np.uint8(128),
                          np.array([[[[127]]]], np.int8), np.float32(1.0), np.int8(0), np.float32(1.0),
                          np.uint8(128))
    assert y.reshape(-1).tolist() == [0, 255]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_parity(case, tmp_path):
    b = build(case)
    ref = b.y_ref
    rec = h.SUMMARY.parity_record(case.name, case.combo if not case.name.startswith("chain") else "chain")
    rec.elements = int(ref.size)
    model_path = h.save_model(b.model, tmp_path / "model.onnx")
    x_path = h.save_npy(tmp_path / "x.npy", b.x)

    # ONNX Runtime first, so its statistics are collected even when q8rt fails.
    try:
        ort_out = h.run_ort(b.model, {"x": b.x})[0]
    except h.OrtRefused as e:
        rec.ort, rec.ort_detail = "refused", str(e)[:160]
        ort_out = None
    else:
        n = h.count_mismatches(ort_out, ref)
        if n == 0:
            rec.ort = "equal"
        else:
            rec.ort, rec.ort_mismatches = "differs", n
            if n > 0:
                d = ort_out.astype(np.int64) - ref.astype(np.int64)
                rec.ort_detail = f"(max |diff| {int(np.abs(d).max())})"
            else:
                rec.ort_detail = f"(dtype/shape {ort_out.dtype}{ort_out.shape} vs {ref.dtype}{ref.shape})"

    runs = [("auto", []), ("reference", ["--backend", "reference"])]
    if case.name.startswith("chain"):
        # several runs of one session (warm-up + 2): intermediates must not clobber the inputs
        runs += [("auto-threads2", ["--threads", "2"]), ("repeat2", ["--repeat", "2"])]
    for label, extra in runs:
        res = h.run_q8rt(model_path, {"x": x_path}, tmp_path / f"out-{label}", extra=extra)
        try:
            res.assert_ok()
            h.assert_same_bytes(res.output("y"), ref, f"q8rt ({label}) vs exact reference")
        except AssertionError as e:
            rec.q8rt = "error" if res.returncode != 0 else "differs"
            rec.q8rt_detail = f"[{label}] " + (res.stderr.strip().splitlines() or [str(e)])[-1][:200] \
                if res.returncode != 0 else f"[{label}] " + str(e).splitlines()[0][:200]
            raise
    # Forced backends: each may refuse a node it cannot run (one clean error line naming why), but
    # whatever it runs must be exact.
    for backend in FORCED_BACKENDS:
        res_b = h.run_q8rt(model_path, {"x": x_path}, tmp_path / f"out-{backend}", extra=["--backend", backend])
        if res_b.returncode != 0:
            h.assert_clean_error(res_b, any_of=("cannot run", "lacks", "not built", "no ", "XNNPACK"))
            FORCED_COUNTS.setdefault(backend, [0, 0])[1] += 1
            continue
        h.assert_same_bytes(res_b.output("y"), ref, f"q8rt (--backend {backend}) vs exact reference")
        FORCED_COUNTS.setdefault(backend, [0, 0])[0] += 1
    rec.q8rt = "equal"
    if ort_out is not None and rec.ort == "equal":
        # Follows from the two checks above; stated for the reader.
        h.assert_same_bytes(res.output("y"), ort_out, "q8rt vs ONNX Runtime")


def test_forced_backends_ran():
    """Every forced backend the CPU supports must have run (and matched) some parity cases."""
    if not FORCED_COUNTS:
        pytest.skip("no parity case ran (deselected)")
    flags = open("/proc/cpuinfo").read().split() if os.path.exists("/proc/cpuinfo") else []
    expect = {"xnnpack": True, "avx2": "avx2" in flags,
              "avx512": all(f in flags for f in ("avx512f", "avx512bw", "avx512vl", "avx512_vnni"))}
    report = ", ".join(f"{b}: {ran} ran, {refused} refused" for b, (ran, refused) in sorted(FORCED_COUNTS.items()))
    print("forced backends:", report)
    for backend, (ran, _refused) in FORCED_COUNTS.items():
        if expect.get(backend):
            assert ran > 0, f"--backend {backend} ran no parity case ({report})"


def test_parity_summary():
    """Runs last in this module: ORT must have agreed with the exact reference on some cases (else
    the reference or the harness is suspect). Prints the counts; conftest writes the summary file."""
    recs = [r for r in h.SUMMARY.parity.values()]
    if not recs:
        pytest.skip("no parity case ran (deselected)")
    ort_ran = [r for r in recs if r.ort in ("equal", "differs")]
    assert ort_ran, "ONNX Runtime ran none of the parity cases"
    equal = [r for r in ort_ran if r.ort == "equal"]
    assert len(equal) >= len(ort_ran) // 2, \
        f"ORT differs from the exact reference in {len(ort_ran) - len(equal)} of {len(ort_ran)} cases"
    print(h.SUMMARY.render())
