/* Depthwise convolution, scalar: the numerics reference for every qu8-dwconv variant. It reads any
 * variant's packing through its cb argument. Per channel c of output pixel p:
 *   acc = bias'[c] + sum_t (x_t[c] ^ x_xor) * w[t][c]          (uint32, wraps like the int32 contract)
 *   y   = round_clamp((float)(int32)acc * scale[c], y_lo, y_hi) + y_zero_point */
#include <string.h>

#include "q8rt-kernels.h"
#include "q8rt-math.h"

void q8rt_qu8_dwconv_minmax_fp32_ukernel__scalar(size_t channels, size_t pixels, const uint8_t *const *indirection,
                                                 size_t taps, const void *w, void *y, size_t y_stride,
                                                 const q8rt_qu8_requant_params *p, size_t cb) {
  const uint8_t x_xor = p->x_xor;
  const float lo = p->y_lo, hi = p->y_hi;
  const int32_t zp = p->y_zero_point;
  const size_t block_bytes = cb * (sizeof(int32_t) + taps * sizeof(int16_t) + sizeof(float));
  for (size_t px = 0; px < pixels; px++) {
    const uint8_t *const *in = indirection + px * taps;
    uint8_t *out = (uint8_t *)y + px * y_stride;
    const uint8_t *blk = (const uint8_t *)w;
    for (size_t c0 = 0; c0 < channels; c0 += cb, blk += block_bytes) {
      const uint8_t *pw = blk + cb * sizeof(int32_t);
      const uint8_t *ps = pw + taps * cb * sizeof(int16_t);
      const size_t n = channels - c0 < cb ? channels - c0 : cb;
      for (size_t j = 0; j < n; j++) {
        /* memcpy: the packed buffer has no alignment promise for arbitrary cb. */
        uint32_t acc;
        memcpy(&acc, blk + j * sizeof(int32_t), sizeof(acc));
        for (size_t t = 0; t < taps; t++) {
          int16_t wt;
          memcpy(&wt, pw + (t * cb + j) * sizeof(int16_t), sizeof(wt));
          acc += (uint32_t)(in[t][c0 + j] ^ x_xor) * (uint32_t)(int32_t)wt;
        }
        float s;
        memcpy(&s, ps + j * sizeof(float), sizeof(s));
        const int32_t q = q8rt_round_clamp((float)(int32_t)acc * s, lo, hi) + zp;
        if (p->y_signed)
          ((int8_t *)out)[c0 + j] = (int8_t)q;
        else
          out[c0 + j] = (uint8_t)q;
      }
    }
  }
}
