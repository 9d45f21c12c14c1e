/* Block-sparse attention per semantics §5.3 (selection), §5.4 (forward), §5.5 (backward). */
#include "sparse.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int s1(const ref_sparse *p, int b) { return p->S1 ? p->S1[b] : p->S1cap; }
static int s2(const ref_sparse *p, int b) { return p->S2 ? p->S2[b] : p->S2cap; }

static int64_t tokens_before(const ref_sparse *p, int b)
{
    int64_t t = 0;
    for (int c = 0; c < b; c++)
        t += s1(p, c);
    return t;
}

int64_t ref_sparse_entry(const ref_sparse *p, int b, int i, int n2, int64_t k)
{
    const int64_t row = p->tnd ? (tokens_before(p, b) + i) * p->st_seq : (int64_t)b * p->st_batch + (int64_t)i * p->st_seq;
    const int64_t at = row + (int64_t)n2 * p->st_head + k * p->st_entry;
    return p->indices_i64 ? ((const int64_t *)p->indices)[at] : ((const int32_t *)p->indices)[at];
}

int64_t ref_sparse_select(const ref_sparse *p, int b, int i, int n2, int64_t *pos)
{
    if (i >= s1(p, b))
        return 0;
    const int64_t thr = p->causal ? (int64_t)s2(p, b) - s1(p, b) + i + 1 : s2(p, b);
    int64_t n = 0;
    for (int64_t k = 0; k < p->K; k++) {
        const int64_t idx = ref_sparse_entry(p, b, i, n2, k);
        if (idx < 0)
            break;
        const __int128 lo = (__int128)idx * p->block_size; /* exact for any INT64 entry */
        if (lo >= thr)
            continue;
        const __int128 hi = lo + p->block_size < thr ? lo + p->block_size : thr;
        for (__int128 t = lo; t < hi; t++) {
            if (pos)
                pos[n] = (int64_t)t;
            n++;
        }
    }
    return n;
}

int64_t ref_sparse_stat_index(const ref_sparse *p, int b, int n1, int i)
{
    const int G = p->N1 / p->N2, n2 = n1 / G, g = n1 % G;
    if (p->tnd)
        return ((int64_t)n2 * tokens_before(p, p->B) + tokens_before(p, b) + i) * G + g;
    return (((int64_t)b * p->N2 + n2) * p->S1cap + i) * G + g;
}

int64_t ref_sparse_stat_count(const ref_sparse *p)
{
    return p->tnd ? (int64_t)p->N1 * tokens_before(p, p->B) : (int64_t)p->B * p->N1 * p->S1cap;
}

static double dot_qk(const ref_sparse *p, int b, int n1, int i, int64_t t)
{
    const int n2 = n1 / (p->N1 / p->N2);
    const double *q = p->q + (((int64_t)b * p->N1 + n1) * p->S1cap + i) * p->D;
    const double *k = p->k + (((int64_t)b * p->N2 + n2) * p->S2cap + t) * p->D;
    double s = 0;
    for (int e = 0; e < p->D; e++)
        s += q[e] * k[e];
    if (p->Dr > 0) {
        const double *qr = p->q_rope + (((int64_t)b * p->N1 + n1) * p->S1cap + i) * p->Dr;
        const double *kr = p->k_rope + (((int64_t)b * p->N2 + n2) * p->S2cap + t) * p->Dr;
        for (int e = 0; e < p->Dr; e++)
            s += qr[e] * kr[e];
    }
    return p->scale * s;
}

static int64_t *positions(const ref_sparse *p)
{
    int64_t *pos = malloc(sizeof(int64_t) * (size_t)(p->K * p->block_size + 1));
    if (!pos)
        abort();
    return pos;
}

void ref_sparse_forward(const ref_sparse *p, double *out, double *smax, double *ssum)
{
    const int G = p->N1 / p->N2;
    int64_t *pos = positions(p);
    memset(out, 0, sizeof(double) * (size_t)((int64_t)p->B * p->N1 * p->S1cap * p->Dv));
    for (int b = 0; b < p->B; b++)
        for (int n1 = 0; n1 < p->N1; n1++) {
            const int rows = p->tnd ? s1(p, b) : p->S1cap; /* BSND padding rows have statistics too */
            for (int i = 0; i < rows; i++) {
                int64_t n = ref_sparse_select(p, b, i, n1 / G, pos);
                double m = -INFINITY, l = 0;
                double *o = out + (((int64_t)b * p->N1 + n1) * p->S1cap + i) * p->Dv;
                for (int64_t t = 0; t < n; t++) { /* a NaN logit makes the maximum NaN (§0.3) */
                    const double x = dot_qk(p, b, n1, i, pos[t]);
                    m = isnan(x) || isnan(m) ? NAN : x > m ? x : m;
                }
                if (m == -INFINITY) /* nothing selected, or only −inf logits: an empty row (§0.3, §5.4) */
                    n = 0;
                for (int64_t t = 0; t < n; t++)
                    l += exp(dot_qk(p, b, n1, i, pos[t]) - m);
                for (int64_t t = 0; t < n; t++) {
                    const double w = exp(dot_qk(p, b, n1, i, pos[t]) - m) / l;
                    const double *v = p->v + (((int64_t)b * p->N2 + n1 / G) * p->S2cap + pos[t]) * p->Dv;
                    for (int e = 0; e < p->Dv; e++)
                        o[e] += w * v[e];
                }
                if (n == 0)
                    m = -FLT_MAX, l = FLT_MAX;
                const int64_t si = ref_sparse_stat_index(p, b, n1, i);
                if (smax)
                    smax[si] = m;
                if (ssum)
                    ssum[si] = l;
            }
        }
    free(pos);
}

ref_fwd ref_sparse_as_dense(const ref_sparse *p)
{
    ref_fwd f;
    memset(&f, 0, sizeof f);
    f.B = p->B, f.N1 = p->N1, f.N2 = p->N2, f.D = p->D, f.Dv = p->Dv, f.Dr = p->Dr;
    f.S1cap = p->S1cap, f.S2cap = p->S2cap, f.S1 = p->S1, f.S2 = p->S2;
    f.q = p->q, f.k = p->k, f.v = p->v, f.q_rope = p->q_rope, f.k_rope = p->k_rope;
    f.scale = p->scale;
    return f;
}

void ref_sparse_backward(const ref_sparse *p, const double *dout, const double *out, const double *smax,
                         const double *ssum, ref_grads *g)
{
    const int G = p->N1 / p->N2;
    const ref_fwd f = ref_sparse_as_dense(p);
    if (g->dq)
        memset(g->dq, 0, sizeof(double) * (size_t)ref_count_q(&f, p->D));
    if (g->dk)
        memset(g->dk, 0, sizeof(double) * (size_t)ref_count_kv(&f, p->D));
    if (g->dv)
        memset(g->dv, 0, sizeof(double) * (size_t)ref_count_kv(&f, p->Dv));
    if (p->Dr > 0 && g->dq_rope)
        memset(g->dq_rope, 0, sizeof(double) * (size_t)ref_count_q(&f, p->Dr));
    if (p->Dr > 0 && g->dk_rope)
        memset(g->dk_rope, 0, sizeof(double) * (size_t)ref_count_kv(&f, p->Dr));
    int64_t *pos = positions(p);
    for (int b = 0; b < p->B; b++)
        for (int n1 = 0; n1 < p->N1; n1++) {
            const int n2 = n1 / G;
            for (int i = 0; i < s1(p, b); i++) {
                const int64_t n = ref_sparse_select(p, b, i, n2, pos);
                const int64_t r = ((int64_t)b * p->N1 + n1) * p->S1cap + i;
                const int64_t si = ref_sparse_stat_index(p, b, n1, i);
                const double m = smax[si], l = ssum[si];
                const double *dy = dout + r * p->Dv, *o = out + r * p->Dv;
                double Dsum = 0;
                for (int e = 0; e < p->Dv; e++)
                    Dsum += dy[e] * o[e];
                for (int64_t t = 0; t < n; t++) {
                    const int64_t c = ((int64_t)b * p->N2 + n2) * p->S2cap + pos[t];
                    const double P = exp(dot_qk(p, b, n1, i, pos[t]) - m) / l;
                    const double *v = p->v + c * p->Dv;
                    double dP = 0;
                    for (int e = 0; e < p->Dv; e++)
                        dP += dy[e] * v[e];
                    const double dS = P * (dP - Dsum) * p->scale;
                    for (int e = 0; g->dq && e < p->D; e++)
                        g->dq[r * p->D + e] += dS * p->k[c * p->D + e];
                    for (int e = 0; g->dk && e < p->D; e++)
                        g->dk[c * p->D + e] += dS * p->q[r * p->D + e];
                    for (int e = 0; g->dv && e < p->Dv; e++)
                        g->dv[c * p->Dv + e] += P * dy[e];
                    for (int e = 0; p->Dr > 0 && g->dq_rope && e < p->Dr; e++)
                        g->dq_rope[r * p->Dr + e] += dS * p->k_rope[c * p->Dr + e];
                    for (int e = 0; p->Dr > 0 && g->dk_rope && e < p->Dr; e++)
                        g->dk_rope[c * p->Dr + e] += dS * p->q_rope[r * p->Dr + e];
                }
            }
        }
    free(pos);
}
