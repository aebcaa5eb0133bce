/* Packs B [k][n] (row stride ldb), or B given transposed, into panels of nr columns for the
 * f32-gemm variants. */
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

void q8rt_f32_gemm_pack_t(size_t k, size_t n, size_t nr, const float *bt, size_t ldbt, float *packed) {
  for (size_t j = 0; j < n; j += nr) {
    const size_t w = n - j < nr ? n - j : nr;
    for (size_t p = 0; p < k; p++, packed += nr) {
      for (size_t t = 0; t < w; t++) packed[t] = bt[(j + t) * ldbt + p];
      for (size_t t = w; t < nr; t++) packed[t] = 0.0f;
    }
  }
}
