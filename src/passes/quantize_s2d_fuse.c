/* The "Focus" prelude of YOLOv5/YOLOX-style detectors, as their quantized ONNX exports write it:
 *   x (float NCHW) -> Slice rows by::b -> Slice cols bx::b -> QuantizeLinear   (b*b times)
 *   -> Concat(axis 1), or a QLinearConcat whose inputs all have its scale and zero point (a copy)
 * becomes one QuantizeSpaceToDepth node (src/ops/quantize_space_to_depth.c) that writes the
 * concatenation channels-last straight from x: no float slices, no concatenation, no layout
 * change before the first convolution (~0.6 ms of a 416x416 detector's 17).
 *
 * A concatenation qualifies when its b*b inputs (b = 2..8) are each a QuantizeLinear (one and the
 * same constant per-tensor scale and 8-bit zero point) of one or two Slices of the same rank-4
 * float x that take every b-th row from a start in [0, b) to the end and every b-th column
 * likewise (constant starts/ends/axes/steps), the b*b (row, column) starts all different, every
 * value in between read only inside the pattern and no graph output, all nodes of one branch.
 * Each element is quantized alone, so the bytes equal the nodes'. Runs on the planner's
 * topological order after constant folding; the reference backend runs the graph as written. */
#include <string.h>

#include "ops/op_util.h"
#include "passes.h"

#define QS2D_MAX_GROUPS 64 /* b <= 8 */

/* Whether every live, not done reader of value v is one of the nodes in `set` (count of them). */
static int read_only_by(const ir_graph *g, int v, const int *order, int count, const unsigned char *done,
                        const int *set, int n_set) {
  if (v < 0 || g->values[v].graph_output >= 0) return 0;
  for (int i = 0; i < count; i++) {
    const ir_node *n = &g->nodes[order[i]];
    if (done[order[i]] || n->removed) continue;
    for (int k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] != v) continue;
      int in_set = 0;
      for (int s = 0; s < n_set; s++) in_set |= set[s] == order[i];
      if (!in_set) return 0;
    }
  }
  return 1;
}

/* Element i of a constant 1-D int32/int64 tensor input, or 0 (and *ok = 0). */
static int64_t const_i64(const ir_value *v, size_t i, int *ok) {
  if (v == NULL || v->constant == NULL || v->constant->rank > 1 || (size_t)v->constant->count <= i ||
      (v->constant->dtype != Q8RT_DTYPE_INT64 && v->constant->dtype != Q8RT_DTYPE_INT32)) {
    *ok = 0;
    return 0;
  }
  return op_load_i64(v->constant->data, v->constant->dtype, i);
}

/* Slice node s on rank-4 data whose dims are `dims` (-1: unknown): for each axis it slices (2 or
 * 3 only), start in [0, b), step b, to the end. Sets start[axis - 2] (it must still be -1). */
static int slice_ok(const ir_graph *g, const ir_node *s, int64_t b, const int64_t *dims, int64_t start[2]) {
  if (s->opset < 10 || s->n_inputs < 3 || s->n_outputs != 1) return 0;
  const ir_value *vs = ir_node_input(g, s, 1), *ve = ir_node_input(g, s, 2);
  const ir_value *va = ir_node_input(g, s, 3), *vp = ir_node_input(g, s, 4);
  if (vs == NULL || ve == NULL || vs->constant == NULL || ve->constant == NULL) return 0;
  const int64_t cnt = vs->constant->count;
  if (cnt < 1 || cnt > 2 || ve->constant->count != cnt) return 0;
  if ((va != NULL && (va->constant == NULL || va->constant->count != cnt)) ||
      (vp != NULL && (vp->constant == NULL || vp->constant->count != cnt)))
    return 0;
  int ok = 1;
  for (int64_t i = 0; i < cnt; i++) {
    int64_t axis = va != NULL ? const_i64(va, (size_t)i, &ok) : i;
    const int64_t st = const_i64(vs, (size_t)i, &ok), en = const_i64(ve, (size_t)i, &ok);
    const int64_t step = vp != NULL ? const_i64(vp, (size_t)i, &ok) : 1;
    if (!ok) return 0;
    if (axis < 0) axis += 4;
    if (axis != 2 && axis != 3) return 0;
    if (step != b || st < 0 || st >= b || start[axis - 2] >= 0) return 0;
    /* to the end: past the dimension when it is known, else the "to the end" idiom */
    if (dims[axis] >= 0 ? en < dims[axis] : en < INT32_MAX) return 0;
    start[axis - 2] = st;
  }
  return 1;
}

/* A live Slice of the concatenation's branch, not fused yet. */
static int is_slice_of(const ir_graph *g, const ir_node *s, const ir_node *cat, const unsigned char *done) {
  return ir_is_onnx_op(s, "Slice") && s->n_inputs >= 3 && s->inputs[0] >= 0 && !done[s - g->nodes] &&
         s->guard == cat->guard;
}

/* How many axes Slice s takes (its starts' length), or 0 when not a constant. */
static int64_t slice_axes(const ir_graph *g, const ir_node *s) {
  const ir_value *vs = ir_node_input(g, s, 1);
  return vs != NULL && vs->constant != NULL ? vs->constant->count : 0;
}

static int same_scalar(const ir_value *a, const ir_value *b) {
  if (a == NULL || b == NULL || a->constant == NULL || b->constant == NULL) return 0;
  const ir_tensor *x = a->constant, *y = b->constant;
  return x->dtype == y->dtype && x->count == 1 && y->count == 1 && x->nbytes == y->nbytes &&
         memcmp(x->data, y->data, x->nbytes) == 0;
}

/* QLinearConcat as a copy: every input's scale and zero point equal to y's (its copy rule). */
static int qcat_copies(const ir_graph *g, const ir_node *cat, int groups) {
  const ir_value *ys = ir_node_input(g, cat, 0), *yz = ir_node_input(g, cat, 1);
  if (ys == NULL || yz == NULL || ys->constant == NULL || yz->constant == NULL) return 0;
  if (ys->constant->dtype != Q8RT_DTYPE_FLOAT32 || ys->constant->count != 1) return 0;
  for (int k = 0; k < groups; k++) {
    const ir_value *xs = ir_node_input(g, cat, 3 + 3 * k), *xz = ir_node_input(g, cat, 4 + 3 * k);
    if (xs == NULL || xs->constant == NULL || xs->constant->dtype != Q8RT_DTYPE_FLOAT32 || xs->constant->count != 1)
      return 0;
    if (*(const float *)xs->constant->data != *(const float *)ys->constant->data || !same_scalar(xz, yz)) return 0;
  }
  return 1;
}

q8rt_status pass_fuse_quantize_space_to_depth(ir_graph *g, const int *order, int count, unsigned char *done,
                                              q8rt_error *err) {
  for (int i = 0; i < count; i++) {
    ir_node *cat = &g->nodes[order[i]];
    if (done[order[i]] || cat->removed || cat->n_outputs != 1) continue;
    const int qlinear = strcmp(cat->op_type, "QLinearConcat") == 0 && strcmp(cat->domain, "com.microsoft") == 0;
    if (!qlinear && !ir_is_onnx_op(cat, "Concat")) continue;
    const int groups = qlinear ? (cat->n_inputs - 2) / 3 : cat->n_inputs;
    if (qlinear && (cat->n_inputs - 2) % 3 != 0) continue;
    int64_t b = 2;
    while (b * b < groups) b++;
    if (groups < 4 || b * b != groups || groups > QS2D_MAX_GROUPS) continue;
    int64_t axis = 0;
    if (ir_node_attr(cat, "axis") == NULL || ir_attr_int(cat, "axis", 0, &axis, NULL) != Q8RT_OK ||
        (axis != 1 && axis != -3))
      continue;
    if (qlinear && !qcat_copies(g, cat, groups)) continue;
    int members[3 * QS2D_MAX_GROUPS]; /* the QuantizeLinear and Slice nodes (indices) */
    int n_members = 0, x = -1, fits = 1;
    int64_t blocks[QS2D_MAX_GROUPS];
    unsigned char seen[QS2D_MAX_GROUPS] = {0};
    const ir_node *q0 = NULL;
    for (int k = 0; k < groups && fits; k++) {
      const int v = cat->inputs[qlinear ? 2 + 3 * k : k];
      ir_node *q = ir_value_producer(g, v);
      fits = ir_is_onnx_op(q, "QuantizeLinear") && q->n_inputs == 3 && q->n_outputs == 1 && !done[q - g->nodes] &&
             q->guard == cat->guard;
      if (!fits) break;
      const ir_value *qs = ir_node_input(g, q, 1), *qz = ir_node_input(g, q, 2);
      fits = qs != NULL && qz != NULL && qs->constant != NULL && qs->constant->dtype == Q8RT_DTYPE_FLOAT32 &&
             qs->constant->count == 1 && qz->constant != NULL && qz->constant->count == 1 &&
             (qz->constant->dtype == Q8RT_DTYPE_UINT8 || qz->constant->dtype == Q8RT_DTYPE_INT8);
      if (fits && q0 != NULL) {
        fits = same_scalar(qs, ir_node_input(g, q0, 1)) && same_scalar(qz, ir_node_input(g, q0, 2));
      }
      /* QLinearConcat copies: its y parameters equal each input's, so the quantizer's too */
      if (fits && qlinear) fits = same_scalar(qz, ir_node_input(g, cat, 1));
      if (!fits) break;
      if (q0 == NULL) q0 = q;
      members[n_members++] = (int)(q - g->nodes);
      /* one Slice of x taking rows and columns, or a Slice of a Slice of x taking one axis each */
      int64_t start[2] = {-1, -1};
      ir_node *chain[2] = {ir_value_producer(g, q->inputs[0]), NULL};
      int depth = 1;
      fits = is_slice_of(g, chain[0], cat, done);
      if (!fits) break;
      if (slice_axes(g, chain[0]) == 1) {
        chain[1] = ir_value_producer(g, chain[0]->inputs[0]);
        fits = is_slice_of(g, chain[1], cat, done) && slice_axes(g, chain[1]) == 1;
        if (!fits) break;
        depth = 2;
      }
      const int cur = chain[depth - 1]->inputs[0];
      const ir_value *xv = cur >= 0 ? &g->values[cur] : NULL;
      fits = xv != NULL && xv->rank == 4 && xv->dtype == Q8RT_DTYPE_FLOAT32;
      if (!fits) break;
      for (int d = 0; d < depth && fits; d++) {
        fits = slice_ok(g, chain[d], b, xv->dims, start);
        int known = 0;
        for (int m = 0; m < n_members; m++) known |= members[m] == (int)(chain[d] - g->nodes);
        if (!known) members[n_members++] = (int)(chain[d] - g->nodes);
      }
      if (!fits || start[0] < 0 || start[1] < 0) {
        fits = 0;
        break;
      }
      if (x < 0) x = cur;
      const int64_t off = start[0] * b + start[1];
      fits = cur == x && !seen[off];
      seen[off] = 1;
      blocks[k] = off;
    }
    if (!fits || x < 0 || g->values[x].rank != 4 || g->values[x].dtype != Q8RT_DTYPE_FLOAT32) continue;
    /* every value in between is read only inside the pattern (the Slices' and QuantizeLinears'
     * outputs), the QuantizeLinears' outputs only by the concatenation */
    int set[3 * QS2D_MAX_GROUPS + 1];
    memcpy(set, members, (size_t)n_members * sizeof(int));
    set[n_members] = (int)(cat - g->nodes);
    for (int m = 0; m < n_members && fits; m++) {
      const ir_node *nd = &g->nodes[members[m]];
      fits = read_only_by(g, nd->outputs[0], order, count, done, set, n_members + 1);
    }
    if (!fits) continue;
    int *in = q8rt_pool_array(&g->pool, 3, sizeof(int));
    ir_attr *attrs = q8rt_pool_array(&g->pool, 2, sizeof(ir_attr));
    int64_t *bl = q8rt_pool_array(&g->pool, (size_t)groups, sizeof(int64_t));
    if (in == NULL || attrs == NULL || bl == NULL) {
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing node '%s'", cat->name);
    }
    in[0] = x;
    in[1] = q0->inputs[1];
    in[2] = q0->inputs[2];
    memcpy(bl, blocks, (size_t)groups * sizeof(int64_t));
    attrs[0].name = "blocksize";
    attrs[0].type = IR_ATTR_INT;
    attrs[0].i = b;
    attrs[1].name = "blocks";
    attrs[1].type = IR_ATTR_INTS;
    attrs[1].ints = bl;
    attrs[1].count = (size_t)groups;
    /* the readers' counts follow: the removed nodes and the old concatenation read nothing now */
    for (int m = 0; m <= n_members; m++) {
      const ir_node *nd = m < n_members ? &g->nodes[members[m]] : cat;
      for (int k = 0; k < nd->n_inputs; k++) {
        if (nd->inputs[k] >= 0 && g->values[nd->inputs[k]].consumers > 0) g->values[nd->inputs[k]].consumers--;
      }
    }
    for (int k = 0; k < 3; k++) g->values[in[k]].consumers++;
    for (int m = 0; m < n_members; m++) {
      ir_node *nd = &g->nodes[members[m]];
      g->values[nd->outputs[0]].consumers = 0;
      g->values[nd->outputs[0]].producer = -1;
      nd->removed = 1;
      done[members[m]] = 1;
    }
    cat->op_type = "QuantizeSpaceToDepth";
    cat->domain = "q8rt";
    cat->opset = 1;
    cat->n_inputs = 3;
    cat->inputs = in;
    cat->n_attrs = 2;
    cat->attrs = attrs;
    cat->note = qlinear ? "Slice -> QuantizeLinear -> QLinearConcat (a copy) per block offset as one node"
                        : "Slice -> QuantizeLinear -> Concat per block offset as one node";
  }
  return Q8RT_OK;
}
