/* Comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual: float32 and the integer types,
 * Equal also bool) giving bool, and the logical ops on bool (And, Or, Xor with broadcasting; Not).
 * Plain C comparisons, as ORT's Eigen code: any comparison with NaN is false. Bool inputs are read
 * as "nonzero is true", outputs are 0 or 1. */
#include <string.h>

#include "op.h"
#include "op_util.h"

enum cmp_kind { CMP_EQ, CMP_LT, CMP_GT, CMP_LE, CMP_GE, LOG_AND, LOG_OR, LOG_XOR, LOG_NOT };

typedef struct cmp_params {
  enum cmp_kind kind;
} cmp_params;

typedef struct cmp_geom {
  op_bcast_geom g;
  q8rt_dtype dtype;
} cmp_geom;

_Static_assert(sizeof(cmp_geom) <= Q8RT_GEOM_BYTES, "cmp_geom too large");

static q8rt_status cmp_prepare_kind(op_prepare_ctx *ctx, void **out, q8rt_error *err, enum cmp_kind kind) {
  const ir_node *n = ctx->node;
  const int nin = kind == LOG_NOT ? 1 : 2;
  if (n->n_inputs != nin || n->n_outputs != 1 || n->outputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects %d input%s and 1 output (has %d and %d)",
                     n->op_type, n->name, nin, nin == 1 ? "" : "s", n->n_inputs, n->n_outputs);
  }
  for (int i = 0; i < nin; i++) {
    if (n->inputs[i] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d is missing", n->op_type, n->name, i);
    }
  }
  cmp_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->kind = kind;
  ctx->kernel = kind >= LOG_AND ? "logical__scalar" : "compare__scalar";
  ctx->reason = "broadcasting";
  *out = p;
  return Q8RT_OK;
}

static bool cmp_type_ok(enum cmp_kind k, q8rt_dtype t) {
  if (k >= LOG_AND) return t == Q8RT_DTYPE_BOOL;
  if (t == Q8RT_DTYPE_BOOL) return k == CMP_EQ;
  return op_dtype_is_numeric(t);
}

static q8rt_status cmp_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                             void *geom, q8rt_error *err) {
  const cmp_params *p = params;
  const int nin = n->n_inputs;
  const q8rt_dtype t = in[0].dtype;
  for (int i = 0; i < nin; i++) {
    if (in[i].dtype == Q8RT_DTYPE_UNDEFINED) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d has no known type", n->op_type, n->name,
                       i);
    }
    if (!cmp_type_ok(p->kind, in[i].dtype)) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input %d is %s (q8rt supports %s here)", n->op_type,
                       n->name, i, q8rt_onnx_type_name(in[i].dtype),
                       p->kind >= LOG_AND  ? "bool"
                       : p->kind == CMP_EQ ? "float32, bool and 8/16/32/64-bit integers"
                                           : "float32 and 8/16/32/64-bit integers");
    }
    if (in[i].dtype != t) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d is %s but input 0 is %s", n->op_type,
                       n->name, i, q8rt_onnx_type_name(in[i].dtype), q8rt_onnx_type_name(t));
    }
  }
  const op_shape *shapes[2] = {&in[0], &in[nin - 1]};
  memset(out, 0, sizeof(*out));
  q8rt_status st = op_broadcast_shapes(n, shapes, nin, out, err);
  if (st != Q8RT_OK) return st;
  out->dtype = Q8RT_DTYPE_BOOL;
  if (!concrete || out->rank < 0 || geom == NULL) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(out->dims, out->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': output is too large", n->op_type, n->name);
  }
  cmp_geom *gm = geom;
  op_bcast_geom_init(&gm->g, shapes, nin, out);
  gm->dtype = t;
  return Q8RT_OK;
}

#define CMP_ROW(NAME, T, EXPR)                                                                       \
  static void NAME(const void *ctx, size_t n, const void *const *src, const size_t *st, void *dst) { \
    (void)ctx;                                                                                       \
    const T *a = src[0], *b = src[1];                                                                \
    uint8_t *y = dst;                                                                                \
    const size_t sa = st[0], sb = st[1];                                                             \
    if (sa == 1 && sb == 1) {                                                                        \
      for (size_t i = 0; i < n; i++) {                                                               \
        const T x = a[i], w = b[i];                                                                  \
        y[i] = (uint8_t)(EXPR);                                                                      \
      }                                                                                              \
    } else {                                                                                         \
      for (size_t i = 0; i < n; i++) {                                                               \
        const T x = a[i * sa], w = b[i * sb];                                                        \
        y[i] = (uint8_t)(EXPR);                                                                      \
      }                                                                                              \
    }                                                                                                \
  }

#define CMP_FAMILY(DT, SUF, T) \
  CMP_ROW(SUF##_eq, T, x == w) \
  CMP_ROW(SUF##_lt, T, x < w)  \
  CMP_ROW(SUF##_gt, T, x > w)  \
  CMP_ROW(SUF##_le, T, x <= w) \
  CMP_ROW(SUF##_ge, T, x >= w)

OP_NUMERIC_TYPES(CMP_FAMILY)
CMP_ROW(b_eq, uint8_t, (x != 0) == (w != 0))
CMP_ROW(b_and, uint8_t, (x != 0) & (w != 0))
CMP_ROW(b_or, uint8_t, (x != 0) | (w != 0))
CMP_ROW(b_xor, uint8_t, (x != 0) ^ (w != 0))

static op_bcast_row_fn pick(enum cmp_kind k, q8rt_dtype t) {
#define PICK(SUF)                 \
  switch (k) {                    \
    case CMP_EQ: return SUF##_eq; \
    case CMP_LT: return SUF##_lt; \
    case CMP_GT: return SUF##_gt; \
    case CMP_LE: return SUF##_le; \
    case CMP_GE: return SUF##_ge; \
    default: return NULL;         \
  }
  switch (k) {
    case LOG_AND: return b_and;
    case LOG_OR: return b_or;
    case LOG_XOR: return b_xor;
    default: break;
  }
#define CASE(DT, SUF, T) \
  case DT: PICK(SUF)
  switch (t) {
    OP_NUMERIC_TYPES(CASE)
    case Q8RT_DTYPE_BOOL: return b_eq;
    default: return NULL;
  }
#undef CASE
#undef PICK
}

static void cmp_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  (void)workspace, (void)ctx;
  const cmp_params *p = params;
  const cmp_geom *gm = geom;
  if (p->kind == LOG_NOT) {
    const uint8_t *x = in[0].data;
    uint8_t *y = out[0].data;
    for (size_t i = 0; i < gm->g.total; i++) y[i] = x[i] == 0;
    return;
  }
  const size_t es = q8rt_dtype_size(gm->dtype);
  const void *src[2] = {in[0].data, in[1].data};
  const size_t esize[2] = {es, es};
  op_bcast_run(&gm->g, pick(p->kind, gm->dtype), NULL, src, esize, out[0].data, 1);
}

#define CMP_OP(SYM, NAME, KIND, MIN_OPSET)                                             \
  static q8rt_status SYM##_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) { \
    return cmp_prepare_kind(ctx, out, err, KIND);                                      \
  }                                                                                    \
  const op_def q8rt_op_##SYM = {.op_type = NAME,                                       \
                                .domain = "",                                          \
                                .min_opset = MIN_OPSET,                                \
                                .prepare = SYM##_prepare,                              \
                                .infer = cmp_infer,                                    \
                                .run = cmp_run};

CMP_OP(equal, "Equal", CMP_EQ, 7)
CMP_OP(less, "Less", CMP_LT, 7)
CMP_OP(greater, "Greater", CMP_GT, 7)
CMP_OP(less_or_equal, "LessOrEqual", CMP_LE, 12)
CMP_OP(greater_or_equal, "GreaterOrEqual", CMP_GE, 12)
CMP_OP(and, "And", LOG_AND, 7)
CMP_OP(or, "Or", LOG_OR, 7)
CMP_OP(xor, "Xor", LOG_XOR, 7)
CMP_OP(not, "Not", LOG_NOT, 1)
