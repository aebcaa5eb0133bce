/* f32-deconv: the scalar twin against values written here (rounded products, separate adds, the
 * dot added into y), and every variant of f32-deconv.inc against the twin bit for bit (NaNs
 * compared as NaN: test_f32_same) over output-channel counts and column runs below, at and above
 * the tiles, channel counts 1-37, output strides 1-3 with the outputs in between (another tap's)
 * left untouched, with NaN, ±0, ±inf and values whose fused and unfused results differ. Exact
 * buffer sizes for ASan. */
#include <math.h>
#include <stdlib.h>

#include "f32-deconv/f32-deconv.h"
#include "q8rt-isa.h"
#include "test.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_deconv_ukernel_fn fn;
} g_f32_deconv_variants[] = {
#define Q8RT_F32_DECONV_UKERNEL(isa, fn) {#fn, isa, fn},
#include "f32-deconv/f32-deconv.inc"
#undef Q8RT_F32_DECONV_UKERNEL
    {NULL, 0, NULL},
};

static uint32_t fdc_rng = 0x1234567u;

static float fdc_value(int specials) {
  const uint32_t r = test_xorshift32(&fdc_rng);
  if (specials) {
    switch (r % 64) {
      case 0: return NAN;
      case 1: return -0.0f;
      case 2: return INFINITY;
      case 3: return -INFINITY;
      default: break;
    }
  }
  return ((float)((int32_t)(r >> 8) % 4096) - 2047.5f) * (1.0f + ldexpf(1.0f, -12)) * 0.001f;
}

Q8RT_TEST(f32_deconv_scalar_values) {
  /* 2 channels, 2 output channels, 2 columns at output stride 2 (odd outputs untouched) */
  const float x[2 * 2] = {1.0f, 2.0f, 3.0f, 4.0f};               /* x[c][j] */
  const float w[2 * 3] = {1.0f, 10.0f, 0.0f, 2.0f, 20.0f, 0.0f}; /* w[c * 3 + i * 1], 3rd unused */
  float y[2 * 4] = {0.5f, 7.0f, 0.5f, 7.0f, 0.0f, 7.0f, 0.0f, 7.0f};
  q8rt_f32_deconv_ukernel__scalar(2, 2, 2, x, 2, w, 3, 1, y, 4, 2);
  CHECK(y[0] == 0.5f + (1 * 1 + 3 * 2) && y[2] == 0.5f + (2 * 1 + 4 * 2));
  CHECK(y[4] == 1 * 10 + 3 * 20 && y[6] == 2 * 10 + 4 * 20);
  CHECK(y[1] == 7.0f && y[3] == 7.0f && y[5] == 7.0f && y[7] == 7.0f);
  /* rounded products: (1 + 2^-12)^2 - 1 is 2^-11 here, a fused chain would keep 2^-11 + 2^-24 */
  const float a = 1.0f + ldexpf(1.0f, -12), x2[2] = {a, -1.0f}, w2[2] = {a, 1.0f};
  float z = 0.0f;
  q8rt_f32_deconv_ukernel__scalar(1, 1, 2, x2, 1, w2, 1, 1, &z, 1, 1);
  CHECK(z == ldexpf(1.0f, -11));
  return 0;
}

Q8RT_TEST(f32_deconv_variants_match_scalar) {
  int tested = 0;
  const size_t ms[] = {1, 3, 4, 5, 6, 7, 8, 9, 12, 17, 24};
  const size_t ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 64, 65, 96};
  const size_t ks[] = {1, 2, 5, 24, 37};
  for (size_t v = 0; g_f32_deconv_variants[v].fn != NULL; v++) {
    if (!test_isa_supported(g_f32_deconv_variants[v].isa)) continue;
    tested++;
    for (size_t im = 0; im < sizeof(ms) / sizeof(ms[0]); im++) {
      for (size_t in_ = 0; in_ < sizeof(ns) / sizeof(ns[0]); in_++) {
        for (size_t ik = 0; ik < sizeof(ks) / sizeof(ks[0]); ik++) {
          for (size_t y_s = 1; y_s <= 3; y_s++) {
            const size_t m = ms[im], n = ns[in_], k = ks[ik];
            const size_t x_cs = n + (k % 3), w_ms = 1 + (m + n) % 4, w_cs = m * w_ms + k % 2;
            const size_t y_ms = (n - 1) * y_s + 1 + (n % 2) * 3; /* rows touch when n is even */
            const size_t ny = (m - 1) * y_ms + (n - 1) * y_s + 1;
            const int specials = (m + n + k + y_s) % 7 == 0;
            float *x = malloc(((k - 1) * x_cs + n) * sizeof(float));
            float *w = malloc(((k - 1) * w_cs + (m - 1) * w_ms + 1) * sizeof(float));
            float *a = malloc(ny * sizeof(float)), *b = malloc(ny * sizeof(float));
            for (size_t i = 0; i < (k - 1) * x_cs + n; i++) x[i] = fdc_value(specials);
            for (size_t i = 0; i < (k - 1) * w_cs + (m - 1) * w_ms + 1; i++) w[i] = fdc_value(specials);
            for (size_t i = 0; i < ny; i++) a[i] = b[i] = fdc_value(0);
            q8rt_f32_deconv_ukernel__scalar(m, n, k, x, x_cs, w, w_cs, w_ms, a, y_ms, y_s);
            g_f32_deconv_variants[v].fn(m, n, k, x, x_cs, w, w_cs, w_ms, b, y_ms, y_s);
            if (!test_f32_same(a, b, ny)) {
              fprintf(stderr, "  %s m=%zu n=%zu k=%zu y_s=%zu\n", g_f32_deconv_variants[v].name, m, n, k, y_s);
              CHECK(0);
            }
            free(x);
            free(w);
            free(a);
            free(b);
          }
        }
      }
    }
  }
#if defined(__x86_64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
