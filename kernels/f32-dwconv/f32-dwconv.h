/* f32-dwconv: one output row of a depthwise float Conv (one input and one output channel per
 * group, NCHW), accumulated into y:
 *   for o < n: for r < rows: for t < kw: i = o * s - pad + t * d;
 *              if (0 <= i < in_w) y[o] = y[o] + x[r * x_rs + i] * w[r * kw + t]
 * with the product rounded before the add (no fused multiply-add). Conv calls it with y = 0.0f,
 * once per valid kernel plane of a 3-D kernel, on the kernel rows whose input rows exist, then
 * adds the bias: per output the valid taps in row-major order, the depthwise definition in the
 * README. The SIMD variants compute the outputs whose taps all fall inside the row lane-parallel
 * (vmulps then vaddps in the same tap order: the same bits) and the few edge outputs as the twin. */
#ifndef Q8RT_F32_DWCONV_H
#define Q8RT_F32_DWCONV_H

#include <stddef.h>

typedef void (*q8rt_f32_dwconv_ukernel_fn)(size_t n, size_t rows, size_t kw, size_t s, size_t d, size_t pad,
                                           size_t in_w, const float *x, size_t x_rs, const float *w, float *y);

void q8rt_f32_dwconv_ukernel__scalar(size_t n, size_t rows, size_t kw, size_t s, size_t d, size_t pad, size_t in_w,
                                     const float *x, size_t x_rs, const float *w, float *y);

/* Outputs [*lo, *hi) of a row of n whose kw taps all fall inside [0, in_w) (lo <= hi). */
static inline void q8rt_f32_dwconv_interior(size_t n, size_t kw, size_t s, size_t d, size_t pad, size_t in_w,
                                            size_t *lo, size_t *hi) {
  const size_t span = (kw - 1) * d; /* the first and the last tap */
  size_t a = (pad + s - 1) / s, b = 0;
  if (in_w + pad > span) b = (in_w + pad - span - 1) / s + 1; /* o * s - pad + span <= in_w - 1 */
  if (b > n) b = n;
  if (a > b) a = b;
  *lo = a;
  *hi = b;
}

/* The twin on outputs [a, b) of the row only (the variants' edges and tails). */
static inline void q8rt_f32_dwconv_part(size_t a, size_t b, size_t rows, size_t kw, size_t s, size_t d, size_t pad,
                                        size_t in_w, const float *x, size_t x_rs, const float *w, float *y) {
  if (a >= b) return;
  if (a * s < pad) {
    q8rt_f32_dwconv_ukernel__scalar(b - a, rows, kw, s, d, pad - a * s, in_w, x, x_rs, w, y + a);
  } else if (a * s - pad < in_w) { /* else no tap of these outputs is inside the row */
    const size_t shift = a * s - pad;
    q8rt_f32_dwconv_ukernel__scalar(b - a, rows, kw, s, d, 0, in_w - shift, x + shift, x_rs, w, y + a);
  }
}

#define Q8RT_F32_DWCONV_UKERNEL(isa, fn)                                                                              \
  void fn(size_t n, size_t rows, size_t kw, size_t s, size_t d, size_t pad, size_t in_w, const float *x, size_t x_rs, \
          const float *w, float *y);
#include "f32-dwconv/f32-dwconv.inc"
#undef Q8RT_F32_DWCONV_UKERNEL

#endif
