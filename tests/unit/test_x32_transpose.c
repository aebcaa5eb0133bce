/* x32-transpose: the scalar twin against the definition, every other variant of
 * x32-transpose.inc against the twin bit for bit (NaN payloads included: the kernels move bits),
 * with row strides wider than the block as ConvTranspose's channel-major copy uses them. */
#include <stdlib.h>

#include "q8rt-isa.h"
#include "test.h"
#include "x32-transpose/x32-transpose.h"

static uint32_t x32_rng = 0x9e3779b9u;

static const struct {
  unsigned isa;
  q8rt_x32_transpose_ukernel_fn fn;
  const char *name;
} x32_variants[] = {
#define Q8RT_X32_TRANSPOSE_UKERNEL(isa, fn) {isa, fn, #fn},
#include "x32-transpose/x32-transpose.inc"
#undef Q8RT_X32_TRANSPOSE_UKERNEL
};

/* y (b rows of y_stride) from x (a rows of x_stride) by fn; untouched elements keep a guard. */
static int x32_case(q8rt_x32_transpose_ukernel_fn fn, size_t a, size_t b, size_t xs, size_t ys) {
  const size_t nx = a * xs + 1, ny = b * ys + 1;
  uint32_t *x = malloc(nx * sizeof(uint32_t)), *y = malloc(ny * sizeof(uint32_t));
  if (x == NULL || y == NULL) {
    free(x);
    free(y);
    return 0;
  }
  for (size_t i = 0; i < nx; i++) x[i] = test_xorshift32(&x32_rng) | 0x7f800001u; /* NaN bit patterns too */
  for (size_t i = 0; i < ny; i++) y[i] = 0xdeadbeefu;
  fn(a, b, x, xs, y, ys);
  int ok = 1;
  for (size_t j = 0; j < b; j++) {
    for (size_t i = 0; i < ys; i++) {
      const uint32_t want = i < a ? x[i * xs + j] : 0xdeadbeefu;
      ok &= y[j * ys + i] == want;
    }
  }
  ok &= y[ny - 1] == 0xdeadbeefu;
  free(x);
  free(y);
  return ok;
}

Q8RT_TEST(x32_transpose_variants_vs_definition) {
  const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 33, 64, 100};
  const size_t ns = sizeof(sizes) / sizeof(sizes[0]);
  for (size_t k = 0; k < sizeof(x32_variants) / sizeof(x32_variants[0]); k++) {
    if (!test_isa_supported(x32_variants[k].isa)) {
      printf("  skip %s: CPU lacks its ISA\n", x32_variants[k].name);
      continue;
    }
    for (size_t ia = 0; ia < ns; ia++) {
      for (size_t ib = 0; ib < ns; ib++) {
        const size_t a = sizes[ia], b = sizes[ib];
        const size_t xs = b + (ia + ib) % 3, ys = a + (ia * 7 + ib) % 4; /* gapped rows */
        const int ok = x32_case(x32_variants[k].fn, a, b, xs, ys);
        if (!ok)
          fprintf(stderr, "  %s a %zu b %zu x_stride %zu y_stride %zu differs\n", x32_variants[k].name, a, b, xs, ys);
        CHECK(ok);
      }
    }
  }
  return 0;
}
