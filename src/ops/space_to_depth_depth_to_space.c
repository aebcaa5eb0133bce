/* SpaceToDepth and DepthToSpace (DCR and CRD modes), any element type, NCHW.
 *
 * Both are one strided copy: the output is walked in C order as a 6-D view whose strides into
 * the input say where each element comes from (b = blocksize, input N x C x H x W):
 *   SpaceToDepth      y[n][(bh*b + bw)*C + c][h][w]   = x[n][c][h*b + bh][w*b + bw]
 *   DepthToSpace DCR  y[n][c][h*b + bh][w*b + bw]     = x[n][(bh*b + bw)*C' + c][h][w]  (C' = C/b^2)
 *   DepthToSpace CRD  y[n][c][h*b + bh][w*b + bw]     = x[n][c*b*b + bh*b + bw][h][w]
 * so the views are (n, bh, bw, c, h, w) and (n, c, h, bh, w, bw). */
#include <string.h>

#include "data_common.h"

typedef struct s2d_params {
  int64_t blocksize;
  int to_depth; /* SpaceToDepth */
  int crd;      /* DepthToSpace mode CRD (else DCR) */
} s2d_params;

typedef struct s2d_geom {
  size_t elem;
  int64_t dims[6], strides[6];
} s2d_geom;

static q8rt_status s2d_prepare_kind(op_prepare_ctx *ctx, void **out, q8rt_error *err, int to_depth) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 1, 1, 1, 1, err)) != Q8RT_OK) return st;
  s2d_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->to_depth = to_depth;
  if (ir_node_attr(n, "blocksize") == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'blocksize' is missing", n->op_type,
                     n->name);
  }
  if ((st = ir_attr_int(n, "blocksize", 0, &p->blocksize, err)) != Q8RT_OK) return st;
  /* 2^15: b*b stays far inside int64 and any larger block exceeds every tensor q8rt accepts */
  if (p->blocksize < 1 || p->blocksize > 32768) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': blocksize %lld is out of range (1 to 32768)",
                     n->op_type, n->name, (long long)p->blocksize);
  }
  if (!to_depth) {
    const char *mode;
    if ((st = ir_attr_string(n, "mode", "DCR", &mode, err)) != Q8RT_OK) return st;
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "DepthToSpace node '%s': mode '%s' is not DCR or CRD", n->name,
                       mode);
    }
    p->crd = strcmp(mode, "CRD") == 0;
  }
  ctx->kernel = to_depth ? "space_to_depth__scalar" : "depth_to_space__scalar";
  ctx->reason = "6-D strided copy";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status s2d_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return s2d_prepare_kind(ctx, out, err, 1);
}
static q8rt_status d2s_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return s2d_prepare_kind(ctx, out, err, 0);
}

static q8rt_status s2d_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                             void *geom, q8rt_error *err) {
  const s2d_params *p = params;
  const op_shape *x = &in[0];
  q8rt_status st;
  if ((st = data_check_movable(n, x, "input", err)) != Q8RT_OK) return st;
  out->dtype = x->dtype;
  out->rank = 4;
  if (x->rank < 0) {
    for (int d = 0; d < 4; d++) out->dims[d] = -1;
    return Q8RT_OK;
  }
  if (x->rank != 4) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input has rank %d, expected 4 (NCHW)", n->op_type, n->name,
                     x->rank);
  }
  const int64_t b = p->blocksize, bb = b * b;
  const int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  out->dims[0] = N;
  if (p->to_depth) {
    if ((H >= 0 && H % b != 0) || (W >= 0 && W % b != 0)) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "SpaceToDepth node '%s': height %lld and width %lld must be multiples of blocksize %lld",
                       n->name, (long long)H, (long long)W, (long long)b);
    }
    out->dims[1] = C < 0 ? -1 : C * bb; /* C * b^2 elements fit: checked with the count below */
    out->dims[2] = H < 0 ? -1 : H / b;
    out->dims[3] = W < 0 ? -1 : W / b;
  } else {
    if (C >= 0 && C % bb != 0) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "DepthToSpace node '%s': %lld channels are not a multiple of blocksize^2 = %lld", n->name,
                       (long long)C, (long long)bb);
    }
    out->dims[1] = C < 0 ? -1 : C / bb;
    out->dims[2] = H < 0 ? -1 : H * b;
    out->dims[3] = W < 0 ? -1 : W * b;
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t total;
  if ((st = data_count(n, x, &total, err)) != Q8RT_OK) return st;
  s2d_geom *gm = geom;
  gm->elem = q8rt_dtype_size(x->dtype);
  const int64_t HW = H * W;
  if (p->to_depth) {
    const int64_t d[6] = {N, b, b, C, H / b, W / b};
    const int64_t s[6] = {C * HW, W, 1, HW, b * W, b};
    memcpy(gm->dims, d, sizeof(d));
    memcpy(gm->strides, s, sizeof(s));
  } else {
    const int64_t c2 = C / bb;
    const int64_t d[6] = {N, c2, H, b, W, b};
    if (p->crd) {
      const int64_t s[6] = {C * HW, bb * HW, W, b * HW, 1, HW};
      memcpy(gm->strides, s, sizeof(s));
    } else {
      const int64_t s[6] = {C * HW, HW, W, b * c2 * HW, 1, c2 * HW};
      memcpy(gm->strides, s, sizeof(s));
    }
    memcpy(gm->dims, d, sizeof(d));
  }
  return Q8RT_OK;
}

static void s2d_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  (void)params, (void)workspace, (void)ctx;
  const s2d_geom *gm = geom;
  data_strided_copy(in[0].data, out[0].data, gm->elem, 6, gm->dims, gm->strides, 0);
}

const op_def q8rt_op_space_to_depth = {.op_type = "SpaceToDepth",
                                       .domain = "",
                                       .min_opset = 1,
                                       .prepare = s2d_prepare,
                                       .infer = s2d_infer,
                                       .run = s2d_run};
const op_def q8rt_op_depth_to_space = {.op_type = "DepthToSpace",
                                       .domain = "",
                                       .min_opset = 1,
                                       .prepare = d2s_prepare,
                                       .infer = s2d_infer,
                                       .run = s2d_run};
