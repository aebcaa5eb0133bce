/* Resize's compute, apart from its front-end (resize.c: attributes, shapes, kernel choice).
 * Coordinates are computed in float32 as ONNX Runtime does. */
#ifndef Q8RT_RESIZE_COMPUTE_H
#define Q8RT_RESIZE_COMPUTE_H

#include <stddef.h>
#include <stdint.h>

#include "op.h"

enum rs_ctm { CTM_HALF_PIXEL, CTM_HALF_PIXEL_SYM, CTM_PYTORCH, CTM_ALIGN, CTM_ASYM, CTM_TF_NN };
enum rs_nearest { NM_SIMPLE, NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL };

/* The geometry both computes read: rank r >= 1, in/out dims, per-axis scales, element bytes. */
typedef struct resize_shape {
  int rank;
  size_t elem;
  const int64_t *in, *out;
  const float *scale;
} resize_shape;

/* mode nearest, any element size (values are copied; a row whose last axis is not resized, as the
 * channels of an NHWC tensor, in one copy), rows split over ctx's pool. workspace: one int64 per
 * output index of every axis. */
void resize_nearest(const resize_shape *gm, enum rs_ctm ctm, enum rs_nearest nearest, const void *x, void *y,
                    void *workspace, const op_exec_ctx *ctx);
enum resize_elem { RS_F32, RS_U8, RS_S8 };
/* mode linear over the last two axes, as ONNX Runtime's UpsampleBilinear on NCHW: float32, or uint8 /
 * int8 (the weighted sum in float32 over the values, truncated toward zero as static_cast does).
 * workspace: two int64 and two floats per output index of the last two axes. */
void resize_bilinear(const resize_shape *gm, enum rs_ctm ctm, enum resize_elem et, const void *src, void *dst,
                     void *workspace);
/* mode cubic on float32 over the last two axes, as ONNX Runtime's ResizeBiCubic (exclude_outside 0,
 * no extrapolation): Keys' weights with coefficient a from the fraction of the source coordinate,
 * the four taps on each side clamped to the axis. workspace: four int64 and four floats per output
 * index of the last two axes. */
void resize_bicubic_f32(const resize_shape *gm, enum rs_ctm ctm, float a, const float *src, float *dst,
                        void *workspace);

#endif
