/* If: the loader inlines both branches into the graph under guards (src/graph/ir.h), so this step
 * only selects. Its inputs are cond, then_branch's outputs, else_branch's outputs; it copies the
 * taken branch's outputs to its own. The branches' steps run only when their guard holds (the
 * session decides at bind where the condition is known by then, else at run). */
#include <string.h>

#include "data_common.h"

typedef struct if_geom {
  int n;                          /* outputs */
  size_t nbytes[Q8RT_MAX_IO / 2]; /* per output, at the bound shapes */
} if_geom;

static q8rt_status if_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  if (n->if_guard <= 0 || n->n_outputs < 1 || n->n_outputs > Q8RT_MAX_IO / 2 || n->n_inputs != 1 + 2 * n->n_outputs) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "If node '%s' has no branches as q8rt reads them", n->name);
  }
  ctx->kernel = "copy__scalar";
  ctx->reason = "selects the taken branch's outputs (the untaken branch's steps do not run)";
  *out = NULL;
  return Q8RT_OK;
}

static const char *branch_name(int side) { return side ? "then_branch" : "else_branch"; }

static q8rt_status if_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                            void *geom, q8rt_error *err) {
  (void)params;
  const int nout = n->n_outputs;
  const op_shape *c = &in[0];
  if (c->dtype != Q8RT_DTYPE_UNDEFINED && c->dtype != Q8RT_DTYPE_BOOL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "If node '%s': cond is %s, not bool", n->name,
                     q8rt_onnx_type_name((int32_t)c->dtype));
  }
  int64_t count;
  if (c->rank >= 0 && q8rt_shape_elements(c->dims, c->rank, &count) && count != 1) {
    int known = 1;
    for (int d = 0; d < c->rank; d++) known &= c->dims[d] >= 0;
    if (known) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "If node '%s': cond has %lld elements, not one", n->name,
                       (long long)count);
    }
  }
  /* the branch known before the run: a constant or bind-time condition */
  const int side = c->value != NULL ? *(const uint8_t *)c->value != 0 : -1;
  for (int k = 0; k < nout; k++) {
    const op_shape *t = &in[1 + k], *e = &in[1 + nout + k];
    if (side >= 0) {
      out[k] = side ? *t : *e;
    } else if (concrete && (t->rank < 0 || e->rank < 0)) {
      /* at bind, rank -1 marks a branch the session will not run (its guard cannot hold, or it
       * could not bind and reports that at run if taken) */
      if (t->rank < 0 && e->rank < 0) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "If node '%s': neither branch gives output %d a shape", n->name, k);
      }
      out[k] = t->rank >= 0 ? *t : *e;
      out[k].value = NULL;
    } else {
      if (t->dtype != Q8RT_DTYPE_UNDEFINED && e->dtype != Q8RT_DTYPE_UNDEFINED && t->dtype != e->dtype) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                         "If node '%s': output %d is %s in then_branch, %s in else_branch", n->name, k,
                         q8rt_onnx_type_name((int32_t)t->dtype), q8rt_onnx_type_name((int32_t)e->dtype));
      }
      int same = t->rank == e->rank && t->rank >= 0;
      for (int d = 0; same && d < t->rank; d++) same = t->dims[d] == e->dims[d];
      if (concrete && !same) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                         "If node '%s': output %d has different shapes in then_branch and else_branch while the "
                         "condition is known only at run time (q8rt needs one shape)",
                         n->name, k);
      }
      memset(&out[k], 0, sizeof(out[k]));
      out[k].dtype = t->dtype != Q8RT_DTYPE_UNDEFINED ? t->dtype : e->dtype;
      out[k].rank = -1;
      if (t->rank == e->rank) {
        out[k].rank = t->rank;
        for (int d = 0; d < t->rank; d++) out[k].dims[d] = t->dims[d] == e->dims[d] ? t->dims[d] : -1;
      }
    }
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  if_geom *gm = geom;
  gm->n = nout;
  for (int k = 0; k < nout; k++) {
    q8rt_status st;
    if ((st = data_check_movable(n, &out[k], branch_name(side != 0), err)) != Q8RT_OK) return st;
    if ((st = data_count(n, &out[k], &count, err)) != Q8RT_OK) return st;
    gm->nbytes[k] = (size_t)count * q8rt_dtype_size(out[k].dtype);
  }
  return Q8RT_OK;
}

static void if_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                   const op_exec_ctx *ctx) {
  (void)params, (void)workspace, (void)ctx;
  const if_geom *gm = geom;
  const int side = *(const uint8_t *)in[0].data != 0;
  for (int k = 0; k < gm->n; k++) {
    const void *src = in[1 + (side ? 0 : gm->n) + k].data;
    if (gm->nbytes[k] > 0 && src != NULL && src != out[k].data) memcpy(out[k].data, src, gm->nbytes[k]);
  }
}

const op_def q8rt_op_if = {
    .op_type = "If", .domain = "", .min_opset = 1, .prepare = if_prepare, .infer = if_infer, .run = if_run};
