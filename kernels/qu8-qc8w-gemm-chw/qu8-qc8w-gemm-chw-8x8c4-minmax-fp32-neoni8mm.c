/* NCHW GEMM tile 8 channels x 8 pixels, ARMv8.6 int8 matrix multiply extension (usdot by element:
 * the panel's u8 activations times the s8 weights directly). Loop and epilogue:
 * qu8-qc8w-gemm-chw-neondot-impl.h. */
#define Q8RT_CHW_DOT(acc, x, w, lane) vusdotq_laneq_s32(acc, x, w, lane)
#define Q8RT_CHW_X_FLIP 0
#define Q8RT_CHW_FN q8rt_qu8_qc8w_gemm_chw_minmax_fp32_ukernel_8x8c4__neoni8mm
#include "qu8-qc8w-gemm-chw/qu8-qc8w-gemm-chw-neondot-impl.h"
