"""Fits q8rt_fmath_erf_fast (src/common/fmath.c) and prints it with q8rt_fmath_exp2_16.

erf on [0, 3.92) in 16 pieces, piece i = min(round(4a), 15), t = a - i/4: pieces 1-15 a degree-8
polynomial in t by least squares weighted by 1/erf (relative error) at 2000 Chebyshev nodes of
[-1/8, min(1/8, 3.92 - i/4) + 1e-3]; piece 0 ([0, 1/8]) odd, t (c1 + c3 t^2 + c5 t^4 + c7 t^6).
Reference: math.erf (libm, below 1 ulp). Prints the relative error of each piece on a fine grid.
2^(j/16) by decimal arithmetic, correctly rounded to double. The proof that the fast path gives
the twin's bytes is not this fit but fmath_fast_margin.c (the largest |r_f - r_c| over every
float) and make check-f32-vtranscend. Run: build/venv/bin/python tests/exhaustive/fit_fmath_fast.py
"""
import math
from decimal import Decimal, getcontext

import numpy as np

P = np.polynomial.polynomial
DEG = 8


def nodes(lo, hi, n=2000):
    k = np.arange(n)
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n)


def fit():
    a = nodes(0, 0.125)
    a = a[a > 1e-6]
    q = P.polyfit(a * a, np.array([math.erf(v) for v in a]) / a, 3)
    rows = [[0.0] * (DEG + 1)]
    for j in range(4):
        rows[0][2 * j + 1] = float(q[j])
    for i in range(1, 16):
        c0 = i / 4
        t = nodes(-0.125, min(0.125, 3.92 - c0) + 1e-3)
        y = np.array([math.erf(c0 + v) for v in t])
        rows.append([float(v) for v in P.polyfit(t, y, DEG, w=1 / y)])
    return rows


def main():
    rows = fit()
    for i, row in enumerate(rows):
        c0 = i / 4
        t = np.linspace(0 if i == 0 else -0.125, min(0.125, 3.92 - c0), 20001)[1:]
        p = np.full_like(t, row[DEG])
        for k in range(DEG - 1, -1, -1):
            p = p * t + row[k]
        err = max(abs(pv - math.erf(c0 + tv)) / math.erf(c0 + tv) for pv, tv in zip(p, t))
        print(f"/* piece {i}: relative error 2^{math.log2(err):.1f} */")
    h = lambda v: "0.0" if v == 0 else float.hex(v)
    print("const double q8rt_fmath_erf_fast[9][16] = {")
    for k in range(DEG + 1):
        print("    {" + ", ".join(h(rows[i][k]) for i in range(16)) + "},")
    print("};")
    getcontext().prec = 60
    e = [float.hex(float(Decimal(2) ** (Decimal(j) / 16))) for j in range(16)]
    print("const double q8rt_fmath_exp2_16[16] = {" + ", ".join(e) + "};")


if __name__ == "__main__":
    main()
