/* QuantizeLinear and DequantizeLinear (opsets 10, 13, 19, 21): per-tensor, per-axis (any axis,
 * negative axes) and blocked (block_size) scales; 8- and 16-bit types; int32 input for
 * DequantizeLinear. Both share the parameter handling; the kernels are in kernels/f32-qint-vcvt and
 * kernels/qint-f32-vcvt. */
#include <string.h>

#include "op.h"
#include "op_util.h"
#include "q8rt-isa.h"
#include "q8rt-kernels.h"

enum qdq_mode { QDQ_PER_TENSOR, QDQ_PER_AXIS, QDQ_BLOCKED };

typedef struct qdq_params {
  int quantize; /* 1: QuantizeLinear, 0: DequantizeLinear */
  enum qdq_mode mode;
  int64_t axis; /* as written in the model; normalized against the rank in infer */
  int64_t block_size;
  q8rt_dtype qtype; /* the quantized type */
  const ir_tensor *scale;
  int64_t count; /* number of scales */
  const float *scales;
  int32_t *zero_points;                /* [count] */
  q8rt_f32_qint_vcvt_ukernel_fn q_fn;  /* QuantizeLinear: the member of qtype */
  q8rt_qint_f32_vcvt_ukernel_fn dq_fn; /* DequantizeLinear: the member of qtype */
} qdq_params;

/* The kernel lists of both vcvt families (best first per type). */
#define QT_DTYPE_qu8 Q8RT_DTYPE_UINT8
#define QT_DTYPE_qs8 Q8RT_DTYPE_INT8
#define QT_DTYPE_qu16 Q8RT_DTYPE_UINT16
#define QT_DTYPE_qs16 Q8RT_DTYPE_INT16
#define QT_DTYPE_qs32 Q8RT_DTYPE_INT32

static const struct {
  uint32_t isa;
  int32_t qtype;
  q8rt_f32_qint_vcvt_ukernel_fn fn;
  const char *name;
} g_quantize[] = {
#define Q8RT_F32_QINT_VCVT_UKERNEL(isa, fn, qt) {isa, QT_DTYPE_##qt, {.qt = fn}, #fn},
#include "f32-qint-vcvt/f32-qint-vcvt.inc"
#undef Q8RT_F32_QINT_VCVT_UKERNEL
};

static const struct {
  uint32_t isa;
  int32_t qtype;
  q8rt_qint_f32_vcvt_ukernel_fn fn;
  const char *name;
} g_dequantize[] = {
#define Q8RT_QINT_F32_VCVT_UKERNEL(isa, fn, qt) {isa, QT_DTYPE_##qt, {.qt = fn}, #fn},
#include "qint-f32-vcvt/qint-f32-vcvt.inc"
#undef Q8RT_QINT_F32_VCVT_UKERNEL
};

typedef struct qdq_geom {
  size_t outer, axis_dim, inner; /* x viewed as [outer][axis_dim][inner] */
  size_t total;
} qdq_geom;

static bool is_q_output_type(int32_t t) {
  return t == Q8RT_DTYPE_UINT8 || t == Q8RT_DTYPE_INT8 || t == Q8RT_DTYPE_UINT16 || t == Q8RT_DTYPE_INT16;
}

q8rt_f32_qint_vcvt_ukernel_fn op_quantize_kernel(int32_t qtype, uint32_t isa, q8rt_backend backend, const char **name) {
  for (size_t i = 0; i < sizeof(g_quantize) / sizeof(g_quantize[0]); i++) {
    if (g_quantize[i].qtype == qtype && op_isa_usable(g_quantize[i].isa, isa, backend)) {
      *name = g_quantize[i].name;
      return g_quantize[i].fn;
    }
  }
  *name = NULL;
  return (q8rt_f32_qint_vcvt_ukernel_fn){.qu8 = NULL};
}

q8rt_qint_f32_vcvt_ukernel_fn op_dequantize_kernel(int32_t qtype, uint32_t isa, q8rt_backend backend,
                                                   const char **name) {
  for (size_t i = 0; i < sizeof(g_dequantize) / sizeof(g_dequantize[0]); i++) {
    if (g_dequantize[i].qtype == qtype && op_isa_usable(g_dequantize[i].isa, isa, backend)) {
      *name = g_dequantize[i].name;
      return g_dequantize[i].fn;
    }
  }
  *name = NULL;
  return (q8rt_qint_f32_vcvt_ukernel_fn){.qu8 = NULL};
}

static q8rt_status qdq_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err, int quantize) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  if (n->n_inputs < 2 || n->n_inputs > 3 || n->n_outputs != 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 2 or 3 inputs and 1 output", n->op_type,
                     n->name);
  }
  qdq_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->quantize = quantize;
  q8rt_status st;
  if ((st = ir_attr_int(n, "axis", 1, &p->axis, err)) != Q8RT_OK) return st;
  if ((st = ir_attr_int(n, "block_size", 0, &p->block_size, err)) != Q8RT_OK) return st;
  if (p->block_size < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'block_size' is negative", n->op_type,
                     n->name);
  }
  if (p->block_size > 0 && n->opset < 21) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'block_size' needs opset 21 (model: %d)",
                     n->op_type, n->name, n->opset);
  }

  const ir_tensor *scale;
  if ((st = op_require_constant(g, n, 1, "scale", &scale, err)) != Q8RT_OK) return st;
  if ((st = op_check_scales(n, "scale", scale, err)) != Q8RT_OK) return st;
  p->scale = scale;
  p->scales = scale->data;
  p->count = scale->count;
  if (scale->count == 1 && scale->rank <= 1) {
    p->mode = QDQ_PER_TENSOR;
  } else if (p->block_size > 0) {
    p->mode = QDQ_BLOCKED;
  } else if (scale->rank == 1) {
    p->mode = QDQ_PER_AXIS;
  } else {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': scale of rank %d needs block_size (per-axis scales are 1-D)", n->op_type, n->name,
                     scale->rank);
  }
  if (p->mode != QDQ_PER_TENSOR && n->opset < 13) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': non-scalar scale needs opset 13 (model: %d)",
                     n->op_type, n->name, n->opset);
  }

  /* The quantized type: from the zero point, else output_dtype (QuantizeLinear-21), else the
   * input's type (DequantizeLinear), else uint8. */
  const ir_value *zpv = ir_node_input(g, n, 2);
  const ir_tensor *zp = NULL;
  if (zpv != NULL) {
    if ((st = op_require_constant(g, n, 2, "zero_point", &zp, err)) != Q8RT_OK) return st;
  }
  int64_t output_dtype = 0;
  if (quantize && (st = ir_attr_int(n, "output_dtype", 0, &output_dtype, err)) != Q8RT_OK) return st;
  const ir_value *x = ir_node_input(g, n, 0);
  if (x == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input 0 is missing", n->op_type, n->name);
  }
  int32_t qtype;
  if (zp != NULL) {
    qtype = zp->dtype;
  } else if (output_dtype != 0) {
    qtype = (int32_t)output_dtype;
  } else if (!quantize) {
    qtype = x->dtype;
  } else {
    qtype = Q8RT_DTYPE_UINT8;
  }
  if (quantize && output_dtype != 0 && output_dtype != qtype) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': output_dtype %s differs from the zero point's type %s", n->op_type, n->name,
                     q8rt_onnx_type_name((int32_t)output_dtype), q8rt_onnx_type_name(qtype));
  }
  bool ok_type = is_q_output_type(qtype) || (!quantize && qtype == Q8RT_DTYPE_INT32);
  if (!ok_type) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': quantized type %s is not supported (q8rt supports uint8, int8, uint16, int16%s)",
                     n->op_type, n->name, q8rt_onnx_type_name(qtype), quantize ? "" : ", int32");
  }
  if ((qtype == Q8RT_DTYPE_UINT16 || qtype == Q8RT_DTYPE_INT16) && n->opset < 21) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': type %s needs opset 21 (model: %d)", n->op_type,
                     n->name, q8rt_onnx_type_name(qtype), n->opset);
  }
  p->qtype = (q8rt_dtype)qtype;

  p->zero_points = q8rt_pool_array(ctx->pool, (size_t)p->count, sizeof(int32_t));
  if (p->zero_points == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if (zp != NULL) {
    if (zp->count != scale->count) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "%s node '%s': zero_point has %lld elements (rank %d), scale has %lld (rank %d)", n->op_type,
                       n->name, (long long)zp->count, zp->rank, (long long)scale->count, scale->rank);
    }
    for (int64_t i = 0; i < zp->count; i++) {
      int32_t v = 0;
      switch (zp->dtype) {
        case Q8RT_DTYPE_UINT8: v = ((const uint8_t *)zp->data)[i]; break;
        case Q8RT_DTYPE_INT8: v = ((const int8_t *)zp->data)[i]; break;
        case Q8RT_DTYPE_UINT16: v = ((const uint16_t *)zp->data)[i]; break;
        case Q8RT_DTYPE_INT16: v = ((const int16_t *)zp->data)[i]; break;
        case Q8RT_DTYPE_INT32: v = ((const int32_t *)zp->data)[i]; break;
        default: break;
      }
      if (qtype == Q8RT_DTYPE_INT32 && v != 0) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                         "%s node '%s': an int32 input needs zero_point 0 (zero_point[%lld] is %d)", n->op_type,
                         n->name, (long long)i, v);
      }
      p->zero_points[i] = v;
    }
  }
  /* The first usable entry for the type: every type has a scalar twin at the end of its list. */
  const char *name = NULL;
  if (quantize) {
    p->q_fn = op_quantize_kernel(qtype, ctx->isa, ctx->backend, &name);
  } else {
    p->dq_fn = op_dequantize_kernel(qtype, ctx->isa, ctx->backend, &name);
  }
  if (name == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': no kernel for %s", n->op_type, n->name,
                     q8rt_onnx_type_name(qtype));
  }
  ctx->kernel = name + 5; /* drop the "q8rt_" prefix */
  ctx->reason = p->mode == QDQ_PER_TENSOR ? "per-tensor" : p->mode == QDQ_PER_AXIS ? "per-axis" : "blocked";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status quantize_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return qdq_prepare(ctx, out, err, 1);
}
static q8rt_status dequantize_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return qdq_prepare(ctx, out, err, 0);
}

static q8rt_status qdq_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                             void *geom, q8rt_error *err) {
  const qdq_params *p = params;
  const op_shape *x = &in[0];
  q8rt_dtype want_in = p->quantize ? Q8RT_DTYPE_FLOAT32 : p->qtype;
  if (x->dtype != Q8RT_DTYPE_UNDEFINED && x->dtype != want_in) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input x is %s, expected %s", n->op_type, n->name,
                     q8rt_onnx_type_name(x->dtype), q8rt_onnx_type_name(want_in));
  }
  *out = *x;
  out->dtype = p->quantize ? p->qtype : Q8RT_DTYPE_FLOAT32;
  if (x->rank < 0) return Q8RT_OK;

  int64_t axis = p->axis;
  if (p->mode != QDQ_PER_TENSOR) {
    if (axis < -x->rank || axis >= x->rank) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': axis %lld is out of range for rank %d", n->op_type,
                       n->name, (long long)p->axis, x->rank);
    }
    if (axis < 0) axis += x->rank;
    const int64_t d = x->dims[axis];
    if (p->mode == QDQ_PER_AXIS && d >= 0 && d != p->count) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': scale has %lld elements but axis %lld has size %lld",
                       n->op_type, n->name, (long long)p->count, (long long)axis, (long long)d);
    }
    if (p->mode == QDQ_BLOCKED) {
      if (p->scale->rank != x->rank) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': blocked scale has rank %d, input has rank %d",
                         n->op_type, n->name, p->scale->rank, x->rank);
      }
      for (int i = 0; i < x->rank; i++) {
        if (x->dims[i] < 0) continue;
        int64_t want = i == axis ? (x->dims[i] + p->block_size - 1) / p->block_size : x->dims[i];
        if (p->scale->dims[i] != want) {
          return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                           "%s node '%s': blocked scale dimension %d is %lld, expected %lld (block_size %lld)",
                           n->op_type, n->name, i, (long long)p->scale->dims[i], (long long)want,
                           (long long)p->block_size);
        }
      }
    }
  }
  if (!concrete) return Q8RT_OK;
  qdq_geom *gm = geom;
  int64_t total;
  if (!q8rt_shape_elements(x->dims, x->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input is too large", n->op_type, n->name);
  }
  gm->total = (size_t)total;
  gm->outer = 1;
  gm->axis_dim = 1;
  gm->inner = (size_t)total;
  if (p->mode != QDQ_PER_TENSOR) {
    size_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= (size_t)x->dims[i];
    for (int i = (int)axis + 1; i < x->rank; i++) inner *= (size_t)x->dims[i];
    gm->outer = outer;
    gm->axis_dim = (size_t)x->dims[axis];
    gm->inner = inner;
  }
  return Q8RT_OK;
}

/* One run of n elements sharing scale index s. */
static void quantize_run_span(const qdq_params *p, size_t s, const float *x, void *y, size_t n) {
  q8rt_f32_qint_vcvt_params kp;
  int32_t qmin, qmax;
  q8rt_dtype_range(p->qtype, &qmin, &qmax);
  kp.scale = p->scales[s];
  kp.zero_point = p->zero_points[s];
  kp.lo = (float)(qmin - kp.zero_point);
  kp.hi = (float)(qmax - kp.zero_point);
  switch (p->qtype) {
    case Q8RT_DTYPE_UINT8: p->q_fn.qu8(n, x, y, &kp); break;
    case Q8RT_DTYPE_INT8: p->q_fn.qs8(n, x, y, &kp); break;
    case Q8RT_DTYPE_UINT16: p->q_fn.qu16(n, x, y, &kp); break;
    case Q8RT_DTYPE_INT16: p->q_fn.qs16(n, x, y, &kp); break;
    default: break;
  }
}

static void dequantize_run_span(const qdq_params *p, size_t s, const void *x, float *y, size_t n) {
  q8rt_qint_f32_vcvt_params kp = {p->scales[s], p->zero_points[s]};
  switch (p->qtype) {
    case Q8RT_DTYPE_UINT8: p->dq_fn.qu8(n, x, y, &kp); break;
    case Q8RT_DTYPE_INT8: p->dq_fn.qs8(n, x, y, &kp); break;
    case Q8RT_DTYPE_UINT16: p->dq_fn.qu16(n, x, y, &kp); break;
    case Q8RT_DTYPE_INT16: p->dq_fn.qs16(n, x, y, &kp); break;
    case Q8RT_DTYPE_INT32: p->dq_fn.qs32(n, x, y, &kp); break;
    default: break;
  }
}

typedef struct qdq_job {
  const qdq_params *p;
  const qdq_geom *gm;
  const char *x;
  char *y;
  size_t in_es, out_es;
} qdq_job;

/* Elements [begin, end) of x seen as [outer][axis_dim][inner]: within one (o, a) row every
 * element shares a scale except in blocked mode, where the scale also varies with the inner
 * index. */
static void qdq_range(void *arg, size_t begin, size_t end) {
  const qdq_job *j = arg;
  const qdq_params *p = j->p;
  const qdq_geom *gm = j->gm;
  const size_t in_es = j->in_es, out_es = j->out_es;
  const char *x = j->x;
  char *y = j->y;
  size_t e = begin;
  while (e < end) {
    const size_t row = e / gm->inner, col = e % gm->inner;
    const size_t o = row / gm->axis_dim, a = row % gm->axis_dim;
    const size_t n = gm->inner - col < end - e ? gm->inner - col : end - e;
    if (p->mode == QDQ_BLOCKED) {
      const size_t nb = (gm->axis_dim + (size_t)p->block_size - 1) / (size_t)p->block_size;
      const size_t srow = (o * nb + a / (size_t)p->block_size) * gm->inner;
      for (size_t i = col; i < col + n; i++) {
        const size_t at = row * gm->inner + i;
        if (p->quantize) {
          quantize_run_span(p, srow + i, (const float *)(const void *)(x + at * in_es), y + at * out_es, 1);
        } else {
          dequantize_run_span(p, srow + i, x + at * in_es, (float *)(void *)(y + at * out_es), 1);
        }
      }
    } else {
      const size_t sc = p->mode == QDQ_PER_AXIS ? a : 0;
      if (p->quantize) {
        quantize_run_span(p, sc, (const float *)(const void *)(x + e * in_es), y + e * out_es, n);
      } else {
        dequantize_run_span(p, sc, x + e * in_es, (float *)(void *)(y + e * out_es), n);
      }
    }
    e += n;
  }
}

#define QDQ_GRAIN 8192 /* elements: ~1.5 us on the AVX2 kernels */

static void qdq_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  (void)workspace;
  const qdq_params *p = params;
  const qdq_geom *gm = geom;
  if (gm->inner == 0) return;
  qdq_job j = {
      p, gm, in[0].data, out[0].data, q8rt_dtype_size(in[0].shape->dtype), q8rt_dtype_size(out[0].shape->dtype)};
  op_parallel_range(ctx, gm->outer * gm->axis_dim * gm->inner, QDQ_GRAIN, qdq_range, &j);
}

/* Per-tensor: every element is converted alone, so the layout does not matter (per-axis would
 * need its axis remapped: left NCHW). */
static const void *qdq_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool,
                            const char **why) {
  (void)g, (void)n;
  const qdq_params *p = params;
  if (p->mode != QDQ_PER_TENSOR) {
    *why = "per-axis or blocked quantization";
    return NULL;
  }
  qdq_params *q = q8rt_pool_alloc(pool, sizeof(*q), 16);
  if (q == NULL) return NULL;
  *q = *p;
  return q;
}

const op_def q8rt_op_quantize_linear = {
    .op_type = "QuantizeLinear",
    .domain = "",
    .min_opset = 10,
    .prepare = quantize_prepare,
    .infer = qdq_infer,
    .run = qdq_run,
    .nhwc_params = qdq_nhwc,
};
const op_def q8rt_op_dequantize_linear = {
    .op_type = "DequantizeLinear",
    .domain = "",
    .min_opset = 10,
    .prepare = dequantize_prepare,
    .infer = qdq_infer,
    .run = qdq_run,
    .nhwc_params = qdq_nhwc,
};
