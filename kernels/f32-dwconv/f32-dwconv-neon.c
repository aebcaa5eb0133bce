/* f32-dwconv, AArch64 NEON: 4 outputs per vector over the row's interior (every tap inside the
 * row), two vectors at a time so two add chains overlap; stride 2 deinterleaves 8 neighbouring
 * columns with ld2, only while a further interior output guarantees the 8th column is inside the
 * row. Each tap is fmul then fadd (not fmla), the twin's rounded product and add in its order;
 * edges, the last outputs that do not fill a vector and strides above 2 run the twin. */
#include <arm_neon.h>

#include "f32-dwconv/f32-dwconv.h"

static inline __attribute__((always_inline)) float32x4_t load_cols(const float *p, const size_t s) {
  if (s == 1) return vld1q_f32(p);
  return vld2q_f32(p).val[0];
}

/* Returns the first output not computed. */
static inline __attribute__((always_inline)) size_t interior(const size_t s, size_t lo, size_t hi, size_t rows,
                                                             size_t kw, size_t d, size_t pad, const float *x,
                                                             size_t x_rs, const float *w, float *y) {
  const size_t end = s == 1 ? hi : hi - 1; /* stride 2: a vector's 8 columns end before output end */
  size_t o = lo;
  for (; o + 8 <= end; o += 8) {
    float32x4_t a0 = vld1q_f32(y + o), a1 = vld1q_f32(y + o + 4);
    for (size_t r = 0; r < rows; r++) {
      const float *xr = x + r * x_rs + o * s - pad, *wr = w + r * kw;
      for (size_t t = 0; t < kw; t++) {
        const float32x4_t wv = vdupq_n_f32(wr[t]);
        a0 = vaddq_f32(a0, vmulq_f32(load_cols(xr + t * d, s), wv));
        a1 = vaddq_f32(a1, vmulq_f32(load_cols(xr + t * d + 4 * s, s), wv));
      }
    }
    vst1q_f32(y + o, a0);
    vst1q_f32(y + o + 4, a1);
  }
  for (; o + 4 <= end; o += 4) {
    float32x4_t a0 = vld1q_f32(y + o);
    for (size_t r = 0; r < rows; r++) {
      const float *xr = x + r * x_rs + o * s - pad, *wr = w + r * kw;
      for (size_t t = 0; t < kw; t++) a0 = vaddq_f32(a0, vmulq_f32(load_cols(xr + t * d, s), vdupq_n_f32(wr[t])));
    }
    vst1q_f32(y + o, a0);
  }
  return o;
}

void q8rt_f32_dwconv_ukernel__neon(size_t n, size_t rows, size_t kw, size_t s, size_t d, size_t pad, size_t in_w,
                                   const float *x, size_t x_rs, const float *w, float *y) {
  size_t lo, hi;
  q8rt_f32_dwconv_interior(n, kw, s, d, pad, in_w, &lo, &hi);
  if (s > 2 || lo == hi) {
    q8rt_f32_dwconv_ukernel__scalar(n, rows, kw, s, d, pad, in_w, x, x_rs, w, y);
    return;
  }
  q8rt_f32_dwconv_part(0, lo, rows, kw, s, d, pad, in_w, x, x_rs, w, y);
  const size_t done = s == 1 ? interior(1, lo, hi, rows, kw, d, pad, x, x_rs, w, y)
                             : interior(2, lo, hi, rows, kw, d, pad, x, x_rs, w, y);
  q8rt_f32_dwconv_part(done, n, rows, kw, s, d, pad, in_w, x, x_rs, w, y);
}
