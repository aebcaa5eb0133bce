/* q8-softmax: the scalar twin against the formula written out here (the one QLinearSoftmax's
 * strided rows use), and every variant of q8-softmax.inc against the twin byte for byte: uint8
 * and int8, row lengths around the vector widths, tables of ordinary, huge (sum overflows to inf)
 * and zero entries (sum 0: NaN and inf quotients), zero points at the type limits. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "q8-softmax/q8-softmax.h"
#include "q8rt-isa.h"
#include "test.h"

typedef struct sm_variant {
  const char *name;
  unsigned isa;
  q8rt_q8_softmax_ukernel_fn fn;
} sm_variant;

static const sm_variant g_sm_variants[] = {
#define Q8RT_Q8_SOFTMAX_UKERNEL(isa, fn) {#fn, isa, fn},
#include "q8-softmax/q8-softmax.inc"
#undef Q8RT_Q8_SOFTMAX_UKERNEL
    {NULL, 0, NULL},
};

static uint32_t sm_rng = 0x2468aceu;
static uint32_t sm_rnd(void) { return test_xorshift32(&sm_rng); }

static void sm_table(float t[256], int mode) {
  for (int i = 0; i < 256; i++) {
    t[i] = mode == 0   ? (float)exp((i - 255) * 0.05)
           : mode == 1 ? 3e38f * (float)(i + 1) / 256.0f /* sums overflow to inf */
           : mode == 2 ? 0.0f                            /* sum 0: 0/0 */
                       : (float)exp((i - 255) * 0.5) * (1.0f + (float)(sm_rnd() % 7) / 16.0f);
  }
}

Q8RT_TEST(q8_softmax_scalar_formula) {
  float t[256];
  sm_table(t, 0);
  const uint8_t x[5] = {10, 200, 255, 0, 128};
  uint8_t y[5];
  const q8rt_q8_softmax_params p = {256.0f, 0, 255, 0};
  q8rt_q8_softmax_ukernel__scalar(1, 5, x, y, t, &p);
  float sum = 0.0f;
  for (int k = 0; k < 5; k++) sum += t[(uint8_t)(255 - 255 + x[k])];
  for (int k = 0; k < 5; k++) {
    const float v = t[x[k]] * 256.0f / sum;
    const long want = lrintf(v) > 255 ? 255 : lrintf(v);
    CHECK(y[k] == (uint8_t)want);
  }
  return 0;
}

Q8RT_TEST(q8_softmax_variants_match_scalar) {
  int tested = 0;
  const size_t lens[] = {1, 2, 7, 8, 9, 31, 32, 33, 63, 64, 65, 100, 6625};
  uint8_t *x = malloc(6625), *y1 = malloc(6625), *y2 = malloc(6625);
  float t[256];
  for (const sm_variant *v = g_sm_variants; v->fn != NULL; v++) {
    if (!test_isa_supported(v->isa)) continue;
    tested++;
    for (int is_signed = 0; is_signed < 2; is_signed++) {
      for (int mode = 0; mode < 4; mode++) {
        sm_table(t, mode);
        for (size_t il = 0; il < sizeof(lens) / sizeof(lens[0]); il++) {
          const size_t d = lens[il];
          for (size_t i = 0; i < d; i++) x[i] = (uint8_t)(sm_rnd() % (1 + sm_rnd() % 256));
          const int32_t zps[3] = {is_signed ? -128 : 0, is_signed ? 127 : 255, is_signed ? 0 : 128};
          for (int z = 0; z < 3; z++) {
            const q8rt_q8_softmax_params p = {(float)(1 + sm_rnd() % 300), zps[z], is_signed ? 127 : 255, is_signed};
            q8rt_q8_softmax_ukernel__scalar(1, d, x, y1, t, &p);
            v->fn(1, d, x, y2, t, &p);
            CHECK(memcmp(y1, y2, d) == 0);
          }
        }
      }
    }
  }
  free(x), free(y1), free(y2);
#if defined(__x86_64__)
  CHECK(tested >= 1);
#endif
  return 0;
}

/* Several rows per call: every variant against the twin row by row (the AVX2 variant sums four
 * rows at once and, from 128 elements, maps each row through a 256-byte output table of its own):
 * row counts 1-9 (whole groups of four and every remainder), lengths either side of 128, rows
 * whose maxima differ (each row its own shift), every table mode, zero points at the limits. */
Q8RT_TEST(q8_softmax_variants_match_scalar_rows) {
  int tested = 0;
  const size_t lens[] = {1, 33, 127, 128, 129, 257, 1000};
  enum { MAXR = 9, MAXD = 1000 };
  uint8_t *x = malloc(MAXR * MAXD), *y1 = malloc(MAXR * MAXD), *y2 = malloc(MAXR * MAXD);
  float t[256];
  for (const sm_variant *v = g_sm_variants; v->fn != NULL; v++) {
    if (!test_isa_supported(v->isa)) continue;
    tested++;
    for (int is_signed = 0; is_signed < 2; is_signed++) {
      for (int mode = 0; mode < 4; mode++) {
        sm_table(t, mode);
        for (size_t il = 0; il < sizeof(lens) / sizeof(lens[0]); il++) {
          const size_t d = lens[il];
          for (size_t rows = 1; rows <= MAXR; rows++) {
            for (size_t r = 0; r < rows; r++) {
              const uint32_t span = 1 + sm_rnd() % 256;
              for (size_t i = 0; i < d; i++) x[r * d + i] = (uint8_t)(sm_rnd() % span);
            }
            const int32_t zps[3] = {is_signed ? -128 : 0, is_signed ? 127 : 255, is_signed ? 0 : 128};
            for (int z = 0; z < 3; z++) {
              const q8rt_q8_softmax_params p = {(float)(1 + sm_rnd() % 300), zps[z], is_signed ? 127 : 255, is_signed};
              memset(y2, 0xa5, MAXR * MAXD);
              for (size_t r = 0; r < rows; r++) q8rt_q8_softmax_ukernel__scalar(1, d, x + r * d, y1 + r * d, t, &p);
              v->fn(rows, d, x, y2, t, &p);
              CHECK(memcmp(y1, y2, rows * d) == 0);
              CHECK(rows * d == MAXR * MAXD || y2[rows * d] == 0xa5); /* nothing written past the rows */
            }
          }
        }
      }
    }
  }
  free(x), free(y1), free(y2);
#if defined(__x86_64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
