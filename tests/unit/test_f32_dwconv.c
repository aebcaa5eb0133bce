/* f32-dwconv: the scalar twin against values written here (padded taps skipped, products rounded
 * before the add), and every variant of f32-dwconv.inc against the twin bit for bit (NaNs compared
 * as NaN: test_f32_same) over row lengths around the vector widths, strides 1-3, dilations 1-2,
 * pads 0-3, kernels 1-7 wide and 1-3 rows, with NaN, ±0, ±inf and values whose fused and unfused
 * results differ. Exact buffer sizes for ASan. */
#include <math.h>
#include <stdlib.h>

#include "f32-dwconv/f32-dwconv.h"
#include "q8rt-isa.h"
#include "test.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_dwconv_ukernel_fn fn;
} g_f32_dwconv_variants[] = {
#define Q8RT_F32_DWCONV_UKERNEL(isa, fn) {#fn, isa, fn},
#include "f32-dwconv/f32-dwconv.inc"
#undef Q8RT_F32_DWCONV_UKERNEL
    {NULL, 0, NULL},
};

static uint32_t fd_rng = 0x9e3779b9u;

static float fd_value(int specials) {
  const uint32_t r = test_xorshift32(&fd_rng);
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

Q8RT_TEST(f32_dwconv_scalar_values) {
  /* one row of 3 inputs, kernel 3 with pad 1: the first and last outputs skip a padded tap,
   * which an infinite weight would turn into NaN if it were added as 0 * w */
  const float x[3] = {1.0f, 2.0f, 3.0f}, w[3] = {INFINITY, 1.0f, 10.0f};
  float y[3] = {0.0f, 0.0f, 0.0f};
  q8rt_f32_dwconv_ukernel__scalar(3, 1, 3, 1, 1, 1, 3, x, 3, w, y);
  CHECK(isinf(y[0]) == 0 && y[0] == 21.0f); /* 0 + 1*1 + 2*10 */
  CHECK(isinf(y[1]) && y[1] > 0.0f);
  CHECK(isinf(y[2]) && y[2] > 0.0f);
  /* the product is rounded before the add: (1 + 2^-12)^2 + (-1) is 2^-11, fma would keep 2^-24 */
  const float a = 1.0f + ldexpf(1.0f, -12), x2[2] = {a, -1.0f}, w2[2] = {a, 1.0f};
  float z = 0.0f;
  q8rt_f32_dwconv_ukernel__scalar(1, 1, 2, 1, 1, 0, 2, x2, 2, w2, &z);
  CHECK(z == ldexpf(1.0f, -11));
  /* two rows, stride 2, dilation 2, accumulated onto y */
  const float xr[2 * 5] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, wr[2 * 2] = {1, 2, 3, 4};
  float yr[2] = {100.0f, 200.0f};
  q8rt_f32_dwconv_ukernel__scalar(2, 2, 2, 2, 2, 0, 5, xr, 5, wr, yr);
  CHECK(yr[0] == 100.0f + 1 * 1 + 3 * 2 + 6 * 3 + 8 * 4);
  CHECK(yr[1] == 200.0f + 3 * 1 + 5 * 2 + 8 * 3 + 10 * 4);
  return 0;
}

Q8RT_TEST(f32_dwconv_variants_match_scalar) {
  int tested = 0;
  const size_t ns[] = {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 48, 63, 64, 65, 100, 130, 257};
  for (size_t v = 0; g_f32_dwconv_variants[v].fn != NULL; v++) {
    if (!test_isa_supported(g_f32_dwconv_variants[v].isa)) continue;
    tested++;
    for (size_t in_ = 0; in_ < sizeof(ns) / sizeof(ns[0]); in_++) {
      for (size_t s = 1; s <= 3; s++) {
        for (size_t d = 1; d <= 2; d++) {
          for (size_t kw = 1; kw <= 7; kw += 2) {
            for (size_t pad = 0; pad <= 3; pad++) {
              const size_t rows = 1 + (ns[in_] + kw + s) % 3, n = ns[in_];
              /* input rows as wide as a conv with this pad on both sides needs, some shorter */
              const size_t span = (n - 1) * s + (kw - 1) * d + 1;
              size_t in_w = span > 2 * pad ? span - 2 * pad : 1;
              if ((n + pad) % 4 == 1 && in_w > 2) in_w -= 2;
              const size_t x_rs = in_w + (s == 2 ? 3 : 0); /* row stride above the width, sometimes */
              const int specials = (n + kw + pad) % 5 == 0;
              float *x = malloc(((rows - 1) * x_rs + in_w) * sizeof(float)), *w = malloc(rows * kw * sizeof(float));
              float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
              for (size_t i = 0; i < (rows - 1) * x_rs + in_w; i++) x[i] = fd_value(specials);
              for (size_t i = 0; i < rows * kw; i++) w[i] = fd_value(specials) - 20.0f;
              for (size_t i = 0; i < n; i++) a[i] = b[i] = i % 3 == 0 ? 0.0f : fd_value(0);
              q8rt_f32_dwconv_ukernel__scalar(n, rows, kw, s, d, pad, in_w, x, x_rs, w, a);
              g_f32_dwconv_variants[v].fn(n, rows, kw, s, d, pad, in_w, x, x_rs, w, b);
              if (!test_f32_same(a, b, n)) {
                fprintf(stderr, "  %s n=%zu rows=%zu kw=%zu s=%zu d=%zu pad=%zu in_w=%zu\n",
                        g_f32_dwconv_variants[v].name, n, rows, kw, s, d, pad, in_w);
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
  }
#if defined(__x86_64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
