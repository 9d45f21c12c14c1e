/* Attention per semantics §2.3 (scores), §2.6 (softmax, sink, fully masked rows), §2.7 (dropout),
 * with non-finite values per §0.3. */
#include "reference.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

int ref_s1(const ref_fwd *p, int b) { return p->S1 ? p->S1[b] : p->S1cap; }
int ref_s2(const ref_fwd *p, int b) { return p->S2 ? p->S2[b] : p->S2cap; }

bool ref_has_sink(const ref_fwd *p, int n1) { return p->sink && !(isinf(p->sink[n1]) && p->sink[n1] < 0); }

static bool hidden(const ref_fwd *p, int b, int n1, int i, int j)
{
    return p->hidden && p->hidden(p->ctx, b, n1, i, j);
}

int ref_visible(const ref_fwd *p, int b, int n1, int i)
{
    int n = 0;
    for (int j = 0; j < ref_s2(p, b); j++)
        n += !hidden(p, b, n1, i, j);
    return n;
}

/* x(i,j) of §2.3 extended by the native softcap: softcap(scale·(s + before)) + after. */
double ref_score(const ref_fwd *p, int b, int n1, int i, int j, double *dx_ds)
{
    const int n2 = n1 / (p->N1 / p->N2);
    const double *q = p->q + (((int64_t)b * p->N1 + n1) * p->S1cap + i) * p->D;
    const double *k = p->k + (((int64_t)b * p->N2 + n2) * p->S2cap + j) * p->D;
    double s = 0;
    for (int e = 0; e < p->D; e++)
        s += q[e] * k[e];
    if (p->Dr > 0) {
        const double *qr = p->q_rope + (((int64_t)b * p->N1 + n1) * p->S1cap + i) * p->Dr;
        const double *kr = p->k_rope + (((int64_t)b * p->N2 + n2) * p->S2cap + j) * p->Dr;
        for (int e = 0; e < p->Dr; e++)
            s += qr[e] * kr[e];
    }
    if (p->bias_before)
        s += p->bias_before(p->ctx, b, n1, i, j);
    double x = p->scale * s, d = p->scale;
    if (p->softcap > 0) {
        const double t = tanh(x / p->softcap);
        x = p->softcap * t;
        d = p->scale * (1 - t * t);
    }
    if (p->bias_after)
        x += p->bias_after(p->ctx, b, n1, i, j);
    if (dx_ds)
        *dx_ds = d;
    return x;
}

static double score(const ref_fwd *p, int b, int n1, int i, int j) { return ref_score(p, b, n1, i, j, NULL); }

/* max(a, b) as semantics §0.3 reads it: a NaN operand makes the maximum NaN. */
static double max_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

static void row(const ref_fwd *p, int b, int n1, int i, double *x, bool *vis, double *out, double *smax, double *ssum)
{
    const int S2 = ref_s2(p, b), n2 = n1 / (p->N1 / p->N2);
    const bool sink = ref_has_sink(p, n1);
    const bool drop = p->keep_prob > 0 && p->keep_prob < 1;
    double m = sink ? p->sink[n1] : -INFINITY;
    for (int j = 0; j < S2; j++) { /* hidden positions are excluded before any arithmetic (§0.2) */
        vis[j] = !hidden(p, b, n1, i, j);
        if (vis[j]) {
            x[j] = score(p, b, n1, i, j);
            m = max_nan(m, x[j]);
        }
    }
    for (int e = 0; e < p->Dv; e++)
        out[e] = 0;
    if (!sink && m == -INFINITY) { /* fully masked row, or only −inf logits (§0.3, §2.6) */
        *smax = -FLT_MAX;
        *ssum = FLT_MAX;
        return;
    }
    double l = sink ? exp(p->sink[n1] - m) : 0; /* IEEE throughout: NaN or +inf maxima give NaN */
    for (int j = 0; j < S2; j++)
        if (vis[j])
            l += exp(x[j] - m);
    for (int j = 0; j < S2; j++) {
        if (!vis[j])
            continue;
        double pj = exp(x[j] - m);
        if (drop)
            pj = p->keep && !p->keep(p->ctx, b, n1, i, j) ? 0 : pj / p->keep_prob;
        const double *v = p->v + (((int64_t)b * p->N2 + n2) * p->S2cap + j) * p->Dv;
        for (int e = 0; e < p->Dv; e++)
            out[e] += pj * v[e];
    }
    for (int e = 0; e < p->Dv; e++) /* P = exp(x − m) / l, normalised once: a NaN l (NaN or +inf sink) */
        out[e] /= l;                 /* leaves the row NaN even where no position is visible */
    *smax = m;
    *ssum = l;
}

void ref_forward(const ref_fwd *p, double *out, double *smax, double *ssum)
{
    double *x = malloc(sizeof(double) * (size_t)(p->S2cap > 0 ? p->S2cap : 1));
    bool *vis = malloc((size_t)(p->S2cap > 0 ? p->S2cap : 1));
    for (int b = 0; b < p->B; b++)
        for (int n1 = 0; n1 < p->N1; n1++)
            for (int i = 0; i < ref_s1(p, b); i++) {
                if (p->row_wanted && !p->row_wanted(p->ctx, b, n1, i))
                    continue;
                const int64_t r = ((int64_t)b * p->N1 + n1) * p->S1cap + i;
                double mx, sm;
                row(p, b, n1, i, x, vis, out + r * p->Dv, &mx, &sm);
                if (smax)
                    smax[r] = mx;
                if (ssum)
                    ssum[r] = sm;
            }
    free(x);
    free(vis);
}
