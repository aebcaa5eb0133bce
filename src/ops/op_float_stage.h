/* Float output stages of conv nodes (src/passes/float_fuse.c writes them): the elementwise float32
 * nodes after a Conv (FusedConv, conv_conv_transpose.c) or a dynamically quantized conv
 * (ConvIntegerToFloat, conv_integer.c), run on each block of outputs the conv has just written,
 * while it is in cache. Ops in the graph's order, each reading stage values (0: the conv's output,
 * k: op k-1's result) or a constant of one value or one per output channel, or a tensor of the
 * output's shape (a residual Add). The last op's result is the node's output. Codes: 0..3 add,
 * sub, mul, div (f32-vbinary's order); 10 clamp (bounds lo, hi); 20 + an f32-vunary op for
 * LeakyRelu, HardSigmoid, HardSwish, Sigmoid and Tanh (bounds: alpha, beta), the kernels and
 * parameters the front-ends of those nodes run them with, so the bytes equal the nodes'. */
#ifndef Q8RT_OP_FLOAT_STAGE_H
#define Q8RT_OP_FLOAT_STAGE_H

#include "op_util.h"

#define OP_FSTAGE_MAX 8
/* inputs a staged node may have: its own (at most 7: ConvIntegerToFloat) and one per stage op */
#define OP_FSTAGE_MAX_INPUTS (7 + OP_FSTAGE_MAX)
enum { OP_FSTAGE_CLAMP = 10, OP_FSTAGE_UNARY = 20 };

typedef struct op_fstage_op {
  int code;                      /* 0..3: add, sub, mul, div; OP_FSTAGE_CLAMP; OP_FSTAGE_UNARY + op */
  int a, b;                      /* stage value, or -1 for the constant */
  const float *c;                /* the constant (binary ops with one) */
  size_t c_per_channel;          /* 1: c[channel], 0: c[0] */
  q8rt_f32_vunary_params kp;     /* clamp bounds; alpha, beta */
  q8rt_f32_vunary_ukernel_fn fn; /* clamp and unary ops */
  int ext;                       /* binary: the operand that is not a stage value is input `ext`, a
                                    tensor of the output's shape (a residual Add), or -1 */
} op_fstage_op;

typedef struct op_fstage {
  int n, n_ext; /* ops; n_ext: stage operands that are tensors */
  op_fstage_op op[OP_FSTAGE_MAX];
  q8rt_f32_vbinary_set bin; /* the stage's binary kernels */
} op_fstage;

/* The stage's tensor operands for one run: input k's data at the offset of the outputs a call
 * gets (y - ybase). */
typedef struct op_fstage_ext {
  const float *in[OP_FSTAGE_MAX_INPUTS];
  const float *ybase;
} op_fstage_ext;

/* The node's stage (attributes q8rt_stage: code, a, b per op; q8rt_stage_bounds: lo, hi per op)
 * checked as any model input would be, its kernels picked; the constant of stage ref -1 - c is
 * input first_const + c; M output channels. A node without q8rt_stage gets an empty stage when
 * `required` is 0. */
q8rt_status op_fstage_prepare(op_prepare_ctx *ctx, op_fstage *s, int first_const, int64_t M, int required,
                              q8rt_error *err);

/* infer: every tensor operand has the output's shape (no broadcast). */
q8rt_status op_fstage_check(const op_fstage *s, const op_node *n, const op_shape *in, const op_shape *out, int concrete,
                            q8rt_error *err);

/* run: the tensor operands' data. */
void op_fstage_ext_init(const op_fstage *s, const op_tensor *in, const op_tensor *out, op_fstage_ext *e);

/* The stage on n outputs of output channel ch at y, in blocks of 256 (stage values on the stack). */
void op_fstage_run(const op_fstage *s, const op_fstage_ext *e, size_t ch, float *y, size_t n);

#endif /* Q8RT_OP_FLOAT_STAGE_H */
