/* Randomized top-k block-sparse cases (fc_sparse: SparseFlashAttention and its gradient), fixed
 * seeds, each case drawn from its own seed so a failure reruns alone: block sizes 1–64 (powers of
 * two and not), 1–12 entries per index row with −1 ends, duplicates and blocks past the causal
 * threshold, INT32/INT64 indices with padded strides, GQA 1–8, rope, Dv != D, padded and packed
 * batches with empty ones, a paged cache (forward only), every dtype; half the cases also run the
 * backward (gradients in random dtypes), every fifth checks 1 and 2 threads bit for bit.
 * FLASHC_TEST_SWEEP widens it (harness_draw.h). */
#include <stdio.h>

#include "common/check.h"
#include "common/rng.h"
#include "harness.h"
#include "harness_bwd.h"
#include "harness_draw.h"
#include "harness_internal.h"

#define CASES 80

static nt_case draw(int k, const nt_draw_spec *spec, int lens_q[4], int lens_kv[4], bool *backward, nt_bwd *o)
{
    static const int blocks[] = {1, 2, 3, 5, 8, 16, 17, 32, 64};
    tc_rng r = tc_rng_seed(0x5BA0000u + (uint64_t)k);
    nt_case c = nt_sparse_fixture(30000 + (uint64_t)k, blocks[tc_rng_int(&r, 0, 8)], tc_rng_bool(&r, 0.5),
                                  tc_rng_bool(&r, 0.5) ? FC_I64 : FC_I32);
    const int max_dim = spec->max_dim > 0 ? spec->max_dim : 64;
    c.B = (int)tc_rng_int(&r, 1, 3);
    c.N2 = (int)tc_rng_int(&r, 1, 2);
    c.N1 = c.N2 * (int)tc_rng_int(&r, 1, 8);
    c.D = (int)tc_rng_int(&r, 1, max_dim);
    c.Dv = tc_rng_bool(&r, 0.5) ? c.D : (int)tc_rng_int(&r, 1, max_dim);
    c.Dr = tc_rng_bool(&r, spec->rope_prob) ? (int)tc_rng_int(&r, 1, 16) : 0;
    c.Sq = (int)tc_rng_int(&r, 1, 24);
    c.Skv = (int)tc_rng_int(&r, 1, spec->max_len);
    c.packed = tc_rng_bool(&r, 0.3);
    c.lens = !c.packed && tc_rng_bool(&r, 0.3);
    for (int b = 0; b < c.B; b++)
        lens_q[b] = (int)tc_rng_int(&r, 0, c.Sq), lens_kv[b] = (int)tc_rng_int(&r, 0, c.Skv);
    if (c.packed || c.lens)
        c.sq = lens_q, c.skv = lens_kv;
    static const fc_stats_order packed_orders[] = {FC_STATS_KV_TOKEN_GROUP, FC_STATS_HEAD_MAJOR, FC_STATS_KV_GROUP};
    c.stats_order = c.packed ? packed_orders[tc_rng_int(&r, 0, 2)] : tc_rng_bool(&r, 0.7) ? FC_STATS_KV_GROUP : FC_STATS_HEAD_MAJOR;
    c.dt = (fc_dtype)tc_rng_int(&r, 0, 2);
    c.out_dt = tc_rng_bool(&r, 0.8) ? c.dt : (fc_dtype)tc_rng_int(&r, 0, 2);
    c.scale = tc_rng_bool(&r, 0.6) ? 0 : tc_rng_uniform(&r, 0.05, 0.8);
    nt_sparse_spec *s = &c.sparse;
    s->count = (int)tc_rng_int(&r, 1, 12);
    s->end_p = tc_rng_uniform(&r, 0, 0.3), s->dup_p = tc_rng_uniform(&r, 0, 0.3), s->late_p = tc_rng_uniform(&r, 0, 0.3);
    s->all_blocks = tc_rng_bool(&r, 0.1);
    s->pad = tc_rng_bool(&r, 0.3) ? (int)tc_rng_int(&r, 1, 3) : 0;
    *backward = tc_rng_bool(&r, 0.5);
    if (!*backward && !c.packed && tc_rng_bool(&r, 0.25))
        c.kv.mode = NT_KV_PAGED, c.kv.block_size = (int)tc_rng_int(&r, 1, 40), c.kv.spare_blocks = 2,
        c.kv.head_major_blocks = tc_rng_bool(&r, 0.5);
    *o = nt_bwd_default();
    o->grad_dt = (fc_dtype)tc_rng_int(&r, 0, 2);
    o->check_threads = k % 5 == 0;
    return c;
}

static void body(void)
{
    nt_draw_spec spec = {.rope_prob = 0.25, .max_len = 160, .max_dim = 64};
    const nt_sweep range = nt_sweep_range(CASES, &spec);
    for (int k = range.first; k < range.first + range.count; k++) {
        int lens_q[4], lens_kv[4];
        bool backward;
        nt_bwd o;
        nt_case c = draw(k, &spec, lens_q, lens_kv, &backward, &o);
        tc_context("sparse sweep case %d (%s, B %d, heads %d/%d, D %d/%d/%d, %d × %d, block %d × %d%s)", k,
                   backward ? "backward" : "forward", c.B, c.N1, c.N2, c.D, c.Dv, c.Dr, c.Sq, c.Skv, c.sparse.count,
                   c.sparse.block_size, c.sparse.causal ? ", causal" : "");
        if (backward) {
            nt_bwd_run(&c, &o);
        } else if (k % 5 == 0) {
            nt_run_threads(&c);
        } else {
            nt_run(&c);
        }
    }
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_sparse_sweep", body); }
