/* [a][b] (row stride x_stride) -> [b][a] (row stride y_stride) for bytes: 16x16 blocks transposed in registers; the
 * last a % 16 rows the same way (zeros for the missing rows, each result row stored in pieces: a few channels, as an
 * NCHW <-> NHWC change of a 3- or 12-channel image, took the scalar loop before); the last b % 16 columns by the scalar
 * loop. Only SSE2 instructions are needed; the file builds with the AVX2 flags so it is only called where
 * AVX2 was detected. */
#include <immintrin.h>
#include <string.h>

#include "q8rt-kernels.h"

/* Four rounds of the same byte "perfect shuffle": out[2i] = unpacklo(in[i], in[i+8]),
 * out[2i+1] = unpackhi(in[i], in[i+8]). Writing an element's place as the 8 bits
 * (register, byte), each round rotates them left by one; four rounds swap register and byte,
 * which is the transpose. Fully unrolled: left as loops, GCC keeps r[] and t[] on the stack and
 * copies them every round (a 64 x 3136 layout change took 36 us instead of 11). */
static void block16(const uint8_t *x, size_t x_stride, uint8_t *y, size_t y_stride) {
  __m128i r[16], t[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) r[i] = _mm_loadu_si128((const __m128i *)(const void *)(x + (size_t)i * x_stride));
#pragma GCC unroll 4
  for (int round = 0; round < 4; round++) {
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
      t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
      t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) r[i] = t[i];
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) _mm_storeu_si128((__m128i *)(void *)(y + (size_t)i * y_stride), r[i]);
}

/* The first n (1..15) bytes of v to y: one store per set bit of n, the widest first. */
static inline void store_head(uint8_t *y, __m128i v, size_t n) {
  if (n & 8) {
    _mm_storel_epi64((__m128i *)(void *)y, v);
    y += 8;
    v = _mm_srli_si128(v, 8);
  }
  if (n & 4) {
    const int32_t w = _mm_cvtsi128_si32(v);
    memcpy(y, &w, 4);
    y += 4;
    v = _mm_srli_si128(v, 4);
  }
  if (n & 2) {
    const uint16_t w = (uint16_t)_mm_cvtsi128_si32(v);
    memcpy(y, &w, 2);
    y += 2;
    v = _mm_srli_si128(v, 2);
  }
  if (n & 1) *y = (uint8_t)_mm_cvtsi128_si32(v);
}

/* Rows [i0, i0 + ni) (ni < 16) of columns [0, b16) of b_end: the missing rows transposed as
 * zeros; a result row's ni bytes stored alone unless the result rows are dense (the bytes around
 * them may belong to other rows). */
static void rows_partial(size_t ni, size_t b16, size_t b_end, const uint8_t *x, size_t x_stride, uint8_t *y,
                         size_t y_stride) {
  for (size_t j = 0; j < b16; j += 16) {
    __m128i r[16], t[16];
    for (size_t i = 0; i < 16; i++) {
      r[i] = i < ni ? _mm_loadu_si128((const __m128i *)(const void *)(x + i * x_stride + j)) : _mm_setzero_si128();
    }
#pragma GCC unroll 4
    for (int round = 0; round < 4; round++) {
#pragma GCC unroll 8
      for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
        t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
      }
#pragma GCC unroll 16
      for (int i = 0; i < 16; i++) r[i] = t[i];
    }
    if (y_stride == ni) {
      /* dense rows: whole 16-byte stores in row order, each one's tail rewritten by the rows after
       * it (or by the scalar loop's last columns); the rows whose store would pass the end of the
       * result (b_end rows in all) in pieces */
      for (size_t i = 0; i < 16; i++) {
        uint8_t *d = y + (j + i) * ni;
        if ((j + i) * ni + 16 <= b_end * ni) {
          _mm_storeu_si128((__m128i *)(void *)d, r[i]);
        } else {
          store_head(d, r[i], ni);
        }
      }
    } else {
      for (size_t i = 0; i < 16; i++) store_head(y + (j + i) * y_stride, r[i], ni);
    }
  }
}

void q8rt_x8_transpose_ukernel_16x16__avx2(size_t a, size_t b, const uint8_t *x, size_t x_stride, uint8_t *y,
                                           size_t y_stride) {
  const size_t a16 = a & ~(size_t)15, b16 = b & ~(size_t)15;
  for (size_t i = 0; i < a16; i += 16) {
    for (size_t j = 0; j < b16; j += 16) block16(x + i * x_stride + j, x_stride, y + j * y_stride + i, y_stride);
    for (size_t ii = i; ii < i + 16; ii++) {
      for (size_t j = b16; j < b; j++) y[j * y_stride + ii] = x[ii * x_stride + j];
    }
  }
  if (a16 < a) rows_partial(a - a16, b16, b, x + a16 * x_stride, x_stride, y + a16, y_stride);
  for (size_t i = a16; i < a; i++) {
    for (size_t j = b16; j < b; j++) y[j * y_stride + i] = x[i * x_stride + j];
  }
}
