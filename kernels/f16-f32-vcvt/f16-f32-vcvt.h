/* f16-f32-vcvt: IEEE float16 bit patterns widened to float32, y[i] = (float)x[i], exact. The
 * element function below is the definition (the scalar twin loops over it; the loader and
 * q8rt_f16_to_f32 use it too): normals rebiased, subnormals m * 2^-24 (float32 normals), +-0 and
 * +-inf kept, NaN with its sign and payload kept as they are (a signalling NaN stays signalling,
 * as ONNX Runtime's Cast and NumPy widen it; vcvtph2ps and fcvtl quiet it, so the SIMD variants
 * put the twin's bits back in NaN lanes). */
#ifndef Q8RT_F16_F32_VCVT_H
#define Q8RT_F16_F32_VCVT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline float q8rt_f16_f32_element(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | man << 13; /* inf, NaN (payload kept) */
  } else if (exp != 0) {
    bits = sign | (exp + 112) << 23 | man << 13; /* rebias 15 -> 127 */
  } else if (man == 0) {
    bits = sign;
  } else {
    /* subnormal: man * 2^-24, a float32 normal; exact */
    float f = (float)man * 0x1p-24f;
    uint32_t fb;
    memcpy(&fb, &f, 4);
    bits = sign | fb;
  }
  float out;
  memcpy(&out, &bits, 4);
  return out;
}

typedef void (*q8rt_f16_f32_vcvt_ukernel_fn)(size_t n, const uint16_t *x, float *y);

void q8rt_f16_f32_vcvt_ukernel__scalar(size_t n, const uint16_t *x, float *y);
#define Q8RT_F16_F32_VCVT_UKERNEL(isa, fn) void fn(size_t n, const uint16_t *x, float *y);
#include "f16-f32-vcvt/f16-f32-vcvt.inc"
#undef Q8RT_F16_F32_VCVT_UKERNEL

#endif
