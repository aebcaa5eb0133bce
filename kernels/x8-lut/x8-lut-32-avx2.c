/* Byte table lookup y[i] = table[x[i]], AVX2: 2 x 32 bytes per step with vpshufb on 16-entry slices.
 *
 * Write T_j for the 16-byte slice table[16 j .. 16 j + 15] and l = x & 15, j = x >> 4. vpshufb
 * gives D[i & 15] for an index byte i with bit 7 clear and 0 otherwise. Step k (0..15) looks up D_k
 * at index i_k, where i_0 = x, i_k = i_{k-1} - 16 wrapping for k = 1..8 and signed-saturating for
 * k = 9..15 (every i_k has low nibble l until saturation, which leaves bit 7 set). Which steps
 * see bit 7 clear:
 *   x < 128 (j < 8):   k = 0..j    (x - 16k goes negative after j and stays in [-128, 0));
 *   x >= 128 (j >= 8): k = j-7..j  (x - 16k drops below 128 at k = j - 7; i_8 = x - 128 in [0, 128)
 *                                   then the saturating steps stay non-negative up to k = j).
 * y is the XOR of the looked-up bytes, so with D_0 = T_0, D_k = T_{k-1} ^ T_k (k = 1..7) and
 * D_k = D_{k-8} ^ T_{k-1} ^ T_k (k = 8..15) both sums telescope to T_j[l]:
 *   x < 128:  D_0 ^ .. ^ D_j = T_j;
 *   x >= 128: D_{j-7} ^ .. ^ D_j = T_j, by induction on j from 8 (D_1 ^ .. ^ D_7 = T_0 ^ T_7).
 * Every byte is the table's own: the same bytes as the scalar twin for every table and input.
 * Nothing is read or written outside the n bytes: after the 64- and 32-byte blocks, the last < 32
 * bytes are the row's last 32 again when the row has 32 and its input and output do not overlap,
 * else a stack copy (16-31 bytes) or the table read per byte (fewer). In place works: each block
 * is read before it is written. */
#include <immintrin.h>
#include <string.h>

#include "q8rt-kernels.h"

typedef struct lut_slices {
  __m256i d[16];
} lut_slices;

static inline __attribute__((always_inline)) void lut_slices_init(lut_slices *s, const uint8_t table[256]) {
  __m256i t[16];
  for (int k = 0; k < 16; k++) t[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(table + 16 * k)));
  s->d[0] = t[0];
  for (int k = 1; k < 8; k++) s->d[k] = _mm256_xor_si256(t[k - 1], t[k]);
  for (int k = 8; k < 16; k++) s->d[k] = _mm256_xor_si256(s->d[k - 8], _mm256_xor_si256(t[k - 1], t[k]));
}

/* one lookup step: the index lowered by 16 (wrapping or signed-saturating), its slice XORed in */
#define LUT_STEP(k, SUB)                                       \
  x0 = SUB(x0, k16);                                           \
  x1 = SUB(x1, k16);                                           \
  y0 = _mm256_xor_si256(y0, _mm256_shuffle_epi8(s->d[k], x0)); \
  y1 = _mm256_xor_si256(y1, _mm256_shuffle_epi8(s->d[k], x1));

/* two blocks of 32 bytes at once, so each slice is loaded once for both (16 slices do not fit in
 * the registers beside the blocks); written out step by step (a loop over k stays a loop at -O2) */
static inline __attribute__((always_inline)) void lut64(__m256i x0, __m256i x1, __m256i *out0, __m256i *out1,
                                                        const lut_slices *s) {
  const __m256i k16 = _mm256_set1_epi8(16);
  __m256i y0 = _mm256_shuffle_epi8(s->d[0], x0), y1 = _mm256_shuffle_epi8(s->d[0], x1);
  LUT_STEP(1, _mm256_sub_epi8)
  LUT_STEP(2, _mm256_sub_epi8)
  LUT_STEP(3, _mm256_sub_epi8)
  LUT_STEP(4, _mm256_sub_epi8)
  LUT_STEP(5, _mm256_sub_epi8)
  LUT_STEP(6, _mm256_sub_epi8)
  LUT_STEP(7, _mm256_sub_epi8)
  LUT_STEP(8, _mm256_sub_epi8)
  LUT_STEP(9, _mm256_subs_epi8)
  LUT_STEP(10, _mm256_subs_epi8)
  LUT_STEP(11, _mm256_subs_epi8)
  LUT_STEP(12, _mm256_subs_epi8)
  LUT_STEP(13, _mm256_subs_epi8)
  LUT_STEP(14, _mm256_subs_epi8)
  LUT_STEP(15, _mm256_subs_epi8)
  *out0 = y0;
  *out1 = y1;
}
#undef LUT_STEP

#define LUT_STEP1(k, SUB) \
  x0 = SUB(x0, k16);      \
  y0 = _mm256_xor_si256(y0, _mm256_shuffle_epi8(s->d[k], x0));

static inline __attribute__((always_inline)) __m256i lut32(__m256i x0, const lut_slices *s) {
  const __m256i k16 = _mm256_set1_epi8(16);
  __m256i y0 = _mm256_shuffle_epi8(s->d[0], x0);
  LUT_STEP1(1, _mm256_sub_epi8)
  LUT_STEP1(2, _mm256_sub_epi8)
  LUT_STEP1(3, _mm256_sub_epi8)
  LUT_STEP1(4, _mm256_sub_epi8)
  LUT_STEP1(5, _mm256_sub_epi8)
  LUT_STEP1(6, _mm256_sub_epi8)
  LUT_STEP1(7, _mm256_sub_epi8)
  LUT_STEP1(8, _mm256_sub_epi8)
  LUT_STEP1(9, _mm256_subs_epi8)
  LUT_STEP1(10, _mm256_subs_epi8)
  LUT_STEP1(11, _mm256_subs_epi8)
  LUT_STEP1(12, _mm256_subs_epi8)
  LUT_STEP1(13, _mm256_subs_epi8)
  LUT_STEP1(14, _mm256_subs_epi8)
  LUT_STEP1(15, _mm256_subs_epi8)
  return y0;
}
#undef LUT_STEP1

static inline __attribute__((always_inline)) __m256i load32(const uint8_t *p) {
  return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

static inline __attribute__((always_inline)) void store32(uint8_t *p, __m256i v) {
  _mm256_storeu_si256((__m256i *)(void *)p, v);
}

static inline __attribute__((always_inline)) void lut_row(size_t n, const uint8_t *x, uint8_t *y, const lut_slices *s,
                                                          const uint8_t table[256]) {
  /* the row's bytes in and out do not overlap: a short last block may then be the row's last 32
   * bytes, re-reading input bytes already looked up (unchanged) and rewriting their outputs with
   * the same values */
  const int apart = (uintptr_t)x + n <= (uintptr_t)y || (uintptr_t)y + n <= (uintptr_t)x;
  const size_t total = n;
  __m256i y0, y1;
  for (; n >= 64; n -= 64, x += 64, y += 64) {
    lut64(load32(x), load32(x + 32), &y0, &y1, s);
    store32(y, y0);
    store32(y + 32, y1);
  }
  if (n >= 32) {
    store32(y, lut32(load32(x), s));
    n -= 32, x += 32, y += 32;
  }
  if (n == 0) return;
  if (apart && total >= 32) {
    store32(y + n - 32, lut32(load32(x + n - 32), s));
  } else if (n >= 16) {
    uint8_t buf[32] = {0};
    memcpy(buf, x, n);
    store32(buf, lut32(load32(buf), s));
    memcpy(y, buf, n);
  } else {
    for (size_t i = 0; i < n; i++) y[i] = table[x[i]]; /* fewer than 16: a vector block costs more */
  }
}

void q8rt_x8_lut_ukernel_32__avx2(size_t n, const uint8_t *x, uint8_t *y, const uint8_t table[256]) {
  lut_slices s;
  lut_slices_init(&s, table);
  lut_row(n, x, y, &s, table);
}

/* The slices are built once for all the rows. */
void q8rt_x8_lut_rows_ukernel_32__avx2(size_t rows, size_t n, const uint8_t *x, size_t x_stride, uint8_t *y,
                                       size_t y_stride, const uint8_t table[256]) {
  lut_slices s;
  lut_slices_init(&s, table);
  for (size_t r = 0; r < rows; r++) lut_row(n, x + r * x_stride, y + r * y_stride, &s, table);
}
