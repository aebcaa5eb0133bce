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
 * are (DQ -> float op -> Q, exactly as the graph says). */
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

#endif
