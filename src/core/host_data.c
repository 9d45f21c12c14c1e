#include "host_data.h"

#include "error.h"
#include "visibility.h"

static fc_status fc_check_view_pages(const char *fn, const fc_view *v, int64_t b, int64_t skv, const char *name)
{
    if (!v->pages.table)
        return FC_OK;
    const int64_t used = fc_ceil_div(skv, v->pages.block_size);
    for (int64_t k = 0; k < used; k++) {
        const int32_t blk = v->pages.table[b * v->pages.table_stride + k];
        if (blk < 0 || blk >= v->pages.blocks)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: %s block table entry [%lld][%lld] is %d, outside [0, %lld)", fn, name,
                           (long long)b, (long long)k, blk, (long long)v->pages.blocks);
    }
    return FC_OK;
}

fc_status fc_host_check_batch_pages(const char *fn, const fc_problem *p, int64_t b, int64_t skv)
{
    fc_status st;
    if ((st = fc_check_view_pages(fn, &p->k, b, skv, "key")) || (st = fc_check_view_pages(fn, &p->v, b, skv, "value")) ||
        (st = fc_check_view_pages(fn, &p->k_rope, b, skv, "key rope")))
        return st;
    return FC_OK;
}

fc_status fc_host_check_pages(const char *fn, const fc_problem *p)
{
    for (int64_t b = 0; b < p->B; b++) {
        const fc_status st = fc_host_check_batch_pages(fn, p, b, p->batch[b].skv);
        if (st != FC_OK)
            return st;
    }
    return FC_OK;
}

/* Selected positions of a sparse problem, counted the way the kernels walk them. */
static double fc_sparse_visible(const fc_problem *p)
{
    double total = 0;
    for (int64_t b = 0; b < p->B; b++) {
        const fc_batch *bt = &p->batch[b];
        for (int64_t i = 0; i < bt->sq; i++)
            for (int64_t n2 = 0; n2 < p->Nkv; n2++) {
                const char *row = fc_sparse_row(&p->sparse, bt, b, i, n2);
                const int64_t thr = fc_sparse_threshold(&p->sparse, bt, i);
                int64_t a, z;
                int got;
                for (int64_t k = 0; thr > 0 && (got = fc_sparse_span(&p->sparse, row, k, thr, &a, &z)) >= 0; k++)
                    total += got ? (double)(z - a) * (double)p->G : 0.0;
            }
    }
    return total;
}

double fc_host_visible(const fc_problem *p)
{
    if (p->sparse.data)
        return fc_sparse_visible(p);
    double total = 0;
    for (int64_t b = 0; b < p->B; b++) {
        const fc_batch *bt = &p->batch[b];
        int64_t per_head = 0, sp[4];
        for (int64_t i = 0; i < bt->sq; i++)
            per_head += fc_row_spans(bt, i, sp);
        total += (double)per_head * (double)p->Nq;
    }
    return total;
}
