/* Resize's compute: nearest (any element size), bilinear and bicubic (float32), as ONNX Runtime. */
#include "resize_compute.h"

#include <math.h>
#include <string.h>

#include "op.h"
#include "op_util.h"

static float original_coordinate(enum rs_ctm ctm, float x, float scale, float len_out, float len_in) {
  switch (ctm) {
    case CTM_ASYM: return x / scale;
    case CTM_PYTORCH: return len_out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case CTM_TF_NN: return (x + 0.5f) / scale;
    case CTM_ALIGN: return len_out == 1 ? 0.0f : x * (len_in - 1) / (len_out - 1);
    case CTM_HALF_PIXEL_SYM: {
      const float output_width = scale * len_in;
      const float adjustment = len_out / output_width;
      const float center = len_in / 2;
      const float offset = center * (1 - adjustment);
      return (float)(offset + (x + 0.5) / scale - 0.5); /* in double, as ONNX Runtime */
    }
    default: return ((x + 0.5f) / scale) - 0.5f;
  }
}

static int64_t nearest_pixel(enum rs_nearest m, float x, int down) {
  /* The caller clamps the index to the axis; clamp the coordinate first so that a NaN or huge
     coordinate (scales, roi from the model) never reaches a float -> int64 conversion. */
  if (!(x > -1e18f)) x = -1e18f;
  if (x > 1e18f) x = 1e18f;
  switch (m) {
    case NM_SIMPLE: return down ? (int64_t)ceilf(x) : (int64_t)x;
    case NM_ROUND_CEIL: return (int64_t)roundf(x);
    case NM_FLOOR: return (int64_t)floorf(x);
    case NM_CEIL: return (int64_t)ceilf(x);
    default:
      if (x == (float)(int64_t)x + 0.5f) return (int64_t)floorf(x);
      return (int64_t)roundf(x);
  }
}

#define NEAREST_INNER(T)                                      \
  do {                                                        \
    const T *sp_ = (const T *)src + off;                      \
    T *dd = (T *)dst;                                         \
    for (int64_t j = 0; j < inner; j++) dd[j] = sp_[last[j]]; \
  } while (0)

typedef struct nearest_job {
  const resize_shape *gm;
  const int64_t *const *maps; /* per axis: output index -> input element offset */
  const unsigned char *src;
  unsigned char *dst;
  int copy_rows; /* the last axis is not resized: a row is one contiguous copy */
} nearest_job;

/* nearest_rows for rows that are one copy from the source (copy_rows) of under 64 bytes
 * (channels-last pixels of few channels), in blocks: the rows of one index along axis r - 2 (an
 * image row of pixels). A block whose outer offset repeats the block just written by this call is
 * one memcpy of it instead of a copy per pixel, where the copies' per-call cost dominates (with
 * 96- or 192-channel pixels reading the block back was measured slower than the pixel copies). */
static void nearest_small_rows(const nearest_job *jb, size_t begin, size_t end, int64_t *idx) {
  const resize_shape *gm = jb->gm;
  const int bd = gm->rank - 2;
  const int64_t *const *maps = jb->maps;
  const size_t row_bytes = (size_t)gm->out[gm->rank - 1] * gm->elem, block = (size_t)gm->out[bd];
  unsigned char *dst = jb->dst + begin * row_bytes;
  int64_t prev_block_off = -1;
  size_t prev_block_row = 0;
  for (size_t row = begin; row < end;) {
    int64_t boff = 0;
    for (int d = 0; d < bd; d++) boff += maps[d][idx[d]];
    size_t n = block - (size_t)idx[bd]; /* rows left in this block */
    if (n > end - row) n = end - row;
    if (idx[bd] == 0 && n == block && boff == prev_block_off && prev_block_row + block == row) {
      memcpy(dst, dst - block * row_bytes, block * row_bytes);
    } else {
      if (idx[bd] == 0 && n == block) {
        prev_block_off = boff;
        prev_block_row = row;
      }
      const int64_t *m = maps[bd] + idx[bd];
      for (size_t i = 0; i < n; i++) memcpy(dst + i * row_bytes, jb->src + (size_t)(boff + m[i]) * gm->elem, row_bytes);
    }
    dst += n * row_bytes;
    row += n;
    idx[bd] = 0; /* the next block (or the end) */
    for (int d = bd - 1; d >= 0; d--) {
      if (++idx[d] < gm->out[d]) break;
      idx[d] = 0;
    }
  }
}

/* Output rows [begin, end) (every axis but the last). An upsampled axis repeats its source
 * indices, so a gathered row that reads what the one before it read is a copy of that output row
 * when this call wrote it (NCHW 2x nearest: every other row one memcpy). Rows that are one copy
 * from the source (channels-last pixels) keep it: reading back bytes just stored was measured
 * slower there. */
static void nearest_rows(void *arg, size_t begin, size_t end) {
  const nearest_job *jb = arg;
  const resize_shape *gm = jb->gm;
  const int r = gm->rank;
  const int64_t *const *maps = jb->maps;
  const unsigned char *src = jb->src;
  const int64_t inner = gm->out[r - 1];
  const int64_t *last = maps[r - 1];
  int64_t idx[Q8RT_MAX_RANK] = {0};
  size_t rest = begin;
  for (int d = r - 2; d >= 0; d--) {
    idx[d] = (int64_t)(rest % (size_t)gm->out[d]);
    rest /= (size_t)gm->out[d];
  }
  if (jb->copy_rows && r >= 2 && (size_t)inner * gm->elem < 64) {
    nearest_small_rows(jb, begin, end, idx);
    return;
  }
  unsigned char *dst = jb->dst + begin * (size_t)inner * gm->elem;
  int64_t prev_off = -1;
  for (size_t row = begin; row < end; row++) {
    int64_t off = 0;
    for (int d = 0; d < r - 1; d++) off += maps[d][idx[d]];
    if (jb->copy_rows) {
      memcpy(dst, src + (size_t)off * gm->elem, (size_t)inner * gm->elem);
    } else if (off == prev_off) {
      memcpy(dst, dst - (size_t)inner * gm->elem, (size_t)inner * gm->elem);
    } else {
      prev_off = off;
      switch (gm->elem) {
        case 1: NEAREST_INNER(uint8_t); break;
        case 2: NEAREST_INNER(uint16_t); break;
        case 4: NEAREST_INNER(uint32_t); break;
        default: NEAREST_INNER(uint64_t); break;
      }
    }
    dst += (size_t)inner * gm->elem;
    for (int d = r - 2; d >= 0; d--) {
      if (++idx[d] < gm->out[d]) break;
      idx[d] = 0;
    }
  }
}

void resize_nearest(const resize_shape *gm, enum rs_ctm ctm, enum rs_nearest nearest, const void *x, void *y,
                    void *workspace, const op_exec_ctx *ctx) {
  const int r = gm->rank;
  int64_t in_strides[Q8RT_MAX_RANK], s = 1;
  for (int d = r - 1; d >= 0; d--) {
    in_strides[d] = s;
    s *= gm->in[d];
  }
  int64_t *maps[Q8RT_MAX_RANK];
  int64_t *w = workspace;
  for (int d = 0; d < r; d++) {
    maps[d] = w;
    w += gm->out[d];
    for (int64_t o = 0; o < gm->out[d]; o++) {
      int64_t i;
      if (gm->scale[d] == 1.0f && gm->out[d] == gm->in[d]) {
        i = o;
      } else {
        const float xo = original_coordinate(ctm, (float)o, gm->scale[d], (float)gm->out[d], (float)gm->in[d]);
        i = nearest_pixel(nearest, xo, gm->scale[d] < 1.0f);
      }
      if (i >= gm->in[d]) i = gm->in[d] - 1;
      if (i < 0) i = 0;
      maps[d][o] = i * in_strides[d];
    }
  }
  nearest_job j = {gm, (const int64_t *const *)maps, x, y, 1};
  for (int64_t o = 0; o < gm->out[r - 1] && j.copy_rows; o++) j.copy_rows = maps[r - 1][o] == o;
  size_t rows = 1;
  for (int d = 0; d < r - 1; d++) rows *= (size_t)gm->out[d];
  op_parallel_range(ctx, rows, 16384 / ((size_t)gm->out[r - 1] * gm->elem + 1) + 1, nearest_rows, &j);
}

/* The value ONNX Runtime stores from its float sum for an 8-bit output: static_cast truncates toward
 * zero. The sum is a blend of 8-bit values, so in range up to rounding; clamped first so that no
 * float outside the type reaches the conversion. */
static void store_x8(int is_signed, float v, unsigned char *d) {
  if (is_signed) {
    v = v < -128.0f ? -128.0f : v > 127.0f ? 127.0f : v;
    *(int8_t *)d = (int8_t)v;
  } else {
    v = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
    *d = (uint8_t)v;
  }
}

static float load_x8(int is_signed, const unsigned char *p) {
  return is_signed ? (float)*(const int8_t *)p : (float)*p;
}

void resize_bilinear(const resize_shape *gm, enum rs_ctm ctm, enum resize_elem et, const void *src, void *dst,
                     void *workspace) {
  const int r = gm->rank;
  const int hy = r - 2, wx = r - 1;
  const int64_t H = gm->in[hy], W = gm->in[wx], OH = gm->out[hy], OW = gm->out[wx];
  int64_t *y1 = workspace, *y2 = y1 + OH, *x1 = y2 + OH, *x2 = x1 + OW;
  float *dy1 = (float *)(x2 + OW), *dy2 = dy1 + OH, *dx1 = dy2 + OH, *dx2 = dx1 + OW;
  for (int pass = 0; pass < 2; pass++) {
    const int ax = pass == 0 ? hy : wx;
    const int64_t len = gm->in[ax], olen = gm->out[ax];
    int64_t *i1 = pass == 0 ? y1 : x1, *i2 = pass == 0 ? y2 : x2;
    float *d1 = pass == 0 ? dy1 : dx1, *d2 = pass == 0 ? dy2 : dx2;
    for (int64_t o = 0; o < olen; o++) {
      float v =
          gm->scale[ax] == 1.0f ? (float)o : original_coordinate(ctm, (float)o, gm->scale[ax], (float)olen, (float)len);
      v = fmaxf(0.0f, fminf(v, (float)(len - 1)));
      const int64_t a = (int64_t)v < len - 1 ? (int64_t)v : len - 1;
      const int64_t b = a + 1 < len - 1 ? a + 1 : len - 1;
      i1[o] = a;
      i2[o] = b;
      d1[o] = fabsf(v - (float)a);
      d2[o] = fabsf(v - (float)b);
      if (a == b) d1[o] = d2[o] = 0.5f;
    }
  }
  size_t planes = 1;
  for (int d = 0; d < r - 2; d++) planes *= (size_t)gm->in[d];
  if (et == RS_F32) {
    const float *xs = src;
    float *y = dst;
    for (size_t c = 0; c < planes; c++) {
      const float *xp = xs + c * (size_t)(H * W);
      for (int64_t oy = 0; oy < OH; oy++) {
        const float *r1 = xp + y1[oy] * W, *r2 = xp + y2[oy] * W;
        for (int64_t ox = 0; ox < OW; ox++) {
          const float X11 = r1[x1[ox]], X21 = r1[x2[ox]], X12 = r2[x1[ox]], X22 = r2[x2[ox]];
          *y++ = dx2[ox] * dy2[oy] * X11 + dx1[ox] * dy2[oy] * X21 + dx2[ox] * dy1[oy] * X12 + dx1[ox] * dy1[oy] * X22;
        }
      }
    }
    return;
  }
  /* uint8 / int8: the same float sum over the values as floats (ORT's UpsampleBilinear<T> on NCHW) */
  const int sg = et == RS_S8;
  const unsigned char *xs = src;
  unsigned char *y = dst;
  for (size_t c = 0; c < planes; c++) {
    const unsigned char *xp = xs + c * (size_t)(H * W);
    for (int64_t oy = 0; oy < OH; oy++) {
      const unsigned char *r1 = xp + y1[oy] * W, *r2 = xp + y2[oy] * W;
      for (int64_t ox = 0; ox < OW; ox++) {
        const float X11 = load_x8(sg, r1 + x1[ox]), X21 = load_x8(sg, r1 + x2[ox]);
        const float X12 = load_x8(sg, r2 + x1[ox]), X22 = load_x8(sg, r2 + x2[ox]);
        store_x8(sg,
                 dx2[ox] * dy2[oy] * X11 + dx1[ox] * dy2[oy] * X21 + dx2[ox] * dy1[oy] * X12 + dx1[ox] * dy1[oy] * X22,
                 y++);
      }
    }
  }
}

/* Keys' cubic convolution weights of the four taps around a source coordinate with fraction s,
 * in float32 and in the order ONNX Runtime's GetCubicCoeffs writes them. */
static void cubic_weights(float s, float a, float w[4]) {
  const float t = fabsf(s);
  w[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
  w[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

void resize_bicubic_f32(const resize_shape *gm, enum rs_ctm ctm, float a, const float *src, float *dst,
                        void *workspace) {
  const int r = gm->rank;
  const int hy = r - 2, wx = r - 1;
  const int64_t H = gm->in[hy], W = gm->in[wx], OH = gm->out[hy], OW = gm->out[wx];
  int64_t *ty = workspace, *tx = ty + 4 * OH; /* per output index: the four clamped source taps */
  float *wy = (float *)(tx + 4 * OW), *wxs = wy + 4 * OH;
  for (int pass = 0; pass < 2; pass++) {
    const int ax = pass == 0 ? hy : wx;
    const int64_t len = gm->in[ax], olen = gm->out[ax];
    int64_t *t = pass == 0 ? ty : tx;
    float *w = pass == 0 ? wy : wxs;
    for (int64_t o = 0; o < olen; o++) {
      float v =
          gm->scale[ax] == 1.0f ? (float)o : original_coordinate(ctm, (float)o, gm->scale[ax], (float)olen, (float)len);
      /* a NaN or huge coordinate (scales from the model) never reaches a float -> int64 conversion;
         every tap is clamped to the axis below */
      if (!(v > -1e18f)) v = -1e18f;
      if (v > 1e18f) v = 1e18f;
      const float f = floorf(v);
      cubic_weights(v - f, a, w + 4 * o);
      const int64_t base = (int64_t)f;
      for (int k = 0; k < 4; k++) {
        int64_t i = base - 1 + k;
        if (i > len - 1) i = len - 1;
        if (i < 0) i = 0;
        t[4 * o + k] = i;
      }
    }
  }
  size_t planes = 1;
  for (int d = 0; d < r - 2; d++) planes *= (size_t)gm->in[d];
  float *y = dst;
  for (size_t c = 0; c < planes; c++) {
    const float *xp = src + c * (size_t)(H * W);
    for (int64_t oy = 0; oy < OH; oy++) {
      const int64_t *rows = ty + 4 * oy;
      const float *cy = wy + 4 * oy;
      for (int64_t ox = 0; ox < OW; ox++) {
        const int64_t *cols = tx + 4 * ox;
        const float *cx = wxs + 4 * ox;
        /* along x on each of the four rows, then along y; sums from 0 in tap order (ORT's
           CubicInterpolation1D and ResizeBiCubic) */
        float acc = 0.0f;
        for (int i = 0; i < 4; i++) {
          const float *row = xp + rows[i] * W;
          float xr = 0.0f;
          for (int j = 0; j < 4; j++) xr += cx[j] * row[cols[j]];
          acc += xr * cy[i];
        }
        *y++ = acc;
      }
    }
  }
}
