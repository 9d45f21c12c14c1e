/* Concurrent runs of one plan (flashc.h, "Plans"): two host threads run the same plan at once,
 * each with its own data and its own workspace, several times over; every run's outputs must be
 * bitwise those of the same run made alone.  Shapes reach the paths that keep per-run state in
 * the workspace: prefill items (fp32 GEMM, bf16 tiles where the set has them), flash-decoding
 * splits (partial slots), the two-pass and the fused backward. */
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "common/together.h"
#include "harness.h"

enum { RUNNERS = 2, ROUNDS = 4 };

typedef struct cc_shape {
    const char *name;
    fc_dtype dt;
    int B, N1, N2, Sq, Skv, D;
    bool causal, backward;
} cc_shape;

/* One runner's operands and outputs (the backward's forward output and statistics are inputs). */
typedef struct cc_set {
    void *q, *k, *v, *out, *dout, *dq, *dk, *dv;
    float *smax, *ssum;
    size_t nq, nkv, es;
} cc_set;

static void *random_values(tc_rng *r, size_t n, fc_dtype dt)
{
    char *p = malloc(n * fc_dtype_size(dt));
    for (size_t i = 0; i < n; i++) {
        const float x = (float)tc_rng_uniform(r, -1, 1);
        if (dt == FC_F32)
            ((float *)p)[i] = x;
        else
            ((uint16_t *)p)[i] = dt == FC_BF16 ? fc_f32_to_bf16(x) : fc_f32_to_f16(x);
    }
    return p;
}

static fc_attention_desc desc_of(const cc_shape *s, cc_set *d)
{
    fc_attention_desc a = fc_attention_desc_init();
    a.batch = s->B, a.q_heads = s->N1, a.kv_heads = s->N2, a.head_dim = s->D, a.q_len = s->Sq, a.kv_len = s->Skv;
    a.q = fc_tensor_bnsd(d->q, s->dt, s->N1, s->Sq, s->D);
    a.k = fc_tensor_bnsd(d->k, s->dt, s->N2, s->Skv, s->D);
    a.v = fc_tensor_bnsd(d->v, s->dt, s->N2, s->Skv, s->D);
    a.out = fc_tensor_bnsd(d->out, s->dt, s->N1, s->Sq, s->D);
    a.stats = (fc_stats){.max = d->smax, .sum = d->ssum, .order = FC_STATS_HEAD_MAJOR, .replicas = 1};
    if (s->causal)
        a.vis.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    return a;
}

static fc_attention_grads grads_of(const cc_shape *s, cc_set *d)
{
    return (fc_attention_grads){.d_out = fc_tensor_bnsd(d->dout, s->dt, s->N1, s->Sq, s->D),
                                .dq = fc_tensor_bnsd(d->dq, s->dt, s->N1, s->Sq, s->D),
                                .dk = fc_tensor_bnsd(d->dk, s->dt, s->N2, s->Skv, s->D),
                                .dv = fc_tensor_bnsd(d->dv, s->dt, s->N2, s->Skv, s->D)};
}

static fc_attention_io io_of(cc_set *d)
{
    return (fc_attention_io){.q = d->q, .k = d->k, .v = d->v, .out = d->out, .stats_max = d->smax,
                             .stats_sum = d->ssum, .d_out = d->dout, .dq = d->dq, .dk = d->dk, .dv = d->dv};
}

static void make_set(const cc_shape *s, uint64_t seed, cc_set *d)
{
    tc_rng r = tc_rng_seed(seed);
    d->es = fc_dtype_size(s->dt);
    d->nq = (size_t)s->B * s->N1 * s->Sq * s->D, d->nkv = (size_t)s->B * s->N2 * s->Skv * s->D;
    d->q = random_values(&r, d->nq, s->dt), d->k = random_values(&r, d->nkv, s->dt), d->v = random_values(&r, d->nkv, s->dt);
    d->out = calloc(d->nq, d->es);
    d->smax = calloc((size_t)s->B * s->N1 * s->Sq, sizeof(float));
    d->ssum = calloc((size_t)s->B * s->N1 * s->Sq, sizeof(float));
    d->dout = d->dq = d->dk = d->dv = NULL;
    if (s->backward) { /* the forward this backward belongs to */
        d->dout = random_values(&r, d->nq, s->dt);
        d->dq = calloc(d->nq, d->es), d->dk = calloc(d->nkv, d->es), d->dv = calloc(d->nkv, d->es);
        const fc_attention_desc a = desc_of(s, d);
        TC_CHECK(fc_attention(&a) == FC_OK, "the forward of the backward's data: %s", fc_last_error());
    }
}

static void free_set(cc_set *d)
{
    free(d->q), free(d->k), free(d->v), free(d->out), free(d->dout), free(d->dq), free(d->dk), free(d->dv);
    free(d->smax), free(d->ssum);
}

/* What a run writes, as one byte string: out and statistics, or dq, dk and dv. */
typedef struct cc_bytes {
    unsigned char *p;
    size_t n;
} cc_bytes;

static cc_bytes outputs_of(const cc_shape *s, const cc_set *d)
{
    const size_t stats = (size_t)s->B * s->N1 * s->Sq * sizeof(float);
    const size_t n = s->backward ? (d->nq + 2 * d->nkv) * d->es : d->nq * d->es + 2 * stats;
    cc_bytes b = {malloc(n), n};
    if (s->backward) {
        memcpy(b.p, d->dq, d->nq * d->es);
        memcpy(b.p + d->nq * d->es, d->dk, d->nkv * d->es);
        memcpy(b.p + (d->nq + d->nkv) * d->es, d->dv, d->nkv * d->es);
    } else {
        memcpy(b.p, d->out, d->nq * d->es);
        memcpy(b.p + d->nq * d->es, d->smax, stats);
        memcpy(b.p + d->nq * d->es + stats, d->ssum, stats);
    }
    return b;
}

/* Sets what a run writes to a pattern no run produces, so that a skipped write shows. */
static void poison_outputs(const cc_shape *s, cc_set *d)
{
    if (s->backward) {
        memset(d->dq, 0xA5, d->nq * d->es), memset(d->dk, 0xA5, d->nkv * d->es), memset(d->dv, 0xA5, d->nkv * d->es);
        return;
    }
    const size_t stats = (size_t)s->B * s->N1 * s->Sq * sizeof(float);
    memset(d->out, 0xA5, d->nq * d->es), memset(d->smax, 0xA5, stats), memset(d->ssum, 0xA5, stats);
}

typedef struct cc_runner {
    const cc_shape *s;
    fc_plan *plan;
    cc_set *set;
    void *ws;
    size_t bytes;
    cc_bytes want;
    int failed_runs, wrong_runs;
} cc_runner;

static void runner(void *arg)
{
    cc_runner *r = arg;
    const fc_attention_io io = io_of(r->set);
    for (int k = 0; k < ROUNDS; k++) {
        poison_outputs(r->s, r->set);
        if (fc_plan_run(r->plan, &io, r->ws, r->bytes) != FC_OK) {
            r->failed_runs++;
            continue;
        }
        cc_bytes got = outputs_of(r->s, r->set);
        r->wrong_runs += memcmp(got.p, r->want.p, got.n) != 0;
        free(got.p);
    }
}

static void concurrent_runs(const cc_shape *s)
{
    tc_context("%s", s->name);
    cc_set sets[RUNNERS];
    for (int t = 0; t < RUNNERS; t++)
        make_set(s, 4100 + 17 * (uint64_t)t, &sets[t]);
    fc_attention_desc a = desc_of(s, &sets[0]);
    fc_attention_grads g = grads_of(s, &sets[0]);
    fc_plan *plan = NULL;
    const fc_status st = s->backward ? fc_plan_create_backward(&a, &g, NULL, &plan) : fc_plan_create(&a, NULL, &plan);
    if (!TC_CHECK(st == FC_OK, "plan: %s", fc_last_error())) {
        for (int t = 0; t < RUNNERS; t++)
            free_set(&sets[t]);
        return;
    }
    size_t bytes = 0;
    fc_plan_workspace_size(plan, &bytes);
    cc_runner rs[RUNNERS];
    for (int t = 0; t < RUNNERS; t++) { /* each set alone first: the results to repeat */
        rs[t] = (cc_runner){.s = s, .plan = plan, .set = &sets[t], .ws = malloc(bytes ? bytes : 1), .bytes = bytes};
        const fc_attention_io io = io_of(&sets[t]);
        TC_CHECK(fc_plan_run(plan, &io, rs[t].ws, bytes) == FC_OK, "serial run %d: %s", t, fc_last_error());
        rs[t].want = outputs_of(s, &sets[t]);
    }
    TC_CHECK(memcmp(rs[0].want.p, rs[1].want.p, rs[0].want.n) != 0, "the runners' data must differ");
    tc_together(RUNNERS, runner, rs, sizeof rs[0]);
    for (int t = 0; t < RUNNERS; t++) {
        TC_CHECK(rs[t].failed_runs == 0, "runner %d: %d of %d runs failed", t, rs[t].failed_runs, ROUNDS);
        TC_CHECK(rs[t].wrong_runs == 0, "runner %d: %d of %d concurrent runs differ from its serial run", t,
                 rs[t].wrong_runs, ROUNDS);
        free(rs[t].want.p), free(rs[t].ws);
        free_set(&sets[t]);
    }
    fc_plan_destroy(plan);
}

static void body(void)
{
    static const cc_shape shapes[] = {
        {"fp32 prefill, GQA, causal", FC_F32, 2, 4, 2, 200, 200, 64, true, false},
        {"bf16 prefill (tile products where the set has them)", FC_BF16, 1, 4, 2, 300, 300, 64, true, false},
        {"fp16 prefill, Sq != Skv", FC_F16, 2, 2, 1, 70, 333, 32, false, false},
        {"fp16 decode: flash-decoding splits", FC_F16, 2, 8, 2, 1, 1500, 128, false, false},
        {"fp32 backward, fused per kv head", FC_F32, 2, 4, 2, 150, 150, 32, true, true},
        {"fp32 backward, two passes", FC_F32, 1, 2, 1, 150, 170, 32, false, true},
        {"bf16 backward", FC_BF16, 1, 4, 2, 140, 140, 64, true, true},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        concurrent_runs(&shapes[k]);
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_concurrency", body); }
