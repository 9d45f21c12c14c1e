/*
 * Runs of one CUDA decode plan (paged bf16 cache, 16 query / 4 kv heads, per-batch lengths):
 *  - on two streams at once with different data and workspaces: each output bitwise equal to the
 *    same run made alone (the plan holds no per-run state);
 *  - captured in a CUDA graph (no synchronisation, allocation or host read inside the run) and
 *    replayed after the inputs changed in place: bitwise equal to a direct run on those inputs;
 *  - captured with its kv lengths in device memory (fc_attention_io.kv_lens) and replayed after
 *    new lengths were written there: bitwise equal to a plan made for those lengths; a length
 *    outside the planned one leaves its batch unwritten and the next run names it.
 * Runs go through the core's fc_plan_execute_on with bindings, as the faces run plans; the kernel
 * (tensor-core or, under FLASHC_CUDA_DECODE=simt, CUDA-core) is the environment's.
 * Skips (77) without a GPU.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/check.h"
#include "common/rng.h"
#include "core/plan.h"
#include "flashc.h"
#include "stream_runs.h"

enum { B = 4, NQ = 16, NKV = 4, D = 128, S = 5000, PAGE = 64, W = (S + PAGE - 1) / PAGE, BLOCKS = B * W };

typedef struct {
    void *q, *k, *v, *out;
} io_set;

static const size_t q_bytes = (size_t)B * NQ * D * 2, kv_bytes = (size_t)BLOCKS * PAGE * NKV * D * 2;

static io_set io_new(tc_rng *r)
{
    io_set s = {sr_device_random(q_bytes, FC_BF16, r), sr_device_random(kv_bytes, FC_BF16, r),
                 sr_device_random(kv_bytes, FC_BF16, r), NULL};
    if (cudaMalloc(&s.out, q_bytes) != cudaSuccess)
        s.out = NULL;
    return s;
}

static void io_free(io_set *s)
{
    cudaFree(s->q), cudaFree(s->k), cudaFree(s->v), cudaFree(s->out);
}

static fc_bindings bind_of(const io_set *s)
{
    fc_bindings b;
    memset(&b, 0, sizeof b);
    b.q = s->q, b.k = s->k, b.v = s->v, b.out = s->out;
    return b;
}

/* A run of plan on io alone (poisoned output first); returns the output bytes. */
static void *run_alone(fc_plan *plan, const io_set *io, void *ws, size_t bytes, cudaStream_t s)
{
    const fc_bindings b = bind_of(io);
    return sr_run_alone(plan, &b, ws, bytes, q_bytes, s);
}

static void two_streams(fc_plan *plan, io_set *a, io_set *b, void *ws[2], size_t bytes, cudaStream_t s[2])
{
    const fc_bindings ba = bind_of(a), bb = bind_of(b);
    sr_two_streams(plan, &ba, &bb, ws, bytes, q_bytes, 4, false, s);
}

/* Captures a run on a's buffers; replays it after b's inputs were copied into them. */
static void graph_replay(fc_plan *plan, io_set *a, io_set *b, void *ws, size_t bytes, cudaStream_t s)
{
    void *want = run_alone(plan, b, ws, bytes, s);
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    TC_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "capture begins");
    const fc_bindings ba = bind_of(a);
    const fc_status st = fc_plan_execute_on(plan, &ba, ws, bytes, s);
    const cudaError_t end = cudaStreamEndCapture(s, &graph);
    TC_CHECK(st == FC_OK, "a run inside a graph capture: %s (%s)", fc_status_name(st), fc_last_error());
    TC_CHECK(end == cudaSuccess, "capture ends: %s", cudaGetErrorString(end));
    if (end == cudaSuccess && st == FC_OK) {
        TC_CHECK(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess, "the graph instantiates");
        cudaMemcpy(a->q, b->q, q_bytes, cudaMemcpyDeviceToDevice);
        cudaMemcpy(a->k, b->k, kv_bytes, cudaMemcpyDeviceToDevice);
        cudaMemcpy(a->v, b->v, kv_bytes, cudaMemcpyDeviceToDevice);
        cudaMemset(a->out, 0xFF, q_bytes);
        for (int rep = 0; rep < 2; rep++)
            TC_CHECK(cudaGraphLaunch(exec, s) == cudaSuccess, "graph replay %d", rep);
        TC_CHECK(cudaStreamSynchronize(s) == cudaSuccess, "the replays complete");
        void *got = sr_host_copy(a->out, q_bytes);
        TC_CHECK(want && got && memcmp(want, got, q_bytes) == 0, "the replay on new inputs equals a direct run, bit for bit");
        free(got);
    }
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    free(want);
}

/* A plan like `plan` (the planned lengths `lens` at planning) for other lengths, run alone on io. */
static void *run_planned_for(const fc_attention_desc *d0, const int64_t *lens, const io_set *io, cudaStream_t s)
{
    fc_attention_desc d = *d0;
    d.kv_lens = lens;
    fc_options opt = {.backend = FC_BACKEND_CUDA, .stream = s};
    fc_plan *plan = NULL;
    void *out = NULL, *ws = NULL;
    size_t bytes = 0;
    const fc_status st = fc_plan_create(&d, &opt, &plan);
    TC_CHECK(st == FC_OK, "a plan for the new lengths: %s (%s)", fc_status_name(st), fc_last_error());
    if (st == FC_OK && fc_plan_workspace_size(plan, &bytes) == FC_OK && cudaMalloc(&ws, bytes) == cudaSuccess)
        out = run_alone(plan, io, ws, bytes, s);
    cudaFree(ws);
    fc_plan_destroy(plan);
    return out;
}

/* Captures a run whose kv lengths are device data; replays it with new lengths written there. */
static void graph_lengths(fc_plan *plan, const fc_attention_desc *d, io_set *a, void *ws, size_t bytes, cudaStream_t s,
                          tc_rng *r)
{
    int64_t *dlens = NULL, lens[B];
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    if (cudaMalloc((void **)&dlens, sizeof lens) != cudaSuccess)
        return;
    for (int b = 0; b < B; b++)
        lens[b] = d->kv_lens[b];
    cudaMemcpy(dlens, lens, sizeof lens, cudaMemcpyHostToDevice);
    fc_bindings bind = bind_of(a);
    bind.kv_lens = dlens;
    TC_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "capture begins");
    const fc_status st = fc_plan_execute_on(plan, &bind, ws, bytes, s);
    const cudaError_t end = cudaStreamEndCapture(s, &graph);
    TC_CHECK(st == FC_OK && end == cudaSuccess, "a run with device kv lengths captured: %s (%s), %s", fc_status_name(st),
             fc_last_error(), cudaGetErrorString(end));
    if (st == FC_OK && end == cudaSuccess && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
        for (int rep = 0; rep < 3; rep++) {
            for (int b = 0; b < B; b++) /* within [0, the planned length]; 0 and the planned one included */
                lens[b] = rep == 0 && b == 0 ? 0 : rep == 1 && b == 1 ? d->kv_lens[b] : tc_rng_int(r, 1, d->kv_lens[b]);
            cudaMemcpy(dlens, lens, sizeof lens, cudaMemcpyHostToDevice);
            cudaMemset(a->out, 0xFF, q_bytes);
            TC_CHECK(cudaGraphLaunch(exec, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess, "replay %d", rep);
            void *got = sr_host_copy(a->out, q_bytes), *want = run_planned_for(d, lens, a, s);
            TC_CHECK(got && want && memcmp(got, want, q_bytes) == 0,
                     "replay %d with lengths %lld %lld %lld %lld equals a plan made for them, bit for bit", rep,
                     (long long)lens[0], (long long)lens[1], (long long)lens[2], (long long)lens[3]);
            free(got), free(want);
        }
        /* a length above the planned one: its batch keeps its contents, the next run names it */
        lens[0] = d->kv_lens[0], lens[1] = d->kv_lens[1], lens[2] = d->kv_lens[2] + 1, lens[3] = d->kv_lens[3];
        cudaMemcpy(dlens, lens, sizeof lens, cudaMemcpyHostToDevice);
        cudaMemset((char *)a->out + 2 * q_bytes / B, 0xEE, q_bytes / B); /* batch 2's rows */
        TC_CHECK(cudaGraphLaunch(exec, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess, "replay with a bad length");
        unsigned char *got = sr_host_copy(a->out, q_bytes);
        size_t touched = 0;
        for (size_t i = 2 * q_bytes / B; got && i < 3 * q_bytes / B; i++)
            touched += got[i] != 0xEE;
        TC_CHECK(got && touched == 0, "a batch with a length above its planned one is not written (%zu bytes)", touched);
        const fc_bindings plain = bind_of(a);
        const fc_status next = fc_plan_execute_on(plan, &plain, ws, bytes, s);
        TC_CHECK(next == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "io.kv_lens[2]"), "the next run names the length: %s (%s)",
                 fc_status_name(next), fc_last_error());
        cudaStreamSynchronize(s);
        free(got);
    }
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    cudaFree(dlens);
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("test_cuda_decode_runs: no CUDA device; skipped\n");
        return TC_SKIP;
    }
    tc_context("paged bf16 decode, B=%d, %d/%d heads, D=%d, S=%d, page %d, FLASHC_CUDA_DECODE=%s", B, NQ, NKV, D, S, PAGE,
               getenv("FLASHC_CUDA_DECODE") ? getenv("FLASHC_CUDA_DECODE") : "(unset)");
    tc_rng r = tc_rng_seed(20261128u);
    const char *mode = getenv("FLASHC_CUDA_DECODE");
    if (!mode || (strcmp(mode, "mma") != 0 && strcmp(mode, "auto") != 0)) /* the CUDA-core kernel (the library default may be
        either): its bits follow its split count, which follows the planned lengths */
        setenv("FLASHC_CUDA_DECODE_SPLITS", "5", 1);
    io_set a = io_new(&r), b = io_new(&r);
    int32_t table[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) /* batch-interleaved blocks: pages of a batch are not adjacent */
        table[i] = (i % W) * B + i / W;
    int64_t lens[B];
    for (int i = 0; i < B; i++)
        lens[i] = tc_rng_int(&r, S / 3, S);
    void *dtable = NULL, *ws[2] = {NULL, NULL};
    cudaStream_t s[2];
    cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking), cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking);
    cudaMalloc(&dtable, sizeof table);
    cudaMemcpy(dtable, table, sizeof table, cudaMemcpyHostToDevice);
    TC_CHECK(a.q && a.k && a.v && a.out && b.q && b.k && b.v && b.out && dtable, "device buffers");

    fc_attention_desc d = fc_attention_desc_init();
    d.batch = B, d.q_heads = NQ, d.kv_heads = NKV, d.head_dim = D, d.q_len = 1, d.kv_len = S, d.kv_lens = lens;
    d.q = fc_tensor_bnsd(a.q, FC_BF16, NQ, 1, D);
    d.out = fc_tensor_bnsd(a.out, FC_BF16, NQ, 1, D);
    d.k = (fc_tensor){a.k, FC_BF16, (int64_t)PAGE * NKV * D, D, NKV * D, 1};
    d.v = (fc_tensor){a.v, FC_BF16, (int64_t)PAGE * NKV * D, D, NKV * D, 1};
    d.kv.block_table = dtable, d.kv.table_stride = W, d.kv.block_size = PAGE, d.kv.num_blocks = BLOCKS;
    fc_options opt = {.backend = FC_BACKEND_CUDA, .stream = s[0]};
    fc_plan *plan = NULL;
    fc_status st = fc_plan_create(&d, &opt, &plan);
    TC_CHECK(st == FC_OK, "plan: %s (%s)", fc_status_name(st), fc_last_error());
    size_t bytes = 0;
    if (st == FC_OK && fc_plan_workspace_size(plan, &bytes) == FC_OK && cudaMalloc(&ws[0], bytes) == cudaSuccess &&
        cudaMalloc(&ws[1], bytes) == cudaSuccess) {
        two_streams(plan, &a, &b, ws, bytes, s);
        graph_replay(plan, &a, &b, ws[0], bytes, s[0]);
        graph_lengths(plan, &d, &a, ws[0], bytes, s[0], &r);
    }
    fc_plan_destroy(plan);
    cudaFree(ws[0]), cudaFree(ws[1]), cudaFree(dtable);
    io_free(&a), io_free(&b);
    cudaStreamDestroy(s[0]), cudaStreamDestroy(s[1]);
    return tc_summary("test_cuda_decode_runs");
}
