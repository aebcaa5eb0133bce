/* The scalar reference kernels against independent formulations. */
#include <fenv.h>
#include <math.h>
#include <stdlib.h>

#include "q8rt-kernels.h"
#include "q8rt-math.h"
#include "test.h"

static uint32_t rng_state = 0x9e3779b9u;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

/* nearbyintf in the default rounding mode is round-half-even: an independent twin. */
static int32_t ref_round_clamp(float v, float lo, float hi) {
  if (isnan(v)) return (int32_t)lo;
  float r = nearbyintf(v);
  if (r < lo) r = lo;
  if (r > hi) r = hi;
  return (int32_t)r;
}

Q8RT_TEST(round_clamp_matches_round_half_even) {
  CHECK(fegetround() == FE_TONEAREST);
  const float ties[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, 127.5f, -127.5f, -128.5f, 254.5f, 255.5f};
  for (size_t i = 0; i < sizeof(ties) / sizeof(ties[0]); i++) {
    CHECK(q8rt_round_clamp(ties[i], -128.0f, 255.0f) == ref_round_clamp(ties[i], -128.0f, 255.0f));
  }
  CHECK(q8rt_round_clamp(2.5f, -100.0f, 100.0f) == 2);
  CHECK(q8rt_round_clamp(3.5f, -100.0f, 100.0f) == 4);
  CHECK(q8rt_round_clamp(-2.5f, -100.0f, 100.0f) == -2);
  CHECK(q8rt_round_clamp(-3.5f, -100.0f, 100.0f) == -4);
  CHECK(q8rt_round_clamp(NAN, -3.0f, 4.0f) == -3);
  CHECK(q8rt_round_clamp(INFINITY, -3.0f, 4.0f) == 4);
  CHECK(q8rt_round_clamp(-INFINITY, -3.0f, 4.0f) == -3);
  CHECK(q8rt_round_clamp(1e30f, -3.0f, 4.0f) == 4);
  for (int i = 0; i < 200000; i++) {
    uint32_t bits = rnd();
    float v;
    memcpy(&v, &bits, sizeof(v));
    if (i % 2) v = (float)(int32_t)(rnd() % 140000 - 70000) / 4.0f; /* many exact ties */
    CHECK(q8rt_round_clamp(v, -32768.0f, 65535.0f) == ref_round_clamp(v, -32768.0f, 65535.0f));
  }
  return 0;
}

Q8RT_TEST(quantize_kernels) {
  const float x[] = {0.0f, 0.25f, 0.75f, -0.25f, 1000.0f, -1000.0f, 0.125f, 0.375f};
  q8rt_f32_qx_cvt_params p = {0.25f, 10, 0.0f - 10, 255.0f - 10};
  uint8_t yu[8];
  q8rt_f32_qu8_vcvt_ukernel__scalar(8, x, yu, &p);
  const uint8_t eu[] = {10, 11, 13, 9, 255, 0, 10, 12}; /* 0.5 -> 0, 1.5 -> 2 */
  CHECK(memcmp(yu, eu, 8) == 0);
  q8rt_f32_qx_cvt_params ps = {0.25f, -3, -128.0f + 3, 127.0f + 3};
  int8_t ys[8];
  q8rt_f32_qs8_vcvt_ukernel__scalar(8, x, ys, &ps);
  const int8_t es[] = {-3, -2, 0, -4, 127, -128, -3, -1};
  CHECK(memcmp(ys, es, 8) == 0);
  q8rt_f32_qx_cvt_params p16 = {0.25f, 0, -32768.0f, 32767.0f};
  int16_t y16[8];
  q8rt_f32_qs16_vcvt_ukernel__scalar(8, x, y16, &p16);
  CHECK(y16[4] == 4000 && y16[5] == -4000 && y16[7] == 2);
  return 0;
}

Q8RT_TEST(dequantize_kernels) {
  const uint8_t xu[] = {0, 10, 255};
  float y[3];
  q8rt_qx_f32_cvt_params p = {0.5f, 10};
  q8rt_qu8_f32_vcvt_ukernel__scalar(3, xu, y, &p);
  CHECK(y[0] == -5.0f && y[1] == 0.0f && y[2] == 122.5f);
  const int32_t x32[] = {-2147483647 - 1, 7};
  q8rt_qx_f32_cvt_params p32 = {2.0f, 0};
  q8rt_qs32_f32_vcvt_ukernel__scalar(2, x32, y, &p32);
  CHECK(y[0] == -4294967296.0f && y[1] == 14.0f);
  return 0;
}

/* An independent direct convolution: signed index arithmetic, int64 accumulation (asserted to
 * fit int32), float32 requantization with nearbyintf. */
static void ref_conv(const q8rt_qconv_ref_params *p, const void *x, void *y, const int16_t *w) {
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
          int32_t q = ref_round_clamp(v, p->y_lo, p->y_hi) + p->y_zero_point;
          size_t yi = (size_t)(((n * (int64_t)p->out_c + m) * (int64_t)p->out_h + oy) * (int64_t)p->out_w + ox);
          if (p->y_signed)
            ((int8_t *)y)[yi] = (int8_t)q;
          else
            ((uint8_t *)y)[yi] = (uint8_t)q;
        }
}

Q8RT_TEST(conv_reference_sweep) {
  for (int trial = 0; trial < 300; trial++) {
    q8rt_qconv_ref_params p;
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
    q8rt_qx_conv_ref_ukernel__scalar(&p, x, y1);
    ref_conv(&p, x, y2, w);
    int same = memcmp(y1, y2, yn) == 0;
    free(w);
    free(bias);
    free(scale);
    free(x);
    free(y1);
    free(y2);
    if (!same) {
      fprintf(stderr, "  trial %d differs\n", trial);
      return 1;
    }
  }
  return 0;
}

Q8RT_TEST(transpose_avx2_matches_scalar) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx2")) {
    printf("  (skipped: no AVX2)\n");
    return 0;
  }
  const size_t sizes[] = {1, 3, 15, 16, 17, 31, 32, 33, 48, 144};
  for (size_t ia = 0; ia < sizeof(sizes) / sizeof(sizes[0]); ia++) {
    for (size_t ib = 0; ib < sizeof(sizes) / sizeof(sizes[0]); ib++) {
      const size_t outer = 1 + (ia + ib) % 3, a = sizes[ia], b = sizes[ib], n = outer * a * b;
      uint8_t *x = malloc(n), *y1 = malloc(n), *y2 = malloc(n);
      for (size_t i = 0; i < n; i++) x[i] = (uint8_t)rnd();
      q8rt_x8_transpose_ukernel__scalar(outer, a, b, x, y1);
      q8rt_x8_transpose_ukernel__avx2(outer, a, b, x, y2);
      int ok = memcmp(y1, y2, n) == 0;
      /* and the scalar one against the definition */
      for (size_t o = 0; o < outer && ok; o++)
        for (size_t i = 0; i < a && ok; i++)
          for (size_t j = 0; j < b && ok; j++) ok = y1[o * a * b + j * a + i] == x[o * a * b + i * b + j];
      free(x);
      free(y1);
      free(y2);
      CHECK(ok);
    }
  }
#endif
  return 0;
}

Q8RT_TEST(vfmac_avx2_matches_scalar) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    printf("  (skipped: no AVX2/FMA)\n");
    return 0;
  }
  for (size_t n = 0; n < 140; n += (n < 40 ? 1 : 13)) {
    float b[160] = {0}, c1[160] = {0}, c2[160] = {0};
    for (size_t j = 0; j < n; j++) {
      uint32_t r = rnd();
      b[j] = (float)(int32_t)(r % 2001 - 1000) * 1e-3f + (j % 7 == 0 ? 1e30f : 0.0f);
      c1[j] = c2[j] = (float)(int32_t)(rnd() % 2001 - 1000) * 3.3e-4f;
    }
    const float a = (float)(int32_t)(rnd() % 2001 - 1000) * 7.7e-3f;
    q8rt_f32_vfmac_ukernel__scalar(n, a, b, c1);
    q8rt_f32_vfmac_ukernel__avx2(n, a, b, c2);
    CHECK(memcmp(c1, c2, n * sizeof(float)) == 0);
  }
#endif
  return 0;
}
