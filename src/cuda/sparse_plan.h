/*
 * The sparse forward's geometry (C, host and device; tests/unit/test_sparse_plan.c checks it on the
 * CPU).  One CTA serves one query token (b, i) of one kv head: the MMA's 16 rows are 16 query heads
 * of the kv head's group (a group of G > 16 heads takes ⌈G/16⌉ CTAs), its columns the positions
 * the token's index row selects.  The query/key tile holds each row's features and, from feature
 * `rope_at` on, its rope features, so that one dot product covers q·k + q_rope·k_rope.
 */
#ifndef FC_CUDA_SPARSE_PLAN_H
#define FC_CUDA_SPARSE_PLAN_H

#include <stdint.h>

#include "../core/checked.h"
#include "../core/hd.h"
#include "../core/problem.h"

/* Query heads per CTA: the rows of one m16n8k16 tile. */
#define FC_SFA_HEADS 16

/* The MLA class: query/key tiles of 576 features (512 + 64 rope), value tiles of 512. */
#define FC_SFA_MLA_DK 576
#define FC_SFA_MLA_DV 512

/* Where the rope features start in the query/key tile: Dqk rounded up to a 16-byte chunk of
 * 16-bit elements, so that no chunk holds features of both parts. */
static inline FC_HD int64_t fc_sfa_rope_at(int64_t dqk) { return (dqk + 7) / 8 * 8; }

/* The kernel class for the head dims: 64, 128 or 256 (query/key tile = value tile = the class),
 * FC_SFA_MLA_DK (576 / 512), or 0 when none holds them. */
static inline FC_HD int fc_sfa_class(int64_t dqk, int64_t dr, int64_t dv)
{
    if (dqk < 1 || dr < 0 || dv < 1 || dqk > FC_SFA_MLA_DK || dr > FC_SFA_MLA_DK || dv > FC_SFA_MLA_DK)
        return 0;
    const int64_t k = fc_sfa_rope_at(dqk) + dr, d = k > dv ? k : dv;
    if (d <= 256)
        return d <= 64 ? 64 : d <= 128 ? 128 : 256;
    return k <= FC_SFA_MLA_DK && dv <= FC_SFA_MLA_DV ? FC_SFA_MLA_DK : 0;
}

/* The CTAs along the heads: ⌈G / 16⌉ per kv head. */
static inline FC_HD int64_t fc_sfa_head_tiles(int64_t g) { return (g + FC_SFA_HEADS - 1) / FC_SFA_HEADS; }

/* Query rows of the whole problem (the grid's first dimension): every batch's q_rows, padding rows
 * included (they are written as empty rows). */
static inline FC_HD int64_t fc_sfa_rows(const fc_batch *bt, int64_t nb)
{
    return nb > 0 ? bt[nb - 1].stat_row0 + bt[nb - 1].q_rows : 0;
}

/* Row r of the problem (r < fc_sfa_rows) as batch *b and its row *i: the last batch whose rows
 * start at or before r (stat_row0 counts the rows before each batch; batches without rows share
 * the next one's start and are skipped). */
static inline FC_HD void fc_sfa_token(const fc_batch *bt, int64_t nb, int64_t r, int64_t *b, int64_t *i)
{
    int64_t lo = 0, hi = nb - 1; /* bt[lo].stat_row0 <= r */
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (bt[mid].stat_row0 <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    *b = lo, *i = r - bt[lo].stat_row0;
}

/* The sparse backward's dK/dV side (sparse_bwd_kernel.cuh): one CTA owns FC_SFAG_KEYS kv rows of
 * one selection block (block kb of batch b covers rows [kb·bs, kb·bs + bs)) and one kv head; it
 * steps through the (token, query head) pairs that selected the block, FC_SFAG_PAIRS at a time. */
#define FC_SFAG_KEYS 16
#define FC_SFAG_PAIRS 16

/* Selection blocks that cover a batch's kv_rows rows (the rows its dK/dV outputs have). */
static inline FC_HD int64_t fc_sfag_blocks(int64_t kv_rows, int64_t bs) { return fc_ceil_div(kv_rows, bs); }

/* dK/dV CTAs per block: FC_SFAG_KEYS-row parts of min(bs, the longest batch's kv rows). */
static inline FC_HD int64_t fc_sfag_parts(int64_t bs, int64_t kv_rows_max)
{
    return fc_ceil_div(bs < kv_rows_max ? bs : kv_rows_max, FC_SFAG_KEYS);
}

/* The batch of global block number g (per kv head): the last b with blk0[b] <= g (blk0: the
 * blocks before each batch, B + 1 entries; batches without blocks share the next one's start). */
static inline FC_HD int64_t fc_sfag_block_batch(const int64_t *blk0, int64_t batches, int64_t g)
{
    int64_t lo = 0, hi = batches - 1;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (blk0[mid] <= g)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

#endif /* FC_CUDA_SPARSE_PLAN_H */
