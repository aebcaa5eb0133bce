/* Resize (opsets 10, 11, 13, 18, 19) and Upsample (opsets 7 to 9, deprecated in 10: scales as an
 * attribute before 9, as input 1 in 9; Resize-10's semantics, as ONNX Runtime runs both with one
 * kernel):
 *   mode nearest on any element type (float32, uint8, int8, ...: values are copied), with
 *     nearest_mode round_prefer_floor / round_prefer_ceil / floor / ceil (opset 10: ONNX Runtime's
 *     original rule, floor when upsampling and ceil when downsampling);
 *   mode linear on float32, uint8 and int8 over the last two axes (2-D input, or 4-D with the N and C
 *     scales 1), computed as ONNX Runtime does (weights from the clamped source coordinate, float32;
 *     8-bit values blended in float32 and truncated, as its UpsampleBilinear<uint8_t/int8_t>);
 *   mode cubic on float32 over the same axes, as ONNX Runtime's ResizeBiCubic (cubic_coeff_a,
 *     exclude_outside 0: Keys' weights from the coordinate's fraction, taps clamped to the axis);
 *   coordinate_transformation_mode half_pixel, half_pixel_symmetric, pytorch_half_pixel,
 *     align_corners, asymmetric, tf_half_pixel_for_nn (opset 11/12);
 *   scales (a constant) or sizes (a constant, or a value computed when shapes are bound: a
 *     Shape -> Slice -> Concat chain giving another tensor's H and W, as Paddle exports upsample
 *     to a feature map's size), axes (18+), keep_aspect_ratio_policy stretch/not_larger/not_smaller.
 * Refused: cubic with exclude_outside 1, tf_crop_and_resize, antialias, scales computed at run time, and sizes computed
 * from data (not known when shapes are bound).
 * Coordinates are computed in float32 as ONNX Runtime does. */
#include <math.h>
#include <string.h>

#include "data_common.h"
#include "resize_compute.h"

enum rs_mode { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum rs_policy { POL_STRETCH, POL_NOT_LARGER, POL_NOT_SMALLER };

typedef struct resize_params {
  enum rs_mode mode;
  enum rs_ctm ctm;
  enum rs_nearest nearest;
  enum rs_policy policy;
  float cubic_a;  /* cubic_coeff_a (mode cubic) */
  float *scales;  /* count entries, or NULL */
  int64_t *sizes; /* count entries, or NULL */
  int64_t *axes;  /* count entries, or NULL (all axes) */
  size_t count;
  int nhwc;        /* nearest, channels-last: the attributes apply to the NCHW axes */
  int sizes_bound; /* sizes (input 3) is not a constant: read in infer (sizes NULL, count 0 here) */
} resize_params;

typedef struct resize_geom {
  int rank;
  int lin_axes; /* linear, cubic: number of trailing interpolated axes (2) */
  size_t elem;
  int dtype; /* the input's (q8rt_dtype) */
  int64_t in[Q8RT_MAX_RANK], out[Q8RT_MAX_RANK];
  float scale[Q8RT_MAX_RANK];
} resize_geom;

static q8rt_status resize_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  const ir_graph *g = ctx->graph;
  q8rt_status st;
  const int upsample = strcmp(n->op_type, "Upsample") == 0;
  const int scales_attr = upsample && n->opset < 9;
  const int v10 = upsample || n->opset < 11;
  if (upsample && n->opset >= 10) { /* as ONNX Runtime */
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': Upsample is deprecated at opset %d (Resize replaces it)", n->op_type, n->name,
                     n->opset);
  }
  if ((st = data_check_arity(n, scales_attr ? 1 : v10 ? 2 : 1, scales_attr ? 1 : v10 ? 2 : 4, 1, 1, err)) != Q8RT_OK) {
    return st;
  }
  resize_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  const char *s;
  if ((st = ir_attr_string(n, "mode", "nearest", &s, err)) != Q8RT_OK) return st;
  if (strcmp(s, "nearest") == 0) {
    p->mode = RS_NEAREST;
  } else if (strcmp(s, "linear") == 0) {
    p->mode = RS_LINEAR;
  } else if (strcmp(s, "cubic") == 0) {
    p->mode = RS_CUBIC;
  } else {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'mode' has the unknown value '%s'",
                     n->op_type, n->name, s);
  }
  if ((st = ir_attr_string(n, "coordinate_transformation_mode", v10 ? "asymmetric" : "half_pixel", &s, err)) !=
      Q8RT_OK) {
    return st;
  }
  if (v10) s = "asymmetric";
  if (strcmp(s, "half_pixel") == 0) {
    p->ctm = CTM_HALF_PIXEL;
  } else if (strcmp(s, "half_pixel_symmetric") == 0 && n->opset >= 19) {
    p->ctm = CTM_HALF_PIXEL_SYM;
  } else if (strcmp(s, "pytorch_half_pixel") == 0) {
    p->ctm = CTM_PYTORCH;
  } else if (strcmp(s, "align_corners") == 0) {
    p->ctm = CTM_ALIGN;
  } else if (strcmp(s, "asymmetric") == 0) {
    p->ctm = CTM_ASYM;
  } else if (strcmp(s, "tf_half_pixel_for_nn") == 0 && n->opset < 13) {
    p->ctm = CTM_TF_NN;
  } else if (strcmp(s, "tf_crop_and_resize") == 0) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': attribute 'coordinate_transformation_mode' 'tf_crop_and_resize' is not supported",
                     n->op_type, n->name);
  } else {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': attribute 'coordinate_transformation_mode' '%s' is not valid at opset %d",
                     n->op_type, n->name, s, n->opset);
  }
  if ((st = ir_attr_string(n, "nearest_mode", "round_prefer_floor", &s, err)) != Q8RT_OK) return st;
  if (v10) {
    p->nearest = NM_SIMPLE;
  } else if (strcmp(s, "round_prefer_floor") == 0) {
    p->nearest = NM_ROUND_FLOOR;
  } else if (strcmp(s, "round_prefer_ceil") == 0) {
    p->nearest = NM_ROUND_CEIL;
  } else if (strcmp(s, "floor") == 0) {
    p->nearest = NM_FLOOR;
  } else if (strcmp(s, "ceil") == 0) {
    p->nearest = NM_CEIL;
  } else {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'nearest_mode' has the unknown value '%s'",
                     n->op_type, n->name, s);
  }
  int64_t antialias, exclude_outside;
  if ((st = ir_attr_int(n, "antialias", 0, &antialias, err)) != Q8RT_OK) return st;
  if ((st = ir_attr_int(n, "exclude_outside", 0, &exclude_outside, err)) != Q8RT_OK) return st;
  if (antialias != 0) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': attribute 'antialias' = 1 is not supported",
                     n->op_type, n->name);
  }
  if (exclude_outside != 0) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': attribute 'exclude_outside' = 1 (cubic only) is not supported", n->op_type,
                     n->name);
  }
  if ((st = ir_attr_float(n, "cubic_coeff_a", -0.75f, &p->cubic_a, err)) != Q8RT_OK) return st;
  if (!isfinite(p->cubic_a)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'cubic_coeff_a' is not finite", n->op_type,
                     n->name);
  }
  if ((st = ir_attr_string(n, "keep_aspect_ratio_policy", "stretch", &s, err)) != Q8RT_OK) return st;
  if (strcmp(s, "stretch") == 0) {
    p->policy = POL_STRETCH;
  } else if (strcmp(s, "not_larger") == 0) {
    p->policy = POL_NOT_LARGER;
  } else if (strcmp(s, "not_smaller") == 0) {
    p->policy = POL_NOT_SMALLER;
  } else {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': attribute 'keep_aspect_ratio_policy' has the unknown value '%s'", n->op_type,
                     n->name, s);
  }
  int has_axes;
  size_t naxes;
  if ((st = data_attr_ints(ctx, "axes", &p->axes, &naxes, &has_axes, err)) != Q8RT_OK) return st;

  /* scales (input 1 at opset 10, else 2) and sizes (input 3) */
  const int si = v10 ? 1 : 2;
  const ir_value *sv = ir_node_input(g, n, si);
  const ir_value *zv = v10 ? NULL : ir_node_input(g, n, 3);
  if (sv != NULL && sv->constant == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input %d (scales, '%s') is computed at run time: not supported (q8rt needs it to "
                     "be an initializer or a constant)",
                     n->op_type, n->name, si, sv->name);
  }
  const ir_tensor *scales = sv != NULL && sv->constant->count > 0 ? sv->constant : NULL;
  const ir_attr *scales_at = scales_attr ? ir_node_attr(n, "scales") : NULL;
  if (scales_attr) {
    if (scales_at == NULL || scales_at->type != IR_ATTR_FLOATS || scales_at->count == 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "%s node '%s': attribute 'scales' (floats) is required at opset %d", n->op_type, n->name,
                       n->opset);
    }
  }
  int has_sizes = 0;
  size_t nsizes = 0;
  if (zv != NULL && zv->constant == NULL) {
    p->sizes_bound = 1; /* its values when shapes are bound (resize_bound_sizes) */
    has_sizes = 1;
  } else if (zv != NULL) {
    if ((st = data_const_ints(ctx, 3, "sizes", 0, 0, &p->sizes, &nsizes, &has_sizes, err)) != Q8RT_OK) return st;
    if (nsizes == 0) {
      has_sizes = 0;
      p->sizes = NULL;
    }
  }
  if (scales_at == NULL && (scales != NULL) == (has_sizes != 0)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     upsample ? "%s node '%s': input 1 (scales) is empty"
                              : "%s node '%s': exactly one of scales and sizes must be given",
                     n->op_type, n->name);
  }
  if (scales_at != NULL || scales != NULL) {
    if (scales_at == NULL && (scales->dtype != Q8RT_DTYPE_FLOAT32 || scales->rank != 1)) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d (scales) must be a 1-D float32 tensor",
                       n->op_type, n->name, si);
    }
    p->count = scales_at != NULL ? scales_at->count : (size_t)scales->count;
    p->scales = q8rt_pool_array(ctx->pool, p->count, sizeof(float));
    if (p->scales == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
    memcpy(p->scales, scales_at != NULL ? (const void *)scales_at->floats : scales->data, p->count * sizeof(float));
    for (size_t i = 0; i < p->count; i++) {
      if (!(p->scales[i] > 0.0f) || !isfinite(p->scales[i])) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': scales[%zu] is %g (must be positive)",
                         n->op_type, n->name, i, (double)p->scales[i]);
      }
      if (upsample && p->scales[i] < 1.0f) { /* as ONNX Runtime: Upsample only enlarges */
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': scales[%zu] is %g (must be >= 1)", n->op_type,
                         n->name, i, (double)p->scales[i]);
      }
    }
  } else {
    p->count = nsizes;
    for (size_t i = 0; i < nsizes; i++) {
      if (p->sizes[i] < 0) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': sizes[%zu] is negative", n->op_type, n->name, i);
      }
    }
  }
  if (p->sizes_bound) {
    if (has_axes && naxes > Q8RT_MAX_RANK) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'axes' has %zu values", n->op_type,
                       n->name, naxes);
    }
    p->count = naxes; /* checked against sizes in infer */
  } else if (p->count > Q8RT_MAX_RANK || (has_axes && naxes != p->count)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': %s has %zu values%s", n->op_type, n->name,
                     p->scales != NULL ? "scales" : "sizes", p->count,
                     has_axes ? " but attribute 'axes' does not match" : "");
  }
  ctx->kernel = p->mode == RS_NEAREST  ? "resize_nearest__scalar"
                : p->mode == RS_LINEAR ? "resize_bilinear__scalar"
                                       : "resize_bicubic_f32__scalar";
  ctx->reason = "reference";
  *out = p;
  return Q8RT_OK;
}

/* Sizes computed when shapes are bound (params sizes_bound): *q becomes a copy of p with them
 * (sizes pointing at `vals`). *known = 0 while they are not known (at load). */
static q8rt_status resize_bound_sizes(const resize_params *p, const op_node *n, const op_shape *sz, int concrete,
                                      resize_params *q, int64_t vals[Q8RT_MAX_RANK], int *known, q8rt_error *err) {
  size_t count;
  q8rt_status st = data_shape_values(n, sz, 3, "sizes", concrete, vals, Q8RT_MAX_RANK, &count, known, err);
  if (st != Q8RT_OK || !*known) return st;
  if (p->axes != NULL && count != p->count) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': sizes has %zu values but attribute 'axes' %zu",
                     n->op_type, n->name, count, p->count);
  }
  for (size_t i = 0; i < count; i++) {
    if (vals[i] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': sizes[%zu] is negative", n->op_type, n->name, i);
    }
  }
  *q = *p;
  q->sizes = vals;
  q->count = count;
  return Q8RT_OK;
}

static q8rt_status resize_infer_nchw(const void *params, const op_node *n, const op_shape *in, const op_shape *sz,
                                     op_shape *out, int concrete, void *geom, q8rt_error *err) {
  const resize_params *p = params;
  const op_shape *x = &in[0];
  q8rt_status st;
  if (p->mode != RS_NEAREST) {
    if ((st = data_check_float(n, x, "X", p->mode == RS_LINEAR, err)) != Q8RT_OK) return st;
  } else if ((st = data_check_movable(n, x, "X", err)) != Q8RT_OK) {
    return st;
  }
  out->dtype = x->dtype;
  out->rank = x->rank;
  if (x->rank < 0) return Q8RT_OK;
  const int r = x->rank;
  resize_params bound = *p;
  int64_t bound_sizes[Q8RT_MAX_RANK];
  if (p->sizes_bound) {
    int known;
    if ((st = resize_bound_sizes(p, n, sz, concrete, &bound, bound_sizes, &known, err)) != Q8RT_OK) return st;
    if (!known) {
      for (int d = 0; d < r; d++) out->dims[d] = -1;
      return Q8RT_OK;
    }
    p = &bound;
  }
  /* scales / sizes per axis */
  float scale[Q8RT_MAX_RANK];
  int64_t size[Q8RT_MAX_RANK];
  int given[Q8RT_MAX_RANK] = {0};
  if (p->axes == NULL && p->count != (size_t)r) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': %s has %zu values, the input has rank %d",
                     n->op_type, n->name, p->scales != NULL ? "scales" : "sizes", p->count, r);
  }
  for (int d = 0; d < r; d++) {
    scale[d] = 1.0f;
    size[d] = x->dims[d];
  }
  for (size_t i = 0; i < p->count; i++) {
    int64_t a = (int64_t)i;
    if (p->axes != NULL && !op_normalize_axis(p->axes[i], r, &a)) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "%s node '%s': attribute 'axes' value %lld is out of range for rank %d", n->op_type, n->name,
                       (long long)p->axes[i], r);
    }
    if (given[a]) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': axis %lld is repeated", n->op_type, n->name,
                       (long long)a);
    }
    given[a] = 1;
    if (p->scales != NULL) {
      scale[a] = p->scales[i];
    } else {
      size[a] = p->sizes[i];
    }
  }
  if (p->mode != RS_NEAREST) {
    const int ok = r == 2 || (r == 4 && ((p->scales != NULL && scale[0] == 1.0f && scale[1] == 1.0f) ||
                                         (p->scales == NULL && size[0] == x->dims[0] && size[1] == x->dims[1])));
    if (!ok) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                       "%s node '%s': mode %s is supported on the last two axes only (2-D input, or 4-D with N and C "
                       "unscaled)",
                       n->op_type, n->name, p->mode == RS_LINEAR ? "linear" : "cubic");
    }
  }
  int known = 1;
  for (int d = 0; d < r; d++) known &= x->dims[d] >= 0;
  if (!known) {
    for (int d = 0; d < r; d++) {
      if (x->dims[d] < 0) {
        out->dims[d] = -1;
      } else if (p->scales != NULL) {
        const float want = scale[d] * (float)x->dims[d];
        /* checked before the conversion: a float out of int64's range converts to nothing defined */
        if (!(want < (float)Q8RT_MAX_ELEMENTS)) {
          return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': output axis %d is too large (scale %g)", n->op_type,
                           n->name, d, (double)scale[d]);
        }
        out->dims[d] = (int64_t)want;
      } else {
        out->dims[d] = p->policy == POL_STRETCH ? size[d] : -1;
      }
    }
    return Q8RT_OK;
  }
  if (p->scales != NULL) {
    for (int d = 0; d < r; d++) {
      const float want = scale[d] * (float)x->dims[d];
      if (!(want < (float)Q8RT_MAX_ELEMENTS)) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': output axis %d is too large (scale %g)", n->op_type,
                         n->name, d, (double)scale[d]);
      }
      size[d] = (int64_t)want;
      if (p->ctm == CTM_ALIGN && (float)size[d] != want) {
        return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                         "%s node '%s': align_corners with a scale (%g) that does not give a whole output size on "
                         "axis %d: ONNX's reference and ONNX Runtime differ there (not supported)",
                         n->op_type, n->name, (double)scale[d], d);
      }
    }
  } else {
    for (int d = 0; d < r; d++) {
      if (x->dims[d] == 0) {
        if (size[d] != 0) {
          return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': axis %d is empty but sizes asks for %lld", n->op_type,
                           n->name, d, (long long)size[d]);
        }
        scale[d] = 1.0f;
      } else {
        scale[d] = (float)size[d] / (float)x->dims[d];
      }
    }
    if (p->policy != POL_STRETCH) {
      float s = p->policy == POL_NOT_LARGER ? 3.4e38f : -3.4e38f;
      for (int d = 0; d < r; d++) {
        if (!given[d]) continue;
        s = p->policy == POL_NOT_LARGER ? (scale[d] < s ? scale[d] : s) : (scale[d] > s ? scale[d] : s);
      }
      for (int d = 0; d < r; d++) {
        if (!given[d]) continue;
        scale[d] = s;
        const float want = roundf(s * (float)x->dims[d]);
        if (!(want < (float)Q8RT_MAX_ELEMENTS)) {
          return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': output axis %d is too large (scale %g)", n->op_type,
                           n->name, d, (double)s);
        }
        size[d] = (int64_t)want;
      }
    }
    for (int d = 0; d < r; d++) {
      if (!(scale[d] > 0.0f) && x->dims[d] > 0) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': sizes[%d] is 0 for a non-empty axis", n->op_type,
                         n->name, d);
      }
    }
  }
  for (int d = 0; d < r; d++) {
    if (size[d] < 0 || size[d] > Q8RT_MAX_ELEMENTS) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': output axis %d is too large", n->op_type, n->name, d);
    }
    out->dims[d] = size[d];
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t c;
  if ((st = data_count(n, x, &c, err)) != Q8RT_OK) return st;
  if ((st = data_count(n, out, &c, err)) != Q8RT_OK) return st;
  resize_geom *gm = geom;
  gm->rank = r;
  gm->lin_axes = p->mode != RS_NEAREST ? 2 : 0;
  gm->elem = q8rt_dtype_size(x->dtype);
  gm->dtype = (int)x->dtype;
  for (int d = 0; d < r; d++) {
    gm->in[d] = x->dims[d];
    gm->out[d] = out->dims[d];
    gm->scale[d] = scale[d];
  }
  return Q8RT_OK;
}

/* NHWC -> NCHW position of each axis (rank >= 3): physical d holds logical perm[d]. */
static void nhwc_perm(int r, int perm[Q8RT_MAX_RANK]) {
  perm[0] = 0;
  for (int d = 1; d < r - 1; d++) perm[d] = d + 1;
  perm[r - 1] = 1;
}

static q8rt_status resize_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                                void *geom, q8rt_error *err) {
  const resize_params *p = params;
  const op_shape *sz = p->sizes_bound ? &in[3] : NULL;
  if (!p->nhwc || in[0].rank < 3) return resize_infer_nchw(params, n, in, sz, out, concrete, geom, err);
  /* Nearest resizing is one index map per axis: work out the NCHW maps, then lay them out NHWC. */
  op_shape xl = in[0];
  op_shape_nchw_of_nhwc(&xl);
  q8rt_status st = resize_infer_nchw(params, n, &xl, sz, out, concrete, geom, err);
  if (st != Q8RT_OK || out->rank < 3) return st;
  const int r = out->rank;
  int perm[Q8RT_MAX_RANK];
  nhwc_perm(r, perm);
  op_shape o = *out;
  for (int d = 0; d < r; d++) out->dims[d] = o.dims[perm[d]];
  if (concrete && geom != NULL) {
    resize_geom *gm = geom;
    const resize_geom lg = *gm;
    for (int d = 0; d < r; d++) {
      gm->in[d] = lg.in[perm[d]];
      gm->out[d] = lg.out[perm[d]];
      gm->scale[d] = lg.scale[perm[d]];
    }
  }
  return Q8RT_OK;
}

/* Channels-last for nearest mode (per-axis index maps commute with the axis order). */
static const void *resize_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool,
                               const char **why) {
  (void)g;
  (void)n;
  const resize_params *p = params;
  if (p->mode != RS_NEAREST) {
    *why = "linear and cubic modes run on float NCHW planes";
    return NULL;
  }
  resize_params *q = q8rt_pool_alloc(pool, sizeof(*q), 16);
  if (q == NULL) return NULL;
  *q = *p;
  q->nhwc = 1;
  return q;
}

static size_t resize_workspace(const void *params, const void *geom, size_t threads) {
  (void)params, (void)threads;
  const resize_geom *gm = geom;
  size_t total = 0;
  for (int d = 0; d < gm->rank; d++) total += (size_t)gm->out[d];
  /* nearest: one int64 per output index; linear: two int64 and two floats per index; cubic: four
     of each */
  return total * 4 * (sizeof(int64_t) + sizeof(float)) + 64;
}

static void resize_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                       const op_exec_ctx *ctx) {
  const resize_params *p = params;
  const resize_geom *gm = geom;
  const int r = gm->rank;
  for (int d = 0; d < r; d++) {
    if (gm->out[d] == 0) return;
  }
  /* Output dims equal to the input's: a copy in every mode, as ONNX Runtime does (a blend with
     weights 1 and 0 would turn -0 into +0 and an inf or NaN neighbour into NaN) */
  size_t count = 1;
  int same = 1;
  for (int d = 0; d < r; d++) {
    same &= gm->out[d] == gm->in[d];
    count *= (size_t)gm->in[d];
  }
  if (same) {
    memcpy(out[0].data, in[0].data, count * gm->elem);
    return;
  }
  const resize_shape s = {.rank = r, .elem = gm->elem, .in = gm->in, .out = gm->out, .scale = gm->scale};
  if (p->mode == RS_NEAREST) {
    resize_nearest(&s, p->ctm, p->nearest, in[0].data, out[0].data, workspace, ctx);
  } else if (p->mode == RS_LINEAR) {
    const enum resize_elem et = gm->dtype == Q8RT_DTYPE_UINT8 ? RS_U8 : gm->dtype == Q8RT_DTYPE_INT8 ? RS_S8 : RS_F32;
    resize_bilinear(&s, p->ctm, et, in[0].data, out[0].data, workspace);
  } else {
    resize_bicubic_f32(&s, p->ctm, p->cubic_a, in[0].data, out[0].data, workspace);
  }
}

const op_def q8rt_op_resize = {.op_type = "Resize",
                               .domain = "",
                               .min_opset = 10,
                               .prepare = resize_prepare,
                               .infer = resize_infer,
                               .workspace = resize_workspace,
                               .run = resize_run,
                               .nhwc_params = resize_nhwc};

const op_def q8rt_op_upsample = {.op_type = "Upsample",
                                 .domain = "",
                                 .min_opset = 7,
                                 .prepare = resize_prepare,
                                 .infer = resize_infer,
                                 .workspace = resize_workspace,
                                 .run = resize_run,
                                 .nhwc_params = resize_nhwc};
