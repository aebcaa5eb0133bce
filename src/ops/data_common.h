/* Helpers shared by the data-movement, pooling and float spatial ops (concat.c, pad.c, slice_gather.c,
 * max_pool_average_pool.c, conv_conv_transpose.c, ...): constant shape-like inputs, dtype checks,
 * strided copies. */
#ifndef Q8RT_DATA_COMMON_H
#define Q8RT_DATA_COMMON_H

#include <string.h>

#include "op.h"
#include "op_util.h"

/* A shape-like input (Reshape shape, Slice starts, Pad pads, ...) as int64 values copied into the
 * pool. Absent (omitted or past the inputs): *present = 0, Q8RT_OK. Present but not a constant:
 * Q8RT_ERROR_UNSUPPORTED ("computed at run time: not supported"). Must be int64 (or int32 when
 * allow_i32) and of rank <= 1 (rank 0 allowed when allow_scalar). */
q8rt_status data_const_ints(op_prepare_ctx *ctx, int input, const char *what, int allow_i32, int allow_scalar,
                            int64_t **vals, size_t *count, int *present, q8rt_error *err);

/* The values of a 1-D int64 shape-like input (Expand shape, Tile repeats, ConstantOfShape input)
 * at infer: a constant, or a small value computed when shapes are bound. At most `max` values
 * (else a message naming the node). Unknown: at load (concrete = 0) *known = 0 and Q8RT_OK; when
 * binding, Q8RT_ERROR_UNSUPPORTED ("computed at run time"). */
q8rt_status data_shape_values(const op_node *n, const op_shape *s, int input, const char *what, int concrete,
                              int64_t *vals, size_t max, size_t *count, int *known, q8rt_error *err);

/* An ints attribute copied into the pool (absent: *present = 0). */
q8rt_status data_attr_ints(op_prepare_ctx *ctx, const char *name, int64_t **vals, size_t *count, int *present,
                           q8rt_error *err);

/* Fails unless input `what` has a dtype q8rt can move (any q8rt dtype); undefined passes (load). */
q8rt_status data_check_movable(const op_node *n, const op_shape *s, const char *what, q8rt_error *err);
/* Fails unless the dtype is float32 (or, with allow_8bit, uint8/int8); undefined passes. */
q8rt_status data_check_float(const op_node *n, const op_shape *s, const char *what, int allow_8bit, q8rt_error *err);

/* Elements of a concrete shape, failing with a message naming the node when too large. */
q8rt_status data_count(const op_node *n, const op_shape *s, int64_t *count, q8rt_error *err);

/* Copies a strided view of src into dst in C order: dst[i0..] = src[offset + sum(i_k * strides_k)]
 * (element units; strides may be negative or zero). */
void data_strided_copy(const void *src, void *dst, size_t elem, int rank, const int64_t *dims, const int64_t *strides,
                       int64_t offset);

/* Copies n bytes between buffers that do not overlap. Channels-last concatenations and splits
 * copy a pixel's few channels at a time (16-64 bytes): fixed-size pieces the compiler turns into
 * vector moves (the last piece overlapping the one before) instead of a memcpy call per pixel. */
static inline void data_copy_bytes(void *dst, const void *src, size_t n) {
  char *d = dst;
  const char *s = src;
  if (n > 256) {
    memcpy(d, s, n);
  } else if (n >= 16) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) memcpy(d + i, s + i, 16);
    if (i < n) memcpy(d + n - 16, s + n - 16, 16);
  } else if (n >= 8) {
    memcpy(d, s, 8);
    memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    memcpy(d, s, 4);
    memcpy(d + n - 4, s + n - 4, 4);
  } else {
    for (size_t i = 0; i < n; i++) d[i] = s[i];
  }
}

/* Check that the node has between min_in and max_in inputs and exactly `outs` outputs (the first
 * required). */
q8rt_status data_check_arity(const ir_node *n, int min_in, int max_in, int min_out, int max_out, q8rt_error *err);

#endif
