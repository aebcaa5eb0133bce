/* ConvInteger (ai.onnx 10): uint8/int8 x and w, optional zero points (x: one value; w: one value
 * or one per output channel), int32 output
 *   y[n][m][o] = Σ_{c,k} (x[n][c][o·s + k·d − pad] − x_zp) · (w[m][c][k] − w_zp[m])
 * with padded positions contributing 0 (x = x_zp there), exactly as ONNX defines it and ONNX
 * Runtime computes it (integer arithmetic: any exact order gives the same int32). 1-D and 2-D,
 * group, strides, dilations, explicit pads or auto_pad. w and w_zero_point must be constants;
 * x_zero_point may be computed at run time (DynamicQuantizeLinear's output in dynamic models).
 *
 * ConvIntegerToFloat (domain q8rt): what src/passes/integer_fuse.c makes of ONNX Runtime's
 * dynamic quantization pattern ConvInteger -> Cast(float) -> Mul(scale) [-> Add(bias)]: inputs
 * x, w, x_zero_point, w_zero_point, scale (float32, one element, constant or computed at run
 * time), bias (optional constant float32, one value or one per output channel), int32 bias
 * (optional, constant or computed at run time, one value or one per output channel: an int32 Add
 * between ConvInteger and the Cast); float32 output
 *   y = (float)(acc [+ ibias[m]]) * scale [+ bias[m]]
 * in those operations and that order (s32-f32-vcvt; the int32 sum wraps as the Add's), so the
 * bytes equal the nodes'. src/passes/float_fuse.c may then give it an output stage (attributes
 * q8rt_stage / q8rt_stage_bounds, its constants from input 7 on; op_float_stage.h): the float
 * elementwise nodes after it (the hardswish a dynamically quantized PicoDet spells Add -> Clip ->
 * Mul -> Div, a batch norm's Mul/Add, SiLU, ...) run on each output row it has just written.
 *
 * Fast paths (any backend but reference; the same int32 as the scalar loop, which is the
 * reference backend's route):
 * - GEMM per group and tile of output pixels on the int32-output qu8-qc8w-gemm kernels, NCHW in
 *   and out, the weights as A and the activations as B: a tile's im2col rows [K][pixels]
 *   (consecutive bytes of each plane row; a 1x1 stride-1 convolution reads the planes directly)
 *   are packed by x8-packb, and each MR-row block of weights writes MR output rows (NCHW) in one
 *   kernel call. With A = w8 + 128 (w8 = w − o, o = 128 for uint8 weights, 0 for int8: always
 *   int8; d[m] = w_zp[m] − o), B = u − 128 (u = x in the uint8 domain), X[p] = Σ_k u and
 *   W[m] = Σ_k w8 the packer's bias' 128·128·K − (128 + d0)·X[p] (d0: the group's first d)
 *   turns the kernel's accumulator into the exact result by
 *     Σ_k (u − x_zp)(w8 − d[m]) = acc + (128 − x_zp)·W[m] + K·x_zp·d[m] − (d[m] − d0)·X[p]
 *   (modulo 2^32, as the int32 accumulator): any x_zp known only at run time, uint8 or int8
 *   weights with any zero points. s32-f32-vcvt applies it row by row (and the fused scale/bias).
 *   Padded taps hold x_zp: they add (x_zp − x_zp)·w = 0.
 * - Depthwise (one input and one output channel per group): a direct loop per channel plane,
 *   output row by output row, each tap over the range of columns it covers.
 * Tasks are (image, group, tile) or (image, channel): the integer sums do not depend on how
 * the pool hands them out. */
#include <stdatomic.h>
#include <string.h>

#include "conv_paths.h"
#include "op_float_stage.h"
#include "op_window.h"
#include "q8rt-isa.h"
#include "qlinear_common.h"
#include "qu8-dwconv2d-chw/qu8-dwconv2d-chw.h"
#include "qu8-vmacc-i32/qu8-vmacc-i32.h"
#include "s32-f32-vcvt/s32-f32-vcvt.h"
#include "x8-packb/x8-packb.h"

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
  /* ConvIntegerToFloat: float output through the scale (and bias) */
  int to_float;
  int scale_dynamic; /* input 4 is computed at run time */
  float scale;
  const float *bias;          /* [M], or NULL */
  int ibias;                  /* input 6 given: an int32 bias, [M] or one value */
  const int32_t *ibias_const; /* [M] when that input is a constant, else NULL (read at run) */
  op_fstage st;               /* the float output stage, if any */
  enum ci_path path;
  q8rt_s32_f32_vcvt_ukernel_fn vcvt;
  /* GEMM path */
  q8rt_qu8_gemm_ukernel_fn gemm;
  q8rt_x8_packb_ukernel_fn packb;
  size_t mr, nr, k, a_stride;
  uint8_t *wa;        /* [M][a_stride]: w8 + 128, zero past K */
  uint32_t *wsum, *d; /* [M] */
  int need_colsum;    /* some d[m] differs from its group's first */
  /* depthwise path */
  int32_t *wdw;      /* [M][taps] w - w_zp */
  uint32_t *wdw_sum; /* [M] sum of those */
  q8rt_qu8_dwconv2d_chw_ukernel_fn dwrow;
  q8rt_qu8_vmacc_i32_ukernel_fn vmacc; /* planes too wide for a padded band of rows */
} ci_params;

typedef struct ci_geom {
  size_t n, c;
  int64_t in[2], out[2], pb[2];
  size_t tile, tiles;     /* GEMM: output pixels per tile (a multiple of NR), tiles per image and group */
  size_t mblock, mblocks; /* GEMM: output channels per task (a multiple of MR), blocks per group */
  int direct;             /* GEMM: 1x1, stride 1, no padding: B rows are the input planes */
  size_t pw, band;        /* depthwise: padded row width, output rows per padded band (0: vmacc route) */
  /* depthwise: the window as the route runs it: the node's, or for a plane of one column read by a
   * kernel one column wide (1-D convolutions run as H x 1: FSMN's [20, 1] memory blocks) the same
   * convolution along one row (in/out/pb swapped too), so that a kernel call covers every output
   * of the plane instead of one */
  int64_t k[2], s[2], d[2];
} ci_geom;

static size_t ci_round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

/* The fast routes need the whole weight tensor rearranged once, here. */
static q8rt_status ci_prepare_fast(op_prepare_ctx *ctx, ci_params *p, q8rt_error *err) {
  p->vcvt = op_s32_f32_vcvt_pick(ctx);
  if (ctx->backend == Q8RT_BACKEND_REFERENCE) return Q8RT_OK;
  const int64_t taps = p->win.kernel[0] * p->win.kernel[1];
  const int64_t Mg = p->M / p->group;
  if (p->M == 0) return Q8RT_OK;
  if (p->Cg == 1 && Mg == 1) {
    p->wdw = q8rt_pool_array(ctx->pool, (size_t)(p->M * taps), sizeof(int32_t));
    p->wdw_sum = q8rt_pool_array(ctx->pool, (size_t)p->M, sizeof(uint32_t));
    if (p->wdw == NULL || p->wdw_sum == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
    for (int64_t m = 0; m < p->M; m++) {
      uint32_t sum = 0;
      for (int64_t t = 0; t < taps; t++) {
        p->wdw[m * taps + t] = qk_load8(p->w, p->w_type, (size_t)(m * taps + t)) - p->w_zp[m];
        sum += (uint32_t)p->wdw[m * taps + t];
      }
      p->wdw_sum[m] = sum;
    }
    p->path = CI_PATH_DW;
    p->vmacc = q8rt_qu8_vmacc_i32_ukernel__scalar;
#define Q8RT_QU8_VMACC_I32_UKERNEL(visa, fn) \
  if (p->vmacc == q8rt_qu8_vmacc_i32_ukernel__scalar && op_isa_usable(visa, ctx->isa, ctx->backend)) p->vmacc = fn;
#include "qu8-vmacc-i32/qu8-vmacc-i32.inc"
#undef Q8RT_QU8_VMACC_I32_UKERNEL
    p->dwrow = q8rt_qu8_dwconv2d_chw_i32_ukernel__scalar;
    ctx->kernel = "qu8_dwconv2d_chw_i32_ukernel__scalar";
    static const struct {
      uint32_t isa;
      q8rt_qu8_dwconv2d_chw_ukernel_fn fn;
      const char *name;
    } vm[] = {
#define Q8RT_QU8_DWCONV2D_CHW_UKERNEL(isa, fn) {isa, fn, #fn},
#include "qu8-dwconv2d-chw/qu8-dwconv2d-chw.inc"
#undef Q8RT_QU8_DWCONV2D_CHW_UKERNEL
        {0, NULL, NULL},
    };
    for (size_t i = 0; vm[i].fn != NULL; i++) {
      if (op_isa_usable(vm[i].isa, ctx->isa, ctx->backend)) {
        p->dwrow = vm[i].fn;
        ctx->kernel = vm[i].name + 5; /* drop the "q8rt_" prefix */
        break;
      }
    }
    ctx->reason =
        "depthwise: per channel plane, padded bands of rows, all taps of an output row in registers, exact int32";
    return Q8RT_OK;
  }
  const size_t K = (size_t)(p->Cg * taps);
  gemm_i32 pick;
  gemm_i32_pick((size_t)Mg, K, ctx->backend, ctx->isa, &pick);
  if (pick.fn == NULL) return Q8RT_OK;
  const size_t M = (size_t)p->M, as = ci_round_up(K, 4);
  if (M > SIZE_MAX / as)
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "%s node '%s': weights too large", ctx->node->op_type,
                     ctx->node->name);
  p->wa = q8rt_pool_alloc(ctx->pool, M * as, 64);
  p->wsum = q8rt_pool_array(ctx->pool, M, sizeof(uint32_t));
  p->d = q8rt_pool_array(ctx->pool, M, sizeof(uint32_t));
  if (p->wa == NULL || p->wsum == NULL || p->d == NULL)
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  const int o = p->w_type == Q8RT_DTYPE_UINT8 ? 128 : 0;
  p->need_colsum = 0;
  for (size_t m = 0; m < M; m++) {
    uint32_t sum = 0;
    for (size_t k = 0; k < as; k++) {
      const int32_t w8 = k < K ? qk_load8(p->w, p->w_type, m * K + k) - o : 0;
      p->wa[m * as + k] = k < K ? (uint8_t)(w8 + 128) : 0;
      sum += (uint32_t)w8;
    }
    p->wsum[m] = sum;
    p->d[m] = (uint32_t)(p->w_zp[m] - o);
    if (p->d[m] != p->d[m - m % (size_t)Mg]) p->need_colsum = 1;
  }
  p->gemm = pick.fn;
  p->mr = pick.mr;
  p->nr = pick.nr;
  p->k = K;
  p->a_stride = as;
  p->packb = q8rt_x8_packb_ukernel_c4__scalar;
#define Q8RT_X8_PACKB_UKERNEL(pisa, fn) \
  if (p->packb == q8rt_x8_packb_ukernel_c4__scalar && op_isa_usable(pisa, ctx->isa, ctx->backend)) p->packb = fn;
#include "x8-packb/x8-packb.inc"
#undef Q8RT_X8_PACKB_UKERNEL
  p->path = CI_PATH_GEMM;
  ctx->kernel = pick.kernel;
  ctx->reason =
      "NCHW: im2col rows [K][pixels] packed as B (x8-packb), weights as A, output rows written in place; "
      "zero points corrected per row (s32-f32-vcvt)";
  return Q8RT_OK;
}

static q8rt_status ci_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  const int to_float = strcmp(n->domain, "q8rt") == 0;
  const int staged = to_float && ir_node_attr(n, "q8rt_stage") != NULL; /* stage constants from input 7 on */
  if ((to_float ? n->n_inputs < 5 || n->n_inputs > (staged ? 7 + OP_FSTAGE_MAX : 7)
                : n->n_inputs < 2 || n->n_inputs > 4) ||
      n->n_outputs != 1 || ir_node_input(g, n, 0) == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects %s inputs and 1 output", n->op_type, n->name,
                     !to_float ? "2 to 4"
                     : staged  ? "5 to 15"
                               : "5 to 7");
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
  if (to_float) {
    p->to_float = 1;
    if ((st = op_to_float_scale(g, n, &p->scale, &p->scale_dynamic, err)) != Q8RT_OK) return st;
    if (ir_node_input(g, n, 5) != NULL) {
      const ir_tensor *b;
      if ((st = op_require_constant(g, n, 5, "bias", &b, err)) != Q8RT_OK) return st;
      if (b->dtype != Q8RT_DTYPE_FLOAT32 || (b->count != 1 && b->count != p->M)) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': bias must be float32 with 1 or %lld values",
                         n->op_type, n->name, (long long)p->M);
      }
      float *bias = q8rt_pool_array(ctx->pool, (size_t)(p->M > 0 ? p->M : 1), sizeof(float));
      if (bias == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
      for (int64_t m = 0; m < p->M; m++) bias[m] = ((const float *)b->data)[b->count == 1 ? 0 : m];
      p->bias = bias;
    }
    const ir_value *ibv = ir_node_input(g, n, 6);
    if (ibv != NULL) {
      p->ibias = 1;
      if (ibv->constant != NULL) {
        const ir_tensor *t = ibv->constant;
        if (t->dtype != Q8RT_DTYPE_INT32 || (t->count != 1 && t->count != p->M)) {
          return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                           "%s node '%s': the int32 bias must be int32 with 1 or %lld values", n->op_type, n->name,
                           (long long)p->M);
        }
        int32_t *ib = q8rt_pool_array(ctx->pool, (size_t)(p->M > 0 ? p->M : 1), sizeof(int32_t));
        if (ib == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
        for (int64_t m = 0; m < p->M; m++) ib[m] = ((const int32_t *)t->data)[t->count == 1 ? 0 : m];
        p->ibias_const = ib;
      }
    }
    if ((st = op_fstage_prepare(ctx, &p->st, 7, p->M, 0, err)) != Q8RT_OK) return st;
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

static q8rt_status ci_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                            void *geom, q8rt_error *err) {
  const ci_params *p = params;
  const op_shape *x = &in[0];
  if (x->dtype != Q8RT_DTYPE_UNDEFINED && x->dtype != p->x_type) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': x is %s, expected %s", n->op_type, n->name,
                     q8rt_onnx_type_name(x->dtype), q8rt_onnx_type_name(p->x_type));
  }
  out->dtype = p->to_float ? Q8RT_DTYPE_FLOAT32 : Q8RT_DTYPE_INT32;
  out->rank = -1;
  if (p->x_zp_dynamic && in[2].rank >= 0 && op_shape_count(&in[2]) != 1 && concrete) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': x_zero_point must have one element", n->op_type, n->name);
  }
  if (p->scale_dynamic && concrete &&
      ((in[4].dtype != Q8RT_DTYPE_UNDEFINED && in[4].dtype != Q8RT_DTYPE_FLOAT32) ||
       (in[4].rank >= 0 && op_shape_count(&in[4]) != 1))) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': scale must be one float32 value", n->op_type, n->name);
  }
  if (p->ibias && p->ibias_const == NULL && concrete &&
      (in[6].dtype != Q8RT_DTYPE_INT32 || in[6].rank < 0 ||
       (op_shape_count(&in[6]) != 1 && op_shape_count(&in[6]) != (size_t)p->M))) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': the int32 bias must be int32 with 1 or %lld values",
                     n->op_type, n->name, (long long)p->M);
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
  q8rt_status st = op_fstage_check(&p->st, n, in, out, concrete, err);
  if (st != Q8RT_OK || !concrete) return st;
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
    gm->direct = p->win.kernel[0] == 1 && p->win.kernel[1] == 1 && p->win.stride[0] == 1 && p->win.stride[1] == 1 &&
                 pb[0] == 0 && pb[1] == 0 && o[0] == gm->in[0] && o[1] == gm->in[1];
    /* ~256 KiB of packed B per tile (L2-resident while every weight block passes over it), at
     * least one NR block, at most 2048 pixels: a 24x96x3x3 convolution on 64x96 took 2.1 ms with
     * 64 KiB / 1024, 1.47 ms so (fewer, longer im2col segments and kernel calls; no gain beyond) */
    size_t t = 262144 / (p->a_stride + 8) / p->nr;
    if (t < 1) t = 1;
    if (t * p->nr > 2048) t = 2048 / p->nr;
    /* at least 4 tiles per image and group where that leaves 128 pixels or more per tile: work
     * for a second thread (the tiles do not depend on the thread count) */
    const size_t quarter = (pixels / 4 + p->nr - 1) / p->nr;
    if (quarter * p->nr >= 128 && t > quarter) t = quarter;
    gm->tile = t * p->nr;
    if (gm->tile > ci_round_up(pixels, p->nr)) gm->tile = ci_round_up(pixels > 0 ? pixels : 1, p->nr);
    gm->tiles = pixels == 0 ? 0 : (pixels + gm->tile - 1) / gm->tile;
    /* Few tasks (small planes: rec's 1x40 after its pooling, det's deepest layers): the output
     * channels of a tile split into blocks of MR multiples, each packing the tile's B again (K x
     * pixels bytes against the block's MR x K x pixels multiply-adds) so that a second thread has
     * work; at least 2 tasks where blocks of 2 MR rows or more allow. Not 4: each thread of two
     * then packed the tile twice, and with blocks of 2 MR rows the packing costs about what the
     * block's GEMM does (rec's 60 x 960 x 1 x 3 on 1 x 40: 0.094 ms alone, 0.116 ms on two
     * threads in 4 blocks). Shape-only, as the tiles. */
    const size_t mg = (size_t)(p->M / p->group), per_image = (size_t)p->group * gm->tiles;
    gm->mblock = mg > 0 ? ci_round_up(mg, p->mr) : p->mr;
    gm->mblocks = 1;
    if (gm->n > 0 && gm->n * per_image < 2 && gm->tiles > 0 && mg >= 2 * p->mr) {
      const size_t want = (2 + gm->n * per_image - 1) / (gm->n * per_image);
      size_t b = ci_round_up((mg + want - 1) / want, p->mr);
      if (b < 2 * p->mr) b = 2 * p->mr;
      gm->mblock = b;
      gm->mblocks = (mg + b - 1) / b;
    }
  }
  for (int i = 0; i < 2; i++) {
    gm->k[i] = p->win.kernel[i];
    gm->s[i] = p->win.stride[i];
    gm->d[i] = p->win.dilation[i];
  }
  if (p->path == CI_PATH_DW && gm->in[1] == 1 && o[1] == 1 && gm->k[1] == 1 && pb[1] == 0 && gm->in[0] > 1) {
    /* [H][1] and [1][H] are the same bytes, as are [OH][1] and [1][OH] and the taps [KH][1] and [1][KH] */
    gm->in[1] = gm->in[0], gm->in[0] = 1;
    gm->out[1] = gm->out[0], gm->out[0] = 1;
    gm->pb[1] = gm->pb[0], gm->pb[0] = 0;
    gm->k[1] = gm->k[0], gm->k[0] = 1;
    gm->s[1] = gm->s[0], gm->s[0] = 1;
    gm->d[1] = gm->d[0], gm->d[0] = 1;
    o[0] = 1;
    o[1] = gm->out[1];
  }
  if (p->path == CI_PATH_DW && o[0] > 0 && o[1] > 0) {
    /* a band of output rows reads (band - 1) * sh + (KH - 1) * dh + 1 padded rows of pw bytes;
     * at most 1 MiB of them, else the row-by-row vmacc route (dims here are bounded: checked) */
    const uint64_t pw = (uint64_t)(o[1] - 1) * (uint64_t)gm->s[1] + (uint64_t)(gm->k[1] - 1) * (uint64_t)gm->d[1] + 1;
    const uint64_t rows1 = (uint64_t)(gm->k[0] - 1) * (uint64_t)gm->d[0] + 1;
    const uint64_t cap = (uint64_t)1 << 20;
    gm->pw = 0;
    gm->band = 0;
    if (pw <= cap && rows1 <= cap / pw) {
      uint64_t band = (cap / pw - rows1) / (uint64_t)gm->s[0] + 1;
      if (band > (uint64_t)o[0]) band = (uint64_t)o[0];
      gm->pw = (size_t)pw;
      gm->band = (size_t)band;
    }
  }
  return Q8RT_OK;
}

#define CI_MAX_SLOTS 64

/* One thread's buffers. GEMM: the im2col rows (unless direct), the packed B tile, the column sums,
 * the per-row terms. Depthwise: one int32 output row. */
static size_t ci_slot_bytes(const ci_params *p, const ci_geom *gm) {
  if (p->path == CI_PATH_GEMM) {
    const size_t mg = (size_t)(p->M / p->group);
    return (gm->direct ? 0 : ci_round_up(p->k * gm->tile, 64)) +
           ci_round_up(gm->tile / p->nr * q8rt_x8_packb_block_bytes(p->k, p->nr), 64) +
           ci_round_up(gm->tile * sizeof(uint32_t), 64) + ci_round_up(mg * sizeof(uint32_t), 64);
  }
  if (p->path == CI_PATH_DW) {
    const size_t band_rows =
        gm->band == 0 ? 0 : (gm->band - 1) * (size_t)gm->s[0] + (size_t)((gm->k[0] - 1) * gm->d[0]) + 1;
    return ci_round_up((size_t)gm->out[1] * sizeof(uint32_t), 64) + ci_round_up(band_rows * gm->pw + 64, 64);
  }
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
  void *y;
  uint8_t *workspace;
  size_t slot_bytes, slots;
  int32_t xzp;    /* as the type's value */
  uint32_t xz_u8; /* in the uint8 domain the GEMM computes in */
  uint8_t xz_raw, x_xor;
  float scale;
  const int32_t *ibias;   /* the int32 bias, or NULL */
  size_t ibias_step;      /* 1: one value per channel, 0: one value */
  size_t mblock, mblocks; /* GEMM: output channels per task, blocks per group (geometry's, or one block alone) */
  op_fstage_ext ext;      /* the output stage's tensor operands */
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

/* The int32 bias of channel m (0 without one). */
static uint32_t ci_ibias(const ci_run_ctx *c, size_t m) {
  return c->ibias != NULL ? (uint32_t)c->ibias[m * c->ibias_step] : 0u;
}

/* The output stage's parameters for channel m (c: the int32 bias, which the caller adds its terms
 * to; e set by the caller). */
static q8rt_s32_vcvt_params ci_vcvt_params(const ci_run_ctx *c, size_t m) {
  const ci_params *p = c->p;
  q8rt_s32_vcvt_params v;
  v.c = ci_ibias(c, m);
  v.e = 0;
  v.scale = c->scale;
  v.bias = p->bias != NULL ? p->bias[m] : 0.0f;
  v.mode = !p->to_float ? Q8RT_S32_VCVT_INT32 : p->bias != NULL ? Q8RT_S32_VCVT_SCALE_BIAS : Q8RT_S32_VCVT_SCALE;
  v.biasv = NULL;
  return v;
}

/* im2col rows [K][rows] of output pixels [p0, p0 + rows) of one group's planes: row k = (c, ky,
 * kx) holds, per pixel, its input byte (x_zp where the tap falls in the padding). */
static void ci_im2col(const ci_run_ctx *c, const uint8_t *xb, size_t p0, size_t rows, uint8_t *dst, size_t ld) {
  const ci_params *p = c->p;
  const ci_geom *gm = c->gm;
  const size_t H = (size_t)gm->in[0], W = (size_t)gm->in[1], OW = (size_t)gm->out[1];
  const size_t KH = (size_t)p->win.kernel[0], KW = (size_t)p->win.kernel[1];
  const size_t sh = (size_t)p->win.stride[0], sw = (size_t)p->win.stride[1];
  const size_t dh = (size_t)p->win.dilation[0], dw = (size_t)p->win.dilation[1];
  const size_t pt = (size_t)gm->pb[0], pl = (size_t)gm->pb[1];
  for (size_t ch = 0; ch < (size_t)p->Cg; ch++) {
    const uint8_t *plane = xb + ch * H * W;
    for (size_t ky = 0; ky < KH; ky++) {
      for (size_t kx = 0; kx < KW; kx++, dst += ld) {
        /* the columns [l0, h0) of a whole output row that read the plane (ix = j * sw + kx * dw - pl) */
        const int64_t off = (int64_t)(kx * dw) - (int64_t)pl;
        const int64_t l0 = off >= 0 ? 0 : (-off + (int64_t)sw - 1) / (int64_t)sw;
        const int64_t h0 = (int64_t)W - off <= 0 ? 0 : ((int64_t)W - off + (int64_t)sw - 1) / (int64_t)sw;
        size_t oy = p0 / OW, ox = p0 % OW;
        uint8_t *d = dst;
        if (OW == 1) {
          /* one output column (a 1-D convolution runs as H x 1): every output row is one byte, so
           * the segments below would cost a copy and two fills per byte; here the rows [r0, r1)
           * whose tap lands inside the plane as one (strided) copy between two fills (the same
           * bytes). Row r reads input row (oy + r) * sh + ky * dh - pt. */
          int64_t r0 = 0, r1 = 0;
          if (off >= 0 && off < (int64_t)W) {
            const int64_t base = (int64_t)(oy * sh + ky * dh), s = (int64_t)sh;
            r0 = base >= (int64_t)pt ? 0 : ((int64_t)pt - base + s - 1) / s;
            r1 = base >= (int64_t)(pt + H) ? 0 : ((int64_t)(pt + H) - base + s - 1) / s;
            if (r1 > (int64_t)rows) r1 = (int64_t)rows;
            if (r0 > r1) r0 = r1;
          }
          if (r1 > r0) {
            const uint8_t *src = plane + ((oy + (size_t)r0) * sh + ky * dh - pt) * W + (size_t)off;
            if (sh * W == 1) {
              memcpy(d + r0, src, (size_t)(r1 - r0));
            } else {
              for (int64_t r = r0; r < r1; r++) d[r] = src[(size_t)(r - r0) * sh * W];
            }
          }
          memset(d, c->xz_raw, (size_t)r0);
          memset(d + r1, c->xz_raw, rows - (size_t)r1);
          continue;
        }
        /* segments of one output row: a (strided) copy between two fills */
        for (size_t r = 0; r < rows;) {
          const size_t seg = OW - ox < rows - r ? OW - ox : rows - r;
          const size_t iy_p = oy * sh + ky * dh;
          size_t lo = seg, hi = seg; /* columns [lo, hi) of the segment read the plane */
          if (iy_p >= pt && iy_p - pt < H) {
            /* column j of the segment is output column ox + j */
            int64_t l = l0 - (int64_t)ox, h = h0 - (int64_t)ox;
            if (l < 0) l = 0;
            if (h > (int64_t)seg) h = (int64_t)seg;
            if (l < h) {
              lo = (size_t)l;
              hi = (size_t)h;
              const uint8_t *src = plane + (iy_p - pt) * W + (size_t)((int64_t)((ox + lo) * sw) + off);
              if (sw == 1) {
                memcpy(d + lo, src, hi - lo);
              } else {
                for (size_t j = lo; j < hi; j++) d[j] = src[(j - lo) * sw];
              }
            }
          }
          memset(d, c->xz_raw, lo);
          memset(d + hi, c->xz_raw, seg - hi);
          d += seg;
          r += seg;
          ox = 0;
          oy++;
        }
      }
    }
  }
}

/* Task (image b, group g, tile): B rows (the planes, or im2col), pack, one GEMM call per MR
 * weight rows writing NCHW output rows, then the output stage on those rows while in cache. */
static void ci_gemm_task(void *context, size_t task) {
  ci_run_ctx *c = context;
  const ci_params *p = c->p;
  const ci_geom *gm = c->gm;
  const size_t G = (size_t)p->group, mg = (size_t)(p->M / p->group), cg = (size_t)p->Cg;
  const size_t mb = task % c->mblocks, tt = task / c->mblocks;
  const size_t tile = tt % gm->tiles, g = (tt / gm->tiles) % G, b = tt / gm->tiles / G;
  const size_t m_lo = mb * c->mblock, m_hi = m_lo + c->mblock < mg ? m_lo + c->mblock : mg;
  const size_t H = (size_t)gm->in[0], W = (size_t)gm->in[1];
  const size_t pixels = (size_t)(gm->out[0] * gm->out[1]);
  const size_t p0 = tile * gm->tile, rows = pixels - p0 < gm->tile ? pixels - p0 : gm->tile;
  const size_t K = p->k;
  size_t slot;
  uint8_t *ws = ci_claim(c, &slot);
  uint8_t *col = ws;
  uint8_t *packed = col + (gm->direct ? 0 : ci_round_up(K * gm->tile, 64));
  uint32_t *xs = (uint32_t *)(packed + ci_round_up(gm->tile / p->nr * q8rt_x8_packb_block_bytes(K, p->nr), 64));
  uint32_t *rt = (uint32_t *)((uint8_t *)xs + ci_round_up(gm->tile * sizeof(uint32_t), 64));
  const uint8_t *xb = c->x + (b * gm->c + g * cg) * H * W;
  const uint8_t *brows;
  size_t bstride;
  if (gm->direct) {
    brows = xb + p0;
    bstride = H * W;
  } else {
    ci_im2col(c, xb, p0, rows, col, rows);
    brows = col;
    bstride = rows;
  }
  const size_t m0 = g * mg;
  const uint32_t d0 = p->d[m0], xz = c->xz_u8;
  p->packb(K, rows, brows, bstride, c->x_xor, p->nr, 16384u * (uint32_t)K, 128u + d0, packed,
           p->need_colsum ? xs : NULL);
  /* acc + (128 - x_zp) * W[m] + K * x_zp * d[m]  [- (d[m] - d0) * X[p]] */
  for (size_t m = m_lo; m < m_hi; m++) {
    rt[m] = (128u - xz) * p->wsum[m0 + m] + (uint32_t)K * xz * p->d[m0 + m];
  }
  q8rt_qu8_requant_params rq;
  memset(&rq, 0, sizeof(rq));
  uint8_t *y = (uint8_t *)c->y + ((b * (size_t)p->M + m0) * pixels + p0) * 4;
  for (size_t m = m_lo; m < m_hi; m += p->mr) {
    const size_t mr = m_hi - m < p->mr ? m_hi - m : p->mr;
    p->gemm(mr, rows, K, p->wa + (m0 + m) * p->a_stride, p->a_stride, packed, y + m * pixels * 4, pixels * 4, &rq);
    for (size_t i = m; i < m + mr; i++) {
      q8rt_s32_vcvt_params vp = ci_vcvt_params(c, m0 + i);
      vp.c += rt[i];
      vp.e = p->d[m0 + i] - d0;
      int32_t *row = (int32_t *)(void *)(y + i * pixels * 4);
      p->vcvt(rows, row, p->need_colsum && vp.e != 0 ? xs : NULL, row, &vp);
      op_fstage_run(&p->st, &c->ext, m0 + i, (float *)(void *)row, rows);
    }
  }
  ci_release(c, slot);
}

/* Task (image b, channel m) of a depthwise convolution: bands of output rows, each from a copy of
 * the input rows it reads padded with x_zp (a padded tap adds (x_zp - x_zp) * w = 0 like the
 * reference's skipped one), one dwconv2d-chw call per output row; planes too wide for a band take
 * the vmacc route, one tap at a time over the columns it covers. */
static void ci_dw_task(void *context, size_t task) {
  ci_run_ctx *c = context;
  const ci_params *p = c->p;
  const ci_geom *gm = c->gm;
  const size_t m = task % (size_t)p->M, b = task / (size_t)p->M;
  const int64_t H = gm->in[0], W = gm->in[1], OH = gm->out[0], OW = gm->out[1];
  const int64_t KH = gm->k[0], KW = gm->k[1];
  const int64_t sh = gm->s[0], sw = gm->s[1], dh = gm->d[0], dw = gm->d[1];
  const uint8_t *plane = c->x + (b * gm->c + m) * (size_t)(H * W);
  const int32_t *wv = p->wdw + (int64_t)m * KH * KW;
  uint8_t *y = (uint8_t *)c->y + (b * (size_t)p->M + m) * (size_t)(OH * OW) * 4;
  const q8rt_s32_vcvt_params vp = ci_vcvt_params(c, m);
  size_t slot;
  uint8_t *ws = ci_claim(c, &slot);
  uint32_t *acc = (uint32_t *)ws;
  if (gm->band > 0) {
    uint8_t *pad = ws + ci_round_up((size_t)OW * sizeof(uint32_t), 64);
    const size_t pw = gm->pw;
    const int32_t bias = (int32_t)(0u - c->xz_u8 * p->wdw_sum[m]);
    for (int64_t oy0 = 0; oy0 < OH; oy0 += (int64_t)gm->band) {
      const int64_t oy1 = OH - oy0 < (int64_t)gm->band ? OH : oy0 + (int64_t)gm->band;
      const int64_t iy0 = oy0 * sh - gm->pb[0], rows = (oy1 - 1 - oy0) * sh + (KH - 1) * dh + 1;
      for (int64_t r = 0; r < rows; r++) {
        uint8_t *dst = pad + (size_t)r * pw;
        const int64_t iy = iy0 + r;
        if (iy < 0 || iy >= H) {
          memset(dst, c->xz_raw, pw);
          continue;
        }
        /* padded column j reads input column j - pl */
        const int64_t pl = gm->pb[1];
        const int64_t lo = pl < (int64_t)pw ? pl : (int64_t)pw;
        int64_t hi = pl + W < (int64_t)pw ? pl + W : (int64_t)pw;
        if (hi < lo) hi = lo;
        memset(dst, c->xz_raw, (size_t)lo);
        memcpy(dst + lo, plane + iy * W + (lo - pl), (size_t)(hi - lo));
        memset(dst + hi, c->xz_raw, pw - (size_t)hi);
      }
      for (int64_t oy = oy0; oy < oy1; oy++) {
        p->dwrow((size_t)OW, (size_t)KH, (size_t)KW, pad + (size_t)((oy - oy0) * sh) * pw, (size_t)dh * pw, (size_t)sw,
                 (size_t)dw, c->x_xor, wv, bias, (int32_t *)acc);
        p->vcvt((size_t)OW, (const int32_t *)acc, NULL, y + (size_t)(oy * OW) * 4, &vp);
        op_fstage_run(&p->st, &c->ext, m, (float *)(void *)(y + (size_t)(oy * OW) * 4), (size_t)OW);
      }
    }
    ci_release(c, slot);
    return;
  }
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
    p->vcvt((size_t)OW, (const int32_t *)acc, NULL, y + (size_t)(oy * OW) * 4, &vp);
    op_fstage_run(&p->st, &c->ext, m, (float *)(void *)(y + (size_t)(oy * OW) * 4), (size_t)OW);
  }
  ci_release(c, slot);
}

static void ci_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                   const op_exec_ctx *ctx) {
  const ci_params *p = params;
  const ci_geom *gm = geom;
  const float scale = !p->to_float ? 0.0f : p->scale_dynamic ? *(const float *)in[4].data : p->scale;
  /* the int32 bias: checked at bind to hold 1 or M values */
  const int32_t *ibias = p->ibias_const != NULL ? p->ibias_const : p->ibias ? (const int32_t *)in[6].data : NULL;
  const size_t ibias_step = p->ibias_const != NULL || (p->ibias && op_shape_count(in[6].shape) != 1) ? 1 : 0;
  if (p->path != CI_PATH_SCALAR) {
    ci_run_ctx c;
    c.p = p;
    c.ibias = ibias;
    c.ibias_step = ibias_step;
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
    c.scale = scale;
    op_fstage_ext_init(&p->st, in, out, &c.ext);
    if (p->path == CI_PATH_GEMM) {
      /* The channel blocks give a second thread work at the cost of one im2col and packing of the
       * tile per block; alone (no pool, a solo stretch, a run the session keeps on one thread), one
       * block (the same int32 sums: the split changes no order) */
      c.mblock = gm->mblock;
      c.mblocks = gm->mblocks;
      if (ctx->threads <= 1 || !q8rt_threadpool_sharing(ctx->pool)) {
        c.mblock = ci_round_up((size_t)(p->M / p->group), p->mr);
        c.mblocks = 1;
      }
      q8rt_parallel_for(ctx->pool, gm->n * (size_t)p->group * gm->tiles * c.mblocks, ci_gemm_task, &c);
    } else {
      q8rt_parallel_for(ctx->pool, gm->n * (size_t)p->M, ci_dw_task, &c);
    }
    return;
  }
  const int64_t H = gm->in[0], W = gm->in[1], OH = gm->out[0], OW = gm->out[1];
  const int64_t KH = p->win.kernel[0], KW = p->win.kernel[1], Mg = p->M / p->group;
  const int32_t xzp = p->x_zp_dynamic ? qk_load8(in[2].data, p->x_type, 0) : p->x_zp;
  uint8_t *Y = out[0].data;
  op_fstage_ext ext;
  op_fstage_ext_init(&p->st, in, out, &ext);
  for (size_t b = 0; b < gm->n; b++) {
    for (int64_t m = 0; m < p->M; m++) {
      const int64_t gi = m / Mg;
      const int32_t wz = p->w_zp[m];
      q8rt_s32_vcvt_params vp;
      memset(&vp, 0, sizeof(vp));
      vp.c = ibias != NULL ? (uint32_t)ibias[(size_t)m * ibias_step] : 0u;
      vp.scale = scale;
      vp.bias = p->bias != NULL ? p->bias[m] : 0.0f;
      vp.mode = !p->to_float ? Q8RT_S32_VCVT_INT32 : p->bias != NULL ? Q8RT_S32_VCVT_SCALE_BIAS : Q8RT_S32_VCVT_SCALE;
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
          const int32_t a = (int32_t)acc;
          const size_t at = ((b * (size_t)p->M + (size_t)m) * (size_t)OH + (size_t)oh) * (size_t)OW + (size_t)ow;
          p->vcvt(1, &a, NULL, Y + at * 4, &vp);
        }
      }
      const size_t plane = (b * (size_t)p->M + (size_t)m) * (size_t)OH * (size_t)OW;
      op_fstage_run(&p->st, &ext, (size_t)m, (float *)(void *)(Y + plane * 4), (size_t)(OH * OW));
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

const op_def q8rt_op_conv_integer_to_float = {
    .op_type = "ConvIntegerToFloat",
    .domain = "q8rt",
    .min_opset = 1,
    .prepare = ci_prepare,
    .infer = ci_infer,
    .workspace = ci_workspace,
    .run = ci_run,
};
