/* f32-vbinary, AVX2: 16 elements per step in two registers, then 8, the last n % 8 by the scalar
 * twin of the same function. The same instructions as the AVX-512 variant (vmaxps(w, x) for the
 * twin's x < w ? w : x, vminps(w, x) for w < x ? w : x: the second source on ties and NaN; prelu:
 * the product blended in where x < 0, ordered, so -0 and NaN keep x). */
#include <immintrin.h>

#include "f32-vbinary/f32-vbinary.h"

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN, OP_PRELU };

static inline __attribute__((always_inline)) __m256 op8(int op, __m256 x, __m256 w) {
  switch (op) {
    case OP_ADD: return _mm256_add_ps(x, w);
    case OP_SUB: return _mm256_sub_ps(x, w);
    case OP_MUL: return _mm256_mul_ps(x, w);
    case OP_DIV: return _mm256_div_ps(x, w);
    case OP_MAX: return _mm256_max_ps(w, x);
    case OP_MIN: return _mm256_min_ps(w, x);
    default: return _mm256_blendv_ps(x, _mm256_mul_ps(x, w), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  }
}

/* form 0: y = a op b; 1: y = a op b[0]; 2: y = b[0] op a */
static inline __attribute__((always_inline)) void vbin(int op, int form, size_t n, const float *a, const float *b,
                                                       float *y, q8rt_f32_vbinary_ukernel_fn twin) {
  const __m256 c = form == 0 ? _mm256_setzero_ps() : _mm256_set1_ps(b[0]);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a0 = _mm256_loadu_ps(a + i), a1 = _mm256_loadu_ps(a + i + 8);
    const __m256 b0 = form == 0 ? _mm256_loadu_ps(b + i) : c, b1 = form == 0 ? _mm256_loadu_ps(b + i + 8) : c;
    const __m256 y0 = form == 2 ? op8(op, b0, a0) : op8(op, a0, b0);
    const __m256 y1 = form == 2 ? op8(op, b1, a1) : op8(op, a1, b1);
    _mm256_storeu_ps(y + i, y0);
    _mm256_storeu_ps(y + i + 8, y1);
  }
  if (i + 8 <= n) {
    const __m256 a0 = _mm256_loadu_ps(a + i), b0 = form == 0 ? _mm256_loadu_ps(b + i) : c;
    _mm256_storeu_ps(y + i, form == 2 ? op8(op, b0, a0) : op8(op, a0, b0));
    i += 8;
  }
  if (i < n) twin(n - i, a + i, form == 0 ? b + i : b, y + i);
}

#define DEF_FORMS(op, id)                                                                     \
  void q8rt_f32_v##op##_ukernel__avx2(size_t n, const float *a, const float *b, float *y) {   \
    vbin(id, 0, n, a, b, y, q8rt_f32_v##op##_ukernel__scalar);                                \
  }                                                                                           \
  void q8rt_f32_v##op##c_ukernel__avx2(size_t n, const float *a, const float *b, float *y) {  \
    vbin(id, 1, n, a, b, y, q8rt_f32_v##op##c_ukernel__scalar);                               \
  }                                                                                           \
  void q8rt_f32_vr##op##c_ukernel__avx2(size_t n, const float *a, const float *b, float *y) { \
    vbin(id, 2, n, a, b, y, q8rt_f32_vr##op##c_ukernel__scalar);                              \
  }

DEF_FORMS(add, OP_ADD)
DEF_FORMS(sub, OP_SUB)
DEF_FORMS(mul, OP_MUL)
DEF_FORMS(div, OP_DIV)
DEF_FORMS(max, OP_MAX)
DEF_FORMS(min, OP_MIN)
DEF_FORMS(prelu, OP_PRELU)
