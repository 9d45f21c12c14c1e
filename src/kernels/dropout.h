/*
 * Dropout from the caller's keep bits (semantics §2.7): bit e = bit (e mod 8) of byte e/8,
 * least significant first, 1 = keep; e = drop_bit0(b) + (n1·Sq_b + i)·Skv_b + j.  Or the same
 * enumeration through the counter-based generator (core/philox.h): a pure function of e, so every
 * thread count and the backward see the same bits.
 */
#ifndef FC_KERNELS_DROPOUT_H
#define FC_KERNELS_DROPOUT_H

#include "../core/philox.h"
#include "../core/terms.h"
#include "rows.h"

/* Zeroes the tile elements whose keep bit is 0 (the 1/keep_prob factor is applied by the caller). */
static inline void fc_dropout_tile(float *S, int jn, int64_t j0, const fc_problem *p, const fc_rows *rw)
{
    const fc_batch *bt = rw->bt;
    for (int r = 0; r < rw->count; r++) {
        if (rw->pos[r] >= bt->sq)
            continue;
        const int64_t e0 = fc_keep_bit_index(bt, rw->head[r], rw->pos[r], j0);
        if (p->drop_philox) {
            fc_philox_stream st = fc_philox_stream_init(p->drop_seed, p->drop_offset, p->drop_threshold);
            for (int j = 0; j < jn; j++)
                if (!fc_philox_keep(&st, (uint64_t)(e0 + j)))
                    S[(ptrdiff_t)j * rw->padded + r] = 0.0f;
            continue;
        }
        for (int j = 0; j < jn; j++)
            if (!fc_keep_bit(p->drop_bits, e0 + j))
                S[(ptrdiff_t)j * rw->padded + r] = 0.0f;
    }
}

/* x·keep/keep_prob over the tile: dropped elements vanish, kept ones scale by 1/keep_prob. */
static inline void fc_dropout_scaled_tile(float *S, int jn, int64_t j0, const fc_problem *p, const fc_rows *rw)
{
    fc_dropout_tile(S, jn, j0, p, rw);
    const fvec inv_keep = v_set1(1.0f / p->keep_prob);
    for (int j = 0; j < jn; j++)
        for (int r = 0; r < rw->padded; r += FC_W) {
            float *x = S + (ptrdiff_t)j * rw->padded + r;
            v_store(x, v_mul(v_load(x), inv_keep));
        }
}

#endif /* FC_KERNELS_DROPOUT_H */
