/* Scaler (ai.onnx.ml): y = (x - offset[j]) * scale[j] as float32, the preprocessing step that
 * scikit-learn converters (skl2onnx's StandardScaler, MinMaxScaler, ...) put in front of a model.
 * X is float32, int32 or int64; Y is float32 of X's shape.
 *
 * ONNX Runtime's semantics, followed exactly: offset and scale are FLOATS of one length, either 1
 * (every element) or the feature count F, where F is dim 0 of a 1-D X and dim 1 otherwise, and
 * element i (in C order) takes feature i mod F (for X of rank 3 or more that is not dim 1's index:
 * ORT's rule, kept). The arithmetic is float32: an integer element is converted to float32 first
 * (rounded to nearest), then x - offset, then the product, each rounded once, which is the
 * expression ORT evaluates for float, int32 and int64 inputs. A scalar X is refused, as ORT does. */
#include <string.h>

#include "op.h"

typedef struct scaler_params {
  const float *offset;
  const float *scale;
  size_t count; /* 1 or the feature count */
} scaler_params;

typedef struct scaler_geom {
  size_t elements;
  size_t features; /* the period of the feature index: 1 when count is 1 */
} scaler_geom;

_Static_assert(sizeof(scaler_geom) <= Q8RT_GEOM_BYTES, "scaler_geom too large");

static q8rt_status scaler_floats(const ir_node *n, const char *name, const ir_attr **out, q8rt_error *err) {
  const ir_attr *a = ir_node_attr(n, name);
  if (a == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Scaler node '%s': attribute '%s' is missing", n->name, name);
  }
  if (a->type != IR_ATTR_FLOATS || a->count == 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Scaler node '%s': attribute '%s' must be a non-empty FLOATS list",
                     n->name, name);
  }
  *out = a;
  return Q8RT_OK;
}

static q8rt_status scaler_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  if (n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0] < 0 || n->outputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Scaler node '%s': expects 1 input (X) and 1 output (Y)", n->name);
  }
  const ir_attr *offset, *scale;
  q8rt_status st;
  if ((st = scaler_floats(n, "scale", &scale, err)) != Q8RT_OK) return st;
  if ((st = scaler_floats(n, "offset", &offset, err)) != Q8RT_OK) return st;
  if (offset->count != scale->count) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "Scaler node '%s': offset has %zu values and scale %zu (they must be of one length)", n->name,
                     offset->count, scale->count);
  }
  scaler_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  float *v = q8rt_pool_alloc(ctx->pool, 2 * scale->count * sizeof(float), 64);
  if (p == NULL || v == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "Scaler node '%s': out of memory", n->name);
  }
  memcpy(v, offset->floats, scale->count * sizeof(float));
  memcpy(v + scale->count, scale->floats, scale->count * sizeof(float));
  p->offset = v;
  p->scale = v + scale->count;
  p->count = scale->count;
  ctx->kernel = "scaler__scalar";
  ctx->reason = "(x - offset) * scale per element in float32, ONNX Runtime's expression";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status scaler_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                                void *geom, q8rt_error *err) {
  const scaler_params *p = params;
  const q8rt_dtype t = in[0].dtype;
  if (t != Q8RT_DTYPE_FLOAT32 && t != Q8RT_DTYPE_INT32 && t != Q8RT_DTYPE_INT64) {
    return q8rt_fail(err, t == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                     "Scaler node '%s': X is %s (q8rt supports float32, int32 and int64 here)", n->name,
                     q8rt_onnx_type_name(t));
  }
  *out = in[0];
  out->value = NULL;
  out->dtype = Q8RT_DTYPE_FLOAT32;
  if (in[0].rank == 0) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Scaler node '%s': X is a scalar (it needs at least one dimension)",
                     n->name);
  }
  if (in[0].rank < 0) return Q8RT_OK;
  const int64_t f = in[0].dims[in[0].rank == 1 ? 0 : 1];
  if (p->count != 1 && f >= 0 && (uint64_t)f != p->count) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                     "Scaler node '%s': offset and scale have %zu values; X has %lld features (dim %d), and "
                     "they must have that many or 1",
                     n->name, p->count, (long long)f, in[0].rank == 1 ? 0 : 1);
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(in[0].dims, in[0].rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Scaler node '%s': X is too large", n->name);
  }
  scaler_geom *g = geom;
  g->elements = (size_t)total;
  g->features = p->count == 1 ? 1 : (size_t)f;
  return Q8RT_OK;
}

static void scaler_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                       const op_exec_ctx *ctx) {
  (void)workspace, (void)ctx;
  const scaler_params *p = params;
  const scaler_geom *g = geom;
  const float *off = p->offset, *sc = p->scale;
  float *y = out[0].data;
  const size_t f = g->features;
  /* j = i mod f, kept as a counter; an integer X converted to float first, as ORT does */
#define SCALER_LOOP(T)                                \
  do {                                                \
    const T *x = in[0].data;                          \
    for (size_t i = 0, j = 0; i < g->elements; i++) { \
      y[i] = ((float)x[i] - off[j]) * sc[j];          \
      if (++j == f) j = 0;                            \
    }                                                 \
  } while (0)
  switch (in[0].shape->dtype) {
    case Q8RT_DTYPE_INT32: SCALER_LOOP(int32_t); break;
    case Q8RT_DTYPE_INT64: SCALER_LOOP(int64_t); break;
    default: SCALER_LOOP(float); break;
  }
#undef SCALER_LOOP
}

const op_def q8rt_op_scaler = {.op_type = "Scaler",
                               .domain = "ai.onnx.ml",
                               .min_opset = 1,
                               .prepare = scaler_prepare,
                               .infer = scaler_infer,
                               .run = scaler_run};
