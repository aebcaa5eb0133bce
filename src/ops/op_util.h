/* Helpers shared by op front-ends: broadcasting, element access by dtype, axis handling. */
#ifndef Q8RT_OP_UTIL_H
#define Q8RT_OP_UTIL_H

#include "f32-gemm/f32-gemm.h"
#include "f32-vbinary/f32-vbinary.h"
#include "f32-vtranscend/f32-vtranscend.h"
#include "f32-vunary/f32-vunary.h"
#include "s32-f32-vcvt/s32-f32-vcvt.h"
#include "op.h"
#include "q8rt-isa.h"

/* Whether a kernel-list entry (kernels/<family>/<family>.inc) for instruction set `isa` may run:
 * the scalar twin always; another when the CPU has it and the backend allows it (reference: none;
 * a forced avx2: AVX2 kernels only; the others: any). */
static inline bool op_isa_usable(uint32_t isa, uint32_t cpu_isa, q8rt_backend backend) {
  if (isa == Q8RT_ISA_SCALAR) return true;
  if ((cpu_isa & isa) != isa || backend == Q8RT_BACKEND_REFERENCE) return false;
  return backend != Q8RT_BACKEND_AVX2 || isa == Q8RT_ISA_AVX2;
}

/* The index of the first usable line (op_isa_usable) of a kernel table read from an .inc list: an
 * array of structs with a uint32_t member `isa`, `stride` bytes apart. Every list ends with a line
 * that is always usable (the scalar twin), so the search stops there. */
static inline size_t op_first_usable(const uint32_t *first_isa, size_t stride, uint32_t cpu_isa, q8rt_backend backend) {
  const char *p = (const char *)first_isa;
  size_t i = 0;
  while (!op_isa_usable(*(const uint32_t *)(p + i * stride), cpu_isa, backend)) i++;
  return i;
}
#define OP_FIRST_USABLE(table, cpu_isa, backend) \
  op_first_usable(&(table)[0].isa, sizeof((table)[0]), (cpu_isa), (backend))

/* Numpy-style (multidirectional) broadcasting of n shapes into *out (rank = max rank; a dim of
 * -1 stays -1 unless another input fixes it). Fails naming the node when dims disagree. */
q8rt_status op_broadcast_shapes(const op_node *n, const op_shape *const *in, int count, op_shape *out, q8rt_error *err);

/* Element strides of `in` aligned to `out` (right-aligned; 0 where `in` broadcasts). */
void op_broadcast_strides(const op_shape *in, const op_shape *out, int64_t strides[Q8RT_MAX_RANK]);

/* The broadcast walk of out = f(a, b) as rows: out's size-1 dims are dropped and a dim is merged
 * into the next outer one where both operands continue it (stride * dim equals the outer stride:
 * contiguous or broadcast alike). Fills dims and the element strides sa, sb of the merged dims,
 * innermost last; returns the merged rank (>= 1: [1] with strides 0 when every dim is 1). */
int op_broadcast_merge(const op_shape *a, const op_shape *b, const op_shape *out, int64_t dims[Q8RT_MAX_RANK],
                       int64_t sa[Q8RT_MAX_RANK], int64_t sb[Q8RT_MAX_RANK]);

/* The numeric types (float32 and the 8/16/32/64-bit integers: what the arithmetic and comparison
 * ops take) as X(dtype, suffix, C type), so that an op's per-type kernels are defined and picked
 * from the one list: `switch (t) { OP_NUMERIC_TYPES(CASE) }`. */
/* clang-format off */
#define OP_NUMERIC_TYPES(X)           \
  X(Q8RT_DTYPE_FLOAT32, f32, float)   \
  X(Q8RT_DTYPE_INT64, i64, int64_t)   \
  X(Q8RT_DTYPE_INT32, i32, int32_t)   \
  X(Q8RT_DTYPE_INT16, i16, int16_t)   \
  X(Q8RT_DTYPE_UINT16, u16, uint16_t) \
  X(Q8RT_DTYPE_INT8, i8, int8_t)      \
  X(Q8RT_DTYPE_UINT8, u8, uint8_t)
/* clang-format on */

static inline bool op_dtype_is_numeric(q8rt_dtype t) {
  switch (t) {
#define OP_NUMERIC_CASE_(DT, SUF, T) case DT:
    OP_NUMERIC_TYPES(OP_NUMERIC_CASE_) return true;
#undef OP_NUMERIC_CASE_
    default: return false;
  }
}

/* Number of elements of a concrete shape (0 for rank -1). */
size_t op_shape_count(const op_shape *s);
/* Same rank, element type and dims. */
bool op_shape_same(const op_shape *a, const op_shape *b);
/* "[d0, d1, ...]" into buf (truncated to size). */
void op_shape_text(const op_shape *s, char *buf, size_t size);
/* [N, S..., C] -> [N, C, S...] in place (rank >= 3; other ranks unchanged): the NCHW shape of a
 * channels-last tensor. */
void op_shape_nchw_of_nhwc(op_shape *s);
/* The channels-last position of NCHW axis `axis` (normalized) for rank `rank` >= 3. */
int op_axis_nhwc(int axis, int rank);

/* One step of a row-major walk over `rank` dims: advances the multi-index idx and the element
 * offset *off (stride str[d] per dim) to the next element, wrapping a finished dim back to 0.
 * Returns false after the last element (idx and *off are then back at 0). */
static inline bool op_index_next(int rank, const int64_t *dims, const int64_t *str, int64_t *idx, size_t *off) {
  for (int d = rank - 1; d >= 0; d--) {
    idx[d]++;
    *off += (size_t)str[d];
    if (idx[d] < dims[d]) return true;
    *off -= (size_t)(str[d] * idx[d]);
    idx[d] = 0;
  }
  return false;
}

/* Steps through the batch dims of a batched op (MatMul and its quantized forms) in C order, keeping
 * two input offsets that advance by their own batch strides (0 where that input broadcasts). The
 * dims and strides are read, not copied: they must outlive the iterator. */
typedef struct op_batch_iter {
  int rank;
  const int64_t *dims, *sa, *sb;
  int64_t idx[Q8RT_MAX_RANK];
  size_t oa, ob; /* the current offsets of inputs A and B */
} op_batch_iter;
void op_batch_iter_init(op_batch_iter *it, int rank, const int64_t *dims, const int64_t *sa, const int64_t *sb);
void op_batch_iter_next(op_batch_iter *it);
/* To batch `index` (in [0, product of dims)) directly, for batches run out of order by threads. */
void op_batch_iter_seek(op_batch_iter *it, size_t index);

/* Up to three operands broadcast to one output, with size-1 dims dropped and neighbouring dims
 * merged where every operand stays contiguous (or stays broadcast), so that the innermost span is
 * as long as possible. Elementwise ops with 2 or 3 inputs (comparisons, Where, PRelu) walk it
 * with op_bcast_run, which calls row(ctx, n, src, stride, dst) per innermost span: n elements,
 * src[k] advancing by stride[k] elements (0: broadcast), dst contiguous. */
typedef struct op_bcast_geom {
  int rank, count; /* merged rank (>= 1), operands */
  int64_t dims[Q8RT_MAX_RANK];
  int64_t s[3][Q8RT_MAX_RANK];
  size_t total;
} op_bcast_geom;
void op_bcast_geom_init(op_bcast_geom *g, const op_shape *const *in, int count, const op_shape *out);
typedef void (*op_bcast_row_fn)(const void *ctx, size_t n, const void *const *src, const size_t *stride, void *dst);
void op_bcast_run(const op_bcast_geom *g, op_bcast_row_fn row, const void *ctx, const void *const *src,
                  const size_t *esize, void *dst, size_t esy);

/* Normalize an axis in [-rank, rank) to [0, rank); false if out of range. */
/* Double -> integer as x86-64's cvttsd2si (and ORT on x86): truncation; NaN and out of range give
   INT_MIN. Every float -> integer conversion of model-supplied values goes through these: a plain
   C cast of an out-of-range value is undefined behaviour. Floats convert exactly to double. */
static inline int64_t op_f64_to_i64(double v) {
  return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? (int64_t)v : INT64_MIN;
}
static inline int32_t op_f64_to_i32(double v) {
  return (v > -2147483649.0 && v < 2147483648.0) ? (int32_t)v : INT32_MIN;
}

static inline bool op_normalize_axis(int64_t axis, int rank, int64_t *out) {
  if (axis < -rank || axis >= rank) return false;
  *out = axis < 0 ? axis + rank : axis;
  return true;
}

/* Read element i of a tensor of `dtype` as double / int64 (for small constant tensors). */
double op_load_f64(const void *data, q8rt_dtype dtype, size_t i);
int64_t op_load_i64(const void *data, q8rt_dtype dtype, size_t i);

/* A scalar constant input (scale, zero point) as float / int32; fails naming node and input. */
q8rt_status op_const_scale(const ir_graph *g, const ir_node *n, int input, const char *what, float *out,
                           q8rt_error *err);
/* Zero point: omitted -> 0 with *dtype left as given; else its value and dtype (u8/s8). */
q8rt_status op_const_zero_point(const ir_graph *g, const ir_node *n, int input, const char *what, int32_t *out,
                                q8rt_dtype *dtype, q8rt_error *err);

/* ---- splitting a step's work over the session's pool ------------------------------------------
 * Work items are fixed by the sizes alone (never by the thread count), so any thread count gives
 * the same bytes. A grain is the work of a couple of microseconds on the op's kernel; a step of
 * fewer than OP_MIN_GRAINS grains runs on the caller without touching the pool: below ~10 us of
 * work, handing half to another core (publishing the region, the worker's claims, the output's
 * cache lines moving back to the caller for the next step) costs about what it saves. */
#define OP_MIN_GRAINS 8

/* fn(arg, begin, end) over consecutive chunks covering [0, n): at least `grain` elements per
 * chunk (a multiple of 64 when grain >= 64), at most OP_MAX_CHUNKS chunks. */
#define OP_MAX_CHUNKS 64
typedef void (*op_range_fn)(void *arg, size_t begin, size_t end);
void op_parallel_range(const op_exec_ctx *ctx, size_t n, size_t grain, op_range_fn fn, void *arg);

/* fn(arg, i) for i in [0, n) where each item is worth `cost` units of work and a grain `grain`
 * units: items run on the pool when n >= 2 and n * cost >= OP_MIN_GRAINS * grain, else on the
 * caller in order. */
void op_parallel_items(const op_exec_ctx *ctx, size_t n, size_t cost, size_t grain, q8rt_task_fn fn, void *arg);

/* Whether op_parallel_items with these arguments would hand the items to the pool now (it has
 * workers, the work is large enough, and the pool is not in a solo stretch): for ops that pay
 * for a finer split (a copy per block) only when it can run on several threads. */
int op_would_split(const op_exec_ctx *ctx, size_t n, size_t cost, size_t grain);

/* The spans of a merged broadcast geometry (rank dims, innermost last, element strides sa/sb of
 * two inputs) covering output elements [begin, end): fn(arg, off_a, off_b, off_y, len), where
 * off_* are the element offsets of the span's first element and len <= dims[rank - 1]. */
typedef void (*op_span_fn)(void *arg, size_t off_a, size_t off_b, size_t off_y, size_t len);
void op_span_walk(int rank, const int64_t *dims, const int64_t *sa, const int64_t *sb, size_t begin, size_t end,
                  op_span_fn fn, void *arg);

/* An f32-gemm variant (kernels/f32-gemm/f32-gemm.inc): the register-tiled float GEMM on B packed
 * in panels of nr columns. */
typedef struct op_f32_gemm_variant {
  uint32_t isa;
  q8rt_f32_gemm_ukernel_fn fn;
  size_t nr, mr;
  const char *name;
} op_f32_gemm_variant;

/* The first variant of f32-gemm.inc this CPU and backend allow (the list ends with a portable
 * tile); NULL for the reference backend, whose callers run the f32-vfmac row kernel: the same fma
 * chains, the definition. */
const op_f32_gemm_variant *op_f32_gemm_pick(const op_prepare_ctx *ctx);

/* The f32-vfmac row kernel on the first line of f32-vfmac.inc this CPU and backend allow (the list
 * ends with the scalar twin; every variant gives the bits of fmaf); *name (for --explain) and *isa
 * (its ISA flag) when not NULL. */
q8rt_f32_vfmac_ukernel_fn op_f32_vfmac_pick(const op_prepare_ctx *ctx, const char **name, uint32_t *isa);

/* The f32-vunary kernel of `op` on the first line of f32-vunary.inc this CPU and backend allow (the
 * list ends with the scalar twin, the reference backend's); *name (if not NULL) for --explain. */
q8rt_f32_vunary_ukernel_fn op_f32_vunary_pick(const op_prepare_ctx *ctx, enum q8rt_f32_vunary_op op, const char **name);
/* The same for f32-vtranscend (exp, log, erf: q8rt_expf/q8rt_logf/q8rt_erff to the bit). */
q8rt_f32_vtranscend_ukernel_fn op_f32_vtranscend_pick(const op_prepare_ctx *ctx, enum q8rt_f32_vtranscend_op op,
                                                      const char **name);
/* The same for the Elu and Selu of f32-vtranscend. */
q8rt_f32_velu_ukernel_fn op_f32_velu_pick(const op_prepare_ctx *ctx, enum q8rt_f32_velu_op op, const char **name);

/* The f32-vbinary kernel of op (the order of Q8RT_F32_VBINARY_OPS) in form OP_VBIN_VV (y = a op b),
 * OP_VBIN_VC (y = a op b[0]) or OP_VBIN_RVC (y = b[0] op a), from the first line of
 * f32-vbinary.inc this CPU and backend allow (the list ends with the scalar twins). */
enum { OP_VBIN_ADD, OP_VBIN_SUB, OP_VBIN_MUL, OP_VBIN_DIV, OP_VBIN_MAX, OP_VBIN_MIN, OP_VBIN_PRELU };
enum { OP_VBIN_VV, OP_VBIN_VC, OP_VBIN_RVC };
q8rt_f32_vbinary_ukernel_fn op_f32_vbinary_kernel(uint32_t isa, q8rt_backend backend, int op, int form);
/* Its name for --explain (no "q8rt_" prefix). */
const char *op_f32_vbinary_name(uint32_t isa, q8rt_backend backend, int op, int form);
/* The whole f32-vbinary table of that line (every op and form). */
const q8rt_f32_vbinary_set *op_f32_vbinary_set(uint32_t isa, q8rt_backend backend);

/* The first s32-f32-vcvt kernel (s32-f32-vcvt.inc) this CPU and backend allow: the output stage
 * of ConvIntegerToFloat and MatMulIntegerToFloat. */
q8rt_s32_f32_vcvt_ukernel_fn op_s32_f32_vcvt_pick(const op_prepare_ctx *ctx);

/* Input 4 of ConvIntegerToFloat / MatMulIntegerToFloat, the scale: one float32, either a constant
 * (*scale) or computed at run (*dynamic = 1); fails naming the node otherwise. */
q8rt_status op_to_float_scale(const ir_graph *g, const ir_node *n, float *scale, int *dynamic, q8rt_error *err);

/* Packed constants shared between the steps of one model: a constant tensor packed the same way
 * (kind, three sizes) by several steps is packed once (an LSTM exported cell by cell repeats its
 * Gemm weights at every time step: 20 copies of 6.5 MiB each). Packed data is read-only after
 * prepare; the entries live in the model's pool. */
typedef struct op_pack_entry {
  struct op_pack_entry *next;
  const void *src;  /* the constant's data */
  const char *kind; /* the packing (a string literal of the packer) */
  size_t d[3];
  void *packed;
} op_pack_entry;

void *op_pack_find(const op_prepare_ctx *ctx, const void *src, const char *kind, size_t d0, size_t d1, size_t d2);
/* Records packed (the caller has filled it); a failed record only costs sharing. */
void op_pack_keep(op_prepare_ctx *ctx, const void *src, const char *kind, size_t d0, size_t d1, size_t d2,
                  void *packed);

#endif
