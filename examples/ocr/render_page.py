#!/usr/bin/env python3
"""Pages of known text for the OCR demo and its accuracy test.

    python examples/ocr/render_page.py OUT.png [--seed N]     writes OUT.png and OUT.txt (the lines)

A page is a few lines of words and numbers in the DejaVu fonts (Debian's fonts-dejavu-core;
Pillow's default font if missing) at 18 to 34 pixels, dark on a light, slightly noisy
background. One line in three pages is printed upside down (the direction classifier must turn
it), and every other page is rotated by up to 3 degrees (the detector's boxes are then rotated
rectangles). Deterministic per seed. Needs Pillow and NumPy."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONTS = ["DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSans-Bold.ttf", "DejaVuSansMono.ttf", "DejaVuSansCondensed.ttf"]
WORDS = (
    "invoice total amount date quantity price tax receipt order number customer address street city phone "
    "account balance payment due item description unit serial model station platform exit warning open "
    "closed monday friday january october runtime tensor kernel scale layout batch coffee bread water "
    "train ticket window garden letter market winter summer north south"
).split()


def _font(name: str, size: int):
    path = FONT_DIR / name
    return ImageFont.truetype(str(path), size) if path.is_file() else ImageFont.load_default(size=size)


def _line(rng: np.random.Generator) -> str:
    parts = []
    for _ in range(int(rng.integers(2, 5))):
        r = rng.random()
        if r < 0.2:
            parts.append(str(int(rng.integers(10, 99999))))
        elif r < 0.3:
            parts.append(f"{int(rng.integers(1, 999))}.{int(rng.integers(0, 99)):02d}")
        else:
            w = WORDS[int(rng.integers(0, len(WORDS)))]
            parts.append(w.capitalize() if rng.random() < 0.4 else w)
    return " ".join(parts)


def render(seed: int, width: int = 640, height: int = 480) -> tuple[Image.Image, list[str]]:
    rng = np.random.default_rng(7000 + seed)
    base = rng.uniform(205, 250, size=3)
    bg = np.clip(base + rng.normal(0, 4, size=(height, width, 3)), 0, 255).astype(np.uint8)
    page = Image.fromarray(bg, "RGB")
    draw = ImageDraw.Draw(page)
    lines = []
    y = int(rng.integers(16, 40))
    flip_at = int(rng.integers(1, 4)) if seed % 3 == 0 else -1
    while True:
        size = int(rng.integers(18, 35))
        font = _font(FONTS[int(rng.integers(0, len(FONTS)))], size)
        txt = _line(rng)
        l, t, r, b = font.getbbox(txt)
        while r - l > width - 60 and " " in txt:  # too wide: drop the last word
            txt = txt.rsplit(" ", 1)[0]
            l, t, r, b = font.getbbox(txt)
        if y + (b - t) > height - 20:
            break
        x = int(rng.integers(20, max(21, width - (r - l) - 20)))
        color = tuple(int(v) for v in rng.uniform(0, 70, size=3))
        if len(lines) == flip_at:  # upside down, as on a page fed the wrong way round
            tile = Image.new("RGB", (r - l + 8, b - t + 8), tuple(int(v) for v in base))
            ImageDraw.Draw(tile).text((4 - l, 4 - t), txt, fill=color, font=font)
            page.paste(tile.rotate(180), (x - 4, y - 4))
        else:
            draw.text((x - l, y - t), txt, fill=color, font=font)
        lines.append(txt)
        y += (b - t) + int(rng.integers(18, 40))
    if seed % 2 == 1:
        page = page.rotate(float(rng.uniform(-3, 3)), resample=Image.BILINEAR, fillcolor=tuple(int(v) for v in base))
    return page, lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    img, lines = render(args.seed)
    img.save(args.out)
    Path(args.out).with_suffix(".txt").write_text("\n".join(lines) + "\n")
    print(f"render_page: {args.out} ({img.width}x{img.height}), {len(lines)} lines of known text")


if __name__ == "__main__":
    main()
