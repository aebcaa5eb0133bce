/* x8-lut: every variant of x8-lut.inc against the definition y[i] = table[x[i]], every length up to 70
 * (the unrolled body and its tail), in place and out of place. */
#include <stdlib.h>

#include "q8rt-kernels.h"
#include "test.h"

static int lut_one(q8rt_x8_lut_ukernel_fn lut);

static const struct {
  unsigned isa;
  q8rt_x8_lut_ukernel_fn fn;
  q8rt_x8_lut_rows_ukernel_fn rows_fn;
  const char *name;
} lut_variants[] = {
#define Q8RT_X8_LUT_UKERNEL(isa, fn, rows_fn) {isa, fn, rows_fn, #fn},
#include "x8-lut/x8-lut.inc"
#undef Q8RT_X8_LUT_UKERNEL
};

/* Every variant of x8-lut.inc against the definition. */
Q8RT_TEST(x8_lut_vs_definition) {
  for (size_t k = 0; k < sizeof(lut_variants) / sizeof(lut_variants[0]); k++) {
    if (!test_isa_supported(lut_variants[k].isa)) {
      printf("  skip %s: CPU lacks its ISA\n", lut_variants[k].name);
      continue;
    }
    if (lut_one(lut_variants[k].fn) != 0) return 1;
  }
  return 0;
}

/* The rows form of every variant: rows of n bytes (0..70) inside wider rows (strides n + 1 to n + 67,
 * different for x and y, and in place), against the definition; the bytes between the rows, and
 * past the last, untouched. */
Q8RT_TEST(x8_lut_rows_vs_definition) {
  enum { ROWS = 5, CAP = ROWS * 140 };
  uint8_t table[256], x[CAP], y[CAP], yi[CAP];
  uint32_t r = 0x2545F491u;
  for (int i = 0; i < 256; i++) {
    r = r * 1664525u + 1013904223u;
    table[i] = (uint8_t)(r >> 24);
  }
  for (size_t k = 0; k < sizeof(lut_variants) / sizeof(lut_variants[0]); k++) {
    if (!test_isa_supported(lut_variants[k].isa)) continue;
    for (size_t n = 0; n <= 70; n++) {
      for (size_t rows = 0; rows <= ROWS; rows++) {
        const size_t xs = n + 1 + (n * 7 + rows) % 67, ys = n + 1 + (n * 13 + 3 * rows) % 67;
        for (size_t i = 0; i < CAP; i++) {
          r = r * 1664525u + 1013904223u;
          x[i] = (uint8_t)(r >> 24);
        }
        memset(y, 0xA5, sizeof(y));
        memcpy(yi, x, sizeof(x));
        lut_variants[k].rows_fn(rows, n, x, xs, y, ys, table);
        lut_variants[k].rows_fn(rows, n, yi, xs, yi, xs, table);
        for (size_t i = 0; i < CAP; i++) {
          const size_t ry = i / ys, cy = i % ys, rx = i / xs, cx = i % xs;
          const uint8_t want_y = ry < rows && cy < n ? table[x[ry * xs + cy]] : 0xA5;
          const uint8_t want_i = rx < rows && cx < n ? table[x[i]] : x[i];
          if (y[i] != want_y || yi[i] != want_i) {
            fprintf(stderr, "  %s: rows %zu n %zu strides %zu/%zu: byte %zu is %u/%u, want %u/%u\n",
                    lut_variants[k].name, rows, n, xs, ys, i, y[i], yi[i], want_y, want_i);
            return 1;
          }
        }
      }
    }
  }
  return 0;
}

static int lut_one(q8rt_x8_lut_ukernel_fn lut) {
  uint8_t table[256], x[80], y[80];
  uint32_t r = 0x9E3779B9u;
  for (int i = 0; i < 256; i++) {
    r = r * 1664525u + 1013904223u;
    table[i] = (uint8_t)(r >> 24);
  }
  for (size_t n = 0; n <= 70; n++) {
    for (size_t i = 0; i < sizeof(x); i++) {
      r = r * 1664525u + 1013904223u;
      x[i] = (uint8_t)(r >> 24);
    }
    memset(y, 0xA5, sizeof(y));
    lut(n, x, y, table);
    for (size_t i = 0; i < n; i++) CHECK(y[i] == table[x[i]]);
    for (size_t i = n; i < sizeof(y); i++) CHECK(y[i] == 0xA5); /* nothing past n */
    uint8_t inplace[80];
    memcpy(inplace, x, sizeof(x));
    lut(n, inplace, inplace, table);
    CHECK(memcmp(inplace, y, n) == 0);
  }
  return 0;
}

Q8RT_TEST(x8_lut_avx512vbmi_matches_scalar) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx512vbmi") || !__builtin_cpu_supports("avx512bw")) {
    printf("  (skipped: no AVX-512 VBMI)\n");
    return 0;
  }
  uint8_t table[256], x[300], y1[300 + 64], y2[300 + 64];
  uint32_t r = 12345u;
  for (int i = 0; i < 256; i++) {
    r = r * 1664525u + 1013904223u;
    table[i] = (uint8_t)(r >> 24);
  }
  for (size_t n = 0; n <= 300; n += (n < 140 ? 1 : 37)) {
    for (size_t i = 0; i < sizeof(x); i++) {
      r = r * 1664525u + 1013904223u;
      x[i] = (uint8_t)(r >> 24);
    }
    x[0] = 0, x[sizeof(x) - 1] = 255; /* both table ends */
    memset(y1, 0x3C, sizeof(y1));
    memset(y2, 0x3C, sizeof(y2));
    q8rt_x8_lut_ukernel__scalar(n, x, y1, table);
    q8rt_x8_lut_ukernel_64__avx512vbmi(n, x, y2, table);
    CHECK(memcmp(y1, y2, sizeof(y1)) == 0); /* same bytes, nothing written past n */
  }
#endif
  return 0;
}

/* Every variant on every byte value (each 16-entry slice of the table and both halves, which the
 * AVX2 variant reaches through different lookup steps), at every offset within a 32- and 64-byte
 * block, for tables of distinct random bytes, all-equal slices and the identity. */
Q8RT_TEST(x8_lut_every_byte_every_lane) {
  uint8_t table[256], x[256 + 64], y[256 + 64];
  uint32_t r = 0x7F4A7C15u;
  for (size_t k = 0; k < sizeof(lut_variants) / sizeof(lut_variants[0]); k++) {
    if (!test_isa_supported(lut_variants[k].isa)) continue;
    for (int kind = 0; kind < 4; kind++) {
      for (int i = 0; i < 256; i++) {
        r = r * 1664525u + 1013904223u;
        table[i] = kind == 0   ? (uint8_t)(r >> 24)
                   : kind == 1 ? (uint8_t)i
                   : kind == 2 ? (uint8_t)(i >> 4)
                               : (uint8_t)~i;
      }
      for (size_t shift = 0; shift < 64; shift += 7) {
        for (size_t i = 0; i < sizeof(x); i++) x[i] = (uint8_t)(i + 256 - shift);
        memset(y, 0x5A, sizeof(y));
        lut_variants[k].fn(256 + shift, x, y, table);
        for (size_t i = 0; i < 256 + shift; i++) {
          if (y[i] != table[x[i]]) {
            fprintf(stderr, "  %s: table kind %d shift %zu: byte %zu (x %u) is %u, want %u\n", lut_variants[k].name,
                    kind, shift, i, x[i], y[i], table[x[i]]);
            return 1;
          }
        }
        for (size_t i = 256 + shift; i < sizeof(y); i++) CHECK(y[i] == 0x5A);
      }
    }
  }
  return 0;
}
