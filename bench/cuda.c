/*
 * flashc-bench --backend cuda: the forward and backward operators on the GPU over a fixed shape
 * suite (B·S = 16K tokens, model width 2048, bf16), timed with CUDA events around each run: the median
 * of many runs, inputs rotated over enough buffer sets to exceed the L2 cache, TFLOP/s over the
 * visible positions (fc_plan_flops; the backward counts 2.5× the forward).  The backward runs on the
 * output and statistics of one forward run per buffer set; its "-dq7" rows force the seven-product
 * path (FLASHC_CUDA_BWD=dq-recompute) and its "-sm90" rows the sm_90a kernel (FLASHC_CUDA_BWD=sm90)
 * beside the fused one.  The peer (PyTorch SDPA, flash and cuDNN) is timed on the
 * same shapes by bench/sdpa_peer.py in the same device call (tools/gpu-check.sh).
 *
 * The operands hold a fixed pattern (one exponent, a hashed mantissa, alternating signs) unless a
 * row says "-normal": standard normal values, what torch.randn gives the Python binding's bench and
 * the SDPA peer (a tensor core's power, and so the clock it holds, depends on the bits it
 * multiplies).  "-b2b" rows time runs back to back, several per event bracket, as a training step
 * queues them (the GPU never idles between runs), where the other rows time one run at a time.
 * "f32" rows take fp32 operands and output (the pattern's bf16 values with hashed low mantissa bits,
 * so that the low parts of 3×TF32 products are not zero), beside the bf16 row of the same shape.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "flashc.h"
#include "cuda.h"

typedef struct {
    const char *name;
    int S, D;
    bool causal, backward;
    const char *bwd_path; /* FLASHC_CUDA_BWD for the plan (NULL: the default) */
    bool normal;          /* standard normal operands (else the fixed pattern) */
    int b2b;              /* runs per timed bracket, back to back (0: one) */
    bool f32;             /* fp32 operands and output (else bf16) */
} cuda_shape;

enum { B2B = 20 }; /* as bench/flash_attn_binding.py's loop */

static const cuda_shape shapes[] = {
    {"fwd-bf16-d128-s4k", 4096, 128, false, false, NULL, false, 0, false},
    {"fwd-bf16-d128-s4k-causal", 4096, 128, true, false, NULL, false, 0, false},
    {"fwd-bf16-d64-s4k", 4096, 64, false, false, NULL, false, 0, false},
    {"fwd-bf16-d256-s4k", 4096, 256, false, false, NULL, false, 0, false},
    {"fwd-bf16-d128-s16k", 16384, 128, false, false, NULL, false, 0, false},
    {"fwd-bf16-d128-s1k", 1024, 128, false, false, NULL, false, 0, false},
    {"bwd-bf16-d128-s4k", 4096, 128, false, true, "auto", false, 0, false},
    {"bwd-bf16-d128-s4k-causal", 4096, 128, true, true, "auto", false, 0, false},
    {"bwd-bf16-d128-s4k-dq7", 4096, 128, false, true, "dq-recompute", false, 0, false},
    {"bwd-bf16-d128-s4k-causal-dq7", 4096, 128, true, true, "dq-recompute", false, 0, false},
    {"bwd-bf16-d128-s4k-sm90", 4096, 128, false, true, "sm90", false, 0, false},
    {"bwd-bf16-d128-s4k-causal-sm90", 4096, 128, true, true, "sm90", false, 0, false},
    {"bwd-bf16-d64-s4k", 4096, 64, false, true, "auto", false, 0, false},
    {"bwd-bf16-d64-s4k-dq7", 4096, 64, false, true, "dq-recompute", false, 0, false},
    {"bwd-bf16-d64-s4k-sm90", 4096, 64, false, true, "sm90", false, 0, false},
    {"fwd-bf16-d128-s4k-normal", 4096, 128, false, false, NULL, true, 0, false},
    {"fwd-bf16-d128-s4k-normal-b2b", 4096, 128, false, false, NULL, true, B2B, false},
    {"fwd-bf16-d128-s4k-causal-normal", 4096, 128, true, false, NULL, true, 0, false},
    {"fwd-bf16-d128-s4k-causal-normal-b2b", 4096, 128, true, false, NULL, true, B2B, false},
    {"fwd-f32-d128-s4k", 4096, 128, false, false, NULL, false, 0, true},
    {"fwd-f32-d128-s4k-causal", 4096, 128, true, false, NULL, false, 0, true},
    {"bwd-f32-d128-s4k", 4096, 128, false, true, "dq-recompute", false, 0, true},
    {"bwd-f32-d128-s4k-causal", 4096, 128, true, true, "dq-recompute", false, 0, true},
};

enum { NBUF = 8 }; /* q, k, v, out, then the backward's dout, dq, dk, dv */

/* The plan a timed run uses for buffer set buf: the forward's, or (backward) the backward's after
 * one forward run that writes its output and statistics; *ws: the backward's device workspace. */
static fc_status plan_shape(const cuda_shape *s, void *const buf[NBUF], float *stats, fc_plan **plan, void **ws)
{
    const int H = 2048 / s->D, B = 16384 / s->S;
    const fc_dtype dt = s->f32 ? FC_F32 : FC_BF16;
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = B, d.q_heads = d.kv_heads = H, d.head_dim = s->D, d.q_len = d.kv_len = s->S;
    d.q = fc_tensor_bsnd(buf[0], dt, H, s->S, s->D);
    d.k = fc_tensor_bsnd(buf[1], dt, H, s->S, s->D);
    d.v = fc_tensor_bsnd(buf[2], dt, H, s->S, s->D);
    d.out = fc_tensor_bsnd(buf[3], dt, H, s->S, s->D);
    if (s->causal)
        d.vis.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    fc_options opt = {.backend = FC_BACKEND_CUDA};
    if (!s->backward)
        return fc_plan_create(&d, &opt, plan);
    const size_t rows = (size_t)B * H * s->S;
    d.stats = (fc_stats){stats, stats + rows, FC_STATS_HEAD_MAJOR, 1};
    fc_status st = fc_attention(&d); /* the output and statistics the backward differentiates */
    fc_attention_grads g = {0};
    g.d_out = fc_tensor_bsnd(buf[4], dt, H, s->S, s->D);
    g.dq = fc_tensor_bsnd(buf[5], dt, H, s->S, s->D);
    g.dk = fc_tensor_bsnd(buf[6], dt, H, s->S, s->D);
    g.dv = fc_tensor_bsnd(buf[7], dt, H, s->S, s->D);
    const char *was = getenv("FLASHC_CUDA_BWD");
    char *keep = was ? strdup(was) : NULL;
    if (s->bwd_path)
        setenv("FLASHC_CUDA_BWD", s->bwd_path, 1);
    if (st == FC_OK)
        st = fc_plan_create_backward(&d, &g, &opt, plan); /* the path is chosen here */
    if (keep)
        setenv("FLASHC_CUDA_BWD", keep, 1);
    else
        unsetenv("FLASHC_CUDA_BWD");
    free(keep);
    size_t bytes = 0;
    if (st == FC_OK && fc_plan_workspace_size(*plan, &bytes) == FC_OK && bytes && cudaMalloc(ws, bytes) != cudaSuccess)
        st = FC_ERR_NO_MEMORY;
    return st;
}

/* bf16 bits of x, rounded to nearest even (x finite). */
static unsigned short bf16_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* Operand `which`'s values: the fixed pattern (bf16 in [−1, 1), every operand alike), or
 * standard normal values (Box–Muller over a xorshift generator seeded by `which`: operands that
 * differ, the same in every run), drawn for a prime period of elements and repeated (the host
 * time of a few rows stays small). */
static void fill_operand(unsigned short *x, size_t elems, bool normal, int which)
{
    if (!normal) {
        for (size_t i = 0; i < elems; i++)
            x[i] = (unsigned short)(0x3F80 - ((i * 2654435761u >> 7) & 0x7F) - ((i & 1) << 15));
        return;
    }
    const size_t period = elems < 999983 ? elems : 999983;
    uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(which + 1);
    for (size_t i = 0; i < period; i += 2) {
        float u[2];
        for (int t = 0; t < 2; t++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            u[t] = ((float)(s >> 40) + 0.5f) / 16777216.0f; /* (0, 1) */
        }
        const float r = sqrtf(-2.0f * logf(u[0])), a = 6.2831853f * u[1];
        x[i] = bf16_bits(r * cosf(a));
        if (i + 1 < period)
            x[i + 1] = bf16_bits(r * sinf(a));
    }
    for (size_t at = period; at < elems; at += period)
        memcpy(x + at, x, (elems - at < period ? elems - at : period) * sizeof *x);
}

/* The first elems bf16 values of x widened in place to fp32 with hashed low mantissa bits (x holds
 * room for elems fp32 values). */
static void widen_to_f32(unsigned short *x, size_t elems)
{
    for (size_t i = elems; i-- > 0;) {
        const uint32_t u = (uint32_t)x[i] << 16 | (uint32_t)((i * 2246822519u) >> 16 & 0xFFFFu);
        memcpy((char *)x + 4 * i, &u, 4);
    }
}

/* The buffer sets' plans, run in turn (bench_cuda_median_ms's callback): `per_call` runs per
 * timed call. */
typedef struct {
    const char *name;
    fc_plan **plan;
    void **ws;
    const size_t *ws_bytes;
    int sets, next, per_call;
} rotation;

static int run_next(void *ctx)
{
    rotation *r = ctx;
    for (int n = 0; n < r->per_call; n++) {
        const int k = r->next++ % r->sets;
        if (fc_plan_run(r->plan[k], NULL, r->ws[k], r->ws_bytes[k]) != FC_OK) {
            fprintf(stderr, "flashc-bench: %s: %s\n", r->name, fc_last_error());
            return 1;
        }
    }
    return 0;
}

/* Median milliseconds of `repeat` runs of the shape; flops of one run in *flops. */
static int time_shape(const cuda_shape *s, int repeat, float *ms, double *flops)
{
    const int H = 2048 / s->D, B = 16384 / s->S, sets = 3, nbuf = s->backward ? NBUF : 4;
    const size_t elems = (size_t)B * H * s->S * s->D, bytes = elems * (s->f32 ? 4 : 2), rows = (size_t)B * H * s->S;
    void *buf[3][NBUF] = {{0}}, *ws[3] = {0};
    float *stats[3] = {0};
    fc_plan *plan[3] = {0};
    size_t ws_bytes[3] = {0};
    int rc = 0;
    unsigned short *init = malloc(bytes);
    for (int t = 0; t < nbuf && init && rc == 0; t++) {
        if (t == 0 || s->normal) { /* the pattern once; normal operands each their own (every set alike) */
            fill_operand(init, elems, s->normal, t);
            if (s->f32)
                widen_to_f32(init, elems);
        }
        for (int k = 0; k < sets && rc == 0; k++)
            if (cudaMalloc(&buf[k][t], bytes) != cudaSuccess || cudaMemcpy(buf[k][t], init, bytes, cudaMemcpyHostToDevice))
                rc = 1;
    }
    for (int k = 0; k < sets && init && rc == 0; k++) {
        if (s->backward && cudaMalloc((void **)&stats[k], 2 * rows * sizeof(float)) != cudaSuccess)
            break;
        if (plan_shape(s, buf[k], stats[k], &plan[k], &ws[k]) != FC_OK) {
            fprintf(stderr, "flashc-bench: %s: %s\n", s->name, fc_last_error());
            rc = 1;
        }
        if (rc == 0)
            fc_plan_workspace_size(plan[k], &ws_bytes[k]);
    }
    if (!init || (rc == 0 && !plan[sets - 1]))
        rc = 1;
    if (rc == 0) {
        const int per_call = s->b2b > 1 ? s->b2b : 1;
        rotation rot = {s->name, plan, ws, ws_bytes, sets, 0, per_call};
        *ms = bench_cuda_median_ms(3, repeat, run_next, &rot);
        if (*ms > 0)
            *ms /= (float)per_call;
        rc = *ms < 0 || fc_plan_flops(plan[0], flops) != FC_OK;
    }
    for (int k = 0; k < sets; k++) {
        fc_plan_destroy(plan[k]);
        for (int x = 0; x < NBUF; x++)
            cudaFree(buf[k][x]);
        cudaFree(stats[k]);
        cudaFree(ws[k]);
    }
    free(init);
    return rc;
}

int bench_cuda_main(int argc, char **argv)
{
    const char *filter = NULL;
    int repeat = 30;
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--filter") == 0)
            filter = argv[i + 1];
        else if (strcmp(argv[i], "--repeat") == 0)
            repeat = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : repeat;
    }
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        fprintf(stderr, "flashc-bench: --backend cuda: no usable CUDA device\n");
        return 2;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    printf("# flashc-bench --backend cuda on %s (sm_%d%d), median of %d runs, CUDA events\n", prop.name, prop.major,
           prop.minor, repeat);
    printf("%-28s %10s %10s\n", "case", "ms", "TFLOP/s");
    int failures = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (filter && !strstr(shapes[i].name, filter))
            continue;
        float ms = 0;
        double flops = 0;
        if (time_shape(&shapes[i], repeat, &ms, &flops) != 0) {
            failures++;
            printf("%-28s %10s %10s\n", shapes[i].name, "failed", "-");
            continue;
        }
        printf("%-28s %10.3f %10.1f\n", shapes[i].name, ms, flops / (ms * 1e-3) / 1e12);
    }
    failures += bench_cuda_decode(filter, repeat);
    failures += bench_cuda_sparse(filter, repeat);
    return failures ? 1 : 0;
}
