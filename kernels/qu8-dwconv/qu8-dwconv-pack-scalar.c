/* Weight packing for qu8-dwconv (layout in q8rt-kernels.h): for each block of cb channels
 *   int32 bias'[cb] | int16 w[taps][cb] | float scale[cb]
 * The last block is padded with zero channels (bias' 0, weights 0, scale 0), so a kernel can run
 * whole blocks and only mask its loads of activations and its stores. */
#include <string.h>

#include "q8rt-kernels.h"

size_t q8rt_qu8_dwconv_packed_size(size_t channels, size_t taps, size_t cb) {
  const size_t blocks = (channels + cb - 1) / cb;
  return blocks * cb * (sizeof(int32_t) + taps * sizeof(int16_t) + sizeof(float));
}

void q8rt_qu8_dwconv_pack(size_t channels, size_t taps, size_t cb, const int16_t *w, const int32_t *bias,
                          const float *scale, int32_t x_zp_u8, void *packed) {
  uint8_t *out = (uint8_t *)packed;
  for (size_t c0 = 0; c0 < channels; c0 += cb) {
    /* Byte pointers and memcpy: no alignment is promised for the buffer or for odd cb. */
    uint8_t *pb = out;
    uint8_t *pw = out + cb * sizeof(int32_t);
    uint8_t *ps = out + cb * (sizeof(int32_t) + taps * sizeof(int16_t));
    for (size_t j = 0; j < cb; j++) {
      const size_t c = c0 + j;
      /* bias' = bias - x_zp * sum_t w, all mod 2^32: the kernel's wrapping accumulator then equals
       * the reference's sum_t (x - x_zp) * w + bias bit for bit. */
      uint32_t b = 0;
      float s = 0.0f;
      if (c < channels) {
        uint32_t wsum = 0;
        for (size_t t = 0; t < taps; t++) wsum += (uint32_t)(int32_t)w[c * taps + t];
        b = (bias != NULL ? (uint32_t)bias[c] : 0u) - (uint32_t)x_zp_u8 * wsum;
        s = scale[c];
      }
      memcpy(pb + j * sizeof(int32_t), &b, sizeof(b));
      for (size_t t = 0; t < taps; t++) {
        const int16_t wt = c < channels ? w[c * taps + t] : 0;
        memcpy(pw + (t * cb + j) * sizeof(int16_t), &wt, sizeof(wt));
      }
      memcpy(ps + j * sizeof(float), &s, sizeof(s));
    }
    out += cb * (sizeof(int32_t) + taps * sizeof(int16_t) + sizeof(float));
  }
}
