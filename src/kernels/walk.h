/* Which kv tiles an item visits: its dense visible range, or the blocks its index row selects. */
#ifndef FC_KERNELS_WALK_H
#define FC_KERNELS_WALK_H

#include "rows.h"


/* The kv tiles an item visits, in order, within the slice [lo, hi): dense items step through
 * their rows' visible range in tiles of `cols` and skip tiles no row sees; sparse items walk the
 * blocks listed in their index row (all rows of a sparse item share one position and kv head),
 * each cut into pieces of at most `cols`, every piece fully visible. */
typedef struct fc_kv_walk {
    const fc_rows *rw;
    int cols;
    int64_t lo, hi, next;
    const fc_sparse_view *sparse; /* NULL = dense */
    const char *ind;      /* sparse: the index row, NULL when the row selects nothing */
    int64_t k, thr, span_hi;
} fc_kv_walk;

static inline void fc_walk_init(fc_kv_walk *w, const fc_problem *p, const fc_rows *rw, int cols, int64_t lo, int64_t hi)
{
    memset(w, 0, sizeof *w);
    w->rw = rw;
    w->cols = cols;
    w->sparse = p->sparse.data ? &p->sparse : NULL;
    if (!w->sparse) {
        w->lo = lo > rw->kv_begin ? lo : rw->kv_begin;
        w->hi = hi < rw->kv_end ? hi : rw->kv_end;
        w->next = w->lo;
        return;
    }
    const int64_t i = rw->pos[0];
    w->lo = lo, w->hi = hi;
    w->thr = fc_sparse_threshold(w->sparse, rw->bt, i);
    if (i < rw->bt->sq && w->thr > 0)
        w->ind = fc_sparse_row(w->sparse, rw->bt, rw->b, i, rw->n2);
}

static inline bool fc_walk_next(fc_kv_walk *w, int64_t *j0, int *jn, fc_tile_kind *kind)
{
    if (!w->sparse) {
        while (w->next < w->hi) {
            *j0 = w->next;
            *jn = (int)(w->hi - w->next < w->cols ? w->hi - w->next : w->cols);
            w->next += w->cols;
            *kind = fc_rows_classify(w->rw, *j0, *j0 + *jn);
            if (*kind != FC_TILE_SKIP)
                return true;
        }
        return false;
    }
    for (;;) {
        if (w->next < w->span_hi) { /* the rest of the current block */
            *j0 = w->next;
            *jn = (int)(w->span_hi - w->next < w->cols ? w->span_hi - w->next : w->cols);
            w->next += *jn;
            *kind = FC_TILE_FULL;
            return true;
        }
        int64_t a, z;
        const int got = w->ind ? fc_sparse_span(w->sparse, w->ind, w->k++, w->thr, &a, &z) : -1;
        if (got < 0) {
            w->ind = NULL;
            return false;
        }
        if (got == 0)
            continue;
        a = a > w->lo ? a : w->lo;
        z = z < w->hi ? z : w->hi;
        w->next = a, w->span_hi = z;
    }
}

#endif /* FC_KERNELS_WALK_H */
