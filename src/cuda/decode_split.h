/*
 * How the tensor-core decode (decode_mma_kernel.cuh) cuts its work, in plain C for the host, the
 * kernel and the unit tests: a row's visible kv range is cut into blocks of FC_DEC_BLOCK positions
 * counted from its start (fixed by the problem: each block's partial result is the same whatever
 * the split count), and a launch gives each (batch, kv head) `nsplit` CTAs that take runs of
 * whole blocks.
 */
#ifndef FC_CUDA_DECODE_SPLIT_H
#define FC_CUDA_DECODE_SPLIT_H

#include <stdint.h>

#include "../core/hd.h"

#define FC_DEC_BLOCK 1024
#define FC_DEC_MAX_SPLITS 1024

/* Blocks of a visible range of len positions. */
static inline FC_HD int64_t fc_dec_blocks(int64_t len) { return len > 0 ? (len + FC_DEC_BLOCK - 1) / FC_DEC_BLOCK : 0; }

/* The blocks [*k0, *k1) that CTA `split` of `nsplit` takes of a row's nblk (runs of equal length,
 * the last ones possibly short or empty). */
static inline FC_HD void fc_dec_split_range(int64_t nblk, int64_t nsplit, int64_t split, int64_t *k0, int64_t *k1)
{
    const int64_t per = nsplit > 0 ? (nblk + nsplit - 1) / nsplit : nblk;
    const int64_t a = split * per < nblk ? split * per : nblk;
    *k0 = a;
    *k1 = a + per < nblk ? a + per : nblk;
}

/* CTAs per (batch, kv head) for `rows` (batch, kv head) pairs whose longest visible range has
 * maxblk blocks, on `slots` CTA slots (SMs × CTAs per SM): the count that minimises waves × blocks
 * per CTA on the longest row (the time in block times), the smallest such on ties.  1 when there
 * is nothing to split. */
static inline int fc_dec_split_count(int64_t rows, int64_t maxblk, int64_t slots)
{
    if (rows <= 0 || maxblk <= 1 || slots <= 0)
        return 1;
    const int64_t cap = maxblk < FC_DEC_MAX_SPLITS ? maxblk : FC_DEC_MAX_SPLITS;
    int64_t best = 1, best_cost = INT64_MAX;
    for (int64_t n = 1; n <= cap; n++) {
        if (rows > INT64_MAX / n)
            break;
        const int64_t waves = (rows * n + slots - 1) / slots, per = (maxblk + n - 1) / n;
        if (waves <= INT64_MAX / per && waves * per < best_cost)
            best = n, best_cost = waves * per;
    }
    return (int)best;
}

#endif /* FC_CUDA_DECODE_SPLIT_H */
