/* Float32 elementwise math: Floor, Ceil, Round (half to even), Erf, Gelu (opset 20, approximate
 * "none" or "tanh"), Elu, Selu, Softplus.
 *
 * Floor, Ceil and Round are exact. The others follow ONNX Runtime's CPU functors operation by
 * operation with q8rt's own exp/log1p/erf/tanh (src/common/fmath.h: the same bits on x86-64 and
 * aarch64, unlike libm's) where ORT uses its MLAS/Eigen approximations, so
 * they agree with ORT within a few ulp of max(|y|, 1) (the op tests state the bound; relative to |y|
 * alone they can differ much more where 1 + erf or exp - 1 cancels, and ORT's approximations are
 * the less accurate there):
 *   Elu       x >= 0 ? x : alpha * (exp(x) - 1)
 *   Selu      x > 0 ? gamma * x : gamma * (alpha * (exp(x) - 1))
 *   Softplus  x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)), in double, rounded once
 *   Gelu      0.5 * x * (1 + erf(x * M_SQRT1_2))
 *             tanh: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
 * erf of Erf and Gelu on the f32-vtranscend kernels (q8rt_erff to the bit on SIMD lanes of
 * doubles), Gelu in blocks of 256; Elu and Selu whole on f32-vtranscend's velu/vselu (exp as
 * q8rt_expf, the selection by lane masks); Softplus (exp and log1p kept in double) and the
 * tanh Gelu stay scalar. The elements are split over the session's pool. */
#include <math.h>
#include <string.h>

#include "common/fmath.h"
#include "op.h"
#include "op_util.h"

enum fm_kind { FM_FLOOR, FM_CEIL, FM_ROUND, FM_ERF, FM_GELU, FM_GELU_TANH, FM_ELU, FM_SELU, FM_SOFTPLUS };

typedef struct fm_params {
  enum fm_kind kind;
  float alpha, gamma;
  q8rt_f32_vtranscend_ukernel_fn tr; /* erf (Erf, Gelu); NULL for the others */
  q8rt_f32_velu_ukernel_fn elu;      /* Elu, Selu */
  q8rt_f32_velu_params elu_params;
} fm_params;

typedef struct fm_geom {
  size_t total;
} fm_geom;

static q8rt_status fm_prepare_kind(op_prepare_ctx *ctx, void **out, q8rt_error *err, enum fm_kind kind) {
  const ir_node *n = ctx->node;
  if (n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0] < 0 || n->outputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 1 input and 1 output (has %d and %d)",
                     n->op_type, n->name, n->n_inputs, n->n_outputs);
  }
  fm_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->kind = kind;
  q8rt_status st = Q8RT_OK;
  switch (kind) {
    case FM_ELU: st = ir_attr_float(n, "alpha", 1.0f, &p->alpha, err); break;
    case FM_SELU:
      if ((st = ir_attr_float(n, "alpha", 1.67326319217681884765625f, &p->alpha, err)) != Q8RT_OK) return st;
      st = ir_attr_float(n, "gamma", 1.05070102214813232421875f, &p->gamma, err);
      break;
    case FM_GELU: {
      const char *approx;
      if ((st = ir_attr_string(n, "approximate", "none", &approx, err)) != Q8RT_OK) return st;
      if (strcmp(approx, "tanh") == 0) {
        p->kind = FM_GELU_TANH;
      } else if (strcmp(approx, "none") != 0) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Gelu node '%s': approximate '%s' is not 'none' or 'tanh'",
                         n->name, approx);
      }
      break;
    }
    default: break;
  }
  if (st != Q8RT_OK) return st;
  ctx->kernel = "unary_math_f32__scalar";
  ctx->reason = n->op_type;
  p->tr = NULL;
  p->elu = NULL;
  p->elu_params.alpha = p->alpha;
  p->elu_params.gamma = p->gamma;
  if (p->kind == FM_ERF || p->kind == FM_GELU) p->tr = op_f32_vtranscend_pick(ctx, Q8RT_F32_VERF, &ctx->kernel);
  if (p->kind == FM_ELU) p->elu = op_f32_velu_pick(ctx, Q8RT_F32_VELU, &ctx->kernel);
  if (p->kind == FM_SELU) p->elu = op_f32_velu_pick(ctx, Q8RT_F32_VSELU, &ctx->kernel);
  *out = p;
  return Q8RT_OK;
}

static q8rt_status fm_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                            void *geom, q8rt_error *err) {
  (void)params;
  if (in[0].dtype != Q8RT_DTYPE_FLOAT32) {
    return q8rt_fail(err, in[0].dtype == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input X is %s (q8rt supports float32 here)", n->op_type, n->name,
                     q8rt_onnx_type_name(in[0].dtype));
  }
  out[0] = in[0];
  out[0].value = NULL;
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(in[0].dims, in[0].rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input is too large", n->op_type, n->name);
  }
  ((fm_geom *)geom)->total = (size_t)total;
  return Q8RT_OK;
}

typedef struct fm_job {
  const fm_params *p;
  const float *x;
  float *y;
} fm_job;

/* elements [begin, end); y may be x (in place): each block reads x[i] before it writes y[i] */
static void fm_range(void *arg, size_t begin, size_t end) {
  const fm_job *j = arg;
  const fm_params *p = j->p;
  const float *x = j->x + begin;
  float *y = j->y + begin;
  const size_t n = end - begin;
  float t[256]; /* erf(x / sqrt 2) or exp(x) of a block, by the f32-vtranscend kernel */
  switch (p->kind) {
    case FM_FLOOR:
      for (size_t i = 0; i < n; i++) y[i] = floorf(x[i]);
      break;
    case FM_CEIL:
      for (size_t i = 0; i < n; i++) y[i] = ceilf(x[i]);
      break;
    case FM_ROUND: /* the default rounding mode: to nearest, ties to even */
      for (size_t i = 0; i < n; i++) y[i] = nearbyintf(x[i]);
      break;
    case FM_ERF: p->tr(n, x, y); break;
    case FM_GELU:
      for (size_t o = 0; o < n; o += 256) {
        const size_t m = n - o < 256 ? n - o : 256;
        for (size_t i = 0; i < m; i++) t[i] = x[o + i] * (float)M_SQRT1_2;
        p->tr(m, t, t);
        for (size_t i = 0; i < m; i++) {
          const float v = x[o + i];
          y[o + i] = 0.5f * v * (1.0f + t[i]);
        }
      }
      break;
    case FM_GELU_TANH: {
      const float k = 0.7978845608028654f; /* sqrt(2/pi) */
      for (size_t i = 0; i < n; i++) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + q8rt_tanhf(k * (v + 0.044715f * v * v * v)));
      }
      break;
    }
    case FM_ELU:
    case FM_SELU: p->elu(n, x, y, &p->elu_params); break;
    case FM_SOFTPLUS:
      for (size_t i = 0; i < n; i++) {
        const float v = x[i];
        y[i] = (float)(v > 0.0f ? v + q8rt_log1p_d(q8rt_exp_d(-v)) : q8rt_log1p_d(q8rt_exp_d(v)));
      }
      break;
  }
}

static void fm_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                   const op_exec_ctx *ctx) {
  (void)workspace;
  const fm_params *p = params;
  fm_job j = {p, in[0].data, out[0].data};
  /* chunks fixed by the size, so any thread count gives the same bytes (elementwise anyway) */
  const size_t grain = p->kind == FM_FLOOR || p->kind == FM_CEIL || p->kind == FM_ROUND ? 4096 : 1024;
  op_parallel_range(ctx, ((const fm_geom *)geom)->total, grain, fm_range, &j);
}

#define FM_OP(SYM, NAME, KIND, MIN_OPSET)                                              \
  static q8rt_status SYM##_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) { \
    return fm_prepare_kind(ctx, out, err, KIND);                                       \
  }                                                                                    \
  const op_def q8rt_op_##SYM = {.op_type = NAME,                                       \
                                .domain = "",                                          \
                                .min_opset = MIN_OPSET,                                \
                                .prepare = SYM##_prepare,                              \
                                .infer = fm_infer,                                     \
                                .run = fm_run};

FM_OP(floor, "Floor", FM_FLOOR, 6)
FM_OP(ceil, "Ceil", FM_CEIL, 6)
FM_OP(round, "Round", FM_ROUND, 11)
FM_OP(erf, "Erf", FM_ERF, 9)
FM_OP(gelu, "Gelu", FM_GELU, 20)
FM_OP(elu, "Elu", FM_ELU, 6)
FM_OP(selu, "Selu", FM_SELU, 6)
FM_OP(softplus, "Softplus", FM_SOFTPLUS, 1)
