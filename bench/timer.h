/*
 * Timing of callbacks: warm-up runs, then the min and median of timed repeats.  The min is the
 * headline number because the machine is shared (noise only ever adds time); the median shows how
 * noisy the run was.  The clock is the wall clock, or with --cpu-time the process's CPU time (a
 * loaded machine at 1 thread: the time the run was not given the CPU does not count; at more
 * threads it adds up the threads, idle OpenMP workers' spinning included).
 */
#ifndef FLASHC_BENCH_TIMER_H
#define FLASHC_BENCH_TIMER_H

#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

extern clockid_t bench_clock; /* CLOCK_MONOTONIC, or CLOCK_PROCESS_CPUTIME_ID (--cpu-time) */

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(bench_clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef bool (*bench_fn)(void *ctx);

static inline int bench_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define BENCH_MAX_REPEAT 1000

/* Times k functions (k <= BENCH_MAX_FNS) side by side: each warms up `warmup` times, then the
 * timed runs alternate fn[0], fn[1], ..., fn[0], ...  Interleaving matters on a shared machine:
 * a burst of someone else's load then slows every contender alike, so the ratio of their mins
 * stays meaningful.  Returns the index of the first function that failed, or -1. */
#define BENCH_MAX_FNS 4

static inline int bench_time_interleaved(int k, const bench_fn *fn, void *const *ctx, int warmup, int repeat,
                                         double *min, double *median)
{
    double t[BENCH_MAX_FNS][BENCH_MAX_REPEAT]; /* 32 KiB of stack */
    if (repeat < 1)
        repeat = 1;
    if (repeat > BENCH_MAX_REPEAT)
        repeat = BENCH_MAX_REPEAT;
    for (int f = 0; f < k; f++)
        for (int i = 0; i < warmup; i++)
            if (!fn[f](ctx[f]))
                return f;
    for (int i = 0; i < repeat; i++)
        for (int f = 0; f < k; f++) {
            const double t0 = bench_now();
            if (!fn[f](ctx[f]))
                return f;
            t[f][i] = bench_now() - t0;
        }
    for (int f = 0; f < k; f++) {
        qsort(t[f], (size_t)repeat, sizeof t[f][0], bench_cmp_double);
        min[f] = t[f][0];
        median[f] = repeat % 2 ? t[f][repeat / 2] : 0.5 * (t[f][repeat / 2 - 1] + t[f][repeat / 2]);
    }
    return -1;
}

#endif
