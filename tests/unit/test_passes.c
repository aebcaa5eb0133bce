/* Graph passes on their own (src/passes/): loader -> IR -> pass, the IR checked after the pass. */
#include <stdlib.h>

#include "loader/loader.h"
#include "model_builder.h"
#include "passes/passes.h"
#include "test.h"

enum { T_FLOAT = 1, T_UINT8 = 2, T_INT64 = 7 };

static const int64_t scalar_dims[1] = {0}; /* rank 0: not read, but memcpy wants a pointer */

static ir_graph *load(mb_model *m) {
  size_t len = 0;
  uint8_t *buf = mb_pack(m, &len);
  mb_free(m);
  ir_graph *g = NULL;
  q8rt_error err;
  if (q8rt_load_graph(buf, len, NULL, &g, &err) != Q8RT_OK) fprintf(stderr, "  load: %s\n", err.message);
  free(buf);
  return g;
}

static int node_index(const ir_graph *g, const char *name) {
  for (int i = 0; i < g->n_nodes; i++) {
    if (strcmp(g->nodes[i].name, name) == 0) return i;
  }
  return -1;
}

/* Topological order, then folding; folded[] per node. */
static q8rt_status fold(ir_graph *g, q8rt_pool *pool, unsigned char *folded, q8rt_error *err) {
  int order[16], count = 0;
  if (g->n_nodes > 16) return Q8RT_ERROR_INVALID_ARGUMENT;
  q8rt_status st = pass_topo_order(g, order, &count, err);
  if (st != Q8RT_OK) return st;
  return pass_fold_constants(g, order, count, pool, Q8RT_BACKEND_REFERENCE, 0, folded, err);
}

Q8RT_TEST(pass_fold_constants_chain) {
  mb_model *m = mb_create(13);
  const int64_t two[1] = {2};
  const float a[2] = {1.5f, -2.0f}, b[2] = {0.25f, 4.0f}, ws = 0.5f;
  const uint8_t wq[2] = {10, 200}, wz = 128;
  mb_input(m, "x", T_FLOAT, 1, two);
  mb_initializer(m, "a", T_FLOAT, 1, two, a, sizeof(a));
  mb_initializer(m, "b", T_FLOAT, 1, two, b, sizeof(b));
  mb_initializer(m, "wq", T_UINT8, 1, two, wq, sizeof(wq));
  mb_initializer(m, "ws", T_FLOAT, 0, scalar_dims, &ws, sizeof(ws));
  mb_initializer(m, "wz", T_UINT8, 0, scalar_dims, &wz, sizeof(wz));
  /* listed out of order: folding follows the topological order, so "sum" sees both constants */
  mb_node(m, "Add", "sum", (const char *const[]){"c", "w", NULL}, (const char *const[]){"d", NULL});
  mb_node(m, "Add", "fold_add", (const char *const[]){"a", "b", NULL}, (const char *const[]){"c", NULL});
  mb_node(m, "DequantizeLinear", "fold_dq", (const char *const[]){"wq", "ws", "wz", NULL},
          (const char *const[]){"w", NULL});
  mb_node(m, "Add", "live", (const char *const[]){"x", "d", NULL}, (const char *const[]){"y", NULL});
  mb_output(m, "y", T_FLOAT);
  ir_graph *g = load(m);
  CHECK(g != NULL);
  q8rt_pool pool;
  q8rt_pool_init(&pool, g->allocator);
  unsigned char folded[16];
  memset(folded, 0xff, sizeof(folded));
  q8rt_error err;
  const q8rt_status st = fold(g, &pool, folded, &err);
  int ok = st == Q8RT_OK;
  ok = ok && folded[node_index(g, "sum")] == 1 && folded[node_index(g, "fold_add")] == 1 &&
       folded[node_index(g, "fold_dq")] == 1 && folded[node_index(g, "live")] == 0;
  const ir_value *d = &g->values[ir_graph_find_value(g, "d")];
  const ir_value *w = &g->values[ir_graph_find_value(g, "w")];
  const ir_value *y = &g->values[ir_graph_find_value(g, "y")];
  const ir_value *wqv = &g->values[ir_graph_find_value(g, "wq")];
  /* the run's own arithmetic: (q - zp) * scale, then the float adds */
  ok = ok && w->constant != NULL && w->dtype == Q8RT_DTYPE_FLOAT32 && w->rank == 1 && w->dims[0] == 2 &&
       ((const float *)w->constant->data)[0] == -59.0f && ((const float *)w->constant->data)[1] == 36.0f;
  ok = ok && d->constant != NULL && ((const float *)d->constant->data)[0] == 1.75f - 59.0f &&
       ((const float *)d->constant->data)[1] == 2.0f + 36.0f;
  ok = ok && y->constant == NULL;
  /* DequantizeLinear's scalar parameters annotate its input for tensor info */
  ok = ok && wqv->quant.known && wqv->quant.scale == 0.5f && wqv->quant.zero_point == 128;
  q8rt_pool_free(&pool);
  ir_graph_free(g);
  CHECK(ok);
  return 0;
}

Q8RT_TEST(pass_fold_constants_refuses_huge_output) {
  mb_model *m = mb_create(13);
  const int64_t one[1] = {1}, huge[1] = {(int64_t)1 << 27}; /* 512 MiB of float: over the fold budget */
  mb_input(m, "x", T_FLOAT, 1, one);
  mb_initializer(m, "shape", T_INT64, 1, one, huge, sizeof(huge));
  mb_node(m, "ConstantOfShape", "big", (const char *const[]){"shape", NULL}, (const char *const[]){"z", NULL});
  mb_node(m, "Identity", "id", (const char *const[]){"x", NULL}, (const char *const[]){"y", NULL});
  mb_output(m, "y", T_FLOAT);
  mb_output(m, "z", T_FLOAT);
  ir_graph *g = load(m);
  CHECK(g != NULL);
  q8rt_pool pool;
  q8rt_pool_init(&pool, g->allocator);
  unsigned char folded[16];
  q8rt_error err;
  memset(&err, 0, sizeof(err));
  const q8rt_status st = fold(g, &pool, folded, &err);
  const int named = strstr(err.message, "'big'") != NULL;
  const int untouched = g->values[ir_graph_find_value(g, "z")].constant == NULL;
  q8rt_pool_free(&pool);
  ir_graph_free(g);
  CHECK(st == Q8RT_ERROR_OUT_OF_MEMORY && named && untouched);
  return 0;
}

Q8RT_TEST(pass_float_nhwc_ok_stops_at_nchw_ops) {
  /* three float stretches on one 8-bit input: a -> GlobalAveragePool -> Q (all channels-last),
   * b -> ReduceMean (no channels-last form) -> Q, c ending in a float graph output */
  mb_model *m = mb_create(13);
  const int64_t shape[4] = {1, 2, 3, 3};
  const float s = 0.5f, six = 6.0f;
  const uint8_t z = 3;
  mb_input(m, "x", T_UINT8, 4, shape);
  mb_initializer(m, "s", T_FLOAT, 0, scalar_dims, &s, sizeof(s));
  mb_initializer(m, "z", T_UINT8, 0, scalar_dims, &z, sizeof(z));
  mb_initializer(m, "six", T_FLOAT, 0, scalar_dims, &six, sizeof(six));
  static const char *const br[3] = {"a", "b", "c"};
  for (int i = 0; i < 3; i++) {
    char dq[8], div[8], f[8], d[8], pool[8], p[8], q[8], y[8];
    snprintf(dq, sizeof(dq), "dq_%s", br[i]);
    snprintf(div, sizeof(div), "div_%s", br[i]);
    snprintf(f, sizeof(f), "f_%s", br[i]);
    snprintf(d, sizeof(d), "d_%s", br[i]);
    snprintf(pool, sizeof(pool), "pool_%s", br[i]);
    snprintf(p, sizeof(p), "p_%s", br[i]);
    snprintf(q, sizeof(q), "q_%s", br[i]);
    snprintf(y, sizeof(y), "y_%s", br[i]);
    mb_node(m, "DequantizeLinear", dq, (const char *const[]){"x", "s", "z", NULL}, (const char *const[]){f, NULL});
    mb_node(m, "Div", div, (const char *const[]){f, "six", NULL}, (const char *const[]){d, NULL});
    if (i == 2) {
      mb_output(m, d, T_FLOAT);
      continue;
    }
    mb_node(m, i == 0 ? "GlobalAveragePool" : "ReduceMean", pool, (const char *const[]){d, NULL},
            (const char *const[]){p, NULL});
    if (i == 1) mb_attr_ints(m, "axes", 1, (const int64_t[]){3});
    mb_node(m, "QuantizeLinear", q, (const char *const[]){p, "s", "z", NULL}, (const char *const[]){y, NULL});
    mb_node(m, "Identity", pool[5] == 'a' ? "id_a" : "id_b", (const char *const[]){y, NULL},
            (const char *const[]){i == 0 ? "out_a" : "out_b", NULL});
    mb_output(m, i == 0 ? "out_a" : "out_b", T_UINT8);
  }
  ir_graph *g = load(m);
  CHECK(g != NULL);
  int order[32], count = 0;
  unsigned char skip[32], ok[32];
  memset(skip, 0, sizeof(skip));
  memset(ok, 0xff, sizeof(ok));
  q8rt_error err;
  int good = g->n_nodes <= 32 && pass_topo_order(g, order, &count, &err) == Q8RT_OK &&
             pass_float_nhwc_ok(g, order, count, skip, ok, &err) == Q8RT_OK;
  static const char *const yes[] = {"dq_a", "div_a", "pool_a"};
  static const char *const no[] = {"dq_b", "div_b", "pool_b", "dq_c", "div_c", "id_a"};
  for (size_t i = 0; good && i < sizeof(yes) / sizeof(yes[0]); i++) good = ok[node_index(g, yes[i])] == 1;
  for (size_t i = 0; good && i < sizeof(no) / sizeof(no[0]); i++) good = ok[node_index(g, no[i])] == 0;
  /* a folded (skipped) reader does not hold its producer back */
  if (good) {
    memset(skip, 0, sizeof(skip));
    skip[node_index(g, "pool_b")] = 1;
    good = pass_float_nhwc_ok(g, order, count, skip, ok, &err) == Q8RT_OK && ok[node_index(g, "div_b")] == 1 &&
           ok[node_index(g, "dq_b")] == 1 && ok[node_index(g, "pool_b")] == 0;
  }
  ir_graph_free(g);
  CHECK(good);
  return 0;
}

Q8RT_TEST(pass_layout_decisions) {
  /* the layout pass's answers for a planner state set by hand: which inputs are stored channels-last */
  mb_model *m = mb_create(13);
  const int64_t s4[4] = {1, 4, 3, 3}, s3[3] = {1, 4, 3};
  mb_input(m, "a", T_UINT8, 4, s4);
  mb_input(m, "b", T_UINT8, 4, s4);
  mb_input(m, "b2", T_UINT8, 4, s4);
  mb_input(m, "c", T_UINT8, 3, s3);
  mb_input(m, "f", T_FLOAT, 4, s4);
  mb_node(m, "Max", "two", (const char *const[]){"a", "b", NULL}, (const char *const[]){"o1", NULL});
  mb_node(m, "Max", "three", (const char *const[]){"a", "b", "b2", NULL}, (const char *const[]){"o2", NULL});
  mb_node(m, "Max", "ranks", (const char *const[]){"a", "c", NULL}, (const char *const[]){"o3", NULL});
  mb_node(m, "Relu", "float", (const char *const[]){"f", NULL}, (const char *const[]){"o4", NULL});
  mb_node(m, "Relu", "edge", (const char *const[]){"b", NULL}, (const char *const[]){"o5", NULL});
  mb_node(m, "Relu", "inner", (const char *const[]){"o1", NULL}, (const char *const[]){"o6", NULL});
  for (int i = 0; i < 6; i++) {
    static const char *const outs[6] = {"o1", "o2", "o3", "o4", "o5", "o6"};
    if (i != 0) mb_output(m, outs[i], i == 3 ? T_FLOAT : T_UINT8);
  }
  ir_graph *g = load(m);
  CHECK(g != NULL);
  enum { CAP = 64 };
  int nchw[CAP], nhwc[CAP], pos[16];
  int good = 2 * g->n_values + 1 <= CAP && g->n_nodes <= 16;
  for (int v = 0; good && v < CAP; v++) {
    nchw[v] = v < g->n_values ? v : -1;
    nhwc[v] = -1;
  }
  for (int i = 0; good && i < g->n_nodes; i++) pos[i] = i;
  const pass_layout ls = {nchw, nhwc, CAP};
  const int a = ir_graph_find_value(g, "a"), f = ir_graph_find_value(g, "f"), b = ir_graph_find_value(g, "b");
  const ir_node *two = &g->nodes[node_index(g, "two")], *three = &g->nodes[node_index(g, "three")];
  const ir_node *ranks = &g->nodes[node_index(g, "ranks")], *fl = &g->nodes[node_index(g, "float")];
  const char *why = "unset";
  /* nothing channels-last yet */
  good = good && !pass_layout_try_nhwc(g, two, &ls, 1, &why) && why != NULL && strcmp(why, "its inputs are NCHW") == 0;
  if (good) nhwc[a] = g->n_values;                                          /* a's twin */
  good = good && pass_layout_try_nhwc(g, two, &ls, 1, &why) && why == NULL; /* one of two: a tie goes channels-last */
  good = good && !pass_layout_try_nhwc(g, three, &ls, 1, &why) && strcmp(why, "most of its inputs are NCHW") == 0;
  good = good && !pass_layout_try_nhwc(g, ranks, &ls, 1, &why) && strcmp(why, "its inputs differ in rank") == 0;
  if (good) nhwc[f] = g->n_values + 1;
  good = good && !pass_layout_try_nhwc(g, fl, &ls, 0, &why) &&
         strcmp(why, "its float output reaches an op that runs NCHW") == 0;
  good = good && pass_layout_try_nhwc(g, fl, &ls, 1, &why);
  /* inputs: a channels-last node reads every non-constant input so; a constant as it is stored */
  good = good && pass_layout_input(g, &ls, b, 1, OP_LAYOUT_NCHW, 1) == OP_LAYOUT_NHWC &&
         pass_layout_input(g, &ls, b, 1, OP_LAYOUT_NCHW, 0) == OP_LAYOUT_NCHW &&
         pass_layout_input(g, &ls, a, 0, OP_LAYOUT_ANY, 0) == OP_LAYOUT_NCHW;
  /* edges: input only NCHW and output a graph output nothing reads */
  good = good && pass_layout_edge_nchw(g, &g->nodes[node_index(g, "edge")], pos, &ls) == 1 &&
         pass_layout_edge_nchw(g, two, pos, &ls) == 0 /* o1 is read by 'inner' */ &&
         pass_layout_edge_nchw(g, &g->nodes[node_index(g, "inner")], pos, &ls) == 1;
  if (good) nhwc[b] = g->n_values + 2;
  good = good && pass_layout_edge_nchw(g, &g->nodes[node_index(g, "edge")], pos, &ls) == 0;
  /* layout changes that move only axes of size 1 are copies */
  char dims[160], why_buf[512];
  ir_value v = g->values[a];
  good = good && pass_layout_change_copies(&v, 1, dims, sizeof(dims)) == 0 && strcmp(dims, "1x4x3x3") == 0;
  v.dims[1] = 1;
  good = good && pass_layout_change_copies(&v, 1, dims, sizeof(dims)) == 1;
  pass_layout_change_reason(why_buf, sizeof(why_buf), two, NULL, 1, 1, dims);
  good = good &&
         strcmp(why_buf, "NCHW -> NHWC for Max 'two'; only axes of size 1 move (1x1x3x3): the same bytes, a copy") == 0;
  v.dims[1] = -1; /* a copy only if the bound channel count is 1 */
  good = good && pass_layout_change_copies(&v, 1, dims, sizeof(dims)) == -1 && strcmp(dims, "1x-1x3x3") == 0;
  pass_layout_change_reason(why_buf, sizeof(why_buf), NULL, NULL, 0, 0, "");
  good = good && strcmp(why_buf, "NHWC -> NCHW: graph outputs are NCHW") == 0;
  pass_layout_change_reason(why_buf, sizeof(why_buf), three, "most of its inputs are NCHW", 0, 0, "");
  good = good && strcmp(why_buf, "NHWC -> NCHW: Max 'three' runs in NCHW (most of its inputs are NCHW)") == 0;
  good = good && pass_layout_physical_axis(1, 4, 1) == 3 && pass_layout_physical_axis(2, 4, 1) == 1 &&
         pass_layout_physical_axis(1, 4, 0) == 1 && pass_layout_physical_axis(1, 2, 1) == 1;
  ir_graph_free(g);
  CHECK(good);
  return 0;
}

/* x = Transpose(in) (not elementwise) -> DequantizeLinear -> Relu -> QuantizeLinear -> y; with `shared`, x is also a
 * graph output of its own (through a second Identity). */
static ir_graph *island_graph(int shared) {
  mb_model *m = mb_create(13);
  const int64_t shape[4] = {1, 2, 3, 3};
  const float s = 0.25f;
  const uint8_t z = 100;
  mb_input(m, "in", T_UINT8, 4, shape);
  mb_initializer(m, "s", T_FLOAT, 0, scalar_dims, &s, sizeof(s));
  mb_initializer(m, "z", T_UINT8, 0, scalar_dims, &z, sizeof(z));
  mb_node(m, "Transpose", "head", (const char *const[]){"in", NULL}, (const char *const[]){"x", NULL});
  mb_attr_ints(m, "perm", 4, (const int64_t[]){0, 1, 2, 3});
  mb_node(m, "DequantizeLinear", "dq", (const char *const[]){"x", "s", "z", NULL}, (const char *const[]){"f", NULL});
  mb_node(m, "Relu", "relu", (const char *const[]){"f", NULL}, (const char *const[]){"r", NULL});
  mb_node(m, "QuantizeLinear", "q", (const char *const[]){"r", "s", "z", NULL}, (const char *const[]){"y", NULL});
  mb_output(m, "y", T_UINT8);
  if (shared) {
    mb_node(m, "Identity", "side", (const char *const[]){"x", NULL}, (const char *const[]){"x2", NULL});
    mb_output(m, "x2", T_UINT8);
  }
  ir_graph *g = load(m);
  if (g != NULL) { /* what the planner's shape inference records before it asks */
    ir_value *x = &g->values[ir_graph_find_value(g, "x")];
    x->dtype = Q8RT_DTYPE_UINT8;
    x->rank = 4;
    memcpy(x->dims, shape, sizeof(shape));
  }
  return g;
}

Q8RT_TEST(pass_table_decisions) {
  int good = 1;
  for (int shared = 0; shared < 2 && good; shared++) {
    ir_graph *g = island_graph(shared);
    CHECK(g != NULL);
    int order[8], pos[8], count = 0;
    unsigned char done[8];
    q8rt_error err;
    q8rt_pool pool;
    q8rt_pool_init(&pool, g->allocator);
    good = g->n_nodes <= 8 && pass_topo_order(g, order, &count, &err) == Q8RT_OK;
    memset(done, 0, sizeof(done));
    for (int i = 0; good && i < g->n_nodes; i++) pos[i] = -1;
    for (int i = 0; good && i < count; i++) pos[order[i]] = i;
    const int head = node_index(g, "head"), dq = node_index(g, "dq");
    table_island t;
    int found = -1;
    /* the island DQ -> Relu -> Q is headed by its first node, not by the node making x */
    good = good && pass_table_head(g, head, pos, done, &pool, Q8RT_BACKEND_REFERENCE, 0, &t, &found, &err) == Q8RT_OK &&
           found == 0;
    good = good && pass_table_head(g, dq, pos, done, &pool, Q8RT_BACKEND_REFERENCE, 0, &t, &found, &err) == Q8RT_OK &&
           found == 1 && t.n_nodes == 3 && t.x == ir_graph_find_value(g, "x") && t.y == ir_graph_find_value(g, "y") &&
           t.channels == 1 && t.out_type == Q8RT_DTYPE_UINT8;
    /* the table is the island run on every byte: Relu clamps below the zero point */
    for (int b = 0; good && b < 256; b++) good = t.table[b] == (b < 100 ? 100 : b);
    /* the head's output stage may absorb it only when nothing else reads x */
    done[head] = 1;
    good = good &&
           pass_table_after(g, head, pos, done, &pool, Q8RT_BACKEND_REFERENCE, 0, &t, &found, &err) == Q8RT_OK &&
           found == !shared;
    if (good && found) {
      pass_table_claim(&t, done);
      good = done[dq] && done[node_index(g, "relu")] && done[node_index(g, "q")];
    }
    q8rt_pool_free(&pool);
    ir_graph_free(g);
  }
  CHECK(good);
  return 0;
}
