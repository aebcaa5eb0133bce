#include <stdlib.h>

#include "test.h"

#define MAX_TESTS 1024
static q8rt_test_case g_tests[MAX_TESTS];
static int g_count;

void q8rt_test_register(const char *name, int (*fn)(void)) {
  if (g_count < MAX_TESTS) g_tests[g_count++] = (q8rt_test_case){name, fn};
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const q8rt_test_case *)a)->name, ((const q8rt_test_case *)b)->name);
}

int main(int argc, char **argv) {
  /* Arguments are name filters: a test runs when its name contains any of them. */
  qsort(g_tests, (size_t)g_count, sizeof(g_tests[0]), by_name);
  int passed = 0, failed = 0;
  for (int i = 0; i < g_count; i++) {
    int selected = argc < 2;
    for (int a = 1; a < argc && !selected; a++) selected = strstr(g_tests[i].name, argv[a]) != NULL;
    if (!selected) continue;
    int rc = g_tests[i].fn();
    printf("%s %s\n", rc == 0 ? "ok  " : "FAIL", g_tests[i].name);
    if (rc == 0)
      passed++;
    else
      failed++;
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
