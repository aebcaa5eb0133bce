/* f32-vtranscend: the scalar twin against values written here (exact results and the specials of
 * q8rt_expf/q8rt_logf/q8rt_erff), and every variant of f32-vtranscend.inc against it byte for byte,
 * every function: 2^18 values each (every float class, NaN payloads and signs
 * included), the edges of each algorithm's branches with their float neighbours (exp's overflow,
 * underflow and subnormal results and the clamp at [-746, 710], log's m < sqrt(1/2) doubling and
 * subnormal inputs, erf's 1, 2, 3 and 3.92 degree switches) mixed in random order so that one
 * vector holds lanes of different branches, over lengths 0-70 (the tails) and in place. Exact
 * buffer sizes. (make check-f32-vtranscend checks all 2^32 floats, outside make test.) */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "common/fmath.h"
#include "f32-vtranscend/f32-vtranscend.h"
#include "q8rt-isa.h"
#include "test.h"

typedef q8rt_f32_vtranscend_ukernel_fn vtr_table[Q8RT_F32_VTRANSCEND_OP_COUNT];
static const struct {
  const char *name;
  unsigned isa;
  vtr_table fn;
} g_vtr_variants[] = {
#define Q8RT_F32_VTRANSCEND_UKERNELS(isa_flag, isa) {#isa, isa_flag, Q8RT_F32_VTRANSCEND_TABLE(isa)},
#include "f32-vtranscend/f32-vtranscend.inc"
#undef Q8RT_F32_VTRANSCEND_UKERNELS
};
#define VTR_VARIANTS (sizeof(g_vtr_variants) / sizeof(g_vtr_variants[0]))

static float vtr_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof(f));
  return f;
}

static uint32_t vtr_of(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof(b));
  return b;
}

/* The branch edges; each is also taken with its neighbours 1 and 2 ulps away and negated. */
static const float g_vtr_edges[] = {
    0.0f,       1e-45f,  1.17549435e-38f, 1.1754942e-38f, 3e-39f,      FLT_MAX,     INFINITY,   1.0f,       2.0f,
    3.0f,       3.92f,   3.9199998f,      0.5f,           0.70710677f, 0.70710683f, 1.4142135f, 1.4142137f, 88.72283f,
    88.722839f, 89.0f,   -87.33655f,      -103.97208f,    -103.9721f,  -104.0f,     -745.0f,    -746.0f,    709.78f,
    710.0f,     -708.4f, -709.0f,         1e30f,          0.34657359f, 1e-20f,      0.1f,       5.0f,
};

static float vtr_value(uint32_t *rng) {
  const uint32_t r = test_xorshift32(rng);
  switch (r % 8) {
    case 0:
    case 1: return vtr_bits(test_xorshift32(rng));                    /* any float */
    case 2: return (float)((int32_t)(r >> 8) - (1 << 23)) * 0x1p-19f; /* [-16, 16) */
    case 3: return (float)(r >> 8) * 0x1p-22f;                        /* [0, 4): erf's branches */
    case 4: return (float)((int32_t)(r >> 8) - (1 << 23)) * 0x1p-13f; /* [-1024, 1024): exp's edges */
    default: {
      const size_t ne = sizeof(g_vtr_edges) / sizeof(g_vtr_edges[0]);
      uint32_t b = vtr_of(g_vtr_edges[(r >> 8) % ne]);
      const uint32_t d = (r >> 4) % 5;
      if (d != 2 && (b & 0x7fffffffu) != 0 && (b & 0x7fffffffu) < 0x7f800000u) b += d - 2u; /* +-1, +-2 ulps */
      return vtr_bits(b | (r & 8u) << 28);
    }
  }
}

Q8RT_TEST(f32_vtranscend_scalar_values) {
  const vtr_table *s = &g_vtr_variants[VTR_VARIANTS - 1].fn; /* the list ends with the twin */
  const float x[8] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, vtr_bits(0x7fa00001u), vtr_bits(0xffc00123u)};
  float y[8];
  (*s)[Q8RT_F32_VEXP](8, x, y);
  CHECK(y[0] == 1.0f && y[1] == 1.0f && y[2] == 2.71828183f && y[3] == 0.367879441f && y[4] == INFINITY);
  CHECK(y[5] == 0.0f && !signbit(y[5]) && vtr_of(y[6]) == 0x7fa00001u && vtr_of(y[7]) == 0xffc00123u);
  (*s)[Q8RT_F32_VLOG](8, x, y);
  CHECK(y[0] == -INFINITY && y[1] == -INFINITY && y[2] == 0.0f && !signbit(y[2]) && isnan(y[3]) && y[4] == INFINITY);
  CHECK(isnan(y[5]) && vtr_of(y[6]) == 0x7fa00001u && vtr_of(y[7]) == 0xffc00123u);
  (*s)[Q8RT_F32_VERF](8, x, y);
  CHECK(y[0] == 0.0f && !signbit(y[0]) && y[1] == 0.0f && signbit(y[1]) && y[2] == 0.842700793f);
  CHECK(y[3] == -0.842700793f && y[4] == 1.0f && y[5] == -1.0f && vtr_of(y[6]) == 0x7fa00001u);
  const float z[4] = {88.8f, -104.0f, 2.0f, 3.92f};
  (*s)[Q8RT_F32_VEXP](2, z, y);
  CHECK(y[0] == INFINITY && y[1] == 0.0f);
  (*s)[Q8RT_F32_VLOG](1, z + 2, y);
  CHECK(y[0] == 0.693147181f);
  (*s)[Q8RT_F32_VERF](2, z + 2, y);
  CHECK(y[0] == 0.995322265f && y[1] == 1.0f);
  return 0;
}

Q8RT_TEST(f32_vtranscend_variants_match_scalar) {
  static const char *const ops[] = {"exp", "log", "erf"};
  const vtr_table *twin = &g_vtr_variants[VTR_VARIANTS - 1].fn;
  int tested = 0;
  for (size_t v = 0; v + 1 < VTR_VARIANTS; v++) {
    if (!test_isa_supported(g_vtr_variants[v].isa)) continue;
    tested++;
    uint32_t rng = 0x9e3779b9u;
    /* lengths 0-70 (every tail), then spans of 4096 up to 2^18 values a function */
    for (size_t n = 0, done = 0; done < (1u << 18); n = n < 70 ? n + 1 : 4096) {
      const size_t sz = (n ? n : 1) * sizeof(float);
      float *x = malloc(sz), *want = malloc(sz), *got = malloc(sz);
      CHECK(x != NULL && want != NULL && got != NULL);
      for (size_t i = 0; i < n; i++) x[i] = vtr_value(&rng);
      for (int op = 0; op < Q8RT_F32_VTRANSCEND_OP_COUNT; op++) {
        (*twin)[op](n, x, want);
        g_vtr_variants[v].fn[op](n, x, got);
        for (size_t i = 0; i < n; i++) {
          if (vtr_of(want[i]) != vtr_of(got[i])) {
            fprintf(stderr, "  %s %s n %zu: x %a (0x%08x) -> %a, twin %a\n", g_vtr_variants[v].name, ops[op], n,
                    (double)x[i], (unsigned)vtr_of(x[i]), (double)got[i], (double)want[i]);
            CHECK(0);
          }
        }
        memcpy(got, x, n * sizeof(float));
        g_vtr_variants[v].fn[op](n, got, got);
        CHECK(n == 0 || memcmp(want, got, n * sizeof(float)) == 0);
      }
      done += n;
      free(x);
      free(want);
      free(got);
    }
  }
#if defined(__x86_64__)
  CHECK(tested >= 1);
#endif
  return 0;
}

/* Elu and Selu: the twin against values written here, then every variant against the twin byte for
 * byte over lengths 0-300 (every tail, and blocks of 256 with the AVX-512 packing's runs crossing
 * them) and spans of 4096, in place too; inputs from vtr_value (every class, NaN payloads, both
 * zeros) with runs of one sign mixed in (the packing's all-positive and all-negative blocks),
 * under alpha/gamma of the defaults, 0.5, -2 and 0. */
static const struct {
  const char *name;
  unsigned isa;
  q8rt_f32_velu_ukernel_fn fn[Q8RT_F32_VELU_OP_COUNT];
} g_velu_variants[] = {
#define Q8RT_F32_VTRANSCEND_UKERNELS(isa_flag, isa) {#isa, isa_flag, Q8RT_F32_VELU_TABLE(isa)},
#include "f32-vtranscend/f32-vtranscend.inc"
#undef Q8RT_F32_VTRANSCEND_UKERNELS
};

Q8RT_TEST(f32_velu_scalar_values) {
  const q8rt_f32_velu_params p = {2.0f, 3.0f};
  const float x[6] = {1.5f, -0.0f, 0.0f, -1.0f, -INFINITY, vtr_bits(0x7fc00123u)};
  float y[6];
  g_velu_variants[sizeof(g_velu_variants) / sizeof(g_velu_variants[0]) - 1].fn[Q8RT_F32_VELU](6, x, y, &p);
  CHECK(y[0] == 1.5f && y[1] == 0.0f && signbit(y[1]) && y[2] == 0.0f && !signbit(y[2]));
  CHECK(y[3] == 2.0f * (0.367879441f - 1.0f) && y[4] == -2.0f && vtr_of(y[5]) == 0x7fc00123u);
  g_velu_variants[sizeof(g_velu_variants) / sizeof(g_velu_variants[0]) - 1].fn[Q8RT_F32_VSELU](6, x, y, &p);
  CHECK(y[0] == 4.5f && y[1] == 0.0f && !signbit(y[1]) && y[2] == 0.0f && !signbit(y[2]));
  CHECK(y[3] == 3.0f * (2.0f * (0.367879441f - 1.0f)) && y[4] == -6.0f && vtr_of(y[5]) == 0x7fc00123u);
  return 0;
}

Q8RT_TEST(f32_velu_variants_match_scalar) {
  const size_t nv = sizeof(g_velu_variants) / sizeof(g_velu_variants[0]);
  static const q8rt_f32_velu_params params[] = {
      {1.0f, 1.0f}, {1.67326319217681884765625f, 1.05070102214813232421875f}, {0.5f, -2.0f}, {0.0f, 0.0f}};
  int tested = 0;
  for (size_t v = 0; v + 1 < nv; v++) {
    if (!test_isa_supported(g_velu_variants[v].isa)) continue;
    tested++;
    uint32_t rng = 0x85ebca6bu;
    for (size_t n = 0, round = 0; n <= 4096; n = n < 300 ? n + 1 : n + 1898, round++) {
      const size_t sz = (n ? n : 1) * sizeof(float);
      float *x = malloc(sz), *want = malloc(sz), *got = malloc(sz);
      CHECK(x != NULL && want != NULL && got != NULL);
      for (size_t i = 0; i < n;) {
        const uint32_t r = test_xorshift32(&rng);
        if (r % 4 == 0) { /* a run of one sign, up to 40 long */
          const size_t len = (r >> 8) % 40 + 1;
          const uint32_t sign = (r >> 16 & 1) << 31;
          for (size_t k = 0; k < len && i < n; k++, i++)
            x[i] = vtr_bits((vtr_of(vtr_value(&rng)) & 0x7fffffffu) | sign);
        } else {
          x[i++] = vtr_value(&rng);
        }
      }
      for (int op = 0; op < Q8RT_F32_VELU_OP_COUNT; op++) {
        const q8rt_f32_velu_params *p = &params[round % 4];
        g_velu_variants[nv - 1].fn[op](n, x, want, p);
        g_velu_variants[v].fn[op](n, x, got, p);
        for (size_t i = 0; i < n; i++) {
          if (vtr_of(want[i]) != vtr_of(got[i])) {
            fprintf(stderr, "  %s %s n %zu: x %a (0x%08x) -> %a, twin %a\n", g_velu_variants[v].name,
                    op == Q8RT_F32_VELU ? "elu" : "selu", n, (double)x[i], (unsigned)vtr_of(x[i]), (double)got[i],
                    (double)want[i]);
            CHECK(0);
          }
        }
        memcpy(got, x, n * sizeof(float));
        g_velu_variants[v].fn[op](n, got, got, p);
        CHECK(n == 0 || memcmp(want, got, n * sizeof(float)) == 0);
      }
      free(x);
      free(want);
      free(got);
    }
  }
#if defined(__x86_64__)
  CHECK(tested >= 1);
#endif
  return 0;
}
