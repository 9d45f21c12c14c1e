/*
 * flashc-bench --backend cuda, decode: one query row per batch (and 4, speculative decoding),
 * 32 query / 8 kv heads, D = 128, against a bf16 cache (contiguous BNSD, paged in blocks of 64 and
 * 256, and int8 with per-channel scales) at B = 1 × 128K, 16 × 32K and 64 × 4K positions, each on
 * the tensor-core kernel and again on the CUDA-core one (FLASHC_CUDA_DECODE=simt, rows "-simt").
 * CUDA events around each run, the median of many; the rate is the bytes of K and V read (once)
 * per second, beside the card's device-to-device copy rate measured in the same run (bytes read +
 * written).  The cache is far larger than L2, so no input rotation is needed.  bench/sdpa_peer.py
 * times PyTorch on the same shapes.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, strdup */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda.h"
#include "flashc.h"

typedef struct {
    const char *name;
    int B, S;
    fc_dtype kv;
    int page; /* 0 = contiguous */
    int sq;   /* query rows per batch (full visibility) */
} decode_shape;

static const decode_shape shapes[] = {
    {"dec-bf16-b1-s128k", 1, 131072, FC_BF16, 0, 1},        {"dec-bf16-b16-s32k", 16, 32768, FC_BF16, 0, 1},
    {"dec-bf16-b64-s4k", 64, 4096, FC_BF16, 0, 1},          {"dec-bf16-b16-s32k-paged", 16, 32768, FC_BF16, 64, 1},
    {"dec-bf16-b16-s32k-paged256", 16, 32768, FC_BF16, 256, 1}, {"dec-bf16-b16-s32k-sq4", 16, 32768, FC_BF16, 0, 4},
    {"dec-i8-b16-s32k", 16, 32768, FC_I8, 0, 1},
};

enum { NQ = 32, NKV = 8, D = 128 };

typedef struct {
    fc_plan *plan;
    void *ws;
    size_t ws_bytes;
} decode_run;

static int run_plan(void *ctx)
{
    decode_run *r = ctx;
    if (fc_plan_run(r->plan, NULL, r->ws, r->ws_bytes) != FC_OK) {
        fprintf(stderr, "flashc-bench: %s\n", fc_last_error());
        return 1;
    }
    return 0;
}

typedef struct {
    void *dst, *src;
    size_t bytes;
} copy_run;

static int run_copy(void *ctx)
{
    copy_run *c = ctx;
    return cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, 0) != cudaSuccess;
}

/* GB/s of a device-to-device copy of 1 GiB (read + write). */
static double copy_rate(int repeat)
{
    copy_run c = {NULL, NULL, (size_t)1 << 30};
    double rate = 0;
    if (cudaMalloc(&c.dst, c.bytes) == cudaSuccess && cudaMalloc(&c.src, c.bytes) == cudaSuccess &&
        cudaMemset(c.src, 1, c.bytes) == cudaSuccess) {
        const float ms = bench_cuda_median_ms(2, repeat, run_copy, &c);
        rate = ms > 0 ? 2.0 * (double)c.bytes / (ms * 1e-3) / 1e9 : 0;
    }
    cudaFree(c.dst), cudaFree(c.src);
    return rate;
}

/* Times one shape; returns GB/s of the cache read (0 on failure). */
static double time_decode(const decode_shape *s, int repeat, float *ms_out)
{
    const size_t kv_elems = (size_t)s->B * NKV * s->S * D, es = fc_dtype_size(s->kv);
    const size_t q_bytes = (size_t)s->B * NQ * s->sq * D * 2;
    const int w = s->page ? (s->S + s->page - 1) / s->page : 0;
    void *k = NULL, *v = NULL, *q = NULL, *o = NULL, *table = NULL, *scale = NULL;
    decode_run r = {0};
    double rate = 0;
    int32_t *ht = NULL;
    if (cudaMalloc(&k, kv_elems * es) || cudaMalloc(&v, kv_elems * es) || cudaMalloc(&q, q_bytes) || cudaMalloc(&o, q_bytes) ||
        cudaMalloc(&scale, (size_t)NKV * D * 4) || (s->page && cudaMalloc(&table, (size_t)s->B * w * 4)))
        goto done;
    /* small finite values everywhere (bf16 0x3C3C ≈ 0.0115; int8 0x3C = 60 × scale) */
    cudaMemset(k, 0x3C, kv_elems * es), cudaMemset(v, 0x3C, kv_elems * es), cudaMemset(q, 0x3C, q_bytes);
    float hs[NKV * D];
    for (int i = 0; i < NKV * D; i++)
        hs[i] = 1.0f / 512;
    cudaMemcpy(scale, hs, sizeof hs, cudaMemcpyHostToDevice);
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = s->B, d.q_heads = NQ, d.kv_heads = NKV, d.head_dim = D, d.q_len = s->sq, d.kv_len = s->S;
    d.q = fc_tensor_bnsd(q, FC_BF16, NQ, s->sq, D);
    d.out = fc_tensor_bnsd(o, FC_BF16, NQ, s->sq, D);
    d.k = fc_tensor_bnsd(k, s->kv, NKV, s->S, D);
    d.v = fc_tensor_bnsd(v, s->kv, NKV, s->S, D);
    if (s->kv == FC_I8)
        d.kv.k_dequant = d.kv.v_dequant = (fc_affine){scale, NULL, FC_F32, D, 1};
    int64_t lens[64];
    if (s->page) { /* cache (blocks, page, N2·D); batch b's blocks in order after the previous batch's */
        ht = malloc((size_t)s->B * w * 4);
        for (int i = 0; ht && i < s->B * w; i++)
            ht[i] = i;
        if (!ht)
            goto done;
        cudaMemcpy(table, ht, (size_t)s->B * w * 4, cudaMemcpyHostToDevice);
        d.k = (fc_tensor){k, s->kv, (int64_t)s->page * NKV * D, D, NKV * D, 1};
        d.v = (fc_tensor){v, s->kv, (int64_t)s->page * NKV * D, D, NKV * D, 1};
        d.kv.block_table = table, d.kv.table_stride = w, d.kv.block_size = s->page, d.kv.num_blocks = (int64_t)s->B * w;
        for (int b = 0; b < s->B; b++)
            lens[b] = s->S;
        d.kv_lens = lens;
    }
    fc_options opt = {.backend = FC_BACKEND_CUDA};
    if (fc_plan_create(&d, &opt, &r.plan) != FC_OK) {
        fprintf(stderr, "flashc-bench: %s: %s\n", s->name, fc_last_error());
        goto done;
    }
    fc_plan_workspace_size(r.plan, &r.ws_bytes);
    if (r.ws_bytes && cudaMalloc(&r.ws, r.ws_bytes) != cudaSuccess)
        goto done;
    const float ms = bench_cuda_median_ms(2, repeat, run_plan, &r);
    if (ms > 0) {
        *ms_out = ms;
        rate = 2.0 * (double)(kv_elems * es) / (ms * 1e-3) / 1e9;
    }
done:
    fc_plan_destroy(r.plan);
    cudaFree(r.ws), cudaFree(k), cudaFree(v), cudaFree(q), cudaFree(o), cudaFree(table), cudaFree(scale);
    free(ht);
    return rate;
}

/* One row: the shape on the kernel FLASHC_CUDA_DECODE selects (simt: the CUDA-core kernel). */
static int decode_row(const decode_shape *s, bool simt, int repeat, double copy, double *rate_out)
{
    char name[64];
    snprintf(name, sizeof name, "%s%s", s->name, simt ? "-simt" : "");
    const char *was = getenv("FLASHC_CUDA_DECODE");
    char *saved = was ? strdup(was) : NULL;
    setenv("FLASHC_CUDA_DECODE", simt ? "simt" : "auto", 1); /* read when the plan is made */
    float ms = 0;
    const double rate = time_decode(s, repeat, &ms);
    if (saved)
        setenv("FLASHC_CUDA_DECODE", saved, 1), free(saved);
    else
        unsetenv("FLASHC_CUDA_DECODE");
    *rate_out = rate;
    if (rate <= 0) {
        printf("%-28s %10s %10s %8s\n", name, "failed", "-", "-");
        return 1;
    }
    printf("%-28s %10.3f %10.0f %7.0f%%\n", name, ms, rate, copy > 0 ? 100.0 * rate / copy : 0.0);
    return 0;
}

int bench_cuda_decode(const char *filter, int repeat)
{
    const double copy = copy_rate(repeat);
    const char *variant = getenv("FLASHC_CUDA_DECODE_VARIANT"); /* the tensor-core kernel's (decode.cu) */
    printf("tensor-core decode variant: %s\n", variant && *variant ? variant : "default (linear+merge)");
    printf("%-28s %10s %10s %8s\n", "decode case", "ms", "GB/s", "of copy");
    printf("%-28s %10s %10.0f %8s\n", "copy-d2d-1gib", "-", copy, "100%");
    int failures = 0;
    double bf16 = 0, i8 = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (filter && !strstr(shapes[i].name, filter))
            continue;
        for (int simt = 0; simt < 2; simt++) {
            double rate = 0;
            failures += decode_row(&shapes[i], simt, repeat, copy, &rate);
            if (!simt && strcmp(shapes[i].name, "dec-bf16-b16-s32k") == 0)
                bf16 = rate;
            if (!simt && strcmp(shapes[i].name, "dec-i8-b16-s32k") == 0)
                i8 = rate;
        }
    }
    if (bf16 > 0 && i8 > 0) /* tokens per second: an int8 position is half the bytes */
        printf("%-28s %10s %10.2f %8s\n", "dec-i8-token-rate-vs-bf16", "-", 2.0 * i8 / bf16, "x");
    return failures;
}
