#include "op_util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

q8rt_status op_broadcast_shapes(const op_node *n, const op_shape *const *in, int count, op_shape *out,
                                q8rt_error *err) {
  int rank = 0;
  for (int i = 0; i < count; i++) {
    if (in[i]->rank < 0) {
      out->rank = -1;
      return Q8RT_OK;
    }
    if (in[i]->rank > rank) rank = in[i]->rank;
  }
  out->rank = rank;
  for (int d = 0; d < rank; d++) {
    int64_t dim = 1;
    int unknown = 0;
    for (int i = 0; i < count; i++) {
      const int off = rank - in[i]->rank;
      if (d < off) continue;
      const int64_t v = in[i]->dims[d - off];
      if (v < 0) {
        unknown = 1;
      } else if (v != 1) {
        if (dim != 1 && dim != v) {
          return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                           "%s node '%s': input shapes cannot broadcast (dimension %d: %lld vs %lld)", n->op_type,
                           n->name, d, (long long)dim, (long long)v);
        }
        dim = v;
      }
    }
    out->dims[d] = unknown && dim == 1 ? -1 : dim;
  }
  return Q8RT_OK;
}

void op_broadcast_strides(const op_shape *in, const op_shape *out, int64_t strides[Q8RT_MAX_RANK]) {
  const int off = out->rank - in->rank;
  int64_t s = 1;
  for (int d = out->rank - 1; d >= 0; d--) {
    if (d < off) {
      strides[d] = 0;
      continue;
    }
    const int64_t v = in->dims[d - off];
    strides[d] = v == 1 ? 0 : s;
    s *= v;
  }
}

int op_broadcast_merge(const op_shape *a, const op_shape *b, const op_shape *out, int64_t dims[Q8RT_MAX_RANK],
                       int64_t sa[Q8RT_MAX_RANK], int64_t sb[Q8RT_MAX_RANK]) {
  const op_shape *in[2] = {a, b};
  op_bcast_geom g;
  op_bcast_geom_init(&g, in, 2, out);
  memcpy(dims, g.dims, sizeof(g.dims));
  memcpy(sa, g.s[0], sizeof(g.s[0]));
  memcpy(sb, g.s[1], sizeof(g.s[1]));
  return g.rank;
}

size_t op_shape_count(const op_shape *s) {
  if (s->rank < 0) return 0;
  size_t n = 1;
  for (int d = 0; d < s->rank; d++) n *= (size_t)s->dims[d];
  return n;
}

bool op_shape_same(const op_shape *a, const op_shape *b) {
  if (a->rank != b->rank || a->dtype != b->dtype) return false;
  for (int d = 0; d < a->rank; d++) {
    if (a->dims[d] != b->dims[d]) return false;
  }
  return true;
}

void op_shape_text(const op_shape *s, char *buf, size_t size) {
  size_t len = (size_t)snprintf(buf, size, "[");
  for (int d = 0; d < s->rank && len < size; d++)
    len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? ", " : "", (long long)s->dims[d]);
  if (len < size) snprintf(buf + len, size - len, "]");
}

double op_load_f64(const void *data, q8rt_dtype dtype, size_t i) {
  switch (dtype) {
    case Q8RT_DTYPE_FLOAT32: return ((const float *)data)[i];
    case Q8RT_DTYPE_UINT8: return ((const uint8_t *)data)[i];
    case Q8RT_DTYPE_INT8: return ((const int8_t *)data)[i];
    case Q8RT_DTYPE_UINT16: return ((const uint16_t *)data)[i];
    case Q8RT_DTYPE_INT16: return ((const int16_t *)data)[i];
    case Q8RT_DTYPE_INT32: return ((const int32_t *)data)[i];
    case Q8RT_DTYPE_INT64: return (double)((const int64_t *)data)[i];
    case Q8RT_DTYPE_BOOL: return ((const uint8_t *)data)[i] != 0;
    default: return 0.0;
  }
}

int64_t op_load_i64(const void *data, q8rt_dtype dtype, size_t i) {
  switch (dtype) {
    case Q8RT_DTYPE_FLOAT32: return op_f64_to_i64(((const float *)data)[i]);
    case Q8RT_DTYPE_UINT8: return ((const uint8_t *)data)[i];
    case Q8RT_DTYPE_INT8: return ((const int8_t *)data)[i];
    case Q8RT_DTYPE_UINT16: return ((const uint16_t *)data)[i];
    case Q8RT_DTYPE_INT16: return ((const int16_t *)data)[i];
    case Q8RT_DTYPE_INT32: return ((const int32_t *)data)[i];
    case Q8RT_DTYPE_INT64: return ((const int64_t *)data)[i];
    case Q8RT_DTYPE_BOOL: return ((const uint8_t *)data)[i] != 0;
    default: return 0;
  }
}

q8rt_status op_const_scale(const ir_graph *g, const ir_node *n, int input, const char *what, float *out,
                           q8rt_error *err) {
  const ir_tensor *t;
  q8rt_status st = op_require_constant(g, n, input, what, &t, err);
  if (st != Q8RT_OK) return st;
  if ((st = op_check_scales(n, what, t, err)) != Q8RT_OK) return st;
  if (t->count != 1) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': %s must have one element (has %lld)", n->op_type,
                     n->name, what, (long long)t->count);
  }
  *out = ((const float *)t->data)[0];
  return Q8RT_OK;
}

q8rt_status op_const_zero_point(const ir_graph *g, const ir_node *n, int input, const char *what, int32_t *out,
                                q8rt_dtype *dtype, q8rt_error *err) {
  *out = 0;
  if (ir_node_input(g, n, input) == NULL) return Q8RT_OK;
  const ir_tensor *t;
  q8rt_status st = op_require_constant(g, n, input, what, &t, err);
  if (st != Q8RT_OK) return st;
  if (t->count != 1) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': %s must have one element (has %lld)", n->op_type,
                     n->name, what, (long long)t->count);
  }
  if (t->dtype != Q8RT_DTYPE_UINT8 && t->dtype != Q8RT_DTYPE_INT8) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': %s is %s (uint8 or int8 expected)", n->op_type,
                     n->name, what, q8rt_onnx_type_name(t->dtype));
  }
  *dtype = t->dtype;
  *out = t->dtype == Q8RT_DTYPE_UINT8 ? ((const uint8_t *)t->data)[0] : ((const int8_t *)t->data)[0];
  return Q8RT_OK;
}

void op_batch_iter_init(op_batch_iter *it, int rank, const int64_t *dims, const int64_t *sa, const int64_t *sb) {
  memset(it, 0, sizeof(*it));
  it->rank = rank;
  it->dims = dims;
  it->sa = sa;
  it->sb = sb;
}

void op_batch_iter_next(op_batch_iter *it) {
  for (int d = it->rank - 1; d >= 0; d--) {
    it->idx[d]++;
    it->oa += (size_t)it->sa[d];
    it->ob += (size_t)it->sb[d];
    if (it->idx[d] < it->dims[d]) break;
    it->oa -= (size_t)(it->sa[d] * it->idx[d]);
    it->ob -= (size_t)(it->sb[d] * it->idx[d]);
    it->idx[d] = 0;
  }
}

void op_batch_iter_seek(op_batch_iter *it, size_t index) {
  it->oa = it->ob = 0;
  for (int d = it->rank - 1; d >= 0; d--) {
    it->idx[d] = (int64_t)(index % (size_t)it->dims[d]);
    index /= (size_t)it->dims[d];
    it->oa += (size_t)(it->sa[d] * it->idx[d]);
    it->ob += (size_t)(it->sb[d] * it->idx[d]);
  }
}

typedef struct range_job {
  op_range_fn fn;
  void *arg;
  size_t n, chunk;
} range_job;

static void range_task(void *c, size_t i) {
  const range_job *j = c;
  const size_t b = i * j->chunk;
  j->fn(j->arg, b, b + j->chunk < j->n ? b + j->chunk : j->n);
}

void op_parallel_range(const op_exec_ctx *ctx, size_t n, size_t grain, op_range_fn fn, void *arg) {
  if (n == 0) return;
  if (grain == 0) grain = 1;
  if (ctx == NULL || ctx->pool == NULL || n / OP_MIN_GRAINS < grain) {
    fn(arg, 0, n);
    return;
  }
  size_t chunk = (n + OP_MAX_CHUNKS - 1) / OP_MAX_CHUNKS;
  if (chunk < grain) chunk = grain;
  if (grain >= 64) chunk = (chunk + 63) / 64 * 64; /* element ranges: whole cache lines */
  range_job j = {fn, arg, n, chunk};
  q8rt_parallel_for(ctx->pool, (n + chunk - 1) / chunk, range_task, &j);
}

static int op_splits(const op_exec_ctx *ctx, size_t n, size_t cost, size_t grain) {
  /* n * cost, saturated (a step that large splits anyway) */
  const size_t work = cost != 0 && n > SIZE_MAX / cost ? SIZE_MAX : n * cost;
  return ctx != NULL && ctx->pool != NULL && n >= 2 && work / OP_MIN_GRAINS >= grain;
}

int op_would_split(const op_exec_ctx *ctx, size_t n, size_t cost, size_t grain) {
  return op_splits(ctx, n, cost, grain) && q8rt_threadpool_sharing(ctx->pool);
}

void op_parallel_items(const op_exec_ctx *ctx, size_t n, size_t cost, size_t grain, q8rt_task_fn fn, void *arg) {
  if (!op_splits(ctx, n, cost, grain)) {
    for (size_t i = 0; i < n; i++) fn(arg, i);
    return;
  }
  q8rt_parallel_for(ctx->pool, n, fn, arg);
}

void op_span_walk(int rank, const int64_t *dims, const int64_t *sa, const int64_t *sb, size_t begin, size_t end,
                  op_span_fn fn, void *arg) {
  if (begin >= end) return;
  const size_t inner = (size_t)dims[rank - 1];
  int64_t idx[Q8RT_MAX_RANK] = {0};
  size_t oa = 0, ob = 0;
  size_t rest = begin; /* multi-index of `begin` */
  for (int d = rank - 1; d >= 0; d--) {
    idx[d] = (int64_t)(rest % (size_t)dims[d]);
    rest /= (size_t)dims[d];
    oa += (size_t)(idx[d] * sa[d]);
    ob += (size_t)(idx[d] * sb[d]);
  }
  size_t y = begin;
  while (y < end) {
    const size_t j = (size_t)idx[rank - 1];
    size_t len = inner - j;
    if (len > end - y) len = end - y;
    fn(arg, oa, ob, y, len);
    y += len;
    if (y >= end) break;
    /* to the start of the next row */
    oa -= (size_t)(sa[rank - 1] * (int64_t)j);
    ob -= (size_t)(sb[rank - 1] * (int64_t)j);
    idx[rank - 1] = 0;
    for (int d = rank - 2; d >= 0; d--) {
      idx[d]++;
      oa += (size_t)sa[d];
      ob += (size_t)sb[d];
      if (idx[d] < dims[d]) break;
      oa -= (size_t)(sa[d] * idx[d]);
      ob -= (size_t)(sb[d] * idx[d]);
      idx[d] = 0;
    }
  }
}

void op_bcast_geom_init(op_bcast_geom *g, const op_shape *const *in, int count, const op_shape *out) {
  int64_t st[3][Q8RT_MAX_RANK];
  memset(g, 0, sizeof(*g));
  g->count = count;
  for (int k = 0; k < count; k++) op_broadcast_strides(in[k], out, st[k]);
  int r = 0;
  for (int d = 0; d < out->rank; d++) {
    if (out->dims[d] == 1) continue;
    int merge = r > 0;
    for (int k = 0; k < count && merge; k++) merge = st[k][d] * out->dims[d] == g->s[k][r - 1];
    if (merge) {
      g->dims[r - 1] *= out->dims[d];
      for (int k = 0; k < count; k++) g->s[k][r - 1] = st[k][d];
      continue;
    }
    g->dims[r] = out->dims[d];
    for (int k = 0; k < count; k++) g->s[k][r] = st[k][d];
    r++;
  }
  if (r == 0) {
    g->dims[0] = 1;
    r = 1;
  }
  g->rank = r;
  g->total = op_shape_count(out);
}

void op_bcast_run(const op_bcast_geom *g, op_bcast_row_fn row, const void *ctx, const void *const *src,
                  const size_t *esize, void *dst, size_t esy) {
  if (g->total == 0) return;
  const int r = g->rank, c = g->count;
  const size_t inner = (size_t)g->dims[r - 1];
  size_t stride[3] = {0, 0, 0}, off[3] = {0, 0, 0};
  for (int k = 0; k < c; k++) stride[k] = (size_t)g->s[k][r - 1];
  int64_t idx[Q8RT_MAX_RANK] = {0};
  char *y = dst;
  for (;;) {
    const void *p[3] = {NULL, NULL, NULL};
    for (int k = 0; k < c; k++) p[k] = (const char *)src[k] + off[k] * esize[k];
    row(ctx, inner, p, stride, y);
    y += inner * esy;
    int d = r - 2;
    for (; d >= 0; d--) {
      idx[d]++;
      for (int k = 0; k < c; k++) off[k] += (size_t)g->s[k][d];
      if (idx[d] < g->dims[d]) break;
      for (int k = 0; k < c; k++) off[k] -= (size_t)(g->s[k][d] * idx[d]);
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}

void op_shape_nchw_of_nhwc(op_shape *s) {
  if (s->rank < 3) return;
  const int64_t c = s->dims[s->rank - 1];
  for (int d = s->rank - 1; d > 1; d--) s->dims[d] = s->dims[d - 1];
  s->dims[1] = c;
}

int op_axis_nhwc(int axis, int rank) {
  if (rank < 3 || axis < 1) return axis;
  return axis == 1 ? rank - 1 : axis - 1;
}

static const op_f32_gemm_variant g_f32_gemm[] = {
#define Q8RT_F32_GEMM_UKERNEL(isa, fn, mr, nr) {isa, fn, nr, mr, #fn},
#include "f32-gemm/f32-gemm.inc"
#undef Q8RT_F32_GEMM_UKERNEL
    {0, NULL, 0, 0, NULL},
};

const op_f32_gemm_variant *op_f32_gemm_pick(const op_prepare_ctx *ctx) {
  uint32_t allowed = ctx->isa;
  if (ctx->backend == Q8RT_BACKEND_REFERENCE) allowed = 0;
  if (ctx->backend == Q8RT_BACKEND_AVX2) allowed &= Q8RT_ISA_AVX2;
  for (const op_f32_gemm_variant *v = g_f32_gemm; v->fn != NULL; v++) {
    if (allowed & v->isa) return v;
  }
  return NULL;
}

static const struct {
  uint32_t isa;
  q8rt_f32_vfmac_ukernel_fn fn;
  const char *name;
} g_f32_vfmac[] = {
#define Q8RT_F32_VFMAC_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-vfmac/f32-vfmac.inc"
#undef Q8RT_F32_VFMAC_UKERNEL
};

q8rt_f32_vfmac_ukernel_fn op_f32_vfmac_pick(const op_prepare_ctx *ctx, const char **name, uint32_t *isa) {
  size_t i = OP_FIRST_USABLE(g_f32_vfmac, ctx->isa, ctx->backend);
  if (name != NULL) *name = g_f32_vfmac[i].name + 5; /* drop the "q8rt_" prefix */
  if (isa != NULL) *isa = g_f32_vfmac[i].isa;
  return g_f32_vfmac[i].fn;
}

/* f32-vunary.inc as a table with the kernels' names (for --explain) */
static const struct {
  uint32_t isa;
  q8rt_f32_vunary_ukernel_fn fn[Q8RT_F32_VUNARY_OP_COUNT];
  const char *name[Q8RT_F32_VUNARY_OP_COUNT];
} g_f32_vunary[] = {
#define Q8RT_F32_VUNARY_UKERNELS(isa_flag, isa)                                                                    \
  {isa_flag,                                                                                                       \
   Q8RT_F32_VUNARY_TABLE(isa),                                                                                     \
   {"f32_vclamp_ukernel__" #isa, "f32_vneg_ukernel__" #isa, "f32_vabs_ukernel__" #isa, "f32_vsqrt_ukernel__" #isa, \
    "f32_vlrelu_ukernel__" #isa, "f32_vhsigmoid_ukernel__" #isa, "f32_vhswish_ukernel__" #isa,                     \
    "f32_vsigmoid_ukernel__" #isa, "f32_vtanh_ukernel__" #isa}},
#include "f32-vunary/f32-vunary.inc"
#undef Q8RT_F32_VUNARY_UKERNELS
};

q8rt_f32_vunary_ukernel_fn op_f32_vunary_pick(const op_prepare_ctx *ctx, enum q8rt_f32_vunary_op op,
                                              const char **name) {
  size_t v = OP_FIRST_USABLE(g_f32_vunary, ctx->isa, ctx->backend);
  if (name != NULL) *name = g_f32_vunary[v].name[op];
  return g_f32_vunary[v].fn[op];
}

static const struct {
  uint32_t isa;
  q8rt_f32_vtranscend_ukernel_fn fn[Q8RT_F32_VTRANSCEND_OP_COUNT];
  const char *name[Q8RT_F32_VTRANSCEND_OP_COUNT];
} g_f32_vtranscend[] = {
#define Q8RT_F32_VTRANSCEND_UKERNELS(isa_flag, isa) \
  {isa_flag,                                        \
   Q8RT_F32_VTRANSCEND_TABLE(isa),                  \
   {"f32_vexp_ukernel__" #isa, "f32_vlog_ukernel__" #isa, "f32_verf_ukernel__" #isa}},
#include "f32-vtranscend/f32-vtranscend.inc"
#undef Q8RT_F32_VTRANSCEND_UKERNELS
};

q8rt_f32_vtranscend_ukernel_fn op_f32_vtranscend_pick(const op_prepare_ctx *ctx, enum q8rt_f32_vtranscend_op op,
                                                      const char **name) {
  size_t v = OP_FIRST_USABLE(g_f32_vtranscend, ctx->isa, ctx->backend);
  if (name != NULL) *name = g_f32_vtranscend[v].name[op];
  return g_f32_vtranscend[v].fn[op];
}

static const struct {
  uint32_t isa;
  q8rt_f32_velu_ukernel_fn fn[Q8RT_F32_VELU_OP_COUNT];
  const char *name[Q8RT_F32_VELU_OP_COUNT];
} g_f32_velu[] = {
#define Q8RT_F32_VTRANSCEND_UKERNELS(isa_flag, isa) \
  {isa_flag, Q8RT_F32_VELU_TABLE(isa), {"f32_velu_ukernel__" #isa, "f32_vselu_ukernel__" #isa}},
#include "f32-vtranscend/f32-vtranscend.inc"
#undef Q8RT_F32_VTRANSCEND_UKERNELS
};

q8rt_f32_velu_ukernel_fn op_f32_velu_pick(const op_prepare_ctx *ctx, enum q8rt_f32_velu_op op, const char **name) {
  size_t v = OP_FIRST_USABLE(g_f32_velu, ctx->isa, ctx->backend);
  if (name != NULL) *name = g_f32_velu[v].name[op];
  return g_f32_velu[v].fn[op];
}

q8rt_s32_f32_vcvt_ukernel_fn op_s32_f32_vcvt_pick(const op_prepare_ctx *ctx) {
  q8rt_s32_f32_vcvt_ukernel_fn fn = q8rt_s32_f32_vcvt_ukernel__scalar;
  (void)ctx; /* unused where s32-f32-vcvt.inc lists no SIMD variant for the target */
#define Q8RT_S32_F32_VCVT_UKERNEL(visa, f) \
  if (fn == q8rt_s32_f32_vcvt_ukernel__scalar && op_isa_usable(visa, ctx->isa, ctx->backend)) fn = f;
#include "s32-f32-vcvt/s32-f32-vcvt.inc"
#undef Q8RT_S32_F32_VCVT_UKERNEL
  return fn;
}

q8rt_status op_to_float_scale(const ir_graph *g, const ir_node *n, float *scale, int *dynamic, q8rt_error *err) {
  const ir_value *sv = ir_node_input(g, n, 4);
  if (sv == NULL || (sv->dtype != Q8RT_DTYPE_UNDEFINED && sv->dtype != Q8RT_DTYPE_FLOAT32)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': scale must be a float32 input", n->op_type, n->name);
  }
  *dynamic = sv->constant == NULL;
  if (sv->constant != NULL) {
    if (sv->constant->dtype != Q8RT_DTYPE_FLOAT32 || sv->constant->count != 1) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': scale must be one float32 value", n->op_type,
                       n->name);
    }
    *scale = *(const float *)sv->constant->data;
  }
  return Q8RT_OK;
}

void *op_pack_find(const op_prepare_ctx *ctx, const void *src, const char *kind, size_t d0, size_t d1, size_t d2) {
  if (ctx->packs == NULL) return NULL;
  for (const op_pack_entry *e = *ctx->packs; e != NULL; e = e->next) {
    if (e->src == src && strcmp(e->kind, kind) == 0 && e->d[0] == d0 && e->d[1] == d1 && e->d[2] == d2) {
      return e->packed;
    }
  }
  return NULL;
}

void op_pack_keep(op_prepare_ctx *ctx, const void *src, const char *kind, size_t d0, size_t d1, size_t d2,
                  void *packed) {
  if (ctx->packs == NULL) return;
  op_pack_entry *e = q8rt_pool_alloc(ctx->pool, sizeof(*e), 16);
  if (e == NULL) return;
  e->src = src;
  e->kind = kind;
  e->d[0] = d0;
  e->d[1] = d1;
  e->d[2] = d2;
  e->packed = packed;
  e->next = *ctx->packs;
  *ctx->packs = e;
}
