#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "f16-f32-vcvt/f16-f32-vcvt.h"
#include "f32-f16-vcvt/f32-f16-vcvt.h"
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* Messages name nodes, values and attributes from the model: a damaged or hostile model's strings
 * may hold control characters (a newline splits the one-line message) or bytes that are not UTF-8
 * (a caller decoding the message fails; a bit-flipped node name did in a q8rt-run check). Each such
 * byte becomes '?', as does a character vsnprintf cut at the end. */
static void message_clean(char *s) {
  unsigned char *p = (unsigned char *)s;
  while (*p != 0) {
    const unsigned c = *p;
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) *p = '?';
      p++;
      continue;
    }
    const size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    int ok = n != 0;
    for (size_t i = 1; ok && i < n; i++) ok = (p[i] & 0xc0) == 0x80; /* stops at the terminating 0 */
    /* overlong forms, surrogates, code points past U+10FFFF */
    if (ok && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) || (c == 0xf0 && p[1] < 0x90) ||
               (c == 0xf4 && p[1] >= 0x90))) {
      ok = 0;
    }
    if (!ok) {
      *p++ = '?';
      continue;
    }
    p += n;
  }
}

q8rt_status q8rt_fail(q8rt_error *err, q8rt_status status, const char *fmt, ...) {
  if (err != NULL) {
    err->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    message_clean(err->message);
  }
  return status;
}

const char *q8rt_version(void) { return Q8RT_VERSION_STRING; }

int q8rt_version_number(void) { return Q8RT_VERSION_NUMBER; }

const char *q8rt_status_string(q8rt_status status) {
  switch (status) {
    case Q8RT_OK: return "ok";
    case Q8RT_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case Q8RT_ERROR_INVALID_MODEL: return "invalid model";
    case Q8RT_ERROR_UNSUPPORTED: return "unsupported";
    case Q8RT_ERROR_OUT_OF_MEMORY: return "out of memory";
    case Q8RT_ERROR_IO: return "i/o error";
    case Q8RT_ERROR_SHAPE: return "shape mismatch";
    case Q8RT_ERROR_STATE: return "invalid state";
    case Q8RT_ERROR_LIMIT: return "limit reached";
  }
  return "unknown status";
}

const char *q8rt_onnx_type_name(int32_t data_type) {
  static const char *const names[] = {
      "undefined", "float32",    "uint8",      "int8",         "uint16",         "int16",      "int32",
      "int64",     "string",     "bool",       "float16",      "double",         "uint32",     "uint64",
      "complex64", "complex128", "bfloat16",   "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
      "uint4",     "int4",       "float4e2m1", "float8e8m0",
  };
  if (data_type >= 0 && (size_t)data_type < sizeof(names) / sizeof(names[0])) return names[data_type];
  return "unknown";
}

/* q8rt_dtype values are ONNX's element type numbers (FLOAT = 1 ... INT64 = 7, BOOL = 9, FLOAT16 = 10). */
const char *q8rt_dtype_name(q8rt_dtype dtype) {
  return q8rt_dtype_known((int32_t)dtype) ? q8rt_onnx_type_name((int32_t)dtype) : "undefined";
}

size_t q8rt_dtype_size(q8rt_dtype dtype) {
  switch (dtype) {
    case Q8RT_DTYPE_UINT8:
    case Q8RT_DTYPE_INT8:
    case Q8RT_DTYPE_BOOL: return 1;
    case Q8RT_DTYPE_UINT16:
    case Q8RT_DTYPE_INT16:
    case Q8RT_DTYPE_FLOAT16: return 2;
    case Q8RT_DTYPE_FLOAT32:
    case Q8RT_DTYPE_INT32: return 4;
    case Q8RT_DTYPE_INT64: return 8;
    case Q8RT_DTYPE_UNDEFINED: break;
  }
  return 0;
}

const char *q8rt_backend_name(q8rt_backend backend) {
  switch (backend) {
    case Q8RT_BACKEND_AUTO: return "auto";
    case Q8RT_BACKEND_REFERENCE: return "reference";
    case Q8RT_BACKEND_AVX2: return "avx2";
    case Q8RT_BACKEND_NEON: return "neon";
    case Q8RT_BACKEND_XNNPACK: return "xnnpack";
    case Q8RT_BACKEND_AVX512: return "avx512";
  }
  return "unknown";
}

bool q8rt_dtype_known(int32_t dtype) {
  return (dtype > 0 && dtype <= 7) || dtype == Q8RT_DTYPE_BOOL || dtype == Q8RT_DTYPE_FLOAT16;
}

void q8rt_dtype_range(q8rt_dtype dtype, int32_t *qmin, int32_t *qmax) {
  switch (dtype) {
    case Q8RT_DTYPE_UINT8:
      *qmin = 0;
      *qmax = 255;
      return;
    case Q8RT_DTYPE_INT8:
      *qmin = -128;
      *qmax = 127;
      return;
    case Q8RT_DTYPE_UINT16:
    case Q8RT_DTYPE_FLOAT16: /* its bits, as TensorProto.int32_data holds them */
      *qmin = 0;
      *qmax = 65535;
      return;
    case Q8RT_DTYPE_INT16:
      *qmin = -32768;
      *qmax = 32767;
      return;
    case Q8RT_DTYPE_BOOL:
      *qmin = 0;
      *qmax = 1;
      return;
    default:
      *qmin = INT32_MIN;
      *qmax = INT32_MAX;
      return;
  }
}

/* The definitions are the element functions of the f16-f32-vcvt / f32-f16-vcvt kernel families. */
float q8rt_f16_to_f32(uint16_t h) { return q8rt_f16_f32_element(h); }

uint16_t q8rt_f32_to_f16(float f) { return q8rt_f32_f16_element(f); }

bool q8rt_shape_elements(const int64_t *dims, int rank, int64_t *count) {
  /* The dims other than 0 multiply to at most Q8RT_MAX_ELEMENTS too: an empty tensor's other dims
   * still make its strides ([0, 2^62, 4] overflowed Reduce's, Transpose's, Slice's, ...). */
  int64_t n = 1;
  bool empty = false;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0) return false;
    if (dims[i] == 0) {
      empty = true;
      continue;
    }
    if (!q8rt_mul_i64(n, dims[i], &n) || n > Q8RT_MAX_ELEMENTS) return false;
  }
  *count = empty ? 0 : n;
  return true;
}

/* ---- allocation ---------------------------------------------------------------------------- */

/* Blocks of at least Q8RT_HUGE_PAGE_BYTES (a large model's packed weights, a session's workspace)
 * start on a 2 MiB boundary and are offered to the kernel for transparent huge pages (Linux
 * MADV_HUGEPAGE; a hint: with THP off, or elsewhere, they are ordinary pages). Streams through
 * megabytes of weights then miss the TLB once per 2 MiB instead of once per 4 KiB: CRNN's LSTM
 * reads its 4 MiB R 58 times a run, W and the QGemm's 8 MB once (LSTM step 4.42 -> 4.03 ms at 1
 * thread, ~6% of the model). Only the whole 2 MiB pages inside the block take huge pages (the
 * tail stays 4 KiB pages), and the padding before an aligned start is never touched, so the
 * resident memory stays what the block uses. */
#define Q8RT_HUGE_PAGE_BYTES ((size_t)2 << 20)

static void *default_alloc(void *ud, size_t size, size_t alignment) {
  (void)ud;
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
#ifdef MADV_HUGEPAGE
  const int huge = size >= Q8RT_HUGE_PAGE_BYTES && alignment <= Q8RT_HUGE_PAGE_BYTES;
  if (huge) alignment = Q8RT_HUGE_PAGE_BYTES;
#endif
  void *p = NULL;
  if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
#ifdef MADV_HUGEPAGE
  if (huge) (void)madvise(p, size & ~(Q8RT_HUGE_PAGE_BYTES - 1), MADV_HUGEPAGE);
#endif
  return p;
}

static void default_free(void *ud, void *ptr, size_t size) {
  (void)ud;
  (void)size;
  free(ptr);
}

static const q8rt_allocator g_default_allocator = {default_alloc, default_free, NULL};

const q8rt_allocator *q8rt_default_allocator(void) { return &g_default_allocator; }

void *q8rt_alloc(const q8rt_allocator *a, size_t size, size_t alignment) {
  if (alignment == 0) alignment = 16;
  return a->alloc(a->user_data, size, alignment);
}

void *q8rt_calloc(const q8rt_allocator *a, size_t count, size_t elem_size) {
  size_t n;
  if (!q8rt_mul_size(count, elem_size, &n)) return NULL;
  void *p = q8rt_alloc(a, n, 16);
  if (p != NULL) memset(p, 0, n);
  return p;
}

void q8rt_free(const q8rt_allocator *a, void *ptr, size_t size) {
  if (ptr != NULL) a->free(a->user_data, ptr, size);
}

/* ---- meter --------------------------------------------------------------------------------- */

bool q8rt_meter_charge(q8rt_meter *m, size_t size) {
  size_t cur = atomic_load_explicit(&m->used, memory_order_relaxed), next;
  do {
    if (!q8rt_add_size(cur, size, &next) || (m->limit != 0 && next > m->limit)) {
      atomic_store_explicit(&m->refused, size, memory_order_relaxed);
      return false;
    }
  } while (!atomic_compare_exchange_weak_explicit(&m->used, &cur, next, memory_order_relaxed, memory_order_relaxed));
  size_t peak = atomic_load_explicit(&m->peak, memory_order_relaxed);
  while (next > peak &&
         !atomic_compare_exchange_weak_explicit(&m->peak, &peak, next, memory_order_relaxed, memory_order_relaxed)) {
  }
  return true;
}

void q8rt_meter_release(q8rt_meter *m, size_t size) { atomic_fetch_sub_explicit(&m->used, size, memory_order_relaxed); }

static void *meter_alloc(void *ud, size_t size, size_t alignment) {
  q8rt_meter *m = ud;
  if (!q8rt_meter_charge(m, size)) return NULL;
  void *p = m->under.alloc(m->under.user_data, size, alignment);
  if (p == NULL) q8rt_meter_release(m, size);
  return p;
}

static void meter_free(void *ud, void *ptr, size_t size) {
  q8rt_meter *m = ud;
  m->under.free(m->under.user_data, ptr, size);
  q8rt_meter_release(m, size);
}

void q8rt_meter_init(q8rt_meter *m, const q8rt_allocator *under, size_t limit) {
  m->under = *under;
  m->limit = limit;
  atomic_init(&m->used, 0);
  atomic_init(&m->peak, 0);
  atomic_init(&m->refused, 0);
  m->iface.alloc = meter_alloc;
  m->iface.free = meter_free;
  m->iface.user_data = m;
}

q8rt_status q8rt_meter_failure(const q8rt_meter *m, q8rt_status st, const char *what, q8rt_error *err) {
  const size_t refused = atomic_load(&m->refused);
  if (st == Q8RT_OK || refused == 0) return st;
  char was[200] = "";
  if (err != NULL) {
    memcpy(was, err->message, sizeof(was) - 1);
    was[sizeof(was) - 1] = '\0';
  }
  return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY,
                   "%s exceeds its memory limit of %zu bytes (%zu in use, %zu more requested); the step that failed "
                   "said: %s",
                   what, m->limit, (size_t)atomic_load(&m->used), refused, was);
}

/* ---- pool ---------------------------------------------------------------------------------- */

struct q8rt_pool_chunk {
  q8rt_pool_chunk *next;
  size_t size; /* bytes including this header */
  size_t used;
};

#define POOL_CHUNK_MIN 16384

void q8rt_pool_init(q8rt_pool *pool, const q8rt_allocator *allocator) {
  pool->allocator = allocator;
  pool->head = NULL;
  pool->used_bytes = 0;
}

void *q8rt_pool_alloc(q8rt_pool *pool, size_t size, size_t alignment) {
  if (alignment < 16) alignment = 16;
  q8rt_pool_chunk *c = pool->head;
  if (c != NULL) {
    size_t off = (c->used + alignment - 1) & ~(alignment - 1);
    if (off <= c->size && size <= c->size - off) {
      c->used = off + size;
      void *p = (char *)c + off;
      memset(p, 0, size);
      return p;
    }
  }
  size_t header = (sizeof(q8rt_pool_chunk) + 63) & ~(size_t)63;
  size_t need;
  if (!q8rt_add_size(size, header + alignment, &need)) return NULL;
  size_t chunk_size = need < POOL_CHUNK_MIN ? POOL_CHUNK_MIN : need;
  c = q8rt_alloc(pool->allocator, chunk_size, 64);
  if (c == NULL) return NULL;
  c->next = pool->head;
  c->size = chunk_size;
  c->used = header;
  pool->head = c;
  pool->used_bytes += chunk_size;
  size_t off = (c->used + alignment - 1) & ~(alignment - 1);
  c->used = off + size;
  void *p = (char *)c + off;
  memset(p, 0, size);
  return p;
}

void *q8rt_pool_alloc_own(q8rt_pool *pool, size_t size, size_t alignment) {
  if (alignment < 16) alignment = 16;
  const size_t header = (sizeof(q8rt_pool_chunk) + 63) & ~(size_t)63;
  size_t need;
  if (!q8rt_add_size(size, header + alignment, &need)) return NULL;
  q8rt_pool_chunk *c = q8rt_alloc(pool->allocator, need, 64);
  if (c == NULL) return NULL;
  c->size = need;
  c->used = need; /* full: later allocations never share it */
  /* behind the head, which stays the chunk small allocations are cut from */
  if (pool->head != NULL) {
    c->next = pool->head->next;
    pool->head->next = c;
  } else {
    c->next = NULL;
    pool->head = c;
  }
  pool->used_bytes += need;
  void *p = (char *)c + ((header + alignment - 1) & ~(alignment - 1));
  memset(p, 0, size);
  return p;
}

void q8rt_pool_release(q8rt_pool *pool, void *p) {
  if (p == NULL) return;
  for (q8rt_pool_chunk **link = &pool->head; *link != NULL; link = &(*link)->next) {
    q8rt_pool_chunk *c = *link;
    if ((char *)p > (char *)c && (char *)p < (char *)c + c->size) {
      *link = c->next;
      pool->used_bytes -= c->size;
      q8rt_free(pool->allocator, c, c->size);
      return;
    }
  }
}

void *q8rt_pool_array(q8rt_pool *pool, size_t count, size_t elem_size) {
  size_t n;
  if (!q8rt_mul_size(count, elem_size, &n)) return NULL;
  return q8rt_pool_alloc(pool, n ? n : 1, 16);
}

char *q8rt_pool_strndup(q8rt_pool *pool, const char *s, size_t n) {
  char *d = q8rt_pool_alloc(pool, n + 1, 1);
  if (d == NULL) return NULL;
  if (n) memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *q8rt_pool_strdup(q8rt_pool *pool, const char *s) {
  return q8rt_pool_strndup(pool, s ? s : "", s ? strlen(s) : 0);
}

void q8rt_pool_free(q8rt_pool *pool) {
  q8rt_pool_chunk *c = pool->head;
  while (c != NULL) {
    q8rt_pool_chunk *next = c->next;
    q8rt_free(pool->allocator, c, c->size);
    c = next;
  }
  pool->head = NULL;
  pool->used_bytes = 0;
}
