/* The backward (fc_plan_create_backward / fc_attention_backward) against the reference
 * backward of semantics §3.3, feature by feature: layouts (incl. packed, strides, broadcast
 * inputs), dtypes of inputs / d_out / gradients, GQA, Dv != D, rope, biases of both orders and
 * every shape incl. compressed, ALiBi incl. far positions, windows, prefixes, per-batch windows,
 * masks, fully masked rows, dropout, sinks and dsink, softcap, statistics orders, replicas and
 * "statistics used as given" (§8.16), plan reuse through fc_attention_io.  Every gradient
 * element is checked (harness_bwd.h). */
#include <math.h>
#include <stdio.h>

#include "common/check.h"
#include "harness.h"
#include "harness_bwd.h"

static nt_case base(uint64_t seed) { return nt_fixture(seed, (nt_sizes){2, 3, 3, 20, 20, 11, 13}); }

static void run(const char *what, const nt_case *c, const nt_bwd *o)
{
    tc_context("%s", what);
    nt_bwd_run(c, o);
}

static void layouts(void)
{
    nt_bwd o = nt_bwd_default();
    const char *names[] = {"BNSD", "BSND", "BSH", "SBH"};
    for (int l = 0; l < 4; l++) {
        nt_case c = base(10 + l);
        c.layout = (nt_layout)l;
        char what[160];
        snprintf(what, sizeof what, "layout %s", names[l]);
        run(what, &c, &o);
        c.mixed_layouts = true, c.pad = 2, c.dim_stride = 2;
        o.grad_layout_set = true, o.grad_layout = (nt_layout)((l + 3) % 4), o.grad_pad = 1;
        snprintf(what, sizeof what, "layout %s, mixed, padded strides, gradients in another layout", names[l]);
        run(what, &c, &o);
        o = nt_bwd_default();
    }
    static const int sq[4] = {5, 0, 9, 1}, skv[4] = {7, 4, 0, 12};
    nt_case c = base(20);
    c.B = 4, c.packed = true, c.sq = sq, c.skv = skv, c.N1 = 4, c.N2 = 2, c.pad = 1;
    run("packed, zero-length batches on either side, GQA", &c, &o);
    c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), c.mask.on = true, c.mask.by_tokens = true;
    run("packed, bottom-right causal, mask by tokens", &c, &o);
    c = base(21);
    c.lens = true, c.sq = sq, c.skv = skv, c.B = 4, c.Sq = 9, c.Skv = 12;
    run("padded with per-batch lengths (padding rows and kv positions get 0)", &c, &o);
    c = base(22);
    c.q_bcast_head = true, c.kv_bcast_seq = true;
    run("broadcast inputs (q head stride 0, kv seq stride 0)", &c, &o);
}

static void dtypes(void)
{
    const fc_dtype all[3] = {FC_F32, FC_F16, FC_BF16};
    for (int a = 0; a < 3; a++)
        for (int g = 0; g < 3; g++) {
            nt_case c = base(30 + a * 3 + g);
            c.dt = all[a], c.out_dt = all[(a + g) % 3];
            nt_bwd o = nt_bwd_default();
            o.grad_dt = all[g];
            o.dout_dt_set = g == 1, o.dout_dt = all[(a + 2) % 3];
            char what[160];
            snprintf(what, sizeof what, "dtypes in %d out %d grad %d", c.dt, c.out_dt, o.grad_dt);
            run(what, &c, &o);
        }
}

static void shapes(void)
{
    nt_bwd o = nt_bwd_default();
    nt_case c = base(40);
    c.N1 = 8, c.N2 = 2, c.D = 12, c.Dv = 27;
    run("GQA 4 per kv head, Dv > D", &c, &o);
    c.N1 = 7, c.N2 = 1, c.D = 33, c.Dv = 5, c.Dr = 9;
    run("MQA, Dv < D, rope", &c, &o);
    c = base(41);
    c.Dr = 16, c.layout = NT_BSND, c.v_dim_zero = true, c.N1 = 4, c.N2 = 2;
    run("rope, v_head_dim 0", &c, &o);
    c = base(42);
    c.Sq = 1, c.Skv = 70, c.D = 64, c.N1 = 8, c.N2 = 2, c.B = 3;
    run("one query row, long kv", &c, &o);
    c = base(43);
    c.Sq = 67, c.Skv = 3, c.D = 8, c.Dv = 4;
    run("many rows, few columns", &c, &o);
    c = base(44);
    c.Sq = 40, c.Skv = 45, c.D = 128, c.Dv = 128, c.B = 1, c.N1 = 2, c.N2 = 1, c.dt = FC_BF16, c.out_dt = FC_BF16;
    o.grad_dt = FC_BF16;
    run("D 128 bf16", &c, &o);
}

static void biases(void)
{
    nt_bwd o = nt_bwd_default();
    for (int order = 0; order < 2; order++)
        for (int shape = 0; shape < 5; shape++) {
            nt_case c = base(50 + order * 5 + shape);
            c.N1 = 4, c.N2 = 2;
            c.bias.on = true, c.bias.order = (fc_bias_order)order;
            c.bias.dtype = shape == 3 ? FC_F16 : FC_F32;
            c.bias.bcast_batch = shape == 1, c.bias.bcast_head = shape == 2, c.bias.bcast_row = shape == 3;
            c.bias.bottom_right = shape == 4, c.bias.extra_rows = shape == 4 ? 2 : 0, c.bias.extra_cols = shape == 4 ? 3 : 0;
            char what[160];
            snprintf(what, sizeof what, "bias order %d shape %d", order, shape);
            run(what, &c, &o);
        }
    nt_case c = base(60);
    c.Sq = c.Skv = 21, c.bias.on = true, c.bias.compressed = c.bias.bottom_right = true, c.bias.rows = 8, c.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    run("compressed bias (8 stored rows, 21 rows)", &c, &o);
    c.bias.order = FC_BIAS_BEFORE_SCALE, c.bias.bcast_batch = true;
    run("compressed bias before scale", &c, &o);
}

static void alibi(void)
{
    nt_bwd o = nt_bwd_default();
    nt_case c = base(70);
    c.alibi.on = true;
    run("ALiBi", &c, &o);
    c.alibi.per_batch = true, c.alibi.sqrt_distance = true;
    run("ALiBi per batch, sqrt distance", &c, &o);
    c = base(71);
    c.alibi.on = true, c.q_start = 1000000, c.kv_start = 999990, c.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    run("ALiBi at far global positions (context parallelism)", &c, &o);
    c.q_start = 4000000000LL, c.kv_start = 4000000013LL, c.window.enabled = false;
    run("ALiBi, queries before keys far out", &c, &o);
    c = base(72);
    c.alibi.on = true, c.q_start = 100000, c.sink = NT_SINK_FINITE;
    run("ALiBi with the queries 100000 positions after the keys, a sink above every logit (dsink)", &c, &o);
}

static void visibility(void)
{
    nt_bwd o = nt_bwd_default();
    const fc_window wins[] = {fc_window_causal(FC_ALIGN_TOP_LEFT), fc_window_causal(FC_ALIGN_BOTTOM_RIGHT),
                              fc_window_band(3, 1, FC_ALIGN_TOP_LEFT), fc_window_band(-2, 5, FC_ALIGN_BOTTOM_RIGHT),
                              fc_window_band(4, -3, FC_ALIGN_TOP_LEFT)};
    for (int w = 0; w < 5; w++) {
        nt_case c = base(80 + w);
        c.window = wins[w];
        c.Sq = 15, c.Skv = 9; /* top-left causal leaves no row empty; bottom-right does */
        char what[160];
        snprintf(what, sizeof what, "window %d (%lld, %lld, align %d)", w, (long long)wins[w].left,
                 (long long)wins[w].right, wins[w].align);
        run(what, &c, &o);
    }
    nt_case c = base(90);
    c.batch_windows = true, c.B = 4, c.prefix = true;
    run("per-batch windows and prefixes", &c, &o);
    c = base(91);
    c.mask.on = true, c.mask.density = 0.5, c.mask.dtype = FC_BOOL, c.mask.bcast_head = true;
    run("mask (half hidden)", &c, &o);
    c.mask.density = 0.97, c.mask.bcast_head = false, c.mask.dtype = FC_I8;
    run("mask hiding almost everything: many fully masked rows", &c, &o);
    c = base(92);
    c.window = fc_window_band(-100, -90, FC_ALIGN_TOP_LEFT);
    run("every row fully masked", &c, &o);
    c.sink = NT_SINK_FINITE;
    run("every row fully masked, with a sink", &c, &o);
    c = base(93);
    c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), c.q_start = 5, c.kv_start = -3, c.prefix = true;
    run("window with start positions and prefix", &c, &o);
}

static void dropout_sink_softcap(void)
{
    nt_bwd o = nt_bwd_default();
    nt_case c = base(100);
    c.keep_prob = 0.7;
    run("dropout 0.7", &c, &o);
    c.keep_all = true, c.keep_prob = 0.5;
    run("dropout, all bits kept", &c, &o);
    c = base(101);
    c.keep_prob = 1, c.keep_bits_with_p1 = true;
    run("keep_prob 1 ignores the bits", &c, &o);
    const nt_sink_mode sinks[3] = {NT_SINK_FINITE, NT_SINK_SOME_NEG_INF, NT_SINK_ALL_NEG_INF};
    for (int s = 0; s < 3; s++) {
        c = base(102 + s);
        c.N1 = 4, c.N2 = 2, c.B = 3, c.sink = sinks[s];
        c.mask.on = true, c.mask.density = 0.6;
        char what[160];
        snprintf(what, sizeof what, "sink mode %d with a mask", s);
        run(what, &c, &o);
    }
    c = base(106);
    c.sink = NT_SINK_FINITE, c.keep_prob = 0.8, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), c.Sq = 14, c.Skv = 6;
    run("sink, dropout, causal with empty rows", &c, &o);
    c = base(107);
    c.softcap = 0.8f, c.range = 2;
    run("softcap 0.8 (saturating)", &c, &o);
    c.softcap = 30, c.bias.on = true, c.bias.order = FC_BIAS_BEFORE_SCALE;
    run("softcap 30, bias before scale", &c, &o);
    c = base(108);
    c.softcap = 2, c.bias.on = true, c.alibi.on = true, c.sink = NT_SINK_SOME_NEG_INF, c.Dr = 4;
    run("softcap + bias after + ALiBi + sink + rope", &c, &o);
    c = base(109);
    o.dsink_without_sink = true;
    run("dsink buffer without a sink stays untouched", &c, &o);
}

static void statistics(void)
{
    const fc_stats_order orders[4] = {FC_STATS_HEAD_MAJOR, FC_STATS_TOKEN_MAJOR, FC_STATS_KV_GROUP, FC_STATS_KV_TOKEN_GROUP};
    for (int k = 0; k < 4; k++)
        for (int packed = 0; packed < 2; packed++) {
            static const int sq[3] = {4, 0, 6}, skv[3] = {5, 3, 6};
            nt_case c = base(110 + k * 2 + packed);
            c.N1 = 6, c.N2 = 2, c.B = 3;
            c.packed = packed, c.sq = packed ? sq : NULL, c.skv = packed ? skv : NULL;
            c.stats_order = orders[k];
            c.replicas = k < 2 ? 8 : 1;
            nt_bwd o = nt_bwd_default();
            o.poison_replicas = true;
            o.stat_shift = 0.375f;
            char what[160];
            snprintf(what, sizeof what, "statistics order %d packed %d, shifted (used as given), replicas poisoned", k, packed);
            run(what, &c, &o);
        }
}

static void plans(void)
{
    nt_case c = base(120);
    c.N1 = 4, c.N2 = 2, c.Dr = 8, c.sink = NT_SINK_FINITE;
    nt_bwd o = nt_bwd_default();
    o.use_io = true;
    run("plan on decoy buffers, run through fc_attention_io", &c, &o);
    o = nt_bwd_default();
    o.oneshot = true;
    run("fc_attention_backward", &c, &o);
    o = nt_bwd_default();
    o.threads = 0;
    run("threads 0", &c, &o);
    c = base(121);
    c.kv_starts = true, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), c.B = 3;
    o = nt_bwd_default();
    run("left padding (kv_starts)", &c, &o);
}

static void body(void)
{
    layouts();
    dtypes();
    shapes();
    biases();
    alibi();
    visibility();
    dropout_sink_softcap();
    statistics();
    plans();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_backward", body); }
