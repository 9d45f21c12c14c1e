/* fa_run_both / fag_run_case: the forward through the face (checked or not), its backward,
 * ref_backward, and the checks. */
#include "harness_grad.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/tolerance.h"
#include "reference/backward.h"

fag_case fag_case_default(void)
{
    fag_case c;
    memset(&c, 0, sizeof c);
    c.f = fa_case_default();
    return c;
}

fag_fn fag_grad_fn(fa_fn fn)
{
    switch (fn) {
    case FA_V1: return FAG_V1;
    case FA_V2: return FAG_V2;
    case FA_V3: return FAG_V3;
    default: return FAG_V5;
    }
}

static aclnnStatus run_backward(void *ws, uint64_t bytes, aclOpExecutor *ex, aclrtStream s, const void *ctx)
{
    return fag_call_run(*(const fag_fn *)ctx, ws, bytes, ex, s);
}

/* The forward output and statistics as the library wrote them, as logical arrays; then the
 * statistics the backward gets: skewed if asked, replicas 1..7 NaN. */
static void take_forward(fag_run *g)
{
    fa_run *r = &g->r;
    const int64_t rows = (int64_t)r->B * r->N1 * r->S1cap;
    g->out = calloc((size_t)(rows * r->Dv), sizeof *g->out);
    g->smax = calloc((size_t)rows, sizeof *g->smax);
    g->ssum = calloc((size_t)rows, sizeof *g->ssum);
    unsigned char *oimg = dt_download(&r->tout);
    float *mx = (float *)dt_download(&r->tmax), *sm = (float *)dt_download(&r->tsum);
    for (int b = 0; b < r->B; b++)
        for (int n1 = 0; n1 < r->N1; n1++)
            for (int i = 0; i < r->s1[b]; i++) {
                const int64_t row = ((int64_t)b * r->N1 + n1) * r->S1cap + i, at = fa_stat_at(r, b, n1, i);
                for (int e = 0; e < r->Dv; e++) {
                    int64_t idx[4];
                    fa_seq_index(r, true, r->Dv, b, n1, i, e, idx);
                    g->out[row * r->Dv + e] = dt_get(&r->tout, oimg, idx);
                }
                if (g->gc->skew_stats) {
                    mx[at] += 0.25f;
                    sm[at] *= 1.5f;
                }
                g->smax[row] = mx[at];
                g->ssum[row] = sm[at];
                for (int k = 1; k < 8; k++)
                    mx[at + k] = sm[at + k] = NAN;
            }
    memcpy(r->tmax.host, mx, r->tmax.bytes);
    memcpy(r->tsum.host, sm, r->tsum.bytes);
    if (aclrtMemcpy(r->tmax.dev, r->tmax.bytes, r->tmax.host, r->tmax.bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS ||
        aclrtMemcpy(r->tsum.dev, r->tsum.bytes, r->tsum.host, r->tsum.bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
        abort();
    free(oimg), free(mx), free(sm);
}

static void make_grad_tensors(fag_run *g)
{
    fa_run *r = &g->r;
    g->dy = fa_make_seq(r, &g->tdy, true, r->N1, r->Dv, r->adt, GAP_IN);
    for (int k = 0; k < r->c->npoison; k++) { /* d_out values of the case's poison (semantics §0.3) */
        const fa_poison *p = &r->c->poison[k];
        if (p->at != FA_AT_DY)
            continue;
        int64_t idx[4];
        g->dy[((p->idx[0] * r->N1 + p->idx[1]) * r->S1cap + p->idx[2]) * r->Dv + p->idx[3]] = p->value;
        fa_seq_index(r, true, r->Dv, (int)p->idx[0], (int)p->idx[1], (int)p->idx[2], (int)p->idx[3], idx);
        dt_poke(&g->tdy, idx, p->value);
    }
    free(fa_make_seq(r, &g->tdq, true, r->N1, r->D, r->adt, GAP_OUT));
    free(fa_make_seq(r, &g->tdk, false, r->N2, r->D, r->adt, GAP_OUT));
    free(fa_make_seq(r, &g->tdv, false, r->N2, r->Dv, r->adt, GAP_OUT));
    if (r->Dr) {
        free(fa_make_seq(r, &g->tdqr, true, r->N1, r->Dr, r->adt, GAP_OUT));
        free(fa_make_seq(r, &g->tdkr, false, r->N2, r->Dr, r->adt, GAP_OUT));
    }
    if (r->sink) {
        const int64_t n1 = r->N1;
        dt_layout(&g->tdsink, ACL_FLOAT, 1, &n1, ST_CONTIGUOUS, GAP_OUT);
        dt_upload(&g->tdsink);
    }
}

aclnnStatus fag_prepare(fag_run *g, uint64_t *ws, aclOpExecutor **ex)
{
    fa_run *r = &g->r;
    const fa_case *c = r->c;
    char layout[8], sil[] = "same_as_input";
    snprintf(layout, sizeof layout, "%s", c->layout);
    fag_args a = {.fn = fag_grad_fn(c->fn), .q = r->tq.t, .qr = r->tqr.t, .k = r->tk.t, .kr = r->tkr.t, .v = r->tv.t,
                  .dy = g->tdy.t, .pse = r->tpse.t, .drop = r->tdrop.t, .mask = r->tmask.t, .smax = r->tmax.t,
                  .ssum = r->tsum.t, .ain = r->tout.t, .sink = r->tsink.t, .prefix = r->prefix, .aq = r->aq,
                  .akv = r->akv, .qs = r->qs, .kvs = r->kvs,
                  .scale = c->scale != 0 ? c->scale : 1.0 / sqrt((double)c->D),
                  .keep = c->keep_prob > 0 ? c->keep_prob : 1.0, .pre = c->band ? c->pre : 2147483647,
                  .next = c->band ? c->next : 2147483647, .head_num = c->N1, .inner = c->inner_precise,
                  .mode = c->sparse_mode, .pse_type = c->pse_type, .layout = layout,
                  .sil = c->same_as_input ? sil : NULL, .dq = g->tdq.t, .dqr = g->tdqr.t, .dk = g->tdk.t,
                  .dkr = g->tdkr.t, .dv = g->tdv.t, .dsink = g->tdsink.t, .ws = ws, .ex = ex};
    return fag_call(&a);
}

/* One gradient tensor against its reference (logical [B][N][Scap][E]); rows whose query sees
 * nothing (q side, empty != NULL) must be exactly 0. */
static void check_grad(const fag_run *g, const char *what, const dev_tensor *t, bool q_side, int N, int E,
                       const double *ref, const ref_fwd *f)
{
    const fa_run *r = &g->r;
    unsigned char *img = dt_download(t), *covered = calloc(t->bytes, 1);
    const size_t es = dt_esize(t->dt);
    const int Scap = q_side ? r->S1cap : r->S2cap;
    const int64_t total = (int64_t)r->B * N * Scap * E;
    double *y = calloc((size_t)total, sizeof *y), *rv = calloc((size_t)total, sizeof *rv);
    int64_t n = 0;
    for (int b = 0; b < r->B; b++)
        for (int h = 0; h < N; h++)
            for (int s = 0; s < (q_side ? r->s1[b] : r->s2[b]); s++) {
                const bool empty = q_side && ref_visible(f, b, h, s) == 0;
                for (int e = 0; e < E; e++) {
                    int64_t idx[4];
                    fa_seq_index(r, q_side, E, b, h, s, e, idx);
                    const double got = dt_get(t, img, idx);
                    memset(covered + dt_at(t, idx) * es, 1, es);
                    if (empty)
                        TC_CHECK(got == 0.0, "%s[b=%d][n=%d][s=%d][%d] of a row that sees nothing must be 0, got %g", what,
                                 b, h, s, e, got);
                    y[n] = got, rv[n] = ref[(((int64_t)b * N + h) * Scap + s) * E + e], n++;
                }
            }
    tc_compare(what, y, rv, n, tc_tol_out(r->c->dtype), tc_grad_scale(rv, n));
    fa_tally_add(r->c->tally, rv, n);
    int64_t touched = 0;
    for (size_t k = 0; k < t->bytes; k++)
        touched += !covered[k] && img[k] != GAP_OUT;
    TC_CHECK(touched == 0, "%lld bytes outside the %s view were written", (long long)touched, what);
    free(img), free(covered), free(y), free(rv);
}

void fag_check(fag_run *g)
{
    fa_run *r = &g->r;
    ref_fwd f;
    ref_cann rc;
    fa_case_reference(r, &f, &rc);
    ref_grads rg = ref_grads_alloc(&f);
    ref_backward(&f, g->dy, g->out, g->smax, g->ssum, &rg);
    check_grad(g, "dqOut", &g->tdq, true, r->N1, r->D, rg.dq, &f);
    check_grad(g, "dkOut", &g->tdk, false, r->N2, r->D, rg.dk, &f);
    check_grad(g, "dvOut", &g->tdv, false, r->N2, r->Dv, rg.dv, &f);
    if (r->Dr) {
        check_grad(g, "dqRopeOut", &g->tdqr, true, r->N1, r->Dr, rg.dq_rope, &f);
        check_grad(g, "dkRopeOut", &g->tdkr, false, r->N2, r->Dr, rg.dk_rope, &f);
    }
    if (r->sink) {
        float *ds = (float *)dt_download(&g->tdsink);
        double *y = calloc((size_t)r->N1, sizeof *y);
        for (int n = 0; n < r->N1; n++)
            y[n] = ds[n];
        tc_compare("dsinkOut", y, rg.dsink, r->N1, tc_tol_out(TC_F32), tc_grad_scale(rg.dsink, r->N1));
        for (int n = 0; n < r->N1; n++)
            if (!ref_has_sink(&f, n))
                TC_CHECK(ds[n] == 0.0f, "dsinkOut[%d] of a -inf sink must be 0, got %g", n, ds[n]);
        free(ds), free(y);
    }
    ref_grads_free(&rg);
}

/* fag_open, and the forward's outputs checked against the reference when asked. */
static bool open_case(fag_run *g, const fag_case *c, bool check_forward)
{
    memset(g, 0, sizeof *g);
    g->gc = c;
    fa_run *r = &g->r;
    fa_setup_sizes(r, &c->f);
    fa_setup_inputs(r, &c->f);
    fa_setup_outputs(r, &c->f);
    fa_setup_arrays(r, &c->f);
    if (!fa_forward(r))
        return false;
    if (check_forward)
        fa_check_forward(r);
    take_forward(g);
    make_grad_tensors(g);
    return true;
}

bool fag_backward(fag_run *g)
{
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    const fag_fn fn = fag_grad_fn(g->r.c->fn);
    const aclnnStatus st = fag_prepare(g, &ws, &ex);
    return fa_run_phases(st, ws, ex, "backward", run_backward, &fn);
}

void fag_close(fag_run *g)
{
    dev_tensor *ts[] = {&g->tdy, &g->tdq, &g->tdk, &g->tdv, &g->tdqr, &g->tdkr, &g->tdsink};
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
        dt_free(ts[k]);
    free(g->dy), free(g->out), free(g->smax), free(g->ssum);
    fa_teardown(&g->r);
}

bool fag_open(fag_run *g, const fag_case *c) { return open_case(g, c, false); }

/* The forward's outputs are checked (fa_run_both) or only feed the backward (fag_run_case). */
static bool run_case(const char *name, const fag_case *c, bool check_forward)
{
    tc_context("%s", name);
    fag_run g;
    const bool ok = open_case(&g, c, check_forward) && fag_backward(&g);
    if (ok)
        fag_check(&g);
    fag_close(&g);
    return ok;
}

bool fag_run_case(const char *name, const fag_case *c) { return run_case(name, c, false); }

bool fa_run_both(const char *name, const fag_case *c) { return run_case(name, c, true); }

bool fa_run_bothf(const fag_case *c, const char *fmt, ...)
{
    char name[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return run_case(name, c, true);
}

void fa_run_both_as(const char *name, fag_case *g, fa_fn other_fn, bool other_sil)
{
    fa_run_both(name, g);
    if (other_fn == g->f.fn && other_sil == g->f.same_as_input)
        return;
    static const char *const fns[] = {"V1", "V2", "V3", "VarLen", "V5"};
    char again[200];
    snprintf(again, sizeof again, "%s [%s%s]", name, fns[other_fn], other_sil ? " same_as_input" : "");
    g->f.fn = other_fn, g->f.same_as_input = other_sil, g->f.seed += 5000;
    fa_run_both(again, g);
}
