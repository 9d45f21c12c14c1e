/* Non-finite puts and the mixed-reference check (harness_nonfinite.h). */
#include "harness_nonfinite.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/check.h"

/* Element [b][n][s][e] of a logical operand of N heads, cap rows and E features. */
static double *logical_at(double *x, int N, int cap, int E, const nf_put *p, int s)
{
    return x + (((int64_t)p->b * N + p->n) * cap + s) * E + p->e;
}

static void put(const nt_case *c, nt_data *d, const nf_put *p)
{
    switch (p->at) {
    case NF_Q: *logical_at(d->q, c->N1, d->S1cap, c->D, p, p->i) = p->value; break;
    case NF_K: *logical_at(d->k, c->N2, d->S2cap, c->D, p, p->j) = p->value; break;
    case NF_V: *logical_at(d->v, c->N2, d->S2cap, d->Dv, p, p->j) = p->value; break;
    case NF_Q_ROPE: *logical_at(d->qr, c->N1, d->S1cap, c->Dr, p, p->i) = p->value; break;
    case NF_K_ROPE: *logical_at(d->kr, c->N2, d->S2cap, c->Dr, p, p->j) = p->value; break;
    case NF_BIAS:
    case NF_BIAS_ROW:
        for (int j = p->at == NF_BIAS ? p->j : 0; j < (p->at == NF_BIAS ? p->j + 1 : d->S2cap); j++)
            d->bias[p->b * d->bias_st[0] + p->n * d->bias_st[1] + p->i * d->bias_st[2] + j * d->bias_st[3]] = p->value;
        break;
    case NF_SINK: d->sink[p->n] = (float)p->value; break;
    case NF_DOUT: break; /* not an input of the forward: nf_backward's edit_dout */
    }
}

void nf_put_all(const nt_case *c, nt_data *d, const nf_put *puts, int n)
{
    for (int k = 0; k < n; k++)
        put(c, d, &puts[k]);
}

void nf_check_mixed(const nt_case *c, const nt_result *r)
{
    int64_t bad = 0, good = 0;
    const int64_t rows = (int64_t)c->B * c->N1 * r->S1cap;
    for (int64_t row = 0; row < rows; row++) {
        if (r->nvis[row] < 0)
            continue;
        for (int e = 0; e < r->Dv; e++)
            ++*(isfinite(r->ref_out[row * r->Dv + e]) ? &good : &bad);
        if (c->stats)
            ++*(isfinite(r->ref_max[row]) && isfinite(r->ref_sum[row]) ? &good : &bad);
    }
    TC_CHECK(bad > 0 && good > 0, "the reference has %lld non-finite and %lld finite values: the case tests nothing",
             (long long)bad, (long long)good);
}

void nf_forward(const nt_case *c, const nf_put *puts, int n, nt_runner_fn runner)
{
    nt_data d = nt_prepare(c);
    nf_put_all(c, &d, puts, n);
    nt_result r;
    memset(&r, 0, sizeof r);
    if (runner) {
        nt_run_elsewhere_on(c, &d, runner, 1);
        r.S1cap = d.S1cap, r.Dv = d.Dv;
        nt_run_reference(c, &d, &r);
    } else {
        nt_execute(c, &d, &r);
    }
    nf_check_mixed(c, &r);
    nt_result_free(&r);
    nt_data_free(&d);
}

/* ---- the forward suites ------------------------------------------------------------------- */

/* The runner of the suite being run (NULL: the CPU backend) and its operand dtype. */
static nt_runner_fn g_runner;
static fc_dtype g_dt;

static void forward(const char *what, const nt_case *c, const nf_put *puts, int n)
{
    tc_context("forward, dtype %d: %s", (int)g_dt, what);
    nf_forward(c, puts, n, g_runner);
}

nt_case nf_dense_case(uint64_t seed)
{
    nt_case c = nt_default();
    c.seed = seed;
    c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 24, c.Dv = 20;
    c.Sq = 130, c.Skv = 150; /* several tiles, partial ones on the diagonal */
    c.stats = true;
    c.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    return c;
}

void nf_dense_suite(fc_dtype dt, nt_runner_fn runner, bool hidden_values)
{
    const double nan = NAN, inf = INFINITY;
    g_runner = runner, g_dt = dt;
    nt_case c = nf_dense_case(100 + (uint64_t)dt);
    c.dt = c.out_dt = dt;
    forward("NaN in a query row; NaN key at column 100 (visible to rows >= 100 only)", &c,
            (nf_put[]){{NF_Q, 1, 2, 70, 0, 3, nan}, {NF_K, 0, 1, 0, 100, 0, nan}}, 2);
    if (hidden_values)
        forward("NaN, +inf and -inf values under a causal window (partial tiles)", &c,
                (nf_put[]){{NF_V, 0, 0, 0, 65, 5, nan}, {NF_V, 1, 1, 0, 3, 2, inf}, {NF_V, 1, 0, 0, 129, 7, -inf}}, 3);

    c = nf_dense_case(110 + 10 * (uint64_t)dt);
    c.dt = c.out_dt = dt;
    forward("+inf in a query element: +inf and -inf logits, a NaN row with max +inf", &c,
            (nf_put[]){{NF_Q, 0, 3, 40, 0, 1, inf}}, 1);
    c.softcap = 5;
    forward("softcap: an infinite query element is capped (finite row), a NaN one is not", &c,
            (nf_put[]){{NF_Q, 0, 3, 40, 0, 1, inf}, {NF_Q, 1, 0, 12, 0, 0, nan}, {NF_K, 1, 1, 0, 90, 4, -inf}}, 3);

    c = nf_dense_case(111 + 10 * (uint64_t)dt);
    c.dt = c.out_dt = dt;
    c.window = (fc_window){0};
    c.mask.on = true, c.mask.density = 0.5;
    if (hidden_values)
        forward("mask tensor: NaN key and value, +inf value at positions some rows see and others do not", &c,
                (nf_put[]){{NF_K, 1, 1, 0, 7, 2, nan}, {NF_V, 0, 0, 0, 70, 1, nan}, {NF_V, 0, 1, 0, 10, 2, inf}}, 3);
    c.mask.density = 0.3, c.softcap = 3;
    forward("mask tensor with softcap: NaN keys", &c, (nf_put[]){{NF_K, 0, 0, 0, 140, 0, nan}}, 1);

    static const int sq[2] = {100, 40}, skv[2] = {120, 60};
    c = nf_dense_case(112 + 10 * (uint64_t)dt);
    c.dt = c.out_dt = dt;
    c.window = (fc_window){0};
    c.lens = true, c.sq = sq, c.skv = skv;
    forward("per-batch lengths: NaN beyond a batch's kv length takes no part", &c,
            (nf_put[]){{NF_K, 1, 0, 0, 100, 0, nan}, {NF_V, 1, 1, 0, 70, 0, nan}, {NF_V, 0, 0, 0, 119, 0, nan}}, 3);

    c = nf_dense_case(113 + 10 * (uint64_t)dt);
    c.dt = c.out_dt = dt;
    c.bias.on = true;
    forward("bias: NaN visible / hidden, +inf visible, a row of -inf (fully masked results), one -inf", &c,
            (nf_put[]){{NF_BIAS, 0, 1, 5, 3, 0, nan},
                       {NF_BIAS, 0, 1, 3, 5, 0, nan},
                       {NF_BIAS, 1, 2, 4, 2, 0, inf},
                       {NF_BIAS_ROW, 1, 0, 9, 0, 0, -inf},
                       {NF_BIAS, 1, 3, 8, 1, 0, -inf}},
            5);
    c.bias.order = c.bias.order == FC_BIAS_AFTER_SCALE ? FC_BIAS_BEFORE_SCALE : FC_BIAS_AFTER_SCALE;
    forward("bias in the other order", &c,
            (nf_put[]){{NF_BIAS, 0, 1, 5, 3, 0, nan}, {NF_BIAS, 1, 2, 4, 2, 0, inf}, {NF_BIAS_ROW, 1, 0, 9, 0, 0, -inf}}, 3);

    c = nf_dense_case(114 + 10 * (uint64_t)dt);
    c.dt = c.out_dt = dt;
    c.Sq = 20, c.Skv = 12, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), c.sink = NT_SINK_FINITE;
    forward("sinks: NaN, +inf, -inf (no sink); rows that see nothing", &c,
            (nf_put[]){{NF_SINK, 0, 0, 0, 0, 0, nan}, {NF_SINK, 0, 1, 0, 0, 0, inf}, {NF_SINK, 0, 2, 0, 0, 0, -inf}}, 3);
}

void nf_decode_suite(int g, fc_dtype dt, nt_runner_fn runner)
{
    static const int ones[4] = {1, 1, 1, 1}, kvl[4] = {1100, 700, 1, 0};
    const double nan = NAN;
    g_runner = runner, g_dt = dt;
    nt_case c = nt_default();
    c.seed = 200 + (uint64_t)dt + (uint64_t)g;
    c.B = 4, c.N2 = 2, c.N1 = 2 * g, c.D = 32, c.Dv = dt == FC_F32 ? 24 : 32;
    c.Sq = 1, c.Skv = 1100, c.lens = true, c.sq = ones, c.skv = kvl;
    c.layout = NT_BSND, c.stats = true;
    c.dt = c.out_dt = dt;
    const nf_put puts[] = {{NF_K, 0, 1, 0, 700, 3, nan}, {NF_V, 1, 0, 0, 650, 0, INFINITY}, {NF_Q, 0, 0, 0, 0, 5, nan},
                           {NF_K, 1, 1, 0, 900, 0, nan}, {NF_V, 0, 0, 0, 1099, 1, -INFINITY}};
    char what[160];
    snprintf(what, sizeof what, "decode G=%d: NaN key, +inf value, NaN query, NaN beyond a kv length", g);
    forward(what, &c, puts, 5);
    if (!runner) { /* the CPU's generic path; no GPU decode kernel takes a mask tensor */
        c.mask.on = true, c.mask.density = 0.4;
        snprintf(what, sizeof what, "decode G=%d with a mask tensor", g);
        forward(what, &c, puts, 5);
        c.mask.on = false;
    }
    c.sink = NT_SINK_FINITE;
    const nf_put sinks[] = {{NF_SINK, 0, 0, 0, 0, 0, nan}, {NF_K, 1, 1, 0, 1, 3, nan}};
    snprintf(what, sizeof what, "decode G=%d: a NaN sink", g);
    forward(what, &c, sinks, 2);
    c.sink = NT_SINK_NONE;
    c.window = fc_window_band(300, 0, FC_ALIGN_BOTTOM_RIGHT);
    const nf_put window[] = {{NF_V, 0, 0, 0, 794, 1, nan}, {NF_K, 1, 1, 0, 396, 2, nan}, {NF_V, 1, 0, 0, 398, 0, INFINITY},
                             {NF_Q, 0, 1, 0, 0, 3, nan}};
    snprintf(what, sizeof what, "decode G=%d, a window of 301: NaN value and key just before it, +inf value inside", g);
    forward(what, &c, window, 4);
    c.window = (fc_window){0};
    const nf_put infs[] = {{NF_Q, 1, 0, 0, 0, 1, INFINITY}, {NF_Q, 0, 0, 0, 0, 1, INFINITY}, {NF_K, 0, 0, 0, 50, 4, nan}};
    snprintf(what, sizeof what, "decode G=%d: +inf query elements (±inf logits), one row with a NaN key", g);
    forward(what, &c, infs, 3);
}

nt_case nf_sparse_case(uint64_t seed, bool causal)
{
    nt_case c = nt_default();
    c.seed = seed;
    c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 24, c.Dv = 16;
    c.Sq = 9, c.Skv = 5 * 16 + 3;
    c.layout = NT_BSND;
    c.stats = true, c.stats_order = FC_STATS_KV_GROUP;
    c.sparse = (nt_sparse_spec){.on = true, .dtype = FC_I32, .count = 3, .block_size = 16, .causal = causal,
                                .end_p = 0.1, .dup_p = 0.1};
    return c;
}

void nf_sparse_suite(fc_dtype dt, nt_runner_fn runner)
{
    g_runner = runner, g_dt = dt;
    for (int causal = 0; causal < 2; causal++) {
        nt_case c = nf_sparse_case(300 + (uint64_t)causal, causal);
        c.dt = c.out_dt = dt;
        forward(causal ? "sparse, causal: NaN key and +inf value in some selected blocks" : "sparse: NaN key and +inf value",
                &c, (nf_put[]){{NF_K, 0, 0, 0, 17, 1, NAN}, {NF_V, 1, 1, 0, 40, 2, INFINITY}, {NF_Q, 1, 3, 2, 0, 0, NAN}}, 3);
        if (causal) /* the last positions: only the last tokens see them, the others may select their block */
            forward("sparse, causal: NaN value and key in the last block, past most tokens' cut", &c,
                    (nf_put[]){{NF_V, 0, 1, 0, 82, 3, NAN}, {NF_K, 1, 0, 0, 81, 0, NAN}, {NF_V, 1, 1, 0, 82, 0, -INFINITY}}, 3);
    }
}

/* ---- the backward ------------------------------------------------------------------------- */

static const nf_put *g_bwd_puts;
static int g_bwd_n;

static void edit_puts(const nt_case *c, nt_data *d) { nf_put_all(c, d, g_bwd_puts, g_bwd_n); }

static void (*g_bwd_edit_dout)(const nt_case *, const nt_data *, double *); /* the caller's, after the puts */

static void edit_dout(const nt_case *c, const nt_data *d, double *dout)
{
    for (int k = 0; k < g_bwd_n; k++) {
        const nf_put *p = &g_bwd_puts[k];
        if (p->at == NF_DOUT)
            dout[(((int64_t)p->b * c->N1 + p->n) * d->S1cap + p->i) * d->Dv + p->e] = p->value;
    }
    if (g_bwd_edit_dout)
        g_bwd_edit_dout(c, d, dout);
}

void nf_backward(const nt_case *c, const nf_put *puts, int n, const nt_bwd *o)
{
    g_bwd_puts = puts, g_bwd_n = n, g_bwd_edit_dout = o->edit_dout;
    int64_t bad = 0, good = 0;
    nt_bwd run = *o;
    run.edit_data = edit_puts, run.edit_dout = edit_dout, run.ref_nonfinite = &bad, run.ref_finite = &good;
    nt_bwd_run(c, &run);
    TC_CHECK(bad > 0 && good > 0, "the reference gradients hold %lld non-finite and %lld finite values: the case tests nothing",
             (long long)bad, (long long)good);
}
