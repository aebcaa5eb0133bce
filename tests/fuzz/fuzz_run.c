/* libFuzzer target for the run path: valid models x fuzzed bindings.
 *
 * The models are those of a list file (Q8RT_FUZZ_RUN_LIST, default
 * build/fuzz/run-models/list.txt, written by gen_run_models.py): every op of the conformance
 * lists, with and without symbolic input dims, the QLinearConv parity cases and the real models.
 * They are loaded once, on first use, and shared (a model is immutable).
 *
 * The input decodes as: model index (2 bytes), flags, then per binding round (1-3 rounds on one
 * session) a dimension byte per input axis (symbolic axes get small, tile-edge or hostile values;
 * a static axis is occasionally given a wrong one), then the bytes input data is made of (float
 * inputs get NaNs, infinities, denormals, signed zeros, extremes). Flags choose the thread count
 * (1-4), set_input vs the zero-copy buffer, a wrong byte count, a caller arena that is too small,
 * and a second single-thread session whose outputs must match byte for byte.
 *
 * Every outcome must be a status (with a message); a crash, hang, sanitizer report, allocation
 * beyond the budgets or an output that depends on the thread count is a finding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "q8rt.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_MODELS 8192
#define ARENA_LIMIT ((size_t)64 << 20)

static char *g_paths[MAX_MODELS];
static q8rt_model *g_models[MAX_MODELS];
static signed char g_state[MAX_MODELS]; /* 0 not tried, 1 loaded, -1 refused */
static size_t g_count;
static int g_verbose; /* Q8RT_FUZZ_VERBOSE=1: print each binding (for triage) */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  g_verbose = getenv("Q8RT_FUZZ_VERBOSE") != NULL;
  const char *list = getenv("Q8RT_FUZZ_RUN_LIST");
  if (list == NULL) list = "build/fuzz/run-models/list.txt";
  FILE *f = fopen(list, "r");
  if (f == NULL) {
    fprintf(stderr, "fuzz_run: cannot open the model list %s (run tests/fuzz/gen_run_models.py)\n", list);
    exit(1);
  }
  char line[4096];
  while (g_count < MAX_MODELS && fgets(line, sizeof(line), f) != NULL) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] == '\0') continue;
    g_paths[g_count] = strdup(line);
    if (g_paths[g_count] != NULL) g_count++;
  }
  fclose(f);
  if (g_count == 0) {
    fprintf(stderr, "fuzz_run: %s lists no models\n", list);
    exit(1);
  }
  return 0;
}

static const q8rt_model *model_at(size_t i) {
  if (g_state[i] == 0) {
    q8rt_error err;
    g_state[i] = q8rt_model_load_file(g_paths[i], NULL, &g_models[i], &err) == Q8RT_OK ? 1 : -1;
  }
  return g_state[i] == 1 ? g_models[i] : NULL;
}

/* A failing call must say why. */
static void check_failure(q8rt_status st, const q8rt_error *err) {
  if (st != Q8RT_OK && err->message[0] == '\0') FZ_FAIL();
}

#define MAX_INPUTS 16
#define WORK_LIMIT ((double)(1 << 19))
#define RUN_ARENA_LIMIT ((size_t)16 << 20)

typedef struct binding {
  int64_t shape[MAX_INPUTS][Q8RT_MAX_RANK];
  int rank[MAX_INPUTS];
} binding;

static void choose_shapes(fz_reader *r, const q8rt_model *m, size_t n_in, binding *b) {
  for (size_t i = 0; i < n_in; i++) {
    q8rt_tensor_info info;
    q8rt_model_input_info(m, i, &info, NULL);
    b->rank[i] = info.rank;
    for (int d = 0; d < info.rank; d++) {
      if (info.shape[d] < 0) {
        b->shape[i][d] = fz_dim(r);
      } else {
        const uint8_t w = fz_u8(r);
        b->shape[i][d] = w == 255 ? info.shape[d] + 1 : w == 254 ? 0 : info.shape[d];
      }
    }
    const uint8_t rk = fz_u8(r);
    if (rk == 255 && b->rank[i] > 0) b->rank[i]--; /* wrong rank */
  }
}

static double work_estimate(size_t n_in, const binding *b) {
  double w = 1;
  for (size_t i = 0; i < n_in; i++) {
    double e = 1;
    for (int d = 0; d < b->rank[i]; d++) e *= b->shape[i][d] > 0 ? (double)b->shape[i][d] : 1;
    w *= e;
  }
  return w;
}

/* Bind every input's shape and fill its data; returns 1 when the session is ready to run. */
static int bind_and_fill(q8rt_session *s, const q8rt_model *m, size_t n_in, const binding *b, int via_set_input,
                         int wrong_bytes, const uint8_t *src, size_t src_n) {
  q8rt_error err;
  memset(&err, 0, sizeof(err));
  for (size_t i = 0; i < n_in; i++) {
    q8rt_status st = q8rt_session_set_input_shape(s, i, b->shape[i], b->rank[i], &err);
    check_failure(st, &err);
    if (st != Q8RT_OK) return 0;
  }
  for (size_t i = 0; i < n_in; i++) {
    void *buf;
    size_t n;
    q8rt_status st = q8rt_session_input_buffer(s, i, &buf, &n, &err);
    check_failure(st, &err);
    if (st != Q8RT_OK) return 0;
    q8rt_tensor_info info;
    q8rt_model_input_info(m, i, &info, NULL);
    if (!via_set_input) {
      fz_fill(info.dtype, buf, n, src, src_n);
      continue;
    }
    const size_t give = wrong_bytes ? n + 1 : n;
    void *data = malloc(give ? give : 1);
    if (data == NULL) return 0;
    fz_fill(info.dtype, data, give, src, src_n);
    st = q8rt_session_set_input(s, i, b->shape[i], b->rank[i], data, give, &err);
    free(data);
    check_failure(st, &err);
    if (wrong_bytes && st == Q8RT_OK) FZ_FAIL(); /* a wrong byte count must be refused */
    if (st != Q8RT_OK) return 0;
  }
  return 1;
}

/* Outputs of two sessions of the same model on the same inputs must be identical. */
static void compare_outputs(q8rt_session *a, q8rt_session *b, size_t n_out) {
  for (size_t i = 0; i < n_out; i++) {
    const void *pa, *pb;
    size_t na, nb;
    q8rt_tensor_info ia, ib;
    if (q8rt_session_get_output(a, i, &ia, &pa, &na, NULL) != Q8RT_OK) FZ_FAIL();
    if (q8rt_session_get_output(b, i, &ib, &pb, &nb, NULL) != Q8RT_OK) FZ_FAIL();
    if (na != nb || ia.rank != ib.rank || memcmp(ia.shape, ib.shape, sizeof(ia.shape)) != 0) FZ_FAIL();
    if (na > 0 && memcmp(pa, pb, na) != 0) {
      fprintf(stderr, "fuzz_run: output %zu differs between thread counts\n", i);
      FZ_FAIL();
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_reader r = {data, size, 0};
  const size_t index = fz_u16(&r) % g_count;
  const q8rt_model *m = model_at(index);
  if (m == NULL) return 0;
  const size_t n_in = q8rt_model_input_count(m), n_out = q8rt_model_output_count(m);
  if (n_in > MAX_INPUTS) return 0;
  const uint8_t flags = fz_u8(&r);
  const int threads = 1 + (flags & 3);
  const int via_set_input = (flags >> 2) & 1;
  const int small_arena = (flags >> 3) & 1;
  const int compare = (flags >> 4) & 1;
  const int rounds = 1 + ((flags >> 5) & 3) % 3;

  q8rt_session_options so;
  q8rt_session_options_init(&so);
  so.threads = threads;
  so.max_arena_bytes = ARENA_LIMIT;
  so.max_loop_iterations = FZ_MAX_LOOP_ITERATIONS;
  q8rt_session *s = NULL, *ref = NULL;
  q8rt_error err;
  memset(&err, 0, sizeof(err));
  q8rt_status st = q8rt_session_create(m, &so, &s, &err);
  check_failure(st, &err);
  void *arena = NULL;
  for (int round = 0; st == Q8RT_OK && round < rounds; round++) {
    binding b;
    memset(&b, 0, sizeof(b));
    choose_shapes(&r, m, n_in, &b);
    const uint8_t rflags = fz_u8(&r);
    /* The data: what is left of the input after this round's header (cycled). */
    const uint8_t *src = data + (r.i < size ? r.i : size);
    const size_t src_n = size - (r.i < size ? r.i : size);
    if (g_verbose) {
      fprintf(stderr, "fuzz_run: %s threads %d round %d:", g_paths[index], threads, round);
      for (size_t i = 0; i < n_in; i++) {
        fprintf(stderr, " [");
        for (int d = 0; d < b.rank[i]; d++) fprintf(stderr, "%s%lld", d ? "," : "", (long long)b.shape[i][d]);
        fprintf(stderr, "]");
      }
      fprintf(stderr, "\n");
    }
    if (!bind_and_fill(s, m, n_in, &b, via_set_input, rflags == 0xff, src, src_n)) continue;
    if (small_arena && arena == NULL) {
      const size_t need = q8rt_session_arena_size(s);
      const size_t cut = (size_t)(rflags & 0x7f) * 64 + 64;
      /* Too small: refused, and the session keeps working on its own arena. */
      if (need > cut) {
        void *tiny = aligned_alloc(64, 64);
        if (tiny != NULL) {
          st = q8rt_session_set_arena(s, tiny, need - cut < 64 ? need - cut : 64, &err);
          check_failure(st, &err);
          if (st == Q8RT_OK) FZ_FAIL();
          free(tiny);
          st = Q8RT_OK;
        }
      }
      /* Big enough (rounded up to 64): accepted; a later bigger binding must fail cleanly. */
      const size_t cap = (need + 63) & ~(size_t)63;
      if (need > 0 && cap <= ARENA_LIMIT) {
        arena = aligned_alloc(64, cap);
        if (arena != NULL && q8rt_session_set_arena(s, arena, cap, &err) != Q8RT_OK) {
          check_failure(Q8RT_ERROR_OUT_OF_MEMORY, &err);
        }
      }
    }
    /* Binding took any shape; running is bounded so that a legitimately expensive shape (a
     * ConvTranspose with a 63x63 kernel given as an input) is not reported as a hang: the
     * product of the input element counts bounds the work of every op with two tensor inputs. */
    if (work_estimate(n_in, &b) > WORK_LIMIT || q8rt_session_arena_size(s) > RUN_ARENA_LIMIT) continue;
    q8rt_status rs = q8rt_session_run(s, &err);
    check_failure(rs, &err);
    if (rs != Q8RT_OK) continue;
    for (size_t i = 0; i < n_out; i++) {
      const void *out;
      size_t n;
      q8rt_tensor_info info;
      if (q8rt_session_get_output(s, i, &info, &out, &n, &err) != Q8RT_OK) FZ_FAIL();
      if (n > 0) {
        volatile uint8_t sink = ((const uint8_t *)out)[0] ^ ((const uint8_t *)out)[n - 1];
        (void)sink;
      }
    }
    if (compare && threads > 1 && round == 0) {
      q8rt_session_options o1 = so;
      o1.threads = 1;
      if (q8rt_session_create(m, &o1, &ref, &err) == Q8RT_OK) {
        int ok = 1;
        for (size_t i = 0; i < n_in && ok; i++) {
          ok = q8rt_session_set_input_shape(ref, i, b.shape[i], b.rank[i], &err) == Q8RT_OK;
        }
        for (size_t i = 0; i < n_in && ok; i++) {
          void *src_buf, *dst_buf;
          size_t ns, nd;
          ok = q8rt_session_input_buffer(s, i, &src_buf, &ns, &err) == Q8RT_OK;
          ok = ok && q8rt_session_input_buffer(ref, i, &dst_buf, &nd, &err) == Q8RT_OK && ns == nd;
          if (ok) memcpy(dst_buf, src_buf, ns);
        }
        /* Same model, same shapes: what bound on one session binds on the other. */
        if (!ok) {
          fprintf(stderr, "fuzz_run: the single-thread session refused what the other bound: %s\n", err.message);
          FZ_FAIL();
        }
        if (q8rt_session_run(ref, &err) != Q8RT_OK) FZ_FAIL();
        compare_outputs(s, ref, n_out);
      }
    }
  }
  q8rt_session_free(ref);
  q8rt_session_free(s);
  free(arena);
  return 0;
}
