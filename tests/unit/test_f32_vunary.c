/* f32-vunary: the scalar twin against values written here (Relu's and Clip's -0 and NaN, LeakyRelu,
 * HardSigmoid's two roundings), and every variant of f32-vunary.inc against it byte for byte, every
 * op, over lengths 0-100 and a few long ones, with NaN, ±inf, ±0, subnormal, large values and the
 * polynomial ranges of Sigmoid/Tanh; bounds and factors drawn from the same values (NaN bounds,
 * lo > hi), out of place and in place. Exact buffer sizes. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "f32-vunary/f32-vunary.h"
#include "q8rt-isa.h"
#include "test.h"

typedef q8rt_f32_vunary_ukernel_fn vun_table[Q8RT_F32_VUNARY_OP_COUNT];
static const struct {
  const char *name;
  unsigned isa;
  vun_table fn;
} g_vun_variants[] = {
#define Q8RT_F32_VUNARY_UKERNELS(isa_flag, isa) {#isa, isa_flag, Q8RT_F32_VUNARY_TABLE(isa)},
#include "f32-vunary/f32-vunary.inc"
#undef Q8RT_F32_VUNARY_UKERNELS
};
#define VUN_VARIANTS (sizeof(g_vun_variants) / sizeof(g_vun_variants[0]))

static uint32_t vu_rng = 0x2545f491u;

static float vu_value(void) {
  const uint32_t r = test_xorshift32(&vu_rng);
  switch (r % 24) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return -0.0f;
    case 4: return 0.0f;
    case 5: return 1e-40f;
    case 6: return -3e-42f;
    case 7: return -3e38f;
    case 8: return 18.0f;
    case 9: return -9.0f;
    case 10:
    case 11:
    case 12:
    case 13: return (float)((int32_t)(r >> 8) - (1 << 23)) * 0x1p-19f; /* [-16, 16) */
    default: {
      float f;
      const uint32_t bits = (r & 0x807fffffu) | (uint32_t)(90 + (r >> 24) % 76) << 23; /* 2^-37 .. 2^38 */
      memcpy(&f, &bits, sizeof(f));
      return f;
    }
  }
}

Q8RT_TEST(f32_vunary_scalar_values) {
  const vun_table *s = &g_vun_variants[VUN_VARIANTS - 1].fn; /* the list ends with the twin */
  const float x[5] = {-0.0f, NAN, -2.0f, 3.0f, 0.5f};
  float y[5];
  q8rt_f32_vunary_params p = {0.0f, INFINITY, 0.1f, 0.5f};
  (*s)[Q8RT_F32_VCLAMP](5, x, y, &p); /* Relu */
  CHECK(y[0] == 0.0f && signbit(y[0]) && isnan(y[1]) && y[2] == 0.0f && !signbit(y[2]) && y[3] == 3.0f);
  p.lo = 1.0f;
  p.hi = 0.0f; /* lo > hi: hi everywhere but NaN */
  (*s)[Q8RT_F32_VCLAMP](5, x, y, &p);
  CHECK(y[0] == 0.0f && isnan(y[1]) && y[2] == 0.0f && y[3] == 0.0f && y[4] == 0.0f);
  (*s)[Q8RT_F32_VLRELU](5, x, y, &p);
  CHECK(signbit(y[0]) && isnan(y[1]) && y[2] == -2.0f * 0.1f && y[3] == 3.0f);
  p.alpha = 0.2f;
  (*s)[Q8RT_F32_VHSIGMOID](5, x, y, &p); /* 0.2f * 0.5f rounds, then + 0.5f rounds again */
  CHECK(y[0] == 0.5f && isnan(y[1]) && y[4] == 0.2f * 0.5f + 0.5f);
  (*s)[Q8RT_F32_VNEG](5, x, y, &p);
  CHECK(y[0] == 0.0f && !signbit(y[0]) && y[2] == 2.0f);
  (*s)[Q8RT_F32_VABS](5, x, y, &p);
  CHECK(!signbit(y[0]) && y[2] == 2.0f);
  return 0;
}

Q8RT_TEST(f32_vunary_variants_match_scalar) {
  static const char *const ops[] = {"clamp", "neg", "abs", "sqrt", "lrelu", "hsigmoid", "hswish", "sigmoid", "tanh"};
  const vun_table *twin = &g_vun_variants[VUN_VARIANTS - 1].fn;
  int tested = 0;
  for (size_t v = 0; v + 1 < VUN_VARIANTS; v++) {
    if (!test_isa_supported(g_vun_variants[v].isa)) continue;
    tested++;
    for (size_t n = 0; n <= 140; n = n < 100 ? n + 1 : n + 13) {
      const size_t sz = (n ? n : 1) * sizeof(float);
      float *x = malloc(sz), *want = malloc(sz), *got = malloc(sz);
      for (size_t i = 0; i < n; i++) x[i] = vu_value();
      q8rt_f32_vunary_params p = {vu_value(), vu_value(), vu_value(), vu_value()};
      if (n % 3 == 0) p = (q8rt_f32_vunary_params){-1.0f, 6.0f, 1.0f / 6.0f, 0.5f};
      for (int op = 0; op < Q8RT_F32_VUNARY_OP_COUNT; op++) {
        (*twin)[op](n, x, want, &p);
        g_vun_variants[v].fn[op](n, x, got, &p);
        if (n > 0 && memcmp(want, got, n * sizeof(float)) != 0) {
          fprintf(stderr, "  %s %s n %zu differs\n", g_vun_variants[v].name, ops[op], n);
          CHECK(0);
        }
        memcpy(got, x, n * sizeof(float));
        g_vun_variants[v].fn[op](n, got, got, &p);
        CHECK(n == 0 || memcmp(want, got, n * sizeof(float)) == 0);
      }
      free(x);
      free(want);
      free(got);
    }
  }
#if defined(__x86_64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
