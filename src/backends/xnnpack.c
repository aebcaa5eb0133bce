/* XNNPACK backend glue for QLinearConv: route choice, weight re-layout, activation shifts.
 * See xnnpack.h for why the routes accepted here are byte-identical to the reference. */
#include "backends/xnnpack.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include <xnnpack.h>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define Q8RT_XNN_X86 1
#else
#include <fenv.h>
#define Q8RT_XNN_X86 0
#endif

/* Slack after the glue's own input scratch; XNNPACK needs 16 (XNN_EXTRA_BYTES), q8rt's arena
 * convention is 64. */
#define SCRATCH_SLACK 64

#if XNN_EXTRA_BYTES > Q8RT_XNN_INPUT_SLACK
#error "XNNPACK over-reads more than Q8RT_XNN_INPUT_SLACK"
#endif

/* ---- initialization ------------------------------------------------------------------------ */

/* XNNPACK takes one allocator for the whole process (the first xnn_initialize wins) and calls it
 * without saying for which operator. q8rt gives it this one: each allocation goes to the q8rt
 * allocator the calling thread has set (tl_owner: the session's, for the duration of an operator's
 * create, setup, run and delete, all on the session's thread), so XNNPACK's memory is counted by
 * the session's meter and comes from the caller's allocator. Each block starts with a header
 * recording where it came from, so frees and reallocations go back to the same allocator whatever
 * the thread. An allocation with no owner set (none known) goes to malloc and is counted in
 * g_unowned, reported by q8rt_unaccounted_bytes(). */
static _Thread_local const q8rt_allocator *tl_owner;
static _Atomic size_t g_unowned;

typedef struct xnn_block {
  const q8rt_allocator *owner; /* NULL: the default allocator, counted in g_unowned */
  void *base;                  /* what the allocator returned */
  size_t total;                /* bytes asked of it */
  size_t size;                 /* bytes XNNPACK asked for */
} xnn_block;

static xnn_block *block_of(void *p) { return (xnn_block *)p - 1; }

static void *xa_aligned_allocate(void *ctx, size_t alignment, size_t size) {
  (void)ctx;
  if (alignment < 16) alignment = 16;
  if (alignment > 4096 || (alignment & (alignment - 1)) != 0) return NULL;
  const size_t header = (sizeof(xnn_block) + alignment - 1) & ~(alignment - 1);
  size_t total;
  if (!q8rt_add_size(header, size, &total)) return NULL;
  const q8rt_allocator *owner = tl_owner;
  char *base = q8rt_alloc(owner != NULL ? owner : q8rt_default_allocator(), total, alignment);
  if (base == NULL) return NULL;
  if (owner == NULL) atomic_fetch_add(&g_unowned, total);
  char *p = base + header;
  xnn_block *b = block_of(p);
  b->owner = owner;
  b->base = base;
  b->total = total;
  b->size = size;
  return p;
}

static void xa_deallocate(void *ctx, void *p) {
  (void)ctx;
  if (p == NULL) return;
  xnn_block *b = block_of(p);
  const q8rt_allocator *owner = b->owner;
  void *base = b->base;
  const size_t total = b->total;
  if (owner == NULL) atomic_fetch_sub(&g_unowned, total);
  q8rt_free(owner != NULL ? owner : q8rt_default_allocator(), base, total);
}

static void *xa_allocate(void *ctx, size_t size) { return xa_aligned_allocate(ctx, 16, size); }

static void *xa_reallocate(void *ctx, void *p, size_t size) {
  if (p == NULL) return xa_allocate(ctx, size);
  xnn_block *b = block_of(p);
  /* the new block goes where the old one came from */
  const q8rt_allocator *saved = tl_owner;
  tl_owner = b->owner;
  void *q = xa_allocate(ctx, size);
  tl_owner = saved;
  if (q == NULL) return NULL;
  memcpy(q, p, b->size < size ? b->size : size);
  xa_deallocate(ctx, p);
  return q;
}

static const struct xnn_allocator g_xnn_allocator = {
    NULL, xa_allocate, xa_reallocate, xa_deallocate, xa_aligned_allocate, xa_deallocate,
};

size_t q8rt_unaccounted_bytes(void) { return atomic_load(&g_unowned); }

/* Sets the owner of XNNPACK's allocations on this thread for a scope; returns the previous one. */
static const q8rt_allocator *owner_enter(const q8rt_allocator *a) {
  const q8rt_allocator *prev = tl_owner;
  tl_owner = a;
  return prev;
}

static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static bool g_init_ok;

static void init_once(void) { g_init_ok = xnn_initialize(&g_xnn_allocator) == xnn_status_success; }

bool q8rt_xnn_init(void) {
  if (pthread_once(&g_init_once, init_once) != 0) return false;
  return g_init_ok;
}

/* ---- route choice -------------------------------------------------------------------------- */

enum { ROUTE_QC8 = 0, ROUTE_QU8 = 1 };

typedef struct route {
  int kind;
  uint8_t x_xor, y_xor, w_xor; /* applied to x before, to y after the run, to w at packing */
  int32_t x_zp, y_zp, w_zp;    /* as the XNNPACK operator sees them (w_zp: qu8 only) */
  bool per_channel;            /* weight scales differ between output channels */
  size_t m, c;                 /* output and input channels */
  size_t out_h, out_w;
  size_t x_bytes, y_bytes, w_elems;
} route;

static bool zp_in_range(int32_t zp, int is_signed) {
  return is_signed ? (zp >= -128 && zp <= 127) : (zp >= 0 && zp <= 255);
}

static size_t output_dim(size_t in, uint32_t pad0, uint32_t pad1, uint32_t kernel, uint32_t dilation, uint32_t stride,
                         bool *ok) {
  size_t padded, eff;
  if (in == 0 || kernel == 0 || dilation == 0 || stride == 0 || !q8rt_add_size(in, pad0, &padded) ||
      !q8rt_add_size(padded, pad1, &padded) || !q8rt_mul_size((size_t)kernel - 1, dilation, &eff) ||
      !q8rt_add_size(eff, 1, &eff) || padded < eff) {
    *ok = false;
    return 0;
  }
  return (padded - eff) / stride + 1;
}

bool q8rt_xnn_conv_output_size(const q8rt_xnn_conv_desc *d, size_t *out_h, size_t *out_w) {
  bool ok = true;
  size_t h = output_dim(d->in_h, d->pad_top, d->pad_bottom, d->kernel_h, d->dilation_h, d->stride_h, &ok);
  size_t w = output_dim(d->in_w, d->pad_left, d->pad_right, d->kernel_w, d->dilation_w, d->stride_w, &ok);
  if (!ok) return false;
  *out_h = h;
  *out_w = w;
  return true;
}

static int32_t load_w8(const void *p, size_t i, int is_signed) {
  return is_signed ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

/* XNNPACK's own test of every scale it is given: positive, finite and normal. */
static bool xnn_scale_ok(float s) { return s > 0.0f && isnormal(s); }

static bool plan_route(const q8rt_xnn_conv_desc *d, route *r, const char **reason) {
#define REFUSE(msg)              \
  do {                           \
    if (reason) *reason = (msg); \
    return false;                \
  } while (0)
  memset(r, 0, sizeof(*r));
  if (d == NULL) REFUSE("no convolution description");
  if (!q8rt_xnn_init()) REFUSE("XNNPACK is not available on this CPU");

  /* Shapes. XNNPACK takes groups and kernel sizes as uint32 and multiplies kernel_h*kernel_w in
   * uint32. */
  if (d->batch == 0 || d->groups == 0 || d->group_in_c == 0 || d->group_out_c == 0)
    REFUSE("a dimension of the convolution is zero");
  if (d->groups > UINT32_MAX) REFUSE("too many groups for XNNPACK");
  if ((uint64_t)d->kernel_h * d->kernel_w > UINT32_MAX) REFUSE("kernel too large for XNNPACK");
  if (!q8rt_xnn_conv_output_size(d, &r->out_h, &r->out_w))
    REFUSE("the dilated kernel does not fit in the padded input (or a size is zero)");
  size_t t;
  if (!q8rt_mul_size(d->groups, d->group_out_c, &r->m) || !q8rt_mul_size(d->groups, d->group_in_c, &r->c) ||
      !q8rt_mul_size(d->batch, d->in_h, &t) || !q8rt_mul_size(t, d->in_w, &t) || !q8rt_mul_size(t, r->c, &r->x_bytes) ||
      !q8rt_add_size(r->x_bytes, SCRATCH_SLACK, &t) || !q8rt_mul_size(d->batch, r->out_h, &t) ||
      !q8rt_mul_size(t, r->out_w, &t) || !q8rt_mul_size(t, r->m, &r->y_bytes) ||
      !q8rt_mul_size(r->m, d->group_in_c, &t) || !q8rt_mul_size(t, (size_t)d->kernel_h * d->kernel_w, &r->w_elems))
    REFUSE("tensor sizes overflow");

  /* Zero points. */
  if (!zp_in_range(d->x_zero_point, d->x_signed)) REFUSE("x zero point out of the range of its type");
  if (!zp_in_range(d->y_zero_point, d->y_signed)) REFUSE("y zero point out of the range of its type");
  if (d->w == NULL || d->w_scale == NULL) REFUSE("no weights or weight scales");
  const size_t zcount = d->w_zero_point == NULL ? 0 : d->w_zero_point_count;
  if (d->w_zero_point != NULL && zcount != 1 && zcount != r->m)
    REFUSE("weight zero point count is neither 1 nor the number of output channels");
  const int32_t wz = zcount == 0 ? 0 : load_w8(d->w_zero_point, 0, d->w_signed);
  for (size_t i = 1; i < zcount; i++) {
    if (load_w8(d->w_zero_point, i, d->w_signed) != wz)
      REFUSE("per-channel weight zero points (XNNPACK takes one weight zero point)");
  }

  /* Scales: XNNPACK's own validation, then the requantization scale exactly as it computes it
   * (input_scale * kernel_scale[c] / output_scale, float). */
  if (d->w_scale_count != 1 && d->w_scale_count != r->m)
    REFUSE("weight scale count is neither 1 nor the number of output channels");
  if (!xnn_scale_ok(d->x_scale)) REFUSE("x scale is not a positive normal float (XNNPACK refuses it)");
  if (!xnn_scale_ok(d->y_scale)) REFUSE("y scale is not a positive normal float (XNNPACK refuses it)");
  for (size_t i = 0; i < d->w_scale_count; i++) {
    const float ws = d->w_scale[i];
    if (!xnn_scale_ok(ws)) REFUSE("a weight scale is not a positive normal float (XNNPACK refuses it)");
    const float rq = d->x_scale * ws / d->y_scale;
    if (!(rq < 256.0f)) REFUSE("requantization scale x_scale*w_scale/y_scale is 256 or more (XNNPACK refuses it)");
    /* Debian's XNNPACK is built with assertions: its params init asserts scale >= 2^-32 (found by
     * the fuzzer), so smaller scales must not reach it. */
    if (!(rq >= 0x1.0p-32f)) REFUSE("requantization scale is below 2^-32 (XNNPACK asserts on it)");
    if (ws != d->w_scale[0]) r->per_channel = true;
  }

  /* Route. */
  const bool w_zero_as_s8 = d->w_signed ? wz == 0 : wz == 128;
  if (w_zero_as_s8) {
#if !Q8RT_XNN_X86
    /* XNNPACK's aarch64 qc8 kernels without the dot product (GEMM 2x8c8 neon_mlal) and its qc8
     * depthwise kernels on every ARM core (up16x9/up16x25 neonv8_mla8) add two s8 x s8 products in
     * int16 (smull + smlal) before widening: 2 * (-128) * (-128) = 32768 wraps. Without -128 the
     * pair is at most 2 * 128 * 127 = 32512: exact for every activation. */
    const uint8_t w_min = d->w_signed ? 0x80 : 0x00; /* the byte that is -128 as s8 */
    for (size_t i = 0; i < r->w_elems; i++) {
      if (((const uint8_t *)d->w)[i] == w_min)
        REFUSE(
            "a weight is -128: XNNPACK's NEON qc8 kernels add two int8 products in int16 (smull+smlal), "
            "which overflows for (-128)*(-128) twice");
    }
#endif
    r->kind = ROUTE_QC8;
    r->w_xor = d->w_signed ? 0 : 0x80;
    r->x_xor = d->x_signed ? 0 : 0x80;
    r->y_xor = d->y_signed ? 0 : 0x80;
    r->x_zp = d->x_signed ? d->x_zero_point : d->x_zero_point - 128;
    r->y_zp = d->y_signed ? d->y_zero_point : d->y_zero_point - 128;
    r->w_zp = 0;
    return true;
  }
  if (r->per_channel)
    REFUSE(
        "per-channel weight scales with a nonzero weight zero point (XNNPACK's qc8 needs zero point 0, qu8 one scale)");
#if !Q8RT_XNN_X86
  REFUSE("nonzero weight zero point: XNNPACK's qu8 requantizes in fixed point (rndnu) on this architecture");
#else
  r->kind = ROUTE_QU8;
  r->w_xor = d->w_signed ? 0x80 : 0;
  r->x_xor = d->x_signed ? 0x80 : 0;
  r->y_xor = d->y_signed ? 0x80 : 0;
  r->x_zp = d->x_signed ? d->x_zero_point + 128 : d->x_zero_point;
  r->y_zp = d->y_signed ? d->y_zero_point + 128 : d->y_zero_point;
  r->w_zp = d->w_signed ? wz + 128 : wz;
  return true;
#endif
#undef REFUSE
}

bool q8rt_xnn_conv_supported(const q8rt_xnn_conv_desc *d, const char **reason) {
  route r;
  return plan_route(d, &r, reason);
}

/* ---- operator ------------------------------------------------------------------------------ */

struct q8rt_xnn_conv {
  const q8rt_allocator *allocator;
  xnn_operator_t op;
  int kind;
  uint8_t x_xor, y_xor;
  size_t batch, in_h, in_w;
  size_t x_bytes, y_bytes;
  uint8_t *x_scratch; /* x_bytes + SCRATCH_SLACK, only when x_xor */
  const uint8_t *x;   /* the caller's input */
  uint8_t *y;         /* the caller's output */
  pthreadpool_t pool;
  bool ready; /* set up successfully */
};

static q8rt_status from_xnn(enum xnn_status s, q8rt_error *err, const char *what) {
  switch (s) {
    case xnn_status_success: return Q8RT_OK;
    case xnn_status_out_of_memory: return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "XNNPACK %s: out of memory", what);
    case xnn_status_uninitialized:
    case xnn_status_unsupported_hardware:
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "XNNPACK %s: not available on this CPU", what);
    default: return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "XNNPACK %s failed (status %d)", what, (int)s);
  }
}

/* dst = src ^ mask, 8 bytes at a time. */
static void xor_bytes(uint8_t *dst, const uint8_t *src, size_t n, uint8_t mask) {
  const uint64_t m8 = (uint64_t)mask * UINT64_C(0x0101010101010101);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    memcpy(&v, src + i, 8);
    v ^= m8;
    memcpy(dst + i, &v, 8);
  }
  for (; i < n; i++) dst[i] = (uint8_t)(src[i] ^ mask);
}

q8rt_status q8rt_xnn_conv_setup(q8rt_xnn_conv *c, const void *x, void *y, pthreadpool_t pool, q8rt_error *err) {
  if (c == NULL || x == NULL || y == NULL)
    return q8rt_fail(err, Q8RT_ERROR_INVALID_ARGUMENT, "XNNPACK conv setup: NULL argument");
  c->ready = false;
  c->x = (const uint8_t *)x;
  c->y = (uint8_t *)y;
  c->pool = pool;
  const void *in = c->x_xor ? (const void *)c->x_scratch : x;
  enum xnn_status s;
  const q8rt_allocator *prev = owner_enter(c->allocator);
  if (c->kind == ROUTE_QC8) {
    s = xnn_setup_convolution2d_nhwc_qc8(c->op, c->batch, c->in_h, c->in_w, (const int8_t *)in, (int8_t *)y, pool);
  } else {
    s = xnn_setup_convolution2d_nhwc_qu8(c->op, c->batch, c->in_h, c->in_w, (const uint8_t *)in, (uint8_t *)y, pool);
  }
  owner_enter(prev);
  if (s != xnn_status_success) return from_xnn(s, err, "convolution setup");
  c->ready = true;
  return Q8RT_OK;
}

q8rt_status q8rt_xnn_conv_create(const q8rt_xnn_conv_desc *d, const q8rt_allocator *a, const void *x, void *y,
                                 pthreadpool_t pool, q8rt_xnn_conv **out, q8rt_error *err) {
  if (out == NULL) return q8rt_fail(err, Q8RT_ERROR_INVALID_ARGUMENT, "XNNPACK conv create: NULL output");
  *out = NULL;
  if (a == NULL) a = q8rt_default_allocator();
  route r;
  const char *reason = "unsupported";
  if (!plan_route(d, &r, &reason)) return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "XNNPACK conv: %s", reason);

  q8rt_xnn_conv *c = q8rt_calloc(a, 1, sizeof(*c));
  if (c == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "XNNPACK conv: out of memory");
  c->allocator = a;
  c->kind = r.kind;
  c->x_xor = r.x_xor;
  c->y_xor = r.y_xor;
  c->batch = d->batch;
  c->in_h = d->in_h;
  c->in_w = d->in_w;
  c->x_bytes = r.x_bytes;
  c->y_bytes = r.y_bytes;

  q8rt_status st = Q8RT_OK;
  float *scales = NULL;
  uint8_t *wt = NULL;
  const size_t wt_bytes = r.w_elems ? r.w_elems : 1;
  if (r.x_xor) {
    c->x_scratch = q8rt_alloc(a, r.x_bytes + SCRATCH_SLACK, 64);
    if (c->x_scratch == NULL) goto oom;
    memset(c->x_scratch + r.x_bytes, 0, SCRATCH_SLACK);
  }

  /* Weights: ONNX [M][Cg][kh][kw] -> XNNPACK [G][Og][kh][kw][Cg] (= [M][kh][kw][Cg]), with the
   * type shift. XNNPACK packs them at create and keeps no pointer to them. */
  wt = q8rt_alloc(a, wt_bytes, 64);
  if (wt == NULL) goto oom;
  {
    const uint8_t *w = (const uint8_t *)d->w;
    const size_t cg = d->group_in_c, kh = d->kernel_h, kw = d->kernel_w, khw = kh * kw;
    for (size_t m = 0; m < r.m; m++) {
      for (size_t ci = 0; ci < cg; ci++) {
        const uint8_t *src = w + (m * cg + ci) * khw;
        uint8_t *dst = wt + m * khw * cg + ci;
        for (size_t k = 0; k < khw; k++) dst[k * cg] = (uint8_t)(src[k] ^ r.w_xor);
      }
    }
  }

  enum xnn_status s;
  const q8rt_allocator *prev = owner_enter(a);
  if (r.kind == ROUTE_QC8) {
    const float *ks = d->w_scale;
    if (d->w_scale_count != r.m) {
      scales = q8rt_alloc(a, r.m * sizeof(float), 64);
      if (scales == NULL) goto oom;
      for (size_t i = 0; i < r.m; i++) scales[i] = d->w_scale[0];
      ks = scales;
    }
    s = xnn_create_convolution2d_nhwc_qc8(
        d->pad_top, d->pad_right, d->pad_bottom, d->pad_left, d->kernel_h, d->kernel_w, d->stride_h, d->stride_w,
        d->dilation_h, d->dilation_w, (uint32_t)d->groups, d->group_in_c, d->group_out_c, r.c, r.m, (int8_t)r.x_zp,
        d->x_scale, ks, (const int8_t *)wt, d->bias, (int8_t)r.y_zp, d->y_scale, INT8_MIN, INT8_MAX, 0, &c->op);
  } else {
    s = xnn_create_convolution2d_nhwc_qu8(
        d->pad_top, d->pad_right, d->pad_bottom, d->pad_left, d->kernel_h, d->kernel_w, d->stride_h, d->stride_w,
        d->dilation_h, d->dilation_w, (uint32_t)d->groups, d->group_in_c, d->group_out_c, r.c, r.m, (uint8_t)r.x_zp,
        d->x_scale, (uint8_t)r.w_zp, d->w_scale[0], wt, d->bias, (uint8_t)r.y_zp, d->y_scale, 0, UINT8_MAX, 0, &c->op);
  }
  owner_enter(prev);
  if (s != xnn_status_success) {
    c->op = NULL;
    st = from_xnn(s, err, "convolution create");
    goto fail;
  }
  q8rt_free(a, wt, wt_bytes);
  wt = NULL;
  if (scales != NULL) q8rt_free(a, scales, r.m * sizeof(float));
  scales = NULL;

  st = q8rt_xnn_conv_setup(c, x, y, pool, err);
  if (st != Q8RT_OK) goto fail;
  *out = c;
  return Q8RT_OK;

oom:
  st = q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "XNNPACK conv: out of memory");
fail:
  if (wt != NULL) q8rt_free(a, wt, wt_bytes);
  if (scales != NULL) q8rt_free(a, scales, r.m * sizeof(float));
  q8rt_xnn_conv_free(c);
  return st;
}

/* XNNPACK's epilogue rounds with cvtps2dq, i.e. in the current SSE rounding mode, and its float
 * multiply follows that mode too; the contract is defined in round-to-nearest. The calling
 * thread runs in round-to-nearest for the duration of the operator and gets its own mode back.
 * (pthreadpool workers keep their own modes, round-to-nearest unless the application changed
 * them in those threads.) */
typedef struct fp_mode {
#if Q8RT_XNN_X86
  unsigned csr;
#else
  int round;
#endif
} fp_mode;

static void enter_nearest(fp_mode *m) {
#if Q8RT_XNN_X86
  m->csr = _mm_getcsr();
  if (m->csr & 0x6000u) _mm_setcsr(m->csr & ~0x6000u);
#else
  m->round = fegetround();
  if (m->round != FE_TONEAREST) fesetround(FE_TONEAREST);
#endif
}

static void leave_nearest(const fp_mode *m) {
#if Q8RT_XNN_X86
  if (m->csr & 0x6000u) _mm_setcsr(m->csr);
#else
  if (m->round != FE_TONEAREST) fesetround(m->round);
#endif
}

q8rt_status q8rt_xnn_conv_run(q8rt_xnn_conv *c, q8rt_error *err) {
  if (c == NULL || !c->ready) return q8rt_fail(err, Q8RT_ERROR_STATE, "XNNPACK conv: not set up");
  if (c->x_xor) xor_bytes(c->x_scratch, c->x, c->x_bytes, c->x_xor);
  fp_mode mode;
  enter_nearest(&mode);
  const q8rt_allocator *prev = owner_enter(c->allocator);
  const enum xnn_status s = xnn_run_operator(c->op, c->pool);
  owner_enter(prev);
  leave_nearest(&mode);
  if (s != xnn_status_success) return from_xnn(s, err, "convolution run");
  if (c->y_xor) xor_bytes(c->y, c->y, c->y_bytes, c->y_xor);
  return Q8RT_OK;
}

const char *q8rt_xnn_conv_route(const q8rt_xnn_conv *c) {
  if (c == NULL) return "none";
  return c->kind == ROUTE_QC8 ? "qc8" : "qu8";
}

void q8rt_xnn_conv_free(q8rt_xnn_conv *c) {
  if (c == NULL) return;
  if (c->op != NULL) {
    const q8rt_allocator *prev = owner_enter(c->allocator);
    xnn_delete_operator(c->op);
    owner_enter(prev);
  }
  if (c->x_scratch != NULL) q8rt_free(c->allocator, c->x_scratch, c->x_bytes + SCRATCH_SLACK);
  q8rt_free(c->allocator, c, sizeof(*c));
}
