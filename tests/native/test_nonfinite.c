/* Non-finite inputs through the native API (semantics §0.3): NaN and ±inf in q, in k and v at
 * visible and at hidden positions (windows, mask tensors, per-batch lengths), in the bias, the
 * sink and d_out, and in the statistics given to the backward; forward, backward, decode (the
 * few-row dot-product score path, keys read in place, flash-decoding splits) and block-sparse
 * attention, on the kernel path named by argv[1].  The reference applies §0.3 itself; outputs are
 * compared with NaN exactly where it has NaN (and ±inf where it has that inf), finite and within
 * tolerance elsewhere.  Every case also checks that its reference holds both non-finite and
 * finite values, so that neither propagation nor containment can pass vacuously. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/check.h"
#include "harness.h"
#include "harness_bwd.h"
#include "harness_internal.h"

typedef enum { AT_Q, AT_K, AT_V, AT_BIAS, AT_BIAS_ROW, AT_SINK } nf_at;

/* One value to put into the logical inputs: q[b][n][i][e], k/v[b][n][j][e] (n a kv head),
 * bias[b][n][i][j] (AT_BIAS_ROW: every column of row i), sink[n]. */
typedef struct nf_put {
    nf_at at;
    int b, n, i, j, e;
    double value;
} nf_put;

#define NF_MAX_PUTS 6
static nf_put g_puts[NF_MAX_PUTS];
static int g_nputs;

static void put(const nt_case *c, nt_data *d, const nf_put *p)
{
    switch (p->at) {
    case AT_Q: d->q[(((int64_t)p->b * c->N1 + p->n) * d->S1cap + p->i) * c->D + p->e] = p->value; break;
    case AT_K: d->k[(((int64_t)p->b * c->N2 + p->n) * d->S2cap + p->j) * c->D + p->e] = p->value; break;
    case AT_V: d->v[(((int64_t)p->b * c->N2 + p->n) * d->S2cap + p->j) * d->Dv + p->e] = p->value; break;
    case AT_BIAS:
    case AT_BIAS_ROW:
        for (int j = p->at == AT_BIAS ? p->j : 0; j < (p->at == AT_BIAS ? p->j + 1 : d->S2cap); j++)
            d->bias[p->b * d->bias_st[0] + p->n * d->bias_st[1] + p->i * d->bias_st[2] + j * d->bias_st[3]] = p->value;
        break;
    case AT_SINK: d->sink[p->n] = (float)p->value; break;
    }
}

static void put_all(const nt_case *c, nt_data *d)
{
    for (int k = 0; k < g_nputs; k++)
        put(c, d, &g_puts[k]);
}

/* The reference outputs and statistics of the real rows must hold both kinds of values. */
static void check_mixed(const nt_case *c, const nt_result *r)
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

/* Runs the forward of c with the puts and checks it (harness) and its reference (check_mixed). */
static void forward(const char *what, const nt_case *c, const nf_put *puts, int n)
{
    tc_context("forward: %s", what);
    if (n)
        memcpy(g_puts, puts, sizeof(nf_put) * (size_t)n);
    g_nputs = n;
    nt_data d = nt_prepare(c);
    put_all(c, &d);
    nt_result r;
    nt_execute(c, &d, &r);
    check_mixed(c, &r);
    nt_result_free(&r);
    nt_data_free(&d);
}

static nt_case dense(uint64_t seed)
{
    nt_case c = nt_default();
    c.seed = seed;
    c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 24, c.Dv = 20;
    c.Sq = 130, c.Skv = 150; /* several tiles, partial ones on the diagonal */
    c.stats = true;
    c.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    return c;
}

static void forward_dense(void)
{
    const double nan = NAN, inf = INFINITY;
    for (int dt = 0; dt < 3; dt++) {
        nt_case c = dense(100 + dt);
        c.dt = c.out_dt = (fc_dtype)dt;
        char what[160];
        snprintf(what, sizeof what, "dtype %d: NaN in a query row; NaN key at column 100 (visible to rows >= 100 only)", dt);
        forward(what, &c, (nf_put[]){{AT_Q, 1, 2, 70, 0, 3, nan}, {AT_K, 0, 1, 0, 100, 0, nan}}, 2);
        snprintf(what, sizeof what, "dtype %d: NaN, +inf and -inf values under a causal window (partial tiles)", dt);
        forward(what, &c, (nf_put[]){{AT_V, 0, 0, 0, 65, 5, nan}, {AT_V, 1, 1, 0, 3, 2, inf}, {AT_V, 1, 0, 0, 129, 7, -inf}}, 3);
    }
    nt_case c = dense(110);
    forward("+inf in a query element: +inf and -inf logits, a NaN row with max +inf", &c,
            (nf_put[]){{AT_Q, 0, 3, 40, 0, 1, INFINITY}}, 1);
    c.softcap = 5;
    forward("softcap: an infinite query element is capped (finite row), a NaN one is not", &c,
            (nf_put[]){{AT_Q, 0, 3, 40, 0, 1, INFINITY}, {AT_Q, 1, 0, 12, 0, 0, nan}, {AT_K, 1, 1, 0, 90, 4, -INFINITY}}, 3);

    c = dense(111);
    c.window = (fc_window){0};
    c.mask.on = true, c.mask.density = 0.5;
    forward("mask tensor: NaN key and value, +inf value at positions some rows see and others do not", &c,
            (nf_put[]){{AT_K, 1, 1, 0, 7, 2, nan}, {AT_V, 0, 0, 0, 70, 1, nan}, {AT_V, 0, 1, 0, 10, 2, INFINITY}}, 3);
    c.mask.density = 0.3, c.softcap = 3;
    forward("mask tensor with softcap: NaN keys", &c, (nf_put[]){{AT_K, 0, 0, 0, 140, 0, nan}}, 1);

    static const int sq[2] = {100, 40}, skv[2] = {120, 60};
    c = dense(112);
    c.window = (fc_window){0};
    c.lens = true, c.sq = sq, c.skv = skv;
    forward("per-batch lengths: NaN beyond a batch's kv length takes no part", &c,
            (nf_put[]){{AT_K, 1, 0, 0, 100, 0, nan}, {AT_V, 1, 1, 0, 70, 0, nan}, {AT_V, 0, 0, 0, 119, 0, nan}}, 3);

    c = dense(113);
    c.bias.on = true;
    forward("bias: NaN visible / hidden, +inf visible, a row of -inf (fully masked results), one -inf", &c,
            (nf_put[]){{AT_BIAS, 0, 1, 5, 3, 0, nan},
                       {AT_BIAS, 0, 1, 3, 5, 0, nan},
                       {AT_BIAS, 1, 2, 4, 2, 0, INFINITY},
                       {AT_BIAS_ROW, 1, 0, 9, 0, 0, -INFINITY},
                       {AT_BIAS, 1, 3, 8, 1, 0, -INFINITY}},
            5);
    c.bias.order = c.bias.order == FC_BIAS_AFTER_SCALE ? FC_BIAS_BEFORE_SCALE : FC_BIAS_AFTER_SCALE;
    forward("bias in the other order", &c,
            (nf_put[]){{AT_BIAS, 0, 1, 5, 3, 0, nan}, {AT_BIAS, 1, 2, 4, 2, 0, INFINITY}, {AT_BIAS_ROW, 1, 0, 9, 0, 0, -INFINITY}}, 3);

    c = dense(114);
    c.Sq = 20, c.Skv = 12, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), c.sink = NT_SINK_FINITE;
    forward("sinks: NaN, +inf, -inf (no sink); rows that see nothing", &c,
            (nf_put[]){{AT_SINK, 0, 0, 0, 0, 0, nan}, {AT_SINK, 0, 1, 0, 0, 0, INFINITY}, {AT_SINK, 0, 2, 0, 0, 0, -INFINITY}}, 3);
}

static const int ones[4] = {1, 1, 1, 1};
static const int kvl[4] = {1100, 700, 1, 0};

/* Decode: one query position, G query heads per kv head (G <= 4: dot-product scores; with
 * Dv = 32 the fused few-row path of kernels/decode.h on every vector width), long kv rows
 * (flash-decoding splits and their merge). */
static void forward_decode(void)
{
    const double nan = NAN;
    for (int g = 1; g <= 4; g++)
        for (int dt = 0; dt < 3; dt++) {
            if ((g == 2 || g == 3) && dt != (g == 2 ? 1 : 2))
                continue; /* G = 2, 3: one dtype each */
            nt_case c = nt_default();
            c.seed = 200 + dt + g;
            c.B = 4, c.N2 = 2, c.N1 = 2 * g, c.D = 32, c.Dv = dt == 0 ? 24 : 32;
            c.Sq = 1, c.Skv = 1100, c.lens = true, c.sq = ones, c.skv = kvl;
            c.layout = NT_BSND, c.stats = true;
            c.dt = c.out_dt = (fc_dtype)dt;
            const nf_put puts[] = {{AT_K, 0, 1, 0, 700, 3, nan},  {AT_V, 1, 0, 0, 650, 0, INFINITY},
                                   {AT_Q, 0, 0, 0, 0, 5, nan},    {AT_K, 1, 1, 0, 900, 0, nan},
                                   {AT_V, 0, 0, 0, 1099, 1, -INFINITY}};
            char what[160];
            snprintf(what, sizeof what, "decode G=%d dtype %d: NaN key, +inf value, NaN query, NaN beyond a kv length",
                     g, dt);
            forward(what, &c, puts, 5);
            c.mask.on = true, c.mask.density = 0.4;
            snprintf(what, sizeof what, "decode G=%d dtype %d with a mask tensor", g, dt);
            forward(what, &c, puts, 5);
            c.mask.on = false, c.sink = NT_SINK_FINITE;
            const nf_put sinks[] = {{AT_SINK, 0, 0, 0, 0, 0, nan}, {AT_K, 1, 1, 0, 1, 3, nan}};
            snprintf(what, sizeof what, "decode G=%d dtype %d: a NaN sink", g, dt);
            forward(what, &c, sinks, 2);
            c.sink = NT_SINK_NONE;
            const nf_put infs[] = {{AT_Q, 1, 0, 0, 0, 1, INFINITY}, {AT_Q, 0, 0, 0, 0, 1, INFINITY},
                                   {AT_K, 0, 0, 0, 50, 4, nan}};
            snprintf(what, sizeof what, "decode G=%d dtype %d: +inf query elements (±inf logits), one row with a NaN key", g, dt);
            forward(what, &c, infs, 3);
        }
}

static nt_case sparse_case(uint64_t seed, bool causal)
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

static void forward_sparse(void)
{
    for (int causal = 0; causal < 2; causal++) {
        nt_case c = sparse_case(300 + causal, causal);
        forward(causal ? "sparse, causal: NaN key and +inf value in some selected blocks" : "sparse: NaN key and +inf value",
                &c, (nf_put[]){{AT_K, 0, 0, 0, 17, 1, NAN}, {AT_V, 1, 1, 0, 40, 2, INFINITY}, {AT_Q, 1, 3, 2, 0, 0, NAN}}, 3);
    }
}

/* ---- backward ---------------------------------------------------------------------------- */

static nf_put g_dout_put; /* d_out[b][n][i][e] = value when g_dout_on */
static bool g_dout_on;
typedef struct nf_stat {
    int b, n, i;
    float max, sum;
} nf_stat;
static nf_stat g_stats[2]; /* given statistics replaced for these rows (b = -1: none) */

static void edit_data(const nt_case *c, nt_data *d) { put_all(c, d); }

static void edit_dout(const nt_case *c, const nt_data *d, double *dout)
{
    const nf_put *p = &g_dout_put;
    if (g_dout_on)
        dout[(((int64_t)p->b * c->N1 + p->n) * d->S1cap + p->i) * d->Dv + p->e] = p->value;
}

static void edit_stats(const nt_case *c, int b, int n, int i, float *max, float *sum)
{
    (void)c;
    for (int k = 0; k < 2; k++)
        if (b == g_stats[k].b && n == g_stats[k].n && i == g_stats[k].i)
            *max = g_stats[k].max, *sum = g_stats[k].sum;
}

static void backward(const char *what, const nt_case *c, const nf_put *puts, int n)
{
    tc_context("backward: %s", what);
    if (n)
        memcpy(g_puts, puts, sizeof(nf_put) * (size_t)n);
    g_nputs = n;
    int64_t bad = 0, good = 0;
    nt_bwd o = nt_bwd_default();
    o.edit_data = edit_data, o.edit_dout = edit_dout, o.edit_stats = edit_stats;
    o.ref_nonfinite = &bad, o.ref_finite = &good;
    o.check_threads = true;
    nt_bwd_run(c, &o);
    TC_CHECK(bad > 0 && good > 0, "the reference gradients hold %lld non-finite and %lld finite values: the case tests nothing",
             (long long)bad, (long long)good);
    g_dout_on = false;
    g_stats[0].b = g_stats[1].b = -1;
}

static void backward_all(void)
{
    const double nan = NAN;
    nt_case c = dense(400);
    c.Sq = 90, c.Skv = 100;
    backward("NaN query row; NaN key at column 80 (rows < 80 do not see it)", &c,
             (nf_put[]){{AT_Q, 1, 2, 30, 0, 3, nan}, {AT_K, 0, 1, 0, 80, 0, nan}}, 2);
    backward("NaN and +inf values under a causal window", &c,
             (nf_put[]){{AT_V, 0, 0, 0, 65, 5, nan}, {AT_V, 1, 1, 0, 85, 2, INFINITY}}, 2);
    g_dout_on = true, g_dout_put = (nf_put){AT_Q, 0, 3, 50, 0, 4, nan};
    backward("NaN in d_out (D of the row NaN): hidden columns take no part", &c, NULL, 0);
    g_stats[0] = (nf_stat){1, 1, 60, NAN, 2.0f};
    g_stats[1] = (nf_stat){0, 2, 70, 1.0f, NAN};
    backward("a NaN maximum given for one row, a NaN sum for another", &c, NULL, 0);

    c = dense(401);
    c.Sq = 70, c.Skv = 80, c.window = (fc_window){0}, c.mask.on = true, c.mask.density = 0.4;
    backward("mask tensor: NaN key, -inf value, NaN query", &c,
             (nf_put[]){{AT_K, 1, 0, 0, 7, 2, nan}, {AT_V, 0, 1, 0, 70, 1, -INFINITY}, {AT_Q, 0, 0, 33, 0, 0, nan}}, 3);
    c.softcap = 4;
    backward("mask tensor with softcap: NaN key", &c, (nf_put[]){{AT_K, 0, 1, 0, 75, 0, nan}}, 1);

    c = dense(402);
    c.Sq = 40, c.Skv = 50, c.bias.on = true, c.sink = NT_SINK_FINITE;
    backward("bias NaN visible / hidden, a -inf bias row; NaN sink (dsink NaN)", &c,
             (nf_put[]){{AT_BIAS, 0, 1, 5, 3, 0, nan},
                        {AT_BIAS, 0, 1, 3, 5, 0, nan},
                        {AT_BIAS_ROW, 1, 0, 9, 0, 0, -INFINITY},
                        {AT_SINK, 0, 2, 0, 0, 0, nan}},
             4);

    static const int sq[4] = {1, 1, 1, 1}, skv[4] = {300, 200, 1, 0};
    c = nt_default();
    c.seed = 403, c.B = 4, c.N1 = 4, c.N2 = 2, c.D = 32, c.Dv = 24, c.Sq = 1, c.Skv = 300;
    c.lens = true, c.sq = sq, c.skv = skv, c.layout = NT_BSND, c.stats = true, c.mask.on = true;
    backward("decode shape with a mask: NaN key, NaN beyond a kv length", &c,
             (nf_put[]){{AT_K, 0, 1, 0, 250, 3, nan}, {AT_V, 1, 1, 0, 250, 0, nan}}, 2);

    c = sparse_case(404, true);
    backward("sparse: NaN key and query", &c, (nf_put[]){{AT_K, 0, 0, 0, 17, 1, nan}, {AT_Q, 1, 3, 2, 0, 0, nan}}, 2);
}

static void body(void)
{
    g_stats[0].b = g_stats[1].b = -1;
    forward_dense();
    forward_decode();
    forward_sparse();
    backward_all();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_nonfinite", body); }
