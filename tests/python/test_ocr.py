"""OCR end to end (examples/ocr): the C pipeline over q8rt reads rendered pages of known text, and
the same pipeline over ONNX Runtime reads the same text.

- every recognizer model make_models.py builds carries its character list (metadata_props key
  "character", 6623 entries: the 6625 CTC classes minus blank and space), quantized copies too;
- ocr-demo (q8rt; the detector and classifier qop_u8s8_pc, the recognizer qop_u8s8_pc_conv) on
  PAGES rendered pages (examples/ocr/render_page.py: 8-9 lines each, one page with an upside-down
  line, two rotated by up to 3 degrees): character accuracy (1 - edit distance / length, lines
  joined by newlines) at least PAGE_ACCURACY on every page and TOTAL_ACCURACY over all of them;
  the upside-down line must be turned by the classifier;
- the same pipeline (libocr.so through ctypes) with ONNX Runtime as the engine, graph
  optimizations off (every node as written, as q8rt runs them), on ORT_PAGES of those pages (one
  with the upside-down line, one rotated; ORT's unoptimized recognizer is slow): the same lines,
  text and boxes;
- a recognizer without the metadata, or an unreadable image: one clean error line;
- the pipeline's logic on model outputs made by hand (a Python engine): box geometry (minimum-area
  rectangle, unclip, scaling), reading order, the 180-degree turn, CTC decoding, text_score.
The sanitizer build runs ocr-demo on one page (the ctypes part needs the unsanitized libocr.so).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

import q8rt_harness as h

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "ocr"))
import compare  # noqa: E402
import render_page  # noqa: E402

MODELS = Path(os.environ.get("Q8RT_MODELS", REPO / "build" / "models"))
DET = MODELS / "det" / "qop_u8s8_pc.onnx"
CLS = MODELS / "cls" / "qop_u8s8_pc.onnx"
REC = MODELS / "rec" / "qop_u8s8_pc_conv.onnx"
PAGES = 1 if h.is_sanitized_build() else 4
ORT_PAGES = 2
PAGE_ACCURACY = 0.98
TOTAL_ACCURACY = 0.99


def demo_bin() -> Path:
    return h.build_dir() / "examples" / "ocr-demo"


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    for m in (DET, CLS, REC):
        if not m.is_file():
            pytest.fail(f"{m} missing: run make models", pytrace=False)
    d = tmp_path_factory.mktemp("ocr")
    out = []
    for seed in range(PAGES):
        img, lines = render_page.render(seed)
        p = d / f"page{seed}.png"
        img.save(p)
        out.append((seed, p, lines))
    return out


def run_demo(image: Path, json_path: Path, rec: Path = REC) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    args = [str(demo_bin()), str(DET), str(CLS), str(rec), str(image), str(json_path.with_suffix(".out.png")),
            "--json", str(json_path)]
    return subprocess.run(args, capture_output=True, text=True, timeout=600, env=env)


def test_recognizers_carry_character_list():
    recs = sorted((MODELS / "rec").glob("*.onnx"))
    assert REC in recs and len(recs) > 1
    for path in recs:
        meta = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
        assert "character" in meta, f"{path.name} lost the recognizer's character list"
        assert len(meta["character"].split("\n")) == 6623, path.name


@pytest.fixture(scope="module")
def q8rt_results(pages):
    res = {}
    for seed, png, _ in pages:
        j = png.with_suffix(".q8rt.json")
        r = run_demo(png, j)
        assert r.returncode == 0, r.stderr
        assert not any(m in r.stderr for m in h.SANITIZER_MARKERS), r.stderr
        res[seed] = json.loads(j.read_text())
    return res


def test_q8rt_reads_known_text(pages, q8rt_results):
    total_err = total_len = 0
    for seed, _, truth in pages:
        got = [ln["text"] for ln in q8rt_results[seed]["lines"]]
        acc = compare.char_accuracy(got, truth)
        assert acc >= PAGE_ACCURACY, f"page {seed}: accuracy {acc:.4f}\n got {got}\n want {truth}"
        t = "\n".join(truth)
        total_err += compare.edit_distance("\n".join(got), t)
        total_len += len(t)
        for ln in q8rt_results[seed]["lines"]:
            assert 0.5 <= ln["score"] <= 1.0 and len(ln["box"]) == 8
    assert 1 - total_err / total_len >= TOTAL_ACCURACY
    if PAGES > 3:  # page 0 and 3 each print one line upside down
        for seed in (0, 3):
            assert sum(ln["flipped"] for ln in q8rt_results[seed]["lines"]) == 1, f"page {seed}"


@pytest.mark.skipif(h.is_sanitized_build(), reason="ctypes loads the unsanitized libocr.so into Python")
def test_ort_pipeline_gives_same_text(pages, q8rt_results):
    import ocr_ort

    lib = REPO / "build" / "examples" / "libocr.so"
    assert lib.is_file(), "build/examples/libocr.so missing: run make"
    for seed, png, _ in pages[:ORT_PAGES]:
        ort_res = ocr_ort.run(str(lib), [str(DET), str(CLS), str(REC)], str(png), no_opt=True)
        q = q8rt_results[seed]
        assert ort_res["det_input"] == q["det_input"]
        assert [ln["text"] for ln in ort_res["lines"]] == [ln["text"] for ln in q["lines"]], f"page {seed}"
        assert [ln["box"] for ln in ort_res["lines"]] == [ln["box"] for ln in q["lines"]], f"page {seed}"
        assert [ln["flipped"] for ln in ort_res["lines"]] == [ln["flipped"] for ln in q["lines"]]


def test_clean_errors(pages, tmp_path):
    _, png, _ = pages[0]
    r = run_demo(png, tmp_path / "x.json", rec=DET)  # the detector has no character list
    assert r.returncode == 1 and "has no 'character' metadata" in r.stderr, r.stderr
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not a png")
    r = run_demo(bad, tmp_path / "y.json")
    assert r.returncode == 1 and r.stderr.startswith("ocr-demo: error: cannot read"), r.stderr
    assert not any(m in r.stderr for m in h.SANITIZER_MARKERS)


@pytest.mark.skipif(h.is_sanitized_build(), reason="ctypes loads the unsanitized libocr.so into Python")
def test_pipeline_logic_with_fake_engine():
    """ocr.c's pre/post-processing on model outputs made by hand (libocr.so with a Python engine):
    DB boxes (threshold, dilation, minimum-area rectangle, unclip, scaling back), the reading order,
    the classifier's 180-degree turn, CTC decoding (repeats merged, blanks dropped, the space class)
    and the text_score filter."""
    import ctypes as C

    import numpy as np
    import ocr_ort

    lib = ocr_ort.load_lib(str(REPO / "build" / "examples" / "libocr.so"))
    W, H = 200, 100                      # the detector input becomes 192 x 96
    prob = np.zeros((1, 1, 96, 192), np.float32)
    prob[0, 0, 60:71, 40:121] = 0.9      # a text line: after the 2x2 dilation rows 60..71, columns 40..121
    for r in range(12):                  # a diamond (its rectangle is turned 45 degrees)
        prob[0, 0, 10 + r, 150 - r:151 + r] = 0.9
        prob[0, 0, 33 - r, 150 - r:151 + r] = 0.9
    prob[0, 0, 90, 5] = 0.9              # a speck: dropped (shorter side < 3)
    seq = [1, 1, 0, 2, 2, 3, 0, 0, 1, 4]  # a a - b b c - - a space
    state = {"rec_p": 0.9, "cls": [0.05, 0.95]}

    def infer(stage, x):
        if stage == ocr_ort.STAGES.index("det"):
            assert x.shape == (1, 3, 96, 192)
            return prob
        if stage == ocr_ort.STAGES.index("cls"):
            assert x.shape == (1, 3, 48, 192)
            return np.array([state["cls"]], np.float32)
        y = np.full((1, len(seq), 5), 0.01, np.float32)
        for t, c in enumerate(seq):
            y[0, t, c] = state["rec_p"]
        return y

    p = ocr_ort.Pipeline(lib, infer, "a\nb\nc")
    rgb = bytes(W * H * 3)
    try:
        p.run(rgb, W, H, record=False)
        res = p.result("fake", 1)
        assert res["det_input"] == [192, 96]
        assert [ln["text"] for ln in res["lines"]] == ["abca ", "abca "]
        assert all(ln["flipped"] == 1 and abs(ln["score"] - 0.9) < 1e-6 for ln in res["lines"])
        diamond, line = (ln["box"] for ln in res["lines"])  # reading order: the diamond is higher
        # the line: rectangle 81 x 11 (pixel centres 40..121, 60..71), grown by d = area * 1.6 / perimeter
        w, hh = 121 - 40, 71 - 60
        d = w * hh * 1.6 / (2 * (w + hh))
        x0, x1, y0, y1 = 40 - d, 121 + d, 60 - d, 71 + d
        sx, sy = W / 192, H / 96
        want = [np.round(x0 * sx), np.round(y0 * sy), np.round(x1 * sx), np.round(y0 * sy),
                np.round(x1 * sx), np.round(y1 * sy), np.round(x0 * sx), np.round(y1 * sy)]
        assert line == [float(v) for v in want], (line, want)
        corners = list(zip(diamond[0::2], diamond[1::2]))
        for k in range(4):  # a turned rectangle: no side is horizontal or vertical
            (ax, ay), (bx, by) = corners[k], corners[(k + 1) % 4]
            assert ax != bx and ay != by, diamond
        state["cls"] = [0.92, 0.08]
        state["rec_p"] = 0.45             # under text_score 0.5: every line dropped
        p.run(rgb, W, H, record=False)
        assert p.result("fake", 1)["lines"] == []
        state["rec_p"] = 0.8
        p.run(rgb, W, H, record=False)
        assert [ln["flipped"] for ln in p.result("fake", 1)["lines"]] == [0, 0]
        calls = C.c_int()
        a, b = C.c_double(), C.c_double()
        lib.ocr_stage_time(p.p, 2, C.byref(calls), C.byref(a), C.byref(b))
        assert calls.value == 2 and 0 <= a.value <= b.value
    finally:
        p.close()
