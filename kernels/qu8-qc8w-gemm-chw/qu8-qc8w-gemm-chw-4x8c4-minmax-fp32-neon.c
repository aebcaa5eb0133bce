/* NCHW GEMM tile 4 channels x 8 pixels, ARMv8.0 NEON without the dot product (Cortex-A53/A72):
 * smull + sadalp, the roles of the NHWC 4x8c4 kernel swapped. The panel's u8 activations are
 * flipped to s8 (x - 128, one eor per 16-byte load) and each channel's bias raised by
 * 128 * sum_k w once per call. A channel's 4 weights of a k group, broadcast to all four 32-bit
 * lanes, times 2 pixels x 4 k (one 8-byte half of a panel load) give 8 exact int16 products (one
 * s8 x s8 product each); sadalp adds neighbours into the int32 lanes [p: k0+k1, p: k2+k3,
 * p+1: k0+k1, p+1: k2+k3] and a final pairwise add folds them per pixel. No int16 ever holds a sum
 * of two products, so no weight or activation value is excluded. Per 4 k: 2 panel loads, 1 weight
 * load, 4 dup, 16 smull, 16 sadalp. A block always holds MR = 4 packed channels (zero ones pad
 * it): all are computed, the first mr stored. */
#include <arm_neon.h>
#include <string.h>

#include "q8rt-kernels.h"
#include "q8rt-neon.h"

#define FOR4(X) X(0) X(1) X(2) X(3)

static __attribute__((noinline)) void chw_store(uint8_t *y, int32x4_t lo, int32x4_t hi, float scale, size_t n,
                                                const q8rt_neon_requant *rq) {
  const float32x4_t s = vdupq_n_f32(scale);
  const uint8x8_t v = q8rt_neon_requant8(lo, hi, s, s, rq);
  if (n >= 8)
    vst1_u8(y, v);
  else
    q8rt_neon_store_partial8(y, v, n);
}

void q8rt_qu8_qc8w_gemm_chw_minmax_fp32_ukernel_4x8c4__neon(size_t mr, size_t nc, size_t kc, const uint8_t *x,
                                                            size_t x_stride, const void *w, uint8_t *y, size_t y_stride,
                                                            const q8rt_qu8_requant_params *p) {
  const size_t k4 = (kc + 3) / 4;
  const uint8_t *wb = (const uint8_t *)w;
  const int8_t *wp = (const int8_t *)(wb + 4 * sizeof(int32_t));
  const uint8_t *sp = wb + 4 * (sizeof(int32_t) + 4 * k4);
  q8rt_neon_requant rq;
  rq.lo = vdupq_n_f32(p->y_lo);
  rq.hi = vdupq_n_f32(p->y_hi);
  rq.zp = vdupq_n_s16((int16_t)p->y_zero_point);
  int32x4_t wsum = vdupq_n_s32(0);
  for (size_t g = 0; g < k4; g++) wsum = vpadalq_s16(wsum, vpaddlq_s8(vld1q_s8(wp + 16 * g)));
  const int32x4_t b = q8rt_vaddq_s32_wrap(vld1q_s32((const int32_t *)(const void *)wb), vshlq_n_s32(wsum, 7));
  const int8x16_t vflip = vdupq_n_s8(INT8_MIN);
  float scale[4];
  memcpy(scale, sp, sizeof(scale));
  for (size_t n0 = 0; n0 < nc; n0 += 8) {
    /* acc<m><q>: q = 0..3 covers pixels 2q, 2q+1 */
#define DECL_ACC(m) \
  int32x4_t acc##m##0 = vdupq_n_s32(0), acc##m##1 = acc##m##0, acc##m##2 = acc##m##0, acc##m##3 = acc##m##0;
    FOR4(DECL_ACC)
#undef DECL_ACC
    const uint8_t *xp = x + 4 * n0;
    const int8_t *wk = wp;
    for (size_t g = 0; g < k4; g++) {
      const int8x16_t x0 = veorq_s8(vld1q_s8((const int8_t *)xp), vflip);
      const int8x16_t x1 = veorq_s8(vld1q_s8((const int8_t *)xp + 16), vflip);
      xp += x_stride;
      const int32x4_t w4 = vreinterpretq_s32_s8(vld1q_s8(wk));
      wk += 16;
#define MAC(m)                                                                      \
  {                                                                                 \
    const int8x16_t wm = vreinterpretq_s8_s32(vdupq_laneq_s32(w4, m));              \
    acc##m##0 = vpadalq_s16(acc##m##0, vmull_s8(vget_low_s8(x0), vget_low_s8(wm))); \
    acc##m##1 = vpadalq_s16(acc##m##1, vmull_high_s8(x0, wm));                      \
    acc##m##2 = vpadalq_s16(acc##m##2, vmull_s8(vget_low_s8(x1), vget_low_s8(wm))); \
    acc##m##3 = vpadalq_s16(acc##m##3, vmull_high_s8(x1, wm));                      \
  }
      FOR4(MAC)
#undef MAC
    }
    const size_t left = nc - n0;
#define STORE(m)                                                                                \
  if (m < mr) {                                                                                 \
    const int32x4_t bm = vdupq_laneq_s32(b, m);                                                 \
    chw_store(y + m * y_stride + n0, q8rt_vaddq_s32_wrap(bm, vpaddq_s32(acc##m##0, acc##m##1)), \
              q8rt_vaddq_s32_wrap(bm, vpaddq_s32(acc##m##2, acc##m##3)), scale[m], left, &rq);  \
  }
    FOR4(STORE)
#undef STORE
  }
}
