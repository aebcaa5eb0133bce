/* int32-output qu8-qc8w-gemm 8x8c4, ARMv8.2 dot product (ConvInteger, MatMulInteger). The packing
 * is the generic one (s8 weights, bias' without any activation term), so the product is taken as
 * u8 x u8 by udot: (a ^ x_xor) times w ^ 0x80 = w + 128, and each row's accumulators start at
 * bias' - 128 * sum_k (a ^ x_xor), summed once per call for all column blocks. Per 16 k and a
 * block: 2 eor of the weights for 64 udot; uint8 activations (both ConvInteger operands, DQL
 * outputs) need no eor of their own. Loop: qu8-qc8w-gemm-neondot-impl.h. */
#define Q8RT_A_T uint8x16_t
#define Q8RT_A_LOAD(p) vld1q_u8(p)
#define Q8RT_A_LOAD_DUP(x) vdupq_n_u8((uint8_t)(x))
#define Q8RT_A_FROM_U32(v) vreinterpretq_u8_u32(v)
#define Q8RT_A_XOR(v, x) veorq_u8(v, x)
#define Q8RT_A_SHIFT 0
#define Q8RT_W_PREP(w) veorq_s8(w, vdupq_n_s8(INT8_MIN))
#define Q8RT_DOT(acc, w, a, lane) \
  vreinterpretq_s32_u32(vdotq_laneq_u32(vreinterpretq_u32_s32(acc), vreinterpretq_u8_s8(w), a, lane))
#define Q8RT_A_ROWSUM
#define Q8RT_I32
#define Q8RT_FN q8rt_qu8_qc8w_gemm_i32_ukernel_8x8c4__neondot
#include "qu8-qc8w-gemm/qu8-qc8w-gemm.h"
#include "qu8-qc8w-gemm/qu8-qc8w-gemm-neondot-impl.h"
