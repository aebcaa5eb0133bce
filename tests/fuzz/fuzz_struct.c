/* libFuzzer target with a structure-aware mutator: the input is an ONNX ModelProto; the custom
 * mutator unpacks it with protobuf-c, changes one thing a model author (or an attacker) controls
 * — an attribute value, type or element count, a dimension of a graph input/output/value_info, an
 * initializer's dims, type or data length, a node's op type (drawn from q8rt's op registry, so
 * ops added later are drawn too) or wiring, an opset version — and packs it again. Byte-level
 * mutations of fuzz_load rarely survive protobuf decoding with a meaningful change; these do.
 *
 * The target loads the model (budgets as in fuzz_load), binds symbolic dimensions to 1 and then
 * to 3 on one session, fills the inputs (NaN/inf/denormal floats included) and runs. Any crash,
 * sanitizer report, leak, or failure without a message is a finding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "onnx-q8rt.pb-c.h"
#include "ops/op.h"
#include "q8rt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* ---- target -------------------------------------------------------------------------------- */

static int bind_fill_run(q8rt_session *s, const q8rt_model *m, int64_t sym, const uint8_t *src, size_t n) {
  q8rt_error err;
  memset(&err, 0, sizeof(err));
  const size_t n_in = q8rt_model_input_count(m);
  for (size_t i = 0; i < n_in; i++) {
    q8rt_tensor_info info;
    if (q8rt_model_input_info(m, i, &info, &err) != Q8RT_OK) FZ_FAIL();
    int64_t shape[Q8RT_MAX_RANK];
    for (int d = 0; d < info.rank; d++) shape[d] = info.shape[d] < 0 ? sym : info.shape[d];
    q8rt_status st = q8rt_session_set_input_shape(s, i, shape, info.rank, &err);
    if (st != Q8RT_OK) {
      if (err.message[0] == '\0') FZ_FAIL();
      return 0;
    }
  }
  for (size_t i = 0; i < n_in; i++) {
    void *buf;
    size_t nb;
    q8rt_tensor_info info;
    q8rt_model_input_info(m, i, &info, NULL);
    if (q8rt_session_input_buffer(s, i, &buf, &nb, &err) != Q8RT_OK) {
      if (err.message[0] == '\0') FZ_FAIL();
      return 0;
    }
    fz_fill(info.dtype, buf, nb, src, n);
  }
  if (q8rt_session_run(s, &err) != Q8RT_OK) {
    if (err.message[0] == '\0') FZ_FAIL();
    return 0;
  }
  for (size_t i = 0; i < q8rt_model_output_count(m); i++) {
    const void *out;
    size_t nb;
    if (q8rt_session_get_output(s, i, NULL, &out, &nb, &err) != Q8RT_OK) FZ_FAIL();
    if (nb > 0) {
      volatile uint8_t sink = ((const uint8_t *)out)[0] ^ ((const uint8_t *)out)[nb - 1];
      (void)sink;
    }
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  q8rt_model *model = fz_load_model(data, size);
  if (model == NULL) return 0;
  q8rt_error err;
  memset(&err, 0, sizeof(err));
  q8rt_session_options so;
  q8rt_session_options_init(&so);
  so.max_arena_bytes = 8u << 20;
  so.max_loop_iterations = FZ_MAX_LOOP_ITERATIONS;
  q8rt_session *s = NULL;
  if (q8rt_session_create(model, &so, &s, &err) == Q8RT_OK) {
    bind_fill_run(s, model, 1, data, size);
    bind_fill_run(s, model, 3, data + size / 2, size - size / 2);
  } else if (err.message[0] == '\0') {
    FZ_FAIL();
  }
  q8rt_session_free(s);
  q8rt_model_free(model);
  return 0;
}

/* ---- mutator ------------------------------------------------------------------------------- */

typedef struct rng {
  uint64_t s;
} rng;

static uint64_t next(rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static size_t below(rng *r, size_t n) { return n ? (size_t)(next(r) % n) : 0; }

static int64_t interesting_int(rng *r) {
  static const int64_t v[] = {0,
                              1,
                              -1,
                              2,
                              3,
                              -2,
                              4,
                              7,
                              8,
                              16,
                              255,
                              256,
                              -128,
                              127,
                              65535,
                              1 << 20,
                              INT32_MAX,
                              INT32_MIN,
                              INT64_MAX,
                              INT64_MIN,
                              (int64_t)1 << 32,
                              -((int64_t)1 << 40),
                              5,
                              -3};
  if (below(r, 4) == 0) return (int64_t)next(r);
  return v[below(r, sizeof(v) / sizeof(v[0]))];
}

static float interesting_float(rng *r) {
  static const uint32_t bits[] = {0x7fc00000u, 0xff800000u, 0x7f800000u, 0x00000001u, 0x80000000u, 0x00000000u,
                                  0x7f7fffffu, 0x3f800000u, 0xbf800000u, 0x3f000000u, 0x4f000000u, 0x33d6bf95u};
  float f;
  uint32_t b = bits[below(r, sizeof(bits) / sizeof(bits[0]))];
  memcpy(&f, &b, 4);
  return f;
}

static const char *const attr_names[] = {
    "axis",
    "axes",
    "perm",
    "pads",
    "strides",
    "kernel_shape",
    "dilations",
    "group",
    "alpha",
    "beta",
    "epsilon",
    "mode",
    "keepdims",
    "to",
    "split",
    "auto_pad",
    "ceil_mode",
    "transA",
    "transB",
    "allowzero",
    "value",
    "starts",
    "ends",
    "block_size",
    "k",
    "largest",
    "sorted",
    "direction",
    "hidden_size",
    "blocksize",
    "output_padding",
    "output_shape",
    "coordinate_transformation_mode",
    "exclusive",
    "reverse",
    "noop_with_empty_axes",
    "batch_dims",
    "min",
    "max",
    "count_include_pad",
    "storage_order",
};

static bool grow(void **arr, size_t *n, size_t elem) {
  void *p = realloc(*arr, (*n + 1) * elem);
  if (p == NULL) return false;
  *arr = p;
  memset((char *)p + *n * elem, 0, elem);
  (*n)++;
  return true;
}

static bool mutate_attribute(rng *r, Onnx__GraphProto *g) {
  if (g->n_node == 0) return false;
  Onnx__NodeProto *n = g->node[below(r, g->n_node)];
  if (n->n_attribute == 0 || below(r, 6) == 0) {
    /* add an attribute a node may or may not know */
    Onnx__AttributeProto *a = malloc(sizeof(*a));
    if (a == NULL) return false;
    onnx__attribute_proto__init(a);
    a->name = strdup(attr_names[below(r, sizeof(attr_names) / sizeof(attr_names[0]))]);
    a->has_type = 1;
    if (below(r, 2)) {
      a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
      a->has_i = 1;
      a->i = interesting_int(r);
    } else {
      a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
      a->n_ints = 1 + below(r, 6);
      a->ints = malloc(a->n_ints * sizeof(int64_t));
      for (size_t k = 0; a->ints && k < a->n_ints; k++) a->ints[k] = interesting_int(r);
      if (a->ints == NULL) a->n_ints = 0;
    }
    if (a->name == NULL || !grow((void **)&n->attribute, &n->n_attribute, sizeof(*n->attribute))) {
      protobuf_c_message_free_unpacked(&a->base, NULL);
      return false;
    }
    n->attribute[n->n_attribute - 1] = a;
    return true;
  }
  Onnx__AttributeProto *a = n->attribute[below(r, n->n_attribute)];
  switch (below(r, 8)) {
    case 0:
      a->has_i = 1;
      a->i = interesting_int(r);
      return true;
    case 1:
      a->has_f = 1;
      a->f = interesting_float(r);
      return true;
    case 2:
      if (a->n_ints == 0) return false;
      a->ints[below(r, a->n_ints)] = interesting_int(r);
      return true;
    case 3:
      if (!grow((void **)&a->ints, &a->n_ints, sizeof(int64_t))) return false;
      a->ints[a->n_ints - 1] = interesting_int(r);
      return true;
    case 4:
      if (a->n_ints == 0) return false;
      a->n_ints--;
      return true;
    case 5:
      if (a->n_floats == 0) return false;
      a->floats[below(r, a->n_floats)] = interesting_float(r);
      return true;
    case 6:
      a->has_type = 1;
      a->type = (Onnx__AttributeProto__AttributeType)below(r, 15);
      return true;
    default:
      if (a->t == NULL) return false;
      a->t->has_data_type = 1;
      a->t->data_type = (int32_t)below(r, 24);
      return true;
  }
}

static Onnx__TensorShapeProto *pick_shape(rng *r, Onnx__GraphProto *g) {
  const size_t total = g->n_input + g->n_output + g->n_value_info;
  if (total == 0) return NULL;
  size_t k = below(r, total);
  Onnx__ValueInfoProto *vi = k < g->n_input                 ? g->input[k]
                             : k < g->n_input + g->n_output ? g->output[k - g->n_input]
                                                            : g->value_info[k - g->n_input - g->n_output];
  if (vi->type == NULL || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || vi->type->tensor_type == NULL)
    return NULL;
  if (below(r, 8) == 0) {
    vi->type->tensor_type->has_elem_type = 1;
    vi->type->tensor_type->elem_type = (int32_t)below(r, 24);
  }
  return vi->type->tensor_type->shape;
}

static bool mutate_dims(rng *r, Onnx__GraphProto *g) {
  Onnx__TensorShapeProto *sh = pick_shape(r, g);
  if (sh == NULL) return false;
  if (sh->n_dim == 0 || below(r, 5) == 0) {
    /* rank change: append a dim or drop the last */
    if (sh->n_dim > 0 && below(r, 2)) {
      protobuf_c_message_free_unpacked(&sh->dim[--sh->n_dim]->base, NULL);
      return true;
    }
    Onnx__TensorShapeProto__Dimension *d = malloc(sizeof(*d));
    if (d == NULL) return false;
    onnx__tensor_shape_proto__dimension__init(d);
    d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    d->dim_value = 1 + (int64_t)below(r, 4);
    if (!grow((void **)&sh->dim, &sh->n_dim, sizeof(*sh->dim))) {
      free(d);
      return false;
    }
    sh->dim[sh->n_dim - 1] = d;
    return true;
  }
  Onnx__TensorShapeProto__Dimension *d = sh->dim[below(r, sh->n_dim)];
  if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) free(d->dim_param);
  if (below(r, 3) == 0) {
    d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    d->dim_param = strdup(below(r, 2) ? "N" : "fz");
    if (d->dim_param == NULL) d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET;
  } else {
    d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    d->dim_value = below(r, 2) ? 1 + (int64_t)below(r, 64) : interesting_int(r);
  }
  return true;
}

static bool mutate_initializer(rng *r, Onnx__GraphProto *g) {
  if (g->n_initializer == 0) return false;
  Onnx__TensorProto *t = g->initializer[below(r, g->n_initializer)];
  switch (below(r, 7)) {
    case 0:
      if (t->n_dims == 0) return false;
      t->dims[below(r, t->n_dims)] = below(r, 2) ? (int64_t)below(r, 8) : interesting_int(r);
      return true;
    case 1:
      if (t->n_dims == 0 || below(r, 2)) {
        if (!grow((void **)&t->dims, &t->n_dims, sizeof(int64_t))) return false;
        t->dims[t->n_dims - 1] = 1 + (int64_t)below(r, 3);
      } else {
        t->n_dims--;
      }
      return true;
    case 2:
      if (!t->has_raw_data || t->raw_data.len == 0) return false;
      t->raw_data.len = below(r, t->raw_data.len); /* shorter than its dims say */
      return true;
    case 3:
      if (!t->has_raw_data) return false;
      if (!grow((void **)&t->raw_data.data, &t->raw_data.len, 1)) return false;
      return true;
    case 4:
      t->has_data_type = 1;
      t->data_type = (int32_t)below(r, 24);
      return true;
    case 5:
      /* scales and zero points: special floats / extreme bytes in the data */
      if (t->has_raw_data && t->raw_data.len >= 4) {
        const float f = interesting_float(r);
        memcpy(t->raw_data.data + 4 * below(r, t->raw_data.len / 4), &f, 4);
        return true;
      }
      if (t->n_float_data > 0) {
        t->float_data[below(r, t->n_float_data)] = interesting_float(r);
        return true;
      }
      if (t->n_int32_data > 0) {
        t->int32_data[below(r, t->n_int32_data)] = (int32_t)interesting_int(r);
        return true;
      }
      if (t->n_int64_data > 0) {
        t->int64_data[below(r, t->n_int64_data)] = interesting_int(r);
        return true;
      }
      return false;
    default:
      if (t->n_float_data > 0) {
        t->n_float_data--;
      } else if (t->n_int32_data > 0) {
        t->n_int32_data--;
      } else if (t->n_int64_data > 0) {
        t->n_int64_data--;
      } else if (t->has_raw_data && t->raw_data.len > 0) {
        t->raw_data.data[below(r, t->raw_data.len)] = (uint8_t)next(r);
      } else {
        return false;
      }
      return true;
  }
}

static bool replace_string(char **slot, const char *v) {
  char *c = strdup(v);
  if (c == NULL) return false;
  free(*slot);
  *slot = c;
  return true;
}

static bool mutate_node(rng *r, Onnx__ModelProto *mp) {
  Onnx__GraphProto *g = mp->graph;
  if (g->n_node == 0) return false;
  Onnx__NodeProto *n = g->node[below(r, g->n_node)];
  switch (below(r, 5)) {
    case 0: {
      size_t count = 0;
      while (op_registry_at(count) != NULL) count++;
      const op_def *op = op_registry_at(below(r, count));
      if (op == NULL) return false;
      return replace_string(&n->op_type, op->op_type) && replace_string(&n->domain, op->domain);
    }
    case 1: {
      /* rewire an input to another node's output or a graph input (cycles included) */
      if (n->n_input == 0) return false;
      Onnx__NodeProto *o = g->node[below(r, g->n_node)];
      const char *name = o->n_output  ? o->output[below(r, o->n_output)]
                         : g->n_input ? g->input[below(r, g->n_input)]->name
                                      : "";
      return replace_string(&n->input[below(r, n->n_input)], name ? name : "");
    }
    case 2:
      if (n->n_input == 0) return false;
      if (below(r, 2)) return replace_string(&n->input[below(r, n->n_input)], "");
      free(n->input[--n->n_input]);
      return true;
    case 3:
      if (!grow((void **)&n->input, &n->n_input, sizeof(char *))) return false;
      n->input[n->n_input - 1] = strdup(g->n_input && g->input[0]->name ? g->input[0]->name : "");
      if (n->input[n->n_input - 1] == NULL) n->n_input--;
      return true;
    default:
      if (mp->n_opset_import == 0) return false;
      {
        Onnx__OperatorSetIdProto *o = mp->opset_import[below(r, mp->n_opset_import)];
        o->has_version = 1;
        o->version = below(r, 2) ? 1 + (int64_t)below(r, 24) : interesting_int(r);
      }
      return true;
  }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  rng r = {seed * 0x9E3779B97F4A7C15ull + 1};
  Onnx__ModelProto *mp = below(&r, 16) == 0 ? NULL : onnx__model_proto__unpack(NULL, size, data);
  if (mp == NULL || mp->graph == NULL) {
    if (mp != NULL) onnx__model_proto__free_unpacked(mp, NULL);
    return LLVMFuzzerMutate(data, size, max_size);
  }
  /* One to three structured changes per mutation. */
  int done = 0;
  const int want = 1 + (int)below(&r, 3);
  for (int tries = 0; tries < 12 && done < want; tries++) {
    bool ok;
    switch (below(&r, 4)) {
      case 0: ok = mutate_attribute(&r, mp->graph); break;
      case 1: ok = mutate_dims(&r, mp->graph); break;
      case 2: ok = mutate_initializer(&r, mp->graph); break;
      default: ok = mutate_node(&r, mp); break;
    }
    done += ok;
  }
  size_t out = 0;
  const size_t packed = onnx__model_proto__get_packed_size(mp);
  if (done > 0 && packed <= max_size) out = onnx__model_proto__pack(mp, data);
  onnx__model_proto__free_unpacked(mp, NULL);
  return out > 0 ? out : LLVMFuzzerMutate(data, size, max_size);
}
