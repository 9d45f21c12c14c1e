/*
 * CPU work decomposition: items (query rows of one batch sharing a kv head) and the kernel table
 * each instruction set provides.
 */
#ifndef FC_CPU_WORK_H
#define FC_CPU_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/problem.h"

/* Query heads [n_first, n_first + n_count) × positions [i0, i0 + i_count) of batch b; all heads
 * of an item share one kv head.  With nsplit > 1 the item covers kv slice `split` of nsplit. */
typedef struct fc_item {
    int64_t b;
    int64_t n_first, n_count;
    int64_t i0, i_count;
    int64_t split, nsplit;
} fc_item;

/* kv rows [j0, j0 + j_count) of kv head n2 of batch b (backward dk/dv pass). */
typedef struct fc_kv_item {
    int64_t b, n2;
    int64_t j0, j_count;
} fc_kv_item;

/* Tile geometry chosen by the backend for one problem. */
typedef struct fc_tiles {
    int rows;    /* query rows per item (≤) */
    int cols;    /* kv columns per tile */
    int kv_rows; /* kv rows per backward dk/dv item: cols, or a multiple of it for sparse problems */
    bool fused;  /* backward: one item per kv head computes dQ, dK and dV in one pass (bwd_head_item) */
} fc_tiles;

/* How batch bt's query rows are cut into items: i_count positions × n_count heads each. */
static inline void fc_item_shape(const fc_problem *p, const fc_batch *bt, fc_tiles t, int64_t *i_count, int64_t *n_count)
{
    const int64_t rows = bt->q_rows > 0 ? bt->q_rows : 1;
    *i_count = p->sparse.data ? 1 : rows < t.rows ? rows : t.rows; /* sparse rows: one position each */
    const int64_t n = t.rows / *i_count;
    *n_count = n < 1 ? 1 : n > p->G ? p->G : n;
}

typedef struct fc_cpu_kernels {
    const char *isa;
    /* kv columns per forward tile this set prefers for the problem (0: the backend's choice) */
    int (*fwd_cols)(const fc_problem *p);
    /* query rows per forward item it prefers where it prefers wide tiles (0: 128) */
    int (*fwd_rows)(const fc_problem *p);
    size_t (*fwd_workspace)(const fc_problem *p, fc_tiles t);
    size_t (*fwd_partial_floats)(const fc_problem *p, fc_tiles t);
    void (*fwd_item)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, float *partial);
    void (*fwd_merge)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, const float *partial);
    size_t (*bwd_workspace)(const fc_problem *p, fc_tiles t);
    void (*bwd_dq_item)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws);
    void (*bwd_dkv_item)(const fc_problem *p, const fc_kv_item *it, fc_tiles t, void *ws);
    void (*bwd_sparse_dkv_item)(const fc_problem *p, const fc_kv_item *it, fc_tiles t, void *ws);
    void (*bwd_dsink_head)(const fc_problem *p, int64_t n1, void *ws);
    void (*bwd_head_item)(const fc_problem *p, int64_t b, int64_t n2, fc_tiles t, void *ws); /* t.fused */
} fc_cpu_kernels;

extern const fc_cpu_kernels fc_cpu_kernels_scalar, fc_cpu_kernels_vec16, fc_cpu_kernels_avx2, fc_cpu_kernels_avx512,
    fc_cpu_kernels_avx512bf16, fc_cpu_kernels_amx, fc_cpu_kernels_neon;

#endif /* FC_CPU_WORK_H */
