/* x8-maxpool: the scalar twins against values written here, and every variant of x8-maxpool.inc
 * against them byte for byte, uint8 and int8, over lengths around the vector widths (32, 64),
 * strides 1-3, dilations 1-3, window lengths 0-13 and the types' extremes. Exact buffer sizes. */
#include <stdlib.h>

#include "q8rt-isa.h"
#include "test.h"
#include "x8-maxpool/x8-maxpool.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_u8_maxpool_ukernel_fn u8;
  q8rt_s8_maxpool_ukernel_fn s8;
} g_x8_maxpool_variants[] = {
#define Q8RT_X8_MAXPOOL_UKERNEL(isa, u8fn, s8fn) {#u8fn, isa, u8fn, s8fn},
#include "x8-maxpool/x8-maxpool.inc"
#undef Q8RT_X8_MAXPOOL_UKERNEL
    {NULL, 0, NULL, NULL},
};

static uint32_t xm_rng = 0x6b43a9b5u;

static uint8_t xm_byte(void) {
  const uint32_t r = test_xorshift32(&xm_rng);
  return r % 8 == 0 ? 0x00 : r % 8 == 1 ? 0xff : r % 8 == 2 ? 0x80 : r % 8 == 3 ? 0x7f : (uint8_t)(r >> 8);
}

Q8RT_TEST(x8_maxpool_scalar_values) {
  const uint8_t x[4] = {0x7f, 0x80, 0x01, 0xff};
  uint8_t u[2] = {0, 0};
  q8rt_u8_maxpool_ukernel__scalar(2, 2, 2, 1, x, u);
  CHECK(u[0] == 0x80 && u[1] == 0xff);
  int8_t s[2] = {-128, -128};
  q8rt_s8_maxpool_ukernel__scalar(2, 2, 2, 1, (const int8_t *)x, s);
  CHECK(s[0] == 127 && s[1] == 1);
  return 0;
}

Q8RT_TEST(x8_maxpool_variants_match_scalar) {
  int tested = 0;
  const size_t ns[] = {1, 31, 32, 33, 63, 64, 65, 100, 129};
  for (size_t v = 0; g_x8_maxpool_variants[v].u8 != NULL; v++) {
    if (!test_isa_supported(g_x8_maxpool_variants[v].isa)) continue;
    tested++;
    for (size_t in_ = 0; in_ < sizeof(ns) / sizeof(ns[0]); in_++) {
      for (size_t s = 1; s <= 3; s++) {
        for (size_t d = 1; d <= 3; d++) {
          for (size_t k = 0; k <= 13; k += (k < 4 ? 1 : 3)) {
            const size_t n = ns[in_], len = (n - 1) * s + (k ? (k - 1) * d : 0) + 1;
            uint8_t *x = malloc(len), *a = malloc(n), *b = malloc(n);
            for (size_t i = 0; i < len; i++) x[i] = xm_byte();
            for (int sg = 0; sg < 2; sg++) {
              for (size_t i = 0; i < n; i++) a[i] = b[i] = i % 3 == 0 ? (uint8_t)(sg ? 0x80 : 0) : xm_byte();
              if (sg) {
                q8rt_s8_maxpool_ukernel__scalar(n, k, s, d, (const int8_t *)x, (int8_t *)a);
                g_x8_maxpool_variants[v].s8(n, k, s, d, (const int8_t *)x, (int8_t *)b);
              } else {
                q8rt_u8_maxpool_ukernel__scalar(n, k, s, d, x, a);
                g_x8_maxpool_variants[v].u8(n, k, s, d, x, b);
              }
              CHECK(memcmp(a, b, n) == 0);
            }
            free(x);
            free(a);
            free(b);
          }
        }
      }
    }
  }
#if defined(__x86_64__)
  CHECK(tested >= 2);
#endif
  return 0;
}
