/* Packs B [k][n] (row stride ldb) into panels of nr columns for the f32-gemm variants. */
#include <string.h>

#include "f32-gemm/f32-gemm.h"

void q8rt_f32_gemm_pack(size_t k, size_t n, size_t nr, const float *b, size_t ldb, float *packed) {
  for (size_t j = 0; j < n; j += nr) {
    const size_t w = n - j < nr ? n - j : nr;
    for (size_t p = 0; p < k; p++, packed += nr) {
      memcpy(packed, b + p * ldb + j, w * sizeof(float));
      for (size_t t = w; t < nr; t++) packed[t] = 0.0f;
    }
  }
}
