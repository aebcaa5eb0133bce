/* BatchNormalization, inference mode (float32). X is [N, C, ...]; scale, B, mean, var are [C].
 * They may be constants or computed (in QDQ models scale and B come from DequantizeLinear), so the
 * per-channel factors are formed at run, as ONNX Runtime does:
 *   inv_std = 1 / sqrt(var + epsilon);  s = inv_std * scale;  b = B - mean * s;  y = x * s + b
 * (every step one float32 rounding). training_mode = 1, more than one output, and the pre-opset-9
 * `spatial = 0` form are refused.
 * Channels-last (X [N, ..., C]): the factors are formed once per run in the workspace, repeated
 * over a few pixels, and each run of pixels is y = x * s then y = y + b by f32-vbinary: the same
 * two roundings per element as f32-vmulcaddc's, so the bytes do not depend on the layout. */
#include <math.h>
#include <string.h>

#include "f32-vbinary/f32-vbinary.h"
#include "f32-vmulcaddc/f32-vmulcaddc.h"
#include "op.h"
#include "op_util.h"

typedef struct bn_params {
  float epsilon;
  q8rt_f32_vmulcaddc_ukernel_fn fn; /* y = x * s + b per row */
  int nhwc;                         /* X channels-last */
  q8rt_f32_vbinary_ukernel_fn vmul, vadd;
} bn_params;

/* Channels-last: the factors are repeated over whole pixels up to this many floats, so one
 * f32-vbinary call covers several pixels of a narrow tensor. */
#define BN_TILE 256

static const struct {
  uint32_t isa;
  q8rt_f32_vmulcaddc_ukernel_fn fn;
  const char *name;
} g_vmulcaddc[] = {
#define Q8RT_F32_VMULCADDC_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-vmulcaddc/f32-vmulcaddc.inc"
#undef Q8RT_F32_VMULCADDC_UKERNEL
    {Q8RT_ISA_SCALAR, q8rt_f32_vmulcaddc_ukernel__scalar, "q8rt_f32_vmulcaddc_ukernel__scalar"},
};

typedef struct bn_geom {
  size_t n, c, inner;
  size_t rep; /* channels-last: pixels per repeat of the factors */
} bn_geom;

static const char *const g_bn_inputs[5] = {"X", "scale", "B", "input_mean", "input_var"};

static q8rt_status bn_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  if (n->n_inputs != 5) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 5 inputs (has %d)", n->op_type, n->name,
                     n->n_inputs);
  }
  for (int i = 0; i < 5; i++) {
    if (n->inputs[i] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d (%s) is missing", n->op_type, n->name, i,
                       g_bn_inputs[i]);
    }
  }
  int used_outputs = 0;
  for (int i = 0; i < n->n_outputs; i++) used_outputs += n->outputs[i] >= 0;
  if (n->n_outputs < 1 || n->outputs[0] < 0 || used_outputs > 1) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': only inference mode is supported (one output Y; the model asks for %d outputs)",
                     n->op_type, n->name, used_outputs);
  }
  int64_t v;
  q8rt_status st;
  if ((st = ir_attr_int(n, "training_mode", 0, &v, err)) != Q8RT_OK) return st;
  if (v != 0) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': attribute 'training_mode' = 1 is not supported",
                     n->op_type, n->name);
  }
  if ((st = ir_attr_int(n, "spatial", 1, &v, err)) != Q8RT_OK) return st;
  if (v == 0) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': attribute 'spatial' = 0 is not supported", n->op_type,
                     n->name);
  }
  bn_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if ((st = ir_attr_float(n, "epsilon", 1e-5f, &p->epsilon, err)) != Q8RT_OK) return st;
  size_t i = OP_FIRST_USABLE(g_vmulcaddc, ctx->isa, ctx->backend);
  p->fn = g_vmulcaddc[i].fn;
  p->nhwc = 0;
  p->vmul = op_f32_vbinary_kernel(ctx->isa, ctx->backend, OP_VBIN_MUL, OP_VBIN_VV);
  p->vadd = op_f32_vbinary_kernel(ctx->isa, ctx->backend, OP_VBIN_ADD, OP_VBIN_VV);
  ctx->kernel = g_vmulcaddc[i].name + 5; /* drop the "q8rt_" prefix */
  ctx->reason = "inference mode: per-channel factors at run, rows through f32-vmulcaddc";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status bn_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                            void *geom, q8rt_error *err) {
  const bn_params *p = params;
  for (int i = 0; i < 5; i++) {
    if (in[i].dtype != Q8RT_DTYPE_FLOAT32) {
      return q8rt_fail(err, in[i].dtype == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                       "%s node '%s': input %s is %s (q8rt supports float32)", n->op_type, n->name, g_bn_inputs[i],
                       q8rt_onnx_type_name(in[i].dtype));
    }
  }
  const op_shape *x = &in[0];
  out[0] = *x;
  if (x->rank >= 0 && x->rank < 2) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input X has rank %d (needs [N, C, ...])", n->op_type,
                     n->name, x->rank);
  }
  const int64_t C = x->rank >= 2 ? x->dims[p->nhwc ? x->rank - 1 : 1] : -1;
  for (int i = 1; i < 5; i++) {
    const op_shape *s = &in[i];
    if (s->rank < 0) continue;
    if (s->rank != 1 || (C >= 0 && s->dims[0] >= 0 && s->dims[0] != C)) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input %s must be 1-D with C=%lld elements", n->op_type,
                       n->name, g_bn_inputs[i], (long long)C);
    }
  }
  if (!concrete) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(x->dims, x->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input is too large", n->op_type, n->name);
  }
  bn_geom *gm = geom;
  gm->n = (size_t)x->dims[0];
  gm->c = (size_t)C;
  gm->inner = 1;
  for (int d = p->nhwc ? 1 : 2; d < (p->nhwc ? x->rank - 1 : x->rank); d++) gm->inner *= (size_t)x->dims[d];
  gm->rep = gm->c > 0 && gm->c < BN_TILE ? BN_TILE / gm->c : 1;
  return Q8RT_OK;
}

/* Channels-last: s then b, each C x rep floats. */
static size_t bn_workspace(const void *params, const void *geom, size_t threads) {
  (void)threads;
  const bn_params *p = params;
  const bn_geom *gm = geom;
  return p->nhwc ? 2 * gm->c * gm->rep * sizeof(float) : 0;
}

typedef struct bn_job {
  const bn_params *p;
  const bn_geom *gm;
  const float *x, *scale, *bias, *mean, *var;
  float *y;
} bn_job;

/* Planes [begin, end) of the n x c (batch, channel) planes. */
static void bn_range(void *arg, size_t begin, size_t end) {
  const bn_job *j = arg;
  const bn_geom *gm = j->gm;
  for (size_t ic = begin; ic < end; ic++) {
    const size_t c = ic % gm->c;
    const float inv_std = 1.0f / sqrtf(j->var[c] + j->p->epsilon);
    const float s = inv_std * j->scale[c];
    const float b = j->bias[c] - j->mean[c] * s;
    const float *xr = j->x + ic * gm->inner;
    float *yr = j->y + ic * gm->inner;
    j->p->fn(gm->inner, xr, s, b, yr);
  }
}

/* Channels-last: pixels [begin, end), rep at a time (scale = s, bias = b repeated). */
static void bn_nhwc_range(void *arg, size_t begin, size_t end) {
  const bn_job *j = arg;
  const size_t c = j->gm->c, rep = j->gm->rep;
  for (size_t px = begin; px < end; px += rep) {
    const size_t len = (end - px < rep ? end - px : rep) * c;
    const float *xr = j->x + px * c;
    float *yr = j->y + px * c;
    j->p->vmul(len, xr, j->scale, yr);
    j->p->vadd(len, yr, j->bias, yr);
  }
}

static void bn_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                   const op_exec_ctx *ctx) {
  const bn_params *p = params;
  const bn_geom *gm = geom;
  bn_job j = {p, gm, in[0].data, in[1].data, in[2].data, in[3].data, in[4].data, out[0].data};
  if (!p->nhwc) {
    op_parallel_range(ctx, gm->n * gm->c, 4096 / (gm->inner + 1) + 1, bn_range, &j);
    return;
  }
  if (gm->c == 0) return;
  float *s = workspace, *b = s + gm->c * gm->rep;
  for (size_t c = 0; c < gm->c; c++) { /* the NCHW route's factors, bit for bit */
    const float inv_std = 1.0f / sqrtf(j.var[c] + p->epsilon);
    s[c] = inv_std * j.scale[c];
    b[c] = j.bias[c] - j.mean[c] * s[c];
  }
  for (size_t r = 1; r < gm->rep; r++) {
    memcpy(s + r * gm->c, s, gm->c * sizeof(float));
    memcpy(b + r * gm->c, b, gm->c * sizeof(float));
  }
  j.scale = s;
  j.bias = b;
  op_parallel_range(ctx, gm->n * gm->inner, 4096 / gm->c + 1, bn_nhwc_range, &j);
}

/* Channels-last: per pixel the C channels are adjacent; the factors follow the last axis. */
static const void *bn_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool, const char **why) {
  (void)g, (void)n;
  bn_params *q = q8rt_pool_alloc(pool, sizeof(*q), 16);
  if (q == NULL) return NULL;
  *q = *(const bn_params *)params;
  q->nhwc = 1;
  *why = "per-channel factors repeated along pixel runs: f32-vbinary mul then add (f32-vmulcaddc's roundings)";
  return q;
}

const op_def q8rt_op_batch_normalization = {.op_type = "BatchNormalization",
                                            .domain = "",
                                            .min_opset = 7,
                                            .prepare = bn_prepare,
                                            .infer = bn_infer,
                                            .workspace = bn_workspace,
                                            .run = bn_run,
                                            .nhwc_params = bn_nhwc};
