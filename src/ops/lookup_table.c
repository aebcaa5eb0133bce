/* The planner's table step (not an ONNX op): an island of elementwise nodes on one 8-bit tensor,
 * replaced by the 256-entry table the table pass computed by running those nodes on every input
 * byte (src/passes/table_fuse.c). One table, or one per index along a physical axis when a
 * per-channel parameter entered the island. Runs in whatever layout its input has: the planner
 * passes the table axis as it lies in that layout. */
#include <stdio.h>
#include <string.h>

#include "op.h"
#include "op_util.h"
#include "q8rt-isa.h"
#include "q8rt-kernels.h"

typedef struct table_params {
  q8rt_x8_lut_ukernel_fn fn;
  q8rt_x8_lutc_ukernel_fn lutc; /* per-channel tables with the channels innermost */
  q8rt_dtype out_type;
  int axis;        /* physical axis the tables are indexed by, -1: one table */
  size_t channels; /* tables: 1, or the extent of `axis` */
  const uint8_t *table;
} table_params;

typedef struct table_geom {
  size_t outer, channels, inner; /* the input viewed as [outer][channels][inner] */
} table_geom;

static const struct {
  uint32_t isa;
  q8rt_x8_lut_ukernel_fn fn;
  q8rt_x8_lut_rows_ukernel_fn rows_fn;
  const char *name;
} g_lut[] = {
#define Q8RT_X8_LUT_UKERNEL(isa, fn, rows_fn) {isa, fn, rows_fn, #fn},
#include "x8-lut/x8-lut.inc"
#undef Q8RT_X8_LUT_UKERNEL
};

q8rt_x8_lut_ukernel_fn op_lookup_table_kernel(q8rt_backend backend, uint32_t isa, const char **name) {
  size_t i = OP_FIRST_USABLE(g_lut, isa, backend);
  *name = g_lut[i].name + 5; /* drop the "q8rt_" prefix */
  return g_lut[i].fn;
}

q8rt_x8_lut_rows_ukernel_fn op_lookup_table_rows_kernel(q8rt_backend backend, uint32_t isa) {
  size_t i = OP_FIRST_USABLE(g_lut, isa, backend);
  return g_lut[i].rows_fn;
}

static const struct {
  uint32_t isa;
  q8rt_x8_lutc_ukernel_fn fn;
  const char *name;
} g_lutc[] = {
#define Q8RT_X8_LUTC_UKERNEL(isa, fn) {isa, fn, #fn},
#include "x8-lutc/x8-lutc.inc"
#undef Q8RT_X8_LUTC_UKERNEL
};

q8rt_x8_lutc_ukernel_fn op_lookup_table_channels_kernel(q8rt_backend backend, uint32_t isa, const char **name) {
  size_t i = OP_FIRST_USABLE(g_lutc, isa, backend);
  if (name != NULL) *name = g_lutc[i].name + 5; /* drop the "q8rt_" prefix */
  return g_lutc[i].fn;
}

void *op_lookup_table_params(q8rt_pool *pool, const uint8_t *table, size_t channels, int axis, int rank,
                             q8rt_dtype out_type, q8rt_backend backend, uint32_t isa, const char **kernel) {
  table_params *p = q8rt_pool_alloc(pool, sizeof(*p), 16);
  if (p == NULL) return NULL;
  p->out_type = out_type;
  p->axis = channels > 1 ? axis : -1;
  p->channels = channels > 1 ? channels : 1;
  p->table = table;
  const char *name = "";
  p->fn = op_lookup_table_kernel(backend, isa, &name);
  const char *lutc_name = "";
  p->lutc = op_lookup_table_channels_kernel(backend, isa, &lutc_name);
  if (channels > 1 && rank > 0 && axis == rank - 1) name = lutc_name; /* channels innermost */
  *kernel = name;
  if (channels > 1) { /* one table per channel: say so beside the kernel's name */
    const size_t len = strlen(name) + sizeof(" (per channel)");
    char *s = q8rt_pool_alloc(pool, len, 1);
    if (s == NULL) return NULL;
    snprintf(s, len, "%s (per channel)", name);
    *kernel = s;
  }
  return p;
}

static q8rt_status table_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                               void *geom, q8rt_error *err) {
  const table_params *p = params;
  const op_shape *x = &in[0];
  if (q8rt_dtype_size(x->dtype) != 1) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "table step '%s': needs an 8-bit input", n->name);
  }
  if (p->axis >= 0 && x->rank >= 0 &&
      (p->axis >= x->rank || (x->dims[p->axis] >= 0 && (size_t)x->dims[p->axis] != p->channels))) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "table step '%s': the input does not have %zu channels on axis %d", n->name,
                     p->channels, p->axis);
  }
  *out = *x;
  out->dtype = p->out_type;
  out->value = NULL;
  if (concrete) {
    table_geom *g = geom;
    g->outer = 1;
    g->inner = 1;
    g->channels = p->channels;
    for (int d = 0; d < x->rank; d++) {
      if (p->axis < 0 || d > p->axis) {
        g->inner *= (size_t)x->dims[d];
      } else if (d < p->axis) {
        g->outer *= (size_t)x->dims[d];
      }
    }
  }
  return Q8RT_OK;
}

void op_lookup_table_apply(q8rt_x8_lut_ukernel_fn fn, q8rt_x8_lutc_ukernel_fn lutc, const uint8_t *table,
                           size_t channels, size_t outer, size_t inner, const uint8_t *x, uint8_t *y) {
  if (channels == 1) {
    fn(outer * inner, x, y, table);
    return;
  }
  if (inner == 1) { /* channels innermost (NHWC): a table per byte */
    lutc(outer, channels, x, channels, y, channels, table);
    return;
  }
  for (size_t o = 0; o < outer; o++) {
    for (size_t c = 0; c < channels; c++) {
      fn(inner, x + c * inner, y + c * inner, table + c * 256);
    }
    x += channels * inner;
    y += channels * inner;
  }
}

typedef struct table_job {
  const table_params *p;
  const table_geom *g;
  const uint8_t *x;
  uint8_t *y;
} table_job;

/* Elements [begin, end) of a one-table step. */
static void table_elems(void *arg, size_t begin, size_t end) {
  const table_job *j = arg;
  j->p->fn(end - begin, j->x + begin, j->y + begin, j->p->table);
}

/* Outer rows [begin, end) of a per-channel step. */
static void table_rows(void *arg, size_t begin, size_t end) {
  const table_job *j = arg;
  const size_t row = j->p->channels * j->g->inner;
  op_lookup_table_apply(j->p->fn, j->p->lutc, j->p->table, j->p->channels, end - begin, j->g->inner, j->x + begin * row,
                        j->y + begin * row);
}

static void table_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx) {
  (void)workspace;
  const table_params *p = params;
  const table_geom *g = geom;
  table_job j = {p, g, in[0].data, out[0].data};
  /* grain: ~4096 bytes (~1-2 us through the x8-lut kernels); a table per channel takes ~0.8 ns a
   * byte (x8-lutc on rec's 40 x 360 attention rows: 11-12 us, serial at 4096), so ~1536 bytes */
  if (p->channels == 1) {
    op_parallel_range(ctx, g->outer * g->inner, 4096, table_elems, &j);
  } else {
    op_parallel_range(ctx, g->outer, 1536 / (p->channels * g->inner + 1) + 1, table_rows, &j);
  }
}

const op_def q8rt_op_lookup_table = {
    .op_type = "LookupTable",
    .domain = "q8rt",
    .min_opset = 1,
    .infer = table_infer,
    .run = table_run,
};
