/* QDQ fusion and dead-node removal. See passes.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "passes.h"
#include "q8rt-math.h"

static const ir_tensor *const_input(const ir_graph *g, const ir_node *n, int k) {
  const ir_value *v = ir_node_input(g, n, k);
  return v != NULL ? v->constant : NULL;
}

/* A per-tensor Q or DQ: constant float scalar scale, constant 8-bit scalar zero point (or none). */
static int per_tensor_qdq(const ir_graph *g, const ir_node *n) {
  const ir_tensor *s = const_input(g, n, 1);
  if (s == NULL || s->dtype != Q8RT_DTYPE_FLOAT32 || s->count != 1) return 0;
  if (ir_node_input(g, n, 2) != NULL) {
    const ir_tensor *z = const_input(g, n, 2);
    if (z == NULL || z->count != 1 || !q8rt_dtype_is_8bit(z->dtype)) return 0;
  }
  return 1;
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
      ir_node *dq = ir_value_producer(g, bv);
      if (!ir_is_onnx_op(dq, "DequantizeLinear")) return NULL;
      bq = const_input(g, dq, 0);
      bs = const_input(g, dq, 1);
      if (bq == NULL || bs == NULL || bq->dtype != Q8RT_DTYPE_INT32 || bq->count != m ||
          bs->dtype != Q8RT_DTYPE_FLOAT32 || (bs->count != 1 && bs->count != m)) {
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
      const float r = real / s;
      if (!(r >= -2147483648.0f && r < 2147483648.0f)) return NULL; /* non-finite or out of int32 */
      o[c] = q8rt_cvt_rne(r);
      requantized = 1;
    } else {
      const float real = ((const float *)bf->data)[c];
      const float r = real / s;                                     /* float32 division, as PyTorch */
      if (!(r >= -2147483648.0f && r < 2147483648.0f)) return NULL; /* non-finite or out of int32 */
      o[c] = q8rt_cvt_rne(r);
      requantized = 1;
    }
  }
  if (bf != NULL) {
    *note =
        "fused from DequantizeLinear -> Conv -> QuantizeLinear; float bias quantized at load (scale x_scale*w_scale)";
  } else if (requantized) {
    *note = "fused from DequantizeLinear -> Conv -> QuantizeLinear; bias requantized to scale x_scale*w_scale";
  } else {
    *note = "fused from DequantizeLinear -> Conv -> QuantizeLinear";
  }
  return out;
}

/* The one live node reading value v (v not a graph output), or NULL. */
static ir_node *only_consumer(ir_graph *g, int v) {
  if (v < 0 || g->values[v].graph_output >= 0 || g->values[v].consumers != 1) return NULL;
  for (int k = 0; k < g->n_nodes; k++) {
    ir_node *c = &g->nodes[k];
    if (c->removed) continue;
    for (int j = 0; j < c->n_inputs; j++) {
      if (c->inputs[j] == v) return c;
    }
  }
  return NULL;
}

/* Clip's constant bounds (attributes before opset 11, optional constant inputs after). */
static int clip_bounds(const ir_graph *g, const ir_node *n, float *lo, float *hi) {
  *lo = -INFINITY;
  *hi = INFINITY;
  if (n->opset < 11) {
    return ir_attr_float(n, "min", -INFINITY, lo, NULL) == Q8RT_OK &&
           ir_attr_float(n, "max", INFINITY, hi, NULL) == Q8RT_OK;
  }
  for (int k = 1; k < n->n_inputs && k < 3; k++) {
    if (n->inputs[k] < 0) continue;
    const ir_tensor *t = const_input(g, n, k);
    if (t == NULL || t->dtype != Q8RT_DTYPE_FLOAT32 || t->count != 1) return 0;
    *(k == 1 ? lo : hi) = *(const float *)t->data;
  }
  return !isnan(*lo) && !isnan(*hi);
}

static void drop_consumers(ir_graph *g, const ir_node *n) {
  for (int k = 0; k < n->n_inputs; k++) {
    if (n->inputs[k] >= 0 && g->values[n->inputs[k]].consumers > 0) g->values[n->inputs[k]].consumers--;
  }
}

/* A new, zeroed attribute `name` appended to the fused node's own copy of its attributes. */
static ir_attr *append_attr(ir_graph *g, ir_node *f, const char *name) {
  ir_attr *attrs = q8rt_pool_array(&g->pool, (size_t)f->n_attrs + 1, sizeof(ir_attr));
  if (attrs == NULL) return NULL;
  if (f->n_attrs > 0) memcpy(attrs, f->attrs, (size_t)f->n_attrs * sizeof(ir_attr));
  ir_attr *a = &attrs[f->n_attrs];
  memset(a, 0, sizeof(*a));
  a->name = name;
  f->attrs = attrs;
  f->n_attrs++;
  return a;
}

/* The fused node's attributes: the conv's plus OP_ATTR_FUSED_CLIP {lo, hi}. */
static q8rt_status fused_clip_attr(ir_graph *g, ir_node *f, float lo, float hi) {
  float *bounds = q8rt_pool_array(&g->pool, 2, sizeof(float));
  ir_attr *a = bounds != NULL ? append_attr(g, f, OP_ATTR_FUSED_CLIP) : NULL;
  if (a == NULL) return Q8RT_ERROR_OUT_OF_MEMORY;
  bounds[0] = lo;
  bounds[1] = hi;
  a->type = IR_ATTR_FLOATS;
  a->floats = bounds;
  a->count = 2;
  return Q8RT_OK;
}

static q8rt_status fuse_convs(ir_graph *g, q8rt_error *err) {
  const int n_nodes = g->n_nodes;
  for (int ci = 0; ci < n_nodes; ci++) {
    ir_node *conv = &g->nodes[ci];
    if (conv->removed || !ir_is_onnx_op(conv, "Conv") || conv->n_inputs < 2 || conv->n_outputs != 1) continue;
    ir_node *dqx = ir_value_producer(g, conv->inputs[0]);
    ir_node *dqw = ir_value_producer(g, conv->inputs[1]);
    if (!ir_is_onnx_op(dqx, "DequantizeLinear") || !ir_is_onnx_op(dqw, "DequantizeLinear")) continue;
    if (!per_tensor_qdq(g, dqx)) continue;
    /* the activation's quantized type: its zero point's, else the value's known dtype */
    const ir_tensor *xz = const_input(g, dqx, 2);
    const ir_value *xq = ir_node_input(g, dqx, 0);
    if (xq == NULL || !(xz != NULL ? q8rt_dtype_is_8bit(xz->dtype) : q8rt_dtype_is_8bit(xq->dtype))) continue;
    /* weights: constant 8-bit, scale per tensor or per output channel (axis 0) */
    const ir_tensor *wq = const_input(g, dqw, 0), *ws = const_input(g, dqw, 1), *wz = const_input(g, dqw, 2);
    if (wq == NULL || ws == NULL || !q8rt_dtype_is_8bit(wq->dtype) || wq->rank < 3 || ws->dtype != Q8RT_DTYPE_FLOAT32)
      continue;
    const int64_t m = wq->dims[0];
    if (ws->count != 1) {
      int64_t axis = 1;
      if (ir_attr_int(dqw, "axis", 1, &axis, NULL) != Q8RT_OK || (axis != 0 && axis != -wq->rank) || ws->count != m)
        continue;
    }
    if (ir_node_input(g, dqw, 2) != NULL && (wz == NULL || wz->dtype != wq->dtype || wz->count != ws->count)) continue;
    /* output: consumed by exactly one per-tensor QuantizeLinear, possibly through a Relu or a
     * Clip with constant bounds, which then become the requantization clamp */
    const int yv = conv->outputs[0];
    ir_node *act = NULL;
    float act_lo = -INFINITY, act_hi = INFINITY;
    ir_node *q = only_consumer(g, yv);
    if (ir_is_onnx_op(q, "Relu") && q->n_outputs == 1) {
      act = q;
      act_lo = 0.0f;
    } else if (ir_is_onnx_op(q, "Clip") && q->n_outputs == 1 && clip_bounds(g, q, &act_lo, &act_hi)) {
      act = q;
    }
    if (act != NULL) q = only_consumer(g, act->outputs[0]);
    const int qin = act != NULL ? act->outputs[0] : yv;
    if (!ir_is_onnx_op(q, "QuantizeLinear") || q->inputs[0] != qin || !per_tensor_qdq(g, q) ||
        ir_node_input(g, q, 2) == NULL)
      continue;

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
    if (in == NULL || out == NULL)
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing '%s'", conv->name);
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
    act = act != NULL ? only_consumer(g, yv) : NULL;
    q = only_consumer(g, qin);
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
    if (act != NULL) {
      if (fused_clip_attr(g, f, act_lo, act_hi) != Q8RT_OK)
        return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing node '%s'", f->name);
      f->note = ir_is_onnx_op(act, "Relu")
                    ? "fused from DequantizeLinear -> Conv -> Relu -> QuantizeLinear (Relu as the clamp)"
                    : "fused from DequantizeLinear -> Conv -> Clip -> QuantizeLinear (Clip as the clamp)";
      drop_consumers(g, act);
      act->removed = 1;
      g->values[qin].producer = -1;
    }
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

/* ---- the other QDQ groups -------------------------------------------------------------------
 * DequantizeLinear -> op -> QuantizeLinear, every DQ and the Q per tensor, becomes the quantized
 * op ONNX Runtime's optimizer would make of it (the QOperator format's op), run by the same
 * kernels; pass-through ops whose DQ and Q carry the same scale and zero point run on the 8-bit
 * data directly. */
enum rule_kind { RULE_BINARY, RULE_UNARY, RULE_CONCAT, RULE_PASS, RULE_PASS_MULTI };
#define QDQ_MAX_OUTPUTS 64 /* Split outputs (as Q8RT_MAX_IO) */

typedef struct qdq_rule {
  const char *op;
  const char *qop;
  const char *domain;
  enum rule_kind kind;
} qdq_rule;

static const qdq_rule g_rules[] = {
    {"Add", "QLinearAdd", "com.microsoft", RULE_BINARY},
    {"Mul", "QLinearMul", "com.microsoft", RULE_BINARY},
    {"MatMul", "QLinearMatMul", "", RULE_BINARY},
    {"GlobalAveragePool", "QLinearGlobalAveragePool", "com.microsoft", RULE_UNARY},
    {"AveragePool", "QLinearAveragePool", "com.microsoft", RULE_UNARY},
    {"Sigmoid", "QLinearSigmoid", "com.microsoft", RULE_UNARY},
    {"LeakyRelu", "QLinearLeakyRelu", "com.microsoft", RULE_UNARY},
    {"Softmax", "QLinearSoftmax", "com.microsoft", RULE_UNARY}, /* + attribute opset: the Softmax's */
    {"Concat", "QLinearConcat", "com.microsoft", RULE_CONCAT},
    {"Reshape", NULL, NULL, RULE_PASS},
    {"Transpose", NULL, NULL, RULE_PASS},
    {"Squeeze", NULL, NULL, RULE_PASS},
    {"Unsqueeze", NULL, NULL, RULE_PASS},
    {"Flatten", NULL, NULL, RULE_PASS},
    {"MaxPool", NULL, NULL, RULE_PASS},
    {"Resize", NULL, NULL, RULE_PASS},
    {"Slice", NULL, NULL, RULE_PASS},
    {"Identity", NULL, NULL, RULE_PASS},
    {"SpaceToDepth", NULL, NULL, RULE_PASS},
    {"DepthToSpace", NULL, NULL, RULE_PASS},
    {"Expand", NULL, NULL, RULE_PASS},
    {"Tile", NULL, NULL, RULE_PASS},
    {"Split", NULL, NULL, RULE_PASS_MULTI}, /* every output through its own Q */
};

/* The 8-bit type a per-tensor DQ reads (from its zero point, else its input's dtype), or 0. */
static q8rt_dtype dq_type(const ir_graph *g, const ir_node *dq) {
  const ir_tensor *z = const_input(g, dq, 2);
  if (z != NULL) return q8rt_dtype_is_8bit(z->dtype) ? z->dtype : Q8RT_DTYPE_UNDEFINED;
  const ir_value *x = ir_node_input(g, dq, 0);
  return x != NULL && q8rt_dtype_is_8bit(x->dtype) ? x->dtype : Q8RT_DTYPE_UNDEFINED;
}

static int same_qparams(const ir_graph *g, const ir_node *dq, const ir_node *q) {
  const ir_tensor *ds = const_input(g, dq, 1), *qs = const_input(g, q, 1);
  const ir_tensor *dz = const_input(g, dq, 2), *qz = const_input(g, q, 2);
  if (memcmp(ds->data, qs->data, sizeof(float)) != 0 || dz == NULL || qz == NULL || dz->dtype != qz->dtype) return 0;
  return memcmp(dz->data, qz->data, 1) == 0;
}

static ir_node *single_q_consumer(ir_graph *g, int v) {
  if (v < 0 || g->values[v].graph_output >= 0 || g->values[v].consumers != 1) return NULL;
  for (int k = 0; k < g->n_nodes; k++) {
    ir_node *c = &g->nodes[k];
    if (c->removed) continue;
    for (int j = 0; j < c->n_inputs; j++) {
      if (c->inputs[j] == v) {
        return ir_is_onnx_op(c, "QuantizeLinear") && j == 0 && per_tensor_qdq(g, c) && ir_node_input(g, c, 2) != NULL
                   ? c
                   : NULL;
      }
    }
  }
  return NULL;
}

/* MatMul's B: a DequantizeLinear of a constant 8-bit [K, N] weight with one scale per column (axis
 * 1, scale and zero point of N values, no block_size): what onnxruntime.quantization's QDQ
 * per-channel settings give a MatMul. ONNX Runtime's QLinearMatMul takes those scales and zero
 * points as its b_scale / b_zero_point (one per column). ORT's optimizer fuses other per-axis
 * weights too (axis 0 of [K, N], any axis of a batched B), but its QLinearMatMul then refuses them
 * at run ("weight zero point must be a scalar, 1D tensor of size 1, or last to second dimension is
 * 1"): those stay DequantizeLinear -> MatMul here. */
static int per_column_weight_dq(const ir_graph *g, const ir_node *dq) {
  const ir_tensor *w = const_input(g, dq, 0), *s = const_input(g, dq, 1);
  if (w == NULL || s == NULL || !q8rt_dtype_is_8bit(w->dtype) || w->rank != 2 || s->dtype != Q8RT_DTYPE_FLOAT32 ||
      s->rank != 1 || s->count != w->dims[1] || s->count < 2 || dq->opset < 13) {
    return 0; /* (before opset 13 a DequantizeLinear has one scale: its own check refuses the model) */
  }
  int64_t axis = 1, block = 0;
  if (ir_attr_int(dq, "axis", 1, &axis, NULL) != Q8RT_OK || (axis != 1 && axis != -1)) return 0;
  if (ir_attr_int(dq, "block_size", 0, &block, NULL) != Q8RT_OK || block != 0) return 0;
  if (ir_node_input(g, dq, 2) != NULL) {
    const ir_tensor *z = const_input(g, dq, 2);
    if (z == NULL || z->dtype != w->dtype || z->rank != 1 || z->count != s->count) return 0;
  }
  return 1;
}

static q8rt_status fuse_groups(ir_graph *g, q8rt_error *err) {
  const int n_nodes = g->n_nodes;
  for (int ni = 0; ni < n_nodes; ni++) {
    ir_node *n = &g->nodes[ni];
    if (n->removed || n->domain[0] != '\0' || n->n_outputs < 1) continue;
    const qdq_rule *rule = NULL;
    for (size_t r = 0; r < sizeof(g_rules) / sizeof(g_rules[0]); r++) {
      if (strcmp(n->op_type, g_rules[r].op) == 0) rule = &g_rules[r];
    }
    if (rule == NULL) continue;
    const int multi = rule->kind == RULE_PASS_MULTI;
    const int pass = rule->kind == RULE_PASS || multi;
    int extra_outputs = 0;
    for (int k = 1; k < n->n_outputs; k++) extra_outputs |= n->outputs[k] >= 0;
    if (extra_outputs && !multi) continue;
    if (n->n_outputs > QDQ_MAX_OUTPUTS) continue;
    /* which inputs are the quantized data */
    int n_data = rule->kind == RULE_BINARY ? 2 : rule->kind == RULE_CONCAT ? n->n_inputs : 1;
    if (n->n_inputs < n_data || n_data < 1 || n_data > 16) continue;
    if (rule->kind == RULE_BINARY && n->n_inputs != 2) continue;
    if (rule->kind == RULE_UNARY && n->n_inputs != 1) continue;
    ir_node *dq[16];
    q8rt_dtype t = Q8RT_DTYPE_UNDEFINED;
    int ok = 1;
    /* MatMul: B may be int8 under uint8 A, as ORT's QLinearMatMul (u8 x s8 -> u8) takes it, and a
     * constant B may have one scale and zero point per column */
    const int mixed_b = strcmp(n->op_type, "MatMul") == 0;
    int b_per_column = 0;
    for (int k = 0; k < n_data && ok; k++) {
      dq[k] = ir_value_producer(g, n->inputs[k]);
      ok = ir_is_onnx_op(dq[k], "DequantizeLinear");
      if (ok && mixed_b && k == 1 && per_column_weight_dq(g, dq[k])) {
        b_per_column = 1;
      } else {
        ok = ok && per_tensor_qdq(g, dq[k]);
      }
      if (ok) {
        const q8rt_dtype tk = dq_type(g, dq[k]);
        const int b_s8 = mixed_b && k == 1 && t == Q8RT_DTYPE_UINT8 && tk == Q8RT_DTYPE_INT8;
        ok = tk != Q8RT_DTYPE_UNDEFINED && (t == Q8RT_DTYPE_UNDEFINED || tk == t || b_s8);
        if (k == 0) t = tk;
      }
    }
    if (!ok) continue;
    const int yv = n->outputs[0];
    ir_node *q = single_q_consumer(g, yv);
    if (q == NULL) continue;
    const ir_tensor *qz = const_input(g, q, 2);
    if (qz->dtype != t) continue;
    if (pass && !same_qparams(g, dq[0], q)) continue;
    /* Split: every output (none omitted) goes to a Q with the DQ's parameters */
    for (int k = 1; k < n->n_outputs && ok && multi; k++) {
      ir_node *qk = single_q_consumer(g, n->outputs[k]);
      ok = qk != NULL && const_input(g, qk, 2)->dtype == t && same_qparams(g, dq[0], qk);
    }
    if (!ok) continue;

    int n_in = 0;
    int *in;
    if (pass) {
      in = q8rt_pool_array(&g->pool, (size_t)n->n_inputs, sizeof(int));
      if (in == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing '%s'", n->name);
      for (int k = 0; k < n->n_inputs; k++) in[k] = n->inputs[k];
      in[0] = dq[0]->inputs[0];
      n_in = n->n_inputs;
    } else {
      in = q8rt_pool_array(&g->pool, (size_t)(3 * n_data + 2), sizeof(int));
      if (in == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing '%s'", n->name);
      if (rule->kind == RULE_CONCAT) {
        in[n_in++] = q->inputs[1];
        in[n_in++] = q->inputs[2];
      }
      for (int k = 0; k < n_data; k++) {
        in[n_in++] = dq[k]->inputs[0];
        in[n_in++] = dq[k]->inputs[1];
        in[n_in++] = dq[k]->n_inputs > 2 ? dq[k]->inputs[2] : -1;
      }
      if (rule->kind != RULE_CONCAT) {
        in[n_in++] = q->inputs[1];
        in[n_in++] = q->inputs[2];
      }
    }
    const int n_out = multi ? n->n_outputs : 1;
    int *out = q8rt_pool_array(&g->pool, (size_t)n_out, sizeof(int));
    if (out == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing '%s'", n->name);
    ir_node *qs[QDQ_MAX_OUTPUTS];
    for (int k = 0; k < n_out; k++) {
      qs[k] = single_q_consumer(g, n->outputs[k]);
      out[k] = qs[k]->outputs[0];
    }
    const int fi = ir_graph_add_node(g);
    if (fi < 0) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing node");
    n = &g->nodes[ni]; /* the node array may have moved */
    for (int k = 0; k < n_out; k++) qs[k] = single_q_consumer(g, n->outputs[k]);
    ir_node *f = &g->nodes[fi];
    f->name = n->name;
    f->op_type = pass ? n->op_type : rule->qop;
    f->domain = pass ? "" : rule->domain;
    f->opset = pass || rule->domain[0] == '\0' ? n->opset : 1;
    f->n_inputs = n_in;
    f->inputs = in;
    f->n_outputs = n_out;
    f->outputs = out;
    f->n_attrs = n->n_attrs;
    f->attrs = n->attrs;
    f->note = pass           ? "DequantizeLinear/QuantizeLinear with equal parameters removed: runs on 8-bit data"
              : b_per_column ? "fused from DequantizeLinear -> op -> QuantizeLinear; B per column"
                             : "fused from DequantizeLinear -> op -> QuantizeLinear";
    if (strcmp(f->op_type, "QLinearSoftmax") == 0) {
      ir_attr *a = append_attr(g, f, "opset");
      if (a == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing '%s'", n->name);
      a->type = IR_ATTR_INT;
      a->i = n->opset;
    }
    if (t == Q8RT_DTYPE_INT8 && strcmp(f->op_type, "QLinearAdd") == 0) {
      ir_attr *a = append_attr(g, f, OP_ATTR_U8_FORMULA);
      if (a == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing '%s'", n->name);
      a->type = IR_ATTR_INT;
      a->i = 1;
    }
    drop_consumers(g, n);
    for (int k = 0; k < n_out; k++) {
      drop_consumers(g, qs[k]);
      qs[k]->removed = 1;
      g->values[n->outputs[k]].producer = -1;
    }
    n->removed = 1;
    for (int k = 0; k < n_in; k++) {
      if (in[k] >= 0) g->values[in[k]].consumers++;
    }
    for (int k = 0; k < n_out; k++) g->values[out[k]].producer = fi;
  }
  return Q8RT_OK;
}

/* DequantizeLinear(A) x DequantizeLinear(constant B) [+ bias] -> Gemm -> QuantizeLinear becomes
 * ONNX Runtime's QGemm (alpha = beta = 1 only: QGemm adds its int32 C unscaled). B may be per
 * tensor or per output column (DQ axis 1, or 0 with transB); the bias follows the conv rules. */
static q8rt_status fuse_gemms(ir_graph *g, q8rt_error *err) {
  const int n_nodes = g->n_nodes;
  for (int gi = 0; gi < n_nodes; gi++) {
    ir_node *gm = &g->nodes[gi];
    if (gm->removed || !ir_is_onnx_op(gm, "Gemm") || gm->n_inputs < 2 || gm->n_outputs != 1) continue;
    float alpha = 1.0f, beta = 1.0f;
    int64_t ta = 0, tb = 0;
    if (ir_attr_float(gm, "alpha", 1.0f, &alpha, NULL) != Q8RT_OK ||
        ir_attr_float(gm, "beta", 1.0f, &beta, NULL) != Q8RT_OK || ir_attr_int(gm, "transA", 0, &ta, NULL) != Q8RT_OK ||
        ir_attr_int(gm, "transB", 0, &tb, NULL) != Q8RT_OK || alpha != 1.0f || beta != 1.0f) {
      continue;
    }
    ir_node *dqa = ir_value_producer(g, gm->inputs[0]), *dqb = ir_value_producer(g, gm->inputs[1]);
    if (!ir_is_onnx_op(dqa, "DequantizeLinear") || !ir_is_onnx_op(dqb, "DequantizeLinear") || !per_tensor_qdq(g, dqa))
      continue;
    const q8rt_dtype t = dq_type(g, dqa);
    const ir_tensor *bq = const_input(g, dqb, 0), *bs = const_input(g, dqb, 1), *bz = const_input(g, dqb, 2);
    if (t == Q8RT_DTYPE_UNDEFINED || bq == NULL || bs == NULL || !q8rt_dtype_is_8bit(bq->dtype) || bq->rank != 2 ||
        bs->dtype != Q8RT_DTYPE_FLOAT32) {
      continue;
    }
    const int64_t n_cols = tb ? bq->dims[0] : bq->dims[1];
    if (bs->count != 1) {
      int64_t axis = 1;
      if (ir_attr_int(dqb, "axis", 1, &axis, NULL) != Q8RT_OK || axis != (tb ? 0 : 1) || bs->count != n_cols) continue;
    }
    if (ir_node_input(g, dqb, 2) != NULL && (bz == NULL || bz->dtype != bq->dtype || bz->count != bs->count)) continue;
    const int yv = gm->outputs[0];
    ir_node *q = only_consumer(g, yv);
    if (!ir_is_onnx_op(q, "QuantizeLinear") || q->inputs[0] != yv || !per_tensor_qdq(g, q) ||
        ir_node_input(g, q, 2) == NULL || const_input(g, q, 2)->dtype != t) {
      continue;
    }
    const float as = *(const float *)const_input(g, dqa, 1)->data;
    const char *note = "fused from DequantizeLinear -> Gemm -> QuantizeLinear";
    ir_tensor *bias = NULL;
    if (gm->n_inputs > 2 && gm->inputs[2] >= 0) {
      bias = fused_bias(g, gm, as, bs, n_cols, &note, err);
      if (bias == NULL) continue;
      note = "fused from DequantizeLinear -> Gemm -> QuantizeLinear";
    }
    char name[512];
    int bias_v = -1;
    if (bias != NULL) {
      snprintf(name, sizeof(name), "%.400s#bias_q", gm->name);
      bias_v = ir_graph_intern_value(g, name);
      if (bias_v < 0) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing node '%s'", gm->name);
      g->values[bias_v].constant = bias;
    }
    int *in = q8rt_pool_array(&g->pool, 9, sizeof(int));
    int *out = q8rt_pool_array(&g->pool, 1, sizeof(int));
    if (in == NULL || out == NULL)
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing '%s'", gm->name);
    in[0] = dqa->inputs[0];
    in[1] = dqa->inputs[1];
    in[2] = dqa->n_inputs > 2 ? dqa->inputs[2] : -1;
    in[3] = dqb->inputs[0];
    in[4] = dqb->inputs[1];
    in[5] = dqb->n_inputs > 2 ? dqb->inputs[2] : -1;
    in[6] = bias_v;
    in[7] = q->inputs[1];
    in[8] = q->inputs[2];
    out[0] = q->outputs[0];
    const int fi = ir_graph_add_node(g);
    if (fi < 0) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing node");
    gm = &g->nodes[gi];
    q = only_consumer(g, yv);
    ir_node *f = &g->nodes[fi];
    f->name = gm->name;
    f->op_type = "QGemm";
    f->domain = "com.microsoft";
    f->opset = 1;
    f->n_inputs = 9;
    f->inputs = in;
    f->n_outputs = 1;
    f->outputs = out;
    f->n_attrs = gm->n_attrs;
    f->attrs = gm->attrs;
    f->note = note;
    drop_consumers(g, gm);
    drop_consumers(g, q);
    gm->removed = 1;
    q->removed = 1;
    g->values[yv].producer = -1;
    for (int k = 0; k < 9; k++) {
      if (in[k] >= 0) g->values[in[k]].consumers++;
    }
    g->values[out[0]].producer = fi;
  }
  return Q8RT_OK;
}

/* Whether MaxPool n's every window holds at least one input element: no dilation, floor mode,
 * explicit (or VALID) pads each smaller than the kernel and together too (an empty input axis then
 * fails the shape check instead of giving windows of padding only). A window of padding only would
 * give float's lowest value, which no 8-bit value dequantizes to. */
static int maxpool_windows_real(const ir_node *n) {
  const int64_t *k = NULL, *pads = NULL, *dil = NULL;
  size_t nk = 0, np = 0, nd = 0;
  int64_t ceil_mode = 0;
  const char *auto_pad = NULL;
  if (ir_attr_ints(n, "kernel_shape", &k, &nk, NULL) != Q8RT_OK || k == NULL || nk == 0 ||
      ir_attr_ints(n, "pads", &pads, &np, NULL) != Q8RT_OK ||
      ir_attr_ints(n, "dilations", &dil, &nd, NULL) != Q8RT_OK ||
      ir_attr_int(n, "ceil_mode", 0, &ceil_mode, NULL) != Q8RT_OK ||
      ir_attr_string(n, "auto_pad", "NOTSET", &auto_pad, NULL) != Q8RT_OK) {
    return 0;
  }
  if (ceil_mode != 0 || (strcmp(auto_pad, "NOTSET") != 0 && strcmp(auto_pad, "VALID") != 0)) return 0;
  if ((pads != NULL && np != 2 * nk) || (dil != NULL && nd != nk)) return 0;
  for (size_t i = 0; i < nk; i++) {
    if (k[i] < 1 || (dil != NULL && dil[i] != 1)) return 0;
    if (pads != NULL && (pads[i] < 0 || pads[nk + i] < 0 || pads[i] >= k[i] - pads[nk + i])) return 0;
  }
  return 1;
}

/* DequantizeLinear -> MaxPool (what ONNX Runtime's QOperator quantizer leaves around MaxPool,
 * often with a QuantizeLinear of other parameters after it) becomes MaxPool on the 8-bit data ->
 * DequantizeLinear. Exact: with a positive finite scale, (x - zp) * scale is non-decreasing in x,
 * so the largest dequantized value of a window is the dequantized largest byte, and every window
 * holds a byte (maxpool_windows_real). The DequantizeLinear -> QuantizeLinear left behind is an
 * elementwise island on 8-bit data: the table pass makes it one lookup table. Runs after
 * fuse_groups, so the QDQ format's equal-parameter case stays a plain 8-bit MaxPool. */
static q8rt_status commute_dq_maxpool(ir_graph *g, q8rt_error *err) {
  const int n_nodes = g->n_nodes;
  for (int ni = 0; ni < n_nodes; ni++) {
    ir_node *n = &g->nodes[ni];
    if (n->removed || !ir_is_onnx_op(n, "MaxPool") || n->n_inputs != 1 || n->n_outputs < 1 || n->outputs[0] < 0)
      continue;
    int extra_outputs = 0;
    for (int k = 1; k < n->n_outputs; k++) extra_outputs |= n->outputs[k] >= 0;
    if (extra_outputs || !maxpool_windows_real(n)) continue;
    ir_node *dq = ir_value_producer(g, n->inputs[0]);
    if (!ir_is_onnx_op(dq, "DequantizeLinear") || !per_tensor_qdq(g, dq) || dq->guard != n->guard) continue;
    const ir_value *x = ir_node_input(g, dq, 0);
    const float scale = *(const float *)const_input(g, dq, 1)->data;
    if (x == NULL || x->constant != NULL || dq_type(g, dq) == Q8RT_DTYPE_UNDEFINED || !(scale > 0.0f) ||
        !isfinite(scale)) {
      continue;
    }
    const int dqi = (int)(dq - g->nodes);
    char name[512];
    snprintf(name, sizeof(name), "%.400s#8bit", n->name);
    const int v8 = ir_graph_intern_value(g, name);
    int *dq_in = q8rt_pool_array(&g->pool, (size_t)dq->n_inputs, sizeof(int));
    int *dq_out = q8rt_pool_array(&g->pool, 1, sizeof(int));
    int *mp_in = q8rt_pool_array(&g->pool, 1, sizeof(int));
    if (v8 < 0 || dq_in == NULL || dq_out == NULL || mp_in == NULL)
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory rewriting '%s'", n->name);
    const ir_value *nv = &g->values[v8];
    if (nv->producer >= 0 || nv->consumers > 0 || nv->graph_input >= 0 || nv->graph_output >= 0 || nv->constant != NULL)
      continue; /* the name is taken */
    const int fi = ir_graph_add_node(g);
    if (fi < 0) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory rewriting node");
    n = &g->nodes[ni]; /* the node array may have moved */
    dq = &g->nodes[dqi];
    ir_node *f = &g->nodes[fi];
    for (int k = 0; k < dq->n_inputs; k++) dq_in[k] = dq->inputs[k];
    dq_in[0] = v8;
    dq_out[0] = n->outputs[0];
    mp_in[0] = dq->inputs[0];
    char *fname = q8rt_pool_alloc(&g->pool, strlen(dq->name) + strlen(n->name) + 2, 1);
    if (fname == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory rewriting '%s'", n->name);
    sprintf(fname, "%s#%s", dq->name, n->name);
    *f = *dq;
    f->name = fname;
    f->inputs = dq_in;
    f->outputs = dq_out;
    f->guard = n->guard;
    f->note = "moved after the MaxPool it fed (the MaxPool runs on the 8-bit data: same values)";
    for (int k = 1; k < dq->n_inputs; k++) {
      if (dq_in[k] >= 0) g->values[dq_in[k]].consumers++;
    }
    g->values[dq->outputs[0]].consumers--; /* n no longer reads it; a DQ nothing reads is removed */
    g->values[dq->inputs[0]].consumers++;
    g->values[v8].producer = ni;
    g->values[v8].consumers = 1;
    g->values[v8].scope = n->guard;
    g->values[n->outputs[0]].producer = fi;
    n->inputs = mp_in;
    n->outputs[0] = v8;
    n->note = "on the 8-bit data of the DequantizeLinear before it, which now follows it";
  }
  return Q8RT_OK;
}

q8rt_status pass_fuse_qdq(ir_graph *g, q8rt_error *err) {
  q8rt_status st = fuse_convs(g, err);
  if (st == Q8RT_OK) st = fuse_gemms(g, err);
  if (st == Q8RT_OK) st = fuse_groups(g, err);
  if (st == Q8RT_OK) st = commute_dq_maxpool(g, err);
  return st;
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
