/* [outer][a][b] -> [outer][b][a] for bytes: 16x16 blocks transposed in registers, edges by the
 * scalar loop. Only SSE2 instructions are
 * needed; the file builds with the AVX2 flags so it is only called where AVX2 was detected. */
#include <immintrin.h>

#include "q8rt-kernels.h"

/* Four rounds of the same byte "perfect shuffle": out[2i] = unpacklo(in[i], in[i+8]),
 * out[2i+1] = unpackhi(in[i], in[i+8]). Writing an element's place as the 8 bits
 * (register, byte), each round rotates them left by one; four rounds swap register and byte,
 * which is the transpose. */
static void block16(const uint8_t *x, size_t x_stride, uint8_t *y, size_t y_stride) {
  __m128i r[16], t[16];
  for (int i = 0; i < 16; i++) r[i] = _mm_loadu_si128((const __m128i *)(const void *)(x + (size_t)i * x_stride));
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 8; i++) {
      t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
      t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
    }
    for (int i = 0; i < 16; i++) r[i] = t[i];
  }
  for (int i = 0; i < 16; i++) _mm_storeu_si128((__m128i *)(void *)(y + (size_t)i * y_stride), r[i]);
}

void q8rt_x8_transpose_ukernel_16x16__avx2(size_t outer, size_t a, size_t b, const uint8_t *x, uint8_t *y) {
  const size_t a16 = a & ~(size_t)15, b16 = b & ~(size_t)15;
  for (size_t o = 0; o < outer; o++) {
    const uint8_t *xo = x + o * a * b;
    uint8_t *yo = y + o * a * b;
    for (size_t i = 0; i < a16; i += 16) {
      for (size_t j = 0; j < b16; j += 16) block16(xo + i * b + j, b, yo + j * a + i, a);
      for (size_t ii = i; ii < i + 16; ii++) {
        for (size_t j = b16; j < b; j++) yo[j * a + ii] = xo[ii * b + j];
      }
    }
    for (size_t i = a16; i < a; i++) {
      for (size_t j = 0; j < b; j++) yo[j * a + i] = xo[i * b + j];
    }
  }
}
