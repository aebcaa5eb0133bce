/* f32-vbinary, AVX-512: 32 elements per step in two registers, the tail 16 at a time under a mask
 * (nothing read or written past n). vaddps/vsubps/vmulps/vdivps are the twin's IEEE operations; the
 * twin's max(x, w) = x < w ? w : x is vmaxps(w, x) (vmaxps(s1, s2) = s1 > s2 ? s1 : s2: s2 on ties
 * and NaN) and min(x, w) = w < x ? w : x is vminps(w, x); prelu: x * w under the mask x < 0 (ordered:
 * -0 and NaN keep x). */
#include <immintrin.h>

#include "f32-vbinary/f32-vbinary.h"

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN, OP_PRELU };

static inline __attribute__((always_inline)) __m512 op16(int op, __m512 x, __m512 w) {
  switch (op) {
    case OP_ADD: return _mm512_add_ps(x, w);
    case OP_SUB: return _mm512_sub_ps(x, w);
    case OP_MUL: return _mm512_mul_ps(x, w);
    case OP_DIV: return _mm512_div_ps(x, w);
    case OP_MAX: return _mm512_max_ps(w, x);
    case OP_MIN: return _mm512_min_ps(w, x);
    default: return _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), x, w);
  }
}

/* form 0: y = a op b; 1: y = a op b[0]; 2: y = b[0] op a */
static inline __attribute__((always_inline)) void vbin(int op, int form, size_t n, const float *a, const float *b,
                                                       float *y) {
  const __m512 c = form == 0 ? _mm512_setzero_ps() : _mm512_set1_ps(b[0]);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a0 = _mm512_loadu_ps(a + i), a1 = _mm512_loadu_ps(a + i + 16);
    const __m512 b0 = form == 0 ? _mm512_loadu_ps(b + i) : c, b1 = form == 0 ? _mm512_loadu_ps(b + i + 16) : c;
    const __m512 y0 = form == 2 ? op16(op, b0, a0) : op16(op, a0, b0);
    const __m512 y1 = form == 2 ? op16(op, b1, a1) : op16(op, a1, b1);
    _mm512_storeu_ps(y + i, y0);
    _mm512_storeu_ps(y + i + 16, y1);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1u);
    const __m512 a0 = _mm512_maskz_loadu_ps(m, a + i);
    const __m512 b0 = form == 0 ? _mm512_maskz_loadu_ps(m, b + i) : c;
    _mm512_mask_storeu_ps(y + i, m, form == 2 ? op16(op, b0, a0) : op16(op, a0, b0));
  }
}

#define DEF_FORMS(op, id)                                                                          \
  void q8rt_f32_v##op##_ukernel__avx512skx(size_t n, const float *a, const float *b, float *y) {   \
    vbin(id, 0, n, a, b, y);                                                                       \
  }                                                                                                \
  void q8rt_f32_v##op##c_ukernel__avx512skx(size_t n, const float *a, const float *b, float *y) {  \
    vbin(id, 1, n, a, b, y);                                                                       \
  }                                                                                                \
  void q8rt_f32_vr##op##c_ukernel__avx512skx(size_t n, const float *a, const float *b, float *y) { \
    vbin(id, 2, n, a, b, y);                                                                       \
  }

DEF_FORMS(add, OP_ADD)
DEF_FORMS(sub, OP_SUB)
DEF_FORMS(mul, OP_MUL)
DEF_FORMS(div, OP_DIV)
DEF_FORMS(max, OP_MAX)
DEF_FORMS(min, OP_MIN)
DEF_FORMS(prelu, OP_PRELU)
