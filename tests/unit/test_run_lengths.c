/*
 * Runs of one plan made with a batch rule (src/core/plan.h), whose runs may bring lengths of their
 * own as IncreFlashAttention's and SparseFlashAttention's do, on one kernel set (argv[1]):
 *   - a run with the planned lengths and a run with its own allocate nothing: the library's
 *     malloc, calloc and realloc are counted (this test links with --wrap for them); nor does
 *     binding a run's lengths for a backend whose memory is not the host's (CUDA: the planned
 *     facts stay in the run, the backend derives the run's own);
 *   - two host threads run the plan at once, each with its own data, lengths and workspace,
 *     several times over, and every run's outputs are bitwise those of the same run made alone.
 * Shapes: decode (one query row per head against kv windows, flash-decoding splits), prefill
 * (per-batch query and kv lengths), and a native plan whose runs bring kv lengths alone
 * (fc_bindings.kv_lens, as fc_attention_io.kv_lens does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc_count.h"
#include "common/check.h"
#include "common/rng.h"
#include "common/together.h"
#include "core/backend.h"
#include "core/error.h"
#include "core/plan.h"

enum { RUNNERS = 2, ROUNDS = 4 };

typedef struct rl_shape {
    const char *name;
    int B, N1, N2, Sq, Skv, D;
    int64_t sq[RUNNERS][2], skv[RUNNERS][2], kv_lo[RUNNERS][2]; /* each runner's lengths (B = 2) */
    bool kv_lens; /* the native plan, runs bringing skv alone as kv_lens (sq, kv_lo unused) */
} rl_shape;

typedef struct rl_set {
    float *q, *k, *v, *out, *smax, *ssum;
    size_t nq, nkv, nstat;
    fc_bindings bind;
} rl_set;

static float *random_floats(tc_rng *r, size_t n)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)tc_rng_uniform(r, -1, 1);
    return p;
}

static void make_set(const rl_shape *s, int t, rl_set *d)
{
    tc_rng r = tc_rng_seed(8800 + (uint64_t)t);
    d->nq = (size_t)s->B * s->N1 * s->Sq * s->D, d->nkv = (size_t)s->B * s->N2 * s->Skv * s->D;
    d->nstat = (size_t)s->B * s->N1 * s->Sq;
    d->q = random_floats(&r, d->nq), d->k = random_floats(&r, d->nkv), d->v = random_floats(&r, d->nkv);
    d->out = calloc(d->nq, sizeof(float)), d->smax = calloc(d->nstat, sizeof(float)), d->ssum = calloc(d->nstat, sizeof(float));
    d->bind = (fc_bindings){.q = (char *)d->q, .k = (char *)d->k, .v = (char *)d->v, .out = (char *)d->out,
                            .stats_max = d->smax, .stats_sum = d->ssum};
    if (s->kv_lens)
        d->bind.kv_lens = s->skv[t];
    else
        d->bind.lengths = (fc_lengths){.sq = s->sq[t], .skv = s->skv[t], .kv_lo = s->kv_lo[t]};
}

static void free_set(rl_set *d) { free(d->q), free(d->k), free(d->v), free(d->out), free(d->smax), free(d->ssum); }

static size_t out_bytes(const rl_set *d) { return (d->nq + 2 * d->nstat) * sizeof(float); }

static void copy_outputs(const rl_set *d, unsigned char *to)
{
    memcpy(to, d->out, d->nq * sizeof(float));
    memcpy(to + d->nq * sizeof(float), d->smax, d->nstat * sizeof(float));
    memcpy(to + (d->nq + d->nstat) * sizeof(float), d->ssum, d->nstat * sizeof(float));
}

static void poison(rl_set *d)
{
    memset(d->out, 0xA5, d->nq * sizeof(float));
    memset(d->smax, 0xA5, d->nstat * sizeof(float)), memset(d->ssum, 0xA5, d->nstat * sizeof(float));
}

/* A forward plan over fp32 BNSD operands whose runs may bring lengths up to (Sq, Skv). */
static fc_plan *make_plan(const rl_shape *s, rl_set *d)
{
    fc_attention_desc a = fc_attention_desc_init();
    a.batch = s->B, a.q_heads = s->N1, a.kv_heads = s->N2, a.head_dim = s->D, a.q_len = s->Sq, a.kv_len = s->Skv;
    a.q = fc_tensor_bnsd(d->q, FC_F32, s->N1, s->Sq, s->D);
    a.k = fc_tensor_bnsd(d->k, FC_F32, s->N2, s->Skv, s->D);
    a.v = fc_tensor_bnsd(d->v, FC_F32, s->N2, s->Skv, s->D);
    a.out = fc_tensor_bnsd(d->out, FC_F32, s->N1, s->Sq, s->D);
    a.stats = (fc_stats){.max = d->smax, .sum = d->ssum, .order = FC_STATS_HEAD_MAJOR, .replicas = 1};
    const fc_options opt = {.threads = 2};
    fc_plan *native = NULL, *plan = NULL;
    if (!TC_CHECK(fc_plan_create(&a, &opt, &native) == FC_OK, "native plan: %s", fc_last_error()))
        return NULL;
    if (s->kv_lens) {
        TC_CHECK(native->run_kv_lens, "a native plan over padded batches takes a run's kv lengths");
        return native;
    }
    fc_problem p = native->prob; /* its shape, with facts of its own that the rule re-derives per run */
    p.batch = malloc((size_t)s->B * sizeof *p.batch);
    memcpy(p.batch, native->prob.batch, (size_t)s->B * sizeof *p.batch);
    fc_plan_destroy(native);
    const fc_batch_rule rule = {.B = s->B, .q = {.rows = s->Sq, .len = s->Sq}, .kv = {.rows = s->Skv, .len = s->Skv}};
    TC_CHECK(fc_plan_from_problem(&p, &rule, false, FC_OP_FORWARD, &opt, &plan) == FC_OK, "plan with a rule: %s",
             fc_error_message());
    TC_CHECK(p.batch == NULL, "fc_plan_from_problem takes the records");
    return plan;
}

/* Where a backend's memory is not the host's (CUDA), binding a run's lengths keeps the planned
 * facts in the run — the backend derives the run's own where its memory is — and allocates
 * nothing (the same plan seen through a backend marked so). */
static void bind_for_device(const fc_plan *plan, const fc_bindings *bind)
{
    fc_backend_ops device = *plan->backend;
    device.host_memory = false;
    fc_plan seen = *plan;
    seen.backend = &device;
    fc_problem run;
    const long at = tc_allocations();
    const fc_status st = fc_plan_bind(&seen, bind, NULL, &run);
    const long n = tc_allocations() - at;
    TC_CHECK(st == FC_OK && n == 0 && run.batch == plan->prob.batch,
             "a device backend's bind of a run's lengths: %s, %ld allocations, %s facts", fc_error_message(), n,
             run.batch == plan->prob.batch ? "the planned" : "other");
}

typedef struct rl_runner {
    const fc_plan *plan;
    rl_set *set;
    void *ws;
    unsigned char *want, *got;
    int failed, wrong;
} rl_runner;

static void runner(void *arg)
{
    rl_runner *r = arg;
    for (int k = 0; k < ROUNDS; k++) {
        poison(r->set);
        if (fc_plan_execute(r->plan, &r->set->bind, r->ws, r->plan->workspace) != FC_OK) {
            r->failed++;
            continue;
        }
        copy_outputs(r->set, r->got);
        r->wrong += memcmp(r->got, r->want, out_bytes(r->set)) != 0;
    }
}

static void check_shape(const rl_shape *s)
{
    tc_context("%s", s->name);
    rl_set sets[RUNNERS];
    for (int t = 0; t < RUNNERS; t++)
        make_set(s, t, &sets[t]);
    fc_plan *plan = make_plan(s, &sets[0]);
    if (!plan) {
        for (int t = 0; t < RUNNERS; t++)
            free_set(&sets[t]);
        return;
    }
    rl_runner rs[RUNNERS];
    for (int t = 0; t < RUNNERS; t++) {
        const size_t n = out_bytes(&sets[t]);
        rs[t] = (rl_runner){.plan = plan, .set = &sets[t], .ws = malloc(plan->workspace), .want = malloc(n),
                            .got = malloc(n)};
    }

    /* no allocation: the planned lengths, then each runner's own (alone, so the count is theirs) */
    const long before = tc_allocations();
    const fc_status planned = fc_plan_execute(plan, NULL, rs[0].ws, plan->workspace);
    const long after_planned = tc_allocations();
    TC_CHECK(planned == FC_OK && after_planned == before, "a run with the planned lengths: %s, %ld allocations",
             fc_error_message(), after_planned - before);
    for (int t = 0; t < RUNNERS; t++) {
        const long at = tc_allocations();
        const fc_status st = fc_plan_execute(plan, &sets[t].bind, rs[t].ws, plan->workspace);
        const long n = tc_allocations() - at;
        TC_CHECK(st == FC_OK && n == 0, "runner %d alone (its own lengths): %s, %ld allocations", t, fc_error_message(), n);
        copy_outputs(&sets[t], rs[t].want);
    }
    TC_CHECK(memcmp(rs[0].want, rs[1].want, out_bytes(&sets[0])) != 0, "the runners' data must differ");
    if (!s->kv_lens) /* (kv lengths a device backend reads itself: fc_plan_bind leaves them alone there) */
        bind_for_device(plan, &sets[0].bind);

    tc_together(RUNNERS, runner, rs, sizeof rs[0]);
    for (int t = 0; t < RUNNERS; t++) {
        TC_CHECK(rs[t].failed == 0, "runner %d: %d of %d concurrent runs failed", t, rs[t].failed, ROUNDS);
        TC_CHECK(rs[t].wrong == 0, "runner %d: %d of %d concurrent runs differ from its run alone", t, rs[t].wrong,
                 ROUNDS);
        free(rs[t].ws), free(rs[t].want), free(rs[t].got);
        free_set(&sets[t]);
    }
    fc_plan_free(plan);
}

int main(int argc, char **argv)
{
    const char *isa = argc > 1 ? argv[1] : NULL;
    if (isa && !fc_cpu_force_isa(isa)) {
        printf("unit_run_lengths: the %s kernels are not available on this CPU; skipped\n", isa);
        return TC_SKIP;
    }
    static const rl_shape shapes[] = {
        {"decode: kv windows per run, flash-decoding splits", 2, 8, 2, 1, 1500, 64,
         .sq = {{1, 1}, {1, 1}}, .skv = {{1500, 700}, {900, 1500}}, .kv_lo = {{0, 100}, {300, 0}}},
        {"prefill: query and kv lengths per run", 2, 4, 2, 150, 160, 32,
         .sq = {{150, 37}, {90, 150}}, .skv = {{160, 41}, {100, 160}}, .kv_lo = {{0, 0}, {0, 0}}},
        {"decode: kv lengths per run (kv_lens)", 2, 8, 2, 1, 1500, 64, .skv = {{1500, 700}, {900, 1}}, .kv_lens = true},
        {"prefill: kv lengths per run (kv_lens)", 2, 4, 2, 150, 160, 32, .skv = {{160, 41}, {100, 0}}, .kv_lens = true},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        check_shape(&shapes[k]);
    char name[64];
    snprintf(name, sizeof name, "unit_run_lengths[%s]", fc_cpu_isa());
    return tc_summary(name);
}
