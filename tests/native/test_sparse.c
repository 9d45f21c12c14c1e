/* Top-k block-sparse attention through the native API (fc_sparse; semantics §5.3–§5.5), forward
 * and backward against the sparse reference: padded (BSND-like) and packed batches, INT32 and
 * INT64 indices, block sizes 1..128 and non-powers of two, causal or not, −1 padding with garbage
 * after it, duplicates, blocks past the threshold (incl. INT_MAX entries), GQA, rope, Dv != D,
 * padding rows (out 0, statistics −FLT_MAX / +FLT_MAX), statistics in the SFA shapes
 * ((B,N2,S1,G): FC_STATS_KV_GROUP, (N2,T1,G): FC_STATS_KV_TOKEN_GROUP); the identities of §9 f
 * (every block once == dense; causal == bottom-right causal; permuted lists == same result). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "harness.h"
#include "harness_bwd.h"
#include "harness_internal.h"
#include "reference/sparse.h"

static void forward(void)
{
    const int sizes[] = {1, 2, 3, 7, 16, 33, 64, 100, 128};
    int k = 0;
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int causal = 0; causal < 2; causal++, k++) {
            nt_case c = nt_sparse_fixture(10 + k, sizes[s], causal, k % 2 ? FC_I64 : FC_I32);
            c.dt = c.out_dt = (fc_dtype)(k % 3);
            c.sparse.pad = k % 3 == 1;
            if (sizes[s] >= 64)
                c.Skv = 2 * sizes[s] + 5, c.Sq = 5, c.D = 16;
            tc_context("sparse forward: block %d causal %d index dtype %d", sizes[s], causal, c.sparse.dtype);
            nt_run(&c);
        }
    static const int sq[3] = {9, 4, 0}, skv[3] = {40, 13, 8}, sq2[3] = {5, 0, 7}, skv2[3] = {11, 6, 20};
    nt_case c = nt_sparse_fixture(40, 4, true, FC_I32);
    c.B = 3, c.lens = true, c.sq = sq, c.skv = skv, c.Skv = 40;
    tc_context("sparse forward: per-batch lengths, padding rows, a batch without rows");
    nt_run(&c);
    c = nt_sparse_fixture(41, 3, true, FC_I64);
    c.B = 3, c.packed = true, c.sq = sq2, c.skv = skv2, c.stats_order = FC_STATS_KV_TOKEN_GROUP;
    tc_context("sparse forward: packed, statistics (N2, T1, G)");
    nt_run(&c);
    c.sparse.causal = false, c.N1 = 6, c.N2 = 3, c.Dr = 8, c.stats_order = FC_STATS_HEAD_MAJOR, c.replicas = 8;
    tc_context("sparse forward: packed, GQA 2, rope, head-major statistics with 8 replicas");
    nt_run(&c);
    c = nt_sparse_fixture(42, 5, false, FC_I32);
    c.N1 = 8, c.N2 = 1, c.Dr = 16, c.Dv = 40, c.sq = NULL, c.Sq = 17, c.Skv = 37;
    c.sparse.count = 12, c.sparse.dup_p = 0.4;
    tc_context("sparse forward: MQA 8, rope, Dv > D, many duplicates");
    nt_run(&c);
    c = nt_sparse_fixture(43, 4, true, FC_I32);
    c.Sq = 12, c.Skv = 8; /* S1 > S2: the first rows have a threshold <= 0 */
    tc_context("sparse forward: causal with more rows than columns (empty rows)");
    nt_run(&c);
    c = nt_sparse_fixture(44, 1, false, FC_I64);
    c.sparse.count = 1, c.Skv = 3;
    tc_context("sparse forward: one entry per row, block 1");
    nt_run(&c);
    c = nt_sparse_fixture(45, 8, true, FC_I32);
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 6, c.kv.spare_blocks = 2, c.sq = NULL;
    tc_context("sparse forward over a paged cache");
    nt_run(&c);
}

static void backward(void)
{
    const int sizes[] = {1, 3, 8, 17, 64};
    int k = 0;
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int causal = 0; causal < 2; causal++, k++) {
            nt_case c = nt_sparse_fixture(60 + k, sizes[s], causal, k % 2 ? FC_I32 : FC_I64);
            c.dt = c.out_dt = (fc_dtype)(k % 3);
            if (sizes[s] == 64)
                c.Skv = 150, c.Sq = 5;
            nt_bwd o = nt_bwd_default();
            o.grad_dt = (fc_dtype)((k + 1) % 3);
            o.check_threads = k % 3 == 0;
            tc_context("sparse backward: block %d causal %d", sizes[s], causal);
            nt_bwd_run(&c, &o);
        }
    static const int sq[3] = {6, 0, 4}, skv[3] = {14, 9, 3};
    nt_case c = nt_sparse_fixture(80, 3, true, FC_I64);
    c.B = 3, c.packed = true, c.sq = sq, c.skv = skv, c.stats_order = FC_STATS_KV_TOKEN_GROUP, c.Dr = 8, c.N1 = 6, c.N2 = 2;
    nt_bwd o = nt_bwd_default();
    o.check_threads = true, o.stat_shift = 0.25f;
    tc_context("sparse backward: packed, rope, GQA 3, shifted statistics");
    nt_bwd_run(&c, &o);
    c = nt_sparse_fixture(81, 5, false, FC_I32);
    c.lens = true, c.B = 3, c.sq = sq, c.skv = skv, c.Sq = 6, c.Skv = 14, c.N1 = 4, c.N2 = 1, c.Dv = 33;
    c.sparse.dup_p = 0.5;
    o = nt_bwd_default();
    o.grad_layout_set = true, o.grad_layout = NT_BNSD, o.grad_pad = 2;
    tc_context("sparse backward: padding rows, MQA, duplicates, gradients in another layout");
    nt_bwd_run(&c, &o);
}

/* §9 f: every block once == dense (causal: == bottom-right causal); a permuted list gives the
 * same result. */
static void identities(void)
{
    for (int causal = 0; causal < 2; causal++)
        for (int packed = 0; packed < 2; packed++) {
            static const int sq[2] = {7, 3}, skv[2] = {23, 9};
            nt_case s = nt_sparse_fixture(90 + causal * 2 + packed, 4, causal, packed ? FC_I64 : FC_I32);
            s.sparse.all_blocks = true, s.sparse.count = 8;
            s.packed = packed, s.sq = sq, s.skv = skv, s.lens = !packed, s.Sq = 7, s.Skv = 23;
            s.stats_order = FC_STATS_HEAD_MAJOR;
            nt_case d = s;
            d.sparse.on = false;
            d.window = causal ? fc_window_causal(FC_ALIGN_BOTTOM_RIGHT) : (fc_window){0};
            tc_context("every block once == dense%s (packed %d)", causal ? " bottom-right causal" : "", packed);
            nt_same_data("sparse all blocks vs dense", &d, &s, true);
        }
    nt_case c = nt_sparse_fixture(95, 3, true, FC_I32);
    c.sparse.dup_p = 0.3, c.sparse.end_p = 0.1;
    nt_data d = nt_prepare(&c);
    nt_result a, b;
    tc_context("permuted index rows give the same result");
    nt_execute(&c, &d, &a);
    tc_rng r = tc_rng_seed(7);
    const int64_t *st = d.sp_st;
    for (int bb = 0; bb < c.B; bb++)
        for (int i = 0; i < c.Sq; i++)
            for (int n2 = 0; n2 < c.N2; n2++) {
                int64_t *row = d.sp + bb * st[0] + i * st[1] + n2 * st[2];
                int64_t valid = 0;
                while (valid < c.sparse.count && row[valid * st[3]] >= 0)
                    valid++;
                for (int64_t t = valid - 1; t > 0; t--) {
                    const int64_t u = tc_rng_int(&r, 0, t), x = row[t * st[3]];
                    row[t * st[3]] = row[u * st[3]], row[u * st[3]] = x;
                }
            }
    nt_execute(&c, &d, &b);
    nt_compare_results("permuted vs original", &a, &b, &c, true);
    nt_result_free(&a), nt_result_free(&b);
    nt_data_free(&d);
}

/* FLOPs over the selected positions (duplicates counted as often as listed), ×2.5 backward;
 * forward results bit-identical for 1 and 2 threads. */
static void flops_and_threads(void)
{
    static const int sq[3] = {6, 0, 5}, skv[3] = {30, 9, 17};
    nt_case c = nt_sparse_fixture(97, 3, true, FC_I64);
    c.B = 3, c.packed = true, c.sq = sq, c.skv = skv, c.Dr = 4, c.N1 = 6, c.N2 = 2, c.stats_order = FC_STATS_KV_TOKEN_GROUP;
    c.sparse.dup_p = 0.3;
    nt_data d = nt_prepare(&c);
    ref_sparse p;
    nt_sparse_ref(&c, &d, &p);
    double want = 0;
    for (int b = 0; b < c.B; b++)
        for (int i = 0; i < d.s1[b]; i++)
            for (int n1 = 0; n1 < c.N1; n1++)
                want += (double)ref_sparse_select(&p, b, i, n1 / (c.N1 / c.N2), NULL);
    want *= 2.0 * (c.D + c.Dr) + 2.0 * d.Dv;
    nt_bufs L;
    fc_attention_desc a = nt_make_desc(&c, &d, &L);
    fc_plan *plan = NULL;
    double got = -1, got_b = -1;
    tc_context("sparse FLOPs");
    if (TC_CHECK(fc_plan_create(&a, NULL, &plan) == FC_OK, "plan: %s", fc_last_error()))
        TC_CHECK(fc_plan_flops(plan, &got) == FC_OK && fabs(got - want) <= 1e-9 * want, "forward FLOPs %.0f, want %.0f", got, want);
    fc_plan_destroy(plan);
    fc_attention_grads g;
    memset(&g, 0, sizeof g);
    g.d_out = a.out, g.dq = a.q, g.dk = a.k, g.dv = a.v, g.dq_rope = a.q_rope, g.dk_rope = a.k_rope; /* planning only */
    plan = NULL;
    if (TC_CHECK(fc_plan_create_backward(&a, &g, NULL, &plan) == FC_OK, "backward plan: %s", fc_last_error()))
        TC_CHECK(fc_plan_flops(plan, &got_b) == FC_OK && fabs(got_b - 2.5 * want) <= 1e-9 * want,
                 "backward FLOPs %.0f, want %.0f", got_b, 2.5 * want);
    fc_plan_destroy(plan);
    nt_bufs_free(&L);

    tc_context("sparse forward: 1 and 2 threads bit-identical");
    nt_check_threads(&c, &d);
    nt_data_free(&d);
}

static void body(void)
{
    forward();
    backward();
    identities();
    flops_and_threads();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_sparse", body); }
