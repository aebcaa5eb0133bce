/* ModelProto.metadata_props through the public API (q8rt_model_metadata*), and q8rt_version. */
#include <stdlib.h>

#include "model_builder.h"
#include "q8rt.h"
#include "test.h"

/* A one-node model (Identity on a float [2] input) carrying the given metadata. */
static mb_model *tiny_model(void) {
  mb_model *m = mb_create(13);
  const int64_t dims[1] = {2};
  mb_input(m, "x", 1, 1, dims);
  mb_output(m, "y", 1);
  const char *in[] = {"x", NULL}, *out[] = {"y", NULL};
  mb_node(m, "Identity", "id", in, out);
  return m;
}

static q8rt_status load(mb_model *m, q8rt_model **model, q8rt_error *err) {
  size_t size;
  uint8_t *bytes = mb_pack(m, &size);
  q8rt_status st = q8rt_model_load_memory(bytes, size, NULL, model, err);
  free(bytes);
  return st;
}

Q8RT_TEST(metadata_entries_and_lookup) {
  static const char with_nul[] = {'a', 0, 'b'};
  mb_model *m = tiny_model();
  mb_metadata(m, "character", "x\ny\nz", 5);
  mb_metadata(m, "nul", with_nul, sizeof(with_nul));
  mb_metadata(m, "empty", NULL, 0);
  mb_metadata(m, "dup", "first", 5);
  mb_metadata(m, "dup", "second", 6);
  q8rt_model *model = NULL;
  q8rt_error err;
  q8rt_status st = load(m, &model, &err);
  mb_free(m);
  CHECK(st == Q8RT_OK);
  CHECK(q8rt_model_metadata_count(model) == 5);
  const char *key = NULL, *value = NULL;
  size_t len = 99;
  CHECK_OK(q8rt_model_metadata_entry(model, 1, &key, &value, &len, NULL));
  CHECK(strcmp(key, "nul") == 0 && len == 3 && memcmp(value, with_nul, 3) == 0 && value[3] == '\0');
  CHECK_OK(q8rt_model_metadata_entry(model, 2, &key, &value, NULL, NULL));
  CHECK(strcmp(key, "empty") == 0 && value[0] == '\0');
  CHECK(strcmp(q8rt_model_metadata(model, "character", &len), "x\ny\nz") == 0 && len == 5);
  CHECK(strcmp(q8rt_model_metadata(model, "dup", NULL), "second") == 0); /* last wins, as in ORT */
  CHECK(q8rt_model_metadata(model, "missing", &len) == NULL);
  CHECK(q8rt_model_metadata(model, NULL, NULL) == NULL);
  CHECK(q8rt_model_metadata(NULL, "character", NULL) == NULL);
  CHECK(q8rt_model_metadata_count(NULL) == 0);
  memset(&err, 0, sizeof(err));
  CHECK(q8rt_model_metadata_entry(model, 5, &key, &value, &len, &err) == Q8RT_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(err.message, "out of range") != NULL);
  CHECK(q8rt_model_metadata_entry(model, 0, NULL, &value, &len, &err) == Q8RT_ERROR_INVALID_ARGUMENT);
  q8rt_model_free(model);
  return 0;
}

Q8RT_TEST(metadata_absent_is_empty) {
  mb_model *m = tiny_model();
  q8rt_model *model = NULL;
  q8rt_status st = load(m, &model, NULL);
  mb_free(m);
  CHECK(st == Q8RT_OK);
  CHECK(q8rt_model_metadata_count(model) == 0);
  CHECK(q8rt_model_metadata(model, "character", NULL) == NULL);
  q8rt_model_free(model);
  return 0;
}

Q8RT_TEST(metadata_bad_entries_are_refused) {
  static const char nul_key[] = {'k', 0, 'x', 0};
  struct {
    const char *key;
    size_t repeat;
    const char *message;
  } cases[] = {{NULL, 1, "metadata_props[0] has no key"},
               {"", 1, "metadata_props[0] has no key"},
               {nul_key, 1, NULL},
               {"k", 4097, "at most 4096"}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    mb_model *m = tiny_model();
    for (size_t i = 0; i < cases[c].repeat; i++) mb_metadata(m, cases[c].key, "v", 1);
    q8rt_model *model = NULL;
    q8rt_error err;
    memset(&err, 0, sizeof(err));
    q8rt_status st;
    if (cases[c].key == nul_key) { /* mb_metadata takes a C string: patch the length by hand */
      mb_free(m);
      m = tiny_model();
      mb_metadata(m, "k?x", "v", 1);
      size_t size;
      uint8_t *bytes = mb_pack(m, &size);
      uint8_t *p = NULL;
      for (size_t i = 0; i + 3 <= size && p == NULL; i++) {
        if (memcmp(bytes + i, "k?x", 3) == 0) p = bytes + i;
      }
      CHECK(p != NULL);
      p[1] = 0;
      st = q8rt_model_load_memory(bytes, size, NULL, &model, &err);
      free(bytes);
      CHECK(st == Q8RT_ERROR_INVALID_MODEL && strstr(err.message, "NUL byte") != NULL);
    } else {
      st = load(m, &model, &err);
      CHECK(st == Q8RT_ERROR_INVALID_MODEL);
      CHECK(strstr(err.message, cases[c].message) != NULL);
    }
    CHECK(model == NULL);
    mb_free(m);
  }
  /* the limit itself loads */
  mb_model *m = tiny_model();
  for (int i = 0; i < 4096; i++) mb_metadata(m, "k", "v", 1);
  q8rt_model *model = NULL;
  q8rt_status st = load(m, &model, NULL);
  mb_free(m);
  CHECK(st == Q8RT_OK && q8rt_model_metadata_count(model) == 4096);
  q8rt_model_free(model);
  return 0;
}

Q8RT_TEST(version_matches_header) {
  CHECK(strcmp(q8rt_version(), Q8RT_VERSION_STRING) == 0);
  CHECK(q8rt_version_number() == Q8RT_VERSION_NUMBER);
  char buf[32];
  snprintf(buf, sizeof(buf), "%d.%d.%d", Q8RT_VERSION_MAJOR, Q8RT_VERSION_MINOR, Q8RT_VERSION_PATCH);
  CHECK(strcmp(buf, q8rt_version()) == 0);
  return 0;
}
