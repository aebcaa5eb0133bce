/* f32-igemm: the scalar twin against a plain fmaf loop written here, and every variant of
 * f32-igemm.inc against the scalar twin bit for bit (NaNs compared as NaN; a C element between
 * rows or past n must keep its old value), over row edges of the tiles, every panel width up to
 * NR, K from 0, odd row strides, B rows that repeat (one pointer used at several k, as the zero row
 * of a convolution's padding) and values of every class (signed zeros, denormals, infinities,
 * NaNs, huge and tiny). Each B row is its own allocation of exactly NR floats whose columns from
 * n on hold NaN, so a variant that reads past its row (ASan) or lets a dropped column into C fails. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "f32-igemm/f32-igemm.h"
#include "q8rt-isa.h"
#include "test.h"

typedef struct f32_igemm_variant {
  const char *name;
  q8rt_f32_igemm_ukernel_fn fn;
  unsigned isa;
  size_t mr, nr;
} f32_igemm_variant;

static const f32_igemm_variant g_f32i_variants[] = {
#define Q8RT_F32_IGEMM_UKERNEL(isa, fn, mr, nr) {#fn, fn, isa, mr, nr},
#include "f32-igemm/f32-igemm.inc"
#undef Q8RT_F32_IGEMM_UKERNEL
    {NULL, NULL, 0, 0, 0},
};

static uint32_t fi_rng = 0x2545f491u;
static uint32_t fi_rnd(void) { return test_xorshift32(&fi_rng); }

/* k row pointers into `rows` separate allocations of nr floats (n values, then NaN); about one k
 * in five reuses an earlier row. rows[] gets the allocations to free. */
static void fi_rows(size_t k, size_t n, size_t nr, const float **b, float **rows, size_t *nrows) {
  *nrows = 0;
  for (size_t p = 0; p < k; p++) {
    if (*nrows > 0 && fi_rnd() % 5 == 0) {
      b[p] = rows[fi_rnd() % *nrows];
      continue;
    }
    float *r = malloc(nr * sizeof(float));
    for (size_t j = 0; j < nr; j++) r[j] = j < n ? test_f32_value(&fi_rng) : NAN;
    rows[(*nrows)++] = r;
    b[p] = r;
  }
}

Q8RT_TEST(f32_igemm_scalar_is_the_fma_chain) {
  for (int rep = 0; rep < 200; rep++) {
    const size_t m = 1 + fi_rnd() % 7, n = 1 + fi_rnd() % 40, k = fi_rnd() % 30;
    const size_t lda = k + fi_rnd() % 3, ldc = n + fi_rnd() % 3;
    float *a = test_f32_fill(&fi_rng, m * lda), *c = test_f32_fill(&fi_rng, m * ldc);
    const float *b[30];
    float *rows[30];
    size_t nrows;
    fi_rows(k, n, n, b, rows, &nrows);
    q8rt_f32_igemm_ukernel__scalar(m, n, k, a, lda, b, c, ldc);
    for (size_t i = 0; i < m; i++) {
      for (size_t j = 0; j < n; j++) {
        float want = 0.0f;
        for (size_t p = 0; p < k; p++) want = fmaf(a[i * lda + p], b[p][j], want);
        CHECK(test_f32_same(&c[i * ldc + j], &want, 1));
      }
    }
    for (size_t r = 0; r < nrows; r++) free(rows[r]);
    free(a), free(c);
  }
  return 0;
}

Q8RT_TEST(f32_igemm_variants_match_scalar) {
  int tested = 0;
  for (const f32_igemm_variant *v = g_f32i_variants; v->fn != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      fprintf(stderr, "  skip %s (CPU lacks its ISA)\n", v->name);
      continue;
    }
    tested++;
    fprintf(stderr, "  %s\n", v->name);
    const size_t ms[] = {1, v->mr - 1, v->mr, v->mr + 1, 2 * v->mr + 3, 3 * v->mr};
    const size_t ks[] = {0, 1, 2, 3, 5, 16, 37, 120};
    for (size_t im = 0; im < sizeof(ms) / sizeof(ms[0]); im++) {
      for (size_t n = 1; n <= v->nr; n++) {
        for (size_t ik = 0; ik < sizeof(ks) / sizeof(ks[0]); ik++) {
          const size_t m = ms[im] ? ms[im] : 1, k = ks[ik];
          const size_t lda = k + fi_rnd() % 3, ldc = n + 1 + fi_rnd() % 3;
          /* exact sizes: the last row of each matrix ends at its last used element */
          const size_t a_n = (m - 1) * lda + k, c_n = (m - 1) * ldc + n;
          float *a = test_f32_fill(&fi_rng, a_n), *c1 = test_f32_fill(&fi_rng, c_n), *c2 = malloc(c_n * sizeof(float));
          memcpy(c2, c1, c_n * sizeof(float));
          const float **b = malloc((k ? k : 1) * sizeof(*b));
          float **rows = malloc((k ? k : 1) * sizeof(*rows));
          size_t nrows;
          fi_rows(k, n, v->nr, b, rows, &nrows);
          q8rt_f32_igemm_ukernel__scalar(m, n, k, a, lda, b, c1, ldc);
          v->fn(m, n, k, a, lda, b, c2, ldc);
          for (size_t i = 0; i < c_n; i++) {
            if (!test_f32_same(&c1[i], &c2[i], 1)) {
              fprintf(stderr, "  %s m=%zu n=%zu k=%zu: element %zu differs (%a vs %a)\n", v->name, m, n, k, i,
                      (double)c1[i], (double)c2[i]);
              CHECK(0);
            }
          }
          for (size_t r = 0; r < nrows; r++) free(rows[r]);
          free(rows), free(b), free(a), free(c1), free(c2);
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
