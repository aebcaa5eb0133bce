/* f32-vunary: the float32 unary ops of Relu, Clip, Neg, Abs, Sqrt, LeakyRelu, HardSigmoid,
 * HardSwish, Sigmoid and Tanh over one span, ONNX Runtime's CPU functors operation by operation:
 *   vclamp    v = x < lo ? lo : x; y = hi < v ? hi : v   (Clip; Relu is lo 0, hi +inf: -0 and NaN
 *             pass through, as std::max(x, 0))
 *   vneg      -x (the sign bit flipped, NaN too)        vabs   |x| (the sign bit cleared)
 *   vsqrt     sqrt(x) (correctly rounded)
 *   vlrelu    x >= 0 ? x : alpha * x
 *   vhsigmoid v = alpha * x + beta (two roundings); v = 1 < v ? 1 : v; y = v < 0 ? 0 : v
 *   vhswish   x * vhsigmoid(x)
 *   vsigmoid  MLAS's logistic, vtanh MLAS's tanh (q8rt_mlas_logistic / q8rt_mlas_tanh in
 *             q8rt-math.h: rational approximations with fused multiply-adds, which fmaf gives
 *             exactly in the twin and vfmadd/fmla in the SIMD variants)
 * Every variant gives the scalar twin's bytes; y may be x (in place). */
#ifndef Q8RT_F32_VUNARY_H
#define Q8RT_F32_VUNARY_H

#include <stddef.h>

typedef struct q8rt_f32_vunary_params {
  float lo, hi;      /* vclamp */
  float alpha, beta; /* vlrelu: alpha; vhsigmoid, vhswish: alpha, beta */
} q8rt_f32_vunary_params;

typedef void (*q8rt_f32_vunary_ukernel_fn)(size_t n, const float *x, float *y, const q8rt_f32_vunary_params *p);

/* The ops in the order of the kernel tables. */
enum q8rt_f32_vunary_op {
  Q8RT_F32_VCLAMP,
  Q8RT_F32_VNEG,
  Q8RT_F32_VABS,
  Q8RT_F32_VSQRT,
  Q8RT_F32_VLRELU,
  Q8RT_F32_VHSIGMOID,
  Q8RT_F32_VHSWISH,
  Q8RT_F32_VSIGMOID,
  Q8RT_F32_VTANH,
  Q8RT_F32_VUNARY_OP_COUNT
};

#define Q8RT_F32_VUNARY_PROTO_(op, isa) \
  void q8rt_f32_v##op##_ukernel__##isa(size_t n, const float *x, float *y, const q8rt_f32_vunary_params *p);
/* clang-format off */
#define Q8RT_F32_VUNARY_UKERNELS(isa_flag, isa) \
  Q8RT_F32_VUNARY_PROTO_(clamp, isa)            \
  Q8RT_F32_VUNARY_PROTO_(neg, isa)              \
  Q8RT_F32_VUNARY_PROTO_(abs, isa)              \
  Q8RT_F32_VUNARY_PROTO_(sqrt, isa)             \
  Q8RT_F32_VUNARY_PROTO_(lrelu, isa)            \
  Q8RT_F32_VUNARY_PROTO_(hsigmoid, isa)         \
  Q8RT_F32_VUNARY_PROTO_(hswish, isa)           \
  Q8RT_F32_VUNARY_PROTO_(sigmoid, isa)          \
  Q8RT_F32_VUNARY_PROTO_(tanh, isa)
/* clang-format on */
#include "f32-vunary/f32-vunary.inc"
#undef Q8RT_F32_VUNARY_UKERNELS

/* One ISA's functions indexed by enum q8rt_f32_vunary_op: Q8RT_F32_VUNARY_TABLE(isa). */
#define Q8RT_F32_VUNARY_TABLE(isa)                                                                        \
  {                                                                                                       \
    q8rt_f32_vclamp_ukernel__##isa, q8rt_f32_vneg_ukernel__##isa, q8rt_f32_vabs_ukernel__##isa,           \
        q8rt_f32_vsqrt_ukernel__##isa, q8rt_f32_vlrelu_ukernel__##isa, q8rt_f32_vhsigmoid_ukernel__##isa, \
        q8rt_f32_vhswish_ukernel__##isa, q8rt_f32_vsigmoid_ukernel__##isa, q8rt_f32_vtanh_ukernel__##isa  \
  }

#endif
