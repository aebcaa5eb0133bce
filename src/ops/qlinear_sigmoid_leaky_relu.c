/* QLinearSigmoid and QLinearLeakyRelu (com.microsoft 1), uint8 / int8: a 256-entry table built
 * at load exactly as ONNX Runtime builds it (QlinearBuildLookupTable), then one lookup per byte.
 *
 *   in[i]  = x_scale · (int)((T)i − x_zp)                       (float, i = 0..255 as T's bits)
 *   out[i] = f(in[i])
 *     LeakyRelu: v >= 0 ? v : alpha · v
 *     Sigmoid:   MLAS's logistic (Eigen's rational approximation, as its FMA3 kernel runs it on
 *                x86-64): v clamped to [−18, 18], s = v·v,
 *                p = v · fma(fma(fma(fma(s, a9, a7), s, a5), s, a3), s, a1)
 *                q = fma(fma(fma(fma(fma(s, b10, b8), s, b6), s, b4), s, b2), s, b0)
 *                out = p / q + 0.5
 *   table[i] = MlasQuantizeLinear(out[i]) = cvt(clamp(out / y_scale, qmin − y_zp, qmax − y_zp)) + y_zp */
#include <math.h>
#include <string.h>

#include "qlinear_common.h"

enum { LUT_SIGMOID, LUT_LEAKY_RELU };

typedef struct qlut_params {
  q8rt_dtype type;
  q8rt_x8_lut_ukernel_fn fn; /* x8-lut: the table steps' kernel */
  uint8_t table[256];
} qlut_params;

static float mlas_logistic(float v) {
  if (v < -18.0f) v = -18.0f;
  if (v > 18.0f) v = 18.0f;
  const float s = v * v;
  float p = fmaf(s, 4.37031012579801e-11f, 1.15627324459942e-07f);
  p = fmaf(p, s, 6.08574864600143e-05f);
  p = fmaf(p, s, 8.51377133304701e-03f);
  p = fmaf(p, s, 2.48287947061529e-01f);
  p = p * v;
  float q = fmaf(s, 6.10247389755681e-13f, 5.76102136993427e-09f);
  q = fmaf(q, s, 6.29106785017040e-06f);
  q = fmaf(q, s, 1.70198817374094e-03f);
  q = fmaf(q, s, 1.16817656904453e-01f);
  q = fmaf(q, s, 9.93151921023180e-01f);
  return p / q + 0.5f;
}

static q8rt_status qlut_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err, int kind) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  q8rt_status st;
  q8rt_dtype t = Q8RT_DTYPE_UNDEFINED;
  if ((st = qk_unary_io(g, n, &t, err)) != Q8RT_OK) return st;
  qlut_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  float xs, ys, alpha = 0.01f;
  int32_t xz, yz;
  if ((st = op_const_scale(g, n, 1, "X_scale", &xs, err)) != Q8RT_OK) return st;
  if ((st = qk_zero_point(g, n, 2, "X_zero_point", t, &xz, &t, err)) != Q8RT_OK) return st;
  if ((st = op_const_scale(g, n, 3, "Y_scale", &ys, err)) != Q8RT_OK) return st;
  if ((st = qk_zero_point(g, n, 4, "Y_zero_point", t, &yz, &t, err)) != Q8RT_OK) return st;
  if (t == Q8RT_DTYPE_UNDEFINED) t = Q8RT_DTYPE_UINT8;
  p->type = t;
  if (kind == LUT_LEAKY_RELU && (st = ir_attr_float(n, "alpha", 0.01f, &alpha, err)) != Q8RT_OK) return st;
  int32_t qmin, qmax;
  q8rt_dtype_range(t, &qmin, &qmax);
  const float lo = (float)(qmin - yz), hi = (float)(qmax - yz);
  for (int i = 0; i < 256; i++) {
    const int32_t x = t == Q8RT_DTYPE_INT8 ? (int32_t)(int8_t)(uint8_t)i : i;
    const float in = xs * (float)(x - xz);
    const float v = kind == LUT_SIGMOID ? mlas_logistic(in) : (in >= 0.0f ? in : alpha * in);
    p->table[i] = (uint8_t)(q8rt_round_clamp(v / ys, lo, hi) + yz);
  }
  p->fn = op_lookup_table_kernel(ctx->backend, ctx->isa, &ctx->kernel);
  ctx->reason = kind == LUT_SIGMOID ? "256-entry table (MLAS logistic, MLAS quantize)"
                                    : "256-entry table (float leaky relu, MLAS quantize)";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status qsig_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return qlut_prepare(ctx, out, err, LUT_SIGMOID);
}
static q8rt_status qlrelu_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return qlut_prepare(ctx, out, err, LUT_LEAKY_RELU);
}

typedef struct qlut_geom {
  size_t total;
} qlut_geom;

static q8rt_status qlut_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  const qlut_params *p = params;
  q8rt_status st = qk_check_input_type(n, "X", in[0].dtype, p->type, err);
  if (st != Q8RT_OK) return st;
  *out = in[0];
  out->dtype = p->type;
  if (concrete) ((qlut_geom *)geom)->total = op_shape_count(&in[0]);
  return Q8RT_OK;
}

typedef struct qlut_job {
  q8rt_x8_lut_ukernel_fn fn;
  const uint8_t *table, *x;
  uint8_t *y;
} qlut_job;

static void qlut_range(void *arg, size_t begin, size_t end) {
  const qlut_job *j = arg;
  j->fn(end - begin, j->x + begin, j->y + begin, j->table);
}

static void qlut_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  (void)workspace;
  const qlut_params *p = params;
  qlut_job j = {p->fn, p->table, in[0].data, out[0].data};
  op_parallel_range(ctx, ((const qlut_geom *)geom)->total, 4096, qlut_range, &j); /* as the table steps */
}

const op_def q8rt_op_qlinear_sigmoid = {
    .op_type = "QLinearSigmoid",
    .domain = "com.microsoft",
    .min_opset = 1,
    .prepare = qsig_prepare,
    .infer = qlut_infer,
    .run = qlut_run,
};
const op_def q8rt_op_qlinear_leaky_relu = {
    .op_type = "QLinearLeakyRelu",
    .domain = "com.microsoft",
    .min_opset = 1,
    .prepare = qlrelu_prepare,
    .infer = qlut_infer,
    .run = qlut_run,
};
