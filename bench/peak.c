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

/* acc·a + b stays bounded (|a| < 1) and normal: no subnormal or infinite operand slows a chain. */
#define CHAINS_AVX2 12
__attribute__((target("avx2,fma"))) static float fma_avx2(long iters)
{
    __m256 acc[CHAINS_AVX2];
    const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-3f);
    for (int i = 0; i < CHAINS_AVX2; i++)
        acc[i] = _mm256_set1_ps((float)i);
    for (long it = 0; it < iters; it++)
#pragma GCC unroll 12
        for (int i = 0; i < CHAINS_AVX2; i++)
            acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    __m256 s = acc[0];
    for (int i = 1; i < CHAINS_AVX2; i++)
        s = _mm256_add_ps(s, acc[i]);
    return _mm256_cvtss_f32(s);
}

#define CHAINS_AVX512 24
__attribute__((target("avx512f"))) static float fma_avx512(long iters)
{
    __m512 acc[CHAINS_AVX512];
    const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-3f);
    for (int i = 0; i < CHAINS_AVX512; i++)
        acc[i] = _mm512_set1_ps((float)i);
    for (long it = 0; it < iters; it++)
#pragma GCC unroll 24
        for (int i = 0; i < CHAINS_AVX512; i++)
            acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __m512 s = acc[0];
    for (int i = 1; i < CHAINS_AVX512; i++)
        s = _mm512_add_ps(s, acc[i]);
    return _mm512_reduce_add_ps(s);
}
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
