/*
 * A seeded random sweep over the forward configuration space through the CANN face: operator,
 * layout, dtype, GQA, Dv, lengths (TND with empty batches), sparse mode with a valid mask shape,
 * band, prefix, pse type and shape, start indices, dropout, sink, rope, statistics layout, strided
 * views — every combination valid, every result against tests/reference.  argv[1] = case count,
 * argv[2] = first seed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "common/harness.h"

static int64_t pick(tc_rng *r, const int64_t *v, int n) { return v[tc_rng_int(r, 0, n - 1)]; }

static void element_mask(tc_rng *r, fa_case *c, bool tnd, int S1, int S2, int64_t T1, int64_t T2)
{
    const int form = (int)tc_rng_int(r, 0, 3);
    c->mask_density = tc_rng_uniform(r, 0.0, 0.6);
    c->mask_u8 = tc_rng_bool(r, 0.5);
    if (tnd) { /* [maxS1, maxS2] or [T1, T2], rank 2 or 4 */
        const int64_t rows = form < 2 ? S1 : T1, cols = form < 2 ? S2 : T2;
        c->mask_rank = form % 2 ? 4 : 2;
        int64_t *d = c->mask_dims;
        if (c->mask_rank == 4)
            d[0] = 1, d[1] = 1, d[2] = rows, d[3] = cols;
        else
            d[0] = rows, d[1] = cols;
        return;
    }
    const bool shared_ok = c->sparse_mode != 5 || c->B == 1;
    int f = form;
    if (!shared_ok && f >= 2)
        f -= 2;
    int64_t *d = c->mask_dims;
    switch (f) {
    case 0: c->mask_rank = 4, d[0] = c->B, d[1] = c->N1, d[2] = S1, d[3] = S2; break;
    case 1: c->mask_rank = 4, d[0] = c->B, d[1] = 1, d[2] = S1, d[3] = S2; break;
    case 2: c->mask_rank = 4, d[0] = 1, d[1] = 1, d[2] = S1, d[3] = S2; break;
    default: c->mask_rank = 2, d[0] = S1, d[1] = S2; break;
    }
}

static void compressed_mask(tc_rng *r, fa_case *c)
{
    const int64_t rows = c->sparse_mode == 6 ? 3072 : 2048;
    c->mask_density = 0.5;
    if (tc_rng_bool(r, 0.5))
        c->mask_rank = 4, c->mask_dims[0] = 1, c->mask_dims[1] = 1, c->mask_dims[2] = rows, c->mask_dims[3] = 2048;
    else
        c->mask_rank = 2, c->mask_dims[0] = rows, c->mask_dims[1] = 2048;
}

static fa_case random_case(uint64_t seed)
{
    tc_rng r = tc_rng_seed(seed);
    fa_case c = fa_case_default();
    c.seed = seed;
    c.fn = (fa_fn)tc_rng_int(&r, 0, 4);
    const bool tnd = c.fn >= FA_VARLEN;
    static const char *const dense[] = {"BSH", "SBH", "BSND", "BNSD"};
    c.layout = tnd ? "TND" : dense[tc_rng_int(&r, 0, 3)];
    c.dtype = (tc_dtype)tc_rng_int(&r, 0, 2);
    c.N2 = (int)tc_rng_int(&r, 1, 3);
    c.N1 = c.N2 * (int)tc_rng_int(&r, 1, 3);
    static const int64_t dims[] = {1, 3, 8, 16, 33};
    c.D = (int)pick(&r, dims, 5);
    c.Dv = tc_rng_bool(&r, 0.3) ? (int)pick(&r, dims, 5) : 0;
    c.strides = (fa_strides)tc_rng_int(&r, 0, 2);
    c.scale = tc_rng_uniform(&r, 0.05, 0.6);
    int S1 = 0, S2 = 0;
    int64_t T1 = 0, T2 = 0;
    if (tnd) {
        c.B = (int)tc_rng_int(&r, 1, 4);
        for (int b = 0; b < c.B; b++) {
            c.s1[b] = (int)tc_rng_int(&r, 0, 12), c.s2[b] = (int)tc_rng_int(&r, 0, 12);
            S1 = c.s1[b] > S1 ? c.s1[b] : S1, S2 = c.s2[b] > S2 ? c.s2[b] : S2;
            T1 += c.s1[b], T2 += c.s2[b];
        }
        if (T1 == 0)
            c.s1[0] = 1, T1 = 1, S1 = S1 ? S1 : 1;
        if (T2 == 0)
            c.s2[0] = 1, T2 = 1, S2 = S2 ? S2 : 1;
        static const int64_t modes[] = {0, 1, 2, 3, 4, 6, 7, 8};
        c.sparse_mode = (int)pick(&r, modes, 8);
    } else {
        c.B = (int)tc_rng_int(&r, 1, 3);
        S1 = c.S1 = (int)tc_rng_int(&r, 1, 20);
        S2 = c.S2 = (int)tc_rng_int(&r, 1, 20);
        c.sparse_mode = (int)tc_rng_int(&r, 0, 6);
    }
    /* the mask: the mode's shape, or none (rule 0) */
    if (tc_rng_bool(&r, 0.8)) {
        if (c.sparse_mode == 0 || c.sparse_mode == 1 || c.sparse_mode == 5)
            element_mask(&r, &c, tnd, S1, S2, T1, T2);
        else
            compressed_mask(&r, &c);
    }
    static const int64_t bands[] = {0, 1, 3, -2, 7, 25, 2147483647, -2147483647};
    c.band = tc_rng_bool(&r, 0.6);
    c.pre = pick(&r, bands, 8), c.next = pick(&r, bands, 8);
    if (c.sparse_mode == 6) {
        c.prefix = true;
        for (int b = 0; b < c.B; b++)
            c.prefix_v[b] = tc_rng_int(&r, 0, S2 + 2);
    }
    /* pse: V1 and VarLen know only type 1; the 1024-row TND form costs little at these sizes */
    if (tc_rng_bool(&r, 0.4)) {
        const bool typed = c.fn == FA_V2 || c.fn == FA_V3 || c.fn == FA_V5;
        c.pse_type = typed ? (int)tc_rng_int(&r, 0, 3) : 1;
        int64_t *d = c.pse_dims;
        if (c.pse_type >= 2) {
            if (tc_rng_bool(&r, 0.5))
                c.pse_rank = 2, d[0] = c.B, d[1] = c.N1;
            else
                c.pse_rank = 1, d[0] = c.N1;
        } else if (tnd) {
            c.pse_rank = 4, d[0] = tc_rng_bool(&r, 0.5) ? c.B : 1, d[1] = c.N1, d[2] = 1024, d[3] = S2 + tc_rng_int(&r, 0, 3);
        } else {
            const int form = (int)tc_rng_int(&r, 0, 2);
            c.pse_rank = 4, d[0] = form == 1 ? 1 : c.B, d[1] = c.N1, d[2] = form == 2 ? 1 : S1, d[3] = S2;
        }
        c.starts = typed && tc_rng_bool(&r, 0.5);
        c.q_start = tc_rng_int(&r, -5, 5), c.kv_start = tc_rng_int(&r, -5, 5);
    }
    if (tc_rng_bool(&r, 0.3)) {
        c.keep_prob = tc_rng_uniform(&r, 0.5, 0.95);
        c.all_keep = tc_rng_bool(&r, 0.2);
    }
    if ((c.fn == FA_V3 || c.fn == FA_V5) && tc_rng_bool(&r, 0.4))
        c.sink = (int)tc_rng_int(&r, 1, 2);
    if (c.fn == FA_V5) {
        c.Dr = tc_rng_bool(&r, 0.4) ? (int)tc_rng_int(&r, 1, 16) : 0;
        c.same_as_input = tc_rng_bool(&r, 0.5);
    }
    c.stats_nt = tnd && tc_rng_bool(&r, 0.5);
    c.inner_precise = (int)tc_rng_int(&r, 0, 2);
    return c;
}

int main(int argc, char **argv)
{
    const int cases = argc > 1 ? atoi(argv[1]) : 150;
    const uint64_t seed0 = argc > 2 ? strtoull(argv[2], NULL, 10) : 9000;
    static const char *const fns[] = {"V1", "V2", "V3", "VarLen", "V5"};
    for (int k = 0; k < cases; k++) {
        const fa_case c = random_case(seed0 + (uint64_t)k);
        char name[200];
        snprintf(name, sizeof name, "seed %llu: %s %s %s B=%d N=%d/%d D=%d Dv=%d Dr=%d mode %d mask rank %d pse %d/%d "
                 "keep %.2f sink %d",
                 (unsigned long long)c.seed, fns[c.fn], c.layout, tc_dtype_name(c.dtype), c.B, c.N1, c.N2, c.D, c.Dv,
                 c.Dr, c.sparse_mode, c.mask_rank, c.pse_rank, c.pse_type, c.keep_prob, c.sink);
        fa_run_case(name, &c);
    }
    return tc_summary("cann_forward_sweep");
}
