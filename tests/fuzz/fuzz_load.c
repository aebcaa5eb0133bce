/* libFuzzer target: load a model from the fuzzer's bytes, bind it, run it.
 * Budgets keep each input cheap: 1 MiB models, a 16 MiB decode budget, a 4 MiB arena. Any
 * crash, sanitizer report or leak is a bug; every failure must come back as a status. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_util.h"
#include "q8rt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  q8rt_model *model = fz_load_model(data, size);
  if (model == NULL) return 0;
  q8rt_error err;
  char explain[256];
  q8rt_model_explain(model, explain, sizeof(explain));
  q8rt_session_options so;
  q8rt_session_options_init(&so);
  so.max_arena_bytes = 4u << 20;
  so.max_loop_iterations = FZ_MAX_LOOP_ITERATIONS;
  q8rt_session *session = NULL;
  if (q8rt_session_create(model, &so, &session, &err) == Q8RT_OK) {
    /* Bind symbolic dimensions to 1 and feed zeros through the zero-copy buffers. */
    int ok = 1;
    for (size_t i = 0; i < q8rt_model_input_count(model) && ok; i++) {
      q8rt_tensor_info info;
      if (q8rt_model_input_info(model, i, &info, &err) != Q8RT_OK) break;
      int64_t shape[Q8RT_MAX_RANK];
      for (int d = 0; d < info.rank; d++) shape[d] = info.shape[d] < 0 ? 1 : info.shape[d];
      ok = q8rt_session_set_input_shape(session, i, shape, info.rank, &err) == Q8RT_OK;
    }
    for (size_t i = 0; i < q8rt_model_input_count(model) && ok; i++) {
      void *buf;
      size_t n;
      ok = q8rt_session_input_buffer(session, i, &buf, &n, &err) == Q8RT_OK;
      if (ok) memset(buf, 0, n);
    }
    if (ok && q8rt_session_run(session, &err) == Q8RT_OK) {
      for (size_t i = 0; i < q8rt_model_output_count(model); i++) {
        const void *out;
        size_t n;
        q8rt_tensor_info info;
        if (q8rt_session_get_output(session, i, &info, &out, &n, &err) == Q8RT_OK && n > 0) {
          volatile uint8_t sink = ((const uint8_t *)out)[n - 1]; /* touch the last byte */
          (void)sink;
        }
      }
    }
  }
  q8rt_session_free(session);
  q8rt_model_free(model);
  return 0;
}
