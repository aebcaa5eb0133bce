/* 8x8c4 GEMM body shared by the dot-product variants (included once per variant file).
 *
 * The KR = 4 packing is what a 4-byte dot product consumes: one 16-byte load of the packed weights
 * holds 4 channels x 4 k, and `dot acc, w, a.4b[lane]` adds, in each channel's int32 lane, the dot
 * product of its 4 weights with the 4 activation bytes of group `lane` of a 16-byte row load. Per
 * 16 k and 8 rows: 8 row loads, 8 weight loads, 64 dot products (1024 MACs); the 16 accumulators,
 * 8 rows and 2 weight registers fit the 32 vector registers with room to pipeline loads.
 *
 * The file that includes this defines
 *   Q8RT_DOT(acc, w, a, lane)  the dot instruction (w: int8x16_t; a: Q8RT_A_T)
 *   Q8RT_A_T, Q8RT_A_LOAD(p)   the activation vector type and its load from uint8_t *
 *   Q8RT_A_XOR(v, x)           v ^ x in that type
 *   Q8RT_A_SHIFT               0x80 when the dot product wants s8 activations (sdot: a ^ x_xor ^
 *                              0x80 = a_u8 - 128, packed with the zero point as s8), 0 for u8
 *   Q8RT_FN                    the function name
 * and optionally
 *   Q8RT_W_PREP(w)             applied to each weight vector after its load (udot: w ^ 0x80)
 *   Q8RT_A_ROWSUM              the dot product takes the weights as u8, w + 128 (udot): each row's
 *                              accumulators start at bias - 128 * sum_k a (k < round_up(kc, 4),
 *                              the bytes the loop reads: a padded k meets w + 128 = 128 there too)
 *   Q8RT_I32                   store the int32 accumulators (Q8RT_GEMM_UKERNEL_I32), no requant
 * All int32 arithmetic wraps like the contract's accumulator. K past kc (up to round_up(kc, 4)) is
 * read as the kernel contract allows and meets zero weights. */
#include <arm_neon.h>

#include "q8rt-kernels.h"
#include "q8rt-neon.h"

#define Q8RT_ROW_PTRS(p, base, stride, T)        \
  T p##0 = (T)(base);                            \
  T p##1 = mr > 1 ? (T)(p##0 + (stride)) : p##0; \
  T p##2 = mr > 2 ? (T)(p##1 + (stride)) : p##1; \
  T p##3 = mr > 3 ? (T)(p##2 + (stride)) : p##2; \
  T p##4 = mr > 4 ? (T)(p##3 + (stride)) : p##3; \
  T p##5 = mr > 5 ? (T)(p##4 + (stride)) : p##4; \
  T p##6 = mr > 6 ? (T)(p##5 + (stride)) : p##5; \
  T p##7 = mr > 7 ? (T)(p##6 + (stride)) : p##6;

#define Q8RT_FOR8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

#ifndef Q8RT_W_PREP
#define Q8RT_W_PREP(w) (w)
#endif

#ifdef Q8RT_A_ROWSUM
/* 128 * sum of the kc4 bytes a ^ x the loop reads (wrapping): once per call, for every block. */
static __attribute__((noinline)) int32x4_t gemm_rowsum128(const uint8_t *a, size_t kc4, uint8_t x) {
  const uint8x16_t vx = vdupq_n_u8(x), ones = vdupq_n_u8(1);
  uint32x4_t s = vdupq_n_u32(0);
  size_t k = kc4;
  for (; k >= 16; k -= 16, a += 16) s = vdotq_u32(s, veorq_u8(vld1q_u8(a), vx), ones);
  uint32_t t = vaddvq_u32(s);
  for (; k != 0; k--, a++) t += (uint32_t)(*a ^ x);
  return vdupq_n_s32((int32_t)(128u * t));
}
#endif

#ifdef Q8RT_I32
/* The first n (< 8) int32 of lo:hi. */
static inline __attribute__((always_inline)) void gemm_store_partial_s32(uint8_t *p, int32x4_t lo, int32x4_t hi,
                                                                         size_t n) {
  if (n & 4) {
    vst1q_s32((int32_t *)(void *)p, lo);
    p += 16;
    lo = hi;
  }
  if (n & 2) {
    vst1_s32((int32_t *)(void *)p, vget_low_s32(lo));
    p += 8;
    lo = vextq_s32(lo, lo, 2);
  }
  if (n & 1) vst1q_lane_s32((int32_t *)(void *)p, lo, 0);
}
#endif

static inline __attribute__((always_inline)) void gemm_8x8c4(size_t mr, size_t nc, size_t kc, const uint8_t *a,
                                                             size_t a_stride, const void *w, void *c, size_t c_stride,
                                                             const q8rt_qu8_requant_params *p, const int flip) {
  Q8RT_ROW_PTRS(a, a, a_stride, const uint8_t *)
  Q8RT_ROW_PTRS(c, c, c_stride, uint8_t *)
  const size_t kc4 = (kc + 3) & ~(size_t)3;
  const Q8RT_A_T vflip = Q8RT_A_LOAD_DUP((uint8_t)(p->x_xor ^ Q8RT_A_SHIFT));
#ifdef Q8RT_I32
  const size_t out_step = 8 * sizeof(int32_t);
#else
  const size_t out_step = 8;
  q8rt_neon_requant rq;
  rq.lo = vdupq_n_f32(p->y_lo);
  rq.hi = vdupq_n_f32(p->y_hi);
  rq.zp = vdupq_n_s16((int16_t)p->y_zero_point);
#endif
#ifdef Q8RT_A_ROWSUM
#define ROWSUM(i) const int32x4_t rs##i = gemm_rowsum128(a##i, kc4, p->x_xor);
  Q8RT_FOR8(ROWSUM)
#undef ROWSUM
#endif
  const int8_t *pw = (const int8_t *)w;

  for (;;) {
    const int32x4_t b_lo = vld1q_s32((const int32_t *)(const void *)pw);
    const int32x4_t b_hi = vld1q_s32((const int32_t *)(const void *)(pw + 16));
    pw += 32;
#ifdef Q8RT_A_ROWSUM
#define DECL_ACC(i) \
  int32x4_t acc##i##l = q8rt_vsubq_s32_wrap(b_lo, rs##i), acc##i##h = q8rt_vsubq_s32_wrap(b_hi, rs##i);
#else
#define DECL_ACC(i) int32x4_t acc##i##l = b_lo, acc##i##h = b_hi;
#endif
    Q8RT_FOR8(DECL_ACC)
#undef DECL_ACC
    size_t k = kc4;
    for (; k >= 16; k -= 16) {
#define LOAD_A(i)                     \
  Q8RT_A_T va##i = Q8RT_A_LOAD(a##i); \
  a##i += 16;                         \
  if (flip) va##i = Q8RT_A_XOR(va##i, vflip);
      Q8RT_FOR8(LOAD_A)
#undef LOAD_A
#define DOT_ROW(i, lane)                            \
  acc##i##l = Q8RT_DOT(acc##i##l, w0, va##i, lane); \
  acc##i##h = Q8RT_DOT(acc##i##h, w1, va##i, lane);
#define DOT_LANE(lane)                                   \
  {                                                      \
    const int8x16_t w0 = Q8RT_W_PREP(vld1q_s8(pw));      \
    const int8x16_t w1 = Q8RT_W_PREP(vld1q_s8(pw + 16)); \
    pw += 32;                                            \
    DOT_ROW(0, lane)                                     \
    DOT_ROW(1, lane)                                     \
    DOT_ROW(2, lane)                                     \
    DOT_ROW(3, lane)                                     \
    DOT_ROW(4, lane)                                     \
    DOT_ROW(5, lane)                                     \
    DOT_ROW(6, lane)                                     \
    DOT_ROW(7, lane)                                     \
  }
      DOT_LANE(0)
      DOT_LANE(1)
      DOT_LANE(2)
      DOT_LANE(3)
    }
    for (; k != 0; k -= 4) {
#define LOAD_A4(i)                                                    \
  Q8RT_A_T va##i = Q8RT_A_FROM_U32(vdupq_n_u32(q8rt_load_u32(a##i))); \
  a##i += 4;                                                          \
  if (flip) va##i = Q8RT_A_XOR(va##i, vflip);
      Q8RT_FOR8(LOAD_A4)
#undef LOAD_A4
      DOT_LANE(0)
    }
#undef DOT_LANE
#undef DOT_ROW
#ifdef Q8RT_I32
    pw += 32; /* the packed scales: not read */
#define Y_STORE(i)                               \
  vst1q_s32((int32_t *)(void *)c##i, acc##i##l); \
  vst1q_s32((int32_t *)(void *)(c##i + 16), acc##i##h);
#define Y_PARTIAL(i) gemm_store_partial_s32(c##i, acc##i##l, acc##i##h, nc);
#else
    const float32x4_t s_lo = vld1q_f32((const float *)(const void *)pw);
    const float32x4_t s_hi = vld1q_f32((const float *)(const void *)(pw + 16));
    pw += 32;
#define REQUANT(i) const uint8x8_t y##i = q8rt_neon_requant8(acc##i##l, acc##i##h, s_lo, s_hi, &rq);
    Q8RT_FOR8(REQUANT)
#undef REQUANT
#define Y_STORE(i) vst1_u8(c##i, y##i);
#define Y_PARTIAL(i) q8rt_neon_store_partial8(c##i, y##i, nc);
#endif
    if (nc >= 8) {
      /* highest row first: rows past mr alias lower ones and must not overwrite them */
      Y_STORE(7)
      Y_STORE(6)
      Y_STORE(5)
      Y_STORE(4)
      Y_STORE(3)
      Y_STORE(2)
      Y_STORE(1)
      Y_STORE(0)
#define NEXT(i)     \
  c##i += out_step; \
  a##i -= kc4;
      Q8RT_FOR8(NEXT)
#undef NEXT
      nc -= 8;
      if (nc == 0) return;
    } else {
      Y_PARTIAL(7)
      Y_PARTIAL(6)
      Y_PARTIAL(5)
      Y_PARTIAL(4)
      Y_PARTIAL(3)
      Y_PARTIAL(2)
      Y_PARTIAL(1)
      Y_PARTIAL(0)
      return;
    }
#undef Y_STORE
#undef Y_PARTIAL
  }
}

#ifdef Q8RT_I32
/* One row (mr == 1: an LSTM step's h * R, a one-row MatMulInteger): the 8-row loop would run 8
 * aliased copies of it. Here each 8-channel block keeps one accumulator pair per lane of the
 * 16-byte row load (4 independent chains instead of one) and adds them at the end: int32 sums
 * wrap alike in any order, so the bytes are the 8-row loop's. */
static inline __attribute__((always_inline)) void gemm_1x8c4(size_t nc, size_t kc, const uint8_t *a, const void *w,
                                                             void *c, const q8rt_qu8_requant_params *p,
                                                             const int flip) {
  const size_t kc4 = (kc + 3) & ~(size_t)3;
  const Q8RT_A_T vflip = Q8RT_A_LOAD_DUP((uint8_t)(p->x_xor ^ Q8RT_A_SHIFT));
#ifdef Q8RT_A_ROWSUM
  const int32x4_t rs = gemm_rowsum128(a, kc4, p->x_xor);
#endif
  const int8_t *pw = (const int8_t *)w;
  uint8_t *c0 = (uint8_t *)c;
  for (;;) {
    int32x4_t l0 = vld1q_s32((const int32_t *)(const void *)pw);
    int32x4_t h0 = vld1q_s32((const int32_t *)(const void *)(pw + 16));
    pw += 32;
#ifdef Q8RT_A_ROWSUM
    l0 = q8rt_vsubq_s32_wrap(l0, rs);
    h0 = q8rt_vsubq_s32_wrap(h0, rs);
#endif
    int32x4_t l1 = vdupq_n_s32(0), h1 = l1, l2 = l1, h2 = l1, l3 = l1, h3 = l1;
    const uint8_t *ap = a;
    size_t k = kc4;
    for (; k >= 16; k -= 16, ap += 16, pw += 128) {
      Q8RT_A_T va = Q8RT_A_LOAD(ap);
      if (flip) va = Q8RT_A_XOR(va, vflip);
      l0 = Q8RT_DOT(l0, Q8RT_W_PREP(vld1q_s8(pw)), va, 0);
      h0 = Q8RT_DOT(h0, Q8RT_W_PREP(vld1q_s8(pw + 16)), va, 0);
      l1 = Q8RT_DOT(l1, Q8RT_W_PREP(vld1q_s8(pw + 32)), va, 1);
      h1 = Q8RT_DOT(h1, Q8RT_W_PREP(vld1q_s8(pw + 48)), va, 1);
      l2 = Q8RT_DOT(l2, Q8RT_W_PREP(vld1q_s8(pw + 64)), va, 2);
      h2 = Q8RT_DOT(h2, Q8RT_W_PREP(vld1q_s8(pw + 80)), va, 2);
      l3 = Q8RT_DOT(l3, Q8RT_W_PREP(vld1q_s8(pw + 96)), va, 3);
      h3 = Q8RT_DOT(h3, Q8RT_W_PREP(vld1q_s8(pw + 112)), va, 3);
    }
    for (; k != 0; k -= 4, ap += 4, pw += 32) {
      Q8RT_A_T va = Q8RT_A_FROM_U32(vdupq_n_u32(q8rt_load_u32(ap)));
      if (flip) va = Q8RT_A_XOR(va, vflip);
      l0 = Q8RT_DOT(l0, Q8RT_W_PREP(vld1q_s8(pw)), va, 0);
      h0 = Q8RT_DOT(h0, Q8RT_W_PREP(vld1q_s8(pw + 16)), va, 0);
    }
    pw += 32; /* the packed scales: not read */
    const int32x4_t lo = q8rt_vaddq_s32_wrap(q8rt_vaddq_s32_wrap(l0, l1), q8rt_vaddq_s32_wrap(l2, l3));
    const int32x4_t hi = q8rt_vaddq_s32_wrap(q8rt_vaddq_s32_wrap(h0, h1), q8rt_vaddq_s32_wrap(h2, h3));
    if (nc < 8) {
      gemm_store_partial_s32(c0, lo, hi, nc);
      return;
    }
    vst1q_s32((int32_t *)(void *)c0, lo);
    vst1q_s32((int32_t *)(void *)(c0 + 16), hi);
    c0 += 8 * sizeof(int32_t);
    nc -= 8;
    if (nc == 0) return;
  }
}
#endif

void Q8RT_FN(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c,
             size_t c_stride, const q8rt_qu8_requant_params *p) {
  if (nc == 0) return;
#ifdef Q8RT_I32
  if (mr == 1) {
    if ((uint8_t)(p->x_xor ^ Q8RT_A_SHIFT) != 0)
      gemm_1x8c4(nc, kc, a, w, c, p, 1);
    else
      gemm_1x8c4(nc, kc, a, w, c, p, 0);
    return;
  }
#endif
  /* Two copies of the loop: without the activation flip when the input type already is what the
   * dot product wants (s8 for sdot, u8 for sudot), so those models pay no eor. */
  if ((uint8_t)(p->x_xor ^ Q8RT_A_SHIFT) != 0)
    gemm_8x8c4(mr, nc, kc, a, a_stride, w, c, c_stride, p, 1);
  else
    gemm_8x8c4(mr, nc, kc, a, a_stride, w, c, c_stride, p, 0);
}
