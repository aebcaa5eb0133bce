/* qu8-dwconv: the scalar twin against an independent plain loop, and every variant in
 * qu8-dwconv.inc against the scalar twin (with the variant's CB), byte for byte. */
#include <fenv.h>
#include <math.h>
#include <stdlib.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "runtime/isa.h"
#include "test.h"

typedef void (*dw_fn)(size_t, size_t, const uint8_t *const *, size_t, const void *, void *, size_t,
                      const q8rt_qu8_requant_params *);
typedef struct dw_variant {
  int isa;
  dw_fn fn;
  size_t cb;
  const char *name;
} dw_variant;

static const dw_variant dw_variants[] = {
#define Q8RT_DWCONV_UKERNEL(isa, fn, cb) {isa, fn, cb, #fn},
#include "qu8-dwconv/qu8-dwconv.inc"
#undef Q8RT_DWCONV_UKERNEL
    {0, NULL, 0, NULL},
};

static uint32_t dw_rng = 0x2545f491u;
static uint32_t dw_rnd(void) { return test_xorshift32(&dw_rng); }

/* One test problem, with the raw (unpacked, per-channel zero point) weights kept for the plain
 * loop. Every input row is its own allocation of exactly `channels` bytes, so ASan sees any
 * over-read. */
typedef struct dw_case {
  size_t channels, taps, pixels, y_stride, rows;
  int x_signed, y_signed, w_signed;
  int32_t x_zp, y_zp;
  uint8_t **row;       /* rows [rows] */
  uint8_t *zbuf;       /* the padding row: raw x zero point */
  const uint8_t **ind; /* [pixels][taps] */
  uint8_t *w8;         /* raw weights [channels][taps] (u8 or s8 bytes) */
  int32_t *w_zp;       /* [channels] */
  int16_t *w16;        /* w - w_zp */
  int32_t *bias;
  float *scale;
  q8rt_qu8_requant_params rp;
} dw_case;

static void dw_free(dw_case *k) {
  if (k->row != NULL)
    for (size_t r = 0; r < k->rows; r++) free(k->row[r]);
  free(k->row);
  free(k->zbuf);
  free(k->ind);
  free(k->w8);
  free(k->w_zp);
  free(k->w16);
  free(k->bias);
  free(k->scale);
  memset(k, 0, sizeof(*k));
}

static float dw_pow2(int e) { return ldexpf(1.0f, e); }

/* mode: 0 random, 1 activations and weights at the extremes, 2 int8 weights at -128/127 */
static int dw_make(dw_case *k, size_t channels, size_t taps, size_t pixels, int mode) {
  memset(k, 0, sizeof(*k));
  k->channels = channels;
  k->taps = taps;
  k->pixels = pixels;
  k->y_stride = channels + 1 + dw_rnd() % 40;
  k->rows = 1 + dw_rnd() % 6;
  k->x_signed = (int)(dw_rnd() & 1);
  k->y_signed = (int)(dw_rnd() & 1);
  k->w_signed = (int)(dw_rnd() & 1);
  const int32_t xmin = k->x_signed ? -128 : 0, ymin = k->y_signed ? -128 : 0;
  k->x_zp = xmin + (int32_t)(dw_rnd() % 256);
  if (dw_rnd() % 4 == 0) k->x_zp = xmin + (dw_rnd() & 1 ? 255 : 0);
  k->y_zp = ymin + (int32_t)(dw_rnd() % 256);
  if (dw_rnd() % 3 == 0) k->y_zp = ymin + (dw_rnd() & 1 ? 255 : 0);
  k->row = calloc(k->rows, sizeof(*k->row));
  k->zbuf = malloc(channels);
  k->ind = malloc(pixels * taps * sizeof(*k->ind));
  k->w8 = malloc(channels * taps);
  k->w_zp = malloc(channels * sizeof(int32_t));
  k->w16 = malloc(channels * taps * sizeof(int16_t));
  k->bias = malloc(channels * sizeof(int32_t));
  k->scale = malloc(channels * sizeof(float));
  if (!k->row || !k->zbuf || !k->ind || !k->w8 || !k->w_zp || !k->w16 || !k->bias || !k->scale) return -1;
  memset(k->zbuf, (int)(uint8_t)k->x_zp, channels);
  for (size_t r = 0; r < k->rows; r++) {
    k->row[r] = malloc(channels);
    if (k->row[r] == NULL) return -1;
    for (size_t c = 0; c < channels; c++) {
      uint8_t v = (uint8_t)dw_rnd();
      if (mode == 1) v = dw_rnd() & 1 ? 0xFF : 0x00;
      if (mode == 1 && k->x_signed) v ^= 0x80; /* the extremes of (x - x_zp) */
      k->row[r][c] = v;
    }
  }
  /* Indirection pointers repeat rows and point at the zero-point buffer. */
  for (size_t i = 0; i < pixels * taps; i++) k->ind[i] = dw_rnd() % 5 == 0 ? k->zbuf : k->row[dw_rnd() % k->rows];
  const int32_t wmin = k->w_signed ? -128 : 0;
  for (size_t c = 0; c < channels; c++) {
    int32_t zp = wmin + (int32_t)(dw_rnd() % 256);
    if (mode == 1) zp = dw_rnd() & 1 ? wmin : wmin + 255; /* w - zp reaches -255 or +255 */
    if (mode == 2) zp = 0;
    k->w_zp[c] = zp;
    for (size_t t = 0; t < taps; t++) {
      int32_t v = wmin + (int32_t)(dw_rnd() % 256);
      if (mode == 1) v = zp == wmin ? wmin + 255 : wmin;
      if (mode == 2) {
        v = dw_rnd() & 1 ? 127 : -128;
        if (!k->w_signed) v = dw_rnd() & 1 ? 255 : 0;
      }
      k->w8[c * taps + t] = (uint8_t)v;
      k->w16[c * taps + t] = (int16_t)(v - zp);
    }
    switch (dw_rnd() % 4) {
      case 0: k->bias[c] = (int32_t)dw_rnd(); break; /* anywhere: the accumulator wraps */
      case 1: k->bias[c] = 0; break;
      default: k->bias[c] = (int32_t)(dw_rnd() % 20001) - 10000; break;
    }
    /* Scales 2^-20 .. 3.0, mostly where outputs land inside the range. */
    float s;
    switch (dw_rnd() % 4) {
      case 0: s = dw_pow2(-20 + (int)(dw_rnd() % 21)); break;
      case 1: s = 3.0f; break;
      default: s = (0.5f + (float)(dw_rnd() % 1000) / 1000.0f) / (float)(64 * taps); break;
    }
    if (k->bias[c] != 0 && k->bias[c] > 100000) s = dw_pow2(-24);
    k->scale[c] = s;
  }
  k->rp.y_lo = (float)(ymin - k->y_zp);
  k->rp.y_hi = (float)(ymin + 255 - k->y_zp);
  k->rp.y_zero_point = k->y_zp;
  k->rp.x_xor = k->x_signed ? 0x80 : 0;
  k->rp.y_signed = (uint8_t)k->y_signed;
  return 0;
}

/* The plain loop: int64 sum of (x - x_zp) * (w - w_zp[c]) on the raw values, wrapped to int32 at
 * the end, then float32 requantization rounded by nearbyintf (round-half-even by default). */
static void dw_plain(const dw_case *k, uint8_t *y) {
  for (size_t p = 0; p < k->pixels; p++)
    for (size_t c = 0; c < k->channels; c++) {
      int64_t acc = k->bias[c];
      for (size_t t = 0; t < k->taps; t++) {
        const uint8_t xb = k->ind[p * k->taps + t][c];
        const int64_t xv = k->x_signed ? (int64_t)(int8_t)xb : (int64_t)xb;
        const uint8_t wb = k->w8[c * k->taps + t];
        const int64_t wv = k->w_signed ? (int64_t)(int8_t)wb : (int64_t)wb;
        acc += (xv - k->x_zp) * (wv - k->w_zp[c]);
      }
      const int32_t acc32 = (int32_t)(uint32_t)(uint64_t)acc;
      float v = (float)acc32 * k->scale[c];
      float r = isnan(v) ? k->rp.y_lo : nearbyintf(v);
      if (r < k->rp.y_lo) r = k->rp.y_lo;
      if (r > k->rp.y_hi) r = k->rp.y_hi;
      y[p * k->y_stride + c] = (uint8_t)(int32_t)((int32_t)r + k->y_zp);
    }
}

static int dw_run_packed(const dw_case *k, size_t cb, dw_fn fn, uint8_t *y) {
  const size_t size = q8rt_qu8_dwconv_packed_size(k->channels, k->taps, cb);
  void *packed = malloc(size);
  if (packed == NULL) return -1;
  memset(packed, 0xA5, size);
  const int32_t x_zp_u8 = (int32_t)(uint8_t)((uint8_t)k->x_zp ^ k->rp.x_xor);
  q8rt_qu8_dwconv_pack(k->channels, k->taps, cb, k->w16, k->bias, k->scale, x_zp_u8, packed);
  const size_t ybytes = (k->pixels - 1) * k->y_stride + k->channels;
  memset(y, 0x5A, k->pixels * k->y_stride);
  if (fn != NULL) {
    fn(k->channels, k->pixels, k->ind, k->taps, packed, y, k->y_stride, &k->rp);
  } else {
    q8rt_qu8_dwconv_minmax_fp32_ukernel__scalar(k->channels, k->pixels, k->ind, k->taps, packed, y, k->y_stride, &k->rp,
                                                cb);
  }
  free(packed);
  (void)ybytes;
  return 0;
}

static int dw_gaps_untouched(const dw_case *k, const uint8_t *y) {
  for (size_t p = 0; p < k->pixels; p++)
    for (size_t c = k->channels; c < k->y_stride; c++)
      if (y[p * k->y_stride + c] != 0x5A) return 0;
  return 1;
}

static const size_t dw_taps_list[] = {1, 2, 3, 5, 9, 25, 49, 7, 10};

Q8RT_TEST(dwconv_scalar_vs_plain_loop) {
  const size_t cbs[] = {1, 3, 4, 8, 16, 32, 64};
  for (int trial = 0; trial < 600; trial++) {
    dw_case k;
    const size_t channels = 1 + dw_rnd() % 80;
    const size_t taps = dw_taps_list[dw_rnd() % (sizeof(dw_taps_list) / sizeof(dw_taps_list[0]))];
    const size_t pixels = 1 + dw_rnd() % 5;
    CHECK(dw_make(&k, channels, taps, pixels, trial % 3) == 0);
    uint8_t *y0 = malloc(pixels * k.y_stride), *y1 = malloc(pixels * k.y_stride);
    CHECK(y0 != NULL && y1 != NULL);
    memset(y0, 0x5A, pixels * k.y_stride);
    dw_plain(&k, y0);
    const size_t cb = cbs[dw_rnd() % (sizeof(cbs) / sizeof(cbs[0]))];
    CHECK(dw_run_packed(&k, cb, NULL, y1) == 0);
    int ok = memcmp(y0, y1, pixels * k.y_stride) == 0 && dw_gaps_untouched(&k, y1);
    if (!ok) fprintf(stderr, "  channels %zu taps %zu pixels %zu cb %zu\n", channels, taps, pixels, cb);
    free(y0);
    free(y1);
    dw_free(&k);
    CHECK(ok);
  }
  return 0;
}

Q8RT_TEST(dwconv_pack_layout) {
  /* 3 channels, 2 taps, cb 2: the second block is padded with a zero channel. */
  const int16_t w[] = {1, 2, -3, 4, 5, -255};
  const int32_t bias[] = {10, -20, 30};
  const float scale[] = {0.5f, 0.25f, 2.0f};
  CHECK(q8rt_qu8_dwconv_packed_size(3, 2, 2) == 2 * 2 * (4 + 2 * 2 + 4));
  uint8_t buf[48];
  q8rt_qu8_dwconv_pack(3, 2, 2, w, bias, scale, 7, buf);
  int32_t b[2];
  int16_t ww[4];
  float s[2];
  memcpy(b, buf, 8);
  memcpy(ww, buf + 8, 8);
  memcpy(s, buf + 16, 8);
  CHECK(b[0] == 10 - 7 * 3 && b[1] == -20 - 7 * 1);
  CHECK(ww[0] == 1 && ww[1] == -3 && ww[2] == 2 && ww[3] == 4);
  CHECK(s[0] == 0.5f && s[1] == 0.25f);
  memcpy(b, buf + 24, 8);
  memcpy(ww, buf + 32, 8);
  memcpy(s, buf + 40, 8);
  CHECK(b[0] == 30 - 7 * (5 - 255) && b[1] == 0);
  CHECK(ww[0] == 5 && ww[1] == 0 && ww[2] == -255 && ww[3] == 0);
  CHECK(s[0] == 2.0f && s[1] == 0.0f);
  /* NULL bias is zero; wrap-around in the fold. */
  const int16_t w1[] = {255};
  const int32_t big[] = {-2147483647 - 1};
  uint8_t buf1[12];
  q8rt_qu8_dwconv_pack(1, 1, 1, w1, big, scale, 255, buf1);
  memcpy(b, buf1, 4);
  CHECK((uint32_t)b[0] == (uint32_t)0x80000000u - 255u * 255u);
  q8rt_qu8_dwconv_pack(1, 1, 1, w1, NULL, scale, 2, buf1);
  memcpy(b, buf1, 4);
  CHECK(b[0] == -510);
  return 0;
}

Q8RT_TEST(dwconv_variants_vs_scalar) {
  for (const dw_variant *v = dw_variants; v->fn != NULL; v++) {
    if (!test_isa_supported((unsigned)v->isa)) {
      printf("  skip %s: CPU lacks the ISA\n", v->name);
      continue;
    }
    for (size_t channels = 1; channels <= 3 * v->cb + 5; channels++) {
      for (size_t ti = 0; ti < sizeof(dw_taps_list) / sizeof(dw_taps_list[0]); ti++) {
        const size_t taps = dw_taps_list[ti];
        const size_t pixels = 1 + dw_rnd() % 5;
        dw_case k;
        CHECK(dw_make(&k, channels, taps, pixels, (int)((channels + ti) % 3)) == 0);
        uint8_t *y0 = malloc(pixels * k.y_stride), *y1 = malloc(pixels * k.y_stride);
        CHECK(y0 != NULL && y1 != NULL);
        /* Some cases in another rounding mode: (float)acc * scale follows MXCSR in both, the
         * final rounding must not. */
        const int mode = (channels + ti) % 4 == 3 ? FE_UPWARD : (channels + ti) % 4 == 2 ? FE_DOWNWARD : FE_TONEAREST;
        fesetround(mode);
        const int r0 = dw_run_packed(&k, v->cb, NULL, y0), r1 = dw_run_packed(&k, v->cb, v->fn, y1);
        fesetround(FE_TONEAREST);
        CHECK(r0 == 0 && r1 == 0);
        int ok = memcmp(y0, y1, pixels * k.y_stride) == 0;
        if (!ok) {
          size_t i = 0;
          while (y0[i] == y1[i]) i++;
          fprintf(stderr, "  %s: channels %zu taps %zu pixels %zu: byte %zu (pixel %zu ch %zu) %u != %u\n", v->name,
                  channels, taps, pixels, i, i / k.y_stride, i % k.y_stride, y1[i], y0[i]);
        }
        free(y0);
        free(y1);
        dw_free(&k);
        CHECK(ok);
      }
    }
  }
  return 0;
}

/* Pixels == 0 and an extreme requantization: NaN/inf scale and the tightest clamp. */
Q8RT_TEST(dwconv_variants_edge_params) {
  for (const dw_variant *v = dw_variants; v->fn != NULL; v++) {
    if (!test_isa_supported((unsigned)v->isa)) continue;
    const q8rt_qu8_requant_params none = {0.0f, 255.0f, 0, 0, 0};
    v->fn(5, 0, NULL, 3, NULL, NULL, 5, &none); /* no pixels: touches nothing */
    for (int trial = 0; trial < 40; trial++) {
      dw_case k;
      const size_t channels = 1 + dw_rnd() % (2 * v->cb + 3);
      CHECK(dw_make(&k, channels, 1 + dw_rnd() % 12, 1 + dw_rnd() % 5, 0) == 0);
      for (size_t c = 0; c < channels; c++) {
        const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e30f, 1e-40f};
        if (dw_rnd() & 1) k.scale[c] = specials[dw_rnd() % 7];
      }
      if (trial % 4 == 0) k.rp.y_hi = k.rp.y_lo; /* a single-value range */
      uint8_t *y0 = malloc(k.pixels * k.y_stride), *y1 = malloc(k.pixels * k.y_stride);
      CHECK(y0 != NULL && y1 != NULL);
      CHECK(dw_run_packed(&k, v->cb, NULL, y0) == 0);
      CHECK(dw_run_packed(&k, v->cb, v->fn, y1) == 0);
      int ok = memcmp(y0, y1, k.pixels * k.y_stride) == 0;
      free(y0);
      free(y1);
      dw_free(&k);
      CHECK(ok);
    }
  }
  return 0;
}
