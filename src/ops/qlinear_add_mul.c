/* QLinearAdd and QLinearMul (com.microsoft 1): uint8 or int8 A, B and C of one type, per-tensor
 * constant scales and zero points, numpy broadcasting.
 *
 * The arithmetic is ONNX Runtime's x86-64 MLAS kernels' (the reference these ops are checked
 * against), float32 throughout:
 *
 * QLinearAdd (MlasQLinearAddKernelAvx2Helper, FMA):
 *   rA = sA / sC, rB = sB / sC
 *   F(first, second) = (float)zC - fma(r_first, z_first, r_second * z_second)
 *   y = cvt(fma(x_first, r_first, fma(x_second, r_second, F)))
 *   where "first" is the operand ORT passes as its span (InputA) and "second" the other one.
 *   ORT's broadcaster passes input A first except when A is the "scalar" of the innermost
 *   broadcast run (see add_mode()); in that case B comes first.
 * QLinearMul (MlasQLinearMulKernel, SSE2):
 *   r = (sA * sB) / sC
 *   y = cvt((float)((a - zA) * (b - zB)) * r + (float)zC)
 * cvt: round half to even to int32 (cvtps2dq: out of range -> INT32_MIN), then saturate to int16
 * and to the 8-bit type (= one clamp).
 *
 * Rows: the output's size-1 dims are dropped and neighbouring dims merged where both operands stay
 * contiguous (or stay broadcast), so a per-channel constant in NCHW gives rows of H*W elements and
 * a scalar constant one row. In a row each operand is contiguous or one broadcast value. Those
 * rows run the q8-vbinary kernels (AVX-512 or AVX2+FMA when the CPU has them, their scalar twins
 * with --backend reference); rows shorter than 256 against a row-repeated or per-row broadcast
 * operand run as blocks of many rows, the operand spread into a tile (qbin_tile_shape). The one
 * case the kernels do not take (Add with ORT's first operand broadcast,
 * which ORT's broadcaster never produces) runs the per-element loop below. */
#include <math.h>
#include <string.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "qlinear_common.h"

enum { BIN_ADD, BIN_MUL };

typedef struct qbin_params {
  int kind;
  int nhwc;   /* activations channels-last: ORT's operand order still follows the NCHW shapes */
  int via_u8; /* int8 data computed as its uint8 twin (OP_ATTR_U8_FORMULA): rows go through the
               * uint8 kernels on values ^ 0x80, the parameters below are the twin's */
  q8rt_dtype type;
  int32_t za, zb, zc;
  float ra, rb; /* add: sA/sC, sB/sC */
  float f_ab;   /* add: fixed part with A first */
  float f_ba;   /* add: fixed part with B first */
  float ratio;  /* mul: sA*sB/sC */
  float zcf;    /* mul: (float)zC */
  int32_t qmin, qmax;
  /* row kernels: x1 = A, x2 = B (ab) or x1 = B, x2 = A (ba) */
  q8rt_q8_vbinary_params k_ab, k_ba;
  q8rt_qu8_vbinary_ukernel_fn u8_full, u8_bcast;
  q8rt_qs8_vbinary_ukernel_fn s8_full, s8_bcast;
  /* nhwc with a per-channel constant ([C,1,1], [1,C,1,1]: one value per channel): the input it
   * is (0: A, 3: B; -1: none) and its C values repeated pc_rep times, so a row of pc_rep pixels
   * is one full-vector kernel call with the same operand order as NCHW's broadcast one */
  int pc_input;
  size_t pc_c, pc_rep;
  const uint8_t *pc_tile;
} qbin_params;

/* One ISA's q8-vbinary functions, from kernels/q8-vbinary/q8-vbinary.inc (best first). */
typedef struct vbinary_set {
  uint32_t isa;
  const char *add_name, *mul_name;
  q8rt_qu8_vbinary_ukernel_fn u8_add, u8_addc, u8_mul, u8_mulc;
  q8rt_qs8_vbinary_ukernel_fn s8_add, s8_addc, s8_mul, s8_mulc;
} vbinary_set;

static const vbinary_set g_vbinary[] = {
#define Q8RT_VBINARY_UKERNELS(isa_flag, isa) \
  {isa_flag,                                 \
   "q8_vadd_ukernel__" #isa,                 \
   "q8_vmul_ukernel__" #isa,                 \
   q8rt_qu8_vadd_ukernel__##isa,             \
   q8rt_qu8_vaddc_ukernel__##isa,            \
   q8rt_qu8_vmul_ukernel__##isa,             \
   q8rt_qu8_vmulc_ukernel__##isa,            \
   q8rt_qs8_vadd_ukernel__##isa,             \
   q8rt_qs8_vaddc_ukernel__##isa,            \
   q8rt_qs8_vmul_ukernel__##isa,             \
   q8rt_qs8_vmulc_ukernel__##isa},
#include "q8-vbinary/q8-vbinary.inc"
#undef Q8RT_VBINARY_UKERNELS
};

typedef struct qbin_geom {
  int rank;    /* merged rank (>= 1): size-1 dims dropped, continuing dims merged */
  int b_first; /* add: B is ORT's first operand (A is the scalar of the run) */
  int64_t dims[Q8RT_MAX_RANK];
  int64_t sa[Q8RT_MAX_RANK], sb[Q8RT_MAX_RANK];
  size_t total;
  /* short rows against a broadcast operand (qbin_tile_shape): the last two dims [rows, len] run
   * as one block of rows * len with the broadcast operand spread into a tile */
  int tile;   /* QBIN_TILE_NONE, _PERIODIC (operand [1, len]), _EXPANDED (operand [rows, 1]) */
  int tile_b; /* the spread operand is B (else A) */
  size_t tile_len;
} qbin_geom;

enum { QBIN_TILE_NONE, QBIN_TILE_PERIODIC, QBIN_TILE_EXPANDED };

_Static_assert(sizeof(qbin_geom) <= Q8RT_GEOM_BYTES, "geometry must fit");

static q8rt_status qbin_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err, int kind) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  if (n->n_inputs < 7 || n->n_inputs > 8 || n->n_outputs != 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 7 or 8 inputs and 1 output", n->op_type,
                     n->name);
  }
  if (ir_node_input(g, n, 0) == NULL || ir_node_input(g, n, 3) == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': inputs A and B are required", n->op_type, n->name);
  }
  qbin_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->kind = kind;
  p->pc_input = -1;
  p->pc_c = p->pc_rep = 0;
  p->pc_tile = NULL;
  float sa, sb, sc;
  q8rt_status st;
  q8rt_dtype t = qk_input_type(g, n, 0);
  if (t != Q8RT_DTYPE_UNDEFINED && !q8rt_dtype_is_8bit(t)) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input A is %s (uint8 or int8 expected)", n->op_type,
                     n->name, q8rt_onnx_type_name(t));
  }
  if ((st = op_const_scale(g, n, 1, "A_scale", &sa, err)) != Q8RT_OK) return st;
  if ((st = qk_zero_point(g, n, 2, "A_zero_point", t, &p->za, &t, err)) != Q8RT_OK) return st;
  if ((st = op_const_scale(g, n, 4, "B_scale", &sb, err)) != Q8RT_OK) return st;
  if ((st = qk_zero_point(g, n, 5, "B_zero_point", t, &p->zb, &t, err)) != Q8RT_OK) return st;
  if ((st = op_const_scale(g, n, 6, "C_scale", &sc, err)) != Q8RT_OK) return st;
  if ((st = qk_zero_point(g, n, 7, "C_zero_point", t, &p->zc, &t, err)) != Q8RT_OK) return st;
  if (t == Q8RT_DTYPE_UNDEFINED) t = Q8RT_DTYPE_UINT8;
  p->type = t;
  int64_t u8_formula = 0;
  if (kind == BIN_ADD && (st = ir_attr_int(n, OP_ATTR_U8_FORMULA, 0, &u8_formula, err)) != Q8RT_OK) return st;
  p->via_u8 = u8_formula != 0 && t == Q8RT_DTYPE_INT8;
  if (p->via_u8) {
    p->za += 128;
    p->zb += 128;
    p->zc += 128;
  }
  q8rt_dtype_range(p->via_u8 ? Q8RT_DTYPE_UINT8 : t, &p->qmin, &p->qmax);
  if (kind == BIN_ADD) {
    p->ra = sa / sc;
    p->rb = sb / sc;
    p->f_ab = (float)p->zc - fmaf(p->ra, (float)p->za, p->rb * (float)p->zb);
    p->f_ba = (float)p->zc - fmaf(p->rb, (float)p->zb, p->ra * (float)p->za);
  } else {
    p->ratio = sa * sb / sc;
    p->zcf = (float)p->zc;
  }
  p->k_ab = (q8rt_q8_vbinary_params){
      .r1 = p->ra, .r2 = p->rb, .f = p->f_ab, .ratio = p->ratio, .zc = p->zcf, .z1 = p->za, .z2 = p->zb};
  p->k_ba = (q8rt_q8_vbinary_params){
      .r1 = p->rb, .r2 = p->ra, .f = p->f_ba, .ratio = p->ratio, .zc = p->zcf, .z1 = p->zb, .z2 = p->za};
  p->k_ab.flip = p->k_ba.flip = p->via_u8 ? 0x80 : 0; /* the uint8 kernels flip the bytes in and out */
  const vbinary_set *k = &g_vbinary[OP_FIRST_USABLE(g_vbinary, ctx->isa, ctx->backend)];
  if (kind == BIN_ADD) {
    p->u8_full = k->u8_add, p->u8_bcast = k->u8_addc, p->s8_full = k->s8_add, p->s8_bcast = k->s8_addc;
  } else {
    p->u8_full = k->u8_mul, p->u8_bcast = k->u8_mulc, p->s8_full = k->s8_mul, p->s8_bcast = k->s8_mulc;
  }
  ctx->kernel = kind == BIN_ADD ? k->add_name : k->mul_name;
  if (p->via_u8) {
    ctx->reason = k->isa == Q8RT_ISA_SCALAR ? "ONNX Runtime MLAS formula of the uint8 twin (int8 QDQ)"
                                            : "ONNX Runtime MLAS formula of the uint8 twin (int8 QDQ), vectorized rows";
  } else {
    ctx->reason =
        k->isa == Q8RT_ISA_SCALAR ? "ONNX Runtime MLAS formula" : "ONNX Runtime MLAS formula, vectorized rows (exact)";
  }
  *out = p;
  return Q8RT_OK;
}

static q8rt_status qadd_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return qbin_prepare(ctx, out, err, BIN_ADD);
}
static q8rt_status qmul_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return qbin_prepare(ctx, out, err, BIN_MUL);
}

/* Whether ORT's Broadcaster treats input A as the scalar of its innermost run (then its
 * QLinearAdd passes B as the span operand, i.e. first). Mirrors Broadcaster's construction:
 * innermost dims of size 1 in both are skipped except the last common one; a rank-0 input is a
 * broadcast of the other's innermost dim. */
static int a_is_run_scalar(const op_shape *a, const op_shape *b) {
  const int dmin = a->rank < b->rank ? a->rank : b->rank;
  if (dmin == 0) {
    if (a->rank == 0) return 1;
    return a->dims[a->rank - 1] <= 1;
  }
  for (int i = 0; i < dmin; i++) {
    const int64_t x = a->dims[a->rank - 1 - i], y = b->dims[b->rank - 1 - i];
    const int64_t largest = x > y ? x : y;
    if (largest == 1 && i + 1 < dmin) continue;
    return x <= 1;
  }
  return 0;
}

/* Rows shorter than this against a broadcast operand run tiled (one kernel call costs about
 * QBIN_SPAN_COST elements) */
#define QBIN_TILE_MAX_LEN 256
/* Elements per kernel call on the tiled path (a stack tile of this plus one row) */
#define QBIN_TILE_ELEMS 1024

/* The tiled form of short rows: the merged last two dims [rows, len] with len short, one operand
 * contiguous over both (strides len, 1) and the other the same row repeated (0, 1: a per-channel
 * vector against channels-last, or any trailing-axis broadcast) or one value per row (1, 0: a
 * per-channel value against NCHW planes of few pixels). A block of rows * len then runs as
 * kernel calls of ~QBIN_TILE_ELEMS elements, the broadcast operand spread into a tile: each
 * output element still pairs the same two input bytes through the same full-row kernel (both
 * operands contiguous, same operand order), so the bytes are those of one call per row. */
static void qbin_tile_shape(qbin_geom *gm) {
  gm->tile = QBIN_TILE_NONE;
  const int r = gm->rank;
  if (r < 2) return;
  const int64_t len = gm->dims[r - 1];
  if (len >= QBIN_TILE_MAX_LEN || gm->dims[r - 2] < 2) return;
  for (int k = 0; k < 2; k++) {
    const int64_t *sc = k == 0 ? gm->sa : gm->sb; /* contiguous one */
    const int64_t *sx = k == 0 ? gm->sb : gm->sa; /* broadcast one */
    if (sc[r - 1] != 1 || sc[r - 2] != len) continue;
    if (sx[r - 2] == 0 && sx[r - 1] == 1) {
      gm->tile = QBIN_TILE_PERIODIC;
    } else if (sx[r - 2] == 1 && sx[r - 1] == 0) {
      gm->tile = QBIN_TILE_EXPANDED;
    } else {
      continue;
    }
    gm->tile_b = k == 0;
    gm->tile_len = (size_t)len;
    return;
  }
}

static q8rt_status qbin_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                              void *geom, q8rt_error *err) {
  const qbin_params *p = params;
  static const char *const names[2] = {"A", "B"};
  for (int k = 0; k < 2; k++) {
    const op_shape *s = &in[k * 3];
    q8rt_status st = qk_check_input_type(n, names[k], s->dtype, p->type, err);
    if (st != Q8RT_OK) return st;
  }
  if (p->pc_input >= 0) { /* channels-last activation, per-channel constant: y has x's shape */
    const op_shape *x = &in[3 - p->pc_input];
    if (x->rank >= 3 && x->dims[x->rank - 1] >= 0 && (size_t)x->dims[x->rank - 1] != p->pc_c) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input has %lld channels, its constant %zu", n->op_type,
                       n->name, (long long)x->dims[x->rank - 1], p->pc_c);
    }
    *out = *x;
    out->dtype = p->type;
    if (!concrete) return Q8RT_OK;
    qbin_geom *gm = geom;
    memset(gm, 0, sizeof(*gm));
    op_shape la = *x;
    op_shape_nchw_of_nhwc(&la);
    const op_shape *lc = &in[p->pc_input];
    gm->b_first = p->pc_input == 0 ? a_is_run_scalar(lc, &la) : a_is_run_scalar(&la, lc);
    gm->total = op_shape_count(x);
    gm->rank = 1;
    return Q8RT_OK;
  }
  const op_shape *shapes[2] = {&in[0], &in[3]};
  q8rt_status st = op_broadcast_shapes(n, shapes, 2, out, err);
  if (st != Q8RT_OK) return st;
  out->dtype = p->type;
  if (!concrete) return Q8RT_OK;
  qbin_geom *gm = geom;
  memset(gm, 0, sizeof(*gm));
  op_shape o = *out;
  if (o.rank == 0) { /* treat as [1] */
    o.rank = 1;
    o.dims[0] = 1;
  }
  gm->rank = op_broadcast_merge(&in[0], &in[3], &o, gm->dims, gm->sa, gm->sb);
  gm->total = op_shape_count(&o);
  qbin_tile_shape(gm);
  if (p->nhwc) {
    op_shape la = in[0], lb = in[3];
    op_shape_nchw_of_nhwc(&la);
    op_shape_nchw_of_nhwc(&lb);
    gm->b_first = a_is_run_scalar(&la, &lb);
  } else {
    gm->b_first = a_is_run_scalar(&in[0], &in[3]);
  }
  return Q8RT_OK;
}

static inline int32_t add_elem(const qbin_params *p, int b_first, int32_t a, int32_t b) {
  float v;
  if (b_first) {
    v = fmaf((float)b, p->rb, fmaf((float)a, p->ra, p->f_ba));
  } else {
    v = fmaf((float)a, p->ra, fmaf((float)b, p->rb, p->f_ab));
  }
  return qk_clamp(q8rt_cvt_rne(v), p->qmin, p->qmax);
}

static inline int32_t mul_elem(const qbin_params *p, int32_t a, int32_t b) {
  const int32_t prod = (int32_t)(int16_t)(a - p->za) * (int32_t)(int16_t)(b - p->zb);
  const float v = (float)prod * p->ratio + p->zcf;
  return qk_clamp(q8rt_cvt_rne(v), p->qmin, p->qmax);
}

/* Per-element loop for rows the kernels do not take, specialized per type (is_signed constant);
 * bytes in and out XORed with flip as the kernels do. */
static inline __attribute__((always_inline)) void qbin_row_t(const qbin_params *p, int b_first, const void *A,
                                                             size_t sa, const void *B, size_t sb, void *Y, size_t len,
                                                             int is_signed, uint8_t flip) {
  const uint8_t *a8 = A, *b8 = B;
  uint8_t *y8 = Y;
  for (size_t i = 0; i < len; i++) {
    const uint8_t ab = (uint8_t)(a8[i * sa] ^ flip), bb = (uint8_t)(b8[i * sb] ^ flip);
    const int32_t a = is_signed ? (int32_t)(int8_t)ab : (int32_t)ab;
    const int32_t b = is_signed ? (int32_t)(int8_t)bb : (int32_t)bb;
    const int32_t v = p->kind == BIN_ADD ? add_elem(p, b_first, a, b) : mul_elem(p, a, b);
    y8[i] = (uint8_t)((uint8_t)v ^ flip);
  }
}

/* One row of `len` outputs; sa, sb (the operands' element strides in the row) are 0 or 1. */
static void qbin_row_typed(const qbin_params *p, int b_first, const void *A, size_t sa, const void *B, size_t sb,
                           void *Y, size_t len, int s8) {
  if (len == 1) sa = sb = 1;
  const q8rt_q8_vbinary_params *kp = NULL;
  const void *x1 = NULL, *x2 = NULL;
  int bcast = 0;
  if (sa == 1 && sb == 1) {
    /* add: ORT's first operand is x1; mul: either order gives the same bytes */
    kp = b_first ? &p->k_ba : &p->k_ab;
    x1 = b_first ? B : A;
    x2 = b_first ? A : B;
  } else if (sa == 1 && sb == 0 && (p->kind == BIN_MUL || !b_first)) {
    kp = &p->k_ab, x1 = A, x2 = B, bcast = 1;
  } else if (sa == 0 && sb == 1 && (p->kind == BIN_MUL || b_first)) {
    kp = &p->k_ba, x1 = B, x2 = A, bcast = 1;
  }
  if (kp != NULL) {
    if (s8) {
      (bcast ? p->s8_bcast : p->s8_full)(len, x1, x2, Y, kp);
    } else {
      (bcast ? p->u8_bcast : p->u8_full)(len, x1, x2, Y, kp);
    }
    return;
  }
  if (s8) {
    qbin_row_t(p, b_first, A, sa, B, sb, Y, len, 1, 0);
  } else {
    qbin_row_t(p, b_first, A, sa, B, sb, Y, len, 0, p->via_u8 ? 0x80 : 0);
  }
}

/* int8 data computed as its uint8 twin (via_u8) runs the uint8 kernels, which flip the bytes in
 * and out (k_ab.flip, k_ba.flip) */
static void qbin_row(const qbin_params *p, int b_first, const void *A, size_t sa, const void *B, size_t sb, void *Y,
                     size_t len) {
  qbin_row_typed(p, b_first, A, sa, B, sb, Y, len, p->type == Q8RT_DTYPE_INT8 && !p->via_u8);
}

typedef struct qbin_job {
  const qbin_params *p;
  const qbin_geom *gm;
  const uint8_t *a, *b;
  uint8_t *y;
} qbin_job;

static void qbin_span(void *arg, size_t oa, size_t ob, size_t oy, size_t len) {
  const qbin_job *j = arg;
  const int r = j->gm->rank;
  qbin_row(j->p, j->gm->b_first, j->a + oa, (size_t)j->gm->sa[r - 1], j->b + ob, (size_t)j->gm->sb[r - 1], j->y + oy,
           len);
}

static void qbin_range(void *arg, size_t begin, size_t end) {
  const qbin_job *j = arg;
  op_span_walk(j->gm->rank, j->gm->dims, j->gm->sa, j->gm->sb, begin, end, qbin_span, arg);
}

#define QBIN_GRAIN 16384   /* elements: ~1.5 us on the AVX2 kernels */
#define QBIN_SPAN_COST 128 /* elements' worth of one span's call (see qbin_run) */

/* Tiled form (qbin_tile_shape): the walk's innermost dim is the block [rows, len] as one
 * contiguous run of `block` elements (the fake stride 1 is right for the contiguous operand and
 * the output; the broadcast operand's offset is its block start plus the position in the block
 * folded by len). */
typedef struct qbin_tile_job {
  qbin_job j;
  size_t block;
} qbin_tile_job;

static void qbin_tile_span(void *arg, size_t oa, size_t ob, size_t oy, size_t len) {
  const qbin_tile_job *t = arg;
  const qbin_job *j = &t->j;
  const qbin_geom *gm = j->gm;
  const size_t rl = gm->tile_len;
  const size_t pos = oy % t->block;                                   /* position in the block */
  const uint8_t *xb = gm->tile_b ? j->b + ob - pos : j->a + oa - pos; /* broadcast operand's block */
  const size_t oc = gm->tile_b ? oa : ob;                             /* contiguous one's offset */
  const uint8_t *xc = gm->tile_b ? j->a : j->b;
  uint8_t tile[QBIN_TILE_ELEMS + QBIN_TILE_MAX_LEN];
  size_t per = QBIN_TILE_ELEMS; /* elements a call */
  if (gm->tile == QBIN_TILE_PERIODIC) {
    per = QBIN_TILE_ELEMS / rl * rl;
    for (size_t q = 0; q < per + rl; q += rl) memcpy(tile + q, xb, rl);
  }
  for (size_t done = 0; done < len;) {
    const size_t p0 = pos + done;
    const size_t n = len - done < per ? len - done : per;
    const uint8_t *x;
    if (gm->tile == QBIN_TILE_PERIODIC) {
      x = tile + p0 % rl;
    } else {
      size_t i = 0;
      while (i < n) {
        const size_t row = (p0 + i) / rl, end = (row + 1) * rl - p0;
        const size_t m = (end < n ? end : n) - i;
        memset(tile + i, xb[row], m);
        i += m;
      }
      x = tile;
    }
    const uint8_t *c = xc + oc + done;
    qbin_row(j->p, gm->b_first, gm->tile_b ? c : x, 1, gm->tile_b ? x : c, 1, j->y + oy + done, n);
    done += n;
  }
}

static void qbin_tile_range(void *arg, size_t begin, size_t end) {
  const qbin_tile_job *t = arg;
  const qbin_geom *gm = t->j.gm;
  const int r = gm->rank - 1;
  int64_t dims[Q8RT_MAX_RANK], sa[Q8RT_MAX_RANK], sb[Q8RT_MAX_RANK];
  for (int d = 0; d < r - 1; d++) dims[d] = gm->dims[d], sa[d] = gm->sa[d], sb[d] = gm->sb[d];
  dims[r - 1] = (int64_t)t->block;
  sa[r - 1] = sb[r - 1] = 1;
  op_span_walk(r, dims, sa, sb, begin, end, qbin_tile_span, arg);
}

/* Channels-last with a per-channel constant: pixels [begin, end), pc_rep at a time. */
static void qbin_pc_range(void *arg, size_t begin, size_t end) {
  const qbin_job *j = arg;
  const qbin_params *p = j->p;
  const size_t c = p->pc_c;
  for (size_t px = begin; px < end; px += p->pc_rep) {
    const size_t len = (end - px < p->pc_rep ? end - px : p->pc_rep) * c;
    const uint8_t *x = (p->pc_input == 0 ? j->b : j->a) + px * c;
    qbin_row(p, j->gm->b_first, p->pc_input == 0 ? p->pc_tile : x, 1, p->pc_input == 0 ? x : p->pc_tile, 1,
             j->y + px * c, len);
  }
}

static void qbin_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  (void)workspace;
  const qbin_params *p = params;
  const qbin_geom *gm = geom;
  if (p->pc_input >= 0) {
    if (gm->total == 0 || p->pc_c == 0) return;
    qbin_job j = {p, gm, in[0].data, in[3].data, out[0].data};
    op_parallel_range(ctx, gm->total / p->pc_c, QBIN_GRAIN / p->pc_c + 1, qbin_pc_range, &j);
    return;
  }
  if (gm->dims[gm->rank - 1] == 0 || gm->total == 0) return;
  qbin_job j = {p, gm, in[0].data, in[3].data, out[0].data};
  if (gm->tile != QBIN_TILE_NONE) {
    qbin_tile_job t = {j, (size_t)(gm->dims[gm->rank - 2] * gm->dims[gm->rank - 1])};
    op_parallel_range(ctx, gm->total, QBIN_GRAIN, qbin_tile_range, &t);
    return;
  }
  /* a span (one kernel call, op_span_walk) costs about QBIN_SPAN_COST elements more: on short
   * spans the grain holds fewer elements (det's QLinearMul by a per-channel factor computed at run,
   * spans of 24 channels, ran ~0.6 ns an element against ~0.16 on rec's spans of 240, and its
   * 22 us stayed on one thread; such short rows against a broadcast operand now run tiled, above).
   * Operands of one shape merge into one span as long as the tensor: its call is nothing next to
   * QBIN_GRAIN elements, which stay the grain (the grain must not fall to 0 there: a 25600-element
   * QLinearAdd, ~3 us, split into 64 ranges of 400 bytes) */
  const size_t span = (size_t)gm->dims[gm->rank - 1];
  const size_t grain = span >= QBIN_GRAIN ? QBIN_GRAIN : QBIN_GRAIN * span / (span + QBIN_SPAN_COST) + 1;
  op_parallel_range(ctx, gm->total, grain, qbin_range, &j);
}

/* Channels per row at most for the per-channel form's repeated constant. */
#define QBIN_PC_TILE 256

/* Whether constant t holds one value per channel of an activation of rank `rank` (3 or 4): its
 * dims right-aligned to the activation's, all 1 but the channel axis (1). Sets *c. */
static int per_channel_const(const ir_tensor *t, int rank, size_t *c) {
  if (t->rank > rank || t->count <= 1) return 0;
  for (int j = 0; j < t->rank; j++) {
    const int d = rank - t->rank + j;
    if (t->dims[j] != 1 && d != 1) return 0;
  }
  *c = (size_t)t->count;
  return 1;
}

/* Channels-last: elementwise, so the same bytes whenever A and B are activations of one rank or
 * scalars (broadcasting then pairs the same elements in either layout); a constant with one value
 * per channel runs against rows of whole pixels with the constant repeated along them (ORT's
 * operand order from the NCHW shapes, the kernels' arithmetic does not depend on the form). */
static const void *qbin_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool,
                             const char **why) {
  int rank = -1, pc_input = -1;
  const ir_tensor *pc = NULL;
  for (int k = 0; k < 2; k++) {
    const ir_value *v = ir_node_input(g, n, 3 * k);
    if (v == NULL) return NULL;
    if (v->constant != NULL) {
      if (v->constant->count != 1) {
        if (pc != NULL) return NULL;
        pc = v->constant;
        pc_input = 3 * k;
      }
      continue;
    }
    if (rank >= 0 && v->rank != rank) return NULL;
    rank = v->rank;
  }
  size_t c = 0;
  if (pc != NULL &&
      (rank < 3 || !per_channel_const(pc, rank, &c) || pc->data == NULL || q8rt_dtype_size(pc->dtype) != 1)) {
    *why = "a constant operand that is not one value per channel";
    return NULL;
  }
  qbin_params *q = q8rt_pool_alloc(pool, sizeof(*q), 16);
  if (q == NULL) return NULL;
  *q = *(const qbin_params *)params;
  q->nhwc = 1;
  if (pc != NULL) {
    const size_t rep = c < QBIN_PC_TILE ? QBIN_PC_TILE / c : 1;
    uint8_t *tile = q8rt_pool_alloc(pool, rep * c, 64);
    if (tile == NULL) return NULL;
    for (size_t r = 0; r < rep; r++) memcpy(tile + r * c, pc->data, c);
    q->pc_input = pc_input;
    q->pc_c = c;
    q->pc_rep = rep;
    q->pc_tile = tile;
    *why = "the per-channel constant repeated along rows of whole pixels";
  }
  return q;
}

const op_def q8rt_op_qlinear_add = {
    .op_type = "QLinearAdd",
    .domain = "com.microsoft",
    .min_opset = 1,
    .prepare = qadd_prepare,
    .infer = qbin_infer,
    .run = qbin_run,
    .nhwc_params = qbin_nhwc,
};
const op_def q8rt_op_qlinear_mul = {
    .op_type = "QLinearMul",
    .domain = "com.microsoft",
    .min_opset = 1,
    .prepare = qmul_prepare,
    .infer = qbin_infer,
    .run = qbin_run,
    .nhwc_params = qbin_nhwc,
};
