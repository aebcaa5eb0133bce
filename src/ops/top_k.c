/* TopK (float32 and the integer types): the k largest (or smallest) along `axis`, values and int64
 * indices. K is a constant, or a value known when shapes are bound (opset 10+ input; the `k`
 * attribute before 10).
 *
 * Order, as ONNX Runtime: by value, ties by the smaller index first; since that order is total
 * (over non-NaN values), any selection algorithm gives the same result. Per row a heap of the k
 * best so far (the worst of them at the root) takes each element in O(log k), then is sorted in
 * place; keys and indices live in the step's workspace (no allocation at run time). sorted = 0
 * returns the same sorted order (ONNX leaves it unspecified). NaN: not ordered like ORT. */
#include <string.h>

#include "data_common.h"

typedef struct topk_params {
  int64_t axis;
  int largest;
  int64_t k_attr; /* opset < 10; -1 otherwise */
} topk_params;

typedef struct topk_geom {
  size_t outer, n, inner, k;
  q8rt_dtype dtype;
} topk_geom;

static q8rt_status topk_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  const int k_input = n->opset >= 10;
  if ((st = data_check_arity(n, k_input ? 2 : 1, k_input ? 2 : 1, 2, 2, err)) != Q8RT_OK) return st;
  if (k_input && n->inputs[1] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "TopK node '%s': input 1 (K) is missing", n->name);
  }
  topk_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  int64_t v;
  if ((st = ir_attr_int(n, "axis", -1, &p->axis, err)) != Q8RT_OK) return st;
  if ((st = ir_attr_int(n, "largest", 1, &v, err)) != Q8RT_OK) return st;
  p->largest = v != 0;
  p->k_attr = -1;
  if (!k_input) {
    if (ir_node_attr(n, "k") == NULL) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "TopK node '%s': attribute 'k' is missing", n->name);
    }
    if ((st = ir_attr_int(n, "k", 0, &p->k_attr, err)) != Q8RT_OK) return st;
  }
  ctx->kernel = "top_k__scalar";
  ctx->reason = p->largest ? "heap selection, largest, ties by index" : "heap selection, smallest, ties by index";
  *out = p;
  return Q8RT_OK;
}

static q8rt_status topk_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  const topk_params *p = params;
  const op_shape *x = &in[0];
  const q8rt_dtype t = x->dtype;
  if (t != Q8RT_DTYPE_FLOAT32 && t != Q8RT_DTYPE_INT64 && t != Q8RT_DTYPE_INT32 && t != Q8RT_DTYPE_INT16 &&
      t != Q8RT_DTYPE_UINT16 && t != Q8RT_DTYPE_INT8 && t != Q8RT_DTYPE_UINT8) {
    return q8rt_fail(err, t == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                     "TopK node '%s': input X is %s (q8rt supports float32 and integers)", n->name,
                     q8rt_onnx_type_name(t));
  }
  out[0].dtype = t;
  out[1].dtype = Q8RT_DTYPE_INT64;
  out[0].rank = out[1].rank = x->rank;
  if (x->rank < 0) return Q8RT_OK;
  int64_t axis;
  if (!op_normalize_axis(p->axis, x->rank, &axis)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "TopK node '%s': axis %lld is out of range for rank %d", n->name,
                     (long long)p->axis, x->rank);
  }
  int64_t k = p->k_attr;
  if (k < 0 || n->opset >= 10) {
    const op_shape *ks = &in[1];
    if (ks->dtype != Q8RT_DTYPE_UNDEFINED && ks->dtype != Q8RT_DTYPE_INT64) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "TopK node '%s': input 1 (K) is %s, expected int64", n->name,
                       q8rt_onnx_type_name(ks->dtype));
    }
    if (ks->rank > 1 || (ks->rank == 1 && ks->dims[0] >= 0 && ks->dims[0] != 1)) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "TopK node '%s': input 1 (K) must hold one value", n->name);
    }
    if (ks->value == NULL) {
      if (concrete) {
        return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                         "TopK node '%s': input 1 (K) is computed at run time: not supported (q8rt needs its value "
                         "when shapes are bound)",
                         n->name);
      }
      k = -1;
    } else {
      memcpy(&k, ks->value, sizeof(k));
    }
  }
  for (int d = 0; d < x->rank; d++) out[0].dims[d] = out[1].dims[d] = x->dims[d];
  out[0].dims[axis] = out[1].dims[axis] = -1;
  if (k == -1 && !concrete) return Q8RT_OK;
  if (k < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "TopK node '%s': k is %lld (must be >= 0)", n->name, (long long)k);
  }
  if (x->dims[axis] >= 0 && k > x->dims[axis]) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "TopK node '%s': k = %lld is larger than axis %lld of size %lld", n->name,
                     (long long)k, (long long)axis, (long long)x->dims[axis]);
  }
  out[0].dims[axis] = out[1].dims[axis] = k;
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(x->dims, x->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "TopK node '%s': input is too large", n->name);
  }
  topk_geom *gm = geom;
  gm->outer = gm->inner = 1;
  for (int d = 0; d < axis; d++) gm->outer *= (size_t)x->dims[d];
  for (int d = (int)axis + 1; d < x->rank; d++) gm->inner *= (size_t)x->dims[d];
  gm->n = (size_t)x->dims[axis];
  gm->k = (size_t)k;
  gm->dtype = t;
  if (total == 0) gm->outer = 0;
  return Q8RT_OK;
}

/* keys: float32 rows as float, integer rows widened to int64 */
typedef struct topk_item {
  int64_t ikey;
  float fkey;
  uint32_t idx;
} topk_item;

static size_t topk_workspace(const void *params, const void *geom, size_t threads) {
  (void)params, (void)threads;
  const topk_geom *gm = geom;
  return gm->k * sizeof(topk_item);
}

/* a before b in the output order */
static inline int before(const topk_item *a, const topk_item *b, int is_float, int largest) {
  if (is_float) {
    if (a->fkey != b->fkey) return largest ? a->fkey > b->fkey : a->fkey < b->fkey;
  } else if (a->ikey != b->ikey) {
    return largest ? a->ikey > b->ikey : a->ikey < b->ikey;
  }
  return a->idx < b->idx;
}

/* heap with the last-in-order element at the root */
static void sift_down(topk_item *h, size_t n, size_t i, int is_float, int largest) {
  for (;;) {
    size_t w = i, l = 2 * i + 1, r = l + 1;
    if (l < n && before(&h[w], &h[l], is_float, largest)) w = l;
    if (r < n && before(&h[w], &h[r], is_float, largest)) w = r;
    if (w == i) return;
    const topk_item t = h[i];
    h[i] = h[w];
    h[w] = t;
    i = w;
  }
}

static void topk_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  (void)ctx;
  const topk_params *p = params;
  const topk_geom *gm = geom;
  const size_t k = gm->k, n = gm->n, inner = gm->inner;
  if (k == 0) return;
  const int is_float = gm->dtype == Q8RT_DTYPE_FLOAT32;
  const size_t es = q8rt_dtype_size(gm->dtype);
  topk_item *heap = workspace;
  const char *x = in[0].data;
  char *yv = out[0].data;
  int64_t *yi = out[1].data;
  for (size_t o = 0; o < gm->outer; o++) {
    for (size_t j = 0; j < inner; j++) {
      size_t size = 0;
      for (size_t i = 0; i < n; i++) {
        topk_item it;
        it.idx = (uint32_t)i;
        it.fkey = 0.0f;
        it.ikey = 0;
        const void *src = x + ((o * n + i) * inner + j) * es;
        if (is_float) {
          memcpy(&it.fkey, src, 4);
        } else {
          it.ikey = op_load_i64(src, gm->dtype, 0);
        }
        if (size < k) {
          /* sift up */
          size_t c = size++;
          heap[c] = it;
          while (c > 0 && before(&heap[(c - 1) / 2], &heap[c], is_float, p->largest)) {
            const topk_item t = heap[c];
            heap[c] = heap[(c - 1) / 2];
            heap[(c - 1) / 2] = t;
            c = (c - 1) / 2;
          }
        } else if (before(&it, &heap[0], is_float, p->largest)) {
          heap[0] = it;
          sift_down(heap, k, 0, is_float, p->largest);
        }
      }
      /* heapsort: the root (last in order) goes to the end */
      for (size_t m = k; m > 1; m--) {
        const topk_item t = heap[0];
        heap[0] = heap[m - 1];
        heap[m - 1] = t;
        sift_down(heap, m - 1, 0, is_float, p->largest);
      }
      for (size_t r = 0; r < k; r++) {
        const size_t dst = (o * k + r) * inner + j;
        memcpy(yv + dst * es, x + ((o * n + heap[r].idx) * inner + j) * es, es);
        yi[dst] = heap[r].idx;
      }
    }
  }
}

const op_def q8rt_op_top_k = {.op_type = "TopK",
                              .domain = "",
                              .min_opset = 1,
                              .prepare = topk_prepare,
                              .infer = topk_infer,
                              .workspace = topk_workspace,
                              .run = topk_run};
