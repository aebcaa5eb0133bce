/* Depthwise convolution, 16 channels per block, AVX2, packed layout of q8rt-kernels.h:
 * int32 bias'[16] | int16 w[taps][16] | float scale[16].
 *
 * Taps go in pairs (t, t+1). The two taps' activation bytes (16 channels each, one xmm) are
 * interleaved with punpckl/hbw and widened with vpmovzxbw, so each dword holds the int16 pair
 * (a_t[c], a_t+1[c]) with channels in natural order (lo: 0..7, hi: 8..15). The weight rows are
 * brought to the same order once per block and tap pair (vpermq 0,2,1,3 then vpunpckl/hwd; shared
 * by NP output pixels) and vpmaddwd + vpaddd accumulate in int32. Exact: a pair sum is at most
 * 2 * 255 * 32768 < 2^31; vpaddd wraps like the int32 contract.
 *
 * int8 activations (x_xor = 0x80): the raw bytes are sign-extended (a - 128 for a = x ^ 0x80) and
 * the bias gets + 128 * sum_t w[t][c], one vpmaddwd per tap pair and block shared by the pixels.
 *
 * Reads only the `channels` bytes of each input row: a partial last block copies its bytes to a
 * stack buffer first. The packed weights are read whole (the last block is padded). No alignment
 * is required. */
#include <immintrin.h>
#include <string.h>

#include "q8rt-kernels.h"

#define CB 16
#define NP 4 /* output pixels per weight interleave */

typedef struct dw_ctx {
  __m256 vlo, vhi;
  __m128i vzp; /* int16 */
  size_t taps, y_stride;
  int y_signed;
} dw_ctx;

static inline __attribute__((always_inline)) __m128i dw_load16(const uint8_t *p, size_t n, int partial) {
  if (partial) {
    uint8_t buf[16] = {0};
    memcpy(buf, p, n);
    return _mm_loadu_si128((const __m128i *)(const void *)buf);
  }
  return _mm_loadu_si128((const __m128i *)(const void *)p);
}

static inline __attribute__((always_inline)) void dw_block(const int np, const int sign, const int partial,
                                                           const uint8_t *const *in, size_t c0, size_t n,
                                                           const uint8_t *blk, uint8_t *out, const dw_ctx *ctx) {
  const size_t taps = ctx->taps;
  const int32_t *pb = (const int32_t *)(const void *)blk;
  const int16_t *pw = (const int16_t *)(const void *)(blk + CB * sizeof(int32_t));
  const float *ps = (const float *)(const void *)(blk + CB * (sizeof(int32_t) + taps * sizeof(int16_t)));
  __m256i blo = _mm256_loadu_si256((const __m256i *)(const void *)pb);
  __m256i bhi = _mm256_loadu_si256((const __m256i *)(const void *)(pb + 8));
  const __m256i c128 = _mm256_set1_epi16(128);
  __m256i lo[NP], hi[NP];
#pragma GCC unroll 4
  for (int q = 0; q < NP; q++) lo[q] = hi[q] = _mm256_setzero_si256();
  for (size_t t = 0; t < taps; t += 2) {
    const int pair = t + 1 < taps;
    const __m256i w0 = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(pw + t * CB)),
                                                _MM_SHUFFLE(3, 1, 2, 0));
    const __m256i w1 =
        pair ? _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(pw + (t + 1) * CB)),
                                        _MM_SHUFFLE(3, 1, 2, 0))
             : _mm256_setzero_si256();
    const __m256i wlo = _mm256_unpacklo_epi16(w0, w1), whi = _mm256_unpackhi_epi16(w0, w1);
    if (sign) {
      blo = _mm256_add_epi32(blo, _mm256_madd_epi16(c128, wlo));
      bhi = _mm256_add_epi32(bhi, _mm256_madd_epi16(c128, whi));
    }
#pragma GCC unroll 4
    for (int q = 0; q < NP; q++) {
      if (q >= np) break;
      /* a lone last tap pairs with itself against a zero weight row */
      const __m128i a0 = dw_load16(in[q * taps + t] + c0, n, partial);
      const __m128i a1 = dw_load16(in[q * taps + t + pair] + c0, n, partial);
      const __m128i plo = _mm_unpacklo_epi8(a0, a1), phi = _mm_unpackhi_epi8(a0, a1);
      const __m256i zlo = sign ? _mm256_cvtepi8_epi16(plo) : _mm256_cvtepu8_epi16(plo);
      const __m256i zhi = sign ? _mm256_cvtepi8_epi16(phi) : _mm256_cvtepu8_epi16(phi);
      lo[q] = _mm256_add_epi32(lo[q], _mm256_madd_epi16(zlo, wlo));
      hi[q] = _mm256_add_epi32(hi[q], _mm256_madd_epi16(zhi, whi));
    }
  }
  const __m256 slo = _mm256_loadu_ps(ps), shi = _mm256_loadu_ps(ps + 8);
#pragma GCC unroll 4
  for (int q = 0; q < NP; q++) {
    if (q >= np) break;
    /* cvtdq2ps and mulps follow MXCSR exactly as the scalar twin's (float)acc * scale does; the
     * final rounding is explicit nearest-even. vmaxps returns its second operand (lo) for NaN. */
    __m256 flo = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(lo[q], blo)), slo);
    __m256 fhi = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(hi[q], bhi)), shi);
    flo = _mm256_min_ps(_mm256_max_ps(flo, ctx->vlo), ctx->vhi);
    fhi = _mm256_min_ps(_mm256_max_ps(fhi, ctx->vlo), ctx->vhi);
    const __m256i rlo = _mm256_cvttps_epi32(_mm256_round_ps(flo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m256i rhi = _mm256_cvttps_epi32(_mm256_round_ps(fhi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    /* |values| <= 255 after the clamp: the saturating packs are exact. packssdw works per lane,
     * vpermq restores channel order. */
    const __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(rlo, rhi), _MM_SHUFFLE(3, 1, 2, 0));
    const __m128i v0 = _mm_add_epi16(_mm256_castsi256_si128(w16), ctx->vzp);
    const __m128i v1 = _mm_add_epi16(_mm256_extracti128_si256(w16, 1), ctx->vzp);
    const __m128i v = ctx->y_signed ? _mm_packs_epi16(v0, v1) : _mm_packus_epi16(v0, v1);
    uint8_t *dst = out + q * ctx->y_stride + c0;
    if (partial) {
      uint8_t buf[16];
      _mm_storeu_si128((__m128i *)(void *)buf, v);
      memcpy(dst, buf, n);
    } else {
      _mm_storeu_si128((__m128i *)(void *)dst, v);
    }
  }
}

static inline __attribute__((always_inline)) void dw_pixels(const int np, const int sign, size_t channels,
                                                            const uint8_t *const *in, const uint8_t *blk, uint8_t *out,
                                                            const dw_ctx *ctx) {
  const size_t block_bytes = CB * (sizeof(int32_t) + ctx->taps * sizeof(int16_t) + sizeof(float));
  size_t c0 = 0;
  for (; c0 + CB <= channels; c0 += CB, blk += block_bytes) dw_block(np, sign, 0, in, c0, CB, blk, out, ctx);
  if (c0 < channels) dw_block(np, sign, 1, in, c0, channels - c0, blk, out, ctx);
}

void q8rt_qu8_dwconv_minmax_fp32_ukernel_16c__avx2(size_t channels, size_t pixels, const uint8_t *const *indirection,
                                                   size_t taps, const void *w, void *y, size_t y_stride,
                                                   const q8rt_qu8_requant_params *p) {
  if (pixels == 0 || channels == 0) return;
  dw_ctx ctx;
  ctx.vlo = _mm256_set1_ps(p->y_lo);
  ctx.vhi = _mm256_set1_ps(p->y_hi);
  ctx.vzp = _mm_set1_epi16((short)p->y_zero_point);
  ctx.taps = taps;
  ctx.y_stride = y_stride;
  ctx.y_signed = p->y_signed;
  const int sign = p->x_xor != 0;
  uint8_t *out = (uint8_t *)y;
  size_t px = 0;
  for (; px + NP <= pixels; px += NP, indirection += NP * taps, out += NP * y_stride) {
    if (sign)
      dw_pixels(NP, 1, channels, indirection, (const uint8_t *)w, out, &ctx);
    else
      dw_pixels(NP, 0, channels, indirection, (const uint8_t *)w, out, &ctx);
  }
  for (; px < pixels; px++, indirection += taps, out += y_stride) {
    if (sign)
      dw_pixels(1, 1, channels, indirection, (const uint8_t *)w, out, &ctx);
    else
      dw_pixels(1, 0, channels, indirection, (const uint8_t *)w, out, &ctx);
  }
}
