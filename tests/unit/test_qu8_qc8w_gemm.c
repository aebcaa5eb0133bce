/* qu8-qc8w-gemm: the scalar twin against an independent int64 loop on unpacked weights, and every
 * variant of qu8-qc8w-gemm.inc against the scalar twin byte for byte, over tile edges, ragged K,
 * odd strides, extreme values, zero points and scales. Buffers are sized exactly so that ASan
 * catches any read or write beyond what the kernel contract allows. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"
#include "runtime/isa.h"
#include "test.h"

typedef struct gemm_variant {
  const char *name;
  q8rt_qu8_gemm_ukernel_fn fn;
  unsigned isa;
  size_t mr, nr;
  bool pairs_safe_only; /* valid only when q8rt_qu8_qc8w_gemm_pairs_safe holds for the weights */
  bool s8a;             /* packed with the activation zero point as s8 (x_zp_u8 - 128) */
} gemm_variant;

#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr) {#fn, fn, isa, mr, nr, false, false},
#define Q8RT_GEMM_UKERNEL_PAIRS_SAFE(isa, fn, mr, nr) {#fn, fn, isa, mr, nr, true, false},
#define Q8RT_GEMM_UKERNEL_S8A(isa, fn, mr, nr) {#fn, fn, isa, mr, nr, false, true},
static const gemm_variant g_variants[] = {
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
    {NULL, NULL, 0, 0, 0, false, false},
};
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_PAIRS_SAFE
#undef Q8RT_GEMM_UKERNEL_S8A

static uint32_t g_rng = 0x2545f491u;
static uint32_t rnd(void) { return test_xorshift32(&g_rng); }

/* One problem: raw activations (u8, or s8 when x_xor = 0x80), weights [n][k], per-channel
 * bias and scale, and the output quantization. */
typedef struct gemm_case {
  size_t mr, nc, kc, a_stride, c_stride;
  int x_signed, y_signed;
  int32_t x_zp, y_zp; /* raw zero points in the activation / output type */
  int a_mode, w_mode, b_mode, s_mode;
  int32_t cut_lo, cut_hi; /* output range narrowed by this much at each end (a fused Relu/Clip); 0: the type's */
} gemm_case;

enum { A_RANDOM, A_ZERO, A_MAX, A_MIN_MAX, A_ZP, A_MODES };
enum { W_RANDOM, W_EXTREME, W_MIN, W_SMALL, W_MODES, W_PAIR_EDGE = W_MODES };
enum { B_RANDOM, B_NULL, B_FULL, B_MODES };
enum { S_RANDOM, S_POW2, S_TINY, S_ODD, S_NONFINITE, S_MODES };

static const float k_pow2_scales[] = {0x1p-20f, 0x1p-3f, 1.0f, 3.0f, -0x1p-20f, -0x1p-7f, -1.0f, 0x1p-12f, 0.5f};

typedef struct gemm_data {
  uint8_t *a; /* (mr - 1) * a_stride + round_up(kc, 4) bytes */
  size_t a_size;
  int8_t *w;     /* [nc][kc] */
  int32_t *bias; /* NULL in B_NULL */
  float *scale;
} gemm_data;

static uint8_t gen_a(const gemm_case *t) {
  switch (t->a_mode) {
    case A_ZERO: return t->x_signed ? 0x80 : 0;   /* the type's minimum */
    case A_MAX: return t->x_signed ? 0x7f : 0xff; /* the type's maximum */
    case A_MIN_MAX: return (rnd() & 1) ? (t->x_signed ? 0x7f : 0xff) : (t->x_signed ? 0x80 : 0);
    case A_ZP: return (rnd() & 3) ? (uint8_t)t->x_zp : (uint8_t)rnd();
    default: return (uint8_t)rnd();
  }
}

static int8_t gen_w(const gemm_case *t) {
  switch (t->w_mode) {
    case W_EXTREME: return (rnd() & 1) ? 127 : -128;
    case W_MIN: return -128;
    case W_SMALL: return (int8_t)((int32_t)(rnd() % 129) - 64); /* |w0| + |w1| <= 128 */
    default: return (int8_t)rnd();
  }
}

static bool gen_data(const gemm_case *t, gemm_data *d) {
  const size_t kpad = (t->kc + 3) & ~(size_t)3;
  d->a_size = (t->mr - 1) * t->a_stride + kpad;
  d->a = malloc(d->a_size);
  d->w = malloc(t->nc * t->kc);
  d->bias = t->b_mode == B_NULL ? NULL : malloc(t->nc * sizeof(int32_t));
  d->scale = malloc(t->nc * sizeof(float));
  if (!d->a || !d->w || (t->b_mode != B_NULL && !d->bias) || !d->scale) return false;
  for (size_t i = 0; i < d->a_size; i++) d->a[i] = (uint8_t)rnd(); /* gaps and K padding: garbage */
  for (size_t m = 0; m < t->mr; m++)
    for (size_t k = 0; k < t->kc; k++) d->a[m * t->a_stride + k] = gen_a(t);
  for (size_t i = 0; i < t->nc * t->kc; i++) d->w[i] = gen_w(t);
  if (t->w_mode == W_PAIR_EDGE) {
    /* pairs (k0,k1), (k2,k3) with |w0| + |w1| = 128 exactly: the edge of the vpmaddubsw proof */
    for (size_t n = 0; n < t->nc; n++) {
      for (size_t k = 0; k < t->kc; k += 2) {
        const int32_t r = (int32_t)(rnd() % 129);
        int32_t w0 = (rnd() & 1) ? -r : r, w1 = (rnd() & 1) ? -(128 - r) : 128 - r;
        if (w0 == 128) w0 = -128;
        if (w1 == 128) w1 = -128;
        d->w[n * t->kc + k] = (int8_t)w0;
        if (k + 1 < t->kc) d->w[n * t->kc + k + 1] = (int8_t)w1;
      }
    }
  }
  for (size_t n = 0; n < t->nc; n++) {
    if (d->bias) d->bias[n] = t->b_mode == B_FULL ? (int32_t)rnd() : (int32_t)(rnd() % 200001) - 100000;
    float s;
    switch (t->s_mode) {
      case S_POW2: s = k_pow2_scales[rnd() % (sizeof(k_pow2_scales) / sizeof(k_pow2_scales[0]))]; break;
      case S_TINY: s = ldexpf(1.0f + (float)(rnd() % 1024) / 1024.0f, -(int)(rnd() % 24) - 8); break;
      case S_ODD: s = (float)(rnd() % 100000 + 1) / 7777777.0f * ((rnd() & 1) ? 1.0f : -1.0f); break;
      case S_NONFINITE: { /* NaN -> y_lo, inf * 0 = NaN, +-inf saturate: no compiler may change these */
        const float special[] = {NAN, -NAN, INFINITY, -INFINITY, 1e-3f};
        s = special[rnd() % 5];
        break;
      }
      default: s = (float)(rnd() % 1000000) * 1e-9f * ((rnd() & 7) ? 1.0f : -1.0f); break;
    }
    d->scale[n] = s;
  }
  return true;
}

static void free_data(gemm_data *d) {
  free(d->a);
  free(d->w);
  free(d->bias);
  free(d->scale);
}

static void make_params(const gemm_case *t, q8rt_qu8_requant_params *p) {
  const int32_t qmin = (t->y_signed ? -128 : 0) + t->cut_lo, qmax = (t->y_signed ? 127 : 255) - t->cut_hi;
  p->y_lo = (float)(qmin - t->y_zp);
  p->y_hi = (float)(qmax - t->y_zp);
  p->y_zero_point = t->y_zp;
  p->x_xor = t->x_signed ? 0x80 : 0;
  p->y_signed = (uint8_t)t->y_signed;
}

/* The independent formulation: (x - x_zp) * w in int64 on the unpacked weights, wrapped to int32,
 * then rounded with nearbyintf (round-half-even in the default mode) and clamped after adding
 * the zero point. */
static void reference(const gemm_case *t, const gemm_data *d, uint8_t *y /* [mr][nc] */) {
  const int32_t qmin = (t->y_signed ? -128 : 0) + t->cut_lo, qmax = (t->y_signed ? 127 : 255) - t->cut_hi;
  for (size_t m = 0; m < t->mr; m++) {
    for (size_t n = 0; n < t->nc; n++) {
      int64_t acc = d->bias ? d->bias[n] : 0;
      for (size_t k = 0; k < t->kc; k++) {
        const uint8_t raw = d->a[m * t->a_stride + k];
        const int64_t x = t->x_signed ? (int64_t)(int8_t)raw : (int64_t)raw;
        acc += (x - t->x_zp) * (int64_t)d->w[n * t->kc + k];
      }
      const int32_t acc32 = (int32_t)(uint32_t)(uint64_t)acc;
      const float v = (float)acc32 * d->scale[n];
      double q = (double)nearbyintf(v) + t->y_zp;
      if (isnan(v)) q = qmin; /* the contract: NaN goes to the low end */
      if (q < qmin) q = qmin;
      if (q > qmax) q = qmax;
      y[m * t->nc + n] = (uint8_t)(int32_t)q;
    }
  }
}

#define SENTINEL 0xA5

/* Runs fn (or the scalar twin with nr when fn is NULL) into an exactly sized output buffer and
 * checks the bytes between rows are untouched. Returns NULL on failure. */
static uint8_t *run(const gemm_case *t, const gemm_data *d, const void *packed, size_t nr, q8rt_qu8_gemm_ukernel_fn fn,
                    const q8rt_qu8_requant_params *p) {
  const size_t c_size = (t->mr - 1) * t->c_stride + t->nc;
  uint8_t *c = malloc(c_size);
  if (!c) return NULL;
  memset(c, SENTINEL, c_size);
  if (fn) {
    fn(t->mr, t->nc, t->kc, d->a, t->a_stride, packed, c, t->c_stride, p);
  } else {
    q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel__scalar(t->mr, t->nc, t->kc, d->a, t->a_stride, packed, c, t->c_stride, p,
                                                   nr);
  }
  for (size_t m = 0; m + 1 < t->mr; m++) {
    for (size_t i = t->nc; i < t->c_stride; i++) {
      if (c[m * t->c_stride + i] != SENTINEL) {
        free(c);
        return NULL;
      }
    }
  }
  return c;
}

static void report(const char *what, const gemm_case *t, size_t nr) {
  fprintf(stderr,
          "  %s: mr=%zu nc=%zu kc=%zu nr=%zu a_stride=%zu c_stride=%zu x_signed=%d y_signed=%d x_zp=%d y_zp=%d "
          "modes a%d w%d b%d s%d cut %d/%d\n",
          what, t->mr, t->nc, t->kc, nr, t->a_stride, t->c_stride, t->x_signed, t->y_signed, t->x_zp, t->y_zp,
          t->a_mode, t->w_mode, t->b_mode, t->s_mode, t->cut_lo, t->cut_hi);
}

/* Checks the scalar twin (packing with nr) against the reference and, when v is not NULL, the
 * variant against the scalar twin. Returns 0 when everything matches. */
static int check_case(const gemm_case *t, size_t nr, const gemm_variant *v) {
  gemm_data d;
  memset(&d, 0, sizeof(d));
  int rc = 1;
  void *packed = NULL;
  uint8_t *ref = NULL, *sc = NULL, *vc = NULL;
  if (!gen_data(t, &d)) goto done;
  const int32_t x_zp_u8 = t->x_signed ? t->x_zp + 128 : t->x_zp;
  packed = malloc(q8rt_qu8_qc8w_gemm_packed_size(t->nc, t->kc, nr));
  ref = malloc(t->mr * t->nc);
  if (!packed || !ref) goto done;
  q8rt_qu8_qc8w_gemm_pack(t->nc, t->kc, nr, d.w, d.bias, d.scale, x_zp_u8, packed);
  q8rt_qu8_requant_params p;
  make_params(t, &p);
  reference(t, &d, ref);
  sc = run(t, &d, packed, nr, NULL, &p);
  if (!sc) {
    report("scalar wrote between rows", t, nr);
    goto done;
  }
  for (size_t m = 0; m < t->mr; m++) {
    if (memcmp(sc + m * t->c_stride, ref + m * t->nc, t->nc) != 0) {
      report("scalar != reference", t, nr);
      goto done;
    }
  }
  if (v != NULL && v->pairs_safe_only && !q8rt_qu8_qc8w_gemm_pairs_safe(t->nc, t->kc, d.w)) {
    report("generated weights break the pair proof", t, nr);
    goto done;
  }
  if (v != NULL && v->s8a) {
    /* the same weights packed for s8 activations: bias - (x_zp_u8 - 128) * sum w */
    q8rt_qu8_qc8w_gemm_pack(t->nc, t->kc, nr, d.w, d.bias, d.scale, x_zp_u8 - 128, packed);
  }
  if (v != NULL) {
    vc = run(t, &d, packed, nr, v->fn, &p);
    if (!vc) {
      report(v->name, t, nr);
      fprintf(stderr, "  (wrote between rows)\n");
      goto done;
    }
    for (size_t m = 0; m < t->mr; m++) {
      for (size_t n = 0; n < t->nc; n++) {
        if (vc[m * t->c_stride + n] != sc[m * t->c_stride + n]) {
          report(v->name, t, nr);
          fprintf(stderr, "  row %zu channel %zu: %u, scalar %u\n", m, n, vc[m * t->c_stride + n],
                  sc[m * t->c_stride + n]);
          goto done;
        }
      }
    }
  }
  rc = 0;
done:
  free(vc);
  free(sc);
  free(ref);
  free(packed);
  free_data(&d);
  return rc;
}

/* Zero points: the type limits half the time, random otherwise. */
static void random_quant(gemm_case *t) {
  t->x_signed = (int)(rnd() & 1);
  t->y_signed = (int)(rnd() & 1);
  const int32_t xlo = t->x_signed ? -128 : 0, ylo = t->y_signed ? -128 : 0;
  switch (rnd() % 4) {
    case 0: t->x_zp = xlo; break;
    case 1: t->x_zp = xlo + 255; break;
    default: t->x_zp = xlo + (int32_t)(rnd() % 256); break;
  }
  switch (rnd() % 4) {
    case 0: t->y_zp = ylo; break;
    case 1: t->y_zp = ylo + 255; break;
    default: t->y_zp = ylo + (int32_t)(rnd() % 256); break;
  }
  t->a_mode = (int)(rnd() % A_MODES);
  t->w_mode = (int)(rnd() % W_MODES);
  t->b_mode = (int)(rnd() % B_MODES);
  t->s_mode = (int)(rnd() % S_MODES);
  /* a quarter of the cases clamp to a narrower range: kernels that saturate instead of clamping
   * where the range is the type's must still clamp here */
  t->cut_lo = t->cut_hi = 0;
  if (rnd() % 4 == 0) {
    t->cut_lo = (int32_t)(rnd() % 3 == 0 ? 0 : rnd() % 100);
    t->cut_hi = (int32_t)(rnd() % 3 == 0 ? 0 : rnd() % 100);
  }
}

static const size_t k_kc[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 31, 64, 67, 147, 256, 301};

/* The full shape sweep for one variant (or for the scalar twin alone with nr when v is NULL). */
static int sweep(size_t mr_max, size_t nr, const gemm_variant *v) {
  /* the last block of each width an AVX-512 kernel narrows to (8, 16, 24 of 32 channels; 33-40
   * and 41-48 channels over two packed blocks) */
  size_t ncs[] = {1,          nr - 1,      nr,     nr + 1, 2 * nr + 3,      3 * nr,         nr / 2,
                  nr / 2 + 5, nr + nr / 2, nr + 8, nr + 9, nr + nr / 2 + 8, 2 * nr + nr / 2};
  for (size_t mr = 1; mr <= mr_max; mr++) {
    for (size_t ni = 0; ni < sizeof(ncs) / sizeof(ncs[0]); ni++) {
      if (ncs[ni] == 0) continue;
      for (size_t ki = 0; ki < sizeof(k_kc) / sizeof(k_kc[0]); ki++) {
        gemm_case t = {0};
        t.mr = mr;
        t.nc = ncs[ni];
        t.kc = k_kc[ki];
        t.a_stride = t.kc + ((rnd() & 1) ? 0 : 13); /* 0 or an odd prime of slack */
        t.c_stride = t.nc + ((rnd() & 1) ? 0 : 7);
        random_quant(&t);
        if (v && v->pairs_safe_only) t.w_mode = (rnd() & 1) ? W_SMALL : W_PAIR_EDGE;
        if (check_case(&t, nr, v)) return 1;
      }
    }
  }
  /* Every extreme combination on a mid-size shape. */
  for (int xs = 0; xs < 2; xs++) {
    for (int ys = 0; ys < 2; ys++) {
      for (int zi = 0; zi < 4; zi++) {
        for (int am = A_ZERO; am <= A_MIN_MAX; am++) {
          for (int wm = W_EXTREME; wm <= W_MIN; wm++) {
            gemm_case t = {0};
            t.mr = mr_max;
            t.nc = 2 * nr + 3;
            t.kc = 67;
            t.a_stride = 71;
            t.c_stride = t.nc + 5;
            t.x_signed = xs;
            t.y_signed = ys;
            t.x_zp = (xs ? -128 : 0) + ((zi & 1) ? 255 : 0);
            t.y_zp = (ys ? -128 : 0) + ((zi & 2) ? 255 : 0);
            t.a_mode = am;
            t.w_mode = v && v->pairs_safe_only ? W_PAIR_EDGE : wm;
            t.b_mode = (zi + am) % B_MODES;
            t.s_mode = S_POW2;
            if (check_case(&t, nr, v)) return 1;
          }
        }
      }
    }
  }
  /* Large K: accumulators far from int16 range (255 * 128 * 4608 ~ 2^27). */
  for (int i = 0; i < 6; i++) {
    gemm_case t = {0};
    t.mr = i % 2 ? mr_max : 1 + (size_t)i % mr_max;
    t.nc = i < 3 ? nr + 1 : 2 * nr;
    t.kc = i == 5 ? 4607 : 4608;
    t.a_stride = t.kc + 3;
    t.c_stride = t.nc + 11;
    random_quant(&t);
    t.a_mode = i % 2 ? A_MIN_MAX : A_MAX;
    t.w_mode = i < 4 ? W_EXTREME : W_MIN;
    if (v && v->pairs_safe_only) t.w_mode = W_PAIR_EDGE;
    t.s_mode = i % 3 == 0 ? S_TINY : S_RANDOM;
    if (check_case(&t, nr, v)) return 1;
  }
  return 0;
}

Q8RT_TEST(gemm_pack_layout) {
  /* 3 channels, K = 5, NR = 2: two blocks, K padded to 8. */
  const int8_t w[15] = {1, 2, 3, 4, 5, -1, -2, -3, -4, -5, 127, -128, 0, 0, 1};
  const int32_t bias[3] = {10, -20, 2147483647};
  const float scale[3] = {0.5f, 0.25f, 2.0f};
  const size_t size = q8rt_qu8_qc8w_gemm_packed_size(3, 5, 2);
  CHECK(size == 2 * 2 * (4 + 8 + 4));
  uint8_t *p = malloc(size);
  CHECK(p != NULL);
  q8rt_qu8_qc8w_gemm_pack(3, 5, 2, w, bias, scale, 3, p);
  int32_t b[2];
  memcpy(b, p, 8);
  CHECK(b[0] == 10 - 3 * 15 && b[1] == -20 + 3 * 15);
  const int8_t *wp = (const int8_t *)(p + 8);
  const int8_t w0[16] = {1, 2, 3, 4, -1, -2, -3, -4, 5, 0, 0, 0, -5, 0, 0, 0};
  CHECK(memcmp(wp, w0, 16) == 0);
  float s[2];
  memcpy(s, p + 24, 8);
  CHECK(s[0] == 0.5f && s[1] == 0.25f);
  /* second block: one real channel, one zero channel; bias wraps modulo 2^32 */
  memcpy(b, p + 32, 8);
  CHECK(b[0] == (int32_t)(2147483647u - 3u * (uint32_t)(127 - 128 + 1)) && b[1] == 0);
  CHECK(memcmp(p + 32, p + 32, 0) == 0);
  const int8_t w1[16] = {127, -128, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  CHECK(memcmp(p + 40, w1, 16) == 0);
  memcpy(s, p + 56, 8);
  CHECK(s[0] == 2.0f && s[1] == 0.0f);
  free(p);
  return 0;
}

Q8RT_TEST(gemm_scalar_vs_reference) {
  const size_t nrs[] = {1, 4, 8, 16, 32};
  for (size_t i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
    CHECK(sweep(nrs[i] < 8 ? 3 : 2, nrs[i], NULL) == 0);
  }
  /* bias wrap-around: acc past INT32_MAX must wrap like the int32 accumulators */
  gemm_case t = {.mr = 2,
                 .nc = 3,
                 .kc = 4,
                 .a_stride = 4,
                 .c_stride = 3,
                 .a_mode = A_MAX,
                 .w_mode = W_EXTREME,
                 .b_mode = B_FULL,
                 .s_mode = S_TINY};
  for (int i = 0; i < 200; i++) CHECK(check_case(&t, 2, NULL) == 0);
  return 0;
}

/* check(v) for every variant of a list (up to its NULL entry) the CPU can run; the others are
 * reported as skipped. Returns 1 at the first variant that fails, naming it. */
static int each_variant(const gemm_variant *list, int (*check)(const gemm_variant *v)) {
  for (const gemm_variant *v = list; v->name != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      printf("     skip %s (CPU lacks its ISA)\n", v->name);
      continue;
    }
    if (check(v)) {
      fprintf(stderr, "  variant %s failed\n", v->name);
      return 1;
    }
  }
  return 0;
}

static int sweep_variant(const gemm_variant *v) { return sweep(v->mr, v->nr, v); }

Q8RT_TEST(gemm_variants_vs_scalar) { return each_variant(g_variants, sweep_variant); }

/* ---- few-channel variants (Q8RT_GEMM_UKERNEL_FEWN: weights packed with NR = 1) ----------------- */

#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr)
#define Q8RT_GEMM_UKERNEL_FEWN(isa, fn, mr, nr) {#fn, fn, isa, mr, nr, false, false},
static const gemm_variant g_fewn_variants[] = {
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
    {NULL, NULL, 0, 0, 0, false, false},
};
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_FEWN

/* The shape sweep (nc 1, 2, 3, 5, 9, 10 with nr = 1: groups of 1, 2, 3 and 4 channels), then 1 to
 * 8 channels, every row count, K around the 32-byte chunks, dense and strided outputs. */
static int sweep_fewn_variant(const gemm_variant *v) {
  if (sweep(v->mr, v->nr, v)) return 1;
  const size_t kcs[] = {4, 28, 32, 36, 64, 96, 100, 127, 128, 129, 384};
  for (size_t nc = 1; nc <= 8; nc++) {
    for (size_t mr = 1; mr <= v->mr; mr++) {
      for (size_t ki = 0; ki < sizeof(kcs) / sizeof(kcs[0]); ki++) {
        gemm_case t = {0};
        t.mr = mr;
        t.nc = nc;
        t.kc = kcs[ki];
        t.a_stride = t.kc + ((rnd() & 1) ? 0 : 5);
        t.c_stride = t.nc + ((mr + ki) % 2 ? 0 : 2 + mr % 5);
        random_quant(&t);
        if (check_case(&t, v->nr, v)) return 1;
      }
    }
  }
  return 0;
}

Q8RT_TEST(gemm_fewn_variants_vs_scalar) { return each_variant(g_fewn_variants, sweep_fewn_variant); }

Q8RT_TEST(gemm_pairs_safe_proof) {
  const int8_t ok[8] = {64, -64, 127, 1, -128, 0, 3, 4};
  CHECK(q8rt_qu8_qc8w_gemm_pairs_safe(1, 8, ok));
  const int8_t bad[8] = {64, -65, 0, 0, 0, 0, 0, 0};
  CHECK(!q8rt_qu8_qc8w_gemm_pairs_safe(1, 8, bad));
  /* pairs are (k0,k1), (k2,k3) of each group of 4: k1 and k2 are not a pair */
  const int8_t split[4] = {0, 127, 127, 0};
  CHECK(q8rt_qu8_qc8w_gemm_pairs_safe(1, 4, split));
  /* an odd K pairs its last weight with a zero */
  const int8_t odd[3] = {0, 0, -128};
  CHECK(q8rt_qu8_qc8w_gemm_pairs_safe(1, 3, odd));
  const int8_t two[10] = {
      0, 0, 0, 0, 0, 1, 2, 3, 4, 5,
  };
  CHECK(q8rt_qu8_qc8w_gemm_pairs_safe(2, 5, two));
  const int8_t two_bad[10] = {0, 0, 0, 0, 0, 100, 100, 3, 4, 5};
  CHECK(!q8rt_qu8_qc8w_gemm_pairs_safe(2, 5, two_bad));
  /* full-range random weights essentially never qualify */
  int8_t w[64 * 64];
  for (size_t i = 0; i < sizeof(w); i++) w[i] = (int8_t)rnd();
  CHECK(!q8rt_qu8_qc8w_gemm_pairs_safe(64, 64, w));
  return 0;
}

/* ---- int32-output variants (Q8RT_GEMM_UKERNEL_I32) ---------------------------------------------- */

typedef struct gemm_i32_variant {
  const char *name;
  q8rt_qu8_gemm_ukernel_fn fn;
  unsigned isa;
  size_t mr, nr;
} gemm_i32_variant;

#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr)
#define Q8RT_GEMM_UKERNEL_I32(isa, fn, mr, nr) {#fn, fn, isa, mr, nr},
static const gemm_i32_variant g_i32_variants[] = {
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
    {NULL, NULL, 0, 0, 0},
};
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_I32

/* One case: the scalar twin against an int64 loop wrapped to int32 and, with fn, fn against the
 * twin; exact-size int32 outputs with sentinels between rows (c_stride in bytes). */
static int check_i32_case(const gemm_case *t, size_t nr, q8rt_qu8_gemm_ukernel_fn fn, const char *name) {
  gemm_data d;
  memset(&d, 0, sizeof(d));
  int rc = 1;
  const size_t c_size = (t->mr - 1) * t->c_stride + t->nc * sizeof(int32_t);
  uint8_t *sc = malloc(c_size), *vc = malloc(c_size);
  void *packed = malloc(q8rt_qu8_qc8w_gemm_packed_size(t->nc, t->kc, nr));
  if (!sc || !vc || !packed || !gen_data(t, &d)) goto done;
  const int32_t x_zp_u8 = t->x_signed ? t->x_zp + 128 : t->x_zp;
  q8rt_qu8_qc8w_gemm_pack(t->nc, t->kc, nr, d.w, d.bias, d.scale, x_zp_u8, packed);
  q8rt_qu8_requant_params p;
  make_params(t, &p);
  memset(sc, SENTINEL, c_size);
  memset(vc, SENTINEL, c_size);
  q8rt_qu8_qc8w_gemm_i32_ukernel__scalar(t->mr, t->nc, t->kc, d.a, t->a_stride, packed, sc, t->c_stride, &p, nr);
  for (size_t m = 0; m < t->mr; m++) {
    for (size_t n = 0; n < t->nc; n++) {
      int64_t acc = d.bias ? d.bias[n] : 0;
      for (size_t k = 0; k < t->kc; k++) {
        const uint8_t raw = d.a[m * t->a_stride + k];
        const int64_t x = t->x_signed ? (int64_t)(int8_t)raw : (int64_t)raw;
        acc += (x - t->x_zp) * (int64_t)d.w[n * t->kc + k];
      }
      int32_t got;
      memcpy(&got, sc + m * t->c_stride + n * sizeof(int32_t), sizeof(got));
      if (got != (int32_t)(uint32_t)(uint64_t)acc) {
        report("i32 scalar != reference", t, nr);
        goto done;
      }
    }
    for (size_t i = t->nc * sizeof(int32_t); m + 1 < t->mr && i < t->c_stride; i++) {
      if (sc[m * t->c_stride + i] != SENTINEL) {
        report("i32 scalar wrote between rows", t, nr);
        goto done;
      }
    }
  }
  if (fn != NULL) {
    fn(t->mr, t->nc, t->kc, d.a, t->a_stride, packed, vc, t->c_stride, &p);
    if (memcmp(vc, sc, c_size) != 0) {
      report(name, t, nr);
      goto done;
    }
  }
  rc = 0;
done:
  free(sc);
  free(vc);
  free(packed);
  free_data(&d);
  return rc;
}

static int sweep_i32(size_t mr_max, size_t nr, q8rt_qu8_gemm_ukernel_fn fn, const char *name) {
  const size_t ncs[] = {1,          nr - 1,     nr,     nr + 1, 2 * nr + 3,  3 * nr,          nr / 2,
                        nr / 2 + 1, nr / 2 + 5, nr + 8, nr + 9, nr + nr / 2, nr + nr / 2 + 8, 2 * nr + nr / 2};
  for (size_t mr = 1; mr <= mr_max; mr++) {
    for (size_t ni = 0; ni < sizeof(ncs) / sizeof(ncs[0]); ni++) {
      if (ncs[ni] == 0) continue;
      for (size_t ki = 0; ki < sizeof(k_kc) / sizeof(k_kc[0]); ki++) {
        gemm_case t = {0};
        t.mr = mr;
        t.nc = ncs[ni];
        t.kc = k_kc[ki];
        t.a_stride = t.kc + ((rnd() & 1) ? 0 : 13);
        t.c_stride = t.nc * sizeof(int32_t) + ((rnd() & 1) ? 0 : 12);
        random_quant(&t);
        if (check_i32_case(&t, nr, fn, name)) return 1;
      }
    }
  }
  /* extremes, a full-range bias (wrap-around) and a large K; the last four with one row (a kernel
   * may run a single row on its own path) */
  for (int i = 0; i < 12; i++) {
    gemm_case t = {0};
    t.mr = i < 8 ? mr_max : 1;
    t.nc = 2 * nr + 3;
    t.kc = i % 8 < 4 ? 67 : 4607 + (size_t)(i & 1);
    t.a_stride = t.kc + 3;
    t.c_stride = t.nc * sizeof(int32_t) + 20;
    random_quant(&t);
    t.a_mode = i % 2 ? A_MIN_MAX : A_MAX;
    t.w_mode = i % 4 < 2 ? W_EXTREME : W_MIN;
    t.b_mode = B_FULL;
    if (check_i32_case(&t, nr, fn, name)) return 1;
  }
  return 0;
}

Q8RT_TEST(gemm_i32_scalar_vs_reference) {
  const size_t nrs[] = {1, 8, 16, 32};
  for (size_t i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) CHECK(sweep_i32(3, nrs[i], NULL, "scalar") == 0);
  return 0;
}

Q8RT_TEST(gemm_i32_variants_vs_scalar) {
  for (const gemm_i32_variant *v = g_i32_variants; v->name != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      printf("     skip %s (CPU lacks its ISA)\n", v->name);
      continue;
    }
    if (sweep_i32(v->mr, v->nr, v->fn, v->name)) {
      fprintf(stderr, "  variant %s failed\n", v->name);
      return 1;
    }
  }
  return 0;
}

/* ---- segmented-row variants (Q8RT_GEMM_UKERNEL_SEG) ---------------------------------------------- */

typedef struct gemm_seg_variant {
  const char *name;
  q8rt_qu8_gemm_seg_ukernel_fn fn;
  unsigned isa;
  size_t mr, nr;
} gemm_seg_variant;

#define Q8RT_GEMM_UKERNEL(isa, fn, mr, nr)
#define Q8RT_GEMM_UKERNEL_SEG(isa, fn, mr, nr) {#fn, fn, isa, mr, nr},
static const gemm_seg_variant g_seg_variants[] = {
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.inc"
    {NULL, NULL, 0, 0, 0},
};
#undef Q8RT_GEMM_UKERNEL
#undef Q8RT_GEMM_UKERNEL_SEG

/* An NHWC image of c-channel pixels, w pixels a row: output row m reads kh runs of kw pixels
 * starting at pixel m * stride, one image row apart (a convolution's interior pixels). The
 * buffer ends exactly after the last byte read. The seg twin must equal the int64 loop on the
 * gathered rows, and v (when given) the seg twin. */
static int check_seg_case(gemm_case *t, size_t c, size_t kw, size_t kh, size_t stride, size_t w, size_t nr,
                          const gemm_seg_variant *v) {
  q8rt_gemm_segs segs;
  segs.n = kh;
  segs.len = kw * c;
  for (size_t s = 0; s < kh; s++) segs.off[s] = s * w * c;
  t->kc = kh * kw * c;
  t->a_stride = t->kc;
  const size_t as = stride * c;
  const size_t img_size = (t->mr - 1) * as + segs.off[kh - 1] + segs.len;
  gemm_data d;
  memset(&d, 0, sizeof(d));
  int rc = 1;
  uint8_t *img = malloc(img_size), *ref = malloc(t->mr * t->nc), *sc = NULL, *vc = NULL;
  void *packed = malloc(q8rt_qu8_qc8w_gemm_packed_size(t->nc, t->kc, nr));
  if (!img || !ref || !packed || !gen_data(t, &d)) goto done;
  for (size_t i = 0; i < img_size; i++) img[i] = gen_a(t);
  for (size_t m = 0; m < t->mr; m++) {
    for (size_t k = 0; k < t->kc; k++) d.a[m * t->kc + k] = img[m * as + segs.off[k / segs.len] + k % segs.len];
  }
  const int32_t x_zp_u8 = t->x_signed ? t->x_zp + 128 : t->x_zp;
  q8rt_qu8_qc8w_gemm_pack(t->nc, t->kc, nr, d.w, d.bias, d.scale, x_zp_u8, packed);
  q8rt_qu8_requant_params p;
  make_params(t, &p);
  reference(t, &d, ref);
  const size_t c_size = (t->mr - 1) * t->c_stride + t->nc;
  sc = malloc(c_size);
  vc = malloc(c_size);
  if (!sc || !vc) goto done;
  memset(sc, SENTINEL, c_size);
  q8rt_qu8_qc8w_gemm_seg_minmax_fp32_ukernel__scalar(t->mr, t->nc, t->kc, img, as, packed, sc, t->c_stride, &p, &segs,
                                                     nr);
  for (size_t m = 0; m < t->mr; m++) {
    if (memcmp(sc + m * t->c_stride, ref + m * t->nc, t->nc) != 0) {
      report("seg scalar != reference", t, nr);
      goto done;
    }
    for (size_t i = t->nc; m + 1 < t->mr && i < t->c_stride; i++) {
      if (sc[m * t->c_stride + i] != SENTINEL) {
        report("seg scalar wrote between rows", t, nr);
        goto done;
      }
    }
  }
  if (v != NULL) {
    memset(vc, SENTINEL, c_size);
    v->fn(t->mr, t->nc, t->kc, img, as, packed, vc, t->c_stride, &p, &segs);
    if (memcmp(vc, sc, c_size) != 0) {
      report(v->name, t, nr);
      fprintf(stderr, "  c=%zu kw=%zu kh=%zu stride=%zu w=%zu\n", c, kw, kh, stride, w);
      goto done;
    }
  }
  rc = 0;
done:
  free(vc);
  free(sc);
  free(ref);
  free(img);
  free(packed);
  free_data(&d);
  return rc;
}

static int sweep_seg(size_t mr_max, size_t nr, const gemm_seg_variant *v) {
  static const size_t k_c[] = {4, 12, 24, 48, 96};
  static const size_t k_kw[] = {1, 3, 5};
  static const size_t k_kh[] = {1, 2, 3, 7};
  const size_t ncs[] = {1, nr / 4, nr / 2, nr / 2 + 5, nr - 1, nr, nr + 1, nr + 8, nr + 9, nr + nr / 2, 2 * nr + 3};
  for (size_t mr = 1; mr <= mr_max; mr++) {
    for (size_t ni = 0; ni < sizeof(ncs) / sizeof(ncs[0]); ni++) {
      if (ncs[ni] == 0) continue;
      for (size_t ci = 0; ci < sizeof(k_c) / sizeof(k_c[0]); ci++) {
        gemm_case t = {0};
        t.mr = mr;
        t.nc = ncs[ni];
        random_quant(&t);
        t.c_stride = t.nc + ((rnd() & 1) ? 0 : 7);
        const size_t kw = k_kw[rnd() % 3], kh = k_kh[rnd() % 4], stride = 1 + rnd() % 2;
        const size_t w = kw + (mr - 1) * stride + rnd() % 3;
        if (check_seg_case(&t, k_c[ci], kw, kh, stride, w, nr, v)) return 1;
      }
    }
  }
  /* extremes: a 7x7 kernel of 96 channels (K = 4704) with the activations and weights at their limits */
  for (int i = 0; i < 8; i++) {
    gemm_case t = {0};
    t.mr = mr_max;
    t.nc = i < 4 ? nr + nr / 2 : 2 * nr;
    random_quant(&t);
    t.c_stride = t.nc + 3;
    t.a_mode = i % 2 ? A_MIN_MAX : A_MAX;
    t.w_mode = i % 4 < 2 ? W_EXTREME : W_MIN;
    t.b_mode = B_FULL;
    if (check_seg_case(&t, 96, 7, 7, 1 + (size_t)i % 2, 7 + (mr_max - 1) * 2, nr, v)) return 1;
  }
  return 0;
}

Q8RT_TEST(gemm_seg_variants_vs_scalar) {
  CHECK(sweep_seg(3, 4, NULL) == 0); /* the twin alone against the int64 loop */
  for (const gemm_seg_variant *v = g_seg_variants; v->name != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      printf("     skip %s (CPU lacks its ISA)\n", v->name);
      continue;
    }
    if (sweep_seg(v->mr, v->nr, v)) {
      fprintf(stderr, "  variant %s failed\n", v->name);
      return 1;
    }
  }
  return 0;
}
