/*
 * aclnnSparseFlashAttention against tests/reference (semantics §5.2–§5.4, §8.12, §8.13): every
 * layout pair (BSND, TND, PA_BSND key), per-batch and cumulative lengths as INT32 / INT64 device
 * tensors, INT32 / INT64 indices with −1 padding, duplicates and blocks past the end, block sizes
 * 1..128 and beyond powers of two, sparseMode 0 and 3, rope, Dv ≠ D, GQA (N2 = 1 and N2 > 1),
 * FLOAT16 and BFLOAT16, strided views (also strided statistics), returnSoftmaxLse false,
 * attentionMode 2; the identities of §9 f (every block once in mode 0 = dense attention, mode 3 =
 * right-down causal attention, permuted lists the same); a seeded sweep.
 */
#include <stdio.h>

#include "common/rng.h"
#include "sfa_harness.h"

static void run(const char *name, const sfa_case *c) { sfa_run_case(name, c); }

static void layouts(void)
{
    sfa_case c = sfa_case_default();
    run("BSND/BSND, no lengths", &c);
    c.lens_q = c.lens_kv = true, c.S1 = 7, c.S2 = 24, c.len64 = true, c.idx64 = true;
    run("BSND/BSND, per-batch lengths (INT64) below the padded sizes, INT64 indices", &c);
    c = sfa_case_default();
    c.lq = c.lkv = "TND", c.B = 3;
    c.s1[0] = 3, c.s1[1] = 0, c.s1[2] = 4, c.s2[0] = 10, c.s2[1] = 5, c.s2[2] = 0;
    run("TND/TND with zero-length batches on both sides (INT32 lengths)", &c);
    c.len64 = true, c.idx64 = true;
    run("TND/TND, INT64 lengths and indices", &c);
    c = sfa_case_default();
    c.lq = "TND", c.lkv = "BSND", c.S2 = 22;
    run("TND query, BSND key", &c);
    c = sfa_case_default();
    c.lq = "BSND", c.lkv = "TND", c.lens_q = true, c.S1 = 6;
    run("BSND query (per-batch lengths), TND key", &c);
    for (int page = 1; page <= 16; page *= 4) {
        c = sfa_case_default();
        c.lkv = "PA_BSND", c.page = page;
        char name[96];
        snprintf(name, sizeof name, "BSND query, PA_BSND key, blockSize %d, permuted physical blocks", page);
        run(name, &c);
        c.lq = "TND", c.len64 = true, c.Dr = 8;
        snprintf(name, sizeof name, "TND query, PA_BSND key with rope, blockSize %d, INT64 lengths", page);
        run(name, &c);
    }
}

static void selection(void)
{
    const int sizes[] = {1, 2, 3, 4, 7, 16, 128};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (int mode = 0; mode <= 3; mode += 3) {
            sfa_case c = sfa_case_default();
            c.bs = sizes[k], c.mode = mode, c.K = 9, c.seed = 100 + k;
            c.s1[0] = 9, c.s1[1] = 4, c.s2[0] = 7, c.s2[1] = 30; /* batch 0: S1 > S2, early rows empty in mode 3 */
            char name[80];
            snprintf(name, sizeof name, "block size %d, sparseMode %d", sizes[k], mode);
            run(name, &c);
        }
    sfa_case c = sfa_case_default();
    c.K = 1, c.bs = 5;
    run("K = 1", &c);
    c = sfa_case_default();
    c.K = 40, c.bs = 1, c.mode = 3, c.lq = c.lkv = "TND";
    run("K = 40 single positions, causal, TND", &c);
}

static void features(void)
{
    sfa_case c = sfa_case_default();
    c.Dr = 8, c.Dv = 24, c.D = 32;
    run("rope Dr 8, Dv 24 != D 32", &c);
    c = sfa_case_default();
    c.N1 = 16, c.N2 = 1, c.Dr = 4;
    run("MQA: N2 = 1, G = 16, rope", &c);
    c = sfa_case_default();
    c.N1 = 6, c.N2 = 3, c.D = 5, c.Dv = 3;
    run("N2 = 3 dividing N1 = 6, odd head dims", &c);
    c = sfa_case_default();
    c.dtype = TC_BF16, c.Dr = 4;
    run("BFLOAT16 with rope", &c);
    c = sfa_case_default();
    c.no_lse = true;
    run("returnSoftmaxLse false, statistics NULL", &c);
    c = sfa_case_default();
    c.attention_mode = 2, c.scale = 0.7;
    run("attentionMode 2, scale 0.7", &c);
    for (int st = ST_GAPS; st <= ST_REVERSED; st++) {
        c = sfa_case_default();
        c.strides = (fa_strides)st, c.Dr = 4, c.lens_q = c.lens_kv = true, c.S1 = 6, c.S2 = 21;
        run(st == ST_GAPS ? "strided views with gaps (statistics too)" : "reversed dims (statistics too)", &c);
        c.lq = c.lkv = "TND";
        run(st == ST_GAPS ? "TND strided views with gaps" : "TND reversed dims", &c);
        c.lkv = "PA_BSND", c.page = 4;
        run(st == ST_GAPS ? "PA strided views with gaps" : "PA reversed dims", &c);
    }
    c = sfa_case_default();
    c.lq = c.lkv = "TND", c.B = 1, c.s1[0] = 2, c.s2[0] = 2048, c.N1 = 16, c.N2 = 1, c.D = 512, c.Dr = 64;
    c.K = 2048, c.bs = 1, c.fill = SFA_FILL_ALL;
    run("the seed's shape: D 512 + rope 64, 16 heads, K 2048 of block size 1", &c);
}

/* Semantics §9 f. */
static void identities(void)
{
    const char *lq[] = {"BSND", "TND", "BSND"}, *lkv[] = {"BSND", "TND", "PA_BSND"};
    for (int k = 0; k < 3; k++)
        for (int mode = 0; mode <= 3; mode += 3)
            for (int fill = SFA_FILL_ALL; fill <= SFA_FILL_REVERSED; fill++) {
                sfa_case c = sfa_case_default();
                c.lq = lq[k], c.lkv = lkv[k], c.mode = mode, c.fill = (sfa_fill)fill, c.dense = true;
                c.bs = 3, c.K = 7, c.Dr = 4, c.seed = 900 + k;
                char name[128];
                snprintf(name, sizeof name, "every block %s, mode %d (%s/%s) == dense%s attention",
                         fill == SFA_FILL_ALL ? "once" : "once, reversed", mode, lq[k], lkv[k], mode ? " causal" : "");
                run(name, &c);
            }
}

static void sweep(void)
{
    tc_rng g = tc_rng_seed(2024);
    const char *ls[] = {"BSND", "TND"}, *lk[] = {"BSND", "TND", "PA_BSND"};
    for (int n = 0; n < 40; n++) {
        sfa_case c = sfa_case_default();
        c.lq = ls[tc_rng_int(&g, 0, 1)], c.lkv = lk[tc_rng_int(&g, 0, 2)];
        sfa_draw_case(&c, &g);
        c.page = (int)tc_rng_int(&g, 1, 9);
        c.strides = (fa_strides)tc_rng_int(&g, 0, 2);
        c.seed = 5000 + n;
        char name[64];
        snprintf(name, sizeof name, "sweep case %d (seed %llu)", n, (unsigned long long)c.seed);
        run(name, &c);
    }
}

int main(void)
{
    layouts();
    selection();
    features();
    identities();
    sweep();
    return tc_summary("cann_sfa_forward");
}
