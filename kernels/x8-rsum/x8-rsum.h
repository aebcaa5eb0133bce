/* x8-rsum: exact sums of 8-bit values (uint8, or int8 with is_signed), in int32 with two's
 * complement wraparound (as ONNX Runtime's int32 accumulators; callers keep sums below 2^31).
 *   rsum: out[r] = sum of x[r * stride + i], i < n, for r < rows          (NCHW: one row per plane)
 *   csum: out[c] = sum of x[p * stride + c], p < pixels, for c < channels  (NHWC: per channel) */
#ifndef Q8RT_X8_RSUM_H
#define Q8RT_X8_RSUM_H

#include <stddef.h>
#include <stdint.h>

typedef void (*q8rt_x8_rsum_ukernel_fn)(size_t rows, size_t n, const uint8_t *x, size_t stride, int is_signed,
                                        int32_t *out);
typedef void (*q8rt_x8_csum_ukernel_fn)(size_t pixels, size_t channels, const uint8_t *x, size_t stride, int is_signed,
                                        int32_t *out);

void q8rt_x8_rsum_ukernel__scalar(size_t rows, size_t n, const uint8_t *x, size_t stride, int is_signed, int32_t *out);
void q8rt_x8_csum_ukernel__scalar(size_t pixels, size_t channels, const uint8_t *x, size_t stride, int is_signed,
                                  int32_t *out);

#define Q8RT_X8_RSUM_UKERNEL(isa, rsum, csum)                                                     \
  void rsum(size_t rows, size_t n, const uint8_t *x, size_t stride, int is_signed, int32_t *out); \
  void csum(size_t pixels, size_t channels, const uint8_t *x, size_t stride, int is_signed, int32_t *out);
#include "x8-rsum/x8-rsum.inc"
#undef Q8RT_X8_RSUM_UKERNEL

#endif
