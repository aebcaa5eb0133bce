/* f32-f16-vcvt: float32 narrowed to IEEE float16 bit patterns, round to nearest even (IEEE
 * conversion in the default mode). The element function below is the definition (the scalar twin
 * loops over it; q8rt_f32_to_f16 uses it too): from 65520 on (and inf) +-inf, below 2^-14
 * subnormals rounded half to even (down to +-0, the sign kept), NaN quieted with its sign and the
 * top 10 bits of its payload (sign | 0x7e00 | payload >> 13: what vcvtps2ph and fcvtn give, and
 * ONNX Runtime's Cast; NumPy 1.x keeps a signalling NaN signalling instead). */
#ifndef Q8RT_F32_F16_VCVT_H
#define Q8RT_F32_F16_VCVT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t q8rt_f32_f16_element(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((x >> 13) & 0x3ffu)); /* NaN: quiet, payload's top */
  if (x >= 0x47800000u) return (uint16_t)(sign | 0x7c00u);                       /* >= 65536 (and inf): inf */
  if (x < 0x38800000u) {
    /* below 2^-14: a subnormal or zero, value = m * 2^-24 with m = round_half_even(|f| * 2^24);
     * |f| * 2^24 < 2^10 is exact in float and rounding it to an integer is one add of 2^23 */
    float a;
    memcpy(&a, &x, 4);
    const float r = (a * 0x1p24f + 0x1p23f) - 0x1p23f;
    return (uint16_t)(sign | (uint16_t)r); /* r <= 1024: 1024 is 2^-14, the smallest normal's bits */
  }
  /* normal: drop 13 mantissa bits, rounding half to even; a carry into the exponent (and up to
   * 0x7c00, inf, from 65520 on) is the right result */
  const uint32_t lsb = (x >> 13) & 1u;
  const uint32_t r = (x + 0xfffu + lsb) >> 13;
  return (uint16_t)(sign | (uint16_t)(r - (112u << 10)));
}

typedef void (*q8rt_f32_f16_vcvt_ukernel_fn)(size_t n, const float *x, uint16_t *y);

void q8rt_f32_f16_vcvt_ukernel__scalar(size_t n, const float *x, uint16_t *y);
#define Q8RT_F32_F16_VCVT_UKERNEL(isa, fn) void fn(size_t n, const float *x, uint16_t *y);
#include "f32-f16-vcvt/f32-f16-vcvt.inc"
#undef Q8RT_F32_F16_VCVT_UKERNEL

#endif
