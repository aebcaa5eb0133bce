#include "plan.h"

#include <string.h>

#include "passes/passes.h"

void plan_value_shape(const ir_value *v, op_shape *out) {
  memset(out, 0, sizeof(*out));
  if (v->constant != NULL) {
    out->dtype = v->constant->dtype;
    out->rank = v->constant->rank;
    memcpy(out->dims, v->constant->dims, sizeof(out->dims));
    return;
  }
  out->dtype = v->dtype;
  out->rank = v->rank;
  memcpy(out->dims, v->dims, sizeof(out->dims));
}

/* Per-tensor quantization parameters visible from the model, for tensor info: the scale/zero
 * point inputs of the quantized ops, when they are scalar constants. */
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

static void annotate_node(ir_graph *g, const ir_node *n) {
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

q8rt_status plan_build(ir_graph *g, q8rt_pool *pool, q8rt_backend backend, plan *out, q8rt_error *err) {
  memset(out, 0, sizeof(*out));
  if (backend != Q8RT_BACKEND_AUTO && backend != Q8RT_BACKEND_REFERENCE) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "backend '%s' is not built into this version of q8rt (available: auto, reference)",
                     q8rt_backend_name(backend));
  }
  int *order = q8rt_pool_array(pool, (size_t)g->n_nodes + 1, sizeof(int));
  if (order == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");
  int count = 0;
  q8rt_status st = pass_topo_order(g, order, &count, err);
  if (st != Q8RT_OK) return st;
  out->steps = q8rt_pool_array(pool, (size_t)count + 1, sizeof(plan_step));
  if (out->steps == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory planning");

  op_shape in_shapes[16], out_shapes[16];
  for (int i = 0; i < count; i++) {
    ir_node *n = &g->nodes[order[i]];
    const op_def *op = op_find(n);
    if (op == NULL) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "node '%s': op %s%s%s (opset %d) is not supported by q8rt",
                       n->name, n->domain[0] ? n->domain : "", n->domain[0] ? "." : "", n->op_type, n->opset);
    }
    if (n->n_inputs > 16 || n->n_outputs > 16) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "node '%s' (%s): too many inputs or outputs", n->name,
                       n->op_type);
    }
    plan_step *s = &out->steps[i];
    op_prepare_ctx ctx = {g, n, pool, backend, "", ""};
    void *params = NULL;
    if ((st = op->prepare(&ctx, &params, err)) != Q8RT_OK) return st;
    s->op = op;
    s->node = n;
    s->params = params;
    s->kernel = ctx.kernel;
    s->reason = ctx.reason;

    for (int k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] >= 0) {
        plan_value_shape(&g->values[n->inputs[k]], &in_shapes[k]);
      } else {
        memset(&in_shapes[k], 0, sizeof(in_shapes[k]));
        in_shapes[k].rank = -1;
      }
    }
    memset(out_shapes, 0, sizeof(out_shapes));
    if ((st = op->infer(params, n, in_shapes, out_shapes, 0, NULL, err)) != Q8RT_OK) return st;
    for (int k = 0; k < n->n_outputs; k++) {
      if (n->outputs[k] < 0) continue;
      ir_value *v = &g->values[n->outputs[k]];
      if (v->graph_output >= 0 && v->dtype != Q8RT_DTYPE_UNDEFINED && v->dtype != out_shapes[k].dtype) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "graph output '%s' is declared %s but node '%s' produces %s",
                         v->name, op_onnx_type_name(v->dtype), n->name, op_onnx_type_name(out_shapes[k].dtype));
      }
      v->dtype = out_shapes[k].dtype;
      v->rank = out_shapes[k].rank;
      memcpy(v->dims, out_shapes[k].dims, sizeof(v->dims));
    }
    annotate_node(g, n);
    if (n->n_inputs > out->max_inputs) out->max_inputs = n->n_inputs;
    if (n->n_outputs > out->max_outputs) out->max_outputs = n->n_outputs;
  }
  out->n_steps = count;
  return Q8RT_OK;
}
