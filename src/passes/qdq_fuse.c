/* QDQ fusion and dead-node removal. See passes.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "passes.h"

static ir_node *producer(ir_graph *g, int v) {
  if (v < 0 || g->values[v].producer < 0) return NULL;
  ir_node *n = &g->nodes[g->values[v].producer];
  return n->removed ? NULL : n;
}

static int is_op(const ir_node *n, const char *op) {
  return n != NULL && strcmp(n->op_type, op) == 0 && n->domain[0] == '\0';
}

static const ir_tensor *const_input(const ir_graph *g, const ir_node *n, int k) {
  const ir_value *v = ir_node_input(g, n, k);
  return v != NULL ? v->constant : NULL;
}

static int is_8bit(q8rt_dtype t) { return t == Q8RT_DTYPE_UINT8 || t == Q8RT_DTYPE_INT8; }

/* A per-tensor Q or DQ: constant float scalar scale, constant 8-bit scalar zero point (or none). */
static int per_tensor_qdq(const ir_graph *g, const ir_node *n) {
  const ir_tensor *s = const_input(g, n, 1);
  if (s == NULL || s->dtype != Q8RT_DTYPE_FLOAT32 || s->count != 1) return 0;
  if (ir_node_input(g, n, 2) != NULL) {
    const ir_tensor *z = const_input(g, n, 2);
    if (z == NULL || z->count != 1 || !is_8bit(z->dtype)) return 0;
  }
  return 1;
}

/* Round half to even of a float, for any magnitude, without the FP environment. */
static double round_half_even(double v) {
  double f = floor(v);
  double d = v - f;
  if (d > 0.5) return f + 1.0;
  if (d < 0.5) return f;
  return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

/* The int32 bias for scale x_scale * w_scale[c]: the DQ'd int32 bias as it is when its scale is
 * exactly that product, otherwise its real value requantized. NULL (not an error) when the bias
 * cannot be expressed (non-finite or out of int32 range): the node then stays unfused. */
static ir_tensor *fused_bias(ir_graph *g, const ir_node *conv, float xs, const ir_tensor *ws, int64_t m,
                             const char **note, q8rt_error *err) {
  const int bv = conv->n_inputs > 2 ? conv->inputs[2] : -1;
  const ir_tensor *bq = NULL, *bs = NULL, *bf = NULL;
  if (bv >= 0) {
    if (g->values[bv].constant != NULL) {
      bf = g->values[bv].constant;
      if (bf->dtype != Q8RT_DTYPE_FLOAT32 || bf->count != m) return NULL;
    } else {
      ir_node *dq = producer(g, bv);
      if (!is_op(dq, "DequantizeLinear")) return NULL;
      bq = const_input(g, dq, 0);
      bs = const_input(g, dq, 1);
      if (bq == NULL || bs == NULL || bq->dtype != Q8RT_DTYPE_INT32 || bq->count != m || bs->dtype != Q8RT_DTYPE_FLOAT32 ||
          (bs->count != 1 && bs->count != m)) {
        return NULL;
      }
      const ir_tensor *bz = const_input(g, dq, 2);
      if (ir_node_input(g, dq, 2) != NULL && (bz == NULL || bz->dtype != Q8RT_DTYPE_INT32)) return NULL;
      if (bz != NULL) {
        for (int64_t i = 0; i < bz->count; i++) {
          if (((const int32_t *)bz->data)[i] != 0) return NULL;
        }
      }
    }
  }
  ir_tensor *out;
  const int64_t dims[1] = {m};
  if (ir_tensor_create(g, Q8RT_DTYPE_INT32, 1, dims, &out, err) != Q8RT_OK) return NULL;
  int32_t *o = out->data;
  int requantized = 0;
  for (int64_t c = 0; c < m; c++) {
    const float wsc = ((const float *)ws->data)[ws->count == 1 ? 0 : c];
    const float s = xs * wsc; /* the scale QLinearConv's int32 bias has */
    if (bv < 0) {
      o[c] = 0;
      continue;
    }
    if (bq != NULL) {
      const float bsc = ((const float *)bs->data)[bs->count == 1 ? 0 : c];
      const int32_t q = ((const int32_t *)bq->data)[c];
      if (memcmp(&bsc, &s, sizeof(float)) == 0) {
        o[c] = q;
        continue;
      }
      const float real = (float)q * bsc; /* what the DequantizeLinear gives */
      const double r = round_half_even((double)(real / s));
      if (!isfinite(r) || r < -2147483648.0 || r > 2147483647.0) return NULL;
      o[c] = (int32_t)r;
      requantized = 1;
    } else {
      const float real = ((const float *)bf->data)[c];
      const double r = round_half_even((double)(real / s)); /* float32 division, as PyTorch */
      if (!isfinite(r) || r < -2147483648.0 || r > 2147483647.0) return NULL;
      o[c] = (int32_t)r;
      requantized = 1;
    }
  }
  if (bf != NULL) {
    *note = "fused from DequantizeLinear -> Conv -> QuantizeLinear; float bias quantized at load (scale x_scale*w_scale)";
  } else if (requantized) {
    *note = "fused from DequantizeLinear -> Conv -> QuantizeLinear; bias requantized to scale x_scale*w_scale";
  } else {
    *note = "fused from DequantizeLinear -> Conv -> QuantizeLinear";
  }
  return out;
}

static void drop_consumers(ir_graph *g, const ir_node *n) {
  for (int k = 0; k < n->n_inputs; k++) {
    if (n->inputs[k] >= 0 && g->values[n->inputs[k]].consumers > 0) g->values[n->inputs[k]].consumers--;
  }
}

q8rt_status pass_fuse_qdq(ir_graph *g, q8rt_error *err) {
  const int n_nodes = g->n_nodes;
  for (int ci = 0; ci < n_nodes; ci++) {
    ir_node *conv = &g->nodes[ci];
    if (conv->removed || !is_op(conv, "Conv") || conv->n_inputs < 2 || conv->n_outputs != 1) continue;
    ir_node *dqx = producer(g, conv->inputs[0]);
    ir_node *dqw = producer(g, conv->inputs[1]);
    if (!is_op(dqx, "DequantizeLinear") || !is_op(dqw, "DequantizeLinear")) continue;
    if (!per_tensor_qdq(g, dqx)) continue;
    /* the activation's quantized type: its zero point's, else the value's known dtype */
    const ir_tensor *xz = const_input(g, dqx, 2);
    const ir_value *xq = ir_node_input(g, dqx, 0);
    if (xq == NULL || !(xz != NULL ? is_8bit(xz->dtype) : is_8bit(xq->dtype))) continue;
    /* weights: constant 8-bit, scale per tensor or per output channel (axis 0) */
    const ir_tensor *wq = const_input(g, dqw, 0), *ws = const_input(g, dqw, 1), *wz = const_input(g, dqw, 2);
    if (wq == NULL || ws == NULL || !is_8bit(wq->dtype) || wq->rank < 3 || ws->dtype != Q8RT_DTYPE_FLOAT32) continue;
    const int64_t m = wq->dims[0];
    if (ws->count != 1) {
      int64_t axis = 1;
      if (ir_attr_int(dqw, "axis", 1, &axis, NULL) != Q8RT_OK || (axis != 0 && axis != -wq->rank) || ws->count != m) continue;
    }
    if (ir_node_input(g, dqw, 2) != NULL && (wz == NULL || wz->dtype != wq->dtype || wz->count != ws->count)) continue;
    /* output: consumed by exactly one per-tensor QuantizeLinear */
    const int yv = conv->outputs[0];
    if (yv < 0 || g->values[yv].graph_output >= 0 || g->values[yv].consumers != 1) continue;
    ir_node *q = NULL;
    for (int k = 0; k < g->n_nodes && q == NULL; k++) {
      ir_node *c = &g->nodes[k];
      if (c->removed) continue;
      for (int j = 0; j < c->n_inputs; j++) {
        if (c->inputs[j] == yv) q = c;
      }
    }
    if (!is_op(q, "QuantizeLinear") || q->inputs[0] != yv || !per_tensor_qdq(g, q) || ir_node_input(g, q, 2) == NULL) continue;

    const float xs = *(const float *)const_input(g, dqx, 1)->data;
    const char *note = NULL;
    ir_tensor *bias = NULL;
    if (conv->n_inputs > 2 && conv->inputs[2] >= 0) {
      bias = fused_bias(g, conv, xs, ws, m, &note, err);
      if (bias == NULL) continue;
    } else {
      note = "fused from DequantizeLinear -> Conv -> QuantizeLinear";
    }
    /* Build the QLinearConv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B. */
    char name[512];
    int bias_v = -1;
    if (bias != NULL) {
      snprintf(name, sizeof(name), "%.400s#bias_q", conv->name);
      bias_v = ir_graph_intern_value(g, name);
      if (bias_v < 0) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing node '%s'", conv->name);
      g->values[bias_v].constant = bias;
    }
    int *in = q8rt_pool_array(&g->pool, 9, sizeof(int));
    int *out = q8rt_pool_array(&g->pool, 1, sizeof(int));
    if (in == NULL || out == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing '%s'", conv->name);
    in[0] = dqx->inputs[0];
    in[1] = dqx->inputs[1];
    in[2] = dqx->n_inputs > 2 ? dqx->inputs[2] : -1;
    in[3] = dqw->inputs[0];
    in[4] = dqw->inputs[1];
    in[5] = dqw->n_inputs > 2 ? dqw->inputs[2] : -1;
    in[6] = q->inputs[1];
    in[7] = q->inputs[2];
    in[8] = bias_v;
    out[0] = q->outputs[0];
    const int ni = ir_graph_add_node(g);
    if (ni < 0) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing node");
    /* the node array may have moved */
    conv = &g->nodes[ci];
    q = NULL;
    for (int k = 0; k < g->n_nodes - 1 && q == NULL; k++) {
      ir_node *c = &g->nodes[k];
      if (!c->removed && c->n_inputs > 0 && c->inputs[0] == yv && is_op(c, "QuantizeLinear")) q = c;
    }
    ir_node *f = &g->nodes[ni];
    f->name = conv->name;
    f->op_type = "QLinearConv";
    f->domain = "";
    f->opset = conv->opset < 10 ? 10 : conv->opset;
    f->n_inputs = 9;
    f->inputs = in;
    f->n_outputs = 1;
    f->outputs = out;
    f->n_attrs = conv->n_attrs;
    f->attrs = conv->attrs;
    f->note = note;
    drop_consumers(g, conv);
    drop_consumers(g, q);
    conv->removed = 1;
    q->removed = 1;
    g->values[yv].producer = -1;
    for (int k = 0; k < 9; k++) {
      if (in[k] >= 0) g->values[in[k]].consumers++;
    }
    g->values[out[0]].producer = ni;
  }
  return Q8RT_OK;
}

void pass_remove_dead_nodes(ir_graph *g) {
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = g->n_nodes - 1; i >= 0; i--) {
      ir_node *n = &g->nodes[i];
      if (n->removed) continue;
      int live = 0;
      for (int k = 0; k < n->n_outputs && !live; k++) {
        const int v = n->outputs[k];
        live = v >= 0 && (g->values[v].consumers > 0 || g->values[v].graph_output >= 0);
      }
      if (live) continue;
      drop_consumers(g, n);
      for (int k = 0; k < n->n_outputs; k++) {
        if (n->outputs[k] >= 0) g->values[n->outputs[k]].producer = -1;
      }
      n->removed = 1;
      changed = 1;
    }
  }
}
