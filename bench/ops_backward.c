/*
 * The backward: one forward run provides the output and statistics, then the backward plan is
 * timed.  FLOPs are 2.5 × the forward's over visible positions (the anchors' convention), so its
 * GFLOP/s sit beside the forward's of the same case; there is no unfused baseline.
 */
#include <stdio.h>

#include "bench.h"
#include "problem.h"
#include "timer.h"

bool bench_backward_measure(const bench_case *c, const bench_config *cfg, bench_result *r)
{
    bench_problem bp;
    bench_plan fwd = {0}, bwd = {0};
    bool ok = false;
    if (!bench_problem_build(c, false, true, &bp, r->note, sizeof r->note))
        return false;
    if (!bench_plan_make(&fwd, &bp, false, cfg->threads, r->note, sizeof r->note) || !bench_plan_run(&fwd) ||
        !bench_plan_make(&bwd, &bp, true, cfg->threads, r->note, sizeof r->note) ||
        fc_plan_flops(bwd.plan, &r->work) != FC_OK)
        goto done;
    const int repeat = cfg->repeat > 0 ? cfg->repeat : c->repeat > 0 ? c->repeat : 3;
    const bench_fn fn[1] = {bench_plan_run};
    void *const ctx[1] = {&bwd};
    double mn, md;
    if (bench_time_interleaved(1, fn, ctx, cfg->warmup, repeat, &mn, &md) == 0) {
        snprintf(r->note, sizeof r->note, "flashc: %s", fc_last_error());
        goto done;
    }
    r->runs = repeat, r->flashc_min = mn, r->flashc_median = md;
    snprintf(r->note, sizeof r->note, "no unfused baseline for the backward");
    ok = true;
done:
    bench_plan_free(&fwd);
    bench_plan_free(&bwd);
    bench_problem_free(&bp);
    return ok;
}
