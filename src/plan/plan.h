/* The plan: the graph's nodes in topological order, each with its op, its packed parameters and
 * the kernel chosen for it (with the reason), plus the layout transposes the planner inserted.
 * Built once at load; immutable afterwards. Steps name their input/output values explicitly
 * (a step may read a value's NHWC twin rather than the value its node names). */
#ifndef Q8RT_PLAN_H
#define Q8RT_PLAN_H

#include "ops/op.h"
#include "passes/passes.h"

typedef struct plan_step {
  const op_def *op;
  op_node *node; /* its node (a copy), or a synthetic one for planner-inserted steps */
  const void *params;
  const char *kernel;
  const char *reason;
  int n_inputs, n_outputs;
  int *inputs; /* value indices, -1 for an omitted optional input */
  int *outputs;
  int guard;         /* the If branch it belongs to (ir_guard id), 0: always runs */
  unsigned consumed; /* op_prepare_ctx.consumed: constant inputs whose IR data the step never reads */
} plan_step;

/* What the session needs of a value: the plan's own copy, so the IR can go once the model is
 * loaded. Physical values: an NHWC twin the planner added is a value of its own. */
typedef struct plan_value {
  const char *name;
  /* as planned: dtype, rank (-1: unknown), dims (-1: symbolic); value: a constant's data (NULL
   * for activations, and for constants whose data was packed away: plan_step.consumed) */
  op_shape shape;
  int constant;       /* an initializer or folded constant: no arena block */
  size_t const_bytes; /* a constant's size, 0 otherwise */
  int graph_input;    /* index among graph inputs, or -1 */
  int graph_output;   /* index among graph outputs, or -1 */
  int has_quant;      /* a per-tensor scale and zero point are known */
  float scale;
  int32_t zero_point;
} plan_value;

/* An If branch (ir_guard): its steps run when value `cond` (a bool scalar) equals `side` and the
 * enclosing branch `parent` (0: none) runs. */
typedef struct plan_guard {
  int parent, cond, side;
  const char *if_name; /* the If node */
} plan_guard;

typedef struct plan {
  plan_value *values; /* [n_values] */
  int n_values;
  int *inputs; /* graph inputs (not initializers), value indices */
  int n_inputs;
  int *outputs; /* graph outputs, value indices */
  int n_outputs;
  plan_guard *guards; /* [n_guards]: guards[id - 1] */
  plan_step *steps;
  int n_steps;
  int max_inputs;  /* largest n_inputs of any step */
  int max_outputs; /* largest n_outputs of any step */
  /* [n_guards + 1]: why a branch whose condition is not known at load could not be planned
   * (NULL: it could). Reported at bind if the branch is sure to run, else at run if taken. */
  const q8rt_error **guard_errors;
  int n_guards;
  /* the plans of the Loops' bodies (models of their own, chained by next_sub), freed with the
   * model */
  struct q8rt_model *submodels;
} plan;

/* Turn the graph as the passes left it (pass_run's results) into steps: replace elementwise islands
 * by tables (tables = 1; pass_table_head/after decide), prepare each node (attribute checks, weight
 * packing, kernel choice), run it channels-last or insert layout changes where the layout
 * decisions (pass_layout_*) say, and infer shapes with the model's own (possibly symbolic) input
 * shapes, recording dtypes, shapes and known quantization parameters on the graph's values. Memory
 * for the plan comes from `pool`. */
q8rt_status plan_build(ir_graph *g, const pass_results *r, q8rt_pool *pool, q8rt_backend backend, uint32_t isa,
                       int tables, plan *out, q8rt_error *err);

#endif
