/* IFA harness: sizes, windows and every device operand of a case (see ifa_run.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "ifa_run.h"
#include "reference/kvcache.h"

#define GAP_IN 0xFF  /* NaN in fp16/bf16/fp32; cache tokens outside every window too */
#define GAP_OUT 0xA5 /* output sentinel */

enum { K_Q, K_KV, K_MASK, K_PSE, K_AQS, K_AQO, K_QS, K_QO, K_I8 };

ifa_case ifa_case_default(void)
{
    ifa_case c;
    memset(&c, 0, sizeof c);
    c.layout = "BNSD";
    c.dtype = TC_F16;
    c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 16;
    for (int b = 0; b < IFA_MAXB; b++)
        c.S[b] = 10;
    c.mask_density = 0.3;
    c.mask_full_batch = -1;
    c.qs_nan_channel = -1;
    c.seed = 1;
    return c;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

double ifa_hash_unit(uint64_t seed, int kind, int64_t a, int64_t b, int64_t c, int64_t d)
{
    uint64_t h = mix(seed ^ mix((uint64_t)kind));
    h = mix(h ^ (uint64_t)a), h = mix(h ^ (uint64_t)b), h = mix(h ^ (uint64_t)c), h = mix(h ^ (uint64_t)d);
    return (double)(h >> 11) * 0x1.0p-52 - 1.0;
}

static tc_dtype tdt(aclDataType dt) { return dt == ACL_FLOAT16 ? TC_F16 : dt == ACL_BF16 ? TC_BF16 : TC_F32; }

/* ---- shapes -------------------------------------------------------------------------------------- */

static int seq_dims(const char *layout, int64_t B, int64_t N, int64_t S, int64_t E, int64_t *dims)
{
    if (!strcmp(layout, "BSH")) { dims[0] = B, dims[1] = S, dims[2] = N * E; return 3; }
    if (!strcmp(layout, "BSND")) { dims[0] = B, dims[1] = S, dims[2] = N, dims[3] = E; return 4; }
    dims[0] = B, dims[1] = N, dims[2] = S, dims[3] = E;
    return 4;
}

void ifa_seq_index(const char *layout, int E, int64_t b, int64_t n, int64_t s, int64_t e, int64_t *idx)
{
    if (!strcmp(layout, "BSH")) { idx[0] = b, idx[1] = s, idx[2] = n * E + e; return; }
    if (!strcmp(layout, "BSND")) { idx[0] = b, idx[1] = s, idx[2] = n, idx[3] = e; return; }
    idx[0] = b, idx[1] = n, idx[2] = s, idx[3] = e;
}

static void set_i8(dev_tensor *x, const int64_t *idx, int v) { x->host[dt_at(x, idx)] = (unsigned char)(int8_t)v; }

static int get_i8(const dev_tensor *x, const int64_t *idx) { return (int8_t)x->host[dt_at(x, idx)]; }

/* ---- sizes and windows (semantics §4.3, worked out here independently of the library) -------- */

static void sizes(ifa_run *r, const ifa_case *c)
{
    const bool paged = c->form == IFA_PAGED3 || c->form == IFA_PAGED4;
    r->c = c;
    r->adt = c->dtype == TC_BF16 ? ACL_BF16 : ACL_FLOAT16;
    r->out_dt = c->qs_form ? ACL_INT8 : r->adt;
    r->B = c->B, r->N1 = c->N1, r->N2 = c->N2, r->D = c->D;
    r->Smax = 0;
    for (int b = 0; b < r->B; b++) {
        r->S[b] = paged ? c->W * c->block_size : c->form == IFA_LIST ? c->S[b] : c->S[0];
        r->Smax = r->S[b] > r->Smax ? r->S[b] : r->Smax;
        r->L[b] = c->act_count == 0 ? r->S[b] : c->act_count == 1 ? c->L[0] : c->L[b];
        r->lo[b] = 0, r->len[b] = (int)r->L[b];
        if (c->left_pad && c->act_count) {
            const int64_t p = c->pad > 0 ? c->pad : 0, hi = r->S[b] - p, lo = hi - r->L[b];
            r->lo[b] = hi < 0 || lo < 0 ? 0 : (int)lo;
            r->len[b] = hi < 0 || lo < 0 ? 0 : (int)r->L[b];
        }
    }
    r->cols = r->Smax + c->extra_cols;
    r->nkv = c->form == IFA_LIST ? r->B : 1;
}

/* ---- operands ------------------------------------------------------------------------------------ */

static void make_query_out(ifa_run *r)
{
    const ifa_case *c = r->c;
    int64_t dims[4], idx[4];
    const int rank = seq_dims(c->layout, r->B, r->N1, 1, r->D, dims);
    dt_layout(&r->tq, r->adt, rank, dims, c->strides, GAP_IN);
    for (int b = 0; b < r->B; b++)
        for (int n = 0; n < r->N1; n++)
            for (int e = 0; e < r->D; e++) {
                ifa_seq_index(c->layout, r->D, b, n, 0, e, idx);
                dt_set(&r->tq, idx, tc_round(c->dtype, ifa_hash_unit(c->seed, K_Q, b, n, e, 0)));
            }
    dt_upload(&r->tq);
    dt_layout(&r->tout, r->out_dt, rank, dims, c->strides, GAP_OUT);
    dt_upload(&r->tout);
}

/* Token j of the window of batch b: the same value whatever the storage form. */
static void store_token(ifa_run *r, dev_tensor *x, int which, int b, int n, int j, int e, const int64_t *idx)
{
    const ifa_case *c = r->c;
    if (c->int8_kv)
        set_i8(x, idx, (int)floor(100.0 * ifa_hash_unit(c->seed, K_I8 + which, b, n, j, e)));
    else
        dt_set(x, idx, tc_round(c->dtype, ifa_hash_unit(c->seed, K_KV + 16 * which, b, n, j, e)));
}

/* Dense and list forms: physical token t of batch b at its layout index; NaN outside the window
 * (unless every position is filled by position). */
static void make_seq_kv(ifa_run *r, int which)
{
    const ifa_case *c = r->c;
    const aclDataType dt = c->int8_kv ? ACL_INT8 : r->adt;
    dev_tensor *ts = which ? r->tv : r->tk;
    for (int k = 0; k < r->nkv; k++) {
        const bool list = c->form == IFA_LIST;
        int64_t dims[4], cap[4], idx[4];
        const int64_t Sd = list ? r->S[k] : r->S[0], Sc = list && c->list_common_stride ? r->Smax : Sd;
        const int rank = seq_dims(c->layout, list ? 1 : r->B, r->N2, Sd, r->D, dims);
        seq_dims(c->layout, list ? 1 : r->B, r->N2, Sc, r->D, cap);
        dt_layout(&ts[k], dt, rank, cap, c->strides, GAP_IN);
        memcpy(ts[k].dims, dims, sizeof dims);
        for (int bb = 0; bb < (list ? 1 : r->B); bb++) {
            const int b = list ? k : bb, first = c->by_position ? 0 : r->lo[b];
            const int count = c->by_position ? r->S[b] : r->len[b];
            for (int n = 0; n < r->N2; n++)
                for (int t = first; t < first + count; t++)
                    for (int e = 0; e < r->D; e++) {
                        ifa_seq_index(c->layout, r->D, bb, n, t, e, idx);
                        store_token(r, &ts[k], which, b, n, c->by_position ? t : t - r->lo[b], e, idx);
                    }
        }
        dt_upload(&ts[k]);
    }
}

/* The cache element (blk, slot, n, e) at its index in the 3-D or 4-D form. */
static void cache_index(const ifa_run *r, int64_t blk, int64_t slot, int64_t n, int64_t e, int64_t *idx)
{
    if (r->c->form == IFA_PAGED4)
        idx[0] = blk, idx[1] = n, idx[2] = slot, idx[3] = e;
    else
        idx[0] = blk, idx[1] = slot, idx[2] = n * r->D + e;
}

/* Paged: each batch's blocks drawn from a random permutation of the cache's blocks; unused table
 * entries hold values no run may read. */
static void make_table(ifa_run *r)
{
    const ifa_case *c = r->c;
    int need = 0;
    for (int b = 0; b < r->B; b++)
        need += (r->len[b] + c->block_size - 1) / c->block_size;
    r->blocks = need + 2;
    int *perm = malloc((size_t)r->blocks * sizeof *perm);
    tc_rng rng = tc_rng_seed(c->seed * 7 + 3);
    for (int k = 0; k < r->blocks; k++)
        perm[k] = k;
    for (int k = r->blocks - 1; k > 0; k--) {
        const int j = (int)tc_rng_int(&rng, 0, k), t = perm[k];
        perm[k] = perm[j], perm[j] = t;
    }
    r->table = malloc((size_t)r->B * c->W * sizeof *r->table);
    int next = 0;
    for (int b = 0; b < r->B; b++) {
        const int used = (r->len[b] + c->block_size - 1) / c->block_size;
        for (int k = 0; k < c->W; k++)
            r->table[b * c->W + k] = k < used ? perm[next++] : (k % 2 ? 1 << 30 : -1);
    }
    free(perm);
    const int64_t dims[2] = {r->B, c->W};
    dt_layout(&r->tbt, ACL_INT32, 2, dims, ST_CONTIGUOUS, 0);
    memcpy(r->tbt.host, r->table, (size_t)r->B * c->W * sizeof *r->table);
    dt_upload(&r->tbt);
}

static void make_cache(ifa_run *r, int which)
{
    const ifa_case *c = r->c;
    const int bs = c->block_size;
    dev_tensor *x = which ? &r->tv[0] : &r->tk[0];
    int64_t dims[4], idx[4];
    const int rank = c->form == IFA_PAGED4 ? 4 : 3;
    dims[0] = r->blocks;
    if (rank == 4)
        dims[1] = r->N2, dims[2] = bs, dims[3] = r->D;
    else
        dims[1] = bs, dims[2] = (int64_t)r->N2 * r->D;
    dt_layout(x, c->int8_kv ? ACL_INT8 : r->adt, rank, dims, c->strides, GAP_IN);
    for (int b = 0; b < r->B; b++)
        for (int t = 0; t < r->len[b]; t++)
            for (int n = 0; n < r->N2; n++)
                for (int e = 0; e < r->D; e++) {
                    cache_index(r, r->table[b * c->W + t / bs], t % bs, n, e, idx);
                    store_token(r, x, which, b, n, t, e, idx);
                }
    dt_upload(x);
    /* what the reference reads: the stored cache decoded, then gathered through the table */
    const int64_t per_block = (int64_t)bs * r->N2 * r->D;
    double *img = malloc((size_t)(r->blocks * per_block) * sizeof *img);
    for (int blk = 0; blk < r->blocks; blk++)
        for (int s = 0; s < bs; s++)
            for (int n = 0; n < r->N2; n++)
                for (int e = 0; e < r->D; e++) {
                    cache_index(r, blk, s, n, e, idx);
                    img[((int64_t)(blk * bs + s) * r->N2 + n) * r->D + e] =
                        c->int8_kv ? get_i8(x, idx) : dt_get(x, x->host, idx);
                }
    r->gathered[which] = calloc((size_t)r->B * r->N2 * r->Smax * r->D, sizeof(double));
    ref_gather_pages(img, per_block, (int64_t)r->N2 * r->D, r->D, 1, r->table, c->W, bs, r->B, r->N2, r->D, r->len,
                     r->Smax, r->gathered[which]);
    free(img);
}

static void make_kv(ifa_run *r)
{
    const ifa_case *c = r->c;
    if (c->form == IFA_PAGED3 || c->form == IFA_PAGED4) {
        make_table(r);
        make_cache(r, 0);
        make_cache(r, 1);
    } else {
        make_seq_kv(r, 0);
        make_seq_kv(r, 1);
    }
    aclTensor *lk[IFA_MAXB], *lv[IFA_MAXB];
    for (int k = 0; k < r->nkv; k++)
        lk[k] = r->tk[k].t, lv[k] = r->tv[k].t;
    r->lk = aclCreateTensorList((const aclTensor *const *)lk, (uint64_t)r->nkv);
    r->lv = aclCreateTensorList((const aclTensor *const *)lv, (uint64_t)r->nkv);
}

/* attenMask (B, S) / (B, 1, S) / (B, 1, 1, S): per window token, or garbage outside the window. */
static void make_mask(ifa_run *r)
{
    const ifa_case *c = r->c;
    int64_t dims[4] = {r->B, 1, 1, 1}, idx[4] = {0, 0, 0, 0};
    dims[c->mask_rank - 1] = r->cols;
    dt_layout(&r->tmask, c->mask_dt ? c->mask_dt : ACL_BOOL, c->mask_rank, dims, c->strides, 0x01);
    for (int b = 0; b < r->B; b++)
        for (int t = 0; t < r->cols; t++) {
            const int j = c->by_position ? t : t - r->lo[b];
            const double u = ifa_hash_unit(c->seed, K_MASK, b, j, 0, 0);
            idx[0] = b, idx[c->mask_rank - 1] = t;
            r->tmask.host[dt_at(&r->tmask, idx)] = b == c->mask_full_batch || (u + 1) / 2 < c->mask_density;
        }
    dt_upload(&r->tmask);
}

/* pseShift (B or 1, N1, 1, S): per-batch values by window token, shared ones by position. */
static void make_pse(ifa_run *r)
{
    const ifa_case *c = r->c;
    const int Bp = c->pse_shared ? 1 : r->B;
    const int64_t dims[4] = {Bp, r->N1, 1, r->cols};
    dt_layout(&r->tpse, r->adt, 4, dims, c->strides, GAP_IN);
    for (int b = 0; b < Bp; b++)
        for (int n = 0; n < r->N1; n++)
            for (int t = 0; t < r->cols; t++) {
                const int64_t idx[4] = {b, n, 0, t};
                const int j = c->pse_shared || c->by_position ? t : t - r->lo[b];
                dt_set(&r->tpse, idx, tc_round(c->dtype, ifa_hash_unit(c->seed, K_PSE, b, n, j, 0)));
            }
    dt_upload(&r->tpse);
}

/* antiquantScale / antiquantOffset: (2), (2, N2·D), (2, N2, D) or (2, N2, 1, D). */
static void aq_index(const ifa_run *r, int which, int n, int e, int64_t *idx)
{
    switch (r->c->aq_rank) {
    case 1: idx[0] = which; break;
    case 2: idx[0] = which, idx[1] = (int64_t)n * r->D + e; break;
    case 3: idx[0] = which, idx[1] = n, idx[2] = e; break;
    default: idx[0] = which, idx[1] = n, idx[2] = 0, idx[3] = e; break;
    }
}

static void make_antiquant(ifa_run *r)
{
    const ifa_case *c = r->c;
    const aclDataType dt = c->aq_dt ? c->aq_dt : ACL_FLOAT;
    int64_t dims[4] = {2, 1, 1, 1};
    if (c->aq_rank == 2) dims[1] = (int64_t)r->N2 * r->D;
    if (c->aq_rank == 3) dims[1] = r->N2, dims[2] = r->D;
    if (c->aq_rank == 4) dims[1] = r->N2, dims[2] = 1, dims[3] = r->D;
    dt_layout(&r->taqs, dt, c->aq_rank, dims, c->strides, GAP_IN);
    if (c->aq_offset)
        dt_layout(&r->taqo, dt, c->aq_rank, dims, c->strides, GAP_IN);
    const bool per_tensor = c->aq_rank == 1;
    for (int w = 0; w < 2; w++)
        for (int n = 0; n < (per_tensor ? 1 : r->N2); n++)
            for (int e = 0; e < (per_tensor ? 1 : r->D); e++) {
                int64_t idx[4];
                aq_index(r, w, n, e, idx);
                const double u = ifa_hash_unit(c->seed, K_AQS, w, n, e, 0);
                dt_set(&r->taqs, idx, tc_round(tdt(dt), 0.012 + 0.008 * u));
                if (c->aq_offset)
                    dt_set(&r->taqo, idx, tc_round(tdt(dt), 8 * ifa_hash_unit(c->seed, K_AQO, w, n, e, 0)));
            }
    dt_upload(&r->taqs);
    if (c->aq_offset)
        dt_upload(&r->taqo);
}

/* quantScale2 / quantOffset2 in one of the accepted shapes, element c = n1·D + e in flat order. */
static int qs_dims(const ifa_run *r, int64_t *dims)
{
    const int64_t H = (int64_t)r->N1 * r->D;
    switch (r->c->qs_form) {
    case 1: dims[0] = 1; return 1;
    case 2: dims[0] = H; return 1;
    case 3: dims[0] = r->N1, dims[1] = r->D; return 2;
    case 4: dims[0] = 1, dims[1] = r->N1, dims[2] = 1, dims[3] = r->D; return 4;
    default: dims[0] = 1, dims[1] = 1, dims[2] = H; return 3;
    }
}

static void flat_index(int rank, const int64_t *dims, int64_t c, int64_t *idx)
{
    for (int d = rank - 1; d >= 0; d--) {
        idx[d] = c % dims[d];
        c /= dims[d];
    }
}

static void make_out_quant(ifa_run *r)
{
    const ifa_case *c = r->c;
    const aclDataType dt = c->qs_dt ? c->qs_dt : ACL_FLOAT;
    const double mag = c->qs_mag > 0 ? c->qs_mag : 20;
    int64_t dims[4], idx[4];
    const int rank = qs_dims(r, dims);
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= dims[d];
    dt_layout(&r->tqs, dt, rank, dims, c->strides, GAP_IN);
    if (c->qo)
        dt_layout(&r->tqo, dt, rank, dims, c->strides, GAP_IN);
    for (int64_t k = 0; k < n; k++) {
        flat_index(rank, dims, k, idx);
        const double s = k == c->qs_nan_channel ? NAN : mag * (0.75 + 0.25 * ifa_hash_unit(c->seed, K_QS, k, 0, 0, 0));
        dt_set(&r->tqs, idx, tc_round(tdt(dt), s));
        if (c->qo)
            dt_set(&r->tqo, idx, tc_round(tdt(dt), 3 * ifa_hash_unit(c->seed, K_QO, k, 0, 0, 0)));
    }
    dt_upload(&r->tqs);
    if (c->qo)
        dt_upload(&r->tqo);
}

void ifa_build(ifa_run *r, const ifa_case *c)
{
    memset(r, 0, sizeof *r);
    sizes(r, c);
    make_query_out(r);
    make_kv(r);
    if (c->mask_rank)
        make_mask(r);
    if (c->pse)
        make_pse(r);
    if (c->int8_kv)
        make_antiquant(r);
    if (c->qs_form)
        make_out_quant(r);
    if (c->act_count)
        r->act = aclCreateIntArray(c->L, (uint64_t)c->act_count);
    if (c->left_pad) { /* a wrong value until the first phase is over: the padding is read in the second */
        const int64_t one = 1;
        dt_layout(&r->tpad, ACL_INT64, 1, &one, ST_CONTIGUOUS, 0);
        ((int64_t *)r->tpad.host)[0] = (int64_t)((uint64_t)c->pad + 7777u); /* wraps for INT64_MAX: still wrong */
        dt_upload(&r->tpad);
    }
}

void ifa_write_pad(ifa_run *r)
{
    if (!r->c->left_pad)
        return;
    const int64_t pad = r->c->pad;
    if (aclrtMemcpy(r->tpad.dev, sizeof pad, &pad, sizeof pad, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
        TC_CHECK(false, "writing kvPaddingSize failed: %s", aclGetRecentErrMsg());
}

void ifa_free(ifa_run *r)
{
    aclDestroyTensorList(r->lk); /* destroys the element tensors */
    aclDestroyTensorList(r->lv);
    for (int k = 0; k < r->nkv; k++) {
        r->tk[k].t = r->tv[k].t = NULL;
        dt_free(&r->tk[k]);
        dt_free(&r->tv[k]);
    }
    dev_tensor *all[] = {&r->tq, &r->tout, &r->tmask, &r->tpse, &r->taqs, &r->taqo, &r->tqs, &r->tqo, &r->tbt, &r->tpad};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        dt_free(all[k]);
    aclDestroyIntArray(r->act);
    free(r->table);
    free(r->gathered[0]);
    free(r->gathered[1]);
}

/* ---- what the reference reads -------------------------------------------------------------------- */

double ifa_aq_scale(const ifa_run *r, int which, int n, int e)
{
    int64_t idx[4];
    aq_index(r, which, r->c->aq_rank == 1 ? 0 : n, r->c->aq_rank == 1 ? 0 : e, idx);
    return dt_get(&r->taqs, r->taqs.host, idx);
}

double ifa_aq_offset(const ifa_run *r, int which, int n, int e)
{
    if (!r->c->aq_offset)
        return 0;
    int64_t idx[4];
    aq_index(r, which, r->c->aq_rank == 1 ? 0 : n, r->c->aq_rank == 1 ? 0 : e, idx);
    return dt_get(&r->taqo, r->taqo.host, idx);
}

double ifa_qs(const ifa_run *r, int c)
{
    int64_t dims[4], idx[4];
    const int rank = qs_dims(r, dims);
    flat_index(rank, dims, r->c->qs_form == 1 ? 0 : c, idx);
    return dt_get(&r->tqs, r->tqs.host, idx);
}

double ifa_qo(const ifa_run *r, int c)
{
    if (!r->c->qo)
        return 0;
    int64_t dims[4], idx[4];
    const int rank = qs_dims(r, dims);
    flat_index(rank, dims, r->c->qs_form == 1 ? 0 : c, idx);
    return dt_get(&r->tqo, r->tqo.host, idx);
}

double ifa_kv_at(const ifa_run *r, int which, int b, int n, int t, int e)
{
    const ifa_case *c = r->c;
    double x;
    if (r->gathered[which]) {
        x = r->gathered[which][(((int64_t)b * r->N2 + n) * r->Smax + t) * r->D + e];
    } else {
        const bool list = c->form == IFA_LIST;
        const dev_tensor *ts = which ? &r->tv[list ? b : 0] : &r->tk[list ? b : 0];
        int64_t idx[4];
        ifa_seq_index(c->layout, r->D, list ? 0 : b, n, t, e, idx);
        x = c->int8_kv ? get_i8(ts, idx) : dt_get(ts, ts->host, idx);
    }
    return c->int8_kv ? ref_dequant((int8_t)x, ifa_aq_scale(r, which, n, e), ifa_aq_offset(r, which, n, e)) : x;
}
