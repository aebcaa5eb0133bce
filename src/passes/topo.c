/* Kahn's algorithm over value producers. Nodes are visited in model order where the
 * dependencies allow, so plans read like the model. */
#include "passes.h"

q8rt_status pass_topo_order(const ir_graph *g, int *order, int *count, q8rt_error *err) {
  const q8rt_allocator *a = g->allocator;
  int *pending = q8rt_calloc(a, (size_t)g->n_nodes + 1, sizeof(int));
  char *ready = q8rt_calloc(a, (size_t)g->n_values + 1, 1);
  q8rt_status st = Q8RT_OK;
  if (pending == NULL || ready == NULL) {
    st = q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory ordering the graph");
    goto done;
  }
  for (int v = 0; v < g->n_values; v++) {
    const ir_value *val = &g->values[v];
    ready[v] = val->constant != NULL || val->graph_input >= 0;
  }
  for (int i = 0; i < g->n_outputs; i++) {
    const ir_value *v = &g->values[g->outputs[i]];
    if (v->producer < 0 && v->constant == NULL && v->graph_input < 0) {
      st = q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "graph output '%s' is not produced by any node", v->name);
      goto done;
    }
  }
  /* Repeated sweeps: O(nodes^2) in the worst case, linear for graphs already in order (the
   * common case: exporters write nodes topologically). */
  int done_count = 0;
  char *placed = (char *)pending; /* reuse: nonzero once placed */
  for (;;) {
    int progress = 0;
    for (int ni = 0; ni < g->n_nodes; ni++) {
      const ir_node *n = &g->nodes[ni];
      if (placed[ni] || n->removed) continue;
      int ok = 1;
      for (int k = 0; k < n->n_inputs && ok; k++) {
        if (n->inputs[k] >= 0 && !ready[n->inputs[k]]) ok = 0;
      }
      /* a branch's node runs only once the conditions of its If (and the enclosing Ifs) are known */
      for (int id = n->guard; id > 0 && ok; id = ir_graph_guard(g, id)->parent) {
        if (!ready[ir_graph_guard(g, id)->cond]) ok = 0;
      }
      if (!ok) continue;
      placed[ni] = 1;
      order[done_count++] = ni;
      progress = 1;
      for (int k = 0; k < n->n_outputs; k++) {
        if (n->outputs[k] >= 0) ready[n->outputs[k]] = 1;
      }
    }
    if (!progress) break;
  }
  for (int ni = 0; ni < g->n_nodes; ni++) {
    const ir_node *n = &g->nodes[ni];
    if (placed[ni] || n->removed) continue;
    for (int k = 0; k < n->n_inputs; k++) {
      const int v = n->inputs[k];
      if (v >= 0 && !ready[v] && g->values[v].producer < 0) {
        st = q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "node '%s' (%s): input '%s' is not produced by any node, graph input or initializer", n->name,
                       n->op_type, g->values[v].name);
        goto done;
      }
    }
    st = q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "the graph has a cycle through node '%s' (%s)", n->name, n->op_type);
    goto done;
  }
  *count = done_count;
done:
  q8rt_free(a, pending, ((size_t)g->n_nodes + 1) * sizeof(int));
  q8rt_free(a, ready, (size_t)g->n_values + 1);
  return st;
}
