/* Op front-ends: what an op does at load (prepare), when shapes are bound (infer) and at run.
 *
 * prepare  runs once per node when the model loads: checks attributes and constant inputs,
 *          packs weights into `params` (model lifetime, immutable, shared by sessions) and
 *          names the kernel it chose and why.
 * infer    maps input shapes to output shapes. It runs at load with symbolic dims (-1, which
 *          it propagates) and again when a session binds concrete shapes, when it also fills
 *          `geom` (the per-session geometry the kernel needs: sizes, resolved pads, ...).
 * run      computes. No checks, no allocation: everything was decided by prepare and infer. */
#ifndef Q8RT_OP_H
#define Q8RT_OP_H

#include "graph/ir.h"

#define Q8RT_GEOM_BYTES 256 /* room for any op's geometry record */

typedef struct op_shape {
  q8rt_dtype dtype;
  int rank; /* -1: unknown rank */
  int64_t dims[Q8RT_MAX_RANK];
} op_shape;

typedef struct op_tensor {
  void *data;
  const op_shape *shape;
} op_tensor;

typedef struct op_prepare_ctx {
  const ir_graph *graph;
  const ir_node *node;
  q8rt_pool *pool;       /* model-lifetime memory for params */
  q8rt_backend backend;  /* requested backend (AUTO picks) */
  const char *kernel;    /* out: name of the chosen kernel */
  const char *reason;    /* out: why it was chosen */
} op_prepare_ctx;

typedef struct op_def {
  const char *op_type;
  const char *domain;
  int min_opset;
  q8rt_status (*prepare)(op_prepare_ctx *ctx, void **params, q8rt_error *err);
  /* concrete = 1 when all input dims are known (session bind); geom may be NULL otherwise. */
  q8rt_status (*infer)(const void *params, const ir_node *node, const op_shape *in, op_shape *out, int concrete,
                       void *geom, q8rt_error *err);
  void (*run)(const void *params, const void *geom, const op_tensor *in, op_tensor *out);
} op_def;

/* The op that runs `node` at its opset, or NULL. */
const op_def *op_find(const ir_node *node);

/* Name of an ONNX element type number for messages ("float16", "float8e4m3fn", ...). */
const char *op_onnx_type_name(int32_t dtype);

/* Shared checks for scale / zero-point initializers, messages name node and input. */
q8rt_status op_require_constant(const ir_graph *g, const ir_node *n, int input, const char *what,
                                const ir_tensor **out, q8rt_error *err);
q8rt_status op_check_scales(const ir_node *n, const char *what, const ir_tensor *t, q8rt_error *err);

#endif /* Q8RT_OP_H */
