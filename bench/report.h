/* Writing results: a human table, CSV, or JSON (one object with the run's settings and a list). */
#ifndef FLASHC_BENCH_REPORT_H
#define FLASHC_BENCH_REPORT_H

#include <stdio.h>

#include "bench.h"
#include "peak.h"

typedef enum bench_format { BENCH_FORMAT_TABLE, BENCH_FORMAT_CSV, BENCH_FORMAT_JSON } bench_format;

/* What a reader needs to reproduce or compare a run. */
typedef struct bench_meta {
    const char *version;
    const char *isa;
    int threads;
    int warmup;
    int repeat;             /* 0: per case (5 unless the suite says otherwise) */
    const char *blas;
    const char *blas_warning; /* "" or why the baseline's BLAS core is not this CPU's best */
    double baseline_cap;    /* bytes */
    double load_start, load_end; /* 1-minute load average before and after (-1: unknown) */
    bench_peak peak;        /* the register-only FMA peak of the run (gflops 0: none measured) */
    bool cpu_time;          /* times are the process's CPU time (--cpu-time) */
    bool huge_pages;        /* operands of 2 MiB and more asked for on huge pages (--huge-pages) */
    char cpu[128];
    char date[40];
    char command[512];
} bench_meta;

bool bench_format_parse(const char *name, bench_format *out);

/* Progress on stderr: "[3/12] suite case ..." before a case, its headline after. */
void bench_progress_start(size_t i, size_t n, const bench_result *r);
void bench_progress_done(const bench_result *r);

/* The heading of the work column for a rate unit: "GFLOP" for "GFLOP/s", "G-work" for mixed units. */
void bench_work_column(const char *unit, char *buf, size_t size);

void bench_report(FILE *f, bench_format fmt, const bench_meta *m, const bench_result *r, size_t n);

#endif
