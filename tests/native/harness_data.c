/* nt_default and nt_prepare: seeded random data for a case, in the reference's logical layout. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "harness_internal.h"

nt_case nt_default(void)
{
    nt_case c;
    memset(&c, 0, sizeof c);
    c.seed = 1;
    c.B = c.N1 = c.N2 = 1;
    c.D = 16;
    c.Sq = c.Skv = 8;
    c.dt = c.out_dt = FC_F32;
    c.keep_prob = 1;
    c.replicas = 1;
    c.mask.dtype = FC_U8;
    c.mask.density = 0.3;
    c.bias.dtype = FC_F32;
    return c;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        abort();
    return p;
}

/* Random values laid out through the operand's strides: storage positions are drawn once, so
 * broadcast strides give consistent logical data. */
static double *fill_operand(const nt_case *c, nt_data *d, nt_operand which, tc_rng *rng)
{
    const bool kv = which == NT_K || which == NT_V || which == NT_KR;
    const int E = which == NT_Q || which == NT_K ? c->D : which == NT_QR || which == NT_KR ? c->Dr : d->Dv;
    const int N = kv ? c->N2 : c->N1, cap = kv ? d->S2cap : d->S1cap;
    const int *len = kv ? d->s2 : d->s1;
    if (E == 0)
        return NULL;
    const nt_geom g = nt_operand_geom(c, d, which);
    double *store = xcalloc((size_t)g.count, sizeof(double));
    for (int64_t t = 0; t < g.count; t++)
        store[t] = NAN;
    double *logical = xcalloc((size_t)c->B * N * cap * E, sizeof(double));
    const double range = which == NT_V && c->v_range > 0 ? c->v_range : c->range > 0 ? c->range : 1;
    for (int b = 0; b < c->B; b++)
        for (int n = 0; n < N; n++)
            for (int s = 0; s < (c->packed ? len[b] : cap); s++)
                for (int e = 0; e < E; e++) {
                    double *at = store + nt_offset(c, d, &g, which, b, n, s, e);
                    if (isnan(*at))
                        *at = tc_round(nt_tc(c->dt), tc_rng_uniform(rng, -range, range));
                    logical[(((int64_t)b * N + n) * cap + s) * E + e] = *at;
                }
    free(store);
    return logical;
}

static int max_of(const int *v, int n)
{
    int m = 1; /* at least one row of storage */
    for (int k = 0; k < n; k++)
        m = v[k] > m ? v[k] : m;
    return m;
}

static void make_bias(const nt_case *c, nt_data *d, tc_rng *rng)
{
    const nt_bias_spec *s = &c->bias;
    const int64_t Bb = s->bcast_batch ? 1 : c->B, Nb = s->bcast_head ? 1 : c->N1;
    d->bias_rows = s->bcast_row ? 1 : (s->compressed ? s->rows : d->S1cap) + s->extra_rows;
    d->bias_cols = d->S2cap + s->extra_cols;
    const int64_t rows = d->bias_rows, cols = s->bcast_col ? 1 : d->bias_cols, pad = c->pad;
    int64_t *st = d->bias_st; /* batch, head, row, col */
    st[3] = s->bcast_col ? 0 : 1;
    st[2] = s->bcast_row ? 0 : cols + pad;
    st[1] = s->bcast_head ? 0 : rows * (cols + pad) + pad;
    st[0] = s->bcast_batch ? 0 : Nb * (rows * (cols + pad) + pad);
    d->bias_n = Bb * Nb * (rows * (cols + pad) + pad);
    d->bias = xcalloc((size_t)d->bias_n, sizeof(double));
    for (int64_t t = 0; t < d->bias_n; t++)
        d->bias[t] = tc_round(nt_tc(s->dtype), tc_rng_uniform(rng, -2, 2));
}

static void make_mask(const nt_case *c, nt_data *d, tc_rng *rng)
{
    const nt_mask_spec *s = &c->mask;
    /* by_tokens: one [T1, T2] block per head; otherwise [S1cap, S2cap] per (batch, head) */
    const int64_t T1 = nt_total(d->s1, c->B), T2 = nt_total(d->s2, c->B);
    const int64_t rows = s->by_tokens ? (T1 > 0 ? T1 : 1) : d->S1cap;
    const int64_t cols = s->by_tokens ? (T2 > 0 ? T2 : 1) : d->S2cap;
    const int64_t Bm = s->bcast_batch || s->by_tokens ? 1 : c->B, Nm = s->bcast_head ? 1 : c->N1;
    int64_t *st = d->mask_st;
    st[3] = s->bcast_col ? 0 : 1;
    st[2] = s->bcast_row ? 0 : (s->bcast_col ? 1 : cols);
    st[1] = s->bcast_head ? 0 : rows * cols;
    /* by_tokens blocks start at the batch's token offsets: the batch stride must be ignored, so it
     * gets a value that would shift every later batch if it were used */
    st[0] = s->by_tokens ? 5 : s->bcast_batch ? 0 : Nm * rows * cols;
    d->mask_n = Bm * Nm * rows * cols;
    d->mask = xcalloc((size_t)d->mask_n, 1);
    static const uint8_t hidden[] = {1, 2, 0x7f, 0x80, 0xff}; /* any nonzero byte hides */
    for (int64_t t = 0; t < d->mask_n; t++)
        d->mask[t] = tc_rng_bool(rng, s->density) ? hidden[tc_rng_int(rng, 0, 4)] : 0;
}

static int64_t rand_side(tc_rng *rng, int span)
{
    switch (tc_rng_int(rng, 0, 4)) {
    case 0: return FC_UNBOUNDED;
    case 1: return tc_rng_int(rng, -3, 0);
    default: return tc_rng_int(rng, 0, span + 2);
    }
}

nt_data nt_prepare(const nt_case *c)
{
    nt_data d;
    memset(&d, 0, sizeof d);
    tc_rng rng = tc_rng_seed(c->seed * 0x9E3779B97F4A7C15ull + 17);
    d.Dv = c->Dv > 0 ? c->Dv : c->D;
    d.s1 = xcalloc((size_t)c->B, sizeof(int));
    d.s2 = xcalloc((size_t)c->B, sizeof(int));
    for (int b = 0; b < c->B; b++) {
        d.s1[b] = c->sq ? c->sq[b] : c->Sq;
        d.s2[b] = c->skv ? c->skv[b] : c->Skv;
    }
    d.S1cap = c->packed ? max_of(d.s1, c->B) : c->Sq;
    d.S2cap = c->packed ? max_of(d.s2, c->B) : c->Skv;

    d.q = fill_operand(c, &d, NT_Q, &rng);
    d.k = fill_operand(c, &d, NT_K, &rng);
    d.v = fill_operand(c, &d, NT_V, &rng);
    d.qr = fill_operand(c, &d, NT_QR, &rng);
    d.kr = fill_operand(c, &d, NT_KR, &rng);
    if (c->bias.on)
        make_bias(c, &d, &rng);
    if (c->mask.on)
        make_mask(c, &d, &rng);
    if (c->alibi.on) {
        d.slope_st[0] = c->alibi.per_batch ? c->N1 : 0;
        d.slope_st[1] = 1;
        d.slopes_n = (int64_t)(c->alibi.per_batch ? c->B : 1) * c->N1;
        d.slopes = xcalloc((size_t)d.slopes_n, sizeof(float));
        for (int64_t t = 0; t < d.slopes_n; t++)
            d.slopes[t] = (float)tc_rng_uniform(&rng, 0.01, 1.0);
    }
    if (c->sink != NT_SINK_NONE) {
        d.sink = xcalloc((size_t)c->N1, sizeof(float));
        for (int n = 0; n < c->N1; n++) {
            const bool ninf = c->sink == NT_SINK_ALL_NEG_INF || (c->sink == NT_SINK_SOME_NEG_INF && n % 2 == 0);
            d.sink[n] = ninf ? -INFINITY : (float)tc_rng_uniform(&rng, -1, 2);
        }
    }
    if (c->prefix) {
        d.prefix = xcalloc((size_t)c->B, sizeof(int64_t));
        for (int b = 0; b < c->B; b++)
            d.prefix[b] = tc_rng_int(&rng, 0, d.s2[b] + 2);
    }
    if (c->batch_windows) {
        d.bwin = xcalloc((size_t)c->B, sizeof(fc_window));
        for (int b = 0; b < c->B; b++) {
            const int span = d.s1[b] + d.s2[b];
            d.bwin[b] = (fc_window){.enabled = tc_rng_bool(&rng, 0.85), .left = rand_side(&rng, span),
                                    .right = rand_side(&rng, span),
                                    .align = tc_rng_bool(&rng, 0.5) ? FC_ALIGN_BOTTOM_RIGHT : FC_ALIGN_TOP_LEFT};
        }
    }
    const bool drop = (c->keep_prob > 0 && c->keep_prob < 1) || c->keep_bits_with_p1;
    if (drop) {
        int64_t bits = 0;
        for (int b = 0; b < c->B; b++)
            bits += (int64_t)c->N1 * d.s1[b] * d.s2[b];
        d.keep_n = (bits + 7) / 8;
        d.keep = xcalloc((size_t)d.keep_n, 1);
        const double p = c->keep_prob > 0 && c->keep_prob < 1 ? c->keep_prob : 0.6;
        for (int64_t t = 0; t < d.keep_n; t++) {
            uint8_t byte = 0;
            for (int k = 0; k < 8; k++)
                byte |= (uint8_t)((c->keep_all || tc_rng_bool(&rng, p)) << k);
            d.keep[t] = byte;
        }
    }
    return d;
}

void nt_data_free(nt_data *d)
{
    free(d->s1), free(d->s2);
    free(d->q), free(d->k), free(d->v), free(d->qr), free(d->kr);
    free(d->bias), free(d->mask), free(d->slopes), free(d->sink), free(d->prefix), free(d->bwin), free(d->keep);
    memset(d, 0, sizeof *d);
}
