#include "data_common.h"

#include <string.h>

#include "runtime/isa.h"
#include "x32-transpose/x32-transpose.h"

q8rt_status data_check_arity(const ir_node *n, int min_in, int max_in, int min_out, int max_out, q8rt_error *err) {
  if (n->n_inputs < min_in || n->n_inputs > max_in || n->n_outputs < min_out || n->n_outputs > max_out) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': has %d inputs and %d outputs (expects %d to %d inputs, %d to %d outputs)",
                     n->op_type, n->name, n->n_inputs, n->n_outputs, min_in, max_in, min_out, max_out);
  }
  if (n->inputs[0] < 0 && min_in > 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input 0 is missing", n->op_type, n->name);
  }
  if (n->outputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': output 0 is missing", n->op_type, n->name);
  }
  return Q8RT_OK;
}

q8rt_status data_const_ints(op_prepare_ctx *ctx, int input, const char *what, int allow_i32, int allow_scalar,
                            int64_t **vals, size_t *count, int *present, q8rt_error *err) {
  const ir_node *n = ctx->node;
  const ir_value *v = ir_node_input(ctx->graph, n, input);
  *vals = NULL;
  *count = 0;
  *present = 0;
  if (v == NULL) return Q8RT_OK;
  if (v->constant == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input %d (%s, '%s') is computed at run time: not supported (q8rt needs it to be "
                     "an initializer or a constant)",
                     n->op_type, n->name, input, what, v->name);
  }
  const ir_tensor *t = v->constant;
  if (t->dtype != Q8RT_DTYPE_INT64 && !(allow_i32 && t->dtype == Q8RT_DTYPE_INT32)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d (%s) is %s, expected int64%s", n->op_type,
                     n->name, input, what, q8rt_onnx_type_name(t->dtype), allow_i32 ? " or int32" : "");
  }
  if (t->rank > 1 || (t->rank == 0 && !allow_scalar)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d (%s) has rank %d, expected 1", n->op_type,
                     n->name, input, what, t->rank);
  }
  int64_t *out = q8rt_pool_array(ctx->pool, (size_t)t->count + 1, sizeof(int64_t));
  if (out == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  for (int64_t i = 0; i < t->count; i++) out[i] = op_load_i64(t->data, t->dtype, (size_t)i);
  *vals = out;
  *count = (size_t)t->count;
  *present = 1;
  return Q8RT_OK;
}

q8rt_status data_shape_values(const op_node *n, const op_shape *s, int input, const char *what, int concrete,
                              int64_t *vals, size_t max, size_t *count, int *known, q8rt_error *err) {
  *known = 0;
  *count = 0;
  if (s->dtype != Q8RT_DTYPE_UNDEFINED && s->dtype != Q8RT_DTYPE_INT64) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d (%s) is %s, expected int64", n->op_type,
                     n->name, input, what, q8rt_onnx_type_name(s->dtype));
  }
  if (s->rank > 1 || s->rank == 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d (%s) has rank %d, expected 1", n->op_type,
                     n->name, input, what, s->rank);
  }
  if (s->rank == 1 && s->dims[0] > (int64_t)max) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input %d (%s) has %lld values (q8rt's limit is %zu)",
                     n->op_type, n->name, input, what, (long long)s->dims[0], max);
  }
  if (s->value == NULL || s->rank != 1 || s->dims[0] < 0) {
    if (!concrete) return Q8RT_OK;
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input %d (%s) is computed at run time: not supported (q8rt needs its value when "
                     "shapes are bound)",
                     n->op_type, n->name, input, what);
  }
  *count = (size_t)s->dims[0];
  if (*count > 0) memcpy(vals, s->value, *count * sizeof(int64_t));
  *known = 1;
  return Q8RT_OK;
}

q8rt_status data_attr_ints(op_prepare_ctx *ctx, const char *name, int64_t **vals, size_t *count, int *present,
                           q8rt_error *err) {
  const int64_t *v;
  size_t len;
  *vals = NULL;
  *count = 0;
  *present = 0;
  q8rt_status st = ir_attr_ints(ctx->node, name, &v, &len, err);
  if (st != Q8RT_OK) return st;
  if (ir_node_attr(ctx->node, name) == NULL) return Q8RT_OK;
  int64_t *out = q8rt_pool_array(ctx->pool, len + 1, sizeof(int64_t));
  if (out == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  if (len > 0) memcpy(out, v, len * sizeof(int64_t));
  *vals = out;
  *count = len;
  *present = 1;
  return Q8RT_OK;
}

q8rt_status data_check_movable(const op_node *n, const op_shape *s, const char *what, q8rt_error *err) {
  if (s->dtype == Q8RT_DTYPE_UNDEFINED || q8rt_dtype_size(s->dtype) > 0) return Q8RT_OK;
  return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input %s has type %s, which q8rt does not support",
                   n->op_type, n->name, what, q8rt_onnx_type_name((int32_t)s->dtype));
}

q8rt_status data_check_float(const op_node *n, const op_shape *s, const char *what, int allow_8bit, q8rt_error *err) {
  if (s->dtype == Q8RT_DTYPE_UNDEFINED || s->dtype == Q8RT_DTYPE_FLOAT32) return Q8RT_OK;
  if (allow_8bit && (s->dtype == Q8RT_DTYPE_UINT8 || s->dtype == Q8RT_DTYPE_INT8)) return Q8RT_OK;
  return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input %s is %s (q8rt runs it on float32%s)", n->op_type,
                   n->name, what, q8rt_onnx_type_name((int32_t)s->dtype), allow_8bit ? ", uint8 and int8" : " only");
}

q8rt_status data_count(const op_node *n, const op_shape *s, int64_t *count, q8rt_error *err) {
  if (s->rank < 0 || !q8rt_shape_elements(s->dims, s->rank, count)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': tensor shape is unknown or too large", n->op_type, n->name);
  }
  return Q8RT_OK;
}

#define STRIDED_LOOP(T)                                          \
  do {                                                           \
    const T *s = (const T *)src;                                 \
    T *d = (T *)dst;                                             \
    for (;;) {                                                   \
      const T *p = s + off;                                      \
      for (int64_t j = 0; j < inner; j++) d[j] = p[j * istride]; \
      d += inner;                                                \
      int k = rank - 2;                                          \
      for (; k >= 0; k--) {                                      \
        idx[k]++;                                                \
        off += strides[k];                                       \
        if (idx[k] < dims[k]) break;                             \
        off -= strides[k] * dims[k];                             \
        idx[k] = 0;                                              \
      }                                                          \
      if (k < 0) break;                                          \
    }                                                            \
  } while (0)

/* The best x8 / x32 transpose kernels of this CPU (byte moves only: every variant gives the same
 * bytes, so the backend does not choose here, as for the planner's layout changes). */
static const struct {
  uint32_t isa;
  q8rt_x8_transpose_ukernel_fn fn;
} g_x8_transpose[] = {
#define Q8RT_X8_TRANSPOSE_UKERNEL(isa, fn) {isa, fn},
#include "x8-transpose/x8-transpose.inc"
#undef Q8RT_X8_TRANSPOSE_UKERNEL
};
static const struct {
  uint32_t isa;
  q8rt_x32_transpose_ukernel_fn fn;
} g_x32_transpose[] = {
#define Q8RT_X32_TRANSPOSE_UKERNEL(isa, fn) {isa, fn},
#include "x32-transpose/x32-transpose.inc"
#undef Q8RT_X32_TRANSPOSE_UKERNEL
};

/* Runs `body` for each index of dims[0..rank) (rank >= 0) in C order, with `off` the source
 * offset (offset + the strides' sum) and `blk` the index's position in that order. */
#define FOR_EACH_OUTER(rank, dims, strides, offset, body) \
  do {                                                    \
    int64_t idx_[Q8RT_MAX_RANK] = {0}, off = (offset);    \
    for (size_t blk = 0;; blk++) {                        \
      body;                                               \
      int k_ = (rank)-1;                                  \
      for (; k_ >= 0; k_--) {                             \
        idx_[k_]++;                                       \
        off += (strides)[k_];                             \
        if (idx_[k_] < (dims)[k_]) break;                 \
        off -= (strides)[k_] * (dims)[k_];                \
        idx_[k_] = 0;                                     \
      }                                                   \
      if (k_ < 0) break;                                  \
    }                                                     \
  } while (0)

void data_strided_copy(const void *src, void *dst, size_t elem, int rank, const int64_t *in_dims,
                       const int64_t *in_strides, int64_t offset) {
  /* axes of size 1 dropped, and an axis merged into the one before it when that one steps over
   * it exactly (strides[k-1] == strides[k] * dims[k]): fewer, longer loops */
  int64_t dims[Q8RT_MAX_RANK], strides[Q8RT_MAX_RANK];
  int r = 0;
  for (int k = 0; k < rank; k++) {
    if (in_dims[k] <= 0) return;
    if (in_dims[k] == 1) continue;
    if (r > 0 && strides[r - 1] == in_strides[k] * in_dims[k]) {
      dims[r - 1] *= in_dims[k];
      strides[r - 1] = in_strides[k];
    } else {
      dims[r] = in_dims[k];
      strides[r] = in_strides[k];
      r++;
    }
  }
  const char *sb = src;
  char *db = dst;
  if (r == 0) {
    memcpy(db, sb + (size_t)offset * elem, elem);
    return;
  }
  const int64_t inner = dims[r - 1], istride = strides[r - 1];
  if (istride == 1) { /* rows */
    const size_t row = (size_t)inner * elem;
    FOR_EACH_OUTER(r - 1, dims, strides, offset, data_copy_bytes(db + blk * row, sb + off * (int64_t)elem, row));
    return;
  }
  if (r >= 2 && strides[r - 2] == 1 && istride > 0 && (elem == 1 || elem == 4)) {
    /* the last two axes swap the source's rows and columns: blocks of a 2-D transpose, source
     * [dims[r-1]][dims[r-2]] (row stride istride) to destination [dims[r-2]][dims[r-1]] */
    const uint32_t isa = q8rt_cpu_isa();
    const size_t a = (size_t)inner, b = (size_t)dims[r - 2], block = a * b * elem;
    if (elem == 1) {
      size_t v = 0;
      while ((g_x8_transpose[v].isa & isa) != g_x8_transpose[v].isa) v++;
      const q8rt_x8_transpose_ukernel_fn fn = g_x8_transpose[v].fn;
      FOR_EACH_OUTER(r - 2, dims, strides, offset,
                     fn(a, b, (const uint8_t *)sb + off, (size_t)istride, (uint8_t *)db + blk * block, a));
    } else {
      size_t v = 0;
      while ((g_x32_transpose[v].isa & isa) != g_x32_transpose[v].isa) v++;
      const q8rt_x32_transpose_ukernel_fn fn = g_x32_transpose[v].fn;
      FOR_EACH_OUTER(r - 2, dims, strides, offset,
                     fn(a, b, (const uint32_t *)(const void *)sb + off, (size_t)istride,
                        (uint32_t *)(void *)(db + blk * block), a));
    }
    return;
  }
  rank = r;
  int64_t idx[Q8RT_MAX_RANK] = {0};
  int64_t off = offset;
  switch (elem) {
    case 1: STRIDED_LOOP(uint8_t); break;
    case 2: STRIDED_LOOP(uint16_t); break;
    case 4: STRIDED_LOOP(uint32_t); break;
    default: STRIDED_LOOP(uint64_t); break;
  }
}
