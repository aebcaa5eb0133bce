/* Pooling: MaxPool (float32, uint8, int8), AveragePool (float32), GlobalAveragePool (float32),
 * GlobalMaxPool (float32, uint8, int8). 1-D, 2-D and 3-D; kernel_shape, strides, dilations, pads,
 * auto_pad, ceil_mode (the last window must start inside the input or its begin padding, as ONNX
 * says), count_include_pad. Sums are float32 in window order (kernel rows, then columns), divided
 * once by the count (GlobalAveragePool: in ONNX Runtime's MLAS order). MaxPool's Indices output and storage_order 1 are
 * refused. */
#include <float.h>
#include <string.h>

#include "data_common.h"
#include "f32-gavgpool-cw/f32-gavgpool-cw.h"
#include "f32-gavgpool/f32-gavgpool.h"
#include "f32-maxpool/f32-maxpool.h"
#include "op_window.h"
#include "q8rt-isa.h"
#include "x8-maxpool/x8-maxpool.h"

enum pool_kind { POOL_MAX, POOL_AVG, POOL_GLOBAL_AVG, POOL_GLOBAL_MAX };

typedef struct pool_params {
  enum pool_kind kind;
  int sp; /* spatial rank: 1..3 (0 for global: from the input) */
  op_window win;
  int64_t count_include_pad;
  int nhwc;                           /* channels-last (all four kinds): [N, S..., C] -> [N, S'..., C] */
  q8rt_f32_maxpool_ukernel_fn f32max; /* MaxPool, GlobalMaxPool: the row kernels for this CPU */
  q8rt_u8_maxpool_ukernel_fn u8max;
  q8rt_s8_maxpool_ukernel_fn s8max;
  q8rt_f32_gavgpool_ukernel_fn gavg;       /* global averages, channels-last */
  q8rt_f32_gavgpool_cw_ukernel_fn gavg_cw; /* global averages, NCHW planes */
  const char *gavg_name;                   /* --explain: the channels-last kernel */
  q8rt_f32_vbinary_ukernel_fn vadd, vdivc; /* AveragePool: window sums over rows of values */
} pool_params;

typedef struct pool_geom {
  size_t outer;
  q8rt_dtype dtype;
  op_window_geom w;
  int include_pad;
  int order; /* AveragePool summation order: ORDER_* (ONNX Runtime's MLAS kernel it would use) */
  int dilated;
  size_t channels; /* channels-last: elements between two pixels of one channel (NCHW: 1) */
} pool_geom;

enum { ORDER_GENERIC = 0, ORDER_VECTOR = 1, ORDER_GLOBAL = 2 };

static const struct {
  uint32_t isa;
  q8rt_f32_gavgpool_ukernel_fn fn;
  const char *name;
} g_f32_gavgpool[] = {
#define Q8RT_F32_GAVGPOOL_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-gavgpool/f32-gavgpool.inc"
#undef Q8RT_F32_GAVGPOOL_UKERNEL
    {0, NULL, NULL},
};

static const struct {
  uint32_t isa;
  q8rt_f32_gavgpool_cw_ukernel_fn fn;
  const char *name;
} g_f32_gavgpool_cw[] = {
#define Q8RT_F32_GAVGPOOL_CW_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-gavgpool-cw/f32-gavgpool-cw.inc"
#undef Q8RT_F32_GAVGPOOL_CW_UKERNEL
    {0, NULL, NULL},
};

/* The first listed global-average kernels this CPU and backend allow; --explain names the NCHW
 * one (pool_nhwc the channels-last one). AveragePool uses them when a window covers the plane. */
static void pick_gavgpool(op_prepare_ctx *ctx, pool_params *p) {
  p->gavg = q8rt_f32_gavgpool_ukernel__scalar;
  p->gavg_name = "f32_gavgpool_ukernel__scalar";
  p->gavg_cw = q8rt_f32_gavgpool_cw_ukernel__scalar;
  const char *cw_name = "q8rt_f32_gavgpool_cw_ukernel__scalar";
  for (size_t i = 0; g_f32_gavgpool[i].fn != NULL; i++) {
    if (op_isa_usable(g_f32_gavgpool[i].isa, ctx->isa, ctx->backend)) {
      p->gavg = g_f32_gavgpool[i].fn;
      p->gavg_name = g_f32_gavgpool[i].name + 5; /* no "q8rt_" */
      break;
    }
  }
  for (size_t i = 0; g_f32_gavgpool_cw[i].fn != NULL; i++) {
    if (op_isa_usable(g_f32_gavgpool_cw[i].isa, ctx->isa, ctx->backend)) {
      p->gavg_cw = g_f32_gavgpool_cw[i].fn;
      cw_name = g_f32_gavgpool_cw[i].name;
      break;
    }
  }
  if (p->kind == POOL_GLOBAL_AVG) {
    ctx->kernel = cw_name + 5;
    ctx->reason = "ONNX Runtime MLAS order (four running sums per channel, one division)";
  }
}

static const struct {
  uint32_t isa;
  q8rt_f32_maxpool_ukernel_fn fn;
  const char *name;
} g_f32_maxpool[] = {
#define Q8RT_F32_MAXPOOL_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-maxpool/f32-maxpool.inc"
#undef Q8RT_F32_MAXPOOL_UKERNEL
    {0, NULL, NULL},
};

static const struct {
  uint32_t isa;
  q8rt_u8_maxpool_ukernel_fn u8;
  q8rt_s8_maxpool_ukernel_fn s8;
  const char *u8_name, *s8_name;
} g_x8_maxpool[] = {
#define Q8RT_X8_MAXPOOL_UKERNEL(isa, u8fn, s8fn) {isa, u8fn, s8fn, #u8fn, #s8fn},
#include "x8-maxpool/x8-maxpool.inc"
#undef Q8RT_X8_MAXPOOL_UKERNEL
    {0, NULL, NULL, NULL, NULL},
};

/* The first listed maxpool kernels this CPU and backend allow (op_isa_usable); the name shown is
 * the one for the input's type when known at load. */
static void pick_maxpool(op_prepare_ctx *ctx, pool_params *p) {
  const char *f32_name = "q8rt_f32_maxpool_ukernel__scalar", *u8_name = "q8rt_u8_maxpool_ukernel__scalar",
             *s8_name = "q8rt_s8_maxpool_ukernel__scalar";
  p->f32max = q8rt_f32_maxpool_ukernel__scalar;
  p->u8max = q8rt_u8_maxpool_ukernel__scalar;
  p->s8max = q8rt_s8_maxpool_ukernel__scalar;
  {
    for (size_t i = 0; g_f32_maxpool[i].fn != NULL; i++) {
      if (op_isa_usable(g_f32_maxpool[i].isa, ctx->isa, ctx->backend)) {
        p->f32max = g_f32_maxpool[i].fn;
        f32_name = g_f32_maxpool[i].name;
        break;
      }
    }
    for (size_t i = 0; g_x8_maxpool[i].u8 != NULL; i++) {
      if (op_isa_usable(g_x8_maxpool[i].isa, ctx->isa, ctx->backend)) {
        p->u8max = g_x8_maxpool[i].u8;
        p->s8max = g_x8_maxpool[i].s8;
        u8_name = g_x8_maxpool[i].u8_name;
        s8_name = g_x8_maxpool[i].s8_name;
        break;
      }
    }
  }
  const ir_value *x = ir_node_input(ctx->graph, ctx->node, 0);
  const q8rt_dtype t = x != NULL ? x->dtype : Q8RT_DTYPE_UNDEFINED;
  ctx->kernel = (t == Q8RT_DTYPE_UINT8 ? u8_name : t == Q8RT_DTYPE_INT8 ? s8_name : f32_name) + 5; /* no "q8rt_" */
  ctx->reason = "window rows in order, the outputs of a row side by side";
}

static q8rt_status pool_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err, enum pool_kind kind) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 1, 1, 1, kind == POOL_MAX ? 2 : 1, err)) != Q8RT_OK) return st;
  if (n->n_outputs > 1 && n->outputs[1] >= 0) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "MaxPool node '%s': the Indices output is not supported", n->name);
  }
  pool_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->kind = kind;
  ctx->kernel = "average_pool_f32__scalar";
  ctx->reason = "reference";
  if (kind == POOL_AVG || kind == POOL_GLOBAL_AVG) pick_gavgpool(ctx, p);
  if (kind == POOL_AVG) {
    p->vadd = op_f32_vbinary_kernel(ctx->isa, ctx->backend, OP_VBIN_ADD, OP_VBIN_VV);
    p->vdivc = op_f32_vbinary_kernel(ctx->isa, ctx->backend, OP_VBIN_DIV, OP_VBIN_VC);
    ctx->kernel = op_f32_vbinary_name(ctx->isa, ctx->backend, OP_VBIN_ADD, OP_VBIN_VV);
    ctx->reason =
        "MLAS's summation order; channels-last: window pixels added over the channels; NCHW with "
        "column sums (MLAS's vector order): whole input rows added, then each window's columns";
  }
  if (kind == POOL_MAX || kind == POOL_GLOBAL_MAX) pick_maxpool(ctx, p);
  *out = p;
  if (kind == POOL_GLOBAL_AVG || kind == POOL_GLOBAL_MAX) return Q8RT_OK;

  const int64_t *ks;
  size_t nk;
  if ((st = ir_attr_ints(n, "kernel_shape", &ks, &nk, err)) != Q8RT_OK) return st;
  if (ks == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'kernel_shape' is missing", n->op_type,
                     n->name);
  }
  if (nk < 1 || nk > 3) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': attribute 'kernel_shape' has %zu values (q8rt pools 1-D, 2-D and 3-D)", n->op_type,
                     n->name, nk);
  }
  p->sp = (int)nk;
  if ((st = op_window_parse(n, p->sp, NULL, 1 << 24, OP_WINDOW_CEIL_MODE | OP_WINDOW_SAME_UNDILATED, &p->win, err)) !=
      Q8RT_OK) {
    return st;
  }
  if ((st = ir_attr_int(n, "count_include_pad", 0, &p->count_include_pad, err)) != Q8RT_OK) return st;
  int64_t storage_order;
  if ((st = ir_attr_int(n, "storage_order", 0, &storage_order, err)) != Q8RT_OK) return st;
  if (storage_order != 0) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "MaxPool node '%s': attribute 'storage_order' %lld is not supported (0 only)", n->name,
                     (long long)storage_order);
  }
  return Q8RT_OK;
}

static q8rt_status maxpool_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return pool_prepare(ctx, out, err, POOL_MAX);
}
static q8rt_status avgpool_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return pool_prepare(ctx, out, err, POOL_AVG);
}
static q8rt_status gavgpool_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return pool_prepare(ctx, out, err, POOL_GLOBAL_AVG);
}
static q8rt_status gmaxpool_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return pool_prepare(ctx, out, err, POOL_GLOBAL_MAX);
}

static q8rt_status pool_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  const pool_params *p = params;
  const op_shape *x = &in[0];
  q8rt_status st;
  const int is_max = p->kind == POOL_MAX || p->kind == POOL_GLOBAL_MAX;
  if ((st = data_check_float(n, x, "X", is_max, err)) != Q8RT_OK) return st;
  out->dtype = x->dtype;
  out->rank = x->rank;
  if (x->rank < 0) return Q8RT_OK;
  const int global = p->kind == POOL_GLOBAL_AVG || p->kind == POOL_GLOBAL_MAX;
  const int sp = global ? x->rank - 2 : p->sp;
  if (x->rank != sp + 2 || sp < 1 || sp > 3) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input of rank %d (q8rt pools N,C plus 1 to 3 spatial axes%s)", n->op_type, n->name,
                     x->rank, global ? "" : " matching kernel_shape");
  }
  /* NCHW: the spatial axes are 2..rank-1; channels-last: 1..rank-2, the channels last */
  const int s0 = p->nhwc ? 1 : 2, ca = p->nhwc ? x->rank - 1 : 1;
  out->dims[0] = x->dims[0];
  out->dims[ca] = x->dims[ca];
  pool_geom g;
  memset(&g, 0, sizeof(g));
  op_window_geom_init(&g.w);
  for (int i = 0; i < sp; i++) {
    const int j = 3 - sp + i;
    const int64_t len = x->dims[s0 + i];
    if (global) {
      out->dims[s0 + i] = 1;
      g.w.in[j] = g.w.k[j] = len;
      continue;
    }
    if (len < 0) {
      out->dims[s0 + i] = -1;
      continue;
    }
    const int64_t k = p->win.kernel[i], s = p->win.stride[i], d = p->win.dilation[i], ek = (k - 1) * d + 1;
    int64_t pb, pe, o;
    if ((st = op_window_output(&p->win, n, i, len, &o, &pb, &pe, err)) != Q8RT_OK) return st;
    if (p->kind == POOL_AVG && p->count_include_pad && (o - 1) * s - pb + ek > len + pe) {
      return q8rt_fail(
          err, Q8RT_ERROR_UNSUPPORTED,
          "AveragePool node '%s': with ceil_mode and count_include_pad the last window on spatial axis %d "
          "reaches past the padding, where ONNX's reference and ONNX Runtime count differently: not supported",
          n->name, i);
    }
    out->dims[s0 + i] = o;
    op_window_geom_axis(&g.w, &p->win, i, len, o, k, pb, pe);
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t c;
  if ((st = data_count(n, x, &c, err)) != Q8RT_OK) return st;
  if ((st = data_count(n, out, &c, err)) != Q8RT_OK) return st;
  g.outer = (size_t)(x->dims[0] * x->dims[p->nhwc ? x->rank - 1 : 1]);
  g.channels = p->nhwc ? (size_t)x->dims[x->rank - 1] : 1;
  g.dtype = x->dtype;
  g.include_pad = p->count_include_pad != 0;
  /* ONNX Runtime runs undilated float pooling through MLAS, whose kernels sum in different
   * orders: the global kernel when the window is the whole input, the vector kernel (column sums,
   * then across the window) for 2-D/3-D with a small kernel and a width stride of at most 2, the
   * generic kernel (row-major) otherwise; with dilations, or ceil_mode with count_include_pad, ORT
   * uses its own row-major loops (observed). q8rt makes the same choice so sums agree bit for bit. */
  int dilated = 0, small = 1, whole = 1, unit = 1;
  for (int j = 0; j < 3; j++) {
    dilated |= g.w.d[j] != 1;
    small &= g.w.k[j] <= 32;
    whole &= g.w.k[j] == g.w.in[j] && g.w.pb[j] == 0 && g.w.pe[j] == 0;
    unit &= g.w.s[j] == 1;
  }
  g.dilated = dilated;
  g.order = ORDER_GENERIC;
  if (!global && !dilated && !(p->win.ceil_mode && p->count_include_pad)) {
    if (whole && unit) {
      g.order = ORDER_GLOBAL;
    } else if (sp >= 2 && g.w.s[2] <= 2 && small && g.w.in[2] + g.w.pb[2] + g.w.pe[2] <= 2048 - 3) {
      g.order = ORDER_VECTOR;
    }
  }
  memcpy(geom, &g, sizeof(g));
  return Q8RT_OK;
}

/* The taps of one window along one axis: first tap index t0..t1 (exclusive) inside the input,
 * and the number of taps inside [-pb, in + pe). */
static void window(const pool_geom *g, int j, int64_t o, int64_t *t0, int64_t *t1, int64_t *padded) {
  const int64_t start = o * g->w.s[j] - g->w.pb[j], d = g->w.d[j], k = g->w.k[j];
  int64_t a = 0, b = k, pa = 0, pz = k;
  /* taps with start + t*d in [0, in) */
  if (start < 0) a = (-start + d - 1) / d;
  if (start + (k - 1) * d >= g->w.in[j]) {
    const int64_t lim = g->w.in[j] - start; /* t*d < lim */
    b = lim <= 0 ? 0 : (lim + d - 1) / d;
  }
  if (b < a) b = a;
  if (start + (k - 1) * d >= g->w.in[j] + g->w.pe[j]) {
    const int64_t lim = g->w.in[j] + g->w.pe[j] - start;
    pz = lim <= 0 ? 0 : (lim + d - 1) / d;
  }
  (void)pa;
  *t0 = a;
  *t1 = b;
  *padded = pz;
}

/* MaxPool, one plane per work item: each output row starts at the type's lowest value, then every
 * input row of its window (in the window's order) passes over it through the maxpool kernel:
 * outputs whose taps all lie inside the row in one call, the few at the edges one by one with
 * their taps clipped. Each output thus sees the reference loop's comparisons in its order. */
typedef struct maxpool_job {
  const pool_params *p;
  const pool_geom *g;
  const void *x;
  void *y;
} maxpool_job;

/* Edge spans up to this many elements go through a stack copy (4 KB for float). The lowest value
 * leaves a maximum unchanged: integers trivially; float maxima start at -FLT_MAX and never hold
 * NaN or -inf, so "-FLT_MAX > m" is never true and vmaxps(-FLT_MAX, m) returns m. */
#define MAXPOOL_EDGE 1024

#define MAXPOOL_PLANE(T, LOWEST, fn)                                                                             \
  do {                                                                                                           \
    const size_t plane = (size_t)(g->w.in[0] * g->w.in[1] * g->w.in[2]);                                         \
    const size_t oplane = (size_t)(g->w.out[0] * g->w.out[1] * g->w.out[2]);                                     \
    const T *xc = (const T *)jb->x + c * plane;                                                                  \
    T *y = (T *)jb->y + c * oplane;                                                                              \
    const size_t s2 = (size_t)g->w.s[2], d2 = (size_t)g->w.d[2], k2 = (size_t)g->w.k[2];                         \
    int64_t lo = (g->w.pb[2] + g->w.s[2] - 1) / g->w.s[2], hi = 0;                                               \
    const int64_t last = g->w.in[2] - 1 + g->w.pb[2] - (g->w.k[2] - 1) * g->w.d[2];                              \
    if (lo > g->w.out[2]) lo = g->w.out[2];                                                                      \
    if (last >= 0) hi = last / g->w.s[2] + 1;                                                                    \
    if (hi > g->w.out[2]) hi = g->w.out[2];                                                                      \
    if (hi < lo) hi = lo;                                                                                        \
    const int64_t span_all = (g->w.out[2] - 1) * g->w.s[2] + (g->w.k[2] - 1) * g->w.d[2] + 1;                    \
    for (int64_t o0 = 0; o0 < g->w.out[0]; o0++) {                                                               \
      int64_t a0, b0, p0;                                                                                        \
      window(g, 0, o0, &a0, &b0, &p0);                                                                           \
      for (int64_t o1 = 0; o1 < g->w.out[1]; o1++, y += g->w.out[2]) {                                           \
        int64_t a1, b1, p1;                                                                                      \
        window(g, 1, o1, &a1, &b1, &p1);                                                                         \
        for (int64_t o2 = 0; o2 < g->w.out[2]; o2++) y[o2] = LOWEST;                                             \
        for (int64_t t0 = a0; t0 < b0; t0++) {                                                                   \
          const int64_t i0 = o0 * g->w.s[0] - g->w.pb[0] + t0 * g->w.d[0];                                       \
          for (int64_t t1 = a1; t1 < b1; t1++) {                                                                 \
            const int64_t i1 = o1 * g->w.s[1] - g->w.pb[1] + t1 * g->w.d[1];                                     \
            const T *row = xc + (i0 * g->w.in[1] + i1) * g->w.in[2];                                             \
            /* short rows with edges: the whole padded row in one call; else the interior in place and           \
             * each edge's span copied with LOWEST where it leaves the row (a no-op tap). A row                  \
             * without edge outputs is read in place (its copy cost more than the pooling: 2x2 stride-2          \
             * pools on 155-wide rows 0.092 -> 0.051 ms). At most 2 edge outputs (SAME padding): the             \
             * interior in place and each edge output's taps inside the row compared here, in order, as the      \
             * scalar twin does (MTCNN's 3x3 stride-2 SAME_UPPER pools: a copy and call per window row) */       \
            const int few = lo + g->w.out[2] - hi <= 2 && hi > lo;                                               \
            const int whole = !few && span_all <= MAXPOOL_EDGE / 4 && (lo > 0 || hi < g->w.out[2]);              \
            if (hi > lo && !whole) fn((size_t)(hi - lo), k2, s2, d2, row + lo * g->w.s[2] - g->w.pb[2], y + lo); \
            for (int64_t o2 = lo > 0 ? 0 : hi; few && o2 < g->w.out[2]; o2 = o2 + 1 == lo ? hi : o2 + 1) {       \
              int64_t a2, b2, p2;                                                                                \
              window(g, 2, o2, &a2, &b2, &p2);                                                                   \
              T m = y[o2];                                                                                       \
              for (int64_t t2 = a2; t2 < b2; t2++) {                                                             \
                const T v = row[o2 * g->w.s[2] - g->w.pb[2] + t2 * g->w.d[2]];                                   \
                if (v > m) m = v;                                                                                \
              }                                                                                                  \
              y[o2] = m;                                                                                         \
            }                                                                                                    \
            if (few) continue;                                                                                   \
            for (int side = whole ? 2 : 0; side < (whole ? 3 : 2); side++) {                                     \
              const int64_t e0 = side == 1 ? hi : 0, e1 = side == 0 ? lo : g->w.out[2];                          \
              if (e1 <= e0) continue;                                                                            \
              const int64_t first = e0 * g->w.s[2] - g->w.pb[2];                                                 \
              const int64_t len = (e1 - 1 - e0) * g->w.s[2] + (g->w.k[2] - 1) * g->w.d[2] + 1;                   \
              if (len <= MAXPOOL_EDGE) {                                                                         \
                T buf[MAXPOOL_EDGE];                                                                             \
                int64_t i = 0;                                                                                   \
                for (; i < len && first + i < 0; i++) buf[i] = LOWEST;                                           \
                const int64_t end = g->w.in[2] - first < len ? g->w.in[2] - first : len;                         \
                if (end > i) {                                                                                   \
                  memcpy(buf + i, row + first + i, (size_t)(end - i) * sizeof(T));                               \
                  i = end;                                                                                       \
                }                                                                                                \
                for (; i < len; i++) buf[i] = LOWEST;                                                            \
                fn((size_t)(e1 - e0), k2, s2, d2, buf, y + e0);                                                  \
                continue;                                                                                        \
              }                                                                                                  \
              for (int64_t o2 = e0; o2 < e1; o2++) {                                                             \
                int64_t a2, b2, p2;                                                                              \
                window(g, 2, o2, &a2, &b2, &p2);                                                                 \
                if (b2 > a2)                                                                                     \
                  fn(1, (size_t)(b2 - a2), s2, d2, row + o2 * g->w.s[2] - g->w.pb[2] + a2 * g->w.d[2], y + o2);  \
              }                                                                                                  \
            }                                                                                                    \
          }                                                                                                      \
        }                                                                                                        \
      }                                                                                                          \
    }                                                                                                            \
  } while (0)

/* The outputs [lo, hi) along axis j whose windows lie inside the input (no tap clipped). */
static void interior(const pool_geom *g, int j, int64_t *lo, int64_t *hi) {
  int64_t l = (g->w.pb[j] + g->w.s[j] - 1) / g->w.s[j], h = 0;
  const int64_t last = g->w.in[j] - 1 + g->w.pb[j] - (g->w.k[j] - 1) * g->w.d[j];
  if (l > g->w.out[j]) l = g->w.out[j];
  if (last >= 0) h = last / g->w.s[j] + 1;
  if (h > g->w.out[j]) h = g->w.out[j];
  if (h < l) h = l;
  *lo = l;
  *hi = h;
}

/* Float MaxPool on a plane with many edge outputs whose padded plane (the span of every window,
 * -FLT_MAX outside the input) fits MAXPOOL_PADDED floats: per window depth the plane's slice copied
 * into that frame, then one kernel call for all output rows, every window whole. A tap in the
 * frame's padding is -FLT_MAX, a no-op comparison (each output starts at -FLT_MAX and never holds
 * NaN, so "-FLT_MAX > m" never holds), so each output sees the reference loop's comparisons in its
 * order. Before: one call per output row and window row on a copy of the padded row (YOLOX's SPP,
 * 5x5/9x9/13x13 stride-1 pools padded k / 2 on 13x13 planes, every output an edge one). */
#define MAXPOOL_PADDED 2048
static int maxpool_plane_f32_padded(const maxpool_job *jb, size_t c) {
  const pool_geom *g = jb->g;
  int64_t ext[3];
  for (int j = 1; j < 3; j++) ext[j] = (g->w.out[j] - 1) * g->w.s[j] + (g->w.k[j] - 1) * g->w.d[j] + 1;
  if (ext[1] * ext[2] > MAXPOOL_PADDED) return 0;
  const int64_t out1 = g->w.out[1], out2 = g->w.out[2], in1 = g->w.in[1], in2 = g->w.in[2];
  const int64_t pb1 = g->w.pb[1], pb2 = g->w.pb[2];
  /* the input rows and columns inside the frame */
  const int64_t rows = in1 < ext[1] - pb1 ? in1 : ext[1] - pb1, cols = in2 < ext[2] - pb2 ? in2 : ext[2] - pb2;
  if (pb1 < 0 || pb2 < 0 || rows <= 0 || cols <= 0) return 0;
  const size_t plane = (size_t)(g->w.in[0] * in1 * in2);
  const size_t oplane = (size_t)(g->w.out[0] * out1 * out2);
  const float *xc = (const float *)jb->x + c * plane;
  float *yc = (float *)jb->y + c * oplane;
  float buf[MAXPOOL_PADDED];
  /* the frame's border only (the copies below fill the rest): a loop over the whole frame was a
   * quarter of a 5x5 pool's time on 20x20 planes */
  const int64_t e1 = ext[1], e2 = ext[2], ce = pb2 + cols < e2 ? pb2 + cols : e2;
  for (int64_t i = 0; i < pb1 * e2; i++) buf[i] = -FLT_MAX;
  for (int64_t i = (pb1 + rows) * e2; i < e1 * e2; i++) buf[i] = -FLT_MAX;
  for (int64_t i1 = pb1; i1 < pb1 + rows; i1++) {
    for (int64_t i2 = 0; i2 < pb2; i2++) buf[i1 * e2 + i2] = -FLT_MAX;
    for (int64_t i2 = ce; i2 < e2; i2++) buf[i1 * e2 + i2] = -FLT_MAX;
  }
  /* Separable when that compares less: a window's maximum is the maximum of its rows' maxima.
   * Each output's value is the first of its taps (rows then taps) equal to the window's maximum
   * (later equal ones, the other zero among them, fail "v > m"; NaN never passes), or -FLT_MAX;
   * a row's pass keeps its first such tap, the pass over rows the first row holding the maximum:
   * the same tap, the same bits. 13x13 on 13x13 planes: 6422 comparisons instead of 28561. */
  float tmp[MAXPOOL_PADDED]; /* ext[1] rows of out2 <= ext[1] * ext[2] */
  const int64_t direct = out1 * out2 * g->w.k[1] * g->w.k[2];
  const int sep = g->w.k[1] > 1 && g->w.k[2] > 1 && ext[1] * out2 * g->w.k[2] + out1 * out2 * g->w.k[1] < direct / 2;
  for (int64_t o0 = 0; o0 < g->w.out[0]; o0++) {
    int64_t a0, b0, p0;
    window(g, 0, o0, &a0, &b0, &p0);
    float *y = yc + o0 * out1 * out2;
    if (b0 <= a0) { /* no window row inside the input: the lowest value, as the reference loop */
      for (int64_t i = 0; i < out1 * out2; i++) y[i] = -FLT_MAX;
      continue;
    }
    for (int64_t t0 = a0; t0 < b0; t0++) {
      const int64_t i0 = o0 * g->w.s[0] - g->w.pb[0] + t0 * g->w.d[0];
      for (int64_t i1 = 0; i1 < rows; i1++)
        memcpy(buf + (i1 + pb1) * ext[2] + pb2, xc + (i0 * in1 + i1) * in2, (size_t)cols * sizeof(float));
      if (sep && g->w.s[2] == 1) {
        /* stride 1 along the rows: the row pass as one run over the frame's flat positions f
         * (tmp[f] = the window maxima of the taps f + t * d2; f % ext2 >= out2 mixes two rows and
         * is never read), so full vectors instead of a masked tail per row; then the rows' maxima
         * along axis 1, tmp's rows ext2 apart */
        jb->p->f32max((size_t)((ext[1] - 1) * ext[2] + out2), 1, 1, (size_t)g->w.k[2], 1, (size_t)g->w.d[2], 0, 0, 0,
                      buf, tmp, 0);
        jb->p->f32max((size_t)out2, (size_t)out1, (size_t)g->w.k[1], 1, 1, 1, (size_t)(g->w.s[1] * ext[2]),
                      (size_t)(g->w.d[1] * ext[2]), (size_t)out2, tmp, y, t0 > a0);
        continue;
      }
      if (sep) {
        /* each frame row's window maxima along axis 2, then those rows' maxima along axis 1 */
        jb->p->f32max((size_t)out2, (size_t)ext[1], 1, (size_t)g->w.k[2], (size_t)g->w.s[2], (size_t)g->w.d[2],
                      (size_t)ext[2], 0, (size_t)out2, buf, tmp, 0);
        jb->p->f32max((size_t)out2, (size_t)out1, (size_t)g->w.k[1], 1, 1, 1, (size_t)(g->w.s[1] * out2),
                      (size_t)(g->w.d[1] * out2), (size_t)out2, tmp, y, t0 > a0);
        continue;
      }
      jb->p->f32max((size_t)out2, (size_t)out1, (size_t)g->w.k[1], (size_t)g->w.k[2], (size_t)g->w.s[2],
                    (size_t)g->w.d[2], (size_t)(g->w.s[1] * ext[2]), (size_t)(g->w.d[1] * ext[2]), (size_t)out2, buf, y,
                    t0 > a0);
    }
  }
  return 1;
}

/* Float MaxPool on a plane whose rows have at most 2 edge outputs (or none): for each window
 * depth, one kernel call covers every output row whose window rows lie inside the input (its
 * rows s1 * W apart, the window's rows d1 * W apart) and one call each of the other output
 * rows, for the outputs of a row whose taps lie inside it; the edge outputs (clipped the same way
 * in every row, found once a plane) compare their taps inside the input here, rows then taps in
 * order, as the scalar twin does. Each output thus sees the reference loop's comparisons in its
 * order. One call per window row with the edge windows found again for every row cost more than
 * the pooling: MTCNN R-Net's 3x3 stride-2 SAME_UPPER pools on 22x22 planes, 0.126 ms with ~60% of
 * it outside the kernel; madmom's TCN [1, 3] stride-3 pools, 298 rows of 26 outputs a plane. */
static int maxpool_plane_f32_rows(const maxpool_job *jb, size_t c) {
  const pool_geom *g = jb->g;
  int64_t lo, hi, lo1, hi1;
  interior(g, 2, &lo, &hi);
  interior(g, 1, &lo1, &hi1);
  const int64_t out1 = g->w.out[1], out2 = g->w.out[2], in1 = g->w.in[1], in2 = g->w.in[2];
  const int64_t nedge = lo + out2 - hi;
  if (hi == lo || nedge > 2) return maxpool_plane_f32_padded(jb, c);
  int64_t eo[2], ea[2], eb[2];
  for (int64_t e = 0, o2 = lo > 0 ? 0 : hi; o2 < out2; o2 = o2 + 1 == lo ? hi : o2 + 1, e++) {
    int64_t p2;
    eo[e] = o2;
    window(g, 2, o2, &ea[e], &eb[e], &p2);
  }
  const size_t plane = (size_t)(g->w.in[0] * in1 * in2);
  const size_t oplane = (size_t)(g->w.out[0] * out1 * out2);
  const float *xc = (const float *)jb->x + c * plane;
  float *yc = (float *)jb->y + c * oplane;
  const size_t s2 = (size_t)g->w.s[2], d2 = (size_t)g->w.d[2], k2 = (size_t)g->w.k[2];
  const size_t rs = (size_t)(g->w.d[1] * in2), xq = (size_t)(g->w.s[1] * in2);
  const q8rt_f32_maxpool_ukernel_fn fn = jb->p->f32max;
  for (int64_t o0 = 0; o0 < g->w.out[0]; o0++) {
    int64_t a0, b0, p0;
    window(g, 0, o0, &a0, &b0, &p0);
    float *y = yc + o0 * out1 * out2;
    if (b0 <= a0) { /* no window row inside the input: the lowest value, as the reference loop */
      for (int64_t i = 0; i < out1 * out2; i++) y[i] = -FLT_MAX;
      continue;
    }
    for (int64_t t0 = a0; t0 < b0; t0++) {
      const int acc = t0 > a0; /* the first depth starts each output at -FLT_MAX */
      const int64_t i0 = o0 * g->w.s[0] - g->w.pb[0] + t0 * g->w.d[0];
      const float *xp = xc + i0 * in1 * in2 + lo * g->w.s[2] - g->w.pb[2]; /* the row's first interior output */
      if (hi1 > lo1)
        fn((size_t)(hi - lo), (size_t)(hi1 - lo1), (size_t)g->w.k[1], k2, s2, d2, xq, rs, (size_t)out2,
           xp + (lo1 * g->w.s[1] - g->w.pb[1]) * in2, y + lo1 * out2 + lo, acc);
      for (int64_t o1 = 0; o1 < out1; o1++) {
        int64_t a1, b1, p1;
        const int inside = o1 >= lo1 && o1 < hi1;
        if (inside && nedge == 0) {
          o1 = hi1 - 1;
          continue;
        }
        window(g, 1, o1, &a1, &b1, &p1);
        if (b1 <= a1) {
          for (int64_t o2 = 0; !acc && o2 < out2; o2++) y[o1 * out2 + o2] = -FLT_MAX;
          continue;
        }
        const size_t r = (size_t)(b1 - a1);
        const int64_t i1 = o1 * g->w.s[1] - g->w.pb[1] + a1 * g->w.d[1];
        if (!inside) fn((size_t)(hi - lo), 1, r, k2, s2, d2, 0, rs, 0, xp + i1 * in2, y + o1 * out2 + lo, acc);
        const float *row = xc + (i0 * in1 + i1) * in2;
        for (int64_t e = 0; e < nedge; e++) {
          const float *xe = row + eo[e] * g->w.s[2] - g->w.pb[2];
          float *ye = y + o1 * out2 + eo[e];
          float m = acc ? *ye : -FLT_MAX;
          for (size_t i = 0; i < r; i++) {
            for (int64_t t2 = ea[e]; t2 < eb[e]; t2++) {
              const float v = xe[i * rs + (size_t)(t2 * g->w.d[2])];
              if (v > m) m = v;
            }
          }
          *ye = m;
        }
      }
    }
  }
  return 1;
}

static void maxpool_plane(void *arg, size_t c) {
  const maxpool_job *jb = arg;
  const pool_geom *g = jb->g;
  const pool_params *p = jb->p;
#define F32MAX1(n, k, s, d, x, y) p->f32max(n, 1, 1, k, s, d, 0, 0, 0, x, y, 1)
  switch (g->dtype) {
    case Q8RT_DTYPE_UINT8: MAXPOOL_PLANE(uint8_t, 0, p->u8max); break;
    case Q8RT_DTYPE_INT8: MAXPOOL_PLANE(int8_t, -128, p->s8max); break;
    default:
      if (!maxpool_plane_f32_rows(jb, c)) MAXPOOL_PLANE(float, -FLT_MAX, F32MAX1);
      break;
  }
#undef F32MAX1
}

/* MaxPool channels-last, one output row (all its pixels) per work item: each pixel starts at the
 * lowest value, then every window row inside the input (in the window's order) passes over it
 * through the maxpool kernel with the channels as its outputs and the row's taps C * dilation
 * apart. Each output element thus sees the NCHW route's comparisons in the same order: same
 * bytes. */
#define MAXPOOL_NHWC_ROW(T, LOWEST, fn)                                                                           \
  do {                                                                                                            \
    const size_t C = g->channels;                                                                                 \
    const int64_t o1 = (int64_t)(item % (size_t)g->w.out[1]),                                                     \
                  o0 = (int64_t)(item / (size_t)g->w.out[1] % (size_t)g->w.out[0]);                               \
    const size_t n = item / (size_t)(g->w.out[1] * g->w.out[0]);                                                  \
    const T *xn = (const T *)jb->x + n * (size_t)op_window_in_plane(&g->w) * C;                                   \
    T *y = (T *)jb->y +                                                                                           \
           ((n * (size_t)g->w.out[0] + (size_t)o0) * (size_t)g->w.out[1] + (size_t)o1) * (size_t)g->w.out[2] * C; \
    int64_t a0, b0, p0, a1, b1, p1;                                                                               \
    window(g, 0, o0, &a0, &b0, &p0);                                                                              \
    window(g, 1, o1, &a1, &b1, &p1);                                                                              \
    for (int64_t o2 = 0; o2 < g->w.out[2]; o2++, y += C) {                                                        \
      int64_t a2, b2, p2;                                                                                         \
      window(g, 2, o2, &a2, &b2, &p2);                                                                            \
      for (size_t c = 0; c < C; c++) y[c] = LOWEST;                                                               \
      if (b2 <= a2) continue;                                                                                     \
      const int64_t i2 = o2 * g->w.s[2] - g->w.pb[2] + a2 * g->w.d[2];                                            \
      for (int64_t t0 = a0; t0 < b0; t0++) {                                                                      \
        const int64_t i0 = o0 * g->w.s[0] - g->w.pb[0] + t0 * g->w.d[0];                                          \
        ROWS(T, fn, i0);                                                                                          \
      }                                                                                                           \
    }                                                                                                             \
  } while (0)

/* the window rows of one depth: 8-bit kernels one row a call, the float one all rows (d1 * W * C
 * apart) in one call */
#define ROWS_X8(T, fn, i0)                                                                                           \
  for (int64_t t1 = a1; t1 < b1; t1++) {                                                                             \
    const int64_t i1 = o1 * g->w.s[1] - g->w.pb[1] + t1 * g->w.d[1];                                                 \
    fn(C, (size_t)(b2 - a2), 1, (size_t)g->w.d[2] * C, xn + ((i0 * g->w.in[1] + i1) * g->w.in[2] + i2) * (int64_t)C, \
       y);                                                                                                           \
  }
#define ROWS_F32(T, fn, i0)                                                                                           \
  if (b1 > a1) {                                                                                                      \
    const int64_t i1 = o1 * g->w.s[1] - g->w.pb[1] + a1 * g->w.d[1];                                                  \
    fn(C, 1, (size_t)(b1 - a1), (size_t)(b2 - a2), 1, (size_t)g->w.d[2] * C, 0, (size_t)(g->w.d[1] * g->w.in[2]) * C, \
       0, xn + ((i0 * g->w.in[1] + i1) * g->w.in[2] + i2) * (int64_t)C, y, 1);                                        \
  }

static void maxpool_nhwc_row(void *arg, size_t item) {
  const maxpool_job *jb = arg;
  const pool_geom *g = jb->g;
  const pool_params *p = jb->p;
  switch (g->dtype) {
#define ROWS ROWS_X8
    case Q8RT_DTYPE_UINT8: MAXPOOL_NHWC_ROW(uint8_t, 0, p->u8max); break;
    case Q8RT_DTYPE_INT8: MAXPOOL_NHWC_ROW(int8_t, -128, p->s8max); break;
#undef ROWS
#define ROWS ROWS_F32
    default: MAXPOOL_NHWC_ROW(float, -FLT_MAX, p->f32max); break;
#undef ROWS
  }
}

/* AveragePool / GlobalAveragePool (float): channels [begin, end), each computed alone (the split
 * over the pool changes no sum's order). */
typedef struct avgpool_job {
  const pool_params *p;
  const pool_geom *g;
  const float *x;
  float *y;
} avgpool_job;

static void gavg_range(void *arg, size_t begin, size_t end) {
  const avgpool_job *jb = arg;
  const pool_geom *g = jb->g;
  const float *x = jb->x;
  float *y = jb->y;
  const size_t plane = (size_t)op_window_in_plane(&g->w);
  /* ONNX Runtime's order (MLAS global pooling): four running sums over elements 4k+j, combined
   * as (s0 + s2) + (s1 + s3), then the tail one by one, then one division.
   * (f32-gavgpool-cw on NCHW planes; f32-gavgpool on channels-last pixels, `channels` apart). */
  const float count = (float)plane;
  const size_t cs = g->channels;
  const pool_params *p = jb->p;
  if (cs > 1) {
    for (size_t c = begin; c < end;) {
      size_t n = cs - c % cs; /* within one image */
      if (n > end - c) n = end - c;
      p->gavg(plane, n, x + c / cs * plane * cs + c % cs, cs, count, y + c);
      c += n;
    }
    return;
  }
  p->gavg_cw(plane, end - begin, x + begin * plane, count, y + begin);
}

/* Channels-last AveragePool: the channels [begin, end) in blocks of up to AVG_BLOCK within one
 * image; per output pixel the window's pixels are added over a block by f32-vbinary in
 * avg_range's order (ORDER_VECTOR: a column's rows into `col`, the columns into `sum`), each
 * channel's additions exactly the scalar loop's. */
#define AVG_BLOCK 256
static void avg_nhwc_range(const avgpool_job *jb, size_t begin, size_t end) {
  const pool_params *p = jb->p;
  const pool_geom *g = jb->g;
  const size_t plane = (size_t)op_window_in_plane(&g->w), cs = g->channels;
  const size_t oplane = (size_t)(g->w.out[0] * g->w.out[1] * g->w.out[2]);
  float sum[AVG_BLOCK], col[AVG_BLOCK];
  for (size_t c = begin; c < end;) {
    size_t n = cs - c % cs;
    if (n > end - c) n = end - c;
    if (n > AVG_BLOCK) n = AVG_BLOCK;
    const float *xc = jb->x + c / cs * plane * cs + c % cs;
    float *yc = jb->y + c / cs * oplane * cs + c % cs;
    for (int64_t o0 = 0; o0 < g->w.out[0]; o0++) {
      int64_t a0, b0, p0;
      window(g, 0, o0, &a0, &b0, &p0);
      for (int64_t o1 = 0; o1 < g->w.out[1]; o1++) {
        int64_t a1, b1, p1;
        window(g, 1, o1, &a1, &b1, &p1);
        for (int64_t o2 = 0; o2 < g->w.out[2]; o2++, yc += cs) {
          int64_t a2, b2, p2;
          window(g, 2, o2, &a2, &b2, &p2);
          memset(sum, 0, n * sizeof(float));
          if (g->order == ORDER_VECTOR) {
            for (int64_t t2 = a2; t2 < b2; t2++) {
              const int64_t i2 = o2 * g->w.s[2] - g->w.pb[2] + t2;
              memset(col, 0, n * sizeof(float));
              for (int64_t t0 = a0; t0 < b0; t0++) {
                const int64_t i0 = o0 * g->w.s[0] - g->w.pb[0] + t0;
                for (int64_t t1 = a1; t1 < b1; t1++) {
                  const int64_t i1 = o1 * g->w.s[1] - g->w.pb[1] + t1;
                  p->vadd(n, col, xc + (size_t)((i0 * g->w.in[1] + i1) * g->w.in[2] + i2) * cs, col);
                }
              }
              p->vadd(n, sum, col, sum);
            }
          } else {
            for (int64_t t0 = a0; t0 < b0; t0++) {
              const int64_t i0 = o0 * g->w.s[0] - g->w.pb[0] + t0 * g->w.d[0];
              for (int64_t t1 = a1; t1 < b1; t1++) {
                const int64_t i1 = o1 * g->w.s[1] - g->w.pb[1] + t1 * g->w.d[1];
                const float *row = xc + (size_t)((i0 * g->w.in[1] + i1) * g->w.in[2]) * cs;
                for (int64_t t2 = a2; t2 < b2; t2++)
                  p->vadd(n, sum, row + (size_t)(o2 * g->w.s[2] - g->w.pb[2] + t2 * g->w.d[2]) * cs, sum);
              }
            }
          }
          const int64_t count = g->include_pad ? p0 * p1 * p2 : (b0 - a0) * (b1 - a1) * (b2 - a2);
          if (count > 0) {
            const float fc = (float)count;
            p->vdivc(n, sum, &fc, yc);
          } else {
            memset(yc, 0, n * sizeof(float));
          }
        }
      }
    }
    c += n;
  }
}

/* NCHW AveragePool in ORDER_VECTOR (MLAS's column sums; undilated, rows at most 2045 wide): per
 * output row, every input column's sum over the window's rows at once (f32-vbinary over whole
 * rows, the rows in the window's order: each column sum is the scalar loop's), then each output
 * adds its window's columns in order. */
static void avg_cols_range(const avgpool_job *jb, size_t begin, size_t end) {
  const pool_params *p = jb->p;
  const pool_geom *g = jb->g;
  const size_t plane = (size_t)op_window_in_plane(&g->w), wd = (size_t)g->w.in[2];
  const size_t oplane = (size_t)(g->w.out[0] * g->w.out[1] * g->w.out[2]);
  float cols[2048];
  for (size_t c = begin; c < end; c++) {
    const float *xc = jb->x + c * plane;
    float *yc = jb->y + c * oplane;
    for (int64_t o0 = 0; o0 < g->w.out[0]; o0++) {
      int64_t a0, b0, p0;
      window(g, 0, o0, &a0, &b0, &p0);
      for (int64_t o1 = 0; o1 < g->w.out[1]; o1++) {
        int64_t a1, b1, p1;
        window(g, 1, o1, &a1, &b1, &p1);
        memset(cols, 0, wd * sizeof(float));
        for (int64_t t0 = a0; t0 < b0; t0++) {
          const int64_t i0 = o0 * g->w.s[0] - g->w.pb[0] + t0;
          for (int64_t t1 = a1; t1 < b1; t1++) {
            const int64_t i1 = o1 * g->w.s[1] - g->w.pb[1] + t1;
            p->vadd(wd, cols, xc + (size_t)((i0 * g->w.in[1] + i1) * g->w.in[2]), cols);
          }
        }
        for (int64_t o2 = 0; o2 < g->w.out[2]; o2++) {
          int64_t a2, b2, p2;
          window(g, 2, o2, &a2, &b2, &p2);
          float sum = 0.0f;
          for (int64_t t2 = a2; t2 < b2; t2++) sum += cols[o2 * g->w.s[2] - g->w.pb[2] + t2];
          const int64_t count = g->include_pad ? p0 * p1 * p2 : (b0 - a0) * (b1 - a1) * (b2 - a2);
          *yc++ = count > 0 ? sum / (float)count : 0.0f;
        }
      }
    }
  }
}

static void avg_range(void *arg, size_t begin, size_t end) {
  const avgpool_job *jb = arg;
  if (jb->g->channels > 1) {
    avg_nhwc_range(jb, begin, end);
    return;
  }
  if (jb->g->order == ORDER_VECTOR && jb->g->w.in[2] <= 2048) {
    avg_cols_range(jb, begin, end);
    return;
  }
  const pool_geom *g = jb->g;
  const float *x = jb->x;
  float *y = jb->y;
  const size_t plane = (size_t)op_window_in_plane(&g->w);
  /* Channels-last: each channel's window sums in the same order, its pixels `channels` apart. */
  const size_t cs = g->channels;
  const size_t oplane = (size_t)(g->w.out[0] * g->w.out[1] * g->w.out[2]);
  for (size_t c = begin; c < end; c++) {
    const float *xc = cs == 1 ? x + c * plane : x + c / cs * plane * cs + c % cs;
    float *yc = cs == 1 ? y + c * oplane : y + c / cs * oplane * cs + c % cs;
    size_t yo = 0;
    for (int64_t o0 = 0; o0 < g->w.out[0]; o0++) {
      int64_t a0, b0, p0;
      window(g, 0, o0, &a0, &b0, &p0);
      for (int64_t o1 = 0; o1 < g->w.out[1]; o1++) {
        int64_t a1, b1, p1;
        window(g, 1, o1, &a1, &b1, &p1);
        for (int64_t o2 = 0; o2 < g->w.out[2]; o2++) {
          int64_t a2, b2, p2;
          window(g, 2, o2, &a2, &b2, &p2);
          float sum = 0.0f;
          if (g->order == ORDER_VECTOR) {
            /* per input column: the window's rows (planes, then rows), then across the columns */
            for (int64_t t2 = a2; t2 < b2; t2++) {
              const int64_t i2 = o2 * g->w.s[2] - g->w.pb[2] + t2;
              float col = 0.0f;
              for (int64_t t0 = a0; t0 < b0; t0++) {
                const int64_t i0 = o0 * g->w.s[0] - g->w.pb[0] + t0;
                for (int64_t t1 = a1; t1 < b1; t1++) {
                  const int64_t i1 = o1 * g->w.s[1] - g->w.pb[1] + t1;
                  col += xc[(size_t)((i0 * g->w.in[1] + i1) * g->w.in[2] + i2) * cs];
                }
              }
              sum += col;
            }
          } else {
            for (int64_t t0 = a0; t0 < b0; t0++) {
              const int64_t i0 = o0 * g->w.s[0] - g->w.pb[0] + t0 * g->w.d[0];
              for (int64_t t1 = a1; t1 < b1; t1++) {
                const int64_t i1 = o1 * g->w.s[1] - g->w.pb[1] + t1 * g->w.d[1];
                const float *row = xc + (size_t)((i0 * g->w.in[1] + i1) * g->w.in[2]) * cs;
                for (int64_t t2 = a2; t2 < b2; t2++)
                  sum += row[(size_t)(o2 * g->w.s[2] - g->w.pb[2] + t2 * g->w.d[2]) * cs];
              }
            }
          }
          /* count_include_pad: the taps inside the padded input (the whole kernel: windows reaching
           * past the padding are refused at bind) */
          const int64_t count = g->include_pad ? p0 * p1 * p2 : (b0 - a0) * (b1 - a1) * (b2 - a2);
          yc[yo++ * cs] = count > 0 ? sum / (float)count : 0.0f;
        }
      }
    }
  }
}

static void pool_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  (void)workspace;
  const pool_params *p = params;
  const pool_geom *g = geom;
  const size_t plane = (size_t)op_window_in_plane(&g->w);
  if (p->kind == POOL_MAX || p->kind == POOL_GLOBAL_MAX) {
    maxpool_job jb = {p, g, in[0].data, out[0].data};
    const size_t taps = (size_t)(g->w.k[0] * g->w.k[1] * g->w.k[2]);
    const size_t oplane = (size_t)(g->w.out[0] * g->w.out[1] * g->w.out[2]);
    /* grain: ~3 us of taps. Float taps take ~0.33 ns each on the f32-maxpool kernels (YOLOv8's
     * SPPF 5x5 pools on 10x10 planes of 128 channels, 320K taps: 0.106 ms, which ran alone
     * under the 8-bit grain); 8-bit ones are cheaper (more lanes a vector). */
    const size_t grain = g->dtype == Q8RT_DTYPE_FLOAT32 ? (size_t)1 << 13 : (size_t)1 << 16;
    if (p->nhwc) {
      const size_t rows = g->outer / g->channels * (size_t)(g->w.out[0] * g->w.out[1]);
      op_parallel_items(ctx, rows, (size_t)g->w.out[2] * g->channels * (taps < 64 ? taps : 64), grain, maxpool_nhwc_row,
                        &jb);
      return;
    }
    op_parallel_items(ctx, g->outer, oplane * (taps < 64 ? taps : 64), grain, maxpool_plane, &jb);
    return;
  }
  avgpool_job jb = {p, g, in[0].data, out[0].data};
  /* grain: channels of ~4096 additions */
  if (p->kind == POOL_GLOBAL_AVG || g->order == ORDER_GLOBAL) {
    op_parallel_range(ctx, g->outer, 4096 / (plane + 1) + 1, gavg_range, &jb);
    return;
  }
  const size_t taps = (size_t)(g->w.k[0] * g->w.k[1] * g->w.k[2]);
  const size_t per_c = (size_t)(g->w.out[0] * g->w.out[1] * g->w.out[2]) * (taps < 64 ? taps : 64);
  op_parallel_range(ctx, g->outer, 4096 / (per_c + 1) + 1, avg_range, &jb);
}

static const void *pool_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool,
                             const char **why);

const op_def q8rt_op_maxpool = {.op_type = "MaxPool",
                                .domain = "",
                                .min_opset = 1,
                                .prepare = maxpool_prepare,
                                .infer = pool_infer,
                                .run = pool_run,
                                .nhwc_params = pool_nhwc};
const op_def q8rt_op_averagepool = {.op_type = "AveragePool",
                                    .domain = "",
                                    .min_opset = 1,
                                    .prepare = avgpool_prepare,
                                    .infer = pool_infer,
                                    .run = pool_run,
                                    .nhwc_params = pool_nhwc};
/* GlobalAveragePool and AveragePool read their input channels-last as it comes: each channel's
 * sums keep the NCHW order of its pixels. MaxPool and GlobalMaxPool run their window rows over the channels
 * (maxpool_nhwc_row). */
static const void *pool_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool,
                             const char **why) {
  (void)g, (void)n;
  pool_params *q = q8rt_pool_alloc(pool, sizeof(*q), 16);
  if (q == NULL) return NULL;
  *q = *(const pool_params *)params;
  q->nhwc = 1;
  if (q->kind == POOL_GLOBAL_AVG) *why = q->gavg_name;
  return q;
}

const op_def q8rt_op_globalaveragepool = {.op_type = "GlobalAveragePool",
                                          .domain = "",
                                          .min_opset = 1,
                                          .prepare = gavgpool_prepare,
                                          .infer = pool_infer,
                                          .run = pool_run,
                                          .nhwc_params = pool_nhwc};
const op_def q8rt_op_globalmaxpool = {.op_type = "GlobalMaxPool",
                                      .domain = "",
                                      .min_opset = 1,
                                      .prepare = gmaxpool_prepare,
                                      .infer = pool_infer,
                                      .run = pool_run,
                                      .nhwc_params = pool_nhwc};
