/* The arena planner (plan/arena.c): blocks alive at the same step never share a byte, offsets are
 * aligned, blocks whose lifetimes are disjoint reuse memory, overflow is reported. */
#include <stdint.h>

#include "plan/arena.h"
#include "test.h"

enum { AN = 48 };

static int overlaps(size_t a, size_t an, size_t b, size_t bn) { return a < b + bn && b < a + an; }

static size_t slot(size_t size) { return ((size ? size : 1) + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN; }

Q8RT_TEST(arena_random_lifetimes_never_share_bytes) {
  uint32_t rng = 0x6a09e667u;
  size_t size[AN], offset[AN];
  int first[AN], last[AN], order[2 * AN];
  for (int trial = 0; trial < 400; trial++) {
    const int n = 1 + (int)(test_xorshift32(&rng) % AN), steps = 1 + (int)(test_xorshift32(&rng) % 20);
    size_t sum = ARENA_SLACK;
    for (int b = 0; b < n; b++) {
      const uint32_t r = test_xorshift32(&rng);
      /* sizes from 0 to ~64 KB, many equal (ties) and many not multiples of the alignment */
      size[b] = (r & 3) == 0 ? (size_t)(r >> 28) * 64 : (size_t)(r >> 16);
      offset[b] = (size_t)0x5a5a;
      if (test_xorshift32(&rng) % 8 == 0) {
        first[b] = last[b] = ARENA_UNUSED;
        continue;
      }
      first[b] = (int)(test_xorshift32(&rng) % (uint32_t)(steps + 1)) - 1; /* -1: before the first step */
      last[b] = first[b] + (int)(test_xorshift32(&rng) % (uint32_t)(steps + 1 - first[b]));
      sum += slot(size[b]);
    }
    size_t total = 0;
    CHECK(arena_place(n, size, first, last, offset, order, &total));
    CHECK(total <= sum);
    for (int b = 0; b < n; b++) {
      if (first[b] == ARENA_UNUSED) {
        CHECK(offset[b] == 0x5a5a);
        continue;
      }
      CHECK(offset[b] % ARENA_ALIGN == 0);
      CHECK(offset[b] + size[b] + ARENA_SLACK <= total);
      for (int u = 0; u < b; u++) {
        if (first[u] == ARENA_UNUSED || last[u] < first[b] || last[b] < first[u]) continue;
        /* alive together: not even their zero-size slots may coincide */
        CHECK(!overlaps(offset[b], slot(size[b]), offset[u], slot(size[u])));
      }
    }
  }
  return 0;
}

Q8RT_TEST(arena_disjoint_lifetimes_reuse_memory) {
  /* a chain a -> b -> c -> d: each value dies at the step after it is made, so two slots suffice */
  const size_t size[4] = {1000, 1000, 1000, 1000};
  const int first[4] = {0, 1, 2, 3}, last[4] = {1, 2, 3, 4};
  size_t offset[4], total = 0;
  int order[8];
  CHECK(arena_place(4, size, first, last, offset, order, &total));
  CHECK(total == 2 * 1024 + ARENA_SLACK);
  CHECK(offset[0] == 0 && offset[1] == 1024 && offset[2] == 0 && offset[3] == 1024);
  return 0;
}

Q8RT_TEST(arena_largest_first_and_stable) {
  /* all alive at once: the largest block goes first at 0, equal sizes keep their index order */
  const size_t size[4] = {10, 300, 10, 0};
  const int first[4] = {-1, 0, 0, 0}, last[4] = {2, 2, 2, 2};
  size_t offset[4], total = 0;
  int order[8];
  CHECK(arena_place(4, size, first, last, offset, order, &total));
  CHECK(offset[1] == 0 && offset[0] == 320 && offset[2] == 384 && offset[3] == 448);
  CHECK(total == 512 + ARENA_SLACK);
  /* a block that only touches another's last step still conflicts (inclusive lifetimes) */
  const size_t s2[2] = {64, 64};
  const int f2[2] = {0, 3}, l2[2] = {3, 5};
  size_t o2[2];
  CHECK(arena_place(2, s2, f2, l2, o2, order, &total));
  CHECK(o2[0] != o2[1] && total == 128 + ARENA_SLACK);
  return 0;
}

Q8RT_TEST(arena_empty_and_overflow) {
  size_t offset[2] = {7, 7}, total = 1;
  int order[4];
  const int unused[2] = {ARENA_UNUSED, ARENA_UNUSED};
  const size_t size0[2] = {5, 5};
  CHECK(arena_place(2, size0, unused, unused, offset, order, &total));
  CHECK(total == ARENA_SLACK && offset[0] == 7 && offset[1] == 7);
  /* sizes a malformed model could ask for: never a wrapped offset */
  const size_t huge[2] = {SIZE_MAX / 2, SIZE_MAX / 2};
  const int first[2] = {0, 0}, last[2] = {0, 0};
  CHECK(!arena_place(2, huge, first, last, offset, order, &total));
  const size_t top[1] = {SIZE_MAX - 3};
  CHECK(!arena_place(1, top, first, last, offset, order, &total));
  return 0;
}

Q8RT_TEST(arena_fills_holes_and_step_boundaries) {
  /* A (largest) lives early, C late: C reuses A's bytes; B, alive with both, goes above them. A
   * block first written at the step where another is last read does not get its bytes (a step's
   * output never aliases its input), one written a step later does. */
  const size_t size[4] = {1000, 500, 900, 100};
  const int first[4] = {0, 0, 2, 1}, last[4] = {1, 5, 5, 2};
  size_t offset[4], total = 0;
  int order[8];
  CHECK(arena_place(4, size, first, last, offset, order, &total));
  CHECK(offset[0] == 0 && offset[2] == 0 && offset[1] == 1024);
  /* D (100 bytes, steps 1-2) meets A at step 1 and C at step 2: above B */
  CHECK(offset[3] == 1536 && total == 1536 + 128 + ARENA_SLACK);
  const int f2[2] = {0, 2}, l2[2] = {1, 3};
  const size_t s2[2] = {64, 64};
  size_t o2[2];
  CHECK(arena_place(2, s2, f2, l2, o2, order, &total));
  CHECK(o2[0] == 0 && o2[1] == 0 && total == 64 + ARENA_SLACK);
  return 0;
}
