/* x8-transpose: the scalar kernel against a naive loop, every other variant of x8-transpose.inc
 * against the scalar one. */
#include <stdlib.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "test.h"

static uint32_t cv_rng = 0x1234567u;
static uint32_t cv_rnd(void) { return test_xorshift32(&cv_rng); }

Q8RT_TEST(x8_transpose_vs_naive) {
  const size_t sizes[] = {0, 1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 63, 65, 100};
  const size_t ns = sizeof(sizes) / sizeof(sizes[0]);
  for (size_t ia = 0; ia < ns; ia++)
    for (size_t ib = 0; ib < ns; ib++) {
      const size_t a = sizes[ia], b = sizes[ib], outer = 1 + cv_rnd() % 3;
      const size_t total = outer * a * b;
      uint8_t *x = malloc(total ? total : 1), *y = malloc(total + 1), *e = malloc(total + 1);
      CHECK(x != NULL && y != NULL && e != NULL);
      for (size_t i = 0; i < total; i++) x[i] = (uint8_t)cv_rnd();
      memset(y, 0x5A, total + 1);
      memset(e, 0x5A, total + 1);
      for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < a; i++)
          for (size_t j = 0; j < b; j++) e[o * a * b + j * a + i] = x[o * a * b + i * b + j];
      for (size_t o = 0; o < outer; o++) q8rt_x8_transpose_ukernel__scalar(a, b, x + o * a * b, b, y + o * a * b, a);
      const int ok = memcmp(y, e, total + 1) == 0;
      free(x);
      free(y);
      free(e);
      CHECK(ok);
    }
  return 0;
}

static const struct {
  unsigned isa;
  q8rt_x8_transpose_ukernel_fn fn;
  const char *name;
} tr_variants[] = {
#define Q8RT_X8_TRANSPOSE_UKERNEL(isa, fn) {isa, fn, #fn},
#include "x8-transpose/x8-transpose.inc"
#undef Q8RT_X8_TRANSPOSE_UKERNEL
};

/* Every other variant of x8-transpose.inc against the scalar twin (and the twin against the
 * definition), whole images and a column block with the full strides, as the op splits its work. */
Q8RT_TEST(transpose_variants_match_scalar) {
  for (size_t k = 0; k < sizeof(tr_variants) / sizeof(tr_variants[0]); k++) {
    if (tr_variants[k].isa == Q8RT_ISA_SCALAR) continue;
    if (!test_isa_supported(tr_variants[k].isa)) {
      printf("  skip %s: CPU lacks its ISA\n", tr_variants[k].name);
      continue;
    }
    const q8rt_x8_transpose_ukernel_fn fn = tr_variants[k].fn;
    const size_t sizes[] = {1, 3, 15, 16, 17, 31, 32, 33, 48, 144};
    for (size_t ia = 0; ia < sizeof(sizes) / sizeof(sizes[0]); ia++) {
      for (size_t ib = 0; ib < sizeof(sizes) / sizeof(sizes[0]); ib++) {
        const size_t outer = 1 + (ia + ib) % 3, a = sizes[ia], b = sizes[ib], n = outer * a * b;
        /* 16 guard bytes after the result: nothing written past it */
        uint8_t *x = malloc(n), *y1 = malloc(n + 16), *y2 = malloc(n + 16);
        CHECK(x != NULL && y1 != NULL && y2 != NULL);
        for (size_t i = 0; i < n; i++) x[i] = (uint8_t)cv_rnd();
        memset(y1 + n, 0x3c, 16);
        memset(y2 + n, 0x3c, 16);
        for (size_t o = 0; o < outer; o++) {
          q8rt_x8_transpose_ukernel__scalar(a, b, x + o * a * b, b, y1 + o * a * b, a);
          fn(a, b, x + o * a * b, b, y2 + o * a * b, a);
        }
        int ok = memcmp(y1, y2, n + 16) == 0;
        if (ok && b > 2) {
          const size_t j0 = b / 3, w = b - j0 - 1;
          memcpy(y2, y1, n);
          memset(y2 + j0 * a, 0x5a, w * a);
          fn(a, w, x + j0, b, y2 + j0 * a, a);
          ok = memcmp(y1, y2, n) == 0;
        }
        /* and the scalar one against the definition */
        for (size_t o = 0; o < outer && ok; o++)
          for (size_t i = 0; i < a && ok; i++)
            for (size_t j = 0; j < b && ok; j++) ok = y1[o * a * b + j * a + i] == x[o * a * b + i * b + j];
        free(x);
        free(y1);
        free(y2);
        if (!ok) fprintf(stderr, "  %s outer %zu a %zu b %zu differs\n", tr_variants[k].name, outer, a, b);
        CHECK(ok);
      }
    }
  }
  return 0;
}

/* Every variant against the scalar twin with padded strides: the bytes between the result's rows
 * (y_stride > a) must stay as they were, for every row count 1..33 (the partial row blocks store
 * each result row in pieces) and column counts around the 16-column blocks. */
Q8RT_TEST(transpose_variants_strided_rows) {
  for (size_t k = 0; k < sizeof(tr_variants) / sizeof(tr_variants[0]); k++) {
    if (tr_variants[k].isa == Q8RT_ISA_SCALAR || !test_isa_supported(tr_variants[k].isa)) continue;
    const q8rt_x8_transpose_ukernel_fn fn = tr_variants[k].fn;
    const size_t cols[] = {1, 15, 16, 17, 33, 48};
    for (size_t a = 1; a <= 33; a++) {
      for (size_t ib = 0; ib < sizeof(cols) / sizeof(cols[0]); ib++) {
        const size_t b = cols[ib], xs = b + a % 3, ys = a + (a + ib) % 4;
        const size_t nx = a * xs, ny = b * ys;
        uint8_t *x = malloc(nx), *y1 = malloc(ny), *y2 = malloc(ny);
        CHECK(x != NULL && y1 != NULL && y2 != NULL);
        for (size_t i = 0; i < nx; i++) x[i] = (uint8_t)cv_rnd();
        for (size_t i = 0; i < ny; i++) y1[i] = y2[i] = (uint8_t)cv_rnd();
        q8rt_x8_transpose_ukernel__scalar(a, b, x, xs, y1, ys);
        fn(a, b, x, xs, y2, ys);
        const int ok = memcmp(y1, y2, ny) == 0;
        free(x);
        free(y1);
        free(y2);
        if (!ok) fprintf(stderr, "  %s a %zu b %zu strides %zu %zu differs\n", tr_variants[k].name, a, b, xs, ys);
        CHECK(ok);
      }
    }
  }
  return 0;
}

/* Few rows into dense result rows (y_stride == a, as QuantizeSpaceToDepth's 6-row Focus transpose
 * and a 3-channel image's NCHW -> NHWC): every row count 1..17 and column counts around the
 * 64-column windows, 64 guard bytes after the result, and a column block of a wider source. */
Q8RT_TEST(transpose_variants_few_rows_dense) {
  for (size_t k = 0; k < sizeof(tr_variants) / sizeof(tr_variants[0]); k++) {
    if (tr_variants[k].isa == Q8RT_ISA_SCALAR || !test_isa_supported(tr_variants[k].isa)) continue;
    const q8rt_x8_transpose_ukernel_fn fn = tr_variants[k].fn;
    const size_t cols[] = {0, 1, 5, 63, 64, 65, 127, 128, 129, 200, 416};
    for (size_t a = 1; a <= 17; a++) {
      for (size_t ib = 0; ib < sizeof(cols) / sizeof(cols[0]); ib++) {
        const size_t b = cols[ib], xs = b + 7 * (a % 2), n = b * a;
        uint8_t *x = malloc(a * xs + 1), *y1 = malloc(n + 64), *y2 = malloc(n + 64);
        CHECK(x != NULL && y1 != NULL && y2 != NULL);
        for (size_t i = 0; i < a * xs + 1; i++) x[i] = (uint8_t)cv_rnd();
        for (size_t i = 0; i < n + 64; i++) y1[i] = y2[i] = (uint8_t)cv_rnd();
        q8rt_x8_transpose_ukernel__scalar(a, b, x, xs, y1, a);
        fn(a, b, x, xs, y2, a);
        int ok = memcmp(y1, y2, n + 64) == 0;
        for (size_t i = 0; i < a && ok; i++)
          for (size_t j = 0; j < b && ok; j++) ok = y2[j * a + i] == x[i * xs + j];
        free(x);
        free(y1);
        free(y2);
        if (!ok) fprintf(stderr, "  %s a %zu b %zu x_stride %zu differs\n", tr_variants[k].name, a, b, xs);
        CHECK(ok);
      }
    }
  }
  return 0;
}
