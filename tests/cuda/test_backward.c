/*
 * The CUDA backward against the CPU backward over the features the GPU covers (gpu_case.h in
 * backward mode): named cases for each feature and layout, then a seeded sweep that mixes them at
 * odd sizes; every case checks poisoned gradients and two bitwise-equal GPU runs; then the fp32
 * products (fp32 operands, fp32 gradients of fp16/bf16: named cases and a sweep).  Plus the
 * refusals: a feature the GPU lacks is FC_ERR_BACKEND naming it; and the fused path's dQ order:
 * the same bits on any grid, and a grid larger than the GPU holds at once.  Runs the path the
 * environment picks (FLASHC_CUDA_BWD: fused, auto or dq-recompute — the library default: the fused
 * kernel passes on a GPU but is slower today; tools/gpu-check.sh runs both).  Under
 * FLASHC_CUDA_BWD=sm90 (which fails any plan the sm_90a kernel cannot take) it runs the cases of
 * what that kernel covers instead: its own named cases, a plain sweep and the grid checks without
 * dropout.  Skips (77) without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/check.h"
#include "gpu_args.h"
#include "gpu_case.h"

static gc_case base(int D, fc_dtype dt)
{
    gc_case c = {.B = 2, .Nq = 4, .Nkv = 2, .Sq = 77, .Skv = 93, .D = D, .Dv = D, .dt = dt, .layout = GC_BSND,
                 .backward = true, .seed = 7};
    return c;
}

static void named_cases(void)
{
    const int dims[] = {64, 128, 256};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 3; k++)
            gc_layouts(base(dims[k], t ? FC_BF16 : FC_F16));
    gc_case c = base(128, FC_BF16);
    c.Dv = 64, gc_run(&c);                /* Dv ≠ Dqk */
    c.D = 80, c.Dv = 112, gc_run(&c);     /* head dims between the classes */
    c.D = 192, c.Dv = 128, gc_run(&c);    /* the 256 class with two feature parts, Dv ≤ one part */
    c = base(64, FC_F16), c.packed = true, c.varlen = true, c.B = 5, c.window = GC_CAUSAL, gc_run(&c);
    c = base(128, FC_BF16), c.varlen = true, c.B = 4, gc_run(&c); /* padded batches with padding rows */
    c = base(128, FC_F16), c.mask = true, gc_run(&c);
    c = base(128, FC_F16), c.bias = true, gc_run(&c);
    c.bias_before = true, gc_run(&c);
    c = base(128, FC_BF16), c.alibi = true, c.q_start = 5000, c.kv_start = 4990, gc_run(&c);
    c = base(64, FC_F16), c.softcap = 5.0f, gc_run(&c);
    c = base(128, FC_F16), c.sink = true, c.window = GC_CAUSAL, gc_run(&c);
    c = base(128, FC_BF16), c.dropout = true, gc_run(&c);
    /* generated on the device: the CPU's bits */
    c = base(128, FC_BF16), c.philox = true, gc_run(&c);
    c = base(64, FC_F16), c.philox = true, c.packed = c.varlen = true, c.B = 3, c.window = GC_CAUSAL, gc_run(&c);
    c = base(256, FC_F16), c.philox = true, c.Nq = 4, c.Nkv = 1, c.Sq = 150, c.Skv = 301, gc_run(&c);
    c = base(128, FC_BF16), c.Nq = 8, c.Nkv = 1, c.Sq = 300, c.Skv = 260, c.window = GC_CAUSAL, gc_run(&c); /* G = 8 */
    c = base(256, FC_BF16), c.Sq = 1, c.Skv = 1000, gc_run(&c); /* decode-like */
    c = base(64, FC_F16), c.Sq = 700, c.Skv = 9, c.window = GC_BAND, gc_run(&c);
}

/* fp32 products (the kFeatF32 kernels, dq-recompute; under FLASHC_CUDA_BWD=fused every case checks
 * the refusal instead): fp32 operands in every class and layout, fp32 gradients of fp16 / bf16
 * operands, then the features. */
static void f32_cases(void)
{
    const int dims[] = {64, 128, 256};
    for (int k = 0; k < 3; k++)
        gc_layouts(base(dims[k], FC_F32));
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 3; k++) {
            gc_case c = base(dims[k], t ? FC_BF16 : FC_F16);
            c.grad_f32 = true, gc_run(&c);
        }
    gc_case c = base(128, FC_F32);
    c.Dv = 64, gc_run(&c);
    c.D = 36, c.Dv = 100, gc_run(&c); /* head dims between the classes, element loads past 4-feature chunks */
    c.D = 192, c.Dv = 128, gc_run(&c); /* the 256 class with two feature parts */
    c = base(64, FC_F32), c.packed = true, c.varlen = true, c.B = 5, c.window = GC_CAUSAL, gc_run(&c);
    c = base(128, FC_BF16), c.grad_f32 = true, c.varlen = true, c.pad_nan = true, c.B = 4, gc_run(&c);
    c = base(128, FC_F32), c.mask = true, c.bias = true, c.softcap = 5.0f, gc_run(&c);
    c = base(256, FC_F32), c.alibi = true, c.sink = true, c.dropout = true, c.stats = true, gc_run(&c);
    c = base(128, FC_F32), c.philox = true, c.window = GC_CAUSAL, gc_run(&c); /* generated dropout: the CPU's bits */
    c = base(64, FC_F16), c.grad_f32 = true, c.philox = true, c.sink = true, gc_run(&c);
    c = base(128, FC_F32), c.Nq = 8, c.Nkv = 1, c.Sq = 300, c.Skv = 260, c.window = GC_CAUSAL, gc_run(&c); /* G = 8 */
    c = base(64, FC_F32), c.Sq = 700, c.Skv = 9, c.window = GC_BAND, gc_run(&c);
}

static bool sm90_only(void)
{
    const char *m = getenv("FLASHC_CUDA_BWD");
    return m && strcmp(m, "sm90") == 0;
}

/* Non-finite operands at pairs some rows of their tiles do not see (causal, a mask): a NaN key at
 * each batch's last position (the other rows of its query tiles keep finite dQ: the dq-recompute
 * path's dQ kernel keeps it out, the fused and sm_90a paths' dQ is mended afterwards), and a NaN
 * query at each batch's first row and an +inf d_out at its second (the keys they do not see keep
 * finite dK and dV: mended afterwards on every path, backward_fixup.cuh). */
static void nan_key_cases(void)
{
    const bool sm90 = sm90_only(); /* (the sm_90a kernel takes no mask tensor or fp32) */
    gc_case c = base(128, FC_BF16);
    c.Sq = c.Skv = 100, c.window = GC_CAUSAL, c.nan_key_tail = true, gc_run(&c);
    c.nan_key_tail = false, c.nan_query_head = true, gc_run(&c);
    c = base(64, FC_F16), c.Sq = 300, c.Skv = 260, c.window = GC_CAUSAL, c.nan_key_tail = c.nan_query_head = true, gc_run(&c);
    if (sm90)
        return;
    c = base(64, FC_F16), c.mask = true, c.nan_key_tail = true, gc_run(&c);
    c.nan_key_tail = false, c.nan_query_head = true, gc_run(&c);
    c = base(128, FC_F32), c.Sq = 90, c.Skv = 120, c.window = GC_CAUSAL, c.align = FC_ALIGN_BOTTOM_RIGHT, c.nan_key_tail = true;
    gc_run(&c);
    c.nan_query_head = true, gc_run(&c);
}

/* Cases for the sm_90a kernel: several 128-key units and 64-row query tiles per unit, the edges
 * past a batch's last key and query (packed: the next batch's rows; padded: NaN padding), both
 * head-dim classes, GQA, every visibility form and both statistics orders. */
static void sm90_cases(void)
{
    const int dims[] = {64, 128};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 2; k++)
            gc_sm90_class_cases(base(dims[k], t ? FC_BF16 : FC_F16), 700, 900);
    gc_case c = base(128, FC_BF16);
    c.B = 1, c.Nq = c.Nkv = 1, c.Sq = 2048, c.Skv = 2048, c.window = GC_CAUSAL, c.stats = true;
    gc_run(&c); /* one long causal chain of turns */
    c.window = GC_PREFIX, c.Sq = 700, c.Skv = 900;
    gc_run(&c); /* rows with a prefix gap: every tile masked; prefix tiles see every row */
    c = base(128, FC_F16), c.Dv = 64, c.Sq = 300, c.Skv = 300, gc_run(&c);
    c = base(64, FC_BF16), c.Nq = 8, c.Nkv = 1, c.Sq = 300, c.Skv = 260, c.window = GC_CAUSAL, gc_run(&c); /* G = 8 */
    c = base(128, FC_BF16), c.Sq = 1, c.Skv = 1000, gc_run(&c);
    c = base(64, FC_F16), c.Sq = 700, c.Skv = 9, c.window = GC_BAND, gc_run(&c);
}

/* The fused path adds each query tile's dQ partials in kv order, whatever the schedule: capping
 * the grid (FLASHC_CUDA_BWD_GRID: one CTA claims every unit in turn; a few wait on each other),
 * and the unit order and turn protocol variants (FLASHC_CUDA_BWD_ORDER, FLASHC_CUDA_BWD_SYNC),
 * leave every gradient bit where the default grid (one CTA per unit) put it.  Then problems with
 * far more units than the GPU holds at once, so that units wait on earlier ones that had to
 * finish first (dq_order.h's argument; a deadlock would trap after 10 s).  Under
 * FLASHC_CUDA_BWD=dq-recompute the cap changes nothing and the checks hold as well. */
static void grids(void)
{
    gc_case c = base(128, FC_BF16);
    c.B = 3, c.Nq = 8, c.Nkv = 2, c.Sq = 300, c.Skv = 333, c.varlen = true, c.window = GC_PREFIX, c.dropout = !sm90_only();
    void *ref = NULL, *got = NULL;
    size_t n_ref = 0, n = 0;
    gc_run_out(&c, &ref, &n_ref);
    static const char *const names[] = {"FLASHC_CUDA_BWD_GRID", "FLASHC_CUDA_BWD_ORDER", "FLASHC_CUDA_BWD_SYNC"};
    static const char *const runs[][3] = {{"1", NULL, NULL},     {"3", NULL, NULL},     {"29", NULL, NULL},
                                          {"7", "spread", NULL}, {NULL, NULL, "lean"},  {"5", "spread", "lean"},
                                          {NULL, "batch", "fence"}};
    for (int k = 0; k < (int)(sizeof runs / sizeof runs[0]) && ref; k++) {
        char *old[3];
        for (int e = 0; e < 3; e++)
            old[e] = runs[k][e] ? gc_env_swap(names[e], runs[k][e]) : NULL;
        gc_run_out(&c, &got, &n);
        for (int e = 0; e < 3; e++)
            if (runs[k][e])
                gc_env_restore(names[e], old[e]);
        TC_CHECK(got && n == n_ref && memcmp(got, ref, n) == 0,
                 "FLASHC_CUDA_BWD_GRID=%s ORDER=%s SYNC=%s gives the default run's gradients bit for bit", runs[k][0] ? runs[k][0] : "-",
                 runs[k][1] ? runs[k][1] : "-", runs[k][2] ? runs[k][2] : "-");
        free(got);
    }
    TC_CHECK(ref != NULL, "the grid check's reference run");
    free(ref);
    c = base(128, FC_BF16); /* 2 × 16 × 32 = 1024 units: about 4 waves of an H100 */
    c.B = 2, c.Nq = c.Nkv = 16, c.Sq = c.Skv = 2048, c.window = GC_CAUSAL, gc_run(&c);
    c = base(64, FC_F16); /* 1 × 4 kv heads × 96 kv tiles, G = 2, full visibility: long turn chains */
    c.B = 1, c.Nq = 8, c.Nkv = 4, c.Sq = 1500, c.Skv = 6100, c.layout = GC_BNSD, gc_run(&c);
}

/* Features the GPU backward lacks are refused at planning, by name. */
static void refusals(void)
{
    enum { S = 16, E = 64 };
    void *buf = NULL;
    cudaMalloc(&buf, 4 * S * E * 4);
    char *base_ptr = (char *)buf;
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = d.kv_heads = 1, d.head_dim = E, d.q_len = d.kv_len = S;
    d.q = fc_tensor_bnsd(base_ptr, FC_BF16, 1, S, E), d.k = d.v = d.q;
    d.out = fc_tensor_bnsd(base_ptr + S * E * 4, FC_BF16, 1, S, E);
    float *stats = (float *)(base_ptr + 2 * S * E * 4);
    d.stats = (fc_stats){stats, stats + S * 8, FC_STATS_HEAD_MAJOR, 8};
    fc_attention_grads g = {0};
    g.d_out = d.out, g.dq = g.dk = g.dv = fc_tensor_bnsd(base_ptr + 3 * S * E * 4, FC_BF16, 1, S, E);
    fc_options cuda = {.backend = FC_BACKEND_CUDA};
    fc_plan *plan = NULL;
    char *old = gc_env_swap("FLASHC_CUDA_BWD", "seven");
    gc_expect_refusal(fc_plan_create_backward(&d, &g, &cuda, &plan), &plan, "FLASHC_CUDA_BWD=seven");
    gc_env_restore("FLASHC_CUDA_BWD", old);
    static const char *const bad_env[][2] = {{"FLASHC_CUDA_BWD_GRID", "0"}, {"FLASHC_CUDA_BWD_ORDER", "random"},
                                             {"FLASHC_CUDA_BWD_SYNC", "none"}};
    for (int k = 0; k < 3; k++) {
        old = gc_env_swap(bad_env[k][0], bad_env[k][1]);
        gc_expect_refusal(fc_plan_create_backward(&d, &g, &cuda, &plan), &plan, bad_env[k][0]);
        gc_env_restore(bad_env[k][0], old);
    }
    d.softcap = 5.0f; /* what the sm_90a backward does not take, named under FLASHC_CUDA_BWD=sm90 */
    old = gc_env_swap("FLASHC_CUDA_BWD", "sm90");
    gc_expect_refusal(fc_plan_create_backward(&d, &g, &cuda, &plan), &plan, "FLASHC_CUDA_BWD=sm90");
    gc_env_restore("FLASHC_CUDA_BWD", old);
    d.softcap = 0.0f;
    g.dq.dtype = g.dk.dtype = g.dv.dtype = FC_F32; /* fp32 products: not on the fused kernel */
    old = gc_env_swap("FLASHC_CUDA_BWD", "fused");
    gc_expect_refusal(fc_plan_create_backward(&d, &g, &cuda, &plan), &plan, "no fp32 products");
    gc_env_restore("FLASHC_CUDA_BWD", old);
    g.dq.dtype = FC_F16; /* a gradient in neither the operands' dtype nor fp32 */
    gc_expect_refusal(fc_plan_create_backward(&d, &g, &cuda, &plan), &plan, "gradient dtypes other than the operands' or fp32");
    g.dq.dtype = g.dk.dtype = g.dv.dtype = FC_BF16;
    int32_t *table = (int32_t *)(base_ptr + 2 * S * E * 4 + 2 * S * 8 * 4); /* one block of S positions: entry 0 */
    cudaMemset(table, 0, sizeof *table);
    d.kv.block_table = table, d.kv.table_stride = 1, d.kv.block_size = S, d.kv.num_blocks = 1;
    gc_expect_refusal(fc_plan_create_backward(&d, &g, &cuda, &plan), &plan, "paged or tensor-list key/value in the backward");
    cudaFree(buf);
}

static int plain_cases = 60;

static void checks(void)
{
    refusals();
    nan_key_cases();
    if (sm90_only()) {
        sm90_cases();
        gc_sweep_plain_backward(20261129u, plain_cases);
    } else {
        named_cases();
        f32_cases();
        gc_sweep_f32(20261130u, plain_cases / 3, true);
    }
    grids();
}

/* test_cuda_backward [cases]: cases sizes the sweep (default 60) */
int main(int argc, char **argv)
{
    if (!gc_args_ok(argc, argv, ""))
        return 2;
    if (argc > 1)
        plain_cases = atoi(argv[1]);
    /* under sm90 the general sweep's features would be refused by name: the plain sweep only */
    char *none[] = {argv[0], "0", NULL};
    return gc_main("test_cuda_backward", sm90_only() ? 2 : argc, sm90_only() ? none : argv, checks, 20261127u, true);
}
