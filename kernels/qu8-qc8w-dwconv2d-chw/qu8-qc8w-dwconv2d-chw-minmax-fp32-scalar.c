/* Depthwise convolution on one NCHW channel plane, scalar: the packing and the numerics reference
 * for every qu8-qc8w-dwconv2d-chw variant. For output (oy, ox):
 *   acc = bias' + sum_{ky,kx} (x(oy*sh + ky*dh - pad_top, ox*sw + kx*dw - pad_left) ^ x_xor) * w[ky][kx]
 * (x outside the plane: the raw zero point)
 *   y   = round_clamp((float)(int32)acc * scale, y_lo, y_hi) + y_zero_point
 * (acc wraps like the int32 contract; bias' = bias - x_zp_u8 * sum w, mod 2^32). */
#include <string.h>

#include "q8rt-kernels.h"
#include "q8rt-math.h"

size_t q8rt_qu8_qc8w_dwconv2d_chw_channel_bytes(size_t kernel_h, size_t kernel_w) {
  return 2 * sizeof(int32_t) + kernel_h * ((kernel_w + 3) & ~(size_t)3);
}

void q8rt_qu8_qc8w_dwconv2d_chw_pack(size_t channels, size_t kernel_h, size_t kernel_w, const int16_t *w,
                                     const int32_t *bias, const float *scale, int32_t x_zp_u8, void *packed) {
  const size_t kw4 = (kernel_w + 3) & ~(size_t)3, taps = kernel_h * kernel_w;
  uint8_t *out = (uint8_t *)packed;
  for (size_t c = 0; c < channels; c++) {
    const int16_t *wc = w + c * taps;
    uint32_t wsum = 0;
    for (size_t t = 0; t < taps; t++) wsum += (uint32_t)(int32_t)wc[t];
    const uint32_t b = (bias != NULL ? (uint32_t)bias[c] : 0u) - (uint32_t)x_zp_u8 * wsum;
    memcpy(out, &b, sizeof(b));
    memcpy(out + sizeof(b), &scale[c], sizeof(float));
    int8_t *wp = (int8_t *)(out + 2 * sizeof(int32_t));
    for (size_t ky = 0; ky < kernel_h; ky++) {
      for (size_t kx = 0; kx < kw4; kx++) wp[ky * kw4 + kx] = kx < kernel_w ? (int8_t)wc[ky * kernel_w + kx] : 0;
    }
    out += q8rt_qu8_qc8w_dwconv2d_chw_channel_bytes(kernel_h, kernel_w);
  }
}

void q8rt_qu8_qc8w_dwconv2d_chw_minmax_fp32_ukernel__scalar(const uint8_t *x, const void *w, uint8_t *y,
                                                            const q8rt_qu8_qc8w_dwconv2d_chw_params *p) {
  const size_t kw4 = (p->kernel_w + 3) & ~(size_t)3;
  uint32_t bias;
  float scale;
  memcpy(&bias, w, sizeof(bias));
  memcpy(&scale, (const uint8_t *)w + sizeof(bias), sizeof(scale));
  const int8_t *wt = (const int8_t *)((const uint8_t *)w + 2 * sizeof(int32_t));
  const uint8_t x_xor = p->rq.x_xor;
  for (size_t oy = 0; oy < p->out_h; oy++) {
    for (size_t ox = 0; ox < p->out_w; ox++) {
      uint32_t acc = bias;
      for (size_t ky = 0; ky < p->kernel_h; ky++) {
        const size_t iy = oy * p->stride_h + ky * p->dilation_h; /* padded coordinates */
        for (size_t kx = 0; kx < p->kernel_w; kx++) {
          const size_t ix = ox * p->stride_w + kx * p->dilation_w;
          const int inside =
              iy >= p->pad_top && iy - p->pad_top < p->in_h && ix >= p->pad_left && ix - p->pad_left < p->in_w;
          const uint8_t xv = inside ? x[(iy - p->pad_top) * p->x_stride + (ix - p->pad_left)] : p->x_zero_point;
          acc += (uint32_t)(xv ^ x_xor) * (uint32_t)(int32_t)wt[ky * kw4 + kx];
        }
      }
      const int32_t q = q8rt_round_clamp((float)(int32_t)acc * scale, p->rq.y_lo, p->rq.y_hi) + p->rq.y_zero_point;
      y[oy * p->y_stride + ox] = p->rq.y_signed ? (uint8_t)(int8_t)q : (uint8_t)q;
    }
  }
}
