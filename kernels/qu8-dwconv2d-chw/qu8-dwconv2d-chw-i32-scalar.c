/* The scalar twin of qu8-dwconv2d-chw (contract in qu8-dwconv2d-chw.h). */
#include "qu8-dwconv2d-chw/qu8-dwconv2d-chw.h"

void q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar(size_t ow, size_t kh, size_t kw, const uint8_t *x, size_t row_stride,
                                               size_t sw, size_t dw, uint8_t x_xor, const int32_t *w, int32_t bias,
                                               int32_t *y) {
  for (size_t ox = 0; ox < ow; ox++) {
    uint32_t acc = (uint32_t)bias;
    for (size_t ky = 0; ky < kh; ky++) {
      const uint8_t *r = x + ky * row_stride + ox * sw;
      for (size_t kx = 0; kx < kw; kx++) acc += (uint32_t)(r[kx * dw] ^ x_xor) * (uint32_t)w[ky * kw + kx];
    }
    y[ox] = (int32_t)acc;
  }
}
