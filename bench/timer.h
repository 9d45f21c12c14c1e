/*
 * Wall-clock timing of a callback: warm-up runs, then the min and median of timed repeats.
 * The min is the headline number because the machine is shared (noise only ever adds time);
 * the median shows how noisy the run was.
 */
#ifndef FLASHC_BENCH_TIMER_H
#define FLASHC_BENCH_TIMER_H

#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef bool (*bench_fn)(void *ctx);

static inline int bench_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define BENCH_MAX_REPEAT 1000

/* Runs fn warmup times untimed, then repeat (1..BENCH_MAX_REPEAT) times timed.  Returns false as
 * soon as fn does. */
static inline bool bench_time(bench_fn fn, void *ctx, int warmup, int repeat, double *min, double *median)
{
    double t[BENCH_MAX_REPEAT];
    if (repeat < 1)
        repeat = 1;
    if (repeat > BENCH_MAX_REPEAT)
        repeat = BENCH_MAX_REPEAT;
    for (int i = 0; i < warmup; i++)
        if (!fn(ctx))
            return false;
    for (int i = 0; i < repeat; i++) {
        const double t0 = bench_now();
        if (!fn(ctx))
            return false;
        t[i] = bench_now() - t0;
    }
    qsort(t, (size_t)repeat, sizeof t[0], bench_cmp_double);
    *min = t[0];
    *median = repeat % 2 ? t[repeat / 2] : 0.5 * (t[repeat / 2 - 1] + t[repeat / 2]);
    return true;
}

#endif
