/* The QLinearConv reference: a direct convolution that every faster path must match byte for
 * byte. It favours obviousness over speed; the only specialisation is on the activation type so
 * the inner loop has no branch on it. */
#include "q8rt-kernels.h"
#include "q8rt-math.h"

static inline int32_t load_x(const void *x, size_t i, int x_signed) {
  return x_signed ? (int32_t)((const int8_t *)x)[i] : (int32_t)((const uint8_t *)x)[i];
}

static void conv_plane(const q8rt_q8_conv_ref_params *p, const void *x, void *y, size_t n, size_t m, int x_signed) {
  const size_t cpg = p->in_c / p->groups;  /* input channels per group */
  const size_t mpg = p->out_c / p->groups; /* output channels per group */
  const size_t g = m / mpg;
  const int16_t *w = p->w + m * cpg * p->kernel_h * p->kernel_w;
  const int32_t xzp = p->x_zero_point;
  const float scale = p->scale[m];
  const int32_t bias = p->bias[m];
  for (size_t oy = 0; oy < p->out_h; oy++) {
    for (size_t ox = 0; ox < p->out_w; ox++) {
      /* unsigned accumulation: int32 wrap-around is defined, as in the int32 accumulators of
       * the peers; with realistic K it never wraps. */
      uint32_t acc = (uint32_t)bias;
      for (size_t c = 0; c < cpg; c++) {
        const size_t ic = g * cpg + c;
        const size_t plane = (n * p->in_c + ic) * p->in_h;
        for (size_t ky = 0; ky < p->kernel_h; ky++) {
          /* iy = oy*stride + ky*dilation - pad_top, computed without going negative */
          const size_t iy_p = oy * p->stride_h + ky * p->dilation_h;
          if (iy_p < p->pad_top || iy_p - p->pad_top >= p->in_h) continue;
          const size_t row = (plane + (iy_p - p->pad_top)) * p->in_w;
          const int16_t *wr = w + (c * p->kernel_h + ky) * p->kernel_w;
          for (size_t kx = 0; kx < p->kernel_w; kx++) {
            const size_t ix_p = ox * p->stride_w + kx * p->dilation_w;
            if (ix_p < p->pad_left || ix_p - p->pad_left >= p->in_w) continue;
            const int32_t xv = load_x(x, row + (ix_p - p->pad_left), x_signed) - xzp;
            acc += (uint32_t)(xv * (int32_t)wr[kx]);
          }
        }
      }
      const float v = (float)(int32_t)acc * scale;
      const int32_t q = q8rt_round_clamp(v, p->y_lo, p->y_hi) + p->y_zero_point;
      const size_t oi = ((n * p->out_c + m) * p->out_h + oy) * p->out_w + ox;
      if (p->y_signed) {
        ((int8_t *)y)[oi] = (int8_t)q;
      } else {
        ((uint8_t *)y)[oi] = (uint8_t)q;
      }
    }
  }
}

void q8rt_q8_conv_ref_ukernel__scalar(const q8rt_q8_conv_ref_params *p, const void *x, void *y) {
  for (size_t n = 0; n < p->batch; n++) {
    for (size_t m = 0; m < p->out_c; m++) {
      if (p->x_signed) {
        conv_plane(p, x, y, n, m, 1);
      } else {
        conv_plane(p, x, y, n, m, 0);
      }
    }
  }
}
