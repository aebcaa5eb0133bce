/* q8rt's graph IR: what the loader produces and everything after it consumes.
 *
 * Nothing here knows about protobuf. All memory of a graph lives in its two pools and is released
 * by ir_graph_free: `tensors` holds the constant tensors (records and data), `pool` the rest
 * (names, attributes, ...). Once the plan is built, the model takes the tensors pool (the steps'
 * params may point at constants they read) and frees the IR. Values and nodes are addressed by
 * index; an optional input is -1 (ONNX's empty input name). */
#ifndef Q8RT_IR_H
#define Q8RT_IR_H

#include <string.h>

#include "../common/common.h"

typedef struct ir_tensor {
  q8rt_dtype dtype;
  int rank;
  int64_t dims[Q8RT_MAX_RANK];
  int64_t count; /* number of elements */
  size_t nbytes; /* count * dtype size */
  void *data;    /* host-endian, C order, 64-byte aligned, pool memory */
  int keep;      /* scratch of the planner's release pass: a step or an output still reads the data */
  int from_f16;  /* float32 data the loader widened from a model's float16 tensor */
} ir_tensor;

typedef enum ir_attr_type {
  IR_ATTR_UNDEFINED = 0,
  IR_ATTR_FLOAT = 1,
  IR_ATTR_INT = 2,
  IR_ATTR_STRING = 3,
  IR_ATTR_TENSOR = 4,
  IR_ATTR_GRAPH = 5, /* present only so the loader can name it when refusing (If's are inlined) */
  IR_ATTR_FLOATS = 6,
  IR_ATTR_INTS = 7,
  IR_ATTR_STRINGS = 8,
} ir_attr_type;

/* Attributes whose names begin with this prefix are q8rt's own: a pass that rewrites a node states
 * what the node's front-end must do differently in them (a fused activation, an output stage), so
 * the IR has no op-specific fields. The loader refuses them on nodes outside the q8rt domain: a
 * model cannot set them on an ONNX op. */
#define IR_ATTR_INTERNAL_PREFIX "q8rt_"
/* INT on a Cast to float32 the loader made from a model's Cast to float16: 1 = round the result to
 * float16 precision (the Cast op's OP_ATTR_ROUND_F16) */
#define IR_ATTR_ROUND_F16 IR_ATTR_INTERNAL_PREFIX "round_f16"

typedef struct ir_attr {
  const char *name;
  ir_attr_type type;
  float f;
  int64_t i;
  const char *s; /* NUL-terminated; s_len bytes (strings may hold NULs in ONNX: checked) */
  size_t s_len;
  const float *floats;
  const int64_t *ints;
  size_t count; /* element count of floats / ints */
  ir_tensor *t;
} ir_attr;

typedef struct ir_quant {
  int known; /* 1 when a per-tensor scale/zero point are known */
  float scale;
  int32_t zero_point;
} ir_quant;

typedef struct ir_value {
  const char *name;
  q8rt_dtype dtype;                      /* UNDEFINED until inferred */
  int rank;                              /* -1 if unknown */
  int64_t dims[Q8RT_MAX_RANK];           /* -1 for a symbolic dimension */
  const char *dim_params[Q8RT_MAX_RANK]; /* symbolic names from the model (or NULL) */
  ir_tensor *constant;                   /* non-NULL for initializers and folded constants */
  int producer;                          /* node index, or -1 for graph inputs and constants */
  int graph_input;                       /* index among graph inputs, or -1 */
  int graph_output;                      /* index among graph outputs, or -1 */
  int consumers;                         /* number of node inputs that read this value */
  int scope;                             /* guard of the If branch that defines it, 0: the main graph */
  ir_quant quant;
  int f16; /* float16 in the model (declared, a float16 constant, or computed from float16 values); q8rt holds it
            * as float32 (the loader's float16 pass sets it) */
} ir_value;

typedef struct ir_node {
  const char *name; /* never NULL: the loader names anonymous nodes "<op>_<index>" */
  const char *op_type;
  const char *domain; /* "" for ai.onnx */
  int opset;          /* opset version of the node's domain */
  int n_inputs;
  int *inputs; /* value indices, -1 for an omitted optional input */
  int n_outputs;
  int *outputs; /* value indices, -1 for an omitted optional output */
  int n_attrs;
  ir_attr *attrs;
  int removed;      /* set by passes that fold a node away */
  const char *note; /* set by passes that rewrote the node (shown by --explain), or NULL */
  int guard;        /* 0, or the If branch (ir_guard id) the node was inlined from: it runs only there */
  int if_guard;     /* an If: the id of its then_branch's guard (else_branch: if_guard + 1); 0 otherwise */
  /* a Loop: its body as a graph of its own (inputs: iteration number, condition, the carried values,
   * then the outer values it reads, in the order of the node's inputs past the ONNX ones). Owned by
   * the node until the Loop's prepare takes it (ir_graph_free frees what is left). */
  struct ir_graph *body;
  /* a Loop: its carried values (the ONNX inputs after M and cond); a Scan: its state values (the
   * body's first inputs, then its scan inputs' slices, then the outer values, as for a Loop) */
  int loop_carried;
} ir_node;

/* The subgraphs of If are inlined into the one graph: a branch's nodes carry the branch's guard
 * and run only when the If's condition (a bool scalar) equals `side` and the enclosing guard
 * holds. The If node itself (inputs: cond, then outputs..., else outputs...) selects the taken
 * branch's outputs. Ids are 1-based (0: no guard); a parent's id is smaller than its children's. */
#define IR_MAX_SUBGRAPH_DEPTH 8
typedef struct ir_guard {
  int parent;  /* enclosing guard id, 0 for a branch of an If of the main graph */
  int cond;    /* value index of the If's condition */
  int side;    /* 1: then_branch, 0: else_branch */
  int if_node; /* the If node */
  int depth;   /* 1 for the branches of a main-graph If */
} ir_guard;

typedef struct ir_opset {
  const char *domain;
  int64_t version;
} ir_opset;

/* ModelProto.metadata_props entry; both strings NUL-terminated copies, value_len excludes the NUL
 * (a value may hold NUL bytes of its own). */
typedef struct ir_metadata {
  const char *key;
  const char *value;
  size_t value_len;
} ir_metadata;

typedef struct ir_graph {
  q8rt_pool pool;
  q8rt_pool tensors; /* ir_tensor records and data (ir_tensor_create) */
  const q8rt_allocator *allocator;
  const char *name;

  ir_value *values;
  int n_values, cap_values;
  /* name -> value index, open addressing (FNV-1a, linear probing), slots hold index + 1 (0: empty);
     at most half full, so finding a name does not scan every value (a model of 10^5 values loaded
     in O(n^2) string compares before). */
  int *value_index;
  int cap_value_index; /* a power of two, or 0 */
  ir_node *nodes;
  int n_nodes, cap_nodes;

  int *inputs; /* graph inputs that are not initializers, value indices */
  int n_inputs;
  int *outputs; /* value indices */
  int n_outputs;

  ir_opset *opsets;
  int n_opsets;
  int64_t ir_version;

  ir_metadata *metadata;
  size_t n_metadata;

  ir_guard *guards; /* guards[id - 1] */
  int n_guards, cap_guards;
  int is_body; /* a Loop's body (its outputs are read by the Loop, not by the caller) */
  /* node inputs the loader's float16 input/output rewiring visited: linear in the graph (one pass
   * for all float16 inputs and outputs), which tests/unit/test_loader.c bounds */
  size_t f16_rewire_steps;
} ir_graph;

/* Create an empty graph whose memory comes from `allocator`. NULL on allocation failure. */
ir_graph *ir_graph_create(const q8rt_allocator *allocator);
void ir_graph_free(ir_graph *g);
/* Move the graph's tensors pool to *out (the caller frees it with q8rt_pool_free): every
 * ir_tensor stays valid after ir_graph_free. */
void ir_graph_take_tensors(ir_graph *g, q8rt_pool *out);

/* Find a value by name; -1 if absent. */
int ir_graph_find_value(const ir_graph *g, const char *name);
/* Find or add the value with that name (dtype undefined, rank -1). -1 on allocation failure. */
int ir_graph_intern_value(ir_graph *g, const char *name);
/* Append a node (zeroed; caller fills fields from the pool). -1 on allocation failure. */
int ir_graph_add_node(ir_graph *g);

/* Append a guard (zeroed); its id (1-based), or -1 on allocation failure. */
int ir_graph_add_guard(ir_graph *g);
static inline const ir_guard *ir_graph_guard(const ir_graph *g, int id) { return &g->guards[id - 1]; }
/* Whether guard `outer` (0: the main graph) is `inner` or encloses it. */
int ir_guard_within(const ir_graph *g, int inner, int outer);

/* Allocate a constant tensor in the graph's pool. Checks the element count for overflow. */
/* Tensors of at least this many bytes live in pool chunks of their own (ir_tensor_release). */
#define IR_OWN_CHUNK_BYTES 4096
/* Frees the data of a large tensor that nothing will read again (its consumers hold packed
 * copies); data becomes NULL. Smaller tensors are left as they are. */
void ir_tensor_release(ir_graph *g, ir_tensor *t);
q8rt_status ir_tensor_create(ir_graph *g, q8rt_dtype dtype, int rank, const int64_t *dims, ir_tensor **out,
                             q8rt_error *err);

/* Opset version imported for `domain` ("" and "ai.onnx" are the same), or 0 if not imported. */
int64_t ir_graph_opset(const ir_graph *g, const char *domain);

/* ---- attributes ---------------------------------------------------------------------------- */
const ir_attr *ir_node_attr(const ir_node *n, const char *name);
/* Typed getters: return the default when absent; fail (naming node and attribute) when present
 * with the wrong type. */
q8rt_status ir_attr_int(const ir_node *n, const char *name, int64_t def, int64_t *out, q8rt_error *err);
q8rt_status ir_attr_float(const ir_node *n, const char *name, float def, float *out, q8rt_error *err);
q8rt_status ir_attr_string(const ir_node *n, const char *name, const char *def, const char **out, q8rt_error *err);
/* ints: *count = 0 and *out = NULL when absent. */
q8rt_status ir_attr_ints(const ir_node *n, const char *name, const int64_t **out, size_t *count, q8rt_error *err);

/* Input value i of node n, or NULL if absent/omitted. */
static inline ir_value *ir_node_input(const ir_graph *g, const ir_node *n, int i) {
  return (i < n->n_inputs && n->inputs[i] >= 0) ? &g->values[n->inputs[i]] : NULL;
}
static inline ir_value *ir_node_output(const ir_graph *g, const ir_node *n, int i) {
  return (i < n->n_outputs && n->outputs[i] >= 0) ? &g->values[n->outputs[i]] : NULL;
}
/* The live node producing value v, or NULL (v < 0, a graph input or constant, or a removed node). */
static inline ir_node *ir_value_producer(ir_graph *g, int v) {
  if (v < 0 || g->values[v].producer < 0) return NULL;
  ir_node *n = &g->nodes[g->values[v].producer];
  return n->removed ? NULL : n;
}
/* Whether n (may be NULL) is a node of ai.onnx op `op`. */
static inline int ir_is_onnx_op(const ir_node *n, const char *op) {
  return n != NULL && n->domain[0] == '\0' && strcmp(n->op_type, op) == 0;
}

#endif /* Q8RT_IR_H */
