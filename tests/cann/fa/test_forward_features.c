/*
 * The remaining forward features through the CANN face: dropout (§2.7: random and all-ones keep
 * bits, dense and TND with empty batches), sinks (§2.6: V3 and VarLen V5, finite and −inf, with
 * fully masked rows), rope (§2.9: VarLen V5, with dropout and mode 6), innerPrecise values, and
 * everything at once.
 */
#include <stdio.h>
#include <string.h>

#include "common/harness.h"

static void run(const char *fmt, const fa_case *c, long a, long b)
{
    char name[160];
    snprintf(name, sizeof name, fmt, a, b);
    fa_run_case(name, c);
}

static void dropout(void)
{
    const fa_fn fns[] = {FA_V1, FA_V2, FA_V3};
    const double keeps[] = {0.7, 0.5, 0.9};
    for (int k = 0; k < 6; k++) {
        fa_case c = fa_case_default();
        c.fn = fns[k % 3];
        c.layout = k % 2 ? "BSND" : "SBH";
        c.B = 2, c.N1 = 2, c.N2 = 1, c.D = 8, c.S1 = 6, c.S2 = 11;
        c.keep_prob = keeps[k % 3];
        c.all_keep = k == 4;
        if (k >= 3)
            c.sparse_mode = 3, c.mask_rank = 2, c.mask_dims[0] = 2048, c.mask_dims[1] = 2048;
        c.seed = 4000 + (uint64_t)k;
        run("dropout keepProb case %ld (all ones %ld)", &c, k, c.all_keep);
    }
    const int s1[] = {3, 0, 4}, s2[] = {5, 3, 2};
    for (int k = 0; k < 2; k++) {
        fa_case c = fa_case_default();
        c.fn = k ? FA_V5 : FA_VARLEN;
        c.layout = "TND";
        c.B = 3, c.N1 = 2, c.N2 = 2, c.D = 8;
        memcpy(c.s1, s1, sizeof s1), memcpy(c.s2, s2, sizeof s2);
        c.keep_prob = 0.6;
        c.seed = 4100 + (uint64_t)k;
        run("TND dropout (per-batch bit blocks) case %ld%ld", &c, k, 0);
    }
}

static void sinks(void)
{
    for (int k = 0; k < 6; k++) {
        fa_case c = fa_case_default();
        c.fn = FA_V3;
        c.layout = k % 2 ? "BNSD" : "BSH";
        c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 8, c.S1 = k >= 4 ? 9 : 6, c.S2 = k >= 4 ? 4 : 7;
        c.sink = k % 2 ? 2 : 1;
        if (k >= 2) /* mode 3 with S1 > S2 (k >= 4): fully masked first rows */
            c.sparse_mode = 3, c.mask_rank = 4, c.mask_dims[0] = 1, c.mask_dims[1] = 1, c.mask_dims[2] = 2048,
            c.mask_dims[3] = 2048;
        c.strides = (fa_strides)(k % 3);
        c.seed = 4200 + (uint64_t)k;
        run("V3 sink kind %ld case %ld", &c, c.sink, k);
    }
    const int s1[] = {4, 0, 6}, s2[] = {4, 2, 3};
    for (int k = 0; k < 2; k++) {
        fa_case c = fa_case_default();
        c.fn = FA_V5;
        c.layout = "TND";
        c.B = 3, c.N1 = 2, c.N2 = 1, c.D = 8;
        memcpy(c.s1, s1, sizeof s1), memcpy(c.s2, s2, sizeof s2);
        c.sink = 1 + k;
        c.sparse_mode = 3, c.mask_rank = 2, c.mask_dims[0] = 2048, c.mask_dims[1] = 2048;
        c.same_as_input = k;
        c.seed = 4300 + (uint64_t)k;
        run("V5 sink kind %ld with fully masked rows%ld", &c, c.sink, 0);
    }
}

static void rope(void)
{
    const int s1[] = {5, 2, 0, 7}, s2[] = {5, 9, 3, 4};
    const int drs[] = {4, 16, 1, 64};
    for (int k = 0; k < 4; k++) {
        fa_case c = fa_case_default();
        c.fn = FA_V5;
        c.layout = "TND";
        c.B = 4, c.N1 = 4, c.N2 = 2, c.D = 16, c.Dr = drs[k], c.Dv = k == 3 ? 24 : 0;
        memcpy(c.s1, s1, sizeof s1), memcpy(c.s2, s2, sizeof s2);
        c.dtype = k == 1 ? TC_BF16 : k == 2 ? TC_F16 : TC_F32;
        c.strides = (fa_strides)(k % 3);
        if (k == 1)
            c.keep_prob = 0.8; /* flashc: rope with dropout */
        if (k == 2)
            c.sparse_mode = 6, c.mask_rank = 2, c.mask_dims[0] = 3072, c.mask_dims[1] = 2048, c.prefix = true,
            c.prefix_v[0] = 2, c.prefix_v[1] = 4, c.prefix_v[2] = 0, c.prefix_v[3] = 1; /* flashc: rope with mode 6 */
        c.seed = 4400 + (uint64_t)k;
        run("V5 rope Dr=%ld case %ld", &c, c.Dr, k);
    }
}

static void inner_precise(void)
{
    for (int ip = 0; ip <= 2; ip++) {
        fa_case c = fa_case_default();
        c.inner_precise = ip;
        c.sparse_mode = 3, c.S1 = 10, c.S2 = 4, c.mask_rank = 2, c.mask_dims[0] = 2048, c.mask_dims[1] = 2048;
        c.seed = 4500 + (uint64_t)ip;
        run("innerPrecise %ld: fully masked rows are zeros in every setting%ld", &c, ip, 0);
    }
}

/* Rope, sink, pse, mask, dropout, start indices and the token-major statistics in one V5 call. */
static void everything(void)
{
    const int s1[] = {6, 3, 0, 5}, s2[] = {6, 8, 2, 5};
    fa_case c = fa_case_default();
    c.fn = FA_V5;
    c.layout = "TND";
    c.dtype = TC_F16;
    c.B = 4, c.N1 = 4, c.N2 = 2, c.D = 16, c.Dr = 8, c.Dv = 12;
    memcpy(c.s1, s1, sizeof s1), memcpy(c.s2, s2, sizeof s2);
    c.sink = 2;
    c.pse_type = 3, c.pse_rank = 2, c.pse_dims[0] = 4, c.pse_dims[1] = 4;
    c.starts = true, c.q_start = 2, c.kv_start = 9;
    c.sparse_mode = 4, c.band = true, c.pre = 3, c.next = 2;
    c.mask_rank = 4, c.mask_dims[0] = 1, c.mask_dims[1] = 1, c.mask_dims[2] = 2048, c.mask_dims[3] = 2048;
    c.keep_prob = 0.75;
    c.same_as_input = true;
    c.strides = ST_GAPS;
    c.seed = 4600;
    run("V5 with every feature at once%ld%ld", &c, 0, 0);
}

int main(void)
{
    dropout();
    sinks();
    rope();
    inner_precise();
    everything();
    return tc_summary("cann_forward_features");
}
