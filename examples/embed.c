/* The smallest useful q8rt program: load a model, zero its inputs, run, print the first output.
 * Build: cc embed.c $(pkg-config --cflags --libs --static q8rt) */
#include <stdio.h>
#include <string.h>

#include "q8rt.h"

static void print_info(const char *kind, const q8rt_tensor_info *info) {
  printf("%s %s %s [", kind, info->name, q8rt_dtype_name(info->dtype));
  for (int d = 0; d < info->rank; d++) printf(d ? ",%lld" : "%lld", (long long)info->shape[d]);
  printf("]\n");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]);
    return 2;
  }
  q8rt_model *model = NULL;
  q8rt_session *session = NULL;
  q8rt_error err = {0};
  q8rt_tensor_info info;
  const void *out = NULL;
  size_t nbytes = 0;
  int rc = 1;

  /* The header and the library it runs with may come from different installs: say both. */
  printf("q8rt %s (header %s)\n", q8rt_version(), Q8RT_VERSION_STRING);
  if (q8rt_model_load_file(argv[1], NULL, &model, &err) != Q8RT_OK) goto fail;
  if (q8rt_session_create(model, NULL, &session, &err) != Q8RT_OK) goto fail;
  /* Bind symbolic dimensions (a dynamic batch becomes 1, other dynamic sizes 64), then fill the
   * inputs in place through their zero-copy buffers. */
  for (size_t i = 0; i < q8rt_model_input_count(model); i++) {
    if (q8rt_model_input_info(model, i, &info, &err) != Q8RT_OK) goto fail;
    print_info("input", &info);
    for (int d = 0; d < info.rank; d++) {
      if (info.shape[d] < 0) info.shape[d] = d == 0 ? 1 : 64;
    }
    if (q8rt_session_set_input_shape(session, i, info.shape, info.rank, &err) != Q8RT_OK) goto fail;
  }
  for (size_t i = 0; i < q8rt_model_input_count(model); i++) {
    void *buf = NULL;
    if (q8rt_session_input_buffer(session, i, &buf, &nbytes, &err) != Q8RT_OK) goto fail;
    memset(buf, 0, nbytes);
  }
  if (q8rt_session_run(session, &err) != Q8RT_OK) goto fail;
  for (size_t i = 0; i < q8rt_model_output_count(model); i++) {
    if (q8rt_session_get_output(session, i, &info, &out, &nbytes, &err) != Q8RT_OK) goto fail;
    print_info("output", &info);
    if (i != 0) continue;
    size_t count = nbytes / q8rt_dtype_size(info.dtype);
    printf("first values:");
    for (size_t k = 0; k < count && k < 8; k++) {
      switch (info.dtype) {
        case Q8RT_DTYPE_FLOAT32: printf(" %g", (double)((const float *)out)[k]); break;
        case Q8RT_DTYPE_UINT8: printf(" %u", (unsigned)((const uint8_t *)out)[k]); break;
        case Q8RT_DTYPE_INT8: printf(" %d", (int)((const int8_t *)out)[k]); break;
        case Q8RT_DTYPE_UINT16: printf(" %u", (unsigned)((const uint16_t *)out)[k]); break;
        case Q8RT_DTYPE_INT16: printf(" %d", (int)((const int16_t *)out)[k]); break;
        case Q8RT_DTYPE_INT32: printf(" %ld", (long)((const int32_t *)out)[k]); break;
        default: printf(" %lld", (long long)((const int64_t *)out)[k]); break;
      }
    }
    printf("\n");
  }
  rc = 0;
fail:
  if (rc != 0) fprintf(stderr, "embed: %s\n", err.message[0] ? err.message : q8rt_status_string(err.status));
  q8rt_session_free(session);
  q8rt_model_free(model);
  return rc;
}
