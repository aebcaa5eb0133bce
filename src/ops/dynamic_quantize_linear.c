/* DynamicQuantizeLinear (ai.onnx 11): float32 x -> uint8 y, float32 y_scale, uint8 y_zero_point,
 * as ONNX Runtime computes them (GetQuantizationParameter + MlasQuantizeLinear):
 *   lo = min(min(x), 0), hi = max(max(x), 0)
 *   scale = hi == lo ? 1 : (hi − lo) / 255                            (float32)
 *   zp = round_half_even(clamp(0 − lo / scale, 0, 255))
 *   y = cvt(clamp(x / scale, −zp, 255 − zp)) + zp                     (NaN -> the lower bound)
 * The min/max ignore NaNs (an all-NaN or empty input gives lo = hi = 0, scale 1, zp 0).
 * Large inputs go over the pool in fixed chunks (their count depends on the size only): each
 * chunk's min/max (f32-rminmax), combined in chunk order (minima and maxima do not depend on the
 * order; the sign of a zero result, which may, does not reach the parameters), then each chunk
 * quantized: the bytes do not depend on the thread count. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "f32-rminmax/f32-rminmax.h"
#include "q8rt-kernels.h"
#include "q8rt-isa.h"
#include "qlinear_common.h"

typedef struct dql_params {
  q8rt_f32_qint_vcvt_ukernel_fn q; /* .qu8: QuantizeLinear's uint8 kernel */
  q8rt_f32_rminmax_ukernel_fn minmax;
} dql_params;

#define DQL_CHUNK ((size_t)32768) /* floats per task */

typedef struct dql_geom {
  size_t total, chunks;
} dql_geom;

static q8rt_status dql_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  if (n->n_inputs != 1 || n->n_outputs != 3) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 1 input and 3 outputs", n->op_type, n->name);
  }
  dql_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  const char *name = NULL;
  p->q = op_quantize_kernel(Q8RT_DTYPE_UINT8, ctx->isa, ctx->backend, &name);
  if (name == NULL) return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': no uint8 kernel", n->op_type, n->name);
  ctx->kernel = name + 5; /* drop the "q8rt_" prefix */
  p->minmax = q8rt_f32_rminmax_ukernel__scalar;
#define Q8RT_F32_RMINMAX_UKERNEL(visa, fn) \
  if (p->minmax == q8rt_f32_rminmax_ukernel__scalar && op_isa_usable(visa, ctx->isa, ctx->backend)) p->minmax = fn;
#include "f32-rminmax/f32-rminmax.inc"
#undef Q8RT_F32_RMINMAX_UKERNEL
  ctx->reason = "ONNX Runtime's min/max parameters, MLAS quantization (QuantizeLinear's kernel)";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status dql_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                             void *geom, q8rt_error *err) {
  (void)params;
  if (in[0].dtype != Q8RT_DTYPE_UNDEFINED && in[0].dtype != Q8RT_DTYPE_FLOAT32) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input x is %s (float32 expected)", n->op_type, n->name,
                     q8rt_onnx_type_name(in[0].dtype));
  }
  out[0] = in[0];
  out[0].dtype = Q8RT_DTYPE_UINT8;
  memset(&out[1], 0, sizeof(out[1]));
  out[1].dtype = Q8RT_DTYPE_FLOAT32;
  out[1].rank = 0;
  memset(&out[2], 0, sizeof(out[2]));
  out[2].dtype = Q8RT_DTYPE_UINT8;
  out[2].rank = 0;
  if (concrete) {
    dql_geom *gm = geom;
    gm->total = op_shape_count(&in[0]);
    gm->chunks = (gm->total + DQL_CHUNK - 1) / DQL_CHUNK;
  }
  return Q8RT_OK;
}

static size_t dql_workspace(const void *params, const void *geom, size_t threads) {
  (void)params;
  (void)threads;
  return ((const dql_geom *)geom)->chunks * 2 * sizeof(float);
}

typedef struct dql_ctx {
  const dql_params *p;
  const float *x;
  uint8_t *y;
  size_t total;
  float *range; /* [chunks][2] */
  q8rt_f32_qint_vcvt_params kp;
} dql_ctx;

static void dql_range_task(void *context, size_t chunk) {
  dql_ctx *c = context;
  const size_t i0 = chunk * DQL_CHUNK, n = c->total - i0 < DQL_CHUNK ? c->total - i0 : DQL_CHUNK;
  float lo = FLT_MAX, hi = -FLT_MAX;
  c->p->minmax(n, c->x + i0, &lo, &hi);
  c->range[2 * chunk] = lo;
  c->range[2 * chunk + 1] = hi;
}

static void dql_quantize_task(void *context, size_t chunk) {
  dql_ctx *c = context;
  const size_t i0 = chunk * DQL_CHUNK, n = c->total - i0 < DQL_CHUNK ? c->total - i0 : DQL_CHUNK;
  c->p->q.qu8(n, c->x + i0, c->y + i0, &c->kp);
}

static void dql_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  const dql_geom *gm = geom;
  dql_ctx c;
  c.p = params;
  c.x = in[0].data;
  c.y = out[0].data;
  c.total = gm->total;
  c.range = workspace;
  float lo = FLT_MAX, hi = -FLT_MAX;
  if (gm->chunks > 1) {
    q8rt_parallel_for(ctx->pool, gm->chunks, dql_range_task, &c);
    for (size_t k = 0; k < gm->chunks; k++) {
      lo = c.range[2 * k] < lo ? c.range[2 * k] : lo;
      hi = c.range[2 * k + 1] > hi ? c.range[2 * k + 1] : hi;
    }
  } else {
    c.p->minmax(gm->total, c.x, &lo, &hi);
  }
  float scale;
  int32_t zp;
  qk_u8_params_from_range(lo, hi, &scale, &zp);
  const q8rt_f32_qint_vcvt_params kp = {scale, zp, (float)(0 - zp), (float)(255 - zp)};
  c.kp = kp;
  if (gm->chunks > 1) {
    q8rt_parallel_for(ctx->pool, gm->chunks, dql_quantize_task, &c);
  } else {
    c.p->q.qu8(gm->total, c.x, c.y, &kp);
  }
  if (out[1].data != NULL) *(float *)out[1].data = scale;
  if (out[2].data != NULL) *(uint8_t *)out[2].data = (uint8_t)zp;
}

const op_def q8rt_op_dynamic_quantize_linear = {
    .op_type = "DynamicQuantizeLinear",
    .domain = "",
    .min_opset = 11,
    .prepare = dql_prepare,
    .infer = dql_infer,
    .workspace = dql_workspace,
    .run = dql_run,
};
