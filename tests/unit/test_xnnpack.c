/* XNNPACK conv glue: byte identity with the scalar reference kernel wherever
 * q8rt_xnn_conv_supported accepts a node, and the refusals. */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "backends/xnnpack.h"
#include "q8rt-kernels.h"
#include "test.h"

static uint32_t xs_state = 0x2545f491u;
static uint32_t rnd(void) { return test_xorshift32(&xs_state); }
static int32_t rnd_range(int32_t lo, int32_t hi) { return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1)); }

enum { X_RANDOM, X_EXTREME, X_SPARSE, X_MAX };
enum { W_RANDOM, W_EXTREME, W_SMALL, W_MAX };
enum { B_MODERATE, B_NULL, B_EXTREME, B_FULL };

typedef struct conv_case {
  size_t batch, in_h, in_w, groups, gic, goc;
  uint32_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  int xs, ys, ws; /* signedness of x, y, w */
  int32_t x_zp, y_zp;
  int32_t w_zp;   /* uniform weight zero point */
  int w_zp_count; /* 0: NULL, 1: per-tensor, 2: one per output channel (all w_zp) */
  int w_zp_vary;  /* with w_zp_count 2: channel 1 gets w_zp + 1 */
  float x_scale, y_scale, w_scale;
  int per_channel; /* w_scale per channel: w_scale * (1 + 0.37 * c / M) */
  int x_mode, w_mode, b_mode;
} conv_case;

static conv_case base_case(void) {
  conv_case c;
  memset(&c, 0, sizeof(c));
  c.batch = 1;
  c.in_h = c.in_w = 7;
  c.groups = 1;
  c.gic = 8;
  c.goc = 8;
  c.kh = c.kw = 3;
  c.sh = c.sw = c.dh = c.dw = 1;
  c.pt = c.pl = c.pb = c.pr = 1;
  c.xs = 0;
  c.ys = 0;
  c.ws = 1;
  c.x_zp = 128;
  c.y_zp = 128;
  c.x_scale = 0.02f;
  c.y_scale = 0.05f;
  c.w_scale = 0.004f;
  return c;
}

/* Scales that keep outputs mostly unsaturated for random data. */
static void fit_scale(conv_case *c) {
  const float k = (float)(c->gic * c->kh * c->kw);
  c->x_scale = 0.0625f;
  c->y_scale = 0.5f;
  c->w_scale = 60.0f / (sqrtf(k) * 70.0f * 80.0f) * c->y_scale / c->x_scale;
}

static uint8_t gen_x(const conv_case *c) {
  const int32_t lo = c->xs ? -128 : 0, hi = c->xs ? 127 : 255;
  int32_t v;
  switch (c->x_mode) {
    case X_EXTREME: v = (rnd() & 1) ? lo : hi; break;
    case X_SPARSE: v = (rnd() % 8) ? c->x_zp : rnd_range(lo, hi); break;
    case X_MAX: v = hi; break;
    default: v = rnd_range(lo, hi); break;
  }
  return (uint8_t)v;
}

static uint8_t gen_w(const conv_case *c) {
  const int32_t lo = c->ws ? -128 : 0, hi = c->ws ? 127 : 255;
  int32_t v;
  switch (c->w_mode) {
    case W_EXTREME: v = (rnd() & 1) ? lo : hi; break;
    case W_SMALL: {
      v = c->w_zp + rnd_range(-3, 3);
      if (v < lo) v = lo;
      if (v > hi) v = hi;
      break;
    }
    case W_MAX: v = hi; break;
    default: v = rnd_range(lo, hi); break;
  }
  return (uint8_t)v;
}

static int32_t w_val(const uint8_t *p, size_t i, int is_signed) {
  return is_signed ? (int32_t)(int8_t)p[i] : (int32_t)p[i];
}

typedef struct case_data {
  q8rt_xnn_conv_desc d;
  uint8_t *x, *w, *wzp;
  float *wscale;
  int32_t *bias;
  size_t m, cin, out_h, out_w, x_bytes, y_bytes, w_elems;
} case_data;

static void free_data(case_data *cd) {
  free(cd->x);
  free(cd->w);
  free(cd->wzp);
  free(cd->wscale);
  free(cd->bias);
}

static void make_data(const conv_case *c, case_data *cd) {
  memset(cd, 0, sizeof(*cd));
  cd->m = c->groups * c->goc;
  cd->cin = c->groups * c->gic;
  cd->x_bytes = c->batch * c->in_h * c->in_w * cd->cin;
  cd->w_elems = cd->m * c->gic * c->kh * c->kw;
  cd->x = malloc(cd->x_bytes + Q8RT_XNN_INPUT_SLACK);
  for (size_t i = 0; i < cd->x_bytes; i++) cd->x[i] = gen_x(c);
  memset(cd->x + cd->x_bytes, 0x5a, Q8RT_XNN_INPUT_SLACK);
  cd->w = malloc(cd->w_elems);
  for (size_t i = 0; i < cd->w_elems; i++) cd->w[i] = gen_w(c);
  const size_t nz = c->w_zp_count == 0 ? 0 : c->w_zp_count == 1 ? 1 : cd->m;
  if (nz) {
    cd->wzp = malloc(nz);
    for (size_t i = 0; i < nz; i++) cd->wzp[i] = (uint8_t)c->w_zp;
    if (c->w_zp_vary && nz > 1) cd->wzp[1] = (uint8_t)(c->w_zp + 1);
  }
  const size_t ns = c->per_channel ? cd->m : 1;
  cd->wscale = malloc(ns * sizeof(float));
  for (size_t i = 0; i < ns; i++)
    cd->wscale[i] = c->per_channel ? c->w_scale * (1.0f + 0.37f * (float)i / (float)cd->m) : c->w_scale;
  if (c->b_mode != B_NULL) {
    cd->bias = malloc(cd->m * sizeof(int32_t));
    for (size_t i = 0; i < cd->m; i++) {
      switch (c->b_mode) {
        case B_EXTREME: /* within 2^20 of INT32_MAX / INT32_MIN: the accumulator may wrap */
          cd->bias[i] = (i & 1) ? INT32_MIN + (int32_t)(rnd() % (1u << 20)) : INT32_MAX - (int32_t)(rnd() % (1u << 20));
          break;
        case B_FULL: cd->bias[i] = (int32_t)rnd(); break;
        default: cd->bias[i] = rnd_range(-20000, 20000); break;
      }
    }
  }
  q8rt_xnn_conv_desc *d = &cd->d;
  d->batch = c->batch;
  d->in_h = c->in_h;
  d->in_w = c->in_w;
  d->groups = c->groups;
  d->group_in_c = c->gic;
  d->group_out_c = c->goc;
  d->kernel_h = c->kh;
  d->kernel_w = c->kw;
  d->stride_h = c->sh;
  d->stride_w = c->sw;
  d->dilation_h = c->dh;
  d->dilation_w = c->dw;
  d->pad_top = c->pt;
  d->pad_left = c->pl;
  d->pad_bottom = c->pb;
  d->pad_right = c->pr;
  d->x_signed = c->xs;
  d->y_signed = c->ys;
  d->w_signed = c->ws;
  d->x_zero_point = c->x_zp;
  d->y_zero_point = c->y_zp;
  d->x_scale = c->x_scale;
  d->y_scale = c->y_scale;
  d->w_scale = cd->wscale;
  d->w_scale_count = ns;
  d->w = cd->w;
  d->w_zero_point = cd->wzp;
  d->w_zero_point_count = nz;
  d->bias = cd->bias;
  if (q8rt_xnn_conv_output_size(d, &cd->out_h, &cd->out_w)) cd->y_bytes = c->batch * cd->out_h * cd->out_w * cd->m;
}

/* The reference kernel on NCHW copies; result in NHWC. */
static void run_reference(const conv_case *c, const case_data *cd, uint8_t *y_nhwc) {
  const size_t m = cd->m, cin = cd->cin, khw = (size_t)c->kh * c->kw;
  const size_t plane_in = c->in_h * c->in_w, plane_out = cd->out_h * cd->out_w;
  uint8_t *xn = malloc(cd->x_bytes);
  for (size_t n = 0; n < c->batch; n++)
    for (size_t p = 0; p < plane_in; p++)
      for (size_t ch = 0; ch < cin; ch++) xn[(n * cin + ch) * plane_in + p] = cd->x[(n * plane_in + p) * cin + ch];
  int16_t *wq = malloc(cd->w_elems * sizeof(int16_t));
  int32_t *bias = malloc(m * sizeof(int32_t));
  float *scale = malloc(m * sizeof(float));
  for (size_t oc = 0; oc < m; oc++) {
    const int32_t zp = cd->wzp == NULL ? 0 : w_val(cd->wzp, cd->d.w_zero_point_count == 1 ? 0 : oc, c->ws);
    for (size_t k = 0; k < c->gic * khw; k++) {
      const size_t i = oc * c->gic * khw + k;
      wq[i] = (int16_t)(w_val(cd->w, i, c->ws) - zp);
    }
    bias[oc] = cd->bias ? cd->bias[oc] : 0;
    const float ws = cd->wscale[cd->d.w_scale_count == 1 ? 0 : oc];
    scale[oc] = (float)((float)c->x_scale * (float)ws) / (float)c->y_scale;
  }
  q8rt_q8_conv_ref_params p;
  memset(&p, 0, sizeof(p));
  p.batch = c->batch;
  p.groups = c->groups;
  p.in_c = cin;
  p.in_h = c->in_h;
  p.in_w = c->in_w;
  p.out_c = m;
  p.out_h = cd->out_h;
  p.out_w = cd->out_w;
  p.kernel_h = c->kh;
  p.kernel_w = c->kw;
  p.stride_h = c->sh;
  p.stride_w = c->sw;
  p.dilation_h = c->dh;
  p.dilation_w = c->dw;
  p.pad_top = c->pt;
  p.pad_left = c->pl;
  p.x_signed = c->xs;
  p.y_signed = c->ys;
  p.x_zero_point = c->x_zp;
  p.y_zero_point = c->y_zp;
  p.y_lo = (float)((c->ys ? -128 : 0) - c->y_zp);
  p.y_hi = (float)((c->ys ? 127 : 255) - c->y_zp);
  p.w = wq;
  p.bias = bias;
  p.scale = scale;
  uint8_t *yn = malloc(cd->y_bytes);
  q8rt_q8_conv_ref_ukernel__scalar(&p, xn, yn);
  for (size_t n = 0; n < c->batch; n++)
    for (size_t q = 0; q < plane_out; q++)
      for (size_t oc = 0; oc < m; oc++) y_nhwc[(n * plane_out + q) * m + oc] = yn[(n * m + oc) * plane_out + q];
  free(yn);
  free(xn);
  free(wq);
  free(bias);
  free(scale);
}

static int g_verbose_mismatch = 1;
static int g_ran, g_refused; /* counters for the sweep summary */

#if defined(__aarch64__) || defined(__arm__)
/* On ARM the glue refuses XNNPACK's qu8 route (rndnu requantization) and weights of -128 as s8
 * (its NEON qc8 kernels add two int8 products in int16). A case expected to run on x86 is
 * expected refused there for those reasons; one refused for -128 is then run again with those
 * weights moved to -127, which must be accepted and exact. */
#define XNN_ARM 1
#else
#define XNN_ARM 0
#endif

static int qu8_route(const conv_case *c) {
  const int32_t wz = c->w_zp_count == 0 ? 0 : c->w_zp;
  return c->ws ? wz != 0 : wz != 128;
}

/* Replaces every weight that is -128 as s8 by -127; returns how many there were. */
static size_t clear_w_min(const conv_case *c, case_data *cd) {
  const uint8_t w_min = c->ws ? 0x80 : 0x00;
  size_t n = 0;
  for (size_t i = 0; i < cd->w_elems; i++) {
    if (cd->w[i] == w_min) {
      cd->w[i] = (uint8_t)(w_min + 1);
      n++;
    }
  }
  return n;
}

/* expect: 1 must be supported, 0 must be refused, -1 either. Returns 0 on success. When
 * supported, XNNPACK's bytes must equal the reference's. */
static int check_case(const conv_case *c, int expect, const char *label) {
  case_data cd;
  make_data(c, &cd);
  const char *reason = NULL;
  bool ok = q8rt_xnn_conv_supported(&cd.d, &reason);
  int rc = 0;
  if (XNN_ARM && expect == 1 && qu8_route(c)) {
    expect = 0;
    if (!ok && strstr(reason, "rndnu") == NULL) {
      fprintf(stderr, "  %s: refused for '%s', expected the qu8 (rndnu) refusal\n", label, reason);
      rc = 1;
      goto done;
    }
  }
  if (XNN_ARM && !ok && strstr(reason, "-128") != NULL) {
    if (clear_w_min(c, &cd) == 0) {
      fprintf(stderr, "  %s: refused for a -128 weight without one\n", label);
      rc = 1;
      goto done;
    }
    g_refused++;
    ok = q8rt_xnn_conv_supported(&cd.d, &reason);
    if (!ok) {
      fprintf(stderr, "  %s: refused with weights in [-127, 127]: %s\n", label, reason);
      rc = 1;
      goto done;
    }
  }
  if (expect >= 0 && ok != (expect == 1)) {
    fprintf(stderr, "  %s: supported=%d, expected %d (%s)\n", label, ok, expect, ok ? "-" : reason);
    rc = 1;
    goto done;
  }
  if (!ok) {
    g_refused++;
    if (reason == NULL || reason[0] == '\0') rc = 1;
    goto done;
  }
  {
    uint8_t *y = malloc(cd.y_bytes + 64);
    uint8_t *yr = malloc(cd.y_bytes);
    memset(y, 0xa5, cd.y_bytes + 64);
    q8rt_xnn_conv *conv = NULL;
    q8rt_error err;
    memset(&err, 0, sizeof(err));
    q8rt_status st = q8rt_xnn_conv_create(&cd.d, NULL, cd.x, y, NULL, &conv, &err);
    if (st != Q8RT_OK) {
      fprintf(stderr, "  %s: create failed: %s\n", label, err.message);
      rc = 1;
    } else {
      /* Run twice: the second run must not depend on state left by the first. */
      st = q8rt_xnn_conv_run(conv, &err);
      if (st == Q8RT_OK) st = q8rt_xnn_conv_run(conv, &err);
      if (st != Q8RT_OK) {
        fprintf(stderr, "  %s: run failed: %s\n", label, err.message);
        rc = 1;
      } else {
        run_reference(c, &cd, yr);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < cd.y_bytes; i++) {
          if (y[i] != yr[i]) {
            if (bad++ == 0) first = i;
          }
        }
        for (size_t i = 0; i < 64; i++) {
          if (y[cd.y_bytes + i] != 0xa5) {
            fprintf(stderr, "  %s: XNNPACK wrote past the output\n", label);
            rc = 1;
            break;
          }
        }
        if (bad) {
          if (g_verbose_mismatch)
            fprintf(stderr, "  %s [%s]: %zu of %zu bytes differ; first at %zu: xnnpack %u, reference %u\n", label,
                    q8rt_xnn_conv_route(conv), bad, cd.y_bytes, first, y[first], yr[first]);
          rc = 1;
        }
        g_ran++;
      }
    }
    q8rt_xnn_conv_free(conv);
    free(y);
    free(yr);
  }
done:
  free_data(&cd);
  return rc;
}

#define CASE(c, expect) CHECK(check_case(&(c), (expect), #c " @ line " Q8RT_STR(__LINE__)) == 0)
#define Q8RT_STR2(x) #x
#define Q8RT_STR(x) Q8RT_STR2(x)

Q8RT_TEST(xnn_init) {
  CHECK(q8rt_xnn_init());
  CHECK(q8rt_xnn_init()); /* idempotent */
  return 0;
}

/* The four type routes on a plain 3x3 conv. */
Q8RT_TEST(xnn_conv_type_routes) {
  conv_case c = base_case();
  /* u8 x + s8 per-channel w (zp 0) -> qc8 with x/y shifts */
  c.per_channel = 1;
  fit_scale(&c);
  CASE(c, 1);
  /* s8 x + s8 w, per-tensor and per-channel, s8 y */
  c.xs = c.ys = 1;
  c.x_zp = -5;
  c.y_zp = 3;
  c.per_channel = 0;
  CASE(c, 1);
  c.per_channel = 1;
  CASE(c, 1);
  /* s8 x, u8 y */
  c.ys = 0;
  c.y_zp = 100;
  CASE(c, 1);
  /* u8 x + u8 w per-tensor, nonzero w zp -> qu8 */
  c = base_case();
  c.ws = 0;
  c.w_zp = 131;
  c.w_zp_count = 1;
  fit_scale(&c);
  CASE(c, 1);
  c.w_zp = 0;
  CASE(c, 1);
  c.w_zp = 255;
  CASE(c, 1);
  /* u8 w with zp 128 is s8 with zp 0: qc8, per-channel allowed */
  c.w_zp = 128;
  c.per_channel = 1;
  CASE(c, 1);
  /* s8 x + s8 w with a nonzero per-tensor zp -> qu8 with shifts */
  c = base_case();
  c.xs = 1;
  c.ys = 1;
  c.x_zp = 7;
  c.y_zp = -9;
  c.w_zp = -3;
  c.w_zp_count = 1;
  fit_scale(&c);
  CASE(c, 1);
  c.ys = 0;
  c.y_zp = 0;
  c.w_zp = 127;
  CASE(c, 1);
  /* u8 x + s8 per-tensor w with nonzero zp -> qu8 */
  c.xs = 0;
  c.x_zp = 255;
  c.w_zp = -128;
  CASE(c, 1);
  /* all-equal per-channel zero points count as one */
  c = base_case();
  c.w_zp_count = 2;
  c.w_zp = 0;
  c.per_channel = 1;
  fit_scale(&c);
  CASE(c, 1);
  return 0;
}

static int shapes_for_types(int xs, int ys, int ws, int32_t wzp, int per_channel) {
  static const struct {
    size_t batch, h, w, g, gic, goc;
    uint32_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  } shapes[] = {
      {1, 9, 9, 1, 16, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},  /* 3x3 same */
      {1, 9, 8, 1, 5, 7, 3, 3, 2, 2, 1, 1, 0, 1, 2, 1},    /* stride 2, asymmetric pads */
      {2, 6, 7, 1, 3, 9, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0},    /* batch 2, no pad */
      {1, 12, 12, 1, 4, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},  /* dilation 2 */
      {1, 11, 13, 1, 3, 5, 3, 3, 1, 2, 2, 3, 1, 3, 2, 0},  /* dilation 2x3, mixed */
      {1, 10, 10, 48, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, /* depthwise 3x3 */
      {1, 10, 10, 33, 1, 1, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1}, /* depthwise 3x3 s2, odd channels */
      {2, 9, 9, 40, 1, 1, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},   /* depthwise 5x5 */
      {1, 11, 11, 17, 1, 1, 5, 5, 2, 2, 1, 1, 2, 1, 2, 1}, /* depthwise 5x5 s2 */
      {1, 10, 10, 24, 1, 1, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3}, /* depthwise 7x7: igemm path */
      {1, 8, 8, 16, 1, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   /* depthwise multiplier 2 */
      {1, 8, 8, 4, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    /* groups 4 */
      {1, 7, 9, 3, 5, 4, 3, 1, 2, 1, 1, 1, 1, 0, 1, 0},    /* groups 3, 3x1 */
      {1, 6, 6, 1, 300, 17, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, /* 1x1 gemm, K 300 */
      {2, 5, 5, 1, 17, 300, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, /* 1x1 gemm, N 300 */
      {1, 9, 9, 1, 24, 20, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0},  /* 1x1 stride 2: igemm */
      {1, 6, 6, 1, 8, 8, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1},    /* 1x1 with pads */
      {1, 1, 20, 1, 6, 10, 1, 7, 1, 1, 1, 1, 0, 3, 0, 3},  /* 1-D conv, 1x7 */
      {1, 20, 1, 1, 6, 10, 7, 1, 1, 1, 1, 1, 3, 0, 3, 0},  /* 7x1 */
      {1, 3, 3, 1, 4, 4, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0},    /* 1x1 output */
      {1, 4, 4, 1, 3, 5, 5, 5, 3, 3, 1, 1, 2, 2, 2, 2},    /* kernel bigger than input */
  };
  int rc = 0;
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    conv_case c = base_case();
    c.batch = shapes[i].batch;
    c.in_h = shapes[i].h;
    c.in_w = shapes[i].w;
    c.groups = shapes[i].g;
    c.gic = shapes[i].gic;
    c.goc = shapes[i].goc;
    c.kh = shapes[i].kh;
    c.kw = shapes[i].kw;
    c.sh = shapes[i].sh;
    c.sw = shapes[i].sw;
    c.dh = shapes[i].dh;
    c.dw = shapes[i].dw;
    c.pt = shapes[i].pt;
    c.pl = shapes[i].pl;
    c.pb = shapes[i].pb;
    c.pr = shapes[i].pr;
    c.xs = xs;
    c.ys = ys;
    c.ws = ws;
    c.x_zp = xs ? rnd_range(-128, 127) : rnd_range(0, 255);
    c.y_zp = ys ? rnd_range(-128, 127) : rnd_range(0, 255);
    c.w_zp = wzp;
    c.w_zp_count = wzp != 0 ? 1 : (int)(rnd() % 3);
    c.per_channel = per_channel;
    c.b_mode = (int)(rnd() % 2); /* moderate or NULL */
    fit_scale(&c);
    char label[96];
    snprintf(label, sizeof(label), "shape %zu (x%c y%c w%c zp %d pc %d)", i, xs ? 's' : 'u', ys ? 's' : 'u',
             ws ? 's' : 'u', (int)wzp, per_channel);
    if (check_case(&c, 1, label) != 0) rc = 1;
  }
  return rc;
}

Q8RT_TEST(xnn_conv_shapes) {
  CHECK(shapes_for_types(0, 0, 1, 0, 1) == 0);   /* u8 x, s8 per-channel w, u8 y */
  CHECK(shapes_for_types(1, 1, 1, 0, 0) == 0);   /* s8 per-tensor */
  CHECK(shapes_for_types(1, 0, 1, 0, 1) == 0);   /* s8 x per-channel, u8 y */
  CHECK(shapes_for_types(0, 0, 0, 37, 0) == 0);  /* qu8, nonzero w zp */
  CHECK(shapes_for_types(1, 1, 1, -77, 0) == 0); /* s8 with w zp: qu8 with shifts */
  return 0;
}

/* The benchmark shapes at half resolution: many full microkernel tiles. */
Q8RT_TEST(xnn_conv_medium) {
  conv_case c = base_case();
  c.in_h = c.in_w = 28;
  c.gic = c.goc = 64;
  c.per_channel = 1;
  fit_scale(&c);
  CASE(c, 1);
  c = base_case();
  c.in_h = c.in_w = 28;
  c.groups = 144;
  c.gic = c.goc = 1;
  c.xs = c.ys = 1;
  c.x_zp = c.y_zp = 0;
  c.per_channel = 1;
  fit_scale(&c);
  CASE(c, 1);
  return 0;
}

/* Channel counts 1..300 across tile edges, on 1x1, 3x3 and depthwise. */
Q8RT_TEST(xnn_conv_channel_counts) {
  static const size_t counts[] = {1,  2,  3,  4,  7,   8,   9,   15,  16,  17,  31, 32,
                                  33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300};
  const size_t n = sizeof(counts) / sizeof(counts[0]);
  for (size_t i = 0; i < n; i++) {
    conv_case c = base_case();
    c.in_h = c.in_w = 3;
    c.kh = c.kw = 1;
    c.pt = c.pl = c.pb = c.pr = 0;
    c.gic = counts[i];
    c.goc = counts[(i * 7 + 3) % n];
    c.per_channel = 1;
    fit_scale(&c);
    CASE(c, 1);
    c.kh = c.kw = 3;
    c.pt = c.pl = c.pb = c.pr = 1;
    c.in_h = c.in_w = 4;
    c.gic = counts[i] > 64 ? counts[i] / 4 : counts[i];
    c.goc = counts[i];
    c.xs = c.ys = 1;
    c.x_zp = -1;
    c.y_zp = 1;
    fit_scale(&c);
    CASE(c, 1);
    c = base_case();
    c.in_h = c.in_w = 5;
    c.groups = counts[i];
    c.gic = c.goc = 1;
    c.kh = c.kw = (i & 1) ? 5 : 3;
    c.pt = c.pl = c.pb = c.pr = c.kh / 2;
    c.per_channel = 1;
    fit_scale(&c);
    CASE(c, 1);
  }
  return 0;
}

/* Extreme data: activations only at the type limits, weights only -128/127 (or 0/255), zero
 * points at the limits, and biases that make the int32 accumulator wrap. */
Q8RT_TEST(xnn_conv_extremes) {
  static const int32_t uzp[] = {0, 255, 1, 254};
  static const int32_t szp[] = {-128, 127, -127, 0};
  for (int t = 0; t < 4; t++) {
    for (int dw = 0; dw < 2; dw++) {
      conv_case c = base_case();
      if (dw) {
        c.groups = 20;
        c.gic = c.goc = 1;
      } else {
        c.gic = 40;
        c.goc = 12;
      }
      c.x_mode = X_EXTREME;
      c.w_mode = W_EXTREME;
      c.b_mode = B_MODERATE;
      c.per_channel = 1;
      c.xs = t & 1;
      c.ys = (t >> 1) & 1;
      for (int z = 0; z < 4; z++) {
        c.x_zp = c.xs ? szp[z] : uzp[z];
        c.y_zp = c.ys ? szp[3 - z] : uzp[3 - z];
        fit_scale(&c);
        c.w_scale *= 0.1f; /* |x - x_zp| and |w| are larger than fit_scale assumes */
        CASE(c, 1);
        /* biases near the int32 limits: (float)acc * 5e-8 is about +-107, so wrapped and
         * unwrapped accumulators give different, mostly unsaturated bytes */
        const int32_t yzp = c.y_zp;
        c.y_zp = c.ys ? 0 : 128;
        c.w_scale = 5e-8f;
        c.x_scale = 1.0f;
        c.y_scale = 1.0f;
        c.b_mode = B_EXTREME;
        CASE(c, 1);
        c.b_mode = B_MODERATE;
        c.y_zp = yzp;
      }
    }
  }
  /* qu8 with extreme weights and w zp at the limits. */
  for (int z = 0; z < 4; z++) {
    conv_case c = base_case();
    c.ws = 0;
    c.w_zp = uzp[z];
    c.w_zp_count = 1;
    c.x_mode = X_EXTREME;
    c.w_mode = W_EXTREME;
    c.b_mode = B_MODERATE;
    c.x_zp = uzp[3 - z];
    c.y_zp = uzp[z];
    fit_scale(&c);
    c.w_scale *= 0.1f;
    if (c.w_zp == 128) c.per_channel = 1;
    CASE(c, 1);
    c.b_mode = B_EXTREME;
    c.y_zp = 128;
    c.x_scale = c.y_scale = 1.0f;
    c.w_scale = 5e-8f;
    CASE(c, 1);
  }
  /* An accumulator that wraps without any bias: K = 70000 products 255 * 127 sum to
   * 2266950000 > 2^31 (in float * 5e-8: 113 unwrapped, -101 wrapped). */
  conv_case c = base_case();
  c.kh = c.kw = 1;
  c.pt = c.pl = c.pb = c.pr = 0;
  c.in_h = c.in_w = 2;
  c.gic = 70000;
  c.goc = 3;
  c.x_mode = X_MAX;
  c.w_mode = W_MAX;
  c.b_mode = B_NULL;
  c.x_zp = 0;
  c.ys = 1;
  c.y_zp = 0;
  c.x_scale = 1.0f;
  c.y_scale = 1.0f;
  c.w_scale = 5e-8f;
  CASE(c, 1);
  return 0;
}

/* Scales: ties (powers of two), tiny requantization scales, just below 256. */
Q8RT_TEST(xnn_conv_scales) {
  conv_case c = base_case();
  c.gic = 12;
  c.goc = 20;
  /* requant = 2^-k: acc * 2^-k has exact .5 ties; half-even must hold */
  for (int k = 0; k <= 10; k++) {
    c.x_scale = 0.5f;
    c.y_scale = 1.0f;
    c.w_scale = ldexpf(1.0f, -k + 1);
    c.x_mode = (k & 1) ? X_SPARSE : X_RANDOM;
    c.w_mode = W_SMALL;
    c.per_channel = 0;
    CASE(c, 1);
    c.ws = 0;
    c.w_zp = 100;
    c.w_zp_count = 1;
    CASE(c, 1);
    c.ws = 1;
    c.w_zp = 0;
    c.w_zp_count = 0;
  }
  /* per-channel powers of two and odd multiples */
  c.per_channel = 1;
  c.x_scale = 0.25f;
  c.y_scale = 2.0f;
  c.w_scale = 0.125f;
  CASE(c, 1);
  /* tiny: a 1e-30 requantization scale is refused (Debian's XNNPACK asserts scale >= 2^-32 in
   * its qu8 parameter setup: found by the fuzzer, kept in tests/fuzz/regressions); 2^-32 itself
   * is accepted and exact */
  c.x_scale = 1e-20f;
  c.w_scale = 1e-10f;
  c.y_scale = 1.0f;
  c.b_mode = B_FULL;
  CASE(c, 0);
  c.x_scale = 0x1.0p-16f;
  c.w_scale = 0x1.0p-16f;
  CASE(c, 1);
  c.x_scale = 3e-4f;
  c.w_scale = 7e-5f;
  c.y_scale = 0.9f;
  CASE(c, 1);
  /* largest requantization scale below 256, sparse x so that some outputs are unsaturated */
  c.per_channel = 0;
  c.b_mode = B_NULL;
  c.x_mode = X_SPARSE;
  c.w_mode = W_SMALL;
  c.x_scale = 1.0f;
  c.y_scale = 1.0f;
  c.w_scale = nextafterf(256.0f, 0.0f);
  CASE(c, 1);
  c.w_scale = 255.5f;
  c.x_scale = 0.5f;
  c.y_scale = 0.5f;
  CASE(c, 1);
  c.ws = 0;
  c.w_zp = 9;
  c.w_zp_count = 1;
  c.x_scale = 1.0f;
  c.y_scale = 1.0f;
  c.w_scale = nextafterf(256.0f, 0.0f);
  CASE(c, 1);
  /* x*w rounds up to 256 only after the division: refused exactly as XNNPACK would */
  c.ws = 1;
  c.w_zp = 0;
  c.w_zp_count = 0;
  c.x_scale = 3.0f;
  c.w_scale = 256.0f;
  c.y_scale = nextafterf(3.0f, 4.0f); /* 768/3.0000002 rounds to 255.99998 */
  {
    const float rq = c.x_scale * c.w_scale / c.y_scale;
    CASE(c, rq < 256.0f ? 1 : 0);
  }
  return 0;
}

Q8RT_TEST(xnn_conv_refusals) {
  conv_case c = base_case();
  fit_scale(&c);
  /* per-channel weight zero points that differ */
  c.w_zp_count = 2;
  c.w_zp = 0;
  c.w_zp_vary = 1;
  CASE(c, 0);
  c.ws = 0;
  c.w_zp = 128;
  CASE(c, 0);
  c.w_zp_vary = 0;
  CASE(c, 1);
  /* u8 x with per-channel u8 weights (zp != 128): qu8 takes one scale */
  c.w_zp = 3;
  c.w_zp_count = 1;
  c.per_channel = 1;
  CASE(c, 0);
  /* s8 weights with a nonzero zp and per-channel scales */
  c.ws = 1;
  c.w_zp = 5;
  CASE(c, 0);
  c = base_case();
  fit_scale(&c);
  /* requantization scale >= 256 */
  c.x_scale = 1.0f;
  c.y_scale = 1.0f;
  c.w_scale = 256.0f;
  CASE(c, 0);
  c.w_scale = 1000.0f;
  CASE(c, 0);
  c.per_channel = 1; /* 200 * (1 + 0.37 * 7/8) > 256 in the last channel only */
  c.w_scale = 200.0f;
  CASE(c, 0);
  c.per_channel = 0;
  /* scales XNNPACK refuses */
  fit_scale(&c);
  const float bad[] = {0.0f, -0.5f, 1e-40f, INFINITY, NAN};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    conv_case b = c;
    b.w_scale = bad[i];
    CASE(b, 0);
    b = c;
    b.x_scale = bad[i];
    CASE(b, 0);
    b = c;
    b.y_scale = bad[i];
    CASE(b, 0);
  }
  /* requantization scale that underflows */
  c.x_scale = 1e-30f;
  c.w_scale = 1e-20f;
  c.y_scale = 1.0f;
  CASE(c, 0);
  fit_scale(&c);
  /* zero points out of range */
  c.x_zp = 256;
  CASE(c, 0);
  c.x_zp = 128;
  c.y_zp = -1;
  CASE(c, 0);
  c.y_zp = 0;
  c.xs = 1;
  c.x_zp = 128;
  CASE(c, 0);
  c.x_zp = 0;
  /* kernel larger than the padded input */
  c.in_h = 2;
  c.pt = c.pb = 0;
  CASE(c, 0);
  c = base_case();
  fit_scale(&c);
  /* descriptor mistakes */
  case_data cd;
  make_data(&c, &cd);
  const char *reason = NULL;
  clear_w_min(&c, &cd);
  CHECK(q8rt_xnn_conv_supported(&cd.d, &reason));
  /* one weight of -128: fine for XNNPACK's x86 kernels, refused on ARM (smull+smlal pairs) */
  cd.w[cd.w_elems / 2] = 0x80;
  CHECK(q8rt_xnn_conv_supported(&cd.d, &reason) == !XNN_ARM);
  if (XNN_ARM) CHECK(strstr(reason, "-128") != NULL);
  cd.w[cd.w_elems / 2] = 0x81;
  CHECK(q8rt_xnn_conv_supported(&cd.d, &reason));
  cd.d.w_scale_count = 2; /* neither 1 nor M = 8 */
  CHECK(!q8rt_xnn_conv_supported(&cd.d, &reason) && reason != NULL);
  cd.d.w_scale_count = 1;
  cd.d.group_in_c = 0;
  CHECK(!q8rt_xnn_conv_supported(&cd.d, &reason));
  cd.d.group_in_c = 8;
  cd.d.stride_w = 0;
  CHECK(!q8rt_xnn_conv_supported(&cd.d, &reason));
  cd.d.stride_w = 1;
  CHECK(!q8rt_xnn_conv_supported(NULL, &reason));
  /* create refuses what supported refuses, with the reason in the message */
  cd.d.x_scale = 0.0f;
  q8rt_xnn_conv *conv = (q8rt_xnn_conv *)&cd; /* must be reset to NULL */
  q8rt_error err;
  memset(&err, 0, sizeof(err));
  CHECK(q8rt_xnn_conv_create(&cd.d, NULL, cd.x, cd.x, NULL, &conv, &err) == Q8RT_ERROR_UNSUPPORTED);
  CHECK(conv == NULL && strstr(err.message, "x scale") != NULL);
  free_data(&cd);
  return 0;
}

/* XNNPACK rounds in the current SSE rounding mode: run forces round-to-nearest on the calling
 * thread (the same bytes as in the default mode) and gives the caller's mode back. */
Q8RT_TEST(xnn_conv_rounding_mode) {
  conv_case c = base_case();
  c.x_scale = 0.5f; /* requant 2^-4: many exact ties, where an upward mode would differ */
  c.y_scale = 1.0f;
  c.w_scale = 0.125f;
  c.w_mode = W_SMALL;
  case_data cd;
  make_data(&c, &cd);
  uint8_t *y = malloc(cd.y_bytes), *y2 = malloc(cd.y_bytes);
  q8rt_xnn_conv *conv = NULL;
  q8rt_error err;
  memset(&err, 0, sizeof(err));
  CHECK(q8rt_xnn_conv_create(&cd.d, NULL, cd.x, y, NULL, &conv, &err) == Q8RT_OK);
  CHECK(q8rt_xnn_conv_run(conv, &err) == Q8RT_OK);
  memcpy(y2, y, cd.y_bytes);
  memset(y, 0, cd.y_bytes);
  static const int modes[] = {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
  for (int i = 0; i < 3; i++) {
    CHECK(fesetround(modes[i]) == 0);
    const q8rt_status st = q8rt_xnn_conv_run(conv, &err);
    const int after = fegetround();
    fesetround(FE_TONEAREST);
    CHECK(st == Q8RT_OK);
    CHECK(after == modes[i]);
    CHECK(memcmp(y, y2, cd.y_bytes) == 0);
  }
  CHECK(q8rt_xnn_conv_run(NULL, &err) == Q8RT_ERROR_STATE);
  q8rt_xnn_conv_free(conv);
  q8rt_xnn_conv_free(NULL);
  free(y);
  free(y2);
  free_data(&cd);
  return 0;
}

/* The threadpool goes through to XNNPACK: same bytes with 4 threads; setup rebinds buffers. */
Q8RT_TEST(xnn_conv_threadpool) {
  pthreadpool_t pool = pthreadpool_create(4);
  CHECK(pool != NULL);
  conv_case c = base_case();
  c.in_h = c.in_w = 20;
  c.gic = 24;
  c.goc = 40;
  c.per_channel = 1;
  fit_scale(&c);
  for (int t = 0; t < 3; t++) {
    if (t == 1) { /* depthwise */
      c.groups = 64;
      c.gic = c.goc = 1;
    }
    if (t == 2) { /* qu8 */
      if (XNN_ARM) break;
      c.ws = 0;
      c.w_zp = 77;
      c.w_zp_count = 1;
      c.per_channel = 0;
    }
    fit_scale(&c);
    case_data cd;
    make_data(&c, &cd);
    if (XNN_ARM) clear_w_min(&c, &cd);
    uint8_t *y1 = malloc(cd.y_bytes), *y4 = malloc(cd.y_bytes), *yr = malloc(cd.y_bytes);
    q8rt_xnn_conv *conv = NULL;
    q8rt_error err;
    memset(&err, 0, sizeof(err));
    CHECK(q8rt_xnn_conv_create(&cd.d, NULL, cd.x, y1, NULL, &conv, &err) == Q8RT_OK);
    CHECK(q8rt_xnn_conv_run(conv, &err) == Q8RT_OK);
    CHECK(q8rt_xnn_conv_setup(conv, cd.x, y4, pool, &err) == Q8RT_OK);
    CHECK(q8rt_xnn_conv_run(conv, &err) == Q8RT_OK);
    run_reference(&c, &cd, yr);
    CHECK(memcmp(y1, yr, cd.y_bytes) == 0);
    CHECK(memcmp(y4, yr, cd.y_bytes) == 0);
    q8rt_xnn_conv_free(conv);
    free(y1);
    free(y4);
    free(yr);
    free_data(&cd);
  }
  pthreadpool_destroy(pool);
  return 0;
}

/* Random shapes, types, zero points and scales. */
Q8RT_TEST(xnn_conv_random) {
  g_ran = g_refused = 0;
  for (int it = 0; it < 600; it++) {
    conv_case c = base_case();
    c.batch = 1 + rnd() % 2;
    const int dw = rnd() % 3 == 0;
    if (dw) {
      c.groups = 1 + rnd() % 70;
      c.gic = 1;
      c.goc = 1 + (rnd() % 4 == 0);
    } else {
      c.groups = 1 + (rnd() % 3 == 0) * (rnd() % 4);
      c.gic = 1 + rnd() % 40;
      c.goc = 1 + rnd() % 40;
    }
    c.kh = 1 + rnd() % 5;
    c.kw = (rnd() & 1) ? c.kh : 1 + rnd() % 5;
    c.sh = 1 + rnd() % 2;
    c.sw = 1 + rnd() % 2;
    c.dh = 1 + (rnd() % 4 == 0);
    c.dw = 1 + (rnd() % 4 == 0);
    c.pt = rnd() % 3;
    c.pl = rnd() % 3;
    c.pb = rnd() % 3;
    c.pr = rnd() % 3;
    c.in_h = (c.kh - 1) * c.dh + 1 + rnd() % 8;
    c.in_w = (c.kw - 1) * c.dw + 1 + rnd() % 8;
    c.xs = rnd() & 1;
    c.ys = rnd() & 1;
    c.ws = rnd() % 3 != 0;
    c.x_zp = c.xs ? rnd_range(-128, 127) : rnd_range(0, 255);
    c.y_zp = c.ys ? rnd_range(-128, 127) : rnd_range(0, 255);
    const int zp_kind = (int)(rnd() % 4); /* 0: zero as s8, 1-3: random */
    c.w_zp = zp_kind == 0 ? (c.ws ? 0 : 128) : (c.ws ? rnd_range(-128, 127) : rnd_range(0, 255));
    c.w_zp_count = (int)(rnd() % 3);
    if (c.w_zp_count == 0) c.w_zp = 0;
    c.w_zp_vary = rnd() % 8 == 0;
    c.per_channel = rnd() & 1;
    c.x_mode = (int)(rnd() % 3);
    c.w_mode = (int)(rnd() % 3);
    c.b_mode = (int)(rnd() % 8);
    if (c.b_mode > B_FULL) c.b_mode = B_MODERATE;
    fit_scale(&c);
    c.w_scale *= ldexpf(1.0f, rnd_range(-3, 1));
    char label[48];
    snprintf(label, sizeof(label), "random case %d", it);
    CHECK(check_case(&c, -1, label) == 0);
  }
  /* most random cases are runnable (on ARM: not the ~2/3 that need the qu8 route) */
  if (!XNN_ARM) CHECK(g_ran > 300);
  if (XNN_ARM) CHECK(g_ran > 120);
  return 0;
}
