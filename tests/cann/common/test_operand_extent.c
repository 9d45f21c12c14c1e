/*
 * Operand extents (semantics §0.6, §6.6) at the edges fuzzing found: a view is checked from its
 * tensor's own data address over its whole extent — a view offset past the end of the allocation,
 * a view starting in untracked memory and reaching into an allocation, a highest element index of
 * exactly INT64_MAX — and size-1 dimensions may carry any stride (the kernels never step along
 * them).  Every refusal is 161002 naming the parameter; nothing is run out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fa/calls.h"

#define INVALID ACLNN_ERR_PARAM_INVALID

enum { D = 8 };

static dev_tensor q, k, v, smax, ssum, out;
static char bnsd[] = "BNSD";
static uint64_t wsz;
static aclOpExecutor *exe;

/* FlashAttentionScoreV2, BNSD [1, 1, 1, D] fp16 (the shape of the fuzzing report). */
static fa_args call(void)
{
    fa_args a = {.fn = FA_V2, .q = q.t, .k = k.t, .v = v.t, .smax = smax.t, .ssum = ssum.t, .out = out.t,
                 .scale = 0.25, .keep = 1, .pre = 2147483647, .next = 2147483647, .head_num = 1, .pse_type = 1,
                 .layout = bnsd, .ws = &wsz, .ex = &exe};
    return a;
}

static void setup(void)
{
    const int64_t d[4] = {1, 1, 1, D}, st[4] = {1, 1, 1, 8};
    q = dt_simple(ACL_FLOAT16, 4, d), k = dt_simple(ACL_FLOAT16, 4, d), v = dt_simple(ACL_FLOAT16, 4, d);
    out = dt_simple(ACL_FLOAT16, 4, d);
    smax = dt_simple(ACL_FLOAT, 4, st), ssum = dt_simple(ACL_FLOAT, 4, st);
}

/* A [1, 1, 1, D] fp16 view of data at element offset `offset` (contiguous strides). */
static aclTensor *view(void *data, int64_t offset)
{
    const int64_t d[4] = {1, 1, 1, D}, st[4] = {D, D, D, 1};
    return aclCreateTensor(d, 4, ACL_FLOAT16, st, offset, ACL_FORMAT_ND, NULL, 0, data);
}

/* The first phase must refuse a view of `name` (the output or the query) over this data. */
static void refused(bool output, void *data, int64_t offset, const char *name, const char *needle)
{
    aclTensor *t = view(data, offset);
    fa_args a = call();
    if (output)
        a.out = t;
    else
        a.q = t;
    fa_expect(&a, INVALID, name, needle);
    aclDestroyTensor(t);
}

static void offsets(void)
{
    tc_context("view offsets against the data's allocation");
    void *small = NULL;
    TC_CHECK(aclrtMalloc(&small, 2 * D, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "aclrtMalloc");
    /* the report's case: the first element lies 64 elements (128 bytes) past a 16-byte block */
    refused(true, small, 64, "attentionOut", "allocation");
    refused(false, small, 64, "query", "allocation");
    /* one element past the end, and a view that starts inside and runs over the end */
    refused(true, small, D, "attentionOut", "allocation");
    refused(false, small, 1, "query", "allocation");
    /* an untracked data address whose view reaches into a tracked allocation */
    void *before = (void *)((uintptr_t)small - 64 * 2);
    refused(false, before, 64, "query", "allocation");
    refused(true, before, 60, "attentionOut", "allocation");
    /* the whole block, from its base, is fine */
    aclTensor *t = view(small, 0);
    fa_args a = call();
    a.out = t;
    fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    aclDestroyTensor(t);
    aclrtFree(small);
}

static void index_limits(void)
{
    tc_context("highest element index INT64_MAX");
    /* [1, 1, 2, D] with the sequence stride chosen so that the last element is INT64_MAX */
    const int64_t d[4] = {1, 1, 2, D}, st[4] = {1, 1, INT64_MAX - (D - 1), 1};
    aclTensor *t = aclCreateTensor(d, 4, ACL_FLOAT16, st, 0, ACL_FORMAT_ND, NULL, 0, q.dev);
    fa_args a = call();
    a.q = t, a.k = t, a.v = t;
    fa_expect(&a, INVALID, "query", "overflows");
    aclDestroyTensor(t);
}

/* Runs a's two phases and returns the output bytes (caller frees). */
static unsigned char *run(const fa_args *a, const dev_tensor *o)
{
    aclOpExecutor *ex = NULL;
    uint64_t ws = 0;
    fa_args b = *a;
    b.ws = &ws, b.ex = &ex;
    aclnnStatus st = fa_call(&b);
    TC_CHECK(st == ACLNN_SUCCESS, "first phase: %d %s", st, aclGetRecentErrMsg());
    void *w = NULL;
    if (st == ACLNN_SUCCESS && ws)
        aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    if (st == ACLNN_SUCCESS)
        st = fa_call_run(FA_V2, w, ws, ex, NULL);
    TC_CHECK(st == ACLNN_SUCCESS, "second phase: %d %s", st, aclGetRecentErrMsg());
    aclrtFree(w);
    return dt_download(o);
}

static void size1_strides(aclDataType dt, int64_t sq, int64_t skv)
{
    tc_context("size-1 dimensions with huge strides, dtype %d, %lld rows, %lld keys", (int)dt, (long long)sq,
               (long long)skv);
    /* D = 1 and every other dim 1 except the kv sequence: the strides of the size-1 dims are
     * never stepped along, so any value is valid (even INT64_MAX, where esize·stride overflows) */
    const int64_t dq[4] = {1, 1, sq, 1}, dkv[4] = {1, 1, skv, 1}, ds[4] = {1, 1, sq, 8};
    dev_tensor q1 = dt_simple(dt, 4, dq), k1 = dt_simple(dt, 4, dkv);
    dev_tensor v1 = dt_simple(dt, 4, dkv), o1 = dt_simple(dt, 4, dq);
    dev_tensor m1 = dt_simple(ACL_FLOAT, 4, ds), s1 = dt_simple(ACL_FLOAT, 4, ds);
    const double qv[1] = {1.0}, kv[3] = {1.0, -1.0, 2.0}, vv[3] = {1.0, 2.0, -3.0};
    for (int64_t j = 0; j < 3; j++) { /* fp32 operands are read in place (the GEMM's own strides) */
        const int64_t at[4] = {0, 0, j, 0};
        if (j < sq)
            dt_set(&q1, at, qv[0] + (double)j);
        if (j < skv)
            dt_set(&k1, at, kv[j]), dt_set(&v1, at, vv[j]);
    }
    const dev_tensor *up[3] = {&q1, &k1, &v1};
    for (int u = 0; u < 3; u++)
        aclrtMemcpy(up[u]->dev, up[u]->bytes, up[u]->host, up[u]->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    fa_args a = call();
    a.q = q1.t, a.k = k1.t, a.v = v1.t, a.out = o1.t, a.smax = m1.t, a.ssum = s1.t;
    unsigned char *plain = run(&a, &o1);
    const int64_t big = INT64_MAX, hq[4] = {big, big, sq > 1 ? 1 : big, big}, hkv[4] = {big, big, skv > 1 ? 1 : big, skv > 1 ? big : 1};
    aclTensor *tq = aclCreateTensor(dq, 4, dt, hq, 0, ACL_FORMAT_ND, NULL, 0, q1.dev);
    aclTensor *tk = aclCreateTensor(dkv, 4, dt, hkv, 0, ACL_FORMAT_ND, NULL, 0, k1.dev);
    aclTensor *tv = aclCreateTensor(dkv, 4, dt, hkv, 0, ACL_FORMAT_ND, NULL, 0, v1.dev);
    aclTensor *to = aclCreateTensor(dq, 4, dt, hq, 0, ACL_FORMAT_ND, NULL, 0, o1.dev);
    aclrtMemset(o1.dev, o1.bytes, 0, o1.bytes);
    a.q = tq, a.k = tk, a.v = tv, a.out = to;
    unsigned char *strided = run(&a, &o1);
    static const unsigned char zeros[64];
    TC_CHECK(memcmp(plain, strided, o1.bytes) == 0 && memcmp(plain, zeros, o1.bytes) != 0,
             "huge strides on size-1 dims change the output (%02x%02x vs %02x%02x)", plain[1], plain[0], strided[1],
             strided[0]);
    free(plain), free(strided);
    aclDestroyTensor(tq), aclDestroyTensor(tk), aclDestroyTensor(tv), aclDestroyTensor(to);
    dt_free(&q1), dt_free(&k1), dt_free(&v1), dt_free(&o1), dt_free(&m1), dt_free(&s1);
}

int main(void)
{
    setup();
    offsets();
    index_limits();
    size1_strides(ACL_FLOAT16, 1, 3);
    size1_strides(ACL_FLOAT, 1, 3);
    size1_strides(ACL_FLOAT, 6, 1); /* one key, read in place by the GEMM with its INT64_MAX stride */
    dt_free(&q), dt_free(&k), dt_free(&v), dt_free(&out), dt_free(&smax), dt_free(&ssum);
    return tc_summary("cann_operand_extent");
}
