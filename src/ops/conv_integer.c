/* ConvInteger (ai.onnx 10): uint8/int8 x and w, optional zero points (x: one value; w: one value
 * or one per output channel), int32 output
 *   y[n][m][o] = Σ_{c,k} (x[n][c][o·s + k·d − pad] − x_zp) · (w[m][c][k] − w_zp[m])
 * with padded positions contributing 0 (x = x_zp there), exactly as ONNX defines it and ONNX
 * Runtime computes it (integer arithmetic: any exact order gives the same int32). 1-D and 2-D,
 * group, strides, dilations, explicit pads or auto_pad. w and w_zero_point must be constants;
 * x_zero_point may be computed at run time (DynamicQuantizeLinear's output in dynamic models). */
#include <string.h>

#include "op_window.h"
#include "qlinear_common.h"

typedef struct ci_params {
  q8rt_dtype x_type, w_type;
  int32_t x_zp;
  int x_zp_dynamic; /* x_zero_point is computed at run time (DynamicQuantizeLinear) */
  int32_t *w_zp;    /* [M] */
  const void *w;    /* constant weights [M][C/g][kh][kw] */
  int nsp;          /* 1 or 2 */
  int64_t M, Cg, group;
  op_window win; /* 2-D view: a 1-D convolution has kernel, stride and dilation 1 on axis 1 */
} ci_params;

typedef struct ci_geom {
  size_t n, c;
  int64_t in[2], out[2], pb[2];
} ci_geom;

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
  if (!qk_is8(w->dtype)) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': w is %s (uint8 or int8 expected)", n->op_type, n->name,
                     op_onnx_type_name(w->dtype));
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
  if (tx != Q8RT_DTYPE_UNDEFINED && !qk_is8(tx)) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': x is %s (uint8 or int8 expected)", n->op_type, n->name,
                     op_onnx_type_name(tx));
  }
  const ir_value *xzv = ir_node_input(g, n, 2);
  if (xzv != NULL && xzv->constant == NULL) {
    /* A run-time zero point (dynamic quantization): one element of x's type, read by run. */
    if (xzv->dtype != Q8RT_DTYPE_UNDEFINED &&
        (!qk_is8(xzv->dtype) || (tx != Q8RT_DTYPE_UNDEFINED && xzv->dtype != tx))) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': x_zero_point is %s, x is %s", n->op_type, n->name,
                       op_onnx_type_name(xzv->dtype), op_onnx_type_name(tx));
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
                       op_onnx_type_name(wz->dtype), op_onnx_type_name(w->dtype));
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
  *out = p;
  return Q8RT_OK;
}

static q8rt_status ci_infer(const void *params, const ir_node *n, const op_shape *in, op_shape *out, int concrete,
                            void *geom, q8rt_error *err) {
  const ci_params *p = params;
  const op_shape *x = &in[0];
  if (x->dtype != Q8RT_DTYPE_UNDEFINED && x->dtype != p->x_type) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': x is %s, expected %s", n->op_type, n->name,
                     op_onnx_type_name(x->dtype), op_onnx_type_name(p->x_type));
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
  return Q8RT_OK;
}

static void ci_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                   const op_exec_ctx *ctx) {
  (void)workspace;
  (void)ctx;
  const ci_params *p = params;
  const ci_geom *gm = geom;
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
    .run = ci_run,
};
