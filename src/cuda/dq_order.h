/*
 * The order in which the fused CUDA backward adds dQ (C, host and device; tests/unit models it).
 *
 * One unit of work = one kv tile t (bn key rows) of one (batch, kv head, feature part).  It visits
 * the query tiles [qa, qz) of bm rows that may see its columns (fc_col_rows, rounded out to whole
 * tiles), for each query head of its group, and adds its dQ partial of each into that query
 * tile's fp32 accumulator.  Query tile qt receives its partials in increasing kv tile order: kv
 * tile t adds when qt's turn counter equals turn(t, qt), the number of kv tiles t' < t of the
 * same (batch, kv head, part) that visit qt, and then sets it to turn + 1.  So every query tile
 * sums the same partials in the same order whatever the grid and schedule: bitwise repeatable.
 *
 * Turns without a table: the tiles with columns in the prefix (t < P) see every row, so visit
 * every query tile; past the prefix, the row range [i0, i1) of a tile only moves forward with t
 * (both ends are clamped affine functions of its columns), so the tiles P..t−1 that visit qt are
 * the ones from A(qt) = the first t' ≥ P whose range reaches past qt's first row.  Hence
 *     turn(t, qt) = min(t, P) + (t ≥ P ? t − A(qt) : 0),
 * and A(qt) only grows with qt, so a unit walking its query tiles in order finds it by advancing
 * (fc_dq_first_sharer searches from any lower bound).  tests/unit/test_dq_order.c checks this
 * against counting, over random batches.
 */
#ifndef FC_CUDA_DQ_ORDER_H
#define FC_CUDA_DQ_ORDER_H

#include <stdint.h>
#include <stdlib.h>

#include "../core/hd.h"
#include "../core/problem.h"
#include "../core/visibility.h"

/* The query tiles [*qa, *qz) kv tile t visits (both 0 when none: no live column, or no row sees
 * one). */
static inline FC_HD void fc_dq_visits(const fc_batch *bt, int64_t t, int bn, int bm, int64_t *qa, int64_t *qz)
{
    const int64_t j0 = t * bn, j1 = j0 + bn < bt->skv ? j0 + bn : bt->skv;
    int64_t i0 = 0, i1 = 0;
    if (j0 < j1)
        fc_col_rows(bt, j0, j1, &i0, &i1);
    *qa = i0 < i1 ? i0 / bm : 0;
    *qz = i0 < i1 ? (i1 + bm - 1) / bm : 0;
}

/* P: the kv tiles whose columns start inside the prefix (each sees every row). */
static inline FC_HD int64_t fc_dq_prefix_tiles(const fc_batch *bt, int bn)
{
    const int64_t pz = bt->prefix < bt->skv ? bt->prefix : bt->skv;
    return bt->sq > 0 && pz > 0 ? (pz + bn - 1) / bn : 0;
}

/* A(qt): the first kv tile in [lo, t] that visits query tile qt's rows or later ones (lo ≥ P and
 * lo ≤ A(qt); t visits qt).  Binary search: qz only grows over [P, t]. */
static inline FC_HD int64_t fc_dq_first_sharer(const fc_batch *bt, int64_t lo, int64_t t, int64_t qt, int bn, int bm)
{
    int64_t hi = t, qa, qz; /* invariant: qz(hi) > qt; every tile before lo has qz ≤ qt */
    fc_dq_visits(bt, lo, bn, bm, &qa, &qz);
    if (qz > qt) /* the usual case when walking query tiles in order: A has not moved */
        return lo;
    lo++;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        fc_dq_visits(bt, mid, bn, bm, &qa, &qz);
        if (qz > qt)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* turn(t, qt) for a kv tile t that visits qt, given A = fc_dq_first_sharer(.., qt, ..) (unused
 * when t < P). */
static inline FC_HD int64_t fc_dq_turn(int64_t t, int64_t P, int64_t A) { return t < P ? t : P + (t - A); }

/* The launch order the turns need: within a batch, kv tiles in increasing order (a unit waits
 * only on units with a smaller index, see backward_dq.cuh).  pairs: n (batch, tile) entries in
 * the cost order the plan chose; each batch's slots keep their places and take that batch's tiles
 * in increasing order.  next: one zeroed counter per batch. */
static inline void fc_dq_ascending_tiles(int32_t *pairs, int64_t n, int64_t *next)
{
    for (int64_t x = 0; x < n; x++)
        pairs[2 * x + 1] = (int32_t)next[pairs[2 * x]]++;
}

/* The "spread" launch order (FLASHC_CUDA_BWD_ORDER=spread), applied after fc_dq_ascending_tiles:
 * the pairs stably sorted by tile index, so that the k-th kv tiles of all batches run together.
 * Each (batch, kv head, part) is one chain of turns, and the CTAs resident at a time hold about
 * resident / chains consecutive tiles of each; interleaving the batches makes B times more chains,
 * each B times shorter, so a late tile holds up fewer followers.  Each batch's tiles stay in
 * increasing order (a stable sort by tile keeps the batch's relative order, which was already by
 * tile), so the no-deadlock argument holds unchanged.  False when out of host memory. */
typedef struct {
    int32_t tile, batch;
    int64_t at;
} fc_dq_slot;

static inline int fc_dq_slot_cmp(const void *a, const void *b)
{
    const fc_dq_slot *x = (const fc_dq_slot *)a, *y = (const fc_dq_slot *)b;
    if (x->tile != y->tile)
        return x->tile < y->tile ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static inline bool fc_dq_spread_tiles(int32_t *pairs, int64_t n)
{
    fc_dq_slot *slot = (fc_dq_slot *)malloc((size_t)(n ? n : 1) * sizeof *slot);
    if (!slot)
        return false;
    for (int64_t x = 0; x < n; x++)
        slot[x].batch = pairs[2 * x], slot[x].tile = pairs[2 * x + 1], slot[x].at = x;
    qsort(slot, (size_t)n, sizeof *slot, fc_dq_slot_cmp);
    for (int64_t x = 0; x < n; x++)
        pairs[2 * x] = slot[x].batch, pairs[2 * x + 1] = slot[x].tile;
    free(slot);
    return true;
}

#endif /* FC_CUDA_DQ_ORDER_H */
