/* DynamicQuantizeLinear (ai.onnx 11): float32 x -> uint8 y, float32 y_scale, uint8 y_zero_point,
 * as ONNX Runtime computes them (GetQuantizationParameter + MlasQuantizeLinear):
 *   lo = min(min(x), 0), hi = max(max(x), 0)
 *   scale = hi == lo ? 1 : (hi − lo) / 255                            (float32)
 *   zp = round_half_even(clamp(0 − lo / scale, 0, 255))
 *   y = cvt(clamp(x / scale, −zp, 255 − zp)) + zp                     (NaN -> the lower bound)
 * The min/max ignore NaNs (an all-NaN or empty input gives lo = hi = 0, scale 1, zp 0). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "q8rt-kernels.h"
#include "q8rt-isa.h"
#include "qlinear_common.h"

typedef struct dql_params {
  q8rt_f32_qint_vcvt_ukernel_fn q; /* .qu8: QuantizeLinear's uint8 kernel */
} dql_params;

typedef struct dql_geom {
  size_t total;
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
  ctx->reason = "ONNX Runtime's min/max parameters, MLAS quantization (QuantizeLinear's kernel)";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status dql_infer(const void *params, const ir_node *n, const op_shape *in, op_shape *out, int concrete,
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
  if (concrete) ((dql_geom *)geom)->total = op_shape_count(&in[0]);
  return Q8RT_OK;
}

static void dql_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  const dql_params *p = params;
  (void)workspace;
  (void)ctx;
  const size_t total = ((const dql_geom *)geom)->total;
  const float *x = in[0].data;
  float scale;
  int32_t zp;
  qk_dynamic_u8_params(x, total, &scale, &zp);
  uint8_t *y = out[0].data;
  const q8rt_f32_qint_vcvt_params kp = {scale, zp, (float)(0 - zp), (float)(255 - zp)};
  p->q.qu8(total, x, y, &kp);
  if (out[1].data != NULL) *(float *)out[1].data = scale;
  if (out[2].data != NULL) *(uint8_t *)out[2].data = (uint8_t)zp;
}

const op_def q8rt_op_dynamic_quantize_linear = {
    .op_type = "DynamicQuantizeLinear",
    .domain = "",
    .min_opset = 11,
    .prepare = dql_prepare,
    .infer = dql_infer,
    .run = dql_run,
};
