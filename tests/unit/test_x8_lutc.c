/* x8-lutc (per-channel byte tables, channels innermost): every variant of x8-lutc.inc against the
 * definition y[r][c] = tables[c * 256 + x[r][c]] (which its scalar twin spells): channel counts 1
 * to 70 (under, at and past the 16-lane steps and their wrap modulo the channel count) and wider
 * ones, 0 to 5 rows, 15 to 130 rows (the transposed variant's 64 x 64 blocks and part blocks), contiguous rows (one run
 * across rows), rows with gaps (x and y strides different) and in place. Buffers are allocated to their exact size (the
 * sanitized build catches a read or write past them); the bytes between and past the rows must stay untouched. */
#include <stdlib.h>

#include "q8rt-kernels.h"
#include "test.h"

static const struct {
  unsigned isa;
  q8rt_x8_lutc_ukernel_fn fn;
  const char *name;
} lutc_variants[] = {
#define Q8RT_X8_LUTC_UKERNEL(isa, fn) {isa, fn, #fn},
#include "x8-lutc/x8-lutc.inc"
#undef Q8RT_X8_LUTC_UKERNEL
};

static uint32_t g_lutc_rng = 0x6A09E667u;

/* One case: rows x channels, strides xs / ys (in place: x is y, xs == ys); x's bytes random, or
 * (r + 7 c) mod 256 so that every channel sees all 256 values once rows reach 256. */
static int lutc_case(q8rt_x8_lutc_ukernel_fn fn, const char *name, size_t rows, size_t channels, size_t xs, size_t ys,
                     int in_place, int sweep) {
  const size_t xn = rows == 0 ? 1 : (rows - 1) * xs + channels, yn = rows == 0 ? 1 : (rows - 1) * ys + channels;
  uint8_t *tables = malloc(channels * 256), *x = malloc(xn), *y = malloc(in_place ? xn : yn), *want = malloc(yn);
  int bad = tables == NULL || x == NULL || y == NULL || want == NULL;
  if (!bad) {
    for (size_t i = 0; i < channels * 256; i++) tables[i] = (uint8_t)(test_xorshift32(&g_lutc_rng) >> 24);
    for (size_t i = 0; i < xn; i++) {
      const size_t r = i / xs, c = i % xs;
      x[i] = sweep ? (uint8_t)(r + 7 * c) : (uint8_t)(test_xorshift32(&g_lutc_rng) >> 24);
    }
    if (in_place) {
      memcpy(want, x, xn);
      memcpy(y, x, xn);
    } else {
      memset(want, 0xA5, yn);
      memset(y, 0xA5, yn);
    }
    for (size_t r = 0; r < rows; r++) {
      for (size_t c = 0; c < channels; c++) want[r * ys + c] = tables[c * 256 + x[r * xs + c]];
    }
    fn(rows, channels, in_place ? y : x, xs, y, ys, tables);
    for (size_t i = 0; i < (in_place ? xn : yn) && !bad; i++) {
      if (y[i] != want[i]) {
        fprintf(stderr, "  %s: rows %zu channels %zu strides %zu/%zu%s: byte %zu is %u, want %u\n", name, rows,
                channels, xs, ys, in_place ? " in place" : "", i, y[i], want[i]);
        bad = 1;
      }
    }
  }
  free(tables), free(x), free(y), free(want);
  return bad;
}

Q8RT_TEST(x8_lutc_vs_definition) {
  static const size_t wide[] = {100, 127, 128, 129, 250, 257};
  for (size_t k = 0; k < sizeof(lutc_variants) / sizeof(lutc_variants[0]); k++) {
    if (!test_isa_supported(lutc_variants[k].isa)) {
      printf("  skip %s: CPU lacks its ISA\n", lutc_variants[k].name);
      continue;
    }
    q8rt_x8_lutc_ukernel_fn fn = lutc_variants[k].fn;
    const char *name = lutc_variants[k].name;
    for (size_t i = 0; i < 70 + sizeof(wide) / sizeof(wide[0]); i++) {
      const size_t c = i < 70 ? i + 1 : wide[i - 70];
      for (size_t rows = 0; rows <= 5; rows++) {
        const size_t gx = c + 1 + (c * 7 + rows) % 37, gy = c + 3 + (c * 13 + rows) % 41;
        CHECK(lutc_case(fn, name, rows, c, c, c, 0, 0) == 0);   /* contiguous: one run */
        CHECK(lutc_case(fn, name, rows, c, gx, gy, 0, 0) == 0); /* gaps between rows */
        CHECK(lutc_case(fn, name, rows, c, c, c, 1, 0) == 0);   /* in place */
        CHECK(lutc_case(fn, name, rows, c, gx, gx, 1, 0) == 0); /* in place with gaps */
      }
      /* row counts around the 64-row blocks of the transposed variant (16 rows and up: a part
       * block; fewer left over: the gathers), with and without gaps between rows, in place */
      if (c <= 20 || c % 8 == 0 || c % 8 == 1 || c % 8 == 7 || i >= 70) {
        static const size_t brows[] = {15, 16, 17, 63, 64, 65, 79, 80, 100, 130};
        for (size_t b = 0; b < sizeof(brows) / sizeof(brows[0]); b++) {
          const size_t gx = c + 1 + (c * 7 + b) % 37, gy = c + 3 + (c * 13 + b) % 41;
          CHECK(lutc_case(fn, name, brows[b], c, c, c, 0, 0) == 0);
          CHECK(lutc_case(fn, name, brows[b], c, gx, gy, 0, 0) == 0);
          CHECK(lutc_case(fn, name, brows[b], c, gx, gx, 1, 0) == 0);
        }
      }
      /* every byte value in every channel: 256 rows, and 259 (an odd total length) */
      if (c <= 20 || i >= 70) {
        CHECK(lutc_case(fn, name, 256, c, c, c, 0, 1) == 0);
        CHECK(lutc_case(fn, name, 259, c, c, c, 0, 1) == 0);
        CHECK(lutc_case(fn, name, 259, c, c + 5, c + 2, 0, 1) == 0);
      }
    }
  }
  return 0;
}

/* Each optimized variant against the scalar twin on the same random bytes (long runs: the
 * channel offsets wrapping many times), the scalar twin being the list's last line. */
Q8RT_TEST(x8_lutc_matches_scalar) {
  const size_t nv = sizeof(lutc_variants) / sizeof(lutc_variants[0]);
  static const size_t chans[] = {1, 3, 15, 16, 17, 31, 48, 64, 65, 140, 250};
  enum { N = 40000 };
  uint8_t *tables = malloc(250 * 256), *x = malloc(N), *y0 = malloc(N), *y1 = malloc(N);
  CHECK(tables != NULL && x != NULL && y0 != NULL && y1 != NULL);
  for (size_t i = 0; i < 250 * 256; i++) tables[i] = (uint8_t)(test_xorshift32(&g_lutc_rng) >> 24);
  for (size_t i = 0; i < N; i++) x[i] = (uint8_t)(test_xorshift32(&g_lutc_rng) >> 24);
  int bad = 0;
  for (size_t k = 0; k + 1 < nv && !bad; k++) {
    if (!test_isa_supported(lutc_variants[k].isa)) continue;
    for (size_t j = 0; j < sizeof(chans) / sizeof(chans[0]) && !bad; j++) {
      const size_t c = chans[j], rows = N / c;
      memset(y0, 0x5A, N), memset(y1, 0x5A, N);
      lutc_variants[nv - 1].fn(rows, c, x, c, y0, c, tables);
      lutc_variants[k].fn(rows, c, x, c, y1, c, tables);
      if (memcmp(y0, y1, N) != 0) {
        fprintf(stderr, "  %s: channels %zu differs from the scalar twin\n", lutc_variants[k].name, c);
        bad = 1;
      }
    }
  }
  free(tables), free(x), free(y0), free(y1);
  return bad;
}
