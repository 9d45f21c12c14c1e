/*
 * Runs of one CUDA backward plan on two streams at once (fp16 BNSD, 3 batches, 8 query / 2 kv
 * heads, Sq != Skv), each with its own data, gradients and workspace (its dQ accumulators, turn
 * counters and tickets), queued interleaved without waiting in between: dq, dk and dv of every
 * run bitwise equal to the same run made alone (the plan holds no per-run state).  Each data set's
 * output and softmax statistics come from a CUDA forward run on it.  Runs go through the core's
 * fc_plan_execute_on with bindings, as the faces run plans.  Skips (77) without a GPU.
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

enum { B = 3, NQ = 8, NKV = 2, SQ = 300, SKV = 420, D = 64, REPLICAS = 8, ROUNDS = 3 };

static const size_t q_bytes = (size_t)B * NQ * SQ * D * 2, kv_bytes = (size_t)B * NKV * SKV * D * 2,
                    stats_bytes = (size_t)B * NQ * SQ * REPLICAS * sizeof(float);

typedef struct {
    void *q, *k, *v, *dout;  /* random */
    void *out, *smax, *ssum; /* the forward's */
    void *dq, *dk, *dv;      /* the backward's */
} io_set;

static void *device_zeros(size_t bytes)
{
    void *d = NULL;
    return cudaMalloc(&d, bytes) == cudaSuccess && cudaMemset(d, 0, bytes) == cudaSuccess ? d : NULL;
}

static io_set io_new(tc_rng *r)
{
    io_set s;
    s.q = sr_device_random(q_bytes, FC_F16, r), s.k = sr_device_random(kv_bytes, FC_F16, r);
    s.v = sr_device_random(kv_bytes, FC_F16, r), s.dout = sr_device_random(q_bytes, FC_F16, r);
    s.out = device_zeros(q_bytes), s.smax = device_zeros(stats_bytes), s.ssum = device_zeros(stats_bytes);
    s.dq = device_zeros(q_bytes), s.dk = device_zeros(kv_bytes), s.dv = device_zeros(kv_bytes);
    return s;
}

static bool io_complete(const io_set *s)
{
    return s->q && s->k && s->v && s->dout && s->out && s->smax && s->ssum && s->dq && s->dk && s->dv;
}

static void io_free(io_set *s)
{
    cudaFree(s->q), cudaFree(s->k), cudaFree(s->v), cudaFree(s->dout), cudaFree(s->out);
    cudaFree(s->smax), cudaFree(s->ssum), cudaFree(s->dq), cudaFree(s->dk), cudaFree(s->dv);
}

static fc_bindings bind_of(const io_set *s)
{
    fc_bindings b;
    memset(&b, 0, sizeof b);
    b.q = s->q, b.k = s->k, b.v = s->v, b.out = s->out, b.stats_max = s->smax, b.stats_sum = s->ssum;
    b.dout = s->dout, b.dq = s->dq, b.dk = s->dk, b.dv = s->dv;
    return b;
}

static sr_outputs grads_of(const io_set *s)
{
    return (sr_outputs){.at = {s->dq, s->dk, s->dv}, .bytes = {q_bytes, kv_bytes, kv_bytes}, .n = 3};
}

/* The forward's output and statistics on s's data (the backward reads them). */
static void forward_on(const fc_plan *fwd, const io_set *s, cudaStream_t stream)
{
    void *ws = NULL;
    TC_CHECK(cudaMalloc(&ws, fwd->workspace ? fwd->workspace : 1) == cudaSuccess, "the forward's workspace");
    fc_bindings b = bind_of(s);
    b.dout = b.dq = b.dk = b.dv = NULL; /* the forward's operands only */
    const fc_status st = fc_plan_execute_on(fwd, &b, ws, fwd->workspace, stream);
    TC_CHECK(st == FC_OK, "the forward run: %s (%s)", fc_status_name(st), fc_last_error());
    TC_CHECK(cudaStreamSynchronize(stream) == cudaSuccess, "the forward run completes");
    cudaFree(ws);
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("test_cuda_backward_runs: no CUDA device; skipped\n");
        return TC_SKIP;
    }
    tc_rng r = tc_rng_seed(20261129u);
    io_set a = io_new(&r), b = io_new(&r);
    cudaStream_t s[2];
    cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking), cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking);
    TC_CHECK(io_complete(&a) && io_complete(&b), "device buffers");

    fc_attention_desc d = fc_attention_desc_init();
    d.batch = B, d.q_heads = NQ, d.kv_heads = NKV, d.head_dim = D, d.q_len = SQ, d.kv_len = SKV;
    d.q = fc_tensor_bnsd(a.q, FC_F16, NQ, SQ, D);
    d.k = fc_tensor_bnsd(a.k, FC_F16, NKV, SKV, D);
    d.v = fc_tensor_bnsd(a.v, FC_F16, NKV, SKV, D);
    d.out = fc_tensor_bnsd(a.out, FC_F16, NQ, SQ, D);
    d.stats = (fc_stats){a.smax, a.ssum, FC_STATS_HEAD_MAJOR, REPLICAS};
    fc_attention_grads g = {0};
    g.d_out = fc_tensor_bnsd(a.dout, FC_F16, NQ, SQ, D);
    g.dq = fc_tensor_bnsd(a.dq, FC_F16, NQ, SQ, D);
    g.dk = fc_tensor_bnsd(a.dk, FC_F16, NKV, SKV, D);
    g.dv = fc_tensor_bnsd(a.dv, FC_F16, NKV, SKV, D);
    const fc_options opt = {.backend = FC_BACKEND_CUDA};
    fc_plan *fwd = NULL, *bwd = NULL;
    fc_status st = fc_plan_create(&d, &opt, &fwd);
    TC_CHECK(st == FC_OK, "the forward plan: %s (%s)", fc_status_name(st), fc_last_error());
    if (st == FC_OK)
        st = fc_plan_create_backward(&d, &g, &opt, &bwd);
    TC_CHECK(st == FC_OK, "the backward plan: %s (%s)", fc_status_name(st), fc_last_error());
    if (st == FC_OK) {
        forward_on(fwd, &a, s[0]), forward_on(fwd, &b, s[0]);
        tc_context("fp16 backward, B=%d, %d/%d heads, Sq=%d, Skv=%d, D=%d: planned lengths", B, NQ, NKV, SQ, SKV, D);
        void *ws[2] = {NULL, NULL};
        for (int i = 0; i < 2; i++)
            TC_CHECK(cudaMalloc(&ws[i], bwd->workspace ? bwd->workspace : 1) == cudaSuccess, "workspace %d", i);
        const fc_bindings ba = bind_of(&a), bb = bind_of(&b);
        const sr_outputs oa = grads_of(&a), ob = grads_of(&b);
        sr_two_streams_into(bwd, &ba, &bb, &oa, &ob, ws, bwd->workspace, ROUNDS, true, s);
        cudaFree(ws[0]), cudaFree(ws[1]);
    }
    fc_plan_destroy(bwd);
    fc_plan_destroy(fwd);
    cudaStreamDestroy(s[0]), cudaStreamDestroy(s[1]);
    io_free(&a), io_free(&b);
    return tc_summary("test_cuda_backward_runs");
}
