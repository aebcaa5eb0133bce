/* Every float through every f32-vtranscend variant this CPU runs, against the scalar twin
 * (q8rt_expf, q8rt_logf, q8rt_erff), bit for bit: all 2^32 patterns (NaN payloads, both zeros,
 * subnormals, infinities) per function. Outside make test (minutes on one core):
 *   make check-f32-vtranscend [CHECK_ARGS="exp log erf"]
 * A number among the arguments takes every N-th pattern only (N odd, e.g. 251 under qemu-aarch64:
 * 17.1 M inputs with every exponent and low mantissa bits).
 * The random and edge-value sweep of tests/unit/test_f32_vtranscend.c is what make test runs; only
 * this finds an algorithm change that moves the double result by an ulp or so, which the rounding
 * to float shows at the rare near-ties alone. Prints the differing inputs (up to 10 per variant). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "f32-vtranscend/f32-vtranscend.h"
#include "q8rt-isa.h"
#include "runtime/isa.h"

static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_vtranscend_ukernel_fn fn[Q8RT_F32_VTRANSCEND_OP_COUNT];
} g_variants[] = {
#define Q8RT_F32_VTRANSCEND_UKERNELS(isa_flag, isa) {#isa, isa_flag, Q8RT_F32_VTRANSCEND_TABLE(isa)},
#include "f32-vtranscend/f32-vtranscend.inc"
#undef Q8RT_F32_VTRANSCEND_UKERNELS
};
#define NV (sizeof(g_variants) / sizeof(g_variants[0]))
#define CHUNK 65536u

int main(int argc, char **argv) {
  static const char *const ops[] = {"exp", "log", "erf"};
  const unsigned cpu = q8rt_cpu_isa();
  static float x[CHUNK], want[CHUNK], got[CHUNK];
  int bad = 0;
  uint32_t stride = 1;
  for (int a = 1; a < argc; a++) {
    if (argv[a][0] >= '1' && argv[a][0] <= '9') stride = (uint32_t)strtoul(argv[a], NULL, 10);
  }
  for (int op = 0; op < Q8RT_F32_VTRANSCEND_OP_COUNT; op++) {
    int named = 0, asked = 0;
    for (int a = 1; a < argc; a++) {
      if (argv[a][0] >= '1' && argv[a][0] <= '9') continue;
      named = 1;
      asked |= strcmp(argv[a], ops[op]) == 0;
    }
    if (named && !asked) continue;
    uint64_t diff[NV] = {0};
    int any = 0;
    const clock_t t0 = clock();
    for (uint64_t base = 0; base < (1ull << 32); base += (uint64_t)CHUNK * stride) {
      for (uint32_t i = 0; i < CHUNK; i++) {
        const uint32_t b = (uint32_t)(base + (uint64_t)i * stride);
        memcpy(&x[i], &b, sizeof(b));
      }
      g_variants[NV - 1].fn[op](CHUNK, x, want);
      for (size_t v = 0; v + 1 < NV; v++) {
        if ((g_variants[v].isa & cpu) != g_variants[v].isa) continue;
        any = 1;
        g_variants[v].fn[op](CHUNK, x, got);
        if (memcmp(want, got, sizeof(got)) == 0) continue;
        for (uint32_t i = 0; i < CHUNK; i++) {
          uint32_t w, g, b;
          memcpy(&w, &want[i], 4), memcpy(&g, &got[i], 4), memcpy(&b, &x[i], 4);
          if (w == g) continue;
          if (diff[v]++ < 10) {
            printf("  %s %s: x 0x%08x (%a) -> 0x%08x, twin 0x%08x\n", g_variants[v].name, ops[op], b, (double)x[i], g,
                   w);
          }
        }
      }
    }
    for (size_t v = 0; v + 1 < NV; v++) {
      if ((g_variants[v].isa & cpu) != g_variants[v].isa) {
        printf("%s %s: skipped (CPU lacks its ISA)\n", ops[op], g_variants[v].name);
        continue;
      }
      printf("%s %s: %llu of %llu differ from the scalar twin\n", ops[op], g_variants[v].name,
             (unsigned long long)diff[v],
             (unsigned long long)(((1ull << 32) + (uint64_t)CHUNK * stride - 1) / ((uint64_t)CHUNK * stride) * CHUNK));
      bad |= diff[v] != 0;
    }
    printf("%s: %.0f s CPU%s\n", ops[op], (double)(clock() - t0) / CLOCKS_PER_SEC, any ? "" : " (no SIMD variant)");
    fflush(stdout);
  }
  return bad;
}
