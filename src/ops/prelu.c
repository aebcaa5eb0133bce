/* PRelu (float32): y = x < 0 ? x * slope : x, slope broadcast to X (ONNX Runtime's functor; exact).
 * The common per-channel slope [C, 1, 1] makes the slope constant along each merged row, which
 * runs in blocks of 8 through a local array, the select written as a bit blend under the
 * comparison's mask (x < 0 exactly: -0 and NaN keep x), so GCC's -O2 vectorizer emits packed
 * compare/and/or code; each lane is still the scalar operation (-ffp-contract=off). */
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
  ctx->kernel = "prelu_f32__scalar";
  ctx->reason = "broadcast slope";
  *out = NULL;
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

/* x < 0 ? x * a : x, branch-free */
static inline float prelu1(float x, float a) {
  const float p = x * a;
  uint32_t xi, pi;
  memcpy(&xi, &x, 4);
  memcpy(&pi, &p, 4);
  const uint32_t m = 0u - (uint32_t)(x < 0.0f);
  const uint32_t yi = (pi & m) | (xi & ~m);
  float y;
  memcpy(&y, &yi, 4);
  return y;
}

static void prelu_row(const void *ctx, size_t n, const void *const *src, const size_t *st, void *dst) {
  (void)ctx;
  const float *x = src[0], *s = src[1];
  float *y = dst;
  size_t i = 0;
  if (st[0] == 1 && st[1] == 0) {
    const float a = s[0];
    for (; i + 8 <= n; i += 8) {
      float t[8];
      for (size_t j = 0; j < 8; j++) t[j] = prelu1(x[i + j], a);
      memcpy(y + i, t, sizeof(t));
    }
    for (; i < n; i++) y[i] = x[i] < 0.0f ? x[i] * a : x[i];
    return;
  }
  if (st[0] == 1 && st[1] == 1) {
    for (; i + 8 <= n; i += 8) {
      float t[8];
      for (size_t j = 0; j < 8; j++) t[j] = prelu1(x[i + j], s[i + j]);
      memcpy(y + i, t, sizeof(t));
    }
  }
  for (; i < n; i++) {
    const float v = x[i * st[0]];
    y[i] = v < 0.0f ? v * s[i * st[1]] : v;
  }
}

static void prelu_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx) {
  (void)params, (void)workspace, (void)ctx;
  const void *src[2] = {in[0].data, in[1].data};
  const size_t es[2] = {4, 4};
  op_bcast_run(&((const prelu_geom *)geom)->g, prelu_row, NULL, src, es, out[0].data, 4);
}

const op_def q8rt_op_prelu = {
    .op_type = "PRelu", .domain = "", .min_opset = 6, .prepare = prelu_prepare, .infer = prelu_infer, .run = prelu_run};
