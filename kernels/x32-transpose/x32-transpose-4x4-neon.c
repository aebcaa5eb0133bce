/* x32-transpose, 4x4 blocks in NEON registers (vtrn then half swaps: bit moves only); the edges by
 * the scalar loop. */
#include <arm_neon.h>

#include "x32-transpose/x32-transpose.h"

static void block4(const uint32_t *x, size_t x_stride, uint32_t *y, size_t y_stride) {
  const uint32x4_t r0 = vld1q_u32(x), r1 = vld1q_u32(x + x_stride);
  const uint32x4_t r2 = vld1q_u32(x + 2 * x_stride), r3 = vld1q_u32(x + 3 * x_stride);
  const uint32x4x2_t t0 = vtrnq_u32(r0, r1), t1 = vtrnq_u32(r2, r3);
  vst1q_u32(y, vcombine_u32(vget_low_u32(t0.val[0]), vget_low_u32(t1.val[0])));
  vst1q_u32(y + y_stride, vcombine_u32(vget_low_u32(t0.val[1]), vget_low_u32(t1.val[1])));
  vst1q_u32(y + 2 * y_stride, vcombine_u32(vget_high_u32(t0.val[0]), vget_high_u32(t1.val[0])));
  vst1q_u32(y + 3 * y_stride, vcombine_u32(vget_high_u32(t0.val[1]), vget_high_u32(t1.val[1])));
}

void q8rt_x32_transpose_ukernel_4x4__neon(size_t a, size_t b, const uint32_t *x, size_t x_stride, uint32_t *y,
                                          size_t y_stride) {
  const size_t a4 = a & ~(size_t)3, b4 = b & ~(size_t)3;
  for (size_t i = 0; i < a4; i += 4) {
    for (size_t j = 0; j < b4; j += 4) block4(x + i * x_stride + j, x_stride, y + j * y_stride + i, y_stride);
    for (size_t ii = i; ii < i + 4; ii++) {
      for (size_t j = b4; j < b; j++) y[j * y_stride + ii] = x[ii * x_stride + j];
    }
  }
  for (size_t i = a4; i < a; i++) {
    for (size_t j = 0; j < b; j++) y[j * y_stride + i] = x[i * x_stride + j];
  }
}
