/* f32-deconv-nhwc: the scalar twin against f32-deconv's twin (the same definition with the strides
 * swapped: equal bits for every output), and every variant of f32-deconv-nhwc.inc against the twin
 * bit for bit (NaNs compared as NaN: test_f32_same) over pixel runs and output-channel counts below,
 * at and above the tiles, channel counts 1-37, output pixel strides that leave other outputs (another
 * tap's) in between untouched, with NaN, ±0, ±inf and values whose fused and unfused results differ.
 * Exact buffer sizes for ASan. */
#include <stdlib.h>

#include "f32-deconv-nhwc/f32-deconv-nhwc.h"
#include "f32-deconv/f32-deconv.h"
#include "q8rt-isa.h"
#include "test.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_deconv_nhwc_ukernel_fn fn;
} g_f32_deconv_nhwc_variants[] = {
#define Q8RT_F32_DECONV_NHWC_UKERNEL(isa, fn) {#fn, isa, fn},
#include "f32-deconv-nhwc/f32-deconv-nhwc.inc"
#undef Q8RT_F32_DECONV_NHWC_UKERNEL
    {NULL, 0, NULL},
};

Q8RT_TEST(f32_deconv_nhwc_scalar_is_the_nchw_definition) {
  uint32_t state = 0x9e3779b9u;
  const size_t n = 7, m = 5, k = 11, x_ps = k + 2, w_cs = m + 1, y_ps = 2 * m + 3;
  float *x = test_f32_fill(&state, (n - 1) * x_ps + k), *w = test_f32_fill(&state, (k - 1) * w_cs + m);
  float *a = test_f32_fill(&state, (n - 1) * y_ps + m), *b = malloc(((n - 1) * y_ps + m) * sizeof(float));
  CHECK(x != NULL && w != NULL && a != NULL && b != NULL);
  for (size_t i = 0; i < (n - 1) * y_ps + m; i++) b[i] = a[i];
  q8rt_f32_deconv_nhwc_ukernel__scalar(n, m, k, x, x_ps, w, w_cs, a, y_ps);
  /* f32-deconv reads x[c * x_cs + j]: one pixel at a time (n = 1) the channel stride is 1 */
  for (size_t j = 0; j < n; j++)
    q8rt_f32_deconv_ukernel__scalar(m, 1, k, x + j * x_ps, 1, w, w_cs, 1, b + j * y_ps, 1, 1);
  CHECK(test_f32_same(a, b, (n - 1) * y_ps + m));
  free(x);
  free(w);
  free(a);
  free(b);
  return 0;
}

Q8RT_TEST(f32_deconv_nhwc_variants_match_scalar) {
  int tested = 0;
  uint32_t state = 0x2545f491u;
  const size_t ns[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 17, 24};
  const size_t ms[] = {1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 64, 65};
  const size_t ks[] = {1, 2, 5, 24, 37};
  for (size_t v = 0; g_f32_deconv_nhwc_variants[v].fn != NULL; v++) {
    if (!test_isa_supported(g_f32_deconv_nhwc_variants[v].isa)) continue;
    tested++;
    for (size_t in_ = 0; in_ < sizeof(ns) / sizeof(ns[0]); in_++) {
      for (size_t im = 0; im < sizeof(ms) / sizeof(ms[0]); im++) {
        for (size_t ik = 0; ik < sizeof(ks) / sizeof(ks[0]); ik++) {
          for (size_t gap = 0; gap <= 2; gap++) {
            const size_t n = ns[in_], m = ms[im], k = ks[ik];
            const size_t x_ps = k + (n % 3), w_cs = m + k % 2, y_ps = m * (gap + 1) + gap; /* gap: another tap's */
            const size_t nx = (n - 1) * x_ps + k, nw = (k - 1) * w_cs + m, ny = (n - 1) * y_ps + m;
            float *x = test_f32_fill(&state, nx), *w = test_f32_fill(&state, nw);
            float *a = test_f32_fill(&state, ny), *b = malloc(ny * sizeof(float));
            CHECK(x != NULL && w != NULL && a != NULL && b != NULL);
            for (size_t i = 0; i < ny; i++) b[i] = a[i];
            q8rt_f32_deconv_nhwc_ukernel__scalar(n, m, k, x, x_ps, w, w_cs, a, y_ps);
            g_f32_deconv_nhwc_variants[v].fn(n, m, k, x, x_ps, w, w_cs, b, y_ps);
            if (!test_f32_same(a, b, ny)) {
              fprintf(stderr, "  %s n=%zu m=%zu k=%zu gap=%zu\n", g_f32_deconv_nhwc_variants[v].name, n, m, k, gap);
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
#if defined(__x86_64__) || defined(__aarch64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
