/* qu8-qc8w-gemm-chw: the scalar twin against an independent int64 loop on unpacked weights and an
 * unzipped activation matrix, and every variant of qu8-qc8w-gemm-chw.inc against the twin byte
 * for byte over channel counts 1..MR, pixel counts around the vector width, ragged K, output
 * strides wider than the rows (gaps must stay untouched), zero points at the type limits, NaN/inf
 * scales and the rounding modes. The panel is allocated to exactly the pixels the contract lets a
 * kernel read (a multiple of NR) so that ASan catches more. */
#include <fenv.h>
#include <math.h>
#include <stdlib.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "runtime/isa.h"
#include "test.h"

typedef struct chw_gemm_variant {
  unsigned isa;
  q8rt_qu8_gemm_chw_ukernel_fn fn;
  size_t mr, nr;
  const char *name;
} chw_gemm_variant;

static const chw_gemm_variant cg_variants[] = {
#define Q8RT_GEMM_CHW_UKERNEL(isa, fn, mr, nr) {isa, fn, mr, nr, #fn},
#include "qu8-qc8w-gemm-chw/qu8-qc8w-gemm-chw.inc"
#undef Q8RT_GEMM_CHW_UKERNEL
    {0, NULL, 0, 0, NULL},
};

static uint32_t cg_rng = 0x1b873593u;
static uint32_t cg_rnd(void) { return test_xorshift32(&cg_rng); }

typedef struct cg_case {
  size_t mr, nc, kc, y_stride, mrp, npad; /* mrp: the block's MR; npad: panel pixels */
  int x_signed, y_signed;
  int32_t x_zp, y_zp;
  uint8_t *x; /* raw activations [kc][nc] */
  int8_t *w;  /* [mr][kc] */
  int32_t *bias;
  float *scale;
  uint8_t *panel;
  void *packed;
  q8rt_qu8_requant_params rq;
} cg_case;

static void cg_free(cg_case *k) {
  free(k->x);
  free(k->w);
  free(k->bias);
  free(k->scale);
  free(k->panel);
  free(k->packed);
  memset(k, 0, sizeof(*k));
}

/* mode 0 random, 1 extremes */
static int cg_make(cg_case *k, size_t mr, size_t MR, size_t nc, size_t nr, size_t kc, int mode) {
  memset(k, 0, sizeof(*k));
  k->mr = mr;
  k->mrp = MR;
  k->nc = nc;
  k->kc = kc;
  k->npad = (nc + nr - 1) / nr * nr;
  k->y_stride = nc + (cg_rnd() % 2 ? cg_rnd() % 9 : 0);
  k->x_signed = (int)(cg_rnd() & 1);
  k->y_signed = (int)(cg_rnd() & 1);
  const int32_t xmin = k->x_signed ? -128 : 0, ymin = k->y_signed ? -128 : 0;
  k->x_zp = xmin + (int32_t)(cg_rnd() % 256);
  if (cg_rnd() % 4 == 0) k->x_zp = xmin + (cg_rnd() & 1 ? 255 : 0);
  k->y_zp = ymin + (int32_t)(cg_rnd() % 256);
  k->rq.y_lo = (float)(ymin - k->y_zp);
  k->rq.y_hi = (float)(ymin + 255 - k->y_zp);
  k->rq.y_zero_point = k->y_zp;
  k->rq.x_xor = k->x_signed ? 0x80 : 0;
  k->rq.y_signed = (uint8_t)k->y_signed;
  const size_t k4 = (kc + 3) / 4;
  k->x = malloc(kc * nc);
  k->w = malloc(MR * kc);
  k->bias = malloc(MR * sizeof(int32_t));
  k->scale = malloc(MR * sizeof(float));
  k->panel = malloc(k4 * 4 * k->npad);
  k->packed = malloc(q8rt_qu8_qc8w_gemm_packed_size(mr, kc, MR));
  if (!k->x || !k->w || !k->bias || !k->scale || !k->panel || !k->packed) return -1;
  for (size_t i = 0; i < kc * nc; i++) {
    k->x[i] = (uint8_t)cg_rnd();
    if (mode == 1) k->x[i] = (uint8_t)((cg_rnd() & 1 ? 0xFF : 0) ^ k->rq.x_xor);
  }
  for (size_t i = 0; i < MR * kc; i++) k->w[i] = mode == 1 ? (cg_rnd() & 1 ? 127 : -128) : (int8_t)cg_rnd();
  for (size_t m = 0; m < MR; m++) {
    switch (cg_rnd() % 3) {
      case 0: k->bias[m] = (int32_t)cg_rnd(); break; /* anywhere: the accumulator wraps */
      case 1: k->bias[m] = 0; break;
      default: k->bias[m] = (int32_t)(cg_rnd() % 20001) - 10000; break;
    }
    k->scale[m] = cg_rnd() % 4 == 0 ? ldexpf(1.0f, -(int)(cg_rnd() % 24))
                                    : (0.5f + (float)(cg_rnd() % 1000) / 1000.0f) / (float)(64 * kc);
  }
  /* the panel as x8-zip-x4 makes it: k4 groups of 4 values per pixel, past K and nc: garbage */
  for (size_t i = 0; i < k4 * 4 * k->npad; i++) k->panel[i] = (uint8_t)cg_rnd();
  for (size_t kk = 0; kk < kc; kk++)
    for (size_t n = 0; n < nc; n++) k->panel[(kk / 4) * 4 * k->npad + 4 * n + kk % 4] = k->x[kk * nc + n] ^ k->rq.x_xor;
  /* past K the weights are 0 (the packing pads), so garbage panel bytes there add nothing */
  const int32_t x_zp_u8 = (int32_t)(uint8_t)((uint8_t)k->x_zp ^ k->rq.x_xor);
  q8rt_qu8_qc8w_gemm_pack(mr, kc, MR, k->w, k->bias, k->scale, x_zp_u8, k->packed);
  return 0;
}

static void cg_plain(const cg_case *k, uint8_t *y) {
  for (size_t m = 0; m < k->mr; m++)
    for (size_t n = 0; n < k->nc; n++) {
      int64_t acc = k->bias[m];
      for (size_t kk = 0; kk < k->kc; kk++) {
        const uint8_t b = k->x[kk * k->nc + n];
        const int64_t xv = k->x_signed ? (int8_t)b : b;
        acc += (xv - k->x_zp) * k->w[m * k->kc + kk];
      }
      const int32_t acc32 = (int32_t)(uint32_t)(uint64_t)acc;
      y[m * k->y_stride + n] =
          (uint8_t)(test_ref_round_clamp((float)acc32 * k->scale[m], k->rq.y_lo, k->rq.y_hi) + k->y_zp);
    }
}

static uint8_t *cg_run(const cg_case *k, q8rt_qu8_gemm_chw_ukernel_fn fn) {
  const size_t bytes = (k->mr - 1) * k->y_stride + k->nc;
  uint8_t *y = malloc(k->mr * k->y_stride);
  if (y == NULL) return NULL;
  memset(y, 0x5A, k->mr * k->y_stride);
  if (fn != NULL) {
    fn(k->mr, k->nc, k->kc, k->panel, 4 * k->npad, k->packed, y, k->y_stride, &k->rq);
  } else {
    q8rt_qu8_qc8w_gemm_chw_minmax_fp32_ukernel__scalar(k->mr, k->nc, k->kc, k->panel, 4 * k->npad, k->packed, y,
                                                       k->y_stride, &k->rq, k->mrp);
  }
  (void)bytes;
  return y;
}

static int cg_gaps_untouched(const cg_case *k, const uint8_t *y) {
  for (size_t m = 0; m < k->mr; m++)
    for (size_t n = k->nc; n < k->y_stride; n++)
      if (y[m * k->y_stride + n] != 0x5A) return 0;
  return 1;
}

Q8RT_TEST(gemm_chw_scalar_vs_plain_loop) {
  for (int trial = 0; trial < 300; trial++) {
    cg_case k;
    const size_t MR = 1 + cg_rnd() % 9, mr = 1 + cg_rnd() % MR;
    CHECK(cg_make(&k, mr, MR, 1 + cg_rnd() % 40, 1 + cg_rnd() % 32, 1 + cg_rnd() % 70, trial % 2) == 0);
    uint8_t *y0 = malloc(mr * k.y_stride), *y1 = cg_run(&k, NULL);
    CHECK(y0 != NULL && y1 != NULL);
    memset(y0, 0x5A, mr * k.y_stride);
    cg_plain(&k, y0);
    const int ok = memcmp(y0, y1, mr * k.y_stride) == 0 && cg_gaps_untouched(&k, y1);
    if (!ok) fprintf(stderr, "  mr %zu/%zu nc %zu kc %zu\n", mr, MR, k.nc, k.kc);
    free(y0);
    free(y1);
    cg_free(&k);
    CHECK(ok);
  }
  return 0;
}

static int cg_compare(const chw_gemm_variant *v, cg_case *k, int mode) {
  fesetround(mode);
  uint8_t *y0 = cg_run(k, NULL), *y1 = cg_run(k, v->fn);
  fesetround(FE_TONEAREST);
  int ok = y0 != NULL && y1 != NULL && memcmp(y0, y1, k->mr * k->y_stride) == 0 && cg_gaps_untouched(k, y1);
  if (!ok && y0 && y1) {
    size_t i = 0;
    while (i < k->mr * k->y_stride && y0[i] == y1[i]) i++;
    fprintf(stderr, "  %s: mr %zu nc %zu kc %zu: byte %zu (channel %zu) %u != %u\n", v->name, k->mr, k->nc, k->kc, i,
            i / k->y_stride, y1[i], y0[i]);
  }
  free(y0);
  free(y1);
  return ok;
}

Q8RT_TEST(gemm_chw_variants_vs_scalar) {
  static const size_t ncs[] = {1, 2, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 96, 100, 128};
  static const size_t kcs[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 63, 64, 65, 147, 256};
  for (const chw_gemm_variant *v = cg_variants; v->fn != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      printf("  skip %s: CPU lacks the ISA\n", v->name);
      continue;
    }
    int cases = 0;
    for (size_t mr = 1; mr <= v->mr; mr++)
      for (size_t ni = 0; ni < sizeof(ncs) / sizeof(ncs[0]); ni++)
        for (size_t ki = 0; ki < sizeof(kcs) / sizeof(kcs[0]); ki += 1 + (mr + ni) % 2) {
          cg_case k;
          CHECK(cg_make(&k, mr, v->mr, ncs[ni], v->nr, kcs[ki], (int)((mr + ni + ki) % 3 == 0)) == 0);
          const int mode = cases % 5 == 3 ? FE_UPWARD : cases % 5 == 4 ? FE_DOWNWARD : FE_TONEAREST;
          const int ok = cg_compare(v, &k, mode);
          cg_free(&k);
          CHECK(ok);
          cases++;
        }
    printf("  %s: %d cases\n", v->name, cases);
    CHECK(cases > 500);
  }
  return 0;
}

/* NaN/inf/zero scales and the tightest clamp. */
Q8RT_TEST(gemm_chw_variants_edge_params) {
  for (const chw_gemm_variant *v = cg_variants; v->fn != NULL; v++) {
    if (!test_isa_supported(v->isa)) continue;
    for (int trial = 0; trial < 60; trial++) {
      cg_case k;
      const size_t mr = 1 + cg_rnd() % v->mr;
      CHECK(cg_make(&k, mr, v->mr, 1 + cg_rnd() % 70, v->nr, 1 + cg_rnd() % 40, 0) == 0);
      const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e30f, 1e-40f};
      const size_t k4 = (k.kc + 3) / 4;
      for (size_t m = 0; m < mr; m++) {
        const float s = specials[cg_rnd() % 7];
        memcpy((uint8_t *)k.packed + v->mr * (4 + 4 * k4) + 4 * m, &s, sizeof(s));
      }
      if (trial % 3 == 0) k.rq.y_hi = k.rq.y_lo;
      const int ok = cg_compare(v, &k, FE_TONEAREST);
      cg_free(&k);
      CHECK(ok);
    }
  }
  return 0;
}
