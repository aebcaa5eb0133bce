/* LayerNormalization (opset 17, float32): X normalized over the dims from `axis` on, times Scale
 * plus B (both broadcast to those dims); optional outputs Mean and InvStdDev (shape of X with the
 * normalized dims set to 1).
 *
 * Per row, in ONNX Runtime's order (its CPU kernel, float accumulators): mean = sum(x) / N and
 * mean_square = sum(x * x) / N summed in memory order, sd = sqrt(mean_square - mean^2 + eps), then
 * y = (x - mean) / sd * scale + bias. Scale and B must have the normalized shape or broadcast to
 * it along its leading dims (a 1-D [N'] where N' divides into the trailing dims is taken as the
 * usual per-feature vector). */
#include <math.h>
#include <string.h>

#include "op.h"
#include "op_util.h"

typedef struct ln_params {
  int64_t axis;
  float eps;
} ln_params;

typedef struct ln_geom {
  size_t rows, n;         /* rows of N normalized elements */
  size_t scale_n, bias_n; /* elements of Scale and B: they repeat every scale_n / bias_n elements */
  int has_bias, nout;
} ln_geom;

static q8rt_status ln_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  if (n->n_inputs < 2 || n->n_inputs > 3 || n->n_outputs < 1 || n->n_outputs > 3 || n->inputs[0] < 0 ||
      n->inputs[1] < 0 || n->outputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "LayerNormalization node '%s': expects X, Scale[, B] and 1 to 3 outputs (has %d inputs, %d "
                     "outputs)",
                     n->name, n->n_inputs, n->n_outputs);
  }
  ln_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  q8rt_status st;
  if ((st = ir_attr_int(n, "axis", -1, &p->axis, err)) != Q8RT_OK) return st;
  if ((st = ir_attr_float(n, "epsilon", 1e-5f, &p->eps, err)) != Q8RT_OK) return st;
  int64_t stash;
  if ((st = ir_attr_int(n, "stash_type", 1, &stash, err)) != Q8RT_OK) return st;
  if (stash != 1) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "LayerNormalization node '%s': stash_type %lld (q8rt computes in float32)", n->name,
                     (long long)stash);
  }
  ctx->kernel = "layer_normalization_f32__scalar";
  ctx->reason = "float32, ONNX Runtime's order";
  *out = p;
  return Q8RT_OK;
}

/* Elements of `s` when it broadcasts onto the trailing `tail` dims of X: it must be a suffix
 * of them (after dropping its leading 1s). 0 if not. */
static size_t trailing_count(const op_shape *s, const int64_t *tail, int ntail) {
  int r = s->rank, lead = 0;
  while (lead < r && s->dims[lead] == 1 && r - lead > ntail) lead++;
  if (r - lead > ntail) return 0;
  size_t c = 1;
  for (int d = lead; d < r; d++) {
    if (s->dims[d] != tail[ntail - (r - d)] && s->dims[d] != 1) return 0;
    c *= (size_t)s->dims[d];
  }
  /* only full suffixes (no broadcast inside): the element repeats every c values */
  size_t full = 1;
  for (int d = lead; d < r; d++) full *= (size_t)tail[ntail - (r - d)];
  return full == c ? c : 0;
}

static q8rt_status ln_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                            void *geom, q8rt_error *err) {
  const ln_params *p = params;
  const op_shape *x = &in[0];
  const int has_bias = n->n_inputs > 2 && n->inputs[2] >= 0;
  for (int i = 0; i < (has_bias ? 3 : 2); i++) {
    if (in[i].dtype != Q8RT_DTYPE_FLOAT32) {
      return q8rt_fail(err, in[i].dtype == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                       "LayerNormalization node '%s': input %d is %s (q8rt supports float32)", n->name, i,
                       q8rt_onnx_type_name(in[i].dtype));
    }
  }
  out[0] = *x;
  out[0].value = NULL;
  for (int k = 1; k < 3; k++) {
    out[k].dtype = Q8RT_DTYPE_FLOAT32;
    out[k].rank = x->rank;
  }
  if (x->rank < 0) return Q8RT_OK;
  int64_t axis;
  if (!op_normalize_axis(p->axis, x->rank, &axis)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "LayerNormalization node '%s': axis %lld is out of range for rank %d", n->name, (long long)p->axis,
                     x->rank);
  }
  for (int k = 1; k < 3; k++) {
    for (int d = 0; d < x->rank; d++) out[k].dims[d] = d < axis ? x->dims[d] : 1;
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(x->dims, x->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "LayerNormalization node '%s': input is too large", n->name);
  }
  ln_geom *gm = geom;
  gm->rows = 1;
  gm->n = 1;
  for (int d = 0; d < x->rank; d++) {
    if (d < axis) {
      gm->rows *= (size_t)x->dims[d];
    } else {
      gm->n *= (size_t)x->dims[d];
    }
  }
  const int ntail = x->rank - (int)axis;
  gm->scale_n = trailing_count(&in[1], x->dims + axis, ntail);
  gm->bias_n = has_bias ? trailing_count(&in[2], x->dims + axis, ntail) : 1;
  gm->has_bias = has_bias;
  gm->nout = n->n_outputs;
  if (gm->scale_n == 0 || gm->bias_n == 0) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                     "LayerNormalization node '%s': %s does not broadcast to the normalized dims of X", n->name,
                     gm->scale_n == 0 ? "Scale" : "B");
  }
  if (total == 0) gm->rows = 0;
  return Q8RT_OK;
}

static void ln_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                   const op_exec_ctx *ctx) {
  (void)workspace, (void)ctx;
  const ln_params *p = params;
  const ln_geom *gm = geom;
  const float *x = in[0].data, *scale = in[1].data, *bias = gm->has_bias ? in[2].data : NULL;
  float *y = out[0].data;
  float *mean_out = gm->nout > 1 ? out[1].data : NULL; /* NULL too when the output is omitted */
  float *inv_out = gm->nout > 2 ? out[2].data : NULL;
  const size_t n = gm->n;
  const float fn = (float)n;
  for (size_t r = 0; r < gm->rows; r++) {
    const float *xr = x + r * n;
    float *yr = y + r * n;
    float mean = 0.0f, mean_square = 0.0f;
    for (size_t i = 0; i < n; i++) {
      mean += xr[i];
      mean_square += xr[i] * xr[i];
    }
    mean = mean / fn;
    const float sd = sqrtf(mean_square / fn - mean * mean + p->eps);
    if (gm->scale_n == n && (bias == NULL || gm->bias_n == n)) {
      for (size_t i = 0; i < n; i++) {
        const float v = (xr[i] - mean) / sd * scale[i];
        yr[i] = bias != NULL ? v + bias[i] : v;
      }
    } else {
      for (size_t i = 0; i < n; i++) {
        const float v = (xr[i] - mean) / sd * scale[i % gm->scale_n];
        yr[i] = bias != NULL ? v + bias[i % gm->bias_n] : v;
      }
    }
    if (mean_out != NULL) mean_out[r] = mean;
    if (inv_out != NULL) inv_out[r] = 1.0f / sd;
  }
}

const op_def q8rt_op_layer_normalization = {.op_type = "LayerNormalization",
                                            .domain = "",
                                            .min_opset = 17,
                                            .prepare = ln_prepare,
                                            .infer = ln_infer,
                                            .run = ln_run};
