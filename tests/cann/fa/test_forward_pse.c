/*
 * Position bias through the CANN face (semantics §2.4): pseType 0 (scale, then add) and 1 (add,
 * then scale) with every dense shape, the compressed 1024-row form (dense and TND, with its j <= i
 * rule), the TND bottom-right [1024, P2] block, and generated ALiBi (pseType 2, 3) with [B, N1] and
 * [N1] slopes and start indices (TND mode 8: batch 0 only).
 */
#include <stdio.h>
#include <string.h>

#include "common/harness.h"

static void pse_shape(fa_case *c, int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    c->pse_rank = rank;
    c->pse_dims[0] = d0, c->pse_dims[1] = d1, c->pse_dims[2] = d2, c->pse_dims[3] = d3;
}

static void run(const char *fmt, const fa_case *c, long a, long b)
{
    char name[160];
    snprintf(name, sizeof name, fmt, a, b);
    fa_run_case(name, c);
}

static void dense_shapes(void)
{
    const fa_fn fns[] = {FA_V1, FA_V2, FA_V3};
    const char *const layouts[] = {"BSH", "SBH", "BSND", "BNSD"};
    const int B = 2, N = 3, S1 = 5, S2 = 7;
    for (int type = 0; type <= 1; type++)
        for (int s = 0; s < 3; s++) {
            fa_case c = fa_case_default();
            c.fn = type == 0 ? (s == 2 ? FA_V3 : FA_V2) : fns[s];
            c.layout = layouts[(type * 3 + s) % 4];
            c.dtype = s == 1 ? TC_F16 : TC_F32;
            c.B = B, c.N1 = N, c.N2 = 1, c.D = 8, c.S1 = S1, c.S2 = S2;
            c.pse_type = type;
            c.strides = (fa_strides)s;
            if (s == 0)
                pse_shape(&c, 4, B, N, S1, S2);
            else if (s == 1)
                pse_shape(&c, 4, 1, N, S1, S2);
            else
                pse_shape(&c, 4, B, N, 1, S2);
            c.mask_rank = 2, c.mask_dims[0] = S1, c.mask_dims[1] = S2, c.mask_density = 0.2;
            c.seed = 3000 + (uint64_t)(type * 3 + s);
            run("pseType %ld dense shape #%ld", &c, type, s);
        }
}

/* S1 = S2 > 1024: only the last 1024 rows are passed; rows above are recovered, j > i masked. */
static void dense_compressed(void)
{
    const int S = 1030;
    const int modes[] = {0, 2, 3, 0};
    for (int k = 0; k < 4; k++) {
        fa_case c = fa_case_default();
        c.fn = k == 3 ? FA_V1 : FA_V2;
        c.layout = k % 2 ? "BSND" : "SBH";
        c.B = 2, c.N1 = 1, c.N2 = 1, c.D = 4, c.S1 = S, c.S2 = S;
        c.pse_type = k == 1 ? 0 : 1;
        pse_shape(&c, 4, k % 2 ? 1 : 2, 1, 1024, S);
        c.sparse_mode = modes[k];
        if (modes[k])
            c.mask_rank = 2, c.mask_dims[0] = 2048, c.mask_dims[1] = 2048; /* compressed causal */
        c.seed = 3100 + (uint64_t)k;
        run("dense compressed pse (1024 of %ld rows), mode %ld", &c, S, modes[k]);
    }
}

static void alibi(void)
{
    const int64_t starts[][2] = {{0, 0}, {3, 10}, {-7, 2}, {5, 0}};
    for (int k = 0; k < 8; k++) {
        fa_case c = fa_case_default();
        c.fn = k % 3 == 2 ? FA_V3 : FA_V2;
        c.layout = k % 2 ? "BNSD" : "BSH";
        c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 8, c.S1 = k % 2 ? 6 : 9, c.S2 = 7;
        c.pse_type = 2 + k % 2;
        if (k < 4)
            pse_shape(&c, 2, c.B, c.N1, 0, 0);
        else
            pse_shape(&c, 1, c.N1, 0, 0, 0);
        c.starts = k % 4 != 0, c.q_start = starts[k % 4][0], c.kv_start = starts[k % 4][1];
        if (k >= 6)
            c.sparse_mode = 3, c.mask_rank = 2, c.mask_dims[0] = 2048, c.mask_dims[1] = 2048;
        c.strides = (fa_strides)(k % 3);
        c.seed = 3200 + (uint64_t)k;
        run("ALiBi pseType %ld case %ld", &c, c.pse_type, k);
    }
}

static fa_case tnd(fa_fn fn, const int *s1, const int *s2, int B)
{
    fa_case c = fa_case_default();
    c.fn = fn;
    c.layout = "TND";
    c.B = B, c.N1 = 2, c.N2 = 1, c.D = 8;
    memcpy(c.s1, s1, sizeof(int) * (size_t)B);
    memcpy(c.s2, s2, sizeof(int) * (size_t)B);
    return c;
}

static void tnd_pse(void)
{
    const int s1[] = {3, 0, 6, 2}, s2[] = {5, 2, 6, 1};
    for (int k = 0; k < 4; k++) {
        fa_case c = tnd(k < 2 ? FA_VARLEN : FA_V5, s1, s2, 4);
        c.pse_type = k == 3 ? 0 : 1;
        pse_shape(&c, 4, k % 2 ? 1 : 4, 2, 1024, 6 + k); /* P2 >= max S2_b */
        if (k == 2)
            c.sparse_mode = 8, c.band = true, c.pre = 3, c.next = 0, c.mask_rank = 2, c.mask_dims[0] = 2048,
            c.mask_dims[1] = 2048;
        c.strides = (fa_strides)(k % 3);
        c.seed = 3300 + (uint64_t)k;
        run("TND pse [%ld, N1, 1024, P2] case %ld", &c, c.pse_dims[0], k);
    }
    /* a compressed batch (S1_b = S2_b = 1030) among short ones, modes 0, 2, 3, 7, 8 */
    const int c1[] = {4, 1030, 3}, c2[] = {6, 1030, 3};
    const int modes[] = {0, 2, 3, 7, 8};
    for (int m = 0; m < 5; m++) {
        fa_case c = tnd(m % 2 ? FA_V5 : FA_VARLEN, c1, c2, 3);
        c.N1 = 1;
        c.D = 4;
        c.pse_type = 1;
        pse_shape(&c, 4, 3, 1, 1024, 1032);
        c.sparse_mode = modes[m];
        if (modes[m])
            c.mask_rank = 2, c.mask_dims[0] = 2048, c.mask_dims[1] = 2048, c.band = true, c.pre = 2000, c.next = 1;
        c.seed = 3400 + (uint64_t)m;
        run("TND compressed pse batch, mode %ld%ld", &c, modes[m], 0);
    }
    /* ALiBi in TND: start indices for every batch, except mode 8 (batch 0 only) */
    const int a1[] = {4, 3, 5}, a2[] = {6, 3, 2};
    for (int k = 0; k < 4; k++) {
        fa_case c = tnd(FA_V5, a1, a2, 3);
        c.N1 = 2, c.N2 = 2;
        c.pse_type = 2 + k % 2;
        if (k < 2)
            pse_shape(&c, 2, 3, 2, 0, 0);
        else
            pse_shape(&c, 1, 2, 0, 0, 0);
        c.starts = true, c.q_start = 4, c.kv_start = 1 + k;
        if (k >= 2)
            c.sparse_mode = k == 2 ? 8 : 7, c.band = true, c.pre = 3, c.next = 1, c.mask_rank = 2,
            c.mask_dims[0] = 2048, c.mask_dims[1] = 2048;
        c.seed = 3500 + (uint64_t)k;
        run("TND ALiBi pseType %ld case %ld", &c, c.pse_type, k);
    }
}

int main(void)
{
    dense_shapes();
    dense_compressed();
    alibi();
    tnd_pse();
    return tc_summary("cann_forward_pse");
}
