/* The body of the qu8-qc8w-gemm AVX-512 VNNI variants, instantiated per tile by the
 * qu8-qc8w-gemm-<MR>x<NR>c4-minmax-fp32-avx512vnni.c files (compiled with the VNNI flags).
 *
 * vpdpbusd multiplies 4 u8 activation bytes by 4 s8 weight bytes per int32 lane and adds the
 * four products to the lane's accumulator with plain wrapping int32 arithmetic (the non-"s"
 * form does not saturate), so it computes exactly the contract's accumulator. The packed c4
 * layout puts one channel's 4 consecutive k in one lane: a zmm of weights is 16 channels x 4 k,
 * and the 4 activation bytes of a row are broadcast to all lanes.
 *
 * The x_xor is applied to the broadcast activations; the xor-free case is a separate
 * instantiation so uint8 models do not pay for it. */
#ifndef Q8RT_QU8_QC8W_GEMM_AVX512VNNI_IMPL_H
#define Q8RT_QU8_QC8W_GEMM_AVX512VNNI_IMPL_H

#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#include "q8rt-kernels.h"

static inline int32_t q8rt_gemm_load4(const uint8_t *p) {
  int32_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

#define Q8RT_GEMM_VNNI_MAX_MR 16
#define Q8RT_GEMM_VNNI_MAX_NV 4

/* Whether the epilogue may round and saturate instead of clamping in float: the output range is
 * the whole output type (no fused Relu/Clip bounds) and every scale of the block is finite with
 * |scale| <= 0.5, so acc * scale (|acc| <= 2^31) lies within [-2^30, 2^30], its rounding plus the
 * zero point cannot overflow int32, and the saturating narrowing to 8 bits gives
 * clamp(round(v), lo, hi) + zp = round(clamp(v, lo, hi)) + zp (lo, hi integers; rounding is
 * monotonic): the twin's bytes. A NaN scale fails the comparison and keeps the float clamps. */
static inline __attribute__((always_inline)) bool q8rt_gemm_vnni_saturating_ok(const q8rt_qu8_requant_params *p,
                                                                               const size_t NS, const __m512 *vs) {
  const float zp = (float)p->y_zero_point;
  const bool full =
      p->y_signed ? (p->y_lo == -128.0f - zp && p->y_hi == 127.0f - zp) : (p->y_lo == -zp && p->y_hi == 255.0f - zp);
  if (!full) return false;
  const __m512 half = _mm512_set1_ps(0.5f);
  __mmask16 ok = 0xFFFF;
#pragma GCC unroll 4
  for (size_t j = 0; j < NS; j++) ok &= _mm512_cmp_ps_mask(_mm512_abs_ps(vs[j]), half, _CMP_LE_OQ);
  return ok == 0xFFFF;
}

/* One block of NZ * 16 (+ 8 when HALF) output channels of MR rows: the packed block at wp (NR int32
 * bias, then NR * 4 bytes per group of 4 k, then NR float scales) and the first nc <= NZ * 16 +
 * 8 * HALF of its channels stored. HALF computes 8 channels past the NZ zmm blocks on ymm
 * registers: on Zen 4 a zmm vpdpbusd issues as two 256-bit halves, so the last partial block of a
 * layer with 24 or 48 channels costs what its channels need instead of a whole 32-wide block. The
 * products and sums per lane are those of the zmm form (the same bytes). SPLIT: the channels from
 * 32 on come from the next packed block, at wq (wq = wp otherwise).
 *
 * vpdpbusd is written as inline asm on the accumulator ("+v"): with the intrinsic, GCC 12 copied
 * every accumulator to a new register and back on each group of 4 k (two moves per vpdpbusd),
 * which cost 3-5% on layers with few k groups. */
static inline __attribute__((always_inline)) void q8rt_gemm_avx512vnni_block(
    size_t nc, size_t kc, const uint8_t *const *ar, uint8_t *const *cr, const int8_t *wp, const int8_t *wq,
    const q8rt_qu8_requant_params *p, const size_t MR, const size_t NR, const size_t NZ, const bool HALF,
    const bool SPLIT, const bool use_xor, const bool i32_out, const q8rt_gemm_segs *segs) {
  /* segs (the seg variants): K is segs->n runs of segs->len bytes at ar[m] + segs->off[s] */
  const size_t nseg = segs != NULL ? segs->n : 1;
  const size_t k4 = segs != NULL ? segs->len / 4 : (kc + 3) / 4;
  const __m512i vxor = _mm512_set1_epi8((char)p->x_xor);
  __m512i acc[Q8RT_GEMM_VNNI_MAX_MR][Q8RT_GEMM_VNNI_MAX_NV];
  __m256i acch[Q8RT_GEMM_VNNI_MAX_MR];
#define Q8RT_GEMM_VNNI_AT(j) (SPLIT && (j) >= 2 ? wq + 64 * ((j)-2) : wp + 64 * (j))
#pragma GCC unroll 4
  for (size_t j = 0; j < NZ; j++) {
    const __m512i b = _mm512_loadu_si512(Q8RT_GEMM_VNNI_AT(j));
#pragma GCC unroll 16
    for (size_t m = 0; m < MR; m++) acc[m][j] = b;
  }
  if (HALF) {
    const __m256i b = _mm256_loadu_si256((const __m256i *)Q8RT_GEMM_VNNI_AT(NZ));
#pragma GCC unroll 16
    for (size_t m = 0; m < MR; m++) acch[m] = b;
  }
  wp += NR * sizeof(int32_t);
  wq += NR * sizeof(int32_t);
  for (size_t sg = 0; sg < nseg; sg++) {
    const size_t so = segs != NULL ? segs->off[sg] : 0;
    for (size_t g = 0; g < k4; g++) {
      __m512i vw[Q8RT_GEMM_VNNI_MAX_NV];
#pragma GCC unroll 4
      for (size_t j = 0; j < NZ; j++) vw[j] = _mm512_loadu_si512(Q8RT_GEMM_VNNI_AT(j));
      __m256i vwh = _mm256_setzero_si256();
      if (HALF) vwh = _mm256_loadu_si256((const __m256i *)Q8RT_GEMM_VNNI_AT(NZ));
      wp += NR * 4;
      wq += NR * 4;
#pragma GCC unroll 16
      for (size_t m = 0; m < MR; m++) {
        __m512i va = _mm512_set1_epi32(q8rt_gemm_load4(ar[m] + so + 4 * g));
        if (use_xor) va = _mm512_xor_si512(va, vxor);
#pragma GCC unroll 4
        for (size_t j = 0; j < NZ; j++) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc[m][j]) : "v"(va), "v"(vw[j]));
        if (HALF) __asm__("vpdpbusd %2, %1, %0" : "+v"(acch[m]) : "v"(_mm512_castsi512_si256(va)), "v"(vwh));
      }
    }
  }
  /* per-store masks: all ones for full blocks, the first nc channels for the last partial one */
  const size_t NS = NZ + (HALF ? 1 : 0);
  __mmask16 mask[Q8RT_GEMM_VNNI_MAX_NV];
#pragma GCC unroll 4
  for (size_t j = 0; j < NS; j++) {
    const size_t rem = nc > 16 * j ? nc - 16 * j : 0;
    mask[j] = rem >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rem) - 1u);
  }
  if (i32_out) {
    /* the accumulators are the result (ConvInteger, MatMulInteger): no scale, no clamp */
#pragma GCC unroll 16
    for (size_t m = 0; m < MR; m++) {
#pragma GCC unroll 4
      for (size_t j = 0; j < NZ; j++) _mm512_mask_storeu_epi32(cr[m] + 64 * j, mask[j], acc[m][j]);
      if (HALF) _mm256_mask_storeu_epi32(cr[m] + 64 * NZ, (__mmask8)mask[NZ], acch[m]);
    }
    return;
  }
  __m512 vs[Q8RT_GEMM_VNNI_MAX_NV];
#pragma GCC unroll 4
  for (size_t j = 0; j < NS; j++) vs[j] = _mm512_maskz_loadu_ps(mask[j], Q8RT_GEMM_VNNI_AT(j));
#undef Q8RT_GEMM_VNNI_AT
  /* The half block's 8 channels of rows m - 1 and m share one zmm (rows in its low and high
   * halves, the scales twice), so they cost one zmm epilogue per two rows instead of one each;
   * the zmm form keeps the rounding explicit (ymm conversions have no embedded rounding). */
  __mmask16 mh = 0;
  if (HALF) {
    vs[NZ] = _mm512_insertf32x8(vs[NZ], _mm512_castps512_ps256(vs[NZ]), 1);
    mh = (__mmask16)(mask[NZ] & 0xFF);
  }
  if (q8rt_gemm_vnni_saturating_ok(p, NS, vs)) {
    /* signed saturation of q - 128 and a flip of the top bit give the u8 saturation */
    const __m512i vzp = _mm512_set1_epi32(p->y_zero_point - (p->y_signed ? 0 : 128));
    const __m128i vflip = _mm_set1_epi8(p->y_signed ? 0 : (char)0x80);
#pragma GCC unroll 16
    for (size_t m = 0; m < MR; m++) {
#pragma GCC unroll 4
      for (size_t j = 0; j < NZ; j++) {
        const __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[m][j]), vs[j]);
        const __m512i q =
            _mm512_add_epi32(_mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vzp);
        _mm_mask_storeu_epi8(cr[m] + 16 * j, mask[j], _mm_xor_si128(_mm512_cvtsepi32_epi8(q), vflip));
      }
      if (HALF && m % 2 == 1) {
        const __m512i h = _mm512_inserti64x4(_mm512_castsi256_si512(acch[m - 1]), acch[m], 1);
        const __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(h), vs[NZ]);
        const __m512i q =
            _mm512_add_epi32(_mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vzp);
        const __m128i b = _mm_xor_si128(_mm512_cvtsepi32_epi8(q), vflip);
        _mm_mask_storeu_epi8(cr[m - 1] + 16 * NZ, mh, b);
        _mm_mask_storeu_epi8(cr[m] + 16 * NZ, mh, _mm_unpackhi_epi64(b, b));
      }
    }
    return;
  }
  const __m512 vlo = _mm512_set1_ps(p->y_lo);
  const __m512 vhi = _mm512_set1_ps(p->y_hi);
  const __m512i vzp = _mm512_set1_epi32(p->y_zero_point);
#pragma GCC unroll 16
  for (size_t m = 0; m < MR; m++) {
#pragma GCC unroll 4
    for (size_t j = 0; j < NZ; j++) {
      __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[m][j]), vs[j]);
      v = _mm512_max_ps(v, vlo); /* a NaN in v (first operand) becomes lo, as in the scalar twin */
      v = _mm512_min_ps(v, vhi);
      __m512i q = _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      q = _mm512_add_epi32(q, vzp);
      /* q is within the output type's range, so truncating to 8 bits is exact for u8 and s8 */
      _mm_mask_storeu_epi8(cr[m] + 16 * j, mask[j], _mm512_cvtepi32_epi8(q));
    }
    if (HALF && m % 2 == 1) {
      const __m512i h = _mm512_inserti64x4(_mm512_castsi256_si512(acch[m - 1]), acch[m], 1);
      __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(h), vs[NZ]);
      v = _mm512_max_ps(v, vlo);
      v = _mm512_min_ps(v, vhi);
      const __m512i q =
          _mm512_add_epi32(_mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vzp);
      const __m128i b = _mm512_cvtepi32_epi8(q);
      _mm_mask_storeu_epi8(cr[m - 1] + 16 * NZ, mh, b);
      _mm_mask_storeu_epi8(cr[m] + 16 * NZ, mh, _mm_unpackhi_epi64(b, b));
    }
  }
}

/* One row of an int32-output kernel (mr == 1: an LSTM step's h * R, a one-row MatMulInteger). The
 * body would run MR aliased copies of the row; here each 32-channel block of the packed B keeps 4
 * accumulators per 16 channels over k groups g = 4i + u (u = 0..3), so consecutive vpdpbusd do not
 * wait on one chain, and adds them at the end: int32 sums wrap alike in any order, so the stored
 * bytes are the body's. Reads a as the body does (up to round_up(kc, 4) bytes). */
static __attribute__((noinline, unused)) void q8rt_gemm_avx512vnni_row1_i32(size_t nc, size_t kc, const uint8_t *a,
                                                                            const int8_t *wp, int32_t *c,
                                                                            uint8_t x_xor) {
  const size_t k4 = (kc + 3) / 4;
  const size_t wblock = 32 * (sizeof(int32_t) + 4 * k4 + sizeof(float));
  const __m512i vxor = _mm512_set1_epi8((char)x_xor);
  for (;;) {
    __m512i lo[4], hi[4];
    lo[0] = _mm512_loadu_si512(wp);
    hi[0] = _mm512_loadu_si512(wp + 64);
    for (int u = 1; u < 4; u++) lo[u] = hi[u] = _mm512_setzero_si512();
    const int8_t *w = wp + 32 * sizeof(int32_t);
    size_t g = 0;
    for (; g + 4 <= k4; g += 4, w += 4 * 128) {
#pragma GCC unroll 4
      for (int u = 0; u < 4; u++) {
        const __m512i va = _mm512_xor_si512(_mm512_set1_epi32(q8rt_gemm_load4(a + 4 * (g + (size_t)u))), vxor);
        lo[u] = _mm512_dpbusd_epi32(lo[u], va, _mm512_loadu_si512(w + 128 * u));
        hi[u] = _mm512_dpbusd_epi32(hi[u], va, _mm512_loadu_si512(w + 128 * u + 64));
      }
    }
    for (; g < k4; g++, w += 128) {
      const __m512i va = _mm512_xor_si512(_mm512_set1_epi32(q8rt_gemm_load4(a + 4 * g)), vxor);
      lo[0] = _mm512_dpbusd_epi32(lo[0], va, _mm512_loadu_si512(w));
      hi[0] = _mm512_dpbusd_epi32(hi[0], va, _mm512_loadu_si512(w + 64));
    }
    const __m512i vlo = _mm512_add_epi32(_mm512_add_epi32(lo[0], lo[1]), _mm512_add_epi32(lo[2], lo[3]));
    const __m512i vhi = _mm512_add_epi32(_mm512_add_epi32(hi[0], hi[1]), _mm512_add_epi32(hi[2], hi[3]));
    if (nc >= 32) {
      _mm512_storeu_si512(c, vlo);
      _mm512_storeu_si512(c + 16, vhi);
    } else {
      const __mmask16 mlo = nc >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nc) - 1u);
      const __mmask16 mhi = nc > 16 ? (__mmask16)((1u << (nc - 16)) - 1u) : (__mmask16)0;
      _mm512_mask_storeu_epi32(c, mlo, vlo);
      _mm512_mask_storeu_epi32(c + 16, mhi, vhi);
    }
    if (nc <= 32) break;
    nc -= 32;
    wp += wblock;
    c += 32;
  }
}

/* The kernel: blocks of NR = NV * 16 channels on the full-width body; a last block narrower than
 * NR takes the narrowest of 8 (ymm), 16 (one zmm) or 24 (zmm + ymm) channels that covers it, and
 * a last 33 to 48 channels (a whole packed block and 1 to 16 channels of the next, as in the
 * 48-channel layers of YOLOX-style detectors) run as one pass of 32 + 8 (ymm) or 32 + 16 channels
 * reading both packed blocks: the activations are broadcast once for all of them instead of once
 * per block. The narrow blocks are inlined into the body like the full-width one (they were out of
 * line, called through a table: the call, the 16 row pointers passed through memory and the
 * activations xor-ed with x_xor even where it is 0 cost 4-10% of an 8-row call of 24 or 48
 * channels at K <= 216, measured; same instructions on the same values otherwise). */
static inline __attribute__((always_inline)) void q8rt_gemm_avx512vnni_body(
    size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, size_t c_stride,
    const q8rt_qu8_requant_params *p, const size_t MR, const size_t NV /* NR / 16 */, const bool use_xor,
    const bool i32_out, const q8rt_gemm_segs *segs) {
  const size_t NR = NV * 16;
  if (i32_out && segs == NULL && NV == 2 && mr == 1) {
    q8rt_gemm_avx512vnni_row1_i32(nc, kc, a, (const int8_t *)w, (int32_t *)c, p->x_xor);
    return;
  }
  const uint8_t *ar[Q8RT_GEMM_VNNI_MAX_MR];
  uint8_t *cr[Q8RT_GEMM_VNNI_MAX_MR];
  /* rows past mr alias the last valid row: they compute and store the same bytes */
#pragma GCC unroll 16
  for (size_t m = 0; m < MR; m++) {
    const size_t mm = m < mr ? m : mr - 1;
    ar[m] = a + mm * a_stride;
    cr[m] = (uint8_t *)c + mm * c_stride;
  }
  const size_t k4 = (kc + 3) / 4;
  const size_t wblock = NR * (sizeof(int32_t) + 4 * k4 + sizeof(float)); /* q8rt_qu8_qc8w_gemm_pack */
  const size_t ostep = i32_out ? NR * sizeof(int32_t) : NR;
  const int8_t *wp = (const int8_t *)w;
  for (;;) {
    /* NV == 2: a last 1-24 channels as 8 / 16 / 24, a last 33-48 as 32 + 8 / 32 + 16 */
    if (nc < NR && (nc + 7) / 8 < 2 * NV) {
      if (nc <= 8) {
        q8rt_gemm_avx512vnni_block(nc, kc, ar, cr, wp, wp, p, MR, NR, 0, true, false, use_xor, i32_out, segs);
      } else if (nc <= 16) {
        q8rt_gemm_avx512vnni_block(nc, kc, ar, cr, wp, wp, p, MR, NR, 1, false, false, use_xor, i32_out, segs);
      } else {
        q8rt_gemm_avx512vnni_block(nc, kc, ar, cr, wp, wp, p, MR, NR, 1, true, false, use_xor, i32_out, segs);
      }
      break;
    }
    if (nc > NR && nc <= NR + 16) {
      if (nc - NR <= 8) {
        q8rt_gemm_avx512vnni_block(nc, kc, ar, cr, wp, wp + wblock, p, MR, NR, 2, true, true, use_xor, i32_out, segs);
      } else {
        q8rt_gemm_avx512vnni_block(nc, kc, ar, cr, wp, wp + wblock, p, MR, NR, 3, false, true, use_xor, i32_out, segs);
      }
      break;
    }
    q8rt_gemm_avx512vnni_block(nc, kc, ar, cr, wp, wp, p, MR, NR, NV, false, false, use_xor, i32_out, segs);
    if (nc <= NR) break;
    nc -= NR;
    wp += wblock;
#pragma GCC unroll 16
    for (size_t m = 0; m < MR; m++) cr[m] += ostep;
  }
}

/* A call of mr < MR rows runs the body of the smallest even row count >= mr (2, 4, 6): the body's
 * rows past mr alias the last row and compute its bytes again, so with MR = 8 a 29-row QGemm's
 * last 5 rows did 8 rows' vpdpbusd (CRNN's 8210 x 1024 head: 32 rows' work for 29). Each row is
 * computed alone, the same instructions on the same values: the stored bytes do not change. */
static inline __attribute__((always_inline)) void q8rt_gemm_avx512vnni_rows(
    size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, size_t c_stride,
    const q8rt_qu8_requant_params *p, const size_t MR, const size_t NV, const bool use_xor, const bool i32_out) {
  if (MR > 2 && mr <= 2) {
    q8rt_gemm_avx512vnni_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, 2, NV, use_xor, i32_out, NULL);
  } else if (MR > 4 && mr <= 4) {
    q8rt_gemm_avx512vnni_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, 4, NV, use_xor, i32_out, NULL);
  } else if (MR > 6 && mr <= 6) {
    q8rt_gemm_avx512vnni_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, 6, NV, use_xor, i32_out, NULL);
  } else {
    q8rt_gemm_avx512vnni_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, MR, NV, use_xor, i32_out, NULL);
  }
}

/* Sanitizer builds (the fuzz build, make test-san) check logic, not speed: there each row count's
 * body is a function of its own, with and without x_xor (fn_r2_1 ... fn_rM_0, the constants still
 * constants), where the optimized build inlines all eight into fn. As one function, clang -O1 with
 * ASan+UBSan took ~3 min and 3.8 GB on them (48 inlined blocks). The same instructions on the same
 * values, the same bytes, and every body is still built, run and checked there; the dispatch is
 * q8rt_gemm_avx512vnni_rows' (the optimized build's object code is unchanged). */
#if defined(__SANITIZE_ADDRESS__)
#define Q8RT_GEMM_VNNI_OUTLINE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define Q8RT_GEMM_VNNI_OUTLINE 1
#endif
#endif

#ifdef Q8RT_GEMM_VNNI_OUTLINE
#define Q8RT_GEMM_VNNI_BODY_FN_(name, R, NV, XOR, I32)                                                         \
  static __attribute__((noinline, unused)) void name(size_t mr, size_t nc, size_t kc, const uint8_t *a,        \
                                                     size_t a_stride, const void *w, void *c, size_t c_stride, \
                                                     const q8rt_qu8_requant_params *p) {                       \
    q8rt_gemm_avx512vnni_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, R, NV, XOR, I32, NULL);              \
  }
/* fn_rows_X: q8rt_gemm_avx512vnni_rows with use_xor = X on four out-of-line bodies */
#define Q8RT_GEMM_VNNI_ROWS_FN_(fn, X, MR, NV, I32)                                                            \
  Q8RT_GEMM_VNNI_BODY_FN_(fn##_r2_##X, 2, NV, X, I32)                                                          \
  Q8RT_GEMM_VNNI_BODY_FN_(fn##_r4_##X, 4, NV, X, I32)                                                          \
  Q8RT_GEMM_VNNI_BODY_FN_(fn##_r6_##X, 6, NV, X, I32)                                                          \
  Q8RT_GEMM_VNNI_BODY_FN_(fn##_rM_##X, MR, NV, X, I32)                                                         \
  static void fn##_rows_##X(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, \
                            void *c, size_t c_stride, const q8rt_qu8_requant_params *p) {                      \
    if ((MR) > 2 && mr <= 2) {                                                                                 \
      fn##_r2_##X(mr, nc, kc, a, a_stride, w, c, c_stride, p);                                                 \
    } else if ((MR) > 4 && mr <= 4) {                                                                          \
      fn##_r4_##X(mr, nc, kc, a, a_stride, w, c, c_stride, p);                                                 \
    } else if ((MR) > 6 && mr <= 6) {                                                                          \
      fn##_r6_##X(mr, nc, kc, a, a_stride, w, c, c_stride, p);                                                 \
    } else {                                                                                                   \
      fn##_rM_##X(mr, nc, kc, a, a_stride, w, c, c_stride, p);                                                 \
    }                                                                                                          \
  }
#define Q8RT_GEMM_AVX512VNNI_DEFINE_X(fn, MR, NV, I32)                                                                 \
  _Static_assert((NV) == 2 && (MR) % 2 == 0, "narrow blocks: 32-wide blocks, rows paired");                            \
  Q8RT_GEMM_VNNI_ROWS_FN_(fn, 1, MR, NV, I32)                                                                          \
  Q8RT_GEMM_VNNI_ROWS_FN_(fn, 0, MR, NV, I32)                                                                          \
  void fn(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, size_t c_stride, \
          const q8rt_qu8_requant_params *p) {                                                                          \
    if (p->x_xor != 0) {                                                                                               \
      fn##_rows_1(mr, nc, kc, a, a_stride, w, c, c_stride, p);                                                         \
    } else {                                                                                                           \
      fn##_rows_0(mr, nc, kc, a, a_stride, w, c, c_stride, p);                                                         \
    }                                                                                                                  \
  }
#else
#define Q8RT_GEMM_AVX512VNNI_DEFINE_X(fn, MR, NV, I32)                                                                 \
  _Static_assert((NV) == 2 && (MR) % 2 == 0, "narrow blocks: 32-wide blocks, rows paired");                            \
  void fn(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, size_t c_stride, \
          const q8rt_qu8_requant_params *p) {                                                                          \
    if (p->x_xor != 0) {                                                                                               \
      q8rt_gemm_avx512vnni_rows(mr, nc, kc, a, a_stride, w, c, c_stride, p, MR, NV, true, I32);                        \
    } else {                                                                                                           \
      q8rt_gemm_avx512vnni_rows(mr, nc, kc, a, a_stride, w, c, c_stride, p, MR, NV, false, I32);                       \
    }                                                                                                                  \
  }
#endif

#define Q8RT_GEMM_AVX512VNNI_DEFINE(fn, MR, NV) Q8RT_GEMM_AVX512VNNI_DEFINE_X(fn, MR, NV, false)

/* int32 output: c holds int32_t, c_stride in bytes; only p->x_xor is read */
#define Q8RT_GEMM_I32_AVX512VNNI_DEFINE(fn, MR, NV) Q8RT_GEMM_AVX512VNNI_DEFINE_X(fn, MR, NV, true)

/* Segmented rows (Q8RT_GEMM_UKERNEL_SEG in qu8-qc8w-gemm.inc): row m's K bytes are the runs
 * a + m * a_stride + segs->off[s] of segs->len bytes, s < segs->n, in order. */
#define Q8RT_GEMM_SEG_AVX512VNNI_DEFINE(fn, MR, NV)                                                                    \
  _Static_assert((NV) == 2 && (MR) % 2 == 0, "narrow blocks: 32-wide blocks, rows paired");                            \
  void fn(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, size_t c_stride, \
          const q8rt_qu8_requant_params *p, const q8rt_gemm_segs *segs) {                                              \
    if (p->x_xor != 0) {                                                                                               \
      q8rt_gemm_avx512vnni_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, MR, NV, true, false, segs);                \
    } else {                                                                                                           \
      q8rt_gemm_avx512vnni_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, MR, NV, false, false, segs);               \
    }                                                                                                                  \
  }

#endif
