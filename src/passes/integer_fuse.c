/* ONNX Runtime's dynamic quantization writes every quantized convolution and matrix product as
 *   DynamicQuantizeLinear -> ConvInteger | MatMulInteger -> Cast(float) -> Mul(x_scale * w_scale)
 *   [-> Add(bias)]
 * (the scale product a Mul of DynamicQuantizeLinear's scale output and the weights' constant
 * scale). Here the Cast, the Mul and the Add become the output stage of one ConvIntegerToFloat
 * node (src/ops/conv_integer.c) or MatMulIntegerToFloat node
 * (src/ops/qlinear_matmul_qgemm_matmul_integer.c), which computes the same float32 operations in the same order
 * (int32 -> float rounded to nearest even, one multiply, one add, never fused): the bytes equal
 * running the nodes, without three passes over the tensor and two int32/float copies of it.
 *
 * A chain qualifies when each intermediate value has exactly one reader and is no graph output,
 * all nodes are of the same branch, the multiplier has one element and cannot broadcast the
 * output to a larger rank (a constant of rank <= the output's, or a Mul of such constants and
 * DynamicQuantizeLinear scale outputs), and the bias is a constant float32 of one value or one
 * per output channel (shape [M, 1, ...] right-aligned to the NCHW output, rank <= the output's;
 * MatMulInteger with a constant 2-D B: a scale of rank <= 1, a bias of rank <= 1 with 1 or N values).
 * Runs on the planner's topological order after constant folding (the bias comes out of a folded
 * Reshape); the fused node takes the last node's place in that order, where every input it reads
 * is already computed. The reference backend runs the graph as written.
 *
 * Some quantizers (CRNN's vendor_dyn) quantize the bias at run time instead and add it in int32
 * before the Cast: ConvInteger -> Add(int32 bias) -> Cast -> Mul [-> Add]. That Add becomes
 * ConvIntegerToFloat's input 6, added to the accumulator before the conversion (wrapping int32, as
 * the Add): a constant int32 per-channel bias, or the output of a Reshape whose constant shape is 1
 * everywhere except at the channel axis (M or -1; the fused node checks at bind that it holds 1
 * or M values, which is what the Add could broadcast). */
#include <string.h>

#include "passes.h"

/* The only live, not folded node reading value v (reading it once), or NULL. */
static ir_node *sole_reader(ir_graph *g, int v, const int *order, int count, const unsigned char *done) {
  if (v < 0 || g->values[v].graph_output >= 0) return NULL;
  ir_node *found = NULL;
  for (int i = 0; i < count; i++) {
    ir_node *n = &g->nodes[order[i]];
    if (done[order[i]] || n->removed) continue;
    for (int k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] != v) continue;
      if (found != NULL) return NULL;
      found = n;
    }
  }
  return found;
}

static int is_f32_const(const ir_value *v) { return v->constant != NULL && v->constant->dtype == Q8RT_DTYPE_FLOAT32; }

/* A factor of the scale: a one-element float32 constant of rank <= max_rank, or the scale output
 * of a DynamicQuantizeLinear (a float32 scalar by its definition). */
static int scale_factor(ir_graph *g, int v, int max_rank) {
  if (v < 0) return 0;
  const ir_value *val = &g->values[v];
  if (val->constant != NULL) return is_f32_const(val) && val->constant->count == 1 && val->constant->rank <= max_rank;
  const ir_node *p = ir_value_producer(g, v);
  return ir_is_onnx_op(p, "DynamicQuantizeLinear") && p->n_outputs >= 2 && p->outputs[1] == v;
}

/* The multiplier: a factor, or a Mul of two factors. */
static int scale_ok(ir_graph *g, int v, int max_rank, const unsigned char *done) {
  if (scale_factor(g, v, max_rank)) return 1;
  const ir_node *p = ir_value_producer(g, v);
  if (!ir_is_onnx_op(p, "Mul") || p->n_inputs != 2 || done[p - g->nodes]) return 0;
  return scale_factor(g, p->inputs[0], max_rank) && scale_factor(g, p->inputs[1], max_rank);
}

/* A bias that adds one value per output channel m of an NCHW output of rank R (M channels). */
static int bias_ok(const ir_value *b, int R, int64_t M, int is_mm) {
  if (!is_f32_const(b)) return 0;
  const ir_tensor *t = b->constant;
  if (t->rank > R) return 0;
  for (int d = 0; d < t->rank; d++) {
    const int axis = R - t->rank + d;
    if (t->dims[d] != 1 && !(axis == (is_mm ? R - 1 : 1) && t->dims[d] == M)) return 0;
  }
  return 1;
}

/* An int32 bias added to ConvInteger's output (M channels, rank R) that is one value per channel
 * or one value: a constant, or a Reshape to a constant shape that is 1 except at the channel axis. */
static int int_bias_ok(ir_graph *g, int v, int R, int64_t M) {
  if (v < 0) return 0;
  const ir_value *val = &g->values[v];
  if (val->constant != NULL) {
    const ir_tensor *t = val->constant;
    if (t->dtype != Q8RT_DTYPE_INT32 || t->rank > R) return 0;
    for (int d = 0; d < t->rank; d++) {
      if (t->dims[d] != 1 && !(R - t->rank + d == 1 && t->dims[d] == M)) return 0;
    }
    return 1;
  }
  const ir_node *p = ir_value_producer(g, v);
  if (!ir_is_onnx_op(p, "Reshape") || p->n_inputs != 2 || p->n_outputs != 1 || p->outputs[0] != v) return 0;
  const ir_value *sv = ir_node_input(g, p, 1);
  if (sv == NULL || sv->constant == NULL) return 0;
  const ir_tensor *s = sv->constant;
  if (s->dtype != Q8RT_DTYPE_INT64 || s->rank != 1 || s->count > R) return 0;
  const int64_t *dims = s->data;
  for (int64_t d = 0; d < s->count; d++) {
    const int channel = R - (int)s->count + (int)d == 1;
    if (dims[d] != 1 && !(channel && (dims[d] == M || dims[d] == -1))) return 0;
  }
  return 1;
}

q8rt_status pass_fuse_integer_outputs(ir_graph *g, const int *order, int count, unsigned char *done, q8rt_error *err) {
  for (int i = 0; i < count; i++) {
    ir_node *conv = &g->nodes[order[i]];
    const int is_mm = ir_is_onnx_op(conv, "MatMulInteger");
    if (done[order[i]] || conv->removed || (!ir_is_onnx_op(conv, "ConvInteger") && !is_mm) || conv->n_outputs != 1 ||
        conv->n_inputs < 2 || conv->n_inputs > 4) {
      continue;
    }
    const ir_value *w = ir_node_input(g, conv, 1);
    if (w == NULL || w->constant == NULL ||
        (is_mm ? w->constant->rank != 2 : w->constant->rank != 3 && w->constant->rank != 4))
      continue;
    /* the scale and the bias may not raise the output's rank: <= 1 for MatMulInteger (its output
     * has rank 1 or more), the weights' for ConvInteger; the bias varies along the channel axis
     * (NCHW axis 1) or MatMul's last one */
    const int R = is_mm ? 1 : w->constant->rank;
    const int64_t M = is_mm ? w->constant->dims[1] : w->constant->dims[0];
    ir_node *cast = sole_reader(g, conv->outputs[0], order, count, done);
    /* ConvInteger -> Add(int32 bias) first: the Add becomes input 6 */
    ir_node *iadd = NULL;
    int ib = -1;
    if (!is_mm && ir_is_onnx_op(cast, "Add") && cast->n_inputs == 2 && cast->n_outputs == 1 &&
        cast->guard == conv->guard && cast->inputs[0] != cast->inputs[1]) {
      ib = cast->inputs[0] == conv->outputs[0] ? cast->inputs[1] : cast->inputs[0];
      if (!int_bias_ok(g, ib, R, M)) continue;
      iadd = cast;
      cast = sole_reader(g, iadd->outputs[0], order, count, done);
    }
    int64_t to = 0;
    if (!ir_is_onnx_op(cast, "Cast") || cast->n_inputs != 1 || cast->n_outputs != 1 ||
        ir_attr_int(cast, "to", 0, &to, NULL) != Q8RT_OK || to != 1 /* FLOAT */) {
      continue;
    }
    ir_node *mul = sole_reader(g, cast->outputs[0], order, count, done);
    if (!ir_is_onnx_op(mul, "Mul") || mul->n_inputs != 2 || mul->n_outputs != 1 || mul->inputs[0] == mul->inputs[1])
      continue;
    const int s = mul->inputs[0] == cast->outputs[0] ? mul->inputs[1] : mul->inputs[0];
    if (!scale_ok(g, s, R, done)) continue;
    if (cast->guard != conv->guard || mul->guard != conv->guard) continue;
    ir_node *add = sole_reader(g, mul->outputs[0], order, count, done);
    int b = -1;
    if (ir_is_onnx_op(add, "Add") && add->n_inputs == 2 && add->n_outputs == 1 && add->guard == conv->guard &&
        add->inputs[0] != add->inputs[1]) {
      b = add->inputs[0] == mul->outputs[0] ? add->inputs[1] : add->inputs[0];
      if (!bias_ok(&g->values[b], R, M, is_mm)) b = -1;
    }
    if (b < 0) add = NULL;
    ir_node *last = add != NULL ? add : mul;
    int *in = q8rt_pool_array(&g->pool, 7, sizeof(int));
    if (in == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory fusing node '%s'", conv->name);
    for (int k = 0; k < 4; k++) in[k] = k < conv->n_inputs ? conv->inputs[k] : -1;
    in[4] = s;
    in[5] = b;
    in[6] = ib;
    const int out = last->outputs[0];
    /* the dropped values are read by nobody now */
    g->values[conv->outputs[0]].consumers = 0;
    g->values[cast->outputs[0]].consumers = 0;
    g->values[conv->outputs[0]].producer = -1;
    g->values[cast->outputs[0]].producer = -1;
    if (iadd != NULL) {
      g->values[iadd->outputs[0]].consumers = 0;
      g->values[iadd->outputs[0]].producer = -1;
    }
    if (add != NULL) {
      g->values[mul->outputs[0]].consumers = 0;
      g->values[mul->outputs[0]].producer = -1;
    }
    const int last_index = (int)(last - g->nodes);
    last->name = conv->name;
    last->op_type = is_mm ? "MatMulIntegerToFloat" : "ConvIntegerToFloat";
    last->domain = "q8rt";
    last->opset = 1;
    last->n_inputs = ib >= 0 ? 7 : b >= 0 ? 6 : 5;
    last->inputs = in;
    last->n_attrs = conv->n_attrs;
    last->attrs = conv->attrs;
    last->note =
        iadd != NULL  ? (add != NULL ? "ConvInteger -> Add(int32) -> Cast -> Mul -> Add as one node (the int32 bias "
                                       "and the float ops in its output stage)"
                                     : "ConvInteger -> Add(int32) -> Cast -> Mul as one node (the int32 bias and the "
                                       "float ops in its output stage)")
        : add != NULL ? (is_mm ? "MatMulInteger -> Cast -> Mul -> Add as one node (the float ops after its GEMM)"
                               : "ConvInteger -> Cast -> Mul -> Add as one node (the float ops in its output stage)")
                      : (is_mm ? "MatMulInteger -> Cast -> Mul as one node (the float ops after its GEMM)"
                               : "ConvInteger -> Cast -> Mul as one node (the float ops in its output stage)");
    g->values[out].producer = last_index;
    const ir_node *gone[4] = {conv, cast, add != NULL ? mul : NULL, iadd};
    for (int k = 0; k < 4; k++) {
      if (gone[k] == NULL) continue;
      const int gi = (int)(gone[k] - g->nodes);
      g->nodes[gi].removed = 1;
      done[gi] = 1;
    }
  }
  return Q8RT_OK;
}
