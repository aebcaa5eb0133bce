/* The pack-time proof for the vpmaddubsw variants (see qu8-qc8w-gemm.h). */
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"

bool q8rt_qu8_qc8w_gemm_pairs_safe(size_t n, size_t k, const int8_t *w) {
  for (size_t i = 0; i < n; i++) {
    const int8_t *wr = w + i * k;
    /* pairs start at even k: (0,1), (2,3), ... which are the pairs of the groups of 4 */
    for (size_t j = 0; j < k; j += 2) {
      const int32_t w0 = wr[j], w1 = j + 1 < k ? wr[j + 1] : 0;
      if ((w0 < 0 ? -w0 : w0) + (w1 < 0 ? -w1 : w1) > 128) return false;
    }
  }
  return true;
}
