/* IFA harness: the operator's two phases, the reference on each batch's window, and the checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/tolerance.h"
#include "ifa_run.h"
#include "reference/kvcache.h"
#include "reference/reference.h"

#define GAP_OUT 0xA5

/* ---- the reference: FA with S1 = 1 over the window (§9 e), mask and pse at the physical token -- */

static bool ref_hidden(void *ctx, int b, int n1, int i, int j)
{
    const ifa_run *r = ctx;
    (void)n1, (void)i;
    if (!r->c->mask_rank)
        return false;
    int64_t idx[4] = {b, 0, 0, 0};
    idx[r->c->mask_rank - 1] = r->lo[b] + j;
    return r->tmask.host[dt_at(&r->tmask, idx)] != 0;
}

static double ref_pse(void *ctx, int b, int n1, int i, int j)
{
    const ifa_run *r = ctx;
    (void)i;
    if (!r->c->pse)
        return 0;
    const int64_t idx[4] = {r->c->pse_shared ? 0 : b, n1, 0, r->lo[b] + j};
    return dt_get(&r->tpse, r->tpse.host, idx);
}

/* out [B][N1][1][D]; visible[b·N1 + n1] = the positions the row sees. */
static void reference(const ifa_run *r, double *out, int *visible)
{
    const ifa_case *c = r->c;
    const int B = r->B, N1 = r->N1, N2 = r->N2, D = r->D, S = r->Smax > 0 ? r->Smax : 1;
    double *q = calloc((size_t)B * N1 * D, sizeof *q);
    double *k = calloc((size_t)B * N2 * S * D, sizeof *k), *v = calloc((size_t)B * N2 * S * D, sizeof *v);
    for (int b = 0; b < B; b++)
        for (int n = 0; n < N1; n++)
            for (int e = 0; e < D; e++) {
                int64_t idx[4];
                ifa_seq_index(c->layout, D, b, n, 0, e, idx);
                q[((int64_t)b * N1 + n) * D + e] = dt_get(&r->tq, r->tq.host, idx);
            }
    for (int b = 0; b < B; b++) /* the window, trimmed (left padding) or gathered (pages) */
        for (int n = 0; n < N2; n++)
            for (int j = 0; j < r->len[b]; j++)
                for (int e = 0; e < D; e++) {
                    const int64_t at = (((int64_t)b * N2 + n) * S + j) * D + e;
                    k[at] = ifa_kv_at(r, 0, b, n, r->lo[b] + j, e);
                    v[at] = ifa_kv_at(r, 1, b, n, r->lo[b] + j, e);
                }
    const ref_fwd p = {.B = B, .N1 = N1, .N2 = N2, .D = D, .Dv = D, .S1cap = 1, .S2cap = S, .S2 = r->len,
                       .q = q, .k = k, .v = v, .scale = c->scale != 0 ? c->scale : 1.0 / sqrt(D),
                       .ctx = (void *)r, .hidden = ref_hidden, .bias_after = ref_pse};
    memset(out, 0, (size_t)B * N1 * D * sizeof *out);
    ref_forward(&p, out, NULL, NULL);
    for (int b = 0; b < B; b++)
        for (int n = 0; n < N1; n++)
            visible[b * N1 + n] = ref_visible(&p, b, n, 0);
    free(q), free(k), free(v);
}

/* ---- checks ---------------------------------------------------------------------------------------- */

/* Output element (b, n1, e) as read back (int8 as an integer). */
static double out_at(const ifa_run *r, const unsigned char *img, int b, int n, int e)
{
    int64_t idx[4];
    ifa_seq_index(r->c->layout, r->D, b, n, 0, e, idx);
    if (r->out_dt == ACL_INT8)
        return (int8_t)img[dt_at(&r->tout, idx)];
    return dt_get(&r->tout, img, idx);
}

/* Bytes of the output allocation that no element occupies keep the sentinel. */
static void check_gaps(const ifa_run *r, const unsigned char *img)
{
    const size_t es = dt_esize(r->out_dt);
    unsigned char *used = calloc(r->tout.bytes, 1);
    for (int b = 0; b < r->B; b++)
        for (int n = 0; n < r->N1; n++)
            for (int e = 0; e < r->D; e++) {
                int64_t idx[4];
                ifa_seq_index(r->c->layout, r->D, b, n, 0, e, idx);
                memset(used + dt_at(&r->tout, idx) * es, 1, es);
            }
    size_t bad = 0;
    for (size_t k = 0; k < r->tout.bytes; k++)
        bad += !used[k] && img[k] != GAP_OUT;
    TC_CHECK(bad == 0, "%zu bytes of the output's gaps were written", bad);
    free(used);
}

static void check_int8(const ifa_run *r, const double *y, const double *ref, const int *visible)
{
    int64_t bad = 0, first = -1;
    double want_first = 0;
    for (int b = 0; b < r->B; b++)
        for (int n = 0; n < r->N1; n++)
            for (int e = 0; e < r->D; e++) {
                const int64_t at = ((int64_t)b * r->N1 + n) * r->D + e;
                const int ch = n * r->D + e;
                const double qs = ifa_qs(r, ch), qo = ifa_qo(r, ch), v = ref[at] * qs + qo;
                const double want = visible[b * r->N1 + n] ? ref_quant_i8(ref[at], qs, qo) : 0;
                /* exact where nothing is seen, where the affine value is NaN or saturates clearly */
                const bool exact = !visible[b * r->N1 + n] || isnan(v) || fabs(v) > 129.5;
                if (exact ? y[at] != want : fabs(y[at] - want) > 1) {
                    if (bad++ == 0)
                        first = at, want_first = want;
                }
            }
    TC_CHECK(bad == 0, "int8 output: %lld of %d values wrong; first [%lld] got %g want %g", (long long)bad,
             r->B * r->N1 * r->D, (long long)first, first >= 0 ? y[first] : 0, want_first);
}

static void check_float(const ifa_run *r, const double *y, const double *ref, const int *visible)
{
    const int64_t n = (int64_t)r->B * r->N1 * r->D;
    double *yv = malloc((size_t)n * sizeof *yv), *rv = malloc((size_t)n * sizeof *rv);
    int64_t m = 0, nonzero = 0;
    for (int64_t k = 0; k < n; k++) {
        if (visible[k / r->D])
            yv[m] = y[k], rv[m++] = ref[k];
        else
            nonzero += y[k] != 0;
    }
    TC_CHECK(nonzero == 0, "%lld output values of rows that see nothing are not 0", (long long)nonzero);
    tc_compare("attentionOut", yv, rv, m, tc_tol_out(r->c->dtype), 1);
    fa_tally_add(r->c->tally, rv, m);
    free(yv), free(rv);
}

/* ---- the run ----------------------------------------------------------------------------------------- */

aclnnStatus ifa_first_phase(const ifa_run *r, uint64_t *ws, aclOpExecutor **ex)
{
    const ifa_case *c = r->c;
    const bool paged = c->form == IFA_PAGED3 || c->form == IFA_PAGED4;
    char layout[8];
    snprintf(layout, sizeof layout, "%s", c->layout);
    const double scale = c->scale != 0 ? c->scale : 1.0 / sqrt(c->D);
    return aclnnIncreFlashAttentionV4GetWorkspaceSize(
        r->tq.t, r->lk, r->lv, r->tpse.t, r->tmask.t, r->act, NULL, NULL, NULL, r->tqs.t, r->tqo.t, r->taqs.t,
        r->taqo.t, paged ? r->tbt.t : NULL, r->tpad.t, c->N1, scale, layout, c->nkv_zero ? 0 : c->N2,
        paged ? c->block_size : 0, c->inner_precise, r->tout.t, ws, ex);
}

bool ifa_run_case(const char *name, const ifa_case *c, double *out)
{
    tc_context("%s", name);
    ifa_run r;
    ifa_build(&r, c);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = ifa_first_phase(&r, &ws, &ex);
    bool ok = TC_CHECK(st == ACLNN_SUCCESS, "first phase returned %d: %s", st, aclGetRecentErrMsg());
    void *wsp = NULL;
    if (ok) {
        ifa_write_pad(&r);
        if (ws)
            aclrtMalloc(&wsp, ws, ACL_MEM_MALLOC_HUGE_FIRST);
        st = aclnnIncreFlashAttentionV4(wsp, ws, ex, NULL);
        ok = TC_CHECK(st == ACLNN_SUCCESS, "second phase returned %d: %s", st, aclGetRecentErrMsg());
        aclrtFree(wsp);
    }
    if (ok) {
        const int64_t n = (int64_t)r.B * r.N1 * r.D;
        double *y = malloc((size_t)n * sizeof *y), *ref = malloc((size_t)n * sizeof *ref);
        int *visible = malloc((size_t)r.B * r.N1 * sizeof *visible);
        unsigned char *img = dt_download(&r.tout);
        for (int b = 0; b < r.B; b++)
            for (int h = 0; h < r.N1; h++)
                for (int e = 0; e < r.D; e++)
                    y[((int64_t)b * r.N1 + h) * r.D + e] = out_at(&r, img, b, h, e);
        reference(&r, ref, visible);
        if (r.out_dt == ACL_INT8)
            check_int8(&r, y, ref, visible);
        else
            check_float(&r, y, ref, visible);
        check_gaps(&r, img);
        if (out)
            memcpy(out, y, (size_t)n * sizeof *y);
        free(y), free(ref), free(visible), free(img);
    }
    ifa_free(&r);
    return ok;
}

void ifa_expect_same(const char *what, const ifa_case *a, const ifa_case *b)
{
    const int64_t n = (int64_t)a->B * a->N1 * a->D;
    double *ya = malloc((size_t)n * sizeof *ya), *yb = malloc((size_t)n * sizeof *yb);
    char name[200];
    snprintf(name, sizeof name, "%s: first form", what);
    const bool ok_a = ifa_run_case(name, a, ya);
    snprintf(name, sizeof name, "%s: second form", what);
    const bool ok_b = ifa_run_case(name, b, yb);
    if (ok_a && ok_b) {
        tc_context("%s", what);
        const tc_tol tol = a->qs_form ? (tc_tol){0, 1} : tc_tol_out(a->dtype);
        tc_compare("the two forms' outputs", ya, yb, n, tol, 1);
    }
    free(ya), free(yb);
}
