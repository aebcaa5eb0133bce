/* Internal helpers shared by every layer: errors, allocation, checked arithmetic. */
#ifndef Q8RT_COMMON_H
#define Q8RT_COMMON_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "q8rt.h"

#if defined(__GNUC__)
#define Q8RT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define Q8RT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define Q8RT_PRINTF(f, a)
#define Q8RT_UNLIKELY(x) (x)
#endif

/* Record a failure in `err` (which may be NULL) and return `status`. */
q8rt_status q8rt_fail(q8rt_error *err, q8rt_status status, const char *fmt, ...) Q8RT_PRINTF(3, 4);

/* ---- allocation ---------------------------------------------------------------------------- */

/* The allocator every internal allocation goes through; never NULL inside the library. */
const q8rt_allocator *q8rt_default_allocator(void);

void *q8rt_alloc(const q8rt_allocator *a, size_t size, size_t alignment);
void *q8rt_calloc(const q8rt_allocator *a, size_t count, size_t elem_size); /* zeroed, 16-aligned, overflow-checked */
void q8rt_free(const q8rt_allocator *a, void *ptr, size_t size);

/* An accounting allocator in front of the caller's: what the library allocates through `iface`
 * is counted in `used` (high-water mark in `peak`) and passed to `under`. With a limit, an
 * allocation that would take `used` past it fails without reaching `under` and is recorded in
 * `refused` (so the failing call can say that the limit, not the system, ran out). The counters
 * are atomic: a session's XNNPACK steps and pool may allocate from other threads. The meter must
 * not move after q8rt_meter_init (iface.user_data points at it). */
typedef struct q8rt_meter {
  q8rt_allocator iface;
  q8rt_allocator under;
  size_t limit; /* 0: none */
  _Atomic size_t used, peak, refused;
} q8rt_meter;

void q8rt_meter_init(q8rt_meter *m, const q8rt_allocator *under, size_t limit);
/* Count `size` bytes obtained outside iface (the object holding the meter); false if over the limit. */
bool q8rt_meter_charge(q8rt_meter *m, size_t size);
void q8rt_meter_release(q8rt_meter *m, size_t size);
/* A failure (st != OK) after the meter refused an allocation: rewritten as OUT_OF_MEMORY naming
 * `what` ("the model", "the session"), the limit and the failing step's own message (whatever
 * that step reported: "out of memory", a decoding budget, ...). Otherwise st unchanged. */
q8rt_status q8rt_meter_failure(const q8rt_meter *m, q8rt_status st, const char *what, q8rt_error *err);

/* A bump pool: many small allocations freed together (IR strings, attributes, plan records).
 * Chunks come from the allocator; pool_free releases them all. */
typedef struct q8rt_pool_chunk q8rt_pool_chunk;
typedef struct q8rt_pool {
  const q8rt_allocator *allocator;
  q8rt_pool_chunk *head;
  size_t used_bytes; /* total bytes obtained from the allocator */
} q8rt_pool;

void q8rt_pool_init(q8rt_pool *pool, const q8rt_allocator *allocator);
void *q8rt_pool_alloc(q8rt_pool *pool, size_t size, size_t alignment);  /* zeroed; NULL on failure */
void *q8rt_pool_array(q8rt_pool *pool, size_t count, size_t elem_size); /* zeroed, overflow-checked */
char *q8rt_pool_strdup(q8rt_pool *pool, const char *s);
/* A zeroed block in a chunk of its own, which q8rt_pool_release(pool, p) can give back before the
 * pool is freed (large tensors whose data is replaced by a packed copy). NULL on failure. */
void *q8rt_pool_alloc_own(q8rt_pool *pool, size_t size, size_t alignment);
/* Frees the chunk of p, a block from q8rt_pool_alloc_own of this pool; NULL: no-op. */
void q8rt_pool_release(q8rt_pool *pool, void *p);
char *q8rt_pool_strndup(q8rt_pool *pool, const char *s, size_t n);
void q8rt_pool_free(q8rt_pool *pool);

/* ---- checked arithmetic -------------------------------------------------------------------- */

static inline bool q8rt_mul_size(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool q8rt_add_size(size_t a, size_t b, size_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool q8rt_mul_i64(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool q8rt_add_i64(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }

/* Largest element count any tensor may have; keeps every byte size well inside size_t and
 * int64 on 64-bit and 32-bit targets. */
#define Q8RT_MAX_ELEMENTS ((int64_t)1 << 31)

/* Product of dims[0..rank) into *count; false if any dim is negative or the product of the
 * dims other than 0 exceeds Q8RT_MAX_ELEMENTS (so an empty tensor's strides fit as well). */
bool q8rt_shape_elements(const int64_t *dims, int rank, int64_t *count);

/* True for the dtypes q8rt_dtype lists (size > 0). */
bool q8rt_dtype_known(int32_t dtype);
/* Name of an ONNX element type number for messages ("float32", "float16", "float8e4m3fn", ...;
 * "unknown" past the table): the one table; q8rt_dtype_name is its q8rt subset. */
const char *q8rt_onnx_type_name(int32_t data_type);
static inline bool q8rt_dtype_is_8bit(int32_t t) { return t == Q8RT_DTYPE_UINT8 || t == Q8RT_DTYPE_INT8; }
void q8rt_dtype_range(q8rt_dtype dtype, int32_t *qmin, int32_t *qmax);

/* float16 (IEEE binary16 bits) <-> float32. Widening is exact (NaN payloads kept); narrowing
 * rounds to nearest even, overflows to inf from 65520 on, gives subnormals below 2^-14, and keeps
 * a NaN's sign and the top 10 bits of its payload with the quiet bit set (as F16C's vcvtps2ph and
 * NumPy do), so a float16 NaN survives the round trip. */
float q8rt_f16_to_f32(uint16_t h);
uint16_t q8rt_f32_to_f16(float f);

/* Little-endian loads from byte streams (protobuf raw_data is little-endian). */
static inline uint32_t q8rt_load_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif /* Q8RT_COMMON_H */
