/* The scalar twin of q8-softmax-strided: column by column, q8-softmax's definition. */
#include "q8-softmax-strided/q8-softmax-strided.h"
#include "q8rt-math.h"

void q8rt_q8_softmax_strided_ukernel__scalar(size_t d, size_t n, size_t stride, const uint8_t *x, uint8_t *y,
                                             const float table[256], const q8rt_q8_softmax_params *p) {
  const int s = p->is_signed;
  for (size_t j = 0; j < n; j++) {
    int32_t xmax = -1000;
    for (size_t k = 0; k < d; k++) {
      const uint8_t b = x[k * stride + j];
      const int32_t v = s ? (int32_t)(int8_t)b : (int32_t)b;
      if (v > xmax) xmax = v;
    }
    const int32_t adj = (s ? 127 : 255) - xmax;
    float sum = 0.0f;
    for (size_t k = 0; k < d; k++) {
      const uint8_t b = x[k * stride + j];
      sum += table[(uint8_t)(adj + (s ? (int32_t)(int8_t)b : (int32_t)b))];
    }
    for (size_t k = 0; k < d; k++) {
      const uint8_t b = x[k * stride + j];
      const float e = table[(uint8_t)(adj + (s ? (int32_t)(int8_t)b : (int32_t)b))];
      int32_t q = (int32_t)((uint32_t)q8rt_cvt_rne(e * p->y_factor / sum) + (uint32_t)p->y_zp);
      if (q > p->qmax) q = p->qmax;
      y[k * stride + j] = (uint8_t)q;
    }
  }
}
