/*
 * The CUDA forward against the CPU backend over the features the GPU covers (gpu_case.h): named
 * cases for each feature, then a seeded sweep that mixes them at odd sizes; plus the selection
 * rules (a host operand among device ones is FC_ERR_INVALID_ARG naming it; a feature the GPU
 * lacks is FC_ERR_BACKEND naming it).  The sm_90a kernel's own cases (long rows over many tiles,
 * NaN in the padding past each batch, every visibility form) and a sweep of what it takes run
 * in every mode; under FLASHC_CUDA_FWD=sm90 (which fails any plan or run the sm_90a kernel
 * does not take) only those, so that a pass proves that kernel ran them; under sm80 they check
 * the mma.sync kernel.  fp32 operands (the 3×TF32 kernels) get named cases and a sweep of their
 * own at fp32's tolerance, paged and tensor-list key/value (the paged feature kernels) theirs.
 * Skips (77) where no GPU is present.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/check.h"
#include "common/rng.h"
#include "gpu_args.h"
#include "gpu_case.h"

static gc_case base(int D, fc_dtype dt)
{
    gc_case c = {.B = 2, .Nq = 4, .Nkv = 2, .Sq = 77, .Skv = 93, .D = D, .Dv = D, .dt = dt, .layout = GC_BSND, .seed = 1};
    return c;
}

static void named_cases(void)
{
    const int dims[] = {64, 128, 256};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 3; k++)
            gc_layouts(base(dims[k], t ? FC_BF16 : FC_F16));
    gc_case c = base(128, FC_BF16);
    c.Dv = 64, gc_run(&c);               /* Dv ≠ Dqk */
    c.D = 80, c.Dv = 112, gc_run(&c);    /* head dims between the classes */
    c = base(64, FC_F16), c.packed = true, c.varlen = true, c.B = 5, c.window = GC_CAUSAL, c.stats = true, gc_run(&c);
    c = base(128, FC_BF16), c.varlen = true, c.B = 4, gc_run(&c); /* padded batches with padding rows */
    c = base(128, FC_F16), c.mask = true, gc_run(&c);
    c = base(128, FC_F16), c.bias = true, gc_run(&c);
    c.bias_before = true, gc_run(&c);
    c = base(128, FC_BF16), c.alibi = true, c.stats = true, c.q_start = 5000, c.kv_start = 4990, gc_run(&c);
    c = base(64, FC_F16), c.softcap = 5.0f, gc_run(&c);
    c = base(128, FC_F16), c.sink = true, c.stats = true, c.window = GC_CAUSAL, gc_run(&c);
    c = base(128, FC_BF16), c.dropout = true, c.stats = true, gc_run(&c);
    /* generated on the device: the CPU's bits */
    c = base(128, FC_BF16), c.philox = true, c.stats = true, gc_run(&c);
    c = base(64, FC_F16), c.philox = true, c.packed = c.varlen = true, c.B = 3, c.window = GC_CAUSAL, gc_run(&c);
    c = base(256, FC_BF16), c.philox = true, c.Sq = 130, c.Skv = 517, c.bias = true, gc_run(&c);
    c = base(256, FC_BF16), c.Sq = 1, c.Skv = 1000, gc_run(&c); /* decode-like */
    c = base(64, FC_F16), c.Sq = 700, c.Skv = 9, c.window = GC_BAND, gc_run(&c);
    /* a NaN value that only the last rows see (semantics §0.3: the others stay finite, though their
     * tile holds it: the kernel takes it out of P·V and adds it back to the rows that see it) */
    c = base(128, FC_BF16), c.Sq = 100, c.window = GC_CAUSAL, c.stats = true, c.nan_tail = true, gc_run(&c);
    c = base(256, FC_F16), c.Sq = 100, c.window = GC_CAUSAL, c.mask = true, c.nan_tail = true, gc_run(&c);
}

/* fp32 operands and output: every class in the four layouts, then the features. */
static void f32_cases(void)
{
    const int dims[] = {64, 128, 256};
    for (int k = 0; k < 3; k++)
        gc_layouts(base(dims[k], FC_F32));
    gc_case c = base(128, FC_F32);
    c.Dv = 64, gc_run(&c);
    c.D = 36, c.Dv = 100, gc_run(&c); /* head dims between the classes, element loads past 4-feature chunks */
    c = base(64, FC_F32), c.packed = true, c.varlen = true, c.B = 5, c.window = GC_CAUSAL, c.stats = true, gc_run(&c);
    c = base(128, FC_F32), c.varlen = true, c.pad_nan = true, c.B = 4, gc_run(&c);
    c = base(128, FC_F32), c.mask = true, c.bias = true, c.softcap = 5.0f, gc_run(&c);
    c = base(256, FC_F32), c.alibi = true, c.sink = true, c.dropout = true, c.stats = true, gc_run(&c);
    c = base(128, FC_F32), c.philox = true, c.stats = true, c.window = GC_CAUSAL, gc_run(&c); /* generated: the CPU's bits */
    c = base(64, FC_F32), c.philox = true, c.varlen = true, c.B = 3, gc_run(&c);
    c = base(128, FC_F32), c.B = 1, c.Nq = 2, c.Nkv = 1, c.Sq = 1000, c.Skv = 1500, c.window = GC_CAUSAL, gc_run(&c);
    c = base(64, FC_F32), c.Sq = 700, c.Skv = 9, c.window = GC_BAND, gc_run(&c);
    c = base(64, FC_F32), c.Sq = 100, c.window = GC_CAUSAL, c.nan_tail = true, gc_run(&c); /* as in named_cases */
    for (int k = 0; k < 3; k++) /* finite values near FLT_MAX (tf32_split's clamped hi) */
        c = base(dims[k], FC_F32), c.near_max = true, gc_run(&c);
}

/* Paged and tensor-list key/value in the tiled forward (more query rows than the decode serves):
 * every class and dtype in blocks of 16, head-major blocks of 7, a list; then the features, block
 * sizes from 1 to past the kv length, and an out-of-range entry (reported by the next run, the
 * faulty run writes nothing). */
static void paged_cases(void)
{
    const int dims[] = {64, 128, 256};
    const fc_dtype dts[] = {FC_F16, FC_BF16, FC_F32};
    for (int t = 0; t < 3; t++)
        for (int k = 0; k < 3; k++) {
            gc_case c = base(dims[k], dts[t]);
            c.kv.page = 16, gc_run(&c);
            c.kv.heads_major = true, c.kv.page = 7, c.window = GC_CAUSAL, c.stats = true, gc_run(&c);
            c.kv = (gc_kv){.list = true}, c.layout = GC_BNSD, gc_run(&c);
        }
    gc_case c = base(128, FC_BF16);
    c.varlen = true, c.B = 4, c.kv.page = 1, c.window = GC_BAND, gc_run(&c);
    c = base(64, FC_F16), c.kv.page = 256, c.Sq = 300, c.Skv = 100, c.align = FC_ALIGN_BOTTOM_RIGHT, c.window = GC_CAUSAL, gc_run(&c);
    c = base(128, FC_F16), c.kv.page = 64, c.mask = true, c.bias = true, c.softcap = 5.0f, c.sink = true, gc_run(&c);
    c = base(256, FC_BF16), c.kv.page = 48, c.alibi = true, c.dropout = true, c.stats = true, c.Dv = 200, gc_run(&c);
    c = base(64, FC_BF16), c.kv.page = 32, c.layout = GC_ODD_STRIDES, c.Nkv = 1, gc_run(&c);
    c = base(128, FC_F32), c.kv.page = 5, c.varlen = true, c.B = 3, c.window = GC_CAUSAL, gc_run(&c);
    c = base(128, FC_BF16), c.B = 1, c.Nq = 8, c.Nkv = 1, c.Sq = 2000, c.Skv = 3000, c.kv.page = 256, c.window = GC_CAUSAL;
    c.align = FC_ALIGN_BOTTOM_RIGHT, gc_run(&c); /* prefill into a long cache */
    c = base(128, FC_F16), c.kv.page = 16, c.kv.bad_entry = true, gc_run(&c);
    c = base(64, FC_F32), c.kv.page = 5, c.kv.heads_major = true, c.varlen = true, c.kv.bad_entry = true, gc_run(&c);
}

/* `cases` random paged or tensor-list cases mixing the features at odd sizes. */
static void paged_sweep(unsigned seed, int cases)
{
    tc_rng r = tc_rng_seed(seed);
    const fc_dtype dts[] = {FC_F16, FC_BF16, FC_F32};
    for (int n = 0; n < cases; n++) {
        gc_case c = base(8 * (int)tc_rng_int(&r, 1, 32), dts[tc_rng_int(&r, 0, 2)]);
        c.Dv = tc_rng_bool(&r, 0.7) ? c.D : 8 * (int)tc_rng_int(&r, 1, 32);
        c.Nkv = (int)tc_rng_int(&r, 1, 3), c.Nq = c.Nkv * (int)tc_rng_int(&r, 1, 4), c.B = (int)tc_rng_int(&r, 1, 4);
        c.Sq = (int)tc_rng_int(&r, 1, 400), c.Skv = (int)tc_rng_int(&r, 1, 700);
        c.layout = tc_rng_bool(&r, 0.5) ? GC_BSND : GC_BNSD, c.varlen = tc_rng_bool(&r, 0.5);
        c.window = (gc_window)tc_rng_int(&r, 0, 3), c.align = tc_rng_bool(&r, 0.5) ? FC_ALIGN_BOTTOM_RIGHT : FC_ALIGN_TOP_LEFT;
        c.stats = tc_rng_bool(&r, 0.5), c.sink = tc_rng_bool(&r, 0.2), c.mask = tc_rng_bool(&r, 0.15);
        if (tc_rng_bool(&r, 0.2))
            c.kv.list = true;
        else
            c.kv.page = (int)tc_rng_int(&r, 1, 300), c.kv.heads_major = tc_rng_bool(&r, 0.5);
        c.seed = seed * 1000u + (unsigned)n;
        gc_run(&c);
    }
}

/* A host output among device operands, and a feature the GPU lacks (an fp32 output of bf16 operands). */
static void selection(void)
{
    enum { S = 16, E = 64 };
    void *dq = NULL;
    cudaMalloc(&dq, S * E * 2);
    static uint16_t host_out[S * E];
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = d.kv_heads = 1, d.head_dim = E, d.q_len = d.kv_len = S;
    d.q = fc_tensor_bnsd(dq, FC_BF16, 1, S, E), d.k = d.v = d.q;
    d.out = fc_tensor_bnsd(host_out, FC_BF16, 1, S, E);
    fc_plan *plan = NULL;
    fc_status st = fc_plan_create(&d, NULL, &plan);
    TC_CHECK(st == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "out"), "mixed memory: %s (%s)", fc_status_name(st),
             fc_last_error());
    fc_plan_destroy(plan);
    plan = NULL;
    fc_options cuda = {.backend = FC_BACKEND_CUDA};
    d.out.data = dq;
    d.out.dtype = FC_F32; /* fp32 output of bf16 operands */
    gc_expect_refusal(fc_plan_create(&d, &cuda, &plan), &plan, "output dtype");
    cudaFree(dq);
}

static bool sm90_only(void)
{
    const char *m = getenv("FLASHC_CUDA_FWD");
    return m && strcmp(m, "sm90") == 0;
}

/* A FLASHC_CUDA_FWD (or FLASHC_CUDA_FWD_D64, FLASHC_CUDA_FWD_EPILOGUE) naming no kernel is refused like the other CUDA
 * switches: FC_ERR_BACKEND naming it. */
static void bad_mode(void)
{
    enum { S = 16, E = 64 };
    void *buf = NULL;
    cudaMalloc(&buf, 2 * S * E * 2);
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = d.kv_heads = 1, d.head_dim = E, d.q_len = d.kv_len = S;
    d.q = fc_tensor_bnsd(buf, FC_BF16, 1, S, E), d.k = d.v = d.q;
    d.out = fc_tensor_bnsd((char *)buf + S * E * 2, FC_BF16, 1, S, E);
    fc_options cuda = {.backend = FC_BACKEND_CUDA};
    fc_plan *plan = NULL;
    char *old = gc_env_swap("FLASHC_CUDA_FWD", "sm70");
    gc_expect_refusal(fc_plan_create(&d, &cuda, &plan), &plan, "FLASHC_CUDA_FWD=sm70");
    gc_env_restore("FLASHC_CUDA_FWD", old);
    if (sm90_only()) { /* read where the sm_90a kernel plans (class 64 here) */
        old = gc_env_swap("FLASHC_CUDA_FWD_D64", "wg4");
        gc_expect_refusal(fc_plan_create(&d, &cuda, &plan), &plan, "FLASHC_CUDA_FWD_D64=wg4");
        gc_env_restore("FLASHC_CUDA_FWD_D64", old);
        old = gc_env_swap("FLASHC_CUDA_FWD_EPILOGUE", "smem");
        gc_expect_refusal(fc_plan_create(&d, &cuda, &plan), &plan, "FLASHC_CUDA_FWD_EPILOGUE=smem");
        gc_env_restore("FLASHC_CUDA_FWD_EPILOGUE", old);
    }
    cudaFree(buf);
}

/* Cases for the sm_90a kernel: several 128-row items and kv tiles per row, the V edge past a
 * batch's last key (packed: the next batch's rows; padded: NaN padding), every head-dim class;
 * paged key/value. */
static void sm90_cases(void)
{
    const int dims[] = {64, 128, 256};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 3; k++)
            gc_sm90_class_cases(base(dims[k], t ? FC_BF16 : FC_F16), 1000, 1500);
    gc_case c = base(128, FC_BF16);
    c.B = 1, c.Nq = c.Nkv = 1, c.Sq = 4096, c.Skv = 4096, c.window = GC_CAUSAL, c.stats = true;
    gc_run(&c); /* one long causal row of items: the persistent schedule's heaviest-first order */
    c.window = GC_PREFIX, c.Sq = 700, c.Skv = 900;
    gc_run(&c); /* rows with a prefix gap: every tile masked */
    c = base(128, FC_F16), c.Dv = 64, c.Sq = 300, c.Skv = 300, gc_run(&c);
    c = base(64, FC_BF16), c.D = 40, c.Dv = 200, gc_run(&c); /* D class 256 from Dv */
    for (int k = 0; k < 3; k++) { /* a NaN value only the last rows see (the edge fixer's poison table) */
        c = base(dims[k], FC_F16), c.Sq = 300, c.Skv = 200, c.window = GC_CAUSAL, c.stats = true, c.nan_tail = true;
        gc_run(&c);
    }
    /* paged key/value (the _paged kernels, classes 64 and 128, blocks of a multiple of 16 rows):
     * eight copies per key tile (16), pages starting inside tiles (48), a page over two tiles (256);
     * GQA, varlen, causal / band / prefix, lengths off the tile and the page; an out-of-range entry */
    c = base(64, FC_F16), c.kv.page = 16, c.Nq = 8, c.Sq = 300, c.Skv = 1000, c.window = GC_CAUSAL;
    c.align = FC_ALIGN_BOTTOM_RIGHT, c.stats = true, gc_run(&c);
    c = base(128, FC_BF16), c.kv.page = 48, c.kv.heads_major = true, c.varlen = true, c.B = 4, gc_run(&c);
    c = base(128, FC_F16), c.kv.page = 256, c.Sq = 700, c.Skv = 900, c.window = GC_BAND, gc_run(&c);
    c = base(64, FC_BF16), c.kv.page = 64, c.Nkv = 1, c.Sq = 500, c.Skv = 777, c.window = GC_PREFIX, gc_run(&c);
    c = base(128, FC_F16), c.kv.page = 16, c.kv.bad_entry = true, gc_run(&c);
}

static int plain_cases = 60;
static bool sweep_only; /* argv[2] "sweep": the plain sweep alone (short runs under the sanitizers) */
static bool paged_only; /* argv[2] "paged": the paged and tensor-list cases and sweep alone */

static void checks(void)
{
    if (paged_only) {
        paged_cases();
        paged_sweep(20261130u, plain_cases);
        return;
    }
    bad_mode();
    if (!sm90_only()) {
        selection();
        named_cases();
        f32_cases();
        gc_sweep_f32(20261129u, plain_cases / 2, false);
        if (!sweep_only)
            paged_cases();
        paged_sweep(20261130u, plain_cases / 2);
    }
    if (!sweep_only)
        sm90_cases();
    gc_sweep_plain(20261128u, plain_cases);
}

/* test_cuda_forward [cases [sweep | paged]]: cases sizes the sweeps (default 60) */
int main(int argc, char **argv)
{
    if (!gc_args_ok(argc, argv, "sweep paged"))
        return 2;
    if (argc > 1)
        plain_cases = atoi(argv[1]);
    sweep_only = argc > 2 && strcmp(argv[2], "sweep") == 0;
    paged_only = argc > 2 && strcmp(argv[2], "paged") == 0;
    /* under sm90 the general sweep's features would be refused by name: the plain sweep only; paged:
     * no general sweep */
    char *none[] = {argv[0], "0", NULL};
    const bool own = sm90_only() || paged_only;
    return gc_main("test_cuda_forward", own ? 2 : argc, own ? none : argv, checks, 20261126u, false);
}
