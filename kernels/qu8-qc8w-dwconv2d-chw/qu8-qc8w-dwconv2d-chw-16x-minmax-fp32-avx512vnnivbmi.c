/* Depthwise convolution on one NCHW channel plane, 16 outputs of a row per vector (AVX-512 VNNI +
 * VBMI). One masked 64-byte load covers the input window of 16 adjacent outputs of one kernel row
 * (bytes left or right of the plane and whole rows above or below it come from the zero-point
 * vector, so no padded copy is made and nothing outside the plane is read); vpermb lays out, in
 * each 32-bit lane, the 4 input bytes that output's next 4 taps read, and vpdpbusd multiplies them
 * by those taps' 4 weights (broadcast) and adds the products into the lane's int32 accumulator
 * without saturation: exactly the scalar twin's wrapping sum. A kernel row of kw taps is
 * ceil(kw / 4) permute + dot-product pairs (the packing pads it with zero weights). The
 * requantization is the GEMM kernels' (float multiply, clamp, round half to even). 3x3, 5x5 and
 * 7x7 get their loops unrolled with the weights held in registers. */
#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#include "q8rt-kernels.h"

#define MAX_GROUPS 16 /* ceil(kw / 4) with 15 * sw + (kw - 1) * dw < 64 */
#define MAX_KH 7      /* unrolled kernels keep kh * groups weight vectors in registers */

static inline __attribute__((always_inline)) void dw_chw_body(const uint8_t *x, const void *w, uint8_t *y,
                                                              const q8rt_qu8_qc8w_dwconv2d_chw_params *p,
                                                              const size_t KH, const size_t G, const bool fixed) {
  const size_t kh = fixed ? KH : p->kernel_h, kw = p->kernel_w, kw4 = (kw + 3) & ~(size_t)3;
  const size_t groups = fixed ? G : kw4 / 4;
  const size_t sw = p->stride_w, dw = p->dilation_w;
  int32_t bias;
  float scale;
  memcpy(&bias, w, sizeof(bias));
  memcpy(&scale, (const uint8_t *)w + sizeof(bias), sizeof(scale));
  const uint8_t *wt = (const uint8_t *)w + 2 * sizeof(int32_t);
  __m512i idx[MAX_GROUPS];
  for (size_t g = 0; g < groups; g++) {
    uint8_t b[64];
    for (size_t i = 0; i < 16; i++) {
      for (size_t j = 0; j < 4; j++) {
        const size_t kx = 4 * g + j;
        b[4 * i + j] = (uint8_t)(kx < kw ? i * sw + kx * dw : 0); /* a padded tap has weight 0 */
      }
    }
    idx[g] = _mm512_loadu_si512(b);
  }
  __m512i wv[MAX_KH * 2];
  if (fixed) {
#pragma GCC unroll 14
    for (size_t i = 0; i < KH * G; i++) {
      int32_t w4;
      memcpy(&w4, wt + 4 * i, sizeof(w4));
      wv[i] = _mm512_set1_epi32(w4);
    }
  }
  const __m512i vbias = _mm512_set1_epi32(bias);
  const __m512 vscale = _mm512_set1_ps(scale);
  const __m512i vxor = _mm512_set1_epi8((char)p->rq.x_xor);
  const __m512i vxzp = _mm512_set1_epi8((char)p->x_zero_point);
  const __m512 vlo = _mm512_set1_ps(p->rq.y_lo);
  const __m512 vhi = _mm512_set1_ps(p->rq.y_hi);
  const __m512i vzp = _mm512_set1_epi32(p->rq.y_zero_point);
  const ptrdiff_t in_w = (ptrdiff_t)p->in_w;
  for (size_t ox = 0; ox < p->out_w; ox += 16) {
    /* the load window of these 16 outputs: columns [c0, c0 + 64) of the plane */
    const ptrdiff_t c0 = (ptrdiff_t)(ox * sw) - (ptrdiff_t)p->pad_left;
    const ptrdiff_t lo = c0 < 0 ? -c0 : 0, hi = in_w - c0 < 64 ? in_w - c0 : 64;
    __mmask64 m = 0;
    if (hi > lo) m = (hi == 64 ? ~(__mmask64)0 : (((__mmask64)1 << hi) - 1)) & ~(((__mmask64)1 << lo) - 1);
    const size_t n = p->out_w - ox < 16 ? p->out_w - ox : 16;
    const __mmask16 store = (__mmask16)((1u << n) - 1u);
    for (size_t oy = 0; oy < p->out_h; oy++) {
      __m512i acc = vbias;
      ptrdiff_t iy = (ptrdiff_t)(oy * p->stride_h) - (ptrdiff_t)p->pad_top;
      const uint8_t *wk = wt;
#pragma GCC unroll 7
      for (size_t ky = 0; ky < kh; ky++, iy += (ptrdiff_t)p->dilation_h) {
        __m512i v = vxzp;
        if (iy >= 0 && iy < (ptrdiff_t)p->in_h) {
          /* masked-off bytes are neither read nor faulted on: the address may lie before the row */
          const uint8_t *r =
              (const uint8_t *)((uintptr_t)x + (uintptr_t)((ptrdiff_t)(iy * (ptrdiff_t)p->x_stride) + c0));
          v = _mm512_mask_loadu_epi8(vxzp, m, r);
        }
        v = _mm512_xor_si512(v, vxor);
#pragma GCC unroll 2
        for (size_t g = 0; g < groups; g++) {
          __m512i wvec;
          if (fixed) {
            wvec = wv[ky * G + g];
          } else {
            int32_t w4;
            memcpy(&w4, wk + 4 * g, sizeof(w4));
            wvec = _mm512_set1_epi32(w4);
          }
          acc = _mm512_dpbusd_epi32(acc, _mm512_permutexvar_epi8(idx[g], v), wvec);
        }
        wk += kw4;
      }
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), vscale);
      f = _mm512_max_ps(f, vlo); /* a NaN (first operand) becomes lo, as in the scalar twin */
      f = _mm512_min_ps(f, vhi);
      __m512i q = _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      q = _mm512_add_epi32(q, vzp);
      _mm_mask_storeu_epi8(y + oy * p->y_stride + ox, store, _mm512_cvtepi32_epi8(q));
    }
  }
}

void q8rt_qu8_qc8w_dwconv2d_chw_minmax_fp32_ukernel_16x__avx512vnnivbmi(const uint8_t *x, const void *w, uint8_t *y,
                                                                        const q8rt_qu8_qc8w_dwconv2d_chw_params *p) {
  const size_t groups = (p->kernel_w + 3) / 4;
  if (p->kernel_h == 3 && groups == 1) {
    dw_chw_body(x, w, y, p, 3, 1, true);
  } else if (p->kernel_h == 5 && groups == 2) {
    dw_chw_body(x, w, y, p, 5, 2, true);
  } else if (p->kernel_h == 7 && groups == 2) {
    dw_chw_body(x, w, y, p, 7, 2, true);
  } else {
    dw_chw_body(x, w, y, p, 0, 0, false);
  }
}
