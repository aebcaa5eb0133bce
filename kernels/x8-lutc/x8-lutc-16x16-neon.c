/* Per-channel byte table lookup, channels innermost, AArch64 NEON: blocks of 16 rows x 16
 * channels. The block's 16 row vectors are transposed (trn1/trn2 on bytes, halfwords, words and
 * doublewords) so that each vector holds one channel's 16 rows; that channel's 256-byte table is
 * looked up in four 64-byte quarters as x8-lut's NEON kernel does (tbl on the first quarter gives
 * 0 for indices >= 64, tbx on each further quarter with the index lowered by 64, 128, 192 replaces
 * exactly the lanes whose index falls in it); the block is transposed back and stored. Every
 * output byte is tables[c * 256 + x], the scalar twin's. A block is loaded whole before any of it
 * is stored and blocks do not overlap, so in place works. Part blocks at the row and channel
 * edges go through a 16 x 16 buffer (nothing is read or written outside the rows' channels, no
 * table past the last channel is read), or, when they hold fewer than LUTC_PART_MIN bytes,
 * through the scalar twin. Counted under qemu (PP-OCR rec, qop_u8s8_pc, per inference): the 13
 * per-channel table steps execute 642 K instructions in the scalar loop, ~5 a byte. */
#include <arm_neon.h>
#include <string.h>

#include "q8rt-kernels.h"

static inline __attribute__((always_inline)) void trn16(uint8x16_t *a, uint8x16_t *b) {
  const uint16x8_t x = vreinterpretq_u16_u8(*a), y = vreinterpretq_u16_u8(*b);
  *a = vreinterpretq_u8_u16(vtrn1q_u16(x, y));
  *b = vreinterpretq_u8_u16(vtrn2q_u16(x, y));
}
static inline __attribute__((always_inline)) void trn32(uint8x16_t *a, uint8x16_t *b) {
  const uint32x4_t x = vreinterpretq_u32_u8(*a), y = vreinterpretq_u32_u8(*b);
  *a = vreinterpretq_u8_u32(vtrn1q_u32(x, y));
  *b = vreinterpretq_u8_u32(vtrn2q_u32(x, y));
}
static inline __attribute__((always_inline)) void trn64(uint8x16_t *a, uint8x16_t *b) {
  const uint64x2_t x = vreinterpretq_u64_u8(*a), y = vreinterpretq_u64_u8(*b);
  *a = vreinterpretq_u8_u64(vtrn1q_u64(x, y));
  *b = vreinterpretq_u8_u64(vtrn2q_u64(x, y));
}
static inline __attribute__((always_inline)) void trn8(uint8x16_t *a, uint8x16_t *b) {
  const uint8x16_t x = *a, y = *b;
  *a = vtrn1q_u8(x, y);
  *b = vtrn2q_u8(x, y);
}

/* v[i][j] -> v[j][i] for a 16 x 16 byte block */
static inline __attribute__((always_inline)) void transpose16(uint8x16_t v[16]) {
#pragma GCC unroll 16
  for (int i = 0; i < 16; i += 2) trn8(&v[i], &v[i + 1]);
#pragma GCC unroll 16
  for (int i = 0; i < 16; i += 4) {
    trn16(&v[i], &v[i + 2]);
    trn16(&v[i + 1], &v[i + 3]);
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; i += 8) {
#pragma GCC unroll 16
    for (int j = 0; j < 4; j++) trn32(&v[i + j], &v[i + j + 4]);
  }
#pragma GCC unroll 16
  for (int j = 0; j < 8; j++) trn64(&v[j], &v[j + 8]);
}

static inline __attribute__((always_inline)) uint8x16_t lut256(uint8x16_t x, const uint8_t *table) {
  const uint8x16_t k64 = vdupq_n_u8(64);
  uint8x16_t y = vqtbl4q_u8(vld1q_u8_x4(table), x);
  x = vsubq_u8(x, k64);
  y = vqtbx4q_u8(y, vld1q_u8_x4(table + 64), x);
  x = vsubq_u8(x, k64);
  y = vqtbx4q_u8(y, vld1q_u8_x4(table + 128), x);
  x = vsubq_u8(x, k64);
  return vqtbx4q_u8(y, vld1q_u8_x4(table + 192), x);
}

/* A part block (fewer than 16 rows or channels) costs about a whole one (~560 instructions: the
 * lookups and transposes do not shrink): below this many bytes the scalar loop (~5 a byte) is
 * cheaper. */
#define LUTC_PART_MIN 128

static void lutc_block(size_t nr, size_t nc, const uint8_t *x, size_t x_stride, uint8_t *y, size_t y_stride,
                       const uint8_t *tables) {
  uint8x16_t v[16];
  if (nr == 16 && nc == 16) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) v[i] = vld1q_u8(x + (size_t)i * x_stride);
    transpose16(v); /* v[j]: channel j, rows 0..15 */
#pragma GCC unroll 16
    for (int j = 0; j < 16; j++) v[j] = lut256(v[j], tables + (size_t)j * 256);
    transpose16(v);
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) vst1q_u8(y + (size_t)i * y_stride, v[i]);
    return;
  }
  /* a part block through a 16 x 16 buffer: rows and channels past nr, nc are zeros whose lookups
   * are skipped (no table past the last channel is read) and never stored */
  uint8_t buf[256] = {0};
  for (size_t i = 0; i < nr; i++) memcpy(buf + 16 * i, x + i * x_stride, nc);
  for (int i = 0; i < 16; i++) v[i] = vld1q_u8(buf + 16 * i);
  transpose16(v);
  for (size_t j = 0; j < nc; j++) v[j] = lut256(v[j], tables + j * 256);
  transpose16(v);
  for (int i = 0; i < 16; i++) vst1q_u8(buf + 16 * i, v[i]);
  for (size_t i = 0; i < nr; i++) memcpy(y + i * y_stride, buf + 16 * i, nc);
}

void q8rt_x8_lutc_ukernel_16x16__neon(size_t rows, size_t channels, const uint8_t *x, size_t x_stride, uint8_t *y,
                                      size_t y_stride, const uint8_t *tables) {
  for (size_t r = 0; r < rows; r += 16) {
    const size_t nr = rows - r < 16 ? rows - r : 16;
    const uint8_t *xr = x + r * x_stride;
    uint8_t *yr = y + r * y_stride;
    for (size_t c = 0; c < channels; c += 16) {
      const size_t nc = channels - c < 16 ? channels - c : 16;
      if ((nr < 16 || nc < 16) && nr * nc < LUTC_PART_MIN) {
        q8rt_x8_lutc_ukernel__scalar(nr, nc, xr + c, x_stride, yr + c, y_stride, tables + c * 256);
      } else {
        lutc_block(nr, nc, xr + c, x_stride, yr + c, y_stride, tables + c * 256);
      }
    }
  }
}
