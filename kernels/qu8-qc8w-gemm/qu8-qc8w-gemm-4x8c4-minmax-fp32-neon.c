/* qu8-qc8w-gemm 4x8c4, ARMv8.0 NEON without the dot product (Cortex-A53/A72): smull + sadalp.
 *
 * Activations are taken as s8 (a_u8 - 128 = raw ^ x_xor ^ 0x80; packed with the zero point as s8,
 * Q8RT_GEMM_UKERNEL_S8A). The 4 bytes of a k group of one row are broadcast to all four 32-bit
 * lanes (dup), so one smull of 8 weight bytes (channels j, j+1 x 4 k) gives 8 int16 products, each
 * a single s8 x s8 product and so exact (|p| <= 16384). sadalp adds neighbouring products into the
 * int32 lanes [j: k0+k1, j: k2+k3, j+1: k0+k1, j+1: k2+k3]; a final pairwise add folds them per
 * channel. No int16 ever holds a sum of two products, so no weight or activation value is
 * excluded (the smlal route that adds a second product in int16 overflows for (-128)*(-128) twice).
 * Per row and k group: 1 ld1r, 4 smull, 4 sadalp for 32 MACs. */
#include <arm_neon.h>

#include "q8rt-kernels.h"
#include "q8rt-neon.h"

#define ROW_PTRS(p, base, stride, T)             \
  T p##0 = (T)(base);                            \
  T p##1 = mr > 1 ? (T)(p##0 + (stride)) : p##0; \
  T p##2 = mr > 2 ? (T)(p##1 + (stride)) : p##1; \
  T p##3 = mr > 3 ? (T)(p##2 + (stride)) : p##2;
#define FOR4(X) X(0) X(1) X(2) X(3)

static inline __attribute__((always_inline)) void gemm_4x8c4(size_t mr, size_t nc, size_t kc, const uint8_t *a,
                                                             size_t a_stride, const void *w, void *c, size_t c_stride,
                                                             const q8rt_qu8_requant_params *p, const int flip) {
  ROW_PTRS(a, a, a_stride, const uint8_t *)
  ROW_PTRS(c, c, c_stride, uint8_t *)
  const size_t kc4 = (kc + 3) & ~(size_t)3;
  const int8x16_t vflip = vdupq_n_s8((int8_t)(p->x_xor ^ 0x80));
  q8rt_neon_requant rq;
  rq.lo = vdupq_n_f32(p->y_lo);
  rq.hi = vdupq_n_f32(p->y_hi);
  rq.zp = vdupq_n_s16((int16_t)p->y_zero_point);
  const int8_t *pw = (const int8_t *)w;
  for (;;) {
    /* acc<row><q>: q = 0..3 covers channels 2q, 2q+1 */
#define DECL_ACC(i) \
  int32x4_t acc##i##0 = vdupq_n_s32(0), acc##i##1 = acc##i##0, acc##i##2 = acc##i##0, acc##i##3 = acc##i##0;
    FOR4(DECL_ACC)
#undef DECL_ACC
    const int32x4_t b_lo = vld1q_s32((const int32_t *)(const void *)pw);
    const int32x4_t b_hi = vld1q_s32((const int32_t *)(const void *)(pw + 16));
    pw += 32;
#define MAC_ROW(i, va)                                               \
  acc##i##0 = vpadalq_s16(acc##i##0, vmull_s8(vget_low_s8(w0), va)); \
  acc##i##1 = vpadalq_s16(acc##i##1, vmull_high_s8(w0, va##q));      \
  acc##i##2 = vpadalq_s16(acc##i##2, vmull_s8(vget_low_s8(w1), va)); \
  acc##i##3 = vpadalq_s16(acc##i##3, vmull_high_s8(w1, va##q));
    /* One k group (4 bytes) of each row, replicated to all four 32-bit lanes by ld1r: a load,
     * not a vector-pipe dup. */
    for (size_t k = kc4; k != 0; k -= 4) {
      const int8x16_t w0 = vld1q_s8(pw), w1 = vld1q_s8(pw + 16);
      pw += 32;
#define GROUP_ROW(i)                                                            \
  {                                                                             \
    int8x16_t g##i##q = vreinterpretq_s8_u32(vdupq_n_u32(q8rt_load_u32(a##i))); \
    a##i += 4;                                                                  \
    if (flip) g##i##q = veorq_s8(g##i##q, vflip);                               \
    const int8x8_t g##i = vget_low_s8(g##i##q);                                 \
    MAC_ROW(i, g##i)                                                            \
  }
      FOR4(GROUP_ROW)
#undef GROUP_ROW
    }
#undef MAC_ROW
    const float32x4_t s_lo = vld1q_f32((const float *)(const void *)pw);
    const float32x4_t s_hi = vld1q_f32((const float *)(const void *)(pw + 16));
    pw += 32;
#define REQUANT(i)                                                                       \
  const int32x4_t r##i##l = q8rt_vaddq_s32_wrap(b_lo, vpaddq_s32(acc##i##0, acc##i##1)); \
  const int32x4_t r##i##h = q8rt_vaddq_s32_wrap(b_hi, vpaddq_s32(acc##i##2, acc##i##3)); \
  const uint8x8_t y##i = q8rt_neon_requant8(r##i##l, r##i##h, s_lo, s_hi, &rq);
    FOR4(REQUANT)
#undef REQUANT
    if (nc >= 8) {
      vst1_u8(c3, y3);
      vst1_u8(c2, y2);
      vst1_u8(c1, y1);
      vst1_u8(c0, y0);
#define NEXT(i) \
  c##i += 8;    \
  a##i -= kc4;
      FOR4(NEXT)
#undef NEXT
      nc -= 8;
      if (nc == 0) return;
    } else {
      q8rt_neon_store_partial8(c3, y3, nc);
      q8rt_neon_store_partial8(c2, y2, nc);
      q8rt_neon_store_partial8(c1, y1, nc);
      q8rt_neon_store_partial8(c0, y0, nc);
      return;
    }
  }
}

void q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel_4x8c4__neon(size_t mr, size_t nc, size_t kc, const uint8_t *a,
                                                        size_t a_stride, const void *w, void *c, size_t c_stride,
                                                        const q8rt_qu8_requant_params *p) {
  if (nc == 0) return;
  if ((uint8_t)(p->x_xor ^ 0x80) != 0)
    gemm_4x8c4(mr, nc, kc, a, a_stride, w, c, c_stride, p, 1);
  else
    gemm_4x8c4(mr, nc, kc, a, a_stride, w, c, c_stride, p, 0);
}
