/* Expand and Tile (any element type). The shape / repeats input is a constant or a value known
 * when shapes are bound.
 *
 * Expand: the input broadcast (numpy rules, both ways) with the shape; a strided copy whose
 * strides are 0 along broadcast dims.
 * Tile: output dim d = dims[d] * repeats[d]; each innermost row of the input is copied
 * repeats[last] times, the outer output index mapped to the input modulo its dims. */
#include <string.h>

#include "data_common.h"

typedef struct et_geom {
  size_t elem;
  int rank;
  int64_t dims[Q8RT_MAX_RANK];    /* output dims */
  int64_t strides[Q8RT_MAX_RANK]; /* Expand: input strides per output dim; Tile: input strides */
  int64_t xdims[Q8RT_MAX_RANK];   /* Tile: input dims */
} et_geom;

static q8rt_status et_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 2, 2, 1, 1, err)) != Q8RT_OK) return st;
  if (n->inputs[1] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input 1 (%s) is missing", n->op_type, n->name,
                     strcmp(n->op_type, "Tile") == 0 ? "repeats" : "shape");
  }
  ctx->kernel = strcmp(n->op_type, "Tile") == 0 ? "tile__scalar" : "expand__scalar";
  ctx->reason = "strided copy";
  *out = NULL;
  return Q8RT_OK;
}

static q8rt_status expand_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                                void *geom, q8rt_error *err) {
  (void)params;
  const op_shape *x = &in[0];
  q8rt_status st;
  if ((st = data_check_movable(n, x, "input", err)) != Q8RT_OK) return st;
  int64_t shape[Q8RT_MAX_RANK];
  size_t count;
  int known;
  if ((st = data_shape_values(n, &in[1], 1, "shape", concrete, shape, Q8RT_MAX_RANK, &count, &known, err)) != Q8RT_OK) {
    return st;
  }
  out->dtype = x->dtype;
  out->rank = -1;
  if (!known) return Q8RT_OK;
  op_shape s;
  memset(&s, 0, sizeof(s));
  s.rank = (int)count;
  for (size_t d = 0; d < count; d++) {
    if (shape[d] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Expand node '%s': shape[%zu] is negative (%lld)", n->name, d,
                       (long long)shape[d]);
    }
    s.dims[d] = shape[d];
  }
  const op_shape *both[2] = {x, &s};
  if ((st = op_broadcast_shapes(n, both, 2, out, err)) != Q8RT_OK) return st;
  out->dtype = x->dtype;
  if (out->rank < 0) return Q8RT_OK;
  int64_t total;
  for (int d = 0; d < out->rank; d++) {
    if (out->dims[d] < 0) return Q8RT_OK;
  }
  if (!q8rt_shape_elements(out->dims, out->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Expand node '%s': the output would have more than %lld elements", n->name,
                     (long long)Q8RT_MAX_ELEMENTS);
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  et_geom *gm = geom;
  gm->elem = q8rt_dtype_size(x->dtype);
  gm->rank = out->rank;
  memcpy(gm->dims, out->dims, sizeof(gm->dims));
  op_broadcast_strides(x, out, gm->strides);
  return Q8RT_OK;
}

static void expand_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                       const op_exec_ctx *ctx) {
  (void)params, (void)workspace, (void)ctx;
  const et_geom *gm = geom;
  data_strided_copy(in[0].data, out[0].data, gm->elem, gm->rank, gm->dims, gm->strides, 0);
}

static q8rt_status tile_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  (void)params;
  const op_shape *x = &in[0];
  q8rt_status st;
  if ((st = data_check_movable(n, x, "input", err)) != Q8RT_OK) return st;
  int64_t rep[Q8RT_MAX_RANK];
  size_t count;
  int known;
  if ((st = data_shape_values(n, &in[1], 1, "repeats", concrete, rep, Q8RT_MAX_RANK, &count, &known, err)) != Q8RT_OK) {
    return st;
  }
  out->dtype = x->dtype;
  out->rank = x->rank;
  if (x->rank < 0) return Q8RT_OK;
  if (in[1].rank == 1 && in[1].dims[0] >= 0 && in[1].dims[0] != x->rank) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Tile node '%s': repeats has %lld values for an input of rank %d", n->name,
                     (long long)in[1].dims[0], x->rank);
  }
  for (int d = 0; d < x->rank; d++) out->dims[d] = -1;
  if (!known) return Q8RT_OK;
  for (int d = 0; d < x->rank; d++) {
    if (rep[d] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Tile node '%s': repeats[%d] is negative (%lld)", n->name, d,
                       (long long)rep[d]);
    }
    if (x->dims[d] < 0) continue;
    if (!q8rt_mul_i64(x->dims[d], rep[d], &out->dims[d]) || out->dims[d] > Q8RT_MAX_ELEMENTS) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Tile node '%s': dimension %d times %lld repeats is too large", n->name,
                       d, (long long)rep[d]);
    }
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(out->dims, out->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Tile node '%s': the output would have more than %lld elements", n->name,
                     (long long)Q8RT_MAX_ELEMENTS);
  }
  et_geom *gm = geom;
  gm->elem = q8rt_dtype_size(x->dtype);
  gm->rank = x->rank;
  memcpy(gm->dims, out->dims, sizeof(gm->dims));
  memcpy(gm->xdims, x->dims, sizeof(gm->xdims));
  int64_t s = 1;
  for (int d = x->rank - 1; d >= 0; d--) {
    gm->strides[d] = s;
    s *= x->dims[d];
  }
  if (total == 0) gm->rank = -1; /* nothing to write */
  return Q8RT_OK;
}

static void tile_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  (void)params, (void)workspace, (void)ctx;
  const et_geom *gm = geom;
  const int r = gm->rank;
  if (r < 0) return;
  const size_t es = gm->elem;
  if (r == 0) {
    memcpy(out[0].data, in[0].data, es);
    return;
  }
  const size_t row = (size_t)gm->xdims[r - 1] * es, reps = (size_t)(gm->dims[r - 1] / gm->xdims[r - 1]);
  const char *x = in[0].data;
  char *y = out[0].data;
  int64_t idx[Q8RT_MAX_RANK] = {0}, xi[Q8RT_MAX_RANK] = {0};
  size_t off = 0; /* input element offset of the current row */
  for (;;) {
    for (size_t k = 0; k < reps; k++) {
      memcpy(y, x + off * es, row);
      y += row;
    }
    int d = r - 2;
    for (; d >= 0; d--) {
      idx[d]++;
      if (idx[d] == gm->dims[d]) {
        off -= (size_t)(xi[d] * gm->strides[d]);
        idx[d] = xi[d] = 0;
        continue;
      }
      if (++xi[d] == gm->xdims[d]) {
        off -= (size_t)((xi[d] - 1) * gm->strides[d]);
        xi[d] = 0;
      } else {
        off += (size_t)gm->strides[d];
      }
      break;
    }
    if (d < 0) break;
  }
}

const op_def q8rt_op_expand = {
    .op_type = "Expand", .domain = "", .min_opset = 8, .prepare = et_prepare, .infer = expand_infer, .run = expand_run};
const op_def q8rt_op_tile = {
    .op_type = "Tile", .domain = "", .min_opset = 6, .prepare = et_prepare, .infer = tile_infer, .run = tile_run};
