/* The passes between the loader and the planner, in their order (passes.h, pass_run). */
#include <string.h>

#include "passes.h"

q8rt_status pass_run(ir_graph *g, q8rt_pool *pool, q8rt_backend backend, uint32_t isa, pass_results *out,
                     q8rt_error *err) {
  memset(out, 0, sizeof(*out));
  q8rt_status st;
  if ((st = pass_fold_qdq_weights(g, err)) != Q8RT_OK) return st;
  if ((st = pass_fuse_qdq(g, err)) != Q8RT_OK) return st;
  pass_remove_dead_nodes(g);

  out->order = q8rt_pool_array(pool, (size_t)g->n_nodes + 1, sizeof(int));
  if (out->order == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  if ((st = pass_topo_order(g, out->order, &out->count, err)) != Q8RT_OK) return st;
  out->pos = q8rt_pool_array(pool, (size_t)g->n_nodes + 1, sizeof(int));
  out->done = q8rt_pool_alloc(pool, (size_t)g->n_nodes + 1, 16);
  out->float_ok = q8rt_pool_alloc(pool, (size_t)g->n_nodes + 1, 16);
  if (out->pos == NULL || out->done == NULL || out->float_ok == NULL)
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  for (int i = 0; i < g->n_nodes; i++) out->pos[i] = -1;
  for (int i = 0; i < out->count; i++) out->pos[out->order[i]] = i;

  const int *order = out->order, count = out->count;
  /* Constant folding first, so that fusions and islands see every constant; folded nodes make no step. */
  if ((st = pass_fold_constants(g, order, count, pool, backend, isa, out->done, err)) != Q8RT_OK) return st;
  /* the reference backend runs the graph as written: the fused and unfused routes check each other */
  if (backend != Q8RT_BACKEND_REFERENCE) {
    if ((st = pass_fuse_integer_outputs(g, order, count, out->done, err)) != Q8RT_OK) return st;
    if ((st = pass_fuse_float_conv_outputs(g, order, count, out->done, err)) != Q8RT_OK) return st;
    if ((st = pass_fuse_quantize_space_to_depth(g, order, count, out->done, err)) != Q8RT_OK) return st;
  }
  return pass_float_nhwc_ok(g, order, count, out->done, out->float_ok, err);
}
