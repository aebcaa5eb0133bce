/* x8-zip-x4: every variant of x8-zip.inc against a plain loop (the scalar twin included), over
 * lengths 0..100 around the 32-byte steps, rows that overlap or repeat, and both xor values; the
 * output is written exactly 4 * n bytes (a guard byte after it must survive). */
#include <stdlib.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "runtime/isa.h"
#include "test.h"

static const struct {
  unsigned isa;
  q8rt_x8_zip_x4_ukernel_fn fn;
  const char *name;
} zip_variants[] = {
#define Q8RT_X8_ZIP_X4_UKERNEL(isa, fn) {isa, fn, #fn},
#include "x8-zip/x8-zip.inc"
#undef Q8RT_X8_ZIP_X4_UKERNEL
};

static uint32_t zip_rng = 0x9e3779b9u;

Q8RT_TEST(x8_zip_x4_variants_vs_plain_loop) {
  int ran = 0;
  for (size_t vi = 0; vi < sizeof(zip_variants) / sizeof(zip_variants[0]); vi++) {
    if (!test_isa_supported(zip_variants[vi].isa)) continue;
    ran++;
    for (size_t n = 0; n <= 100; n++) {
      uint8_t *src = malloc(4 * n + 8), *out = malloc(4 * n + 1), *want = malloc(4 * n + 1);
      CHECK(src != NULL && out != NULL && want != NULL);
      for (size_t i = 0; i < 4 * n + 8; i++) src[i] = (uint8_t)test_xorshift32(&zip_rng);
      const uint8_t *rows[4];
      for (size_t j = 0; j < 4; j++) rows[j] = src + (n % 3 == 0 ? j : j * n) + (j == 3 && n % 5 == 1 ? 0 : 0);
      if (n % 7 == 2) rows[2] = rows[0]; /* the path repeats a row past K */
      const uint8_t x_xor = n % 2 ? 0x80 : 0;
      for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < 4; j++) want[4 * i + j] = rows[j][i] ^ x_xor;
      out[4 * n] = 0xA7;
      zip_variants[vi].fn(n, rows, x_xor, out);
      const int ok = memcmp(out, want, 4 * n) == 0 && out[4 * n] == 0xA7;
      if (!ok) fprintf(stderr, "  %s: n %zu\n", zip_variants[vi].name, n);
      free(src);
      free(out);
      free(want);
      CHECK(ok);
    }
  }
  CHECK(ran >= 1);
  return 0;
}
