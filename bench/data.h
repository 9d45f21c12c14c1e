/* Benchmark inputs: aligned buffers, reproducible random values, fp16/bf16 <-> fp32. */
#ifndef FLASHC_BENCH_DATA_H
#define FLASHC_BENCH_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flashc.h"

/* 64-byte aligned, zero-filled; NULL on failure.  Free with free(). */
void *bench_alloc(size_t bytes);

/* From now on buffers of 2 MiB and more are 2 MiB aligned and asked for on huge pages
 * (madvise MADV_HUGEPAGE: Linux's transparent huge pages, where they are enabled; elsewhere a
 * no-op).  Returns whether this system has the request. */
bool bench_alloc_huge_pages(void);

/* n values uniform in [-1, 1) (FC_I8: scaled by 127), the same for the same seed. */
void bench_fill_random(void *data, fc_dtype dtype, size_t n, uint64_t seed);

/* n values of dtype (FC_F32, FC_F16 or FC_BF16) into dst as fp32. */
void bench_to_f32(const void *src, fc_dtype dtype, size_t n, float *dst);

#endif
