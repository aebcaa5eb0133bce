/* q8rt-bench: time quantized convolutions in q8rt (every backend) and in XNNPACK directly, with
 * no Python and no model files; check every output byte for byte against q8rt's scalar reference.
 *
 *   q8rt-bench [SHAPE...] [--conv CIN,COUT,K,STRIDE,HW[,GROUP]]... [--threads N] [--json FILE]
 *              [--min-ms T] [--max-ms T] [--min-runs N] [--data DIR] [--output-dir DIR] [--list]
 *
 * SHAPE is a name of the built-in suite (`--list`; the shapes of `make bench`); --conv adds any
 * other (N=1, square HW, padding K/2 on every side, GROUP = CIN = COUT for depthwise). Without
 * shapes the whole suite runs. For each shape a QLinearConv model is built in memory: u8
 * activations (zero point 128), s8 per-output-channel weights (zero point 0) drawn from a fixed
 * seed over [-127, 127], int32 bias, u8 output with a scale that spreads it over the u8 range.
 * --data DIR takes x.npy (u8 NCHW), w.npy (s8), w_scale.npy (f32), bias.npy (i32) and params.txt
 * (x_scale x_zp y_scale y_zp as C floats/integers) from DIR instead (make bench passes its own).
 *
 * Rows per shape: q8rt with --backend auto, reference, avx2, avx512, neon and xnnpack (a backend
 * the CPU or the node cannot run prints n/a with q8rt's reason), then XNNPACK called directly
 * (qc8 NHWC convolution, input shifted to s8 and transposed outside the timing, only
 * xnn_run_operator timed). q8rt's time is a whole q8rt_session_run of the one-node model (NCHW
 * in and out, so it includes the layout transposes); "conv" is the QLinearConv step alone (its
 * profile). Timing: one warm-up run, then runs until --min-ms (default 300) with at least
 * --min-runs (5), stopping at --max-ms (2000); median and minimum. The reference backend is
 * timed only up to 20 MMAC (beyond, it runs once for the check). Exactness: every output is
 * compared with the reference backend's output ("exact" column: yes or the count of differing
 * bytes). Prints a table; --json FILE writes every number (--json -: JSON on stdout, table on stderr); --output-dir DIR
 * writes each output as DIR/<shape>/<impl>.npy. Exit status 1 on any inexact output or error.
 *
 *   q8rt-bench --core-latency
 *
 * instead measures how long a cache line takes to go from one CPU to another and back: two
 * threads, pinned to the first two CPUs of the process's affinity mask, pass a counter on one
 * cache line back and forth, 500 batches of 200 round trips; prints 'core_rtt_ns min=.. median=..'
 * over the batches (the minimum leaves out batches in which the OS ran something else on either
 * CPU). On this class of VM it is ~55-90 ns while the host keeps the two vCPUs close (one L3) and
 * ~290-380 ns while it keeps them far apart, for minutes at a time; two threads then share data
 * ~5x slower, which is what make bench's 2-thread figures depend on (bench.py records it per
 * model and round). */
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cpuinfo.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include "../npy.h"
#include "onnx-q8rt.pb-c.h"
#include "q8rt.h"

#define MAX_SHAPES 64
#define REFERENCE_TIMED_MAX_MMAC 20.0

typedef struct shape {
  char name[64];
  int cin, cout, k, stride, hw, group;
} shape;

/* The conv suite of `make bench` (examples/bench/bench.py SHAPES). */
static const shape SUITE[] = {
    {"7x7s2_3-64_224", 3, 64, 7, 2, 224, 1},     {"3x3_64-64_56", 64, 64, 3, 1, 56, 1},
    {"1x1_256-64_56", 256, 64, 1, 1, 56, 1},     {"3x3_256-256_14", 256, 256, 3, 1, 14, 1},
    {"1x1_24-144_56", 24, 144, 1, 1, 56, 1},     {"dw3x3_144_56", 144, 144, 3, 1, 56, 144},
    {"dw3x3s2_144_56", 144, 144, 3, 2, 56, 144}, {"1x1_144-32_28", 144, 32, 1, 1, 28, 1},
    {"dw5x5_144_56", 144, 144, 5, 1, 56, 144},   {"dw7x7_144_56", 144, 144, 7, 1, 56, 144},
};

static const struct {
  const char *name;
  q8rt_backend backend;
} BACKENDS[] = {{"auto", Q8RT_BACKEND_AUTO}, {"reference", Q8RT_BACKEND_REFERENCE},
                {"avx2", Q8RT_BACKEND_AVX2}, {"avx512", Q8RT_BACKEND_AVX512},
                {"neon", Q8RT_BACKEND_NEON}, {"xnnpack", Q8RT_BACKEND_XNNPACK}};
#define N_BACKENDS (sizeof(BACKENDS) / sizeof(BACKENDS[0]))

typedef struct options {
  int threads, min_runs;
  double min_ms, max_ms;
  const char *json, *data_dir, *output_dir;
} options;

/* One measured implementation on one shape. */
typedef struct meas {
  char impl[32];
  char status[8]; /* "ok", "n/a", "error" */
  char reason[512];
  char kernel[160];
  double median_ms, min_ms, conv_ms; /* conv_ms: the QLinearConv step's median (q8rt), else 0 */
  int runs;
  long mismatches; /* against the reference output; -1 when not compared */
} meas;

/* The data of one case: NCHW u8 input, ONNX-layout s8 weights, scales, bias. */
typedef struct conv_case {
  shape s;
  int oh;
  size_t x_bytes, w_count, y_bytes;
  uint8_t *x;
  int8_t *w;
  float *w_scale;
  int32_t *bias;
  float x_scale, y_scale;
  int x_zp, y_zp;
} conv_case;

__attribute__((format(printf, 1, 2))) static void die(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  fprintf(stderr, "q8rt-bench: error: %s\n", msg);
  exit(1);
}

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (p == NULL) die("out of memory");
  return p;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static double mmac(const shape *s) {
  int oh = (s->hw + 2 * (s->k / 2) - s->k) / s->stride + 1;
  return (double)s->cout * oh * oh * (s->cin / s->group) * s->k * s->k / 1e6;
}

/* ---- the case's data ----------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) { /* xorshift64*: fixed sequence on every machine */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

static void *load_npy(const char *dir, const char *file, q8rt_dtype dtype, size_t count) {
  char path[4096], err[256];
  if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path)) die("--data path too long");
  void *bytes = NULL;
  size_t size = 0;
  npy_array a;
  if (npy_read_file(path, NPY_MAX_FILE_BYTES, &bytes, &size, err, sizeof(err)) != 0 ||
      npy_parse(bytes, size, &a, err, sizeof(err)) != 0)
    die("%s: %s", path, err);
  size_t n = 1;
  for (int d = 0; d < a.rank; d++) n *= (size_t)a.shape[d];
  if (a.dtype != dtype || n != count)
    die("%s: %s with %zu elements, expected %s with %zu", path, npy_descr(a.dtype), n, npy_descr(dtype), count);
  void *out = xcalloc(count, q8rt_dtype_size(dtype));
  npy_copy_c_order(&a, out);
  free(bytes);
  return out;
}

static void make_case(const shape *s, const options *o, conv_case *c) {
  memset(c, 0, sizeof(*c));
  c->s = *s;
  if (s->cin % s->group || s->cout % s->group) die("%s: channels not divisible by the group", s->name);
  c->oh = (s->hw + 2 * (s->k / 2) - s->k) / s->stride + 1;
  if (c->oh < 1) die("%s: empty output", s->name);
  c->x_bytes = (size_t)s->cin * s->hw * s->hw;
  c->w_count = (size_t)s->cout * (s->cin / s->group) * s->k * s->k;
  c->y_bytes = (size_t)s->cout * c->oh * c->oh;
  if (o->data_dir != NULL) {
    c->x = load_npy(o->data_dir, "x.npy", Q8RT_DTYPE_UINT8, c->x_bytes);
    c->w = load_npy(o->data_dir, "w.npy", Q8RT_DTYPE_INT8, c->w_count);
    c->w_scale = load_npy(o->data_dir, "w_scale.npy", Q8RT_DTYPE_FLOAT32, (size_t)s->cout);
    c->bias = load_npy(o->data_dir, "bias.npy", Q8RT_DTYPE_INT32, (size_t)s->cout);
    char path[4096];
    snprintf(path, sizeof(path), "%s/params.txt", o->data_dir);
    FILE *f = fopen(path, "r");
    if (f == NULL || fscanf(f, "%f %d %f %d", &c->x_scale, &c->x_zp, &c->y_scale, &c->y_zp) != 4)
      die("%s: expected 'x_scale x_zp y_scale y_zp'", path);
    fclose(f);
    return;
  }
  rng_state = 0x9e3779b97f4a7c15ull ^ (uint64_t)(s->cin * 7919 + s->cout * 104729 + s->k * 31 + s->hw);
  c->x = xcalloc(c->x_bytes, 1);
  c->w = xcalloc(c->w_count, 1);
  c->w_scale = xcalloc((size_t)s->cout, sizeof(float));
  c->bias = xcalloc((size_t)s->cout, sizeof(int32_t));
  for (size_t i = 0; i < c->x_bytes; i++) c->x[i] = (uint8_t)rnd();
  for (size_t i = 0; i < c->w_count; i++) c->w[i] = (int8_t)((int)(rnd() % 255) - 127);
  c->x_scale = 0.02f;
  c->x_zp = 128;
  for (int m = 0; m < s->cout; m++) {
    c->w_scale[m] = 0.001f * (float)(1 + rnd() % 16) / 8.0f;
    c->bias[m] = (int32_t)(rnd() % 20001) - 10000;
  }
  /* uniform x - 128 and w have a standard deviation ~74 and ~73: the accumulator's is about
   * 74 * 73 * sqrt(K); put +-3 of those across the u8 range */
  double k = (double)(s->cin / s->group) * s->k * s->k;
  c->y_scale = (float)(c->x_scale * 0.001 * 74.0 * 73.0 * sqrt(k) * 3.0 / 127.0);
  c->y_zp = 128;
}

static void free_case(conv_case *c) {
  free(c->x);
  free(c->w);
  free(c->w_scale);
  free(c->bias);
}

/* ---- the one-node model -------------------------------------------------------------------- */

typedef struct tensor_store {
  Onnx__TensorProto t[8];
  Onnx__TensorProto *p[8];
  int64_t dims[8][4];
  int n;
} tensor_store;

static void add_tensor(tensor_store *st, const char *name, int dtype, int rank, const int64_t *dims, const void *data,
                       size_t nbytes) {
  Onnx__TensorProto *t = &st->t[st->n];
  onnx__tensor_proto__init(t);
  t->name = (char *)(uintptr_t)name;
  t->has_data_type = 1;
  t->data_type = dtype;
  t->n_dims = (size_t)rank;
  memcpy(st->dims[st->n], dims, sizeof(int64_t) * (size_t)rank);
  t->dims = st->dims[st->n];
  t->has_raw_data = 1;
  t->raw_data.data = (uint8_t *)(uintptr_t)data;
  t->raw_data.len = nbytes;
  st->p[st->n] = t;
  st->n++;
}

static uint8_t *build_model(const conv_case *c, size_t *size) {
  const shape *s = &c->s;
  tensor_store st;
  memset(&st, 0, sizeof(st));
  const uint8_t x_zp = (uint8_t)c->x_zp, y_zp = (uint8_t)c->y_zp;
  const int64_t scalar[1] = {0}, per_m[1] = {s->cout};
  const int64_t w_dims[4] = {s->cout, s->cin / s->group, s->k, s->k};
  int8_t *w_zp = xcalloc((size_t)s->cout, 1);
  add_tensor(&st, "x_scale", 1, 0, scalar, &c->x_scale, 4);
  add_tensor(&st, "x_zp", 2, 0, scalar, &x_zp, 1);
  add_tensor(&st, "w", 3, 4, w_dims, c->w, c->w_count);
  add_tensor(&st, "w_scale", 1, 1, per_m, c->w_scale, 4 * (size_t)s->cout);
  add_tensor(&st, "w_zp", 3, 1, per_m, w_zp, (size_t)s->cout);
  add_tensor(&st, "y_scale", 1, 0, scalar, &c->y_scale, 4);
  add_tensor(&st, "y_zp", 2, 0, scalar, &y_zp, 1);
  add_tensor(&st, "bias", 6, 1, per_m, c->bias, 4 * (size_t)s->cout);

  int64_t ks[2] = {s->k, s->k}, strides[2] = {s->stride, s->stride};
  int64_t pads[4] = {s->k / 2, s->k / 2, s->k / 2, s->k / 2};
  Onnx__AttributeProto at[4], *atp[4];
  const char *an[4] = {"kernel_shape", "strides", "pads", "group"};
  int64_t *av[3] = {ks, strides, pads};
  const size_t alen[3] = {2, 2, 4};
  for (int i = 0; i < 4; i++) {
    onnx__attribute_proto__init(&at[i]);
    at[i].name = (char *)(uintptr_t)an[i];
    at[i].has_type = 1;
    if (i < 3) {
      at[i].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
      at[i].n_ints = alen[i];
      at[i].ints = av[i];
    } else {
      at[i].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
      at[i].has_i = 1;
      at[i].i = s->group;
    }
    atp[i] = &at[i];
  }
  const char *ins[9] = {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "bias"};
  const char *outs[1] = {"y"};
  Onnx__NodeProto node;
  onnx__node_proto__init(&node);
  Onnx__NodeProto *nodep = &node;
  node.op_type = (char *)"QLinearConv";
  node.name = (char *)"conv";
  node.n_input = 9;
  node.input = (char **)(uintptr_t)ins;
  node.n_output = 1;
  node.output = (char **)(uintptr_t)outs;
  node.n_attribute = 4;
  node.attribute = atp;

  Onnx__TensorShapeProto__Dimension dim[2][4], *dimp[2][4];
  Onnx__TensorShapeProto shp[2];
  Onnx__TypeProto__Tensor tt[2];
  Onnx__TypeProto ty[2];
  Onnx__ValueInfoProto vi[2], *vip[2];
  const int64_t io_dims[2][4] = {{1, s->cin, s->hw, s->hw}, {1, s->cout, c->oh, c->oh}};
  for (int v = 0; v < 2; v++) {
    for (int d = 0; d < 4; d++) {
      onnx__tensor_shape_proto__dimension__init(&dim[v][d]);
      dim[v][d].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      dim[v][d].dim_value = io_dims[v][d];
      dimp[v][d] = &dim[v][d];
    }
    onnx__tensor_shape_proto__init(&shp[v]);
    shp[v].n_dim = 4;
    shp[v].dim = dimp[v];
    onnx__type_proto__tensor__init(&tt[v]);
    tt[v].has_elem_type = 1;
    tt[v].elem_type = 2;
    tt[v].shape = &shp[v];
    onnx__type_proto__init(&ty[v]);
    ty[v].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    ty[v].tensor_type = &tt[v];
    onnx__value_info_proto__init(&vi[v]);
    vi[v].name = (char *)(uintptr_t)(v ? "y" : "x");
    vi[v].type = &ty[v];
    vip[v] = &vi[v];
  }
  Onnx__GraphProto g;
  onnx__graph_proto__init(&g);
  g.name = (char *)"q8rt-bench";
  g.n_node = 1;
  g.node = &nodep;
  g.n_initializer = (size_t)st.n;
  g.initializer = st.p;
  g.n_input = 1;
  g.input = &vip[0];
  g.n_output = 1;
  g.output = &vip[1];
  Onnx__OperatorSetIdProto opset, *opsetp = &opset;
  onnx__operator_set_id_proto__init(&opset);
  opset.domain = (char *)"";
  opset.has_version = 1;
  opset.version = 13;
  Onnx__ModelProto m;
  onnx__model_proto__init(&m);
  m.has_ir_version = 1;
  m.ir_version = 8;
  m.n_opset_import = 1;
  m.opset_import = &opsetp;
  m.graph = &g;
  *size = onnx__model_proto__get_packed_size(&m);
  uint8_t *buf = xcalloc(*size, 1);
  onnx__model_proto__pack(&m, buf);
  free(w_zp);
  return buf;
}

/* ---- timing -------------------------------------------------------------------------------- */

/* How many timed runs after a warm-up that took `warm` ms. */
static int runs_for(double warm, const options *o) {
  double w = warm > 1e-3 ? warm : 1e-3;
  long runs = (long)ceil(o->min_ms / w);
  if (runs < o->min_runs) runs = o->min_runs;
  if ((double)runs * w > o->max_ms) runs = (long)(o->max_ms / w);
  if (runs < 3) runs = 3;
  if (runs > 100000) runs = 100000;
  return (int)runs;
}

static void set_status(meas *m, const char *status, const char *fmt, ...) {
  snprintf(m->status, sizeof(m->status), "%s", status);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->reason, sizeof(m->reason), fmt, ap);
  va_end(ap);
}

/* Run the model on one backend; `out` receives the output (c->y_bytes). timed = 0: one run. */
static void run_q8rt(const conv_case *c, const uint8_t *bytes, size_t bytes_size, q8rt_backend backend, int timed,
                     const options *o, meas *m, uint8_t *out) {
  q8rt_model_options mo;
  q8rt_model_options_init(&mo);
  mo.backend = backend;
  q8rt_session_options so;
  q8rt_session_options_init(&so);
  so.threads = o->threads;
  so.profile = 1;
  q8rt_model *model = NULL;
  q8rt_session *sess = NULL;
  q8rt_error err;
  double *t = NULL, *tc = NULL;
  memset(&err, 0, sizeof(err));
  if (q8rt_model_load_memory(bytes, bytes_size, &mo, &model, &err) != Q8RT_OK) {
    set_status(m, err.status == Q8RT_ERROR_UNSUPPORTED ? "n/a" : "error", "%s", err.message);
    return;
  }
  /* the kernel the plan chose for the conv (the explain line of the QLinearConv step) */
  size_t n = q8rt_model_explain(model, NULL, 0);
  char *plan = xcalloc(n + 1, 1);
  q8rt_model_explain(model, plan, n + 1);
  for (char *line = strtok(plan, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    char *p = strstr(line, "QLinearConv");
    if (p == NULL) continue;
    p = strstr(p, " conv ");
    if (p != NULL) {
      p += 6;
      p += strspn(p, " ");
      size_t len = strcspn(p, ":");
      snprintf(m->kernel, sizeof(m->kernel), "%.*s", (int)len, p);
    }
  }
  free(plan);
  const int64_t xs[4] = {1, c->s.cin, c->s.hw, c->s.hw};
  const void *y;
  size_t ybytes;
  q8rt_tensor_info info;
  if (q8rt_session_create(model, &so, &sess, &err) != Q8RT_OK ||
      q8rt_session_set_input(sess, 0, xs, 4, c->x, c->x_bytes, &err) != Q8RT_OK) {
    set_status(m, "error", "%s", err.message);
    goto done;
  }
  double t0 = now_ms();
  if (q8rt_session_run(sess, &err) != Q8RT_OK) {
    set_status(m, "error", "%s", err.message);
    goto done;
  }
  double warm = now_ms() - t0;
  if (q8rt_session_get_output(sess, 0, &info, &y, &ybytes, &err) != Q8RT_OK || ybytes != c->y_bytes) {
    set_status(m, "error", "output: %s", err.message);
    goto done;
  }
  memcpy(out, y, ybytes);
  int runs = timed ? runs_for(warm, o) : 0;
  t = xcalloc((size_t)runs + 1, sizeof(double));
  tc = xcalloc((size_t)runs + 1, sizeof(double));
  for (int r = 0; r < runs; r++) {
    t0 = now_ms();
    if (q8rt_session_run(sess, &err) != Q8RT_OK) {
      set_status(m, "error", "%s", err.message);
      goto done;
    }
    t[r] = now_ms() - t0;
    q8rt_step_profile steps[16];
    size_t ns = q8rt_session_profile(sess, steps, 16);
    for (size_t i = 0; i < ns && i < 16; i++)
      if (strcmp(steps[i].op_type, "QLinearConv") == 0) tc[r] += steps[i].milliseconds;
  }
  if (runs > 0) {
    m->runs = runs;
    m->median_ms = median(t, runs);
    m->min_ms = t[0];
    m->conv_ms = median(tc, runs);
  }
  set_status(m, "ok", "%s", timed ? "" : "not timed (scalar reference, > 20 MMAC): run once for the check");
done:
  free(t);
  free(tc);
  q8rt_session_free(sess);
  q8rt_model_free(model);
}

/* XNNPACK's qc8 convolution, called directly: input shifted to s8 and made NHWC, weights to [G][M/G][KH][KW][C/G]. */
static void run_xnnpack(const conv_case *c, const options *o, pthreadpool_t pool, meas *m, uint8_t *out) {
  const shape *s = &c->s;
  const size_t C = (size_t)s->cin, H = (size_t)s->hw, M = (size_t)s->cout, G = (size_t)s->group, Cg = C / G;
  const size_t K = (size_t)s->k, OH = (size_t)c->oh, pad = K / 2;
  int8_t *xin = xcalloc(H * H * C + 64, 1), *wx = xcalloc(M * Cg * K * K, 1), *yout = xcalloc(OH * OH * M + 64, 1);
  for (size_t ch = 0; ch < C; ch++)
    for (size_t p = 0; p < H * H; p++) xin[p * C + ch] = (int8_t)(c->x[ch * H * H + p] ^ 0x80);
  for (size_t mm = 0; mm < M; mm++)
    for (size_t ci = 0; ci < Cg; ci++)
      for (size_t kk = 0; kk < K * K; kk++) wx[(mm * K * K + kk) * Cg + ci] = c->w[(mm * Cg + ci) * K * K + kk];
  xnn_operator_t op = NULL;
  enum xnn_status st = xnn_create_convolution2d_nhwc_qc8(
      (uint32_t)pad, (uint32_t)pad, (uint32_t)pad, (uint32_t)pad, (uint32_t)K, (uint32_t)K, (uint32_t)s->stride,
      (uint32_t)s->stride, 1, 1, (uint32_t)G, Cg, M / G, C, M, (int8_t)(c->x_zp - 128), c->x_scale, c->w_scale, wx,
      c->bias, (int8_t)(c->y_zp - 128), c->y_scale, INT8_MIN, INT8_MAX, 0, &op);
  if (st != xnn_status_success) {
    set_status(m, "n/a", "xnn_create_convolution2d_nhwc_qc8 refused the shape (status %d)", (int)st);
    goto done;
  }
  if (xnn_setup_convolution2d_nhwc_qc8(op, 1, H, H, xin, yout, pool) != xnn_status_success) {
    set_status(m, "error", "xnn_setup_convolution2d_nhwc_qc8 failed");
    goto done;
  }
  double t0 = now_ms();
  if (xnn_run_operator(op, pool) != xnn_status_success) {
    set_status(m, "error", "xnn_run_operator failed");
    goto done;
  }
  int runs = runs_for(now_ms() - t0, o);
  double *t = xcalloc((size_t)runs, sizeof(double));
  for (int r = 0; r < runs; r++) {
    t0 = now_ms();
    xnn_run_operator(op, pool);
    t[r] = now_ms() - t0;
  }
  m->runs = runs;
  m->median_ms = median(t, runs);
  m->min_ms = t[0];
  free(t);
  for (size_t mm = 0; mm < M; mm++)
    for (size_t p = 0; p < OH * OH; p++) out[mm * OH * OH + p] = (uint8_t)yout[p * M + mm] ^ 0x80;
  snprintf(m->kernel, sizeof(m->kernel), "xnn_create_convolution2d_nhwc_qc8");
  set_status(m, "ok", "%s", "");
done:
  xnn_delete_operator(op);
  free(xin);
  free(wx);
  free(yout);
}

/* ---- output -------------------------------------------------------------------------------- */

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      fprintf(f, "\\u%04x", (unsigned char)*s);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}

static void save_output(const options *o, const shape *s, const char *impl, const uint8_t *y, const conv_case *c) {
  if (o->output_dir == NULL) return;
  char path[4096], err[256];
  if (snprintf(path, sizeof(path), "%s/%s", o->output_dir, s->name) >= (int)sizeof(path)) die("--output-dir too long");
  mkdir(o->output_dir, 0755);
  mkdir(path, 0755);
  if (snprintf(path, sizeof(path), "%s/%s/%s.npy", o->output_dir, s->name, impl) >= (int)sizeof(path))
    die("--output-dir too long");
  const int64_t dims[4] = {1, s->cout, c->oh, c->oh};
  if (npy_write_file(path, Q8RT_DTYPE_UINT8, dims, 4, y, c->y_bytes, err, sizeof(err)) != 0) die("%s: %s", path, err);
}

static int parse_int(const char *s, int lo, int hi, const char *what) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || (*end && *end != ',') || v < lo || v > hi)
    die("%s: expected an integer in [%d, %d]", what, lo, hi);
  return (int)v;
}

/* ---- --core-latency ---------------------------------------------------------------------------- */

#define RTT_BATCH 200
#define RTT_BATCHES 500

typedef struct {
  _Alignas(64) _Atomic long ball; /* odd: the pinger's serve, even: the ponger's return */
  int cpu;
  int pinned;
} rtt_line;

static double rtt_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int pin_to(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return pthread_setaffinity_np(pthread_self(), sizeof(s), &s) == 0;
}

static void *rtt_ponger(void *arg) {
  rtt_line *l = arg;
  l->pinned = pin_to(l->cpu);
  for (long i = 0; i < (long)RTT_BATCH * RTT_BATCHES; i++) {
    while (atomic_load_explicit(&l->ball, memory_order_acquire) != 2 * i + 1) {
    }
    atomic_store_explicit(&l->ball, 2 * i + 2, memory_order_release);
  }
  return NULL;
}

static int core_latency(void) {
  cpu_set_t mask;
  int cpus[2], n = 0;
  if (pthread_getaffinity_np(pthread_self(), sizeof(mask), &mask) != 0) die("core latency: no affinity mask");
  for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
    if (CPU_ISSET(c, &mask)) cpus[n++] = c;
  if (n < 2) die("core latency: needs two CPUs (the affinity mask has %d)", n);
  static rtt_line line;
  static double batch_ns[RTT_BATCHES];
  atomic_store(&line.ball, 0);
  line.cpu = cpus[1];
  if (!pin_to(cpus[0])) die("core latency: cannot pin to CPU %d", cpus[0]);
  pthread_t t;
  if (pthread_create(&t, NULL, rtt_ponger, &line) != 0) die("core latency: cannot start a thread");
  long i = 0;
  for (int b = 0; b < RTT_BATCHES; b++) {
    const double t0 = rtt_now_ns();
    for (int k = 0; k < RTT_BATCH; k++, i++) {
      atomic_store_explicit(&line.ball, 2 * i + 1, memory_order_release);
      while (atomic_load_explicit(&line.ball, memory_order_acquire) != 2 * i + 2) {
      }
    }
    batch_ns[b] = (rtt_now_ns() - t0) / RTT_BATCH;
  }
  pthread_join(t, NULL);
  if (!line.pinned) die("core latency: cannot pin to CPU %d", cpus[1]);
  qsort(batch_ns, RTT_BATCHES, sizeof(double), cmp_double);
  printf("core_rtt_ns min=%.0f median=%.0f cpus=%d,%d\n", batch_ns[0], batch_ns[RTT_BATCHES / 2], cpus[0], cpus[1]);
  return 0;
}

static void usage(void) {
  printf(
      "usage: q8rt-bench [SHAPE...] [--conv CIN,COUT,K,STRIDE,HW[,GROUP]]... [--threads N] [--json FILE|-]\n"
      "                  [--min-ms T] [--max-ms T] [--min-runs N] [--data DIR] [--output-dir DIR] [--list]\n"
      "       q8rt-bench --core-latency\n");
}

int main(int argc, char **argv) {
  options o = {1, 5, 300.0, 2000.0, NULL, NULL, NULL};
  shape shapes[MAX_SHAPES];
  int n_shapes = 0;
  const int n_suite = (int)(sizeof(SUITE) / sizeof(SUITE[0]));
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage();
      return 0;
    }
    if (!strcmp(a, "--core-latency")) return core_latency();
    if (!strcmp(a, "--list")) {
      for (int k = 0; k < n_suite; k++)
        printf("%-16s cin %3d cout %3d k %d stride %d hw %3d group %3d  %.1f MMAC\n", SUITE[k].name, SUITE[k].cin,
               SUITE[k].cout, SUITE[k].k, SUITE[k].stride, SUITE[k].hw, SUITE[k].group, mmac(&SUITE[k]));
      return 0;
    }
    if (a[0] != '-') {
      int k = 0;
      while (k < n_suite && strcmp(SUITE[k].name, a) != 0) k++;
      if (k == n_suite) die("unknown shape '%s' (--list shows the suite; --conv gives any other)", a);
      if (n_shapes == MAX_SHAPES) die("at most %d shapes", MAX_SHAPES);
      shapes[n_shapes++] = SUITE[k];
      continue;
    }
    if (i + 1 >= argc) die("%s expects a value", a);
    const char *v = argv[++i];
    if (!strcmp(a, "--conv")) {
      if (n_shapes == MAX_SHAPES) die("at most %d shapes", MAX_SHAPES);
      shape *s = &shapes[n_shapes++];
      int f[6] = {0, 0, 0, 0, 0, 1}, nf = 0;
      for (const char *p = v; nf < 6; nf++) {
        f[nf] = parse_int(p, 1, 1 << 16, "--conv CIN,COUT,K,STRIDE,HW[,GROUP]");
        p = strchr(p, ',');
        if (p == NULL) {
          nf++;
          break;
        }
        p++;
      }
      if (nf < 5) die("--conv expects CIN,COUT,K,STRIDE,HW[,GROUP], got '%s'", v);
      *s = (shape){"", f[0], f[1], f[2], f[3], f[4], nf == 6 ? f[5] : 1};
      snprintf(s->name, sizeof(s->name), "conv%dx%ds%dg%d_%d-%d_%d", s->k, s->k, s->stride, s->group, s->cin, s->cout,
               s->hw);
    } else if (!strcmp(a, "--threads"))
      o.threads = parse_int(v, 1, 256, a);
    else if (!strcmp(a, "--min-runs"))
      o.min_runs = parse_int(v, 1, 100000, a);
    else if (!strcmp(a, "--min-ms"))
      o.min_ms = parse_int(v, 0, 3600000, a);
    else if (!strcmp(a, "--max-ms"))
      o.max_ms = parse_int(v, 1, 3600000, a);
    else if (!strcmp(a, "--json"))
      o.json = v;
    else if (!strcmp(a, "--data"))
      o.data_dir = v;
    else if (!strcmp(a, "--output-dir"))
      o.output_dir = v;
    else
      die("unknown option %s (--help)", a);
  }
  if (n_shapes == 0) {
    for (int k = 0; k < n_suite; k++) shapes[n_shapes++] = SUITE[k];
  }
  if (o.data_dir != NULL && n_shapes != 1) die("--data DIR describes one shape: name exactly one");

  /* with --json - the JSON owns stdout and the table goes to stderr */
  FILE *table = o.json != NULL && strcmp(o.json, "-") == 0 ? stderr : stdout;
  if (!cpuinfo_initialize()) die("cpuinfo_initialize failed");
  const struct cpuinfo_package *pkg = cpuinfo_get_package(0);
  const char *cpu = pkg != NULL && pkg->name[0] ? pkg->name : "unknown CPU";
  char flags[256] = "";
#if defined(__x86_64__) || defined(__i386__)
  snprintf(flags, sizeof(flags), "avx2 %s, avx512f %s, avx512vnni %s", cpuinfo_has_x86_avx2() ? "yes" : "no",
           cpuinfo_has_x86_avx512f() ? "yes" : "no", cpuinfo_has_x86_avx512vnni() ? "yes" : "no");
#elif defined(__aarch64__) || defined(__arm__)
  snprintf(flags, sizeof(flags), "neon %s, dotprod %s", cpuinfo_has_arm_neon() ? "yes" : "no",
           cpuinfo_has_arm_neon_dot() ? "yes" : "no");
#endif
  if (xnn_initialize(NULL) != xnn_status_success) die("xnn_initialize failed");
  pthreadpool_t pool = o.threads > 1 ? pthreadpool_create((size_t)o.threads) : NULL;
  fprintf(table,
          "q8rt-bench: q8rt %s, %s (%s), %d thread%s; GMAC/s = MACs / median time; exact = same bytes as the "
          "reference backend\n",
          q8rt_version(), cpu, flags, o.threads, o.threads == 1 ? "" : "s");

  FILE *js = NULL;
  if (o.json != NULL) {
    js = strcmp(o.json, "-") == 0 ? stdout : fopen(o.json, "w");
    if (js == NULL) die("cannot write %s", o.json);
  }
  if (js != NULL) {
    fprintf(js, "{\"q8rt_version\": \"%s\", \"cpu\": ", q8rt_version());
    json_str(js, cpu);
    fprintf(js, ", \"flags\": \"%s\", \"threads\": %d, \"shapes\": [", flags, o.threads);
  }
  int failures = 0;
  for (int si = 0; si < n_shapes; si++) {
    const shape *s = &shapes[si];
    conv_case c;
    make_case(s, &o, &c);
    size_t model_size;
    uint8_t *model = build_model(&c, &model_size);
    meas ms[N_BACKENDS + 1];
    memset(ms, 0, sizeof(ms));
    uint8_t *ref = xcalloc(c.y_bytes, 1), *y = xcalloc(c.y_bytes, 1);
    double mm = mmac(s);
    const char *kind = s->group == 1 ? "" : s->group == s->cin && s->group == s->cout ? "depthwise " : "grouped ";
    fprintf(table, "\n%s: %s%dx%d stride %d, %d->%d, %dx%d -> %dx%d, %.1f MMAC\n", s->name, kind, s->k, s->k, s->stride,
            s->cin, s->cout, s->hw, s->hw, c.oh, c.oh, mm);
    fprintf(table, "  %-22s %9s %9s %9s %7s %7s  %-7s %s\n", "implementation", "median_ms", "min_ms", "conv_ms",
            "GMAC/s", "runs", "exact", "kernel / note");
    /* the reference first: every other output is checked against it */
    int order[N_BACKENDS] = {1, 0, 2, 3, 4, 5};
    int have_ref = 0;
    for (size_t bi = 0; bi <= N_BACKENDS; bi++) {
      meas *m = &ms[bi];
      m->mismatches = -1;
      if (bi < N_BACKENDS) {
        int b = order[bi];
        snprintf(m->impl, sizeof(m->impl), "q8rt-%s", BACKENDS[b].name);
        int timed = BACKENDS[b].backend != Q8RT_BACKEND_REFERENCE || mm <= REFERENCE_TIMED_MAX_MMAC;
        run_q8rt(&c, model, model_size, BACKENDS[b].backend, timed, &o, m, bi == 0 ? ref : y);
        if (bi == 0) {
          if (strcmp(m->status, "ok") != 0) die("%s: the reference backend failed: %s", s->name, m->reason);
          have_ref = 1;
        }
      } else {
        snprintf(m->impl, sizeof(m->impl), "xnnpack-direct");
        run_xnnpack(&c, &o, pool, m, y);
      }
      const uint8_t *got = bi == 0 ? ref : y;
      if (strcmp(m->status, "ok") == 0) {
        if (have_ref) {
          m->mismatches = 0;
          for (size_t i = 0; i < c.y_bytes; i++) m->mismatches += got[i] != ref[i];
        }
        if (m->mismatches != 0) failures++;
        save_output(&o, s, m->impl, got, &c);
      } else if (strcmp(m->status, "error") == 0) {
        failures++;
      }
      char exact[32], gm[32] = "", med[32] = "", mn[32] = "", cv[32] = "", runs[32] = "";
      snprintf(exact, sizeof(exact), "%s", strcmp(m->status, "ok") ? m->status : m->mismatches == 0 ? "yes" : "NO");
      if (m->mismatches > 0) snprintf(exact, sizeof(exact), "NO %ld", m->mismatches);
      if (m->runs > 0) {
        snprintf(med, sizeof(med), "%.4f", m->median_ms);
        snprintf(mn, sizeof(mn), "%.4f", m->min_ms);
        snprintf(gm, sizeof(gm), "%.1f", mm / m->median_ms);
        snprintf(runs, sizeof(runs), "%d", m->runs);
        if (m->conv_ms > 0) snprintf(cv, sizeof(cv), "%.4f", m->conv_ms);
      }
      fprintf(table, "  %-22s %9s %9s %9s %7s %7s  %-7s %s%s%s\n", m->impl, med, mn, cv, gm, runs, exact, m->kernel,
              m->kernel[0] && m->reason[0] ? "; " : "", m->reason);
    }
    if (js != NULL) {
      fprintf(js,
              "%s\n  {\"name\": \"%s\", \"cin\": %d, \"cout\": %d, \"k\": %d, \"stride\": %d, \"hw\": %d, "
              "\"group\": %d, \"mmac\": %.4f, \"results\": [",
              si ? "," : "", s->name, s->cin, s->cout, s->k, s->stride, s->hw, s->group, mm);
      for (size_t bi = 0; bi <= N_BACKENDS; bi++) {
        const meas *m = &ms[bi];
        fprintf(js,
                "%s\n    {\"impl\": \"%s\", \"status\": \"%s\", \"median_ms\": %.6f, \"min_ms\": %.6f, "
                "\"conv_ms\": %.6f, \"runs\": %d, \"gmacs\": %.4f, \"mismatches\": %ld, \"kernel\": ",
                bi ? "," : "", m->impl, m->status, m->median_ms, m->min_ms, m->conv_ms, m->runs,
                m->runs > 0 ? mm / m->median_ms : 0.0, m->mismatches);
        json_str(js, m->kernel);
        fprintf(js, ", \"reason\": ");
        json_str(js, m->reason);
        fprintf(js, "}");
      }
      fprintf(js, "]}");
    }
    free(ref);
    free(y);
    free(model);
    free_case(&c);
  }
  if (js != NULL) {
    fprintf(js, "\n], \"failures\": %d}\n", failures);
    if (js != stdout && fclose(js) != 0) die("cannot write %s", o.json);
  }
  if (pool != NULL) pthreadpool_destroy(pool);
  xnn_deinitialize();
  fprintf(table, "\nq8rt-bench: %d shape%s, %s\n", n_shapes, n_shapes == 1 ? "" : "s",
          failures ? "SOME OUTPUTS WRONG OR FAILED (see above)" : "every output exact");
  return failures ? 1 : 0;
}
