/*
 * q8rt — an embeddable int8 inference runtime for quantized ONNX models.
 *
 * This is the only public header. Typical use:
 *
 *     q8rt_model *model = NULL;
 *     q8rt_session *session = NULL;
 *     q8rt_error err;
 *     if (q8rt_model_load_file("model.onnx", NULL, &model, &err) != Q8RT_OK) { puts(err.message); ... }
 *     q8rt_session_create(model, NULL, &session, &err);
 *     q8rt_session_set_input(session, 0, shape, rank, data, nbytes, &err);
 *     q8rt_session_run(session, &err);
 *     q8rt_session_get_output(session, 0, &info, &out, &out_bytes, &err);
 *     q8rt_session_free(session);
 *     q8rt_model_free(model);
 *
 * Conventions
 * - Every fallible call returns a q8rt_status. Its last parameter is an optional q8rt_error* that,
 *   on failure, receives the status and a message naming the node, attribute or field at fault.
 *   Pass NULL when the message is not wanted. On success the error is left untouched.
 * - Objects come in pairs *_create / *_free (or *_load / *_free); *_free(NULL) is a no-op.
 * - A q8rt_model is immutable once loaded and may be shared by any number of threads. A
 *   q8rt_session belongs to one thread at a time; create one session per thread.
 * - Options structs begin with their own size (set .size = sizeof(struct)); call the matching
 *   *_options_init() to fill the defaults. Passing NULL options means all defaults.
 * - The library never prints, never calls abort() or exit(), and keeps no global mutable state
 *   beyond a one-time, thread-safe CPU feature detection.
 * - Memory comes from the allocator in the options (default: malloc/free), counted per model and
 *   per session and optionally capped (see "Memory accounting"). A run allocates nothing: all
 *   buffers are planned when input shapes are bound.
 */
#ifndef Q8RT_H
#define Q8RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define Q8RT_VERSION_MAJOR 0
#define Q8RT_VERSION_MINOR 1
#define Q8RT_VERSION_PATCH 0
#define Q8RT_VERSION_STRING "0.1.0"
#define Q8RT_VERSION_NUMBER (Q8RT_VERSION_MAJOR * 10000 + Q8RT_VERSION_MINOR * 100 + Q8RT_VERSION_PATCH)

#if defined(_WIN32) && defined(Q8RT_BUILD_SHARED)
#define Q8RT_API __declspec(dllexport)
#elif defined(__GNUC__)
#define Q8RT_API __attribute__((visibility("default")))
#else
#define Q8RT_API
#endif

/* Maximum tensor rank q8rt handles. Models with higher-rank tensors are refused at load. */
#define Q8RT_MAX_RANK 8

typedef enum q8rt_status {
  Q8RT_OK = 0,
  Q8RT_ERROR_INVALID_ARGUMENT = 1, /* a caller mistake: NULL pointer, bad index, wrong size */
  Q8RT_ERROR_INVALID_MODEL = 2,    /* the model bytes are not a valid ONNX model */
  Q8RT_ERROR_UNSUPPORTED = 3,      /* valid ONNX that q8rt does not run (op, attribute, type) */
  Q8RT_ERROR_OUT_OF_MEMORY = 4,    /* the allocator failed or a configured budget was exceeded */
  Q8RT_ERROR_IO = 5,               /* a file could not be read */
  Q8RT_ERROR_SHAPE = 6,            /* an input's shape does not fit the model */
  Q8RT_ERROR_STATE = 7,            /* call out of order, e.g. output read before any run */
  Q8RT_ERROR_LIMIT = 8,            /* a run went past a configured cap (max_loop_iterations) */
} q8rt_status;

/* Filled by a failing call when the caller passes one. */
typedef struct q8rt_error {
  q8rt_status status;
  char message[512];
} q8rt_error;

/* The library's version as "MAJOR.MINOR.PATCH", e.g. "0.1.0" (static). Compare with
 * Q8RT_VERSION_STRING to detect a header/library mismatch; Q8RT_VERSION_NUMBER of the library is
 * q8rt_version_number(). */
Q8RT_API const char *q8rt_version(void);
/* MAJOR * 10000 + MINOR * 100 + PATCH of the library, e.g. 100 for 0.1.0. */
Q8RT_API int q8rt_version_number(void);

/* A short, static name for a status ("invalid model", ...). */
Q8RT_API const char *q8rt_status_string(q8rt_status status);

/* Element types. The values are those of ONNX TensorProto.DataType. */
typedef enum q8rt_dtype {
  Q8RT_DTYPE_UNDEFINED = 0,
  Q8RT_DTYPE_FLOAT32 = 1,
  Q8RT_DTYPE_UINT8 = 2,
  Q8RT_DTYPE_INT8 = 3,
  Q8RT_DTYPE_UINT16 = 4,
  Q8RT_DTYPE_INT16 = 5,
  Q8RT_DTYPE_INT32 = 6,
  Q8RT_DTYPE_INT64 = 7,
  Q8RT_DTYPE_BOOL = 9, /* one byte per element, 0 or 1 (Where conditions, comparisons, If) */
  /* IEEE 754 binary16 bits (uint16_t). Only a model's inputs and outputs have this type: q8rt
   * computes a float16 graph in float32, as ONNX Runtime's CPU provider does (float16 constants are
   * widened at load, exactly; an input is widened where the run starts; an output is rounded to
   * nearest even where it ends). */
  Q8RT_DTYPE_FLOAT16 = 10,
} q8rt_dtype;

/* "float32", "uint8", ...; "undefined" for anything else. */
Q8RT_API const char *q8rt_dtype_name(q8rt_dtype dtype);
/* Bytes per element, 0 for an unknown type. */
Q8RT_API size_t q8rt_dtype_size(q8rt_dtype dtype);

/* Which kernels a model may use. AUTO picks per node (the fastest exact kernel the CPU has, and
 * records why: q8rt_model_explain). The others force one backend for the convolutions and make a
 * load fail with Q8RT_ERROR_UNSUPPORTED, naming the node and the reason, where that backend cannot
 * run a node (or the CPU lacks the instructions). Ops without a kernel in the forced backend
 * (QuantizeLinear, layout transposes, ...) use the best portable kernel. */
typedef enum q8rt_backend {
  Q8RT_BACKEND_AUTO = 0,
  Q8RT_BACKEND_REFERENCE = 1, /* portable scalar kernels, the numerics reference */
  Q8RT_BACKEND_AVX2 = 2,      /* q8rt's exact AVX2 kernels (x86-64) */
  Q8RT_BACKEND_NEON = 3,      /* q8rt's exact NEON kernels (aarch64; i8mm/dot product where present) */
  Q8RT_BACKEND_XNNPACK = 4,   /* XNNPACK operators, where they are exact for the node */
  Q8RT_BACKEND_AVX512 = 5,    /* q8rt's AVX-512 VNNI kernels (x86-64 with AVX512-VNNI) */
} q8rt_backend;

Q8RT_API const char *q8rt_backend_name(q8rt_backend backend);

/* Allocator hook. alloc returns memory aligned to at least `alignment` (a power of two, at most
 * 4096) or NULL; free receives the pointer and the size it was allocated with. Both must be
 * thread-safe if models or sessions created with them are used from several threads. */
typedef struct q8rt_allocator {
  void *(*alloc)(void *user_data, size_t size, size_t alignment);
  void (*free)(void *user_data, void *ptr, size_t size);
  void *user_data;
} q8rt_allocator;

typedef struct q8rt_model_options {
  size_t size;                     /* sizeof(q8rt_model_options) */
  const q8rt_allocator *allocator; /* NULL: malloc/free. Must outlive the model. */
  q8rt_backend backend;            /* default AUTO */
  size_t max_model_bytes;          /* refuse bigger model files; default 1 GiB */
  size_t max_unpack_bytes;         /* memory budget for decoding the protobuf; default 4x the model size + 1 MiB */
  /* Folder that external-data paths are resolved against when loading from memory. NULL (the
   * default for memory loads) refuses external data. Loading from a path uses the model's folder.
   * External paths must be relative, without "..", and must not resolve (through symlinks)
   * outside that folder. The file is opened with the confinement checked by the kernel in the
   * same call (Linux openat2 with RESOLVE_BENEATH), so a path component swapped for a symlink
   * during the load cannot redirect it; where openat2 is missing (Linux before 5.6, other
   * systems) the path is opened one component at a time without following any symlink, and a
   * location that goes through a symlink is refused. */
  const char *external_data_dir;
  /* 1: run islands of elementwise ops on an 8-bit tensor node by node instead of as one 256-entry
   * table (the tables give the same bytes; this is for checking them, and slower). */
  int no_tables;
  /* Cap on the bytes the model holds (graph, constants, packed weights, plan, explain text) and
   * needs on the way while loading (the decoded protobuf; for q8rt_model_load_file also the file's
   * bytes), as counted at the allocator (see "Memory accounting" below). 0 (default): no cap.
   * A load that would exceed it fails with Q8RT_ERROR_OUT_OF_MEMORY and a message giving the
   * limit and the step that could not allocate. */
  size_t max_memory_bytes;
} q8rt_model_options;

Q8RT_API void q8rt_model_options_init(q8rt_model_options *options);

typedef struct q8rt_model q8rt_model;
typedef struct q8rt_session q8rt_session;

/* Load a model from a memory buffer. The buffer is not retained after the call returns. */
Q8RT_API q8rt_status q8rt_model_load_memory(const void *data, size_t size, const q8rt_model_options *options,
                                            q8rt_model **model, q8rt_error *error);
/* Load a model from a file. External data, if any, is read from the model's folder. */
Q8RT_API q8rt_status q8rt_model_load_file(const char *path, const q8rt_model_options *options, q8rt_model **model,
                                          q8rt_error *error);
Q8RT_API void q8rt_model_free(q8rt_model *model);

/* Describes a graph input or output. Pointers inside stay valid for the lifetime of the model
 * (for q8rt_model_* calls) or until the session is freed (for q8rt_session_* calls). */
typedef struct q8rt_tensor_info {
  const char *name;
  q8rt_dtype dtype;
  int rank;
  int64_t shape[Q8RT_MAX_RANK]; /* -1 where the dimension is symbolic and not bound yet */
  int has_quantization;         /* 1 when a per-tensor scale and zero point are known from the model */
  float scale;
  int32_t zero_point;
} q8rt_tensor_info;

Q8RT_API size_t q8rt_model_input_count(const q8rt_model *model);
Q8RT_API size_t q8rt_model_output_count(const q8rt_model *model);
Q8RT_API q8rt_status q8rt_model_input_info(const q8rt_model *model, size_t index, q8rt_tensor_info *info,
                                           q8rt_error *error);
Q8RT_API q8rt_status q8rt_model_output_info(const q8rt_model *model, size_t index, q8rt_tensor_info *info,
                                            q8rt_error *error);
/* Index of the input/output with that name, or -1. */
Q8RT_API int q8rt_model_find_input(const q8rt_model *model, const char *name);
Q8RT_API int q8rt_model_find_output(const q8rt_model *model, const char *name);

/* Metadata properties (ModelProto.metadata_props): string key/value pairs the producer attached,
 * e.g. the character list of a PP-OCR text recognizer under the key "character". The loader keeps
 * all of them (at most 4096 entries, their bytes within the model's unpack budget; a larger count,
 * an empty key or a key with a NUL byte fails the load with Q8RT_ERROR_INVALID_MODEL). Returned
 * strings are NUL-terminated, owned by the model and valid until q8rt_model_free. */
Q8RT_API size_t q8rt_model_metadata_count(const q8rt_model *model);
/* Entry `index` (in file order). `value_len` (optional) receives the value's length in bytes,
 * which tells a value holding NUL bytes apart from a shorter one. */
Q8RT_API q8rt_status q8rt_model_metadata_entry(const q8rt_model *model, size_t index, const char **key,
                                               const char **value, size_t *value_len, q8rt_error *error);
/* The value stored under `key`, or NULL when the model has no such entry (if a key appears more
 * than once, the last entry wins, as in ONNX Runtime). `value_len` is optional. */
Q8RT_API const char *q8rt_model_metadata(const q8rt_model *model, const char *key, size_t *value_len);

/* The execution plan, one line per step ("op node-name kernel: reason"), written into buf
 * (always NUL-terminated when buf_size > 0). Returns the length the full text needs, without the
 * NUL, so a first call with buf_size 0 sizes the buffer. */
Q8RT_API size_t q8rt_model_explain(const q8rt_model *model, char *buf, size_t buf_size);

typedef struct q8rt_session_options {
  size_t size;                     /* sizeof(q8rt_session_options) */
  const q8rt_allocator *allocator; /* NULL: the model's allocator */
  int threads;                     /* worker threads; 0 or 1 = run on the caller's thread */
  /* refuse shapes whose plan needs more; 0 = no limit. A Loop's body binds its own arena under
   * the same limit (each, when Loops nest); one it would exceed fails the run naming the Loop. A
   * Loop's scan outputs of a length known only at run live in buffers of the Loop's, outside the
   * arena: together they are held to this limit too. */
  size_t max_arena_bytes;
  /* 1: record time per step (q8rt_session_profile) and with threads > 1 how each step used them
   * (q8rt_session_profile_threads). Q8RT_PROFILE_SPLIT: the same, but every work item runs on the
   * caller's thread, timed, while the steps split their work as for `threads`: the serial part of
   * the plan and what `threads` threads could at best do with its regions, measured on one core
   * (slower than a normal run; outputs are the same bytes). */
  int profile;
  /* Cap on the bytes the session holds: arena, bookkeeping, thread pool, XNNPACK operators (see
   * "Memory accounting"). 0 (default): no cap. Creating the session or binding shapes that would
   * exceed it fails with Q8RT_ERROR_OUT_OF_MEMORY and a message giving the limit. */
  size_t max_memory_bytes;
  /* Cap on the iterations of any one Loop or Scan node in a run (its body's runs). A Loop that
   * would go on longer fails the run with Q8RT_ERROR_LIMIT naming the node, where ONNX Runtime
   * would keep going (a trip count of 2^62, or a condition that stays true); one whose scan
   * outputs are sized from a larger trip count, or a Scan over more positions (times its batch
   * entries), is refused when shapes are bound. The iterations of a Loop or Scan nested in
   * another's body count for the enclosing Loop too, so that nesting cannot multiply the cap: all
   * that a top-level Loop runs stays within it. 0 (default): Q8RT_DEFAULT_MAX_LOOP_ITERATIONS. */
  uint64_t max_loop_iterations;
} q8rt_session_options;

#define Q8RT_DEFAULT_MAX_LOOP_ITERATIONS 1000000u

Q8RT_API void q8rt_session_options_init(q8rt_session_options *options);

/* Create a session. If every input shape is static the arena is planned and allocated here;
 * otherwise on the first q8rt_session_set_input that binds the symbolic dimensions. */
Q8RT_API q8rt_status q8rt_session_create(const q8rt_model *model, const q8rt_session_options *options,
                                         q8rt_session **session, q8rt_error *error);
Q8RT_API void q8rt_session_free(q8rt_session *session);

/* Copy an input in. `shape` must match the model's static dimensions; symbolic ones are bound to
 * the values given. Binding a different shape than the previous one re-plans the arena (this
 * allocates, and the data of the other inputs must be set again); runs with unchanged shapes never
 * allocate. `nbytes` must equal the tensor's size. */
Q8RT_API q8rt_status q8rt_session_set_input(q8rt_session *session, size_t index, const int64_t *shape, int rank,
                                            const void *data, size_t nbytes, q8rt_error *error);

/* Bind the shape of an input without giving data (for models with several inputs with symbolic
 * dimensions: bind them all, then set or fill them). Re-plans once every input is concrete. */
Q8RT_API q8rt_status q8rt_session_set_input_shape(q8rt_session *session, size_t index, const int64_t *shape, int rank,
                                                  q8rt_error *error);

/* Zero-copy input: the arena buffer the input lives in, to be filled before q8rt_session_run.
 * All input shapes must be bound (static, or set by q8rt_session_set_input). */
Q8RT_API q8rt_status q8rt_session_input_buffer(q8rt_session *session, size_t index, void **data, size_t *nbytes,
                                               q8rt_error *error);

/* Run the plan on the current inputs. Allocates nothing, except for Loop and Scan nodes (see
 * q8rt_session_set_arena). */
Q8RT_API q8rt_status q8rt_session_run(q8rt_session *session, q8rt_error *error);

/* An output of the last run: its info (concrete shape) and a pointer into the session's arena,
 * valid until the next set_input, run or free. */
Q8RT_API q8rt_status q8rt_session_get_output(q8rt_session *session, size_t index, q8rt_tensor_info *info,
                                             const void **data, size_t *nbytes, q8rt_error *error);

/* Memory accounting. Each model and each session counts what it holds at its allocator: the
 * allocator of its options, or for a session without one the model's (the caller's allocator, or
 * malloc/free). q8rt_model_memory / q8rt_session_memory return the bytes held now; the
 * max_memory_bytes options cap them. Counted, and passed to the caller's allocator: everything
 * q8rt allocates (IR, constants, packed weights, plan, protobuf decoding, arena, q8rt's thread
 * pool) and XNNPACK's operators with their packed weights and indirection buffers — q8rt
 * initializes XNNPACK with an allocator that hands each of XNNPACK's allocations to the session
 * whose step is creating, setting up or deleting the operator.
 * Not counted (the remaining gap):
 * - pthreadpool's pool object, created with malloc for sessions with threads > 1 whose plan has
 *   XNNPACK steps (its API takes no allocator; a few cache lines per thread);
 * - thread stacks of both pools (mapped by the OS, threads - 1 per session);
 * - process-wide, once: cpuinfo's CPU tables and XNNPACK's initialization; if the application
 *   initialized XNNPACK itself before q8rt, XNNPACK keeps the application's allocator and its
 *   operators' memory is not counted either;
 * - XNNPACK allocations made outside any q8rt session (none in the XNNPACK version q8rt builds
 *   against) go to malloc and are counted process-wide by q8rt_unaccounted_bytes(). */
Q8RT_API size_t q8rt_model_memory(const q8rt_model *model);
Q8RT_API size_t q8rt_session_memory(const q8rt_session *session);
/* Bytes q8rt knows were allocated outside every allocator hook and are still held (see above). */
Q8RT_API size_t q8rt_unaccounted_bytes(void);

/* Bytes of activation memory the session's plan uses (after shapes are bound), 0 before. */
Q8RT_API size_t q8rt_session_arena_size(const q8rt_session *session);

/* Use caller-provided memory as the arena (aligned to 64 bytes, at least
 * q8rt_session_arena_size() bytes). The memory must outlive its use by the session; a later
 * shape change that needs more memory fails with Q8RT_ERROR_OUT_OF_MEMORY instead of allocating.
 * Not covered by it: a Loop's (or Scan's) body runs in a session of its own whose arena is
 * allocated through the session's allocator when the Loop binds (and again, larger, when a body
 * bound per iteration needs more), as are the buffers of scan outputs whose length only the run
 * finds; with such nodes a run may allocate (held to max_arena_bytes and max_memory_bytes). */
Q8RT_API q8rt_status q8rt_session_set_arena(q8rt_session *session, void *arena, size_t nbytes, q8rt_error *error);

/* Per-step timing of the last run, when the session was created with profile = 1. Fills up to
 * `capacity` entries and returns the number of steps. */
typedef struct q8rt_step_profile {
  const char *op_type;
  const char *node_name;
  const char *kernel;
  double milliseconds;
} q8rt_step_profile;

Q8RT_API size_t q8rt_session_profile(const q8rt_session *session, q8rt_step_profile *steps, size_t capacity);

#define Q8RT_PROFILE_SPLIT 2

/* How each step of the last run used the session's threads (profile set, threads > 1; zeros
 * otherwise). A region is one split of a step's work into items over the pool; a step with no
 * region ran on the caller alone. */
typedef struct q8rt_step_threads {
  size_t regions;      /* parallel regions the step opened */
  size_t items;        /* work items in them */
  size_t caller_items; /* of which the calling thread ran (the rest: workers) */
  double region_ms;    /* time inside the regions */
  /* Q8RT_PROFILE_SPLIT only: the regions' time on `threads` threads, from each item's time,
   * items claimed in order by whichever thread is free first (no overheads counted). */
  double ideal_ms;
} q8rt_step_threads;

/* Fills up to `capacity` entries (one per step, as q8rt_session_profile) and returns the number of
 * steps. */
Q8RT_API size_t q8rt_session_profile_threads(const q8rt_session *session, q8rt_step_threads *steps, size_t capacity);

/* How the session's runs used its threads (threads > 1), counted since the session was created
 * (across re-binds), successful runs only, the first run of each bind included. A session with a
 * pool times whole runs and runs each either shared (steps split over the pool) or alone (every
 * step on the calling thread, when sharing was measured slower: small models, a busy machine).
 * Inside shared runs, the pool itself runs regions on the caller alone for a while when workers
 * cost more than they bring (a worker descheduled holding items). Counting costs no clock read
 * of its own; available whatever the profile option. Only `runs` is counted with threads <= 1 or
 * with profile = Q8RT_PROFILE_SPLIT (no worker runs). */
typedef struct q8rt_run_stats {
  size_t runs;             /* successful runs */
  size_t shared_runs;      /* runs in shared mode */
  size_t alone_runs;       /* runs the session ran alone (runs = shared_runs + alone_runs with a pool) */
  size_t contended_runs;   /* runs whose calling thread was on a CPU < 3/4 of the run's time */
  size_t regions;          /* parallel regions of the shared runs */
  size_t solo_regions;     /* of which the pool ran on the caller alone (a solo stretch) */
  size_t unhelped_regions; /* of which were shared but no worker ran an item */
  size_t solo_stretches;   /* solo stretches the pool started */
  double wait_ms;          /* time the caller waited for items a worker had claimed, in all */
} q8rt_run_stats;

/* Fills *stats (zeros for a NULL session). */
Q8RT_API void q8rt_session_run_stats(const q8rt_session *session, q8rt_run_stats *stats);

/* Decode an ONNX TensorProto (such as the input_0.pb files of the ONNX test data) into a caller buffer.
 * First call with data == NULL to learn dtype, shape and the byte size. Supports the dtypes of
 * q8rt_dtype, raw_data and the typed fields. info->name is set to NULL. */
Q8RT_API q8rt_status q8rt_tensor_proto_decode(const void *bytes, size_t size, q8rt_tensor_info *info, void *data,
                                              size_t data_capacity, size_t *nbytes, q8rt_error *error);

#ifdef __cplusplus
}
#endif

#endif /* Q8RT_H */
