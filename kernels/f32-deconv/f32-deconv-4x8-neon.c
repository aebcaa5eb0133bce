/* f32-deconv, AArch64 NEON: 4 output channels x 8 input columns of dots in 8 q accumulators for
 * the whole channel chain (fmul then fadd per channel, not fmla: the twin's operations in its
 * order). Column tails (fewer than 8) and rows past m run the twin. The dots are added into y with
 * fadd at output stride 1, through ld2/st2 onto the even elements at stride 2 (the odd outputs
 * in between are written back unchanged, only inside the run), one by one otherwise. */
#include <arm_neon.h>

#include "f32-deconv/f32-deconv.h"

/* y[j * y_s] += d[j], j < 4. At stride 2 through ld2/st2 when y[7] (an odd output, written back
 * unchanged) lies before the run's next column's output (`room`), i.e. in this task's row. */
static inline void add_out(float *y, float32x4_t d, size_t y_s, int room) {
  if (y_s == 1) {
    vst1q_f32(y, vaddq_f32(vld1q_f32(y), d));
  } else if (y_s == 2 && room) {
    float32x4x2_t v = vld2q_f32(y);
    v.val[0] = vaddq_f32(v.val[0], d);
    vst2q_f32(y, v);
  } else {
    float t[4];
    vst1q_f32(t, d);
    for (size_t j = 0; j < 4; j++) y[j * y_s] = y[j * y_s] + t[j];
  }
}

void q8rt_f32_deconv_ukernel_4x8__neon(size_t m, size_t n, size_t k, const float *x, size_t x_cs, const float *w,
                                       size_t w_cs, size_t w_ms, float *y, size_t y_ms, size_t y_s) {
  const size_t m4 = m / 4 * 4, n8 = n / 8 * 8;
  for (size_t j = 0; j < n8; j += 8) {
    for (size_t i = 0; i < m4; i += 4) {
      float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
      const float *wi = w + i * w_ms;
      for (size_t c = 0; c < k; c++) {
        const float32x4_t x0 = vld1q_f32(x + c * x_cs + j), x1 = vld1q_f32(x + c * x_cs + j + 4);
        const float *wc = wi + c * w_cs;
        const float32x4_t w0 = vdupq_n_f32(wc[0]), w1 = vdupq_n_f32(wc[w_ms]), w2 = vdupq_n_f32(wc[2 * w_ms]),
                          w3 = vdupq_n_f32(wc[3 * w_ms]);
        c00 = vaddq_f32(c00, vmulq_f32(x0, w0));
        c01 = vaddq_f32(c01, vmulq_f32(x1, w0));
        c10 = vaddq_f32(c10, vmulq_f32(x0, w1));
        c11 = vaddq_f32(c11, vmulq_f32(x1, w1));
        c20 = vaddq_f32(c20, vmulq_f32(x0, w2));
        c21 = vaddq_f32(c21, vmulq_f32(x1, w2));
        c30 = vaddq_f32(c30, vmulq_f32(x0, w3));
        c31 = vaddq_f32(c31, vmulq_f32(x1, w3));
      }
      float *yi = y + i * y_ms + j * y_s;
      const int room = j + 8 < n; /* the first half always has column j + 4 after it */
      add_out(yi, c00, y_s, 1);
      add_out(yi + 4 * y_s, c01, y_s, room);
      add_out(yi + y_ms, c10, y_s, 1);
      add_out(yi + y_ms + 4 * y_s, c11, y_s, room);
      add_out(yi + 2 * y_ms, c20, y_s, 1);
      add_out(yi + 2 * y_ms + 4 * y_s, c21, y_s, room);
      add_out(yi + 3 * y_ms, c30, y_s, 1);
      add_out(yi + 3 * y_ms + 4 * y_s, c31, y_s, room);
    }
  }
  if (m4 < m)
    q8rt_f32_deconv_ukernel__scalar(m - m4, n8, k, x, x_cs, w + m4 * w_ms, w_cs, w_ms, y + m4 * y_ms, y_ms, y_s);
  if (n8 < n) q8rt_f32_deconv_ukernel__scalar(m, n - n8, k, x + n8, x_cs, w, w_cs, w_ms, y + n8 * y_s, y_ms, y_s);
}
