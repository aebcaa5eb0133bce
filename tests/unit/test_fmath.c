/* src/common/fmath.h: q8rt's own exp/log/log1p/erf/tanh of float against libm's double functions
 * rounded to float (within 1 ulp everywhere, and equal on almost every input), and the C99 special
 * values. The unit tests also run under qemu-aarch64 (make test-aarch64), where the same checks hold;
 * tests/aarch64/compare_bytes.py's math model checks that both give the same bits. */
#include <math.h>
#include <string.h>

#include "common/fmath.h"
#include "test.h"

/* distance in representable floats (same-signed finite values, or both zero) */
static uint32_t ulp_dist(float a, float b) {
  int32_t ia, ib;
  memcpy(&ia, &a, sizeof(ia));
  memcpy(&ib, &b, sizeof(ib));
  if (ia < 0) ia = (int32_t)(0x80000000u - (uint32_t)ia);
  if (ib < 0) ib = (int32_t)(0x80000000u - (uint32_t)ib);
  const int64_t d = (int64_t)ia - (int64_t)ib;
  return (uint32_t)(d < 0 ? -d : d);
}

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof(a)) == 0; }

typedef struct fm_case {
  const char *name;
  float (*fn)(float);
  double (*ref)(double);
  double lo, hi; /* the domain swept */
} fm_case;

static const fm_case g_cases[] = {
    {"exp", q8rt_expf, exp, -104.0, 89.0},       {"log", q8rt_logf, log, 0.0, 3.5e38},
    {"log1p", q8rt_log1pf, log1p, -1.0, 3.5e38}, {"erf", q8rt_erff, erf, -5.0, 5.0},
    {"tanh", q8rt_tanhf, tanh, -10.0, 10.0},
};

Q8RT_TEST(fmath_within_one_ulp_of_libm_double) {
  uint32_t state = 0x2545f491u;
  for (size_t c = 0; c < sizeof(g_cases) / sizeof(g_cases[0]); c++) {
    const fm_case *k = &g_cases[c];
    long n = 0, exact = 0;
    /* every 4099th bit pattern (all magnitudes, both signs), then 200000 random points of the domain */
    for (uint64_t i = 0; i < (1ull << 32) / 4099 + 200000; i++) {
      float x;
      if (i < (1ull << 32) / 4099) {
        const uint32_t b = (uint32_t)(i * 4099);
        memcpy(&x, &b, sizeof(x));
      } else {
        const double t = (double)test_xorshift32(&state) / 4294967296.0;
        x = (float)(k->lo + (k->hi - k->lo) * t);
      }
      if (!(x >= k->lo && x <= k->hi)) continue;
      const float got = k->fn(x), want = (float)k->ref((double)x);
      if (isnan(want)) {
        CHECK(isnan(got));
        continue;
      }
      const uint32_t d = ulp_dist(got, want);
      if (d > 1) fprintf(stderr, "%s(%a) = %a, libm %a\n", k->name, (double)x, (double)got, (double)want);
      CHECK(d <= 1);
      n++;
      exact += d == 0;
    }
    /* double-precision evaluation rounds to the nearest float except within ~1e-14 of a midpoint */
    CHECK(n > 100000);
    CHECK(exact * 10000 >= n * 9999);
  }
  return 0;
}

Q8RT_TEST(fmath_special_values) {
  const float inf = INFINITY;
  CHECK(same_bits(q8rt_expf(0.0f), 1.0f));
  CHECK(same_bits(q8rt_expf(-0.0f), 1.0f));
  CHECK(same_bits(q8rt_expf(inf), inf));
  CHECK(same_bits(q8rt_expf(-inf), 0.0f));
  CHECK(same_bits(q8rt_expf(89.0f), inf));
  CHECK(same_bits(q8rt_expf(-104.0f), 0.0f));
  CHECK(q8rt_expf(-100.0f) > 0.0f); /* a subnormal result */
  CHECK(isnan(q8rt_expf(NAN)));
  CHECK(same_bits(q8rt_logf(1.0f), 0.0f));
  CHECK(same_bits(q8rt_logf(0.0f), -inf));
  CHECK(same_bits(q8rt_logf(-0.0f), -inf));
  CHECK(same_bits(q8rt_logf(inf), inf));
  CHECK(isnan(q8rt_logf(-1.0f)) && isnan(q8rt_logf(-inf)) && isnan(q8rt_logf(NAN)));
  CHECK(q8rt_logf(1.4e-45f) < -103.0f); /* the smallest subnormal */
  CHECK(same_bits(q8rt_log1pf(0.0f), 0.0f));
  CHECK(same_bits(q8rt_log1pf(-0.0f), -0.0f));
  CHECK(same_bits(q8rt_log1pf(-1.0f), -inf));
  CHECK(same_bits(q8rt_log1pf(inf), inf));
  CHECK(same_bits(q8rt_log1pf(1e-30f), 1e-30f));
  CHECK(isnan(q8rt_log1pf(-2.0f)) && isnan(q8rt_log1pf(NAN)));
  CHECK(same_bits(q8rt_erff(0.0f), 0.0f));
  CHECK(same_bits(q8rt_erff(-0.0f), -0.0f));
  CHECK(same_bits(q8rt_erff(inf), 1.0f));
  CHECK(same_bits(q8rt_erff(-inf), -1.0f));
  CHECK(same_bits(q8rt_erff(1e-30f), (float)(1e-30 * 1.12837916709551257390)));
  CHECK(isnan(q8rt_erff(NAN)));
  CHECK(same_bits(q8rt_tanhf(0.0f), 0.0f));
  CHECK(same_bits(q8rt_tanhf(-0.0f), -0.0f));
  CHECK(same_bits(q8rt_tanhf(inf), 1.0f));
  CHECK(same_bits(q8rt_tanhf(-inf), -1.0f));
  CHECK(same_bits(q8rt_tanhf(1e-30f), 1e-30f));
  CHECK(isnan(q8rt_tanhf(NAN)));
  return 0;
}
