/* x32-transpose scalar twin: the definition. */
#include "x32-transpose/x32-transpose.h"

void q8rt_x32_transpose_ukernel__scalar(size_t a, size_t b, const uint32_t *x, size_t x_stride, uint32_t *y,
                                        size_t y_stride) {
  for (size_t i = 0; i < a; i++) {
    for (size_t j = 0; j < b; j++) y[j * y_stride + i] = x[i * x_stride + j];
  }
}
