/* Running one node at load with the op code that runs it at run time: constant folding and the
 * table pass use it, so what they compute is what the run would have computed. */
#include <string.h>

#include "passes.h"

q8rt_status pass_eval_prepare(const ir_graph *g, const ir_node *n, q8rt_pool *pool, q8rt_backend backend, uint32_t isa,
                              pass_eval *e, q8rt_error *err) {
  memset(e, 0, sizeof(*e));
  e->op = op_find(n);
  if (e->op == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "node '%s': op %s (opset %d) is not supported by q8rt", n->name,
                     n->op_type, n->opset);
  }
  if (n->n_inputs > Q8RT_MAX_IO || n->n_outputs > Q8RT_MAX_IO) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "node '%s' (%s): too many inputs or outputs", n->name, n->op_type);
  }
  e->desc = op_node_view(n);
  op_prepare_ctx ctx = {g, n, &e->desc, pool, backend, isa, "", "", OP_LAYOUT_NCHW, OP_LAYOUT_NCHW,
                        0, 0, NULL,     NULL, 0};
  return e->op->prepare(&ctx, &e->params, err);
}

q8rt_status pass_eval_infer(pass_eval *e, const ir_node *n, const op_shape *in, q8rt_pool *pool, q8rt_error *err) {
  memset(e->out, 0, sizeof(e->out));
  memset(e->geom, 0, sizeof(e->geom));
  const op_node d = op_node_view(n);
  q8rt_status st = e->op->infer(e->params, &d, in, e->out, 1, e->geom, err);
  if (st != Q8RT_OK) return st;
  const size_t ws = e->op->workspace != NULL ? e->op->workspace(e->params, e->geom, 1) : 0;
  e->workspace = NULL;
  if (ws > 0 && (e->workspace = q8rt_pool_alloc(pool, ws, 64)) == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory evaluating node '%s' at load", n->name);
  }
  return Q8RT_OK;
}

void pass_eval_run(const pass_eval *e, const op_tensor *in, op_tensor *out, const q8rt_allocator *allocator) {
  op_exec_ctx ectx = {.threads = 1, .allocator = allocator};
  e->op->run(e->params, e->geom, in, out, e->workspace, &ectx);
}
