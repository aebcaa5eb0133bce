/* Where (bool condition; X and Y of any one element type), broadcasting all three. A nonzero
 * condition byte picks X. */
#include <string.h>

#include "op.h"
#include "op_util.h"

typedef struct where_geom {
  op_bcast_geom g;
  size_t elem;
} where_geom;

_Static_assert(sizeof(where_geom) <= Q8RT_GEOM_BYTES, "where_geom too large");

static q8rt_status where_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  if (n->n_inputs != 3 || n->n_outputs != 1 || n->outputs[0] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Where node '%s': expects 3 inputs and 1 output (has %d and %d)",
                     n->name, n->n_inputs, n->n_outputs);
  }
  for (int i = 0; i < 3; i++) {
    if (n->inputs[i] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "Where node '%s': input %d is missing", n->name, i);
    }
  }
  ctx->kernel = "where__scalar";
  ctx->reason = "broadcasting";
  *out = NULL;
  return Q8RT_OK;
}

static q8rt_status where_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                               void *geom, q8rt_error *err) {
  (void)params;
  if (in[0].dtype != Q8RT_DTYPE_BOOL) {
    return q8rt_fail(err, in[0].dtype == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_INVALID_MODEL,
                     "Where node '%s': input 0 (condition) is %s, expected bool", n->name,
                     q8rt_onnx_type_name(in[0].dtype));
  }
  const q8rt_dtype t = in[1].dtype;
  if (q8rt_dtype_size(t) == 0 || in[2].dtype != t) {
    return q8rt_fail(
        err, q8rt_dtype_size(t) == 0 && t != Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_UNSUPPORTED : Q8RT_ERROR_INVALID_MODEL,
        "Where node '%s': X is %s and Y is %s (one supported type expected)", n->name, q8rt_onnx_type_name(t),
        q8rt_onnx_type_name(in[2].dtype));
  }
  const op_shape *shapes[3] = {&in[0], &in[1], &in[2]};
  memset(out, 0, sizeof(*out));
  q8rt_status st = op_broadcast_shapes(n, shapes, 3, out, err);
  if (st != Q8RT_OK) return st;
  out->dtype = t;
  if (!concrete || out->rank < 0 || geom == NULL) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(out->dims, out->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Where node '%s': output is too large", n->name);
  }
  where_geom *gm = geom;
  op_bcast_geom_init(&gm->g, shapes, 3, out);
  gm->elem = q8rt_dtype_size(t);
  return Q8RT_OK;
}

/* The contiguous row as a bit blend under the condition's mask (c != 0 -> all ones), in blocks
 * of 16 through a local array: GCC's -O2 vectorizer then emits packed code. */
#define WHERE_ROW(NAME, T)                                                                           \
  static void NAME(const void *ctx, size_t n, const void *const *src, const size_t *st, void *dst) { \
    (void)ctx;                                                                                       \
    const uint8_t *c = src[0];                                                                       \
    const T *x = src[1], *w = src[2];                                                                \
    T *y = dst;                                                                                      \
    size_t i = 0;                                                                                    \
    if (st[0] == 1 && st[1] == 1 && st[2] == 1) {                                                    \
      for (; i + 16 <= n; i += 16) {                                                                 \
        T t[16];                                                                                     \
        for (size_t j = 0; j < 16; j++) {                                                            \
          const T m = (T)(0u - (T)(c[i + j] != 0));                                                  \
          t[j] = (T)((x[i + j] & m) | (w[i + j] & (T)~m));                                           \
        }                                                                                            \
        memcpy(y + i, t, sizeof(t));                                                                 \
      }                                                                                              \
      for (; i < n; i++) y[i] = c[i] ? x[i] : w[i];                                                  \
    } else {                                                                                         \
      for (; i < n; i++) y[i] = c[i * st[0]] ? x[i * st[1]] : w[i * st[2]];                          \
    }                                                                                                \
  }

WHERE_ROW(where_1, uint8_t)
WHERE_ROW(where_2, uint16_t)
WHERE_ROW(where_4, uint32_t)
WHERE_ROW(where_8, uint64_t)

static void where_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx) {
  (void)params, (void)workspace, (void)ctx;
  const where_geom *gm = geom;
  const void *src[3] = {in[0].data, in[1].data, in[2].data};
  const size_t es[3] = {1, gm->elem, gm->elem};
  op_bcast_row_fn f = gm->elem == 1 ? where_1 : gm->elem == 2 ? where_2 : gm->elem == 4 ? where_4 : where_8;
  op_bcast_run(&gm->g, f, NULL, src, es, out[0].data, gm->elem);
}

const op_def q8rt_op_where = {
    .op_type = "Where", .domain = "", .min_opset = 9, .prepare = where_prepare, .infer = where_infer, .run = where_run};
