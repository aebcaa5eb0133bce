/* Transpose (any element type): perm attribute (default: reverse the axes). */
#include <string.h>

#include "data_common.h"

typedef struct transpose_params {
  int64_t *perm;
  size_t count;
  int present;
} transpose_params;

typedef struct transpose_geom {
  int rank;
  size_t elem;
  int64_t dims[Q8RT_MAX_RANK];    /* output dims */
  int64_t strides[Q8RT_MAX_RANK]; /* input element strides along each output axis */
} transpose_geom;

static q8rt_status transpose_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  if ((st = data_check_arity(n, 1, 1, 1, 1, err)) != Q8RT_OK) return st;
  transpose_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if ((st = data_attr_ints(ctx, "perm", &p->perm, &p->count, &p->present, err)) != Q8RT_OK) return st;
  if (p->present) {
    if (p->count > Q8RT_MAX_RANK) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                       "Transpose node '%s': attribute 'perm' has %zu entries (q8rt's rank limit is %d)", n->name,
                       p->count, Q8RT_MAX_RANK);
    }
    int seen[Q8RT_MAX_RANK] = {0};
    for (size_t i = 0; i < p->count; i++) {
      if (p->perm[i] < 0 || p->perm[i] >= (int64_t)p->count || seen[p->perm[i]]) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                         "Transpose node '%s': attribute 'perm' is not a permutation of 0..%zu", n->name, p->count - 1);
      }
      seen[p->perm[i]] = 1;
    }
  }
  ctx->kernel = "transpose__scalar";
  ctx->reason = "strided copy";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status transpose_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out,
                                   int concrete, void *geom, q8rt_error *err) {
  const transpose_params *p = params;
  const op_shape *x = &in[0];
  q8rt_status st;
  if ((st = data_check_movable(n, x, "data", err)) != Q8RT_OK) return st;
  out->dtype = x->dtype;
  out->rank = x->rank;
  if (x->rank < 0) return Q8RT_OK;
  if (p->present && (int)p->count != x->rank) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "Transpose node '%s': attribute 'perm' has %zu entries, the input has rank %d", n->name, p->count,
                     x->rank);
  }
  int64_t perm[Q8RT_MAX_RANK];
  for (int i = 0; i < x->rank; i++) perm[i] = p->present ? p->perm[i] : x->rank - 1 - i;
  for (int i = 0; i < x->rank; i++) out->dims[i] = x->dims[perm[i]];
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t count;
  if ((st = data_count(n, x, &count, err)) != Q8RT_OK) return st;
  transpose_geom *gm = geom;
  int64_t in_strides[Q8RT_MAX_RANK], s = 1;
  for (int i = x->rank - 1; i >= 0; i--) {
    in_strides[i] = s;
    s *= x->dims[i];
  }
  gm->rank = x->rank;
  gm->elem = q8rt_dtype_size(x->dtype);
  for (int i = 0; i < x->rank; i++) {
    gm->dims[i] = out->dims[i];
    gm->strides[i] = in_strides[perm[i]];
  }
  return Q8RT_OK;
}

static void transpose_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                          const op_exec_ctx *ctx) {
  (void)params, (void)workspace, (void)ctx;
  const transpose_geom *gm = geom;
  data_strided_copy(in[0].data, out[0].data, gm->elem, gm->rank, gm->dims, gm->strides, 0);
}

const op_def q8rt_op_transpose = {.op_type = "Transpose",
                                  .domain = "",
                                  .min_opset = 1,
                                  .prepare = transpose_prepare,
                                  .infer = transpose_infer,
                                  .run = transpose_run};
