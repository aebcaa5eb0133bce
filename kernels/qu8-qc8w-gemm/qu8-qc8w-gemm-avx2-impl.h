/* The body of the qu8-qc8w-gemm AVX2 variants (no VNNI), instantiated per tile by the
 * qu8-qc8w-gemm-<MR>x8c4-minmax-fp32-avx2.c files (compiled with -mavx2).
 *
 * Exact route: weights and activations as int16, multiplied with vpmaddwd, whose int32 pair sums
 * cannot overflow (2 * 255 * 128 < 2^31); the int32 accumulators wrap like the reference's.
 * vpmaddubsw would be cheaper but saturates its int16 pair sums for full-range weights
 * (2 * 255 * 127 > 32767).
 *
 * One c4 group of the packed weights is one ymm: 8 channels x 4 k, channel j in dword j. Read as
 * 16 words, word 2j holds (k1:k0) and word 2j+1 holds (k3:k2) of channel j, so two in-lane shifts
 * split the group into int16 vectors that keep the channel in the dword lane:
 *   E = (W << 8) >>a 8  -> dword j = (w[k0], w[k2])
 *   O =  W >>a 8        -> dword j = (w[k1], w[k3])
 * and vpmaddwd against the activation pairs (a0, a2) and (a1, a3), broadcast to all lanes, adds
 * exactly channel j's four products into lane j: one accumulator per row, no horizontal step,
 * and the weight preparation (3 shifts) is shared by the MR rows.
 *
 * The activation pairs must be int16 (zero-extended after the xor) and interleaved a0 a2 a1 a3.
 * That shuffle would be repeated for every block of 8 channels, so the MR rows are prepared once
 * per call into a stack buffer from which the inner loop only broadcasts (pure loads). Rows too
 * long for the buffer are prepared in the loop instead (one vpshufb per pair). */
#ifndef Q8RT_QU8_QC8W_GEMM_AVX2_IMPL_H
#define Q8RT_QU8_QC8W_GEMM_AVX2_IMPL_H

#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#include "q8rt-kernels.h"

#define Q8RT_GEMM_AVX2_MAX_MR 8
/* activation int16 buffered per call, MR * round_up(kc, 4) of them: 32 KiB of stack, enough for
 * K = 2304 (3x3x256) with MR = 5 */
#define Q8RT_GEMM_AVX2_BUF_ELEMS 16384

static inline int32_t q8rt_gemm_avx2_load4(const void *p) {
  int32_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

/* 8 int32 results of one row -> requantized bytes; stores nb (1..8) of them */
static inline __attribute__((always_inline)) void q8rt_gemm_avx2_store_row(__m256i acc, __m256 vscale, __m256 vlo,
                                                                           __m256 vhi, __m256i vzp, uint8_t *cr,
                                                                           size_t nb) {
  __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), vscale);
  v = _mm256_max_ps(v, vlo); /* a NaN in v (first operand) becomes lo, as in the scalar twin */
  v = _mm256_min_ps(v, vhi);
  /* round half to even independently of MXCSR; the result is integral so truncation is exact */
  v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256i q = _mm256_add_epi32(_mm256_cvttps_epi32(v), vzp);
  /* q is within the output type's range: keep the low byte of each lane (exact for u8 and s8) */
  const __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  const __m128i q8 = _mm_shuffle_epi8(q16, _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1));
  if (nb == 8) {
    _mm_storel_epi64((__m128i *)cr, q8);
  } else {
    uint8_t tmp[16];
    _mm_storeu_si128((__m128i *)tmp, q8);
    memcpy(cr, tmp, nb);
  }
}

static inline __attribute__((always_inline)) void q8rt_gemm_avx2_body(size_t mr, size_t nc, size_t kc, const uint8_t *a,
                                                                      size_t a_stride, const void *w, void *c,
                                                                      size_t c_stride, const q8rt_qu8_requant_params *p,
                                                                      const size_t MR, const size_t NV /* NR / 8 */,
                                                                      const bool buffered, int16_t *buf,
                                                                      const bool i32_out) {
  const size_t k4 = (kc + 3) / 4;
  const uint8_t *ar[Q8RT_GEMM_AVX2_MAX_MR];
  uint8_t *cr[Q8RT_GEMM_AVX2_MAX_MR];
#pragma GCC unroll 8
  for (size_t m = 0; m < MR; m++) {
    const size_t mm = m < mr ? m : mr - 1; /* rows past mr alias the last valid row */
    ar[m] = a + mm * a_stride;
    cr[m] = (uint8_t *)c + mm * c_stride;
  }
  /* bytes (a0 a1 a2 a3) -> words (a0, a2, a1, a3); the same within each 4 bytes of a lane */
  const __m128i vpairs = _mm_setr_epi8(0, -1, 2, -1, 1, -1, 3, -1, 4, -1, 6, -1, 5, -1, 7, -1);
  const __m256i vpair_even = _mm256_setr_epi8(0, -1, 2, -1, 0, -1, 2, -1, 0, -1, 2, -1, 0, -1, 2, -1, 0, -1, 2, -1, 0,
                                              -1, 2, -1, 0, -1, 2, -1, 0, -1, 2, -1);
  const __m256i vpair_odd = _mm256_setr_epi8(1, -1, 3, -1, 1, -1, 3, -1, 1, -1, 3, -1, 1, -1, 3, -1, 1, -1, 3, -1, 1,
                                             -1, 3, -1, 1, -1, 3, -1, 1, -1, 3, -1);
  const __m128i vxor = _mm_set1_epi8((char)p->x_xor);

  const int16_t *br[Q8RT_GEMM_AVX2_MAX_MR];
  if (buffered) {
    /* row m at buf + m * 4 * k4 as int16 a0 a2 a1 a3 per group; reads stay within round_up(kc, 4) */
    for (size_t m = 0; m < mr; m++) {
      int16_t *dst = buf + m * 4 * k4;
      const uint8_t *src = ar[m];
      size_t g = 0;
      for (; g + 2 <= k4; g += 2) {
        const __m128i x = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(src + 4 * g)), vxor);
        _mm_storeu_si128((__m128i *)(dst + 4 * g), _mm_shuffle_epi8(x, vpairs));
      }
      if (g < k4) {
        const __m128i x = _mm_xor_si128(_mm_cvtsi32_si128(q8rt_gemm_avx2_load4(src + 4 * g)), vxor);
        _mm_storel_epi64((__m128i *)(dst + 4 * g), _mm_shuffle_epi8(x, vpairs));
      }
    }
#pragma GCC unroll 8
    for (size_t m = 0; m < MR; m++) br[m] = buf + (m < mr ? m : mr - 1) * 4 * k4;
  }

  const size_t NR = 8 * NV;
  const int8_t *wp = (const int8_t *)w;
  for (;;) {
    /* only the accumulators, the weights and the row pointers live across the k loop: the
     * requantization constants are loaded after it, so nothing spills */
    __m256i acc[Q8RT_GEMM_AVX2_MAX_MR][2];
#pragma GCC unroll 2
    for (size_t j = 0; j < NV; j++) {
      const __m256i vbias = _mm256_loadu_si256((const __m256i *)(wp + 32 * j));
#pragma GCC unroll 8
      for (size_t m = 0; m < MR; m++) acc[m][j] = vbias;
    }
    wp += NR * sizeof(int32_t);
    for (size_t g = 0; g < k4; g++) {
      __m256i ve[2], vo[2];
#pragma GCC unroll 2
      for (size_t j = 0; j < NV; j++) {
        const __m256i vw = _mm256_loadu_si256((const __m256i *)(wp + 32 * j));
        ve[j] = _mm256_srai_epi16(_mm256_slli_epi16(vw, 8), 8);
        vo[j] = _mm256_srai_epi16(vw, 8);
      }
      wp += NR * 4;
#pragma GCC unroll 8
      for (size_t m = 0; m < MR; m++) {
        __m256i va02, va13;
        if (buffered) {
          va02 = _mm256_set1_epi32(q8rt_gemm_avx2_load4(br[m] + 4 * g));
          va13 = _mm256_set1_epi32(q8rt_gemm_avx2_load4(br[m] + 4 * g + 2));
        } else {
          const __m256i x = _mm256_xor_si256(_mm256_set1_epi32(q8rt_gemm_avx2_load4(ar[m] + 4 * g)),
                                             _mm256_broadcastsi128_si256(vxor));
          va02 = _mm256_shuffle_epi8(x, vpair_even);
          va13 = _mm256_shuffle_epi8(x, vpair_odd);
        }
#pragma GCC unroll 2
        for (size_t j = 0; j < NV; j++) {
          acc[m][j] = _mm256_add_epi32(acc[m][j], _mm256_madd_epi16(va02, ve[j]));
          acc[m][j] = _mm256_add_epi32(acc[m][j], _mm256_madd_epi16(va13, vo[j]));
        }
      }
    }
    if (i32_out) {
      /* the accumulators are the result (ConvInteger, MatMulInteger): no scale, no clamp */
#pragma GCC unroll 2
      for (size_t j = 0; j < NV; j++) {
        const size_t nb = nc < 8 * j ? 0 : nc - 8 * j < 8 ? nc - 8 * j : 8;
        if (nb == 0) break;
#pragma GCC unroll 8
        for (size_t m = 0; m < MR; m++) {
          uint8_t *dst = cr[m] + 32 * j;
          if (nb == 8) {
            _mm256_storeu_si256((__m256i *)dst, acc[m][j]);
          } else {
            int32_t tmp[8];
            _mm256_storeu_si256((__m256i *)tmp, acc[m][j]);
            memcpy(dst, tmp, nb * sizeof(int32_t));
          }
        }
      }
      wp += NR * sizeof(float);
      if (nc <= NR) break;
      nc -= NR;
#pragma GCC unroll 8
      for (size_t m = 0; m < MR; m++) cr[m] += NR * sizeof(int32_t);
      continue;
    }
    const __m256 vlo = _mm256_broadcast_ss(&p->y_lo);
    const __m256 vhi = _mm256_broadcast_ss(&p->y_hi);
    const __m256i vzp = _mm256_set1_epi32(p->y_zero_point);
#pragma GCC unroll 2
    for (size_t j = 0; j < NV; j++) {
      const __m256 vscale = _mm256_loadu_ps((const float *)(wp + 32 * j));
      const size_t nb = nc < 8 * j ? 0 : nc - 8 * j < 8 ? nc - 8 * j : 8;
      if (nb == 0) break;
#pragma GCC unroll 8
      for (size_t m = 0; m < MR; m++) q8rt_gemm_avx2_store_row(acc[m][j], vscale, vlo, vhi, vzp, cr[m] + 8 * j, nb);
    }
    wp += NR * sizeof(float);
    if (nc <= NR) break;
    nc -= NR;
#pragma GCC unroll 8
    for (size_t m = 0; m < MR; m++) cr[m] += NR;
  }
}

#define Q8RT_GEMM_AVX2_DEFINE(fn, MR, NV)                                                                              \
  void fn(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, size_t c_stride, \
          const q8rt_qu8_requant_params *p) {                                                                          \
    if (MR * ((kc + 3) & ~(size_t)3) <= Q8RT_GEMM_AVX2_BUF_ELEMS) {                                                    \
      int16_t buf[Q8RT_GEMM_AVX2_BUF_ELEMS] __attribute__((aligned(32)));                                              \
      q8rt_gemm_avx2_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, MR, NV, true, buf, false);                       \
    } else {                                                                                                           \
      q8rt_gemm_avx2_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, MR, NV, false, NULL, false);                     \
    }                                                                                                                  \
  }

/* int32 output: c holds int32_t, c_stride in bytes; only p->x_xor is read */
#define Q8RT_GEMM_I32_AVX2_DEFINE(fn, MR, NV)                                                                          \
  void fn(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, size_t c_stride, \
          const q8rt_qu8_requant_params *p) {                                                                          \
    if (MR * ((kc + 3) & ~(size_t)3) <= Q8RT_GEMM_AVX2_BUF_ELEMS) {                                                    \
      int16_t buf[Q8RT_GEMM_AVX2_BUF_ELEMS] __attribute__((aligned(32)));                                              \
      q8rt_gemm_avx2_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, MR, NV, true, buf, true);                        \
    } else {                                                                                                           \
      q8rt_gemm_avx2_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, MR, NV, false, NULL, true);                      \
    }                                                                                                                  \
  }

#endif
