/* Per-channel byte table lookup, channels innermost: y[c] = tables[c * 256 + x[c]] along each row
 * (one table per byte). The scalar twin of the x8-lutc variants. */
#include "q8rt-kernels.h"

void q8rt_x8_lutc_ukernel__scalar(size_t rows, size_t channels, const uint8_t *x, size_t x_stride, uint8_t *y,
                                  size_t y_stride, const uint8_t *tables) {
  for (size_t r = 0; r < rows; r++, x += x_stride, y += y_stride) {
    for (size_t c = 0; c < channels; c++) y[c] = tables[c * 256 + x[c]];
  }
}
