/* Weights reached through shape ops. See passes.h (pass_fold_qdq_weights). */
#include <stdio.h>
#include <string.h>

#include "passes.h"

static int is_shape_op(const ir_node *n) {
  return ir_is_onnx_op(n, "Transpose") || ir_is_onnx_op(n, "Reshape") || ir_is_onnx_op(n, "Squeeze") ||
         ir_is_onnx_op(n, "Unsqueeze") || ir_is_onnx_op(n, "Flatten");
}

/* The constant int64 list given by input k or, when that input is absent, attribute `attr`.
 * Returns 0 when the list is not known at load (a non-constant input, a wrong type). */
static int int_list(const ir_graph *g, const ir_node *n, int k, const char *attr, const int64_t **out, size_t *count) {
  *out = NULL;
  *count = 0;
  const ir_value *v = ir_node_input(g, n, k);
  if (v != NULL) {
    if (v->constant == NULL || v->constant->dtype != Q8RT_DTYPE_INT64 || v->constant->rank > 1) return 0;
    *out = v->constant->data;
    *count = (size_t)v->constant->count;
    return 1;
  }
  if (attr == NULL) return 1;
  return ir_attr_ints(n, attr, out, count, NULL) == Q8RT_OK;
}

static int in_list(const int64_t *l, size_t count, int64_t x, int rank) {
  for (size_t i = 0; i < count; i++) {
    if ((l[i] < 0 ? l[i] + rank : l[i]) == x) return 1;
  }
  return 0;
}

/* What shape op `n` makes of a constant of shape in[0..rank): the output shape, and for a
 * Transpose its permutation (*is_transpose set). Returns 0 when that is not known at load or the
 * node is malformed (the node is then left to the planner, which names the problem). */
static int shape_op_result(const ir_graph *g, const ir_node *n, const int64_t *in, int rank, int64_t *out,
                           int *out_rank, int64_t *perm, int *is_transpose) {
  int64_t total = 1;
  for (int i = 0; i < rank; i++) total *= in[i];
  *is_transpose = 0;
  const int opset = n->opset;
  if (ir_is_onnx_op(n, "Transpose")) {
    const int64_t *p;
    size_t cnt;
    if (ir_attr_ints(n, "perm", &p, &cnt, NULL) != Q8RT_OK) return 0;
    if (p != NULL && cnt != (size_t)rank) return 0;
    int seen[Q8RT_MAX_RANK] = {0};
    for (int i = 0; i < rank; i++) {
      const int64_t a = p != NULL ? p[i] : rank - 1 - i;
      if (a < 0 || a >= rank || seen[a]) return 0;
      seen[a] = 1;
      perm[i] = a;
      out[i] = in[a];
    }
    *out_rank = rank;
    *is_transpose = 1;
    return 1;
  }
  if (ir_is_onnx_op(n, "Reshape")) {
    const int64_t *s;
    size_t cnt;
    if (ir_node_input(g, n, 1) == NULL || !int_list(g, n, 1, NULL, &s, &cnt) || cnt > Q8RT_MAX_RANK) return 0;
    int64_t allowzero = 0;
    if (ir_attr_int(n, "allowzero", 0, &allowzero, NULL) != Q8RT_OK) return 0;
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < cnt; i++) {
      int64_t d = s[i];
      if (d == 0 && !allowzero) {
        if ((int)i >= rank) return 0;
        d = in[i];
      }
      if (d == -1) {
        if (infer >= 0) return 0;
        infer = (int)i;
        out[i] = -1;
        continue;
      }
      if (d < 0) return 0;
      out[i] = d;
      known *= d;
    }
    if (infer >= 0) {
      if (known == 0 || total % known != 0) return 0;
      out[infer] = total / known;
    } else if (known != total) {
      return 0;
    }
    *out_rank = (int)cnt;
    return 1;
  }
  if (ir_is_onnx_op(n, "Squeeze") || ir_is_onnx_op(n, "Unsqueeze")) {
    const int squeeze = ir_is_onnx_op(n, "Squeeze");
    const int64_t *axes;
    size_t cnt;
    if (!int_list(g, n, 1, opset >= 13 ? NULL : "axes", &axes, &cnt)) return 0;
    if (squeeze) {
      int r = 0;
      for (size_t i = 0; i < cnt; i++) {
        const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank || in[a] != 1) return 0;
      }
      for (int i = 0; i < rank; i++) {
        const int drop = cnt > 0 ? in_list(axes, cnt, i, rank) : in[i] == 1;
        if (!drop) out[r++] = in[i];
      }
      *out_rank = r;
      return 1;
    }
    if (cnt == 0) return 0;
    const int r = rank + (int)cnt;
    if (r > Q8RT_MAX_RANK) return 0;
    for (size_t i = 0; i < cnt; i++) {
      const int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
      if (a < 0 || a >= r) return 0;
      for (size_t j = 0; j < i; j++) {
        if ((axes[j] < 0 ? axes[j] + r : axes[j]) == a) return 0;
      }
    }
    for (int i = 0, k = 0; i < r; i++) out[i] = in_list(axes, cnt, i, r) ? 1 : in[k++];
    *out_rank = r;
    return 1;
  }
  if (ir_is_onnx_op(n, "Flatten")) {
    int64_t axis = 1;
    if (ir_attr_int(n, "axis", 1, &axis, NULL) != Q8RT_OK) return 0;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return 0;
    int64_t outer = 1;
    for (int i = 0; i < axis; i++) outer *= in[i];
    out[0] = outer;
    out[1] = outer == 0 ? 0 : total / outer;
    *out_rank = 2;
    return 1;
  }
  return 0;
}

/* shape-op(src) as a new constant tensor: a transposed copy, or the same bytes with new dims. */
static q8rt_status apply_shape(ir_graph *g, const ir_tensor *src, const int64_t *out, int out_rank, const int64_t *perm,
                               int is_transpose, ir_tensor **res, q8rt_error *err) {
  q8rt_status st = ir_tensor_create(g, src->dtype, out_rank, out, res, err);
  if (st != Q8RT_OK) return st;
  const size_t es = q8rt_dtype_size(src->dtype);
  if (!is_transpose) {
    if (src->nbytes > 0) memcpy((*res)->data, src->data, src->nbytes);
    return Q8RT_OK;
  }
  /* strides of the source, visited in the output's order */
  int64_t sstride[Q8RT_MAX_RANK], ostr[Q8RT_MAX_RANK], idx[Q8RT_MAX_RANK] = {0};
  int64_t acc = 1;
  for (int i = src->rank - 1; i >= 0; i--) {
    sstride[i] = acc;
    acc *= src->dims[i];
  }
  for (int i = 0; i < out_rank; i++) ostr[i] = sstride[perm[i]];
  const unsigned char *s = src->data;
  unsigned char *d = (*res)->data;
  for (int64_t e = 0; e < src->count; e++) {
    int64_t off = 0;
    for (int i = 0; i < out_rank; i++) off += idx[i] * ostr[i];
    memcpy(d + (size_t)e * es, s + (size_t)off * es, es);
    for (int i = out_rank - 1; i >= 0; i--) {
      if (++idx[i] < out[i]) break;
      idx[i] = 0;
    }
  }
  return Q8RT_OK;
}

/* Where the per-axis channel axis `a` of shape in[] lands in out[] after a Reshape-like op:
 * the dims before it keep their product and it stays a whole dim of its own. -1 otherwise. */
static int reshape_axis(const int64_t *in, int rank, int a, const int64_t *out, int out_rank) {
  int64_t before = 1;
  for (int i = 0; i < a; i++) before *= in[i];
  int64_t p = 1;
  for (int b = 0; b < out_rank; b++) {
    if (p == before && out[b] == in[a]) return b;
    p *= out[b];
  }
  (void)rank;
  return -1;
}

static void fmt_dims(char *buf, size_t cap, const int64_t *d, int rank) {
  size_t len = 0;
  buf[0] = '\0';
  len += (size_t)snprintf(buf + len, cap - len, "[");
  for (int i = 0; i < rank && len < cap; i++) {
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? "," : "", (long long)d[i]);
  }
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

/* A DQ whose data, scale and (optional) zero point are constants, 8-bit data, not blocked. */
static int const_weight_dq(const ir_graph *g, const ir_node *dq) {
  if (!ir_is_onnx_op(dq, "DequantizeLinear") || dq->n_outputs != 1) return 0;
  const ir_value *w = ir_node_input(g, dq, 0), *s = ir_node_input(g, dq, 1), *z = ir_node_input(g, dq, 2);
  if (w == NULL || w->constant == NULL || !q8rt_dtype_is_8bit(w->constant->dtype) || w->constant->rank < 1) return 0;
  if (s == NULL || s->constant == NULL || s->constant->dtype != Q8RT_DTYPE_FLOAT32 || s->constant->rank > 1) return 0;
  if (z != NULL && z->constant == NULL) return 0;
  int64_t block = 0;
  if (ir_attr_int(dq, "block_size", 0, &block, NULL) != Q8RT_OK || block != 0) return 0;
  return ir_node_attr(dq, "output_dtype") == NULL;
}

static void drop_inputs(ir_graph *g, const ir_node *n) {
  for (int k = 0; k < n->n_inputs; k++) {
    if (n->inputs[k] >= 0 && g->values[n->inputs[k]].consumers > 0) g->values[n->inputs[k]].consumers--;
  }
}

/* A new constant value named after `base` with tensor t. */
static int new_const_value(ir_graph *g, const char *base, const char *suffix, ir_tensor *t) {
  char name[512];
  for (int i = 0; i < 1000; i++) {
    if (i == 0) {
      snprintf(name, sizeof(name), "%.400s#%s", base, suffix);
    } else {
      snprintf(name, sizeof(name), "%.400s#%s%d", base, suffix, i);
    }
    if (ir_graph_find_value(g, name) >= 0) continue;
    const int v = ir_graph_intern_value(g, name);
    if (v < 0) return -1;
    ir_value *val = &g->values[v];
    val->constant = t;
    val->dtype = t->dtype;
    val->rank = t->rank;
    memcpy(val->dims, t->dims, sizeof(val->dims));
    return v;
  }
  return -1;
}

/* Step 1: a shape op between a constant 8-bit weight and its DequantizeLinear is folded into the
 * constant (the DQ's axis is already written for the op's output layout). */
static q8rt_status fold_before_dq(ir_graph *g, int *changed, q8rt_error *err) {
  const int n_nodes = g->n_nodes;
  for (int di = 0; di < n_nodes; di++) {
    ir_node *dq = &g->nodes[di];
    if (dq->removed || !ir_is_onnx_op(dq, "DequantizeLinear") || dq->n_inputs < 1 || dq->inputs[0] < 0) continue;
    const int sv = dq->inputs[0];
    ir_node *s = ir_value_producer(g, sv);
    if (!is_shape_op(s) || s->n_outputs != 1 || g->values[sv].graph_output >= 0) continue;
    const ir_value *wv = ir_node_input(g, s, 0);
    if (wv == NULL || wv->constant == NULL || !q8rt_dtype_is_8bit(wv->constant->dtype)) continue;
    const ir_tensor *w = wv->constant;
    int64_t out[Q8RT_MAX_RANK], perm[Q8RT_MAX_RANK];
    int out_rank = 0, is_t = 0;
    if (!shape_op_result(g, s, w->dims, w->rank, out, &out_rank, perm, &is_t)) continue;
    ir_tensor *t;
    q8rt_status st = apply_shape(g, w, out, out_rank, perm, is_t, &t, err);
    if (st != Q8RT_OK) return st;
    /* the op's output becomes that constant; the op goes */
    ir_value *o = &g->values[sv];
    o->constant = t;
    o->dtype = t->dtype;
    o->rank = t->rank;
    memcpy(o->dims, t->dims, sizeof(o->dims));
    o->producer = -1;
    drop_inputs(g, s);
    s->removed = 1;
    *changed = 1;
  }
  return Q8RT_OK;
}

/* Step 2: DequantizeLinear -> shape op feeding a Conv's weights becomes shape-op(W) ->
 * DequantizeLinear with the axis moved along, or a note on the Conv when the axis cannot move. */
static q8rt_status fold_after_dq(ir_graph *g, int ci, int *changed, q8rt_error *err) {
  for (int guard = 0; guard < 64; guard++) {
    /* walk back from the Conv's weights through shape ops to the first one after a DQ */
    int sv = g->nodes[ci].inputs[1];
    ir_node *s = ir_value_producer(g, sv);
    if (!is_shape_op(s)) return Q8RT_OK;
    ir_node *dq = NULL;
    for (int depth = 0; depth < 64; depth++) {
      if (s->n_inputs < 1 || s->n_outputs != 1) return Q8RT_OK;
      ir_node *p = ir_value_producer(g, s->inputs[0]);
      if (is_shape_op(p)) {
        sv = s->inputs[0];
        s = p;
        continue;
      }
      dq = p;
      break;
    }
    if (dq == NULL || !const_weight_dq(g, dq) || g->values[sv].graph_output >= 0) return Q8RT_OK;
    const ir_tensor *w = g->values[dq->inputs[0]].constant;
    const ir_tensor *sc = g->values[dq->inputs[1]].constant;
    int64_t out[Q8RT_MAX_RANK], perm[Q8RT_MAX_RANK];
    int out_rank = 0, is_t = 0;
    if (!shape_op_result(g, s, w->dims, w->rank, out, &out_rank, perm, &is_t)) return Q8RT_OK;
    int64_t axis = 0;
    if (sc->count != 1 || sc->rank == 1) { /* per-axis (a 1-element 1-D scale is per tensor to q8rt and ORT) */
      int64_t a = 1;
      if (ir_attr_int(dq, "axis", 1, &a, NULL) != Q8RT_OK) return Q8RT_OK;
      if (a < 0) a += w->rank;
      if (a < 0 || a >= w->rank) return Q8RT_OK;
      if (sc->count != 1) {
        int b = -1;
        if (is_t) {
          for (int i = 0; i < out_rank; i++) {
            if (perm[i] == a) b = i;
          }
        } else {
          b = reshape_axis(w->dims, w->rank, (int)a, out, out_rank);
        }
        if (b < 0) {
          char din[128], dout[128], note[512];
          fmt_dims(din, sizeof(din), w->dims, w->rank);
          fmt_dims(dout, sizeof(dout), out, out_rank);
          snprintf(note, sizeof(note),
                   "weights not fused: %s '%s' merges or splits the per-channel axis %lld (%lld channels) of "
                   "DequantizeLinear '%s' (%s -> %s); runs in float exactly as written",
                   s->op_type, s->name, (long long)a, (long long)w->dims[a], dq->name, din, dout);
          ir_node *conv = &g->nodes[ci];
          if (conv->note == NULL) conv->note = q8rt_pool_strdup(&g->pool, note);
          return Q8RT_OK;
        }
        axis = b;
      }
    }
    /* build shape-op(W) and a DequantizeLinear of it producing the shape op's output */
    ir_tensor *t;
    q8rt_status st = apply_shape(g, w, out, out_rank, perm, is_t, &t, err);
    if (st != Q8RT_OK) return st;
    const int wv = new_const_value(g, g->values[dq->inputs[0]].name, is_t ? "transposed" : "reshaped", t);
    if (wv < 0) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory folding '%s'", s->name);
    const int n_in = dq->n_inputs;
    int *in = q8rt_pool_array(&g->pool, (size_t)n_in, sizeof(int));
    int *outs = q8rt_pool_array(&g->pool, 1, sizeof(int));
    ir_attr *attrs = q8rt_pool_array(&g->pool, (size_t)dq->n_attrs + 1, sizeof(ir_attr));
    char name[512];
    snprintf(name, sizeof(name), "%.400s#%s", dq->name, s->name);
    const char *nm = q8rt_pool_strdup(&g->pool, name);
    if (in == NULL || outs == NULL || attrs == NULL || nm == NULL) {
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory folding '%s'", s->name);
    }
    for (int k = 0; k < n_in; k++) in[k] = dq->inputs[k];
    in[0] = wv;
    outs[0] = sv;
    int n_attrs = 0, have_axis = 0;
    for (int k = 0; k < dq->n_attrs; k++) {
      attrs[n_attrs] = dq->attrs[k];
      if (strcmp(dq->attrs[k].name, "axis") == 0) {
        attrs[n_attrs].type = IR_ATTR_INT;
        attrs[n_attrs].i = axis;
        have_axis = 1;
      }
      n_attrs++;
    }
    if (!have_axis) {
      memset(&attrs[n_attrs], 0, sizeof(ir_attr));
      attrs[n_attrs].name = "axis";
      attrs[n_attrs].type = IR_ATTR_INT;
      attrs[n_attrs].i = axis;
      n_attrs++;
    }
    const int dqi = (int)(dq - g->nodes), si = (int)(s - g->nodes);
    const int ni = ir_graph_add_node(g);
    if (ni < 0) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory folding '%s'", name);
    dq = &g->nodes[dqi]; /* the node array may have moved */
    s = &g->nodes[si];
    ir_node *f = &g->nodes[ni];
    f->name = nm;
    f->op_type = dq->op_type;
    f->domain = dq->domain;
    f->opset = dq->opset;
    f->n_inputs = n_in;
    f->inputs = in;
    f->n_outputs = 1;
    f->outputs = outs;
    f->n_attrs = n_attrs;
    f->attrs = attrs;
    f->note = "weights' shape op folded into the constant at load";
    drop_inputs(g, s);
    s->removed = 1;
    for (int k = 0; k < n_in; k++) {
      if (in[k] >= 0) g->values[in[k]].consumers++;
    }
    g->values[sv].producer = ni;
    *changed = 1;
  }
  return Q8RT_OK;
}

q8rt_status pass_fold_qdq_weights(ir_graph *g, q8rt_error *err) {
  for (int round = 0; round < 64; round++) {
    int changed = 0;
    q8rt_status st = fold_before_dq(g, &changed, err);
    if (st != Q8RT_OK) return st;
    const int n_nodes = g->n_nodes;
    for (int ci = 0; ci < n_nodes; ci++) {
      ir_node *conv = &g->nodes[ci];
      if (conv->removed || !ir_is_onnx_op(conv, "Conv") || conv->n_inputs < 2 || conv->inputs[1] < 0) continue;
      if ((st = fold_after_dq(g, ci, &changed, err)) != Q8RT_OK) return st;
    }
    if (!changed) break;
  }
  return Q8RT_OK;
}
