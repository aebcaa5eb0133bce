/* f32-dwconv-hwc: the scalar twin against values written here (products rounded before the add,
 * taps in row-major order, strides and dilations on both axes), and every variant of
 * f32-dwconv-hwc.inc against the twin bit for bit (NaNs compared as NaN: test_f32_same) over
 * row lengths around the 8-output tiles, 1-3 output rows, kernels 1-5 by 1-5, strides 1-2 and
 * dilations 1-2 per axis, with NaN, +-0, +-inf and values whose fused and unfused results differ.
 * Exact buffer sizes for ASan. */
#include <math.h>
#include <stdlib.h>

#include "f32-dwconv-hwc/f32-dwconv-hwc.h"
#include "q8rt-isa.h"
#include "test.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_dwconv_hwc_ukernel_fn fn;
  size_t cb;
} g_f32_dwconv_hwc_variants[] = {
#define Q8RT_F32_DWCONV_HWC_UKERNEL(isa, fn, cb) {#fn, isa, fn, cb},
#include "f32-dwconv-hwc/f32-dwconv-hwc.inc"
#undef Q8RT_F32_DWCONV_HWC_UKERNEL
    {NULL, 0, NULL, 0},
};

static uint32_t fh_rng = 0x2545f491u;

static float fh_value(int specials) {
  const uint32_t r = test_xorshift32(&fh_rng);
  if (specials) {
    switch (r % 32) {
      case 0: return NAN;
      case 1: return -0.0f;
      case 2: return INFINITY;
      case 3: return -INFINITY;
      default: break;
    }
  }
  /* 1 + 2^-12 style values: products need more than 24 bits, so a fused add would differ */
  return ((float)((int32_t)(r >> 8) % 4096) + 0.5f) * (1.0f + ldexpf(1.0f, -12)) * 0.01f;
}

Q8RT_TEST(f32_dwconv_hwc_scalar_values) {
  /* two lanes, a 3x3 input, a 2x2 kernel at stride 1: lane 1's weights are lane 0's times 10 */
  float x[9 * 2], w[4 * 2], y[4 * 2];
  for (int i = 0; i < 9; i++) x[2 * i] = x[2 * i + 1] = (float)(i + 1);
  for (int i = 0; i < 4; i++) w[2 * i] = (float)(i + 1), w[2 * i + 1] = (float)(10 * (i + 1));
  q8rt_f32_dwconv_hwc_ukernel__scalar(2, 2, 2, 2, 2, 1, 1, 1, 1, x, 3, w, NULL, y);
  CHECK(y[0] == 1 * 1 + 2 * 2 + 4 * 3 + 5 * 4 && y[1] == 10.0f * y[0]);
  CHECK(y[2] == 2 * 1 + 3 * 2 + 5 * 3 + 6 * 4); /* output (0, 1) */
  CHECK(y[4] == 4 * 1 + 5 * 2 + 7 * 3 + 8 * 4); /* output (1, 0) */
  CHECK(y[6] == 5 * 1 + 6 * 2 + 8 * 3 + 9 * 4 && y[7] == 10.0f * y[6]);
  /* stride 2 and dilation 2 on the columns, one lane: taps at columns 0 and 2, then 2 and 4 */
  const float xs[5] = {1, 2, 3, 4, 5}, ws[2] = {1, 100};
  float ys[2];
  q8rt_f32_dwconv_hwc_ukernel__scalar(1, 1, 2, 1, 2, 1, 2, 1, 2, xs, 5, ws, NULL, ys);
  CHECK(ys[0] == 301.0f && ys[1] == 503.0f);
  /* the product is rounded before the add: -1 + (1 + 2^-12)^2 is 2^-11, an fma would keep 2^-24 */
  const float a = 1.0f + ldexpf(1.0f, -12), x2[2] = {-1.0f, a}, w2[2] = {1.0f, a};
  float z = 1.0f;
  q8rt_f32_dwconv_hwc_ukernel__scalar(1, 1, 1, 1, 2, 1, 1, 1, 1, x2, 2, w2, NULL, &z);
  CHECK(z == ldexpf(1.0f, -11));
  /* the sum starts at +0: a lone -0 product stays -0 + ... = +0 */
  const float xz[1] = {-0.0f}, wz[1] = {1.0f};
  float yz = -1.0f;
  q8rt_f32_dwconv_hwc_ukernel__scalar(1, 1, 1, 1, 1, 1, 1, 1, 1, xz, 1, wz, NULL, &yz);
  CHECK(yz == 0.0f && !signbit(yz));
  /* the bias after the taps, a lane's own: 3 * 2 + 0.5, 3 * -1 + -0 */
  const float xb[2] = {3.0f, 3.0f}, wb[2] = {2.0f, -1.0f}, bb[2] = {0.5f, -0.0f};
  float yb[2];
  q8rt_f32_dwconv_hwc_ukernel__scalar(2, 1, 1, 1, 1, 1, 1, 1, 1, xb, 1, wb, bb, yb);
  CHECK(yb[0] == 6.5f && yb[1] == -3.0f);
  /* added last: (0 + 2^24 - 2^24) + 1 = 1, where the bias first would give 1 + 2^24 = 2^24 (to
   * even), then 0 */
  const float xc[2] = {16777216.0f, -16777216.0f}, wc[2] = {1.0f, 1.0f}, bc[1] = {1.0f};
  float yc = -1.0f;
  q8rt_f32_dwconv_hwc_ukernel__scalar(1, 1, 1, 1, 2, 1, 1, 1, 1, xc, 2, wc, bc, &yc);
  CHECK(yc == 1.0f);
  return 0;
}

Q8RT_TEST(f32_dwconv_hwc_variants_match_scalar) {
  size_t with_bias = 0;
  int tested = 0;
  const size_t ows[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 23};
  for (size_t v = 0; g_f32_dwconv_hwc_variants[v].fn != NULL; v++) {
    if (!test_isa_supported(g_f32_dwconv_hwc_variants[v].isa)) continue;
    tested++;
    const size_t cb = g_f32_dwconv_hwc_variants[v].cb;
    size_t cases = 0;
    for (size_t io = 0; io < sizeof(ows) / sizeof(ows[0]); io++) {
      for (size_t kh = 1; kh <= 5; kh++) {
        for (size_t kw = 1; kw <= 5; kw += (kh == 3 ? 1 : 2)) {
          for (size_t sd = 0; sd < 16; sd++) {
            const size_t ow = ows[io], oh = 1 + (ow + kh + sd) % 3, s1 = 1 + (sd & 1), s2 = 1 + (sd >> 1 & 1),
                         d1 = 1 + (sd >> 2 & 1), d2 = 1 + (sd >> 3 & 1);
            /* the bordered rows: as wide as the taps reach, sometimes wider */
            const size_t x_rs = (ow - 1) * s2 + (kw - 1) * d2 + 1 + (sd + io) % 3;
            const size_t rows = (oh - 1) * s1 + (kh - 1) * d1 + 1, nx = rows * x_rs * cb;
            const int specials = (ow + kw + sd) % 5 == 0;
            float *x = malloc(nx * sizeof(float)), *w = malloc(kh * kw * cb * sizeof(float));
            /* a bias on half the cases (exact size: the kernel reads cb of them) */
            float *bias = (sd + io) % 2 ? malloc(cb * sizeof(float)) : NULL;
            for (size_t i = 0; bias != NULL && i < cb; i++) bias[i] = fh_value(specials) * 100.0f;
            float *a = malloc(oh * ow * cb * sizeof(float)), *b = malloc(oh * ow * cb * sizeof(float));
            for (size_t i = 0; i < nx; i++) x[i] = fh_value(specials);
            for (size_t i = 0; i < kh * kw * cb; i++) w[i] = fh_value(specials) - 20.0f;
            for (size_t i = 0; i < oh * ow * cb; i++) a[i] = b[i] = 7.0f;
            q8rt_f32_dwconv_hwc_ukernel__scalar(cb, oh, ow, kh, kw, s1, s2, d1, d2, x, x_rs, w, bias, a);
            g_f32_dwconv_hwc_variants[v].fn(oh, ow, kh, kw, s1, s2, d1, d2, x, x_rs, w, bias, b);
            if (!test_f32_same(a, b, oh * ow * cb)) {
              fprintf(stderr, "  %s oh=%zu ow=%zu kh=%zu kw=%zu s=%zu,%zu d=%zu,%zu x_rs=%zu\n",
                      g_f32_dwconv_hwc_variants[v].name, oh, ow, kh, kw, s1, s2, d1, d2, x_rs);
              CHECK(0);
            }
            cases++;
            with_bias += bias != NULL;
            free(x);
            free(w);
            free(bias);
            free(a);
            free(b);
          }
        }
      }
    }
    CHECK(cases > 1000);
    CHECK(with_bias > 500);
  }
#if defined(__x86_64__) || defined(__aarch64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
