/* 8 rows x 32 channels: 16 zmm accumulators, 2 weight vectors and 8 broadcasts per group of 4 k
 * (see qu8-qc8w-gemm-avx512vnni-impl.h). */
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-avx512vnni-impl.h"

Q8RT_GEMM_AVX512VNNI_DEFINE(q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel_8x32c4__avx512vnni, 8, 2)
