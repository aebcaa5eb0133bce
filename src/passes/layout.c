/* Layout analysis: where a float tensor may stay channels-last.
 *
 * Channels-last spreads greedily from the convolutions: a node runs NHWC when its input is and
 * it can. For an 8-bit tensor a wrong guess costs one cheap layout change; for a float one (a
 * DequantizeLinear -> float ops -> QuantizeLinear stretch between quantized ops) it costs a
 * transpose of 4-byte elements, or a second one beside the 8-bit one it meant to save. So a node
 * in such a stretch goes channels-last only when everything downstream of it, up to the
 * QuantizeLinear nodes that end the stretch, can too. */
#include <string.h>

#include "passes.h"

/* A QuantizeLinear whose scale is one constant: runs channels-last, and ends the float stretch. */
static int ends_stretch(const ir_graph *g, const ir_node *n) {
  if (strcmp(n->op_type, "QuantizeLinear") != 0 || n->domain[0] != '\0') return 0;
  const ir_value *s = ir_node_input(g, n, 1);
  return s != NULL && s->constant != NULL && s->constant->count == 1;
}

/* Nodes the planner runs as views of a channels-last input (plan.c, view_step): 2 when the
 * output leaves the channels-last stretch (shape reads; a Transpose whose perm is the
 * channels-last order itself, giving the logical order), 1 when it may stay channels-last
 * (reshapes that keep the batch and channel axes), 0 otherwise. */
static int view_through(const ir_node *n, const op_def *op) {
  if (n->domain[0] != '\0') return 0;
  if (op->shape_only) return 2;
  if (strcmp(n->op_type, "Transpose") == 0) {
    const ir_attr *a = ir_node_attr(n, "perm");
    if (a == NULL || a->ints == NULL || a->count < 3) return 0;
    const size_t r = a->count;
    for (size_t i = 0; i < r; i++) {
      const int64_t want = i == 0 ? 0 : i == r - 1 ? 1 : (int64_t)i + 1;
      if (a->ints[i] != want) return 0;
    }
    return 2;
  }
  static const char *const moves[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  for (size_t i = 0; i < sizeof(moves) / sizeof(moves[0]); i++) {
    if (strcmp(n->op_type, moves[i]) == 0) return 1;
  }
  return 0;
}

/* Whether 8-bit value v is read only by ops that take it channels-last as it is (QLinearConv, or an
 * op with a channels-last form and no constant operand of more than one element, which would
 * keep the NCHW broadcast). A ConvTranspose's output grows by its stride: moving it channels-last
 * only pays when the layout change does not just move after it, onto the larger tensor. */
static int read_channels_last(const ir_graph *g, int v, const int *start, const int *readers) {
  for (int e = start[v]; e < start[v + 1]; e++) {
    const ir_node *m = &g->nodes[readers[e]];
    if (strcmp(m->op_type, "QLinearConv") == 0 && m->domain[0] == '\0') continue;
    const op_def *op = op_find(m);
    if (op == NULL || op->nhwc_params == NULL) return 0;
    for (int k = 0; k < m->n_inputs; k++) {
      const ir_value *c = ir_node_input(g, m, k);
      if (c != NULL && c->constant != NULL && c->constant->count != 1) return 0;
    }
  }
  return 1;
}

q8rt_status pass_float_nhwc_ok(const ir_graph *g, const int *order, int count, const unsigned char *skip,
                               unsigned char *ok, q8rt_error *err) {
  /* readers of each value (CSR over the live nodes); scratch, freed before returning */
  const size_t nv = (size_t)g->n_values;
  size_t edges = 0;
  for (int i = 0; i < count; i++) edges += (size_t)g->nodes[order[i]].n_inputs;
  int *start = q8rt_calloc(g->allocator, nv + 1, sizeof(int));
  int *fill = q8rt_calloc(g->allocator, nv + 1, sizeof(int));
  int *readers = q8rt_calloc(g->allocator, edges + 1, sizeof(int));
  if (start == NULL || readers == NULL || fill == NULL) {
    q8rt_free(g->allocator, start, (nv + 1) * sizeof(int));
    q8rt_free(g->allocator, fill, (nv + 1) * sizeof(int));
    q8rt_free(g->allocator, readers, (edges + 1) * sizeof(int));
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning layouts");
  }
  for (int i = 0; i < count; i++) {
    const ir_node *n = &g->nodes[order[i]];
    if (skip[order[i]]) continue;
    for (int k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] >= 0) start[n->inputs[k] + 1]++;
    }
  }
  for (size_t v = 0; v < nv; v++) start[v + 1] += start[v];
  for (int i = 0; i < count; i++) {
    const ir_node *n = &g->nodes[order[i]];
    if (skip[order[i]]) continue;
    for (int k = 0; k < n->n_inputs; k++) {
      const int v = n->inputs[k];
      if (v >= 0) readers[start[v] + fill[v]++] = order[i];
    }
  }
  for (int i = count - 1; i >= 0; i--) {
    const int ni = order[i];
    const ir_node *n = &g->nodes[ni];
    const op_def *op = op_find(n);
    const int view = op != NULL ? view_through(n, op) : 0;
    if (view == 2 && !skip[ni]) {
      ok[ni] = 1;
      continue;
    }
    int can = op != NULL && (op->nhwc_params != NULL || view == 1) && !skip[ni];
    const int is_deconv = strcmp(n->op_type, "ConvTranspose") == 0 && n->domain[0] == '\0';
    for (int k = 0; k < n->n_outputs && can; k++) {
      const int v = n->outputs[k];
      if (v < 0) continue;
      if (g->values[v].graph_output >= 0) can = 0; /* graph outputs are NCHW */
      for (int e = start[v]; e < start[v + 1] && can; e++) {
        const int r = readers[e];
        /* a reader later in the order was decided already; a node reading its own output
         * (impossible in a checked graph) would read ok[r] as 0 */
        can = ends_stretch(g, &g->nodes[r]) || ok[r];
        if (can && is_deconv && ends_stretch(g, &g->nodes[r]) && g->nodes[r].n_outputs >= 1 &&
            g->nodes[r].outputs[0] >= 0)
          can = read_channels_last(g, g->nodes[r].outputs[0], start, readers);
      }
    }
    ok[ni] = (unsigned char)can;
  }
  q8rt_free(g->allocator, start, (nv + 1) * sizeof(int));
  q8rt_free(g->allocator, fill, (nv + 1) * sizeof(int));
  q8rt_free(g->allocator, readers, (edges + 1) * sizeof(int));
  return Q8RT_OK;
}
