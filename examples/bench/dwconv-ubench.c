/* Depthwise micro-benchmark: every qu8-dwconv variant in qu8-dwconv.inc vs XNNPACK qc8 depthwise, one
 * thread, 144 channels, 56x56 input, SAME padding, strides 1 and 2, GMAC/s = MACs / median time.
 * The kernel is called once per output row, as the depthwise driver does. S8=1 in the environment
 * runs the int8-activation path (x_xor = 0x80). Build after `make` (from the repo root):
 *   cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Ikernels -Iinclude examples/bench/dwconv-ubench.c \
 *      build/libq8rt.a -lXNNPACK -lpthreadpool -lcpuinfo -lprotobuf-c -lm -lpthread -o build/dwconv-ubench
 *   taskset -c 1 build/dwconv-ubench [scalar] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xnnpack.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"

typedef void (*dw_fn)(size_t, size_t, const uint8_t *const *, size_t, const void *, void *, size_t,
                      const q8rt_qu8_requant_params *);
static const struct {
  int isa;
  dw_fn fn;
  size_t cb;
  const char *name;
} vars[] = {
#define Q8RT_DWCONV_UKERNEL(isa, fn, cb) {isa, fn, cb, #fn},
#include "qu8-dwconv/qu8-dwconv.inc"
    {0, NULL, 0, NULL}};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double q8_scalar_cb;
static void scalar_wrap(size_t c, size_t px, const uint8_t *const *ind, size_t t, const void *w, void *y, size_t ys,
                        const q8rt_qu8_requant_params *p) {
  q8rt_qu8_dwconv_minmax_fp32_ukernel__scalar(c, px, ind, t, w, y, ys, p, (size_t)q8_scalar_cb);
}

#define RUNS 31
int main(int argc, char **argv) {
  const size_t C = 144, H = 56, W = 56;
  int only_scalar = argc > 1 && strcmp(argv[1], "scalar") == 0;
  xnn_initialize(NULL);
  { /* warm up: let the core reach its clock before the first shape */
    volatile double acc = 0;
    const double t0 = now();
    while (now() - t0 < 0.5) acc += 1.0;
  }
  uint8_t *x = malloc(H * W * C);
  for (size_t i = 0; i < H * W * C; i++) x[i] = (uint8_t)(rand() >> 7);
  const struct {
    size_t kh, kw, s;
  } shapes[] = {{3, 3, 1}, {3, 3, 2}, {5, 5, 1}, {5, 5, 2}, {7, 7, 1}, {7, 7, 2}, {1, 7, 1}, {7, 1, 1}};
  printf("%-6s %-3s %-52s %8s\n", "kernel", "s", "impl", "GMAC/s");
  for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++) {
    const size_t kh = shapes[si].kh, kw = shapes[si].kw, st = shapes[si].s, taps = kh * kw;
    const size_t pt = kh / 2, pl = kw / 2;
    const size_t OH = (H + 2 * pt - kh) / st + 1, OW = (W + 2 * pl - kw) / st + 1;
    const double macs = (double)OH * OW * C * taps;
    const uint8_t x_zp = 128;
    uint8_t *zbuf = malloc(C);
    memset(zbuf, x_zp, C);
    const uint8_t **ind = malloc(OH * OW * taps * sizeof(*ind));
    for (size_t oy = 0; oy < OH; oy++)
      for (size_t ox = 0; ox < OW; ox++)
        for (size_t ky = 0; ky < kh; ky++)
          for (size_t kx = 0; kx < kw; kx++) {
            long iy = (long)(oy * st + ky) - (long)pt, ix = (long)(ox * st + kx) - (long)pl;
            ind[((oy * OW + ox) * taps) + ky * kw + kx] =
                (iy < 0 || ix < 0 || iy >= (long)H || ix >= (long)W) ? zbuf : x + ((size_t)iy * W + (size_t)ix) * C;
          }
    int16_t *w16 = malloc(C * taps * 2);
    int8_t *w8 = malloc(C * taps);
    int32_t *bias = malloc(C * 4);
    float *scale = malloc(C * 4);
    for (size_t i = 0; i < C * taps; i++) w8[i] = (int8_t)((rand() % 255) - 127), w16[i] = w8[i];
    for (size_t c = 0; c < C; c++) bias[c] = rand() % 1000 - 500, scale[c] = 1.0f / 4096;
    uint8_t *y = malloc(OH * OW * C);
    q8rt_qu8_requant_params rp = {-128.0f, 127.0f, 128, (uint8_t)(getenv("S8") ? 0x80 : 0), 0};
    char label[16];
    snprintf(label, sizeof(label), "%zux%zu", kh, kw);
    for (int vi = -1; vars[vi < 0 ? 0 : vi].fn != NULL || vi < 0; vi++) {
      dw_fn fn;
      size_t cb;
      const char *name;
      if (vi < 0) {
        fn = scalar_wrap, cb = 32, name = "scalar (cb 32)";
        q8_scalar_cb = 32;
      } else {
        if (only_scalar) break;
        fn = vars[vi].fn, cb = vars[vi].cb, name = vars[vi].name;
      }
      void *packed = malloc(q8rt_qu8_dwconv_packed_size(C, taps, cb));
      q8rt_qu8_dwconv_pack(C, taps, cb, w16, bias, scale, x_zp, packed);
      double t[RUNS];
      int runs = vi < 0 ? 3 : RUNS;
      for (int r = 0; r < runs; r++) {
        double t0 = now();
        for (size_t oy = 0; oy < OH; oy++) fn(C, OW, ind + oy * OW * taps, taps, packed, y + oy * OW * C, C, &rp);
        t[r] = now() - t0;
      }
      qsort(t, (size_t)runs, sizeof(double), cmpd);
      printf("%-6s %-3zu %-52s %8.2f\n", label, st, name, macs / t[runs / 2] * 1e-9);
      free(packed);
    }
    if (!only_scalar) {
      xnn_operator_t op = NULL;
      float *ks = malloc(C * 4);
      for (size_t c = 0; c < C; c++) ks[c] = 1.0f / 64;
      enum xnn_status s = xnn_create_convolution2d_nhwc_qc8(
          (uint32_t)pt, (uint32_t)pl, (uint32_t)pt, (uint32_t)pl, (uint32_t)kh, (uint32_t)kw, (uint32_t)st,
          (uint32_t)st, 1, 1, (uint32_t)C, 1, 1, C, C, 0, 1.0f, ks, w8, bias, 0, 1.0f, -128, 127, 0, &op);
      if (s == xnn_status_success) {
        xnn_setup_convolution2d_nhwc_qc8(op, 1, H, W, (const int8_t *)x, (int8_t *)y, NULL);
        double t[RUNS];
        xnn_run_operator(op, NULL);
        for (int r = 0; r < RUNS; r++) {
          double t0 = now();
          xnn_run_operator(op, NULL);
          t[r] = now() - t0;
        }
        qsort(t, RUNS, sizeof(double), cmpd);
        printf("%-6s %-3zu %-52s %8.2f\n", label, st, "XNNPACK qc8", macs / t[RUNS / 2] * 1e-9);
        xnn_delete_operator(op);
      } else {
        printf("xnn create failed %d\n", s);
      }
      free(ks);
    }
    free(zbuf), free(ind), free(w16), free(w8), free(bias), free(scale), free(y);
  }
  return 0;
}
