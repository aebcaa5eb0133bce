/* QLinearAdd / QLinearMul rows, AVX-512 (F+BW+VL+DQ; FMA is part of AVX-512F): byte-identical to
 * q8-vbinary-scalar.c. The AVX2 variant's arithmetic on 16 lanes, 64 elements per iteration in four
 * groups of 16:
 *   x -> int32 (vpmovzx/sx) -> float (exact);
 *   add: vfmadd (exactly rounded, as fmaf), the inner fma hoisted when x2 is one broadcast value;
 *   mul: (x1 - z1) * (x2 - z2) as a float product (integers of magnitude <= 255: exact, equal to
 *        the scalar int32 product converted), then one vmulps and one vaddps;
 *   cvt: vcvtps2dq with the rounding embedded (to nearest even, independent of MXCSR): NaN and
 *        out of range give INT32_MIN as cvtps2dq does, the same as the AVX2 variant's vroundps +
 *        vcvttps2dq; then packs to int16 and to the 8-bit type: the two saturations are exactly
 *        the clamp to the type's range.
 * A tail of n % 64 (rows of 24 or 96 channels: QLinearMul by a per-channel vector) runs on masked
 * loads and a masked store, only its non-empty groups of 16: nothing is read or written past n (a
 * zero-padded stack copy, as the AVX2 variant does, made such rows slower than AVX2). */
#include <immintrin.h>

#include "q8rt-kernels.h"

#define VB_INLINE static inline __attribute__((always_inline))

enum { VB_ADD, VB_MUL };

VB_INLINE __m512 vb_load16(const uint8_t *x, __m128i flip, int is_signed) {
  const __m128i v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)x), flip);
  return _mm512_cvtepi32_ps(is_signed ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v));
}

typedef struct vb_consts {
  __m512 r1, r2, f; /* add */
  __m512 ratio, zc; /* mul */
  __m512 z1, z2;    /* mul, as floats */
  __m512 c2;        /* x2 broadcast: add: fma(x2, r2, f); mul: x2 - z2 */
  __m128i flip;     /* p->flip in every byte */
} vb_consts;

/* 16 elements of x as floats; a tail group of rem < 16 elements reads only those (masked, never
 * with an all-zero mask: the caller skips empty groups). */
VB_INLINE __m512 vb_load16m(const uint8_t *x, size_t rem, __m128i flip, int is_signed) {
  if (rem >= 16) return vb_load16(x, flip, is_signed);
  const __m128i v = _mm_xor_si128(_mm_maskz_loadu_epi8((__mmask16)((1u << rem) - 1u), x), flip);
  return _mm512_cvtepi32_ps(is_signed ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v));
}

/* The first n (1 <= n <= 64; 64: full) results from x1 and x2 (or the broadcast constant): loads
 * and the store masked to n, groups past n not computed. */
VB_INLINE void vb_block(size_t n, const uint8_t *x1, const uint8_t *x2, uint8_t *y, const vb_consts *k, int op,
                        int bcast, int is_signed) {
  __m512i r[4];
  for (size_t i = 0; i < 4; i++) {
    if (16 * i >= n) {
      r[i] = _mm512_setzero_si512();
      continue;
    }
    const size_t rem = n - 16 * i;
    const __m512 a = vb_load16m(x1 + 16 * i, rem, k->flip, is_signed);
    __m512 v;
    if (op == VB_ADD) {
      const __m512 inner =
          bcast ? k->c2 : _mm512_fmadd_ps(vb_load16m(x2 + 16 * i, rem, k->flip, is_signed), k->r2, k->f);
      v = _mm512_fmadd_ps(a, k->r1, inner);
    } else {
      const __m512 d2 = bcast ? k->c2 : _mm512_sub_ps(vb_load16m(x2 + 16 * i, rem, k->flip, is_signed), k->z2);
      const __m512 prod = _mm512_mul_ps(_mm512_sub_ps(a, k->z1), d2); /* exact */
      v = _mm512_add_ps(_mm512_mul_ps(prod, k->ratio), k->zc);
    }
    r[i] = _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  /* packs*: per 128-bit lane L, so dword 4L + i of b holds elements 4L..4L+3 of r[i]; the permute
   * puts group g of r[i] (elements 16i + 4g..) at dword 4i + g. */
  const __m512i w01 = _mm512_packs_epi32(r[0], r[1]), w23 = _mm512_packs_epi32(r[2], r[3]);
  const __m512i b = is_signed ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
  const __m512i o =
      _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b);
  const __m512i out = _mm512_xor_si512(o, _mm512_broadcast_i32x4(k->flip));
  if (n >= 64) {
    _mm512_storeu_si512((void *)y, out);
  } else {
    _mm512_mask_storeu_epi8(y, (__mmask64)((1ull << n) - 1ull), out);
  }
}

VB_INLINE void vb_row(size_t n, const uint8_t *x1, const uint8_t *x2, uint8_t *y, const q8rt_q8_vbinary_params *p,
                      int op, int bcast, int is_signed) {
  vb_consts k;
  k.r1 = _mm512_set1_ps(p->r1);
  k.r2 = _mm512_set1_ps(p->r2);
  k.f = _mm512_set1_ps(p->f);
  k.ratio = _mm512_set1_ps(p->ratio);
  k.zc = _mm512_set1_ps(p->zc);
  k.z1 = _mm512_set1_ps((float)p->z1);
  k.z2 = _mm512_set1_ps((float)p->z2);
  k.c2 = _mm512_setzero_ps();
  k.flip = _mm_set1_epi8((char)p->flip);
  if (bcast) {
    const uint8_t x2f = (uint8_t)(x2[0] ^ p->flip);
    const float c = is_signed ? (float)(int8_t)x2f : (float)x2f;
    const __m512 vc = _mm512_set1_ps(c);
    k.c2 = op == VB_ADD ? _mm512_fmadd_ps(vc, k.r2, k.f) : _mm512_sub_ps(vc, k.z2);
  }
  for (; n >= 64; n -= 64, x1 += 64, y += 64) {
    vb_block(64, x1, x2, y, &k, op, bcast, is_signed);
    if (!bcast) x2 += 64;
  }
  if (n != 0) vb_block(n, x1, x2, y, &k, op, bcast, is_signed);
}

#define VB_AVX512(SUF, T, SIGNED)                                                            \
  void q8rt_##SUF##_vadd_ukernel__avx512skx(size_t n, const T *x1, const T *x2, T *y,        \
                                            const q8rt_q8_vbinary_params *p) {               \
    vb_row(n, (const uint8_t *)x1, (const uint8_t *)x2, (uint8_t *)y, p, VB_ADD, 0, SIGNED); \
  }                                                                                          \
  void q8rt_##SUF##_vaddc_ukernel__avx512skx(size_t n, const T *x1, const T *x2, T *y,       \
                                             const q8rt_q8_vbinary_params *p) {              \
    vb_row(n, (const uint8_t *)x1, (const uint8_t *)x2, (uint8_t *)y, p, VB_ADD, 1, SIGNED); \
  }                                                                                          \
  void q8rt_##SUF##_vmul_ukernel__avx512skx(size_t n, const T *x1, const T *x2, T *y,        \
                                            const q8rt_q8_vbinary_params *p) {               \
    vb_row(n, (const uint8_t *)x1, (const uint8_t *)x2, (uint8_t *)y, p, VB_MUL, 0, SIGNED); \
  }                                                                                          \
  void q8rt_##SUF##_vmulc_ukernel__avx512skx(size_t n, const T *x1, const T *x2, T *y,       \
                                             const q8rt_q8_vbinary_params *p) {              \
    vb_row(n, (const uint8_t *)x1, (const uint8_t *)x2, (uint8_t *)y, p, VB_MUL, 1, SIGNED); \
  }

VB_AVX512(qu8, uint8_t, 0)
VB_AVX512(qs8, int8_t, 1)
