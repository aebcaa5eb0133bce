/* Softmax on float32: before opset 13 the input is viewed as 2-D [prod(dims[:axis]),
 * prod(dims[axis:])] (axis default 1); from 13 on it works along `axis` (default -1). Per row, as
 * ORT's MLAS: the maximum, e = exp(x - max), their sum in vector lanes, then e * (1 / sum), on the
 * f32-softmax kernels (kernels/f32-softmax: AVX-512, AVX2, NEON, the scalar twin), whose exp is
 * q8rt's own (q8rt_exp_nonpositive in q8rt-math.h: the same bits on x86-64 and aarch64; MLAS's exp
 * is its own approximation too, both within a few ulp of expf) and whose sum runs in 16 lanes
 * folded pairwise. Rows along an inner axis (elements `inner` apart: the columns of
 * [outer][n][inner]) run on f32-softmax-strided, vectors across consecutive columns, each lane
 * doing the row kernel's operations in its order: the same bits as the same values in a contiguous
 * row, with no transpose. Rows (or blocks of columns) are split over the session's pool.
 *
 * LogSoftmax (same axis rules): per row (contiguous or `inner` apart) y = (x - max) - log(sum),
 * as ORT's MLAS (x + (-max) - log(sum): two roundings), the maximum and the sum of
 * q8rt_exp_nonpositive(x - max) in f32-softmax's 16 lanes folded pairwise, the log q8rt_logf (the
 * same bits on every ISA); scalar only: it ends decoders (a [1, vocab] row per step), never hot. */
#include <math.h>
#include <string.h>

#include "common/fmath.h"
#include "f32-softmax-strided/f32-softmax-strided.h"
#include "f32-softmax/f32-softmax.h"
#include "op.h"
#include "op_util.h"
#include "q8rt-math.h"

static const struct {
  uint32_t isa;
  q8rt_f32_softmax_ukernel_fn fn;
  const char *name;
} g_f32_softmax[] = {
#define Q8RT_F32_SOFTMAX_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-softmax/f32-softmax.inc"
#undef Q8RT_F32_SOFTMAX_UKERNEL
};

static const struct {
  uint32_t isa;
  q8rt_f32_softmax_strided_ukernel_fn fn;
  const char *name;
} g_f32_softmax_strided[] = {
#define Q8RT_F32_SOFTMAX_STRIDED_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-softmax-strided/f32-softmax-strided.inc"
#undef Q8RT_F32_SOFTMAX_STRIDED_UKERNEL
};

typedef struct softmax_params {
  int64_t axis;
  q8rt_f32_softmax_ukernel_fn fn;
  q8rt_f32_softmax_strided_ukernel_fn strided;
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
  size_t v = OP_FIRST_USABLE(g_f32_softmax, ctx->isa, ctx->backend);
  p->fn = g_f32_softmax[v].fn;
  ctx->kernel = g_f32_softmax[v].name + 5; /* drop the "q8rt_" prefix */
  v = OP_FIRST_USABLE(g_f32_softmax_strided, ctx->isa, ctx->backend);
  p->strided = g_f32_softmax_strided[v].fn;
  /* the kernel --profile names: the strided one when the input's rank (if known) leaves dims
   * after the axis */
  const ir_value *xv = ir_node_input(ctx->graph, n, 0);
  int64_t ax;
  if (n->opset >= 13 && xv != NULL && xv->rank > 0 && op_normalize_axis(p->axis, xv->rank, &ax) && ax + 1 < xv->rank) {
    ctx->kernel = g_f32_softmax_strided[v].name + 5;
  }
  ctx->reason = n->opset >= 13 ? "along axis (opset 13+)" : "2-D view at axis (opset < 13)";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status softmax_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
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
  const softmax_params *p;
  const float *x;
  float *y;
} softmax_job;

/* Contiguous rows [begin, end) (inner == 1). */
static void softmax_rows(void *arg, size_t begin, size_t end) {
  const softmax_job *jb = arg;
  const size_t n = jb->gm->n;
  for (size_t r = begin; r < end; r++) jb->p->fn(n, jb->x + r * n, jb->y + r * n);
}

/* Columns per work item of the strided case (the kernels' widths divide it). */
#define SOFTMAX_COLS 64

/* Work item i of the strided case: SOFTMAX_COLS columns (fewer at the end of an outer slice). */
static void softmax_cols(void *arg, size_t i) {
  const softmax_job *jb = arg;
  const size_t n = jb->gm->n, inner = jb->gm->inner, blocks = (inner + SOFTMAX_COLS - 1) / SOFTMAX_COLS;
  const size_t o = i / blocks, j = i % blocks * SOFTMAX_COLS;
  const size_t cols = inner - j < SOFTMAX_COLS ? inner - j : SOFTMAX_COLS;
  const size_t off = o * n * inner + j;
  jb->p->strided(n, cols, inner, jb->x + off, jb->y + off);
}

static void softmax_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                        const op_exec_ctx *ctx) {
  (void)workspace;
  const softmax_params *p = params;
  const softmax_geom *gm = geom;
  if (gm->n == 0 || gm->outer * gm->inner == 0) return;
  softmax_job j = {gm, p, in[0].data, out[0].data};
  if (gm->inner == 1) {
    op_parallel_range(ctx, gm->outer, 4096 / gm->n + 1, softmax_rows, &j);
    return;
  }
  const size_t blocks = (gm->inner + SOFTMAX_COLS - 1) / SOFTMAX_COLS;
  op_parallel_items(ctx, gm->outer * blocks, gm->n * (gm->inner < SOFTMAX_COLS ? gm->inner : SOFTMAX_COLS), 4096,
                    softmax_cols, &j);
}

const op_def q8rt_op_softmax = {.op_type = "Softmax",
                                .domain = "",
                                .min_opset = 1,
                                .prepare = softmax_prepare,
                                .infer = softmax_infer,
                                .run = softmax_run};

/* ---- LogSoftmax ------------------------------------------------------------------------------ */

static q8rt_status log_softmax_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  if (n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 1 input and 1 output", n->op_type, n->name);
  }
  softmax_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  memset(p, 0, sizeof(*p));
  q8rt_status st = ir_attr_int(n, "axis", n->opset >= 13 ? -1 : 1, &p->axis, err);
  if (st != Q8RT_OK) return st;
  ctx->kernel = "log_softmax__scalar";
  ctx->reason = n->opset >= 13 ? "along axis (opset 13+)" : "2-D view at axis (opset < 13)";
  *out = p;
  return Q8RT_OK;
}

/* One row of n >= 1 floats `stride` apart (y may be x). */
static void log_softmax_row(size_t n, size_t stride, const float *x, float *y) {
  float m[16], acc[16];
  for (int j = 0; j < 16; j++) m[j] = -INFINITY, acc[j] = 0.0f;
  for (size_t i = 0; i < n; i++) {
    const float v = x[i * stride];
    m[i % 16] = v > m[i % 16] ? v : m[i % 16];
  }
  for (int w = 8; w >= 1; w /= 2) {
    for (int j = 0; j < w; j++) m[j] = m[j + w] > m[j] ? m[j + w] : m[j];
  }
  const float mx = m[0];
  for (size_t i = 0; i < n; i++) acc[i % 16] += q8rt_exp_nonpositive(x[i * stride] - mx);
  for (int w = 8; w >= 1; w /= 2) {
    for (int j = 0; j < w; j++) acc[j] = acc[j] + acc[j + w];
  }
  if (acc[0] != acc[0]) { /* NaN in the row (or +inf, or only -inf): the quiet NaN, as Softmax */
    const uint32_t qnan = 0x7fc00000u;
    for (size_t i = 0; i < n; i++) memcpy(&y[i * stride], &qnan, sizeof(qnan));
    return;
  }
  const float lg = q8rt_logf(acc[0]);
  for (size_t i = 0; i < n; i++) y[i * stride] = (x[i * stride] - mx) - lg;
}

/* Rows [begin, end) of outer * inner: row r is column r % inner of slice r / inner. */
static void log_softmax_rows(void *arg, size_t begin, size_t end) {
  const softmax_job *jb = arg;
  const size_t n = jb->gm->n, inner = jb->gm->inner;
  for (size_t r = begin; r < end; r++) {
    const size_t off = r / inner * n * inner + r % inner;
    log_softmax_row(n, inner, jb->x + off, jb->y + off);
  }
}

static void log_softmax_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                            const op_exec_ctx *ctx) {
  (void)workspace;
  const softmax_geom *gm = geom;
  if (gm->n == 0 || gm->outer * gm->inner == 0) return;
  softmax_job j = {gm, params, in[0].data, out[0].data};
  op_parallel_range(ctx, gm->outer * gm->inner, 4096 / gm->n + 1, log_softmax_rows, &j);
}

const op_def q8rt_op_log_softmax = {.op_type = "LogSoftmax",
                                    .domain = "",
                                    .min_opset = 1,
                                    .prepare = log_softmax_prepare,
                                    .infer = softmax_infer,
                                    .run = log_softmax_run};
