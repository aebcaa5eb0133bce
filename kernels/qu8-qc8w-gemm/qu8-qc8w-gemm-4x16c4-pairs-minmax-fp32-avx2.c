/* 4 rows x 16 channels, vpmaddubsw route: exact only when q8rt_qu8_qc8w_gemm_pairs_safe() holds for
 * the weights (see qu8-qc8w-gemm-avx2-pairs-impl.h). */
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-avx2-pairs-impl.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"

Q8RT_GEMM_AVX2_PAIRS_DEFINE(q8rt_qu8_qc8w_gemm_pairs_minmax_fp32_ukernel_4x16c4__avx2, 4, 2)
