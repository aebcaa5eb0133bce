/* InstanceNormalization and GroupNormalization (float32, X = [N, C, spatial...]).
 *
 * Both normalize sets of elements by their own mean and variance (biased): one set per (n, c) for
 * InstanceNormalization, per (n, group of C / num_groups channels) for GroupNormalization. Mean
 * and variance are summed in double (ONNX Runtime sums in float32 vector lanes, Eigen's order, so
 * the last bits differ either way: the tests bound the difference), then per channel in float32
 * as ORT's InstanceNormalization kernel:
 *   scale_c = (1 / sqrt(var + eps)) * scale[c],  shift_c = B[c] - mean * scale_c,  y = x * scale_c + shift_c.
 * GroupNormalization's scale and bias are per group at opset 18 and per channel from opset 21. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "op_util.h"

typedef struct norm_params {
  int group; /* GroupNormalization */
  int64_t groups;
  float eps;
  int per_group_affine; /* opset 18 GroupNormalization: scale/bias have num_groups entries */
} norm_params;

typedef struct norm_geom {
  size_t n, c, spatial, groups;
} norm_geom;

static q8rt_status norm_prepare_kind(op_prepare_ctx *ctx, void **out, q8rt_error *err, int group) {
  const ir_node *n = ctx->node;
  if (n->n_inputs != 3 || n->n_outputs != 1 || n->inputs[0] < 0 || n->inputs[1] < 0 || n->inputs[2] < 0 ||
      n->outputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 3 inputs (X, scale, B) and 1 output",
                     n->op_type, n->name);
  }
  norm_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  q8rt_status st;
  p->group = group;
  if ((st = ir_attr_float(n, "epsilon", 1e-5f, &p->eps, err)) != Q8RT_OK) return st;
  if (group) {
    if (ir_node_attr(n, "num_groups") == NULL) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "GroupNormalization node '%s': attribute 'num_groups' is missing",
                       n->name);
    }
    if ((st = ir_attr_int(n, "num_groups", 0, &p->groups, err)) != Q8RT_OK) return st;
    if (p->groups < 1 || p->groups > Q8RT_MAX_ELEMENTS) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "GroupNormalization node '%s': num_groups is %lld", n->name,
                       (long long)p->groups);
    }
    int64_t stash;
    if ((st = ir_attr_int(n, "stash_type", 1, &stash, err)) != Q8RT_OK) return st;
    if (stash != 1) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                       "GroupNormalization node '%s': stash_type %lld (q8rt computes in float32)", n->name,
                       (long long)stash);
    }
    p->per_group_affine = n->opset < 21;
  }
  ctx->kernel = group ? "group_normalization_f32__scalar" : "instance_normalization_f32__scalar";
  ctx->reason = "double sums, float32 affine";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status instance_norm_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return norm_prepare_kind(ctx, out, err, 0);
}
static q8rt_status group_norm_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return norm_prepare_kind(ctx, out, err, 1);
}

static q8rt_status norm_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  const norm_params *p = params;
  const op_shape *x = &in[0];
  for (int i = 0; i < 3; i++) {
    if (in[i].dtype != Q8RT_DTYPE_FLOAT32) {
      return q8rt_fail(err, in[i].dtype == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                       "%s node '%s': input %d is %s (q8rt supports float32)", n->op_type, n->name, i,
                       q8rt_onnx_type_name(in[i].dtype));
    }
  }
  out[0] = *x;
  out[0].value = NULL;
  if (x->rank < 0) return Q8RT_OK;
  if (x->rank < 2) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': X has rank %d (expects [N, C, ...])", n->op_type, n->name,
                     x->rank);
  }
  const int64_t c = x->dims[1];
  if (c >= 0 && p->group && c % p->groups != 0) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "GroupNormalization node '%s': %lld channels do not split into %lld groups",
                     n->name, (long long)c, (long long)p->groups);
  }
  const int64_t want = p->group && p->per_group_affine ? p->groups : c;
  for (int i = 1; i < 3; i++) {
    const op_shape *s = &in[i];
    if (s->rank < 0 || want < 0) continue;
    if (s->rank != 1 || (s->dims[0] >= 0 && s->dims[0] != want)) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input %d (%s) must have shape [%lld]", n->op_type, n->name,
                       i, i == 1 ? "scale" : "B", (long long)want);
    }
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(x->dims, x->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input is too large", n->op_type, n->name);
  }
  norm_geom *gm = geom;
  gm->n = (size_t)x->dims[0];
  gm->c = (size_t)c;
  gm->spatial = 1;
  for (int d = 2; d < x->rank; d++) gm->spatial *= (size_t)x->dims[d];
  gm->groups = p->group ? (size_t)p->groups : (size_t)c;
  if (total == 0) gm->n = 0;
  return Q8RT_OK;
}

static void norm_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  (void)workspace, (void)ctx;
  const norm_params *p = params;
  const norm_geom *gm = geom;
  const float *x = in[0].data, *scale = in[1].data, *bias = in[2].data;
  float *y = out[0].data;
  if (gm->n == 0 || gm->groups == 0) return; /* empty X (C = 0 included) */
  const size_t cpg = gm->c / gm->groups, set = cpg * gm->spatial;
  for (size_t b = 0; b < gm->n; b++) {
    for (size_t g = 0; g < gm->groups; g++) {
      const size_t base = (b * gm->groups + g) * set;
      double sum = 0.0;
      for (size_t i = 0; i < set; i++) sum += x[base + i];
      const double mean = sum / (double)set;
      double ss = 0.0;
      for (size_t i = 0; i < set; i++) {
        const double d = x[base + i] - mean;
        ss += d * d;
      }
      const float fmean = (float)mean;
      const float inv = 1.0f / sqrtf((float)(ss / (double)set) + p->eps);
      for (size_t ci = 0; ci < cpg; ci++) {
        const size_t ch = g * cpg + ci;
        const size_t a = p->group && p->per_group_affine ? g : ch;
        const float cs = inv * scale[a];
        const float shift = bias[a] - fmean * cs;
        const float *xs = x + base + ci * gm->spatial;
        float *ys = y + base + ci * gm->spatial;
        for (size_t i = 0; i < gm->spatial; i++) ys[i] = xs[i] * cs + shift;
      }
    }
  }
}

const op_def q8rt_op_instance_normalization = {.op_type = "InstanceNormalization",
                                               .domain = "",
                                               .min_opset = 6,
                                               .prepare = instance_norm_prepare,
                                               .infer = norm_infer,
                                               .run = norm_run};
const op_def q8rt_op_group_normalization = {.op_type = "GroupNormalization",
                                            .domain = "",
                                            .min_opset = 18,
                                            .prepare = group_norm_prepare,
                                            .infer = norm_infer,
                                            .run = norm_run};
