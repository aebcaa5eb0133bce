/* qu8-dwconv2d-chw: one output row of a depthwise convolution on a channel plane (NCHW, the
 * plane padded beforehand so every tap reads real bytes), int32 accumulators
 *   y[ox] = bias + sum_{ky < kh, kx < kw} (x[ky * row_stride + ox * sw + kx * dw] ^ x_xor) * w[ky * kw + kx]
 * for ox < ow, wrapping like int32 (two's complement). x_xor = 0x80 reads int8 activations in the
 * uint8 domain; w must fit int16 (ConvInteger's depthwise weights minus their zero point: |w| <=
 * 255); bias = -x_zp_u8 * sum w makes y the zero-point-corrected sum. Reads only the bytes the sum
 * names (a kernel may read between them, never past the last of row kh - 1). The depthwise
 * ConvInteger route (src/ops/conv_integer.c) calls it once per output row. */
#ifndef Q8RT_QU8_DWCONV2D_CHW_H
#define Q8RT_QU8_DWCONV2D_CHW_H

#include <stddef.h>
#include <stdint.h>

typedef void (*q8rt_qu8_dwconv2d_chw_ukernel_fn)(size_t ow, size_t kh, size_t kw, const uint8_t *x, size_t row_stride,
                                                 size_t sw, size_t dw, uint8_t x_xor, const int32_t *w, int32_t bias,
                                                 int32_t *y);

void q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar(size_t ow, size_t kh, size_t kw, const uint8_t *x, size_t row_stride,
                                               size_t sw, size_t dw, uint8_t x_xor, const int32_t *w, int32_t bias,
                                               int32_t *y);
#define Q8RT_QU8_DWCONV2D_CHW_UKERNEL(isa, fn)                                                                       \
  void fn(size_t ow, size_t kh, size_t kw, const uint8_t *x, size_t row_stride, size_t sw, size_t dw, uint8_t x_xor, \
          const int32_t *w, int32_t bias, int32_t *y);
#include "qu8-dwconv2d-chw/qu8-dwconv2d-chw.inc"
#undef Q8RT_QU8_DWCONV2D_CHW_UKERNEL

#endif
