/* Pad (any element type): modes constant, reflect, edge and wrap; pads (negative ones crop) and
 * constant_value as attributes before opset 11, inputs from 11 (constant_value a constant, pads a
 * constant or a value computed when shapes are bound: TF-style SAME padding exported as a
 * Shape -> Gather -> arithmetic -> Concat chain); axes input from 18. */
#include <math.h>
#include <string.h>

#include "data_common.h"

enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };
/* The mode attribute's spelling (also the plan's reason) and the reason when pads are known at bind. */
static const struct {
  const char *name, *bound_reason;
} pad_modes[] = {
    [PAD_CONSTANT] = {"constant", "constant (pads known at bind)"},
    [PAD_REFLECT] = {"reflect", "reflect (pads known at bind)"},
    [PAD_EDGE] = {"edge", "edge (pads known at bind)"},
    [PAD_WRAP] = {"wrap", "wrap (pads known at bind)"},
};

typedef struct pad_params {
  enum pad_mode mode;
  int64_t *pads, *axes;
  size_t npads, naxes;
  int has_axes;
  int pads_bound;      /* pads (input 1) is not a constant: its values are read in infer, when shapes are bound */
  int value_from_attr; /* value is a float attribute (opset < 11) converted to the data type */
  float attr_value;
  const ir_tensor *value; /* constant_value input, or NULL */
} pad_params;

typedef struct pad_geom {
  int rank; /* axes up to the last padded one: the unpadded axes after it are one block */
  int mode;
  size_t vsize; /* bytes of one element (of value) */
  size_t elem;  /* bytes of one block: an element times the unpadded trailing axes */
  int64_t in[Q8RT_MAX_RANK], out[Q8RT_MAX_RANK], begin[Q8RT_MAX_RANK], end[Q8RT_MAX_RANK];
  unsigned char value[8];
} pad_geom;

/* The number of pads against the rank limit and the axes input. */
static q8rt_status pad_check_count(const pad_params *p, const char *name, q8rt_error *err) {
  if (p->npads % 2 != 0 || p->npads > 2 * Q8RT_MAX_RANK) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Pad node '%s': pads has %zu values (two per axis expected)", name,
                     p->npads);
  }
  if (p->has_axes && p->naxes * 2 != p->npads) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Pad node '%s': pads has %zu values for %zu axes", name, p->npads,
                     p->naxes);
  }
  return Q8RT_OK;
}

static q8rt_status pad_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  const int attrs = n->opset < 11;
  if ((st = data_check_arity(n, attrs ? 1 : 2, attrs ? 1 : 4, 1, 1, err)) != Q8RT_OK) return st;
  pad_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  const char *mode;
  if ((st = ir_attr_string(n, "mode", "constant", &mode, err)) != Q8RT_OK) return st;
  int m = PAD_CONSTANT;
  while (m <= PAD_WRAP && strcmp(mode, pad_modes[m].name) != 0) m++;
  if (m > PAD_WRAP || (m == PAD_WRAP && n->opset < 19)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "Pad node '%s': attribute 'mode' '%s' is not a Pad mode at opset %d", n->name, mode, n->opset);
  }
  p->mode = (enum pad_mode)m;
  int present;
  if (attrs) {
    if ((st = data_attr_ints(ctx, "pads", &p->pads, &p->npads, &present, err)) != Q8RT_OK) return st;
    if ((st = ir_attr_float(n, "value", 0.0f, &p->attr_value, err)) != Q8RT_OK) return st;
    p->value_from_attr = 1;
  } else {
    const ir_value *pv = ir_node_input(ctx->graph, n, 1);
    if (pv != NULL && pv->constant == NULL) {
      p->pads_bound = 1;
      present = 1;
    } else if ((st = data_const_ints(ctx, 1, "pads", 0, 0, &p->pads, &p->npads, &present, err)) != Q8RT_OK) {
      return st;
    }
    const ir_value *v = ir_node_input(ctx->graph, n, 2);
    if (v != NULL) {
      if (v->constant == NULL) {
        return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                         "Pad node '%s': input 2 (constant_value, '%s') is computed at run time: not supported (q8rt "
                         "needs it to be an initializer or a constant)",
                         n->name, v->name);
      }
      if (v->constant->count != 1) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                         "Pad node '%s': input 2 (constant_value) has %lld elements, expected 1", n->name,
                         (long long)v->constant->count);
      }
      p->value = v->constant;
    }
    if (n->opset >= 18) {
      if ((st = data_const_ints(ctx, 3, "axes", 1, 0, &p->axes, &p->naxes, &p->has_axes, err)) != Q8RT_OK) return st;
    } else if (n->n_inputs > 3) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Pad node '%s': input 3 (axes) needs opset 18 (model: %d)",
                       n->name, n->opset);
    }
  }
  if (!present) return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Pad node '%s': pads are missing", n->name);
  if (!p->pads_bound && (st = pad_check_count(p, n->name, err)) != Q8RT_OK) return st;
  ctx->kernel = "pad__scalar";
  ctx->reason = p->pads_bound ? pad_modes[p->mode].bound_reason : pad_modes[p->mode].name;
  *out = p;
  return Q8RT_OK;
}

static void store_value(const pad_params *p, q8rt_dtype dt, unsigned char out[8]) {
  memset(out, 0, 8);
  if (p->value != NULL) {
    memcpy(out, p->value->data, q8rt_dtype_size(p->value->dtype));
    return;
  }
  const float f = p->attr_value;
  const double d = isfinite(f) ? (double)f : 0.0;
  switch (dt) {
    case Q8RT_DTYPE_FLOAT32: memcpy(out, &f, 4); break;
    case Q8RT_DTYPE_UINT8: out[0] = (uint8_t)(d < 0 ? 0 : d > 255 ? 255 : d); break;
    case Q8RT_DTYPE_INT8: {
      int8_t v = (int8_t)(d < -128 ? -128 : d > 127 ? 127 : d);
      memcpy(out, &v, 1);
      break;
    }
    case Q8RT_DTYPE_UINT16: {
      uint16_t v = (uint16_t)(d < 0 ? 0 : d > 65535 ? 65535 : d);
      memcpy(out, &v, 2);
      break;
    }
    case Q8RT_DTYPE_INT16: {
      int16_t v = (int16_t)(d < -32768 ? -32768 : d > 32767 ? 32767 : d);
      memcpy(out, &v, 2);
      break;
    }
    case Q8RT_DTYPE_INT32: {
      int32_t v = (int32_t)(d < -2147483648.0 ? -2147483648.0 : d > 2147483647.0 ? 2147483647.0 : d);
      memcpy(out, &v, 4);
      break;
    }
    case Q8RT_DTYPE_INT64: {
      int64_t v = (int64_t)(d < -9.2e18 ? -9.2e18 : d > 9.2e18 ? 9.2e18 : d);
      memcpy(out, &v, 8);
      break;
    }
    default: break;
  }
}

static q8rt_status pad_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                             void *geom, q8rt_error *err) {
  const pad_params *p = params;
  const op_shape *x = &in[0];
  q8rt_status st;
  if ((st = data_check_movable(n, x, "data", err)) != Q8RT_OK) return st;
  if (p->value != NULL && x->dtype != Q8RT_DTYPE_UNDEFINED && p->value->dtype != x->dtype) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Pad node '%s': input 2 (constant_value) is %s, data is %s",
                     n->name, q8rt_onnx_type_name(p->value->dtype), q8rt_onnx_type_name(x->dtype));
  }
  out->dtype = x->dtype;
  out->rank = x->rank;
  pad_params bound;
  int64_t store[2 * Q8RT_MAX_RANK];
  if (p->pads_bound) {
    /* at load the output keeps the input's rank with unknown dims; when binding the values must be known */
    int known;
    size_t count;
    st = data_shape_values(n, &in[1], 1, "pads", concrete, store, 2 * Q8RT_MAX_RANK, &count, &known, err);
    if (st != Q8RT_OK) return st;
    if (!known) {
      for (int d = 0; d < x->rank; d++) out->dims[d] = -1;
      return Q8RT_OK;
    }
    bound = *p;
    bound.pads = store;
    bound.npads = count;
    if ((st = pad_check_count(&bound, n->name, err)) != Q8RT_OK) return st;
    p = &bound;
  }
  if (x->rank < 0) return Q8RT_OK;
  const int r = x->rank;
  int64_t b[Q8RT_MAX_RANK] = {0}, e[Q8RT_MAX_RANK] = {0};
  if (p->has_axes) {
    int seen[Q8RT_MAX_RANK] = {0};
    for (size_t i = 0; i < p->naxes; i++) {
      int64_t a;
      if (!op_normalize_axis(p->axes[i], r, &a) || seen[a]) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Pad node '%s': axes[%zu] = %lld is out of range or repeated",
                         n->name, i, (long long)p->axes[i]);
      }
      seen[a] = 1;
      b[a] = p->pads[i];
      e[a] = p->pads[i + p->naxes];
    }
  } else {
    if (p->npads != 2 * (size_t)r) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Pad node '%s': pads has %zu values, the input has rank %d",
                       n->name, p->npads, r);
    }
    for (int d = 0; d < r; d++) {
      b[d] = p->pads[d];
      e[d] = p->pads[d + r];
    }
  }
  for (int d = 0; d < r; d++) {
    if (b[d] < -(1LL << 40) || b[d] > (1LL << 40) || e[d] < -(1LL << 40) || e[d] > (1LL << 40)) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Pad node '%s': pads for axis %d are out of range", n->name, d);
    }
    if (x->dims[d] < 0) {
      out->dims[d] = -1;
      continue;
    }
    out->dims[d] = x->dims[d] + b[d] + e[d];
    if (out->dims[d] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Pad node '%s': negative pads make axis %d negative", n->name, d);
    }
    /* wrap repeats what is left of the axis after its crops (as ONNX Runtime): nothing left, nothing to repeat */
    const int64_t left = x->dims[d] + (b[d] < 0 ? b[d] : 0) + (e[d] < 0 ? e[d] : 0);
    if (p->mode != PAD_CONSTANT && (x->dims[d] == 0 || (p->mode == PAD_WRAP && left <= 0)) && out->dims[d] > 0) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Pad node '%s': mode %s cannot pad an empty axis %d", n->name,
                       pad_modes[p->mode].name, d);
    }
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t c;
  if ((st = data_count(n, x, &c, err)) != Q8RT_OK) return st;
  if ((st = data_count(n, out, &c, err)) != Q8RT_OK) return st;
  pad_geom *gm = geom;
  /* Trailing axes without pads move as whole blocks: the rows of the last padded axis are then
   * copied as runs (Basic Pitch pads [1, 172, 264, 1] along axis 2: one-element rows otherwise). */
  int last = r - 1;
  while (last >= 0 && b[last] == 0 && e[last] == 0) last--;
  gm->rank = last + 1;
  gm->mode = p->mode;
  gm->vsize = q8rt_dtype_size(x->dtype);
  gm->elem = gm->vsize;
  int empty = 0;
  for (int d = last + 1; d < r; d++) empty |= x->dims[d] == 0;
  /* without a zero among them, the block's dims multiply to at most the input's count (data_count) */
  for (int d = last + 1; d < r && !empty; d++) gm->elem *= (size_t)x->dims[d];
  if (empty) gm->elem = 0;
  for (int d = 0; d <= last; d++) {
    gm->in[d] = x->dims[d];
    gm->out[d] = out->dims[d];
    gm->begin[d] = b[d];
    gm->end[d] = e[d];
  }
  store_value(p, x->dtype, gm->value);
  return Q8RT_OK;
}

/* Source index along one axis for output index o, or -1 for the constant. Wrap repeats the part
 * left after the crops (negative pads), as ONNX Runtime: pad_infer refuses an axis with none left. */
static int64_t pad_map(int mode, int64_t o, int64_t begin, int64_t end, int64_t n) {
  int64_t i = o - begin;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PAD_EDGE: return i < 0 ? 0 : n - 1;
    case PAD_WRAP: {
      const int64_t lo = begin < 0 ? -begin : 0, m = n - lo - (end < 0 ? -end : 0);
      i = (i - lo) % m;
      return lo + (i < 0 ? i + m : i);
    }
    case PAD_REFLECT: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      i %= period;
      if (i < 0) i += period;
      return i >= n ? period - i : i;
    }
    default: return -1;
  }
}

/* n bytes of the value (vsize bytes) repeated; n is a multiple of vsize. */
static void pad_fill(unsigned char *dst, size_t n, const unsigned char *value, size_t vsize) {
  if (n == 0) return;
  if (vsize == 1) {
    memset(dst, value[0], n);
    return;
  }
  memcpy(dst, value, vsize);
  for (size_t have = vsize; have < n;) {
    const size_t k = have < n - have ? have : n - have;
    memcpy(dst + have, dst, k);
    have += k;
  }
}

typedef struct pad_job {
  const pad_geom *gm;
  const unsigned char *src;
  unsigned char *dst;
  int64_t in_strides[Q8RT_MAX_RANK];
  int64_t lo, hi; /* output positions [lo, hi) of a row read the source row's contiguous run */
} pad_job;

/* Output rows [begin, end) (the indices of every axis but the last padded one, in C order): each
 * a fill, or its source row's run plus the pads on either side. */
static void pad_rows(void *arg, size_t begin, size_t end) {
  const pad_job *j = arg;
  const pad_geom *gm = j->gm;
  const int r = gm->rank;
  const size_t elem = gm->elem;
  const int64_t inner = gm->out[r - 1], n_last = gm->in[r - 1], begin_last = gm->begin[r - 1];
  const int64_t end_last = gm->end[r - 1], lo = j->lo, hi = j->hi;
  const size_t row_bytes = (size_t)inner * elem;
  int64_t idx[Q8RT_MAX_RANK] = {0};
  size_t rest = begin;
  for (int d = r - 2; d >= 0; d--) {
    idx[d] = (int64_t)(rest % (size_t)gm->out[d]);
    rest /= (size_t)gm->out[d];
  }
  unsigned char *dst = j->dst + begin * row_bytes;
  for (size_t row = begin; row < end; row++, dst += row_bytes) {
    /* the source row for the outer indices */
    int64_t off = 0;
    int constant = 0;
    for (int d = 0; d < r - 1; d++) {
      const int64_t i = pad_map(gm->mode, idx[d], gm->begin[d], gm->end[d], gm->in[d]);
      if (i < 0) {
        constant = 1;
        break;
      }
      off += i * j->in_strides[d];
    }
    for (int d = r - 2; d >= 0; d--) {
      if (++idx[d] < gm->out[d]) break;
      idx[d] = 0;
    }
    if (constant) {
      pad_fill(dst, row_bytes, gm->value, gm->vsize);
      continue;
    }
    const unsigned char *src_row = j->src + (size_t)off * elem;
    if (lo < hi) memcpy(dst + (size_t)lo * elem, src_row + (size_t)(lo - begin_last) * elem, (size_t)(hi - lo) * elem);
    if (gm->mode == PAD_CONSTANT) { /* everything outside [lo, hi) is the value */
      if (lo < hi) {
        pad_fill(dst, (size_t)lo * elem, gm->value, gm->vsize);
        pad_fill(dst + (size_t)hi * elem, (size_t)(inner - hi) * elem, gm->value, gm->vsize);
      } else {
        pad_fill(dst, row_bytes, gm->value, gm->vsize);
      }
      continue;
    }
    for (int64_t o = 0; o < inner; o++) {
      if (o == lo && lo < hi) {
        o = hi - 1;
        continue;
      }
      const int64_t i = pad_map(gm->mode, o, begin_last, end_last, n_last);
      memcpy(dst + (size_t)o * elem, src_row + (size_t)i * elem, elem); /* i >= 0: not constant mode */
    }
  }
}

static void pad_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  (void)params, (void)workspace;
  const pad_geom *gm = geom;
  const int r = gm->rank;
  const size_t elem = gm->elem;
  if (elem == 0) return;
  if (r == 0) {
    memcpy(out[0].data, in[0].data, elem);
    return;
  }
  size_t rows = 1;
  for (int d = 0; d < r; d++) {
    if (gm->out[d] == 0) return;
    if (d < r - 1) rows *= (size_t)gm->out[d]; /* at most the output's count (pad_infer) */
  }
  pad_job j = {.gm = gm, .src = in[0].data, .dst = out[0].data};
  int64_t s = 1;
  for (int d = r - 1; d >= 0; d--) {
    j.in_strides[d] = s;
    s *= gm->in[d];
  }
  const int64_t inner = gm->out[r - 1], begin = gm->begin[r - 1];
  j.lo = begin > 0 ? begin : 0;
  j.hi = begin + gm->in[r - 1] < inner ? begin + gm->in[r - 1] : inner;
  /* rows are independent; grain ~16 KB of output (the same bytes for any split) */
  op_parallel_range(ctx, rows, 16384 / ((size_t)inner * elem + 1) + 1, pad_rows, &j);
}

const op_def q8rt_op_pad = {
    .op_type = "Pad", .domain = "", .min_opset = 2, .prepare = pad_prepare, .infer = pad_infer, .run = pad_run};
