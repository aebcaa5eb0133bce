/* qu8-qc8w-gemm 8x8c4, ARMv8.2 dot product (sdot by element). sdot multiplies s8 by s8, so the
 * activations are taken as s8, a_u8 - 128 = raw ^ x_xor ^ 0x80 (int8 models: the raw bytes, no
 * eor at all), and the weights are packed with the activation zero point as s8 (x_zp_u8 - 128:
 * the list marks this variant Q8RT_GEMM_UKERNEL_S8A), which adds the 128 * sum_k w back into the
 * bias. Loop and epilogue: qu8-qc8w-gemm-neondot-impl.h. */
#define Q8RT_A_T int8x16_t
#define Q8RT_A_LOAD(p) vld1q_s8((const int8_t *)(p))
#define Q8RT_A_LOAD_DUP(x) vdupq_n_s8((int8_t)(x))
#define Q8RT_A_FROM_U32(v) vreinterpretq_s8_u32(v)
#define Q8RT_A_XOR(v, x) veorq_s8(v, x)
#define Q8RT_A_SHIFT 0x80
#define Q8RT_DOT(acc, w, a, lane) vdotq_laneq_s32(acc, w, a, lane)
#define Q8RT_FN q8rt_qu8_qc8w_gemm_minmax_fp32_ukernel_8x8c4__neondot
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-neondot-impl.h"
