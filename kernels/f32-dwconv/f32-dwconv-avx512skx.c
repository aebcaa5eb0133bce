/* f32-dwconv, AVX-512: 16 outputs per vector. Vectors whose taps all fall inside the row (the
 * interior) run four at a time so the add chains overlap (a row's last 17..63 as one block of
 * 2..4, the last vector short); the others (row edges, the tail) load
 * under per-tap column masks and add only on the lanes whose tap is inside (vaddps under a mask:
 * a padded tap is skipped, not added as 0 * w, which is NaN for an infinite w). Stride 2 loads 32
 * neighbouring columns and keeps the even ones (vpermt2ps). Each tap is vmulps then vaddps, the
 * twin's rounded product and add in its order. Strides above 2, kernels wider than 16, and rows
 * whose column arithmetic would not fit int32 lanes run the twin. */
#include <immintrin.h>
#include <stdint.h>

#include "f32-dwconv/f32-dwconv.h"

#define EDGE_TAPS 16 /* wider kernels run the twin */

static inline __attribute__((always_inline)) __m512 load_cols(const float *p, const size_t s, __mmask16 ka,
                                                              __mmask16 kb, __m512i even) {
  if (s == 1) return _mm512_maskz_loadu_ps(ka, p);
  return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(ka, p), even, _mm512_maskz_loadu_ps(kb, p + 16));
}

/* nv interior vectors at once (the last one m <= 16 lanes): the add chains of a row's last 17..63
 * interior outputs overlap, where one or two vectors at a time waited on each add's latency
 * (PP-LCNet's 14x14 planes run 252 flat outputs: three blocks of four, then 60). */
static inline __attribute__((always_inline)) void block(const size_t s, const int nv, size_t m, size_t rows, size_t kw,
                                                        size_t d, const float *x, size_t x_rs, const float *w, float *y,
                                                        __m512i even) {
  const __mmask16 all = (__mmask16)0xffff, full_b = s == 1 ? (__mmask16)0 : (__mmask16)0x7fff;
  const __mmask16 ym = m >= 16 ? all : (__mmask16)((1u << m) - 1u);
  const size_t need = s == 1 ? m : 2 * m - 1;
  const __mmask16 ka = need >= 16 ? all : (__mmask16)((1u << need) - 1u);
  const __mmask16 kb = need > 16 ? (__mmask16)((1u << (need - 16)) - 1u) : (__mmask16)0;
  __m512 acc[4];
#pragma GCC unroll 4
  for (int v = 0; v < nv; v++)
    acc[v] = v < nv - 1 ? _mm512_loadu_ps(y + 16 * v) : _mm512_maskz_loadu_ps(ym, y + 16 * v);
  for (size_t r = 0; r < rows; r++) {
    const float *xr = x + r * x_rs, *wr = w + r * kw;
    for (size_t t = 0; t < kw; t++) {
      const __m512 wv = _mm512_set1_ps(wr[t]);
#pragma GCC unroll 4
      for (int v = 0; v < nv; v++) {
        const __m512 xv = v < nv - 1 ? load_cols(xr + t * d + 16 * (size_t)v * s, s, all, full_b, even)
                                     : load_cols(xr + t * d + 16 * (size_t)v * s, s, ka, kb, even);
        acc[v] = _mm512_add_ps(acc[v], _mm512_mul_ps(xv, wv));
      }
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < nv; v++) {
    if (v < nv - 1) {
      _mm512_storeu_ps(y + 16 * v, acc[v]);
    } else {
      _mm512_mask_storeu_ps(y + 16 * v, ym, acc[v]);
    }
  }
}

static inline __attribute__((always_inline)) void row(const size_t s, size_t n, size_t lo, size_t hi, size_t rows,
                                                      size_t kw, size_t d, size_t pad, size_t in_w, const float *x,
                                                      size_t x_rs, const float *w, float *y) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i j0 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i j1 = _mm512_add_epi32(j0, _mm512_set1_epi32(16));
  const __m512i lane_col = _mm512_mullo_epi32(j0, _mm512_set1_epi32((int)s)); /* lane * s */
  const __m512i width = _mm512_set1_epi32((int)in_w);
  const __mmask16 all = (__mmask16)0xffff, full_b = s == 1 ? (__mmask16)0 : (__mmask16)0x7fff;
  size_t o = 0;
  while (o < n) {
    if (o >= lo && o + 64 <= hi) { /* four interior vectors: the add latency hidden */
      __m512 a0 = _mm512_loadu_ps(y + o), a1 = _mm512_loadu_ps(y + o + 16);
      __m512 a2 = _mm512_loadu_ps(y + o + 32), a3 = _mm512_loadu_ps(y + o + 48);
      for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * x_rs + o * s - pad, *wr = w + r * kw;
        for (size_t t = 0; t < kw; t++) {
          const __m512 wv = _mm512_set1_ps(wr[t]);
          a0 = _mm512_add_ps(a0, _mm512_mul_ps(load_cols(xr + t * d, s, all, full_b, even), wv));
          a1 = _mm512_add_ps(a1, _mm512_mul_ps(load_cols(xr + t * d + 16 * s, s, all, full_b, even), wv));
          a2 = _mm512_add_ps(a2, _mm512_mul_ps(load_cols(xr + t * d + 32 * s, s, all, full_b, even), wv));
          a3 = _mm512_add_ps(a3, _mm512_mul_ps(load_cols(xr + t * d + 48 * s, s, all, full_b, even), wv));
        }
      }
      _mm512_storeu_ps(y + o, a0);
      _mm512_storeu_ps(y + o + 16, a1);
      _mm512_storeu_ps(y + o + 32, a2);
      _mm512_storeu_ps(y + o + 48, a3);
      o += 64;
      continue;
    }
    if (o >= lo && o + 16 < hi) { /* the last 17..63 interior outputs: 2..4 vectors, the last one short */
      const size_t r = hi - o, nv = (r + 15) / 16, m = r - 16 * (nv - 1);
      const float *xo = x + o * s - pad;
      if (nv == 2) {
        block(s, 2, m, rows, kw, d, xo, x_rs, w, y + o, even);
      } else if (nv == 3) {
        block(s, 3, m, rows, kw, d, xo, x_rs, w, y + o, even);
      } else {
        block(s, 4, m, rows, kw, d, xo, x_rs, w, y + o, even);
      }
      o = hi;
      continue;
    }
    const size_t m = n - o < 16 ? n - o : 16;
    const __mmask16 ym = m >= 16 ? all : (__mmask16)((1u << m) - 1u);
    __m512 a0 = _mm512_maskz_loadu_ps(ym, y + o);
    if (o >= lo && o + m <= hi) { /* one interior vector, maybe short */
      const size_t need = s == 1 ? m : 2 * m - 1;
      const __mmask16 ka = need >= 16 ? all : (__mmask16)((1u << need) - 1u);
      const __mmask16 kb = need > 16 ? (__mmask16)((1u << (need - 16)) - 1u) : (__mmask16)0;
      for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * x_rs + o * s - pad, *wr = w + r * kw;
        for (size_t t = 0; t < kw; t++) {
          a0 = _mm512_add_ps(a0, _mm512_mul_ps(load_cols(xr + t * d, s, ka, kb, even), _mm512_set1_ps(wr[t])));
        }
      }
    } else { /* an edge: columns checked per tap, the masks computed once for all rows */
      const __m512i last = _mm512_set1_epi32((int)(s * (m - 1))); /* the last column the lanes need */
      __mmask16 ka[EDGE_TAPS], kb[EDGE_TAPS], add[EDGE_TAPS];
      for (size_t t = 0; t < kw; t++) {
        const __m512i b = _mm512_set1_epi32((int)((ptrdiff_t)(o * s + t * d) - (ptrdiff_t)pad)); /* lane 0's */
        const __m512i cl = _mm512_add_epi32(b, lane_col), c0 = _mm512_add_epi32(b, j0);
        add[t] = ym & _mm512_cmpge_epi32_mask(cl, _mm512_setzero_si512()) & _mm512_cmplt_epi32_mask(cl, width);
        ka[t] = _mm512_cmpge_epi32_mask(c0, _mm512_setzero_si512()) & _mm512_cmplt_epi32_mask(c0, width) &
                _mm512_cmple_epi32_mask(j0, last);
        kb[t] = 0;
        if (s != 1) {
          const __m512i c1 = _mm512_add_epi32(b, j1);
          kb[t] = _mm512_cmpge_epi32_mask(c1, _mm512_setzero_si512()) & _mm512_cmplt_epi32_mask(c1, width) &
                  _mm512_cmple_epi32_mask(j1, last);
        }
      }
      for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * x_rs, *wr = w + r * kw;
        for (size_t t = 0; t < kw; t++) {
          if (add[t] == 0) continue;
          /* the masked-off lanes of a load are not read (the column may be negative) */
          const __m512 v = load_cols(xr + ((ptrdiff_t)(o * s + t * d) - (ptrdiff_t)pad), s, ka[t], kb[t], even);
          a0 = _mm512_mask_add_ps(a0, add[t], a0, _mm512_mul_ps(v, _mm512_set1_ps(wr[t])));
        }
      }
    }
    _mm512_mask_storeu_ps(y + o, ym, a0);
    o += m;
  }
}

void q8rt_f32_dwconv_ukernel__avx512skx(size_t n, size_t rows, size_t kw, size_t s, size_t d, size_t pad, size_t in_w,
                                        const float *x, size_t x_rs, const float *w, float *y) {
  /* every column a lane computes, lane 0's minus pad up to the last output's last tap, in int32 */
  const size_t reach = (n + 16) * s + (kw ? kw - 1 : 0) * d;
  if (s > 2 || kw == 0 || kw > EDGE_TAPS || reach > INT32_MAX || pad > INT32_MAX || in_w > INT32_MAX) {
    q8rt_f32_dwconv_ukernel__scalar(n, rows, kw, s, d, pad, in_w, x, x_rs, w, y);
    return;
  }
  size_t lo, hi;
  q8rt_f32_dwconv_interior(n, kw, s, d, pad, in_w, &lo, &hi);
  if (s == 1) {
    row(1, n, lo, hi, rows, kw, d, pad, in_w, x, x_rs, w, y);
  } else {
    row(2, n, lo, hi, rows, kw, d, pad, in_w, x, x_rs, w, y);
  }
}
