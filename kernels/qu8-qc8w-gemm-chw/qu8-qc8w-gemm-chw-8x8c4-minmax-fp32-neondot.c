/* NCHW GEMM tile 8 channels x 8 pixels, ARMv8.2 dot product (sdot by element): the panel's u8
 * activations flipped to s8 (x - 128) with one eor per load, each channel's bias raised by
 * 128 * sum_k w once per call. Loop and epilogue: qu8-qc8w-gemm-chw-neondot-impl.h. */
#define Q8RT_CHW_DOT(acc, x, w, lane) vdotq_laneq_s32(acc, vreinterpretq_s8_u8(x), w, lane)
#define Q8RT_CHW_X_FLIP 1
#define Q8RT_CHW_FN q8rt_qu8_qc8w_gemm_chw_minmax_fp32_ukernel_8x8c4__neondot
#include "qu8-qc8w-gemm-chw/qu8-qc8w-gemm-chw-neondot-impl.h"
