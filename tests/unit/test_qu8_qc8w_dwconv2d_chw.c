/* qu8-qc8w-dwconv2d-chw: the scalar twin against an independent plain loop (raw values, zero points,
 * int64 sums, explicit padding), and every variant in qu8-qc8w-dwconv2d-chw.inc against the scalar twin,
 * byte for byte, over plane sizes around the 16-output vectors and the 64-byte load window, kernel
 * sizes 1-7 (and wide rows), strides 1-3, dilations 1-3, paddings 0-4 (some past the kernel), row
 * strides wider than the rows, NaN/inf scales and the tightest clamp. Every plane is its own
 * allocation of exactly its bytes, so ASan sees an over-read. */
#include <fenv.h>
#include <math.h>
#include <stdlib.h>

#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "runtime/isa.h"
#include "test.h"

typedef struct chw_variant {
  unsigned isa;
  q8rt_qu8_qc8w_dwconv2d_chw_ukernel_fn fn;
  size_t max_span;
  const char *name;
} chw_variant;

static const chw_variant chw_variants[] = {
#define Q8RT_QC8W_DWCONV2D_CHW_UKERNEL(isa, fn, max_span) {isa, fn, max_span, #fn},
#include "qu8-qc8w-dwconv2d-chw/qu8-qc8w-dwconv2d-chw.inc"
#undef Q8RT_QC8W_DWCONV2D_CHW_UKERNEL
};

static uint32_t chw_rng = 0x6b43a9b5u;
static uint32_t chw_rnd(void) { return test_xorshift32(&chw_rng); }

typedef struct chw_case {
  q8rt_qu8_qc8w_dwconv2d_chw_params p;
  int x_signed, w_signed;
  int32_t x_zp, w_zp;
  uint8_t *x;  /* in_h rows of x_stride bytes (the last row only in_w) */
  uint8_t *w8; /* raw weights [kh][kw] */
  int16_t *w16;
  int32_t bias;
  float scale;
  void *packed;
  size_t x_bytes, y_bytes;
} chw_case;

static void chw_free(chw_case *k) {
  free(k->x);
  free(k->w8);
  free(k->w16);
  free(k->packed);
  memset(k, 0, sizeof(*k));
}

static size_t chw_out(size_t in, size_t pad0, size_t pad1, size_t k, size_t s, size_t d) {
  const size_t span = (k - 1) * d + 1;
  return in + pad0 + pad1 < span ? 0 : (in + pad0 + pad1 - span) / s + 1;
}

/* mode 0 random, 1 extremes (x and w at the ends of their ranges) */
static int chw_make(chw_case *k, size_t in_h, size_t in_w, size_t kh, size_t kw, size_t s, size_t d, size_t pad,
                    int mode) {
  memset(k, 0, sizeof(*k));
  q8rt_qu8_qc8w_dwconv2d_chw_params *p = &k->p;
  p->in_h = in_h;
  p->in_w = in_w;
  p->x_stride = in_w + (chw_rnd() % 3 == 0 ? chw_rnd() % 9 : 0);
  p->kernel_h = kh;
  p->kernel_w = kw;
  p->stride_h = 1 + chw_rnd() % 3;
  p->stride_w = s;
  p->dilation_h = 1 + chw_rnd() % 2;
  p->dilation_w = d;
  p->pad_top = pad ? chw_rnd() % (pad + 1) : 0;
  p->pad_left = pad;
  const size_t pad_bottom = chw_rnd() % (pad + 2), pad_right = chw_rnd() % (pad + 2);
  p->out_h = chw_out(in_h, p->pad_top, pad_bottom, kh, p->stride_h, p->dilation_h);
  p->out_w = chw_out(in_w, p->pad_left, pad_right, kw, s, d);
  if (p->out_h == 0 || p->out_w == 0) return 1; /* nothing to compute: the caller skips */
  p->y_stride = p->out_w + (chw_rnd() % 2 ? chw_rnd() % 7 : 0);
  k->x_signed = (int)(chw_rnd() & 1);
  k->w_signed = (int)(chw_rnd() & 1);
  const int32_t xmin = k->x_signed ? -128 : 0, ymin = (chw_rnd() & 1) ? -128 : 0;
  k->x_zp = xmin + (int32_t)(chw_rnd() % 256);
  if (chw_rnd() % 4 == 0) k->x_zp = xmin + (chw_rnd() & 1 ? 255 : 0);
  p->x_zero_point = (uint8_t)k->x_zp;
  const int32_t y_zp = ymin + (int32_t)(chw_rnd() % 256);
  p->rq.y_lo = (float)(ymin - y_zp);
  p->rq.y_hi = (float)(ymin + 255 - y_zp);
  p->rq.y_zero_point = y_zp;
  p->rq.x_xor = k->x_signed ? 0x80 : 0;
  p->rq.y_signed = (uint8_t)(ymin < 0);
  k->x_bytes = (in_h - 1) * p->x_stride + in_w;
  k->y_bytes = p->out_h * p->y_stride;
  k->x = malloc(k->x_bytes);
  k->w8 = malloc(kh * kw);
  k->w16 = malloc(kh * kw * sizeof(int16_t));
  k->packed = malloc(q8rt_qu8_qc8w_dwconv2d_chw_channel_bytes(kh, kw));
  if (!k->x || !k->w8 || !k->w16 || !k->packed) return -1;
  for (size_t i = 0; i < k->x_bytes; i++) {
    uint8_t v = (uint8_t)chw_rnd();
    if (mode == 1) v = (uint8_t)((chw_rnd() & 1 ? 0xFF : 0x00) ^ (k->x_signed ? 0x80 : 0));
    k->x[i] = v;
  }
  /* weights minus their zero point within int8 (what the kernels take) */
  const int32_t wmin = k->w_signed ? -128 : 0;
  k->w_zp = k->w_signed ? (chw_rnd() % 3 == 0 ? (int32_t)(chw_rnd() % 256) - 128 : 0) : 128;
  for (size_t t = 0; t < kh * kw; t++) {
    int32_t d16 = (int32_t)(chw_rnd() % 256) - 128;
    if (mode == 1) d16 = chw_rnd() & 1 ? 127 : -128;
    int32_t v = d16 + k->w_zp;
    if (v < wmin || v > wmin + 255) { /* keep the raw value in its type */
      v = v < wmin ? wmin : wmin + 255;
      d16 = v - k->w_zp;
    }
    k->w8[t] = (uint8_t)v;
    k->w16[t] = (int16_t)d16;
  }
  switch (chw_rnd() % 3) {
    case 0: k->bias = (int32_t)chw_rnd(); break; /* anywhere: the accumulator wraps */
    case 1: k->bias = 0; break;
    default: k->bias = (int32_t)(chw_rnd() % 20001) - 10000; break;
  }
  k->scale = chw_rnd() % 4 == 0 ? ldexpf(1.0f, -(int)(chw_rnd() % 20))
                                : (0.5f + (float)(chw_rnd() % 1000) / 1000.0f) / (float)(64 * kh * kw);
  if (k->bias > 100000 || k->bias < -100000) k->scale = ldexpf(1.0f, -24);
  const int32_t x_zp_u8 = (int32_t)(uint8_t)((uint8_t)k->x_zp ^ p->rq.x_xor);
  q8rt_qu8_qc8w_dwconv2d_chw_pack(1, kh, kw, k->w16, &k->bias, &k->scale, x_zp_u8, k->packed);
  return 0;
}

static void chw_plain(const chw_case *k, uint8_t *y) {
  const q8rt_qu8_qc8w_dwconv2d_chw_params *p = &k->p;
  for (size_t oy = 0; oy < p->out_h; oy++)
    for (size_t ox = 0; ox < p->out_w; ox++) {
      int64_t acc = k->bias;
      for (size_t ky = 0; ky < p->kernel_h; ky++)
        for (size_t kx = 0; kx < p->kernel_w; kx++) {
          const long iy = (long)(oy * p->stride_h + ky * p->dilation_h) - (long)p->pad_top;
          const long ix = (long)(ox * p->stride_w + kx * p->dilation_w) - (long)p->pad_left;
          int64_t xv = k->x_zp;
          if (iy >= 0 && iy < (long)p->in_h && ix >= 0 && ix < (long)p->in_w) {
            const uint8_t b = k->x[(size_t)iy * p->x_stride + (size_t)ix];
            xv = k->x_signed ? (int8_t)b : b;
          }
          const uint8_t wb = k->w8[ky * p->kernel_w + kx];
          const int64_t wv = k->w_signed ? (int8_t)wb : wb;
          acc += (xv - k->x_zp) * (wv - k->w_zp);
        }
      const int32_t acc32 = (int32_t)(uint32_t)(uint64_t)acc;
      const int32_t q = test_ref_round_clamp((float)acc32 * k->scale, p->rq.y_lo, p->rq.y_hi) + p->rq.y_zero_point;
      y[oy * p->y_stride + ox] = (uint8_t)q;
    }
}

static int chw_run(const chw_case *k, q8rt_qu8_qc8w_dwconv2d_chw_ukernel_fn fn, uint8_t **out) {
  uint8_t *y = malloc(k->y_bytes);
  if (y == NULL) return -1;
  memset(y, 0x5A, k->y_bytes);
  fn(k->x, k->packed, y, &k->p);
  *out = y;
  return 0;
}

static int chw_gaps_untouched(const chw_case *k, const uint8_t *y) {
  for (size_t oy = 0; oy < k->p.out_h; oy++)
    for (size_t i = k->p.out_w; i < k->p.y_stride; i++)
      if (y[oy * k->p.y_stride + i] != 0x5A) return 0;
  return 1;
}

Q8RT_TEST(qc8w_dwconv2d_chw_scalar_vs_plain_loop) {
  int cases = 0;
  for (int trial = 0; trial < 500; trial++) {
    chw_case k;
    const size_t kh = 1 + chw_rnd() % 7, kw = 1 + chw_rnd() % 7;
    const int r = chw_make(&k, 1 + chw_rnd() % 20, 1 + chw_rnd() % 40, kh, kw, 1 + chw_rnd() % 3, 1 + chw_rnd() % 3,
                           chw_rnd() % 5, trial % 2);
    CHECK(r >= 0);
    if (r == 1) {
      chw_free(&k);
      continue;
    }
    uint8_t *y1 = NULL, *y0 = malloc(k.y_bytes);
    CHECK(y0 != NULL);
    memset(y0, 0x5A, k.y_bytes);
    chw_plain(&k, y0);
    CHECK(chw_run(&k, q8rt_qu8_qc8w_dwconv2d_chw_minmax_fp32_ukernel__scalar, &y1) == 0);
    const int ok = memcmp(y0, y1, k.y_bytes) == 0 && chw_gaps_untouched(&k, y1);
    if (!ok) fprintf(stderr, "  in %zux%zu k %zux%zu\n", k.p.in_h, k.p.in_w, kh, kw);
    free(y0);
    free(y1);
    chw_free(&k);
    CHECK(ok);
    cases++;
  }
  CHECK(cases > 300);
  return 0;
}

Q8RT_TEST(qc8w_dwconv2d_chw_pack_layout) {
  /* 2 channels of 2x3: rows padded to 4 with zero weights; bias' folds the zero point mod 2^32 */
  const int16_t w[] = {1, -2, 3, 4, 5, -128, 127, 0, -1, 2, 2, 2};
  const int32_t bias[] = {100, -2147483647 - 1};
  const float scale[] = {0.5f, 3.0f};
  const size_t cb = q8rt_qu8_qc8w_dwconv2d_chw_channel_bytes(2, 3);
  CHECK(cb == 8 + 2 * 4);
  uint8_t buf[32];
  memset(buf, 0xEE, sizeof(buf));
  q8rt_qu8_qc8w_dwconv2d_chw_pack(2, 2, 3, w, bias, scale, 7, buf);
  int32_t b;
  float s;
  memcpy(&b, buf, 4);
  memcpy(&s, buf + 4, 4);
  CHECK(b == 100 - 7 * (1 - 2 + 3 + 4 + 5 - 128) && s == 0.5f);
  const int8_t w0[8] = {1, -2, 3, 0, 4, 5, -128, 0};
  CHECK(memcmp(buf + 8, w0, 8) == 0);
  memcpy(&b, buf + cb, 4);
  CHECK((uint32_t)b == 0x80000000u - 7u * 132u);
  const int8_t w1[8] = {127, 0, -1, 0, 2, 2, 2, 0};
  CHECK(memcmp(buf + cb + 8, w1, 8) == 0);
  q8rt_qu8_qc8w_dwconv2d_chw_pack(1, 2, 3, w, NULL, scale, 0, buf);
  memcpy(&b, buf, 4);
  CHECK(b == 0);
  return 0;
}

static int chw_compare(const chw_variant *v, chw_case *k, int round_mode) {
  uint8_t *y0 = NULL, *y1 = NULL;
  fesetround(round_mode);
  const int r0 = chw_run(k, q8rt_qu8_qc8w_dwconv2d_chw_minmax_fp32_ukernel__scalar, &y0);
  const int r1 = chw_run(k, v->fn, &y1);
  fesetround(FE_TONEAREST);
  int ok = r0 == 0 && r1 == 0 && memcmp(y0, y1, k->y_bytes) == 0 && chw_gaps_untouched(k, y1);
  if (!ok && y0 && y1) {
    size_t i = 0;
    while (i < k->y_bytes && y0[i] == y1[i]) i++;
    fprintf(stderr, "  %s: in %zux%zu k %zux%zu s %zu,%zu d %zu,%zu pad %zu,%zu: byte %zu %u != %u\n", v->name,
            k->p.in_h, k->p.in_w, k->p.kernel_h, k->p.kernel_w, k->p.stride_h, k->p.stride_w, k->p.dilation_h,
            k->p.dilation_w, k->p.pad_top, k->p.pad_left, i, i < k->y_bytes ? y1[i] : 0, i < k->y_bytes ? y0[i] : 0);
  }
  free(y0);
  free(y1);
  return ok;
}

Q8RT_TEST(qc8w_dwconv2d_chw_variants_vs_scalar) {
  static const size_t widths[] = {1, 2, 7, 15, 16, 17, 31, 32, 33, 47, 48, 49, 56, 63, 64, 65, 97};
  for (const chw_variant *v = chw_variants; v->isa != Q8RT_ISA_SCALAR; v++) {
    if (!test_isa_supported(v->isa)) {
      printf("  skip %s: CPU lacks the ISA\n", v->name);
      continue;
    }
    int cases = 0;
    for (size_t wi = 0; wi < sizeof(widths) / sizeof(widths[0]); wi++) {
      for (size_t kk = 1; kk <= 7; kk++) {
        for (size_t s = 1; s <= 3; s++) {
          for (size_t d = 1; d <= 3; d++) {
            const size_t kh = kk, kw = (kk + wi) % 3 == 0 ? 1 + chw_rnd() % 7 : kk;
            if (v->max_span != 0 && 15 * s + (kw - 1) * d + 1 > v->max_span) continue;
            chw_case k;
            const int r =
                chw_make(&k, 1 + chw_rnd() % 12, widths[wi], kh, kw, s, d, (kk + s + d) % 5, (int)((wi + kk) % 2));
            CHECK(r >= 0);
            if (r == 0) {
              const int mode = cases % 4 == 3 ? FE_UPWARD : cases % 4 == 2 ? FE_DOWNWARD : FE_TONEAREST;
              const int ok = chw_compare(v, &k, mode);
              chw_free(&k);
              CHECK(ok);
              cases++;
            } else {
              chw_free(&k);
            }
          }
        }
      }
    }
    /* kernel rows wider than 8 taps (the generic loop): 15 + (kw - 1) < 64 */
    for (size_t kw = 8; kw <= 49; kw += 7) {
      chw_case k;
      const int r = chw_make(&k, 2 + chw_rnd() % 5, 20 + chw_rnd() % 60, 1 + chw_rnd() % 3, kw, 1, 1, chw_rnd() % 4, 0);
      CHECK(r >= 0);
      const int ok = r == 1 || chw_compare(v, &k, FE_TONEAREST);
      chw_free(&k);
      CHECK(ok);
      cases += r == 0;
    }
    printf("  %s: %d cases\n", v->name, cases);
    CHECK(cases > 700);
  }
  return 0;
}

/* NaN/inf/zero scales and a single-value clamp range. */
Q8RT_TEST(qc8w_dwconv2d_chw_variants_edge_params) {
  for (const chw_variant *v = chw_variants; v->isa != Q8RT_ISA_SCALAR; v++) {
    if (!test_isa_supported(v->isa)) continue;
    for (int trial = 0; trial < 60; trial++) {
      chw_case k;
      const int r = chw_make(&k, 1 + chw_rnd() % 9, 1 + chw_rnd() % 40, 3, 3, 1 + chw_rnd() % 2, 1, 1, 0);
      CHECK(r >= 0);
      if (r == 1) {
        chw_free(&k);
        continue;
      }
      const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e30f, 1e-40f};
      float s = specials[chw_rnd() % 7];
      memcpy((uint8_t *)k.packed + 4, &s, sizeof(s));
      if (trial % 3 == 0) k.p.rq.y_hi = k.p.rq.y_lo;
      const int ok = chw_compare(v, &k, FE_TONEAREST);
      chw_free(&k);
      CHECK(ok);
    }
  }
  return 0;
}
