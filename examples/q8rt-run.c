/*
 * q8rt-run: run a quantized ONNX model with q8rt from the command line.
 *
 *   q8rt-run MODEL.onnx [--input NAME=PATH]... [--output-dir DIR] [--threads N]
 *            [--backend auto|reference|avx2|avx512|neon|xnnpack] [--repeat N] [--explain] [--profile]
 *            [--no-tables] [--metadata] [--max-memory MIB] [--memory]
 *
 * Inputs come from .npy or .pb (ONNX TensorProto) files; inputs not given get deterministic
 * pseudo-random data. Outputs are written as DIR/<name>.npy or summarized on stdout.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "npy.h"
#include "q8rt.h"

#define EXIT_USAGE 2

static const char usage_text[] =
    "usage: q8rt-run MODEL.onnx [--input NAME=PATH]... [--output-dir DIR] [--threads N]\n"
    "                [--backend auto|reference|avx2|avx512|neon|xnnpack] [--repeat N] [--explain] [--profile]\n"
    "                [--profile-split] [--no-tables] [--metadata] [--max-memory MIB] [--memory]\n"
    "                [--max-loop-iterations N]\n"
    "\n"
    "  --input NAME=PATH   feed input NAME from PATH (.npy, or .pb ONNX TensorProto); inputs not\n"
    "                      given get deterministic pseudo-random data (symbolic dimensions set to 1)\n"
    "  --output-dir DIR    write each output as DIR/<name>.npy (otherwise print a summary line)\n"
    "  --threads N         worker threads (0 or 1: run on the calling thread)\n"
    "  --backend NAME      kernel backend (default auto)\n"
    "  --repeat N          one warm-up run, then N timed runs; prints latency_ms median/min, and with\n"
    "                      --threads N > 1 how the timed runs used the threads: 'run_stats shared=..\n"
    "                      alone=.. contended=.. regions=.. solo_regions=.. unhelped_regions=..\n"
    "                      solo_stretches=.. wait_ms=..' (q8rt_session_run_stats)\n"
    "  --explain           print the execution plan before running\n"
    "  --profile           print per-step timings (median over the timed runs with --repeat); with\n"
    "                      --threads N > 1 also how each step split: a 'threads' line per step\n"
    "  --profile-split     as --profile, but every work item runs on the calling thread, timed, while\n"
    "                      the steps split as for --threads N: per step the time inside parallel\n"
    "                      regions and their best time on N threads, then the serial fraction and\n"
    "                      the speed-up bounds of the plan (measured on one core, whatever the load;\n"
    "                      with --repeat, each step's figures from the run where it was fastest)\n"
    "  --no-tables         run elementwise islands node by node, not as tables (same bytes; for checks)\n"
    "  --metadata          print the model's metadata_props, one 'metadata KEY bytes=N: VALUE' line each\n"
    "                      (at most the value's first 60 bytes, control characters as '.')\n"
    "  --max-memory MIB    cap on the model's and the session's memory, each (default: the machine's\n"
    "                      physical memory, so a model or shape that cannot fit fails with a message\n"
    "                      instead of meeting the out-of-memory killer; 0: no cap)\n"
    "  --memory            print 'memory model_bytes=.. session_bytes=.. load_peak_rss_kib=..\n"
    "                      peak_rss_kib=.. rss_kib=..': what the model and session hold after the run,\n"
    "                      the process's peak resident set after load and at the end, and its\n"
    "                      resident set at the end\n"
    "  --max-loop-iterations N\n"
    "                      cap on the iterations of any Loop node in a run (default 1000000): a Loop\n"
    "                      that would run longer fails the run naming the node\n"
    "  --help              show this help\n";

/* Exactly one line on stderr, whatever the message contains. */
__attribute__((format(printf, 1, 2))) static void report_error(const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  for (char *c = msg; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
  fprintf(stderr, "q8rt-run: error: %s\n", msg);
}

static void report_lib_error(const char *what, q8rt_status status, const q8rt_error *err) {
  const char *msg = err->message[0] ? err->message : q8rt_status_string(status);
  if (what)
    report_error("%s: %s", what, msg);
  else
    report_error("%s", msg);
}

/* ---- command line ---------------------------------------------------------------------------- */

typedef struct input_arg {
  const char *name; /* the NAME part of NAME=PATH (name_storage) */
  const char *path; /* points into argv */
  char *name_storage;
} input_arg;

typedef struct options {
  const char *model_path;
  input_arg *inputs;
  size_t input_count;
  const char *output_dir;
  int threads;
  q8rt_backend backend;
  long repeat; /* 0: a single run, no timing */
  int explain;
  int metadata;
  int profile;
  int no_tables;
  int memory;
  long max_memory_mib;      /* -1: the default (physical memory) */
  long max_loop_iterations; /* 0: the library's default */
  int help;
} options;

static void options_free(options *o) {
  for (size_t i = 0; i < o->input_count; i++) free(o->inputs[i].name_storage);
  free(o->inputs);
  o->inputs = NULL;
  o->input_count = 0;
}

static int parse_long(const char *opt, const char *text, long min, long max, long *value) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > max) {
    report_error("%s expects an integer in [%ld, %ld], got '%s'", opt, min, max, text);
    return -1;
  }
  *value = v;
  return 0;
}

static int parse_backend(const char *text, q8rt_backend *backend) {
  static const struct {
    const char *name;
    q8rt_backend backend;
  } table[] = {
      {"auto", Q8RT_BACKEND_AUTO},     {"reference", Q8RT_BACKEND_REFERENCE}, {"avx2", Q8RT_BACKEND_AVX2},
      {"avx512", Q8RT_BACKEND_AVX512}, {"neon", Q8RT_BACKEND_NEON},           {"xnnpack", Q8RT_BACKEND_XNNPACK},
  };
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
    if (strcmp(text, table[i].name) == 0) {
      *backend = table[i].backend;
      return 0;
    }
  }
  report_error("unknown backend '%s' (expected auto, reference, avx2, avx512, neon or xnnpack)", text);
  return -1;
}

static int add_input_arg(options *o, const char *spec) {
  const char *eq = strchr(spec, '=');
  if (!eq || eq == spec || eq[1] == '\0') {
    report_error("--input expects NAME=PATH, got '%s'", spec);
    return -1;
  }
  input_arg *grown = realloc(o->inputs, (o->input_count + 1) * sizeof(*grown));
  if (!grown) {
    report_error("out of memory");
    return -1;
  }
  o->inputs = grown;
  size_t len = (size_t)(eq - spec);
  char *name = malloc(len + 1);
  if (!name) {
    report_error("out of memory");
    return -1;
  }
  memcpy(name, spec, len);
  name[len] = '\0';
  for (size_t i = 0; i < o->input_count; i++) {
    if (strcmp(o->inputs[i].name, name) == 0) {
      report_error("input '%s' given more than once", name);
      free(name);
      return -1;
    }
  }
  o->inputs[o->input_count].name = name;
  o->inputs[o->input_count].name_storage = name;
  o->inputs[o->input_count].path = eq + 1;
  o->input_count++;
  return 0;
}

/* Returns 0 on success, -1 after reporting a usage error. */
static int parse_args(int argc, char **argv, options *o) {
  memset(o, 0, sizeof(*o));
  o->backend = Q8RT_BACKEND_AUTO;
  o->max_memory_mib = -1;
  int only_positional = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (only_positional || arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (o->model_path) {
        report_error("unexpected argument '%s' (only one model path is accepted)", arg);
        return -1;
      }
      o->model_path = arg;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      only_positional = 1;
      continue;
    }
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      o->help = 1;
      return 0;
    }
    if (strcmp(arg, "--explain") == 0) {
      o->explain = 1;
      continue;
    }
    if (strcmp(arg, "--metadata") == 0) {
      o->metadata = 1;
      continue;
    }
    if (strcmp(arg, "--profile") == 0) {
      o->profile = 1;
      continue;
    }
    if (strcmp(arg, "--profile-split") == 0) {
      o->profile = Q8RT_PROFILE_SPLIT;
      continue;
    }
    if (strcmp(arg, "--no-tables") == 0) {
      o->no_tables = 1;
      continue;
    }
    if (strcmp(arg, "--memory") == 0) {
      o->memory = 1;
      continue;
    }
    /* Options with a value: "--opt VALUE" or "--opt=VALUE". */
    static const char *const valued[] = {"--input",      "--output-dir",         "--threads", "--backend", "--repeat",
                                         "--max-memory", "--max-loop-iterations"};
    const char *opt = NULL, *value = NULL;
    for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++) {
      size_t n = strlen(valued[k]);
      if (strncmp(arg, valued[k], n) == 0 && (arg[n] == '\0' || arg[n] == '=')) {
        opt = valued[k];
        if (arg[n] == '=') {
          value = arg + n + 1;
        } else if (i + 1 < argc) {
          value = argv[++i];
        } else {
          report_error("%s expects a value", opt);
          return -1;
        }
        break;
      }
    }
    if (!opt) {
      report_error("unknown option '%s' (see --help)", arg);
      return -1;
    }
    if (strcmp(opt, "--input") == 0) {
      if (add_input_arg(o, value) != 0) return -1;
    } else if (strcmp(opt, "--output-dir") == 0) {
      if (value[0] == '\0') {
        report_error("--output-dir expects a directory");
        return -1;
      }
      o->output_dir = value;
    } else if (strcmp(opt, "--threads") == 0) {
      long v;
      if (parse_long(opt, value, 0, 1024, &v) != 0) return -1;
      o->threads = (int)v;
    } else if (strcmp(opt, "--backend") == 0) {
      if (parse_backend(value, &o->backend) != 0) return -1;
    } else if (strcmp(opt, "--max-memory") == 0) {
      if (parse_long(opt, value, 0, (long)(SIZE_MAX >> 21), &o->max_memory_mib) != 0) return -1;
    } else if (strcmp(opt, "--max-loop-iterations") == 0) {
      if (parse_long(opt, value, 1, LONG_MAX, &o->max_loop_iterations) != 0) return -1;
    } else { /* --repeat */
      if (parse_long(opt, value, 1, 1000000, &o->repeat) != 0) return -1;
    }
  }
  if (!o->model_path) {
    report_error("missing MODEL.onnx (see --help)");
    return -1;
  }
  return 0;
}

/* ---- helpers --------------------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void format_shape(const int64_t *shape, int rank, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  n += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, i ? ",%lld" : "%lld", (long long)shape[i]);
  if (n < size) snprintf(buf + n, size - n, "]");
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Deterministic data for input `index`: full range for integer types, [-1, 1) for float32 and float16. */
static void fill_random(void *data, size_t count, q8rt_dtype dtype, size_t index) {
  uint64_t state = 0x5138a7e1c0ffee00ULL + (uint64_t)index;
  unsigned char *out = data;
  for (size_t i = 0; i < count; i++) {
    uint64_t r = splitmix64(&state);
    switch (dtype) {
      case Q8RT_DTYPE_FLOAT32: {
        float v = (float)((int32_t)(r >> 40) - (1 << 23)) / 8388608.0f; /* k / 2^23 - 1, exact */
        memcpy(out + i * 4, &v, 4);
        break;
      }
      case Q8RT_DTYPE_UINT8:
      case Q8RT_DTYPE_INT8: {
        uint8_t v = (uint8_t)r;
        memcpy(out + i, &v, 1);
        break;
      }
      case Q8RT_DTYPE_UINT16:
      case Q8RT_DTYPE_INT16: {
        uint16_t v = (uint16_t)r;
        memcpy(out + i * 2, &v, 2);
        break;
      }
      case Q8RT_DTYPE_INT32: {
        uint32_t v = (uint32_t)r;
        memcpy(out + i * 4, &v, 4);
        break;
      }
      case Q8RT_DTYPE_INT64: memcpy(out + i * 8, &r, 8); break;
      case Q8RT_DTYPE_BOOL: out[i] = (uint8_t)(r & 1); break;
      case Q8RT_DTYPE_FLOAT16: { /* [-1, 1): sign, exponent 2^-15..2^-1 (subnormals at 2^-15), mantissa */
        uint16_t v = (uint16_t)((r >> 63) << 15 | ((r >> 32) % 15) << 10 | (r & 0x3ff));
        memcpy(out + i * 2, &v, 2);
        break;
      }
      default: break;
    }
  }
}

/* mkdir -p */
static int make_dirs(const char *dir) {
  size_t len = strlen(dir);
  char *path = malloc(len + 1);
  if (!path) {
    report_error("out of memory");
    return -1;
  }
  memcpy(path, dir, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (path[i] != '/' && path[i] != '\0') continue;
    if (path[i - 1] == '/') continue;
    char saved = path[i];
    path[i] = '\0';
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
      report_error("cannot create directory '%s': %s", path, strerror(errno));
      free(path);
      return -1;
    }
    path[i] = saved;
  }
  free(path);
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    report_error("'%s' is not a directory", dir);
    return -1;
  }
  return 0;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the run --------------------------------------------------------------------------------- */

/* Inputs are staged first and handed to the session after all of them are read, so that models
 * with several inputs with symbolic dimensions get every shape bound before any data is set. */
typedef struct staged_input {
  int64_t shape[Q8RT_MAX_RANK];
  int rank;
  void *data;
  size_t nbytes;
} staged_input;

static int compare_double(const void *a, const void *b);

/* Median of m values (sorted in place). */
static double median_of(double *v, size_t m) {
  qsort(v, m, sizeof(double), compare_double);
  return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2.0;
}

typedef struct runner {
  q8rt_model *model;
  q8rt_session *session;
  void *file_bytes; /* the current input file */
  void *data;       /* decoded or generated input data */
  double *times;
  double *step_times;   /* --profile with --repeat: [step][run] */
  double *region_times; /* ... the steps' region_ms, then ideal_ms: [2][step][run] */
  q8rt_step_threads *thr;
  struct staged_input *staged; /* [n_in]: every input's shape and data, set once all are known */
  size_t n_staged;
  q8rt_step_profile *steps;
  char *text;
  char *path;
} runner;

static void runner_free(runner *r) {
  free(r->file_bytes);
  free(r->data);
  free(r->times);
  free(r->step_times);
  free(r->region_times);
  free(r->thr);
  for (size_t i = 0; i < r->n_staged; i++) free(r->staged[i].data);
  free(r->staged);
  free(r->steps);
  free(r->text);
  free(r->path);
  q8rt_session_free(r->session);
  q8rt_model_free(r->model);
}

/* Keep a copy of input `index` until every input is read. */
static int stage_input(runner *r, size_t index, const char *name, const int64_t *shape, int rank, const void *data,
                       size_t nbytes) {
  staged_input *s = &r->staged[index];
  s->data = malloc(nbytes > 0 ? nbytes : 1);
  if (!s->data) {
    report_error("input '%s': out of memory (%zu bytes)", name, nbytes);
    return -1;
  }
  if (nbytes) memcpy(s->data, data, nbytes);
  s->nbytes = nbytes;
  s->rank = rank;
  for (int d = 0; d < rank; d++) s->shape[d] = shape[d];
  return 0;
}

/* Bind model input `index` from a file. */
static int set_input_from_file(runner *r, size_t index, const q8rt_tensor_info *model_info, const char *path) {
  char err[1024];
  size_t size = 0;
  if (npy_read_file(path, NPY_MAX_FILE_BYTES, &r->file_bytes, &size, err, sizeof(err)) != 0) {
    report_error("input '%s': %s", model_info->name, err);
    return -1;
  }
  q8rt_dtype dtype;
  int rank;
  int64_t shape[Q8RT_MAX_RANK];
  const void *data;
  size_t nbytes;
  q8rt_error qerr = {0};
  if (ends_with(path, ".pb")) {
    q8rt_tensor_info info;
    q8rt_status st = q8rt_tensor_proto_decode(r->file_bytes, size, &info, NULL, 0, &nbytes, &qerr);
    if (st != Q8RT_OK) {
      report_error("input '%s': %s: %s", model_info->name, path,
                   qerr.message[0] ? qerr.message : q8rt_status_string(st));
      return -1;
    }
    if (nbytes > NPY_MAX_FILE_BYTES) {
      report_error("input '%s': %s: tensor too large (%zu bytes)", model_info->name, path, nbytes);
      return -1;
    }
    r->data = malloc(nbytes > 0 ? nbytes : 1);
    if (!r->data) {
      report_error("input '%s': out of memory (%zu bytes)", model_info->name, nbytes);
      return -1;
    }
    st = q8rt_tensor_proto_decode(r->file_bytes, size, &info, r->data, nbytes, &nbytes, &qerr);
    if (st != Q8RT_OK) {
      report_error("input '%s': %s: %s", model_info->name, path,
                   qerr.message[0] ? qerr.message : q8rt_status_string(st));
      return -1;
    }
    if (info.rank < 0 || info.rank > Q8RT_MAX_RANK) {
      report_error("input '%s': %s: bad rank %d", model_info->name, path, info.rank);
      return -1;
    }
    dtype = info.dtype;
    rank = info.rank;
    memcpy(shape, info.shape, sizeof(shape));
    data = r->data;
  } else {
    npy_array a;
    if (npy_parse(r->file_bytes, size, &a, err, sizeof(err)) != 0) {
      report_error("input '%s': %s: %s", model_info->name, path, err);
      return -1;
    }
    dtype = a.dtype;
    rank = a.rank;
    memcpy(shape, a.shape, sizeof(shape));
    data = a.data;
    nbytes = a.nbytes;
    if (a.fortran_order) {
      r->data = malloc(nbytes > 0 ? nbytes : 1);
      if (!r->data) {
        report_error("input '%s': out of memory (%zu bytes)", model_info->name, nbytes);
        return -1;
      }
      npy_copy_c_order(&a, r->data);
      data = r->data;
    }
  }
  if (dtype != model_info->dtype) {
    report_error("input '%s': %s has dtype %s but the model expects %s", model_info->name, path, q8rt_dtype_name(dtype),
                 q8rt_dtype_name(model_info->dtype));
    return -1;
  }
  if (stage_input(r, index, model_info->name, shape, rank, data, nbytes) != 0) return -1;
  free(r->file_bytes);
  r->file_bytes = NULL;
  free(r->data);
  r->data = NULL;
  return 0;
}

/* Bind every staged shape, then copy every staged input into the session. */
static int set_staged_inputs(runner *r) {
  q8rt_error qerr = {0};
  for (size_t i = 0; i < r->n_staged; i++) {
    q8rt_status st = q8rt_session_set_input_shape(r->session, i, r->staged[i].shape, r->staged[i].rank, &qerr);
    if (st != Q8RT_OK) {
      report_lib_error(NULL, st, &qerr);
      return -1;
    }
  }
  for (size_t i = 0; i < r->n_staged; i++) {
    const staged_input *s = &r->staged[i];
    q8rt_status st = q8rt_session_set_input(r->session, i, s->shape, s->rank, s->data, s->nbytes, &qerr);
    if (st != Q8RT_OK) {
      report_lib_error(NULL, st, &qerr);
      return -1;
    }
  }
  return 0;
}

/* Bind model input `index` with generated data. */
static int set_input_random(runner *r, size_t index, const q8rt_tensor_info *info) {
  int64_t shape[Q8RT_MAX_RANK];
  size_t item = q8rt_dtype_size(info->dtype);
  if (item == 0 || info->rank < 0 || info->rank > Q8RT_MAX_RANK) {
    report_error("input '%s': cannot generate data for dtype %s, rank %d", info->name, q8rt_dtype_name(info->dtype),
                 info->rank);
    return -1;
  }
  size_t count = 1;
  for (int i = 0; i < info->rank; i++) {
    shape[i] = info->shape[i] < 0 ? 1 : info->shape[i];
    if (shape[i] != 0 && count > NPY_MAX_FILE_BYTES / item / (uint64_t)shape[i]) {
      report_error("input '%s': shape too large to generate data", info->name);
      return -1;
    }
    count *= (size_t)shape[i];
  }
  size_t nbytes = count * item;
  r->data = malloc(nbytes > 0 ? nbytes : 1);
  if (!r->data) {
    report_error("input '%s': out of memory (%zu bytes)", info->name, nbytes);
    return -1;
  }
  fill_random(r->data, count, info->dtype, index);
  int rc = stage_input(r, index, info->name, shape, info->rank, r->data, nbytes);
  free(r->data);
  r->data = NULL;
  return rc;
}

static int run_once(runner *r) {
  q8rt_error qerr = {0};
  q8rt_status st = q8rt_session_run(r->session, &qerr);
  if (st != Q8RT_OK) {
    report_lib_error(NULL, st, &qerr);
    return -1;
  }
  return 0;
}

static void sanitize_name(const char *name, char *out, size_t size) {
  size_t n = 0;
  for (const char *c = name; *c && n + 1 < size; c++) {
    int ok = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '.' ||
             *c == '_' || *c == '-';
    out[n++] = ok ? *c : '_';
  }
  if (n == 0) out[n++] = '_';
  out[n] = '\0';
}

/* The process's peak resident set so far (Linux: KiB), -1 when unknown. */
static long peak_rss_kib(void) {
  struct rusage u;
  return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_maxrss : -1;
}

/* The resident set now (Linux /proc/self/statm), -1 where it cannot be read. */
static long rss_kib(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL) return -1;
  long size = 0, resident = -1;
  if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
  fclose(f);
  const long page = sysconf(_SC_PAGESIZE);
  return resident >= 0 && page > 0 ? resident * (page / 1024) : -1;
}

/* The cap for --max-memory: the option in MiB, else the machine's physical memory (0: unknown, no cap). */
static size_t memory_cap(const options *o) {
  if (o->max_memory_mib >= 0) return (size_t)o->max_memory_mib << 20;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0 || (unsigned long)pages > SIZE_MAX / (unsigned long)page) return 0;
  return (size_t)pages * (size_t)page;
}

static int run(const options *o) {
  runner r;
  memset(&r, 0, sizeof(r));
  int rc = 1;
  q8rt_error qerr = {0};
  q8rt_status st;
  long load_peak_rss_kib = -1;

  q8rt_model_options mopt;
  q8rt_model_options_init(&mopt);
  mopt.backend = o->backend;
  mopt.no_tables = o->no_tables;
  mopt.max_memory_bytes = memory_cap(o);
  st = q8rt_model_load_file(o->model_path, &mopt, &r.model, &qerr);
  if (st != Q8RT_OK) {
    report_lib_error(NULL, st, &qerr);
    goto done;
  }
  load_peak_rss_kib = peak_rss_kib();

  size_t n_in = q8rt_model_input_count(r.model);
  size_t n_out = q8rt_model_output_count(r.model);
  for (size_t i = 0; i < o->input_count; i++) {
    if (q8rt_model_find_input(r.model, o->inputs[i].name) < 0) {
      report_error("the model has no input named '%s'", o->inputs[i].name);
      goto done;
    }
  }

  for (size_t i = 0; o->metadata && i < q8rt_model_metadata_count(r.model); i++) {
    const char *key, *value;
    size_t len;
    if (q8rt_model_metadata_entry(r.model, i, &key, &value, &len, NULL) != Q8RT_OK) continue;
    printf("metadata %s bytes=%zu: ", key, len);
    size_t n = len < 60 ? len : 60;
    while (n > 0 && n < len && ((unsigned char)value[n] & 0xc0) == 0x80) n--; /* whole UTF-8 characters */
    for (size_t k = 0; k < n; k++) putchar((unsigned char)value[k] < 0x20 ? '.' : value[k]);
    printf("%s\n", n < len ? "..." : "");
  }

  if (o->explain) {
    size_t len = q8rt_model_explain(r.model, NULL, 0);
    r.text = malloc(len + 1);
    if (!r.text) {
      report_error("out of memory");
      goto done;
    }
    q8rt_model_explain(r.model, r.text, len + 1);
    fputs(r.text, stdout);
    if (len > 0 && r.text[len - 1] != '\n') fputc('\n', stdout);
    free(r.text);
    r.text = NULL;
  }

  q8rt_session_options sopt;
  q8rt_session_options_init(&sopt);
  sopt.threads = o->threads;
  sopt.profile = o->profile;
  sopt.max_memory_bytes = memory_cap(o);
  sopt.max_loop_iterations = (uint64_t)o->max_loop_iterations;
  st = q8rt_session_create(r.model, &sopt, &r.session, &qerr);
  if (st != Q8RT_OK) {
    report_lib_error(NULL, st, &qerr);
    goto done;
  }

  r.staged = calloc(n_in > 0 ? n_in : 1, sizeof(*r.staged));
  if (!r.staged) {
    report_error("out of memory");
    goto done;
  }
  r.n_staged = n_in;
  for (size_t i = 0; i < n_in; i++) {
    q8rt_tensor_info info;
    st = q8rt_model_input_info(r.model, i, &info, &qerr);
    if (st != Q8RT_OK) {
      report_lib_error(NULL, st, &qerr);
      goto done;
    }
    const char *path = NULL;
    for (size_t k = 0; k < o->input_count; k++)
      if (strcmp(o->inputs[k].name, info.name) == 0) path = o->inputs[k].path;
    if ((path ? set_input_from_file(&r, i, &info, path) : set_input_random(&r, i, &info)) != 0) goto done;
  }
  if (set_staged_inputs(&r) != 0) goto done;

  if (o->repeat > 0) {
    if (run_once(&r) != 0) goto done; /* warm-up */
    q8rt_run_stats rs0, rs1;
    q8rt_session_run_stats(r.session, &rs0);
    r.times = malloc((size_t)o->repeat * sizeof(double));
    if (!r.times) {
      report_error("out of memory");
      goto done;
    }
    const size_t n_steps = o->profile ? q8rt_session_profile(r.session, NULL, 0) : 0;
    if (n_steps > 0) {
      r.step_times = malloc((size_t)o->repeat * n_steps * sizeof(double));
      r.region_times = malloc(2 * (size_t)o->repeat * n_steps * sizeof(double));
      r.steps = calloc(n_steps, sizeof(*r.steps));
      r.thr = calloc(n_steps, sizeof(*r.thr));
      if (!r.step_times || !r.region_times || !r.steps || !r.thr) {
        report_error("out of memory");
        goto done;
      }
    }
    for (long k = 0; k < o->repeat; k++) {
      double t0 = now_ms();
      if (run_once(&r) != 0) goto done;
      r.times[k] = now_ms() - t0;
      if (n_steps > 0) {
        q8rt_session_profile(r.session, r.steps, n_steps);
        q8rt_session_profile_threads(r.session, r.thr, n_steps);
        const size_t rep = (size_t)o->repeat;
        for (size_t i = 0; i < n_steps; i++) {
          r.step_times[i * rep + (size_t)k] = r.steps[i].milliseconds;
          r.region_times[i * rep + (size_t)k] = r.thr[i].region_ms;
          r.region_times[(n_steps + i) * rep + (size_t)k] = r.thr[i].ideal_ms;
        }
      }
    }
    size_t n = (size_t)o->repeat;
    qsort(r.times, n, sizeof(double), compare_double);
    double median = n % 2 ? r.times[n / 2] : (r.times[n / 2 - 1] + r.times[n / 2]) / 2.0;
    printf("latency_ms median=%.4f min=%.4f runs=%zu\n", median, r.times[0], n);
    q8rt_session_run_stats(r.session, &rs1);
    if (o->threads > 1)
      printf(
          "run_stats shared=%zu alone=%zu contended=%zu regions=%zu solo_regions=%zu unhelped_regions=%zu "
          "solo_stretches=%zu wait_ms=%.3f\n",
          rs1.shared_runs - rs0.shared_runs, rs1.alone_runs - rs0.alone_runs, rs1.contended_runs - rs0.contended_runs,
          rs1.regions - rs0.regions, rs1.solo_regions - rs0.solo_regions, rs1.unhelped_regions - rs0.unhelped_regions,
          rs1.solo_stretches - rs0.solo_stretches, rs1.wait_ms - rs0.wait_ms);
  } else {
    if (run_once(&r) != 0) goto done;
  }

  if (o->output_dir && make_dirs(o->output_dir) != 0) goto done;
  for (size_t i = 0; i < n_out; i++) {
    q8rt_tensor_info info;
    const void *data = NULL;
    size_t nbytes = 0;
    st = q8rt_session_get_output(r.session, i, &info, &data, &nbytes, &qerr);
    if (st != Q8RT_OK) {
      report_lib_error(NULL, st, &qerr);
      goto done;
    }
    const char *name = info.name ? info.name : "";
    if (o->output_dir) {
      char safe[256], err[1024];
      sanitize_name(name, safe, sizeof(safe));
      size_t len = strlen(o->output_dir) + strlen(safe) + 6;
      r.path = malloc(len + 1);
      if (!r.path) {
        report_error("out of memory");
        goto done;
      }
      snprintf(r.path, len + 1, "%s/%s.npy", o->output_dir, safe);
      if (npy_write_file(r.path, info.dtype, info.shape, info.rank, data, nbytes, err, sizeof(err)) != 0) {
        report_error("output '%s': %s", name, err);
        goto done;
      }
      free(r.path);
      r.path = NULL;
    } else {
      char shape[Q8RT_MAX_RANK * 24 + 4];
      format_shape(info.shape, info.rank, shape, sizeof(shape));
      printf("output %s %s %s\n", name, q8rt_dtype_name(info.dtype), shape);
    }
  }

  if (o->profile) {
    const size_t n_all = q8rt_session_profile(r.session, NULL, 0);
    size_t n = n_all;
    if (r.steps == NULL) r.steps = calloc(n > 0 ? n : 1, sizeof(*r.steps));
    if (r.thr == NULL) r.thr = calloc(n > 0 ? n : 1, sizeof(*r.thr));
    if (!r.steps || !r.thr) {
      report_error("out of memory");
      goto done;
    }
    size_t got = q8rt_session_profile(r.session, r.steps, n);
    if (got < n) n = got;
    q8rt_session_profile_threads(r.session, r.thr, n);
    const int threaded = o->threads > 1;
    double total = 0.0, in_regions = 0.0, ideal = 0.0;
    for (size_t i = 0; i < n; i++) {
      const q8rt_step_profile *s = &r.steps[i];
      q8rt_step_threads *t = &r.thr[i];
      double ms = s->milliseconds;
      if (r.step_times != NULL && o->profile == Q8RT_PROFILE_SPLIT) {
        /* the run where the step was fastest: on a loaded machine the others include time the
         * thread was preempted, counted in whichever item it hit */
        const size_t m = (size_t)o->repeat;
        size_t best = 0;
        for (size_t k = 1; k < m; k++)
          if (r.step_times[i * m + k] < r.step_times[i * m + best]) best = k;
        ms = r.step_times[i * m + best];
        t->region_ms = r.region_times[i * m + best];
        t->ideal_ms = r.region_times[(n_all + i) * m + best];
      } else if (r.step_times != NULL) { /* median over the timed runs */
        const size_t m = (size_t)o->repeat;
        ms = median_of(r.step_times + i * m, m);
        t->region_ms = median_of(r.region_times + i * m, m);
      }
      const char *op = s->op_type && s->op_type[0] ? s->op_type : "-";
      const char *name = s->node_name && s->node_name[0] ? s->node_name : "-";
      printf("profile %s %s %s %.3f\n", op, name, s->kernel && s->kernel[0] ? s->kernel : "-", ms);
      if (threaded && o->profile == Q8RT_PROFILE_SPLIT) {
        printf("threads %s %s regions=%zu items=%zu region_ms=%.3f ideal_ms=%.3f\n", op, name, t->regions, t->items,
               t->region_ms, t->ideal_ms);
      } else if (threaded) {
        printf("threads %s %s regions=%zu items=%zu caller_items=%zu region_ms=%.3f\n", op, name, t->regions, t->items,
               t->caller_items, t->region_ms);
      }
      total += ms;
      /* a step's region time can exceed its median time by noise */
      in_regions += t->region_ms < ms ? t->region_ms : ms;
      ideal += t->ideal_ms < ms ? t->ideal_ms : ms;
    }
    printf("profile_total_ms %.3f steps=%zu\n", total, n);
    if (threaded && o->profile == Q8RT_PROFILE_SPLIT && total > 0.0) {
      const double serial = total - in_regions, th = (double)o->threads;
      printf("split serial_ms=%.3f serial_fraction=%.3f amdahl_%dt=%.2fx granular_%dt=%.2fx\n", serial, serial / total,
             o->threads, total / (serial + in_regions / th), o->threads, total / (serial + ideal));
    }
  }
  if (o->memory) {
    printf("memory model_bytes=%zu session_bytes=%zu load_peak_rss_kib=%ld peak_rss_kib=%ld rss_kib=%ld\n",
           q8rt_model_memory(r.model), q8rt_session_memory(r.session), load_peak_rss_kib, peak_rss_kib(), rss_kib());
  }

  if (fflush(stdout) != 0) {
    report_error("error writing to stdout: %s", strerror(errno));
    goto done;
  }
  rc = 0;
done:
  runner_free(&r);
  return rc;
}

int main(int argc, char **argv) {
  options o;
  if (parse_args(argc, argv, &o) != 0) {
    options_free(&o);
    return EXIT_USAGE;
  }
  if (o.help) {
    fputs(usage_text, stdout);
    options_free(&o);
    return 0;
  }
  int rc = run(&o);
  options_free(&o);
  return rc;
}
