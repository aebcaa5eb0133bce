#include <math.h>
#include <string.h>

#include "op.h"

/* Each list holds Q8RT_OP(symbol) lines, one per op_def defined in src/ops/; lists are split by
 * family so that adding an op touches one list. */
#define Q8RT_OP(sym) extern const op_def sym;
#include "oplist-quantized.inc"
#include "oplist-float.inc"
#include "oplist-data.inc"
#include "oplist-com-microsoft.inc"
#include "oplist-ai-onnx-ml.inc"
#undef Q8RT_OP

static const op_def *const g_ops[] = {
#define Q8RT_OP(sym) &sym,
#include "oplist-quantized.inc"
#include "oplist-float.inc"
#include "oplist-data.inc"
#include "oplist-com-microsoft.inc"
#include "oplist-ai-onnx-ml.inc"
#undef Q8RT_OP
};

const op_def *op_find(const ir_node *node) {
  for (size_t i = 0; i < sizeof(g_ops) / sizeof(g_ops[0]); i++) {
    const op_def *op = g_ops[i];
    if (strcmp(op->op_type, node->op_type) == 0 && strcmp(op->domain, node->domain) == 0 &&
        node->opset >= op->min_opset) {
      return op;
    }
  }
  return NULL;
}

const op_def *op_registry_at(size_t i) { return i < sizeof(g_ops) / sizeof(g_ops[0]) ? g_ops[i] : NULL; }

q8rt_status op_require_constant(const ir_graph *g, const ir_node *n, int input, const char *what, const ir_tensor **out,
                                q8rt_error *err) {
  const ir_value *v = ir_node_input(g, n, input);
  if (v == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d (%s) is missing", n->op_type, n->name,
                     input, what);
  }
  if (v->constant == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input %d (%s, '%s') must be an initializer or constant", n->op_type, n->name, input,
                     what, v->name);
  }
  *out = v->constant;
  return Q8RT_OK;
}

q8rt_status op_check_scales(const ir_node *n, const char *what, const ir_tensor *t, q8rt_error *err) {
  if (t->dtype != Q8RT_DTYPE_FLOAT32) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': %s must be float32, not %s", n->op_type, n->name, what,
                     q8rt_onnx_type_name(t->dtype));
  }
  /* Positive finite scales only (subnormal ones included). ORT runs the others: a zero weight scale
   * as a constant channel (its zero point), a negative one as the channel's negation (both the same
   * in its optimized and unoptimized runs), NaN as the saturated low end, infinity differently in
   * the two runs. q8rt's requantization takes positive multipliers, and onnxruntime.quantization
   * writes no other scale (a range giving one below FLT_MIN gets 1.0): refused, saying why. */
  const float *s = t->data;
  for (int64_t i = 0; i < t->count; i++) {
    if (!(s[i] > 0.0f) || !isfinite(s[i])) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "%s node '%s': %s[%lld] is %g (q8rt takes positive finite scales only; "
                       "onnxruntime.quantization writes no other)",
                       n->op_type, n->name, what, (long long)i, (double)s[i]);
    }
  }
  if (t->count == 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': %s is empty", n->op_type, n->name, what);
  }
  return Q8RT_OK;
}
