/* The scalar twins of x8-rsum: plain loops, uint32 arithmetic for the wraparound. */
#include "x8-rsum/x8-rsum.h"

static inline uint32_t load(const uint8_t *p, int is_signed) {
  return is_signed ? (uint32_t)(int32_t)(int8_t)*p : (uint32_t)*p;
}

void q8rt_x8_rsum_ukernel__scalar(size_t rows, size_t n, const uint8_t *x, size_t stride, int is_signed, int32_t *out) {
  for (size_t r = 0; r < rows; r++) {
    uint32_t s = 0;
    for (size_t i = 0; i < n; i++) s += load(x + r * stride + i, is_signed);
    out[r] = (int32_t)s;
  }
}

void q8rt_x8_csum_ukernel__scalar(size_t pixels, size_t channels, const uint8_t *x, size_t stride, int is_signed,
                                  int32_t *out) {
  for (size_t c = 0; c < channels; c++) {
    uint32_t s = 0;
    for (size_t p = 0; p < pixels; p++) s += load(x + p * stride + c, is_signed);
    out[c] = (int32_t)s;
  }
}
