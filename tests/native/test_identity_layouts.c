/* Semantics §9l: the same logical data in every padded layout and in TND with equal lengths gives
 * the same results; TND with B batches equals B separate dense calls. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/tolerance.h"
#include "harness.h"

static nt_case base(uint64_t seed) { return nt_fixture(seed, (nt_sizes){2, 4, 2, 16, 12, 10, 10}); }

static void layouts(void)
{
    tc_context("§9l the same data in every layout");
    nt_case a = base(5700);
    a.Sq = 9, a.Skv = 14, a.dt = a.out_dt = FC_F16, a.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    for (int l = NT_BSND; l <= NT_SBH; l++) {
        nt_case b = a;
        b.layout = (nt_layout)l;
        nt_same_data("layout vs BNSD", &a, &b, true);
    }
    tc_context("§9l TND with equal lengths equals dense");
    const int sq[2] = {9, 9}, skv[2] = {14, 14};
    nt_case t = a;
    t.packed = true, t.sq = sq, t.skv = skv;
    nt_same_data("TND vs BNSD", &a, &t, true);
}

/* TND with B batches equals B separate dense calls. */

/* TND with B batches equals B separate dense calls. */
static void tnd_as_separate_calls(void)
{
    tc_context("§9l TND batches equal separate dense calls");
    static const int sq[4] = {5, 0, 8, 3}, skv[4] = {7, 4, 2, 0};
    nt_case t = base(5710);
    t.B = 4, t.packed = true, t.sq = sq, t.skv = skv, t.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    nt_data dt = nt_prepare(&t);
    nt_result rt;
    nt_execute(&t, &dt, &rt);
    for (int b = 0; b < t.B; b++) {
        if (sq[b] == 0 || skv[b] == 0)
            continue; /* a dense call needs at least one position on each side */
        nt_case one = t;
        one.B = 1, one.packed = false, one.sq = one.skv = NULL, one.Sq = sq[b], one.Skv = skv[b];
        nt_data d1 = nt_prepare(&one);
        for (int n = 0; n < t.N1; n++)
            memcpy(d1.q + (int64_t)n * sq[b] * t.D, dt.q + ((int64_t)b * t.N1 + n) * dt.S1cap * t.D,
                   sizeof(double) * (size_t)sq[b] * t.D);
        for (int n = 0; n < t.N2; n++) {
            memcpy(d1.k + (int64_t)n * skv[b] * t.D, dt.k + ((int64_t)b * t.N2 + n) * dt.S2cap * t.D,
                   sizeof(double) * (size_t)skv[b] * t.D);
            memcpy(d1.v + (int64_t)n * skv[b] * dt.Dv, dt.v + ((int64_t)b * t.N2 + n) * dt.S2cap * dt.Dv,
                   sizeof(double) * (size_t)skv[b] * dt.Dv);
        }
        nt_result r1;
        nt_execute(&one, &d1, &r1);
        double *y = calloc((size_t)t.N1 * sq[b] * dt.Dv, sizeof(double)), *ym = calloc((size_t)t.N1 * sq[b], sizeof(double));
        for (int n = 0; n < t.N1; n++)
            for (int i = 0; i < sq[b]; i++) {
                const int64_t rp = ((int64_t)b * t.N1 + n) * rt.S1cap + i, r1i = (int64_t)n * sq[b] + i;
                memcpy(y + r1i * dt.Dv, rt.out + rp * dt.Dv, sizeof(double) * (size_t)dt.Dv);
                ym[r1i] = rt.smax[rp];
            }
        tc_compare("TND batch vs its dense call: out", y, r1.out, (int64_t)t.N1 * sq[b] * dt.Dv, tc_tol_out(TC_F32), 1);
        tc_compare("TND batch vs its dense call: max", ym, r1.smax, (int64_t)t.N1 * sq[b], tc_tol_max(), 1);
        free(y), free(ym);
        nt_result_free(&r1), nt_data_free(&d1);
    }
    nt_result_free(&rt), nt_data_free(&dt);
}


static void body(void)
{
    layouts();
    tnd_as_separate_calls();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_identity_layouts", body); }
