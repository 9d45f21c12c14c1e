/* nt_default and nt_prepare: seeded random data for a case, in the reference's logical layout. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "harness_internal.h"
#include "reference/kvcache.h"

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

nt_case nt_fixture(uint64_t seed, nt_sizes s)
{
    nt_case c = nt_default();
    c.seed = seed;
    c.B = s.B, c.N1 = s.N1, c.N2 = s.N2, c.D = s.D, c.Dv = s.Dv, c.Sq = s.Sq, c.Skv = s.Skv;
    c.stats = true;
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

/* Dequant / quant maps: [N·E] per channel or one value, rounded to the map's dtype. */
static double *affine_values(tc_rng *rng, int64_t n, fc_dtype dt, double lo, double hi)
{
    double *a = xcalloc((size_t)n, sizeof(double));
    for (int64_t t = 0; t < n; t++)
        a[t] = tc_round(nt_tc(dt), tc_rng_uniform(rng, lo, hi));
    return a;
}

/* int8 key/value in tensor / per-batch storage: raw values derived from the logical values (so
 * broadcast storage stays consistent), the logical values replaced by their dequantised form. */
static int8_t *int8_logical(const nt_case *c, nt_data *d, double *logical, int E, double *const map[2])
{
    const int64_t n = (int64_t)c->B * c->N2 * d->S2cap * E;
    int8_t *raw = xcalloc((size_t)n, 1);
    for (int64_t t = 0; t < n; t++) {
        const int e = (int)(t % E), h = (int)(t / E / d->S2cap % c->N2);
        double r = rint(logical[t] * 127);
        r = r > 127 ? 127 : r < -128 ? -128 : r;
        raw[t] = (int8_t)r;
        const int64_t at = c->kv.per_channel ? (int64_t)h * E + e : 0;
        logical[t] = ref_dequant(raw[t], map[0][at], map[1] ? map[1][at] : 0);
    }
    return raw;
}

/* A paged cache for one operand: physical blocks per d->table, NaN (or int8 noise) where no
 * batch's token lives, the logical operand gathered from it through the table. */
static void make_pages(const nt_case *c, nt_data *d, int which, int E, tc_rng *rng, double *logical, double **phys,
                       int8_t **phys8, double *const map[2])
{
    const int64_t bs = c->kv.block_size, ds = c->dim_stride > 1 ? c->dim_stride : 1, pad = c->pad;
    int64_t *st = d->pst[which]; /* block, slot, head, dim */
    const int64_t inner = ds * E + pad;
    st[3] = ds;
    if (c->kv.head_major_blocks) {
        st[1] = inner, st[2] = bs * inner + pad, st[0] = c->N2 * st[2] + pad;
    } else {
        st[2] = inner, st[1] = c->N2 * inner + pad, st[0] = bs * st[1] + pad;
    }
    const int64_t count = d->num_blocks * st[0];
    d->pcount[which] = count;
    double *p = xcalloc((size_t)count, sizeof(double));
    int8_t *p8 = c->kv.int8 && which < 2 ? xcalloc((size_t)count, 1) : NULL;
    char *used = xcalloc((size_t)count, 1);
    for (int b = 0; b < c->B; b++)
        for (int64_t t = 0; t < d->s2[b]; t++) {
            int64_t blk, slot;
            ref_page_of(d->table, d->table_stride, bs, b, t, &blk, &slot);
            for (int n = 0; n < c->N2; n++)
                for (int e = 0; e < E; e++)
                    used[blk * st[0] + slot * st[1] + n * st[2] + e * st[3]] = 1;
        }
    const double range = which == 1 && c->v_range > 0 ? c->v_range : c->range > 0 ? c->range : 1;
    for (int64_t blk = 0; blk < d->num_blocks; blk++)
        for (int64_t slot = 0; slot < bs; slot++)
            for (int n = 0; n < c->N2; n++)
                for (int e = 0; e < E; e++) {
                    const int64_t at = blk * st[0] + slot * st[1] + n * st[2] + e * st[3];
                    if (p8) {
                        p8[at] = (int8_t)tc_rng_int(rng, -128, 127);
                        const int64_t m = c->kv.per_channel ? (int64_t)n * E + e : 0;
                        p[at] = ref_dequant(p8[at], map[0][m], map[1] ? map[1][m] : 0);
                    } else {
                        p[at] = used[at] ? tc_round(nt_tc(c->dt), tc_rng_uniform(rng, -range, range)) : NAN;
                    }
                }
    for (int64_t t = 0; t < count; t++)
        if (!used[t] && !p8)
            p[t] = NAN;
    memset(logical, 0, sizeof(double) * (size_t)c->B * c->N2 * d->S2cap * E);
    ref_gather_pages(p, st[0], st[1], st[2], st[3], d->table, d->table_stride, bs, c->B, c->N2, E, d->s2, d->S2cap,
                     logical);
    free(used);
    *phys = p;
    if (phys8)
        *phys8 = p8;
}

/* The block table: each batch's used entries point at distinct (or, shared_blocks, sometimes
 * repeated) physical blocks in random order; entries past the used ones hold garbage that must
 * not be read. */
static void make_table(const nt_case *c, nt_data *d, tc_rng *rng)
{
    const int64_t bs = c->kv.block_size;
    d->table_stride = (c->Skv + bs - 1) / bs + tc_rng_int(rng, 0, 2);
    int64_t used = 0;
    for (int b = 0; b < c->B; b++)
        used += (d->s2[b] + bs - 1) / bs;
    d->num_blocks = used + c->kv.spare_blocks;
    if (d->num_blocks < 1)
        d->num_blocks = 1;
    int32_t *perm = xcalloc((size_t)d->num_blocks, sizeof(int32_t));
    for (int64_t t = 0; t < d->num_blocks; t++)
        perm[t] = (int32_t)t;
    for (int64_t t = d->num_blocks - 1; t > 0; t--) {
        const int64_t u = tc_rng_int(rng, 0, t);
        const int32_t x = perm[t];
        perm[t] = perm[u], perm[u] = x;
    }
    d->table = xcalloc((size_t)(c->B * d->table_stride), sizeof(int32_t));
    int64_t next = 0;
    for (int b = 0; b < c->B; b++) {
        const int64_t need = (d->s2[b] + bs - 1) / bs;
        for (int64_t k = 0; k < d->table_stride; k++) {
            int32_t *e = &d->table[b * d->table_stride + k];
            if (k < need)
                *e = c->kv.shared_blocks && next > 0 && tc_rng_bool(rng, 0.3) ? perm[tc_rng_int(rng, 0, next - 1)]
                                                                            : perm[next++];
            else
                *e = (int32_t)(tc_rng_bool(rng, 0.5) ? -1 - tc_rng_int(rng, 0, 5) : d->num_blocks + tc_rng_int(rng, 0, 1000));
        }
    }
    free(perm);
}

/* Sparse index rows (see nt_sparse_spec); values kept as int64, the library gets the dtype. */
static void make_sparse(const nt_case *c, nt_data *d, tc_rng *rng)
{
    const nt_sparse_spec *sp = &c->sparse;
    const int64_t K = sp->count, bs = sp->block_size, pad = sp->pad;
    const bool i64 = sp->dtype == FC_I64;
    int64_t *st = d->sp_st; /* batch, seq, head, entry */
    st[3] = pad > 0 ? 2 : 1;
    st[2] = K * st[3] + pad;
    st[1] = c->N2 * st[2] + pad;
    const int64_t rows = c->packed ? nt_total(d->s1, c->B) : c->Sq;
    st[0] = c->packed ? 7 : rows * st[1] + pad; /* packed: a bogus batch stride the library must ignore */
    d->sp_n = (c->packed ? 1 : c->B) * (rows > 0 ? rows : 1) * st[1] + pad + 1;
    d->sp = xcalloc((size_t)d->sp_n, sizeof(int64_t));
    const int64_t huge = i64 ? INT64_MAX : INT32_MAX;
    for (int64_t t = 0; t < d->sp_n; t++) /* gaps: values that would select something if read */
        d->sp[t] = tc_rng_int(rng, 0, 2);
    int64_t *row = xcalloc((size_t)K, sizeof(int64_t));
    for (int b = 0; b < c->B; b++)
        for (int i = 0; i < (c->packed ? d->s1[b] : c->Sq); i++)
            for (int n2 = 0; n2 < c->N2; n2++) {
                const int64_t s1 = d->s1[b], s2 = d->s2[b];
                const int64_t nb = (s2 + bs - 1) / bs;
                const int64_t thr = sp->causal ? s2 - s1 + i + 1 : s2;
                const int64_t reach = thr > 0 ? (thr + bs - 1) / bs : 0; /* blocks starting below thr */
                bool ended = false;
                for (int64_t k = 0; k < K; k++) {
                    int64_t x;
                    if (sp->all_blocks) {
                        x = k < nb ? k : -1;
                    } else if (ended) {
                        const int64_t junk[] = {-1, -7, 0, 1, huge};
                        x = junk[tc_rng_int(rng, 0, 4)];
                    } else if (tc_rng_bool(rng, sp->end_p)) {
                        x = -1 - (tc_rng_bool(rng, 0.3) ? tc_rng_int(rng, 0, 100) : 0);
                        ended = true;
                    } else if (k > 0 && tc_rng_bool(rng, sp->dup_p)) {
                        x = row[tc_rng_int(rng, 0, k - 1)];
                    } else if (reach == 0 || tc_rng_bool(rng, sp->late_p)) {
                        x = tc_rng_bool(rng, 0.2) ? huge : reach + tc_rng_int(rng, 0, nb + 2);
                    } else {
                        x = tc_rng_int(rng, 0, reach - 1);
                    }
                    row[k] = x;
                }
                if (sp->all_blocks) /* a random order of the blocks (§9 f: order does not matter) */
                    for (int64_t k = (nb < K ? nb : K) - 1; k > 0; k--) {
                        const int64_t u = tc_rng_int(rng, 0, k), t = row[k];
                        row[k] = row[u], row[u] = t;
                    }
                const int64_t base = c->packed ? (nt_tokens_before(d->s1, b) + i) * st[1] : b * st[0] + i * st[1];
                for (int64_t k = 0; k < K; k++)
                    d->sp[base + n2 * st[2] + k * st[3]] = row[k];
            }
    free(row);
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
    if (c->kv.int8) {
        const fc_dtype adt = c->kv.affine_dt;
        const int64_t nk = c->kv.per_channel ? (int64_t)c->N2 * c->D : 1, nv = c->kv.per_channel ? (int64_t)c->N2 * d.Dv : 1;
        d.kdq[0] = affine_values(&rng, nk, adt, 0.004, 0.02);
        d.vdq[0] = affine_values(&rng, nv, adt, 0.004, 0.02);
        if (c->kv.offset) {
            d.kdq[1] = affine_values(&rng, nk, adt, -8, 8);
            d.vdq[1] = affine_values(&rng, nv, adt, -8, 8);
        }
    }
    if (c->kv.mode == NT_KV_PAGED) {
        make_table(c, &d, &rng);
        make_pages(c, &d, 0, c->D, &rng, d.k, &d.kp, &d.kp8, d.kdq);
        make_pages(c, &d, 1, d.Dv, &rng, d.v, &d.vp, &d.vp8, d.vdq);
        if (c->Dr > 0)
            make_pages(c, &d, 2, c->Dr, &rng, d.kr, &d.krp, NULL, NULL);
    } else if (c->kv.int8) {
        d.k8 = int8_logical(c, &d, d.k, c->D, d.kdq);
        d.v8 = int8_logical(c, &d, d.v, d.Dv, d.vdq);
    }
    if (c->kv_starts) {
        d.kv_starts = xcalloc((size_t)c->B, sizeof(int64_t));
        for (int b = 0; b < c->B; b++)
            d.kv_starts[b] = tc_rng_bool(&rng, 0.1) ? d.s2[b] : tc_rng_int(&rng, 0, d.s2[b]);
    }
    if (c->out_dt == FC_I8) {
        const int64_t n = c->out_quant.per_channel ? (int64_t)c->N1 * d.Dv : 1;
        d.oq[0] = affine_values(&rng, n, c->out_quant.dtype, 20, 150);
        if (c->out_quant.offset)
            d.oq[1] = affine_values(&rng, n, c->out_quant.dtype, -6, 6);
    }
    if (c->sparse.on)
        make_sparse(c, &d, &rng);
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
    free(d->kv_starts), free(d->k8), free(d->v8), free(d->table), free(d->kp), free(d->vp), free(d->krp);
    free(d->kp8), free(d->vp8), free(d->sp);
    for (int t = 0; t < 2; t++)
        free(d->kdq[t]), free(d->vdq[t]), free(d->oq[t]);
    memset(d, 0, sizeof *d);
}
