/* fa_run_case: data, upload, the operator's two phases, the reference, and the checks; the steps
 * are shared with the backward harness through harness_case.h. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "common/tolerance.h"
#include "harness_case.h"
#include "reference/dropout.h"
#include "reference/reference.h"
#include "reference/rules_cann.h"

fa_case fa_case_default(void)
{
    fa_case c;
    memset(&c, 0, sizeof c);
    c.fn = FA_V2;
    c.layout = "BNSD";
    c.dtype = TC_F32;
    c.B = 1, c.N1 = 2, c.N2 = 2, c.D = 16;
    c.S1 = 8, c.S2 = 8;
    c.pse_type = 1;
    c.mask_density = 0.3;
    c.seed = 1;
    return c;
}

void fa_mask_shape(fa_case *c, int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    c->mask_rank = rank;
    c->mask_dims[0] = d0, c->mask_dims[1] = d1, c->mask_dims[2] = d2, c->mask_dims[3] = d3;
}

void fa_mask_compressed(fa_case *c, bool four)
{
    const int64_t rows = c->sparse_mode == 6 ? 3072 : 2048;
    if (four)
        fa_mask_shape(c, 4, 1, 1, rows, 2048);
    else
        fa_mask_shape(c, 2, rows, 2048, 0, 0);
    c->mask_density = 0.5; /* random contents: they must not be read */
}

static aclDataType acl_dtype(tc_dtype t) { return t == TC_F16 ? ACL_FLOAT16 : t == TC_BF16 ? ACL_BF16 : ACL_FLOAT; }

/* The view shape of a sequence tensor with N heads of E features, and the index of (b, n, s, e). */
int fa_seq_dims(const fa_run *r, bool q_side, int N, int E, int64_t *dims)
{
    const char *l = r->c->layout;
    const int64_t S = q_side ? r->S1cap : r->S2cap, T = q_side ? r->T1 : r->T2;
    if (!strcmp(l, "BSH")) { dims[0] = r->B, dims[1] = S, dims[2] = (int64_t)N * E; return 3; }
    if (!strcmp(l, "SBH")) { dims[0] = S, dims[1] = r->B, dims[2] = (int64_t)N * E; return 3; }
    if (!strcmp(l, "BSND")) { dims[0] = r->B, dims[1] = S, dims[2] = N, dims[3] = E; return 4; }
    if (!strcmp(l, "BNSD")) { dims[0] = r->B, dims[1] = N, dims[2] = S, dims[3] = E; return 4; }
    dims[0] = T, dims[1] = N, dims[2] = E;
    return 3;
}

void fa_seq_index(const fa_run *r, bool q_side, int E, int b, int n, int s, int e, int64_t *idx)
{
    const char *l = r->c->layout;
    if (!strcmp(l, "BSH")) { idx[0] = b, idx[1] = s, idx[2] = (int64_t)n * E + e; return; }
    if (!strcmp(l, "SBH")) { idx[0] = s, idx[1] = b, idx[2] = (int64_t)n * E + e; return; }
    if (!strcmp(l, "BSND")) { idx[0] = b, idx[1] = s, idx[2] = n, idx[3] = e; return; }
    if (!strcmp(l, "BNSD")) { idx[0] = b, idx[1] = n, idx[2] = s, idx[3] = e; return; }
    idx[0] = (q_side ? r->cum1[b] : r->cum2[b]) + s, idx[1] = n, idx[2] = e;
}

/* Random values for a sequence operand: logical [B][N][Scap][E] doubles and the device tensor. */
double *fa_make_seq(fa_run *r, dev_tensor *t, bool q_side, int N, int E, aclDataType dt, unsigned char gap)
{
    int64_t dims[4];
    const int rank = fa_seq_dims(r, q_side, N, E, dims);
    dt_layout(t, dt, rank, dims, r->c->strides, gap);
    const int Scap = q_side ? r->S1cap : r->S2cap;
    double *x = calloc((size_t)r->B * N * Scap * E, sizeof *x);
    const double range = r->c->range > 0 ? r->c->range : 1.0;
    for (int b = 0; b < r->B; b++)
        for (int n = 0; n < N; n++)
            for (int s = 0; s < (q_side ? r->s1[b] : r->s2[b]); s++)
                for (int e = 0; e < E; e++) {
                    int64_t idx[4];
                    const double val = tc_round(r->c->dtype, tc_rng_uniform(&r->rng, -range, range));
                    x[(((int64_t)b * N + n) * Scap + s) * E + e] = val;
                    fa_seq_index(r, q_side, E, b, n, s, e, idx);
                    if (gap != GAP_OUT)
                        dt_set(t, idx, val);
                }
    dt_upload(t);
    return x;
}

static int64_t numel(int rank, const int64_t *d)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++)
        n *= d[k];
    return n;
}

/* Walks a multi-index over dims in row-major order; false after the last. */
static bool next_index(int rank, const int64_t *dims, int64_t *idx)
{
    for (int k = rank - 1; k >= 0; k--) {
        if (++idx[k] < dims[k])
            return true;
        idx[k] = 0;
    }
    return false;
}

/* A tensor of the given shape with values from vals (contiguous logical array). */
static void make_plain(fa_run *r, dev_tensor *t, aclDataType dt, int rank, const int64_t *dims, const double *vals,
                       const uint8_t *bytes, fa_strides st)
{
    (void)r;
    dt_layout(t, dt, rank, dims, st, GAP_IN);
    if (bytes && st == ST_CONTIGUOUS) { /* byte tensors laid out as given: one copy */
        memcpy(t->host, bytes, (size_t)numel(rank, dims));
    } else {
        int64_t idx[8] = {0}, k = 0;
        do
            dt_set(t, idx, vals ? vals[k] : bytes[k]), k++;
        while (next_index(rank, dims, idx));
    }
    dt_upload(t);
}

void fa_setup_sizes(fa_run *r, const fa_case *c)
{
    r->c = c;
    r->tnd = !strcmp(c->layout, "TND");
    r->B = c->B, r->N1 = c->N1, r->N2 = c->N2, r->D = c->D, r->Dv = c->Dv ? c->Dv : c->D, r->Dr = c->Dr;
    r->adt = acl_dtype(c->dtype);
    r->rng = tc_rng_seed(c->seed);
    r->S1cap = r->S2cap = 0;
    r->cum1[0] = r->cum2[0] = 0;
    for (int b = 0; b < r->B; b++) {
        r->s1[b] = r->tnd ? c->s1[b] : c->S1;
        r->s2[b] = r->tnd ? c->s2[b] : c->S2;
        r->S1cap = r->s1[b] > r->S1cap ? r->s1[b] : r->S1cap;
        r->S2cap = r->s2[b] > r->S2cap ? r->s2[b] : r->S2cap;
        r->cum1[b + 1] = r->cum1[b] + r->s1[b];
        r->cum2[b + 1] = r->cum2[b] + r->s2[b];
    }
    r->T1 = r->cum1[r->B];
    r->T2 = r->cum2[r->B];
}

static void poison_inputs(fa_run *r, const fa_case *c);

void fa_setup_inputs(fa_run *r, const fa_case *c)
{
    r->q = fa_make_seq(r, &r->tq, true, r->N1, r->D, r->adt, GAP_IN);
    r->k = fa_make_seq(r, &r->tk, false, r->N2, r->D, r->adt, GAP_IN);
    r->v = fa_make_seq(r, &r->tv, false, r->N2, r->Dv, r->adt, GAP_IN);
    if (r->Dr) {
        r->qr = fa_make_seq(r, &r->tqr, true, r->N1, r->Dr, r->adt, GAP_IN);
        r->kr = fa_make_seq(r, &r->tkr, false, r->N2, r->Dr, r->adt, GAP_IN);
    }
    if (c->mask_rank) {
        const int64_t n = numel(c->mask_rank, c->mask_dims);
        r->mask = malloc((size_t)n);
        if (n >= 2048 * 2048) { /* compressed masks are never read: cheap varied bytes suffice */
            for (int64_t k = 0; k < n; k++)
                r->mask[k] = (uint8_t)(((uint64_t)k * 2654435761u) >> 13 & 1);
        } else {
            for (int64_t k = 0; k < n; k++)
                r->mask[k] = (uint8_t)tc_rng_bool(&r->rng, c->mask_density);
        }
        const fa_strides mst = n >= 2048 * 2048 ? ST_CONTIGUOUS : c->strides; /* big and never read */
        make_plain(r, &r->tmask, c->mask_u8 ? ACL_UINT8 : ACL_BOOL, c->mask_rank, c->mask_dims, NULL, r->mask, mst);
    }
    if (c->pse_rank) {
        const int64_t n = numel(c->pse_rank, c->pse_dims);
        const bool alibi = c->pse_type >= 2;
        r->pse = malloc((size_t)n * sizeof *r->pse);
        for (int64_t k = 0; k < n; k++)
            r->pse[k] = alibi ? tc_round(TC_F32, tc_rng_uniform(&r->rng, 0.01, 0.5))
                              : tc_round(c->dtype, tc_rng_uniform(&r->rng, -1, 1));
        make_plain(r, &r->tpse, alibi ? ACL_FLOAT : r->adt, c->pse_rank, c->pse_dims, r->pse, NULL, c->strides);
    }
    if (c->keep_prob > 0 && c->keep_prob < 1) {
        const int64_t need = ref_drop_bytes(r->B, r->N1, r->s1, r->s2), n = need > 0 ? need : 1; /* dims >= 1 */
        r->drop = malloc((size_t)n);
        for (int64_t k = 0; k < n; k++)
            r->drop[k] = c->all_keep ? 0xFF : (uint8_t)tc_rng_u64(&r->rng);
        make_plain(r, &r->tdrop, ACL_UINT8, 1, &n, NULL, r->drop, ST_CONTIGUOUS);
    }
    if (c->sink) {
        r->sink = malloc((size_t)r->N1 * sizeof *r->sink);
        for (int n = 0; n < r->N1; n++)
            r->sink[n] = c->sink == 2 && n % 2 == 0 ? -INFINITY : tc_round(TC_F32, tc_rng_uniform(&r->rng, -1, 1));
        const int64_t n1 = r->N1;
        make_plain(r, &r->tsink, ACL_FLOAT, 1, &n1, r->sink, NULL, c->strides == ST_GAPS ? ST_CONTIGUOUS : c->strides);
    }
    poison_inputs(r, c);
}

/* Puts the case's poison values (all but d_out, which the backward harness owns) into the
 * logical data and the device tensors. */
static void poison_inputs(fa_run *r, const fa_case *c)
{
    for (int k = 0; k < c->npoison; k++) {
        const fa_poison *p = &c->poison[k];
        const int64_t *x = p->idx;
        int64_t idx[4];
        if (p->at == FA_AT_Q || p->at == FA_AT_K || p->at == FA_AT_V) {
            const bool q = p->at == FA_AT_Q;
            const int N = q ? r->N1 : r->N2, E = p->at == FA_AT_V ? r->Dv : r->D, cap = q ? r->S1cap : r->S2cap;
            double *logical = q ? r->q : p->at == FA_AT_K ? r->k : r->v;
            logical[((x[0] * N + x[1]) * cap + x[2]) * E + x[3]] = p->value;
            fa_seq_index(r, q, E, (int)x[0], (int)x[1], (int)x[2], (int)x[3], idx);
            dt_poke(q ? &r->tq : p->at == FA_AT_K ? &r->tk : &r->tv, idx, p->value);
        } else if (p->at == FA_AT_PSE) {
            int64_t flat = 0;
            for (int d = 0; d < c->pse_rank; d++)
                flat = flat * c->pse_dims[d] + x[d];
            r->pse[flat] = p->value;
            dt_poke(&r->tpse, x, p->value);
        } else if (p->at == FA_AT_SINK) {
            r->sink[x[0]] = p->value;
            dt_poke(&r->tsink, x, p->value);
        }
    }
}

void fa_setup_outputs(fa_run *r, const fa_case *c)
{
    int64_t sdims[4];
    int srank;
    if (!r->tnd)
        srank = 4, sdims[0] = r->B, sdims[1] = r->N1, sdims[2] = r->S1cap, sdims[3] = 8;
    else if (c->stats_nt)
        srank = 3, sdims[0] = r->N1, sdims[1] = r->T1, sdims[2] = 8;
    else
        srank = 3, sdims[0] = r->T1, sdims[1] = r->N1, sdims[2] = 8;
    dt_layout(&r->tmax, ACL_FLOAT, srank, sdims, ST_CONTIGUOUS, GAP_OUT);
    dt_upload(&r->tmax);
    dt_layout(&r->tsum, ACL_FLOAT, srank, sdims, ST_CONTIGUOUS, GAP_OUT);
    dt_upload(&r->tsum);
    free(fa_make_seq(r, &r->tout, true, r->N1, r->Dv, r->adt, GAP_OUT));
}

static aclIntArray *ints(const int64_t *v, uint64_t n) { return aclCreateIntArray(v, n); }

void fa_setup_arrays(fa_run *r, const fa_case *c)
{
    if (c->prefix)
        r->prefix = ints(c->prefix_v, (uint64_t)r->B);
    if (r->tnd) {
        r->aq = ints(r->cum1 + 1, (uint64_t)r->B);
        r->akv = ints(r->cum2 + 1, (uint64_t)r->B);
    }
    if (c->starts) {
        r->qs = ints(&c->q_start, 1);
        r->kvs = ints(&c->kv_start, 1);
    }
}

/* The operator's first phase. */
aclnnStatus fa_case_prepare(fa_run *r, uint64_t *ws, aclOpExecutor **ex)
{
    const fa_case *c = r->c;
    const double scale = c->scale != 0 ? c->scale : 1.0 / sqrt((double)c->D);
    const double keep = c->keep_prob > 0 ? c->keep_prob : 1.0;
    const int64_t pre = c->band ? c->pre : 2147483647, next = c->band ? c->next : 2147483647;
    char layout[8];
    snprintf(layout, sizeof layout, "%s", c->layout);
    char sml[16] = "same_as_input";
    switch (c->fn) {
    case FA_V1:
        return aclnnFlashAttentionScoreGetWorkspaceSize(r->tq.t, r->tk.t, r->tv.t, r->tpse.t, r->tdrop.t, NULL,
                                                        r->tmask.t, r->prefix, scale, keep, pre, next, c->N1, layout,
                                                        c->inner_precise, c->sparse_mode, r->tmax.t, r->tsum.t, NULL,
                                                        r->tout.t, ws, ex);
    case FA_V2:
        return aclnnFlashAttentionScoreV2GetWorkspaceSize(r->tq.t, r->tk.t, r->tv.t, r->tpse.t, r->tdrop.t, NULL,
                                                          r->tmask.t, r->prefix, r->qs, r->kvs, scale, keep, pre, next,
                                                          c->N1, layout, c->inner_precise, c->sparse_mode, c->pse_type,
                                                          r->tmax.t, r->tsum.t, NULL, r->tout.t, ws, ex);
    case FA_V3:
        return aclnnFlashAttentionScoreV3GetWorkspaceSize(r->tq.t, r->tk.t, r->tv.t, r->tpse.t, r->tdrop.t, NULL,
                                                          r->tmask.t, r->tsink.t, r->prefix, r->qs, r->kvs, scale, keep,
                                                          pre, next, c->N1, layout, c->inner_precise, c->sparse_mode,
                                                          c->pse_type, r->tmax.t, r->tsum.t, NULL, r->tout.t, ws, ex);
    case FA_VARLEN:
        return aclnnFlashAttentionVarLenScoreGetWorkspaceSize(r->tq.t, r->tk.t, r->tv.t, r->tpse.t, r->tdrop.t, NULL,
                                                              r->tmask.t, r->prefix, r->aq, r->akv, scale, keep, pre,
                                                              next, c->N1, layout, c->inner_precise, c->sparse_mode,
                                                              r->tmax.t, r->tsum.t, NULL, r->tout.t, ws, ex);
    default:
        return aclnnFlashAttentionVarLenScoreV5GetWorkspaceSize(
            r->tq.t, r->tqr.t, r->tk.t, r->tkr.t, r->tv.t, r->tpse.t, r->tdrop.t, NULL, r->tmask.t, r->tsink.t,
            r->prefix, r->aq, r->akv, r->qs, r->kvs, scale, keep, pre, next, c->N1, layout, c->inner_precise,
            c->sparse_mode, c->pse_type, c->same_as_input ? sml : NULL, r->tmax.t, r->tsum.t, NULL, r->tout.t, ws, ex);
    }
}

aclnnStatus fa_case_execute(const fa_run *r, void *ws, uint64_t bytes, aclOpExecutor *ex, aclrtStream stream)
{
    switch (r->c->fn) {
    case FA_V1: return aclnnFlashAttentionScore(ws, bytes, ex, stream);
    case FA_V2: return aclnnFlashAttentionScoreV2(ws, bytes, ex, stream);
    case FA_V3: return aclnnFlashAttentionScoreV3(ws, bytes, ex, stream);
    case FA_VARLEN: return aclnnFlashAttentionVarLenScore(ws, bytes, ex, stream);
    default: return aclnnFlashAttentionVarLenScoreV5(ws, bytes, ex, stream);
    }
}

/* The reference's description of the case (hooks plugged into cann). */
void fa_case_reference(const fa_run *r, ref_fwd *fwd, ref_cann *cann)
{
    const fa_case *c = r->c;
    ref_cann rc = {.B = r->B, .N1 = r->N1, .S1 = r->s1, .S2 = r->s2, .tnd = r->tnd, .sparse_mode = c->sparse_mode,
                   .pre_tokens = c->band ? c->pre : 2147483647, .next_tokens = c->band ? c->next : 2147483647,
                   .prefix = c->prefix_v, .mask = r->mask, .mask_rank = c->mask_rank, .pse = r->pse,
                   .pse_type = c->pse_type, .pse_rank = c->pse_rank, .q_start_idx = c->starts ? c->q_start : 0,
                   .kv_start_idx = c->starts ? c->kv_start : 0, .drop_mask = r->drop};
    memcpy(rc.mask_dims, c->mask_dims, sizeof rc.mask_dims);
    memcpy(rc.pse_dims, c->pse_dims, sizeof rc.pse_dims);
    ref_fwd f = {.B = r->B, .N1 = r->N1, .N2 = r->N2, .D = r->D, .Dv = r->Dv, .Dr = r->Dr, .S1cap = r->S1cap,
                 .S2cap = r->S2cap, .S1 = r->s1, .S2 = r->s2, .q = r->q, .k = r->k, .v = r->v, .q_rope = r->qr,
                 .k_rope = r->kr, .scale = c->scale != 0 ? c->scale : 1.0 / sqrt((double)c->D), .sink = r->sink,
                 .keep_prob = r->drop ? c->keep_prob : 1.0};
    *cann = rc;
    *fwd = f;
    ref_cann_plug(fwd, cann);
}

/* Offset of replica 0 of row (b, n1, i) in the statistics (semantics §2.8). */
int64_t fa_stat_at(const fa_run *r, int b, int n1, int i)
{
    if (!r->tnd)
        return (((int64_t)b * r->N1 + n1) * r->S1cap + i) * 8;
    if (r->c->same_as_input)
        return ((r->cum1[b] + i) * r->N1 + n1) * 8;
    return (r->cum1[b] * r->N1 + (int64_t)n1 * r->s1[b] + i) * 8;
}

static void check_outputs(const fa_run *r, const double *rout, const double *rmax, const double *rsum)
{
    unsigned char *oimg = dt_download(&r->tout), *mimg = dt_download(&r->tmax), *simg = dt_download(&r->tsum);
    unsigned char *covered = calloc(r->tout.bytes, 1);
    const size_t es = dt_esize(r->adt);
    const int64_t nrows = (int64_t)r->B * r->N1 * r->S1cap;
    double *y = calloc((size_t)nrows * r->Dv, sizeof *y), *ref = calloc((size_t)nrows * r->Dv, sizeof *ref);
    double *ym = calloc((size_t)nrows, sizeof *ym), *rm = calloc((size_t)nrows, sizeof *rm);
    double *ys = calloc((size_t)nrows, sizeof *ys), *rs = calloc((size_t)nrows, sizeof *rs);
    int64_t n = 0, ns = 0, empty = 0;
    for (int b = 0; b < r->B; b++)
        for (int n1 = 0; n1 < r->N1; n1++)
            for (int i = 0; i < r->s1[b]; i++) {
                const int64_t row = ((int64_t)b * r->N1 + n1) * r->S1cap + i;
                const bool fully = rmax[row] == -FLT_MAX && rsum[row] == FLT_MAX;
                for (int e = 0; e < r->Dv; e++) {
                    int64_t idx[4];
                    fa_seq_index(r, true, r->Dv, b, n1, i, e, idx);
                    const double got = dt_get(&r->tout, oimg, idx);
                    memset(covered + dt_at(&r->tout, idx) * es, 1, es);
                    if (fully)
                        TC_CHECK(got == 0.0, "out[b=%d][n=%d][i=%d][%d] of a fully masked row must be 0, got %g", b, n1,
                                 i, e, got);
                    y[n] = got, ref[n] = rout[row * r->Dv + e], n++;
                }
                const float *mx = (const float *)mimg + fa_stat_at(r, b, n1, i), *sm = (const float *)simg + fa_stat_at(r, b, n1, i);
                for (int k = 1; k < 8; k++)
                    TC_CHECK(tc_f32_bits(mx[k]) == tc_f32_bits(mx[0]) && tc_f32_bits(sm[k]) == tc_f32_bits(sm[0]),
                             "statistics replica %d of row b=%d n=%d i=%d differs from replica 0", k, b, n1, i);
                if (fully) {
                    empty++;
                    TC_CHECK(tc_f32_bits(mx[0]) == TC_NEG_FLT_MAX_BITS && tc_f32_bits(sm[0]) == TC_FLT_MAX_BITS,
                             "fully masked row b=%d n=%d i=%d: statistics must be (-FLT_MAX, FLT_MAX), got (%g, %g)", b,
                             n1, i, mx[0], sm[0]);
                }
                ym[ns] = mx[0], rm[ns] = rmax[row], ys[ns] = sm[0], rs[ns] = rsum[row], ns++;
            }
    tc_compare("attentionOut", y, ref, n, tc_tol_out(r->c->dtype), 1.0);
    fa_tally_add(r->c->tally, ref, n);
    tc_compare("softmaxMax", ym, rm, ns, tc_tol_max(), 1.0);
    tc_compare("softmaxSum", ys, rs, ns, tc_tol_sum(), 1.0);
    int64_t touched = 0;
    for (size_t k = 0; k < r->tout.bytes; k++)
        touched += !covered[k] && oimg[k] != GAP_OUT;
    TC_CHECK(touched == 0, "%lld bytes outside the attentionOut view were written", (long long)touched);
    free(covered), free(oimg), free(mimg), free(simg), free(y), free(ref), free(ym), free(rm), free(ys), free(rs);
    (void)empty;
}

void fa_teardown(fa_run *r)
{
    dev_tensor *ts[] = {&r->tq, &r->tk, &r->tv, &r->tqr, &r->tkr, &r->tpse, &r->tmask,
                        &r->tdrop, &r->tsink, &r->tmax, &r->tsum, &r->tout};
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
        dt_free(ts[k]);
    aclDestroyIntArray(r->prefix), aclDestroyIntArray(r->aq), aclDestroyIntArray(r->akv);
    aclDestroyIntArray(r->qs), aclDestroyIntArray(r->kvs);
    free(r->q), free(r->k), free(r->v), free(r->qr), free(r->kr), free(r->pse), free(r->sink), free(r->mask);
    free(r->drop);
}

void fa_setup(fa_run *r, const fa_case *c)
{
    memset(r, 0, sizeof *r);
    fa_setup_sizes(r, c);
    fa_setup_inputs(r, c);
    fa_setup_outputs(r, c);
    fa_setup_arrays(r, c);
}

static aclnnStatus forward_second_phase(void *ws, uint64_t bytes, aclOpExecutor *ex, aclrtStream s, const void *ctx)
{
    return fa_case_execute(ctx, ws, bytes, ex, s);
}

bool fa_run_phases(aclnnStatus st, uint64_t ws, aclOpExecutor *ex, const char *what, fa_second_phase run,
                   const void *ctx)
{
    if (!TC_CHECK(st == ACLNN_SUCCESS, "%s GetWorkspaceSize returned %d: %s", what, st, aclGetRecentErrMsg()))
        return false;
    void *wsp = NULL;
    if (ws > 0 && aclrtMalloc(&wsp, ws, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        abort();
    aclrtStream stream;
    aclrtCreateStream(&stream);
    st = run(wsp, ws, ex, stream, ctx);
    const bool ok = TC_CHECK(st == ACLNN_SUCCESS, "%s second phase returned %d: %s", what, st, aclGetRecentErrMsg());
    TC_CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "aclrtSynchronizeStream failed");
    aclrtDestroyStream(stream);
    if (wsp)
        aclrtFree(wsp);
    return ok;
}

bool fa_forward(fa_run *r)
{
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    const aclnnStatus st = fa_case_prepare(r, &ws, &ex);
    return fa_run_phases(st, ws, ex, "forward", forward_second_phase, r);
}

void fa_check_forward(const fa_run *r)
{
    const int64_t rows = (int64_t)r->B * r->N1 * r->S1cap;
    double *out = calloc((size_t)rows * r->Dv, sizeof *out), *smax = calloc((size_t)rows, sizeof *smax);
    double *ssum = calloc((size_t)rows, sizeof *ssum);
    ref_fwd f;
    ref_cann rc;
    fa_case_reference(r, &f, &rc);
    ref_forward(&f, out, smax, ssum);
    check_outputs(r, out, smax, ssum);
    free(out), free(smax), free(ssum);
}

bool fa_run_case(const char *name, const fa_case *c)
{
    tc_context("%s", name);
    fa_run r;
    fa_setup(&r, c);
    const bool ok = fa_forward(&r);
    if (ok)
        fa_check_forward(&r);
    fa_teardown(&r);
    return ok;
}
