/* 8 rows x 8 channels, vpmaddubsw route: exact only when q8rt_qu8_qc8w_gemm_pairs_safe() holds for
 * the weights (see qu8-qc8w-gemm-avx2-pairs-impl.h). */
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-avx2-pairs-impl.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"

Q8RT_GEMM_AVX2_PAIRS_DEFINE(q8rt_qu8_qc8w_gemm_pairs_minmax_fp32_ukernel_8x8c4__avx2, 8, 1)
