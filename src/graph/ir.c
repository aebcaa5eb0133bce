#include "ir.h"

#include <stdint.h>
#include <string.h>

ir_graph *ir_graph_create(const q8rt_allocator *allocator) {
  ir_graph *g = q8rt_calloc(allocator, 1, sizeof(*g));
  if (g == NULL) return NULL;
  g->allocator = allocator;
  q8rt_pool_init(&g->pool, allocator);
  q8rt_pool_init(&g->tensors, allocator);
  g->name = "";
  return g;
}

void ir_graph_free(ir_graph *g) {
  if (g == NULL) return;
  const q8rt_allocator *a = g->allocator;
  for (int i = 0; i < g->n_nodes; i++) ir_graph_free(g->nodes[i].body); /* depth <= IR_MAX_SUBGRAPH_DEPTH */
  q8rt_free(a, g->values, (size_t)g->cap_values * sizeof(ir_value));
  q8rt_free(a, g->value_index, (size_t)g->cap_value_index * sizeof(int));
  q8rt_free(a, g->nodes, (size_t)g->cap_nodes * sizeof(ir_node));
  q8rt_free(a, g->guards, (size_t)g->cap_guards * sizeof(ir_guard));
  q8rt_pool_free(&g->pool);
  q8rt_pool_free(&g->tensors);
  q8rt_free(a, g, sizeof(*g));
}

void ir_graph_take_tensors(ir_graph *g, q8rt_pool *out) {
  *out = g->tensors;
  q8rt_pool_init(&g->tensors, g->allocator);
}

/* Grow a heap array to hold at least `need` elements (doubling). */
static bool grow(const q8rt_allocator *a, void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return true;
  if (need > (1 << 26)) return false;
  int ncap = *cap ? *cap : 16;
  while (ncap < need) ncap *= 2;
  void *p = q8rt_calloc(a, (size_t)ncap, elem);
  if (p == NULL) return false;
  if (*arr != NULL) {
    memcpy(p, *arr, (size_t)*cap * elem);
    q8rt_free(a, *arr, (size_t)*cap * elem);
  }
  *arr = p;
  *cap = ncap;
  return true;
}

int ir_graph_add_guard(ir_graph *g) {
  if (!grow(g->allocator, (void **)&g->guards, &g->cap_guards, g->n_guards + 1, sizeof(ir_guard))) return -1;
  memset(&g->guards[g->n_guards], 0, sizeof(ir_guard));
  return ++g->n_guards;
}

int ir_guard_within(const ir_graph *g, int inner, int outer) {
  for (int id = inner; id > 0; id = ir_graph_guard(g, id)->parent) {
    if (id == outer) return 1;
  }
  return outer == 0;
}

static uint32_t name_hash(const char *name) {
  uint32_t h = 2166136261u;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) h = (h ^ *c) * 16777619u;
  return h;
}

int ir_graph_find_value(const ir_graph *g, const char *name) {
  if (g->cap_value_index == 0) return -1;
  const uint32_t mask = (uint32_t)g->cap_value_index - 1;
  for (uint32_t slot = name_hash(name) & mask;; slot = (slot + 1) & mask) {
    const int v = g->value_index[slot] - 1;
    if (v < 0) return -1;
    if (strcmp(g->values[v].name, name) == 0) return v;
  }
}

static void index_insert(int *index, int cap, const char *name, int v) {
  const uint32_t mask = (uint32_t)cap - 1;
  uint32_t slot = name_hash(name) & mask;
  while (index[slot] != 0) slot = (slot + 1) & mask;
  index[slot] = v + 1;
}

/* Room in the name index for one more value (kept at most half full). */
static bool index_reserve(ir_graph *g) {
  if (2 * (g->n_values + 1) <= g->cap_value_index) return true;
  const int cap = g->cap_value_index ? 2 * g->cap_value_index : 64;
  if (cap > (1 << 28)) return false;
  int *index = q8rt_calloc(g->allocator, (size_t)cap, sizeof(int));
  if (index == NULL) return false;
  for (int v = 0; v < g->n_values; v++) index_insert(index, cap, g->values[v].name, v);
  q8rt_free(g->allocator, g->value_index, (size_t)g->cap_value_index * sizeof(int));
  g->value_index = index;
  g->cap_value_index = cap;
  return true;
}

int ir_graph_intern_value(ir_graph *g, const char *name) {
  int idx = ir_graph_find_value(g, name);
  if (idx >= 0) return idx;
  if (!grow(g->allocator, (void **)&g->values, &g->cap_values, g->n_values + 1, sizeof(ir_value))) return -1;
  if (!index_reserve(g)) return -1;
  const char *copy = q8rt_pool_strdup(&g->pool, name);
  if (copy == NULL) return -1;
  ir_value *v = &g->values[g->n_values];
  memset(v, 0, sizeof(*v));
  v->name = copy;
  v->rank = -1;
  v->producer = -1;
  v->graph_input = -1;
  v->graph_output = -1;
  index_insert(g->value_index, g->cap_value_index, copy, g->n_values);
  return g->n_values++;
}

int ir_graph_add_node(ir_graph *g) {
  if (!grow(g->allocator, (void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof(ir_node))) return -1;
  memset(&g->nodes[g->n_nodes], 0, sizeof(ir_node));
  g->nodes[g->n_nodes].domain = "";
  return g->n_nodes++;
}

q8rt_status ir_tensor_create(ir_graph *g, q8rt_dtype dtype, int rank, const int64_t *dims, ir_tensor **out,
                             q8rt_error *err) {
  if (rank < 0 || rank > Q8RT_MAX_RANK) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "tensor of rank %d (q8rt supports up to %d)", rank, Q8RT_MAX_RANK);
  }
  size_t esize = q8rt_dtype_size(dtype);
  if (esize == 0) return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "tensor of unsupported data type %d", (int)dtype);
  int64_t count;
  if (!q8rt_shape_elements(dims, rank, &count)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "tensor dimensions are negative or overflow");
  }
  ir_tensor *t = q8rt_pool_alloc(&g->tensors, sizeof(*t), 16);
  if (t == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory for a tensor");
  t->dtype = dtype;
  t->rank = rank;
  for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
  t->count = count;
  t->nbytes = (size_t)count * esize;
  /* large tensors (weights) get chunks of their own: the planner can free those it packed */
  t->data = t->nbytes >= IR_OWN_CHUNK_BYTES ? q8rt_pool_alloc_own(&g->tensors, t->nbytes, 64)
                                            : q8rt_pool_alloc(&g->tensors, t->nbytes ? t->nbytes : 1, 64);
  if (t->data == NULL)
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory for %zu bytes of tensor data", t->nbytes);
  *out = t;
  return Q8RT_OK;
}

void ir_tensor_release(ir_graph *g, ir_tensor *t) {
  if (t->nbytes < IR_OWN_CHUNK_BYTES || t->data == NULL) return;
  q8rt_pool_release(&g->tensors, t->data);
  t->data = NULL;
}

int64_t ir_graph_opset(const ir_graph *g, const char *domain) {
  if (strcmp(domain, "ai.onnx") == 0) domain = "";
  for (int i = 0; i < g->n_opsets; i++) {
    const char *d = g->opsets[i].domain;
    if (strcmp(d, "ai.onnx") == 0) d = "";
    if (strcmp(d, domain) == 0) return g->opsets[i].version;
  }
  return 0;
}

const ir_attr *ir_node_attr(const ir_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++) {
    if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
  }
  return NULL;
}

static q8rt_status wrong_type(const ir_node *n, const char *name, const char *want, q8rt_error *err) {
  return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute '%s' must be %s", n->op_type, n->name, name,
                   want);
}

q8rt_status ir_attr_int(const ir_node *n, const char *name, int64_t def, int64_t *out, q8rt_error *err) {
  const ir_attr *a = ir_node_attr(n, name);
  if (a == NULL) {
    *out = def;
    return Q8RT_OK;
  }
  if (a->type != IR_ATTR_INT) return wrong_type(n, name, "an int", err);
  *out = a->i;
  return Q8RT_OK;
}

q8rt_status ir_attr_float(const ir_node *n, const char *name, float def, float *out, q8rt_error *err) {
  const ir_attr *a = ir_node_attr(n, name);
  if (a == NULL) {
    *out = def;
    return Q8RT_OK;
  }
  if (a->type != IR_ATTR_FLOAT) return wrong_type(n, name, "a float", err);
  *out = a->f;
  return Q8RT_OK;
}

q8rt_status ir_attr_string(const ir_node *n, const char *name, const char *def, const char **out, q8rt_error *err) {
  const ir_attr *a = ir_node_attr(n, name);
  if (a == NULL) {
    *out = def;
    return Q8RT_OK;
  }
  if (a->type != IR_ATTR_STRING) return wrong_type(n, name, "a string", err);
  *out = a->s;
  return Q8RT_OK;
}

q8rt_status ir_attr_ints(const ir_node *n, const char *name, const int64_t **out, size_t *count, q8rt_error *err) {
  const ir_attr *a = ir_node_attr(n, name);
  *out = NULL;
  *count = 0;
  if (a == NULL) return Q8RT_OK;
  if (a->type != IR_ATTR_INTS) return wrong_type(n, name, "a list of ints", err);
  *out = a->ints;
  *count = a->count;
  return Q8RT_OK;
}
