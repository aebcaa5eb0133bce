/* QLinearMatMul (ai.onnx 10), MatMulInteger (ai.onnx 10) and QGemm (com.microsoft 1): one int32
 * GEMM core, then ONNX Runtime's output stage.
 *
 *   acc[m][n] = C[m][n] + Σ_k (a[m][k] − a_zp)(b[k][n] − b_zp[n])     (int32, wrapping; C: QGemm)
 *
 * ORT runs these on MLAS integer GEMMs, exact on this machine class (AVX-512 VNNI / u8u8 via
 * int16 madd); their output processors are:
 *   QLinearMatMul: scale[n] = a_scale · b_scale[n] / y_scale             (float, in that order)
 *   QGemm:         scale[n] = alpha · a_scale · b_scale[n] (/ y_scale when y is quantized)
 *   8-bit y (MlasRequantizeOutput): y = cvt(clamp((float)acc · scale[n], qmin − y_zp, qmax − y_zp)) + y_zp
 *   float y (QGemm without y_scale/y_zero_point): y = (float)acc · scale[n]
 *   MatMulInteger: y = acc (int32).
 * Batches broadcast as numpy.matmul (QLinearMatMul, MatMulInteger); QGemm is 2-D with transA,
 * transB and C of shape (), (1), (N), (1,N), (M,1) or (M,N). b scales / zero points: one value or
 * one per column (shape [N] or [..., 1, N] holding N values). Scales and zero points are
 * constants, except MatMulInteger's a_zero_point, which dynamic quantization computes at run time. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "conv_paths.h"
#include "qlinear_common.h"
#include "s32-f32-vcvt/s32-f32-vcvt.h"

enum { MM_QLINEAR, MM_INTEGER, MM_QGEMM };
#define MM_MAX_BATCH_RANK Q8RT_MAX_RANK

typedef struct mm_params {
  int kind;
  q8rt_dtype a_type, b_type, y_type;
  int32_t a_zp, y_zp, qmin, qmax;
  int a_zp_dynamic; /* MatMulInteger: a_zero_point computed at run time */
  int32_t *b_zp;    /* [n_bq] */
  size_t n_bq;
  float *scale; /* [n_scale] */
  size_t n_scale;
  int trans_a, trans_b, has_c;
  int fast; /* QLinearMatMul with a constant 2-D B: the packed int8 GEMM kernels */
  conv_fast gemm;
  gemm_i32 gi; /* MatMulInteger with a constant 2-D B: the int32-output GEMM kernels (fn != NULL) */
  int rt;      /* B computed at run: an int32-output GEMM kernel exists (packed per batch at run) */
  int b_gone;  /* the constant B was declared consumed (freed unless another step reads it): every
                  bind must take the packed route, and infer refuses one that would not */
  q8rt_backend backend;
  uint32_t isa;
  /* MatMulIntegerToFloat (domain q8rt, src/passes/integer_fuse.c): y = (float)acc * scale [+ bias[j]],
   * the int32 result converted in place by s32-f32-vcvt after any of the routes below */
  int to_float, scale_dynamic;
  float fscale;
  const float *fbias; /* [n_fbias]: 1 value or one per column */
  size_t n_fbias;
  q8rt_s32_f32_vcvt_ukernel_fn vcvt;
  /* 8-bit outputs with one output scale: the output stage of the int32-output routes (mmi_tile) on
   * SIMD kernels, (float)acc * scale by s32-f32-vcvt in place, then round_clamp + y_zp by
   * f32-qint-vcvt at scale 1 (x / 1 = x): mm_store_cols' operations, the same bytes. NULL: the loop */
  q8rt_s32_f32_vcvt_ukernel_fn stage_vcvt;
  q8rt_f32_qint_vcvt_ukernel_fn stage_q;
} mm_params;

typedef struct mm_geom {
  int64_t M, N, K;
  int brank; /* batch rank of the output */
  int64_t bdims[MM_MAX_BATCH_RANK];
  int64_t sa[MM_MAX_BATCH_RANK], sb[MM_MAX_BATCH_RANK]; /* batch strides in matrices */
  size_t batches;
  int64_t a_sm, a_sk, b_sk, b_sn; /* element strides inside one matrix */
  int64_t c_sm, c_sn;             /* QGemm bias strides (0 where broadcast) */
  int use_fast;                   /* A's rows are contiguous: run p->gemm */
  conv_fast_geom fg;
  int use_i32;             /* A's rows are contiguous: run p->gi */
  size_t tile_rows;        /* p->gi: rows per task */
  size_t col_block;        /* p->gi: columns per task (all N, or a multiple of NR when rows are few) */
  int use_rt;              /* p->rt and A's rows contiguous: B packed per batch into the workspace */
  size_t out_count, ncols; /* MatMulIntegerToFloat: output elements, columns (1 for a 1-D B) */
} mm_geom;

_Static_assert(sizeof(mm_geom) <= Q8RT_GEOM_BYTES, "geometry must fit");

/* Per-column b parameter: a constant with 1 value, or N values (checked against N at infer). */
static q8rt_status read_b_param(const ir_graph *g, const ir_node *n, int input, const char *what, const ir_tensor **out,
                                q8rt_error *err) {
  q8rt_status st = op_require_constant(g, n, input, what, out, err);
  if (st != Q8RT_OK) return st;
  const ir_tensor *t = *out;
  for (int d = 0; d + 1 < t->rank; d++) {
    if (t->dims[d] != 1) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                       "%s node '%s': %s of shape with a dimension %d of size %lld is not supported (one value or "
                       "one per column)",
                       n->op_type, n->name, what, d, (long long)t->dims[d]);
    }
  }
  return Q8RT_OK;
}

/* QLinearMatMul's requantization, (float)acc * (a_scale*b_scale[n]/y_scale) clamped, rounded half
 * to even, plus y_zp, is the QLinearConv epilogue: with a constant 2-D B whose columns minus their
 * zero points fit int8, B^T is packed once for the conv GEMM kernels (VNNI/AVX2), which then give
 * the same bytes as the scalar loop. So is QGemm's with a quantized output, untransposed A and a
 * constant C of one value per column (the kernels' bias). */
static q8rt_status mm_prepare_fast(op_prepare_ctx *ctx, mm_params *p, q8rt_error *err) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  const ir_value *bv = ir_node_input(g, n, 3);
  if (p->kind == MM_INTEGER || bv == NULL || bv->constant == NULL || bv->constant->rank != 2 || p->a_zp_dynamic ||
      !q8rt_dtype_is_8bit(p->y_type) || !q8rt_dtype_is_8bit(p->a_type) || p->trans_a) {
    return Q8RT_OK;
  }
  const ir_tensor *B = bv->constant;
  const int tb = p->trans_b;
  const size_t K = (size_t)B->dims[tb ? 1 : 0], N = (size_t)B->dims[tb ? 0 : 1];
  if (K == 0 || N == 0 || (p->n_scale != 1 && p->n_scale != N) || (p->n_bq != 1 && p->n_bq != N)) return Q8RT_OK;
  /* QGemm's C becomes the kernels' bias when it is a constant that is the same for every row */
  const ir_tensor *C = NULL;
  if (p->has_c) {
    const ir_value *cv = ir_node_input(g, n, 6);
    C = cv->constant;
    if (C == NULL || C->dtype != Q8RT_DTYPE_INT32 || C->rank > 2 || (C->rank == 2 && C->dims[0] != 1) ||
        (C->count != 1 && (size_t)C->count != N)) {
      return Q8RT_OK;
    }
  }
  const q8rt_allocator *a = ctx->pool->allocator;
  int16_t *w = q8rt_alloc(a, N * K * sizeof(int16_t), 16);
  int32_t *bias = q8rt_calloc(a, N, sizeof(int32_t));
  float *scale = q8rt_alloc(a, N * sizeof(float), 16);
  q8rt_status st = Q8RT_OK;
  if (w == NULL || bias == NULL || scale == NULL) {
    st = q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory packing '%s'", n->name);
    goto done;
  }
  for (size_t j = 0; j < N; j++) {
    const int32_t zp = p->b_zp[p->n_bq == 1 ? 0 : j];
    for (size_t k = 0; k < K; k++)
      w[j * K + k] = (int16_t)(qk_load8(B->data, B->dtype, tb ? j * K + k : k * N + j) - zp);
    scale[j] = p->scale[p->n_scale == 1 ? 0 : j];
    if (C != NULL) bias[j] = ((const int32_t *)C->data)[C->count == 1 ? 0 : j];
  }
  conv_choice choice;
  conv_choice_init(&choice, ctx->backend == Q8RT_BACKEND_XNNPACK ? Q8RT_BACKEND_AUTO : ctx->backend, ctx->isa);
  conv_fast_desc d;
  memset(&d, 0, sizeof(d));
  d.out_c = N;
  d.in_c_per_group = K;
  d.groups = 1;
  d.kernel_h = d.kernel_w = 1;
  d.w = w;
  d.bias = bias;
  d.scale = scale;
  d.x_signed = p->a_type == Q8RT_DTYPE_INT8;
  d.y_signed = p->y_type == Q8RT_DTYPE_INT8;
  d.x_zero_point = p->a_zp;
  d.y_zero_point = p->y_zp;
  d.y_min = p->qmin;
  d.y_max = p->qmax;
  if ((st = conv_fast_prepare(&d, &choice, ctx->pool, &p->gemm, err)) != Q8RT_OK) goto done;
  if (p->gemm.path == CONV_PATH_GEMM) {
    p->fast = 1;
    ctx->kernel = p->gemm.kernel;
    ctx->reason = "constant B packed for the int8 GEMM kernels (same requantization as the scalar loop)";
  }
done:
  q8rt_free(a, w, N * K * sizeof(int16_t));
  q8rt_free(a, bias, N * sizeof(int32_t));
  q8rt_free(a, scale, N * sizeof(float));
  return st;
}

/* MatMulInteger and QGemm with a constant 2-D B (QGemm: B^T when transB): B packed once for the
 * int32-output GEMM kernels (p->gi; left unset when no kernel fits). */
static q8rt_status mm_prepare_i32(op_prepare_ctx *ctx, mm_params *p, const ir_tensor *B, q8rt_error *err) {
  if (B == NULL || B->rank != 2) return Q8RT_OK;
  const int tb = p->kind == MM_QGEMM && p->trans_b;
  const size_t K = (size_t)B->dims[tb ? 1 : 0], N = (size_t)B->dims[tb ? 0 : 1];
  if (N == 0 || (p->n_bq != 1 && p->n_bq != N)) return Q8RT_OK;
  int32_t *wzp = q8rt_pool_array(ctx->pool, N, sizeof(int32_t));
  if (wzp == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  for (size_t j = 0; j < N; j++) wzp[j] = p->b_zp[p->n_bq == 1 ? 0 : j];
  return gemm_i32_prepare(1, N, K, B->data, B->dtype, tb ? K : 1, tb ? 1 : N, wzp, ctx->backend, ctx->isa, ctx->pool,
                          &p->gi, err);
}

/* A B computed at run time (QLinearMatMul's attention products): packed per batch at run for the
 * int32-output GEMM kernels, then the same output stage; used from 4 rows of A up (packing costs
 * about one row's multiply-adds). */
static void mm_prepare_rt(op_prepare_ctx *ctx, mm_params *p, const ir_value *bv) {
  if (bv == NULL || bv->constant != NULL) return;
  gemm_i32 probe;
  gemm_i32_pick(1, 1, ctx->backend, ctx->isa, &probe);
  if (probe.fn == NULL) return;
  p->rt = 1;
  p->backend = ctx->backend;
  p->isa = ctx->isa;
  ctx->kernel = probe.kernel;
  ctx->reason =
      "B computed at run: packed per batch for the int32-output GEMM kernels (4 rows of A or more), "
      "then the output stage";
}

/* MatMulIntegerToFloat's inputs 4 (scale: one float32, constant or computed at run) and 5 (an
 * optional constant float32 bias, one value or one per column). */
static q8rt_status mmi_prepare_to_float(op_prepare_ctx *ctx, mm_params *p, q8rt_error *err) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  p->to_float = 1;
  q8rt_status st = op_to_float_scale(g, n, &p->fscale, &p->scale_dynamic, err);
  if (st != Q8RT_OK) return st;
  if (ir_node_input(g, n, 5) != NULL) {
    const ir_tensor *b;
    if ((st = op_require_constant(g, n, 5, "bias", &b, err)) != Q8RT_OK) return st;
    if (b->dtype != Q8RT_DTYPE_FLOAT32 || b->count < 1) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "%s node '%s': bias must be float32 with 1 value or one per column", n->op_type, n->name);
    }
    p->fbias = b->data;
    p->n_fbias = (size_t)b->count;
  }
  p->vcvt = op_s32_f32_vcvt_pick(ctx);
  return Q8RT_OK;
}

static q8rt_status mm_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err, int kind) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  const int to_float = kind == MM_INTEGER && strcmp(n->domain, "q8rt") == 0;
  const int min_in = kind == MM_QLINEAR ? 8 : kind == MM_QGEMM ? 6 : to_float ? 5 : 2;
  const int max_in = kind == MM_QLINEAR ? 8 : kind == MM_QGEMM ? 9 : to_float ? 6 : 4;
  if (n->n_inputs < min_in || n->n_inputs > max_in || n->n_outputs != 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects %d to %d inputs and 1 output", n->op_type,
                     n->name, min_in, max_in);
  }
  const int ia = 0, ib = kind == MM_INTEGER ? 1 : 3;
  if (ir_node_input(g, n, ia) == NULL || ir_node_input(g, n, ib) == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': inputs A and B are required", n->op_type, n->name);
  }
  mm_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->kind = kind;
  q8rt_status st;
  q8rt_dtype ta = qk_input_type(g, n, ia), tb = qk_input_type(g, n, ib);
  if (ta != Q8RT_DTYPE_UNDEFINED && !q8rt_dtype_is_8bit(ta)) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input A is %s (uint8 or int8 expected)", n->op_type,
                     n->name, q8rt_onnx_type_name(ta));
  }
  if (tb != Q8RT_DTYPE_UNDEFINED && !q8rt_dtype_is_8bit(tb)) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input B is %s (uint8 or int8 expected)", n->op_type,
                     n->name, q8rt_onnx_type_name(tb));
  }
  const int i_azp = 2;
  const int i_bzp = kind == MM_INTEGER ? 3 : 5;
  const ir_value *azv = ir_node_input(g, n, i_azp);
  if (kind == MM_INTEGER && azv != NULL && azv->constant == NULL) {
    /* A run-time zero point (dynamic quantization): one element of A's type, read by run. */
    if (azv->dtype != Q8RT_DTYPE_UNDEFINED &&
        (!q8rt_dtype_is_8bit(azv->dtype) || (ta != Q8RT_DTYPE_UNDEFINED && azv->dtype != ta))) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': a_zero_point is %s, A is %s", n->op_type, n->name,
                       q8rt_onnx_type_name(azv->dtype), q8rt_onnx_type_name(ta));
    }
    if (ta == Q8RT_DTYPE_UNDEFINED) ta = azv->dtype;
    p->a_zp_dynamic = 1;
  } else if ((st = qk_zero_point(g, n, i_azp, "a_zero_point", ta, &p->a_zp, &ta, err)) != Q8RT_OK) {
    return st;
  }
  /* b zero point(s) */
  const ir_tensor *bz = NULL;
  if (ir_node_input(g, n, i_bzp) != NULL) {
    if ((st = read_b_param(g, n, i_bzp, "b_zero_point", &bz, err)) != Q8RT_OK) return st;
    if (!q8rt_dtype_is_8bit(bz->dtype) || (tb != Q8RT_DTYPE_UNDEFINED && bz->dtype != tb)) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': b_zero_point is %s, expected %s", n->op_type,
                       n->name, q8rt_onnx_type_name(bz->dtype), q8rt_onnx_type_name(tb));
    }
    tb = bz->dtype;
  }
  if (ta == Q8RT_DTYPE_UNDEFINED || tb == Q8RT_DTYPE_UNDEFINED) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': the types of A and B must be known at load",
                     n->op_type, n->name);
  }
  p->a_type = ta;
  p->b_type = tb;
  p->n_bq = bz != NULL ? (size_t)bz->count : 1;
  p->b_zp = q8rt_pool_array(ctx->pool, p->n_bq, sizeof(int32_t));
  if (p->b_zp == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; bz != NULL && i < p->n_bq; i++) p->b_zp[i] = qk_load8(bz->data, bz->dtype, i);
  if (bz != NULL && bz->count == 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': b_zero_point is empty", n->op_type, n->name);
  }

  if (kind == MM_INTEGER) {
    p->y_type = Q8RT_DTYPE_INT32;
    ctx->kernel = "matmul_integer__scalar";
    ctx->reason = "exact int32 accumulation";
    if ((st = mm_prepare_i32(ctx, p, ir_node_input(g, n, 1)->constant, err)) != Q8RT_OK) return st;
    /* with A known to be of rank >= 2 every bind takes the packed route (mm_infer: A's rows are
     * contiguous, A's count is batches x M x K for a 2-D B, K is B's): B is not read again */
    if (p->gi.fn != NULL && ir_node_input(g, n, 0)->rank >= 2) {
      p->b_gone = 1;
      ctx->consumed |= 1u << 1;
    }
    mm_prepare_rt(ctx, p, ir_node_input(g, n, 1));
    if (p->gi.fn != NULL) {
      ctx->kernel = p->gi.kernel;
      ctx->reason = "constant B packed for the int32-output GEMM kernels; zero points corrected after the GEMM";
    }
    if (to_float && (st = mmi_prepare_to_float(ctx, p, err)) != Q8RT_OK) return st;
    *out = p;
    return Q8RT_OK;
  }

  float a_scale, y_scale = 1.0f;
  if ((st = op_const_scale(g, n, 1, "a_scale", &a_scale, err)) != Q8RT_OK) return st;
  const ir_tensor *bs;
  if ((st = read_b_param(g, n, 4, "b_scale", &bs, err)) != Q8RT_OK) return st;
  if ((st = op_check_scales(n, "b_scale", bs, err)) != Q8RT_OK) return st;
  if (bz != NULL && bz->count != bs->count) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': b_scale has %lld values, b_zero_point %lld",
                     n->op_type, n->name, (long long)bs->count, (long long)bz->count);
  }
  const int i_ys = kind == MM_QLINEAR ? 6 : 7, i_yzp = kind == MM_QLINEAR ? 7 : 8;
  const int quant_out = ir_node_input(g, n, i_ys) != NULL || ir_node_input(g, n, i_yzp) != NULL;
  float alpha = 1.0f;
  if (kind == MM_QGEMM) {
    int64_t v;
    if ((st = ir_attr_float(n, "alpha", 1.0f, &alpha, err)) != Q8RT_OK) return st;
    if ((st = ir_attr_int(n, "transA", 0, &v, err)) != Q8RT_OK) return st;
    p->trans_a = v != 0;
    if ((st = ir_attr_int(n, "transB", 0, &v, err)) != Q8RT_OK) return st;
    p->trans_b = v != 0;
    p->has_c = ir_node_input(g, n, 6) != NULL;
    if (p->has_c && qk_input_type(g, n, 6) != Q8RT_DTYPE_UNDEFINED && qk_input_type(g, n, 6) != Q8RT_DTYPE_INT32) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input C is %s (int32 expected)", n->op_type,
                       n->name, q8rt_onnx_type_name(qk_input_type(g, n, 6)));
    }
    if (quant_out && (ir_node_input(g, n, i_ys) == NULL || ir_node_input(g, n, i_yzp) == NULL)) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                       "%s node '%s': y_scale and y_zero_point must be given together (or both omitted for float "
                       "output)",
                       n->op_type, n->name);
    }
  }
  if (kind == MM_QLINEAR || quant_out) {
    q8rt_dtype ty = Q8RT_DTYPE_UNDEFINED;
    if ((st = op_const_scale(g, n, i_ys, "y_scale", &y_scale, err)) != Q8RT_OK) return st;
    if ((st = qk_zero_point(g, n, i_yzp, "y_zero_point", Q8RT_DTYPE_UNDEFINED, &p->y_zp, &ty, err)) != Q8RT_OK) {
      return st;
    }
    if (ty == Q8RT_DTYPE_UNDEFINED) ty = ta;
    p->y_type = ty;
    q8rt_dtype_range(ty, &p->qmin, &p->qmax);
  } else {
    p->y_type = Q8RT_DTYPE_FLOAT32;
  }
  p->n_scale = (size_t)bs->count;
  p->scale = q8rt_pool_array(ctx->pool, p->n_scale, sizeof(float));
  if (p->scale == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  const float *b_scale = bs->data;
  for (size_t i = 0; i < p->n_scale; i++) {
    if (kind == MM_QLINEAR) {
      p->scale[i] = a_scale * b_scale[i] / y_scale;
    } else {
      p->scale[i] = alpha * a_scale * b_scale[i];
      if (quant_out) p->scale[i] /= y_scale;
    }
  }
  const char *qname = NULL;
  if ((p->y_type == Q8RT_DTYPE_UINT8 || p->y_type == Q8RT_DTYPE_INT8) && p->n_scale == 1) {
    p->stage_q = op_quantize_kernel(p->y_type, ctx->isa, ctx->backend, &qname);
    if (p->stage_q.qu8 != NULL) p->stage_vcvt = op_s32_f32_vcvt_pick(ctx);
  }
  ctx->kernel = kind == MM_QGEMM ? "qgemm__scalar" : "qlinear_matmul__scalar";
  ctx->reason =
      p->y_type == Q8RT_DTYPE_FLOAT32 ? "exact int32 GEMM, float output scale" : "exact int32 GEMM, ORT requantization";
  if ((st = mm_prepare_fast(ctx, p, err)) != Q8RT_OK) return st;
  /* The packed route, when every bind takes it (mm_infer: use_fast): QGemm's A is 2-D (infer
   * refuses any other rank) and not transposed; QLinearMatMul's A when its rank is known at load
   * to be >= 2 (its rows are then contiguous and hold batches x M x K values for a 2-D B). An A
   * of rank 1 binds to the scalar loop, which reads B: kept. */
  if (p->fast && (kind == MM_QGEMM || ir_node_input(g, n, 0)->rank >= 2)) {
    p->b_gone = 1;
    ctx->consumed |= 1u << 3;
  }
  mm_prepare_rt(ctx, p, ir_node_input(g, n, 3));
  if (!p->fast) {
    /* QGemm with a float output or a C that varies by row, and QLinearMatMul whose B minus its zero
     * points does not fit int8 (uint8 weights with per-column zero points): the int32 accumulators
     * are the same (mod 2^32) on the int32-output GEMM kernels (the MatMulInteger u8 x u8 route);
     * C and the output stage are then the scalar loop's own code. */
    if ((st = mm_prepare_i32(ctx, p, ir_node_input(g, n, 3)->constant, err)) != Q8RT_OK) return st;
    if (p->gi.fn != NULL) {
      ctx->kernel = p->gi.kernel;
      ctx->reason = kind == MM_QGEMM
                        ? "constant B packed for the int32-output GEMM kernels; C and the output stage after the GEMM"
                        : "constant B packed for the int32-output GEMM kernels; the output stage after the GEMM";
      /* QLinearMatMul's A of rank >= 2 known at load: every bind takes this route (mm_infer:
       * use_i32), B is not read again */
      if (kind == MM_QLINEAR && ir_node_input(g, n, 0)->rank >= 2) {
        p->b_gone = 1;
        ctx->consumed |= 1u << 3;
      }
    }
  }
  if (p->stage_vcvt != NULL && !p->fast && (p->rt || p->gi.fn != NULL)) {
    char *why = q8rt_pool_alloc(ctx->pool, 320, 1);
    if (why == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
    snprintf(why, 320, "%s (one output scale: s32-f32-vcvt, then %s)", ctx->reason, qname);
    ctx->reason = why;
  }
  *out = p;
  return Q8RT_OK;
}

static q8rt_status qlmm_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return mm_prepare(ctx, out, err, MM_QLINEAR);
}
static q8rt_status mmi_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return mm_prepare(ctx, out, err, MM_INTEGER);
}
static q8rt_status qgemm_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return mm_prepare(ctx, out, err, MM_QGEMM);
}

static q8rt_status check_type(const op_node *n, const op_shape *s, const char *what, q8rt_dtype want, q8rt_error *err) {
  if (s->dtype != Q8RT_DTYPE_UNDEFINED && s->dtype != want) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input %s is %s, expected %s", n->op_type, n->name,
                     what, q8rt_onnx_type_name(s->dtype), q8rt_onnx_type_name(want));
  }
  return Q8RT_OK;
}

static q8rt_status gemm_infer(const mm_params *p, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              mm_geom *gm, q8rt_error *err) {
  const op_shape *a = &in[0], *b = &in[3];
  out->rank = 2;
  out->dims[0] = out->dims[1] = -1;
  if (a->rank >= 0 && a->rank != 2) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input A has rank %d (2 expected)", n->op_type, n->name,
                     a->rank);
  }
  if (b->rank >= 0 && b->rank != 2) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input B has rank %d (2 expected)", n->op_type, n->name,
                     b->rank);
  }
  if (a->rank < 0 || b->rank < 0) return Q8RT_OK;
  const int64_t M = p->trans_a ? a->dims[1] : a->dims[0], Ka = p->trans_a ? a->dims[0] : a->dims[1];
  const int64_t Kb = p->trans_b ? b->dims[1] : b->dims[0], N = p->trans_b ? b->dims[0] : b->dims[1];
  if (Ka >= 0 && Kb >= 0 && Ka != Kb) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': inner dimensions differ (A: %lld, B: %lld)", n->op_type,
                     n->name, (long long)Ka, (long long)Kb);
  }
  out->dims[0] = M;
  out->dims[1] = N;
  if (!concrete) return Q8RT_OK;
  gm->M = M;
  gm->N = N;
  gm->K = Ka;
  gm->brank = 0;
  gm->batches = 1;
  gm->a_sm = p->trans_a ? 1 : Ka;
  gm->a_sk = p->trans_a ? M : 1;
  gm->b_sk = p->trans_b ? 1 : N;
  gm->b_sn = p->trans_b ? Kb : 1;
  if (p->has_c) {
    const op_shape *c = &in[6];
    int64_t cm = 1, cn = 1;
    if (c->rank == 1) {
      cn = c->dims[0];
    } else if (c->rank == 2) {
      cm = c->dims[0];
      cn = c->dims[1];
    } else if (c->rank > 2) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input C has rank %d", n->op_type, n->name, c->rank);
    }
    if ((cm != 1 && cm != M) || (cn != 1 && cn != N)) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "%s node '%s': input C of shape [%lld, %lld] does not broadcast to [%lld, "
                       "%lld]",
                       n->op_type, n->name, (long long)cm, (long long)cn, (long long)M, (long long)N);
    }
    gm->c_sm = cm == 1 ? 0 : cn;
    gm->c_sn = cn == 1 ? 0 : 1;
  }
  return Q8RT_OK;
}

static q8rt_status matmul_infer(const mm_params *p, const op_node *n, const op_shape *in0, const op_shape *in1,
                                op_shape *out, int concrete, mm_geom *gm, q8rt_error *err) {
  (void)p;
  op_shape a = *in0, b = *in1;
  if (a.rank < 0 || b.rank < 0) {
    out->rank = -1;
    return Q8RT_OK;
  }
  if (a.rank == 0 || b.rank == 0) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': inputs must have rank >= 1", n->op_type, n->name);
  }
  const int a1 = a.rank == 1, b1 = b.rank == 1;
  if (a1) { /* [K] -> [1, K] */
    a.rank = 2;
    a.dims[1] = a.dims[0];
    a.dims[0] = 1;
  }
  if (b1) { /* [K] -> [K, 1] */
    b.rank = 2;
    b.dims[1] = 1;
  }
  const int ra = a.rank - 2, rb = b.rank - 2;
  const int br = ra > rb ? ra : rb;
  if (br > MM_MAX_BATCH_RANK) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': more than %d batch dimensions", n->op_type, n->name,
                     MM_MAX_BATCH_RANK);
  }
  const int64_t M = a.dims[a.rank - 2], Ka = a.dims[a.rank - 1], Kb = b.dims[b.rank - 2], N = b.dims[b.rank - 1];
  if (Ka >= 0 && Kb >= 0 && Ka != Kb) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': inner dimensions differ (A: %lld, B: %lld)", n->op_type,
                     n->name, (long long)Ka, (long long)Kb);
  }
  op_shape ab = {0}, bb = {0}, ob = {0};
  ab.rank = ra;
  bb.rank = rb;
  memcpy(ab.dims, a.dims, sizeof(int64_t) * (size_t)ra);
  memcpy(bb.dims, b.dims, sizeof(int64_t) * (size_t)rb);
  const op_shape *shapes[2] = {&ab, &bb};
  q8rt_status st = op_broadcast_shapes(n, shapes, 2, &ob, err);
  if (st != Q8RT_OK) return st;
  out->rank = 0;
  for (int i = 0; i < ob.rank; i++) out->dims[out->rank++] = ob.dims[i];
  if (!a1) out->dims[out->rank++] = M;
  if (!b1) out->dims[out->rank++] = N;
  if (!concrete) return Q8RT_OK;
  gm->M = M;
  gm->N = N;
  gm->K = Ka;
  gm->brank = ob.rank;
  memcpy(gm->bdims, ob.dims, sizeof(int64_t) * (size_t)ob.rank);
  op_broadcast_strides(&ab, &ob, gm->sa);
  op_broadcast_strides(&bb, &ob, gm->sb);
  for (int i = 0; i < ob.rank; i++) { /* in matrices -> in elements */
    gm->sa[i] *= M * Ka;
    gm->sb[i] *= Kb * N;
  }
  gm->batches = op_shape_count(&ob);
  if (ob.rank == 0) gm->batches = 1;
  gm->a_sm = Ka;
  gm->a_sk = 1;
  gm->b_sk = N;
  gm->b_sn = 1;
  return Q8RT_OK;
}

static q8rt_status mm_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                            void *geom, q8rt_error *err) {
  const mm_params *p = params;
  const int ib = p->kind == MM_INTEGER ? 1 : 3;
  q8rt_status st;
  if ((st = check_type(n, &in[0], "A", p->a_type, err)) != Q8RT_OK) return st;
  if ((st = check_type(n, &in[ib], "B", p->b_type, err)) != Q8RT_OK) return st;
  out->dtype = p->to_float ? Q8RT_DTYPE_FLOAT32 : p->y_type;
  if (p->to_float && p->scale_dynamic && concrete &&
      ((in[4].dtype != Q8RT_DTYPE_UNDEFINED && in[4].dtype != Q8RT_DTYPE_FLOAT32) ||
       (in[4].rank >= 0 && op_shape_count(&in[4]) != 1))) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': scale must be one float32 value", n->op_type, n->name);
  }
  mm_geom tmp, *gm = concrete ? (mm_geom *)geom : &tmp;
  memset(gm, 0, sizeof(*gm));
  if (p->kind == MM_QGEMM) {
    st = gemm_infer(p, n, in, out, concrete, gm, err);
  } else {
    st = matmul_infer(p, n, &in[0], &in[ib], out, concrete, gm, err);
  }
  if (st != Q8RT_OK) return st;
  if (concrete && p->fast && gm->a_sk == 1 && gm->a_sm == gm->K && in[0].rank >= 2) {
    /* A's rows are contiguous when A itself holds every batch (no broadcast of A) */
    size_t a_count = op_shape_count(&in[0]);
    if (a_count == gm->batches * (size_t)gm->M * (size_t)gm->K) {
      q8rt_q8_conv_ref_params r;
      memset(&r, 0, sizeof(r));
      r.batch = 1;
      r.groups = 1;
      r.in_c = (size_t)gm->K;
      r.in_h = r.out_h = 1;
      r.in_w = r.out_w = gm->batches * (size_t)gm->M;
      r.out_c = (size_t)gm->N;
      r.kernel_h = r.kernel_w = r.stride_h = r.stride_w = r.dilation_h = r.dilation_w = 1;
      conv_fast_geom_init(&p->gemm, &r, &gm->fg);
      gm->use_fast = gm->fg.direct;
    }
  }
  if (concrete && p->gi.fn != NULL && gm->a_sk == 1 && gm->a_sm == gm->K && in[0].rank >= 2 &&
      op_shape_count(&in[0]) == gm->batches * (size_t)gm->M * (size_t)gm->K && (size_t)gm->K == p->gi.k) {
    gm->use_i32 = 1;
    size_t t = 24576 / (p->gi.a_stride * p->gi.mr);
    gm->tile_rows = (t < 1 ? 1 : t) * p->gi.mr;
    /* Fewer than 4 row tiles (rec's 40 x 120 x 6625 classifier is one): columns split into blocks
     * of NR multiples too, so that a second thread has work. Shape-only. */
    const size_t rows = gm->batches * (size_t)gm->M, tiles = (rows + gm->tile_rows - 1) / gm->tile_rows;
    const size_t nr = p->gi.nr, cols = (size_t)gm->N;
    gm->col_block = cols > 0 ? cols : 1;
    if (tiles > 0 && tiles < 4 && cols >= 2 * nr) {
      const size_t want = (4 + tiles - 1) / tiles;
      size_t b = ((cols + want - 1) / want + nr - 1) / nr * nr;
      if (b < nr) b = nr;
      gm->col_block = b;
    }
  }
  if (concrete && p->rt && !gm->use_fast && !gm->use_i32 && gm->a_sk == 1 && gm->a_sm == gm->K && gm->M >= 4 &&
      gm->N > 0 && gm->K > 0) {
    gm->use_rt = 1;
  }
  if (concrete && p->b_gone && !gm->use_fast && !gm->use_i32) { /* never expected: see mm_prepare */
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': B was packed at load for these shapes, not for A of rank %d",
                     n->op_type, n->name, in[0].rank);
  }
  int64_t N = -1;
  if (out->rank >= 1 && p->kind == MM_QGEMM) N = out->dims[1];
  if (p->kind != MM_QGEMM && in[ib].rank >= 2) N = in[ib].dims[in[ib].rank - 1];
  if (N >= 0) {
    if (p->n_bq != 1 && (int64_t)p->n_bq != N) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': b_zero_point has %zu values, B has %lld columns",
                       n->op_type, n->name, p->n_bq, (long long)N);
    }
    if (p->scale != NULL && p->n_scale != 1 && (int64_t)p->n_scale != N) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': b_scale has %zu values, B has %lld columns", n->op_type,
                       n->name, p->n_scale, (long long)N);
    }
  }
  if (p->to_float && in[ib].rank >= 0 && (in[ib].rank < 2 || N >= 0)) {
    const size_t ncols = in[ib].rank >= 2 ? (size_t)N : 1;
    if (p->n_fbias > 1 && p->n_fbias != ncols) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': bias has %zu values, the output has %zu columns",
                       n->op_type, n->name, p->n_fbias, ncols);
    }
    if (concrete) {
      gm->ncols = ncols;
      gm->out_count = op_shape_count(out);
    }
  }
  return Q8RT_OK;
}

/* The scalar path splits its batch x M output rows into at most 4 chunks per thread; each chunk
 * accumulates a row in its own N int32 (after the B zero points, shared). */
static size_t mm_chunks(size_t threads) { return threads > 1 ? 4 * threads : 1; }

/* int32 GEMM route: row sums of all rows, per-column terms and, when K is not a multiple of 4
 * (the kernels read whole groups of 4), A copied with padded rows. */
static size_t mmi_rows(const mm_geom *gm) { return gm->batches * (size_t)gm->M; }
static size_t mmi_copy_bytes(const mm_params *p, const mm_geom *gm) {
  return p->gi.k % 4 ? (mmi_rows(gm) * p->gi.a_stride + 63) / 64 * 64 : 0;
}

/* QGemm: the int32 accumulators before C and the output stage (MatMulInteger writes them to y). */
static size_t mmi_acc_bytes(const mm_params *p, const mm_geom *gm) {
  return p->y_type == Q8RT_DTYPE_INT32 ? 0 : mmi_rows(gm) * (size_t)gm->N * sizeof(int32_t);
}

/* Run-time B: the workspace after the int32 route's part (per batch: A copy, row sums, c0, acc). */
typedef struct mm_rt_layout {
  size_t copy, rs, c0, acc, packed, wsum, d, bzp, scratch, total;
} mm_rt_layout;

static size_t rt_align(size_t x) { return (x + 63) / 64 * 64; }

static void mm_rt_layout_of(const mm_params *p, const mm_geom *gm, const gemm_i32 *g, mm_rt_layout *l) {
  const size_t M = (size_t)gm->M, N = (size_t)gm->N;
  size_t at = 0;
  l->copy = at;
  at += g->k % 4 ? rt_align(M * g->a_stride) : 0;
  l->rs = at;
  at += rt_align(M * sizeof(uint32_t));
  l->c0 = at;
  at += rt_align(N * sizeof(uint32_t));
  l->acc = at;
  at += p->y_type == Q8RT_DTYPE_INT32 ? 0 : rt_align(M * N * sizeof(int32_t));
  l->packed = at;
  at += g->group_bytes;
  l->wsum = at;
  at += rt_align(N * sizeof(uint32_t));
  l->d = at;
  at += rt_align(N * sizeof(uint32_t));
  l->bzp = at;
  at += rt_align(N * sizeof(int32_t));
  l->scratch = at;
  at += rt_align(gemm_i32_pack_scratch(g));
  l->total = at;
}

static size_t mm_rt_slots(const mm_geom *gm, const gemm_i32 *g, size_t threads);

static size_t mm_workspace(const void *params, const void *geom, size_t threads) {
  const mm_params *p = params;
  const mm_geom *gm = geom;
  if (gm->use_rt) {
    gemm_i32 g;
    gemm_i32_pick((size_t)gm->N, (size_t)gm->K, p->backend, p->isa, &g);
    mm_rt_layout l;
    mm_rt_layout_of(p, gm, &g, &l);
    size_t total;
    return q8rt_mul_size(l.total, mm_rt_slots(gm, &g, threads), &total) ? total : SIZE_MAX;
  }
  if (gm->use_i32) {
    return mmi_copy_bytes(p, gm) + (mmi_rows(gm) + (size_t)gm->N) * sizeof(uint32_t) + mmi_acc_bytes(p, gm);
  }
  return (size_t)(gm->N > 0 ? gm->N : 1) * (1 + mm_chunks(threads)) * sizeof(int32_t);
}

/* The output stage of columns [j0, j1) of one row of accumulators (C already added; acc and the
 * output row starting at orow both indexed from column 0). */
static void mm_store_cols(const mm_params *p, void *y, size_t orow, size_t j0, size_t j1, const uint32_t *acc) {
  if (p->y_type == Q8RT_DTYPE_INT32) {
    int32_t *Y = (int32_t *)y + orow;
    for (size_t j = j0; j < j1; j++) Y[j] = (int32_t)acc[j];
  } else if (p->y_type == Q8RT_DTYPE_FLOAT32) {
    float *Y = (float *)y + orow;
    for (size_t j = j0; j < j1; j++) Y[j] = (float)(int32_t)acc[j] * p->scale[p->n_scale == 1 ? 0 : j];
  } else {
    const float lo = (float)(p->qmin - p->y_zp), hi = (float)(p->qmax - p->y_zp);
    for (size_t j = j0; j < j1; j++) {
      const float v = (float)(int32_t)acc[j] * p->scale[p->n_scale == 1 ? 0 : j];
      qk_store8(y, p->y_type, orow + j, q8rt_round_clamp(v, lo, hi) + p->y_zp);
    }
  }
}

/* mm_store_cols where the SIMD output stage applies (p->stage_vcvt), overwriting acc[j0, j1) with
 * the scaled floats on the way. */
static void mm_store_cols_simd(const mm_params *p, void *y, size_t orow, size_t j0, size_t j1, uint32_t *acc) {
  if (p->stage_vcvt == NULL || j1 <= j0) {
    mm_store_cols(p, y, orow, j0, j1, acc);
    return;
  }
  const q8rt_s32_vcvt_params vp = {.c = 0, .e = 0, .scale = p->scale[0], .mode = Q8RT_S32_VCVT_SCALE};
  float *f = (float *)(void *)(acc + j0);
  p->stage_vcvt(j1 - j0, (const int32_t *)(const void *)(acc + j0), NULL, f, &vp);
  const q8rt_f32_qint_vcvt_params qp = {
      .scale = 1.0f, .zero_point = p->y_zp, .lo = (float)(p->qmin - p->y_zp), .hi = (float)(p->qmax - p->y_zp)};
  if (p->y_type == Q8RT_DTYPE_UINT8) {
    p->stage_q.qu8(j1 - j0, f, (uint8_t *)y + orow + j0, &qp);
  } else {
    p->stage_q.qs8(j1 - j0, f, (int8_t *)y + orow + j0, &qp);
  }
}

static void mm_store_row(const mm_params *p, void *y, size_t orow, size_t N, const uint32_t *acc) {
  mm_store_cols(p, y, orow, 0, N, acc);
}

typedef struct mm_job {
  const mm_params *p;
  const mm_geom *gm;
  const op_tensor *in;
  op_tensor *out;
  int32_t *bzp;
  uint32_t *acc;
  int32_t azp;
  size_t chunks;
} mm_job;

static void mm_chunk(void *arg, size_t chunk) {
  const mm_job *jb = arg;
  const mm_params *p = jb->p;
  const mm_geom *gm = jb->gm;
  const op_tensor *in = jb->in;
  op_tensor *out = jb->out;
  const int ib = p->kind == MM_INTEGER ? 1 : 3;
  const q8rt_dtype ta = p->a_type, tb = p->b_type;
  const size_t M = (size_t)gm->M, N = (size_t)gm->N, K = (size_t)gm->K;
  const size_t rows = gm->batches * M, per = (rows + jb->chunks - 1) / jb->chunks;
  const size_t r0 = chunk * per, r1 = r0 + per < rows ? r0 + per : rows;
  if (r0 >= r1) return;
  uint32_t *acc = jb->acc + chunk * N;
  const int32_t *bzp = jb->bzp;
  const int32_t *C = p->kind == MM_QGEMM && p->has_c ? in[6].data : NULL;
  const int32_t azp = jb->azp;
  op_batch_iter it;
  op_batch_iter_init(&it, gm->brank, gm->bdims, gm->sa, gm->sb);
  for (size_t bt = 0; bt < r0 / M; bt++) op_batch_iter_next(&it);
  for (size_t r = r0; r < r1; r++) {
    const size_t bt = r / M, m = r % M;
    if (m == 0 && r != r0) op_batch_iter_next(&it);
    const size_t oa = it.oa, ob = it.ob;
    {
      for (size_t j = 0; j < N; j++) {
        acc[j] = C != NULL ? (uint32_t)C[(int64_t)m * gm->c_sm + (int64_t)j * gm->c_sn] : 0u;
      }
      if (gm->b_sk == 1 && gm->b_sn != 1) {
        /* B transposed (QGemm transB = 1): dot products along B's contiguous rows instead of a
         * column walk with stride K; integer sums, so the order changes nothing */
        for (size_t j = 0; j < N; j++) {
          const size_t bj = ob + (size_t)((int64_t)j * gm->b_sn);
          uint32_t s = 0;
          for (size_t k = 0; k < K; k++) {
            const int32_t av =
                qk_load8(in[0].data, ta, oa + (size_t)((int64_t)m * gm->a_sm + (int64_t)k * gm->a_sk)) - azp;
            s += (uint32_t)(av * (qk_load8(in[ib].data, tb, bj + k) - bzp[j]));
          }
          acc[j] += s;
        }
      }
      for (size_t k = 0; k < ((gm->b_sk == 1 && gm->b_sn != 1) ? 0 : K); k++) {
        const int32_t av = qk_load8(in[0].data, ta, oa + (size_t)((int64_t)m * gm->a_sm + (int64_t)k * gm->a_sk)) - azp;
        if (av == 0) continue;
        const size_t brow = ob + (size_t)((int64_t)k * gm->b_sk);
        if (tb == Q8RT_DTYPE_INT8) {
          const int8_t *B = (const int8_t *)in[ib].data + brow;
          for (size_t j = 0; j < N; j++) acc[j] += (uint32_t)(av * ((int32_t)B[(int64_t)j * gm->b_sn] - bzp[j]));
        } else {
          const uint8_t *B = (const uint8_t *)in[ib].data + brow;
          for (size_t j = 0; j < N; j++) acc[j] += (uint32_t)(av * ((int32_t)B[(int64_t)j * gm->b_sn] - bzp[j]));
        }
      }
      mm_store_row(p, out[0].data, (bt * M + m) * N, N, acc);
    }
  }
}

typedef struct mmi_job {
  const mm_params *p;
  const mm_geom *gm;
  const gemm_i32 *gi;
  size_t rows_all, tile_rows, row0; /* rows of this run, rows per task, first output row */
  size_t col_block, col_blocks;     /* columns per task (a multiple of NR), tasks per row tile */
  const uint8_t *a;
  size_t a_stride;
  uint8_t *copy; /* NULL: A's rows are read in place */
  uint32_t *rs, *c0;
  int32_t *y;
  void *out;        /* NULL, or y written from the accumulators above by mm_store_row */
  const int32_t *C; /* QGemm's C or NULL */
  uint8_t x_xor;
  uint32_t xz_u8;
} mmi_job;

/* A's rows [r0, r0 + rows) padded to whole groups of 4 (when K is not) and their sums. */
static const uint8_t *mmi_rows_prep(const mmi_job *jb, size_t r0, size_t rows, size_t *a_stride) {
  const gemm_i32 *gi = jb->gi;
  const size_t K = gi->k;
  const uint8_t *a = jb->a + r0 * K;
  *a_stride = K;
  if (jb->copy != NULL) {
    uint8_t *dst = jb->copy + r0 * gi->a_stride;
    for (size_t r = 0; r < rows; r++) {
      memcpy(dst + r * gi->a_stride, a + r * K, K);
      memset(dst + r * gi->a_stride + K, 0, gi->a_stride - K);
    }
    a = dst;
    *a_stride = gi->a_stride;
  }
  if (gi->need_rowsum) gemm_i32_row_sums(gi, a, *a_stride, rows, jb->x_xor, jb->xz_u8, jb->rs + r0);
  return a;
}

/* Task t: row tile t / col_blocks, columns of block t % col_blocks. With one block, the task also
 * prepares its rows; with several, the caller prepared every row before (mmi_rows_prep). */
static void mmi_tile(void *arg, size_t t) {
  const mmi_job *jb = arg;
  const mm_params *p = jb->p;
  const gemm_i32 *gi = jb->gi;
  const size_t rows_all = jb->rows_all, N = gi->n;
  const size_t cb = t % jb->col_blocks, r0 = t / jb->col_blocks * jb->tile_rows;
  const size_t rows = rows_all - r0 < jb->tile_rows ? rows_all - r0 : jb->tile_rows;
  const size_t j0 = cb * jb->col_block, j1 = j0 + jb->col_block < N ? j0 + jb->col_block : N;
  size_t a_stride;
  const uint8_t *a;
  if (jb->col_blocks == 1) {
    a = mmi_rows_prep(jb, r0, rows, &a_stride);
  } else {
    a_stride = jb->copy != NULL ? gi->a_stride : gi->k;
    a = (jb->copy != NULL ? jb->copy : jb->a) + r0 * a_stride;
  }
  int32_t *y = jb->y + r0 * N;
  gemm_i32_cols(gi, 0, a, a_stride, rows, j0, j1, y, N * sizeof(int32_t), jb->x_xor);
  if (gi->need_rowsum) {
    const uint32_t *rs = jb->rs + r0;
    for (size_t r = 0; r < rows; r++) {
      for (size_t j = j0; j < j1; j++) y[r * N + j] = (int32_t)((uint32_t)y[r * N + j] + jb->c0[j] - gi->d[j] * rs[r]);
    }
  } else {
    for (size_t r = 0; r < rows; r++) {
      for (size_t j = j0; j < j1; j++) y[r * N + j] = (int32_t)((uint32_t)y[r * N + j] + jb->c0[j]);
    }
  }
  if (jb->out == NULL) return;
  const mm_geom *gm = jb->gm;
  for (size_t r = 0; r < rows; r++) {
    uint32_t *acc = (uint32_t *)(y + r * N);
    const int64_t m = (int64_t)(r0 + r);
    if (jb->C != NULL) {
      for (size_t j = j0; j < j1; j++) acc[j] += (uint32_t)jb->C[m * gm->c_sm + (int64_t)j * gm->c_sn];
    }
    mm_store_cols_simd(p, jb->out, (jb->row0 + r0 + r) * N, j0, j1, acc);
  }
}

/* B computed at run (attention's Q x K^T and weights x V): per batch, B packed into the workspace,
 * then the row tiles of that batch. Batches of one or two row tiles (a head of a few dozen rows) are
 * the tasks themselves, each packing its own B into a slot of the workspace (one per thread): the
 * caller packing every batch's B alone left these steps serial. */
#define MM_RT_MAX_SLOTS 64
/* The cost, in multiply-adds of the GEMM kernels (~128 a nanosecond), of one output's fix-up and
 * output stage: scalar loops, ~15 ns an output for 8-bit outputs (rec's attention, 40 x 40 x 15 per
 * head: 0.2 ms a step for 0.2 M multiply-adds), a few for int32 ones; and of one packed byte of a
 * run-time B. */
static size_t mm_stage_cost(const mm_params *p) { return p->y_type == Q8RT_DTYPE_INT32 ? 16 : 2048; }
#define MM_PACK_COST 64

static size_t mm_rt_tile_rows(const gemm_i32 *g) {
  const size_t t = 24576 / (g->a_stride * g->mr);
  return (t < 1 ? 1 : t) * g->mr;
}

static int mm_rt_by_batch(const mm_geom *gm, const gemm_i32 *g) {
  return gm->batches >= 2 && ((size_t)gm->M + mm_rt_tile_rows(g) - 1) / mm_rt_tile_rows(g) <= 2;
}

static size_t mm_rt_slots(const mm_geom *gm, const gemm_i32 *g, size_t threads) {
  if (!mm_rt_by_batch(gm, g)) return 1;
  size_t s = threads < 1 ? 1 : threads < MM_RT_MAX_SLOTS ? threads : MM_RT_MAX_SLOTS;
  return s < gm->batches ? s : gm->batches;
}

typedef struct mm_rt_job {
  const mm_params *p;
  const mm_geom *gm;
  const gemm_i32 *g;
  const mm_rt_layout *l;
  const op_tensor *in;
  op_tensor *out;
  uint8_t *workspace;
  size_t slots;
  int32_t azp;
  atomic_int busy[MM_RT_MAX_SLOTS];
} mm_rt_job;

/* Batch bt with the workspace slot ws: B packed, then its row tiles (on the pool when ctx). */
static void mm_rt_batch(const mm_rt_job *rj, size_t bt, uint8_t *ws, const op_exec_ctx *ctx) {
  const mm_params *p = rj->p;
  const mm_geom *gm = rj->gm;
  const mm_rt_layout *l = rj->l;
  const gemm_i32 *g0 = rj->g;
  const int ib = p->kind == MM_INTEGER ? 1 : 3;
  const size_t M = (size_t)gm->M, N = (size_t)gm->N;
  gemm_i32 g = *g0; /* gemm_i32_pack points g.packed, wsum, d at this slot's buffers */
  int32_t *bzp = (int32_t *)(void *)(ws + l->bzp);
  for (size_t j = 0; j < N; j++) bzp[j] = p->b_zp[p->n_bq == 1 ? 0 : j];
  op_batch_iter it;
  op_batch_iter_init(&it, gm->brank, gm->bdims, gm->sa, gm->sb);
  op_batch_iter_seek(&it, bt);
  gemm_i32_pack(&g, 1, (const uint8_t *)rj->in[ib].data + it.ob, p->b_type, (size_t)gm->b_sn, (size_t)gm->b_sk, bzp,
                ws + l->packed, (uint32_t *)(void *)(ws + l->wsum), (uint32_t *)(void *)(ws + l->d), ws + l->scratch);
  mmi_job jb;
  jb.p = p;
  jb.gm = gm;
  jb.gi = &g;
  jb.rows_all = M;
  jb.tile_rows = mm_rt_tile_rows(&g);
  jb.col_block = N;
  jb.col_blocks = 1;
  jb.copy = g.k % 4 ? ws + l->copy : NULL;
  jb.rs = (uint32_t *)(void *)(ws + l->rs);
  jb.c0 = (uint32_t *)(void *)(ws + l->c0);
  jb.C = p->kind == MM_QGEMM && p->has_c ? rj->in[6].data : NULL;
  const int a_signed = p->a_type == Q8RT_DTYPE_INT8;
  jb.x_xor = a_signed ? 0x80 : 0;
  jb.xz_u8 = (uint32_t)(a_signed ? rj->azp + 128 : rj->azp);
  const int separate = p->y_type != Q8RT_DTYPE_INT32;
  for (size_t j = 0; j < N; j++) jb.c0[j] = 0u - jb.xz_u8 * g.wsum[j];
  jb.a = (const uint8_t *)rj->in[0].data + it.oa;
  jb.row0 = bt * M;
  jb.out = separate ? rj->out[0].data : NULL;
  jb.y = separate ? (int32_t *)(void *)(ws + l->acc) : (int32_t *)rj->out[0].data + bt * M * N;
  const size_t tiles = (M + jb.tile_rows - 1) / jb.tile_rows;
  if (ctx != NULL) {
    /* grain: multiply-adds of ~2 us on the int8 GEMM kernels (conv_fast_run's) */
    op_parallel_items(ctx, tiles, jb.tile_rows * N * (g.k + mm_stage_cost(p)), 1 << 18, mmi_tile, &jb);
  } else {
    for (size_t t = 0; t < tiles; t++) mmi_tile(&jb, t);
  }
}

static void mm_rt_batch_task(void *arg, size_t bt) {
  mm_rt_job *rj = arg;
  size_t s = 0;
  while (atomic_exchange_explicit(&rj->busy[s], 1, memory_order_acquire) != 0) s = s + 1 < rj->slots ? s + 1 : 0;
  mm_rt_batch(rj, bt, rj->workspace + s * rj->l->total, NULL);
  atomic_store_explicit(&rj->busy[s], 0, memory_order_release);
}

static void mm_run_rt(const mm_params *p, const mm_geom *gm, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx) {
  gemm_i32 g;
  gemm_i32_pick((size_t)gm->N, (size_t)gm->K, p->backend, p->isa, &g);
  mm_rt_layout l;
  mm_rt_layout_of(p, gm, &g, &l);
  mm_rt_job rj;
  rj.p = p;
  rj.gm = gm;
  rj.g = &g;
  rj.l = &l;
  rj.in = in;
  rj.out = out;
  rj.workspace = workspace;
  rj.azp = p->a_zp_dynamic ? qk_load8(in[2].data, p->a_type, 0) : p->a_zp;
  if (mm_rt_by_batch(gm, &g)) {
    rj.slots = mm_rt_slots(gm, &g, ctx->threads);
    for (size_t i = 0; i < rj.slots; i++) atomic_init(&rj.busy[i], 0);
    const size_t M = (size_t)gm->M, N = (size_t)gm->N;
    op_parallel_items(ctx, gm->batches, M * N * (g.k + mm_stage_cost(p)) + N * g.k * MM_PACK_COST, 1 << 18,
                      mm_rt_batch_task, &rj);
    return;
  }
  for (size_t bt = 0; bt < gm->batches; bt++) mm_rt_batch(&rj, bt, workspace, ctx);
}

static void mm_run_int(const mm_params *p, const mm_geom *gm, const op_tensor *in, op_tensor *out, void *workspace,
                       const op_exec_ctx *ctx) {
  if (gm->use_rt) {
    mm_run_rt(p, gm, in, out, workspace, ctx);
    return;
  }
  if (gm->use_i32) {
    mmi_job jb;
    jb.p = p;
    jb.gm = gm;
    jb.gi = &p->gi;
    jb.rows_all = mmi_rows(gm);
    jb.tile_rows = gm->tile_rows;
    jb.row0 = 0;
    jb.a = in[0].data;
    const size_t copy = mmi_copy_bytes(p, gm);
    jb.copy = copy ? workspace : NULL;
    jb.rs = (uint32_t *)((uint8_t *)workspace + copy);
    jb.c0 = jb.rs + mmi_rows(gm);
    jb.out = mmi_acc_bytes(p, gm) ? out[0].data : NULL;
    jb.y = mmi_acc_bytes(p, gm) ? (int32_t *)(jb.c0 + p->gi.n) : out[0].data;
    jb.C = p->kind == MM_QGEMM && p->has_c ? in[6].data : NULL;
    const int32_t azp = p->a_zp_dynamic ? qk_load8(in[2].data, p->a_type, 0) : p->a_zp;
    const int a_signed = p->a_type == Q8RT_DTYPE_INT8;
    jb.x_xor = a_signed ? 0x80 : 0;
    jb.xz_u8 = (uint32_t)(a_signed ? azp + 128 : azp);
    for (size_t j = 0; j < p->gi.n; j++) jb.c0[j] = 0u - jb.xz_u8 * p->gi.wsum[j];
    const size_t rows = mmi_rows(gm), tiles = (rows + gm->tile_rows - 1) / gm->tile_rows;
    jb.col_block = gm->col_block;
    jb.col_blocks = (p->gi.n + gm->col_block - 1) / gm->col_block;
    if (jb.col_blocks == 0) jb.col_blocks = 1;
    if (jb.col_blocks > 1) {
      size_t a_stride;
      mmi_rows_prep(&jb, 0, rows, &a_stride); /* once for every column block */
    }
    op_parallel_items(ctx, tiles * jb.col_blocks, gm->tile_rows * jb.col_block * (p->gi.k + mm_stage_cost(p)), 1 << 18,
                      mmi_tile, &jb);
    return;
  }
  if (gm->use_fast) {
    conv_fast_run(&p->gemm, &gm->fg, in[0].data, out[0].data, NULL, ctx);
    return;
  }
  const size_t M = (size_t)gm->M, N = (size_t)gm->N, K = (size_t)gm->K;
  int32_t *bzp = workspace;
  for (size_t j = 0; j < N; j++) bzp[j] = p->b_zp[p->n_bq == 1 ? 0 : j];
  mm_job jb = {p, gm, in, out, bzp, (uint32_t *)(bzp + N), 0, 1};
  jb.azp = p->a_zp_dynamic ? qk_load8(in[2].data, p->a_type, 0) : p->a_zp;
  const size_t rows = gm->batches * M;
  jb.chunks = mm_chunks(ctx->threads);
  if (jb.chunks > rows) jb.chunks = rows > 0 ? rows : 1;
  op_parallel_items(ctx, jb.chunks, (rows / jb.chunks + 1) * N * K, 1 << 15, mm_chunk, &jb);
}

/* MatMulIntegerToFloat: the int32 result converted in place (the Cast, Mul and Add it replaces, in
 * their float32 operations and order), a row of columns at a time when the bias varies by column;
 * ranges of elements or rows split over the pool (each element converts alone). */
typedef struct mmi_vcvt_job {
  const mm_params *p;
  const mm_geom *gm;
  q8rt_s32_vcvt_params vp;
  void *y;
} mmi_vcvt_job;

static void mmi_vcvt_range(void *arg, size_t begin, size_t end) {
  const mmi_vcvt_job *j = arg;
  int32_t *y = (int32_t *)j->y + begin;
  j->p->vcvt(end - begin, y, NULL, y, &j->vp);
}

static void mmi_vcvt_rows(void *arg, size_t begin, size_t end) {
  const mmi_vcvt_job *j = arg;
  for (size_t r = begin; r < end; r++) {
    int32_t *row = (int32_t *)j->y + r * j->gm->ncols;
    j->p->vcvt(j->gm->ncols, row, NULL, row, &j->vp);
  }
}

static void mmi_to_float(const mm_params *p, const mm_geom *gm, const op_tensor *in, void *y, const op_exec_ctx *ctx) {
  mmi_vcvt_job j;
  j.p = p;
  j.gm = gm;
  j.y = y;
  memset(&j.vp, 0, sizeof(j.vp));
  j.vp.scale = p->scale_dynamic ? *(const float *)in[4].data : p->fscale;
  /* grain: ~2 us of conversion */
  if (p->fbias == NULL || p->n_fbias == 1 || gm->ncols <= 1) {
    j.vp.mode = p->fbias == NULL ? Q8RT_S32_VCVT_SCALE : Q8RT_S32_VCVT_SCALE_BIAS;
    j.vp.bias = p->fbias != NULL ? p->fbias[0] : 0.0f;
    op_parallel_range(ctx, gm->out_count, 8192, mmi_vcvt_range, &j);
    return;
  }
  j.vp.mode = Q8RT_S32_VCVT_SCALE_BIASV;
  j.vp.biasv = p->fbias;
  op_parallel_range(ctx, gm->out_count / gm->ncols, (8192 + gm->ncols - 1) / gm->ncols, mmi_vcvt_rows, &j);
}

static void mm_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                   const op_exec_ctx *ctx) {
  const mm_params *p = params;
  const mm_geom *gm = geom;
  mm_run_int(p, gm, in, out, workspace, ctx);
  if (p->to_float) mmi_to_float(p, gm, in, out[0].data, ctx);
}

const op_def q8rt_op_qlinear_matmul = {
    .op_type = "QLinearMatMul",
    .domain = "",
    .min_opset = 10,
    .prepare = qlmm_prepare,
    .infer = mm_infer,
    .workspace = mm_workspace,
    .run = mm_run,
};
const op_def q8rt_op_matmul_integer = {
    .op_type = "MatMulInteger",
    .domain = "",
    .min_opset = 10,
    .prepare = mmi_prepare,
    .infer = mm_infer,
    .workspace = mm_workspace,
    .run = mm_run,
};
const op_def q8rt_op_qgemm = {
    .op_type = "QGemm",
    .domain = "com.microsoft",
    .min_opset = 1,
    .prepare = qgemm_prepare,
    .infer = mm_infer,
    .workspace = mm_workspace,
    .run = mm_run,
};

const op_def q8rt_op_matmul_integer_to_float = {
    .op_type = "MatMulIntegerToFloat",
    .domain = "q8rt",
    .min_opset = 1,
    .prepare = mmi_prepare,
    .infer = mm_infer,
    .workspace = mm_workspace,
    .run = mm_run,
};
