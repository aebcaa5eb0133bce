/* Float output stages of conv nodes (op_float_stage.h). */
#include "op_float_stage.h"

#include <string.h>

/* The f32-vunary ops a stage may run (alpha, beta from q8rt_stage_bounds). */
static int fstage_unary_ok(int64_t op) {
  return op == Q8RT_F32_VLRELU || op == Q8RT_F32_VHSIGMOID || op == Q8RT_F32_VHSWISH || op == Q8RT_F32_VSIGMOID ||
         op == Q8RT_F32_VTANH;
}

q8rt_status op_fstage_prepare(op_prepare_ctx *ctx, op_fstage *s, int first_const, int64_t M, int required,
                              q8rt_error *err) {
  const ir_node *n = ctx->node;
  const int64_t *prog = NULL;
  size_t n_prog = 0;
  q8rt_status st;
  memset(s, 0, sizeof(*s));
  s->bin = *op_f32_vbinary_set(ctx->isa, ctx->backend);
  if ((st = ir_attr_ints(n, "q8rt_stage", &prog, &n_prog, err)) != Q8RT_OK) return st;
  if (ir_node_attr(n, "q8rt_stage") == NULL && !required) return Q8RT_OK;
  const float *bounds = NULL;
  size_t n_bounds = 0;
  for (int i = 0; i < n->n_attrs; i++) {
    if (strcmp(n->attrs[i].name, "q8rt_stage_bounds") == 0 && n->attrs[i].type == IR_ATTR_FLOATS) {
      bounds = n->attrs[i].floats;
      n_bounds = n->attrs[i].count;
    }
  }
  if (n_prog == 0 || n_prog % 3 != 0 || n_prog / 3 > OP_FSTAGE_MAX || n_bounds != n_prog / 3 * 2 || M < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': attributes q8rt_stage / q8rt_stage_bounds (1 to %d ops) and a constant W "
                     "are required",
                     n->op_type, n->name, OP_FSTAGE_MAX);
  }
  s->n = (int)(n_prog / 3);
  for (int k = 0; k < s->n; k++) {
    op_fstage_op *o = &s->op[k];
    const int64_t code = prog[3 * k], a = prog[3 * k + 1], b = prog[3 * k + 2];
    const int binary = code >= 0 && code <= 3,
              unary = code >= OP_FSTAGE_UNARY && fstage_unary_ok(code - OP_FSTAGE_UNARY);
    o->code = (int)code;
    o->kp.lo = code == OP_FSTAGE_CLAMP ? bounds[2 * k] : 0.0f;
    o->kp.hi = code == OP_FSTAGE_CLAMP ? bounds[2 * k + 1] : 0.0f;
    o->kp.alpha = unary ? bounds[2 * k] : 0.0f;
    o->kp.beta = unary ? bounds[2 * k + 1] : 0.0f;
    o->fn = NULL;
    if (code == OP_FSTAGE_CLAMP) o->fn = op_f32_vunary_pick(ctx, Q8RT_F32_VCLAMP, NULL);
    if (unary) o->fn = op_f32_vunary_pick(ctx, (enum q8rt_f32_vunary_op)(code - OP_FSTAGE_UNARY), NULL);
    /* island refs in [0, k]; a constant is -1 - (input index - first_const) */
    const int a_ok = a >= -OP_FSTAGE_MAX && a <= k, b_ok = binary ? b >= -OP_FSTAGE_MAX && b <= k : b == -1;
    if ((!binary && code != OP_FSTAGE_CLAMP && !unary) || !a_ok || !b_ok || (binary && a < 0 && b < 0) ||
        (!binary && a < 0)) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': stage op %d is not valid", n->op_type, n->name, k);
    }
    o->a = a >= 0 ? (int)a : -1;
    o->b = binary && b >= 0 ? (int)b : -1;
    o->c = NULL;
    o->ext = -1;
    if (binary && (a < 0 || b < 0)) {
      const int in = first_const + (int)(-1 - (a < 0 ? a : b));
      const ir_value *cv = in < n->n_inputs ? ir_node_input(ctx->graph, n, in) : NULL;
      if (cv != NULL && cv->constant == NULL) { /* a tensor: its shape is checked in infer */
        o->ext = in;
        s->n_ext++;
        continue;
      }
      if (cv == NULL || cv->constant == NULL || cv->constant->dtype != Q8RT_DTYPE_FLOAT32 ||
          (cv->constant->count != 1 && cv->constant->count != M)) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                         "%s node '%s': stage op %d needs input %d, a float32 constant of 1 or %lld values", n->op_type,
                         n->name, k, in, (long long)M);
      }
      float *c = q8rt_pool_alloc(ctx->pool, (size_t)cv->constant->count * sizeof(float), 16);
      if (c == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
      memcpy(c, cv->constant->data, (size_t)cv->constant->count * sizeof(float));
      o->c = c;
      o->c_per_channel = cv->constant->count != 1;
    }
  }
  /* x * HardSigmoid(x) (hardswish as Paddle exports it: PP-LCNet, PP-OCR) as one f32-vhswish op
   * with the HardSigmoid's alpha and beta: v * hsigmoid(v, alpha, beta) is the same two results
   * rounded (the product commutes, a NaN x included: both operands then carry x's NaN), one pass
   * and kernel call per row fewer. */
  for (int k = 0; k + 1 < s->n; k++) {
    op_fstage_op *h = &s->op[k], *m = &s->op[k + 1];
    const int r = h->a, hv = k + 1;
    if (h->code != OP_FSTAGE_UNARY + Q8RT_F32_VHSIGMOID || m->code != 2 || m->c != NULL || m->ext >= 0 ||
        !((m->a == r && m->b == hv) || (m->a == hv && m->b == r)))
      continue;
    int later = 0; /* the HardSigmoid's value read after the Mul */
    for (int q = k + 2; q < s->n; q++) later |= s->op[q].a == hv || s->op[q].b == hv;
    if (later) continue;
    m->code = OP_FSTAGE_UNARY + Q8RT_F32_VHSWISH;
    m->a = r;
    m->b = -1;
    m->kp = h->kp;
    m->fn = op_f32_vunary_pick(ctx, Q8RT_F32_VHSWISH, NULL);
    for (int q = k; q + 1 < s->n; q++) s->op[q] = s->op[q + 1];
    s->n--;
    for (int q = k; q < s->n; q++) { /* values after the HardSigmoid's move down by one */
      if (s->op[q].a > k) s->op[q].a--;
      if (s->op[q].b > k) s->op[q].b--;
    }
  }
  return Q8RT_OK;
}

q8rt_status op_fstage_check(const op_fstage *s, const op_node *n, const op_shape *in, const op_shape *out, int concrete,
                            q8rt_error *err) {
  for (int k = 0; k < s->n; k++) {
    const int e = s->op[k].ext;
    if (e < 0) continue;
    const op_shape *t = &in[e];
    int same =
        t->rank < 0 || (t->rank == out->rank && (t->dtype == Q8RT_DTYPE_FLOAT32 || t->dtype == Q8RT_DTYPE_UNDEFINED));
    for (int d = 0; same && t->rank >= 0 && d < out->rank; d++) {
      same = t->dims[d] == out->dims[d] || ((t->dims[d] < 0 || out->dims[d] < 0) && !concrete);
    }
    if (!same) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "%s node '%s': stage op %d's input %d must be a float32 tensor of the output's shape",
                       n->op_type, n->name, k, e);
    }
  }
  return Q8RT_OK;
}

void op_fstage_ext_init(const op_fstage *s, const op_tensor *in, const op_tensor *out, op_fstage_ext *e) {
  memset(e, 0, sizeof(*e));
  e->ybase = out[0].data;
  for (int k = 0; k < s->n; k++) {
    if (s->op[k].ext >= 0) e->in[s->op[k].ext] = in[s->op[k].ext].data;
  }
}

void op_fstage_run(const op_fstage *s, const op_fstage_ext *e, size_t ch, float *y, size_t n) {
  if (s->n == 0) return;
  float tmp[OP_FSTAGE_MAX][256];
  for (size_t off = 0; off < n; off += 256) {
    const size_t len = n - off < 256 ? n - off : 256;
    float *yo = y + off;
    for (int k = 0; k < s->n; k++) {
      const op_fstage_op *o = &s->op[k];
      float *dst = k == s->n - 1 ? yo : tmp[k];
      const float *a = o->a < 0 ? NULL : o->a == 0 ? yo : tmp[o->a - 1];
      const float *b = o->b < 0 ? NULL : o->b == 0 ? yo : tmp[o->b - 1];
      if (o->ext >= 0) { /* the tensor operand at these outputs' positions */
        const float *t = e->in[o->ext] + (yo - e->ybase);
        if (a == NULL)
          a = t;
        else
          b = t;
      }
      const float *c = o->c != NULL ? o->c + (o->c_per_channel ? ch : 0) : NULL;
      if (o->fn != NULL) {
        o->fn(len, a, dst, &o->kp);
      } else if (a != NULL && b != NULL) {
        s->bin.fn[o->code][0](len, a, b, dst);
      } else if (a != NULL) {
        s->bin.fn[o->code][1](len, a, c, dst); /* a op c */
      } else {
        s->bin.fn[o->code][2](len, b, c, dst); /* c op b */
      }
    }
  }
}
