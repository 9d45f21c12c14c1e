/*
 * Incremental decode: one query row per batch against a long KV cache (fp16/bf16, or int8 with
 * per-tensor scales).  Work is the bytes of K and V read; the baseline is the memory roofline of
 * the same run: a plain threaded read of the same K and V bytes (what no decode can beat).
 */
#include <stdio.h>

#include "bench.h"
#include "problem.h"
#include "timer.h"

typedef struct kv_read {
    const unsigned char *k, *v;
    size_t bytes;
    int threads;
    volatile uint64_t sink;
} kv_read;

/* Sums 8-byte words of both buffers; the compiler vectorises it into streaming loads. */
static bool read_kv(void *ctx)
{
    kv_read *r = ctx;
    const size_t words = r->bytes / 8;
    uint64_t acc = 0;
    const unsigned char *bufs[2] = {r->k, r->v};
    for (int t = 0; t < 2; t++) {
        const uint64_t *w = (const uint64_t *)bufs[t];
#pragma omp parallel for reduction(+ : acc) num_threads(r->threads) schedule(static)
        for (size_t i = 0; i < words; i++)
            acc += w[i];
    }
    r->sink = acc;
    return true;
}

bool bench_decode_measure(const bench_case *c, const bench_config *cfg, bench_result *r)
{
    bench_problem bp;
    bench_plan plan = {0};
    bool ok = false;
    if (!bench_problem_build(c, false, false, &bp, r->note, sizeof r->note))
        return false;
    if (!bench_plan_make(&plan, &bp, false, cfg->threads, r->note, sizeof r->note))
        goto done;
    const size_t kes = fc_dtype_size(c->kv_dtype ? c->kv_dtype : c->dtype);
    kv_read base = {.k = bp.d.k.data, .v = bp.d.v.data, .bytes = bp.kv_elems * kes, .threads = cfg->threads};
    r->work = 2.0 * (double)base.bytes;
    const int repeat = cfg->repeat > 0 ? cfg->repeat : c->repeat > 0 ? c->repeat : 5;
    const bench_fn fns[2] = {bench_plan_run, read_kv};
    void *const ctxs[2] = {&plan, &base};
    double mn[2], md[2];
    const int done_fns = bench_time_interleaved(cfg->baseline ? 2 : 1, fns, ctxs, cfg->warmup, repeat, mn, md);
    if (done_fns == 0) {
        snprintf(r->note, sizeof r->note, "flashc: %s", fc_last_error());
        goto done;
    }
    r->runs = repeat, r->flashc_min = mn[0], r->flashc_median = md[0];
    if (cfg->baseline) {
        r->has_baseline = true, r->base_min = mn[1], r->base_median = md[1];
        snprintf(r->note, sizeof r->note, "baseline: a plain read of the same K/V bytes");
    }
    ok = true;
done:
    bench_plan_free(&plan);
    bench_problem_free(&bp);
    return ok;
}
