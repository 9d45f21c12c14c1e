/*
 * CPU plans: the variant record (kernel kinds, tiles from the tile policy in tiles.c, threads,
 * workspace layout), work items and the threaded loops over them.
 *
 * Items never share outputs, so any schedule gives bit-identical results; OpenMP hands them out
 * dynamically, heaviest first within a batch (later query tiles see more columns under causal
 * masks, earlier kv tiles are seen by more rows), which balances causal and banded problems
 * without a cost model.  Where a band (causal, window) makes the items unequal and there are more
 * threads than a head has query items, the items go by tile across all heads (every head's last
 * tile, then every head's tile before it, ...): by head, the heavy items of the later heads started
 * while other threads ran out of work (16 threads, causal S = 4096 in 512-row items: 10.5 units
 * against the ideal 8.95, a list-schedule simulation).  Otherwise head by head balances as well,
 * and a thread's consecutive items share the head's kv rows in its caches (across heads: 2–5 %
 * more CPU time at 1 thread, docs/PERFORMANCE.md).
 */
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "../core/error.h"
#include "cpu.h"
#include "tiles.h"

/* The 64-byte aligned start of a workspace region planned `at` bytes in (with 64 bytes of slack). */
static char *fc_ws_at(void *ws, size_t at) { return (char *)(((uintptr_t)ws + at + 63) & ~(uintptr_t)63); }

static int64_t fc_q_items(const fc_problem *p, const fc_batch *bt, fc_tiles t)
{
    if (bt->q_rows == 0)
        return 0;
    int64_t ic, nc;
    fc_item_shape(p, bt, t, &ic, &nc);
    return p->Nkv * ((p->G + nc - 1) / nc) * ((bt->q_rows + ic - 1) / ic);
}

static int64_t fc_kv_items(const fc_problem *p, const fc_batch *bt, fc_tiles t)
{
    return p->Nkv * ((bt->kv_rows + t.kv_rows - 1) / t.kv_rows);
}

/* The batch whose items contain idx: the last b with start[b] <= idx. */
static int64_t fc_batch_of(const int64_t *start, int64_t B, int64_t idx)
{
    int64_t lo = 0, hi = B;
    while (hi - lo > 1) {
        const int64_t mid = (lo + hi) / 2;
        if (start[mid] <= idx) lo = mid; else hi = mid;
    }
    return lo;
}

static void fc_q_item_at(const fc_problem *p, const fc_cpu_variant *v, const fc_cpu_items *its, int64_t idx, fc_item *it)
{
    const int64_t b = fc_batch_of(its->q_start, p->B, idx);
    const fc_batch *bt = &p->batch[b];
    int64_t ic, nc;
    fc_item_shape(p, bt, v->tiles, &ic, &nc);
    const int64_t tiles = (bt->q_rows + ic - 1) / ic, hblocks = (p->G + nc - 1) / nc;
    const int64_t local = idx - its->q_start[b], heads = p->Nkv * hblocks;
    const bool banded = bt->vis_lo > -(bt->sq - 1) || bt->vis_hi < bt->skv - 1; /* unequal items */
    const bool across = banded && v->threads > tiles; /* else head by head: a thread's next item reuses its kv rows */
    const int64_t tile = tiles - 1 - (across ? local / heads : local % tiles); /* heaviest (last) tiles first */
    const int64_t head = across ? local % heads : local / tiles;
    const int64_t hb = head % hblocks, n2 = head / hblocks;
    it->b = b;
    it->i0 = tile * ic;
    it->i_count = bt->q_rows - it->i0 < ic ? bt->q_rows - it->i0 : ic;
    it->n_first = n2 * p->G + hb * nc;
    it->n_count = p->G - hb * nc < nc ? p->G - hb * nc : nc;
    it->split = 0;
    it->nsplit = 1;
}

static void fc_kv_item_at(const fc_problem *p, const fc_cpu_variant *v, const fc_cpu_items *its, int64_t idx,
                          fc_kv_item *it)
{
    const int64_t b = fc_batch_of(its->kv_start, p->B, idx);
    const fc_batch *bt = &p->batch[b];
    const int64_t rows = v->tiles.kv_rows, tiles = (bt->kv_rows + rows - 1) / rows;
    const int64_t local = idx - its->kv_start[b];
    it->b = b;
    it->n2 = local / tiles;
    it->j0 = (local % tiles) * rows;
    it->j_count = bt->kv_rows - it->j0 < rows ? bt->kv_rows - it->j0 : rows;
}

/* Flash-decoding: with fewer query items than FC_MIN_ITEMS, slice the kv axis so that there are
 * about that many, each slice at least FC_MIN_SLICE tiles long.  A function of the problem only
 * (never of the thread count), so results stay identical for every thread count. */
#define FC_MIN_ITEMS 16
#define FC_MIN_SLICE 4
static int64_t fc_choose_splits(const fc_problem *p, fc_tiles t, int64_t q_items)
{
    if (q_items <= 0 || q_items >= FC_MIN_ITEMS)
        return 1;
    int64_t n = (FC_MIN_ITEMS + q_items - 1) / q_items;
    const int64_t most = (p->max_skv + FC_MIN_SLICE * t.cols - 1) / (FC_MIN_SLICE * t.cols);
    return n < most ? n : most < 1 ? 1 : most;
}

/* Prefix sums of the items of each batch of p: start[0..B]. */
static void fc_prefix_items(const fc_problem *p, fc_tiles t, int64_t *start,
                            int64_t (*count)(const fc_problem *, const fc_batch *, fc_tiles))
{
    start[0] = 0;
    for (int64_t b = 0; b < p->B; b++)
        start[b + 1] = start[b] + count(p, &p->batch[b], t);
}

/* Bytes of the item counts of one set of per-batch facts (fc_count_items). */
static size_t fc_items_bytes(const fc_problem *p) { return 2 * (size_t)(p->B + 1) * sizeof(int64_t); }

/* The items of p's per-batch facts, their counts in `counts` (fc_items_bytes). */
static void fc_count_items(const fc_problem *p, fc_tiles t, bool backward, int64_t *counts, fc_cpu_items *its)
{
    its->q_start = counts;
    its->kv_start = backward ? counts + p->B + 1 : NULL;
    fc_prefix_items(p, t, its->q_start, fc_q_items);
    if (backward)
        fc_prefix_items(p, t, its->kv_start, fc_kv_items);
    its->nsplit = backward ? 1 : fc_choose_splits(p, t, its->q_start[p->B]);
}

fc_status fc_cpu_plan_create(fc_plan *plan, const fc_options *options)
{
    const int threads = options ? options->threads : 0;
    const fc_problem *p = &plan->prob;
    const bool backward = plan->op == FC_OP_BACKWARD;
    const fc_status env = fc_cpu_check_env("fc_cpu_plan_create");
    if (env != FC_OK)
        return env;
    fc_cpu_plan *cp = calloc(1, sizeof *cp);
    int64_t *counts = cp ? malloc(fc_items_bytes(p)) : NULL;
    plan->state = cp;
    if (!counts)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_cpu_plan_create: out of host memory for the CPU plan");
    fc_cpu_variant *v = &cp->v;
    v->k = fc_cpu_active();
    v->k->kinds(p, &v->kinds);
    v->tiles = fc_cpu_tiles(p, plan->op, &v->kinds, v->k);
    fc_count_items(p, v->tiles, backward, counts, &cp->items);
#ifdef _OPENMP
    v->threads = threads > 0 ? threads : omp_get_max_threads();
#else
    v->threads = 1;
    (void)threads;
#endif
    const fc_cpu_items *its = &cp->items;
    int64_t most = its->q_start[p->B] * its->nsplit;
    if (backward && its->kv_start[p->B] > most)
        most = its->kv_start[p->B];
    if (backward && p->dsink && p->Nq > most)
        most = p->Nq;
    if (most < v->threads)
        v->threads = most > 0 ? (int)most : 1;
    v->tiles.fused = backward && fc_cpu_bwd_fuses(p, v->tiles, v->threads);
    if (v->tiles.fused) /* (the kv items counted above are the two passes': unused when fused) */
        v->tiles.kv_rows = fc_cpu_bwd_fused_kv_rows(v->tiles, &v->kinds);
    const size_t ws = backward ? v->k->bwd_workspace(p, v->tiles) : v->k->fwd_workspace(p, v->tiles);
    v->ws_thread = (ws + 63) & ~(size_t)63;
    v->bytes = v->ws_thread * (size_t)v->threads;
    if (its->nsplit > 1) {
        v->slot_floats = v->k->fwd_partial_floats(p, v->tiles);
        v->partial_at = v->bytes;
        v->bytes += 64 + v->slot_floats * sizeof(float) * (size_t)(its->q_start[p->B] * its->nsplit);
    }
    if (plan->lengths_bindable || plan->run_kv_lens) { /* a run's own lengths: its item counts */
        v->counts_at = v->bytes;
        v->bytes += 64 + fc_items_bytes(p);
    }
    return FC_OK;
}

size_t fc_cpu_workspace_size(const fc_plan *plan) { return ((const fc_cpu_plan *)plan->state)->v.bytes; }

void fc_cpu_plan_destroy(void *state)
{
    fc_cpu_plan *cp = state;
    if (cp) {
        free(cp->items.q_start); /* the counts, kv_start's too */
        free(cp);
    }
}

static int fc_thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* Runs the items of p (its->nsplit slices each) in the plan's workspace layout. */
static void fc_cpu_run_items(const fc_plan *plan, const fc_problem *p, const fc_cpu_items *its, char *ws)
{
    const fc_cpu_variant *v = &((const fc_cpu_plan *)plan->state)->v;
    const fc_cpu_kernels *k = v->k;
    const int64_t nq = its->q_start[p->B];
    if (plan->op == FC_OP_FORWARD) {
        const int64_t ns = its->nsplit;
        float *slots = ns > 1 ? (float *)fc_ws_at(ws, v->partial_at) : NULL;
#pragma omp parallel num_threads(v->threads)
        {
            char *mine = ws + (size_t)fc_thread_id() * v->ws_thread;
#pragma omp for schedule(dynamic, 1)
            for (int64_t idx = 0; idx < nq * ns; idx++) {
                fc_item it;
                fc_q_item_at(p, v, its, idx / ns, &it);
                it.split = idx % ns;
                it.nsplit = ns;
                const fc_fwd_kind kind = it.n_count * it.i_count <= FC_FEW_ROWS ? v->kinds.few : v->kinds.many;
                k->fwd_item[kind](p, &it, v->tiles, mine, slots ? slots + (size_t)idx * v->slot_floats : NULL);
            }
            if (ns > 1) {
#pragma omp for schedule(dynamic, 1)
                for (int64_t idx = 0; idx < nq; idx++) {
                    fc_item it;
                    fc_q_item_at(p, v, its, idx, &it);
                    it.nsplit = ns;
                    k->fwd_merge(p, &it, v->tiles, mine, slots + (size_t)(idx * ns) * v->slot_floats);
                }
            }
        }
        return;
    }
    const int64_t nkv = v->tiles.fused ? 0 : its->kv_start[p->B], heads = v->tiles.fused ? p->B * p->Nkv : 0;
    const fc_bwd_kind x = v->kinds.bwd;
#pragma omp parallel num_threads(v->threads)
    {
        char *mine = ws + (size_t)fc_thread_id() * v->ws_thread;
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t idx = 0; idx < heads; idx++)
            k->bwd_head_item[x](p, idx / p->Nkv, idx % p->Nkv, v->tiles, mine);
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t idx = 0; idx < (v->tiles.fused ? 0 : nq); idx++) {
            fc_item it;
            fc_q_item_at(p, v, its, idx, &it);
            k->bwd_dq_item[x](p, &it, v->tiles, mine);
        }
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t idx = 0; idx < nkv; idx++) {
            fc_kv_item it;
            fc_kv_item_at(p, v, its, idx, &it);
            if (p->sparse.data)
                k->bwd_sparse_dkv_item(p, &it, v->tiles, mine);
            else
                k->bwd_dkv_item[x](p, &it, v->tiles, mine);
        }
        if (p->dsink) {
#pragma omp for schedule(dynamic, 1)
            for (int64_t n1 = 0; n1 < p->Nq; n1++)
                k->bwd_dsink_head(p, n1, mine);
        }
    }
}

/* Whether the items of a run's own facts fit the plan's workspace: the plan was made for
 * lengths that bound every run's (a face binding lengths plans with such lengths). */
static bool fc_cpu_items_fit(const fc_plan *plan, const fc_problem *p, const fc_cpu_items *its)
{
    const fc_cpu_plan *cp = plan->state;
    const fc_cpu_variant *v = &cp->v;
    const bool backward = plan->op == FC_OP_BACKWARD;
    const size_t ws = backward ? v->k->bwd_workspace(p, v->tiles) : v->k->fwd_workspace(p, v->tiles);
    if (((ws + 63) & ~(size_t)63) > v->ws_thread)
        return false;
    const int64_t slots = its->nsplit > 1 ? its->q_start[p->B] * its->nsplit : 0;
    const int64_t planned = cp->items.nsplit > 1 ? cp->items.q_start[plan->prob.B] * cp->items.nsplit : 0;
    return slots <= planned;
}

fc_status fc_cpu_run(const fc_plan *plan, const fc_problem *run, const fc_bindings *bind, void *workspace, void *stream)
{
    (void)bind, (void)stream; /* the CPU runs in the caller's thread: the work is done when this returns */
    const fc_cpu_plan *cp = plan->state;
    if (run->batch == plan->prob.batch) {
        fc_cpu_run_items(plan, run, &cp->items, workspace);
        return FC_OK;
    }
    fc_cpu_items its; /* the run brought its own lengths: its items, counted in the workspace */
    fc_count_items(run, cp->v.tiles, plan->op == FC_OP_BACKWARD, (int64_t *)fc_ws_at(workspace, cp->v.counts_at), &its);
    if (!fc_cpu_items_fit(plan, run, &its))
        return fc_fail(FC_ERR_INTERNAL, "fc_cpu_run: the run's lengths need more workspace than the plan's lengths");
    fc_cpu_run_items(plan, run, &its, workspace);
    return FC_OK;
}
