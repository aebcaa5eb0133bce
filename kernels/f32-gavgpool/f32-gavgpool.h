/* f32-gavgpool: global average of channels-last pixels, channels side by side
 *   y[c] = sum(x[i * stride + c], i < pixels) / count   for c < channels
 * in ONNX Runtime's MLAS order for one channel: four running sums over the pixels 4k+j (each
 * starting at +0.0 and adding the pixel as the second operand), combined as (s0 + s2) + (s1 + s3),
 * then the last pixels one by one, then one division. Vectors hold channels, never pixels, so
 * every variant gives the scalar twin's bytes (zero signs included; a NaN result is NaN in every
 * variant, which NaN survives two meeting follows the compiler's operand order and is not promised).
 * GlobalAveragePool and AveragePool over the whole plane (src/ops/max_pool_average_pool.c) read it
 * for channels-last inputs; f32-gavgpool-cw is the NCHW sibling. */
#ifndef Q8RT_F32_GAVGPOOL_H
#define Q8RT_F32_GAVGPOOL_H

#include <stddef.h>

typedef void (*q8rt_f32_gavgpool_ukernel_fn)(size_t pixels, size_t channels, const float *x, size_t stride, float count,
                                             float *y);

void q8rt_f32_gavgpool_ukernel__scalar(size_t pixels, size_t channels, const float *x, size_t stride, float count,
                                       float *y);
#define Q8RT_F32_GAVGPOOL_UKERNEL(isa, fn) \
  void fn(size_t pixels, size_t channels, const float *x, size_t stride, float count, float *y);
#include "f32-gavgpool/f32-gavgpool.inc"
#undef Q8RT_F32_GAVGPOOL_UKERNEL

#endif
