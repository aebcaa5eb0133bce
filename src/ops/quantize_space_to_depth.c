/* QuantizeSpaceToDepth (domain q8rt): the "Focus" prelude of YOLOv5/YOLOX-style detectors,
 *   Slice(x, rows by::b) -> Slice(cols bx::b) -> QuantizeLinear, once per block offset, then a
 *   Concat (or a QLinearConcat that copies) along the channels,
 * as one step (made by src/passes/quantize_s2d_fuse.c). Input x: float32 N x C x H x W (NCHW);
 * inputs y_scale and y_zero_point: QuantizeLinear's (per-tensor constants); attributes blocksize b
 * and blocks: b*b entries, entry g = by*b + bx the block offset of output channel group g. Output,
 * written channels-last (N x H/b x W/b x b*b*C):
 *   y[n][oy][ox][g*C + c] = QuantizeLinear(x[n][c][oy*b + by_g][ox*b + bx_g])
 * Per output row, the b*C source rows it reads are quantized whole by QuantizeLinear's own kernel
 * (f32-qint-vcvt: each element converted alone, so the bytes equal the sliced, quantized and
 * concatenated tensors), then rearranged channels-last: with Focus' block order one x8-transpose,
 * otherwise a gather per pixel. No float slices, concatenation or layout change. */
#include <string.h>

#include "op_util.h"
#include "qlinear_common.h"

#define QS2D_MAX_BLOCK 8
#define QS2D_BUF 1024  /* channels of the output at most (b*b*C) */
#define QS2D_QBUF 8192 /* quantized bytes per chunk of pixels: whole pixels, >= QS2D_BUF, < 65536 */

typedef struct qs2d_params {
  size_t b;
  size_t by[QS2D_MAX_BLOCK * QS2D_MAX_BLOCK], bx[QS2D_MAX_BLOCK * QS2D_MAX_BLOCK];
  q8rt_dtype type;
  q8rt_f32_qint_vcvt_params kp;
  q8rt_f32_qint_vcvt_ukernel_fn fn;
  /* blocks in column-major order (g = bx * b + by: YOLOv5's and YOLOX's Focus): a pixel's bytes
   * are [bx][by][c], so quantized source rows in (by, c) order transpose straight into it */
  q8rt_x8_transpose_ukernel_fn transpose;
} qs2d_params;

typedef struct qs2d_geom {
  size_t n, c, h, w, oh, ow, gc;
} qs2d_geom;

static q8rt_status qs2d_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  if (n->n_inputs != 3 || n->n_outputs != 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects x, y_scale, y_zero_point and one output",
                     n->op_type, n->name);
  }
  qs2d_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  q8rt_status st;
  int64_t b;
  if ((st = ir_attr_int(n, "blocksize", 0, &b, err)) != Q8RT_OK) return st;
  if (b < 1 || b > QS2D_MAX_BLOCK) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': blocksize %lld is out of range (1 to %d)",
                     n->op_type, n->name, (long long)b, QS2D_MAX_BLOCK);
  }
  p->b = (size_t)b;
  const int64_t *blocks = NULL;
  size_t count = 0;
  if ((st = ir_attr_ints(n, "blocks", &blocks, &count, err)) != Q8RT_OK) return st;
  if (blocks == NULL || count != p->b * p->b) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'blocks' needs blocksize^2 = %zu entries",
                     n->op_type, n->name, p->b * p->b);
  }
  unsigned char seen[QS2D_MAX_BLOCK * QS2D_MAX_BLOCK] = {0};
  int column_major = 1;
  for (size_t i = 0; i < count; i++) {
    if (blocks[i] < 0 || (uint64_t)blocks[i] >= count || seen[blocks[i]]) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "%s node '%s': attribute 'blocks' is not a permutation of the %zu block offsets", n->op_type,
                       n->name, count);
    }
    seen[blocks[i]] = 1;
    p->by[i] = (size_t)blocks[i] / p->b;
    p->bx[i] = (size_t)blocks[i] % p->b;
    column_major &= p->bx[i] * p->b + p->by[i] == i;
  }
  float scale;
  int32_t zp;
  q8rt_dtype t = Q8RT_DTYPE_UNDEFINED;
  if ((st = op_const_scale(g, n, 1, "y_scale", &scale, err)) != Q8RT_OK) return st;
  if (ir_node_input(g, n, 2) == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': y_zero_point is required", n->op_type, n->name);
  }
  if ((st = qk_zero_point(g, n, 2, "y_zero_point", Q8RT_DTYPE_UNDEFINED, &zp, &t, err)) != Q8RT_OK) return st;
  int32_t qmin, qmax;
  q8rt_dtype_range(t, &qmin, &qmax);
  p->type = t;
  p->kp.scale = scale;
  p->kp.zero_point = zp;
  p->kp.lo = (float)(qmin - zp);
  p->kp.hi = (float)(qmax - zp);
  const char *name;
  p->fn = op_quantize_kernel(t, ctx->isa, ctx->backend, &name);
  if (p->fn.qu8 == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': no QuantizeLinear kernel for %s", n->op_type, n->name,
                     q8rt_onnx_type_name(t));
  }
  ctx->kernel = name + 5; /* drop the "q8rt_" prefix */
  const char *tname = NULL;
  p->transpose = column_major ? op_x8_transpose_kernel(ctx->isa, &tname) : NULL;
  ctx->reason = column_major ? "the source rows of each output row quantized by QuantizeLinear's kernel, then "
                               "transposed channels-last (x8-transpose)"
                             : "the source rows of each output row quantized by QuantizeLinear's kernel, then "
                               "gathered channels-last";
  ctx->in_layout = OP_LAYOUT_NCHW;
  ctx->out_layout = OP_LAYOUT_NHWC;
  *out = p;
  return Q8RT_OK;
}

static q8rt_status qs2d_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  const qs2d_params *p = params;
  const op_shape *x = &in[0];
  out->dtype = p->type;
  out->rank = 4;
  if (x->dtype != Q8RT_DTYPE_UNDEFINED && x->dtype != Q8RT_DTYPE_FLOAT32) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': x is %s, expected float", n->op_type, n->name,
                     q8rt_onnx_type_name(x->dtype));
  }
  if (x->rank < 0) {
    for (int d = 0; d < 4; d++) out->dims[d] = -1;
    return Q8RT_OK;
  }
  if (x->rank != 4) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': x has rank %d, expected 4 (NCHW)", n->op_type,
                     n->name, x->rank);
  }
  const int64_t b = (int64_t)p->b;
  for (int d = 2; d < 4; d++) {
    if (x->dims[d] >= 0 && x->dims[d] % b != 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "%s node '%s': x's %s %lld is not a multiple of blocksize %lld (the blocks' slices would "
                       "differ in size)",
                       n->op_type, n->name, d == 2 ? "height" : "width", (long long)x->dims[d], (long long)b);
    }
  }
  /* compared before multiplying: a declared dimension may be anything up to 2^63 - 1 */
  if (x->dims[1] > QS2D_BUF / (b * b)) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': %lld channels times %lld blocks (at most %d)",
                     n->op_type, n->name, (long long)x->dims[1], (long long)(b * b), QS2D_BUF);
  }
  const int64_t gc = x->dims[1] < 0 ? -1 : x->dims[1] * b * b;
  out->dims[0] = x->dims[0];
  out->dims[1] = x->dims[2] < 0 ? -1 : x->dims[2] / b;
  out->dims[2] = x->dims[3] < 0 ? -1 : x->dims[3] / b;
  out->dims[3] = gc;
  if (!concrete || geom == NULL) return Q8RT_OK;
  qs2d_geom *gm = geom;
  gm->n = (size_t)x->dims[0];
  gm->c = (size_t)x->dims[1];
  gm->h = (size_t)x->dims[2];
  gm->w = (size_t)x->dims[3];
  gm->oh = gm->h / p->b;
  gm->ow = gm->w / p->b;
  gm->gc = (size_t)gc;
  return Q8RT_OK;
}

typedef struct qs2d_job {
  const qs2d_params *p;
  const qs2d_geom *gm;
  const float *x;
  uint8_t *y;
} qs2d_job;

/* Output row t (image n, row oy), np pixels at a time: the b*C source row segments those pixels
 * read are quantized whole (contiguous: QuantizeLinear's kernel at full speed, each element alone,
 * so the bytes are the same), then each pixel's gc bytes gathered from them in the output's order. */
static void qs2d_row(void *arg, size_t t) {
  const qs2d_job *j = arg;
  const qs2d_params *p = j->p;
  const qs2d_geom *gm = j->gm;
  const size_t b = p->b, gc = gm->gc, c_count = gm->c, groups = b * b;
  const size_t n = t / gm->oh, oy = t % gm->oh;
  const size_t chunk = QS2D_QBUF / gc; /* >= 1: infer refuses gc > QS2D_BUF */
  uint8_t q[QS2D_QBUF];
  uint16_t off[QS2D_BUF]; /* < QS2D_QBUF */
  uint8_t *y = j->y + t * gm->ow * gc;
  for (size_t px = 0; px < gm->ow; px += chunk) {
    const size_t np = gm->ow - px < chunk ? gm->ow - px : chunk, seg = np * b;
    for (size_t c = 0; c < c_count; c++) {
      for (size_t by = 0; by < b; by++) {
        const float *src = j->x + ((n * c_count + c) * gm->h + oy * b + by) * gm->w + px * b;
        uint8_t *dst = q + (p->transpose != NULL ? by * c_count + c : c * b + by) * seg;
        if (p->type == Q8RT_DTYPE_UINT8) {
          p->fn.qu8(seg, src, dst, &p->kp);
        } else {
          p->fn.qs8(seg, src, (int8_t *)dst, &p->kp);
        }
      }
    }
    uint8_t *yp = y + px * gc;
    if (p->transpose != NULL) {
      /* q: b*C rows (by, c) of seg = np*b bytes; y: seg rows (px, bx) of b*C bytes */
      p->transpose(b * c_count, seg, q, seg, yp, b * c_count);
      continue;
    }
    for (size_t g = 0; g < groups; g++) {
      for (size_t c = 0; c < c_count; c++) off[g * c_count + c] = (uint16_t)((c * b + p->by[g]) * seg + p->bx[g]);
    }
    for (size_t i = 0; i < np; i++, yp += gc) {
      const uint8_t *qi = q + i * b;
      for (size_t s = 0; s < gc; s++) yp[s] = qi[off[s]];
    }
  }
}

static void qs2d_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  (void)workspace;
  const qs2d_geom *gm = geom;
  if (gm->gc == 0 || gm->ow == 0) return;
  qs2d_job j = {params, gm, in[0].data, out[0].data};
  /* a row: gc * ow elements, ~2 units each (the gather and the conversion) */
  op_parallel_items(ctx, gm->n * gm->oh, 2 * gm->gc * gm->ow, 8192, qs2d_row, &j);
}

const op_def q8rt_op_quantize_space_to_depth = {.op_type = "QuantizeSpaceToDepth",
                                                .domain = "q8rt",
                                                .min_opset = 1,
                                                .prepare = qs2d_prepare,
                                                .infer = qs2d_infer,
                                                .run = qs2d_run};
