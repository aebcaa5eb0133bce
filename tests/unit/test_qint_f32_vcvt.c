/* qint-f32-vcvt (DequantizeLinear): the scalar kernels against hand-computed values, every other
 * variant of qint-f32-vcvt.inc against the scalar twin of its type bit for bit. */
#include <math.h>
#include <stdlib.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "test.h"

static uint32_t cv_rng = 0x1234567u;
/* inline: unused where the AVX2 test is compiled out */
static inline uint32_t cv_rnd(void) { return test_xorshift32(&cv_rng); }

/* Every line of qint-f32-vcvt.inc, with its input type. */
enum cv_type { CV_QU8, CV_QS8, CV_QU16, CV_QS16, CV_QS32 };
#define CV_TYPE_qu8 CV_QU8
#define CV_TYPE_qs8 CV_QS8
#define CV_TYPE_qu16 CV_QU16
#define CV_TYPE_qs16 CV_QS16
#define CV_TYPE_qs32 CV_QS32
static const struct cv_variant {
  unsigned isa;
  enum cv_type type;
  q8rt_qint_f32_vcvt_ukernel_fn fn;
  const char *name;
} cv_variants[] = {
#define Q8RT_QINT_F32_VCVT_UKERNEL(isa, fn, qt) {isa, CV_TYPE_##qt, {.qt = fn}, #fn},
#include "qint-f32-vcvt/qint-f32-vcvt.inc"
#undef Q8RT_QINT_F32_VCVT_UKERNEL
};
#define CV_NVARIANTS (sizeof(cv_variants) / sizeof(cv_variants[0]))

static void cv_call(const struct cv_variant *v, size_t n, const void *x, float *y, const q8rt_qint_f32_vcvt_params *p) {
  switch (v->type) {
    case CV_QU8: v->fn.qu8(n, x, y, p); break;
    case CV_QS8: v->fn.qs8(n, x, y, p); break;
    case CV_QU16: v->fn.qu16(n, x, y, p); break;
    case CV_QS16: v->fn.qs16(n, x, y, p); break;
    case CV_QS32: v->fn.qs32(n, x, y, p); break;
  }
}

/* Every non-scalar variant of the list against the scalar twin of its type, bit for bit. */
Q8RT_TEST(vcvt_dequantize_variants_vs_scalar) {
  for (size_t k = 0; k < CV_NVARIANTS; k++) {
    const struct cv_variant *v = &cv_variants[k], *twin = NULL;
    if (v->isa == Q8RT_ISA_SCALAR) continue;
    for (size_t j = 0; j < CV_NVARIANTS; j++) {
      if (cv_variants[j].isa == Q8RT_ISA_SCALAR && cv_variants[j].type == v->type) twin = &cv_variants[j];
    }
    CHECK(twin != NULL);
    if (!test_isa_supported(v->isa)) {
      printf("  skip %s: CPU lacks its ISA\n", v->name);
      continue;
    }
    const int is_signed = v->type != CV_QU8 && v->type != CV_QU16;
    const size_t es = v->type == CV_QU8 || v->type == CV_QS8 ? 1 : v->type == CV_QS32 ? 4 : 2;
    for (int trial = 0; trial < 400; trial++) {
      const size_t n = trial < 280 ? (size_t)(trial % 71) : 2000 + cv_rnd() % 3000;
      int32_t zp = 0;
      if (es < 4) {
        const int32_t span = es == 1 ? 255 : 65535, qmin = is_signed ? -(span + 1) / 2 : 0;
        zp = qmin + (int32_t)(cv_rnd() % (uint32_t)(span + 1));
        if (cv_rnd() % 3 == 0) zp = cv_rnd() & 1 ? qmin : qmin + span;
      }
      float scale = test_quant_scale(&cv_rng);
      if (trial % 50 == 0) scale = trial % 100 == 0 ? INFINITY : 1e-45f; /* inf * 0 = NaN; denormal products */
      q8rt_qint_f32_vcvt_params p = {scale, zp};
      uint8_t *x = malloc(n ? n * es : 1);
      float *y0 = malloc((n + 16) * sizeof(float)), *y1 = malloc((n + 16) * sizeof(float));
      CHECK(x != NULL && y0 != NULL && y1 != NULL);
      for (size_t i = 0; i < n * es; i++) x[i] = (uint8_t)cv_rnd();
      if (n > 2) memset(x, 0, es), memset(x + es, 0xFF, es), memset(x + 2 * es, 0x80, es);
      memset(y0, 0xA5, (n + 16) * sizeof(float));
      memset(y1, 0xA5, (n + 16) * sizeof(float));
      cv_call(twin, n, x, y0, &p);
      cv_call(v, n, x, y1, &p);
      const int ok = memcmp(y0, y1, (n + 16) * sizeof(float)) == 0;
      if (!ok) fprintf(stderr, "  %s n %zu scale %a zp %d differs\n", v->name, n, (double)scale, zp);
      free(x);
      free(y0);
      free(y1);
      CHECK(ok);
    }
  }
  return 0;
}

Q8RT_TEST(dequantize_kernels) {
  const uint8_t xu[] = {0, 10, 255};
  float y[3];
  q8rt_qint_f32_vcvt_params p = {0.5f, 10};
  q8rt_qu8_f32_vcvt_ukernel__scalar(3, xu, y, &p);
  CHECK(y[0] == -5.0f && y[1] == 0.0f && y[2] == 122.5f);
  const int32_t x32[] = {-2147483647 - 1, 7};
  q8rt_qint_f32_vcvt_params p32 = {2.0f, 0};
  q8rt_qs32_f32_vcvt_ukernel__scalar(2, x32, y, &p32);
  CHECK(y[0] == -4294967296.0f && y[1] == 14.0f);
  return 0;
}
