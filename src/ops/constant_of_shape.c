/* ConstantOfShape: a tensor of the shape given by its int64 input (a constant, or a value known
 * when shapes are bound: Shape -> ... -> ConstantOfShape), filled with the one element of the
 * `value` attribute (float32 0 when absent; its type is the output's). */
#include <string.h>

#include "data_common.h"

typedef struct cos_params {
  q8rt_dtype dtype;
  unsigned char value[8];
} cos_params;

typedef struct cos_geom {
  size_t count;
} cos_geom;

static q8rt_status cos_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 1, 1, 1, 1, err)) != Q8RT_OK) return st;
  cos_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->dtype = Q8RT_DTYPE_FLOAT32;
  const ir_attr *a = ir_node_attr(n, "value");
  if (a != NULL) {
    if (a->type != IR_ATTR_TENSOR || a->t == NULL) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "ConstantOfShape node '%s': attribute 'value' is not a tensor",
                       n->name);
    }
    if (a->t->count != 1) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "ConstantOfShape node '%s': attribute 'value' has %lld elements, expected 1", n->name,
                       (long long)a->t->count);
    }
    p->dtype = a->t->dtype;
    memcpy(p->value, a->t->data, q8rt_dtype_size(p->dtype));
  }
  ctx->kernel = "constant_of_shape__scalar";
  ctx->reason = q8rt_dtype_name(p->dtype);
  *out = p;
  return Q8RT_OK;
}

static q8rt_status cos_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                             void *geom, q8rt_error *err) {
  const cos_params *p = params;
  int64_t dims[Q8RT_MAX_RANK];
  size_t count;
  int known;
  q8rt_status st = data_shape_values(n, &in[0], 0, "input", concrete, dims, Q8RT_MAX_RANK, &count, &known, err);
  if (st != Q8RT_OK) return st;
  out->dtype = p->dtype;
  out->rank = in[0].rank == 1 && in[0].dims[0] >= 0 ? (int)in[0].dims[0] : -1;
  for (int d = 0; d < out->rank; d++) out->dims[d] = -1;
  if (!known) return Q8RT_OK;
  for (size_t d = 0; d < count; d++) {
    if (dims[d] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "ConstantOfShape node '%s': dimension %zu is negative (%lld)", n->name, d,
                       (long long)dims[d]);
    }
    out->dims[d] = dims[d];
  }
  int64_t total;
  if (!q8rt_shape_elements(out->dims, out->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "ConstantOfShape node '%s': the output would have more than %lld elements",
                     n->name, (long long)Q8RT_MAX_ELEMENTS);
  }
  if (concrete && geom != NULL) ((cos_geom *)geom)->count = (size_t)total;
  return Q8RT_OK;
}

static void cos_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  (void)in, (void)workspace, (void)ctx;
  const cos_params *p = params;
  const size_t count = ((const cos_geom *)geom)->count;
  const size_t es = q8rt_dtype_size(p->dtype);
  unsigned char *y = out[0].data;
  switch (es) {
    case 1: memset(y, p->value[0], count); break;
    case 2: {
      uint16_t v;
      memcpy(&v, p->value, 2);
      for (size_t i = 0; i < count; i++) ((uint16_t *)(void *)y)[i] = v;
      break;
    }
    case 4: {
      uint32_t v;
      memcpy(&v, p->value, 4);
      for (size_t i = 0; i < count; i++) ((uint32_t *)(void *)y)[i] = v;
      break;
    }
    default: {
      uint64_t v;
      memcpy(&v, p->value, 8);
      for (size_t i = 0; i < count; i++) ((uint64_t *)(void *)y)[i] = v;
      break;
    }
  }
}

const op_def q8rt_op_constant_of_shape = {.op_type = "ConstantOfShape",
                                          .domain = "",
                                          .min_opset = 9,
                                          .prepare = cos_prepare,
                                          .infer = cos_infer,
                                          .run = cos_run};
