/*
 * Every first-phase rule of aclnnSparseFlashAttention and its grad (semantics §0.5, §0.6, §5.2):
 * the code (161001 for a NULL required pointer, 161002 for everything else), the order (NULLs
 * first, then the first failing parameter in declaration order, checks relating several
 * parameters charged to the last of them), a message naming the function and the parameter as
 * declared, and what is ignored (blockTable without PA_BSND, statistics without
 * returnSoftmaxLse, rope gradients without rope).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sfa_calls.h"

#define NULLPTR ACLNN_ERR_PARAM_NULLPTR
#define INVALID ACLNN_ERR_PARAM_INVALID
#define GARBAGE ((const aclTensor *)(uintptr_t)0x1234)

/* BSND: B 2, S1 3, S2 10, N1 4, N2 2, D 8, K 3, rope 4.  TND: T1 5, T2 12.  PA: 6 blocks of 4. */
enum { B = 2, S1 = 3, S2 = 10, N1 = 4, N2 = 2, G = 2, D = 8, K = 3, DR = 4, T1 = 5, T2 = 12, NB = 6, BS = 4 };

static dev_tensor q, k, v, idx, out, smax, ssum, qr, kr;          /* BSND */
static dev_tensor tq, tk, tv, tidx, tout, tmax, tsum, aq, akv;    /* TND */
static dev_tensor pk, pv, table, pakv;                             /* PA key */
static dev_tensor dout, dq, dk, dv, dqr, dkr, gmax, gsum;          /* grad BSND */
static uint64_t ws;
static aclOpExecutor *ex;
static char bsnd[] = "BSND", tnd[] = "TND", pa[] = "PA_BSND";

static dev_tensor mk(aclDataType dt, int rank, int64_t a, int64_t b, int64_t c, int64_t d)
{
    const int64_t dims[4] = {a, b, c, d};
    return dt_simple(dt, rank, dims);
}

static dev_tensor lengths(aclDataType dt, int64_t a, int64_t b)
{
    dev_tensor t = mk(dt, 1, B, 0, 0, 0);
    const int64_t v2[2] = {a, b};
    for (int64_t n = 0; n < B; n++)
        if (dt == ACL_INT64)
            ((int64_t *)t.host)[n] = v2[n];
        else
            ((int32_t *)t.host)[n] = (int32_t)v2[n];
    aclrtMemcpy(t.dev, t.bytes, t.host, t.bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    return t;
}

static void setup(void)
{
    q = mk(ACL_FLOAT16, 4, B, S1, N1, D), k = mk(ACL_FLOAT16, 4, B, S2, N2, D), v = mk(ACL_FLOAT16, 4, B, S2, N2, D);
    idx = mk(ACL_INT32, 4, B, S1, N2, K), out = mk(ACL_FLOAT16, 4, B, S1, N1, D);
    smax = mk(ACL_FLOAT, 4, B, N2, S1, G), ssum = mk(ACL_FLOAT, 4, B, N2, S1, G);
    qr = mk(ACL_FLOAT16, 4, B, S1, N1, DR), kr = mk(ACL_FLOAT16, 4, B, S2, N2, DR);
    tq = mk(ACL_FLOAT16, 3, T1, N1, D, 0), tk = mk(ACL_FLOAT16, 3, T2, N2, D, 0), tv = mk(ACL_FLOAT16, 3, T2, N2, D, 0);
    tidx = mk(ACL_INT64, 3, T1, N2, K, 0), tout = mk(ACL_FLOAT16, 3, T1, N1, D, 0);
    tmax = mk(ACL_FLOAT, 3, N2, T1, G, 0), tsum = mk(ACL_FLOAT, 3, N2, T1, G, 0);
    aq = lengths(ACL_INT64, 2, 5), akv = lengths(ACL_INT32, 4, 12);
    pk = mk(ACL_FLOAT16, 4, NB, BS, N2, D), pv = mk(ACL_FLOAT16, 4, NB, BS, N2, D);
    table = mk(ACL_INT32, 2, B, 3, 0, 0), pakv = lengths(ACL_INT32, 9, 12);
    dout = mk(ACL_FLOAT16, 4, B, S1, N1, D), dq = mk(ACL_FLOAT16, 4, B, S1, N1, D);
    dk = mk(ACL_FLOAT16, 4, B, S2, N2, D), dv = mk(ACL_FLOAT16, 4, B, S2, N2, D);
    dqr = mk(ACL_FLOAT16, 4, B, S1, N1, DR), dkr = mk(ACL_FLOAT16, 4, B, S2, N2, DR);
    gmax = mk(ACL_FLOAT, 4, B, N2, S1, G), gsum = mk(ACL_FLOAT, 4, B, N2, S1, G);
}

static sfa_args fwd(void)
{
    sfa_args a = {.q = q.t, .k = k.t, .v = v.t, .idx = idx.t, .out = out.t, .smax = smax.t, .ssum = ssum.t,
                  .scale = 0.3, .bs = 4, .pre = 2147483647, .next = 2147483647, .lse = true, .lq = bsnd, .lkv = bsnd,
                  .ws = &ws, .ex = &ex};
    return a;
}

static sfa_args fwd_tnd(void)
{
    sfa_args a = fwd();
    a.q = tq.t, a.k = tk.t, a.v = tv.t, a.idx = tidx.t, a.out = tout.t, a.smax = tmax.t, a.ssum = tsum.t;
    a.aq = aq.t, a.akv = akv.t, a.lq = a.lkv = tnd;
    return a;
}

static sfa_args fwd_pa(void)
{
    sfa_args a = fwd();
    a.k = pk.t, a.v = pv.t, a.table = table.t, a.akv = pakv.t, a.lkv = pa;
    return a;
}

static sfa_args grad(void)
{
    sfa_args a = {.grad = true, .q = q.t, .k = k.t, .v = v.t, .idx = idx.t, .dout = dout.t, .out = out.t,
                  .smax = gmax.t, .ssum = gsum.t, .scale = 0.3, .bs = 4, .pre = 2147483647, .next = 2147483647,
                  .layout = bsnd, .dq = dq.t, .dk = dk.t, .dv = dv.t, .ws = &ws, .ex = &ex};
    return a;
}

static void nulls(void)
{
    tc_context("required pointers");
    sfa_args a = fwd();
    sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.q = NULL, sfa_expect(&a, NULLPTR, "query", NULL);
    a = fwd(), a.k = NULL, sfa_expect(&a, NULLPTR, "key", NULL);
    a = fwd(), a.v = NULL, sfa_expect(&a, NULLPTR, "value", NULL);
    a = fwd(), a.idx = NULL, sfa_expect(&a, NULLPTR, "sparseIndices", NULL);
    a = fwd(), a.lq = NULL, sfa_expect(&a, NULLPTR, "layoutQuery", NULL);
    a = fwd(), a.lkv = NULL, sfa_expect(&a, NULLPTR, "layoutKv", NULL);
    a = fwd(), a.out = NULL, sfa_expect(&a, NULLPTR, "attentionOutOut", NULL);
    a = fwd(), a.smax = NULL, sfa_expect(&a, NULLPTR, "softmaxMaxOut", NULL);
    a = fwd(), a.ssum = NULL, sfa_expect(&a, NULLPTR, "softmaxSumOut", NULL);
    a = fwd(), a.ws = NULL, sfa_expect(&a, NULLPTR, "workspaceSize", NULL);
    a = fwd(), a.ex = NULL, sfa_expect(&a, NULLPTR, "executor", NULL);
    /* without returnSoftmaxLse the statistics are neither required nor examined */
    a = fwd(), a.lse = false, a.smax = a.ssum = NULL, sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a = fwd(), a.lse = false, a.smax = GARBAGE, a.ssum = out.t, sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    /* the first NULL in declaration order wins; NULLs come before every other check */
    a = fwd(), a.k = NULL, a.out = NULL, sfa_expect(&a, NULLPTR, "key", NULL);
    a = fwd(), a.q = GARBAGE, a.ssum = NULL, sfa_expect(&a, NULLPTR, "softmaxSumOut", NULL);
    /* optional arguments absent; blockTable ignored without PA_BSND */
    a = fwd(), a.table = GARBAGE, sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a = fwd_tnd(), sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a = fwd_pa(), sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);

    a = grad();
    sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.layout = NULL, sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL); /* NULL means "BSND" */
    const char *names[] = {"query", "key", "value", "sparseIndices", "dOut", "out", "softmaxMax", "softmaxSum",
                           "dQueryOut", "dKeyOut", "dValueOut", "workspaceSize", "executor"};
    for (int n = 0; n < 13; n++) {
        a = grad();
        const aclTensor **slot[] = {&a.q, &a.k, &a.v, &a.idx, &a.dout, &a.out, &a.smax, &a.ssum, &a.dq, &a.dk, &a.dv};
        if (n < 11)
            *slot[n] = NULL;
        else if (n == 11)
            a.ws = NULL;
        else
            a.ex = NULL;
        sfa_expect(&a, NULLPTR, names[n], NULL);
    }
    /* rope gradients are ignored without rope */
    a = grad(), a.dqr = GARBAGE, a.dkr = GARBAGE, sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a = grad(), a.dq = NULL, a.q = GARBAGE, sfa_expect(&a, NULLPTR, "dQueryOut", NULL);
}

static void handles_dtypes(void)
{
    tc_context("handles, formats, dtypes");
    dev_tensor dead = mk(ACL_FLOAT16, 4, B, S1, N1, D);
    aclDestroyTensor(dead.t);
    sfa_args a = fwd();
    a.q = dead.t, sfa_expect(&a, INVALID, "query", "not a live aclTensor");
    dead.t = NULL;
    a = fwd(), a.idx = GARBAGE, sfa_expect(&a, INVALID, "sparseIndices", "not a live");
    a = fwd(), a.aq = GARBAGE, sfa_expect(&a, INVALID, "actualSeqLengthsQuery", "not a live");
    a = grad(), a.akv = GARBAGE, sfa_expect(&a, INVALID, "actualSeqLengthskvOptional", "not a live");
    const int64_t qd[] = {B, S1, N1, D};
    aclTensor *nz = aclCreateTensor(qd, 4, ACL_FLOAT16, NULL, 0, ACL_FORMAT_FRACTAL_NZ, NULL, 0, q.dev);
    a = fwd(), a.q = nz, sfa_expect(&a, INVALID, "query", "format");
    dev_tensor f32 = mk(ACL_FLOAT, 4, B, S1, N1, D), bf = mk(ACL_BF16, 4, B, S2, N2, D);
    a = fwd(), a.q = f32.t, sfa_expect(&a, INVALID, "query dtype", "FLOAT16 or BFLOAT16");
    a = fwd(), a.k = bf.t, sfa_expect(&a, INVALID, "key dtype", "query");
    a = fwd(), a.v = bf.t, sfa_expect(&a, INVALID, "value dtype", NULL);
    dev_tensor fidx = mk(ACL_FLOAT16, 4, B, S1, N2, K), u8 = mk(ACL_UINT8, 1, B, 0, 0, 0);
    a = fwd(), a.idx = fidx.t, sfa_expect(&a, INVALID, "sparseIndices dtype", "INT32 or INT64");
    a = fwd(), a.aq = u8.t, sfa_expect(&a, INVALID, "actualSeqLengthsQuery dtype", "INT32 or INT64");
    a = fwd(), a.akv = u8.t, sfa_expect(&a, INVALID, "actualSeqLengthsKv dtype", NULL);
    dev_tensor l2 = mk(ACL_INT32, 2, B, 1, 0, 0);
    a = fwd(), a.aq = l2.t, sfa_expect(&a, INVALID, "actualSeqLengthsQuery", "1 dims");
    dev_tensor bqr = mk(ACL_BF16, 4, B, S1, N1, DR);
    a = fwd(), a.qr = bqr.t, a.kr = kr.t, sfa_expect(&a, INVALID, "queryRope dtype", NULL);
    a = fwd(), a.kr = kr.t, sfa_expect(&a, INVALID, "keyRope", "together");
    a = fwd(), a.qr = qr.t, sfa_expect(&a, INVALID, "queryRope", "together");
    a = fwd(), a.out = f32.t, sfa_expect(&a, INVALID, "attentionOutOut dtype", NULL);
    a = fwd(), a.smax = out.t, sfa_expect(&a, INVALID, "softmaxMaxOut dtype", "FLOAT");
    a = fwd(), a.ssum = out.t, sfa_expect(&a, INVALID, "softmaxSumOut dtype", NULL);
    a = grad(), a.dout = f32.t, sfa_expect(&a, INVALID, "dOut dtype", NULL);
    a = grad(), a.out = f32.t, sfa_expect(&a, INVALID, "out dtype", NULL);
    a = grad(), a.smax = out.t, sfa_expect(&a, INVALID, "softmaxMax dtype", NULL);
    a = grad(), a.ssum = out.t, sfa_expect(&a, INVALID, "softmaxSum dtype", NULL);
    a = grad(), a.dq = f32.t, sfa_expect(&a, INVALID, "dQueryOut dtype", NULL);
    a = grad(), a.dk = bf.t, sfa_expect(&a, INVALID, "dKeyOut dtype", NULL);
    a = grad(), a.dv = bf.t, sfa_expect(&a, INVALID, "dValueOut dtype", NULL);
    aclDestroyTensor(nz);
    dev_tensor *all[] = {&dead, &f32, &bf, &fidx, &u8, &l2, &bqr};
    for (size_t n = 0; n < sizeof all / sizeof all[0]; n++)
        dt_free(all[n]);
}

static void attributes(void)
{
    tc_context("attributes");
    sfa_args a = fwd();
    a.scale = NAN, sfa_expect(&a, INVALID, "scaleValue", "finite");
    a.scale = INFINITY, sfa_expect(&a, INVALID, "scaleValue", NULL);
    a.scale = -1e39, sfa_expect(&a, INVALID, "scaleValue", "within float's range");
    a = fwd(), a.bs = 0, sfa_expect(&a, INVALID, "sparseBlockSize", ">= 1");
    a = fwd(), a.bs = 3, sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL); /* any positive block size */
    char bnsd[] = "BNSD", lower[] = "bsnd", bsh[] = "BSH", longer[] = "BSND ";
    a = fwd(), a.lq = pa, sfa_expect(&a, INVALID, "layoutQuery", "\"PA_BSND\"");
    a = fwd(), a.lq = bnsd, sfa_expect(&a, INVALID, "layoutQuery", NULL);
    a = fwd(), a.lq = lower, sfa_expect(&a, INVALID, "layoutQuery", NULL);
    a = fwd(), a.lkv = bsh, sfa_expect(&a, INVALID, "layoutKv", "PA_BSND");
    a = fwd(), a.lkv = longer, sfa_expect(&a, INVALID, "layoutKv", NULL);
    a = grad(), a.layout = pa, sfa_expect(&a, INVALID, "layoutOptional", "\"BSND\" or \"TND\"");
    for (int64_t m = -1; m <= 8; m++) {
        a = fwd(), a.mode = m;
        sfa_expect(&a, m == 0 || m == 3 ? ACLNN_SUCCESS : INVALID, "sparseMode", NULL);
        a = grad(), a.mode = m;
        sfa_expect(&a, m == 0 || m == 3 ? ACLNN_SUCCESS : INVALID, "sparseMode", NULL);
    }
    a = fwd(), a.pre = 2147483646, sfa_expect(&a, INVALID, "preTokens", "2147483647");
    a = fwd(), a.pre = INT64_MAX, sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a = fwd(), a.next = 0, sfa_expect(&a, INVALID, "nextTokens", NULL);
    a = grad(), a.next = -1, sfa_expect(&a, INVALID, "nextTokens", NULL);
    a = grad(), a.pre = 5, sfa_expect(&a, INVALID, "preTokens", NULL);
    a = grad(), a.det = true, sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    for (int64_t m = -1; m <= 3; m++) {
        a = fwd(), a.amode = m;
        sfa_expect(&a, m == 0 || m == 2 ? ACLNN_SUCCESS : INVALID, "attentionMode", NULL);
    }
}

static void shapes(void)
{
    tc_context("shapes");
    dev_tensor q3 = mk(ACL_FLOAT16, 3, S1, N1, D, 0);
    sfa_args a = fwd();
    a.q = q3.t, sfa_expect(&a, INVALID, "query", "4 dims");
    a = fwd_tnd(), a.k = k.t, a.v = v.t, sfa_expect(&a, INVALID, "key", "3 dims");
    dev_tensor kd = mk(ACL_FLOAT16, 4, B, S2, N2, D + 1), vs = mk(ACL_FLOAT16, 4, B, S2 + 1, N2, D);
    a = fwd(), a.k = kd.t, sfa_expect(&a, INVALID, "key head dim", "D = 8");
    a = fwd(), a.v = vs.t, sfa_expect(&a, INVALID, "value", "except the last dim");
    dev_tensor k3 = mk(ACL_FLOAT16, 4, B, S2, 3, D);
    a = fwd(), a.k = k3.t, a.v = k3.t, sfa_expect(&a, INVALID, "key head count", "divide");
    dev_tensor kb = mk(ACL_FLOAT16, 4, B + 1, S2, N2, D);
    a = fwd(), a.k = kb.t, a.v = kb.t, sfa_expect(&a, INVALID, "key batch size", NULL);
    dev_tensor bq = mk(ACL_FLOAT16, 4, 1, 1, 1, 1025), bk = mk(ACL_FLOAT16, 4, 1, 1, 1, 1025);
    a = fwd(), a.q = bq.t, a.k = bk.t, a.v = bk.t, sfa_expect(&a, INVALID, "head dim D", "1024");
    dev_tensor hq = mk(ACL_FLOAT16, 4, 1, 1, 257, 2), hk = mk(ACL_FLOAT16, 4, 1, 1, 257, 2);
    a = fwd(), a.q = hq.t, a.k = hk.t, a.v = hk.t, sfa_expect(&a, INVALID, "head count N1", "256");
    dev_tensor wv = mk(ACL_FLOAT16, 4, B, S2, N2, 1025);
    a = fwd(), a.v = wv.t, sfa_expect(&a, INVALID, "head dim Dv", "1024");
    /* lengths: TND needs them, their entries give B; a BSND side's lengths have B entries */
    a = fwd_tnd(), a.aq = NULL, sfa_expect(&a, INVALID, "actualSeqLengthsQuery", "absent");
    a = fwd_tnd(), a.akv = NULL, sfa_expect(&a, INVALID, "actualSeqLengthsKv", "absent");
    a = fwd_pa(), a.akv = NULL, sfa_expect(&a, INVALID, "actualSeqLengthsKv", "PA_BSND");
    dev_tensor l3 = mk(ACL_INT32, 1, 3, 0, 0, 0);
    a = fwd(), a.aq = l3.t, sfa_expect(&a, INVALID, "actualSeqLengthsQuery must have shape [2]", NULL);
    a = fwd(), a.akv = l3.t, sfa_expect(&a, INVALID, "actualSeqLengthsKv must have shape [2]", NULL);
    a = fwd_tnd(), a.akv = l3.t, sfa_expect(&a, INVALID, "actualSeqLengthsKv", "must agree");
    a = fwd_tnd(), a.k = k.t, a.v = v.t, a.lkv = bsnd, a.akv = NULL, a.aq = l3.t;
    sfa_expect(&a, INVALID, "actualSeqLengthsQuery", "must agree"); /* TND query B 3, BSND key B 2 */
    a = grad(), a.layout = tnd, a.q = tq.t, a.k = tk.t, a.v = tv.t, a.idx = tidx.t, a.dout = tout.t, a.out = tout.t;
    a.smax = tmax.t, a.ssum = tsum.t, a.dq = tq.t, a.dk = tk.t, a.dv = tv.t, a.aq = aq.t, a.akv = akv.t;
    sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.aq = NULL, sfa_expect(&a, INVALID, "actualSeqLengthsQueryOptional", "absent");
    /* the block table: INT32, rank 2, B rows */
    dev_tensor t64 = mk(ACL_INT64, 2, B, 3, 0, 0), t1 = mk(ACL_INT32, 1, B, 0, 0, 0), tb = mk(ACL_INT32, 2, B + 1, 3, 0, 0);
    a = fwd_pa(), a.table = NULL, sfa_expect(&a, INVALID, "blockTable", "absent");
    a = fwd_pa(), a.table = t64.t, sfa_expect(&a, INVALID, "blockTable dtype", "INT32");
    a = fwd_pa(), a.table = t1.t, sfa_expect(&a, INVALID, "blockTable", "2 dims");
    a = fwd_pa(), a.table = tb.t, sfa_expect(&a, INVALID, "blockTable", "B = 2 rows");
    /* sparseIndices: (B, S1, N2, K) / (T1, N2, K) */
    dev_tensor i3 = mk(ACL_INT32, 4, B, S1, N2 + 1, K), it = mk(ACL_INT32, 3, T1 + 1, N2, K, 0);
    a = fwd(), a.idx = i3.t, sfa_expect(&a, INVALID, "sparseIndices must have shape", NULL);
    a = fwd_tnd(), a.idx = it.t, sfa_expect(&a, INVALID, "sparseIndices must have shape", NULL);
    a = fwd_tnd(), a.idx = idx.t, sfa_expect(&a, INVALID, "sparseIndices must have shape", NULL);
    /* rope: (.., N1, Dr) / (.., N2, Dr) with one Dr */
    dev_tensor qrh = mk(ACL_FLOAT16, 4, B, S1, N2, DR), krd = mk(ACL_FLOAT16, 4, B, S2, N2, DR + 1);
    dev_tensor qbig = mk(ACL_FLOAT16, 4, B, S1, N1, 1025);
    a = fwd(), a.qr = qr.t, a.kr = kr.t, sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.qr = qrh.t, sfa_expect(&a, INVALID, "queryRope must have shape", NULL);
    a.qr = qr.t, a.kr = krd.t, sfa_expect(&a, INVALID, "keyRope must have shape", NULL);
    a.qr = qbig.t, a.kr = kr.t, sfa_expect(&a, INVALID, "queryRope head dim Dr", "1024");
    dev_tensor pkr = mk(ACL_FLOAT16, 4, NB, BS, N2, DR);
    a = fwd_pa(), a.qr = qr.t, a.kr = pkr.t, sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.kr = kr.t, sfa_expect(&a, INVALID, "keyRope must have shape [6, 4, 2, 4]", NULL);
    /* outputs */
    dev_tensor wo = mk(ACL_FLOAT16, 4, B, S1, N1, D + 1), ws4 = mk(ACL_FLOAT, 4, B, N1, S1, 1);
    a = fwd(), a.out = wo.t, sfa_expect(&a, INVALID, "attentionOutOut must have shape", NULL);
    a = fwd(), a.smax = ws4.t, sfa_expect(&a, INVALID, "softmaxMaxOut must have shape [2, 2, 3, 2]", NULL);
    a = fwd(), a.ssum = ws4.t, sfa_expect(&a, INVALID, "softmaxSumOut must have shape", NULL);
    a = fwd_tnd(), a.smax = smax.t, sfa_expect(&a, INVALID, "softmaxMaxOut must have shape [2, 5, 2]", NULL);
    const int64_t od[] = {B, S1, N1, D}, ovl[] = {S1 * N1 * D, N1 * D, D, 0};
    aclTensor *over = aclCreateTensor(od, 4, ACL_FLOAT16, ovl, 0, ACL_FORMAT_ND, NULL, 0, out.dev);
    a = fwd(), a.out = over, sfa_expect(&a, INVALID, "attentionOutOut", "overlap");
    a = grad(), a.dq = over, sfa_expect(&a, INVALID, "dQueryOut", "overlap");
    const int64_t sd[] = {B, N2, S1, G}, sst[] = {N2 * S1 * G * 2, S1 * G * 2, G * 2, 2}, szero[] = {0, 0, 0, 0};
    dev_tensor big = mk(ACL_FLOAT, 4, B, N2, S1, 2 * G);
    aclTensor *nc = aclCreateTensor(sd, 4, ACL_FLOAT, sst, 0, ACL_FORMAT_ND, NULL, 0, big.dev);
    aclTensor *bc = aclCreateTensor(sd, 4, ACL_FLOAT, szero, 0, ACL_FORMAT_ND, NULL, 0, big.dev);
    a = fwd(), a.smax = nc, sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL); /* strided statistics outputs are fine */
    a = fwd(), a.ssum = bc, sfa_expect(&a, INVALID, "softmaxSumOut", "overlap");
    a = grad(), a.smax = nc, sfa_expect(&a, INVALID, "softmaxMax", "contiguous");
    a = grad(), a.ssum = nc, sfa_expect(&a, INVALID, "softmaxSum", "contiguous");
    /* the grad's tensors */
    a = grad(), a.dout = wo.t, sfa_expect(&a, INVALID, "dOut must have shape", NULL);
    a = grad(), a.out = wo.t, sfa_expect(&a, INVALID, "out must have shape", NULL);
    a = grad(), a.smax = ws4.t, sfa_expect(&a, INVALID, "softmaxMax must have shape", NULL);
    a = grad(), a.dq = wo.t, sfa_expect(&a, INVALID, "dQueryOut must have shape", NULL);
    a = grad(), a.dk = kd.t, sfa_expect(&a, INVALID, "dKeyOut must have shape", NULL);
    a = grad(), a.dv = vs.t, sfa_expect(&a, INVALID, "dValueOut must have shape", NULL);
    a = grad(), a.qr = qr.t, a.kr = kr.t, a.dqr = dqr.t, a.dkr = dkr.t, sfa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.dqr = NULL, sfa_expect(&a, INVALID, "dQueryRopeOutOptional", "absent");
    a.dqr = dqr.t, a.dkr = NULL, sfa_expect(&a, INVALID, "dKeyRopeOutOptional", "absent");
    a.dkr = dqr.t, sfa_expect(&a, INVALID, "dKeyRopeOutOptional must have shape", NULL);
    a.dkr = dkr.t, a.dqr = dkr.t, sfa_expect(&a, INVALID, "dQueryRopeOutOptional must have shape", NULL);
    a = grad(), a.layout = pa, a.k = pk.t, a.v = pv.t, sfa_expect(&a, INVALID, "layoutOptional", NULL);
    aclDestroyTensor(over), aclDestroyTensor(nc), aclDestroyTensor(bc);
    dev_tensor *all[] = {&q3, &kd, &vs, &k3, &kb, &bq, &bk, &hq, &hk, &wv, &l3, &t64, &t1, &tb,
                         &i3, &it, &qrh, &krd, &qbig, &pkr, &wo, &ws4, &big};
    for (size_t n = 0; n < sizeof all / sizeof all[0]; n++)
        dt_free(all[n]);
}

/* Two faults: the one of the earlier parameter (relational checks count at their last) wins. */
static void order(void)
{
    tc_context("validation order");
    dev_tensor f32 = mk(ACL_FLOAT, 4, B, S1, N1, D), kd = mk(ACL_FLOAT16, 4, B, S2, N2, D + 1);
    dev_tensor fidx = mk(ACL_FLOAT, 4, B, S1, N2, K), wo = mk(ACL_FLOAT16, 4, B, S1, N1, 1);
    char bad[] = "XYZ";
    sfa_args a = fwd();
    a.q = f32.t, a.mode = 7, sfa_expect(&a, INVALID, "query", NULL);
    a = fwd(), a.mode = 7, a.out = wo.t, sfa_expect(&a, INVALID, "sparseMode", NULL);
    a = fwd(), a.k = kd.t, a.idx = fidx.t, sfa_expect(&a, INVALID, "sparseIndices", NULL); /* key D checked at layoutKv */
    a = fwd(), a.k = kd.t, a.scale = NAN, sfa_expect(&a, INVALID, "scaleValue", NULL);
    a = fwd(), a.lq = bad, a.bs = 0, sfa_expect(&a, INVALID, "sparseBlockSize", NULL);
    a = fwd(), a.lkv = bad, a.k = kd.t, sfa_expect(&a, INVALID, "layoutKv", NULL);
    a = fwd(), a.k = kd.t, a.pre = 0, sfa_expect(&a, INVALID, "key head dim", NULL);
    a = fwd(), a.amode = 1, a.smax = out.t, sfa_expect(&a, INVALID, "attentionMode", NULL);
    a = grad(), a.smax = out.t, a.dout = f32.t, sfa_expect(&a, INVALID, "dOut", NULL);
    a = grad(), a.dq = wo.t, a.next = 0, sfa_expect(&a, INVALID, "nextTokens", NULL);
    dt_free(&f32), dt_free(&kd), dt_free(&fidx), dt_free(&wo);
}

int main(void)
{
    setup();
    nulls();
    handles_dtypes();
    attributes();
    shapes();
    order();
    dev_tensor *all[] = {&q, &k, &v, &idx, &out, &smax, &ssum, &qr, &kr, &tq, &tk, &tv, &tidx, &tout, &tmax, &tsum,
                         &aq, &akv, &pk, &pv, &table, &pakv, &dout, &dq, &dk, &dv, &dqr, &dkr, &gmax, &gsum};
    for (size_t n = 0; n < sizeof all / sizeof all[0]; n++)
        dt_free(all[n]);
    return tc_summary("cann_sfa_bad_input");
}
