/* XNNPACK backend glue for QLinearConv.
 *
 * A node goes to XNNPACK only when XNNPACK computes exactly q8rt's numerics contract
 * (ARCHITECTURE.md, "Numerics contract"):
 *   acc      = sum (x - x_zp)(w - w_zp) + bias[c]                        int32, wraps mod 2^32
 *   scale[c] = (float)((float)x_scale * (float)w_scale[c]) / (float)y_scale
 *   y        = clamp(round_half_even((float)acc * scale[c]) + y_zp, qmin, qmax)
 *
 * Why XNNPACK's result is the same bytes (Debian bookworm libxnnpack 0.0~git20220216):
 * - xnn_create_convolution2d_nhwc_{qc8,qu8} compute the requantization scale themselves as
 *   `input_scale * kernel_scale[c] / output_scale` in float (in the binary: mulss, then divss),
 *   which is our scale[c] bit for bit. They refuse scales that are <= 0, subnormal or not finite
 *   and requantization scales >= 256; there is no lower bound.
 * - The input zero point is folded into the packed bias (bias - x_zp * sum w, qu8 also
 *   + K * x_zp * w_zp); the kernels add exact s8/u8 x s16 products in int32. All of it is
 *   arithmetic mod 2^32, as is the reference, so the int32 accumulator is the same value even
 *   when it wraps.
 * - The x86 epilogue ("fp32" requantization) is cvtdq2ps, mulps by scale[c], minps with
 *   (qmax - y_zp), cvtps2dq (round-to-nearest-even in the default MXCSR mode), saturating pack to
 *   int16, saturating add of y_zp, saturating pack to 8 bits, max with qmin. With qmin/qmax the
 *   full type range (always so here) that is clamp(rne(v) + y_zp, qmin, qmax) for every finite v
 *   (v is finite: |acc| <= 2^31 and scale < 256). cvtps2dq and mulps follow the SSE rounding
 *   mode, so q8rt_xnn_conv_run switches the calling thread to round-to-nearest around the
 *   operator and restores the caller's mode after.
 * - On ARM, XNNPACK's qu8 (and qs8) operators use "rndnu" fixed-point requantization, which is
 *   NOT the contract; only qc8 (fp32 requantization everywhere) is accepted there.
 * The unit tests (tests/unit/test_xnnpack.c) check byte identity with the scalar reference over a
 * sweep of shapes, types, zero points and scales.
 *
 * Routes (the glue chooses; the caller only describes the node):
 * - qc8: weights whose zero point is 0 as s8 (s8 weights with zp 0, or u8 weights with zp 128,
 *   mapped by w ^ 0x80), per-tensor or per-channel scales. Covers XNNPACK's "qs8" case too (the
 *   per-tensor scale is repeated per channel; same numerics). u8 activations are shifted to s8
 *   exactly (x ^ 0x80, x_zp - 128) into a scratch buffer before the run; a u8 y is computed as s8
 *   with y_zp - 128 and shifted back in place after the run.
 * - qu8 (x86 only): any other uniform weight zero point with a per-tensor weight scale. s8
 *   weights/activations/outputs are shifted to u8 the same way (w ^ 0x80, zp + 128).
 * - Refused: weight zero points that differ between channels; per-channel scales together with
 *   a nonzero weight zero point; scales XNNPACK refuses; requantization scales >= 256 or below
 *   FLT_MIN (zero or subnormal); shapes whose output would be empty.
 *
 * Memory: xnn_initialize keeps the first allocator for the whole process, so q8rt initializes
 * XNNPACK with its default allocator (malloc). XNNPACK's own memory (packed weights, indirection
 * buffers, operator state) does NOT go through q8rt's allocator hook; only this glue's own
 * buffers (the activation scratch and temporary weight re-layouts) do.
 *
 * Over-reads: XNNPACK kernels may read up to XNN_EXTRA_BYTES (16) bytes past the end of the
 * input. The caller's x buffer must have 16 readable bytes after its last element (q8rt's arena
 * leaves 64). The glue's own scratch buffers carry that slack.
 */
#ifndef Q8RT_BACKENDS_XNNPACK_H
#define Q8RT_BACKENDS_XNNPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthreadpool.h>

#include "common/common.h"

/* Bytes any input handed to XNNPACK must have readable past its end. */
#define Q8RT_XNN_INPUT_SLACK 16

/* Initializes XNNPACK once per process (pthread_once; thread-safe) with its default allocator.
 * False when XNNPACK cannot run on this CPU. Never deinitialized. */
bool q8rt_xnn_init(void);

typedef struct q8rt_xnn_conv_desc {
  size_t batch, in_h, in_w;               /* NHWC input [batch][in_h][in_w][groups * group_in_c] */
  size_t groups, group_in_c, group_out_c; /* NHWC output [batch][out_h][out_w][groups * group_out_c] */
  uint32_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  uint32_t pad_top, pad_left, pad_bottom, pad_right;
  int x_signed, y_signed, w_signed;   /* element types of x, y, w: int8 when 1, uint8 when 0 */
  int32_t x_zero_point, y_zero_point; /* in the range of their element type */
  float x_scale, y_scale;
  const float *w_scale;      /* w_scale_count entries */
  size_t w_scale_count;      /* 1 or groups * group_out_c */
  const void *w;             /* ONNX layout [M][group_in_c][kernel_h][kernel_w], M = groups * group_out_c */
  const void *w_zero_point;  /* int8/uint8 as w; NULL means 0 */
  size_t w_zero_point_count; /* 1 or M (0 when w_zero_point is NULL) */
  const int32_t *bias;       /* [M] or NULL */
} q8rt_xnn_conv_desc;

/* The ONNX output size (floor((in + pads - dilation * (kernel - 1) - 1) / stride) + 1); false
 * when the padded input is smaller than the dilated kernel or a dimension is zero. */
bool q8rt_xnn_conv_output_size(const q8rt_xnn_conv_desc *d, size_t *out_h, size_t *out_w);

/* Whether XNNPACK can run this node exactly (see the top of this file). On false, *reason (when
 * reason is not NULL) is a static sentence saying why, for `q8rt-run --explain`. Initializes
 * XNNPACK if needed (false when it is unavailable). Reads w_scale and w_zero_point. */
bool q8rt_xnn_conv_supported(const q8rt_xnn_conv_desc *d, const char **reason);

typedef struct q8rt_xnn_conv q8rt_xnn_conv;

/* Creates the operator (XNNPACK packs the weights and bias; d->w, d->bias, d->w_scale and
 * d->w_zero_point are not used after this returns), allocates the glue's scratch from `a` (NULL:
 * q8rt's default allocator; it must outlive the operator) and sets it up for x and y (NHWC, x
 * readable Q8RT_XNN_INPUT_SLACK bytes past its end; y has batch * out_h * out_w * M bytes) and the
 * threadpool (NULL: the calling thread). Q8RT_ERROR_UNSUPPORTED when q8rt_xnn_conv_supported says
 * no. An operator is run by one thread at a time; a session owns its own. */
q8rt_status q8rt_xnn_conv_create(const q8rt_xnn_conv_desc *d, const q8rt_allocator *a, const void *x, void *y,
                                 pthreadpool_t pool, q8rt_xnn_conv **out, q8rt_error *err);

/* Rebinds the operator to other x/y buffers and threadpool (same shape). XNNPACK may allocate
 * here (its indirection buffer), so do it at session setup, not per run. */
q8rt_status q8rt_xnn_conv_setup(q8rt_xnn_conv *c, const void *x, void *y, pthreadpool_t pool, q8rt_error *err);

/* Runs the convolution: the activation shift into scratch when needed, xnn_run_operator with the
 * threadpool given at setup (in round-to-nearest on the calling thread; pthreadpool workers run
 * in their own FP mode, which is round-to-nearest unless the application changed it in them), the
 * output shift when needed. No allocation. Fails only on a NULL or not-set-up operator or an
 * XNNPACK error, so a caller that ignores the status only risks it when it ignored create's. */
q8rt_status q8rt_xnn_conv_run(q8rt_xnn_conv *c, q8rt_error *err);

/* Which XNNPACK operator the glue uses: "qc8" or "qu8". */
const char *q8rt_xnn_conv_route(const q8rt_xnn_conv *c);

/* Releases the XNNPACK operator and the scratch. NULL is a no-op. */
void q8rt_xnn_conv_free(q8rt_xnn_conv *c);

#endif /* Q8RT_BACKENDS_XNNPACK_H */
