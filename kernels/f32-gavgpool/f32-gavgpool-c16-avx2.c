/* f32-gavgpool, AVX2: 16 channels at a time (two vectors, four running sums each: eight
 * independent add chains), the last channels 8 at a time under a load/store mask. */
#include <immintrin.h>
#include <stdint.h>

#include "f32-gavgpool/f32-gavgpool.h"

static const int32_t g_lanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

void q8rt_f32_gavgpool_ukernel_c16__avx2(size_t pixels, size_t channels, const float *x, size_t stride, float count,
                                         float *y) {
  const __m256 vc = _mm256_set1_ps(count);
  size_t c = 0;
  for (; c + 16 <= channels; c += 16) {
    const float *xc = x + c;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    __m256 b0 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps(), b2 = _mm256_setzero_ps(), b3 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 4 <= pixels; i += 4) {
      const float *p = xc + i * stride;
      a0 = _mm256_add_ps(a0, _mm256_loadu_ps(p));
      b0 = _mm256_add_ps(b0, _mm256_loadu_ps(p + 8));
      a1 = _mm256_add_ps(a1, _mm256_loadu_ps(p + stride));
      b1 = _mm256_add_ps(b1, _mm256_loadu_ps(p + stride + 8));
      a2 = _mm256_add_ps(a2, _mm256_loadu_ps(p + 2 * stride));
      b2 = _mm256_add_ps(b2, _mm256_loadu_ps(p + 2 * stride + 8));
      a3 = _mm256_add_ps(a3, _mm256_loadu_ps(p + 3 * stride));
      b3 = _mm256_add_ps(b3, _mm256_loadu_ps(p + 3 * stride + 8));
    }
    __m256 sa = _mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a1, a3));
    __m256 sb = _mm256_add_ps(_mm256_add_ps(b0, b2), _mm256_add_ps(b1, b3));
    for (; i < pixels; i++) {
      sa = _mm256_add_ps(sa, _mm256_loadu_ps(xc + i * stride));
      sb = _mm256_add_ps(sb, _mm256_loadu_ps(xc + i * stride + 8));
    }
    _mm256_storeu_ps(y + c, _mm256_div_ps(sa, vc));
    _mm256_storeu_ps(y + c + 8, _mm256_div_ps(sb, vc));
  }
  for (; c < channels; c += 8) {
    const size_t n = channels - c < 8 ? channels - c : 8;
    const __m256i m = _mm256_loadu_si256((const __m256i *)(g_lanes + 8 - n));
    const float *xc = x + c;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 4 <= pixels; i += 4) {
      const float *p = xc + i * stride;
      a0 = _mm256_add_ps(a0, _mm256_maskload_ps(p, m));
      a1 = _mm256_add_ps(a1, _mm256_maskload_ps(p + stride, m));
      a2 = _mm256_add_ps(a2, _mm256_maskload_ps(p + 2 * stride, m));
      a3 = _mm256_add_ps(a3, _mm256_maskload_ps(p + 3 * stride, m));
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a1, a3));
    for (; i < pixels; i++) s = _mm256_add_ps(s, _mm256_maskload_ps(xc + i * stride, m));
    _mm256_maskstore_ps(y + c, m, _mm256_div_ps(s, vc));
  }
}
