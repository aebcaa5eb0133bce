/* int32-output qu8-qc8w-gemm 8x8c4, ARMv8.6 int8 matrix multiply extension (ConvInteger,
 * MatMulInteger): sudot by element multiplies the s8 weights by the u8 activations directly, so
 * the generic packing needs no correction (int8 activations: one eor per row load). Loop:
 * qu8-qc8w-gemm-neondot-impl.h. */
#define Q8RT_A_T uint8x16_t
#define Q8RT_A_LOAD(p) vld1q_u8(p)
#define Q8RT_A_LOAD_DUP(x) vdupq_n_u8((uint8_t)(x))
#define Q8RT_A_FROM_U32(v) vreinterpretq_u8_u32(v)
#define Q8RT_A_XOR(v, x) veorq_u8(v, x)
#define Q8RT_A_SHIFT 0
#define Q8RT_DOT(acc, w, a, lane) vsudotq_laneq_s32(acc, w, a, lane)
#define Q8RT_I32
#define Q8RT_FN q8rt_qu8_qc8w_gemm_i32_ukernel_8x8c4__neoni8mm
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-neondot-impl.h"
