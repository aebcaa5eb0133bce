/* TensorProto -> host tensor data: the metered protobuf-c allocator, data type and shape checks,
 * raw_data / typed fields / external data, and q8rt_load_tensor_proto. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

#include "loader_internal.h"

/* ---- metered allocator --------------------------------------------------------------------- */

/* Keeps the payload 16-byte aligned, which is all protobuf-c needs (it uses malloc semantics). */
#define LD_HEADER 16

static void *meter_alloc(void *ud, size_t size) {
  ld_meter *m = ud;
  size_t total;
  if (!q8rt_add_size(size, LD_HEADER, &total) || total > m->budget - m->used) {
    m->over_budget = true;
    return NULL;
  }
  char *p = q8rt_alloc(m->allocator, total, 16);
  if (p == NULL) {
    m->alloc_failed = true;
    return NULL;
  }
  memcpy(p, &total, sizeof(total));
  m->used += total;
  if (m->used > m->peak) m->peak = m->used;
  return p + LD_HEADER;
}

static void meter_free(void *ud, void *ptr) {
  ld_meter *m = ud;
  if (ptr == NULL) return;
  char *p = (char *)ptr - LD_HEADER;
  size_t total;
  memcpy(&total, p, sizeof(total));
  m->used -= total;
  q8rt_free(m->allocator, p, total);
}

void ld_meter_init(ld_meter *m, const q8rt_allocator *allocator, size_t budget) {
  memset(m, 0, sizeof(*m));
  m->allocator = allocator;
  m->budget = budget;
  m->pb.alloc = meter_alloc;
  m->pb.free = meter_free;
  m->pb.allocator_data = m;
}

size_t q8rt_default_unpack_budget(size_t encoded_size) {
  size_t b;
  if (!q8rt_mul_size(encoded_size, 4, &b) || !q8rt_add_size(b, (size_t)1 << 20, &b)) return SIZE_MAX;
  return b;
}

q8rt_status ld_unpack_failure(const ld_meter *m, const char *what, q8rt_error *err) {
  if (m->over_budget) {
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY,
                     "decode budget exceeded: decoding the %s needs more than max_unpack_bytes = %zu bytes", what,
                     m->budget);
  }
  if (m->alloc_failed) {
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory while decoding the %s", what);
  }
  if (strcmp(what, "model") == 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "not a valid ONNX model (protobuf decode failed)");
  }
  return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "not a valid ONNX %s (protobuf decode failed)", what);
}

/* ---- data types ---------------------------------------------------------------------------- */

q8rt_status ld_tensor_desc_read(const Onnx__TensorProto *tp, const char *what, ld_tensor_desc *d, q8rt_error *err) {
  memset(d, 0, sizeof(*d));
  if (!tp->has_data_type || tp->data_type == 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s has no data type", what);
  }
  if (!q8rt_dtype_known(tp->data_type)) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s has data type %s (%d), which q8rt does not support", what,
                     q8rt_onnx_type_name(tp->data_type), (int)tp->data_type);
  }
  if (tp->n_dims > Q8RT_MAX_RANK) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s has rank %zu (q8rt supports up to %d)", what, tp->n_dims,
                     Q8RT_MAX_RANK);
  }
  d->dtype = (q8rt_dtype)tp->data_type;
  d->rank = (int)tp->n_dims;
  for (int i = 0; i < d->rank; i++) {
    if (tp->dims[i] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s has negative dimension %lld at axis %d", what,
                       (long long)tp->dims[i], i);
    }
    d->dims[i] = tp->dims[i];
  }
  if (!q8rt_shape_elements(d->dims, d->rank, &d->count)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s has dimensions whose element count overflows (limit %lld)",
                     what, (long long)Q8RT_MAX_ELEMENTS);
  }
  d->nbytes = (size_t)d->count * q8rt_dtype_size(d->dtype);
  d->external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  if (!d->external && tp->n_external_data > 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s has external_data entries but data_location is not EXTERNAL",
                     what);
  }
  return Q8RT_OK;
}

/* Little-endian bytes -> host-order elements of `esize` bytes. */
static void copy_le(void *dst, const uint8_t *src, size_t count, size_t esize) {
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  (void)esize;
  memcpy(dst, src, count * esize);
#else
  uint8_t *out = dst;
  for (size_t i = 0; i < count; i++, src += esize, out += esize) {
    uint64_t v = 0;
    for (size_t b = 0; b < esize; b++) v |= (uint64_t)src[b] << (8 * b);
    if (esize == 1) {
      uint8_t x = (uint8_t)v;
      memcpy(out, &x, 1);
    } else if (esize == 2) {
      uint16_t x = (uint16_t)v;
      memcpy(out, &x, 2);
    } else if (esize == 4) {
      uint32_t x = (uint32_t)v;
      memcpy(out, &x, 4);
    } else
      memcpy(out, &v, 8);
  }
#endif
}

/* Field names of the typed data, for "stores data in X" messages. */
static size_t typed_count(const Onnx__TensorProto *tp, const char **field) {
  if (tp->n_float_data) {
    *field = "float_data";
    return tp->n_float_data;
  }
  if (tp->n_int32_data) {
    *field = "int32_data";
    return tp->n_int32_data;
  }
  if (tp->n_int64_data) {
    *field = "int64_data";
    return tp->n_int64_data;
  }
  if (tp->n_string_data) {
    *field = "string_data";
    return tp->n_string_data;
  }
  if (tp->n_double_data) {
    *field = "double_data";
    return tp->n_double_data;
  }
  if (tp->n_uint64_data) {
    *field = "uint64_data";
    return tp->n_uint64_data;
  }
  *field = NULL;
  return 0;
}

/* Parses a non-negative decimal integer exactly (no sign, no spaces, no overflow). */
static bool parse_u64(const char *s, uint64_t *out) {
  if (s == NULL || *s == '\0') return false;
  uint64_t v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return false;
    if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) return false;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  *out = v;
  return true;
}

/* Refuse what could name a file outside the folder before touching the file system: the open
 * itself (ld_open_beneath) also refuses symlinks that lead out; this catches the plain cases with
 * a clearer message. */
static q8rt_status check_location(const char *loc, const char *what, q8rt_error *err) {
  if (loc == NULL || loc[0] == '\0') {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s: external data has an empty location", what);
  }
  if (loc[0] == '/') {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s: external data location '%.200s' is an absolute path", what,
                     loc);
  }
  for (const char *p = loc; *p;) {
    const char *e = strchr(p, '/');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == 2 && p[0] == '.' && p[1] == '.') {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s: external data location '%.200s' contains '..'", what, loc);
    }
    p += len;
    if (*p == '/') p++;
  }
  return Q8RT_OK;
}

/* Open `location` (relative, free of "..", checked by check_location) beneath `dirfd` with no
 * window between a check and the open: where the kernel has openat2, RESOLVE_BENEATH makes the
 * kernel refuse (EXDEV) any resolution that leaves the folder, symlinks included, in the same
 * call that opens. Elsewhere each component is opened relative to the previous one's descriptor
 * with O_NOFOLLOW, so every symlink is refused (ELOOP) and a component swapped after it was
 * opened no longer matters (the descriptor holds the original). O_NONBLOCK: a FIFO planted as the
 * data file must not block the load (regular files ignore it). */
int ld_open_beneath(int dirfd, const char *location, int try_openat2, ld_open_hook hook, void *hook_ud) {
  const int file_flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
#if defined(__linux__) && defined(SYS_openat2)
  if (try_openat2) {
    struct open_how how;
    memset(&how, 0, sizeof(how));
    how.flags = (uint64_t)file_flags;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    if (hook != NULL) hook(0, hook_ud);
    long fd = syscall(SYS_openat2, dirfd, location, &how, sizeof(how));
    if (fd >= 0) return (int)fd;
    /* ENOSYS: kernel before 5.6; EPERM: a seccomp filter that predates openat2. */
    if (errno != ENOSYS && errno != EPERM) return -errno;
  }
#else
  (void)try_openat2;
#endif
  int cur = dirfd;
  int step = 0;
  for (const char *p = location;;) {
    while (*p == '/') p++;
    const char *e = strchr(p, '/');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    const char *rest = p + len;
    while (*rest == '/') rest++;
    const bool last = *rest == '\0';
    char comp[NAME_MAX + 1];
    int fd;
    if (len == 0 || len > NAME_MAX) {
      fd = -(len == 0 ? ENOENT : ENAMETOOLONG);
    } else if (len == 2 && p[0] == '.' && p[1] == '.') {
      fd = -EXDEV; /* check_location refuses these already; never walk up */
    } else {
      memcpy(comp, p, len);
      comp[len] = '\0';
      if (hook != NULL) hook(step++, hook_ud);
      if (last) {
        fd = openat(cur, comp, file_flags | O_NOFOLLOW);
      } else {
        fd = openat(cur, comp, O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW);
      }
      if (fd < 0) fd = -errno;
      /* O_NOFOLLOW on a symlink: ELOOP on Linux, EMLINK on FreeBSD; ENOTDIR for a non-final one
       * with O_DIRECTORY on some systems: report what the component is. */
      if (fd == -EMLINK || fd == -ENOTDIR) {
        struct stat lsb;
        if (fstatat(cur, comp, &lsb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lsb.st_mode)) fd = -ELOOP;
      }
    }
    if (cur != dirfd) close(cur);
    if (fd < 0 || last) return fd;
    cur = fd;
    p = rest;
  }
}

static q8rt_status read_external(const Onnx__TensorProto *tp, const char *what, const ld_tensor_desc *d,
                                 const char *dir, void *dst, q8rt_error *err) {
  if (dir == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s uses external data, which needs a model loaded from a file (or external_data_dir)", what);
  }
  const char *location = NULL, *offset_s = NULL, *length_s = NULL;
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const char *k = tp->external_data[i]->key ? tp->external_data[i]->key : "";
    const char *v = tp->external_data[i]->value ? tp->external_data[i]->value : "";
    const char **slot = strcmp(k, "location") == 0 ? &location
                        : strcmp(k, "offset") == 0 ? &offset_s
                        : strcmp(k, "length") == 0 ? &length_s
                                                   : NULL;
    if (slot == NULL) continue; /* "checksum" and future keys do not change where the bytes are */
    if (*slot != NULL) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s: external data key '%s' appears twice", what, k);
    }
    *slot = v;
  }
  q8rt_status st = check_location(location, what, err);
  if (st != Q8RT_OK) return st;
  uint64_t offset = 0, length = d->nbytes;
  if (offset_s != NULL && !parse_u64(offset_s, &offset)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s: external data offset '%.40s' is not a number", what, offset_s);
  }
  if (length_s != NULL && !parse_u64(length_s, &length)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s: external data length '%.40s' is not a number", what, length_s);
  }
  if (length != d->nbytes) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s: external data length %llu does not match the tensor's %zu bytes", what,
                     (unsigned long long)length, d->nbytes);
  }
  if (dst == NULL) return Q8RT_OK;

  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    return q8rt_fail(err, Q8RT_ERROR_IO, "%s: external data folder '%.200s' cannot be opened", what, dir);
  }
  int fd = ld_open_beneath(dirfd, location, 1, NULL, NULL);
  close(dirfd);
  if (fd == -EXDEV) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s: external data location '%.200s' resolves outside the model's folder", what, location);
  }
  if (fd == -ELOOP) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s: external data location '%.200s' goes through a symbolic link, refused because it could "
                     "lead outside the model's folder (this kernel has no openat2 to check where it leads)",
                     what, location);
  }
  if (fd < 0) {
    return q8rt_fail(err, Q8RT_ERROR_IO, "%s: external data file '%.200s' cannot be opened: %s", what, location,
                     strerror(-fd));
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s: external data location '%.200s' is not a regular file", what,
                     location);
  }
  uint64_t fsize = (uint64_t)sb.st_size;
  if (offset > fsize || length > fsize - offset) {
    close(fd);
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s: external data (offset %llu, %llu bytes) extends past the end of '%.200s' (%llu bytes)", what,
                     (unsigned long long)offset, (unsigned long long)length, location, (unsigned long long)fsize);
  }
  if (offset > (uint64_t)INT64_MAX) { /* cannot happen after the size check; keeps off_t casts safe */
    close(fd);
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s: external data offset too large", what);
  }
  uint8_t *out = dst;
  size_t done = 0;
  while (done < d->nbytes) {
    ssize_t r = pread(fd, out + done, d->nbytes - done, (off_t)(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      close(fd);
      return q8rt_fail(err, Q8RT_ERROR_IO, "%s: reading external data from '%.200s' failed", what, location);
    }
    done += (size_t)r;
  }
  close(fd);
#if !(defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
  /* External data is little-endian like raw_data: convert in place. */
  size_t es = q8rt_dtype_size(d->dtype);
  for (size_t i = 0; es > 1 && i < (size_t)d->count; i++) {
    uint8_t tmp[8];
    memcpy(tmp, out + i * es, es);
    copy_le(out + i * es, tmp, 1, es);
  }
#endif
  return Q8RT_OK;
}

q8rt_status ld_tensor_fill(const Onnx__TensorProto *tp, const char *what, const ld_tensor_desc *d,
                           const char *external_dir, void *dst, q8rt_error *err) {
  const char *typed_field;
  size_t typed_n = typed_count(tp, &typed_field);
  if (d->external) {
    if (tp->has_raw_data || typed_n) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s has external data and also data in the model", what);
    }
    return read_external(tp, what, d, external_dir, dst, err);
  }
  size_t esize = q8rt_dtype_size(d->dtype);
  size_t count = (size_t)d->count;
  if (tp->has_raw_data) {
    if (typed_n) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s has both raw_data and %s", what, typed_field);
    }
    if (tp->raw_data.len != d->nbytes) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s: raw_data has %zu bytes, expected %zu (%lld elements of %s)",
                       what, tp->raw_data.len, d->nbytes, (long long)d->count, q8rt_dtype_name(d->dtype));
    }
    if (dst != NULL && count) copy_le(dst, tp->raw_data.data, count, esize);
    if (dst != NULL && d->dtype == Q8RT_DTYPE_BOOL) {
      /* any nonzero byte is true; kernels may then rely on 0/1 */
      uint8_t *b = dst;
      for (size_t i = 0; i < count; i++) b[i] = b[i] != 0;
    }
    return Q8RT_OK;
  }

  /* Typed fields: exactly the one ONNX assigns to the data type, with one value per element. */
  const char *want;
  size_t have;
  switch (d->dtype) {
    case Q8RT_DTYPE_FLOAT32:
      want = "float_data";
      have = tp->n_float_data;
      break;
    case Q8RT_DTYPE_INT64:
      want = "int64_data";
      have = tp->n_int64_data;
      break;
    default:
      want = "int32_data";
      have = tp->n_int32_data;
      break;
  }
  if (typed_n && strcmp(typed_field, want) != 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s of type %s stores its data in %s (expected %s)", what,
                     q8rt_dtype_name(d->dtype), typed_field, want);
  }
  /* Any other typed field being non-empty as well is just as wrong. */
  size_t total = tp->n_float_data + tp->n_int32_data + tp->n_int64_data + tp->n_string_data + tp->n_double_data +
                 tp->n_uint64_data;
  if (total != have) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s of type %s has data in more than one field", what,
                     q8rt_dtype_name(d->dtype));
  }
  if (have != count) {
    if (have == 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s has %lld elements but no data", what, (long long)d->count);
    }
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s has %zu values in %s, expected %lld", what, have, want,
                     (long long)d->count);
  }
  switch (d->dtype) {
    case Q8RT_DTYPE_FLOAT32:
      if (dst != NULL && count) memcpy(dst, tp->float_data, count * sizeof(float));
      return Q8RT_OK;
    case Q8RT_DTYPE_INT64:
      if (dst != NULL && count) memcpy(dst, tp->int64_data, count * sizeof(int64_t));
      return Q8RT_OK;
    default: break;
  }
  int32_t lo, hi;
  q8rt_dtype_range(d->dtype, &lo, &hi);
  for (size_t i = 0; i < count; i++) {
    int32_t v = tp->int32_data[i];
    if (v < lo || v > hi) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s: int32_data[%zu] = %d is outside the range of %s", what, i,
                       (int)v, q8rt_dtype_name(d->dtype));
    }
    if (dst == NULL) continue;
    switch (d->dtype) {
      case Q8RT_DTYPE_UINT8: ((uint8_t *)dst)[i] = (uint8_t)v; break;
      case Q8RT_DTYPE_INT8: ((int8_t *)dst)[i] = (int8_t)v; break;
      case Q8RT_DTYPE_UINT16:
      case Q8RT_DTYPE_FLOAT16: ((uint16_t *)dst)[i] = (uint16_t)v; break;
      case Q8RT_DTYPE_INT16: ((int16_t *)dst)[i] = (int16_t)v; break;
      case Q8RT_DTYPE_BOOL: ((uint8_t *)dst)[i] = (uint8_t)v; break;
      default: ((int32_t *)dst)[i] = v; break;
    }
  }
  return Q8RT_OK;
}

/* ---- standalone TensorProto ---------------------------------------------------------------- */

q8rt_status q8rt_load_tensor_proto(const void *bytes, size_t size, const q8rt_allocator *allocator,
                                   q8rt_tensor_info *info, void *data, size_t capacity, size_t *nbytes,
                                   q8rt_error *err) {
  if ((bytes == NULL && size > 0) || info == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_ARGUMENT, "tensor proto decode: bytes and info must not be NULL");
  }
  if (allocator == NULL) allocator = q8rt_default_allocator();
  ld_meter m;
  ld_meter_init(&m, allocator, q8rt_default_unpack_budget(size));
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(&m.pb, size, bytes);
  if (tp == NULL) return ld_unpack_failure(&m, "tensor", err);

  const char *what = "tensor";
  ld_tensor_desc d;
  q8rt_status st = ld_tensor_desc_read(tp, what, &d, err);
  if (st == Q8RT_OK && d.external) {
    st = q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                   "tensor uses external data, which q8rt_tensor_proto_decode does not read");
  }
  if (st == Q8RT_OK && data != NULL && capacity < d.nbytes) {
    st = q8rt_fail(err, Q8RT_ERROR_INVALID_ARGUMENT, "tensor needs %zu bytes but the buffer holds %zu", d.nbytes,
                   capacity);
  }
  if (st == Q8RT_OK) st = ld_tensor_fill(tp, what, &d, NULL, data, err);
  onnx__tensor_proto__free_unpacked(tp, &m.pb);
  if (st != Q8RT_OK) return st;

  memset(info, 0, sizeof(*info));
  info->name = NULL;
  info->dtype = d.dtype;
  info->rank = d.rank;
  for (int i = 0; i < d.rank; i++) info->shape[i] = d.dims[i];
  info->has_quantization = 0;
  if (nbytes != NULL) *nbytes = d.nbytes;
  return Q8RT_OK;
}
