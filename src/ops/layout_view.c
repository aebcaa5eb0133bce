/* The planner's view step: a node that only moves bytes as they are (Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity, Transpose) or only reads shapes (Shape, Size), run on an input that exists
 * channels-last only. The planner tracks each value's physical axis order as a permutation of its
 * logical (ONNX) axes; a byte-moving node whose output, in an order the planner keeps (its
 * logical order or channels-last), holds the same bytes as its input is a plain copy and needs no
 * layout change before it.
 *
 * - Transpose: input physical order P, perm T; the output's bytes in physical order T^-1 o P
 *   are the input's. The planner makes a view when that order is canonical, or equals one once
 *   the axes of size 1 are left out (checked again at bind). Otherwise, on a channels-last
 *   input, the step is one strided copy from the input's physical order to the output's logical
 *   one (instead of a layout change and then the transpose).
 * - Reshape family: decided from the dims, at load when they are known, else at bind. When the
 *   bound shapes break it (a reshape mixing the channel axis into others), the step gathers the
 *   elements through both orders instead: the same bytes. When the input's and output's dims
 *   have a common refinement (every boundary of one mixed radix divides the next of the other,
 *   as [1,64,2100] -> [1,4,16,2100] has), that gather is one strided copy over the refined axes
 *   (a 2-D transpose where the orders swap two blocks: x8/x32-transpose); else element by
 *   element.
 * - Shape, Size: the inner op sees the input's logical shape.
 *
 * Not an ONNX op: the step wraps the node's own op, which does the checks and shape inference on
 * logical shapes. */
#include <string.h>

#include "data_common.h"

typedef struct view_params {
  const op_def *inner;
  const void *inner_params;
  int in_cl;     /* input 0 is stored channels-last (else in its logical order) */
  int out_cl;    /* output 0 is written channels-last (else in its logical order) */
  int transpose; /* the inner op is Transpose: output logical axis j is input logical axis tperm[j] */
  unsigned char tperm[Q8RT_MAX_RANK];
} view_params;

enum { VIEW_COPY = 0, VIEW_GATHER = 1, VIEW_STRIDED = 2 };

typedef struct view_geom {
  int mode;
  int rin, rout; /* logical ranks of input 0 and output 0 */
  size_t nbytes, elem, count;
  int64_t ind[Q8RT_MAX_RANK], outd[Q8RT_MAX_RANK]; /* logical dims */
  unsigned char pin[Q8RT_MAX_RANK], qout[Q8RT_MAX_RANK], tperm[Q8RT_MAX_RANK];
  int transpose;
  int grank;    /* VIEW_STRIDED: the strided copy's rank over gdims / gstrides */
  op_shape lin; /* input 0's logical shape (a shape-only inner op reads it at run) */
  int64_t gdims[Q8RT_MAX_RANK], gstrides[Q8RT_MAX_RANK]; /* a transpose's gather: output physical dims, input strides */
  _Alignas(16) unsigned char inner[80];
} view_geom;

_Static_assert(sizeof(view_geom) <= Q8RT_GEOM_BYTES, "view geometry must fit a step's geom record");

#define VIEW_MAX_INPUTS 4

void op_perm_channels_last(int rank, unsigned char *p) {
  for (int i = 0; i < rank; i++) p[i] = (unsigned char)i;
  if (rank < 3) return;
  for (int i = 1; i < rank - 1; i++) p[i] = (unsigned char)(i + 1);
  p[rank - 1] = 1;
}

/* Physical dims of a tensor with logical dims `d` stored in order p (physical axis i holds
 * logical axis p[i]), and back. */
static void perm_dims(const int64_t *logical, int rank, const unsigned char *p, int64_t *phys) {
  for (int i = 0; i < rank; i++) phys[i] = logical[p[i]];
}
static void unperm_dims(const int64_t *phys, int rank, const unsigned char *p, int64_t *logical) {
  for (int i = 0; i < rank; i++) logical[p[i]] = phys[i];
}

/* The non-1 axes of a tensor in its physical order, as a sequence of groups: each group's axes
 * must appear together and in their logical order. Returns the number of groups in `seq`, -1 when
 * the order splits or reorders a group. `next[a]`: the non-1 logical axis after a (-1: none);
 * `first[g]`: the first logical axis of group g. */
static int group_sequence(const int64_t *dims, int rank, const unsigned char *p, const int *gid, const int *next,
                          const int *first, int *seq) {
  int ns = 0, prev = -1;
  for (int i = 0; i < rank; i++) {
    const int a = p[i];
    if (dims[a] == 1) continue;
    if (prev >= 0 && gid[prev] == gid[a]) {
      if (next[prev] != a) return -1;
    } else {
      if (first[gid[a]] != a) return -1;
      for (int k = 0; k < ns; k++) {
        if (seq[k] == gid[a]) return -1;
      }
      seq[ns++] = gid[a];
    }
    prev = a;
  }
  return ns;
}

int op_perm_reshape_view(const int64_t *in_dims, int in_rank, const unsigned char *pin, const int64_t *out_dims,
                         int out_rank, const unsigned char *qout) {
  if (in_rank < 0 || out_rank < 0 || in_rank > Q8RT_MAX_RANK || out_rank > Q8RT_MAX_RANK) return -1;
  int empty = 0;
  for (int i = 0; i < in_rank; i++) {
    if (in_dims[i] < 0) return -1;
    empty |= in_dims[i] == 0;
  }
  for (int i = 0; i < out_rank; i++) {
    if (out_dims[i] < 0) return -1;
    empty |= out_dims[i] == 0;
  }
  if (empty) return 1; /* no bytes */
  /* group consecutive non-1 logical axes of input and output with equal products */
  int gin[Q8RT_MAX_RANK], gout[Q8RT_MAX_RANK], nin[Q8RT_MAX_RANK], nout[Q8RT_MAX_RANK];
  int fin[Q8RT_MAX_RANK], fout[Q8RT_MAX_RANK];
  int ia[Q8RT_MAX_RANK], oa[Q8RT_MAX_RANK], na = 0, nb = 0;
  for (int i = 0; i < in_rank; i++) {
    gin[i] = -1;
    nin[i] = -1;
    if (in_dims[i] != 1) ia[na++] = i;
  }
  for (int i = 0; i < out_rank; i++) {
    gout[i] = -1;
    nout[i] = -1;
    if (out_dims[i] != 1) oa[nb++] = i;
  }
  for (int i = 0; i + 1 < na; i++) nin[ia[i]] = ia[i + 1];
  for (int i = 0; i + 1 < nb; i++) nout[oa[i]] = oa[i + 1];
  int i = 0, j = 0, groups = 0;
  while (i < na || j < nb) {
    if (i >= na || j >= nb) return 0;
    /* products of a prefix of one tensor's dims never exceed its element count: no overflow */
    int64_t pa = in_dims[ia[i]], pb = out_dims[oa[j]];
    fin[groups] = ia[i];
    fout[groups] = oa[j];
    gin[ia[i++]] = groups;
    gout[oa[j++]] = groups;
    while (pa != pb) {
      if (pa < pb) {
        if (i >= na || pa > INT64_MAX / in_dims[ia[i]]) return 0;
        pa *= in_dims[ia[i]];
        gin[ia[i++]] = groups;
      } else {
        if (j >= nb || pb > INT64_MAX / out_dims[oa[j]]) return 0;
        pb *= out_dims[oa[j]];
        gout[oa[j++]] = groups;
      }
    }
    groups++;
  }
  int sa[Q8RT_MAX_RANK], sb[Q8RT_MAX_RANK];
  const int la = group_sequence(in_dims, in_rank, pin, gin, nin, fin, sa);
  const int lb = group_sequence(out_dims, out_rank, qout, gout, nout, fout, sb);
  if (la < 0 || lb < 0 || la != lb) return 0;
  for (int k = 0; k < la; k++) {
    if (sa[k] != sb[k]) return 0;
  }
  return 1;
}

int op_perm_keeps_bytes(const int64_t *dims, int rank, const unsigned char *p) {
  if (rank < 0 || rank > Q8RT_MAX_RANK) return -1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] == 0) return 1; /* no bytes */
  }
  int res = 1;
  for (int i = 0; i < rank; i++) {
    for (int j = i + 1; j < rank; j++) {
      const int64_t a = dims[p[i]], b = dims[p[j]];
      if (p[i] < p[j] || a == 1 || b == 1) continue;
      if (a > 1 && b > 1) return 0;
      res = -1;
    }
  }
  return res;
}

void *op_layout_view_params(q8rt_pool *pool, const op_def *inner, const void *inner_params, int in_cl, int out_cl,
                            const unsigned char *tperm, int trank) {
  view_params *p = q8rt_pool_alloc(pool, sizeof(*p), 16);
  if (p == NULL) return NULL;
  p->inner = inner;
  p->inner_params = inner_params;
  p->in_cl = in_cl;
  p->out_cl = out_cl;
  p->transpose = tperm != NULL;
  memset(p->tperm, 0, sizeof(p->tperm));
  if (tperm != NULL) {
    if (trank < 1 || trank > Q8RT_MAX_RANK) return NULL;
    memcpy(p->tperm, tperm, (size_t)trank);
  }
  return p;
}

/* Strides (by logical axis) of a dense tensor of logical dims `dims` stored in order p. */
static void perm_strides(const int64_t *dims, int rank, const unsigned char *p, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[p[i]] = s;
    s *= dims[p[i]];
  }
}

/* The stride of the refined axis whose flat-index step is `step`, inside the logical axis of
 * `dims` that holds it, that axis's own stride given. */
static int64_t refined_stride(const int64_t *dims, int rank, const int64_t *strides, int64_t step) {
  int64_t low = 1;
  for (int a = rank - 1; a >= 0; a--) {
    if (dims[a] > 1 && step < low * dims[a]) return strides[a] * (step / low);
    low *= dims[a];
  }
  return 0; /* not reached for a step below the element count */
}

/* A reshape's gather as one strided copy (g->gdims, g->gstrides, g->grank): the flat index space
 * cut at every boundary (suffix product) of the input's and of the output's logical dims; when
 * each boundary divides the next, every refined axis lies inside one input axis and one output
 * axis, so both orders are permutations of the refined axes. 0 when the dims have no common
 * refinement, or it needs more than Q8RT_MAX_RANK axes once merged. */
static int reshape_strided(view_geom *g) {
  int64_t u[2 * Q8RT_MAX_RANK + 2];
  int nu = 0;
  int64_t p = 1;
  u[nu++] = 1;
  for (int i = g->rin - 1; i >= 0; i--) u[nu++] = (p *= g->ind[i]);
  p = 1;
  for (int i = g->rout - 1; i >= 0; i--) u[nu++] = (p *= g->outd[i]);
  for (int i = 1; i < nu; i++) { /* sort (insertion: at most 18 entries) */
    const int64_t v = u[i];
    int j = i;
    for (; j > 0 && u[j - 1] > v; j--) u[j] = u[j - 1];
    u[j] = v;
  }
  int m = 0;
  for (int i = 0; i < nu; i++) {
    if (m == 0 || u[i] != u[m - 1]) u[m++] = u[i];
  }
  for (int t = 0; t + 1 < m; t++) {
    if (u[t + 1] % u[t] != 0) return 0;
  }
  int64_t is[Q8RT_MAX_RANK], os[Q8RT_MAX_RANK];
  perm_strides(g->ind, g->rin, g->pin, is);
  perm_strides(g->outd, g->rout, g->qout, os);
  /* refined axis t: size u[t+1] / u[t], flat step u[t]; ordered by its output stride */
  int64_t rd[2 * Q8RT_MAX_RANK + 2], ris[2 * Q8RT_MAX_RANK + 2], ros[2 * Q8RT_MAX_RANK + 2];
  const int nr = m - 1;
  for (int t = 0; t < nr; t++) {
    rd[t] = u[t + 1] / u[t];
    ris[t] = refined_stride(g->ind, g->rin, is, u[t]);
    ros[t] = refined_stride(g->outd, g->rout, os, u[t]);
  }
  for (int i = 1; i < nr; i++) { /* descending output stride: the output's physical order */
    const int64_t d = rd[i], a = ris[i], b = ros[i];
    int j = i;
    for (; j > 0 && ros[j - 1] < b; j--) rd[j] = rd[j - 1], ris[j] = ris[j - 1], ros[j] = ros[j - 1];
    rd[j] = d, ris[j] = a, ros[j] = b;
  }
  int r = 0;
  for (int t = 0; t < nr; t++) {
    if (r > 0 && g->gstrides[r - 1] == ris[t] * rd[t]) {
      g->gdims[r - 1] *= rd[t];
      g->gstrides[r - 1] = ris[t];
      continue;
    }
    if (r == Q8RT_MAX_RANK) return 0;
    g->gdims[r] = rd[t];
    g->gstrides[r] = ris[t];
    r++;
  }
  g->grank = r;
  return 1;
}

static q8rt_status view_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  const view_params *p = params;
  if (n->n_inputs < 1 || n->n_inputs > VIEW_MAX_INPUTS || n->n_outputs != 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': unexpected inputs or outputs for a view", n->op_type,
                     n->name);
  }
  op_shape lin[VIEW_MAX_INPUTS];
  for (int k = 0; k < n->n_inputs; k++) lin[k] = in[k];
  const int rin = in[0].rank;
  if (rin > Q8RT_MAX_RANK) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input rank %d", n->op_type, n->name, rin);
  }
  unsigned char pin[Q8RT_MAX_RANK], qout[Q8RT_MAX_RANK];
  if (rin >= 0) {
    op_perm_channels_last(p->in_cl ? rin : 0, pin);
    for (int i = p->in_cl ? rin : 0; i < rin; i++) pin[i] = (unsigned char)i;
    unperm_dims(in[0].dims, rin, pin, lin[0].dims);
  }
  op_shape lout;
  memset(&lout, 0, sizeof(lout));
  view_geom *g = geom;
  _Alignas(16) unsigned char scratch[Q8RT_GEOM_BYTES];
  void *ig = NULL;
  if (concrete && g != NULL) ig = p->inner->shape_only ? (void *)g->inner : (void *)scratch;
  if (p->inner->shape_only && concrete && g != NULL) memset(g->inner, 0, sizeof(g->inner));
  q8rt_status st = p->inner->infer(p->inner_params, n, lin, &lout, concrete, ig, err);
  if (st != Q8RT_OK) return st;
  *out = lout;
  const int rout = lout.rank;
  if (rout > Q8RT_MAX_RANK) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': output rank %d", n->op_type, n->name, rout);
  }
  if (rout >= 0) {
    if (p->out_cl) {
      op_perm_channels_last(rout, qout);
    } else {
      for (int i = 0; i < rout; i++) qout[i] = (unsigned char)i;
    }
    perm_dims(lout.dims, rout, qout, out->dims);
  }
  if (!concrete || g == NULL) return Q8RT_OK;
  if (rin < 0 || rout < 0) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': rank unknown at bind", n->op_type, n->name);
  }
  g->lin = lin[0];
  g->lin.value = NULL;
  g->rin = rin;
  g->rout = rout;
  memcpy(g->ind, lin[0].dims, sizeof(g->ind));
  memcpy(g->outd, lout.dims, sizeof(g->outd));
  memcpy(g->pin, pin, sizeof(pin));
  memcpy(g->qout, qout, sizeof(qout));
  g->mode = VIEW_COPY;
  if (p->inner->shape_only) return Q8RT_OK;
  int64_t count;
  if ((st = data_count(n, &lin[0], &count, err)) != Q8RT_OK) return st;
  g->elem = q8rt_dtype_size(lin[0].dtype);
  g->count = (size_t)count;
  if (g->count > SIZE_MAX / (g->elem > 0 ? g->elem : 1)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input too large", n->op_type, n->name);
  }
  g->nbytes = g->count * g->elem;
  g->transpose = p->transpose;
  if (p->transpose) {
    /* the input's physical order in the output's logical axes: perm^-1 o pin */
    unsigned char inv[Q8RT_MAX_RANK] = {0}, qeff[Q8RT_MAX_RANK] = {0};
    if (rin != rout) return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Transpose node '%s': rank changed", n->name);
    for (int j = 0; j < rout; j++) inv[p->tperm[j]] = (unsigned char)j;
    for (int i = 0; i < rin; i++) qeff[i] = inv[pin[i]];
    if (op_perm_reshape_view(lout.dims, rout, qeff, lout.dims, rout, qout) != 1) g->mode = VIEW_GATHER;
    memcpy(g->tperm, p->tperm, sizeof(g->tperm));
    /* one strided pass from the input's physical order to the output's */
    int64_t istride[Q8RT_MAX_RANK], s = 1;
    for (int i = rin - 1; i >= 0; i--) {
      istride[pin[i]] = s;
      s *= lin[0].dims[pin[i]];
    }
    for (int i = 0; i < rout; i++) {
      g->gdims[i] = lout.dims[qout[i]];
      g->gstrides[i] = istride[p->tperm[qout[i]]];
    }
  } else if (op_perm_reshape_view(lin[0].dims, rin, pin, lout.dims, rout, qout) != 1) {
    g->mode = g->count > 0 && reshape_strided(g) ? VIEW_STRIDED : VIEW_GATHER;
  }
  return Q8RT_OK;
}

/* The shapes broke the view: element j of the output (physical order) is the input element at
 * the same logical position: the same flat index (a reshape) or the permuted coordinates. */
static void view_gather(const view_geom *g, const char *x, char *y) {
  if (g->transpose) {
    data_strided_copy(x, y, g->elem, g->rout, g->gdims, g->gstrides, 0);
    return;
  }
  int64_t istride[Q8RT_MAX_RANK]; /* input physical strides, by logical axis */
  int64_t s = 1;
  for (int i = g->rin - 1; i >= 0; i--) {
    istride[g->pin[i]] = s;
    s *= g->ind[g->pin[i]];
  }
  int64_t ophys[Q8RT_MAX_RANK];
  perm_dims(g->outd, g->rout, g->qout, ophys);
  for (size_t j = 0; j < g->count; j++) {
    int64_t co[Q8RT_MAX_RANK];
    size_t r = j;
    for (int i = g->rout - 1; i >= 0; i--) {
      co[g->qout[i]] = (int64_t)(r % (size_t)ophys[i]);
      r /= (size_t)ophys[i];
    }
    int64_t off = 0, flat = 0;
    for (int k = 0; k < g->rout; k++) flat = flat * g->outd[k] + co[k];
    for (int k = g->rin - 1; k >= 0; k--) {
      off += flat % g->ind[k] * istride[k];
      flat /= g->ind[k];
    }
    memcpy(y + j * g->elem, x + (size_t)off * g->elem, g->elem);
  }
}

static void view_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  const view_params *p = params;
  const view_geom *g = geom;
  if (p->inner->shape_only) {
    op_tensor lin[VIEW_MAX_INPUTS];
    lin[0].data = in[0].data;
    lin[0].shape = &g->lin;
    p->inner->run(p->inner_params, g->inner, lin, out, workspace, ctx);
    return;
  }
  if (g->mode == VIEW_STRIDED) {
    data_strided_copy(in[0].data, out[0].data, g->elem, g->grank, g->gdims, g->gstrides, 0);
  } else if (g->mode == VIEW_GATHER) {
    view_gather(g, in[0].data, out[0].data);
  } else if (out[0].data != in[0].data && g->nbytes > 0) {
    memcpy(out[0].data, in[0].data, g->nbytes);
  }
}

/* A plain copy (neither a gather nor a strided copy): output 0 holds input 0's bytes as they are. */
static int view_same_bytes(const void *params, const void *geom) {
  const view_params *p = params;
  const view_geom *g = geom;
  return !p->inner->shape_only && g->mode == VIEW_COPY;
}

const op_def q8rt_op_layout_view = {.op_type = "LayoutView",
                                    .domain = "q8rt",
                                    .min_opset = 1,
                                    .infer = view_infer,
                                    .run = view_run,
                                    .same_bytes_output = view_same_bytes};
const op_def q8rt_op_layout_view_shape = {
    .op_type = "LayoutView", .domain = "q8rt", .min_opset = 1, .shape_only = 1, .infer = view_infer, .run = view_run};
