/* The register-only FMA peak of the run's kernel set (peak.c), for rates as fractions of it. */
#ifndef FLASHC_BENCH_PEAK_H
#define FLASHC_BENCH_PEAK_H

#include <stdbool.h>

typedef struct bench_peak {
    double gflops; /* all the run's threads together, by the run's clock */
    int lanes;     /* fp32 lanes per FMA: 8 (avx2) or 16 (the AVX-512 sets) */
} bench_peak;

/* Measures it for kernel set `isa` at `threads` threads; false (out zeroed) for a set without
 * vector FMAs to measure (scalar, vec16) or a machine that is not x86. */
bool bench_fma_peak(const char *isa, int threads, bench_peak *out);

#endif
