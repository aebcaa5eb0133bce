/* QLinearConv's paths: NHWC GEMM (with im2col where needed) and depthwise, on the kernels listed
 * in kernels/qu8-qc8w-gemm and kernels/qu8-dwconv, and the direct NCHW kernels of
 * kernels/q8-conv-ref, chosen per node at load. */
#ifndef Q8RT_CONV_PATHS_H
#define Q8RT_CONV_PATHS_H

#include "backends/xnnpack.h"
#include "op.h"
#include "q8rt-kernels.h"

/* DW_CHW, GEMM_CHW: depthwise on NCHW planes and the GEMM on NCHW activations (input and output
 * NCHW: a single-conv model's edges need no layout change); the others but REF run NHWC. */
enum conv_path {
  CONV_PATH_NONE = 0,
  CONV_PATH_REF,
  CONV_PATH_GEMM,
  CONV_PATH_DW,
  CONV_PATH_XNN,
  CONV_PATH_DW_CHW,
  CONV_PATH_GEMM_CHW
};

typedef struct conv_choice {
  q8rt_backend backend;
  uint32_t isa;
  int allow_xnnpack;
} conv_choice;

void conv_choice_init(conv_choice *c, q8rt_backend backend, uint32_t isa);

/* What the front-end knows after validating the node. */
typedef struct conv_fast_desc {
  size_t out_c, in_c_per_group, groups, kernel_h, kernel_w;
  const int16_t *w; /* [M][C/g][kh][kw], zero point removed */
  const int32_t *bias;
  const float *scale;
  int x_signed, y_signed;
  int32_t x_zero_point, y_zero_point;
  int32_t y_min, y_max; /* output clamp in the quantized domain (the type's range unless a Relu/Clip was fused) */
  size_t stride_h, stride_w, dilation_h, dilation_w;
  int want_chw;     /* the planner prefers NCHW in and out (input NCHW only, output read by graph outputs only) */
  size_t in_w_hint; /* the input's width when the model fixes it, else 0 */
} conv_fast_desc;

typedef struct conv_fast {
  enum conv_path path; /* NONE: no q8rt fast kernel (reason says why) */
  const char *kernel;
  const char *reason;
  size_t out_c, k, a_stride; /* GEMM: K = kh*kw*C, rows padded to a multiple of 4 */
  size_t mr, nr, cb, taps;
  q8rt_qu8_gemm_ukernel_fn gemm;
  q8rt_qu8_gemm_seg_ukernel_fn gemm_seg; /* GEMM: the same packing read by segmented rows, or NULL */
  q8rt_qu8_dwconv_ukernel_fn dw;
  q8rt_q8_conv_ref_ukernel_fn ref; /* CONV_PATH_REF */
  q8rt_qu8_qc8w_dwconv2d_chw_ukernel_fn dw_chw;
  size_t chw_bytes; /* DW_CHW: packed bytes per channel; GEMM_CHW: per block of MR channels */
  q8rt_qu8_gemm_chw_ukernel_fn gemm_chw;
  q8rt_x8_zip_x4_ukernel_fn zip;
  const void *packed;
  q8rt_qu8_requant_params rq;
  uint8_t x_zp_raw;      /* the activation zero point as stored (padding value) */
  const uint8_t *table;  /* applied to each output tile as it is written (a fused island), or NULL */
  size_t table_channels; /* 1, or out_c tables */
  q8rt_x8_lut_ukernel_fn lut;
  q8rt_x8_lut_rows_ukernel_fn lut_rows; /* the same kernel's rows form (output rows of a wider tensor) */
  q8rt_x8_lutc_ukernel_fn lutc;         /* x8-lutc: per-channel tables on output pixels (channels innermost) */
} conv_fast;

typedef struct conv_fast_geom {
  size_t batch, in_h, in_w, in_c, out_h, out_w;
  size_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
  size_t pad_bottom, pad_right; /* XNNPACK only */
  size_t rows;                  /* output pixels: batch * out_h * out_w */
  size_t tile_rows;             /* GEMM rows per im2col tile; GEMM_CHW: pixels per panel */
  int direct;                   /* 1x1, stride 1, no padding: the input is the GEMM's A (GEMM_CHW: the panels' rows) */
  /* GEMM: bytes from one output row (pixel) to the next; 0 = out_c (dense). Wider when the output
   * is a slice of a Concat's output (conv_fast_set_y_stride); 32 bits: it fits beside `direct`
   * (the geometry records are full) */
  uint32_t y_stride;
  size_t col_block;            /* GEMM direct, few rows, large B: tasks are blocks of this many channels over all
                                  rows (0: tasks are row tiles) */
  const uint8_t **indirection; /* depthwise: rows * taps pointers (workspace) */
  q8rt_xnn_conv *xnn;
} conv_fast_geom;

/* Whether the path reads and writes NCHW (REF, DW_CHW) rather than NHWC. */
int conv_fast_nchw(const conv_fast *f);

/* Sets f to the direct NCHW path (CONV_PATH_REF) on the first usable kernel of q8-conv-ref.inc. */
void conv_ref_choose(const conv_choice *choice, conv_fast *f);

q8rt_status conv_fast_prepare(const conv_fast_desc *d, const conv_choice *choice, q8rt_pool *pool, conv_fast *out,
                              q8rt_error *err);
void conv_fast_geom_init(const conv_fast *f, const q8rt_q8_conv_ref_params *r, conv_fast_geom *g);
size_t conv_fast_workspace(const conv_fast *f, const conv_fast_geom *g, size_t threads);
void conv_fast_bind(const conv_fast *f, conv_fast_geom *g, const void *x, void *workspace);
/* Write the output's pixels `stride` bytes apart (>= out_c) instead of densely: only the NHWC GEMM
 * path does (every store it makes goes through the row stride, the table pass included). Returns 1
 * when set, 0 when this path writes densely only. */
int conv_fast_set_y_stride(const conv_fast *f, conv_fast_geom *g, size_t stride);
void conv_fast_run(const conv_fast *f, const conv_fast_geom *g, const void *x, void *y, void *workspace,
                   const op_exec_ctx *ctx);

/* The int32-output GEMM (ConvInteger, MatMulInteger): weights packed as int8 w8 = w - o (o = 128
 * for uint8 weights, 0 for int8: always fits) with no bias, so the kernel's accumulator is
 * acc = sum_k x * w8 with x in the uint8 domain (x ^ x_xor). The exact result is then
 *   sum_k (x - x_zp)(w - w_zp[n]) = acc - x_zp * wsum[n] - d[n] * (sum_k x - K * x_zp)
 * with d[n] = w_zp[n] - o, modulo 2^32 as the int32 accumulator: any run-time x_zp and uint8
 * weights with any zero point stay exact; the row sums are needed only when some d[n] != 0. */
typedef struct gemm_i32 {
  q8rt_qu8_gemm_ukernel_fn fn; /* NULL: no kernel for this CPU/backend */
  const char *kernel;
  size_t mr, nr, n, k, a_stride; /* n per group; a_stride = round_up(k, 4) */
  size_t group_bytes;            /* packed bytes per group */
  const uint8_t *packed;
  uint32_t *wsum, *d; /* [groups * n] */
  int need_rowsum;
  void (*rsum)(size_t rows, size_t n, const uint8_t *x, size_t stride, int is_signed, int32_t *out); /* x8-rsum */
} gemm_i32;

/* w[g*n + j][k] at w + (g*n + j) * w_sn + k * w_sk; w_zp[groups * n]. Leaves fn NULL (and
 * returns Q8RT_OK) for the reference backend or when no variant fits the CPU. */
q8rt_status gemm_i32_prepare(size_t groups, size_t n, size_t k, const void *w, q8rt_dtype w_type, size_t w_sn,
                             size_t w_sk, const int32_t *w_zp, q8rt_backend backend, uint32_t isa, q8rt_pool *pool,
                             gemm_i32 *out, q8rt_error *err);
/* The variant for an n x k B without packing it (fn NULL: none for this CPU/backend), for a B
 * known only at run time: pack it with gemm_i32_pack into caller memory (group_bytes per group,
 * groups * n wsum and d, gemm_i32_pack_scratch bytes of scratch), as gemm_i32_prepare does. */
void gemm_i32_pick(size_t n, size_t k, q8rt_backend backend, uint32_t isa, gemm_i32 *out);
size_t gemm_i32_pack_scratch(const gemm_i32 *g);
void gemm_i32_pack(gemm_i32 *g, size_t groups, const void *w, q8rt_dtype w_type, size_t w_sn, size_t w_sk,
                   const int32_t *w_zp, uint8_t *packed, uint32_t *wsum, uint32_t *d, void *scratch);
/* acc rows [rows][n] (c_stride bytes) of group g from A rows readable to a_stride bytes. */
void gemm_i32_rows(const gemm_i32 *g, size_t group, const uint8_t *a, size_t a_stride, size_t rows, int32_t *c,
                   size_t c_stride, uint8_t x_xor);
/* Columns [n_lo, n_hi) only (n_lo a multiple of nr); c points at column 0 as for gemm_i32_rows. */
void gemm_i32_cols(const gemm_i32 *g, size_t group, const uint8_t *a, size_t a_stride, size_t rows, size_t n_lo,
                   size_t n_hi, int32_t *c, size_t c_stride, uint8_t x_xor);
/* rs[r] = sum_k (a[r][k] ^ x_xor) - K * x_zp_u8 (mod 2^32) */
void gemm_i32_row_sums(const gemm_i32 *g, const uint8_t *a, size_t a_stride, size_t rows, uint8_t x_xor,
                       uint32_t x_zp_u8, uint32_t *rs);

#endif
