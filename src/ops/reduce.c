/* Reductions on float32.
 *
 * ReduceMean / ReduceSum / ReduceSumSquare / ReduceMax / ReduceMin / ReduceProd / ReduceL2: axes
 * from the attribute (before opset 18;
 * ReduceSum before 13) or from the optional constant second input (after); keepdims
 * (default 1); noop_with_empty_axes (input form). No axes reduces everything. Sum and Mean over
 * innermost axes (no kept dim after a reduced one) add in ONNX Runtime's order there, Eigen's
 * vectorized sum of each row (red_sum_row); over other axes the sum runs in float32 in memory order
 * over the reduced elements (ORT's order too, but for reduced axes between kept ones, which ORT
 * sums through its GEMM with a ones vector: the last bit can differ there). The mean divides the
 * sum by the count (as ORT: sum / N). Over an empty set: sum 0, mean NaN (0/0), max -inf, min +inf, product 1, L2 0.
 * Max and Min propagate NaN; the product multiplies in memory order; L2 is sqrtf of the float32 sum of squares. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "op_util.h"

enum red_kind { RED_MEAN, RED_SUM, RED_MAX, RED_SUMSQ, RED_MIN, RED_PROD, RED_L2 };

typedef struct red_params {
  enum red_kind kind;
  int keepdims;
  int noop_empty;
  int naxes; /* -1: all axes (none given) */
  int64_t axes[Q8RT_MAX_RANK];
} red_params;

typedef struct red_geom {
  int nk, nr; /* kept and reduced dims (in input order) */
  int64_t kdims[Q8RT_MAX_RANK], kstr[Q8RT_MAX_RANK];
  int64_t rdims[Q8RT_MAX_RANK], rstr[Q8RT_MAX_RANK];
  size_t out_total, red_count;
  int identity; /* noop_with_empty_axes with no axes: copy */
  int rows;     /* each output reduces one contiguous row of red_count elements, output o at o * red_count */
} red_geom;

_Static_assert(sizeof(red_geom) <= Q8RT_GEOM_BYTES, "red_geom too large");

static q8rt_status red_prepare_kind(op_prepare_ctx *ctx, void **out, q8rt_error *err, enum red_kind kind,
                                    int input_opset) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  const int axes_input = n->opset >= input_opset;
  if (n->n_inputs < 1 || n->n_inputs > (axes_input ? 2 : 1) || n->n_outputs != 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects %s and 1 output (has %d inputs)", n->op_type,
                     n->name, axes_input ? "1 or 2 inputs" : "1 input", n->n_inputs);
  }
  if (n->inputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input 0 (data) is missing", n->op_type, n->name);
  }
  red_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->kind = kind;
  int64_t v;
  q8rt_status st;
  if ((st = ir_attr_int(n, "keepdims", 1, &v, err)) != Q8RT_OK) return st;
  p->keepdims = v != 0;
  p->naxes = -1;
  if (axes_input) {
    if ((st = ir_attr_int(n, "noop_with_empty_axes", 0, &v, err)) != Q8RT_OK) return st;
    p->noop_empty = v != 0;
    if (ir_node_attr(n, "axes") != NULL) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "%s node '%s': attribute 'axes' is not allowed at opset %d (axes is an input)", n->op_type,
                       n->name, n->opset);
    }
    const ir_value *av = ir_node_input(g, n, 1);
    if (av != NULL) {
      if (av->constant == NULL) {
        return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                         "%s node '%s': input 1 (axes, '%s') must be an initializer or constant", n->op_type, n->name,
                         av->name);
      }
      const ir_tensor *t = av->constant;
      if (t->dtype != Q8RT_DTYPE_INT64 || t->rank > 1) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input 1 (axes) must be a 1-D int64 tensor",
                         n->op_type, n->name);
      }
      if (t->count > Q8RT_MAX_RANK) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input 1 (axes) has %lld entries", n->op_type,
                         n->name, (long long)t->count);
      }
      if (t->count > 0) {
        p->naxes = (int)t->count;
        memcpy(p->axes, t->data, (size_t)t->count * sizeof(int64_t));
      }
    }
  } else {
    const int64_t *axes;
    size_t count;
    if ((st = ir_attr_ints(n, "axes", &axes, &count, err)) != Q8RT_OK) return st;
    if (count > Q8RT_MAX_RANK) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'axes' has %zu entries", n->op_type,
                       n->name, count);
    }
    if (count > 0) {
      p->naxes = (int)count;
      memcpy(p->axes, axes, count * sizeof(int64_t));
    }
  }
  ctx->kernel = "reduce__scalar";
  ctx->reason = "float32 reference";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status red_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                             void *geom, q8rt_error *err) {
  const red_params *p = params;
  const op_shape *x = &in[0];
  if (x->dtype != Q8RT_DTYPE_FLOAT32) {
    return q8rt_fail(err, x->dtype == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input data is %s (q8rt supports float32)", n->op_type, n->name,
                     q8rt_onnx_type_name(x->dtype));
  }
  memset(out, 0, sizeof(*out));
  out->dtype = Q8RT_DTYPE_FLOAT32;
  const int identity = p->naxes < 0 && p->noop_empty;
  if (identity) {
    *out = *x;
  }
  if (x->rank < 0) {
    out->rank = -1;
    return Q8RT_OK;
  }
  int reduce[Q8RT_MAX_RANK] = {0};
  if (!identity) {
    if (p->naxes < 0) {
      for (int d = 0; d < x->rank; d++) reduce[d] = 1;
    } else {
      for (int i = 0; i < p->naxes; i++) {
        int64_t a;
        if (!op_normalize_axis(p->axes[i], x->rank, &a)) {
          return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': axis %lld is out of range for rank %d",
                           n->op_type, n->name, (long long)p->axes[i], x->rank);
        }
        if (reduce[a]) {
          return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': axis %lld is repeated", n->op_type, n->name,
                           (long long)p->axes[i]);
        }
        reduce[a] = 1;
      }
    }
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
      if (!reduce[d]) {
        out->dims[r++] = x->dims[d];
      } else if (p->keepdims) {
        out->dims[r++] = 1;
      }
    }
    out->rank = r;
  }
  if (!concrete) return Q8RT_OK;
  red_geom *gm = geom;
  int64_t total;
  if (!q8rt_shape_elements(x->dims, x->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input is too large", n->op_type, n->name);
  }
  gm->identity = identity;
  gm->out_total = op_shape_count(out);
  if (identity) return Q8RT_OK;
  int64_t stride = 1;
  int64_t strides[Q8RT_MAX_RANK];
  for (int d = x->rank - 1; d >= 0; d--) {
    strides[d] = stride;
    stride *= x->dims[d];
  }
  gm->nk = gm->nr = 0;
  gm->red_count = 1;
  /* rows: no kept dim comes after a reduced dim (ORT's FastReduceKR; it keeps dims of extent 1, so
   * [3, 37, 1] over axis 1 is its K-R-K form, summed through its GEMM: not matched here) */
  gm->rows = 1;
  for (int d = 0, seen_reduced = 0; d < x->rank; d++) {
    if (reduce[d]) {
      seen_reduced = 1;
    } else if (seen_reduced) {
      gm->rows = 0;
    }
  }
  for (int d = 0; d < x->rank; d++) {
    if (reduce[d]) {
      gm->rdims[gm->nr] = x->dims[d];
      gm->rstr[gm->nr++] = strides[d];
      gm->red_count *= (size_t)x->dims[d];
    } else {
      gm->kdims[gm->nk] = x->dims[d];
      gm->kstr[gm->nk++] = strides[d];
    }
  }
  return Q8RT_OK;
}

/* The sum of a row of n floats that starts `off` floats into its tensor, in ONNX Runtime's order:
 * its ReduceSum/ReduceMean over innermost axes (FastReduceKR) sums each row with Eigen's vectorized
 * reduction (LinearVectorizedTraversal) on 4-float packets (SSE2 and NEON builds alike): from the
 * row's first 16-byte-aligned element (ORT's buffers are 64-byte aligned, so the row's offset
 * decides it) two packet accumulators over pairs of packets, added, then a last single packet;
 * folded (p0 + p2) + (p1 + p3); then the elements before the aligned start and after the last
 * packet, in order. Rows with no whole aligned packet add in order from their first element. */
static float red_sum_row(const float *x, size_t n, size_t off) {
  if (n == 0) return 0.0f;
  size_t start = (4 - off % 4) % 4;
  if (start > n) start = n;
  const size_t body = (n - start) / 4 * 4, body2 = (n - start) / 8 * 8;
  float r;
  if (body == 0) {
    r = x[0];
    for (size_t i = 1; i < n; i++) r += x[i];
    return r;
  }
  const float *a = x + start;
  float p0[4], p1[4];
  for (int l = 0; l < 4; l++) p0[l] = a[l];
  if (body > 4) {
    for (int l = 0; l < 4; l++) p1[l] = a[4 + l];
    for (size_t i = 8; i < body2; i += 8) {
      for (int l = 0; l < 4; l++) {
        p0[l] += a[i + (size_t)l];
        p1[l] += a[i + 4 + (size_t)l];
      }
    }
    for (int l = 0; l < 4; l++) p0[l] += p1[l];
    if (body > body2) {
      for (int l = 0; l < 4; l++) p0[l] += a[body2 + (size_t)l];
    }
  }
  r = (p0[0] + p0[2]) + (p0[1] + p0[3]);
  for (size_t i = 0; i < start; i++) r += x[i];
  for (size_t i = start + body; i < n; i++) r += x[i];
  return r;
}

/* One element into the accumulator, for every kind (the contiguous fast path of red_run repeats
 * the Sum/Mean, SumSquare and Max steps as plain loops). */
static inline float red_step(enum red_kind k, float acc, float v) {
  switch (k) {
    case RED_MAX: return acc < v || isnan(v) ? v : acc;
    case RED_MIN: return acc > v || isnan(v) ? v : acc;
    case RED_PROD: return acc * v;
    case RED_SUMSQ:
    case RED_L2: return acc + v * v;
    default: return acc + v; /* RED_SUM, RED_MEAN */
  }
}

static void red_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  (void)workspace;
  (void)ctx;
  const red_params *p = params;
  const red_geom *gm = geom;
  const float *x = in[0].data;
  float *y = out[0].data;
  const enum red_kind k = p->kind;
  if (gm->identity) {
    /* no axes with noop_with_empty_axes: ORT still applies the per-element part (x^2, sqrt(x^2)) */
    if (k == RED_SUMSQ || k == RED_L2) {
      for (size_t i = 0; i < gm->out_total; i++) y[i] = k == RED_L2 ? sqrtf(x[i] * x[i]) : x[i] * x[i];
    } else if (gm->out_total > 0) {
      memcpy(y, x, gm->out_total * sizeof(float));
    }
    return;
  }
  const float init = k == RED_MAX ? -INFINITY : k == RED_MIN ? INFINITY : k == RED_PROD ? 1.0f : 0.0f;
  int64_t kidx[Q8RT_MAX_RANK] = {0};
  size_t kof = 0;
  /* contiguous fast path (Sum, Mean, SumSquare, Max): the reduced dims are the innermost ones */
  const int inner_contig = k < RED_MIN && gm->nr > 0 && gm->rstr[gm->nr - 1] == 1 &&
                           (gm->nk == 0 || (size_t)gm->kstr[gm->nk - 1] == gm->red_count);
  if (gm->rows && (k == RED_SUM || k == RED_MEAN)) {
    for (size_t o = 0; o < gm->out_total; o++) {
      const float s = red_sum_row(x + o * gm->red_count, gm->red_count, o * gm->red_count);
      y[o] = k == RED_MEAN ? s / (float)gm->red_count : s;
    }
    return;
  }
  for (size_t o = 0; o < gm->out_total; o++) {
    float acc = init;
    if (inner_contig) {
      const float *row = x + kof;
      if (k == RED_MAX) {
        for (size_t i = 0; i < gm->red_count; i++) acc = acc < row[i] || isnan(row[i]) ? row[i] : acc;
      } else if (k == RED_SUMSQ) {
        for (size_t i = 0; i < gm->red_count; i++) acc += row[i] * row[i];
      } else {
        for (size_t i = 0; i < gm->red_count; i++) acc += row[i];
      }
    } else {
      int64_t ridx[Q8RT_MAX_RANK] = {0};
      size_t rof = 0;
      for (size_t i = 0; i < gm->red_count; i++) {
        acc = red_step(k, acc, x[kof + rof]);
        op_index_next(gm->nr, gm->rdims, gm->rstr, ridx, &rof);
      }
    }
    y[o] = k == RED_MEAN ? acc / (float)gm->red_count : k == RED_L2 ? sqrtf(acc) : acc;
    op_index_next(gm->nk, gm->kdims, gm->kstr, kidx, &kof);
  }
}

/* INPUT_OPSET: the opset from which axes is the optional second input instead of an attribute. */
#define RED_OP(SYM, NAME, KIND, INPUT_OPSET)                                           \
  static q8rt_status SYM##_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) { \
    return red_prepare_kind(ctx, out, err, KIND, INPUT_OPSET);                         \
  }                                                                                    \
  const op_def q8rt_op_##SYM = {                                                       \
      .op_type = NAME, .domain = "", .min_opset = 1, .prepare = SYM##_prepare, .infer = red_infer, .run = red_run};

RED_OP(reduce_mean, "ReduceMean", RED_MEAN, 18)
RED_OP(reduce_sum, "ReduceSum", RED_SUM, 13)
RED_OP(reduce_sum_square, "ReduceSumSquare", RED_SUMSQ, 18)
RED_OP(reduce_max, "ReduceMax", RED_MAX, 18)
RED_OP(reduce_min, "ReduceMin", RED_MIN, 18)
RED_OP(reduce_prod, "ReduceProd", RED_PROD, 18)
RED_OP(reduce_l2, "ReduceL2", RED_L2, 18)
