/* Few output channels (a detector's 1- and 4-channel heads): K along the lanes. The packing is
 * the family's with NR = 1 (per channel: int32 bias', its round_up(K, 4) weight bytes, float
 * scale), so a channel's weights are one contiguous run. For a group of W = 1, 2 or 4 channels
 * (3 runs as 4 with the fourth never computed or stored) and 16 / W rows, each (row, channel) pair
 * accumulates on its own ymm: vpdpbusd of 32 activation bytes by 32 weight bytes adds 8 lanes of 4
 * products each. One reduction tree then sums the 16 ymm into one zmm whose lane L is pair L's
 * dot product (row L / W, channel L % W: the output bytes of 16 / W NHWC pixels in order), and
 * one vector epilogue requantizes all 16. The blocked kernels spend a whole 8-channel (ymm) or
 * 16-channel block per row on such layers, with 1 to 4 of the lanes used.
 *
 * Exactness: every sum is a wrapping int32 sum of the same products and bias (int32 addition
 * wraps alike in any order), then the twin's float requantization: (float)acc * scale, clamped to
 * [lo, hi] in float (a NaN, max's first operand, becomes lo), rounded half to even, plus the zero
 * point, which is then within the output type. K past round_up(K, 4) is read neither from the
 * activations nor the weights (masked loads, zero lanes). */
#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#include "q8rt-kernels.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"

/* Where the tree puts accumulator i: lane perm[i] (the permutation is its own inverse). */
static const unsigned char k_lane_of[16] = {0, 2, 1, 3, 8, 10, 9, 11, 4, 6, 5, 7, 12, 14, 13, 15};

/* v[i] (8 int32 lanes each) -> lane k_lane_of[i] of the result holds the sum of v[i]'s lanes. */
static inline __attribute__((always_inline)) __m512i reduce16(const __m256i *v) {
  __m512i w[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) w[i] = _mm512_inserti64x4(_mm512_castsi256_si512(v[i]), v[i + 8], 1);
  __m512i z[4];
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    /* 128-bit lanes of z[i]: v[i], v[i + 8], v[i + 4], v[i + 12], each folded to 4 lanes */
    const __m512i x = _mm512_shuffle_i64x2(w[i], w[i + 4], _MM_SHUFFLE(2, 0, 2, 0));
    const __m512i y = _mm512_shuffle_i64x2(w[i], w[i + 4], _MM_SHUFFLE(3, 1, 3, 1));
    z[i] = _mm512_add_epi32(x, y);
  }
  __m512i r[2];
#pragma GCC unroll 2
  for (int i = 0; i < 2; i++) {
    /* per 128-bit lane: z[i]'s source folded to 2 lanes, then z[i + 2]'s */
    r[i] = _mm512_add_epi32(_mm512_unpacklo_epi64(z[i], z[i + 2]), _mm512_unpackhi_epi64(z[i], z[i + 2]));
  }
  /* per 128-bit lane: z[0]'s, z[2]'s, z[1]'s, z[3]'s source, one lane each */
  const __m512 r0 = _mm512_castsi512_ps(r[0]), r1 = _mm512_castsi512_ps(r[1]);
  const __m512i e = _mm512_castps_si512(_mm512_shuffle_ps(r0, r1, _MM_SHUFFLE(2, 0, 2, 0)));
  const __m512i o = _mm512_castps_si512(_mm512_shuffle_ps(r0, r1, _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm512_add_epi32(e, o);
}

/* One 32-byte chunk of K at byte off of every row and channel (masked: the last, partial one). */
static inline __attribute__((always_inline)) void fewn_chunk(__m256i *acc, const uint8_t *const *ar,
                                                             const int8_t *const *wr, size_t off, size_t G,
                                                             const size_t P, const size_t W, const bool use_xor,
                                                             __m256i vxor, __mmask32 kmask, const bool MASKED) {
  __m256i vw[4];
#pragma GCC unroll 4
  for (size_t j = 0; j < W; j++)
    vw[j] = MASKED ? _mm256_maskz_loadu_epi8(kmask, wr[j] + off) : _mm256_loadu_si256((const __m256i *)(wr[j] + off));
#pragma GCC unroll 16
  for (size_t q = 0; q < P; q++) {
    __m256i va =
        MASKED ? _mm256_maskz_loadu_epi8(kmask, ar[q] + off) : _mm256_loadu_si256((const __m256i *)(ar[q] + off));
    if (use_xor) va = _mm256_xor_si256(va, vxor); /* masked-off lanes meet zero weights */
#pragma GCC unroll 4
    for (size_t j = 0; j < W; j++) {
      if (W == 4 && j == 3 && G < 4) continue; /* the fourth channel of a group of 3 */
      __asm__("vpdpbusd %2, %1, %0" : "+v"(acc[k_lane_of[q * W + j]]) : "v"(va), "v"(vw[j]));
    }
  }
}

/* Rows [0, min(mr, 16 / W)) of channels [c0, c0 + G), G <= W, into c; vbias / vscale hold lane
 * L's channel's (L % W) bias' and scale. */
static inline __attribute__((always_inline)) void fewn_group(size_t mr, size_t G, size_t kc, const uint8_t *a,
                                                             size_t a_stride, const uint8_t *blk, size_t block_bytes,
                                                             uint8_t *c, size_t c_stride, size_t c0, __m512i vbias,
                                                             __m512 vscale, const q8rt_qu8_requant_params *p,
                                                             const size_t W, const bool use_xor) {
  const size_t P = 16 / W;
  const size_t kbytes = (kc + 3) / 4 * 4;
  const size_t full = kbytes / 32, tail = kbytes % 32;
  const __mmask32 tmask = (__mmask32)((1ull << tail) - 1u);
  const __m256i vxor = _mm256_set1_epi8((char)p->x_xor);
  const uint8_t *ar[16];
#pragma GCC unroll 16
  for (size_t q = 0; q < P; q++) ar[q] = a + (q < mr ? q : mr - 1) * a_stride;
  const int8_t *wr[4];
#pragma GCC unroll 4
  for (size_t j = 0; j < W; j++) wr[j] = (const int8_t *)(blk + (j < G ? j : 0) * block_bytes + sizeof(int32_t));
  __m256i acc[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) acc[i] = _mm256_setzero_si256();
  for (size_t off = 0; off < 32 * full; off += 32)
    fewn_chunk(acc, ar, wr, off, G, P, W, use_xor, vxor, 0xFFFFFFFFu, false);
  if (tail != 0) fewn_chunk(acc, ar, wr, 32 * full, G, P, W, use_xor, vxor, tmask, true);
  const __m512i sum = _mm512_add_epi32(reduce16(acc), vbias);
  __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(sum), vscale);
  v = _mm512_max_ps(v, _mm512_set1_ps(p->y_lo)); /* a NaN in v (first operand) becomes lo */
  v = _mm512_min_ps(v, _mm512_set1_ps(p->y_hi));
  const __m512i q32 = _mm512_add_epi32(_mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                                       _mm512_set1_epi32(p->y_zero_point));
  /* within the output type: truncating to 8 bits is exact for u8 and s8 */
  const __m128i b = _mm512_cvtepi32_epi8(q32);
  const size_t rows = mr < P ? mr : P;
  if (G == W && c_stride == W) {
    _mm_mask_storeu_epi8(c + c0, (__mmask16)((1u << (rows * W)) - 1u), b);
  } else {
    /* rows c_stride apart (a Concat's wider rows): W bytes a row from the vector, G of them kept */
    uint8_t tmp[16];
    _mm_storeu_si128((__m128i *)tmp, b);
#pragma GCC unroll 16
    for (size_t q = 0; q < P; q++) {
      if (q >= rows) break;
      uint8_t *dst = c + q * c_stride + c0;
      if (W == 1) {
        dst[0] = tmp[q];
      } else if (W == 2) {
        if (G == 2) {
          memcpy(dst, tmp + 2 * q, 2);
        } else {
          dst[0] = tmp[2 * q];
        }
      } else if (G == 4) {
        memcpy(dst, tmp + 4 * q, 4);
      } else if (G == 3) {
        memcpy(dst, tmp + 4 * q, 2);
        dst[2] = tmp[4 * q + 2];
      } else {
        for (size_t j = 0; j < G; j++) dst[j] = tmp[4 * q + j];
      }
    }
  }
}

static inline __attribute__((always_inline)) void fewn_body(size_t mr, size_t nc, size_t kc, const uint8_t *a,
                                                            size_t a_stride, const void *w, void *c, size_t c_stride,
                                                            const q8rt_qu8_requant_params *p, const bool use_xor) {
  const size_t block_bytes = sizeof(int32_t) + (kc + 3) / 4 * 4 + sizeof(float); /* NR = 1 */
  const uint8_t *blk = (const uint8_t *)w;
  uint8_t *cb = (uint8_t *)c;
  for (size_t c0 = 0; c0 < nc; c0 += 4, blk += 4 * block_bytes) {
    const size_t G = nc - c0 < 4 ? nc - c0 : 4;
    const size_t W = G == 1 ? 1 : G == 2 ? 2 : 4;
    /* lane L: channel L % W's bias' and scale (W divides 4: the pattern of lanes 0-3 repeats; a
     * missing fourth channel takes the first's, never stored) */
    int32_t bias[4], scale[4]; /* the scale's bits */
    for (size_t L = 0; L < 4; L++) {
      const size_t j = (L & (W - 1)) < G ? (L & (W - 1)) : 0;
      memcpy(&bias[L], blk + j * block_bytes, sizeof(int32_t));
      memcpy(&scale[L], blk + j * block_bytes + block_bytes - sizeof(float), sizeof(float));
    }
    /* built in registers (a vector load of 4 values just stored to the stack waits on store
     * forwarding: ~40 cycles a call measured) */
    __m128i b4 = _mm_cvtsi32_si128(bias[0]), s4 = _mm_cvtsi32_si128(scale[0]);
    b4 = _mm_insert_epi32(b4, bias[1], 1);
    b4 = _mm_insert_epi32(b4, bias[2], 2);
    b4 = _mm_insert_epi32(b4, bias[3], 3);
    s4 = _mm_insert_epi32(s4, scale[1], 1);
    s4 = _mm_insert_epi32(s4, scale[2], 2);
    s4 = _mm_insert_epi32(s4, scale[3], 3);
    const __m512i vbias = _mm512_broadcast_i32x4(b4);
    const __m512 vscale = _mm512_castsi512_ps(_mm512_broadcast_i32x4(s4));
    if (G == 1) {
      for (size_t m = 0; m < mr; m += 16)
        fewn_group(mr - m, 1, kc, a + m * a_stride, a_stride, blk, block_bytes, cb + m * c_stride, c_stride, c0, vbias,
                   vscale, p, 1, use_xor);
    } else if (G == 2) {
      for (size_t m = 0; m < mr; m += 8)
        fewn_group(mr - m, 2, kc, a + m * a_stride, a_stride, blk, block_bytes, cb + m * c_stride, c_stride, c0, vbias,
                   vscale, p, 2, use_xor);
    } else {
      for (size_t m = 0; m < mr; m += 4)
        fewn_group(mr - m, G, kc, a + m * a_stride, a_stride, blk, block_bytes, cb + m * c_stride, c_stride, c0, vbias,
                   vscale, p, 4, use_xor);
    }
  }
}

void q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel_16x1c4__avx512vnni(size_t mr, size_t nc, size_t kc, const uint8_t *a,
                                                               size_t a_stride, const void *w, void *c, size_t c_stride,
                                                               const q8rt_qu8_requant_params *p) {
  if (p->x_xor != 0) {
    fewn_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, true);
  } else {
    fewn_body(mr, nc, kc, a, a_stride, w, c, c_stride, p, false);
  }
}
