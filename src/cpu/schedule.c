/*
 * CPU plans: tile sizes, work items and the threaded loops over them.
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

/* The items of one set of per-batch facts: the planned ones, or a run's own (bound lengths). */
typedef struct fc_cpu_items {
    int64_t *q_start;    /* B + 1 prefix sums of query items per batch */
    int64_t *kv_start;   /* B + 1 prefix sums of kv items per batch (backward) */
    int64_t nsplit;      /* forward: kv slices per query item (flash-decoding), 1 = none */
} fc_cpu_items;

typedef struct fc_cpu_plan {
    const fc_cpu_kernels *k;
    fc_tiles tiles;
    int threads;
    size_t ws_thread;    /* bytes per thread */
    fc_cpu_items items;  /* of the planned facts */
    size_t partial_off;  /* forward with slices: offset of the partial slots in the workspace */
    size_t slot_floats;
    size_t counts_at;    /* plans whose runs may bring lengths: where a run counts its items */
    size_t workspace;    /* bytes a run needs */
} fc_cpu_plan;

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

static void fc_q_item_at(const fc_problem *p, const fc_cpu_plan *cp, const fc_cpu_items *its, int64_t idx, fc_item *it)
{
    const int64_t b = fc_batch_of(its->q_start, p->B, idx);
    const fc_batch *bt = &p->batch[b];
    int64_t ic, nc;
    fc_item_shape(p, bt, cp->tiles, &ic, &nc);
    const int64_t tiles = (bt->q_rows + ic - 1) / ic, hblocks = (p->G + nc - 1) / nc;
    const int64_t local = idx - its->q_start[b], heads = p->Nkv * hblocks;
    const bool banded = bt->vis_lo > -(bt->sq - 1) || bt->vis_hi < bt->skv - 1; /* unequal items */
    const bool across = banded && cp->threads > tiles; /* else head by head: a thread's next item reuses its kv rows */
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

static void fc_kv_item_at(const fc_problem *p, const fc_cpu_plan *cp, const fc_cpu_items *its, int64_t idx,
                          fc_kv_item *it)
{
    const int64_t b = fc_batch_of(its->kv_start, p->B, idx);
    const fc_batch *bt = &p->batch[b];
    const int64_t rows = cp->tiles.kv_rows, tiles = (bt->kv_rows + rows - 1) / rows;
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

static fc_tiles fc_choose_tiles(const fc_problem *p)
{
    const int64_t d = p->Dqk + p->Dr > p->Dv ? p->Dqk + p->Dr : p->Dv;
    fc_tiles t = {.rows = d > 256 ? 32 : 64, .cols = d > 512 ? 32 : 64};
    /* sparse dk/dv items scan every query's index row, so they own wider kv ranges */
    t.kv_rows = p->sparse.data ? 8 * t.cols : t.cols;
    return t;
}

/* The fused backward (one item per kv head: dQ, dK, dV in one pass, bwd_head_item) where there
 * are at least two heads per thread and the head's dQ accumulators stay small.  Its pairs and
 * sums are those of the two passes (backward.c), so results are the same for any thread count. */
#define FC_BWD_FUSED_MAX_BYTES ((int64_t)16 << 20)
static bool fc_bwd_fuses(const fc_problem *p, fc_tiles t, int threads)
{
    const int64_t tiles = (p->max_sq + t.rows - 1) / t.rows, ldq = p->Dqk + p->Dr + 32; /* ≥ the kernels' row stride */
    const int64_t bytes = p->G * (tiles > 1 ? tiles : 1) * (t.rows + 16) * ldq * (int64_t)sizeof(float);
    return !p->sparse.data && p->B * p->Nkv >= 2 * (int64_t)threads && bytes <= FC_BWD_FUSED_MAX_BYTES;
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
    if (!cp)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_cpu_plan_create: out of host memory for the CPU plan");
    plan->state = cp;
    cp->k = fc_cpu_active();
    cp->tiles = fc_choose_tiles(p);
    const int wide = cp->k->fwd_cols(p);
    if (wide && p->Dqk + p->Dr <= 256 && p->Dv <= 256) {
        /* a set with wide tiles (matrix units) also shares each kv tile among more rows; its
         * backward packs rows and kv tiles as operands, shared by more pairs in 128 × 128 */
        const int rows = backward ? 0 : cp->k->fwd_rows(p);
        cp->tiles.rows = rows ? rows : 128;
        cp->tiles.cols = backward ? 128 : wide;
        if (backward && !p->sparse.data)
            cp->tiles.kv_rows = 128;
        else if (backward)
            cp->tiles.cols = fc_choose_tiles(p).cols;
    } else if (!backward && p->Dqk + p->Dr <= 256 && p->Dv <= 256 && cp->k->fwd_rows(p)) {
        cp->tiles.rows = cp->k->fwd_rows(p); /* a set whose GEMM pipeline wants taller items */
    }
    int64_t *counts = malloc(fc_items_bytes(p));
    if (!counts)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_cpu_plan_create: out of host memory for the CPU plan");
    fc_count_items(p, cp->tiles, backward, counts, &cp->items);
#ifdef _OPENMP
    cp->threads = threads > 0 ? threads : omp_get_max_threads();
#else
    cp->threads = 1;
    (void)threads;
#endif
    const fc_cpu_items *its = &cp->items;
    int64_t most = its->q_start[p->B] * its->nsplit;
    if (backward && its->kv_start[p->B] > most)
        most = its->kv_start[p->B];
    if (backward && p->dsink && p->Nq > most)
        most = p->Nq;
    if (most < cp->threads)
        cp->threads = most > 0 ? (int)most : 1;
    cp->tiles.fused = backward && fc_bwd_fuses(p, cp->tiles, cp->threads);
    const size_t ws = backward ? cp->k->bwd_workspace(p, cp->tiles) : cp->k->fwd_workspace(p, cp->tiles);
    cp->ws_thread = (ws + 63) & ~(size_t)63;
    cp->workspace = cp->ws_thread * (size_t)cp->threads;
    if (its->nsplit > 1) {
        cp->slot_floats = cp->k->fwd_partial_floats(p, cp->tiles);
        cp->partial_off = cp->workspace;
        cp->workspace += 64 + cp->slot_floats * sizeof(float) * (size_t)(its->q_start[p->B] * its->nsplit);
    }
    if (plan->lengths_bindable) { /* a run's own lengths: its item counts */
        cp->counts_at = cp->workspace;
        cp->workspace += 64 + fc_items_bytes(p);
    }
    return FC_OK;
}

size_t fc_cpu_workspace_size(const fc_plan *plan) { return ((const fc_cpu_plan *)plan->state)->workspace; }

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
    const fc_cpu_plan *cp = plan->state;
    const fc_cpu_kernels *k = cp->k;
    const int64_t nq = its->q_start[p->B];
    if (plan->op == FC_OP_FORWARD) {
        const int64_t ns = its->nsplit;
        float *slots = ns > 1 ? (float *)fc_ws_at(ws, cp->partial_off) : NULL;
#pragma omp parallel num_threads(cp->threads)
        {
            char *mine = ws + (size_t)fc_thread_id() * cp->ws_thread;
#pragma omp for schedule(dynamic, 1)
            for (int64_t idx = 0; idx < nq * ns; idx++) {
                fc_item it;
                fc_q_item_at(p, cp, its, idx / ns, &it);
                it.split = idx % ns;
                it.nsplit = ns;
                k->fwd_item(p, &it, cp->tiles, mine, slots ? slots + (size_t)idx * cp->slot_floats : NULL);
            }
            if (ns > 1) {
#pragma omp for schedule(dynamic, 1)
                for (int64_t idx = 0; idx < nq; idx++) {
                    fc_item it;
                    fc_q_item_at(p, cp, its, idx, &it);
                    it.nsplit = ns;
                    k->fwd_merge(p, &it, cp->tiles, mine, slots + (size_t)(idx * ns) * cp->slot_floats);
                }
            }
        }
        return;
    }
    const int64_t nkv = cp->tiles.fused ? 0 : its->kv_start[p->B], heads = cp->tiles.fused ? p->B * p->Nkv : 0;
#pragma omp parallel num_threads(cp->threads)
    {
        char *mine = ws + (size_t)fc_thread_id() * cp->ws_thread;
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t idx = 0; idx < heads; idx++)
            k->bwd_head_item(p, idx / p->Nkv, idx % p->Nkv, cp->tiles, mine);
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t idx = 0; idx < (cp->tiles.fused ? 0 : nq); idx++) {
            fc_item it;
            fc_q_item_at(p, cp, its, idx, &it);
            k->bwd_dq_item(p, &it, cp->tiles, mine);
        }
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t idx = 0; idx < nkv; idx++) {
            fc_kv_item it;
            fc_kv_item_at(p, cp, its, idx, &it);
            if (p->sparse.data)
                k->bwd_sparse_dkv_item(p, &it, cp->tiles, mine);
            else
                k->bwd_dkv_item(p, &it, cp->tiles, mine);
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
    const bool backward = plan->op == FC_OP_BACKWARD;
    const size_t ws = backward ? cp->k->bwd_workspace(p, cp->tiles) : cp->k->fwd_workspace(p, cp->tiles);
    if (((ws + 63) & ~(size_t)63) > cp->ws_thread)
        return false;
    const int64_t slots = its->nsplit > 1 ? its->q_start[p->B] * its->nsplit : 0;
    const int64_t planned = cp->items.nsplit > 1 ? cp->items.q_start[plan->prob.B] * cp->items.nsplit : 0;
    return slots <= planned;
}

fc_status fc_cpu_run(const fc_plan *plan, const fc_problem *run, void *workspace, void *stream)
{
    (void)stream; /* the CPU runs in the caller's thread: the work is done when this returns */
    const fc_cpu_plan *cp = plan->state;
    if (run->batch == plan->prob.batch) {
        fc_cpu_run_items(plan, run, &cp->items, workspace);
        return FC_OK;
    }
    fc_cpu_items its; /* the run brought its own lengths: its items, counted in the workspace */
    fc_count_items(run, cp->tiles, plan->op == FC_OP_BACKWARD, (int64_t *)fc_ws_at(workspace, cp->counts_at), &its);
    if (!fc_cpu_items_fit(plan, run, &its))
        return fc_fail(FC_ERR_INTERNAL, "fc_cpu_run: the run's lengths need more workspace than the plan's lengths");
    fc_cpu_run_items(plan, run, &its, workspace);
    return FC_OK;
}
