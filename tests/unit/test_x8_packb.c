/* x8-packb: the scalar twin against a packing written here from the contract (one small case),
 * and every variant of x8-packb.inc against the twin over k around the group of 4, n around the
 * 16-column vectors and the block, NR 16, 32 and 8 (the vector variants' fallback), both
 * activation types, with and without column sums. The input ends at its last read byte (ASan). */
#include <stdlib.h>

#include "test.h"
#include "x8-packb/x8-packb.h"

typedef struct packb_variant {
  const char *name;
  unsigned isa;
  q8rt_x8_packb_ukernel_fn fn;
} packb_variant;

static const packb_variant g_packb_variants[] = {
#define Q8RT_X8_PACKB_UKERNEL(isa, fn) {#fn, isa, fn},
#include "x8-packb/x8-packb.inc"
#undef Q8RT_X8_PACKB_UKERNEL
    {NULL, 0, NULL},
};

static uint32_t pb_rng = 0x51ed270bu;

Q8RT_TEST(x8_packb_scalar_layout) {
  /* k = 5 (two groups, the second padded), n = 3 columns in one block of 16, x_xor 0 */
  uint8_t x[5 * 4];
  for (int i = 0; i < 20; i++) x[i] = (uint8_t)(i * 13 + 1);
  const size_t nr = 16, bytes = q8rt_x8_packb_block_bytes(5, nr);
  uint8_t *p = malloc(bytes);
  uint32_t cs[3];
  CHECK(p != NULL);
  q8rt_x8_packb_ukernel_c4__scalar(5, 3, x, 4, 0, nr, 1000u, 3u, p, cs);
  for (size_t j = 0; j < nr; j++) {
    uint32_t sum = 0, bias;
    for (size_t k = 0; k < 8; k++) {
      const int8_t got = (int8_t)p[nr * 4 + ((k / 4) * nr + j) * 4 + k % 4];
      const int want = j < 3 && k < 5 ? (int)x[k * 4 + j] - 128 : 0;
      CHECK(got == want);
      if (j < 3 && k < 5) sum += x[k * 4 + j];
    }
    memcpy(&bias, p + j * 4, 4);
    CHECK(bias == (j < 3 ? 1000u - 3u * sum : 0u));
    if (j < 3) CHECK(cs[j] == sum);
  }
  free(p);
  return 0;
}

Q8RT_TEST(x8_packb_variants_vs_scalar) {
  static const size_t ks[] = {1, 3, 4, 5, 8, 17, 64, 100};
  static const size_t nrs[] = {16, 32, 8};
  for (const packb_variant *v = g_packb_variants; v->name != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      printf("     skip %s (CPU lacks its ISA)\n", v->name);
      continue;
    }
    for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
      for (size_t ri = 0; ri < 3; ri++) {
        for (size_t n = 1; n <= 70; n += (n < 36 ? 1 : 11)) {
          const size_t k = ks[ki], nr = nrs[ri], stride = n + (test_xorshift32(&pb_rng) % 3);
          const size_t in_bytes = (k - 1) * stride + n;
          uint8_t *x = malloc(in_bytes);
          const size_t bytes = (n + nr - 1) / nr * q8rt_x8_packb_block_bytes(k, nr);
          uint8_t *p0 = malloc(bytes), *p1 = malloc(bytes);
          uint32_t *c0 = malloc(n * 4), *c1 = malloc(n * 4);
          CHECK(x != NULL && p0 != NULL && p1 != NULL && c0 != NULL && c1 != NULL);
          const int mode = (int)(test_xorshift32(&pb_rng) % 3);
          for (size_t i = 0; i < in_bytes; i++)
            x[i] = mode == 0 ? 0xff : mode == 1 ? 0 : (uint8_t)test_xorshift32(&pb_rng);
          const uint8_t x_xor = (test_xorshift32(&pb_rng) & 1) ? 0x80 : 0;
          const uint32_t base = test_xorshift32(&pb_rng), mul = test_xorshift32(&pb_rng) % 384;
          const int sums = (n & 1) != 0;
          memset(p0, 0xa5, bytes);
          memset(p1, 0x5a, bytes);
          q8rt_x8_packb_ukernel_c4__scalar(k, n, x, stride, x_xor, nr, base, mul, p0, sums ? c0 : NULL);
          v->fn(k, n, x, stride, x_xor, nr, base, mul, p1, sums ? c1 : NULL);
          const int same = memcmp(p0, p1, bytes) == 0 && (!sums || memcmp(c0, c1, n * 4) == 0);
          if (!same) fprintf(stderr, "  %s: k=%zu n=%zu nr=%zu xor=%u\n", v->name, k, n, nr, x_xor);
          free(x);
          free(p0);
          free(p1);
          free(c0);
          free(c1);
          CHECK(same);
        }
      }
    }
  }
  return 0;
}
