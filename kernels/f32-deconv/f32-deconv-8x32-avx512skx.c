/* f32-deconv, AVX-512: 8 output channels x 32 input columns of dots in 16 zmm accumulators for the
 * whole channel chain (vmulps then vaddps per channel, the twin's operations in its order); column
 * tails load under masks. The dots are added into y with vaddps at output stride 1, spread onto
 * the even lanes (vpermps) and added under an even-lane mask at stride 2 (the odd outputs are
 * neither read nor written), one by one otherwise. */
#include <immintrin.h>

#include "f32-deconv/f32-deconv.h"

static inline __mmask16 first_lanes(size_t n) { return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u); }

/* y[j * 2] += d[j] for j < n (n <= 16): two vectors of y, the dots on their even lanes */
static inline void add_stride2(float *y, __m512 d, size_t n) {
  const __m512i lo = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  const __m512i hi = _mm512_setr_epi32(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
  const size_t need = 2 * n - 1; /* y elements from the first dot's to the last's */
  const __mmask16 k0 = (__mmask16)(0x5555u & first_lanes(need));
  const __mmask16 k1 = (__mmask16)(0x5555u & (need > 16 ? first_lanes(need - 16) : 0u));
  const __m512 y0 = _mm512_maskz_loadu_ps(k0, y);
  _mm512_mask_storeu_ps(y, k0, _mm512_add_ps(y0, _mm512_permutexvar_ps(lo, d)));
  if (k1 != 0) {
    const __m512 y1 = _mm512_maskz_loadu_ps(k1, y + 16);
    _mm512_mask_storeu_ps(y + 16, k1, _mm512_add_ps(y1, _mm512_permutexvar_ps(hi, d)));
  }
}

/* y[j * y_s] += dots j < n of one output row. Out of line: inlined into the eight unrolled rows of
 * the eight tile sizes it made clang take over ten minutes on this file with AddressSanitizer and
 * UBSan (the fuzz build); one call per row and tile costs nothing beside the channel chain. */
static __attribute__((noinline)) void add_row(float *yr, __m512 d0, __m512 d1, size_t n, size_t y_s) {
  const __mmask16 m0 = first_lanes(n), m1 = n > 16 ? first_lanes(n - 16) : (__mmask16)0;
  if (y_s == 1) {
    _mm512_mask_storeu_ps(yr, m0, _mm512_add_ps(_mm512_maskz_loadu_ps(m0, yr), d0));
    _mm512_mask_storeu_ps(yr + 16, m1, _mm512_add_ps(_mm512_maskz_loadu_ps(m1, yr + 16), d1));
  } else if (y_s == 2) {
    add_stride2(yr, d0, n < 16 ? n : 16);
    if (n > 16) add_stride2(yr + 32, d1, n - 16);
  } else {
    float d[32];
    _mm512_storeu_ps(d, d0);
    _mm512_storeu_ps(d + 16, d1);
    for (size_t j = 0; j < n; j++) yr[j * y_s] = yr[j * y_s] + d[j];
  }
}

static inline __attribute__((always_inline)) void tile(const int mr, size_t n, size_t k, const float *x, size_t x_cs,
                                                       const float *w, size_t w_cs, size_t w_ms, float *y, size_t y_ms,
                                                       size_t y_s) {
  const __mmask16 m0 = first_lanes(n), m1 = n > 16 ? first_lanes(n - 16) : (__mmask16)0;
  __m512 a0[8], a1[8];
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) a0[r] = a1[r] = _mm512_setzero_ps();
  for (size_t c = 0; c < k; c++) {
    const __m512 x0 = _mm512_maskz_loadu_ps(m0, x + c * x_cs), x1 = _mm512_maskz_loadu_ps(m1, x + c * x_cs + 16);
    const float *wc = w + c * w_cs;
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++) {
      const __m512 wv = _mm512_set1_ps(wc[(size_t)r * w_ms]);
      a0[r] = _mm512_add_ps(a0[r], _mm512_mul_ps(x0, wv));
      a1[r] = _mm512_add_ps(a1[r], _mm512_mul_ps(x1, wv));
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) add_row(y + (size_t)r * y_ms, a0[r], a1[r], n, y_s);
}

void q8rt_f32_deconv_ukernel_8x32__avx512skx(size_t m, size_t n, size_t k, const float *x, size_t x_cs, const float *w,
                                             size_t w_cs, size_t w_ms, float *y, size_t y_ms, size_t y_s) {
  for (size_t j = 0; j < n; j += 32) {
    const size_t nc = n - j < 32 ? n - j : 32;
    const float *xj = x + j;
    float *yj = y + j * y_s;
    size_t i = 0;
    for (; i + 8 <= m; i += 8) tile(8, nc, k, xj, x_cs, w + i * w_ms, w_cs, w_ms, yj + i * y_ms, y_ms, y_s);
    const float *wi = w + i * w_ms;
    float *yi = yj + i * y_ms;
    switch (m - i) {
      case 7: tile(7, nc, k, xj, x_cs, wi, w_cs, w_ms, yi, y_ms, y_s); break;
      case 6: tile(6, nc, k, xj, x_cs, wi, w_cs, w_ms, yi, y_ms, y_s); break;
      case 5: tile(5, nc, k, xj, x_cs, wi, w_cs, w_ms, yi, y_ms, y_s); break;
      case 4: tile(4, nc, k, xj, x_cs, wi, w_cs, w_ms, yi, y_ms, y_s); break;
      case 3: tile(3, nc, k, xj, x_cs, wi, w_cs, w_ms, yi, y_ms, y_s); break;
      case 2: tile(2, nc, k, xj, x_cs, wi, w_cs, w_ms, yi, y_ms, y_s); break;
      case 1: tile(1, nc, k, xj, x_cs, wi, w_cs, w_ms, yi, y_ms, y_s); break;
      default: break;
    }
  }
}
