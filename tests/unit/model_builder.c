#include "model_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx-q8rt.pb-c.h"

#define MB_MAX 256

struct mb_model {
  Onnx__ModelProto model;
  Onnx__GraphProto graph;
  Onnx__OperatorSetIdProto opset, opset2;
  Onnx__OperatorSetIdProto *opsets[2];
  Onnx__NodeProto *nodes[MB_MAX];
  Onnx__TensorProto *inits[MB_MAX];
  Onnx__ValueInfoProto *inputs[MB_MAX];
  Onnx__ValueInfoProto *outputs[MB_MAX];
  void *owned[MB_MAX * 8]; /* everything calloc'ed, freed by mb_free */
  int n_owned;
  Onnx__MetadataEntry *meta; /* grown by mb_metadata (tests add thousands) */
  Onnx__MetadataEntry **meta_ptrs;
  size_t n_meta;
};

static void *own(mb_model *m, size_t size) {
  void *p = calloc(1, size ? size : 1);
  if (p == NULL || m->n_owned >= MB_MAX * 8) abort(); /* test code: out of memory is fatal */
  m->owned[m->n_owned++] = p;
  return p;
}

static char *own_str(mb_model *m, const char *s) {
  char *d = own(m, strlen(s) + 1);
  strcpy(d, s);
  return d;
}

mb_model *mb_create(int64_t opset) {
  mb_model *m = calloc(1, sizeof(*m));
  if (m == NULL) abort();
  onnx__model_proto__init(&m->model);
  onnx__graph_proto__init(&m->graph);
  onnx__operator_set_id_proto__init(&m->opset);
  m->opset.domain = (char *)"";
  m->opset.has_version = 1;
  m->opset.version = opset;
  m->opsets[0] = &m->opset;
  m->model.has_ir_version = 1;
  m->model.ir_version = 8;
  m->model.n_opset_import = 1;
  m->model.opset_import = m->opsets;
  m->model.graph = &m->graph;
  m->graph.name = (char *)"test";
  m->graph.node = m->nodes;
  m->graph.initializer = m->inits;
  m->graph.input = m->inputs;
  m->graph.output = m->outputs;
  return m;
}

static Onnx__ValueInfoProto *value_info(mb_model *m, const char *name, int dtype, int rank, const int64_t *dims) {
  Onnx__ValueInfoProto *vi = own(m, sizeof(*vi));
  onnx__value_info_proto__init(vi);
  vi->name = own_str(m, name);
  Onnx__TypeProto *tp = own(m, sizeof(*tp));
  onnx__type_proto__init(tp);
  Onnx__TypeProto__Tensor *tt = own(m, sizeof(*tt));
  onnx__type_proto__tensor__init(tt);
  tt->has_elem_type = 1;
  tt->elem_type = dtype;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  vi->type = tp;
  if (rank >= 0) {
    Onnx__TensorShapeProto *sp = own(m, sizeof(*sp));
    onnx__tensor_shape_proto__init(sp);
    sp->n_dim = (size_t)rank;
    sp->dim = own(m, sizeof(Onnx__TensorShapeProto__Dimension *) * (size_t)(rank + 1));
    for (int i = 0; i < rank; i++) {
      Onnx__TensorShapeProto__Dimension *d = own(m, sizeof(*d));
      onnx__tensor_shape_proto__dimension__init(d);
      if (dims[i] < 0) {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d->dim_param = own_str(m, "N");
      } else {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
      }
      sp->dim[i] = d;
    }
    tt->shape = sp;
  }
  return vi;
}

void mb_input(mb_model *m, const char *name, int dtype, int rank, const int64_t *dims) {
  m->inputs[m->graph.n_input++] = value_info(m, name, dtype, rank, dims);
}

void mb_output(mb_model *m, const char *name, int dtype) {
  m->outputs[m->graph.n_output++] = value_info(m, name, dtype, -1, NULL);
}

void mb_initializer(mb_model *m, const char *name, int dtype, int rank, const int64_t *dims, const void *data,
                    size_t nbytes) {
  Onnx__TensorProto *t = own(m, sizeof(*t));
  onnx__tensor_proto__init(t);
  t->name = own_str(m, name);
  t->has_data_type = 1;
  t->data_type = dtype;
  t->n_dims = (size_t)rank;
  t->dims = own(m, sizeof(int64_t) * (size_t)(rank + 1));
  memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
  t->has_raw_data = 1;
  t->raw_data.len = nbytes;
  t->raw_data.data = own(m, nbytes);
  memcpy(t->raw_data.data, data, nbytes);
  m->inits[m->graph.n_initializer++] = t;
}

static char **str_list(mb_model *m, const char *const *list, size_t *n) {
  size_t k = 0;
  while (list[k] != NULL) k++;
  char **out = own(m, sizeof(char *) * (k + 1));
  for (size_t i = 0; i < k; i++) out[i] = own_str(m, list[i]);
  *n = k;
  return out;
}

void mb_node(mb_model *m, const char *op, const char *name, const char *const *inputs, const char *const *outputs) {
  Onnx__NodeProto *n = own(m, sizeof(*n));
  onnx__node_proto__init(n);
  n->op_type = own_str(m, op);
  n->name = own_str(m, name);
  n->input = str_list(m, inputs, &n->n_input);
  n->output = str_list(m, outputs, &n->n_output);
  n->attribute = own(m, sizeof(Onnx__AttributeProto *) * 16);
  m->nodes[m->graph.n_node++] = n;
}

void mb_domain(mb_model *m, const char *domain) {
  Onnx__NodeProto *n = m->nodes[m->graph.n_node - 1];
  n->domain = own_str(m, domain);
  if (m->model.n_opset_import == 2) return;
  onnx__operator_set_id_proto__init(&m->opset2);
  m->opset2.domain = n->domain;
  m->opset2.has_version = 1;
  m->opset2.version = 1;
  m->opsets[1] = &m->opset2;
  m->model.n_opset_import = 2;
}

static Onnx__AttributeProto *new_attr(mb_model *m, const char *name, Onnx__AttributeProto__AttributeType type) {
  Onnx__NodeProto *n = m->nodes[m->graph.n_node - 1];
  Onnx__AttributeProto *a = own(m, sizeof(*a));
  onnx__attribute_proto__init(a);
  a->name = own_str(m, name);
  a->has_type = 1;
  a->type = type;
  n->attribute[n->n_attribute++] = a;
  return a;
}

void mb_attr_int(mb_model *m, const char *name, int64_t v) {
  Onnx__AttributeProto *a = new_attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = v;
}

void mb_attr_ints(mb_model *m, const char *name, int n, const int64_t *v) {
  Onnx__AttributeProto *a = new_attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = (size_t)n;
  a->ints = own(m, sizeof(int64_t) * (size_t)(n + 1));
  memcpy(a->ints, v, sizeof(int64_t) * (size_t)n);
}

void mb_attr_string(mb_model *m, const char *name, const char *v) {
  Onnx__AttributeProto *a = new_attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = 1;
  a->s.len = strlen(v);
  a->s.data = (uint8_t *)own_str(m, v);
}

void mb_metadata(mb_model *m, const char *key, const void *value, size_t value_len) {
  m->meta = realloc(m->meta, (m->n_meta + 1) * sizeof(*m->meta));
  if (m->meta == NULL) abort();
  Onnx__MetadataEntry *e = &m->meta[m->n_meta++];
  onnx__metadata_entry__init(e);
  e->has_key = key != NULL;
  e->key.data = (uint8_t *)(uintptr_t)key;
  e->key.len = key != NULL ? strlen(key) : 0;
  e->has_value = value != NULL;
  e->value.data = (uint8_t *)(uintptr_t)value;
  e->value.len = value_len;
}

uint8_t *mb_pack(mb_model *m, size_t *size) {
  free(m->meta_ptrs);
  m->meta_ptrs = malloc((m->n_meta + 1) * sizeof(*m->meta_ptrs));
  if (m->meta_ptrs == NULL) abort();
  for (size_t i = 0; i < m->n_meta; i++) m->meta_ptrs[i] = &m->meta[i];
  m->model.n_metadata_props = m->n_meta;
  m->model.metadata_props = m->meta_ptrs;
  *size = onnx__model_proto__get_packed_size(&m->model);
  uint8_t *buf = malloc(*size ? *size : 1);
  if (buf == NULL) abort();
  onnx__model_proto__pack(&m->model, buf);
  return buf;
}

void mb_free(mb_model *m) {
  if (m == NULL) return;
  for (int i = 0; i < m->n_owned; i++) free(m->owned[i]);
  free(m->meta);
  free(m->meta_ptrs);
  free(m);
}

int mb_weight_limit = 127;

uint8_t *mb_conv_chain(int layers, int64_t batch, int64_t c, int64_t h, int64_t w, size_t *size) {
  mb_model *m = mb_create(13);
  const int64_t in_dims[4] = {batch < 0 ? -1 : batch, c, h, w};
  mb_input(m, "x0", 2, 4, in_dims);
  const float one = 0.05f;
  const float y_scale = 0.5f;
  const uint8_t zp = 128;
  const int64_t scalar_dims[1] = {0};
  mb_initializer(m, "s_x", 1, 0, scalar_dims, &one, sizeof(one));
  mb_initializer(m, "zp_x", 2, 0, scalar_dims, &zp, 1);
  mb_initializer(m, "s_y", 1, 0, scalar_dims, &y_scale, sizeof(y_scale));
  const int64_t w_dims[4] = {c, c, 3, 3};
  const size_t wn = (size_t)(c * c * 9);
  int8_t *wdata = malloc(wn);
  float *ws = malloc(sizeof(float) * (size_t)c);
  int32_t *bias = malloc(sizeof(int32_t) * (size_t)c);
  if (wdata == NULL || ws == NULL || bias == NULL) abort();
  uint32_t rng = 12345;
  for (size_t i = 0; i < wn; i++) {
    rng = rng * 1664525u + 1013904223u;
    wdata[i] = (int8_t)((int)(rng >> 24) % (mb_weight_limit + 1) - (int)((rng >> 16) & 1) * (mb_weight_limit + 1) / 2);
    if (mb_weight_limit >= 127) wdata[i] = (int8_t)(rng >> 24);
  }
  for (int64_t i = 0; i < c; i++) {
    ws[i] = 0.01f + 0.001f * (float)i;
    bias[i] = (int32_t)(i * 37) - 500;
  }
  const int64_t wsd[1] = {c};
  mb_initializer(m, "w", 3, 4, w_dims, wdata, wn);
  mb_initializer(m, "w_s", 1, 1, wsd, ws, sizeof(float) * (size_t)c);
  const int8_t wzp = 0;
  mb_initializer(m, "w_zp", 3, 0, scalar_dims, &wzp, 1);
  mb_initializer(m, "b", 6, 1, wsd, bias, sizeof(int32_t) * (size_t)c);
  free(wdata);
  free(ws);
  free(bias);
  char in_name[32], out_name[32], node_name[32];
  for (int l = 0; l < layers; l++) {
    snprintf(in_name, sizeof(in_name), "x%d", l);
    snprintf(out_name, sizeof(out_name), "x%d", l + 1);
    snprintf(node_name, sizeof(node_name), "conv%d", l);
    const char *ins[] = {in_name, "s_x", "zp_x", "w", "w_s", "w_zp", "s_y", "zp_x", "b", NULL};
    const char *outs[] = {out_name, NULL};
    mb_node(m, "QLinearConv", node_name, ins, outs);
    const int64_t pads[4] = {1, 1, 1, 1};
    mb_attr_ints(m, "pads", 4, pads);
  }
  mb_output(m, out_name, 2);
  uint8_t *bytes = mb_pack(m, size);
  mb_free(m);
  return bytes;
}
