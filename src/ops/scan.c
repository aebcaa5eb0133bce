/* Scan: the body (read by the loader into a graph of its own, ir_node.body, as a Loop's) is planned
 * at load as a model of its own and run once per position of the scan inputs in a body session that
 * borrows the parent session's thread pools (the Loop's mechanism, src/ops/loop.c).
 *
 * Inputs (opset 9 on): the N initial state values, the M scan inputs, then the outer values the body
 * reads (the loader's additions). Body inputs: the N states, one slice of each scan input (its scan
 * axis removed), the outer values. Body outputs: the N new states, the K scan values. Outputs: the N
 * final states, the K scan outputs (each iteration's value stacked along its scan_output_axes entry).
 * Attributes: num_scan_inputs, scan_input_axes / scan_input_directions (M each, default 0: axis 0,
 * forward), scan_output_axes / scan_output_directions (K each); negative axes count from the end
 * (opset 11 on; accepted at 9 too). A reverse input is read from its last position to its first, a
 * reverse output written from its last position to its first.
 * Opset 8's batch form: an input sequence_lens first (q8rt refuses it when present: every sequence
 * is then its full length), every state, scan input and output with a batch axis 0 and the scan
 * axis 1, the attribute `directions` for the scan inputs; each batch entry is scanned on its own.
 *
 * What q8rt asks of a Scan: every scan input has the same length along its scan axis (checked at
 * bind, naming the node); states keep their shape from one iteration to the next and every
 * iteration's scan values have one shape (checked after each bind of the body, as a Loop's); at
 * most max_loop_iterations iterations (length x batch, refused at bind; iterations count for the
 * Loops and Scans whose bodies run this one, as a nested Loop's do). The body is bound once (its
 * shapes from the slices' shapes) or, when that fails, before every iteration with the small inputs'
 * current values known to the bind. States live in the Scan's outputs: the body reads them there
 * in place and each iteration's new values are copied back after the body ran; each slice is
 * copied into the body's input before its run. */
#include <stdio.h>
#include <string.h>

#include "data_common.h"
#include "runtime/internal.h"

#define SCAN_MAX Q8RT_MAX_IO

typedef struct scan_params {
  const q8rt_model *body;
  const char *name; /* the node's (messages at run) */
  int off;          /* node inputs before the body's: 1 at opset 8 (sequence_lens), else 0 */
  int batch;        /* opset 8: a batch axis 0 on every state, scan input and output */
  int n_state, n_in, n_out, n_body;
  int64_t in_axis[SCAN_MAX], out_axis[SCAN_MAX];
  unsigned char in_rev[SCAN_MAX], out_rev[SCAN_MAX];
  /* a state's new value is another state's body input (a swap): staged in the workspace */
  int stage;
} scan_params;

typedef struct scan_geom {
  q8rt_session *sess; /* the body's session, from bind to unbind */
  int per_iteration;  /* bound before each iteration with the small inputs' values */
  int64_t len;        /* the scan inputs' length */
  int64_t batch;      /* batch entries (1 without opset 8's batch axis) */
  size_t state_bytes; /* one batch entry's states, all of them */
} scan_geom;

_Static_assert(sizeof(scan_geom) <= Q8RT_GEOM_BYTES, "scan_geom must fit a step's geometry");

static size_t shape_bytes(const op_shape *s) {
  int64_t n;
  if (s == NULL || s->rank < 0 || !q8rt_shape_elements(s->dims, s->rank, &n)) return 0;
  return (size_t)n * q8rt_dtype_size(s->dtype);
}

/* An ints attribute of `want` entries (absent: all `def`), each in [lo, hi] when lo <= hi. */
static q8rt_status read_ints(const ir_node *n, const char *attr, int want, int64_t def, int64_t lo, int64_t hi,
                             int64_t *out, q8rt_error *err) {
  const int64_t *v;
  size_t count;
  q8rt_status st = ir_attr_ints(n, attr, &v, &count, err);
  if (st != Q8RT_OK) return st;
  if (v == NULL) {
    for (int k = 0; k < want; k++) out[k] = def;
    return Q8RT_OK;
  }
  if (count != (size_t)want) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Scan node '%s': %s has %zu entries, not %d", n->name, attr, count,
                     want);
  }
  for (int k = 0; k < want; k++) {
    if (lo <= hi && (v[k] < lo || v[k] > hi)) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Scan node '%s': %s[%d] is %lld (%lld to %lld)", n->name, attr, k,
                       (long long)v[k], (long long)lo, (long long)hi);
    }
    out[k] = v[k];
  }
  return Q8RT_OK;
}

static q8rt_status scan_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  ir_node *n = (ir_node *)(uintptr_t)ctx->node; /* the body is taken from the node */
  ir_graph *bg = n->body;
  if (bg == NULL || ctx->submodels == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Scan node '%s' has no body as q8rt reads them", n->name);
  }
  const int off = n->opset <= 8 ? 1 : 0, nb = n->n_inputs - off, ns = n->loop_carried;
  int64_t m;
  q8rt_status st = ir_attr_int(n, "num_scan_inputs", -1, &m, err);
  if (st != Q8RT_OK) return st;
  if (ns < 0 || m < 1 || ns + m > nb || bg->n_inputs != nb || bg->n_outputs != n->n_outputs || n->n_outputs < ns ||
      nb > SCAN_MAX || n->n_outputs > SCAN_MAX) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Scan node '%s': its inputs and outputs do not match its body's",
                     n->name);
  }
  if (off && n->inputs[0] >= 0) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "Scan node '%s' (opset %d) has sequence_lens: q8rt runs opset 8's Scan only without it (every "
                     "sequence its full length)",
                     n->name, n->opset);
  }
  scan_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  char *reason = q8rt_pool_alloc(ctx->pool, 160, 1);
  if (p == NULL || reason == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  memset(p, 0, sizeof(*p));
  p->name = ctx->desc->name;
  p->off = off;
  p->batch = off;
  p->n_state = ns;
  p->n_in = (int)m;
  p->n_out = n->n_outputs - ns;
  p->n_body = nb;
  int64_t dir[SCAN_MAX];
  if (off) {
    if ((st = read_ints(n, "directions", p->n_in, 0, 0, 1, dir, err)) != Q8RT_OK) return st;
    for (int j = 0; j < p->n_in; j++) p->in_rev[j] = (unsigned char)dir[j];
  } else {
    if ((st = read_ints(n, "scan_input_axes", p->n_in, 0, 1, 0, p->in_axis, err)) != Q8RT_OK) return st;
    if ((st = read_ints(n, "scan_input_directions", p->n_in, 0, 0, 1, dir, err)) != Q8RT_OK) return st;
    for (int j = 0; j < p->n_in; j++) p->in_rev[j] = (unsigned char)dir[j];
    if ((st = read_ints(n, "scan_output_axes", p->n_out, 0, 1, 0, p->out_axis, err)) != Q8RT_OK) return st;
    if ((st = read_ints(n, "scan_output_directions", p->n_out, 0, 0, 1, dir, err)) != Q8RT_OK) return st;
    for (int k = 0; k < p->n_out; k++) p->out_rev[k] = (unsigned char)dir[k];
  }
  /* the body's inputs take the types (and, where the body leaves them open, the ranks) of what
   * they get: a state its value's (less the batch axis), a slice its scan input's less one axis */
  for (int k = 0; k < nb; k++) {
    ir_value *bv = &bg->values[bg->inputs[k]];
    const ir_value *ov = ir_node_input(ctx->graph, n, off + k);
    const int is_scan = k >= ns && k < ns + p->n_in;
    if (ov == NULL) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Scan node '%s': %s %d has no value", n->name,
                       is_scan ? "scan input" : "state", is_scan ? k - ns : k);
    }
    if (bv->dtype == Q8RT_DTYPE_UNDEFINED) {
      bv->dtype = ov->dtype;
      const int drop = (k < ns + p->n_in ? p->batch : 0) + is_scan;
      if (bv->rank < 0 && ov->rank >= drop) {
        bv->rank = ov->rank - drop;
        for (int d = 0; d < Q8RT_MAX_RANK; d++) {
          bv->dims[d] = is_scan || d >= bv->rank ? (d < bv->rank ? -1 : 0) : ov->dims[d + drop];
          bv->dim_params[d] = NULL;
        }
      }
    } else if (ov->dtype != Q8RT_DTYPE_UNDEFINED && ov->dtype != bv->dtype) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Scan node '%s': body input '%s' is %s, the value it gets is %s",
                       n->name, bv->name, q8rt_dtype_name(bv->dtype), q8rt_dtype_name(ov->dtype));
    }
  }
  n->body = NULL;
  q8rt_model *sub;
  q8rt_error be = {Q8RT_OK, ""};
  st = q8rt_model_from_graph(bg, ctx->pool->allocator, ctx->backend, ctx->isa, ctx->tables, &sub, &be);
  if (st != Q8RT_OK) return q8rt_fail(err, st, "Scan node '%s' body: %s", n->name, be.message);
  sub->next_sub = *ctx->submodels;
  *ctx->submodels = sub;
  const plan *bp = &sub->plan;
  if (bp->n_inputs != nb || bp->n_outputs != n->n_outputs) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Scan node '%s': its body's plan lost an input or output", n->name);
  }
  p->body = sub;
  for (int k = 0; k < ns; k++) {
    for (int k2 = 0; k2 < ns; k2++) p->stage |= k2 != k && bp->outputs[k] == bp->inputs[k2];
  }
  snprintf(reason, 160, "runs its body's plan (%d steps) per position of its %d scan inputs", bp->n_steps, p->n_in);
  ctx->kernel = "scan";
  ctx->reason = reason;
  *out = p;
  return Q8RT_OK;
}

/* A tensor of `rank` dims (past `skip` leading batch dims) viewed as [outer, dims[axis], inner]:
 * outer in elements, inner in bytes. */
static void split_at(const op_shape *s, int skip, int axis, size_t *outer, size_t *inner) {
  size_t o = 1, i = q8rt_dtype_size(s->dtype);
  for (int d = skip; d < skip + axis; d++) o *= (size_t)s->dims[d];
  for (int d = skip + axis + 1; d < s->rank; d++) i *= (size_t)s->dims[d];
  *outer = o;
  *inner = i;
}

/* The body's input shapes from the node's (in[k]: the node's input k, NULL where absent), the
 * scan length and the batch entries, each scan input's axis checked. */
static q8rt_status scan_layout(const scan_params *p, const op_node *n, const op_shape *const *in, op_shape *sh,
                               int64_t *len, int64_t *batch, int64_t *axes, q8rt_error *err) {
  const int b = p->batch;
  int64_t nbatch = 1, l = -1;
  for (int k = 0; k < p->n_body; k++) {
    const op_shape *s = in[p->off + k];
    if (s == NULL || s->rank < 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Scan node '%s': input %d has no shape", n->name, p->off + k);
    }
    sh[k] = *s;
    sh[k].value = NULL;
    if (k >= p->n_state + p->n_in) continue; /* an outer value: as it is */
    if (b) {
      if (s->rank < 1) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Scan node '%s': input %d has no batch axis (opset %d)", n->name,
                         p->off + k, n->opset);
      }
      if (k == 0) nbatch = s->dims[0];
      if (s->dims[0] != nbatch) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Scan node '%s': input %d has %lld batch entries, input %d has %lld",
                         n->name, p->off + k, (long long)s->dims[0], p->off, (long long)nbatch);
      }
      sh[k].rank--;
      memmove(sh[k].dims, sh[k].dims + 1, (size_t)sh[k].rank * sizeof(sh[k].dims[0]));
      sh[k].dims[sh[k].rank] = 0;
    }
    if (k < p->n_state) continue;
    const int j = k - p->n_state, r = sh[k].rank;
    const int64_t a = p->in_axis[j] < 0 ? p->in_axis[j] + r : p->in_axis[j];
    if (r < 1 || a < 0 || a >= r) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Scan node '%s': scan input %d has rank %d, its scan axis is %lld",
                       n->name, j, r + b, (long long)p->in_axis[j]);
    }
    const int64_t lj = sh[k].dims[a];
    if (l < 0) l = lj;
    if (lj != l) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "Scan node '%s': scan input %d has %lld positions along its scan axis, scan input 0 has %lld",
                       n->name, j, (long long)lj, (long long)l);
    }
    axes[j] = a;
    sh[k].rank--;
    memmove(sh[k].dims + a, sh[k].dims + a + 1, (size_t)(sh[k].rank - a) * sizeof(sh[k].dims[0]));
    sh[k].dims[sh[k].rank] = 0;
  }
  *len = l;
  *batch = nbatch;
  return Q8RT_OK;
}

static q8rt_status scan_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  const scan_params *p = params;
  const plan *bp = &p->body->plan;
  const int ns = p->n_state, nk = p->n_out;
  for (int k = 0; k < ns; k++) {
    const op_shape *c = &in[p->off + k];
    const q8rt_dtype bt = bp->values[bp->outputs[k]].shape.dtype;
    if (c->dtype != Q8RT_DTYPE_UNDEFINED && bt != Q8RT_DTYPE_UNDEFINED && bt != c->dtype) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Scan node '%s': state %d is %s, its body gives it back as %s",
                       n->name, k, q8rt_dtype_name(c->dtype), q8rt_dtype_name(bt));
    }
    out[k] = *c;
    out[k].value = NULL;
  }
  for (int k = 0; k < nk; k++) {
    const op_shape *b = &bp->values[bp->outputs[ns + k]].shape;
    op_shape *o = &out[ns + k];
    memset(o, 0, sizeof(*o));
    o->dtype = b->dtype;
    o->rank = b->rank < 0 ? -1 : b->rank + 1 + p->batch;
    for (int d = 0; d < o->rank && d < Q8RT_MAX_RANK; d++) o->dims[d] = -1;
    if (o->rank > Q8RT_MAX_RANK) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "Scan node '%s': scan output %d has rank %d (q8rt: up to %d)",
                       n->name, k, o->rank, Q8RT_MAX_RANK);
    }
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  scan_geom *g = geom;
  const op_shape *inp[SCAN_MAX];
  for (int k = 0; k < n->n_inputs; k++) inp[k] = n->inputs[k] >= 0 ? &in[k] : NULL;
  op_shape sh[SCAN_MAX];
  int64_t axes[SCAN_MAX];
  q8rt_status st = scan_layout(p, n, inp, sh, &g->len, &g->batch, axes, err);
  if (st != Q8RT_OK) return st;
  g->state_bytes = 0;
  for (int k = 0; k < ns; k++) {
    if ((st = data_check_movable(n, &in[p->off + k], "a state", err)) != Q8RT_OK) return st;
    g->state_bytes += shape_bytes(&sh[k]);
  }
  if (nk == 0) return Q8RT_OK;
  /* the scan values' shapes: the body bound for the slices' shapes */
  const op_exec_ctx one = {.threads = 1};
  q8rt_session *s;
  q8rt_error be = {Q8RT_OK, ""};
  if ((st = q8rt_session_create_body(p->body, NULL, &one, &s, &be)) != Q8RT_OK) {
    return q8rt_fail(err, st, "Scan node '%s' body: %s", n->name, be.message);
  }
  s->shapes_only = 1; /* shapes are all this bind is for: no arena */
  st = q8rt_session_bind_inputs(s, sh, NULL, &be);
  if (st != Q8RT_OK) {
    for (int k = 0; k < p->n_body; k++) {
      const int known = k < ns || k >= ns + p->n_in;
      sh[k].value =
          known && (!p->batch || k >= ns) && shape_bytes(&sh[k]) <= Q8RT_VALUE_BYTES ? in[p->off + k].value : NULL;
    }
    st = q8rt_session_bind_inputs(s, sh, NULL, &be);
  }
  if (st != Q8RT_OK) {
    q8rt_session_free(s);
    if (g->len == 0 || g->batch == 0) { /* no iteration: dims the body leaves open are 0 */
      for (int k = 0; k < nk; k++) {
        op_shape *o = &out[ns + k];
        for (int d = 0; d < o->rank; d++) o->dims[d] = d < p->batch ? g->batch : o->dims[d] < 0 ? 0 : o->dims[d];
      }
      return Q8RT_OK;
    }
    return q8rt_fail(err, st, "Scan node '%s' body: %s", n->name, be.message);
  }
  for (int k = 0; k < nk && st == Q8RT_OK; k++) {
    const op_shape *it = &s->shapes[p->body->plan.outputs[ns + k]];
    op_shape *o = &out[ns + k];
    const int r = it->rank;
    const int64_t a = p->out_axis[k] < 0 ? p->out_axis[k] + r + 1 : p->out_axis[k];
    if (r + 1 + p->batch > Q8RT_MAX_RANK) {
      st = q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "Scan node '%s': scan output %d has rank %d (q8rt: up to %d)",
                     n->name, k, r + 1 + p->batch, Q8RT_MAX_RANK);
      break;
    }
    if (a < 0 || a > r) {
      st = q8rt_fail(err, Q8RT_ERROR_SHAPE, "Scan node '%s': scan_output_axes[%d] is %lld; its values have rank %d",
                     n->name, k, (long long)p->out_axis[k], r);
      break;
    }
    o->rank = r + 1 + p->batch;
    if (p->batch) o->dims[0] = g->batch;
    int d = p->batch;
    for (int e = 0; e <= r; e++) o->dims[d++] = e == a ? g->len : it->dims[e < a ? e : e - 1];
  }
  q8rt_session_free(s);
  return st;
}

/* Before the arena is placed: a Scan of more iterations than max_loop_iterations is refused. */
static q8rt_status scan_check_limits(const void *params, const op_node *n, const void *geom, const op_exec_ctx *ctx,
                                     q8rt_error *err) {
  (void)params;
  const scan_geom *g = geom;
  const uint64_t cap = ctx->max_loop_iterations != 0 ? ctx->max_loop_iterations : Q8RT_DEFAULT_MAX_LOOP_ITERATIONS;
  const uint64_t it = (uint64_t)g->len * (uint64_t)g->batch; /* each below 2^31 (q8rt_shape_elements) */
  if (it > cap) {
    return q8rt_fail(err, Q8RT_ERROR_LIMIT,
                     "Scan node '%s' would run its body %llu times, more than %llu (the session's max_loop_iterations)",
                     n->name, (unsigned long long)it, (unsigned long long)cap);
  }
  return Q8RT_OK;
}

static size_t scan_workspace(const void *params, const void *geom, size_t threads) {
  (void)threads;
  const scan_params *p = params;
  return p->stage ? ((const scan_geom *)geom)->state_bytes : 0;
}

/* The node's input shapes (pointers) from its tensors. */
static void input_shapes(const scan_params *p, const op_tensor *in, const op_shape **inp) {
  for (int k = 0; k < p->off + p->n_body; k++) inp[k] = in[k].shape;
}

/* What the body reads in place for batch entry b: the states in the Scan's outputs, the outer
 * values where they are (slices are copied into the body's own inputs). */
static void in_place_inputs(const scan_params *p, const op_shape *sh, const op_tensor *in, const op_tensor *out,
                            int64_t b, void **ext) {
  for (int k = 0; k < p->n_body; k++) {
    if (k < p->n_state) {
      ext[k] = (char *)out[k].data + (size_t)b * shape_bytes(&sh[k]);
    } else {
      ext[k] = k < p->n_state + p->n_in ? NULL : in[p->off + k].data;
    }
  }
}

static q8rt_status scan_bind(const void *params, void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                             const op_exec_ctx *ctx, q8rt_error *err) {
  (void)workspace;
  const scan_params *p = params;
  scan_geom *g = geom;
  q8rt_error be = {Q8RT_OK, ""};
  q8rt_status st = q8rt_session_create_body(p->body, ctx->allocator, ctx, &g->sess, &be);
  if (st != Q8RT_OK) return q8rt_fail(err, st, "Scan node '%s' body: %s", p->name, be.message);
  const op_shape *inp[SCAN_MAX];
  input_shapes(p, in, inp);
  op_shape sh[SCAN_MAX];
  int64_t len, batch, axes[SCAN_MAX];
  op_node nn = {.name = p->name, .opset = p->batch ? 8 : 9};
  if ((st = scan_layout(p, &nn, inp, sh, &len, &batch, axes, err)) != Q8RT_OK) {
    /* a failed bind is not unbound: the body's session goes with it */
    q8rt_session_free(g->sess);
    g->sess = NULL;
    return st;
  }
  void *ext[SCAN_MAX];
  in_place_inputs(p, sh, in, out, 0, ext);
  /* shapes from the slices' shapes alone: one bind for every iteration; else one per iteration */
  g->per_iteration = q8rt_session_bind_inputs(g->sess, sh, ext, &be) != Q8RT_OK;
  return Q8RT_OK;
}

static void scan_unbind(const void *params, void *geom) {
  (void)params;
  scan_geom *g = geom;
  q8rt_session_free(g->sess);
  g->sess = NULL;
}

/* The body's outputs at its bound shapes: each state of its shape, each scan value of the shape
 * its output holds (the output's dims less the batch and scan axes). */
static q8rt_status check_body_outputs(const scan_params *p, const scan_geom *g, const op_shape *sh,
                                      const op_tensor *out, int64_t iter, q8rt_error *err) {
  const op_shape *bs;
  char a[160], b[160];
  for (int k = 0; k < p->n_state; k++) {
    q8rt_session_output_data(g->sess, k, &bs);
    if (!op_shape_same(bs, &sh[k])) {
      op_shape_text(&sh[k], a, sizeof(a));
      op_shape_text(bs, b, sizeof(b));
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "Scan node '%s', iteration %lld: state %d changes shape from %s %s to %s %s (q8rt needs states "
                       "to keep their shape)",
                       p->name, (long long)iter, k, q8rt_dtype_name(sh[k].dtype), a, q8rt_dtype_name(bs->dtype), b);
    }
  }
  for (int k = 0; k < p->n_out; k++) {
    q8rt_session_output_data(g->sess, p->n_state + k, &bs);
    const op_shape *o = out[p->n_state + k].shape;
    const int r = o->rank - 1 - p->batch;
    const int64_t ax = p->out_axis[k] < 0 ? p->out_axis[k] + r + 1 : p->out_axis[k];
    op_shape per = *o;
    per.rank = r;
    for (int d = 0, e = p->batch; d < r; e++) {
      if (e - p->batch != ax) per.dims[d++] = o->dims[e];
    }
    if (!op_shape_same(bs, &per)) {
      op_shape_text(&per, a, sizeof(a));
      op_shape_text(bs, b, sizeof(b));
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "Scan node '%s', iteration %lld: scan output %d is %s %s, the first iteration's was %s %s (q8rt "
                       "stacks scan values of one shape)",
                       p->name, (long long)iter, k, q8rt_dtype_name(bs->dtype), b, q8rt_dtype_name(per.dtype), a);
    }
  }
  return Q8RT_OK;
}

static q8rt_status scan_run(const void *params, void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                            const op_exec_ctx *ctx, q8rt_error *err) {
  const scan_params *p = params;
  scan_geom *g = geom;
  const int ns = p->n_state, nm = p->n_in, nk = p->n_out;
  for (int k = 0; k < ns; k++) {
    const size_t bytes = shape_bytes(in[p->off + k].shape);
    if (bytes > 0 && out[k].data != in[p->off + k].data) memcpy(out[k].data, in[p->off + k].data, bytes);
  }
  const op_shape *inp[SCAN_MAX];
  input_shapes(p, in, inp);
  op_shape sh[SCAN_MAX];
  int64_t len, batch, axes[SCAN_MAX];
  const op_node nn = {.name = p->name, .opset = p->batch ? 8 : 9};
  q8rt_status st = scan_layout(p, &nn, inp, sh, &len, &batch, axes, err);
  if (st != Q8RT_OK) return st;
  /* each scan input and output as [outer, len, inner] per batch entry */
  size_t in_outer[SCAN_MAX], in_inner[SCAN_MAX], out_outer[SCAN_MAX], out_inner[SCAN_MAX];
  for (int j = 0; j < nm; j++) split_at(in[p->off + ns + j].shape, p->batch, (int)axes[j], &in_outer[j], &in_inner[j]);
  for (int k = 0; k < nk; k++) {
    const op_shape *o = out[ns + k].shape;
    const int r = o->rank - 1 - p->batch;
    const int64_t a = p->out_axis[k] < 0 ? p->out_axis[k] + r + 1 : p->out_axis[k];
    split_at(o, p->batch, (int)a, &out_outer[k], &out_inner[k]);
  }
  const uint64_t cap = ctx->max_loop_iterations != 0 ? ctx->max_loop_iterations : Q8RT_DEFAULT_MAX_LOOP_ITERATIONS;
  q8rt_error be = {Q8RT_OK, ""};
  op_loop_count count = {0, ctx->loop_count};
  op_exec_ctx body_ctx = *ctx;
  body_ctx.loop_count = &count;
  /* small slices gathered for a bind that reads values (per_iteration) */
  unsigned char small[SCAN_MAX][Q8RT_VALUE_BYTES];
  const size_t L = (size_t)len;
  int64_t iter = 0;
  for (int64_t b = 0; b < batch; b++) {
    void *ext[SCAN_MAX];
    in_place_inputs(p, sh, in, out, b, ext);
    if (b > 0 && !g->per_iteration && (st = q8rt_session_bind_inputs(g->sess, sh, ext, &be)) != Q8RT_OK) {
      return q8rt_fail(err, st, "Scan node '%s', batch entry %lld: %s", p->name, (long long)b, be.message);
    }
    for (size_t t = 0; t < L; t++, iter++) {
      for (const op_loop_count *q = &count; q != NULL; q = q->up) {
        if (q->n >= cap) {
          return q8rt_fail(err, Q8RT_ERROR_LIMIT,
                           "Scan node '%s' would take the Loop it runs in past %llu iterations (the session's "
                           "max_loop_iterations; iterations of nested Loops and Scans count for the Loops around "
                           "them too)",
                           p->name, (unsigned long long)cap);
        }
      }
      for (op_loop_count *q = &count; q != NULL; q = q->up) q->n++;
      if (g->per_iteration) {
        const void *vals[SCAN_MAX];
        for (int k = 0; k < p->n_body; k++) {
          vals[k] = ext[k];
          sh[k].value = NULL;
        }
        for (int j = 0; j < nm; j++) {
          const int k = ns + j;
          if (shape_bytes(&sh[k]) > Q8RT_VALUE_BYTES) continue;
          const size_t pos = p->in_rev[j] ? L - 1 - t : t, inner = in_inner[j];
          const char *base = (const char *)in[p->off + k].data + (size_t)b * in_outer[j] * L * inner;
          for (size_t o = 0; o < in_outer[j]; o++) memcpy(small[j] + o * inner, base + (o * L + pos) * inner, inner);
          vals[k] = small[j];
        }
        for (int k = 0; k < p->n_body; k++) {
          sh[k].value = vals[k] != NULL && shape_bytes(&sh[k]) <= Q8RT_VALUE_BYTES ? vals[k] : NULL;
        }
        st = q8rt_session_bind_inputs(g->sess, sh, ext, &be);
        for (int k = 0; k < p->n_body; k++) sh[k].value = NULL;
        if (st != Q8RT_OK) {
          return q8rt_fail(err, st, "Scan node '%s', iteration %lld: %s", p->name, (long long)iter, be.message);
        }
      }
      if ((g->per_iteration || iter == 0) && (st = check_body_outputs(p, g, sh, out, iter, err)) != Q8RT_OK) {
        return st;
      }
      for (int j = 0; j < nm; j++) {
        char *dst = q8rt_session_input_data(g->sess, ns + j);
        const size_t pos = p->in_rev[j] ? L - 1 - t : t, inner = in_inner[j];
        const char *base = (const char *)in[p->off + ns + j].data + (size_t)b * in_outer[j] * L * inner;
        if (dst == NULL || inner == 0) continue;
        for (size_t o = 0; o < in_outer[j]; o++) memcpy(dst + o * inner, base + (o * L + pos) * inner, inner);
      }
      if ((st = q8rt_session_run_body(g->sess, &body_ctx, &be)) != Q8RT_OK) {
        return q8rt_fail(err, st, "Scan node '%s', iteration %lld: %s", p->name, (long long)iter, be.message);
      }
      const op_shape *bs;
      /* scan values first: a scan value may be a state's body input, rewritten below */
      for (int k = 0; k < nk; k++) {
        const char *src = q8rt_session_output_data(g->sess, ns + k, &bs);
        const size_t inner = out_inner[k], pos = p->out_rev[k] ? L - 1 - t : t;
        if (inner == 0 || out_outer[k] == 0) continue;
        if (src == NULL) {
          return q8rt_fail(err, Q8RT_ERROR_STATE, "Scan node '%s': the body's scan output %d has no data", p->name, k);
        }
        char *base = (char *)out[ns + k].data + (size_t)b * out_outer[k] * L * inner;
        for (size_t o = 0; o < out_outer[k]; o++) memcpy(base + (o * L + pos) * inner, src + o * inner, inner);
      }
      for (int pass = p->stage ? 0 : 1; pass < 2; pass++) {
        size_t off = 0;
        for (int k = 0; k < ns; k++) {
          const void *src = q8rt_session_output_data(g->sess, k, &bs);
          const size_t bytes = shape_bytes(bs);
          if (bytes == 0) continue;
          if (src == NULL) {
            return q8rt_fail(err, Q8RT_ERROR_STATE, "Scan node '%s': the body's state output %d has no data", p->name,
                             k);
          }
          if (pass == 0) { /* staged: the values swapped between states */
            memcpy((char *)workspace + off, src, bytes);
          } else if (p->stage) {
            memcpy(ext[k], (const char *)workspace + off, bytes);
          } else if (src != ext[k]) {
            memcpy(ext[k], src, bytes);
          }
          off += bytes;
        }
      }
    }
  }
  return Q8RT_OK;
}

const op_def q8rt_op_scan = {.op_type = "Scan",
                             .domain = "",
                             .min_opset = 8,
                             .prepare = scan_prepare,
                             .infer = scan_infer,
                             .workspace = scan_workspace,
                             .bind = scan_bind,
                             .unbind = scan_unbind,
                             .check_limits = scan_check_limits,
                             .run_status = scan_run};
