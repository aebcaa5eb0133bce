/* Softmax on float32: before opset 13 the input is viewed as 2-D [prod(dims[:axis]),
 * prod(dims[axis:])] (axis default 1); from 13 on it works along `axis` (default -1). Per row, as
 * ORT's MLAS: the maximum, e = exp(x - max), their sum (in double: MLAS sums in vector lanes, more
 * accurately than a float32 running sum; its exp is its own approximation, within a few ulp of
 * expf), then e * (1 / sum). */
#include <math.h>

#include "op.h"
#include "op_util.h"

typedef struct softmax_params {
  int64_t axis;
} softmax_params;

typedef struct softmax_geom {
  size_t outer, n, inner; /* x viewed as [outer][n][inner]; softmax over n */
} softmax_geom;

static q8rt_status softmax_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  if (n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 1 input and 1 output", n->op_type, n->name);
  }
  softmax_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  q8rt_status st = ir_attr_int(n, "axis", n->opset >= 13 ? -1 : 1, &p->axis, err);
  if (st != Q8RT_OK) return st;
  ctx->kernel = "softmax__scalar";
  ctx->reason = n->opset >= 13 ? "along axis (opset 13+)" : "2-D view at axis (opset < 13)";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status softmax_infer(const void *params, const ir_node *n, const op_shape *in, op_shape *out, int concrete,
                                 void *geom, q8rt_error *err) {
  const softmax_params *p = params;
  const op_shape *x = &in[0];
  if (x->dtype != Q8RT_DTYPE_FLOAT32) {
    return q8rt_fail(err, x->dtype == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input is %s (q8rt supports float32)", n->op_type, n->name,
                     q8rt_onnx_type_name(x->dtype));
  }
  *out = *x;
  if (x->rank < 0) return Q8RT_OK;
  int64_t axis;
  /* opset < 13 allows axis == rank? No: [-r, r-1] in every version. A rank-0 input has no axis. */
  if (!op_normalize_axis(p->axis, x->rank, &axis)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'axis' %lld is out of range for rank %d",
                     n->op_type, n->name, (long long)p->axis, x->rank);
  }
  if (!concrete) return Q8RT_OK;
  softmax_geom *gm = geom;
  int64_t total;
  if (!q8rt_shape_elements(x->dims, x->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input is too large", n->op_type, n->name);
  }
  size_t outer = 1, mid = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= (size_t)x->dims[d];
  if (n->opset < 13) {
    for (int d = (int)axis; d < x->rank; d++) mid *= (size_t)x->dims[d];
  } else {
    mid = (size_t)x->dims[axis];
    for (int d = (int)axis + 1; d < x->rank; d++) inner *= (size_t)x->dims[d];
  }
  gm->outer = outer;
  gm->n = mid;
  gm->inner = inner;
  return Q8RT_OK;
}

typedef struct softmax_job {
  const softmax_geom *gm;
  const float *x;
  float *y;
} softmax_job;

/* Rows [begin, end) of the outer x inner rows. */
static void softmax_range(void *arg, size_t begin, size_t end) {
  const softmax_job *jb = arg;
  const size_t n = jb->gm->n, inner = jb->gm->inner;
  for (size_t r = begin; r < end; r++) {
    const size_t o = r / inner, j = r % inner;
    const float *xr = jb->x + o * n * inner + j;
    float *yr = jb->y + o * n * inner + j;
    float mx = xr[0];
    for (size_t i = 1; i < n; i++) mx = mx < xr[i * inner] ? xr[i * inner] : mx;
    const float neg = -mx;
    double sum = 0.0; /* ORT sums in vector lanes; a double sum is as close as any order */
    for (size_t i = 0; i < n; i++) {
      const float e = expf(xr[i * inner] + neg);
      yr[i * inner] = e;
      sum += e;
    }
    const float rcp = 1.0f / (float)sum;
    for (size_t i = 0; i < n; i++) yr[i * inner] *= rcp;
  }
}

static void softmax_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                        const op_exec_ctx *ctx) {
  (void)params;
  (void)workspace;
  const softmax_geom *gm = geom;
  if (gm->n == 0) return;
  softmax_job j = {gm, in[0].data, out[0].data};
  op_parallel_range(ctx, gm->outer * gm->inner, 2048 / gm->n + 1, softmax_range, &j);
}

const op_def q8rt_op_softmax = {.op_type = "Softmax",
                                .domain = "",
                                .min_opset = 1,
                                .prepare = softmax_prepare,
                                .infer = softmax_infer,
                                .run = softmax_run};
