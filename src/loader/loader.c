/* ModelProto -> ir_graph. See loader.h for the contract.
 *
 * Order of work: opset imports, initializers (constants), graph inputs, graph outputs, nodes,
 * then the checks that need the whole graph (every node input and graph output has a source),
 * then value_info. The protobuf tree is freed before returning on every path. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "loader_internal.h"

#define AI_ONNX_MIN_OPSET 7
#define AI_ONNX_MAX_OPSET 22

typedef struct loader {
  ir_graph *g;
  const q8rt_load_config *cfg;
  q8rt_error *err;
  char *scratch; /* prefixed names being looked up */
  size_t scratch_cap;
  /* reading a Loop's body: the loader and scope of the graph around it (where names the body
   * does not define are looked up), NULL for the main graph */
  struct loader *outer;
  const struct ld_scope *outer_scope;
} loader;

/* Where names resolve. The main graph's values keep their names; a branch of an If defines its
 * values under a prefix (the If's name and the branch), so then and else may use the same names.
 * A name a branch does not define is looked up in the enclosing scopes, innermost first. */
typedef struct ld_scope {
  const struct ld_scope *parent;
  const char *prefix; /* "" for the main graph */
  int guard;          /* 0 for the main graph */
  int depth;
} ld_scope;

static const char *str_or_empty(const char *s) { return s != NULL ? s : ""; }

static bool is_ai_onnx(const char *domain) { return domain[0] == '\0' || strcmp(domain, "ai.onnx") == 0; }

static q8rt_status oom(loader *L) {
  return q8rt_fail(L->err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory while building the graph");
}

/* prefix + name in L->scratch, or NULL when out of memory. */
static const char *scoped_name(loader *L, const ld_scope *S, const char *name) {
  size_t plen = strlen(S->prefix), nlen = strlen(name), need;
  if (!q8rt_add_size(plen, nlen, &need) || !q8rt_add_size(need, 1, &need)) return NULL;
  if (need > L->scratch_cap) {
    char *b = q8rt_alloc(L->g->allocator, need, 1);
    if (b == NULL) return NULL;
    q8rt_free(L->g->allocator, L->scratch, L->scratch_cap);
    L->scratch = b;
    L->scratch_cap = need;
  }
  memcpy(L->scratch, S->prefix, plen);
  memcpy(L->scratch + plen, name, nlen + 1);
  return L->scratch;
}

/* The value `name` defined in scope S (created on first sight). A value of that (prefixed) name
 * that belongs to another scope is a collision, refused. *created: whether it is new. */
static q8rt_status define_value(loader *L, const ld_scope *S, const char *name, int *out, bool *created) {
  const char *full = scoped_name(L, S, name);
  if (full == NULL) return oom(L);
  const int before = L->g->n_values;
  const int idx = ir_graph_intern_value(L->g, full);
  if (idx < 0) return oom(L);
  if (idx >= before) {
    L->g->values[idx].scope = S->guard;
  } else if (L->g->values[idx].scope != S->guard) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                     "value '%.200s' of an If branch has the same name as a value of another scope", full);
  }
  if (created != NULL) *created = idx >= before;
  *out = idx;
  return Q8RT_OK;
}

/* The value `name` read in scope S: the innermost scope that defines it; names no branch defines
 * are the main graph's (created on first sight, checked for a source once all is read). */
static q8rt_status resolve_value(loader *L, const ld_scope *S, const char *name, int *out) {
  for (; S != NULL && S->guard != 0; S = S->parent) {
    const char *full = scoped_name(L, S, name);
    if (full == NULL) return oom(L);
    const int idx = ir_graph_find_value(L->g, full);
    if (idx >= 0 && L->g->values[idx].scope == S->guard) {
      *out = idx;
      return Q8RT_OK;
    }
  }
  *out = ir_graph_intern_value(L->g, name);
  return *out < 0 ? oom(L) : Q8RT_OK;
}

/* ---- subgraph nesting, before protobuf-c decodes ----------------------------------------------
 * protobuf-c recurses once per nested message without a limit, and subgraphs (If/Loop/Scan
 * attributes) nest GraphProto in GraphProto. This scan of the wire format follows only
 * ModelProto.graph (7) -> GraphProto.node (1) -> NodeProto.attribute (5) -> AttributeProto.g (6) /
 * .graphs (11) -> GraphProto ..., at most IR_MAX_SUBGRAPH_DEPTH levels deep (its own recursion is
 * bounded by that), and refuses a deeper model naming the node. Malformed bytes end the scan
 * quietly: protobuf-c then reports them. */
enum { WIRE_OK = 0, WIRE_STOP = 1, WIRE_DEEP = 2 };

static int wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  uint64_t r = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*p >= end) return 0;
    const uint8_t b = *(*p)++;
    r |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = r;
      return 1;
    }
  }
  return 0;
}

/* Next field of the message in [*p, end): its number, and for length-delimited fields its bytes. */
static int wire_next(const uint8_t **p, const uint8_t *end, uint64_t *field, const uint8_t **sub, size_t *sub_len) {
  uint64_t tag, v;
  if (!wire_varint(p, end, &tag)) return 0;
  *field = tag >> 3;
  *sub = NULL;
  switch (tag & 7) {
    case 0: return wire_varint(p, end, &v);
    case 1:
      if ((size_t)(end - *p) < 8) return 0;
      *p += 8;
      return 1;
    case 5:
      if ((size_t)(end - *p) < 4) return 0;
      *p += 4;
      return 1;
    case 2:
      if (!wire_varint(p, end, &v) || v > (uint64_t)(end - *p)) return 0;
      *sub = *p;
      *sub_len = (size_t)v;
      *p += v;
      return 1;
    default: return 0;
  }
}

static int wire_graph(const uint8_t *p, const uint8_t *end, int depth, q8rt_error *err);

static int wire_node(const uint8_t *p, const uint8_t *end, int depth, q8rt_error *err) {
  const uint8_t *node = p, *sub;
  size_t len;
  uint64_t f;
  while (p < end) {
    if (!wire_next(&p, end, &f, &sub, &len)) return WIRE_STOP;
    if (f != 5 || sub == NULL) continue;
    const uint8_t *a = sub, *aend = sub + len, *gsub;
    size_t glen;
    uint64_t af;
    while (a < aend) {
      if (!wire_next(&a, aend, &af, &gsub, &glen)) return WIRE_STOP;
      if ((af != 6 && af != 11) || gsub == NULL) continue;
      if (depth + 1 > IR_MAX_SUBGRAPH_DEPTH) {
        /* name the node: its name (3), else its op_type (4) */
        const uint8_t *q = node, *s3 = NULL, *s4 = NULL, *nsub;
        size_t l3 = 0, l4 = 0, nlen;
        uint64_t nf;
        while (q < end && wire_next(&q, end, &nf, &nsub, &nlen)) {
          if (nf == 3 && nsub != NULL) s3 = nsub, l3 = nlen;
          if (nf == 4 && nsub != NULL) s4 = nsub, l4 = nlen;
        }
        q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "node '%.*s' (%.*s) nests subgraphs more than %d deep, q8rt's limit",
                  (int)(l3 < 200 ? l3 : 200), s3 ? (const char *)s3 : "", (int)(l4 < 60 ? l4 : 60),
                  s4 ? (const char *)s4 : "", IR_MAX_SUBGRAPH_DEPTH);
        return WIRE_DEEP;
      }
      const int r = wire_graph(gsub, gsub + glen, depth + 1, err);
      if (r != WIRE_OK) return r;
    }
  }
  return WIRE_OK;
}

static int wire_graph(const uint8_t *p, const uint8_t *end, int depth, q8rt_error *err) {
  const uint8_t *sub;
  size_t len;
  uint64_t f;
  while (p < end) {
    if (!wire_next(&p, end, &f, &sub, &len)) return WIRE_STOP;
    if (f != 1 || sub == NULL) continue;
    const int r = wire_node(sub, sub + len, depth, err);
    if (r != WIRE_OK) return r;
  }
  return WIRE_OK;
}

static q8rt_status check_subgraph_depth(const void *data, size_t size, q8rt_error *err) {
  if (size == 0) return Q8RT_OK; /* data may be NULL then: NULL + 0 is undefined in C (clang's UBSan) */
  const uint8_t *p = data, *end = p + size, *sub;
  size_t len;
  uint64_t f;
  while (p < end) {
    if (!wire_next(&p, end, &f, &sub, &len)) return Q8RT_OK;
    if (f != 7 || sub == NULL) continue;
    const int r = wire_graph(sub, sub + len, 0, err);
    if (r == WIRE_DEEP) return Q8RT_ERROR_UNSUPPORTED;
    if (r == WIRE_STOP) return Q8RT_OK;
  }
  return Q8RT_OK;
}

/* ---- opsets -------------------------------------------------------------------------------- */

static q8rt_status read_opsets(loader *L, const Onnx__ModelProto *mp) {
  ir_graph *g = L->g;
  g->opsets = q8rt_pool_array(&g->pool, mp->n_opset_import, sizeof(ir_opset));
  if (g->opsets == NULL) return oom(L);
  bool have_onnx = false;
  for (size_t i = 0; i < mp->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *op = mp->opset_import[i];
    const char *domain = str_or_empty(op->domain);
    if (is_ai_onnx(domain)) domain = "";
    if (!op->has_version || op->version < 1) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "opset_import of domain '%.200s' has no valid version",
                       domain[0] ? domain : "ai.onnx");
    }
    const int64_t seen = ir_graph_opset(g, domain);
    if (seen == op->version) continue; /* the same import twice (ORT's model merges write that): harmless */
    if (seen != 0) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                       "opset_import lists domain '%.200s' twice with different versions (%lld and %lld)",
                       domain[0] ? domain : "ai.onnx", (long long)seen, (long long)op->version);
    }
    if (domain[0] == '\0') {
      if (op->version < AI_ONNX_MIN_OPSET || op->version > AI_ONNX_MAX_OPSET) {
        return q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED,
                         "model imports ai.onnx opset %lld; q8rt supports opsets %d to %d", (long long)op->version,
                         AI_ONNX_MIN_OPSET, AI_ONNX_MAX_OPSET);
      }
      have_onnx = true;
    }
    ir_opset *o = &g->opsets[g->n_opsets];
    o->domain = q8rt_pool_strdup(&g->pool, domain);
    if (o->domain == NULL) return oom(L);
    o->version = op->version;
    g->n_opsets++;
  }
  if (!have_onnx && g->n_opsets > 0) {
    /* Valid ONNX (e.g. an ai.onnx.ml-only model), just nothing q8rt runs. */
    return q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED,
                     "model imports no ai.onnx opset (only domain '%.200s'%s), q8rt runs ai.onnx models",
                     g->opsets[0].domain, g->n_opsets > 1 ? " and others" : "");
  }
  if (!have_onnx) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "model has no opset_import for the ai.onnx domain");
  }
  return Q8RT_OK;
}

/* ---- tensors ------------------------------------------------------------------------------- */

static q8rt_status convert_tensor(loader *L, const Onnx__TensorProto *tp, const char *what, ir_tensor **out) {
  ld_tensor_desc d;
  q8rt_status st = ld_tensor_desc_read(tp, what, &d, L->err);
  if (st != Q8RT_OK) return st;
  /* Check before allocating, so a bad tensor fails on its data rather than on its size. */
  if (!d.external) {
    st = ld_tensor_fill(tp, what, &d, NULL, NULL, L->err);
    if (st != Q8RT_OK) return st;
  }
  ir_tensor *t;
  const bool f16 = d.dtype == Q8RT_DTYPE_FLOAT16;
  st = ir_tensor_create(L->g, f16 ? Q8RT_DTYPE_FLOAT32 : d.dtype, d.rank, d.dims, &t, L->err);
  if (st != Q8RT_OK) return st;
  /* float16 is widened here (q8rt computes float16 graphs in float32): its bits are read into the
   * upper half of the float32 tensor and widened front to back, each float32 written below the
   * float16 elements not yet read (element i ends at byte 4i + 4 <= 2n + 2i + 2 for i < n). */
  uint8_t *fill = f16 ? (uint8_t *)t->data + 2 * (size_t)t->count : t->data;
  st = ld_tensor_fill(tp, what, &d, L->cfg->external_data_dir, fill, L->err);
  if (st != Q8RT_OK) return st;
  if (f16) {
    float *y = t->data;
    for (size_t i = 0; i < (size_t)t->count; i++) {
      uint16_t h;
      memcpy(&h, fill + 2 * i, 2);
      y[i] = q8rt_f16_to_f32(h);
    }
    t->from_f16 = 1;
  }
  *out = t;
  return Q8RT_OK;
}

static void set_constant(ir_value *v, ir_tensor *t) {
  v->constant = t;
  v->f16 = t->from_f16;
  v->dtype = t->dtype;
  v->rank = t->rank;
  for (int i = 0; i < t->rank; i++) {
    v->dims[i] = t->dims[i];
    v->dim_params[i] = NULL;
  }
}

static q8rt_status read_initializers(loader *L, const Onnx__GraphProto *gp, const ld_scope *S) {
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *tp = gp->initializer[i];
    const char *name = str_or_empty(tp->name);
    if (name[0] == '\0') {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "initializer #%zu has no name", i);
    }
    int vi;
    bool created;
    q8rt_status st = define_value(L, S, name, &vi, &created);
    if (st != Q8RT_OK) return st;
    if (!created) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "initializer '%.200s' appears twice", name);
    }
    char what[256];
    snprintf(what, sizeof(what), "initializer '%.200s'", name);
    ir_tensor *t;
    st = convert_tensor(L, tp, what, &t);
    if (st != Q8RT_OK) return st;
    set_constant(&L->g->values[vi], t);
  }
  return Q8RT_OK;
}

/* ---- value infos --------------------------------------------------------------------------- */

/* A value's declared type and shape. `kind` names it in messages ("graph input"). Strict (graph
 * inputs and outputs) refuses what q8rt cannot run; value_info entries are hints, so types q8rt
 * does not handle are left for inference to judge there. */
static q8rt_status read_type(loader *L, const Onnx__ValueInfoProto *vi, const char *kind, bool strict, int vidx) {
  const char *name = str_or_empty(vi->name);
  const Onnx__TypeProto *type = vi->type;
  if (type == NULL) {
    if (strict && strcmp(kind, "graph input") == 0) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "%s '%.200s' has no type", kind, name);
    }
    return Q8RT_OK;
  }
  if (type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || type->tensor_type == NULL) {
    if (!strict) return Q8RT_OK;
    return q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED,
                     "%s '%.200s' is not a tensor (sequence, map, optional and sparse values are not supported)", kind,
                     name);
  }
  const Onnx__TypeProto__Tensor *tt = type->tensor_type;
  q8rt_dtype dtype = Q8RT_DTYPE_UNDEFINED;
  if (tt->has_elem_type && tt->elem_type != 0) {
    if (!q8rt_dtype_known(tt->elem_type)) {
      if (!strict) return Q8RT_OK;
      return q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED, "%s '%.200s' has data type %s (%d), which q8rt does not support",
                       kind, name, q8rt_onnx_type_name(tt->elem_type), (int)tt->elem_type);
    }
    dtype = (q8rt_dtype)tt->elem_type;
    /* float16 values are float32 inside q8rt; the main graph's float16 inputs and outputs get
     * their conversions in widen_float16_io */
    if (dtype == Q8RT_DTYPE_FLOAT16) dtype = Q8RT_DTYPE_FLOAT32;
  }
  int rank = -1;
  int64_t dims[Q8RT_MAX_RANK];
  const char *params[Q8RT_MAX_RANK];
  if (tt->shape != NULL) {
    if (tt->shape->n_dim > Q8RT_MAX_RANK) {
      if (!strict) return Q8RT_OK;
      return q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED, "%s '%.200s' has rank %zu (q8rt supports up to %d)", kind, name,
                       tt->shape->n_dim, Q8RT_MAX_RANK);
    }
    rank = (int)tt->shape->n_dim;
    for (int i = 0; i < rank; i++) {
      const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[i];
      dims[i] = -1;
      params[i] = NULL;
      if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
        if (dim->dim_value < 0) {
          return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "%s '%.200s' has negative dimension %lld at axis %d", kind,
                           name, (long long)dim->dim_value, i);
        }
        if (dim->dim_value > Q8RT_MAX_ELEMENTS) {
          return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                           "%s '%.200s' has dimension %lld at axis %d, more than a tensor may have (%lld elements)",
                           kind, name, (long long)dim->dim_value, i, (long long)Q8RT_MAX_ELEMENTS);
        }
        dims[i] = dim->dim_value;
      } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param != NULL &&
                 dim->dim_param[0] != '\0') {
        params[i] = q8rt_pool_strdup(&L->g->pool, dim->dim_param);
        if (params[i] == NULL) return oom(L);
      }
    }
  }
  ir_value *v = &L->g->values[vidx];
  if (dtype != Q8RT_DTYPE_UNDEFINED) v->dtype = dtype;
  if (dtype != Q8RT_DTYPE_UNDEFINED) v->f16 = tt->elem_type == Q8RT_DTYPE_FLOAT16;
  if (rank >= 0) {
    v->rank = rank;
    for (int i = 0; i < rank; i++) {
      v->dims[i] = dims[i];
      v->dim_params[i] = params[i];
    }
  }
  return Q8RT_OK;
}

static q8rt_status read_inputs(loader *L, const Onnx__GraphProto *gp) {
  ir_graph *g = L->g;
  /* a Loop body's inputs may leave their type to the Loop's inputs */
  const char *kind = L->outer != NULL ? "Loop body input" : "graph input";
  g->inputs = q8rt_pool_array(&g->pool, gp->n_input, sizeof(int));
  if (g->inputs == NULL) return oom(L);
  for (size_t i = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = gp->input[i];
    const char *name = str_or_empty(vi->name);
    if (name[0] == '\0') return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "graph input #%zu has no name", i);
    int idx = ir_graph_find_value(g, name);
    if (idx >= 0 && g->values[idx].constant != NULL) {
      /* An initializer listed as an input (IR < 4 requires it): a constant, not an input. Its
       * declared type must still agree. */
      const Onnx__TypeProto *type = vi->type;
      if (type != NULL && type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && type->tensor_type != NULL &&
          type->tensor_type->has_elem_type && type->tensor_type->elem_type != 0 &&
          type->tensor_type->elem_type != (int32_t)g->values[idx].dtype &&
          !(type->tensor_type->elem_type == Q8RT_DTYPE_FLOAT16 && g->values[idx].dtype == Q8RT_DTYPE_FLOAT32)) {
        return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                         "graph input '%.200s' is declared as %s but its initializer is %s", name,
                         q8rt_onnx_type_name(type->tensor_type->elem_type), q8rt_dtype_name(g->values[idx].dtype));
      }
      continue;
    }
    if (idx >= 0) return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "graph input '%.200s' is listed twice", name);
    idx = ir_graph_intern_value(g, name);
    if (idx < 0) return oom(L);
    q8rt_status st = read_type(L, vi, kind, true, idx);
    if (st != Q8RT_OK) return st;
    g->values[idx].graph_input = g->n_inputs;
    g->inputs[g->n_inputs++] = idx;
  }
  return Q8RT_OK;
}

static q8rt_status read_outputs(loader *L, const Onnx__GraphProto *gp) {
  ir_graph *g = L->g;
  g->outputs = q8rt_pool_array(&g->pool, gp->n_output, sizeof(int));
  if (g->outputs == NULL) return oom(L);
  for (size_t i = 0; i < gp->n_output; i++) {
    const Onnx__ValueInfoProto *vi = gp->output[i];
    const char *name = str_or_empty(vi->name);
    if (name[0] == '\0') return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "graph output #%zu has no name", i);
    int idx = ir_graph_intern_value(g, name);
    if (idx < 0) return oom(L);
    if (g->values[idx].graph_output >= 0) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "graph output '%.200s' is listed twice", name);
    }
    if (g->values[idx].constant == NULL) {
      q8rt_status st = read_type(L, vi, "graph output", true, idx);
      if (st != Q8RT_OK) return st;
    }
    g->values[idx].graph_output = g->n_outputs;
    g->outputs[g->n_outputs++] = idx;
  }
  if (g->n_outputs == 0) return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "graph has no outputs");
  return Q8RT_OK;
}

/* ---- attributes ---------------------------------------------------------------------------- */

static const char *attr_type_name(int type) {
  switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "GRAPH (a subgraph)";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "GRAPHS (subgraphs)";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: return "SPARSE_TENSOR";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: return "SPARSE_TENSORS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return "TYPE_PROTO";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: return "TYPE_PROTOS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return "TENSORS";
    default: return "unknown";
  }
}

/* Ops compare string attributes with strcmp; an embedded NUL would make "NOTSET\0junk" pass as
 * "NOTSET", so such strings are refused. */
static bool has_nul(const ProtobufCBinaryData *b) { return b->len > 0 && memchr(b->data, '\0', b->len) != NULL; }

static q8rt_status convert_attr(loader *L, const ir_node *n, const Onnx__AttributeProto *ap, ir_attr *out) {
  ir_graph *g = L->g;
  const char *aname = str_or_empty(ap->name);
  if (aname[0] == '\0') {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "node '%.200s' (%.100s) has an attribute without a name",
                     n->name, n->op_type);
  }
  if (ap->ref_attr_name != NULL && ap->ref_attr_name[0] != '\0') {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                     "node '%.200s' (%.100s) attribute '%.100s' refers to a function attribute outside a function",
                     n->name, n->op_type, aname);
  }
  out->name = q8rt_pool_strdup(&g->pool, aname);
  if (out->name == NULL) return oom(L);
  switch ((int)ap->type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
      out->type = IR_ATTR_FLOAT;
      out->f = ap->f;
      return Q8RT_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
      out->type = IR_ATTR_INT;
      out->i = ap->i;
      return Q8RT_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
      if (has_nul(&ap->s)) {
        return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                         "node '%.200s' (%.100s) attribute '%.100s' holds a string with a NUL byte", n->name,
                         n->op_type, aname);
      }
      out->type = IR_ATTR_STRING;
      out->s = q8rt_pool_strndup(&g->pool, (const char *)ap->s.data, ap->s.len);
      if (out->s == NULL) return oom(L);
      out->s_len = ap->s.len;
      return Q8RT_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
      if (ap->t == NULL) {
        return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                         "node '%.200s' (%.100s) tensor attribute '%.100s' has no tensor", n->name, n->op_type, aname);
      }
      char what[352];
      snprintf(what, sizeof(what), "attribute '%.100s' of node '%.150s' (%.50s)", aname, n->name, n->op_type);
      out->type = IR_ATTR_TENSOR;
      return convert_tensor(L, ap->t, what, &out->t);
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
      float *f = q8rt_pool_array(&g->pool, ap->n_floats, sizeof(float));
      if (f == NULL) return oom(L);
      if (ap->n_floats) memcpy(f, ap->floats, ap->n_floats * sizeof(float));
      out->type = IR_ATTR_FLOATS;
      out->floats = f;
      out->count = ap->n_floats;
      return Q8RT_OK;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: {
      int64_t *v = q8rt_pool_array(&g->pool, ap->n_ints, sizeof(int64_t));
      if (v == NULL) return oom(L);
      if (ap->n_ints) memcpy(v, ap->ints, ap->n_ints * sizeof(int64_t));
      out->type = IR_ATTR_INTS;
      out->ints = v;
      out->count = ap->n_ints;
      return Q8RT_OK;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
      /* ir_attr has no array of strings: they are packed one after another, each NUL-terminated,
       * into s (s_len = total bytes including the NULs), count = number of strings. */
      size_t total = 0;
      for (size_t k = 0; k < ap->n_strings; k++) {
        if (has_nul(&ap->strings[k])) {
          return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                           "node '%.200s' (%.100s) attribute '%.100s' holds a string with a NUL byte", n->name,
                           n->op_type, aname);
        }
        if (!q8rt_add_size(total, ap->strings[k].len + 1, &total)) return oom(L);
      }
      char *s = q8rt_pool_alloc(&g->pool, total ? total : 1, 1);
      if (s == NULL) return oom(L);
      size_t off = 0;
      for (size_t k = 0; k < ap->n_strings; k++) {
        if (ap->strings[k].len) memcpy(s + off, ap->strings[k].data, ap->strings[k].len);
        off += ap->strings[k].len;
        s[off++] = '\0';
      }
      out->type = IR_ATTR_STRINGS;
      out->s = s;
      out->s_len = total;
      out->count = ap->n_strings;
      return Q8RT_OK;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
      return q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED,
                       "node '%.200s' (%.100s) attribute '%.100s' is of type %s, which q8rt does not support%s",
                       n->name, n->op_type, aname, attr_type_name((int)ap->type),
                       ap->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH ||
                               ap->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS
                           ? " (q8rt runs the subgraphs of If, Loop and Scan only)"
                           : "");
    default:
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                       "node '%.200s' (%.100s) attribute '%.100s' has no valid type (%d)", n->name, n->op_type, aname,
                       (int)ap->type);
  }
}

/* ---- nodes --------------------------------------------------------------------------------- */

/* Make node `node_name` the source of value `vidx`; a value has exactly one source. */
static q8rt_status claim_value(loader *L, int vidx, int node_idx, const char *node_name, const char *op) {
  ir_value *v = &L->g->values[vidx];
  if (v->producer >= 0) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                     "value '%.150s' is produced by both node '%.150s' and node '%.150s'", v->name,
                     L->g->nodes[v->producer].name, node_name);
  }
  if (v->constant != NULL) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                     "node '%.150s' (%.60s) output '%.150s' is also an initializer or a Constant's output", node_name,
                     op, v->name);
  }
  if (v->graph_input >= 0) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "node '%.150s' (%.60s) output '%.150s' is also a graph input",
                     node_name, op, v->name);
  }
  if (node_idx >= 0) v->producer = node_idx;
  return Q8RT_OK;
}

/* A Constant node becomes a constant on its output value; no node is added. */
static q8rt_status read_constant_node(loader *L, const Onnx__NodeProto *np, const char *name, const ld_scope *S) {
  ir_graph *g = L->g;
  if (np->n_output != 1 || np->output[0] == NULL || np->output[0][0] == '\0') {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "Constant node '%.200s' must have exactly one named output",
                     name);
  }
  if (np->n_input != 0) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "Constant node '%.200s' must have no inputs", name);
  }
  if (np->n_attribute != 1) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                     "Constant node '%.200s' must have exactly one attribute (has %zu)", name, np->n_attribute);
  }
  const Onnx__AttributeProto *ap = np->attribute[0];
  const char *aname = str_or_empty(ap->name);
  int want;
  if (strcmp(aname, "value") == 0)
    want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  else if (strcmp(aname, "value_float") == 0)
    want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  else if (strcmp(aname, "value_floats") == 0)
    want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
  else if (strcmp(aname, "value_int") == 0)
    want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  else if (strcmp(aname, "value_ints") == 0)
    want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  else if (strcmp(aname, "sparse_value") == 0 || strcmp(aname, "value_string") == 0 ||
           strcmp(aname, "value_strings") == 0) {
    return q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED, "Constant node '%.200s' attribute '%s' is not supported", name,
                     aname);
  } else {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "Constant node '%.200s' has unknown attribute '%.100s'", name,
                     aname);
  }
  if ((int)ap->type != want) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "Constant node '%.200s' attribute '%s' has the wrong type (%d)",
                     name, aname, (int)ap->type);
  }
  ir_tensor *t = NULL;
  q8rt_status st = Q8RT_OK;
  switch (want) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
      if (ap->t == NULL) {
        return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "Constant node '%.200s' attribute 'value' has no tensor",
                         name);
      }
      char what[256];
      snprintf(what, sizeof(what), "Constant node '%.200s' value", name);
      st = convert_tensor(L, ap->t, what, &t);
      break;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
      st = ir_tensor_create(g, Q8RT_DTYPE_FLOAT32, 0, NULL, &t, L->err);
      if (st == Q8RT_OK) memcpy(t->data, &ap->f, sizeof(float));
      break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
      st = ir_tensor_create(g, Q8RT_DTYPE_INT64, 0, NULL, &t, L->err);
      if (st == Q8RT_OK) memcpy(t->data, &ap->i, sizeof(int64_t));
      break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
      int64_t dim = (int64_t)ap->n_floats;
      st = ir_tensor_create(g, Q8RT_DTYPE_FLOAT32, 1, &dim, &t, L->err);
      if (st == Q8RT_OK && ap->n_floats) memcpy(t->data, ap->floats, ap->n_floats * sizeof(float));
      break;
    }
    default: {
      int64_t dim = (int64_t)ap->n_ints;
      st = ir_tensor_create(g, Q8RT_DTYPE_INT64, 1, &dim, &t, L->err);
      if (st == Q8RT_OK && ap->n_ints) memcpy(t->data, ap->ints, ap->n_ints * sizeof(int64_t));
      break;
    }
  }
  if (st != Q8RT_OK) return st;
  int vidx;
  if ((st = define_value(L, S, np->output[0], &vidx, NULL)) != Q8RT_OK) return st;
  st = claim_value(L, vidx, -1, name, "Constant");
  if (st != Q8RT_OK) return st;
  set_constant(&g->values[vidx], t);
  return Q8RT_OK;
}

static q8rt_status read_graph_nodes(loader *L, const Onnx__GraphProto *gp, const ld_scope *S);

/* cond + both branches' outputs must fit a step's inputs (Q8RT_MAX_IO = 64, src/ops/op.h) */
#define IF_MAX_OUTPUTS 31

/* An If: both branches are read into the graph under their guards (src/graph/ir.h); the node's
 * inputs become cond, then_branch's outputs, else_branch's outputs. */
static q8rt_status read_if(loader *L, const Onnx__NodeProto *np, int node_idx, const ld_scope *S) {
  ir_graph *g = L->g;
  const char *name = g->nodes[node_idx].name;
  const Onnx__GraphProto *branch[2] = {NULL, NULL}; /* then, else */
  static const char *const branch_name[2] = {"then_branch", "else_branch"};
  for (size_t i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *ap = np->attribute[i];
    const char *aname = str_or_empty(ap->name);
    int k = strcmp(aname, "then_branch") == 0 ? 0 : strcmp(aname, "else_branch") == 0 ? 1 : -1;
    if (k < 0) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "If node '%.200s' has unknown attribute '%.100s'", name,
                       aname);
    }
    if ((int)ap->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH || ap->g == NULL) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "If node '%.200s' attribute '%s' is not a graph", name, aname);
    }
    branch[k] = ap->g;
  }
  for (int k = 0; k < 2; k++) {
    if (branch[k] == NULL) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "If node '%.200s' has no %s", name, branch_name[k]);
    }
  }
  if (np->n_input != 1 || g->nodes[node_idx].inputs[0] < 0) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "If node '%.200s' must have one input (cond), has %zu", name,
                     np->n_input);
  }
  const size_t nout = np->n_output;
  if (nout == 0 || nout > IF_MAX_OUTPUTS) {
    return q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED, "If node '%.200s' has %zu outputs (q8rt runs 1 to %d)", name, nout,
                     IF_MAX_OUTPUTS);
  }
  if (S->depth + 1 > IR_MAX_SUBGRAPH_DEPTH) {
    return q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED,
                     "node '%.200s' (If) nests subgraphs more than %d deep, q8rt's limit", name, IR_MAX_SUBGRAPH_DEPTH);
  }
  for (int k = 0; k < 2; k++) {
    const Onnx__GraphProto *gp = branch[k];
    if (gp->n_output != nout) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "If node '%.200s': %s has %zu outputs, the node %zu", name,
                       branch_name[k], gp->n_output, nout);
    }
    if (gp->n_input != 0) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                       "If node '%.200s': %s declares %zu inputs (If branches take none)", name, branch_name[k],
                       gp->n_input);
    }
  }
  int *inputs = q8rt_pool_array(&g->pool, 1 + 2 * nout, sizeof(int));
  if (inputs == NULL) return oom(L);
  inputs[0] = g->nodes[node_idx].inputs[0];
  /* then's guard and else's next to it (if_guard, if_guard + 1), before the branches add theirs */
  int guards[2];
  for (int k = 0; k < 2; k++) {
    if ((guards[k] = ir_graph_add_guard(g)) < 0) return oom(L);
    ir_guard *gd = &g->guards[guards[k] - 1];
    gd->parent = S->guard;
    gd->cond = inputs[0];
    gd->side = k == 0;
    gd->if_node = node_idx;
    gd->depth = S->depth + 1;
  }
  g->nodes[node_idx].if_guard = guards[0];
  for (int k = 0; k < 2; k++) {
    const Onnx__GraphProto *gp = branch[k];
    const int guard = guards[k];
    size_t plen = strlen(S->prefix), nlen = strlen(name), len;
    if (!q8rt_add_size(plen, nlen, &len) || !q8rt_add_size(len, 16, &len)) return oom(L);
    char *prefix = q8rt_pool_alloc(&g->pool, len, 1);
    if (prefix == NULL) return oom(L);
    snprintf(prefix, len, "%s%s/%s/", S->prefix, name, branch_name[k]);
    const ld_scope C = {S, prefix, guard, S->depth + 1};
    q8rt_status st = read_graph_nodes(L, gp, &C);
    if (st != Q8RT_OK) return st;
    for (size_t i = 0; i < nout; i++) {
      const char *oname = str_or_empty(gp->output[i]->name);
      if (oname[0] == '\0') {
        return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "If node '%.200s': %s output #%zu has no name", name,
                         branch_name[k], i);
      }
      int v;
      if ((st = resolve_value(L, &C, oname, &v)) != Q8RT_OK) return st;
      g->values[v].consumers++;
      inputs[1 + (size_t)k * nout + i] = v;
    }
  }
  ir_node *n = &g->nodes[node_idx]; /* the branches' nodes may have moved the array */
  n->inputs = inputs;
  n->n_inputs = (int)(1 + 2 * nout);
  return Q8RT_OK;
}

static bool has_source(const ir_value *v);
static q8rt_status check_sources(loader *L);
static q8rt_status read_value_infos(loader *L, const Onnx__GraphProto *gp);
static q8rt_status float16_cast_rounding(loader *L, ir_graph *g);

/* Loop inputs beyond M and cond: carried values, then the outer values the body reads (each a
 * step input, Q8RT_MAX_IO = 64 in all). */
#define LOOP_MAX_IO 64

/* A Loop: its body is read into a graph of its own (ir_node.body) that the Loop's prepare turns
 * into a plan. Names the body does not define are the enclosing graph's: an outer constant is
 * copied into the body as a constant of its own, any other outer value becomes a further body
 * input and a further input of the node (after the ONNX ones, in the same order). */
/* Scan (opset 9 on): inputs the N state values then num_scan_inputs scan inputs, body inputs the
 * same (each scan input's slice), body outputs the N states then the K scan values. Opset 8's batch
 * form has sequence_lens first (the body's inputs start after it). Its attributes other than the
 * body are the node's. Sets *off (node inputs before the body's) and *n_state. */
static q8rt_status read_scan_attrs(loader *L, const Onnx__NodeProto *np, int node_idx, const Onnx__GraphProto *gp,
                                   int *off, int *n_state) {
  ir_graph *g = L->g;
  ir_node *n = &g->nodes[node_idx];
  const char *name = n->name;
  *off = n->opset <= 8 ? 1 : 0;
  for (size_t i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *ap = np->attribute[i];
    const char *aname = str_or_empty(ap->name);
    if (strcmp(aname, "body") == 0) continue;
    for (int k = 0; k < n->n_attrs; k++) {
      if (strcmp(aname, n->attrs[k].name) == 0) {
        return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "Scan node '%.200s' has attribute '%.100s' twice", name,
                         aname);
      }
    }
    q8rt_status st = convert_attr(L, n, ap, &n->attrs[n->n_attrs]);
    if (st != Q8RT_OK) return st;
    n->n_attrs++;
  }
  int64_t m;
  q8rt_status st = ir_attr_int(n, "num_scan_inputs", -1, &m, L->err);
  if (st != Q8RT_OK) return st;
  const int64_t ins = (int64_t)np->n_input - *off;
  if (m < 1 || m > ins) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                     "Scan node '%.200s': num_scan_inputs is %lld; it needs 1 to %lld (its inputs%s)", name,
                     (long long)m, (long long)ins, *off ? " after sequence_lens" : "");
  }
  if ((int64_t)gp->n_input != ins || gp->n_output != np->n_output || gp->n_output < (size_t)(ins - m)) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                     "Scan node '%.200s': the body has %zu inputs and %zu outputs; the node's %lld state and %lld "
                     "scan inputs and %zu outputs need %lld and %zu (the states, then the scan values)",
                     name, gp->n_input, gp->n_output, (long long)(ins - m), (long long)m, np->n_output, (long long)ins,
                     np->n_output);
  }
  *n_state = (int)(ins - m);
  return Q8RT_OK;
}

/* Loop and Scan: the body read into a graph of its own (ir_node.body), the values it reads from the
 * graph around it appended to its inputs and to the node's. */
static q8rt_status read_loop(loader *L, const Onnx__NodeProto *np, int node_idx, const ld_scope *S) {
  ir_graph *g = L->g;
  const char *name = g->nodes[node_idx].name;
  const char *op = g->nodes[node_idx].op_type;
  const int scan = strcmp(op, "Scan") == 0;
  const Onnx__GraphProto *gp = NULL;
  for (size_t i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *ap = np->attribute[i];
    const char *aname = str_or_empty(ap->name);
    if (strcmp(aname, "body") != 0) {
      if (scan) continue; /* the node's (read_scan_attrs) */
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "Loop node '%.200s' has unknown attribute '%.100s'", name,
                       aname);
    }
    if ((int)ap->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH || ap->g == NULL) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "%s node '%.200s' attribute 'body' is not a graph", op, name);
    }
    if (gp != NULL) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "%s node '%.200s' has attribute 'body' twice", op, name);
    }
    gp = ap->g;
  }
  if (gp == NULL) return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "%s node '%.200s' has no body", op, name);
  int off = 0, n_state = 0;
  if (scan) {
    q8rt_status st = read_scan_attrs(L, np, node_idx, gp, &off, &n_state);
    if (st != Q8RT_OK) return st;
  } else {
    if (np->n_input < 2) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                       "Loop node '%.200s' has %zu inputs; it needs M and cond (empty names where absent)", name,
                       np->n_input);
    }
    if (gp->n_input != np->n_input) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                       "Loop node '%.200s': the body has %zu inputs, the node %zu (iteration number, condition and "
                       "one per carried value)",
                       name, gp->n_input, np->n_input);
    }
    if (gp->n_output != np->n_output + 1 || gp->n_output < np->n_input - 1) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                       "Loop node '%.200s': the body has %zu outputs; with %zu carried values the node's %zu outputs "
                       "need %zu (the condition, the carried values, the scan outputs)",
                       name, gp->n_output, np->n_input - 2, np->n_output, np->n_output + 1);
    }
    n_state = (int)np->n_input - 2;
  }
  if (np->n_input > LOOP_MAX_IO || np->n_output > LOOP_MAX_IO) {
    return q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%.200s' has %zu inputs and %zu outputs (q8rt runs up "
                     "to %d each)",
                     op, name, np->n_input, np->n_output, LOOP_MAX_IO);
  }
  if (S->depth + 1 > IR_MAX_SUBGRAPH_DEPTH) {
    return q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED,
                     "node '%.200s' (%s) nests subgraphs more than %d deep, q8rt's limit", name, op,
                     IR_MAX_SUBGRAPH_DEPTH);
  }
  ir_graph *bg = ir_graph_create(g->allocator);
  if (bg == NULL) return oom(L);
  g->nodes[node_idx].body = bg; /* freed with the node's graph from here on */
  g->nodes[node_idx].loop_carried = n_state;
  bg->ir_version = g->ir_version;
  bg->is_body = 1;
  bg->name = q8rt_pool_strdup(&bg->pool, name);
  bg->opsets = q8rt_pool_array(&bg->pool, (size_t)g->n_opsets + 1, sizeof(ir_opset));
  if (bg->name == NULL || bg->opsets == NULL) return oom(L);
  for (int i = 0; i < g->n_opsets; i++) {
    bg->opsets[i].version = g->opsets[i].version;
    if ((bg->opsets[i].domain = q8rt_pool_strdup(&bg->pool, g->opsets[i].domain)) == NULL) return oom(L);
    bg->n_opsets++;
  }
  loader B = {bg, L->cfg, L->err, NULL, 0, L, S};
  const ld_scope BS = {NULL, "", 0, S->depth + 1};
  q8rt_status st = read_initializers(&B, gp, &BS);
  if (st == Q8RT_OK) st = read_inputs(&B, gp);
  if (st == Q8RT_OK && bg->n_inputs != (int)gp->n_input) {
    st = q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "%s node '%.200s': a body input is also a body initializer", op,
                   name);
  }
  if (st == Q8RT_OK) st = read_outputs(&B, gp);
  for (size_t i = 0; st == Q8RT_OK && i < gp->n_node; i++) {
    const Onnx__NodeProto *bn = gp->node[i];
    for (size_t k = 0; st == Q8RT_OK && k < bn->n_output; k++) {
      int v;
      if (bn->output[k] != NULL && bn->output[k][0] != '\0') st = define_value(&B, &BS, bn->output[k], &v, NULL);
    }
  }
  if (st == Q8RT_OK) st = read_graph_nodes(&B, gp, &BS);
  /* what the body reads and nothing in it defines: the enclosing graph's */
  int extra[LOOP_MAX_IO], n_extra = 0;
  const int n_body_values = bg->n_values;
  for (int v = 0; st == Q8RT_OK && v < n_body_values; v++) {
    ir_value *bv = &bg->values[v];
    if (has_source(bv) || bv->scope != 0 || (bv->consumers == 0 && bv->graph_output < 0)) continue;
    int ov;
    if ((st = resolve_value(L, S, bv->name, &ov)) != Q8RT_OK) break;
    const ir_tensor *c = g->values[ov].constant;
    if (c != NULL) {
      ir_tensor *t;
      if ((st = ir_tensor_create(bg, c->dtype, c->rank, c->dims, &t, L->err)) != Q8RT_OK) break;
      if (c->nbytes) memcpy(t->data, c->data, c->nbytes);
      t->from_f16 = c->from_f16;
      set_constant(&bg->values[v], t);
      continue;
    }
    if (np->n_input + (size_t)n_extra >= LOOP_MAX_IO) {
      st = q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%.200s': its body reads more than %d values of the graph around it and carries", op,
                     name, LOOP_MAX_IO);
      break;
    }
    extra[n_extra++] = ov;
    bg->values[v].f16 = g->values[ov].f16; /* known here when declared (value_info) */
    g->values[ov].consumers++;
    bg->values[v].graph_input = bg->n_inputs;
    int *ins = q8rt_pool_array(&bg->pool, (size_t)bg->n_inputs + 1, sizeof(int));
    if (ins == NULL) {
      st = oom(L);
      break;
    }
    memcpy(ins, bg->inputs, (size_t)bg->n_inputs * sizeof(int));
    ins[bg->n_inputs++] = v;
    bg->inputs = ins;
  }
  if (st == Q8RT_OK) st = check_sources(&B);
  if (st == Q8RT_OK) st = read_value_infos(&B, gp);
  if (st == Q8RT_OK) st = float16_cast_rounding(&B, bg);
  q8rt_free(bg->allocator, B.scratch, B.scratch_cap);
  if (st != Q8RT_OK) return st;
  if (n_extra > 0) {
    ir_node *n = &g->nodes[node_idx];
    int *inputs = q8rt_pool_array(&g->pool, (size_t)n->n_inputs + (size_t)n_extra, sizeof(int));
    if (inputs == NULL) return oom(L);
    memcpy(inputs, n->inputs, (size_t)n->n_inputs * sizeof(int));
    memcpy(inputs + n->n_inputs, extra, (size_t)n_extra * sizeof(int));
    n->inputs = inputs;
    n->n_inputs += n_extra;
  }
  return Q8RT_OK;
}

static q8rt_status read_node(loader *L, const Onnx__NodeProto *np, size_t index, const ld_scope *S) {
  ir_graph *g = L->g;
  const char *op_type = str_or_empty(np->op_type);
  if (op_type[0] == '\0') {
    if (np->name != NULL && np->name[0] != '\0') {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "node '%.200s' has no op_type", np->name);
    }
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "node #%zu has no op_type", index);
  }
  const char *domain = str_or_empty(np->domain);
  if (is_ai_onnx(domain)) domain = "";

  const char *name;
  if (np->name != NULL && np->name[0] != '\0') {
    name = q8rt_pool_strdup(&g->pool, np->name);
  } else {
    /* a branch's anonymous nodes are numbered in their branch: prefixed like its values */
    size_t len;
    if (!q8rt_add_size(strlen(op_type), strlen(S->prefix), &len) || !q8rt_add_size(len, 24, &len)) return oom(L);
    char *buf = q8rt_pool_alloc(&g->pool, len, 1);
    if (buf != NULL) snprintf(buf, len, "%s%s_%zu", S->prefix, op_type, index);
    name = buf;
  }
  if (name == NULL) return oom(L);

  int64_t opset = ir_graph_opset(g, domain);
  if (opset == 0) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                     "node '%.200s' (%.100s) uses domain '%.100s', which the model does not import", name, op_type,
                     domain);
  }
  if (opset > INT_MAX) {
    return q8rt_fail(L->err, Q8RT_ERROR_UNSUPPORTED,
                     "node '%.200s' (%.100s): opset %lld of domain '%.100s' is too large", name, op_type,
                     (long long)opset, domain);
  }
  if (domain[0] == '\0' && strcmp(op_type, "Constant") == 0) return read_constant_node(L, np, name, S);

  if (np->n_input > INT_MAX / 2 || np->n_output > INT_MAX / 2 || np->n_attribute > INT_MAX / 2) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "node '%.200s' has too many inputs, outputs or attributes",
                     name);
  }
  int node_idx = ir_graph_add_node(g);
  if (node_idx < 0) return oom(L);
  ir_node *n = &g->nodes[node_idx];
  n->name = name;
  n->op_type = q8rt_pool_strdup(&g->pool, op_type);
  n->domain = q8rt_pool_strdup(&g->pool, domain);
  n->opset = (int)opset;
  n->guard = S->guard;
  n->inputs = q8rt_pool_array(&g->pool, np->n_input, sizeof(int));
  n->outputs = q8rt_pool_array(&g->pool, np->n_output, sizeof(int));
  /* one more: a Cast to float16 gets OP_ATTR_ROUND_F16 (below) */
  n->attrs = q8rt_pool_array(&g->pool, np->n_attribute + 1, sizeof(ir_attr));
  if (n->op_type == NULL || n->domain == NULL || n->inputs == NULL || n->outputs == NULL || n->attrs == NULL) {
    return oom(L);
  }

  for (size_t i = 0; i < np->n_input; i++) {
    const char *in = str_or_empty(np->input[i]);
    int vidx = -1;
    if (in[0] != '\0') {
      q8rt_status st = resolve_value(L, S, in, &vidx);
      if (st != Q8RT_OK) return st;
      g->values[vidx].consumers++;
    }
    n->inputs[n->n_inputs++] = vidx;
  }
  for (size_t i = 0; i < np->n_output; i++) {
    const char *outname = str_or_empty(np->output[i]);
    int vidx = -1;
    if (outname[0] != '\0') {
      q8rt_status st = define_value(L, S, outname, &vidx, NULL);
      if (st != Q8RT_OK) return st;
      if ((st = claim_value(L, vidx, node_idx, n->name, n->op_type)) != Q8RT_OK) return st;
    }
    n->outputs[n->n_outputs++] = vidx;
  }
  if (domain[0] == '\0' && strcmp(op_type, "If") == 0) return read_if(L, np, node_idx, S);
  if (domain[0] == '\0' && (strcmp(op_type, "Loop") == 0 || strcmp(op_type, "Scan") == 0)) {
    return read_loop(L, np, node_idx, S);
  }
  for (size_t i = 0; i < np->n_attribute; i++) {
    const char *aname = str_or_empty(np->attribute[i]->name);
    for (size_t k = 0; k < i; k++) {
      if (strcmp(aname, str_or_empty(np->attribute[k]->name)) == 0) {
        return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "node '%.200s' (%.100s) has attribute '%.100s' twice",
                         n->name, n->op_type, aname);
      }
    }
    if (strcmp(domain, "q8rt") != 0 &&
        strncmp(aname, IR_ATTR_INTERNAL_PREFIX, sizeof(IR_ATTR_INTERNAL_PREFIX) - 1) == 0) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                       "node '%.200s' (%.100s) has attribute '%.100s': names beginning with '" IR_ATTR_INTERNAL_PREFIX
                       "' are reserved for q8rt's own rewrites",
                       n->name, n->op_type, aname);
    }
    q8rt_status st = convert_attr(L, n, np->attribute[i], &n->attrs[n->n_attrs]);
    if (st != Q8RT_OK) return st;
    /* Cast to float16 is a cast to float32 inside q8rt (float16 values are float32 here), marked
     * as a candidate for rounding to float16 precision: float16_cast_rounding decides */
    ir_attr *a = &n->attrs[n->n_attrs];
    bool to_f16 = domain[0] == '\0' && strcmp(op_type, "Cast") == 0 && a->type == IR_ATTR_INT &&
                  strcmp(a->name, "to") == 0 && a->i == Q8RT_DTYPE_FLOAT16;
    if (to_f16) a->i = Q8RT_DTYPE_FLOAT32;
    n->n_attrs++;
    if (to_f16) {
      ir_attr *r = &n->attrs[n->n_attrs++];
      memset(r, 0, sizeof(*r));
      r->name = IR_ATTR_ROUND_F16;
      r->type = IR_ATTR_INT;
      r->i = 1;
    }
  }
  return Q8RT_OK;
}

/* A graph's initializers and nodes into scope S. A branch's own values are defined before its
 * nodes are read, so that its names win over the enclosing scopes' wherever they appear. */
static q8rt_status read_graph_nodes(loader *L, const Onnx__GraphProto *gp, const ld_scope *S) {
  q8rt_status st;
  if (S->guard != 0) {
    if ((st = read_initializers(L, gp, S)) != Q8RT_OK) return st;
    for (size_t i = 0; i < gp->n_node; i++) {
      const Onnx__NodeProto *np = gp->node[i];
      for (size_t k = 0; k < np->n_output; k++) {
        int v;
        if (np->output[k] != NULL && np->output[k][0] != '\0' &&
            (st = define_value(L, S, np->output[k], &v, NULL)) != Q8RT_OK) {
          return st;
        }
      }
    }
  }
  for (size_t i = 0; i < gp->n_node; i++) {
    if ((st = read_node(L, gp->node[i], i, S)) != Q8RT_OK) return st;
  }
  return Q8RT_OK;
}

static bool has_source(const ir_value *v) { return v->producer >= 0 || v->graph_input >= 0 || v->constant != NULL; }

/* ONNX does not require nodes in topological order, so sources are checked once all are read. */
static q8rt_status check_sources(loader *L) {
  ir_graph *g = L->g;
  for (int i = 0; i < g->n_nodes; i++) {
    const ir_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] < 0) continue;
      const ir_value *v = &g->values[n->inputs[k]];
      if (!has_source(v)) {
        return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                         "node '%.150s' (%.60s) input '%.150s' is not produced by any node, graph input or initializer",
                         n->name, n->op_type, v->name);
      }
      /* A node reads values of its own scope and the enclosing ones; an If also reads its
       * branches' outputs. Anything else (a name that happens to equal a branch value's
       * prefixed name) would read a value that may never be computed. */
      int scope = n->guard;
      if (n->if_guard > 0 && k > 0) scope = n->if_guard + (k - 1 >= (n->n_inputs - 1) / 2);
      if (!ir_guard_within(g, scope, v->scope)) {
        return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                         "node '%.150s' (%.60s) input '%.150s' is a value of an If branch the node is not in", n->name,
                         n->op_type, v->name);
      }
    }
  }
  for (int i = 0; i < g->n_outputs; i++) {
    const ir_value *v = &g->values[g->outputs[i]];
    if (!has_source(v)) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                       "graph output '%.200s' is not produced by any node, graph input or initializer", v->name);
    }
  }
  return Q8RT_OK;
}

static q8rt_status read_value_infos(loader *L, const Onnx__GraphProto *gp) {
  for (size_t i = 0; i < gp->n_value_info; i++) {
    const Onnx__ValueInfoProto *vi = gp->value_info[i];
    /* Only values the graph uses: value_info may describe names nothing refers to. */
    int idx = ir_graph_find_value(L->g, str_or_empty(vi->name));
    if (idx < 0 || L->g->values[idx].constant != NULL || L->g->values[idx].scope != 0) continue;
    q8rt_status st = read_type(L, vi, "value", false, idx);
    if (st != Q8RT_OK) return st;
  }
  return Q8RT_OK;
}

/* ---- metadata_props ------------------------------------------------------------------------ */

/* Kept for q8rt_model_metadata (e.g. the recognizer's character list). Their bytes are already
 * bounded by the unpack budget; the count is capped so a model of millions of empty entries
 * cannot make lookups slow. */
#define MAX_METADATA_ENTRIES 4096

static q8rt_status read_metadata(loader *L, const Onnx__ModelProto *mp) {
  if (mp->n_metadata_props == 0) return Q8RT_OK;
  if (mp->n_metadata_props > MAX_METADATA_ENTRIES) {
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "model has %zu metadata_props entries; q8rt accepts at most %d",
                     mp->n_metadata_props, MAX_METADATA_ENTRIES);
  }
  ir_graph *g = L->g;
  g->metadata = q8rt_pool_array(&g->pool, mp->n_metadata_props, sizeof(ir_metadata));
  if (g->metadata == NULL) return oom(L);
  for (size_t i = 0; i < mp->n_metadata_props; i++) {
    const Onnx__MetadataEntry *e = mp->metadata_props[i];
    const ProtobufCBinaryData *k = &e->key, *v = &e->value;
    if (!e->has_key || k->len == 0 || memchr(k->data, 0, k->len) != NULL) {
      return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "metadata_props[%zu] has %s", i,
                       !e->has_key || k->len == 0 ? "no key" : "a key containing a NUL byte");
    }
    ir_metadata *m = &g->metadata[i];
    m->key = q8rt_pool_strndup(&g->pool, (const char *)k->data, k->len);
    m->value = q8rt_pool_strndup(&g->pool, e->has_value && v->len ? (const char *)v->data : "", v->len);
    if (m->key == NULL || m->value == NULL) return oom(L);
    m->value_len = v->len;
    g->n_metadata++;
  }
  return Q8RT_OK;
}

/* ---- float16 inputs and outputs ------------------------------------------------------------ */

static bool declared_float16(const Onnx__ValueInfoProto *vi) {
  const Onnx__TypeProto *type = vi->type;
  return type != NULL && type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && type->tensor_type != NULL &&
         type->tensor_type->has_elem_type && type->tensor_type->elem_type == Q8RT_DTYPE_FLOAT16;
}

/* A new value named after `base` (with a suffix no value has), its type and shape copied from
 * `from`; -1 on allocation failure. */
static int float16_twin(loader *L, int from, const char *suffix) {
  ir_graph *g = L->g;
  const char *base = g->values[from].name;
  size_t len = strlen(base) + strlen(suffix) + 24;
  char *buf = q8rt_alloc(g->allocator, len, 1);
  if (buf == NULL) return -1;
  int idx = -1;
  for (unsigned k = 0; k < 1000000u; k++) {
    if (k == 0)
      snprintf(buf, len, "%s%s", base, suffix);
    else
      snprintf(buf, len, "%s%s_%u", base, suffix, k);
    if (ir_graph_find_value(g, buf) < 0) {
      idx = ir_graph_intern_value(g, buf);
      break;
    }
  }
  q8rt_free(g->allocator, buf, len);
  if (idx < 0) return -1;
  ir_value *v = &g->values[idx], *f = &g->values[from]; /* after the intern: values may have moved */
  v->dtype = Q8RT_DTYPE_FLOAT32;
  v->rank = f->rank;
  for (int i = 0; i < f->rank; i++) {
    v->dims[i] = f->dims[i];
    v->dim_params[i] = f->dim_params[i];
  }
  v->scope = f->scope;
  return idx;
}

/* A Cast node (to = `to`) from value `in` to value `out`, named "<out>/float16"-like. */
static q8rt_status float16_cast(loader *L, int in, int out, q8rt_dtype to, const char *what) {
  ir_graph *g = L->g;
  int ni = ir_graph_add_node(g);
  if (ni < 0) return oom(L);
  ir_node *n = &g->nodes[ni];
  const char *vname = g->values[to == Q8RT_DTYPE_FLOAT16 ? out : in].name;
  size_t len = strlen(vname) + strlen(what) + 2;
  char *name = q8rt_pool_alloc(&g->pool, len, 1);
  n->inputs = q8rt_pool_array(&g->pool, 1, sizeof(int));
  n->outputs = q8rt_pool_array(&g->pool, 1, sizeof(int));
  n->attrs = q8rt_pool_array(&g->pool, 1, sizeof(ir_attr));
  if (name == NULL || n->inputs == NULL || n->outputs == NULL || n->attrs == NULL) return oom(L);
  snprintf(name, len, "%s/%s", vname, what);
  n->name = name;
  n->op_type = "Cast";
  n->domain = "";
  n->opset = (int)ir_graph_opset(g, "");
  n->n_inputs = n->n_outputs = n->n_attrs = 1;
  n->inputs[0] = in;
  n->outputs[0] = out;
  n->attrs[0].name = "to";
  n->attrs[0].type = IR_ATTR_INT;
  n->attrs[0].i = to;
  n->note = to == Q8RT_DTYPE_FLOAT16 ? "float16 output: rounded from the float32 q8rt computes"
                                     : "float16 input: widened to the float32 q8rt computes";
  g->values[in].consumers++;
  g->values[out].producer = ni;
  return Q8RT_OK;
}

/* Every node input that reads a value v with to[v] >= 0 now reads to[v] (the values' consumer
 * counts move): one pass over the nodes for all of the graph's float16 inputs and outputs (one pass
 * per value was O(values x node inputs), quadratic on a model of many float16 inputs). */
static void float16_rewire(ir_graph *g, const int *to) {
  for (int i = 0; i < g->n_nodes; i++) {
    ir_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++) {
      g->f16_rewire_steps++;
      const int from = n->inputs[k];
      if (from < 0 || to[from] < 0) continue;
      n->inputs[k] = to[from];
      g->values[from].consumers--;
      g->values[to[from]].consumers++;
    }
  }
}

/* ---- float16 values: where ONNX Runtime rounds --------------------------------------------- */

/* The ops ONNX Runtime's CPU provider (1.30, x86-64) runs on float16 data itself, as a model's
 * Cast to float16 followed by the op and a Cast back to float32 shows (the result is rounded to
 * float16 with these, float32 with every other op; tests/python/test_float16.py checks the list
 * against the installed ORT). Data movement and selection, plus LayerNormalization. */
static bool ort_float16_kernel(const ir_node *n) {
  static const char *const ops[] = {
      "Identity", "Reshape", "Flatten", "Transpose",      "Squeeze", "Unsqueeze", "Concat", "Slice",
      "Gather",   "Split",   "Expand",  "GatherElements", "Clip",    "Max",       "Min",    "LayerNormalization"};
  if (n->domain[0] != '\0') return false;
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
    if (strcmp(n->op_type, ops[i]) == 0) return true;
  return false;
}

static bool is_op(const ir_node *n, const char *op) { return n->domain[0] == '\0' && strcmp(n->op_type, op) == 0; }

/* ops whose CPU kernels take any tensor type (float16 included) and that never run in float32 for
 * ORT: the subgraph ops, Cast and the shape queries */
static bool ort_any_type_kernel(const ir_node *n) {
  return is_op(n, "If") || is_op(n, "Loop") || is_op(n, "Scan") || is_op(n, "Cast") || is_op(n, "CastLike") ||
         is_op(n, "Shape") || is_op(n, "Size");
}

/* ops whose outputs are never float16 whatever their inputs */
static bool non_float_outputs(const ir_node *n) {
  static const char *const ops[] = {"Shape",
                                    "Size",
                                    "Equal",
                                    "Less",
                                    "LessOrEqual",
                                    "Greater",
                                    "GreaterOrEqual",
                                    "Not",
                                    "And",
                                    "Or",
                                    "Xor",
                                    "IsNaN",
                                    "IsInf",
                                    "ArgMax",
                                    "ArgMin",
                                    "NonZero",
                                    "QuantizeLinear",
                                    "DynamicQuantizeLinear",
                                    "NonMaxSuppression",
                                    "ConstantOfShape",
                                    "EyeLike",
                                    "RandomNormalLike",
                                    "RandomUniformLike",
                                    "Multinomial",
                                    "StringNormalizer"};
  if (n->domain[0] != '\0') return true; /* contrib and q8rt ops: not float16 graphs' */
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
    if (strcmp(n->op_type, ops[i]) == 0) return true;
  return false;
}

static bool round_f16_cast(const ir_node *n) { return ir_node_attr(n, IR_ATTR_ROUND_F16) != NULL; }

/* Whether output k of node n (its inputs' flags known) is float16 in the model. */
static bool output_float16(const ir_graph *g, const ir_node *n, int k) {
  const ir_value *o = &g->values[n->outputs[k]];
  if (o->dtype != Q8RT_DTYPE_UNDEFINED) return o->f16; /* declared (value_info) */
  if (is_op(n, "Cast")) return round_f16_cast(n);
  if (is_op(n, "CastLike")) return n->n_inputs > 1 && n->inputs[1] >= 0 && g->values[n->inputs[1]].f16;
  if (is_op(n, "If")) {
    const int nout = n->n_outputs;
    for (int side = 0; side < 2; side++) {
      const int in = 1 + side * nout + k;
      if (in < n->n_inputs && n->inputs[in] >= 0 && g->values[n->inputs[in]].f16) return true;
    }
    return false;
  }
  if ((is_op(n, "Loop") || is_op(n, "Scan")) && n->body != NULL) {
    const int bo = is_op(n, "Loop") ? k + 1 : k;
    return bo < n->body->n_outputs && n->body->values[n->body->outputs[bo]].f16;
  }
  if (non_float_outputs(n)) return false;
  /* the ops with an integer output past the first: TopK's and MaxPool's indices, the stats of the
   * normalizations, Dropout's mask, Unique's indices and counts */
  if (k > 0 && (is_op(n, "TopK") || is_op(n, "MaxPool") || is_op(n, "Dropout") || is_op(n, "Unique") ||
                is_op(n, "LayerNormalization") || is_op(n, "BatchNormalization"))) {
    return false;
  }
  if (is_op(n, "Where")) {
    for (int i = 1; i < n->n_inputs && i < 3; i++)
      if (n->inputs[i] >= 0 && g->values[n->inputs[i]].f16) return true;
    return false;
  }
  for (int i = 0; i < n->n_inputs; i++)
    if (n->inputs[i] >= 0 && g->values[n->inputs[i]].f16) return true;
  return false;
}

/* A Cast to float32 that rounds to float16 precision (OP_ATTR_ROUND_F16), from `in` to `to` (-1: a
 * new value "<in>/float16", for the readers the caller moves), in If-branch guard `guard`; the
 * output's index in *out. */
static q8rt_status float16_round_node(loader *L, int in, int to, int guard, int *out) {
  ir_graph *g = L->g;
  int r = to;
  if (r < 0) {
    const char *base = g->values[in].name;
    size_t len = strlen(base) + 32;
    char *buf = q8rt_alloc(g->allocator, len, 1);
    if (buf == NULL) return oom(L);
    for (unsigned k = 0; k < 1000000u && r < 0; k++) {
      if (k == 0)
        snprintf(buf, len, "%s/float16", base);
      else
        snprintf(buf, len, "%s/float16_%u", base, k);
      if (ir_graph_find_value(g, buf) < 0) r = ir_graph_intern_value(g, buf);
    }
    q8rt_free(g->allocator, buf, len);
    if (r < 0) return oom(L);
  }
  ir_value *v = &g->values[r], *f = &g->values[in];
  if (to < 0) {
    v->dtype = f->dtype;
    v->rank = f->rank;
    for (int i = 0; i < f->rank; i++) {
      v->dims[i] = f->dims[i];
      v->dim_params[i] = f->dim_params[i];
    }
    v->scope = f->scope;
  }
  v->f16 = 1;
  int ni = ir_graph_add_node(g);
  if (ni < 0) return oom(L);
  ir_node *n = &g->nodes[ni];
  size_t len = strlen(v->name) + 8;
  char *name = q8rt_pool_alloc(&g->pool, len, 1);
  n->inputs = q8rt_pool_array(&g->pool, 1, sizeof(int));
  n->outputs = q8rt_pool_array(&g->pool, 1, sizeof(int));
  n->attrs = q8rt_pool_array(&g->pool, 2, sizeof(ir_attr));
  if (name == NULL || n->inputs == NULL || n->outputs == NULL || n->attrs == NULL) return oom(L);
  snprintf(name, len, "%s/round", v->name);
  n->name = name;
  n->op_type = "Cast";
  n->domain = "";
  n->opset = (int)ir_graph_opset(g, "");
  n->guard = guard;
  n->n_inputs = n->n_outputs = 1;
  n->inputs[0] = in;
  n->outputs[0] = r;
  memset(n->attrs, 0, 2 * sizeof(ir_attr));
  n->attrs[0].name = "to";
  n->attrs[0].type = IR_ATTR_INT;
  n->attrs[0].i = Q8RT_DTYPE_FLOAT32;
  n->attrs[1].name = IR_ATTR_ROUND_F16;
  n->attrs[1].type = IR_ATTR_INT;
  n->attrs[1].i = 1;
  n->n_attrs = 2;
  n->note = "float16 value: rounded where ONNX Runtime's CPU provider keeps it in float16";
  g->values[in].consumers++;
  g->values[r].producer = ni;
  *out = r;
  return Q8RT_OK;
}

/* q8rt computes a float16 graph in float32; ONNX Runtime 1.30's CPU provider does too, except
 * where it keeps a node on its float16 kernel, and this pass makes q8rt round to float16 exactly
 * there. ORT (InsertCastTransformer): a node with float16 inputs and no float16 kernel runs in
 * float32 between inserted Casts; a node with a float16 kernel (ort_float16_kernel, the any-type
 * ops) runs in float16 unless it is "isolated": no subgraph, no graph output among its outputs,
 * some input from another node, every node that gives its float16 data input(s) runs in float32
 * and every node that reads its float16 output runs in float32 (then it is forced to float32 too;
 * decided node by node in the graph's order). RemoveDuplicateCastTransformer then drops each
 * Cast pair float32 -> float16 -> float32 whose end is not a graph output. So a float16 value
 * computed in float32 (by a node running in float32, or a model's Cast to float16) is rounded
 * where a node running in float16 reads it, where it is a subgraph's output, and for a model Cast
 * that is kept (to another type, or a graph output) when the rounding Cast stays; every other
 * reader gets the float32 value. A float16 LayerNormalization rounds its output. g's values get
 * their f16 flags (declared, float16 constants, then through the nodes in topological order). */
static q8rt_status float16_cast_rounding(loader *L, ir_graph *g) {
  bool any = false;
  for (int v = 0; v < g->n_values && !any; v++) any = g->values[v].f16 != 0;
  for (int i = 0; i < g->n_nodes && !any; i++) any = round_f16_cast(&g->nodes[i]);
  if (!any) return Q8RT_OK;
  const int nn = g->n_nodes, nv = g->n_values;
  /* CSR of each value's readers (node, input), and the topological order (Kahn) */
  size_t n_edges = 0;
  for (int i = 0; i < nn; i++) n_edges += (size_t)g->nodes[i].n_inputs;
  const size_t ints = (size_t)nv + 1 + 2 * n_edges + 3 * (size_t)nn + 1;
  int *mem = q8rt_alloc(g->allocator, ints * sizeof(int), _Alignof(int));
  if (mem == NULL) return oom(L);
  int *start = mem, *rd_node = start + nv + 1, *rd_in = rd_node + n_edges, *order = rd_in + n_edges;
  int *indeg = order + nn, *state = indeg + nn;
  memset(start, 0, ((size_t)nv + 1) * sizeof(int));
  for (int i = 0; i < nn; i++) {
    const ir_node *n = &g->nodes[i];
    indeg[i] = 0;
    for (int k = 0; k < n->n_inputs; k++) {
      const int v = n->inputs[k];
      if (v < 0) continue;
      start[v + 1]++;
      if (g->values[v].producer >= 0) indeg[i]++;
    }
  }
  for (int v = 0; v < nv; v++) start[v + 1] += start[v];
  {
    int *pos = q8rt_alloc(g->allocator, ((size_t)nv + 1) * sizeof(int), _Alignof(int));
    if (pos == NULL) {
      q8rt_free(g->allocator, mem, ints * sizeof(int));
      return oom(L);
    }
    memcpy(pos, start, ((size_t)nv + 1) * sizeof(int));
    for (int i = 0; i < nn; i++) {
      const ir_node *n = &g->nodes[i];
      for (int k = 0; k < n->n_inputs; k++) {
        const int v = n->inputs[k];
        if (v < 0) continue;
        rd_node[pos[v]] = i;
        rd_in[pos[v]++] = k;
      }
    }
    q8rt_free(g->allocator, pos, ((size_t)nv + 1) * sizeof(int));
  }
  int head = 0, tail = 0;
  for (int i = 0; i < nn; i++)
    if (indeg[i] == 0) order[tail++] = i;
  while (head < tail) {
    const ir_node *n = &g->nodes[order[head++]];
    for (int k = 0; k < n->n_outputs; k++) {
      const int v = n->outputs[k];
      if (v < 0) continue;
      for (int e = start[v]; e < start[v + 1]; e++)
        if (--indeg[rd_node[e]] == 0) order[tail++] = rd_node[e];
    }
  }
  /* a cycle (check_sources does not look for one): leave the rest in the graph's order */
  if (tail < nn) {
    for (int i = 0; i < nn; i++)
      if (indeg[i] > 0) order[tail++] = i;
  }
  /* the f16 flags of computed values */
  for (int o = 0; o < nn; o++) {
    const ir_node *n = &g->nodes[order[o]];
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0) g->values[n->outputs[k]].f16 = output_float16(g, n, k);
  }
  /* ORT's EliminateIdentity runs first: an Identity (not making a graph output) is no node to it,
   * its readers read its input. The readers' table is rebuilt that way (rootv: the value an Identity
   * chain starts from, in topological order: linear) for everything below. */
  int *rootv = q8rt_alloc(g->allocator, ((size_t)nv + 1) * sizeof(int), _Alignof(int));
  if (rootv == NULL) {
    q8rt_free(g->allocator, mem, ints * sizeof(int));
    return oom(L);
  }
  for (int v = 0; v < nv; v++) rootv[v] = v;
#define F16_ELIM(n)                                                                              \
  (is_op((n), "Identity") && (n)->n_inputs >= 1 && (n)->n_outputs >= 1 && (n)->inputs[0] >= 0 && \
   (n)->outputs[0] >= 0 && g->values[(n)->outputs[0]].graph_output < 0)
  for (int o = 0; o < nn; o++) {
    const ir_node *n = &g->nodes[order[o]];
    if (F16_ELIM(n)) rootv[n->outputs[0]] = rootv[n->inputs[0]];
  }
  memset(start, 0, ((size_t)nv + 1) * sizeof(int));
  for (int i = 0; i < nn; i++) {
    const ir_node *n = &g->nodes[i];
    if (F16_ELIM(n)) continue;
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) start[rootv[n->inputs[k]] + 1]++;
  }
  for (int v = 0; v < nv; v++) start[v + 1] += start[v];
  {
    int *pos = q8rt_alloc(g->allocator, ((size_t)nv + 1) * sizeof(int), _Alignof(int));
    if (pos == NULL) {
      q8rt_free(g->allocator, rootv, ((size_t)nv + 1) * sizeof(int));
      q8rt_free(g->allocator, mem, ints * sizeof(int));
      return oom(L);
    }
    memcpy(pos, start, ((size_t)nv + 1) * sizeof(int));
    for (int i = 0; i < nn; i++) {
      const ir_node *n = &g->nodes[i];
      if (F16_ELIM(n)) continue;
      for (int k = 0; k < n->n_inputs; k++) {
        if (n->inputs[k] < 0) continue;
        const int v = rootv[n->inputs[k]];
        rd_node[pos[v]] = i;
        rd_in[pos[v]++] = k;
      }
    }
    q8rt_free(g->allocator, pos, ((size_t)nv + 1) * sizeof(int));
  }
  /* state: 0 no float16 input (or runs as before, or an eliminated Identity), 1 runs in float32
   * (unassigned in ORT), 2 runs on a float16 kernel */
  for (int i = 0; i < nn; i++) {
    const ir_node *n = &g->nodes[i];
    bool in16 = false;
    for (int k = 0; k < n->n_inputs && !in16; k++) in16 = n->inputs[k] >= 0 && g->values[n->inputs[k]].f16;
    state[i] = !in16 || F16_ELIM(n) ? 0 : ort_float16_kernel(n) || ort_any_type_kernel(n) ? 2 : 1;
  }
#undef F16_ELIM
  /* ORT's isolated float16 nodes, in the graph's order (each decision sees the ones before it) */
  for (int i = 0; i < nn; i++) {
    const ir_node *n = &g->nodes[i];
    if (state[i] != 2 || !ort_float16_kernel(n)) continue;
    bool edge = false, out_graph = false;
    for (int k = 0; k < n->n_inputs; k++) edge |= n->inputs[k] >= 0 && g->values[n->inputs[k]].producer >= 0;
    for (int k = 0; k < n->n_outputs; k++)
      out_graph |= n->outputs[k] >= 0 && g->values[n->outputs[k]].graph_output >= 0;
    if (!edge || out_graph) continue;
    /* the float16 data inputs ORT looks at: the first of each type-constrained parameter (all of
     * Clip's and LayerNormalization's, the first of the others: variadic Concat/Max/Min count one) */
    const bool all_in = is_op(n, "Clip") || is_op(n, "LayerNormalization");
    bool isolated = true, any16 = false;
    for (int k = 0; k < (all_in ? n->n_inputs : 1) && k < n->n_inputs && isolated; k++) {
      const int v = n->inputs[k];
      if (v < 0 || !g->values[v].f16) continue;
      any16 = true;
      const int p = g->values[v].producer;
      if (p >= 0 && state[p] != 1) isolated = false;
    }
    if (!any16 || !isolated) continue;
    const int y = n->n_outputs > 0 ? n->outputs[0] : -1; /* the float16 output (the others: indices, stats) */
    if (y < 0 || !g->values[y].f16) continue;
    for (int e = start[y]; e < start[y + 1] && isolated; e++) isolated = state[rd_node[e]] == 1;
    if (isolated) state[i] = 1;
  }
  q8rt_status st = Q8RT_OK;
  /* a float16 LayerNormalization rounds its result: it writes a new value, rounded into its output */
  for (int i = 0; i < nn && st == Q8RT_OK; i++) {
    if (state[i] != 2 || !is_op(&g->nodes[i], "LayerNormalization") || g->nodes[i].n_outputs < 1) continue;
    const int y = g->nodes[i].outputs[0];
    if (y < 0) continue;
    /* the LayerNormalization computes u, the rounding Cast writes y (its readers and graph output stay) */
    const int u = float16_twin(L, y, "/float32");
    if (u < 0) {
      st = oom(L);
      break;
    }
    g->nodes[i].outputs[0] = u;
    g->values[u].producer = i;
    int r;
    st = float16_round_node(L, u, y, g->nodes[i].guard, &r);
  }
  /* the rounding of each float16 value computed in float32 */
  for (int v = 0; v < nv && st == Q8RT_OK; v++) {
    ir_value *x = &g->values[v];
    if (!x->f16 || x->producer < 0) continue;
    const int p = x->producer;
    if (p >= nn) continue; /* a LayerNormalization's rounded output */
    ir_node *pn = &g->nodes[p];
    const bool model_cast = is_op(pn, "Cast") && round_f16_cast(pn);
    if (!model_cast && state[p] != 1) continue;
    /* which readers get the rounded value */
    bool stays = x->graph_output >= 0, need_all = true, any_need = false, unsafe_child = false;
    for (int e = start[v]; e < start[v + 1]; e++) {
      const ir_node *c = &g->nodes[rd_node[e]];
      if ((state[rd_node[e]] & 3) == 2 && !is_op(c, "Cast")) stays = true;
      if (is_op(c, "Cast") && !round_f16_cast(c)) {
        const ir_attr *to = ir_node_attr(c, "to");
        /* ORT's UnsafeCast(to, float16): wider floats, integers of 16+ bits, bfloat16 */
        static const int64_t unsafe[] = {1, 4, 5, 6, 7, 11, 12, 13, 16};
        for (size_t u = 0; to != NULL && u < sizeof(unsafe) / sizeof(unsafe[0]); u++)
          unsafe_child |= to->i == unsafe[u];
      }
    }
    /* a model Cast to float16 read by a model Cast ORT deems unsafe to undo: ORT removes none of its
     * Cast pairs, so every reader gets the rounded value */
    if (model_cast && unsafe_child) stays = true;
    /* ORT's constant folding turns a Cast to float16 of a constant into a float16 initializer */
    if (model_cast && pn->n_inputs > 0 && pn->inputs[0] >= 0 && g->values[pn->inputs[0]].constant != NULL) {
      stays = true;
      unsafe_child = true; /* every reader, those running in float32 too, reads the rounded value */
    }
    for (int e = start[v]; e < start[v + 1]; e++) {
      const int ci = rd_node[e];
      const ir_node *c = &g->nodes[ci];
      bool need;
      if ((state[ci] & 3) == 1)
        need = model_cast && unsafe_child;
      else if (is_op(c, "Cast") && !round_f16_cast(c)) {
        const ir_attr *to = ir_node_attr(c, "to");
        const bool pair = to != NULL && to->i == Q8RT_DTYPE_FLOAT32 && c->outputs[0] >= 0 &&
                          g->values[c->outputs[0]].graph_output < 0 && !(model_cast && unsafe_child);
        need = stays && !pair;
      } else
        need = stays;
      state[ci] |= need ? 4 : 0; /* marks this reader for the rewiring below */
      any_need |= need;
      need_all &= need;
    }
    const bool body_out = g->is_body && x->graph_output >= 0;
    if (model_cast) {
      ir_attr *ra = (ir_attr *)ir_node_attr(pn, IR_ATTR_ROUND_F16);
      if (need_all) { /* every reader (and a body output) takes the rounded value: the Cast rounds */
        ra->i = any_need || body_out;
        for (int e = start[v]; e < start[v + 1]; e++) state[rd_node[e]] &= 3;
        continue;
      }
      ra->i = 0;
    }
    if (!any_need && !body_out) continue;
    int r;
    if ((st = float16_round_node(L, v, -1, pn->guard, &r)) != Q8RT_OK) break;
    x = &g->values[v];
    for (int e = start[v]; e < start[v + 1]; e++) {
      const int ci = rd_node[e];
      if (!(state[ci] & 4)) continue;
      g->values[g->nodes[ci].inputs[rd_in[e]]].consumers--; /* x, or an eliminated Identity's output */
      g->nodes[ci].inputs[rd_in[e]] = r;
      g->values[r].consumers++;
    }
    for (int e = start[v]; e < start[v + 1]; e++) state[rd_node[e]] &= 3;
    if (body_out) {
      for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v) g->outputs[i] = r;
      g->values[r].graph_output = x->graph_output;
      x->graph_output = -1;
    }
  }
  q8rt_free(g->allocator, rootv, ((size_t)nv + 1) * sizeof(int));
  q8rt_free(g->allocator, mem, ints * sizeof(int));
  return st;
}

/* q8rt computes a float16 graph in float32, as ONNX Runtime's CPU provider does: it has float32
 * kernels for every op, inserts Cast float16 -> float32 before and float32 -> float16 after each
 * node that lacks a float16 kernel, then removes each float32 -> float16 -> float32 pair of Casts
 * (RemoveDuplicateCastTransformer: both types are "Float"), so values between such nodes stay
 * float32 and are rounded to float16 only where the graph's outputs are (or where a value passes a
 * node that does have a float16 kernel: data movement ops, which ORT keeps in float16; the
 * rounding there is the one difference within float tolerance). The loader widens float16
 * constants and value types; here the main graph's float16 inputs get a Cast to float32 in front
 * of their readers, and its float16 outputs a Cast from the float32 value that computes them. */
static q8rt_status widen_float16_io(loader *L, const Onnx__GraphProto *gp) {
  ir_graph *g = L->g;
  bool any = false;
  for (size_t i = 0; i < gp->n_input && !any; i++) any = declared_float16(gp->input[i]);
  for (size_t i = 0; i < gp->n_output && !any; i++) any = declared_float16(gp->output[i]);
  if (!any) return Q8RT_OK;
  /* each float16 input x: x/float32 (twin[x]) takes its place at its readers, computed by a Cast
   * from x; each float16 output y: y/float32 takes its place as the float32 value (its producer
   * or constant, its readers), y becomes a Cast's output from it. The twins are made first, the
   * readers moved in one pass, then the Casts added (they read the twins). */
  const int n_before = g->n_values;
  const size_t cap = (size_t)n_before + 1;
  int *twin = q8rt_alloc(g->allocator, cap * sizeof(int), _Alignof(int));
  if (twin == NULL) return oom(L);
  for (int v = 0; v < n_before; v++) twin[v] = -1;
  q8rt_status st = Q8RT_OK;
  for (size_t i = 0; st == Q8RT_OK && i < gp->n_input; i++) {
    if (!declared_float16(gp->input[i])) continue;
    int x = ir_graph_find_value(g, str_or_empty(gp->input[i]->name));
    if (x < 0 || g->values[x].graph_input < 0 || twin[x] >= 0) continue; /* an initializer listed as an input */
    int w = float16_twin(L, x, "/float32");
    if (w < 0) {
      st = oom(L);
      break;
    }
    twin[x] = w;
    g->values[x].dtype = Q8RT_DTYPE_FLOAT16;
  }
  for (size_t i = 0; st == Q8RT_OK && i < gp->n_output; i++) {
    if (!declared_float16(gp->output[i])) continue;
    int y = ir_graph_find_value(g, str_or_empty(gp->output[i]->name));
    if (y < 0 || g->values[y].dtype == Q8RT_DTYPE_FLOAT16) continue; /* a float16 input, as it is (or listed twice) */
    if (g->values[y].dtype != Q8RT_DTYPE_FLOAT32 && g->values[y].dtype != Q8RT_DTYPE_UNDEFINED) {
      st = q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "graph output '%.200s' is declared float16 but is %s",
                     g->values[y].name, q8rt_dtype_name(g->values[y].dtype));
      break;
    }
    if (g->values[y].graph_input >= 0) {
      st = q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL,
                     "graph output '%.200s' is declared float16 but is a graph input of another type",
                     g->values[y].name);
      break;
    }
    int w = float16_twin(L, y, "/float32");
    if (w < 0) {
      st = oom(L);
      break;
    }
    twin[y] = w;
    ir_value *vy = &g->values[y], *vw = &g->values[w];
    vw->constant = vy->constant;
    vw->producer = vy->producer;
    vy->constant = NULL;
    if (vw->producer >= 0) {
      ir_node *p = &g->nodes[vw->producer];
      for (int k = 0; k < p->n_outputs; k++)
        if (p->outputs[k] == y) p->outputs[k] = w;
    }
    vy->dtype = Q8RT_DTYPE_FLOAT16;
  }
  if (st == Q8RT_OK) float16_rewire(g, twin);
  for (int v = 0; st == Q8RT_OK && v < n_before; v++) {
    if (twin[v] < 0) continue;
    const bool input = g->values[v].graph_input >= 0;
    st = input ? float16_cast(L, v, twin[v], Q8RT_DTYPE_FLOAT32, "to_float32")
               : float16_cast(L, twin[v], v, Q8RT_DTYPE_FLOAT16, "to_float16");
  }
  q8rt_free(g->allocator, twin, cap * sizeof(int));
  return st;
}

static q8rt_status build_graph(loader *L, const Onnx__ModelProto *mp) {
  const Onnx__GraphProto *gp = mp->graph;
  if (gp == NULL)
    return q8rt_fail(L->err, Q8RT_ERROR_INVALID_MODEL, "model has no graph (ModelProto.graph is missing)");
  L->g->ir_version = mp->has_ir_version ? mp->ir_version : 0;
  q8rt_status st = read_opsets(L, mp);
  if (st != Q8RT_OK) return st;
  if ((st = read_metadata(L, mp)) != Q8RT_OK) return st;
  if (gp->name != NULL) {
    L->g->name = q8rt_pool_strdup(&L->g->pool, gp->name);
    if (L->g->name == NULL) return oom(L);
  }
  const ld_scope main_scope = {NULL, "", 0, 0};
  if ((st = read_initializers(L, gp, &main_scope)) != Q8RT_OK) return st;
  if ((st = read_inputs(L, gp)) != Q8RT_OK) return st;
  if ((st = read_outputs(L, gp)) != Q8RT_OK) return st;
  if ((st = read_graph_nodes(L, gp, &main_scope)) != Q8RT_OK) return st;
  if ((st = check_sources(L)) != Q8RT_OK) return st;
  if ((st = read_value_infos(L, gp)) != Q8RT_OK) return st;
  if ((st = float16_cast_rounding(L, L->g)) != Q8RT_OK) return st;
  return widen_float16_io(L, gp);
}

q8rt_status q8rt_load_graph(const void *data, size_t size, const q8rt_load_config *cfg, ir_graph **out,
                            q8rt_error *err) {
  if (out == NULL) return q8rt_fail(err, Q8RT_ERROR_INVALID_ARGUMENT, "load: out must not be NULL");
  *out = NULL;
  if (data == NULL && size > 0) return q8rt_fail(err, Q8RT_ERROR_INVALID_ARGUMENT, "load: data is NULL");
  q8rt_load_config defaults = {NULL, 0, NULL};
  if (cfg == NULL) cfg = &defaults;
  const q8rt_allocator *a = cfg->allocator != NULL ? cfg->allocator : q8rt_default_allocator();
  size_t budget = cfg->max_unpack_bytes != 0 ? cfg->max_unpack_bytes : q8rt_default_unpack_budget(size);

  q8rt_status st = check_subgraph_depth(data, size, err);
  if (st != Q8RT_OK) return st;
  ld_meter m;
  ld_meter_init(&m, a, budget);
  Onnx__ModelProto *mp = onnx__model_proto__unpack(&m.pb, size, data);
  if (mp == NULL) return ld_unpack_failure(&m, "model", err);

  ir_graph *g = ir_graph_create(a);
  if (g == NULL) {
    onnx__model_proto__free_unpacked(mp, &m.pb);
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory creating the graph");
  }
  loader L = {g, cfg, err, NULL, 0, NULL, NULL};
  st = build_graph(&L, mp);
  q8rt_free(a, L.scratch, L.scratch_cap);
  onnx__model_proto__free_unpacked(mp, &m.pb);
  if (st != Q8RT_OK) {
    ir_graph_free(g);
    return st;
  }
  *out = g;
  return Q8RT_OK;
}
