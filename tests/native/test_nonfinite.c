/* Non-finite inputs through the native API (semantics §0.3): NaN and ±inf in q, in k and v at
 * visible and at hidden positions (windows, mask tensors, per-batch lengths), in the bias, the
 * sink and d_out, and in the statistics given to the backward; forward, backward, decode (the
 * few-row dot-product score path, keys read in place, flash-decoding splits) and block-sparse
 * attention, on the kernel path named by argv[1].  The reference applies §0.3 itself; outputs are
 * compared with NaN exactly where it has NaN (and ±inf where it has that inf), finite and within
 * tolerance elsewhere.  Every case also checks that its reference holds both non-finite and
 * finite values, so that neither propagation nor containment can pass vacuously. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/check.h"
#include "harness.h"
#include "harness_bwd.h"
#include "harness_internal.h"
#include "harness_nonfinite.h"

static void body_forward(void)
{
    for (int dt = 0; dt < 3; dt++)
        nf_dense_suite((fc_dtype)dt, NULL, true);
    for (int g = 1; g <= 4; g++)
        for (int dt = 0; dt < 3; dt++)
            if (!((g == 2 || g == 3) && dt != (g == 2 ? 1 : 2))) /* G = 2, 3: one dtype each */
                nf_decode_suite(g, (fc_dtype)dt, NULL);
    nf_sparse_suite(nt_default().dt, NULL);
}

/* ---- backward ---------------------------------------------------------------------------- */

typedef struct nf_stat {
    int b, n, i;
    float max, sum;
} nf_stat;
static nf_stat g_stats[2]; /* given statistics replaced for these rows (b = -1: none) */

static void edit_stats(const nt_case *c, int b, int n, int i, float *max, float *sum)
{
    (void)c;
    for (int k = 0; k < 2; k++)
        if (b == g_stats[k].b && n == g_stats[k].n && i == g_stats[k].i)
            *max = g_stats[k].max, *sum = g_stats[k].sum;
}

static void backward(const char *what, const nt_case *c, const nf_put *puts, int n)
{
    tc_context("backward: %s", what);
    nt_bwd o = nt_bwd_default();
    o.edit_stats = edit_stats;
    o.check_threads = true;
    nf_backward(c, puts, n, &o);
    g_stats[0].b = g_stats[1].b = -1;
}

static void backward_all(void)
{
    const double nan = NAN;
    nt_case c = nf_dense_case(400);
    c.Sq = 90, c.Skv = 100;
    backward("NaN query row; NaN key at column 80 (rows < 80 do not see it)", &c,
             (nf_put[]){{NF_Q, 1, 2, 30, 0, 3, nan}, {NF_K, 0, 1, 0, 80, 0, nan}}, 2);
    backward("NaN and +inf values under a causal window", &c,
             (nf_put[]){{NF_V, 0, 0, 0, 65, 5, nan}, {NF_V, 1, 1, 0, 85, 2, INFINITY}}, 2);
    backward("NaN in d_out (D of the row NaN): hidden columns take no part", &c, (nf_put[]){{NF_DOUT, 0, 3, 50, 0, 4, nan}}, 1);
    backward("NaN / +inf keys, +inf / -inf queries, NaN d_out where rows of their tiles do not see them", &c,
             (nf_put[]){{NF_K, 0, 1, 0, 80, 0, nan},
                        {NF_K, 1, 0, 0, 37, 2, INFINITY},
                        {NF_Q, 0, 2, 40, 0, 3, INFINITY},
                        {NF_DOUT, 1, 3, 20, 0, 1, nan},
                        {NF_Q, 1, 1, 75, 0, 0, -INFINITY}},
             5);
    g_stats[0] = (nf_stat){1, 1, 60, NAN, 2.0f};
    g_stats[1] = (nf_stat){0, 2, 70, 1.0f, NAN};
    backward("a NaN maximum given for one row, a NaN sum for another", &c, NULL, 0);

    c = nf_dense_case(401);
    c.Sq = 70, c.Skv = 80, c.window = (fc_window){0}, c.mask.on = true, c.mask.density = 0.4;
    backward("mask tensor: NaN key, -inf value, NaN query", &c,
             (nf_put[]){{NF_K, 1, 0, 0, 7, 2, nan}, {NF_V, 0, 1, 0, 70, 1, -INFINITY}, {NF_Q, 0, 0, 33, 0, 0, nan}}, 3);
    c.softcap = 4;
    backward("mask tensor with softcap: NaN key", &c, (nf_put[]){{NF_K, 0, 1, 0, 75, 0, nan}}, 1);

    c = nf_dense_case(402);
    c.Sq = 40, c.Skv = 50, c.bias.on = true, c.sink = NT_SINK_FINITE;
    backward("bias NaN visible / hidden, a -inf bias row; NaN sink (dsink NaN)", &c,
             (nf_put[]){{NF_BIAS, 0, 1, 5, 3, 0, nan},
                        {NF_BIAS, 0, 1, 3, 5, 0, nan},
                        {NF_BIAS_ROW, 1, 0, 9, 0, 0, -INFINITY},
                        {NF_SINK, 0, 2, 0, 0, 0, nan}},
             4);

    static const int sq[4] = {1, 1, 1, 1}, skv[4] = {300, 200, 1, 0};
    c = nt_default();
    c.seed = 403, c.B = 4, c.N1 = 4, c.N2 = 2, c.D = 32, c.Dv = 24, c.Sq = 1, c.Skv = 300;
    c.lens = true, c.sq = sq, c.skv = skv, c.layout = NT_BSND, c.stats = true, c.mask.on = true;
    backward("decode shape with a mask: NaN key, NaN beyond a kv length", &c,
             (nf_put[]){{NF_K, 0, 1, 0, 250, 3, nan}, {NF_V, 1, 1, 0, 250, 0, nan}}, 2);

    c = nf_sparse_case(404, true);
    backward("sparse: NaN key and query", &c, (nf_put[]){{NF_K, 0, 0, 0, 17, 1, nan}, {NF_Q, 1, 3, 2, 0, 0, nan}}, 2);
}

static void body(void)
{
    g_stats[0].b = g_stats[1].b = -1;
    body_forward();
    backward_all();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_nonfinite", body); }
