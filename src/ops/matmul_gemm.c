/* MatMul (float32, numpy semantics: N-D batched with broadcasting of the batch dims, 1-D operands
 * promoted and their dim removed from the result) and Gemm (float32: alpha, beta, transA, transB,
 * optional C broadcast to [M, N]).
 *
 * Each output element is one float32 fused multiply-add chain over k in increasing order,
 * starting from 0 -- what ONNX Runtime's MLAS SGEMM kernels compute per element on FMA machines
 * for K up to their K block -- then Gemm's y = alpha * acc + beta * C (one rounding each). */
#include <math.h>
#include <string.h>

#include "op.h"
#include "op_util.h"
#include "q8rt-isa.h"
#include "f32-gemm/f32-gemm.h"
#include "q8rt-kernels.h"

#define MM_MAX_BATCH (Q8RT_MAX_RANK - 2)

typedef struct mm_geom {
  size_t M, N, K;
  int nb; /* batch rank */
  int64_t bdims[MM_MAX_BATCH];
  int64_t sa[MM_MAX_BATCH], sb[MM_MAX_BATCH]; /* batch strides in matrices (0: broadcast) */
  size_t batches;
  size_t b_mats; /* MatMul: B's own matrices (its batch dims' product; B may broadcast) */
  /* Gemm */
  int64_t sc_m, sc_n; /* C strides over [M, N] (0: broadcast) */
  int has_c;
} mm_geom;

_Static_assert(sizeof(mm_geom) <= Q8RT_GEOM_BYTES, "mm_geom too large");

typedef struct gemm_params {
  float alpha, beta;
  int trans_a, trans_b;
  q8rt_f32_vfmac_ukernel_fn fmac;
  /* A constant B (either orientation) packed at load for a register-tiled f32-gemm variant, used
   * when A is not transposed (NULL: the row kernel) */
  q8rt_f32_gemm_ukernel_fn gemm;
  const float *packed_b;
  size_t nr;
} gemm_params;

typedef struct matmul_params {
  q8rt_f32_vfmac_ukernel_fn fmac;
  /* A constant 2-D B, packed at load for a register-tiled f32-gemm variant (NULL: row kernel) */
  q8rt_f32_gemm_ukernel_fn gemm;
  const float *packed_b;
  size_t nr;
  /* B computed at run (attention's Q K^T and P V): the SIMD f32-gemm variant and its NR, B's
   * matrices packed into the workspace at run (mm_run_pack), or NULL: the row kernel */
  q8rt_f32_gemm_ukernel_fn rgemm;
  size_t rnr;
} matmul_params;

/* A computed B is packed at run for the tiled kernel when the rows and columns fill its tiles
 * somewhat (fewer rows: the row kernel streams B once anyway) and the packed copies stay within
 * MM_RUN_PACK_MAX floats. The same fma chain per output either way (k ascending from +0.0f). */
#define MM_RUN_PACK_MIN_M 4
#define MM_RUN_PACK_MIN_N 8
#define MM_RUN_PACK_MAX ((size_t)1 << 24)
static size_t mm_run_pack_floats(const matmul_params *p, const mm_geom *gm) {
  if (p->rgemm == NULL || gm->M < MM_RUN_PACK_MIN_M || gm->N < MM_RUN_PACK_MIN_N || gm->K < 1 || gm->b_mats < 1)
    return 0;
  const size_t per = q8rt_f32_gemm_packed_size(gm->K, gm->N, p->rnr);
  if (per > MM_RUN_PACK_MAX || gm->b_mats > MM_RUN_PACK_MAX / per) return 0;
  return per * gm->b_mats;
}

/* The row kernel for this CPU (op_f32_vfmac_pick; every variant gives the bits of fmaf). */
static q8rt_f32_vfmac_ukernel_fn pick_fmac(op_prepare_ctx *ctx) {
  const char *name = NULL;
  q8rt_f32_vfmac_ukernel_fn fn = op_f32_vfmac_pick(ctx, &name, NULL);
  ctx->kernel = name;
  return fn;
}

static void mm_kernel(q8rt_f32_vfmac_ukernel_fn fmac, size_t M, size_t N, size_t K, const float *a, size_t a_rs,
                      size_t a_cs, const float *b, size_t b_rs, size_t b_cs, float *c) {
  if (b_cs != 1 && b_rs == 1) {
    /* B transposed (Gemm transB = 1, as every exported Linear layer has it): the same fma chain
     * per element, k ascending from 0, as a dot product over B's contiguous rows instead of a
     * column walk with stride K (up to 50x faster on large B, same bits) */
    for (size_t i = 0; i < M; i++) {
      for (size_t j = 0; j < N; j++) {
        const float *br = b + j * b_cs;
        float acc = 0.0f;
        for (size_t k = 0; k < K; k++) acc = fmaf(a[i * a_rs + k * a_cs], br[k], acc);
        c[i * N + j] = acc;
      }
    }
    return;
  }
  for (size_t i = 0; i < M; i++) {
    float *cr = c + i * N;
    for (size_t j = 0; j < N; j++) cr[j] = 0.0f;
    for (size_t k = 0; k < K; k++) {
      const float av = a[i * a_rs + k * a_cs];
      const float *br = b + k * b_rs;
      if (b_cs == 1) {
        fmac(N, av, br, cr);
      } else {
        for (size_t j = 0; j < N; j++) cr[j] = fmaf(av, br[j * b_cs], cr[j]);
      }
    }
  }
}

static q8rt_status check_float(const op_node *n, const op_shape *s, const char *what, q8rt_error *err) {
  if (s->dtype != Q8RT_DTYPE_FLOAT32) {
    return q8rt_fail(err, s->dtype == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input %s is %s (q8rt supports float32)", n->op_type, n->name, what,
                     q8rt_onnx_type_name(s->dtype));
  }
  return Q8RT_OK;
}

/* ---- MatMul -------------------------------------------------------------------------------- */

static q8rt_status matmul_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  if (n->n_inputs != 2 || n->n_outputs != 1 || n->inputs[0] < 0 || n->inputs[1] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 2 inputs (A, B) and 1 output", n->op_type,
                     n->name);
  }
  matmul_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->fmac = pick_fmac(ctx);
  ctx->reason = "float32 (fma chain over k per output, as ONNX Runtime's SGEMM)";
  const ir_value *bv = ir_node_input(ctx->graph, n, 1);
  const ir_tensor *bt = bv != NULL ? bv->constant : NULL;
  const op_f32_gemm_variant *v = op_f32_gemm_pick(ctx);
  if (v != NULL && bt != NULL && bt->dtype == Q8RT_DTYPE_FLOAT32 && bt->rank == 2 && bt->count > 0) {
    const size_t K = (size_t)bt->dims[0], N = (size_t)bt->dims[1];
    float *packed = op_pack_find(ctx, bt->data, "f32-gemm-pack", K, N, v->nr);
    if (packed == NULL) {
      packed = q8rt_pool_alloc(ctx->pool, q8rt_f32_gemm_packed_size(K, N, v->nr) * sizeof(float), 64);
      if (packed == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory packing B");
      q8rt_f32_gemm_pack(K, N, v->nr, bt->data, N, packed);
      op_pack_keep(ctx, bt->data, "f32-gemm-pack", K, N, v->nr, packed);
    }
    p->gemm = v->fn;
    p->packed_b = packed;
    p->nr = v->nr;
    ctx->consumed |= 1u << 1;  /* the packed route never reads B (matmul_item) */
    ctx->kernel = v->name + 5; /* without "q8rt_" */
    ctx->reason = "float32, constant B packed at load, register-tiled (same fma chain over k per output)";
  } else if (v != NULL && v->isa != Q8RT_ISA_SCALAR) {
    p->rgemm = v->fn;
    p->rnr = v->nr;
    ctx->kernel = v->name + 5;
    ctx->reason =
        "float32, B computed at run: with at least 4 rows and 8 columns its matrices packed at run for the "
        "register-tiled f32 GEMM, else the f32-vfmac row kernel (the same fma chain over k per output either way)";
  }
  *out = p;
  return Q8RT_OK;
}

static q8rt_status matmul_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                                void *geom, q8rt_error *err) {
  (void)params;
  const op_shape *a = &in[0], *b = &in[1];
  q8rt_status st;
  if ((st = check_float(n, a, "A", err)) != Q8RT_OK) return st;
  if ((st = check_float(n, b, "B", err)) != Q8RT_OK) return st;
  memset(out, 0, sizeof(*out));
  out->dtype = Q8RT_DTYPE_FLOAT32;
  if (a->rank < 0 || b->rank < 0) {
    out->rank = -1;
    return Q8RT_OK;
  }
  if (a->rank == 0 || b->rank == 0) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input %s is a scalar (MatMul needs rank >= 1)", n->op_type,
                     n->name, a->rank == 0 ? "A" : "B");
  }
  /* promoted shapes */
  op_shape pa = *a, pb = *b;
  if (a->rank == 1) {
    pa.rank = 2;
    pa.dims[0] = 1;
    pa.dims[1] = a->dims[0];
  }
  if (b->rank == 1) {
    pb.rank = 2;
    pb.dims[0] = b->dims[0];
    pb.dims[1] = 1;
  }
  const int64_t M = pa.dims[pa.rank - 2], K = pa.dims[pa.rank - 1];
  const int64_t K2 = pb.dims[pb.rank - 2], N = pb.dims[pb.rank - 1];
  if (K >= 0 && K2 >= 0 && K != K2) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': inner dimensions differ (A has K=%lld, B has K=%lld)",
                     n->op_type, n->name, (long long)K, (long long)K2);
  }
  op_shape ba = {Q8RT_DTYPE_FLOAT32, pa.rank - 2, {0}, NULL}, bb = {Q8RT_DTYPE_FLOAT32, pb.rank - 2, {0}, NULL};
  memcpy(ba.dims, pa.dims, sizeof(int64_t) * (size_t)ba.rank);
  memcpy(bb.dims, pb.dims, sizeof(int64_t) * (size_t)bb.rank);
  const op_shape *bs[2] = {&ba, &bb};
  op_shape batch;
  if ((st = op_broadcast_shapes(n, bs, 2, &batch, err)) != Q8RT_OK) return st;
  if (batch.rank > MM_MAX_BATCH) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': too many batch dimensions", n->op_type, n->name);
  }
  int r = 0;
  for (int d = 0; d < batch.rank; d++) out->dims[r++] = batch.dims[d];
  if (a->rank > 1) out->dims[r++] = M;
  if (b->rank > 1) out->dims[r++] = N;
  out->rank = r;
  if (!concrete) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(out->dims, out->rank, &total) || !q8rt_shape_elements(a->dims, a->rank, &total) ||
      !q8rt_shape_elements(b->dims, b->rank, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': tensors are too large", n->op_type, n->name);
  }
  mm_geom *gm = geom;
  gm->M = (size_t)M;
  gm->N = (size_t)N;
  gm->K = (size_t)K;
  gm->nb = batch.rank;
  gm->batches = 1;
  gm->b_mats = 1;
  for (int d = 0; d < bb.rank; d++) gm->b_mats *= (size_t)bb.dims[d];
  int64_t sa[Q8RT_MAX_RANK], sb[Q8RT_MAX_RANK];
  op_broadcast_strides(&ba, &batch, sa);
  op_broadcast_strides(&bb, &batch, sb);
  for (int d = 0; d < batch.rank; d++) {
    gm->bdims[d] = batch.dims[d];
    gm->sa[d] = sa[d];
    gm->sb[d] = sb[d];
    gm->batches *= (size_t)batch.dims[d];
  }
  return Q8RT_OK;
}

typedef struct matmul_job {
  const matmul_params *p;
  const mm_geom *gm;
  const float *a, *b;
  float *c;
  q8rt_f32_gemm_ukernel_fn gemm; /* the tiled kernel (constant B packed at load, or B packed at run) */
  const float *packed;           /* B's matrices packed, each q8rt_f32_gemm_packed_size(K, N, nr) floats */
  float *ws;                     /* B packed at run: the workspace packed points to */
  size_t nr, per;
  size_t rblocks, cblocks; /* row and column blocks per batch */
  size_t rows, cols;       /* per block (cols: a multiple of the variant's NR) */
} matmul_job;

#define MM_ROWS 8 /* row kernel: rows per work item (at least) */

static void matmul_item(void *arg, size_t item) {
  const matmul_job *j = arg;
  const mm_geom *gm = j->gm;
  const size_t M = gm->M, N = gm->N, K = gm->K;
  const size_t cb = item % j->cblocks, rb = item / j->cblocks % j->rblocks, bi = item / j->cblocks / j->rblocks;
  const size_t r0 = rb * j->rows, r1 = r0 + j->rows < M ? r0 + j->rows : M;
  const size_t c0 = cb * j->cols, c1 = c0 + j->cols < N ? c0 + j->cols : N;
  if (r0 >= r1 || c0 >= c1) return;
  op_batch_iter it;
  op_batch_iter_init(&it, gm->nb, gm->bdims, gm->sa, gm->sb);
  op_batch_iter_seek(&it, bi); /* not stepped from 0: that was quadratic in the batch count */
  const float *a = j->a + it.oa * M * K + r0 * K;
  float *c = j->c + bi * M * N + r0 * N;
  if (j->gemm != NULL) {
    j->gemm(r1 - r0, c1 - c0, K, a, K, j->packed + it.ob * j->per + c0 * K, c + c0, N);
  } else {
    mm_kernel(j->p->fmac, r1 - r0, N, K, a, K, 1, j->b + it.ob * K * N, N, 1, c);
  }
}

/* B's matrix `item` packed for the tiled kernel (B packed at run). */
static void mm_pack_item(void *arg, size_t item) {
  const matmul_job *j = arg;
  const size_t K = j->gm->K, N = j->gm->N;
  q8rt_f32_gemm_pack(K, N, j->nr, j->b + item * K * N, N, j->ws + item * j->per);
}

#define MM_FEW_BLOCKS 8

/* Blocks of rows x cols over every batch. */
static size_t mm_blocks(const mm_geom *gm, size_t rows, size_t cols) {
  return gm->batches * ((gm->M + rows - 1) / rows) * ((gm->N + cols - 1) / cols);
}

static void matmul_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                       const op_exec_ctx *ctx) {
  (void)workspace;
  const mm_geom *gm = geom;
  const matmul_params *p = params;
  matmul_job j;
  j.p = p;
  j.gm = gm;
  j.a = in[0].data;
  j.b = in[1].data;
  j.c = out[0].data;
  j.gemm = p->gemm;
  j.packed = p->packed_b;
  j.nr = p->nr;
  j.per = 0;
  if (p->gemm == NULL && mm_run_pack_floats(p, gm) > 0) {
    j.gemm = p->rgemm;
    j.nr = p->rnr;
    j.per = q8rt_f32_gemm_packed_size(gm->K, gm->N, j.nr);
    j.ws = workspace;
    j.packed = j.ws;
    op_parallel_items(ctx, gm->b_mats, gm->K * gm->N, 1 << 14, mm_pack_item, &j);
  }
  /* Items: batches x row blocks x column blocks, sized from the shape alone. The tiled kernel
   * takes blocks of up to 64 rows and 4 panels; the row kernel whole rows. */
  if (j.gemm != NULL) {
    j.rows = 64;
    j.cols = 4 * j.nr;
    /* few blocks (rec's attention projections, 40 x 120 x 360 in one 24 us block): narrower
     * ones, down to a panel and 16 rows, so that a second thread has work (each output's chain is
     * the same in any block) */
    while (mm_blocks(gm, j.rows, j.cols) < MM_FEW_BLOCKS && j.cols > j.nr) j.cols /= 2;
    while (mm_blocks(gm, j.rows, j.cols) < MM_FEW_BLOCKS && j.rows > 16) j.rows /= 2;
  } else {
    size_t blocks = (gm->M + MM_ROWS - 1) / MM_ROWS;
    if (gm->batches * blocks > OP_MAX_CHUNKS) blocks = (OP_MAX_CHUNKS + gm->batches - 1) / gm->batches;
    if (blocks < 1) blocks = 1;
    j.rows = (gm->M + blocks - 1) / blocks;
    j.cols = gm->N;
  }
  if (j.rows < 1) j.rows = 1;
  if (j.cols < 1) j.cols = 1;
  j.rblocks = (gm->M + j.rows - 1) / j.rows;
  j.cblocks = (gm->N + j.cols - 1) / j.cols;
  if (j.rblocks < 1) j.rblocks = 1;
  if (j.cblocks < 1) j.cblocks = 1;
  /* grain: ~2 us; the row kernel on attention's short rows (40 x 40 x 15 per head) runs ~2
   * multiply-adds a nanosecond, the tiled one ~16 */
  op_parallel_items(ctx, gm->batches * j.rblocks * j.cblocks, j.rows * j.cols * gm->K,
                    j.gemm != NULL ? 1 << 15 : 1 << 12, matmul_item, &j);
}

static size_t matmul_workspace(const void *params, const void *geom, size_t threads) {
  (void)threads;
  const matmul_params *p = params;
  return p->gemm == NULL ? mm_run_pack_floats(p, geom) * sizeof(float) : 0;
}

const op_def q8rt_op_matmul = {.op_type = "MatMul",
                               .domain = "",
                               .min_opset = 1,
                               .prepare = matmul_prepare,
                               .infer = matmul_infer,
                               .workspace = matmul_workspace,
                               .run = matmul_run};

/* ---- Gemm ---------------------------------------------------------------------------------- */

static q8rt_status gemm_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  const ir_node *n = ctx->node;
  if (n->n_inputs < 2 || n->n_inputs > 3 || n->n_outputs != 1 || n->inputs[0] < 0 || n->inputs[1] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects inputs A, B and optional C, and 1 output",
                     n->op_type, n->name);
  }
  if (n->n_inputs < 3 && n->opset < 11) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input C is required before opset 11", n->op_type,
                     n->name);
  }
  gemm_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  int64_t ta, tb;
  q8rt_status st;
  if ((st = ir_attr_float(n, "alpha", 1.0f, &p->alpha, err)) != Q8RT_OK) return st;
  if ((st = ir_attr_float(n, "beta", 1.0f, &p->beta, err)) != Q8RT_OK) return st;
  if ((st = ir_attr_int(n, "transA", 0, &ta, err)) != Q8RT_OK) return st;
  if ((st = ir_attr_int(n, "transB", 0, &tb, err)) != Q8RT_OK) return st;
  p->trans_a = ta != 0;
  p->trans_b = tb != 0;
  p->fmac = pick_fmac(ctx);
  ctx->reason = "float32 reference (fma chain over k)";
  const ir_value *bv = ir_node_input(ctx->graph, n, 1);
  const ir_tensor *bt = bv != NULL ? bv->constant : NULL;
  const op_f32_gemm_variant *v = op_f32_gemm_pick(ctx);
  if (v != NULL && !p->trans_a && bt != NULL && bt->dtype == Q8RT_DTYPE_FLOAT32 && bt->rank == 2 && bt->count > 0) {
    /* B as [K, N] whatever its orientation (transB = 1: every exported Linear layer), packed in
     * panels of nr columns, the last zero-padded (the layout q8rt_f32_gemm_pack writes) */
    const size_t K = (size_t)bt->dims[p->trans_b ? 1 : 0], N = (size_t)bt->dims[p->trans_b ? 0 : 1], nr = v->nr;
    const char *kind = p->trans_b ? "f32-gemm-pack-t" : "f32-gemm-pack";
    float *packed = op_pack_find(ctx, bt->data, kind, K, N, nr);
    if (packed == NULL) {
      packed = q8rt_pool_alloc(ctx->pool, q8rt_f32_gemm_packed_size(K, N, nr) * sizeof(float), 64);
      if (packed == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory packing B");
      if (p->trans_b) {
        q8rt_f32_gemm_pack_t(K, N, nr, bt->data, K, packed);
      } else {
        q8rt_f32_gemm_pack(K, N, nr, bt->data, N, packed);
      }
      op_pack_keep(ctx, bt->data, kind, K, N, nr, packed);
    }
    p->gemm = v->fn;
    p->packed_b = packed;
    p->nr = nr;
    ctx->consumed |= 1u << 1;  /* the packed route never reads B (gemm_run) */
    ctx->kernel = v->name + 5; /* without "q8rt_" */
    ctx->reason = "float32, constant B packed at load, register-tiled (same fma chain over k per output)";
  }
  *out = p;
  return Q8RT_OK;
}

static q8rt_status gemm_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  const gemm_params *p = params;
  const op_shape *a = &in[0], *b = &in[1];
  const int has_c = n->n_inputs > 2 && n->inputs[2] >= 0;
  q8rt_status st;
  if ((st = check_float(n, a, "A", err)) != Q8RT_OK) return st;
  if ((st = check_float(n, b, "B", err)) != Q8RT_OK) return st;
  if (has_c && (st = check_float(n, &in[2], "C", err)) != Q8RT_OK) return st;
  memset(out, 0, sizeof(*out));
  out->dtype = Q8RT_DTYPE_FLOAT32;
  out->rank = 2;
  out->dims[0] = out->dims[1] = -1;
  if ((a->rank >= 0 && a->rank != 2) || (b->rank >= 0 && b->rank != 2)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input %s has rank %d (Gemm needs 2-D A and B)", n->op_type,
                     n->name, a->rank != 2 ? "A" : "B", a->rank != 2 ? a->rank : b->rank);
  }
  int64_t M = -1, K = -1, K2 = -1, N = -1;
  if (a->rank == 2) {
    M = a->dims[p->trans_a ? 1 : 0];
    K = a->dims[p->trans_a ? 0 : 1];
  }
  if (b->rank == 2) {
    K2 = b->dims[p->trans_b ? 1 : 0];
    N = b->dims[p->trans_b ? 0 : 1];
  }
  if (K >= 0 && K2 >= 0 && K != K2) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': inner dimensions differ (A gives K=%lld, B gives K=%lld)",
                     n->op_type, n->name, (long long)K, (long long)K2);
  }
  out->dims[0] = M;
  out->dims[1] = N;
  const op_shape *c = has_c ? &in[2] : NULL;
  if (c != NULL && c->rank > 2) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input C has rank %d (at most 2)", n->op_type, n->name,
                     c->rank);
  }
  if (c != NULL && c->rank >= 0) {
    for (int d = 0; d < c->rank; d++) {
      const int64_t want = out->dims[2 - c->rank + d];
      const int64_t have = c->dims[d];
      if (have >= 0 && have != 1 && want >= 0 && have != want) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                         "%s node '%s': input C (dimension %d is %lld) does not broadcast to [%lld, %lld]", n->op_type,
                         n->name, d, (long long)have, (long long)M, (long long)N);
      }
    }
  }
  if (!concrete) return Q8RT_OK;
  int64_t total;
  if (!q8rt_shape_elements(out->dims, 2, &total) || !q8rt_shape_elements(a->dims, 2, &total) ||
      !q8rt_shape_elements(b->dims, 2, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': tensors are too large", n->op_type, n->name);
  }
  mm_geom *gm = geom;
  gm->M = (size_t)M;
  gm->N = (size_t)N;
  gm->K = (size_t)K;
  gm->has_c = c != NULL;
  if (c != NULL) {
    int64_t s[Q8RT_MAX_RANK];
    op_broadcast_strides(c, out, s);
    gm->sc_m = s[0];
    gm->sc_n = s[1];
  }
  return Q8RT_OK;
}

/* The packed route: items are blocks of 64 rows x 4 panels, as MatMul's */
typedef struct gemm_job {
  const gemm_params *p;
  const float *a;
  float *y;
  size_t M, N, K, rblocks, cblocks;
} gemm_job;

static void gemm_item(void *arg, size_t item) {
  const gemm_job *j = arg;
  const size_t cols = 4 * j->p->nr;
  const size_t r0 = item / j->cblocks * 64, c0 = item % j->cblocks * cols;
  const size_t r1 = r0 + 64 < j->M ? r0 + 64 : j->M, c1 = c0 + cols < j->N ? c0 + cols : j->N;
  if (r0 >= r1 || c0 >= c1) return;
  j->p->gemm(r1 - r0, c1 - c0, j->K, j->a + r0 * j->K, j->K, j->p->packed_b + c0 * j->K, j->y + r0 * j->N + c0, j->N);
}

static void gemm_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  (void)workspace;
  const gemm_params *p = params;
  const mm_geom *gm = geom;
  const size_t M = gm->M, N = gm->N, K = gm->K;
  float *y = out[0].data;
  if (p->gemm != NULL) {
    gemm_job j = {p, in[0].data, y, M, N, K, (M + 63) / 64, (N + 4 * p->nr - 1) / (4 * p->nr)};
    op_parallel_items(ctx, j.rblocks * j.cblocks, 64 * 4 * p->nr * K, 1 << 15, gemm_item, &j);
  } else {
    /* A is [M,K] (or [K,M] transposed); B is [K,N] (or [N,K]) */
    mm_kernel(p->fmac, M, N, K, in[0].data, p->trans_a ? 1 : K, p->trans_a ? M : 1, in[1].data, p->trans_b ? 1 : N,
              p->trans_b ? K : 1, y);
  }
  const float alpha = p->alpha, beta = p->beta;
  const float *c = gm->has_c ? in[2].data : NULL;
  for (size_t i = 0; i < M; i++) {
    for (size_t j = 0; j < N; j++) {
      float v = y[i * N + j];
      if (alpha != 1.0f) v = alpha * v;
      if (c != NULL && beta != 0.0f) {
        const float cv = c[i * (size_t)gm->sc_m + j * (size_t)gm->sc_n];
        v = v + (beta == 1.0f ? cv : beta * cv);
      }
      y[i * N + j] = v;
    }
  }
}

const op_def q8rt_op_gemm = {
    .op_type = "Gemm", .domain = "", .min_opset = 7, .prepare = gemm_prepare, .infer = gemm_infer, .run = gemm_run};
