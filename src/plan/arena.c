#include "plan/arena.h"

#include <stdint.h>

/* A zero-byte block still takes one aligned slot so that distinct live values have distinct
 * addresses. */
static size_t block_bytes(size_t size) { return ((size ? size : 1) + ARENA_ALIGN - 1) & ~((size_t)ARENA_ALIGN - 1); }

int arena_place(int n, const size_t *size, const int *first, const int *last, size_t *offset, int *order,
                size_t *total) {
  /* every offset is at most the sum of the blocks' sizes: when that sum fits, no sum below does */
  size_t sum = ARENA_SLACK;
  int count = 0;
  for (int b = 0; b < n; b++) {
    if (first[b] == ARENA_UNUSED) continue;
    if (size[b] > SIZE_MAX - ARENA_ALIGN || sum > SIZE_MAX - block_bytes(size[b])) return 0;
    sum += block_bytes(size[b]);
    order[count++] = b;
  }
  /* insertion sort by size, descending, stable: ties keep index order, so the offsets (and the
   * arena size) do not depend on anything but the inputs */
  for (int i = 1; i < count; i++) {
    int b = order[i], j = i - 1;
    while (j >= 0 && size[order[j]] < size[b]) {
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = b;
  }
  size_t extent = 0;
  for (int i = 0; i < count; i++) {
    const int b = order[i];
    const size_t bytes = block_bytes(size[b]);
    size_t off = 0;
    /* Move past every placed, lifetime-overlapping block that overlaps [off, off+bytes); repeat
     * until a full pass finds no conflict. O(n^2) per block, fine for graph sizes. */
    for (int changed = 1; changed;) {
      changed = 0;
      for (int j = 0; j < i; j++) {
        const int u = order[j];
        if (last[u] < first[b] || last[b] < first[u]) continue;
        const size_t uoff = offset[u], ubytes = block_bytes(size[u]);
        if (off < uoff + ubytes && uoff < off + bytes) {
          off = uoff + ubytes;
          changed = 1;
        }
      }
    }
    offset[b] = off;
    if (off + bytes > extent) extent = off + bytes;
  }
  *total = extent + ARENA_SLACK;
  return 1;
}
