/* Score modifiers against the reference: bias (both orders, every broadcast shape, bottom-right
 * and compressed), ALiBi (|d| and sqrt, global positions), softcap and the attention sink. */
#include "common/check.h"
#include "harness.h"

static nt_case base(uint64_t seed) { return nt_fixture(seed, (nt_sizes){2, 4, 2, 16, 8, 9, 13}); }

static void bias_shapes(void)
{
    /* bcast flags: batch, head, row, col */
    static const bool shapes[][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0},
                                     {0, 0, 0, 1}, {1, 1, 0, 0}, {1, 1, 1, 0}, {0, 1, 1, 1}};
    const fc_dtype dts[] = {FC_F32, FC_F16, FC_BF16};
    for (int s = 0; s < 8; s++)
        for (int order = 0; order < 2; order++)
            for (int t = 0; t < 3; t++) {
                nt_case c = base(1000 + s * 6 + order * 3 + t);
                c.bias.on = true, c.bias.order = (fc_bias_order)order, c.bias.dtype = dts[t];
                c.bias.bcast_batch = shapes[s][0], c.bias.bcast_head = shapes[s][1];
                c.bias.bcast_row = shapes[s][2], c.bias.bcast_col = shapes[s][3];
                c.dt = c.out_dt = t == 1 ? FC_F16 : FC_F32;
                c.layout = (nt_layout)(s % 4);
                c.pad = s & 1;
                tc_context("bias shape %d%d%d%d order %d dtype %d", shapes[s][0], shapes[s][1], shapes[s][2],
                           shapes[s][3], order, t);
                nt_run(&c);
            }
}

/* A block larger than the problem: top-left reads its corner, bottom-right the other corner;
 * per-batch lengths move the bottom-right reading per batch. */
static void bias_alignment(void)
{
    static const int sq[3] = {9, 4, 1}, skv[3] = {13, 13, 6};
    for (int v = 0; v < 8; v++) {
        nt_case c = base(1100 + v);
        c.B = 3;
        c.bias.on = true, c.bias.order = (fc_bias_order)(v & 1);
        c.bias.bottom_right = v & 2;
        c.bias.extra_rows = 3, c.bias.extra_cols = 5;
        c.bias.bcast_row = v == 6;
        if (v & 4) {
            c.lens = true, c.sq = sq, c.skv = skv;
        }
        c.window = v == 7 ? fc_window_causal(FC_ALIGN_BOTTOM_RIGHT) : c.window;
        tc_context("bias alignment bottom_right=%d lens=%d order=%d", c.bias.bottom_right, c.lens, c.bias.order);
        nt_run(&c);
    }
    static const int psq[4] = {5, 0, 8, 2}, pskv[4] = {7, 3, 8, 9};
    for (int v = 0; v < 4; v++) {
        nt_case c = base(1120 + v);
        c.B = 4, c.packed = true, c.sq = psq, c.skv = pskv;
        c.bias.on = true, c.bias.order = (fc_bias_order)(v & 1), c.bias.bottom_right = v & 2;
        c.bias.extra_rows = 2, c.bias.extra_cols = 1;
        tc_context("packed bias bottom_right=%d order=%d", c.bias.bottom_right, c.bias.order);
        nt_run(&c);
    }
}

/* The compressed (Toeplitz, "1024-row") form with a small R: batches taller than R recover rows
 * from the stored ones and see only j <= i; shorter ones read the bottom-right corner. */
static void bias_compressed(void)
{
    static const int sq[4] = {11, 3, 0, 6}, skv[4] = {11, 7, 2, 6};
    for (int v = 0; v < 8; v++) {
        nt_case c = base(1200 + v);
        c.B = 4, c.packed = true, c.sq = sq, c.skv = skv;
        c.bias.on = true, c.bias.bottom_right = true, c.bias.compressed = true;
        c.bias.rows = v & 4 ? 5 : 4;
        c.bias.order = (fc_bias_order)(v & 1);
        c.bias.extra_cols = v & 2 ? 3 : 0;
        c.bias.dtype = v == 3 ? FC_BF16 : FC_F32;
        if (v == 5)
            c.window = fc_window_band(3, 0, FC_ALIGN_TOP_LEFT);
        if (v == 6)
            c.window = fc_window_band(FC_UNBOUNDED, 2, FC_ALIGN_BOTTOM_RIGHT); /* wider than j <= i */
        tc_context("compressed bias R=%d order=%d extra_cols=%d", c.bias.rows, c.bias.order, c.bias.extra_cols);
        nt_run(&c);
    }
    nt_case c = base(1210);
    c.Sq = c.Skv = 40, c.bias.on = true, c.bias.bottom_right = c.bias.compressed = true, c.bias.rows = 16;
    c.bias.bcast_batch = true;
    tc_context("compressed bias dense 40 rows from 16");
    nt_run(&c);
}

static void alibi(void)
{
    for (int v = 0; v < 12; v++) {
        nt_case c = base(1300 + v);
        c.alibi.on = true, c.alibi.sqrt_distance = v & 1, c.alibi.per_batch = v & 2;
        c.q_start = v & 4 ? 100 : 0, c.kv_start = v & 8 ? 37 : 0;
        if (v >= 8)
            c.window = fc_window_causal((fc_align)(v & 1));
        c.dt = c.out_dt = v % 3 == 2 ? FC_BF16 : FC_F32;
        tc_context("alibi sqrt=%d per_batch=%d q_start=%lld kv_start=%lld", c.alibi.sqrt_distance,
                   c.alibi.per_batch, (long long)c.q_start, (long long)c.kv_start);
        nt_run(&c);
    }
    /* context parallelism: this call's queries sit thousands of positions after its keys, so every
     * logit carries a large ALiBi offset; the softmax must still meet the §0.4 tolerance */
    const int64_t far[] = {3000, 10000, 100000};
    for (int k = 0; k < 3; k++) {
        nt_case c = base(1310 + k);
        c.alibi.on = true, c.q_start = far[k];
        c.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
        tc_context("alibi with queries %lld positions after the keys", (long long)far[k]);
        nt_run(&c);
        /* a finite sink then outweighs every key: the row's maximum is the sink, which must not
         * pass through the rows' shifted fp32 frame (core/terms.h fc_fold_sink) */
        c.sink = NT_SINK_FINITE, c.stats_order = (fc_stats_order)k;
        tc_context("alibi with queries %lld positions after the keys, and a sink", (long long)far[k]);
        nt_run(&c);
    }
    nt_case c = base(1320);
    c.alibi.on = true, c.bias.on = true, c.bias.order = FC_BIAS_BEFORE_SCALE, c.softcap = 3;
    tc_context("alibi with a bias before scale and softcap");
    nt_run(&c);
}

static void softcap(void)
{
    const float caps[] = {0.5f, 5.0f, 30.0f};
    for (int v = 0; v < 6; v++) {
        nt_case c = base(1400 + v);
        c.softcap = caps[v % 3];
        c.range = 2;
        c.scale = v < 3 ? 0 : 1.0;
        c.bias.on = v & 1, c.bias.order = (fc_bias_order)(v / 2 % 2);
        c.dt = c.out_dt = v == 4 ? FC_F16 : FC_F32;
        tc_context("softcap %g scale %g bias %d", c.softcap, c.scale, c.bias.on);
        nt_run(&c);
    }
}

/* Sinks: finite, some heads −inf (= none), all −inf; with windows that empty some rows. */
static void sink(void)
{
    for (int v = 0; v < 9; v++) {
        nt_case c = base(1500 + v);
        c.sink = (nt_sink_mode)(1 + v % 3);
        if (v >= 3)
            c.window = fc_window_band(1, -2, FC_ALIGN_TOP_LEFT); /* rows 0, 1 see nothing */
        if (v >= 6)
            c.keep_prob = 0.75, c.alibi.on = true;
        c.stats_order = (fc_stats_order)(v % 3);
        tc_context("sink mode %d window %d dropout %g", c.sink, c.window.enabled, c.keep_prob);
        nt_run(&c);
    }
}

static void body(void)
{
    bias_shapes();
    bias_alignment();
    bias_compressed();
    alibi();
    softcap();
    sink();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_scores", body); }
