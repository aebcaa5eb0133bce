/* kernels/q8rt-math.h: the rounding helper every kernel's epilogue uses, against nearbyintf. */
#include <fenv.h>
#include <math.h>

#include "q8rt-math.h"
#include "test.h"

static uint32_t rng_state = 0x9e3779b9u;
static uint32_t rnd(void) { return test_xorshift32(&rng_state); }

Q8RT_TEST(round_clamp_matches_round_half_even) {
  CHECK(fegetround() == FE_TONEAREST);
  const float ties[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, 127.5f, -127.5f, -128.5f, 254.5f, 255.5f};
  for (size_t i = 0; i < sizeof(ties) / sizeof(ties[0]); i++) {
    CHECK(q8rt_round_clamp(ties[i], -128.0f, 255.0f) == test_ref_round_clamp(ties[i], -128.0f, 255.0f));
  }
  CHECK(q8rt_round_clamp(2.5f, -100.0f, 100.0f) == 2);
  CHECK(q8rt_round_clamp(3.5f, -100.0f, 100.0f) == 4);
  CHECK(q8rt_round_clamp(-2.5f, -100.0f, 100.0f) == -2);
  CHECK(q8rt_round_clamp(-3.5f, -100.0f, 100.0f) == -4);
  CHECK(q8rt_round_clamp(NAN, -3.0f, 4.0f) == -3);
  CHECK(q8rt_round_clamp(INFINITY, -3.0f, 4.0f) == 4);
  CHECK(q8rt_round_clamp(-INFINITY, -3.0f, 4.0f) == -3);
  CHECK(q8rt_round_clamp(1e30f, -3.0f, 4.0f) == 4);
  for (int i = 0; i < 200000; i++) {
    uint32_t bits = rnd();
    float v;
    memcpy(&v, &bits, sizeof(v));
    if (i % 2) v = (float)(int32_t)(rnd() % 140000 - 70000) / 4.0f; /* many exact ties */
    CHECK(q8rt_round_clamp(v, -32768.0f, 65535.0f) == test_ref_round_clamp(v, -32768.0f, 65535.0f));
  }
  return 0;
}
