/*
 * CPU plans: tile sizes, items and the threaded loop over them.
 *
 * Items never share outputs, so any schedule gives bit-identical results; OpenMP hands them out
 * dynamically, heaviest first within a batch (later query tiles see more columns under causal
 * masks), which balances causal and banded problems without a cost model.
 */
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "../core/error.h"
#include "cpu.h"

typedef struct fc_cpu_plan {
    const fc_cpu_kernels *k;
    fc_tiles tiles;
    int threads;
    size_t ws_thread;     /* bytes per thread */
    int64_t *item_start;  /* B + 1 prefix sums of items per batch */
} fc_cpu_plan;

/* How batch b's rows are cut: i_count positions × n_count heads per item. */
static void fc_item_shape(const fc_problem *p, const fc_batch *bt, fc_tiles t, int64_t *i_count, int64_t *n_count)
{
    const int64_t rows = bt->q_rows > 0 ? bt->q_rows : 1;
    *i_count = rows < t.rows ? rows : t.rows;
    int64_t n = t.rows / *i_count;
    *n_count = n < 1 ? 1 : n > p->G ? p->G : n;
}

static int64_t fc_items_in_batch(const fc_problem *p, const fc_batch *bt, fc_tiles t)
{
    if (bt->q_rows == 0)
        return 0;
    int64_t ic, nc;
    fc_item_shape(p, bt, t, &ic, &nc);
    return p->Nkv * ((p->G + nc - 1) / nc) * ((bt->q_rows + ic - 1) / ic);
}

static void fc_item_at(const fc_problem *p, const fc_cpu_plan *cp, int64_t idx, fc_item *it)
{
    int64_t lo = 0, hi = p->B; /* last batch whose first item is <= idx */
    while (hi - lo > 1) {
        const int64_t mid = (lo + hi) / 2;
        if (cp->item_start[mid] <= idx) lo = mid; else hi = mid;
    }
    const fc_batch *bt = &p->batch[lo];
    int64_t ic, nc;
    fc_item_shape(p, bt, cp->tiles, &ic, &nc);
    const int64_t tiles = (bt->q_rows + ic - 1) / ic, hblocks = (p->G + nc - 1) / nc;
    int64_t local = idx - cp->item_start[lo];
    const int64_t tile = tiles - 1 - local % tiles; /* heaviest (last) tile first */
    local /= tiles;
    const int64_t hb = local % hblocks, n2 = local / hblocks;
    it->b = lo;
    it->i0 = tile * ic;
    it->i_count = bt->q_rows - it->i0 < ic ? bt->q_rows - it->i0 : ic;
    it->n_first = n2 * p->G + hb * nc;
    it->n_count = p->G - hb * nc < nc ? p->G - hb * nc : nc;
}

static fc_tiles fc_choose_tiles(const fc_problem *p)
{
    const int64_t d = p->Dqk + p->Dr > p->Dv ? p->Dqk + p->Dr : p->Dv;
    fc_tiles t = {.rows = d > 256 ? 32 : 64, .cols = d > 512 ? 32 : 64};
    return t;
}

fc_status fc_cpu_plan_create(fc_plan *plan, int threads)
{
    const fc_problem *p = &plan->prob;
    fc_cpu_plan *cp = calloc(1, sizeof *cp);
    if (!cp || !(cp->item_start = malloc((size_t)(p->B + 1) * sizeof(int64_t)))) {
        free(cp);
        return fc_fail(FC_ERR_NO_MEMORY, "fc_plan_create: out of host memory for the CPU plan");
    }
    cp->k = fc_cpu_active();
    cp->tiles = fc_choose_tiles(p);
#ifdef _OPENMP
    cp->threads = threads > 0 ? threads : omp_get_max_threads();
#else
    cp->threads = 1;
    (void)threads;
#endif
    cp->item_start[0] = 0;
    for (int64_t b = 0; b < p->B; b++)
        cp->item_start[b + 1] = cp->item_start[b] + fc_items_in_batch(p, &p->batch[b], cp->tiles);
    if (cp->item_start[p->B] < cp->threads)
        cp->threads = cp->item_start[p->B] > 0 ? (int)cp->item_start[p->B] : 1;
    cp->ws_thread = (cp->k->fwd_workspace(p, cp->tiles) + 63) & ~(size_t)63;
    plan->cpu = cp;
    plan->workspace = cp->ws_thread * (size_t)cp->threads;
    return FC_OK;
}

void fc_cpu_plan_destroy(fc_cpu_plan *cp)
{
    if (cp) {
        free(cp->item_start);
        free(cp);
    }
}

fc_status fc_cpu_run(const fc_plan *plan, const fc_problem *p, void *workspace)
{
    const fc_cpu_plan *cp = plan->cpu;
    const int64_t n = cp->item_start[p->B];
#pragma omp parallel for schedule(dynamic, 1) num_threads(cp->threads)
    for (int64_t idx = 0; idx < n; idx++) {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        fc_item it;
        fc_item_at(p, cp, idx, &it);
        cp->k->fwd_item(p, &it, cp->tiles, (char *)workspace + (size_t)tid * cp->ws_thread);
    }
    return FC_OK;
}
