/*
 * Whether the baseline's OpenBLAS ran the best kernels this CPU has.  OpenBLAS picks a core
 * (kernel set) at load time; OPENBLAS_CORETYPE can force one, and on CPUs its detection does not
 * know (0.3.21 on Sapphire Rapids) it falls back to the SSE3 "Prescott" core — about 3x slower on
 * an AVX-512 machine, which would inflate every printed ratio by as much.
 */
#ifndef FLASHC_BENCH_BLAS_CORE_H
#define FLASHC_BENCH_BLAS_CORE_H

#include <stddef.h>

/* Vector level of an OpenBLAS core name or of this CPU: 0 SSE, 1 AVX, 2 AVX2, 3 AVX-512;
 * -1 unknown (other architectures, names this table lacks). */
int bench_blas_core_level(const char *core);
int bench_cpu_vector_level(void);

/* The OpenBLAS core to ask for on this CPU (OPENBLAS_CORETYPE), or "" when there is no opinion. */
const char *bench_blas_best_core(void);

/* A warning when the core that ran (NULL: the baseline was built without OpenBLAS) is below this
 * CPU's level, naming the core, the CPU level, OPENBLAS_CORETYPE and the fix; "" when none. */
const char *bench_blas_core_warning(const char *core_that_ran, char *buf, size_t size);

#endif
