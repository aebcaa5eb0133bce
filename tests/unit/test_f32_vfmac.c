/* f32-vfmac: every variant of f32-vfmac.inc against the scalar twin, bit for bit. */
#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "test.h"

static uint32_t rng_state = 0x9e3779b9u;
/* inline: unused where the AVX2 test is compiled out */
static inline uint32_t rnd(void) { return test_xorshift32(&rng_state); }

static const struct {
  unsigned isa;
  q8rt_f32_vfmac_ukernel_fn fn;
  const char *name;
} fm_variants[] = {
#define Q8RT_F32_VFMAC_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-vfmac/f32-vfmac.inc"
#undef Q8RT_F32_VFMAC_UKERNEL
};

Q8RT_TEST(vfmac_variants_match_scalar) {
  for (size_t k = 0; k < sizeof(fm_variants) / sizeof(fm_variants[0]); k++) {
    if (fm_variants[k].isa == Q8RT_ISA_SCALAR) continue;
    if (!test_isa_supported(fm_variants[k].isa)) {
      printf("  skip %s: CPU lacks its ISA\n", fm_variants[k].name);
      continue;
    }
    for (size_t n = 0; n < 140; n += (n < 40 ? 1 : 13)) {
      float b[160] = {0}, c1[160] = {0}, c2[160] = {0};
      for (size_t j = 0; j < n; j++) {
        uint32_t r = rnd();
        b[j] = (float)(int32_t)(r % 2001 - 1000) * 1e-3f + (j % 7 == 0 ? 1e30f : 0.0f);
        c1[j] = c2[j] = (float)(int32_t)(rnd() % 2001 - 1000) * 3.3e-4f;
      }
      const float a = (float)(int32_t)(rnd() % 2001 - 1000) * 7.7e-3f;
      q8rt_f32_vfmac_ukernel__scalar(n, a, b, c1);
      fm_variants[k].fn(n, a, b, c2);
      CHECK(memcmp(c1, c2, n * sizeof(float)) == 0);
    }
  }
  return 0;
}
