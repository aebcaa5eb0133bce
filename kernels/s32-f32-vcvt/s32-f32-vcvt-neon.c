/* s32-f32-vcvt for NEON: 8 lanes per step, the tail on the scalar twin. scvtf rounds to nearest
 * even like the C conversion, then fmul and fadd as separate instructions (the build's
 * -ffp-contract=off keeps the intrinsics unfused): the twin's roundings. */
#include <arm_neon.h>

#include "s32-f32-vcvt/s32-f32-vcvt.h"

static inline uint32x4_t vcvt_acc(const int32_t *acc, const uint32_t *colsum, uint32x4_t vc, uint32x4_t ve) {
  uint32x4_t v = vaddq_u32(vreinterpretq_u32_s32(vld1q_s32(acc)), vc);
  if (colsum != NULL) v = vmlsq_u32(v, ve, vld1q_u32(colsum));
  return v;
}

void q8rt_s32_f32_vcvt_ukernel__neon(size_t n, const int32_t *acc, const uint32_t *colsum, void *y,
                                     const q8rt_s32_vcvt_params *p) {
  const uint32x4_t vc = vdupq_n_u32(p->c), ve = vdupq_n_u32(p->e);
  const float32x4_t vs = vdupq_n_f32(p->scale), vb = vdupq_n_f32(p->bias);
  float *yf = y;
  int32_t *yi = y;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint32x4_t v0 = vcvt_acc(acc + i, colsum != NULL ? colsum + i : NULL, vc, ve);
    const uint32x4_t v1 = vcvt_acc(acc + i + 4, colsum != NULL ? colsum + i + 4 : NULL, vc, ve);
    if (p->mode == Q8RT_S32_VCVT_INT32) {
      vst1q_s32(yi + i, vreinterpretq_s32_u32(v0));
      vst1q_s32(yi + i + 4, vreinterpretq_s32_u32(v1));
      continue;
    }
    float32x4_t f0 = vmulq_f32(vcvtq_f32_s32(vreinterpretq_s32_u32(v0)), vs);
    float32x4_t f1 = vmulq_f32(vcvtq_f32_s32(vreinterpretq_s32_u32(v1)), vs);
    if (p->mode == Q8RT_S32_VCVT_SCALE_BIAS) {
      f0 = vaddq_f32(f0, vb);
      f1 = vaddq_f32(f1, vb);
    } else if (p->mode == Q8RT_S32_VCVT_SCALE_BIASV) {
      f0 = vaddq_f32(f0, vld1q_f32(p->biasv + i));
      f1 = vaddq_f32(f1, vld1q_f32(p->biasv + i + 4));
    }
    vst1q_f32(yf + i, f0);
    vst1q_f32(yf + i + 4, f1);
  }
  if (i < n) {
    q8rt_s32_vcvt_params t = *p;
    if (t.mode == Q8RT_S32_VCVT_SCALE_BIASV) t.biasv += i;
    q8rt_s32_f32_vcvt_ukernel__scalar(n - i, acc + i, colsum != NULL ? colsum + i : NULL, yi + i, &t);
  }
}
