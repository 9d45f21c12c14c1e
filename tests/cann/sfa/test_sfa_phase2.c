/*
 * The second phase of aclnnSparseFlashAttention and its grad (semantics §0.6, §5.2, §5.3, §6.6):
 * actual lengths and block tables are device data read when the executor runs — every content
 * error gives 161002 from the second phase naming the element, and no output byte is written;
 * a repeatable executor reads new lengths and indices on every run; results are bit-identical
 * across runs; the workspace and allocation re-checks of the shared executor apply; block sizes
 * at the int64 limits select what block size S2 selects.
 */
#include <stdlib.h>
#include <string.h>

#include "sfa_calls.h"

#define INVALID ACLNN_ERR_PARAM_INVALID

enum { B = 2, S1 = 3, S2 = 10, N1 = 4, N2 = 2, G = 2, D = 8, K = 3, T1 = 5, T2 = 12, NB = 6, BS = 4, W = 3 };

static dev_tensor q, k, v, idx, out, smax, ssum, tq, tk, tv, tidx, tout, tmax, tsum, pk, pv, table;
static dev_tensor dout, dq, dk, dv, gmax, gsum;
static uint64_t wsz;
static aclOpExecutor *exe;
static char bsnd[] = "BSND", tnd[] = "TND", pa[] = "PA_BSND";

/* Random values in [-1, 1] (FLOAT16 / FLOAT), a fixed seed per tensor. */
static dev_tensor filled(aclDataType dt, int rank, int64_t a, int64_t b, int64_t c, int64_t d, unsigned seed)
{
    const int64_t dims[4] = {a, b, c, d};
    dev_tensor t;
    dt_layout(&t, dt, rank, dims, ST_CONTIGUOUS, 0);
    srand(seed);
    int64_t n = 1;
    for (int r = 0; r < rank; r++)
        n *= dims[r];
    for (int64_t e = 0; e < n; e++) {
        const double x = 2.0 * rand() / RAND_MAX - 1.0;
        if (dt == ACL_FLOAT)
            ((float *)t.host)[e] = (float)x;
        else
            tc_store(TC_F16, t.host, e, x);
    }
    dt_upload(&t);
    return t;
}

/* Integer tensors hold values[] (repeated); rank 1 or 2..4 dims. */
static dev_tensor ints(aclDataType dt, int rank, const int64_t *dims, const int64_t *values, int64_t nvalues)
{
    dev_tensor t;
    dt_layout(&t, dt, rank, dims, ST_CONTIGUOUS, 0);
    int64_t n = 1;
    for (int r = 0; r < rank; r++)
        n *= dims[r];
    for (int64_t e = 0; e < n; e++) {
        if (dt == ACL_INT64)
            ((int64_t *)t.host)[e] = values[e % nvalues];
        else
            ((int32_t *)t.host)[e] = (int32_t)values[e % nvalues];
    }
    dt_upload(&t);
    return t;
}

static void set_ints(dev_tensor *t, const int64_t *values, int64_t n)
{
    for (int64_t e = 0; e < n; e++) {
        if (t->dt == ACL_INT64)
            ((int64_t *)t->host)[e] = values[e];
        else
            ((int32_t *)t->host)[e] = (int32_t)values[e];
    }
    aclrtMemcpy(t->dev, t->bytes, t->host, t->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
}

static void setup(void)
{
    q = filled(ACL_FLOAT16, 4, B, S1, N1, D, 1), k = filled(ACL_FLOAT16, 4, B, S2, N2, D, 2);
    v = filled(ACL_FLOAT16, 4, B, S2, N2, D, 3);
    const int64_t id[4] = {B, S1, N2, K}, ivals[] = {0, 2, -1, 1};
    idx = ints(ACL_INT32, 4, id, ivals, 4);
    out = filled(ACL_FLOAT16, 4, B, S1, N1, D, 4);
    smax = filled(ACL_FLOAT, 4, B, N2, S1, G, 5), ssum = filled(ACL_FLOAT, 4, B, N2, S1, G, 6);
    tq = filled(ACL_FLOAT16, 3, T1, N1, D, 0, 7), tk = filled(ACL_FLOAT16, 3, T2, N2, D, 0, 8);
    tv = filled(ACL_FLOAT16, 3, T2, N2, D, 0, 9);
    const int64_t td[3] = {T1, N2, K};
    tidx = ints(ACL_INT64, 3, td, ivals, 4);
    tout = filled(ACL_FLOAT16, 3, T1, N1, D, 0, 10);
    tmax = filled(ACL_FLOAT, 3, N2, T1, G, 0, 11), tsum = filled(ACL_FLOAT, 3, N2, T1, G, 0, 12);
    pk = filled(ACL_FLOAT16, 4, NB, BS, N2, D, 13), pv = filled(ACL_FLOAT16, 4, NB, BS, N2, D, 14);
    const int64_t bd[2] = {B, W}, bvals[] = {5, 3, 1, 0, 2, 4};
    table = ints(ACL_INT32, 2, bd, bvals, 6);
    dout = filled(ACL_FLOAT16, 4, B, S1, N1, D, 15), dq = filled(ACL_FLOAT16, 4, B, S1, N1, D, 16);
    dk = filled(ACL_FLOAT16, 4, B, S2, N2, D, 17), dv = filled(ACL_FLOAT16, 4, B, S2, N2, D, 18);
    gmax = filled(ACL_FLOAT, 4, B, N2, S1, G, 19), gsum = filled(ACL_FLOAT, 4, B, N2, S1, G, 20);
    for (int64_t e = 0; e < B * N2 * S1 * G; e++) /* a positive sum */
        ((float *)gsum.host)[e] = 2.0f;
    aclrtMemcpy(gsum.dev, gsum.bytes, gsum.host, gsum.bytes, ACL_MEMCPY_HOST_TO_DEVICE);
}

static sfa_args fwd(void)
{
    sfa_args a = {.q = q.t, .k = k.t, .v = v.t, .idx = idx.t, .out = out.t, .smax = smax.t, .ssum = ssum.t,
                  .scale = 0.3, .bs = 4, .pre = 2147483647, .next = 2147483647, .lse = true, .lq = bsnd, .lkv = bsnd,
                  .ws = &wsz, .ex = &exe};
    return a;
}

static sfa_args fwd_tnd(const dev_tensor *aq, const dev_tensor *akv)
{
    sfa_args a = fwd();
    a.q = tq.t, a.k = tk.t, a.v = tv.t, a.idx = tidx.t, a.out = tout.t, a.smax = tmax.t, a.ssum = tsum.t;
    a.aq = aq->t, a.akv = akv->t, a.lq = a.lkv = tnd;
    return a;
}

static sfa_args grad(void)
{
    sfa_args a = {.grad = true, .q = q.t, .k = k.t, .v = v.t, .idx = idx.t, .dout = dout.t, .out = out.t,
                  .smax = gmax.t, .ssum = gsum.t, .scale = 0.3, .bs = 4, .pre = 2147483647, .next = 2147483647,
                  .layout = bsnd, .dq = dq.t, .dk = dk.t, .dv = dv.t, .ws = &wsz, .ex = &exe};
    return a;
}

/* The device bytes of the outputs, to prove a failed run wrote nothing. */
typedef struct snapshot {
    unsigned char *img[5];
} snapshot;

static snapshot snap(const dev_tensor *const *ts, int n)
{
    snapshot s = {{0}};
    for (int k2 = 0; k2 < n; k2++)
        s.img[k2] = dt_download(ts[k2]);
    return s;
}

static void unchanged(const snapshot *s, const dev_tensor *const *ts, int n, const char *what)
{
    for (int k2 = 0; k2 < n; k2++) {
        unsigned char *now = dt_download(ts[k2]);
        TC_CHECK(memcmp(now, s->img[k2], ts[k2]->bytes) == 0, "%s: output %d was written by a failed run", what, k2);
        free(now);
        free(s->img[k2]);
    }
}

/* Runs a's second phase expecting a device-data error; no output byte may change. */
static void data_error(const sfa_args *a, const char *needle1, const char *needle2)
{
    const dev_tensor *fo[] = {&out, &smax, &ssum}, *to[] = {&tout, &tmax, &tsum}, *go[] = {&dq, &dk, &dv};
    const dev_tensor *const *outs = a->grad ? go : a->out == tout.t ? to : fo;
    snapshot s = snap(outs, 3);
    sfa_expect_run(a, INVALID, needle1, needle2);
    unchanged(&s, outs, 3, needle1);
}

static void lengths(void)
{
    tc_context("lengths read in the second phase");
    const int64_t l1[1] = {B};
    const int64_t ok_q[] = {2, 5}, ok_kv[] = {4, 12};
    dev_tensor aq = ints(ACL_INT64, 1, l1, ok_q, 2), akv = ints(ACL_INT32, 1, l1, ok_kv, 2);
    sfa_args a = fwd_tnd(&aq, &akv);
    sfa_expect_run(&a, ACLNN_SUCCESS, NULL, NULL);
    const int64_t dec[] = {3, 2}, short_q[] = {2, 4}, neg[] = {-1, 5};
    set_ints(&aq, dec, 2), data_error(&a, "actualSeqLengthsQuery[1]", "cumulative");
    set_ints(&aq, short_q, 2), data_error(&a, "actualSeqLengthsQuery[1]", "5");
    set_ints(&aq, neg, 2), data_error(&a, "actualSeqLengthsQuery[0]", NULL);
    set_ints(&aq, ok_q, 2);
    const int64_t long_kv[] = {4, 13};
    set_ints(&akv, long_kv, 2), data_error(&a, "actualSeqLengthsKv[1]", "12");
    set_ints(&akv, ok_kv, 2);
    sfa_expect_run(&a, ACLNN_SUCCESS, NULL, NULL);

    /* BSND: per-batch, 0 <= S_b <= S */
    dev_tensor bq = ints(ACL_INT32, 1, l1, ok_q, 2), bkv = ints(ACL_INT64, 1, l1, ok_kv, 2);
    a = fwd(), a.aq = bq.t;
    const int64_t big_q[] = {4, 1}, ok_b[] = {3, 0}, neg_kv[] = {5, -2}, big_kv[] = {11, 0};
    set_ints(&bq, big_q, 2), data_error(&a, "actualSeqLengthsQuery[0]", "[0, 3]");
    set_ints(&bq, ok_b, 2), sfa_expect_run(&a, ACLNN_SUCCESS, NULL, NULL);
    a.akv = bkv.t;
    set_ints(&bkv, neg_kv, 2), data_error(&a, "actualSeqLengthsKv[1]", NULL);
    set_ints(&bkv, big_kv, 2), data_error(&a, "actualSeqLengthsKv[0]", "[0, 10]");
    /* the grad reads them the same way, under its own names */
    sfa_args g = grad();
    g.aq = bq.t, g.akv = bkv.t;
    data_error(&g, "actualSeqLengthskvOptional[0]", NULL);
    const int64_t ok_bkv[] = {4, 10};
    set_ints(&bkv, ok_bkv, 2), set_ints(&bq, big_q, 2);
    data_error(&g, "actualSeqLengthsQueryOptional[0]", NULL);
    set_ints(&bq, ok_b, 2), sfa_expect_run(&g, ACLNN_SUCCESS, NULL, NULL);
    dt_free(&aq), dt_free(&akv), dt_free(&bq), dt_free(&bkv);
}

static void block_table(void)
{
    tc_context("block table read in the second phase");
    const int64_t l1[1] = {B}, lens[] = {9, 12};
    dev_tensor akv = ints(ACL_INT32, 1, l1, lens, 2);
    sfa_args a = fwd();
    a.k = pk.t, a.v = pv.t, a.table = table.t, a.akv = akv.t, a.lkv = pa;
    sfa_expect_run(&a, ACLNN_SUCCESS, NULL, NULL);
    const int64_t bad_used[] = {5, 3, 1, 0, 6, 4}, bad_unused[] = {5, 3, 1, 0, 2, 4};
    set_ints(&table, bad_used, 6), data_error(&a, "blockTable[1][1]", "[0, 6)");
    const int64_t neg[] = {5, 3, -1, 0, 2, 4};
    set_ints(&table, neg, 6), data_error(&a, "blockTable[0][2]", NULL); /* 9 positions use 3 blocks */
    const int64_t short_lens[] = {8, 12};
    set_ints(&akv, short_lens, 2), sfa_expect_run(&a, ACLNN_SUCCESS, NULL, NULL); /* 8 positions: 2 blocks */
    const int64_t over[] = {13, 12};
    set_ints(&akv, over, 2), data_error(&a, "actualSeqLengthsKv[0]", "[0, 12]");
    set_ints(&akv, lens, 2), set_ints(&table, bad_unused, 6);
    sfa_expect_run(&a, ACLNN_SUCCESS, NULL, NULL);
    dt_free(&akv);
}

/* Runs one executor (created once) and returns the output image. */
static unsigned char *run_exec(aclOpExecutor *ex, uint64_t ws, const dev_tensor *o)
{
    void *w = NULL;
    if (ws && aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        abort();
    const aclnnStatus st = sfa_call_run(false, w, ws, ex, NULL);
    TC_CHECK(st == ACLNN_SUCCESS, "run returned %d: %s", st, aclGetRecentErrMsg());
    if (w)
        aclrtFree(w);
    return dt_download(o);
}

/* A fresh single-use executor for a, run once. */
static unsigned char *run_fresh(const sfa_args *a, const dev_tensor *o)
{
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    sfa_args b = *a;
    b.ws = &ws, b.ex = &ex;
    TC_CHECK(sfa_call(&b) == ACLNN_SUCCESS, "first phase failed: %s", aclGetRecentErrMsg());
    return run_exec(ex, ws, o);
}

/* Block sizes at the int64 limits (semantics §5.3 allows any sparseBlockSize >= 1): with S2 = 10
 * columns, block 0 of size 10, 2^62, INT64_MAX − 1 or INT64_MAX covers them all and blocks 1, 2
 * start past the end, so the outputs (and the grad's) are bitwise those of block size S2. */
static void block_size_limits(void)
{
    tc_context("sparseBlockSize at the int64 limits");
    const int64_t sizes[] = {(int64_t)1 << 62, INT64_MAX - 1, INT64_MAX};
    for (int mode = 0; mode <= 3; mode += 3) {
        sfa_args a = fwd();
        a.bs = S2, a.mode = mode;
        unsigned char *want = run_fresh(&a, &out);
        sfa_args g = grad();
        g.bs = S2, g.mode = mode;
        sfa_expect_run(&g, ACLNN_SUCCESS, NULL, NULL);
        unsigned char *want_dq = dt_download(&dq);
        for (size_t n = 0; n < sizeof sizes / sizeof sizes[0]; n++) {
            a.bs = sizes[n];
            aclrtMemset(out.dev, out.bytes, 0x7f, out.bytes);
            unsigned char *got = run_fresh(&a, &out);
            TC_CHECK(memcmp(got, want, out.bytes) == 0, "mode %d: block size %lld differs from block size S2", mode,
                     (long long)sizes[n]);
            g.bs = sizes[n];
            aclrtMemset(dq.dev, dq.bytes, 0x7f, dq.bytes);
            sfa_expect_run(&g, ACLNN_SUCCESS, NULL, NULL);
            unsigned char *got_dq = dt_download(&dq);
            TC_CHECK(memcmp(got_dq, want_dq, dq.bytes) == 0, "mode %d: grad dq with block size %lld differs", mode,
                     (long long)sizes[n]);
            free(got), free(got_dq);
        }
        free(want), free(want_dq);
    }
}

static void repeatable(void)
{
    tc_context("repeatable executor reads new device data per run");
    const int64_t l1[1] = {B}, q1[] = {2, 5}, kv1[] = {4, 12}, q2[] = {4, 5}, kv2[] = {12, 12};
    dev_tensor aq = ints(ACL_INT64, 1, l1, q1, 2), akv = ints(ACL_INT64, 1, l1, kv1, 2);
    sfa_args a = fwd_tnd(&aq, &akv);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    a.ws = &ws, a.ex = &ex;
    TC_CHECK(sfa_call(&a) == ACLNN_SUCCESS && aclSetAclOpExecutorRepeatable(ex) == ACLNN_SUCCESS, "setup failed");
    unsigned char *r1 = run_exec(ex, ws, &tout), *r1b = run_exec(ex, ws, &tout);
    TC_CHECK(memcmp(r1, r1b, tout.bytes) == 0, "two runs of the same data differ");
    set_ints(&aq, q2, 2), set_ints(&akv, kv2, 2);
    const int64_t n = T1 * N2 * K, ind[] = {2, 0, 1, 1, -1, 0, 2, 2, 2, 0, 1, -1, 1, 1, 1};
    int64_t all[T1 * N2 * K];
    for (int64_t e = 0; e < n; e++)
        all[e] = ind[e % 15];
    set_ints(&tidx, all, n);
    unsigned char *r2 = run_exec(ex, ws, &tout), *f2 = run_fresh(&a, &tout);
    TC_CHECK(memcmp(r1, r2, tout.bytes) != 0, "new lengths and indices did not change the result");
    TC_CHECK(memcmp(r2, f2, tout.bytes) == 0, "the repeatable executor differs from a fresh one on the new data");
    /* a data error leaves the executor usable */
    const int64_t bad[] = {4, 6};
    set_ints(&aq, bad, 2);
    void *w = NULL;
    if (ws)
        aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    TC_CHECK(sfa_call_run(false, w, ws, ex, NULL) == INVALID, "a bad length must fail the run");
    set_ints(&aq, q2, 2);
    TC_CHECK(sfa_call_run(false, w, ws, ex, NULL) == ACLNN_SUCCESS, "the executor must survive a failed run");
    if (w)
        aclrtFree(w);
    TC_CHECK(aclDestroyAclOpExecutor(ex) == ACLNN_SUCCESS, "destroy failed");
    free(r1), free(r1b), free(r2), free(f2);
    dt_free(&aq), dt_free(&akv);
}

static void executor_checks(void)
{
    tc_context("executor checks");
    sfa_args a = fwd();
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    a.ws = &ws, a.ex = &ex;
    TC_CHECK(sfa_call(&a) == ACLNN_SUCCESS && ws > 0, "a plain call needs a workspace, got %llu", (unsigned long long)ws);
    TC_CHECK(sfa_call_run(false, NULL, ws, ex, NULL) == ACLNN_ERR_PARAM_NULLPTR, "NULL workspace must give 161001");
    TC_CHECK(sfa_call_run(false, NULL, ws, ex, NULL) == INVALID, "the executor is consumed by a failed run");
    TC_CHECK(sfa_call(&a) == ACLNN_SUCCESS, "first phase");
    void *w = NULL;
    aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    TC_CHECK(sfa_call_run(false, w, ws - 1, ex, NULL) == INVALID, "a short workspaceSize must give 161002");
    TC_CHECK(sfa_call(&a) == ACLNN_SUCCESS, "first phase");
    TC_CHECK(sfa_call_run(true, w, ws, ex, NULL) == INVALID, "the grad must refuse a forward executor");
    aclrtFree(w);
    /* the lengths' allocation is re-checked in the second phase */
    const int64_t l1[1] = {B}, ok_q[] = {2, 5}, ok_kv[] = {4, 12};
    dev_tensor aq = ints(ACL_INT64, 1, l1, ok_q, 2), akv = ints(ACL_INT32, 1, l1, ok_kv, 2);
    a = fwd_tnd(&aq, &akv), a.ws = &ws, a.ex = &ex;
    TC_CHECK(sfa_call(&a) == ACLNN_SUCCESS, "first phase");
    aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST); /* before the free, so that it cannot take its place */
    aclrtFree(aq.dev);
    aq.dev = NULL;
    aclGetRecentErrMsg();
    TC_CHECK(sfa_call_run(false, w, ws, ex, NULL) == INVALID, "a freed length tensor must give 161002");
    const char *msg = aclGetRecentErrMsg();
    TC_CHECK(msg && strstr(msg, "actualSeqLengthsQuery"), "the message must name the freed tensor: %s", msg ? msg : "");
    aclrtFree(w);
    dt_free(&aq), dt_free(&akv);
}

int main(void)
{
    setup();
    lengths();
    block_table();
    repeatable();
    executor_checks();
    block_size_limits();
    dev_tensor *all[] = {&q, &k, &v, &idx, &out, &smax, &ssum, &tq, &tk, &tv, &tidx, &tout, &tmax, &tsum, &pk, &pv,
                         &table, &dout, &dq, &dk, &dv, &gmax, &gsum};
    for (size_t n = 0; n < sizeof all / sizeof all[0]; n++)
        dt_free(all[n]);
    return tc_summary("cann_sfa_phase2");
}
