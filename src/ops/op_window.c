#include "op_window.h"

#include <string.h>

/* Attribute `name` (values a->ints[i], a->len[i]) with `count` values (count 0: any number, values
 * checked only). */
static q8rt_status window_ints(const op_window_attrs *a, int i, const op_node *n, const char *name, int count,
                               int64_t def, int64_t min, int64_t max, int64_t *out, q8rt_error *err) {
  const int64_t *v = a->ints[i];
  const size_t len = a->len[i];
  for (int k = 0; k < count; k++) out[k] = def;
  if (v == NULL) return Q8RT_OK;
  if (count != 0 && len != (size_t)count) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute '%s' has %zu values, expected %d",
                     n->op_type, n->name, name, len, count);
  }
  for (size_t k = 0; k < len; k++) {
    if (v[k] < min || v[k] > max) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute '%s' value %lld is out of range",
                       n->op_type, n->name, name, (long long)v[k]);
    }
    if (count != 0) out[k] = v[k];
  }
  return Q8RT_OK;
}

static const char *const window_names[4] = {"kernel_shape", "strides", "dilations", "pads"};

q8rt_status op_window_attrs_read(const ir_node *n, int flags, q8rt_pool *pool, op_window_attrs *a, q8rt_error *err) {
  memset(a, 0, sizeof(*a));
  q8rt_status st;
  for (int i = 0; i < 4; i++) {
    const int64_t *v;
    if ((st = ir_attr_ints(n, window_names[i], &v, &a->len[i], err)) != Q8RT_OK) return st;
    a->ints[i] = v;
    if (v != NULL && pool != NULL) {
      int64_t *c = q8rt_pool_array(pool, a->len[i] + 1, sizeof(int64_t));
      if (c == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
      if (a->len[i] > 0) memcpy(c, v, a->len[i] * sizeof(int64_t));
      a->ints[i] = c;
    }
  }
  if ((st = ir_attr_string(n, "auto_pad", "NOTSET", &a->auto_pad, err)) != Q8RT_OK) return st;
  if (pool != NULL && (a->auto_pad = q8rt_pool_strdup(pool, a->auto_pad)) == NULL)
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if ((flags & OP_WINDOW_CEIL_MODE) && (st = ir_attr_int(n, "ceil_mode", 0, &a->ceil_mode, err)) != Q8RT_OK) {
    return st;
  }
  return Q8RT_OK;
}

q8rt_status op_window_resolve(const op_window_attrs *a, const op_node *n, int spatial,
                              const int64_t *kernel_from_weights, int64_t max_value, int flags, op_window *w,
                              q8rt_error *err) {
  memset(w, 0, sizeof(*w));
  w->spatial = spatial;
  w->flags = flags;
  for (int i = 0; i < 3; i++) w->kernel[i] = w->stride[i] = w->dilation[i] = 1;
  const int sp = spatial;
  int64_t ks[3];
  q8rt_status st;
  if ((st = window_ints(a, 0, n, "kernel_shape", sp, -1, 1, max_value, ks, err)) != Q8RT_OK) return st;
  if ((st = window_ints(a, 1, n, "strides", sp, 1, 1, max_value, w->stride, err)) != Q8RT_OK) return st;
  if ((st = window_ints(a, 2, n, "dilations", sp, 1, 1, max_value, w->dilation, err)) != Q8RT_OK) return st;
  if ((st = window_ints(a, 3, n, "pads", 2 * sp, 0, 0, max_value, w->pads, err)) != Q8RT_OK) return st;
  for (int i = 0; i < sp; i++) {
    w->kernel[i] = ks[i];
    if (kernel_from_weights == NULL) continue;
    w->kernel[i] = kernel_from_weights[i];
    if (ks[i] >= 0 && kernel_from_weights[i] >= 0 && ks[i] != kernel_from_weights[i]) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "%s node '%s': attribute 'kernel_shape' %lld differs from the weights' %lld", n->op_type,
                       n->name, (long long)ks[i], (long long)kernel_from_weights[i]);
    }
  }
  const char *ap = a->auto_pad;
  if (strcmp(ap, "NOTSET") == 0) {
    w->auto_pad = OP_PAD_NOTSET;
  } else if (strcmp(ap, "VALID") == 0) {
    w->auto_pad = OP_PAD_VALID;
  } else if (strcmp(ap, "SAME_UPPER") == 0) {
    w->auto_pad = OP_PAD_SAME_UPPER;
  } else if (strcmp(ap, "SAME_LOWER") == 0) {
    w->auto_pad = OP_PAD_SAME_LOWER;
  } else {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'auto_pad' has the unknown value '%s'",
                     n->op_type, n->name, ap);
  }
  if (w->auto_pad != OP_PAD_NOTSET) memset(w->pads, 0, sizeof(w->pads));
  if (flags & OP_WINDOW_CEIL_MODE) w->ceil_mode = a->ceil_mode;
  return Q8RT_OK;
}

q8rt_status op_window_parse(const ir_node *n, int spatial, const int64_t *kernel_from_weights, int64_t max_value,
                            int flags, op_window *w, q8rt_error *err) {
  op_window_attrs a;
  q8rt_status st = op_window_attrs_read(n, flags, NULL, &a, err);
  if (st != Q8RT_OK) return st;
  const op_node d = op_node_view(n);
  return op_window_resolve(&a, &d, spatial, kernel_from_weights, max_value, flags, w, err);
}

q8rt_status op_window_output(const op_window *w, const op_node *n, int axis, int64_t in, int64_t *out,
                             int64_t *pad_begin, int64_t *pad_end, q8rt_error *err) {
  const int64_t k = w->kernel[axis], s = w->stride[axis], d = w->dilation[axis];
  int64_t o = -1, pb = 0, pe = 0;
  /* Every operand is at most 2^31 (tensor sizes) or max_value (attributes, <= 2^24 by the
   * callers), so the sums and products below stay far inside int64. */
  if (in > Q8RT_MAX_ELEMENTS) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input size %lld on spatial axis %d is too large", n->op_type,
                     n->name, (long long)in, axis);
  }
  if (in >= 0 && k >= 0) {
    const int64_t ek = (k - 1) * d + 1; /* dilated kernel extent */
    int too_small;
    if (w->auto_pad == OP_PAD_SAME_UPPER || w->auto_pad == OP_PAD_SAME_LOWER) {
      if ((w->flags & OP_WINDOW_SAME_UNDILATED) && d != 1) {
        return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                         "%s node '%s': auto_pad SAME_UPPER/SAME_LOWER with dilations > 1 is not supported (ONNX "
                         "Runtime sizes the padding without the dilation, unlike the ONNX spec)",
                         n->op_type, n->name);
      }
      o = (in + s - 1) / s;
      int64_t total = (o - 1) * s + ek - in;
      if (total < 0) total = 0;
      pb = w->auto_pad == OP_PAD_SAME_UPPER ? total / 2 : total - total / 2;
      pe = total - pb;
      too_small = o <= 0 && (w->flags & OP_WINDOW_NONEMPTY);
    } else {
      pb = w->pads[axis];
      pe = w->pads[w->spatial + axis];
      const int64_t span = in + pb + pe - ek;
      too_small = span < 0;
      if (w->ceil_mode) {
        o = (span + s - 1) / s + 1;
        if ((o - 1) * s >= in + pb) o--; /* the last window must start inside the input or its begin pad */
      } else {
        o = span / s + 1;
      }
    }
    if (too_small) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "%s node '%s': the kernel (%lld with dilation %lld) is larger than the padded input (%lld) on "
                       "spatial axis %d",
                       n->op_type, n->name, (long long)k, (long long)d, (long long)(in + pb + pe), axis);
    }
  }
  *out = o;
  if (pad_begin != NULL) *pad_begin = pb;
  if (pad_end != NULL) *pad_end = pe;
  return Q8RT_OK;
}

void op_window_geom_init(op_window_geom *g) {
  memset(g, 0, sizeof(*g));
  for (int i = 0; i < 3; i++) g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
}

void op_window_geom_axis(op_window_geom *g, const op_window *w, int axis, int64_t in, int64_t out, int64_t k,
                         int64_t pb, int64_t pe) {
  const int j = 3 - w->spatial + axis;
  g->in[j] = in;
  g->out[j] = out;
  g->k[j] = k;
  g->s[j] = w->stride[axis];
  g->d[j] = w->dilation[axis];
  g->pb[j] = pb;
  g->pe[j] = pe;
}
