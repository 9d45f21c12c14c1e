/* Gradients per semantics §3.3 (dq, dk, dv, rope gradients, dsink), written from the formulas. */
#include "backward.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t ref_count_q(const ref_fwd *p, int E) { return (int64_t)p->B * p->N1 * p->S1cap * E; }
int64_t ref_count_kv(const ref_fwd *p, int E) { return (int64_t)p->B * p->N2 * p->S2cap * E; }

static double *zeros(int64_t n)
{
    double *a = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    if (!a)
        abort();
    return a;
}

ref_grads ref_grads_alloc(const ref_fwd *p)
{
    ref_grads g;
    memset(&g, 0, sizeof g);
    g.dq = zeros(ref_count_q(p, p->D));
    g.dk = zeros(ref_count_kv(p, p->D));
    g.dv = zeros(ref_count_kv(p, p->Dv));
    if (p->Dr > 0) {
        g.dq_rope = zeros(ref_count_q(p, p->Dr));
        g.dk_rope = zeros(ref_count_kv(p, p->Dr));
    }
    if (p->sink)
        g.dsink = zeros(p->N1);
    return g;
}

void ref_grads_free(ref_grads *g)
{
    free(g->dq), free(g->dk), free(g->dv), free(g->dq_rope), free(g->dk_rope), free(g->dsink);
    memset(g, 0, sizeof *g);
}

static void clear(double *a, int64_t n)
{
    if (a)
        memset(a, 0, sizeof(double) * (size_t)n);
}

static void axpy(double *y, double a, const double *x, int n)
{
    for (int e = 0; e < n; e++)
        y[e] += a * x[e];
}

void ref_backward(const ref_fwd *p, const double *dout, const double *out, const double *smax, const double *ssum,
                  ref_grads *g)
{
    const int G = p->N1 / p->N2;
    const bool drop = p->keep_prob > 0 && p->keep_prob < 1;
    clear(g->dq, ref_count_q(p, p->D));
    clear(g->dk, ref_count_kv(p, p->D));
    clear(g->dv, ref_count_kv(p, p->Dv));
    if (p->Dr > 0) {
        clear(g->dq_rope, ref_count_q(p, p->Dr));
        clear(g->dk_rope, ref_count_kv(p, p->Dr));
    }
    clear(g->dsink, p->N1);
    for (int b = 0; b < p->B; b++)
        for (int n1 = 0; n1 < p->N1; n1++) {
            const int n2 = n1 / G;
            for (int i = 0; i < ref_s1(p, b); i++) {
                const int64_t r = ((int64_t)b * p->N1 + n1) * p->S1cap + i;
                const double *dy = dout + r * p->Dv, *o = out + r * p->Dv;
                const double m = smax[r], l = ssum[r];
                double Di = 0;
                for (int e = 0; e < p->Dv; e++)
                    Di += dy[e] * o[e];
                if (g->dsink && ref_has_sink(p, n1))
                    g->dsink[n1] -= exp(p->sink[n1] - m) / l * Di;
                const double *q = p->q + r * p->D;
                const double *qr = p->Dr > 0 ? p->q_rope + r * p->Dr : NULL;
                for (int j = 0; j < ref_s2(p, b); j++) {
                    if (p->hidden && p->hidden(p->ctx, b, n1, i, j))
                        continue;
                    const int64_t c = ((int64_t)b * p->N2 + n2) * p->S2cap + j;
                    const double *k = p->k + c * p->D, *v = p->v + c * p->Dv;
                    double dxds;
                    const double x = ref_score(p, b, n1, i, j, &dxds);
                    const double P = exp(x - m) / l;
                    const double w = drop ? (p->keep && !p->keep(p->ctx, b, n1, i, j) ? 0 : 1 / p->keep_prob) : 1;
                    double dP = 0;
                    for (int e = 0; e < p->Dv; e++)
                        dP += dy[e] * v[e];
                    const double dS = P * (dP * w - Di) * dxds;
                    if (g->dq)
                        axpy(g->dq + r * p->D, dS, k, p->D);
                    if (g->dk)
                        axpy(g->dk + c * p->D, dS, q, p->D);
                    if (g->dv)
                        axpy(g->dv + c * p->Dv, P * w, dy, p->Dv);
                    if (p->Dr > 0 && g->dq_rope)
                        axpy(g->dq_rope + r * p->Dr, dS, p->k_rope + c * p->Dr, p->Dr);
                    if (p->Dr > 0 && g->dk_rope)
                        axpy(g->dk_rope + c * p->Dr, dS, qr, p->Dr);
                }
            }
        }
}
