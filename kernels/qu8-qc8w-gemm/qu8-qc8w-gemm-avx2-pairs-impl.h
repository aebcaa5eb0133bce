/* The body of the qu8-qc8w-gemm AVX2 "pairs-safe" variants: vpmaddubsw on the packed bytes as
 * they are, valid only for weights where q8rt_qu8_qc8w_gemm_pairs_safe() holds.
 *
 * vpmaddubsw multiplies u8 activations by s8 weights and adds adjacent products, (k0, k1) and
 * (k2, k3) of a c4 group, into int16 with signed saturation. When |w0| + |w1| <= 128 for every such
 * pair, |a0 * w0 + a1 * w1| <= 255 * 128 = 32640 < 32768: nothing saturates, the int16 is exact.
 * vpmaddwd against ones then adds the two int16 of each channel into its int32 lane. Per row and
 * group of 4 k: one broadcast (plus the xor for int8 activations), then per 8 channels one
 * vpmaddubsw, one vpmaddwd and one vpaddd, with the weights used straight from the packing. */
#ifndef Q8RT_QU8_QC8W_GEMM_AVX2_PAIRS_IMPL_H
#define Q8RT_QU8_QC8W_GEMM_AVX2_PAIRS_IMPL_H

#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#include "q8rt-kernels.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-avx2-impl.h"

static inline __attribute__((always_inline)) void q8rt_gemm_avx2_pairs_body(
    size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, size_t c_stride,
    const q8rt_qu8_requant_params *p, const size_t MR, const size_t NV /* NR / 8 */, const bool use_xor) {
  const size_t NR = 8 * NV;
  const size_t k4 = (kc + 3) / 4;
  const uint8_t *ar[Q8RT_GEMM_AVX2_MAX_MR];
  uint8_t *cr[Q8RT_GEMM_AVX2_MAX_MR];
#pragma GCC unroll 8
  for (size_t m = 0; m < MR; m++) {
    const size_t mm = m < mr ? m : mr - 1; /* rows past mr alias the last valid row */
    ar[m] = a + mm * a_stride;
    cr[m] = (uint8_t *)c + mm * c_stride;
  }
  const int8_t *wp = (const int8_t *)w;
  for (;;) {
    __m256i acc[Q8RT_GEMM_AVX2_MAX_MR][2];
#pragma GCC unroll 2
    for (size_t j = 0; j < NV; j++) {
      const __m256i vbias = _mm256_loadu_si256((const __m256i *)(wp + 32 * j));
#pragma GCC unroll 8
      for (size_t m = 0; m < MR; m++) acc[m][j] = vbias;
    }
    wp += NR * sizeof(int32_t);
    const __m256i vones = _mm256_set1_epi16(1);
    const __m256i vxor = _mm256_set1_epi8((char)p->x_xor);
    for (size_t g = 0; g < k4; g++) {
      __m256i vw[2];
#pragma GCC unroll 2
      for (size_t j = 0; j < NV; j++) vw[j] = _mm256_loadu_si256((const __m256i *)(wp + 32 * j));
      wp += NR * 4;
#pragma GCC unroll 8
      for (size_t m = 0; m < MR; m++) {
        __m256i va = _mm256_set1_epi32(q8rt_gemm_avx2_load4(ar[m] + 4 * g));
        if (use_xor) va = _mm256_xor_si256(va, vxor);
#pragma GCC unroll 2
        for (size_t j = 0; j < NV; j++) {
          const __m256i pairs = _mm256_maddubs_epi16(va, vw[j]); /* exact: see the proof above */
          acc[m][j] = _mm256_add_epi32(acc[m][j], _mm256_madd_epi16(pairs, vones));
        }
      }
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

#define Q8RT_GEMM_AVX2_PAIRS_DEFINE(fn, MR, NV)                                                                        \
  void fn(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, size_t c_stride, \
          const q8rt_qu8_requant_params *p) {                                                                          \
    if (p->x_xor != 0) {                                                                                               \
      q8rt_gemm_avx2_pairs_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, MR, NV, true);                             \
    } else {                                                                                                           \
      q8rt_gemm_avx2_pairs_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, MR, NV, false);                            \
    }                                                                                                                  \
  }

#endif
