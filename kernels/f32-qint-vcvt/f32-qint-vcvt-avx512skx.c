/* QuantizeLinear, AVX-512 (SKX: F, BW, VL, DQ): byte-identical to the scalar variants. Per 16 lanes:
 *   v = x / scale           (vdivps: the same IEEE division as the scalar x[i] / scale, in MXCSR's
 *                            rounding mode in both)
 *   v = min(max(v, lo), hi) (vmaxps returns its second operand when either is NaN: NaN -> lo,
 *                            as q8rt_round_clamp does; after that v is a number in [lo, hi])
 *   q = cvtps(v) + zp       (vcvtps2dq with embedded round-to-nearest-even: independent of MXCSR)
 * then narrowed (exact: every value is already inside the output type's range). The body takes 64
 * elements (8-bit outputs) or 32 (16-bit) through saturating packs; the rest goes 16 at a time,
 * the last partial group through a masked load (zero-filled lanes, never an empty mask) and a
 * masked store, so nothing is read or written past n.
 *
 * 8-bit body without the division (the division's throughput bounds it: 9.0 Gelem/s on this
 * EPYC, 12.6 without): v = x * r with r = 1 / scale (both in MXCSR's mode), n = roundeven(v),
 * f = v - n, and the 64 elements take n + zp (saturating packs) when every lane has
 * |f| < 1/2 - 2^-11; otherwise the block is divided as above. Why the bytes are the same: the
 * result depends on the quotient t = x / scale only through g(v) = roundeven(clamp(v, lo, hi)),
 * which is constant on every open interval (k - 1/2, k + 1/2) between half-integers, whatever lo
 * and hi are. With scale and r normal, |v - t| <= 2^-23 |t| (r within an ulp of 1 / scale, the
 * product rounded once; in the directed modes 2^-22), so for |v| < 512:
 *   - |v - t| <= 2^-13 < 2^-11: t lies inside the interval of v, at least 3 * 2^-13 from its ends;
 *   - the division's own rounding of t moves it by at most an ulp (<= 2^-14 below 512) and cannot
 *     pass a half-integer (representable: rounding is monotone), so it stays there too;
 *   - f is exact (v and n are within 1/2 of each other and of the same binade or n = 0), so the
 *     test sees the true distance to the interval's end;
 * and g(v) = g(RN(t)) = roundeven(v) clamped, which is what the saturating packs give after the
 * zero point (clamp(n, lo, hi) + zp = clamp(n + zp, qmin, qmax): the body runs only when lo = qmin - zp
 * and hi = qmax - zp, checked per call). For
 * |v| >= 512 the test may pass (f is then a multiple of 1/2 once |v| >= 2^22, so only integer v
 * pass there): t >= 511.9 in magnitude, beyond every bound of an 8-bit type after the zero point
 * (|lo|, |hi| <= 255 follow from the check above), and n saturates to the same bound. v beyond the int32
 * range converts to INT_MIN, so f is huge and the block divides; NaN fails the test; so does inf
 * (f = inf). A row where over 1 block in 8 divides (after 4) divides from there on: data full of
 * exact ties (x a multiple of scale / 2) would otherwise pay for both. The packs saturate n to int16 before the zero
 * point is added with saturation, so no int32 overflow near +-2^31. Scales outside [2^-125, 2^125] (r not normal)
 * always divide. */
#include <immintrin.h>
#include <string.h>

#include "q8rt-kernels.h"

typedef struct vq {
  __m512 scale, lo, hi;
  __m512i zp;
} vq;

/* The 8-bit body's multiply (header): 1 / scale, the test's bound, the zero point as int16. */
typedef struct vr {
  int on;
  __m512 r, near;
  __m512i zp16;
} vr;

/* The packs saturate n + zp to the output type's range [qmin, qmax], so the body is taken only when
 * the call's bounds are that range (lo = qmin - zp, hi = qmax - zp); narrower bounds (a fused clamp)
 * divide. */
static inline vr vr_load(const q8rt_f32_qint_vcvt_params *p, int32_t qmin, int32_t qmax) {
  vr m;
  memset(&m, 0, sizeof(m));
  const float s = p->scale < 0.0f ? -p->scale : p->scale;
  m.on = s >= 0x1p-125f && s <= 0x1p125f && p->zero_point >= -32768 && p->zero_point <= 32767 &&
         p->lo == (float)(qmin - p->zero_point) && p->hi == (float)(qmax - p->zero_point);
  if (m.on) {
    m.r = _mm512_set1_ps(1.0f / p->scale);
    m.near = _mm512_set1_ps(0.5f - 0x1p-11f);
    m.zp16 = _mm512_set1_epi16((int16_t)p->zero_point);
  }
  return m;
}

/* roundeven(x * r) as int32; *ok keeps the lanes whose distance to a half-integer is safe. */
static inline __attribute__((always_inline)) __m512i quant16_mul(__m512 x, const vr *m, __mmask16 *ok) {
  const __m512 v = _mm512_mul_ps(x, m->r);
  const __m512i n = _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(v, _mm512_cvtepi32_ps(n));
  *ok &= _mm512_cmp_ps_mask(_mm512_abs_ps(f), m->near, _CMP_LT_OQ);
  return n;
}

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
  vr mr = vr_load(p, is_signed ? -128 : 0, is_signed ? 127 : 255);
  const __m512i perm = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  size_t blocks = 0, divided = 0; /* rows full of ties (x a multiple of scale / 2) divide from then on */
  for (; n >= 64; n -= 64, x += 64, y += 64) {
    if (mr.on) {
      blocks++;
      __mmask16 ok = 0xFFFF;
      const __m512i n0 = quant16_mul(_mm512_loadu_ps(x), &mr, &ok), n1 = quant16_mul(_mm512_loadu_ps(x + 16), &mr, &ok);
      const __m512i n2 = quant16_mul(_mm512_loadu_ps(x + 32), &mr, &ok),
                    n3 = quant16_mul(_mm512_loadu_ps(x + 48), &mr, &ok);
      if (ok == 0xFFFF) {
        const __m512i w01 = _mm512_adds_epi16(_mm512_packs_epi32(n0, n1), mr.zp16);
        const __m512i w23 = _mm512_adds_epi16(_mm512_packs_epi32(n2, n3), mr.zp16);
        const __m512i b = is_signed ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
        _mm512_storeu_si512((void *)y, _mm512_permutexvar_epi32(perm, b));
        continue;
      }
      if (++divided >= 4 && divided * 8 > blocks) mr.on = 0;
    }
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
