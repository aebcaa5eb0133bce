/* f32-dwconv, AVX2: 8 outputs per vector over the row's interior (every tap inside the row), four
 * (then two) vectors at a time so the add chains overlap; stride 2 loads 16 neighbouring columns and keeps
 * the even ones (vshufps + vpermpd), only while a further interior output guarantees the 16th
 * column is inside the row. Each tap is vmulps then vaddps, the twin's rounded product and add in
 * its order; edges, the last outputs that do not fill a vector and strides above 2 run the twin. */
#include <immintrin.h>

#include "f32-dwconv/f32-dwconv.h"

static inline __attribute__((always_inline)) __m256 load_cols(const float *p, const size_t s) {
  if (s == 1) return _mm256_loadu_ps(p);
  const __m256 v = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* Returns the first output not computed. */
static inline __attribute__((always_inline)) size_t interior(const size_t s, size_t lo, size_t hi, size_t rows,
                                                             size_t kw, size_t d, size_t pad, const float *x,
                                                             size_t x_rs, const float *w, float *y) {
  const size_t end = s == 1 ? hi : hi - 1; /* stride 2: a vector's 16 columns end before output end */
  size_t o = lo;
  for (; o + 32 <= end; o += 32) { /* four add chains: the add latency hidden */
    __m256 a0 = _mm256_loadu_ps(y + o), a1 = _mm256_loadu_ps(y + o + 8);
    __m256 a2 = _mm256_loadu_ps(y + o + 16), a3 = _mm256_loadu_ps(y + o + 24);
    for (size_t r = 0; r < rows; r++) {
      const float *xr = x + r * x_rs + o * s - pad, *wr = w + r * kw;
      for (size_t t = 0; t < kw; t++) {
        const __m256 wv = _mm256_broadcast_ss(wr + t);
        a0 = _mm256_add_ps(a0, _mm256_mul_ps(load_cols(xr + t * d, s), wv));
        a1 = _mm256_add_ps(a1, _mm256_mul_ps(load_cols(xr + t * d + 8 * s, s), wv));
        a2 = _mm256_add_ps(a2, _mm256_mul_ps(load_cols(xr + t * d + 16 * s, s), wv));
        a3 = _mm256_add_ps(a3, _mm256_mul_ps(load_cols(xr + t * d + 24 * s, s), wv));
      }
    }
    _mm256_storeu_ps(y + o, a0);
    _mm256_storeu_ps(y + o + 8, a1);
    _mm256_storeu_ps(y + o + 16, a2);
    _mm256_storeu_ps(y + o + 24, a3);
  }
  for (; o + 16 <= end; o += 16) {
    __m256 a0 = _mm256_loadu_ps(y + o), a1 = _mm256_loadu_ps(y + o + 8);
    for (size_t r = 0; r < rows; r++) {
      const float *xr = x + r * x_rs + o * s - pad, *wr = w + r * kw;
      for (size_t t = 0; t < kw; t++) {
        const __m256 wv = _mm256_broadcast_ss(wr + t);
        a0 = _mm256_add_ps(a0, _mm256_mul_ps(load_cols(xr + t * d, s), wv));
        a1 = _mm256_add_ps(a1, _mm256_mul_ps(load_cols(xr + t * d + 8 * s, s), wv));
      }
    }
    _mm256_storeu_ps(y + o, a0);
    _mm256_storeu_ps(y + o + 8, a1);
  }
  for (; o + 8 <= end; o += 8) {
    __m256 a0 = _mm256_loadu_ps(y + o);
    for (size_t r = 0; r < rows; r++) {
      const float *xr = x + r * x_rs + o * s - pad, *wr = w + r * kw;
      for (size_t t = 0; t < kw; t++) {
        a0 = _mm256_add_ps(a0, _mm256_mul_ps(load_cols(xr + t * d, s), _mm256_broadcast_ss(wr + t)));
      }
    }
    _mm256_storeu_ps(y + o, a0);
  }
  return o;
}

void q8rt_f32_dwconv_ukernel__avx2(size_t n, size_t rows, size_t kw, size_t s, size_t d, size_t pad, size_t in_w,
                                   const float *x, size_t x_rs, const float *w, float *y) {
  size_t lo, hi;
  q8rt_f32_dwconv_interior(n, kw, s, d, pad, in_w, &lo, &hi);
  if (s > 2 || lo == hi) {
    q8rt_f32_dwconv_ukernel__scalar(n, rows, kw, s, d, pad, in_w, x, x_rs, w, y);
    return;
  }
  q8rt_f32_dwconv_part(0, lo, rows, kw, s, d, pad, in_w, x, x_rs, w, y);
  const size_t done = s == 1 ? interior(1, lo, hi, rows, kw, d, pad, x, x_rs, w, y)
                             : interior(2, lo, hi, rows, kw, d, pad, x, x_rs, w, y);
  q8rt_f32_dwconv_part(done, n, rows, kw, s, d, pad, in_w, x, x_rs, w, y);
}
