/* PRelu (float32): y = x < 0 ? x * slope : x, slope broadcast to X (ONNX Runtime's functor; exact).
 * The common per-channel slope [C, 1, 1] makes the slope constant along each merged row: the
 * f32-vbinary prelu kernels (the c form; the vector form for a slope as large as X's rows), each
 * lane the scalar operation (x < 0 exactly: -0 and NaN keep x). */
#include <string.h>

#include "op.h"
#include "op_util.h"

typedef struct prelu_geom {
  op_bcast_geom g;
} prelu_geom;

_Static_assert(sizeof(prelu_geom) <= Q8RT_GEOM_BYTES, "prelu_geom too large");

static q8rt_status prelu_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  if (n->n_inputs != 2 || n->n_outputs != 1 || n->inputs[0] < 0 || n->inputs[1] < 0 || n->outputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "PRelu node '%s': expects 2 inputs (X, slope) and 1 output",
                     n->name);
  }
  q8rt_f32_vbinary_set *set = q8rt_pool_alloc(ctx->pool, sizeof(*set), 16);
  if (set == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "PRelu node '%s': out of memory", n->name);
  *set = *op_f32_vbinary_set(ctx->isa, ctx->backend);
  ctx->kernel = op_f32_vbinary_name(ctx->isa, ctx->backend, OP_VBIN_PRELU, OP_VBIN_VC);
  ctx->reason = "broadcast slope: rows of X with the slope constant or contiguous through the vector kernel";
  *out = set;
  return Q8RT_OK;
}

static q8rt_status prelu_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                               void *geom, q8rt_error *err) {
  (void)params;
  for (int i = 0; i < 2; i++) {
    if (in[i].dtype != Q8RT_DTYPE_FLOAT32) {
      return q8rt_fail(err, in[i].dtype == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                       "PRelu node '%s': input %d (%s) is %s (q8rt supports float32 here)", n->name, i,
                       i ? "slope" : "X", q8rt_onnx_type_name(in[i].dtype));
    }
  }
  const op_shape *shapes[2] = {&in[0], &in[1]};
  memset(out, 0, sizeof(*out));
  q8rt_status st = op_broadcast_shapes(n, shapes, 2, out, err);
  if (st != Q8RT_OK) return st;
  out->dtype = Q8RT_DTYPE_FLOAT32;
  /* the slope broadcasts to X, never the other way (unidirectional) */
  if (out->rank >= 0 && in[0].rank >= 0) {
    bool same = out->rank == in[0].rank;
    for (int d = 0; same && d < out->rank; d++) same = out->dims[d] == in[0].dims[d] || in[0].dims[d] < 0;
    if (!same) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "PRelu node '%s': slope does not broadcast to the shape of X", n->name);
    }
  }
  if (!concrete || out->rank < 0 || geom == NULL) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(out->dims, out->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "PRelu node '%s': output is too large", n->name);
  }
  op_bcast_geom_init(&((prelu_geom *)geom)->g, shapes, 2, out);
  return Q8RT_OK;
}

/* The merged rows: a contiguous X with the slope constant along the row (per channel) or
 * contiguous beside it through the f32-vbinary prelu kernels; other strides element by element,
 * the same operation. */
static void prelu_row(const void *ctx, size_t n, const void *const *src, const size_t *st, void *dst) {
  const q8rt_f32_vbinary_set *set = ctx;
  const float *x = src[0], *s = src[1];
  float *y = dst;
  if (st[0] == 1 && st[1] <= 1) {
    set->fn[OP_VBIN_PRELU][st[1] == 0 ? OP_VBIN_VC : OP_VBIN_VV](n, x, s, y);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    const float v = x[i * st[0]];
    y[i] = v < 0.0f ? v * s[i * st[1]] : v;
  }
}

static void prelu_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx) {
  (void)workspace, (void)ctx;
  const void *src[2] = {in[0].data, in[1].data};
  const size_t es[2] = {4, 4};
  op_bcast_run(&((const prelu_geom *)geom)->g, prelu_row, params, src, es, out[0].data, 4);
}

const op_def q8rt_op_prelu = {
    .op_type = "PRelu", .domain = "", .min_opset = 6, .prepare = prelu_prepare, .infer = prelu_infer, .run = prelu_run};
