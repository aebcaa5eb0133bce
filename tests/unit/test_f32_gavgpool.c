/* f32-gavgpool: the scalar twin against values written here (a sum whose rounding depends on the
 * order: MLAS's four running sums give what a left-to-right sum does not), and every variant of
 * f32-gavgpool.inc against it byte for byte over pixels 0-41 and 100, channels 0-70 and pixel
 * strides with and without a gap, with NaN, ±inf, ±0, subnormal and large values. Exact buffer
 * sizes (the last pixel ends at the last channel: a read past it fails under ASan). NaN results
 * compare as NaN (see ga_same). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "f32-gavgpool/f32-gavgpool.h"
#include "q8rt-isa.h"
#include "test.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_gavgpool_ukernel_fn fn;
} g_gavgpool_variants[] = {
#define Q8RT_F32_GAVGPOOL_UKERNEL(isa, fn) {#fn, isa, fn},
#include "f32-gavgpool/f32-gavgpool.inc"
#undef Q8RT_F32_GAVGPOOL_UKERNEL
    {NULL, 0, NULL},
};

static uint32_t ga_rng = 0x9e3779b9u;

static float ga_value(void) {
  const uint32_t r = test_xorshift32(&ga_rng);
  switch (r % 24) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return -0.0f;
    case 4: return 1e-40f;
    case 5: return 3e38f;
    default: {
      float f;
      const uint32_t bits = (r & 0x807fffffu) | (uint32_t)(110 + (r >> 24) % 40) << 23; /* 2^-17 .. 2^22 */
      memcpy(&f, &bits, sizeof(f));
      return f;
    }
  }
}

/* Byte for byte, but any NaN equals any NaN: when two NaNs meet in a sum, which one survives
 * (payload, sign: x86's inf - inf is negative) follows the operand order the compiler picked for
 * the twin's commutative adds, which C leaves open. */
static int ga_same(const float *a, const float *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (isnan(a[i]) && isnan(b[i])) continue;
    if (memcmp(a + i, b + i, sizeof(float)) != 0) return 0;
  }
  return 1;
}

Q8RT_TEST(f32_gavgpool_scalar_values) {
  /* two channels side by side, stride 3 (a gap): channel 0's pixels 1e8, 1, -1e8, 1, 3 sum to
   * ((1e8 + -1e8) + (1 + 1)) + 3 = 5 in MLAS's order (left to right: 4); channel 1 all -0.0
   * sums to +0.0 (the sums start at +0.0) */
  const float x[15] = {1e8f, -0.0f, 9, 1, -0.0f, 9, -1e8f, -0.0f, 9, 1, -0.0f, 9, 3, -0.0f, 9};
  float y[2];
  q8rt_f32_gavgpool_ukernel__scalar(5, 2, x, 3, 5.0f, y);
  CHECK(y[0] == 1.0f);
  CHECK(y[1] == 0.0f && !signbit(y[1]));
  return 0;
}

Q8RT_TEST(f32_gavgpool_variants_match_scalar) {
  int tested = 0;
  for (size_t v = 0; g_gavgpool_variants[v].fn != NULL; v++) {
    if (!test_isa_supported(g_gavgpool_variants[v].isa)) continue;
    tested++;
    for (size_t pixels = 0; pixels <= 42; pixels++) {
      const size_t px = pixels == 42 ? 100 : pixels;
      for (size_t channels = 0; channels <= 70; channels++) {
        const size_t stride = channels + (channels % 3 == 1 ? 5 : 0);
        const size_t len = px == 0 || channels == 0 ? 1 : (px - 1) * stride + channels;
        float *x = malloc(len * sizeof(float));
        float *a = malloc((channels ? channels : 1) * sizeof(float));
        float *b = malloc((channels ? channels : 1) * sizeof(float));
        for (size_t i = 0; i < len; i++) x[i] = ga_value();
        const float count = px ? (float)px : 1.0f;
        q8rt_f32_gavgpool_ukernel__scalar(px, channels, x, stride, count, a);
        g_gavgpool_variants[v].fn(px, channels, x, stride, count, b);
        CHECK(ga_same(a, b, channels));
        free(x);
        free(a);
        free(b);
      }
    }
  }
#if defined(__x86_64__) || defined(__aarch64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
