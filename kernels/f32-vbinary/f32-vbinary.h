/* f32-vbinary: the float32 binary ops of Add, Sub, Mul, Div, Max, Min (and Sum, Mean) and PRelu over one span,
 * one IEEE operation per element, so every variant gives the scalar twin's bytes:
 *   add  a + b      sub  a - b      mul  a * b      div  a / b   (correctly rounded in any ISA)
 *   max  a < b ? b : a              min  b < a ? b : a           (std::max / std::min: the first
 *        operand wins ties and any comparison with NaN, so max(NaN, 1) is NaN, max(1, NaN) is 1)
 *   prelu  a < 0 ? a * b : a        (ONNX Runtime's PRelu functor: -0 and NaN keep a)
 * Each op in three forms, so a broadcast operand keeps its side:
 *   q8rt_f32_v<op>_ukernel__<isa>    y[i] = a[i] op b[i]
 *   q8rt_f32_v<op>c_ukernel__<isa>   y[i] = a[i] op b[0]
 *   q8rt_f32_vr<op>c_ukernel__<isa>  y[i] = b[0] op a[i]
 * y may be a or b (in place). NaN payloads when both operands are NaN are not specified (the
 * compiler may commute the twin's + and *). */
#ifndef Q8RT_F32_VBINARY_H
#define Q8RT_F32_VBINARY_H

#include <stddef.h>

typedef void (*q8rt_f32_vbinary_ukernel_fn)(size_t n, const float *a, const float *b, float *y);

/* The ops in the order of the kernel tables: X(op) per op. */
#define Q8RT_F32_VBINARY_OPS(X) X(add) X(sub) X(mul) X(div) X(max) X(min) X(prelu)
enum { Q8RT_F32_VBINARY_OP_COUNT = 7 };

#define Q8RT_F32_VBINARY_PROTO_(op, isa)                                                     \
  void q8rt_f32_v##op##_ukernel__##isa(size_t n, const float *a, const float *b, float *y);  \
  void q8rt_f32_v##op##c_ukernel__##isa(size_t n, const float *a, const float *b, float *y); \
  void q8rt_f32_vr##op##c_ukernel__##isa(size_t n, const float *a, const float *b, float *y);
#define Q8RT_F32_VBINARY_UKERNELS(isa_flag, isa) \
  Q8RT_F32_VBINARY_PROTO_(add, isa)              \
  Q8RT_F32_VBINARY_PROTO_(sub, isa)              \
  Q8RT_F32_VBINARY_PROTO_(mul, isa)              \
  Q8RT_F32_VBINARY_PROTO_(div, isa)              \
  Q8RT_F32_VBINARY_PROTO_(max, isa)              \
  Q8RT_F32_VBINARY_PROTO_(min, isa)              \
  Q8RT_F32_VBINARY_PROTO_(prelu, isa)
#include "f32-vbinary/f32-vbinary.inc"
#undef Q8RT_F32_VBINARY_UKERNELS

/* One ISA's functions as a table: fn[op][form], form 0 vector, 1 c, 2 rc; op in the order of
 * Q8RT_F32_VBINARY_OPS. Fill with Q8RT_F32_VBINARY_TABLE(isa). */
typedef struct q8rt_f32_vbinary_set {
  q8rt_f32_vbinary_ukernel_fn fn[Q8RT_F32_VBINARY_OP_COUNT][3];
} q8rt_f32_vbinary_set;
#define Q8RT_F32_VBINARY_ROW_(op, isa) \
  {q8rt_f32_v##op##_ukernel__##isa, q8rt_f32_v##op##c_ukernel__##isa, q8rt_f32_vr##op##c_ukernel__##isa},
/* clang-format off */
#define Q8RT_F32_VBINARY_TABLE(isa)   \
  {{Q8RT_F32_VBINARY_ROW_(add, isa)  \
    Q8RT_F32_VBINARY_ROW_(sub, isa)  \
    Q8RT_F32_VBINARY_ROW_(mul, isa)  \
    Q8RT_F32_VBINARY_ROW_(div, isa)  \
    Q8RT_F32_VBINARY_ROW_(max, isa)  \
    Q8RT_F32_VBINARY_ROW_(min, isa)  \
    Q8RT_F32_VBINARY_ROW_(prelu, isa)}}
/* clang-format on */

#endif
