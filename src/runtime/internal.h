/* The objects behind the public handles. */
#ifndef Q8RT_RUNTIME_INTERNAL_H
#define Q8RT_RUNTIME_INTERNAL_H

#include "plan/plan.h"

struct q8rt_model {
  const q8rt_allocator *allocator; /* &meter.iface: everything the model holds is counted */
  q8rt_meter meter;                /* over the caller's allocator (copied), with max_memory_bytes */
  q8rt_pool pool;                  /* plan, packed weights, explain text */
  q8rt_pool tensors;               /* the constants steps read at bind or run (taken from the IR) */
  ir_graph *graph;                 /* only while loading: freed once the plan is built */
  plan plan;
  q8rt_backend backend;
  char *explain;
  size_t explain_len;
  ir_metadata *metadata; /* the model's metadata_props, copied from the IR */
  size_t n_metadata;
  int all_inputs_static;
  uint32_t isa;
  int is_body;                 /* a Loop body's model: its sessions bind when the Loop gives inputs */
  const char *name;            /* a Loop body's: its Loop node's name (explain) */
  struct q8rt_model *next_sub; /* a Loop body's model: the next one its parent holds (plan.submodels) */
};

typedef struct session_step {
  int in_base, out_base; /* offsets into session->views */
  size_t workspace_offset, workspace_bytes;
  int bound; /* the op's bind hook ran (unbind due) */
  int empty; /* every output has zero elements at the bound shapes: nothing to run */
  int skip;  /* in an If branch that cannot run at these shapes, or that could not bind */
  int check; /* in an If branch decided at run: its conditions are read before it runs */
  unsigned char geom[Q8RT_GEOM_BYTES] __attribute__((aligned(16)));
} session_step;

/* Run times kept per run mode for the choice of alone or shared runs (session.c, run_mode_*). */
#define Q8RT_RUN_HIST 3

/* The choice of whole runs alone or shared (session.c): runs since the bind, runs since the latest
 * of each mode, this run's mode and the chosen one (1: alone), whether the latest run was
 * contended, and the last uncontended run times of each mode (ms, 0: none yet). */
typedef struct q8rt_run_mode {
  unsigned runs, since[2];
  int cur, solo, contended;
  double ms[2][Q8RT_RUN_HIST];
} q8rt_run_mode;

struct q8rt_session {
  const q8rt_model *model;
  const q8rt_allocator *allocator; /* &meter.iface */
  q8rt_meter meter;
  int threads;
  int profile;
  size_t max_arena_bytes;

  op_shape *shapes; /* [n_values] concrete shapes once bound */
  size_t *offsets;  /* [n_values] arena offset; SIZE_MAX for constants */
  size_t *nbytes;   /* [n_values] */
  /* [n_values] Concat in place (session.c, plan_in_place): the value whose arena block holds this
   * one (-1: its own block), at in_place_off bytes from that block's start */
  int *in_place;
  size_t *in_place_off;
  session_step *steps; /* [n_steps] */
  op_tensor *views;    /* inputs then outputs of every step, pointing into the arena */
  int n_views;
  double *step_ms;                 /* [n_steps] when profiling */
  q8rt_step_threads *step_threads; /* [n_steps] when profiling */
  int *live_tmp;                   /* planner scratch, [n_values + n_steps] x 4 */
  unsigned char *valbuf;           /* [n_values][Q8RT_VALUE_BYTES]: small values computed at bind */
  size_t *block_size;              /* planner scratch, [n_values + n_steps] */
  size_t *block_off;               /* planner scratch, [n_values + n_steps] */
  /* the last arena placement's blocks (sizes of placed blocks, lifetimes) and total: a bind whose
   * blocks are all the same keeps block_off as it is (a Loop body bound again every iteration with
   * new small values, the same shapes) */
  size_t *memo_size;
  int *memo_live; /* [n_values + n_steps] x 2: first, last */
  size_t memo_total;
  int memo_valid;
  q8rt_threadpool *pool;   /* NULL: one thread */
  q8rt_run_mode rm;        /* whole runs alone or shared (session.c) */
  double rm_last_ms;       /* the latest run's time */
  double rm_t0, rm_cpu_t0; /* this run's start: clock and thread CPU time (0: no contention check) */
  size_t runs_ok, rm_done[2], rm_done_contended; /* since creation: successful runs, shared / alone, contended */
  pthreadpool_t threadpool;                      /* only when a step runs on XNNPACK */

  unsigned char *gstate;          /* [n_guards + 1] each If branch at the bound shapes (session.c: GUARD_*) */
  const q8rt_error **gerr;        /* [n_guards + 1] why a branch could not bind (reported if taken at run) */
  struct bind_error *bind_errors; /* the messages of this bind's broken branches (gerr points here) */

  void *arena;
  size_t arena_size;     /* bytes in use by the plan */
  size_t arena_capacity; /* bytes allocated (or provided) */
  int arena_external;
  int bound;
  int ran;
  int body;   /* a Loop body's session: pools borrowed */
  void **ext; /* [n_values] inputs taken in place (body sessions), NULL: none */
  uint64_t max_loop_iterations;
  op_loop_count *loop_count; /* a body session: the running Loops' iteration counts (run_body) */
  int shapes_only;           /* a body session that only infers shapes (loop_infer): no arena, no step binds */
};

/* The session's choice of whole runs alone or shared (session.c): the mode of run k since the
 * bind (1: alone) given the chosen one, and the chosen one after a run given the last two times of
 * each mode (ms[mode][0] the latest, 0: none). */
int q8rt_run_mode_pick(unsigned k, unsigned since_other, int solo, int contended, double alone_ms);
double q8rt_run_mode_typical(const double ms[Q8RT_RUN_HIST]);
double q8rt_run_mode_best(const double ms[Q8RT_RUN_HIST]);
int q8rt_run_mode_choose(int solo, const double ms[2][Q8RT_RUN_HIST]);
int q8rt_run_contended(double wall_ms, double cpu_ms);
/* Before a run: sets m->cur; returns 1 when the pool is to start afresh (q8rt_threadpool_fresh:
 * sharing after alone runs). After a successful run: its time and whether it was contended. */
int q8rt_run_mode_start(q8rt_run_mode *m);
void q8rt_run_mode_finish(q8rt_run_mode *m, double ms, int contended);

/* A Loop body's graph (taken: freed here on every path) as a model of its own: passes and plan as
 * for a loaded model, its memory from `allocator` (the parent model's). Graph inputs whose type
 * is unknown must have been given one. */
q8rt_status q8rt_model_from_graph(ir_graph *g, const q8rt_allocator *allocator, q8rt_backend backend, uint32_t isa,
                                  int tables, q8rt_model **out, q8rt_error *err);

/* Sessions that run a Loop's body (session.c). A body session shares the parent's thread pools
 * (borrowed: not freed with it), never times whole runs, and may take graph inputs in place: a
 * buffer of the caller's (outside its arena) that its steps read where the input would be.
 * q8rt_session_bind_inputs binds every graph input at once: shapes[i] (dtype ignored) with
 * shapes[i].value the input's contents when known to bind (copied, Q8RT_VALUE_BYTES at most) or
 * NULL, and ext[i] the input's buffer, or NULL for one in the arena (filled by the caller through
 * q8rt_session_input_data after the bind). */
q8rt_status q8rt_session_create_body(const q8rt_model *model, const q8rt_allocator *allocator,
                                     const op_exec_ctx *parent, q8rt_session **out, q8rt_error *err);
q8rt_status q8rt_session_bind_inputs(q8rt_session *s, const op_shape *shapes, void *const *ext, q8rt_error *err);
void *q8rt_session_input_data(const q8rt_session *s, int index);
/* output k of the last run (valid until the next bind or run) and its shape at the bound shapes */
const void *q8rt_session_output_data(const q8rt_session *s, int index, const op_shape **shape);
q8rt_status q8rt_session_run_body(q8rt_session *s, const op_exec_ctx *parent, q8rt_error *err);

#endif
