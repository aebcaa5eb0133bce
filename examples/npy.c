/* Minimal .npy reader/writer for q8rt-run. See npy.h. */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER_BYTES ((size_t)1 << 20)

__attribute__((format(printf, 3, 4))) static int npy_fail(char *err, size_t err_size, const char *fmt, ...) {
  if (err && err_size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static const struct {
  const char *descr;
  q8rt_dtype dtype;
} npy_types[] = {
    {"<f4", Q8RT_DTYPE_FLOAT32}, {"|u1", Q8RT_DTYPE_UINT8}, {"|i1", Q8RT_DTYPE_INT8},
    {"<u2", Q8RT_DTYPE_UINT16},  {"<i2", Q8RT_DTYPE_INT16}, {"<i4", Q8RT_DTYPE_INT32},
    {"<i8", Q8RT_DTYPE_INT64},   {"|b1", Q8RT_DTYPE_BOOL},  {"<f2", Q8RT_DTYPE_FLOAT16},
};

const char *npy_descr(q8rt_dtype dtype) {
  for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
    if (npy_types[i].dtype == dtype) return npy_types[i].descr;
  return NULL;
}

static q8rt_dtype npy_dtype_from_descr(const char *descr) {
  for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
    if (strcmp(npy_types[i].descr, descr) == 0) return npy_types[i].dtype;
  /* Single-byte types carry no byte order; accept the other spellings too. */
  if (strcmp(descr, "<u1") == 0 || strcmp(descr, ">u1") == 0 || strcmp(descr, "=u1") == 0) return Q8RT_DTYPE_UINT8;
  if (strcmp(descr, "<i1") == 0 || strcmp(descr, ">i1") == 0 || strcmp(descr, "=i1") == 0) return Q8RT_DTYPE_INT8;
  return Q8RT_DTYPE_UNDEFINED;
}

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

int npy_read_file(const char *path, size_t max_bytes, void **bytes, size_t *size, char *err, size_t err_size) {
  *bytes = NULL;
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return npy_fail(err, err_size, "cannot open '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    int e = errno;
    fclose(f);
    return npy_fail(err, err_size, "cannot stat '%s': %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    fclose(f);
    return npy_fail(err, err_size, "'%s' is not a regular file", path);
  }
  if (st.st_size < 0 || (uint64_t)st.st_size > (uint64_t)max_bytes) {
    fclose(f);
    return npy_fail(err, err_size, "'%s' is too large (%lld bytes, limit %zu)", path, (long long)st.st_size, max_bytes);
  }
  size_t n = (size_t)st.st_size;
  unsigned char *buf = malloc(n > 0 ? n : 1);
  if (!buf) {
    fclose(f);
    return npy_fail(err, err_size, "out of memory reading '%s' (%zu bytes)", path, n);
  }
  size_t got = n > 0 ? fread(buf, 1, n, f) : 0;
  int read_error = ferror(f);
  /* The file must not have grown either. */
  int extra = got == n && fgetc(f) != EOF;
  fclose(f);
  if (got != n || read_error || extra) {
    free(buf);
    return npy_fail(err, err_size, "error reading '%s'%s", path, extra ? ": file changed while reading" : "");
  }
  *bytes = buf;
  *size = n;
  return 0;
}

/* ---- header dictionary parser ------------------------------------------------------------------ */

typedef struct hdr_parser {
  const char *p;
  const char *end;
  char *err;
  size_t err_size;
} hdr_parser;

static void hdr_skip_ws(hdr_parser *h) {
  while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')) h->p++;
}

static int hdr_expect(hdr_parser *h, char c) {
  hdr_skip_ws(h);
  if (h->p >= h->end || *h->p != c) return npy_fail(h->err, h->err_size, "malformed npy header: expected '%c'", c);
  h->p++;
  return 0;
}

/* A Python string literal without escapes, quoted with ' or ". */
static int hdr_string(hdr_parser *h, char *out, size_t out_size) {
  hdr_skip_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
    return npy_fail(h->err, h->err_size, "malformed npy header: expected a string");
  char quote = *h->p++;
  size_t n = 0;
  while (h->p < h->end && *h->p != quote) {
    if (*h->p == '\\' || *h->p == '\n' || *h->p == '\0')
      return npy_fail(h->err, h->err_size, "malformed npy header: unsupported character in string");
    if (n + 1 >= out_size) return npy_fail(h->err, h->err_size, "malformed npy header: string too long");
    out[n++] = *h->p++;
  }
  if (h->p >= h->end) return npy_fail(h->err, h->err_size, "malformed npy header: unterminated string");
  h->p++;
  out[n] = '\0';
  return 0;
}

static int hdr_word(hdr_parser *h, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(h->end - h->p) >= n && memcmp(h->p, word, n) == 0) {
    const char *after = h->p + n;
    if (after == h->end || !((*after >= 'A' && *after <= 'Z') || (*after >= 'a' && *after <= 'z') ||
                             (*after >= '0' && *after <= '9') || *after == '_')) {
      h->p = after;
      return 1;
    }
  }
  return 0;
}

static int hdr_bool(hdr_parser *h, int *value) {
  hdr_skip_ws(h);
  if (hdr_word(h, "True")) {
    *value = 1;
    return 0;
  }
  if (hdr_word(h, "False")) {
    *value = 0;
    return 0;
  }
  return npy_fail(h->err, h->err_size, "malformed npy header: 'fortran_order' must be True or False");
}

static int hdr_shape(hdr_parser *h, npy_array *a) {
  if (hdr_expect(h, '(') != 0) return -1;
  a->rank = 0;
  for (;;) {
    hdr_skip_ws(h);
    if (h->p < h->end && *h->p == ')') {
      h->p++;
      break;
    }
    if (h->p < h->end && *h->p == '-')
      return npy_fail(h->err, h->err_size, "malformed npy header: negative dimension in 'shape'");
    if (h->p >= h->end || *h->p < '0' || *h->p > '9')
      return npy_fail(h->err, h->err_size, "malformed npy header: expected an integer in 'shape'");
    int64_t v = 0;
    while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
      int d = *h->p++ - '0';
      if (v > (INT64_MAX - d) / 10)
        return npy_fail(h->err, h->err_size, "malformed npy header: dimension in 'shape' too large");
      v = v * 10 + d;
    }
    if (h->p < h->end && (*h->p == 'L' || *h->p == 'l')) h->p++; /* Python 2 long suffix */
    if (a->rank >= Q8RT_MAX_RANK)
      return npy_fail(h->err, h->err_size, "npy array has more than %d dimensions", Q8RT_MAX_RANK);
    a->shape[a->rank++] = v;
    hdr_skip_ws(h);
    if (h->p < h->end && *h->p == ',') {
      h->p++;
      continue;
    }
    if (h->p < h->end && *h->p == ')') {
      /* "(5)" is an int in Python, not a tuple. */
      if (a->rank == 1) return npy_fail(h->err, h->err_size, "malformed npy header: 'shape' is not a tuple");
      h->p++;
      break;
    }
    return npy_fail(h->err, h->err_size, "malformed npy header: expected ',' or ')' in 'shape'");
  }
  return 0;
}

int npy_parse(const void *bytes, size_t size, npy_array *array, char *err, size_t err_size) {
  const unsigned char *b = bytes;
  memset(array, 0, sizeof(*array));
  if (size < NPY_MAGIC_LEN + 2 || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
    return npy_fail(err, err_size, "not an npy file (bad magic)");
  unsigned major = b[6], minor = b[7];
  size_t header_len, header_start;
  if (major == 1) {
    if (size < 10) return npy_fail(err, err_size, "truncated npy header");
    header_len = (size_t)b[8] | (size_t)b[9] << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return npy_fail(err, err_size, "truncated npy header");
    header_len = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    header_start = 12;
  } else {
    return npy_fail(err, err_size, "unsupported npy format version %u.%u", major, minor);
  }
  if (minor != 0) return npy_fail(err, err_size, "unsupported npy format version %u.%u", major, minor);
  if (header_len > NPY_MAX_HEADER_BYTES) return npy_fail(err, err_size, "npy header too long (%zu bytes)", header_len);
  if (header_len > size - header_start) return npy_fail(err, err_size, "truncated npy header");

  hdr_parser h = {(const char *)b + header_start, (const char *)b + header_start + header_len, err, err_size};
  int have_descr = 0, have_fortran = 0, have_shape = 0, fortran = 0;
  char descr[32] = "";
  if (hdr_expect(&h, '{') != 0) return -1;
  for (;;) {
    hdr_skip_ws(&h);
    if (h.p < h.end && *h.p == '}') {
      h.p++;
      break;
    }
    char key[32];
    if (hdr_string(&h, key, sizeof(key)) != 0) return -1;
    if (hdr_expect(&h, ':') != 0) return -1;
    if (strcmp(key, "descr") == 0) {
      if (have_descr++) return npy_fail(err, err_size, "malformed npy header: duplicate key 'descr'");
      hdr_skip_ws(&h);
      if (h.p < h.end && (*h.p == '[' || *h.p == '('))
        return npy_fail(err, err_size, "unsupported npy dtype: structured arrays are not supported");
      if (hdr_string(&h, descr, sizeof(descr)) != 0) return -1;
    } else if (strcmp(key, "fortran_order") == 0) {
      if (have_fortran++) return npy_fail(err, err_size, "malformed npy header: duplicate key 'fortran_order'");
      if (hdr_bool(&h, &fortran) != 0) return -1;
    } else if (strcmp(key, "shape") == 0) {
      if (have_shape++) return npy_fail(err, err_size, "malformed npy header: duplicate key 'shape'");
      if (hdr_shape(&h, array) != 0) return -1;
    } else {
      return npy_fail(err, err_size, "malformed npy header: unexpected key '%s'", key);
    }
    hdr_skip_ws(&h);
    if (h.p < h.end && *h.p == ',') {
      h.p++;
      continue;
    }
    if (h.p < h.end && *h.p == '}') {
      h.p++;
      break;
    }
    return npy_fail(err, err_size, "malformed npy header: expected ',' or '}'");
  }
  hdr_skip_ws(&h);
  if (h.p != h.end) return npy_fail(err, err_size, "malformed npy header: trailing characters after the dictionary");
  if (!have_descr || !have_fortran || !have_shape)
    return npy_fail(err, err_size, "malformed npy header: missing key '%s'",
                    !have_descr     ? "descr"
                    : !have_fortran ? "fortran_order"
                                    : "shape");

  array->dtype = npy_dtype_from_descr(descr);
  if (array->dtype == Q8RT_DTYPE_UNDEFINED)
    return npy_fail(err, err_size, "unsupported npy dtype '%s' (supported: <f4 <f2 |u1 |i1 <u2 <i2 <i4 <i8 |b1)",
                    descr);
  size_t item = q8rt_dtype_size(array->dtype);
  if (item > 1 && !host_is_little_endian())
    return npy_fail(err, err_size, "little-endian npy data is not supported on this big-endian host");

  size_t count = 1;
  int zero = 0;
  for (int i = 0; i < array->rank; i++) {
    if (array->shape[i] == 0) zero = 1;
  }
  if (!zero) {
    for (int i = 0; i < array->rank; i++) {
      uint64_t d = (uint64_t)array->shape[i];
      if (d > SIZE_MAX / item / count)
        return npy_fail(err, err_size, "npy shape is too large (element count overflows)");
      count *= (size_t)d;
    }
  } else {
    count = 0;
  }
  size_t data_bytes = count * item;
  size_t data_start = header_start + header_len;
  size_t present = size - data_start;
  if (present != data_bytes)
    return npy_fail(err, err_size, "npy data size mismatch: the header describes %zu bytes but the file holds %zu",
                    data_bytes, present);
  array->data = b + data_start;
  array->nbytes = data_bytes;
  array->fortran_order = fortran;
  return 0;
}

void npy_copy_c_order(const npy_array *array, void *dst) {
  const size_t item = q8rt_dtype_size(array->dtype);
  if (array->nbytes == 0) return;
  if (!array->fortran_order || array->rank < 2) {
    memcpy(dst, array->data, array->nbytes);
    return;
  }
  /* walk the C-order index with an odometer (last axis fastest); in Fortran order axis d's
   * elements lie stride[d] = product(shape[0..d)) apart. nbytes > 0, so no dimension is 0 and
   * every stride fits (their product is the element count). */
  size_t stride[Q8RT_MAX_RANK], idx[Q8RT_MAX_RANK] = {0};
  size_t s = 1;
  for (int d = 0; d < array->rank; d++) {
    stride[d] = s;
    s *= (size_t)array->shape[d];
  }
  const int r = array->rank;
  const unsigned char *src = array->data;
  unsigned char *out = dst;
  const size_t count = array->nbytes / item, n_last = (size_t)array->shape[r - 1];
  size_t off = 0; /* source element of idx */
  for (size_t done = 0; done < count; done += n_last) {
    for (size_t i = 0; i < n_last; i++) memcpy(out + (done + i) * item, src + (off + i * stride[r - 1]) * item, item);
    for (int d = r - 2; d >= 0; d--) {
      off += stride[d];
      if (++idx[d] < (size_t)array->shape[d]) break;
      off -= idx[d] * stride[d];
      idx[d] = 0;
    }
  }
}

int npy_write_file(const char *path, q8rt_dtype dtype, const int64_t *shape, int rank, const void *data, size_t nbytes,
                   char *err, size_t err_size) {
  const char *descr = npy_descr(dtype);
  if (!descr) return npy_fail(err, err_size, "cannot write '%s': dtype %d has no npy equivalent", path, (int)dtype);
  if (rank < 0 || rank > Q8RT_MAX_RANK) return npy_fail(err, err_size, "cannot write '%s': bad rank %d", path, rank);
  size_t item = q8rt_dtype_size(dtype);
  if (item > 1 && !host_is_little_endian())
    return npy_fail(err, err_size, "cannot write '%s': big-endian hosts are not supported", path);
  uint64_t count = 1;
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0) return npy_fail(err, err_size, "cannot write '%s': negative dimension", path);
    if (shape[i] != 0 && count > UINT64_MAX / (uint64_t)shape[i])
      return npy_fail(err, err_size, "cannot write '%s': shape too large", path);
    count *= (uint64_t)shape[i];
  }
  if (count > SIZE_MAX / item || count * item != nbytes)
    return npy_fail(err, err_size, "cannot write '%s': data size %zu does not match the shape", path, nbytes);

  char shape_text[Q8RT_MAX_RANK * 24 + 8];
  size_t n = 0;
  shape_text[n++] = '(';
  for (int i = 0; i < rank; i++) {
    int w = snprintf(shape_text + n, sizeof(shape_text) - n, i == 0 ? "%lld" : ", %lld", (long long)shape[i]);
    if (w < 0) return npy_fail(err, err_size, "cannot write '%s': formatting failed", path);
    n += (size_t)w;
  }
  if (rank == 1) shape_text[n++] = ',';
  shape_text[n++] = ')';
  shape_text[n] = '\0';

  /* magic(6) + version(2) + header_len(2) + dict + padding + '\n', a multiple of 64. */
  char header[512];
  int dict_len = snprintf(header + 10, sizeof(header) - 10, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                          descr, shape_text);
  if (dict_len < 0 || (size_t)dict_len + 10 + 64 >= sizeof(header))
    return npy_fail(err, err_size, "cannot write '%s': header too long", path);
  size_t total = 10 + (size_t)dict_len + 1;
  size_t padded = (total + 63) / 64 * 64;
  size_t pos = 10 + (size_t)dict_len;
  while (pos < padded - 1) header[pos++] = ' ';
  header[pos++] = '\n';
  size_t header_len = padded - 10;
  memcpy(header, NPY_MAGIC, NPY_MAGIC_LEN);
  header[6] = 1;
  header[7] = 0;
  header[8] = (char)(header_len & 0xff);
  header[9] = (char)(header_len >> 8);

  FILE *f = fopen(path, "wb");
  if (!f) return npy_fail(err, err_size, "cannot create '%s': %s", path, strerror(errno));
  int ok = fwrite(header, 1, padded, f) == padded;
  if (ok && nbytes > 0) ok = fwrite(data, 1, nbytes, f) == nbytes;
  int e = errno;
  if (fclose(f) != 0 && ok) {
    ok = 0;
    e = errno;
  }
  if (!ok) return npy_fail(err, err_size, "error writing '%s': %s", path, strerror(e));
  return 0;
}
