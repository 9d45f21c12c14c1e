/*
 * Visibility through the CANN face, forward and backward on every case (semantics §2.5, §3.3):
 * every sparseMode 0–8 with its mask shapes (element masks of every accepted shape, both TND
 * readings, compressed C2048 / C3072 tensors whose contents are random and must not be read), bands
 * with negative and extreme pre/next tokens, prefixes, rule 0 (no mask, no masking), modes 7/8 band
 * batches and fully masked rows (out rows and dq rows exactly 0, kv rows no query reaches 0).
 * Where the backward's tests ran a case through another operator (V1/V3, V5 with "same_as_input"
 * statistics), the case runs a second time that way.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness_grad.h"

static fag_case dense(int mode, int S1, int S2)
{
    fag_case g = fag_case_default();
    fa_case *c = &g.f;
    c->B = 2, c->N1 = 2, c->N2 = 1, c->D = 8, c->S1 = S1, c->S2 = S2;
    c->sparse_mode = mode;
    c->seed = 1000 + (uint64_t)mode * 37 + (uint64_t)S1 * 5 + (uint64_t)S2;
    return g;
}

static void run(const char *fmt, fag_case *g, long a, long b, fa_fn other_fn, bool other_sil)
{
    char name[160];
    snprintf(name, sizeof name, fmt, a, b);
    fa_run_both_as(name, g, other_fn, other_sil);
}

/* Modes 0, 1, 5: every accepted element-mask shape, with and without a band. */
static void element_masks(void)
{
    const int64_t B = 2, N = 2, S1 = 6, S2 = 9;
    const int64_t shapes[4][5] = {{4, B, N, S1, S2}, {4, B, 1, S1, S2}, {4, 1, 1, S1, S2}, {2, S1, S2, 0, 0}};
    for (int mode = 0; mode <= 1; mode++)
        for (int s = 0; s < 4; s++)
            for (int band = 0; band < 2; band++) {
                fag_case g = dense(mode, (int)S1, (int)S2);
                fa_case *c = &g.f;
                fa_mask_shape(c, (int)shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], shapes[s][4]);
                c->mask_u8 = s % 2;
                c->band = band, c->pre = 2, c->next = 1; /* mode 1 ignores the band */
                c->layout = s % 2 ? "BSH" : "BNSD";
                c->strides = (fa_strides)(s % 3);
                run("mode %ld element mask shape #%ld", &g, mode, s * 2 + band, s == 3 && band ? FA_V1 : FA_V2, false);
            }
    /* mode 5: B-dimensioned masks for B > 1, shared [S1, S2] / [1, 1, S1, S2] only for B = 1 */
    for (int s = 0; s < 4; s++) {
        fag_case g = dense(5, 6, 9);
        fa_case *c = &g.f;
        if (s >= 2)
            c->B = 1;
        fa_mask_shape(c, (int)shapes[s][0], s < 2 ? c->B : shapes[s][1], shapes[s][2], shapes[s][3], shapes[s][4]);
        run("mode 5 element mask shape #%ld (B=%ld)", &g, s, c->B, FA_V3, false);
    }
}

/* Modes 0 and 4: band arithmetic with negative values, a band that excludes the diagonal, extremes. */
static void bands(void)
{
    const int64_t pn[][2] = {{2, 1}, {9, -3}, {-2, 5}, {0, 0}, {INT64_MAX, INT64_MAX}, {INT64_MAX, INT64_MIN},
                             {INT64_MIN, INT64_MAX}, {-100, -100}, {1, -1}};
    for (size_t k = 0; k < sizeof pn / sizeof pn[0]; k++)
        for (int mode = 0; mode <= 4; mode += 4) {
            fag_case g = dense(mode, k % 2 ? 9 : 5, k % 2 ? 5 : 9);
            fa_case *c = &g.f;
            if (mode == 0)
                fa_mask_shape(c, 2, c->S1, c->S2, 0, 0), c->mask_density = 0.1;
            else
                fa_mask_compressed(c, k % 2);
            c->band = true, c->pre = pn[k][0], c->next = pn[k][1];
            run("mode %ld band case %ld", &g, mode, (long)k, c->fn, false);
        }
}

/* Causal modes and prefix, S1 < S2, S1 = S2, S1 > S2 (mode 3 then has fully masked rows). */
static void causal_and_prefix(void)
{
    const int lens[][2] = {{5, 9}, {7, 7}, {9, 4}};
    for (int l = 0; l < 3; l++) {
        for (int mode = 2; mode <= 3; mode++) {
            fag_case g = dense(mode, lens[l][0], lens[l][1]);
            fa_mask_compressed(&g.f, l == 1);
            g.f.layout = l == 2 ? "SBH" : "BSND";
            run("mode %ld lens #%ld", &g, mode, l, mode == 2 ? FA_V1 : FA_V3, false);
        }
        const int64_t prefixes[][2] = {{0, 3}, {2, 100}, {9, 1}};
        for (int p = 0; p < 3; p++) {
            fag_case g = dense(6, lens[l][0], lens[l][1]);
            fa_mask_compressed(&g.f, p == 1);
            g.f.prefix = true, g.f.prefix_v[0] = prefixes[p][0], g.f.prefix_v[1] = prefixes[p][1];
            run("mode 6 lens #%ld prefix #%ld", &g, l, p, g.f.fn, false);
        }
    }
}

/* Rule 0: without a mask tensor nothing is masked in any mode (pre/next/prefix ignored). */
static void rule_zero(void)
{
    for (int mode = 0; mode <= 6; mode++) {
        fag_case g = dense(mode, 9, 5);
        g.f.band = true, g.f.pre = -3, g.f.next = -3;
        g.f.prefix = mode == 6;
        run("mode %ld without attenMask sees everything%ld", &g, mode, 0, g.f.fn, false);
    }
}

/* Odd modes run through VarLen, and again through V5 with "same_as_input" statistics. */
static fag_case tnd(int mode, const int *s1, const int *s2, int B)
{
    fag_case g = fag_case_default();
    fa_case *c = &g.f;
    c->fn = mode % 2 ? FA_VARLEN : FA_V5;
    c->layout = "TND";
    c->B = B, c->N1 = 2, c->N2 = 2, c->D = 8;
    memcpy(c->s1, s1, sizeof(int) * (size_t)B);
    memcpy(c->s2, s2, sizeof(int) * (size_t)B);
    c->sparse_mode = mode;
    c->seed = 2000 + (uint64_t)mode;
    return g;
}

static void run_tnd(const char *fmt, fag_case *g, long a, long b) { run(fmt, g, a, b, FA_V5, g->f.sparse_mode % 2); }

static void tnd_modes(void)
{
    const int s1[] = {3, 0, 5, 2}, s2[] = {4, 2, 5, 6}; /* max (5, 6), totals (10, 17) */
    /* element masks: top-left [maxS1, maxS2] and diagonal [T1, T2], rank 2 and 4 */
    for (int mode = 0; mode <= 1; mode++)
        for (int s = 0; s < 4; s++) {
            fag_case g = tnd(mode, s1, s2, 4);
            fa_case *c = &g.f;
            const int64_t r = s < 2 ? 5 : 10, col = s < 2 ? 6 : 17;
            if (s % 2)
                fa_mask_shape(c, 4, 1, 1, r, col);
            else
                fa_mask_shape(c, 2, r, col, 0, 0);
            c->band = mode == 0, c->pre = 1, c->next = 2;
            c->strides = (fa_strides)(s % 3);
            run_tnd("TND mode %ld element mask #%ld", &g, mode, s);
        }
    for (int mode = 2; mode <= 8; mode++) {
        if (mode == 5)
            continue;
        fag_case g = tnd(mode, s1, s2, 4);
        fa_case *c = &g.f;
        fa_mask_compressed(c, mode % 2);
        c->band = true, c->pre = 2, c->next = mode == 7 ? -1 : 1;
        if (mode == 6)
            c->prefix = true, c->prefix_v[0] = 1, c->prefix_v[1] = 0, c->prefix_v[2] = 7, c->prefix_v[3] = 2;
        run_tnd("TND mode %ld compressed mask%ld", &g, mode, 0);
    }
    /* mode 3 with S1_b > S2_b (fully masked first rows), accepted in TND */
    const int a1[] = {6, 2}, a2[] = {2, 6};
    fag_case g = tnd(3, a1, a2, 2);
    fa_mask_compressed(&g.f, false);
    run_tnd("TND mode 3 with S1_b > S2_b (fully masked rows)%ld%ld", &g, 0, 0);
    /* the worked example of §2.5: last batch Sq = 2, Skv = 6, pre = 6, next = -2 → j <= i + 2 */
    const int w1[] = {3, 2, 0}, w2[] = {3, 6, 4};
    g = tnd(7, w1, w2, 3);
    fa_mask_compressed(&g.f, false);
    g.f.band = true, g.f.pre = 6, g.f.next = -2;
    run_tnd("TND mode 7 worked example (band batch = last with rows)%ld%ld", &g, 0, 0);
    /* mode 8: the band batch is the first with rows (batch 0 empty here) */
    const int e1[] = {0, 4, 3}, e2[] = {2, 5, 3};
    g = tnd(8, e1, e2, 3);
    fa_mask_compressed(&g.f, true);
    g.f.band = true, g.f.pre = 1, g.f.next = 0;
    run_tnd("TND mode 8 band batch after an empty batch%ld%ld", &g, 0, 0);
}

int main(void)
{
    element_masks();
    bands();
    causal_and_prefix();
    rule_zero();
    tnd_modes();
    return tc_summary("cann_fa_masks");
}
