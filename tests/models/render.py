#!/usr/bin/env python3
"""Deterministic synthetic text images for the PP-OCR models, with rapidocr's preprocessing.

Calibration and test inputs for tests/models/make_models.py are rendered here rather than shipped:
text in DejaVu fonts (Debian's fonts-dejavu-core; Pillow's bundled default font if it is missing)
on varied backgrounds (flat, gradients, noise, stripes, paper-like blotches), from a seeded
numpy Generator, so the same seed gives the same pixels on every machine with the same Pillow.

Images are produced as HxWx3 uint8 in BGR order, because rapidocr_onnxruntime 1.4.4 feeds the
models BGR images (cv2.imread / LoadImage converts everything to BGR). The preprocessing mirrors
rapidocr_onnxruntime 1.4.4:

- det (ch_PP-OCRv4_det_infer, ch_ppocr_det/utils.py DetPreProcess): resize so both sides are
  multiples of 32 (rapidocr uses limit_type "min", limit_side_len 736; here limit_type "max" with
  a small limit keeps CI fast: same code path, another config value), then
  (x/255 - mean)/std with mean = std = [0.5, 0.5, 0.5] (config.yaml Det.mean/std; NOT ImageNet),
  HWC->CHW, add batch dim -> 1x3xHxW float32.
- rec (ch_PP-OCRv4_rec_infer, ch_ppocr_rec/text_recognize.py resize_norm_img): resize to height 48
  keeping aspect (width ceil(48*w/h), capped at 320), /255, -0.5, /0.5, zero-pad on the right to
  width 320 -> 1x3x48x320.
- cls (ch_ppocr_mobile_v2.0_cls_infer, ch_ppocr_cls/text_cls.py resize_norm_img): the same with
  3x48x192 -> 1x3x48x192.

rapidocr resizes with cv2.resize (INTER_LINEAR); cv2 is not a dependency here, so Pillow's
BILINEAR is used. Pixels differ slightly from cv2's, which does not matter for calibration or
parity (the runtime is fed the preprocessed tensor).

CLI (for looking at the images):  python tests/models/render.py --out DIR [--count N]
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONT_FILES = [
    "DejaVuSans.ttf",
    "DejaVuSans-Bold.ttf",
    "DejaVuSerif.ttf",
    "DejaVuSansMono.ttf",
    "DejaVuSans-Oblique.ttf",
    "DejaVuSerif-Bold.ttf",
    "DejaVuSansCondensed.ttf",
]

WORDS = (
    "invoice total amount date quantity price tax receipt order number customer address street "
    "city phone email account balance payment due item description unit ref code serial model "
    "station platform exit entrance warning caution open closed monday friday january october "
    "q8rt int8 runtime onnx tensor kernel conv scale zero point layout batch"
).split()

DET_SHAPE = (256, 384)  # H, W after DetPreProcess (multiples of 32); non-square on purpose
DET_LIMIT_SIDE = 384  # limit_type "max"
DET_RENDER = (288, 432)  # rendered page size before resize -> 256x384
REC_SHAPE = (3, 48, 320)  # rapidocr config.yaml Rec.rec_img_shape
CLS_SHAPE = (3, 48, 192)  # rapidocr config.yaml Cls.cls_image_shape

_font_cache: dict[tuple[str, int], ImageFont.ImageFont] = {}


def fonts_available() -> bool:
    return all((FONT_DIR / f).is_file() for f in FONT_FILES)


def _font(index: int, size: int):
    name = FONT_FILES[index % len(FONT_FILES)]
    key = (name, size)
    if key not in _font_cache:
        path = FONT_DIR / name
        if path.is_file():
            _font_cache[key] = ImageFont.truetype(str(path), size)
        else:  # Pillow >= 10.1 bundles a scalable default font
            _font_cache[key] = ImageFont.load_default(size=size)
    return _font_cache[key]


def _text(rng: np.random.Generator, min_words: int = 1, max_words: int = 4) -> str:
    n = int(rng.integers(min_words, max_words + 1))
    parts = []
    for _ in range(n):
        r = rng.random()
        if r < 0.2:
            parts.append(str(int(rng.integers(0, 100000))))
        elif r < 0.3:
            parts.append(f"{rng.integers(0, 999)}.{rng.integers(0, 99):02d}")
        else:
            w = WORDS[int(rng.integers(0, len(WORDS)))]
            c = rng.random()
            parts.append(w.upper() if c < 0.2 else w.capitalize() if c < 0.5 else w)
    return " ".join(parts)


def _background(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """HxWx3 float32 RGB in [0, 255]."""
    kind = int(rng.integers(0, 5))
    base = rng.uniform(120, 255, size=3)
    if rng.random() < 0.25:  # dark background (light text)
        base = rng.uniform(0, 90, size=3)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.broadcast_to(base.astype(np.float32), (h, w, 3)).copy()
    if kind == 1:  # linear gradient
        other = np.clip(base + rng.uniform(-80, 80, size=3), 0, 255)
        ang = rng.uniform(0, 2 * math.pi)
        t = (xx * math.cos(ang) + yy * math.sin(ang))
        t = (t - t.min()) / max(float(t.max() - t.min()), 1.0)
        img = base[None, None, :] * (1 - t[..., None]) + other[None, None, :] * t[..., None]
    elif kind == 2:  # gaussian noise
        img += rng.normal(0, rng.uniform(5, 25), size=(h, w, 3))
    elif kind == 3:  # stripes / ruled paper
        period = rng.uniform(8, 40)
        amp = rng.uniform(10, 50)
        img += (amp * (np.sin(yy * 2 * math.pi / period) > 0.9))[..., None] * -1
    elif kind == 4:  # low-frequency blotches
        small = rng.uniform(-40, 40, size=(max(h // 32, 2), max(w // 32, 2), 3)).astype(np.float32)
        up = np.asarray(Image.fromarray(np.uint8(small + 128)).resize((w, h), Image.BILINEAR), np.float32) - 128
        img += up
    return np.clip(img, 0, 255).astype(np.float32)


def _text_color(rng: np.random.Generator, bg_mean: float) -> tuple[int, int, int]:
    if bg_mean > 110:
        c = rng.uniform(0, 90, size=3)
    else:
        c = rng.uniform(170, 255, size=3)
    return tuple(int(v) for v in c)


def _to_bgr(rgb: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(rgb[..., ::-1])


def render_page(rng: np.random.Generator, h: int = DET_RENDER[0], w: int = DET_RENDER[1]) -> np.ndarray:
    """A document-like page with several text lines; HxWx3 uint8 BGR."""
    bg = _background(rng, h, w)
    img = Image.fromarray(np.uint8(bg), "RGB")
    draw = ImageDraw.Draw(img)
    y = int(rng.integers(4, 20))
    while y < h - 16:
        size = int(rng.integers(12, 34))
        font = _font(int(rng.integers(0, len(FONT_FILES))), size)
        x = int(rng.integers(4, max(5, w // 3)))
        txt = _text(rng, 1, 5)
        color = _text_color(rng, float(bg[min(y, h - 1), min(x, w - 1)].mean()))
        if rng.random() < 0.85:
            draw.text((x, y), txt, fill=color, font=font)
        y += size + int(rng.integers(2, 24))
    if rng.random() < 0.3:
        img = img.filter(ImageFilter.GaussianBlur(radius=float(rng.uniform(0.3, 1.0))))
    if rng.random() < 0.4:  # a slight rotation, as from a phone photo
        fill = tuple(int(v) for v in bg[0, 0])
        img = img.rotate(float(rng.uniform(-4, 4)), resample=Image.BILINEAR, fillcolor=fill)
    return _to_bgr(np.asarray(img, np.uint8))


def render_line(rng: np.random.Generator, rotate180: bool = False, max_ratio: float | None = None) -> np.ndarray:
    """A cropped single text line, as the detector would hand it to cls/rec; HxWx3 uint8 BGR."""
    size = int(rng.integers(20, 44))
    font = _font(int(rng.integers(0, len(FONT_FILES))), size)
    for _ in range(8):
        txt = _text(rng, 1, 3)
        l, t, r, b = font.getbbox(txt)
        pad_x, pad_y = int(rng.integers(2, 12)), int(rng.integers(2, 10))
        w, h = (r - l) + 2 * pad_x, (b - t) + 2 * pad_y
        if max_ratio is None or w / h <= max_ratio:
            break
        # too long: drop words until it fits
    bg = _background(rng, h, w)
    img = Image.fromarray(np.uint8(bg), "RGB")
    draw = ImageDraw.Draw(img)
    color = _text_color(rng, float(bg.mean()))
    draw.text((pad_x - l, pad_y - t), txt, fill=color, font=font)
    if max_ratio is not None and w / h > max_ratio:  # still too long: crop (as a tight box would)
        img = img.crop((0, 0, int(h * max_ratio), h))
    if rng.random() < 0.25:
        img = img.filter(ImageFilter.GaussianBlur(radius=float(rng.uniform(0.3, 0.9))))
    if rotate180:
        img = img.rotate(180)
    return _to_bgr(np.asarray(img, np.uint8))


# ---------------------------------------------------------------- preprocessing (rapidocr 1.4.4)

def _resize(img: np.ndarray, w: int, h: int) -> np.ndarray:
    return np.asarray(Image.fromarray(img).resize((w, h), Image.BILINEAR), np.uint8)


def det_preprocess(img: np.ndarray, limit_side_len: int = DET_LIMIT_SIDE, limit_type: str = "max") -> np.ndarray:
    """ch_ppocr_det/utils.py DetPreProcess: resize to multiples of 32, (x/255-0.5)/0.5, CHW, batch."""
    h, w = img.shape[:2]
    if limit_type == "max":
        ratio = float(limit_side_len) / max(h, w) if max(h, w) > limit_side_len else 1.0
    else:
        ratio = float(limit_side_len) / min(h, w) if min(h, w) < limit_side_len else 1.0
    rh, rw = int(h * ratio), int(w * ratio)
    rh, rw = int(round(rh / 32) * 32), int(round(rw / 32) * 32)
    img = _resize(img, rw, rh)
    mean = np.array([0.5, 0.5, 0.5])
    std = np.array([0.5, 0.5, 0.5])
    x = (img.astype("float32") * (1 / 255.0) - mean) / std
    return np.expand_dims(x.transpose((2, 0, 1)), 0).astype(np.float32)


def _resize_norm_pad(img: np.ndarray, shape: tuple[int, int, int]) -> np.ndarray:
    """ch_ppocr_cls/text_cls.py and ch_ppocr_rec/text_recognize.py resize_norm_img (one image,
    max_wh_ratio = W/H of the target shape, which is what rapidocr uses for a lone crop that is
    not wider than that)."""
    c, ih, iw = shape
    h, w = img.shape[:2]
    ratio = w / float(h)
    rw = iw if math.ceil(ih * ratio) > iw else int(math.ceil(ih * ratio))
    x = _resize(img, rw, ih).astype("float32")
    x = x.transpose((2, 0, 1)) / 255
    x -= 0.5
    x /= 0.5
    out = np.zeros((c, ih, iw), dtype=np.float32)
    out[:, :, :rw] = x
    return out[None]


def rec_preprocess(img: np.ndarray) -> np.ndarray:
    return _resize_norm_pad(img, REC_SHAPE)


def cls_preprocess(img: np.ndarray) -> np.ndarray:
    return _resize_norm_pad(img, CLS_SHAPE)


# ---------------------------------------------------------------- model inputs

def _rng(kind: str, index: int) -> np.random.Generator:
    seed = {"det": 1000, "rec": 2000, "cls": 3000}[kind] + index
    return np.random.default_rng(seed)


def raw_image(kind: str, index: int) -> np.ndarray:
    """The un-preprocessed BGR image number `index` for model `kind` (det, rec or cls)."""
    rng = _rng(kind, index)
    if kind == "det":
        return render_page(rng)
    if kind == "rec":
        return render_line(rng, max_ratio=REC_SHAPE[2] / REC_SHAPE[1])
    if kind == "cls":
        return render_line(rng, rotate180=bool(index % 2), max_ratio=CLS_SHAPE[2] / CLS_SHAPE[1] * 1.6)
    raise ValueError(kind)


def model_input(kind: str, index: int) -> np.ndarray:
    """Preprocessed float32 NCHW input number `index` for model `kind`. Index 0 is the sample input
    (build/models/<model>/input.npy); calibration uses indices 1..N."""
    img = raw_image(kind, index)
    return {"det": det_preprocess, "rec": rec_preprocess, "cls": cls_preprocess}[kind](img)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="build/models/images")
    ap.add_argument("--count", type=int, default=4)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if not fonts_available():
        print("render: DejaVu fonts not found, using Pillow's default font")
    for kind in ("det", "rec", "cls"):
        for i in range(args.count):
            img = raw_image(kind, i)
            Image.fromarray(img[..., ::-1]).save(os.path.join(args.out, f"{kind}_{i}.png"))
            x = model_input(kind, i)
            print(f"{kind}_{i}: raw {img.shape} -> input {x.shape} range [{x.min():.2f}, {x.max():.2f}]")


if __name__ == "__main__":
    main()
