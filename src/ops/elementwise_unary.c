/* Elementwise unary ops: Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Exp, Sqrt,
 * Log, Reciprocal, Neg, Abs, Clip (float32, and the integer types for Relu/Neg/Abs/Clip where ONNX allows them).
 * (Identity is in reshape_flatten_squeeze_unsqueeze_identity_shape.c.)
 *
 * Formulas follow ONNX Runtime's CPU functors, operation by operation (no fusion):
 *   Relu        x < 0 ? 0 : x                       (std::max(x, 0): -0 and NaN pass through)
 *   LeakyRelu   x >= 0 ? x : alpha * x
 *   HardSigmoid max(0, min(1, alpha * x + beta))   (multiply, then add: two roundings)
 *   HardSwish   x * max(0, min(1, x * (1/6) + 0.5)) (the ONNX function body ORT runs)
 *   Clip        min(max(x, lo), hi)                (lo > hi gives hi everywhere, as ONNX says)
 *   Sigmoid     MLAS's logistic (ORT's kernel; Eigen's rational approximation): x clamped to
 *               [-18, 18], p(x)/q(x) + 0.5 with the polynomials in Horner form by fused
 *               multiply-adds, clamped to [0, 1]. Bit-identical to ORT's FMA3 kernel (x86-64
 *               with AVX2); fmaf keeps it the same on every machine.
 *   Tanh        MLAS's tanh the same way: x clamped to [-9, 9], p(x)/q(x).
 *   Exp, Log    q8rt_expf/q8rt_logf (src/common/fmath.h: correctly rounded but for rare near-ties,
 *               the same bits on every CPU; ORT: Eigen's exp/log, within an ulp or two), on the
 *               f32-vtranscend kernels (the same double-precision algorithm on SIMD lanes)
 *   Sqrt        sqrtf (exact)
 *   Reciprocal  1 / x (exact)
 * float32 Relu (a clamp to [0, +inf]: the same selects), Clip, Neg, Abs, Sqrt, LeakyRelu,
 * HardSigmoid, HardSwish, Sigmoid and Tanh run on the f32-vunary kernels (AVX-512, AVX2, NEON, the
 * scalar twin: the formulas above, byte for byte); Exp and Log on f32-vtranscend; Reciprocal on
 * the loop here. The
 * elements are split over the session's pool in chunks fixed by the size.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "f32-vunary/f32-vunary.h"
#include "op.h"
#include "op_util.h"
#include "q8rt-math.h"

enum un_kind {
  UN_RELU,
  UN_LEAKY,
  UN_SIGMOID,
  UN_HSIGMOID,
  UN_HSWISH,
  UN_TANH,
  UN_EXP,
  UN_SQRT,
  UN_LOG,
  UN_RECIPROCAL,
  UN_NEG,
  UN_ABS,
  UN_CLIP,
  UN_IDENTITY
};

typedef struct un_params {
  enum un_kind kind;
  float alpha, beta;
  /* Clip: bounds from attributes (opset < 11) or constant inputs; `dyn_lo`/`dyn_hi` when the bound
   * is a non-constant input read at run time; has_lo/has_hi 0 when omitted (type limits). */
  int has_lo, has_hi, dyn_lo, dyn_hi;
  double lo_f, hi_f;                 /* float32 bounds */
  int64_t lo_i, hi_i;                /* integer bounds */
  q8rt_f32_vunary_ukernel_fn f32;    /* float32 kernel, NULL: tr or a loop here (Reciprocal) */
  q8rt_f32_vtranscend_ukernel_fn tr; /* Exp, Log */
} un_params;

typedef struct un_geom {
  size_t total;
} un_geom;

static const char *kind_name(enum un_kind k) {
  static const char *const names[] = {"Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish",
                                      "Tanh", "Exp",       "Sqrt",    "Log",         "Reciprocal",
                                      "Neg",  "Abs",       "Clip",    "Identity"};
  return names[k];
}

static q8rt_status un_prepare_kind(op_prepare_ctx *ctx, void **out, q8rt_error *err, enum un_kind kind) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  const int max_in = kind == UN_CLIP && n->opset >= 11 ? 3 : 1;
  if (n->n_inputs < 1 || n->n_inputs > max_in || n->n_outputs < 1 || n->n_outputs > 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects %s input%s and 1 output (has %d and %d)",
                     n->op_type, n->name, max_in == 1 ? "1" : "1 to 3", max_in == 1 ? "" : "s", n->n_inputs,
                     n->n_outputs);
  }
  if (n->inputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input 0 (X) is missing", n->op_type, n->name);
  }
  un_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->kind = kind;
  q8rt_status st = Q8RT_OK;
  switch (kind) {
    case UN_LEAKY: st = ir_attr_float(n, "alpha", 0.01f, &p->alpha, err); break;
    case UN_HSIGMOID:
      if ((st = ir_attr_float(n, "alpha", 0.2f, &p->alpha, err)) != Q8RT_OK) return st;
      st = ir_attr_float(n, "beta", 0.5f, &p->beta, err);
      break;
    case UN_HSWISH:
      p->alpha = 1.0f / 6.0f;
      p->beta = 0.5f;
      break;
    case UN_CLIP:
      if (n->opset < 11) {
        float lo, hi;
        if ((st = ir_attr_float(n, "min", -FLT_MAX, &lo, err)) != Q8RT_OK) return st;
        if ((st = ir_attr_float(n, "max", FLT_MAX, &hi, err)) != Q8RT_OK) return st;
        p->has_lo = p->has_hi = 1;
        p->lo_f = lo;
        p->hi_f = hi;
      } else {
        for (int i = 1; i <= 2; i++) {
          const ir_value *v = ir_node_input(g, n, i);
          if (v == NULL) continue;
          if (i == 1)
            p->has_lo = 1;
          else
            p->has_hi = 1;
          if (v->constant == NULL) {
            if (i == 1)
              p->dyn_lo = 1;
            else
              p->dyn_hi = 1;
            continue;
          }
          const ir_tensor *t = v->constant;
          if (t->count != 1 || t->rank > 1) {
            return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                             "%s node '%s': input %d (%s) must be a scalar (has %lld elements)", n->op_type, n->name, i,
                             i == 1 ? "min" : "max", (long long)t->count);
          }
          if (i == 1) {
            p->lo_f = op_load_f64(t->data, t->dtype, 0);
            p->lo_i = op_load_i64(t->data, t->dtype, 0);
          } else {
            p->hi_f = op_load_f64(t->data, t->dtype, 0);
            p->hi_i = op_load_i64(t->data, t->dtype, 0);
          }
        }
      }
      break;
    default: break;
  }
  if (st != Q8RT_OK) return st;
  int op = -1;
  switch (kind) {
    case UN_RELU:
    case UN_CLIP: op = Q8RT_F32_VCLAMP; break;
    case UN_NEG: op = Q8RT_F32_VNEG; break;
    case UN_ABS: op = Q8RT_F32_VABS; break;
    case UN_SQRT: op = Q8RT_F32_VSQRT; break;
    case UN_LEAKY: op = Q8RT_F32_VLRELU; break;
    case UN_HSIGMOID: op = Q8RT_F32_VHSIGMOID; break;
    case UN_HSWISH: op = Q8RT_F32_VHSWISH; break;
    case UN_SIGMOID: op = Q8RT_F32_VSIGMOID; break;
    case UN_TANH: op = Q8RT_F32_VTANH; break;
    default: break;
  }
  const ir_value *x0 = ir_node_input(g, n, 0);
  const bool is_f32 = x0 == NULL || x0->dtype == Q8RT_DTYPE_FLOAT32 || x0->dtype == Q8RT_DTYPE_UNDEFINED;
  ctx->kernel = "unary__scalar";
  ctx->reason = kind_name(kind);
  if (op >= 0) {
    const char *name;
    p->f32 = op_f32_vunary_pick(ctx, (enum q8rt_f32_vunary_op)op, &name);
    if (is_f32) ctx->kernel = name;
  } else if (kind == UN_EXP || kind == UN_LOG) {
    const char *name;
    p->tr = op_f32_vtranscend_pick(ctx, kind == UN_EXP ? Q8RT_F32_VEXP : Q8RT_F32_VLOG, &name);
    ctx->kernel = name;
  }
  *out = p;
  return Q8RT_OK;
}

static q8rt_status un_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                            void *geom, q8rt_error *err) {
  const un_params *p = params;
  const q8rt_dtype t = in[0].dtype;
  bool ok;
  switch (p->kind) {
    case UN_IDENTITY: ok = t != Q8RT_DTYPE_UNDEFINED; break;
    case UN_RELU:
      ok = t == Q8RT_DTYPE_FLOAT32 || (n->opset >= 14 && (t == Q8RT_DTYPE_INT8 || t == Q8RT_DTYPE_INT32 ||
                                                          t == Q8RT_DTYPE_INT64 || t == Q8RT_DTYPE_INT16));
      break;
    case UN_NEG:
      ok = t == Q8RT_DTYPE_FLOAT32 || t == Q8RT_DTYPE_INT8 || t == Q8RT_DTYPE_INT16 || t == Q8RT_DTYPE_INT32 ||
           t == Q8RT_DTYPE_INT64;
      break;
    case UN_ABS: ok = op_dtype_is_numeric(t); break;
    case UN_CLIP: ok = t == Q8RT_DTYPE_FLOAT32 || (n->opset >= 12 && op_dtype_is_numeric(t)); break;
    default: ok = t == Q8RT_DTYPE_FLOAT32; break;
  }
  if (!ok) {
    return q8rt_fail(err, t == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input X is %s (q8rt supports %s here)", n->op_type, n->name, q8rt_onnx_type_name(t),
                     p->kind == UN_CLIP || p->kind == UN_ABS   ? "float32 and integers"
                     : p->kind == UN_RELU || p->kind == UN_NEG ? "float32 and signed integers"
                                                               : "float32");
  }
  if (p->kind == UN_CLIP && n->opset >= 11) {
    for (int i = 1; i <= 2 && i < n->n_inputs; i++) {
      if (in[i].rank < 0 && in[i].dtype == Q8RT_DTYPE_UNDEFINED) continue; /* omitted */
      if (in[i].dtype != t) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d (%s) is %s but X is %s", n->op_type,
                         n->name, i, i == 1 ? "min" : "max", q8rt_onnx_type_name(in[i].dtype), q8rt_onnx_type_name(t));
      }
      if (in[i].rank > 1 || (in[i].rank == 1 && in[i].dims[0] >= 0 && in[i].dims[0] != 1)) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input %d (%s) must be a scalar", n->op_type, n->name, i,
                         i == 1 ? "min" : "max");
      }
    }
  }
  out[0] = in[0];
  if (!concrete) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(in[0].dims, in[0].rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input is too large", n->op_type, n->name);
  }
  ((un_geom *)geom)->total = (size_t)total;
  return Q8RT_OK;
}

#define CLIP_INT(T, LOW, HIGH)                                           \
  do {                                                                   \
    const T *x = in[0].data;                                             \
    T *y = out[0].data;                                                  \
    T lo = (T)(LOW), hi = (T)(HIGH);                                     \
    if (p->has_lo) lo = p->dyn_lo ? *(const T *)in[1].data : (T)p->lo_i; \
    if (p->has_hi) hi = p->dyn_hi ? *(const T *)in[2].data : (T)p->hi_i; \
    for (size_t i = 0; i < nel; i++) {                                   \
      T v = x[i] < lo ? lo : x[i];                                       \
      y[i] = hi < v ? hi : v;                                            \
    }                                                                    \
  } while (0)

#define INT_UNARY(T, EXPR)             \
  do {                                 \
    const T *x = in[0].data;           \
    T *y = out[0].data;                \
    for (size_t i = 0; i < nel; i++) { \
      const T v = x[i];                \
      y[i] = (EXPR);                   \
    }                                  \
  } while (0)

static void un_run_int(const un_params *p, size_t nel, const op_tensor *in, op_tensor *out) {
  const q8rt_dtype t = in[0].shape->dtype;
  switch (p->kind) {
    case UN_CLIP:
      switch (t) {
        case Q8RT_DTYPE_INT64: CLIP_INT(int64_t, INT64_MIN, INT64_MAX); break;
        case Q8RT_DTYPE_INT32: CLIP_INT(int32_t, INT32_MIN, INT32_MAX); break;
        case Q8RT_DTYPE_INT16: CLIP_INT(int16_t, INT16_MIN, INT16_MAX); break;
        case Q8RT_DTYPE_UINT16: CLIP_INT(uint16_t, 0, UINT16_MAX); break;
        case Q8RT_DTYPE_INT8: CLIP_INT(int8_t, INT8_MIN, INT8_MAX); break;
        case Q8RT_DTYPE_UINT8: CLIP_INT(uint8_t, 0, UINT8_MAX); break;
        default: break;
      }
      break;
    case UN_RELU:
      switch (t) {
        case Q8RT_DTYPE_INT64: INT_UNARY(int64_t, v < 0 ? 0 : v); break;
        case Q8RT_DTYPE_INT32: INT_UNARY(int32_t, v < 0 ? 0 : v); break;
        case Q8RT_DTYPE_INT16: INT_UNARY(int16_t, v < 0 ? 0 : v); break;
        case Q8RT_DTYPE_INT8: INT_UNARY(int8_t, v < 0 ? 0 : v); break;
        default: break;
      }
      break;
    case UN_NEG: /* wraps: -INT_MIN is INT_MIN */
      switch (t) {
        case Q8RT_DTYPE_INT64: INT_UNARY(int64_t, (int64_t)(0u - (uint64_t)v)); break;
        case Q8RT_DTYPE_INT32: INT_UNARY(int32_t, (int32_t)(0u - (uint32_t)v)); break;
        case Q8RT_DTYPE_INT16: INT_UNARY(int16_t, (int16_t)(0u - (uint32_t)v)); break;
        case Q8RT_DTYPE_INT8: INT_UNARY(int8_t, (int8_t)(0u - (uint32_t)v)); break;
        default: break;
      }
      break;
    case UN_ABS:
      switch (t) {
        case Q8RT_DTYPE_INT64: INT_UNARY(int64_t, v < 0 ? (int64_t)(0u - (uint64_t)v) : v); break;
        case Q8RT_DTYPE_INT32: INT_UNARY(int32_t, v < 0 ? (int32_t)(0u - (uint32_t)v) : v); break;
        case Q8RT_DTYPE_INT16: INT_UNARY(int16_t, v < 0 ? (int16_t)(0u - (uint32_t)v) : v); break;
        case Q8RT_DTYPE_INT8: INT_UNARY(int8_t, v < 0 ? (int8_t)(0u - (uint32_t)v) : v); break;
        case Q8RT_DTYPE_UINT16: INT_UNARY(uint16_t, v); break;
        case Q8RT_DTYPE_UINT8: INT_UNARY(uint8_t, v); break;
        default: break;
      }
      break;
    default: break;
  }
}

typedef struct un_job {
  const un_params *p;
  const float *x;
  float *y;
  q8rt_f32_vunary_params kp;
} un_job;

/* float32 elements [begin, end) */
static void un_range(void *arg, size_t begin, size_t end) {
  const un_job *j = arg;
  const float *x = j->x + begin;
  float *y = j->y + begin;
  const size_t n = end - begin;
  if (j->p->f32 != NULL) {
    j->p->f32(n, x, y, &j->kp);
    return;
  }
  if (j->p->tr != NULL) {
    j->p->tr(n, x, y);
    return;
  }
  switch (j->p->kind) {
    case UN_RECIPROCAL:
      for (size_t i = 0; i < n; i++) y[i] = 1.0f / x[i];
      break;
    default: break;
  }
}

static void un_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                   const op_exec_ctx *ctx) {
  (void)workspace;
  const un_params *p = params;
  const size_t nel = ((const un_geom *)geom)->total;
  const q8rt_dtype t = in[0].shape->dtype;
  if (p->kind == UN_IDENTITY) {
    if (out[0].data != in[0].data && nel > 0) memcpy(out[0].data, in[0].data, nel * q8rt_dtype_size(t));
    return;
  }
  if (t != Q8RT_DTYPE_FLOAT32) {
    un_run_int(p, nel, in, out);
    return;
  }
  un_job j = {p, in[0].data, out[0].data, {0.0f, 0.0f, p->alpha, p->beta}};
  if (p->kind == UN_RELU) {
    j.kp.lo = 0.0f;
    j.kp.hi = INFINITY;
  } else if (p->kind == UN_CLIP) {
    j.kp.lo = -FLT_MAX;
    j.kp.hi = FLT_MAX;
    if (p->has_lo) j.kp.lo = p->dyn_lo ? *(const float *)in[1].data : (float)p->lo_f;
    if (p->has_hi) j.kp.hi = p->dyn_hi ? *(const float *)in[2].data : (float)p->hi_f;
  }
  /* the polynomial ops cost more per element: smaller chunks still pay for their hand-off */
  const size_t grain =
      p->kind == UN_SIGMOID || p->kind == UN_TANH || p->kind == UN_EXP || p->kind == UN_LOG ? 1024 : 4096;
  op_parallel_range(ctx, nel, grain, un_range, &j);
}

/* Elementwise on one tensor: the same elements in either layout, so channels-last input is
 * read as it comes and the output has its layout (the planner hands a Clip's bounds, when they
 * are computed inputs, NCHW: they are scalars of another rank). */
static const void *un_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool, const char **why) {
  (void)g, (void)n, (void)why;
  un_params *q = q8rt_pool_alloc(pool, sizeof(*q), 16);
  if (q == NULL) return NULL;
  *q = *(const un_params *)params;
  return q;
}

#define UNARY_OP(SYM, NAME, KIND, MIN_OPSET)                                           \
  static q8rt_status SYM##_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) { \
    return un_prepare_kind(ctx, out, err, KIND);                                       \
  }                                                                                    \
  const op_def q8rt_op_##SYM = {.op_type = NAME,                                       \
                                .domain = "",                                          \
                                .min_opset = MIN_OPSET,                                \
                                .prepare = SYM##_prepare,                              \
                                .infer = un_infer,                                     \
                                .run = un_run,                                         \
                                .nhwc_params = un_nhwc};

UNARY_OP(relu, "Relu", UN_RELU, 6)
UNARY_OP(leaky_relu, "LeakyRelu", UN_LEAKY, 6)
UNARY_OP(sigmoid, "Sigmoid", UN_SIGMOID, 6)
UNARY_OP(hard_sigmoid, "HardSigmoid", UN_HSIGMOID, 6)
UNARY_OP(hard_swish, "HardSwish", UN_HSWISH, 14)
UNARY_OP(tanh, "Tanh", UN_TANH, 6)
UNARY_OP(exp, "Exp", UN_EXP, 6)
UNARY_OP(sqrt, "Sqrt", UN_SQRT, 6)
UNARY_OP(log, "Log", UN_LOG, 6)
UNARY_OP(reciprocal, "Reciprocal", UN_RECIPROCAL, 6)
UNARY_OP(neg, "Neg", UN_NEG, 6)
UNARY_OP(abs, "Abs", UN_ABS, 6)
UNARY_OP(clip, "Clip", UN_CLIP, 6)
