/* Helpers shared by the com.microsoft QLinear* front-ends (qlinear_*.c): constant scale / zero
 * point reading with the element type checked, 8-bit loads and stores. The float -> int32
 * conversions (q8rt_cvt_rne, q8rt_round_clamp) are in kernels/q8rt-math.h. */
#ifndef Q8RT_QLINEAR_COMMON_H
#define Q8RT_QLINEAR_COMMON_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "op.h"
#include "op_util.h"
#include "f32-rminmax/f32-rminmax.h"
#include "q8rt-math.h"

static inline int32_t qk_clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static inline int32_t qk_load8(const void *p, q8rt_dtype t, size_t i) {
  return t == Q8RT_DTYPE_UINT8 ? (int32_t)((const uint8_t *)p)[i] : (int32_t)((const int8_t *)p)[i];
}

static inline void qk_store8(void *p, q8rt_dtype t, size_t i, int32_t v) {
  if (t == Q8RT_DTYPE_UINT8) {
    ((uint8_t *)p)[i] = (uint8_t)v;
  } else {
    ((int8_t *)p)[i] = (int8_t)v;
  }
}

/* A scalar 8-bit zero point; omitted -> 0 with the type `*dtype` unchanged. When `want` is not
 * UNDEFINED the zero point must be of that type. */
static inline q8rt_status qk_zero_point(const ir_graph *g, const ir_node *n, int input, const char *what,
                                        q8rt_dtype want, int32_t *out, q8rt_dtype *dtype, q8rt_error *err) {
  q8rt_dtype t = want;
  q8rt_status st = op_const_zero_point(g, n, input, what, out, &t, err);
  if (st != Q8RT_OK) return st;
  if (want != Q8RT_DTYPE_UNDEFINED && t != want) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': %s is %s, expected %s", n->op_type, n->name, what,
                     q8rt_onnx_type_name(t), q8rt_onnx_type_name(want));
  }
  if (dtype != NULL) *dtype = t;
  return Q8RT_OK;
}

/* The element type of input `input` as the graph declares it (UNDEFINED if not known at load). */
static inline q8rt_dtype qk_input_type(const ir_graph *g, const ir_node *n, int input) {
  const ir_value *v = ir_node_input(g, n, input);
  return v == NULL ? Q8RT_DTYPE_UNDEFINED : v->dtype;
}

/* Input `what` (X, A, B) at bind: of its zero point's type `want`, or not known yet. */
static inline q8rt_status qk_check_input_type(const op_node *n, const char *what, q8rt_dtype t, q8rt_dtype want,
                                              q8rt_error *err) {
  if (t != Q8RT_DTYPE_UNDEFINED && t != want) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input %s is %s, expected %s (its zero point's type)",
                     n->op_type, n->name, what, q8rt_onnx_type_name(t), q8rt_onnx_type_name(want));
  }
  return Q8RT_OK;
}

/* The inputs of the unary quantized ops (X, x_scale, x_zero_point, y_scale[, y_zero_point]; one
 * output): checks the arity and X's type (8-bit, or not known yet) and returns that type. */
static inline q8rt_status qk_unary_io(const ir_graph *g, const ir_node *n, q8rt_dtype *t, q8rt_error *err) {
  if (n->n_inputs < 4 || n->n_inputs > 5 || n->n_outputs != 1 || ir_node_input(g, n, 0) == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': expects inputs X, x_scale, x_zero_point, y_scale[, y_zero_point] and 1 output",
                     n->op_type, n->name);
  }
  *t = qk_input_type(g, n, 0);
  if (*t != Q8RT_DTYPE_UNDEFINED && !q8rt_dtype_is_8bit(*t)) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input X is %s (uint8 or int8 expected)", n->op_type,
                     n->name, q8rt_onnx_type_name(*t));
  }
  return Q8RT_OK;
}

/* uint8 scale and zero point of a float block as ONNX Runtime's GetQuantizationParameter computes
 * them (DynamicQuantizeLinear, the dynamically quantized GEMMs of DynamicQuantizeLSTM):
 *   lo = min(min(x), 0), hi = max(max(x), 0), scale = hi == lo ? 1 : (hi - lo) / 255,
 *   zp = round_half_even(clamp(0 - lo / scale, 0, 255)). NaNs are ignored by the min/max.
 * From the block's minimum and maximum (f32-rminmax; FLT_MAX / -FLT_MAX for an empty or all-NaN
 * block, which gives lo = hi = 0: scale 1, zero point 0). */
static inline void qk_u8_params_from_range(float lo, float hi, float *scale, int32_t *zp) {
  if (lo > 0.0f) lo = 0.0f;
  if (hi < 0.0f) hi = 0.0f;
  *scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  float izp = 0.0f - lo / *scale;
  if (izp > 255.0f) izp = 255.0f;
  if (!(izp >= 0.0f)) izp = 0.0f;
  *zp = q8rt_round_clamp(izp, 0.0f, 255.0f);
}

static inline void qk_dynamic_u8_params(const float *x, size_t n, float *scale, int32_t *zp) {
  float lo = FLT_MAX, hi = -FLT_MAX;
  q8rt_f32_rminmax_ukernel__scalar(n, x, &lo, &hi);
  qk_u8_params_from_range(lo, hi, scale, zp);
}

#endif
