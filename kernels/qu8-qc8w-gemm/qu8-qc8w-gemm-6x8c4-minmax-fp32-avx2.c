/* 6 rows x 8 channels, int16 vpmaddwd route (see qu8-qc8w-gemm-avx2-impl.h). */
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-avx2-impl.h"

Q8RT_GEMM_AVX2_DEFINE(q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel_6x8c4__avx2, 6, 1)
