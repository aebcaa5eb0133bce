/* ArgMax and ArgMin (float32 and the integer types) to int64: axis, keepdims (default 1),
 * select_last_index (opset 12). Ties give the first index, or the last with select_last_index,
 * as ONNX Runtime. A NaN compares false with everything, so it is never picked unless first
 * (ORT gives the same; tested). */
#include <math.h>
#include <string.h>

#include "op.h"
#include "op_util.h"

typedef struct arg_params {
  int is_max, keepdims, last;
  int64_t axis;
} arg_params;

typedef struct arg_geom {
  size_t outer, n, inner;
  q8rt_dtype dtype;
} arg_geom;

static q8rt_status arg_prepare_kind(op_prepare_ctx *ctx, void **out, q8rt_error *err, int is_max) {
  const ir_node *n = ctx->node;
  if (n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0] < 0 || n->outputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 1 input and 1 output (has %d and %d)",
                     n->op_type, n->name, n->n_inputs, n->n_outputs);
  }
  arg_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->is_max = is_max;
  int64_t v;
  q8rt_status st;
  if ((st = ir_attr_int(n, "axis", 0, &p->axis, err)) != Q8RT_OK) return st;
  if ((st = ir_attr_int(n, "keepdims", 1, &v, err)) != Q8RT_OK) return st;
  p->keepdims = v != 0;
  if ((st = ir_attr_int(n, "select_last_index", 0, &v, err)) != Q8RT_OK) return st;
  p->last = v != 0;
  ctx->kernel = is_max ? "argmax__scalar" : "argmin__scalar";
  ctx->reason = p->last ? "last index of ties" : "first index of ties";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status argmax_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return arg_prepare_kind(ctx, out, err, 1);
}
static q8rt_status argmin_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return arg_prepare_kind(ctx, out, err, 0);
}

static q8rt_status arg_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                             void *geom, q8rt_error *err) {
  const arg_params *p = params;
  const op_shape *x = &in[0];
  const q8rt_dtype t = x->dtype;
  if (t != Q8RT_DTYPE_FLOAT32 && t != Q8RT_DTYPE_INT64 && t != Q8RT_DTYPE_INT32 && t != Q8RT_DTYPE_INT16 &&
      t != Q8RT_DTYPE_UINT16 && t != Q8RT_DTYPE_INT8 && t != Q8RT_DTYPE_UINT8) {
    return q8rt_fail(err, t == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input is %s (q8rt supports float32 and integers)", n->op_type, n->name,
                     q8rt_onnx_type_name(t));
  }
  memset(out, 0, sizeof(*out));
  out->dtype = Q8RT_DTYPE_INT64;
  out->rank = -1;
  if (x->rank < 0) return Q8RT_OK;
  int64_t axis;
  if (!op_normalize_axis(p->axis, x->rank, &axis)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': axis %lld is out of range for rank %d", n->op_type,
                     n->name, (long long)p->axis, x->rank);
  }
  int r = 0;
  for (int d = 0; d < x->rank; d++) {
    if (d != axis) {
      out->dims[r++] = x->dims[d];
    } else if (p->keepdims) {
      out->dims[r++] = 1;
    }
  }
  out->rank = r;
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(x->dims, x->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input is too large", n->op_type, n->name);
  }
  if (x->dims[axis] == 0 && total == 0 && op_shape_count(out) > 0) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': axis %lld is empty (no index to return)", n->op_type,
                     n->name, (long long)axis);
  }
  arg_geom *gm = geom;
  gm->outer = gm->inner = 1;
  for (int d = 0; d < axis; d++) gm->outer *= (size_t)x->dims[d];
  for (int d = (int)axis + 1; d < x->rank; d++) gm->inner *= (size_t)x->dims[d];
  gm->n = (size_t)x->dims[axis];
  gm->dtype = t;
  return Q8RT_OK;
}

/* One output row: for every inner position the index of the best along the axis. */
#define ARG_LOOP(T)                                                                                           \
  do {                                                                                                        \
    const T *x = in[0].data;                                                                                  \
    for (size_t o = 0; o < gm->outer; o++) {                                                                  \
      const T *base = x + o * gm->n * gm->inner;                                                              \
      for (size_t j = 0; j < gm->inner; j++) {                                                                \
        T best = base[j];                                                                                     \
        int64_t bi = 0;                                                                                       \
        for (size_t i = 1; i < gm->n; i++) {                                                                  \
          const T v = base[i * gm->inner + j];                                                                \
          const int better = p->is_max ? (p->last ? v >= best : v > best) : (p->last ? v <= best : v < best); \
          if (better) {                                                                                       \
            best = v;                                                                                         \
            bi = (int64_t)i;                                                                                  \
          }                                                                                                   \
        }                                                                                                     \
        *y++ = bi;                                                                                            \
      }                                                                                                       \
    }                                                                                                         \
  } while (0)

/* A contiguous float32 row (the class axis last: classifiers, CTC decoding) in two passes that
 * give the sequential loop's answer: the best value by 8 lanes that each keep
 * `v > m ? v : m` (or <), which GCC vectorizes, then the first (or, with select_last_index,
 * the last) index holding a value == that best. A NaN never compares better, so the best is the
 * sequential loop's; only a NaN in front, which the sequential loop keeps, is taken first. */
static int64_t arg_row_f32(const float *x, size_t n, int is_max, int last) {
  if (isnan(x[0])) return 0;
  float m[8];
  for (size_t j = 0; j < 8; j++) m[j] = x[0];
  size_t i = 0;
  if (is_max) {
    for (; i + 8 <= n; i += 8) {
      for (size_t j = 0; j < 8; j++) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
    }
    for (; i < n; i++) m[0] = x[i] > m[0] ? x[i] : m[0];
    for (size_t j = 1; j < 8; j++) m[0] = m[j] > m[0] ? m[j] : m[0];
  } else {
    for (; i + 8 <= n; i += 8) {
      for (size_t j = 0; j < 8; j++) m[j] = x[i + j] < m[j] ? x[i + j] : m[j];
    }
    for (; i < n; i++) m[0] = x[i] < m[0] ? x[i] : m[0];
    for (size_t j = 1; j < 8; j++) m[0] = m[j] < m[0] ? m[j] : m[0];
  }
  const float best = m[0];
  if (last) {
    for (size_t k = n; k-- > 0;) {
      if (x[k] == best) return (int64_t)k;
    }
  } else {
    for (size_t k = 0; k < n; k++) {
      if (x[k] == best) return (int64_t)k;
    }
  }
  return 0; /* not reached: best is one of the row's values */
}

static void arg_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  (void)workspace, (void)ctx;
  const arg_params *p = params;
  const arg_geom *gm = geom;
  int64_t *y = out[0].data;
  if (gm->n == 0) return;
  if (gm->dtype == Q8RT_DTYPE_FLOAT32 && gm->inner == 1) {
    const float *x = in[0].data;
    for (size_t o = 0; o < gm->outer; o++) y[o] = arg_row_f32(x + o * gm->n, gm->n, p->is_max, p->last);
    return;
  }
  switch (gm->dtype) {
    case Q8RT_DTYPE_FLOAT32: ARG_LOOP(float); break;
    case Q8RT_DTYPE_INT64: ARG_LOOP(int64_t); break;
    case Q8RT_DTYPE_INT32: ARG_LOOP(int32_t); break;
    case Q8RT_DTYPE_INT16: ARG_LOOP(int16_t); break;
    case Q8RT_DTYPE_UINT16: ARG_LOOP(uint16_t); break;
    case Q8RT_DTYPE_INT8: ARG_LOOP(int8_t); break;
    case Q8RT_DTYPE_UINT8: ARG_LOOP(uint8_t); break;
    default: break;
  }
}

const op_def q8rt_op_argmax = {
    .op_type = "ArgMax", .domain = "", .min_opset = 1, .prepare = argmax_prepare, .infer = arg_infer, .run = arg_run};
const op_def q8rt_op_argmin = {
    .op_type = "ArgMin", .domain = "", .min_opset = 1, .prepare = argmin_prepare, .infer = arg_infer, .run = arg_run};
