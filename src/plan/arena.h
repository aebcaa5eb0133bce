/* The arena planner: fixed offsets for blocks with known sizes and lifetimes.
 *
 * A block lives from step `first` to step `last` inclusive (-1: before the first step, n_steps:
 * after the last, ARENA_UNUSED: not placed). Blocks are placed largest first, each at the lowest
 * offset whose range does not overlap a block already placed with an overlapping lifetime
 * (greedy by size, as TFLite Micro's planner), so two blocks alive at the same step never share a
 * byte. Offsets are ARENA_ALIGN-aligned and the arena ends with ARENA_SLACK spare bytes, because
 * some kernels (XNNPACK's) read up to 16 bytes past the end of their input. */
#ifndef Q8RT_PLAN_ARENA_H
#define Q8RT_PLAN_ARENA_H

#include <stddef.h>

#define ARENA_UNUSED (-2)
#define ARENA_ALIGN 64
#define ARENA_SLACK 64

/* Place n blocks: offset[b] for every block with first[b] != ARENA_UNUSED (others untouched),
 * *total = the arena size. `order` is scratch of 2 * n ints. Returns 0 when the arena would not fit
 * in a size_t. */
int arena_place(int n, const size_t *size, const int *first, const int *last, size_t *offset, int *order,
                size_t *total);

#endif
