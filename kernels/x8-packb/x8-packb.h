/* x8-packb: 8-bit activations [k][n] (NCHW: one row per input channel and tap, one column per
 * output pixel) packed as the B operand of the int32-output qu8-qc8w-gemm kernels, so those
 * kernels run with the (constant) weights as A and write NCHW output rows directly. For each
 * block of nr columns n0 (the last padded with zero columns), in the qu8-qc8w-gemm packed layout:
 *   int32 bias'[nr] | int8 b[ceil(k/4)][nr][4] | float scale[nr] (zeros: the i32 kernels skip it)
 * with, for column j < nb (the block's real columns) and u = x[kk * x_stride + n0 + j] ^ x_xor
 * (the uint8 domain):
 *   b[g][j][i]  = u - 128 as int8 for kk = 4g + i < k, 0 past k and in padded columns
 *   sum[j]      = sum_kk u                                   (uint32, wrapping)
 *   bias'[j]    = bias_base - bias_mul * sum[j]              (uint32, wrapping; 0 in padded columns)
 *   colsum[n0 + j] = sum[j]                                   (when colsum is not NULL)
 * nr: the GEMM variant's NR (16 or 32). Reads exactly the bytes x[kk * x_stride + c], kk < k,
 * c < n. conv_integer.c's GEMM route explains the bias (the zero-point corrections). */
#ifndef Q8RT_X8_PACKB_H
#define Q8RT_X8_PACKB_H

#include <stddef.h>
#include <stdint.h>

typedef void (*q8rt_x8_packb_ukernel_fn)(size_t k, size_t n, const uint8_t *x, size_t x_stride, uint8_t x_xor,
                                         size_t nr, uint32_t bias_base, uint32_t bias_mul, void *packed,
                                         uint32_t *colsum);

/* Bytes of one packed block of nr columns over k rows. */
static inline size_t q8rt_x8_packb_block_bytes(size_t k, size_t nr) {
  return nr * (sizeof(int32_t) + 4 * ((k + 3) / 4) + sizeof(float));
}

void q8rt_x8_packb_ukernel_c4__scalar(size_t k, size_t n, const uint8_t *x, size_t x_stride, uint8_t x_xor, size_t nr,
                                      uint32_t bias_base, uint32_t bias_mul, void *packed, uint32_t *colsum);
#define Q8RT_X8_PACKB_UKERNEL(isa, fn)                                                                         \
  void fn(size_t k, size_t n, const uint8_t *x, size_t x_stride, uint8_t x_xor, size_t nr, uint32_t bias_base, \
          uint32_t bias_mul, void *packed, uint32_t *colsum);
#include "x8-packb/x8-packb.inc"
#undef Q8RT_X8_PACKB_UKERNEL

#endif
