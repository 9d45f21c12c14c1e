/*
 * Forward and backward through the CANN face on every case: every layout (BSH, SBH, BSND, BNSD,
 * TND), every dtype, every operator (forward V1/V2/V3/VarLen/V5; ScoreGrad V1/V2/V3,
 * UnpaddingScoreGradV5), GQA/MQA (dk, dv summed over the group), Dv != D, strided views (gaps,
 * reversed dim order), zero-length TND batches and both statistics layouts (softmaxOutLayout /
 * softmaxInLayout "" and "same_as_input", declared [T1, N1, 8] or [N1, T1, 8]), against
 * tests/reference.
 */
#include <stdio.h>
#include <string.h>

#include "harness_grad.h"

static const char *const dense_layouts[] = {"BSH", "SBH", "BSND", "BNSD"};
static const char *const fn_names[] = {"V1", "V2", "V3", "VarLen", "V5"};

static void dense_sweep(void)
{
    const tc_dtype dts[] = {TC_F32, TC_F16, TC_BF16};
    const fa_fn fns[] = {FA_V1, FA_V2, FA_V3};
    int k = 0;
    for (int l = 0; l < 4; l++)
        for (int d = 0; d < 3; d++)
            for (int st = 0; st < 3; st++, k++) {
                fag_case g = fag_case_default();
                fa_case *c = &g.f;
                c->fn = fns[k % 3];
                c->layout = dense_layouts[l];
                c->dtype = dts[d];
                c->strides = (fa_strides)st;
                c->B = 2, c->N1 = 4, c->N2 = k % 2 ? 2 : 1, c->D = 16, c->Dv = k % 4 == 0 ? 8 : 0;
                c->S1 = 5 + k % 3, c->S2 = 7 + k % 5;
                c->seed = 100 + (uint64_t)k;
                char name[96];
                snprintf(name, sizeof name, "%s %s %s strides=%d N2=%d", fn_names[c->fn], c->layout,
                         tc_dtype_name(c->dtype), st, c->N2);
                fa_run_both(name, &g);
            }
}

/* VarLen (statistics "") and V5 with both orders; V5 "" rows run again with "same_as_input". */
static void tnd_sweep(void)
{
    static const int lens[][2][5] = {
        {{3, 0, 5, 2, 1}, {4, 2, 5, 0, 3}},
        {{1, 1, 1, 1, 1}, {7, 1, 3, 2, 9}},
        {{6, 4, 0, 0, 2}, {6, 4, 1, 0, 2}},
    };
    const tc_dtype dts[] = {TC_F32, TC_F16, TC_BF16};
    for (int v = 0; v < 3; v++)
        for (int fn = 0; fn < 2; fn++)
            for (int st = 0; st < 3; st++) {
                fag_case g = fag_case_default();
                fa_case *c = &g.f;
                c->fn = fn ? FA_V5 : FA_VARLEN;
                c->layout = "TND";
                c->dtype = dts[(v + st) % 3];
                c->strides = (fa_strides)st;
                c->B = 5, c->N1 = 4, c->N2 = v == 1 ? 1 : 2, c->D = 8, c->Dv = v == 2 ? 12 : 0;
                memcpy(c->s1, lens[v][0], sizeof lens[v][0]);
                memcpy(c->s2, lens[v][1], sizeof lens[v][1]);
                c->same_as_input = fn && st == 1;
                c->stats_nt = st == 2;
                c->seed = 300 + (uint64_t)(v * 6 + fn * 3 + st);
                char name[112];
                snprintf(name, sizeof name, "%s TND lens#%d %s strides=%d same_as_input=%d stats[N1,T1,8]=%d",
                         fn_names[c->fn], v, tc_dtype_name(c->dtype), st, c->same_as_input, c->stats_nt);
                fa_run_both_as(name, &g, c->fn, fn == 1);
            }
    /* the forward VarLen pairs with UnpaddingScoreGradV5 (its statistics are "" ordered) */
    fag_case g = fag_case_default();
    g.f.fn = FA_VARLEN;
    g.f.layout = "TND";
    g.f.B = 3, g.f.N1 = 2, g.f.N2 = 2, g.f.D = 8;
    const int s1[] = {4, 2, 5}, s2[] = {3, 6, 5};
    memcpy(g.f.s1, s1, sizeof s1), memcpy(g.f.s2, s2, sizeof s2);
    g.f.seed = 5399;
    fa_run_both("VarLen forward, UnpaddingScoreGradV5 backward", &g);
}

/* The seed samples' shapes with real data: SBH, one head, D = 128, S = 256, FLOAT16, an element
 * mask; and TND with the same sizes, an all-visible-band UINT8 mask, a sink, "same_as_input". */
static void sample_shapes(void)
{
    fag_case g = fag_case_default();
    fa_case *c = &g.f;
    c->layout = "SBH";
    c->dtype = TC_F16;
    c->B = 1, c->N1 = 1, c->N2 = 1, c->D = 128, c->S1 = 256, c->S2 = 256;
    c->scale = 0.088388;
    c->mask_rank = 2, c->mask_dims[0] = 256, c->mask_dims[1] = 256, c->mask_u8 = true, c->mask_density = 0.1;
    c->band = true, c->pre = 65536, c->next = 65536;
    fa_run_both("sample shape SBH FLOAT16 D=128 S=256 with an element mask", &g);
    g = fag_case_default();
    c->fn = FA_V5;
    c->layout = "TND";
    c->dtype = TC_F16;
    c->B = 1, c->N1 = 1, c->N2 = 1, c->D = 128, c->s1[0] = 256, c->s2[0] = 256;
    c->scale = 0.088388;
    c->mask_rank = 2, c->mask_dims[0] = 256, c->mask_dims[1] = 256, c->mask_u8 = true, c->mask_density = 0.1;
    c->band = true, c->pre = 65536, c->next = 65536;
    c->sink = 1;
    c->same_as_input = true;
    c->seed = 5400;
    fa_run_both("sample shape TND FLOAT16 D=128 T=256 with an element mask and a sink", &g);
}

/* Larger heads and sequences than one tile; MQA; several kv tiles per query. */
static void bigger(void)
{
    fag_case g = fag_case_default();
    fa_case *c = &g.f;
    c->layout = "BSND";
    c->B = 2, c->N1 = 3, c->N2 = 1, c->D = 72, c->Dv = 40, c->S1 = 130, c->S2 = 97;
    c->dtype = TC_BF16;
    fa_run_both("BSND BFLOAT16 MQA D=72 Dv=40 S1=130 S2=97", &g);
    g = fag_case_default();
    c->fn = FA_V1;
    c->layout = "BNSD";
    c->B = 1, c->N1 = 4, c->N2 = 2, c->D = 64, c->S1 = 200, c->S2 = 300;
    c->seed = 5501;
    fa_run_both("BNSD FLOAT32 GQA D=64 S1=200 S2=300", &g);
}

int main(void)
{
    dense_sweep();
    tnd_sweep();
    sample_shapes();
    bigger();
    return tc_summary("cann_fa_layouts");
}
