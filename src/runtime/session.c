/* Sessions: bind concrete shapes, plan the arena, run the plan.
 *
 * Lifetimes for the arena planner (plan/arena.c): every non-constant value lives from the step
 * that produces it to the last step that reads it; graph inputs and outputs live through the
 * whole run. */
#include <string.h>
#include <time.h>

#include "internal.h"
#include "plan/arena.h"

void q8rt_session_options_init(q8rt_session_options *o) {
  if (o == NULL) return;
  memset(o, 0, sizeof(*o));
  o->size = sizeof(*o);
  o->threads = 1;
}

static size_t n_values(const q8rt_session *s) { return (size_t)s->model->plan.n_values; }
static size_t n_blocks(const q8rt_session *s) { return n_values(s) + (size_t)s->model->plan.n_steps; }

static void free_arena(q8rt_session *s) {
  if (!s->arena_external) q8rt_free(s->allocator, s->arena, s->arena_capacity);
  s->arena = NULL;
  s->arena_capacity = 0;
  s->arena_external = 0;
}

/* Release what the ops' bind hooks created (XNNPACK operators, ...). */
static void unbind_steps(q8rt_session *s) {
  const plan *p = &s->model->plan;
  for (int i = 0; i < p->n_steps; i++) {
    if (s->steps[i].bound && p->steps[i].op->unbind != NULL)
      p->steps[i].op->unbind(p->steps[i].params, s->steps[i].geom);
    s->steps[i].bound = 0;
  }
}

/* A message kept for a branch that could not bind: few, so one allocation each. */
struct bind_error {
  q8rt_error e;
  struct bind_error *next;
};

static void free_bind_errors(q8rt_session *s) {
  while (s->bind_errors != NULL) {
    struct bind_error *next = s->bind_errors->next;
    q8rt_free(s->allocator, s->bind_errors, sizeof(*s->bind_errors));
    s->bind_errors = next;
  }
}

static q8rt_status keep_bind_error(q8rt_session *s, int id, const q8rt_error *e, q8rt_error *err) {
  struct bind_error *b = q8rt_alloc(s->allocator, sizeof(*b), 16);
  if (b == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory binding the session");
  b->e = *e;
  b->next = s->bind_errors;
  s->bind_errors = b;
  s->gerr[id] = &b->e;
  return Q8RT_OK;
}

void q8rt_session_free(q8rt_session *s) {
  if (s == NULL) return;
  const q8rt_allocator *a = s->allocator;
  const size_t nv = n_values(s);
  const size_t nb = n_blocks(s);
  const size_t ns = (size_t)s->model->plan.n_steps;
  if (s->steps != NULL) unbind_steps(s);
  free_arena(s);
  if (s->body) { /* borrowed from the parent session */
    s->threadpool = NULL;
    s->pool = NULL;
  }
  q8rt_free(a, s->ext, (nv + 1) * sizeof(void *));
  if (s->threadpool != NULL) pthreadpool_destroy(s->threadpool);
  q8rt_threadpool_destroy(s->pool);
  q8rt_free(a, s->shapes, nv * sizeof(op_shape));
  q8rt_free(a, s->offsets, nv * sizeof(size_t));
  q8rt_free(a, s->nbytes, nv * sizeof(size_t));
  q8rt_free(a, s->in_place, nv * sizeof(int));
  q8rt_free(a, s->in_place_off, nv * sizeof(size_t));
  q8rt_free(a, s->live_tmp, nb * 4 * sizeof(int));
  q8rt_free(a, s->valbuf, nv * Q8RT_VALUE_BYTES);
  q8rt_free(a, s->block_size, nb * sizeof(size_t));
  q8rt_free(a, s->block_off, nb * sizeof(size_t));
  q8rt_free(a, s->memo_size, nb * sizeof(size_t));
  q8rt_free(a, s->memo_live, nb * 2 * sizeof(int));
  q8rt_free(a, s->steps, (ns + 1) * sizeof(session_step));
  q8rt_free(a, s->views, ((size_t)s->n_views + 1) * sizeof(op_tensor));
  q8rt_free(a, s->step_ms, (ns + 1) * sizeof(double));
  q8rt_free(a, s->step_threads, (ns + 1) * sizeof(q8rt_step_threads));
  q8rt_free(a, s->gstate, (size_t)s->model->plan.n_guards + 1);
  q8rt_free(a, s->gerr, ((size_t)s->model->plan.n_guards + 1) * sizeof(*s->gerr));
  free_bind_errors(s);
  const q8rt_allocator under = s->meter.under;
  q8rt_free(&under, s, sizeof(*s));
}

/* A graph output whose length a step learns only as it runs (a Loop's scan output): the step's
 * buffer and the shape it found, read by q8rt_session_get_output until the next bind or run. */
static void publish_output(void *session, const op_shape *at, void *data, int64_t dim0) {
  q8rt_session *s = session;
  const ptrdiff_t v = at - s->shapes;
  if (v < 0 || v >= s->model->plan.n_values) return;
  op_shape *sh = &s->shapes[v];
  sh->dims[0] = dim0;
  int64_t n;
  s->nbytes[v] = q8rt_shape_elements(sh->dims, sh->rank, &n) ? (size_t)n * q8rt_dtype_size(sh->dtype) : 0;
  s->ext[v] = data;
}

static op_exec_ctx exec_ctx(const q8rt_session *s) {
  op_exec_ctx ctx = {.pool = s->pool,
                     .threadpool = s->threadpool,
                     .threads = (size_t)s->threads,
                     .allocator = s->allocator,
                     .max_loop_iterations = s->max_loop_iterations,
                     .session = s->body ? NULL : (void *)(uintptr_t)s,
                     .publish = s->body ? NULL : publish_output,
                     .max_arena_bytes = s->max_arena_bytes,
                     .loop_count = s->loop_count};
  return ctx;
}

/* Shape arithmetic: when a step's inputs are all known by value (constants, or small values
 * computed here), or the op reads only shapes (Shape), and its outputs are small, run it now so
 * that later steps' infer sees the values (a Reshape whose target shape is computed from Shape ->
 * Gather -> Concat). The step still runs at run time; this is only the bind-time copy. */
static void eval_small_values(q8rt_session *s, int i) {
  const plan_step *ps = &s->model->plan.steps[i];
  if (ps->op->bind != NULL || s->steps[i].workspace_bytes != 0 || ps->n_outputs == 0) return;
  op_tensor in[Q8RT_MAX_IO], out[Q8RT_MAX_IO];
  for (int k = 0; k < ps->n_inputs; k++) {
    const int v = ps->inputs[k];
    in[k].data = NULL;
    in[k].shape = v >= 0 ? &s->shapes[v] : NULL;
    if (v < 0) continue;
    if (s->shapes[v].value == NULL && !ps->op->shape_only) return;
    in[k].data = (void *)(uintptr_t)s->shapes[v].value;
  }
  for (int k = 0; k < ps->n_outputs; k++) {
    const int v = ps->outputs[k];
    out[k].data = NULL;
    out[k].shape = v >= 0 ? &s->shapes[v] : NULL;
    if (v < 0) continue;
    const op_shape *sh = &s->shapes[v];
    int64_t n;
    if (sh->rank < 0 || !q8rt_shape_elements(sh->dims, sh->rank, &n) ||
        (size_t)n * q8rt_dtype_size(sh->dtype) > Q8RT_VALUE_BYTES || q8rt_dtype_size(sh->dtype) == 0) {
      return;
    }
    out[k].data = s->valbuf + (size_t)v * Q8RT_VALUE_BYTES;
  }
  const op_exec_ctx ctx = {.threads = 1,
                           .allocator = s->allocator,
                           .max_loop_iterations = s->max_loop_iterations,
                           .max_arena_bytes = s->max_arena_bytes,
                           .loop_count = s->loop_count};
  ps->op->run(ps->params, s->steps[i].geom, in, out, NULL, &ctx);
  for (int k = 0; k < ps->n_outputs; k++) {
    if (ps->outputs[k] >= 0) s->shapes[ps->outputs[k]].value = out[k].data;
  }
}

/* An If branch at the bound shapes: LIVE (runs), DEAD (cannot run: a condition known now rules
 * it out, or an enclosing branch cannot run or bind), RUN (its conditions are read at run time),
 * BROKEN (could not be planned or bound: an error if taken at run). 0: not yet known. */
enum { GUARD_LIVE = 1, GUARD_RUN = 2, GUARD_DEAD = 3, GUARD_BROKEN = 4 };

static q8rt_status guard_state(q8rt_session *s, int id, int *state, q8rt_error *err) {
  if (id == 0) {
    *state = GUARD_LIVE;
    return Q8RT_OK;
  }
  if (s->gstate[id] == 0) {
    const plan_guard *gd = &s->model->plan.guards[id - 1];
    int p;
    q8rt_status st = guard_state(s, gd->parent, &p, err); /* depth <= IR_MAX_SUBGRAPH_DEPTH */
    if (st != Q8RT_OK) return st;
    /* a condition known now: one element (any other count fails the If's own check) */
    const op_shape *cs = &s->shapes[gd->cond];
    int64_t cn;
    const unsigned char *c =
        cs->value != NULL && cs->rank >= 0 && q8rt_shape_elements(cs->dims, cs->rank, &cn) && cn == 1 ? cs->value
                                                                                                      : NULL;
    int r = p == GUARD_DEAD || p == GUARD_BROKEN ? GUARD_DEAD
            : c == NULL                          ? GUARD_RUN
            : (*c != 0) == gd->side              ? p
                                                 : GUARD_DEAD;
    const q8rt_error *planned = s->model->plan.guard_errors[id];
    if (r != GUARD_DEAD && planned != NULL) {
      if (r == GUARD_LIVE) return q8rt_fail(err, planned->status, "%s", planned->message);
      s->gerr[id] = planned;
      r = GUARD_BROKEN;
    }
    s->gstate[id] = (unsigned char)r;
  }
  *state = s->gstate[id];
  return Q8RT_OK;
}

static void set_unavailable(op_shape *sh) {
  memset(sh, 0, sizeof(*sh));
  sh->rank = -1;
}

/* Infer every step's output shapes from the bound input shapes, fill the step geometry and ask
 * each step for its workspace size. Steps of If branches that cannot run are skipped; a branch
 * decided at run that fails here keeps its error for the run that takes it. */
static q8rt_status infer_all(q8rt_session *s, q8rt_error *err) {
  const q8rt_model *m = s->model;
  op_shape in_shapes[Q8RT_MAX_IO], out_shapes[Q8RT_MAX_IO];
  memset(s->gstate, 0, (size_t)m->plan.n_guards + 1);
  free_bind_errors(s);
  for (int i = 0; i < m->plan.n_steps; i++) {
    const plan_step *ps = &m->plan.steps[i];
    session_step *ss = &s->steps[i];
    int state;
    q8rt_status st = guard_state(s, ps->guard, &state, err);
    if (st != Q8RT_OK) return st;
    ss->skip = state == GUARD_DEAD || state == GUARD_BROKEN;
    ss->check = state == GUARD_RUN;
    ss->workspace_bytes = 0;
    if (ss->skip) {
      for (int k = 0; k < ps->n_outputs; k++) {
        if (ps->outputs[k] >= 0) set_unavailable(&s->shapes[ps->outputs[k]]);
      }
      continue;
    }
    for (int k = 0; k < ps->n_inputs; k++) {
      if (ps->inputs[k] >= 0) {
        in_shapes[k] = s->shapes[ps->inputs[k]];
      } else {
        memset(&in_shapes[k], 0, sizeof(in_shapes[k]));
        in_shapes[k].rank = -1;
      }
    }
    const int if_guard = ps->node->if_guard;
    if (if_guard > 0 && ps->n_inputs == 1 + 2 * ps->n_outputs && !ss->skip) {
      int unavailable = 0, broken = 0;
      for (int side = 0; side < 2; side++) {
        int bs;
        if ((st = guard_state(s, if_guard + side, &bs, err)) != Q8RT_OK) return st;
        if (bs != GUARD_DEAD && bs != GUARD_BROKEN) continue;
        unavailable++;
        if (bs == GUARD_BROKEN) broken = if_guard + side;
        for (int k = 0; k < ps->n_outputs; k++) set_unavailable(&in_shapes[1 + side * ps->n_outputs + k]);
      }
      /* neither branch can run at these shapes: the If fails as a taken branch would */
      if (unavailable == 2 && broken > 0) {
        if (state != GUARD_RUN) return q8rt_fail(err, s->gerr[broken]->status, "%s", s->gerr[broken]->message);
        s->gstate[ps->guard] = GUARD_BROKEN;
        s->gerr[ps->guard] = s->gerr[broken];
        ss->skip = 1;
        ss->check = 0;
        for (int k = 0; k < ps->n_outputs; k++) {
          if (ps->outputs[k] >= 0) set_unavailable(&s->shapes[ps->outputs[k]]);
        }
        continue;
      }
    }
    memset(out_shapes, 0, sizeof(out_shapes));
    memset(ss->geom, 0, sizeof(ss->geom));
    q8rt_error step_err = {Q8RT_OK, ""};
    st = ps->op->infer(ps->params, ps->node, in_shapes, out_shapes, 1, ss->geom, &step_err);
    if (st == Q8RT_OK && ps->op->check_limits != NULL) {
      const op_exec_ctx lctx = exec_ctx(s);
      st = ps->op->check_limits(ps->params, ps->node, ss->geom, &lctx, &step_err);
    }
    /* every tensor's dims, zeros aside, multiply to at most Q8RT_MAX_ELEMENTS (q8rt_shape_elements), so
     * that the ops reading it can compute its strides: an empty output's other dims too */
    for (int k = 0; st == Q8RT_OK && k < ps->n_outputs; k++) {
      const op_shape *o = &out_shapes[k];
      int known = ps->outputs[k] >= 0 && o->rank >= 0;
      for (int d = 0; known && d < o->rank; d++) known = o->dims[d] >= 0;
      int64_t count;
      if (known && !q8rt_shape_elements(o->dims, o->rank, &count)) {
        st =
            q8rt_fail(&step_err, Q8RT_ERROR_SHAPE, "%s node '%s': output %d is too large (its dims multiply past %lld)",
                      ps->node->op_type, ps->node->name, k, (long long)Q8RT_MAX_ELEMENTS);
      }
    }
    if (st != Q8RT_OK) {
      if (state != GUARD_RUN) {
        if (err != NULL) *err = step_err;
        return st;
      }
      s->gstate[ps->guard] = GUARD_BROKEN;
      if ((st = keep_bind_error(s, ps->guard, &step_err, err)) != Q8RT_OK) return st;
      ss->skip = 1;
      ss->check = 0;
      for (int k = 0; k < ps->n_outputs; k++) {
        if (ps->outputs[k] >= 0) set_unavailable(&s->shapes[ps->outputs[k]]);
      }
      continue;
    }
    for (int k = 0; k < ps->n_outputs; k++) {
      if (ps->outputs[k] >= 0) s->shapes[ps->outputs[k]] = out_shapes[k];
    }
    ss->workspace_bytes = ps->op->workspace != NULL ? ps->op->workspace(ps->params, ss->geom, (size_t)s->threads) : 0;
    eval_small_values(s, i);
  }
  return Q8RT_OK;
}

/* A copy onto itself: a value x whose only reader is a step that copies it whole into its output y
 * (op same_bytes_output at the bound geometry: Reshape, Flatten, Squeeze, Unsqueeze, Identity, a
 * layout view that moves no byte) lives in y's buffer: x's writer writes it there and the copy,
 * finding one buffer, does nothing (CRNN's Reshape of its classifier's 29 x 8210 output was a
 * serial 0.02 ms copy). The same bytes: y held a copy of x's bytes, now it holds x's bytes. Taken
 * only where nothing else can see the difference: x and y are no graph input or output, constant
 * or branch condition, x is read once (by that step) and written once (by an earlier step), y is
 * written only by the copy, all outside If branches and bound, both the same number of bytes, and
 * neither is in place in a Concat nor hosts a value in place (no chains: a Reshape of a Reshape
 * keeps its second copy). readers and writer as plan_in_place counts them; hosts: nv ints of
 * scratch. */
static void plan_alias(q8rt_session *s, const int *readers, const int *writer, int *hosts) {
  const plan *p = &s->model->plan;
  const int nv = p->n_values, ns = p->n_steps;
  for (int v = 0; v < nv; v++) hosts[v] = 0;
  for (int v = 0; v < nv; v++) {
    if (s->in_place[v] >= 0) hosts[s->in_place[v]] = 1;
  }
  for (int c = 0; c < ns; c++) {
    const plan_step *pc = &p->steps[c];
    session_step *sc = &s->steps[c];
    if (pc->op->same_bytes_output == NULL || sc->skip || pc->guard != 0 || pc->n_inputs < 1 || pc->n_outputs < 1)
      continue;
    const int x = pc->inputs[0], y = pc->outputs[0];
    if (x < 0 || y < 0 || x == y || readers[x] != 1 || writer[x] < 0 || writer[x] >= c || writer[y] != c) continue;
    const plan_value *px = &p->values[x], *py = &p->values[y];
    if (px->constant || px->graph_input >= 0 || px->graph_output >= 0 || py->constant || py->graph_input >= 0 ||
        py->graph_output >= 0)
      continue;
    if (s->in_place[x] >= 0 || s->in_place[y] >= 0 || hosts[x] || hosts[y]) continue;
    if (s->steps[writer[x]].skip || p->steps[writer[x]].guard != 0) continue;
    const op_shape *xs = &s->shapes[x], *ys = &s->shapes[y];
    int64_t nx, ny;
    if (xs->rank < 0 || ys->rank < 0 || !q8rt_shape_elements(xs->dims, xs->rank, &nx) ||
        !q8rt_shape_elements(ys->dims, ys->rank, &ny) || nx <= 0 || nx != ny || xs->dtype != ys->dtype ||
        q8rt_dtype_size(xs->dtype) == 0)
      continue;
    if (!pc->op->same_bytes_output(pc->params, sc->geom)) continue;
    s->in_place[x] = y;
    s->in_place_off[x] = 0;
    hosts[y] = 1;
  }
}

/* Concat in place: a value whose only reader is a Concat-like step (op in_place_input) and whose
 * only writer is a step that can write its output with a row stride (op strided_output) lives in
 * its slice of the Concat's output; the producer writes it there and the Concat skips it, saving
 * the copy. Taken only where it is provably the same bytes: the value is no graph input or output
 * and no branch condition, read once (by that Concat input) and written once (as the only output
 * of an earlier step), both steps outside If branches and bound (not skipped), concrete shapes
 * with no empty axis, the same element type, a copy in the Concat (no requantization) and a slice
 * that lies inside the output. Anything else keeps its own block and the copy. The live_tmp
 * scratch holds the reader counts and writers (plan_arena overwrites it next). */
static void plan_in_place(q8rt_session *s) {
  const plan *p = &s->model->plan;
  const int nv = p->n_values, ns = p->n_steps;
  int *readers = s->live_tmp, *writer = s->live_tmp + nv;
  for (int v = 0; v < nv; v++) {
    readers[v] = 0;
    writer[v] = -1;
    s->in_place[v] = -1;
    s->in_place_off[v] = 0;
  }
  for (int i = 0; i < ns; i++) {
    const plan_step *ps = &p->steps[i];
    for (int k = 0; k < ps->n_inputs; k++) {
      if (ps->inputs[k] >= 0) readers[ps->inputs[k]]++;
    }
    for (int k = 0; k < ps->n_outputs; k++) {
      const int v = ps->outputs[k];
      if (v >= 0) writer[v] = writer[v] == -1 ? i : -2;
    }
  }
  for (int id = 0; id < p->n_guards; id++) {
    if (p->guards[id].cond >= 0 && p->guards[id].cond < nv) readers[p->guards[id].cond] += 2;
  }
  for (int c = 0; c < ns; c++) {
    const plan_step *pc = &p->steps[c];
    session_step *sc = &s->steps[c];
    if (pc->op->in_place_input == NULL || sc->skip || pc->guard != 0 || pc->n_outputs < 1) continue;
    const int o = pc->outputs[0];
    if (o < 0 || p->values[o].constant || p->values[o].graph_input >= 0 || s->in_place[o] >= 0) continue;
    const op_shape *os = &s->shapes[o];
    int64_t o_elems;
    if (os->rank < 0 || !q8rt_shape_elements(os->dims, os->rank, &o_elems) || o_elems <= 0) continue;
    const size_t esize = q8rt_dtype_size(os->dtype);
    for (int k = 0; k < pc->n_inputs; k++) {
      const int v = pc->inputs[k];
      if (v < 0 || v == o || readers[v] != 1 || writer[v] < 0 || writer[v] >= c) continue;
      const plan_value *pv = &p->values[v];
      if (pv->constant || pv->graph_input >= 0 || pv->graph_output >= 0) continue;
      const plan_step *pw = &p->steps[writer[v]];
      session_step *sw = &s->steps[writer[v]];
      /* a producer that hosts slices itself (a Concat) stays out: no nesting */
      if (pw->op->strided_output == NULL || pw->op->in_place_input != NULL || sw->skip || pw->guard != 0 ||
          pw->n_outputs != 1 || pw->outputs[0] != v)
        continue;
      const op_shape *vs = &s->shapes[v];
      int64_t v_elems;
      if (vs->rank < 1 || vs->dtype != os->dtype || esize == 0 || !q8rt_shape_elements(vs->dims, vs->rank, &v_elems) ||
          v_elems <= 0)
        continue;
      size_t off, len, stride;
      if (!pc->op->in_place_input(pc->params, sc->geom, k, 0, &off, &len, &stride)) continue;
      const size_t last = (size_t)vs->dims[vs->rank - 1];
      if (len == 0 || (size_t)v_elems % len != 0 || stride < len) continue;
      const size_t rows = (size_t)v_elems / len;
      size_t row_stride, end;
      if (len == last) {
        row_stride = stride; /* the value's rows are the slice's rows */
      } else if (rows == 1) {
        row_stride = last; /* one contiguous block: the value stays dense */
      } else {
        continue;
      }
      if (!q8rt_mul_size(rows - 1, stride, &end) || !q8rt_add_size(end, off, &end) || !q8rt_add_size(end, len, &end) ||
          end > (size_t)o_elems)
        continue;
      if (!pw->op->strided_output(pw->params, sw->geom, row_stride)) continue;
      /* the producer may now need scratch to stage its rows */
      sw->workspace_bytes = pw->op->workspace != NULL ? pw->op->workspace(pw->params, sw->geom, (size_t)s->threads) : 0;
      pc->op->in_place_input(pc->params, sc->geom, k, 1, &off, &len, &stride);
      s->in_place[v] = o;
      s->in_place_off[v] = off * esize;
    }
  }
  plan_alias(s, readers, writer, s->live_tmp + 2 * nv);
}

/* Greedy-by-size placement of blocks: every value that some step or the caller writes, and every
 * step's workspace. Returns the arena size in *total. */
static q8rt_status plan_arena(q8rt_session *s, size_t *total, q8rt_error *err) {
  const q8rt_model *m = s->model;
  const plan *p = &m->plan;
  const int nv = p->n_values, ns = p->n_steps, nb = nv + ns;
  int *first = s->live_tmp, *last = s->live_tmp + nb, *order = s->live_tmp + 2 * nb;
  for (int v = 0; v < nb; v++) first[v] = last[v] = ARENA_UNUSED;
  for (int v = 0; v < nv; v++) {
    const plan_value *val = &p->values[v];
    s->offsets[v] = SIZE_MAX;
    s->nbytes[v] = val->const_bytes;
    if (val->graph_input >= 0 && !val->constant) first[v] = -1;
  }
  for (int i = 0; i < ns; i++) {
    const plan_step *ps = &m->plan.steps[i];
    if (s->steps[i].skip) continue;
    for (int k = 0; k < ps->n_outputs; k++) {
      const int v = ps->outputs[k];
      if (v >= 0 && first[v] == ARENA_UNUSED) first[v] = last[v] = i;
    }
    for (int k = 0; k < ps->n_inputs; k++) {
      const int v = ps->inputs[k];
      if (v >= 0 && first[v] != ARENA_UNUSED && last[v] < i) last[v] = i;
    }
    /* a branch decided at run reads its conditions before each of its steps */
    for (int id = s->steps[i].check ? ps->guard : 0; id > 0; id = p->guards[id - 1].parent) {
      const int v = p->guards[id - 1].cond;
      if (first[v] != ARENA_UNUSED && last[v] < i) last[v] = i;
    }
    if (s->steps[i].workspace_bytes > 0) {
      /* Workspaces hold what bind builds (indirection buffers) as well as scratch, so they live
       * through the whole run. */
      first[nv + i] = -1;
      last[nv + i] = ns;
      s->block_size[nv + i] = s->steps[i].workspace_bytes;
    }
  }
  /* Graph outputs are read after the run; graph inputs must survive it so that a run can be
   * repeated on the same inputs. Both stay reserved to the end. */
  for (int i = 0; i < p->n_outputs; i++) {
    if (first[p->outputs[i]] != ARENA_UNUSED) last[p->outputs[i]] = ns;
  }
  for (int i = 0; i < p->n_inputs; i++) {
    if (first[p->inputs[i]] != ARENA_UNUSED) last[p->inputs[i]] = ns;
  }
  for (int v = 0; v < nv; v++) {
    if (first[v] == ARENA_UNUSED) continue;
    const op_shape *sh = &s->shapes[v];
    int64_t elems;
    size_t bytes;
    if (sh->rank < 0 || !q8rt_shape_elements(sh->dims, sh->rank, &elems) ||
        !q8rt_mul_size((size_t)elems, q8rt_dtype_size(sh->dtype), &bytes)) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "tensor '%s' has no concrete shape or is too large", p->values[v].name);
    }
    s->nbytes[v] = bytes;
    s->block_size[v] = bytes;
  }
  /* a value in place in a Concat's output has no block of its own: the output's block lives from
   * the value's producer on */
  for (int v = 0; v < nv; v++) {
    const int o = s->in_place[v];
    if (o < 0 || first[v] == ARENA_UNUSED) continue;
    if (first[o] == ARENA_UNUSED || first[v] < first[o]) first[o] = first[v];
    first[v] = last[v] = ARENA_UNUSED;
  }
  /* the same blocks as the last placement: the same offsets (arena_place is a function of these) */
  int same = s->memo_valid && memcmp(s->memo_live, first, (size_t)nb * sizeof(int)) == 0 &&
             memcmp(s->memo_live + nb, last, (size_t)nb * sizeof(int)) == 0;
  for (int b = 0; same && b < nb; b++) same = first[b] == ARENA_UNUSED || s->memo_size[b] == s->block_size[b];
  if (same) {
    *total = s->memo_total;
  } else {
    s->memo_valid = 0;
    if (!arena_place(nb, s->block_size, first, last, s->block_off, order, total)) {
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "the tensors' sizes add up to more than the address space");
    }
    memcpy(s->memo_live, first, (size_t)nb * sizeof(int));
    memcpy(s->memo_live + nb, last, (size_t)nb * sizeof(int));
    memcpy(s->memo_size, s->block_size, (size_t)nb * sizeof(size_t));
    s->memo_total = *total;
    s->memo_valid = 1;
  }
  for (int v = 0; v < nv; v++) s->offsets[v] = first[v] != ARENA_UNUSED ? s->block_off[v] : SIZE_MAX;
  for (int v = 0; v < nv; v++) {
    if (s->in_place[v] >= 0) s->offsets[v] = s->offsets[s->in_place[v]] + s->in_place_off[v];
  }
  for (int i = 0; i < ns; i++) {
    if (first[nv + i] != ARENA_UNUSED) s->steps[i].workspace_offset = s->block_off[nv + i];
  }
  return Q8RT_OK;
}

static void *value_data(const q8rt_session *s, int v) {
  const plan_value *val = &s->model->plan.values[v];
  if (val->constant) return (void *)(uintptr_t)val->shape.value;
  if (s->ext[v] != NULL) return s->ext[v];
  if (s->offsets[v] == SIZE_MAX) return NULL;
  return (char *)s->arena + s->offsets[v];
}

static void *step_workspace(const q8rt_session *s, int i) {
  return s->steps[i].workspace_bytes ? (char *)s->arena + s->steps[i].workspace_offset : NULL;
}

/* Shapes are set for the graph inputs: infer, plan and (re)allocate the arena, point the views,
 * then let the ops bind to their buffers. */
static q8rt_status bind_plan(q8rt_session *s, q8rt_error *err);

/* A failure because of max_memory_bytes says so (see q8rt_meter_failure). */
static q8rt_status bind(q8rt_session *s, q8rt_error *err) {
  atomic_store(&s->meter.refused, 0);
  return q8rt_meter_failure(&s->meter, bind_plan(s, err), "the session", err);
}

static q8rt_status bind_plan(q8rt_session *s, q8rt_error *err) {
  const q8rt_model *m = s->model;
  unbind_steps(s);
  s->bound = 0;
  s->ran = 0;
  memset(&s->rm, 0, sizeof(s->rm)); /* new shapes: measure both run modes again */
  s->rm_last_ms = 0.0;
  /* outputs a step publishes at run (a Loop's scan outputs of run-time length) are its again */
  for (int v = 0; v < m->plan.n_values; v++) {
    if (m->plan.values[v].graph_input < 0) s->ext[v] = NULL;
  }
  q8rt_status st = infer_all(s, err);
  if (st != Q8RT_OK || s->shapes_only) return st;
  size_t total = 0;
  plan_in_place(s);
  if ((st = plan_arena(s, &total, err)) != Q8RT_OK) return st;
  if (s->max_arena_bytes != 0 && total > s->max_arena_bytes) {
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "the plan needs %zu bytes of arena, more than the limit of %zu",
                     total, s->max_arena_bytes);
  }
  if (total > s->arena_capacity) {
    if (s->arena_external) {
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "the caller's arena has %zu bytes; these shapes need %zu",
                       s->arena_capacity, total);
    }
    free_arena(s);
    /* a Loop body bound again each iteration may grow a little each time (shapes from the
     * iteration number): half again as much, so that it is not reallocated every iteration */
    size_t cap = total;
    if (s->body && !q8rt_add_size(total, total / 2, &cap)) cap = total;
    s->arena = q8rt_alloc(s->allocator, cap, 64);
    if (s->arena == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "cannot allocate an arena of %zu bytes", cap);
    s->arena_capacity = cap;
    memset(s->arena, 0, cap);
  }
  s->arena_size = total;
  int vi = 0;
  for (int i = 0; i < m->plan.n_steps; i++) {
    const plan_step *ps = &m->plan.steps[i];
    s->steps[i].in_base = vi;
    for (int k = 0; k < ps->n_inputs; k++, vi++) {
      const int v = ps->inputs[k];
      s->views[vi].data = v >= 0 ? value_data(s, v) : NULL;
      s->views[vi].shape = v >= 0 ? &s->shapes[v] : NULL;
    }
    s->steps[i].out_base = vi;
    int outputs = 0, empty = 0;
    for (int k = 0; k < ps->n_outputs; k++, vi++) {
      const int v = ps->outputs[k];
      s->views[vi].data = v >= 0 ? value_data(s, v) : NULL;
      s->views[vi].shape = v >= 0 ? &s->shapes[v] : NULL;
      if (v < 0) continue;
      outputs++;
      for (int d = 0; d < s->shapes[v].rank; d++) {
        if (s->shapes[v].dims[d] == 0) {
          empty++;
          break;
        }
      }
    }
    /* An op's loops over the other axes would still run (2^31 empty rows of a Concat whose inner
       axis is 0, say): a step with nothing to write is skipped. */
    s->steps[i].empty = outputs > 0 && empty == outputs && ps->op->run_status == NULL;
  }
  const op_exec_ctx ctx = exec_ctx(s);
  for (int i = 0; i < m->plan.n_steps; i++) {
    const plan_step *ps = &m->plan.steps[i];
    if (ps->op->bind == NULL || s->steps[i].skip) continue;
    session_step *ss = &s->steps[i];
    st = ps->op->bind(ps->params, ss->geom, &s->views[ss->in_base], &s->views[ss->out_base], step_workspace(s, i), &ctx,
                      err);
    if (st != Q8RT_OK) {
      unbind_steps(s);
      return st;
    }
    ss->bound = 1;
  }
  s->bound = 1;
  return Q8RT_OK;
}

q8rt_status q8rt_session_create(const q8rt_model *model, const q8rt_session_options *options, q8rt_session **session,
                                q8rt_error *error) {
  if (session == NULL) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "session output pointer is NULL");
  *session = NULL;
  if (model == NULL) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "model is NULL");
  q8rt_session_options o;
  q8rt_session_options_init(&o);
  if (options != NULL) {
    if (options->size < offsetof(q8rt_session_options, threads) || options->size > sizeof(o)) {
      return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT,
                       "q8rt_session_options.size is %zu: set it to sizeof(q8rt_session_options) (%zu)", options->size,
                       sizeof(o));
    }
    memcpy(&o, options, options->size);
  }
  if (o.threads < 0 || o.threads > 1024) {
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "threads is %d (0 to 1024)", o.threads);
  }
  const q8rt_allocator *under = o.allocator != NULL ? o.allocator : &model->meter.under;
  q8rt_session *s = q8rt_calloc(under, 1, sizeof(*s));
  if (s == NULL) return q8rt_fail(error, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  /* Everything the session holds goes through its own meter (the model's counts the model). */
  q8rt_meter_init(&s->meter, under, o.max_memory_bytes);
  s->allocator = &s->meter.iface;
  const q8rt_allocator *a = s->allocator;
  if (!q8rt_meter_charge(&s->meter, sizeof(*s))) {
    q8rt_free(under, s, sizeof(*s));
    return q8rt_fail(error, Q8RT_ERROR_OUT_OF_MEMORY,
                     "the session's memory limit of %zu bytes is below its %zu-byte base", o.max_memory_bytes,
                     sizeof(*s));
  }
  s->model = model;
  s->threads = o.threads < 1 ? 1 : o.threads;
  s->profile = o.profile;
  s->max_arena_bytes = o.max_arena_bytes;
  s->max_loop_iterations = o.max_loop_iterations != 0 ? o.max_loop_iterations : Q8RT_DEFAULT_MAX_LOOP_ITERATIONS;
  const size_t nv = (size_t)model->plan.n_values, ns = (size_t)model->plan.n_steps, nb = nv + ns;
  int nviews = 0;
  for (size_t i = 0; i < ns; i++) nviews += model->plan.steps[i].n_inputs + model->plan.steps[i].n_outputs;
  s->n_views = nviews;
  s->shapes = q8rt_calloc(a, nv, sizeof(op_shape));
  s->offsets = q8rt_calloc(a, nv, sizeof(size_t));
  s->nbytes = q8rt_calloc(a, nv, sizeof(size_t));
  s->in_place = q8rt_calloc(a, nv, sizeof(int));
  s->in_place_off = q8rt_calloc(a, nv, sizeof(size_t));
  s->live_tmp = q8rt_calloc(a, nb * 4, sizeof(int));
  s->valbuf = q8rt_calloc(a, nv, Q8RT_VALUE_BYTES);
  s->block_size = q8rt_calloc(a, nb, sizeof(size_t));
  s->block_off = q8rt_calloc(a, nb, sizeof(size_t));
  s->memo_size = q8rt_calloc(a, nb, sizeof(size_t));
  s->memo_live = q8rt_calloc(a, nb * 2, sizeof(int));
  s->steps = q8rt_calloc(a, ns + 1, sizeof(session_step));
  s->views = q8rt_calloc(a, (size_t)nviews + 1, sizeof(op_tensor));
  s->step_ms = q8rt_calloc(a, ns + 1, sizeof(double));
  s->step_threads = q8rt_calloc(a, ns + 1, sizeof(q8rt_step_threads));
  s->gstate = q8rt_calloc(a, (size_t)model->plan.n_guards + 1, 1);
  s->gerr = q8rt_calloc(a, (size_t)model->plan.n_guards + 1, sizeof(*s->gerr));
  s->ext = q8rt_calloc(a, nv + 1, sizeof(void *));
  if ((nv && (!s->shapes || !s->offsets || !s->nbytes || !s->valbuf || !s->in_place || !s->in_place_off)) ||
      (nb && (!s->live_tmp || !s->block_size || !s->block_off || !s->memo_size || !s->memo_live)) || !s->steps ||
      !s->views || !s->step_ms || !s->step_threads || !s->gstate || !s->gerr || !s->ext) {
    q8rt_status st = q8rt_fail(error, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory creating a session");
    st = q8rt_meter_failure(&s->meter, st, "the session", error);
    q8rt_session_free(s);
    return st;
  }
  int xnn_steps = 0;
  for (size_t i = 0; i < ns; i++) {
    const char *k = model->plan.steps[i].kernel;
    xnn_steps += k != NULL && strcmp(k, "xnnpack") == 0;
  }
  if (s->threads > 1) {
    int failed = 0;
    const int mode = o.profile == Q8RT_PROFILE_SPLIT ? Q8RT_POOL_ANALYZE : o.profile ? Q8RT_POOL_COUNT : Q8RT_POOL_RUN;
    s->pool = q8rt_threadpool_create_mode(a, (size_t)s->threads, mode, &failed);
    /* XNNPACK's operators take a pthreadpool; it allocates with malloc, outside the allocator
     * hook, so it is made only for plans that have such steps. */
    if (!failed && xnn_steps > 0) {
      s->threadpool = pthreadpool_create((size_t)s->threads);
      failed = s->threadpool == NULL;
    }
    if (failed) {
      q8rt_status st = q8rt_fail(error, Q8RT_ERROR_OUT_OF_MEMORY, "cannot create a pool of %d threads", o.threads);
      st = q8rt_meter_failure(&s->meter, st, "the session", error);
      q8rt_session_free(s);
      return st;
    }
  }
  for (size_t v = 0; v < nv; v++) s->shapes[v] = model->plan.values[v].shape;
  if (model->all_inputs_static && !model->is_body) {
    q8rt_status st = bind(s, error);
    if (st != Q8RT_OK) {
      q8rt_session_free(s);
      return st;
    }
  }
  *session = s;
  return Q8RT_OK;
}

static const plan_value *graph_input(const q8rt_session *s, size_t index) {
  const plan *p = &s->model->plan;
  return &p->values[p->inputs[index]];
}

/* Record a concrete shape for graph input value vi; re-plan when every input is concrete and some
 * shape changed. */
static q8rt_status bind_input_shape(q8rt_session *s, int vi, const int64_t *shape, int rank, int need_all,
                                    q8rt_error *error) {
  const plan *p = &s->model->plan;
  op_shape *cur = &s->shapes[vi];
  int same = s->bound && cur->rank == rank;
  for (int d = 0; same && d < rank; d++) same = cur->dims[d] == shape[d];
  if (same) return Q8RT_OK;
  cur->dtype = p->values[vi].shape.dtype;
  cur->rank = rank;
  for (int d = 0; d < rank; d++) cur->dims[d] = shape[d];
  s->bound = 0;
  for (int i = 0; i < p->n_inputs; i++) {
    const op_shape *sh = &s->shapes[p->inputs[i]];
    int ok = sh->rank >= 0;
    for (int d = 0; ok && d < sh->rank; d++) ok = sh->dims[d] >= 0;
    if (!ok && !need_all) return Q8RT_OK; /* bound once the last symbolic input gets its shape */
    if (!ok) {
      return q8rt_fail(error, Q8RT_ERROR_STATE,
                       "input '%s' has symbolic dimensions: bind its shape with q8rt_session_set_input_shape before "
                       "setting data",
                       p->values[p->inputs[i]].name);
    }
  }
  return bind(s, error);
}

static q8rt_status check_input_shape(const q8rt_session *s, size_t index, const int64_t *shape, int rank,
                                     q8rt_error *error) {
  const plan *p = &s->model->plan;
  if (index >= (size_t)p->n_inputs) {
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "input index %zu out of range (the model has %d inputs)",
                     index, p->n_inputs);
  }
  const plan_value *v = graph_input(s, index);
  const op_shape *vs = &v->shape;
  if (rank < 0 || rank > Q8RT_MAX_RANK || (rank > 0 && shape == NULL)) {
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "input '%s': invalid rank %d or NULL shape", v->name, rank);
  }
  if (vs->rank >= 0 && rank != vs->rank) {
    return q8rt_fail(error, Q8RT_ERROR_SHAPE, "input '%s' has rank %d, the model expects rank %d", v->name, rank,
                     vs->rank);
  }
  for (int d = 0; d < rank; d++) {
    if (shape[d] < 0) {
      return q8rt_fail(error, Q8RT_ERROR_SHAPE, "input '%s': dimension %d is negative", v->name, d);
    }
    if (vs->rank >= 0 && vs->dims[d] >= 0 && shape[d] != vs->dims[d]) {
      return q8rt_fail(error, Q8RT_ERROR_SHAPE, "input '%s': dimension %d is %lld, the model expects %lld", v->name, d,
                       (long long)shape[d], (long long)vs->dims[d]);
    }
  }
  int64_t elems;
  if (!q8rt_shape_elements(shape, rank, &elems)) {
    return q8rt_fail(error, Q8RT_ERROR_SHAPE, "input '%s' is too large", v->name);
  }
  return Q8RT_OK;
}

q8rt_status q8rt_session_set_input_shape(q8rt_session *s, size_t index, const int64_t *shape, int rank,
                                         q8rt_error *error) {
  if (s == NULL) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "session is NULL");
  q8rt_status st = check_input_shape(s, index, shape, rank, error);
  if (st != Q8RT_OK) return st;
  return bind_input_shape(s, s->model->plan.inputs[index], shape, rank, 0, error);
}

q8rt_status q8rt_session_set_input(q8rt_session *s, size_t index, const int64_t *shape, int rank, const void *data,
                                   size_t nbytes, q8rt_error *error) {
  if (s == NULL) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "session is NULL");
  q8rt_status cst = check_input_shape(s, index, shape, rank, error);
  if (cst != Q8RT_OK) return cst;
  const plan_value *v = graph_input(s, index);
  int64_t elems;
  q8rt_shape_elements(shape, rank, &elems);
  const size_t want = (size_t)elems * q8rt_dtype_size(v->shape.dtype);
  if (nbytes != want) {
    return q8rt_fail(error, Q8RT_ERROR_SHAPE, "input '%s': %zu bytes given, its shape and type (%s) need %zu", v->name,
                     nbytes, q8rt_dtype_name(v->shape.dtype), want);
  }
  if (data == NULL && nbytes != 0)
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "input '%s': data is NULL", v->name);
  const int vi = s->model->plan.inputs[index];
  q8rt_status st = bind_input_shape(s, vi, shape, rank, 1, error);
  if (st != Q8RT_OK) return st;
  if (nbytes) memcpy((char *)s->arena + s->offsets[vi], data, nbytes);
  return Q8RT_OK;
}

static q8rt_status require_bound(const q8rt_session *s, q8rt_error *error) {
  if (s->bound) return Q8RT_OK;
  const plan *p = &s->model->plan;
  for (int i = 0; i < p->n_inputs; i++) {
    const op_shape *sh = &s->shapes[p->inputs[i]];
    int ok = sh->rank >= 0;
    for (int d = 0; ok && d < sh->rank; d++) ok = sh->dims[d] >= 0;
    if (!ok) {
      return q8rt_fail(error, Q8RT_ERROR_STATE,
                       "input '%s' has symbolic dimensions: give its shape with q8rt_session_set_input first",
                       p->values[p->inputs[i]].name);
    }
  }
  return q8rt_fail(error, Q8RT_ERROR_STATE, "the session's shapes are not bound (an earlier call failed)");
}

q8rt_status q8rt_session_input_buffer(q8rt_session *s, size_t index, void **data, size_t *nbytes, q8rt_error *error) {
  if (s == NULL || data == NULL || nbytes == NULL) {
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "session, data and nbytes must not be NULL");
  }
  const plan *p = &s->model->plan;
  if (index >= (size_t)p->n_inputs) {
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "input index %zu out of range (the model has %d inputs)",
                     index, p->n_inputs);
  }
  q8rt_status st = require_bound(s, error);
  if (st != Q8RT_OK) return st;
  const int vi = p->inputs[index];
  *data = (char *)s->arena + s->offsets[vi];
  *nbytes = s->nbytes[vi];
  return Q8RT_OK;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Whether the conditions of branch `id` and the enclosing ones hold in this run. Read from the
 * arena: every condition was computed before the branch's first step (topological order). */
static int guard_holds(const q8rt_session *s, int id) {
  const plan *p = &s->model->plan;
  for (; id > 0 && s->gstate[id] != GUARD_LIVE; id = p->guards[id - 1].parent) {
    const plan_guard *gd = &p->guards[id - 1];
    const unsigned char *c = value_data(s, gd->cond);
    if (c == NULL || (*c != 0) != gd->side) return 0;
  }
  return 1;
}

/* Whole runs alone or shared. The pool decides region by region whether a worker helps (solo
 * stretches when it does not show up), but with small steps sharing can lose as a whole even when
 * each region gains: a step that follows a shared one reads what the other core wrote (~0.25 us a
 * cache line on this class of VM), and PP-OCR cls ran 1.4-2.3x slower on two threads than on one.
 * So the session times whole runs in both modes and keeps the faster: after a warm-up run,
 * Q8RT_RUN_HIST runs of each mode alternately, then the chosen mode with a probe of the other one now
 * and then (q8rt_run_mode_pick). Shared is judged by the median of its last Q8RT_RUN_HIST run
 * times, alone by the best of its last Q8RT_RUN_HIST (q8rt_run_mode_choose): shared runs spread
 * widely by themselves (cls: median 1.4x alone's, but its fastest runs as fast as alone's), and
 * the best of the last two, used before for both, kept cls shared for 64 runs at a time whenever
 * one shared run was lucky (17% of its runs, 2T 0.7x 1T in `make bench`); alone runs have no such
 * luck, only noise from other work, which the best drops (a median of alone's kept cls shared for
 * 128 runs after two noisy alone runs, since alone is probed once in 64 runs while shared).
 * Alone is chosen when a run was contended (RUN_CONTENDED) or when its time is 5% below
 * shared's; shared comes back as soon as its time is below alone's. Outputs do not depend on
 * it: items are fixed by the shapes. Also while profiling (a profiled run's time is a normal
 * run's), but not with Q8RT_PROFILE_SPLIT (no worker runs). */
#define RUN_PROBE_EVERY 64u /* runs between alone probes while shared */
/* While alone, a shared probe about every RUN_PROBE_GAP_MS (at the alone runs' median time), at
 * least every RUN_PROBE_MAX and at most every RUN_PROBE_MIN runs. A probe that loses costs up to
 * about one run (cls: +0.2 ms on 0.45) and leaves the next alone run some lines in the other
 * core's cache: one in 8 runs cost the small models 5-10%; once in ~20 ms it costs them < 1%,
 * while det and rec (5-15 ms a run) still probe every 8 runs, so that shared is back within
 * ~0.1 s after a busy spell (alone runs that are contended do not probe at all). */
#define RUN_PROBE_MIN 8u
#define RUN_PROBE_MAX 256u
#define RUN_PROBE_GAP_MS 20.0
/* A run in which the caller was on a CPU less than this part of the time is contended: other
 * threads wanted its CPU (or it slept waiting for a worker that had none). Taking the caller's
 * waits for a worker's items out of the run's time was tried (threads13): the wait also holds the
 * caller's own delay in getting its CPU back after the worker's signal, so on a loaded machine
 * shared runs passed as uncontended while alone runs did not, and det dyn_u8u8 / float13 at 2
 * threads ran 2-8% slower (load ~10, 76 of 80 runs shared). Then the machine has
 * no core to spare and sharing only adds what the threads cost each other (waking, spinning,
 * waiting for a descheduled worker; with Linux's autogroups a second thread does not even get the
 * process more CPU): the session runs alone until a shared probe is neither contended nor slower.
 * At load ~10-14 on this 2-vCPU VM, with workers that move off the caller's CPU (threadpool.c), rec
 * at 2 threads ran 24-45% slower than at 1 without this rule; with it, det at load ~11 ran 2T as
 * main's pool did before (28.4 vs 28.1 ms median of 6 alternations, 1T 25.0). A contended run's
 * time says how busy the machine was, not what the mode costs: it is not kept for the choice. */
#define RUN_CONTENDED 0.75
/* The thread's CPU clock is a system call (~0.7 us on this class of VM; two a run were 7% of
 * vad16k's 0.02 ms runs): runs after one shorter than this go without the contention check (the
 * run times alone then judge the modes). */
#define RUN_CPU_CHECK_MS 0.5

static q8rt_status run_steps(q8rt_session *s, q8rt_error *error);

int q8rt_run_mode_pick(unsigned k, unsigned since_other, int solo, int contended, double alone_ms) {
  if (k == 0) return 0;
  if (k <= 2 * Q8RT_RUN_HIST) return k % 2 == 0;
  /* no shared probe while alone runs are contended: it would only cost (at load ~11, det at 2
   * threads ran 10-20% slower than at 1 with a probe every 8 runs); the first alone run that is
   * not contended lets the next probe run */
  if (solo && contended) return 1;
  unsigned every = RUN_PROBE_EVERY;
  if (solo) {
    const double runs = alone_ms > 0.0 ? RUN_PROBE_GAP_MS / alone_ms : 0.0;
    every = runs >= RUN_PROBE_MAX ? RUN_PROBE_MAX : runs <= RUN_PROBE_MIN ? RUN_PROBE_MIN : (unsigned)runs;
  }
  return since_other >= every ? !solo : solo;
}

/* The median of a mode's recent run times (0: none yet; two: their mean). */
double q8rt_run_mode_typical(const double ms[Q8RT_RUN_HIST]) {
  double v[Q8RT_RUN_HIST];
  int n = 0;
  for (int i = 0; i < Q8RT_RUN_HIST; i++)
    if (ms[i] > 0.0) v[n++] = ms[i];
  if (n < 3) return n == 0 ? 0.0 : n == 1 ? v[0] : 0.5 * (v[0] + v[1]);
  const double lo = v[0] < v[1] ? v[0] : v[1], hi = v[0] < v[1] ? v[1] : v[0];
  return v[2] < lo ? lo : v[2] > hi ? hi : v[2];
}

/* The best of a mode's recent run times (0: none yet). */
double q8rt_run_mode_best(const double ms[Q8RT_RUN_HIST]) {
  double best = 0.0;
  for (int i = 0; i < Q8RT_RUN_HIST; i++)
    if (ms[i] > 0.0 && (best == 0.0 || ms[i] < best)) best = ms[i];
  return best;
}

int q8rt_run_mode_choose(int solo, const double ms[2][Q8RT_RUN_HIST]) {
  const double shared = q8rt_run_mode_typical(ms[0]), alone = q8rt_run_mode_best(ms[1]);
  if (shared == 0.0 || alone == 0.0) return solo;
  return solo ? alone <= shared : alone < 0.95 * shared;
}

int q8rt_run_contended(double wall_ms, double cpu_ms) { return cpu_ms > 0.0 && cpu_ms < RUN_CONTENDED * wall_ms; }

/* CPU time of the calling thread (0 when the system cannot tell: no contention check then). */
static double thread_cpu_ms(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0.0;
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int q8rt_run_mode_start(q8rt_run_mode *m) {
  const int other = !m->solo, prev = m->cur;
  m->cur = q8rt_run_mode_pick(m->runs, m->since[other], m->solo, m->contended, q8rt_run_mode_best(m->ms[1]));
  if (m->cur == 1 || prev == 0) return 0;
  /* Sharing after alone runs: the pool shares from the first region (a solo stretch from before
   * them would make this run alone too, and a probe measured alone keeps alone chosen). A probe
   * is judged by its own time: the shared times that lost to alone are stale, and when a short
   * spell had made them slow, two probes had to win before shared came back. */
  if (m->solo && m->runs > 2 * Q8RT_RUN_HIST) memset(m->ms[0], 0, sizeof(m->ms[0]));
  return 1;
}

void q8rt_run_mode_finish(q8rt_run_mode *m, double ms, int contended) {
  if (m->runs++ == 0) return; /* warm-up: first touches of the arena and the weights */
  m->since[m->cur] = 0;
  m->since[!m->cur]++;
  m->contended = contended;
  if (!contended) {
    double *w = m->ms[m->cur];
    memmove(w + 1, w, (Q8RT_RUN_HIST - 1) * sizeof(*w));
    w[0] = ms;
  }
  m->solo = contended || q8rt_run_mode_choose(m->solo, (const double(*)[Q8RT_RUN_HIST])m->ms);
}

/* The fuzz build (Q8RT_FIXED_SCHEDULE, see Makefile) keeps every run shared: which steps split
 * (op_would_split) then does not depend on measured times, and neither do the fuzzer's edges. */
static int run_mode_on(const q8rt_session *s) {
#ifdef Q8RT_FIXED_SCHEDULE
  (void)s;
  return 0;
#else
  return s->pool != NULL && s->profile != Q8RT_PROFILE_SPLIT;
#endif
}

/* Not inlined, nor any branch on a measured time in q8rt_session_run: the fuzz build leaves these
 * out of its coverage (tests/fuzz/coverage-ignore.txt), as their paths depend on timing. */
__attribute__((noinline)) static void run_mode_begin(q8rt_session *s) {
  if (!run_mode_on(s)) return;
  if (q8rt_run_mode_start(&s->rm)) q8rt_threadpool_fresh(s->pool);
  q8rt_threadpool_force_solo(s->pool, s->rm.cur);
  s->rm_cpu_t0 = s->rm_last_ms >= RUN_CPU_CHECK_MS ? thread_cpu_ms() : 0.0;
  s->rm_t0 = now_ms();
}

/* After a run that succeeded (ok) or failed (only the pool's mode is reset then). */
__attribute__((noinline)) static void run_mode_end(q8rt_session *s, int ok) {
  if (!run_mode_on(s)) return;
  q8rt_threadpool_force_solo(s->pool, 0);
  if (!ok) return;
  const double ms = now_ms() - s->rm_t0, cpu_ms = s->rm_cpu_t0 > 0.0 ? thread_cpu_ms() - s->rm_cpu_t0 : 0.0;
  const int contended = s->rm.runs > 0 && q8rt_run_contended(ms, cpu_ms);
  s->rm_last_ms = ms;
  s->rm_done[s->rm.cur]++;
  s->rm_done_contended += (size_t)contended;
  q8rt_run_mode_finish(&s->rm, ms, contended);
}

q8rt_status q8rt_session_run(q8rt_session *s, q8rt_error *error) {
  if (s == NULL) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "session is NULL");
  q8rt_status st = require_bound(s, error);
  if (st != Q8RT_OK) return st;
  run_mode_begin(s);
  st = run_steps(s, error);
  run_mode_end(s, st == Q8RT_OK);
  s->runs_ok += st == Q8RT_OK;
  return st;
}

void q8rt_session_run_stats(const q8rt_session *s, q8rt_run_stats *out) {
  memset(out, 0, sizeof(*out));
  if (s == NULL) return;
  q8rt_pool_counts c;
  q8rt_threadpool_counts(s->pool, &c);
  out->runs = s->runs_ok;
  out->shared_runs = s->rm_done[0];
  out->alone_runs = s->rm_done[1];
  out->contended_runs = s->rm_done_contended;
  out->regions = c.regions;
  out->solo_regions = c.solo_regions;
  out->unhelped_regions = c.unhelped_regions;
  out->solo_stretches = c.solo_stretches;
  out->wait_ms = (double)c.wait_ns * 1e-6;
}

static q8rt_status run_steps(q8rt_session *s, q8rt_error *error) {
  const plan *p = &s->model->plan;
  const op_exec_ctx ctx = exec_ctx(s);
  for (int i = 0; i < p->n_steps; i++) {
    const plan_step *ps = &p->steps[i];
    const session_step *ss = &s->steps[i];
    if (ss->empty || ss->skip || (ss->check && !guard_holds(s, ps->guard))) {
      if (s->profile) {
        s->step_ms[i] = 0.0;
        memset(&s->step_threads[i], 0, sizeof(s->step_threads[i]));
      }
      continue;
    }
    const int if_guard = ps->node->if_guard;
    if (if_guard > 0) {
      /* the taken branch could not bind: its error, now that it is taken */
      const unsigned char *c = s->views[ss->in_base].data;
      const int id = if_guard + (c != NULL && *c != 0 ? 0 : 1);
      if (id <= p->n_guards && s->gstate[id] == GUARD_BROKEN) {
        return q8rt_fail(error, s->gerr[id]->status, "%s", s->gerr[id]->message);
      }
    }
    q8rt_pool_stats before;
    if (s->profile) q8rt_threadpool_stats(s->pool, &before);
    const double t0 = s->profile ? now_ms() : 0.0;
    if (ps->op->run_status != NULL) {
      q8rt_status st = ps->op->run_status(ps->params, s->steps[i].geom, &s->views[ss->in_base], &s->views[ss->out_base],
                                          step_workspace(s, i), &ctx, error);
      if (st != Q8RT_OK) return st;
    } else {
      ps->op->run(ps->params, ss->geom, &s->views[ss->in_base], &s->views[ss->out_base], step_workspace(s, i), &ctx);
    }
    if (s->profile) {
      s->step_ms[i] = now_ms() - t0;
      q8rt_pool_stats after;
      q8rt_threadpool_stats(s->pool, &after);
      q8rt_step_threads *t = &s->step_threads[i];
      t->regions = after.regions - before.regions;
      t->items = after.items - before.items;
      t->caller_items = after.caller_items - before.caller_items;
      t->region_ms = (double)(after.region_ns - before.region_ns) * 1e-6;
      t->ideal_ms = (double)(after.ideal_ns - before.ideal_ns) * 1e-6;
    }
  }
  s->ran = 1;
  return Q8RT_OK;
}

q8rt_status q8rt_session_create_body(const q8rt_model *model, const q8rt_allocator *allocator,
                                     const op_exec_ctx *parent, q8rt_session **out, q8rt_error *err) {
  q8rt_session_options o;
  q8rt_session_options_init(&o);
  o.allocator = allocator;
  o.max_loop_iterations = parent->max_loop_iterations;
  o.max_arena_bytes = parent->max_arena_bytes; /* the parent session's cap holds for its bodies' arenas */
  q8rt_session *s;
  q8rt_status st = q8rt_session_create(model, &o, &s, err);
  if (st != Q8RT_OK) return st;
  /* the parent's pools: the body's steps split as the parent's would (same bytes at any count) */
  s->body = 1;
  s->pool = parent->pool;
  s->threadpool = parent->threadpool;
  s->threads = parent->threads > 0 ? (int)parent->threads : 1;
  *out = s;
  return Q8RT_OK;
}

q8rt_status q8rt_session_bind_inputs(q8rt_session *s, const op_shape *shapes, void *const *ext, q8rt_error *err) {
  const plan *p = &s->model->plan;
  for (int i = 0; i < p->n_inputs; i++) {
    const int v = p->inputs[i];
    const plan_value *pv = &p->values[v];
    const op_shape *in = &shapes[i];
    if (pv->shape.rank >= 0 && in->rank != pv->shape.rank) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "input '%s' has rank %d, the body declares rank %d", pv->name, in->rank,
                       pv->shape.rank);
    }
    for (int d = 0; d < in->rank; d++) {
      if (in->dims[d] < 0 || (pv->shape.rank >= 0 && pv->shape.dims[d] >= 0 && in->dims[d] != pv->shape.dims[d])) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "input '%s': dimension %d is %lld, the body declares %lld", pv->name, d,
                         (long long)in->dims[d], (long long)pv->shape.dims[d]);
      }
    }
    op_shape *cur = &s->shapes[v];
    cur->dtype = pv->shape.dtype;
    cur->rank = in->rank;
    memcpy(cur->dims, in->dims, sizeof(cur->dims));
    cur->value = NULL;
    int64_t n;
    const size_t es = q8rt_dtype_size(cur->dtype);
    if (in->value != NULL && q8rt_shape_elements(in->dims, in->rank, &n) && es > 0 &&
        (size_t)n * es <= Q8RT_VALUE_BYTES) {
      unsigned char *dst = s->valbuf + (size_t)v * Q8RT_VALUE_BYTES;
      memcpy(dst, in->value, (size_t)n * es);
      cur->value = dst;
    }
    s->ext[v] = ext != NULL ? ext[i] : NULL;
  }
  return bind(s, err);
}

void *q8rt_session_input_data(const q8rt_session *s, int index) { return value_data(s, s->model->plan.inputs[index]); }

const void *q8rt_session_output_data(const q8rt_session *s, int index, const op_shape **shape) {
  const int v = s->model->plan.outputs[index];
  *shape = &s->shapes[v];
  return value_data(s, v);
}

q8rt_status q8rt_session_run_body(q8rt_session *s, const op_exec_ctx *parent, q8rt_error *err) {
  s->pool = parent->pool; /* the parent's, as at create (it may have rebound since) */
  s->threadpool = parent->threadpool;
  s->loop_count = parent->loop_count;
  return run_steps(s, err);
}

q8rt_status q8rt_session_get_output(q8rt_session *s, size_t index, q8rt_tensor_info *info, const void **data,
                                    size_t *nbytes, q8rt_error *error) {
  if (s == NULL) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "session is NULL");
  const plan *p = &s->model->plan;
  if (index >= (size_t)p->n_outputs) {
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "output index %zu out of range (the model has %d outputs)",
                     index, p->n_outputs);
  }
  if (!s->ran) return q8rt_fail(error, Q8RT_ERROR_STATE, "no output yet: call q8rt_session_run first");
  const int vi = p->outputs[index];
  const plan_value *v = &p->values[vi];
  if (info != NULL) {
    memset(info, 0, sizeof(*info));
    const op_shape *sh = &s->shapes[vi];
    info->name = v->name;
    info->dtype = sh->dtype;
    info->rank = sh->rank < 0 ? 0 : sh->rank;
    for (int d = 0; d < info->rank; d++) info->shape[d] = sh->dims[d];
    info->has_quantization = v->has_quant;
    info->scale = v->scale;
    info->zero_point = v->zero_point;
  }
  if (data != NULL) *data = value_data(s, vi);
  if (nbytes != NULL) *nbytes = s->nbytes[vi];
  return Q8RT_OK;
}

size_t q8rt_session_memory(const q8rt_session *s) { return s != NULL ? atomic_load(&s->meter.used) : 0; }

size_t q8rt_session_arena_size(const q8rt_session *s) { return s != NULL && s->bound ? s->arena_size : 0; }

q8rt_status q8rt_session_set_arena(q8rt_session *s, void *arena, size_t nbytes, q8rt_error *error) {
  if (s == NULL || arena == NULL) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "session or arena is NULL");
  if (((uintptr_t)arena & 63) != 0) {
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "the arena must be aligned to 64 bytes");
  }
  if (s->bound && nbytes < s->arena_size) {
    return q8rt_fail(error, Q8RT_ERROR_OUT_OF_MEMORY, "the arena has %zu bytes; the plan needs %zu", nbytes,
                     s->arena_size);
  }
  /* Inputs already copied into the old arena move with it. */
  if (s->bound && s->arena != NULL) memcpy(arena, s->arena, s->arena_size);
  free_arena(s);
  s->arena = arena;
  s->arena_capacity = nbytes;
  s->arena_external = 1;
  if (s->bound) {
    q8rt_error tmp;
    return bind(s, error != NULL ? error : &tmp);
  }
  return Q8RT_OK;
}

size_t q8rt_session_profile_threads(const q8rt_session *s, q8rt_step_threads *steps, size_t capacity) {
  if (s == NULL) return 0;
  const size_t n = (size_t)s->model->plan.n_steps;
  for (size_t i = 0; i < n && i < capacity && steps != NULL; i++) steps[i] = s->step_threads[i];
  return n;
}

size_t q8rt_session_profile(const q8rt_session *s, q8rt_step_profile *steps, size_t capacity) {
  if (s == NULL) return 0;
  const plan *p = &s->model->plan;
  for (size_t i = 0; i < (size_t)p->n_steps && i < capacity && steps != NULL; i++) {
    steps[i].op_type = p->steps[i].node->op_type;
    steps[i].node_name = p->steps[i].node->name;
    steps[i].kernel = p->steps[i].kernel;
    steps[i].milliseconds = s->step_ms[i];
  }
  return (size_t)p->n_steps;
}
