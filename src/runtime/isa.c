/* CPU feature detection, once per process, through cpuinfo. */
#include <cpuinfo.h>
#include <pthread.h>
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include "isa.h"
#include "q8rt-isa.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static uint32_t g_isa = Q8RT_ISA_SCALAR;

static void detect(void) {
  uint32_t isa = Q8RT_ISA_SCALAR;
  if (cpuinfo_initialize()) {
#if defined(__x86_64__) || defined(_M_X64)
    /* the AVX2 kernels may use FMA3 intrinsics (exactly rounded, never implicit contraction) and
     * F16C (float16 conversions; every AVX2 CPU has it, Haswell and Zen on) */
    if (cpuinfo_has_x86_avx2() && cpuinfo_has_x86_fma3() && cpuinfo_has_x86_f16c()) isa |= Q8RT_ISA_AVX2;
    const int skx = cpuinfo_has_x86_avx512f() && cpuinfo_has_x86_avx512bw() && cpuinfo_has_x86_avx512vl() &&
                    cpuinfo_has_x86_avx512dq();
    if (skx) isa |= Q8RT_ISA_AVX512SKX;
    if (skx && cpuinfo_has_x86_avx512vnni()) isa |= Q8RT_ISA_AVX512VNNI;
    if (skx && cpuinfo_has_x86_avx512vbmi()) isa |= Q8RT_ISA_AVX512VBMI;
#elif defined(__aarch64__)
    if (cpuinfo_has_arm_neon()) isa |= Q8RT_ISA_NEON;
    if (cpuinfo_has_arm_neon_dot()) isa |= Q8RT_ISA_NEONDOT;
#if defined(__linux__)
    /* Debian's cpuinfo (2022) has no i8mm query; the kernel's HWCAP2_I8MM (bit 13) is the truth. */
    if ((isa & Q8RT_ISA_NEONDOT) && (getauxval(AT_HWCAP2) & (1ul << 13))) isa |= Q8RT_ISA_NEONI8MM;
#endif
#endif
  }
  g_isa = isa;
}

uint32_t q8rt_cpu_isa(void) {
  pthread_once(&g_once, detect);
  return g_isa;
}
