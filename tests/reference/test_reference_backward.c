/* The oracle's backward against central finite differences of the oracle's forward (semantics
 * §9 b: L = Σ dout·out, the gradients are ∂L/∂input with the forward's statistics), plus the
 * "statistics used as given" property of §3.3 / §8.16 and hand-checked zeros. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "reference/backward.h"
#include "reference/reference.h"

typedef struct problem {
    ref_fwd f;
    double *q, *k, *v, *qr, *kr, *dout, *sink;
    int S1[3], S2[3];
    uint8_t hide[3][4][5][7]; /* [b][n1][i][j] */
    double bias[3][4][5][7];
    uint8_t keep[3][4][5][7];
} problem;

static bool hook_hidden(void *ctx, int b, int n1, int i, int j) { return ((problem *)ctx)->hide[b][n1][i][j]; }
static double hook_bias(void *ctx, int b, int n1, int i, int j) { return ((problem *)ctx)->bias[b][n1][i][j]; }
static bool hook_keep(void *ctx, int b, int n1, int i, int j) { return ((problem *)ctx)->keep[b][n1][i][j]; }

static double *rnd(tc_rng *r, int64_t n, double range)
{
    double *a = calloc((size_t)n + 1, sizeof(double));
    for (int64_t t = 0; t < n; t++)
        a[t] = tc_rng_uniform(r, -range, range);
    return a;
}

typedef struct feat {
    bool gqa, rope, mask, bias_before, bias_after, softcap, sink, dropout, lens;
} feat;

static problem *make(uint64_t seed, feat ft)
{
    problem *P = calloc(1, sizeof *P);
    tc_rng r = tc_rng_seed(seed);
    ref_fwd *f = &P->f;
    f->B = 3, f->N1 = 4, f->N2 = ft.gqa ? 2 : 4, f->D = 3, f->Dv = 2, f->Dr = ft.rope ? 2 : 0;
    f->S1cap = 5, f->S2cap = 7;
    const int S1[3] = {5, 2, 0}, S2[3] = {7, 3, 4};
    for (int b = 0; b < 3; b++)
        P->S1[b] = ft.lens ? S1[b] : 5, P->S2[b] = ft.lens ? S2[b] : 7;
    f->S1 = P->S1, f->S2 = P->S2;
    P->q = rnd(&r, (int64_t)3 * 4 * 5 * 3, 1.5);
    P->k = rnd(&r, (int64_t)3 * f->N2 * 7 * 3, 1.5);
    P->v = rnd(&r, (int64_t)3 * f->N2 * 7 * 2, 1);
    P->qr = rnd(&r, (int64_t)3 * 4 * 5 * 2, 1);
    P->kr = rnd(&r, (int64_t)3 * f->N2 * 7 * 2, 1);
    P->dout = rnd(&r, (int64_t)3 * 4 * 5 * 2, 1);
    f->q = P->q, f->k = P->k, f->v = P->v;
    if (ft.rope)
        f->q_rope = P->qr, f->k_rope = P->kr;
    f->scale = 0.7;
    f->ctx = P;
    for (int b = 0; b < 3; b++)
        for (int n = 0; n < 4; n++)
            for (int i = 0; i < 5; i++)
                for (int j = 0; j < 7; j++) {
                    /* row (b=0, n=1, i=2) is fully masked */
                    P->hide[b][n][i][j] = (b == 0 && n == 1 && i == 2) || tc_rng_bool(&r, 0.3);
                    P->bias[b][n][i][j] = tc_rng_uniform(&r, -1, 1);
                    P->keep[b][n][i][j] = tc_rng_bool(&r, 0.7);
                }
    if (ft.mask)
        f->hidden = hook_hidden;
    if (ft.bias_before)
        f->bias_before = hook_bias;
    if (ft.bias_after)
        f->bias_after = hook_bias;
    if (ft.softcap)
        f->softcap = 0.9;
    if (ft.sink) {
        P->sink = calloc(4, sizeof(double));
        P->sink[0] = 0.4, P->sink[1] = -INFINITY, P->sink[2] = 1.3, P->sink[3] = -0.8;
        f->sink = P->sink;
    }
    if (ft.dropout)
        f->keep = hook_keep, f->keep_prob = 0.7;
    return P;
}

static void destroy(problem *P)
{
    free(P->q), free(P->k), free(P->v), free(P->qr), free(P->kr), free(P->dout), free(P->sink);
    free(P);
}

static double loss(const problem *P)
{
    const ref_fwd *f = &P->f;
    const int64_t n = ref_count_q(f, f->Dv);
    double *out = calloc((size_t)n, sizeof(double));
    ref_forward(f, out, NULL, NULL);
    double L = 0;
    for (int64_t t = 0; t < n; t++)
        L += out[t] * P->dout[t];
    free(out);
    return L;
}

/* Central differences of L with respect to every element of x, against g. */
static void fd_check(const char *what, problem *P, double *x, const double *g, int64_t n)
{
    const double h = 1e-5;
    double worst = 0;
    int64_t at = -1;
    for (int64_t t = 0; t < n; t++) {
        const double x0 = x[t];
        x[t] = x0 + h;
        const double lp = loss(P);
        x[t] = x0 - h;
        const double lm = loss(P);
        x[t] = x0;
        const double fd = (lp - lm) / (2 * h), err = fabs(fd - g[t]) / (1 + fabs(fd));
        if (err > worst)
            worst = err, at = t;
    }
    TC_CHECK(worst < 1e-7, "%s: finite differences differ by %.3g (relative) at [%lld]", what, worst, (long long)at);
}

static void fd_case(const char *name, uint64_t seed, feat ft)
{
    tc_context("%s", name);
    problem *P = make(seed, ft);
    ref_fwd *f = &P->f;
    const int64_t rows = ref_count_q(f, 1);
    double *out = calloc((size_t)ref_count_q(f, f->Dv), sizeof(double));
    double *m = calloc((size_t)rows, sizeof(double)), *l = calloc((size_t)rows, sizeof(double));
    ref_forward(f, out, m, l);
    ref_grads g = ref_grads_alloc(f);
    ref_backward(f, P->dout, out, m, l, &g);
    fd_check("dq", P, P->q, g.dq, ref_count_q(f, f->D));
    fd_check("dk", P, P->k, g.dk, ref_count_kv(f, f->D));
    fd_check("dv", P, P->v, g.dv, ref_count_kv(f, f->Dv));
    if (ft.rope) {
        fd_check("dq_rope", P, P->qr, g.dq_rope, ref_count_q(f, f->Dr));
        fd_check("dk_rope", P, P->kr, g.dk_rope, ref_count_kv(f, f->Dr));
    }
    if (ft.sink) {
        fd_check("dsink", P, P->sink, g.dsink, 4);
        TC_CHECK(g.dsink[1] == 0, "-inf sink: dsink 0, got %g", g.dsink[1]);
        TC_CHECK(g.dsink[0] != 0 && g.dsink[2] != 0, "finite sinks have a gradient");
    }
    if (ft.mask) {
        /* the fully masked row (b 0, n1 1, i 2) has dq 0 */
        const int64_t r = (0 * 4 + 1) * 5 + 2;
        bool zero = true;
        for (int e = 0; e < f->D; e++)
            zero &= g.dq[r * f->D + e] == 0;
        TC_CHECK(zero, "fully masked row: dq row 0");
    }
    if (ft.lens) {
        /* batch 2 has no rows: its kv gradients are 0; batch 1 has 3 of 7 kv positions */
        bool zero = true;
        for (int n = 0; n < f->N2; n++)
            for (int j = 0; j < 7; j++)
                for (int e = 0; e < f->D; e++) {
                    const int64_t c = (((int64_t)2 * f->N2 + n) * 7 + j) * f->D + e, c1 = (((int64_t)1 * f->N2 + n) * 7 + j) * f->D + e;
                    zero &= g.dk[c] == 0 && (j < 3 || g.dk[c1] == 0);
                }
        TC_CHECK(zero, "kv positions no row reaches (empty batch, beyond the kv length): 0");
    }

    /* §3.3 / §8.16: statistics used as given.  m + δ scales every gradient by e^{−δ}; l·c by 1/c. */
    for (int64_t t = 0; t < rows; t++)
        if (m[t] != -FLT_MAX)
            m[t] += 0.25, l[t] *= 1.5;
    ref_grads g2 = ref_grads_alloc(f);
    ref_backward(f, P->dout, out, m, l, &g2);
    const double c = exp(-0.25) / 1.5;
    double worst = 0;
    for (int64_t t = 0; t < ref_count_q(f, f->D); t++)
        worst = fmax(worst, fabs(g2.dq[t] - c * g.dq[t]));
    for (int64_t t = 0; t < ref_count_kv(f, f->Dv); t++)
        worst = fmax(worst, fabs(g2.dv[t] - c * g.dv[t]));
    for (int n = 0; ft.sink && n < 4; n++)
        worst = fmax(worst, fabs(g2.dsink[n] - c * g.dsink[n]));
    TC_CHECK(worst < 1e-12, "shifted statistics scale the gradients by e^-0.25/1.5 (off by %.3g)", worst);
    ref_grads_free(&g), ref_grads_free(&g2);
    free(out), free(m), free(l);
    destroy(P);
}

/* One row, hand-computed: q = [1], k = [1, 2], v = [10, 20], scale 0.5, dout = [1]. */
static void by_hand(void)
{
    tc_context("by hand");
    double q = 1, k[2] = {1, 2}, v[2] = {10, 20}, dout = 1, out, m, l, dq, dk[2], dv[2];
    ref_fwd f;
    memset(&f, 0, sizeof f);
    f.B = f.N1 = f.N2 = f.D = f.Dv = 1, f.S1cap = 1, f.S2cap = 2;
    f.q = &q, f.k = k, f.v = v, f.scale = 0.5;
    ref_forward(&f, &out, &m, &l);
    ref_grads g = {.dq = &dq, .dk = dk, .dv = dv};
    ref_backward(&f, &dout, &out, &m, &l, &g);
    const double p0 = exp(0.5) / (exp(0.5) + exp(1)), p1 = 1 - p0, D = out;
    const double ds0 = p0 * (10 - D), ds1 = p1 * (20 - D);
    TC_CHECK(fabs(dv[0] - p0) < 1e-15 && fabs(dv[1] - p1) < 1e-15, "dv = P·dout");
    TC_CHECK(fabs(dq - 0.5 * (ds0 * 1 + ds1 * 2)) < 1e-14, "dq = scale·Σ dS·k: %.17g", dq);
    TC_CHECK(fabs(dk[0] - 0.5 * ds0) < 1e-14 && fabs(dk[1] - 0.5 * ds1) < 1e-14, "dk = scale·dS·q");
}

static bool hide_col1(void *ctx, int b, int n1, int i, int j) { return j == 1; }

/* Semantics §0.3: NaN flows through visible positions only (same row as by_hand). */
static void non_finite(void)
{
    tc_context("non-finite inputs");
    double q = 1, k[2] = {1, NAN}, v[2] = {10, NAN}, dout = 1, out, m, l, dq, dk[2], dv[2];
    ref_fwd f;
    memset(&f, 0, sizeof f);
    f.B = f.N1 = f.N2 = f.D = f.Dv = 1, f.S1cap = 1, f.S2cap = 2;
    f.q = &q, f.k = k, f.v = v, f.scale = 0.5, f.hidden = hide_col1;
    ref_forward(&f, &out, &m, &l);
    ref_grads g = {.dq = &dq, .dk = dk, .dv = dv};
    ref_backward(&f, &dout, &out, &m, &l, &g);
    TC_CHECK(out == 10 && dv[0] == 1 && dv[1] == 0 && dk[1] == 0 && dq == 0 && dk[0] == 0,
             "NaN key and value at the hidden column take no part (out %g dq %g dk %g %g dv %g %g)", out, dq, dk[0], dk[1],
             dv[0], dv[1]);
    dout = NAN;
    ref_backward(&f, &dout, &out, &m, &l, &g);
    TC_CHECK(isnan(dq) && isnan(dk[0]) && isnan(dv[0]) && dk[1] == 0 && dv[1] == 0,
             "NaN d_out: the row's gradients NaN, the hidden column's 0");
    dout = 1, m = NAN;
    ref_backward(&f, &dout, &out, &m, &l, &g);
    TC_CHECK(isnan(dq) && isnan(dv[0]) && dv[1] == 0, "a NaN maximum given: the row's gradients NaN");
}

int main(void)
{
    by_hand();
    non_finite();
    fd_case("plain", 1, (feat){0});
    fd_case("GQA + rope + lengths", 2, (feat){.gqa = true, .rope = true, .lens = true});
    fd_case("mask + bias before scale", 3, (feat){.mask = true, .bias_before = true});
    fd_case("bias after scale + softcap", 4, (feat){.bias_after = true, .softcap = true, .gqa = true});
    fd_case("softcap + bias before", 5, (feat){.bias_before = true, .softcap = true, .rope = true});
    fd_case("sink + mask", 6, (feat){.sink = true, .mask = true, .gqa = true});
    fd_case("dropout + mask + sink", 7, (feat){.dropout = true, .mask = true, .sink = true});
    fd_case("everything", 8, (feat){true, true, true, true, true, true, true, true, true});
    return tc_summary("reference_backward");
}
