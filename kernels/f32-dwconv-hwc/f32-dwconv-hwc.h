/* f32-dwconv-hwc: a depthwise float Conv on a block of cb channels stored channel-interleaved
 * (pixel-major, the block's cb channels of a pixel adjacent), over a zero-bordered input:
 *   for o1 < oh, o2 < ow, lane l < cb:
 *     acc = 0.0f; for r < kh: for t < kw:
 *       acc = acc + x[((o1 * s1 + r * d1) * x_rs + o2 * s2 + t * d2) * cb + l] * w[(r * kw + t) * cb + l]
 *     y[(o1 * ow + o2) * cb + l] = b != NULL ? acc + b[l] : acc
 * with the product rounded before the add (no fused multiply-add); b, the block's cb biases (or
 * NULL), is added after the taps as the depthwise Conv's definition adds it; x_rs is the bordered row's
 * width in pixels. Each lane is one channel, so a lane sees the f32-dwconv row kernel's
 * operations in its order: Conv's depthwise planes of at most a few hundred KiB of rows go
 * through it (src/ops/conv_conv_transpose.c, fdw_hwc_*), where a call per channel row spent more
 * time on the calls, edges and unaligned loads than on the taps. A variant's lanes are its
 * vector (cb in the .inc); the twin takes cb. */
#ifndef Q8RT_F32_DWCONV_HWC_H
#define Q8RT_F32_DWCONV_HWC_H

#include <stddef.h>

typedef void (*q8rt_f32_dwconv_hwc_ukernel_fn)(size_t oh, size_t ow, size_t kh, size_t kw, size_t s1, size_t s2,
                                               size_t d1, size_t d2, const float *x, size_t x_rs, const float *w,
                                               const float *b, float *y);

void q8rt_f32_dwconv_hwc_ukernel__scalar(size_t cb, size_t oh, size_t ow, size_t kh, size_t kw, size_t s1, size_t s2,
                                         size_t d1, size_t d2, const float *x, size_t x_rs, const float *w,
                                         const float *b, float *y);

#define Q8RT_F32_DWCONV_HWC_UKERNEL(isa, fn, cb)                                                                  \
  void fn(size_t oh, size_t ow, size_t kh, size_t kw, size_t s1, size_t s2, size_t d1, size_t d2, const float *x, \
          size_t x_rs, const float *w, const float *b, float *y);
#include "f32-dwconv-hwc/f32-dwconv-hwc.inc"
#undef Q8RT_F32_DWCONV_HWC_UKERNEL

#endif
