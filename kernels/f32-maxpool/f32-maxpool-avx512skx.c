/* f32-maxpool, AVX-512: 16 outputs per vector, the tail under a mask. Stride 1: plain loads;
 * stride 2 (3x3 and 2x2 stride-2 pooling): the 32 inputs under 16 outputs loaded as two vectors
 * and their even elements picked by one permute; strides 3-8 (windows side by side, as the 1-D
 * [1, 3] stride-3 pools of audio models): the s * 15 + 1 inputs under 16 outputs as up to s
 * vectors, each output's element moved into its lane by a masked permute (a 16-lane gather took
 * ~14 ns on this Zen 4); larger strides: a gather. Masked loads and gathers read only the elements
 * the scalar twin reads or elements between two of them; no load runs under an all-zero mask (one
 * cost ~0.19 us a call on this EPYC, Zen 4). */
#include <float.h>
#include <immintrin.h>
#include <stdint.h>

#include "f32-maxpool/f32-maxpool.h"

static inline __mmask16 lanes(size_t cnt) { return cnt >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << cnt) - 1u); }

void q8rt_f32_maxpool_ukernel__avx512skx(size_t n, size_t q, size_t r, size_t k, size_t s, size_t d, size_t xq,
                                         size_t rs, size_t yq, const float *x, float *y, int acc) {
  const __m512 lowest = _mm512_set1_ps(-FLT_MAX);
  if (s == 1) {
    for (size_t j = 0; j < q; j++, x += xq, y += yq)
      for (size_t o = 0; o < n; o += 16) {
        const __mmask16 mask = lanes(n - o);
        __m512 m = acc ? _mm512_maskz_loadu_ps(mask, y + o) : lowest;
        for (size_t i = 0; i < r; i++) {
          const float *xo = x + i * rs + o;
          for (size_t t = 0; t < k; t++) m = _mm512_max_ps(_mm512_maskz_loadu_ps(mask, xo + t * d), m);
        }
        _mm512_mask_storeu_ps(y + o, mask, m);
      }
    return;
  }
  if (s == 2) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (size_t j = 0; j < q; j++, x += xq, y += yq)
      for (size_t o = 0; o < n; o += 16) {
        const size_t cnt = n - o >= 16 ? 16 : n - o;
        const __mmask16 mask = lanes(cnt);
        /* inputs 0 .. 2 * cnt - 2 of the block: the last output's element and the odd ones between */
        const size_t span = 2 * cnt - 1;
        const __mmask16 mlo = lanes(span);
        const __mmask16 mhi = span <= 16 ? (__mmask16)0 : lanes(span - 16);
        __m512 m = acc ? _mm512_maskz_loadu_ps(mask, y + o) : lowest;
        for (size_t i = 0; i < r; i++) {
          const float *xo = x + i * rs + 2 * o;
          if (mhi == 0) { /* at most 8 outputs: one load */
            for (size_t t = 0; t < k; t++)
              m = _mm512_max_ps(_mm512_permutexvar_ps(even, _mm512_maskz_loadu_ps(mlo, xo + t * d)), m);
          } else {
            for (size_t t = 0; t < k; t++) {
              const float *p = xo + t * d;
              const __m512 v =
                  _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(mlo, p), even, _mm512_maskz_loadu_ps(mhi, p + 16));
              m = _mm512_max_ps(v, m);
            }
          }
        }
        _mm512_mask_storeu_ps(y + o, mask, m);
      }
    return;
  }
  if (s == 3) { /* the general permutes below with their masks and vector count fixed */
    const __m512i idx = _mm512_setr_epi32(0, 3, 6, 9, 12, 15, 2, 5, 8, 11, 14, 1, 4, 7, 10, 13);
    for (size_t j = 0; j < q; j++, x += xq, y += yq)
      for (size_t o = 0; o < n; o += 16) {
        const size_t cnt = n - o >= 16 ? 16 : n - o, span = 3 * cnt - 2;
        const __mmask16 mask = lanes(cnt), m0 = lanes(span);
        __m512 m = acc ? _mm512_maskz_loadu_ps(mask, y + o) : lowest;
        if (span > 32) {
          const __mmask16 m2 = lanes(span - 32);
          for (size_t i = 0; i < r; i++) {
            const float *xo = x + i * rs + o * 3;
            for (size_t t = 0; t < k; t++) {
              const float *p = xo + t * d;
              __m512 e = _mm512_maskz_permutexvar_ps(0x003f, idx, _mm512_loadu_ps(p));
              e = _mm512_mask_permutexvar_ps(e, 0x07c0, idx, _mm512_loadu_ps(p + 16));
              e = _mm512_mask_permutexvar_ps(e, 0xf800, idx, _mm512_maskz_loadu_ps(m2, p + 32));
              m = _mm512_max_ps(e, m);
            }
          }
        } else {
          const __mmask16 m1 = span > 16 ? lanes(span - 16) : 0;
          for (size_t i = 0; i < r; i++) {
            const float *xo = x + i * rs + o * 3;
            for (size_t t = 0; t < k; t++) {
              const float *p = xo + t * d;
              __m512 e = _mm512_maskz_permutexvar_ps(0x003f, idx, _mm512_maskz_loadu_ps(m0, p));
              if (m1 != 0) e = _mm512_mask_permutexvar_ps(e, 0x07c0, idx, _mm512_maskz_loadu_ps(m1, p + 16));
              m = _mm512_max_ps(e, m);
            }
          }
        }
        _mm512_mask_storeu_ps(y + o, mask, m);
      }
    return;
  }
  if (s <= 8) {
    /* lane j takes element s * j: vector (s * j) / 16 of the block, lane (s * j) % 16 */
    const __m512i sj = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                          _mm512_set1_epi32((int)s));
    const __m512i idx = _mm512_and_si512(sj, _mm512_set1_epi32(15));
    const __m512i vec = _mm512_srli_epi32(sj, 4);
    __mmask16 from[8];
    for (size_t v = 0; v < 8; v++) from[v] = _mm512_cmpeq_epi32_mask(vec, _mm512_set1_epi32((int)v));
    for (size_t j = 0; j < q; j++, x += xq, y += yq)
      for (size_t o = 0; o < n; o += 16) {
        const size_t cnt = n - o >= 16 ? 16 : n - o;
        const __mmask16 mask = lanes(cnt);
        const size_t span = s * (cnt - 1) + 1, nv = (span + 15) / 16;
        __m512 m = acc ? _mm512_maskz_loadu_ps(mask, y + o) : lowest;
        for (size_t i = 0; i < r; i++) {
          const float *xo = x + i * rs + o * s;
          for (size_t t = 0; t < k; t++) {
            const float *p = xo + t * d;
            __m512 e = _mm512_maskz_permutexvar_ps(from[0], idx, _mm512_maskz_loadu_ps(lanes(span), p));
            for (size_t v = 1; v < nv; v++)
              e = _mm512_mask_permutexvar_ps(e, from[v], idx, _mm512_maskz_loadu_ps(lanes(span - 16 * v), p + 16 * v));
            m = _mm512_max_ps(e, m);
          }
        }
        _mm512_mask_storeu_ps(y + o, mask, m);
      }
    return;
  }
  if (s > (size_t)(INT32_MAX / 16)) { /* the gather's int32 offsets */
    q8rt_f32_maxpool_ukernel__scalar(n, q, r, k, s, d, xq, rs, yq, x, y, acc);
    return;
  }
  const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32((int)s));
  for (size_t j = 0; j < q; j++, x += xq, y += yq)
    for (size_t o = 0; o < n; o += 16) {
      const __mmask16 mask = lanes(n - o);
      __m512 m = acc ? _mm512_maskz_loadu_ps(mask, y + o) : lowest;
      for (size_t i = 0; i < r; i++) {
        const float *xo = x + i * rs + o * s;
        for (size_t t = 0; t < k; t++)
          m = _mm512_max_ps(_mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, idx, xo + t * d, 4), m);
      }
      _mm512_mask_storeu_ps(y + o, mask, m);
    }
}
