/*
 * The CUDA decode against the CPU backend (gpu_case.h, storage forms in gpu_kv.h): named cases for
 * each feature of semantics §4 (GQA, per-batch lengths, paged caches in both layouts, tensor
 * lists, left padding, int8 key/value per channel and per tensor, int8 output, masks, pse, ALiBi,
 * sinks, statistics, a few query rows), the identities paged == contiguous, list == padded and
 * left padding == trimmed cache (bit for bit on the GPU), out-of-range block-table entries
 * (refused, that batch left unwritten), long caches over many splits, the tensor-core kernel's
 * bits for forced split counts, then a seeded sweep at odd sizes.  FLASHC_CUDA_DECODE=simt runs
 * everything on the CUDA-core kernel.
 * Usage: test_cuda_decode [sweep cases] [quick: skip the named cases].  Skips (77) without a GPU.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/check.h"
#include "common/rng.h"
#include "gpu_args.h"
#include "gpu_case.h"

static gc_case dec(int B, int Nq, int Nkv, int Skv, int D, fc_dtype dt)
{
    gc_case c = {.B = B, .Nq = Nq, .Nkv = Nkv, .Sq = 1, .Skv = Skv, .D = D, .Dv = D, .dt = dt, .layout = GC_BSND, .seed = 7};
    return c;
}

static void named_cases(void)
{
    const int dims[] = {64, 128, 256, 80};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 4; k++) {
            const fc_dtype dt = t ? FC_BF16 : FC_F16;
            gc_case c = dec(3, 8, 2, 1000, dims[k], dt);
            gc_run(&c);
            c.layout = GC_BNSD, c.varlen = true, c.stats = true;
            gc_run(&c);
            c.kv.page = 16, gc_run(&c);
            c.kv.heads_major = true, c.kv.page = 7, gc_run(&c);
            c.kv = (gc_kv){.i8 = true}, gc_run(&c);
            c.kv = (gc_kv){.i8 = true, .i8_offset = true, .page = 32}, gc_run(&c);
            c.kv = (gc_kv){.i8 = true, .i8_per_tensor = true, .list = true}, gc_run(&c);
            c.kv = (gc_kv){.left_pad = 13}, gc_run(&c);
            c.kv = (gc_kv){.out_i8 = true, .page = 64}, gc_run(&c);
        }
    gc_case c = dec(2, 32, 8, 3000, 128, FC_BF16); /* the benchmark's grouping */
    c.kv.page = 128, gc_run(&c);
    c = dec(2, 16, 1, 500, 128, FC_F16), gc_run(&c); /* MQA, 16 rows per kv head */
    c = dec(1, 64, 1, 300, 64, FC_BF16), gc_run(&c); /* 64 rows per kv head */
    c = dec(2, 8, 2, 777, 128, FC_F16), c.Sq = 4, c.window = GC_CAUSAL, c.align = FC_ALIGN_BOTTOM_RIGHT;
    gc_run(&c); /* a few query rows (speculative decoding) */
    c.varlen = true, c.kv.page = 16, c.stats = true, gc_run(&c);
    c = dec(2, 4, 2, 400, 128, FC_F16), c.mask = true, gc_run(&c);
    c = dec(2, 4, 2, 400, 128, FC_BF16), c.bias = true, c.stats = true, gc_run(&c);
    c = dec(2, 4, 2, 400, 128, FC_F16), c.alibi = true, c.sink = true, c.stats = true, gc_run(&c);
    c = dec(2, 4, 1, 400, 64, FC_F16), c.softcap = 8.0f, c.kv.page = 32, gc_run(&c);
    c = dec(3, 4, 2, 300, 64, FC_BF16), c.layout = GC_GAPS, gc_run(&c);        /* padded rows, aligned */
    c = dec(3, 4, 2, 300, 64, FC_BF16), c.layout = GC_ODD_STRIDES, gc_run(&c); /* element loads */
    c = dec(2, 4, 2, 200, 100, FC_F16), c.Dv = 72, c.kv.i8 = true, gc_run(&c); /* Dv ≠ Dqk, int8 element loads */
    c = dec(1, 8, 8, 40000, 128, FC_BF16), c.kv.page = 256, gc_run(&c);       /* many splits */
    c = dec(4, 8, 2, 5, 64, FC_F16), c.varlen = true, gc_run(&c);              /* caches shorter than a tile */
    /* the tensor-core kernel's forms: 16 rows (4 heads × Sq 4, MQA × 16), int8 (two-part q) at
     * D = 64 and 256 with an int8 output, left padding at D = 256, 9 rows of a paged int8 cache */
    c = dec(2, 8, 2, 3000, 128, FC_BF16), c.Sq = 4, c.window = GC_CAUSAL, c.align = FC_ALIGN_BOTTOM_RIGHT, c.kv.page = 256;
    c.stats = true, c.sink = true, gc_run(&c);
    c = dec(1, 16, 1, 2100, 64, FC_F16), c.kv = (gc_kv){.i8 = true, .i8_offset = true}, gc_run(&c);
    c = dec(2, 4, 2, 2500, 256, FC_BF16), c.kv = (gc_kv){.i8 = true, .i8_per_tensor = true, .out_i8 = true}, gc_run(&c);
    c = dec(2, 4, 1, 1500, 256, FC_F16), c.varlen = true, c.kv.left_pad = 5, gc_run(&c);
    c = dec(1, 9, 1, 1300, 128, FC_BF16), c.kv = (gc_kv){.i8 = true, .i8_offset = true, .page = 16, .left_pad = 0}, gc_run(&c);
    /* int8 values with offsets and a sink over few positions: the offset weighs the positions'
     * share alone (the sink's carries no value) */
    c = dec(2, 8, 2, 3, 128, FC_F16), c.kv = (gc_kv){.i8 = true, .i8_offset = true}, c.sink = true, c.stats = true, gc_run(&c);
    c = dec(2, 4, 2, 70, 64, FC_BF16), c.kv = (gc_kv){.i8 = true, .i8_offset = true, .page = 16}, c.sink = true, gc_run(&c);
    /* a NaN value at the last position, seen by the last speculative row only (the others stay
     * finite); NaN past each batch's length (no position) */
    c = dec(2, 8, 2, 1500, 128, FC_BF16), c.Sq = 4, c.window = GC_CAUSAL, c.align = FC_ALIGN_BOTTOM_RIGHT, c.nan_tail = true;
    gc_run(&c);
    c.varlen = true, c.pad_nan = true, c.dt = FC_F16, gc_run(&c);
    /* fp32 outputs of 16-bit and int8 caches at fp32's tolerance: P in bf16 (or fp16 beside int8
     * values) is too coarse there, so those take the CUDA-core kernel or the integer P·V */
    for (int t = 0; t < 3; t++) {
        c = dec(2, 8, 2, 1200, 128, t == 1 ? FC_BF16 : FC_F16), c.stats = true;
        c.kv = (gc_kv){.out_f32 = true, .i8 = t == 2, .i8_offset = t == 2, .page = t == 0 ? 0 : 64};
        gc_run(&c);
    }
}

/* out bitwise equal between two GPU runs of the same values in different storage. */
static void identity(const char *what, gc_case a, gc_case b)
{
    void *oa = NULL, *ob = NULL;
    size_t na = 0, nb = 0;
    gc_run_out(&a, &oa, &na);
    gc_run_out(&b, &ob, &nb);
    TC_CHECK(oa && ob && na == nb && memcmp(oa, ob, na) == 0, "identity %s: bit-identical GPU outputs", what);
    free(oa), free(ob);
}

static void identities(void)
{
    for (int t = 0; t < 2; t++) {
        gc_case c = dec(3, 8, 2, 2500, 128, t ? FC_BF16 : FC_F16);
        c.varlen = true, c.layout = GC_BNSD;
        gc_case p = c;
        p.kv.page = 16;
        identity("paged == contiguous", c, p);
        p.kv.heads_major = true, p.kv.page = 48;
        identity("paged (heads-major) == contiguous", c, p);
        gc_case l = c;
        l.kv.list = true;
        identity("list == padded tensor", c, l);
        gc_case z = c;
        z.kv.left_pad = 37;
        identity("left padding == trimmed cache", c, z);
        gc_case i = c;
        i.kv.i8 = true;
        gc_case ip = i;
        ip.kv.page = 64;
        identity("int8 paged == int8 contiguous", i, ip);
    }
}

/* The tensor-core decode cuts each row's range into blocks fixed by the problem: its bits must not
 * depend on the split count (FLASHC_CUDA_DECODE_SPLITS forces one).  The CUDA-core kernel's slices
 * follow its split count, so this holds for the tensor-core path only. */
static void split_counts(void)
{
    const char *mode = getenv("FLASHC_CUDA_DECODE"); /* the library's default may be either kernel */
    if (!mode || (strcmp(mode, "mma") != 0 && strcmp(mode, "auto") != 0))
        return;
    gc_case cs[3];
    cs[0] = dec(3, 8, 2, 9000, 128, FC_BF16), cs[0].varlen = true, cs[0].stats = true, cs[0].sink = true;
    cs[1] = dec(2, 16, 4, 7000, 128, FC_F16), cs[1].Sq = 4, cs[1].window = GC_CAUSAL, cs[1].align = FC_ALIGN_BOTTOM_RIGHT;
    cs[1].kv.page = 64;
    cs[2] = dec(2, 8, 2, 5000, 64, FC_BF16), cs[2].kv = (gc_kv){.i8 = true, .i8_offset = true, .page = 256};
    const char *forced[] = {"1", "3", "64"};
    for (int k = 0; k < 3; k++) {
        void *base = NULL;
        size_t nb = 0;
        gc_run_out(&cs[k], &base, &nb);
        for (int f = 0; f < 3; f++) {
            void *o = NULL;
            size_t no = 0;
            setenv("FLASHC_CUDA_DECODE_SPLITS", forced[f], 1);
            gc_run_out(&cs[k], &o, &no);
            unsetenv("FLASHC_CUDA_DECODE_SPLITS");
            TC_CHECK(base && o && nb == no && memcmp(base, o, nb) == 0, "case %d: %s splits give the bits of the planned count", k,
                     forced[f]);
            free(o);
        }
        free(base);
    }
}

static void bad_entries(void)
{
    gc_case c = dec(3, 8, 2, 1000, 128, FC_BF16);
    c.kv.page = 16, c.kv.bad_entry = true;
    gc_run(&c);
    c.kv.heads_major = true, c.kv.page = 5, c.varlen = true;
    gc_run(&c);
}

/* A paged problem of more query rows than the decode serves, with a feature the tiled forward
 * does not read pages with (generated dropout), is refused by name. */
static void refusal(void)
{
    enum { S = 128, E = 64, Q = 100 };
    void *buf = NULL, *table = NULL;
    cudaMalloc(&buf, (size_t)4 * S * E * 2 + 4096);
    cudaMalloc(&table, 64);
    cudaMemset(table, 0, 64);
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = d.kv_heads = 1, d.head_dim = E, d.q_len = Q, d.kv_len = S;
    d.q = fc_tensor_bnsd(buf, FC_BF16, 1, Q, E);
    d.out = fc_tensor_bnsd((char *)buf + (size_t)S * E * 2, FC_BF16, 1, Q, E);
    d.k = d.v = fc_tensor_bnsd((char *)buf + (size_t)2 * S * E * 2, FC_BF16, 1, S, E);
    d.kv.block_table = table, d.kv.table_stride = 1, d.kv.block_size = S, d.kv.num_blocks = 1;
    d.dropout = (fc_dropout){.keep_prob = 0.9, .generate = true};
    fc_options cuda = {.backend = FC_BACKEND_CUDA};
    fc_plan *plan = NULL;
    gc_expect_refusal(fc_plan_create(&d, &cuda, &plan), &plan, "dropout generated on the device"); /* paged, 100 query rows */
    cudaFree(buf), cudaFree(table);
}

static void sweep(unsigned seed, int cases)
{
    tc_rng r = tc_rng_seed(seed);
    const int dims[] = {64, 128, 256, 96, 40};
    for (int n = 0; n < cases; n++) {
        const int nkv = (int)tc_rng_int(&r, 1, 3), g = (int)tc_rng_int(&r, 1, 8);
        gc_case c = dec((int)tc_rng_int(&r, 1, 5), nkv * g, nkv, (int)tc_rng_int(&r, 1, 3000),
                        dims[tc_rng_int(&r, 0, 4)], tc_rng_bool(&r, 0.5) ? FC_BF16 : FC_F16);
        c.Sq = tc_rng_bool(&r, 0.2) ? (int)tc_rng_int(&r, 2, 4) : 1;
        c.Dv = tc_rng_bool(&r, 0.8) ? c.D : 64;
        c.layout = tc_rng_bool(&r, 0.5) ? GC_BSND : GC_BNSD, c.varlen = tc_rng_bool(&r, 0.5);
        if (c.Sq > 1)
            c.window = GC_CAUSAL, c.align = FC_ALIGN_BOTTOM_RIGHT;
        c.stats = tc_rng_bool(&r, 0.3), c.sink = tc_rng_bool(&r, 0.2);
        const int form = (int)tc_rng_int(&r, 0, 4);
        c.kv.page = form == 1 ? (int)tc_rng_int(&r, 1, 100) : 0;
        c.kv.heads_major = tc_rng_bool(&r, 0.5);
        c.kv.list = form == 2, c.kv.left_pad = form == 3 && c.Sq == 1 ? (int)tc_rng_int(&r, 1, 50) : 0;
        c.kv.i8 = tc_rng_bool(&r, 0.3), c.kv.i8_offset = tc_rng_bool(&r, 0.5), c.kv.i8_per_tensor = tc_rng_bool(&r, 0.3);
        c.kv.out_i8 = tc_rng_bool(&r, 0.15);
        if (!c.kv.left_pad)
            c.mask = tc_rng_bool(&r, 0.15), c.alibi = tc_rng_bool(&r, 0.15);
        c.seed = seed * 1000u + (unsigned)n;
        gc_run(&c);
    }
}

int main(int argc, char **argv)
{
    if (!gc_args_ok(argc, argv, "quick"))
        return 2;
    if (!gc_require_gpu("test_cuda_decode"))
        return TC_SKIP;
    const int cases = argc > 1 ? atoi(argv[1]) : 60;
    const bool quick = argc > 2 && strcmp(argv[2], "quick") == 0; /* under compute-sanitizer: no named cases */
    refusal();
    if (!quick)
        named_cases();
    identities();
    split_counts();
    bad_entries();
    sweep(20261126u, cases);
    return tc_summary("test_cuda_decode");
}
