/* Op front-ends: what an op does at load (prepare), when shapes are bound (infer, bind) and at run.
 *
 * prepare  runs once per node when the model loads: checks attributes and constant inputs,
 *          packs weights into `params` (model lifetime, immutable, shared by sessions) and
 *          names the kernel it chose and why.
 * infer    maps input shapes to output shapes. It runs at load with symbolic dims (-1, which
 *          it propagates) and again when a session binds concrete shapes, when it also fills
 *          `geom` (the per-session geometry the kernel needs: sizes, resolved pads, ...).
 * bind     (optional) runs once the session's arena is placed: builds what depends on buffer
 *          addresses (indirection buffers, XNNPACK operators) in `geom` and the step's workspace.
 * unbind   (optional) releases what bind created outside the arena.
 * run      computes. No checks, no allocation: everything was decided by prepare, infer and bind.
 *
 * Layouts: 4-D (and 3-D) activations are NCHW as ONNX has them, except between ops that ask for
 * NHWC (the fast convolutions); the planner inserts the transposes where the layout changes. */
#ifndef Q8RT_OP_H
#define Q8RT_OP_H

#include <pthreadpool.h>

#include "common/threadpool.h"
#include "graph/ir.h"
#include "q8rt-kernels.h"

#define Q8RT_GEOM_BYTES 512 /* room for any op's geometry record */
#define Q8RT_MAX_IO 64      /* most inputs (or outputs) a node may have */
#define Q8RT_VALUE_BYTES 64 /* small tensors (shape vectors) whose values are tracked at bind */

typedef struct op_shape {
  q8rt_dtype dtype;
  int rank; /* -1: unknown rank */
  int64_t dims[Q8RT_MAX_RANK];
  /* The tensor's contents when known before the run: constants, and small tensors computed from
   * shapes alone (Shape -> Gather -> Concat -> ... chains feeding Reshape). NULL otherwise. Ops
   * that take shape-like inputs read them here in infer. */
  const void *value;
} op_shape;

typedef struct op_tensor {
  void *data;
  const op_shape *shape;
} op_tensor;

/* What a plan step keeps of its node: all that bind-time shape inference and messages read. The
 * planner copies it into the model's pool, so nothing at bind or run reads the IR (freed after
 * load). During load, op_node_view gives the same fields pointing into the IR. */
typedef struct op_node {
  const char *name;
  const char *op_type;
  const char *domain;
  int opset;
  int n_inputs, n_outputs;
  /* value indices, -1 for an omitted optional input/output: infer reads only whether one is there */
  const int *inputs;
  const int *outputs;
  const char *note; /* what a pass rewrote (shown by --explain), or NULL */
  int if_guard;     /* an If: the id of its then_branch's guard (ir_node.if_guard), 0 otherwise */
} op_node;

/* op_node fields pointing into the IR node (valid while the IR is). */
static inline op_node op_node_view(const ir_node *n) {
  op_node d = {n->name,      n->op_type, n->domain,  n->opset, n->n_inputs,
               n->n_outputs, n->inputs,  n->outputs, n->note,  n->if_guard};
  return d;
}

/* QLinearConv made from DQ -> Conv -> Relu/Clip -> Q by the QDQ pass: FLOATS {lo, hi}, the
 * activation's real-valued bounds (+-inf where it has none), applied as the requantization clamp. */
#define OP_ATTR_FUSED_CLIP IR_ATTR_INTERNAL_PREFIX "fused_clip"

/* QLinearAdd made by the QDQ pass from int8 groups: INT 1 = compute with the arithmetic of the
 * uint8 twin (values ^ 0x80, zero points + 128), so an int8 QDQ model gives exactly the bytes of
 * its uint8 twin ^ 0x80. ORT's Add formula reads the raw values (not value - zero point), so it
 * depends on the encoding; ORT fuses QDQ groups only for uint8 on x86, and q8rt's int8 QDQ run is
 * defined as that fused uint8 run. QOperator QLinearAdd nodes keep ORT's int8 kernel formula. */
#define OP_ATTR_U8_FORMULA IR_ATTR_INTERNAL_PREFIX "u8_formula"

/* Cast to float32 made by the loader from a model's Cast to float16 (float16 values are float32 in
 * q8rt): INT 1 = round the result to float16 precision (nearest even) and keep it as float32, where
 * ONNX Runtime's CPU provider keeps the Cast's float16 result (see the loader's widen_float16). */
#define OP_ATTR_ROUND_F16 IR_ATTR_ROUND_F16

enum op_layout { OP_LAYOUT_ANY = 0, OP_LAYOUT_NCHW = 1, OP_LAYOUT_NHWC = 2 };

typedef struct op_prepare_ctx {
  const ir_graph *graph;
  const ir_node *node;
  const op_node *desc;  /* the node as its step keeps it (what infer is given) */
  q8rt_pool *pool;      /* model-lifetime memory for params */
  q8rt_backend backend; /* requested backend (AUTO picks) */
  uint32_t isa;         /* enum q8rt_isa flags of this CPU */
  const char *kernel;   /* out: name of the chosen kernel */
  const char *reason;   /* out: why it was chosen */
  int in_layout;        /* out: layout wanted for input 0 (default ANY) */
  int out_layout;       /* out: layout produced for output 0 (default: same as input 0) */
  /* in: input 0 exists only in NCHW and output 0 is read by graph outputs only (a single-conv
   * model's edges): an op that can run NCHW end to end saves both layout changes. */
  int edge_nchw;
  /* out: bit k set when the params keep what they need of constant input k (packed weights) and
   * never read the IR's tensor again: the planner frees it if no other step reads it. */
  unsigned consumed;
  /* in: the model's packed constants so far (op_pack_find / op_pack_keep), NULL where there is no
   * model to share with (constant folding) */
  struct op_pack_entry **packs;
  /* in: where a Loop keeps the model it makes of its body (chained, freed with the model), NULL
   * where there is no model to hold one (constant folding) */
  struct q8rt_model **submodels;
  /* in: 1 when the model replaces elementwise islands by tables (0: --no-tables / no_tables), for
   * the models a Loop or Scan makes of its body */
  int tables;
} op_prepare_ctx;

/* The iterations a running Loop has made, its own and those of the Loops nested in its body: a
 * chain from the innermost running Loop up to the outermost, each link held to
 * max_loop_iterations, so that nested Loops cannot multiply the cap (src/ops/loop.c). */
typedef struct op_loop_count {
  uint64_t n;
  struct op_loop_count *up; /* the Loop whose body runs this one, NULL: none */
} op_loop_count;

typedef struct op_exec_ctx {
  q8rt_threadpool *pool;           /* q8rt's own pool (q8rt_parallel_for); NULL: single thread */
  pthreadpool_t threadpool;        /* for XNNPACK operators only; NULL: single thread */
  size_t threads;                  /* >= 1 */
  const q8rt_allocator *allocator; /* for bind only */
  uint64_t max_loop_iterations;    /* a Loop's cap on its iterations (the session's option) */
  /* (NULL in a Loop body's session) a graph output whose first dim the step learns only as it runs
   * (a Loop's scan output that nothing else reads): bound with dim 0 of 0, written by the step
   * into a buffer of its own, then published here (`at`: the output's shape, out[k].shape) */
  void *session;
  void (*publish)(void *session, const op_shape *at, void *data, int64_t dim0);
  size_t max_arena_bytes;    /* the session's arena cap (0: none): a Loop's body sessions bind under it too */
  op_loop_count *loop_count; /* the Loops running this step's session as their body, NULL: none */
} op_exec_ctx;

typedef struct op_def {
  const char *op_type;
  const char *domain;
  int min_opset;
  /* 1 when run() reads only its inputs' shapes, never their data (Shape, Size): its output can
   * be computed when shapes are bound. */
  int shape_only;
  q8rt_status (*prepare)(op_prepare_ctx *ctx, void **params, q8rt_error *err);
  /* concrete = 1 when all input dims are known (session bind); geom may be NULL otherwise. */
  q8rt_status (*infer)(const void *params, const op_node *node, const op_shape *in, op_shape *out, int concrete,
                       void *geom, q8rt_error *err);
  /* Workspace bytes the step needs during its run (may be NULL = none). */
  size_t (*workspace)(const void *params, const void *geom, size_t threads);
  q8rt_status (*bind)(const void *params, void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx, q8rt_error *err);
  void (*unbind)(const void *params, void *geom);
  /* (optional) Called when a session binds, right after infer (geom filled) and before the arena
   * is placed: refuse shapes the session's limits rule out (ctx: the session's threads and caps;
   * no buffers yet) before their memory is allocated, e.g. a Loop's scan outputs sized from a trip
   * count past max_loop_iterations. */
  q8rt_status (*check_limits)(const void *params, const op_node *node, const void *geom, const op_exec_ctx *ctx,
                              q8rt_error *err);
  void (*run)(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
              const op_exec_ctx *ctx);
  /* (optional, instead of run) A run that can fail on what it meets at run time (a Loop: its
   * iteration cap, shapes that change between iterations); the session's run then fails with its
   * message. Such an op also has a bind hook, so neither constant folding nor the bind-time
   * evaluation of small values calls run. */
  q8rt_status (*run_status)(const void *params, void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                            const op_exec_ctx *ctx, q8rt_error *err);
  /* (optional) Apply a table to output 0 as it is written (the table pass's island that follows
   * this node): `table` holds channels x 256 bytes, channels 1 or output 0's channel count (NCHW
   * axis 1), and output 0 becomes `out_type`. Returns 1 when the op took it; the planner calls it
   * right after prepare, before the params are shared. */
  int (*fuse_table)(void *params, const uint8_t *table, size_t channels, q8rt_dtype out_type);
  /* (optional) Params to run this node with its activations channels-last (NHWC; NWC for 3-D):
   * the planner asks when its first non-constant input is NHWC and every non-constant input has
   * that input's rank (3 or 4). Then all of them are read NHWC and output 0 is written NHWC.
   * Returns NULL (and *why) when the node cannot; the params are a copy from `pool` (and *why, if
   * set, says how the op runs channels-last: --explain shows it). */
  const void *(*nhwc_params)(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool,
                             const char **why);
  /* 1: with the params nhwc_params gives, every output (not only output 0) is written
   * channels-last, each in its input's rank (Split). */
  int nhwc_all_outputs;
  /* Concat in place (session.c, plan_in_place): a producer writes its output straight into its
   * slice of a Concat's output and the Concat skips that input. Both are asked at bind, after
   * infer (geom is the step's, concrete), before the arena is placed.
   * (optional) in_place_input: whether input `slot` may be left in place, the other inputs
   * written around it: then it lies in output 0 as rows of *row_len elements, *row_stride
   * elements apart, the first at element *offset. commit = 0 asks only; commit = 1 records it
   * in geom (run then leaves that slice alone). */
  int (*in_place_input)(const void *params, void *geom, int slot, int commit, size_t *offset, size_t *row_len,
                        size_t *row_stride);
  /* (optional) strided_output: write output 0 as rows of its last axis `row_stride` elements
   * apart (dense when row_stride equals that axis). Returns 1 when the run will (recorded in
   * geom), 0 when it cannot. */
  int (*strided_output)(const void *params, void *geom, size_t row_stride);
  /* (optional) Whether, at this bound geometry, output 0 is input 0's bytes unchanged: run copies
   * the whole input as it is, and does nothing when the two are one buffer. The session may then
   * give them one buffer (session.c, plan_alias: a reshape of a value nothing else reads). */
  int (*same_bytes_output)(const void *params, const void *geom);
  /* Requantization moved upstream (plan.c, concat_tables): a Concat that maps input `slot`
   * through a 256-entry table gives it (input_table, commit = 0); its producer, when it writes
   * output 0 through a table of its own (or can), takes the composition table2[table1[v]]
   * (compose_table: the same bytes, one pass instead of two) and the Concat then copies that input
   * (input_table, commit = 1). Both at plan time, on the step's own params. */
  const uint8_t *(*input_table)(void *params, int slot, int commit);
  int (*compose_table)(void *params, const uint8_t *table, q8rt_pool *pool);
} op_def;

/* The planner's layout transpose (NCHW <-> NHWC for 8-bit tensors). */
extern const op_def q8rt_op_layout_transpose;
void *op_layout_transpose_params(q8rt_pool *pool, int to_nhwc, uint32_t isa, const char **kernel);
/* The best x8-transpose kernel of this CPU (byte moves: every variant gives the same bytes, so the
 * backend does not choose); *name: its name. */
q8rt_x8_transpose_ukernel_fn op_x8_transpose_kernel(uint32_t isa, const char **name);

/* The planner's view step (layout_view.c): node `inner` (a Reshape, Flatten, Squeeze, Unsqueeze,
 * Identity, Transpose, Shape or Size) run on input 0 stored channels-last (in_cl) or in its logical
 * order; output 0 is written channels-last (out_cl) or in its logical order. A Transpose passes
 * its perm (output axis j is input axis tperm[j], trank entries), other ops NULL. Use
 * q8rt_op_layout_view_shape for shape-only inner ops. */
extern const op_def q8rt_op_layout_view;
extern const op_def q8rt_op_layout_view_shape;
void *op_layout_view_params(q8rt_pool *pool, const op_def *inner, const void *inner_params, int in_cl, int out_cl,
                            const unsigned char *tperm, int trank);
/* Axis orders: physical axis i of a tensor holds logical axis p[i]. Channels-last of `rank`
 * (NCHW -> NHWC order: 0, 2, ..., rank-1, 1; the identity below rank 3). */
void op_perm_channels_last(int rank, unsigned char *p);
/* Whether a reshape from logical dims in_dims (stored in order pin) to out_dims (stored in order
 * qout) leaves the bytes as they are: 1 yes, 0 no, -1 unknown (a dim not known). */
int op_perm_reshape_view(const int64_t *in_dims, int in_rank, const unsigned char *pin, const int64_t *out_dims,
                         int out_rank, const unsigned char *qout);
/* Whether a tensor of logical dims `dims` stored in order p holds the bytes of its logical order:
 * 1 when the axes of size other than 1 keep their relative order in p (or the tensor is empty), 0
 * when two axes of size > 1 swap, -1 when it depends on dims not known (< 0). A layout change
 * between two such orders moves only axes of size 1: a copy. */
int op_perm_keeps_bytes(const int64_t *dims, int rank, const unsigned char *p);

/* The planner's table step (an island of elementwise ops on one 8-bit tensor): `table` holds
 * channels x 256 bytes; with channels > 1 they are indexed along physical axis `axis`. */
extern const op_def q8rt_op_lookup_table;
/* rank: the input's rank (-1: unknown), to name the channels-innermost kernel when axis is the last */
void *op_lookup_table_params(q8rt_pool *pool, const uint8_t *table, size_t channels, int axis, int rank,
                             q8rt_dtype out_type, q8rt_backend backend, uint32_t isa, const char **kernel);
/* The x8-lut kernel for this CPU and backend (*name: its name). */
q8rt_x8_lut_ukernel_fn op_lookup_table_kernel(q8rt_backend backend, uint32_t isa, const char **name);
/* The rows form of that kernel (its x8-lut.inc line's rows function). */
q8rt_x8_lut_rows_ukernel_fn op_lookup_table_rows_kernel(q8rt_backend backend, uint32_t isa);
/* The x8-lutc kernel (per-channel tables, channels innermost) for this CPU and backend (*name: its
 * name, if name is not NULL). */
q8rt_x8_lutc_ukernel_fn op_lookup_table_channels_kernel(q8rt_backend backend, uint32_t isa, const char **name);
/* y = table[x] over x viewed as [outer][channels][inner], table c for index c: fn (x8-lut) per
 * table, lutc (x8-lutc) when inner is 1 and there are several tables. */
void op_lookup_table_apply(q8rt_x8_lut_ukernel_fn fn, q8rt_x8_lutc_ukernel_fn lutc, const uint8_t *table,
                           size_t channels, size_t outer, size_t inner, const uint8_t *x, uint8_t *y);

/* QuantizeLinear's kernel for quantized type `qtype` (the first usable line of f32-qint-vcvt.inc;
 * *name: its symbol, NULL when the list has none for the type). */
q8rt_f32_qint_vcvt_ukernel_fn op_quantize_kernel(int32_t qtype, uint32_t isa, q8rt_backend backend, const char **name);
/* DequantizeLinear's kernel for quantized type `qtype` (the first usable line of qint-f32-vcvt.inc;
 * *name: its symbol, NULL when the list has none for the type). */
q8rt_qint_f32_vcvt_ukernel_fn op_dequantize_kernel(int32_t qtype, uint32_t isa, q8rt_backend backend,
                                                   const char **name);

/* The op that runs `node` at its opset, or NULL. */
const op_def *op_find(const ir_node *node);
/* The i-th registered op, NULL past the last (the structure-aware fuzzer draws op types here). */
const op_def *op_registry_at(size_t i);

/* Shared checks for scale / zero-point initializers, messages name node and input. */
q8rt_status op_require_constant(const ir_graph *g, const ir_node *n, int input, const char *what, const ir_tensor **out,
                                q8rt_error *err);
q8rt_status op_check_scales(const ir_node *n, const char *what, const ir_tensor *t, q8rt_error *err);

#endif /* Q8RT_OP_H */
