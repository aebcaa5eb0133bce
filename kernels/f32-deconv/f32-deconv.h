/* f32-deconv: one kernel tap of a float ConvTranspose over a run of input columns, for m output
 * channels at once, added into the output row:
 *   for i < m, j < n: dot = 0.0f; for c < k: dot = dot + x[c * x_cs + j] * w[c * w_cs + i * w_ms];
 *                     y[i * y_ms + j * y_s] = y[i * y_ms + j * y_s] + dot
 * with every product rounded before its add (no fused multiply-add), c ascending. ConvTranspose
 * calls it for each valid kernel tap of an output row in row-major tap order, on rows set to 0.0f
 * first, then adds the bias: the definition in the README (each output: the valid taps' channel
 * dot products in row-major tap order, then the bias). The variants hold MR x NR dots in registers
 * for the whole channel chain (vmulps then vaddps per channel: the twin's operations) and add
 * them into y at the end; the scalar twin is the definition. */
#ifndef Q8RT_F32_DECONV_H
#define Q8RT_F32_DECONV_H

#include <stddef.h>

typedef void (*q8rt_f32_deconv_ukernel_fn)(size_t m, size_t n, size_t k, const float *x, size_t x_cs, const float *w,
                                           size_t w_cs, size_t w_ms, float *y, size_t y_ms, size_t y_s);

void q8rt_f32_deconv_ukernel__scalar(size_t m, size_t n, size_t k, const float *x, size_t x_cs, const float *w,
                                     size_t w_cs, size_t w_ms, float *y, size_t y_ms, size_t y_s);

#define Q8RT_F32_DECONV_UKERNEL(isa, fn)                                                                       \
  void fn(size_t m, size_t n, size_t k, const float *x, size_t x_cs, const float *w, size_t w_cs, size_t w_ms, \
          float *y, size_t y_ms, size_t y_s);
#include "f32-deconv/f32-deconv.inc"
#undef Q8RT_F32_DECONV_UKERNEL

#endif
