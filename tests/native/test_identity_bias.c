/* Semantics §9m for the native bias forms: after-scale bias scale·b equals before-scale bias b;
 * generated ALiBi equals the explicit bias −slope·|Δ| (or ·sqrt|Δ|); a Toeplitz bias compressed to
 * R rows equals the full bias under a causal window. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/tolerance.h"
#include "harness.h"

static nt_case base(uint64_t seed) { return nt_fixture(seed, (nt_sizes){2, 4, 2, 16, 12, 10, 10}); }

static void bias_orders(void)
{
    tc_context("§9m bias after scale (scale·bias) equals bias before scale");
    nt_case a = base(5800), b;
    a.scale = 0.3, a.bias.on = true, a.bias.order = FC_BIAS_BEFORE_SCALE;
    b = a;
    b.bias.order = FC_BIAS_AFTER_SCALE;
    nt_data da = nt_prepare(&a), db = nt_prepare(&b); /* same seed and shapes: same operands */
    for (int64_t k = 0; k < db.bias_n; k++)
        db.bias[k] = (double)(float)(0.3 * da.bias[k]);
    nt_result ra, rb;
    nt_execute(&a, &da, &ra);
    nt_execute(&b, &db, &rb);
    nt_compare_results("after(scale·bias) vs before(bias)", &rb, &ra, &a, true);
    nt_result_free(&ra), nt_result_free(&rb), nt_data_free(&da), nt_data_free(&db);
}

static void alibi_as_bias(void)
{
    for (int sq = 0; sq < 2; sq++) {
        tc_context("§9m ALiBi equals the explicit bias -slope·%s", sq ? "sqrt|Δ|" : "|Δ|");
        nt_case al = base(5810 + sq), ex;
        al.Skv = 15, al.alibi.on = true, al.alibi.per_batch = true, al.alibi.sqrt_distance = sq;
        al.q_start = 7, al.kv_start = 2, al.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
        ex = al;
        ex.alibi.on = false, ex.bias.on = true;
        nt_data dl = nt_prepare(&al), dx = nt_prepare(&ex);
        for (int bb = 0; bb < al.B; bb++)
            for (int n = 0; n < al.N1; n++)
                for (int i = 0; i < al.Sq; i++)
                    for (int j = 0; j < al.Skv; j++) {
                        const double slope = dl.slopes[bb * dl.slope_st[0] + n * dl.slope_st[1]];
                        const double dist = fabs((double)((j + al.kv_start) - (i + al.q_start)));
                        dx.bias[bb * dx.bias_st[0] + n * dx.bias_st[1] + i * dx.bias_st[2] + j * dx.bias_st[3]] =
                            (double)(float)(-slope * (sq ? sqrt(dist) : dist));
                    }
        nt_result rl, rx;
        nt_execute(&al, &dl, &rl);
        nt_data mix = dl; /* dl's operands with dx's bias */
        mix.bias = dx.bias, mix.bias_n = dx.bias_n, mix.bias_rows = dx.bias_rows, mix.bias_cols = dx.bias_cols;
        memcpy(mix.bias_st, dx.bias_st, sizeof dx.bias_st);
        nt_execute(&ex, &mix, &rx);
        nt_compare_results("alibi vs explicit bias", &rx, &rl, &al, true);
        nt_result_free(&rl), nt_result_free(&rx), nt_data_free(&dl), nt_data_free(&dx);
    }
}

static void compressed_as_full(void)
{
    tc_context("§9m a Toeplitz bias compressed to R rows equals the full bias under a causal mask");
    nt_case full = base(5820), comp;
    full.Sq = full.Skv = 20, full.bias.on = true, full.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    comp = full;
    comp.bias.bottom_right = comp.bias.compressed = true, comp.bias.rows = 6;
    nt_data df = nt_prepare(&full), dc = nt_prepare(&comp);
    /* t(d) per (batch, head): a smooth function of d = j − i */
    for (int bb = 0; bb < full.B; bb++)
        for (int n = 0; n < full.N1; n++) {
            for (int i = 0; i < 20; i++)
                for (int j = 0; j < 20; j++)
                    df.bias[bb * df.bias_st[0] + n * df.bias_st[1] + i * df.bias_st[2] + j * df.bias_st[3]] =
                        (double)(float)(0.1 * (bb + 1) * sin(0.7 * (j - i) + n));
            for (int m = 0; m < 6; m++)
                for (int j = 0; j < 20; j++)
                    dc.bias[bb * dc.bias_st[0] + n * dc.bias_st[1] + m * dc.bias_st[2] + j * dc.bias_st[3]] =
                        (double)(float)(0.1 * (bb + 1) * sin(0.7 * (j - (20 - 6 + m)) + n));
        }
    nt_data mix = df;
    mix.bias = dc.bias, mix.bias_n = dc.bias_n, mix.bias_rows = dc.bias_rows, mix.bias_cols = dc.bias_cols;
    memcpy(mix.bias_st, dc.bias_st, sizeof dc.bias_st);
    nt_result rf, rc;
    nt_execute(&full, &df, &rf);
    nt_execute(&comp, &mix, &rc);
    nt_compare_results("compressed vs full bias", &rc, &rf, &full, true);
    nt_result_free(&rf), nt_result_free(&rc), nt_data_free(&df), nt_data_free(&dc);
}


static void body(void)
{
    bias_orders();
    alibi_as_bias();
    compressed_as_full();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_identity_bias", body); }
