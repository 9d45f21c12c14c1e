/* The per-batch facts every CUDA plan keeps (plan_facts.h). */
#include "plan_facts.h"

#include <stdio.h>

#include "../core/visibility.h"
#include "launch.h"

/* The kernels' bound on lengths (their plans refuse longer ones). */
static const int64_t kLengthLimit = (int64_t)1 << 30;

/* Whether row i sees every key of its batch, [0, skv), as one span. */
static bool fc_row_sees_all(const fc_batch &bt, int64_t i)
{
    int64_t sp[4];
    fc_row_spans(&bt, i, sp);
    return sp[0] == 0 && sp[1] == bt.skv;
}

static void fc_reach_add(fc_cuda_reach *r, const fc_batch &bt)
{
    r->q = bt.q_tok + bt.q_rows > r->q ? bt.q_tok + bt.q_rows : r->q;
    r->kv = bt.kv_tok + bt.skv > r->kv ? bt.kv_tok + bt.skv : r->kv;
    r->kv_short = bt.kv_tok + bt.skv < r->kv_short ? bt.kv_tok + bt.skv : r->kv_short;
    /* a row's band start and end grow with the row: the first and last rows bound every other */
    if (bt.sq > 0 && bt.skv > 0 && !(fc_row_sees_all(bt, 0) && fc_row_sees_all(bt, bt.sq - 1)))
        r->hides = true;
}

fc_status fc_cuda_facts_plan(fc_cuda_facts *f, const fc_problem *p, const char *who)
{
    f->planned = p->batch;
    f->reach = kReachNothing;
    for (int64_t b = 0; b < p->B; b++)
        fc_reach_add(&f->reach, p->batch[b]);
    return fc_cuda_upload((void **)&f->dev, p->batch, fc_cuda_facts_bytes(p), who);
}

void fc_cuda_facts_free(fc_cuda_facts *f)
{
    cudaFree(f->dev);
    f->dev = NULL;
}

/* Each record of a run's chunk checked: the length bound, then the plan's rule. */
static fc_status fc_facts_check(const fc_cuda_facts *f, const fc_batch *chunk, int64_t b0, int64_t n, const void *plan,
                                fc_cuda_facts_check check, const char *who, fc_cuda_reach *reach)
{
    for (int64_t k = 0; k < n; k++) {
        const fc_batch &bt = chunk[k];
        if (bt.sq < 0 || bt.skv < 0 || bt.sq >= kLengthLimit || bt.skv >= kLengthLimit)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: batch %lld of the run has lengths %lld (query) and %lld (key/value), "
                                               "outside [0, 2^30)",
                           who, (long long)(b0 + k), (long long)bt.sq, (long long)bt.skv);
        const fc_status st = check(plan, b0 + k, f->planned[b0 + k], bt);
        if (st != FC_OK)
            return st;
        fc_reach_add(reach, bt);
    }
    return FC_OK;
}

/* One walk over a run's records, kFactsChunk at a time in a fixed buffer: at NULL, each checked
 * (reach: how far they reach); else each chunk copied to its place at `at` on stream s. */
static fc_status fc_facts_walk(const fc_cuda_facts *f, int64_t B, const fc_cuda_lengths &lens, const void *plan,
                               fc_cuda_facts_check check, fc_batch *at, cudaStream_t s, const char *who, fc_cuda_reach *reach)
{
    fc_batch chunk[kFactsChunk];
    fc_batch_cursor cur = {};
    while (cur.next < B) {
        const int64_t b0 = cur.next, n = B - b0 < kFactsChunk ? B - b0 : kFactsChunk;
        fc_batch_facts_next(lens.rule, lens.len, &cur, chunk, n);
        if (!at) {
            const fc_status st = fc_facts_check(f, chunk, b0, n, plan, check, who, reach);
            if (st != FC_OK)
                return st;
            continue;
        }
        const cudaError_t err = cudaMemcpyAsync(at + b0, chunk, (size_t)n * sizeof(fc_batch), cudaMemcpyHostToDevice, s);
        if (err != cudaSuccess) {
            char what[128];
            snprintf(what, sizeof what, "%s: the run's per-batch facts", who);
            return fc_cuda_err(err, what);
        }
    }
    return FC_OK;
}

fc_status fc_cuda_facts_for_run(const fc_cuda_facts *f, const fc_problem *run, const fc_cuda_lengths &lens, const void *plan,
                                fc_cuda_facts_check check, void *at, cudaStream_t s, const char *who, fc_batch **out,
                                fc_cuda_reach *reach)
{
    *out = f->dev;
    fc_cuda_reach r = f->reach;
    if (lens.len) {
        if (!at)
            return fc_fail(FC_ERR_WORKSPACE, "%s: a run with its own per-batch lengths needs the plan's workspace", who);
        /* every record checked before the first is queued: a refused run leaves the workspace alone */
        r = kReachNothing;
        fc_status st = fc_facts_walk(f, run->B, lens, plan, check, NULL, s, who, &r);
        if (st == FC_OK)
            st = fc_facts_walk(f, run->B, lens, plan, check, (fc_batch *)at, s, who, NULL);
        if (st != FC_OK)
            return st;
        *out = (fc_batch *)at;
    }
    if (reach)
        *reach = r;
    return FC_OK;
}
