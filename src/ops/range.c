/* Range (float32, int16, int32, int64): start, limit and delta are scalars known before the run
 * (constants, or values computed when shapes are bound), since they decide the output's size.
 *
 * As ONNX Runtime: count = max(ceil((double)(limit - start) / delta), 0), the difference taken in
 * the element type; the values accumulate (v = start; v += delta), so float32 outputs carry
 * ORT's rounding. Zero delta and counts over Q8RT_MAX_ELEMENTS are refused naming the node. */
#include <math.h>
#include <string.h>

#include "data_common.h"

typedef struct range_geom {
  size_t count;
  q8rt_dtype dtype;
  unsigned char start[8], delta[8];
} range_geom;

static const char *const g_names[3] = {"start", "limit", "delta"};

static q8rt_status range_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 3, 3, 1, 1, err)) != Q8RT_OK) return st;
  for (int i = 1; i < 3; i++) {
    if (n->inputs[i] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Range node '%s': input %d (%s) is missing", n->name, i,
                       g_names[i]);
    }
  }
  ctx->kernel = "range__scalar";
  ctx->reason = "accumulating";
  *out = NULL;
  return Q8RT_OK;
}

static q8rt_status range_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                               void *geom, q8rt_error *err) {
  (void)params;
  const q8rt_dtype t = in[0].dtype;
  if (t != Q8RT_DTYPE_UNDEFINED && t != Q8RT_DTYPE_FLOAT32 && t != Q8RT_DTYPE_INT16 && t != Q8RT_DTYPE_INT32 &&
      t != Q8RT_DTYPE_INT64) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "Range node '%s': inputs are %s (q8rt supports float32, int16, int32, int64)", n->name,
                     q8rt_onnx_type_name(t));
  }
  int known = 1;
  for (int i = 0; i < 3; i++) {
    if (in[i].dtype != t) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Range node '%s': input %d (%s) is %s but start is %s", n->name,
                       i, g_names[i], q8rt_onnx_type_name(in[i].dtype), q8rt_onnx_type_name(t));
    }
    if (in[i].rank > 1 || (in[i].rank == 1 && in[i].dims[0] >= 0 && in[i].dims[0] != 1)) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Range node '%s': input %d (%s) must be a scalar", n->name, i,
                       g_names[i]);
    }
    known &= in[i].value != NULL;
  }
  out->dtype = t;
  out->rank = 1;
  out->dims[0] = -1;
  if (!known) {
    if (!concrete) return Q8RT_OK;
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "Range node '%s': start, limit and delta are computed at run time: not supported (q8rt needs "
                     "their values when shapes are bound)",
                     n->name);
  }
  double cnt;
  if (t == Q8RT_DTYPE_FLOAT32) {
    float s, l, d;
    memcpy(&s, in[0].value, 4);
    memcpy(&l, in[1].value, 4);
    memcpy(&d, in[2].value, 4);
    if (d == 0.0f) return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Range node '%s': delta is 0", n->name);
    cnt = ceil((double)(l - s) / (double)d);
  } else {
    const int64_t s = op_load_i64(in[0].value, t, 0), l = op_load_i64(in[1].value, t, 0),
                  d = op_load_i64(in[2].value, t, 0);
    if (d == 0) return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Range node '%s': delta is 0", n->name);
    /* the difference in the element type, as ORT (wrapping where it would overflow) */
    int64_t diff = (int64_t)((uint64_t)l - (uint64_t)s);
    if (t == Q8RT_DTYPE_INT32) diff = (int32_t)(uint32_t)diff;
    if (t == Q8RT_DTYPE_INT16) diff = (int16_t)(uint16_t)diff;
    cnt = ceil((double)diff / (double)d);
  }
  if (!(cnt <= (double)Q8RT_MAX_ELEMENTS) && !(cnt <= 0.0)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Range node '%s': %g elements (more than %lld, or not a number)", n->name,
                     cnt, (long long)Q8RT_MAX_ELEMENTS);
  }
  out->dims[0] = cnt > 0.0 ? (int64_t)cnt : 0;
  if (!concrete || geom == NULL) return Q8RT_OK;
  range_geom *gm = geom;
  gm->count = (size_t)out->dims[0];
  gm->dtype = t;
  memcpy(gm->start, in[0].value, q8rt_dtype_size(t));
  memcpy(gm->delta, in[2].value, q8rt_dtype_size(t));
  return Q8RT_OK;
}

#define RANGE_LOOP(T, U)                     \
  do {                                       \
    T v, d;                                  \
    memcpy(&v, gm->start, sizeof(T));        \
    memcpy(&d, gm->delta, sizeof(T));        \
    T *y = out[0].data;                      \
    for (size_t i = 0; i < gm->count; i++) { \
      y[i] = v;                              \
      v = (T)((U)v + (U)d);                  \
    }                                        \
  } while (0)

static void range_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx) {
  (void)params, (void)in, (void)workspace, (void)ctx;
  const range_geom *gm = geom;
  switch (gm->dtype) {
    case Q8RT_DTYPE_FLOAT32: {
      float v, d;
      memcpy(&v, gm->start, 4);
      memcpy(&d, gm->delta, 4);
      float *y = out[0].data;
      for (size_t i = 0; i < gm->count; i++) {
        y[i] = v;
        v += d;
      }
      break;
    }
    case Q8RT_DTYPE_INT64: RANGE_LOOP(int64_t, uint64_t); break;
    case Q8RT_DTYPE_INT32: RANGE_LOOP(int32_t, uint32_t); break;
    case Q8RT_DTYPE_INT16: RANGE_LOOP(int16_t, uint32_t); break;
    default: break;
  }
}

const op_def q8rt_op_range = {.op_type = "Range",
                              .domain = "",
                              .min_opset = 11,
                              .prepare = range_prepare,
                              .infer = range_infer,
                              .run = range_run};
