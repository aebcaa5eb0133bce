/* The scalar twins of x8-maxpool. */
#include "x8-maxpool/x8-maxpool.h"

#define X8_MAXPOOL_SCALAR(name, T)                                      \
  void name(size_t n, size_t k, size_t s, size_t d, const T *x, T *y) { \
    for (size_t o = 0; o < n; o++) {                                    \
      T m = y[o];                                                       \
      for (size_t t = 0; t < k; t++) {                                  \
        const T v = x[o * s + t * d];                                   \
        if (v > m) m = v;                                               \
      }                                                                 \
      y[o] = m;                                                         \
    }                                                                   \
  }

X8_MAXPOOL_SCALAR(q8rt_u8_maxpool_ukernel__scalar, uint8_t)
X8_MAXPOOL_SCALAR(q8rt_s8_maxpool_ukernel__scalar, int8_t)
