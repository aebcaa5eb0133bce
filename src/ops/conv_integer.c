/* ConvInteger (ai.onnx 10): uint8/int8 x and w, optional zero points (x: one value; w: one value
 * or one per output channel), int32 output
 *   y[n][m][o] = Σ_{c,k} (x[n][c][o·s + k·d − pad] − x_zp) · (w[m][c][k] − w_zp[m])
 * with padded positions contributing 0 (x = x_zp there), exactly as ONNX defines it and ONNX
 * Runtime computes it (integer arithmetic: any exact order gives the same int32). 1-D and 2-D,
 * group, strides, dilations, explicit pads or auto_pad. w and w_zero_point must be constants;
 * x_zero_point may be computed at run time (DynamicQuantizeLinear's output in dynamic models).
 *
 * Fast paths (any backend but reference; the same int32 as the scalar loop, which is the
 * reference backend's route):
 * - GEMM per group on the int32-output qu8-qc8w-gemm kernels, NCHW in and out. Weights are
 *   packed as int8 w8 = w - o (o = 128 for uint8 weights, 0 for int8), which always fits, with
 *   no bias; with d[m] = w_zp[m] - o the accumulator acc = sum_k x*w8 (x in the uint8 domain)
 *   becomes the exact result through
 *     sum_k (x - x_zp)(w - w_zp) = acc - x_zp * sum_k w8[m] - d[m] * (sum_k x - K * x_zp)
 *   (modulo 2^32, as the int32 accumulator), so any x_zp known only at run time and uint8
 *   weights with any zero point stay exact. Rows (output pixels of one image) are gathered
 *   tile by tile into a per-thread im2col buffer in the weights' own (c, ky, kx) order, with
 *   their sums when some d[m] != 0; the GEMM tile [rows][Mg] is written back transposed to NCHW
 *   with the correction. Padded taps hold x_zp: they add (x_zp - x_zp) * w = 0.
 * - Depthwise (one input and one output channel per group): a direct loop per channel plane,
 *   output row by output row, each tap over the range of columns it covers.
 * Tasks are (image, group, tile) or (image, channel): the integer sums do not depend on how
 * the pool hands them out. */
#include <stdatomic.h>
#include <string.h>

#include "conv_paths.h"
#include "op_window.h"
#include "q8rt-isa.h"
#include "qlinear_common.h"
#include "qu8-vmacc-i32/qu8-vmacc-i32.h"

enum ci_path { CI_PATH_SCALAR = 0, CI_PATH_GEMM, CI_PATH_DW };

typedef struct ci_params {
  q8rt_dtype x_type, w_type;
  int32_t x_zp;
  int x_zp_dynamic; /* x_zero_point is computed at run time (DynamicQuantizeLinear) */
  int32_t *w_zp;    /* [M] */
  const void *w;    /* constant weights [M][C/g][kh][kw] */
  int nsp;          /* 1 or 2 */
  int64_t M, Cg, group;
  op_window win; /* 2-D view: a 1-D convolution has kernel, stride and dilation 1 on axis 1 */
  enum ci_path path;
  gemm_i32 gemm; /* GEMM path: weights packed per group (conv_paths.h) */
  /* depthwise path */
  int32_t *wdw;                           /* [M][taps] w - w_zp */
  q8rt_x8_transpose_ukernel_fn transpose; /* pointwise im2col: [C/g][pixels] -> [pixels][C/g] */
  q8rt_qu8_vmacc_i32_ukernel_fn vmacc;
} ci_params;

typedef struct ci_geom {
  size_t n, c;
  int64_t in[2], out[2], pb[2];
  size_t tile_rows, tiles; /* GEMM: output pixels per tile, tiles per image and group */
} ci_geom;

static size_t ci_round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

/* The fast routes need the whole weight tensor rearranged once, here. */
static q8rt_status ci_prepare_fast(op_prepare_ctx *ctx, ci_params *p, q8rt_error *err) {
  if (ctx->backend == Q8RT_BACKEND_REFERENCE) return Q8RT_OK;
  const int64_t taps = p->win.kernel[0] * p->win.kernel[1];
  const int64_t Mg = p->M / p->group;
  if (p->M == 0) return Q8RT_OK;
  if (p->Cg == 1 && Mg == 1) {
    p->wdw = q8rt_pool_array(ctx->pool, (size_t)(p->M * taps), sizeof(int32_t));
    if (p->wdw == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
    for (int64_t m = 0; m < p->M; m++) {
      for (int64_t t = 0; t < taps; t++) {
        p->wdw[m * taps + t] = qk_load8(p->w, p->w_type, (size_t)(m * taps + t)) - p->w_zp[m];
      }
    }
    p->path = CI_PATH_DW;
    p->vmacc = q8rt_qu8_vmacc_i32_ukernel__scalar;
    ctx->kernel = "qu8_vmacc_i32_ukernel__scalar";
    static const struct {
      uint32_t isa;
      q8rt_qu8_vmacc_i32_ukernel_fn fn;
      const char *name;
    } vm[] = {
#define Q8RT_QU8_VMACC_I32_UKERNEL(isa, fn) {isa, fn, #fn},
#include "qu8-vmacc-i32/qu8-vmacc-i32.inc"
#undef Q8RT_QU8_VMACC_I32_UKERNEL
        {0, NULL, NULL},
    };
    for (size_t i = 0; vm[i].fn != NULL; i++) {
      if (ctx->isa & vm[i].isa) {
        p->vmacc = vm[i].fn;
        ctx->kernel = vm[i].name + 5; /* drop the "q8rt_" prefix */
        break;
      }
    }
    ctx->reason = "depthwise: per channel plane, each tap over the output columns it covers, exact int32";
    return Q8RT_OK;
  }
  const size_t K = (size_t)(p->Cg * taps);
  q8rt_status st = gemm_i32_prepare((size_t)p->group, (size_t)Mg, K, p->w, p->w_type, K, 1, p->w_zp, ctx->backend,
                                    ctx->isa, ctx->pool, &p->gemm, err);
  if (st != Q8RT_OK || p->gemm.fn == NULL) return st;
  p->path = CI_PATH_GEMM;
  p->transpose = q8rt_x8_transpose_ukernel__scalar;
#define Q8RT_X8_TRANSPOSE_UKERNEL(tisa, fn) \
  if (p->transpose == q8rt_x8_transpose_ukernel__scalar && (ctx->isa & (tisa))) p->transpose = fn;
#include "x8-transpose/x8-transpose.inc"
#undef Q8RT_X8_TRANSPOSE_UKERNEL
  ctx->kernel = p->gemm.kernel;
  ctx->reason = p->gemm.need_rowsum ? "im2col tiles (NCHW) + int32 GEMM; weight zero points corrected with row sums"
                                    : "im2col tiles (NCHW) + int32 GEMM; zero point folded after the GEMM";
  return Q8RT_OK;
}

static q8rt_status ci_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  if (n->n_inputs < 2 || n->n_inputs > 4 || n->n_outputs != 1 || ir_node_input(g, n, 0) == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 2 to 4 inputs and 1 output", n->op_type,
                     n->name);
  }
  ci_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  q8rt_status st;
  const ir_tensor *w;
  if ((st = op_require_constant(g, n, 1, "w", &w, err)) != Q8RT_OK) return st;
  if (!q8rt_dtype_is_8bit(w->dtype)) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': w is %s (uint8 or int8 expected)", n->op_type, n->name,
                     q8rt_onnx_type_name(w->dtype));
  }
  if (w->rank != 3 && w->rank != 4) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': w has rank %d (1-D and 2-D convolutions only)",
                     n->op_type, n->name, w->rank);
  }
  p->w = w->data;
  p->w_type = w->dtype;
  p->nsp = w->rank - 2;
  p->M = w->dims[0];
  p->Cg = w->dims[1];
  q8rt_dtype tx = qk_input_type(g, n, 0);
  if (tx != Q8RT_DTYPE_UNDEFINED && !q8rt_dtype_is_8bit(tx)) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': x is %s (uint8 or int8 expected)", n->op_type, n->name,
                     q8rt_onnx_type_name(tx));
  }
  const ir_value *xzv = ir_node_input(g, n, 2);
  if (xzv != NULL && xzv->constant == NULL) {
    /* A run-time zero point (dynamic quantization): one element of x's type, read by run. */
    if (xzv->dtype != Q8RT_DTYPE_UNDEFINED &&
        (!q8rt_dtype_is_8bit(xzv->dtype) || (tx != Q8RT_DTYPE_UNDEFINED && xzv->dtype != tx))) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': x_zero_point is %s, x is %s", n->op_type, n->name,
                       q8rt_onnx_type_name(xzv->dtype), q8rt_onnx_type_name(tx));
    }
    if (tx == Q8RT_DTYPE_UNDEFINED) tx = xzv->dtype;
    p->x_zp_dynamic = 1;
  } else if ((st = qk_zero_point(g, n, 2, "x_zero_point", tx, &p->x_zp, &tx, err)) != Q8RT_OK) {
    return st;
  }
  if (tx == Q8RT_DTYPE_UNDEFINED) tx = Q8RT_DTYPE_UINT8;
  p->x_type = tx;
  p->w_zp = q8rt_pool_array(ctx->pool, (size_t)(p->M > 0 ? p->M : 1), sizeof(int32_t));
  if (p->w_zp == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if (ir_node_input(g, n, 3) != NULL) {
    const ir_tensor *wz;
    if ((st = op_require_constant(g, n, 3, "w_zero_point", &wz, err)) != Q8RT_OK) return st;
    if (wz->dtype != w->dtype) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': w_zero_point is %s, w is %s", n->op_type, n->name,
                       q8rt_onnx_type_name(wz->dtype), q8rt_onnx_type_name(w->dtype));
    }
    if (wz->count != 1 && wz->count != p->M) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': w_zero_point has %lld values (1 or %lld expected)",
                       n->op_type, n->name, (long long)wz->count, (long long)p->M);
    }
    for (int64_t m = 0; m < p->M; m++) p->w_zp[m] = qk_load8(wz->data, wz->dtype, wz->count == 1 ? 0 : (size_t)m);
  }
  if ((st = ir_attr_int(n, "group", 1, &p->group, err)) != Q8RT_OK) return st;
  if (p->group < 1 || p->M % p->group != 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': group %lld does not divide %lld output channels",
                     n->op_type, n->name, (long long)p->group, (long long)p->M);
  }
  if ((st = op_window_parse(n, p->nsp, w->dims + 2, 1 << 24, OP_WINDOW_NONEMPTY, &p->win, err)) != Q8RT_OK) return st;
  ctx->kernel = "conv_integer__scalar";
  ctx->reason = "exact int32 accumulation";
  if ((st = ci_prepare_fast(ctx, p, err)) != Q8RT_OK) return st;
  *out = p;
  return Q8RT_OK;
}

static q8rt_status ci_infer(const void *params, const ir_node *n, const op_shape *in, op_shape *out, int concrete,
                            void *geom, q8rt_error *err) {
  const ci_params *p = params;
  const op_shape *x = &in[0];
  if (x->dtype != Q8RT_DTYPE_UNDEFINED && x->dtype != p->x_type) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': x is %s, expected %s", n->op_type, n->name,
                     q8rt_onnx_type_name(x->dtype), q8rt_onnx_type_name(p->x_type));
  }
  out->dtype = Q8RT_DTYPE_INT32;
  out->rank = -1;
  if (p->x_zp_dynamic && in[2].rank >= 0 && op_shape_count(&in[2]) != 1 && concrete) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': x_zero_point must have one element", n->op_type, n->name);
  }
  if (x->rank < 0) return Q8RT_OK;
  if (x->rank != p->nsp + 2) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': x has rank %d, w has rank %d", n->op_type, n->name, x->rank,
                     p->nsp + 2);
  }
  if (x->dims[1] >= 0 && x->dims[1] != p->Cg * p->group) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': x has %lld channels, w expects %lld", n->op_type, n->name,
                     (long long)x->dims[1], (long long)(p->Cg * p->group));
  }
  out->rank = x->rank;
  out->dims[0] = x->dims[0];
  out->dims[1] = p->M;
  int64_t o[2] = {1, 1}, pb[2] = {0, 0};
  for (int i = 0; i < p->nsp; i++) {
    q8rt_status st = op_window_output(&p->win, n, i, x->dims[2 + i], &out->dims[2 + i], &pb[i], NULL, err);
    if (st != Q8RT_OK) return st;
    o[i] = out->dims[2 + i];
  }
  if (!concrete) return Q8RT_OK;
  ci_geom *gm = geom;
  gm->n = (size_t)x->dims[0];
  gm->c = (size_t)x->dims[1];
  gm->in[0] = x->dims[2];
  gm->in[1] = p->nsp > 1 ? x->dims[3] : 1;
  gm->out[0] = o[0];
  gm->out[1] = o[1];
  gm->pb[0] = pb[0];
  gm->pb[1] = pb[1];
  if (p->path == CI_PATH_GEMM) {
    const size_t pixels = (size_t)(o[0] * o[1]);
    /* ~24 KiB of im2col rows per tile, a multiple of MR */
    size_t t = 24576 / (p->gemm.a_stride * p->gemm.mr);
    if (t < 1) t = 1;
    gm->tile_rows = t * p->gemm.mr;
    gm->tiles = pixels == 0 ? 0 : (pixels + gm->tile_rows - 1) / gm->tile_rows;
  }
  return Q8RT_OK;
}

#define CI_MAX_SLOTS 64

/* One thread's buffers: the im2col tile, the GEMM's int32 tile, row sums, per-channel terms. */
static size_t ci_slot_bytes(const ci_params *p, const ci_geom *gm) {
  const size_t mg = (size_t)(p->M / p->group);
  if (p->path == CI_PATH_GEMM) {
    return ci_round_up(gm->tile_rows * p->gemm.a_stride, 64) + ci_round_up(gm->tile_rows * mg * sizeof(int32_t), 64) +
           ci_round_up(gm->tile_rows * sizeof(uint32_t), 64) + ci_round_up(mg * sizeof(uint32_t), 64);
  }
  if (p->path == CI_PATH_DW) return ci_round_up((size_t)gm->out[1] * sizeof(uint32_t), 64);
  return 0;
}

static size_t ci_workspace(const void *params, const void *geom, size_t threads) {
  const size_t slots = threads < 1 ? 1 : threads < CI_MAX_SLOTS ? threads : CI_MAX_SLOTS;
  return ci_slot_bytes(params, geom) * slots;
}

typedef struct ci_run_ctx {
  const ci_params *p;
  const ci_geom *gm;
  const uint8_t *x;
  int32_t *y;
  uint8_t *workspace;
  size_t slot_bytes, slots;
  int32_t xzp;    /* as the type's value */
  uint32_t xz_u8; /* in the uint8 domain the GEMM computes in */
  uint8_t xz_raw, x_xor;
  atomic_int busy[CI_MAX_SLOTS];
} ci_run_ctx;

static uint8_t *ci_claim(ci_run_ctx *c, size_t *slot) {
  size_t s = 0;
  for (;;) {
    if (atomic_exchange_explicit(&c->busy[s], 1, memory_order_acquire) == 0) break;
    s = s + 1 < c->slots ? s + 1 : 0;
  }
  *slot = s;
  return c->workspace + s * c->slot_bytes;
}

static void ci_release(ci_run_ctx *c, size_t slot) { atomic_store_explicit(&c->busy[slot], 0, memory_order_release); }

/* Task (image b, group g, tile): im2col, GEMM, corrected transposed store. */
static void ci_gemm_task(void *context, size_t task) {
  ci_run_ctx *c = context;
  const ci_params *p = c->p;
  const ci_geom *gm = c->gm;
  const size_t G = (size_t)p->group, mg = (size_t)(p->M / p->group), cg = (size_t)p->Cg;
  const size_t tile = task % gm->tiles, g = (task / gm->tiles) % G, b = task / gm->tiles / G;
  const size_t H = (size_t)gm->in[0], W = (size_t)gm->in[1], OW = (size_t)gm->out[1];
  const size_t pixels = (size_t)gm->out[0] * OW;
  const size_t KH = (size_t)p->win.kernel[0], KW = (size_t)p->win.kernel[1];
  const size_t sh = (size_t)p->win.stride[0], sw = (size_t)p->win.stride[1];
  const size_t dh = (size_t)p->win.dilation[0], dw = (size_t)p->win.dilation[1];
  const size_t pt = (size_t)gm->pb[0], pl = (size_t)gm->pb[1];
  const size_t p0 = tile * gm->tile_rows, rows = pixels - p0 < gm->tile_rows ? pixels - p0 : gm->tile_rows;
  size_t slot;
  uint8_t *ws = ci_claim(c, &slot);
  uint8_t *a = ws;
  int32_t *acc = (int32_t *)(ws + ci_round_up(gm->tile_rows * p->gemm.a_stride, 64));
  uint32_t *rs = (uint32_t *)((uint8_t *)acc + ci_round_up(gm->tile_rows * mg * sizeof(int32_t), 64));
  uint32_t *c0 = (uint32_t *)((uint8_t *)rs + ci_round_up(gm->tile_rows * sizeof(uint32_t), 64));
  const uint8_t *xb = c->x + (b * gm->c + g * cg) * H * W;
  const size_t K = p->gemm.k;
  if (KH == 1 && KW == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && gm->out[0] == gm->in[0] && OW == W) {
    /* pointwise: row r is the pixel's channels, read plane by plane */
    p->transpose(cg, rows, xb + p0, H * W, a, p->gemm.a_stride);
  } else {
    /* k outer, rows inner: each (c, ky, kx) reads its plane along the tile's pixels (mostly
     * consecutive bytes) instead of every row hopping across all the planes */
    size_t k = 0;
    for (size_t ch = 0; ch < cg; ch++) {
      const uint8_t *plane = xb + ch * H * W;
      for (size_t ky = 0; ky < KH; ky++) {
        for (size_t kx = 0; kx < KW; kx++, k++) {
          uint8_t *dst = a + k;
          const size_t as = p->gemm.a_stride;
          size_t oy = p0 / OW, ox = p0 % OW;
          /* segments of one output row: one bounds check per segment, then a strided copy */
          for (size_t r = 0; r < rows;) {
            const size_t seg = OW - ox < rows - r ? OW - ox : rows - r;
            const size_t iy_p = oy * sh + ky * dh;
            size_t lo = seg, hi = seg; /* columns [lo, hi) of the segment read the plane */
            if (iy_p >= pt && iy_p - pt < H) {
              const int64_t off = (int64_t)(kx * dw) - (int64_t)pl; /* ix = (ox + j) * sw + off */
              const int64_t base = (int64_t)(ox * sw) + off;
              int64_t l = base >= 0 ? 0 : (-base + (int64_t)sw - 1) / (int64_t)sw;
              int64_t h = (int64_t)W - base <= 0 ? 0 : ((int64_t)W - base + (int64_t)sw - 1) / (int64_t)sw;
              if (h > (int64_t)seg) h = (int64_t)seg;
              if (l < h) {
                lo = (size_t)l;
                hi = (size_t)h;
              }
            }
            for (size_t j = 0; j < lo; j++) dst[j * as] = c->xz_raw;
            if (lo < hi) {
              /* from column lo on: never a pointer before the row */
              const uint8_t *src =
                  plane + (iy_p - pt) * W + (size_t)((int64_t)((ox + lo) * sw) + (int64_t)(kx * dw) - (int64_t)pl);
              for (size_t j = lo; j < hi; j++) dst[j * as] = src[(j - lo) * sw];
            }
            for (size_t j = hi; j < seg; j++) dst[j * as] = c->xz_raw;
            dst += seg * as;
            r += seg;
            ox = 0;
            oy++;
          }
        }
      }
    }
  }
  for (size_t r = 0; r < rows; r++) memset(a + r * p->gemm.a_stride + K, 0, p->gemm.a_stride - K);
  if (p->gemm.need_rowsum) gemm_i32_row_sums(&p->gemm, a, p->gemm.a_stride, rows, c->x_xor, c->xz_u8, rs);
  const size_t m0 = g * mg;
  for (size_t m = 0; m < mg; m++) c0[m] = 0u - c->xz_u8 * p->gemm.wsum[m0 + m];
  gemm_i32_rows(&p->gemm, g, a, p->gemm.a_stride, rows, acc, mg * sizeof(int32_t), c->x_xor);
  for (size_t m = 0; m < mg; m++) {
    int32_t *yr = c->y + (b * (size_t)p->M + m0 + m) * pixels + p0;
    const uint32_t cm = c0[m], dm = p->gemm.d[m0 + m];
    if (p->gemm.need_rowsum) {
      for (size_t r = 0; r < rows; r++) yr[r] = (int32_t)((uint32_t)acc[r * mg + m] + cm - dm * rs[r]);
    } else {
      for (size_t r = 0; r < rows; r++) yr[r] = (int32_t)((uint32_t)acc[r * mg + m] + cm);
    }
  }
  ci_release(c, slot);
}

/* Task (image b, channel m) of a depthwise convolution. */
static void ci_dw_task(void *context, size_t task) {
  ci_run_ctx *c = context;
  const ci_params *p = c->p;
  const ci_geom *gm = c->gm;
  const size_t m = task % (size_t)p->M, b = task / (size_t)p->M;
  const int64_t H = gm->in[0], W = gm->in[1], OH = gm->out[0], OW = gm->out[1];
  const int64_t KH = p->win.kernel[0], KW = p->win.kernel[1];
  const int64_t sh = p->win.stride[0], sw = p->win.stride[1], dh = p->win.dilation[0], dw = p->win.dilation[1];
  const uint8_t *plane = c->x + (b * gm->c + m) * (size_t)(H * W);
  const int32_t *wv = p->wdw + (int64_t)m * KH * KW;
  int32_t *y = c->y + (b * (size_t)p->M + m) * (size_t)(OH * OW);
  size_t slot;
  uint32_t *acc = (uint32_t *)ci_claim(c, &slot);
  for (int64_t oy = 0; oy < OH; oy++) {
    for (int64_t ox = 0; ox < OW; ox++) acc[ox] = 0;
    for (int64_t ky = 0; ky < KH; ky++) {
      const int64_t iy = oy * sh + ky * dh - gm->pb[0];
      if (iy < 0 || iy >= H) continue;
      const uint8_t *row = plane + iy * W;
      for (int64_t kx = 0; kx < KW; kx++) {
        const int64_t off = kx * dw - gm->pb[1]; /* ix = ox * sw + off */
        int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
        int64_t hi = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
        if (hi > OW) hi = OW;
        if (lo >= hi) continue;
        p->vmacc((size_t)(hi - lo), row + lo * sw + off, (size_t)sw, c->x_xor, (int32_t)c->xz_u8, wv[ky * KW + kx],
                 acc + lo);
      }
    }
    memcpy(y + oy * OW, acc, (size_t)OW * sizeof(int32_t));
  }
  ci_release(c, slot);
}

static void ci_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                   const op_exec_ctx *ctx) {
  const ci_params *p = params;
  const ci_geom *gm = geom;
  if (p->path != CI_PATH_SCALAR) {
    ci_run_ctx c;
    c.p = p;
    c.gm = gm;
    c.x = in[0].data;
    c.y = out[0].data;
    c.workspace = workspace;
    c.slot_bytes = ci_slot_bytes(p, gm);
    c.slots = ctx->threads < 1 ? 1 : ctx->threads < CI_MAX_SLOTS ? ctx->threads : CI_MAX_SLOTS;
    for (size_t i = 0; i < c.slots; i++) atomic_init(&c.busy[i], 0);
    c.xzp = p->x_zp_dynamic ? qk_load8(in[2].data, p->x_type, 0) : p->x_zp;
    const int x_signed = p->x_type == Q8RT_DTYPE_INT8;
    c.xz_raw = (uint8_t)c.xzp;
    c.x_xor = x_signed ? 0x80 : 0;
    c.xz_u8 = (uint32_t)(x_signed ? c.xzp + 128 : c.xzp);
    if (p->path == CI_PATH_GEMM) {
      q8rt_parallel_for(ctx->pool, gm->n * (size_t)p->group * gm->tiles, ci_gemm_task, &c);
    } else {
      q8rt_parallel_for(ctx->pool, gm->n * (size_t)p->M, ci_dw_task, &c);
    }
    return;
  }
  const int64_t H = gm->in[0], W = gm->in[1], OH = gm->out[0], OW = gm->out[1];
  const int64_t KH = p->win.kernel[0], KW = p->win.kernel[1], Mg = p->M / p->group;
  const int32_t xzp = p->x_zp_dynamic ? qk_load8(in[2].data, p->x_type, 0) : p->x_zp;
  int32_t *Y = out[0].data;
  for (size_t b = 0; b < gm->n; b++) {
    for (int64_t m = 0; m < p->M; m++) {
      const int64_t gi = m / Mg;
      const int32_t wz = p->w_zp[m];
      for (int64_t oh = 0; oh < OH; oh++) {
        for (int64_t ow = 0; ow < OW; ow++) {
          uint32_t acc = 0;
          for (int64_t c = 0; c < p->Cg; c++) {
            const size_t xc = (b * gm->c + (size_t)(gi * p->Cg + c)) * (size_t)(H * W);
            const size_t wc = (size_t)((m * p->Cg + c) * KH * KW);
            for (int64_t kh = 0; kh < KH; kh++) {
              const int64_t ih = oh * p->win.stride[0] + kh * p->win.dilation[0] - gm->pb[0];
              if (ih < 0 || ih >= H) continue;
              for (int64_t kw = 0; kw < KW; kw++) {
                const int64_t iw = ow * p->win.stride[1] + kw * p->win.dilation[1] - gm->pb[1];
                if (iw < 0 || iw >= W) continue;
                const int32_t xv = qk_load8(in[0].data, p->x_type, xc + (size_t)(ih * W + iw)) - xzp;
                const int32_t wv = qk_load8(p->w, p->w_type, wc + (size_t)(kh * KW + kw)) - wz;
                acc += (uint32_t)(xv * wv);
              }
            }
          }
          Y[((b * (size_t)p->M + (size_t)m) * (size_t)OH + (size_t)oh) * (size_t)OW + (size_t)ow] = (int32_t)acc;
        }
      }
    }
  }
}

const op_def q8rt_op_conv_integer = {
    .op_type = "ConvInteger",
    .domain = "",
    .min_opset = 10,
    .prepare = ci_prepare,
    .infer = ci_infer,
    .workspace = ci_workspace,
    .run = ci_run,
};
