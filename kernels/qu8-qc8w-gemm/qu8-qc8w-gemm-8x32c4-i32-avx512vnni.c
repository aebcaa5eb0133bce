/* 8 rows x 32 channels, int32 accumulators stored as they are (qu8-qc8w-gemm-avx512vnni-impl.h). */
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-avx512vnni-impl.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"

Q8RT_GEMM_I32_AVX512VNNI_DEFINE(q8rt_qu8_qc8w_gemm_i32_ukernel_8x32c4__avx512vnni, 8, 2)
