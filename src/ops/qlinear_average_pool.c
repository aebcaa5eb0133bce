/* QLinearGlobalAveragePool and QLinearAveragePool (com.microsoft 1), uint8 / int8, NCHW
 * (channels_last 0) or NHWC (channels_last 1), as ONNX Runtime's CPU kernels compute them:
 *
 * Global (MlasQLinearGlobalAveragePoolNchw/Nhwc): exact int32 sum, then MlasRequantizeOutput
 *   acc = Σx − x_zp·S (S = spatial size);  scale = x_scale / (y_scale · (float)S)
 *   y = cvt(clamp((float)acc · scale, qmin − y_zp, qmax − y_zp)) + y_zp
 *   ORT refuses S >= 2^24 and scale outside [2^-32, 256): so does q8rt (at bind).
 * AveragePool (qlinear_pool.cc): x dequantized to float (x_scale · (x − x_zp)), summed in float in
 *   window order (rows, then columns), divided by the count as float (kernel size with
 *   count_include_pad, else the clipped window), then y = clamp(nearbyint(v / y_scale + y_zp)).
 *   When the kernel covers the whole (unpadded) image ORT takes the global path: so does q8rt. */
#include <math.h>
#include <string.h>

#include "q8rt-isa.h"
#include "qlinear_common.h"
#include "x8-rsum/x8-rsum.h"

typedef struct qpool_params {
  int global;
  int channels_last;
  q8rt_dtype type;
  float x_scale, y_scale;
  int32_t x_zp, y_zp, qmin, qmax;
  int nk; /* kernel rank (1 or 2); pooling only */
  int64_t kernel[2], stride[2], pads[4];
  int64_t count_include_pad, ceil_mode;
  int auto_valid;
  q8rt_x8_rsum_ukernel_fn rsum; /* global sums: NCHW planes */
  q8rt_x8_csum_ukernel_fn csum; /* global sums: NHWC channels */
  const char *rsum_name;
  q8rt_qint_f32_vcvt_ukernel_fn dq;         /* channels-last windows: a pixel's channels as x_scale * (x - x_zp) */
  q8rt_f32_vbinary_ukernel_fn vadd;         /* ... added into the window sums, */
  q8rt_f32_vbinary_ukernel_fn vdivc, vaddc; /* ... then / count / y_scale + y_zp */
} qpool_params;

typedef struct rsum_variant {
  uint32_t isa;
  q8rt_x8_rsum_ukernel_fn rsum;
  q8rt_x8_csum_ukernel_fn csum;
  const char *name;
} rsum_variant;

static const rsum_variant g_rsum[] = {
#define Q8RT_X8_RSUM_UKERNEL(isa, rsum, csum) {isa, rsum, csum, #rsum},
#include "x8-rsum/x8-rsum.inc"
#undef Q8RT_X8_RSUM_UKERNEL
    {0, NULL, NULL, NULL},
};

/* The sum kernels for this CPU and backend (the scalar twins for the reference backend). */
static void pick_rsum(const op_prepare_ctx *ctx, qpool_params *p) {
  p->rsum = q8rt_x8_rsum_ukernel__scalar;
  p->csum = q8rt_x8_csum_ukernel__scalar;
  p->rsum_name = "x8_rsum_ukernel__scalar";
  for (const rsum_variant *v = g_rsum; v->rsum != NULL; v++) {
    if (op_isa_usable(v->isa, ctx->isa, ctx->backend)) {
      p->rsum = v->rsum;
      p->csum = v->csum;
      p->rsum_name = v->name + 5; /* without "q8rt_" */
      return;
    }
  }
}

typedef struct qpool_geom {
  int as_global;         /* run the global formula */
  size_t n, c;           /* batch, channels */
  int64_t in[2], out[2]; /* spatial sizes (padded to 2-D) */
  size_t image;          /* input spatial size */
  float gscale;          /* global: requantization scale */
} qpool_geom;

_Static_assert(sizeof(qpool_geom) <= Q8RT_GEOM_BYTES, "geometry must fit");

static q8rt_status qpool_common(op_prepare_ctx *ctx, qpool_params *p, q8rt_error *err) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  q8rt_status st;
  q8rt_dtype t = Q8RT_DTYPE_UNDEFINED;
  if ((st = qk_unary_io(g, n, &t, err)) != Q8RT_OK) return st;
  if ((st = op_const_scale(g, n, 1, "x_scale", &p->x_scale, err)) != Q8RT_OK) return st;
  if ((st = qk_zero_point(g, n, 2, "x_zero_point", t, &p->x_zp, &t, err)) != Q8RT_OK) return st;
  if ((st = op_const_scale(g, n, 3, "y_scale", &p->y_scale, err)) != Q8RT_OK) return st;
  if ((st = qk_zero_point(g, n, 4, "y_zero_point", t, &p->y_zp, &t, err)) != Q8RT_OK) return st;
  if (t == Q8RT_DTYPE_UNDEFINED) t = Q8RT_DTYPE_UINT8;
  p->type = t;
  q8rt_dtype_range(t, &p->qmin, &p->qmax);
  int64_t cl;
  if ((st = ir_attr_int(n, "channels_last", 0, &cl, err)) != Q8RT_OK) return st;
  p->channels_last = cl != 0;
  pick_rsum(ctx, p);
  return Q8RT_OK;
}

static q8rt_status qgap_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  qpool_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  q8rt_status st = qpool_common(ctx, p, err);
  if (st != Q8RT_OK) return st;
  p->global = 1;
  ctx->kernel = p->rsum_name;
  ctx->reason = "ONNX Runtime MLAS formula (int32 sum, float requantization)";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status qap_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  qpool_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  q8rt_status st = qpool_common(ctx, p, err);
  if (st != Q8RT_OK) return st;
  const int64_t *k;
  size_t nk;
  if ((st = ir_attr_ints(n, "kernel_shape", &k, &nk, err)) != Q8RT_OK) return st;
  if (k == NULL || nk < 1 || nk > 2) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': attribute 'kernel_shape' must have 1 or 2 values",
                     n->op_type, n->name);
  }
  p->nk = (int)nk;
  for (size_t i = 0; i < nk; i++) {
    if (k[i] < 1) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': kernel_shape[%zu] is %lld", n->op_type, n->name, i,
                       (long long)k[i]);
    }
    p->kernel[i] = k[i];
    p->stride[i] = 1;
  }
  const int64_t *v;
  size_t cnt;
  if ((st = ir_attr_ints(n, "strides", &v, &cnt, err)) != Q8RT_OK) return st;
  if (v != NULL) {
    if (cnt != nk) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'strides' has %zu values, expected %zu",
                       n->op_type, n->name, cnt, nk);
    }
    for (size_t i = 0; i < nk; i++) {
      if (v[i] < 1) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': strides[%zu] is %lld", n->op_type, n->name, i,
                         (long long)v[i]);
      }
      p->stride[i] = v[i];
    }
  }
  if ((st = ir_attr_ints(n, "pads", &v, &cnt, err)) != Q8RT_OK) return st;
  if (v != NULL) {
    if (cnt != 2 * nk) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'pads' has %zu values, expected %zu",
                       n->op_type, n->name, cnt, 2 * nk);
    }
    for (size_t i = 0; i < 2 * nk; i++) {
      if (v[i] < 0) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': pads[%zu] is negative", n->op_type, n->name, i);
      }
    }
    for (size_t i = 0; i < nk; i++) {
      p->pads[i] = v[i];
      p->pads[2 + i] = v[nk + i];
    }
  }
  if ((st = ir_attr_ints(n, "dilations", &v, &cnt, err)) != Q8RT_OK) return st;
  for (size_t i = 0; v != NULL && i < cnt; i++) {
    if (v[i] != 1) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': dilations other than 1 are not supported",
                       n->op_type, n->name);
    }
  }
  const char *ap;
  if ((st = ir_attr_string(n, "auto_pad", "NOTSET", &ap, err)) != Q8RT_OK) return st;
  if (strcmp(ap, "VALID") == 0) {
    p->auto_valid = 1;
    memset(p->pads, 0, sizeof(p->pads));
  } else if (strcmp(ap, "NOTSET") != 0) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': auto_pad %s is not supported (NOTSET, VALID)",
                     n->op_type, n->name, ap);
  }
  if ((st = ir_attr_int(n, "count_include_pad", 0, &p->count_include_pad, err)) != Q8RT_OK) return st;
  if ((st = ir_attr_int(n, "ceil_mode", 0, &p->ceil_mode, err)) != Q8RT_OK) return st;
  const char *dq_name = NULL;
  p->dq = op_dequantize_kernel(p->type, ctx->isa, ctx->backend, &dq_name);
  p->vadd = op_f32_vbinary_kernel(ctx->isa, ctx->backend, OP_VBIN_ADD, OP_VBIN_VV);
  p->vaddc = op_f32_vbinary_kernel(ctx->isa, ctx->backend, OP_VBIN_ADD, OP_VBIN_VC);
  p->vdivc = op_f32_vbinary_kernel(ctx->isa, ctx->backend, OP_VBIN_DIV, OP_VBIN_VC);
  ctx->kernel = "qlinear_average_pool__scalar";
  ctx->reason =
      "ONNX Runtime formula (float window sums); channels-last: each window pixel's channels dequantized "
      "(qint-f32-vcvt) and added (f32-vbinary), the same operations in the same order";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status global_scale(const qpool_params *p, const op_node *n, size_t image, float *out, q8rt_error *err) {
  if (image >= 0x1000000u || image == 0) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': image size %zu is out of ONNX Runtime's range",
                     n->op_type, n->name, image);
  }
  const float s = p->x_scale / (p->y_scale * (float)image);
  if (s < 0x1.0p-32f || s >= 256.0f) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': x_scale / (y_scale * image size) = %g is out of ONNX Runtime's range [2^-32, 256)",
                     n->op_type, n->name, (double)s);
  }
  *out = s;
  return Q8RT_OK;
}

static q8rt_status qpool_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                               void *geom, q8rt_error *err) {
  const qpool_params *p = params;
  const op_shape *x = &in[0];
  q8rt_status st = qk_check_input_type(n, "X", x->dtype, p->type, err);
  if (st != Q8RT_OK) return st;
  *out = *x;
  out->dtype = p->type;
  if (x->rank < 0) return Q8RT_OK;
  const int want = p->global ? -1 : p->nk + 2;
  if ((p->global && (x->rank < 3 || x->rank > 4)) || (!p->global && x->rank != want)) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input X has rank %d (%s expected)", n->op_type,
                     n->name, x->rank, p->global ? "3 or 4" : (p->nk == 1 ? "3" : "4"));
  }
  const int ns = x->rank - 2;
  const int s0 = p->channels_last ? 1 : 2; /* first spatial dim */
  int64_t in_sp[2] = {1, 1}, out_sp[2] = {1, 1};
  for (int i = 0; i < ns; i++) in_sp[i] = x->dims[s0 + i];
  if (p->global) {
    for (int i = 0; i < ns; i++) out->dims[s0 + i] = 1;
  } else {
    for (int i = 0; i < ns; i++) {
      if (in_sp[i] < 0) {
        out->dims[s0 + i] = -1;
        continue;
      }
      const int64_t span = in_sp[i] + p->pads[i] + p->pads[2 + i] - p->kernel[i];
      if (span < 0) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': kernel %lld is larger than the padded input %lld",
                         n->op_type, n->name, (long long)p->kernel[i],
                         (long long)(in_sp[i] + p->pads[i] + p->pads[2 + i]));
      }
      int64_t o;
      if (p->ceil_mode) {
        o = (span + p->stride[i] - 1) / p->stride[i] + 1;
        if ((o - 1) * p->stride[i] >= in_sp[i] + p->pads[i]) o--; /* last window must start inside */
      } else {
        o = span / p->stride[i] + 1;
      }
      out_sp[i] = o;
      out->dims[s0 + i] = o;
    }
  }
  if (!concrete) return Q8RT_OK;
  qpool_geom *gm = geom;
  memset(gm, 0, sizeof(*gm));
  gm->n = (size_t)x->dims[0];
  gm->c = (size_t)(p->channels_last ? x->dims[x->rank - 1] : x->dims[1]);
  gm->in[0] = in_sp[0];
  gm->in[1] = in_sp[1];
  gm->out[0] = out_sp[0];
  gm->out[1] = out_sp[1];
  gm->image = (size_t)(in_sp[0] * in_sp[1]);
  gm->as_global = p->global;
  if (!p->global) {
    int whole = 1;
    for (int i = 0; i < ns; i++) whole = whole && p->kernel[i] == in_sp[i];
    for (int i = 0; i < 4; i++) whole = whole && p->pads[i] == 0;
    gm->as_global = whole;
  }
  if (gm->as_global && gm->n * gm->c > 0) return global_scale(p, n, gm->image, &gm->gscale, err);
  return Q8RT_OK;
}

typedef struct qpool_job {
  const qpool_params *p;
  const qpool_geom *gm;
  const void *X;
  void *Y;
  size_t chunk; /* channels-last global pooling: channels per work item */
} qpool_job;

/* Channels [begin, end) of the n x c (batch, channel) pairs: exact sums by the x8-rsum kernels,
 * 256 channels at a time, then the requantization. */
static void run_global(void *arg, size_t begin, size_t end) {
  const qpool_job *jb = arg;
  const qpool_params *p = jb->p;
  const qpool_geom *gm = jb->gm;
  const uint8_t *X = jb->X;
  const q8rt_dtype t = p->type;
  const int is_signed = t == Q8RT_DTYPE_INT8;
  const float lo = (float)(p->qmin - p->y_zp), hi = (float)(p->qmax - p->y_zp);
  const uint32_t bias = (uint32_t)-p->x_zp * (uint32_t)gm->image;
  int32_t sums[256];
  for (size_t bc = begin; bc < end;) {
    const size_t b = bc / gm->c, c = bc % gm->c;
    size_t cnt = gm->c - c < end - bc ? gm->c - c : end - bc; /* within one batch */
    if (cnt > 256) cnt = 256;
    if (p->channels_last) {
      p->csum(gm->image, cnt, X + b * gm->image * gm->c + c, gm->c, is_signed, sums);
    } else {
      p->rsum(cnt, gm->image, X + bc * gm->image, gm->image, is_signed, sums);
    }
    for (size_t i = 0; i < cnt; i++) {
      const int32_t acc = (int32_t)((uint32_t)sums[i] + bias);
      const int32_t q = q8rt_round_clamp((float)acc * gm->gscale, lo, hi) + p->y_zp;
      qk_store8(jb->Y, t, bc + i, q);
    }
    bc += cnt;
  }
}

/* Item t of the channels-last global pooling: image t / chunks, its channels of chunk t % chunks. */
static void run_global_chunk(void *arg, size_t t) {
  const qpool_job *jb = arg;
  const size_t c = jb->gm->c, chunks = (c + jb->chunk - 1) / jb->chunk;
  const size_t b = t / chunks, c0 = t % chunks * jb->chunk;
  run_global(arg, b * c + c0, b * c + (c0 + jb->chunk < c ? c0 + jb->chunk : c));
}

static void run_avg(void *arg, size_t begin, size_t end) {
  const qpool_job *jb = arg;
  const qpool_params *p = jb->p;
  const qpool_geom *gm = jb->gm;
  const void *X = jb->X;
  void *Y = jb->Y;
  const q8rt_dtype t = p->type;
  const int64_t H = gm->in[0], W = gm->in[1], OH = gm->out[0], OW = gm->out[1];
  const int64_t kh = p->kernel[0], kw = p->nk > 1 ? p->kernel[1] : 1;
  const int64_t sh = p->stride[0], sw = p->nk > 1 ? p->stride[1] : 1;
  const int64_t ph = p->pads[0], pw = p->nk > 1 ? p->pads[1] : 0;
  const size_t C = gm->c;
  for (size_t bc = begin; bc < end; bc++) {
    const size_t b = bc / C, c = bc % C;
    {
      for (int64_t oh = 0; oh < OH; oh++) {
        int64_t hs = oh * sh - ph;
        const int64_t he = hs + kh < H ? hs + kh : H;
        if (hs < 0) hs = 0;
        for (int64_t ow = 0; ow < OW; ow++) {
          int64_t ws = ow * sw - pw;
          const int64_t we = ws + kw < W ? ws + kw : W;
          if (ws < 0) ws = 0;
          float sum = 0.0f;
          for (int64_t h = hs; h < he; h++) {
            for (int64_t w = ws; w < we; w++) {
              const size_t pix = (size_t)(h * W + w);
              const size_t idx =
                  p->channels_last ? (b * (size_t)(H * W) + pix) * C + c : (b * C + c) * (size_t)(H * W) + pix;
              sum += p->x_scale * (float)(qk_load8(X, t, idx) - p->x_zp);
            }
          }
          const int64_t count = p->count_include_pad ? kh * kw : (he - hs) * (we - ws);
          sum /= (float)count;
          const float v = sum / p->y_scale + (float)p->y_zp;
          const int32_t q = qk_clamp(q8rt_cvt_rne(v), p->qmin, p->qmax);
          const size_t opix = (size_t)(oh * OW + ow);
          const size_t oidx =
              p->channels_last ? (b * (size_t)(OH * OW) + opix) * C + c : (b * C + c) * (size_t)(OH * OW) + opix;
          qk_store8(Y, t, oidx, q);
        }
      }
    }
  }
}

/* Channels-last average pool: output pixels [begin, end) of the n x OH x OW pixels, every channel
 * of a pixel at once (contiguous), 256 channels at a time. Each channel sees the same float
 * operations in the same window order as run_avg, so the bytes are the same. */
static void run_avg_nhwc(void *arg, size_t begin, size_t end) {
  const qpool_job *jb = arg;
  const qpool_params *p = jb->p;
  const qpool_geom *gm = jb->gm;
  const int is_signed = p->type == Q8RT_DTYPE_INT8;
  const int64_t H = gm->in[0], W = gm->in[1], OH = gm->out[0], OW = gm->out[1];
  const int64_t kh = p->kernel[0], kw = p->nk > 1 ? p->kernel[1] : 1;
  const int64_t sh = p->stride[0], sw = p->nk > 1 ? p->stride[1] : 1;
  const int64_t ph = p->pads[0], pw = p->nk > 1 ? p->pads[1] : 0;
  const size_t C = gm->c;
  const q8rt_qint_f32_vcvt_params kp = {p->x_scale, p->x_zp};
  float sum[256], row[256];
  for (size_t op = begin; op < end; op++) {
    const size_t b = op / (size_t)(OH * OW);
    const int64_t oh = (int64_t)(op % (size_t)(OH * OW)) / OW, ow = (int64_t)(op % (size_t)(OH * OW)) % OW;
    int64_t hs = oh * sh - ph;
    const int64_t he = hs + kh < H ? hs + kh : H;
    if (hs < 0) hs = 0;
    int64_t ws = ow * sw - pw;
    const int64_t we = ws + kw < W ? ws + kw : W;
    if (ws < 0) ws = 0;
    const int64_t count = p->count_include_pad ? kh * kw : (he - hs) * (we - ws);
    for (size_t c0 = 0; c0 < C; c0 += 256) {
      const size_t nc = C - c0 < 256 ? C - c0 : 256;
      for (size_t c = 0; c < nc; c++) sum[c] = 0.0f;
      for (int64_t h = hs; h < he; h++) {
        for (int64_t w = ws; w < we; w++) {
          const uint8_t *xp = (const uint8_t *)jb->X + (b * (size_t)(H * W) + (size_t)(h * W + w)) * C + c0;
          /* (float)(x - zp) * x_scale: run_avg's x_scale * ((float)x - zp), exactly (x - zp is exact) */
          if (is_signed) {
            p->dq.qs8(nc, (const int8_t *)xp, row, &kp);
          } else {
            p->dq.qu8(nc, xp, row, &kp);
          }
          p->vadd(nc, sum, row, sum);
        }
      }
      uint8_t *yp = (uint8_t *)jb->Y + op * C + c0;
      const float fcount = (float)count, yzp = (float)p->y_zp;
      p->vdivc(nc, sum, &fcount, sum); /* sum / count / y_scale + y_zp, one IEEE operation at a time */
      p->vdivc(nc, sum, &p->y_scale, sum);
      p->vaddc(nc, sum, &yzp, sum);
      for (size_t c = 0; c < nc; c++) yp[c] = (uint8_t)qk_clamp(q8rt_cvt_rne(sum[c]), p->qmin, p->qmax);
    }
  }
}

static void qpool_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx) {
  (void)workspace;
  const qpool_params *p = params;
  const qpool_geom *gm = geom;
  qpool_job j = {p, gm, in[0].data, out[0].data, 0};
  /* per channel: the image (global) or the output image times the window (average) */
  const size_t per_c =
      gm->as_global ? gm->image : (size_t)(gm->out[0] * gm->out[1] * p->kernel[0] * (p->nk > 1 ? p->kernel[1] : 1));
  if (!gm->as_global && p->channels_last) {
    const size_t per_pixel = gm->c * (size_t)(p->kernel[0] * (p->nk > 1 ? p->kernel[1] : 1));
    op_parallel_range(ctx, gm->n * (size_t)(gm->out[0] * gm->out[1]), 8192 / (per_pixel + 1) + 1, run_avg_nhwc, &j);
    return;
  }
  if (gm->as_global && p->channels_last) {
    /* channels-last global pooling: each chunk of channels reads its bytes of every pixel, so one
     * chunk per thread (multiples of 16 channels, the column-sum kernels' blocks, at most the 256 a
     * pass sums): one pass over the image on one thread, and the few channels of a squeeze-excite
     * block (det: 16-96 over a whole plane) still split between two. Integer sums: any chunking
     * gives the same bytes. */
    size_t chunk = (gm->c + ctx->threads - 1) / ctx->threads;
    chunk = (chunk + 15) / 16 * 16;
    if (chunk > 256) chunk = 256;
    j.chunk = chunk;
    const size_t chunks = (gm->c + chunk - 1) / chunk;
    op_parallel_items(ctx, gm->n * chunks, chunk * gm->image, 8192, run_global_chunk, &j);
    return;
  }
  size_t grain = 8192 / (per_c + 1) + 1;
  /* channels-last: a chunk of channels reads every pixel's row; chunks of whole cache lines (64
   * channels) keep two threads from each reading the whole image */
  if (p->channels_last && grain < 64) grain = 64;
  op_parallel_range(ctx, gm->n * gm->c, grain, gm->as_global ? run_global : run_avg, &j);
}

/* Channels-last: the channels_last form ORT has too; the sums run in the same order. */
static const void *qpool_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool,
                              const char **why) {
  (void)g;
  (void)n;
  const qpool_params *p = params;
  if (p->channels_last) {
    *why = "the node is channels_last already";
    return NULL;
  }
  qpool_params *q = q8rt_pool_alloc(pool, sizeof(*q), 16);
  if (q == NULL) return NULL;
  *q = *p;
  q->channels_last = 1;
  return q;
}

const op_def q8rt_op_qlinear_global_average_pool = {
    .op_type = "QLinearGlobalAveragePool",
    .domain = "com.microsoft",
    .min_opset = 1,
    .prepare = qgap_prepare,
    .infer = qpool_infer,
    .run = qpool_run,
    .nhwc_params = qpool_nhwc,
};
const op_def q8rt_op_qlinear_average_pool = {
    .op_type = "QLinearAveragePool",
    .domain = "com.microsoft",
    .min_opset = 1,
    .prepare = qap_prepare,
    .infer = qpool_infer,
    .run = qpool_run,
    .nhwc_params = qpool_nhwc,
};
