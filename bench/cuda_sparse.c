/*
 * flashc-bench --backend cuda, sparse forward (SparseFlashAttention) and backward
 * (SparseFlashAttentionGrad, the sfag rows): B = 1, 16 query heads on 1 kv
 * head, S = 8K query and kv positions, each row selecting its top 16 blocks of 64 below the causal
 * limit (the rows near the start fewer), bf16; the MLA shape (512 + 64 rope, values 512) and
 * D = 128.  TFLOP/s over the selected positions (fc_plan_flops), CUDA events around each run, the
 * median of many, inputs rotated over three buffer sets.  Beside each, the dense causal forward of
 * the same D = 128 shape (the sparse rate per visible FLOP against the dense one; the dense kernels
 * take rope only up to Dqk + Dr = 256, so the MLA row has no dense twin yet).  A backward row runs
 * the forward once for its output and statistics, then times the backward alone (d_out random).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda.h"
#include "flashc.h"

typedef struct {
    const char *name;
    int D, Dr, Dv;
    bool sparse;   /* else the dense causal attention of the same shape */
    bool backward; /* the gradient (after one forward for its output and statistics) */
} sparse_shape;

static const sparse_shape shapes[] = {
    {"sfa-bf16-mla-s8k-top16x64", 512, 64, 512, true, false},
    {"sfa-bf16-d128-s8k-top16x64", 128, 0, 128, true, false},
    {"sfa-dense-bf16-d128-s8k-causal", 128, 0, 128, false, false},
    {"sfag-bf16-mla-s8k-top16x64", 512, 64, 512, true, true},
    {"sfag-bf16-d128-s8k-top16x64", 128, 0, 128, true, true},
    {"sfag-dense-bf16-d128-s8k-causal", 128, 0, 128, false, true},
};

enum { S = 8192, NQ = 16, NKV = 1, TOPK = 16, BS = 64, SETS = 3 };

/* Row i's index row: min(TOPK, blocks starting at or before i) distinct blocks from a scrambled
 * start, −1 after them. */
static void index_rows(int32_t *ind)
{
    for (int64_t i = 0; i < S; i++) {
        const int64_t reach = i / BS + 1, n = reach < TOPK ? reach : TOPK, h = (int64_t)((uint64_t)i * 2654435761u % (uint64_t)reach);
        for (int64_t k = 0; k < TOPK; k++)
            ind[i * TOPK + k] = k < n ? (int32_t)((h + k) % reach) : -1;
    }
}

static void *device_fill(size_t elems)
{
    void *d = NULL;
    uint16_t *h = malloc(elems * 2);
    if (!h || cudaMalloc(&d, elems * 2) != cudaSuccess) {
        free(h);
        return NULL;
    }
    for (size_t i = 0; i < elems; i++) /* bf16 values in [−1, 1) */
        h[i] = (uint16_t)(0x3F80 - ((i * 2654435761u >> 7) & 0x7F) - ((i & 1) << 15));
    cudaMemcpy(d, h, elems * 2, cudaMemcpyHostToDevice);
    free(h);
    return d;
}

/* One buffer set: q, k, v, out, q_rope, k_rope (backward: statistics, d_out and the gradients),
 * and the plan over them. */
typedef struct {
    void *q, *k, *v, *out, *qr, *kr;
    float *smax, *ssum;
    void *dout, *dq, *dk, *dv, *dqr, *dkr;
    fc_plan *plan;
    void *ws;
    size_t ws_bytes;
} sparse_set;

static fc_status plan_set(const sparse_shape *s, const int32_t *ind, sparse_set *x)
{
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = NQ, d.kv_heads = NKV, d.head_dim = s->D, d.v_head_dim = s->Dv, d.rope_dim = s->Dr;
    d.q_len = d.kv_len = S;
    x->q = device_fill((size_t)S * NQ * s->D), x->k = device_fill((size_t)S * NKV * s->D);
    x->v = device_fill((size_t)S * NKV * s->Dv), x->out = device_fill((size_t)S * NQ * s->Dv);
    if (s->Dr)
        x->qr = device_fill((size_t)S * NQ * s->Dr), x->kr = device_fill((size_t)S * NKV * s->Dr);
    if (!x->q || !x->k || !x->v || !x->out || (s->Dr && (!x->qr || !x->kr)))
        return FC_ERR_NO_MEMORY;
    d.q = fc_tensor_bsnd(x->q, FC_BF16, NQ, S, s->D);
    d.k = fc_tensor_bsnd(x->k, FC_BF16, NKV, S, s->D);
    d.v = fc_tensor_bsnd(x->v, FC_BF16, NKV, S, s->Dv);
    d.out = fc_tensor_bsnd(x->out, FC_BF16, NQ, S, s->Dv);
    if (s->Dr) {
        d.q_rope = fc_tensor_bsnd(x->qr, FC_BF16, NQ, S, s->Dr);
        d.k_rope = fc_tensor_bsnd(x->kr, FC_BF16, NKV, S, s->Dr);
    }
    if (s->sparse)
        d.sparse = (fc_sparse){.indices = ind, .dtype = FC_I32, .count = TOPK, .block_size = BS, .stride_batch = (int64_t)S * TOPK,
                               .stride_seq = TOPK, .stride_head = TOPK, .stride_entry = 1, .causal = true};
    else
        d.vis.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    fc_options opt = {.backend = FC_BACKEND_CUDA};
    if (s->backward) {
        if (cudaMalloc((void **)&x->smax, (size_t)S * NQ * sizeof(float)) != cudaSuccess ||
            cudaMalloc((void **)&x->ssum, (size_t)S * NQ * sizeof(float)) != cudaSuccess)
            return FC_ERR_NO_MEMORY;
        d.stats = (fc_stats){.max = x->smax, .sum = x->ssum, .order = FC_STATS_KV_GROUP, .replicas = 1};
        fc_status st = fc_attention(&d); /* the output and statistics the backward reads */
        if (st != FC_OK || cudaDeviceSynchronize() != cudaSuccess)
            return st != FC_OK ? st : FC_ERR_BACKEND;
    }
    fc_status st;
    if (s->backward) {
        x->dout = device_fill((size_t)S * NQ * s->Dv), x->dq = device_fill((size_t)S * NQ * s->D);
        x->dk = device_fill((size_t)S * NKV * s->D), x->dv = device_fill((size_t)S * NKV * s->Dv);
        if (s->Dr)
            x->dqr = device_fill((size_t)S * NQ * s->Dr), x->dkr = device_fill((size_t)S * NKV * s->Dr);
        if (!x->dout || !x->dq || !x->dk || !x->dv || (s->Dr && (!x->dqr || !x->dkr)))
            return FC_ERR_NO_MEMORY;
        fc_attention_grads g = {.d_out = fc_tensor_bsnd(x->dout, FC_BF16, NQ, S, s->Dv),
                                .dq = fc_tensor_bsnd(x->dq, FC_BF16, NQ, S, s->D),
                                .dk = fc_tensor_bsnd(x->dk, FC_BF16, NKV, S, s->D),
                                .dv = fc_tensor_bsnd(x->dv, FC_BF16, NKV, S, s->Dv)};
        if (s->Dr)
            g.dq_rope = fc_tensor_bsnd(x->dqr, FC_BF16, NQ, S, s->Dr), g.dk_rope = fc_tensor_bsnd(x->dkr, FC_BF16, NKV, S, s->Dr);
        st = fc_plan_create_backward(&d, &g, &opt, &x->plan);
    } else {
        st = fc_plan_create(&d, &opt, &x->plan);
    }
    if (st == FC_OK && fc_plan_workspace_size(x->plan, &x->ws_bytes) == FC_OK && x->ws_bytes &&
        cudaMalloc(&x->ws, x->ws_bytes) != cudaSuccess)
        st = FC_ERR_NO_MEMORY;
    return st;
}

static void free_set(sparse_set *x)
{
    fc_plan_destroy(x->plan);
    cudaFree(x->q), cudaFree(x->k), cudaFree(x->v), cudaFree(x->out), cudaFree(x->qr), cudaFree(x->kr), cudaFree(x->ws);
    cudaFree(x->smax), cudaFree(x->ssum), cudaFree(x->dout), cudaFree(x->dq), cudaFree(x->dk), cudaFree(x->dv);
    cudaFree(x->dqr), cudaFree(x->dkr);
}

/* The buffer sets, run in turn (bench_cuda_median_ms's callback). */
typedef struct {
    const char *name;
    sparse_set *set;
    int next;
} rotation;

static int run_next(void *ctx)
{
    rotation *r = ctx;
    const sparse_set *x = &r->set[r->next++ % SETS];
    if (fc_plan_run(x->plan, NULL, x->ws, x->ws_bytes) != FC_OK) {
        fprintf(stderr, "flashc-bench: %s: %s\n", r->name, fc_last_error());
        return 1;
    }
    return 0;
}

/* Median milliseconds of `repeat` runs; flops of one run in *flops. */
static int time_shape(const sparse_shape *s, const int32_t *ind, int repeat, float *ms, double *flops)
{
    sparse_set set[SETS];
    memset(set, 0, sizeof set);
    int rc = 0;
    for (int k = 0; k < SETS && rc == 0; k++)
        if (plan_set(s, ind, &set[k]) != FC_OK) {
            fprintf(stderr, "flashc-bench: %s: %s\n", s->name, fc_last_error());
            rc = 1;
        }
    if (rc == 0) {
        rotation rot = {s->name, set, 0};
        *ms = bench_cuda_median_ms(3, repeat, run_next, &rot);
        rc = *ms < 0 || fc_plan_flops(set[0].plan, flops) != FC_OK;
    }
    for (int k = 0; k < SETS; k++)
        free_set(&set[k]);
    return rc;
}

int bench_cuda_sparse(const char *filter, int repeat)
{
    bool any = false;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        any = any || !filter || strstr(shapes[i].name, filter);
    if (!any)
        return 0;
    int32_t *ind_h = malloc((size_t)S * TOPK * sizeof *ind_h), *ind = NULL;
    int failures = 0;
    if (!ind_h || cudaMalloc((void **)&ind, (size_t)S * TOPK * sizeof *ind) != cudaSuccess)
        failures = 1;
    else {
        index_rows(ind_h);
        cudaMemcpy(ind, ind_h, (size_t)S * TOPK * sizeof *ind, cudaMemcpyHostToDevice);
    }
    printf("%-32s %10s %10s\n", "sparse case", "ms", "TFLOP/s");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0] && ind; i++) {
        if (filter && !strstr(shapes[i].name, filter))
            continue;
        float ms = 0;
        double flops = 0;
        if (time_shape(&shapes[i], ind, repeat, &ms, &flops) != 0) {
            failures++;
            printf("%-32s %10s %10s\n", shapes[i].name, "failed", "-");
            continue;
        }
        printf("%-32s %10.3f %10.1f\n", shapes[i].name, ms, flops / (ms * 1e-3) / 1e12);
    }
    cudaFree(ind);
    free(ind_h);
    return failures;
}
