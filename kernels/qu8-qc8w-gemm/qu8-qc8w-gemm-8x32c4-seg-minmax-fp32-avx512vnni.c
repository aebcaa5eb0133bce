/* 8 rows x 32 channels with segmented rows (a convolution's interior pixels read in place; see
 * qu8-qc8w-gemm-avx512vnni-impl.h and q8rt_gemm_segs in q8rt-kernels.h). */
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-avx512vnni-impl.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"

Q8RT_GEMM_SEG_AVX512VNNI_DEFINE(q8rt_qu8_qc8w_gemm_seg_minmax_fp32_ukernel_8x32c4__avx512vnni, 8, 2)
