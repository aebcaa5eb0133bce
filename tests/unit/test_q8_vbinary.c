/* q8-vbinary (QLinearAdd / QLinearMul rows): every variant of q8-vbinary.inc against the scalar twin
 * byte for byte, and the scalar twins against the formulas written out here (ONNX Runtime's MLAS
 * arithmetic, as src/ops/qlinear_add_mul.c states it). Lengths 0..70 and long rows, u8 and s8,
 * zero points at the limits, scales that make exact .5 ties, saturation, NaN/inf ratios, both
 * operand orders, contiguous and broadcast second operand, in place. */
#include <math.h>
#include <stdlib.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "test.h"

static uint32_t vb_rng = 0x9e3779b9u;
static uint32_t vb_rnd(void) { return test_xorshift32(&vb_rng); }

/* Every line of q8-vbinary.inc: {vadd, vaddc, vmul, vmulc} for u8 and s8. */
typedef struct vb_set {
  unsigned isa;
  const char *name;
  q8rt_qu8_vbinary_ukernel_fn u8[4];
  q8rt_qs8_vbinary_ukernel_fn s8[4];
} vb_set;

static const vb_set vb_sets[] = {
#define Q8RT_VBINARY_UKERNELS(isa_flag, isa)                                                   \
  {isa_flag,                                                                                   \
   #isa,                                                                                       \
   {q8rt_qu8_vadd_ukernel__##isa, q8rt_qu8_vaddc_ukernel__##isa, q8rt_qu8_vmul_ukernel__##isa, \
    q8rt_qu8_vmulc_ukernel__##isa},                                                            \
   {q8rt_qs8_vadd_ukernel__##isa, q8rt_qs8_vaddc_ukernel__##isa, q8rt_qs8_vmul_ukernel__##isa, \
    q8rt_qs8_vmulc_ukernel__##isa}},
#include "q8-vbinary/q8-vbinary.inc"
#undef Q8RT_VBINARY_UKERNELS
};
#define VB_NSETS (sizeof(vb_sets) / sizeof(vb_sets[0]))

static const vb_set *vb_scalar(void) {
  for (size_t i = 0; i < VB_NSETS; i++) {
    if (vb_sets[i].isa == Q8RT_ISA_SCALAR) return &vb_sets[i];
  }
  return NULL;
}

/* The formulas, independently: cvtps2dq (round half even, NaN/out of range -> INT32_MIN) then
 * clamp to the type. nearbyintf follows the rounding mode, which the tests leave at nearest. */
static int32_t vb_ref_cvt(float v, int is_signed) {
  int32_t i = INT32_MIN;
  if (v >= -2147483648.0f && v < 2147483648.0f) i = (int32_t)nearbyintf(v);
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  return i < lo ? lo : i > hi ? hi : i;
}

static int32_t vb_ref(int op, int32_t x1, int32_t x2, const q8rt_q8_vbinary_params *p, int is_signed) {
  float v;
  if (op == 0) {
    v = fmaf((float)x1, p->r1, fmaf((float)x2, p->r2, p->f));
  } else {
    const int32_t prod = (x1 - p->z1) * (x2 - p->z2);
    v = (float)prod * p->ratio + p->zc;
  }
  return vb_ref_cvt(v, is_signed);
}

static const float vb_scales[] = {1.0f / 8, 3.0f / 16, 1.0f / 4, 1.0f / 2, 1.0f,  0.05f,         0.07f,       1e-4f,
                                  3.0f,     5.0f,      1e-6f,    1e-3f,    50.0f, 0.0235294122f, 0.00390625f, 1.0f / 3};

static float vb_scale(void) {
  if (vb_rnd() % 4 == 0) return ldexpf(1.0f, (int)(vb_rnd() % 17) - 8); /* 2^-8..2^8: many ties */
  return vb_scales[vb_rnd() % (sizeof(vb_scales) / sizeof(vb_scales[0]))];
}

static int32_t vb_zp(int is_signed) {
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  switch (vb_rnd() % 4) {
    case 0: return lo;
    case 1: return hi;
    default: return lo + (int32_t)(vb_rnd() % 256);
  }
}

/* Parameters the way qlinear_add_mul.c derives them from (sA, zA, sB, zB, sC, zC); `swap` gives
 * the B-first order. Occasionally degenerate (inf / NaN ratios) to cover the INT32_MIN path. */
static q8rt_q8_vbinary_params vb_params(int is_signed, int swap) {
  float sa = vb_scale(), sb = vb_scale(), sc = vb_scale();
  if (vb_rnd() % 16 == 0) sc = 1e-38f;   /* ratios overflow to inf */
  if (vb_rnd() % 32 == 0) sa = INFINITY; /* inf * 0 = NaN */
  const int32_t za = vb_zp(is_signed), zb = vb_zp(is_signed), zc = vb_zp(is_signed);
  const float ra = sa / sc, rb = sb / sc;
  q8rt_q8_vbinary_params p;
  memset(&p, 0, sizeof(p));
  const uint32_t fl = vb_rnd() % 4; /* plain, the uint8 twin's 0x80, any byte */
  p.flip = fl < 2 ? 0 : fl == 2 ? 0x80 : (uint8_t)vb_rnd();
  p.ratio = sa * sb / sc;
  p.zc = (float)zc;
  if (!swap) {
    p.r1 = ra, p.r2 = rb, p.f = (float)zc - fmaf(ra, (float)za, rb * (float)zb);
    p.z1 = za, p.z2 = zb;
  } else {
    p.r1 = rb, p.r2 = ra, p.f = (float)zc - fmaf(rb, (float)zb, ra * (float)za);
    p.z1 = zb, p.z2 = za;
  }
  return p;
}

static void vb_fill(uint8_t *x, size_t n) {
  const int mode = (int)(vb_rnd() % 4);
  for (size_t i = 0; i < n; i++) {
    switch (mode) {
      case 0: x[i] = (uint8_t)i; break;                            /* every value in order */
      case 1: x[i] = vb_rnd() & 1 ? 0x00 : 0xFF; break;            /* extremes */
      case 2: x[i] = (uint8_t)(0x7F + (int)(vb_rnd() % 3)); break; /* around the sign flip */
      default: x[i] = (uint8_t)vb_rnd(); break;
    }
  }
}

static size_t vb_len(int trial) {
  if (trial < 71 * 4) return (size_t)(trial % 71);
  return 100 + vb_rnd() % 5000;
}

#define VB_MAXN 5200

/* The scalar twins (u8 and s8, four variants each) against the written-out formulas. */
Q8RT_TEST(vbinary_scalar_vs_formula) {
  static uint8_t x1[VB_MAXN], x2[VB_MAXN], y[VB_MAXN];
  const vb_set *sc = vb_scalar();
  CHECK(sc != NULL);
  const q8rt_qu8_vbinary_ukernel_fn *u8 = sc->u8;
  const q8rt_qs8_vbinary_ukernel_fn *s8 = sc->s8;
  for (int trial = 0; trial < 600; trial++) {
    const size_t n = vb_len(trial);
    const int is_signed = (int)(vb_rnd() & 1), v = (int)(vb_rnd() % 4), op = v / 2, bcast = v & 1;
    const q8rt_q8_vbinary_params p = vb_params(is_signed, (int)(vb_rnd() & 1));
    vb_fill(x1, n);
    vb_fill(x2, n == 0 ? 1 : n);
    if (is_signed) {
      s8[v](n, (const int8_t *)x1, (const int8_t *)x2, (int8_t *)y, &p);
    } else {
      u8[v](n, x1, x2, y, &p);
    }
    for (size_t i = 0; i < n; i++) {
      /* flip: the formula on the flipped bytes, its result flipped back */
      const uint8_t b1 = (uint8_t)(x1[i] ^ p.flip), b2 = (uint8_t)(x2[bcast ? 0 : i] ^ p.flip);
      const int32_t a1 = is_signed ? (int8_t)b1 : b1, a2 = is_signed ? (int8_t)b2 : b2;
      const int32_t want = vb_ref(op, a1, a2, &p, is_signed);
      const uint8_t yb = (uint8_t)(y[i] ^ p.flip);
      if ((int32_t)(is_signed ? (int8_t)yb : yb) != want) {
        fprintf(stderr, "  trial %d variant %d signed %d flip %d n %zu i %zu: x1 %d x2 %d got %d want %d\n", trial, v,
                is_signed, p.flip, n, i, a1, a2, is_signed ? (int8_t)yb : yb, want);
        CHECK(0);
      }
    }
  }
  return 0;
}

/* Every other variant of the list vs the scalar twin, byte for byte: every function, both types,
 * both operand orders (the parameter sets of A-first and B-first), odd offsets, in place, and no
 * write past n. */
Q8RT_TEST(vbinary_variants_vs_scalar) {
  static uint8_t x1[VB_MAXN + 64], x2[VB_MAXN + 64], ys[VB_MAXN + 64], yv[VB_MAXN + 64], xi[VB_MAXN + 64];
  const vb_set *sc = vb_scalar();
  CHECK(sc != NULL);
  for (size_t k = 0; k < VB_NSETS; k++) {
    const vb_set *vs = &vb_sets[k];
    if (vs == sc) continue;
    if (!test_isa_supported(vs->isa)) {
      printf("  skip %s: CPU lacks its ISA\n", vs->name);
      continue;
    }
    size_t total = 0;
    for (int trial = 0; trial < 4000; trial++) {
      const size_t n = vb_len(trial % 700);
      const size_t off = vb_rnd() % 8;
      const int is_signed = (int)(vb_rnd() & 1), v = (int)(vb_rnd() % 4);
      const q8rt_q8_vbinary_params p = vb_params(is_signed, (int)(vb_rnd() & 1));
      vb_fill(x1 + off, n);
      vb_fill(x2 + off, n == 0 ? 1 : n);
      memset(ys, 0xA5, sizeof(ys));
      memset(yv, 0xA5, sizeof(yv));
      if (is_signed) {
        sc->s8[v](n, (const int8_t *)x1 + off, (const int8_t *)x2 + off, (int8_t *)ys + off, &p);
        vs->s8[v](n, (const int8_t *)x1 + off, (const int8_t *)x2 + off, (int8_t *)yv + off, &p);
      } else {
        sc->u8[v](n, x1 + off, x2 + off, ys + off, &p);
        vs->u8[v](n, x1 + off, x2 + off, yv + off, &p);
      }
      if (memcmp(ys, yv, sizeof(ys)) != 0) {
        for (size_t i = 0; i < sizeof(ys); i++) {
          if (ys[i] != yv[i]) {
            fprintf(stderr, "  %s trial %d variant %d signed %d n %zu off %zu: byte %zu scalar %d %s %d\n", vs->name,
                    trial, v, is_signed, n, off, i, ys[i], vs->name, yv[i]);
            break;
          }
        }
        CHECK(0);
      }
      /* in place: y = x1 */
      memcpy(xi, x1, sizeof(xi));
      if (is_signed) {
        vs->s8[v](n, (const int8_t *)xi + off, (const int8_t *)x2 + off, (int8_t *)xi + off, &p);
      } else {
        vs->u8[v](n, xi + off, x2 + off, xi + off, &p);
      }
      CHECK(memcmp(xi + off, ys + off, n) == 0);
      total += n;
    }
    CHECK(total > 1000000);
  }
  return 0;
}

/* Exhaustive over all 256 x 256 operand pairs for a few parameter sets per type and function, for
 * every other variant of the list vs the scalar twin. */
Q8RT_TEST(vbinary_variants_all_pairs) {
  static uint8_t x1[256], x2[256], ys[256], yv[256];
  const vb_set *sc = vb_scalar();
  CHECK(sc != NULL);
  for (int i = 0; i < 256; i++) x1[i] = (uint8_t)i;
  for (size_t k = 0; k < VB_NSETS; k++) {
    const vb_set *vs = &vb_sets[k];
    if (vs == sc) continue;
    if (!test_isa_supported(vs->isa)) {
      printf("  skip %s: CPU lacks its ISA\n", vs->name);
      continue;
    }
    for (int set = 0; set < 24; set++) {
      const int is_signed = set & 1;
      const q8rt_q8_vbinary_params p = vb_params(is_signed, (set >> 1) & 1);
      for (int b = 0; b < 256; b++) {
        memset(x2, b, sizeof(x2));
        for (int v = 0; v < 4; v++) {
          if (is_signed) {
            sc->s8[v](256, (const int8_t *)x1, (const int8_t *)x2, (int8_t *)ys, &p);
            vs->s8[v](256, (const int8_t *)x1, (const int8_t *)x2, (int8_t *)yv, &p);
          } else {
            sc->u8[v](256, x1, x2, ys, &p);
            vs->u8[v](256, x1, x2, yv, &p);
          }
          CHECK(memcmp(ys, yv, sizeof(ys)) == 0);
        }
      }
    }
  }
  return 0;
}
