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

/* ---- 64x64: transposed blocks, one channel's 64 rows per register ----
 * A block of up to 64 rows x 64 channels is transposed so that each register holds one channel's
 * 64 rows; two vpermi2b over the channel's 4 table registers (bytes 0-127 and 128-255) and a blend
 * on the byte's top bit look all 64 up at once; the block is transposed back and stored. The
 * transpose: 8x8 qword transposes (rows of 8 channels) and an 8x8 byte transpose inside each
 * register (one vpermb), through a 4 KiB buffer on the stack. Rows past the block's count are
 * zeros and never stored; channels past the count are masked out of loads and stores and their
 * tables never read. Row blocks of LUTC_BLOCK_MIN bytes and up (of their first 64 channels) take
 * this route (a part block costs about a whole one); smaller ones take the gathers. The whole
 * block is loaded before any of it is stored (in place works). */

/* A block's cost barely depends on its rows (the per-channel lookups and their transposes are
 * the same for 1 row or 64): measured on Zen 4 a 64 x 64 block takes ~740 ns, 16 rows of it ~590,
 * where the gathers take ~0.4 ns a byte (even at 24 rows x 64 channels, ahead from 32). Row
 * blocks of fewer rows x min(channels, 64) bytes than this take the gathers. */
#define LUTC_BLOCK_MIN 2048

/* 8x8 qword transpose: v[r] qword c -> v[c] qword r */
static inline void tr8x8q(__m512i v[8]) {
  __m512i b[8], c[8];
  for (int i = 0; i < 8; i += 2) {
    b[i] = _mm512_unpacklo_epi64(v[i], v[i + 1]);
    b[i + 1] = _mm512_unpackhi_epi64(v[i], v[i + 1]);
  }
  /* b[0]: (r0 r1) of qwords 0 2 4 6, b[1]: of 1 3 5 7; b[2], b[3]: rows 2 and 3; ... */
  for (int h = 0; h < 8; h += 4) {
    c[h + 0] = _mm512_shuffle_i64x2(b[h + 0], b[h + 2], 0x88); /* qwords 0, 4 of rows h..h+3 */
    c[h + 2] = _mm512_shuffle_i64x2(b[h + 0], b[h + 2], 0xDD); /* qwords 2, 6 */
    c[h + 1] = _mm512_shuffle_i64x2(b[h + 1], b[h + 3], 0x88); /* qwords 1, 5 */
    c[h + 3] = _mm512_shuffle_i64x2(b[h + 1], b[h + 3], 0xDD); /* qwords 3, 7 */
  }
  v[0] = _mm512_shuffle_i64x2(c[0], c[4], 0x88);
  v[4] = _mm512_shuffle_i64x2(c[0], c[4], 0xDD);
  v[2] = _mm512_shuffle_i64x2(c[2], c[6], 0x88);
  v[6] = _mm512_shuffle_i64x2(c[2], c[6], 0xDD);
  v[1] = _mm512_shuffle_i64x2(c[1], c[5], 0x88);
  v[5] = _mm512_shuffle_i64x2(c[1], c[5], 0xDD);
  v[3] = _mm512_shuffle_i64x2(c[3], c[7], 0x88);
  v[7] = _mm512_shuffle_i64x2(c[3], c[7], 0xDD);
}

/* rows (1..64) x w (1..64) channels starting at channel c0 (tables already offset to it) */
static void lutc_block(size_t rows, size_t w, const uint8_t *x, size_t xs, uint8_t *y, size_t ys, const uint8_t *tables,
                       __m512i *s) {
  const __mmask64 cm = w >= 64 ? ~(__mmask64)0 : _bzhi_u64(~(uint64_t)0, (unsigned)w);
  uint8_t t88[64];
  for (int p = 0; p < 64; p++) t88[p] = (uint8_t)((p % 8) * 8 + p / 8);
  const __m512i tr8 = _mm512_loadu_si512(t88); /* 8x8 byte transpose in each register */
  __m512i v[8];
  for (size_t b = 0; b < 8; b++) { /* rows 8b..8b+7 -> s[b * 8 + k]: qword j = channel 8k+j's 8 rows */
    for (size_t i = 0; i < 8; i++) {
      const size_t r = b * 8 + i;
      v[i] = r < rows ? _mm512_maskz_loadu_epi8(cm, x + r * xs) : _mm512_setzero_si512();
    }
    tr8x8q(v);
    for (size_t k = 0; k < 8; k++) s[b * 8 + k] = _mm512_permutexvar_epi8(tr8, v[k]);
  }
  for (size_t k = 0; k < 8 && k * 8 < w; k++) { /* channels 8k..8k+7: each one register of 64 rows */
    for (size_t b = 0; b < 8; b++) v[b] = s[b * 8 + k];
    tr8x8q(v);
    for (size_t j = 0; j < 8 && k * 8 + j < w; j++) {
      const uint8_t *t = tables + (k * 8 + j) * 256;
      const __m512i lo = _mm512_permutex2var_epi8(_mm512_loadu_si512(t), v[j], _mm512_loadu_si512(t + 64));
      const __m512i hi = _mm512_permutex2var_epi8(_mm512_loadu_si512(t + 128), v[j], _mm512_loadu_si512(t + 192));
      v[j] = _mm512_mask_blend_epi8(_mm512_movepi8_mask(v[j]), lo, hi);
    }
    tr8x8q(v);
    for (size_t b = 0; b < 8; b++) s[b * 8 + k] = v[b];
  }
  for (size_t b = 0; b * 8 < rows; b++) {
    for (size_t k = 0; k < 8; k++) v[k] = _mm512_permutexvar_epi8(tr8, s[b * 8 + k]);
    tr8x8q(v);
    for (size_t i = 0; i < 8 && b * 8 + i < rows; i++) _mm512_mask_storeu_epi8(y + (b * 8 + i) * ys, cm, v[i]);
  }
}

void q8rt_x8_lutc_ukernel_64x64__avx512vbmi(size_t rows, size_t channels, const uint8_t *x, size_t x_stride, uint8_t *y,
                                            size_t y_stride, const uint8_t *tables) {
  if (rows == 0 || channels == 0) return;
  if (channels > (size_t)1 << 22) { /* as the gather variant: the scalar twin */
    q8rt_x8_lutc_ukernel__scalar(rows, channels, x, x_stride, y, y_stride, tables);
    return;
  }
  __m512i s[64];
  const size_t w0 = channels < 64 ? channels : 64;
  for (size_t r = 0; r < rows; r += 64) {
    const size_t n = rows - r < 64 ? rows - r : 64;
    if (n * w0 < LUTC_BLOCK_MIN) { /* these rows on the gathers (one run when they are contiguous) */
      q8rt_x8_lutc_ukernel_16__avx512vbmi(n, channels, x + r * x_stride, x_stride, y + r * y_stride, y_stride, tables);
      continue;
    }
    for (size_t c = 0; c < channels; c += 64) {
      const size_t w = channels - c < 64 ? channels - c : 64;
      lutc_block(n, w, x + r * x_stride + c, x_stride, y + r * y_stride + c, y_stride, tables + c * 256, s);
    }
  }
}
