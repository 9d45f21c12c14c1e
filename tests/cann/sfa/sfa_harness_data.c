/* sfa_run_case's data: sizes, seeded values, index lists, lengths, block table, device tensors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sfa_harness_internal.h"

static aclDataType acl_dtype(tc_dtype t) { return t == TC_BF16 ? ACL_BF16 : ACL_FLOAT16; }

static int imax(int a, int b) { return a > b ? a : b; }

int sfa_q_rows(const sfa_run *r, int b) { return r->qt ? r->s1[b] : r->S1cap; }
int sfa_kv_rows(const sfa_run *r, int b) { return r->kt || r->pa ? r->s2[b] : r->S2cap; }

static int seq_dims(const sfa_run *r, bool q_side, int N, int E, int64_t *dims)
{
    if (q_side ? r->qt : r->kt) {
        dims[0] = q_side ? r->T1 : r->T2, dims[1] = N, dims[2] = E;
        return 3;
    }
    dims[0] = q_side ? r->B : r->pa ? r->nblocks : r->B;
    dims[1] = q_side ? r->S1cap : r->pa ? r->c->page : r->S2cap;
    dims[2] = N, dims[3] = E;
    return 4;
}

void sfa_seq_index(const sfa_run *r, bool q_side, int b, int n, int s, int e, int64_t *idx)
{
    if (q_side ? r->qt : r->kt) {
        idx[0] = (q_side ? r->cum1[b] : r->cum2[b]) + s, idx[1] = n, idx[2] = e;
        return;
    }
    if (!q_side && r->pa) {
        idx[0] = r->table[b * r->W + s / r->c->page], idx[1] = s % r->c->page, idx[2] = n, idx[3] = e;
        return;
    }
    idx[0] = b, idx[1] = s, idx[2] = n, idx[3] = e;
}

void sfa_stat_index(const sfa_run *r, int b, int n1, int i, int64_t *idx)
{
    if (r->qt) {
        idx[0] = n1 / r->G, idx[1] = r->cum1[b] + i, idx[2] = n1 % r->G;
        return;
    }
    idx[0] = b, idx[1] = n1 / r->G, idx[2] = i, idx[3] = n1 % r->G;
}

/* Random values for a sequence operand: logical [B][N][Scap][E] and the uploaded tensor; every
 * position outside the batches' lengths holds NaN. */
static double *make_seq(sfa_run *r, dev_tensor *t, bool q_side, int N, int E)
{
    int64_t dims[4];
    const int rank = seq_dims(r, q_side, N, E, dims);
    dt_layout(t, r->adt, rank, dims, r->c->strides, SFA_GAP_IN);
    const int Scap = q_side ? r->S1cap : r->S2cap;
    double *x = calloc((size_t)r->B * N * Scap * E, sizeof *x);
    for (int b = 0; b < r->B; b++)
        for (int n = 0; n < N; n++)
            for (int s = 0; s < (q_side ? r->s1[b] : r->s2[b]); s++)
                for (int e = 0; e < E; e++) {
                    int64_t idx[4];
                    const double val = tc_round(r->c->dtype, tc_rng_uniform(&r->rng, -1.0, 1.0));
                    x[(((int64_t)b * N + n) * Scap + s) * E + e] = val;
                    sfa_seq_index(r, q_side, b, n, s, e, idx);
                    dt_set(t, idx, val);
                }
    dt_upload(t);
    return x;
}

static void set_int(dev_tensor *t, const int64_t *idx, int64_t v)
{
    const int64_t e = dt_at(t, idx);
    if (t->dt == ACL_INT64)
        ((int64_t *)t->host)[e] = v;
    else
        ((int32_t *)t->host)[e] = (int32_t)v;
}

/* A rank-1 length tensor: per-batch values, or running totals when cumulative. */
static void make_lengths(sfa_run *r, dev_tensor *t, const int *len, bool cumulative)
{
    const int64_t dims[1] = {r->B};
    dt_layout(t, r->c->len64 ? ACL_INT64 : ACL_INT32, 1, dims, r->c->strides, 0xEE);
    int64_t total = 0;
    for (int64_t b = 0; b < r->B; b++) {
        total += len[b];
        set_int(t, &b, cumulative ? total : len[b]);
    }
    dt_upload(t);
}

/* The index row of (b, i, n2): entries in units of the block size, −1 ends the list. */
static void index_row(sfa_run *r, int b, int64_t *row)
{
    const int K = r->K, bs = r->c->bs, nblk = (r->s2[b] + bs - 1) / bs;
    int n = 0;
    if (r->c->fill == SFA_FILL_RANDOM) {
        const int valid = tc_rng_bool(&r->rng, 0.1) ? 0 : (int)tc_rng_int(&r->rng, 1, K);
        for (; n < valid; n++)
            row[n] = tc_rng_int(&r->rng, 0, (r->S2cap + bs - 1) / bs); /* may lie past the batch: skipped */
        for (int k = n; k < K; k++) /* after the first −1 anything may follow */
            row[k] = k == n ? -1 : tc_rng_bool(&r->rng, 0.5) ? tc_rng_int(&r->rng, 0, nblk) : -3;
        return;
    }
    for (; n < K && n < nblk; n++)
        row[n] = r->c->fill == SFA_FILL_ALL ? n : nblk - 1 - n;
    for (int k = n; k < K; k++)
        row[k] = -1;
}

static void make_indices(sfa_run *r)
{
    int64_t dims[4];
    const int rank = seq_dims(r, true, r->N2, r->K, dims);
    dt_layout(&r->tidx, r->c->idx64 ? ACL_INT64 : ACL_INT32, rank, dims, r->c->strides, 0x00);
    int64_t *row = malloc(sizeof(int64_t) * (size_t)r->K);
    for (int b = 0; b < r->B; b++)
        for (int i = 0; i < r->s1[b]; i++)
            for (int n2 = 0; n2 < r->N2; n2++) {
                index_row(r, b, row);
                for (int k = 0; k < r->K; k++) {
                    int64_t idx[4];
                    sfa_seq_index(r, true, b, n2, i, k, idx);
                    set_int(&r->tidx, idx, row[k]);
                }
            }
    free(row);
    dt_upload(&r->tidx);
    const int64_t *st = r->tidx.strides;
    r->ref.indices = r->tidx.host + r->tidx.offset * (int64_t)dt_esize(r->tidx.dt);
    r->ref.indices_i64 = r->c->idx64;
    if (r->qt)
        r->ref.st_seq = st[0], r->ref.st_head = st[1], r->ref.st_entry = st[2];
    else
        r->ref.st_batch = st[0], r->ref.st_seq = st[1], r->ref.st_head = st[2], r->ref.st_entry = st[3];
}

/* PA: a random permutation of the physical blocks; entries past a batch's length are garbage. */
static void make_table(sfa_run *r)
{
    const int page = r->c->page;
    r->W = (r->S2cap + page - 1) / page + 1;
    r->nblocks = r->B * r->W + 1;
    int *perm = malloc(sizeof(int) * (size_t)r->nblocks);
    for (int k = 0; k < r->nblocks; k++)
        perm[k] = k;
    for (int k = r->nblocks - 1; k > 0; k--) {
        const int j = (int)tc_rng_int(&r->rng, 0, k), t = perm[k];
        perm[k] = perm[j], perm[j] = t;
    }
    r->table = malloc(sizeof(int32_t) * (size_t)(r->B * r->W));
    const int64_t dims[2] = {r->B, r->W};
    dt_layout(&r->ttab, ACL_INT32, 2, dims, r->c->strides, 0);
    for (int b = 0; b < r->B; b++)
        for (int w = 0; w < r->W; w++) {
            const int64_t idx[2] = {b, w};
            r->table[b * r->W + w] = w < (r->s2[b] + page - 1) / page ? perm[b * r->W + w] : -7;
            set_int(&r->ttab, idx, r->table[b * r->W + w]);
        }
    free(perm);
    dt_upload(&r->ttab);
}

static void sizes(sfa_run *r, const sfa_case *c)
{
    r->c = c;
    r->qt = !strcmp(c->lq, "TND");
    r->kt = !strcmp(c->lkv, "TND");
    r->pa = !strcmp(c->lkv, "PA_BSND");
    r->B = c->B, r->N1 = c->N1, r->N2 = c->N2, r->G = c->N1 / c->N2, r->D = c->D;
    r->Dv = c->Dv ? c->Dv : c->D, r->Dr = c->Dr, r->K = c->K;
    r->adt = acl_dtype(c->dtype);
    r->rng = tc_rng_seed(c->seed);
    r->scale = c->scale != 0 ? c->scale : 1.0 / sqrt((double)(c->D + c->Dr));
    int m1 = 1, m2 = 1;
    for (int b = 0; b < c->B; b++)
        m1 = imax(m1, c->s1[b]), m2 = imax(m2, c->s2[b]);
    const bool dense_q = !r->qt, dense_kv = !r->kt && !r->pa;
    r->S1cap = dense_q && c->S1 ? c->S1 : m1;
    r->S2cap = dense_kv && c->S2 ? c->S2 : m2;
    for (int b = 0; b < c->B; b++) { /* a BSND side without lengths has its padded length everywhere */
        r->s1[b] = dense_q && !c->lens_q ? r->S1cap : c->s1[b];
        r->s2[b] = dense_kv && !c->lens_kv ? r->S2cap : c->s2[b];
        r->cum1[b + 1] = r->cum1[b] + r->s1[b];
        r->cum2[b + 1] = r->cum2[b] + r->s2[b];
    }
    r->T1 = r->cum1[c->B], r->T2 = r->cum2[c->B];
}

static void make_outputs(sfa_run *r)
{
    int64_t dims[4];
    int rank = seq_dims(r, true, r->N1, r->Dv, dims);
    dt_layout(&r->tout, r->adt, rank, dims, r->c->strides, SFA_GAP_OUT);
    dt_upload(&r->tout);
    if (r->c->no_lse)
        return;
    const int64_t sd[4] = {r->B, r->N2, r->S1cap, r->G}, st[3] = {r->N2, r->T1, r->G};
    rank = r->qt ? 3 : 4;
    dt_layout(&r->tmax, ACL_FLOAT, rank, r->qt ? st : sd, r->c->strides, SFA_GAP_OUT);
    dt_layout(&r->tsum, ACL_FLOAT, rank, r->qt ? st : sd, r->c->strides, SFA_GAP_OUT);
    dt_upload(&r->tmax);
    dt_upload(&r->tsum);
}

void sfa_setup(sfa_run *r, const sfa_case *c)
{
    memset(r, 0, sizeof *r);
    sizes(r, c);
    if (r->pa)
        make_table(r);
    r->q = make_seq(r, &r->tq, true, r->N1, r->D);
    r->k = make_seq(r, &r->tk, false, r->N2, r->D);
    r->v = make_seq(r, &r->tv, false, r->N2, r->Dv);
    if (r->Dr) {
        r->qr = make_seq(r, &r->tqr, true, r->N1, r->Dr);
        r->kr = make_seq(r, &r->tkr, false, r->N2, r->Dr);
    }
    if (r->qt || c->lens_q)
        make_lengths(r, &r->taq, r->s1, r->qt);
    if (r->kt || r->pa || c->lens_kv)
        make_lengths(r, &r->takv, r->s2, r->kt);
    make_indices(r);
    make_outputs(r);
    ref_sparse *p = &r->ref;
    p->B = r->B, p->N1 = r->N1, p->N2 = r->N2, p->D = r->D, p->Dv = r->Dv, p->Dr = r->Dr;
    p->S1cap = r->S1cap, p->S2cap = r->S2cap, p->S1 = r->s1, p->S2 = r->s2;
    p->q = r->q, p->k = r->k, p->v = r->v, p->q_rope = r->qr, p->k_rope = r->kr;
    p->scale = r->scale;
    p->K = r->K, p->block_size = c->bs, p->tnd = r->qt, p->causal = c->mode == 3;
}

void sfa_setup_grad(sfa_run *r, const double *smax, const double *ssum)
{
    r->dout = make_seq(r, &r->tdout, true, r->N1, r->Dv);
    const int64_t sd[4] = {r->B, r->N2, r->S1cap, r->G}, st[3] = {r->N2, r->T1, r->G};
    const int rank = r->qt ? 3 : 4;
    dt_layout(&r->tmax_in, ACL_FLOAT, rank, r->qt ? st : sd, ST_CONTIGUOUS, SFA_GAP_IN);
    dt_layout(&r->tsum_in, ACL_FLOAT, rank, r->qt ? st : sd, ST_CONTIGUOUS, SFA_GAP_IN);
    for (int b = 0; b < r->B; b++)
        for (int n1 = 0; n1 < r->N1; n1++)
            for (int i = 0; i < sfa_q_rows(r, b); i++) {
                int64_t idx[4];
                sfa_stat_index(r, b, n1, i, idx);
                const int64_t at = ref_sparse_stat_index(&r->ref, b, n1, i);
                dt_set(&r->tmax_in, idx, smax[at]);
                dt_set(&r->tsum_in, idx, ssum[at]);
            }
    dt_upload(&r->tmax_in);
    dt_upload(&r->tsum_in);
    struct {
        dev_tensor *t;
        bool q_side;
        int N, E;
    } g[] = {{&r->tdq, true, r->N1, r->D}, {&r->tdk, false, r->N2, r->D}, {&r->tdv, false, r->N2, r->Dv},
             {&r->tdqr, true, r->N1, r->Dr}, {&r->tdkr, false, r->N2, r->Dr}};
    for (int k = 0; k < (r->Dr ? 5 : 3); k++) {
        int64_t dims[4];
        const int rk = seq_dims(r, g[k].q_side, g[k].N, g[k].E, dims);
        dt_layout(g[k].t, r->adt, rk, dims, r->c->strides, SFA_GAP_OUT);
        dt_upload(g[k].t);
    }
}

double *sfa_read_seq(const sfa_run *r, const dev_tensor *t, bool q_side, int N, int E, unsigned char *covered)
{
    const int Scap = q_side ? r->S1cap : r->S2cap;
    unsigned char *img = dt_download(t);
    double *x = calloc((size_t)r->B * N * Scap * E, sizeof *x);
    const size_t es = dt_esize(t->dt);
    for (int b = 0; b < r->B; b++)
        for (int n = 0; n < N; n++)
            for (int s = 0; s < (q_side ? sfa_q_rows(r, b) : sfa_kv_rows(r, b)); s++)
                for (int e = 0; e < E; e++) {
                    int64_t idx[4];
                    sfa_seq_index(r, q_side, b, n, s, e, idx);
                    x[(((int64_t)b * N + n) * Scap + s) * E + e] = dt_get(t, img, idx);
                    if (covered)
                        memset(covered + dt_at(t, idx) * es, 1, es);
                }
    free(img);
    return x;
}

void sfa_teardown(sfa_run *r)
{
    dev_tensor *ts[] = {&r->tq, &r->tk, &r->tv, &r->tqr, &r->tkr, &r->tidx, &r->taq, &r->takv, &r->ttab,
                        &r->tout, &r->tmax, &r->tsum, &r->tdout, &r->tmax_in, &r->tsum_in, &r->tdq, &r->tdk,
                        &r->tdv, &r->tdqr, &r->tdkr};
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
        dt_free(ts[k]);
    free(r->q), free(r->k), free(r->v), free(r->qr), free(r->kr), free(r->dout), free(r->table);
}
