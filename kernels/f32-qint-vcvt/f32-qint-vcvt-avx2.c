/* QuantizeLinear, AVX2: byte-identical to the scalar variants. 32 floats per iteration:
 *   v = x / scale           (vdivps: the same IEEE division as the scalar x[i] / scale)
 *   v = min(max(v, lo), hi) (vmaxps returns its second operand when either is NaN: NaN -> lo,
 *                            as q8rt_round_clamp does)
 *   q = round_half_even(v)  (vroundps with an explicit mode, independent of MXCSR) + zp
 * then narrowed with saturating packs (exact: every value is already inside the type's range).
 * A tail of n % 32 elements goes through a zero-padded stack copy, so nothing is read or written
 * past n. */
#include <immintrin.h>
#include <string.h>

#include "q8rt-kernels.h"

static inline __attribute__((always_inline)) __m256i f32_q8_bytes(const float *x, __m256 vscale, __m256 vlo, __m256 vhi,
                                                                  __m256i vzp, int is_signed) {
  __m256i r[4];
  for (int i = 0; i < 4; i++) {
    __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + 8 * i), vscale);
    v = _mm256_min_ps(_mm256_max_ps(v, vlo), vhi);
    v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r[i] = _mm256_add_epi32(_mm256_cvttps_epi32(v), vzp);
  }
  /* packs*: per 128-bit lane. After the two packs the dword order is 0,2,4,6,1,3,5,7 (in units of
   * 4 elements); the permute puts it back. */
  const __m256i w01 = _mm256_packs_epi32(r[0], r[1]), w23 = _mm256_packs_epi32(r[2], r[3]);
  const __m256i b = is_signed ? _mm256_packs_epi16(w01, w23) : _mm256_packus_epi16(w01, w23);
  return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

static inline __attribute__((always_inline)) void f32_q8(size_t n, const float *x, uint8_t *y,
                                                         const q8rt_f32_qint_vcvt_params *p, int is_signed) {
  const __m256 vscale = _mm256_set1_ps(p->scale), vlo = _mm256_set1_ps(p->lo), vhi = _mm256_set1_ps(p->hi);
  const __m256i vzp = _mm256_set1_epi32(p->zero_point);
  for (; n >= 32; n -= 32, x += 32, y += 32)
    _mm256_storeu_si256((__m256i *)(void *)y, f32_q8_bytes(x, vscale, vlo, vhi, vzp, is_signed));
  if (n != 0) {
    float buf[32] = {0};
    uint8_t out[32];
    memcpy(buf, x, n * sizeof(float));
    _mm256_storeu_si256((__m256i *)(void *)out, f32_q8_bytes(buf, vscale, vlo, vhi, vzp, is_signed));
    memcpy(y, out, n);
  }
}

void q8rt_f32_qu8_vcvt_ukernel__avx2(size_t n, const float *x, uint8_t *y, const q8rt_f32_qint_vcvt_params *p) {
  f32_q8(n, x, y, p, 0);
}

void q8rt_f32_qs8_vcvt_ukernel__avx2(size_t n, const float *x, int8_t *y, const q8rt_f32_qint_vcvt_params *p) {
  f32_q8(n, x, (uint8_t *)y, p, 1);
}
