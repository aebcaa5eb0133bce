/* f32-gavgpool-cw: global average of channel-major (NCHW) planes
 *   y[c] = sum(x[c * pixels + i], i < pixels) / count   for c < channels
 * in ONNX Runtime's MLAS order (as f32-gavgpool): four running sums over the pixels 4k+j (each
 * starting at +0.0, the pixel the second operand), combined as (s0 + s2) + (s1 + s3), then the
 * last pixels one by one, then one division. The four sums are exactly one 4-lane vector over a
 * plane's consecutive pixels, so the variants hold 4 pixels of several channels at once and give
 * the scalar twin's bytes (a NaN result is NaN; which NaN is not promised); wider vectors would split a sum and change
 * its rounding, so there is no AVX-512 variant. GlobalAveragePool and AveragePool over the whole plane
 * (src/ops/max_pool_average_pool.c) read it for NCHW inputs. */
#ifndef Q8RT_F32_GAVGPOOL_CW_H
#define Q8RT_F32_GAVGPOOL_CW_H

#include <stddef.h>

typedef void (*q8rt_f32_gavgpool_cw_ukernel_fn)(size_t pixels, size_t channels, const float *x, float count, float *y);

void q8rt_f32_gavgpool_cw_ukernel__scalar(size_t pixels, size_t channels, const float *x, float count, float *y);
#define Q8RT_F32_GAVGPOOL_CW_UKERNEL(isa, fn) \
  void fn(size_t pixels, size_t channels, const float *x, float count, float *y);
#include "f32-gavgpool-cw/f32-gavgpool-cw.inc"
#undef Q8RT_F32_GAVGPOOL_CW_UKERNEL

#endif
