/*
 * Top-k block-sparse attention (forward or backward): GFLOP/s over the selected positions, and as
 * the baseline the dense operator of the same shape in the same run — the ratio of rates says how
 * close the sparse kernels come to the dense ones.
 */
#include <stdio.h>

#include "bench.h"
#include "problem.h"
#include "timer.h"

typedef struct side {
    bench_problem bp;
    bench_plan fwd, bwd;
    bool built;
} side;

static bool side_make(side *s, const bench_case *c, bool sparse, bool backward, int threads, char *note, size_t n)
{
    if (!bench_problem_build(c, sparse, backward, &s->bp, note, n))
        return false;
    s->built = true;
    if (!bench_plan_make(&s->fwd, &s->bp, false, threads, note, n))
        return false;
    return !backward || (bench_plan_run(&s->fwd) && bench_plan_make(&s->bwd, &s->bp, true, threads, note, n));
}

static void side_free(side *s)
{
    bench_plan_free(&s->fwd);
    bench_plan_free(&s->bwd);
    if (s->built)
        bench_problem_free(&s->bp);
}

bool bench_sparse_measure(const bench_case *c, const bench_config *cfg, bench_result *r)
{
    const bool backward = c->op == BENCH_OP_SPARSE_BWD;
    side sp = {0}, dense = {0};
    bool ok = false;
    if (!side_make(&sp, c, true, backward, cfg->threads, r->note, sizeof r->note))
        goto done;
    bench_plan *mine = backward ? &sp.bwd : &sp.fwd;
    if (fc_plan_flops(mine->plan, &r->work) != FC_OK)
        goto done;
    const bool with_dense = cfg->baseline && side_make(&dense, c, false, backward, cfg->threads, r->note, sizeof r->note);
    bench_plan *theirs = backward ? &dense.bwd : &dense.fwd;
    if (with_dense && fc_plan_flops(theirs->plan, &r->base_work) != FC_OK)
        goto done;
    const int repeat = cfg->repeat > 0 ? cfg->repeat : c->repeat > 0 ? c->repeat : 3;
    const bench_fn fns[2] = {bench_plan_run, bench_plan_run};
    void *const ctxs[2] = {mine, theirs};
    double mn[2], md[2];
    if (bench_time_interleaved(with_dense ? 2 : 1, fns, ctxs, cfg->warmup, repeat, mn, md) == 0) {
        snprintf(r->note, sizeof r->note, "flashc: %s", fc_last_error());
        goto done;
    }
    r->runs = repeat, r->flashc_min = mn[0], r->flashc_median = md[0];
    if (with_dense) {
        r->has_baseline = true, r->base_min = mn[1], r->base_median = md[1];
        snprintf(r->note, sizeof r->note, "baseline: the dense %s of the same shape", backward ? "backward" : "forward");
    }
    ok = true;
done:
    side_free(&sp);
    side_free(&dense);
    return ok;
}
