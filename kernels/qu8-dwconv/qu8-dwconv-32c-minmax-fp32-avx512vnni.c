/* Depthwise convolution, 32 channels per block, AVX-512BW + VNNI (vpdpwssd), packed layout of
 * q8rt-kernels.h: int32 bias'[32] | int16 w[taps][32] | float scale[32].
 *
 * Taps go in pairs (t, t+1). The two taps' activation bytes (32 channels each, one ymm) are
 * interleaved with vpunpckl/hbw and widened with vpmovzxbw, so each dword holds the int16 pair
 * (a_t[c], a_t+1[c]); the two weight rows are interleaved to match with vpermt2w (once per block
 * and tap pair, shared by NP output pixels), and vpdpwssd adds a_t*w_t + a_t+1*w_t+1 to the int32
 * accumulator. Exact: a pair sum is at most 2 * 255 * 32768 < 2^31, and the non-saturating
 * vpdpwssd wraps its final add like the int32 contract.
 *
 * int8 activations (x_xor = 0x80): instead of xoring every load, the raw bytes are sign-extended
 * (vpmovsxbw gives a - 128 for a = x ^ 0x80) and the accumulator starts at
 * bias' + 128 * sum_t w[t][c], computed per block with one extra vpdpwssd per tap pair that all NP
 * pixels share. Same value mod 2^32.
 *
 * vpunpck*bw works inside 128-bit lanes, so accumulator "lo" holds channels {0..7, 16..23} and "hi"
 * holds {8..15, 24..31}; bias' and scale are permuted into that order (vpermt2d/ps) and the output
 * bytes go back to natural order with vpackssdw + vpmovwb + vpermd. A last block of at most 16
 * channels runs at half width (ymm), where lo is channels 0..7 and hi 8..15.
 *
 * Full blocks use plain loads (masked byte loads measured ~25% slower on Zen 4); a partial last
 * block uses masked loads, so only the `channels` bytes of each input row are read. The packed
 * weights are read whole (the last block is padded). No alignment is required. */
#include <immintrin.h>

#include "q8rt-kernels.h"

/* Sanitizer builds (make test's fuzz and test-san) check logic, not speed: there the helpers below
 * stay out of line, one copy each, instead of ~50 inlined and unrolled specialisations that take
 * clang -O1 with ASan+UBSan minutes to compile. Same operations, same bytes. */
#if defined(__SANITIZE_ADDRESS__)
#define DW_INLINE static __attribute__((noinline))
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DW_INLINE static __attribute__((noinline))
#endif
#endif
#ifndef DW_INLINE
#define DW_INLINE static inline __attribute__((always_inline))
#endif

#define CB 32
#define NP 8 /* output pixels per weight interleave (then a group of 4, then single pixels) */

/* The epilogue constants and the per-call state. */
typedef struct dw_ctx {
  __m512 vlo, vhi;
  __m512i vzp;
  size_t taps, y_stride;
} dw_ctx;

static inline __attribute__((always_inline)) __m256i dw_load32(const uint8_t *p, __mmask32 k, int masked) {
  return masked ? _mm256_maskz_loadu_epi8(k, p) : _mm256_loadu_si256((const __m256i *)(const void *)p);
}
static inline __attribute__((always_inline)) __m128i dw_load16(const uint8_t *p, __mmask16 k, int masked) {
  return masked ? _mm_maskz_loadu_epi8(k, p) : _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* np output pixels (1 or NP) of one block of 32 channels (half: at most 16, in ymm). */
DW_INLINE void dw_block(const int np, const int sign, const int masked, const int half, const uint8_t *const *in,
                        size_t c0, __mmask32 k, const uint8_t *blk, uint8_t *out, const dw_ctx *ctx,
                        const size_t taps) {
  /* channel of dword j: lo {0..7, 16..23}, hi {8..15, 24..31} */
  const __m512i ilo = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
  const __m512i ihi = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  /* word 2j: w_t[ch(j)], word 2j+1: w_t+1[ch(j)] (the second table, + 32) */
  const __m512i wilo = _mm512_set_epi16(55, 23, 54, 22, 53, 21, 52, 20, 51, 19, 50, 18, 49, 17, 48, 16, 39, 7, 38, 6,
                                        37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  const __m512i wihi = _mm512_set_epi16(63, 31, 62, 30, 61, 29, 60, 28, 59, 27, 58, 26, 57, 25, 56, 24, 47, 15, 46, 14,
                                        45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8);
  const int32_t *pb = (const int32_t *)(const void *)blk;
  const int16_t *pw = (const int16_t *)(const void *)(blk + CB * sizeof(int32_t));
  const float *ps = (const float *)(const void *)(blk + CB * (sizeof(int32_t) + taps * sizeof(int16_t)));
  const __m512i b0 = _mm512_loadu_si512(pb), b1 = _mm512_loadu_si512(pb + 16);
  __m512i blo = _mm512_permutex2var_epi32(b0, ilo, b1), bhi = _mm512_permutex2var_epi32(b0, ihi, b1);
  const __m512i c128 = _mm512_set1_epi16(128);
  __m512i lo[NP], hi[NP];
#pragma GCC unroll 8
  for (int q = 0; q < NP; q++) { /* int8 activations: bias' is still collecting 128 * sum w */
    lo[q] = sign ? _mm512_setzero_si512() : blo;
    hi[q] = sign ? _mm512_setzero_si512() : bhi;
  }
  for (size_t t = 0; t < taps; t += 2) {
    const int pair = t + 1 < taps;
    const __m512i w0 = _mm512_loadu_si512(pw + t * CB);
    const __m512i w1 = pair ? _mm512_loadu_si512(pw + (t + 1) * CB) : _mm512_setzero_si512();
    const __m512i wlo = _mm512_permutex2var_epi16(w0, wilo, w1), whi = _mm512_permutex2var_epi16(w0, wihi, w1);
    if (sign) {
      blo = _mm512_dpwssd_epi32(blo, c128, wlo);
      bhi = _mm512_dpwssd_epi32(bhi, c128, whi);
    }
#pragma GCC unroll 8
    for (int q = 0; q < NP; q++) {
      if (q >= np) break;
      /* a lone last tap pairs with itself against a zero weight row */
      const uint8_t *p0 = in[q * taps + t] + c0, *p1 = in[q * taps + t + pair] + c0;
      if (half) {
        const __m128i a0 = dw_load16(p0, (__mmask16)k, masked), a1 = dw_load16(p1, (__mmask16)k, masked);
        const __m128i plo = _mm_unpacklo_epi8(a0, a1), phi = _mm_unpackhi_epi8(a0, a1);
        const __m256i zlo = sign ? _mm256_cvtepi8_epi16(plo) : _mm256_cvtepu8_epi16(plo);
        const __m256i zhi = sign ? _mm256_cvtepi8_epi16(phi) : _mm256_cvtepu8_epi16(phi);
        lo[q] = _mm512_castsi256_si512(
            _mm256_dpwssd_epi32(_mm512_castsi512_si256(lo[q]), zlo, _mm512_castsi512_si256(wlo)));
        hi[q] = _mm512_castsi256_si512(
            _mm256_dpwssd_epi32(_mm512_castsi512_si256(hi[q]), zhi, _mm512_castsi512_si256(whi)));
      } else {
        const __m256i a0 = dw_load32(p0, k, masked), a1 = dw_load32(p1, k, masked);
        const __m256i plo = _mm256_unpacklo_epi8(a0, a1), phi = _mm256_unpackhi_epi8(a0, a1);
        const __m512i zlo = sign ? _mm512_cvtepi8_epi16(plo) : _mm512_cvtepu8_epi16(plo);
        const __m512i zhi = sign ? _mm512_cvtepi8_epi16(phi) : _mm512_cvtepu8_epi16(phi);
        lo[q] = _mm512_dpwssd_epi32(lo[q], zlo, wlo);
        hi[q] = _mm512_dpwssd_epi32(hi[q], zhi, whi);
      }
    }
  }
  const __m512 s0 = _mm512_loadu_ps(ps), s1 = _mm512_loadu_ps(ps + 16);
  const __m512 slo = _mm512_permutex2var_ps(s0, ilo, s1), shi = _mm512_permutex2var_ps(s0, ihi, s1);
#pragma GCC unroll 8
  for (int q = 0; q < NP; q++) {
    if (q >= np) break;
    /* cvtdq2ps and mulps follow MXCSR exactly as the scalar twin's (float)acc * scale does; the
     * final rounding is explicit nearest-even. vmaxps returns its second operand (lo) for NaN. */
    const __m512i alo = sign ? _mm512_add_epi32(lo[q], blo) : lo[q];
    const __m512i ahi = sign ? _mm512_add_epi32(hi[q], bhi) : hi[q];
    __m512 flo = _mm512_mul_ps(_mm512_cvtepi32_ps(alo), slo);
    __m512 fhi = _mm512_mul_ps(_mm512_cvtepi32_ps(ahi), shi);
    flo = _mm512_min_ps(_mm512_max_ps(flo, ctx->vlo), ctx->vhi);
    fhi = _mm512_min_ps(_mm512_max_ps(fhi, ctx->vlo), ctx->vhi);
    const __m512i rlo = _mm512_cvt_roundps_epi32(flo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512i rhi = _mm512_cvt_roundps_epi32(fhi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    /* |values| <= 255 after the clamp, so vpackssdw is exact; per 128-bit lane it gives the words
     * of channels {0-3, 8-11}, {4-7, 12-15}, {16-19, 24-27}, {20-23, 28-31} (half: the first two).
     * After + zp every value fits the output type, so vpmovwb's truncation is exact for u8 and s8;
     * vpermd puts the 4-byte groups back in order. */
    const __m512i w16 = _mm512_add_epi16(_mm512_packs_epi32(rlo, rhi), ctx->vzp);
    const __m256i v = _mm256_permutevar8x32_epi32(_mm512_cvtepi16_epi8(w16), _mm256_setr_epi32(0, 2, 1, 3, 4, 6, 5, 7));
    uint8_t *dst = out + q * ctx->y_stride + c0;
    if (half) {
      const __m128i h = _mm256_castsi256_si128(v);
      if (masked)
        _mm_mask_storeu_epi8(dst, (__mmask16)k, h);
      else
        _mm_storeu_si128((__m128i *)(void *)dst, h);
    } else {
      if (masked)
        _mm256_mask_storeu_epi8(dst, k, v);
      else
        _mm256_storeu_si256((__m256i *)(void *)dst, v);
    }
  }
}

/* All channel blocks of np output pixels. */
DW_INLINE void dw_pixels_taps(const int np, const int sign, size_t channels, const uint8_t *const *in,
                              const uint8_t *blk, uint8_t *out, const dw_ctx *ctx, const size_t taps) {
  const size_t block_bytes = CB * (sizeof(int32_t) + taps * sizeof(int16_t) + sizeof(float));
  size_t c0 = 0;
  for (; c0 + CB <= channels; c0 += CB, blk += block_bytes)
    dw_block(np, sign, 0, 0, in, c0, (__mmask32)-1, blk, out, ctx, taps);
  const size_t n = channels - c0;
  if (n == 16) {
    dw_block(np, sign, 0, 1, in, c0, (__mmask32)0xFFFF, blk, out, ctx, taps);
  } else if (n != 0) {
    const __mmask32 k = (__mmask32)((1u << n) - 1u);
    if (n < 16)
      dw_block(np, sign, 1, 1, in, c0, k, blk, out, ctx, taps);
    else
      dw_block(np, sign, 1, 0, in, c0, k, blk, out, ctx, taps);
  }
}

/* 3x3 (9 taps) gets its own copy with the tap count a constant: the tap loop unrolls fully, the
 * lone ninth tap loses its pair bookkeeping and the weight/scale offsets fold (measured ~6% faster
 * on Zen 4 for 3x3; other tap counts run the generic loop). */
DW_INLINE void dw_pixels(const int np, const int sign, size_t channels, const uint8_t *const *in, const uint8_t *blk,
                         uint8_t *out, const dw_ctx *ctx) {
  if (ctx->taps == 9)
    dw_pixels_taps(np, sign, channels, in, blk, out, ctx, 9);
  else
    dw_pixels_taps(np, sign, channels, in, blk, out, ctx, ctx->taps);
}

void q8rt_qu8_dwconv_minmax_fp32_ukernel_32c__avx512vnni(size_t channels, size_t pixels,
                                                         const uint8_t *const *indirection, size_t taps, const void *w,
                                                         void *y, size_t y_stride, const q8rt_qu8_requant_params *p) {
  if (pixels == 0 || channels == 0) return;
  dw_ctx ctx;
  ctx.vlo = _mm512_set1_ps(p->y_lo);
  ctx.vhi = _mm512_set1_ps(p->y_hi);
  ctx.vzp = _mm512_set1_epi16((short)p->y_zero_point);
  ctx.taps = taps;
  ctx.y_stride = y_stride;
  const int sign = p->x_xor != 0;
  uint8_t *out = (uint8_t *)y;
  size_t px = 0;
  for (; px + NP <= pixels; px += NP, indirection += NP * taps, out += NP * y_stride) {
    if (sign)
      dw_pixels(NP, 1, channels, indirection, (const uint8_t *)w, out, &ctx);
    else
      dw_pixels(NP, 0, channels, indirection, (const uint8_t *)w, out, &ctx);
  }
  if (pixels - px >= 4) {
    if (sign)
      dw_pixels(4, 1, channels, indirection, (const uint8_t *)w, out, &ctx);
    else
      dw_pixels(4, 0, channels, indirection, (const uint8_t *)w, out, &ctx);
    px += 4, indirection += 4 * taps, out += 4 * y_stride;
  }
  for (; px < pixels; px++, indirection += taps, out += y_stride) {
    if (sign)
      dw_pixels(1, 1, channels, indirection, (const uint8_t *)w, out, &ctx);
    else
      dw_pixels(1, 0, channels, indirection, (const uint8_t *)w, out, &ctx);
  }
}
