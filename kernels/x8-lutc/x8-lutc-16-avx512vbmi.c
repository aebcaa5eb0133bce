/* Per-channel byte table lookup, channels innermost, 16 bytes per gather: lane l of a step reads
 * the aligned dword of its channel's table holding its byte (offset c * 256 + (x & ~3), so no read
 * leaves that channel's 256 bytes), and one vpermb picks byte x & 3 of each dword into the 16
 * output bytes. The lanes' table offsets advance by 16 channels modulo the channel count, so a
 * contiguous block of rows is one run whatever the channel count (1 channel and up); rows with
 * gaps between them run one at a time. Tails: masked loads, gathers and stores (nothing read or
 * written past the row; in place works: each step reads its bytes before it writes them). */
#include <immintrin.h>

#include "q8rt-kernels.h"

/* n bytes starting at channel 0, channel of byte i: i mod channels (channels * 256 < 2^31). */
static void lutc_run(size_t n, size_t channels, const uint8_t *x, uint8_t *y, const uint8_t *tables) {
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const uint32_t period = (uint32_t)channels * 256u;
  /* offset of lane l: (l mod channels) * 256; advance: (16 mod channels) * 256, wrapped once */
  __m512i off;
  if (channels >= 16) {
    off = _mm512_slli_epi32(lanes, 8);
  } else {
    uint32_t o[16];
    for (uint32_t l = 0; l < 16; l++) o[l] = (l % (uint32_t)channels) * 256u;
    off = _mm512_loadu_si512(o);
  }
  const __m512i step = _mm512_set1_epi32((int)((16u % (uint32_t)channels) * 256u));
  const __m512i wrap = _mm512_set1_epi32((int)period);
  const __m512i hi6 = _mm512_set1_epi32(0xFC);
  const __m128i low2 = _mm_set1_epi8(3);
  const __m128i pick = _mm_setr_epi8(0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60);
  for (; n >= 16; n -= 16, x += 16, y += 16) {
    const __m128i v = _mm_loadu_si128((const __m128i *)x);
    const __m512i idx = _mm512_add_epi32(off, _mm512_and_si512(_mm512_cvtepu8_epi32(v), hi6));
    const __m512i g = _mm512_i32gather_epi32(idx, (const void *)tables, 1);
    const __m512i sel = _mm512_castsi128_si512(_mm_add_epi8(pick, _mm_and_si128(v, low2)));
    _mm_storeu_si128((__m128i *)y, _mm512_castsi512_si128(_mm512_permutexvar_epi8(sel, g)));
    const __m512i next = _mm512_add_epi32(off, step);
    off = _mm512_min_epu32(next, _mm512_sub_epi32(next, wrap)); /* next - period where next >= period */
  }
  if (n > 0) {
    const __mmask16 m = (__mmask16)_bzhi_u32(0xFFFFu, (unsigned)n);
    const __m128i v = _mm_maskz_loadu_epi8(m, x);
    const __m512i idx = _mm512_add_epi32(off, _mm512_and_si512(_mm512_cvtepu8_epi32(v), hi6));
    const __m512i g = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, idx, (const void *)tables, 1);
    const __m512i sel = _mm512_castsi128_si512(_mm_add_epi8(pick, _mm_and_si128(v, low2)));
    _mm_mask_storeu_epi8(y, m, _mm512_castsi512_si128(_mm512_permutexvar_epi8(sel, g)));
  }
}

void q8rt_x8_lutc_ukernel_16__avx512vbmi(size_t rows, size_t channels, const uint8_t *x, size_t x_stride, uint8_t *y,
                                         size_t y_stride, const uint8_t *tables) {
  if (rows == 0 || channels == 0) return;
  if (channels > (size_t)1 << 22) { /* offsets past int32: the scalar twin */
    q8rt_x8_lutc_ukernel__scalar(rows, channels, x, x_stride, y, y_stride, tables);
    return;
  }
  if (x_stride == channels && y_stride == channels) {
    lutc_run(rows * channels, channels, x, y, tables);
    return;
  }
  for (size_t r = 0; r < rows; r++) lutc_run(channels, channels, x + r * x_stride, y + r * y_stride, tables);
}
