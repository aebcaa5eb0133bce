/* The planner's layout change: NCHW <-> NHWC (3-D: NCW <-> NWC). It is not an ONNX op: the
 * planner inserts it where a value crosses from NCHW ops to NHWC ones or back. 8-bit activations
 * go through the x8-transpose kernels; wider ones (a float tensor between channels-last quantized
 * ops and an op that runs NCHW only) are moved element by element. When the bound shapes have one
 * channel or one pixel, only axes of size 1 move: the step is a copy. */
#include <string.h>

#include "op.h"
#include "op_util.h"
#include "q8rt-isa.h"
#include "q8rt-kernels.h"

typedef struct transpose_params {
  int to_nhwc;
  q8rt_x8_transpose_ukernel_fn fn;
} transpose_params;

typedef struct transpose_geom {
  size_t outer, a, b; /* [outer][a][b] -> [outer][b][a] */
  size_t esize;       /* bytes per element: 1, 2, 4 or 8 */
  int copy;           /* a or b is 1: only axes of size 1 move, the bytes stay (a copy) */
} transpose_geom;

static const struct {
  uint32_t isa;
  q8rt_x8_transpose_ukernel_fn fn;
  const char *name;
} g_transpose[] = {
#define Q8RT_X8_TRANSPOSE_UKERNEL(isa, fn) {isa, fn, #fn},
#include "x8-transpose/x8-transpose.inc"
#undef Q8RT_X8_TRANSPOSE_UKERNEL
};

q8rt_x8_transpose_ukernel_fn op_x8_transpose_kernel(uint32_t isa, const char **name) {
  size_t i = OP_FIRST_USABLE(g_transpose, isa, Q8RT_BACKEND_AUTO);
  *name = g_transpose[i].name + 5; /* drop the "q8rt_" prefix */
  return g_transpose[i].fn;
}

void *op_layout_transpose_params(q8rt_pool *pool, int to_nhwc, uint32_t isa, const char **kernel) {
  transpose_params *p = q8rt_pool_alloc(pool, sizeof(*p), 16);
  if (p == NULL) return NULL;
  p->to_nhwc = to_nhwc;
  p->fn = op_x8_transpose_kernel(isa, kernel);
  return p;
}

static q8rt_status transpose_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out,
                                   int concrete, void *geom, q8rt_error *err) {
  const transpose_params *p = params;
  const op_shape *x = &in[0];
  if (!concrete && x->rank < 0) { /* known at bind (the output of an If whose branches differ at load) */
    *out = *x;
    return Q8RT_OK;
  }
  const size_t es = q8rt_dtype_size(x->dtype);
  if (x->rank < 3 || (es != 1 && es != 2 && es != 4 && es != 8)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                     "layout change '%s': needs a tensor of rank 3 or 4 with 1, 2, 4 or 8-byte elements", n->name);
  }
  *out = *x;
  const int r = x->rank;
  if (p->to_nhwc) { /* [N, C, S...] -> [N, S..., C] */
    for (int i = 1; i < r - 1; i++) out->dims[i] = x->dims[i + 1];
    out->dims[r - 1] = x->dims[1];
  } else { /* [N, S..., C] -> [N, C, S...] */
    out->dims[1] = x->dims[r - 1];
    for (int i = 2; i < r; i++) out->dims[i] = x->dims[i - 1];
  }
  if (concrete) {
    transpose_geom *g = geom;
    size_t spatial = 1;
    for (int i = 1; i < r - 1; i++) spatial *= (size_t)(p->to_nhwc ? x->dims[i + 1] : x->dims[i]);
    const size_t channels = (size_t)(p->to_nhwc ? x->dims[1] : x->dims[r - 1]);
    g->outer = (size_t)x->dims[0];
    g->a = p->to_nhwc ? channels : spatial;
    g->b = p->to_nhwc ? spatial : channels;
    g->esize = es;
    g->copy = g->a == 1 || g->b == 1;
  }
  return Q8RT_OK;
}

typedef struct transpose_job {
  const transpose_params *p;
  const transpose_geom *g;
  const uint8_t *x;
  uint8_t *y;
  size_t blocks; /* blocks of TR_BLOCK per image, along the longer of a and b */
  int by_rows;   /* split a (rows of x) rather than b (its columns) */
} transpose_job;

#define TR_BLOCK 256 /* rows or columns of x per work item: a multiple of the 16x16 blocks */

/* Rows [r0, r0 + h) and columns [c0, c0 + w) of one [a][b] image of `es`-byte elements. */
static void transpose_wide(const transpose_geom *g, const uint8_t *x, uint8_t *y, size_t r0, size_t h, size_t c0,
                           size_t w) {
  const size_t es = g->esize;
  for (size_t r = r0; r < r0 + h; r++) {
    for (size_t c = c0; c < c0 + w; c++) memcpy(y + (c * g->a + r) * es, x + (r * g->b + c) * es, es);
  }
}

static void transpose_item(void *arg, size_t item) {
  const transpose_job *j = arg;
  const transpose_geom *g = j->g;
  const size_t o = item / j->blocks, k0 = item % j->blocks * TR_BLOCK;
  const size_t img = o * g->a * g->b;
  if (g->esize != 1) {
    const uint8_t *x = j->x + img * g->esize;
    uint8_t *y = j->y + img * g->esize;
    if (j->by_rows) {
      transpose_wide(g, x, y, k0, g->a - k0 < TR_BLOCK ? g->a - k0 : TR_BLOCK, 0, g->b);
    } else {
      transpose_wide(g, x, y, 0, g->a, k0, g->b - k0 < TR_BLOCK ? g->b - k0 : TR_BLOCK);
    }
    return;
  }
  if (j->by_rows) {
    const size_t h = g->a - k0 < TR_BLOCK ? g->a - k0 : TR_BLOCK;
    j->p->fn(h, g->b, j->x + img + k0 * g->b, g->b, j->y + img + k0, g->a);
  } else {
    const size_t w = g->b - k0 < TR_BLOCK ? g->b - k0 : TR_BLOCK;
    j->p->fn(g->a, w, j->x + img + k0, g->b, j->y + img + k0 * g->a, g->a);
  }
}

static void transpose_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                          const op_exec_ctx *ctx) {
  (void)workspace;
  const transpose_geom *g = geom;
  if (g->a == 0 || g->b == 0) return;
  if (g->copy) {
    memcpy(out[0].data, in[0].data, g->outer * g->a * g->b * g->esize);
    return;
  }
  const int by_rows = g->a > g->b;
  const size_t along = by_rows ? g->a : g->b, across = by_rows ? g->b : g->a;
  transpose_job j = {params, g, in[0].data, out[0].data, (along + TR_BLOCK - 1) / TR_BLOCK, by_rows};
  op_parallel_items(ctx, g->outer * j.blocks, across * TR_BLOCK, 32768, transpose_item, &j);
}

const op_def q8rt_op_layout_transpose = {
    .op_type = "LayoutTranspose",
    .domain = "q8rt",
    .min_opset = 1,
    .infer = transpose_infer,
    .run = transpose_run,
};
