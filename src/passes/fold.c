/* Constant folding: a node whose inputs are all constants (DequantizeLinear of weights left
 * unfused, shape arithmetic on constants, ...) runs once at load, with the same op code as at run
 * time, and its outputs become constants of the graph. Ops that bind to buffers are not folded. */
#include <string.h>

#include "passes.h"

#define FOLD_MAX_BYTES ((size_t)256 << 20)

void pass_value_shape(const ir_value *v, op_shape *out) {
  memset(out, 0, sizeof(*out));
  if (v->constant != NULL) {
    out->dtype = v->constant->dtype;
    out->rank = v->constant->rank;
    memcpy(out->dims, v->constant->dims, sizeof(out->dims));
    out->value = v->constant->data;
    return;
  }
  out->dtype = v->dtype;
  out->rank = v->rank;
  memcpy(out->dims, v->dims, sizeof(out->dims));
}

static void annotate(ir_graph *g, const ir_node *n, int value, int scale_in, int zp_in) {
  if (value < 0) return;
  const ir_value *s = ir_node_input(g, n, scale_in);
  const ir_value *z = ir_node_input(g, n, zp_in);
  if (s == NULL || s->constant == NULL || s->constant->count != 1 || s->constant->dtype != Q8RT_DTYPE_FLOAT32) return;
  int32_t zp = 0;
  if (z != NULL) {
    if (z->constant == NULL || z->constant->count != 1) return;
    switch (z->constant->dtype) {
      case Q8RT_DTYPE_UINT8: zp = *(const uint8_t *)z->constant->data; break;
      case Q8RT_DTYPE_INT8: zp = *(const int8_t *)z->constant->data; break;
      case Q8RT_DTYPE_UINT16: zp = *(const uint16_t *)z->constant->data; break;
      case Q8RT_DTYPE_INT16: zp = *(const int16_t *)z->constant->data; break;
      default: return;
    }
  }
  ir_quant *q = &g->values[value].quant;
  q->known = 1;
  q->scale = *(const float *)s->constant->data;
  q->zero_point = zp;
}

void pass_annotate_quant(ir_graph *g, const ir_node *n) {
  if (strcmp(n->domain, "") != 0) return;
  if (strcmp(n->op_type, "QLinearConv") == 0) {
    annotate(g, n, n->inputs[0], 1, 2);
    annotate(g, n, n->outputs[0], 6, 7);
  } else if (strcmp(n->op_type, "QuantizeLinear") == 0) {
    annotate(g, n, n->outputs[0], 1, 2);
  } else if (strcmp(n->op_type, "DequantizeLinear") == 0) {
    annotate(g, n, n->inputs[0], 1, 2);
  }
}

int pass_guard_at_load(const ir_graph *g, int id) {
  int live = 1;
  for (; id > 0; id = ir_graph_guard(g, id)->parent) {
    const ir_guard *gd = ir_graph_guard(g, id);
    const ir_tensor *c = g->values[gd->cond].constant;
    if (c == NULL || c->count < 1) {
      live = 0;
      continue;
    }
    if ((*(const uint8_t *)c->data != 0) != gd->side) return PASS_GUARD_DEAD;
  }
  return live ? PASS_GUARD_LIVE : PASS_GUARD_OPEN;
}

static q8rt_status fold_node(ir_graph *g, ir_node *n, const op_def *op, q8rt_pool *pool, q8rt_backend backend,
                             uint32_t isa, int *folded, q8rt_error *err) {
  *folded = 0;
  if (op->bind != NULL || n->n_inputs == 0 || n->n_inputs > Q8RT_MAX_IO || n->n_outputs > Q8RT_MAX_IO) return Q8RT_OK;
  for (int k = 0; k < n->n_inputs; k++) {
    if (n->inputs[k] >= 0 && g->values[n->inputs[k]].constant == NULL) return Q8RT_OK;
  }
  for (int k = 0; k < n->n_outputs; k++) {
    if (n->outputs[k] >= 0 && g->values[n->outputs[k]].graph_input >= 0) return Q8RT_OK;
  }
  pass_eval e;
  q8rt_status st = pass_eval_prepare(g, n, pool, backend, isa, &e, err);
  if (st != Q8RT_OK) return st;
  op_shape in_shapes[Q8RT_MAX_IO];
  op_tensor in_t[Q8RT_MAX_IO], out_t[Q8RT_MAX_IO];
  for (int k = 0; k < n->n_inputs; k++) {
    memset(&in_shapes[k], 0, sizeof(in_shapes[k]));
    in_shapes[k].rank = -1;
    in_t[k].data = NULL;
    if (n->inputs[k] >= 0) {
      pass_value_shape(&g->values[n->inputs[k]], &in_shapes[k]);
      in_t[k].data = g->values[n->inputs[k]].constant->data;
    }
    in_t[k].shape = &in_shapes[k];
  }
  if ((st = pass_eval_infer(&e, n, in_shapes, pool, err)) != Q8RT_OK) return st;
  ir_tensor *outs[Q8RT_MAX_IO] = {NULL};
  size_t total = 0;
  for (int k = 0; k < n->n_outputs; k++) {
    out_t[k].data = NULL;
    out_t[k].shape = &e.out[k];
    if (n->outputs[k] < 0) continue;
    /* checked before allocating: a constant ConstantOfShape/Range/Tile may ask for gigabytes */
    int64_t count;
    if (e.out[k].rank >= 0 && q8rt_shape_elements(e.out[k].dims, e.out[k].rank, &count) &&
        (size_t)count * q8rt_dtype_size(e.out[k].dtype) > FOLD_MAX_BYTES - total) {
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "node '%s': folding its constant output needs over %zu bytes",
                       n->name, FOLD_MAX_BYTES);
    }
    if ((st = ir_tensor_create(g, e.out[k].dtype, e.out[k].rank, e.out[k].dims, &outs[k], err)) != Q8RT_OK) {
      return st;
    }
    total += outs[k]->nbytes;
    if (total > FOLD_MAX_BYTES) {
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "node '%s': folding its constant output needs over %zu bytes",
                       n->name, FOLD_MAX_BYTES);
    }
    out_t[k].data = outs[k]->data;
  }
  pass_eval_run(&e, in_t, out_t, g->allocator);
  for (int k = 0; k < n->n_outputs; k++) {
    if (n->outputs[k] < 0) continue;
    ir_value *v = &g->values[n->outputs[k]];
    v->constant = outs[k];
    v->dtype = outs[k]->dtype;
    v->rank = outs[k]->rank;
    memcpy(v->dims, outs[k]->dims, sizeof(v->dims));
  }
  pass_annotate_quant(g, n);
  *folded = 1;
  return Q8RT_OK;
}

q8rt_status pass_fold_constants(ir_graph *g, const int *order, int count, q8rt_pool *pool, q8rt_backend backend,
                                uint32_t isa, unsigned char *folded, q8rt_error *err) {
  for (int i = 0; i < count; i++) {
    ir_node *n = &g->nodes[order[i]];
    folded[order[i]] = 0;
    const op_def *op = op_find(n);
    if (op == NULL || n->n_inputs > Q8RT_MAX_IO || n->n_outputs > Q8RT_MAX_IO) continue; /* the planner refuses it */
    const int gs = n->guard ? pass_guard_at_load(g, n->guard) : PASS_GUARD_LIVE;
    if (gs == PASS_GUARD_DEAD) continue;
    int done = 0;
    q8rt_error fold_err = {Q8RT_OK, ""};
    q8rt_status st = fold_node(g, n, op, pool, backend, isa, &done, &fold_err);
    /* A node in a branch that may not be taken stays unfolded when folding fails: the error is
     * the branch's, reported by the planner if the branch is ever taken. */
    if (st != Q8RT_OK && (gs != PASS_GUARD_OPEN || st == Q8RT_ERROR_OUT_OF_MEMORY)) {
      if (err != NULL) *err = fold_err;
      return st;
    }
    folded[order[i]] = (unsigned char)(st == Q8RT_OK && done);
  }
  return Q8RT_OK;
}
