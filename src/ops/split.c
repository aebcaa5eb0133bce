/* Split (any element type): the chunk sizes from the `split` attribute (opset < 13), the `split`
 * input (opset 13: a constant, or a value known when shapes are bound), `num_outputs` (opset 18:
 * ceil(dim / n) per output, the last one smaller), or else equal parts (the axis must divide).
 *
 * Run: one copy per (outer index, output) of chunk * inner elements; the chunk of each output is
 * its own bound shape along the axis, so the geometry stays small for up to 64 outputs.
 * Channels-last (a split along the channels of an NHWC input, as YOLOv8's C2f blocks have): the
 * same along the physical axis, every output channels-last: a pixel's chunk per output, so the
 * layout changes around it go. The outer indices are split over the session's pool. */
#include <string.h>

#include "data_common.h"

typedef struct split_params {
  int64_t axis;
  int64_t *split; /* constant sizes (NULL: from the input's value, num_outputs or equal parts) */
  size_t count;
  int dyn_split;       /* opset >= 13 split input that is not a constant */
  int64_t num_outputs; /* opset 18 attribute, 0 when absent */
} split_params;

typedef struct split_geom {
  size_t outer, inner_bytes; /* inner_bytes: one index step along the axis */
  size_t row_bytes;          /* one outer index: the axis times inner_bytes */
  int nout;
  uint32_t chunk[Q8RT_MAX_IO]; /* each output's size along the axis (<= 2^31: Q8RT_MAX_ELEMENTS) */
} split_geom;

_Static_assert(sizeof(split_geom) <= Q8RT_GEOM_BYTES, "split_geom too large");

static q8rt_status split_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 1, 2, 1, Q8RT_MAX_IO, err)) != Q8RT_OK) return st;
  split_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if ((st = ir_attr_int(n, "axis", 0, &p->axis, err)) != Q8RT_OK) return st;
  int present = 0;
  if (n->opset < 13 && n->n_inputs < 2) {
    if ((st = data_attr_ints(ctx, "split", &p->split, &p->count, &present, err)) != Q8RT_OK) return st;
  } else if (n->n_inputs >= 2 && n->inputs[1] >= 0) {
    const ir_value *sv = ir_node_input(ctx->graph, n, 1);
    if (sv->constant != NULL) {
      if ((st = data_const_ints(ctx, 1, "split", 0, 0, &p->split, &p->count, &present, err)) != Q8RT_OK) return st;
    } else {
      p->dyn_split = 1;
    }
  }
  if (n->opset >= 18) {
    if ((st = ir_attr_int(n, "num_outputs", 0, &p->num_outputs, err)) != Q8RT_OK) return st;
    const int has_num = ir_node_attr(n, "num_outputs") != NULL;
    if (has_num == (present || p->dyn_split)) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "Split node '%s': exactly one of input 'split' and attribute 'num_outputs' must be given",
                       n->name);
    }
    if (has_num && (p->num_outputs < 1 || p->num_outputs != n->n_outputs)) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "Split node '%s': num_outputs is %lld but the node has %d outputs", n->name,
                       (long long)p->num_outputs, n->n_outputs);
    }
  }
  if (present) {
    if (p->count != (size_t)n->n_outputs) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Split node '%s': split has %zu sizes for %d outputs", n->name,
                       p->count, n->n_outputs);
    }
    for (size_t i = 0; i < p->count; i++) {
      if (p->split[i] < 0) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Split node '%s': split[%zu] is %lld (sizes must be >= 0)",
                         n->name, i, (long long)p->split[i]);
      }
    }
  }
  ctx->kernel = "split__scalar";
  ctx->reason = "one copy per outer index and output";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status split_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                               void *geom, q8rt_error *err) {
  const split_params *p = params;
  const op_shape *x = &in[0];
  q8rt_status st;
  if ((st = data_check_movable(n, x, "input", err)) != Q8RT_OK) return st;
  const int nout = n->n_outputs;
  for (int k = 0; k < nout; k++) {
    out[k].dtype = x->dtype;
    out[k].rank = x->rank;
  }
  if (x->rank < 0) return Q8RT_OK;
  int64_t axis;
  if (!op_normalize_axis(p->axis, x->rank, &axis)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Split node '%s': axis %lld is out of range for rank %d", n->name,
                     (long long)p->axis, x->rank);
  }
  for (int k = 0; k < nout; k++) memcpy(out[k].dims, x->dims, sizeof(x->dims));
  const int64_t dim = x->dims[axis];
  const int64_t *sizes = p->split;
  int64_t buf[Q8RT_MAX_IO];
  if (p->dyn_split) {
    const op_shape *s = &in[1];
    if (s->dtype != Q8RT_DTYPE_UNDEFINED && s->dtype != Q8RT_DTYPE_INT64) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Split node '%s': input 1 (split) is %s, expected int64", n->name,
                       q8rt_onnx_type_name(s->dtype));
    }
    if (s->value == NULL) {
      if (!concrete) {
        for (int k = 0; k < nout; k++) out[k].dims[axis] = -1;
        return Q8RT_OK;
      }
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                       "Split node '%s': input 1 (split) is computed at run time: not supported (q8rt needs its value "
                       "when shapes are bound)",
                       n->name);
    }
    if (s->rank != 1 || s->dims[0] != nout) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Split node '%s': split has %lld sizes for %d outputs", n->name,
                       s->rank == 1 ? (long long)s->dims[0] : -1LL, nout);
    }
    for (int k = 0; k < nout; k++) {
      buf[k] = ((const int64_t *)s->value)[k];
      if (buf[k] < 0) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Split node '%s': split[%d] is %lld (sizes must be >= 0)",
                         n->name, k, (long long)buf[k]);
      }
    }
    sizes = buf;
  }
  if (dim < 0) {
    for (int k = 0; k < nout; k++) out[k].dims[axis] = sizes != NULL ? sizes[k] : -1;
    return Q8RT_OK;
  }
  if (sizes != NULL) {
    int64_t sum = 0;
    for (int k = 0; k < nout; k++) {
      if (!q8rt_add_i64(sum, sizes[k], &sum)) sum = INT64_MAX;
      out[k].dims[axis] = sizes[k];
    }
    if (sum != dim) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Split node '%s': split sizes sum to %lld but axis %lld has size %lld",
                       n->name, (long long)sum, (long long)axis, (long long)dim);
    }
  } else if (p->num_outputs > 0) {
    /* opset 18: ceil(dim / n) each, the remainder in the last one */
    const int64_t chunk = (dim + p->num_outputs - 1) / p->num_outputs;
    if (p->num_outputs > dim || chunk * (p->num_outputs - 1) >= dim) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "Split node '%s': num_outputs %lld cannot split axis %lld of size %lld into non-empty parts",
                       n->name, (long long)p->num_outputs, (long long)axis, (long long)dim);
    }
    for (int k = 0; k < nout; k++) out[k].dims[axis] = k < nout - 1 ? chunk : dim - chunk * (nout - 1);
  } else {
    if (dim % nout != 0) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "Split node '%s': axis %lld of size %lld does not split into %d equal parts", n->name,
                       (long long)axis, (long long)dim, nout);
    }
    for (int k = 0; k < nout; k++) out[k].dims[axis] = dim / nout;
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t total;
  if ((st = data_count(n, x, &total, err)) != Q8RT_OK) return st;
  split_geom *gm = geom;
  size_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= (size_t)x->dims[d];
  for (int d = (int)axis + 1; d < x->rank; d++) inner *= (size_t)x->dims[d];
  gm->outer = total == 0 ? 0 : outer;
  gm->inner_bytes = inner * q8rt_dtype_size(x->dtype);
  gm->row_bytes = (size_t)dim * gm->inner_bytes;
  gm->nout = nout;
  for (int k = 0; k < nout; k++) gm->chunk[k] = (uint32_t)out[k].dims[axis];
  return Q8RT_OK;
}

typedef struct split_job {
  const split_geom *gm;
  const char *src;
  op_tensor *out;
} split_job;

/* Outer indices [begin, end). */
static void split_rows(void *arg, size_t begin, size_t end) {
  const split_job *j = arg;
  const split_geom *gm = j->gm;
  size_t at = 0; /* offset of output k's chunk in a row */
  for (int k = 0; k < gm->nout; k++) {
    const size_t bytes = (size_t)gm->chunk[k] * gm->inner_bytes;
    char *dst = j->out[k].data;
    if (dst != NULL && bytes > 0) {
      for (size_t o = begin; o < end; o++) data_copy_bytes(dst + o * bytes, j->src + o * gm->row_bytes + at, bytes);
    }
    at += bytes;
  }
}

static void split_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx) {
  (void)params, (void)workspace;
  const split_geom *gm = geom;
  if (gm->outer == 0 || gm->row_bytes == 0) return;
  split_job j = {gm, in[0].data, out};
  /* grain: ~16 KB of copies (~2 us) */
  op_parallel_range(ctx, gm->outer, 16384 / gm->row_bytes + 1, split_rows, &j);
}

/* Channels-last: the same logical axis, found where the physical order puts it; every output is
 * written channels-last (nhwc_all_outputs). */
static const void *split_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool,
                              const char **why) {
  const split_params *p = params;
  const ir_value *x = ir_node_input(g, n, 0);
  int64_t axis;
  if (x == NULL || x->rank < 3 || !op_normalize_axis(p->axis, x->rank, &axis)) {
    *why = "axis or rank unknown at load";
    return NULL;
  }

  split_params *q = q8rt_pool_alloc(pool, sizeof(*q), 16);
  if (q == NULL) return NULL;
  *q = *p;
  q->axis = op_axis_nhwc((int)axis, x->rank);
  return q;
}

const op_def q8rt_op_split = {.op_type = "Split",
                              .domain = "",
                              .min_opset = 1,
                              .prepare = split_prepare,
                              .infer = split_infer,
                              .run = split_run,
                              .nhwc_params = split_nhwc,
                              .nhwc_all_outputs = 1};
