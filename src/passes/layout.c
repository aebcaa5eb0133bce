/* Layout analysis: where a float tensor may stay channels-last.
 *
 * Channels-last spreads greedily from the convolutions: a node runs NHWC when its input is and
 * it can. For an 8-bit tensor a wrong guess costs one cheap layout change; for a float one (a
 * DequantizeLinear -> float ops -> QuantizeLinear stretch between quantized ops) it costs a
 * transpose of 4-byte elements, or a second one beside the 8-bit one it meant to save. So a node
 * in such a stretch goes channels-last only when everything downstream of it, up to the
 * QuantizeLinear nodes that end the stretch, can too. */
#include <stdio.h>
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

/* Whether 8-bit value v is read only by ops that take it channels-last as it is (QLinearConv, an
 * elementwise op the table pass will likely turn into a lookup, which runs in any layout, or an
 * op with a channels-last form and no constant operand of more than one element, which would
 * keep the NCHW broadcast). A ConvTranspose's output grows by its stride: moving it channels-last
 * only pays when the layout change does not just move after it, onto the larger tensor. */
static int read_channels_last(const ir_graph *g, int v, const int *start, const int *readers) {
  for (int e = start[v]; e < start[v + 1]; e++) {
    const ir_node *m = &g->nodes[readers[e]];
    if (strcmp(m->op_type, "QLinearConv") == 0 && m->domain[0] == '\0') continue;
    if (pass_table_may_take(g, m, v)) continue;
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

/* ---- the layout decisions the planner asks for as it walks the nodes -------------------------- */

int pass_layout_edge_nchw(const ir_graph *g, const ir_node *n, const int *pos, const pass_layout *ls) {
  if (n->n_inputs < 1 || n->n_outputs < 1) return 0;
  const int x = n->inputs[0], y = n->outputs[0];
  if (x < 0 || y < 0 || g->values[x].constant != NULL || ls->nhwc[x] >= 0) return 0;
  if (g->values[y].graph_output < 0) return 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (pos[i] < 0) continue;
    const ir_node *m = &g->nodes[i];
    for (int k = 0; k < m->n_inputs; k++) {
      if (m->inputs[k] == y) return 0;
    }
  }
  return 1;
}

/* Whether every reader of value v takes it channels-last as it is: a QLinearConv, an op with a
 * channels-last form, or an elementwise op the table pass will likely turn into a lookup (any
 * layout); not a graph output (NCHW). A scan over the nodes: for the few multi-output nodes. */
static int all_read_channels_last(const ir_graph *g, int v) {
  if (g->values[v].graph_output >= 0) return 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const ir_node *m = &g->nodes[i];
    int reads = 0;
    for (int k = 0; k < m->n_inputs; k++) reads |= m->inputs[k] == v;
    if (!reads) continue;
    if (strcmp(m->op_type, "QLinearConv") == 0 && m->domain[0] == '\0') continue;
    if (pass_table_may_take(g, m, v)) continue;
    const op_def *op = op_find(m);
    if (op == NULL || op->nhwc_params == NULL) return 0;
  }
  return 1;
}

int pass_layout_try_nhwc(const ir_graph *g, const ir_node *n, const pass_layout *ls, int float_ok, const char **why) {
  *why = NULL;
  int first = -1, same_rank = 1, in_nhwc = 0, only_nchw = 0;
  for (int k = 0; k < n->n_inputs; k++) {
    const int v = n->inputs[k];
    if (v < 0 || g->values[v].constant != NULL) continue;
    if (first < 0) {
      first = v;
    } else if (g->values[v].rank != g->values[first].rank) {
      same_rank = 0;
    }
    in_nhwc += ls->nhwc[v] >= 0;
    only_nchw += ls->nhwc[v] < 0;
  }
  if (first < 0) return 0;
  /* channels-last when at least as many inputs are NHWC as are NCHW only */
  if (in_nhwc == 0) {
    *why = "its inputs are NCHW";
    return 0;
  }
  if (in_nhwc < only_nchw) {
    *why = "most of its inputs are NCHW";
    return 0;
  }
  /* float data (made by DequantizeLinear, or read by anything but QuantizeLinear) stays
   * channels-last only through a stretch that can all run so (pass_float_nhwc_ok) */
  const int is_q = strcmp(n->op_type, "QuantizeLinear") == 0 && n->domain[0] == '\0';
  const int is_dq = strcmp(n->op_type, "DequantizeLinear") == 0 && n->domain[0] == '\0';
  const int wide = q8rt_dtype_size(g->values[first].dtype) > 1;
  if ((is_dq || (wide && !is_q)) && !float_ok) {
    *why = "its float output reaches an op that runs NCHW";
    return 0;
  }
  const int r = g->values[first].rank;
  if (!same_rank || (r != 3 && r != 4)) {
    *why = "its inputs differ in rank";
    return 0;
  }
  /* a node writing all its outputs channels-last (Split) pays only when each goes on that way:
   * else the layout change moves from its input to its outputs (or into a gather) */
  const op_def *op = op_find(n);
  if (op != NULL && op->nhwc_all_outputs) {
    for (int k = 0; k < n->n_outputs; k++) {
      if (n->outputs[k] >= 0 && !all_read_channels_last(g, n->outputs[k])) {
        *why = "an output is read by an op that runs NCHW";
        return 0;
      }
    }
  }
  return 1;
}

int pass_layout_input(const ir_graph *g, const pass_layout *ls, int v, int k, int in_layout, int nhwc_all) {
  const ir_value *val = &g->values[v];
  int want = k == 0 ? in_layout : OP_LAYOUT_NCHW;
  if (nhwc_all && val->constant == NULL) want = OP_LAYOUT_NHWC;
  if (val->constant != NULL || want == OP_LAYOUT_ANY) want = ls->nchw[v] >= 0 ? OP_LAYOUT_NCHW : OP_LAYOUT_NHWC;
  return want;
}

void pass_layout_logical_dims(const int64_t *phys, int rank, int64_t *logical) {
  logical[0] = phys[0];
  logical[1] = phys[rank - 1];
  for (int d = 2; d < rank; d++) logical[d] = phys[d - 1];
}

int pass_layout_change_copies(const ir_value *from, int to_nhwc, char *dims, size_t dims_size) {
  int keeps = -1;
  if (dims_size > 0) dims[0] = '\0';
  if (from->rank >= 3 && from->rank <= Q8RT_MAX_RANK) {
    int64_t ld[Q8RT_MAX_RANK];
    unsigned char cl[Q8RT_MAX_RANK];
    for (int i = 0; i < from->rank; i++) ld[i] = from->dims[i];
    if (!to_nhwc) pass_layout_logical_dims(from->dims, from->rank, ld);
    op_perm_channels_last(from->rank, cl);
    keeps = op_perm_keeps_bytes(ld, from->rank, cl);
    for (int i = 0, len = 0; i < from->rank && len < 120 && (size_t)len < dims_size; i++)
      len += snprintf(dims + len, dims_size - (size_t)len, "%s%lld", i ? "x" : "", (long long)ld[i]);
  }
  return keeps;
}

void pass_layout_change_reason(char *buf, size_t size, const ir_node *consumer, const char *consumer_why, int to_nhwc,
                               int copies, const char *dims) {
  if (consumer == NULL) {
    snprintf(buf, size, "%s", to_nhwc ? "NCHW -> NHWC" : "NHWC -> NCHW: graph outputs are NCHW");
  } else if (to_nhwc) {
    snprintf(buf, size, "NCHW -> NHWC for %s '%.200s'", consumer->op_type, consumer->name);
  } else {
    snprintf(buf, size, "NHWC -> NCHW: %s '%.200s' runs in NCHW (%s)", consumer->op_type, consumer->name,
             consumer_why != NULL ? consumer_why : "it has no channels-last form in q8rt");
  }
  if (copies == 1) {
    const size_t len = strlen(buf);
    snprintf(buf + len, size - len, "; only axes of size 1 move (%s): the same bytes, a copy", dims);
  } else if (copies == -1 && dims[0] != '\0') {
    const size_t len = strlen(buf);
    snprintf(buf + len, size - len, "; a copy if the bound shapes (%s) move only axes of size 1", dims);
  }
}

int pass_layout_physical_axis(int axis, int rank, int nhwc) {
  if (!nhwc || axis < 1 || rank < 3) return axis;
  return axis == 1 ? rank - 1 : axis - 1;
}

/* ---- views: nodes that move bytes as they are, on a channels-last input ---------------------- */

int pass_layout_view_kind(const ir_node *n, const op_def *op) {
  if (n->domain[0] != '\0') return PASS_VIEW_NONE;
  if (op->shape_only) return PASS_VIEW_SHAPE;
  if (strcmp(n->op_type, "Transpose") == 0) return PASS_VIEW_TRANSPOSE;
  static const char *const moves[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  for (size_t i = 0; i < sizeof(moves) / sizeof(moves[0]); i++) {
    if (strcmp(n->op_type, moves[i]) == 0) return PASS_VIEW_MOVE;
  }
  return PASS_VIEW_NONE;
}

int pass_layout_view_candidate(const ir_graph *g, const ir_node *n, const op_def *op, const pass_layout *ls,
                               pass_view *v) {
  memset(v, 0, sizeof(*v));
  v->kind = pass_layout_view_kind(n, op);
  if (v->kind == PASS_VIEW_NONE || n->n_inputs < 1 || n->n_inputs > 4 || n->n_outputs != 1 || n->outputs[0] < 0) {
    return 0;
  }
  const int x = n->inputs[0];
  if (x < 0 || g->values[x].constant != NULL) return 0;
  v->rank = g->values[x].rank;
  if (v->rank < 3 || v->rank > Q8RT_MAX_RANK) return 0;
  /* in the logical order, only a Transpose whose output order is channels-last can gain */
  v->in_cl = ls->nchw[x] < 0 && ls->nhwc[x] >= 0;
  return v->in_cl || v->kind == PASS_VIEW_TRANSPOSE;
}

/* Transpose's perm (default: the axes reversed) as physical order q of its output, given the
 * input's order p: q = perm^-1 o p. Returns 0 when the attribute is not a permutation of rank. */
static int transpose_order(const ir_node *n, int rank, const unsigned char *p, unsigned char *q, unsigned char *t) {
  const ir_attr *a = ir_node_attr(n, "perm");
  int64_t perm[Q8RT_MAX_RANK];
  int inv[Q8RT_MAX_RANK];
  if (rank < 1 || rank > Q8RT_MAX_RANK) return 0;
  if (a != NULL && (a->ints == NULL || a->count != (size_t)rank)) return 0;
  for (int i = 0; i < rank; i++) {
    perm[i] = a != NULL ? a->ints[i] : rank - 1 - i;
    inv[i] = -1;
  }
  for (int i = 0; i < rank; i++) {
    if (perm[i] < 0 || perm[i] >= rank || inv[perm[i]] >= 0) return 0;
    inv[perm[i]] = i;
  }
  for (int i = 0; i < rank; i++) {
    q[i] = (unsigned char)inv[p[i]];
    t[i] = (unsigned char)perm[i];
  }
  return 1;
}

static int same_order(const unsigned char *a, const unsigned char *b, int rank) {
  return memcmp(a, b, (size_t)rank) == 0;
}

/* Whether value v goes (directly or through a QuantizeLinear) into a QLinearConv: a consumer that
 * reads channels-last. A Transpose from the logical order gains by writing channels-last only then;
 * for any other reader the layout change would just come later. */
static int feeds_conv(const ir_graph *g, const int *pos, const unsigned char *done, int v, int depth) {
  for (int i = 0; i < g->n_nodes; i++) {
    if (pos[i] < 0 || done[i]) continue;
    const ir_node *m = &g->nodes[i];
    int reads = 0;
    for (int k = 0; k < m->n_inputs; k++) reads |= m->inputs[k] == v;
    if (!reads) continue;
    if (strcmp(m->op_type, "QLinearConv") == 0) return 1;
    if (depth == 0 && m->n_outputs == 1 && m->outputs[0] >= 0 && strcmp(m->op_type, "QuantizeLinear") == 0 &&
        m->domain[0] == '\0' && feeds_conv(g, pos, done, m->outputs[0], 1))
      return 1;
  }
  return 0;
}

int pass_layout_view_decide(const ir_graph *g, const ir_node *n, const int *pos, const unsigned char *done,
                            const op_shape *lin, const op_shape *lout, pass_view *v) {
  const int rin = v->rank, in_cl = v->in_cl;
  unsigned char pin[Q8RT_MAX_RANK], q[Q8RT_MAX_RANK], cl[Q8RT_MAX_RANK], id[Q8RT_MAX_RANK];
  op_perm_channels_last(in_cl ? rin : 0, pin);
  for (int i = in_cl ? rin : 0; i < rin; i++) pin[i] = (unsigned char)i;
  v->out_cl = 0;
  v->as_view = 1;
  v->how = "";
  if (v->kind == PASS_VIEW_SHAPE) {
    v->how = "reads the logical shape of its channels-last input";
  } else if (v->kind == PASS_VIEW_TRANSPOSE) {
    op_perm_channels_last(rin, cl);
    for (int i = 0; i < rin; i++) id[i] = (unsigned char)i;
    if (!transpose_order(n, rin, pin, q, v->tperm) || lout->rank != rin) return 0;
    /* the output's bytes in order q are the input's: a view when q is canonical, or is once the
     * axes of size 1 (known at load) are left out */
    const int as_id = same_order(q, id, rin) || op_perm_reshape_view(lout->dims, rin, q, lout->dims, rin, id) == 1;
    const int as_cl = same_order(q, cl, rin) || op_perm_reshape_view(lout->dims, rin, q, lout->dims, rin, cl) == 1;
    if (!in_cl && as_cl && !as_id && feeds_conv(g, pos, done, n->outputs[0], 0)) {
      v->out_cl = 1;
      v->how = "its output in channels-last order is its input's bytes: a copy, no transpose";
    } else if (!in_cl) {
      return 0;
    } else if (as_id) {
      v->how = "its perm makes the channels-last input's order the logical one: a copy, no transpose";
    } else if (as_cl) {
      v->out_cl = 1;
      v->how = "channels-last in and out: a copy, no transpose";
    } else {
      v->as_view = 0;
      v->how = "one strided copy from its channels-last input, no layout change before it";
    }
  } else {
    const int rout = lout->rank;
    if (rout < 1 || rout > Q8RT_MAX_RANK) return 0;
    op_perm_channels_last(rout, cl);
    for (int i = 0; i < rout; i++) id[i] = (unsigned char)i;
    const int as_cl = rout >= 3 ? op_perm_reshape_view(lin[0].dims, rin, pin, lout->dims, rout, cl) : 0;
    if (as_cl == 1) {
      v->out_cl = 1;
      v->how = "channels-last in and out, the same bytes: a copy, no transpose";
    } else if (as_cl == -1) {
      v->out_cl = 1;
      v->how = "channels-last in and out: a copy when the bound shapes keep the bytes (checked at bind), else a gather";
    } else if (op_perm_reshape_view(lin[0].dims, rin, pin, lout->dims, rout, id) == 1) {
      v->how = "its channels-last input's bytes are its output's in logical order: a copy, no transpose";
    } else if (op_perm_keeps_bytes(lin[0].dims, rin, pin) == 1) {
      v->how =
          "its channels-last input moves only axes of size 1 from the logical order: the same bytes, a copy, no "
          "transpose";
    } else {
      return 0;
    }
  }
  return 1;
}
