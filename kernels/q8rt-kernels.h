/* Prototypes of every compute kernel, by family. Each family has a scalar variant, the numerics
 * reference that optimized variants are tested against byte for byte. */
#ifndef Q8RT_KERNELS_H
#define Q8RT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* ---- f32-qx-vcvt: QuantizeLinear, y = clamp(round_half_even(x / scale) + zp, qmin, qmax) ---- */
typedef struct q8rt_f32_qx_cvt_params {
  float scale;
  int32_t zero_point;
  float lo; /* qmin - zero_point */
  float hi; /* qmax - zero_point */
} q8rt_f32_qx_cvt_params;

void q8rt_f32_qu8_vcvt_ukernel__scalar(size_t n, const float *x, uint8_t *y, const q8rt_f32_qx_cvt_params *p);
void q8rt_f32_qs8_vcvt_ukernel__scalar(size_t n, const float *x, int8_t *y, const q8rt_f32_qx_cvt_params *p);
void q8rt_f32_qu16_vcvt_ukernel__scalar(size_t n, const float *x, uint16_t *y, const q8rt_f32_qx_cvt_params *p);
void q8rt_f32_qs16_vcvt_ukernel__scalar(size_t n, const float *x, int16_t *y, const q8rt_f32_qx_cvt_params *p);

/* ---- qx-f32-vcvt: DequantizeLinear, y = (float)(x - zp) * scale ----------------------------- */
typedef struct q8rt_qx_f32_cvt_params {
  float scale;
  int32_t zero_point;
} q8rt_qx_f32_cvt_params;

void q8rt_qu8_f32_vcvt_ukernel__scalar(size_t n, const uint8_t *x, float *y, const q8rt_qx_f32_cvt_params *p);
void q8rt_qs8_f32_vcvt_ukernel__scalar(size_t n, const int8_t *x, float *y, const q8rt_qx_f32_cvt_params *p);
void q8rt_qu16_f32_vcvt_ukernel__scalar(size_t n, const uint16_t *x, float *y, const q8rt_qx_f32_cvt_params *p);
void q8rt_qs16_f32_vcvt_ukernel__scalar(size_t n, const int16_t *x, float *y, const q8rt_qx_f32_cvt_params *p);
void q8rt_qs32_f32_vcvt_ukernel__scalar(size_t n, const int32_t *x, float *y, const q8rt_qx_f32_cvt_params *p);

/* ---- qx-conv-ref: direct QLinearConv, NCHW, any group/stride/dilation/padding ---------------
 * acc = sum (x - x_zp) * wq + bias[m] in int32 (two's complement wrap, as ONNX Runtime), where
 * wq = w - w_zp[m] is packed as int16 at load; y = clamp(round_half_even((float)acc * scale[m])
 * + y_zp, qmin, qmax). 1-D convolutions use in_h = out_h = kernel_h = 1. */
typedef struct q8rt_qconv_ref_params {
  size_t batch, groups;
  size_t in_c, in_h, in_w;     /* in_c: all input channels */
  size_t out_c, out_h, out_w;  /* out_c: all output channels */
  size_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  size_t pad_top, pad_left;
  int x_signed, y_signed;
  int32_t x_zero_point, y_zero_point;
  float y_lo, y_hi;            /* qmin - y_zp, qmax - y_zp */
  const int16_t *w;            /* [out_c][in_c / groups][kernel_h][kernel_w], zero point removed */
  const int32_t *bias;         /* [out_c] */
  const float *scale;          /* [out_c] */
} q8rt_qconv_ref_params;

void q8rt_qx_conv_ref_ukernel__scalar(const q8rt_qconv_ref_params *p, const void *x, void *y);

#endif
