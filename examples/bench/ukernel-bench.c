/* Micro-benchmark of the qu8-qc8w-gemm variants (every entry of qu8-qc8w-gemm.inc the CPU can run,
 * plus the scalar twin) on the im2col GEMM shapes of the convolutions in PEERS.md: M = output
 * pixels, N = output channels, K = kernel_h * kernel_w * in_channels. Single thread; the driver
 * walks M in steps of MR and hands each call all N channels, as the conv front-end does.
 * Prints the median over repeated timed runs as GMAC/s, and the best run. Runs are timed in
 * thread CPU time, so time spent descheduled on a shared machine does not count; other load on
 * the same core (SMT sibling, shared cache) still does, so compare variants within one run. Output bytes are checked
 * against the scalar twin once per shape, so a fast but wrong kernel cannot go unnoticed here either.
 *
 *   gcc -std=c11 -O2 -Iinclude -Ikernels -o build/ukernel-bench examples/bench/ukernel-bench.c \
 *       build/libq8rt.a -lm
 *   build/ukernel-bench [substring of a variant name] */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"

typedef struct variant {
  const char *name;
  q8rt_qu8_gemm_ukernel_fn fn; /* NULL: the scalar twin */
  unsigned isa;
  size_t mr, nr;
  bool pairs_safe_only;
  bool s8a; /* packed with the activation zero point as s8 */
} variant;

#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr) {#fn, fn, isa, mr, nr, false, false},
#define Q8RT_GEMM_UKERNEL_PAIRS_SAFE(isa, fn, mr, nr) {#fn, fn, isa, mr, nr, true, false},
#define Q8RT_GEMM_UKERNEL_S8A(isa, fn, mr, nr) {#fn, fn, isa, mr, nr, false, true},
static const variant g_variants[] = {
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
    {"q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel__scalar (nr=16)", NULL, Q8RT_ISA_SCALAR, 4, 16, false, false},
};
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_PAIRS_SAFE
#undef Q8RT_GEMM_UKERNEL_S8A

typedef struct shape {
  const char *conv;
  size_t m, n, k;
} shape;

static const shape g_shapes[] = {
    {"7x7 s2 3->64 224^2 (stem)", 12544, 64, 147}, {"3x3 64->64 56^2", 3136, 64, 576},
    {"1x1 256->64 56^2", 3136, 64, 256},           {"3x3 256->256 14^2", 196, 256, 2304},
    {"1x1 24->144 56^2", 3136, 144, 24},           {"1x1 144->32 28^2", 784, 32, 144},
};

static bool isa_supported(unsigned isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (isa & Q8RT_ISA_AVX2 && !__builtin_cpu_supports("avx2")) return false;
  if (isa & Q8RT_ISA_AVX512VNNI &&
      !(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni")))
    return false;
  return (isa & (Q8RT_ISA_NEON | Q8RT_ISA_NEONDOT | Q8RT_ISA_NEONI8MM)) == 0;
#elif defined(__aarch64__) && defined(__linux__)
  unsigned have = Q8RT_ISA_SCALAR | Q8RT_ISA_NEON;
  if (getauxval(AT_HWCAP) & (1ul << 20)) have |= Q8RT_ISA_NEONDOT;   /* HWCAP_ASIMDDP */
  if (getauxval(AT_HWCAP2) & (1ul << 13)) have |= Q8RT_ISA_NEONI8MM; /* HWCAP2_I8MM */
  return (isa & ~have) == 0;
#else
  return isa == Q8RT_ISA_SCALAR;
#endif
}

static uint32_t g_rng = 12345u;
static uint32_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 17;
  g_rng ^= g_rng << 5;
  return g_rng;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void gemm(const variant *v, const shape *s, const uint8_t *a, const void *packed, uint8_t *c,
                 const q8rt_qu8_requant_params *p) {
  for (size_t m0 = 0; m0 < s->m; m0 += v->mr) {
    const size_t mr = s->m - m0 < v->mr ? s->m - m0 : v->mr;
    if (v->fn) {
      v->fn(mr, s->n, s->k, a + m0 * s->k, s->k, packed, c + m0 * s->n, s->n, p);
    } else {
      q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel__scalar(mr, s->n, s->k, a + m0 * s->k, s->k, packed, c + m0 * s->n, s->n,
                                                     p, v->nr);
    }
  }
}

static int cmp_double(const void *x, const void *y) {
  const double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : NULL;
  const size_t nv = sizeof(g_variants) / sizeof(g_variants[0]);
  const size_t ns = sizeof(g_shapes) / sizeof(g_shapes[0]);
  q8rt_qu8_requant_params p = {
      .y_lo = -128.0f - 3.0f, .y_hi = 127.0f - 3.0f, .y_zero_point = 3, .x_xor = 0x80, .y_signed = 1};
  if (getenv("BENCH_U8")) p.x_xor = 0; /* uint8 activations: no xor in the inner loop */
  int bad = 0;
  for (size_t si = 0; si < ns; si++) {
    const shape *s = &g_shapes[si];
    const double macs = (double)s->m * (double)s->n * (double)s->k;
    printf("%-28s M=%-5zu N=%-3zu K=%-4zu %6.1f MMAC\n", s->conv, s->m, s->n, s->k, macs * 1e-6);
    /* round_up(K, 4) readable bytes in the last row */
    uint8_t *a = malloc(s->m * s->k + 4);
    int8_t *w = malloc(s->n * s->k), *w_safe = malloc(s->n * s->k);
    int32_t *bias = malloc(s->n * sizeof(int32_t));
    float *scale = malloc(s->n * sizeof(float));
    uint8_t *c = malloc(s->m * s->n), *c_ref = malloc(s->m * s->n);
    if (!a || !w || !w_safe || !bias || !scale || !c || !c_ref) return 1;
    for (size_t i = 0; i < s->m * s->k + 4; i++) a[i] = (uint8_t)rnd();
    for (size_t i = 0; i < s->n * s->k; i++) {
      w[i] = (int8_t)(int32_t)(rnd() % 255 - 127);     /* full range, as PEERS.md */
      w_safe[i] = (int8_t)(int32_t)(rnd() % 129 - 64); /* a range where the pair proof holds */
    }
    for (size_t i = 0; i < s->n; i++) {
      bias[i] = (int32_t)(rnd() % 20001) - 10000;
      scale[i] = 1e-4f * (float)(rnd() % 100 + 1) / (float)s->k;
    }
    for (size_t vi = 0; vi < nv; vi++) {
      const variant *v = &g_variants[vi];
      if (filter && !strstr(v->name, filter) && v->fn) continue;
      if (!isa_supported(v->isa)) {
        printf("  %-62s skipped (CPU lacks its ISA)\n", v->name);
        continue;
      }
      const int8_t *wv = v->pairs_safe_only ? w_safe : w;
      void *packed = aligned_alloc(64, (q8rt_qu8_qc8w_gemm_packed_size(s->n, s->k, v->nr) + 63) & ~(size_t)63);
      if (!packed) return 1;
      /* correctness against the scalar twin on this layout (an s8-activation variant's bias folds
       * the zero point as s8: pack for the twin first, then for the variant) */
      q8rt_qu8_qc8w_gemm_pack(s->n, s->k, v->nr, wv, bias, scale, 128, packed);
      variant twin = *v;
      twin.fn = NULL;
      gemm(&twin, s, a, packed, c_ref, &p);
      if (v->s8a) q8rt_qu8_qc8w_gemm_pack(s->n, s->k, v->nr, wv, bias, scale, 0, packed);
      gemm(v, s, a, packed, c, &p);
      const bool ok = memcmp(c, c_ref, s->m * s->n) == 0;
      bad |= !ok;
      /* calibrate to ~25 ms per sample, then take the median of the samples */
      size_t reps = 1;
      for (;;) {
        const double t0 = now();
        for (size_t r = 0; r < reps; r++) gemm(v, s, a, packed, c, &p);
        if (now() - t0 > 0.025 || reps > (1u << 20)) break;
        reps *= 2;
      }
      const int samples = v->fn ? 15 : 3;
      double t[15];
      for (int i = 0; i < samples; i++) {
        const double t0 = now();
        for (size_t r = 0; r < reps; r++) gemm(v, s, a, packed, c, &p);
        t[i] = (now() - t0) / (double)reps;
      }
      qsort(t, (size_t)samples, sizeof(double), cmp_double);
      printf("  %-62s %7.1f GMAC/s (best %6.1f)%s%s\n", v->name, macs / t[samples / 2] * 1e-9, macs / t[0] * 1e-9,
             ok ? "" : "  MISMATCH", v->pairs_safe_only ? "  (weights |w0|+|w1|<=128)" : "");
      free(packed);
    }
    free(a);
    free(w);
    free(w_safe);
    free(bias);
    free(scale);
    free(c);
    free(c_ref);
  }
  return bad;
}
