/*
 * xnn-conv-bench: time one quantized 2-D convolution in XNNPACK (qc8: s8 activations, s8
 * per-channel weights), the way a q8rt user would hand it a QLinearConv with u8 activations.
 *
 *   xnn-conv-bench X.npy W.npy W_SCALE.npy BIAS.npy OUT.npy
 *       --stride S --pad P --group G --x-scale F --x-zp Z --y-scale F --y-zp Z
 *       [--repeat N] [--min-ms T] [--max-ms T] [--min-runs N]
 *
 *   X.npy        u8 [1, C, H, W]  (NCHW, as the ONNX model takes it)
 *   W.npy        s8 [M, C/G, KH, KW]  (ONNX layout; weight zero point 0)
 *   W_SCALE.npy  f32 [M]
 *   BIAS.npy     i32 [M]
 *   OUT.npy      written: u8 [1, M, OH, OW] (NCHW), for the exactness check
 *   --x-zp, --y-zp are the u8 zero points; the scales may be given as C hex floats for exactness.
 *
 * The u8 input is shifted to s8 (x ^ 0x80, zero point - 128) and transposed to NHWC once,
 * outside the timed region; the output is shifted back and transposed after timing. Only
 * xnn_run_operator is timed: one warm-up run, then --repeat N runs (or, without --repeat, as many
 * as fit --min-ms with at least --min-runs, stopping at --max-ms). Single thread (no threadpool).
 * Prints `latency_ms median=<x> min=<y> runs=<N>`. Errors: one line on stderr, exit status 1.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xnnpack.h>

#include "npy.h"

#define MAX_RUNS 100000

__attribute__((format(printf, 1, 2))) static void die(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  fprintf(stderr, "xnn-conv-bench: error: %s\n", msg);
  exit(1);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct loaded {
  void *bytes;
  npy_array a;
} loaded;

static void load(const char *path, q8rt_dtype want, int rank, loaded *out) {
  char err[256];
  size_t size = 0;
  if (npy_read_file(path, NPY_MAX_FILE_BYTES, &out->bytes, &size, err, sizeof(err)) != 0 ||
      npy_parse(out->bytes, size, &out->a, err, sizeof(err)) != 0)
    die("%s: %s", path, err);
  if (out->a.dtype != want) die("%s: element type %s, expected %s", path, npy_descr(out->a.dtype), npy_descr(want));
  if (out->a.rank != rank) die("%s: rank %d, expected %d", path, out->a.rank, rank);
}

static long parse_long(const char *opt, const char *s, long lo, long hi) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi)
    die("%s expects an integer in [%ld, %ld], got '%s'", opt, lo, hi, s);
  return v;
}

static float parse_float(const char *opt, const char *s) {
  char *end;
  errno = 0;
  float v = strtof(s, &end); /* accepts C99 hex floats, so scales pass through exactly */
  if (errno || end == s || *end || !(v > 0.0f) || !isfinite(v)) die("%s expects a positive float, got '%s'", opt, s);
  return v;
}

int main(int argc, char **argv) {
  const char *pos[5];
  int npos = 0;
  long stride = 1, pad = 0, group = 1, x_zp = -1, y_zp = -1, repeat = 0, min_runs = 5;
  double min_ms = 500.0, max_ms = 2000.0;
  float x_scale = 0.0f, y_scale = 0.0f;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--", 2) != 0) {
      if (npos == 5) die("too many arguments (see the comment at the top of xnn-conv-bench.c)");
      pos[npos++] = a;
      continue;
    }
    if (i + 1 >= argc) die("%s expects a value", a);
    const char *v = argv[++i];
    if (!strcmp(a, "--stride"))
      stride = parse_long(a, v, 1, 64);
    else if (!strcmp(a, "--pad"))
      pad = parse_long(a, v, 0, 64);
    else if (!strcmp(a, "--group"))
      group = parse_long(a, v, 1, 1L << 20);
    else if (!strcmp(a, "--x-zp"))
      x_zp = parse_long(a, v, 0, 255);
    else if (!strcmp(a, "--y-zp"))
      y_zp = parse_long(a, v, 0, 255);
    else if (!strcmp(a, "--x-scale"))
      x_scale = parse_float(a, v);
    else if (!strcmp(a, "--y-scale"))
      y_scale = parse_float(a, v);
    else if (!strcmp(a, "--repeat"))
      repeat = parse_long(a, v, 1, MAX_RUNS);
    else if (!strcmp(a, "--min-runs"))
      min_runs = parse_long(a, v, 1, MAX_RUNS);
    else if (!strcmp(a, "--min-ms"))
      min_ms = (double)parse_long(a, v, 0, 3600000);
    else if (!strcmp(a, "--max-ms"))
      max_ms = (double)parse_long(a, v, 1, 3600000);
    else
      die("unknown option %s", a);
  }
  if (npos != 5) die("usage: xnn-conv-bench X.npy W.npy W_SCALE.npy BIAS.npy OUT.npy --stride S --pad P ...");
  if (x_zp < 0 || y_zp < 0 || x_scale == 0.0f || y_scale == 0.0f)
    die("--x-scale, --x-zp, --y-scale and --y-zp are required");

  loaded X, W, WS, B;
  load(pos[0], Q8RT_DTYPE_UINT8, 4, &X);
  load(pos[1], Q8RT_DTYPE_INT8, 4, &W);
  load(pos[2], Q8RT_DTYPE_FLOAT32, 1, &WS);
  load(pos[3], Q8RT_DTYPE_INT32, 1, &B);
  const size_t N = (size_t)X.a.shape[0], C = (size_t)X.a.shape[1], H = (size_t)X.a.shape[2], Wd = (size_t)X.a.shape[3];
  const size_t M = (size_t)W.a.shape[0], Cg = (size_t)W.a.shape[1], KH = (size_t)W.a.shape[2],
               KW = (size_t)W.a.shape[3];
  const size_t G = (size_t)group;
  if (N != 1) die("batch %zu: only N=1", N);
  if (Cg * G != C || M % G != 0) die("weights [%zu,%zu,..] do not fit %zu input channels in %zu groups", M, Cg, C, G);
  if ((size_t)WS.a.shape[0] != M || (size_t)B.a.shape[0] != M) die("w_scale and bias must have %zu elements", M);
  const size_t Mg = M / G;
  const long OHl = ((long)H + 2 * pad - (long)KH) / stride + 1, OWl = ((long)Wd + 2 * pad - (long)KW) / stride + 1;
  if (OHl <= 0 || OWl <= 0) die("empty output");
  const size_t OH = (size_t)OHl, OW = (size_t)OWl;

  /* Input: u8 NCHW -> s8 NHWC (x ^ 0x80), with XNNPACK's read-past-the-end slack. */
  const uint8_t *xu = X.a.data;
  int8_t *xin = calloc(H * Wd * C + 64, 1);
  for (size_t c = 0; c < C; c++)
    for (size_t p = 0; p < H * Wd; p++) xin[p * C + c] = (int8_t)(xu[c * H * Wd + p] ^ 0x80);
  /* Weights: [M][Cg][KH][KW] (ONNX, M = G*Mg) -> [G][Mg][KH][KW][Cg] (XNNPACK NHWC kernel layout). */
  const int8_t *w = W.a.data;
  int8_t *wx = malloc(M * Cg * KH * KW);
  for (size_t m = 0; m < M; m++)
    for (size_t ci = 0; ci < Cg; ci++)
      for (size_t kh = 0; kh < KH; kh++)
        for (size_t kw = 0; kw < KW; kw++)
          wx[((m * KH + kh) * KW + kw) * Cg + ci] = w[((m * Cg + ci) * KH + kh) * KW + kw];
  int8_t *yout = calloc(OH * OW * M + 64, 1);
  if (!xin || !wx || !yout) die("out of memory");

  enum xnn_status st = xnn_initialize(NULL);
  if (st != xnn_status_success) die("xnn_initialize failed (status %d)", (int)st);
  xnn_operator_t op = NULL;
  st = xnn_create_convolution2d_nhwc_qc8(
      (uint32_t)pad, (uint32_t)pad, (uint32_t)pad, (uint32_t)pad, (uint32_t)KH, (uint32_t)KW, (uint32_t)stride,
      (uint32_t)stride, 1, 1, (uint32_t)G, Cg, Mg, C, M, (int8_t)(x_zp - 128), x_scale, (const float *)WS.a.data, wx,
      (const int32_t *)B.a.data, (int8_t)(y_zp - 128), y_scale, INT8_MIN, INT8_MAX, 0, &op);
  if (st != xnn_status_success) die("xnn_create_convolution2d_nhwc_qc8 failed (status %d)", (int)st);
  st = xnn_setup_convolution2d_nhwc_qc8(op, 1, H, Wd, xin, yout, NULL);
  if (st != xnn_status_success) die("xnn_setup_convolution2d_nhwc_qc8 failed (status %d)", (int)st);

  double t0 = now_ms();
  if (xnn_run_operator(op, NULL) != xnn_status_success) die("xnn_run_operator failed"); /* warm-up */
  double warm = now_ms() - t0;
  long runs = repeat;
  if (runs == 0) {
    runs = (long)ceil(min_ms / (warm > 1e-3 ? warm : 1e-3));
    if (runs < min_runs) runs = min_runs;
    if ((double)runs * warm > max_ms && runs > min_runs)
      runs = (long)(max_ms / warm) > min_runs ? (long)(max_ms / warm) : min_runs;
    if (runs > MAX_RUNS) runs = MAX_RUNS;
  }
  double *times = malloc((size_t)runs * sizeof(double));
  if (!times) die("out of memory");
  for (long r = 0; r < runs; r++) {
    t0 = now_ms();
    if (xnn_run_operator(op, NULL) != xnn_status_success) die("xnn_run_operator failed");
    times[r] = now_ms() - t0;
  }
  qsort(times, (size_t)runs, sizeof(double), cmp_double);
  double median = runs % 2 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
  printf("latency_ms median=%.4f min=%.4f runs=%ld\n", median, times[0], runs);

  /* Output: s8 NHWC -> u8 NCHW. */
  uint8_t *yu = malloc(OH * OW * M);
  if (!yu) die("out of memory");
  for (size_t m = 0; m < M; m++)
    for (size_t p = 0; p < OH * OW; p++) yu[m * OH * OW + p] = (uint8_t)yout[p * M + m] ^ 0x80;
  const int64_t oshape[4] = {1, (int64_t)M, (int64_t)OH, (int64_t)OW};
  char err[256];
  if (npy_write_file(pos[4], Q8RT_DTYPE_UINT8, oshape, 4, yu, OH * OW * M, err, sizeof(err)) != 0)
    die("%s: %s", pos[4], err);

  xnn_delete_operator(op);
  xnn_deinitialize();
  free(yu);
  free(times);
  free(yout);
  free(wx);
  free(xin);
  free(X.bytes);
  free(W.bytes);
  free(WS.bytes);
  free(B.bytes);
  return 0;
}
