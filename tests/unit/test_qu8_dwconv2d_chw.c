/* qu8-dwconv2d-chw: the scalar twin against sums written here, and every variant of
 * qu8-dwconv2d-chw.inc against the twin over output widths around the vector widths and the
 * 4-vector blocks, kernels 1x1 to 5x5 (and 1x7), strides 1-3, dilations 1-2, both activation
 * types, weights at +-255. The input ends at the last byte the sum names, so ASan sees any read
 * past it. */
#include <stdlib.h>

#include "qu8-dwconv2d-chw/qu8-dwconv2d-chw.h"
#include "test.h"

typedef struct dwc_variant {
  const char *name;
  unsigned isa;
  q8rt_qu8_dwconv2d_chw_ukernel_fn fn;
} dwc_variant;

static const dwc_variant g_dwc_variants[] = {
#define Q8RT_QU8_DWCONV2D_CHW_UKERNEL(isa, fn) {#fn, isa, fn},
#include "qu8-dwconv2d-chw/qu8-dwconv2d-chw.inc"
#undef Q8RT_QU8_DWCONV2D_CHW_UKERNEL
    {NULL, 0, NULL},
};

static uint32_t dc_rng = 0x1b873593u;

Q8RT_TEST(qu8_dwconv2d_chw_scalar_sums) {
  /* 2x2 kernel, stride 2, dilation 1, row stride 5: y[ox] = bias + sum of the 4 bytes */
  const uint8_t x[10] = {1, 2, 3, 4, 5, 10, 20, 30, 40, 50};
  const int32_t w[4] = {1, -2, 255, -255};
  int32_t y[2];
  q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar(2, 2, 2, x, 5, 2, 1, 0, w, 7, y);
  CHECK(y[0] == 7 + 1 - 4 + 2550 - 5100 && y[1] == 7 + 3 - 8 + 30 * 255 - 40 * 255);
  const uint8_t xs[2] = {0x80, 0x7f}; /* int8 -128 and 127: 0 and 255 in the uint8 domain */
  const int32_t w1[1] = {-3};
  q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar(2, 1, 1, xs, 0, 1, 1, 0x80, w1, 0, y);
  CHECK(y[0] == 0 && y[1] == -765);
  return 0;
}

Q8RT_TEST(qu8_dwconv2d_chw_variants_vs_scalar) {
  /* {1, 25} at dilation 2 spans 48 bytes, the widest the AVX2 variant's short-row stack copy takes
   * (its 64 bytes end at the last 16-byte load of a stride-2 row of 8 outputs); dilation 7 puts
   * {1, 25} and {5, 5} past it (the scalar twin) and {1, 7} just under it (42) */
  static const size_t kdims[][2] = {{1, 1}, {3, 3}, {5, 5}, {1, 7}, {2, 3}, {1, 25}};
  static const size_t dws[] = {1, 2, 7};
  for (const dwc_variant *v = g_dwc_variants; v->name != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      printf("     skip %s (CPU lacks its ISA)\n", v->name);
      continue;
    }
    for (size_t kd = 0; kd < sizeof(kdims) / sizeof(kdims[0]); kd++) {
      for (size_t sw = 1; sw <= 3; sw++) {
        for (size_t di = 0; di < sizeof(dws) / sizeof(dws[0]); di++) {
          const size_t dw = dws[di];
          for (size_t ow = 1; ow <= 140; ow += (ow < 70 ? 1 : 13)) {
            const size_t kh = kdims[kd][0], kw = kdims[kd][1];
            const size_t span = (ow - 1) * sw + (kw - 1) * dw + 1;
            const size_t rs = span + test_xorshift32(&dc_rng) % 4;
            const size_t bytes = (kh - 1) * rs + span;
            uint8_t *x = malloc(bytes);
            int32_t *y0 = malloc((ow + 1) * 4), *y1 = malloc((ow + 1) * 4);
            int32_t w[35];
            CHECK(x != NULL && y0 != NULL && y1 != NULL);
            const int mode = (int)(test_xorshift32(&dc_rng) % 3);
            for (size_t i = 0; i < bytes; i++) x[i] = mode == 0 ? 0xff : (uint8_t)test_xorshift32(&dc_rng);
            for (size_t t = 0; t < kh * kw; t++) {
              w[t] = mode == 0 ? ((t & 1) ? 255 : -255) : (int32_t)(test_xorshift32(&dc_rng) % 511) - 255;
            }
            const uint8_t x_xor = (test_xorshift32(&dc_rng) & 1) ? 0x80 : 0;
            const int32_t bias = (int32_t)test_xorshift32(&dc_rng);
            y0[ow] = y1[ow] = 12345;
            q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar(ow, kh, kw, x, rs, sw, dw, x_xor, w, bias, y0);
            v->fn(ow, kh, kw, x, rs, sw, dw, x_xor, w, bias, y1);
            const int same = memcmp(y0, y1, (ow + 1) * 4) == 0;
            if (!same) fprintf(stderr, "  %s: ow=%zu k=%zux%zu sw=%zu dw=%zu\n", v->name, ow, kh, kw, sw, dw);
            free(x);
            free(y0);
            free(y1);
            CHECK(same);
          }
        }
      }
    }
  }
  return 0;
}
