/* f32-vmulcaddc: the scalar twin against values written here (a product whose fused and unfused
 * roundings differ), and every variant of f32-vmulcaddc.inc against it byte for byte over lengths
 * 0-100 with NaN, ±inf, ±0, subnormal and large values among x, s and b. Exact buffer sizes. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "f32-vmulcaddc/f32-vmulcaddc.h"
#include "q8rt-isa.h"
#include "test.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_vmulcaddc_ukernel_fn fn;
} g_vmulcaddc_variants[] = {
#define Q8RT_F32_VMULCADDC_UKERNEL(isa, fn) {#fn, isa, fn},
#include "f32-vmulcaddc/f32-vmulcaddc.inc"
#undef Q8RT_F32_VMULCADDC_UKERNEL
    {NULL, 0, NULL},
};

static uint32_t vm_rng = 0x3c6ef372u;

static float vm_value(void) {
  const uint32_t r = test_xorshift32(&vm_rng);
  switch (r % 20) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return -0.0f;
    case 4: return 1e-40f;
    case 5: return 3e38f;
    default: {
      float f;
      const uint32_t bits = (r & 0x807fffffu) | (uint32_t)(100 + (r >> 24) % 56) << 23; /* 2^-27 .. 2^28 */
      memcpy(&f, &bits, sizeof(f));
      return f;
    }
  }
}

Q8RT_TEST(f32_vmulcaddc_scalar_values) {
  /* (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 rounds (a tie, to even) to 1 + 2^-11, so adding
   * -(1 + 2^-11) gives 0; a fused multiply-add would give 2^-24 */
  const float x[2] = {1.0f + 0x1p-12f, 2.0f};
  float y[2];
  q8rt_f32_vmulcaddc_ukernel__scalar(2, x, 1.0f + 0x1p-12f, -(1.0f + 0x1p-11f), y);
  CHECK(y[0] == 0.0f && y[1] == 1.0f);
  return 0;
}

Q8RT_TEST(f32_vmulcaddc_variants_match_scalar) {
  int tested = 0;
  for (size_t v = 0; g_vmulcaddc_variants[v].fn != NULL; v++) {
    if (!test_isa_supported(g_vmulcaddc_variants[v].isa)) continue;
    tested++;
    for (size_t n = 0; n <= 100; n++) {
      float *x = malloc((n ? n : 1) * sizeof(float)), *a = malloc((n ? n : 1) * sizeof(float));
      float *b = malloc((n ? n : 1) * sizeof(float));
      for (size_t i = 0; i < n; i++) x[i] = vm_value();
      const float s = n % 7 == 0 ? 1.0f + 0x1p-12f : vm_value(), c = n % 7 == 0 ? -(1.0f + 0x1p-11f) : vm_value();
      q8rt_f32_vmulcaddc_ukernel__scalar(n, x, s, c, a);
      g_vmulcaddc_variants[v].fn(n, x, s, c, b);
      CHECK(n == 0 || memcmp(a, b, n * sizeof(float)) == 0);
      free(x);
      free(a);
      free(b);
    }
  }
#if defined(__x86_64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
