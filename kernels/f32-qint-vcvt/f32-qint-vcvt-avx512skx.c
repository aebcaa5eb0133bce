/* QuantizeLinear, AVX-512 (SKX: F, BW, VL, DQ): byte-identical to the scalar variants. Per 16 lanes:
 *   v = x / scale           (vdivps: the same IEEE division as the scalar x[i] / scale, in MXCSR's
 *                            rounding mode in both)
 *   v = min(max(v, lo), hi) (vmaxps returns its second operand when either is NaN: NaN -> lo,
 *                            as q8rt_round_clamp does; after that v is a number in [lo, hi])
 *   q = cvtps(v) + zp       (vcvtps2dq with embedded round-to-nearest-even: independent of MXCSR)
 * then narrowed (exact: every value is already inside the output type's range). The body takes 64
 * elements (8-bit outputs) or 32 (16-bit) through saturating packs; the rest goes 16 at a time,
 * the last partial group through a masked load (zero-filled lanes, never an empty mask) and a
 * masked store, so nothing is read or written past n. */
#include <immintrin.h>

#include "q8rt-kernels.h"

typedef struct vq {
  __m512 scale, lo, hi;
  __m512i zp;
} vq;

static inline __attribute__((always_inline)) __m512i quant16(__m512 x, const vq *q) {
  __m512 v = _mm512_div_ps(x, q->scale);
  v = _mm512_min_ps(_mm512_max_ps(v, q->lo), q->hi);
  return _mm512_add_epi32(_mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), q->zp);
}

static inline __attribute__((always_inline)) vq vq_load(const q8rt_f32_qint_vcvt_params *p) {
  return (vq){_mm512_set1_ps(p->scale), _mm512_set1_ps(p->lo), _mm512_set1_ps(p->hi), _mm512_set1_epi32(p->zero_point)};
}

/* 8-bit outputs. packs work per 128-bit lane: after the two packs lane j holds elements
 * 4j..4j+3 of r0, r1, r2, r3 in turn (dwords 4j + 0..3 of the result); the permute restores
 * memory order. The 16-wide remainder narrows with vpmovdb (truncation; exact on in-range values). */
static inline __attribute__((always_inline)) void f32_q8(size_t n, const float *x, uint8_t *y,
                                                         const q8rt_f32_qint_vcvt_params *p, int is_signed) {
  const vq q = vq_load(p);
  const __m512i perm = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  for (; n >= 64; n -= 64, x += 64, y += 64) {
    const __m512i r0 = quant16(_mm512_loadu_ps(x), &q), r1 = quant16(_mm512_loadu_ps(x + 16), &q);
    const __m512i r2 = quant16(_mm512_loadu_ps(x + 32), &q), r3 = quant16(_mm512_loadu_ps(x + 48), &q);
    const __m512i w01 = _mm512_packs_epi32(r0, r1), w23 = _mm512_packs_epi32(r2, r3);
    const __m512i b = is_signed ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
    _mm512_storeu_si512((void *)y, _mm512_permutexvar_epi32(perm, b));
  }
  for (; n >= 16; n -= 16, x += 16, y += 16)
    _mm_storeu_si128((__m128i *)(void *)y, _mm512_cvtepi32_epi8(quant16(_mm512_loadu_ps(x), &q)));
  if (n != 0) {
    const __mmask16 m = (__mmask16)((1u << n) - 1u);
    _mm_mask_storeu_epi8(y, m, _mm512_cvtepi32_epi8(quant16(_mm512_maskz_loadu_ps(m, x), &q)));
  }
}

/* 16-bit outputs: one pack per pair of vectors (lane j: 4 of r0, then 4 of r1), the 64-bit
 * permute restores memory order; the remainder narrows with vpmovdw. */
static inline __attribute__((always_inline)) void f32_q16(size_t n, const float *x, uint16_t *y,
                                                          const q8rt_f32_qint_vcvt_params *p, int is_signed) {
  const vq q = vq_load(p);
  const __m512i perm = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
  for (; n >= 32; n -= 32, x += 32, y += 32) {
    const __m512i r0 = quant16(_mm512_loadu_ps(x), &q), r1 = quant16(_mm512_loadu_ps(x + 16), &q);
    const __m512i w = is_signed ? _mm512_packs_epi32(r0, r1) : _mm512_packus_epi32(r0, r1);
    _mm512_storeu_si512((void *)y, _mm512_permutexvar_epi64(perm, w));
  }
  if (n >= 16) {
    _mm256_storeu_si256((__m256i *)(void *)y, _mm512_cvtepi32_epi16(quant16(_mm512_loadu_ps(x), &q)));
    n -= 16, x += 16, y += 16;
  }
  if (n != 0) {
    const __mmask16 m = (__mmask16)((1u << n) - 1u);
    _mm256_mask_storeu_epi16(y, m, _mm512_cvtepi32_epi16(quant16(_mm512_maskz_loadu_ps(m, x), &q)));
  }
}

void q8rt_f32_qu8_vcvt_ukernel__avx512skx(size_t n, const float *x, uint8_t *y, const q8rt_f32_qint_vcvt_params *p) {
  f32_q8(n, x, y, p, 0);
}

void q8rt_f32_qs8_vcvt_ukernel__avx512skx(size_t n, const float *x, int8_t *y, const q8rt_f32_qint_vcvt_params *p) {
  f32_q8(n, x, (uint8_t *)y, p, 1);
}

void q8rt_f32_qu16_vcvt_ukernel__avx512skx(size_t n, const float *x, uint16_t *y, const q8rt_f32_qint_vcvt_params *p) {
  f32_q16(n, x, y, p, 0);
}

void q8rt_f32_qs16_vcvt_ukernel__avx512skx(size_t n, const float *x, int16_t *y, const q8rt_f32_qint_vcvt_params *p) {
  f32_q16(n, x, (uint16_t *)y, p, 1);
}
