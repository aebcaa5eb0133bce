/* q8-conv-ref: every variant of q8-conv-ref.inc (the direct convolution) against an independent
 * formulation. */
#include <math.h>
#include <stdlib.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "test.h"

static uint32_t rng_state = 0x9e3779b9u;
static uint32_t rnd(void) { return test_xorshift32(&rng_state); }

/* An independent direct convolution: signed index arithmetic, int64 accumulation (asserted to
 * fit int32), float32 requantization with nearbyintf. */
static void ref_conv(const q8rt_q8_conv_ref_params *p, const void *x, void *y, const int16_t *w) {
  const int64_t cpg = (int64_t)(p->in_c / p->groups), mpg = (int64_t)(p->out_c / p->groups);
  for (int64_t n = 0; n < (int64_t)p->batch; n++)
    for (int64_t m = 0; m < (int64_t)p->out_c; m++)
      for (int64_t oy = 0; oy < (int64_t)p->out_h; oy++)
        for (int64_t ox = 0; ox < (int64_t)p->out_w; ox++) {
          int64_t acc = p->bias[m];
          for (int64_t c = 0; c < cpg; c++)
            for (int64_t ky = 0; ky < (int64_t)p->kernel_h; ky++)
              for (int64_t kx = 0; kx < (int64_t)p->kernel_w; kx++) {
                int64_t iy = oy * (int64_t)p->stride_h + ky * (int64_t)p->dilation_h - (int64_t)p->pad_top;
                int64_t ix = ox * (int64_t)p->stride_w + kx * (int64_t)p->dilation_w - (int64_t)p->pad_left;
                if (iy < 0 || ix < 0 || iy >= (int64_t)p->in_h || ix >= (int64_t)p->in_w) continue;
                int64_t ic = (m / mpg) * cpg + c;
                size_t xi = (size_t)(((n * (int64_t)p->in_c + ic) * (int64_t)p->in_h + iy) * (int64_t)p->in_w + ix);
                int64_t xv = p->x_signed ? ((const int8_t *)x)[xi] : ((const uint8_t *)x)[xi];
                acc +=
                    (xv - p->x_zero_point) * w[((m * cpg + c) * (int64_t)p->kernel_h + ky) * (int64_t)p->kernel_w + kx];
              }
          float v = (float)acc * p->scale[m];
          int32_t q = test_ref_round_clamp(v, p->y_lo, p->y_hi) + p->y_zero_point;
          size_t yi = (size_t)(((n * (int64_t)p->out_c + m) * (int64_t)p->out_h + oy) * (int64_t)p->out_w + ox);
          if (p->y_signed)
            ((int8_t *)y)[yi] = (int8_t)q;
          else
            ((uint8_t *)y)[yi] = (uint8_t)q;
        }
}

static int conv_reference_sweep_one(q8rt_q8_conv_ref_ukernel_fn fn, const char *name);

static const struct {
  unsigned isa;
  q8rt_q8_conv_ref_ukernel_fn fn;
  const char *name;
} cr_variants[] = {
#define Q8RT_Q8_CONV_REF_UKERNEL(isa, fn) {isa, fn, #fn},
#include "q8-conv-ref/q8-conv-ref.inc"
#undef Q8RT_Q8_CONV_REF_UKERNEL
};

/* Every variant of q8-conv-ref.inc against the independent formulation. */
Q8RT_TEST(conv_reference_sweep) {
  for (size_t k = 0; k < sizeof(cr_variants) / sizeof(cr_variants[0]); k++) {
    if (!test_isa_supported(cr_variants[k].isa)) {
      printf("  skip %s: CPU lacks its ISA\n", cr_variants[k].name);
      continue;
    }
    if (conv_reference_sweep_one(cr_variants[k].fn, cr_variants[k].name) != 0) return 1;
  }
  return 0;
}

static int conv_reference_sweep_one(q8rt_q8_conv_ref_ukernel_fn fn, const char *name) {
  for (int trial = 0; trial < 300; trial++) {
    q8rt_q8_conv_ref_params p;
    memset(&p, 0, sizeof(p));
    p.groups = 1 + rnd() % 3;
    if (trial % 7 == 0) p.groups = 1 + rnd() % 6; /* depthwise-like below */
    p.batch = 1 + rnd() % 2;
    size_t cpg = 1 + rnd() % 4, mpg = 1 + rnd() % 4;
    if (trial % 7 == 0) cpg = mpg = 1;
    p.in_c = cpg * p.groups;
    p.out_c = mpg * p.groups;
    p.kernel_h = 1 + rnd() % 4;
    p.kernel_w = 1 + rnd() % 4;
    p.stride_h = 1 + rnd() % 3;
    p.stride_w = 1 + rnd() % 3;
    p.dilation_h = 1 + rnd() % 2;
    p.dilation_w = 1 + rnd() % 2;
    p.pad_top = rnd() % 3;
    p.pad_left = rnd() % 3;
    size_t pad_bottom = rnd() % 3, pad_right = rnd() % 3;
    p.in_h = 1 + rnd() % 9;
    p.in_w = 1 + rnd() % 9;
    size_t ekh = (p.kernel_h - 1) * p.dilation_h + 1, ekw = (p.kernel_w - 1) * p.dilation_w + 1;
    if (p.in_h + p.pad_top + pad_bottom < ekh || p.in_w + p.pad_left + pad_right < ekw) continue;
    p.out_h = (p.in_h + p.pad_top + pad_bottom - ekh) / p.stride_h + 1;
    p.out_w = (p.in_w + p.pad_left + pad_right - ekw) / p.stride_w + 1;
    p.x_signed = (int)(rnd() & 1);
    p.y_signed = (int)(rnd() & 1);
    p.x_zero_point = p.x_signed ? (int32_t)(rnd() % 256) - 128 : (int32_t)(rnd() % 256);
    if (trial % 5 == 0) p.x_zero_point = p.x_signed ? -128 : 255; /* limits */
    p.y_zero_point = p.y_signed ? (int32_t)(rnd() % 256) - 128 : (int32_t)(rnd() % 256);
    p.y_lo = (float)((p.y_signed ? -128 : 0) - p.y_zero_point);
    p.y_hi = (float)((p.y_signed ? 127 : 255) - p.y_zero_point);
    size_t wn = p.out_c * cpg * p.kernel_h * p.kernel_w;
    size_t xn = p.batch * p.in_c * p.in_h * p.in_w, yn = p.batch * p.out_c * p.out_h * p.out_w;
    int16_t *w = malloc(wn * sizeof(int16_t));
    int32_t *bias = malloc(p.out_c * sizeof(int32_t));
    float *scale = malloc(p.out_c * sizeof(float));
    uint8_t *x = malloc(xn), *y1 = malloc(yn), *y2 = malloc(yn);
    for (size_t i = 0; i < wn; i++) w[i] = (int16_t)((int32_t)(rnd() % 511) - 255); /* w - w_zp range */
    for (size_t i = 0; i < p.out_c; i++) {
      bias[i] = (int32_t)(rnd() % 20001) - 10000;
      scale[i] = ldexpf(1.0f + (float)(rnd() % 1000) / 1000.0f, -(int)(rnd() % 14) - 2);
    }
    for (size_t i = 0; i < xn; i++) x[i] = (uint8_t)rnd();
    p.w = w;
    p.bias = bias;
    p.scale = scale;
    fn(&p, x, y1);
    ref_conv(&p, x, y2, w);
    int same = memcmp(y1, y2, yn) == 0;
    free(w);
    free(bias);
    free(scale);
    free(x);
    free(y1);
    free(y2);
    if (!same) {
      fprintf(stderr, "  %s trial %d differs\n", name, trial);
      return 1;
    }
  }
  return 0;
}
