#!/usr/bin/env python3
"""Compare the OCR results of q8rt (ocr-demo --json) and ONNX Runtime (ocr_ort.py --json).

    python examples/ocr/compare.py Q8RT.json ORT.json [TRUTH.txt]

Prints the latency per stage side by side (model time and whole stage, medians), whether both
engines read the same text, and with TRUTH.txt (one line of the page per line, in reading order)
each engine's character accuracy: 1 - edit distance / length of the truth, over the page's lines
joined by newlines."""

from __future__ import annotations

import json
import sys


def edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def char_accuracy(lines: list[str], truth: list[str]) -> float:
    t = "\n".join(truth)
    return 1.0 - edit_distance("\n".join(lines), t) / max(len(t), 1)


def main() -> None:
    q8, ort = (json.load(open(p)) for p in sys.argv[1:3])
    truth = open(sys.argv[3]).read().splitlines() if len(sys.argv) > 3 else None
    print(f"\nlatency per stage, median of {q8['runs']} runs, {q8['threads']} thread(s), ms "
          f"(model = inside the engine; stage = with pre/post-processing):")
    print(f"  {'stage':<6} {'calls':>5} {'q8rt model':>11} {'ORT model':>10} {'ORT/q8rt':>9} "
          f"{'q8rt stage':>11} {'ORT stage':>10}")
    tq = to = 0.0
    for s in ("det", "cls", "rec"):
        a, b = q8["stages"][s], ort["stages"][s]
        tq += a["stage_ms"]
        to += b["stage_ms"]
        ratio = b["model_ms"] / a["model_ms"] if a["model_ms"] > 0 else float("nan")
        print(f"  {s:<6} {a['calls']:5d} {a['model_ms']:11.2f} {b['model_ms']:10.2f} {ratio:8.2f}x "
              f"{a['stage_ms']:11.2f} {b['stage_ms']:10.2f}")
    print(f"  {'total':<6} {'':5} {'':11} {'':10} {to / tq:8.2f}x {tq:11.2f} {to:10.2f}")
    print(f"  ({q8['engine']} vs {ort['engine']}; ORT/q8rt > 1 means q8rt is faster)")
    a = [ln["text"] for ln in q8["lines"]]
    b = [ln["text"] for ln in ort["lines"]]
    same = a == b
    print(f"same text from both engines: {'yes' if same else 'NO'} ({len(a)} and {len(b)} lines)")
    if not same:
        for i in range(max(len(a), len(b))):
            x = a[i] if i < len(a) else "-"
            y = b[i] if i < len(b) else "-"
            if x != y:
                print(f"  line {i + 1}: q8rt {x!r}  ORT {y!r}")
    if truth is not None:
        print(f"character accuracy against the rendered text ({sum(map(len, truth))} characters, "
              f"{len(truth)} lines): q8rt {char_accuracy(a, truth):.4f}, ORT {char_accuracy(b, truth):.4f}")


if __name__ == "__main__":
    main()
