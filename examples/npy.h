/*
 * Minimal reader/writer for NumPy .npy files (format versions 1.0, 2.0 and 3.0), as used by
 * q8rt-run. Arrays of the q8rt element types are handled, in C or Fortran order (numpy writes
 * Fortran order for an F-contiguous array, e.g. a transpose or some fancy-indexing results):
 *   <f4 |u1 |i1 <u2 <i2 <i4 <i8
 * Every function returns 0 on success and -1 on failure, with a one-line message in err.
 */
#ifndef Q8RT_EXAMPLES_NPY_H
#define Q8RT_EXAMPLES_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "q8rt.h"

/* Files bigger than this are refused by npy_read_file callers that use it as the cap. */
#define NPY_MAX_FILE_BYTES ((size_t)2 << 30)

typedef struct npy_array {
  q8rt_dtype dtype;
  int rank;
  int64_t shape[Q8RT_MAX_RANK];
  const void *data;  /* points into the bytes given to npy_parse */
  size_t nbytes;     /* product(shape) * itemsize, equal to the data present in the file */
  int fortran_order; /* data holds the elements in Fortran order (first axis fastest) */
} npy_array;

/* Read a whole regular file into a malloc'ed buffer (*bytes, to be freed by the caller; never
 * NULL on success, even for an empty file). Files larger than max_bytes are refused. */
int npy_read_file(const char *path, size_t max_bytes, void **bytes, size_t *size, char *err, size_t err_size);

/* Parse and validate an .npy image held in memory. array->data points into `bytes`. */
int npy_parse(const void *bytes, size_t size, npy_array *array, char *err, size_t err_size);

/* Copy the array's nbytes of data to dst in C order (a Fortran-order array reordered). */
void npy_copy_c_order(const npy_array *array, void *dst);

/* Write an .npy v1.0 file (header padded so the data starts on a 64-byte boundary). nbytes must
 * equal product(shape) * itemsize. */
int npy_write_file(const char *path, q8rt_dtype dtype, const int64_t *shape, int rank, const void *data, size_t nbytes,
                   char *err, size_t err_size);

/* The .npy descr string for a dtype ("<f4", "|u1", ...), NULL when it has none. */
const char *npy_descr(q8rt_dtype dtype);

#endif /* Q8RT_EXAMPLES_NPY_H */
