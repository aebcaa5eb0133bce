/* QLinearConv: uint8/int8 activations, int8/uint8 weights, per-tensor or per-channel weight
 * scales and zero points (zero points may differ between channels), optional int32 bias, any
 * group, strides, dilations, explicit or automatic padding, 1-D and 2-D, any batch.
 *
 * Load: the weights are packed once as int16 with their channel's zero point removed, and the
 * requantization scale of every output channel is computed as the numerics contract says:
 *   scale[m] = (float)((float)x_scale * (float)w_scale[m]) / (float)y_scale
 * Bind: pads are resolved from auto_pad and the concrete input size. */
#include <math.h>
#include <string.h>

#include "backends/xnnpack.h"
#include "conv_paths.h"
#include "op.h"
#include "op_util.h"
#include "op_window.h"
#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "q8rt-math.h"

typedef struct qconv_params {
  int spatial; /* 1 or 2 */
  int64_t group;
  int64_t out_c, in_c_per_group;
  int64_t kernel[2], stride[2], dilation[2]; /* right-aligned: 1-D uses [1] */
  op_window win;                             /* the attributes as given; pads resolved per input size */
  q8rt_dtype x_type, y_type;
  int32_t x_zero_point, y_zero_point;
  int32_t y_min, y_max; /* output clamp: the type's range, narrowed by a fused Relu/Clip */
  int16_t *w;           /* [M][C/g][kh][kw], zero point removed */
  int32_t *bias;
  float *scale;
  q8rt_dtype out_type;    /* y_type, or the type of a fused table's output */
  conv_fast fast;         /* the NHWC path, when path != CONV_PATH_REF */
  q8rt_xnn_conv_desc xnn; /* the XNNPACK description, when path == CONV_PATH_XNN */
} qconv_params;

typedef struct qconv_geom {
  q8rt_q8_conv_ref_params ref; /* geometry (all paths) and the reference's parameters */
  conv_fast_geom fast;
} qconv_geom;

_Static_assert(sizeof(qconv_geom) <= Q8RT_GEOM_BYTES, "conv geometry must fit a step's geom record");

static q8rt_status read_scalar_zp(const ir_graph *g, const ir_node *n, int input, const char *what, q8rt_dtype want,
                                  int32_t *out, q8rt_error *err) {
  *out = 0;
  if (ir_node_input(g, n, input) == NULL) return Q8RT_OK; /* omitted: zero */
  const ir_tensor *t;
  q8rt_status st = op_require_constant(g, n, input, what, &t, err);
  if (st != Q8RT_OK) return st;
  if (t->count != 1) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "QLinearConv node '%s': %s must have one element (has %lld)", n->name,
                     what, (long long)t->count);
  }
  if (t->dtype != want) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "QLinearConv node '%s': %s is %s, expected %s", n->name, what,
                     q8rt_onnx_type_name(t->dtype), q8rt_onnx_type_name(want));
  }
  *out = want == Q8RT_DTYPE_UINT8 ? (int32_t)((const uint8_t *)t->data)[0] : (int32_t)((const int8_t *)t->data)[0];
  return Q8RT_OK;
}

static q8rt_status choose_other_path(qconv_params *p, conv_choice *choice_p, const conv_fast_desc *fdp,
                                     const ir_tensor *w, const ir_tensor *w_scale, const ir_tensor *w_zp,
                                     const ir_tensor *bias, float x_scale, float y_scale, const ir_node *n,
                                     q8rt_error *err);

static q8rt_status qconv_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  q8rt_status st;
  if (n->n_inputs < 8 || n->n_inputs > 9 || n->n_outputs != 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "QLinearConv node '%s': expects 8 or 9 inputs and 1 output",
                     n->name);
  }
  qconv_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");

  /* ---- types ---- */
  const ir_value *x = ir_node_input(g, n, 0);
  if (x == NULL) return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "QLinearConv node '%s': input x is missing", n->name);
  const ir_value *xzp = ir_node_input(g, n, 2);
  p->x_type = xzp != NULL && xzp->constant != NULL ? xzp->constant->dtype : x->dtype;
  if (p->x_type != Q8RT_DTYPE_UINT8 && p->x_type != Q8RT_DTYPE_INT8) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "QLinearConv node '%s': %s is %s (uint8 or int8 expected)", n->name,
                     xzp != NULL && xzp->constant != NULL ? "x_zero_point" : "input x", q8rt_onnx_type_name(p->x_type));
  }
  const ir_value *yzp = ir_node_input(g, n, 7);
  p->y_type = yzp != NULL && yzp->constant != NULL ? yzp->constant->dtype : p->x_type;
  if (p->y_type != Q8RT_DTYPE_UINT8 && p->y_type != Q8RT_DTYPE_INT8) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "QLinearConv node '%s': y_zero_point is %s (uint8 or int8 expected)",
                     n->name, q8rt_onnx_type_name(p->y_type));
  }
  float x_scale, y_scale;
  if ((st = op_const_scale(g, n, 1, "x_scale", &x_scale, err)) != Q8RT_OK) return st;
  if ((st = read_scalar_zp(g, n, 2, "x_zero_point", p->x_type, &p->x_zero_point, err)) != Q8RT_OK) return st;
  if ((st = op_const_scale(g, n, 6, "y_scale", &y_scale, err)) != Q8RT_OK) return st;
  if ((st = read_scalar_zp(g, n, 7, "y_zero_point", p->y_type, &p->y_zero_point, err)) != Q8RT_OK) return st;

  /* ---- weights ---- */
  const ir_tensor *w;
  if ((st = op_require_constant(g, n, 3, "w", &w, err)) != Q8RT_OK) return st;
  if (w->dtype != Q8RT_DTYPE_UINT8 && w->dtype != Q8RT_DTYPE_INT8) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "QLinearConv node '%s': weights are %s (uint8 or int8 expected)",
                     n->name, q8rt_onnx_type_name(w->dtype));
  }
  if (w->rank != 3 && w->rank != 4) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "QLinearConv node '%s': weights of rank %d (q8rt runs 1-D and 2-D convolutions: rank 3 or 4)",
                     n->name, w->rank);
  }
  p->spatial = w->rank - 2;
  p->out_c = w->dims[0];
  p->in_c_per_group = w->dims[1];
  if (p->out_c <= 0 || p->in_c_per_group <= 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "QLinearConv node '%s': weights have an empty dimension", n->name);
  }
  int64_t kernel[2] = {1, w->dims[2]};
  if (p->spatial == 2) {
    kernel[0] = w->dims[2];
    kernel[1] = w->dims[3];
  }
  if (kernel[0] <= 0 || kernel[1] <= 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "QLinearConv node '%s': kernel size is zero", n->name);
  }
  const ir_tensor *w_scale, *w_zp = NULL;
  if ((st = op_require_constant(g, n, 4, "w_scale", &w_scale, err)) != Q8RT_OK) return st;
  if ((st = op_check_scales(n, "w_scale", w_scale, err)) != Q8RT_OK) return st;
  if (w_scale->count != 1 && w_scale->count != p->out_c) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "QLinearConv node '%s': w_scale has %lld elements, expected 1 or %lld (output channels)", n->name,
                     (long long)w_scale->count, (long long)p->out_c);
  }
  if (ir_node_input(g, n, 5) != NULL) {
    if ((st = op_require_constant(g, n, 5, "w_zero_point", &w_zp, err)) != Q8RT_OK) return st;
    if (w_zp->dtype != w->dtype) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "QLinearConv node '%s': w_zero_point is %s, weights are %s",
                       n->name, q8rt_onnx_type_name(w_zp->dtype), q8rt_onnx_type_name(w->dtype));
    }
    if (w_zp->count != 1 && w_zp->count != p->out_c) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "QLinearConv node '%s': w_zero_point has %lld elements, expected 1 or %lld", n->name,
                       (long long)w_zp->count, (long long)p->out_c);
    }
  }
  const ir_tensor *bias = NULL;
  if (ir_node_input(g, n, 8) != NULL) {
    if ((st = op_require_constant(g, n, 8, "B", &bias, err)) != Q8RT_OK) return st;
    if (bias->dtype != Q8RT_DTYPE_INT32 || bias->count != p->out_c) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "QLinearConv node '%s': bias B must be int32 with %lld elements (is %s with %lld)", n->name,
                       (long long)p->out_c, q8rt_onnx_type_name(bias->dtype), (long long)bias->count);
    }
  }

  /* ---- attributes ---- */
  const int sp = p->spatial;
  if ((st = ir_attr_int(n, "group", 1, &p->group, err)) != Q8RT_OK) return st;
  if (p->group < 1 || p->out_c % p->group != 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "QLinearConv node '%s': attribute 'group' (%lld) must be positive and divide the %lld output "
                     "channels",
                     n->name, (long long)p->group, (long long)p->out_c);
  }
  if ((st = op_window_parse(n, sp, w->dims + 2, 1 << 20, OP_WINDOW_NONEMPTY, &p->win, err)) != Q8RT_OK) return st;
  p->kernel[0] = kernel[0];
  p->kernel[1] = kernel[1];
  p->stride[0] = p->stride[1] = 1;
  p->dilation[0] = p->dilation[1] = 1;
  for (int i = 0; i < sp; i++) {
    p->stride[2 - sp + i] = p->win.stride[i];
    p->dilation[2 - sp + i] = p->win.dilation[i];
  }

  /* ---- packing: int16 weights with the channel's zero point removed, int32 bias, scales ---- */
  /* The int16 copy is a load-time buffer: the fast paths keep only their packed weights, the
   * reference path (and only it) keeps the int16 copy (moved into the model's pool below). */
  const size_t per_m = (size_t)(w->count / p->out_c);
  const q8rt_allocator *alloc = ctx->pool->allocator;
  const size_t w16_bytes = (size_t)w->count * sizeof(int16_t);
  p->w = q8rt_alloc(alloc, w16_bytes, 64);
  p->bias = q8rt_pool_array(ctx->pool, (size_t)p->out_c, sizeof(int32_t));
  p->scale = q8rt_pool_array(ctx->pool, (size_t)p->out_c, sizeof(float));
  if (p->w == NULL || p->bias == NULL || p->scale == NULL) {
    q8rt_free(alloc, p->w, w16_bytes);
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "QLinearConv node '%s': out of memory packing weights", n->name);
  }
  const int w_signed = w->dtype == Q8RT_DTYPE_INT8;
  for (int64_t m = 0; m < p->out_c; m++) {
    int32_t zp = 0;
    if (w_zp != NULL) {
      const int64_t zi = w_zp->count == 1 ? 0 : m;
      zp = w_signed ? ((const int8_t *)w_zp->data)[zi] : ((const uint8_t *)w_zp->data)[zi];
    }
    for (size_t k = 0; k < per_m; k++) {
      const size_t i = (size_t)m * per_m + k;
      const int32_t wv = w_signed ? ((const int8_t *)w->data)[i] : ((const uint8_t *)w->data)[i];
      p->w[i] = (int16_t)(wv - zp);
    }
    const float ws = ((const float *)w_scale->data)[w_scale->count == 1 ? 0 : m];
    const float xw = x_scale * ws; /* float32 product, then float32 division: the contract */
    p->scale[m] = xw / y_scale;
    p->bias[m] = bias != NULL ? ((const int32_t *)bias->data)[m] : 0;
  }
  /* The output clamp. A Relu/Clip fused by the QDQ pass becomes part of it: QuantizeLinear is
   * monotonic, so Q(clip(v, lo, hi)) = clamp(Q(v), Q(lo), Q(hi)) exactly. */
  q8rt_dtype_range(p->y_type, &p->y_min, &p->y_max);
  const ir_attr *clip = ir_node_attr(n, OP_ATTR_FUSED_CLIP);
  if (clip != NULL &&
      (clip->type != IR_ATTR_FLOATS || clip->count != 2 || isnan(clip->floats[0]) || isnan(clip->floats[1]))) {
    q8rt_free(alloc, p->w, w16_bytes);
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "QLinearConv node '%s': attribute '%s' must be two bounds", n->name,
                     OP_ATTR_FUSED_CLIP);
  }
  if (clip != NULL) {
    const float bounds[2] = {clip->floats[0], clip->floats[1]};
    int32_t qb[2];
    for (int i = 0; i < 2; i++) {
      const float v = bounds[i] / y_scale; /* QuantizeLinear's division */
      qb[i] = isinf(v) ? (v < 0 ? p->y_min : p->y_max)
                       : q8rt_round_clamp(v, (float)(p->y_min - p->y_zero_point), (float)(p->y_max - p->y_zero_point)) +
                             p->y_zero_point;
    }
    if (qb[0] > p->y_min) p->y_min = qb[0];
    if (qb[1] < p->y_max) p->y_max = qb[1];
    if (p->y_min > p->y_max) p->y_max = p->y_min;
  }
  conv_choice choice;
  conv_choice_init(&choice, ctx->backend, ctx->isa);
  conv_fast_desc fd;
  memset(&fd, 0, sizeof(fd));
  fd.out_c = (size_t)p->out_c;
  fd.in_c_per_group = (size_t)p->in_c_per_group;
  fd.groups = (size_t)p->group;
  fd.kernel_h = (size_t)p->kernel[0];
  fd.kernel_w = (size_t)p->kernel[1];
  fd.w = p->w;
  fd.bias = p->bias;
  fd.scale = p->scale;
  fd.x_signed = p->x_type == Q8RT_DTYPE_INT8;
  fd.y_signed = p->y_type == Q8RT_DTYPE_INT8;
  fd.x_zero_point = p->x_zero_point;
  fd.y_zero_point = p->y_zero_point;
  fd.y_min = p->y_min;
  fd.y_max = p->y_max;
  fd.stride_h = (size_t)p->stride[0];
  fd.stride_w = (size_t)p->stride[1];
  fd.dilation_h = (size_t)p->dilation[0];
  fd.dilation_w = (size_t)p->dilation[1];
  fd.want_chw = ctx->edge_nchw && p->spatial == 2;
  fd.in_w_hint = x->rank == 4 && x->dims[3] > 0 ? (size_t)x->dims[3] : 0;
  st = conv_fast_prepare(&fd, &choice, ctx->pool, &p->fast, err);
  if (st == Q8RT_OK) st = choose_other_path(p, &choice, &fd, w, w_scale, w_zp, bias, x_scale, y_scale, n, err);
  int16_t *w16 = p->w;
  p->w = NULL;
  if (st == Q8RT_OK && p->fast.path == CONV_PATH_REF) {
    p->w = q8rt_pool_alloc(ctx->pool, w16_bytes, 64);
    if (p->w == NULL) {
      st = q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "QLinearConv node '%s': out of memory packing weights", n->name);
    } else {
      memcpy(p->w, w16, w16_bytes);
    }
  }
  q8rt_free(alloc, w16, w16_bytes);
  if (st != Q8RT_OK) return st;
  ctx->kernel = p->fast.kernel;
  ctx->reason = p->fast.reason;
  /* every path but XNNPACK's (which packs at bind, from the IR's weights) holds its own copy */
  if (p->fast.path != CONV_PATH_XNN) ctx->consumed = 1u << 3;
  if (!conv_fast_nchw(&p->fast)) {
    ctx->in_layout = OP_LAYOUT_NHWC;
    ctx->out_layout = OP_LAYOUT_NHWC;
  }
  *out = p;
  return Q8RT_OK;
}

/* No q8rt fast kernel: XNNPACK when it is exact for this node and allowed, else the reference. */
static q8rt_status choose_other_path(qconv_params *p, conv_choice *choice_p, const conv_fast_desc *fdp,
                                     const ir_tensor *w, const ir_tensor *w_scale, const ir_tensor *w_zp,
                                     const ir_tensor *bias, float x_scale, float y_scale, const ir_node *n,
                                     q8rt_error *err) {
  conv_choice choice = *choice_p;
  const conv_fast_desc fd = *fdp;
  const int w_signed = w->dtype == Q8RT_DTYPE_INT8;
  if (p->fast.path == CONV_PATH_NONE) {
    /* Not ours: XNNPACK, if it is exact for this node and allowed. */
    q8rt_xnn_conv_desc *xd = &p->xnn;
    memset(xd, 0, sizeof(*xd));
    xd->groups = (size_t)p->group;
    xd->group_in_c = (size_t)p->in_c_per_group;
    xd->group_out_c = (size_t)(p->out_c / p->group);
    xd->kernel_h = (uint32_t)p->kernel[0];
    xd->kernel_w = (uint32_t)p->kernel[1];
    xd->stride_h = (uint32_t)p->stride[0];
    xd->stride_w = (uint32_t)p->stride[1];
    xd->dilation_h = (uint32_t)p->dilation[0];
    xd->dilation_w = (uint32_t)p->dilation[1];
    xd->x_signed = fd.x_signed;
    xd->y_signed = fd.y_signed;
    xd->w_signed = w_signed;
    xd->x_zero_point = p->x_zero_point;
    xd->y_zero_point = p->y_zero_point;
    xd->x_scale = x_scale;
    xd->y_scale = y_scale;
    xd->w_scale = w_scale->data;
    xd->w_scale_count = (size_t)w_scale->count;
    xd->w = w->data;
    xd->w_zero_point = w_zp != NULL ? w_zp->data : NULL;
    xd->w_zero_point_count = w_zp != NULL ? (size_t)w_zp->count : 0;
    xd->bias = bias != NULL ? bias->data : NULL;
    /* Sizes are bound per session; check the rules on a smallest valid input. */
    xd->batch = 1;
    xd->in_h = (size_t)((p->kernel[0] - 1) * p->dilation[0] + 1);
    xd->in_w = (size_t)((p->kernel[1] - 1) * p->dilation[1] + 1);
    const char *why = NULL;
    int32_t tmin, tmax;
    q8rt_dtype_range(p->y_type, &tmin, &tmax);
    if (p->y_min != tmin || p->y_max != tmax) {
      choice.allow_xnnpack = 0; /* the glue passes XNNPACK the type's full range */
      why = "a fused Relu/Clip narrows the output range (the XNNPACK glue clamps to the full type range)";
    }
    if (choice.allow_xnnpack && q8rt_xnn_init() && q8rt_xnn_conv_supported(xd, &why)) {
      p->fast.path = CONV_PATH_XNN;
      p->fast.kernel = "xnnpack";
      p->fast.reason = choice.backend == Q8RT_BACKEND_XNNPACK
                           ? "forced: --backend xnnpack"
                           : "XNNPACK is exact here and q8rt has no kernel for this shape";
    } else if (choice.backend != Q8RT_BACKEND_AUTO && choice.backend != Q8RT_BACKEND_REFERENCE) {
      return q8rt_fail(
          err, Q8RT_ERROR_UNSUPPORTED, "QLinearConv node '%s': backend '%s' cannot run it: %s", n->name,
          q8rt_backend_name(choice.backend),
          choice.backend == Q8RT_BACKEND_XNNPACK ? (why != NULL ? why : "XNNPACK is not available") : p->fast.reason);
    } else {
      conv_ref_choose(&choice, &p->fast);
    }
  }
  return Q8RT_OK;
}

static q8rt_status qconv_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                               void *geom, q8rt_error *err) {
  const qconv_params *p = params;
  const op_shape *x = &in[0];
  if (x->dtype != Q8RT_DTYPE_UNDEFINED && x->dtype != p->x_type) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "QLinearConv node '%s': input x is %s but x_zero_point is %s",
                     n->name, q8rt_onnx_type_name(x->dtype), q8rt_onnx_type_name(p->x_type));
  }
  const int nhwc = !conv_fast_nchw(&p->fast);
  out->dtype = p->fast.table != NULL ? p->out_type : p->y_type;
  out->rank = p->spatial + 2;
  for (int i = 0; i < out->rank; i++) out->dims[i] = -1;
  out->dims[nhwc ? out->rank - 1 : 1] = p->out_c;
  if (x->rank < 0) return Q8RT_OK;
  if (x->rank != p->spatial + 2) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "QLinearConv node '%s': input x has rank %d, the weights need rank %d",
                     n->name, x->rank, p->spatial + 2);
  }
  /* NCHW view of the input, whatever the physical layout */
  op_shape xs = *x;
  if (nhwc) {
    xs.dims[1] = x->dims[x->rank - 1];
    for (int d = 2; d < x->rank; d++) xs.dims[d] = x->dims[d - 1];
  }
  x = &xs;
  const int64_t in_c = p->in_c_per_group * p->group;
  if (x->dims[1] >= 0 && x->dims[1] != in_c) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                     "QLinearConv node '%s': input x has %lld channels, the weights expect %lld (group %lld)", n->name,
                     (long long)x->dims[1], (long long)in_c, (long long)p->group);
  }
  out->dims[0] = x->dims[0];
  int64_t in_hw[2] = {1, x->dims[2]}, out_hw[2] = {1, 1}, pad[2] = {0, 0};
  if (p->spatial == 2) {
    in_hw[0] = x->dims[2];
    in_hw[1] = x->dims[3];
  }
  q8rt_status st;
  for (int a = 2 - p->spatial; a < 2; a++) {
    if ((st = op_window_output(&p->win, n, a - (2 - p->spatial), in_hw[a], &out_hw[a], &pad[a], NULL, err)) !=
        Q8RT_OK) {
      return st;
    }
    out->dims[(nhwc ? 1 : 2) + a - (2 - p->spatial)] = out_hw[a];
  }
  if (!concrete) return Q8RT_OK;
  qconv_geom *gm = geom;
  q8rt_q8_conv_ref_params *r = &gm->ref;
  memset(r, 0, sizeof(*r));
  r->batch = (size_t)x->dims[0];
  r->groups = (size_t)p->group;
  r->in_c = (size_t)in_c;
  r->in_h = (size_t)in_hw[0];
  r->in_w = (size_t)in_hw[1];
  r->out_c = (size_t)p->out_c;
  r->out_h = (size_t)out_hw[0];
  r->out_w = (size_t)out_hw[1];
  r->kernel_h = (size_t)p->kernel[0];
  r->kernel_w = (size_t)p->kernel[1];
  r->stride_h = (size_t)p->stride[0];
  r->stride_w = (size_t)p->stride[1];
  r->dilation_h = (size_t)p->dilation[0];
  r->dilation_w = (size_t)p->dilation[1];
  r->pad_top = (size_t)pad[0];
  r->pad_left = (size_t)pad[1];
  r->x_signed = p->x_type == Q8RT_DTYPE_INT8;
  r->y_signed = p->y_type == Q8RT_DTYPE_INT8;
  r->x_zero_point = p->x_zero_point;
  r->y_zero_point = p->y_zero_point;
  r->y_lo = (float)(p->y_min - p->y_zero_point);
  r->y_hi = (float)(p->y_max - p->y_zero_point);
  r->w = p->w;
  r->bias = p->bias;
  r->scale = p->scale;
  if (p->fast.path == CONV_PATH_DW_CHW || p->fast.path == CONV_PATH_GEMM_CHW)
    conv_fast_geom_init(&p->fast, r, &gm->fast);
  if (nhwc) {
    conv_fast_geom_init(&p->fast, r, &gm->fast);
    if (p->fast.path == CONV_PATH_XNN) {
      /* pads resolved for these input sizes; XNNPACK needs all four */
      const int64_t eh = (int64_t)((r->kernel_h - 1) * r->dilation_h + 1),
                    ew = (int64_t)((r->kernel_w - 1) * r->dilation_w + 1);
      const int64_t ph = ((int64_t)r->out_h - 1) * (int64_t)r->stride_h + eh - (int64_t)r->in_h - (int64_t)r->pad_top;
      const int64_t pw = ((int64_t)r->out_w - 1) * (int64_t)r->stride_w + ew - (int64_t)r->in_w - (int64_t)r->pad_left;
      gm->fast.pad_bottom = (size_t)(ph > 0 ? ph : 0);
      gm->fast.pad_right = (size_t)(pw > 0 ? pw : 0);
    }
  }
  return Q8RT_OK;
}

static size_t qconv_workspace(const void *params, const void *geom, size_t threads) {
  const qconv_params *p = params;
  const qconv_geom *gm = geom;
  if (p->fast.path == CONV_PATH_REF || p->fast.path == CONV_PATH_XNN) return 0;
  return conv_fast_workspace(&p->fast, &gm->fast, threads);
}

static q8rt_status qconv_bind(const void *params, void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                              const op_exec_ctx *ctx, q8rt_error *err) {
  const qconv_params *p = params;
  qconv_geom *gm = geom;
  if (p->fast.path == CONV_PATH_REF) return Q8RT_OK;
  if (p->fast.path == CONV_PATH_XNN) {
    q8rt_xnn_conv_desc d = p->xnn;
    const q8rt_q8_conv_ref_params *r = &gm->ref;
    d.batch = r->batch;
    d.in_h = r->in_h;
    d.in_w = r->in_w;
    d.pad_top = (uint32_t)r->pad_top;
    d.pad_left = (uint32_t)r->pad_left;
    d.pad_bottom = (uint32_t)gm->fast.pad_bottom;
    d.pad_right = (uint32_t)gm->fast.pad_right;
    q8rt_xnn_conv *op = NULL;
    q8rt_status st = q8rt_xnn_conv_create(&d, ctx->allocator, in[0].data, out[0].data, ctx->threadpool, &op, err);
    if (st != Q8RT_OK) return st;
    gm->fast.xnn = op;
    return Q8RT_OK;
  }
  conv_fast_bind(&p->fast, &gm->fast, in[0].data, workspace);
  return Q8RT_OK;
}

static void qconv_unbind(const void *params, void *geom) {
  const qconv_params *p = params;
  qconv_geom *gm = geom;
  if (p->fast.path == CONV_PATH_XNN && gm->fast.xnn != NULL) {
    q8rt_xnn_conv_free(gm->fast.xnn);
    gm->fast.xnn = NULL;
  }
}

static void qconv_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx) {
  const qconv_params *p = params;
  const qconv_geom *gm = geom;
  switch (p->fast.path) {
    case CONV_PATH_XNN: q8rt_xnn_conv_run(gm->fast.xnn, NULL); break;
    case CONV_PATH_GEMM:
    case CONV_PATH_DW:
    case CONV_PATH_DW_CHW:
    case CONV_PATH_GEMM_CHW: conv_fast_run(&p->fast, &gm->fast, in[0].data, out[0].data, workspace, ctx); break;
    default: p->fast.ref(&gm->ref, in[0].data, out[0].data); break;
  }
}

/* A fused island's table goes into the fast paths' output stage (per output channel or one). */
static int qconv_fuse_table(void *params, const uint8_t *table, size_t channels, q8rt_dtype out_type) {
  qconv_params *p = params;
  if (p->fast.path == CONV_PATH_NONE || p->fast.path == CONV_PATH_REF || p->fast.path == CONV_PATH_XNN ||
      p->fast.table != NULL)
    return 0;
  if (channels != 1 && channels != (size_t)p->out_c) return 0;
  p->fast.table = table;
  p->fast.table_channels = channels;
  p->out_type = out_type;
  return 1;
}

/* Only the NHWC GEMM path writes through a row stride; the others keep their outputs dense. */
static int qconv_strided_output(const void *params, void *geom, size_t row_stride) {
  const qconv_params *p = params;
  qconv_geom *gm = geom;
  return conv_fast_set_y_stride(&p->fast, &gm->fast, row_stride);
}

/* A table after the output stage's own (a Concat's requantization): table[own[v]] per channel. */
static int qconv_compose_table(void *params, const uint8_t *table, q8rt_pool *pool) {
  qconv_params *p = params;
  if (p->fast.path == CONV_PATH_NONE || p->fast.path == CONV_PATH_REF || p->fast.path == CONV_PATH_XNN) return 0;
  if (p->fast.table == NULL) {
    p->fast.table = table;
    p->fast.table_channels = 1;
    p->out_type = p->y_type; /* the Concat's type (the planner checks) */
    return 1;
  }
  const size_t n = p->fast.table_channels * 256;
  uint8_t *t = q8rt_pool_alloc(pool, n, 64);
  if (t == NULL) return 0;
  for (size_t i = 0; i < n; i++) t[i] = table[p->fast.table[i]];
  p->fast.table = t;
  return 1;
}

const op_def q8rt_op_qlinear_conv = {
    .op_type = "QLinearConv",
    .domain = "",
    .min_opset = 10,
    .prepare = qconv_prepare,
    .infer = qconv_infer,
    .workspace = qconv_workspace,
    .bind = qconv_bind,
    .unbind = qconv_unbind,
    .run = qconv_run,
    .fuse_table = qconv_fuse_table,
    .strided_output = qconv_strided_output,
    .compose_table = qconv_compose_table,
};
