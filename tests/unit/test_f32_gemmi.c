/* f32-gemmi: the scalar twin against a plain fmaf loop written here, and every variant of
 * f32-gemmi.inc (B packed by q8rt_f32_gemm_pack) against the scalar twin bit for bit (NaNs
 * compared as NaN; a C element between rows or past n must keep its old value), over row edges of
 * the tiles, n across whole and partial panels (half panels too), K from 0, rows that start
 * anywhere in one buffer (overlapping, as a convolution's windows) and offsets that repeat, with
 * values of every class (signed zeros, denormals, infinities, NaNs, huge and tiny). The A buffer
 * ends at the last element any row reads, so a variant reading past it fails under ASan. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "f32-gemm/f32-gemm.h"
#include "f32-gemmi/f32-gemmi.h"
#include "q8rt-isa.h"
#include "test.h"

typedef struct f32_gemmi_variant {
  const char *name;
  q8rt_f32_gemmi_ukernel_fn fn;
  unsigned isa;
  size_t mr, nr;
} f32_gemmi_variant;

static const f32_gemmi_variant g_f32gi_variants[] = {
#define Q8RT_F32_GEMMI_UKERNEL(isa, fn, mr, nr) {#fn, fn, isa, mr, nr},
#include "f32-gemmi/f32-gemmi.inc"
#undef Q8RT_F32_GEMMI_UKERNEL
    {NULL, NULL, 0, 0, 0},
};

static uint32_t gi_rng = 0x6c8e9cf5u;
static uint32_t gi_rnd(void) { return test_xorshift32(&gi_rng); }

/* m row pointers into one buffer of `span` floats and k offsets, every read within it: row starts
 * below span - maxoff, offsets up to maxoff (about one in four repeats an earlier one). */
static float *gi_a(size_t m, size_t k, const float **a, size_t *aoff, size_t *span) {
  const size_t maxoff = k == 0 ? 0 : (size_t)(gi_rnd() % (4 * k + 1));
  const size_t starts = 1 + gi_rnd() % (2 * m + 3);
  for (size_t p = 0; p < k; p++) aoff[p] = p > 0 && gi_rnd() % 4 == 0 ? aoff[gi_rnd() % p] : gi_rnd() % (maxoff + 1);
  if (k > 0) aoff[gi_rnd() % k] = maxoff; /* one offset at the end of the buffer */
  *span = starts + maxoff;
  float *buf = test_f32_fill(&gi_rng, *span);
  for (size_t i = 0; i < m; i++) a[i] = buf + gi_rnd() % starts;
  if (m > 0) a[gi_rnd() % m] = buf + starts - 1; /* one row at the last start */
  return buf;
}

Q8RT_TEST(f32_gemmi_scalar_is_the_fma_chain) {
  for (int rep = 0; rep < 200; rep++) {
    const size_t m = 1 + gi_rnd() % 7, n = 1 + gi_rnd() % 40, k = gi_rnd() % 30;
    const size_t ldb = n + gi_rnd() % 3, ldc = n + gi_rnd() % 3;
    const float *a[8];
    size_t aoff[30], span;
    float *buf = gi_a(m, k, a, aoff, &span);
    float *b = test_f32_fill(&gi_rng, (k ? k : 1) * ldb), *c = test_f32_fill(&gi_rng, m * ldc);
    q8rt_f32_gemmi_ukernel__scalar(m, n, k, a, aoff, b, ldb, c, ldc);
    for (size_t i = 0; i < m; i++) {
      for (size_t j = 0; j < n; j++) {
        float want = 0.0f;
        for (size_t p = 0; p < k; p++) want = fmaf(a[i][aoff[p]], b[p * ldb + j], want);
        CHECK(test_f32_same(&c[i * ldc + j], &want, 1));
      }
    }
    free(buf), free(b), free(c);
  }
  return 0;
}

Q8RT_TEST(f32_gemmi_variants_match_scalar) {
  int tested = 0;
  for (const f32_gemmi_variant *v = g_f32gi_variants; v->fn != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      fprintf(stderr, "  skip %s (CPU lacks its ISA)\n", v->name);
      continue;
    }
    tested++;
    fprintf(stderr, "  %s\n", v->name);
    const size_t ms[] = {1, v->mr - 1, v->mr, v->mr + 1, 2 * v->mr + 3, 3 * v->mr};
    const size_t ks[] = {0, 1, 2, 3, 9, 16, 37, 120};
    for (size_t im = 0; im < sizeof(ms) / sizeof(ms[0]); im++) {
      for (size_t n = 1; n <= 3 * v->nr + 1; n += (n < 2 * v->nr ? 1 : v->nr / 2 + 1)) {
        for (size_t ik = 0; ik < sizeof(ks) / sizeof(ks[0]); ik++) {
          const size_t m = ms[im] ? ms[im] : 1, k = ks[ik];
          const size_t ldc = n + 1 + gi_rnd() % 3, c_n = (m - 1) * ldc + n;
          const float **a = malloc(m * sizeof(*a));
          size_t *aoff = malloc((k ? k : 1) * sizeof(*aoff)), span;
          float *buf = gi_a(m, k, a, aoff, &span);
          float *b = test_f32_fill(&gi_rng, (k ? k : 1) * n);
          float *pb = malloc((q8rt_f32_gemm_packed_size(k, n, v->nr) + 1) * sizeof(float));
          q8rt_f32_gemm_pack(k, n, v->nr, b, n, pb);
          float *c1 = test_f32_fill(&gi_rng, c_n), *c2 = malloc(c_n * sizeof(float));
          memcpy(c2, c1, c_n * sizeof(float));
          q8rt_f32_gemmi_ukernel__scalar(m, n, k, a, aoff, b, n, c1, ldc);
          v->fn(m, n, k, a, aoff, pb, c2, ldc);
          for (size_t i = 0; i < c_n; i++) {
            if (!test_f32_same(&c1[i], &c2[i], 1)) {
              fprintf(stderr, "  %s m=%zu n=%zu k=%zu: element %zu differs (%a vs %a)\n", v->name, m, n, k, i,
                      (double)c1[i], (double)c2[i]);
              CHECK(0);
            }
          }
          free(a), free(aoff), free(buf), free(b), free(pb), free(c1), free(c2);
        }
      }
    }
  }
  CHECK(tested >= 1); /* the portable tile everywhere */
  return 0;
}
