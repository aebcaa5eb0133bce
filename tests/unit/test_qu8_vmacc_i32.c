/* qu8-vmacc-i32: the scalar twin against products written here, and every variant of
 * qu8-vmacc-i32.inc against the twin over lengths around the vector width, strides 1, 2, 3, both
 * activation types, zero points and weights at their limits. The row is allocated to end at its
 * last read byte so ASan sees any read past it. */
#include <stdbool.h>
#include <stdlib.h>

#include "q8rt-isa.h"
#include "qu8-vmacc-i32/qu8-vmacc-i32.h"
#include "test.h"

typedef struct vmacc_variant {
  const char *name;
  unsigned isa;
  q8rt_qu8_vmacc_i32_ukernel_fn fn;
} vmacc_variant;

static const vmacc_variant g_vmacc_variants[] = {
#define Q8RT_QU8_VMACC_I32_UKERNEL(isa, fn) {#fn, isa, fn},
#include "qu8-vmacc-i32/qu8-vmacc-i32.inc"
#undef Q8RT_QU8_VMACC_I32_UKERNEL
    {NULL, 0, NULL},
};

static uint32_t vm_rng = 0x3c6ef372u;
static uint32_t vm_rnd(void) { return test_xorshift32(&vm_rng); }

Q8RT_TEST(qu8_vmacc_i32_scalar_products) {
  const uint8_t x[5] = {0, 255, 128, 7, 200};
  uint32_t acc[3] = {1, 2, 0xffffffffu};
  q8rt_qu8_vmacc_i32_ukernel__scalar(3, x, 2, 0, 100, -255, acc); /* x[0], x[2], x[4] */
  CHECK(acc[0] == (uint32_t)(1 + (0 - 100) * -255) && acc[1] == (uint32_t)(2 + (128 - 100) * -255) &&
        acc[2] == (uint32_t)(-1 + (200 - 100) * -255));
  uint32_t acc2[2] = {0, 0};
  q8rt_qu8_vmacc_i32_ukernel__scalar(2, x, 1, 0x80, 128 - 3, 255, acc2); /* int8 0 and -1, zero point -3 */
  CHECK((int32_t)acc2[0] == (0 + 3) * 255 && (int32_t)acc2[1] == (-1 + 3) * 255);
  return 0;
}

Q8RT_TEST(qu8_vmacc_i32_variants_vs_scalar) {
  for (const vmacc_variant *v = g_vmacc_variants; v->name != NULL; v++) {
    if (!test_isa_supported(v->isa)) {
      printf("     skip %s (CPU lacks its ISA)\n", v->name);
      continue;
    }
    for (size_t stride = 1; stride <= 3; stride++) {
      for (size_t n = 0; n <= 40; n++) {
        for (int mode = 0; mode < 4; mode++) {
          const size_t bytes = n ? (n - 1) * stride + 1 : 0;
          uint8_t *x = malloc(bytes ? bytes : 1);
          uint32_t *a0 = malloc((n + 1) * sizeof(uint32_t)), *a1 = malloc((n + 1) * sizeof(uint32_t));
          CHECK(x != NULL && a0 != NULL && a1 != NULL);
          for (size_t i = 0; i < bytes; i++) x[i] = mode == 1 ? 0xff : mode == 2 ? 0x00 : (uint8_t)vm_rnd();
          for (size_t i = 0; i <= n; i++) a0[i] = a1[i] = vm_rnd();
          const uint8_t x_xor = (vm_rnd() & 1) ? 0x80 : 0;
          const int32_t zp = mode == 1 ? 0 : mode == 2 ? 255 : (int32_t)(vm_rnd() % 256);
          const int32_t w = mode == 3 ? ((vm_rnd() & 1) ? 255 : -255) : (int32_t)(vm_rnd() % 511) - 255;
          q8rt_qu8_vmacc_i32_ukernel__scalar(n, x, stride, x_xor, zp, w, a0);
          v->fn(n, x, stride, x_xor, zp, w, a1);
          const bool same = memcmp(a0, a1, (n + 1) * sizeof(uint32_t)) == 0;
          if (!same) fprintf(stderr, "  %s: n=%zu stride=%zu mode=%d\n", v->name, n, stride, mode);
          free(x);
          free(a0);
          free(a1);
          CHECK(same);
        }
      }
    }
  }
  return 0;
}
