/* The plan: the graph's nodes in topological order, each with its op, its packed parameters and
 * the kernel chosen for it (with the reason). Built once at load; immutable afterwards. */
#ifndef Q8RT_PLAN_H
#define Q8RT_PLAN_H

#include "ops/op.h"

typedef struct plan_step {
  const op_def *op;
  const ir_node *node;
  const void *params;
  const char *kernel;
  const char *reason;
} plan_step;

typedef struct plan {
  plan_step *steps;
  int n_steps;
  int max_inputs;  /* largest n_inputs of any step */
  int max_outputs; /* largest n_outputs of any step */
} plan;

/* Order the nodes, prepare each (attribute checks, weight packing, kernel choice) and infer
 * shapes with the model's own (possibly symbolic) input shapes, recording dtypes, shapes and
 * known quantization parameters on the graph's values. Memory for the plan comes from `pool`. */
q8rt_status plan_build(ir_graph *g, q8rt_pool *pool, q8rt_backend backend, plan *out, q8rt_error *err);

/* The shape of a value as the model knows it (constants: exact; others: inferred, may hold -1). */
void plan_value_shape(const ir_value *v, op_shape *out);

#endif
