/*
 * The forward operator: builds the problem through the native API (one plan, many runs), times
 * it in turns with the unfused OpenBLAS baseline on the same inputs, and compares the outputs.
 *
 * Layouts: dense cases are BNSD (each head contiguous, the friendliest for the baseline's sgemm)
 * unless they ask for BSND, varlen cases are packed TND.  fp16/bf16 inputs are converted to fp32 for the baseline before
 * its timing starts, so the baseline's time holds no conversion (the ratio favours it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "bench.h"
#include "data.h"
#include "problem.h"
#include "timer.h"

/* The baseline's fp32 copies (or aliases, for fp32 cases) of the inputs, its output and scores. */
typedef struct baseline_run {
    bench_unfused p;
    int threads;
    float *q, *k, *v, *out, *scratch;
    bool own_inputs;
} baseline_run;

static bool run_baseline(void *ctx)
{
    baseline_run *r = ctx;
    return bench_unfused_run(&r->p, r->threads, r->scratch);
}

/* Sizes of one case, in elements. */
typedef struct fwd_shape {
    int64_t nb;                              /* batches */
    int64_t q_lens[BENCH_MAX_BATCH], kv_lens[BENCH_MAX_BATCH];
    int64_t q_base[BENCH_MAX_BATCH], kv_base[BENCH_MAX_BATCH]; /* element offsets per batch */
    int64_t q_sh, q_ss, kv_sh, kv_ss;        /* head and position strides */
    size_t q_elems, kv_elems;
} fwd_shape;

static bool shape_of(const bench_case *c, fwd_shape *s)
{
    const bool packed = c->lens[0] != 0;
    const int64_t d = c->head_dim;
    s->nb = bench_case_batches(c);
    if (s->nb < 1 || s->nb > BENCH_MAX_BATCH)
        return false;
    int64_t tq = 0, tkv = 0;
    for (int64_t b = 0; b < s->nb; b++) {
        s->q_lens[b] = packed ? c->lens[b] : c->q_len;
        s->kv_lens[b] = packed ? c->lens[b] : c->kv_len;
        /* packed: batch b starts at token tokens_before(b); dense BNSD and BSND: at b·N·S·D */
        s->q_base[b] = packed ? tq * c->q_heads * d : b * c->q_heads * c->q_len * d;
        s->kv_base[b] = packed ? tkv * c->kv_heads * d : b * c->kv_heads * c->kv_len * d;
        tq += s->q_lens[b];
        tkv += s->kv_lens[b];
    }
    const bool heads_inner = packed || c->bsnd; /* TND, BSND: a position's heads side by side */
    s->q_sh = heads_inner ? d : c->q_len * d;
    s->q_ss = heads_inner ? c->q_heads * d : d;
    s->kv_sh = heads_inner ? d : c->kv_len * d;
    s->kv_ss = heads_inner ? c->kv_heads * d : d;
    s->q_elems = (size_t)(tq * c->q_heads * d);
    s->kv_elems = (size_t)(tkv * c->kv_heads * d);
    return true;
}

static void baseline_free(baseline_run *b)
{
    if (b->own_inputs) {
        free(b->q), free(b->k), free(b->v);
    }
    free(b->out), free(b->scratch);
    *b = (baseline_run){0};
}

/* Readies the baseline on the same inputs; false (with r->note saying why) when it won't run. */
static bool baseline_prepare(const bench_case *c, const bench_config *cfg, const fwd_shape *s, void *const io[3],
                             baseline_run *b, bench_result *r)
{
    if (!cfg->baseline) {
        snprintf(r->note, sizeof r->note, "baseline off (--no-baseline)");
        return false;
    }
    if (!bench_unfused_available()) {
        snprintf(r->note, sizeof r->note, "no baseline: built without OpenBLAS");
        return false;
    }
    b->threads = cfg->threads;
    b->p = (bench_unfused){.batch = s->nb, .q_heads = c->q_heads, .kv_heads = c->kv_heads,
                           .head_dim = c->head_dim, .q_lens = s->q_lens, .kv_lens = s->kv_lens,
                           .q_base = s->q_base, .kv_base = s->kv_base, .q_sh = s->q_sh, .q_ss = s->q_ss,
                           .kv_sh = s->kv_sh, .kv_ss = s->kv_ss, .scale = 1.0f / sqrtf((float)c->head_dim),
                           .causal = c->causal};
    const size_t scratch = bench_unfused_scratch_bytes(&b->p, cfg->threads);
    if ((double)scratch > cfg->baseline_cap) {
        snprintf(r->note, sizeof r->note, "baseline skipped: its score buffers need %.0f MiB > cap %.0f MiB",
                 (double)scratch / (1 << 20), cfg->baseline_cap / (1 << 20));
        return false;
    }
    b->own_inputs = c->dtype != FC_F32;
    b->q = b->own_inputs ? bench_alloc(s->q_elems * sizeof(float)) : io[0];
    b->k = b->own_inputs ? bench_alloc(s->kv_elems * sizeof(float)) : io[1];
    b->v = b->own_inputs ? bench_alloc(s->kv_elems * sizeof(float)) : io[2];
    b->out = bench_alloc(s->q_elems * sizeof(float));
    b->scratch = bench_alloc(scratch);
    if (!b->q || !b->k || !b->v || !b->out || !b->scratch) {
        snprintf(r->note, sizeof r->note, "baseline skipped: out of memory");
        baseline_free(b);
        return false;
    }
    if (b->own_inputs) { /* outside the timing, see the top of this file */
        bench_to_f32(io[0], c->dtype, s->q_elems, b->q);
        bench_to_f32(io[1], c->dtype, s->kv_elems, b->k);
        bench_to_f32(io[2], c->dtype, s->kv_elems, b->v);
    }
    b->p.q = b->q, b->p.k = b->k, b->p.v = b->v, b->p.out = b->out;
    return true;
}

/* Largest |flashc − baseline| over the output (both hold the same rows in the same layout);
 * NaN when either produced one. */
static double max_abs_diff(const void *flash_out, fc_dtype dtype, const float *base_out, size_t n)
{
    float *f = bench_alloc(n * sizeof(float));
    if (!f)
        return NAN;
    bench_to_f32(flash_out, dtype, n, f);
    double err = 0;
    for (size_t i = 0; i < n; i++) {
        const double e = fabs((double)f[i] - (double)base_out[i]);
        err = e > err || e != e ? e : err; /* a NaN sticks */
    }
    free(f);
    return err;
}

/* What rounding the output to its dtype explains, with margin: outputs are averages of values in
 * [-1, 1), so half an ulp at 1 bounds the rounding. */
static double tolerance(fc_dtype dtype)
{
    return dtype == FC_BF16 ? 1.6e-2 : dtype == FC_F16 ? 2e-3 : 1e-4;
}

bool bench_forward_measure(const bench_case *c, const bench_config *cfg, bench_result *r)
{
    fwd_shape s;
    if (!shape_of(c, &s)) {
        snprintf(r->note, sizeof r->note, "bad case: 1 to %d batches", BENCH_MAX_BATCH);
        return false;
    }
    const int repeat = cfg->repeat > 0 ? cfg->repeat : c->repeat > 0 ? c->repeat : 5;
    bench_problem bp;
    bench_plan fl = {0};
    baseline_run base = {0};
    bool ok = false;
    if (!bench_problem_build(c, false, false, &bp, r->note, sizeof r->note))
        return false;
    void *io[4] = {bp.d.q.data, bp.d.k.data, bp.d.v.data, bp.d.out.data};
    if (!bench_plan_make(&fl, &bp, false, cfg->threads, r->note, sizeof r->note) ||
        fc_plan_flops(fl.plan, &r->work) != FC_OK)
        goto done;

    /* flashc and the baseline take turns, see bench_time_interleaved */
    const bool with_base = baseline_prepare(c, cfg, &s, io, &base, r);
    const bench_fn fns[2] = {bench_plan_run, run_baseline};
    void *const ctxs[2] = {&fl, &base};
    double mins[2], medians[2];
    const int failed = bench_time_interleaved(with_base ? 2 : 1, fns, ctxs, cfg->warmup, repeat, mins, medians);
    if (failed == 0) {
        snprintf(r->note, sizeof r->note, "flashc: %s", fc_last_error());
        goto done;
    }
    bool base_ok = with_base;
    if (failed == 1) { /* flashc's timing was cut short with it: time flashc alone */
        snprintf(r->note, sizeof r->note, "baseline failed");
        base_ok = false;
        if (bench_time_interleaved(1, fns, ctxs, 0, repeat, mins, medians) == 0) {
            snprintf(r->note, sizeof r->note, "flashc: %s", fc_last_error());
            goto done;
        }
    }
    ok = true;
    r->runs = repeat;
    r->flashc_min = mins[0], r->flashc_median = medians[0];
    if (base_ok) {
        r->has_baseline = true;
        r->base_min = mins[1], r->base_median = medians[1];
        r->max_abs_err = max_abs_diff(io[3], c->dtype, base.out, s.q_elems);
        r->mismatch = !(r->max_abs_err <= tolerance(c->dtype)); /* NaN too */
        if (r->mismatch)
            snprintf(r->note, sizeof r->note, "MISMATCH: flashc and the baseline differ by %.3g (tolerance %.3g)",
                     r->max_abs_err, tolerance(c->dtype));
    }
done:
    baseline_free(&base);
    bench_plan_free(&fl);
    bench_problem_free(&bp);
    return ok;
}
