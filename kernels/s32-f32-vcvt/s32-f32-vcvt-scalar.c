/* The scalar twin of s32-f32-vcvt (contract in s32-f32-vcvt.h). */
#include <string.h>

#include "s32-f32-vcvt/s32-f32-vcvt.h"

void q8rt_s32_f32_vcvt_ukernel__scalar(size_t n, const int32_t *acc, const uint32_t *colsum, void *y,
                                       const q8rt_s32_vcvt_params *p) {
  for (size_t i = 0; i < n; i++) {
    uint32_t v = (uint32_t)acc[i] + p->c;
    if (colsum != NULL) v -= p->e * colsum[i];
    const int32_t s = (int32_t)v;
    if (p->mode == Q8RT_S32_VCVT_INT32) {
      memcpy((uint8_t *)y + i * 4, &s, 4);
      continue;
    }
    float f = (float)s * p->scale;
    if (p->mode == Q8RT_S32_VCVT_SCALE_BIAS) f = f + p->bias;
    if (p->mode == Q8RT_S32_VCVT_SCALE_BIASV) f = f + p->biasv[i];
    memcpy((uint8_t *)y + i * 4, &f, 4);
  }
}
