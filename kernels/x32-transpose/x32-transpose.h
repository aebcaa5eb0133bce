/* x32-transpose: [a][b] (row stride x_stride) -> [b][a] (row stride y_stride) for 4-byte elements
 * (strides in elements). Bits are moved, never computed on, so float NaNs keep their payloads.
 * Channels-last float data copied channel-major (ConvTranspose's few-output-channel route) goes
 * through it; the scalar twin is the definition. */
#ifndef Q8RT_X32_TRANSPOSE_H
#define Q8RT_X32_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

typedef void (*q8rt_x32_transpose_ukernel_fn)(size_t a, size_t b, const uint32_t *x, size_t x_stride, uint32_t *y,
                                              size_t y_stride);

#define Q8RT_X32_TRANSPOSE_UKERNEL(isa, fn) \
  void fn(size_t a, size_t b, const uint32_t *x, size_t x_stride, uint32_t *y, size_t y_stride);
#include "x32-transpose/x32-transpose.inc"
#undef Q8RT_X32_TRANSPOSE_UKERNEL

#endif
