/* f32-vbinary: the scalar twin against values written here (std::max/std::min's operand order on
 * NaN and ±0), and every variant of f32-vbinary.inc against it byte for byte, every op in its
 * three forms, over lengths 0-100 and a few long ones, with NaN, ±inf, ±0, subnormal and large
 * values on either side, out of place and in place. Exact buffer sizes (ASan sees any overrun). */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "f32-vbinary/f32-vbinary.h"
#include "q8rt-isa.h"
#include "test.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_vbinary_set set;
} g_vbin_variants[] = {
#define Q8RT_F32_VBINARY_UKERNELS(isa_flag, isa) {#isa, isa_flag, Q8RT_F32_VBINARY_TABLE(isa)},
#include "f32-vbinary/f32-vbinary.inc"
#undef Q8RT_F32_VBINARY_UKERNELS
};
#define VBIN_VARIANTS (sizeof(g_vbin_variants) / sizeof(g_vbin_variants[0]))

static uint32_t vb_rng = 0x9e3779b9u;

static float vb_value(void) {
  const uint32_t r = test_xorshift32(&vb_rng);
  switch (r % 24) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return -0.0f;
    case 4: return 0.0f;
    case 5: return 1e-40f;
    case 6: return -3e-42f;
    case 7: return 3e38f;
    case 8: return 1.0f;
    default: {
      float f;
      const uint32_t bits = (r & 0x807fffffu) | (uint32_t)(90 + (r >> 24) % 76) << 23; /* 2^-37 .. 2^38 */
      memcpy(&f, &bits, sizeof(f));
      return f;
    }
  }
}

static bool same_bits(const float *a, const float *b, size_t n) {
  return n == 0 || memcmp(a, b, n * sizeof(float)) == 0;
}

Q8RT_TEST(f32_vbinary_scalar_values) {
  const q8rt_f32_vbinary_set *s = &g_vbin_variants[VBIN_VARIANTS - 1].set; /* the list ends with the twin */
  const float a[4] = {NAN, 1.0f, -0.0f, 0.0f}, b[4] = {1.0f, NAN, 0.0f, -0.0f};
  float y[4];
  s->fn[4][0](4, a, b, y); /* max */
  CHECK(isnan(y[0]) && y[1] == 1.0f && signbit(y[2]) && !signbit(y[3]));
  s->fn[5][0](4, a, b, y); /* min */
  CHECK(isnan(y[0]) && y[1] == 1.0f && signbit(y[2]) && !signbit(y[3]));
  const float c = NAN;
  s->fn[4][1](2, a + 1, &c, y); /* max(a[i], NaN) = a[i] */
  CHECK(y[0] == 1.0f && signbit(y[1]));
  s->fn[4][2](2, a + 1, &c, y); /* max(NaN, a[i]) = NaN */
  CHECK(isnan(y[0]) && isnan(y[1]));
  const float two = 2.0f, x[2] = {1.0f, 8.0f};
  s->fn[1][2](2, x, &two, y); /* 2 - x */
  CHECK(y[0] == 1.0f && y[1] == -6.0f);
  s->fn[3][1](2, x, &two, y); /* x / 2 */
  CHECK(y[0] == 0.5f && y[1] == 4.0f);
  s->fn[3][2](2, x, &two, y); /* 2 / x */
  CHECK(y[0] == 2.0f && y[1] == 0.25f);
  const float px[4] = {-2.0f, -0.0f, NAN, 3.0f}, ps[4] = {0.5f, 4.0f, 2.0f, NAN};
  s->fn[6][0](4, px, ps, y); /* prelu: x < 0 ? x * s : x (-0 and NaN keep x) */
  CHECK(y[0] == -1.0f && y[1] == 0.0f && signbit(y[1]) && isnan(y[2]) && y[3] == 3.0f);
  return 0;
}

Q8RT_TEST(f32_vbinary_variants_match_scalar) {
  static const char *const ops[] = {"add", "sub", "mul", "div", "max", "min", "prelu"};
  const q8rt_f32_vbinary_set *twin = &g_vbin_variants[VBIN_VARIANTS - 1].set;
  int tested = 0;
  for (size_t v = 0; v + 1 < VBIN_VARIANTS; v++) {
    if (!test_isa_supported(g_vbin_variants[v].isa)) continue;
    tested++;
    for (size_t n = 0; n <= 140; n = n < 100 ? n + 1 : n + 13) {
      const size_t sz = (n ? n : 1) * sizeof(float);
      float *a = malloc(sz), *b = malloc(sz), *want = malloc(sz), *got = malloc(sz), *c = malloc(sizeof(float));
      for (size_t i = 0; i < n; i++) a[i] = vb_value(), b[i] = vb_value();
      c[0] = vb_value();
      for (int op = 0; op < Q8RT_F32_VBINARY_OP_COUNT; op++) {
        for (int form = 0; form < 3; form++) {
          const float *bb = form == 0 ? b : c;
          twin->fn[op][form](n, a, bb, want);
          g_vbin_variants[v].set.fn[op][form](n, a, bb, got);
          if (!same_bits(want, got, n)) {
            fprintf(stderr, "  %s %s form %d n %zu differs\n", g_vbin_variants[v].name, ops[op], form, n);
            CHECK(0);
          }
          memcpy(got, a, n * sizeof(float)); /* in place: y == a */
          g_vbin_variants[v].set.fn[op][form](n, got, bb, got);
          CHECK(same_bits(want, got, n));
          if (form == 0) { /* y == b */
            memcpy(got, b, n * sizeof(float));
            g_vbin_variants[v].set.fn[op][form](n, a, got, got);
            CHECK(same_bits(want, got, n));
          }
        }
      }
      free(a);
      free(b);
      free(want);
      free(got);
      free(c);
    }
  }
#if defined(__x86_64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
