/* 5 rows x 16 channels, int16 vpmaddwd route, int32 accumulators stored as they are
 * (qu8-qc8w-gemm-avx2-impl.h). */
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-avx2-impl.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"

Q8RT_GEMM_I32_AVX2_DEFINE(q8rt_qu8_qc8w_gemm_i32_ukernel_5x16c4__avx2, 5, 2)
