/* 4 rows x 16 channels, int16 vpmaddwd route (see qu8-qc8w-gemm-avx2-impl.h): two c4 weight
 * vectors per group halve the activation broadcasts per MAC compared with the x8 tiles. */
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-avx2-impl.h"

Q8RT_GEMM_AVX2_DEFINE(q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel_4x16c4__avx2, 4, 2)
