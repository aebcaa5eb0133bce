/* Shared between the loader's files; never included outside src/loader/. */
#ifndef Q8RT_LOADER_INTERNAL_H
#define Q8RT_LOADER_INTERNAL_H

#include <protobuf-c/protobuf-c.h>

#include "loader.h"
#include "onnx-q8rt.pb-c.h"

/* ---- metered protobuf-c allocator ---------------------------------------------------------- */

/* protobuf-c's allocator interface has no size on free, so each block carries a header with its
 * size; that lets free give the bytes back to the budget and to q8rt_allocator (which wants it). */
typedef struct ld_meter {
  ProtobufCAllocator pb;
  const q8rt_allocator *allocator;
  size_t budget;
  size_t used;
  size_t peak;
  bool over_budget;  /* an allocation was refused because of the budget */
  bool alloc_failed; /* the underlying allocator returned NULL */
} ld_meter;

void ld_meter_init(ld_meter *m, const q8rt_allocator *allocator, size_t budget);
/* The status for a failed unpack, from what the meter saw. `what` is "model" or "tensor". */
q8rt_status ld_unpack_failure(const ld_meter *m, const char *what, q8rt_error *err);

/* ---- tensors ------------------------------------------------------------------------------- */

typedef struct ld_tensor_desc {
  q8rt_dtype dtype;
  int rank;
  int64_t dims[Q8RT_MAX_RANK];
  int64_t count;
  size_t nbytes;
  bool external; /* data_location == EXTERNAL */
} ld_tensor_desc;

/* Check data type, rank and dims of a TensorProto; `what` names it in messages
 * ("initializer 'w'", "attribute 'value' of node 'c1' (Constant)", "tensor"). */
q8rt_status ld_tensor_desc_read(const Onnx__TensorProto *tp, const char *what, ld_tensor_desc *d, q8rt_error *err);

/* Convert the data of a TensorProto described by `d` into `dst` (d->nbytes bytes, host order).
 * dst == NULL checks everything that can be checked without writing (external data is then not
 * read). `external_dir` is the folder external data is confined to, NULL to refuse it. */
q8rt_status ld_tensor_fill(const Onnx__TensorProto *tp, const char *what, const ld_tensor_desc *d,
                           const char *external_dir, void *dst, q8rt_error *err);

/* Open a relative `location` for reading, confined to the folder `dirfd` refers to, without a
 * check-then-use window (see tensor.c). Returns a descriptor or -errno: -EXDEV when resolution
 * would leave the folder, -ELOOP for a symlink the fallback walk refuses. try_openat2 = 0 forces
 * the component-by-component walk (tests). `hook` (NULL outside tests) is called with the step
 * number before each kernel lookup, so a test can swap a component in between. */
typedef void (*ld_open_hook)(int step, void *ud);
int ld_open_beneath(int dirfd, const char *location, int try_openat2, ld_open_hook hook, void *hook_ud);

#endif /* Q8RT_LOADER_INTERNAL_H */
