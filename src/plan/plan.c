#include "plan.h"

#include <string.h>

#include <stdio.h>

#include "passes/passes.h"

typedef struct builder {
  ir_graph *g;
  q8rt_pool *pool;
  plan *out;
  int cap_steps;
  pass_layout ls; /* how each value is stored so far (the layout pass's decisions read it) */
  uint32_t isa;
  q8rt_error *err;
  q8rt_backend backend;
  const int *pos;                /* [n_nodes] topological position, -1 for dead nodes (pass_results) */
  unsigned char *done;           /* [n_nodes] folded or fused (pass_results), planned or replaced by a table */
  int tables;                    /* replace elementwise islands by tables */
  const ir_node *consumer;       /* the node whose inputs are being placed (NULL: graph outputs) */
  const char *consumer_why;      /* why it runs NCHW, when it said */
  int *vguard;                   /* [ls.cap] guard of the step writing each physical value (0: none) */
  const unsigned char *float_ok; /* [n_nodes] pass_float_nhwc_ok (pass_results) */
  int node_step;                 /* the step plan_node made for its node, -1 if none */
  struct op_pack_entry *packs;   /* packed constants the steps share (op_pack_find) */
} builder;

/* A step's own op_node (strings in the plan's pool; inputs/outputs: the step's). */
static op_node *new_op_node(q8rt_pool *pool, const char *name, const char *op_type, const char *domain) {
  op_node *d = q8rt_pool_alloc(pool, sizeof(*d), 16);
  if (d == NULL || (d->name = q8rt_pool_strdup(pool, name)) == NULL ||
      (d->op_type = q8rt_pool_strdup(pool, op_type)) == NULL || (d->domain = q8rt_pool_strdup(pool, domain)) == NULL)
    return NULL;
  return d;
}

static op_node *copy_op_node(q8rt_pool *pool, const ir_node *n) {
  op_node *d = new_op_node(pool, n->name, n->op_type, n->domain);
  if (d == NULL) return NULL;
  d->opset = n->opset;
  d->n_inputs = n->n_inputs;
  d->n_outputs = n->n_outputs;
  d->inputs = n->inputs; /* until the step's own are made */
  d->outputs = n->outputs;
  d->if_guard = n->if_guard;
  if (n->note != NULL && (d->note = q8rt_pool_strdup(pool, n->note)) == NULL) return NULL;
  return d;
}

/* The logical (NCHW) value carries the shape the model sees of its NHWC twin. */
static void set_logical_from_nhwc(ir_graph *g, int logical, int phys) {
  ir_value *lv = &g->values[logical];
  const ir_value *pv = &g->values[phys];
  lv->dtype = pv->dtype;
  lv->rank = pv->rank;
  if (pv->rank < 2) {
    memcpy(lv->dims, pv->dims, sizeof(lv->dims));
    return;
  }
  pass_layout_logical_dims(pv->dims, pv->rank, lv->dims);
}

static q8rt_status infer_step(builder *b, plan_step *s) {
  ir_graph *g = b->g;
  op_shape in_shapes[Q8RT_MAX_IO], out_shapes[Q8RT_MAX_IO];
  for (int k = 0; k < s->n_inputs; k++) {
    if (s->inputs[k] >= 0) {
      pass_value_shape(&g->values[s->inputs[k]], &in_shapes[k]);
    } else {
      memset(&in_shapes[k], 0, sizeof(in_shapes[k]));
      in_shapes[k].rank = -1;
    }
  }
  memset(out_shapes, 0, sizeof(out_shapes));
  q8rt_status st = s->op->infer(s->params, s->node, in_shapes, out_shapes, 0, NULL, b->err);
  if (st != Q8RT_OK) return st;
  for (int k = 0; k < s->n_outputs; k++) {
    if (s->outputs[k] < 0) continue;
    ir_value *v = &g->values[s->outputs[k]];
    if (v->graph_output >= 0 && v->dtype != Q8RT_DTYPE_UNDEFINED && v->dtype != out_shapes[k].dtype) {
      return q8rt_fail(b->err, Q8RT_ERROR_INVALID_MODEL, "graph output '%s' is declared %s but node '%s' produces %s",
                       v->name, q8rt_onnx_type_name(v->dtype), s->node->name, q8rt_onnx_type_name(out_shapes[k].dtype));
    }
    v->dtype = out_shapes[k].dtype;
    v->rank = out_shapes[k].rank;
    memcpy(v->dims, out_shapes[k].dims, sizeof(v->dims));
  }
  return Q8RT_OK;
}

static plan_step *new_step(builder *b) {
  if (b->out->n_steps >= b->cap_steps) return NULL;
  plan_step *s = &b->out->steps[b->out->n_steps++];
  memset(s, 0, sizeof(*s));
  return s;
}

/* A fresh internal value named after `base` (suffix made unique). */
static int new_value(builder *b, const char *base, const char *suffix) {
  char name[512];
  for (int attempt = 0; attempt < 1000; attempt++) {
    if (attempt == 0) {
      snprintf(name, sizeof(name), "%.400s%s", base, suffix);
    } else {
      snprintf(name, sizeof(name), "%.400s%s%d", base, suffix, attempt);
    }
    if (ir_graph_find_value(b->g, name) < 0) return ir_graph_intern_value(b->g, name);
  }
  return -1;
}

/* A channels-last twin for logical value v (pass_layout), or -1 (out of memory). The value stays
 * stored in its logical order too only when keep_logical (a layout change writes the twin). */
static int new_twin(builder *b, int v, int keep_logical) {
  const int twin = new_value(b, b->g->values[v].name, "#nhwc");
  if (twin < 0 || twin >= b->ls.cap) return -1;
  b->ls.nchw[twin] = b->ls.nhwc[twin] = -1;
  if (!keep_logical) b->ls.nchw[v] = -1;
  b->ls.nhwc[v] = twin;
  return twin;
}

/* Append a transpose step from physical value `from` to physical value `to`. When only axes of
 * size 1 move (one channel, or one pixel: known at load) the step is a copy (LayoutCopy); when
 * that depends on dims known at bind, the step checks there and copies if so
 * (pass_layout_change_copies decides). */
static q8rt_status add_transpose(builder *b, int from, int to, int to_nhwc) {
  plan_step *s = new_step(b);
  int *io = q8rt_pool_array(b->pool, 2, sizeof(int));
  const char *kernel = "";
  void *params = op_layout_transpose_params(b->pool, to_nhwc, b->isa, &kernel);
  /* the x8 kernels move bytes; a float value (a stretch between quantized ops) goes element by element */
  if (q8rt_dtype_size(b->g->values[from].dtype) > 1) kernel = "layout_transpose_wide__scalar";
  char dims[160];
  const int keeps = pass_layout_change_copies(&b->g->values[from], to_nhwc, dims, sizeof(dims));
  if (keeps == 1) kernel = "copy__scalar";
  char name[512];
  snprintf(name, sizeof(name), "%.400s%s", b->g->values[to].name, to_nhwc ? "" : " (to NCHW)");
  op_node *n = new_op_node(b->pool, name, keeps == 1 ? "LayoutCopy" : "LayoutTranspose", "q8rt");
  if (s == NULL || n == NULL || io == NULL || params == NULL) {
    return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning layouts");
  }
  n->n_inputs = n->n_outputs = 1;
  n->inputs = &io[0];
  n->outputs = &io[1];
  io[0] = from;
  io[1] = to;
  s->op = &q8rt_op_layout_transpose;
  s->node = n;
  s->params = params;
  s->kernel = kernel;
  char why[512];
  pass_layout_change_reason(why, sizeof(why), b->consumer, b->consumer_why, to_nhwc, keeps, dims);
  if ((s->reason = q8rt_pool_strdup(b->pool, why)) == NULL) {
    return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning layouts");
  }
  s->n_inputs = 1;
  s->inputs = &io[0];
  s->n_outputs = 1;
  s->outputs = &io[1];
  /* computed where its input is: a later reader in another branch may reuse it */
  s->guard = b->vguard[from];
  b->vguard[to] = s->guard;
  return infer_step(b, s);
}

/* The physical value of logical v in `layout`, inserting a transpose when needed. */
static q8rt_status materialize(builder *b, int v, int layout, int *phys) {
  pass_layout *ls = &b->ls;
  if (layout == OP_LAYOUT_NHWC) {
    if (ls->nhwc[v] < 0) {
      const int twin = new_twin(b, v, 1);
      if (twin < 0) return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning layouts");
      q8rt_status st = add_transpose(b, ls->nchw[v], twin, 1);
      if (st != Q8RT_OK) return st;
    }
    *phys = ls->nhwc[v];
    return Q8RT_OK;
  }
  if (ls->nchw[v] < 0) {
    q8rt_status st = add_transpose(b, ls->nhwc[v], v, 0);
    if (st != Q8RT_OK) return st;
    ls->nchw[v] = v;
  }
  *phys = v;
  return Q8RT_OK;
}

/* ---- tables (src/passes/table_fuse.c finds and computes them) -------------------------------- */

/* Node `ni`, not yet planned, may head an island of its 8-bit input (pass_table_head): the island
 * becomes one table step in the layout its input has. */
static q8rt_status table_step(builder *b, int ni, int *tabled) {
  ir_graph *g = b->g;
  const ir_node *n = &g->nodes[ni];
  *tabled = 0;
  if (!b->tables) return Q8RT_OK;
  table_island t;
  int found = 0;
  q8rt_status st = pass_table_head(g, ni, b->pos, b->done, b->pool, b->backend, b->isa, &t, &found, b->err);
  if (st != Q8RT_OK || !found) return st;
  const int x = t.x;
  const int nhwc = b->ls.nhwc[x] >= 0;
  /* Per-channel tables on channels-last data are a lookup per byte (the channel changes every
   * byte), slower than one QLinearAdd/QLinearMul's vectorized rows: such a node runs as written. */
  if (nhwc && t.axis == 1 && t.channels > 1 && t.n_nodes == 1 && g->nodes[t.nodes[0]].domain[0] != '\0' &&
      (strcmp(g->nodes[t.nodes[0]].op_type, "QLinearAdd") == 0 ||
       strcmp(g->nodes[t.nodes[0]].op_type, "QLinearMul") == 0))
    return Q8RT_OK;
  const int in = nhwc ? b->ls.nhwc[x] : b->ls.nchw[x];
  int outv = t.y;
  if (nhwc) {
    if ((outv = new_twin(b, t.y, 0)) < 0) return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  }
  plan_step *s = new_step(b);
  op_node *tn = new_op_node(b->pool, g->values[t.y].name, "LookupTable", "q8rt");
  int *io = q8rt_pool_array(b->pool, 2, sizeof(int));
  char note[3100];
  snprintf(note, sizeof(note), "replaces %s", t.replaced);
  const char *kernel = "";
  void *params =
      op_lookup_table_params(b->pool, t.table, t.channels, pass_layout_physical_axis(t.axis, g->values[x].rank, nhwc),
                             g->values[x].rank, t.out_type, b->backend, b->isa, &kernel);
  if (s == NULL || tn == NULL || io == NULL || params == NULL || (tn->note = q8rt_pool_strdup(b->pool, note)) == NULL) {
    return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning a table");
  }
  tn->n_inputs = tn->n_outputs = 1;
  tn->inputs = &io[0];
  tn->outputs = &io[1];
  io[0] = in;
  io[1] = outv;
  s->op = &q8rt_op_lookup_table;
  s->node = tn;
  s->params = params;
  s->kernel = kernel;
  s->reason = nhwc ? "elementwise island as one table (runs in NHWC, the layout of its input)"
                   : "elementwise island as one table";
  s->n_inputs = 1;
  s->inputs = &io[0];
  s->n_outputs = 1;
  s->outputs = &io[1];
  /* n heads the island (it reads x): the island's later nodes are in n's branch or inner ones */
  s->guard = n->guard;
  b->vguard[outv] = s->guard;
  if ((st = infer_step(b, s)) != Q8RT_OK) return st;
  if (nhwc) set_logical_from_nhwc(g, t.y, outv);
  pass_table_claim(&t, b->done);
  *tabled = 1;
  return Q8RT_OK;
}

/* After step s (whose op can apply a table as it writes): when every reader of its output is one
 * island, the op applies the island's table itself and writes the island's output. */
static q8rt_status fuse_table_into(builder *b, int ni, plan_step *s, void *params) {
  ir_graph *g = b->g;
  op_node *d = s->node;
  if (!b->tables) return Q8RT_OK;
  table_island t;
  int found = 0;
  q8rt_status st = pass_table_after(g, ni, b->pos, b->done, b->pool, b->backend, b->isa, &t, &found, b->err);
  if (st != Q8RT_OK || !found) return st;
  const int x = t.x;
  if (!s->op->fuse_table(params, t.table, t.channels, t.out_type)) return Q8RT_OK;
  const int phys = s->outputs[0];
  const int nhwc = phys != x;
  int outv = t.y;
  if (nhwc) {
    if ((outv = new_twin(b, t.y, 0)) < 0) return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  }
  b->ls.nchw[x] = b->ls.nhwc[x] = -1; /* never written */
  s->outputs[0] = outv;
  b->vguard[outv] = s->guard;
  char note[3600];
  snprintf(note, sizeof(note), "%s%soutput through a table replacing %s", d->note ? d->note : "", d->note ? "; " : "",
           t.replaced);
  if ((d->note = q8rt_pool_strdup(b->pool, note)) == NULL)
    return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if ((st = infer_step(b, s)) != Q8RT_OK) return st;
  if (nhwc) set_logical_from_nhwc(g, t.y, outv);
  pass_table_claim(&t, b->done);
  return Q8RT_OK;
}

/* Node ni moves bytes as they are (or reads only shapes) and its input exists channels-last only:
 * when its output, channels-last or in its logical order, holds the input's bytes unchanged, the
 * node runs as a view (q8rt_op_layout_view) and no layout change comes before it. A reshape whose
 * dims are not known at load is checked at bind (the step gathers if the bound shapes break it). */
static q8rt_status view_step(builder *b, int ni, const op_def *op, int *handled) {
  ir_graph *g = b->g;
  ir_node *n = &g->nodes[ni];
  *handled = 0;
  pass_view view;
  if (!pass_layout_view_candidate(g, n, op, &b->ls, &view)) return Q8RT_OK;
  const int x = n->inputs[0], in_cl = view.in_cl, kind = view.kind;
  op_node *desc = copy_op_node(b->pool, n);
  if (desc == NULL) return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  op_prepare_ctx ctx = {g, n, desc,      b->pool, b->backend, b->isa, "", "", OP_LAYOUT_NCHW, OP_LAYOUT_NCHW,
                        0, 0, &b->packs, NULL,    b->tables};
  void *params = NULL;
  q8rt_status st;
  if ((st = op->prepare(&ctx, &params, b->err)) != Q8RT_OK) return st;
  /* the node's output in logical terms, from the logical shapes known at load */
  op_shape lin[4], lout;
  for (int k = 0; k < n->n_inputs; k++) {
    if (n->inputs[k] >= 0) {
      pass_value_shape(&g->values[n->inputs[k]], &lin[k]);
    } else {
      memset(&lin[k], 0, sizeof(lin[k]));
      lin[k].rank = -1;
    }
  }
  memset(&lout, 0, sizeof(lout));
  if ((st = op->infer(params, desc, lin, &lout, 0, NULL, b->err)) != Q8RT_OK) return st;
  if (!pass_layout_view_decide(g, n, b->pos, b->done, lin, &lout, &view)) return Q8RT_OK;
  const int out_cl = view.out_cl, as_view = view.as_view;
  const char *how = view.how;
  void *vp = op_layout_view_params(b->pool, op, params, in_cl, out_cl, kind == PASS_VIEW_TRANSPOSE ? view.tperm : NULL,
                                   view.rank);
  int *io = q8rt_pool_array(b->pool, (size_t)n->n_inputs + 2, sizeof(int));
  char why[512];
  if (kind == PASS_VIEW_TRANSPOSE) {
    snprintf(why, sizeof(why), "%s", how);
  } else {
    snprintf(why, sizeof(why), "%s; %s", ctx.reason, how);
  }
  plan_step *s = new_step(b);
  const char *reason = q8rt_pool_strdup(b->pool, why);
  if (vp == NULL || io == NULL || s == NULL || reason == NULL)
    return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  b->out->n_steps--; /* the inputs below may add layout changes first */
  b->consumer = n;
  b->consumer_why = NULL;
  io[0] = in_cl ? b->ls.nhwc[x] : b->ls.nchw[x];
  for (int k = 1; k < n->n_inputs; k++) {
    io[k] = -1;
    if (n->inputs[k] >= 0 && (st = materialize(b, n->inputs[k], OP_LAYOUT_NCHW, &io[k])) != Q8RT_OK) return st;
  }
  const int y = n->outputs[0];
  io[n->n_inputs] = y;
  if (out_cl) {
    const int twin = new_twin(b, y, 0);
    if (twin < 0) return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
    io[n->n_inputs] = twin;
  }
  n = &g->nodes[ni];
  if ((s = new_step(b)) == NULL) return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  desc->inputs = io;
  desc->outputs = io + n->n_inputs;
  b->node_step = (int)(s - b->out->steps);
  s->op = kind == PASS_VIEW_SHAPE ? &q8rt_op_layout_view_shape : &q8rt_op_layout_view;
  s->node = desc;
  s->params = vp;
  s->kernel = kind == PASS_VIEW_SHAPE                   ? ctx.kernel
              : kind == PASS_VIEW_TRANSPOSE && !as_view ? "transpose__scalar"
                                                        : "copy__scalar";
  s->reason = reason;
  s->n_inputs = n->n_inputs;
  s->inputs = io;
  s->n_outputs = 1;
  s->outputs = io + n->n_inputs;
  s->guard = n->guard;
  b->vguard[s->outputs[0]] = n->guard;
  if ((st = infer_step(b, s)) != Q8RT_OK) return st;
  if (out_cl) set_logical_from_nhwc(g, y, s->outputs[0]);
  pass_annotate_quant(g, n);
  b->done[ni] = 1;
  *handled = 1;
  return Q8RT_OK;
}

/* Plan node ni: prepare, layouts, the step, its shapes. */
static q8rt_status plan_node(builder *b, int ni) {
  ir_graph *g = b->g;
  q8rt_status st;
  ir_node *n = &g->nodes[ni];
  const op_def *op = op_find(n);
  if (op == NULL) {
    return q8rt_fail(b->err, Q8RT_ERROR_UNSUPPORTED, "node '%s': op %s%s%s (opset %d) is not supported by q8rt",
                     n->name, n->domain[0] ? n->domain : "", n->domain[0] ? "." : "", n->op_type, n->opset);
  }
  if (n->n_inputs > Q8RT_MAX_IO || n->n_outputs > Q8RT_MAX_IO) {
    return q8rt_fail(b->err, Q8RT_ERROR_INVALID_MODEL, "node '%s' (%s): too many inputs or outputs", n->name,
                     n->op_type);
  }
  int tabled = 0;
  if ((st = table_step(b, ni, &tabled)) != Q8RT_OK) return st;
  if (tabled) return Q8RT_OK;
  int viewed = 0;
  if ((st = view_step(b, ni, op, &viewed)) != Q8RT_OK) return st;
  if (viewed) return Q8RT_OK;
  op_node *desc = copy_op_node(b->pool, n);
  if (desc == NULL) return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  op_prepare_ctx ctx = {g,
                        n,
                        desc,
                        b->pool,
                        b->backend,
                        b->isa,
                        "",
                        "",
                        OP_LAYOUT_NCHW,
                        OP_LAYOUT_NCHW,
                        pass_layout_edge_nchw(g, n, b->pos, &b->ls),
                        0,
                        &b->packs,
                        &b->out->submodels,
                        b->tables};
  void *params = NULL;
  if ((st = op->prepare(&ctx, &params, b->err)) != Q8RT_OK) return st;

  /* Channels-last when the node can and its input already is: no layout change. */
  int nhwc_all = 0;
  b->consumer = n;
  b->consumer_why = NULL;
  if (op->nhwc_params != NULL && ctx.in_layout == OP_LAYOUT_NCHW &&
      pass_layout_try_nhwc(g, n, &b->ls, b->float_ok[ni], &b->consumer_why)) {
    const void *np = op->nhwc_params(params, g, n, b->pool, &b->consumer_why);
    if (np != NULL) {
      params = (void *)np;
      nhwc_all = 1;
      ctx.out_layout = OP_LAYOUT_NHWC;
      char why[512];
      /* an op may say how it runs channels-last (then *why is its note, not a refusal) */
      snprintf(why, sizeof(why), "%s; channels-last like its input%s%s", ctx.reason,
               b->consumer_why != NULL ? ": " : "", b->consumer_why != NULL ? b->consumer_why : "");
      b->consumer_why = NULL;
      if ((ctx.reason = q8rt_pool_strdup(b->pool, why)) == NULL)
        return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
    }
  }

  int *io = q8rt_pool_array(b->pool, (size_t)(n->n_inputs + n->n_outputs) + 1, sizeof(int));
  if (io == NULL) return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  for (int k = 0; k < n->n_inputs; k++) {
    const int v = n->inputs[k];
    io[k] = -1;
    if (v < 0) continue;
    const int want = pass_layout_input(g, &b->ls, v, k, ctx.in_layout, nhwc_all);
    if ((st = materialize(b, v, want, &io[k])) != Q8RT_OK) return st;
  }
  for (int k = 0; k < n->n_outputs; k++) {
    const int v = n->outputs[k];
    io[n->n_inputs + k] = v;
    if (v < 0) continue;
    if ((k == 0 || (nhwc_all && op->nhwc_all_outputs)) && ctx.out_layout == OP_LAYOUT_NHWC) {
      const int twin = new_twin(b, v, 0);
      if (twin < 0) return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
      io[n->n_inputs + k] = twin;
    }
  }
  n = &g->nodes[ni]; /* values may have moved; nodes did not, but keep the pattern obvious */
  plan_step *s = new_step(b);
  if (s == NULL) return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  desc->inputs = io;
  desc->outputs = io + n->n_inputs;
  b->node_step = (int)(s - b->out->steps);
  s->op = op;
  s->node = desc;
  s->params = params;
  s->kernel = ctx.kernel;
  s->reason = ctx.reason;
  s->n_inputs = n->n_inputs;
  s->inputs = io;
  s->n_outputs = n->n_outputs;
  s->outputs = io + n->n_inputs;
  s->guard = n->guard;
  s->consumed = ctx.consumed;
  for (int k = 0; k < n->n_outputs; k++) {
    if (s->outputs[k] >= 0) b->vguard[s->outputs[k]] = n->guard;
  }
  if ((st = infer_step(b, s)) != Q8RT_OK) return st;
  for (int k = 0; k < n->n_outputs; k++) {
    const int v = n->outputs[k];
    if (v >= 0 && s->outputs[k] != v) set_logical_from_nhwc(g, v, s->outputs[k]);
  }
  pass_annotate_quant(g, n);
  b->done[ni] = 1;
  if (op->fuse_table != NULL && (st = fuse_table_into(b, ni, s, (void *)params)) != Q8RT_OK) return st;
  return Q8RT_OK;
}

/* A Concat input requantized through a table, written by a step that applies a table as it writes
 * (a convolution with its fused activation) and read by nothing else: the producer applies the
 * composed table and the Concat copies (then the session may put it in place). The same bytes: the
 * Concat's slice was table2[table1[v]] either way; the value now holds the Concat's encoding, so
 * it must have no other reader: no graph output, no branch condition, one step reading it once,
 * one step (outside If branches, like the Concat) writing it as its only output, the same type. */
static q8rt_status concat_tables(builder *b) {
  plan *p = b->out;
  ir_graph *g = b->g;
  const int nv = g->n_values;
  int *readers = q8rt_pool_array(b->pool, (size_t)nv + 1, sizeof(int));
  int *writer = q8rt_pool_array(b->pool, (size_t)nv + 1, sizeof(int));
  if (readers == NULL || writer == NULL) return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  for (int v = 0; v < nv; v++) {
    readers[v] = 0;
    writer[v] = -1;
  }
  for (int i = 0; i < p->n_steps; i++) {
    const plan_step *ps = &p->steps[i];
    for (int k = 0; k < ps->n_inputs; k++) {
      if (ps->inputs[k] >= 0 && ps->inputs[k] < nv) readers[ps->inputs[k]]++;
    }
    for (int k = 0; k < ps->n_outputs; k++) {
      const int v = ps->outputs[k];
      if (v >= 0 && v < nv) writer[v] = writer[v] == -1 ? i : -2;
    }
  }
  for (int id = 1; id <= g->n_guards; id++) {
    const int c = ir_graph_guard(g, id)->cond;
    if (c >= 0 && c < nv) readers[c] += 2;
  }
  for (int c = 0; c < p->n_steps; c++) {
    plan_step *pc = &p->steps[c];
    if (pc->op->input_table == NULL || pc->guard != 0 || pc->n_outputs < 1 || pc->outputs[0] < 0) continue;
    const ir_value *o = &g->values[pc->outputs[0]];
    for (int k = 0; k < pc->n_inputs; k++) {
      const int v = pc->inputs[k];
      if (v < 0 || v >= nv || readers[v] != 1 || writer[v] < 0 || writer[v] >= c) continue;
      const ir_value *val = &g->values[v];
      if (val->constant != NULL || val->graph_input >= 0 || val->graph_output >= 0 || val->dtype != o->dtype) continue;
      plan_step *pw = &p->steps[writer[v]];
      if (pw->op->compose_table == NULL || pw->guard != 0 || pw->n_outputs != 1 || pw->outputs[0] != v) continue;
      const uint8_t *table = pc->op->input_table((void *)pc->params, k, 0);
      if (table == NULL || !pw->op->compose_table((void *)pw->params, table, b->pool)) continue;
      pc->op->input_table((void *)pc->params, k, 1);
      g->values[v].quant = o->quant; /* it now holds the Concat's encoding */
      char note[3600];
      snprintf(note, sizeof(note), "%s%soutput in %s's encoding (its requantization table composed in)",
               pw->node->note ? pw->node->note : "", pw->node->note ? "; " : "", pc->node->name);
      if ((pw->node->note = q8rt_pool_strdup(b->pool, note)) == NULL)
        return q8rt_fail(b->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
    }
  }
  return Q8RT_OK;
}

/* Weights stored once, and no constant kept for nothing: after planning, a large constant (one
 * with a pool chunk of its own) whose data no step reads at bind or run and no graph output shows
 * is freed. A step reads a constant input unless its prepare packed it (plan_step.consumed); the
 * constants only folding, tables or fused passes read are done with. Runs after every step is
 * planned; what it keeps the model takes over when the IR goes (ir_graph_take_tensors). */
static q8rt_status release_unread_constants(ir_graph *g, const plan *p, q8rt_error *err) {
  (void)err;
  for (int v = 0; v < g->n_values; v++) {
    if (g->values[v].constant != NULL) g->values[v].constant->keep = 0;
  }
  /* marked through the tensor: two values may share one (a folded Identity) */
  for (int i = 0; i < p->n_steps; i++) {
    const plan_step *s = &p->steps[i];
    for (int k = 0; k < s->n_inputs; k++) {
      const int v = s->inputs[k];
      if (v < 0 || v >= g->n_values || g->values[v].constant == NULL) continue;
      if (k >= 32 || !(s->consumed >> k & 1u)) g->values[v].constant->keep = 1;
    }
  }
  for (int v = 0; v < g->n_values; v++) {
    const ir_value *val = &g->values[v];
    if (val->constant != NULL && val->graph_output >= 0) val->constant->keep = 1;
  }
  for (int id = 1; id <= g->n_guards; id++) {
    const ir_value *c = &g->values[ir_graph_guard(g, id)->cond];
    if (c->constant != NULL) c->constant->keep = 1; /* the session reads a known condition at bind */
  }
  for (int v = 0; v < g->n_values; v++) {
    ir_tensor *t = g->values[v].constant;
    if (t != NULL && !t->keep) ir_tensor_release(g, t);
  }
  return Q8RT_OK;
}

/* The plan's own value table, inputs, outputs, guards and step strings (copies: nothing at bind
 * or run reads the IR). Runs last, when every twin value exists and packed constants are released. */
static q8rt_status copy_values(const ir_graph *g, plan *p, q8rt_pool *pool, q8rt_error *err) {
  p->n_values = g->n_values;
  p->values = q8rt_pool_array(pool, (size_t)g->n_values + 1, sizeof(plan_value));
  p->n_inputs = g->n_inputs;
  p->inputs = q8rt_pool_array(pool, (size_t)g->n_inputs + 1, sizeof(int));
  p->n_outputs = g->n_outputs;
  p->outputs = q8rt_pool_array(pool, (size_t)g->n_outputs + 1, sizeof(int));
  p->guards = q8rt_pool_array(pool, (size_t)g->n_guards + 1, sizeof(plan_guard));
  if (p->values == NULL || p->inputs == NULL || p->outputs == NULL || p->guards == NULL)
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  for (int v = 0; v < g->n_values; v++) {
    const ir_value *iv = &g->values[v];
    plan_value *pv = &p->values[v];
    if ((pv->name = q8rt_pool_strdup(pool, iv->name)) == NULL)
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
    pass_value_shape(iv, &pv->shape);
    pv->constant = iv->constant != NULL;
    pv->const_bytes = iv->constant != NULL ? iv->constant->nbytes : 0;
    pv->graph_input = iv->graph_input;
    pv->graph_output = iv->graph_output;
    pv->has_quant = iv->quant.known;
    pv->scale = iv->quant.scale;
    pv->zero_point = iv->quant.zero_point;
  }
  /* an op may name its kernel or reason with a string of the IR (an attribute's value) */
  for (int i = 0; i < p->n_steps; i++) {
    plan_step *st = &p->steps[i];
    if ((st->kernel = q8rt_pool_strdup(pool, st->kernel)) == NULL ||
        (st->reason = q8rt_pool_strdup(pool, st->reason)) == NULL)
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  }
  for (int i = 0; i < g->n_inputs; i++) p->inputs[i] = g->inputs[i];
  for (int i = 0; i < g->n_outputs; i++) p->outputs[i] = g->outputs[i];
  for (int id = 1; id <= g->n_guards; id++) {
    const ir_guard *gd = ir_graph_guard(g, id);
    plan_guard *pg = &p->guards[id - 1];
    pg->parent = gd->parent;
    pg->cond = gd->cond;
    pg->side = gd->side;
    if ((pg->if_name = q8rt_pool_strdup(pool, g->nodes[gd->if_node].name)) == NULL)
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  }
  return Q8RT_OK;
}

static int guard_broken(const plan *p, const ir_graph *g, int id) {
  for (; id > 0; id = ir_graph_guard(g, id)->parent) {
    if (p->guard_errors[id] != NULL) return 1;
  }
  return 0;
}

q8rt_status plan_build(ir_graph *g, const pass_results *r, q8rt_pool *pool, q8rt_backend backend, uint32_t isa,
                       int tables, plan *out, q8rt_error *err) {
  memset(out, 0, sizeof(*out));
  const int *order = r->order, count = r->count;
  builder b;
  memset(&b, 0, sizeof(b));
  b.g = g;
  b.pool = pool;
  b.out = out;
  b.cap_steps = 2 * count + g->n_outputs + 1;
  b.isa = isa;
  b.err = err;
  b.backend = backend;
  b.pos = r->pos;
  b.tables = tables;
  b.float_ok = r->float_ok;
  b.node_step = -1;
  out->steps = q8rt_pool_array(pool, (size_t)b.cap_steps, sizeof(plan_step));
  b.ls.cap = 2 * g->n_values + 1;
  b.ls.nchw = q8rt_pool_array(pool, (size_t)b.ls.cap, sizeof(int));
  b.ls.nhwc = q8rt_pool_array(pool, (size_t)b.ls.cap, sizeof(int));
  b.done = q8rt_pool_alloc(pool, (size_t)g->n_nodes + 1, 16);
  b.vguard = q8rt_pool_array(pool, (size_t)b.ls.cap, sizeof(int));
  out->n_guards = g->n_guards;
  out->guard_errors = q8rt_pool_array(pool, (size_t)g->n_guards + 1, sizeof(*out->guard_errors));
  if (out->steps == NULL || b.ls.nchw == NULL || b.ls.nhwc == NULL || b.done == NULL || b.vguard == NULL ||
      out->guard_errors == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  }
  memcpy(b.done, r->done, (size_t)g->n_nodes + 1);
  for (int v = 0; v < b.ls.cap; v++) {
    b.ls.nchw[v] = v < g->n_values ? v : -1;
    b.ls.nhwc[v] = -1;
    b.vguard[v] = 0;
  }
  for (int id = 0; id <= g->n_guards; id++) out->guard_errors[id] = NULL;

  q8rt_status st;
  for (int i = 0; i < count; i++) {
    if (b.done[order[i]]) continue;
    ir_node *n = &g->nodes[order[i]];
    const int gs = n->guard ? pass_guard_at_load(g, n->guard) : PASS_GUARD_LIVE;
    if (gs == PASS_GUARD_DEAD || guard_broken(out, g, n->guard)) {
      b.done[order[i]] = 1; /* never runs (folded If), or its branch already reports an error */
      continue;
    }
    b.node_step = -1;
    q8rt_error node_err = {Q8RT_OK, ""};
    b.err = &node_err;
    st = plan_node(&b, order[i]);
    b.err = err;
    if (st == Q8RT_OK) continue;
    if (gs != PASS_GUARD_OPEN || st == Q8RT_ERROR_OUT_OF_MEMORY) {
      if (err != NULL) *err = node_err;
      return st;
    }
    /* A branch that may never be taken: its error waits for the bind or run that takes it. The
     * node's own step (the last one, if made) goes; transposes made for it stay, harmless. */
    q8rt_error *kept = q8rt_pool_alloc(pool, sizeof(*kept), 16);
    if (kept == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
    *kept = node_err;
    out->guard_errors[n->guard] = kept;
    if (b.node_step >= 0 && b.node_step == out->n_steps - 1) out->n_steps--;
    for (int k = 0; k < n->n_outputs; k++) {
      if (n->outputs[k] >= 0 && g->values[n->outputs[k]].constant == NULL) g->values[n->outputs[k]].rank = -1;
    }
    b.done[order[i]] = 1;
  }
  /* Graph outputs are NCHW. */
  b.consumer = NULL;
  for (int i = 0; i < g->n_outputs; i++) {
    int phys;
    if ((st = materialize(&b, g->outputs[i], OP_LAYOUT_NCHW, &phys)) != Q8RT_OK) return st;
  }
  for (int i = 0; i < out->n_steps; i++) {
    if (out->steps[i].n_inputs > out->max_inputs) out->max_inputs = out->steps[i].n_inputs;
    if (out->steps[i].n_outputs > out->max_outputs) out->max_outputs = out->steps[i].n_outputs;
  }
  if (b.tables && (st = concat_tables(&b)) != Q8RT_OK) return st;
  if ((st = release_unread_constants(g, out, err)) != Q8RT_OK) return st;
  return copy_values(g, out, pool, err);
}
