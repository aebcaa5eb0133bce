/* Tables: an island of elementwise nodes on one 8-bit tensor computes a function of 256 values
 * (per channel when a per-channel parameter enters). See passes.h.
 *
 * How the table is computed: the island's nodes are prepared and run, with the op code that would
 * run them, on a small tensor holding every byte value (and every channel when the tables are
 * per channel). The tensor keeps the input's rank and which of its dims are 1 (QLinearAdd picks
 * its float operation order from that, following ONNX Runtime's broadcaster); a dim the model
 * leaves symbolic is tried both ways when the island holds a QLinearAdd, and the island stays as
 * written if the tables differ. Every element of the result is checked against the table, so an
 * op that is not elementwise after all cannot slip through. */
#include <stdio.h>
#include <string.h>

#include "passes.h"

enum ew_kind {
  EW_UNARY,   /* one data input */
  EW_BINARY,  /* all inputs are data, broadcast together */
  EW_QBINARY, /* QLinearAdd/Mul: data inputs 0 and 3, the rest per-tensor parameters */
  EW_QUNARY,  /* QLinearSigmoid/LeakyRelu: data input 0, the rest per-tensor parameters */
  EW_QDQ,     /* Q/DQ: data input 0, parameters per tensor or along `axis` */
  EW_CLIP,    /* data input 0, scalar bounds */
};

typedef struct ew_op {
  const char *op_type, *domain;
  enum ew_kind kind;
} ew_op;

static const ew_op g_ew[] = {
    {"QLinearAdd", "com.microsoft", EW_QBINARY},
    {"QLinearMul", "com.microsoft", EW_QBINARY},
    {"QLinearSigmoid", "com.microsoft", EW_QUNARY},
    {"QLinearLeakyRelu", "com.microsoft", EW_QUNARY},
    {"QuantizeLinear", "", EW_QDQ},
    {"DequantizeLinear", "", EW_QDQ},
    {"Add", "", EW_BINARY},
    {"Sub", "", EW_BINARY},
    {"Mul", "", EW_BINARY},
    {"Div", "", EW_BINARY},
    {"Pow", "", EW_BINARY},
    {"Max", "", EW_BINARY},
    {"Min", "", EW_BINARY},
    {"Sum", "", EW_BINARY},
    {"Mean", "", EW_BINARY},
    {"Relu", "", EW_UNARY},
    {"LeakyRelu", "", EW_UNARY},
    {"Sigmoid", "", EW_UNARY},
    {"HardSigmoid", "", EW_UNARY},
    {"HardSwish", "", EW_UNARY},
    {"Tanh", "", EW_UNARY},
    {"Exp", "", EW_UNARY},
    {"Sqrt", "", EW_UNARY},
    {"Neg", "", EW_UNARY},
    {"Abs", "", EW_UNARY},
    {"Identity", "", EW_UNARY},
    {"Log", "", EW_UNARY},
    {"Reciprocal", "", EW_UNARY},
    {"Floor", "", EW_UNARY},
    {"Ceil", "", EW_UNARY},
    {"Round", "", EW_UNARY},
    {"Erf", "", EW_UNARY},
    {"Gelu", "", EW_UNARY},
    {"Elu", "", EW_UNARY},
    {"Selu", "", EW_UNARY},
    {"Softplus", "", EW_UNARY},
    {"Clip", "", EW_CLIP},
};

static const ew_op *ew_find(const ir_node *n) {
  for (size_t i = 0; i < sizeof(g_ew) / sizeof(g_ew[0]); i++) {
    if (strcmp(n->op_type, g_ew[i].op_type) == 0 && strcmp(n->domain, g_ew[i].domain) == 0) return &g_ew[i];
  }
  return NULL;
}

int pass_table_candidate(const ir_node *n) {
  if (n->removed || n->n_outputs != 1 || n->outputs[0] < 0 || ew_find(n) == NULL) return 0;
  const op_def *op = op_find(n);
  return op != NULL && op->bind == NULL && op->prepare != NULL;
}

/* Scratch of one search: marks over nodes and values. */
typedef struct search {
  ir_graph *g;
  const int *pos;
  const unsigned char *done;
  unsigned char *in_s; /* [n_nodes] in the grown set */
  unsigned char *in_a; /* [n_nodes] in the chosen island */
  unsigned char *val;  /* [n_values] produced in the set (or x) */
  int *set;            /* grown set, topological order */
  int n_set;
} search;

static int cmp_pos_ctx_sort(const int *pos, int *a, int n) {
  /* insertion sort by topological position (islands are small) */
  for (int i = 1; i < n; i++) {
    const int v = a[i];
    int j = i - 1;
    while (j >= 0 && pos[a[j]] > pos[v]) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = v;
  }
  return n;
}

/* Grow the set of candidate nodes all of whose non-constant inputs are x or set outputs. */
static void grow(search *s, int x) {
  ir_graph *g = s->g;
  s->val[x] = 1;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = 0; i < g->n_nodes; i++) {
      const ir_node *n = &g->nodes[i];
      if (s->pos[i] < 0 || s->done[i] || s->in_s[i] || !pass_table_candidate(n)) continue;
      int any = 0, ok = 1;
      for (int k = 0; k < n->n_inputs && ok; k++) {
        const int v = n->inputs[k];
        if (v < 0 || g->values[v].constant != NULL) continue;
        if (s->val[v]) {
          any = 1;
        } else {
          ok = 0;
        }
      }
      if (!ok || !any || s->val[n->outputs[0]]) continue;
      s->in_s[i] = 1;
      s->val[n->outputs[0]] = 1;
      s->set[s->n_set++] = i;
      changed = 1;
    }
  }
  cmp_pos_ctx_sort(s->pos, s->set, s->n_set);
}

/* Whether value v (produced inside `mark`) is read by a live node outside `mark` or is a graph output. */
static int escapes(const search *s, const unsigned char *mark, int v) {
  const ir_graph *g = s->g;
  if (g->values[v].graph_output >= 0) return 1;
  for (int i = 0; i < g->n_nodes; i++) {
    if (s->pos[i] < 0 || mark[i]) continue;
    const ir_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] == v) return 1;
    }
  }
  return 0;
}

/* Mark in in_a the ancestors of value y within the set. Returns their count. */
static int ancestors(search *s, int y) {
  ir_graph *g = s->g;
  memset(s->in_a, 0, (size_t)g->n_nodes);
  int count = 0;
  /* reverse topological sweep: a node is in when one of its outputs is y or read by a node in */
  for (int j = s->n_set - 1; j >= 0; j--) {
    const int i = s->set[j];
    const int out = g->nodes[i].outputs[0];
    int need = out == y;
    for (int k = j + 1; k < s->n_set && !need; k++) {
      const int m = s->set[k];
      if (!s->in_a[m]) continue;
      const ir_node *mn = &g->nodes[m];
      for (int q = 0; q < mn->n_inputs; q++) need |= mn->inputs[q] == out;
    }
    if (need) {
      s->in_a[i] = 1;
      count++;
    }
  }
  return count;
}

/* v8[v] = 1 for the values of the set that are 8-bit, judged from the ops alone: x; the outputs of
 * QuantizeLinear and the QLinear ops; and of the type-keeping ops (Relu, Clip, Max, ...) whose
 * non-constant inputs all are. A wrong 1 costs nothing but an evaluation that says so. */
static void eight_bit_values(const search *s, int x, unsigned char *v8) {
  const ir_graph *g = s->g;
  memset(v8, 0, (size_t)g->n_values + 1);
  v8[x] = 1;
  for (int j = 0; j < s->n_set; j++) {
    const ir_node *n = &g->nodes[s->set[j]];
    const ew_op *e = ew_find(n);
    int is8 = 1;
    switch (e->kind) {
      case EW_QBINARY:
      case EW_QUNARY: break;
      case EW_QDQ: is8 = strcmp(n->op_type, "QuantizeLinear") == 0; break;
      case EW_UNARY:
      case EW_BINARY:
      case EW_CLIP:
        for (int k = 0; k < n->n_inputs; k++) {
          const int v = n->inputs[k];
          if (v >= 0 && g->values[v].constant == NULL && !v8[v]) is8 = 0;
        }
        break;
    }
    v8[n->outputs[0]] = (unsigned char)is8;
  }
}

/* ---- axis of per-channel parameters -------------------------------------------------------- */

typedef struct axis_state {
  int rank;
  const int64_t *dims; /* x's dims (-1: symbolic) */
  int axis;
  int64_t extent;
} axis_state;

/* A constant broadcast against x: its non-1 dims must be one axis of x, of x's extent. */
static int axis_from_broadcast(axis_state *a, const ir_tensor *t) {
  if (t->rank > a->rank) return 0;
  for (int j = 0; j < t->rank; j++) {
    if (t->dims[j] == 1) continue;
    const int d = a->rank - t->rank + j;
    if (a->dims[d] != t->dims[j]) return 0; /* would expand x (or x's dim is unknown) */
    if (a->axis >= 0 && a->axis != d) return 0;
    a->axis = d;
    a->extent = t->dims[j];
  }
  return 1;
}

static int axis_from_node(const ir_graph *g, const ir_node *n, axis_state *a) {
  const ew_op *e = ew_find(n);
  for (int k = 0; k < n->n_inputs; k++) {
    const ir_value *v = ir_node_input(g, n, k);
    if (v == NULL || v->constant == NULL) continue;
    const ir_tensor *t = v->constant;
    switch (e->kind) {
      case EW_UNARY:
      case EW_BINARY:
        if (!axis_from_broadcast(a, t)) return 0;
        break;
      case EW_QBINARY:
        if (k == 0 || k == 3) {
          if (!axis_from_broadcast(a, t)) return 0;
        } else if (t->count != 1) {
          return 0;
        }
        break;
      case EW_QUNARY:
      case EW_CLIP:
        if (t->count != 1) return 0;
        break;
      case EW_QDQ: {
        if (k == 0) {
          if (!axis_from_broadcast(a, t)) return 0;
          break;
        }
        if (t->count == 1) break;
        const ir_attr *bs = ir_node_attr(n, "block_size");
        const ir_attr *ax = ir_node_attr(n, "axis");
        if ((bs != NULL && bs->i != 0) || t->rank != 1) return 0;
        int64_t axis = ax != NULL ? ax->i : 1;
        if (axis < 0) axis += a->rank;
        if (axis < 0 || axis >= a->rank || a->dims[axis] != t->count) return 0;
        if (a->axis >= 0 && a->axis != axis) return 0;
        a->axis = (int)axis;
        a->extent = t->count;
        break;
      }
    }
  }
  return 1;
}

int pass_table_may_take(const ir_graph *g, const ir_node *n, int x) {
  if (!pass_table_candidate(n) || x < 0 || x >= g->n_values) return 0;
  const ir_value *xv = &g->values[x];
  if (xv->constant != NULL || (xv->dtype != Q8RT_DTYPE_UNDEFINED && !q8rt_dtype_is_8bit(xv->dtype))) return 0;
  /* Before planning x's shape may be unknown: then its rank is the constants' and an unknown
   * dim takes the extent a constant gives it (axis_from_node still refuses two axes). */
  int64_t dims[Q8RT_MAX_RANK];
  int rank = xv->rank;
  for (int d = 0; d < Q8RT_MAX_RANK; d++) dims[d] = rank >= 0 && d < rank ? xv->dims[d] : -1;
  for (int k = 0; k < n->n_inputs; k++) {
    const int v = n->inputs[k];
    if (v < 0 || v == x) continue;
    const ir_tensor *t = g->values[v].constant;
    if (t == NULL) return 0; /* a second data input */
    if (xv->rank < 0 && t->count != 1 && t->rank > rank) rank = t->rank;
  }
  if (rank < 0 || rank > Q8RT_MAX_RANK) return 0;
  for (int k = 0; k < n->n_inputs && xv->rank < 0; k++) {
    const int v = n->inputs[k];
    if (v < 0 || v == x) continue;
    const ir_tensor *t = g->values[v].constant;
    if (t->count == 1 || t->rank > rank) continue;
    for (int j = 0; j < t->rank; j++) {
      const int d = rank - t->rank + j;
      if (t->dims[j] != 1 && dims[d] < 0) dims[d] = t->dims[j];
    }
  }
  axis_state a = {rank, dims, -1, 1};
  return axis_from_node(g, n, &a) && (a.axis < 0 || a.extent <= 1024);
}

/* ---- evaluation --------------------------------------------------------------------------- */

typedef struct island_eval {
  ir_graph *g;
  const int *nodes;
  int n_nodes;
  int x, y;
  q8rt_dtype x_type;
  pass_eval *ev;   /* [n_nodes] */
  void **out_data; /* [n_nodes] output 0 of each node */
  int prepared;
  q8rt_pool *tmp;
  q8rt_backend backend;
  uint32_t isa;
} island_eval;

static int node_of_value(const island_eval *e, int v) {
  for (int i = 0; i < e->n_nodes; i++) {
    if (e->g->nodes[e->nodes[i]].outputs[0] == v) return i;
  }
  return -1;
}

static void const_shape(const ir_tensor *t, op_shape *out) {
  memset(out, 0, sizeof(*out));
  out->dtype = t->dtype;
  out->rank = t->rank;
  memcpy(out->dims, t->dims, sizeof(out->dims));
  out->value = t->data;
}

static int same_shape(const op_shape *a, const op_shape *b) {
  if (a->rank != b->rank) return 0;
  for (int d = 0; d < a->rank; d++) {
    if (a->dims[d] != b->dims[d]) return 0;
  }
  return 1;
}

/* Run the island on the synthetic input shape `xs` (runs times, run r filling x with byte r when
 * runs > 1, else the bytes 0..255 along `value_dim`) and fill `table` (channels x 256; `axis` the
 * channel axis or -1). *ok = 0 when a result is not elementwise in x. */
static q8rt_status eval_shape(island_eval *e, const op_shape *xs, int runs, int value_dim, int axis, uint8_t *table,
                              int *ok, const char **why, q8rt_error *err) {
  ir_graph *g = e->g;
  *ok = 0;
  size_t total = 1;
  for (int d = 0; d < xs->rank; d++) total *= (size_t)xs->dims[d];
  uint8_t *xbuf = q8rt_pool_alloc(e->tmp, total + 64, 64);
  if (xbuf == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory computing a table");
  op_shape in_shapes[Q8RT_MAX_IO];
  for (int i = 0; i < e->n_nodes; i++) {
    ir_node *n = &g->nodes[e->nodes[i]];
    q8rt_status st;
    if (!e->prepared && (st = pass_eval_prepare(g, n, e->tmp, e->backend, e->isa, &e->ev[i], err)) != Q8RT_OK)
      return st;
    for (int k = 0; k < n->n_inputs; k++) {
      const int v = n->inputs[k];
      memset(&in_shapes[k], 0, sizeof(in_shapes[k]));
      in_shapes[k].rank = -1;
      if (v < 0) continue;
      if (v == e->x) {
        in_shapes[k] = *xs;
      } else if (g->values[v].constant != NULL) {
        const_shape(g->values[v].constant, &in_shapes[k]);
      } else {
        in_shapes[k] = e->ev[node_of_value(e, v)].out[0];
      }
    }
    if ((st = pass_eval_infer(&e->ev[i], n, in_shapes, e->tmp, err)) != Q8RT_OK) return st;
    const op_shape *o = &e->ev[i].out[0];
    if (!same_shape(o, xs) || q8rt_dtype_size(o->dtype) == 0) {
      *why = "a node's output does not keep its input's shape";
      return Q8RT_OK;
    }
    /* Later nodes' prepare reads their inputs' types, as they would when the plan reaches them. */
    g->values[n->outputs[0]].dtype = o->dtype;
    e->out_data[i] = q8rt_pool_alloc(e->tmp, total * q8rt_dtype_size(o->dtype) + 64, 64);
    if (e->out_data[i] == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory computing a table");
  }
  e->prepared = 1;
  const int last = node_of_value(e, e->y);
  if (!q8rt_dtype_is_8bit(e->ev[last].out[0].dtype)) {
    *why = "the island's output is not 8-bit";
    return Q8RT_OK;
  }
  size_t stride[Q8RT_MAX_RANK];
  size_t acc = 1;
  for (int d = xs->rank - 1; d >= 0; d--) {
    stride[d] = acc;
    acc *= (size_t)xs->dims[d];
  }
  const size_t channels = axis >= 0 ? (size_t)xs->dims[axis] : 1;
  unsigned char *seen = q8rt_pool_alloc(e->tmp, channels * 256, 16);
  if (seen == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory computing a table");
  op_tensor in_t[Q8RT_MAX_IO], out_t[Q8RT_MAX_IO];
  for (int r = 0; r < runs; r++) {
    for (size_t i = 0; i < total; i++) {
      xbuf[i] = (uint8_t)(runs > 1 ? r : (int)((i / stride[value_dim]) % (size_t)xs->dims[value_dim]));
    }
    for (int i = 0; i < e->n_nodes; i++) {
      const ir_node *n = &g->nodes[e->nodes[i]];
      for (int k = 0; k < n->n_inputs; k++) {
        const int v = n->inputs[k];
        in_t[k].data = NULL;
        in_t[k].shape = &in_shapes[k];
        memset(&in_shapes[k], 0, sizeof(in_shapes[k]));
        in_shapes[k].rank = -1;
        if (v < 0) continue;
        if (v == e->x) {
          in_shapes[k] = *xs;
          in_t[k].data = xbuf;
        } else if (g->values[v].constant != NULL) {
          const_shape(g->values[v].constant, &in_shapes[k]);
          in_t[k].data = g->values[v].constant->data;
        } else {
          const int j = node_of_value(e, v);
          in_shapes[k] = e->ev[j].out[0];
          in_t[k].data = e->out_data[j];
        }
      }
      for (int k = 0; k < n->n_outputs; k++) {
        out_t[k].data = k == 0 ? e->out_data[i] : NULL;
        out_t[k].shape = &e->ev[i].out[k];
      }
      pass_eval_run(&e->ev[i], in_t, out_t, g->allocator);
    }
    const uint8_t *y = e->out_data[last];
    for (size_t i = 0; i < total; i++) {
      const size_t c = axis >= 0 ? (i / stride[axis]) % channels : 0;
      const size_t v = runs > 1 ? (size_t)r : (i / stride[value_dim]) % (size_t)xs->dims[value_dim];
      if (v >= 256) continue;
      const size_t t = c * 256 + v;
      if (seen[t] && table[t] != y[i]) {
        *why = "the island's result is not a function of each input byte";
        return Q8RT_OK;
      }
      seen[t] = 1;
      table[t] = y[i];
    }
  }
  for (size_t t = 0; t < channels * 256; t++) {
    if (!seen[t]) {
      *why = "internal: a table entry was not computed";
      return Q8RT_OK;
    }
  }
  *ok = 1;
  return Q8RT_OK;
}

static q8rt_status evaluate(island_eval *e, const ir_value *xv, int axis, int64_t extent, int has_qadd, uint8_t *table,
                            int *ok, const char **why, q8rt_error *err) {
  int unknown[Q8RT_MAX_RANK], n_unknown = 0;
  for (int d = 0; d < xv->rank; d++) {
    if (d != axis && xv->dims[d] < 0) unknown[n_unknown++] = d;
  }
  if (!has_qadd) n_unknown = 0; /* only QLinearAdd's arithmetic depends on which dims are 1 */
  if (n_unknown > 4) {
    *ok = 0;
    *why = "more than 4 symbolic dimensions";
    return Q8RT_OK;
  }
  const size_t channels = axis >= 0 ? (size_t)extent : 1;
  uint8_t *other = q8rt_pool_alloc(e->tmp, channels * 256, 16);
  if (other == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory computing a table");
  for (int combo = 0; combo < (1 << n_unknown); combo++) {
    op_shape xs;
    memset(&xs, 0, sizeof(xs));
    xs.dtype = e->x_type;
    xs.rank = xv->rank;
    for (int d = 0; d < xv->rank; d++) {
      xs.dims[d] = d == axis ? extent : xv->dims[d] == 1 ? 1 : 2;
    }
    for (int u = 0; u < n_unknown; u++) xs.dims[unknown[u]] = (combo >> u) & 1 ? 1 : 2;
    int value_dim = -1;
    for (int d = xs.rank - 1; d >= 0 && value_dim < 0; d--) {
      if (d != axis && xs.dims[d] == 2) value_dim = d;
    }
    if (value_dim >= 0) xs.dims[value_dim] = 256;
    q8rt_status st =
        eval_shape(e, &xs, value_dim >= 0 ? 1 : 256, value_dim, axis, combo == 0 ? table : other, ok, why, err);
    if (st != Q8RT_OK || !*ok) return st;
    if (combo > 0 && memcmp(table, other, channels * 256) != 0) {
      *ok = 0;
      *why = "the result depends on which symbolic dimensions are 1 (QLinearAdd's operation order)";
      return Q8RT_OK;
    }
  }
  return Q8RT_OK;
}

q8rt_status pass_table_island(ir_graph *g, int x, const int *pos, const unsigned char *done, q8rt_pool *pool,
                              q8rt_backend backend, uint32_t isa, table_island *out, int *found, const char **why,
                              q8rt_error *err) {
  memset(out, 0, sizeof(*out));
  *found = 0;
  *why = NULL;
  const ir_value *xv = &g->values[x];
  const q8rt_dtype x_type = xv->constant != NULL ? Q8RT_DTYPE_UNDEFINED : xv->dtype;
  if (!q8rt_dtype_is_8bit(x_type) || xv->rank < 0) return Q8RT_OK;
  q8rt_pool tmp;
  q8rt_pool_init(&tmp, g->allocator);
  q8rt_status st = Q8RT_OK;
  search s = {g, pos, done, NULL, NULL, NULL, NULL, 0};
  s.in_s = q8rt_pool_alloc(&tmp, (size_t)g->n_nodes + 1, 16);
  s.in_a = q8rt_pool_alloc(&tmp, (size_t)g->n_nodes + 1, 16);
  s.val = q8rt_pool_alloc(&tmp, (size_t)g->n_values + 1, 16);
  s.set = q8rt_pool_array(&tmp, (size_t)g->n_nodes + 1, sizeof(int));
  if (s.in_s == NULL || s.in_a == NULL || s.val == NULL || s.set == NULL) {
    st = q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory looking for tables");
    goto done;
  }
  grow(&s, x);
  if (s.n_set == 0) goto done;
  unsigned char *v8 = q8rt_pool_alloc(&tmp, (size_t)g->n_values + 1, 16);
  if (v8 == NULL) {
    st = q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory looking for tables");
    goto done;
  }
  eight_bit_values(&s, x, v8);
  /* The island: the largest set of ancestors of one 8-bit value that nothing outside reads but
   * it (a float value, say a DequantizeLinear's output, ends no island: its table would not be
   * 8-bit, and the 8-bit island before it would be lost). */
  int best_y = -1, best_n = 0;
  for (int j = 0; j < s.n_set; j++) {
    const int y = g->nodes[s.set[j]].outputs[0];
    if (!v8[y]) continue;
    const int count = ancestors(&s, y);
    if (count <= best_n || !escapes(&s, s.in_a, y)) continue;
    int ok = 1;
    for (int k = 0; k < s.n_set && ok; k++) {
      const int i = s.set[k];
      if (s.in_a[i] && g->nodes[i].outputs[0] != y && escapes(&s, s.in_a, g->nodes[i].outputs[0])) ok = 0;
    }
    if (ok) {
      best_y = y;
      best_n = count;
    }
  }
  if (best_y < 0) {
    *why = "no group of its elementwise consumers has a single output";
    goto done;
  }
  ancestors(&s, best_y);
  int *nodes = q8rt_pool_array(&tmp, (size_t)best_n, sizeof(int));
  if (nodes == NULL) {
    st = q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory looking for tables");
    goto done;
  }
  int n_nodes = 0, has_qadd = 0;
  axis_state ax = {xv->rank, xv->dims, -1, 1};
  for (int k = 0; k < s.n_set; k++) {
    const int i = s.set[k];
    if (!s.in_a[i]) continue;
    nodes[n_nodes++] = i;
    has_qadd |= strcmp(g->nodes[i].op_type, "QLinearAdd") == 0;
    if (!axis_from_node(g, &g->nodes[i], &ax)) {
      *why = "a constant or parameter varies along more than one axis, or would broadcast the tensor larger";
      goto done;
    }
  }
  const size_t channels = ax.axis >= 0 ? (size_t)ax.extent : 1;
  /* Past ~1000 channels the tables (256 bytes each) outgrow L2 and the model's memory, while the
   * island they would replace is one or two cheap nodes on a wide row: leave those as written. */
  if (channels > 1024) {
    *why = "more than 1024 per-channel tables";
    goto done;
  }
  island_eval e = {g, nodes, n_nodes, x, best_y, x_type, NULL, NULL, 0, &tmp, backend, isa};
  e.ev = q8rt_pool_array(&tmp, (size_t)n_nodes, sizeof(pass_eval));
  e.out_data = q8rt_pool_array(&tmp, (size_t)n_nodes, sizeof(void *));
  uint8_t *table = q8rt_pool_alloc(pool, channels * 256, 64);
  int *kept = q8rt_pool_array(pool, (size_t)n_nodes, sizeof(int));
  if (e.ev == NULL || e.out_data == NULL || table == NULL || kept == NULL) {
    st = q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory computing a table");
    goto done;
  }
  int ok = 0;
  if ((st = evaluate(&e, xv, ax.axis, ax.extent, has_qadd, table, &ok, why, err)) != Q8RT_OK || !ok) goto done;
  char names[3000];
  size_t len = 0;
  names[0] = '\0';
  for (int i = 0; i < n_nodes; i++) {
    const int w = snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "", g->nodes[nodes[i]].name);
    if (w < 0 || (size_t)w >= sizeof(names) - len) {
      snprintf(names + (sizeof(names) > 5 ? sizeof(names) - 5 : 0), 5, "...");
      break;
    }
    len += (size_t)w;
  }
  memcpy(kept, nodes, (size_t)n_nodes * sizeof(int));
  out->x = x;
  out->y = best_y;
  out->nodes = kept;
  out->n_nodes = n_nodes;
  out->axis = ax.axis;
  out->channels = channels;
  out->table = table;
  out->out_type = e.ev[node_of_value(&e, best_y)].out[0].dtype;
  out->replaced = q8rt_pool_strdup(pool, names);
  if (out->replaced == NULL) {
    st = q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  *found = 1;
done:
  q8rt_pool_free(&tmp);
  return st;
}

/* ---- the table decisions the planner asks for as it walks the nodes --------------------------- */

static int island_has(const table_island *t, int ni) {
  for (int i = 0; i < t->n_nodes; i++) {
    if (t->nodes[i] == ni) return 1;
  }
  return 0;
}

q8rt_status pass_table_head(ir_graph *g, int ni, const int *pos, const unsigned char *done, q8rt_pool *pool,
                            q8rt_backend backend, uint32_t isa, table_island *out, int *found, q8rt_error *err) {
  *found = 0;
  const ir_node *n = &g->nodes[ni];
  if (!pass_table_candidate(n)) return Q8RT_OK;
  int x = -1;
  for (int k = 0; k < n->n_inputs; k++) {
    const int v = n->inputs[k];
    if (v < 0 || g->values[v].constant != NULL) continue;
    if (x >= 0 && x != v) return Q8RT_OK;
    x = v;
  }
  if (x < 0) return Q8RT_OK;
  int any = 0;
  const char *why = NULL;
  q8rt_status st = pass_table_island(g, x, pos, done, pool, backend, isa, out, &any, &why, err);
  if (st != Q8RT_OK || !any) return st;
  *found = island_has(out, ni);
  return Q8RT_OK;
}

q8rt_status pass_table_after(ir_graph *g, int ni, const int *pos, const unsigned char *done, q8rt_pool *pool,
                             q8rt_backend backend, uint32_t isa, table_island *out, int *found, q8rt_error *err) {
  *found = 0;
  const ir_node *n = &g->nodes[ni];
  const int x = n->n_outputs > 0 ? n->outputs[0] : -1;
  if (x < 0 || g->values[x].graph_output >= 0) return Q8RT_OK;
  int any = 0;
  const char *why = NULL;
  q8rt_status st = pass_table_island(g, x, pos, done, pool, backend, isa, out, &any, &why, err);
  if (st != Q8RT_OK || !any) return st;
  if (out->axis >= 0 && out->axis != 1) return Q8RT_OK; /* an output stage's tables are per output channel */
  /* every reader of x must be in the island: x itself is never written */
  for (int i = 0; i < g->n_nodes; i++) {
    if (pos[i] < 0 || island_has(out, i)) continue;
    const ir_node *m = &g->nodes[i];
    for (int k = 0; k < m->n_inputs; k++) {
      if (m->inputs[k] == x) return Q8RT_OK;
    }
  }
  *found = 1;
  return Q8RT_OK;
}

void pass_table_claim(const table_island *t, unsigned char *done) {
  for (int i = 0; i < t->n_nodes; i++) done[t->nodes[i]] = 1;
}
