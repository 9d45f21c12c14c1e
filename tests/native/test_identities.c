/* Identities of semantics §9 for the native forward, library against library (every run is also
 * checked against the reference by the harness): a plain attention, c causal equivalences, d wide
 * bands, g sink off, j dropout, k GQA.  i is in test_identity_merge.c, l in
 * test_identity_layouts.c, m in test_identity_bias.c, p in test_plan.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/tolerance.h"
#include "harness.h"

static nt_case base(uint64_t seed) { return nt_fixture(seed, (nt_sizes){2, 4, 2, 16, 12, 10, 10}); }

static void plain(void)
{
    tc_context("§9a plain attention");
    nt_case c = base(5000);
    c.Sq = 7, c.Skv = 23;
    nt_run(&c);
}


static void causal_equivalences(void)
{
    tc_context("§9c causal alignments agree when Sq = Skv");
    nt_case a = base(5100), b = a;
    a.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    b.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    nt_same_data("bottom-right vs top-left causal", &a, &b, true);

    tc_context("§9c band(Sq + Skv, 0) is causal");
    b.window = fc_window_band(a.Sq + a.Skv, 0, FC_ALIGN_BOTTOM_RIGHT);
    nt_same_data("band vs causal", &a, &b, true);

    tc_context("§9c causal equals an explicit (j > i) mask");
    b = a;
    b.window = (fc_window){0};
    b.mask.on = true, b.mask.bcast_batch = b.mask.bcast_head = true, b.mask.density = 0;
    nt_data d = nt_prepare(&b);
    for (int i = 0; i < b.Sq; i++)
        for (int j = 0; j < b.Skv; j++)
            d.mask[i * d.mask_st[2] + j * d.mask_st[3]] = j > i;
    nt_result ra, rb;
    nt_execute(&a, &d, &ra);
    nt_execute(&b, &d, &rb);
    nt_compare_results("mask vs causal", &rb, &ra, &a, true);
    nt_result_free(&ra), nt_result_free(&rb), nt_data_free(&d);
}


static void wide_bands(void)
{
    for (int align = 0; align < 2; align++) {
        tc_context("§9d band wider than Sq + Skv is no window (align %d)", align);
        nt_case a = base(5200 + align), b;
        a.Sq = 6, a.Skv = 15;
        b = a;
        b.window = fc_window_band(a.Sq + a.Skv, a.Sq + a.Skv, (fc_align)align);
        nt_same_data("wide band vs none", &a, &b, true);
    }
    tc_context("§9d all-zero mask with a wide band is no masking");
    nt_case a = base(5210), b;
    a.Sq = 6, a.Skv = 15;
    b = a;
    b.mask.on = true, b.mask.density = 0;
    b.window = fc_window_band(15, 15, FC_ALIGN_TOP_LEFT);
    nt_same_data("zero mask vs none", &a, &b, true);
}


static void sink_off(void)
{
    tc_context("§9g sink -inf equals no sink");
    nt_case a = base(5300), b;
    a.window = fc_window_band(3, 3, FC_ALIGN_TOP_LEFT); /* every row sees something */
    b = a;
    b.sink = NT_SINK_ALL_NEG_INF;
    nt_same_data("sink -inf vs none", &a, &b, true);
}

/* out/max/sum of a row merged from two parts (semantics §9i), in double. */

static void dropout(void)
{
    tc_context("§9j keep_prob 1 ignores the keep bits");
    nt_case a = base(5500), b;
    b = a;
    b.keep_bits_with_p1 = true;
    nt_same_data("keep_prob 1 with bits vs none", &a, &b, true);

    tc_context("§9j all-ones bits scale the output by 1/p and keep the statistics");
    b = a;
    b.keep_prob = 0.4, b.keep_all = true;
    nt_data d = nt_prepare(&b);
    nt_result ra, rb;
    nt_execute(&a, &d, &ra);
    nt_execute(&b, &d, &rb);
    const int64_t n = (int64_t)a.B * a.N1 * ra.S1cap * ra.Dv;
    for (int64_t k = 0; k < n; k++)
        ra.out[k] /= 0.4;
    nt_compare_results("all-ones dropout vs out/p", &rb, &ra, &a, true);
    nt_result_free(&ra), nt_result_free(&rb), nt_data_free(&d);
}


static void gqa(void)
{
    tc_context("§9k GQA equals MHA with repeated kv heads");
    nt_case g = base(5600), m;
    g.N1 = 6, g.N2 = 2, g.Skv = 13, g.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    m = g;
    m.N2 = 6;
    nt_data dg = nt_prepare(&g), dm = nt_prepare(&m);
    memcpy(dm.q, dg.q, sizeof(double) * (size_t)g.B * g.N1 * g.Sq * g.D);
    const int G = g.N1 / g.N2;
    for (int b = 0; b < g.B; b++)
        for (int h = 0; h < m.N2; h++) {
            const int64_t src = ((int64_t)b * g.N2 + h / G) * g.Skv, dst = ((int64_t)b * m.N2 + h) * m.Skv;
            memcpy(dm.k + dst * g.D, dg.k + src * g.D, sizeof(double) * (size_t)g.Skv * g.D);
            memcpy(dm.v + dst * dg.Dv, dg.v + src * dg.Dv, sizeof(double) * (size_t)g.Skv * dg.Dv);
        }
    nt_result rg, rm;
    nt_execute(&g, &dg, &rg);
    nt_execute(&m, &dm, &rm);
    nt_compare_results("GQA vs repeated MHA", &rg, &rm, &g, true);
    nt_result_free(&rg), nt_result_free(&rm), nt_data_free(&dg), nt_data_free(&dm);
}


static void body(void)
{
    plain();
    causal_equivalences();
    wide_bands();
    sink_off();
    dropout();
    gqa();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_identities", body); }
