/* OneHot (opset 9, 11): indices (int32, int64 or float32), depth (a one-element number known
 * before the run: a constant, or a value computed when shapes are bound, since it is an output
 * dim) and values [off, on] of any element type, read at run. The output has indices' dims (rank
 * >= 1, as ONNX's shape inference) with
 * depth inserted at `axis` and values' type.
 *
 * As ONNX Runtime (onehot.cc): depth is converted to int64 by truncation (<= 0 refused); a
 * negative index gets depth added (in the indices' type); position k of the depth axis is `on`
 * when the adjusted index equals k converted to the indices' type, so out-of-range and (float)
 * fractional indices give a row of `off`. */
#include <string.h>

#include "data_common.h"

typedef struct one_hot_params {
  int64_t axis; /* as given (may be negative), normalized in infer */
} one_hot_params;

typedef struct one_hot_geom {
  size_t outer, depth, inner; /* output = [outer][depth][inner], indices = [outer][inner] */
  size_t elem;                /* bytes of an output element */
  q8rt_dtype itype;           /* indices' type */
  int64_t idepth;             /* depth as int64 */
} one_hot_geom;

_Static_assert(sizeof(one_hot_geom) <= Q8RT_GEOM_BYTES, "one_hot_geom too large");

static q8rt_status one_hot_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 3, 3, 1, 1, err)) != Q8RT_OK) return st;
  for (int i = 1; i < 3; i++) {
    if (n->inputs[i] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "OneHot node '%s': input %d (%s) is missing", n->name, i,
                       i == 1 ? "depth" : "values");
    }
  }
  one_hot_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 8);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if ((st = ir_attr_int(n, "axis", -1, &p->axis, err)) != Q8RT_OK) return st;
  ctx->kernel = "one_hot__scalar";
  ctx->reason = "compare per output element";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status one_hot_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                                 void *geom, q8rt_error *err) {
  const one_hot_params *p = params;
  const q8rt_dtype it = in[0].dtype, dt = in[1].dtype, vt = in[2].dtype;
  if (it != Q8RT_DTYPE_UNDEFINED && it != Q8RT_DTYPE_INT32 && it != Q8RT_DTYPE_INT64 && it != Q8RT_DTYPE_FLOAT32) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "OneHot node '%s': indices are %s (q8rt supports int32, int64, float32)", n->name,
                     q8rt_onnx_type_name(it));
  }
  if (dt != Q8RT_DTYPE_UNDEFINED && dt != Q8RT_DTYPE_INT32 && dt != Q8RT_DTYPE_INT64 && dt != Q8RT_DTYPE_FLOAT32) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "OneHot node '%s': depth is %s (q8rt supports int32, int64, float32)",
                     n->name, q8rt_onnx_type_name(dt));
  }
  q8rt_status st = data_check_movable(n, &in[2], "values", err);
  if (st != Q8RT_OK) return st;
  if (in[1].rank > 1 || (in[1].rank == 1 && in[1].dims[0] >= 0 && in[1].dims[0] != 1)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "OneHot node '%s': depth must hold one value", n->name);
  }
  if (in[2].rank == 0 || in[2].rank > 1 || (in[2].rank == 1 && in[2].dims[0] >= 0 && in[2].dims[0] != 2)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "OneHot node '%s': values must be [off, on] (2 elements, rank 1)", n->name);
  }
  memset(out, 0, sizeof(*out));
  out->dtype = vt;
  if (in[0].rank < 0) {
    out->rank = -1;
    return Q8RT_OK;
  }
  if (in[0].rank == 0) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "OneHot node '%s': indices have rank 0 (rank >= 1 needed)", n->name);
  }
  const int r = in[0].rank + 1;
  if (r > Q8RT_MAX_RANK) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "OneHot node '%s': output rank %d is above q8rt's limit of %d",
                     n->name, r, Q8RT_MAX_RANK);
  }
  int64_t axis;
  if (!op_normalize_axis(p->axis, r, &axis)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "OneHot node '%s': axis %lld is out of range for output rank %d",
                     n->name, (long long)p->axis, r);
  }
  int64_t depth = -1;
  if (in[1].value != NULL && in[1].rank >= 0 && (in[1].rank == 0 || in[1].dims[0] == 1)) {
    depth = dt == Q8RT_DTYPE_FLOAT32 ? op_f64_to_i64(op_load_f64(in[1].value, dt, 0)) : op_load_i64(in[1].value, dt, 0);
    if (depth <= 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "OneHot node '%s': depth is %lld (must be positive)", n->name,
                       (long long)depth);
    }
    if (depth > Q8RT_MAX_ELEMENTS) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "OneHot node '%s': depth %lld is above q8rt's limit of %lld", n->name,
                       (long long)depth, (long long)Q8RT_MAX_ELEMENTS);
    }
  } else if (concrete) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "OneHot node '%s': depth is computed at run time: not supported (q8rt needs its value when "
                     "shapes are bound)",
                     n->name);
  }
  out->rank = r;
  for (int d = 0, s = 0; d < r; d++) out->dims[d] = d == axis ? depth : in[0].dims[s++];
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t total;
  if ((st = data_count(n, out, &total, err)) != Q8RT_OK) return st;
  one_hot_geom *gm = geom;
  gm->outer = gm->inner = 1;
  for (int d = 0; d < r; d++) {
    if (d < axis) gm->outer *= (size_t)out->dims[d];
    if (d > axis) gm->inner *= (size_t)out->dims[d];
  }
  gm->depth = (size_t)depth;
  gm->idepth = depth;
  gm->elem = q8rt_dtype_size(vt);
  gm->itype = it;
  return Q8RT_OK;
}

/* y[o][k][i] = adjusted index [o][i] == (T)k ? on : off, the comparison in the indices' type T. */
#define ONE_HOT_LOOP(T, CONV_K)                                       \
  do {                                                                \
    const T *x = in[0].data;                                          \
    const T dep = (T)gm->idepth;                                      \
    for (size_t o = 0; o < gm->outer; o++) {                          \
      for (size_t k = 0; k < gm->depth; k++) {                        \
        const T kk = CONV_K(k);                                       \
        unsigned char *row = y + (o * gm->depth + k) * gm->inner * e; \
        for (size_t i = 0; i < gm->inner; i++) {                      \
          T v = x[o * gm->inner + i];                                 \
          if (v < 0) v = (T)(v + dep);                                \
          memcpy(row + i * e, v == kk ? on : off, e);                 \
        }                                                             \
      }                                                               \
    }                                                                 \
  } while (0)

#define ONE_HOT_K_I64(k) ((int64_t)(k))
#define ONE_HOT_K_I32(k) ((int32_t)(uint32_t)(k))
#define ONE_HOT_K_F32(k) ((float)(k))

static void one_hot_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                        const op_exec_ctx *ctx) {
  (void)params, (void)workspace, (void)ctx;
  const one_hot_geom *gm = geom;
  const size_t e = gm->elem;
  const unsigned char *off = in[2].data, *on = off + e;
  unsigned char *y = out[0].data;
  switch (gm->itype) {
    case Q8RT_DTYPE_INT64: ONE_HOT_LOOP(int64_t, ONE_HOT_K_I64); break;
    case Q8RT_DTYPE_INT32: {
      /* depth (<= 2^31) as int32 wraps as ORT's static_cast; the addition is done in 64 bits and
       * wrapped back so a hostile index near INT32_MIN does not overflow */
      const int32_t *x = in[0].data;
      const int32_t dep = (int32_t)(uint32_t)gm->idepth;
      for (size_t o = 0; o < gm->outer; o++) {
        for (size_t k = 0; k < gm->depth; k++) {
          const int32_t kk = ONE_HOT_K_I32(k);
          unsigned char *row = y + (o * gm->depth + k) * gm->inner * e;
          for (size_t i = 0; i < gm->inner; i++) {
            int32_t v = x[o * gm->inner + i];
            if (v < 0) v = (int32_t)(uint32_t)((uint32_t)v + (uint32_t)dep);
            memcpy(row + i * e, v == kk ? on : off, e);
          }
        }
      }
      break;
    }
    case Q8RT_DTYPE_FLOAT32: ONE_HOT_LOOP(float, ONE_HOT_K_F32); break;
    default: break;
  }
}

const op_def q8rt_op_one_hot = {.op_type = "OneHot",
                                .domain = "",
                                .min_opset = 9,
                                .prepare = one_hot_prepare,
                                .infer = one_hot_infer,
                                .run = one_hot_run};
