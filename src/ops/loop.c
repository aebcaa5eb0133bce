/* Loop: the body (read by the loader into a graph of its own, ir_node.body) is planned at load as
 * a model of its own; the step runs it once per iteration in a session of its own that borrows
 * the parent session's thread pools.
 *
 * Inputs: M (int64, one element, optional), cond (bool, one element, optional), the N carried
 * values, then the outer values the body reads (the loader's additions). Body inputs: iteration
 * number, condition, the carried values, the outer values, in that order. Body outputs: the
 * condition, the N carried values, the K scan outputs. Outputs: the N final carried values, the K
 * scan outputs (each iteration's value stacked on a new first axis).
 *
 * What q8rt asks of a Loop (it works out every shape when shapes are bound):
 * - carried values keep their shape from one iteration to the next (checked after each bind of
 *   the body: a change fails the run naming the node), so the Loop's carried outputs have the
 *   initial values' shapes;
 * - scan outputs are sized when shapes are bound from M (a constant or a value computed from
 *   shapes) when there is no condition input, or from the iterations the condition allows (at
 *   most M) when the condition input and, iteration after iteration, the body's condition are
 *   known at bind (tf2onnx's while loops: M = INT64_MAX or absent, a counter against a size from
 *   a shape; trip_from_condition); otherwise, when every scan output is a graph output
 *   that nothing else reads (outside a Loop body), they are written into buffers of the step's
 *   own and published at run with the length the run found (op_exec_ctx.publish); anything else
 *   (M from data with scan outputs other steps read) is refused at bind, and a sized loop that its
 *   condition stops before M iterations fails the run. Every iteration's scan value has one shape;
 * - at most max_loop_iterations iterations (the session's option): a loop that would go on fails
 *   the run naming the node, where ONNX Runtime would keep going.
 * The body is bound once when the Loop is (its shapes known from the inputs' shapes alone); when
 * that fails, e.g. a Slice or Range whose bounds come from the iteration number or a small carried
 * counter (SLANet's), it is bound again before every iteration with the iteration number, the
 * condition and the small inputs' current values (<= Q8RT_VALUE_BYTES) known to the bind.
 * Carried values live in the Loop's outputs: the body reads them there (in place, as the outer
 * values it reads) and each iteration's new values are copied back after the body ran. */
#include <stdio.h>
#include <string.h>

#include "data_common.h"
#include "runtime/internal.h"

#define LOOP_MAX Q8RT_MAX_IO

typedef struct loop_params {
  const q8rt_model *body;
  const char *name; /* the node's (messages at run) */
  int n_carried, n_scan, n_inputs;
  /* the body input of each Loop input (-1: a carried value fixed in the body, below) */
  int bin[LOOP_MAX];
  /* carried value k passed through unchanged with a constant initial value (SLANet's weights): a
   * constant of the body (packed at load), its output never copied back */
  unsigned char fixed[LOOP_MAX];
  /* every scan output is a graph output nothing else reads (outside a Loop body): when their length
   * is not known at bind they are published at run (op_exec_ctx.publish) */
  int late_ok;
  /* a carried output that is another carried value's body input (a swap): the new values are
   * staged in the workspace before they are written back */
  int stage;
  /* the trip count may come from the condition at bind (trip_from_condition): not in a Loop's
   * body, whose every bind would repeat it (nested Loops would multiply the binds) */
  int trip_at_bind;
} loop_params;

typedef struct late_buf {
  void *data;
  size_t cap;
} late_buf;

typedef struct loop_geom {
  q8rt_session *sess; /* the body's session, from bind to unbind */
  int late;           /* scan outputs of run-time length, in bufs (n_scan, from bind to unbind) */
  late_buf *bufs;
  const q8rt_allocator *allocator; /* bufs' */
  size_t late_limit;               /* bufs' caps together at most this (the session's max_arena_bytes; 0: none) */
  size_t late_bytes;               /* bufs' caps together */
  int per_iteration;               /* bound before each iteration with the iteration number and condition */
  int64_t scan_trip;               /* the scan outputs' length (M at bind), 0 without scan outputs */
  size_t carried_bytes;            /* all carried values */
} loop_geom;

_Static_assert(sizeof(loop_geom) <= Q8RT_GEOM_BYTES, "loop_geom must fit a step's geometry");

static size_t shape_bytes(const op_shape *s) {
  int64_t n;
  if (s == NULL || s->rank < 0 || !q8rt_shape_elements(s->dims, s->rank, &n)) return 0;
  return (size_t)n * q8rt_dtype_size(s->dtype);
}

static q8rt_status loop_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  ir_node *n = (ir_node *)(uintptr_t)ctx->node; /* the body is taken from the node */
  ir_graph *bg = n->body;
  if (bg == NULL || ctx->submodels == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Loop node '%s' has no body as q8rt reads them", n->name);
  }
  const int nc = n->loop_carried, nin = n->n_inputs;
  if (nc < 0 || bg->n_inputs != nin || bg->n_outputs != n->n_outputs + 1 || n->n_outputs < nc || nin > LOOP_MAX ||
      n->n_outputs > LOOP_MAX) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Loop node '%s': its inputs and outputs do not match its body's",
                     n->name);
  }
  static const char *const what[2] = {"the iteration number", "the condition"};
  static const char *const outer_what[2] = {"M", "cond"};
  for (int k = 0; k < nin; k++) {
    ir_value *bv = &bg->values[bg->inputs[k]];
    const ir_value *ov = ir_node_input(ctx->graph, n, k);
    if (k < 2) {
      const q8rt_dtype want = k == 0 ? Q8RT_DTYPE_INT64 : Q8RT_DTYPE_BOOL;
      if (bv->dtype == Q8RT_DTYPE_UNDEFINED) bv->dtype = want;
      if (bv->rank < 0) bv->rank = 0;
      if (bv->rank == 1 && bv->dims[0] < 0) bv->dims[0] = 1;
      if (bv->dtype != want || bv->rank > 1 || (bv->rank == 1 && bv->dims[0] != 1)) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                         "Loop node '%s': body input %d (%s) is not a %s scalar: q8rt reads %s", n->name, k, what[k],
                         q8rt_dtype_name(want), bv->name);
      }
      if (ov != NULL && ov->dtype != Q8RT_DTYPE_UNDEFINED && ov->dtype != want) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Loop node '%s': %s is %s, not %s", n->name, outer_what[k],
                         q8rt_dtype_name(ov->dtype), q8rt_dtype_name(want));
      }
      continue;
    }
    if (ov == NULL) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Loop node '%s': carried value %d has no initial value", n->name,
                       k - 2);
    }
    if (bv->dtype == Q8RT_DTYPE_UNDEFINED) {
      bv->dtype = ov->dtype;
      if (bv->rank < 0) {
        bv->rank = ov->rank;
        memcpy(bv->dims, ov->dims, sizeof(bv->dims));
        for (int d = 0; d < Q8RT_MAX_RANK; d++) bv->dim_params[d] = NULL;
      }
    } else if (ov->dtype != Q8RT_DTYPE_UNDEFINED && ov->dtype != bv->dtype) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Loop node '%s': body input '%s' is %s, the value it gets is %s",
                       n->name, bv->name, q8rt_dtype_name(bv->dtype), q8rt_dtype_name(ov->dtype));
    }
  }
  /* carried values the body passes through unchanged whose initial value is a constant: constants
   * of the body (a MatMul then packs its weight at load instead of reading it at run) */
  unsigned char fixed[LOOP_MAX] = {0};
  int n_fixed = 0;
  for (int k = 0; k < nc; k++) {
    const int bi = bg->inputs[2 + k];
    const ir_value *ov = ir_node_input(ctx->graph, n, 2 + k);
    if (bg->outputs[1 + k] != bi || ov->constant == NULL || bg->values[bi].graph_output != 1 + k) continue;
    const ir_tensor *c = ov->constant;
    ir_tensor *t;
    q8rt_status cst = ir_tensor_create(bg, c->dtype, c->rank, c->dims, &t, err);
    if (cst != Q8RT_OK) return cst;
    if (c->nbytes) memcpy(t->data, c->data, c->nbytes);
    ir_value *bv = &bg->values[bi];
    bv->constant = t;
    bv->dtype = t->dtype;
    bv->rank = t->rank;
    for (int d = 0; d < Q8RT_MAX_RANK; d++) {
      bv->dims[d] = d < t->rank ? t->dims[d] : 0;
      bv->dim_params[d] = NULL;
    }
    bv->graph_input = -1;
    fixed[2 + k] = 1;
    n_fixed++;
  }
  if (n_fixed > 0) {
    int j = 0;
    for (int k = 0; k < nin; k++) {
      if (!fixed[k]) {
        bg->inputs[j] = bg->inputs[k];
        bg->values[bg->inputs[j]].graph_input = j;
        j++;
      }
    }
    bg->n_inputs = j;
  }
  n->body = NULL;
  q8rt_model *sub;
  q8rt_error be = {Q8RT_OK, ""};
  q8rt_status st = q8rt_model_from_graph(bg, ctx->pool->allocator, ctx->backend, ctx->isa, ctx->tables, &sub, &be);
  if (st != Q8RT_OK) return q8rt_fail(err, st, "Loop node '%s' body: %s", n->name, be.message);
  sub->next_sub = *ctx->submodels;
  *ctx->submodels = sub;
  const plan *bp = &sub->plan;
  if (bp->n_inputs != nin - n_fixed || bp->n_outputs != n->n_outputs + 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Loop node '%s': its body's plan lost an input or output", n->name);
  }
  loop_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  char *reason = q8rt_pool_alloc(ctx->pool, 160, 1);
  if (p == NULL || reason == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->body = sub;
  p->name = ctx->desc->name;
  p->n_carried = nc;
  p->n_scan = n->n_outputs - nc;
  p->n_inputs = nin;
  for (int k = 0, j = 0; k < nin; k++) {
    p->fixed[k] = fixed[k];
    p->bin[k] = fixed[k] ? -1 : j++;
  }
  for (int k = 0; k < nc; k++) {
    for (int k2 = 0; k2 < nc; k2++) {
      p->stage |= !fixed[2 + k] && !fixed[2 + k2] && k2 != k && bp->outputs[1 + k] == bp->inputs[p->bin[2 + k2]];
    }
  }
  p->late_ok = p->n_scan > 0 && !ctx->graph->is_body;
  p->trip_at_bind = !ctx->graph->is_body;
  for (int j = 0; j < p->n_scan; j++) {
    const ir_value *ov = ir_node_output(ctx->graph, n, nc + j);
    p->late_ok &= ov != NULL && ov->graph_output >= 0 && ov->consumers == 0;
  }
  snprintf(reason, 160, "runs its body's plan (%d steps) per iteration; %d constant carried values fixed in the body",
           bp->n_steps, n_fixed);
  ctx->kernel = "loop";
  ctx->reason = reason;
  *out = p;
  return Q8RT_OK;
}

/* Binds the body for an iteration: the Loop's input shapes, with (with_values) the iteration
 * number, the condition and the small inputs' current contents (vals[k], where not NULL: the
 * carried values, the outer values) known to the bind. */
static q8rt_status bind_body(const loop_params *p, q8rt_session *s, const op_shape *const *in, void *const *ext,
                             const void *const *vals, int64_t iter, unsigned char cond, int with_values,
                             q8rt_error *err) {
  op_shape sh[LOOP_MAX];
  void *bext[LOOP_MAX];
  const plan *bp = &p->body->plan;
  for (int k = 0; k < p->n_inputs; k++) {
    if (p->bin[k] < 0) continue;
    op_shape *d = &sh[p->bin[k]];
    bext[p->bin[k]] = ext != NULL ? ext[k] : NULL;
    memset(d, 0, sizeof(*d));
    if (k < 2) {
      d->rank = bp->values[bp->inputs[k]].shape.rank == 1 ? 1 : 0;
      d->dims[0] = 1;
      d->value = !with_values ? NULL : k == 0 ? (const void *)&iter : (const void *)&cond;
    } else {
      *d = *in[k];
      d->value = with_values && vals != NULL && shape_bytes(in[k]) <= Q8RT_VALUE_BYTES ? vals[k] : NULL;
    }
  }
  return q8rt_session_bind_inputs(s, sh, bext, err);
}

/* Iterations a Loop whose condition input is known (true) at bind makes, found by binding its
 * body iteration after iteration with the iteration number, the condition and the carried values
 * known (each carried value's contents while they are known and small, <= Q8RT_VALUE_BYTES) and
 * reading the body's condition output from the bind: at most LOOP_TRIP_BIND iterations, and M
 * (Loops outside bodies only: p->trip_at_bind).
 * Returns 1 with *trip when every condition along the way was known at bind, 0 otherwise (the
 * condition reads data: the scan outputs keep M's length). The run makes the same iterations from
 * the same values; were it to stop elsewhere, it fails naming the node (loop_run). */
#define LOOP_TRIP_BIND 4096
static int trip_from_condition(const loop_params *p, q8rt_session *s, const op_shape *const *in,
                               const void *const *vals0, int64_t m, int64_t *trip) {
  const plan *bp = &p->body->plan;
  const int nc = p->n_carried;
  _Alignas(16) unsigned char cur[LOOP_MAX][Q8RT_VALUE_BYTES];
  _Alignas(16) unsigned char next[LOOP_MAX][Q8RT_VALUE_BYTES];
  unsigned char known[LOOP_MAX];
  const void *vals[LOOP_MAX];
  for (int k = 0; k < p->n_inputs; k++) vals[k] = vals0[k];
  for (int k = 0; k < nc; k++) {
    const size_t bytes = shape_bytes(in[2 + k]);
    if (p->fixed[2 + k] || vals0[2 + k] == NULL || bytes == 0 || bytes > Q8RT_VALUE_BYTES) {
      if (!p->fixed[2 + k]) vals[2 + k] = NULL;
      continue;
    }
    memcpy(cur[k], vals0[2 + k], bytes);
    vals[2 + k] = cur[k];
  }
  q8rt_error be = {Q8RT_OK, ""};
  unsigned char c = 1;
  int64_t i = 0;
  for (; i < m && c; i++) {
    if (i >= LOOP_TRIP_BIND) return 0;
    if (bind_body(p, s, in, NULL, vals, i, c, 1, &be) != Q8RT_OK) return 0;
    const op_shape *co = &s->shapes[bp->outputs[0]];
    if (co->value == NULL || co->dtype != Q8RT_DTYPE_BOOL || shape_bytes(co) != 1) return 0;
    const unsigned char cn = *(const unsigned char *)co->value != 0;
    for (int k = 0; k < nc; k++) {
      known[k] = 0;
      if (p->fixed[2 + k]) continue;
      const op_shape *o = &s->shapes[bp->outputs[1 + k]];
      const size_t bytes = shape_bytes(in[2 + k]);
      if (o->value != NULL && o->dtype == in[2 + k]->dtype && shape_bytes(o) == bytes && bytes > 0 &&
          bytes <= Q8RT_VALUE_BYTES) {
        memcpy(next[k], o->value, bytes);
        known[k] = 1;
      }
    }
    for (int k = 0; k < nc; k++) {
      if (p->fixed[2 + k]) continue;
      if (known[k]) memcpy(cur[k], next[k], shape_bytes(in[2 + k]));
      vals[2 + k] = known[k] ? cur[k] : NULL;
    }
    c = cn;
  }
  *trip = i;
  return 1;
}

static q8rt_status check_scalar(const op_node *n, const op_shape *s, q8rt_dtype want, const char *what,
                                q8rt_error *err) {
  if (s->dtype != Q8RT_DTYPE_UNDEFINED && s->dtype != want) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Loop node '%s': %s is %s, not %s", n->name, what,
                     q8rt_dtype_name(s->dtype), q8rt_dtype_name(want));
  }
  int known = s->rank >= 0;
  for (int d = 0; known && d < s->rank; d++) known = s->dims[d] >= 0;
  int64_t count;
  if (known && (!q8rt_shape_elements(s->dims, s->rank, &count) || count != 1)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Loop node '%s': %s has %lld elements, not one", n->name, what,
                     (long long)count);
  }
  return Q8RT_OK;
}

static q8rt_status loop_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  const loop_params *p = params;
  const plan *bp = &p->body->plan;
  const int nc = p->n_carried, ns = p->n_scan;
  q8rt_status st;
  if (n->inputs[0] >= 0 && (st = check_scalar(n, &in[0], Q8RT_DTYPE_INT64, "M", err)) != Q8RT_OK) return st;
  if (n->inputs[1] >= 0 && (st = check_scalar(n, &in[1], Q8RT_DTYPE_BOOL, "cond", err)) != Q8RT_OK) return st;
  for (int k = 0; k < nc; k++) {
    const op_shape *c = &in[2 + k];
    const q8rt_dtype bt = bp->values[bp->outputs[1 + k]].shape.dtype;
    if (c->dtype != Q8RT_DTYPE_UNDEFINED && bt != Q8RT_DTYPE_UNDEFINED && bt != c->dtype) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "Loop node '%s': carried value %d is %s, its body gives it back as %s", n->name, k,
                       q8rt_dtype_name(c->dtype), q8rt_dtype_name(bt));
    }
    out[k] = *c;
    out[k].value = NULL;
  }
  for (int j = 0; j < ns; j++) {
    const op_shape *b = &bp->values[bp->outputs[1 + nc + j]].shape;
    op_shape *o = &out[nc + j];
    memset(o, 0, sizeof(*o));
    o->dtype = b->dtype;
    o->rank = b->rank < 0 ? -1 : b->rank + 1;
    if (o->rank > Q8RT_MAX_RANK) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "Loop node '%s': scan output %d has rank %d (q8rt: up to %d)",
                       n->name, j, o->rank, Q8RT_MAX_RANK);
    }
    o->dims[0] = -1;
    for (int d = 0; d < b->rank; d++) o->dims[1 + d] = b->dims[d];
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  loop_geom *g = geom;
  g->carried_bytes = 0;
  for (int k = 0; k < nc; k++) {
    if ((st = data_check_movable(n, &in[2 + k], "a carried value", err)) != Q8RT_OK) return st;
    g->carried_bytes += shape_bytes(&in[2 + k]);
  }
  if (ns == 0) return Q8RT_OK;
  const int m_known = n->inputs[0] >= 0 && in[0].value != NULL;
  /* the length known at bind: M known and no condition input (the body's is then ignored);
   * otherwise graph outputs nothing else reads take the length the run finds */
  g->late = p->late_ok && !(m_known && n->inputs[1] < 0);
  /* M absent with a condition known at bind: the condition may size the scan outputs (below) */
  const int m_open = p->trip_at_bind && n->inputs[0] < 0 && n->inputs[1] >= 0 && in[1].value != NULL;
  if (!m_known && !g->late && !m_open) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "Loop node '%s' has scan outputs and its trip count M is %s: q8rt sizes scan outputs when shapes "
                     "are bound (M a constant or computed from shapes), unless every scan output is a graph output "
                     "that no other node reads",
                     n->name, n->inputs[0] < 0 ? "absent" : "computed at run time");
  }
  int64_t m = m_known ? *(const int64_t *)in[0].value : m_open ? INT64_MAX : 1;
  if (m < 0 || (n->inputs[1] >= 0 && in[1].value != NULL && *(const unsigned char *)in[1].value == 0)) m = 0;
  g->scan_trip = g->late ? INT64_MAX : m;
  if (m == 0) { /* no iteration: dims the body leaves open are 0 */
    for (int j = 0; j < ns; j++) {
      for (int d = 0; d < out[nc + j].rank; d++) {
        if (out[nc + j].dims[d] < 0) out[nc + j].dims[d] = 0;
      }
      if (g->late) out[nc + j].dims[0] = 0;
    }
    return Q8RT_OK;
  }
  /* the scan values' shapes: the body bound for the first iteration */
  const op_exec_ctx one = {.threads = 1};
  q8rt_session *s;
  q8rt_error be = {Q8RT_OK, ""};
  if ((st = q8rt_session_create_body(p->body, NULL, &one, &s, &be)) != Q8RT_OK) {
    return q8rt_fail(err, st, "Loop node '%s' body: %s", n->name, be.message);
  }
  s->shapes_only = 1; /* shapes are all this bind is for: no arena (infer has no cap to hold it to) */
  const op_shape *inp[LOOP_MAX];
  for (int k = 0; k < p->n_inputs; k++) inp[k] = &in[k];
  const void *vals[LOOP_MAX];
  for (int k = 0; k < p->n_inputs; k++) vals[k] = in[k].value;
  const unsigned char c0 = 1;
  /* a condition known at bind (tf2onnx's while loops: M = INT64_MAX, the condition a counter
   * against a size from a shape): the iterations it allows, when the body's condition follows from
   * values known at bind too, size the scan outputs */
  if (p->trip_at_bind && !g->late && n->inputs[1] >= 0 && in[1].value != NULL) {
    int64_t trip;
    if (trip_from_condition(p, s, inp, vals, m, &trip)) {
      m = trip;
      g->scan_trip = m;
    } else if (!m_known) {
      q8rt_session_free(s);
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                       "Loop node '%s' has scan outputs, no trip count M and a condition that is not known when "
                       "shapes are bound: q8rt sizes scan outputs then, unless every scan output is a graph output "
                       "that no other node reads",
                       n->name);
    }
  }
  st = bind_body(p, s, inp, NULL, NULL, 0, c0, 0, &be);
  if (st != Q8RT_OK) st = bind_body(p, s, inp, NULL, vals, 0, c0, 1, &be);
  if (st != Q8RT_OK) {
    q8rt_session_free(s);
    return q8rt_fail(err, st, "Loop node '%s' body (iteration 0): %s", n->name, be.message);
  }
  for (int j = 0; j < ns; j++) {
    const op_shape *sh = &s->shapes[p->body->plan.outputs[1 + nc + j]];
    op_shape *o = &out[nc + j];
    o->rank = sh->rank + 1;
    if (o->rank > Q8RT_MAX_RANK) break;
    o->dims[0] = g->late ? 0 : m; /* late: published at run */
    for (int d = 0; d < sh->rank; d++) o->dims[1 + d] = sh->dims[d];
  }
  q8rt_session_free(s);
  for (int j = 0; j < ns; j++) {
    if (out[nc + j].rank > Q8RT_MAX_RANK) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "Loop node '%s': scan output %d has rank %d (q8rt: up to %d)",
                       n->name, j, out[nc + j].rank, Q8RT_MAX_RANK);
    }
  }
  return Q8RT_OK;
}

/* Before the arena is placed: scan outputs sized from M hold M iterations' values, and a run of
 * more than max_loop_iterations iterations fails (or, stopped early by its condition, leaves them
 * short, which fails too): refused now, before M values' memory is allocated and cleared. */
static q8rt_status loop_check_limits(const void *params, const op_node *n, const void *geom, const op_exec_ctx *ctx,
                                     q8rt_error *err) {
  const loop_params *p = params;
  const loop_geom *g = geom;
  const uint64_t cap = ctx->max_loop_iterations != 0 ? ctx->max_loop_iterations : Q8RT_DEFAULT_MAX_LOOP_ITERATIONS;
  if (p->n_scan > 0 && !g->late && g->scan_trip > 0 && (uint64_t)g->scan_trip > cap) {
    return q8rt_fail(err, Q8RT_ERROR_LIMIT,
                     "Loop node '%s': its trip count M = %lld sizes its scan outputs for more than %llu iterations "
                     "(the session's max_loop_iterations): refused when shapes are bound",
                     n->name, (long long)g->scan_trip, (unsigned long long)cap);
  }
  return Q8RT_OK;
}

static size_t loop_workspace(const void *params, const void *geom, size_t threads) {
  (void)threads;
  const loop_params *p = params;
  return p->stage ? ((const loop_geom *)geom)->carried_bytes : 0;
}

/* The buffers the body reads in place: the carried values in the Loop's outputs, the outer values
 * where they are. */
static void in_place_inputs(const loop_params *p, const op_tensor *in, const op_tensor *out, void **ext) {
  ext[0] = ext[1] = NULL;
  for (int k = 2; k < p->n_inputs; k++) ext[k] = k - 2 < p->n_carried ? out[k - 2].data : in[k].data;
}

static q8rt_status loop_bind(const void *params, void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                             const op_exec_ctx *ctx, q8rt_error *err) {
  (void)workspace;
  const loop_params *p = params;
  loop_geom *g = geom;
  q8rt_error be = {Q8RT_OK, ""};
  q8rt_status st = q8rt_session_create_body(p->body, ctx->allocator, ctx, &g->sess, &be);
  if (st != Q8RT_OK) return q8rt_fail(err, st, "Loop node '%s' body: %s", p->name, be.message);
  g->allocator = ctx->allocator;
  g->late_limit = ctx->max_arena_bytes;
  g->late_bytes = 0;
  if (g->late && (g->bufs = q8rt_calloc(ctx->allocator, (size_t)p->n_scan, sizeof(late_buf))) == NULL) {
    q8rt_session_free(g->sess);
    g->sess = NULL;
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "Loop node '%s': out of memory", p->name);
  }
  void *ext[LOOP_MAX];
  in_place_inputs(p, in, out, ext);
  const op_shape *inp[LOOP_MAX];
  for (int k = 0; k < p->n_inputs; k++) inp[k] = in[k].shape;
  /* shapes from the inputs' shapes alone: one bind for every iteration; else one per iteration */
  g->per_iteration = bind_body(p, g->sess, inp, ext, NULL, 0, 1, 0, &be) != Q8RT_OK;
  return Q8RT_OK;
}

static void loop_unbind(const void *params, void *geom) {
  const loop_params *p = params;
  loop_geom *g = geom;
  q8rt_session_free(g->sess);
  g->sess = NULL;
  if (g->bufs != NULL) {
    for (int j = 0; j < p->n_scan; j++) q8rt_free(g->allocator, g->bufs[j].data, g->bufs[j].cap);
    q8rt_free(g->allocator, g->bufs, (size_t)p->n_scan * sizeof(late_buf));
    g->bufs = NULL;
  }
  g->late_bytes = 0;
}

/* Room for `need` bytes in a late scan output's buffer (doubling, the bytes kept; the buffers
 * together within late_limit, as the arena they stand in for would be: a doubling past it takes
 * only what is needed). 0: out of memory, -1: past late_limit. */
static int late_room(loop_geom *g, late_buf *b, size_t need) {
  if (need <= b->cap) return 1;
  size_t cap = b->cap > 4096 ? b->cap : 4096;
  while (cap < need) {
    if (!q8rt_mul_size(cap, 2, &cap)) return 0;
  }
  const size_t others = g->late_bytes - b->cap;
  if (g->late_limit != 0) {
    if (need > g->late_limit || others > g->late_limit - need) return -1;
    if (cap > g->late_limit - others) cap = g->late_limit - others;
  }
  void *d = q8rt_alloc(g->allocator, cap, 64);
  if (d == NULL) return 0;
  if (b->cap > 0) memcpy(d, b->data, b->cap);
  q8rt_free(g->allocator, b->data, b->cap);
  b->data = d;
  b->cap = cap;
  g->late_bytes = others + cap;
  return 1;
}

/* The body's outputs at its bound shapes against what the Loop holds: the condition a bool of one
 * element, each carried value of its initial shape, each scan value of the shape its output was
 * sized for. */
static q8rt_status check_body_outputs(const loop_params *p, const loop_geom *g, const op_tensor *in,
                                      const op_tensor *out, int64_t iter, q8rt_error *err) {
  const op_shape *sh;
  char a[160], b[160];
  q8rt_session_output_data(g->sess, 0, &sh);
  int64_t count;
  if (sh->dtype != Q8RT_DTYPE_BOOL || sh->rank < 0 || !q8rt_shape_elements(sh->dims, sh->rank, &count) || count != 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "Loop node '%s', iteration %lld: the body's condition output is not one bool", p->name,
                     (long long)iter);
  }
  for (int k = 0; k < p->n_carried; k++) {
    if (p->fixed[2 + k]) continue;
    q8rt_session_output_data(g->sess, 1 + k, &sh);
    const op_shape *want = in[2 + k].shape;
    if (!op_shape_same(sh, want)) {
      op_shape_text(want, a, sizeof(a));
      op_shape_text(sh, b, sizeof(b));
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "Loop node '%s', iteration %lld: carried value %d changes shape from %s %s to %s %s (q8rt "
                       "needs carried values to keep their shape)",
                       p->name, (long long)iter, k, q8rt_dtype_name(want->dtype), a, q8rt_dtype_name(sh->dtype), b);
    }
  }
  for (int j = 0; j < p->n_scan; j++) {
    q8rt_session_output_data(g->sess, 1 + p->n_carried + j, &sh);
    const op_shape *o = out[p->n_carried + j].shape;
    int ok = sh->dtype == o->dtype && sh->rank + 1 == o->rank;
    for (int d = 0; ok && d < sh->rank; d++) ok = sh->dims[d] == o->dims[1 + d];
    if (!ok) {
      op_shape per = *o;
      per.rank = o->rank - 1;
      for (int d = 0; d < per.rank; d++) per.dims[d] = o->dims[1 + d];
      op_shape_text(&per, a, sizeof(a));
      op_shape_text(sh, b, sizeof(b));
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "Loop node '%s', iteration %lld: scan output %d is %s %s, the first iteration's was %s %s (q8rt "
                       "stacks scan values of one shape)",
                       p->name, (long long)iter, j, q8rt_dtype_name(sh->dtype), b, q8rt_dtype_name(o->dtype), a);
    }
  }
  return Q8RT_OK;
}

static q8rt_status loop_run(const void *params, void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                            const op_exec_ctx *ctx, q8rt_error *err) {
  const loop_params *p = params;
  loop_geom *g = geom;
  const int nc = p->n_carried, ns = p->n_scan;
  const int64_t m = in[0].data != NULL ? *(const int64_t *)in[0].data : INT64_MAX;
  const int has_cond = in[1].data != NULL;
  unsigned char c = has_cond ? *(const unsigned char *)in[1].data != 0 : 1;
  for (int k = 0; k < nc; k++) {
    const size_t bytes = shape_bytes(in[2 + k].shape);
    if (bytes > 0 && out[k].data != in[2 + k].data) memcpy(out[k].data, in[2 + k].data, bytes);
  }
  void *ext[LOOP_MAX];
  in_place_inputs(p, in, out, ext);
  const op_shape *inp[LOOP_MAX];
  for (int k = 0; k < p->n_inputs; k++) inp[k] = in[k].shape;
  const uint64_t cap = ctx->max_loop_iterations != 0 ? ctx->max_loop_iterations : Q8RT_DEFAULT_MAX_LOOP_ITERATIONS;
  q8rt_error be = {Q8RT_OK, ""};
  q8rt_status st;
  if (g->late) {
    if (ctx->publish == NULL || g->bufs == NULL) {
      return q8rt_fail(err, Q8RT_ERROR_STATE, "Loop node '%s': no session to take its scan outputs", p->name);
    }
    /* empty until this run has them all (a failed run leaves them so) */
    for (int j = 0; j < ns; j++) ctx->publish(ctx->session, out[nc + j].shape, NULL, 0);
  }
  /* this Loop's count, chained to those of the Loops whose bodies run it: an iteration counts for
   * each of them, so Loops nested in Loops cannot multiply the cap */
  op_loop_count count = {0, ctx->loop_count};
  op_exec_ctx body_ctx = *ctx;
  body_ctx.loop_count = &count;
  int64_t i = 0;
  for (; i < m && c; i++) {
    for (const op_loop_count *q = &count; q != NULL; q = q->up) {
      if (q->n >= cap) {
        return q8rt_fail(err, Q8RT_ERROR_LIMIT,
                         q == &count ? "Loop node '%s' would run more than %llu iterations (the session's "
                                       "max_loop_iterations)"
                                     : "Loop node '%s' would take the Loop it runs in past %llu iterations (the "
                                       "session's max_loop_iterations; iterations of nested Loops count for the "
                                       "Loops around them too)",
                         p->name, (unsigned long long)cap);
      }
    }
    for (op_loop_count *q = &count; q != NULL; q = q->up) q->n++;
    if (g->per_iteration && (st = bind_body(p, g->sess, inp, ext, (const void *const *)ext, i, c, 1, &be)) != Q8RT_OK) {
      return q8rt_fail(err, st, "Loop node '%s', iteration %lld: %s", p->name, (long long)i, be.message);
    }
    if ((g->per_iteration || i == 0) && (st = check_body_outputs(p, g, in, out, i, err)) != Q8RT_OK) return st;
    void *d = q8rt_session_input_data(g->sess, 0);
    if (d != NULL) memcpy(d, &i, sizeof(i));
    d = q8rt_session_input_data(g->sess, 1);
    if (d != NULL) memcpy(d, &c, 1);
    if ((st = q8rt_session_run_body(g->sess, &body_ctx, &be)) != Q8RT_OK) {
      return q8rt_fail(err, st, "Loop node '%s', iteration %lld: %s", p->name, (long long)i, be.message);
    }
    const op_shape *sh;
    const unsigned char *co = q8rt_session_output_data(g->sess, 0, &sh);
    const unsigned char next = co != NULL && *co != 0;
    /* scan values first: a scan output may be a carried value's input, rewritten below */
    for (int j = 0; j < ns; j++) {
      const void *src = q8rt_session_output_data(g->sess, 1 + nc + j, &sh);
      const size_t bytes = shape_bytes(sh);
      if (bytes == 0) continue;
      if (i >= g->scan_trip || src == NULL) {
        return q8rt_fail(err, Q8RT_ERROR_STATE, "Loop node '%s', iteration %lld: scan output %d has no room", p->name,
                         (long long)i, j);
      }
      char *dst = out[nc + j].data;
      if (g->late) {
        size_t need;
        const int room = q8rt_mul_size((size_t)i + 1, bytes, &need) ? late_room(g, &g->bufs[j], need) : 0;
        if (room < 0) {
          return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY,
                           "Loop node '%s', iteration %lld: its scan outputs would take more than %zu bytes (the "
                           "session's max_arena_bytes)",
                           p->name, (long long)i, g->late_limit);
        }
        if (room == 0) {
          return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY,
                           "Loop node '%s', iteration %lld: out of memory for scan output %d", p->name, (long long)i,
                           j);
        }
        dst = g->bufs[j].data;
      }
      memcpy(dst + (size_t)i * bytes, src, bytes);
    }
    size_t off = 0;
    for (int pass = p->stage ? 0 : 1; pass < 2; pass++) {
      off = 0;
      for (int k = 0; k < nc; k++) {
        if (p->fixed[2 + k]) continue;
        const void *src = q8rt_session_output_data(g->sess, 1 + k, &sh);
        const size_t bytes = shape_bytes(sh);
        if (bytes == 0) continue;
        if (src == NULL) {
          return q8rt_fail(err, Q8RT_ERROR_STATE, "Loop node '%s': the body's carried output %d has no data", p->name,
                           k);
        }
        if (pass == 0) { /* staged: the values swapped between carried inputs */
          memcpy((char *)workspace + off, src, bytes);
        } else if (p->stage) {
          memcpy(out[k].data, (const char *)workspace + off, bytes);
        } else if (src != out[k].data) {
          memcpy(out[k].data, src, bytes);
        }
        off += bytes;
      }
    }
    if (has_cond) c = next;
  }
  if (g->late) {
    for (int j = 0; j < ns; j++) ctx->publish(ctx->session, out[nc + j].shape, g->bufs[j].data, i);
    return Q8RT_OK;
  }
  if (ns > 0 && i < g->scan_trip) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "Loop node '%s' stopped after %lld of its %lld iterations (its condition): its scan outputs would "
                     "be shorter than M, a length q8rt needs when shapes are bound",
                     p->name, (long long)i, (long long)g->scan_trip);
  }
  return Q8RT_OK;
}

const op_def q8rt_op_loop = {.op_type = "Loop",
                             .domain = "",
                             .min_opset = 1,
                             .prepare = loop_prepare,
                             .infer = loop_infer,
                             .workspace = loop_workspace,
                             .bind = loop_bind,
                             .unbind = loop_unbind,
                             .check_limits = loop_check_limits,
                             .run_status = loop_run};
