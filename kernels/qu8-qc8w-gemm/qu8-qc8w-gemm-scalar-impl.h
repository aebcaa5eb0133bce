/* The body of the qu8-qc8w-gemm scalar twins (contiguous rows and segmented rows): reads the
 * packed layout of any NR and defines the bytes every optimized variant must produce. Byte k of A's
 * row m is a[m * a_stride + k], or with segs a[m * a_stride + off[k / len] + k % len]; each twin
 * passes its segs as a constant (NULL for contiguous rows), so its copy has no branch per byte. */
#ifndef Q8RT_QU8_QC8W_GEMM_SCALAR_IMPL_H
#define Q8RT_QU8_QC8W_GEMM_SCALAR_IMPL_H

#include <string.h>

#include "q8rt-kernels.h"
#include "q8rt-math.h"

static inline __attribute__((always_inline)) void gemm_scalar_minmax(size_t mr, size_t nc, size_t kc, const uint8_t *a,
                                                                     size_t a_stride, const void *w, void *c,
                                                                     size_t c_stride, const q8rt_qu8_requant_params *p,
                                                                     const q8rt_gemm_segs *segs, size_t nr) {
  const size_t k4 = (kc + 3) / 4;
  const size_t block_bytes = nr * (sizeof(int32_t) + 4 * k4 + sizeof(float));
  const uint8_t *blk = (const uint8_t *)w;
  const uint8_t x_xor = p->x_xor;
  for (size_t n0 = 0; n0 < nc; n0 += nr, blk += block_bytes) {
    const size_t nb = nc - n0 < nr ? nc - n0 : nr;
    const int8_t *wp = (const int8_t *)(blk + nr * sizeof(int32_t));
    const uint8_t *sp = blk + nr * (sizeof(int32_t) + 4 * k4);
    for (size_t j = 0; j < nb; j++) {
      uint32_t bias;
      float scale;
      memcpy(&bias, blk + j * sizeof(int32_t), sizeof(bias));
      memcpy(&scale, sp + j * sizeof(float), sizeof(scale));
      for (size_t m = 0; m < mr; m++) {
        const uint8_t *ar = a + m * a_stride;
        uint32_t acc = bias; /* wraps like the int32 accumulators of the vector kernels */
        for (size_t k = 0; k < kc; k++) {
          const int32_t wv = wp[((k / 4) * nr + j) * 4 + (k % 4)];
          const uint8_t av = segs == NULL ? ar[k] : ar[segs->off[k / segs->len] + k % segs->len];
          acc += (uint32_t)(av ^ x_xor) * (uint32_t)wv;
        }
        const float v = (float)(int32_t)acc * scale;
        const int32_t q = q8rt_round_clamp(v, p->y_lo, p->y_hi) + p->y_zero_point;
        uint8_t *cr = (uint8_t *)c + m * c_stride + n0 + j;
        *cr = p->y_signed ? (uint8_t)(int8_t)q : (uint8_t)q;
      }
    }
  }
}

#endif
