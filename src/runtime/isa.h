#ifndef Q8RT_RUNTIME_ISA_H
#define Q8RT_RUNTIME_ISA_H

#include <stdint.h>

/* enum q8rt_isa flags of this CPU; detected once (thread-safe), Q8RT_ISA_SCALAR at least. */
uint32_t q8rt_cpu_isa(void);

#endif
