/* Ops that only change the shape (the bytes are copied as they are, any element type): Reshape,
 * Flatten, Squeeze, Unsqueeze, Identity; and Shape (the input's dimensions as int64). Shape-like
 * inputs (Reshape's shape, Squeeze/Unsqueeze axes at opset 13+) must be constants. */
#include <string.h>

#include "data_common.h"

typedef struct copy_geom {
  size_t nbytes;
} copy_geom;

static void copy_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  (void)params, (void)workspace, (void)ctx;
  const copy_geom *gm = geom;
  if (out[0].data != in[0].data && gm->nbytes > 0) memcpy(out[0].data, in[0].data, gm->nbytes);
}

static int copy_same_bytes(const void *params, const void *geom) {
  (void)params, (void)geom;
  return 1;
}

/* Shared tail of infer for the copy ops: dtype and, at bind, the byte count (must match). */
static q8rt_status copy_finish(const op_node *n, const op_shape *x, op_shape *y, int concrete, void *geom,
                               q8rt_error *err) {
  y->dtype = x->dtype;
  if (!concrete) return Q8RT_OK;
  int64_t cx, cy;
  q8rt_status st;
  if ((st = data_count(n, x, &cx, err)) != Q8RT_OK) return st;
  if ((st = data_count(n, y, &cy, err)) != Q8RT_OK) return st;
  if (cx != cy) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': output has %lld elements, input has %lld", n->op_type,
                     n->name, (long long)cy, (long long)cx);
  }
  copy_geom *gm = geom;
  if (gm != NULL) gm->nbytes = (size_t)cx * q8rt_dtype_size(x->dtype);
  return Q8RT_OK;
}

static int all_known(const op_shape *s) {
  if (s->rank < 0) return 0;
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0) return 0;
  }
  return 1;
}

/* A copy op: SYM##_shape(params, n, in, out, concrete, err) gives the output's dims (x = in[0] is
 * already checked movable, IN_NAME names it in that message); the dtype, the element count check
 * and the run are the same for all. */
#define COPY_OP(SYM, NAME, MIN_OPSET, IN_NAME)                                                            \
  static q8rt_status SYM##_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, \
                                 int concrete, void *geom, q8rt_error *err) {                             \
    q8rt_status st;                                                                                       \
    if ((st = data_check_movable(n, &in[0], IN_NAME, err)) != Q8RT_OK) return st;                         \
    if ((st = SYM##_shape(params, n, in, out, concrete, err)) != Q8RT_OK) return st;                      \
    return copy_finish(n, &in[0], out, concrete, geom, err);                                              \
  }                                                                                                       \
  const op_def q8rt_op_##SYM = {.op_type = NAME,                                                          \
                                .domain = "",                                                             \
                                .min_opset = MIN_OPSET,                                                   \
                                .prepare = SYM##_prepare,                                                 \
                                .infer = SYM##_infer,                                                     \
                                .run = copy_run,                                                          \
                                .same_bytes_output = copy_same_bytes};

/* ---- Reshape -------------------------------------------------------------------------------- */

typedef struct reshape_params {
  int64_t *shape; /* NULL: the shape input is computed (its value must be known at bind) */
  size_t count;
  int64_t allowzero;
} reshape_params;

static q8rt_status check_shape_values(const op_node *n, const int64_t *shape, size_t count, int64_t allowzero,
                                      q8rt_error *err) {
  if (count > Q8RT_MAX_RANK) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "Reshape node '%s': input 1 (shape) asks for rank %zu (q8rt's limit is %d)", n->name, count,
                     Q8RT_MAX_RANK);
  }
  int negs = 0, zeros = 0;
  for (size_t i = 0; i < count; i++) {
    if (shape[i] == -1) negs++;
    if (shape[i] == 0) zeros++;
    if (shape[i] < -1) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Reshape node '%s': input 1 (shape) has the invalid value %lld",
                       n->name, (long long)shape[i]);
    }
  }
  if (negs > 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Reshape node '%s': input 1 (shape) has more than one -1", n->name);
  }
  if (negs && zeros && allowzero) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "Reshape node '%s': input 1 (shape) has both 0 and -1 with attribute 'allowzero' = 1", n->name);
  }
  return Q8RT_OK;
}

static q8rt_status reshape_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 2, 2, 1, 1, err)) != Q8RT_OK) return st;
  reshape_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if ((st = ir_attr_int(n, "allowzero", 0, &p->allowzero, err)) != Q8RT_OK) return st;
  const ir_value *sv = ir_node_input(ctx->graph, n, 1);
  if (sv == NULL)
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Reshape node '%s': input 1 (shape) is missing", n->name);
  ctx->kernel = "copy__scalar";
  ctx->reason = "reshape: bytes unchanged";
  *out = p;
  if (sv->constant == NULL) {
    /* Computed from shapes (Shape -> Slice -> Concat -> ...): its value must be known when the
     * session binds shapes; infer refuses it otherwise. */
    ctx->reason = "reshape: bytes unchanged; target shape computed at bind";
    return Q8RT_OK;
  }
  int present;
  if ((st = data_const_ints(ctx, 1, "shape__scalar", 0, 0, &p->shape, &p->count, &present, err)) != Q8RT_OK) return st;
  return check_shape_values(ctx->desc, p->shape, p->count, p->allowzero, err);
}

static q8rt_status reshape_shape(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                                 q8rt_error *err) {
  const reshape_params *p = params;
  const op_shape *x = &in[0], *sh = &in[1];
  q8rt_status st;
  const int64_t *shape = p->shape;
  size_t count = p->count;
  if (shape == NULL) {
    if (sh->dtype != Q8RT_DTYPE_UNDEFINED && sh->dtype != Q8RT_DTYPE_INT64) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Reshape node '%s': input 1 (shape) is %s, expected int64",
                       n->name, q8rt_onnx_type_name(sh->dtype));
    }
    if (sh->rank >= 0 && sh->rank != 1) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Reshape node '%s': input 1 (shape) has rank %d, expected 1",
                       n->name, sh->rank);
    }
    if (sh->value == NULL || sh->rank != 1 || sh->dims[0] < 0) {
      if (concrete) {
        return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                         "Reshape node '%s': input 1 (shape) is computed at run time from data, not from shapes: not "
                         "supported (q8rt needs it constant or computed from shapes alone)",
                         n->name);
      }
      out->rank = sh->rank == 1 && sh->dims[0] >= 0 && sh->dims[0] <= Q8RT_MAX_RANK ? (int)sh->dims[0] : -1;
      for (int i = 0; i < Q8RT_MAX_RANK; i++) out->dims[i] = -1;
      return Q8RT_OK;
    }
    shape = sh->value;
    count = (size_t)sh->dims[0];
    if ((st = check_shape_values(n, shape, count, p->allowzero, err)) != Q8RT_OK) return st;
  }
  out->rank = (int)count;
  int neg = -1, unknown = 0;
  int64_t product = 1;
  for (int i = 0; i < (int)count; i++) {
    int64_t d = shape[i];
    if (d == 0 && !p->allowzero) {
      if (x->rank >= 0 && i >= x->rank) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Reshape node '%s': shape[%d] is 0 but the input has rank %d", n->name,
                         i, x->rank);
      }
      d = x->rank < 0 ? -1 : x->dims[i];
    } else if (d == -1) {
      neg = i;
      continue;
    }
    out->dims[i] = d;
    if (d < 0) {
      unknown = 1;
    } else if (!q8rt_mul_i64(product, d, &product)) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Reshape node '%s': output is too large", n->name);
    }
  }
  int64_t total = -1;
  if (all_known(x) && (st = data_count(n, x, &total, err)) != Q8RT_OK) return st;
  if (neg >= 0) {
    out->dims[neg] = -1;
    if (total >= 0 && !unknown) {
      if (product == 0 || total % product != 0) {
        return q8rt_fail(
            err, Q8RT_ERROR_SHAPE,
            "Reshape node '%s': cannot reshape %lld elements with shape input (the known dims multiply to %lld)",
            n->name, (long long)total, (long long)product);
      }
      out->dims[neg] = total / product;
    }
  } else if (total >= 0 && !unknown && total != product) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Reshape node '%s': cannot reshape %lld elements into %lld", n->name,
                     (long long)total, (long long)product);
  }
  return Q8RT_OK;
}

COPY_OP(reshape, "Reshape", 5, "data")

/* ---- Flatten -------------------------------------------------------------------------------- */

typedef struct axis_params {
  int64_t axis;
} axis_params;

static q8rt_status flatten_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 1, 1, 1, 1, err)) != Q8RT_OK) return st;
  axis_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if ((st = ir_attr_int(n, "axis", 1, &p->axis, err)) != Q8RT_OK) return st;
  ctx->kernel = "copy__scalar";
  ctx->reason = "flatten: bytes unchanged";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status flatten_shape(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                                 q8rt_error *err) {
  (void)concrete;
  const axis_params *p = params;
  const op_shape *x = &in[0];
  out->rank = 2;
  out->dims[0] = out->dims[1] = -1;
  if (x->rank >= 0) {
    int64_t axis = p->axis;
    if (axis < -x->rank || axis > x->rank) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "Flatten node '%s': attribute 'axis' (%lld) is out of range for rank %d", n->name,
                       (long long)p->axis, x->rank);
    }
    if (axis < 0) axis += x->rank;
    int64_t a = 1, b = 1;
    for (int i = 0; i < x->rank; i++) {
      int64_t *t = i < axis ? &a : &b;
      if (x->dims[i] < 0 || *t < 0) {
        *t = -1;
      } else {
        *t *= x->dims[i];
      }
    }
    out->dims[0] = a;
    out->dims[1] = b;
  }
  return Q8RT_OK;
}

COPY_OP(flatten, "Flatten", 1, "input")

/* ---- Squeeze / Unsqueeze -------------------------------------------------------------------- */

typedef struct axes_params {
  int64_t *axes;
  size_t count;
  int present;
} axes_params;

static q8rt_status axes_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err, int unsqueeze) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  const int from_input = n->opset >= 13;
  if ((st = data_check_arity(n, 1, from_input ? 2 : 1, 1, 1, err)) != Q8RT_OK) return st;
  axes_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if (from_input) {
    if (ir_node_attr(n, "axes") != NULL) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "%s node '%s': attribute 'axes' is not allowed at opset %d (axes is input 1 since opset 13)",
                       n->op_type, n->name, n->opset);
    }
    if ((st = data_const_ints(ctx, 1, "axes", 0, 1, &p->axes, &p->count, &p->present, err)) != Q8RT_OK) return st;
  } else {
    if ((st = data_attr_ints(ctx, "axes", &p->axes, &p->count, &p->present, err)) != Q8RT_OK) return st;
  }
  if (unsqueeze && !p->present) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Unsqueeze node '%s': axes (%s) is missing", n->name,
                     from_input ? "input 1" : "attribute 'axes'");
  }
  if (p->count > Q8RT_MAX_RANK) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': %zu axes (q8rt's rank limit is %d)", n->op_type,
                     n->name, p->count, Q8RT_MAX_RANK);
  }
  ctx->kernel = "copy__scalar";
  ctx->reason = unsqueeze ? "unsqueeze: bytes unchanged" : "squeeze: bytes unchanged";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status squeeze_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return axes_prepare(ctx, out, err, 0);
}
static q8rt_status unsqueeze_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return axes_prepare(ctx, out, err, 1);
}

/* Marks the normalized axes in mark[0..rank); fails on out-of-range or repeated axes. */
static q8rt_status mark_axes(const op_node *n, const axes_params *p, int rank, int mark[Q8RT_MAX_RANK + 1],
                             q8rt_error *err) {
  memset(mark, 0, sizeof(int) * (Q8RT_MAX_RANK + 1));
  for (size_t i = 0; i < p->count; i++) {
    int64_t a;
    if (!op_normalize_axis(p->axes[i], rank, &a)) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': axis %lld is out of range for rank %d", n->op_type,
                       n->name, (long long)p->axes[i], rank);
    }
    if (mark[a]) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': axis %lld is repeated", n->op_type, n->name,
                       (long long)p->axes[i]);
    }
    mark[a] = 1;
  }
  return Q8RT_OK;
}

static q8rt_status squeeze_shape(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                                 q8rt_error *err) {
  (void)concrete;
  const axes_params *p = params;
  const op_shape *x = &in[0];
  q8rt_status st;
  out->rank = -1;
  if (x->rank >= 0) {
    int mark[Q8RT_MAX_RANK + 1];
    if (p->present) {
      if ((st = mark_axes(n, p, x->rank, mark, err)) != Q8RT_OK) return st;
      for (int i = 0; i < x->rank; i++) {
        if (mark[i] && x->dims[i] >= 0 && x->dims[i] != 1) {
          return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Squeeze node '%s': dimension %d has size %lld, not 1", n->name, i,
                           (long long)x->dims[i]);
        }
      }
    } else {
      for (int i = 0; i < x->rank; i++) mark[i] = x->dims[i] == 1;
    }
    if (p->present || all_known(x)) {
      out->rank = 0;
      for (int i = 0; i < x->rank; i++) {
        if (!mark[i]) out->dims[out->rank++] = x->dims[i];
      }
    }
  }
  return Q8RT_OK;
}

static q8rt_status unsqueeze_shape(const void *params, const op_node *n, const op_shape *in, op_shape *out,
                                   int concrete, q8rt_error *err) {
  (void)concrete;
  const axes_params *p = params;
  const op_shape *x = &in[0];
  q8rt_status st;
  out->rank = -1;
  if (x->rank >= 0) {
    const int r = x->rank + (int)p->count;
    if (r > Q8RT_MAX_RANK) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "Unsqueeze node '%s': output rank %d exceeds q8rt's limit %d",
                       n->name, r, Q8RT_MAX_RANK);
    }
    int mark[Q8RT_MAX_RANK + 1];
    if ((st = mark_axes(n, p, r, mark, err)) != Q8RT_OK) return st;
    out->rank = r;
    for (int i = 0, j = 0; i < r; i++) out->dims[i] = mark[i] ? 1 : x->dims[j++];
  }
  return Q8RT_OK;
}

COPY_OP(squeeze, "Squeeze", 1, "data")
COPY_OP(unsqueeze, "Unsqueeze", 1, "data")

/* ---- Identity ------------------------------------------------------------------------------- */

static q8rt_status identity_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  q8rt_status st;
  if ((st = data_check_arity(ctx->node, 1, 1, 1, 1, err)) != Q8RT_OK) return st;
  ctx->kernel = "copy__scalar";
  ctx->reason = "identity";
  *out = NULL;
  return Q8RT_OK;
}

static q8rt_status identity_shape(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                                  q8rt_error *err) {
  (void)params, (void)n, (void)concrete, (void)err;
  *out = in[0];
  return Q8RT_OK;
}

COPY_OP(identity, "Identity", 1, "input")

/* ---- Shape ---------------------------------------------------------------------------------- */

typedef struct shape_params {
  int64_t start, end;
  int has_end;
} shape_params;

typedef struct shape_geom {
  int count;
  int64_t dims[Q8RT_MAX_RANK];
} shape_geom;

static q8rt_status shape_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 1, 1, 1, 1, err)) != Q8RT_OK) return st;
  shape_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if ((st = ir_attr_int(n, "start", 0, &p->start, err)) != Q8RT_OK) return st;
  if ((st = ir_attr_int(n, "end", 0, &p->end, err)) != Q8RT_OK) return st;
  p->has_end = ir_node_attr(n, "end") != NULL;
  if (n->opset < 15 && (ir_node_attr(n, "start") != NULL || p->has_end)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "Shape node '%s': attributes 'start'/'end' need opset 15 (model: %d)", n->name, n->opset);
  }
  ctx->kernel = "shape__scalar";
  ctx->reason = "dimensions known at bind";
  *out = p;
  return Q8RT_OK;
}

static void shape_range(const shape_params *p, int rank, int *start, int *end) {
  int64_t s = p->start, e = p->has_end ? p->end : rank;
  if (s < 0) s += rank;
  if (e < 0) e += rank;
  s = s < 0 ? 0 : s > rank ? rank : s;
  e = e < 0 ? 0 : e > rank ? rank : e;
  *start = (int)s;
  *end = (int)(e < s ? s : e);
}

static q8rt_status shape_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                               void *geom, q8rt_error *err) {
  const shape_params *p = params;
  const op_shape *x = &in[0];
  q8rt_status st;
  if ((st = data_check_movable(n, x, "data", err)) != Q8RT_OK) return st;
  out->dtype = Q8RT_DTYPE_INT64;
  out->rank = 1;
  out->dims[0] = -1;
  if (x->rank < 0) return Q8RT_OK;
  int s, e;
  shape_range(p, x->rank, &s, &e);
  out->dims[0] = e - s;
  if (!concrete) return Q8RT_OK;
  shape_geom *gm = geom;
  if (gm == NULL) return Q8RT_OK;
  gm->count = e - s;
  for (int i = s; i < e; i++) {
    if (x->dims[i] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Shape node '%s': input dimension %d is not known", n->name, i);
    }
    gm->dims[i - s] = x->dims[i];
  }
  return Q8RT_OK;
}

static void shape_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx) {
  (void)params, (void)in, (void)workspace, (void)ctx;
  const shape_geom *gm = geom;
  if (gm->count > 0) memcpy(out[0].data, gm->dims, (size_t)gm->count * sizeof(int64_t));
}

const op_def q8rt_op_shape = {.op_type = "Shape",
                              .domain = "",
                              .min_opset = 1,
                              .shape_only = 1,
                              .prepare = shape_prepare,
                              .infer = shape_infer,
                              .run = shape_run};
