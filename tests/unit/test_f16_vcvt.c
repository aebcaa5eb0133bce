/* f16-f32-vcvt and f32-f16-vcvt: the scalar twins against hand-written bit patterns (round half to
 * even, the overflow edge, subnormals, signalling and quiet NaNs), then every variant of the .inc
 * lists against its twin byte for byte: all 65536 float16 bit patterns widened; float32 values at,
 * one ulp around and between every float16 midpoint (normal and subnormal), around the overflow
 * edge 65520, float32 subnormals, infinities and NaNs with every payload bit narrowed; each over
 * lengths 0..300 at every offset of the input so the tails are covered. */
#include <stdlib.h>
#include <string.h>

#include "f16-f32-vcvt/f16-f32-vcvt.h"
#include "f32-f16-vcvt/f32-f16-vcvt.h"
#include "test.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f16_f32_vcvt_ukernel_fn fn;
} g_widen[] = {
#define Q8RT_F16_F32_VCVT_UKERNEL(isa, fn) {#fn, isa, fn},
#include "f16-f32-vcvt/f16-f32-vcvt.inc"
#undef Q8RT_F16_F32_VCVT_UKERNEL
    {"q8rt_f16_f32_vcvt_ukernel__scalar", Q8RT_ISA_SCALAR, q8rt_f16_f32_vcvt_ukernel__scalar},
};

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_f16_vcvt_ukernel_fn fn;
} g_narrow[] = {
#define Q8RT_F32_F16_VCVT_UKERNEL(isa, fn) {#fn, isa, fn},
#include "f32-f16-vcvt/f32-f16-vcvt.inc"
#undef Q8RT_F32_F16_VCVT_UKERNEL
    {"q8rt_f32_f16_vcvt_ukernel__scalar", Q8RT_ISA_SCALAR, q8rt_f32_f16_vcvt_ukernel__scalar},
};

static float bits_f32(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

static uint32_t f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

Q8RT_TEST(f16_vcvt_scalar_twins) {
  static const struct {
    uint16_t h;
    uint32_t f;
  } widen[] = {
      {0x0000, 0x00000000}, {0x8000, 0x80000000}, {0x3c00, 0x3f800000}, {0xc000, 0xc0000000},
      {0x7bff, 0x477fe000},                                             /* 65504 */
      {0x0001, 0x33800000},                                             /* 2^-24 */
      {0x03ff, 0x387fc000},                                             /* the largest subnormal */
      {0x0400, 0x38800000},                                             /* 2^-14 */
      {0x7c00, 0x7f800000}, {0xfc00, 0xff800000}, {0x7c01, 0x7f802000}, /* a signalling NaN stays signalling (ONNX
                                                                           Runtime, NumPy) */
      {0xfd55, 0xffaaa000}, {0x7e00, 0x7fc00000}, {0x7fff, 0x7fffe000},
  };
  for (size_t i = 0; i < sizeof(widen) / sizeof(widen[0]); i++) {
    float y;
    q8rt_f16_f32_vcvt_ukernel__scalar(1, &widen[i].h, &y);
    CHECK(f32_bits(y) == widen[i].f);
  }
  static const struct {
    uint32_t f;
    uint16_t h;
  } narrow[] = {
      {0x3f800000, 0x3c00}, {0x3f801000, 0x3c00}, /* 1 + 2^-11: a tie, to even (down) */
      {0x3f803000, 0x3c02},                       /* 1 + 3 * 2^-11: a tie, to even (up) */
      {0x3f801001, 0x3c01},                       /* just above the tie */
      {0x477fe000, 0x7bff},                       /* 65504 */
      {0x477fefff, 0x7bff},                       /* just below 65520 */
      {0x477ff000, 0x7c00},                       /* 65520: inf */
      {0xc77ff000, 0xfc00}, {0x7f7fffff, 0x7c00}, {0x7f800000, 0x7c00}, {0xff800000, 0xfc00},
      {0x33000000, 0x0000},                       /* 2^-25: a tie between 0 and 2^-24, to 0 */
      {0x33000001, 0x0001}, {0x33c00000, 0x0002}, /* 1.5 * 2^-24: a tie, to 2 */
      {0xb3c00000, 0x8002}, {0x387fe000, 0x0400}, /* rounds up into the smallest normal */
      {0x00000001, 0x0000}, {0x80000001, 0x8000}, /* float32 subnormals: +-0 */
      {0x7f800001, 0x7e00},                       /* a signalling NaN: quieted, the payload's top bits */
      {0xffa00000, 0xff00}, {0x7fc00000, 0x7e00}, {0x7f802000, 0x7e01}, {0x7fffffff, 0x7fff},
  };
  for (size_t i = 0; i < sizeof(narrow) / sizeof(narrow[0]); i++) {
    uint16_t y;
    const float x = bits_f32(narrow[i].f);
    q8rt_f32_f16_vcvt_ukernel__scalar(1, &x, &y);
    CHECK(y == narrow[i].h);
  }
  return 0;
}

Q8RT_TEST(f16_f32_vcvt_every_pattern_vs_scalar) {
  uint16_t *x = malloc(65536 * 2);
  float *y0 = malloc(65536 * 4 + 64), *y1 = malloc(65536 * 4 + 64);
  CHECK(x != NULL && y0 != NULL && y1 != NULL);
  for (uint32_t i = 0; i < 65536; i++) x[i] = (uint16_t)i;
  q8rt_f16_f32_vcvt_ukernel__scalar(65536, x, y0);
  for (size_t k = 0; k < sizeof(g_widen) / sizeof(g_widen[0]); k++) {
    if (!test_isa_supported(g_widen[k].isa)) {
      printf("     skip %s (CPU lacks its ISA)\n", g_widen[k].name);
      continue;
    }
    memset(y1, 0x5a, 65536 * 4);
    g_widen[k].fn(65536, x, y1);
    CHECK(memcmp(y0, y1, 65536 * 4) == 0);
    /* lengths 0..300 at several offsets: the tails, nothing written past n */
    for (size_t off = 0; off < 65536 - 300; off += 997) {
      for (size_t n = 0; n <= 300; n++) {
        memset(y1, 0x5a, (n + 16) * 4);
        g_widen[k].fn(n, x + off, y1);
        CHECK(memcmp(y1, y0 + off, n * 4) == 0);
        for (size_t i = n; i < n + 16; i++) CHECK(f32_bits(y1[i]) == 0x5a5a5a5au);
      }
    }
  }
  free(x);
  free(y0);
  free(y1);
  return 0;
}

/* float32 inputs for the narrowing sweep: for every float16 h (non-negative, below inf), the
 * midpoint between h and h + 1 ulp and the float32 values 1 and 2 ulps around it and around h;
 * every float32 NaN payload bit alone, the overflow edge, float32 subnormals, +-inf; each with
 * both signs. */
static size_t narrow_inputs(float *v) {
  size_t n = 0;
  for (uint32_t h = 0; h < 0x7c00; h++) {
    const float lo = q8rt_f16_f32_element((uint16_t)h), hi = q8rt_f16_f32_element((uint16_t)(h + 1));
    const uint32_t mid = f32_bits((lo + hi) * 0.5f), at = f32_bits(lo); /* exact: both within float32 */
    const uint32_t c[] = {mid - 2, mid - 1, mid, mid + 1, mid + 2, at, at + 1, at == 0 ? 0 : at - 1};
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
      v[n++] = bits_f32(c[i]);
      v[n++] = bits_f32(c[i] | 0x80000000u);
    }
  }
  for (int b = 0; b < 23; b++) { /* NaN payloads: each bit alone, and with the quiet bit */
    v[n++] = bits_f32(0x7f800000u | 1u << b);
    v[n++] = bits_f32(0xff800000u | 1u << b);
    v[n++] = bits_f32(0x7fc00000u | 1u << b);
    v[n++] = bits_f32(0xffc00000u | 1u << b | 0x1555u);
  }
  static const uint32_t extra[] = {0x477fefff, 0x477ff000, 0x477ff001, 0x47800000, 0x7f7fffff, 0x7f800000,
                                   0x00000001, 0x007fffff, 0x00400000, 0x00800000, 0x7fffffff, 0x7f801fff};
  for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
    v[n++] = bits_f32(extra[i]);
    v[n++] = bits_f32(extra[i] | 0x80000000u);
  }
  return n;
}

#define NARROW_MAX (0x7c00 * 16 + 23 * 4 + 24)

Q8RT_TEST(f32_f16_vcvt_edges_vs_scalar) {
  float *x = malloc(NARROW_MAX * 4);
  uint16_t *y0 = malloc(NARROW_MAX * 2 + 64), *y1 = malloc(NARROW_MAX * 2 + 64);
  CHECK(x != NULL && y0 != NULL && y1 != NULL);
  const size_t total = narrow_inputs(x);
  CHECK(total <= NARROW_MAX);
  q8rt_f32_f16_vcvt_ukernel__scalar(total, x, y0);
  /* the twin itself at the midpoints: ties to even, one float32 ulp either side away from the tie */
  for (uint32_t h = 0; h < 0x7bff; h++) { /* 0x7bff's "midpoint" is 65504 + inf: checked below */
    const uint16_t *r = y0 + (size_t)h * 16;
    const uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
    CHECK(r[0] == h && r[2] == h && r[4] == even && r[6] == h + 1 && r[8] == h + 1 && r[10] == h);
    CHECK(r[5] == (uint16_t)(even | 0x8000u));
  }
  const size_t e = (size_t)0x7c00 * 16 + 23 * 4; /* the extra values: 65520 - ulp, 65520, ... */
  CHECK(y0[e] == 0x7bff && y0[e + 2] == 0x7c00 && y0[e + 3] == 0xfc00 && y0[e + 6] == 0x7c00);
  for (size_t k = 0; k < sizeof(g_narrow) / sizeof(g_narrow[0]); k++) {
    if (!test_isa_supported(g_narrow[k].isa)) {
      printf("     skip %s (CPU lacks its ISA)\n", g_narrow[k].name);
      continue;
    }
    memset(y1, 0x5a, total * 2);
    g_narrow[k].fn(total, x, y1);
    for (size_t i = 0; i < total; i++) {
      if (y1[i] != y0[i]) {
        printf("     %s: x 0x%08x gives 0x%04x, the twin 0x%04x\n", g_narrow[k].name, f32_bits(x[i]), y1[i], y0[i]);
        CHECK(0);
      }
    }
    for (size_t off = 0; off + 300 < total; off += 4999) {
      for (size_t n = 0; n <= 300; n++) {
        memset(y1, 0x5a, (n + 32) * 2);
        g_narrow[k].fn(n, x + off, y1);
        CHECK(memcmp(y1, y0 + off, n * 2) == 0);
        for (size_t i = n; i < n + 32; i++) CHECK(y1[i] == 0x5a5au);
      }
    }
  }
  free(x);
  free(y0);
  free(y1);
  return 0;
}
