/* f32-igemm, AArch64 NEON: 8 rows x 8 columns of C in 16 q accumulators for the whole k chain. A is
 * read 4 k at a time per row (one ld1 per row) and each k step is an fmla by element (lane k of
 * the row's vector) on the two vectors of B's row k, loaded from wherever its pointer says; a k
 * tail of 1-3 broadcasts A. Every fmla is the exactly rounded fma of the scalar twin, k ascending
 * from +0.0f, so the bits are the twin's. Rows past m (a last tile of fewer than 8) read row 0
 * again and are not stored; columns past n store through a small buffer and are dropped.
 * Written without arrays so that GCC keeps all vectors in registers (as f32-gemm's NEON variant). */
#include <arm_neon.h>
#include <string.h>

#include "f32-igemm/f32-igemm.h"

#define ROW_FMA_LANE(r, L)                            \
  c##r##0 = vfmaq_laneq_f32(c##r##0, b0, a##r##v, L); \
  c##r##1 = vfmaq_laneq_f32(c##r##1, b1, a##r##v, L);

#define K_LANE(L)                             \
  do {                                        \
    const float *bp = b[p + (L)];             \
    const float32x4_t b0 = vld1q_f32(bp);     \
    const float32x4_t b1 = vld1q_f32(bp + 4); \
    ROW_FMA_LANE(0, L)                        \
    ROW_FMA_LANE(1, L)                        \
    ROW_FMA_LANE(2, L)                        \
    ROW_FMA_LANE(3, L)                        \
    ROW_FMA_LANE(4, L)                        \
    ROW_FMA_LANE(5, L)                        \
    ROW_FMA_LANE(6, L)                        \
    ROW_FMA_LANE(7, L)                        \
  } while (0)

#define ROW_FMA_DUP(r)                             \
  {                                                \
    const float32x4_t v = vld1q_dup_f32(a##r + p); \
    c##r##0 = vfmaq_f32(c##r##0, b0, v);           \
    c##r##1 = vfmaq_f32(c##r##1, b1, v);           \
  }

static inline void store_row(float *c, float32x4_t lo, float32x4_t hi, size_t nr) {
  if (nr == 8) {
    vst1q_f32(c, lo);
    vst1q_f32(c + 4, hi);
  } else {
    float t[8];
    vst1q_f32(t, lo);
    vst1q_f32(t + 4, hi);
    memcpy(c, t, nr * sizeof(float));
  }
}

void q8rt_f32_igemm_ukernel_8x8__neon(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *const *b,
                                      float *c, size_t ldc) {
  for (size_t i = 0; i < m; i += 8) {
    const size_t mr = m - i < 8 ? m - i : 8;
    const float *a0 = a + i * lda;
    const float *a1 = mr > 1 ? a0 + lda : a0;
    const float *a2 = mr > 2 ? a1 + lda : a0;
    const float *a3 = mr > 3 ? a2 + lda : a0;
    const float *a4 = mr > 4 ? a3 + lda : a0;
    const float *a5 = mr > 5 ? a4 + lda : a0;
    const float *a6 = mr > 6 ? a5 + lda : a0;
    const float *a7 = mr > 7 ? a6 + lda : a0;
    float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
                c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
    size_t p = 0;
    for (; p + 4 <= k; p += 4) {
      const float32x4_t a0v = vld1q_f32(a0 + p), a1v = vld1q_f32(a1 + p), a2v = vld1q_f32(a2 + p),
                        a3v = vld1q_f32(a3 + p), a4v = vld1q_f32(a4 + p), a5v = vld1q_f32(a5 + p),
                        a6v = vld1q_f32(a6 + p), a7v = vld1q_f32(a7 + p);
      K_LANE(0);
      K_LANE(1);
      K_LANE(2);
      K_LANE(3);
    }
    for (; p < k; p++) {
      const float32x4_t b0 = vld1q_f32(b[p]), b1 = vld1q_f32(b[p] + 4);
      ROW_FMA_DUP(0)
      ROW_FMA_DUP(1)
      ROW_FMA_DUP(2)
      ROW_FMA_DUP(3)
      ROW_FMA_DUP(4)
      ROW_FMA_DUP(5)
      ROW_FMA_DUP(6)
      ROW_FMA_DUP(7)
    }
    float *ci = c + i * ldc;
    store_row(ci, c00, c01, n);
    if (mr > 1) store_row(ci + ldc, c10, c11, n);
    if (mr > 2) store_row(ci + 2 * ldc, c20, c21, n);
    if (mr > 3) store_row(ci + 3 * ldc, c30, c31, n);
    if (mr > 4) store_row(ci + 4 * ldc, c40, c41, n);
    if (mr > 5) store_row(ci + 5 * ldc, c50, c51, n);
    if (mr > 6) store_row(ci + 6 * ldc, c60, c61, n);
    if (mr > 7) store_row(ci + 7 * ldc, c70, c71, n);
  }
}
