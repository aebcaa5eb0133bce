/* Size: the element count of its input as an int64 scalar. Reads only the input's shape (like
 * Shape), so its value is known when shapes are bound and feeds shape arithmetic. */
#include "data_common.h"

typedef struct size_geom {
  int64_t count;
} size_geom;

static q8rt_status size_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  q8rt_status st;
  if ((st = data_check_arity(ctx->node, 1, 1, 1, 1, err)) != Q8RT_OK) return st;
  ctx->kernel = "size__scalar";
  ctx->reason = "from the bound shape";
  *out = NULL;
  return Q8RT_OK;
}

static q8rt_status size_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  (void)params;
  q8rt_status st;
  if ((st = data_check_movable(n, &in[0], "data", err)) != Q8RT_OK) return st;
  out->dtype = Q8RT_DTYPE_INT64;
  out->rank = 0;
  if (!concrete || geom == NULL) return Q8RT_OK;
  return data_count(n, &in[0], &((size_geom *)geom)->count, err);
}

static void size_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  (void)params, (void)in, (void)workspace, (void)ctx;
  *(int64_t *)out[0].data = ((const size_geom *)geom)->count;
}

const op_def q8rt_op_size = {.op_type = "Size",
                             .domain = "",
                             .min_opset = 1,
                             .shape_only = 1,
                             .prepare = size_prepare,
                             .infer = size_infer,
                             .run = size_run};
