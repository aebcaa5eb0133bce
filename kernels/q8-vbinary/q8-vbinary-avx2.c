/* QLinearAdd / QLinearMul rows, AVX2 + FMA3: byte-identical to q8-vbinary-scalar.c. 32 elements
 * per iteration, in four groups of 8 lanes:
 *   x -> int32 (vpmovzx/sx) -> float (exact)
 *   add: vfmadd (exactly rounded, as fmaf), the inner fma hoisted when x2 is one broadcast value
 *        (it is then the same constant for every lane);
 *   mul: (x1 - z1) * (x2 - z2) as a float product: both factors are integers of magnitude <= 255,
 *        so the product (< 2^24) is exact and equals the scalar int32 product converted; then one
 *        vmulps and one vaddps;
 *   cvt: vroundps to nearest even (explicit mode, independent of MXCSR), vcvttps2dq (NaN and
 *        out of range give INT32_MIN, like cvtps2dq), then packs to int16 and to the 8-bit type:
 *        the two saturations are exactly the clamp to the type's range.
 * A tail of n % 32 goes through a zero-padded stack copy: nothing is read or written past n. */
#include <immintrin.h>
#include <string.h>

#include "q8rt-kernels.h"

/* FMA3 per function: the build flags give -mavx2; this keeps the file independent of -mfma. */
#define VB_TARGET __attribute__((target("avx2,fma")))
#define VB_INLINE static inline __attribute__((always_inline)) VB_TARGET

enum { VB_ADD, VB_MUL };

VB_INLINE __m256 vb_load8(const uint8_t *x, __m128i flip, int is_signed) {
  const __m128i v = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)x), flip);
  return _mm256_cvtepi32_ps(is_signed ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v));
}

VB_INLINE __m256i vb_cvt(__m256 v) {
  return _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

typedef struct vb_consts {
  __m256 r1, r2, f; /* add */
  __m256 ratio, zc; /* mul */
  __m256 z1, z2;    /* mul, as floats */
  __m256 c2;        /* x2 broadcast: add: fma(x2, r2, f); mul: x2 - z2 */
  __m128i flip;     /* p->flip in every byte */
} vb_consts;

/* 32 results from x1[0..32) and x2[0..32) (or the broadcast constant). */
VB_INLINE void vb_block(const uint8_t *x1, const uint8_t *x2, uint8_t *y, const vb_consts *k, int op, int bcast,
                        int is_signed) {
  __m256i r[4];
  for (int i = 0; i < 4; i++) {
    const __m256 a = vb_load8(x1 + 8 * i, k->flip, is_signed);
    __m256 v;
    if (op == VB_ADD) {
      const __m256 inner = bcast ? k->c2 : _mm256_fmadd_ps(vb_load8(x2 + 8 * i, k->flip, is_signed), k->r2, k->f);
      v = _mm256_fmadd_ps(a, k->r1, inner);
    } else {
      const __m256 d2 = bcast ? k->c2 : _mm256_sub_ps(vb_load8(x2 + 8 * i, k->flip, is_signed), k->z2);
      const __m256 prod = _mm256_mul_ps(_mm256_sub_ps(a, k->z1), d2); /* exact */
      v = _mm256_add_ps(_mm256_mul_ps(prod, k->ratio), k->zc);
    }
    r[i] = vb_cvt(v);
  }
  /* packs*: per 128-bit lane; afterwards the dword order is 0,2,4,6,1,3,5,7 (units of 4
   * elements), which the permute undoes. */
  const __m256i w01 = _mm256_packs_epi32(r[0], r[1]), w23 = _mm256_packs_epi32(r[2], r[3]);
  const __m256i b = is_signed ? _mm256_packs_epi16(w01, w23) : _mm256_packus_epi16(w01, w23);
  const __m256i o = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256((__m256i *)(void *)y, _mm256_xor_si256(o, _mm256_broadcastsi128_si256(k->flip)));
}

VB_INLINE void vb_row(size_t n, const uint8_t *x1, const uint8_t *x2, uint8_t *y, const q8rt_q8_vbinary_params *p,
                      int op, int bcast, int is_signed) {
  vb_consts k;
  k.r1 = _mm256_set1_ps(p->r1);
  k.r2 = _mm256_set1_ps(p->r2);
  k.f = _mm256_set1_ps(p->f);
  k.ratio = _mm256_set1_ps(p->ratio);
  k.zc = _mm256_set1_ps(p->zc);
  k.z1 = _mm256_set1_ps((float)p->z1);
  k.z2 = _mm256_set1_ps((float)p->z2);
  k.c2 = _mm256_setzero_ps();
  k.flip = _mm_set1_epi8((char)p->flip);
  if (bcast) {
    const uint8_t x2f = (uint8_t)(x2[0] ^ p->flip);
    const float c = is_signed ? (float)(int8_t)x2f : (float)x2f;
    const __m256 vc = _mm256_set1_ps(c);
    k.c2 = op == VB_ADD ? _mm256_fmadd_ps(vc, k.r2, k.f) : _mm256_sub_ps(vc, k.z2);
  }
  for (; n >= 32; n -= 32, x1 += 32, y += 32) {
    vb_block(x1, x2, y, &k, op, bcast, is_signed);
    if (!bcast) x2 += 32;
  }
  if (n != 0) {
    uint8_t b1[32] = {0}, b2[32] = {0}, out[32];
    memcpy(b1, x1, n);
    if (!bcast) memcpy(b2, x2, n);
    vb_block(b1, b2, out, &k, op, bcast, is_signed);
    memcpy(y, out, n);
  }
}

#define VB_AVX2(SUF, T, SIGNED)                                                              \
  VB_TARGET void q8rt_##SUF##_vadd_ukernel__avx2(size_t n, const T *x1, const T *x2, T *y,   \
                                                 const q8rt_q8_vbinary_params *p) {          \
    vb_row(n, (const uint8_t *)x1, (const uint8_t *)x2, (uint8_t *)y, p, VB_ADD, 0, SIGNED); \
  }                                                                                          \
  VB_TARGET void q8rt_##SUF##_vaddc_ukernel__avx2(size_t n, const T *x1, const T *x2, T *y,  \
                                                  const q8rt_q8_vbinary_params *p) {         \
    vb_row(n, (const uint8_t *)x1, (const uint8_t *)x2, (uint8_t *)y, p, VB_ADD, 1, SIGNED); \
  }                                                                                          \
  VB_TARGET void q8rt_##SUF##_vmul_ukernel__avx2(size_t n, const T *x1, const T *x2, T *y,   \
                                                 const q8rt_q8_vbinary_params *p) {          \
    vb_row(n, (const uint8_t *)x1, (const uint8_t *)x2, (uint8_t *)y, p, VB_MUL, 0, SIGNED); \
  }                                                                                          \
  VB_TARGET void q8rt_##SUF##_vmulc_ukernel__avx2(size_t n, const T *x1, const T *x2, T *y,  \
                                                  const q8rt_q8_vbinary_params *p) {         \
    vb_row(n, (const uint8_t *)x1, (const uint8_t *)x2, (uint8_t *)y, p, VB_MUL, 1, SIGNED); \
  }

VB_AVX2(qu8, uint8_t, 0)
VB_AVX2(qs8, int8_t, 1)
