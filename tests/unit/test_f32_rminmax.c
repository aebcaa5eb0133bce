/* f32-rminmax: the scalar twin against bounds written here (NaNs ignored, an all-NaN row keeps the
 * starting bounds, infinities count), and every variant of f32-rminmax.inc against the twin over
 * lengths around the vector widths and the 4-vector blocks, with NaNs (signalling ones too),
 * infinities, subnormals and the extremes at every position (values compared, a zero's sign
 * aside: see f32-rminmax.h). The row ends at its last element (ASan). */
#include <float.h>
#include <stdlib.h>

#include "f32-rminmax/f32-rminmax.h"
#include "test.h"

typedef struct rmm_variant {
  const char *name;
  unsigned isa;
  q8rt_f32_rminmax_ukernel_fn fn;
} rmm_variant;

static const rmm_variant g_rmm_variants[] = {
#define Q8RT_F32_RMINMAX_UKERNEL(isa, fn) {#fn, isa, fn},
#include "f32-rminmax/f32-rminmax.inc"
#undef Q8RT_F32_RMINMAX_UKERNEL
    {NULL, 0, NULL},
};

static uint32_t rm_rng = 0x9e3779b9u;

Q8RT_TEST(f32_rminmax_scalar_bounds) {
  const float x[5] = {NAN, -2.5f, 7.0f, NAN, 0.5f};
  float lo = FLT_MAX, hi = -FLT_MAX;
  q8rt_f32_rminmax_ukernel__scalar(5, x, &lo, &hi);
  CHECK(lo == -2.5f && hi == 7.0f);
  const float nans[2] = {NAN, NAN};
  lo = FLT_MAX;
  hi = -FLT_MAX;
  q8rt_f32_rminmax_ukernel__scalar(2, nans, &lo, &hi);
  CHECK(lo == FLT_MAX && hi == -FLT_MAX);
  const float inf[2] = {INFINITY, -INFINITY};
  q8rt_f32_rminmax_ukernel__scalar(2, inf, &lo, &hi);
  CHECK(lo == -INFINITY && hi == INFINITY);
  return 0;
}

Q8RT_TEST(f32_rminmax_variants_vs_scalar) {
  static const float specials[] = {NAN, INFINITY, -INFINITY, 1.0e-40f, -0.0f, 0.0f, FLT_MAX, -FLT_MAX};
  /* signalling NaNs too: fminnm/fmaxnm (NEON) and some x86 forms turn them into a NaN result */
  const uint32_t snan_bits[2] = {0x7fa00000u, 0xff800001u};
  float snan[2];
  memcpy(snan, snan_bits, sizeof(snan));
  for (const rmm_variant *v = g_rmm_variants; v->name != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      printf("     skip %s (CPU lacks its ISA)\n", v->name);
      continue;
    }
    for (size_t n = 0; n <= 200; n++) {
      for (int mode = 0; mode < 4; mode++) {
        float *x = malloc((n ? n : 1) * sizeof(float));
        CHECK(x != NULL);
        for (size_t i = 0; i < n; i++) {
          const uint32_t r = test_xorshift32(&rm_rng);
          x[i] = mode == 0 ? NAN : (float)((int)(r % 20001) - 10000) * 0.013f;
          if (mode == 2 && r % 9 == 0) x[i] = specials[(r >> 8) % 8];
          if (mode == 2 && r % 23 == 1) x[i] = snan[(r >> 12) & 1];
        }
        if (mode == 3 && n > 0) { /* the extremes at a random position each */
          x[test_xorshift32(&rm_rng) % n] = 1.0e6f;
          x[test_xorshift32(&rm_rng) % n] = -1.0e6f;
        }
        float l0 = FLT_MAX, h0 = -FLT_MAX, l1 = FLT_MAX, h1 = -FLT_MAX;
        if (mode == 1) l0 = l1 = -5.0f; /* a previous row's bound below every value */
        q8rt_f32_rminmax_ukernel__scalar(n, x, &l0, &h0);
        v->fn(n, x, &l1, &h1);
        free(x);
        if (!(l0 == l1 && h0 == h1)) fprintf(stderr, "  %s: n=%zu mode=%d\n", v->name, n, mode);
        CHECK(l0 == l1 && h0 == h1);
      }
    }
  }
  return 0;
}
