/* The scalar twin of q8-softmax: the definition, element by element. */
#include "q8-softmax/q8-softmax.h"

static inline int32_t cvt_rne(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return INT32_MIN;
  if (v >= 8388608.0f || v <= -8388608.0f) return (int32_t)v; /* already integral */
  int32_t i = (int32_t)v;                                     /* toward zero */
  const float frac = v - (float)i;                            /* exact */
  if (frac > 0.5f || (frac == 0.5f && (i & 1))) i += 1;
  if (frac < -0.5f || (frac == -0.5f && (i & 1))) i -= 1;
  return i;
}

static void sm_row(size_t d, const uint8_t *x, uint8_t *y, const float table[256], const q8rt_q8_softmax_params *p) {
  const int s = p->is_signed;
  int32_t xmax = -1000;
  for (size_t k = 0; k < d; k++) {
    const int32_t v = s ? (int32_t)(int8_t)x[k] : (int32_t)x[k];
    if (v > xmax) xmax = v;
  }
  const int32_t adj = (s ? 127 : 255) - xmax;
  float sum = 0.0f;
  for (size_t k = 0; k < d; k++) sum += table[(uint8_t)(adj + (s ? (int32_t)(int8_t)x[k] : (int32_t)x[k]))];
  for (size_t k = 0; k < d; k++) {
    const float e = table[(uint8_t)(adj + (s ? (int32_t)(int8_t)x[k] : (int32_t)x[k]))];
    int32_t q = (int32_t)((uint32_t)cvt_rne(e * p->y_factor / sum) + (uint32_t)p->y_zp);
    if (q > p->qmax) q = p->qmax;
    y[k] = (uint8_t)q;
  }
}

void q8rt_q8_softmax_ukernel__scalar(size_t rows, size_t d, const uint8_t *x, uint8_t *y, const float table[256],
                                     const q8rt_q8_softmax_params *p) {
  for (size_t r = 0; r < rows; r++) sm_row(d, x + r * d, y + r * d, table, p);
}
