/* Concat (any element type; all inputs of one type; bytes are copied as they are). */
#include <stdio.h>
#include <string.h>

#include "data_common.h"

typedef struct concat_params {
  int64_t axis;
} concat_params;

#define CONCAT_MAX_INPUTS 60 /* keeps the geometry within Q8RT_GEOM_BYTES */

typedef struct concat_geom {
  int n;
  size_t outer;
  size_t out_row;                /* bytes of one output row (axis and inner) */
  size_t row[CONCAT_MAX_INPUTS]; /* bytes of one row of input i */
} concat_geom;

static q8rt_status concat_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 1, CONCAT_MAX_INPUTS, 1, 1, err)) != Q8RT_OK) return st;
  for (int i = 0; i < n->n_inputs; i++) {
    if (n->inputs[i] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Concat node '%s': input %d is missing", n->name, i);
    }
  }
  concat_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if (n->opset >= 4 && ir_node_attr(n, "axis") == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Concat node '%s': attribute 'axis' is missing", n->name);
  }
  if ((st = ir_attr_int(n, "axis", 1, &p->axis, err)) != Q8RT_OK) return st;
  ctx->kernel = "concat__scalar";
  ctx->reason = "row copies";
  *out = p;
  return Q8RT_OK;
}

_Static_assert(sizeof(concat_geom) <= Q8RT_GEOM_BYTES, "concat geometry must fit a step's geom record");

static q8rt_status concat_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                                void *geom, q8rt_error *err) {
  const concat_params *p = params;
  q8rt_status st;
  int rank = -1;
  q8rt_dtype dt = Q8RT_DTYPE_UNDEFINED;
  for (int i = 0; i < n->n_inputs; i++) {
    char what[16];
    snprintf(what, sizeof(what), "%d", i);
    if ((st = data_check_movable(n, &in[i], what, err)) != Q8RT_OK) return st;
    if (in[i].dtype != Q8RT_DTYPE_UNDEFINED) {
      if (dt != Q8RT_DTYPE_UNDEFINED && dt != in[i].dtype) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Concat node '%s': input %d is %s, input 0 is %s", n->name, i,
                         q8rt_onnx_type_name(in[i].dtype), q8rt_onnx_type_name(dt));
      }
      dt = in[i].dtype;
    }
    if (in[i].rank >= 0) {
      if (rank >= 0 && rank != in[i].rank) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Concat node '%s': input %d has rank %d, another has rank %d", n->name,
                         i, in[i].rank, rank);
      }
      rank = in[i].rank;
    }
  }
  out->dtype = dt;
  out->rank = rank;
  if (rank < 0) return Q8RT_OK;
  int64_t axis;
  if (!op_normalize_axis(p->axis, rank, &axis)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "Concat node '%s': attribute 'axis' (%lld) is out of range for rank %d", n->name,
                     (long long)p->axis, rank);
  }
  for (int d = 0; d < rank; d++) {
    int64_t v = d == axis ? 0 : -1;
    for (int i = 0; i < n->n_inputs; i++) {
      const int64_t x = in[i].rank < 0 ? -1 : in[i].dims[d];
      if (d == axis) {
        v = (v < 0 || x < 0) ? -1 : v + x;
      } else if (x >= 0) {
        if (v >= 0 && v != x) {
          return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                           "Concat node '%s': input %d has size %lld in dimension %d, expected %lld", n->name, i,
                           (long long)x, d, (long long)v);
        }
        v = x;
      }
    }
    out->dims[d] = v;
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t total;
  if ((st = data_count(n, out, &total, err)) != Q8RT_OK) return st;
  concat_geom *gm = geom;
  const size_t elem = q8rt_dtype_size(dt);
  size_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= (size_t)out->dims[d];
  for (int d = (int)axis + 1; d < rank; d++) inner *= (size_t)out->dims[d];
  gm->n = n->n_inputs;
  gm->outer = outer;
  gm->out_row = (size_t)out->dims[axis] * inner * elem;
  for (int i = 0; i < n->n_inputs; i++) gm->row[i] = (size_t)in[i].dims[axis] * inner * elem;
  return Q8RT_OK;
}

typedef struct concat_job {
  const concat_geom *gm;
  const op_tensor *in;
  char *y;
} concat_job;

/* Output bytes [begin, end): rows of the dims before the axis, each the inputs' rows in turn; a
 * range may start and end inside a row (a concatenation of few rows: NCHW along channels). */
static void concat_span(const concat_job *j, size_t begin, size_t end) {
  const concat_geom *gm = j->gm;
  size_t o = begin / gm->out_row, at = begin % gm->out_row, pos = begin;
  while (pos < end) {
    size_t skip = at; /* offset inside row o */
    for (int i = 0; i < gm->n && pos < end; i++) {
      if (skip >= gm->row[i]) {
        skip -= gm->row[i];
        continue;
      }
      size_t len = gm->row[i] - skip;
      if (len > end - pos) len = end - pos;
      data_copy_bytes(j->y + pos, (const char *)j->in[i].data + o * gm->row[i] + skip, len);
      pos += len;
      skip = 0;
    }
    o++;
    at = 0;
  }
}

/* Whole output rows [o0, o1) of a concatenation with short rows (along the last axes: Basic
 * Pitch's harmonic stacking joins 8 tensors of one float per row), input by input: a row of 1,
 * 2, 4 or 8 bytes is one load and store, not a copy call. */
static void concat_rows(const concat_job *j, size_t o0, size_t o1) {
  const concat_geom *gm = j->gm;
  const size_t pitch = gm->out_row, rows = o1 - o0;
  size_t off = 0;
  for (int i = 0; i < gm->n; i++) {
    const size_t r = gm->row[i];
    const char *src = (const char *)j->in[i].data + o0 * r;
    char *dst = j->y + o0 * pitch + off;
    switch (r) {
      case 0: break;
      case 1:
        for (size_t k = 0; k < rows; k++) dst[k * pitch] = src[k];
        break;
      case 2:
        for (size_t k = 0; k < rows; k++) memcpy(dst + k * pitch, src + 2 * k, 2);
        break;
      case 4:
        for (size_t k = 0; k < rows; k++) memcpy(dst + k * pitch, src + 4 * k, 4);
        break;
      case 8:
        for (size_t k = 0; k < rows; k++) memcpy(dst + k * pitch, src + 8 * k, 8);
        break;
      default:
        for (size_t k = 0; k < rows; k++) data_copy_bytes(dst + k * pitch, src + k * r, r);
        break;
    }
    off += r;
  }
}

/* Output rows up to this many bytes go through concat_rows. */
#define CONCAT_SHORT_ROW 512

static void concat_bytes(void *arg, size_t begin, size_t end) {
  const concat_job *j = arg;
  const size_t row = j->gm->out_row;
  const size_t o0 = (begin + row - 1) / row, o1 = end / row; /* the whole rows inside the range */
  if (row > CONCAT_SHORT_ROW || o0 >= o1) {
    concat_span(j, begin, end);
    return;
  }
  if (begin < o0 * row) concat_span(j, begin, o0 * row);
  concat_rows(j, o0, o1);
  if (o1 * row < end) concat_span(j, o1 * row, end);
}

static void concat_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                       const op_exec_ctx *ctx) {
  (void)params, (void)workspace;
  const concat_geom *gm = geom;
  if (gm->out_row == 0) return;
  concat_job j = {gm, in, out[0].data};
  /* grain: 16 KB of copies (~2 us) */
  op_parallel_range(ctx, gm->outer * gm->out_row, 16384, concat_bytes, &j);
}

/* Channels-last: the same logical axis, found where the physical order puts it (rows copied as
 * they come; the planner hands every input channels-last with one rank). */
static const void *concat_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool,
                               const char **why) {
  const concat_params *p = params;
  const ir_value *x = ir_node_input(g, n, 0);
  int64_t axis;
  if (x == NULL || x->rank < 3 || !op_normalize_axis(p->axis, x->rank, &axis)) {
    *why = "axis or rank unknown at load";
    return NULL;
  }
  for (int k = 0; k < n->n_inputs; k++) {
    const ir_value *v = ir_node_input(g, n, k);
    if (v == NULL || v->constant != NULL) {
      *why = "a constant tensor among the inputs";
      return NULL;
    }
  }
  concat_params *q = q8rt_pool_alloc(pool, sizeof(*q), 16);
  if (q == NULL) return NULL;
  q->axis = op_axis_nhwc((int)axis, x->rank);
  return q;
}

const op_def q8rt_op_concat = {.op_type = "Concat",
                               .domain = "",
                               .min_opset = 1,
                               .prepare = concat_prepare,
                               .infer = concat_infer,
                               .run = concat_run,
                               .nhwc_params = concat_nhwc};
