/*
 * CPU work decomposition: items (query rows of one batch sharing a kv head) and the kernel table
 * each instruction set provides.
 */
#ifndef FC_CPU_WORK_H
#define FC_CPU_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "../core/problem.h"

/* Query heads [n_first, n_first + n_count) × positions [i0, i0 + i_count) of batch b; all heads
 * of an item share one kv head. */
typedef struct fc_item {
    int64_t b;
    int64_t n_first, n_count;
    int64_t i0, i_count;
} fc_item;

/* Tile geometry chosen by the backend for one problem. */
typedef struct fc_tiles {
    int rows; /* query rows per item (≤) */
    int cols; /* kv columns per tile */
} fc_tiles;

typedef struct fc_cpu_kernels {
    const char *isa;
    size_t (*fwd_workspace)(const fc_problem *p, fc_tiles t);
    void (*fwd_item)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws);
} fc_cpu_kernels;

extern const fc_cpu_kernels fc_cpu_kernels_scalar, fc_cpu_kernels_avx2, fc_cpu_kernels_avx512;

#endif /* FC_CPU_WORK_H */
