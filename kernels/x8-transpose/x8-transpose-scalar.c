/* Byte transpose of an [a][b] block (row stride x_stride) into [b][a] (row stride y_stride): NCHW
 * <-> NHWC with a = C, b = H*W or back; the strides let callers split the work by column blocks.
 * Blocked in 32x32 tiles: each tile reads 32 rows of 32 source bytes and writes 32 rows of 32
 * destination bytes, so both sides stay within a few cache lines per row instead of striding
 * through the whole matrix on one side. Edge tiles are clipped; any a, b (including 0) work. */
#include "q8rt-kernels.h"

#define TILE 32

void q8rt_x8_transpose_ukernel__scalar(size_t a, size_t b, const uint8_t *x, size_t x_stride, uint8_t *y,
                                       size_t y_stride) {
  for (size_t i0 = 0; i0 < a; i0 += TILE) {
    const size_t ni = a - i0 < TILE ? a - i0 : TILE;
    for (size_t j0 = 0; j0 < b; j0 += TILE) {
      const size_t nj = b - j0 < TILE ? b - j0 : TILE;
      for (size_t j = 0; j < nj; j++) {
        const uint8_t *src = x + i0 * x_stride + j0 + j; /* column j0 + j, rows i0.. */
        uint8_t *dst = y + (j0 + j) * y_stride + i0;     /* row j0 + j of the result */
        for (size_t i = 0; i < ni; i++) dst[i] = src[i * x_stride];
      }
    }
  }
}
