/* QLinearConv fast paths (NHWC).
 *
 * GEMM: output pixel rows x output channels. A row is the pixel's receptive field in (ky, kx, c)
 * order; for 1x1 convolutions with stride 1 and no padding that is the input row itself (no copy),
 * otherwise rows are gathered tile by tile (im2col) into a per-thread workspace small enough to
 * stay in L1/L2, with padded taps filled with the raw activation zero point. The 3-channel 7x7
 * first layers benefit most: their K of 147 becomes one dense dot product instead of 49 tiny ones.
 * Depthwise: an indirection buffer of input-pixel pointers per output pixel and tap (padded taps
 * point at a row of zero points), built when the session binds its arena; any kernel size.
 * Threads: output rows are split into tiles handed out round-robin to the pool's tasks; each task
 * owns its im2col tile, so results do not depend on the thread count.
 *
 * At the graph's edges (input NCHW only, output a graph output: the single-conv models people
 * benchmark) two NCHW paths save both layout changes. Depthwise: qu8-qc8w-dwconv2d-chw, one plane per
 * task, padding read as the zero point by masked loads (no copy). Stride-1 GEMM: the weights
 * become the broadcast operand and the activations the vector one (qu8-qc8w-gemm-chw), so an
 * output channel's pixels are computed and stored side by side as NCHW wants them; each panel row
 * (channel, ky, kx) is a contiguous run of a zero-point-padded input plane at pitch out_w +
 * kernel_w - 1 (the columns past out_w are computed and dropped), four rows zipped into the
 * kernel's 4-byte k groups by x8-zip-x4. */
#include "conv_paths.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "op_util.h"
#include "q8rt-isa.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"
#include "x8-rsum/x8-rsum.h"

typedef struct gemm_variant {
  uint32_t isa;
  q8rt_qu8_gemm_ukernel_fn fn;
  size_t mr, nr;
  const char *name;
  int pairs; /* vpmaddubsw route: exact only where q8rt_qu8_qc8w_gemm_pairs_safe holds */
  int s8a;   /* computes on a_u8 - 128: packed with the activation zero point as s8 */
} gemm_variant;

typedef struct dw_variant {
  uint32_t isa;
  q8rt_qu8_dwconv_ukernel_fn fn;
  size_t cb;
  const char *name;
} dw_variant;

static const gemm_variant g_gemm[] = {
#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr) {isa, fn, mr, nr, #fn, 0, 0},
#define Q8RT_GEMM_UKERNEL_PAIRS_SAFE(isa, fn, mr, nr) {isa, fn, mr, nr, #fn, 1, 0},
#define Q8RT_GEMM_UKERNEL_S8A(isa, fn, mr, nr) {isa, fn, mr, nr, #fn, 0, 1},
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_PAIRS_SAFE
#undef Q8RT_GEMM_UKERNEL_S8A
    {0, NULL, 0, 0, NULL, 0, 0},
};

/* Few-channel variants (K along the lanes, weights packed with NR = 1): layers of at most
 * FEWN_MAX_OUT output channels take them in place of the blocked kernel of the same ISA. */
#define FEWN_MAX_OUT 4
static const gemm_variant g_gemm_fewn[] = {
#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr)
#define Q8RT_GEMM_UKERNEL_FEWN(isa, fn, mr, nr) {isa, fn, mr, nr, #fn, 0, 0},
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_FEWN
    {0, NULL, 0, 0, NULL, 0, 0},
};

static const dw_variant g_dw[] = {
#define Q8RT_DWCONV_UKERNEL(isa, fn, cb) {isa, fn, cb, #fn},
#include "qu8-dwconv/qu8-dwconv.inc"
#undef Q8RT_DWCONV_UKERNEL
    {0, NULL, 0, NULL},
};

static const struct {
  uint32_t isa;
  q8rt_qu8_qc8w_dwconv2d_chw_ukernel_fn fn;
  size_t max_span;
  const char *name;
} g_dw_chw[] = {
#define Q8RT_QC8W_DWCONV2D_CHW_UKERNEL(isa, fn, max_span) {isa, fn, max_span, #fn},
#include "qu8-qc8w-dwconv2d-chw/qu8-qc8w-dwconv2d-chw.inc"
#undef Q8RT_QC8W_DWCONV2D_CHW_UKERNEL
};

static const struct {
  uint32_t isa;
  q8rt_qu8_gemm_seg_ukernel_fn fn;
  size_t mr, nr;
} g_gemm_seg[] = {
#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr)
#define Q8RT_GEMM_UKERNEL_SEG(isa, fn, mr, nr) {isa, fn, mr, nr},
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_SEG
    {0, NULL, 0, 0},
};

typedef struct gemm_i32_variant {
  uint32_t isa;
  q8rt_qu8_gemm_ukernel_fn fn;
  size_t mr, nr;
  const char *name;
} gemm_i32_variant;

static const gemm_i32_variant g_gemm_i32[] = {
#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr)
#define Q8RT_GEMM_UKERNEL_I32(isa, fn, mr, nr) {isa, fn, mr, nr, #fn},
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_I32
    {0, NULL, 0, 0, NULL},
};

static const struct {
  uint32_t isa;
  q8rt_q8_conv_ref_ukernel_fn fn;
  const char *name;
} g_ref[] = {
#define Q8RT_Q8_CONV_REF_UKERNEL(isa, fn) {isa, fn, #fn},
#include "q8-conv-ref/q8-conv-ref.inc"
#undef Q8RT_Q8_CONV_REF_UKERNEL
};

void conv_ref_choose(const conv_choice *choice, conv_fast *f) {
  size_t i = OP_FIRST_USABLE(g_ref, choice->isa, choice->backend);
  f->path = CONV_PATH_REF;
  f->ref = g_ref[i].fn;
  f->kernel = g_ref[i].name + 5; /* drop the "q8rt_" prefix */
}

static const struct {
  uint32_t isa;
  q8rt_qu8_gemm_chw_ukernel_fn fn;
  size_t mr, nr;
  const char *name;
} g_gemm_chw[] = {
#define Q8RT_GEMM_CHW_UKERNEL(isa, fn, mr, nr) {isa, fn, mr, nr, #fn},
#include "qu8-qc8w-gemm-chw/qu8-qc8w-gemm-chw.inc"
#undef Q8RT_GEMM_CHW_UKERNEL
    {0, NULL, 0, 0, NULL},
};

static const struct {
  uint32_t isa;
  q8rt_x8_zip_x4_ukernel_fn fn;
} g_zip[] = {
#define Q8RT_X8_ZIP_X4_UKERNEL(isa, fn) {isa, fn},
#include "x8-zip/x8-zip.inc"
#undef Q8RT_X8_ZIP_X4_UKERNEL
};

int conv_fast_nchw(const conv_fast *f) {
  return f->path == CONV_PATH_REF || f->path == CONV_PATH_DW_CHW || f->path == CONV_PATH_GEMM_CHW;
}

static size_t round_up(size_t x, size_t m);

/* The GEMM on NCHW activations, when the planner prefers NCHW: stride 1, no dilation (each row of
 * the panel is then a contiguous run of a padded input plane), int8 weights, a vector variant. */
static int gemm_chw_prepare(const conv_fast_desc *d, const conv_choice *choice, q8rt_pool *pool, int32_t x_zp_u8,
                            conv_fast *f, q8rt_error *err, q8rt_status *st) {
  *st = Q8RT_OK;
  if (!d->want_chw || d->groups != 1 || d->stride_h != 1 || d->stride_w != 1 || d->dilation_h != 1 ||
      d->dilation_w != 1)
    return 0;
  /* the kernel_w - 1 columns computed and dropped per row: on narrow images (3x3 on 14 or 28
   * columns: 7-14% more work, measured slower than the NHWC kernels and their transposes) keep those */
  if (d->in_w_hint != 0 && (d->kernel_w - 1) * 16 > d->in_w_hint) return 0;
  if (choice->backend == Q8RT_BACKEND_AVX2) return 0;
  const size_t k = d->kernel_h * d->kernel_w * d->in_c_per_group;
  for (size_t i = 0; i < d->out_c * k; i++) {
    if (d->w[i] < -128 || d->w[i] > 127) return 0; /* vpdpbusd / sdot take int8 weights */
  }
  size_t i = 0;
  while (g_gemm_chw[i].fn != NULL && !op_isa_usable(g_gemm_chw[i].isa, choice->isa, choice->backend)) i++;
  if (g_gemm_chw[i].fn == NULL) return 0;
  /* A spatial kernel with >= 32 channels in and out on AVX-512 VNNI, where the NHWC GEMM reads the
   * interior pixels in place (its seg variant: kernel_w * C whole k groups, rows >= 16 wide):
   * that GEMM and the two layout changes win, 3x3 64->64 on 56x56 0.64 ms here (zip panels,
   * kernel_w - 1 dropped columns) vs 0.545 + 2 x 0.010 ms (thread CPU time). 1x1 convolutions
   * stay here (256->64 on 56x56: 0.27 vs 0.31 ms), and so do few channels (the layout changes
   * weigh more against fewer multiply-adds per pixel; not measured to win). */
  if (g_gemm_chw[i].isa == Q8RT_ISA_AVX512VNNI && d->kernel_h * d->kernel_w > 1 && d->in_c_per_group >= 32 &&
      d->out_c >= 32 && d->kernel_h <= Q8RT_GEMM_MAX_SEGS && (d->kernel_w * d->in_c_per_group) % 4 == 0 &&
      d->in_w_hint >= 16 + d->kernel_w)
    return 0;
  size_t z = OP_FIRST_USABLE(g_zip, choice->isa, choice->backend);
  const size_t mr = g_gemm_chw[i].mr;
  const size_t blocks = (d->out_c + mr - 1) / mr;
  f->chw_bytes = q8rt_qu8_qc8w_gemm_packed_size(mr, k, mr);
  void *packed = q8rt_pool_alloc(pool, blocks * f->chw_bytes, 64);
  int8_t *wg = q8rt_alloc(pool->allocator, d->out_c * k + 1, 16);
  if (packed == NULL || wg == NULL) {
    q8rt_free(pool->allocator, wg, d->out_c * k + 1);
    *st = q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory packing weights");
    return 1;
  }
  /* the panel's k order (c, ky, kx) is the ONNX weights' own */
  for (size_t j = 0; j < d->out_c * k; j++) wg[j] = (int8_t)d->w[j];
  q8rt_qu8_qc8w_gemm_pack(d->out_c, k, mr, wg, d->bias, d->scale, x_zp_u8, packed);
  q8rt_free(pool->allocator, wg, d->out_c * k + 1);
  f->path = CONV_PATH_GEMM_CHW;
  f->gemm_chw = g_gemm_chw[i].fn;
  f->zip = g_zip[z].fn;
  f->mr = mr;
  f->nr = g_gemm_chw[i].nr;
  f->k = k;
  f->a_stride = round_up(k, 4);
  f->taps = d->kernel_h * d->kernel_w;
  f->packed = packed;
  f->kernel = g_gemm_chw[i].name + 5; /* drop the "q8rt_" prefix */
  f->reason =
      "GEMM on NCHW activations (rows of the input planes zipped into k4 panels, each output channel's "
      "pixels stored side by side): input and output stay NCHW (the model's edge), no layout change";
  return 1;
}

/* Depthwise on NCHW planes, when the planner prefers NCHW and a vector variant takes the window
 * (the scalar twin is the tests' reference, not a fast path). */
static int dw_chw_prepare(const conv_fast_desc *d, const conv_choice *choice, q8rt_pool *pool, int32_t x_zp_u8,
                          conv_fast *f, q8rt_error *err, q8rt_status *st) {
  *st = Q8RT_OK;
  if (!d->want_chw || choice->backend == Q8RT_BACKEND_AVX2) return 0;
  const size_t taps = d->kernel_h * d->kernel_w;
  for (size_t i = 0; i < d->out_c * taps; i++) {
    if (d->w[i] < -128 || d->w[i] > 127) return 0; /* vpdpbusd takes int8 weights */
  }
  /* overflow-safe: kernel_w and dilation_w are bounded by the window parser, stride_w too */
  const size_t span = 15 * d->stride_w + (d->kernel_w - 1) * d->dilation_w + 1;
  size_t i = 0;
  for (; g_dw_chw[i].isa != Q8RT_ISA_SCALAR; i++) {
    if (op_isa_usable(g_dw_chw[i].isa, choice->isa, choice->backend) &&
        (g_dw_chw[i].max_span == 0 || span <= g_dw_chw[i].max_span))
      break;
  }
  if (g_dw_chw[i].isa == Q8RT_ISA_SCALAR) return 0;
  f->chw_bytes = q8rt_qu8_qc8w_dwconv2d_chw_channel_bytes(d->kernel_h, d->kernel_w);
  void *packed = q8rt_pool_alloc(pool, d->out_c * f->chw_bytes, 64);
  if (packed == NULL) {
    *st = q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory packing depthwise weights");
    return 1;
  }
  q8rt_qu8_qc8w_dwconv2d_chw_pack(d->out_c, d->kernel_h, d->kernel_w, d->w, d->bias, d->scale, x_zp_u8, packed);
  f->path = CONV_PATH_DW_CHW;
  f->dw_chw = g_dw_chw[i].fn;
  f->packed = packed;
  f->taps = taps;
  f->kernel = g_dw_chw[i].name + 5; /* drop the "q8rt_" prefix */
  f->reason = "depthwise on NCHW planes: input and output stay NCHW (the model's edge), no layout change";
  return 1;
}

void conv_choice_init(conv_choice *c, q8rt_backend backend, uint32_t isa) {
  c->backend = backend;
  c->isa = isa;
  c->allow_xnnpack = backend == Q8RT_BACKEND_AUTO || backend == Q8RT_BACKEND_XNNPACK;
}

static const char *isa_name(uint32_t isa) {
  switch (isa) {
    case Q8RT_ISA_AVX2: return "AVX2";
    case Q8RT_ISA_AVX512VNNI: return "AVX-512 VNNI";
    case Q8RT_ISA_NEON: return "NEON";
    case Q8RT_ISA_NEONDOT: return "NEON dot product";
    case Q8RT_ISA_NEONI8MM: return "NEON int8 matrix multiply";
    default: return "scalar";
  }
}

/* ISAs to try, best first, for the requested backend. */
#define MAX_TARGET_ISAS 5
static int target_isas(const conv_choice *c, uint32_t out[MAX_TARGET_ISAS]) {
  switch (c->backend) {
    case Q8RT_BACKEND_AVX2: out[0] = Q8RT_ISA_AVX2; return 1;
    case Q8RT_BACKEND_AVX512: out[0] = Q8RT_ISA_AVX512VNNI; return 1;
    case Q8RT_BACKEND_NEON:
      out[0] = Q8RT_ISA_NEONI8MM;
      out[1] = Q8RT_ISA_NEONDOT;
      out[2] = Q8RT_ISA_NEON;
      return 3;
    case Q8RT_BACKEND_AUTO:
      out[0] = Q8RT_ISA_AVX512VNNI;
      out[1] = Q8RT_ISA_AVX2;
      out[2] = Q8RT_ISA_NEONI8MM;
      out[3] = Q8RT_ISA_NEONDOT;
      out[4] = Q8RT_ISA_NEON;
      return 5;
    default: return 0;
  }
}

/* What a forced backend asks for, in messages ("NEON" for the whole ARM family). */
static const char *backend_isa_name(const conv_choice *c, const uint32_t *isas) {
  return c->backend == Q8RT_BACKEND_NEON ? "NEON" : isa_name(isas[0]);
}

static const char *pool_printf(q8rt_pool *pool, const char *fmt, ...) Q8RT_PRINTF(2, 3);
static const char *pool_printf(q8rt_pool *pool, const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  const char *s = q8rt_pool_strdup(pool, buf);
  return s != NULL ? s : "";
}

static size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

q8rt_status conv_fast_prepare(const conv_fast_desc *d, const conv_choice *choice, q8rt_pool *pool, conv_fast *f,
                              q8rt_error *err) {
  memset(f, 0, sizeof(*f));
  f->out_c = d->out_c;
  const char *lut_name;
  f->lut = op_lookup_table_kernel(choice->backend, choice->isa, &lut_name);
  f->lut_rows = op_lookup_table_rows_kernel(choice->backend, choice->isa);
  f->lutc = op_lookup_table_channels_kernel(choice->backend, choice->isa, NULL);
  f->path = CONV_PATH_NONE;
  if (choice->backend == Q8RT_BACKEND_REFERENCE) {
    conv_ref_choose(choice, f);
    f->reason = "forced: --backend reference";
    return Q8RT_OK;
  }
  if (choice->backend == Q8RT_BACKEND_XNNPACK) {
    f->reason = "forced: --backend xnnpack";
    return Q8RT_OK;
  }
  uint32_t isas[MAX_TARGET_ISAS];
  const int n_isas = target_isas(choice, isas);
  /* A forced ISA backend on a CPU without it is refused by the front-end with this reason. */
  int have_any = 0;
  for (int i = 0; i < n_isas; i++) have_any |= (choice->isa & isas[i]) != 0;
  if (!have_any) {
    f->reason = choice->backend == Q8RT_BACKEND_AUTO
                    ? "this CPU has no instruction set q8rt has fast kernels for"
                    : pool_printf(pool, "this CPU lacks %s", backend_isa_name(choice, isas));
    return Q8RT_OK;
  }
  const int depthwise = d->groups > 1 && d->in_c_per_group == 1 && d->out_c == d->groups;
  const size_t taps = d->kernel_h * d->kernel_w;
  f->rq.y_zero_point = d->y_zero_point;
  f->rq.y_lo = (float)(d->y_min - d->y_zero_point);
  f->rq.y_hi = (float)(d->y_max - d->y_zero_point);
  f->rq.x_xor = d->x_signed ? 0x80 : 0;
  f->rq.y_signed = (uint8_t)d->y_signed;
  f->x_zp_raw = (uint8_t)d->x_zero_point;
  const int32_t x_zp_u8 = d->x_signed ? d->x_zero_point + 128 : d->x_zero_point;

  if (depthwise) {
    q8rt_status st;
    if (dw_chw_prepare(d, choice, pool, x_zp_u8, f, err, &st)) return st;
    const dw_variant *v = NULL;
    for (int i = 0; i < n_isas && v == NULL; i++) {
      if (!(choice->isa & isas[i])) continue;
      for (const dw_variant *c = g_dw; c->fn != NULL; c++) {
        if (c->isa == isas[i]) {
          v = c;
          break;
        }
      }
    }
    if (v == NULL) {
      f->reason = pool_printf(pool, "no depthwise kernel for %s in this build", backend_isa_name(choice, isas));
      return Q8RT_OK;
    }
    void *packed = q8rt_pool_alloc(pool, q8rt_qu8_dwconv_packed_size(d->out_c, taps, v->cb), 64);
    if (packed == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory packing depthwise weights");
    q8rt_qu8_dwconv_pack(d->out_c, taps, v->cb, d->w, d->bias, d->scale, x_zp_u8, packed);
    f->path = CONV_PATH_DW;
    f->dw = v->fn;
    f->cb = v->cb;
    f->taps = taps;
    f->packed = packed;
    f->kernel = v->name + 5; /* drop the "q8rt_" prefix */
    f->reason = pool_printf(
        pool, "depthwise, any kernel size, NHWC with an indirection buffer (%s: %s)",
        choice->backend == Q8RT_BACKEND_AUTO ? "fastest exact kernel on this CPU" : "forced backend", isa_name(v->isa));
    return Q8RT_OK;
  }
  {
    q8rt_status st;
    if (gemm_chw_prepare(d, choice, pool, x_zp_u8, f, err, &st)) return st;
  }
  if (d->groups != 1) {
    f->reason = "grouped convolution (not depthwise): no q8rt fast kernel";
    return Q8RT_OK;
  }
  const size_t k = taps * d->in_c_per_group;
  for (size_t i = 0; i < d->out_c * k; i++) {
    if (d->w[i] < -128 || d->w[i] > 127) {
      f->reason = "weights minus their zero point leave the int8 range (the GEMM kernels need int8 weights)";
      return Q8RT_OK;
    }
  }
  /* Reorder to [M][ky][kx][c] (the im2col row order) as int8, then pack for the variant's NR. */
  const q8rt_allocator *a = pool->allocator;
  int8_t *wg = q8rt_alloc(a, d->out_c * k + 1, 16);
  if (wg == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory packing weights");
  const size_t c_n = d->in_c_per_group;
  for (size_t m = 0; m < d->out_c; m++) {
    for (size_t c = 0; c < c_n; c++) {
      for (size_t t = 0; t < taps; t++) wg[m * k + t * c_n + c] = (int8_t)d->w[(m * c_n + c) * taps + t];
    }
  }
  /* Per ISA, best first: the vpmaddubsw route when the pack-time proof allows it (weights such as
   * reduce_range's 7-bit ones), otherwise the first general variant in the list. */
  const int pairs_safe = q8rt_qu8_qc8w_gemm_pairs_safe(d->out_c, k, wg);
  const gemm_variant *v = NULL;
  for (int i = 0; i < n_isas && v == NULL; i++) {
    if (!(choice->isa & isas[i])) continue;
    for (int want_pairs = pairs_safe; want_pairs >= 0 && v == NULL; want_pairs--) {
      for (const gemm_variant *c = g_gemm; c->fn != NULL; c++) {
        if (c->isa == isas[i] && c->pairs == want_pairs) {
          v = c;
          break;
        }
      }
    }
  }
  if (v == NULL) {
    q8rt_free(a, wg, d->out_c * k + 1);
    f->reason = pool_printf(pool, "no GEMM kernel for %s in this build", backend_isa_name(choice, isas));
    return Q8RT_OK;
  }
  /* A layer of 1 to 4 output channels (a detector's objectness / box heads) fills 1 to 4 lanes of
   * the blocked kernel's narrowest (8-channel) block: the few-channel variant of the same ISA puts
   * K along the lanes instead (the same bytes: test_qu8_qc8w_gemm). */
  int fewn = 0;
  if (d->out_c <= FEWN_MAX_OUT && !v->pairs && !v->s8a) {
    for (const gemm_variant *c = g_gemm_fewn; c->fn != NULL; c++) {
      if (c->isa == v->isa) {
        v = c;
        fewn = 1;
        break;
      }
    }
  }
  void *packed = q8rt_pool_alloc(pool, q8rt_qu8_qc8w_gemm_packed_size(d->out_c, k, v->nr), 64);
  /* s8-activation variants (sdot, smull) fold the zero point as s8: bias - (x_zp_u8 - 128) * sum w */
  if (packed != NULL)
    q8rt_qu8_qc8w_gemm_pack(d->out_c, k, v->nr, wg, d->bias, d->scale, v->s8a ? x_zp_u8 - 128 : x_zp_u8, packed);
  q8rt_free(a, wg, d->out_c * k + 1);
  if (packed == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory packing weights");
  f->path = CONV_PATH_GEMM;
  f->gemm = v->fn;
  /* the segmented-row twin of the chosen kernel (same ISA and tile: the same packing) reads a
   * convolution's interior pixels in place; s8-activation and vpmaddubsw variants have none */
  f->gemm_seg = NULL;
  for (size_t i = 0; g_gemm_seg[i].fn != NULL && !v->pairs && !v->s8a && !fewn; i++) {
    if (g_gemm_seg[i].isa == v->isa && g_gemm_seg[i].mr == v->mr && g_gemm_seg[i].nr == v->nr) {
      f->gemm_seg = g_gemm_seg[i].fn;
      break;
    }
  }
  f->mr = v->mr;
  f->nr = v->nr;
  f->k = k;
  f->a_stride = round_up(k, 4);
  f->taps = taps;
  f->packed = packed;
  f->kernel = v->name + 5;
  const char *shape =
      fewn && taps == 1        ? "pointwise, few output channels: K along the lanes, one sum per output"
      : fewn                   ? "im2col tiles + few-channel GEMM (K along the lanes, one sum per output)"
      : taps == 1              ? "pointwise: GEMM on the NHWC input"
      : d->in_c_per_group <= 4 ? "few input channels (first layer): im2col tiles make K dense, then GEMM"
      : f->gemm_seg != NULL    ? "GEMM reading interior pixels in place (segmented rows), im2col for the rest"
                               : "im2col tiles + GEMM";
  f->reason = v->pairs ? "vpmaddubsw GEMM: every adjacent weight pair has |w0|+|w1| <= 128, proven at load"
                       : pool_printf(pool, "%s (fastest exact kernel on this CPU: %s)", shape, isa_name(v->isa));
  return Q8RT_OK;
}

#define DW_TILE 64   /* output pixels per depthwise task, at most */
#define MIN_TILES 16 /* tiles a convolution is cut into where its rows allow */

/* Rows the busier of two threads runs when `rows` are cut into tiles of t, the first half of the
 * tiles to one thread and the rest to the other (the pool's split of a region before stealing). */
static size_t conv_span2(size_t rows, size_t t) {
  const size_t tiles = (rows + t - 1) / t, first = tiles / 2 * t;
  return first > rows - first ? first : rows - first;
}

static int seg_ok(const conv_fast *f, const conv_fast_geom *g);

void conv_fast_geom_init(const conv_fast *f, const q8rt_q8_conv_ref_params *r, conv_fast_geom *g) {
  memset(g, 0, sizeof(*g));
  g->batch = r->batch;
  g->in_h = r->in_h;
  g->in_w = r->in_w;
  g->in_c = r->in_c;
  g->out_h = r->out_h;
  g->out_w = r->out_w;
  g->kernel_h = r->kernel_h;
  g->kernel_w = r->kernel_w;
  g->stride_h = r->stride_h;
  g->stride_w = r->stride_w;
  g->dilation_h = r->dilation_h;
  g->dilation_w = r->dilation_w;
  g->pad_top = r->pad_top;
  g->pad_left = r->pad_left;
  g->rows = r->batch * r->out_h * r->out_w;
  if (f->path == CONV_PATH_GEMM) {
    g->direct = r->kernel_h == 1 && r->kernel_w == 1 && r->stride_h == 1 && r->stride_w == 1 && r->pad_top == 0 &&
                r->pad_left == 0 && r->out_h == r->in_h && r->out_w == r->in_w;
    /* ~24 KiB of im2col rows per tile, a multiple of MR */
    size_t t = 24576 / (f->a_stride * f->mr);
    if (t < 1) t = 1;
    g->tile_rows = t * f->mr;
    if (g->direct) g->tile_rows = f->mr * 16;
    /* The seg route gathers, per stretch of a row inside a tile, the pixels past its last whole MR
     * chunk: a tile edge inside an output row splits the row's interior in two stretches, and
     * each leaves up to MR - 1 pixels over. Tiles of whole rows and whole MR chunks (a multiple of
     * lcm(out_w, MR) rows, the nearest to the size above) leave one stretch a row: YOLOX's 52-wide
     * 3x3 layers gathered 24-26% of their rows as im2col copies, now 11% (borders and the row's
     * own remainder), its 26-wide ones 43% -> 15%, with no partial MR call added. Where that many
     * rows would take over 128 KiB of im2col buffer, the size above stays. The same kernel calls'
     * bytes per pixel either way (the seg kernel equals its contiguous twin on gathered rows). */
    if (!g->direct && seg_ok(f, g)) {
      size_t d = g->out_w, b = f->mr; /* d = gcd(out_w, mr); seg_ok: out_w >= 2 * mr */
      while (b != 0) {
        const size_t c = d % b;
        d = b;
        b = c;
      }
      const size_t unit = g->out_w / d * f->mr;
      size_t bytes; /* unit <= out_w * MR: the product is checked, out_w is the model's */
      if (q8rt_mul_size(unit, f->a_stride, &bytes) && bytes <= ((size_t)128 << 10)) {
        const size_t n = (g->tile_rows + unit / 2) / unit;
        g->tile_rows = unit * (n > 0 ? n : 1);
      }
    }
  } else if (f->path == CONV_PATH_DW) {
    g->tile_rows = DW_TILE;
  }
  /* Small images: at least MIN_TILES tiles where the rows allow, so that two threads (or four)
   * share them evenly (three tiles on two threads is 1.5x at best). Fixed by the shapes alone. */
  const size_t unit = f->path == CONV_PATH_GEMM ? f->mr : 8;
  if (g->tile_rows > 0 && g->rows < MIN_TILES * g->tile_rows) {
    const size_t per = (g->rows + MIN_TILES - 1) / MIN_TILES;
    size_t t = (per + unit - 1) / unit * unit;
    /* of the tile sizes around it, the one whose tiles two threads share most evenly (larger on a
     * tie): 240 rows in 15 tiles of 16 give one thread 8 tiles (128 rows), in 10 tiles of 24 each
     * 120 (rec's late pointwise convs) */
    size_t best = t, best_span = t > 0 ? conv_span2(g->rows, t) : 0; /* no rows (batch 0): t is 0 */
    for (size_t c = t > unit ? t - unit : unit; t > 0 && c <= t + 2 * unit; c += unit) {
      const size_t span = conv_span2(g->rows, c);
      if (span < best_span || (span == best_span && c > best)) best = c, best_span = span;
    }
    t = best;
    if (t < g->tile_rows) g->tile_rows = t;
  }
  /* Few rows and weights larger than the L2 cache (a classifier: crnn's 29 x 1024 x 8210 QGemm):
   * row tiles would each stream every weight from L3 (4 passes over 8.4 MB there); blocks of
   * ~128 KiB of packed weights, each run over all rows while it stays in cache, read them once.
   * Same kernel calls on the same rows and channel blocks: the same bytes. */
  if (f->path == CONV_PATH_GEMM && g->direct && f->table == NULL && g->rows <= 64 && f->out_c >= 4 * f->nr &&
      f->out_c * f->a_stride >= ((size_t)512 << 10)) {
    size_t cb = (size_t)131072 / f->a_stride / f->nr * f->nr;
    if (cb < f->nr) cb = f->nr;
    g->col_block = cb;
    g->tile_rows = g->rows;
  }
  if (f->path == CONV_PATH_GEMM_CHW) { /* stride 1, no dilation */
    g->direct = r->kernel_h == 1 && r->kernel_w == 1 && r->pad_top == 0 && r->pad_left == 0 && r->out_h == r->in_h &&
                r->out_w == r->in_w;
    /* ~64 KiB of panel per block, a multiple of NR pixels */
    size_t px = 65536 / f->a_stride / f->nr * f->nr;
    if (px < f->nr) px = f->nr;
    if (px > 1024) px = 1024;
    const size_t q = r->out_h * (r->out_w + r->kernel_w - 1);
    if (px > round_up(q, f->nr)) px = round_up(q, f->nr);
    g->tile_rows = px;
  }
}

/* GEMM_CHW: outputs are computed at q = oy * plane_w + ox of each image, plane_w = out_w +
 * kernel_w - 1 (the kernel_w - 1 columns past out_w are computed and dropped), from the input
 * planes padded to plane_h x plane_w (a copy in the workspace unless direct: 1x1, no pads); blocks
 * of tile_rows pixels of q are the tasks. */
typedef struct chw_dims {
  size_t plane_h, plane_w, q_count, blocks;
} chw_dims;
static chw_dims chw_geometry(const conv_fast_geom *g) {
  chw_dims d;
  d.plane_h = g->out_h + g->kernel_h - 1;
  d.plane_w = g->out_w + g->kernel_w - 1;
  d.q_count = g->out_h * d.plane_w;
  d.blocks = (d.q_count + g->tile_rows - 1) / g->tile_rows;
  return d;
}

/* GEMM_CHW workspace: the padded planes of the batch (and the bytes a panel row may read past the
 * last one: kernel_w - 1), then per thread a panel and, when columns are dropped, an output tile. */
static size_t chw_planes_bytes(const conv_fast_geom *g) {
  if (g->direct) return 0;
  const chw_dims d = chw_geometry(g);
  /* pads up to 2^20 a side make the planes far larger than the input: SIZE_MAX (refused by the
   * arena planner with a message) rather than a wrapped size */
  size_t n;
  if (!q8rt_mul_size(g->batch, g->in_c, &n) || !q8rt_mul_size(n, d.plane_h, &n) || !q8rt_mul_size(n, d.plane_w, &n) ||
      !q8rt_add_size(n, g->kernel_w + 128, &n))
    return SIZE_MAX;
  return round_up(n, 64);
}
static size_t chw_slot_bytes(const conv_fast *f, const conv_fast_geom *g) {
  const size_t tile = g->kernel_w > 1 ? f->out_c * g->tile_rows : 0;
  return round_up(f->a_stride * g->tile_rows, 64) + round_up(tile, 64);
}

/* Whether a GEMM convolution's interior pixels go to the segmented-row kernel: each kernel row's
 * taps are one run of kernel_w * C input bytes (no dilation along x), runs whole k groups, and
 * output rows wide enough that most pixels come in full MR chunks. */
static int seg_ok(const conv_fast *f, const conv_fast_geom *g) {
  return f->gemm_seg != NULL && !g->direct && g->dilation_w == 1 && g->kernel_h <= Q8RT_GEMM_MAX_SEGS &&
         (g->kernel_w * g->in_c) % 4 == 0 && f->k == g->kernel_h * g->kernel_w * g->in_c && g->out_w >= 2 * f->mr;
}

/* A GEMM task's buffer: the im2col rows; with the seg route also the outputs of the gathered rows
 * and their row indices (see gemm_task). */
/* Output rows a wider tensor holds (a Concat's, y_stride) and a table to apply: the tile's outputs
 * are written densely first (`stage`, after the task's other buffers), then mapped through the
 * table into their rows. In place on the strided rows, each row's lookup would read bytes the
 * kernel's masked stores just wrote, row by row: measured 4x the table's cost on Zen 4. */
static int staged(const conv_fast *f, const conv_fast_geom *g) {
  return f->table != NULL && g->y_stride != 0 && g->y_stride != f->out_c;
}
static size_t stage_offset(const conv_fast *f, const conv_fast_geom *g) {
  if (g->direct) return 0;
  size_t b = round_up(g->tile_rows * f->a_stride, 64);
  if (seg_ok(f, g)) b += round_up(g->tile_rows * f->out_c, 64) + round_up(g->tile_rows * sizeof(size_t), 64);
  return b;
}
static size_t tile_bytes(const conv_fast *f, const conv_fast_geom *g) {
  return stage_offset(f, g) + (staged(f, g) ? round_up(g->tile_rows * f->out_c, 64) : 0);
}

size_t conv_fast_workspace(const conv_fast *f, const conv_fast_geom *g, size_t threads) {
  if (f->path == CONV_PATH_GEMM) return tile_bytes(f, g) * (threads ? threads : 1);
  if (f->path == CONV_PATH_DW) return round_up(g->rows * f->taps * sizeof(void *), 64) + round_up(g->in_c, 64) + 64;
  if (f->path == CONV_PATH_GEMM_CHW) {
    size_t slots, total;
    if (!q8rt_mul_size(chw_slot_bytes(f, g), threads ? threads : 1, &slots) ||
        !q8rt_add_size(chw_planes_bytes(g), slots, &total))
      return SIZE_MAX;
    return total;
  }
  return 0;
}

void conv_fast_bind(const conv_fast *f, conv_fast_geom *g, const void *x, void *workspace) {
  if (f->path != CONV_PATH_DW) return;
  const uint8_t **ind = workspace;
  uint8_t *zero = (uint8_t *)workspace + round_up(g->rows * f->taps * sizeof(void *), 64);
  memset(zero, f->x_zp_raw, round_up(g->in_c, 64) + 64);
  const uint8_t *xb = x;
  size_t i = 0;
  for (size_t n = 0; n < g->batch; n++) {
    for (size_t oy = 0; oy < g->out_h; oy++) {
      for (size_t ox = 0; ox < g->out_w; ox++) {
        for (size_t ky = 0; ky < g->kernel_h; ky++) {
          const size_t iy_p = oy * g->stride_h + ky * g->dilation_h;
          const int row_ok = iy_p >= g->pad_top && iy_p - g->pad_top < g->in_h;
          for (size_t kx = 0; kx < g->kernel_w; kx++) {
            const size_t ix_p = ox * g->stride_w + kx * g->dilation_w;
            if (row_ok && ix_p >= g->pad_left && ix_p - g->pad_left < g->in_w) {
              ind[i++] = xb + ((n * g->in_h + (iy_p - g->pad_top)) * g->in_w + (ix_p - g->pad_left)) * g->in_c;
            } else {
              ind[i++] = zero;
            }
          }
        }
      }
    }
  }
  g->indirection = ind;
}

/* ---- run ---------------------------------------------------------------------------------------- */

#define MAX_SLOTS 64 /* im2col tiles in flight at once: at most one per thread */

typedef struct run_ctx {
  const conv_fast *f;
  const conv_fast_geom *g;
  const uint8_t *x;
  uint8_t *y;
  uint8_t *workspace;
  size_t slots;
  atomic_int busy[MAX_SLOTS];
} run_ctx;

/* Copies n bytes with fixed-size moves (inlined vector loads and stores) instead of a memcpy
 * call: an im2col row is a few runs of kernel_w * C bytes (36 for a 12-channel stem, 72 for 24
 * channels), where the call and its size dispatch cost more than the copy. Overlapping moves
 * rewrite the same bytes; nothing outside [src, src + n) is read or [dst, dst + n) written. */
static inline void copy_run(uint8_t *restrict dst, const uint8_t *restrict src, size_t n) {
  if (n >= 32) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) memcpy(dst + i, src + i, 32);
    if (i < n) memcpy(dst + n - 32, src + n - 32, 32);
  } else if (n >= 16) {
    memcpy(dst, src, 16);
    memcpy(dst + n - 16, src + n - 16, 16);
  } else if (n >= 8) {
    memcpy(dst, src, 8);
    memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    memcpy(dst, src, 4);
    memcpy(dst + n - 4, src + n - 4, 4);
  } else {
    for (size_t i = 0; i < n; i++) dst[i] = src[i];
  }
}

/* Gather `rows` rows of the im2col matrix, from output pixel (n, oy, ox) on, into `a` (a_stride
 * bytes per row). The pixel coordinates advance with the row instead of being divided out of it
 * (three divisions a row cost as much as a 36-byte row's copy). The geometry is read into locals first: the byte stores
 * may alias *f and *g as far as the compiler knows, and it reloaded every field at every kernel
 * row (most of a 1-channel 3x3 stem's im2col time). A kernel row of at most 8 bytes that lies
 * inside the input is moved as 4 or 8 bytes when the row has room for them and the input holds
 * them: the bytes past the run are rewritten by the next kernel row or the row's zero padding
 * (kernel rows are written in order, then the padding), so every row ends as before. */
static void im2col_at(const conv_fast *f, const conv_fast_geom *g, const uint8_t *x, size_t n, size_t oy, size_t ox,
                      size_t rows, uint8_t *a) {
  const size_t c = g->in_c, kernel_h = g->kernel_h, kernel_w = g->kernel_w, stride_h = g->stride_h;
  const size_t stride_w = g->stride_w, dilation_h = g->dilation_h, dilation_w = g->dilation_w;
  const size_t pad_top = g->pad_top, pad_left = g->pad_left, in_h = g->in_h, in_w = g->in_w;
  const size_t out_h = g->out_h, out_w = g->out_w, a_stride = f->a_stride;
  const size_t pad_bytes = a_stride - f->k;
  const size_t run = kernel_w * c;
  const uint8_t zp = f->x_zp_raw;
  const uint8_t *x_end = x + g->batch * in_h * in_w * c;
  for (size_t r = 0; r < rows; r++) {
    uint8_t *const row = a + r * a_stride;
    uint8_t *dst = row;
    for (size_t ky = 0; ky < kernel_h; ky++) {
      const size_t iy_p = oy * stride_h + ky * dilation_h;
      const int row_ok = iy_p >= pad_top && iy_p - pad_top < in_h;
      const uint8_t *src_row = x + (n * in_h + (row_ok ? iy_p - pad_top : 0)) * in_w * c;
      if (!row_ok) {
        memset(dst, zp, run);
        dst += run;
      } else if (dilation_w == 1) {
        /* the taps of one kernel row are adjacent pixels: one copy, zero points at the edges */
        const size_t ix0 = ox * stride_w; /* padded coordinate of tap 0 */
        size_t lo = pad_left > ix0 ? pad_left - ix0 : 0;
        size_t hi = pad_left + in_w > ix0 ? pad_left + in_w - ix0 : 0;
        if (lo > kernel_w) lo = kernel_w;
        if (hi > kernel_w) hi = kernel_w;
        if (hi < lo) hi = lo;
        /* (a kernel row wholly in the padding has no source: no pointer is formed there) */
        const uint8_t *src = hi > lo ? src_row + (ix0 + lo - pad_left) * c : src_row;
        const size_t room = a_stride - (size_t)(dst - row);
        if (lo == 0 && hi == kernel_w && run <= 4 && room >= 4 && (size_t)(x_end - src) >= 4) {
          memcpy(dst, src, 4);
        } else if (lo == 0 && hi == kernel_w && run <= 8 && room >= 8 && (size_t)(x_end - src) >= 8) {
          memcpy(dst, src, 8);
        } else {
          if (lo) memset(dst, zp, lo * c);
          if (hi > lo) copy_run(dst + lo * c, src, (hi - lo) * c);
          if (hi < kernel_w) memset(dst + hi * c, zp, (kernel_w - hi) * c);
        }
        dst += run;
      } else {
        for (size_t kx = 0; kx < kernel_w; kx++, dst += c) {
          const size_t ix_p = ox * stride_w + kx * dilation_w;
          if (ix_p >= pad_left && ix_p - pad_left < in_w) {
            copy_run(dst, src_row + (ix_p - pad_left) * c, c);
          } else {
            memset(dst, zp, c);
          }
        }
      }
    }
    /* meets zero weights; set so nothing reads garbage (at most 3 bytes: K rounded up to 4) */
    for (size_t i = 0; i < pad_bytes; i++) dst[i] = 0;
    if (++ox == out_w) {
      ox = 0;
      if (++oy == out_h) {
        oy = 0;
        n++;
      }
    }
  }
}

/* Rows [r0, r1) of the im2col matrix into `a`. */
static void im2col(const conv_fast *f, const conv_fast_geom *g, const uint8_t *x, size_t r0, size_t r1, uint8_t *a) {
  im2col_at(f, g, x, r0 / (g->out_w * g->out_h), (r0 / g->out_w) % g->out_h, r0 % g->out_w, r1 - r0, a);
}

/* A fused island's table, applied to rows just written (still in L1/L2) instead of in a separate
 * pass over the whole output: rows of out_c bytes from src (src_stride apart) to dst (dst_stride
 * apart; src == dst: in place). */
static void apply_table(const conv_fast *f, const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
                        size_t rows) {
  if (f->table == NULL) return;
  const size_t n = f->out_c;
  if (f->table_channels == 1) {
    if (src_stride == n && dst_stride == n) {
      op_lookup_table_apply(f->lut, f->lutc, f->table, 1, 1, rows * n, src, dst);
    } else {
      f->lut_rows(rows, n, src, src_stride, dst, dst_stride, f->table);
    }
  } else {
    f->lutc(rows, n, src, src_stride, dst, dst_stride, f->table);
  }
}

static size_t y_stride_of(const conv_fast *f, const conv_fast_geom *g) { return g->y_stride ? g->y_stride : f->out_c; }

int conv_fast_set_y_stride(const conv_fast *f, conv_fast_geom *g, size_t stride) {
  if (f->path != CONV_PATH_GEMM || stride < f->out_c || stride > UINT32_MAX) return 0;
  g->y_stride = (uint32_t)stride;
  return 1;
}

static void gemm_rows(const conv_fast *f, const uint8_t *a, size_t a_stride, size_t rows, uint8_t *y, size_t y_stride) {
  for (size_t r = 0; r < rows; r += f->mr) {
    const size_t mr = rows - r < f->mr ? rows - r : f->mr;
    f->gemm(mr, f->out_c, f->k, a + r * a_stride, a_stride, f->packed, y + r * y_stride, y_stride, &f->rq);
  }
}

/* GEMM direct by channel blocks (g->col_block): block t of every row, MR rows at a time. */
static void gemm_col_task(void *context, size_t t) {
  const run_ctx *c = context;
  const conv_fast *f = c->f;
  const conv_fast_geom *g = c->g;
  const size_t c0 = t * g->col_block;
  const size_t nc = f->out_c - c0 < g->col_block ? f->out_c - c0 : g->col_block;
  /* c0 is a multiple of NR: the blocks before it are whole packed blocks */
  const uint8_t *w = (const uint8_t *)f->packed + q8rt_qu8_qc8w_gemm_packed_size(c0, f->k, f->nr);
  const size_t ys = y_stride_of(f, g);
  for (size_t r = 0; r < g->rows; r += f->mr) {
    const size_t mr = g->rows - r < f->mr ? g->rows - r : f->mr;
    f->gemm(mr, nc, f->k, c->x + r * g->in_c, g->in_c, w, c->y + r * ys + c0, ys, &f->rq);
  }
}

/* Rows [r0, r1) on the seg route. In each output row, the pixels whose receptive field lies inside
 * the input (no padding) are read in place by the segmented-row kernel, MR at a time: row m's K
 * bytes are kernel_h runs of kernel_w * C bytes, one input row apart, and the next pixel's start
 * stride_w * C bytes further. The other pixels (borders, and the last < MR interior pixels of a
 * row) are gathered as im2col rows into `tile`, computed together, and their outputs copied to
 * their rows. The seg kernel equals its contiguous twin on the gathered rows byte for byte
 * (test_qu8_qc8w_gemm), so the split changes no byte. */
static void gemm_seg_tile(const conv_fast *f, const conv_fast_geom *g, const uint8_t *x, size_t r0, size_t r1,
                          uint8_t *tile, uint8_t *y, size_t ys) {
  /* row r's output at y + (r - r0) * ys */
  const size_t c = g->in_c, out_c = f->out_c, mr = f->mr;
  uint8_t *ybuf = tile + round_up(g->tile_rows * f->a_stride, 64);
  size_t *idx = (size_t *)(void *)(ybuf + round_up(g->tile_rows * out_c, 64));
  q8rt_gemm_segs segs;
  segs.n = g->kernel_h;
  segs.len = g->kernel_w * c;
  for (size_t s = 0; s < g->kernel_h; s++) segs.off[s] = s * g->dilation_h * g->in_w * c;
  /* interior columns [ox_lo, ox_hi): ox * sw >= pad_left and ox * sw - pad_left + kw <= in_w */
  const size_t ox_lo = (g->pad_left + g->stride_w - 1) / g->stride_w;
  size_t ox_hi = g->in_w + g->pad_left >= g->kernel_w ? (g->in_w + g->pad_left - g->kernel_w) / g->stride_w + 1 : 0;
  if (ox_hi > g->out_w) ox_hi = g->out_w;
  const size_t span_h = (g->kernel_h - 1) * g->dilation_h + 1;
  size_t gathered = 0;
  size_t r = r0;
  while (r < r1) {
    const size_t ox = r % g->out_w, oy = (r / g->out_w) % g->out_h, n = r / (g->out_w * g->out_h);
    const size_t row_end = r - ox + g->out_w < r1 ? r - ox + g->out_w : r1;
    const size_t ox_end = ox + (row_end - r);
    size_t ia = ox, ib = ox; /* interior pixels of this row within the tile, in full MR chunks */
    const size_t iy0 = oy * g->stride_h;
    if (iy0 >= g->pad_top && iy0 - g->pad_top + span_h <= g->in_h && ox_lo < ox_hi) {
      ia = ox > ox_lo ? ox : ox_lo;
      if (ia > ox_end) ia = ox_end; /* the tile's part of the row ends before the interior */
      ib = ox_end < ox_hi ? ox_end : ox_hi;
      if (ib < ia) ib = ia;
      ib = ia + (ib - ia) / mr * mr;
    }
    /* the pixels before and after the interior run [ia, ib): one im2col call per stretch (a call
     * a pixel divided its coordinates out of the row index again: ~90 cycles a gathered row of
     * the 12-channel stem, where the row's copy is 3 runs of 36 bytes) */
    if (ia > ox) {
      im2col_at(f, g, x, n, oy, ox, ia - ox, tile + gathered * f->a_stride);
      for (size_t q = ox; q < ia; q++) idx[gathered++] = r + (q - ox);
    }
    if (ib > ia) {
      const uint8_t *a = x + ((n * g->in_h + iy0 - g->pad_top) * g->in_w + ia * g->stride_w - g->pad_left) * c;
      const size_t rr = r + (ia - ox);
      for (size_t m = 0; m < ib - ia; m += mr) {
        f->gemm_seg(mr, out_c, f->k, a + m * g->stride_w * c, g->stride_w * c, f->packed, y + (rr + m - r0) * ys, ys,
                    &f->rq, &segs);
      }
    }
    if (ox_end > ib) {
      im2col_at(f, g, x, n, oy, ib, ox_end - ib, tile + gathered * f->a_stride);
      for (size_t q = ib; q < ox_end; q++) idx[gathered++] = r + (q - ox);
    }
    r = row_end;
  }
  if (gathered == 0) return;
  gemm_rows(f, tile, f->a_stride, gathered, ybuf, out_c);
  for (size_t i = 0; i < gathered; i++) copy_run(y + (idx[i] - r0) * ys, ybuf + i * out_c, out_c);
}

/* One tile of output rows. Tiles are the pool's work items, so an idle thread steals tiles
 * from a descheduled one; the im2col buffer is claimed from `slots` buffers (one per thread:
 * a thread runs one tile at a time, so a free one always exists). */
static void gemm_task(void *context, size_t t) {
  run_ctx *c = context;
  const conv_fast *f = c->f;
  const conv_fast_geom *g = c->g;
  const size_t r0 = t * g->tile_rows;
  const size_t r1 = r0 + g->tile_rows < g->rows ? r0 + g->tile_rows : g->rows;
  const size_t ys = y_stride_of(f, g);
  uint8_t *y = c->y + r0 * ys;
  const int stage = staged(f, g);
  if (g->direct && !stage) {
    gemm_rows(f, c->x + r0 * g->in_c, g->in_c, r1 - r0, y, ys);
    apply_table(f, y, ys, y, ys, r1 - r0);
    return;
  }
  size_t slot = 0;
  for (;;) {
    if (atomic_exchange_explicit(&c->busy[slot], 1, memory_order_acquire) == 0) break;
    slot = slot + 1 < c->slots ? slot + 1 : 0;
  }
  uint8_t *tile = c->workspace + slot * tile_bytes(f, g);
  uint8_t *out = stage ? tile + stage_offset(f, g) : y; /* where the kernels write */
  const size_t os = stage ? f->out_c : ys;
  if (g->direct) {
    gemm_rows(f, c->x + r0 * g->in_c, g->in_c, r1 - r0, out, os);
  } else if (seg_ok(f, g)) {
    gemm_seg_tile(f, g, c->x, r0, r1, tile, out, os);
  } else {
    im2col(f, g, c->x, r0, r1, tile);
    gemm_rows(f, tile, f->a_stride, r1 - r0, out, os);
  }
  apply_table(f, out, os, y, ys, r1 - r0);
  atomic_store_explicit(&c->busy[slot], 0, memory_order_release);
}

static void dw_task(void *context, size_t t) {
  const run_ctx *c = context;
  const conv_fast *f = c->f;
  const conv_fast_geom *g = c->g;
  const size_t p0 = t * g->tile_rows;
  const size_t n = g->rows - p0 < g->tile_rows ? g->rows - p0 : g->tile_rows;
  f->dw(f->out_c, n, g->indirection + p0 * f->taps, f->taps, f->packed, c->y + p0 * f->out_c, f->out_c, &f->rq);
  apply_table(f, c->y + p0 * f->out_c, f->out_c, c->y + p0 * f->out_c, f->out_c, n);
}

/* DW_CHW: channel plane t of the batch (the kernel reads the unpadded plane itself). */
static void dw_chw_task(void *context, size_t t) {
  run_ctx *c = context;
  const conv_fast *f = c->f;
  const conv_fast_geom *g = c->g;
  const size_t ch = t % g->in_c, out_hw = g->out_h * g->out_w;
  q8rt_qu8_qc8w_dwconv2d_chw_params p;
  p.in_h = g->in_h;
  p.in_w = g->in_w;
  p.x_stride = g->in_w;
  p.out_h = g->out_h;
  p.out_w = g->out_w;
  p.y_stride = g->out_w;
  p.kernel_h = g->kernel_h;
  p.kernel_w = g->kernel_w;
  p.stride_h = g->stride_h;
  p.stride_w = g->stride_w;
  p.dilation_h = g->dilation_h;
  p.dilation_w = g->dilation_w;
  p.pad_top = g->pad_top;
  p.pad_left = g->pad_left;
  p.x_zero_point = f->x_zp_raw;
  p.rq = f->rq;
  uint8_t *y = c->y + t * out_hw;
  f->dw_chw(c->x + t * g->in_h * g->in_w, (const uint8_t *)f->packed + ch * f->chw_bytes, y, &p);
  if (f->table != NULL) {
    const uint8_t *table = f->table + (f->table_channels == 1 ? 0 : ch * 256);
    op_lookup_table_apply(f->lut, f->lutc, table, 1, 1, out_hw, y, y);
  }
}

/* GEMM_CHW: input plane t of the batch, padded with the raw zero point. */
static void chw_pad_task(void *context, size_t t) {
  run_ctx *c = context;
  const conv_fast *f = c->f;
  const conv_fast_geom *g = c->g;
  const chw_dims d = chw_geometry(g);
  const size_t plane = d.plane_h * d.plane_w;
  uint8_t *dst = c->workspace + t * plane;
  const uint8_t *src = c->x + t * g->in_h * g->in_w;
  /* columns of the input inside the plane (explicit pads may cut some off) */
  const size_t cols = g->in_w < d.plane_w - g->pad_left ? g->in_w : d.plane_w - g->pad_left;
  for (size_t py = 0; py < d.plane_h; py++) {
    uint8_t *row = dst + py * d.plane_w;
    if (py < g->pad_top || py - g->pad_top >= g->in_h) {
      memset(row, f->x_zp_raw, d.plane_w);
      continue;
    }
    memset(row, f->x_zp_raw, g->pad_left);
    memcpy(row + g->pad_left, src + (py - g->pad_top) * g->in_w, cols);
    memset(row + g->pad_left + cols, f->x_zp_raw, d.plane_w - g->pad_left - cols);
  }
  if (t + 1 == g->batch * g->in_c) memset(dst + plane, f->x_zp_raw, g->kernel_w + 64); /* read, then dropped */
}

/* GEMM_CHW: pixel block t (of d.blocks per image): zip the panel, then every channel block. */
static void gemm_chw_task(void *context, size_t t) {
  run_ctx *c = context;
  const conv_fast *f = c->f;
  const conv_fast_geom *g = c->g;
  const chw_dims d = chw_geometry(g);
  const size_t img = t / d.blocks, q0 = t % d.blocks * g->tile_rows;
  const size_t cnt = d.q_count - q0 < g->tile_rows ? d.q_count - q0 : g->tile_rows;
  size_t slot = 0;
  for (;;) {
    if (atomic_exchange_explicit(&c->busy[slot], 1, memory_order_acquire) == 0) break;
    slot = slot + 1 < c->slots ? slot + 1 : 0;
  }
  uint8_t *panel = c->workspace + chw_planes_bytes(g) + slot * chw_slot_bytes(f, g);
  const size_t pstride = d.plane_h * d.plane_w, x_stride = 4 * g->tile_rows;
  const uint8_t *planes = (g->direct ? c->x : c->workspace) + img * g->in_c * pstride;
  /* row k = (channel, ky, kx) of the panel: that plane's run starting at (ky, kx), walked in k order */
  const uint8_t *rows[4];
  size_t ch = 0, ky = 0, kx = 0, j = 0;
  for (size_t k = 0; k < f->a_stride; k++) {
    rows[j] = planes + ch * pstride + ky * d.plane_w + kx + q0;
    if (k + 1 < f->k) { /* past K: the last row again (its weights are 0) */
      if (++kx == g->kernel_w) {
        kx = 0;
        if (++ky == g->kernel_h) {
          ky = 0;
          ch++;
        }
      }
    }
    if (++j == 4) {
      f->zip(cnt, rows, f->rq.x_xor, panel + k / 4 * x_stride);
      j = 0;
    }
  }
  const size_t out_hw = g->out_h * g->out_w;
  uint8_t *y = c->y + img * f->out_c * out_hw;
  const int dropped = g->kernel_w > 1;
  uint8_t *dst = dropped ? panel + round_up(f->a_stride * g->tile_rows, 64) : y + q0;
  const size_t dst_stride = dropped ? g->tile_rows : out_hw;
  for (size_t m0 = 0; m0 < f->out_c; m0 += f->mr) {
    const size_t mr = f->out_c - m0 < f->mr ? f->out_c - m0 : f->mr;
    f->gemm_chw(mr, cnt, f->k, panel, x_stride, (const uint8_t *)f->packed + m0 / f->mr * f->chw_bytes,
                dst + m0 * dst_stride, dst_stride, &f->rq);
  }
  for (size_t m = 0; m < f->out_c; m++) {
    uint8_t *row = dst + m * dst_stride;
    if (f->table != NULL) {
      op_lookup_table_apply(f->lut, f->lutc, f->table + (f->table_channels == 1 ? 0 : m * 256), 1, 1, cnt, row, row);
    }
    if (!dropped) continue;
    /* keep columns ox < out_w of each output row the block covers */
    for (size_t q = q0; q < q0 + cnt;) {
      const size_t oy = q / d.plane_w, ox = q % d.plane_w;
      const size_t end = (oy + 1) * d.plane_w < q0 + cnt ? (oy + 1) * d.plane_w : q0 + cnt;
      if (ox < g->out_w) {
        const size_t n = (end - q < g->out_w - ox) ? end - q : g->out_w - ox;
        memcpy(y + m * out_hw + oy * g->out_w + ox, row + (q - q0), n);
      }
      q = end;
    }
  }
  atomic_store_explicit(&c->busy[slot], 0, memory_order_release);
}

void conv_fast_run(const conv_fast *f, const conv_fast_geom *g, const void *x, void *y, void *workspace,
                   const op_exec_ctx *ctx) {
  run_ctx c;
  c.f = f;
  c.g = g;
  c.x = x;
  c.y = y;
  c.workspace = workspace;
  c.slots = ctx->threads < MAX_SLOTS ? ctx->threads : MAX_SLOTS;
  if (c.slots < 1) c.slots = 1;
  for (size_t i = 0; i < c.slots; i++) atomic_init(&c.busy[i], 0);
  if (f->path == CONV_PATH_DW_CHW) {
    q8rt_parallel_for(ctx->pool, g->batch * g->in_c, dw_chw_task, &c);
    return;
  }
  if (f->path == CONV_PATH_GEMM_CHW) {
    if (!g->direct) q8rt_parallel_for(ctx->pool, g->batch * g->in_c, chw_pad_task, &c);
    q8rt_parallel_for(ctx->pool, g->batch * chw_geometry(g).blocks, gemm_chw_task, &c);
    return;
  }
  if (g->col_block != 0) {
    const size_t blocks = (f->out_c + g->col_block - 1) / g->col_block;
    op_parallel_items(ctx, blocks, g->rows * g->col_block * f->k, 1 << 18, gemm_col_task, &c);
    return;
  }
  const int dw = f->path == CONV_PATH_DW;
  const size_t tiles = (g->rows + g->tile_rows - 1) / g->tile_rows;
  void (*task)(void *, size_t) = dw ? dw_task : gemm_task;
  /* cost: multiply-adds per tile; a grain ~2 us (VNNI GEMM ~100 GMAC/s, depthwise ~20); an
   * im2col byte counts as 32 (the first layer's 3-channel gather costs more than its GEMM: rec's
   * 3x3 stride-2 conv to 16 channels is ~85 us for 1.7 M multiply-adds) and each kernel row of an
   * im2col row 256 more (its bounds and copy: CRNN's 1-channel 3x3 stride-2 stem, 3712 rows of 9
   * bytes, spends ~30 us in im2col, ~2.7 ns a kernel row; at 32 a byte it stayed on one thread).
   * A GEMM output counts 16 multiply-adds more (its requantization or table and store): rec's
   * 16 -> 32 pointwise conv on 3840 pixels (K 16) took 2.6 grains' time a grain and its 19 us
   * stayed on one thread */
  const size_t cost =
      g->tile_rows * (f->out_c * (dw ? f->taps : f->k + 16) + (dw || g->direct ? 0 : 32 * f->k + 256 * g->kernel_h));
  op_parallel_items(ctx, tiles, cost, dw ? 1 << 15 : 1 << 18, task, &c);
}

/* ---- int32-output GEMM (ConvInteger, MatMulInteger) ------------------------------------------ */

void gemm_i32_pick(size_t n, size_t k, q8rt_backend backend, uint32_t isa, gemm_i32 *out) {
  memset(out, 0, sizeof(*out));
  if (backend == Q8RT_BACKEND_REFERENCE || n == 0 || k == 0) return;
  const gemm_i32_variant *v = NULL;
  for (const gemm_i32_variant *c = g_gemm_i32; c->fn != NULL && v == NULL; c++) {
    /* a forced avx512 takes the AVX-512 kernel or none (the int8 route's own rule) */
    if (op_isa_usable(c->isa, isa, backend) && (backend != Q8RT_BACKEND_AVX512 || c->isa == Q8RT_ISA_AVX512VNNI)) v = c;
  }
  if (v == NULL) return;
  out->group_bytes = round_up(q8rt_qu8_qc8w_gemm_packed_size(n, k, v->nr), 64);
  out->fn = v->fn;
  out->rsum = q8rt_x8_rsum_ukernel__scalar;
#define Q8RT_X8_RSUM_UKERNEL(risa, rs, cs) \
  if (out->rsum == q8rt_x8_rsum_ukernel__scalar && op_isa_usable(risa, isa, backend)) out->rsum = rs;
#include "x8-rsum/x8-rsum.inc"
#undef Q8RT_X8_RSUM_UKERNEL
  out->kernel = v->name + 5; /* drop the "q8rt_" prefix */
  out->mr = v->mr;
  out->nr = v->nr;
  out->n = n;
  out->k = k;
  out->a_stride = round_up(k, 4);
}

/* int8 B rows, then the zero scales the packer reads (float aligned) */
size_t gemm_i32_pack_scratch(const gemm_i32 *g) { return round_up(g->n * g->k, 16) + g->n * sizeof(float); }

void gemm_i32_pack(gemm_i32 *g, size_t groups, const void *w, q8rt_dtype w_type, size_t w_sn, size_t w_sk,
                   const int32_t *w_zp, uint8_t *packed, uint32_t *wsum, uint32_t *d, void *scratch) {
  const size_t n = g->n, k = g->k;
  const int o = w_type == Q8RT_DTYPE_UINT8 ? 128 : 0;
  int8_t *w8 = scratch;
  float *zero_scale = (float *)(void *)((uint8_t *)scratch + round_up(n * k, 16));
  memset(zero_scale, 0, n * sizeof(float));
  g->need_rowsum = 0;
  for (size_t gr = 0; gr < groups; gr++) {
    for (size_t jj = 0; jj < n; jj++) {
      const size_t j = gr * n + jj;
      uint32_t sum = 0;
      for (size_t i = 0; i < k; i++) {
        const size_t at = j * w_sn + i * w_sk;
        const int32_t wv =
            (w_type == Q8RT_DTYPE_UINT8 ? (int32_t)((const uint8_t *)w)[at] : (int32_t)((const int8_t *)w)[at]) - o;
        w8[jj * k + i] = (int8_t)wv;
        sum += (uint32_t)wv;
      }
      wsum[j] = sum;
      d[j] = (uint32_t)(w_zp[j] - o);
      if (d[j] != 0) g->need_rowsum = 1;
    }
    q8rt_qu8_qc8w_gemm_pack(n, k, g->nr, w8, NULL, zero_scale, 0, packed + gr * g->group_bytes);
  }
  g->packed = packed;
  g->wsum = wsum;
  g->d = d;
}

q8rt_status gemm_i32_prepare(size_t groups, size_t n, size_t k, const void *w, q8rt_dtype w_type, size_t w_sn,
                             size_t w_sk, const int32_t *w_zp, q8rt_backend backend, uint32_t isa, q8rt_pool *pool,
                             gemm_i32 *out, q8rt_error *err) {
  gemm_i32_pick(n, k, backend, isa, out);
  if (out->fn == NULL || groups == 0) {
    out->fn = NULL;
    return Q8RT_OK;
  }
  const size_t total = groups * n, scratch_bytes = gemm_i32_pack_scratch(out);
  const q8rt_allocator *a = pool->allocator;
  void *scratch = q8rt_alloc(a, scratch_bytes, 16);
  uint32_t *wsum = q8rt_pool_array(pool, total, sizeof(uint32_t));
  uint32_t *d = q8rt_pool_array(pool, total, sizeof(uint32_t));
  uint8_t *packed = q8rt_pool_alloc(pool, out->group_bytes * groups, 64);
  q8rt_status st = Q8RT_OK;
  if (scratch == NULL || wsum == NULL || d == NULL || packed == NULL) {
    out->fn = NULL;
    st = q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory packing weights");
  } else {
    gemm_i32_pack(out, groups, w, w_type, w_sn, w_sk, w_zp, packed, wsum, d, scratch);
  }
  q8rt_free(a, scratch, scratch_bytes);
  return st;
}

void gemm_i32_rows(const gemm_i32 *g, size_t group, const uint8_t *a, size_t a_stride, size_t rows, int32_t *c,
                   size_t c_stride, uint8_t x_xor) {
  gemm_i32_cols(g, group, a, a_stride, rows, 0, g->n, c, c_stride, x_xor);
}

void gemm_i32_cols(const gemm_i32 *g, size_t group, const uint8_t *a, size_t a_stride, size_t rows, size_t n_lo,
                   size_t n_hi, int32_t *c, size_t c_stride, uint8_t x_xor) {
  q8rt_qu8_requant_params rq;
  memset(&rq, 0, sizeof(rq));
  rq.x_xor = x_xor;
  const uint8_t *packed = g->packed + group * g->group_bytes;
  /* Column chunks of packed B that stay in L2 (~256 KB) while every row of the tile passes over
   * them: a wide B (e.g. a 1024 x 8210 classifier) is then read from memory once per tile instead
   * of once per mr rows. Each output is still one kernel call over all of K. */
  const size_t panel = g->nr * (sizeof(int32_t) + g->a_stride + sizeof(float)); /* the packer's block */
  size_t panels = ((size_t)256 << 10) / panel;
  if (panels < 1) panels = 1;
  const size_t nc = panels * g->nr;
  for (size_t n0 = n_lo; n0 < n_hi; n0 += nc) {
    const size_t nb = n_hi - n0 < nc ? n_hi - n0 : nc;
    const uint8_t *pb = packed + n0 / g->nr * panel;
    for (size_t r = 0; r < rows; r += g->mr) {
      const size_t mr = rows - r < g->mr ? rows - r : g->mr;
      g->fn(mr, nb, g->k, a + r * a_stride, a_stride, pb, (uint8_t *)c + r * c_stride + n0 * sizeof(int32_t), c_stride,
            &rq);
    }
  }
}

void gemm_i32_row_sums(const gemm_i32 *g, const uint8_t *a, size_t a_stride, size_t rows, uint8_t x_xor,
                       uint32_t x_zp_u8, uint32_t *rs) {
  /* x8-rsum sums the bytes as their type (int8 when x_xor is set): + 128 per byte is the uint8 domain */
  g->rsum(rows, g->k, a, a_stride, x_xor != 0, (int32_t *)rs);
  const uint32_t adj = (x_xor ? 128u * (uint32_t)g->k : 0u) - (uint32_t)g->k * x_zp_u8;
  for (size_t r = 0; r < rows; r++) rs[r] += adj;
}
