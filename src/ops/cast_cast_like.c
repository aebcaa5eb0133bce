/* Cast and CastLike between float32, int64, int32, int16, uint16, int8, uint8 and bool.
 *
 * int -> float rounds to nearest even; int -> int keeps the low bits (two's complement wrap);
 * float -> int truncates toward zero as C++ static_cast does on x86-64 (what ONNX Runtime runs):
 * the conversion goes through cvttss2si, so a value outside the destination's 32-bit (int32 and
 * narrower) or 64-bit (int64) range, and NaN, gives the "integer indefinite" INT_MIN, and the
 * narrow types keep the low bits of the 32-bit result. ONNX leaves out-of-range conversions
 * undefined; this makes them deterministic. To bool: nonzero (NaN too) is true, as C++'s
 * conversion; from bool: 0 or 1. float16 <-> float32 (only where a model's float16 inputs and
 * outputs meet the float32 q8rt computes them in: the loader's widen_float16_io; a Cast to float16
 * inside a graph is a cast to float32) widens exactly and rounds to nearest even. Other types
 * (double, string, ...) are refused.
 *
 * 8/16/32-bit integers -> float32 run on the qint-f32-vcvt kernels (DequantizeLinear's rows) with
 * scale 1 and zero point 0: (float)(x - 0) * 1 is the conversion itself, bit for bit. float16 <->
 * float32 runs on f16-f32-vcvt / f32-f16-vcvt (vcvtph2ps / vcvtps2ph, fcvtl / fcvtn: the scalar
 * twins' bytes), the rounding to float16 precision on both through a stack buffer. Every
 * conversion is split over the session's pool in chunks fixed by the size. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "op_util.h"
#include "f16-f32-vcvt/f16-f32-vcvt.h"
#include "f32-f16-vcvt/f32-f16-vcvt.h"

typedef struct cast_params {
  q8rt_dtype to; /* UNDEFINED for CastLike: taken from input 1 */
  int round_f16; /* OP_ATTR_ROUND_F16: the float32 result rounded to float16 precision */
  /* integer -> float32 rows, indexed by enum cast_from (NULL member: none for the type) */
  q8rt_qint_f32_vcvt_ukernel_fn to_f32[5];
  q8rt_f16_f32_vcvt_ukernel_fn f16_f32; /* float16 -> float32 (first usable line of the .inc) */
  q8rt_f32_f16_vcvt_ukernel_fn f32_f16; /* float32 -> float16 */
} cast_params;

enum cast_from { CAST_U8, CAST_I8, CAST_U16, CAST_I16, CAST_I32 };
#define CAST_FROM_qu8 CAST_U8
#define CAST_FROM_qs8 CAST_I8
#define CAST_FROM_qu16 CAST_U16
#define CAST_FROM_qs16 CAST_I16
#define CAST_FROM_qs32 CAST_I32

static const struct {
  uint32_t isa;
  enum cast_from from;
  q8rt_qint_f32_vcvt_ukernel_fn fn;
  const char *name;
} g_int_to_f32[] = {
#define Q8RT_QINT_F32_VCVT_UKERNEL(isa, fn, qt) {isa, CAST_FROM_##qt, {.qt = fn}, #fn},
#include "qint-f32-vcvt/qint-f32-vcvt.inc"
#undef Q8RT_QINT_F32_VCVT_UKERNEL
};

static const struct {
  uint32_t isa;
  q8rt_f16_f32_vcvt_ukernel_fn fn;
  const char *name;
} g_f16_f32[] = {
#define Q8RT_F16_F32_VCVT_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f16-f32-vcvt/f16-f32-vcvt.inc"
#undef Q8RT_F16_F32_VCVT_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_f16_f32_vcvt_ukernel__scalar, "q8rt_f16_f32_vcvt_ukernel__scalar"},
};

static const struct {
  uint32_t isa;
  q8rt_f32_f16_vcvt_ukernel_fn fn;
  const char *name;
} g_f32_f16[] = {
#define Q8RT_F32_F16_VCVT_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-f16-vcvt/f32-f16-vcvt.inc"
#undef Q8RT_F32_F16_VCVT_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_f32_f16_vcvt_ukernel__scalar, "q8rt_f32_f16_vcvt_ukernel__scalar"},
};

static int cast_from_index(q8rt_dtype t) {
  switch (t) {
    case Q8RT_DTYPE_UINT8: return CAST_U8;
    case Q8RT_DTYPE_INT8: return CAST_I8;
    case Q8RT_DTYPE_UINT16: return CAST_U16;
    case Q8RT_DTYPE_INT16: return CAST_I16;
    case Q8RT_DTYPE_INT32: return CAST_I32;
    default: return -1;
  }
}

typedef struct cast_geom {
  size_t total;
} cast_geom;

static bool cast_type_ok(int32_t t) {
  return t == Q8RT_DTYPE_BOOL || t == Q8RT_DTYPE_FLOAT16 || op_dtype_is_numeric((q8rt_dtype)t);
}

static const char *const g_supported =
    "float32, int64, int32, int16, uint16, int8, uint8, bool (float16: to and from float32)";

static q8rt_status cast_prepare_common(op_prepare_ctx *ctx, void **out, q8rt_error *err, int like) {
  const ir_node *n = ctx->node;
  if (n->n_inputs != (like ? 2 : 1) || n->n_outputs != 1 || n->inputs[0] < 0 || (like && n->inputs[1] < 0)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects %s and 1 output", n->op_type, n->name,
                     like ? "2 inputs (input, target_type)" : "1 input");
  }
  cast_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if (!like) {
    const ir_attr *a = ir_node_attr(n, "to");
    if (a == NULL) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'to' is missing", n->op_type, n->name);
    }
    int64_t to;
    q8rt_status st = ir_attr_int(n, "to", 0, &to, err);
    if (st != Q8RT_OK) return st;
    if (to < 0 || to > 0x7fffffff || !cast_type_ok((int32_t)to)) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': attribute 'to' is %s (q8rt casts to %s)", n->op_type,
                       n->name, q8rt_onnx_type_name((int32_t)to), g_supported);
    }
    p->to = (q8rt_dtype)to;
    int64_t round = 0;
    if ((st = ir_attr_int(n, OP_ATTR_ROUND_F16, 0, &round, err)) != Q8RT_OK) return st;
    p->round_f16 = round != 0 && p->to == Q8RT_DTYPE_FLOAT32;
  }
  const char *names[5] = {NULL, NULL, NULL, NULL, NULL};
  for (size_t i = 0; i < sizeof(g_int_to_f32) / sizeof(g_int_to_f32[0]); i++) {
    const int k = g_int_to_f32[i].from;
    if (names[k] == NULL && op_isa_usable(g_int_to_f32[i].isa, ctx->isa, ctx->backend)) {
      p->to_f32[k] = g_int_to_f32[i].fn;
      names[k] = g_int_to_f32[i].name;
    }
  }
  const size_t i16 = OP_FIRST_USABLE(g_f16_f32, ctx->isa, ctx->backend);
  const size_t i32 = OP_FIRST_USABLE(g_f32_f16, ctx->isa, ctx->backend);
  p->f16_f32 = g_f16_f32[i16].fn;
  p->f32_f16 = g_f32_f16[i32].fn;
  ctx->kernel = "cast__scalar";
  ctx->reason = "dtype conversion";
  const ir_value *x = ir_node_input(ctx->graph, n, 0);
  const int from = x != NULL ? cast_from_index(x->dtype) : -1;
  if (!like && p->to == Q8RT_DTYPE_FLOAT32 && x != NULL && x->dtype == Q8RT_DTYPE_BOOL)
    ctx->reason = "bool -> float32: 0 or 1 per byte, a vectorized loop";
  if (!like && p->to == Q8RT_DTYPE_FLOAT32 && from >= 0) {
    ctx->kernel = names[from] + 5; /* drop the "q8rt_" prefix */
    ctx->reason = "integer -> float32 rows on qint-f32-vcvt (scale 1, zero point 0)";
  }
  if (x != NULL && x->dtype == Q8RT_DTYPE_FLOAT16) {
    ctx->kernel = g_f16_f32[i16].name + 5;
    ctx->reason = "float16 -> float32 on f16-f32-vcvt (exact)";
  } else if (!like && p->to == Q8RT_DTYPE_FLOAT16) {
    ctx->kernel = g_f32_f16[i32].name + 5;
    ctx->reason = "float32 -> float16 on f32-f16-vcvt (nearest even)";
  }
  if (p->round_f16) {
    ctx->kernel = g_f32_f16[i32].name + 5;
    ctx->reason =
        "a Cast to float16: float32 rounded to float16 precision (nearest even) on f32-f16-vcvt + f16-f32-vcvt";
  }
  *out = p;
  return Q8RT_OK;
}

static q8rt_status cast_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return cast_prepare_common(ctx, out, err, 0);
}
static q8rt_status castlike_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return cast_prepare_common(ctx, out, err, 1);
}

static q8rt_status cast_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  const cast_params *p = params;
  const q8rt_dtype from = in[0].dtype;
  if (!cast_type_ok(from)) {
    return q8rt_fail(err, from == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input is %s (q8rt casts from %s)", n->op_type, n->name, q8rt_onnx_type_name(from),
                     g_supported);
  }
  q8rt_dtype to = p->to;
  if (to == Q8RT_DTYPE_UNDEFINED) {
    to = in[1].dtype;
    if (!cast_type_ok(to)) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': target_type is %s (q8rt casts to %s)", n->op_type,
                       n->name, q8rt_onnx_type_name(to), g_supported);
    }
  }
  if ((from == Q8RT_DTYPE_FLOAT16 || to == Q8RT_DTYPE_FLOAT16) && from != to &&
      (from != Q8RT_DTYPE_FLOAT32 && to != Q8RT_DTYPE_FLOAT32)) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': %s -> %s (q8rt converts float16 to and from float32 only)", n->op_type, n->name,
                     q8rt_onnx_type_name(from), q8rt_onnx_type_name(to));
  }
  out[0] = in[0];
  out[0].dtype = to;
  if (!concrete) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(in[0].dims, in[0].rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input is too large", n->op_type, n->name);
  }
  ((cast_geom *)geom)->total = (size_t)total;
  return Q8RT_OK;
}

typedef struct cast_job {
  q8rt_dtype from, to;
  int round_f16;
  q8rt_qint_f32_vcvt_ukernel_fn fn; /* integer -> float32 kernel, or NULL */
  q8rt_f16_f32_vcvt_ukernel_fn f16_f32;
  q8rt_f32_f16_vcvt_ukernel_fn f32_f16;
  const void *x;
  void *y;
} cast_job;

static void cast_convert(const cast_job *j, size_t begin, size_t end);

/* Elements [begin, end). */
static void cast_range(void *arg, size_t begin, size_t end) {
  const cast_job *j = arg;
  cast_convert(j, begin, end);
  if (j->round_f16) { /* float32 output, rounded to float16 precision (exact both ways but the rounding) */
    float *y = (float *)j->y + begin;
    uint16_t h[1024];
    for (size_t i = begin; i < end;) {
      const size_t k = end - i < 1024 ? end - i : 1024;
      j->f32_f16(k, y, h);
      j->f16_f32(k, h, y);
      i += k, y += k;
    }
  }
}

static void cast_convert(const cast_job *j, size_t begin, size_t end) {
  const q8rt_dtype from = j->from, to = j->to;
  const size_t n = end - begin, ex = q8rt_dtype_size(from), ey = q8rt_dtype_size(to);
  const void *x = (const char *)j->x + begin * ex;
  void *y = (char *)j->y + begin * ey;
  if (j->fn.qu8 != NULL) {
    const q8rt_qint_f32_vcvt_params one = {1.0f, 0};
    switch (from) {
      case Q8RT_DTYPE_UINT8: j->fn.qu8(n, x, y, &one); break;
      case Q8RT_DTYPE_INT8: j->fn.qs8(n, x, y, &one); break;
      case Q8RT_DTYPE_UINT16: j->fn.qu16(n, x, y, &one); break;
      case Q8RT_DTYPE_INT16: j->fn.qs16(n, x, y, &one); break;
      default: j->fn.qs32(n, x, y, &one); break;
    }
    return;
  }
  if (from == Q8RT_DTYPE_BOOL && to == Q8RT_DTYPE_FLOAT32) { /* one-hot encodings: a loop the compiler vectorizes */
    const uint8_t *xb = x;
    float *yf = y;
    for (size_t i = 0; i < n; i++) yf[i] = xb[i] != 0 ? 1.0f : 0.0f;
    return;
  }
  if (from == Q8RT_DTYPE_FLOAT16) { /* to float32 (cast_infer) */
    j->f16_f32(n, x, y);
    return;
  }
  /* one loop per destination type (the switch outside the loops) */
  if (from == Q8RT_DTYPE_FLOAT32) {
    const float *xf = x;
#define CAST_F32_LOOP(T, EXPR)     \
  for (size_t i = 0; i < n; i++) { \
    const float v = xf[i];         \
    ((T *)y)[i] = EXPR;            \
  }                                \
  break
    switch (to) {
      case Q8RT_DTYPE_FLOAT32: CAST_F32_LOOP(float, v); /* rounded to float16 precision by cast_range */
      case Q8RT_DTYPE_INT64: CAST_F32_LOOP(int64_t, op_f64_to_i64(v));
      case Q8RT_DTYPE_INT32: CAST_F32_LOOP(int32_t, op_f64_to_i32(v));
      case Q8RT_DTYPE_INT16: CAST_F32_LOOP(int16_t, (int16_t)(uint16_t)(uint32_t)op_f64_to_i32(v));
      case Q8RT_DTYPE_UINT16: CAST_F32_LOOP(uint16_t, (uint16_t)(uint32_t)op_f64_to_i32(v));
      case Q8RT_DTYPE_INT8: CAST_F32_LOOP(int8_t, (int8_t)(uint8_t)(uint32_t)op_f64_to_i32(v));
      case Q8RT_DTYPE_UINT8: CAST_F32_LOOP(uint8_t, (uint8_t)(uint32_t)op_f64_to_i32(v));
      case Q8RT_DTYPE_BOOL: CAST_F32_LOOP(uint8_t, v != 0.0f || isnan(v));
      case Q8RT_DTYPE_FLOAT16: j->f32_f16(n, xf, y); break;
      default: break;
    }
#undef CAST_F32_LOOP
    return;
  }
#define CAST_INT_LOOP(T, EXPR)                 \
  for (size_t i = 0; i < n; i++) {             \
    const int64_t v = op_load_i64(x, from, i); \
    ((T *)y)[i] = EXPR;                        \
  }                                            \
  break
  switch (to) {
    case Q8RT_DTYPE_FLOAT32: CAST_INT_LOOP(float, (float)v);
    case Q8RT_DTYPE_INT64: CAST_INT_LOOP(int64_t, v);
    case Q8RT_DTYPE_INT32: CAST_INT_LOOP(int32_t, (int32_t)(uint32_t)(uint64_t)v);
    case Q8RT_DTYPE_INT16: CAST_INT_LOOP(int16_t, (int16_t)(uint16_t)(uint64_t)v);
    case Q8RT_DTYPE_UINT16: CAST_INT_LOOP(uint16_t, (uint16_t)(uint64_t)v);
    case Q8RT_DTYPE_INT8: CAST_INT_LOOP(int8_t, (int8_t)(uint8_t)(uint64_t)v);
    case Q8RT_DTYPE_UINT8: CAST_INT_LOOP(uint8_t, (uint8_t)(uint64_t)v);
    case Q8RT_DTYPE_BOOL: CAST_INT_LOOP(uint8_t, v != 0);
    default: break;
  }
#undef CAST_INT_LOOP
}

static void cast_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  (void)workspace;
  const cast_params *p = params;
  const size_t nel = ((const cast_geom *)geom)->total;
  const q8rt_dtype from = in[0].shape->dtype, to = out[0].shape->dtype;
  if (from == to && from != Q8RT_DTYPE_BOOL && !p->round_f16) {
    if (nel > 0 && out[0].data != in[0].data) memcpy(out[0].data, in[0].data, nel * q8rt_dtype_size(from));
    return;
  }
  cast_job j = {from, to, p->round_f16, {.qu8 = NULL}, p->f16_f32, p->f32_f16, in[0].data, out[0].data};
  const int k = cast_from_index(from);
  if (to == Q8RT_DTYPE_FLOAT32 && k >= 0) j.fn = p->to_f32[k];
  op_parallel_range(ctx, nel, 4096, cast_range, &j);
}

const op_def q8rt_op_cast = {
    .op_type = "Cast", .domain = "", .min_opset = 6, .prepare = cast_prepare, .infer = cast_infer, .run = cast_run};
const op_def q8rt_op_cast_like = {.op_type = "CastLike",
                                  .domain = "",
                                  .min_opset = 15,
                                  .prepare = castlike_prepare,
                                  .infer = cast_infer,
                                  .run = cast_run};
