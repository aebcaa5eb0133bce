/* q8-softmax-strided, AArch64 NEON: 16 columns per pass, one per lane; the last pass (n % 16
 * columns) goes through 16-byte buffers so nothing outside the n columns is read or written. The
 * maximum on the 16 bytes of each k (umax / smax); the table index (uint8)(adj + x) as a byte add,
 * since adj + x and its low byte agree mod 256; the entries loaded one by one (NEON has no gather),
 * summed in k order per lane (the twin's chain); for d <= EBUF they are kept for the output pass.
 * The outputs: multiply, divide (IEEE per lane, as the twin), round half to even as
 * q8rt_cvt_rne (q8rt_neon_cvt_rne), + y_zp with wraparound, min qmax, the low bytes. */
#include <arm_neon.h>
#include <string.h>

#include "q8-softmax-strided/q8-softmax-strided.h"
#include "q8rt-neon.h"

#define EBUF 32

static inline __attribute__((always_inline)) uint8x16_t load16(const uint8_t *p, size_t c) {
  if (c == 16) return vld1q_u8(p);
  uint8_t t[16] = {0};
  memcpy(t, p, c);
  return vld1q_u8(t);
}

/* e[l] = table[idx[l]], l = 0..15 */
static inline __attribute__((always_inline)) void lookup16(uint8x16_t idx, const float *table, float *e) {
  uint8_t ib[16];
  vst1q_u8(ib, idx);
  for (int l = 0; l < 16; l++) e[l] = table[ib[l]];
}

void q8rt_q8_softmax_strided_ukernel_16__neon(size_t d, size_t n, size_t stride, const uint8_t *x, uint8_t *y,
                                              const float table[256], const q8rt_q8_softmax_params *p) {
  const int s = p->is_signed;
  const uint8x16_t vbase = vdupq_n_u8((uint8_t)(s ? 127 : 255));
  const float32x4_t vf = vdupq_n_f32(p->y_factor);
  const uint32x4_t vzp = vdupq_n_u32((uint32_t)p->y_zp);
  const int32x4_t vmax = vdupq_n_s32(p->qmax);
  float ebuf[EBUF][16];
  for (size_t j = 0; j < n; j += 16) {
    const size_t c = n - j < 16 ? n - j : 16;
    const uint8_t *xc = x + j;
    uint8_t *yc = y + j;
    uint8x16_t mx = load16(xc, c);
    for (size_t k = 1; k < d; k++) {
      const uint8x16_t v = load16(xc + k * stride, c);
      mx = s ? vreinterpretq_u8_s8(vmaxq_s8(vreinterpretq_s8_u8(mx), vreinterpretq_s8_u8(v))) : vmaxq_u8(mx, v);
    }
    const uint8x16_t adj = vsubq_u8(vbase, mx);
    float32x4_t sum0 = vdupq_n_f32(0.0f), sum1 = sum0, sum2 = sum0, sum3 = sum0;
    for (size_t k = 0; k < d; k++) {
      float t[16];
      float *e = k < EBUF ? ebuf[k] : t;
      lookup16(vaddq_u8(load16(xc + k * stride, c), adj), table, e);
      sum0 = vaddq_f32(sum0, vld1q_f32(e));
      sum1 = vaddq_f32(sum1, vld1q_f32(e + 4));
      sum2 = vaddq_f32(sum2, vld1q_f32(e + 8));
      sum3 = vaddq_f32(sum3, vld1q_f32(e + 12));
    }
    for (size_t k = 0; k < d; k++) {
      float t[16];
      const float *e = ebuf[k < EBUF ? k : 0];
      if (k >= EBUF) {
        lookup16(vaddq_u8(load16(xc + k * stride, c), adj), table, t);
        e = t;
      }
      const float32x4_t v0 = vdivq_f32(vmulq_f32(vld1q_f32(e), vf), sum0);
      const float32x4_t v1 = vdivq_f32(vmulq_f32(vld1q_f32(e + 4), vf), sum1);
      const float32x4_t v2 = vdivq_f32(vmulq_f32(vld1q_f32(e + 8), vf), sum2);
      const float32x4_t v3 = vdivq_f32(vmulq_f32(vld1q_f32(e + 12), vf), sum3);
      const int32x4_t q0 =
          vminq_s32(vreinterpretq_s32_u32(vaddq_u32(vreinterpretq_u32_s32(q8rt_neon_cvt_rne(v0)), vzp)), vmax);
      const int32x4_t q1 =
          vminq_s32(vreinterpretq_s32_u32(vaddq_u32(vreinterpretq_u32_s32(q8rt_neon_cvt_rne(v1)), vzp)), vmax);
      const int32x4_t q2 =
          vminq_s32(vreinterpretq_s32_u32(vaddq_u32(vreinterpretq_u32_s32(q8rt_neon_cvt_rne(v2)), vzp)), vmax);
      const int32x4_t q3 =
          vminq_s32(vreinterpretq_s32_u32(vaddq_u32(vreinterpretq_u32_s32(q8rt_neon_cvt_rne(v3)), vzp)), vmax);
      const int16x8_t lo = vcombine_s16(vmovn_s32(q0), vmovn_s32(q1)), hi = vcombine_s16(vmovn_s32(q2), vmovn_s32(q3));
      /* the low 8 bits, as the twin stores */
      const uint8x16_t r = vcombine_u8(vmovn_u16(vreinterpretq_u16_s16(lo)), vmovn_u16(vreinterpretq_u16_s16(hi)));
      if (c == 16) {
        vst1q_u8(yc + k * stride, r);
      } else {
        uint8_t b[16];
        vst1q_u8(b, r);
        memcpy(yc + k * stride, b, c);
      }
    }
  }
}
