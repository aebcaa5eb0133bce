/* f32-vbinary, AArch64 NEON: 8 elements per step in two registers, then 4, the last n % 4 by the
 * scalar twin of the same function. fadd/fsub/fmul/fdiv are the twin's IEEE operations. fmax and
 * fmaxnm handle NaN and ±0 differently from the twin's x < w ? w : x, so max and min are a compare
 * and a bit select: x < w ? w : x and w < x ? w : x exactly (fcmgt is false for NaN). */
#include <arm_neon.h>

#include "f32-vbinary/f32-vbinary.h"

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN, OP_PRELU };

static inline __attribute__((always_inline)) float32x4_t op4(int op, float32x4_t x, float32x4_t w) {
  switch (op) {
    case OP_ADD: return vaddq_f32(x, w);
    case OP_SUB: return vsubq_f32(x, w);
    case OP_MUL: return vmulq_f32(x, w);
    case OP_DIV: return vdivq_f32(x, w);
    case OP_MAX: return vbslq_f32(vcltq_f32(x, w), w, x);
    case OP_MIN: return vbslq_f32(vcltq_f32(w, x), w, x);
    default: return vbslq_f32(vcltq_f32(x, vdupq_n_f32(0.0f)), vmulq_f32(x, w), x);
  }
}

/* form 0: y = a op b; 1: y = a op b[0]; 2: y = b[0] op a */
static inline __attribute__((always_inline)) void vbin(int op, int form, size_t n, const float *a, const float *b,
                                                       float *y, q8rt_f32_vbinary_ukernel_fn twin) {
  const float32x4_t c = form == 0 ? vdupq_n_f32(0.0f) : vdupq_n_f32(b[0]);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float32x4_t a0 = vld1q_f32(a + i), a1 = vld1q_f32(a + i + 4);
    const float32x4_t b0 = form == 0 ? vld1q_f32(b + i) : c, b1 = form == 0 ? vld1q_f32(b + i + 4) : c;
    const float32x4_t y0 = form == 2 ? op4(op, b0, a0) : op4(op, a0, b0);
    const float32x4_t y1 = form == 2 ? op4(op, b1, a1) : op4(op, a1, b1);
    vst1q_f32(y + i, y0);
    vst1q_f32(y + i + 4, y1);
  }
  if (i + 4 <= n) {
    const float32x4_t a0 = vld1q_f32(a + i), b0 = form == 0 ? vld1q_f32(b + i) : c;
    vst1q_f32(y + i, form == 2 ? op4(op, b0, a0) : op4(op, a0, b0));
    i += 4;
  }
  if (i < n) twin(n - i, a + i, form == 0 ? b + i : b, y + i);
}

#define DEF_FORMS(op, id)                                                                     \
  void q8rt_f32_v##op##_ukernel__neon(size_t n, const float *a, const float *b, float *y) {   \
    vbin(id, 0, n, a, b, y, q8rt_f32_v##op##_ukernel__scalar);                                \
  }                                                                                           \
  void q8rt_f32_v##op##c_ukernel__neon(size_t n, const float *a, const float *b, float *y) {  \
    vbin(id, 1, n, a, b, y, q8rt_f32_v##op##c_ukernel__scalar);                               \
  }                                                                                           \
  void q8rt_f32_vr##op##c_ukernel__neon(size_t n, const float *a, const float *b, float *y) { \
    vbin(id, 2, n, a, b, y, q8rt_f32_vr##op##c_ukernel__scalar);                              \
  }

DEF_FORMS(add, OP_ADD)
DEF_FORMS(sub, OP_SUB)
DEF_FORMS(mul, OP_MUL)
DEF_FORMS(div, OP_DIV)
DEF_FORMS(max, OP_MAX)
DEF_FORMS(min, OP_MIN)
DEF_FORMS(prelu, OP_PRELU)
