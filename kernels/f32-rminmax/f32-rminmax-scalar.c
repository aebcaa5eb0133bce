/* The scalar twin of f32-rminmax (contract in f32-rminmax.h): a NaN fails both comparisons. 16
 * independent lanes (kept in registers, and vectorizable by the compiler), then the tail, then
 * the lanes. */
#include "f32-rminmax/f32-rminmax.h"

void q8rt_f32_rminmax_ukernel__scalar(size_t n, const float *x, float *lo, float *hi) {
  float l = *lo, h = *hi;
  float l16[16], h16[16];
  for (size_t j = 0; j < 16; j++) {
    l16[j] = l;
    h16[j] = h;
  }
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (size_t j = 0; j < 16; j++) {
      const float v = x[i + j];
      l16[j] = v < l16[j] ? v : l16[j];
      h16[j] = v > h16[j] ? v : h16[j];
    }
  }
  for (; i < n; i++) {
    const float v = x[i];
    l = v < l ? v : l;
    h = v > h ? v : h;
  }
  for (size_t j = 0; j < 16; j++) {
    l = l16[j] < l ? l16[j] : l;
    h = h16[j] > h ? h16[j] : h;
  }
  *lo = l;
  *hi = h;
}
