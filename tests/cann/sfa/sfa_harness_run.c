/* sfa_run_case: the two phases of the forward (and grad), the reference, and every check. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_sparse_flash_attention.h"
#include "aclnnop/aclnn_sparse_flash_attention_grad.h"
#include "common/tolerance.h"
#include "sfa_harness_internal.h"

sfa_case sfa_case_default(void)
{
    sfa_case c;
    memset(&c, 0, sizeof c);
    c.lq = c.lkv = "BSND";
    c.dtype = TC_F16;
    c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 16;
    c.s1[0] = 5, c.s1[1] = 3, c.s2[0] = 20, c.s2[1] = 13;
    c.K = 6, c.bs = 4;
    c.page = 8;
    c.seed = 1;
    return c;
}

void sfa_draw_case(sfa_case *c, tc_rng *g)
{
    c->dtype = tc_rng_bool(g, 0.5) ? TC_F16 : TC_BF16;
    c->B = (int)tc_rng_int(g, 1, 4);
    c->N2 = (int)tc_rng_int(g, 1, 3), c->N1 = c->N2 * (int)tc_rng_int(g, 1, 4);
    c->D = (int)tc_rng_int(g, 1, 40), c->Dv = (int)tc_rng_int(g, 0, 20), c->Dr = (int)tc_rng_int(g, 0, 1) * 6;
    for (int b = 0; b < c->B; b++)
        c->s1[b] = (int)tc_rng_int(g, 0, 9), c->s2[b] = (int)tc_rng_int(g, 0, 40);
    c->s1[0] = c->s1[0] ? c->s1[0] : 1; /* at least one query token */
    c->s2[0] = c->s2[0] ? c->s2[0] : 1;
    c->lens_q = tc_rng_bool(g, 0.5), c->lens_kv = tc_rng_bool(g, 0.5);
    c->len64 = tc_rng_bool(g, 0.5), c->idx64 = tc_rng_bool(g, 0.5);
    c->K = (int)tc_rng_int(g, 1, 12), c->bs = (int)tc_rng_int(g, 1, 9), c->mode = tc_rng_bool(g, 0.5) ? 3 : 0;
}

/* Runs the second phase of an executor with a fresh workspace and stream. */
static aclnnStatus run_phase2(aclnnStatus (*fn)(void *, uint64_t, aclOpExecutor *, aclrtStream), uint64_t ws,
                              aclOpExecutor *ex)
{
    void *wsp = NULL;
    if (ws > 0 && aclrtMalloc(&wsp, ws, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        abort();
    aclrtStream stream;
    aclrtCreateStream(&stream);
    const aclnnStatus st = fn(wsp, ws, ex, stream);
    TC_CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "aclrtSynchronizeStream failed");
    aclrtDestroyStream(stream);
    if (wsp)
        aclrtFree(wsp);
    return st;
}

static aclnnStatus run_forward2(void *w, uint64_t n, aclOpExecutor *ex, aclrtStream s)
{
    return aclnnSparseFlashAttention(w, n, ex, s);
}

static bool call_forward(sfa_run *r)
{
    const sfa_case *c = r->c;
    char lq[16], lkv[16];
    snprintf(lq, sizeof lq, "%s", c->lq);
    snprintf(lkv, sizeof lkv, "%s", c->lkv);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnSparseFlashAttentionGetWorkspaceSize(
        r->tq.t, r->tk.t, r->tv.t, r->tidx.t, r->ttab.t, r->taq.t, r->takv.t, r->tqr.t, r->tkr.t, r->scale, c->bs, lq,
        lkv, c->mode, 2147483647, 2147483647, c->attention_mode, !c->no_lse, r->tout.t, r->tmax.t, r->tsum.t, &ws, &ex);
    if (!TC_CHECK(st == ACLNN_SUCCESS, "aclnnSparseFlashAttentionGetWorkspaceSize returned %d: %s", st,
                  aclGetRecentErrMsg()))
        return false;
    st = run_phase2(run_forward2, ws, ex);
    return TC_CHECK(st == ACLNN_SUCCESS, "aclnnSparseFlashAttention returned %d: %s", st, aclGetRecentErrMsg());
}

static bool call_grad(sfa_run *r)
{
    const sfa_case *c = r->c;
    char layout[16];
    snprintf(layout, sizeof layout, "%s", c->lq);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnSparseFlashAttentionGradGetWorkspaceSize(
        r->tq.t, r->tk.t, r->tv.t, r->tidx.t, r->tdout.t, r->tout.t, r->tmax_in.t, r->tsum_in.t, r->taq.t, r->takv.t,
        r->tqr.t, r->tkr.t, r->scale, c->bs, layout, c->mode, 2147483647, 2147483647, true, r->tdq.t, r->tdk.t,
        r->tdv.t, r->tdqr.t, r->tdkr.t, &ws, &ex);
    if (!TC_CHECK(st == ACLNN_SUCCESS, "aclnnSparseFlashAttentionGradGetWorkspaceSize returned %d: %s", st,
                  aclGetRecentErrMsg()))
        return false;
    st = run_phase2(aclnnSparseFlashAttentionGrad, ws, ex);
    return TC_CHECK(st == ACLNN_SUCCESS, "aclnnSparseFlashAttentionGrad returned %d: %s", st, aclGetRecentErrMsg());
}

/* Bytes outside a view must keep the output sentinel. */
static void check_gaps(const char *what, const dev_tensor *t, const unsigned char *covered)
{
    unsigned char *img = dt_download(t);
    int64_t touched = 0;
    for (size_t k = 0; k < t->bytes; k++)
        touched += !covered[k] && img[k] != SFA_GAP_OUT;
    TC_CHECK(touched == 0, "%lld bytes outside the %s view were written", (long long)touched, what);
    free(img);
}

/* ---- forward ------------------------------------------------------------------------------------- */

typedef struct fwd_result {
    double *out, *smax, *ssum; /* logical out; statistics in the reference's order */
} fwd_result;

/* Mode 3 as a dense mask: right-down causal (semantics §9 f). */
static bool causal_hidden(void *ctx, int b, int n1, int i, int j)
{
    const sfa_run *r = ctx;
    (void)n1;
    return j > r->s2[b] - r->s1[b] + i;
}

static ref_fwd dense_of(const sfa_run *r)
{
    ref_fwd d = ref_sparse_as_dense(&r->ref);
    d.ctx = (void *)r;
    d.hidden = r->c->mode == 3 ? causal_hidden : NULL;
    return d;
}

/* The reference of the case: sparse, or dense attention over [0, S2_b) (rows beyond S1_b then
 * carry the sparse reference's padding values, which the dense identity does not speak of). */
static fwd_result reference(const sfa_run *r)
{
    const int64_t rows = (int64_t)r->B * r->N1 * r->S1cap, nstat = ref_sparse_stat_count(&r->ref);
    fwd_result f = {calloc((size_t)rows * r->Dv, sizeof(double)), calloc((size_t)nstat, sizeof(double)),
                    calloc((size_t)nstat, sizeof(double))};
    ref_sparse_forward(&r->ref, f.out, f.smax, f.ssum);
    if (!r->c->dense)
        return f;
    const ref_fwd d = dense_of(r);
    double *out = calloc((size_t)rows * r->Dv, sizeof(double)), *m = calloc((size_t)rows, sizeof(double));
    double *l = calloc((size_t)rows, sizeof(double));
    ref_forward(&d, out, m, l);
    for (int b = 0; b < r->B; b++)
        for (int n1 = 0; n1 < r->N1; n1++)
            for (int i = 0; i < r->s1[b]; i++) {
                const int64_t row = ((int64_t)b * r->N1 + n1) * r->S1cap + i, at = ref_sparse_stat_index(&r->ref, b, n1, i);
                memcpy(f.out + row * r->Dv, out + row * r->Dv, sizeof(double) * (size_t)r->Dv);
                f.smax[at] = m[row], f.ssum[at] = l[row];
            }
    free(out), free(m), free(l);
    return f;
}

/* The library's forward results in the reference's shapes, with the exact and gap checks. */
static fwd_result check_forward(const sfa_run *r, const fwd_result *ref)
{
    const int64_t rows = (int64_t)r->B * r->N1 * r->S1cap, nstat = ref_sparse_stat_count(&r->ref);
    unsigned char *covered = calloc(r->tout.bytes, 1);
    fwd_result y = {sfa_read_seq(r, &r->tout, true, r->N1, r->Dv, covered), calloc((size_t)nstat, sizeof(double)),
                    calloc((size_t)nstat, sizeof(double))};
    check_gaps("attentionOutOut", &r->tout, covered);
    free(covered);
    tc_compare("attentionOutOut", y.out, ref->out, rows * r->Dv, tc_tol_out(r->c->dtype), 1.0);
    fa_tally_add(r->c->tally, ref->out, rows * r->Dv);
    if (r->c->no_lse)
        return y;
    unsigned char *mimg = dt_download(&r->tmax), *simg = dt_download(&r->tsum);
    unsigned char *cm = calloc(r->tmax.bytes, 1), *cs = calloc(r->tsum.bytes, 1);
    int64_t bad_empty = 0;
    for (int b = 0; b < r->B; b++)
        for (int n1 = 0; n1 < r->N1; n1++)
            for (int i = 0; i < sfa_q_rows(r, b); i++) {
                int64_t idx[4];
                sfa_stat_index(r, b, n1, i, idx);
                const int64_t at = ref_sparse_stat_index(&r->ref, b, n1, i), row = ((int64_t)b * r->N1 + n1) * r->S1cap + i;
                y.smax[at] = dt_get(&r->tmax, mimg, idx), y.ssum[at] = dt_get(&r->tsum, simg, idx);
                memset(cm + dt_at(&r->tmax, idx) * 4, 1, 4), memset(cs + dt_at(&r->tsum, idx) * 4, 1, 4);
                if (ref->smax[at] != -FLT_MAX)
                    continue;
                bool ok = tc_f32_bits((float)y.smax[at]) == TC_NEG_FLT_MAX_BITS &&
                          tc_f32_bits((float)y.ssum[at]) == TC_FLT_MAX_BITS;
                for (int e = 0; e < r->Dv; e++)
                    ok = ok && y.out[row * r->Dv + e] == 0.0;
                bad_empty += !ok;
            }
    TC_CHECK(bad_empty == 0, "%lld empty or padding rows are not out 0 with statistics (-FLT_MAX, FLT_MAX)",
             (long long)bad_empty);
    tc_compare("softmaxMaxOut", y.smax, ref->smax, nstat, tc_tol_max(), 1.0);
    tc_compare("softmaxSumOut", y.ssum, ref->ssum, nstat, tc_tol_sum(), 1.0);
    check_gaps("softmaxMaxOut", &r->tmax, cm);
    check_gaps("softmaxSumOut", &r->tsum, cs);
    free(mimg), free(simg), free(cm), free(cs);
    return y;
}

/* ---- grad ------------------------------------------------------------------------------------------ */

static void check_grad(const sfa_run *r, const char *what, const dev_tensor *t, bool q_side, int N, int E,
                       const double *ref)
{
    unsigned char *covered = calloc(t->bytes, 1);
    double *y = sfa_read_seq(r, t, q_side, N, E, covered);
    check_gaps(what, t, covered);
    const int64_t n = (int64_t)r->B * N * (q_side ? r->S1cap : r->S2cap) * E;
    tc_compare(what, y, ref, n, tc_tol_out(r->c->dtype), tc_grad_scale(ref, n));
    fa_tally_add(r->c->tally, ref, n);
    int64_t pad = 0; /* BSND padding positions: exactly 0 */
    for (int b = 0; b < r->B; b++)
        for (int64_t s = q_side ? r->s1[b] : r->s2[b]; s < (q_side ? sfa_q_rows(r, b) : sfa_kv_rows(r, b)); s++)
            for (int m = 0; m < N; m++)
                for (int e = 0; e < E; e++)
                    pad += y[(((int64_t)b * N + m) * (q_side ? r->S1cap : r->S2cap) + s) * E + e] != 0.0;
    TC_CHECK(pad == 0, "%s: %lld elements of padding positions are not 0", what, (long long)pad);
    free(covered), free(y);
}

static void grad(sfa_run *r, const fwd_result *y)
{
    sfa_setup_grad(r, y->smax, y->ssum);
    if (!call_grad(r))
        return;
    const ref_fwd d = dense_of(r);
    ref_grads g = ref_grads_alloc(&d);
    if (r->c->dense) { /* dense backward: statistics per row [B][N1][S1cap] */
        const int64_t rows = (int64_t)r->B * r->N1 * r->S1cap;
        double *m = calloc((size_t)rows, sizeof(double)), *l = calloc((size_t)rows, sizeof(double));
        for (int b = 0; b < r->B; b++)
            for (int n1 = 0; n1 < r->N1; n1++)
                for (int i = 0; i < r->s1[b]; i++) {
                    const int64_t at = ref_sparse_stat_index(&r->ref, b, n1, i);
                    m[((int64_t)b * r->N1 + n1) * r->S1cap + i] = y->smax[at];
                    l[((int64_t)b * r->N1 + n1) * r->S1cap + i] = y->ssum[at];
                }
        ref_backward(&d, r->dout, y->out, m, l, &g);
        free(m), free(l);
    } else {
        ref_sparse_backward(&r->ref, r->dout, y->out, y->smax, y->ssum, &g);
    }
    check_grad(r, "dQueryOut", &r->tdq, true, r->N1, r->D, g.dq);
    check_grad(r, "dKeyOut", &r->tdk, false, r->N2, r->D, g.dk);
    check_grad(r, "dValueOut", &r->tdv, false, r->N2, r->Dv, g.dv);
    if (r->Dr) {
        check_grad(r, "dQueryRopeOutOptional", &r->tdqr, true, r->N1, r->Dr, g.dq_rope);
        check_grad(r, "dKeyRopeOutOptional", &r->tdkr, false, r->N2, r->Dr, g.dk_rope);
    }
    ref_grads_free(&g);
}

bool sfa_run_case(const char *name, const sfa_case *c)
{
    tc_context("%s", name);
    sfa_run r;
    sfa_setup(&r, c);
    const bool ok = call_forward(&r);
    if (ok) {
        fwd_result ref = reference(&r);
        fwd_result y = check_forward(&r, &ref);
        if (c->backward)
            grad(&r, &y);
        free(ref.out), free(ref.smax), free(ref.ssum), free(y.out), free(y.smax), free(y.ssum);
    }
    sfa_teardown(&r);
    tc_context("%s", "");
    return ok;
}
