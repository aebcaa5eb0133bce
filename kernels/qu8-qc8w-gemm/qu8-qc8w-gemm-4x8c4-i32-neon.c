/* int32-output qu8-qc8w-gemm 4x8c4, ARMv8.0 NEON without the dot product (Cortex-A53/A72):
 * ConvInteger and MatMulInteger on the generic packing (s8 weights, bias' without any activation
 * term). The product is taken as u8 x u8: (a ^ x_xor) times w ^ 0x80 = w + 128, so umull gives
 * exact uint16 products (<= 255 * 255) and uadalp adds neighbouring ones into uint32 lanes
 * [j: k0+k1, j: k2+k3, j+1: k0+k1, j+1: k2+k3] (as the requantizing 4x8c4 kernel, without any
 * int16 sum of two products); a pairwise add folds them per channel. Each row's accumulators
 * start at bias' - 128 * sum_k (a ^ x_xor) over the round_up(kc, 4) bytes the loop reads (a padded
 * k meets w + 128 = 128 too), summed once per call. Per row and k group: 1 ld1r, 4 umull, 4 uadalp
 * for 32 MACs; the weights' eor is shared by the 4 rows. All arithmetic wraps like the twin's.
 * One row (mr == 1: an LSTM step's h * R) runs a copy of the loop with MR = 1 instead of 4 aliased
 * rows: the same sums. */
#include <arm_neon.h>

#include "q8rt-kernels.h"
#include "q8rt-neon.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"

#define ROW_PTRS(p, base, stride, T)             \
  T p##0 = (T)(base);                            \
  T p##1 = mr > 1 ? (T)(p##0 + (stride)) : p##0; \
  T p##2 = mr > 2 ? (T)(p##1 + (stride)) : p##1; \
  T p##3 = mr > 3 ? (T)(p##2 + (stride)) : p##2;
#define FOR4(X) X(0) X(1) X(2) X(3)

static __attribute__((noinline)) uint32_t rowsum128(const uint8_t *a, size_t kc4, uint8_t x) {
  const uint8x16_t vx = vdupq_n_u8(x);
  uint32x4_t s = vdupq_n_u32(0);
  size_t k = kc4;
  for (; k >= 16; k -= 16, a += 16) s = vpadalq_u16(s, vpaddlq_u8(veorq_u8(vld1q_u8(a), vx)));
  uint32_t t = vaddvq_u32(s);
  for (; k != 0; k--, a++) t += (uint32_t)(*a ^ x);
  return 128u * t;
}

static __attribute__((noinline)) void store_partial(uint8_t *p, uint32x4_t lo, uint32x4_t hi, size_t n) {
  if (n & 4) {
    vst1q_u32((uint32_t *)(void *)p, lo);
    p += 16;
    lo = hi;
  }
  if (n & 2) {
    vst1_u32((uint32_t *)(void *)p, vget_low_u32(lo));
    p += 8;
    lo = vextq_u32(lo, lo, 2);
  }
  if (n & 1) vst1q_lane_u32((uint32_t *)(void *)p, lo, 0);
}

static inline __attribute__((always_inline)) void gemm_4x8c4(size_t mr, size_t nc, size_t kc, const uint8_t *a,
                                                             size_t a_stride, const void *w, void *c, size_t c_stride,
                                                             uint8_t x_xor, const int flip, const size_t MR) {
  ROW_PTRS(a, a, a_stride, const uint8_t *)
  ROW_PTRS(c, c, c_stride, uint8_t *)
  const size_t kc4 = (kc + 3) & ~(size_t)3;
  const uint8x16_t vflip = vdupq_n_u8(x_xor), v80 = vdupq_n_u8(0x80);
#define ROWSUM(i) const uint32x4_t rs##i = vdupq_n_u32(MR > i ? rowsum128(a##i, kc4, x_xor) : 0u);
  FOR4(ROWSUM)
#undef ROWSUM
  const uint8_t *pw = (const uint8_t *)w;
  for (;;) {
    /* acc<row><q>: q = 0..3 covers channels 2q, 2q+1 */
#define DECL_ACC(i) \
  uint32x4_t acc##i##0 = vdupq_n_u32(0), acc##i##1 = acc##i##0, acc##i##2 = acc##i##0, acc##i##3 = acc##i##0;
    FOR4(DECL_ACC)
#undef DECL_ACC
    const uint32x4_t b_lo = vld1q_u32((const uint32_t *)(const void *)pw);
    const uint32x4_t b_hi = vld1q_u32((const uint32_t *)(const void *)(pw + 16));
    pw += 32;
    for (size_t k = kc4; k != 0; k -= 4) {
      const uint8x16_t w0 = veorq_u8(vld1q_u8(pw), v80), w1 = veorq_u8(vld1q_u8(pw + 16), v80);
      pw += 32;
      /* one k group (4 bytes) of each row in all four 32-bit lanes  */
#define GROUP_ROW(i)                                                       \
  if (MR > i) {                                                            \
    uint8x16_t g = vreinterpretq_u8_u32(vdupq_n_u32(q8rt_load_u32(a##i))); \
    a##i += 4;                                                             \
    if (flip) g = veorq_u8(g, vflip);                                      \
    const uint8x8_t gl = vget_low_u8(g);                                   \
    acc##i##0 = vpadalq_u16(acc##i##0, vmull_u8(vget_low_u8(w0), gl));     \
    acc##i##1 = vpadalq_u16(acc##i##1, vmull_high_u8(w0, g));              \
    acc##i##2 = vpadalq_u16(acc##i##2, vmull_u8(vget_low_u8(w1), gl));     \
    acc##i##3 = vpadalq_u16(acc##i##3, vmull_high_u8(w1, g));              \
  }
      FOR4(GROUP_ROW)
#undef GROUP_ROW
    }
    pw += 32; /* the packed scales: not read */
#define FOLD(i)                                                                                   \
  const uint32x4_t r##i##l = vaddq_u32(vsubq_u32(b_lo, rs##i), vpaddq_u32(acc##i##0, acc##i##1)); \
  const uint32x4_t r##i##h = vaddq_u32(vsubq_u32(b_hi, rs##i), vpaddq_u32(acc##i##2, acc##i##3));
    FOR4(FOLD)
#undef FOLD
    if (nc >= 8) {
      /* highest row first: rows past mr alias lower ones and must not overwrite them */
#define STORE(i)                                         \
  if (MR > i) {                                          \
    vst1q_u32((uint32_t *)(void *)c##i, r##i##l);        \
    vst1q_u32((uint32_t *)(void *)(c##i + 16), r##i##h); \
  }                                                      \
  c##i += 32;                                            \
  a##i -= kc4;
      STORE(3)
      STORE(2)
      STORE(1)
      STORE(0)
#undef STORE
      nc -= 8;
      if (nc == 0) return;
    } else {
      if (MR > 3) store_partial(c3, r3l, r3h, nc);
      if (MR > 2) store_partial(c2, r2l, r2h, nc);
      if (MR > 1) store_partial(c1, r1l, r1h, nc);
      store_partial(c0, r0l, r0h, nc);
      return;
    }
  }
}

void q8rt_qu8_qc8w_gemm_i32_ukernel_4x8c4__neon(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride,
                                                const void *w, void *c, size_t c_stride,
                                                const q8rt_qu8_requant_params *p) {
  if (nc == 0) return;
  if (mr == 1)
    gemm_4x8c4(mr, nc, kc, a, a_stride, w, c, c_stride, p->x_xor, 1, 1); /* xor 0: an identity */
  else if (p->x_xor != 0)
    gemm_4x8c4(mr, nc, kc, a, a_stride, w, c, c_stride, p->x_xor, 1, 4);
  else
    gemm_4x8c4(mr, nc, kc, a, a_stride, w, c, c_stride, 0, 0, 4);
}
