/*
 * Gradients equal finite differences of the forward (semantics §9b), both through the CANN face:
 * on small FLOAT32 cases, L = Σ dy·attentionOut is evaluated by the forward operator at q, k, v,
 * the rope parts and the sink moved by ±h and ±h/2 (Richardson-extrapolated central differences),
 * and compared with dq, dk, dv, dq_rope, dk_rope and dsink from the backward operator.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/tolerance.h"
#include "harness_grad.h"

/* L = Σ dy·out from one forward run through the face. */
static double loss(fag_run *g)
{
    fa_run *r = &g->r;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    if (fa_case_prepare(r, &ws, &ex) != ACLNN_SUCCESS)
        return NAN;
    void *w = NULL;
    if (ws > 0)
        aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    const aclnnStatus st = fa_case_execute(r, w, ws, ex, NULL);
    if (w)
        aclrtFree(w);
    if (st != ACLNN_SUCCESS)
        return NAN;
    unsigned char *img = dt_download(&r->tout);
    double sum = 0;
    for (int b = 0; b < r->B; b++)
        for (int n = 0; n < r->N1; n++)
            for (int i = 0; i < r->s1[b]; i++)
                for (int e = 0; e < r->Dv; e++) {
                    int64_t idx[4];
                    fa_seq_index(r, true, r->Dv, b, n, i, e, idx);
                    sum += g->dy[(((int64_t)b * r->N1 + n) * r->S1cap + i) * r->Dv + e] * dt_get(&r->tout, img, idx);
                }
    free(img);
    return sum;
}

/* Sets element idx of an input tensor (host image and device) to v (rounded to fp32); returns it. */
static double poke(dev_tensor *t, const int64_t *idx, double v)
{
    dt_set(t, idx, v);
    const int64_t e = dt_at(t, idx);
    if (aclrtMemcpy((char *)t->dev + e * 4, 4, t->host + e * 4, 4, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
        abort();
    return dt_get(t, t->host, idx);
}

/* dL/dx at element idx of t by central differences at steps h and h/2, extrapolated. */
static double derivative(fag_run *g, dev_tensor *t, const int64_t *idx, double h)
{
    const double x = dt_get(t, t->host, idx);
    double d[2];
    for (int k = 0; k < 2; k++, h /= 2) {
        const double xp = poke(t, idx, x + h), lp = loss(g);
        const double xm = poke(t, idx, x - h), lm = loss(g);
        d[k] = (lp - lm) / (xp - xm);
    }
    poke(t, idx, x);
    return (4 * d[1] - d[0]) / 3;
}

/* Every element of one operand: finite differences against the gradient tensor's values. */
static void compare(fag_run *g, const char *what, dev_tensor *in, const dev_tensor *grad, bool q_side, int N, int E)
{
    fa_run *r = &g->r;
    unsigned char *img = dt_download(grad);
    const int64_t total = (int64_t)r->B * N * (q_side ? r->S1cap : r->S2cap) * E;
    double *fd = calloc((size_t)total, sizeof *fd), *y = calloc((size_t)total, sizeof *y);
    int64_t n = 0;
    for (int b = 0; b < r->B; b++)
        for (int h = 0; h < N; h++)
            for (int s = 0; s < (q_side ? r->s1[b] : r->s2[b]); s++)
                for (int e = 0; e < E; e++, n++) {
                    int64_t idx[4];
                    fa_seq_index(r, q_side, E, b, h, s, e, idx);
                    y[n] = dt_get(grad, img, idx);
                    fd[n] = derivative(g, in, idx, 1e-2);
                }
    /* fp32 forward evaluations: a looser bound than the reference tolerance */
    const tc_tol tol = {2e-3, 2e-3};
    tc_compare(what, y, fd, n, tol, tc_grad_scale(fd, n));
    free(img), free(fd), free(y);
}

static void one_case(const char *name, const fag_case *c)
{
    tc_context("%s", name);
    fag_run g;
    if (fag_open(&g, c) && fag_backward(&g)) {
        fa_run *r = &g.r;
        compare(&g, "dqOut vs finite differences", &r->tq, &g.tdq, true, r->N1, r->D);
        compare(&g, "dkOut vs finite differences", &r->tk, &g.tdk, false, r->N2, r->D);
        compare(&g, "dvOut vs finite differences", &r->tv, &g.tdv, false, r->N2, r->Dv);
        if (r->Dr) {
            compare(&g, "dqRopeOut vs finite differences", &r->tqr, &g.tdqr, true, r->N1, r->Dr);
            compare(&g, "dkRopeOut vs finite differences", &r->tkr, &g.tdkr, false, r->N2, r->Dr);
        }
        if (r->sink) {
            float *ds = (float *)dt_download(&g.tdsink);
            double *fd = calloc((size_t)r->N1, sizeof *fd), *y = calloc((size_t)r->N1, sizeof *y);
            for (int n = 0; n < r->N1; n++) {
                const int64_t idx[1] = {n};
                y[n] = ds[n];
                fd[n] = isinf(r->sink[n]) ? 0.0 : derivative(&g, &r->tsink, idx, 1e-2);
            }
            const tc_tol tol = {2e-3, 2e-3};
            tc_compare("dsinkOut vs finite differences", y, fd, r->N1, tol, tc_grad_scale(fd, r->N1));
            free(ds), free(fd), free(y);
        }
    }
    fag_close(&g);
}

int main(void)
{
    /* V5: TND with an empty batch, GQA, rope, a sink, dropout and right-down causal visibility */
    fag_case g = fag_case_default();
    fa_case *c = &g.f;
    c->fn = FA_V5;
    c->layout = "TND";
    c->B = 3, c->N1 = 2, c->N2 = 1, c->D = 4, c->Dr = 2, c->Dv = 3;
    c->s1[0] = 3, c->s1[1] = 0, c->s1[2] = 2, c->s2[0] = 4, c->s2[1] = 2, c->s2[2] = 3;
    c->sink = 1, c->keep_prob = 0.8, c->same_as_input = true;
    c->sparse_mode = 3, c->mask_rank = 2, c->mask_dims[0] = 2048, c->mask_dims[1] = 2048;
    c->seed = 9800;
    one_case("V5 TND rope sink dropout causal", &g);
    /* GradV2: BSH with an external pse (add, then scale), an element mask and a band */
    g = fag_case_default();
    c->fn = FA_V2;
    c->layout = "BSH";
    c->B = 2, c->N1 = 2, c->N2 = 2, c->D = 3, c->S1 = 3, c->S2 = 4;
    c->pse_type = 1, c->pse_rank = 4, c->pse_dims[0] = 2, c->pse_dims[1] = 2, c->pse_dims[2] = 3, c->pse_dims[3] = 4;
    c->mask_rank = 2, c->mask_dims[0] = 3, c->mask_dims[1] = 4, c->mask_density = 0.2;
    c->band = true, c->pre = 1, c->next = 1;
    c->seed = 9801;
    one_case("GradV2 BSH pse band mask", &g);
    /* GradV3: ALiBi (sqrt distance) with start indices, a sink with one -inf head */
    g = fag_case_default();
    c->fn = FA_V3;
    c->layout = "BNSD";
    c->B = 1, c->N1 = 2, c->N2 = 1, c->D = 4, c->S1 = 3, c->S2 = 5;
    c->pse_type = 3, c->pse_rank = 1, c->pse_dims[0] = 2;
    c->starts = true, c->q_start = 1, c->kv_start = 3;
    c->sink = 2;
    c->seed = 9802;
    one_case("GradV3 BNSD ALiBi sqrt, -inf sink head", &g);
    return tc_summary("cann_grad_fd");
}
