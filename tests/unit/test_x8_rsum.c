/* x8-rsum: the scalar twins against sums written here, and every variant of x8-rsum.inc against
 * the scalar twins, for uint8 and int8, over lengths around the vector widths and the 256-pixel
 * widening step, odd strides, all-255 / all-0x80 inputs (the extremes of both types). Exact
 * buffer sizes so ASan sees any out-of-bounds access. */
#include <stdbool.h>
#include <stdlib.h>

#include "q8rt-isa.h"
#include "test.h"
#include "x8-rsum/x8-rsum.h"

typedef struct rsum_variant {
  const char *name;
  unsigned isa;
  q8rt_x8_rsum_ukernel_fn rsum;
  q8rt_x8_csum_ukernel_fn csum;
} rsum_variant;

static const rsum_variant g_rsum_variants[] = {
#define Q8RT_X8_RSUM_UKERNEL(isa, rsum, csum) {#rsum, isa, rsum, csum},
#include "x8-rsum/x8-rsum.inc"
#undef Q8RT_X8_RSUM_UKERNEL
    {NULL, 0, NULL, NULL},
};

static uint32_t rs_rng = 0x51ed270bu;
static uint32_t rs_rnd(void) { return test_xorshift32(&rs_rng); }

static uint8_t *rs_fill(size_t n, int mode) {
  uint8_t *p = malloc(n ? n : 1);
  for (size_t i = 0; i < n; i++) p[i] = mode == 0 ? (uint8_t)rs_rnd() : mode == 1 ? 0xff : 0x80;
  return p;
}

Q8RT_TEST(x8_rsum_scalar_sums) {
  const uint8_t x[6] = {0, 1, 127, 128, 255, 200};
  int32_t out[3];
  q8rt_x8_rsum_ukernel__scalar(2, 3, x, 3, 0, out);
  CHECK(out[0] == 128 && out[1] == 128 + 255 + 200);
  q8rt_x8_rsum_ukernel__scalar(2, 3, x, 3, 1, out);
  CHECK(out[0] == 128 && out[1] == -128 - 1 - 56);
  q8rt_x8_csum_ukernel__scalar(2, 3, x, 3, 0, out);
  CHECK(out[0] == 128 && out[1] == 256 && out[2] == 327);
  q8rt_x8_csum_ukernel__scalar(2, 3, x, 3, 1, out);
  CHECK(out[0] == -128 && out[1] == 0 && out[2] == 127 - 56);
  return 0;
}

Q8RT_TEST(x8_rsum_variants_match_scalar) {
  int tested = 0;
  const size_t lens[] = {1, 7, 31, 32, 33, 64, 95, 255, 256, 257, 600};
  const size_t widths[] = {1, 5, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 56, 64, 70}; /* blocks of 32, 16, 8 */
  for (const rsum_variant *v = g_rsum_variants; v->rsum != NULL; v++) {
    if (!test_isa_supported(v->isa)) continue;
    tested++;
    for (int is_signed = 0; is_signed < 2; is_signed++) {
      for (int mode = 0; mode < 3; mode++) {
        for (size_t il = 0; il < sizeof(lens) / sizeof(lens[0]); il++) {
          for (size_t iw = 0; iw < sizeof(widths) / sizeof(widths[0]); iw++) {
            const size_t n = lens[il], w = widths[iw], stride = w + rs_rnd() % 3;
            /* rows x n (row sums) and n pixels x w channels (column sums), both exact-sized */
            uint8_t *x = rs_fill((w - 1) * (n + 2) + n, mode);
            int32_t a[80], b[80];
            q8rt_x8_rsum_ukernel__scalar(w, n, x, n + 2, is_signed, a);
            v->rsum(w, n, x, n + 2, is_signed, b);
            CHECK(memcmp(a, b, w * sizeof(int32_t)) == 0);
            free(x);
            x = rs_fill((n - 1) * stride + w, mode);
            q8rt_x8_csum_ukernel__scalar(n, w, x, stride, is_signed, a);
            v->csum(n, w, x, stride, is_signed, b);
            CHECK(memcmp(a, b, w * sizeof(int32_t)) == 0);
            free(x);
          }
        }
      }
    }
  }
#if defined(__x86_64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
