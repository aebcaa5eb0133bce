/* Loader tests: models are built in memory with the generated protobuf-c API, packed to bytes and
 * loaded. Every refusal is checked for its status and for naming what is at fault. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

#include "loader/loader.h"
#include "loader/loader_internal.h"
#include "onnx-q8rt.pb-c.h"
#include "test.h"

#define S(x) ((char *)(x))

/* ---- a small valid model ------------------------------------------------------------------- *
 *
 *   inputs:  x int8 [N, 2, 4, ?]      w (also an initializer, so a constant)
 *   nodes (deliberately not in topological order):
 *     add1:   Add(c, k) -> y
 *     kconst: Constant(value = int8 [1] raw) -> k
 *     (unnamed) Conv(x, w, b) -> c, strides/pads/auto_pad attributes
 *   initializers: w int8 [3,2,1,1] raw_data, b int32 [3] int32_data, zp uint8 [] int32_data
 *   output: y int8                                                                             */

typedef struct tmodel {
  Onnx__ModelProto model;
  Onnx__OperatorSetIdProto opset, opset_ms;
  Onnx__OperatorSetIdProto *opsets[2];
  Onnx__GraphProto graph;

  Onnx__NodeProto add, cst, conv, extra;
  Onnx__NodeProto *nodes[4];
  char *add_in[2], *add_out[1], *cst_out[1], *conv_in[3], *conv_out[1], *extra_in[1], *extra_out[1];
  Onnx__AttributeProto a_strides, a_pads, a_autopad, a_value, a_extra;
  Onnx__AttributeProto *conv_attrs[3], *cst_attrs[1], *extra_attrs[1];
  int64_t strides[2], pads[4];
  Onnx__TensorProto cst_t;
  int8_t cst_data[1];

  Onnx__TensorProto w, b, zp;
  Onnx__TensorProto *inits[3];
  int64_t w_dims[4], b_dims[1];
  int8_t w_data[6];
  int32_t b_data[3], zp_data[1];
  Onnx__StringStringEntryProto ext[3];
  Onnx__StringStringEntryProto *ext_p[3];

  Onnx__ValueInfoProto in_x, in_w, out_y;
  Onnx__ValueInfoProto *inputs[2], *outputs[1];
  Onnx__TypeProto tx, tw, ty;
  Onnx__TypeProto__Tensor ttx, ttw, tty;
  Onnx__TensorShapeProto sx;
  Onnx__TensorShapeProto__Dimension dx[4];
  Onnx__TensorShapeProto__Dimension *dxp[4];
} tmodel;

static void tensor_type(Onnx__TypeProto *t, Onnx__TypeProto__Tensor *tt, int32_t elem) {
  onnx__type_proto__init(t);
  onnx__type_proto__tensor__init(tt);
  tt->has_elem_type = 1;
  tt->elem_type = elem;
  t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  t->tensor_type = tt;
}

static void ints_attr(Onnx__AttributeProto *a, const char *name, int64_t *v, size_t n) {
  onnx__attribute_proto__init(a);
  a->name = S(name);
  a->has_type = 1;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  a->n_ints = n;
  a->ints = v;
}

static void tmodel_init(tmodel *m) {
  memset(m, 0, sizeof(*m));
  onnx__model_proto__init(&m->model);
  m->model.has_ir_version = 1;
  m->model.ir_version = 8;
  m->model.producer_name = S("q8rt-test");
  onnx__operator_set_id_proto__init(&m->opset);
  m->opset.domain = S("");
  m->opset.has_version = 1;
  m->opset.version = 13;
  onnx__operator_set_id_proto__init(&m->opset_ms);
  m->opset_ms.domain = S("com.microsoft");
  m->opset_ms.has_version = 1;
  m->opset_ms.version = 1;
  m->opsets[0] = &m->opset;
  m->opsets[1] = &m->opset_ms;
  m->model.n_opset_import = 2;
  m->model.opset_import = m->opsets;

  onnx__graph_proto__init(&m->graph);
  m->graph.name = S("tiny");
  m->model.graph = &m->graph;

  /* add1: Add(c, k) -> y */
  onnx__node_proto__init(&m->add);
  m->add.name = S("add1");
  m->add.op_type = S("Add");
  m->add_in[0] = S("c");
  m->add_in[1] = S("k");
  m->add_out[0] = S("y");
  m->add.n_input = 2;
  m->add.input = m->add_in;
  m->add.n_output = 1;
  m->add.output = m->add_out;

  /* kconst: Constant -> k */
  onnx__node_proto__init(&m->cst);
  m->cst.name = S("kconst");
  m->cst.op_type = S("Constant");
  m->cst_out[0] = S("k");
  m->cst.n_output = 1;
  m->cst.output = m->cst_out;
  onnx__tensor_proto__init(&m->cst_t);
  m->cst_t.has_data_type = 1;
  m->cst_t.data_type = 3;
  m->cst_data[0] = -7;
  m->cst_t.has_raw_data = 1;
  m->cst_t.raw_data.len = 1;
  m->cst_t.raw_data.data = (uint8_t *)m->cst_data;
  m->cst_t.n_dims = 1;
  static int64_t one = 1;
  m->cst_t.dims = &one;
  onnx__attribute_proto__init(&m->a_value);
  m->a_value.name = S("value");
  m->a_value.has_type = 1;
  m->a_value.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  m->a_value.t = &m->cst_t;
  m->cst_attrs[0] = &m->a_value;
  m->cst.n_attribute = 1;
  m->cst.attribute = m->cst_attrs;

  /* unnamed Conv(x, w, b) -> c */
  onnx__node_proto__init(&m->conv);
  m->conv.op_type = S("Conv");
  m->conv.domain = S("ai.onnx");
  m->conv_in[0] = S("x");
  m->conv_in[1] = S("w");
  m->conv_in[2] = S("b");
  m->conv_out[0] = S("c");
  m->conv.n_input = 3;
  m->conv.input = m->conv_in;
  m->conv.n_output = 1;
  m->conv.output = m->conv_out;
  m->strides[0] = m->strides[1] = 1;
  ints_attr(&m->a_strides, "strides", m->strides, 2);
  ints_attr(&m->a_pads, "pads", m->pads, 4);
  onnx__attribute_proto__init(&m->a_autopad);
  m->a_autopad.name = S("auto_pad");
  m->a_autopad.has_type = 1;
  m->a_autopad.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  m->a_autopad.has_s = 1;
  m->a_autopad.s.data = (uint8_t *)"NOTSET";
  m->a_autopad.s.len = 6;
  m->conv_attrs[0] = &m->a_strides;
  m->conv_attrs[1] = &m->a_pads;
  m->conv_attrs[2] = &m->a_autopad;
  m->conv.n_attribute = 3;
  m->conv.attribute = m->conv_attrs;

  /* a spare node tests can switch on (nodes[3]) */
  onnx__node_proto__init(&m->extra);
  m->extra.name = S("extra");
  m->extra.op_type = S("Relu");
  m->extra_in[0] = S("y");
  m->extra_out[0] = S("z");
  m->extra.n_input = 1;
  m->extra.input = m->extra_in;
  m->extra.n_output = 1;
  m->extra.output = m->extra_out;
  m->extra_attrs[0] = &m->a_extra;
  onnx__attribute_proto__init(&m->a_extra);

  m->nodes[0] = &m->add;
  m->nodes[1] = &m->cst;
  m->nodes[2] = &m->conv;
  m->nodes[3] = &m->extra;
  m->graph.n_node = 3;
  m->graph.node = m->nodes;

  /* initializers */
  onnx__tensor_proto__init(&m->w);
  m->w.name = S("w");
  m->w.has_data_type = 1;
  m->w.data_type = 3;
  m->w_dims[0] = 3;
  m->w_dims[1] = 2;
  m->w_dims[2] = 1;
  m->w_dims[3] = 1;
  m->w.n_dims = 4;
  m->w.dims = m->w_dims;
  for (int i = 0; i < 6; i++) m->w_data[i] = (int8_t)(i * 37 - 100);
  m->w.has_raw_data = 1;
  m->w.raw_data.len = 6;
  m->w.raw_data.data = (uint8_t *)m->w_data;
  for (int i = 0; i < 3; i++) {
    onnx__string_string_entry_proto__init(&m->ext[i]);
    m->ext_p[i] = &m->ext[i];
  }

  onnx__tensor_proto__init(&m->b);
  m->b.name = S("b");
  m->b.has_data_type = 1;
  m->b.data_type = 6;
  m->b_dims[0] = 3;
  m->b.n_dims = 1;
  m->b.dims = m->b_dims;
  m->b_data[0] = -100000;
  m->b_data[1] = 0;
  m->b_data[2] = 2147483647;
  m->b.n_int32_data = 3;
  m->b.int32_data = m->b_data;

  onnx__tensor_proto__init(&m->zp);
  m->zp.name = S("zp");
  m->zp.has_data_type = 1;
  m->zp.data_type = 2;
  m->zp_data[0] = 200;
  m->zp.n_int32_data = 1;
  m->zp.int32_data = m->zp_data;

  m->inits[0] = &m->w;
  m->inits[1] = &m->b;
  m->inits[2] = &m->zp;
  m->graph.n_initializer = 3;
  m->graph.initializer = m->inits;

  /* graph inputs and outputs */
  onnx__value_info_proto__init(&m->in_x);
  m->in_x.name = S("x");
  tensor_type(&m->tx, &m->ttx, 3);
  onnx__tensor_shape_proto__init(&m->sx);
  for (int i = 0; i < 4; i++) {
    onnx__tensor_shape_proto__dimension__init(&m->dx[i]);
    m->dxp[i] = &m->dx[i];
  }
  m->dx[0].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
  m->dx[0].dim_param = S("N");
  m->dx[1].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
  m->dx[1].dim_value = 2;
  m->dx[2].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
  m->dx[2].dim_value = 4;
  /* dx[3]: neither value nor param */
  m->sx.n_dim = 4;
  m->sx.dim = m->dxp;
  m->ttx.shape = &m->sx;
  m->in_x.type = &m->tx;

  onnx__value_info_proto__init(&m->in_w);
  m->in_w.name = S("w");
  tensor_type(&m->tw, &m->ttw, 3);
  m->in_w.type = &m->tw;

  m->inputs[0] = &m->in_x;
  m->inputs[1] = &m->in_w;
  m->graph.n_input = 2;
  m->graph.input = m->inputs;

  onnx__value_info_proto__init(&m->out_y);
  m->out_y.name = S("y");
  tensor_type(&m->ty, &m->tty, 3);
  m->out_y.type = &m->ty;
  m->outputs[0] = &m->out_y;
  m->graph.n_output = 1;
  m->graph.output = m->outputs;
}

static uint8_t *pack_model(const Onnx__ModelProto *mp, size_t *len) {
  *len = onnx__model_proto__get_packed_size(mp);
  uint8_t *buf = malloc(*len ? *len : 1);
  if (buf != NULL) onnx__model_proto__pack(mp, buf);
  return buf;
}

/* Load `m` with `cfg` (NULL: defaults); the graph is freed, status and message returned. */
static q8rt_status load_tmodel(const tmodel *m, const q8rt_load_config *cfg, q8rt_error *err) {
  size_t len;
  uint8_t *buf = pack_model(&m->model, &len);
  if (buf == NULL) return Q8RT_ERROR_OUT_OF_MEMORY;
  ir_graph *g = (ir_graph *)(uintptr_t)1;
  memset(err, 0, sizeof(*err));
  q8rt_status st = q8rt_load_graph(buf, len, cfg, &g, err);
  free(buf);
  if (st == Q8RT_OK)
    ir_graph_free(g);
  else if (g != NULL)
    return (q8rt_status)99; /* *out must be NULL on failure */
  return st;
}

#define EXPECT_FAIL(m, cfg, status, ...)                                                 \
  do {                                                                                   \
    q8rt_error e_;                                                                       \
    q8rt_status st_ = load_tmodel((m), (cfg), &e_);                                      \
    if (st_ != (status)) fprintf(stderr, "  got status %d: %s\n", (int)st_, e_.message); \
    CHECK(st_ == (status));                                                              \
    const char *needles_[] = {__VA_ARGS__};                                              \
    for (size_t k_ = 0; k_ < sizeof(needles_) / sizeof(needles_[0]); k_++) {             \
      if (strstr(e_.message, needles_[k_]) == NULL)                                      \
        fprintf(stderr, "  message lacks '%s': %s\n", needles_[k_], e_.message);         \
      CHECK(strstr(e_.message, needles_[k_]) != NULL);                                   \
    }                                                                                    \
  } while (0)

/* ---- a counting allocator: proves every byte is returned, and injects failures ------------ */

typedef struct counting {
  long live_blocks;
  size_t live_bytes;
  long calls;
  long fail_at; /* the call number that fails, -1 = never */
} counting;

static void *count_alloc(void *ud, size_t size, size_t alignment) {
  counting *c = ud;
  if (c->calls++ == c->fail_at) return NULL;
  void *p = NULL;
  if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size ? size : 1) != 0) return NULL;
  c->live_blocks++;
  c->live_bytes += size;
  return p;
}

static void count_free(void *ud, void *ptr, size_t size) {
  counting *c = ud;
  c->live_blocks--;
  c->live_bytes -= size;
  free(ptr);
}

/* ---- valid models -------------------------------------------------------------------------- */

Q8RT_TEST(loader_valid_model) {
  tmodel m;
  tmodel_init(&m);
  size_t len;
  uint8_t *buf = pack_model(&m.model, &len);
  CHECK(buf != NULL);
  ir_graph *g = NULL;
  q8rt_error err;
  const q8rt_load_config cfg = {NULL, 64u << 20, NULL}; /* many small messages: past 4x the encoded size */
  q8rt_status st = q8rt_load_graph(buf, len, &cfg, &g, &err);
  free(buf);
  if (st != Q8RT_OK) fprintf(stderr, "  %s\n", err.message);
  CHECK(st == Q8RT_OK && g != NULL);

  CHECK(g->ir_version == 8);
  CHECK(strcmp(g->name, "tiny") == 0);
  CHECK(ir_graph_opset(g, "") == 13 && ir_graph_opset(g, "ai.onnx") == 13);
  CHECK(ir_graph_opset(g, "com.microsoft") == 1);

  /* w is an initializer listed as an input: a constant, not a graph input */
  CHECK(g->n_inputs == 1);
  int x = ir_graph_find_value(g, "x");
  CHECK(x >= 0 && g->inputs[0] == x);
  const ir_value *vx = &g->values[x];
  CHECK(vx->graph_input == 0 && vx->dtype == Q8RT_DTYPE_INT8 && vx->rank == 4);
  CHECK(vx->dims[0] == -1 && vx->dim_params[0] != NULL && strcmp(vx->dim_params[0], "N") == 0);
  CHECK(vx->dims[1] == 2 && vx->dims[2] == 4 && vx->dims[3] == -1 && vx->dim_params[3] == NULL);
  CHECK(vx->consumers == 1 && vx->producer == -1);

  int w = ir_graph_find_value(g, "w");
  CHECK(w >= 0);
  const ir_value *vw = &g->values[w];
  CHECK(vw->graph_input == -1 && vw->constant != NULL && vw->producer == -1);
  CHECK(vw->constant->dtype == Q8RT_DTYPE_INT8 && vw->constant->rank == 4 && vw->constant->count == 6);
  CHECK(vw->constant->nbytes == 6 && memcmp(vw->constant->data, m.w_data, 6) == 0);
  CHECK(((uintptr_t)vw->constant->data & 63) == 0);
  CHECK(vw->dtype == Q8RT_DTYPE_INT8 && vw->rank == 4 && vw->dims[0] == 3);

  int b = ir_graph_find_value(g, "b");
  CHECK(b >= 0 && g->values[b].constant != NULL);
  const int32_t *bd = g->values[b].constant->data;
  CHECK(bd[0] == -100000 && bd[1] == 0 && bd[2] == 2147483647);

  int zp = ir_graph_find_value(g, "zp");
  CHECK(zp >= 0 && g->values[zp].constant->rank == 0 && g->values[zp].constant->count == 1);
  CHECK(*(const uint8_t *)g->values[zp].constant->data == 200);

  /* the Constant node became a constant; only Add and Conv are nodes */
  int k = ir_graph_find_value(g, "k");
  CHECK(k >= 0 && g->values[k].constant != NULL && g->values[k].producer == -1);
  CHECK(*(const int8_t *)g->values[k].constant->data == -7);
  CHECK(g->n_nodes == 2);

  const ir_node *add = &g->nodes[0];
  CHECK(strcmp(add->name, "add1") == 0 && strcmp(add->op_type, "Add") == 0 && strcmp(add->domain, "") == 0);
  CHECK(add->opset == 13 && add->n_inputs == 2 && add->n_outputs == 1);

  const ir_node *conv = &g->nodes[1];
  CHECK(strcmp(conv->name, "Conv_2") == 0 && strcmp(conv->domain, "") == 0 && conv->opset == 13);
  CHECK(conv->n_inputs == 3 && conv->inputs[0] == x && conv->inputs[1] == w && conv->inputs[2] == b);
  int c = ir_graph_find_value(g, "c");
  CHECK(c >= 0 && g->values[c].producer == 1 && g->values[c].consumers == 1);
  CHECK(add->inputs[0] == c && add->inputs[1] == k);

  const int64_t *ints;
  size_t count;
  CHECK_OK(ir_attr_ints(conv, "strides", &ints, &count, NULL));
  CHECK(count == 2 && ints[0] == 1 && ints[1] == 1);
  CHECK_OK(ir_attr_ints(conv, "pads", &ints, &count, NULL));
  CHECK(count == 4 && ints[3] == 0);
  const char *pad;
  CHECK_OK(ir_attr_string(conv, "auto_pad", "x", &pad, NULL));
  CHECK(strcmp(pad, "NOTSET") == 0);

  int y = ir_graph_find_value(g, "y");
  CHECK(y >= 0 && g->n_outputs == 1 && g->outputs[0] == y);
  CHECK(g->values[y].graph_output == 0 && g->values[y].producer == 0 && g->values[y].dtype == Q8RT_DTYPE_INT8);
  ir_graph_free(g);
  return 0;
}

/* Constant's value_float(s) / value_int(s) forms. */
Q8RT_TEST(loader_constant_forms) {
  tmodel m;
  tmodel_init(&m);
  static float fl[3] = {1.5f, -2.0f, 3.25f};
  static int64_t il[2] = {-5, 1LL << 40};
  const int types[4] = {ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS,
                        ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS};
  const char *names[4] = {"value_float", "value_floats", "value_int", "value_ints"};
  for (int f = 0; f < 4; f++) {
    Onnx__AttributeProto *a = &m.a_value;
    onnx__attribute_proto__init(a);
    a->name = S(names[f]);
    a->has_type = 1;
    a->type = (Onnx__AttributeProto__AttributeType)types[f];
    a->has_f = 1;
    a->f = 0.5f;
    a->has_i = 1;
    a->i = 42;
    a->n_floats = f == 1 ? 3 : 0;
    a->floats = fl;
    a->n_ints = f == 3 ? 2 : 0;
    a->ints = il;
    size_t len;
    uint8_t *buf = pack_model(&m.model, &len);
    ir_graph *g = NULL;
    q8rt_error err;
    const q8rt_load_config cfg = {NULL, 64u << 20, NULL}; /* many small messages: past 4x the encoded size */
    q8rt_status st = q8rt_load_graph(buf, len, &cfg, &g, &err);
    free(buf);
    CHECK(st == Q8RT_OK);
    const ir_tensor *t = g->values[ir_graph_find_value(g, "k")].constant;
    CHECK(t != NULL);
    switch (f) {
      case 0: CHECK(t->dtype == Q8RT_DTYPE_FLOAT32 && t->rank == 0 && *(const float *)t->data == 0.5f); break;
      case 1:
        CHECK(t->dtype == Q8RT_DTYPE_FLOAT32 && t->rank == 1 && t->dims[0] == 3 &&
              ((const float *)t->data)[2] == 3.25f);
        break;
      case 2: CHECK(t->dtype == Q8RT_DTYPE_INT64 && t->rank == 0 && *(const int64_t *)t->data == 42); break;
      default:
        CHECK(t->dtype == Q8RT_DTYPE_INT64 && t->dims[0] == 2 && ((const int64_t *)t->data)[1] == (1LL << 40));
        break;
    }
    ir_graph_free(g);
  }
  /* sparse_value is valid ONNX that q8rt does not take */
  onnx__attribute_proto__init(&m.a_value);
  m.a_value.name = S("sparse_value");
  m.a_value.has_type = 1;
  m.a_value.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "kconst", "sparse_value");
  return 0;
}

Q8RT_TEST(loader_typed_fields) {
  tmodel m;
  tmodel_init(&m);
  /* w as int32_data instead of raw_data */
  static int32_t wd[6] = {-128, 127, 0, 1, -1, 5};
  m.w.has_raw_data = 0;
  m.w.n_int32_data = 6;
  m.w.int32_data = wd;
  size_t len;
  uint8_t *buf = pack_model(&m.model, &len);
  ir_graph *g = NULL;
  CHECK(q8rt_load_graph(buf, len, NULL, &g, NULL) == Q8RT_OK);
  free(buf);
  const int8_t *d = g->values[ir_graph_find_value(g, "w")].constant->data;
  CHECK(d[0] == -128 && d[1] == 127 && d[5] == 5);
  ir_graph_free(g);

  wd[1] = 128; /* outside int8 */
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'w'", "int32_data", "int8");
  wd[1] = 127;
  m.w.n_int32_data = 5;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'w'", "int32_data", "expected 6");
  m.w.n_int32_data = 0;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'w'", "no data");
  /* data in the wrong typed field */
  static float fd[6];
  m.w.n_float_data = 6;
  m.w.float_data = fd;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'w'", "float_data");
  /* uint8 range */
  tmodel_init(&m);
  m.zp_data[0] = 256;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'zp'", "uint8");
  m.zp_data[0] = -1;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'zp'", "uint8");
  return 0;
}

/* ---- malformed bytes ----------------------------------------------------------------------- */

Q8RT_TEST(loader_truncated_every_length) {
  tmodel m;
  tmodel_init(&m);
  size_t len;
  uint8_t *buf = pack_model(&m.model, &len);
  CHECK(buf != NULL && len > 100);
  counting c = {0, 0, 0, -1};
  q8rt_allocator a = {count_alloc, count_free, &c};
  q8rt_load_config cfg = {&a, 0, NULL};
  int failed = 0;
  for (size_t n = 0; n < len; n++) {
    /* a fresh copy of exactly n bytes, so ASan sees any read past the end */
    uint8_t *cut = malloc(n ? n : 1);
    memcpy(cut, buf, n);
    ir_graph *g = NULL;
    q8rt_error err;
    err.message[0] = '\0';
    q8rt_status st = q8rt_load_graph(cut, n, &cfg, &g, &err);
    free(cut);
    if (st == Q8RT_OK) {
      ir_graph_free(g);
    } else {
      failed++;
      CHECK(g == NULL && err.message[0] != '\0' && err.status == st);
    }
    CHECK(c.live_blocks == 0 && c.live_bytes == 0);
  }
  free(buf);
  CHECK(failed > (int)len / 2);
  return 0;
}

Q8RT_TEST(loader_random_bytes) {
  uint32_t seed = 12345;
  uint8_t buf[600];
  counting c = {0, 0, 0, -1};
  q8rt_allocator a = {count_alloc, count_free, &c};
  q8rt_load_config cfg = {&a, 0, NULL};
  for (int iter = 0; iter < 3000; iter++) {
    seed = seed * 1664525u + 1013904223u;
    size_t n = (seed >> 8) % sizeof(buf);
    for (size_t i = 0; i < n; i++) {
      seed = seed * 1664525u + 1013904223u;
      buf[i] = (uint8_t)(seed >> 24);
    }
    ir_graph *g = NULL;
    q8rt_error err;
    err.message[0] = '\0';
    q8rt_status st = q8rt_load_graph(buf, n, &cfg, &g, &err);
    if (st == Q8RT_OK)
      ir_graph_free(g);
    else
      CHECK(g == NULL && err.message[0] != '\0');
    CHECK(c.live_blocks == 0);
  }
  q8rt_error err;
  ir_graph *g = NULL;
  CHECK(q8rt_load_graph("\xff\xff\xff\xff", 4, NULL, &g, &err) == Q8RT_ERROR_INVALID_MODEL);
  CHECK(strstr(err.message, "protobuf decode failed") != NULL && g == NULL);
  return 0;
}

/* Allocation failure at every allocation of a successful load: each fails cleanly, no leaks. */
Q8RT_TEST(loader_allocation_failures) {
  tmodel m;
  tmodel_init(&m);
  size_t len;
  uint8_t *buf = pack_model(&m.model, &len);
  counting c = {0, 0, 0, -1};
  q8rt_allocator a = {count_alloc, count_free, &c};
  q8rt_load_config cfg = {&a, 0, NULL};
  ir_graph *g = NULL;
  CHECK(q8rt_load_graph(buf, len, &cfg, &g, NULL) == Q8RT_OK);
  ir_graph_free(g);
  long total = c.calls;
  CHECK(total > 5);
  for (long i = 0; i < total; i++) {
    c = (counting){0, 0, 0, i};
    q8rt_error err;
    g = NULL;
    q8rt_status st = q8rt_load_graph(buf, len, &cfg, &g, &err);
    CHECK(st == Q8RT_ERROR_OUT_OF_MEMORY && g == NULL);
    CHECK(strstr(err.message, "out of memory") != NULL);
    CHECK(c.live_blocks == 0 && c.live_bytes == 0);
  }
  free(buf);
  return 0;
}

Q8RT_TEST(loader_not_a_model) {
  /* a valid protobuf with no graph */
  Onnx__ModelProto mp;
  onnx__model_proto__init(&mp);
  mp.has_ir_version = 1;
  mp.ir_version = 8;
  size_t len;
  uint8_t *buf = pack_model(&mp, &len);
  ir_graph *g = NULL;
  q8rt_error err;
  CHECK(q8rt_load_graph(buf, len, NULL, &g, &err) == Q8RT_ERROR_INVALID_MODEL);
  free(buf);
  CHECK(strstr(err.message, "graph") != NULL && g == NULL);
  /* empty input decodes to an empty message: also no graph */
  CHECK(q8rt_load_graph(NULL, 0, NULL, &g, &err) == Q8RT_ERROR_INVALID_MODEL);
  CHECK(strstr(err.message, "ModelProto.graph") != NULL);
  /* a graph with no outputs */
  tmodel m;
  tmodel_init(&m);
  m.graph.n_output = 0;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "no outputs");
  return 0;
}

Q8RT_TEST(loader_decode_budget) {
  tmodel m;
  tmodel_init(&m);
  q8rt_load_config cfg = {NULL, 64, NULL};
  EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_OUT_OF_MEMORY, "decode budget exceeded", "max_unpack_bytes");
  cfg.max_unpack_bytes = 1 << 20;
  q8rt_error err;
  CHECK(load_tmodel(&m, &cfg, &err) == Q8RT_OK);
  return 0;
}

/* ---- opsets, nodes, attributes ------------------------------------------------------------- */

Q8RT_TEST(loader_opsets) {
  tmodel m;
  tmodel_init(&m);
  m.opset.version = 6;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "opset 6", "ai.onnx", "7 to 22");
  m.opset.version = 23;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "opset 23", "ai.onnx");
  m.opset.version = 22;
  m.opset.domain = S("ai.onnx");
  q8rt_error err;
  CHECK(load_tmodel(&m, NULL, &err) == Q8RT_OK);
  m.opsets[0] = &m.opset_ms; /* com.microsoft only: valid ONNX, not runnable */
  m.model.n_opset_import = 1;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "ai.onnx", "com.microsoft");
  m.model.n_opset_import = 0; /* no import at all: not a valid model */
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "opset_import", "ai.onnx");
  tmodel_init(&m);
  m.opset_ms.domain = S("ai.onnx"); /* "" and "ai.onnx" are one domain */
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "opset_import", "twice", "different versions");
  /* the same import twice (text2tashkeel 0.1.0's rawi_ensemble.int8.onnx, a merge of two models,
   * lists ('', 17) and ('com.microsoft', 1) twice): accepted, as ONNX Runtime does */
  m.opset_ms.version = m.opset.version;
  CHECK(load_tmodel(&m, NULL, &err) == Q8RT_OK);
  tmodel_init(&m);
  m.conv.domain = S("com.example");
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "Conv_2", "com.example");
  return 0;
}

Q8RT_TEST(loader_node_checks) {
  tmodel m;
  tmodel_init(&m);
  m.conv_in[0] = S("ghost");
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL,
              "node 'Conv_2' (Conv) input 'ghost' is not produced by any node, graph input or initializer");
  tmodel_init(&m);
  m.conv.op_type = S("");
  m.conv.name = S("noop");
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'noop'", "op_type");
  tmodel_init(&m);
  m.conv_out[0] = S("y"); /* y is Add's output too */
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'y'", "add1", "Conv_2");
  tmodel_init(&m);
  m.conv_out[0] = S("b"); /* an initializer */
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'b'", "Conv_2", "initializer");
  tmodel_init(&m);
  m.conv_out[0] = S("x"); /* a graph input */
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'x'", "Conv_2", "graph input");
  tmodel_init(&m);
  m.cst_out[0] = S("w"); /* Constant output is an initializer */
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'w'", "kconst");
  tmodel_init(&m);
  m.out_y.name = S("nowhere");
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "graph output 'nowhere'");
  /* optional inputs: empty name is -1, not a missing value */
  tmodel_init(&m);
  m.conv_in[2] = S("");
  size_t len;
  uint8_t *buf = pack_model(&m.model, &len);
  ir_graph *g = NULL;
  CHECK(q8rt_load_graph(buf, len, NULL, &g, NULL) == Q8RT_OK);
  free(buf);
  CHECK(g->nodes[1].inputs[2] == -1);
  ir_graph_free(g);
  return 0;
}

Q8RT_TEST(loader_subgraph_attribute) {
  tmodel m;
  tmodel_init(&m);
  /* an If node whose then_branch carries a real GraphProto in field 6, packed as raw bytes */
  Onnx__GraphProto sub;
  onnx__graph_proto__init(&sub);
  sub.name = S("then");
  size_t sub_len = onnx__graph_proto__get_packed_size(&sub);
  CHECK(sub_len < 128);
  /* protobuf-c keeps a length-delimited unknown field's varint length inside its data */
  uint8_t *sub_buf = malloc(sub_len + 1);
  sub_buf[0] = (uint8_t)sub_len;
  onnx__graph_proto__pack(&sub, sub_buf + 1);
  ProtobufCMessageUnknownField uf;
  uf.tag = 6;
  uf.wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
  uf.len = sub_len + 1;
  uf.data = sub_buf;
  m.a_extra.name = S("then_branch");
  m.a_extra.has_type = 1;
  m.a_extra.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  m.a_extra.base.n_unknown_fields = 1;
  m.a_extra.base.unknown_fields = &uf;
  m.extra.name = S("branchy");
  m.extra.op_type = S("If");
  m.extra.n_attribute = 1;
  m.extra.attribute = m.extra_attrs;
  m.graph.n_node = 4;
  /* If reads its subgraphs (tests/python/test_ops_if.py runs them); one branch only is refused */
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "If node 'branchy'", "no else_branch");
  /* Loop reads its body only (tests/python/test_ops_loop.py runs them) */
  m.extra.op_type = S("Loop");
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "Loop node 'branchy'", "unknown attribute 'then_branch'");
  /* Scan reads its body (tests/python/test_ops_scan.py runs them): a graph under another name is
   * no body */
  m.extra.op_type = S("Scan");
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "Scan node 'branchy'", "has no body");
  /* any other op's subgraph is refused by type */
  m.extra.op_type = S("Relu");
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "'branchy'", "'then_branch'", "GRAPH", "If, Loop and Scan only");
  m.a_extra.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
  m.a_extra.name = S("branches");
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "'branchy'", "'branches'", "GRAPHS");
  m.a_extra.base.n_unknown_fields = 0;
  m.a_extra.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "'branchy'", "TYPE_PROTO");
  m.a_extra.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'branchy'", "'branches'");
  free(sub_buf);
  return 0;
}

Q8RT_TEST(loader_attribute_checks) {
  tmodel m;
  tmodel_init(&m);
  m.a_autopad.s.data = (uint8_t *)"NOTSET\0junk";
  m.a_autopad.s.len = 11;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "Conv_2", "auto_pad", "NUL");
  tmodel_init(&m);
  m.a_pads.name = S("strides");
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "Conv_2", "'strides'", "twice");
  /* q8rt's passes state rewrites in attributes of this prefix: a model may not set them on ONNX ops */
  tmodel_init(&m);
  m.a_pads.name = S("q8rt_fused_clip");
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "Conv_2", "'q8rt_fused_clip'", "reserved");
  /* a tensor attribute goes through the initializer conversion */
  tmodel_init(&m);
  m.a_extra.name = S("t");
  m.a_extra.has_type = 1;
  m.a_extra.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  m.a_extra.t = &m.cst_t;
  m.extra.n_attribute = 1;
  m.extra.attribute = m.extra_attrs;
  m.graph.n_node = 4;
  q8rt_error err;
  CHECK(load_tmodel(&m, NULL, &err) == Q8RT_OK);
  m.cst_t.raw_data.len = 0;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "kconst"); /* the Constant uses cst_t too, and comes first */
  return 0;
}

/* ---- initializers -------------------------------------------------------------------------- */

Q8RT_TEST(loader_initializer_checks) {
  tmodel m;
  tmodel_init(&m);
  m.b.name = NULL;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "initializer #1", "no name");
  tmodel_init(&m);
  m.b.name = S("w");
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "'w'", "twice");
  tmodel_init(&m);
  m.w.data_type = 16;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "initializer 'w'", "bfloat16");
  m.w.data_type = 11;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "initializer 'w'", "double");
  m.w.data_type = 22;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "initializer 'w'", "int4");
  m.w.data_type = 8;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "initializer 'w'", "string");
  m.w.has_data_type = 0;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "data type");
  tmodel_init(&m);
  static int64_t huge[2] = {1LL << 40, 1LL << 40};
  m.w.n_dims = 2;
  m.w.dims = huge;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "overflow");
  static int64_t neg[1] = {-6};
  m.w.n_dims = 1;
  m.w.dims = neg;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "negative");
  static int64_t deep[9] = {1, 1, 1, 1, 1, 1, 1, 1, 6};
  m.w.n_dims = 9;
  m.w.dims = deep;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "initializer 'w'", "rank 9");
  tmodel_init(&m);
  m.w.raw_data.len = 5;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "raw_data has 5 bytes, expected 6");
  m.w.raw_data.len = 6;
  m.w.n_int32_data = 1;
  m.w.int32_data = m.b_data;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "raw_data");
  /* declared input type disagrees with the initializer */
  tmodel_init(&m);
  m.ttw.elem_type = 2;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "graph input 'w'", "uint8", "int8");
  return 0;
}

Q8RT_TEST(loader_graph_io_checks) {
  tmodel m;
  tmodel_init(&m);
  m.ttx.elem_type = 16;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "graph input 'x'", "bfloat16");
  tmodel_init(&m);
  m.dx[1].dim_value = -3;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "graph input 'x'", "negative");
  tmodel_init(&m);
  m.in_x.type = NULL;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "graph input 'x'", "no type");
  tmodel_init(&m);
  m.tx.value_case = ONNX__TYPE_PROTO__VALUE__NOT_SET; /* e.g. a sequence type, skipped by our schema */
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED, "graph input 'x'", "not a tensor");
  tmodel_init(&m);
  m.inputs[1] = &m.in_x;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "graph input 'x'", "twice");
  /* a shapeless input has rank -1 */
  tmodel_init(&m);
  m.ttx.shape = NULL;
  size_t len;
  uint8_t *buf = pack_model(&m.model, &len);
  ir_graph *g = NULL;
  CHECK(q8rt_load_graph(buf, len, NULL, &g, NULL) == Q8RT_OK);
  free(buf);
  CHECK(g->values[g->inputs[0]].rank == -1);
  ir_graph_free(g);
  return 0;
}

/* ---- float16 ------------------------------------------------------------------------------- */

static int find_node(const ir_graph *g, const char *op_type) {
  for (int i = 0; i < g->n_nodes; i++)
    if (strcmp(g->nodes[i].op_type, op_type) == 0) return i;
  return -1;
}

static int64_t attr_i(const ir_node *n, const char *name) {
  const ir_attr *a = ir_node_attr(n, name);
  return a != NULL ? a->i : -99;
}

/* float16 is float32 inside q8rt: constants widened at load, graph inputs and outputs converted by
 * Casts the loader adds, a model's Cast to float16 made a Cast to float32 (rounding or not). */
Q8RT_TEST(loader_float16_widened) {
  static const uint16_t bits[6] = {0x3c00, 0xc000, 0x0001, 0x7c00, 0x8000, 0x7e01};
  static const uint32_t want[6] = {0x3f800000, 0xc0000000, 0x33800000, 0x7f800000, 0x80000000, 0x7fc02000};
  tmodel m;
  tmodel_init(&m);
  m.w.data_type = 10;
  m.w.raw_data.len = 12;
  m.w.raw_data.data = (uint8_t *)(uintptr_t)bits; /* little-endian hosts (x86-64, aarch64) */
  m.ttw.elem_type = 10;
  m.ttx.elem_type = 10;
  m.tty.elem_type = 10;
  /* the spare node: Cast(y, to=float16) -> z, read by nothing */
  m.extra.op_type = S("Cast");
  m.a_extra.name = S("to");
  m.a_extra.has_type = 1;
  m.a_extra.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  m.a_extra.has_i = 1;
  m.a_extra.i = 10;
  m.extra.n_attribute = 1;
  m.extra.attribute = m.extra_attrs;
  m.graph.n_node = 4;
  size_t len;
  uint8_t *buf = pack_model(&m.model, &len);
  ir_graph *g = NULL;
  CHECK(q8rt_load_graph(buf, len, NULL, &g, NULL) == Q8RT_OK);
  free(buf);
  const ir_tensor *t = g->values[ir_graph_find_value(g, "w")].constant;
  CHECK(t != NULL && t->dtype == Q8RT_DTYPE_FLOAT32 && t->count == 6 && memcmp(t->data, want, sizeof(want)) == 0);
  /* x stays the float16 graph input, read only by a Cast to float32 whose output the Conv reads */
  const int x = g->inputs[0], xf = ir_graph_find_value(g, "x/float32");
  CHECK(strcmp(g->values[x].name, "x") == 0 && g->values[x].dtype == Q8RT_DTYPE_FLOAT16);
  CHECK(g->values[x].consumers == 1 && xf >= 0 && g->values[xf].dtype == Q8RT_DTYPE_FLOAT32);
  CHECK(g->values[xf].producer >= 0 && g->values[xf].rank == 4 && g->values[xf].dims[2] == 4);
  const ir_node *cx = &g->nodes[g->values[xf].producer];
  CHECK(strcmp(cx->op_type, "Cast") == 0 && cx->inputs[0] == x && attr_i(cx, "to") == Q8RT_DTYPE_FLOAT32);
  CHECK(g->nodes[find_node(g, "Conv")].inputs[0] == xf);
  /* y: the output of a Cast to float16 from y/float32, which add1 computes and the Cast node reads */
  const int y = g->outputs[0], yf = ir_graph_find_value(g, "y/float32");
  CHECK(strcmp(g->values[y].name, "y") == 0 && g->values[y].dtype == Q8RT_DTYPE_FLOAT16 && yf >= 0);
  const ir_node *cy = &g->nodes[g->values[y].producer];
  CHECK(cy->inputs[0] == yf && attr_i(cy, "to") == Q8RT_DTYPE_FLOAT16 && g->values[y].consumers == 0);
  CHECK(strcmp(g->nodes[g->values[yf].producer].name, "add1") == 0 && g->values[yf].consumers == 2);
  const ir_node *ce = &g->nodes[find_node(g, "Cast")]; /* the model's Cast comes first */
  CHECK(attr_i(ce, "to") == Q8RT_DTYPE_FLOAT32 && attr_i(ce, IR_ATTR_ROUND_F16) == 0);
  /* it reads y rounded to float16 (ORT keeps the float16 y, a graph output, for the model's Cast):
   * y/float16, which a rounding Cast computes from y/float32 */
  const int yr = ce->inputs[0];
  CHECK(strcmp(ce->name, "extra") == 0 && strcmp(g->values[yr].name, "y/float16") == 0);
  const ir_node *cr = &g->nodes[g->values[yr].producer];
  CHECK(cr->inputs[0] == yf && attr_i(cr, IR_ATTR_ROUND_F16) == 1 && attr_i(cr, "to") == Q8RT_DTYPE_FLOAT32);
  ir_graph_free(g);

  /* int32_data: one bit pattern per element, nothing past 16 bits */
  static int32_t ib[6] = {0x3c00, 0xc000, 0x0001, 0x7c00, 0x8000, 0x7e01};
  tmodel_init(&m);
  m.w.data_type = 10;
  m.w.has_raw_data = 0;
  m.w.raw_data.len = 0;
  m.w.n_int32_data = 6;
  m.w.int32_data = ib;
  m.ttw.elem_type = 10;
  buf = pack_model(&m.model, &len);
  CHECK(q8rt_load_graph(buf, len, NULL, &g, NULL) == Q8RT_OK);
  free(buf);
  t = g->values[ir_graph_find_value(g, "w")].constant;
  CHECK(t->dtype == Q8RT_DTYPE_FLOAT32 && memcmp(t->data, want, sizeof(want)) == 0);
  ir_graph_free(g);
  ib[2] = 65536;
  EXPECT_FAIL(&m, NULL, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "int32_data[2]", "float16");
  ib[2] = 1;
  return 0;
}

/* Many float16 inputs and outputs: n inputs x_i, each read by Relu_i -> y_i (a float16 output) and
 * by one Concat of all of them. The rewiring to the float32 twins is one pass over the node inputs
 * (it was one pass per float16 value: 2n x 2n visits here), counted by g->f16_rewire_steps. */
Q8RT_TEST(loader_float16_many_io_linear) {
  enum { N = 3000 };
  Onnx__ModelProto model;
  Onnx__OperatorSetIdProto opset, *opsets[1] = {&opset};
  Onnx__GraphProto graph;
  Onnx__TypeProto t16;
  Onnx__TypeProto__Tensor tt16;
  Onnx__NodeProto *nodes = calloc(N + 1, sizeof(*nodes)), **np = calloc(N + 1, sizeof(*np));
  Onnx__ValueInfoProto *vis = calloc(2 * N + 1, sizeof(*vis)), **vin = calloc(N, sizeof(*vin)),
                       **vout = calloc(N + 1, sizeof(*vout));
  char(*names)[16] = calloc(2 * N + 1, sizeof(*names));
  char **io = calloc(2 * N, sizeof(*io)), **cat_in = calloc(N, sizeof(*cat_in));
  Onnx__AttributeProto axis, *axis_p[1] = {&axis};
  CHECK(nodes && np && vis && vin && vout && names && io && cat_in);
  onnx__model_proto__init(&model);
  model.has_ir_version = 1;
  model.ir_version = 8;
  onnx__operator_set_id_proto__init(&opset);
  opset.domain = S("");
  opset.has_version = 1;
  opset.version = 13;
  model.n_opset_import = 1;
  model.opset_import = opsets;
  onnx__graph_proto__init(&graph);
  model.graph = &graph;
  tensor_type(&t16, &tt16, 10);
  onnx__attribute_proto__init(&axis);
  axis.name = S("axis");
  axis.has_type = 1;
  axis.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  axis.has_i = 1;
  for (int i = 0; i < N; i++) {
    snprintf(names[2 * i], 16, "x%d", i);
    snprintf(names[2 * i + 1], 16, "y%d", i);
    io[2 * i] = names[2 * i];
    io[2 * i + 1] = names[2 * i + 1];
    cat_in[i] = names[2 * i];
    onnx__node_proto__init(&nodes[i]);
    nodes[i].op_type = S("Relu");
    nodes[i].n_input = nodes[i].n_output = 1;
    nodes[i].input = &io[2 * i];
    nodes[i].output = &io[2 * i + 1];
    np[i] = &nodes[i];
    for (int k = 0; k < 2; k++) {
      onnx__value_info_proto__init(&vis[2 * i + k]);
      vis[2 * i + k].name = names[2 * i + k];
      vis[2 * i + k].type = &t16;
    }
    vin[i] = &vis[2 * i];
    vout[i] = &vis[2 * i + 1];
  }
  snprintf(names[2 * N], 16, "cat");
  char *cat_out[1] = {names[2 * N]};
  onnx__node_proto__init(&nodes[N]);
  nodes[N].op_type = S("Concat");
  nodes[N].n_input = N;
  nodes[N].input = cat_in;
  nodes[N].n_output = 1;
  nodes[N].output = cat_out;
  nodes[N].n_attribute = 1;
  nodes[N].attribute = axis_p;
  np[N] = &nodes[N];
  onnx__value_info_proto__init(&vis[2 * N]);
  vis[2 * N].name = names[2 * N];
  vis[2 * N].type = &t16;
  vout[N] = &vis[2 * N];
  graph.n_node = N + 1;
  graph.node = np;
  graph.n_input = N;
  graph.input = vin;
  graph.n_output = N + 1;
  graph.output = vout;
  size_t len;
  uint8_t *buf = pack_model(&model, &len);
  CHECK(buf != NULL);
  ir_graph *g = NULL;
  q8rt_error err = {0};
  const q8rt_load_config cfg = {NULL, 64u << 20, NULL}; /* many small messages: past 4x the encoded size */
  q8rt_status st = q8rt_load_graph(buf, len, &cfg, &g, &err);
  free(buf);
  if (st != Q8RT_OK) fprintf(stderr, "  %s\n", err.message);
  CHECK(st == Q8RT_OK);
  /* the model's 2N node inputs, visited once */
  CHECK(g->f16_rewire_steps == 2 * (size_t)N);
  /* every reader moved: Relu_i and the Concat read x_i/float32, y_i comes from a Cast of y_i/float32 */
  const int x7 = ir_graph_find_value(g, "x7"), x7f = ir_graph_find_value(g, "x7/float32");
  const int y7 = ir_graph_find_value(g, "y7"), y7f = ir_graph_find_value(g, "y7/float32");
  CHECK(x7 >= 0 && x7f >= 0 && y7 >= 0 && y7f >= 0);
  CHECK(g->values[x7].consumers == 1 && g->values[x7f].consumers == 2 && g->values[y7f].consumers == 1);
  CHECK(g->nodes[7].inputs[0] == x7f && g->nodes[N].inputs[7] == x7f && g->nodes[7].outputs[0] == y7f);
  CHECK(strcmp(g->nodes[g->values[y7].producer].op_type, "Cast") == 0 && g->values[y7].dtype == Q8RT_DTYPE_FLOAT16);
  CHECK(g->n_nodes == N + 1 + 2 * N + 1);
  ir_graph_free(g);
  free(nodes);
  free(np);
  free(vis);
  free(vin);
  free(vout);
  free(names);
  free(io);
  free(cat_in);
  return 0;
}

/* ---- external data ------------------------------------------------------------------------- */

static int write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return -1;
  size_t w = fwrite(data, 1, n, f);
  fclose(f);
  return w == n ? 0 : -1;
}

static void set_external(tmodel *m, const char *location, const char *offset, const char *length) {
  m->w.has_raw_data = 0;
  m->w.has_data_location = 1;
  m->w.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  size_t n = 0;
  m->ext[n].key = S("location");
  m->ext[n++].value = S(location);
  if (offset != NULL) {
    m->ext[n].key = S("offset");
    m->ext[n++].value = S(offset);
  }
  if (length != NULL) {
    m->ext[n].key = S("length");
    m->ext[n++].value = S(length);
  }
  m->w.n_external_data = n;
  m->w.external_data = m->ext_p;
}

Q8RT_TEST(loader_external_data) {
  char dir[] = "/tmp/q8rt-loader-XXXXXX";
  char outside[] = "/tmp/q8rt-outside-XXXXXX";
  CHECK(mkdtemp(dir) != NULL && mkdtemp(outside) != NULL);
  char p_data[128], p_sub[128], p_subdata[128], p_secret[128], p_link[128], p_dirlink[128];
  snprintf(p_data, sizeof(p_data), "%s/weights.bin", dir);
  snprintf(p_sub, sizeof(p_sub), "%s/sub", dir);
  snprintf(p_subdata, sizeof(p_subdata), "%s/sub/w.bin", dir);
  snprintf(p_secret, sizeof(p_secret), "%s/secret.bin", outside);
  snprintf(p_link, sizeof(p_link), "%s/link.bin", dir);
  snprintf(p_dirlink, sizeof(p_dirlink), "%s/out", dir);
  uint8_t file[16];
  for (int i = 0; i < 16; i++) file[i] = (uint8_t)(0xA0 + i);
  CHECK(write_file(p_data, file, 16) == 0);
  CHECK(mkdir(p_sub, 0700) == 0);
  CHECK(write_file(p_subdata, file, 6) == 0);
  CHECK(write_file(p_secret, file, 16) == 0);
  CHECK(symlink(p_secret, p_link) == 0);
  CHECK(symlink(outside, p_dirlink) == 0);

  tmodel m;
  q8rt_load_config cfg = {NULL, 0, dir};
  int rc = 1;
  do {
    /* within the folder: works, offset respected */
    tmodel_init(&m);
    set_external(&m, "weights.bin", "4", "6");
    size_t len;
    uint8_t *buf = pack_model(&m.model, &len);
    ir_graph *g = NULL;
    q8rt_error err;
    q8rt_status st = q8rt_load_graph(buf, len, &cfg, &g, &err);
    free(buf);
    if (st != Q8RT_OK) fprintf(stderr, "  %s\n", err.message);
    CHECK(st == Q8RT_OK);
    const uint8_t *d = g->values[ir_graph_find_value(g, "w")].constant->data;
    CHECK(d[0] == 0xA4 && d[5] == 0xA9);
    ir_graph_free(g);

    tmodel_init(&m);
    set_external(&m, "sub/w.bin", NULL, NULL);
    CHECK(load_tmodel(&m, &cfg, &err) == Q8RT_OK);

    /* no folder: refused */
    EXPECT_FAIL(&m, NULL, Q8RT_ERROR_UNSUPPORTED,
                "initializer 'w' uses external data, which needs a model loaded from a file (or external_data_dir)");
    set_external(&m, "/etc/passwd", NULL, NULL);
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "absolute");
    set_external(&m, "../secret.bin", NULL, NULL);
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "'..'");
    set_external(&m, "sub/../../x", NULL, NULL);
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "'..'");
    set_external(&m, "", NULL, NULL);
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "empty");
    set_external(&m, "link.bin", NULL, NULL);
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "outside");
    set_external(&m, "out/secret.bin", NULL, NULL);
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "outside");
    set_external(&m, "missing.bin", NULL, NULL);
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_IO, "initializer 'w'", "missing.bin");
    set_external(&m, "sub", NULL, NULL);
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "regular file");
    set_external(&m, "weights.bin", "12", NULL);
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "past the end");
    set_external(&m, "weights.bin", "18446744073709551615", NULL);
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "past the end");
    set_external(&m, "weights.bin", "99999999999999999999999", NULL);
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "offset");
    set_external(&m, "weights.bin", "-1", NULL);
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "offset");
    set_external(&m, "weights.bin", "0", "7");
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "length 7");
    set_external(&m, "weights.bin", NULL, NULL);
    m.w.has_raw_data = 1;
    EXPECT_FAIL(&m, &cfg, Q8RT_ERROR_INVALID_MODEL, "initializer 'w'", "external");
    rc = 0;
  } while (0);
  unlink(p_dirlink);
  unlink(p_link);
  unlink(p_secret);
  unlink(p_subdata);
  rmdir(p_sub);
  unlink(p_data);
  rmdir(dir);
  rmdir(outside);
  return rc;
}

/* The window realpath-then-open had: a path component swapped for a symlink leading out of the
 * model's folder between the check and the open. The hook swaps "sub" for a symlink to a folder
 * outside right before the kernel resolves it (step 0) — in the openat2 call, or in the walk
 * before "sub" is opened — and the open must be refused. Swapped after "sub" was opened (step 1
 * of the walk), the open must read the original file through the descriptor it holds. */
typedef struct swap_ctx {
  const char *sub, *moved, *outside;
  int at_step, swapped;
} swap_ctx;

static void swap_hook(int step, void *ud) {
  swap_ctx *c = ud;
  if (step != c->at_step || c->swapped) return;
  if (rename(c->sub, c->moved) == 0 && symlink(c->outside, c->sub) == 0) c->swapped = 1;
}

static void swap_back(swap_ctx *c) {
  if (!c->swapped) return;
  unlink(c->sub);
  rename(c->moved, c->sub);
  c->swapped = 0;
}

static int read_byte(int fd) {
  unsigned char b = 0;
  int r = fd >= 0 && read(fd, &b, 1) == 1 ? b : -1;
  if (fd >= 0) close(fd);
  return r;
}

static int kernel_has_openat2(void) {
#if defined(__linux__) && defined(SYS_openat2)
  struct open_how how;
  memset(&how, 0, sizeof(how));
  how.flags = O_RDONLY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH;
  long fd = syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof(how));
  if (fd >= 0) close((int)fd);
  return fd >= 0;
#else
  return 0;
#endif
}

Q8RT_TEST(loader_external_symlink_swap) {
  char dir[] = "/tmp/q8rt-swap-XXXXXX";
  char outside[] = "/tmp/q8rt-swapout-XXXXXX";
  CHECK(mkdtemp(dir) != NULL && mkdtemp(outside) != NULL);
  char p_sub[128], p_moved[128], p_in[128], p_out[128], p_inlink[128];
  snprintf(p_sub, sizeof(p_sub), "%s/sub", dir);
  snprintf(p_moved, sizeof(p_moved), "%s/sub.orig", dir);
  snprintf(p_in, sizeof(p_in), "%s/sub/w.bin", dir);
  snprintf(p_out, sizeof(p_out), "%s/w.bin", outside);
  snprintf(p_inlink, sizeof(p_inlink), "%s/inlink.bin", dir);
  CHECK(mkdir(p_sub, 0700) == 0);
  CHECK(write_file(p_in, "I", 1) == 0);
  CHECK(write_file(p_out, "O", 1) == 0);
  CHECK(symlink("sub/w.bin", p_inlink) == 0);
  const int has_openat2 = kernel_has_openat2();
  printf("  (kernel openat2: %s)\n", has_openat2 ? "yes" : "no, only the walk is tested");
  int rc = 1;
  swap_ctx c = {p_sub, p_moved, outside, 0, 0};
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  do {
    CHECK(dirfd >= 0);
    for (int mode = has_openat2 ? 1 : 0; mode >= 0; mode--) {
      /* no swap: the file inside is read */
      CHECK(read_byte(ld_open_beneath(dirfd, "sub/w.bin", mode, NULL, NULL)) == 'I');
      /* swap before "sub" is resolved: refused, whatever the walk had checked before */
      c.at_step = 0;
      int fd = ld_open_beneath(dirfd, "sub/w.bin", mode, swap_hook, &c);
      const int swapped = c.swapped;
      swap_back(&c);
      CHECK(swapped);
      if (fd >= 0) fprintf(stderr, "  mode %d read '%c' through the swapped symlink\n", mode, read_byte(fd));
      CHECK(fd == (mode ? -EXDEV : -ELOOP));
      /* a symlink that stays inside: followed by openat2, refused by the walk (it cannot tell) */
      CHECK(read_byte(ld_open_beneath(dirfd, "inlink.bin", mode, NULL, NULL)) == (mode ? 'I' : -1));
    }
    /* the walk, swapped after "sub" was opened: the held descriptor still names the original */
    c.at_step = 1;
    int fd = ld_open_beneath(dirfd, "sub/w.bin", 0, swap_hook, &c);
    const int swapped = c.swapped;
    const int b = read_byte(fd);
    swap_back(&c);
    CHECK(swapped);
    CHECK(b == 'I');
    CHECK(read_byte(ld_open_beneath(dirfd, "sub//./w.bin", 0, NULL, NULL)) == 'I');
    rc = 0;
  } while (0);
  if (dirfd >= 0) close(dirfd);
  swap_back(&c);
  unlink(p_inlink);
  unlink(p_in);
  unlink(p_out);
  rmdir(p_sub);
  rmdir(dir);
  rmdir(outside);
  return rc;
}

/* ---- standalone TensorProto ---------------------------------------------------------------- */

Q8RT_TEST(loader_tensor_proto_decode) {
  Onnx__TensorProto tp;
  onnx__tensor_proto__init(&tp);
  tp.name = S("input_0");
  tp.has_data_type = 1;
  tp.data_type = 5; /* int16 */
  int64_t dims[2] = {2, 3};
  tp.n_dims = 2;
  tp.dims = dims;
  int32_t vals[6] = {-32768, -1, 0, 1, 2, 32767};
  tp.n_int32_data = 6;
  tp.int32_data = vals;
  size_t len = onnx__tensor_proto__get_packed_size(&tp);
  uint8_t *buf = malloc(len);
  onnx__tensor_proto__pack(&tp, buf);

  q8rt_tensor_info info;
  size_t nbytes = 0;
  q8rt_error err;
  int rc = 1;
  do {
    CHECK(q8rt_load_tensor_proto(buf, len, NULL, &info, NULL, 0, &nbytes, &err) == Q8RT_OK);
    CHECK(info.name == NULL && info.dtype == Q8RT_DTYPE_INT16 && info.rank == 2 && info.shape[1] == 3);
    CHECK(info.has_quantization == 0 && nbytes == 12);
    int16_t out[6];
    CHECK(q8rt_load_tensor_proto(buf, len, NULL, &info, out, 4, &nbytes, &err) == Q8RT_ERROR_INVALID_ARGUMENT);
    CHECK(q8rt_load_tensor_proto(buf, len, NULL, &info, out, sizeof(out), &nbytes, &err) == Q8RT_OK);
    CHECK(out[0] == -32768 && out[1] == -1 && out[5] == 32767);
    for (size_t n = 0; n + 1 < len; n++) {
      /* must fail cleanly or decode less; under ASan, never read past n bytes */
      uint8_t *cut = malloc(n ? n : 1);
      memcpy(cut, buf, n);
      q8rt_status st = q8rt_load_tensor_proto(cut, n, NULL, &info, out, sizeof(out), &nbytes, &err);
      free(cut);
      CHECK(st == Q8RT_OK || err.message[0] != '\0');
    }
    CHECK(q8rt_load_tensor_proto(buf, len - 1, NULL, &info, out, sizeof(out), &nbytes, &err) ==
          Q8RT_ERROR_INVALID_MODEL);
    vals[1] = 40000;
    onnx__tensor_proto__pack(&tp, buf);
    CHECK(q8rt_load_tensor_proto(buf, onnx__tensor_proto__get_packed_size(&tp), NULL, &info, NULL, 0, &nbytes, &err) ==
          Q8RT_ERROR_INVALID_MODEL);
    CHECK(strstr(err.message, "int16") != NULL);
    rc = 0;
  } while (0);
  free(buf);

  /* raw float data */
  onnx__tensor_proto__init(&tp);
  tp.has_data_type = 1;
  tp.data_type = 1;
  float f[2] = {1.0f, -0.5f};
  int64_t d1 = 2;
  tp.n_dims = 1;
  tp.dims = &d1;
  tp.has_raw_data = 1;
  tp.raw_data.data = (uint8_t *)f;
  tp.raw_data.len = sizeof(f);
  len = onnx__tensor_proto__get_packed_size(&tp);
  buf = malloc(len);
  onnx__tensor_proto__pack(&tp, buf);
  float of[2] = {0, 0};
  q8rt_status st = q8rt_load_tensor_proto(buf, len, NULL, &info, of, sizeof(of), &nbytes, &err);
  free(buf);
  CHECK(rc == 0 && st == Q8RT_OK && of[0] == 1.0f && of[1] == -0.5f && info.dtype == Q8RT_DTYPE_FLOAT32);
  return 0;
}

/* Random byte mutations of a valid model reach deeper than random bytes do: each load must
 * succeed or fail with a message, and give back every byte. */
Q8RT_TEST(loader_mutated_model) {
  tmodel m;
  tmodel_init(&m);
  size_t len;
  uint8_t *orig = pack_model(&m.model, &len);
  uint8_t *buf = malloc(len);
  CHECK(orig != NULL && buf != NULL);
  counting c = {0, 0, 0, -1};
  q8rt_allocator a = {count_alloc, count_free, &c};
  q8rt_load_config cfg = {&a, 0, NULL};
  uint32_t seed = 777;
  int ok = 0, rc = 0;
  for (int iter = 0; iter < 20000 && rc == 0; iter++) {
    memcpy(buf, orig, len);
    seed = seed * 1664525u + 1013904223u;
    int flips = 1 + (int)((seed >> 28) & 3);
    for (int k = 0; k < flips; k++) {
      seed = seed * 1664525u + 1013904223u;
      size_t pos = (seed >> 8) % len;
      seed = seed * 1664525u + 1013904223u;
      buf[pos] = (seed & 1) ? (uint8_t)(seed >> 24) : (uint8_t)(buf[pos] ^ (1u << ((seed >> 13) & 7)));
    }
    ir_graph *g = NULL;
    q8rt_error err;
    err.message[0] = '\0';
    q8rt_status st = q8rt_load_graph(buf, len, &cfg, &g, &err);
    if (st == Q8RT_OK) {
      ok++;
      ir_graph_free(g);
    } else if (g != NULL || err.message[0] == '\0') {
      rc = 1;
    }
    if (c.live_blocks != 0) rc = 1;
  }
  free(buf);
  free(orig);
  CHECK(rc == 0);
  CHECK(ok > 0); /* some mutations only change data bytes */
  return 0;
}
