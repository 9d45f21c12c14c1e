/* Randomized incremental-decode cases (few query rows against a long cache), fixed seeds, each
 * case drawn from its own seed so a failure reruns alone.  The draw favours what the decode path
 * takes (head dims that are multiples of the vector width, 1–4 query rows per batch, GQA groups of
 * 1–16 heads, caches that span several softmax steps) and mixes in what sends an item to the
 * generic path (odd dims, masks, dropout, bias), over every kv storage (tensor, paged with any
 * block size and either block layout, per-batch tensors), int8 keys/values with per-tensor or
 * per-channel dequantisation, int8 output, left padding, windows, sink, softcap, ALiBi and rope.
 * Every fifth case also checks that 1 and 2 threads give the same bits.  FLASHC_TEST_SWEEP widens
 * it (harness_draw.h). */
#include <stdio.h>

#include "common/check.h"
#include "common/rng.h"
#include "harness.h"
#include "harness_draw.h"
#include "harness_internal.h"

#define CASES 120

static int pick(tc_rng *r, const int *from, int n) { return from[tc_rng_int(r, 0, n - 1)]; }

static nt_case draw(int k, const nt_draw_spec *spec, int lens_q[4], int lens_kv[4])
{
    static const int dims[] = {16, 32, 48, 64, 80, 96, 128, 128, 160, 8, 24, 40};
    static const int groups[] = {1, 2, 3, 4, 4, 5, 7, 8, 16};
    static const int blocks[] = {1, 3, 7, 16, 16, 32, 64, 128, 200};
    const fc_dtype dts[3] = {FC_F32, FC_F16, FC_BF16};
    tc_rng r = tc_rng_seed(0xDEC0000u + (uint64_t)k);
    nt_case c = nt_default();
    c.seed = 20000 + (uint64_t)k;
    c.B = (int)tc_rng_int(&r, 1, 4);
    c.N2 = (int)tc_rng_int(&r, 1, 3);
    c.N1 = c.N2 * pick(&r, groups, sizeof groups / sizeof *groups);
    const int max_dim = spec->max_dim > 0 ? spec->max_dim : 160;
    c.D = tc_rng_bool(&r, 0.8) ? pick(&r, dims, sizeof dims / sizeof *dims) : (int)tc_rng_int(&r, 1, 40);
    c.Dv = tc_rng_bool(&r, 0.6) ? c.D : pick(&r, dims, sizeof dims / sizeof *dims);
    c.D = c.D > max_dim ? max_dim : c.D, c.Dv = c.Dv > max_dim ? max_dim : c.Dv;
    c.Dr = tc_rng_bool(&r, spec->rope_prob) ? pick(&r, dims, 4) : 0;
    c.Sq = tc_rng_bool(&r, 0.7) ? 1 : (int)tc_rng_int(&r, 2, 4);
    c.Skv = (int)tc_rng_int(&r, 1, spec->max_len);
    c.lens = tc_rng_bool(&r, 0.6);
    for (int b = 0; b < c.B; b++) {
        lens_q[b] = (int)tc_rng_int(&r, c.Sq > 1 ? 0 : 1, c.Sq);
        lens_kv[b] = (int)tc_rng_int(&r, 0, c.Skv);
    }
    if (c.lens)
        c.sq = lens_q, c.skv = lens_kv;
    c.layout = (nt_layout)tc_rng_int(&r, 0, 3);
    c.pad = tc_rng_bool(&r, 0.3) ? (int)tc_rng_int(&r, 1, 3) : 0;
    c.dt = dts[tc_rng_int(&r, 0, 2)];
    c.out_dt = tc_rng_bool(&r, 0.8) ? c.dt : dts[tc_rng_int(&r, 0, 2)];
    c.scale = tc_rng_bool(&r, 0.6) ? 0 : tc_rng_uniform(&r, -0.5, 0.8);
    c.softcap = tc_rng_bool(&r, 0.15) ? (float)tc_rng_uniform(&r, 0.5, 10) : 0;
    c.stats = tc_rng_bool(&r, 0.7);
    c.stats_order = (fc_stats_order)tc_rng_int(&r, 0, 3);
    c.replicas = c.stats_order >= FC_STATS_KV_GROUP ? 1 : tc_rng_bool(&r, 0.3) ? 8 : 1;
    c.threads = (int)tc_rng_int(&r, 0, 2);

    const int mode = (int)tc_rng_int(&r, 0, 4); /* paged twice as often as the others */
    c.kv.mode = mode <= 1 ? NT_KV_PAGED : mode == 2 ? NT_KV_BATCHES : NT_KV_TENSOR;
    if (c.kv.mode == NT_KV_PAGED) {
        c.kv.block_size = pick(&r, blocks, sizeof blocks / sizeof *blocks);
        c.kv.head_major_blocks = tc_rng_bool(&r, 0.5);
        c.kv.spare_blocks = (int)tc_rng_int(&r, 0, 3);
        c.kv.shared_blocks = tc_rng_bool(&r, 0.3);
    }
    if (tc_rng_bool(&r, 0.3)) {
        c.kv.int8 = true;
        c.kv.per_channel = tc_rng_bool(&r, 0.5), c.kv.offset = tc_rng_bool(&r, 0.5);
        c.kv.affine_dt = dts[tc_rng_int(&r, 0, 2)];
    }
    if (tc_rng_bool(&r, 0.15)) {
        c.out_dt = FC_I8;
        c.out_quant.per_channel = tc_rng_bool(&r, 0.5), c.out_quant.offset = tc_rng_bool(&r, 0.5);
        c.out_quant.dtype = c.dt == FC_BF16 && tc_rng_bool(&r, 0.5) ? FC_BF16 : FC_F32;
    }
    c.kv_starts = tc_rng_bool(&r, 0.2);
    if (tc_rng_bool(&r, 0.3))
        c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    else if (tc_rng_bool(&r, 0.2))
        c.window = (fc_window){.enabled = true, .align = FC_ALIGN_BOTTOM_RIGHT,
                               .left = tc_rng_int(&r, 0, c.Skv), .right = tc_rng_int(&r, 0, 2)};
    if (tc_rng_bool(&r, 0.2))
        c.sink = (nt_sink_mode)tc_rng_int(&r, 1, 3);
    if (tc_rng_bool(&r, 0.15))
        c.alibi.on = true, c.alibi.per_batch = tc_rng_bool(&r, 0.5), c.alibi.bottom_right = true;
    if (tc_rng_bool(&r, 0.1)) /* the generic path's features */
        c.mask.on = true, c.mask.dtype = FC_BOOL, c.mask.density = tc_rng_uniform(&r, 0, 0.9);
    if (tc_rng_bool(&r, 0.05))
        c.keep_prob = tc_rng_uniform(&r, 0.5, 0.95);
    return c;
}

static void body(void)
{
    nt_draw_spec spec = {.rope_prob = 0.15, .max_len = 300, .max_dim = 160};
    const nt_sweep range = nt_sweep_range(CASES, &spec);
    for (int k = range.first; k < range.first + range.count; k++) {
        int lens_q[4], lens_kv[4];
        nt_case c = draw(k, &spec, lens_q, lens_kv);
        tc_context("decode sweep case %d (B %d, heads %d/%d, D %d/%d/%d, %d × %d, dtype %d, kv mode %d%s)", k, c.B, c.N1,
                   c.N2, c.D, c.Dv, c.Dr, c.Sq, c.Skv, c.dt, c.kv.mode, c.kv.int8 ? ", int8 kv" : "");
        if (k % 5 == 0) /* also 1 against 2 threads, bit for bit */
            nt_run_threads(&c);
        else
            nt_run(&c);
    }
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_decode_sweep", body); }
