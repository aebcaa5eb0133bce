/* Instruction-set flags for kernel lists. Detection lives in src/runtime/isa.c (cpuinfo, once). */
#ifndef Q8RT_ISA_H
#define Q8RT_ISA_H

enum q8rt_isa {
  Q8RT_ISA_SCALAR = 1 << 0,
  Q8RT_ISA_AVX2 = 1 << 1,       /* AVX2 + FMA3 + F16C */
  Q8RT_ISA_AVX512VNNI = 1 << 2, /* AVX-512 F+BW+VL+VNNI */
  Q8RT_ISA_NEON = 1 << 3,
  Q8RT_ISA_NEONDOT = 1 << 4,    /* ARMv8.2 dot product: sdot/udot */
  Q8RT_ISA_NEONI8MM = 1 << 5,   /* ARMv8.6 int8 matrix multiply: usdot/sudot/usmmla (HWCAP2_I8MM) */
  Q8RT_ISA_AVX512SKX = 1 << 6,  /* AVX-512 F+BW+VL+DQ (Skylake-X level, no VNNI needed) */
  Q8RT_ISA_AVX512VBMI = 1 << 7, /* AVX-512 SKX + VBMI (byte permutes: vpermi2b) */
};

#endif
