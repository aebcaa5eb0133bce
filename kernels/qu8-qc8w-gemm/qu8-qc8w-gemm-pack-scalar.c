/* Weight packing for qu8-qc8w-gemm (layout documented in q8rt-kernels.h).
 *
 * Blocks of NR output channels, each self-contained (bias', weights, scales) so a kernel walks
 * one block with one pointer bump. Within a block the weights come in groups of 4 consecutive k
 * per channel (KR = 4): one 4-byte group per channel is exactly what a dot-product instruction
 * (vpdpbusd, sdot) or a pair of vpmaddwd pairs consumes, and NR consecutive groups form one
 * vector. K is padded to a multiple of 4 with zero weights so kernels can read whole groups.
 *
 * The activation zero point is folded into the bias: sum_k (a - zp) * w = sum_k a * w - zp * sum_k w,
 * computed modulo 2^32 so it equals the reference's wrapping int32 accumulator bit for bit. */
#include <string.h>

#include "q8rt-kernels.h"

size_t q8rt_qu8_qc8w_gemm_packed_size(size_t n, size_t k, size_t nr) {
  const size_t blocks = (n + nr - 1) / nr;
  const size_t k4 = (k + 3) / 4;
  return blocks * nr * (sizeof(int32_t) + 4 * k4 + sizeof(float));
}

void q8rt_qu8_qc8w_gemm_pack(size_t n, size_t k, size_t nr, const int8_t *w, const int32_t *bias, const float *scale,
                             int32_t x_zp_u8, void *packed) {
  const size_t k4 = (k + 3) / 4;
  uint8_t *out = (uint8_t *)packed;
  for (size_t n0 = 0; n0 < n; n0 += nr) {
    const size_t nb = n - n0 < nr ? n - n0 : nr;
    /* bias' */
    for (size_t j = 0; j < nr; j++) {
      uint32_t b = 0;
      if (j < nb) {
        uint32_t wsum = 0;
        const int8_t *wr = w + (n0 + j) * k;
        for (size_t i = 0; i < k; i++) wsum += (uint32_t)(int32_t)wr[i];
        b = (bias != NULL ? (uint32_t)bias[n0 + j] : 0u) - (uint32_t)x_zp_u8 * wsum;
      }
      memcpy(out, &b, sizeof(b));
      out += sizeof(b);
    }
    /* weights: [k4][nr][4] */
    for (size_t g = 0; g < k4; g++) {
      for (size_t j = 0; j < nr; j++) {
        for (size_t i = 0; i < 4; i++) {
          const size_t kk = 4 * g + i;
          *out++ = (j < nb && kk < k) ? (uint8_t)w[(n0 + j) * k + kk] : 0;
        }
      }
    }
    /* scales; padding channels get 0 so they compute harmless values */
    for (size_t j = 0; j < nr; j++) {
      const float s = j < nb ? scale[n0 + j] : 0.0f;
      memcpy(out, &s, sizeof(s));
      out += sizeof(s);
    }
  }
}
