/*
 * The rows of a work item and what they see.  A work item is a set of query rows of one batch
 * that share a kv head: heads [n_first, n_first + n_count) × positions [i0, i0 + i_count),
 * row r = h·i_count + i.  Score tiles are stored transposed, S[j][r] (kv column major), so
 * per-row softmax work runs down vector lanes without horizontal reductions.
 * Also the workspace-carving helpers every kernel uses.
 */
#ifndef FC_KERNELS_ROWS_H
#define FC_KERNELS_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "../core/dtype.h"
#include "../core/problem.h"
#include "../core/terms.h"
#include "../core/visibility.h"
#include "../cpu/work.h"
#include "simd.h"

static inline int64_t fc_round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* Workspace carving: kernels lay out their per-thread buffers with fc_take from a 64-byte aligned
 * base.  A NULL base measures the layout: offsets advance, no pointer is formed from NULL. */
typedef struct fc_carver {
    char *base;
    size_t at; /* bytes taken so far */
} fc_carver;

static inline void *fc_take(fc_carver *c, size_t bytes)
{
    void *p = c->base ? c->base + c->at : NULL;
    c->at += (bytes + 63) & ~(size_t)63;
    return p;
}

static inline char *fc_align64(void *p) { return (char *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

/* What one row sees: columns in [lo1, hi1) ∪ [lo2, hi2), stored as floats (exact below 2^24)
 * so that visibility tests vectorize. */
typedef struct fc_rows {
    int count, padded;       /* R rows, Rp = R rounded up to FC_W */
    const fc_batch *bt;
    int64_t b, n2;
    int32_t *head;           /* query head of each row */
    int64_t *pos;            /* position of each row in its batch */
    float *lo1, *hi1, *lo2, *hi2;
    float *slope, *apos;     /* ALiBi: x −= slope·|j − apos| per row (when the problem has ALiBi) */
    double *aoff;            /* the row's logits are kept relative: x_true = x + aoff (see below) */
    int64_t kv_begin, kv_end; /* union of the rows' visible columns, [kv_begin, kv_end) */
} fc_rows;

static inline void fc_rows_carve(fc_rows *rw, fc_carver *cur, int64_t Rp)
{
    rw->head = fc_take(cur, (size_t)Rp * sizeof(int32_t));
    rw->pos = fc_take(cur, (size_t)Rp * sizeof(int64_t));
    rw->aoff = fc_take(cur, (size_t)Rp * sizeof(double));
    float **f[] = {&rw->lo1, &rw->hi1, &rw->lo2, &rw->hi2, &rw->slope, &rw->apos};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        *f[k] = fc_take(cur, (size_t)Rp * sizeof(float));
}

/* ALiBi per row in the exact frame of fc_alibi_frame (core/terms.h). */
static inline void fc_rows_alibi(fc_rows *rw, int r, const fc_problem *p, const fc_batch *bt, int64_t b)
{
    rw->slope[r] = p->alibi.slopes[b * p->alibi.sb + rw->head[r] * p->alibi.sn];
    fc_alibi_frame(bt, rw->pos[r], rw->slope[r], p->alibi.sqrt_distance, &rw->apos[r], &rw->aoff[r]);
}

/* The rows of an item and their visible spans. */
static inline void fc_rows_init(fc_rows *rw, const fc_problem *p, const fc_item *it)
{
    const fc_batch *bt = &p->batch[it->b];
    rw->bt = bt;
    rw->b = it->b;
    rw->n2 = it->n_first / p->G;
    rw->count = it->n_count * it->i_count;
    rw->padded = (int)fc_round_up(rw->count, FC_W);
    rw->kv_begin = bt->skv;
    rw->kv_end = 0;
    for (int r = 0; r < rw->padded; r++) {
        float lo1 = 0, hi1 = 0, lo2 = 0, hi2 = 0;
        if (r < rw->count) {
            const int64_t i = it->i0 + r % it->i_count;
            rw->head[r] = (int32_t)(it->n_first + r / it->i_count);
            rw->pos[r] = i;
            int64_t sp[4];
            if (fc_row_spans(bt, i, sp) > 0) {
                lo1 = (float)sp[0], hi1 = (float)sp[1], lo2 = (float)sp[2], hi2 = (float)sp[3];
                const int64_t first = sp[1] > sp[0] ? sp[0] : sp[2], last = sp[3] > sp[2] ? sp[3] : sp[1];
                rw->kv_begin = first < rw->kv_begin ? first : rw->kv_begin;
                rw->kv_end = last > rw->kv_end ? last : rw->kv_end;
            }
        } else {
            rw->head[r] = rw->head[0];
            rw->pos[r] = rw->pos[0];
        }
        rw->lo1[r] = lo1, rw->hi1[r] = hi1, rw->lo2[r] = lo2, rw->hi2[r] = hi2;
        rw->aoff[r] = 0.0;
        if (p->alibi.slopes)
            fc_rows_alibi(rw, r, p, bt, it->b);
    }
    if (rw->kv_begin >= rw->kv_end)
        rw->kv_begin = rw->kv_end = 0;
}

typedef enum { FC_TILE_SKIP, FC_TILE_PARTIAL, FC_TILE_FULL } fc_tile_kind;

/* Whether kv columns [j0, j1) are invisible to every row, visible to every row, or in between. */
static inline fc_tile_kind fc_rows_classify(const fc_rows *rw, int64_t j0, int64_t j1)
{
    bool any = false, all = true;
    const float a = (float)j0, z = (float)j1;
    for (int r = 0; r < rw->count; r++) {
        const bool touch1 = rw->lo1[r] < z && a < rw->hi1[r];
        const bool touch2 = rw->lo2[r] < z && a < rw->hi2[r];
        any |= touch1 | touch2;
        all &= (rw->lo1[r] <= a && z <= rw->hi1[r]) || (rw->lo2[r] <= a && z <= rw->hi2[r]);
    }
    return !any ? FC_TILE_SKIP : all ? FC_TILE_FULL : FC_TILE_PARTIAL;
}

#endif /* FC_KERNELS_ROWS_H */
