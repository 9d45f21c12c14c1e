/*
 * The remaining features through the CANN face, forward and backward on every case: dropout (§2.7:
 * random and all-ones keep bits, the backward with the forward's bits, dense and TND with empty
 * batches), sinks and dsink (§2.6, §3.3: V3 and V5, finite and −inf, with fully masked rows), rope
 * (§2.9: V5, dq_rope and dk_rope, with dropout and mode 6), statistics that are not the forward's
 * (used as given by the backward, §8.16), innerPrecise values (the backward ignores them), and
 * everything at once.
 */
#include <stdio.h>
#include <string.h>

#include "harness_grad.h"

static void dropout(void)
{
    const fa_fn fns[] = {FA_V1, FA_V2, FA_V3};
    const double keeps[] = {0.7, 0.5, 0.9};
    for (int k = 0; k < 6; k++) {
        fag_case g = fag_case_default();
        fa_case *c = &g.f;
        c->fn = fns[k % 3];
        c->layout = k % 2 ? "BSND" : "SBH";
        c->B = 2, c->N1 = 2, c->N2 = 1, c->D = 8, c->S1 = 6, c->S2 = 11;
        c->keep_prob = keeps[k % 3];
        c->all_keep = k == 4;
        if (k >= 3)
            c->sparse_mode = 3, c->mask_rank = 2, c->mask_dims[0] = 2048, c->mask_dims[1] = 2048;
        c->seed = 4000 + (uint64_t)k;
        fa_run_bothf(&g, "dropout keepProb case %d (all ones %d)", k, c->all_keep);
    }
    const int s1[] = {3, 0, 4}, s2[] = {5, 3, 2};
    for (int k = 0; k < 2; k++) {
        fag_case g = fag_case_default();
        fa_case *c = &g.f;
        c->fn = k ? FA_V5 : FA_VARLEN;
        c->layout = "TND";
        c->B = 3, c->N1 = 2, c->N2 = 2, c->D = 8;
        memcpy(c->s1, s1, sizeof s1), memcpy(c->s2, s2, sizeof s2);
        c->keep_prob = 0.6;
        c->seed = 4100 + (uint64_t)k;
        fa_run_bothf(&g, "TND dropout (per-batch bit blocks) case %d", k);
    }
}

static void sinks(void)
{
    for (int k = 0; k < 6; k++) {
        fag_case g = fag_case_default();
        fa_case *c = &g.f;
        c->fn = FA_V3;
        c->layout = k % 2 ? "BNSD" : "BSH";
        c->B = 2, c->N1 = 4, c->N2 = 2, c->D = 8, c->S1 = k >= 4 ? 9 : 6, c->S2 = k >= 4 ? 4 : 7;
        c->sink = k % 2 ? 2 : 1;
        if (k >= 2) /* mode 3 with S1 > S2 (k >= 4): fully masked first rows */
            c->sparse_mode = 3, c->mask_rank = 4, c->mask_dims[0] = 1, c->mask_dims[1] = 1, c->mask_dims[2] = 2048,
            c->mask_dims[3] = 2048;
        c->strides = (fa_strides)(k % 3);
        c->seed = 4200 + (uint64_t)k;
        fa_run_bothf(&g, "V3 sink kind %d case %d", c->sink, k);
    }
    const int s1[] = {4, 0, 6}, s2[] = {4, 2, 3};
    for (int k = 0; k < 2; k++) {
        fag_case g = fag_case_default();
        fa_case *c = &g.f;
        c->fn = FA_V5;
        c->layout = "TND";
        c->B = 3, c->N1 = 2, c->N2 = 1, c->D = 8;
        memcpy(c->s1, s1, sizeof s1), memcpy(c->s2, s2, sizeof s2);
        c->sink = 1 + k;
        c->sparse_mode = 3, c->mask_rank = 2, c->mask_dims[0] = 2048, c->mask_dims[1] = 2048;
        c->same_as_input = k;
        c->seed = 4300 + (uint64_t)k;
        fa_run_bothf(&g, "V5 sink kind %d with fully masked rows", c->sink);
    }
}

/* Odd cases run again with "same_as_input" statistics. */
static void rope(void)
{
    const int s1[] = {5, 2, 0, 7}, s2[] = {5, 9, 3, 4};
    const int drs[] = {4, 16, 1, 64};
    for (int k = 0; k < 4; k++) {
        fag_case g = fag_case_default();
        fa_case *c = &g.f;
        c->fn = FA_V5;
        c->layout = "TND";
        c->B = 4, c->N1 = 4, c->N2 = 2, c->D = 16, c->Dr = drs[k], c->Dv = k == 3 ? 24 : 0;
        memcpy(c->s1, s1, sizeof s1), memcpy(c->s2, s2, sizeof s2);
        c->dtype = k == 1 ? TC_BF16 : k == 2 ? TC_F16 : TC_F32;
        c->strides = (fa_strides)(k % 3);
        if (k == 1)
            c->keep_prob = 0.8; /* flashc: rope with dropout */
        if (k == 2)
            c->sparse_mode = 6, c->mask_rank = 2, c->mask_dims[0] = 3072, c->mask_dims[1] = 2048, c->prefix = true,
            c->prefix_v[0] = 2, c->prefix_v[1] = 4, c->prefix_v[2] = 0, c->prefix_v[3] = 1; /* flashc: rope with mode 6 */
        c->seed = 4400 + (uint64_t)k;
        char name[64];
        snprintf(name, sizeof name, "V5 rope Dr=%d case %d", c->Dr, k);
        fa_run_both_as(name, &g, FA_V5, k % 2);
    }
}

/* Statistics that are not the forward's are used as given by the backward (no re-normalisation),
 * with and without a sink. */
static void given_statistics(void)
{
    for (int k = 0; k < 3; k++) {
        fag_case g = fag_case_default();
        fa_case *c = &g.f;
        c->fn = k == 2 ? FA_V5 : FA_V3;
        c->layout = k == 2 ? "TND" : "BSND";
        c->B = 2, c->N1 = 2, c->N2 = 1, c->D = 8, c->S1 = 5, c->S2 = 6;
        c->s1[0] = 5, c->s1[1] = 3, c->s2[0] = 6, c->s2[1] = 4;
        c->sink = k ? 1 : 0;
        c->sparse_mode = k == 1 ? 2 : 0, c->mask_rank = k == 1 ? 2 : 0, c->mask_dims[0] = c->mask_dims[1] = 2048;
        g.skew_stats = true;
        c->seed = 9500 + (uint64_t)k;
        fa_run_bothf(&g, "skewed statistics used as given, case %d", k);
    }
}

/* innerPrecise 0..2: fully masked rows are zeros in every setting (out and dq); the forward
 * validates the value, the backward reads none.  Runs through V2, and through V1 / V3 as well. */
static void inner_precise(void)
{
    const fa_fn also[] = {FA_V1, FA_V3, FA_V2};
    for (int ip = 0; ip <= 2; ip++) {
        fag_case g = fag_case_default();
        fa_case *c = &g.f;
        c->inner_precise = ip;
        c->sparse_mode = 3, c->S1 = 10, c->S2 = 4, c->mask_rank = 2, c->mask_dims[0] = 2048, c->mask_dims[1] = 2048;
        c->seed = 4500 + (uint64_t)ip;
        char name[96];
        snprintf(name, sizeof name, "innerPrecise %d: fully masked rows are zeros in every setting", ip);
        fa_run_both_as(name, &g, also[ip], false);
    }
}

/* Rope, sink, pse, mask, dropout, start indices and the token-major statistics in one V5 call,
 * and a dense V3 with pse, mask, dropout and sink. */
static void everything(void)
{
    const int s1[] = {6, 3, 0, 5}, s2[] = {6, 8, 2, 5};
    fag_case g = fag_case_default();
    fa_case *c = &g.f;
    c->fn = FA_V5;
    c->layout = "TND";
    c->dtype = TC_F16;
    c->B = 4, c->N1 = 4, c->N2 = 2, c->D = 16, c->Dr = 8, c->Dv = 12;
    memcpy(c->s1, s1, sizeof s1), memcpy(c->s2, s2, sizeof s2);
    c->sink = 2;
    c->pse_type = 3, c->pse_rank = 2, c->pse_dims[0] = 4, c->pse_dims[1] = 4;
    c->starts = true, c->q_start = 2, c->kv_start = 9;
    c->sparse_mode = 4, c->band = true, c->pre = 3, c->next = 2;
    c->mask_rank = 4, c->mask_dims[0] = 1, c->mask_dims[1] = 1, c->mask_dims[2] = 2048, c->mask_dims[3] = 2048;
    c->keep_prob = 0.75;
    c->same_as_input = true;
    c->strides = ST_GAPS;
    c->seed = 4600;
    fa_run_bothf(&g, "V5 with every feature at once");
    g = fag_case_default();
    c->fn = FA_V3;
    c->layout = "SBH";
    c->dtype = TC_BF16;
    c->B = 2, c->N1 = 4, c->N2 = 1, c->D = 16, c->Dv = 8, c->S1 = 7, c->S2 = 9;
    c->sink = 1;
    c->pse_type = 0, c->pse_rank = 4, c->pse_dims[0] = 1, c->pse_dims[1] = 4, c->pse_dims[2] = 7, c->pse_dims[3] = 9;
    c->mask_rank = 4, c->mask_dims[0] = 2, c->mask_dims[1] = 1, c->mask_dims[2] = 7, c->mask_dims[3] = 9;
    c->band = true, c->pre = 4, c->next = 1;
    c->keep_prob = 0.85;
    c->strides = ST_REVERSED;
    c->seed = 9701;
    fa_run_bothf(&g, "V3 SBH BFLOAT16 with pse, mask, band, dropout and sink");
}

int main(void)
{
    dropout();
    sinks();
    rope();
    given_statistics();
    inner_precise();
    everything();
    return tc_summary("cann_fa_features");
}
