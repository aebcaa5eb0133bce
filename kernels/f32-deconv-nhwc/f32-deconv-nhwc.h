/* f32-deconv-nhwc: one kernel tap of a float ConvTranspose on channels-last data, for a run of n
 * input pixels (channels contiguous) and m output channels, added into the output pixels:
 *   for j < n, i < m: dot = 0.0f; for c < k: dot = dot + x[j * x_ps + c] * w[c * w_cs + i];
 *                     y[j * y_ps + i] = y[j * y_ps + i] + dot
 * with every product rounded before its add (no fused multiply-add), c ascending: f32-deconv's
 * definition (kernels/f32-deconv/f32-deconv.h) with the roles of the strides swapped, so an
 * output's bits do not depend on the layout. w holds one tap's weights packed [k][m] (output
 * channels contiguous). The variants hold MR pixels x NR output channels of dots in registers for
 * the whole channel chain (a broadcast input value times a vector of weights, then an add: the
 * twin's operations) and add them into y at the end; the scalar twin is the definition. */
#ifndef Q8RT_F32_DECONV_NHWC_H
#define Q8RT_F32_DECONV_NHWC_H

#include <stddef.h>

typedef void (*q8rt_f32_deconv_nhwc_ukernel_fn)(size_t n, size_t m, size_t k, const float *x, size_t x_ps,
                                                const float *w, size_t w_cs, float *y, size_t y_ps);

void q8rt_f32_deconv_nhwc_ukernel__scalar(size_t n, size_t m, size_t k, const float *x, size_t x_ps, const float *w,
                                          size_t w_cs, float *y, size_t y_ps);

#define Q8RT_F32_DECONV_NHWC_UKERNEL(isa, fn)                                                               \
  void fn(size_t n, size_t m, size_t k, const float *x, size_t x_ps, const float *w, size_t w_cs, float *y, \
          size_t y_ps);
#include "f32-deconv-nhwc/f32-deconv-nhwc.inc"
#undef Q8RT_F32_DECONV_NHWC_UKERNEL

#endif
