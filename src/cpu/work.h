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

/* Tile geometry chosen by the backend for one problem (the tile policy, tiles.c). */
typedef struct fc_tiles {
    int rows;    /* query rows per item (≤) */
    int cols;    /* kv columns per tile */
    int kv_rows; /* kv rows per backward dk/dv item: cols, or a multiple of it (sparse, fused) */
    bool fused;  /* backward: one item per kv head computes dQ, dK and dV in one pass (bwd_head_item) */
} fc_tiles;

/* Items of at most this many rows (decode: the G heads of one position) take the few-rows kinds:
 * scores by dot products that read the keys where they lie (kernels/qk.h). */
#define FC_FEW_ROWS 4

/* The forward kernels: one straight-line entry point per kind (entry.h). */
typedef enum fc_fwd_kind {
    FC_FWD_GEMM,     /* fp32 products on the micro-GEMM (gemm.h) */
    FC_FWD_DOTS,     /* few rows: S by dot products (qk.h), P·V on the micro-GEMM */
    FC_FWD_DECODE,   /* few rows, fully visible tiles fused (decode.h); the dot-product step elsewhere */
    FC_FWD_TILES_QK, /* S on bf16 tile products, S column-major (amx_pack.h); P·V on the micro-GEMM */
    FC_FWD_TILES,    /* S and P·V on bf16 tile products, S column-major (amx_pack.h) */
    FC_FWD_FUSED,    /* bf16 tile products, the fused row pipeline (amx_rows.h) */
    FC_FWD_KINDS
} fc_fwd_kind;

/* The backward's products. */
typedef enum fc_bwd_kind {
    FC_BWD_FP32,     /* fp32 products on the micro-GEMM */
    FC_BWD_TILES,    /* (amx) tile products, P and dS as bf16 parts; pairs with a non-finite operand in fp32 */
    FC_BWD_ELEMENTS, /* (amx) the same, P and dS made as bf16 operands in one element pass */
    FC_BWD_KINDS
} fc_bwd_kind;

/* What a kernel set does with a problem: facts of the set's kernels, never preferences (the tile
 * policy, tiles.c, decides the tiles from them). */
typedef struct fc_kinds {
    fc_fwd_kind many, few; /* forward items of more than FC_FEW_ROWS rows, and the others */
    bool parts;            /* many-row items split fp16 operands into bf16 hi/lo parts */
    fc_bwd_kind bwd;
} fc_kinds;

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
    bool avx512; /* the set's vectors are AVX-512 registers */
    bool avx2;   /* the set's vectors are AVX2 registers (16 of 8 lanes: 6-row register tiles) */
    void (*kinds)(const fc_problem *p, fc_kinds *out);
    size_t (*fwd_workspace)(const fc_problem *p, fc_tiles t);
    size_t (*fwd_partial_floats)(const fc_problem *p, fc_tiles t);
    /* one entry point per kind (NULL where the set has no such kernels: its kinds never name it) */
    void (*fwd_item[FC_FWD_KINDS])(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, float *partial);
    void (*fwd_merge)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, const float *partial);
    size_t (*bwd_workspace)(const fc_problem *p, fc_tiles t);
    /* per products kind: the dq pass's items, the dk/dv pass's, the fused pass's (t.fused) */
    void (*bwd_dq_item[FC_BWD_KINDS])(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws);
    void (*bwd_dkv_item[FC_BWD_KINDS])(const fc_problem *p, const fc_kv_item *it, fc_tiles t, void *ws);
    void (*bwd_head_item[FC_BWD_KINDS])(const fc_problem *p, int64_t b, int64_t n2, fc_tiles t, void *ws);
    void (*bwd_sparse_dkv_item)(const fc_problem *p, const fc_kv_item *it, fc_tiles t, void *ws); /* fp32 */
    void (*bwd_dsink_head)(const fc_problem *p, int64_t n1, void *ws);
} fc_cpu_kernels;

extern const fc_cpu_kernels fc_cpu_kernels_scalar, fc_cpu_kernels_vec16, fc_cpu_kernels_avx2, fc_cpu_kernels_avx512,
    fc_cpu_kernels_avx512bf16, fc_cpu_kernels_amx, fc_cpu_kernels_neon, fc_cpu_kernels_neonbf16;

#endif /* FC_CPU_WORK_H */
