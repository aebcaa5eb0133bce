/* Prototypes of every compute kernel, by family. Each family has a scalar variant, the numerics
 * reference that optimized variants are tested against byte for byte. */
#ifndef Q8RT_KERNELS_H
#define Q8RT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* ---- f32-qint-vcvt: QuantizeLinear, y = clamp(round_half_even(x / scale) + zp, qmin, qmax) ---- */
typedef struct q8rt_f32_qint_vcvt_params {
  float scale;
  int32_t zero_point;
  float lo; /* qmin - zero_point */
  float hi; /* qmax - zero_point */
} q8rt_f32_qint_vcvt_params;

/* The C element type of each quantized type name the vcvt lists use. */
#define Q8RT_CTYPE_qu8 uint8_t
#define Q8RT_CTYPE_qs8 int8_t
#define Q8RT_CTYPE_qu16 uint16_t
#define Q8RT_CTYPE_qs16 int16_t
#define Q8RT_CTYPE_qs32 int32_t

/* One function of the family, typed by its output type (the member named like the list's type). */
typedef union q8rt_f32_qint_vcvt_ukernel_fn {
  void (*qu8)(size_t n, const float *x, uint8_t *y, const q8rt_f32_qint_vcvt_params *p);
  void (*qs8)(size_t n, const float *x, int8_t *y, const q8rt_f32_qint_vcvt_params *p);
  void (*qu16)(size_t n, const float *x, uint16_t *y, const q8rt_f32_qint_vcvt_params *p);
  void (*qs16)(size_t n, const float *x, int16_t *y, const q8rt_f32_qint_vcvt_params *p);
} q8rt_f32_qint_vcvt_ukernel_fn;
#define Q8RT_F32_QINT_VCVT_UKERNEL(isa, fn, qt) \
  void fn(size_t n, const float *x, Q8RT_CTYPE_##qt *y, const q8rt_f32_qint_vcvt_params *p);
#include "f32-qint-vcvt/f32-qint-vcvt.inc"
#undef Q8RT_F32_QINT_VCVT_UKERNEL

/* ---- qint-f32-vcvt: DequantizeLinear, y = (float)(x - zp) * scale ----------------------------- */
typedef struct q8rt_qint_f32_vcvt_params {
  float scale;
  int32_t zero_point;
} q8rt_qint_f32_vcvt_params;

typedef union q8rt_qint_f32_vcvt_ukernel_fn {
  void (*qu8)(size_t n, const uint8_t *x, float *y, const q8rt_qint_f32_vcvt_params *p);
  void (*qs8)(size_t n, const int8_t *x, float *y, const q8rt_qint_f32_vcvt_params *p);
  void (*qu16)(size_t n, const uint16_t *x, float *y, const q8rt_qint_f32_vcvt_params *p);
  void (*qs16)(size_t n, const int16_t *x, float *y, const q8rt_qint_f32_vcvt_params *p);
  void (*qs32)(size_t n, const int32_t *x, float *y, const q8rt_qint_f32_vcvt_params *p);
} q8rt_qint_f32_vcvt_ukernel_fn;
#define Q8RT_QINT_F32_VCVT_UKERNEL(isa, fn, qt) \
  void fn(size_t n, const Q8RT_CTYPE_##qt *x, float *y, const q8rt_qint_f32_vcvt_params *p);
#include "qint-f32-vcvt/qint-f32-vcvt.inc"
#undef Q8RT_QINT_F32_VCVT_UKERNEL

/* ---- q8-conv-ref: direct QLinearConv, NCHW, any group/stride/dilation/padding ---------------
 * acc = sum (x - x_zp) * wq + bias[m] in int32 (two's complement wrap, as ONNX Runtime), where
 * wq = w - w_zp[m] is packed as int16 at load; y = clamp(round_half_even((float)acc * scale[m])
 * + y_zp, qmin, qmax). 1-D convolutions use in_h = out_h = kernel_h = 1. */
typedef struct q8rt_q8_conv_ref_params {
  size_t batch, groups;
  size_t in_c, in_h, in_w;    /* in_c: all input channels */
  size_t out_c, out_h, out_w; /* out_c: all output channels */
  size_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  size_t pad_top, pad_left;
  int x_signed, y_signed;
  int32_t x_zero_point, y_zero_point;
  float y_lo, y_hi;    /* qmin - y_zp, qmax - y_zp */
  const int16_t *w;    /* [out_c][in_c / groups][kernel_h][kernel_w], zero point removed */
  const int32_t *bias; /* [out_c] */
  const float *scale;  /* [out_c] */
} q8rt_q8_conv_ref_params;

typedef void (*q8rt_q8_conv_ref_ukernel_fn)(const q8rt_q8_conv_ref_params *p, const void *x, void *y);
#define Q8RT_Q8_CONV_REF_UKERNEL(isa, fn) void fn(const q8rt_q8_conv_ref_params *p, const void *x, void *y);
#include "q8-conv-ref/q8-conv-ref.inc"
#undef Q8RT_Q8_CONV_REF_UKERNEL

/* ==== Fast paths: NHWC, u8 activations (s8 ones mapped exactly by x ^ 0x80), weights packed once ====
 *
 * Both families below compute, for output channel n,
 *   acc = bias'[n] + sum_k a[k] * w[k][n]        (int32, two's complement wrap)
 *   y   = clamp(round_half_even((float)acc * scale[n]), y_lo, y_hi) + y_zero_point
 * where a are the activation bytes after `^ x_xor` (so always u8) and bias' has the zero-point term
 * folded in at pack time: bias'[n] = bias[n] - x_zp_u8 * sum_k w[k][n] (mod 2^32). Wrapping int32
 * arithmetic makes this equal to the reference's sum_k (x - x_zp) * w + bias bit for bit.
 * Padding positions must hold the raw activation zero point (x_zp before the xor). */
typedef struct q8rt_qu8_requant_params {
  float y_lo; /* qmin - y_zero_point */
  float y_hi; /* qmax - y_zero_point */
  int32_t y_zero_point;
  uint8_t x_xor;    /* 0x80 for int8 activations, 0 for uint8 */
  uint8_t y_signed; /* 1: int8 output, 0: uint8 output */
} q8rt_qu8_requant_params;

/* ---- qu8-qc8w-gemm: GEMM with int8 weights packed in groups of 4 k (KR = 4) ------------------
 * Packed layout, for each block of NR output channels (the last block padded with zero channels):
 *   int32 bias'[NR] | int8 w[ceil(K/4)][NR][4] (w[k4][j][i] = w[4*k4 + i][n0 + j], 0 past K) | float scale[NR]
 * Weights must fit int8 after their zero point is removed (w - w_zp in [-128, 127]). */
size_t q8rt_qu8_qc8w_gemm_packed_size(size_t n, size_t k, size_t nr);
/* w: [n][k] row-major, zero point already removed; bias may be NULL (zero). */
void q8rt_qu8_qc8w_gemm_pack(size_t n, size_t k, size_t nr, const int8_t *w, const int32_t *bias, const float *scale,
                             int32_t x_zp_u8, void *packed);

/* C[m][0..nc) for m < mr (1 <= mr <= MR) from A rows a + m * a_stride (kc bytes each; the kernel may
 * read up to round_up(kc, 4) bytes of each row, the extra bytes meet zero weights) and the packed
 * weights w (nc channels: the kernel walks ceil(nc / NR) blocks). Output row m at c + m * c_stride. */
typedef void (*q8rt_qu8_gemm_ukernel_fn)(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride,
                                         const void *w, void *c, size_t c_stride, const q8rt_qu8_requant_params *p);
/* Segmented rows (the seg variants, Q8RT_GEMM_UKERNEL_SEG): row m's K = n * len bytes are the n
 * runs a + m * a_stride + off[s], len bytes each (len a multiple of 4), in order. A stride-1 or
 * strided convolution's interior pixels read the input this way (one run per kernel row: kernel_w
 * adjacent NHWC pixels), with no im2col copy. */
#define Q8RT_GEMM_MAX_SEGS 16
typedef struct q8rt_gemm_segs {
  size_t n, len;
  size_t off[Q8RT_GEMM_MAX_SEGS];
} q8rt_gemm_segs;
typedef void (*q8rt_qu8_gemm_seg_ukernel_fn)(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride,
                                             const void *w, void *c, size_t c_stride, const q8rt_qu8_requant_params *p,
                                             const q8rt_gemm_segs *segs);
/* The seg variants' twin (kc == n * len; reads the packing's NR like the contiguous twin). */
void q8rt_qu8_qc8w_gemm_seg_minmax_fp32_ukernel__scalar(size_t mr, size_t nc, size_t kc, const uint8_t *a,
                                                        size_t a_stride, const void *w, void *c, size_t c_stride,
                                                        const q8rt_qu8_requant_params *p, const q8rt_gemm_segs *segs,
                                                        size_t nr);
/* The scalar twin takes the packing's NR as an argument, so it reads any variant's layout. */
void q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel__scalar(size_t mr, size_t nc, size_t kc, const uint8_t *a, size_t a_stride,
                                                    const void *w, void *c, size_t c_stride,
                                                    const q8rt_qu8_requant_params *p, size_t nr);
#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr)                                                             \
  void fn(size_t mr_, size_t nc, size_t kc, const uint8_t *a, size_t a_stride, const void *w, void *c, \
          size_t c_stride, const q8rt_qu8_requant_params *p);
#define Q8RT_GEMM_UKERNEL_S8A(isa, fn, mr, nr) Q8RT_GEMM_UKERNEL(isa, fn, mr, nr)
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_S8A

/* ---- qu8-dwconv: depthwise convolution, any number of taps, int16 weights -------------------
 * Packed layout, for each block of CB channels (the last padded with zero channels):
 *   int32 bias'[CB] | int16 w[taps][CB] (zero point removed: any w_zp works) | float scale[CB]
 * with bias'[c] = bias[c] - x_zp_u8 * sum_t w[t][c]. */
size_t q8rt_qu8_dwconv_packed_size(size_t channels, size_t taps, size_t cb);
/* w: [channels][taps], zero point removed; bias may be NULL. */
void q8rt_qu8_dwconv_pack(size_t channels, size_t taps, size_t cb, const int16_t *w, const int32_t *bias,
                          const float *scale, int32_t x_zp_u8, void *packed);
/* For each of `pixels` output pixels: `taps` input pointers from `indirection` (pixel-major: pixel p
 * uses indirection[p * taps + t]), each to `channels` contiguous bytes (a padded tap points at a
 * buffer of the raw x zero point). Output: pixel p's channels at y + p * y_stride. */
typedef void (*q8rt_qu8_dwconv_ukernel_fn)(size_t channels, size_t pixels, const uint8_t *const *indirection,
                                           size_t taps, const void *w, void *y, size_t y_stride,
                                           const q8rt_qu8_requant_params *p);
void q8rt_qu8_dwconv_minmax_fp32_ukernel__scalar(size_t channels, size_t pixels, const uint8_t *const *indirection,
                                                 size_t taps, const void *w, void *y, size_t y_stride,
                                                 const q8rt_qu8_requant_params *p, size_t cb);
#define Q8RT_DWCONV_UKERNEL(isa, fn, cb)                                                                          \
  void fn(size_t channels, size_t pixels, const uint8_t *const *indirection, size_t taps, const void *w, void *y, \
          size_t y_stride, const q8rt_qu8_requant_params *p);
#include "qu8-dwconv/qu8-dwconv.inc"
#undef Q8RT_DWCONV_UKERNEL

/* ---- qu8-qc8w-dwconv2d-chw: depthwise convolution on one NCHW channel plane ----------------------
 * (a single-conv NCHW model runs without layout changes). x is the channel's in_h x in_w input
 * plane, rows x_stride bytes apart; output (oy, ox) reads input (oy*stride_h + ky*dilation_h -
 * pad_top, ox*stride_w + kx*dilation_w - pad_left), where positions outside the plane hold the raw
 * activation zero point x_zero_point, and is written at y[oy * y_stride + ox]. Packed, per channel:
 *   int32 bias' | float scale | int8 w[kernel_h][round_up(kernel_w, 4)] (0 past kernel_w)
 * with bias' = bias - x_zp_u8 * sum w (mod 2^32); weights must fit int8 after their zero point is
 * removed. Kernels read nothing outside the plane. */
typedef struct q8rt_qu8_qc8w_dwconv2d_chw_params {
  size_t in_h, in_w, x_stride, out_h, out_w, y_stride;
  size_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
  uint8_t x_zero_point; /* as stored (before the x_xor of rq) */
  q8rt_qu8_requant_params rq;
} q8rt_qu8_qc8w_dwconv2d_chw_params;
size_t q8rt_qu8_qc8w_dwconv2d_chw_channel_bytes(size_t kernel_h, size_t kernel_w);
/* w: [channels][kernel_h][kernel_w], zero point removed, each in [-128, 127]; bias may be NULL. */
void q8rt_qu8_qc8w_dwconv2d_chw_pack(size_t channels, size_t kernel_h, size_t kernel_w, const int16_t *w,
                                     const int32_t *bias, const float *scale, int32_t x_zp_u8, void *packed);
typedef void (*q8rt_qu8_qc8w_dwconv2d_chw_ukernel_fn)(const uint8_t *x, const void *w, uint8_t *y,
                                                      const q8rt_qu8_qc8w_dwconv2d_chw_params *p);
#define Q8RT_QC8W_DWCONV2D_CHW_UKERNEL(isa, fn, max_span) \
  void fn(const uint8_t *x, const void *w, uint8_t *y, const q8rt_qu8_qc8w_dwconv2d_chw_params *p);
#include "qu8-qc8w-dwconv2d-chw/qu8-qc8w-dwconv2d-chw.inc"
#undef Q8RT_QC8W_DWCONV2D_CHW_UKERNEL

/* ---- qu8-qc8w-gemm-chw: the GEMM with NCHW activations and output ---------------------------
 * y[m][n] = requant(bias'[m] + sum_k w[m][k] * x[k][n]) for mr <= MR channels and nc pixels:
 * the activations come as a panel of groups of 4 k, x[k4 * x_stride + 4 * n + i] = the uint8
 * value (already ^ x_xor) of k = 4 * k4 + i at pixel n (x8-zip-x4 makes it; K padded to a multiple
 * of 4, the pixels to a multiple of NR: kernels read whole vectors); the weights are one block of
 * q8rt_qu8_qc8w_gemm_pack with nr = MR (int32 bias'[MR] | int8 w[k4][MR][4] | float scale[MR]);
 * channel m's nc outputs are stored at y + m * y_stride, side by side. The requantization is the
 * NHWC GEMM's (rq.x_xor is not read). */
typedef void (*q8rt_qu8_gemm_chw_ukernel_fn)(size_t mr, size_t nc, size_t kc, const uint8_t *x, size_t x_stride,
                                             const void *w, uint8_t *y, size_t y_stride,
                                             const q8rt_qu8_requant_params *p);
void q8rt_qu8_qc8w_gemm_chw_minmax_fp32_ukernel__scalar(size_t mr, size_t nc, size_t kc, const uint8_t *x,
                                                        size_t x_stride, const void *w, uint8_t *y, size_t y_stride,
                                                        const q8rt_qu8_requant_params *p, size_t MR);
#define Q8RT_GEMM_CHW_UKERNEL(isa, fn, mr, nr)                                                            \
  void fn(size_t mr_, size_t nc, size_t kc, const uint8_t *x, size_t x_stride, const void *w, uint8_t *y, \
          size_t y_stride, const q8rt_qu8_requant_params *p);
#include "qu8-qc8w-gemm-chw/qu8-qc8w-gemm-chw.inc"
#undef Q8RT_GEMM_CHW_UKERNEL

/* ---- x8-zip-x4: out[4 * i + j] = rows[j][i] ^ x_xor (i < n): the NCHW GEMM's k4 panel -------- */
typedef void (*q8rt_x8_zip_x4_ukernel_fn)(size_t n, const uint8_t *const rows[4], uint8_t x_xor, uint8_t *out);
#define Q8RT_X8_ZIP_X4_UKERNEL(isa, fn) void fn(size_t n, const uint8_t *const rows[4], uint8_t x_xor, uint8_t *out);
#include "x8-zip/x8-zip.inc"
#undef Q8RT_X8_ZIP_X4_UKERNEL

/* ---- x8-transpose: [a][b] (row stride x_stride) -> [b][a] (row stride y_stride) for bytes ---- */
typedef void (*q8rt_x8_transpose_ukernel_fn)(size_t a, size_t b, const uint8_t *x, size_t x_stride, uint8_t *y,
                                             size_t y_stride);
#define Q8RT_X8_TRANSPOSE_UKERNEL(isa, fn) \
  void fn(size_t a, size_t b, const uint8_t *x, size_t x_stride, uint8_t *y, size_t y_stride);
#include "x8-transpose/x8-transpose.inc"
#undef Q8RT_X8_TRANSPOSE_UKERNEL

/* ---- x8-lut: y[i] = table[x[i]] (the table pass's islands) ---- */
typedef void (*q8rt_x8_lut_ukernel_fn)(size_t n, const uint8_t *x, uint8_t *y, const uint8_t table[256]);
/* rows of n bytes x_stride / y_stride bytes apart (x == y: in place) */
typedef void (*q8rt_x8_lut_rows_ukernel_fn)(size_t rows, size_t n, const uint8_t *x, size_t x_stride, uint8_t *y,
                                            size_t y_stride, const uint8_t table[256]);
#define Q8RT_X8_LUT_UKERNEL(isa, fn, rows_fn)                                                         \
  void fn(size_t n, const uint8_t *x, uint8_t *y, const uint8_t table[256]);                          \
  void rows_fn(size_t rows, size_t n, const uint8_t *x, size_t x_stride, uint8_t *y, size_t y_stride, \
               const uint8_t table[256]);
#include "x8-lut/x8-lut.inc"
#undef Q8RT_X8_LUT_UKERNEL

/* ---- x8-lutc: per-channel tables, channels innermost ----
 * y[r * y_stride + c] = tables[c * 256 + x[r * x_stride + c]], rows of `channels` bytes (x == y
 * with equal strides: in place). */
typedef void (*q8rt_x8_lutc_ukernel_fn)(size_t rows, size_t channels, const uint8_t *x, size_t x_stride, uint8_t *y,
                                        size_t y_stride, const uint8_t *tables);
#define Q8RT_X8_LUTC_UKERNEL(isa, fn)                                                                   \
  void fn(size_t rows, size_t channels, const uint8_t *x, size_t x_stride, uint8_t *y, size_t y_stride, \
          const uint8_t *tables);
#include "x8-lutc/x8-lutc.inc"
#undef Q8RT_X8_LUTC_UKERNEL

/* ---- q8-vbinary: QLinearAdd / QLinearMul rows, ONNX Runtime's MLAS arithmetic in float32 ----
 *   vadd:  y = sat(cvt(fma(x1, r1, fma(x2, r2, f))))
 *   vmul:  y = sat(cvt((float)((x1 - z1) * (x2 - z2)) * ratio + zc))   (no fusion)
 * cvt: round half to even to int32, NaN / out of range -> INT32_MIN (cvtps2dq); sat: clamp to
 * the 8-bit type. x1, x2 and y hold n elements; the *c variants read one element x2[0] for all.
 * y may be x1 or x2 (in place). flip: every input byte is XORed with it before the formula and
 * every result byte after (0x80 on the qu8 functions: int8 data computed as its uint8 twin,
 * x ^ 0x80 = x + 128, without a pass over the data; 0: the data as it is). */
typedef struct q8rt_q8_vbinary_params {
  float r1, r2, f; /* vadd */
  float ratio, zc; /* vmul */
  int32_t z1, z2;  /* vmul */
  uint8_t flip;
} q8rt_q8_vbinary_params;

typedef void (*q8rt_qu8_vbinary_ukernel_fn)(size_t n, const uint8_t *x1, const uint8_t *x2, uint8_t *y,
                                            const q8rt_q8_vbinary_params *p);
typedef void (*q8rt_qs8_vbinary_ukernel_fn)(size_t n, const int8_t *x1, const int8_t *x2, int8_t *y,
                                            const q8rt_q8_vbinary_params *p);
#define Q8RT_VBINARY_UKERNELS(isa_flag, isa)                                                     \
  void q8rt_qu8_vadd_ukernel__##isa(size_t n, const uint8_t *x1, const uint8_t *x2, uint8_t *y,  \
                                    const q8rt_q8_vbinary_params *p);                            \
  void q8rt_qu8_vaddc_ukernel__##isa(size_t n, const uint8_t *x1, const uint8_t *x2, uint8_t *y, \
                                     const q8rt_q8_vbinary_params *p);                           \
  void q8rt_qu8_vmul_ukernel__##isa(size_t n, const uint8_t *x1, const uint8_t *x2, uint8_t *y,  \
                                    const q8rt_q8_vbinary_params *p);                            \
  void q8rt_qu8_vmulc_ukernel__##isa(size_t n, const uint8_t *x1, const uint8_t *x2, uint8_t *y, \
                                     const q8rt_q8_vbinary_params *p);                           \
  void q8rt_qs8_vadd_ukernel__##isa(size_t n, const int8_t *x1, const int8_t *x2, int8_t *y,     \
                                    const q8rt_q8_vbinary_params *p);                            \
  void q8rt_qs8_vaddc_ukernel__##isa(size_t n, const int8_t *x1, const int8_t *x2, int8_t *y,    \
                                     const q8rt_q8_vbinary_params *p);                           \
  void q8rt_qs8_vmul_ukernel__##isa(size_t n, const int8_t *x1, const int8_t *x2, int8_t *y,     \
                                    const q8rt_q8_vbinary_params *p);                            \
  void q8rt_qs8_vmulc_ukernel__##isa(size_t n, const int8_t *x1, const int8_t *x2, int8_t *y,    \
                                     const q8rt_q8_vbinary_params *p);
#include "q8-vbinary/q8-vbinary.inc"
#undef Q8RT_VBINARY_UKERNELS

/* ---- f32-vfmac: c[j] = fma(a, b[j], c[j]) (float MatMul/Gemm inner step, exact per element) ---- */
typedef void (*q8rt_f32_vfmac_ukernel_fn)(size_t n, float a, const float *b, float *c);
#define Q8RT_F32_VFMAC_UKERNEL(isa, fn) void fn(size_t n, float a, const float *b, float *c);
#include "f32-vfmac/f32-vfmac.inc"
#undef Q8RT_F32_VFMAC_UKERNEL

#endif
