/* Visibility against the reference: causal and band windows (both alignments, negative sides),
 * per-batch windows, prefixes, global q/kv start positions, explicit masks (dtypes, broadcast
 * strides, by_tokens) and fully masked rows. */
#include "common/check.h"
#include "harness.h"

static nt_case base(uint64_t seed) { return nt_fixture(seed, (nt_sizes){2, 2, 1, 16, 16, 11, 11}); }

/* Sq < Skv, Sq = Skv and Sq > Skv for each window. */
static void windows(void)
{
    const fc_window w[] = {
        fc_window_causal(FC_ALIGN_TOP_LEFT),    fc_window_causal(FC_ALIGN_BOTTOM_RIGHT),
        fc_window_band(3, 2, FC_ALIGN_TOP_LEFT), fc_window_band(0, 0, FC_ALIGN_BOTTOM_RIGHT),
        fc_window_band(4, -2, FC_ALIGN_TOP_LEFT), fc_window_band(-1, 5, FC_ALIGN_BOTTOM_RIGHT),
        fc_window_band(-3, -3, FC_ALIGN_TOP_LEFT), /* empty band: every row fully masked */
        fc_window_band(FC_UNBOUNDED, FC_UNBOUNDED, FC_ALIGN_TOP_LEFT),
        fc_window_band(2, FC_UNBOUNDED, FC_ALIGN_BOTTOM_RIGHT),
        fc_window_band(FC_UNBOUNDED, -4, FC_ALIGN_BOTTOM_RIGHT),
    };
    const int shapes[][2] = {{7, 19}, {11, 11}, {19, 7}, {1, 40}, {40, 1}};
    for (unsigned k = 0; k < sizeof w / sizeof w[0]; k++)
        for (int s = 0; s < 5; s++) {
            nt_case c = base(2000 + k * 5 + s);
            c.Sq = shapes[s][0], c.Skv = shapes[s][1], c.window = w[k];
            c.layout = (nt_layout)(s % 4);
            c.dt = c.out_dt = k % 3 == 1 ? FC_F16 : FC_F32;
            tc_context("window %u (%lld, %lld, align %d) Sq=%d Skv=%d", k, (long long)w[k].left,
                       (long long)w[k].right, w[k].align, c.Sq, c.Skv);
            nt_run(&c);
        }
}

/* Global positions (context parallelism): the window is measured on q_start + i, kv_start + j. */
static void start_positions(void)
{
    const int64_t starts[][2] = {{0, 5}, {5, 0}, {100, 96}, {-7, 3}, {1000000000000LL, 999999999990LL},
                                 {INT64_MAX / 2, INT64_MAX / 2 - 4}};
    for (int k = 0; k < 6; k++)
        for (int a = 0; a < 3; a++) {
            nt_case c = base(2100 + k * 3 + a);
            c.Sq = 8, c.Skv = 12;
            c.q_start = starts[k][0], c.kv_start = starts[k][1];
            c.window = a == 2 ? fc_window_band(3, 1, FC_ALIGN_TOP_LEFT) : fc_window_causal((fc_align)a);
            c.alibi.on = k < 4; /* ALiBi measures the same positions */
            tc_context("starts q=%lld kv=%lld window %d", (long long)c.q_start, (long long)c.kv_start, a);
            nt_run(&c);
        }
}

static void batch_windows_and_prefix(void)
{
    static const int sq[6] = {6, 1, 9, 4, 0, 7}, skv[6] = {9, 5, 4, 4, 3, 12};
    for (int v = 0; v < 12; v++) {
        nt_case c = base(2200 + v);
        c.B = 6, c.sq = sq, c.skv = skv;
        c.Sq = 9, c.Skv = 12;
        c.packed = v & 1;
        c.lens = !c.packed;
        c.batch_windows = v < 8;
        c.prefix = v >= 4;
        if (!c.batch_windows)
            c.window = v & 2 ? fc_window_band(1, 0, FC_ALIGN_BOTTOM_RIGHT) : fc_window_band(0, -1, FC_ALIGN_TOP_LEFT);
        c.q_start = v == 5 ? 3 : 0;
        tc_context("per-batch windows %d prefix %d packed %d", c.batch_windows, c.prefix, c.packed);
        nt_run(&c);
    }
}

static void masks(void)
{
    const fc_dtype dts[] = {FC_BOOL, FC_U8, FC_I8};
    static const bool shapes[][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {1, 1, 0, 0},
                                     {0, 0, 1, 0}, {0, 0, 0, 1}, {1, 1, 1, 0}};
    for (int s = 0; s < 7; s++)
        for (int t = 0; t < 3; t++) {
            nt_case c = base(2300 + s * 3 + t);
            c.N1 = 4, c.N2 = 2, c.Sq = 9, c.Skv = 14;
            c.mask.on = true, c.mask.dtype = dts[t], c.mask.density = t == 2 ? 0.8 : 0.35;
            c.mask.bcast_batch = shapes[s][0], c.mask.bcast_head = shapes[s][1];
            c.mask.bcast_row = shapes[s][2], c.mask.bcast_col = shapes[s][3];
            c.window = s == 3 ? fc_window_causal(FC_ALIGN_BOTTOM_RIGHT) : c.window;
            c.prefix = s == 4;
            tc_context("mask dtype %d shape %d%d%d%d", t, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
            nt_run(&c);
        }
    static const int sq[4] = {5, 0, 3, 6}, skv[4] = {4, 6, 0, 9};
    for (int v = 0; v < 4; v++) {
        nt_case c = base(2330 + v);
        c.B = 4, c.N1 = 2, c.packed = true, c.sq = sq, c.skv = skv;
        c.mask.on = true, c.mask.by_tokens = v < 2, c.mask.bcast_head = v & 1, c.mask.density = 0.4;
        c.window = v == 3 ? fc_window_causal(FC_ALIGN_TOP_LEFT) : c.window;
        tc_context("packed mask by_tokens=%d bcast_head=%d", c.mask.by_tokens, c.mask.bcast_head);
        nt_run(&c);
    }
}

/* Rows with nothing visible: exact zeros and exact statistics, whatever hides them. */
static void fully_masked_rows(void)
{
    for (int v = 0; v < 6; v++) {
        nt_case c = base(2400 + v);
        c.Sq = 10, c.Skv = 6;
        switch (v) {
        case 0: c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT); break; /* first 4 rows empty */
        case 1: c.mask.on = true, c.mask.density = 0.93; break;            /* random empty rows */
        case 2: c.mask.on = true, c.mask.density = 1.0; break;             /* everything hidden */
        case 3: c.q_start = 0, c.kv_start = 50, c.window = fc_window_causal(FC_ALIGN_TOP_LEFT); break;
        case 4: c.window = fc_window_band(2, -3, FC_ALIGN_TOP_LEFT), c.mask.on = true; break;
        default: c.window = fc_window_band(0, 0, FC_ALIGN_TOP_LEFT), c.mask.on = true, c.mask.density = 0.5; break;
        }
        c.dt = c.out_dt = v % 2 ? FC_BF16 : FC_F32;
        c.replicas = v % 2 ? 8 : 1;
        c.stats_order = (fc_stats_order)(v % 2 ? v % 2 : 2);
        tc_context("fully masked rows variant %d", v);
        nt_run(&c);
    }
}

/* Window arithmetic at the ends of int64: results must be exact (FC_UNBOUNDED = no bound), or the
 * call must refuse the positions; silently wrong visibility is the one outcome not allowed. */
static void extreme_positions(void)
{
    const int64_t MAX = INT64_MAX, MIN = INT64_MIN, H = (int64_t)1 << 62;
    const struct { int64_t left, right; fc_align align; int64_t qs, ks; } x[] = {
        {FC_UNBOUNDED, 0, FC_ALIGN_TOP_LEFT, MAX - 1, 0},              /* causal, query far ahead: all */
        {FC_UNBOUNDED, 0, FC_ALIGN_BOTTOM_RIGHT, MAX, MIN},            /* all */
        {FC_UNBOUNDED, 0, FC_ALIGN_TOP_LEFT, MIN, MAX},                /* none */
        {FC_UNBOUNDED, FC_UNBOUNDED, FC_ALIGN_TOP_LEFT, MIN, 0},       /* all */
        {FC_UNBOUNDED, FC_UNBOUNDED, FC_ALIGN_BOTTOM_RIGHT, H, -H},    /* all */
        {-5, FC_UNBOUNDED, FC_ALIGN_TOP_LEFT, 0, MAX},                 /* all */
        {-5, FC_UNBOUNDED, FC_ALIGN_TOP_LEFT, -MAX, 3},                /* all */
        {MAX - 1, H, FC_ALIGN_TOP_LEFT, MAX, 0},                       /* j > i */
        {MAX - 1, MAX - 1, FC_ALIGN_TOP_LEFT, MAX, -3},                /* j >= i + 4 */
        {MIN, 0, FC_ALIGN_TOP_LEFT, 0, 0},                             /* none */
        {0, MIN, FC_ALIGN_BOTTOM_RIGHT, 5, 5},                         /* none */
        {-H, MAX - 1, FC_ALIGN_TOP_LEFT, MIN, MAX - 1},                /* none */
        {3, 2, FC_ALIGN_TOP_LEFT, H, H - 1},                           /* an ordinary band, far out */
    };
    for (unsigned k = 0; k < sizeof x / sizeof x[0]; k++) {
        nt_case c = base(2500 + k);
        c.B = 1, c.Sq = 5, c.Skv = 7;
        c.window = fc_window_band(x[k].left, x[k].right, x[k].align);
        c.q_start = x[k].qs, c.kv_start = x[k].ks;
        c.may_reject = "desc.vis";
        tc_context("extreme positions %u: window (%lld, %lld, align %d) q_start %lld kv_start %lld", k,
                   (long long)x[k].left, (long long)x[k].right, x[k].align, (long long)x[k].qs, (long long)x[k].ks);
        nt_run(&c);
    }
}

static void body(void)
{
    windows();
    start_positions();
    batch_windows_and_prefix();
    masks();
    fully_masked_rows();
    extreme_positions();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_visibility", body); }
