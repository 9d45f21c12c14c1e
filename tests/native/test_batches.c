/* Per-batch lengths (padding rows must be zero with statistics −FLT_MAX / +FLT_MAX), statistics in
 * every order with 1 and 8 replicas, and dropout from keep bits. */
#include "common/check.h"
#include "harness.h"

static nt_case base(uint64_t seed) { return nt_fixture(seed, (nt_sizes){3, 4, 2, 12, 10, 9, 13}); }

static void padded_lengths(void)
{
    static const int sq[][3] = {{9, 4, 0}, {1, 9, 7}, {0, 0, 3}, {9, 9, 9}};
    static const int skv[][3] = {{13, 2, 5}, {0, 13, 6}, {4, 0, 13}, {1, 13, 0}};
    for (int k = 0; k < 4; k++)
        for (int v = 0; v < 4; v++) {
            nt_case c = base(3000 + k * 4 + v);
            c.lens = true, c.sq = sq[k], c.skv = skv[k];
            c.layout = (nt_layout)v;
            c.window = v == 2 ? fc_window_causal(FC_ALIGN_BOTTOM_RIGHT) : c.window;
            c.stats_order = (fc_stats_order)(v % 3);
            c.replicas = v == 1 ? 8 : 1;
            c.dt = c.out_dt = v == 3 ? FC_F16 : FC_F32;
            tc_context("padded lengths set %d layout %d", k, v);
            nt_run(&c);
        }
}

static void stats_orders(void)
{
    const int reps[] = {0, 1, 8, 3};
    for (int o = 0; o < 3; o++)
        for (int r = 0; r < 4; r++)
            for (int packed = 0; packed < 2; packed++) {
                if (o == FC_STATS_KV_GROUP && reps[r] > 1)
                    continue; /* kv-group order has one replica */
                static const int sq[3] = {5, 0, 8}, skv[3] = {6, 4, 3};
                nt_case c = base(3100 + o * 8 + r * 2 + packed);
                c.packed = packed, c.sq = packed ? sq : NULL, c.skv = packed ? skv : NULL;
                c.stats_order = (fc_stats_order)o, c.replicas = reps[r];
                c.N1 = 6, c.N2 = 2;
                tc_context("stats order %d replicas %d packed %d", o, reps[r], packed);
                nt_run(&c);
            }
}

static void dropout(void)
{
    const double probs[] = {0.9, 0.5, 0.125};
    for (int p = 0; p < 3; p++)
        for (int v = 0; v < 4; v++) {
            static const int sq[3] = {7, 0, 4}, skv[3] = {5, 3, 9};
            nt_case c = base(3200 + p * 4 + v);
            c.keep_prob = probs[p];
            c.packed = v == 1;
            c.lens = v == 2; /* padded batches enumerate bits by their real lengths */
            c.sq = v == 1 || v == 2 ? sq : NULL, c.skv = v == 1 || v == 2 ? skv : NULL;
            c.window = v == 3 ? fc_window_causal(FC_ALIGN_TOP_LEFT) : c.window;
            c.sink = v == 3 ? NT_SINK_FINITE : NT_SINK_NONE;
            tc_context("dropout p=%g variant %d", c.keep_prob, v);
            nt_run(&c);
        }
    nt_case c = base(3220);
    c.keep_prob = 1, c.keep_bits_with_p1 = true;
    tc_context("keep_prob 1 ignores the bits");
    nt_run(&c);
    c.keep_prob = 0; /* 0 is read as 1 */
    tc_context("keep_prob 0 means 1");
    nt_run(&c);
}

/* Semantics §0.3: an fp16 output beyond 65504 becomes ±inf (dropout's 1/p pushes it there). */
static void output_overflow(void)
{
    for (int v = 0; v < 2; v++) {
        nt_case c = base(3300 + v);
        c.dt = FC_F16, c.out_dt = v ? FC_F32 : FC_F16;
        c.v_range = 60000;
        c.keep_prob = 0.25, c.keep_all = true;
        tc_context("fp16 values x 1/0.25, output %s", v ? "f32 (finite)" : "f16 (inf beyond 65504)");
        nt_run(&c);
    }
}

static void body(void)
{
    padded_lengths();
    stats_orders();
    dropout();
    output_overflow();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_batches", body); }
