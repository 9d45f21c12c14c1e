/* The oracle's arithmetic against values computed by hand from semantics §2.3, §2.6, §2.7. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "common/check.h"
#include "reference/reference.h"

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-12 * (1 + fabs(b)))

/* One head, D = Dv = 1, q = [1], k = [1, 2], v = [10, 20]. */
static ref_fwd tiny(double *q, double *k, double *v)
{
    q[0] = 1;
    k[0] = 1, k[1] = 2;
    v[0] = 10, v[1] = 20;
    ref_fwd f;
    memset(&f, 0, sizeof f);
    f.B = f.N1 = f.N2 = f.D = f.Dv = 1;
    f.S1cap = 1, f.S2cap = 2;
    f.q = q, f.k = k, f.v = v;
    f.scale = 0.5;
    return f;
}

static bool hide_col1(void *ctx, int b, int n1, int i, int j) { return j == 1; }
static bool hide_all(void *ctx, int b, int n1, int i, int j) { return true; }
static bool keep_col1(void *ctx, int b, int n1, int i, int j) { return j == 1; }
static double plus_two(void *ctx, int b, int n1, int i, int j) { return 2; }

static void softmax_two_columns(void)
{
    tc_context("softmax of two columns");
    double q[1], k[2], v[2], o, m, l;
    ref_fwd f = tiny(q, k, v);
    ref_forward(&f, &o, &m, &l);
    const double e1 = exp(0.5), e2 = exp(1.0); /* x = 0.5, 1 */
    TC_CHECK(NEAR(o, (10 * e1 + 20 * e2) / (e1 + e2)), "out %.15g", o);
    TC_CHECK(NEAR(m, 1.0) && NEAR(l, exp(-0.5) + 1), "stats %.15g %.15g", m, l);
    TC_CHECK(ref_visible(&f, 0, 0, 0) == 2, "two visible");

    f.hidden = hide_col1;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(o == 10 && m == 0.5 && l == 1, "one visible column: out v[0], m = x, l = 1 (%g %g %g)", o, m, l);

    f.hidden = hide_all;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(o == 0 && m == -FLT_MAX && l == FLT_MAX, "fully masked row: 0, -FLT_MAX, FLT_MAX");
    TC_CHECK(ref_visible(&f, 0, 0, 0) == 0, "none visible");
}

static void modifiers(void)
{
    tc_context("bias, softcap");
    double q[1], k[2], v[2], o, m, l;
    ref_fwd f = tiny(q, k, v);
    f.bias_before = plus_two; /* x = (s + 2)·0.5 = 1.5, 2 */
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(NEAR(m, 2.0) && NEAR(l, exp(-0.5) + 1), "bias before scale: m %.15g", m);
    f.bias_before = NULL;
    f.bias_after = plus_two; /* x = 0.5·s + 2 = 2.5, 3 */
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(NEAR(m, 3.0), "bias after scale: m %.15g", m);
    f.bias_after = NULL;
    f.softcap = 0.75; /* x = 0.75·tanh(x/0.75) */
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(NEAR(m, 0.75 * tanh(1.0 / 0.75)), "softcap m %.15g", m);
    const double x0 = 0.75 * tanh(0.5 / 0.75);
    TC_CHECK(NEAR(l, exp(x0 - m) + 1), "softcap l");
}

static void sink(void)
{
    tc_context("sink");
    double q[1], k[2], v[2], o, m, l, s = 1.0;
    ref_fwd f = tiny(q, k, v);
    f.sink = &s; /* x = 0.5, 1; sink 1 */
    ref_forward(&f, &o, &m, &l);
    const double e1 = exp(0.5), e2 = exp(1.0);
    TC_CHECK(NEAR(m, 1.0) && NEAR(l, exp(-0.5) + 2), "sink in the sum: l %.15g", l);
    TC_CHECK(NEAR(o, (10 * e1 + 20 * e2) / (e1 + 2 * e2)), "sink has no value: out %.15g", o);
    f.hidden = hide_all;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(o == 0 && m == 1.0 && l == 1.0, "nothing visible with a sink: 0, (sink, 1)");
    s = -INFINITY;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(o == 0 && m == -FLT_MAX && l == FLT_MAX, "-inf sink is no sink");
    TC_CHECK(!ref_has_sink(&f, 0), "ref_has_sink(-inf)");
}

static void dropout(void)
{
    tc_context("dropout");
    double q[1], k[2], v[2], o, m, l, o0;
    ref_fwd f = tiny(q, k, v);
    ref_forward(&f, &o0, NULL, NULL);
    f.keep = keep_col1;
    f.keep_prob = 0.25;
    ref_forward(&f, &o, &m, &l);
    const double e1 = exp(0.5), e2 = exp(1.0);
    TC_CHECK(NEAR(o, 20 * e2 / (e1 + e2) / 0.25), "kept column scaled by 1/p: %.15g", o);
    TC_CHECK(NEAR(m, 1.0) && NEAR(l, exp(-0.5) + 1), "statistics before dropout");
    f.keep_prob = 1;
    ref_forward(&f, &o, NULL, NULL);
    TC_CHECK(o == o0, "keep_prob 1 ignores the bits");
}

/* GQA (n2 = n1 / G), rope, padded lengths, row selection. */
static int q_len[2] = {1, 2};
static bool only_row1(void *ctx, int b, int n1, int i) { return i == 1; }

static void shapes(void)
{
    tc_context("GQA, rope, lengths");
    /* B = 2, N1 = 4, N2 = 2, D = Dv = Dr = 1, S1cap = 2, S2cap = 1: one column, so out = v. */
    double q[2 * 4 * 2], k[2 * 2], v[2 * 2], qr[2 * 4 * 2], kr[2 * 2], out[2 * 4 * 2], m[16], l[16];
    for (int t = 0; t < 16; t++)
        q[t] = 1, qr[t] = 0.5, out[t] = -7, m[t] = -7, l[t] = -7;
    for (int t = 0; t < 4; t++)
        k[t] = t + 1, kr[t] = 2, v[t] = 100 + t;
    ref_fwd f;
    memset(&f, 0, sizeof f);
    f.B = 2, f.N1 = 4, f.N2 = 2, f.D = f.Dv = f.Dr = 1;
    f.S1cap = 2, f.S2cap = 1;
    f.S1 = q_len;
    f.q = q, f.k = k, f.v = v, f.q_rope = qr, f.k_rope = kr;
    f.scale = 1;
    ref_forward(&f, out, m, l);
    /* batch 1, head 3 → kv head 1: s = 1·k[1·2 + 1] + 0.5·2 = 4 + 1 */
    const int r = (1 * 4 + 3) * 2 + 0;
    TC_CHECK(out[r] == 103 && m[r] == 5, "head 3 uses kv head 1 with rope: out %g m %g", out[r], m[r]);
    TC_CHECK(out[(0 * 4 + 1) * 2] == 100 && m[(0 * 4 + 1) * 2] == 2, "head 1 uses kv head 0");
    TC_CHECK(out[(0 * 4 + 0) * 2 + 1] == -7 && m[1] == -7, "row beyond batch 0's length left untouched");
    for (int t = 0; t < 16; t++)
        out[t] = -7;
    f.row_wanted = only_row1;
    ref_forward(&f, out, NULL, NULL);
    TC_CHECK(out[(1 * 4 + 2) * 2 + 0] == -7 && out[(1 * 4 + 2) * 2 + 1] == 103, "row_wanted selects rows");
}

static double minus_inf(void *ctx, int b, int n1, int i, int j) { return -INFINITY; }
static double minus_inf_col1(void *ctx, int b, int n1, int i, int j) { return j == 1 ? -INFINITY : 0; }

/* Semantics §0.3: IEEE arithmetic through visible positions, none through hidden ones. */
static void non_finite(void)
{
    tc_context("non-finite inputs (semantics 0.3)");
    double q[1], k[2], v[2], o, m, l;
    ref_fwd f = tiny(q, k, v);
    q[0] = NAN;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(isnan(o) && isnan(m) && isnan(l), "NaN query: out, max, sum NaN (%g %g %g)", o, m, l);

    f = tiny(q, k, v);
    k[1] = NAN;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(isnan(o) && isnan(m) && isnan(l), "NaN key at a visible column: NaN row (%g %g %g)", o, m, l);
    f.hidden = hide_col1;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(o == 10 && m == 0.5 && l == 1, "NaN key at a hidden column takes no part (%g %g %g)", o, m, l);
    v[1] = NAN;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(o == 10, "NaN value at a hidden column takes no part (%g)", o);
    f.hidden = NULL;
    k[1] = 2;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(isnan(o) && NEAR(m, 1.0) && NEAR(l, exp(-0.5) + 1), "NaN value at a visible column: out NaN, stats finite");
    v[1] = INFINITY;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(o == INFINITY, "+inf value at a visible column: out +inf (%g)", o);

    f = tiny(q, k, v);
    k[1] = INFINITY; /* x = +inf */
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(isnan(o) && m == INFINITY && isnan(l), "+inf logit: max +inf, sum and out NaN (%g %g %g)", o, m, l);
    k[1] = -INFINITY; /* x = -inf: contributes exp(-inf) = 0 */
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(o == 10 && m == 0.5 && l == 1, "-inf logit contributes 0 (%g %g %g)", o, m, l);
    f = tiny(q, k, v);
    f.bias_after = minus_inf;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(o == 0 && m == -FLT_MAX && l == FLT_MAX, "only -inf logits: the fully masked results (%g %g %g)", o, m, l);
    f.bias_after = minus_inf_col1;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(o == 10 && m == 0.5 && l == 1, "a -inf bias hides nothing else (%g %g %g)", o, m, l);

    f = tiny(q, k, v);
    double sink = NAN;
    f.sink = &sink;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(isnan(o) && isnan(m) && isnan(l), "NaN sink: NaN row");
    f.hidden = hide_all;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(isnan(o) && isnan(m) && isnan(l), "NaN sink, nothing visible: still a NaN row (the maximum is NaN)");
    sink = INFINITY;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(isnan(o) && m == INFINITY && isnan(l), "+inf sink: max +inf, out and sum NaN");
    sink = -INFINITY;
    ref_forward(&f, &o, &m, &l);
    TC_CHECK(o == 0 && m == -FLT_MAX && l == FLT_MAX, "-inf sink counts as none: fully masked results");
}

int main(void)
{
    softmax_two_columns();
    modifiers();
    sink();
    dropout();
    shapes();
    non_finite();
    return tc_summary("reference_math");
}
