/* ScatterElements (opset 11, 13, 16, 18): output = data, then for every element of indices (int32
 * or int64, data's rank, each dim at most data's but along `axis`), in C order, the output element
 * at that position with the axis coordinate replaced by the index is set to the matching element
 * of updates (indices' shape), or combined with it under `reduction` (add, mul: opset 16; max,
 * min: opset 18; numeric types only).
 *
 * As ONNX Runtime (scatter.cc): negative indices get the axis size added; updates apply in C
 * order, so with repeated indices the last wins (none) or they combine in that order; max/min
 * take the update unless the current value compares greater/smaller (what ORT 1.30 gives: a NaN
 * current value is replaced, a NaN update kept, of +0 and -0 the update). ORT fails
 * the run on an index out of range; q8rt's run cannot fail on data, so such an update is skipped
 * (the element keeps its value), as Gather gives zeros for run-time indices out of range. */
#include <string.h>

#include "data_common.h"

enum { SCATTER_NONE = 0, SCATTER_ADD, SCATTER_MUL, SCATTER_MAX, SCATTER_MIN };

typedef struct scatter_params {
  int64_t axis;
  int reduction;
} scatter_params;

typedef struct scatter_geom {
  int rank, axis;
  int64_t idims[Q8RT_MAX_RANK]; /* indices' (= updates') dims */
  int64_t ostr[Q8RT_MAX_RANK];  /* output strides (elements) */
  int64_t axis_size;
  size_t count, icount; /* elements of data, of indices */
  size_t elem;
  q8rt_dtype dtype, itype;
  int reduction;
} scatter_geom;

_Static_assert(sizeof(scatter_geom) <= Q8RT_GEOM_BYTES, "scatter_geom too large");

static q8rt_status scatter_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 3, 3, 1, 1, err)) != Q8RT_OK) return st;
  for (int i = 1; i < 3; i++) {
    if (n->inputs[i] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "ScatterElements node '%s': input %d (%s) is missing", n->name, i,
                       i == 1 ? "indices" : "updates");
    }
  }
  scatter_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 8);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if ((st = ir_attr_int(n, "axis", 0, &p->axis, err)) != Q8RT_OK) return st;
  const char *red;
  if ((st = ir_attr_string(n, "reduction", "none", &red, err)) != Q8RT_OK) return st;
  static const char *const names[] = {"none", "add", "mul", "max", "min"};
  static const int since[] = {11, 16, 16, 18, 18};
  p->reduction = -1;
  for (int k = 0; k < 5; k++) {
    if (strcmp(red, names[k]) == 0 && n->opset >= since[k]) p->reduction = k;
  }
  if (p->reduction < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "ScatterElements node '%s': reduction '%.60s' is not one of ONNX's at opset %d", n->name, red,
                     n->opset);
  }
  ctx->kernel = "scatter_elements__scalar";
  ctx->reason = p->reduction == SCATTER_NONE ? "copy, then updates in order" : "copy, then reduce updates in order";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status scatter_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                                 void *geom, q8rt_error *err) {
  const scatter_params *p = params;
  const q8rt_dtype t = in[0].dtype, it = in[1].dtype;
  q8rt_status st = data_check_movable(n, &in[0], "data", err);
  if (st != Q8RT_OK) return st;
  if (it != Q8RT_DTYPE_UNDEFINED && it != Q8RT_DTYPE_INT32 && it != Q8RT_DTYPE_INT64) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "ScatterElements node '%s': indices are %s, expected int32 or int64", n->name,
                     q8rt_onnx_type_name(it));
  }
  if (t != Q8RT_DTYPE_UNDEFINED && in[2].dtype != Q8RT_DTYPE_UNDEFINED && in[2].dtype != t) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "ScatterElements node '%s': updates are %s but data is %s", n->name,
                     q8rt_onnx_type_name(in[2].dtype), q8rt_onnx_type_name(t));
  }
  if (p->reduction != SCATTER_NONE && t != Q8RT_DTYPE_UNDEFINED && t != Q8RT_DTYPE_FLOAT32 && t != Q8RT_DTYPE_INT32 &&
      t != Q8RT_DTYPE_INT64 && t != Q8RT_DTYPE_UINT8 && t != Q8RT_DTYPE_INT8) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "ScatterElements node '%s': a reduction on %s (q8rt reduces float32, int32, int64, uint8, int8)",
                     n->name, q8rt_onnx_type_name(t));
  }
  *out = in[0];
  out->value = NULL;
  const int r = in[0].rank;
  for (int k = 1; k < 3; k++) {
    if (r >= 0 && in[k].rank >= 0 && in[k].rank != r) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "ScatterElements node '%s': %s have rank %d, data %d", n->name,
                       k == 1 ? "indices" : "updates", in[k].rank, r);
    }
  }
  int64_t axis = 0;
  if (r >= 0 && !op_normalize_axis(p->axis, r, &axis)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "ScatterElements node '%s': axis %lld is out of range for rank %d",
                     n->name, (long long)p->axis, r);
  }
  if (r == 0) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "ScatterElements node '%s': data is a scalar (rank >= 1 needed)", n->name);
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  for (int d = 0; d < r; d++) {
    if (in[1].dims[d] != in[2].dims[d]) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "ScatterElements node '%s': indices and updates differ in dim %d (%lld, %lld)", n->name, d,
                       (long long)in[1].dims[d], (long long)in[2].dims[d]);
    }
    if (d != axis && in[1].dims[d] > in[0].dims[d]) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "ScatterElements node '%s': indices dim %d is %lld, above data's %lld",
                       n->name, d, (long long)in[1].dims[d], (long long)in[0].dims[d]);
    }
  }
  int64_t total, itotal;
  if ((st = data_count(n, &in[0], &total, err)) != Q8RT_OK) return st;
  if ((st = data_count(n, &in[1], &itotal, err)) != Q8RT_OK) return st;
  scatter_geom *gm = geom;
  gm->rank = r;
  gm->axis = (int)axis;
  int64_t s = 1;
  for (int d = r - 1; d >= 0; d--) {
    gm->idims[d] = in[1].dims[d];
    gm->ostr[d] = s;
    s *= in[0].dims[d];
  }
  gm->axis_size = in[0].dims[axis];
  gm->count = (size_t)total;
  gm->icount = (size_t)itotal;
  gm->elem = q8rt_dtype_size(t);
  gm->dtype = t;
  gm->itype = it;
  gm->reduction = p->reduction;
  return Q8RT_OK;
}

#define SCATTER_REDUCE(T)                           \
  do {                                              \
    T a, b;                                         \
    memcpy(&a, dst, sizeof(T));                     \
    memcpy(&b, src, sizeof(T));                     \
    switch (red) {                                  \
      case SCATTER_ADD: a = (T)(a + b); break;      \
      case SCATTER_MUL: a = (T)(a * b); break;      \
      case SCATTER_MAX: a = (a > b) ? a : b; break; \
      default: a = (a < b) ? a : b; break;          \
    }                                               \
    memcpy(dst, &a, sizeof(T));                     \
  } while (0)

/* Integer add/mul wrap (ORT's int arithmetic on two's complement hardware), done unsigned. */
#define SCATTER_REDUCE_INT(T, U)                        \
  do {                                                  \
    T a, b;                                             \
    memcpy(&a, dst, sizeof(T));                         \
    memcpy(&b, src, sizeof(T));                         \
    switch (red) {                                      \
      case SCATTER_ADD: a = (T)(U)((U)a + (U)b); break; \
      case SCATTER_MUL: a = (T)(U)((U)a * (U)b); break; \
      case SCATTER_MAX: a = (a > b) ? a : b; break;     \
      default: a = (a < b) ? a : b; break;              \
    }                                                   \
    memcpy(dst, &a, sizeof(T));                         \
  } while (0)

static void scatter_apply(q8rt_dtype t, int red, unsigned char *dst, const unsigned char *src, size_t elem) {
  switch (t) {
    case Q8RT_DTYPE_FLOAT32: SCATTER_REDUCE(float); break;
    case Q8RT_DTYPE_INT32: SCATTER_REDUCE_INT(int32_t, uint32_t); break;
    case Q8RT_DTYPE_INT64: SCATTER_REDUCE_INT(int64_t, uint64_t); break;
    case Q8RT_DTYPE_UINT8: SCATTER_REDUCE_INT(uint8_t, uint32_t); break;
    case Q8RT_DTYPE_INT8: SCATTER_REDUCE_INT(int8_t, uint32_t); break;
    default: memcpy(dst, src, elem); break;
  }
}

static void scatter_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                        const op_exec_ctx *ctx) {
  (void)params, (void)workspace, (void)ctx;
  const scatter_geom *gm = geom;
  const size_t e = gm->elem;
  unsigned char *y = out[0].data;
  if (y != in[0].data && gm->count > 0) memcpy(y, in[0].data, gm->count * e);
  if (gm->icount == 0) return;
  const unsigned char *u = in[2].data;
  int64_t idx[Q8RT_MAX_RANK] = {0};
  size_t base = 0; /* output offset of the current position with its axis coordinate at 0 */
  int64_t bstr[Q8RT_MAX_RANK];
  for (int d = 0; d < gm->rank; d++) bstr[d] = d == gm->axis ? 0 : gm->ostr[d];
  for (size_t i = 0; i < gm->icount; i++) {
    int64_t j = gm->itype == Q8RT_DTYPE_INT32 ? ((const int32_t *)in[1].data)[i] : ((const int64_t *)in[1].data)[i];
    if (j < 0) j += gm->axis_size;
    if (j >= 0 && j < gm->axis_size) {
      unsigned char *dst = y + (base + (size_t)(j * gm->ostr[gm->axis])) * e;
      if (gm->reduction == SCATTER_NONE) {
        memcpy(dst, u + i * e, e);
      } else {
        scatter_apply(gm->dtype, gm->reduction, dst, u + i * e, e);
      }
    }
    op_index_next(gm->rank, gm->idims, bstr, idx, &base);
  }
}

const op_def q8rt_op_scatter_elements = {.op_type = "ScatterElements",
                                         .domain = "",
                                         .min_opset = 11,
                                         .prepare = scatter_prepare,
                                         .infer = scatter_infer,
                                         .run = scatter_run};
