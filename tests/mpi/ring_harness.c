#include "ring_harness.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "common/tolerance.h"

static fc_dtype fc_of(tc_dtype t) { return t == TC_F16 ? FC_F16 : t == TC_BF16 ? FC_BF16 : FC_F32; }

fc_ring_timing rh_forward_timing;

rh_case rh_draw(uint64_t seed, int ranks)
{
    tc_rng r = tc_rng_seed(seed);
    rh_case c = {0};
    c.sharding = tc_rng_bool(&r, 0.5) ? FC_RING_ZIGZAG : FC_RING_CONTIGUOUS;
    c.B = tc_rng_int(&r, 1, 2);
    c.Nkv = tc_rng_int(&r, 1, 2);
    c.Nq = c.Nkv * tc_rng_int(&r, 1, 3); /* GQA */
    static const int64_t dims[] = {8, 16, 32, 64};
    c.D = dims[tc_rng_int(&r, 0, 3)];
    c.Dv = tc_rng_bool(&r, 0.7) ? c.D : dims[tc_rng_int(&r, 0, 3)];
    c.Sq = tc_rng_int(&r, 1, 160);
    c.Skv = tc_rng_bool(&r, 0.6) ? c.Sq : tc_rng_int(&r, 1, 160);
    c.q0 = tc_rng_bool(&r, 0.7) ? 0 : tc_rng_int(&r, 0, 50);
    c.kv0 = tc_rng_bool(&r, 0.7) ? c.q0 : tc_rng_int(&r, 0, 50);
    for (int side = 0; side < 2; side++) { /* uneven cuts, empty shards included */
        int64_t *cut = side ? c.kv_cut : c.q_cut, S = side ? c.Skv : c.Sq;
        cut[0] = 0, cut[ranks] = S;
        for (int k = 1; k < ranks; k++) {
            const int64_t v = tc_rng_bool(&r, 0.15) ? cut[k - 1] : tc_rng_int(&r, cut[k - 1], S);
            cut[k] = v;
        }
    }
    static const tc_dtype dts[] = {TC_F32, TC_F32, TC_F16, TC_BF16};
    c.dt = dts[tc_rng_int(&r, 0, 3)];
    c.gdt = tc_rng_bool(&r, 0.6) ? TC_F32 : c.dt;
    const fc_align al = tc_rng_bool(&r, 0.5) ? FC_ALIGN_BOTTOM_RIGHT : FC_ALIGN_TOP_LEFT;
    switch (tc_rng_int(&r, 0, 4)) {
    case 0: c.window = (fc_window){0}; break;
    case 1: case 2: c.window = fc_window_causal(al); break;
    case 3: c.window = fc_window_band(tc_rng_int(&r, 0, 40), tc_rng_int(&r, 0, 10), al); break;
    default: c.window = fc_window_band(tc_rng_int(&r, -5, 30), tc_rng_int(&r, -5, 30), al); break;
    }
    c.prefix = tc_rng_bool(&r, 0.25) ? tc_rng_int(&r, 0, c.Skv) : -1;
    c.softcap = tc_rng_bool(&r, 0.25) ? 4.0f : 0;
    c.sink = tc_rng_bool(&r, 0.3);
    c.alibi = tc_rng_bool(&r, 0.2);
    c.order = (fc_stats_order)tc_rng_int(&r, 0, 3);
    c.replicas = c.order >= FC_STATS_KV_GROUP ? 1 : tc_rng_bool(&r, 0.5) ? 8 : 1;
    return c;
}

const char *rh_describe(const rh_case *c)
{
    static char buf[600];
    snprintf(buf, sizeof buf,
             "%s B=%lld Nq=%lld Nkv=%lld D=%lld Dv=%lld Sq=%lld Skv=%lld q0=%lld kv0=%lld %s/%s window=%d(%lld,%lld,%s) "
             "prefix=%lld softcap=%g sink=%d alibi=%d stats=%d x%lld",
             c->sharding == FC_RING_ZIGZAG ? "zigzag" : "contiguous", (long long)c->B, (long long)c->Nq,
             (long long)c->Nkv, (long long)c->D, (long long)c->Dv, (long long)c->Sq, (long long)c->Skv,
             (long long)c->q0, (long long)c->kv0, tc_dtype_name(c->dt), tc_dtype_name(c->gdt), c->window.enabled,
             c->window.left == FC_UNBOUNDED ? -1LL : (long long)c->window.left, (long long)c->window.right,
             c->window.align == FC_ALIGN_BOTTOM_RIGHT ? "br" : "tl", (long long)c->prefix, c->softcap, c->sink,
             c->alibi, (int)c->order, (long long)c->replicas);
    if (c->sharding == FC_RING_CONTIGUOUS) /* the cuts, as far as they are set */
        for (int r = 1; r < RH_MAX_RANKS && c->q_cut[r] + c->kv_cut[r] > 0; r++) {
            const size_t at = strlen(buf);
            snprintf(buf + at, sizeof buf - at, " cut%d=%lld/%lld", r, (long long)c->q_cut[r], (long long)c->kv_cut[r]);
        }
    return buf;
}

int64_t rh_shard(const rh_case *c, int side, int rank, int ranks, int64_t start[2], int64_t len[2])
{
    if (c->sharding == FC_RING_ZIGZAG)
        return fc_ring_shard(FC_RING_ZIGZAG, side ? c->Skv : c->Sq, rank, ranks, start, len);
    const int64_t *cut = side ? c->kv_cut : c->q_cut;
    start[0] = cut[rank], len[0] = cut[rank + 1] - cut[rank], start[1] = len[1] = 0;
    return len[0];
}

/* ---- buffers ------------------------------------------------------------------------------- */
static void *fill(tc_rng *r, tc_dtype t, int64_t n, double lo, double hi)
{
    void *p = calloc((size_t)(n > 0 ? n : 1), tc_dtype_size(t));
    for (int64_t k = 0; k < n; k++)
        tc_store(t, p, k, tc_rng_uniform(r, lo, hi));
    return p;
}

/* Element (b, n, s, e) of a contiguous BNSD / BSND tensor of S positions. */
static int64_t at_bnsd(int64_t N, int64_t S, int64_t E, int64_t b, int64_t n, int64_t s, int64_t e)
{
    return ((b * N + n) * S + s) * E + e;
}
static int64_t at_bsnd(int64_t N, int64_t S, int64_t E, int64_t b, int64_t n, int64_t s, int64_t e)
{
    return ((b * S + s) * N + n) * E + e;
}

/* Local row li of a shard ↔ gathered row. */
static int64_t global_row(const int64_t st[2], const int64_t ln[2], int64_t li)
{
    return li < ln[0] ? st[0] + li : st[1] + (li - ln[0]);
}

/* This rank's rows of a gathered BNSD tensor, as a local BSND tensor. */
static void *take_rows(tc_dtype t, const void *g, int64_t B, int64_t N, int64_t S, int64_t E, const int64_t st[2],
                       const int64_t ln[2])
{
    const int64_t L = ln[0] + ln[1];
    void *p = calloc((size_t)(B * N * L * E > 0 ? B * N * L * E : 1), tc_dtype_size(t));
    for (int64_t b = 0; b < B; b++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < L; i++)
                for (int64_t e = 0; e < E; e++)
                    tc_store(t, p, at_bsnd(N, L, E, b, n, i, e),
                             tc_load(t, g, at_bnsd(N, S, E, b, n, global_row(st, ln, i), e)));
    return p;
}

/* Compares the local BSND tensor y with the gathered BNSD reference r on this rank's rows;
 * M = max(1, max |r| over the whole gathered tensor) for gradients, 1 otherwise. */
static void compare_rows(const char *what, tc_dtype t, const void *y, const void *r, int64_t B, int64_t N, int64_t S,
                         int64_t E, const int64_t st[2], const int64_t ln[2], bool grad)
{
    const int64_t L = ln[0] + ln[1], n_all = B * N * S * E, n_loc = B * N * L * E;
    double *ra = malloc(sizeof(double) * (size_t)(n_all + 1)), *yv = malloc(sizeof(double) * (size_t)(n_loc + 1)),
           *rv = malloc(sizeof(double) * (size_t)(n_loc + 1));
    for (int64_t k = 0; k < n_all; k++)
        ra[k] = tc_load(t, r, k);
    int64_t m = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < L; i++)
                for (int64_t e = 0; e < E; e++, m++) {
                    yv[m] = tc_load(t, y, at_bsnd(N, L, E, b, n, i, e));
                    rv[m] = ra[at_bnsd(N, S, E, b, n, global_row(st, ln, i), e)];
                }
    tc_compare(what, yv, rv, n_loc, tc_tol_out(t), grad ? tc_grad_scale(ra, n_all) : 1);
    free(ra), free(yv), free(rv);
}

/* Replica 0 of (b, n, local row i) in the statistics order of the case. */
static int64_t stats_at(const rh_case *c, int64_t L, int64_t b, int64_t n, int64_t i)
{
    const int64_t G = c->Nq / c->Nkv;
    switch (c->order) {
    case FC_STATS_TOKEN_MAJOR: return ((b * L + i) * c->Nq + n) * c->replicas;
    case FC_STATS_KV_GROUP: return ((b * c->Nkv + n / G) * L + i) * G + n % G;
    case FC_STATS_KV_TOKEN_GROUP: return ((n / G) * c->B * L + b * L + i) * G + n % G;
    default: return ((b * c->Nq + n) * L + i) * c->replicas;
    }
}

static void compare_stats(const rh_case *c, const float *y, const float *r, int64_t L, const int64_t st[2],
                          const int64_t ln[2], bool is_max)
{
    const int64_t n_loc = c->B * c->Nq * L;
    double *yv = malloc(sizeof(double) * (size_t)(n_loc + 1)), *rv = malloc(sizeof(double) * (size_t)(n_loc + 1));
    int64_t m = 0, bad_rep = 0;
    for (int64_t b = 0; b < c->B; b++)
        for (int64_t n = 0; n < c->Nq; n++)
            for (int64_t i = 0; i < L; i++, m++) {
                const int64_t at = stats_at(c, L, b, n, i);
                yv[m] = y[at];
                rv[m] = r[(b * c->Nq + n) * c->Sq + global_row(st, ln, i)];
                for (int64_t k = 1; k < c->replicas; k++)
                    bad_rep += tc_f32_bits(y[at + k]) != tc_f32_bits(y[at]);
                /* empty rows: the sentinels bit for bit */
                if (rv[m] == -FLT_MAX)
                    bad_rep += tc_f32_bits(y[at]) != TC_NEG_FLT_MAX_BITS;
            }
    tc_compare(is_max ? "softmax max" : "softmax sum", yv, rv, n_loc, is_max ? tc_tol_max() : tc_tol_sum(), 1);
    TC_CHECK(bad_rep == 0, "%s: %lld replicas / sentinels not bit-exact", is_max ? "max" : "sum", (long long)bad_rep);
    free(yv), free(rv);
}

/* ---- the run ------------------------------------------------------------------------------- */
typedef struct rh_data {
    void *q, *k, *v, *dout, *out, *dq, *dk, *dv;
    float *max, *sum, *dsink;
} rh_data;

static void rh_free(rh_data *x)
{
    free(x->q), free(x->k), free(x->v), free(x->dout), free(x->out), free(x->dq), free(x->dk), free(x->dv);
    free(x->max), free(x->sum), free(x->dsink);
}

/* The description shared by the gathered and the local problem. */
static fc_attention_desc base_desc(const rh_case *c, const int64_t *prefix, const float *sink, const float *slopes)
{
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = c->B, d.q_heads = c->Nq, d.kv_heads = c->Nkv, d.head_dim = c->D, d.v_head_dim = c->Dv;
    d.vis.window = c->window;
    d.vis.prefix = c->prefix >= 0 ? prefix : NULL;
    d.softcap = c->softcap;
    d.sink = c->sink ? sink : NULL;
    if (c->alibi)
        d.alibi = (fc_alibi){.slopes = slopes, .stride_batch = 0, .stride_head = 1};
    return d;
}

static void run_gathered(const rh_case *c, fc_attention_desc d, rh_data *g, bool backward)
{
    const fc_dtype dt = fc_of(c->dt), gt = fc_of(c->gdt);
    d.q_len = c->Sq, d.kv_len = c->Skv;
    d.vis.q_start = c->q0, d.vis.kv_start = c->kv0;
    d.q = fc_tensor_bnsd(g->q, dt, c->Nq, c->Sq, c->D);
    d.k = fc_tensor_bnsd(g->k, dt, c->Nkv, c->Skv, c->D);
    d.v = fc_tensor_bnsd(g->v, dt, c->Nkv, c->Skv, c->Dv);
    g->out = calloc((size_t)(c->B * c->Nq * c->Sq * c->Dv), tc_dtype_size(c->dt));
    g->max = calloc((size_t)(c->B * c->Nq * c->Sq), sizeof(float));
    g->sum = calloc((size_t)(c->B * c->Nq * c->Sq), sizeof(float));
    d.out = fc_tensor_bnsd(g->out, dt, c->Nq, c->Sq, c->Dv);
    d.stats = (fc_stats){.max = g->max, .sum = g->sum, .order = FC_STATS_HEAD_MAJOR, .replicas = 1};
    fc_status st = fc_attention(&d);
    TC_CHECK(st == FC_OK, "gathered forward: %s", fc_last_error());
    if (!backward)
        return;
    g->dq = calloc((size_t)(c->B * c->Nq * c->Sq * c->D), tc_dtype_size(c->gdt));
    g->dk = calloc((size_t)(c->B * c->Nkv * c->Skv * c->D), tc_dtype_size(c->gdt));
    g->dv = calloc((size_t)(c->B * c->Nkv * c->Skv * c->Dv), tc_dtype_size(c->gdt));
    g->dsink = calloc((size_t)c->Nq, sizeof(float));
    fc_attention_grads gr = {.d_out = fc_tensor_bnsd(g->dout, dt, c->Nq, c->Sq, c->Dv),
                             .dq = fc_tensor_bnsd(g->dq, gt, c->Nq, c->Sq, c->D),
                             .dk = fc_tensor_bnsd(g->dk, gt, c->Nkv, c->Skv, c->D),
                             .dv = fc_tensor_bnsd(g->dv, gt, c->Nkv, c->Skv, c->Dv),
                             .dsink = c->sink ? g->dsink : NULL};
    st = fc_attention_backward(&d, &gr);
    TC_CHECK(st == FC_OK, "gathered backward: %s", fc_last_error());
}

void rh_run(const rh_case *c, MPI_Comm comm, bool backward)
{
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    tc_rng r = tc_rng_seed((uint64_t)(c->Sq * 1000003 + c->Skv * 7 + c->D));
    rh_data g = {0}, l = {0};
    g.q = fill(&r, c->dt, c->B * c->Nq * c->Sq * c->D, -1, 1);
    g.k = fill(&r, c->dt, c->B * c->Nkv * c->Skv * c->D, -1, 1);
    g.v = fill(&r, c->dt, c->B * c->Nkv * c->Skv * c->Dv, -1, 1);
    g.dout = fill(&r, c->dt, c->B * c->Nq * c->Sq * c->Dv, -1, 1);
    int64_t prefix[2] = {c->prefix, c->prefix > 3 ? c->prefix - 3 : c->prefix};
    float sink[16], slopes[16];
    for (int n = 0; n < 16; n++)
        sink[n] = n % 3 == 2 ? -INFINITY : (float)tc_rng_uniform(&r, -2, 2), slopes[n] = 0.05f * (float)(n + 1);
    const fc_attention_desc base = base_desc(c, prefix, sink, slopes);
    run_gathered(c, base, &g, backward);

    int64_t qs[2], ql[2], ks[2], kl[2];
    const int64_t Lq = rh_shard(c, 0, rank, ranks, qs, ql), Lk = rh_shard(c, 1, rank, ranks, ks, kl);
    const fc_dtype dt = fc_of(c->dt), gt = fc_of(c->gdt);
    l.q = take_rows(c->dt, g.q, c->B, c->Nq, c->Sq, c->D, qs, ql);
    l.k = take_rows(c->dt, g.k, c->B, c->Nkv, c->Skv, c->D, ks, kl);
    l.v = take_rows(c->dt, g.v, c->B, c->Nkv, c->Skv, c->Dv, ks, kl);
    l.dout = take_rows(c->dt, g.dout, c->B, c->Nq, c->Sq, c->Dv, qs, ql);
    const int64_t nstat = c->B * c->Nq * Lq * c->replicas + 1;
    l.out = calloc((size_t)(c->B * c->Nq * Lq * c->Dv + 1), tc_dtype_size(c->dt));
    l.max = calloc((size_t)nstat, sizeof(float)), l.sum = calloc((size_t)nstat, sizeof(float));

    fc_attention_desc d = base;
    d.q_len = Lq, d.kv_len = Lk;
    d.vis.q_start = c->sharding == FC_RING_ZIGZAG ? c->q0 : c->q0 + qs[0];
    d.vis.kv_start = c->sharding == FC_RING_ZIGZAG ? c->kv0 : c->kv0 + ks[0];
    d.q = fc_tensor_bsnd(l.q, dt, c->Nq, Lq, c->D);
    d.k = fc_tensor_bsnd(l.k, dt, c->Nkv, Lk, c->D);
    d.v = fc_tensor_bsnd(l.v, dt, c->Nkv, Lk, c->Dv);
    d.out = fc_tensor_bsnd(l.out, dt, c->Nq, Lq, c->Dv);
    d.stats = (fc_stats){.max = l.max, .sum = l.sum, .order = c->order, .replicas = c->replicas};
    fc_ring_options o = fc_ring_options_init();
    o.sharding = c->sharding, o.threads = 1, o.timeout_s = 60, o.timing = &rh_forward_timing;
    fc_status st = fc_ring_attention(&d, &o, comm);
    o.timing = NULL;
    TC_CHECK(st == FC_OK, "ring forward: %s", fc_ring_last_error());
    compare_rows("out", c->dt, l.out, g.out, c->B, c->Nq, c->Sq, c->Dv, qs, ql, false);
    compare_stats(c, l.max, g.max, Lq, qs, ql, true);
    compare_stats(c, l.sum, g.sum, Lq, qs, ql, false);

    /* determinism: another run with two threads, bit for bit */
    const size_t out_bytes = (size_t)(c->B * c->Nq * Lq * c->Dv) * tc_dtype_size(c->dt);
    void *again = calloc(out_bytes + 1, 1);
    d.out.data = again;
    o.threads = 2;
    st = fc_ring_attention(&d, &o, comm);
    TC_CHECK(st == FC_OK && memcmp(again, l.out, out_bytes) == 0, "ring forward is not bit-identical across runs / threads");
    d.out.data = l.out;
    o.threads = 1;
    free(again);

    if (backward) {
        /* the backward takes the forward's output and statistics as given: give both runs the
         * same ones (the gathered forward's rows), so the gradients are judged on equal inputs */
        free(l.out);
        l.out = take_rows(c->dt, g.out, c->B, c->Nq, c->Sq, c->Dv, qs, ql);
        d.out.data = l.out;
        for (int64_t b = 0; b < c->B; b++)
            for (int64_t n = 0; n < c->Nq; n++)
                for (int64_t i = 0; i < Lq; i++) {
                    const int64_t at = stats_at(c, Lq, b, n, i), from = (b * c->Nq + n) * c->Sq + global_row(qs, ql, i);
                    l.max[at] = g.max[from], l.sum[at] = g.sum[from];
                }
        l.dq = calloc((size_t)(c->B * c->Nq * Lq * c->D + 1), tc_dtype_size(c->gdt));
        l.dk = calloc((size_t)(c->B * c->Nkv * Lk * c->D + 1), tc_dtype_size(c->gdt));
        l.dv = calloc((size_t)(c->B * c->Nkv * Lk * c->Dv + 1), tc_dtype_size(c->gdt));
        l.dsink = calloc((size_t)c->Nq, sizeof(float));
        fc_attention_grads gr = {.d_out = fc_tensor_bsnd(l.dout, dt, c->Nq, Lq, c->Dv),
                                 .dq = fc_tensor_bsnd(l.dq, gt, c->Nq, Lq, c->D),
                                 .dk = fc_tensor_bsnd(l.dk, gt, c->Nkv, Lk, c->D),
                                 .dv = fc_tensor_bsnd(l.dv, gt, c->Nkv, Lk, c->Dv),
                                 .dsink = c->sink ? l.dsink : NULL};
        st = fc_ring_attention_backward(&d, &gr, &o, comm);
        TC_CHECK(st == FC_OK, "ring backward: %s", fc_ring_last_error());
        compare_rows("dq", c->gdt, l.dq, g.dq, c->B, c->Nq, c->Sq, c->D, qs, ql, true);
        compare_rows("dk", c->gdt, l.dk, g.dk, c->B, c->Nkv, c->Skv, c->D, ks, kl, true);
        compare_rows("dv", c->gdt, l.dv, g.dv, c->B, c->Nkv, c->Skv, c->Dv, ks, kl, true);
        if (c->sink) {
            double y[16], rr[16];
            for (int64_t n = 0; n < c->Nq; n++)
                y[n] = l.dsink[n], rr[n] = g.dsink[n];
            tc_compare("dsink", y, rr, c->Nq, tc_tol_out(TC_F32), tc_grad_scale(rr, c->Nq));
        }
    }
    rh_free(&g), rh_free(&l);
}
