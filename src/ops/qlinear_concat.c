/* QLinearConcat (com.microsoft 1): inputs y_scale, y_zero_point, then (X, x_scale, x_zero_point)
 * per tensor; uint8 / int8; attribute axis (negative allowed). As ONNX Runtime does it, each
 * input is requantized through a 256-entry table built at load (QlinearBuildLookupTable with the
 * identity: table[x] = MlasQuantizeLinear(x_scale · (x − x_zp)) with y's scale and zero point),
 * or copied when its scale and zero point equal y's. Up to QCAT_MAX tensors, as Concat (Basic
 * Pitch's harmonic stacking concatenates 8). */
#include <stdio.h>
#include <string.h>

#include "data_common.h"
#include "qlinear_common.h"

#define QCAT_MAX ((Q8RT_MAX_IO - 2) / 3) /* a node's inputs: y_scale, y_zero_point, then triples */

typedef struct qcat_params {
  q8rt_dtype type;
  int count;
  int64_t axis;
  int copy[QCAT_MAX];
  const uint8_t (*table)[256]; /* count tables, in the model's pool */
  q8rt_x8_lut_ukernel_fn lut;  /* the x8-lut kernel applying the tables */
} qcat_params;

typedef struct qcat_geom {
  size_t outer;           /* product of dims before the axis */
  size_t pitch[QCAT_MAX]; /* elements per outer step of each input (axis dim * inner) */
  size_t out_pitch;
  unsigned char in_place[QCAT_MAX]; /* already written in its slice by its producer (qcat_in_place) */
} qcat_geom;
_Static_assert(sizeof(qcat_geom) <= Q8RT_GEOM_BYTES, "QLinearConcat geometry must fit a step's geom record");

static q8rt_status qcat_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  if (n->n_inputs < 5 || (n->n_inputs - 2) % 3 != 0 || n->n_outputs != 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': expects y_scale, y_zero_point and (X, x_scale, x_zero_point) triples", n->op_type,
                     n->name);
  }
  const int count = (n->n_inputs - 2) / 3;
  if (count > QCAT_MAX) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': %d tensors to concatenate, at most %d", n->op_type,
                     n->name, count, QCAT_MAX);
  }
  qcat_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  uint8_t(*table)[256] = q8rt_pool_alloc(ctx->pool, (size_t)count * 256, 16);
  if (p == NULL || table == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->count = count;
  p->table = (const uint8_t(*)[256])table;
  q8rt_status st;
  float ys;
  int32_t yz;
  q8rt_dtype t = Q8RT_DTYPE_UNDEFINED;
  if ((st = op_const_scale(g, n, 0, "y_scale", &ys, err)) != Q8RT_OK) return st;
  if (ir_node_input(g, n, 1) == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': y_zero_point is required", n->op_type, n->name);
  }
  if ((st = qk_zero_point(g, n, 1, "y_zero_point", Q8RT_DTYPE_UNDEFINED, &yz, &t, err)) != Q8RT_OK) return st;
  p->type = t;
  if ((st = ir_attr_int(n, "axis", 0, &p->axis, err)) != Q8RT_OK) return st;
  if (ir_node_attr(n, "axis") == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'axis' is required", n->op_type, n->name);
  }
  int32_t qmin, qmax;
  q8rt_dtype_range(t, &qmin, &qmax);
  const float lo = (float)(qmin - yz), hi = (float)(qmax - yz);
  for (int k = 0; k < count; k++) {
    char what[2][48];
    snprintf(what[0], sizeof(what[0]), "x_scale of input %d", k);
    snprintf(what[1], sizeof(what[1]), "x_zero_point of input %d", k);
    const int base = 2 + 3 * k;
    if (ir_node_input(g, n, base) == NULL) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': tensor %d is missing", n->op_type, n->name, k);
    }
    const q8rt_dtype tx = qk_input_type(g, n, base);
    if (tx != Q8RT_DTYPE_UNDEFINED && tx != t) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': tensor %d is %s, expected %s (y_zero_point's type)",
                       n->op_type, n->name, k, q8rt_onnx_type_name(tx), q8rt_onnx_type_name(t));
    }
    float xs;
    int32_t xz;
    if ((st = op_const_scale(g, n, base + 1, what[0], &xs, err)) != Q8RT_OK) return st;
    if (ir_node_input(g, n, base + 2) == NULL) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': %s is required", n->op_type, n->name, what[1]);
    }
    if ((st = qk_zero_point(g, n, base + 2, what[1], t, &xz, NULL, err)) != Q8RT_OK) return st;
    p->copy[k] = xs == ys && xz == yz;
    for (int i = 0; i < 256; i++) {
      const int32_t x = t == Q8RT_DTYPE_INT8 ? (int32_t)(int8_t)(uint8_t)i : i;
      const float v = xs * (float)(x - xz);
      table[k][i] = (uint8_t)(q8rt_round_clamp(v / ys, lo, hi) + yz);
    }
  }
  const char *lut_name;
  p->lut = op_lookup_table_kernel(ctx->backend, ctx->isa, &lut_name);
  int any_table = 0;
  for (int k = 0; k < count; k++) any_table |= !p->copy[k];
  ctx->kernel = any_table ? lut_name : "qlinear_concat__scalar";
  ctx->reason = "ORT's requantization tables on the x8-lut kernel (copy where scale and zero point match)";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status qcat_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  const qcat_params *p = params;
  const op_shape *first = &in[2];
  out->dtype = p->type;
  out->rank = -1;
  for (int k = 0; k < p->count; k++) {
    const op_shape *s = &in[2 + 3 * k];
    if (s->dtype != Q8RT_DTYPE_UNDEFINED && s->dtype != p->type) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': tensor %d is %s, expected %s", n->op_type, n->name,
                       k, q8rt_onnx_type_name(s->dtype), q8rt_onnx_type_name(p->type));
    }
    if (s->rank < 0) return Q8RT_OK;
  }
  const int r = first->rank;
  int64_t axis;
  if (!op_normalize_axis(p->axis, r, &axis)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': axis %lld is out of range for rank %d", n->op_type,
                     n->name, (long long)p->axis, r);
  }
  *out = *first;
  out->dtype = p->type;
  int64_t total = 0;
  for (int k = 0; k < p->count; k++) {
    const op_shape *s = &in[2 + 3 * k];
    if (s->rank != r) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': tensor %d has rank %d, tensor 0 rank %d", n->op_type,
                       n->name, k, s->rank, r);
    }
    for (int d = 0; d < r; d++) {
      if (d == axis || s->dims[d] < 0 || first->dims[d] < 0) continue;
      if (s->dims[d] != first->dims[d]) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': tensor %d has dimension %d of %lld, tensor 0 %lld",
                         n->op_type, n->name, k, d, (long long)s->dims[d], (long long)first->dims[d]);
      }
    }
    total = total < 0 || s->dims[axis] < 0 ? -1 : total + s->dims[axis];
  }
  out->dims[axis] = total;
  if (!concrete) return Q8RT_OK;
  qcat_geom *gm = geom;
  size_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= (size_t)first->dims[d];
  for (int d = (int)axis + 1; d < r; d++) inner *= (size_t)first->dims[d];
  gm->outer = outer;
  gm->out_pitch = (size_t)total * inner;
  for (int k = 0; k < p->count; k++) gm->pitch[k] = (size_t)in[2 + 3 * k].dims[axis] * inner;
  return Q8RT_OK;
}

typedef struct qcat_job {
  const qcat_params *p;
  const qcat_geom *gm;
  const op_tensor *in;
  uint8_t *y;
} qcat_job;

/* Output rows [begin, end) (rows of the dims before the axis): each input's part copied or mapped
 * through its table. */
/* Bytes of short rows mapped in one x8-lut call before they are spread to the output: a
 * channels-last concatenation has a row of a few channels per pixel, and a call per row would
 * spend more on loading the table than on the row. */
#define QCAT_LUT_BLOCK 4096

static void qcat_rows(void *arg, size_t begin, size_t end) {
  const qcat_job *j = arg;
  const qcat_params *p = j->p;
  const qcat_geom *gm = j->gm;
  uint8_t buf[QCAT_LUT_BLOCK];
  size_t off = 0;
  for (int k = 0; k < p->count; k++) {
    const uint8_t *x = j->in[2 + 3 * k].data;
    const size_t pitch = gm->pitch[k];
    if (gm->in_place[k]) {
      off += pitch;
      continue;
    }
    if (!p->copy[k] && pitch > 0 && pitch <= QCAT_LUT_BLOCK / 8) {
      /* input k's rows are contiguous: map a block of them, then copy each into place */
      const size_t rows = QCAT_LUT_BLOCK / pitch;
      for (size_t o0 = begin; o0 < end; o0 += rows) {
        const size_t nr = end - o0 < rows ? end - o0 : rows;
        p->lut(nr * pitch, x + o0 * pitch, buf, p->table[k]);
        for (size_t i = 0; i < nr; i++) data_copy_bytes(j->y + (o0 + i) * gm->out_pitch + off, buf + i * pitch, pitch);
      }
      off += pitch;
      continue;
    }
    for (size_t o = begin; o < end; o++) {
      uint8_t *dst = j->y + o * gm->out_pitch + off;
      const uint8_t *src = x + o * pitch;
      if (p->copy[k]) {
        data_copy_bytes(dst, src, pitch);
      } else {
        p->lut(pitch, src, dst, p->table[k]);
      }
    }
    off += pitch;
  }
}

static void qcat_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  (void)workspace;
  const qcat_geom *gm = geom;
  qcat_job j = {params, gm, in, out[0].data};
  /* grain: rows of ~8 KB (channels-last concatenations have a row per pixel) */
  op_parallel_range(ctx, gm->outer, 8192 / (gm->out_pitch + 1) + 1, qcat_rows, &j);
}

/* A copied input (same scale and zero point) may be written in place by its producer: input k's
 * rows of pitch[k] elements sit out_pitch apart from the sum of the pitches before it. */
static int qcat_in_place(const void *params, void *geom, int slot, int commit, size_t *offset, size_t *row_len,
                         size_t *row_stride) {
  const qcat_params *p = params;
  qcat_geom *gm = geom;
  if (slot < 2 || (slot - 2) % 3 != 0 || (slot - 2) / 3 >= p->count) return 0;
  const int k = (slot - 2) / 3;
  if (!p->copy[k] || gm->out_pitch == 0 || gm->pitch[k] == 0) return 0;
  size_t off = 0;
  for (int i = 0; i < k; i++) off += gm->pitch[i];
  *offset = off;
  *row_len = gm->pitch[k];
  *row_stride = gm->out_pitch;
  if (commit) gm->in_place[k] = 1;
  return 1;
}

/* Input `slot`'s requantization table, when it has one; commit: its producer applies it, so the
 * input is copied from now on. */
static const uint8_t *qcat_input_table(void *params, int slot, int commit) {
  qcat_params *p = params;
  if (slot < 2 || (slot - 2) % 3 != 0 || (slot - 2) / 3 >= p->count) return NULL;
  const int k = (slot - 2) / 3;
  if (p->copy[k]) return NULL;
  if (commit) p->copy[k] = 1;
  return p->table[k];
}

/* Channels-last: a concatenation along the same logical axis, found where NHWC puts it. */
static const void *qcat_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool,
                             const char **why) {
  const qcat_params *p = params;
  const ir_value *x = ir_node_input(g, n, 2);
  int64_t axis;
  if (x == NULL || x->rank < 3 || !op_normalize_axis(p->axis, x->rank, &axis)) {
    *why = "axis or rank unknown at load";
    return NULL;
  }
  for (int k = 0; k < p->count; k++) {
    const ir_value *v = ir_node_input(g, n, 2 + 3 * k);
    if (v == NULL || v->constant != NULL) {
      *why = "a constant tensor among the inputs";
      return NULL;
    }
  }
  qcat_params *q = q8rt_pool_alloc(pool, sizeof(*q), 16);
  if (q == NULL) return NULL;
  *q = *p;
  q->axis = op_axis_nhwc((int)axis, x->rank);
  return q;
}

const op_def q8rt_op_qlinear_concat = {
    .op_type = "QLinearConcat",
    .domain = "com.microsoft",
    .min_opset = 1,
    .prepare = qcat_prepare,
    .infer = qcat_infer,
    .run = qcat_run,
    .nhwc_params = qcat_nhwc,
    .in_place_input = qcat_in_place,
    .input_table = qcat_input_table,
};
