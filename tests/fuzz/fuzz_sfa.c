/* libFuzzer harness: SparseFlashAttention and SparseFlashAttentionGrad (BSND / TND / PA_BSND; INT32
 * and INT64 indices and lengths; block sizes up to the int64 limit; rope; both sparse modes). */
#include <math.h>
#include <stdlib.h>

#include "aclnnop/aclnn_sparse_flash_attention.h"
#include "aclnnop/aclnn_sparse_flash_attention_grad.h"
#include "fz.h"

FZ_CANN_INITIALIZE

typedef struct geo {
    int B, N1, N2, G, D, Dr, S1, S2, T1, T2, K, page, NB, W;
    int64_t bs;
    int s1[4], s2[4];
    bool tq, tkv, pa; /* TND query, TND kv, paged kv */
} geo;

static int64_t index_entry(void *ctx, int64_t e)
{
    const geo *g = ctx;
    const int64_t k = e % g->K, nblk = g->bs > 0 ? (g->S2 + (g->bs > g->S2 ? g->S2 : g->bs) - 1) / g->bs : 1;
    return k + 1 == g->K && e % 3 == 0 ? -1 : (e / g->K * 5 + k * 3) % (nblk + 1);
}

static int64_t table_entry(void *ctx, int64_t e)
{
    const geo *g = ctx;
    return (e * 5 + 1) % g->NB;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int dims[] = {16, 8, 32, 64, 4, 128};
    static const char *const lq_names[] = {"BSND", "TND"}, *const lkv_names[] = {"BSND", "TND", "PA_BSND"};
    fz f;
    fz_init(&f, data, size);
    fz_cann c = {0};
    geo g = {0};
    const bool grad = fz_chance(&f, 40);
    g.B = (int)fz_range(&f, 1, 3);
    g.N2 = (int)fz_range(&f, 1, 2);
    g.G = (int)fz_range(&f, 1, 3);
    g.N1 = g.N2 * g.G;
    g.D = dims[fz_range(&f, 0, 5)];
    g.Dr = fz_chance(&f, 20) ? (int)fz_range(&f, 1, 16) : 0;
    g.S1 = (int)fz_range(&f, 1, 12);
    g.S2 = (int)fz_range(&f, 1, 40);
    g.K = (int)fz_range(&f, 1, 6);
    g.bs = fz_chance(&f, 10) ? fz_int(&f, INT64_MAX) : fz_range(&f, 1, 8);
    g.tq = fz_chance(&f, 30);
    g.tkv = g.tq && fz_chance(&f, 60);
    g.pa = !grad && !g.tkv && fz_chance(&f, 25);
    g.page = (int)fz_range(&f, 1, 8);
    for (int b = 0; b < g.B; b++) {
        g.s1[b] = g.tq ? (int)fz_range(&f, 0, g.S1) : g.S1;
        g.s2[b] = g.tkv || g.pa ? (int)fz_range(&f, 0, g.S2) : g.S2;
        g.T1 += g.s1[b], g.T2 += g.s2[b];
    }
    g.W = (g.S2 + g.page - 1) / g.page;
    g.NB = g.B * g.W + 1;
    const aclDataType dt = fz_chance(&f, 50) ? ACL_FLOAT16 : ACL_BF16;
    char lqb[16], lkvb[16];
    char *lq = fz_pick_str(&f, lq_names + g.tq, 1, lqb);
    char *lkv = fz_pick_str(&f, lkv_names + (g.pa ? 2 : g.tkv), 1, lkvb);

    fz_spec sq = g.tq ? fz_sp(dt, 3, g.T1 ? g.T1 : 1, g.N1, g.D, 0) : fz_sp(dt, 4, g.B, g.S1, g.N1, g.D);
    fz_spec sk = g.pa ? fz_sp(dt, 4, g.NB, g.page, g.N2, g.D)
                 : g.tkv ? fz_sp(dt, 3, g.T2 ? g.T2 : 1, g.N2, g.D, 0) : fz_sp(dt, 4, g.B, g.S2, g.N2, g.D);
    fz_spec sqr = sq, skr = sk;
    sqr.dims[sq.rank - 1] = skr.dims[sk.rank - 1] = g.Dr;
    const int64_t T1 = g.T1 ? g.T1 : 1;
    fz_spec si = g.tq ? fz_sp(fz_chance(&f, 50) ? ACL_INT32 : ACL_INT64, 3, T1, g.N2, g.K, 0)
                      : fz_sp(fz_chance(&f, 50) ? ACL_INT32 : ACL_INT64, 4, g.B, g.S1, g.N2, g.K);
    si.ints = index_entry, si.ctx = &g;
    fz_spec sst = g.tq ? fz_sp(ACL_FLOAT, 3, g.N2, T1, g.G, 0) : fz_sp(ACL_FLOAT, 4, g.B, g.N2, g.S1, g.G);
    aclTensor *q = fz_tensor(&f, &c, &sq), *k = fz_tensor(&f, &c, &sk), *v = fz_tensor(&f, &c, &sk);
    aclTensor *idx = fz_tensor(&f, &c, &si);
    aclTensor *qr = g.Dr ? fz_tensor(&f, &c, &sqr) : NULL, *kr = g.Dr ? fz_tensor(&f, &c, &skr) : NULL;
    int64_t lq_v[4], lkv_v[4], run1 = 0, run2 = 0;
    for (int b = 0; b < g.B; b++) {
        lq_v[b] = g.tq ? (run1 += g.s1[b]) : g.s1[b];
        lkv_v[b] = g.tkv ? (run2 += g.s2[b]) : g.s2[b];
    }
    fz_ints lqi = {lq_v, g.B}, lkvi = {lkv_v, g.B};
    aclTensor *aq = NULL, *akv = NULL, *table = NULL;
    if (g.tq || fz_chance(&f, 20)) {
        fz_spec s = fz_sp(fz_chance(&f, 50) ? ACL_INT32 : ACL_INT64, 1, g.B, 0, 0, 0);
        s.ints = fz_ints_at, s.ctx = &lqi;
        aq = fz_tensor(&f, &c, &s);
    }
    if (g.tkv || g.pa || fz_chance(&f, 20)) {
        fz_spec s = fz_sp(fz_chance(&f, 50) ? ACL_INT32 : ACL_INT64, 1, g.B, 0, 0, 0);
        s.ints = fz_ints_at, s.ctx = &lkvi;
        akv = fz_tensor(&f, &c, &s);
    }
    if (g.pa) {
        fz_spec s = fz_sp(ACL_INT32, 2, g.B, g.W, 0, 0);
        s.ints = table_entry, s.ctx = &g;
        table = fz_tensor(&f, &c, &s);
    }
    const double scale = fz_real(&f, 1.0 / sqrt((double)(g.D + g.Dr)));
    const int64_t mode = fz_int(&f, fz_chance(&f, 50) ? 3 : 0), pre = fz_int(&f, 2147483647), next = fz_int(&f, 2147483647);
    fz_call r = {0};
    if (!grad) {
        fz_spec so = sq, ss = sst;
        so.output = ss.output = true;
        const bool lse = fz_chance(&f, 50);
        aclTensor *out = fz_tensor(&f, &c, &so);
        aclTensor *smax = lse || fz_chance(&f, 10) ? fz_tensor(&f, &c, &ss) : NULL;
        aclTensor *ssum = lse || fz_chance(&f, 10) ? fz_tensor(&f, &c, &ss) : NULL;
        r.run = aclnnSparseFlashAttention;
        r.st = aclnnSparseFlashAttentionGetWorkspaceSize(q, k, v, idx, table, aq, akv, qr, kr, scale, g.bs, lq, lkv,
                                                         mode, pre, next, fz_int(&f, fz_chance(&f, 30) ? 2 : 0), lse,
                                                         out, smax, ssum, &r.ws, &r.ex);
    } else {
        fz_spec so = sq, sdk = sk, sdqr = sqr, sdkr = skr;
        so.output = sdk.output = sdqr.output = sdkr.output = true;
        aclTensor *dout = fz_tensor(&f, &c, &sq), *out = fz_tensor(&f, &c, &sq);
        aclTensor *smax = fz_tensor(&f, &c, &sst), *ssum = fz_tensor(&f, &c, &sst);
        aclTensor *dq = fz_tensor(&f, &c, &so), *dk = fz_tensor(&f, &c, &sdk), *dv = fz_tensor(&f, &c, &sdk);
        aclTensor *dqr = g.Dr ? fz_tensor(&f, &c, &sdqr) : NULL, *dkr = g.Dr ? fz_tensor(&f, &c, &sdkr) : NULL;
        r.run = aclnnSparseFlashAttentionGrad;
        r.st = aclnnSparseFlashAttentionGradGetWorkspaceSize(q, k, v, idx, dout, out, smax, ssum, aq, akv, qr, kr,
                                                             scale, g.bs, lq, mode, pre, next, fz_chance(&f, 50), dq,
                                                             dk, dv, dqr, dkr, &r.ws, &r.ex);
    }
    return fz_finish(&f, &c, &r);
}
