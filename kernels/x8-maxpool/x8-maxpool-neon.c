/* x8-maxpool, AArch64 NEON: 16 outputs per vector at stride 1 (umax / smax: integer max is the
 * twin's comparison exactly); other strides and the tail: the scalar twin. */
#include <arm_neon.h>

#include "x8-maxpool/x8-maxpool.h"

#define X8_MAXPOOL_NEON(name, T, scalar, V, vld, vst, vmax)             \
  void name(size_t n, size_t k, size_t s, size_t d, const T *x, T *y) { \
    size_t o = 0;                                                       \
    if (s == 1) {                                                       \
      for (; o + 16 <= n; o += 16) {                                    \
        V m = vld(y + o);                                               \
        for (size_t t = 0; t < k; t++) m = vmax(m, vld(x + o + t * d)); \
        vst(y + o, m);                                                  \
      }                                                                 \
    }                                                                   \
    if (o < n) scalar(n - o, k, s, d, x + o * s, y + o);                \
  }

X8_MAXPOOL_NEON(q8rt_u8_maxpool_ukernel__neon, uint8_t, q8rt_u8_maxpool_ukernel__scalar, uint8x16_t, vld1q_u8, vst1q_u8,
                vmaxq_u8)
X8_MAXPOOL_NEON(q8rt_s8_maxpool_ukernel__neon, int8_t, q8rt_s8_maxpool_ukernel__scalar, int8x16_t, vld1q_s8, vst1q_s8,
                vmaxq_s8)
