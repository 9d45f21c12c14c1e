/*
 * Runs of one CUDA forward plan on two streams at once (fp16 BNSD, 3 batches, 8 query / 2 kv
 * heads), each with its own data and workspace, queued interleaved without waiting in between:
 * every output bitwise equal to the same run made alone (the plan holds no per-run state):
 *  - a plan whose runs use the planned lengths;
 *  - a plan made with a batch rule whose runs bring lengths of their own (as IncreFlashAttention's
 *    kvPaddingSize does): each run's per-batch facts go into its own workspace; the kv lengths
 *    move, the query lengths are the plan's (a run with others is refused, FC_ERR_INVALID_ARG).
 * Runs go through the core's fc_plan_execute_on with bindings, as the faces run plans.
 * Skips (77) without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/check.h"
#include "common/rng.h"
#include "core/error.h"
#include "core/plan.h"
#include "flashc.h"
#include "stream_runs.h"

enum { B = 3, NQ = 8, NKV = 2, SQ = 700, SKV = 900, D = 64, ROUNDS = 4 };

static const size_t q_bytes = (size_t)B * NQ * SQ * D * 2, kv_bytes = (size_t)B * NKV * SKV * D * 2;

typedef struct {
    void *q, *k, *v, *out;
    int64_t sq[B], skv[B]; /* the lengths a run brings (rule plans) */
} io_set;

static io_set io_new(tc_rng *r)
{
    io_set s = {sr_device_random(q_bytes, FC_F16, r), sr_device_random(kv_bytes, FC_F16, r), sr_device_random(kv_bytes, FC_F16, r),
                 NULL, {0}, {0}};
    if (cudaMalloc(&s.out, q_bytes) != cudaSuccess)
        s.out = NULL;
    for (int b = 0; b < B; b++) /* kv lengths per run; query rows stay the plan's (its tile list) */
        s.sq[b] = SQ, s.skv[b] = tc_rng_int(r, 1, SKV);
    return s;
}

static void io_free(io_set *s) { cudaFree(s->q), cudaFree(s->k), cudaFree(s->v), cudaFree(s->out); }

static fc_bindings bind_of(const io_set *s, bool lengths)
{
    fc_bindings b;
    memset(&b, 0, sizeof b);
    b.q = s->q, b.k = s->k, b.v = s->v, b.out = s->out;
    if (lengths)
        b.lengths = (fc_lengths){.sq = s->sq, .skv = s->skv};
    return b;
}

static void two_streams(const fc_plan *plan, io_set *a, io_set *b, bool lengths, cudaStream_t s[2])
{
    void *ws[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
        TC_CHECK(cudaMalloc(&ws[i], plan->workspace ? plan->workspace : 1) == cudaSuccess, "workspace %d", i);
    const fc_bindings ba = bind_of(a, lengths), bb = bind_of(b, lengths);
    sr_two_streams(plan, &ba, &bb, ws, plan->workspace, q_bytes, ROUNDS, true, s);
    cudaFree(ws[0]), cudaFree(ws[1]);
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("test_cuda_forward_runs: no CUDA device; skipped\n");
        return TC_SKIP;
    }
    tc_rng r = tc_rng_seed(20261128u);
    io_set a = io_new(&r), b = io_new(&r);
    cudaStream_t s[2];
    cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking), cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking);
    TC_CHECK(a.q && a.k && a.v && a.out && b.q && b.k && b.v && b.out, "device buffers");

    fc_attention_desc d = fc_attention_desc_init();
    d.batch = B, d.q_heads = NQ, d.kv_heads = NKV, d.head_dim = D, d.q_len = SQ, d.kv_len = SKV;
    d.q = fc_tensor_bnsd(a.q, FC_F16, NQ, SQ, D);
    d.k = fc_tensor_bnsd(a.k, FC_F16, NKV, SKV, D);
    d.v = fc_tensor_bnsd(a.v, FC_F16, NKV, SKV, D);
    d.out = fc_tensor_bnsd(a.out, FC_F16, NQ, SQ, D);
    const fc_options opt = {.backend = FC_BACKEND_CUDA};
    fc_plan *plan = NULL, *ruled = NULL;
    fc_status st = fc_plan_create(&d, &opt, &plan);
    TC_CHECK(st == FC_OK, "the forward plan: %s (%s)", fc_status_name(st), fc_last_error());
    if (st == FC_OK) {
        tc_context("fp16 forward, B=%d, %d/%d heads, Sq=%d, Skv=%d, D=%d: planned lengths", B, NQ, NKV, SQ, SKV, D);
        two_streams(plan, &a, &b, false, s);
        /* the same shape whose runs bring their own lengths: the rule re-derives the facts per run */
        fc_problem p = plan->prob;
        p.batch = malloc((size_t)B * sizeof *p.batch);
        memcpy(p.batch, plan->prob.batch, (size_t)B * sizeof *p.batch);
        const fc_batch_rule rule = {.B = B, .q = {.rows = SQ, .len = SQ}, .kv = {.rows = SKV, .len = SKV}};
        st = fc_plan_from_problem(&p, &rule, false, FC_OP_FORWARD, &opt, &ruled);
        TC_CHECK(st == FC_OK, "the plan with a batch rule: %s (%s)", fc_status_name(st), fc_error_message());
        if (st == FC_OK) {
            tc_context("fp16 forward, B=%d, %d/%d heads, Sq=%d, Skv=%d, D=%d: each run's own lengths", B, NQ, NKV, SQ, SKV,
                       D);
            two_streams(ruled, &a, &b, true, s);
            /* query lengths other than the planned ones: refused before anything is queued */
            fc_bindings other = bind_of(&a, true);
            int64_t sq[B];
            for (int i = 0; i < B; i++)
                sq[i] = i == B - 1 ? SQ - 1 : SQ;
            other.lengths.sq = sq;
            void *ws = NULL;
            cudaMalloc(&ws, ruled->workspace);
            const fc_status refused = fc_plan_execute_on(ruled, &other, ws, ruled->workspace, s[0]);
            TC_CHECK(refused == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "batch 2"),
                     "a run with other query lengths: %s (%s)", fc_status_name(refused), fc_last_error());
            cudaStreamSynchronize(s[0]);
            cudaFree(ws);
        }
    }
    fc_plan_free(ruled);
    fc_plan_destroy(plan);
    cudaStreamDestroy(s[0]), cudaStreamDestroy(s[1]);
    io_free(&a), io_free(&b);
    return tc_summary("test_cuda_forward_runs");
}
