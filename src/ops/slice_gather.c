/* Slice (any element type; starts/ends/axes/steps as attributes before opset 10, inputs from 10:
 * constants, or values computed when shapes are bound (a Shape -> Gather -> Min chain, as Paddle
 * exports slicing to a tensor's own length); negative and out-of-range starts/ends clamped as ONNX
 * says, negative steps) and Gather
 * (any element type; int32/int64 indices, negative ones counted from the end; the indices may be
 * computed at run time). */
#include <string.h>

#include "data_common.h"

/* ---- Slice ---------------------------------------------------------------------------------- */

typedef struct slice_params {
  int64_t *starts, *ends, *axes, *steps;
  size_t count;
  int has_axes;
  /* bit k (1-4: starts, ends, axes, steps): input k is not a constant, its values are read in
   * infer (slice_bound_params); the arrays above then hold only the constant ones */
  unsigned bound;
  size_t len[5]; /* with bound: the length of each constant input k (0: absent) */
} slice_params;

typedef struct slice_geom {
  int rank;
  size_t elem;
  int64_t offset;
  int64_t dims[Q8RT_MAX_RANK];
  int64_t strides[Q8RT_MAX_RANK];
} slice_geom;

static q8rt_status slice_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  const int attrs = n->opset < 10;
  if ((st = data_check_arity(n, attrs ? 1 : 3, attrs ? 1 : 5, 1, 1, err)) != Q8RT_OK) return st;
  slice_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  size_t ns = 0, ne = 0, na = 0, nst = 0;
  int has_s = 0, has_e = 0, has_st = 0;
  if (attrs) {
    if ((st = data_attr_ints(ctx, "starts", &p->starts, &ns, &has_s, err)) != Q8RT_OK) return st;
    if ((st = data_attr_ints(ctx, "ends", &p->ends, &ne, &has_e, err)) != Q8RT_OK) return st;
    if ((st = data_attr_ints(ctx, "axes", &p->axes, &na, &p->has_axes, err)) != Q8RT_OK) return st;
  } else {
    for (int k = 1; k <= 4; k++) {
      const ir_value *v = ir_node_input(ctx->graph, n, k);
      if (v != NULL && v->constant == NULL) p->bound |= 1u << k;
    }
  }
  if (p->bound) {
    /* lengths and steps are checked in infer once the values are known */
    if (!(p->bound & 2u) && (st = data_const_ints(ctx, 1, "starts", 1, 0, &p->starts, &ns, &has_s, err)) != Q8RT_OK)
      return st;
    if (!(p->bound & 4u) && (st = data_const_ints(ctx, 2, "ends", 1, 0, &p->ends, &ne, &has_e, err)) != Q8RT_OK)
      return st;
    if (!(p->bound & 8u) && (st = data_const_ints(ctx, 3, "axes", 1, 0, &p->axes, &na, &p->has_axes, err)) != Q8RT_OK)
      return st;
    if (!(p->bound & 16u) && (st = data_const_ints(ctx, 4, "steps", 1, 0, &p->steps, &nst, &has_st, err)) != Q8RT_OK)
      return st;
    if (p->bound & 8u) p->has_axes = 1;
    p->len[1] = has_s ? ns : 0;
    p->len[2] = has_e ? ne : 0;
    p->len[3] = p->has_axes ? na : 0;
    p->len[4] = has_st ? nst : 0;
    ctx->kernel = "slice__scalar";
    ctx->reason = "strided copy (starts/ends/axes/steps known at bind)";
    *out = p;
    return Q8RT_OK;
  } else if (!attrs) {
    if ((st = data_const_ints(ctx, 1, "starts", 1, 0, &p->starts, &ns, &has_s, err)) != Q8RT_OK) return st;
    if ((st = data_const_ints(ctx, 2, "ends", 1, 0, &p->ends, &ne, &has_e, err)) != Q8RT_OK) return st;
    if ((st = data_const_ints(ctx, 3, "axes", 1, 0, &p->axes, &na, &p->has_axes, err)) != Q8RT_OK) return st;
    if ((st = data_const_ints(ctx, 4, "steps", 1, 0, &p->steps, &nst, &has_st, err)) != Q8RT_OK) return st;
  }
  if (!has_s || !has_e) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Slice node '%s': %s is missing", n->name,
                     !has_s ? "starts" : "ends");
  }
  if (ne != ns || (p->has_axes && na != ns) || (has_st && nst != ns)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "Slice node '%s': starts, ends, axes and steps must have the same length (%zu, %zu, %zu, %zu)",
                     n->name, ns, ne, na, nst);
  }
  if (ns > Q8RT_MAX_RANK) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "Slice node '%s': %zu sliced axes (q8rt's rank limit is %d)", n->name,
                     ns, Q8RT_MAX_RANK);
  }
  p->count = ns;
  if (!has_st) {
    p->steps = q8rt_pool_array(ctx->pool, ns + 1, sizeof(int64_t));
    if (p->steps == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < ns; i++) p->steps[i] = 1;
  }
  for (size_t i = 0; i < ns; i++) {
    if (p->steps[i] == 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Slice node '%s': steps[%zu] is 0", n->name, i);
    }
  }
  ctx->kernel = "slice__scalar";
  ctx->reason = "strided copy";
  *out = p;
  return Q8RT_OK;
}

/* The values of Slice input k (int32 or int64, rank 1, at most Q8RT_MAX_RANK) when known: a
 * constant or a value computed at bind. *known = 0 when not (yet) known. */
static q8rt_status slice_input_values(const op_node *n, const op_shape *s, int k, int64_t *vals, size_t *count,
                                      int *known, q8rt_error *err) {
  static const char *const what[5] = {"data", "starts", "ends", "axes", "steps"};
  *known = 0;
  if (s->dtype != Q8RT_DTYPE_UNDEFINED && s->dtype != Q8RT_DTYPE_INT64 && s->dtype != Q8RT_DTYPE_INT32) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Slice node '%s': input %d (%s) is %s, expected int32 or int64",
                     n->name, k, what[k], q8rt_onnx_type_name(s->dtype));
  }
  if (s->rank == 0 || s->rank > 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Slice node '%s': input %d (%s) has rank %d, expected 1", n->name,
                     k, what[k], s->rank);
  }
  if (s->rank == 1 && s->dims[0] > Q8RT_MAX_RANK) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "Slice node '%s': %lld sliced axes (q8rt's rank limit is %d)",
                     n->name, (long long)s->dims[0], Q8RT_MAX_RANK);
  }
  if (s->value == NULL || s->rank != 1 || s->dims[0] < 0) return Q8RT_OK;
  *count = (size_t)s->dims[0];
  for (size_t i = 0; i < *count; i++) vals[i] = op_load_i64(s->value, s->dtype, i);
  *known = 1;
  return Q8RT_OK;
}

/* Params with the inputs known at bind filled in (p->bound): *q a copy of p whose arrays point at
 * `store`. *known = 0 while one is not known (at load; when binding that fails naming the node). */
static q8rt_status slice_bound_params(const slice_params *p, const op_node *n, const op_shape *in, int concrete,
                                      slice_params *q, int64_t store[4][Q8RT_MAX_RANK], int *known, q8rt_error *err) {
  static const char *const what[5] = {"data", "starts", "ends", "axes", "steps"};
  *q = *p;
  int64_t **arr[5] = {NULL, &q->starts, &q->ends, &q->axes, &q->steps};
  size_t len[5];
  memcpy(len, p->len, sizeof(len));
  *known = 1;
  for (int k = 1; k <= 4; k++) {
    if (!(p->bound & (1u << k))) continue;
    int kn;
    q8rt_status st = slice_input_values(n, &in[k], k, store[k - 1], &len[k], &kn, err);
    if (st != Q8RT_OK) return st;
    if (!kn) {
      *known = 0;
      if (!concrete) continue;
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                       "Slice node '%s': input %d (%s) is computed at run time: not supported (q8rt needs its values "
                       "when shapes are bound)",
                       n->name, k, what[k]);
    }
    *arr[k] = store[k - 1];
  }
  if (!*known) return Q8RT_OK;
  if (q->starts == NULL || q->ends == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Slice node '%s': %s is missing", n->name,
                     q->starts == NULL ? "starts" : "ends");
  }
  const size_t ns = len[1];
  if (len[2] != ns || (q->axes != NULL && len[3] != ns) || (q->steps != NULL && len[4] != ns)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "Slice node '%s': starts, ends, axes and steps must have the same length (%zu, %zu, %zu, %zu)",
                     n->name, len[1], len[2], len[3], len[4]);
  }
  q->count = ns;
  q->has_axes = q->axes != NULL;
  if (q->steps == NULL) {
    for (size_t i = 0; i < ns; i++) store[3][i] = 1;
    q->steps = store[3];
  }
  for (size_t i = 0; i < ns; i++) {
    if (q->steps[i] == 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Slice node '%s': steps[%zu] is 0", n->name, i);
    }
  }
  return Q8RT_OK;
}

static q8rt_status slice_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                               void *geom, q8rt_error *err) {
  const slice_params *p = params;
  const op_shape *x = &in[0];
  q8rt_status st;
  if ((st = data_check_movable(n, x, "data", err)) != Q8RT_OK) return st;
  out->dtype = x->dtype;
  out->rank = x->rank;
  slice_params bq;
  int64_t store[4][Q8RT_MAX_RANK];
  if (p->bound) {
    int known;
    if ((st = slice_bound_params(p, n, in, concrete, &bq, store, &known, err)) != Q8RT_OK) return st;
    if (!known) {
      for (int d = 0; d < x->rank; d++) out->dims[d] = -1;
      return Q8RT_OK;
    }
    p = &bq;
  }
  if (x->rank < 0) return Q8RT_OK;
  const int r = x->rank;
  int64_t start[Q8RT_MAX_RANK], step[Q8RT_MAX_RANK];
  int seen[Q8RT_MAX_RANK] = {0};
  for (int d = 0; d < r; d++) {
    start[d] = 0;
    step[d] = 1;
    out->dims[d] = x->dims[d];
  }
  for (size_t i = 0; i < p->count; i++) {
    int64_t a = (int64_t)i;
    if (p->has_axes && !op_normalize_axis(p->axes[i], r, &a)) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Slice node '%s': axes[%zu] = %lld is out of range for rank %d",
                       n->name, i, (long long)p->axes[i], r);
    }
    if (a >= r) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Slice node '%s': %zu starts for an input of rank %d", n->name,
                       p->count, r);
    }
    if (seen[a]) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Slice node '%s': axis %lld is repeated", n->name, (long long)a);
    }
    seen[a] = 1;
    const int64_t dim = x->dims[a], sp = p->steps[i];
    step[a] = sp;
    if (dim < 0) {
      out->dims[a] = -1;
      continue;
    }
    int64_t s = p->starts[i], e = p->ends[i], cnt;
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (sp > 0) {
      s = s < 0 ? 0 : s > dim ? dim : s;
      e = e < 0 ? 0 : e > dim ? dim : e;
      cnt = e > s ? (e - s - 1) / sp + 1 : 0;
    } else {
      s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
      e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
      cnt = s > e ? (s - e - 1) / -sp + 1 : 0;
    }
    start[a] = s;
    out->dims[a] = cnt;
    /* A step is only ever multiplied into a stride when two or more elements are taken, and then
       |step| < dim, so the stride stays within the element count; a huge step taking one
       element must not reach that product (int64 overflow). */
    if (cnt <= 1) step[a] = 1;
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t total;
  if ((st = data_count(n, x, &total, err)) != Q8RT_OK) return st;
  slice_geom *gm = geom;
  gm->rank = r;
  gm->elem = q8rt_dtype_size(x->dtype);
  gm->offset = 0;
  int64_t s = 1;
  for (int d = r - 1; d >= 0; d--) {
    gm->dims[d] = out->dims[d];
    gm->strides[d] = s * step[d];
    if (out->dims[d] > 0) gm->offset += start[d] * s;
    s *= x->dims[d];
  }
  return Q8RT_OK;
}

static void slice_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx) {
  (void)params, (void)workspace, (void)ctx;
  const slice_geom *gm = geom;
  data_strided_copy(in[0].data, out[0].data, gm->elem, gm->rank, gm->dims, gm->strides, gm->offset);
}

const op_def q8rt_op_slice = {
    .op_type = "Slice", .domain = "", .min_opset = 1, .prepare = slice_prepare, .infer = slice_infer, .run = slice_run};

/* ---- Gather --------------------------------------------------------------------------------- */

typedef struct gather_params {
  int64_t axis;
  const ir_tensor *indices; /* when constant: checked against the axis size at bind */
} gather_params;

typedef struct gather_geom {
  size_t outer, count, row; /* count indices; row = bytes of one slice of data at one index */
  int64_t dim;
  int idx64;
} gather_geom;

static q8rt_status gather_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 2, 2, 1, 1, err)) != Q8RT_OK) return st;
  const ir_value *iv = ir_node_input(ctx->graph, n, 1);
  if (iv == NULL)
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Gather node '%s': input 1 (indices) is missing", n->name);
  gather_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if ((st = ir_attr_int(n, "axis", 0, &p->axis, err)) != Q8RT_OK) return st;
  p->indices = iv->constant;
  ctx->kernel = "gather__scalar";
  ctx->reason = p->indices != NULL ? "constant indices" : "indices at run time (out-of-range ones give zeros)";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status gather_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                                void *geom, q8rt_error *err) {
  const gather_params *p = params;
  const op_shape *x = &in[0], *ix = &in[1];
  q8rt_status st;
  if ((st = data_check_movable(n, x, "data", err)) != Q8RT_OK) return st;
  if (ix->dtype != Q8RT_DTYPE_UNDEFINED && ix->dtype != Q8RT_DTYPE_INT64 && ix->dtype != Q8RT_DTYPE_INT32) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "Gather node '%s': input 1 (indices) is %s, expected int32 or int64", n->name,
                     q8rt_onnx_type_name(ix->dtype));
  }
  out->dtype = x->dtype;
  out->rank = -1;
  if (x->rank < 0 || ix->rank < 0) return Q8RT_OK;
  int64_t axis;
  if (!op_normalize_axis(p->axis, x->rank, &axis)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "Gather node '%s': attribute 'axis' (%lld) is out of range for rank %d", n->name,
                     (long long)p->axis, x->rank);
  }
  const int r = x->rank - 1 + ix->rank;
  if (r > Q8RT_MAX_RANK) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "Gather node '%s': output rank %d exceeds q8rt's limit %d", n->name,
                     r, Q8RT_MAX_RANK);
  }
  out->rank = r;
  int k = 0;
  for (int d = 0; d < axis; d++) out->dims[k++] = x->dims[d];
  for (int d = 0; d < ix->rank; d++) out->dims[k++] = ix->dims[d];
  for (int d = (int)axis + 1; d < x->rank; d++) out->dims[k++] = x->dims[d];
  const int64_t dim = x->dims[axis];
  if (p->indices != NULL && dim >= 0) {
    for (int64_t i = 0; i < p->indices->count; i++) {
      const int64_t v = op_load_i64(p->indices->data, p->indices->dtype, (size_t)i);
      if (v < -dim || v >= dim) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Gather node '%s': index %lld is out of range for axis size %lld",
                         n->name, (long long)v, (long long)dim);
      }
    }
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t cx, ci;
  if ((st = data_count(n, x, &cx, err)) != Q8RT_OK) return st;
  if ((st = data_count(n, ix, &ci, err)) != Q8RT_OK) return st;
  if ((st = data_count(n, out, &cx, err)) != Q8RT_OK) return st;
  gather_geom *gm = geom;
  size_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= (size_t)x->dims[d];
  for (int d = (int)axis + 1; d < x->rank; d++) inner *= (size_t)x->dims[d];
  gm->outer = outer;
  gm->count = (size_t)ci;
  gm->row = inner * q8rt_dtype_size(x->dtype);
  gm->dim = dim;
  gm->idx64 = ix->dtype == Q8RT_DTYPE_INT64;
  return Q8RT_OK;
}

static void gather_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                       const op_exec_ctx *ctx) {
  (void)params, (void)workspace, (void)ctx;
  const gather_geom *gm = geom;
  const char *src = in[0].data;
  char *dst = out[0].data;
  for (size_t o = 0; o < gm->outer; o++) {
    const char *base = src + o * (size_t)gm->dim * gm->row;
    for (size_t j = 0; j < gm->count; j++) {
      int64_t v = gm->idx64 ? ((const int64_t *)in[1].data)[j] : ((const int32_t *)in[1].data)[j];
      if (v < 0) v += gm->dim;
      if (v < 0 || v >= gm->dim) {
        memset(dst, 0, gm->row);
      } else if (gm->row > 0) {
        memcpy(dst, base + (size_t)v * gm->row, gm->row);
      }
      dst += gm->row;
    }
  }
}

const op_def q8rt_op_gather = {.op_type = "Gather",
                               .domain = "",
                               .min_opset = 1,
                               .prepare = gather_prepare,
                               .infer = gather_infer,
                               .run = gather_run};
