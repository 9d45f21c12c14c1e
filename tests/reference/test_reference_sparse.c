/* The sparse oracle: §5.3 selection by hand; forward and backward against the dense oracle with
 * the selection multiset expressed as hooks (count 0 → hidden, count c → + ln c on the score:
 * a position selected c times weighs c·exp(x − m)); backward against finite differences; BSND
 * and TND addressing and statistics shapes agree. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "reference/sparse.h"

static void selection(void)
{
    tc_context("selection");
    int64_t pos[64];
    const int32_t row[6] = {2, 0, 2, -1, 1, 1};
    const int S1 = 4, S2 = 10;
    ref_sparse p = {.B = 1, .N1 = 1, .N2 = 1, .D = 1, .Dv = 1, .S1cap = 4, .S2cap = 10, .S1 = &S1, .S2 = &S2,
                    .indices = row, .K = 6, .block_size = 3, .st_entry = 1};
    int64_t n = ref_sparse_select(&p, 0, 0, 0, pos);
    const int64_t want[] = {6, 7, 8, 0, 1, 2, 6, 7, 8};
    bool same = n == 9;
    for (int t = 0; same && t < 9; t++)
        same = pos[t] == want[t];
    TC_CHECK(same, "blocks 2, 0, 2 then stop at -1 (n %lld)", (long long)n);
    p.causal = true; /* thr = 10 − 4 + i + 1: i = 0 → 7 */
    n = ref_sparse_select(&p, 0, 0, 0, pos);
    TC_CHECK(n == 5 && pos[0] == 6 && pos[1] == 0 && pos[3] == 2 && pos[4] == 6, "causal cuts block 2 at 7 (n %lld)",
             (long long)n);
    const int32_t late[3] = {3, 2, 0}; /* block 3 starts at 9 ≥ thr 7: skipped, not a stop */
    p.indices = late, p.K = 3;
    n = ref_sparse_select(&p, 0, 0, 0, pos);
    TC_CHECK(n == 4 && pos[0] == 6 && pos[1] == 0, "blocks at/after the threshold skipped (n %lld)", (long long)n);
    n = ref_sparse_select(&p, 0, 3, 0, pos); /* thr = 10: block 3 is [9, 10) */
    TC_CHECK(n == 7 && pos[0] == 9 && pos[1] == 6 && pos[4] == 0, "last row: block 3 cut at S2 (n %lld)", (long long)n);
    TC_CHECK(ref_sparse_select(&p, 0, 4, 0, pos) == 0, "row beyond S1_b selects nothing");
    const int S1b = 12; /* thr = 10 − 12 + 0 + 1 < 0 */
    p.S1 = &S1b, p.S1cap = 12;
    TC_CHECK(ref_sparse_select(&p, 0, 0, 0, pos) == 0, "threshold <= 0: empty row");
    p.S1 = &S1, p.S1cap = 4, p.causal = false;
    const int64_t big[3] = {INT64_MAX, INT64_MAX / 3 + 1, 1};
    p.indices = big, p.indices_i64 = true;
    n = ref_sparse_select(&p, 0, 0, 0, pos);
    TC_CHECK(n == 3 && pos[0] == 3, "huge INT64 entries are skipped exactly (n %lld)", (long long)n);
    const int32_t rows2[2][2][3] = {{{0, -1, 5}, {1, 1, -1}}, {{2, 2, 2}, {-1, 0, 0}}}; /* [i][n2][k] */
    p.indices = rows2, p.indices_i64 = false, p.N1 = 2, p.N2 = 2, p.K = 3;
    p.st_seq = 6, p.st_head = 3, p.st_entry = 1;
    TC_CHECK(ref_sparse_select(&p, 0, 0, 1, NULL) == 6 && ref_sparse_select(&p, 0, 1, 0, NULL) == 9 &&
                 ref_sparse_select(&p, 0, 1, 1, NULL) == 0 && ref_sparse_select(&p, 0, 0, 0, NULL) == 3,
             "strided rows and heads");
    TC_CHECK(ref_sparse_entry(&p, 0, 1, 1, 2) == 0 && ref_sparse_entry(&p, 0, 0, 0, 2) == 5, "entry addressing");
}

/* A random sparse problem and its dense twin (hooks from the selection counts). */
typedef struct sp {
    ref_sparse p;
    int S1[3], S2[3];
    double *q, *k, *v, *qr, *kr, *dout;
    int64_t *idx;
    int *count; /* [B][N1][S1cap][S2cap] selection counts */
} sp;

static sp *sp_make(uint64_t seed, bool tnd, bool causal, bool i64, int G, int Dr, int bs)
{
    sp *s = calloc(1, sizeof *s);
    tc_rng r = tc_rng_seed(seed);
    ref_sparse *p = &s->p;
    p->B = 3, p->N2 = 2, p->N1 = 2 * G, p->D = 3, p->Dv = 2, p->Dr = Dr;
    const int S1[3] = {4, 1, 3}, S2[3] = {9, 5, 2};
    memcpy(s->S1, S1, sizeof S1), memcpy(s->S2, S2, sizeof S2);
    p->S1cap = 5, p->S2cap = 9; /* BSND: S1 5 (rows 4.. of each batch are padding) */
    p->S1 = s->S1, p->S2 = s->S2;
    const int64_t nq = (int64_t)p->B * p->N1 * p->S1cap, nk = (int64_t)p->B * p->N2 * p->S2cap;
    s->q = malloc(sizeof(double) * nq * 3), s->k = malloc(sizeof(double) * nk * 3), s->v = malloc(sizeof(double) * nk * 2);
    s->qr = malloc(sizeof(double) * nq * 2), s->kr = malloc(sizeof(double) * nk * 2), s->dout = malloc(sizeof(double) * nq * 2);
    for (int64_t t = 0; t < nq * 3; t++)
        s->q[t] = tc_rng_uniform(&r, -2, 2);
    for (int64_t t = 0; t < nk * 3; t++)
        s->k[t] = tc_rng_uniform(&r, -2, 2);
    for (int64_t t = 0; t < nk * 2; t++)
        s->v[t] = tc_rng_uniform(&r, -1, 1), s->kr[t] = tc_rng_uniform(&r, -1, 1);
    for (int64_t t = 0; t < nq * 2; t++)
        s->qr[t] = tc_rng_uniform(&r, -1, 1), s->dout[t] = tc_rng_uniform(&r, -1, 1);
    p->q = s->q, p->k = s->k, p->v = s->v;
    if (Dr)
        p->q_rope = s->qr, p->k_rope = s->kr;
    p->scale = 0.6;
    p->K = 5, p->block_size = bs, p->causal = causal, p->tnd = tnd, p->indices_i64 = i64;
    const int rows = tnd ? 4 + 1 + 3 : 3 * 5;
    s->idx = malloc(sizeof(int64_t) * rows * 2 * 5);
    int32_t *i32 = (int32_t *)s->idx;
    for (int64_t t = 0; t < (int64_t)rows * 2 * 5; t++) {
        const int64_t e = tc_rng_bool(&r, 0.15) ? -1 : tc_rng_int(&r, 0, (9 + bs - 1) / bs);
        if (i64)
            s->idx[t] = e;
        else
            i32[t] = (int32_t)e;
    }
    p->indices = s->idx;
    /* layout [row][n2][k] with the row stride padded by one entry */
    p->st_entry = 1, p->st_head = 5, p->st_seq = 10, p->st_batch = tnd ? 777 : 50;
    if (!tnd) /* 5 rows of 10: rows × heads × entries fits the allocation above */
        p->st_seq = 10, p->st_batch = 50;
    s->count = calloc((size_t)nq * 9, sizeof(int));
    int64_t pos[64];
    for (int b = 0; b < 3; b++)
        for (int n1 = 0; n1 < p->N1; n1++)
            for (int i = 0; i < p->S1cap; i++) {
                const int64_t n = ref_sparse_select(p, b, i, n1 / G, pos);
                for (int64_t t = 0; t < n; t++)
                    s->count[(((int64_t)b * p->N1 + n1) * p->S1cap + i) * 9 + pos[t]]++;
            }
    return s;
}

static void sp_free(sp *s)
{
    free(s->q), free(s->k), free(s->v), free(s->qr), free(s->kr), free(s->dout), free(s->idx), free(s->count);
    free(s);
}

static bool dense_hidden(void *ctx, int b, int n1, int i, int j)
{
    const sp *s = ctx;
    return s->count[(((int64_t)b * s->p.N1 + n1) * s->p.S1cap + i) * 9 + j] == 0;
}

static double dense_bias(void *ctx, int b, int n1, int i, int j)
{
    const sp *s = ctx;
    const int c = s->count[(((int64_t)b * s->p.N1 + n1) * s->p.S1cap + i) * 9 + j];
    return c > 0 ? log((double)c) : 0;
}

static double maxdiff(const double *a, const double *b, int64_t n)
{
    double w = 0;
    for (int64_t t = 0; t < n; t++)
        w = fmax(w, fabs(a[t] - b[t]));
    return w;
}

static void versus_dense(uint64_t seed, bool tnd, bool causal, bool i64, int G, int Dr, int bs)
{
    tc_context("vs dense: seed %llu tnd %d causal %d i64 %d G %d Dr %d bs %d", (unsigned long long)seed, tnd, causal,
               i64, G, Dr, bs);
    sp *s = sp_make(seed, tnd, causal, i64, G, Dr, bs);
    const ref_sparse *p = &s->p;
    ref_fwd f = ref_sparse_as_dense(p);
    f.ctx = s, f.hidden = dense_hidden, f.bias_after = dense_bias;
    const int64_t rows = ref_count_q(&f, 1), nst = ref_sparse_stat_count(p);
    double *o = calloc((size_t)rows * 2, sizeof(double)), *od = calloc((size_t)rows * 2, sizeof(double));
    double *m = malloc(sizeof(double) * nst), *l = malloc(sizeof(double) * nst);
    double *md = calloc((size_t)rows, sizeof(double)), *ld = calloc((size_t)rows, sizeof(double));
    for (int64_t t = 0; t < nst; t++)
        m[t] = l[t] = NAN;
    ref_sparse_forward(p, o, m, l);
    ref_forward(&f, od, md, ld);
    double *mx = calloc((size_t)rows, sizeof(double)), *lx = calloc((size_t)rows, sizeof(double)),
           *ox = calloc((size_t)rows * 2, sizeof(double));
    ref_fwd fx = f; /* without the ln c bias: the same maximum as the multiset */
    fx.bias_after = NULL;
    ref_forward(&fx, ox, mx, lx);
    TC_CHECK(maxdiff(o, od, rows * 2) < 1e-13, "out equals dense with the multiset as hooks");
    double wm = 0;
    int empty = 0, padding = 0, written = 0;
    for (int b = 0; b < 3; b++)
        for (int n1 = 0; n1 < p->N1; n1++)
            for (int i = 0; i < (tnd ? s->S1[b] : p->S1cap); i++) {
                const int64_t si = ref_sparse_stat_index(p, b, n1, i), r = ((int64_t)b * p->N1 + n1) * p->S1cap + i;
                written++;
                if (i >= s->S1[b] || ref_visible(&f, b, n1, i) == 0) {
                    empty += i < s->S1[b], padding += i >= s->S1[b];
                    TC_CHECK(m[si] == -FLT_MAX && l[si] == FLT_MAX && o[r * 2] == 0 && o[r * 2 + 1] == 0,
                             "empty/padding row (b %d n1 %d i %d): 0, -FLT_MAX, FLT_MAX", b, n1, i);
                } else {
                    /* the ln c bias moves the dense maximum; the log-sum-exp is the same */
                    wm = fmax(wm, fabs((m[si] + log(l[si])) - (md[r] + log(ld[r]))));
                    wm = fmax(wm, fabs(m[si] - mx[r]));
                }
            }
    TC_CHECK(wm < 1e-12, "statistics: max over the multiset, same log-sum-exp as dense (%.3g)", wm);
    free(mx), free(lx), free(ox);
    int nan_left = 0;
    for (int64_t t = 0; t < nst; t++)
        nan_left += isnan(m[t]) || isnan(l[t]);
    TC_CHECK(nan_left == 0 && written == nst, "every statistics slot written once (%d left, %d of %lld)", nan_left,
             written, (long long)nst);
    TC_CHECK(tnd || padding > 0, "BSND case has padding rows");

    ref_grads g = ref_grads_alloc(&f), gd = ref_grads_alloc(&f);
    ref_sparse_backward(p, s->dout, o, m, l, &g);
    ref_backward(&f, s->dout, od, md, ld, &gd);
    double w = maxdiff(g.dq, gd.dq, ref_count_q(&f, 3)) + maxdiff(g.dk, gd.dk, ref_count_kv(&f, 3)) +
               maxdiff(g.dv, gd.dv, ref_count_kv(&f, 2));
    if (Dr)
        w += maxdiff(g.dq_rope, gd.dq_rope, ref_count_q(&f, Dr)) + maxdiff(g.dk_rope, gd.dk_rope, ref_count_kv(&f, Dr));
    TC_CHECK(w < 1e-12, "gradients equal the dense backward with the multiset as hooks (%.3g)", w);
    (void)empty;
    ref_grads_free(&g), ref_grads_free(&gd);
    free(o), free(od), free(m), free(l), free(md), free(ld);
    sp_free(s);
}

static double sp_loss(const sp *s)
{
    const int64_t n = (int64_t)s->p.B * s->p.N1 * s->p.S1cap * 2;
    double *o = malloc(sizeof(double) * n), L = 0;
    ref_sparse_forward(&s->p, o, NULL, NULL);
    for (int64_t t = 0; t < n; t++)
        L += o[t] * s->dout[t];
    free(o);
    return L;
}

static void finite_differences(void)
{
    tc_context("sparse backward vs finite differences");
    sp *s = sp_make(11, false, true, false, 2, 2, 2);
    const ref_sparse *p = &s->p;
    ref_fwd f = ref_sparse_as_dense(p);
    const int64_t rows = ref_count_q(&f, 1), nst = ref_sparse_stat_count(p);
    double *o = malloc(sizeof(double) * rows * 2), *m = malloc(sizeof(double) * nst), *l = malloc(sizeof(double) * nst);
    ref_sparse_forward(p, o, m, l);
    ref_grads g = ref_grads_alloc(&f);
    ref_sparse_backward(p, s->dout, o, m, l, &g);
    struct { double *x, *g; int64_t n; const char *name; } t[] = {
        {s->q, g.dq, ref_count_q(&f, 3), "dq"}, {s->k, g.dk, ref_count_kv(&f, 3), "dk"},
        {s->v, g.dv, ref_count_kv(&f, 2), "dv"}, {s->qr, g.dq_rope, ref_count_q(&f, 2), "dq_rope"},
        {s->kr, g.dk_rope, ref_count_kv(&f, 2), "dk_rope"},
    };
    for (int a = 0; a < 5; a++) {
        double worst = 0;
        for (int64_t e = 0; e < t[a].n; e++) {
            const double x0 = t[a].x[e], h = 1e-5;
            t[a].x[e] = x0 + h;
            const double lp = sp_loss(s);
            t[a].x[e] = x0 - h;
            const double lm = sp_loss(s);
            t[a].x[e] = x0;
            worst = fmax(worst, fabs((lp - lm) / (2 * h) - t[a].g[e]));
        }
        TC_CHECK(worst < 1e-7, "%s off by %.3g", t[a].name, worst);
    }
    ref_grads_free(&g);
    free(o), free(m), free(l);
    sp_free(s);
}

/* The same logical problem as BSND (equal lengths) and TND: identical out, statistics mapped. */
static void bsnd_vs_tnd(void)
{
    tc_context("BSND vs TND addressing");
    enum { B = 2, S1 = 3, S2 = 6, N2 = 2, G = 2, K = 4 };
    const int l1[B] = {S1, S1}, l2[B] = {S2, S2};
    double q[B * N2 * G * S1 * 2], k[B * N2 * S2 * 2], v[B * N2 * S2 * 2];
    tc_rng r = tc_rng_seed(5);
    for (unsigned t = 0; t < sizeof q / sizeof q[0]; t++)
        q[t] = tc_rng_uniform(&r, -1, 1);
    for (unsigned t = 0; t < sizeof k / sizeof k[0]; t++)
        k[t] = tc_rng_uniform(&r, -1, 1), v[t] = tc_rng_uniform(&r, -1, 1);
    int32_t idx[B * S1 * N2 * K]; /* [b][i][n2][k] = [token][n2][k] */
    for (unsigned t = 0; t < sizeof idx / sizeof idx[0]; t++)
        idx[t] = (int32_t)tc_rng_int(&r, -1, 2);
    ref_sparse a = {.B = B, .N1 = N2 * G, .N2 = N2, .D = 2, .Dv = 2, .S1cap = S1, .S2cap = S2, .S1 = l1, .S2 = l2,
                    .q = q, .k = k, .v = v, .scale = 1, .indices = idx, .K = K, .block_size = 2,
                    .st_batch = S1 * N2 * K, .st_seq = N2 * K, .st_head = K, .st_entry = 1, .causal = true};
    ref_sparse t = a;
    t.tnd = true, t.st_batch = -12345;
    double oa[B * N2 * G * S1 * 2], ot[B * N2 * G * S1 * 2], ma[B * N2 * G * S1], la[B * N2 * G * S1],
        mt[B * N2 * G * S1], lt[B * N2 * G * S1];
    ref_sparse_forward(&a, oa, ma, la);
    ref_sparse_forward(&t, ot, mt, lt);
    TC_CHECK(maxdiff(oa, ot, sizeof oa / sizeof oa[0]) == 0, "out identical");
    bool same = true;
    for (int b = 0; b < B; b++)
        for (int n1 = 0; n1 < N2 * G; n1++)
            for (int i = 0; i < S1; i++) {
                const int64_t x = ref_sparse_stat_index(&a, b, n1, i), y = ref_sparse_stat_index(&t, b, n1, i);
                same &= ma[x] == mt[y] && la[x] == lt[y];
                same &= x == ((b * N2 + n1 / G) * S1 + i) * G + n1 % G; /* (B, N2, S1, G) */
                same &= y == ((n1 / G) * (B * S1) + b * S1 + i) * G + n1 % G; /* (N2, T1, G) */
            }
    TC_CHECK(same, "statistics: (B,N2,S1,G) vs (N2,T1,G)");
}

int main(void)
{
    selection();
    uint64_t seed = 100;
    for (int tnd = 0; tnd < 2; tnd++)
        for (int causal = 0; causal < 2; causal++)
            for (int i64 = 0; i64 < 2; i64++) {
                versus_dense(seed, tnd, causal, i64, 1 + (int)(seed % 3), (int)(seed % 2) * 2, 1 + (int)(seed % 4));
                versus_dense(seed + 1, tnd, causal, i64, 2, 0, 3);
                seed += 2;
            }
    finite_differences();
    bsnd_vs_tnd();
    return tc_summary("reference_sparse");
}
