/* Byte table lookup y[i] = table[x[i]]: the run-time form of an island of elementwise ops on an
 * 8-bit tensor (the table pass computes the table at load). Unrolled by 4 so the loads of the
 * next bytes overlap the dependent table loads. */
#include "q8rt-kernels.h"

void q8rt_x8_lut_ukernel__scalar(size_t n, const uint8_t *x, uint8_t *y, const uint8_t table[256]) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint8_t a = table[x[i]], b = table[x[i + 1]], c = table[x[i + 2]], d = table[x[i + 3]];
    y[i] = a;
    y[i + 1] = b;
    y[i + 2] = c;
    y[i + 3] = d;
  }
  for (; i < n; i++) y[i] = table[x[i]];
}

void q8rt_x8_lut_rows_ukernel__scalar(size_t rows, size_t n, const uint8_t *x, size_t x_stride, uint8_t *y,
                                      size_t y_stride, const uint8_t table[256]) {
  for (size_t r = 0; r < rows; r++) q8rt_x8_lut_ukernel__scalar(n, x + r * x_stride, y + r * y_stride, table);
}
