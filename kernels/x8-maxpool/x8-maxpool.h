/* x8-maxpool: one row of max-pool outputs over uint8 (u8) or int8 (s8), accumulated into y:
 *   for o < n: for t < k: y[o] = max(y[o], x[o * s + t * d])
 * MaxPool calls it once per input row of the window with y first set to the type's lowest value.
 * Integer maxima: every variant gives the scalar twin's bytes. */
#ifndef Q8RT_X8_MAXPOOL_H
#define Q8RT_X8_MAXPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef void (*q8rt_u8_maxpool_ukernel_fn)(size_t n, size_t k, size_t s, size_t d, const uint8_t *x, uint8_t *y);
typedef void (*q8rt_s8_maxpool_ukernel_fn)(size_t n, size_t k, size_t s, size_t d, const int8_t *x, int8_t *y);

void q8rt_u8_maxpool_ukernel__scalar(size_t n, size_t k, size_t s, size_t d, const uint8_t *x, uint8_t *y);
void q8rt_s8_maxpool_ukernel__scalar(size_t n, size_t k, size_t s, size_t d, const int8_t *x, int8_t *y);

#define Q8RT_X8_MAXPOOL_UKERNEL(isa, u8fn, s8fn)                                   \
  void u8fn(size_t n, size_t k, size_t s, size_t d, const uint8_t *x, uint8_t *y); \
  void s8fn(size_t n, size_t k, size_t s, size_t d, const int8_t *x, int8_t *y);
#include "x8-maxpool/x8-maxpool.inc"
#undef Q8RT_X8_MAXPOOL_UKERNEL

#endif
