/* [outer][a][b] -> [outer][b][a] for bytes, in 32x32 tiles so both sides stay in cache lines. */
#include "q8rt-kernels.h"

#define TILE 32

void q8rt_x8_transpose_ukernel__scalar(size_t outer, size_t a, size_t b, const uint8_t *x, uint8_t *y) {
  for (size_t o = 0; o < outer; o++) {
    const uint8_t *xo = x + o * a * b;
    uint8_t *yo = y + o * a * b;
    for (size_t i0 = 0; i0 < a; i0 += TILE) {
      const size_t i1 = i0 + TILE < a ? i0 + TILE : a;
      for (size_t j0 = 0; j0 < b; j0 += TILE) {
        const size_t j1 = j0 + TILE < b ? j0 + TILE : b;
        for (size_t i = i0; i < i1; i++) {
          for (size_t j = j0; j < j1; j++) yo[j * a + i] = xo[i * b + j];
        }
      }
    }
  }
}
