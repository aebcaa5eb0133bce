/* f32-gemm: the scalar twin against a plain fmaf loop written here, and every variant of
 * f32-gemm.inc (on B packed for its NR) against the scalar twin bit for bit (NaNs compared as
 * NaN; a C element between rows, past n, must keep its old value), over row and column
 * edges of the tiles, K from 0, odd row strides, and values of every class (signed zeros,
 * denormals, infinities, NaNs, huge and tiny). Buffers are sized exactly (no slack) so ASan
 * catches a read or write outside the contract. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "f32-gemm/f32-gemm.h"
#include "q8rt-isa.h"
#include "test.h"

typedef struct f32_gemm_variant {
  const char *name;
  q8rt_f32_gemm_ukernel_fn fn;
  unsigned isa;
  size_t mr, nr;
} f32_gemm_variant;

static const f32_gemm_variant g_f32_variants[] = {
#define Q8RT_F32_GEMM_UKERNEL(isa, fn, mr, nr) {#fn, fn, isa, mr, nr},
#include "f32-gemm/f32-gemm.inc"
#undef Q8RT_F32_GEMM_UKERNEL
    {NULL, NULL, 0, 0, 0},
};

static uint32_t fg_rng = 0x9e3779b9u;
static uint32_t fg_rnd(void) { return test_xorshift32(&fg_rng); }

Q8RT_TEST(f32_gemm_scalar_is_the_fma_chain) {
  for (int rep = 0; rep < 200; rep++) {
    const size_t m = 1 + fg_rnd() % 7, n = 1 + fg_rnd() % 40, k = fg_rnd() % 30;
    const size_t lda = k + fg_rnd() % 3, ldb = n + fg_rnd() % 3, ldc = n + fg_rnd() % 3;
    float *a = test_f32_fill(&fg_rng, m * lda), *b = test_f32_fill(&fg_rng, k * ldb),
          *c = test_f32_fill(&fg_rng, m * ldc);
    q8rt_f32_gemm_ukernel__scalar(m, n, k, a, lda, b, ldb, c, ldc);
    for (size_t i = 0; i < m; i++) {
      for (size_t j = 0; j < n; j++) {
        float want = 0.0f;
        for (size_t p = 0; p < k; p++) want = fmaf(a[i * lda + p], b[p * ldb + j], want);
        CHECK(test_f32_same(&c[i * ldc + j], &want, 1));
      }
    }
    free(a), free(b), free(c);
  }
  return 0;
}

Q8RT_TEST(f32_gemm_variants_match_scalar) {
  int tested = 0;
  for (const f32_gemm_variant *v = g_f32_variants; v->fn != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      fprintf(stderr, "  skip %s (CPU lacks its ISA)\n", v->name);
      continue;
    }
    tested++;
    fprintf(stderr, "  %s\n", v->name);
    const size_t ms[] = {1, v->mr - 1, v->mr, v->mr + 1, 2 * v->mr + 3, 3 * v->mr};
    /* panels of n % nr around nr / 2 (the AVX-512 kernel runs a last panel of <= 16 on half its lanes) */
    const size_t ns[] = {1,
                         7,
                         v->nr / 2,
                         v->nr / 2 + 1,
                         v->nr - 1,
                         v->nr,
                         v->nr + 1,
                         2 * v->nr + 5,
                         2 * v->nr + v->nr / 2 + 1,
                         3 * v->nr - 1};
    const size_t ks[] = {0, 1, 2, 5, 16, 37, 120};
    for (size_t im = 0; im < sizeof(ms) / sizeof(ms[0]); im++) {
      for (size_t in = 0; in < sizeof(ns) / sizeof(ns[0]); in++) {
        for (size_t ik = 0; ik < sizeof(ks) / sizeof(ks[0]); ik++) {
          const size_t m = ms[im] ? ms[im] : 1, n = ns[in] ? ns[in] : 1, k = ks[ik];
          const size_t lda = k + fg_rnd() % 3, ldb = n + fg_rnd() % 5, ldc = n + 1 + fg_rnd() % 3;
          /* exact sizes: the last row of each matrix ends at its last used element */
          const size_t a_n = (m - 1) * lda + k, b_n = k ? (k - 1) * ldb + n : 0, c_n = (m - 1) * ldc + n;
          float *a = test_f32_fill(&fg_rng, a_n), *b = test_f32_fill(&fg_rng, b_n);
          float *c1 = test_f32_fill(&fg_rng, c_n), *c2 = malloc(c_n * sizeof(float));
          memcpy(c2, c1, c_n * sizeof(float));
          const size_t pb_n = q8rt_f32_gemm_packed_size(k, n, v->nr);
          float *pb = malloc(pb_n ? pb_n * sizeof(float) : 1);
          q8rt_f32_gemm_pack(k, n, v->nr, b, ldb, pb);
          if (k > 0) { /* the same panels from B's transpose */
            float *bt = malloc(n * k * sizeof(float)), *pt = malloc(pb_n * sizeof(float));
            for (size_t p = 0; p < k; p++) {
              for (size_t j = 0; j < n; j++) bt[j * k + p] = b[p * ldb + j];
            }
            q8rt_f32_gemm_pack_t(k, n, v->nr, bt, k, pt);
            CHECK(memcmp(pt, pb, pb_n * sizeof(float)) == 0);
            free(bt), free(pt);
          }
          q8rt_f32_gemm_ukernel__scalar(m, n, k, a, lda, b, ldb, c1, ldc);
          v->fn(m, n, k, a, lda, pb, c2, ldc);
          free(pb);
          for (size_t i = 0; i < c_n; i++) {
            if (!test_f32_same(&c1[i], &c2[i], 1)) {
              fprintf(stderr, "  %s m=%zu n=%zu k=%zu: element %zu differs (%a vs %a)\n", v->name, m, n, k, i,
                      (double)c1[i], (double)c2[i]);
              CHECK(0);
            }
          }
          free(a), free(b), free(c1), free(c2);
        }
      }
    }
  }
  /* the portable tile everywhere, and a SIMD variant where the list has one for the machine */
#if defined(__x86_64__) || defined(__aarch64__)
  CHECK(tested >= 2);
#else
  CHECK(tested >= 1);
#endif
  return 0;
}
