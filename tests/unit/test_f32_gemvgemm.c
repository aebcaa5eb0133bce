/* f32-gemvgemm: the scalar twin against f32-gemm's scalar twin (the row: one row over 128 columns;
 * the tile: m rows over 32 columns), and every variant of f32-gemvgemm.inc against the scalar twin
 * bit for bit (NaNs compared as NaN), for m = 0..8, the row's and the tile's K from 0 (equal, either
 * longer), odd row strides, values of every class. B is packed for NR = 32 (q8rt_f32_gemm_pack:
 * the LSTM's packing); buffers are sized exactly so ASan catches a read or write outside the
 * contract, and C elements between the tile's rows must keep their values. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "f32-gemm/f32-gemm.h"
#include "f32-gemvgemm/f32-gemvgemm.h"
#include "q8rt-isa.h"
#include "test.h"

typedef struct f32_gemvgemm_variant {
  const char *name;
  q8rt_f32_gemvgemm_ukernel_fn fn;
  unsigned isa;
} f32_gemvgemm_variant;

static const f32_gemvgemm_variant g_gg_variants[] = {
#define Q8RT_F32_GEMVGEMM_UKERNEL(isa, fn) {#fn, fn, isa},
#include "f32-gemvgemm/f32-gemvgemm.inc"
#undef Q8RT_F32_GEMVGEMM_UKERNEL
    {NULL, NULL, 0},
};

static uint32_t gg_rng = 0x2545f491u;
static uint32_t gg_rnd(void) { return test_xorshift32(&gg_rng); }

typedef struct gg_case {
  size_t kr, kw, m, lda, ldc;
  float *h, *rp, *a, *wp, *rc, *c;
  size_t rc_n, c_n;
} gg_case;

/* h [kr], R [kr][128] packed (4 panels of kr x 32), a [m][lda], W [kw][32] packed, rc [128], c */
static void gg_make(gg_case *t, size_t kr, size_t kw, size_t m) {
  t->kr = kr, t->kw = kw, t->m = m;
  t->lda = kw + gg_rnd() % 3;
  t->ldc = 32 + gg_rnd() % 5;
  t->h = test_f32_fill(&gg_rng, kr ? kr : 1);
  float *r = test_f32_fill(&gg_rng, kr ? kr * 128 : 1);
  t->rp = malloc((kr ? kr * 128 : 1) * sizeof(float));
  q8rt_f32_gemm_pack(kr, 128, 32, r, 128, t->rp);
  free(r);
  const size_t a_n = m ? (m - 1) * t->lda + kw : 0;
  t->a = m ? test_f32_fill(&gg_rng, a_n ? a_n : 1) : NULL;
  float *w = test_f32_fill(&gg_rng, kw ? kw * 32 : 1);
  t->wp = malloc((kw ? kw * 32 : 1) * sizeof(float));
  q8rt_f32_gemm_pack(kw, 32, 32, w, 32, t->wp);
  free(w);
  t->rc_n = 128;
  t->c_n = m ? (m - 1) * t->ldc + 32 : 0;
  t->rc = test_f32_fill(&gg_rng, t->rc_n);
  t->c = m ? test_f32_fill(&gg_rng, t->c_n) : NULL;
}

static void gg_free(gg_case *t) { free(t->h), free(t->rp), free(t->a), free(t->wp), free(t->rc), free(t->c); }

Q8RT_TEST(f32_gemvgemm_scalar_is_two_gemms) {
  for (int rep = 0; rep < 100; rep++) {
    const size_t kr = gg_rnd() % 40, kw = gg_rnd() % 40, m = gg_rnd() % 9;
    gg_case t;
    gg_make(&t, kr, kw, m);
    float *want_rc = malloc(128 * sizeof(float)), *want_c = m ? malloc(t.c_n * sizeof(float)) : NULL;
    if (m) memcpy(want_c, t.c, t.c_n * sizeof(float));
    /* the same packed panels read as plain B by f32-gemm's scalar twin */
    for (size_t q = 0; q < 4; q++)
      q8rt_f32_gemm_ukernel__scalar(1, 32, kr, t.h, kr, t.rp + q * kr * 32, 32, want_rc + q * 32, 32);
    if (m) q8rt_f32_gemm_ukernel__scalar(m, 32, kw, t.a, t.lda, t.wp, 32, want_c, t.ldc);
    q8rt_f32_gemvgemm_ukernel__scalar(kr, t.h, t.rp, t.rc, m, kw, t.a, t.lda, t.wp, t.c, t.ldc);
    CHECK(test_f32_same(t.rc, want_rc, 128));
    if (m) CHECK(test_f32_same(t.c, want_c, t.c_n));
    free(want_rc), free(want_c);
    gg_free(&t);
  }
  return 0;
}

Q8RT_TEST(f32_gemvgemm_variants_match_scalar) {
  int tested = 0;
  for (const f32_gemvgemm_variant *v = g_gg_variants; v->fn != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      fprintf(stderr, "  skip %s (CPU lacks its ISA)\n", v->name);
      continue;
    }
    tested++;
    fprintf(stderr, "  %s\n", v->name);
    const size_t ks[] = {0, 1, 2, 7, 33, 256};
    for (size_t m = 0; m <= 8; m++) {
      for (size_t ir = 0; ir < sizeof(ks) / sizeof(ks[0]); ir++) {
        for (size_t iw = 0; iw < sizeof(ks) / sizeof(ks[0]); iw++) {
          gg_case t;
          gg_make(&t, ks[ir], ks[iw], m);
          float *rc2 = malloc(128 * sizeof(float)), *c2 = m ? malloc(t.c_n * sizeof(float)) : NULL;
          memcpy(rc2, t.rc, 128 * sizeof(float));
          if (m) memcpy(c2, t.c, t.c_n * sizeof(float));
          q8rt_f32_gemvgemm_ukernel__scalar(t.kr, t.h, t.rp, t.rc, m, t.kw, t.a, t.lda, t.wp, t.c, t.ldc);
          v->fn(t.kr, t.h, t.rp, rc2, m, t.kw, t.a, t.lda, t.wp, c2, t.ldc);
          if (!test_f32_same(t.rc, rc2, 128) || (m && !test_f32_same(t.c, c2, t.c_n))) {
            fprintf(stderr, "  %s m=%zu kr=%zu kw=%zu differs\n", v->name, m, t.kr, t.kw);
            CHECK(0);
          }
          free(rc2), free(c2);
          gg_free(&t);
        }
      }
    }
  }
#if defined(__x86_64__)
  if (test_isa_supported(Q8RT_ISA_AVX512SKX)) CHECK(tested >= 1);
#endif
  return 0;
}
