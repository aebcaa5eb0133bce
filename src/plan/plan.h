/* The plan: the graph's nodes in topological order, each with its op, its packed parameters and
 * the kernel chosen for it (with the reason), plus the layout transposes the planner inserted.
 * Built once at load; immutable afterwards. Steps name their input/output values explicitly
 * (a step may read a value's NHWC twin rather than the value its node names). */
#ifndef Q8RT_PLAN_H
#define Q8RT_PLAN_H

#include "ops/op.h"

typedef struct plan_step {
  const op_def *op;
  const ir_node *node; /* the ONNX node, or a synthetic one for planner-inserted steps */
  const void *params;
  const char *kernel;
  const char *reason;
  int n_inputs, n_outputs;
  int *inputs; /* value indices, -1 for an omitted optional input */
  int *outputs;
  int guard;         /* the If branch it belongs to (ir_guard id), 0: always runs */
  unsigned consumed; /* op_prepare_ctx.consumed: constant inputs whose IR data the step never reads */
} plan_step;

typedef struct plan {
  plan_step *steps;
  int n_steps;
  int max_inputs;  /* largest n_inputs of any step */
  int max_outputs; /* largest n_outputs of any step */
  /* [n_guards + 1]: why a branch whose condition is not known at load could not be planned
   * (NULL: it could). Reported at bind if the branch is sure to run, else at run if taken. */
  const q8rt_error **guard_errors;
  int n_guards;
} plan;

/* Order the nodes, fold constants (pass_fold_constants), replace elementwise islands by tables (tables = 1), prepare
 * each (attribute checks, weight packing, kernel choice), insert layout transposes, and infer shapes with the model's
 * own (possibly symbolic) input shapes, recording dtypes, shapes and known quantization parameters on the graph's
 * values. Memory for the plan comes from `pool`. */
q8rt_status plan_build(ir_graph *g, q8rt_pool *pool, q8rt_backend backend, uint32_t isa, int tables, plan *out,
                       q8rt_error *err);

#endif
