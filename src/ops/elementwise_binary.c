/* Broadcasting binary ops: Add, Sub, Mul, Div (float32 and the integer types shape arithmetic and
 * dynamic quantization use), Pow (float32/int32/int64 base, float32/int32/int64 exponent), and
 * the variadic Max, Min, Sum, Mean (float32; integer Max/Min too).
 *
 * Numerics follow ONNX Runtime's CPU kernels:
 * - float32: one IEEE operation per element (no fusion: the build uses -ffp-contract=off), on the
 *   f32-vbinary kernels (kernels/f32-vbinary: AVX-512, AVX2, NEON, the scalar twin), whose three
 *   forms per op (vector op vector, vector op scalar, scalar op vector) keep each operand's side.
 * - integers: Add/Sub/Mul wrap modulo 2^bits (ORT's signed overflow is undefined; two's complement
 *   wrap is what its x86 code does). Div truncates toward zero like C++ `/`; division by zero,
 *   which crashes ORT (SIGFPE), gives 0 here, and INT_MIN / -1 gives INT_MIN.
 * - Pow: like ORT's PowImpl: a scalar exponent 2 or 3 is x*x or x*x*x in the base type; else
 *   float^float is powf, and every other pairing goes through std::pow's double promotion,
 *   converted back to the base type (out-of-range and NaN to integer: the x86 "integer
 *   indefinite" value INT_MIN, as cvttsd2si gives).
 * - Max/Min: std::max/std::min per pair, left to right (NaN handling as ORT's Eigen code: the
 *   first operand wins ties and NaN comparisons). Sum adds left to right; Mean divides the sum
 *   by the input count.
 *
 * Geometry: the output shape with both operands' broadcast strides, size-1 dims dropped and
 * neighbouring dims merged where both operands stay contiguous (or stay broadcast), so the inner
 * loop runs over the longest possible contiguous (or scalar) span. */
#include <math.h>
#include <string.h>

#include "f32-vbinary/f32-vbinary.h"
#include "op.h"
#include "op_util.h"

enum bin_kind { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV, BIN_POW, BIN_MAX, BIN_MIN, BIN_SUM, BIN_MEAN };

static const char *const g_input_names[2] = {"A", "B"};

typedef struct bin_params {
  enum bin_kind kind;
  int variadic; /* Max/Min/Sum/Mean: any number of inputs */
  int count;    /* number of inputs */
  /* float32: the op's f32-vbinary functions (vector, c, rc) and, for Mean, the divide by a scalar */
  q8rt_f32_vbinary_ukernel_fn f32[3];
  q8rt_f32_vbinary_ukernel_fn divc;
} bin_params;

/* f32-vbinary.inc as a table with the kernels' names (for --explain) */
#define VB_NAMES_(op, isa) \
  {"f32_v" #op "_ukernel__" #isa, "f32_v" #op "c_ukernel__" #isa, "f32_vr" #op "c_ukernel__" #isa},
static const struct {
  uint32_t isa;
  q8rt_f32_vbinary_set set;
  const char *name[Q8RT_F32_VBINARY_OP_COUNT][3];
} g_f32_vbinary[] = {
#define Q8RT_F32_VBINARY_UKERNELS(isa_flag, isa)                                                        \
  {isa_flag,                                                                                            \
   Q8RT_F32_VBINARY_TABLE(isa),                                                                         \
   {VB_NAMES_(add, isa) VB_NAMES_(sub, isa) VB_NAMES_(mul, isa) VB_NAMES_(div, isa) VB_NAMES_(max, isa) \
        VB_NAMES_(min, isa) VB_NAMES_(prelu, isa)}},
#include "f32-vbinary/f32-vbinary.inc"
#undef Q8RT_F32_VBINARY_UKERNELS
};
#undef VB_NAMES_

const q8rt_f32_vbinary_set *op_f32_vbinary_set(uint32_t isa, q8rt_backend backend) {
  size_t v = OP_FIRST_USABLE(g_f32_vbinary, isa, backend);
  return &g_f32_vbinary[v].set;
}

q8rt_f32_vbinary_ukernel_fn op_f32_vbinary_kernel(uint32_t isa, q8rt_backend backend, int op, int form) {
  return op_f32_vbinary_set(isa, backend)->fn[op][form];
}

const char *op_f32_vbinary_name(uint32_t isa, q8rt_backend backend, int op, int form) {
  size_t v = OP_FIRST_USABLE(g_f32_vbinary, isa, backend);
  return g_f32_vbinary[v].name[op][form];
}

typedef struct bin_geom {
  int rank; /* merged rank, >= 1 */
  int64_t dims[Q8RT_MAX_RANK];
  int64_t sa[Q8RT_MAX_RANK], sb[Q8RT_MAX_RANK]; /* element strides of A and B */
  size_t total;
  int pow_scalar_exp; /* Pow: exponent is one element (for ORT's x^2 / x^3 shortcut) */
} bin_geom;

_Static_assert(sizeof(bin_geom) <= Q8RT_GEOM_BYTES, "bin_geom too large");

/* ---- kernels ------------------------------------------------------------------------------- */

typedef void (*bin_fn)(size_t n, const void *a, size_t sa, const void *b, size_t sb, void *y);

#define BIN_LOOP(T, EXPR)                     \
  const T *A_ = a;                            \
  const T *B_ = b;                            \
  T *Y_ = y;                                  \
  if (sa == 1 && sb == 1) {                   \
    for (size_t i = 0; i < n; i++) {          \
      const T x = A_[i], w = B_[i];           \
      Y_[i] = (EXPR);                         \
    }                                         \
  } else if (sa == 1 && sb == 0) {            \
    const T w = B_[0];                        \
    for (size_t i = 0; i < n; i++) {          \
      const T x = A_[i];                      \
      Y_[i] = (EXPR);                         \
    }                                         \
  } else if (sa == 0 && sb == 1) {            \
    const T x = A_[0];                        \
    for (size_t i = 0; i < n; i++) {          \
      const T w = B_[i];                      \
      Y_[i] = (EXPR);                         \
    }                                         \
  } else {                                    \
    for (size_t i = 0; i < n; i++) {          \
      const T x = A_[i * sa], w = B_[i * sb]; \
      Y_[i] = (EXPR);                         \
    }                                         \
  }

#define DEF_BIN(NAME, T, EXPR) \
  static void NAME(size_t n, const void *a, size_t sa, const void *b, size_t sb, void *y) { BIN_LOOP(T, EXPR) }

/* integers: wrap through the unsigned type; division truncates, /0 gives 0 */
#define DEF_INT(SUF, T, U, SIGNED)                                                            \
  DEF_BIN(SUF##_add, T, (T)((U)x + (U)w))                                                     \
  DEF_BIN(SUF##_sub, T, (T)((U)x - (U)w))                                                     \
  DEF_BIN(SUF##_mul, T, (T)((U)x * (U)w))                                                     \
  DEF_BIN(SUF##_div, T, w == 0 ? (T)0 : (SIGNED && w == (T)-1) ? (T)(0u - (U)x) : (T)(x / w)) \
  DEF_BIN(SUF##_max, T, x < w ? w : x)                                                        \
  DEF_BIN(SUF##_min, T, w < x ? w : x)

DEF_INT(i64, int64_t, uint64_t, 1)
DEF_INT(i32, int32_t, uint32_t, 1)
DEF_INT(i16, int16_t, uint32_t, 1)
DEF_INT(u16, uint16_t, uint32_t, 0)
DEF_INT(i8, int8_t, uint32_t, 1)
DEF_INT(u8, uint8_t, uint32_t, 0)

DEF_BIN(pow_f32_f32, float, powf(x, w))
DEF_BIN(pow_i64_i64, int64_t, op_f64_to_i64(pow((double)x, (double)w)))
DEF_BIN(pow_i32_i32, int32_t, op_f64_to_i32(pow((double)x, (double)w)))

#define DEF_POW_MIXED(NAME, TA, TB, CONV)                                                     \
  static void NAME(size_t n, const void *a, size_t sa, const void *b, size_t sb, void *y) {   \
    const TA *A_ = a;                                                                         \
    const TB *B_ = b;                                                                         \
    TA *Y_ = y;                                                                               \
    for (size_t i = 0; i < n; i++) Y_[i] = CONV(pow((double)A_[i * sa], (double)B_[i * sb])); \
  }
#define F32_CONV(v) ((float)(v))
DEF_POW_MIXED(pow_f32_i64, float, int64_t, F32_CONV)
DEF_POW_MIXED(pow_f32_i32, float, int32_t, F32_CONV)
DEF_POW_MIXED(pow_i64_f32, int64_t, float, op_f64_to_i64)
DEF_POW_MIXED(pow_i64_i32, int64_t, int32_t, op_f64_to_i64)
DEF_POW_MIXED(pow_i32_f32, int32_t, float, op_f64_to_i32)
DEF_POW_MIXED(pow_i32_i64, int32_t, int64_t, op_f64_to_i32)

/* x^2 and x^3 for a scalar exponent (ORT's shortcut), in the base type; U: the type the product is
 * formed in (integers wrap through the unsigned type) */
#define DEF_POWN(NAME, T, U, EXPR)                                \
  static void NAME(size_t n, const void *a, size_t sa, void *y) { \
    const T *A_ = a;                                              \
    T *Y_ = y;                                                    \
    for (size_t i = 0; i < n; i++) {                              \
      const U x = (U)A_[i * sa];                                  \
      Y_[i] = (T)(EXPR);                                          \
    }                                                             \
  }
DEF_POWN(sq_f32, float, float, x *x)
DEF_POWN(cube_f32, float, float, x *x *x)
DEF_POWN(sq_i64, int64_t, uint64_t, x *x)
DEF_POWN(cube_i64, int64_t, uint64_t, x *x *x)
DEF_POWN(sq_i32, int32_t, uint32_t, x *x)
DEF_POWN(cube_i32, int32_t, uint32_t, x *x *x)

/* The integer kernels (float32 runs on f32-vbinary). */
static bin_fn pick_fn(enum bin_kind k, q8rt_dtype t) {
#define PICK(SUF)                    \
  switch (k) {                       \
    case BIN_ADD:                    \
    case BIN_SUM:                    \
    case BIN_MEAN: return SUF##_add; \
    case BIN_SUB: return SUF##_sub;  \
    case BIN_MUL: return SUF##_mul;  \
    case BIN_DIV: return SUF##_div;  \
    case BIN_MAX: return SUF##_max;  \
    case BIN_MIN: return SUF##_min;  \
    default: return NULL;            \
  }
  switch (t) {
    case Q8RT_DTYPE_INT64: PICK(i64)
    case Q8RT_DTYPE_INT32: PICK(i32)
    case Q8RT_DTYPE_INT16: PICK(i16)
    case Q8RT_DTYPE_UINT16: PICK(u16)
    case Q8RT_DTYPE_INT8: PICK(i8)
    case Q8RT_DTYPE_UINT8: PICK(u8)
    default: return NULL;
  }
#undef PICK
}

static bin_fn pick_pow(q8rt_dtype ta, q8rt_dtype tb) {
  switch (ta) {
    case Q8RT_DTYPE_FLOAT32:
      return tb == Q8RT_DTYPE_FLOAT32 ? pow_f32_f32
             : tb == Q8RT_DTYPE_INT64 ? pow_f32_i64
             : tb == Q8RT_DTYPE_INT32 ? pow_f32_i32
                                      : NULL;
    case Q8RT_DTYPE_INT64:
      return tb == Q8RT_DTYPE_FLOAT32 ? pow_i64_f32
             : tb == Q8RT_DTYPE_INT64 ? pow_i64_i64
             : tb == Q8RT_DTYPE_INT32 ? pow_i64_i32
                                      : NULL;
    case Q8RT_DTYPE_INT32:
      return tb == Q8RT_DTYPE_FLOAT32 ? pow_i32_f32
             : tb == Q8RT_DTYPE_INT64 ? pow_i32_i64
             : tb == Q8RT_DTYPE_INT32 ? pow_i32_i32
                                      : NULL;
    default: return NULL;
  }
}

/* ---- front-end ----------------------------------------------------------------------------- */

static q8rt_status bin_prepare_kind(op_prepare_ctx *ctx, void **out, q8rt_error *err, enum bin_kind kind,
                                    int variadic) {
  const ir_node *n = ctx->node;
  if (variadic) {
    if (n->n_inputs < 1 || n->n_outputs != 1) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects at least 1 input and 1 output", n->op_type,
                       n->name);
    }
    if (n->n_inputs > 16) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': %d inputs (q8rt supports up to 16)", n->op_type,
                       n->name, n->n_inputs);
    }
  } else if (n->n_inputs != 2 || n->n_outputs != 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 2 inputs and 1 output (has %d and %d)",
                     n->op_type, n->name, n->n_inputs, n->n_outputs);
  }
  for (int i = 0; i < n->n_inputs; i++) {
    if (n->inputs[i] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d (%s) is missing", n->op_type, n->name, i,
                       variadic ? "data_0..." : g_input_names[i]);
    }
  }
  if (n->outputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': output is missing", n->op_type, n->name);
  }
  if (!variadic && kind != BIN_POW && n->opset < 7) {
    int64_t bc;
    q8rt_status st = ir_attr_int(n, "broadcast", 0, &bc, err);
    if (st != Q8RT_OK) return st;
    if (ir_node_attr(n, "axis") != NULL) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                       "%s node '%s': opset %d attribute 'axis' (legacy broadcasting) is not supported", n->op_type,
                       n->name, n->opset);
    }
  }
  bin_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->kind = kind;
  p->variadic = variadic;
  p->count = n->n_inputs;
  size_t v = OP_FIRST_USABLE(g_f32_vbinary, ctx->isa, ctx->backend);
  const int op = kind == BIN_SUB   ? 1
                 : kind == BIN_MUL ? 2
                 : kind == BIN_DIV ? 3
                 : kind == BIN_MAX ? 4
                 : kind == BIN_MIN ? 5
                                   : 0;
  for (int f = 0; f < 3; f++) p->f32[f] = g_f32_vbinary[v].set.fn[op][f];
  p->divc = g_f32_vbinary[v].set.fn[3][1];
  const ir_value *x0 = ir_node_input(ctx->graph, n, 0);
  const bool is_f32 = x0 == NULL || x0->dtype == Q8RT_DTYPE_FLOAT32 || x0->dtype == Q8RT_DTYPE_UNDEFINED;
  if (kind == BIN_POW) {
    ctx->kernel = "pow__scalar";
    ctx->reason = "float32/integer reference with broadcasting";
  } else if (is_f32) {
    ctx->kernel = g_f32_vbinary[v].name[op][0];
    ctx->reason = "float32 spans on f32-vbinary (c / rc forms where an operand is broadcast)";
  } else {
    ctx->kernel = "binary__scalar";
    ctx->reason = "integer loop with broadcasting";
  }
  *out = p;
  return Q8RT_OK;
}

#define PREP(NAME, KIND, VAR)                                                 \
  static q8rt_status NAME(op_prepare_ctx *ctx, void **out, q8rt_error *err) { \
    return bin_prepare_kind(ctx, out, err, KIND, VAR);                        \
  }
PREP(add_prepare, BIN_ADD, 0)
PREP(sub_prepare, BIN_SUB, 0)
PREP(mul_prepare, BIN_MUL, 0)
PREP(div_prepare, BIN_DIV, 0)
PREP(pow_prepare, BIN_POW, 0)
PREP(max_prepare, BIN_MAX, 1)
PREP(min_prepare, BIN_MIN, 1)
PREP(sum_prepare, BIN_SUM, 1)
PREP(mean_prepare, BIN_MEAN, 1)

/* Fill the merged geometry of out = f(a, b). */
static void bin_geometry(const op_shape *a, const op_shape *b, const op_shape *out, bin_geom *gm) {
  gm->rank = op_broadcast_merge(a, b, out, gm->dims, gm->sa, gm->sb);
  gm->total = op_shape_count(out);
}

static q8rt_status bin_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                             void *geom, q8rt_error *err) {
  const bin_params *p = params;
  const int count = n->n_inputs;
  const q8rt_dtype t0 = in[0].dtype;
  for (int i = 0; i < count; i++) {
    const q8rt_dtype t = in[i].dtype;
    const char *what = p->variadic ? "data" : g_input_names[i];
    if (t == Q8RT_DTYPE_UNDEFINED) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d (%s) has no known type", n->op_type,
                       n->name, i, what);
    }
    if (p->kind == BIN_POW) {
      const bool ok = t == Q8RT_DTYPE_FLOAT32 || t == Q8RT_DTYPE_INT32 || t == Q8RT_DTYPE_INT64;
      if (!ok) {
        return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                         "%s node '%s': input %s is %s (q8rt supports float32, int32, int64)", n->op_type, n->name,
                         what, q8rt_onnx_type_name(t));
      }
      continue;
    }
    const bool float_only = p->kind == BIN_SUM || p->kind == BIN_MEAN;
    if (float_only ? t != Q8RT_DTYPE_FLOAT32 : !op_dtype_is_numeric(t)) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input %d (%s) is %s (q8rt supports %s)", n->op_type,
                       n->name, i, what, q8rt_onnx_type_name(t),
                       float_only ? "float32" : "float32 and 8/16/32/64-bit integers");
    }
    if (t != t0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d (%s) is %s but input 0 is %s", n->op_type,
                       n->name, i, what, q8rt_onnx_type_name(t), q8rt_onnx_type_name(t0));
    }
  }
  const op_shape *shapes[16];
  for (int i = 0; i < count; i++) shapes[i] = &in[i];
  memset(out, 0, sizeof(*out));
  q8rt_status st = op_broadcast_shapes(n, shapes, count, &out[0], err);
  if (st != Q8RT_OK) return st;
  out[0].dtype = t0;
  if (!concrete || out[0].rank < 0) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(out[0].dims, out[0].rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': output is too large", n->op_type, n->name);
  }
  bin_geom *gm = geom;
  if (!p->variadic) {
    bin_geometry(&in[0], &in[1], &out[0], gm);
    gm->pow_scalar_exp = op_shape_count(&in[1]) == 1;
  } else {
    gm->total = (size_t)total; /* variadic ops compute their pairwise geometry at run */
  }
  return Q8RT_OK;
}

/* Walk the merged geometry, calling fn on each innermost span; the output is split over the pool
 * (elements are independent, so any split gives the same bytes). */
typedef struct bin_job {
  const bin_geom *gm;
  bin_fn fn;                              /* integer kernel, or NULL: f32 */
  const q8rt_f32_vbinary_ukernel_fn *f32; /* float32: vector, c, rc */
  const char *a, *b;
  size_t esa, esb;
  char *y;
  size_t esy;
} bin_job;

static void bin_span(void *arg, size_t oa, size_t ob, size_t oy, size_t len) {
  const bin_job *j = arg;
  const int r = j->gm->rank;
  const size_t sa = (size_t)j->gm->sa[r - 1], sb = (size_t)j->gm->sb[r - 1];
  if (j->fn != NULL) {
    j->fn(len, j->a + oa * j->esa, sa, j->b + ob * j->esb, sb, j->y + oy * j->esy);
    return;
  }
  const float *a = (const float *)(const void *)j->a + oa, *b = (const float *)(const void *)j->b + ob;
  float *y = (float *)(void *)j->y + oy;
  if (sa == 1 && sb == 1) {
    j->f32[0](len, a, b, y);
  } else if (sa == 1 && sb == 0) {
    j->f32[1](len, a, b, y);
  } else if (sa == 0 && sb == 1) {
    j->f32[2](len, b, a, y); /* a[0] op b[i] */
  } else {                   /* one element at a time (both broadcast: a span of one) */
    for (size_t i = 0; i < len; i++) j->f32[0](1, a + i * sa, b + i * sb, y + i);
  }
}

static void bin_range(void *arg, size_t begin, size_t end) {
  const bin_job *j = arg;
  op_span_walk(j->gm->rank, j->gm->dims, j->gm->sa, j->gm->sb, begin, end, bin_span, arg);
}

#define BIN_GRAIN 4096 /* elements */

static void bin_walk(const bin_geom *gm, bin_fn fn, const q8rt_f32_vbinary_ukernel_fn *f32, const char *a, size_t esa,
                     const char *b, size_t esb, char *y, size_t esy, const op_exec_ctx *ctx) {
  if (gm->total == 0) return;
  bin_job j = {gm, fn, f32, a, b, esa, esb, y, esy};
  op_parallel_range(ctx, gm->total, BIN_GRAIN, bin_range, &j);
}

typedef void (*unary_fn)(size_t n, const void *a, size_t sa, void *y);

static void pow_scalar_walk(const bin_geom *gm, unary_fn fn, const char *a, size_t esa, char *y, size_t esy) {
  const int r = gm->rank;
  const size_t inner = (size_t)gm->dims[r - 1];
  if (gm->total == 0) return;
  int64_t idx[Q8RT_MAX_RANK] = {0};
  size_t oa = 0, oy = 0;
  do {
    fn(inner, a + oa * esa, (size_t)gm->sa[r - 1], y + oy * esy);
    oy += inner;
  } while (op_index_next(r - 1, gm->dims, gm->sa, idx, &oa));
}

static void bin_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  (void)workspace;
  (void)ctx;
  const bin_params *p = params;
  const bin_geom *gm = geom;
  const q8rt_dtype ta = in[0].shape->dtype, tb = in[1].shape->dtype;
  const size_t esa = q8rt_dtype_size(ta), esb = q8rt_dtype_size(tb);
  if (p->kind == BIN_POW) {
    if (gm->pow_scalar_exp) {
      /* ORT: `if (Y == 2) x*x; else if (Y == 3) x*x*x` with Y in the exponent's type */
      const double e = op_load_f64(in[1].data, tb, 0);
      unary_fn f = NULL;
      if (e == 2.0) f = ta == Q8RT_DTYPE_FLOAT32 ? sq_f32 : ta == Q8RT_DTYPE_INT64 ? sq_i64 : sq_i32;
      if (e == 3.0) f = ta == Q8RT_DTYPE_FLOAT32 ? cube_f32 : ta == Q8RT_DTYPE_INT64 ? cube_i64 : cube_i32;
      if (f != NULL) {
        pow_scalar_walk(gm, f, in[0].data, esa, out[0].data, esa);
        return;
      }
    }
    bin_walk(gm, pick_pow(ta, tb), NULL, in[0].data, esa, in[1].data, esb, out[0].data, esa, ctx);
    return;
  }
  bin_walk(gm, ta == Q8RT_DTYPE_FLOAT32 ? NULL : pick_fn(p->kind, ta), p->f32, in[0].data, esa, in[1].data, esb,
           out[0].data, esa, ctx);
}

/* Variadic: out = in0 (broadcast), then out = f(out, in_i) for each further input. */
static void var_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  (void)workspace;
  (void)ctx;
  const bin_params *p = params;
  const bin_geom *vg = geom;
  const op_shape *os = out[0].shape;
  const q8rt_dtype t = os->dtype;
  const size_t es = q8rt_dtype_size(t);
  const int count = p->count;
  bin_geom gm;
  if (count == 1) {
    memcpy(out[0].data, in[0].data, vg->total * es);
  } else {
    memset(&gm, 0, sizeof(gm));
    bin_geometry(in[0].shape, in[1].shape, os, &gm);
    bin_fn fn = t == Q8RT_DTYPE_FLOAT32 ? NULL : pick_fn(p->kind, t);
    bin_walk(&gm, fn, p->f32, in[0].data, es, in[1].data, es, out[0].data, es, ctx);
    for (int i = 2; i < count; i++) {
      memset(&gm, 0, sizeof(gm));
      bin_geometry(os, in[i].shape, os, &gm);
      bin_walk(&gm, fn, p->f32, out[0].data, es, in[i].data, es, out[0].data, es, ctx);
    }
  }
  if (p->kind == BIN_MEAN) { /* y / count: a vdivc over the output, split like the others */
    bin_geom dg;
    memset(&dg, 0, sizeof(dg));
    dg.rank = 1;
    dg.dims[0] = (int64_t)vg->total;
    dg.sa[0] = 1;
    dg.sb[0] = 0;
    dg.total = vg->total;
    const float c = (float)count;
    const q8rt_f32_vbinary_ukernel_fn divc[3] = {p->divc, p->divc, p->divc};
    bin_walk(&dg, NULL, divc, out[0].data, es, (const char *)(const void *)&c, es, out[0].data, es, ctx);
  }
}

/* The planner hands every non-constant input channels-last with one rank: the broadcast pairs
 * the same elements in either layout. A constant operand must be a single element of no higher
 * rank (one with a shape would need its axes permuted). */
static const void *bin_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool,
                            const char **why) {
  int rank = -1;
  for (int k = 0; k < n->n_inputs; k++) {
    const ir_value *v = ir_node_input(g, n, k);
    if (v != NULL && v->constant == NULL) rank = v->rank;
  }
  for (int k = 0; k < n->n_inputs; k++) {
    const ir_value *v = ir_node_input(g, n, k);
    if (v == NULL || v->constant == NULL) continue;
    if (v->constant->count != 1 || v->constant->rank > rank) {
      *why = "a constant operand with more than one element";
      return NULL;
    }
  }
  bin_params *q = q8rt_pool_alloc(pool, sizeof(*q), 16);
  if (q == NULL) return NULL;
  *q = *(const bin_params *)params;
  return q;
}

const op_def q8rt_op_add = {.op_type = "Add",
                            .domain = "",
                            .min_opset = 1,
                            .prepare = add_prepare,
                            .infer = bin_infer,
                            .run = bin_run,
                            .nhwc_params = bin_nhwc};
const op_def q8rt_op_sub = {.op_type = "Sub",
                            .domain = "",
                            .min_opset = 1,
                            .prepare = sub_prepare,
                            .infer = bin_infer,
                            .run = bin_run,
                            .nhwc_params = bin_nhwc};
const op_def q8rt_op_mul = {.op_type = "Mul",
                            .domain = "",
                            .min_opset = 1,
                            .prepare = mul_prepare,
                            .infer = bin_infer,
                            .run = bin_run,
                            .nhwc_params = bin_nhwc};
const op_def q8rt_op_div = {.op_type = "Div",
                            .domain = "",
                            .min_opset = 1,
                            .prepare = div_prepare,
                            .infer = bin_infer,
                            .run = bin_run,
                            .nhwc_params = bin_nhwc};
const op_def q8rt_op_pow = {
    .op_type = "Pow", .domain = "", .min_opset = 7, .prepare = pow_prepare, .infer = bin_infer, .run = bin_run};
const op_def q8rt_op_max = {
    .op_type = "Max", .domain = "", .min_opset = 8, .prepare = max_prepare, .infer = bin_infer, .run = var_run};
const op_def q8rt_op_min = {
    .op_type = "Min", .domain = "", .min_opset = 8, .prepare = min_prepare, .infer = bin_infer, .run = var_run};
const op_def q8rt_op_sum = {
    .op_type = "Sum", .domain = "", .min_opset = 8, .prepare = sum_prepare, .infer = bin_infer, .run = var_run};
const op_def q8rt_op_mean = {
    .op_type = "Mean", .domain = "", .min_opset = 8, .prepare = mean_prepare, .infer = bin_infer, .run = var_run};
