/* The planner's axis-order algebra (src/ops/layout_view.c): which reshapes of a tensor stored in
 * one physical order leave its bytes as they are in another. */
#include "ops/op.h"
#include "test.h"

static int view(const int64_t *in, int rin, int in_cl, const int64_t *out, int rout, int out_cl) {
  unsigned char p[Q8RT_MAX_RANK], q[Q8RT_MAX_RANK];
  op_perm_channels_last(in_cl ? rin : 0, p);
  for (int i = in_cl ? rin : 0; i < rin; i++) p[i] = (unsigned char)i;
  op_perm_channels_last(out_cl ? rout : 0, q);
  for (int i = out_cl ? rout : 0; i < rout; i++) q[i] = (unsigned char)i;
  return op_perm_reshape_view(in, rin, p, out, rout, q);
}

Q8RT_TEST(perm_channels_last_orders) {
  unsigned char p[Q8RT_MAX_RANK];
  op_perm_channels_last(4, p);
  CHECK(p[0] == 0 && p[1] == 2 && p[2] == 3 && p[3] == 1);
  op_perm_channels_last(3, p);
  CHECK(p[0] == 0 && p[1] == 2 && p[2] == 1);
  op_perm_channels_last(2, p);
  CHECK(p[0] == 0 && p[1] == 1);
  return 0;
}

Q8RT_TEST(perm_reshape_views) {
  /* SVTR: [N,C,H,W] channels-last -> [N,C,HW] channels-last is a view; in logical order not */
  const int64_t a[] = {1, 16, 3, 10}, a3[] = {1, 16, 30};
  CHECK(view(a, 4, 1, a3, 3, 1) == 1);
  CHECK(view(a, 4, 1, a3, 3, 0) == 0);
  CHECK(view(a, 4, 0, a3, 3, 0) == 1); /* plain reshape */
  /* CRNN: Squeeze(H = 1) keeps channels-last; its bytes are [N,W,C] in logical order too */
  const int64_t s[] = {2, 8, 1, 17}, s3[] = {2, 8, 17}, t3[] = {2, 17, 8};
  CHECK(view(s, 4, 1, s3, 3, 1) == 1);
  CHECK(view(s, 4, 1, s3, 3, 0) == 0);
  CHECK(view(s, 4, 1, t3, 3, 0) == 0); /* a reshape to [N,W,C] is not a transpose */
  /* global pool -> Flatten: [N,C,1,1] channels-last is [N,C] as it is */
  const int64_t gp[] = {2, 8, 1, 1}, gp2[] = {2, 8};
  CHECK(view(gp, 4, 1, gp2, 2, 0) == 1);
  /* the channels mixed with a spatial axis: no view either way */
  const int64_t m[] = {1, 8, 3, 7}, m3[] = {1, 24, 7};
  CHECK(view(m, 4, 1, m3, 3, 1) == 0);
  CHECK(view(m, 4, 1, m3, 3, 0) == 0);
  /* splitting the batch keeps the order; splitting the channels (innermost physically) too */
  const int64_t b[] = {6, 4, 5, 5}, b5[] = {2, 3, 4, 5, 5}, c5[] = {6, 2, 2, 5, 5};
  CHECK(view(b, 4, 1, b5, 5, 0) == 0);
  CHECK(view(b, 4, 0, b5, 5, 0) == 1);
  CHECK(view(b, 4, 1, c5, 5, 1) == 0); /* channels-last of c5 puts axis 2 (a channel part) first */
  /* unknown dims, ranks past the limit: unknown; no elements: a view */
  const int64_t u[] = {1, 8, -1, 4}, u3[] = {1, 8, -1};
  CHECK(view(u, 4, 1, u3, 3, 1) == -1);
  CHECK(op_perm_reshape_view(a, Q8RT_MAX_RANK + 1, NULL, a3, 3, NULL) == -1);
  const int64_t z[] = {1, 8, 0, 4}, z3[] = {1, 8, 0};
  CHECK(view(z, 4, 1, z3, 3, 0) == 1);
  /* element counts that differ (the op's check refuses them first): never a view */
  const int64_t d3[] = {1, 16, 31};
  CHECK(view(a, 4, 1, d3, 3, 1) == 0);
  return 0;
}

Q8RT_TEST(perm_keeps_bytes) {
  unsigned char cl[Q8RT_MAX_RANK], cl3[Q8RT_MAX_RANK];
  op_perm_channels_last(4, cl);
  op_perm_channels_last(3, cl3);
  /* only axes of size 1 move: one channel, one pixel, or both (the batch never moves) */
  const int64_t c1[] = {2, 1, 5, 7}, p1[] = {-1, 200, 1, 1}, both[] = {1, 1, 1, 1}, w1[] = {3, 9, 1};
  CHECK(op_perm_keeps_bytes(c1, 4, cl) == 1);
  CHECK(op_perm_keeps_bytes(p1, 4, cl) == 1);
  CHECK(op_perm_keeps_bytes(both, 4, cl) == 1);
  CHECK(op_perm_keeps_bytes(w1, 3, cl3) == 1);
  /* the channels pass one spatial axis of size > 1 */
  const int64_t h1[] = {1, 8, 1, 7}, full[] = {1, 8, 3, 7};
  CHECK(op_perm_keeps_bytes(h1, 4, cl) == 0);
  CHECK(op_perm_keeps_bytes(full, 4, cl) == 0);
  /* unknown dims that decide it: unknown; unknown dims that do not: decided */
  const int64_t uhw[] = {1, 8, -1, -1}, uc[] = {-1, -1, 1, 1}, un[] = {-1, 8, 3, 7}, z[] = {1, 8, 0, -1};
  CHECK(op_perm_keeps_bytes(uhw, 4, cl) == -1);
  CHECK(op_perm_keeps_bytes(uc, 4, cl) == 1);
  CHECK(op_perm_keeps_bytes(un, 4, cl) == 0);
  CHECK(op_perm_keeps_bytes(z, 4, cl) == 1); /* no bytes */
  /* the identity order always; a rank past the limit: unknown */
  const unsigned char id[] = {0, 1, 2, 3};
  CHECK(op_perm_keeps_bytes(full, 4, id) == 1);
  CHECK(op_perm_keeps_bytes(full, Q8RT_MAX_RANK + 1, cl) == -1);
  return 0;
}
