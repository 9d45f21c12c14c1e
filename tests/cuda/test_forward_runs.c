/*
 * Runs of one CUDA forward plan on two streams at once (fp16 BNSD, 3 batches, 8 query / 2 kv
 * heads), each with its own data and workspace, queued interleaved without waiting in between:
 * every output bitwise equal to the same run made alone (the plan holds no per-run state):
 *  - a plan whose runs use the planned lengths;
 *  - a plan made with a batch rule whose runs bring lengths of their own (as IncreFlashAttention's
 *    kvPaddingSize does): each run's per-batch facts go into its own workspace.
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

enum { B = 3, NQ = 8, NKV = 2, SQ = 700, SKV = 900, D = 64, ROUNDS = 4 };

static const size_t q_bytes = (size_t)B * NQ * SQ * D * 2, kv_bytes = (size_t)B * NKV * SKV * D * 2;

typedef struct {
    void *q, *k, *v, *out;
    int64_t sq[B], skv[B]; /* the lengths a run brings (rule plans) */
} io_set;

static void *dev_random(size_t bytes, tc_rng *r)
{
    uint16_t *h = malloc(bytes);
    void *d = NULL;
    for (size_t i = 0; h && i < bytes / 2; i++)
        h[i] = fc_f32_to_f16((float)tc_rng_uniform(r, -2, 2));
    if (!h || cudaMalloc(&d, bytes) != cudaSuccess || cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
        d = NULL;
    free(h);
    return d;
}

static io_set io_new(tc_rng *r)
{
    io_set s = {dev_random(q_bytes, r), dev_random(kv_bytes, r), dev_random(kv_bytes, r), NULL, {0}, {0}};
    if (cudaMalloc(&s.out, q_bytes) != cudaSuccess)
        s.out = NULL;
    for (int b = 0; b < B; b++)
        s.sq[b] = tc_rng_int(r, 1, SQ), s.skv[b] = tc_rng_int(r, 1, SKV);
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

static void *host_copy(const void *d, size_t bytes)
{
    void *h = malloc(bytes);
    if (h && cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
        memset(h, 0, bytes);
    return h;
}

/* A run of plan on io alone (poisoned output first); returns the output bytes. */
static void *run_alone(const fc_plan *plan, const io_set *io, bool lengths, void *ws, cudaStream_t s)
{
    cudaMemset(io->out, 0xFF, q_bytes);
    const fc_bindings b = bind_of(io, lengths);
    const fc_status st = fc_plan_execute_on(plan, &b, ws, plan->workspace, s);
    TC_CHECK(st == FC_OK, "a run alone: %s (%s)", fc_status_name(st), fc_last_error());
    TC_CHECK(cudaStreamSynchronize(s) == cudaSuccess, "a run alone completes");
    return host_copy(io->out, q_bytes);
}

static void two_streams(const fc_plan *plan, io_set *a, io_set *b, bool lengths, cudaStream_t s[2])
{
    void *ws[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
        TC_CHECK(cudaMalloc(&ws[i], plan->workspace ? plan->workspace : 1) == cudaSuccess, "workspace %d", i);
    void *ra = run_alone(plan, a, lengths, ws[0], s[0]), *rb = run_alone(plan, b, lengths, ws[1], s[0]);
    TC_CHECK(ra && rb && memcmp(ra, rb, q_bytes) != 0, "the two runs' outputs differ (their data does)");
    cudaMemset(a->out, 0xFF, q_bytes), cudaMemset(b->out, 0xFF, q_bytes);
    cudaDeviceSynchronize();
    const fc_bindings ba = bind_of(a, lengths), bb = bind_of(b, lengths);
    fc_status st = FC_OK;
    for (int rep = 0; rep < ROUNDS && st == FC_OK; rep++) { /* interleaved, never waiting in between */
        st = fc_plan_execute_on(plan, &ba, ws[0], plan->workspace, s[0]);
        if (st == FC_OK)
            st = fc_plan_execute_on(plan, &bb, ws[1], plan->workspace, s[1]);
    }
    TC_CHECK(st == FC_OK, "concurrent runs queued: %s (%s)", fc_status_name(st), fc_last_error());
    TC_CHECK(cudaDeviceSynchronize() == cudaSuccess, "concurrent runs complete");
    void *ga = host_copy(a->out, q_bytes), *gb = host_copy(b->out, q_bytes);
    TC_CHECK(ra && ga && memcmp(ra, ga, q_bytes) == 0, "stream 1's output equals its run alone, bit for bit");
    TC_CHECK(rb && gb && memcmp(rb, gb, q_bytes) == 0, "stream 2's output equals its run alone, bit for bit");
    free(ra), free(rb), free(ga), free(gb);
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
        }
    }
    fc_plan_free(ruled);
    fc_plan_destroy(plan);
    cudaStreamDestroy(s[0]), cudaStreamDestroy(s[1]);
    io_free(&a), io_free(&b);
    return tc_summary("test_cuda_forward_runs");
}
