/*
 * Position bias through the CANN face, forward and backward on every case (semantics §2.4, §3.3:
 * ∂x/∂s = scale for every pseType): pseType 0 (scale, then add) and 1 (add, then scale) with every
 * dense shape, the compressed 1024-row form (dense and TND, with its j <= i rule), the TND
 * bottom-right [1024, P2] block, and generated ALiBi (pseType 2, 3) with [B, N1] and [N1] slopes and
 * start indices (TND mode 8: batch 0 only).
 */
#include <stdio.h>
#include <string.h>

#include "harness_grad.h"

static void pse_shape(fa_case *c, int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    c->pse_rank = rank;
    c->pse_dims[0] = d0, c->pse_dims[1] = d1, c->pse_dims[2] = d2, c->pse_dims[3] = d3;
}

static void dense_shapes(void)
{
    const fa_fn fns[] = {FA_V1, FA_V2, FA_V3};
    const char *const layouts[] = {"BSH", "SBH", "BSND", "BNSD"};
    const int B = 2, N = 3, S1 = 5, S2 = 7;
    for (int type = 0; type <= 1; type++)
        for (int s = 0; s < 3; s++) {
            fag_case g = fag_case_default();
            fa_case *c = &g.f;
            c->fn = type == 0 ? (s == 2 ? FA_V3 : FA_V2) : fns[s];
            c->layout = layouts[(type * 3 + s) % 4];
            c->dtype = s == 1 ? TC_F16 : TC_F32;
            c->B = B, c->N1 = N, c->N2 = 1, c->D = 8, c->S1 = S1, c->S2 = S2;
            c->pse_type = type;
            c->strides = (fa_strides)s;
            if (s == 0)
                pse_shape(c, 4, B, N, S1, S2);
            else if (s == 1)
                pse_shape(c, 4, 1, N, S1, S2);
            else
                pse_shape(c, 4, B, N, 1, S2);
            c->mask_rank = 2, c->mask_dims[0] = S1, c->mask_dims[1] = S2, c->mask_density = 0.2;
            c->seed = 3000 + (uint64_t)(type * 3 + s);
            fa_run_bothf(&g, "pseType %d dense shape #%d", type, s);
        }
}

/* S1 = S2 > 1024: only the last 1024 rows are passed; rows above are recovered, j > i masked. */
static void dense_compressed(void)
{
    const int S = 1030;
    static const struct {
        fa_fn fn;
        const char *layout;
        int B, pse_type, pse_b, mode;
        uint64_t seed;
    } rows[] = {
        {FA_V2, "SBH", 2, 1, 2, 0, 3100}, {FA_V2, "BSND", 2, 0, 1, 2, 3101}, {FA_V2, "SBH", 2, 1, 2, 3, 3102},
        {FA_V1, "BSND", 2, 1, 1, 0, 3103}, {FA_V2, "SBH", 1, 0, 1, 0, 8100}, {FA_V1, "BSND", 1, 1, 1, 3, 8101},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        fag_case g = fag_case_default();
        fa_case *c = &g.f;
        c->fn = rows[k].fn;
        c->layout = rows[k].layout;
        c->B = rows[k].B, c->N1 = 1, c->N2 = 1, c->D = 4, c->S1 = S, c->S2 = S;
        c->pse_type = rows[k].pse_type;
        pse_shape(c, 4, rows[k].pse_b, 1, 1024, S);
        c->sparse_mode = rows[k].mode;
        if (rows[k].mode)
            c->mask_rank = 2, c->mask_dims[0] = 2048, c->mask_dims[1] = 2048; /* compressed causal */
        c->seed = rows[k].seed;
        fa_run_bothf(&g, "dense compressed pse (1024 of %d rows), mode %d", S, rows[k].mode);
    }
}

static void alibi(void)
{
    const int64_t starts[][2] = {{0, 0}, {3, 10}, {-7, 2}, {5, 0}};
    for (int k = 0; k < 8; k++) {
        fag_case g = fag_case_default();
        fa_case *c = &g.f;
        c->fn = k % 3 == 2 ? FA_V3 : FA_V2;
        c->layout = k % 2 ? "BNSD" : "BSH";
        c->B = 2, c->N1 = 4, c->N2 = 2, c->D = 8, c->S1 = k % 2 ? 6 : 9, c->S2 = 7;
        c->pse_type = 2 + k % 2;
        if (k < 4)
            pse_shape(c, 2, c->B, c->N1, 0, 0);
        else
            pse_shape(c, 1, c->N1, 0, 0, 0);
        c->starts = k % 4 != 0, c->q_start = starts[k % 4][0], c->kv_start = starts[k % 4][1];
        if (k >= 6)
            c->sparse_mode = 3, c->mask_rank = 2, c->mask_dims[0] = 2048, c->mask_dims[1] = 2048;
        c->strides = (fa_strides)(k % 3);
        c->seed = 3200 + (uint64_t)k;
        fa_run_bothf(&g, "ALiBi pseType %d case %d", c->pse_type, k);
    }
}

static fag_case tnd(fa_fn fn, const int *s1, const int *s2, int B)
{
    fag_case g = fag_case_default();
    fa_case *c = &g.f;
    c->fn = fn;
    c->layout = "TND";
    c->B = B, c->N1 = 2, c->N2 = 1, c->D = 8;
    memcpy(c->s1, s1, sizeof(int) * (size_t)B);
    memcpy(c->s2, s2, sizeof(int) * (size_t)B);
    return g;
}

static void tnd_pse(void)
{
    /* [B or 1, N1, 1024, P2] blocks, P2 >= max S2_b; VarLen and V5 forwards, both V5 statistics orders */
    const int s1[] = {3, 0, 6, 2}, s2[] = {5, 2, 6, 1};
    for (int k = 0; k < 6; k++) {
        const int shape = k < 4 ? k : 2 * k - 7; /* rows 4, 5: shapes 1 and 3 again, "same_as_input" */
        fag_case g = tnd(k < 2 ? FA_VARLEN : FA_V5, s1, s2, 4);
        fa_case *c = &g.f;
        c->pse_type = shape == 3 ? 0 : 1;
        pse_shape(c, 4, shape % 2 ? 1 : 4, 2, 1024, 6 + shape);
        if (shape == 2)
            c->sparse_mode = 8, c->band = true, c->pre = 3, c->next = 0, c->mask_rank = 2, c->mask_dims[0] = 2048,
            c->mask_dims[1] = 2048;
        c->strides = (fa_strides)(shape % 3);
        c->same_as_input = k >= 4;
        c->seed = k < 4 ? 3300 + (uint64_t)k : 8300 + (uint64_t)shape;
        fa_run_bothf(&g, "TND pse [%lld, N1, 1024, P2] case %d", (long long)c->pse_dims[0], k);
    }
    /* a compressed batch (S1_b = S2_b = 1030) among short ones, modes 0, 2, 3, 7, 8 */
    const int c1[] = {4, 1030, 3}, c2[] = {6, 1030, 3};
    const int modes[] = {0, 2, 3, 7, 8};
    for (int m = 0; m < 5; m++) {
        fag_case g = tnd(m % 2 ? FA_V5 : FA_VARLEN, c1, c2, 3);
        fa_case *c = &g.f;
        c->N1 = 1, c->D = 4, c->pse_type = 1;
        pse_shape(c, 4, 3, 1, 1024, 1032);
        c->sparse_mode = modes[m];
        if (modes[m])
            c->mask_rank = 2, c->mask_dims[0] = 2048, c->mask_dims[1] = 2048, c->band = true, c->pre = 2000, c->next = 1;
        c->seed = 3400 + (uint64_t)m;
        fa_run_bothf(&g, "TND compressed pse batch, mode %d", modes[m]);
    }
    /* ALiBi in TND: start indices for every batch, except mode 8 (batch 0 only) */
    const int a1[] = {4, 3, 5}, a2[] = {6, 3, 2};
    for (int k = 0; k < 4; k++) {
        fag_case g = tnd(FA_V5, a1, a2, 3);
        fa_case *c = &g.f;
        c->N1 = 2, c->N2 = 2;
        c->pse_type = 2 + k % 2;
        if (k < 2)
            pse_shape(c, 2, 3, 2, 0, 0);
        else
            pse_shape(c, 1, 2, 0, 0, 0);
        c->starts = true, c->q_start = 4, c->kv_start = 1 + k;
        if (k >= 2)
            c->sparse_mode = k == 2 ? 8 : 7, c->band = true, c->pre = 3, c->next = 1, c->mask_rank = 2,
            c->mask_dims[0] = 2048, c->mask_dims[1] = 2048;
        c->seed = 3500 + (uint64_t)k;
        fa_run_bothf(&g, "TND ALiBi pseType %d case %d", c->pse_type, k);
    }
}

int main(void)
{
    dense_shapes();
    dense_compressed();
    alibi();
    tnd_pse();
    return tc_summary("cann_fa_pse");
}
