/*
 * The one visibility model: a row of a batch sees a band of columns around its diagonal plus an
 * optional prefix, i.e. at most two disjoint spans.  Faces compile sparse modes, causal alignment,
 * windows, start positions and prefixes into fc_batch (vis_lo, vis_hi, prefix); kernels and the
 * FLOP count read them back only through fc_row_spans().  Explicit mask tensors act on top.
 */
#ifndef FC_CORE_VISIBILITY_H
#define FC_CORE_VISIBILITY_H

#include <stdint.h>

#include "checked.h"
#include "hd.h"
#include "problem.h"

/* Bound for band offsets: anything beyond ±(Sq + Skv) means "unbounded" and must not overflow
 * when a row index is added (semantics §2.5: clamp before adding Δ). */
static inline FC_HD int64_t fc_band_clamp(int64_t v, int64_t sq, int64_t skv)
{
    const int64_t lim = sq + skv + 1;
    return v > lim ? lim : v < -lim ? -lim : v;
}

/* Visible columns of row i: spans [sp[0], sp[1]) and [sp[2], sp[3]), sorted and disjoint; an empty
 * span has equal ends.  Returns the number of visible columns. */
static inline FC_HD int64_t fc_row_spans(const fc_batch *bt, int64_t i, int64_t sp[4])
{
    sp[0] = sp[1] = sp[2] = sp[3] = 0;
    if (i >= bt->sq)
        return 0; /* padding row */
    int64_t a = i + bt->vis_lo, z = i + bt->vis_hi + 1; /* band [a, z) */
    a = a < bt->col_lo ? bt->col_lo : a;
    z = z > bt->skv ? bt->skv : z;
    if (a > z)
        a = z;
    const int64_t p0 = bt->col_lo, pz = bt->prefix < bt->skv ? bt->prefix : bt->skv; /* prefix [p0, pz) */
    if (pz <= p0 || a >= z) {
        if (pz > p0)
            a = p0, z = pz;
        sp[0] = a, sp[1] = z;
    } else if (a <= pz) { /* prefix and band touch: one span */
        sp[0] = p0, sp[1] = z > pz ? z : pz;
    } else {
        sp[0] = p0, sp[1] = pz, sp[2] = a, sp[3] = z;
    }
    return (sp[1] - sp[0]) + (sp[3] - sp[2]);
}

/* The rows [*i0, *i1) of a batch that may see a column in [j0, j1) (a superset is fine: kernels
 * still test every row; this only bounds the search). */
static inline FC_HD void fc_col_rows(const fc_batch *bt, int64_t j0, int64_t j1, int64_t *i0, int64_t *i1)
{
    int64_t lo = j0 - bt->vis_hi, hi = j1 - bt->vis_lo; /* i ∈ [j0 − vis_hi, j1 − 1 − vis_lo] */
    if (bt->prefix > j0)
        lo = 0, hi = bt->sq;
    *i0 = lo < 0 ? 0 : lo > bt->sq ? bt->sq : lo;
    *i1 = hi < *i0 ? *i0 : hi > bt->sq ? bt->sq : hi;
}

/* Sparse selection (semantics §5.3): the index row of (b, i, n2), and entry k of it read as a
 * span of columns [*a, *z) below the causal threshold thr.  Returns 1 for a span, 0 for an entry
 * that selects nothing (a block at or after the threshold), −1 at the end of the list. */
static inline FC_HD const char *fc_sparse_row(const fc_sparse_view *sv, const fc_batch *bt, int64_t b, int64_t i, int64_t n2)
{
    const int64_t es = sv->dtype == FC_I64 ? 8 : 4;
    return sv->data + (b * sv->sb + (bt->q_tok + i) * sv->si + n2 * sv->sn) * es;
}

static inline FC_HD int64_t fc_sparse_threshold(const fc_sparse_view *sv, const fc_batch *bt, int64_t i)
{
    return sv->causal ? bt->skv - bt->sq + i + 1 : bt->skv;
}

static inline FC_HD int fc_sparse_span(const fc_sparse_view *sv, const char *row, int64_t k, int64_t thr, int64_t *a,
                                 int64_t *z)
{
    if (k >= sv->count)
        return -1;
    const int64_t at = k * sv->sk, bs = sv->block_size;
    const int64_t idx = sv->dtype == FC_I64 ? ((const int64_t *)row)[at] : ((const int32_t *)row)[at];
    if (idx < 0)
        return -1; /* −1 pads the list: valid entries come first */
    if (thr <= 0 || idx >= fc_ceil_div(thr, bs))
        return 0; /* starts at or after the threshold (also keeps idx·bs from overflowing) */
    *a = idx * bs;
    *z = bs < thr - *a ? *a + bs : thr; /* *a + bs may overflow: bs can be near INT64_MAX */
    return 1;
}

#endif /* FC_CORE_VISIBILITY_H */
