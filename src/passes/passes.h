/* Graph passes that run between the loader and the planner. */
#ifndef Q8RT_PASSES_H
#define Q8RT_PASSES_H

#include "graph/ir.h"

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

/* Remove nodes none of whose outputs is read by a node or is a graph output. */
void pass_remove_dead_nodes(ir_graph *g);

#endif
