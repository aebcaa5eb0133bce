/* Depthwise convolution, 32 channels per block, AVX-512BW (+VNNI vpdpwssd), packed layout of
 * q8rt-kernels.h: int32 bias'[32] | int16 w[taps][32] | float scale[32].
 *
 * Taps go in pairs (t, t+1). For 32 channels, the activations of each tap are zero-extended to
 * int16 (vpmovzxbw, one zmm) and the two taps' words are interleaved with vpunpckl/hwd, so each
 * dword holds (a_t[c], a_t+1[c]); the two weight rows are interleaved the same way, and vpdpwssd
 * adds a_t*w_t + a_t+1*w_t+1 into the int32 accumulator. Exact: each product is u8 x int16, and
 * vpdpwssd can only saturate... it cannot: the non-saturating form wraps like the contract, and
 * a pair sum is at most 2 * 255 * 32768 < 2^31 anyway.
 *
 * vpunpck works inside 128-bit lanes, so accumulator "lo" holds channels {8L+0..3 : L = 0..3} and
 * "hi" holds {8L+4..7}. bias' and scale are loaded in that order (vshufi32x4), and vpackssdw
 * (also per lane) puts the two results back in natural channel order, 32 int16.
 *
 * Two output pixels are computed together so the weight interleave is shared.
 * Reads: only the `channels` bytes of each input row (masked loads for the last block); the packed
 * weights are read whole (the last block is padded). No alignment is required. */
#include <immintrin.h>

#include "q8rt-kernels.h"

#define CB 32

/* NP output pixels (1 or 2) of one 32-channel block. */
static inline __attribute__((always_inline)) void dw_block(int np, const uint8_t *const *in0, const uint8_t *const *in1,
                                                           size_t c0, __mmask32 k, size_t taps, const uint8_t *blk,
                                                           uint8_t *out0, uint8_t *out1, __m256i vxor, __m512 vlo,
                                                           __m512 vhi, __m512i vzp) {
  const int32_t *pb = (const int32_t *)(const void *)blk;
  const int16_t *pw = (const int16_t *)(const void *)(blk + CB * sizeof(int32_t));
  const float *ps = (const float *)(const void *)(blk + CB * (sizeof(int32_t) + taps * sizeof(int16_t)));
  const __m512i b0 = _mm512_loadu_si512(pb), b1 = _mm512_loadu_si512(pb + 16);
  __m512i lo0 = _mm512_shuffle_i32x4(b0, b1, _MM_SHUFFLE(2, 0, 2, 0));
  __m512i hi0 = _mm512_shuffle_i32x4(b0, b1, _MM_SHUFFLE(3, 1, 3, 1));
  __m512i lo1 = lo0, hi1 = hi0;
  size_t t = 0;
  for (; t + 2 <= taps; t += 2) {
    const __m512i w0 = _mm512_loadu_si512(pw + t * CB), w1 = _mm512_loadu_si512(pw + (t + 1) * CB);
    const __m512i wlo = _mm512_unpacklo_epi16(w0, w1), whi = _mm512_unpackhi_epi16(w0, w1);
    {
      const __m512i a0 = _mm512_cvtepu8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(k, in0[t] + c0), vxor));
      const __m512i a1 = _mm512_cvtepu8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(k, in0[t + 1] + c0), vxor));
      lo0 = _mm512_dpwssd_epi32(lo0, _mm512_unpacklo_epi16(a0, a1), wlo);
      hi0 = _mm512_dpwssd_epi32(hi0, _mm512_unpackhi_epi16(a0, a1), whi);
    }
    if (np > 1) {
      const __m512i a0 = _mm512_cvtepu8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(k, in1[t] + c0), vxor));
      const __m512i a1 = _mm512_cvtepu8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(k, in1[t + 1] + c0), vxor));
      lo1 = _mm512_dpwssd_epi32(lo1, _mm512_unpacklo_epi16(a0, a1), wlo);
      hi1 = _mm512_dpwssd_epi32(hi1, _mm512_unpackhi_epi16(a0, a1), whi);
    }
  }
  if (t < taps) { /* odd last tap: pair it with zeros */
    const __m512i z = _mm512_setzero_si512();
    const __m512i w0 = _mm512_loadu_si512(pw + t * CB);
    const __m512i wlo = _mm512_unpacklo_epi16(w0, z), whi = _mm512_unpackhi_epi16(w0, z);
    {
      const __m512i a0 = _mm512_cvtepu8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(k, in0[t] + c0), vxor));
      lo0 = _mm512_dpwssd_epi32(lo0, _mm512_unpacklo_epi16(a0, z), wlo);
      hi0 = _mm512_dpwssd_epi32(hi0, _mm512_unpackhi_epi16(a0, z), whi);
    }
    if (np > 1) {
      const __m512i a0 = _mm512_cvtepu8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(k, in1[t] + c0), vxor));
      lo1 = _mm512_dpwssd_epi32(lo1, _mm512_unpacklo_epi16(a0, z), wlo);
      hi1 = _mm512_dpwssd_epi32(hi1, _mm512_unpackhi_epi16(a0, z), whi);
    }
  }
  const __m512 s0 = _mm512_loadu_ps(ps), s1 = _mm512_loadu_ps(ps + 16);
  const __m512 slo = _mm512_shuffle_f32x4(s0, s1, _MM_SHUFFLE(2, 0, 2, 0));
  const __m512 shi = _mm512_shuffle_f32x4(s0, s1, _MM_SHUFFLE(3, 1, 3, 1));
  for (int q = 0; q < np; q++) {
    const __m512i alo = q == 0 ? lo0 : lo1, ahi = q == 0 ? hi0 : hi1;
    /* cvtdq2ps and mulps follow MXCSR exactly as the scalar twin's (float)acc * scale does; the
     * final rounding is explicit nearest-even. vmaxps returns its second operand (lo) for NaN. */
    __m512 flo = _mm512_mul_ps(_mm512_cvtepi32_ps(alo), slo);
    __m512 fhi = _mm512_mul_ps(_mm512_cvtepi32_ps(ahi), shi);
    flo = _mm512_min_ps(_mm512_max_ps(flo, vlo), vhi);
    fhi = _mm512_min_ps(_mm512_max_ps(fhi, vlo), vhi);
    const __m512i ilo = _mm512_cvt_roundps_epi32(flo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512i ihi = _mm512_cvt_roundps_epi32(fhi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    /* Clamped to [y_lo, y_hi] (|.| <= 255): the saturating pack is exact and restores channel
     * order; after + zp every value fits the output type, so vpmovwb's truncation is exact too. */
    const __m512i v16 = _mm512_add_epi16(_mm512_packs_epi32(ilo, ihi), vzp);
    _mm256_mask_storeu_epi8(q == 0 ? out0 + c0 : out1 + c0, k, _mm512_cvtepi16_epi8(v16));
  }
}

void q8rt_qu8_dwconv_minmax_fp32_ukernel_32c__avx512vnni(size_t channels, size_t pixels,
                                                         const uint8_t *const *indirection, size_t taps,
                                                         const void *w, void *y, size_t y_stride,
                                                         const q8rt_qu8_requant_params *p) {
  const __m256i vxor = _mm256_set1_epi8((char)p->x_xor);
  const __m512 vlo = _mm512_set1_ps(p->y_lo), vhi = _mm512_set1_ps(p->y_hi);
  const __m512i vzp = _mm512_set1_epi16((short)p->y_zero_point);
  const size_t block_bytes = CB * (sizeof(int32_t) + taps * sizeof(int16_t) + sizeof(float));
  size_t px = 0;
  for (; px + 2 <= pixels; px += 2) {
    const uint8_t *const *in0 = indirection + px * taps, *const *in1 = in0 + taps;
    uint8_t *out0 = (uint8_t *)y + px * y_stride, *out1 = out0 + y_stride;
    const uint8_t *blk = (const uint8_t *)w;
    for (size_t c0 = 0; c0 < channels; c0 += CB, blk += block_bytes) {
      const size_t n = channels - c0;
      const __mmask32 k = n >= CB ? (__mmask32)0xFFFFFFFFu : (__mmask32)((1u << n) - 1u);
      dw_block(2, in0, in1, c0, k, taps, blk, out0, out1, vxor, vlo, vhi, vzp);
    }
  }
  if (px < pixels) {
    const uint8_t *const *in0 = indirection + px * taps;
    uint8_t *out0 = (uint8_t *)y + px * y_stride;
    const uint8_t *blk = (const uint8_t *)w;
    for (size_t c0 = 0; c0 < channels; c0 += CB, blk += block_bytes) {
      const size_t n = channels - c0;
      const __mmask32 k = n >= CB ? (__mmask32)0xFFFFFFFFu : (__mmask32)((1u << n) - 1u);
      dw_block(1, in0, in0, c0, k, taps, blk, out0, out0, vxor, vlo, vhi, vzp);
    }
  }
}
