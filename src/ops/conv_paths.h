/* QLinearConv's fast paths: NHWC GEMM (with im2col where needed) and depthwise, on the kernels
 * listed in kernels/qu8-qc8w-gemm and kernels/qu8-dwconv, chosen per node at load. */
#ifndef Q8RT_CONV_PATHS_H
#define Q8RT_CONV_PATHS_H

#include "backends/xnnpack.h"
#include "op.h"
#include "q8rt-kernels.h"

enum conv_path { CONV_PATH_NONE = 0, CONV_PATH_REF, CONV_PATH_GEMM, CONV_PATH_DW, CONV_PATH_XNN };

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
} conv_fast_desc;

typedef struct conv_fast {
  enum conv_path path; /* NONE: no q8rt fast kernel (reason says why) */
  const char *kernel;
  const char *reason;
  size_t out_c, k, a_stride; /* GEMM: K = kh*kw*C, rows padded to a multiple of 4 */
  size_t mr, nr, cb, taps;
  q8rt_qu8_gemm_ukernel_fn gemm;
  q8rt_qu8_dwconv_ukernel_fn dw;
  const void *packed;
  q8rt_qu8_requant_params rq;
  uint8_t x_zp_raw;      /* the activation zero point as stored (padding value) */
  const uint8_t *table;  /* applied to each output tile as it is written (a fused island), or NULL */
  size_t table_channels; /* 1, or out_c tables */
} conv_fast;

typedef struct conv_fast_geom {
  size_t batch, in_h, in_w, in_c, out_h, out_w;
  size_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
  size_t pad_bottom, pad_right; /* XNNPACK only */
  size_t rows;                  /* output pixels: batch * out_h * out_w */
  size_t tile_rows;             /* GEMM rows per im2col tile */
  int direct;                   /* 1x1, stride 1, no padding: the input is the GEMM's A */
  const uint8_t **indirection;  /* depthwise: rows * taps pointers (workspace) */
  q8rt_xnn_conv *xnn;
} conv_fast_geom;

q8rt_status conv_fast_prepare(const conv_fast_desc *d, const conv_choice *choice, q8rt_pool *pool, conv_fast *out,
                              q8rt_error *err);
void conv_fast_geom_init(const conv_fast *f, const q8rt_q8_conv_ref_params *r, conv_fast_geom *g);
size_t conv_fast_workspace(const conv_fast *f, const conv_fast_geom *g, size_t threads);
void conv_fast_bind(const conv_fast *f, conv_fast_geom *g, const void *x, void *workspace);
void conv_fast_run(const conv_fast *f, const conv_fast_geom *g, const void *x, void *y, void *workspace,
                   const op_exec_ctx *ctx);

#endif
