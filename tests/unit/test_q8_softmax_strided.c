/* q8-softmax-strided: the scalar twin against q8-softmax's row twin on each column copied out (the
 * strided kernel is that row formula, column by column), and every variant of
 * q8-softmax-strided.inc against the twin byte for byte: uint8 and int8, column counts around the
 * vector widths, reduced lengths around the kept-entries buffer (32), strides equal to n and
 * larger (the gaps must stay untouched), in place, tables of ordinary, huge (sum overflows to inf)
 * and zero entries (sum 0: NaN and inf quotients), zero points at the type limits. */
#include <stdlib.h>
#include <string.h>

#include "q8-softmax-strided/q8-softmax-strided.h"
#include "q8rt-isa.h"
#include "test.h"

typedef struct sms_variant {
  const char *name;
  unsigned isa;
  q8rt_q8_softmax_strided_ukernel_fn fn;
} sms_variant;

static const sms_variant g_sms_variants[] = {
#define Q8RT_Q8_SOFTMAX_STRIDED_UKERNEL(isa, fn) {#fn, isa, fn},
#include "q8-softmax-strided/q8-softmax-strided.inc"
#undef Q8RT_Q8_SOFTMAX_STRIDED_UKERNEL
};
#define SMS_NV (sizeof(g_sms_variants) / sizeof(g_sms_variants[0]))

static uint32_t sms_rng = 0x51f7e3u;
static uint32_t sms_rnd(void) { return test_xorshift32(&sms_rng); }

static void sms_table(float t[256], int mode) {
  for (int i = 0; i < 256; i++) {
    t[i] = mode == 0   ? (float)exp((i - 255) * 0.05)
           : mode == 1 ? 3e38f * (float)(i + 1) / 256.0f /* sums overflow to inf */
           : mode == 2 ? 0.0f                            /* sum 0: 0/0 */
                       : (float)exp((i - 255) * 0.5) * (1.0f + (float)(sms_rnd() % 7) / 16.0f);
  }
}

Q8RT_TEST(q8_softmax_strided_scalar_is_row_formula) {
  enum { D = 37, N = 11, STRIDE = 13 };
  uint8_t x[D * STRIDE], y[D * STRIDE], col[D], want[D];
  float t[256];
  for (int is_signed = 0; is_signed < 2; is_signed++) {
    for (int mode = 0; mode < 4; mode++) {
      sms_table(t, mode);
      for (size_t i = 0; i < sizeof(x); i++) x[i] = (uint8_t)sms_rnd();
      const q8rt_q8_softmax_params p = {(float)(1 + sms_rnd() % 300), is_signed ? -3 : 7, is_signed ? 127 : 255,
                                        is_signed};
      q8rt_q8_softmax_strided_ukernel__scalar(D, N, STRIDE, x, y, t, &p);
      for (size_t j = 0; j < N; j++) {
        for (size_t k = 0; k < D; k++) col[k] = x[k * STRIDE + j];
        q8rt_q8_softmax_ukernel__scalar(1, D, col, want, t, &p);
        for (size_t k = 0; k < D; k++) CHECK(y[k * STRIDE + j] == want[k]);
      }
    }
  }
  return 0;
}

Q8RT_TEST(q8_softmax_strided_variants_match_scalar) {
  int tested = 0;
  const size_t ds[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 40};
  const size_t ns[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 47, 64};
  enum { MAXB = 40 * (64 + 5) };
  uint8_t *x = malloc(MAXB), *y1 = malloc(MAXB), *y2 = malloc(MAXB);
  float t[256];
  CHECK(x != NULL && y1 != NULL && y2 != NULL);
  CHECK(g_sms_variants[SMS_NV - 1].fn == q8rt_q8_softmax_strided_ukernel__scalar);
  for (size_t v = 0; v + 1 < SMS_NV; v++) {
    if (!test_isa_supported(g_sms_variants[v].isa)) continue;
    tested++;
    for (int is_signed = 0; is_signed < 2; is_signed++) {
      for (int mode = 0; mode < 4; mode++) {
        sms_table(t, mode);
        for (size_t id = 0; id < sizeof(ds) / sizeof(ds[0]); id++) {
          for (size_t in = 0; in < sizeof(ns) / sizeof(ns[0]); in++) {
            const size_t d = ds[id], n = ns[in], stride = n + (sms_rnd() % 2 ? 0 : 1 + sms_rnd() % 5);
            const size_t bytes = (d - 1) * stride + n;
            for (size_t i = 0; i < bytes; i++) x[i] = (uint8_t)(sms_rnd() % (1 + sms_rnd() % 256));
            const int32_t zps[3] = {is_signed ? -128 : 0, is_signed ? 127 : 255, is_signed ? 0 : 128};
            const int32_t zp = zps[sms_rnd() % 3];
            const q8rt_q8_softmax_params p = {(float)(1 + sms_rnd() % 300), zp, is_signed ? 127 : 255, is_signed};
            memset(y1, 0xa5, bytes);
            memset(y2, 0xa5, bytes);
            q8rt_q8_softmax_strided_ukernel__scalar(d, n, stride, x, y1, t, &p);
            g_sms_variants[v].fn(d, n, stride, x, y2, t, &p);
            if (memcmp(y1, y2, bytes) != 0) {
              fprintf(stderr, "  %s: d=%zu n=%zu stride=%zu signed=%d mode=%d\n", g_sms_variants[v].name, d, n, stride,
                      is_signed, mode);
              CHECK(0);
            }
            memcpy(y2, x, bytes); /* in place */
            g_sms_variants[v].fn(d, n, stride, y2, y2, t, &p);
            for (size_t i = 0; i < bytes; i++) CHECK(y2[i] == (i % stride < n ? y1[i] : x[i]));
          }
        }
      }
    }
  }
  free(x), free(y1), free(y2);
#if defined(__x86_64__) || defined(__aarch64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
