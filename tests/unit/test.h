/* A minimal test harness: each test file registers its cases with Q8RT_TEST; main.c runs them
 * all and prints "N passed, N failed". A case fails on the first CHECK that does not hold. */
#ifndef Q8RT_TEST_H
#define Q8RT_TEST_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "q8rt-isa.h"
#include "runtime/isa.h"

typedef struct q8rt_test_case {
  const char *name;
  int (*fn)(void); /* 0 = pass */
} q8rt_test_case;

void q8rt_test_register(const char *name, int (*fn)(void));

#define Q8RT_TEST(name)                                                                                      \
  static int test_##name(void);                                                                              \
  __attribute__((constructor)) static void register_##name(void) { q8rt_test_register(#name, test_##name); } \
  static int test_##name(void)

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

#define CHECK_OK(call)                                                    \
  do {                                                                    \
    q8rt_error check_err_;                                                \
    memset(&check_err_, 0, sizeof(check_err_));                           \
    (void)check_err_;                                                     \
    if ((call) != Q8RT_OK) {                                              \
      fprintf(stderr, "  %s:%d: %s failed\n", __FILE__, __LINE__, #call); \
      return 1;                                                           \
    }                                                                     \
  } while (0)

/* Xorshift32 (Marsaglia): the kernel tests' reproducible random numbers, one state per test file
 * (seeded there) so that each file draws the same sequence whatever runs before it. */
static inline uint32_t test_xorshift32(uint32_t *state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *state = x;
  return x;
}

/* A quantization scale for the conversion tests: a power of two in [2^-10, 2^10] (exact ties) or
 * one of a few values that are not. */
static inline float test_quant_scale(uint32_t *state) {
  static const float odd[] = {0.1f, 1.0f / 3.0f, 0.0235294122f, 3.0f, 7.5f, 0.00390625f, 1.7f, 123.456f};
  if (test_xorshift32(state) & 1) return ldexpf(1.0f, (int)(test_xorshift32(state) % 21) - 10);
  return odd[test_xorshift32(state) % (sizeof(odd) / sizeof(odd[0]))];
}

/* nearbyintf in the default rounding mode is round-half-even: an independent twin of
 * q8rt_round_clamp (NaN -> lo) for the kernel tests. */
static inline int32_t test_ref_round_clamp(float v, float lo, float hi) {
  if (isnan(v)) return (int32_t)lo;
  float r = nearbyintf(v);
  if (r < lo) r = lo;
  if (r > hi) r = hi;
  return (int32_t)r;
}

/* Float arrays equal bit for bit, except that any NaN matches any NaN: which operand's payload an
 * add of two NaNs keeps depends on the operand order the compiler picks for the scalar twin (it
 * differs between the plain and the sanitizer builds), not on the kernel. */
static inline bool test_f32_same(const float *a, const float *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (isnan(a[i]) || isnan(b[i])) {
      if (!(isnan(a[i]) && isnan(b[i]))) return false;
    } else if (memcmp(&a[i], &b[i], sizeof(float)) != 0) {
      return false;
    }
  }
  return true;
}

/* A float for the float kernels' sweeps: mostly ordinary values whose sums round (multiples of
 * 2^-6 scaled by 2^-4..2^4), one in eight a special one (signed zeros, infinities, NaN, denormals,
 * huge, random bits). */
static inline float test_f32_value(uint32_t *state) {
  const uint32_t r = test_xorshift32(state) % 64;
  uint32_t bits;
  float v;
  switch (r) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return INFINITY;
    case 3: return -INFINITY;
    case 4: return NAN;
    case 5: return 1e-40f;  /* denormal */
    case 6: return -3e-39f; /* denormal */
    case 7: return 3e38f;
    case 8:
      bits = test_xorshift32(state);
      memcpy(&v, &bits, sizeof(v));
      return v;
    default:
      return ((float)(int32_t)(test_xorshift32(state) % 2001) - 1000.0f) * (1.0f / 64.0f) *
             ldexpf(1.0f, (int)(r % 9) - 4);
  }
}

/* n values of test_f32_value in a new malloc'd array (the caller frees it) */
static inline float *test_f32_fill(uint32_t *state, size_t n) {
  float *p = malloc(n ? n * sizeof(float) : 1);
  if (p == NULL) return NULL;
  for (size_t i = 0; i < n; i++) p[i] = test_f32_value(state);
  return p;
}

/* Whether this CPU runs a kernel-list entry's instruction set (enum q8rt_isa flags), so the kernel
 * tests can walk every line of a family's .inc and skip what the machine lacks: the library's own
 * detection (cpuinfo, HWCAP2), the one the dispatchers use. */
static inline bool test_isa_supported(unsigned isa) { return (isa & ~q8rt_cpu_isa()) == 0; }

#endif
