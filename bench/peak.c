/*
 * The register-only FMA peak of this run: every thread runs fused multiply-adds on fp32 vectors of
 * the kernel set's width with no memory operand, in enough independent chains to cover the FMA's
 * latency on every port (12 on 16 registers, 24 on 32).  GFLOP/s = 2 · lanes · FMAs / time, the
 * best of a few short trials, timed by the run's clock (timer.h) — so that a case's rate divided by
 * it holds the same load as the case did.
 */
#include <omp.h>
#include <string.h>

#include "peak.h"
#include "timer.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BENCH_PEAK_X86 1

/* `chains` independent chains acc = acc·a + b of vector type vt for `iters` rounds; acc·a + b stays
 * bounded (|a| < 1) and normal: no subnormal or infinite operand slows a chain. */
#define FMA_CHAINS(name, target_, vt, set1, fmadd, add, chains)                                      \
    __attribute__((target(target_))) static float name(long iters)                                  \
    {                                                                                               \
        vt acc[chains];                                                                             \
        const vt a = set1(0.999f), b = set1(1e-3f);                                                 \
        for (int i = 0; i < chains; i++)                                                            \
            acc[i] = set1((float)i);                                                                \
        for (long it = 0; it < iters; it++)                                                         \
            _Pragma("GCC unroll 24") for (int i = 0; i < chains; i++) acc[i] = fmadd(acc[i], a, b); \
        vt s = acc[0];                                                                              \
        for (int i = 1; i < chains; i++)                                                            \
            s = add(s, acc[i]);                                                                     \
        float lanes[sizeof(vt) / sizeof(float)];                                                    \
        memcpy(lanes, &s, sizeof s);                                                                \
        return lanes[0];                                                                            \
    }
FMA_CHAINS(fma_avx2, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, 12)
FMA_CHAINS(fma_avx512, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, 24)
#endif

/* fp32 lanes per FMA of the kernel set `isa` (0: no vector FMA to measure). */
static int peak_lanes(const char *isa)
{
#if defined(BENCH_PEAK_X86)
    if (strcmp(isa, "avx2") == 0)
        return 8;
    if (strcmp(isa, "avx512") == 0 || strcmp(isa, "avx512bf16") == 0 || strcmp(isa, "amx") == 0)
        return 16;
#endif
    (void)isa;
    return 0;
}

static volatile float peak_sink;

/* One trial: every thread `iters` rounds of the chains; seconds by the run's clock. */
static double peak_trial(int lanes, int threads, long iters)
{
    double t0 = 0, t1 = 0;
#pragma omp parallel num_threads(threads)
    {
#pragma omp barrier
#pragma omp master
        t0 = bench_now();
#pragma omp barrier
        float r = 0;
#if defined(BENCH_PEAK_X86)
        r = lanes == 8 ? fma_avx2(iters) : fma_avx512(iters);
#endif
#pragma omp atomic
        peak_sink += r;
#pragma omp barrier
#pragma omp master
        t1 = bench_now();
    }
    return t1 - t0;
}

bool bench_fma_peak(const char *isa, int threads, bench_peak *out)
{
    memset(out, 0, sizeof *out);
    const int lanes = peak_lanes(isa);
    if (!lanes)
        return false;
    const int chains = lanes == 8 ? 12 : 24;
    long iters = 1 << 16;
    while (peak_trial(lanes, threads, iters) < 0.02 && iters < (1L << 30)) /* about 20–40 ms a trial */
        iters *= 2;
    double best = 0;
    for (int t = 0; t < 5; t++) {
        const double s = peak_trial(lanes, threads, iters);
        const double rate = s > 0 ? 2.0 * lanes * chains * (double)iters * threads / s * 1e-9 : 0;
        best = rate > best ? rate : best;
    }
    out->gflops = best;
    out->lanes = lanes;
    return best > 0;
}
