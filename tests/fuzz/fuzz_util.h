/* Shared by the fuzz targets: a byte reader over the fuzz input and the input fillers.
 * Header-only (static functions) so each target stays one translation unit. */
#ifndef Q8RT_FUZZ_UTIL_H
#define Q8RT_FUZZ_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "q8rt.h"

/* A finding: say where, then stop the way libFuzzer records a crash. */
#define FZ_FAIL()                                                         \
  do {                                                                    \
    fprintf(stderr, "fuzz: check failed at %s:%d\n", __FILE__, __LINE__); \
    __builtin_trap();                                                     \
  } while (0)

/* The targets' cap on Loop iterations (q8rt_session_options.max_loop_iterations): a trip count
 * from the fuzzer (a mutated constant, a bound dim) reaches the cap's error path in a few
 * iterations rather than the default million. */
#define FZ_MAX_LOOP_ITERATIONS 64

/* The fuzz input as a model under the budgets the model-byte targets share (inputs over 1 MiB are
 * skipped, a 16 MiB decode budget); NULL when refused, which must come with a message. */
static inline q8rt_model *fz_load_model(const uint8_t *data, size_t size) {
  if (size > (1u << 20)) return NULL;
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.max_unpack_bytes = 16u << 20;
  q8rt_model *model = NULL;
  q8rt_error err;
  memset(&err, 0, sizeof(err));
  if (q8rt_model_load_memory(data, size, &mo, &model, &err) != Q8RT_OK) {
    if (err.message[0] == '\0') FZ_FAIL();
    return NULL;
  }
  return model;
}

/* Reads bytes from the fuzz input; past the end it yields zeros, so every input decodes. */
typedef struct fz_reader {
  const uint8_t *p;
  size_t n, i;
} fz_reader;

static inline uint8_t fz_u8(fz_reader *r) { return r->i < r->n ? r->p[r->i++] : 0; }
static inline uint16_t fz_u16(fz_reader *r) {
  const uint8_t lo = fz_u8(r); /* two statements: the operands of | have no defined order */
  return (uint16_t)(lo | fz_u8(r) << 8);
}

/* A dimension for a symbolic axis: mostly small, sometimes a tile edge, sometimes hostile. */
static inline int64_t fz_dim(fz_reader *r) {
  static const int64_t edges[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128};
  static const int64_t hostile[] = {
      0,         -1,        -2,  1 << 16, 1 << 20, (int64_t)1 << 31, INT32_MAX, (int64_t)1 << 40, INT64_MAX / 2,
      INT64_MAX, INT64_MIN, 4097};
  const uint8_t b = fz_u8(r);
  if (b < 200) return 1 + b % 12;
  if (b < 240) return edges[(b - 200) % (sizeof(edges) / sizeof(edges[0]))];
  return hostile[(b - 240) % (sizeof(hostile) / sizeof(hostile[0]))];
}

/* Fill a float32 tensor: special values (NaN with payloads, infinities, denormals, signed
 * zeros, extremes), small values and raw bit patterns, cycling through `src`. */
static inline void fz_fill_f32(float *dst, size_t count, const uint8_t *src, size_t n) {
  static const uint32_t special[16] = {
      0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbfffffu, /* NaNs: quiet, negative, signalling */
      0x7f800000u, 0xff800000u,                           /* +-inf */
      0x00000001u, 0x80000001u, 0x007fffffu,              /* denormals */
      0x00000000u, 0x80000000u,                           /* +-0 */
      0x7f7fffffu, 0xff7fffffu, 0x00800000u,              /* +-FLT_MAX, FLT_MIN */
      0x4f000000u, 0xcf000000u,                           /* +-2^31: int32 conversion edges */
  };
  size_t j = 0;
  for (size_t i = 0; i < count; i++) {
    const uint8_t c = n ? src[j++ % n] : 0;
    uint32_t bits;
    if (c < 16) {
      bits = special[c];
    } else if (c < 160) {
      const float v = (float)((int)c - 88) * 0.125f;
      memcpy(&bits, &v, 4);
    } else {
      bits = 0;
      for (int k = 0; k < 4; k++) bits = bits << 8 | (n ? src[j++ % n] : 0);
    }
    memcpy(&dst[i], &bits, 4);
  }
}

static inline void fz_fill(q8rt_dtype dtype, void *dst, size_t nbytes, const uint8_t *src, size_t n) {
  if (dtype == Q8RT_DTYPE_FLOAT32) {
    fz_fill_f32(dst, nbytes / 4, src, n);
    return;
  }
  uint8_t *d = dst;
  for (size_t i = 0; i < nbytes; i++) d[i] = n ? src[i % n] : 0;
}

#endif
