/* Graph passes that run between the loader and the planner. */
#ifndef Q8RT_PASSES_H
#define Q8RT_PASSES_H

#include "graph/ir.h"

/* Check the graph's structure and compute a topological order of its live nodes into `order`
 * (n_nodes entries, *count set to how many): every node input and graph output is produced by
 * something, no value is produced twice, there is no cycle. Errors name the node or value. */
q8rt_status pass_topo_order(const ir_graph *g, int *order, int *count, q8rt_error *err);

#endif
