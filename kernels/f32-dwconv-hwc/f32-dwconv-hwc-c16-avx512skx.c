/* f32-dwconv-hwc, AVX-512: a block of 16 channels on the lanes; up to 8 outputs of a row at a time,
 * each tap's weight vector loaded once for them (every load a whole 64-byte pixel: no masks, no
 * lines split). vmulps then vaddps per tap in the twin's order. */
#include <immintrin.h>

#include "f32-dwconv-hwc/f32-dwconv-hwc.h"

static inline __attribute__((always_inline)) void tile(const int nv, size_t kh, size_t kw, size_t s2, size_t d2,
                                                       size_t rstep, const float *x, const float *w, const float *b,
                                                       float *y) {
  __m512 acc[8];
#pragma GCC unroll 8
  for (int v = 0; v < nv; v++) acc[v] = _mm512_setzero_ps();
  for (size_t r = 0; r < kh; r++) {
    const float *xr = x + r * rstep;
    for (size_t t = 0; t < kw; t++, w += 16) {
      const __m512 wv = _mm512_loadu_ps(w);
      const float *xt = xr + t * d2 * 16;
#pragma GCC unroll 8
      for (int v = 0; v < nv; v++) acc[v] = _mm512_add_ps(acc[v], _mm512_mul_ps(_mm512_loadu_ps(xt + v * s2 * 16), wv));
    }
  }
  if (b != NULL) {
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++) acc[v] = _mm512_add_ps(acc[v], _mm512_loadu_ps(b));
  }
#pragma GCC unroll 8
  for (int v = 0; v < nv; v++) _mm512_storeu_ps(y + v * 16, acc[v]);
}

static void tile8(size_t kh, size_t kw, size_t s2, size_t d2, size_t rstep, const float *x, const float *w,
                  const float *b, float *y) {
  tile(8, kh, kw, s2, d2, rstep, x, w, b, y);
}
static void tile4(size_t kh, size_t kw, size_t s2, size_t d2, size_t rstep, const float *x, const float *w,
                  const float *b, float *y) {
  tile(4, kh, kw, s2, d2, rstep, x, w, b, y);
}
static void tile2(size_t kh, size_t kw, size_t s2, size_t d2, size_t rstep, const float *x, const float *w,
                  const float *b, float *y) {
  tile(2, kh, kw, s2, d2, rstep, x, w, b, y);
}
static void tile1(size_t kh, size_t kw, size_t s2, size_t d2, size_t rstep, const float *x, const float *w,
                  const float *b, float *y) {
  tile(1, kh, kw, s2, d2, rstep, x, w, b, y);
}

void q8rt_f32_dwconv_hwc_ukernel_c16__avx512skx(size_t oh, size_t ow, size_t kh, size_t kw, size_t s1, size_t s2,
                                                size_t d1, size_t d2, const float *x, size_t x_rs, const float *w,
                                                const float *b, float *y) {
  const size_t rstep = d1 * x_rs * 16;
  for (size_t o1 = 0; o1 < oh; o1++) {
    const float *xr = x + o1 * s1 * x_rs * 16;
    size_t o2 = 0;
    for (; o2 + 8 <= ow; o2 += 8, y += 8 * 16) tile8(kh, kw, s2, d2, rstep, xr + o2 * s2 * 16, w, b, y);
    if (o2 + 4 <= ow) {
      tile4(kh, kw, s2, d2, rstep, xr + o2 * s2 * 16, w, b, y);
      o2 += 4;
      y += 4 * 16;
    }
    if (o2 + 2 <= ow) {
      tile2(kh, kw, s2, d2, rstep, xr + o2 * s2 * 16, w, b, y);
      o2 += 2;
      y += 2 * 16;
    }
    if (o2 < ow) {
      tile1(kh, kw, s2, d2, rstep, xr + o2 * s2 * 16, w, b, y);
      y += 16;
    }
  }
}
