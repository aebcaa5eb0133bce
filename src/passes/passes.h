/* Graph passes that run between the loader and the planner. */
#ifndef Q8RT_PASSES_H
#define Q8RT_PASSES_H

#include "graph/ir.h"
#include "ops/op.h"

/* Check the graph's structure and compute a topological order of its live nodes into `order`
 * (n_nodes entries, *count set to how many): every node input and graph output is produced by
 * something, no value is produced twice, there is no cycle. Errors name the node or value. */
q8rt_status pass_topo_order(const ir_graph *g, int *order, int *count, q8rt_error *err);

/* QDQ fusion: DequantizeLinear -> Conv -> QuantizeLinear (weights through a per-axis or
 * per-tensor DequantizeLinear of a constant, bias through a DequantizeLinear of an int32
 * constant or a float constant) becomes one QLinearConv, run by the same int8 kernels as the
 * QOperator format. A bias whose scale is not x_scale * w_scale[c] (or a float bias) is
 * quantized at load with that scale, round half to even. Nodes that do not match stay as they
 * are (DQ -> float op -> Q, exactly as the graph says). Last, a per-tensor DequantizeLinear
 * (positive scale) feeding a MaxPool whose windows all hold an input element moves after it, so
 * the MaxPool runs on the 8-bit data (exact: dequantizing is non-decreasing). */
q8rt_status pass_fuse_qdq(ir_graph *g, q8rt_error *err);

/* Weights reached through shape ops, run right before pass_fuse_qdq: a Transpose, Reshape,
 * Squeeze, Unsqueeze or Flatten between a constant 8-bit weight and its DequantizeLinear is folded
 * into the constant; one between a weight's DequantizeLinear and a Conv becomes shape-op(W) at
 * load plus a DequantizeLinear with the per-axis axis moved along (Transpose: the axis's position
 * in perm; the Reshape family: only when the dims before it keep their product and it stays a dim
 * of its own). When the channel axis is merged or split, the graph stays as written (exact float
 * path) and the Conv's note says why. */
q8rt_status pass_fold_qdq_weights(ir_graph *g, q8rt_error *err);

/* Constant folding, on the live nodes in topological `order` (count of them): a node whose inputs
 * are all constants runs once here with the op code of the run (pass_eval) and its outputs become
 * the graph's constants (dtype, shape and known quantization set on them); folded[node] = 1 for
 * those, 0 for the rest (folded has n_nodes entries). A branch whose condition is a constant by
 * then is folded too; nodes of a branch ruled out at load are skipped; a node of a branch decided
 * later that fails to fold stays unfolded (its error is the branch's). Scratch from `pool`. */
q8rt_status pass_fold_constants(ir_graph *g, const int *order, int count, q8rt_pool *pool, q8rt_backend backend,
                                uint32_t isa, unsigned char *folded, q8rt_error *err);

/* The shape of a value as the model knows it (constants: exact, with the data; others: as
 * declared or inferred, may hold -1). */
void pass_value_shape(const ir_value *v, op_shape *out);

/* Record on the values of node n the per-tensor quantization its scalar constant scale/zero point
 * inputs give (QLinearConv x and y, QuantizeLinear y, DequantizeLinear x), for tensor info. */
void pass_annotate_quant(ir_graph *g, const ir_node *n);

/* What the load knows of a branch (ir_guard id): DEAD when a condition on its chain is a constant
 * that rules it out, LIVE when every one is a constant that selects it, else OPEN (decided at
 * bind or run). */
enum { PASS_GUARD_OPEN = 0, PASS_GUARD_DEAD = 1, PASS_GUARD_LIVE = 2 };
int pass_guard_at_load(const ir_graph *g, int id);

/* Layout analysis for float stretches between quantized ops (layout.c): ok[node] = 1 when the
 * node has a channels-last form and every live reader of its outputs, up to the QuantizeLinear
 * nodes (constant scalar scale) that end the stretch, has one too; 0 for a node with a graph
 * output or whose stretch reaches an NCHW-only op. `order`: the live nodes in topological order
 * (count of them); nodes with skip[node] set (folded) neither count nor read. ok has n_nodes
 * entries; scratch comes from the graph's allocator and is released. The planner lets a node that reads or makes float
 * data run channels-last only when ok says so: otherwise it would need float transposes. */
q8rt_status pass_float_nhwc_ok(const ir_graph *g, const int *order, int count, const unsigned char *skip,
                               unsigned char *ok, q8rt_error *err);

/* ---- layout decisions (layout.c) -----------------------------------------------------------------
 * Channels-last spreads greedily from the ops that want it, as the planner walks the live nodes in
 * topological order: whether a node can run channels-last depends on what its prepare chose
 * (op_prepare_ctx.in_layout, op_def.nhwc_params), so the planner asks these functions node by node
 * and turns their answers into steps, twin values and layout changes. They decide; the planner
 * records in a pass_layout how each value is stored so far: a logical value v (ONNX's, NCHW for
 * 4-D) exists in its logical order (nchw[v]: v itself, or -1 when never written so) and/or
 * channels-last (nhwc[v]: a twin value the planner added, stored in op_perm_channels_last order,
 * or -1). Both arrays have `cap` entries (the twins have entries too). */
typedef struct pass_layout {
  int *nchw;
  int *nhwc;
  int cap;
} pass_layout;

/* Whether node n sits at both edges of the graph: input 0 exists only in NCHW (a graph input, or
 * made by an NCHW op) and output 0 is a graph output no live node reads. A convolution that can run
 * NCHW end to end then needs no layout change at all (the single-conv models people benchmark):
 * the planner passes this to prepare (op_prepare_ctx.edge_nchw). */
int pass_layout_edge_nchw(const ir_graph *g, const ir_node *n, const int *pos, const pass_layout *ls);

/* For a node whose op has a channels-last form (op_def.nhwc_params) and that asked for NCHW input:
 * 1 when the planner should run it channels-last (at least as many of its non-constant inputs are
 * stored channels-last as are stored NCHW only, all of rank 3 or 4 alike, and float data made or
 * read stays in a stretch that can all run so: float_ok, pass_float_nhwc_ok); 0 otherwise, with
 * *why the reason the layout change before it states (NULL: none in particular). */
int pass_layout_try_nhwc(const ir_graph *g, const ir_node *n, const pass_layout *ls, int float_ok, const char **why);

/* The layout (OP_LAYOUT_NCHW/NHWC) the step reads input k (value v) in: what prepare asked for
 * input 0 (in_layout), NCHW for the others, channels-last for every non-constant input of a node
 * run channels-last (nhwc_all); a constant, or an input the op takes in any layout, as it is stored. */
int pass_layout_input(const ir_graph *g, const pass_layout *ls, int v, int k, int in_layout, int nhwc_all);

/* Logical (NCHW order) dims of channels-last dims `phys` of rank >= 2. */
void pass_layout_logical_dims(const int64_t *phys, int rank, int64_t *logical);

/* Whether a layout change of physical value `from` (to channels-last, or back) moves only axes of
 * size 1, so that it is a copy: 1 yes (dims known at load), 0 no, -1 unknown at load (the step
 * checks at bind). dims: the logical dims as text ("1x200x1x1"; empty when the rank is not 3-8). */
int pass_layout_change_copies(const ir_value *from, int to_nhwc, char *dims, size_t dims_size);

/* Why a layout change is made (--explain): for `consumer` (NULL: the graph outputs), which runs in
 * NCHW because of consumer_why (NULL: it has no channels-last form); `copies` and `dims` as
 * pass_layout_change_copies gave them. */
void pass_layout_change_reason(char *buf, size_t size, const ir_node *consumer, const char *consumer_why, int to_nhwc,
                               int copies, const char *dims);

/* Logical axis (NCHW order) -> the axis of the stored order (channels-last when nhwc). */
int pass_layout_physical_axis(int axis, int rank, int nhwc);

/* Views: a Reshape, Flatten, Squeeze, Unsqueeze, Identity, Transpose (or a shape read: Shape,
 * Size) of a channels-last input whose output, channels-last or in its logical order, holds the
 * input's bytes unchanged runs as a copy (q8rt_op_layout_view) and needs no layout change first.
 * pass_layout_view_candidate (before prepare) fills kind, rank and in_cl and returns 1 when the
 * node may be one; pass_layout_view_decide (given the node's logical input and output shapes from
 * its infer) fills the rest and returns 1 when it is one. A reshape whose dims are not known at
 * load is checked at bind (the step gathers if the bound shapes break it). */
enum { PASS_VIEW_NONE = 0, PASS_VIEW_MOVE = 1, PASS_VIEW_TRANSPOSE = 2, PASS_VIEW_SHAPE = 3 };
typedef struct pass_view {
  int kind;
  int rank;                           /* input 0's */
  int in_cl;                          /* input 0 is read channels-last (else in its logical order) */
  int out_cl;                         /* output 0 is written channels-last (a twin value) */
  int as_view;                        /* the bytes as they are (a copy); 0: a Transpose run as one strided copy */
  unsigned char tperm[Q8RT_MAX_RANK]; /* a Transpose's perm (output axis j is input axis tperm[j]) */
  const char *how;                    /* for --explain */
} pass_view;
int pass_layout_view_kind(const ir_node *n, const op_def *op);
int pass_layout_view_candidate(const ir_graph *g, const ir_node *n, const op_def *op, const pass_layout *ls,
                               pass_view *v);
int pass_layout_view_decide(const ir_graph *g, const ir_node *n, const int *pos, const unsigned char *done,
                            const op_shape *lin, const op_shape *lout, pass_view *v);

/* ConvInteger -> Cast(float) -> Mul(one-element scale) [-> Add(per-channel constant bias)], as
 * ONNX Runtime's dynamic quantizer writes it, becomes one ConvIntegerToFloat node (domain q8rt)
 * whose output stage does the same float32 operations in the same order (integer_fuse.c). Runs
 * on the live nodes in topological `order` after constant folding; the fused node takes the
 * chain's last node's place, the others are removed and marked in `done`. */
q8rt_status pass_fuse_integer_outputs(ir_graph *g, const int *order, int count, unsigned char *done, q8rt_error *err);

/* Float Conv -> elementwise float32 nodes on its output and constants (per-tensor or per-channel)
 * become one FusedConv node (domain q8rt) whose output stage runs those nodes' operations in
 * order on each block the conv computes (float_fuse.c). Same contract as
 * pass_fuse_integer_outputs. */
#define Q8RT_FCONV_MAX_OPS 8
q8rt_status pass_fuse_float_conv_outputs(ir_graph *g, const int *order, int count, unsigned char *done,
                                         q8rt_error *err);

/* Slice -> QuantizeLinear per block offset -> Concat (or a copying QLinearConcat), the Focus
 * prelude of YOLO-style detectors, becomes one QuantizeSpaceToDepth node (domain q8rt) writing
 * channels-last (quantize_s2d_fuse.c). Same contract as pass_fuse_integer_outputs. */
q8rt_status pass_fuse_quantize_space_to_depth(ir_graph *g, const int *order, int count, unsigned char *done,
                                              q8rt_error *err);
/* Remove nodes none of whose outputs is read by a node or is a graph output. */
void pass_remove_dead_nodes(ir_graph *g);

/* ---- running a node at load (constant folding, tables) ---------------------------------------- */
typedef struct pass_eval {
  const op_def *op;
  void *params;
  op_node desc; /* the node's fields (op_node_view) */
  op_shape out[Q8RT_MAX_IO];
  unsigned char geom[Q8RT_GEOM_BYTES] __attribute__((aligned(16)));
  void *workspace;
} pass_eval;
/* op_find + prepare (params from `pool`). */
q8rt_status pass_eval_prepare(const ir_graph *g, const ir_node *n, q8rt_pool *pool, q8rt_backend backend, uint32_t isa,
                              pass_eval *e, q8rt_error *err);
/* infer with concrete input shapes: fills e->out and the geometry, workspace from `pool`. */
q8rt_status pass_eval_infer(pass_eval *e, const ir_node *n, const op_shape *in, q8rt_pool *pool, q8rt_error *err);
void pass_eval_run(const pass_eval *e, const op_tensor *in, op_tensor *out, const q8rt_allocator *allocator);

/* ---- tables: an island of elementwise nodes on one 8-bit tensor becomes one lookup ----------------
 * The island of value x: the largest connected group of elementwise nodes (QLinearAdd/Mul with a
 * constant or another branch of x, QLinearSigmoid/LeakyRelu, DequantizeLinear -> float ops ->
 * QuantizeLinear, ...) whose only non-constant input is x and which has one output y read outside
 * it, 8-bit like x. Every value inside has x's shape; a constant or quantization parameter that
 * varies along one axis makes the tables per index of that axis (at most 1024 of them). The table is the island's own
 * nodes run at load on every byte (for every shape class the run could see: the arithmetic of
 * QLinearAdd depends on which of its input dims are 1), so it is exact by construction. */
typedef struct table_island {
  int x, y;
  int *nodes; /* node indices, topological order */
  int n_nodes;
  int axis; /* logical axis of per-channel tables, -1: one table */
  size_t channels;
  uint8_t *table; /* channels x 256 bytes */
  q8rt_dtype out_type;
  const char *replaced; /* the replaced nodes' names, for --explain */
} table_island;

/* Find and evaluate the island of value x among the nodes not marked in `done` (pos: the nodes'
 * topological positions, -1 for dead ones). *found = 0 (and *why set when there was a candidate
 * that does not qualify) when there is none. Tables and names come from `pool`. */
q8rt_status pass_table_island(ir_graph *g, int x, const int *pos, const unsigned char *done, q8rt_pool *pool,
                              q8rt_backend backend, uint32_t isa, table_island *out, int *found, const char **why,
                              q8rt_error *err);
/* 1 when node n could belong to an island (its op is elementwise and tabulable). */
int pass_table_candidate(const ir_node *n);
/* 1 when node n, reading value x, could head an island whose tables follow at most one axis of x
 * (its constants and parameters broadcast along one known axis): then it runs as a table in any
 * layout, whatever its constants. A guess for the layout pass; pass_table_island decides. */
int pass_table_may_take(const ir_graph *g, const ir_node *n, int x);

/* The table decisions, asked by the planner as it walks the live nodes in topological order (pos,
 * as above; done: the nodes folded, planned or claimed by a table so far). The planner turns what
 * they decide into steps and then claims the island's nodes (pass_table_claim).
 * pass_table_head: *found = 1 when node ni heads an island: ni is a candidate whose only
 *   non-constant input x has an island holding ni. The island becomes one LookupTable step.
 * pass_table_after: *found = 1 when the output stage of node ni (just planned, an op that can apply
 *   a table as it writes) may absorb the island of its output 0 x: x is no graph output, every live
 *   reader of x is in the island (x is then never written) and the tables are one or per channel
 *   along axis 1 (the op's output channels). The planner offers it to the op (op_def.fuse_table);
 *   if the op declines, the island's head makes a table step later. */
q8rt_status pass_table_head(ir_graph *g, int ni, const int *pos, const unsigned char *done, q8rt_pool *pool,
                            q8rt_backend backend, uint32_t isa, table_island *out, int *found, q8rt_error *err);
q8rt_status pass_table_after(ir_graph *g, int ni, const int *pos, const unsigned char *done, q8rt_pool *pool,
                             q8rt_backend backend, uint32_t isa, table_island *out, int *found, q8rt_error *err);
/* Mark the island's nodes done: the step that applies its table replaces them. */
void pass_table_claim(const table_island *t, unsigned char *done);

/* ---- the pipeline (pipeline.c) -------------------------------------------------------------------
 * Everything between the loader and the planner, in order: QDQ weights through shape ops, QDQ
 * fusion, dead nodes, the topological order, constant folding, the integer and float conv
 * output-stage fusions and the QuantizeSpaceToDepth fusion (not on the reference backend: it runs
 * the graph as written) and where
 * float data may stay channels-last. The planner is given the results and turns them into steps,
 * asking the table and layout decisions above node by node. Arrays come from `pool`. */
typedef struct pass_results {
  int *order; /* the live nodes in topological order */
  int count;
  int *pos;                /* [n_nodes] position in order, -1 for dead nodes */
  unsigned char *done;     /* [n_nodes] folded or fused away: no step of their own */
  unsigned char *float_ok; /* [n_nodes] pass_float_nhwc_ok */
} pass_results;
q8rt_status pass_run(ir_graph *g, q8rt_pool *pool, q8rt_backend backend, uint32_t isa, pass_results *out,
                     q8rt_error *err);

#endif
