/*
 * The CUDA sparse forward (SparseFlashAttention) through the native API, on the native harness
 * (tests/native/harness.h): each case's library buffers are copied to the GPU, run there
 * (FC_BACKEND_DEFAULT must pick CUDA) and copied back, and the harness checks them against the
 * independent sparse reference (tests/reference/sparse.h) — values within §0.4, empty and padding
 * rows exact, statistics replicas, and nothing written outside the outputs (gaps and guards keep
 * their sentinels).  Each case also runs on the CPU backend (GPU against CPU within the output's
 * tolerance), twice on the GPU (bit for bit), and its FLOP count (the index rows read back from
 * the device) must be the CPU plan's.  Named cases cover every key layout (BSND-like padded
 * batches, TND packed, PA_BSND paged), GQA/MQA with more than 16 query heads per kv head, rope and
 * the MLA shape (512 + 64, 512), −1 padding, duplicates, blocks past the causal limit, INT32/INT64
 * indices, odd strides (element loads); then a seeded sweep of random cases (argv[1] of them,
 * default 40).  The backward (SparseFlashAttentionGrad) on the backward harness (harness_bwd.h):
 * named cases and half as many random ones, each against the sparse reference, the CPU backend and
 * a second GPU run (bit for bit).  Refusals: fp32 operands, another output dtype, head dims beyond the kernel's, a
 * block-table entry out of range (FC_ERR_INVALID_ARG naming it, nothing written).  Skips (77)
 * without a GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/check.h"
#include "common/rng.h"
#include "gpu_args.h"
#include "harness.h"
#include "harness_bwd.h"
#include "harness_internal.h"
#include "harness_nonfinite.h"

/* The device twins of a case's buffers. */
enum { SP_BUFS = 16 };
typedef struct {
    void *d[SP_BUFS];
    int n;
} sp_dev;

static void *sp_twin(sp_dev *D, const void *host, size_t bytes)
{
    void *d = NULL;
    if (!host || D->n == SP_BUFS || cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess)
        return NULL;
    cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice);
    D->d[D->n++] = d;
    return d;
}

static void sp_free(sp_dev *D)
{
    for (int x = 0; x < D->n; x++)
        cudaFree(D->d[x]);
    D->n = 0;
}

/* The case's description with every operand in device memory (lengths stay host arrays). */
static fc_attention_desc sp_upload(const nt_case *c, const nt_data *d, const fc_attention_desc *a, const nt_bufs *L, sp_dev *D)
{
    fc_attention_desc g = *a;
    const size_t eb = nt_dtype_bytes(c->dt), ob = nt_dtype_bytes(c->out_dt);
    const bool paged = c->kv.mode == NT_KV_PAGED;
    memset(D, 0, sizeof *D);
    g.q.data = sp_twin(D, L->q, (size_t)L->gq.count * eb);
    g.k.data = sp_twin(D, L->k, (size_t)(paged ? d->pcount[0] : L->gk.count) * eb);
    g.v.data = sp_twin(D, L->v, (size_t)(paged ? d->pcount[1] : L->gv.count) * eb);
    g.q_rope.data = sp_twin(D, L->qr, (size_t)L->gqr.count * eb);
    g.k_rope.data = sp_twin(D, L->kr, (size_t)(paged ? d->pcount[2] : L->gkr.count) * eb);
    g.out.data = sp_twin(D, L->out, (size_t)L->gout.count * ob);
    g.sparse.indices = sp_twin(D, L->sparse, (size_t)d->sp_n * (c->sparse.dtype == FC_I64 ? 8 : 4));
    g.kv.block_table = paged ? sp_twin(D, d->table, (size_t)(c->B * d->table_stride) * sizeof(int32_t)) : NULL;
    const size_t sb = (size_t)(L->stat_n + NT_STAT_GUARD) * sizeof(float);
    g.stats.max = sp_twin(D, L->smax, sb);
    g.stats.sum = sp_twin(D, L->ssum, sb);
    return g;
}

/* The outputs and statistics back into L's host buffers (gaps and guards included). */
static void sp_download(const nt_case *c, const fc_attention_desc *g, nt_bufs *L)
{
    cudaMemcpy(L->out, g->out.data, (size_t)L->gout.count * nt_dtype_bytes(c->out_dt), cudaMemcpyDeviceToHost);
    const size_t sb = (size_t)(L->stat_n + NT_STAT_GUARD) * sizeof(float);
    if (L->smax)
        cudaMemcpy(L->smax, g->stats.max, sb, cudaMemcpyDeviceToHost), cudaMemcpy(L->ssum, g->stats.sum, sb, cudaMemcpyDeviceToHost);
}

static double sp_flops(const fc_attention_desc *a)
{
    fc_options def = {.backend = FC_BACKEND_DEFAULT};
    fc_plan *plan = NULL;
    double f = -2.0;
    if (fc_plan_create(a, &def, &plan) == FC_OK && fc_plan_flops(plan, &f) != FC_OK)
        f = -3.0;
    fc_plan_destroy(plan);
    return f;
}

/* nt_runner: the case on the GPU, its FLOP count against the CPU plan's. */
static fc_status sp_gpu_runner(const nt_case *c, const nt_data *d, const fc_attention_desc *a, nt_bufs *L, size_t *ws_bytes)
{
    sp_dev D;
    const fc_attention_desc g = sp_upload(c, d, a, L, &D);
    fc_options def = {.backend = FC_BACKEND_DEFAULT};
    fc_plan *plan = NULL;
    fc_status st = fc_plan_create(&g, &def, &plan);
    char text[512] = "";
    if (st == FC_OK) {
        fc_plan_describe(plan, text, sizeof text);
        TC_CHECK(strncmp(text, "backend=cuda", 12) == 0, "the device operands chose the CUDA backend: %s", text);
        double fg = -1.0;
        const fc_status fs = fc_plan_flops(plan, &fg);
        const double fc = sp_flops(a);
        TC_CHECK(fs == FC_OK && fg == fc, "FLOPs on the GPU plan %.17g (%s), on the CPU plan %.17g", fg, fc_status_name(fs), fc);
        fc_plan_workspace_size(plan, ws_bytes);
        void *w = NULL;
        if (*ws_bytes && cudaMalloc(&w, *ws_bytes) != cudaSuccess)
            st = FC_ERR_NO_MEMORY;
        if (st == FC_OK)
            st = fc_plan_run(plan, NULL, w, *ws_bytes);
        const cudaError_t e = cudaDeviceSynchronize();
        TC_CHECK(e == cudaSuccess, "GPU kernel: %s", cudaGetErrorString(e));
        cudaFree(w);
    }
    fc_plan_destroy(plan);
    if (st == FC_OK)
        sp_download(c, &g, L);
    sp_free(&D);
    return st;
}

/* The case on the CPU and twice on the GPU: each against the reference, the GPU against the CPU,
 * the two GPU runs bit for bit. */
static void sp_run(const nt_case *c) { nt_run_elsewhere(c, sp_gpu_runner, 2); }

/* The sparse fixture in dtype dt with the head dims of the 64 class. */
static nt_case sp_case(uint64_t seed, fc_dtype dt, int bs, bool causal, fc_dtype idt)
{
    nt_case c = nt_sparse_fixture(seed, bs, causal, idt);
    c.dt = c.out_dt = dt;
    c.D = 64, c.Dv = 64;
    return c;
}

static void named_cases(void)
{
    const int sizes[] = {1, 3, 16, 33, 64, 100};
    int k = 0;
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int causal = 0; causal < 2; causal++, k++) {
            nt_case c = sp_case(10 + k, k % 2 ? FC_BF16 : FC_F16, sizes[s], causal, k % 3 ? FC_I32 : FC_I64);
            c.sparse.pad = k % 3 == 1;
            tc_context("GPU sparse: block %d causal %d", sizes[s], causal);
            sp_run(&c);
        }
    static const int sq[3] = {9, 4, 0}, skv[3] = {40, 13, 8}, sq2[3] = {5, 0, 7}, skv2[3] = {11, 6, 20};
    nt_case c = sp_case(40, FC_F16, 4, true, FC_I32);
    c.B = 3, c.lens = true, c.sq = sq, c.skv = skv, c.Skv = 40;
    tc_context("GPU sparse: per-batch lengths, padding rows, a batch without rows");
    sp_run(&c);
    c = sp_case(41, FC_BF16, 3, true, FC_I64);
    c.B = 3, c.packed = true, c.sq = sq2, c.skv = skv2, c.stats_order = FC_STATS_KV_TOKEN_GROUP;
    tc_context("GPU sparse: TND (packed), statistics (N2, T1, G)");
    sp_run(&c);
    c.sparse.causal = false, c.N1 = 6, c.N2 = 3, c.D = 24, c.Dr = 8, c.Dv = 16, c.stats_order = FC_STATS_HEAD_MAJOR, c.replicas = 8;
    tc_context("GPU sparse: packed, GQA 2, rope, head-major statistics with 8 replicas");
    sp_run(&c);
    c = sp_case(42, FC_F16, 5, false, FC_I32);
    c.N1 = 20, c.N2 = 1, c.D = 48, c.Dr = 16, c.Dv = 40, c.Sq = 7, c.Skv = 37;
    c.sparse.count = 12, c.sparse.dup_p = 0.4;
    tc_context("GPU sparse: MQA 20 (two head tiles), rope, Dv != D, many duplicates");
    sp_run(&c);
    c = sp_case(43, FC_BF16, 4, true, FC_I32);
    c.Sq = 12, c.Skv = 8; /* S1 > S2: the first rows have a threshold <= 0 */
    tc_context("GPU sparse: causal with more rows than columns (empty rows)");
    sp_run(&c);
    c = sp_case(45, FC_F16, 8, true, FC_I32);
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 6, c.kv.spare_blocks = 2;
    tc_context("GPU sparse: PA_BSND (paged cache)");
    sp_run(&c);
    c.kv.head_major_blocks = true, c.kv.block_size = 16, c.Dr = 8, c.N1 = 8, c.N2 = 2, c.dt = c.out_dt = FC_BF16;
    tc_context("GPU sparse: paged, head-major blocks, rope");
    sp_run(&c);
    c = sp_case(46, FC_F16, 16, false, FC_I64);
    c.pad = 3, c.dim_stride = 2, c.D = 40, c.Dv = 24, c.layout = NT_BNSD, c.mixed_layouts = true;
    tc_context("GPU sparse: odd strides (element loads), mixed layouts");
    sp_run(&c);
    const int dims[3][2] = {{128, 128}, {256, 256}, {200, 96}};
    for (int x = 0; x < 3; x++) {
        c = sp_case(47 + x, x % 2 ? FC_BF16 : FC_F16, 64, x == 1, FC_I32);
        c.D = dims[x][0], c.Dv = dims[x][1], c.Sq = 5, c.Skv = 300, c.sparse.count = 5;
        tc_context("GPU sparse: head dims %d / %d", dims[x][0], dims[x][1]);
        sp_run(&c);
    }
    for (int x = 0; x < 2; x++) { /* MLA: 512 + 64 rope, values 512, 16 query heads on one kv head */
        c = sp_case(50 + x, x ? FC_BF16 : FC_F16, 64, x == 1, FC_I32);
        c.N1 = 16, c.N2 = 1, c.D = 512, c.Dr = 64, c.Dv = 512, c.Sq = 3, c.Skv = 333, c.sparse.count = 4, c.scale = x ? 0 : -0.05;
        static const int sqm[3] = {3, 0, 4}, skvm[3] = {200, 70, 333};
        c.packed = x == 1, c.sq = x ? sqm : NULL, c.skv = x ? skvm : NULL, c.B = x ? 3 : 2;
        if (x)
            c.stats_order = FC_STATS_KV_TOKEN_GROUP;
        tc_context("GPU sparse: MLA 512 + 64, Dv 512 (%s)", x ? "packed, causal" : "padded, negative scale");
        sp_run(&c);
    }
}

/* A random case over what the kernel takes. */
static nt_case sp_random(tc_rng *r, uint64_t seed)
{
    static const int bss[] = {1, 2, 5, 16, 31, 64, 128};
    nt_case c = sp_case(seed, tc_rng_bool(r, 0.5) ? FC_BF16 : FC_F16, bss[tc_rng_int(r, 0, 6)], tc_rng_bool(r, 0.5),
                        tc_rng_bool(r, 0.5) ? FC_I64 : FC_I32);
    c.B = (int)tc_rng_int(r, 1, 3);
    c.N2 = (int)tc_rng_int(r, 1, 3);
    c.N1 = c.N2 * (int)tc_rng_int(r, 1, 18);
    static const int ds[] = {8, 16, 24, 40, 64, 72, 128, 136, 256};
    c.D = ds[tc_rng_int(r, 0, 8)];
    c.Dr = c.D <= 128 && tc_rng_bool(r, 0.3) ? 8 * (int)tc_rng_int(r, 1, 4) : 0;
    c.Dv = tc_rng_bool(r, 0.5) ? c.D : 8 * (int)tc_rng_int(r, 1, 32);
    c.Sq = (int)tc_rng_int(r, 1, 20);
    c.Skv = (int)tc_rng_int(r, 1, 400);
    c.sparse.count = (int)tc_rng_int(r, 1, 10);
    c.sparse.end_p = tc_rng_uniform(r, 0, 0.3), c.sparse.dup_p = tc_rng_uniform(r, 0, 0.3);
    c.sparse.late_p = tc_rng_uniform(r, 0, 0.3), c.sparse.pad = tc_rng_bool(r, 0.2);
    c.scale = tc_rng_bool(r, 0.2) ? -0.3 : 0;
    const int storage = (int)tc_rng_int(r, 0, 2);
    static int sq[3], skv[3];
    if (storage == 1) { /* packed (TND) */
        c.packed = true, c.stats_order = FC_STATS_KV_TOKEN_GROUP;
        for (int b = 0; b < c.B; b++)
            sq[b] = (int)tc_rng_int(r, 0, c.Sq), skv[b] = (int)tc_rng_int(r, 1, c.Skv);
        c.sq = sq, c.skv = skv;
    } else if (storage == 2) { /* paged (PA_BSND) */
        c.kv.mode = NT_KV_PAGED, c.kv.block_size = (int)tc_rng_int(r, 1, 40), c.kv.spare_blocks = (int)tc_rng_int(r, 0, 3);
        c.kv.head_major_blocks = tc_rng_bool(r, 0.5);
    } else {
        static const nt_layout lays[] = {NT_BSND, NT_BNSD, NT_BSH, NT_SBH};
        c.layout = lays[tc_rng_int(r, 0, 3)];
        c.pad = tc_rng_bool(r, 0.2) ? (int)tc_rng_int(r, 1, 5) : 0;
        c.mixed_layouts = tc_rng_bool(r, 0.3);
    }
    if (!c.packed && tc_rng_bool(r, 0.4)) {
        c.lens = true;
        for (int b = 0; b < c.B; b++)
            sq[b] = (int)tc_rng_int(r, 0, c.Sq), skv[b] = (int)tc_rng_int(r, 0, c.Skv);
        c.sq = sq, c.skv = skv;
    }
    c.stats = tc_rng_bool(r, 0.8);
    if (c.stats && !c.packed)
        c.stats_order = tc_rng_bool(r, 0.5) ? FC_STATS_KV_GROUP : FC_STATS_HEAD_MAJOR;
    const bool eight = tc_rng_bool(r, 0.2); /* the kv-group orders take one replica (semantics §2.8) */
    c.replicas = eight && c.stats_order != FC_STATS_KV_GROUP && c.stats_order != FC_STATS_KV_TOKEN_GROUP ? 8 : 1;
    return c;
}

static void sweep(int cases)
{
    tc_rng r = tc_rng_seed(3030);
    for (int x = 0; x < cases; x++) {
        const nt_case c = sp_random(&r, 700 + (uint64_t)x);
        tc_context("GPU sparse sweep case %d", x);
        sp_run(&c);
    }
}

/* nt_bwd_runner_fn: the backward of the case on the GPU (inputs, d_out and the sentinel-filled
 * gradients uploaded, the gradients copied back into gr's buffers); both configurations are the
 * same launch, so the harness compares two GPU runs bit for bit. */
static fc_status sp_bwd_runner(const nt_case *c, const nt_data *d, const fc_attention_desc *a, const struct nt_bufs *L,
                               const fc_attention_grads *gr, const size_t bytes[6], int config)
{
    (void)config;
    sp_dev D;
    const fc_attention_desc g = sp_upload(c, d, a, L, &D);
    fc_attention_grads gg = *gr;
    fc_tensor *t[6] = {&gg.dq, &gg.dk, &gg.dv, &gg.dq_rope, &gg.dk_rope, &gg.d_out};
    for (int k = 0; k < 6; k++)
        if (t[k]->data)
            t[k]->data = sp_twin(&D, t[k]->data, bytes[k]);
    fc_options def = {.backend = FC_BACKEND_DEFAULT};
    fc_plan *plan = NULL;
    fc_status st = fc_plan_create_backward(&g, &gg, &def, &plan);
    if (st == FC_OK) {
        char text[512] = "";
        fc_plan_describe(plan, text, sizeof text);
        TC_CHECK(strncmp(text, "backend=cuda", 12) == 0, "the device operands chose the CUDA backend: %s", text);
        size_t ws = 0;
        void *w = NULL;
        fc_plan_workspace_size(plan, &ws);
        if (ws && cudaMalloc(&w, ws) != cudaSuccess)
            st = FC_ERR_NO_MEMORY;
        if (st == FC_OK)
            st = fc_plan_run(plan, NULL, w, ws);
        const cudaError_t e = cudaDeviceSynchronize();
        TC_CHECK(e == cudaSuccess, "GPU kernel: %s", cudaGetErrorString(e));
        cudaFree(w);
    }
    fc_plan_destroy(plan);
    const fc_tensor *h[5] = {&gr->dq, &gr->dk, &gr->dv, &gr->dq_rope, &gr->dk_rope};
    for (int k = 0; st == FC_OK && k < 5; k++)
        if (h[k]->data)
            cudaMemcpy(h[k]->data, t[k]->data, bytes[k], cudaMemcpyDeviceToHost);
    sp_free(&D);
    return st;
}

/* The backward of c on the GPU, against the reference, the CPU backend and a second GPU run. */
static void sp_bwd(const nt_case *c)
{
    nt_bwd o = nt_bwd_default();
    o.grad_dt = c->dt;
    o.runner = sp_bwd_runner;
    o.runner_configs = 2;
    nt_bwd_run(c, &o);
}

/* Non-finite inputs (semantics §0.3) in selected blocks, some past a token's causal cut inside its
 * block (no pair there: the keys keep finite dK and dV, sparse_fixup.cuh), on the GPU. */
static void nonfinite_backward(void)
{
    nt_case c = nf_sparse_case(404, true);
    c.dt = c.out_dt = FC_BF16;
    static const nf_put puts[] = {{NF_K, 0, 0, 0, 17, 1, NAN}, {NF_Q, 1, 3, 2, 0, 0, NAN}, {NF_K, 1, 0, 0, 81, 0, NAN},
                                  {NF_DOUT, 0, 1, 3, 0, 2, INFINITY}, {NF_V, 1, 1, 0, 82, 0, -INFINITY}};
    nt_bwd o = nt_bwd_default();
    o.grad_dt = c.dt;
    o.runner = sp_bwd_runner;
    o.runner_configs = 2;
    tc_context("GPU sparse backward, causal: NaN / inf keys, queries, d_out and values in selected blocks");
    nf_backward(&c, puts, 5, &o);
}

/* SparseFlashAttentionGrad: the forward's named shapes and a seeded sweep of its random ones. */
static void backward_cases(int sweep_cases)
{
    nonfinite_backward();
    static const int sq[3] = {9, 4, 0}, skv[3] = {40, 13, 8}, sq2[3] = {5, 0, 7}, skv2[3] = {11, 6, 20};
    const int sizes[] = {1, 3, 16, 64, 100};
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        nt_case c = sp_case(200 + s, s % 2 ? FC_BF16 : FC_F16, sizes[s], s % 2 == 0, s % 3 ? FC_I32 : FC_I64);
        tc_context("GPU sparse backward: block %d", sizes[s]);
        sp_bwd(&c);
    }
    nt_case c = sp_case(210, FC_F16, 4, true, FC_I32);
    c.B = 3, c.lens = true, c.sq = sq, c.skv = skv, c.Skv = 40;
    tc_context("GPU sparse backward: per-batch lengths, padding rows, a batch without rows");
    sp_bwd(&c);
    c = sp_case(211, FC_BF16, 3, true, FC_I64);
    c.B = 3, c.packed = true, c.sq = sq2, c.skv = skv2, c.stats_order = FC_STATS_KV_TOKEN_GROUP;
    c.N1 = 6, c.N2 = 3, c.D = 24, c.Dr = 8, c.Dv = 16;
    tc_context("GPU sparse backward: TND, GQA 2, rope");
    sp_bwd(&c);
    c = sp_case(212, FC_F16, 5, false, FC_I32);
    c.N1 = 20, c.N2 = 1, c.D = 48, c.Dr = 16, c.Dv = 40, c.Sq = 7, c.Skv = 37, c.sparse.count = 12, c.sparse.dup_p = 0.4;
    tc_context("GPU sparse backward: MQA 20 (two head tiles), rope, many duplicates");
    sp_bwd(&c);
    c = sp_case(213, FC_BF16, 8, true, FC_I32);
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 6, c.kv.spare_blocks = 2;
    tc_context("GPU sparse backward: paged keys");
    sp_bwd(&c);
    c = sp_case(214, FC_F16, 16, false, FC_I64);
    c.pad = 3, c.dim_stride = 2, c.D = 40, c.Dv = 24, c.layout = NT_BNSD, c.mixed_layouts = true;
    tc_context("GPU sparse backward: odd strides (element loads), mixed layouts");
    sp_bwd(&c);
    const int dims[3][2] = {{128, 128}, {256, 256}, {200, 96}};
    for (int x = 0; x < 3; x++) {
        c = sp_case(215 + x, x % 2 ? FC_BF16 : FC_F16, 64, x == 1, FC_I32);
        c.D = dims[x][0], c.Dv = dims[x][1], c.Sq = 5, c.Skv = 300, c.sparse.count = 5;
        tc_context("GPU sparse backward: head dims %d / %d", dims[x][0], dims[x][1]);
        sp_bwd(&c);
    }
    for (int x = 0; x < 2; x++) { /* MLA: 512 + 64 rope, values 512, 16 query heads on one kv head */
        c = sp_case(220 + x, x ? FC_BF16 : FC_F16, 64, x == 1, FC_I32);
        c.N1 = 16, c.N2 = 1, c.D = 512, c.Dr = 64, c.Dv = 512, c.Sq = 3, c.Skv = 333, c.sparse.count = 4;
        static const int sqm[3] = {3, 0, 4}, skvm[3] = {200, 70, 333};
        c.packed = x == 1, c.sq = x ? sqm : NULL, c.skv = x ? skvm : NULL, c.B = x ? 3 : 2;
        if (x)
            c.stats_order = FC_STATS_KV_TOKEN_GROUP;
        tc_context("GPU sparse backward: MLA 512 + 64, Dv 512 (%s)", x ? "packed, causal" : "padded");
        sp_bwd(&c);
    }
    tc_rng r = tc_rng_seed(3131);
    for (int x = 0; x < sweep_cases; x++) {
        c = sp_random(&r, 900 + (uint64_t)x);
        c.stats = true, c.replicas = 1;
        if (!c.packed)
            c.stats_order = FC_STATS_KV_GROUP;
        tc_context("GPU sparse backward sweep case %d", x);
        sp_bwd(&c);
    }
}

/* Plans c on the GPU (its buffers uploaded) and, when `run`, runs it: the status (the message in
 * fc_last_error); *untouched says whether the run left the output as it was. */
static fc_status sp_plan_status(const nt_case *c, nt_data *d, bool run, bool *untouched)
{
    nt_bufs L;
    sp_dev D;
    const fc_attention_desc a = nt_make_desc(c, d, &L);
    const fc_attention_desc g = sp_upload(c, d, &a, &L, &D);
    fc_options def = {.backend = FC_BACKEND_DEFAULT};
    fc_plan *plan = NULL;
    fc_status st = fc_plan_create(&g, &def, &plan);
    *untouched = true;
    if (st == FC_OK && run) {
        size_t ws = 0;
        void *w = NULL;
        fc_plan_workspace_size(plan, &ws);
        if (ws)
            cudaMalloc(&w, ws);
        st = fc_plan_run(plan, NULL, w, ws);
        cudaDeviceSynchronize();
        cudaFree(w);
        const size_t bytes = (size_t)L.gout.count * nt_dtype_bytes(c->out_dt);
        void *back = malloc(bytes);
        cudaMemcpy(back, g.out.data, bytes, cudaMemcpyDeviceToHost);
        *untouched = memcmp(back, L.out, bytes) == 0;
        free(back);
    }
    fc_plan_destroy(plan);
    sp_free(&D);
    nt_bufs_free(&L);
    return st;
}

static void expect_refusal(const char *what, nt_case c, fc_status want, const char *needle)
{
    nt_data d = nt_prepare(&c);
    bool untouched = true;
    const fc_status st = sp_plan_status(&c, &d, false, &untouched);
    TC_CHECK(st == want && strstr(fc_last_error(), needle), "%s: %s naming \"%s\", got %s (%s)", what, fc_status_name(want),
             needle, fc_status_name(st), fc_last_error());
    nt_data_free(&d);
}

static void refusals(void)
{
    nt_case c = sp_case(60, FC_F16, 4, true, FC_I32);
    nt_case f = c;
    f.dt = f.out_dt = FC_F32;
    expect_refusal("fp32 operands", f, FC_ERR_BACKEND, "fp16/bf16");
    f = c, f.out_dt = FC_F32;
    expect_refusal("an fp32 output of fp16 operands", f, FC_ERR_BACKEND, "output dtype");
    f = c, f.D = 520, f.Dr = 64, f.Dv = 64;
    expect_refusal("head dims beyond the kernel's", f, FC_ERR_BACKEND, "head dims");
    /* a used block-table entry out of range: refused before anything is written */
    f = c, f.kv.mode = NT_KV_PAGED, f.kv.block_size = 4;
    nt_data d = nt_prepare(&f);
    d.table[1] = (int32_t)d.num_blocks;
    bool untouched = false;
    const fc_status st = sp_plan_status(&f, &d, true, &untouched);
    TC_CHECK(st == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "block table entry [0][1]"),
             "a bad block-table entry: FC_ERR_INVALID_ARG naming it, got %s (%s)", fc_status_name(st), fc_last_error());
    TC_CHECK(untouched, "a refused run writes nothing");
    nt_data_free(&d);
}

int main(int argc, char **argv)
{
    if (!gc_args_ok(argc, argv, ""))
        return 2;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("test_cuda_sparse: no CUDA device; skipped\n");
        return TC_SKIP;
    }
    refusals();
    named_cases();
    sweep(argc > 1 ? atoi(argv[1]) : 40);
    backward_cases(argc > 1 ? atoi(argv[1]) / 2 : 20);
    return tc_summary("test_cuda_sparse");
}
